/* test_group.c — the group coordinator (engine/group/hw_group.h) on a
 * virtual clock over the in-memory `__consumer_offsets` log: JoinGroup with
 * member ids, the initial rebalance delay and its extension, leader and
 * protocol choice, SyncGroup waiting for the leader, heartbeats during a
 * rebalance, session and rebalance timeouts, LeaveGroup, OffsetCommit's
 * generation and member checks, acks=all completion, and the rebuild of a
 * partition from its log by another coordinator (docs/groups.md). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_err.h"
#include "hw_batch.h"
#include "hw_group.h"
#include "hw_group_memlog.h"
#include "hw_group_schema.h"

#define NPARTS 4
#define S(x) ((hw_gstr){ (x), (int32_t)strlen(x) })
#define NOSTR ((hw_gstr){ NULL, -1 })

typedef struct vclock { hw_clock c; int64_t ns; } vclock;
static int64_t vnow(hw_clock *c) { return ((vclock *)c)->ns; }

typedef struct env {
	vclock clk;
	hw_gmemlog *ml;
	hw_gcoord *co;
	hw_gcoord_cfg cfg;
} env;

static env *E;

static void advance(int64_t ms)
{
	E->clk.ns += ms * 1000000;
	hw_gcoord_tick(E->co);
}

static hw_gcoord *new_coord(void)
{
	hw_gcoord *co;
	assert_int_equal(hw_gcoord_create(&E->cfg, &E->clk.c, hw_gmemlog_log(E->ml), &co), 0);
	for (int p = 0; p < NPARTS; p++) assert_int_equal(hw_gcoord_load(co, p), 0);
	return co;
}

static int setup(void **state)
{
	E = calloc(1, sizeof *E);
	E->clk.c.now_ns = vnow;
	E->clk.ns = 1000LL * 1000000;
	hw_gcoord_cfg_init(&E->cfg);
	E->cfg.offsets_partitions = NPARTS;
	E->cfg.member_id_seed = 42;
	assert_int_equal(hw_gmemlog_create(NPARTS, &E->ml), 0);
	E->co = new_coord();
	*state = E;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hw_gcoord_free(E->co);
	hw_gmemlog_free(E->ml);
	free(E);
	return 0;
}

/* ---- a client's view of its outstanding requests ----------------------- */
typedef struct jres {
	int done;
	int16_t error;
	int32_t generation, n_members;
	char member_id[128], leader[128], protocol[32];
	char members[4][128];
	char meta[4][32];
} jres;

static void on_join(void *ctx, const hw_gjoin_resp *r)
{
	jres *j = ctx;
	j->done++;
	j->error = r->error;
	j->generation = r->generation;
	j->n_members = r->n_members;
	snprintf(j->member_id, sizeof j->member_id, "%s", r->member_id);
	snprintf(j->leader, sizeof j->leader, "%s", r->leader);
	snprintf(j->protocol, sizeof j->protocol, "%s", r->protocol_name);
	for (int32_t i = 0; i < r->n_members && i < 4; i++) {
		snprintf(j->members[i], sizeof j->members[i], "%s", r->members[i].member_id);
		snprintf(j->meta[i], sizeof j->meta[i], "%.*s", r->members[i].metadata_len, (const char *)r->members[i].metadata);
	}
}

typedef struct sres {
	int done;
	int16_t error;
	char assignment[64];
} sres;

static void on_sync(void *ctx, const hw_gsync_resp *r)
{
	sres *s = ctx;
	s->done++;
	s->error = r->error;
	snprintf(s->assignment, sizeof s->assignment, "%.*s", r->assignment_len, (const char *)r->assignment);
}

typedef struct cres {
	int done;
	int32_t n;
	int16_t errs[8];
} cres;

static void on_commit(void *ctx, int32_t n, const int16_t *errs)
{
	cres *c = ctx;
	c->done++;
	c->n = n;
	for (int32_t i = 0; i < n && i < 8; i++) c->errs[i] = errs[i];
}

/* JoinGroup of member `id` ("" = new) with protocols "name:meta,..." */
static void join(const char *group, const char *id, const char *protos, int32_t session, int32_t rebalance,
		 int v4, jres *out)
{
	hw_gproto ps[4];
	char buf[128], idb[128];
	snprintf(buf, sizeof buf, "%s", protos);
	snprintf(idb, sizeof idb, "%s", id); /* id may point into *out */
	id = idb;
	int n = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 4; t = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(t, ':');
		*colon = 0;
		ps[n].name = S(t);
		ps[n].metadata = (const uint8_t *)colon + 1;
		ps[n].metadata_len = (int32_t)strlen(colon + 1);
		n++;
	}
	hw_gjoin_req q = { .group_id = S(group), .member_id = S(id), .group_instance_id = NOSTR,
			   .client_id = S("cli"), .client_host = S("/127.0.0.1"), .protocol_type = S("consumer"),
			   .session_timeout_ms = session, .rebalance_timeout_ms = rebalance,
			   .require_known_member_id = v4, .n_protocols = n, .protocols = ps };
	memset(out, 0, sizeof *out);
	hw_group_join(E->co, &q, on_join, out);
}

/* The KIP-394 two-step join of a new member: returns its id in out. */
static void join_new(const char *group, const char *protos, jres *out)
{
	join(group, "", protos, 10000, 30000, 1, out);
	assert_int_equal(out->done, 1);
	assert_int_equal(out->error, HW_ERR_MEMBER_ID_REQUIRED);
	assert_int_equal(strncmp(out->member_id, "cli-", 4), 0);
	char id[128];
	snprintf(id, sizeof id, "%s", out->member_id);
	join(group, id, protos, 10000, 30000, 1, out);
}

static void sync_(const char *group, const char *id, int32_t gen, int n, const char **ids, const char **asg, sres *out)
{
	hw_gassign a[4];
	for (int i = 0; i < n; i++) {
		a[i].member_id = S(ids[i]);
		a[i].assignment = (const uint8_t *)asg[i];
		a[i].assignment_len = (int32_t)strlen(asg[i]);
	}
	hw_gsync_req q = { .group_id = S(group), .member_id = S(id), .group_instance_id = NOSTR,
			   .generation = gen, .n_assign = n, .assign = a };
	memset(out, 0, sizeof *out);
	hw_group_sync(E->co, &q, on_sync, out);
}

static int16_t hb(const char *group, const char *id, int32_t gen)
{
	return hw_group_heartbeat(E->co, S(group), S(id), NOSTR, gen);
}

static void commit(const char *group, const char *id, int32_t gen, const char *topic, int32_t part, int64_t off,
		   const char *meta, cres *out)
{
	hw_gcommit_part p = { .topic = S(topic), .partition = part, .offset = off, .leader_epoch = 3,
			      .metadata = meta ? S(meta) : NOSTR };
	hw_gcommit_req q = { .group_id = S(group), .member_id = S(id), .group_instance_id = NOSTR,
			     .generation = gen, .n = 1, .parts = &p };
	memset(out, 0, sizeof *out);
	hw_group_commit(E->co, &q, on_commit, out);
}

static int64_t fetched(const char *group, const char *topic, int32_t part, char *meta, size_t mcap)
{
	hw_gfetch_part p = { .topic = S(topic), .partition = part };
	assert_int_equal(hw_group_fetch(E->co, S(group), 1, &p), HW_ERR_NONE);
	assert_int_equal(p.error, HW_ERR_NONE);
	if (meta) snprintf(meta, mcap, "%s", p.metadata);
	return p.offset;
}

/* Two members A (leader) and B in a Stable group "g" at generation 1. */
static void stable_pair(jres *a, jres *b)
{
	join_new("g", "range:A", a);
	join_new("g", "range:B", b);
	/* B arrived during the initial delay: it runs twice (Kafka's
	 * InitialDelayedJoin) */
	advance(E->cfg.initial_rebalance_delay_ms);
	assert_int_equal(a->done, 0);
	advance(E->cfg.initial_rebalance_delay_ms);
	assert_int_equal(a->done, 1);
	assert_int_equal(b->done, 1);
	sres sa, sb;
	const char *ids[2] = { a->member_id, b->member_id }, *asg[2] = { "pA", "pB" };
	sync_("g", b->member_id, 1, 0, NULL, NULL, &sb);
	sync_("g", a->member_id, 1, 2, ids, asg, &sa);
	assert_int_equal(sa.done, 1);
	assert_int_equal(sb.done, 1);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_STABLE);
}

/* ---- tests ------------------------------------------------------------------ */
static void test_names(void **state)
{
	(void)state;
	assert_string_equal(hw_group_state_name(HW_GST_PREPARING_REBALANCE), "PreparingRebalance");
	assert_string_equal(hw_group_state_name(HW_GST_COMPLETING_REBALANCE), "CompletingRebalance");
	assert_string_equal(hw_group_state_name(HW_GST_DEAD), "Dead");
	assert_string_equal(hw_group_state_name(99), "?");
	assert_string_equal(hw_group_reason_name(HW_GR_SESSION_TIMEOUT), "SESSION_TIMEOUT");
	assert_string_equal(hw_group_drop_name(HW_GD_BAD_KEY), "BAD_KEY");
	assert_string_equal(hw_err_name(HW_ERR_REBALANCE_IN_PROGRESS), "REBALANCE_IN_PROGRESS");
	assert_int_equal(HW_ERR_ILLEGAL_GENERATION, 22);
	assert_int_equal(HW_ERR_UNKNOWN_MEMBER_ID, 25);
	assert_int_equal(HW_ERR_MEMBER_ID_REQUIRED, 79);
	assert_int_equal(HW_ERR_NOT_COORDINATOR, 16);
}

static void test_single_member_initial_delay(void **state)
{
	(void)state;
	jres j;
	join_new("g", "range:meta1", &j);
	/* a new group waits group.initial.rebalance.delay.ms */
	assert_int_equal(j.done, 0);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_PREPARING_REBALANCE);
	assert_true(hw_gcoord_next_deadline_ms(E->co) <= 1000 + 3000);
	advance(2999);
	assert_int_equal(j.done, 0);
	advance(1);
	assert_int_equal(j.done, 1);
	assert_int_equal(j.error, HW_ERR_NONE);
	assert_int_equal(j.generation, 1);
	assert_string_equal(j.leader, j.member_id);
	assert_string_equal(j.protocol, "range");
	assert_int_equal(j.n_members, 1);
	assert_string_equal(j.meta[0], "meta1");
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_COMPLETING_REBALANCE);
	sres s;
	const char *ids[1] = { j.member_id }, *asg[1] = { "all" };
	sync_("g", j.member_id, 1, 1, ids, asg, &s);
	assert_int_equal(s.done, 1);
	assert_int_equal(s.error, HW_ERR_NONE);
	assert_string_equal(s.assignment, "all");
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_STABLE);
	/* the group record went to the group's partition */
	assert_true(hw_gmemlog_end_offset(E->ml, hw_gcoord_partition_of(E->co, "g", 1)) >= 1);
	assert_int_equal(hb("g", j.member_id, 1), HW_ERR_NONE);
}

static void test_initial_delay_extends(void **state)
{
	(void)state;
	jres a, b;
	join_new("g", "range:A", &a);
	advance(2500);
	join_new("g", "range:B", &b);
	advance(500); /* the first delay ends; a member arrived: wait again */
	assert_int_equal(a.done, 0);
	assert_int_equal(b.done, 0);
	advance(2999);
	assert_int_equal(a.done, 0);
	advance(1);
	assert_int_equal(a.done, 1);
	assert_int_equal(b.done, 1);
	assert_int_equal(a.generation, 1);
	assert_int_equal(b.generation, 1);
	/* the first member is the leader and alone gets the member list */
	assert_string_equal(a.leader, a.member_id);
	assert_string_equal(b.leader, a.member_id);
	assert_int_equal(a.n_members, 2);
	assert_int_equal(b.n_members, 0);
	assert_string_not_equal(a.member_id, b.member_id);
}

static void test_initial_delay_bounded_by_rebalance_timeout(void **state)
{
	(void)state;
	jres a, b;
	join("g", "", "range:A", 10000, 4000, 0, &a); /* v3: no member id round trip */
	assert_int_equal(a.done, 0);
	advance(2000);
	join("g", "", "range:B", 10000, 4000, 0, &b);
	advance(1000); /* 3000: extend by min(3000, 4000 - 3000) = 1000 */
	assert_int_equal(a.done, 0);
	advance(999);
	assert_int_equal(a.done, 0);
	advance(1);
	assert_int_equal(a.done, 1);
	assert_int_equal(b.done, 1);
}

static void test_protocol_selection_and_inconsistent(void **state)
{
	(void)state;
	jres a, b, c;
	join_new("g", "roundrobin:x,range:y", &a);
	join_new("g", "range:z", &b);
	/* no common protocol: refused at once */
	join("g", "", "sticky:q", 10000, 30000, 1, &c);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.error, HW_ERR_INCONSISTENT_GROUP_PROTOCOL);
	advance(6000);
	assert_string_equal(a.protocol, "range"); /* the only one both support */
	assert_string_equal(a.meta[0], "y");
	assert_string_equal(a.meta[1], "z");
}

static void test_request_checks(void **state)
{
	(void)state;
	jres j;
	join("g", "", "range:m", 5999, 30000, 1, &j);
	assert_int_equal(j.error, HW_ERR_INVALID_SESSION_TIMEOUT);
	join("g", "", "range:m", 1800001, 30000, 1, &j);
	assert_int_equal(j.error, HW_ERR_INVALID_SESSION_TIMEOUT);
	join("", "", "range:m", 10000, 30000, 1, &j);
	assert_int_equal(j.error, HW_ERR_INVALID_GROUP_ID);
	join("nogroup", "cli-unknown", "range:m", 10000, 30000, 1, &j);
	assert_int_equal(j.error, HW_ERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(hw_group_state_of(E->co, "nogroup"), -1);
	hw_gjoin_req nul = { .group_id = { "a\0b", 3 }, .member_id = NOSTR, .protocol_type = S("consumer"),
			     .session_timeout_ms = 10000, .rebalance_timeout_ms = 10000 };
	memset(&j, 0, sizeof j);
	hw_group_join(E->co, &nul, on_join, &j);
	assert_int_equal(j.error, HW_ERR_INVALID_GROUP_ID);
	assert_int_equal(hb("nogroup", "x", 1), HW_ERR_UNKNOWN_MEMBER_ID);
	sres s;
	sync_("nogroup", "x", 1, 0, NULL, NULL, &s);
	assert_int_equal(s.error, HW_ERR_UNKNOWN_MEMBER_ID);
}

static void test_follower_sync_waits_for_leader(void **state)
{
	(void)state;
	jres a, b;
	join_new("g", "range:A", &a);
	join_new("g", "range:B", &b);
	advance(6000);
	sres sa, sb;
	sync_("g", b.member_id, 1, 0, NULL, NULL, &sb);
	assert_int_equal(sb.done, 0);
	/* a wrong generation is refused, the right one waits */
	sres bad;
	sync_("g", b.member_id, 2, 0, NULL, NULL, &bad);
	assert_int_equal(bad.error, HW_ERR_ILLEGAL_GENERATION);
	/* heartbeats are fine while the leader computes the assignment */
	assert_int_equal(hb("g", a.member_id, 1), HW_ERR_NONE);
	hw_gmemlog_hold(E->ml, 1); /* the group record waits for the ISR */
	const char *ids[2] = { a.member_id, b.member_id }, *asg[2] = { "p0", "p1" };
	sync_("g", a.member_id, 1, 2, ids, asg, &sa);
	assert_int_equal(sa.done, 0);
	assert_int_equal(sb.done, 0);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_COMPLETING_REBALANCE);
	assert_int_equal(hw_gmemlog_release(E->ml, HW_ERR_NONE), 1);
	assert_int_equal(sa.done, 1);
	assert_int_equal(sb.done, 1);
	assert_string_equal(sa.assignment, "p0");
	assert_string_equal(sb.assignment, "p1");
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_STABLE);
	/* a repeated SyncGroup in Stable returns the member's assignment */
	sync_("g", b.member_id, 1, 0, NULL, NULL, &sb);
	assert_string_equal(sb.assignment, "p1");
}

static void test_sync_write_failure_rebalances(void **state)
{
	(void)state;
	jres a, b;
	join_new("g", "range:A", &a);
	join_new("g", "range:B", &b);
	advance(6000);
	sres sa, sb;
	sync_("g", b.member_id, 1, 0, NULL, NULL, &sb);
	hw_gmemlog_fail_next(E->ml, 1, HW_ERR_NOT_ENOUGH_REPLICAS);
	const char *ids[2] = { a.member_id, b.member_id }, *asg[2] = { "p0", "p1" };
	sync_("g", a.member_id, 1, 2, ids, asg, &sa);
	assert_int_equal(sa.error, HW_ERR_COORDINATOR_NOT_AVAILABLE);
	assert_int_equal(sb.error, HW_ERR_COORDINATOR_NOT_AVAILABLE);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_PREPARING_REBALANCE);
	assert_int_equal(hb("g", b.member_id, 1), HW_ERR_REBALANCE_IN_PROGRESS);
}

static void test_new_member_rebalances_stable_group(void **state)
{
	(void)state;
	jres a, b, c;
	stable_pair(&a, &b);
	join_new("g", "range:C", &c);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_PREPARING_REBALANCE);
	assert_int_equal(c.done, 0);
	assert_int_equal(hb("g", a.member_id, 1), HW_ERR_REBALANCE_IN_PROGRESS);
	assert_int_equal(hb("g", b.member_id, 1), HW_ERR_REBALANCE_IN_PROGRESS);
	assert_int_equal(hb("g", a.member_id, 7), HW_ERR_ILLEGAL_GENERATION);
	assert_int_equal(hb("g", "cli-nobody", 1), HW_ERR_UNKNOWN_MEMBER_ID);
	/* no initial delay for a non-empty group: it completes when all rejoined */
	join("g", a.member_id, "range:A", 10000, 30000, 1, &a);
	assert_int_equal(a.done, 0);
	join("g", b.member_id, "range:B", 10000, 30000, 1, &b);
	assert_int_equal(a.done, 1);
	assert_int_equal(b.done, 1);
	assert_int_equal(c.done, 1);
	assert_int_equal(a.generation, 2);
	assert_int_equal(a.n_members, 3);
	assert_string_equal(c.leader, a.member_id);
}

static void test_rebalance_timeout_removes_laggard(void **state)
{
	(void)state;
	jres a, b, c;
	stable_pair(&a, &b);
	join_new("g", "range:C", &c);
	join("g", a.member_id, "range:A", 10000, 30000, 1, &a);
	/* B keeps heartbeating but never rejoins: removed at the rebalance timeout */
	for (int i = 0; i < 29; i++) {
		advance(1000);
		assert_int_equal(hb("g", b.member_id, 1), HW_ERR_REBALANCE_IN_PROGRESS);
	}
	assert_int_equal(a.done, 0);
	advance(1000);
	assert_int_equal(a.done, 1);
	assert_int_equal(c.done, 1);
	assert_int_equal(a.generation, 2);
	assert_int_equal(a.n_members, 2);
	assert_int_equal(hw_group_member_count(E->co, "g"), 2);
	assert_int_equal(hb("g", b.member_id, 2), HW_ERR_UNKNOWN_MEMBER_ID);
	assert_true(hw_gcoord_stats(E->co)->removed[HW_GR_NOT_REJOINED] == 1);
}

static void test_session_timeout_and_leader_change(void **state)
{
	(void)state;
	jres a, b;
	stable_pair(&a, &b);
	/* only B heartbeats: A (the leader) expires after its 10 s session */
	for (int i = 0; i < 9; i++) {
		advance(1000);
		assert_int_equal(hb("g", b.member_id, 1), HW_ERR_NONE);
	}
	advance(1000);
	assert_int_equal(hw_group_member_count(E->co, "g"), 1);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_PREPARING_REBALANCE);
	assert_string_equal(hw_group_leader_of(E->co, "g"), b.member_id);
	assert_int_equal(hb("g", b.member_id, 1), HW_ERR_REBALANCE_IN_PROGRESS);
	join("g", b.member_id, "range:B", 10000, 30000, 1, &b);
	assert_int_equal(b.done, 1);
	assert_int_equal(b.generation, 2);
	assert_string_equal(b.leader, b.member_id);
	assert_int_equal(b.n_members, 1);
	assert_true(hw_gcoord_stats(E->co)->removed[HW_GR_SESSION_TIMEOUT] == 1);
	/* and once B goes silent too the group ends Empty at a new generation */
	sres s;
	const char *ids[1] = { b.member_id }, *asg[1] = { "all" };
	sync_("g", b.member_id, 2, 1, ids, asg, &s);
	assert_int_equal(s.error, HW_ERR_NONE);
	advance(10000);
	assert_int_equal(hw_group_member_count(E->co, "g"), 0);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_EMPTY);
	assert_int_equal(hw_group_generation_of(E->co, "g"), 3);
}

static void test_leave(void **state)
{
	(void)state;
	jres a, b;
	stable_pair(&a, &b);
	hw_gstr who[2] = { S(b.member_id), S("cli-ghost") };
	int16_t errs[2];
	assert_int_equal(hw_group_leave(E->co, S("g"), 2, who, errs), HW_ERR_NONE);
	assert_int_equal(errs[0], HW_ERR_NONE);
	assert_int_equal(errs[1], HW_ERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_PREPARING_REBALANCE);
	assert_int_equal(hb("g", a.member_id, 1), HW_ERR_REBALANCE_IN_PROGRESS);
	join("g", a.member_id, "range:A", 10000, 30000, 1, &a);
	assert_int_equal(a.done, 1); /* the only member left has rejoined */
	assert_int_equal(a.generation, 2);
	assert_int_equal(a.n_members, 1);
	assert_int_equal(hw_group_leave(E->co, S("nogroup"), 1, who, errs), HW_ERR_UNKNOWN_MEMBER_ID);
}

static void test_pending_member_expires(void **state)
{
	(void)state;
	jres a, p;
	stable_pair(&a, &p);
	jres x;
	join("g", "", "range:X", 10000, 30000, 1, &x);
	assert_int_equal(x.error, HW_ERR_MEMBER_ID_REQUIRED);
	/* the id was handed out but the member never rejoins: nothing changes,
	 * and after its session timeout the id is no longer known */
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_STABLE);
	for (int i = 0; i < 10; i++) {
		advance(1000);
		hb("g", a.member_id, 1);
		hb("g", p.member_id, 1);
	}
	char id[128];
	snprintf(id, sizeof id, "%s", x.member_id);
	join("g", id, "range:X", 10000, 30000, 1, &x);
	assert_int_equal(x.error, HW_ERR_UNKNOWN_MEMBER_ID);
	assert_true(hw_gcoord_stats(E->co)->removed[HW_GR_PENDING_TIMEOUT] == 1);
}

static void test_commit_checks(void **state)
{
	(void)state;
	jres a, b;
	stable_pair(&a, &b);
	cres c;
	commit("g", a.member_id, 1, "t", 0, 42, "meta-A", &c);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.errs[0], HW_ERR_NONE);
	char meta[64];
	assert_int_equal(fetched("g", "t", 0, meta, sizeof meta), 42);
	assert_string_equal(meta, "meta-A");
	assert_int_equal(fetched("g", "t", 1, NULL, 0), -1); /* nothing committed */
	commit("g", a.member_id, 0, "t", 0, 43, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_ILLEGAL_GENERATION);
	commit("g", "cli-nobody", 1, "t", 0, 43, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(fetched("g", "t", 0, NULL, 0), 42);
	/* metadata over offset.metadata.max.bytes */
	char big[4200];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	commit("g", a.member_id, 1, "t", 0, 44, big, &c);
	assert_int_equal(c.errs[0], HW_ERR_OFFSET_METADATA_TOO_LARGE);
	/* during CompletingRebalance commits are refused */
	jres c3;
	join_new("g", "range:C", &c3);
	join("g", a.member_id, "range:A", 10000, 30000, 1, &a);
	join("g", b.member_id, "range:B", 10000, 30000, 1, &b);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_COMPLETING_REBALANCE);
	commit("g", a.member_id, 2, "t", 0, 45, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_REBALANCE_IN_PROGRESS);
	/* a commit with the old generation after the rebalance */
	commit("g", a.member_id, 1, "t", 0, 46, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_REBALANCE_IN_PROGRESS);
	assert_int_equal(fetched("g", "t", 0, NULL, 0), 42);
}

static void test_simple_commit_and_acks_all(void **state)
{
	(void)state;
	cres c;
	/* generation -1 on an unknown group: offsets without group management */
	commit("solo", "", -1, "t", 2, 7, "m", &c);
	assert_int_equal(c.errs[0], HW_ERR_NONE);
	assert_int_equal(fetched("solo", "t", 2, NULL, 0), 7);
	/* an unknown group with a generation: an older generation */
	commit("other", "x", 3, "t", 2, 7, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_ILLEGAL_GENERATION);
	assert_int_equal(hw_group_state_of(E->co, "other"), -1);
	/* acks=all: answered only when the append completes, visible only then */
	hw_gmemlog_hold(E->ml, 1);
	commit("solo", "", -1, "t", 2, 8, "m2", &c);
	assert_int_equal(c.done, 0);
	assert_int_equal(fetched("solo", "t", 2, NULL, 0), 7);
	hw_gmemlog_release(E->ml, HW_ERR_NONE);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.errs[0], HW_ERR_NONE);
	assert_int_equal(fetched("solo", "t", 2, NULL, 0), 8);
	/* a failed append is not applied; Kafka's error mapping */
	commit("solo", "", -1, "t", 2, 9, NULL, &c);
	hw_gmemlog_release(E->ml, HW_ERR_NOT_ENOUGH_REPLICAS);
	assert_int_equal(c.errs[0], HW_ERR_COORDINATOR_NOT_AVAILABLE);
	commit("solo", "", -1, "t", 2, 9, NULL, &c);
	hw_gmemlog_release(E->ml, HW_ERR_NOT_LEADER_OR_FOLLOWER);
	assert_int_equal(c.errs[0], HW_ERR_NOT_COORDINATOR);
	commit("solo", "", -1, "t", 2, 9, NULL, &c);
	hw_gmemlog_release(E->ml, HW_ERR_MESSAGE_TOO_LARGE);
	assert_int_equal(c.errs[0], HW_ERR_INVALID_COMMIT_OFFSET_SIZE);
	assert_int_equal(fetched("solo", "t", 2, NULL, 0), 8);
	hw_gmemlog_hold(E->ml, 0);
}

static void test_not_coordinator_and_unload(void **state)
{
	(void)state;
	int32_t p = hw_gcoord_partition_of(E->co, "g", 1);
	jres a;
	join_new("g", "range:A", &a);
	assert_int_equal(a.done, 0);
	hw_gcoord_unload(E->co, p);
	assert_int_equal(a.done, 1);
	assert_int_equal(a.error, HW_ERR_NOT_COORDINATOR);
	assert_int_equal(hw_group_state_of(E->co, "g"), -1);
	jres b;
	join("g", "", "range:B", 10000, 30000, 1, &b);
	assert_int_equal(b.error, HW_ERR_NOT_COORDINATOR);
	assert_int_equal(hb("g", "x", 1), HW_ERR_NOT_COORDINATOR);
	cres c;
	commit("g", "", -1, "t", 0, 1, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_NOT_COORDINATOR);
	hw_gfetch_part fp = { .topic = S("t"), .partition = 0 };
	assert_int_equal(hw_group_fetch(E->co, S("g"), 1, &fp), HW_ERR_NOT_COORDINATOR);
	assert_int_equal(fp.error, HW_ERR_NOT_COORDINATOR);
	/* a commit in flight when leadership moves is not applied */
	assert_int_equal(hw_gcoord_load(E->co, p), 0);
	hw_gmemlog_hold(E->ml, 1);
	commit("g", "", -1, "t", 0, 5, NULL, &c);
	hw_gcoord_unload(E->co, p);
	hw_gmemlog_release(E->ml, HW_ERR_NONE);
	assert_int_equal(c.errs[0], HW_ERR_NOT_COORDINATOR);
}

static void test_rebuild_from_log(void **state)
{
	(void)state;
	jres a, b;
	stable_pair(&a, &b);
	cres c;
	commit("g", a.member_id, 1, "orders", 0, 100, "from-A", &c);
	commit("g", b.member_id, 1, "orders", 1, 200, "from-B", &c);
	commit("g", a.member_id, 1, "orders", 0, 150, "from-A2", &c);
	commit("solo", "", -1, "t", 0, 5, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_NONE);
	/* commit metadata is bytes to Kafka: NULs included */
	hw_gcommit_part bin = { .topic = S("bin"), .partition = 0, .offset = 9, .leader_epoch = -1,
				.metadata = { "x\0y", 3 } };
	hw_gcommit_req bq = { .group_id = S("solo"), .member_id = S(""), .generation = -1, .n = 1, .parts = &bin };
	hw_group_commit(E->co, &bq, on_commit, &c);
	assert_int_equal(c.errs[0], HW_ERR_NONE);
	/* another broker becomes the leader of these partitions */
	hw_gcoord *old = E->co;
	E->co = new_coord();
	char meta[64];
	assert_int_equal(fetched("g", "orders", 0, meta, sizeof meta), 150);
	assert_string_equal(meta, "from-A2");
	assert_int_equal(fetched("g", "orders", 1, meta, sizeof meta), 200);
	assert_string_equal(meta, "from-B");
	assert_int_equal(fetched("solo", "t", 0, NULL, 0), 5);
	hw_gfetch_part fb = { .topic = S("bin"), .partition = 0 };
	assert_int_equal(hw_group_fetch(E->co, S("solo"), 1, &fb), HW_ERR_NONE);
	assert_int_equal(fb.metadata_len, 3);
	assert_memory_equal(fb.metadata, "x\0y", 3);
	assert_int_equal(hw_group_state_of(E->co, "g"), HW_GST_STABLE);
	assert_int_equal(hw_group_generation_of(E->co, "g"), 1);
	assert_int_equal(hw_group_member_count(E->co, "g"), 2);
	assert_string_equal(hw_group_leader_of(E->co, "g"), a.member_id);
	/* the members carry on: same generation, their assignment, commits */
	assert_int_equal(hb("g", a.member_id, 1), HW_ERR_NONE);
	sres s;
	sync_("g", b.member_id, 1, 0, NULL, NULL, &s);
	assert_string_equal(s.assignment, "pB");
	commit("g", b.member_id, 1, "orders", 1, 201, NULL, &c);
	assert_int_equal(c.errs[0], HW_ERR_NONE);
	assert_true(hw_gcoord_stats(E->co)->replayed_records == 6); /* 1 group record, 5 offsets */
	for (int d = 0; d < HW_GD__COUNT; d++) assert_true(hw_gcoord_stats(E->co)->drops[d] == 0);
	hw_gcoord_free(old);
}

static void test_async_load(void **state)
{
	(void)state;
	cres c;
	commit("solo", "", -1, "t", 0, 11, "x", &c);
	commit("solo", "", -1, "t", 0, 12, "y", &c);
	int32_t p = hw_gcoord_partition_of(E->co, "solo", 4);
	hw_gcoord_free(E->co);
	hw_gcoord *co;
	assert_int_equal(hw_gcoord_create(&E->cfg, &E->clk.c, hw_gmemlog_log(E->ml), &co), 0);
	E->co = co;
	assert_int_equal(hw_gcoord_load_begin(co, p), 0);
	hw_gfetch_part fp = { .topic = S("t"), .partition = 0 };
	assert_int_equal(hw_group_fetch(co, S("solo"), 1, &fp), HW_ERR_COORDINATOR_LOAD_IN_PROGRESS);
	jres j;
	join("solo", "", "range:m", 10000, 30000, 1, &j);
	assert_int_equal(j.error, HW_ERR_COORDINATOR_LOAD_IN_PROGRESS);
	/* the log read batch by batch, as fetch responses bring it */
	uint8_t buf[4096];
	int64_t next = 0;
	for (int rounds = 0; rounds < 10; rounds++) {
		size_t need;
		ssize_t n = hw_gmemlog_log(E->ml)->read(hw_gmemlog_log(E->ml), p, next, buf, 100, &need);
		if (n == 0 && need == 0) break;
		if (n == 0) n = hw_gmemlog_log(E->ml)->read(hw_gmemlog_log(E->ml), p, next, buf, need, &need);
		assert_true(n > 0);
		int64_t before = next;
		assert_int_equal(hw_gcoord_load_feed(co, p, buf, (size_t)n, &next), 0);
		assert_true(next > before);
	}
	assert_int_equal(next, 2);
	assert_int_equal(hw_gcoord_load_end(co, p), 0);
	assert_int_equal(hw_gcoord_load_end(co, p), -EINVAL);
	assert_int_equal(hw_gcoord_load_begin(co, p), -EALREADY);
	char meta[8];
	assert_int_equal(fetched("solo", "t", 0, meta, sizeof meta), 12);
	assert_string_equal(meta, "y");
	for (int q = 0; q < NPARTS; q++) if (q != p) assert_int_equal(hw_gcoord_load(co, q), 0);
}

static void test_offsets_expire_with_tombstones(void **state)
{
	(void)state;
	E->cfg.offsets_retention_ms = 60000;
	hw_gcoord_free(E->co);
	E->co = new_coord();
	cres c;
	commit("solo", "", -1, "t", 0, 5, NULL, &c);
	advance(30000);
	commit("solo", "", -1, "t", 1, 6, NULL, &c);
	advance(30000); /* t-0 is 60 s old */
	assert_int_equal(fetched("solo", "t", 0, NULL, 0), -1);
	assert_int_equal(fetched("solo", "t", 1, NULL, 0), 6);
	advance(30000);
	assert_int_equal(hw_group_state_of(E->co, "solo"), -1); /* Dead, removed */
	/* the tombstones are in the log: a rebuild knows nothing either */
	hw_gcoord_free(E->co);
	E->co = new_coord();
	assert_int_equal(fetched("solo", "t", 0, NULL, 0), -1);
	assert_int_equal(fetched("solo", "t", 1, NULL, 0), -1);
}

static void append_done(void *ctx, int err, int64_t base)
{
	(void)base;
	*(int *)ctx = err;
}

static void test_replay_counts_bad_records(void **state)
{
	(void)state;
	int32_t p = hw_gcoord_partition_of(E->co, "g", 1);
	/* an unknown key version, a record without a key, an undecodable
	 * value, a group of another partition, then one good offset */
	uint8_t k_ver[] = { 0, 9, 0, 1, 'g' }, k_ok[64], k_other[64], v_ok[64];
	const char *other = "g";
	char buf[16];
	for (int i = 0; i < 1000; i++) {
		snprintf(buf, sizeof buf, "o%d", i);
		if (hw_gcoord_partition_of(E->co, buf, strlen(buf)) != p) { other = buf; break; }
	}
	int kl = hw_gschema_offset_key_encode(k_ok, sizeof k_ok, "g", 1, "t", 1, 0);
	int ko = hw_gschema_offset_key_encode(k_other, sizeof k_other, other, strlen(other), "t", 1, 0);
	int vl = hw_gschema_offset_value_encode(v_ok, sizeof v_ok, 77, -1, "m", 1, 1);
	hw_record_in r[5] = {
		{ .timestamp = 1, .key = k_ver, .key_len = sizeof k_ver, .value = "v", .value_len = 1 },
		{ .timestamp = 1, .key = NULL, .value = "v", .value_len = 1 },
		{ .timestamp = 1, .key = k_ok, .key_len = kl, .value = "\x00\x03", .value_len = 2 },
		{ .timestamp = 1, .key = k_other, .key_len = ko, .value = v_ok, .value_len = vl },
		{ .timestamp = 1, .key = k_ok, .key_len = kl, .value = v_ok, .value_len = vl },
	};
	hw_batch_spec sp;
	hw_batch_spec_init(&sp);
	uint8_t b[1024];
	ssize_t n = hw_batch_build(b, sizeof b, &sp, r, 5);
	assert_true(n > 0);
	int err = -1;
	assert_int_equal(hw_gmemlog_log(E->ml)->append(hw_gmemlog_log(E->ml), p, b, (size_t)n, append_done, &err), 0);
	assert_int_equal(err, HW_ERR_NONE);
	hw_gcoord_free(E->co);
	E->co = new_coord();
	const hw_gstats *st = hw_gcoord_stats(E->co);
	assert_true(st->drops[HW_GD_BAD_KEY] == 1);
	assert_true(st->drops[HW_GD_NULL_KEY] == 1);
	assert_true(st->drops[HW_GD_BAD_VALUE] == 1);
	assert_true(st->drops[HW_GD_WRONG_PARTITION] == 1);
	assert_int_equal(fetched("g", "t", 0, NULL, 0), 77);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_single_member_initial_delay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_initial_delay_extends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_initial_delay_bounded_by_rebalance_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protocol_selection_and_inconsistent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_follower_sync_waits_for_leader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_write_failure_rebalances, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_member_rebalances_stable_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebalance_timeout_removes_laggard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_timeout_and_leader_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leave, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_member_expires, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_simple_commit_and_acks_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_coordinator_and_unload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebuild_from_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_async_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offsets_expire_with_tombstones, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_counts_bad_records, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
