/* test_group_api.c — the group entry point (engine/group/hw_group_api.h)
 * driven with Kafka request bodies as a client sends them: two consumers
 * find the coordinator, join (JoinGroup v5: MEMBER_ID_REQUIRED, then the
 * rejoin left pending and completed through the listener's slot after the
 * initial delay), sync, heartbeat, commit (v7), fetch (v5, listed and all),
 * one leaves (v3), the other rejoins alone; an unsupported version and a
 * malformed body are refused for the listener to close the connection. */
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
#include "hw_kafka_group.h"
#include "hw_group.h"
#include "hw_group_api.h"
#include "hw_group_memlog.h"

typedef struct vclock { hw_clock c; int64_t ns; } vclock;
static int64_t vnow(hw_clock *c) { return ((vclock *)c)->ns; }

/* The listener's side: one slot per request. */
typedef struct slot {
	hw_kw w;
	int completed;
} slot;

static int ensure_calls;
static hw_kw *pw(void *ctx, void *req) { (void)ctx; return &((slot *)req)->w; }
static void complete(void *ctx, void *req) { (void)ctx; ((slot *)req)->completed++; }
static int coord(void *ctx, int32_t p, int32_t *node, char *host, size_t cap, int32_t *port)
{
	(void)ctx;
	*node = 100 + p;
	snprintf(host, cap, "127.0.0.1");
	*port = 19591;
	return 0;
}
static int no_topic(void *ctx, int32_t p, int32_t *node, char *host, size_t cap, int32_t *port)
{
	(void)ctx; (void)p; (void)node; (void)host; (void)cap; (void)port;
	return -ENOENT;
}
static void ensure(void *ctx) { (void)ctx; ensure_calls++; }

static vclock clk;
static hw_gmemlog *ml;
static hw_gcoord *co;
static hw_group_api *api;
static hw_group_api_ops ops = { .pending_writer = pw, .complete = complete, .coordinator = coord,
				.ensure_offsets_topic = ensure };

static int setup(void **state)
{
	(void)state;
	clk.c.now_ns = vnow;
	clk.ns = 5000LL * 1000000;
	hw_gcoord_cfg cfg;
	hw_gcoord_cfg_init(&cfg);
	cfg.offsets_partitions = 3;
	assert_int_equal(hw_gmemlog_create(3, &ml), 0);
	assert_int_equal(hw_gcoord_create(&cfg, &clk.c, hw_gmemlog_log(ml), &co), 0);
	for (int p = 0; p < 3; p++) assert_int_equal(hw_gcoord_load(co, p), 0);
	assert_int_equal(hw_group_api_create(co, &ops, NULL, &api), 0);
	ensure_calls = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hw_gcoord_free(co);
	hw_group_api_free(api);
	hw_gmemlog_free(ml);
	return 0;
}

/* ---- request bodies, laid out by hand -------------------------------------- */
typedef struct buf { uint8_t b[1024]; size_t n; } buf;
static void p8(buf *x, int v) { x->b[x->n++] = (uint8_t)v; }
static void p16(buf *x, int v) { p8(x, (v >> 8) & 0xff); p8(x, v & 0xff); }
static void p32(buf *x, int32_t v) { for (int s = 24; s >= 0; s -= 8) p8(x, (int)(((uint32_t)v >> s) & 0xff)); }
static void p64(buf *x, int64_t v) { p32(x, (int32_t)((uint64_t)v >> 32)); p32(x, (int32_t)(uint64_t)v); }
static void pstr(buf *x, const char *s) { p16(x, (int)strlen(s)); memcpy(x->b + x->n, s, strlen(s)); x->n += strlen(s); }
static void pbytes(buf *x, const char *s) { p32(x, (int32_t)strlen(s)); memcpy(x->b + x->n, s, strlen(s)); x->n += strlen(s); }

static int call(int16_t key, int16_t v, const buf *x, slot *s)
{
	memset(s, 0, sizeof *s);
	hw_kw_init(&s->w, 0);
	hw_kr r;
	hw_kr_init(&r, x->b, x->n);
	hw_kafka_req_hdr h = { .api_key = key, .api_version = v, .client_id = { "cli", 3 } };
	return hw_group_api_handle(api, s, &h, &r, &s->w);
}

static void join_body(buf *x, const char *member, const char *sub)
{
	x->n = 0;
	pstr(x, "billing"); p32(x, 10000); p32(x, 60000); pstr(x, member); p16(x, -1);
	pstr(x, "consumer"); p32(x, 1); pstr(x, "range"); pbytes(x, sub);
}

/* JoinGroup v5 response: fields the test looks at. */
typedef struct jr {
	int16_t error;
	int32_t generation, n_members;
	char protocol[32], leader[128], member[128];
} jr;

static void parse_join(const slot *s, jr *o)
{
	hw_kr r;
	hw_kr_init(&r, s->w.buf, s->w.len);
	assert_int_equal(hw_kr_i32(&r), 0); /* throttle */
	o->error = hw_kr_i16(&r);
	o->generation = hw_kr_i32(&r);
	assert_true(hw_kstr_copy(hw_kr_str(&r), o->protocol, sizeof o->protocol) >= 0);
	assert_true(hw_kstr_copy(hw_kr_str(&r), o->leader, sizeof o->leader) >= 0);
	assert_true(hw_kstr_copy(hw_kr_str(&r), o->member, sizeof o->member) >= 0);
	o->n_members = hw_kr_array(&r);
	for (int32_t i = 0; i < o->n_members; i++) { hw_kr_str(&r); hw_kr_nstr(&r); hw_kr_nbytes(&r); }
	assert_int_equal(r.err, 0);
	assert_int_equal(hw_kr_left(&r), 0);
}

static void join2(const char *sub, slot *s, jr *o)
{
	buf x;
	join_body(&x, "", sub);
	assert_int_equal(call(11, 5, &x, s), 0);
	parse_join(s, o);
	assert_int_equal(o->error, HW_ERR_MEMBER_ID_REQUIRED);
	assert_int_equal(strncmp(o->member, "cli-", 4), 0); /* client.id + "-" + UUID, as Kafka */
	assert_int_equal(strlen(o->member), 4 + 36);
	char id[128];
	snprintf(id, sizeof id, "%s", o->member);
	hw_kw_free(&s->w);
	join_body(&x, id, sub);
	assert_int_equal(call(11, 5, &x, s), 1); /* waits for the rebalance */
}

static int16_t commit_v7(const char *member, int32_t gen, int64_t off)
{
	buf x = { .n = 0 };
	pstr(&x, "billing"); p32(&x, gen); pstr(&x, member); p16(&x, -1);
	p32(&x, 1); pstr(&x, "payments"); p32(&x, 2);
	p32(&x, 0); p64(&x, off); p32(&x, -1); pstr(&x, "m0");
	p32(&x, 1); p64(&x, off + 1); p32(&x, -1); p16(&x, -1);
	slot s;
	assert_int_equal(call(8, 7, &x, &s), 0); /* the in-memory log completes at once */
	hw_kr r;
	hw_kr_init(&r, s.w.buf, s.w.len);
	hw_kr_i32(&r);
	assert_int_equal(hw_kr_array(&r), 1);
	assert_true(hw_kstr_eq(hw_kr_str(&r), "payments"));
	assert_int_equal(hw_kr_array(&r), 2);
	assert_int_equal(hw_kr_i32(&r), 0);
	int16_t e0 = hw_kr_i16(&r);
	assert_int_equal(hw_kr_i32(&r), 1);
	assert_int_equal(hw_kr_i16(&r), e0);
	assert_int_equal(hw_kr_left(&r), 0);
	hw_kw_free(&s.w);
	return e0;
}

static int16_t heartbeat_v3(const char *member, int32_t gen)
{
	buf x = { .n = 0 };
	pstr(&x, "billing"); p32(&x, gen); pstr(&x, member); p16(&x, -1);
	slot s;
	assert_int_equal(call(12, 3, &x, &s), 0);
	hw_kr r;
	hw_kr_init(&r, s.w.buf, s.w.len);
	hw_kr_i32(&r);
	int16_t e = hw_kr_i16(&r);
	hw_kw_free(&s.w);
	return e;
}

/* DescribeGroups v4 of "billing" and an unknown group: billing's state,
 * protocol and members (client id, metadata, assignment) as Kafka's
 * GroupMetadata.summary; the unknown one is Dead and empty. Returns the
 * number of billing's members. */
static int32_t describe_v4(const char *state, const char *protocol, const char *const *meta,
			   const char *const *assign)
{
	buf x = { .n = 0 };
	p32(&x, 2); pstr(&x, "billing"); pstr(&x, "ghost"); p8(&x, 0);
	slot s;
	assert_int_equal(call(15, 4, &x, &s), 0);
	hw_kr r;
	hw_kr_init(&r, s.w.buf, s.w.len);
	assert_int_equal(hw_kr_i32(&r), 0);
	assert_int_equal(hw_kr_array(&r), 2);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	assert_true(hw_kstr_eq(hw_kr_str(&r), "billing"));
	assert_true(hw_kstr_eq(hw_kr_str(&r), state));
	assert_true(hw_kstr_eq(hw_kr_str(&r), "consumer"));
	assert_true(hw_kstr_eq(hw_kr_str(&r), protocol));
	int32_t n = hw_kr_array(&r);
	for (int32_t i = 0; i < n; i++) {
		assert_true(hw_kr_str(&r).len == 4 + 36);          /* cli-UUID */
		assert_int_equal(hw_kr_nstr(&r).len, -1);          /* group_instance_id */
		assert_true(hw_kstr_eq(hw_kr_str(&r), "cli"));     /* client_id */
		hw_kr_str(&r);                                     /* client_host */
		hw_kbytes md = hw_kr_nbytes(&r), as = hw_kr_nbytes(&r);
		assert_int_equal(md.len, (int32_t)strlen(meta[i]));
		assert_memory_equal(md.p, meta[i], strlen(meta[i]));
		assert_int_equal(as.len, (int32_t)strlen(assign[i]));
		assert_memory_equal(as.p, assign[i], strlen(assign[i]));
	}
	assert_int_equal(hw_kr_i32(&r), INT32_MIN);            /* authorized_operations */
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	assert_true(hw_kstr_eq(hw_kr_str(&r), "ghost"));
	assert_true(hw_kstr_eq(hw_kr_str(&r), "Dead"));
	assert_true(hw_kstr_eq(hw_kr_str(&r), ""));
	assert_true(hw_kstr_eq(hw_kr_str(&r), ""));
	assert_int_equal(hw_kr_array(&r), 0);
	assert_int_equal(hw_kr_i32(&r), INT32_MIN);
	assert_int_equal(r.err, 0);
	assert_int_equal(hw_kr_left(&r), 0);
	hw_kw_free(&s.w);
	return n;
}

static void test_two_consumers(void **state)
{
	(void)state;
	/* FindCoordinator v2 names the leader of the group's partition */
	buf x = { .n = 0 };
	pstr(&x, "billing"); p8(&x, 0);
	slot s;
	assert_int_equal(call(10, 2, &x, &s), 0);
	hw_kr r;
	hw_kr_init(&r, s.w.buf, s.w.len);
	hw_kr_i32(&r);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	hw_kr_nstr(&r);
	assert_int_equal(hw_kr_i32(&r), 100 + hw_gcoord_partition_of(co, "billing", 7));
	assert_true(hw_kstr_eq(hw_kr_str(&r), "127.0.0.1"));
	assert_int_equal(hw_kr_i32(&r), 19591);
	hw_kw_free(&s.w);

	slot ja, jb;
	jr a, b;
	join2("subA", &ja, &a);
	join2("subB", &jb, &b);
	assert_int_equal(ja.completed, 0);
	/* a new group waits group.initial.rebalance.delay.ms, twice as B came in the first */
	clk.ns += 6000LL * 1000000;
	hw_gcoord_tick(co);
	assert_int_equal(ja.completed, 1);
	assert_int_equal(jb.completed, 1);
	parse_join(&ja, &a);
	parse_join(&jb, &b);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_int_equal(a.generation, 1);
	assert_string_equal(a.protocol, "range");
	assert_string_equal(a.leader, a.member);
	assert_string_equal(b.leader, a.member);
	assert_int_equal(a.n_members, 2);
	assert_int_equal(b.n_members, 0);
	hw_kw_free(&ja.w);
	hw_kw_free(&jb.w);

	/* SyncGroup v3: B waits for the leader's assignment */
	slot sb, sa;
	x.n = 0;
	pstr(&x, "billing"); p32(&x, 1); pstr(&x, b.member); p16(&x, -1); p32(&x, 0);
	assert_int_equal(call(14, 3, &x, &sb), 1);
	x.n = 0;
	pstr(&x, "billing"); p32(&x, 1); pstr(&x, a.member); p16(&x, -1); p32(&x, 2);
	pstr(&x, a.member); pbytes(&x, "P0");
	pstr(&x, b.member); pbytes(&x, "P1");
	assert_int_equal(call(14, 3, &x, &sa), 0); /* written at once by the in-memory log */
	assert_int_equal(sb.completed, 1);
	hw_kr_init(&r, sb.w.buf, sb.w.len);
	hw_kr_i32(&r);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	hw_kbytes asg = hw_kr_nbytes(&r);
	assert_int_equal(asg.len, 2);
	assert_memory_equal(asg.p, "P1", 2);
	hw_kw_free(&sa.w);
	hw_kw_free(&sb.w);

	assert_int_equal(heartbeat_v3(a.member, 1), HW_ERR_NONE);
	/* DescribeGroups: Stable, with each member's subscription and assignment */
	const char *md2[2] = { "subA", "subB" }, *as2[2] = { "P0", "P1" };
	assert_int_equal(describe_v4("Stable", "range", md2, as2), 2);
	/* ListGroups v2: the group and its protocol type */
	x.n = 0;
	assert_int_equal(call(16, 2, &x, &s), 0);
	hw_kr_init(&r, s.w.buf, s.w.len);
	assert_int_equal(hw_kr_i32(&r), 0);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	assert_int_equal(hw_kr_array(&r), 1);
	assert_true(hw_kstr_eq(hw_kr_str(&r), "billing"));
	assert_true(hw_kstr_eq(hw_kr_str(&r), "consumer"));
	assert_int_equal(hw_kr_left(&r), 0);
	hw_kw_free(&s.w);
	assert_int_equal(commit_v7(b.member, 1, 40), HW_ERR_NONE);
	assert_int_equal(commit_v7(b.member, 0, 41), HW_ERR_ILLEGAL_GENERATION);
	assert_int_equal(commit_v7("nobody", 1, 41), HW_ERR_UNKNOWN_MEMBER_ID);

	/* OffsetFetch v5 of the listed partitions, metadata round-tripped */
	x.n = 0;
	pstr(&x, "billing"); p32(&x, 1); pstr(&x, "payments"); p32(&x, 3); p32(&x, 0); p32(&x, 1); p32(&x, 2);
	assert_int_equal(call(9, 5, &x, &s), 0);
	hw_kr_init(&r, s.w.buf, s.w.len);
	hw_kr_i32(&r);
	assert_int_equal(hw_kr_array(&r), 1);
	assert_true(hw_kstr_eq(hw_kr_str(&r), "payments"));
	assert_int_equal(hw_kr_array(&r), 3);
	int64_t want[3] = { 40, 41, -1 };
	const char *wmeta[3] = { "m0", "", "" };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hw_kr_i32(&r), i);
		assert_int_equal(hw_kr_i64(&r), want[i]);
		assert_int_equal(hw_kr_i32(&r), -1);
		assert_true(hw_kstr_eq(hw_kr_nstr(&r), wmeta[i]));
		assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	}
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	assert_int_equal(hw_kr_left(&r), 0);
	hw_kw_free(&s.w);
	/* v5 with topics null: every committed offset */
	x.n = 0;
	pstr(&x, "billing"); p32(&x, -1);
	assert_int_equal(call(9, 5, &x, &s), 0);
	hw_kr_init(&r, s.w.buf, s.w.len);
	hw_kr_i32(&r);
	assert_int_equal(hw_kr_array(&r), 1);
	hw_kr_str(&r);
	assert_int_equal(hw_kr_array(&r), 2);
	hw_kw_free(&s.w);

	/* LeaveGroup v3 of B: A's heartbeat says rebalance, A rejoins alone */
	x.n = 0;
	pstr(&x, "billing"); p32(&x, 1); pstr(&x, b.member); p16(&x, -1);
	assert_int_equal(call(13, 3, &x, &s), 0);
	hw_kr_init(&r, s.w.buf, s.w.len);
	hw_kr_i32(&r);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	assert_int_equal(hw_kr_array(&r), 1);
	hw_kr_str(&r); hw_kr_nstr(&r);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_NONE);
	hw_kw_free(&s.w);
	assert_int_equal(heartbeat_v3(a.member, 1), HW_ERR_REBALANCE_IN_PROGRESS);
	/* rebalancing: no protocol, no metadata, no assignment (Kafka's summaryNoMetadata) */
	const char *none[1] = { "" };
	assert_int_equal(describe_v4("PreparingRebalance", "", none, none), 1);
	join_body(&x, a.member, "subA");
	assert_int_equal(call(11, 5, &x, &ja), 0); /* every member left has rejoined */
	parse_join(&ja, &a);
	assert_int_equal(a.generation, 2);
	assert_int_equal(a.n_members, 1);
	hw_kw_free(&ja.w);
	assert_int_equal(heartbeat_v3(a.member, 2), HW_ERR_NONE);
	/* CompletingRebalance until the leader syncs: commits wait for that */
	assert_int_equal(commit_v7(a.member, 2, 50), HW_ERR_REBALANCE_IN_PROGRESS);
	x.n = 0;
	pstr(&x, "billing"); p32(&x, 2); pstr(&x, a.member); p16(&x, -1); p32(&x, 1);
	pstr(&x, a.member); pbytes(&x, "P0P1");
	assert_int_equal(call(14, 3, &x, &sa), 0);
	hw_kw_free(&sa.w);
	assert_int_equal(commit_v7(a.member, 2, 50), HW_ERR_NONE);
	assert_true(hw_group_api_get_stats(api)->pending_now == 0);
}

static void test_refused_requests(void **state)
{
	(void)state;
	buf x;
	join_body(&x, "", "s");
	slot s;
	assert_int_equal(call(11, HW_KG_JOIN_GROUP_MAX + 1, &x, &s), -EPROTONOSUPPORT); /* above the codec maximum */
	hw_kw_free(&s.w);
	x.n -= 1;
	assert_int_equal(call(11, 5, &x, &s), -EMSGSIZE);
	hw_kw_free(&s.w);
	assert_int_equal(call(3, 0, &x, &s), -ENOTSUP);
	hw_kw_free(&s.w);
	assert_true(hw_group_api_get_stats(api)->bad_requests == 3);
	/* a pending JoinGroup answered NOT_COORDINATOR when the partition moves */
	slot j;
	jr o;
	join2("s", &j, &o);
	hw_gcoord_unload(co, hw_gcoord_partition_of(co, "billing", 7));
	assert_int_equal(j.completed, 1);
	parse_join(&j, &o);
	assert_int_equal(o.error, HW_ERR_NOT_COORDINATOR);
	hw_kw_free(&j.w);
}

static void test_find_coordinator_creates_topic(void **state)
{
	(void)state;
	ops.coordinator = no_topic;
	hw_group_api_free(api);
	assert_int_equal(hw_group_api_create(co, &ops, NULL, &api), 0);
	buf x = { .n = 0 };
	pstr(&x, "billing");
	slot s;
	assert_int_equal(call(10, 0, &x, &s), 0);
	hw_kr r;
	hw_kr_init(&r, s.w.buf, s.w.len);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_COORDINATOR_NOT_AVAILABLE);
	assert_int_equal(ensure_calls, 1);
	hw_kw_free(&s.w);
	/* a transactional coordinator is refused */
	x.n = 0;
	pstr(&x, "txn-1"); p8(&x, 1);
	assert_int_equal(call(10, 1, &x, &s), 0);
	hw_kr_init(&r, s.w.buf, s.w.len);
	hw_kr_i32(&r);
	assert_int_equal(hw_kr_i16(&r), HW_ERR_COORDINATOR_NOT_AVAILABLE);
	assert_int_equal(ensure_calls, 1);
	hw_kw_free(&s.w);
	ops.coordinator = coord;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_consumers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_coordinator_creates_topic, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
