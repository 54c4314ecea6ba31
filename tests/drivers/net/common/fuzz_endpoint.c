/* fuzz_endpoint.c — libFuzzer target for the endpoint parser
 * (drivers/net/common/hw_netconf.h: "udp:HOST:PORT", "dpdk:[port=..][,mac=..]
 * [,ip=..][,udp=..][,queues=..]"), which reads configuration and the data
 * endpoints brokers register with the controller. For every input (as a
 * NUL-terminated string, cut at its first NUL):
 *   - parse returns 0 or -EINVAL, nothing else, never reading past the string;
 *   - a parsed DPDK endpoint keeps the documented bounds (queues 0 or
 *     1..HW_EP_MAX_QUEUES, udp + queues - 1 a port, port or ip set);
 *   - what parsed formats back, and that text parses to the same fields;
 *   - formatting into every shorter buffer is -ENOSPC with a NUL-terminated
 *     prefix of the full text. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_netconf.h"

static int same(const hw_endpoint *a, const hw_endpoint *b)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == HW_EP_UDP)
		return a->udp.sin_addr.s_addr == b->udp.sin_addr.s_addr && a->udp.sin_port == b->udp.sin_port;
	return !strcmp(a->port, b->port) && a->has_mac == b->has_mac && !memcmp(a->mac, b->mac, 6) &&
	       a->ip == b->ip && a->udp_port == b->udp_port && a->queues == b->queues;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);   /* exact size: ASan sees any over-read */
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	hw_endpoint ep, back;
	int rc = hw_endpoint_parse(s, &ep);
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc == 0) {
		if (ep.kind == HW_EP_DPDK &&
		    (ep.queues > HW_EP_MAX_QUEUES || (!ep.port[0] && !ep.ip) ||
		     (ep.udp_port && ep.queues && (uint32_t)ep.udp_port + ep.queues - 1 > 65535) ||
		     strnlen(ep.port, sizeof ep.port) >= sizeof ep.port))
			abort();
		char full[512];
		int n = hw_endpoint_format(&ep, full, sizeof full);
		if (n <= 0 || (size_t)n != strlen(full) || hw_endpoint_parse(full, &back) != 0 || !same(&ep, &back))
			abort();
		for (int cap = 1; cap <= n; cap++) {
			char buf[512];
			if (hw_endpoint_format(&ep, buf, (size_t)cap) != -ENOSPC || strlen(buf) != (size_t)cap - 1 ||
			    memcmp(buf, full, (size_t)cap - 1))
				abort();
		}
	}
	free(s);
	return 0;
}
