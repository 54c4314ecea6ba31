/* test_repl_seeds.c — the worked scenarios of docs/scenarios.md, reproduced
 * on the harness with exact figures (the slow follower's HW, HW = min LEO,
 * acks=all against min ISR, the acks/min ISR table, the paused follower),
 * plus targeted scenarios (NotEnoughReplicasAfterAppend race, idempotent
 * retry, HW checkpoint, fenced fetch, divergent tail truncation, a late
 * answer to a restarted follower's previous process). Each
 * scenario prints its table; docs/scenarios.md shows what is asserted.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hx.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;

static const char *isr_str(const hw_idset *s, char *b, size_t n)
{
	size_t o = (size_t)snprintf(b, n, "[");
	for (int i = 0; i < s->n; i++)
		o += (size_t)snprintf(b + o, n - o, "%s%d", i ? "," : "", s->id[i]);
	snprintf(b + o, n - o, "]");
	return b;
}

static hx *mk(int nodes, void (*tweak)(int, hw_rm_config *, void *), void *arg)
{
	hx_opts o = { .nodes = nodes, .seed = g_seed, .tweak = tweak, .arg = arg };
	return hx_create(&o);
}

static void produce_ok(hx *h, int node, int part, int acks, int nrec)
{
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = node, .part = part, .acks = acks,
			.nrec = nrec });
	hx_run_quiet(h, 100);
	const hx_resp *r = hx_resp_get(h, c);
	if (acks != 0) {
		assert_non_null(r);
		assert_int_equal(r->error, 0);
	}
}

/* ---- docs/scenarios.md#slow-follower-holds-the-hw ---------------------- */
static void ex1_tweak(int node, hw_rm_config *c, void *arg)
{
	(void)arg;
	if (node == 3) {
		c->replica_fetch_max_bytes = 1;        /* one batch per fetch */
		c->replica_fetch_wait_max_ms = 60000;  /* parked until data */
		c->fetch_request_timeout_ms = 60000;
	}
}

static void test_slow_follower_holds_hw(void **state)
{
	(void)state;
	hx *h = mk(3, ex1_tweak, NULL);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 100);
	static const int64_t exp_slow[9] = { 100, 200, 210, 220, 230, 240, 250, 260, 270 };
	static const int64_t exp_hw[9] = { 100, 200, 210, 220, 230, 240, 250, 260, 900 };
	printf("slow follower (replica.lag.time.max.ms=30000, ISR check every 1500 ms)\n");
	for (int k = 0; k <= 8; k++) {
		int64_t now = (int64_t)k * 5000;
		hx_run_until(h, now);
		if (k == 2)
			hx_hold_to(h, 3, 1); /* its disk slows down: one batch per 5 s */
		for (int b = 0; b < 10; b++)
			hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 10 });
		hx_run_quiet(h, 50);
		if (k >= 2)
			hx_release_to(h, 3, 1);
		hx_run_quiet(h, 50);
		hw_rm_part_info l, s;
		hx_info(h, 1, 0, &l);
		hx_info(h, 3, 0, &s);
		char b[64];
		printf("t=%2" PRId64 "s leaderLEO=%3" PRId64 " slowLEO=%3" PRId64 " isr=%s HW=%" PRId64 "\n",
		       now / 1000, l.leo, s.leo, isr_str(&l.isr, b, sizeof(b)), l.hw);
		assert_int_equal(l.leo, 100 * (k + 1));
		assert_int_equal(s.leo, exp_slow[k]);
		assert_int_equal(l.isr.n, k == 8 ? 2 : 3);
		assert_int_equal(l.hw, exp_hw[k]);
	}
	hx_destroy(h);
}


/* ---- docs/scenarios.md#acksall-against-min-isr ------------------------- */
static void test_acks_all_against_min_isr(void **state)
{
	(void)state;
	hx *h = mk(3, NULL, NULL);
	int reps[3] = { 2, 3, 1 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 100);
	produce_ok(h, 2, 0, -1, 1); /* offsets 0 and 1, from earlier examples */
	produce_ok(h, 2, 0, -1, 1);
	hx_run_quiet(h, 100);
	/* brokers 1 and 3 killed: their sessions expire, the controller fences them */
	hx_isolate(h, 1, 1);
	hx_isolate(h, 3, 1);
	hx_ctl_fence(h, 1);
	hx_ctl_fence(h, 3);
	hx_run_quiet(h, 100);
	hw_rm_part_info l;
	char b1[32], b2[32];
	hx_info(h, 2, 0, &l);
	printf("acks=all against min ISR\nleader=%d isr=%s elr=%s (min.insync.replicas=%d)\n", l.leader,
	       isr_str(&l.isr, b1, sizeof(b1)), isr_str(&l.elr, b2, sizeof(b2)), l.min_insync_replicas);
	assert_int_equal(l.leader, 2);
	assert_int_equal(l.isr.n, 1);
	assert_int_equal(l.isr.id[0], 2);
	assert_int_equal(l.elr.n, 1);
	assert_int_equal(l.elr.id[0], 3);
	assert_int_equal(l.hw, 2);

	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 2, .part = 0, .acks = -1, .nrec = 1,
			.timeout_ms = 3000 });
	hx_run_quiet(h, 100);
	const hx_resp *r = hx_resp_get(h, c);
	assert_non_null(r);
	printf("acks=all -> %s\n", hw_err_name(r->error));
	assert_int_equal(r->error, HW_ERR_NOT_ENOUGH_REPLICAS);
	hx_info(h, 2, 0, &l);
	assert_int_equal(l.leo, 2); /* nothing written */

	c = hx_produce(h, &(hx_produce_req){ .node = 2, .part = 0, .acks = 1, .nrec = 1,
			.timeout_ms = 3000 });
	hx_run_quiet(h, 100);
	r = hx_resp_get(h, c);
	assert_non_null(r);
	printf("acks=1 -> stored at offset %" PRId64 "\n", r->base_offset);
	assert_int_equal(r->error, 0);
	assert_int_equal(r->base_offset, 2);

	c = hx_consume(h, 2, 0, 0, 0);
	hx_run_quiet(h, 100);
	r = hx_resp_get(h, c);
	printf("consumer from 0: offsets [%" PRId64 ", %" PRId64 ") hw %" PRId64 "\n", r->first_offset,
	       r->next_offset, r->hw);
	assert_int_equal(r->error, 0);
	assert_int_equal(r->first_offset, 0);
	assert_int_equal(r->next_offset, 2);
	c = hx_consume(h, 2, 0, 2, 0);
	hx_run_quiet(h, 100);
	r = hx_resp_get(h, c);
	printf("consumer from 2: %d records (offset 2 invisible, HW %" PRId64 ")\n", r->nrecords, r->hw);
	assert_int_equal(r->error, 0);
	assert_int_equal(r->nrecords, 0);

	/* broker 3 comes back: catches up, rejoins, the HW moves past offset 2 */
	hx_isolate(h, 3, 0);
	hx_ctl_unfence(h, 3);
	hx_run_until(h, hx_now(h) + 3000);
	hx_info(h, 2, 0, &l);
	printf("after broker 3 returns: isr=%s hw=%" PRId64 "\n", isr_str(&l.isr, b1, sizeof(b1)), l.hw);
	assert_int_equal(l.isr.n, 2);
	assert_int_equal(l.hw, 3);
	c = hx_consume(h, 2, 0, 2, 0);
	hx_run_quiet(h, 100);
	r = hx_resp_get(h, c);
	printf("consumer from 2: offsets [%" PRId64 ", %" PRId64 ")\n", r->first_offset, r->next_offset);
	assert_int_equal(r->first_offset, 2);
	assert_int_equal(r->next_offset, 3);
	hx_destroy(h);
}

/* ---- docs/scenarios.md#acks-and-min-isr-what-survives ------------------ */
static void test_acks_min_isr_table(void **state)
{
	(void)state;
	static const struct { int acks, min_isr, tolerated, copies; } rows[] = {
		{ 1, 1, 2, 1 }, { 1, 2, 2, 1 }, { 1, 3, 2, 1 },
		{ -1, 1, 2, 1 }, { -1, 2, 1, 2 }, { -1, 3, 0, 3 },
	};
	printf("acks and min ISR (RF 3)\n%-28s %-10s %s\n", "setting", "tolerated", "copies/acked");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int tolerated = -1, copies = 99;
		for (int k = 0; k <= 2; k++) {
			hx *h = mk(3, NULL, NULL);
			int reps[3] = { 1, 2, 3 };
			hx_ctl_create(h, 0, reps, 3, rows[i].min_isr);
			hx_run_quiet(h, 100);
			for (int f = 0; f < k; f++) { /* brokers 3, then 2 fail */
				hx_isolate(h, 3 - f, 1);
				hx_ctl_fence(h, 3 - f);
			}
			hx_run_quiet(h, 100);
			uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0,
					.acks = rows[i].acks, .nrec = 1, .timeout_ms = 3000 });
			hx_run_until(h, hx_now(h) + 4000);
			const hx_resp *r = hx_resp_get(h, c);
			assert_non_null(r);
			if (getenv("HX_DEBUG"))
				printf("  acks %d min %d k %d -> %s copies %d\n", rows[i].acks, rows[i].min_isr, k,
				       hw_err_name(r->error), r->copies_at_ack);
			if (r->error == 0 && tolerated == k - 1) {
				tolerated = k;
				if (r->copies_at_ack < copies)
					copies = r->copies_at_ack;
			}
			hx_destroy(h);
		}
		char set[64];
		if (rows[i].acks == 1)
			snprintf(set, sizeof(set), "acks=1, min.insync=%d", rows[i].min_isr);
		else
			snprintf(set, sizeof(set), "acks=all, min.insync=%d", rows[i].min_isr);
		printf("%-28s %-10d %d\n", set, tolerated, copies);
		assert_int_equal(tolerated, rows[i].tolerated);
		assert_int_equal(copies, rows[i].copies);
	}
}

/* ---- docs/scenarios.md#a-follower-pauses-and-comes-back ---------------- */
static void test_follower_pause_flow(void **state)
{
	(void)state;
	/* B3 keeps its session through the 40 s pause (broker.session.timeout.ms
	 * longer than it): what is shown is the leader's lag-based shrink; with
	 * Kafka's 9 s default the controller fences B3 first */
	hx_opts o = { .nodes = 3, .seed = g_seed, .session_timeout_ms = 60000 };
	hx *h = hx_create(&o);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 100);
	for (int i = 0; i < 5; i++)
		produce_ok(h, 1, 0, 1, 199); /* offsets 0..994 */
	hx_run_quiet(h, 100);
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 6 });
	hx_run_quiet(h, 100);
	const hx_resp *r = hx_resp_get(h, c);
	hw_rm_part_info l;
	hw_rm_stats st;
	char b[32];
	hx_info(h, 1, 0, &l);
	hw_rm_get_stats(hx_rm(h, 1), &st);
	printf("follower pause\nbatch 995..1000 acked=%s base=%" PRId64 " HW=%" PRId64
	       " (offset 1000 committed) isr=%s URP=%u\n", r ? hw_err_name(r->error) : "-",
	       r ? r->base_offset : -1, l.hw, isr_str(&l.isr, b, sizeof(b)), st.under_replicated);
	assert_non_null(r);
	assert_int_equal(r->error, 0);
	assert_int_equal(r->base_offset, 995);
	assert_int_equal(l.hw, 1001);
	assert_int_equal(st.under_replicated, 0);

	int64_t paused_at = hx_now(h);
	hx_pause(h, 3, 1); /* B3: long GC */
	int64_t shrunk_at = -1;
	uint32_t pending = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 1,
			.timeout_ms = 60000 });
	for (int64_t t = paused_at + 1000; t <= paused_at + 40000; t += 1000) {
		hx_run_until(h, t);
		hx_info(h, 1, 0, &l);
		if (l.isr.n == 2 && shrunk_at < 0)
			shrunk_at = t;
	}
	hw_rm_get_stats(hx_rm(h, 1), &st);
	hx_info(h, 1, 0, &l);
	printf("B3 paused at %" PRId64 " ms, ISR %s by %" PRId64 " ms (lag %" PRId64 " ms) URP=%u\n",
	       paused_at, isr_str(&l.isr, b, sizeof(b)), shrunk_at, shrunk_at - paused_at,
	       st.under_replicated);
	assert_true(shrunk_at > 0);
	assert_true(shrunk_at - paused_at <= 33000); /* within 10% of replica.lag.time.max.ms */
	assert_true(shrunk_at - paused_at >= 30000);
	assert_int_equal(l.isr.n, 2);
	assert_int_equal(st.under_replicated, 1);
	r = hx_resp_get(h, pending);
	assert_non_null(r);
	assert_int_equal(r->error, 0); /* acked on {B1,B2} once B3 left */
	c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 10 });
	hx_run_quiet(h, 100);
	r = hx_resp_get(h, c);
	assert_non_null(r);
	assert_int_equal(r->error, 0);
	assert_int_equal(r->copies_at_ack, 2);
	hx_info(h, 1, 0, &l);
	printf("writes continue on ISR %s: HW=%" PRId64 "\n", isr_str(&l.isr, b, sizeof(b)), l.hw);

	hx_pause(h, 3, 0);
	hx_run_until(h, hx_now(h) + 3000);
	hx_info(h, 1, 0, &l);
	hw_rm_get_stats(hx_rm(h, 1), &st);
	hw_rm_part_info f;
	hx_info(h, 3, 0, &f);
	printf("B3 resumed: LEO %" PRId64 " ISR %s HW=%" PRId64 " URP=%u\n", f.leo,
	       isr_str(&l.isr, b, sizeof(b)), l.hw, st.under_replicated);
	assert_int_equal(l.isr.n, 3);
	assert_int_equal(f.leo, l.leo);
	assert_int_equal(st.under_replicated, 0);
	assert_int_equal(l.metrics[HW_PM_ISR_SHRINKS], 1);
	assert_int_equal(l.metrics[HW_PM_ISR_EXPANDS], 1);
	hx_destroy(h);
}

/* ---- docs/scenarios.md#hw-is-the-minimum-leo --------------------------- */
static void ex6_tweak(int node, hw_rm_config *c, void *arg)
{
	(void)arg;
	if (node == 3) {
		c->replica_fetch_max_bytes = 1;
		c->fetch_request_timeout_ms = 60000;
	}
}

static void test_hw_is_min_leo(void **state)
{
	(void)state;
	hx *h = mk(3, ex6_tweak, NULL);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 100);
	produce_ok(h, 1, 0, -1, 3);
	hw_rm_part_info l, f2, f3;
	hx_info(h, 1, 0, &l);
	printf("HW = min LEO\nstart: LEO=%" PRId64 " HW=%" PRId64 "\n", l.leo, l.hw);
	assert_int_equal(l.leo, 3);
	assert_int_equal(l.hw, 3);
	hx_hold_to(h, 3, 1);
	hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 1 }); /* message 3 */
	hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 1 }); /* message 4 */
	hx_run_quiet(h, 100);
	hx_release_to(h, 3, 1);
	hx_run_quiet(h, 100);
	hx_info(h, 1, 0, &l);
	hx_info(h, 2, 0, &f2);
	hx_info(h, 3, 0, &f3);
	printf("leader LEO=%" PRId64 " F2 LEO=%" PRId64 " F3 LEO=%" PRId64 " -> HW=%" PRId64 "\n", l.leo,
	       f2.leo, f3.leo, l.hw);
	assert_int_equal(l.leo, 5);
	assert_int_equal(f2.leo, 5);
	assert_int_equal(f3.leo, 4);
	assert_int_equal(l.hw, 4);
	hx_release_to(h, 3, 1);
	hx_run_quiet(h, 100);
	hx_info(h, 1, 0, &l);
	hx_info(h, 3, 0, &f3);
	printf("F3 catches up: F3 LEO=%" PRId64 " -> HW=%" PRId64 "\n", f3.leo, l.hw);
	assert_int_equal(f3.leo, 5);
	assert_int_equal(l.hw, 5);
	hx_destroy(h);
}

/* ---- NotEnoughReplicasAfterAppend race (docs/scenarios.md#notenoughreplicasafterappend) */
static void test_neaa_race(void **state)
{
	(void)state;
	hx *h = mk(2, NULL, NULL);
	hx_net_faults(h, 0, 0, 10, 10);
	int reps[2] = { 1, 2 };
	hx_ctl_create(h, 0, reps, 2, 2);
	hx_run_until(h, 200);
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 1 });
	/* step until the follower has the record and its acknowledging fetch is
	 * in flight, then fence it: both messages arrive in the same step */
	for (int i = 0; i < 100; i++) {
		hx_run_until(h, hx_now(h) + 1);
		if (hx_store(h, 2, 0)->ops->log_end_offset(hx_store(h, 2, 0)) == 1)
			break;
	}
	hx_ctl_fence(h, 2);
	hx_run_until(h, hx_now(h) + 50);
	const hx_resp *r = hx_resp_get(h, c);
	hw_rm_part_info l;
	hx_info(h, 1, 0, &l);
	printf("NEAA race: hw=%" PRId64 " isr n=%d -> %s\n", l.hw, l.isr.n, r ? hw_err_name(r->error) : "-");
	assert_non_null(r);
	assert_int_equal(r->error, HW_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
	assert_int_equal(l.hw, 1);
	hx_destroy(h);
}

/* ---- idempotent producer ----------------------------------------------- */
static int16_t produce_pid(hx *h, int64_t pid, int16_t ep, int32_t seq, int n, int64_t *base)
{
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = n,
			.idem = &(hx_idem){ .pid = pid, .epoch = ep, .seq = seq } });
	hx_run_quiet(h, 200);
	const hx_resp *r = hx_resp_get(h, c);
	assert_non_null(r);
	*base = r->base_offset;
	return r->error;
}

static void test_idempotent_retry(void **state)
{
	(void)state;
	/* auto leader rebalance: node 1 leads again after its restart */
	hx_opts o = { .nodes = 3, .seed = g_seed, .rebalance_ms = 500 };
	hx *h = hx_create(&o);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 100);
	int64_t b;
	hw_rm_part_info l;
	assert_int_equal(produce_pid(h, 7, 0, 0, 5, &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(produce_pid(h, 7, 0, 5, 3, &b), 0);
	assert_int_equal(b, 5);
	assert_int_equal(produce_pid(h, 7, 0, 0, 5, &b), 0); /* retry of the first batch */
	hx_info(h, 1, 0, &l);
	printf("idempotent retry of seq 0..4 -> base %" PRId64 ", LEO %" PRId64 ", duplicates %" PRIu64 "\n",
	       b, l.leo, l.metrics[HW_PM_PRODUCE_DUPLICATES]);
	assert_int_equal(b, 0);
	assert_int_equal(l.leo, 8);
	assert_int_equal(l.metrics[HW_PM_PRODUCE_DUPLICATES], 1);
	assert_int_equal(produce_pid(h, 7, 0, 10, 1, &b), HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
	assert_int_equal(produce_pid(h, 7, 1, 3, 1, &b), HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
	assert_int_equal(produce_pid(h, 7, 1, 0, 4, &b), 0);
	assert_int_equal(b, 8);
	assert_int_equal(produce_pid(h, 7, 0, 8, 1, &b), HW_ERR_INVALID_PRODUCER_EPOCH);
	/* broker restart (a crash): the state is rebuilt from the log. The
	 * controller sees the new incarnation, moves leadership to node 2 and
	 * takes node 1 out of the ISR; node 1 catches up, rejoins and the
	 * preferred-leader rebalance gives it back the lead. */
	hx_restart(h, 1);
	hx_run_until(h, hx_now(h) + 1500);
	assert_int_equal(hx_ctl_leader(h, 0), 1);
	assert_true(hx_ctl_state(h, 0)->leader_epoch >= 2);
	assert_int_equal(produce_pid(h, 7, 1, 0, 4, &b), 0);
	hx_info(h, 1, 0, &l);
	printf("after restart, retry of epoch 1 seq 0..3 -> base %" PRId64 ", LEO %" PRId64 "\n", b, l.leo);
	assert_int_equal(b, 8);
	assert_int_equal(l.leo, 12);
	assert_int_equal(produce_pid(h, 7, 1, 5, 1, &b), HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
	assert_int_equal(produce_pid(h, 7, 1, 4, 1, &b), 0);
	assert_int_equal(b, 12);
	hx_destroy(h);
}

/* ---- HW checkpoint ------------------------------------------------------ */
/* Kafka restores a replica's HW from replication-offset-checkpoint on
 * restart. A follower that restarts cut off from the leader knows
 * its old HW from the checkpoint (real log); the in-memory store has no
 * checkpoint, so its HW starts at the log start. */
static void test_hw_checkpoint_restart(void **state)
{
	(void)state;
	hx *h = mk(3, NULL, NULL);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 100);
	for (int i = 0; i < 4; i++)
		produce_ok(h, 1, 0, -1, 5);
	hx_run_until(h, hx_now(h) + 1000); /* followers learn HW 20 */
	hw_rm_part_info f;
	hx_info(h, 2, 0, &f);
	assert_int_equal(f.hw, 20);
	hx_net_cut(h, 2, 1, 1); /* the controller still reaches it */
	hx_net_cut(h, 2, 3, 1);
	hx_restart(h, 2);
	hx_run_until(h, hx_now(h) + 200);
	hx_info(h, 2, 0, &f);
	printf("follower restarted while isolated: LEO %" PRId64 " HW %" PRId64 " (%s store)\n", f.leo, f.hw,
	       hx_uses_log(h) ? "log" : "memory");
	assert_int_equal(f.leo, 20);
	assert_int_equal(f.hw, hx_uses_log(h) ? 20 : 0);
	hx_destroy(h);
}

/* ---- fenced fetch -------------------------------------------------------- */
static void test_fenced_fetch(void **state)
{
	(void)state;
	hx *h = mk(3, NULL, NULL);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 100);
	hx_ctl_fence(h, 1); /* the controller moves leadership: node 2, epoch 1 */
	hx_ctl_unfence(h, 1);
	hx_run_quiet(h, 100);
	assert_int_equal(hx_ctl_leader(h, 0), 2);
	produce_ok(h, 2, 0, -1, 2);
	static const struct { int32_t cle; int16_t err; } cases[] = {
		{ 0, HW_ERR_FENCED_LEADER_EPOCH }, { 2, HW_ERR_UNKNOWN_LEADER_EPOCH }, { 1, 0 }, { -1, 0 },
	};
	for (size_t i = 0; i < 4; i++) {
		hw_fetch_part fp = { .tp = { 1, 0 }, .fetch_offset = 0, .current_leader_epoch = cases[i].cle,
				     .last_fetched_epoch = -1, .partition_max_bytes = 1 << 20 };
		hw_msg m = { .type = HW_MSG_FETCH, .src = 201, .dst = 2, .correlation_id = 77 + (uint32_t)i };
		m.u.fetch.replica_id = -1;
		m.u.fetch.max_wait_ms = 0;
		m.u.fetch.min_bytes = 1;
		m.u.fetch.max_bytes = 1 << 20;
		m.u.fetch.n_parts = 1;
		m.u.fetch.parts = &fp;
		hx_send_raw(h, &m);
		hx_run_quiet(h, 50);
		const hw_msg *resp = hx_last_to(h, 201, HW_MSG_FETCH_RESP);
		assert_non_null(resp);
		assert_int_equal(resp->correlation_id, 77 + i);
		assert_int_equal(resp->u.fetch_resp.n_parts, 1);
		printf("fetch with current_leader_epoch %d (leader epoch 1) -> %s\n", cases[i].cle,
		       hw_err_name(resp->u.fetch_resp.parts[0].error));
		assert_int_equal(resp->u.fetch_resp.parts[0].error, cases[i].err);
	}
	hx_destroy(h);
}

/* ---- divergent tail (docs/scenarios.md#a-divergent-tail-is-truncated) ---- */
static void ofe_tweak(int node, hw_rm_config *c, void *arg)
{
	(void)node;
	(void)arg;
	c->truncate_via_offsets_for_epoch = 1;
}

static void divergent_tail(int ofe)
{
	hx *h = mk(3, ofe ? ofe_tweak : NULL, NULL);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 100);
	for (int i = 0; i < 5; i++)
		produce_ok(h, 1, 0, -1, 1);
	hx_isolate(h, 1, 1);
	for (int i = 0; i < 3; i++) /* written on the old leader only: 5,6,7 */
		hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 1 });
	hx_run_quiet(h, 100);
	hx_ctl_fence(h, 1); /* node 2 leads, epoch 1 */
	hx_run_quiet(h, 100);
	assert_int_equal(hx_ctl_leader(h, 0), 2);
	for (int i = 0; i < 2; i++)
		produce_ok(h, 2, 0, -1, 1); /* new 5,6 under epoch 1 */
	hw_rm_part_info o;
	hx_info(h, 1, 0, &o);
	printf("divergent tail (%s)\nold leader before: LEO %" PRId64 " (epoch 0 up to 8)\n",
	       ofe ? "OffsetsForLeaderEpoch, KIP-101/279" : "DivergingEpoch on fetch, KIP-320", o.leo);
	assert_int_equal(o.leo, 8);
	hx_isolate(h, 1, 0);
	hx_ctl_unfence(h, 1);
	hx_run_until(h, hx_now(h) + 3000);
	hw_rm_part_info n;
	hx_info(h, 1, 0, &o);
	hx_info(h, 2, 0, &n);
	printf("old leader after: role %s LEO %" PRId64 " truncations %" PRIu64 ", leader LEO %" PRId64 "\n",
	       hw_part_role_name(o.role), o.leo, o.metrics[HW_PM_TRUNCATIONS], n.leo);
	assert_int_equal(o.role, HW_PART_FOLLOWER);
	assert_int_equal(o.metrics[HW_PM_TRUNCATIONS], 1);
	assert_int_equal(o.leo, 7);
	assert_int_equal(n.leo, 7);
	size_t la, lc;
	uint8_t *da = hx_read_all(h, 1, 0, INT64_MAX, &la), *dc = hx_read_all(h, 2, 0, INT64_MAX, &lc);
	assert_int_equal(la, lc);
	assert_memory_equal(da, dc, la);
	free(da);
	free(dc);
	hw_store *a = hx_store(h, 1, 0);
	const hw_epoch_cache *ec = a->ops->epochs(a);
	assert_int_equal(ec->n, 2);
	assert_int_equal(ec->v[1].epoch, 1);
	assert_int_equal(ec->v[1].start_offset, 5);
	assert_int_equal(o.fetcher_state, HW_FETCHER_FETCHING);
	hx_destroy(h);
}

static void test_divergent_tail(void **state)
{
	(void)state;
	divergent_tail(0);
}

static void test_divergent_tail_ofe(void **state)
{
	(void)state;
	divergent_tail(1);
}

/* ---- docs/scenarios.md#a-late-answer-to-the-previous-process ------------ */
static void late_tweak(int node, hw_rm_config *c, void *arg)
{
	(void)node;
	(void)arg;
	c->replica_fetch_wait_max_ms = 100; /* idle fetches every 100 ms */
	c->fetch_request_timeout_ms = 300;  /* an unanswered one re-sent after 300 */
}

static void test_late_answer_after_restart(void **state)
{
	(void)state;
	hx *h = mk(3, late_tweak, NULL);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 100);
	for (int i = 0; i < 5; i++)
		produce_ok(h, 1, 0, -1, 1);
	hx_isolate(h, 1, 1);
	for (int i = 0; i < 3; i++) /* 5,6,7 at epoch 0 on the old leader only */
		hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 1 });
	hx_run_quiet(h, 100);
	hx_ctl_fence(h, 1); /* node 2 leads, epoch 1 */
	hx_run_quiet(h, 100);
	assert_int_equal(hx_ctl_leader(h, 0), 2);
	for (int i = 0; i < 2; i++)
		produce_ok(h, 2, 0, -1, 1); /* new 5,6 under epoch 1 */
	/* Broker 1 comes back, its fetches (offset 8, last fetched epoch 0)
	 * are answered "epoch 0 ends at 5" — and those answers are late: held
	 * while it re-sends every 300 ms for 30 s, then it crashes. */
	hx_hold_to(h, 1, 1);
	hx_isolate(h, 1, 0);
	hx_ctl_unfence(h, 1);
	hx_run_until(h, hx_now(h) + 30000);
	hw_rm_part_info o;
	hx_info(h, 1, 0, &o);
	assert_int_equal(o.leo, 8); /* nothing answered yet */
	hx_restart(h, 1);
	/* The new process truncates and refetches with answers of its own and
	 * rejoins the ISR; more records are committed with it. 5 s after the
	 * restart it has sent ~50 fetches: had its correlation ids started
	 * from 1 again, the one in flight would carry an id that one of the
	 * held answers (ids of the old process's ~100 fetches) carries too. */
	hx_hold_keep(h, 1);
	hx_run_until(h, hx_now(h) + 3000);
	for (int i = 0; i < 3; i++)
		produce_ok(h, 2, 0, -1, 1);
	hx_run_until(h, hx_now(h) + 2000);
	hw_rm_part_info l;
	hx_info(h, 2, 0, &l);
	hx_info(h, 1, 0, &o);
	assert_int_equal(l.role, HW_PART_LEADER);
	assert_true(hw_idset_has(&l.isr, 1));
	assert_int_equal(l.hw, 10);
	assert_int_equal(o.leo, 10);
	uint64_t truncs = o.metrics[HW_PM_TRUNCATIONS];
	/* Now the old process's answers arrive: none answers a request of the
	 * new one, so nothing is truncated and broker 1 keeps every record the
	 * leader counted for its HW. */
	int late = hx_release_to(h, 1, 1 << 20);
	hx_info(h, 2, 0, &l);
	hx_info(h, 1, 0, &o);
	printf("late answer to the previous process\n%d diverging answers to the crashed process delivered "
	       "to the new one: its LEO %" PRId64 " (truncations %" PRIu64 " -> %" PRIu64 "), leader HW %" PRId64
	       "\n", late, o.leo, truncs, o.metrics[HW_PM_TRUNCATIONS], l.hw);
	assert_true(late >= 50);
	assert_true(hw_idset_has(&l.isr, 1));
	assert_int_equal(o.metrics[HW_PM_TRUNCATIONS], truncs);
	assert_true(o.leo >= l.hw);
	hx_run_until(h, hx_now(h) + 3000);
	size_t la, lc;
	uint8_t *da = hx_read_all(h, 1, 0, INT64_MAX, &la), *dc = hx_read_all(h, 2, 0, INT64_MAX, &lc);
	assert_int_equal(la, lc);
	assert_memory_equal(da, dc, la);
	free(da);
	free(dc);
	hx_destroy(h);
}

int main(void)
{
	if (!getenv("HW_LOG"))
		hw_logging_configure("warn");
	const char *st = getenv("HX_STORE");
	int log = st && strcmp(st, "log") == 0;
	printf("store: %s\n", log ? "hw_log (io_uring, temp dir)" : "memstore");
	g_seed = hw_test_seed(log ? "repl_seeds_log" : "repl_seeds");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_follower_holds_hw),
		cmocka_unit_test(test_acks_all_against_min_isr),
		cmocka_unit_test(test_acks_min_isr_table),
		cmocka_unit_test(test_follower_pause_flow),
		cmocka_unit_test(test_hw_is_min_leo),
		cmocka_unit_test(test_neaa_race),
		cmocka_unit_test(test_hw_checkpoint_restart),
		cmocka_unit_test(test_idempotent_retry),
		cmocka_unit_test(test_fenced_fetch),
		cmocka_unit_test(test_divergent_tail),
		cmocka_unit_test(test_divergent_tail_ofe),
		cmocka_unit_test(test_late_answer_after_restart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
