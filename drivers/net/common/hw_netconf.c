/* hw_netconf.c — endpoint strings. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_netconf.h"

static int parse_u16(const char *s, uint16_t *out)
{
	char *end;
	if (!*s)
		return -EINVAL;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

int hw_endpoint_parse(const char *s, hw_endpoint *out)
{
	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (!strncmp(s, "udp:", 4)) {
		char host[64];
		const char *colon = strrchr(s + 4, ':');
		if (!colon || (size_t)(colon - (s + 4)) >= sizeof host)
			return -EINVAL;
		memcpy(host, s + 4, (size_t)(colon - (s + 4)));
		host[colon - (s + 4)] = 0;
		uint16_t port;
		if (parse_u16(colon + 1, &port))
			return -EINVAL;
		out->kind = HW_EP_UDP;
		out->udp.sin_family = AF_INET;
		out->udp.sin_port = htons(port);
		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		if (inet_pton(AF_INET, host, &out->udp.sin_addr) != 1)
			return -EINVAL;
		return 0;
	}
	if (!strncmp(s, "dpdk:", 5)) {
		char buf[256];
		if (strlen(s + 5) >= sizeof buf)
			return -EINVAL;
		strcpy(buf, s + 5);
		out->kind = HW_EP_DPDK;
		char *save = NULL;
		for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			if (!eq)
				return -EINVAL;
			*eq = 0;
			const char *v = eq + 1;
			if (!strcmp(kv, "port")) {
				if (!*v || strlen(v) >= sizeof out->port)
					return -EINVAL;
				strcpy(out->port, v);
			} else if (!strcmp(kv, "mac")) {
				if (parse_mac(v, out->mac))
					return -EINVAL;
				out->has_mac = 1;
			} else if (!strcmp(kv, "ip")) {
				if (inet_pton(AF_INET, v, &out->ip) != 1)
					return -EINVAL;
			} else if (!strcmp(kv, "udp")) {
				if (parse_u16(v, &out->udp_port))
					return -EINVAL;
			} else if (!strcmp(kv, "queues")) {
				if (parse_u16(v, &out->queues) || !out->queues || out->queues > HW_EP_MAX_QUEUES)
					return -EINVAL;
			} else {
				return -EINVAL;
			}
		}
		/* the peer's reactors listen on udp .. udp + queues - 1 */
		if (out->udp_port && out->queues && (uint32_t)out->udp_port + out->queues - 1 > 65535)
			return -EINVAL;
		return out->port[0] || out->ip ? 0 : -EINVAL;
	}
	return -EINVAL;
}

int hw_endpoint_format(const hw_endpoint *ep, char *buf, size_t cap)
{
	int n;
	char ip[INET_ADDRSTRLEN];
	if (!cap)
		return -ENOSPC;
	if (ep->kind == HW_EP_UDP) {
		inet_ntop(AF_INET, &ep->udp.sin_addr, ip, sizeof ip);
		n = snprintf(buf, cap, "udp:%s:%u", ip, ntohs(ep->udp.sin_port));
	} else {
		/* every key present, comma-separated, in parse order */
		n = snprintf(buf, cap, "dpdk:");
		const char *sep = "";
		if (n >= 0 && (size_t)n < cap && ep->port[0]) {
			n += snprintf(buf + n, cap - (size_t)n, "port=%s", ep->port);
			sep = ",";
		}
		if (n >= 0 && (size_t)n < cap && ep->has_mac) {
			n += snprintf(buf + n, cap - (size_t)n, "%smac=%02x:%02x:%02x:%02x:%02x:%02x", sep,
				      ep->mac[0], ep->mac[1], ep->mac[2], ep->mac[3], ep->mac[4], ep->mac[5]);
			sep = ",";
		}
		if (n >= 0 && (size_t)n < cap && ep->ip) {
			inet_ntop(AF_INET, &ep->ip, ip, sizeof ip);
			n += snprintf(buf + n, cap - (size_t)n, "%sip=%s", sep, ip);
			sep = ",";
		}
		if (n >= 0 && (size_t)n < cap && ep->udp_port) {
			n += snprintf(buf + n, cap - (size_t)n, "%sudp=%u", sep, ep->udp_port);
			sep = ",";
		}
		if (n >= 0 && (size_t)n < cap && ep->queues)
			n += snprintf(buf + n, cap - (size_t)n, "%squeues=%u", sep, ep->queues);
	}
	if (n < 0 || (size_t)n >= cap) {
		buf[cap - 1] = 0;
		return -ENOSPC;
	}
	return n;
}
