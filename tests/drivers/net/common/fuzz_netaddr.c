/* fuzz_netaddr.c — libFuzzer target for what a node makes of endpoint
 * strings other nodes sent it (drivers/net/common/hw_netaddr.h): a
 * broker's registered data endpoint from Metadata turned into a DPDK
 * route, and endpoint text as hw_netaddr_advertise and --bootstrap-server
 * take it. For every input (as a NUL-terminated string):
 *   - hw_netaddr_dpdk_route returns 0 or a negative errno; on 0 the route
 *     starts with "dpdk:port=P", names no second port, keeps every field of
 *     the input but queues= when asked to, fits the buffer, and, when
 *     hw_endpoint_parse accepts it, is a DPDK endpoint of port P;
 *   - a too-small buffer is refused with -ENOSPC, never overrun;
 *   - hw_netaddr_advertise with the input as listen / advertised address
 *     (no wildcard lookup) returns 0 with a parseable "udp:" endpoint, or
 *     an error;
 *   - hw_client_parse_bootstrap returns 0 with a parseable udp endpoint
 *     of a non-zero port, or -EINVAL. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw_client_config.h"
#include "hw_netaddr.h"
#include "hw_netconf.h"

static void check_route(const char *reg, int with_queues)
{
	char out[256], small[24];
	memset(small, 0x5A, sizeof(small));
	int rc = hw_netaddr_dpdk_route(reg, "p0", with_queues, out, sizeof(out));
	if (rc > 0)
		abort();
	int rs = hw_netaddr_dpdk_route(reg, "p0", with_queues, small, 16);
	if (small[16] != 0x5A || (rs == 0 && rc != 0))
		abort();
	if (rc)
		return;
	if (strncmp(out, "dpdk:port=p0", 12) || (out[12] && out[12] != ',') || strstr(out + 12, "port=") == out + 13 ||
	    strstr(out + 12, ",port=") || strlen(out) >= sizeof(out))
		abort();
	if (!with_queues && (strstr(out, ",queues=")))
		abort();
	hw_endpoint e;
	if (hw_endpoint_parse(out, &e) == 0 && (e.kind != HW_EP_DPDK || strcmp(e.port, "p0")))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	check_route(s, 1);
	check_route(s, 0);
	char out[128];
	hw_endpoint e;
	if (hw_netaddr_advertise(s, NULL, 1, NULL, out, sizeof(out)) == 0 &&
	    (hw_endpoint_parse(out, &e) || e.kind != HW_EP_UDP))
		abort();
	if (hw_netaddr_advertise("udp:10.0.0.1:1", s, 1, NULL, out, sizeof(out)) == 0 &&
	    (hw_endpoint_parse(out, &e) || e.kind != HW_EP_UDP))
		abort();
	int rc = hw_client_parse_bootstrap(s, out, sizeof(out));
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc == 0 && (hw_endpoint_parse(out, &e) || e.kind != HW_EP_UDP || !e.udp.sin_port))
		abort();
	free(s);
	return 0;
}
