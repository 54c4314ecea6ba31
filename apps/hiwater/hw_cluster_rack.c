/* hw_cluster_rack.c — racks of a local `hiwater cluster` (`cluster up
 * --racks a,b,c`, docs/racks.md): broker k gets broker.rack = the
 * ((k-1) mod n)-th name of the list, round-robin, so brokers 1..6 over
 * a,b,c are a b c a b c. The list is kept in cluster.properties (racks=). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hw_cli.h"
#include "hw_cluster.h"

int hw_cluster_racks_valid(const char *list)
{
	if (!list[0] || strlen(list) >= HW_CLUSTER_RACKS_MAX)
		return 0;
	/* comma-separated non-empty names of [A-Za-z0-9._-], each < 64 bytes */
	size_t run = 0;
	for (const char *p = list;; p++) {
		if (*p == ',' || !*p) {
			if (run == 0 || run >= 64)
				return 0;
			if (!*p)
				return 1;
			run = 0;
			continue;
		}
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
			return 0;
		run++;
	}
}

int hw_cluster_rack_of(const hw_cluster *c, int node, char *buf, size_t cap)
{
	buf[0] = 0;
	if (!c->racks[0] || node < 1 || node > c->brokers)
		return -ENOENT;
	int n = 1;
	for (const char *p = c->racks; *p; p++)
		n += *p == ',';
	int want = (node - 1) % n;
	const char *p = c->racks;
	for (int i = 0; i < want; i++)
		p = strchr(p, ',') + 1;
	size_t len = strcspn(p, ",");
	snprintf(buf, cap, "%.*s", (int)len, p);
	return 0;
}

void hw_cluster_rack_render(const hw_cluster *c, int node, char *buf, size_t cap, size_t *off)
{
	char rack[64];
	if (hw_cluster_rack_of(c, node, rack, sizeof(rack)) == 0)
		hw_cli_appendf(buf, cap, off, "broker.rack=%s\n", rack);
}
