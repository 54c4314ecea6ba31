/* hw_cli_util.c — messages, parsers, files and time for the hiwater CLI. */
#include "hw_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "hw_file.h"

int hw_cli_quiet;

void hw_cli_err(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hiwater: %s\n", buf);
}

void hw_cli_info(const char *fmt, ...)
{
	if (hw_cli_quiet)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hiwater: %s\n", buf);
}

void hw_cli_print_exit_codes(void *file)
{
	FILE *f = file;
	fprintf(f, "Exit codes:\n");
#define HW_CLI_EXIT_PRINT(n, c, m) fprintf(f, "  %d  %s\n", c, m);
	HW_CLI_EXIT_TABLE(HW_CLI_EXIT_PRINT)
#undef HW_CLI_EXIT_PRINT
}

int hw_cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int hw_cli_parse_duration_ns(const char *s, int64_t *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	double mul;
	if (!*end || !strcmp(end, "s"))
		mul = 1e9;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "m"))
		mul = 60e9;
	else
		return -EINVAL;
	double ns = v * mul;
	if (ns > 1e18)
		return -EINVAL;
	*out = (int64_t)ns;
	return 0;
}

int hw_cli_parse_size(const char *s, int64_t *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -EINVAL;
	int64_t mul = 1;
	if (!*end || !strcasecmp(end, "b"))
		mul = 1;
	else if (!strcasecmp(end, "k") || !strcasecmp(end, "kb") || !strcasecmp(end, "kib"))
		mul = 1024;
	else if (!strcasecmp(end, "m") || !strcasecmp(end, "mb") || !strcasecmp(end, "mib"))
		mul = 1024 * 1024;
	else
		return -EINVAL;
	if (v > INT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

int hw_cli_parse_acks(const char *s, int16_t *out)
{
	if (!s)
		return -EINVAL;
	if (!strcmp(s, "all") || !strcmp(s, "-1"))
		*out = -1;
	else if (!strcmp(s, "0"))
		*out = 0;
	else if (!strcmp(s, "1"))
		*out = 1;
	else
		return -EINVAL;
	return 0;
}

int hw_cli_kvs_add(hw_cli_kvs *kv, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return -EINVAL;
	size_t kl = (size_t)(eq - arg), vl = strlen(eq + 1);
	if (kl >= sizeof(kv->key[0]) || vl >= sizeof(kv->value[0]))
		return -E2BIG;
	/* A repeated key replaces the earlier value (last one wins). */
	int i;
	for (i = 0; i < kv->n; i++)
		if (strlen(kv->key[i]) == kl && !memcmp(kv->key[i], arg, kl))
			break;
	if (i == kv->n) {
		if (kv->n == HW_CLI_MAX_KV)
			return -E2BIG;
		kv->n++;
	}
	memcpy(kv->key[i], arg, kl);
	kv->key[i][kl] = 0;
	memcpy(kv->value[i], eq + 1, vl + 1);
	return 0;
}

const char *hw_cli_kvs_get(const hw_cli_kvs *kv, const char *key)
{
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->value[i];
	return NULL;
}

int hw_cli_mkdirs(const char *path, int mode) { return hw_file_mkdirs(path, mode); }

int hw_cli_chmod(const char *path, int mode)
{
	return chmod(path, (mode_t)mode) ? -errno : 0;
}

/* Written 0600: cluster files name the secret and every endpoint. */
int hw_cli_write_file(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			unlink(tmp);
			return e;
		}
		off += (size_t)w;
	}
	if (close(fd) || rename(tmp, path)) {
		int e = -errno;
		unlink(tmp);
		return e;
	}
	return 0;
}

int hw_cli_read_file(const char *path, char **out, size_t *len_out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(buf);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = 0;
	*out = buf;
	if (len_out)
		*len_out = len;
	return 0;
}

int64_t hw_cli_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int hw_cli_self_dir(char *buf, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= cap - 1)
		return -ENAMETOOLONG;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	return 0;
}

int hw_cli_appendf(char *buf, size_t cap, size_t *off, const char *fmt, ...)
{
	if (*off >= cap)
		return -ENOSPC;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *off, cap - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *off) {
		*off = cap;
		return -ENOSPC;
	}
	*off += (size_t)n;
	return 0;
}

