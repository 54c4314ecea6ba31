/* hw_http.c — see hw_http.h. */
#include "hw_http.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Connect (non-blocking, bounded by timeout_ms): the socket or -errno. */
static int connect_within(struct sockaddr_in a, int timeout_ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
		int e = -errno;
		close(fd);
		return e;
	}
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	if (poll(&p, 1, timeout_ms) != 1) {
		close(fd);
		return -ETIMEDOUT;
	}
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
	if (soerr) {
		close(fd);
		return -soerr;
	}
	return fd;
}

/* Read until the peer closes: *buf (malloc'd, NUL-terminated), *len. */
static int read_all(int fd, long long deadline, char **buf_out, size_t *len_out)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	for (;;) {
		int left = (int)(deadline - now_ms());
		if (left <= 0) {
			free(buf);
			return -ETIMEDOUT;
		}
		if (poll(&p, 1, left) != 1)
			continue;
		if (cap - len < 4096) {
			size_t ncap = cap ? cap * 2 : 16384;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			int e = -errno;
			free(buf);
			return e;
		}
		len += (size_t)n;
	}
	if (!buf)
		return -EPROTO; /* closed without a byte */
	buf[len] = 0;
	*buf_out = buf;
	*len_out = len;
	return 0;
}

int hw_http_get(struct sockaddr_in a, const char *path, int timeout_ms, int *status, char **body_out)
{
	long long deadline = now_ms() + timeout_ms;
	int fd = connect_within(a, timeout_ms);
	if (fd < 0)
		return fd;
	char req[512];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
	if (n <= 0 || n >= (int)sizeof(req) || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		close(fd);
		return -EIO;
	}
	char *buf = NULL;
	size_t len = 0;
	int rc = read_all(fd, deadline, &buf, &len);
	close(fd);
	if (rc)
		return rc;
	char *body = strstr(buf, "\r\n\r\n");
	int code = 0;
	if (strncmp(buf, "HTTP/1.", 7) != 0 || !body || sscanf(buf + 8, " %3d", &code) != 1) {
		free(buf);
		return -EPROTO;
	}
	memmove(buf, body + 4, len - (size_t)(body + 4 - buf) + 1);
	*status = code;
	*body_out = buf;
	return 0;
}
