/* hw_group_join.c — JoinGroup, SyncGroup, Heartbeat, LeaveGroup and the
 * rebalance they drive, after Kafka's GroupCoordinator (doJoinGroup,
 * doSyncGroup, doHeartbeat, handleLeaveGroup, prepareRebalance,
 * onCompleteJoin, InitialDelayedJoin). docs/groups.md "Rebalance". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_group_int.h"

/* ---- answers -------------------------------------------------------------- */
static void join_error(hw_gjoin_cb cb, void *ctx, int16_t err, const char *member_id)
{
	hw_gjoin_resp r = { .error = err, .generation = -1, .protocol_type = "", .protocol_name = "",
			    .leader = "", .member_id = member_id ? member_id : "" };
	if (cb) cb(ctx, &r);
}

static void sync_answer(ggroup *g, hw_gsync_cb cb, void *ctx, int16_t err, const gmember *m)
{
	hw_gsync_resp r = { .error = err, .protocol_type = g && g->protocol_type ? g->protocol_type : "",
			    .protocol_name = g && g->protocol ? g->protocol : "" };
	if (!err && m) { r.assignment = m->assignment; r.assignment_len = m->assignment_len; }
	if (cb) cb(ctx, &r);
}

static const gproto *member_proto(const gmember *m, const char *name)
{
	for (int32_t i = 0; name && i < m->n_protocols; i++)
		if (strcmp(m->protocols[i].name, name) == 0) return &m->protocols[i];
	return NULL;
}

/* The join answer of member m in the current generation; the leader's
 * carries every member's metadata for the selected protocol. */
static void join_answer(ggroup *g, const gmember *m, hw_gjoin_cb cb, void *ctx)
{
	if (!cb) return;
	int leader = g->leader && strcmp(g->leader, m->id) == 0;
	hw_gjoin_member *list = NULL;
	int32_t n = 0;
	if (leader && g->n_members > 0) {
		list = calloc((size_t)g->n_members, sizeof *list);
		if (!list) { join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, m->id); return; }
		for (int32_t i = 0; i < g->n_members; i++) {
			const gproto *p = member_proto(&g->members[i], g->protocol);
			list[n].member_id = g->members[i].id;
			list[n].metadata = p ? p->meta : NULL;
			list[n].metadata_len = p ? p->meta_len : 0;
			n++;
		}
	}
	hw_gjoin_resp r = { .error = HW_ERR_NONE, .generation = g->generation,
			    .protocol_type = g->protocol_type ? g->protocol_type : "",
			    .protocol_name = g->protocol ? g->protocol : "",
			    .leader = g->leader ? g->leader : "", .member_id = m->id,
			    .n_members = n, .members = list };
	cb(ctx, &r);
	free(list);
}

void hwg_fail_waiters(hw_gcoord *c, ggroup *g, int16_t err)
{
	(void)c;
	for (int32_t i = 0; i < g->n_members; i++) {
		gmember *m = &g->members[i];
		if (m->awaiting_join) {
			hw_gjoin_cb cb = m->join_cb;
			m->awaiting_join = 0; m->join_cb = NULL;
			join_error(cb, m->join_ctx, err, m->id);
		}
		if (m->awaiting_sync) {
			hw_gsync_cb cb = m->sync_cb;
			m->awaiting_sync = 0; m->sync_cb = NULL;
			sync_answer(g, cb, m->sync_ctx, err, NULL);
		}
	}
}

/* Kafka's resetAndPropagateAssignmentError: the sync waiters get err and
 * every assignment is cleared. */
static void reset_assignments(ggroup *g, int16_t err)
{
	for (int32_t i = 0; i < g->n_members; i++) {
		gmember *m = &g->members[i];
		free(m->assignment);
		m->assignment = NULL;
		m->assignment_len = 0;
		if (m->awaiting_sync) {
			hw_gsync_cb cb = m->sync_cb;
			m->awaiting_sync = 0; m->sync_cb = NULL;
			sync_answer(g, cb, m->sync_ctx, err, NULL);
		}
	}
}

/* ---- members ------------------------------------------------------------------- */
static int32_t max_rebalance_ms(const ggroup *g)
{
	int32_t t = 0;
	for (int32_t i = 0; i < g->n_members; i++)
		if (g->members[i].rebalance_ms > t) t = g->members[i].rebalance_ms;
	return t;
}

/* Copy the request's client fields, timeouts and protocols into m
 * (replacing what was there). 0 or -ENOMEM (m unchanged then). */
static int member_update(gmember *m, const hw_gjoin_req *q)
{
	gproto *ps = calloc((size_t)(q->n_protocols > 0 ? q->n_protocols : 1), sizeof *ps);
	char *cid = hwg_strdup(q->client_id.p ? q->client_id : (hw_gstr){ "", 0 });
	char *host = hwg_strdup(q->client_host.p ? q->client_host : (hw_gstr){ "", 0 });
	int ok = ps && cid && host;
	for (int32_t i = 0; ok && i < q->n_protocols; i++) {
		ps[i].name = hwg_strdup(q->protocols[i].name.p ? q->protocols[i].name : (hw_gstr){ "", 0 });
		ps[i].meta_len = q->protocols[i].metadata_len > 0 ? q->protocols[i].metadata_len : 0;
		ps[i].meta = malloc((size_t)ps[i].meta_len + 1);
		if (!ps[i].name || !ps[i].meta) { ok = 0; break; }
		if (ps[i].meta_len) memcpy(ps[i].meta, q->protocols[i].metadata, (size_t)ps[i].meta_len);
	}
	if (!ok) {
		for (int32_t i = 0; ps && i < q->n_protocols; i++) { free(ps[i].name); free(ps[i].meta); }
		free(ps); free(cid); free(host);
		return -1;
	}
	for (int32_t i = 0; i < m->n_protocols; i++) { free(m->protocols[i].name); free(m->protocols[i].meta); }
	free(m->protocols); free(m->client_id); free(m->client_host);
	m->protocols = ps;
	m->n_protocols = q->n_protocols;
	m->client_id = cid;
	m->client_host = host;
	m->session_ms = q->session_timeout_ms;
	m->rebalance_ms = q->rebalance_timeout_ms;
	return 0;
}

/* Kafka's MemberMetadata.matches: same protocols, same metadata, same order. */
static int member_matches(const gmember *m, const hw_gjoin_req *q)
{
	if (m->n_protocols != q->n_protocols) return 0;
	for (int32_t i = 0; i < q->n_protocols; i++) {
		const gproto *p = &m->protocols[i];
		int32_t ml = q->protocols[i].metadata_len > 0 ? q->protocols[i].metadata_len : 0;
		if (!hwg_streq(p->name, q->protocols[i].name) || p->meta_len != ml ||
		    (ml && memcmp(p->meta, q->protocols[i].metadata, (size_t)ml) != 0))
			return 0;
	}
	return 1;
}

static int32_t protocol_support(const ggroup *g, hw_gstr name)
{
	int32_t n = 0;
	for (int32_t i = 0; i < g->n_members; i++)
		for (int32_t j = 0; j < g->members[i].n_protocols; j++)
			if (hwg_streq(g->members[i].protocols[j].name, name)) { n++; break; }
	return n;
}

/* Kafka's GroupMetadata.supportsProtocols. */
static int supports_protocols(const ggroup *g, const hw_gjoin_req *q)
{
	if (g->n_members == 0)
		return q->protocol_type.p && q->protocol_type.len > 0 && q->n_protocols > 0;
	if (!hwg_streq(g->protocol_type, q->protocol_type)) return 0;
	for (int32_t i = 0; i < q->n_protocols; i++)
		if (protocol_support(g, q->protocols[i].name) == g->n_members) return 1;
	return 0;
}

/* Kafka's selectProtocol: among the protocols every member supports, the
 * one most members list first (ties: the earliest in the first member's
 * list). NULL if none (cannot happen after supports_protocols). */
static const char *select_protocol(const ggroup *g)
{
	if (g->n_members == 0) return NULL;
	const gmember *first = &g->members[0];
	const char *best = NULL;
	int32_t best_votes = -1;
	for (int32_t j = 0; j < first->n_protocols; j++) {
		const char *cand = first->protocols[j].name;
		hw_gstr cs = { cand, (int32_t)strlen(cand) };
		if (protocol_support(g, cs) != g->n_members) continue;
		int32_t votes = 0;
		for (int32_t i = 0; i < g->n_members; i++) {
			const gmember *m = &g->members[i];
			for (int32_t k = 0; k < m->n_protocols; k++) {
				hw_gstr ks = { m->protocols[k].name, (int32_t)strlen(m->protocols[k].name) };
				if (protocol_support(g, ks) != g->n_members) continue;
				if (strcmp(m->protocols[k].name, cand) == 0) votes++;
				break; /* a member votes for its first supported protocol */
			}
		}
		if (votes > best_votes) { best = cand; best_votes = votes; }
	}
	return best;
}

/* A member id as Kafka makes one: clientId + "-" + a random UUID. */
static char *new_member_id(hw_gcoord *c, hw_gstr client_id)
{
	uint8_t u[16];
	for (int i = 0; i < 16; i++) {
		c->rng ^= c->rng << 13; c->rng ^= c->rng >> 7; c->rng ^= c->rng << 17; /* xorshift64 */
		u[i] = (uint8_t)(c->rng >> 24);
	}
	u[6] = (uint8_t)((u[6] & 0x0F) | 0x40); /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3F) | 0x80); /* variant */
	int32_t cl = client_id.p && client_id.len > 0 ? client_id.len : 0;
	char *s = malloc((size_t)cl + 38);
	if (!s) return NULL;
	if (cl) memcpy(s, client_id.p, (size_t)cl);
	snprintf(s + cl, 38, "-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return s;
}

static int pending_index(const ggroup *g, hw_gstr id)
{
	for (int32_t i = 0; i < g->n_pending; i++)
		if (hwg_streq(g->pending[i].id, id)) return i;
	return -1;
}

static void pending_remove(ggroup *g, int32_t i)
{
	free(g->pending[i].id);
	g->pending[i] = g->pending[--g->n_pending];
}

void hwg_remove_member(hw_gcoord *c, ggroup *g, int32_t idx, hw_group_reason why)
{
	gmember *m = &g->members[idx];
	HW_LOG(INFO, "group", "group %s: member %s removed (%s)", g->id, m->id, hw_group_reason_name(why));
	c->st.removed[why]++;
	/* a member removed while it waits is told it is gone (Kafka's
	 * maybeInvokeJoinCallback with UNKNOWN_MEMBER_ID) */
	if (m->awaiting_join) { m->awaiting_join = 0; join_error(m->join_cb, m->join_ctx, HW_ERR_UNKNOWN_MEMBER_ID, m->id); }
	if (m->awaiting_sync) { m->awaiting_sync = 0; sync_answer(g, m->sync_cb, m->sync_ctx, HW_ERR_UNKNOWN_MEMBER_ID, NULL); }
	int was_leader = g->leader && strcmp(g->leader, m->id) == 0;
	hwg_member_free(m);
	memmove(&g->members[idx], &g->members[idx + 1], (size_t)(g->n_members - idx - 1) * sizeof *m);
	g->n_members--;
	c->st.members--;
	if (was_leader) {
		free(g->leader);
		g->leader = g->n_members ? hwg_strdup((hw_gstr){ g->members[0].id, (int32_t)strlen(g->members[0].id) }) : NULL;
	}
}

/* Kafka's removeMemberAndUpdateGroup after the member is gone. */
static void after_removal(hw_gcoord *c, ggroup *g, hw_group_reason why)
{
	switch (g->state) {
	case HW_GST_STABLE:
	case HW_GST_COMPLETING_REBALANCE:
		hwg_prepare_rebalance(c, g, why);
		break;
	case HW_GST_PREPARING_REBALANCE:
		hwg_check_join_complete(c, g);
		break;
	default:
		break;
	}
}

/* ---- the rebalance ---------------------------------------------------------------- */
void hwg_prepare_rebalance(hw_gcoord *c, ggroup *g, hw_group_reason why)
{
	if (g->state == HW_GST_COMPLETING_REBALANCE)
		reset_assignments(g, HW_ERR_REBALANCE_IN_PROGRESS);
	int64_t now = hwg_now(c);
	int32_t rt = max_rebalance_ms(g);
	if (g->state == HW_GST_EMPTY && c->cfg.initial_rebalance_delay_ms > 0) {
		/* Kafka's InitialDelayedJoin: wait for more members of a new group */
		int32_t d = c->cfg.initial_rebalance_delay_ms;
		g->initial_delay = 1;
		g->initial_remaining_ms = rt > d ? rt - d : 0;
		g->initial_cur_delay_ms = d < rt ? d : rt;
		g->join_deadline = now + g->initial_cur_delay_ms;
		g->new_member_added = 0;
	} else {
		g->initial_delay = 0;
		g->join_deadline = now + rt;
	}
	c->st.rebalances[why]++;
	hwg_transition(c, g, HW_GST_PREPARING_REBALANCE, hw_group_reason_name(why));
	hwg_check_join_complete(c, g);
}

static void maybe_prepare_rebalance(hw_gcoord *c, ggroup *g, hw_group_reason why)
{
	if (g->state == HW_GST_STABLE || g->state == HW_GST_COMPLETING_REBALANCE || g->state == HW_GST_EMPTY)
		hwg_prepare_rebalance(c, g, why);
}

void hwg_check_join_complete(hw_gcoord *c, ggroup *g)
{
	if (g->state != HW_GST_PREPARING_REBALANCE || g->initial_delay) return;
	for (int32_t i = 0; i < g->n_members; i++)
		if (!g->members[i].awaiting_join) return;
	if (g->n_pending) return;
	hwg_complete_join(c, g);
}

void hwg_complete_join(hw_gcoord *c, ggroup *g)
{
	g->join_deadline = INT64_MAX;
	g->initial_delay = 0;
	for (int32_t i = g->n_members - 1; i >= 0; i--)
		if (!g->members[i].awaiting_join) hwg_remove_member(c, g, i, HW_GR_NOT_REJOINED);
	if (g->state == HW_GST_DEAD) return;
	g->generation++;
	free(g->protocol);
	g->protocol = NULL;
	if (g->n_members == 0) {
		hwg_transition(c, g, HW_GST_EMPTY, "no members rejoined");
		hwg_store_group(c, g, 0); /* Kafka records the new (empty) generation */
		return;
	}
	const char *sel = select_protocol(g);
	g->protocol = sel ? hwg_strdup((hw_gstr){ sel, (int32_t)strlen(sel) }) : NULL;
	hwg_transition(c, g, HW_GST_COMPLETING_REBALANCE, "join complete");
	int64_t now = hwg_now(c);
	for (int32_t i = 0; i < g->n_members; i++) {
		gmember *m = &g->members[i];
		hw_gjoin_cb cb = m->join_cb;
		void *ctx = m->join_ctx;
		m->awaiting_join = 0; m->join_cb = NULL; m->is_new = 0;
		m->hb_deadline = now + m->session_ms;
		join_answer(g, m, cb, ctx);
	}
}

/* ---- JoinGroup ------------------------------------------------------------------- */
static void add_member_and_rebalance(hw_gcoord *c, ggroup *g, const hw_gjoin_req *q, char *id,
				     hw_gjoin_cb cb, void *ctx)
{
	if (g->n_members == g->cap_members) {
		int32_t nc = g->cap_members ? g->cap_members * 2 : 4;
		gmember *nm = realloc(g->members, (size_t)nc * sizeof *nm);
		if (!nm) { free(id); join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, NULL); return; }
		g->members = nm; g->cap_members = nc;
	}
	gmember *m = &g->members[g->n_members];
	memset(m, 0, sizeof *m);
	if (member_update(m, q) != 0) { free(id); join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, NULL); return; }
	m->id = id;
	m->awaiting_join = 1; m->join_cb = cb; m->join_ctx = ctx;
	m->is_new = 1;
	m->hb_deadline = INT64_MAX; /* awaiting: no session expiry until answered */
	g->n_members++;
	c->st.members++;
	if (!g->protocol_type) g->protocol_type = hwg_strdup(q->protocol_type);
	if (!g->leader) g->leader = hwg_strdup((hw_gstr){ id, (int32_t)strlen(id) });
	HW_LOG(INFO, "group", "group %s: member %s joined (%d members)", g->id, id, g->n_members);
	/* a new group's join can be delayed further (Kafka: generation 0 only) */
	if (g->state == HW_GST_PREPARING_REBALANCE && g->generation == 0) g->new_member_added = 1;
	maybe_prepare_rebalance(c, g, HW_GR_NEW_MEMBER);
	hwg_check_join_complete(c, g);
}

static void update_member_and_rebalance(hw_gcoord *c, ggroup *g, gmember *m, const hw_gjoin_req *q,
					hw_gjoin_cb cb, void *ctx, hw_group_reason why)
{
	if (member_update(m, q) != 0) { join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, m->id); return; }
	if (m->awaiting_join && m->join_cb && (m->join_cb != cb || m->join_ctx != ctx))
		join_error(m->join_cb, m->join_ctx, HW_ERR_REBALANCE_IN_PROGRESS, m->id); /* superseded */
	m->awaiting_join = 1; m->join_cb = cb; m->join_ctx = ctx;
	maybe_prepare_rebalance(c, g, why);
	hwg_check_join_complete(c, g);
}

/* Kafka's acceptJoiningMember (group.max.size). */
static int accept_joining(const hw_gcoord *c, const ggroup *g, const gmember *m)
{
	int32_t max = c->cfg.max_group_size;
	switch (g->state) {
	case HW_GST_EMPTY: case HW_GST_DEAD: return 1;
	case HW_GST_PREPARING_REBALANCE: {
		if (m && m->awaiting_join) return 1;
		int32_t aw = 0;
		for (int32_t i = 0; i < g->n_members; i++) aw += g->members[i].awaiting_join;
		return aw < max;
	}
	default: return m != NULL || g->n_members < max;
	}
}

static void join_unknown(hw_gcoord *c, ggroup *g, const hw_gjoin_req *q, hw_gjoin_cb cb, void *ctx)
{
	if (!accept_joining(c, g, NULL)) { join_error(cb, ctx, HW_ERR_GROUP_MAX_SIZE_REACHED, NULL); return; }
	char *id = new_member_id(c, q->client_id);
	if (!id) { join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, NULL); return; }
	if (q->require_known_member_id) {
		/* KIP-394: hand out the id; the member rejoins with it */
		if (g->n_pending == g->cap_pending) {
			int32_t nc = g->cap_pending ? g->cap_pending * 2 : 4;
			gpending *np = realloc(g->pending, (size_t)nc * sizeof *np);
			if (!np) { free(id); join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, NULL); return; }
			g->pending = np; g->cap_pending = nc;
		}
		g->pending[g->n_pending].id = id;
		g->pending[g->n_pending].deadline = hwg_now(c) + q->session_timeout_ms;
		g->n_pending++;
		join_error(cb, ctx, HW_ERR_MEMBER_ID_REQUIRED, id);
		return;
	}
	add_member_and_rebalance(c, g, q, id, cb, ctx);
}

static void join_known(hw_gcoord *c, ggroup *g, const hw_gjoin_req *q, hw_gjoin_cb cb, void *ctx)
{
	int pi = pending_index(g, q->member_id);
	if (pi >= 0) {
		char *id = g->pending[pi].id;
		g->pending[pi].id = NULL;
		g->pending[pi] = g->pending[--g->n_pending];
		add_member_and_rebalance(c, g, q, id, cb, ctx);
		return;
	}
	gmember *m = hwg_member(g, q->member_id);
	if (!m) { join_error(cb, ctx, HW_ERR_UNKNOWN_MEMBER_ID, NULL); return; }
	if (!accept_joining(c, g, m)) { join_error(cb, ctx, HW_ERR_GROUP_MAX_SIZE_REACHED, m->id); return; }
	int leader = g->leader && strcmp(g->leader, m->id) == 0;
	switch (g->state) {
	case HW_GST_PREPARING_REBALANCE:
		update_member_and_rebalance(c, g, m, q, cb, ctx, HW_GR_MEMBER_REJOIN);
		break;
	case HW_GST_COMPLETING_REBALANCE:
		if (member_matches(m, q)) join_answer(g, m, cb, ctx); /* it lost the answer */
		else update_member_and_rebalance(c, g, m, q, cb, ctx, HW_GR_MEMBER_REJOIN);
		break;
	case HW_GST_STABLE:
		if (leader || !member_matches(m, q)) {
			update_member_and_rebalance(c, g, m, q, cb, ctx, leader ? HW_GR_LEADER_REJOIN : HW_GR_MEMBER_REJOIN);
		} else {
			m->hb_deadline = hwg_now(c) + m->session_ms;
			join_answer(g, m, cb, ctx);
		}
		break;
	default:
		join_error(cb, ctx, HW_ERR_UNKNOWN_MEMBER_ID, m->id);
		break;
	}
}

void hw_group_join(hw_gcoord *c, const hw_gjoin_req *q, hw_gjoin_cb cb, void *ctx)
{
	int16_t e = hwg_route(c, q->group_id);
	if (e) { join_error(cb, ctx, e, NULL); return; }
	if (q->session_timeout_ms < c->cfg.min_session_timeout_ms || q->session_timeout_ms > c->cfg.max_session_timeout_ms) {
		join_error(cb, ctx, HW_ERR_INVALID_SESSION_TIMEOUT, NULL);
		return;
	}
	if (q->n_protocols < 0 || (q->n_protocols > 0 && !q->protocols)) {
		join_error(cb, ctx, HW_ERR_INVALID_REQUEST, NULL);
		return;
	}
	int unknown = !q->member_id.p || q->member_id.len == 0;
	ggroup *g = hwg_find(c, q->group_id.p, (size_t)q->group_id.len);
	int created = 0;
	if (!g) {
		if (!unknown) { join_error(cb, ctx, HW_ERR_UNKNOWN_MEMBER_ID, NULL); return; }
		g = hwg_add_group(c, q->group_id);
		if (!g) { join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, NULL); return; }
		created = 1;
	}
	if (g->state == HW_GST_DEAD) {
		join_error(cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, NULL);
	} else if (!supports_protocols(g, q)) {
		join_error(cb, ctx, HW_ERR_INCONSISTENT_GROUP_PROTOCOL, NULL);
	} else if (unknown) {
		join_unknown(c, g, q, cb, ctx);
	} else {
		join_known(c, g, q, cb, ctx);
	}
	if (created && g->n_members == 0 && g->n_pending == 0 && g->n_offsets == 0)
		hwg_remove_group(c, g);
}

/* ---- SyncGroup ------------------------------------------------------------------ */
void hw_group_sync(hw_gcoord *c, const hw_gsync_req *q, hw_gsync_cb cb, void *ctx)
{
	int16_t e = hwg_route(c, q->group_id);
	if (e) { sync_answer(NULL, cb, ctx, e, NULL); return; }
	ggroup *g = hwg_find(c, q->group_id.p, (size_t)q->group_id.len);
	if (!g) { sync_answer(NULL, cb, ctx, HW_ERR_UNKNOWN_MEMBER_ID, NULL); return; }
	if (g->state == HW_GST_DEAD) { sync_answer(g, cb, ctx, HW_ERR_COORDINATOR_NOT_AVAILABLE, NULL); return; }
	gmember *m = hwg_member(g, q->member_id);
	if (!m) { sync_answer(g, cb, ctx, HW_ERR_UNKNOWN_MEMBER_ID, NULL); return; }
	if (q->generation != g->generation) { sync_answer(g, cb, ctx, HW_ERR_ILLEGAL_GENERATION, NULL); return; }
	switch (g->state) {
	case HW_GST_EMPTY:
		sync_answer(g, cb, ctx, HW_ERR_UNKNOWN_MEMBER_ID, NULL);
		return;
	case HW_GST_PREPARING_REBALANCE:
		sync_answer(g, cb, ctx, HW_ERR_REBALANCE_IN_PROGRESS, NULL);
		return;
	case HW_GST_STABLE:
		m->hb_deadline = hwg_now(c) + m->session_ms;
		sync_answer(g, cb, ctx, HW_ERR_NONE, m);
		return;
	default:
		break;
	}
	/* CompletingRebalance: wait; the leader's assignment is written first */
	if (m->awaiting_sync && m->sync_cb && (m->sync_cb != cb || m->sync_ctx != ctx))
		sync_answer(g, m->sync_cb, m->sync_ctx, HW_ERR_REBALANCE_IN_PROGRESS, NULL);
	m->awaiting_sync = 1; m->sync_cb = cb; m->sync_ctx = ctx;
	if (!g->leader || strcmp(g->leader, m->id) != 0 || g->sync_write_pending) return;
	for (int32_t i = 0; i < g->n_members; i++) {
		gmember *x = &g->members[i];
		free(x->assignment);
		x->assignment = NULL;
		x->assignment_len = 0;
		for (int32_t k = 0; k < q->n_assign; k++) {
			if (!hwg_streq(x->id, q->assign[k].member_id)) continue;
			int32_t l = q->assign[k].assignment_len > 0 ? q->assign[k].assignment_len : 0;
			x->assignment = malloc((size_t)l + 1);
			if (!x->assignment) { reset_assignments(g, HW_ERR_COORDINATOR_NOT_AVAILABLE); return; }
			if (l) memcpy(x->assignment, q->assign[k].assignment, (size_t)l);
			x->assignment_len = l;
			break;
		}
	}
	g->sync_write_pending = 1;
	if (hwg_store_group(c, g, 1) != 0) {
		g->sync_write_pending = 0;
		reset_assignments(g, HW_ERR_COORDINATOR_NOT_AVAILABLE);
		hwg_prepare_rebalance(c, g, HW_GR_SYNC_FAILED);
	}
}

void hwg_sync_written(hw_gcoord *c, ggroup *g, int32_t generation, int16_t err)
{
	g->sync_write_pending = 0;
	if (g->state != HW_GST_COMPLETING_REBALANCE || generation != g->generation) return;
	if (err) {
		reset_assignments(g, err);
		hwg_prepare_rebalance(c, g, HW_GR_SYNC_FAILED);
		return;
	}
	hwg_transition(c, g, HW_GST_STABLE, "assignment written");
	int64_t now = hwg_now(c);
	for (int32_t i = 0; i < g->n_members; i++) {
		gmember *m = &g->members[i];
		m->hb_deadline = now + m->session_ms;
		if (!m->awaiting_sync) continue;
		hw_gsync_cb cb = m->sync_cb;
		m->awaiting_sync = 0; m->sync_cb = NULL;
		sync_answer(g, cb, m->sync_ctx, HW_ERR_NONE, m);
	}
}

/* ---- Heartbeat -------------------------------------------------------------------- */
int16_t hw_group_heartbeat(hw_gcoord *c, hw_gstr group, hw_gstr member, hw_gstr instance, int32_t generation)
{
	(void)instance;
	int16_t e = hwg_route(c, group);
	if (e) return e;
	ggroup *g = hwg_find(c, group.p, (size_t)group.len);
	if (!g) return HW_ERR_UNKNOWN_MEMBER_ID;
	if (g->state == HW_GST_DEAD) return HW_ERR_COORDINATOR_NOT_AVAILABLE;
	gmember *m = hwg_member(g, member);
	if (!m) return HW_ERR_UNKNOWN_MEMBER_ID;
	if (generation != g->generation) return HW_ERR_ILLEGAL_GENERATION;
	switch (g->state) {
	case HW_GST_EMPTY:
		return HW_ERR_UNKNOWN_MEMBER_ID;
	case HW_GST_PREPARING_REBALANCE:
		m->hb_deadline = hwg_now(c) + m->session_ms;
		return HW_ERR_REBALANCE_IN_PROGRESS;
	default:
		m->hb_deadline = hwg_now(c) + m->session_ms;
		return HW_ERR_NONE;
	}
}

/* ---- LeaveGroup ------------------------------------------------------------------ */
int16_t hw_group_leave(hw_gcoord *c, hw_gstr group, int32_t n, const hw_gstr *members, int16_t *errs)
{
	int16_t e = hwg_route(c, group);
	ggroup *g = e ? NULL : hwg_find(c, group.p, (size_t)group.len);
	if (!e && !g) e = HW_ERR_UNKNOWN_MEMBER_ID;
	if (!e && g->state == HW_GST_DEAD) e = HW_ERR_COORDINATOR_NOT_AVAILABLE;
	for (int32_t i = 0; i < n; i++) errs[i] = e;
	if (e) return e;
	for (int32_t i = 0; i < n; i++) {
		int pi = pending_index(g, members[i]);
		if (pi >= 0) {
			pending_remove(g, pi);
			errs[i] = HW_ERR_NONE;
			hwg_check_join_complete(c, g);
			continue;
		}
		int32_t idx = -1;
		for (int32_t k = 0; k < g->n_members; k++)
			if (hwg_streq(g->members[k].id, members[i])) { idx = k; break; }
		if (idx < 0) { errs[i] = HW_ERR_UNKNOWN_MEMBER_ID; continue; }
		hwg_remove_member(c, g, idx, HW_GR_LEAVE);
		after_removal(c, g, HW_GR_LEAVE);
		errs[i] = HW_ERR_NONE;
	}
	return HW_ERR_NONE;
}

/* ---- timers of one group ------------------------------------------------------- */
void hwg_group_timers(hw_gcoord *c, ggroup *g, int64_t now)
{
	for (int32_t i = g->n_pending - 1; i >= 0; i--) {
		if (g->pending[i].deadline > now) continue;
		HW_LOG(INFO, "group", "group %s: pending member %s expired", g->id, g->pending[i].id);
		c->st.removed[HW_GR_PENDING_TIMEOUT]++;
		pending_remove(g, i);
		hwg_check_join_complete(c, g);
	}
	for (int32_t i = g->n_members - 1; i >= 0 && i < g->n_members; i--) {
		gmember *m = &g->members[i];
		if (m->awaiting_join || m->awaiting_sync || m->hb_deadline > now) continue;
		hwg_remove_member(c, g, i, HW_GR_SESSION_TIMEOUT);
		after_removal(c, g, HW_GR_SESSION_TIMEOUT);
	}
	/* the delayed join; a late tick catches up delay by delay, each
	 * measured from the previous deadline as a timer firing on time */
	while (g->state == HW_GST_PREPARING_REBALANCE && g->join_deadline <= now) {
		if (g->initial_delay && g->new_member_added && g->initial_remaining_ms > 0) {
			/* Kafka's InitialDelayedJoin.onComplete: the next delay is
			 * min(configured, remaining); remaining drops by the delay
			 * that just ran */
			int64_t d = c->cfg.initial_rebalance_delay_ms;
			if (d > g->initial_remaining_ms) d = g->initial_remaining_ms;
			g->initial_remaining_ms -= g->initial_cur_delay_ms;
			if (g->initial_remaining_ms < 0) g->initial_remaining_ms = 0;
			g->initial_cur_delay_ms = d;
			g->new_member_added = 0;
			g->join_deadline += d;
			continue;
		}
		hwg_complete_join(c, g);
	}
}
