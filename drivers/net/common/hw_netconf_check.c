/* hw_netconf_check.c — see hw_netconf_check.h. */
#include "hw_netconf_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_netconf.h"

static int refuse(char *why, size_t whylen, const char *what)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", what);
	return -EINVAL;
}

int hw_netconf_norm_udp_ep(const char *v, char *out, size_t cap)
{
	if (!*v) {
		out[0] = 0;
		return 0;
	}
	const char *hp = strncmp(v, "udp:", 4) == 0 ? v + 4 : v;
	const char *colon = strrchr(hp, ':');
	char *end;
	if (!colon || colon == hp || !colon[1])
		return -EINVAL;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535)
		return -EINVAL;
	int n = snprintf(out, cap, "udp:%s", hp);
	if (n < 0 || (size_t)n >= cap)
		return -EINVAL;
	hw_endpoint e;
	return hw_endpoint_parse(out, &e) == 0 && e.kind == HW_EP_UDP ? 0 : -EINVAL;
}

int hw_netconf_check_udp_ep(const char *v, char *why, size_t whylen)
{
	char ep[256];
	if (!*v)
		return refuse(why, whylen, "empty");
	return hw_netconf_norm_udp_ep(v, ep, sizeof ep) ? refuse(why, whylen, "") : 0;
}

int hw_netconf_check_ipv4(const char *v, char *why, size_t whylen)
{
	struct in_addr ia;
	return inet_pton(AF_INET, v, &ia) == 1 ? 0 : refuse(why, whylen, "");
}

int hw_netconf_check_dpdk_port(const char *v, char *why, size_t whylen)
{
	if (!*v || strchr(v, ',') || strchr(v, ' ') || strchr(v, '\t'))
		return refuse(why, whylen, "");
	return 0;
}
