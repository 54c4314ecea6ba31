/* hw_netaddr.c — advertised endpoints and DPDK routes from registrations;
 * see hw_netaddr.h. */
#include "hw_netaddr.h"
#include "hw_logging.h"
#include "hw_reactor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "hw_netconf.h"

int hw_netaddr_local_toward(const char *peer, char *host, size_t cap)
{
	hw_endpoint ep;
	if (!host || !cap || hw_endpoint_parse(peer, &ep) || ep.kind != HW_EP_UDP)
		return -EINVAL;
	if (!ep.udp.sin_port)
		ep.udp.sin_port = htons(9); /* connect needs a port; nothing is sent */
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = 0;
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	if (connect(fd, (const struct sockaddr *)&ep.udp, sizeof(ep.udp)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&me, &len) < 0)
		rc = -errno;
	close(fd);
	if (rc)
		return rc;
	if (!inet_ntop(AF_INET, &me.sin_addr, host, (socklen_t)cap))
		return -ENOSPC;
	return 0;
}

int hw_netaddr_is_wildcard(const char *ep)
{
	hw_endpoint e;
	return ep && !hw_endpoint_parse(ep, &e) && e.kind == HW_EP_UDP &&
	       e.udp.sin_addr.s_addr == htonl(INADDR_ANY);
}

int hw_netaddr_advertise(const char *listen, const char *advertised, uint16_t bound_port,
			 const char *toward, char *out, size_t cap)
{
	hw_endpoint l, a;
	int have_adv = advertised && *advertised;
	if (!out || !cap || hw_endpoint_parse(listen, &l) || l.kind != HW_EP_UDP)
		return -EINVAL;
	if (have_adv && (hw_endpoint_parse(advertised, &a) || a.kind != HW_EP_UDP))
		return -EINVAL;
	char host[INET_ADDRSTRLEN];
	const struct in_addr *pick = NULL;
	if (have_adv && a.udp.sin_addr.s_addr != htonl(INADDR_ANY))
		pick = &a.udp.sin_addr;
	else if (l.udp.sin_addr.s_addr != htonl(INADDR_ANY))
		pick = &l.udp.sin_addr;
	if (pick) {
		inet_ntop(AF_INET, pick, host, sizeof(host));
	} else {
		int rc = hw_netaddr_local_toward(toward, host, sizeof(host));
		if (rc)
			return rc;
	}
	unsigned port = have_adv && a.udp.sin_port ? ntohs(a.udp.sin_port) : bound_port;
	int n = snprintf(out, cap, "udp:%s:%u", host, port);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}

int hw_netaddr_dpdk_registration(uint32_t ip, uint16_t udp_base, int queues, char *out, size_t cap)
{
	if (!out || !cap || !udp_base || queues < 1)
		return -EINVAL;
	char a[INET_ADDRSTRLEN];
	struct in_addr ia = {.s_addr = ip};
	inet_ntop(AF_INET, &ia, a, sizeof(a));
	int n = snprintf(out, cap, "dpdk:ip=%s,udp=%u,queues=%d", a, udp_base, queues);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}

int hw_netaddr_dpdk_route(const char *reg, const char *port, int with_queues, char *out, size_t cap)
{
	if (!out || !cap || !reg || strncmp(reg, "dpdk:", 5) || !port || !*port || strchr(port, ','))
		return -EINVAL;
	const char *body = reg + 5;
	if (strncmp(body, "ip=", 3) && !strstr(body, ",ip="))
		return -EINVAL;
	if (strstr(body, "port=") == body || strstr(body, ",port="))
		return -EINVAL; /* a registration names no local port */
	int n = snprintf(out, cap, "dpdk:port=%s", port);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	size_t off = (size_t)n;
	/* copy the fields, leaving queues= out when asked to */
	const char *f = body;
	while (*f) {
		const char *e = strchr(f, ',');
		size_t len = e ? (size_t)(e - f) : strlen(f);
		if (len && (with_queues || strncmp(f, "queues=", 7))) {
			if (off + 1 + len >= cap)
				return -ENOSPC;
			out[off++] = ',';
			memcpy(out + off, f, len);
			off += len;
			out[off] = 0;
		}
		f += len + (e ? 1 : 0);
	}
	return 0;
}

int hw_netaddr_dpdk_default_port(char *out, size_t cap)
{
	uint16_t pid, only = 0;
	int n = 0;
	RTE_ETH_FOREACH_DEV(pid) {
		only = pid;
		n++;
	}
	if (n == 0)
		return -ENODEV;
	if (n > 1)
		return -EEXIST;
	int w = snprintf(out, cap, "%u", only);
	return w < 0 || (size_t)w >= cap ? -ENOSPC : 0;
}

/* ---- binding a restarted node's ports ----------------------------------- */

static int64_t bind_now_ms(void)
{
	return hw_reactor_now_ns() / 1000000;
}

int hw_netaddr_bind_wait(int fd, const void *addr, unsigned addrlen, int wait_ms, const char *what)
{
	int64_t start = bind_now_ms();
	int warned = 0;
	for (;;) {
		if (bind(fd, (const struct sockaddr *)addr, (socklen_t)addrlen) == 0) {
			if (warned)
				HW_LOG(INFO, "net", "%s: bound after %lld ms", what, (long long)(bind_now_ms() - start));
			return 0;
		}
		int e = errno;
		if (e != EADDRINUSE || bind_now_ms() - start >= wait_ms)
			return -e;
		if (!warned++)
			HW_LOG(WARN, "net", "%s: address in use; waiting up to %d ms for it to be released "
			       "(a previous run's sockets close after the kernel has torn down its io_uring)",
			       what, wait_ms);
		usleep(20000);
	}
}
