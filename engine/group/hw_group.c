/* hw_group.c — coordinator lifecycle, the group table, state transitions
 * and timers (see hw_group.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_group_schema.h"
#include "hw_group_int.h"

static const char *const state_names[] = {
#define X(n, s) s,
	HW_GROUP_STATE_TABLE(X)
#undef X
};
static const char *const reason_names[] = {
#define X(n, s) #n,
	HW_GROUP_REASON_TABLE(X)
#undef X
};
static const char *const drop_names[] = {
#define X(n, s) #n,
	HW_GROUP_DROP_TABLE(X)
#undef X
};

const char *hw_group_state_name(int st) { return st >= 0 && st < HW_GST__COUNT ? state_names[st] : "?"; }
const char *hw_group_reason_name(int r) { return r >= 0 && r < HW_GR__COUNT ? reason_names[r] : "?"; }
const char *hw_group_drop_name(int d) { return d >= 0 && d < HW_GD__COUNT ? drop_names[d] : "?"; }

void hw_gcoord_cfg_init(hw_gcoord_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->offsets_partitions = 50;
	c->initial_rebalance_delay_ms = 3000;
	c->min_session_timeout_ms = 6000;
	c->max_session_timeout_ms = 1800000;
	c->max_group_size = INT32_MAX;
	c->offset_metadata_max_bytes = 4096;
	c->offsets_retention_ms = 10080LL * 60 * 1000;
	c->member_id_seed = 0x9E3779B97F4A7C15ull;
}

/* ---- small helpers shared by the coordinator files ---------------------- */
int64_t hwg_now(hw_gcoord *c) { return hw_clock_ms(c->clock); }
int64_t hwg_wall(hw_gcoord *c) { return hw_clock_ms(c->cfg.wall ? c->cfg.wall : c->clock); }

char *hwg_strdup(hw_gstr s)
{
	if (!s.p || s.len < 0) return NULL;
	char *d = malloc((size_t)s.len + 1);
	if (!d) return NULL;
	memcpy(d, s.p, (size_t)s.len);
	d[s.len] = 0;
	return d;
}

int hwg_streq(const char *a, hw_gstr b)
{
	if (!a || !b.p || b.len < 0) return 0;
	return strlen(a) == (size_t)b.len && memcmp(a, b.p, (size_t)b.len) == 0;
}

ggroup *hwg_find(const hw_gcoord *c, const char *id, size_t len)
{
	for (ggroup *g = c->groups; g; g = g->next)
		if (strlen(g->id) == len && memcmp(g->id, id, len) == 0)
			return g;
	return NULL;
}

ggroup *hwg_add_group(hw_gcoord *c, hw_gstr id)
{
	ggroup *g = calloc(1, sizeof *g);
	if (!g) return NULL;
	g->id = hwg_strdup(id);
	if (!g->id) { free(g); return NULL; }
	g->partition = hw_gcoord_partition_of(c, id.p, (size_t)id.len);
	g->state = HW_GST_EMPTY;
	g->state_ts = hwg_wall(c);
	g->join_deadline = INT64_MAX;
	g->next = c->groups;
	c->groups = g;
	c->st.groups++;
	HW_LOG(INFO, "group", "group %s: created (Empty) on partition %d", g->id, g->partition);
	return g;
}

void hwg_member_free(gmember *m)
{
	free(m->id); free(m->client_id); free(m->client_host); free(m->assignment);
	for (int32_t i = 0; i < m->n_protocols; i++) {
		free(m->protocols[i].name);
		free(m->protocols[i].meta);
	}
	free(m->protocols);
	memset(m, 0, sizeof *m);
}

void hwg_remove_group(hw_gcoord *c, ggroup *g)
{
	for (ggroup **pp = &c->groups; *pp; pp = &(*pp)->next)
		if (*pp == g) { *pp = g->next; break; }
	for (int32_t i = 0; i < g->n_members; i++) hwg_member_free(&g->members[i]);
	c->st.members -= g->n_members;
	c->st.groups--;
	for (int32_t i = 0; i < g->n_pending; i++) free(g->pending[i].id);
	hwg_offsets_free(g);
	free(g->members); free(g->pending);
	free(g->id); free(g->protocol_type); free(g->protocol); free(g->leader);
	free(g);
}

/* Kafka's GroupMetadata.validPreviousStates. */
static int valid_transition(hw_group_state from, hw_group_state to)
{
	switch (to) {
	case HW_GST_DEAD: return 1;
	case HW_GST_PREPARING_REBALANCE:
		return from == HW_GST_STABLE || from == HW_GST_COMPLETING_REBALANCE || from == HW_GST_EMPTY;
	case HW_GST_COMPLETING_REBALANCE: return from == HW_GST_PREPARING_REBALANCE;
	case HW_GST_STABLE: return from == HW_GST_COMPLETING_REBALANCE;
	case HW_GST_EMPTY: return from == HW_GST_PREPARING_REBALANCE;
	default: return 0;
	}
}

void hwg_transition(hw_gcoord *c, ggroup *g, hw_group_state to, const char *why)
{
	if (!valid_transition(g->state, to)) {
		/* a coordinator bug: Kafka throws IllegalStateException */
		HW_LOG(ERROR, "group", "group %s: invalid transition %s -> %s (%s) refused", g->id,
		       hw_group_state_name(g->state), hw_group_state_name(to), why);
		return;
	}
	HW_LOG(INFO, "group", "group %s: %s -> %s gen %d (%s)", g->id, hw_group_state_name(g->state),
	       hw_group_state_name(to), g->generation, why);
	g->state = to;
	g->state_ts = hwg_wall(c);
	c->st.transitions++;
}

gmember *hwg_member(ggroup *g, hw_gstr id)
{
	for (int32_t i = 0; i < g->n_members; i++)
		if (hwg_streq(g->members[i].id, id)) return &g->members[i];
	return NULL;
}

int32_t hw_gcoord_partition_of(const hw_gcoord *c, const char *group, size_t len)
{
	return hw_gschema_partition_for(group, len, c->cfg.offsets_partitions);
}

int16_t hwg_route(hw_gcoord *c, hw_gstr group)
{
	if (!group.p || group.len <= 0 || memchr(group.p, 0, (size_t)group.len)) return HW_ERR_INVALID_GROUP_ID;
	int32_t p = hw_gcoord_partition_of(c, group.p, (size_t)group.len);
	if (c->loaded[p] == HWG_LOADING) return HW_ERR_COORDINATOR_LOAD_IN_PROGRESS;
	if (c->loaded[p] != HWG_LOADED) return HW_ERR_NOT_COORDINATOR;
	return HW_ERR_NONE;
}

/* ---- lifecycle ------------------------------------------------------------ */
int hw_gcoord_create(const hw_gcoord_cfg *cfg, hw_clock *clock, hw_glog *log, hw_gcoord **out)
{
	if (!cfg || !clock || !log || cfg->offsets_partitions < 1 || cfg->min_session_timeout_ms < 0 ||
	    cfg->max_session_timeout_ms < cfg->min_session_timeout_ms || cfg->initial_rebalance_delay_ms < 0 ||
	    cfg->max_group_size < 1 || cfg->offset_metadata_max_bytes < 0)
		return -EINVAL;
	hw_gcoord *c = calloc(1, sizeof *c);
	if (!c) return -ENOMEM;
	c->loaded = calloc((size_t)cfg->offsets_partitions, 1);
	c->load_epoch = calloc((size_t)cfg->offsets_partitions, sizeof *c->load_epoch);
	if (!c->loaded || !c->load_epoch) {
		free(c->loaded); free(c->load_epoch); free(c);
		return -ENOMEM;
	}
	c->cfg = *cfg;
	c->clock = clock;
	c->log = log;
	c->rng = cfg->member_id_seed ? cfg->member_id_seed : 1;
	*out = c;
	return 0;
}

void hw_gcoord_free(hw_gcoord *c)
{
	if (!c) return;
	for (int32_t p = 0; p < c->cfg.offsets_partitions; p++)
		if (c->loaded[p]) hw_gcoord_unload(c, p);
	while (c->groups) hwg_remove_group(c, c->groups);
	free(c->loaded);
	free(c->load_epoch);
	free(c);
}

const hw_gstats *hw_gcoord_stats(const hw_gcoord *c) { return &c->st; }

int hw_gcoord_owns(const hw_gcoord *c, int32_t p)
{
	return p >= 0 && p < c->cfg.offsets_partitions && c->loaded[p] == HWG_LOADED;
}

/* Drop the groups of partition p (a failed or restarted load). */
static void drop_partition_groups(hw_gcoord *c, int32_t p)
{
	for (ggroup *g = c->groups, *n; g; g = n) {
		n = g->next;
		if (g->partition == p) hwg_remove_group(c, g);
	}
}

int hw_gcoord_load_begin(hw_gcoord *c, int32_t p)
{
	if (p < 0 || p >= c->cfg.offsets_partitions) return -EINVAL;
	if (c->loaded[p] == HWG_LOADED) return -EALREADY;
	if (c->loaded[p] == HWG_LOADING) drop_partition_groups(c, p);
	c->loaded[p] = HWG_LOADING;
	c->load_epoch[p]++;
	HW_LOG(INFO, "group", "offsets partition %d: loading", p);
	return 0;
}

int hw_gcoord_load_feed(hw_gcoord *c, int32_t p, const void *batches, size_t len, int64_t *next_offset)
{
	if (p < 0 || p >= c->cfg.offsets_partitions || c->loaded[p] != HWG_LOADING) return -EINVAL;
	return hwg_replay_batches(c, p, batches, len, next_offset);
}

int hw_gcoord_load_end(hw_gcoord *c, int32_t p)
{
	if (p < 0 || p >= c->cfg.offsets_partitions || c->loaded[p] != HWG_LOADING) return -EINVAL;
	c->loaded[p] = HWG_LOADED;
	/* sessions restart now: the members could not reach us while we loaded */
	int64_t now = hwg_now(c);
	int32_t groups = 0;
	for (ggroup *g = c->groups; g; g = g->next) {
		if (g->partition != p) continue;
		groups++;
		for (int32_t i = 0; i < g->n_members; i++) g->members[i].hb_deadline = now + g->members[i].session_ms;
	}
	HW_LOG(INFO, "group", "offsets partition %d: loaded (%d groups)", p, groups);
	return 0;
}

int hw_gcoord_load(hw_gcoord *c, int32_t p)
{
	if (p < 0 || p >= c->cfg.offsets_partitions) return -EINVAL;
	if (c->loaded[p] == HWG_LOADED) return 0;
	hw_gcoord_load_begin(c, p);
	int rc = hwg_replay(c, p);
	if (rc < 0) {
		drop_partition_groups(c, p);
		c->loaded[p] = HWG_UNLOADED;
		HW_LOG(WARN, "group", "offsets partition %d: load failed (%d)", p, rc);
		return rc;
	}
	return hw_gcoord_load_end(c, p);
}

void hw_gcoord_unload(hw_gcoord *c, int32_t p)
{
	if (p < 0 || p >= c->cfg.offsets_partitions || c->loaded[p] == HWG_UNLOADED) return;
	c->loaded[p] = HWG_UNLOADED;
	c->load_epoch[p]++;
	for (ggroup *g = c->groups, *n; g; g = n) {
		n = g->next;
		if (g->partition != p) continue;
		hwg_transition(c, g, HW_GST_DEAD, "partition unloaded");
		hwg_fail_waiters(c, g, HW_ERR_NOT_COORDINATOR);
		hwg_remove_group(c, g);
	}
	HW_LOG(INFO, "group", "offsets partition %d: unloaded", p);
}

void hw_gcoord_forget(hw_gcoord *c, void *ctx)
{
	for (ggroup *g = c->groups; g; g = g->next)
		for (int32_t i = 0; i < g->n_members; i++) {
			gmember *m = &g->members[i];
			if (m->join_cb && m->join_ctx == ctx) m->join_cb = NULL;
			if (m->sync_cb && m->sync_ctx == ctx) m->sync_cb = NULL;
		}
}

/* ---- timers ----------------------------------------------------------------- */
void hw_gcoord_tick(hw_gcoord *c)
{
	int64_t now = hwg_now(c), wall = hwg_wall(c);
	for (ggroup *g = c->groups, *n; g; g = n) {
		n = g->next;
		if (c->loaded[g->partition] != HWG_LOADED) continue; /* still loading */
		hwg_group_timers(c, g, now);
		hwg_offsets_expire(c, g, wall);
	}
	/* expiry may have marked empty, offset-less groups Dead */
	for (ggroup *g = c->groups, *n; g; g = n) {
		n = g->next;
		if (g->state == HW_GST_DEAD) hwg_remove_group(c, g);
	}
}

int64_t hw_gcoord_next_deadline_ms(const hw_gcoord *c)
{
	int64_t d = INT64_MAX;
	for (const ggroup *g = c->groups; g; g = g->next) {
		if (g->join_deadline < d) d = g->join_deadline;
		for (int32_t i = 0; i < g->n_members; i++) {
			const gmember *m = &g->members[i];
			if (!m->awaiting_join && !m->awaiting_sync && m->hb_deadline < d) d = m->hb_deadline;
		}
		for (int32_t i = 0; i < g->n_pending; i++)
			if (g->pending[i].deadline < d) d = g->pending[i].deadline;
	}
	return d;
}

/* ---- introspection -------------------------------------------------------------- */
static const ggroup *find_c(const hw_gcoord *c, const char *group)
{
	return group ? hwg_find(c, group, strlen(group)) : NULL;
}

int hw_group_state_of(const hw_gcoord *c, const char *group)
{
	const ggroup *g = find_c(c, group);
	return g ? (int)g->state : -1;
}

int32_t hw_group_generation_of(const hw_gcoord *c, const char *group)
{
	const ggroup *g = find_c(c, group);
	return g ? g->generation : -1;
}

int32_t hw_group_member_count(const hw_gcoord *c, const char *group)
{
	const ggroup *g = find_c(c, group);
	return g ? g->n_members : -1;
}

const char *hw_group_leader_of(const hw_gcoord *c, const char *group)
{
	const ggroup *g = find_c(c, group);
	return g ? (g->leader ? g->leader : "") : NULL;
}
