/* hw_group_describe.c — DescribeGroups and ListGroups on the coordinator
 * (docs/groups.md "Describing and listing groups"): what Kafka's
 * GroupCoordinator.handleDescribeGroup / handleListGroups answer, from the
 * groups of the `__consumer_offsets` partitions this broker has loaded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_group_int.h"

/* The member's metadata for the group's selected protocol (NULL if none). */
static const gproto *member_proto(const gmember *m, const char *protocol)
{
	if (!protocol)
		return NULL;
	for (int32_t i = 0; i < m->n_protocols; i++)
		if (m->protocols[i].name && !strcmp(m->protocols[i].name, protocol))
			return &m->protocols[i];
	return NULL;
}

int hw_group_describe(hw_gcoord *c, hw_gstr group, hw_gdesc_fn fn, void *ctx)
{
	hw_gdesc d = { .state = hw_group_state_name(HW_GST_DEAD), .protocol_type = "", .protocol = "" };
	d.error = hwg_route(c, group);
	ggroup *g = d.error ? NULL : hwg_find(c, group.p, (size_t)group.len);
	if (!g || g->state == HW_GST_DEAD) {
		/* phase 1: not ours, or no such group — Kafka's DeadGroup summary */
		fn(ctx, &d);
		return 0;
	}
	/* phase 2: the summary; metadata and assignments only when Stable, as
	 * Kafka's GroupMetadata.summary */
	int stable = g->state == HW_GST_STABLE;
	hw_gdesc_member *ms = calloc((size_t)(g->n_members ? g->n_members : 1), sizeof *ms);
	if (!ms)
		return -ENOMEM;
	for (int32_t i = 0; i < g->n_members; i++) {
		const gmember *m = &g->members[i];
		const gproto *pr = stable ? member_proto(m, g->protocol) : NULL;
		ms[i] = (hw_gdesc_member){ .member_id = m->id, .client_id = m->client_id ? m->client_id : "",
					   .client_host = m->client_host ? m->client_host : "" };
		if (pr) {
			ms[i].metadata = pr->meta;
			ms[i].metadata_len = pr->meta_len;
		}
		if (stable) {
			ms[i].assignment = m->assignment;
			ms[i].assignment_len = m->assignment_len;
		}
	}
	d.state = hw_group_state_name(g->state);
	d.protocol_type = g->protocol_type ? g->protocol_type : "";
	d.protocol = stable && g->protocol ? g->protocol : "";
	d.n_members = g->n_members;
	d.members = ms;
	fn(ctx, &d);
	free(ms);
	return 0;
}

int16_t hw_group_list(hw_gcoord *c, hw_glist_fn fn, void *ctx)
{
	int16_t err = HW_ERR_NONE;
	for (int32_t p = 0; p < c->cfg.offsets_partitions; p++)
		if (c->loaded[p] == HWG_LOADING)
			err = HW_ERR_COORDINATOR_LOAD_IN_PROGRESS; /* the groups so far are listed anyway */
	for (const ggroup *g = c->groups; g; g = g->next)
		if (c->loaded[g->partition] == HWG_LOADED && g->state != HW_GST_DEAD)
			fn(ctx, g->id, g->protocol_type ? g->protocol_type : "", g->state);
	return err;
}
