/* test_repl_sendfail.c — regression tests for requests whose send the
 * transport refused (hw_net_send < 0, e.g. -EHOSTUNREACH while it has not
 * yet learnt the destination's address). Such a request never left: the
 * replica manager must not wait for its answer (re-send timeout) but retry
 * after the short send back-off (hw_rm.h send_retry_backoff_ms).
 *
 * One test per bug, each on the simulated network (tests/engine/repl/hx.h) with
 * a window, drawn from the seed, during which the destination is
 * unreachable:
 *  - a new follower's first FETCH (was: re-sent after
 *    fetch_request_timeout_ms, so the first acks=all took ~700 ms);
 *  - a new follower's first OffsetsForLeaderEpoch (same re-send timeout);
 *  - an AlterPartition (ISR shrink) to the controller (was: re-sent after
 *    alter.partition retry 1000 ms, the HW held by the dead follower).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "hw_logging.h"
#include "hw_rm.h"
#include "hx.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;

static uint64_t metric(hx *h, int node, int part, int m)
{
	hw_rm_part_info pi;
	hx_info(h, node, part, &pi);
	return pi.metrics[m];
}

/* The virtual time at which the response to corr arrived, running at most
 * until `limit`; -1 when it did not. */
static int64_t resp_time(hx *h, uint32_t corr, int64_t limit)
{
	while (!hx_resp_get(h, corr) && hx_now(h) < limit)
		hx_run_until(h, hx_now(h) + 1);
	const hx_resp *r = hx_resp_get(h, corr);
	if (!r)
		return -1;
	assert_int_equal(r->error, 0);
	return r->at_ms;
}

/* ---- a refused first FETCH ---------------------------------------------- */
static void test_fetch_send_refused(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = g_seed };
	hx *h = hx_create(&o);
	/* both followers cannot reach the leader for 1..5 ms after they learn
	 * they follow it (the transport learns the address a moment later) */
	int64_t window = 1 + (int64_t)(hx_rand(h) % 5);
	hx_net_unreachable(h, 2, 1, window);
	hx_net_unreachable(h, 3, 1, window);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2); /* delivered at t=0, leader first */
	hx_net_faults(h, 0, 0, 0, 1);    /* then every message takes 0..1 ms */
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 3 });
	int64_t t = resp_time(h, c, 2000);
	printf("# unreachable for %" PRId64 " ms, %" PRIu64 " sends refused, acks=all answered at %" PRId64
	       " ms\n", window, hx_net_refused(h), t);
	assert_true(hx_net_refused(h) >= 2); /* the scenario happened */
	assert_true(t >= window);
	/* retried within the short back-off (exponential from 1 ms: the last
	 * retry is at most ~window late), then a few 0..1 ms hops; not after
	 * the 700 ms fetch re-send timeout */
	assert_true(t <= 2 * window + 20);
	for (int f = 2; f <= 3; f++) {
		hw_rm_part_info pi;
		hx_info(h, f, 0, &pi);
		assert_int_equal(pi.leo, 3); /* both copied the batch (ISR = all three) */
		assert_true(pi.metrics[HW_PM_REPLICA_FETCH_SEND_FAILED] >= 1);
		assert_int_equal(pi.metrics[HW_PM_REPLICA_FETCH_RESENT], 0); /* no timeout re-send */
	}
	hx_destroy(h);
}

/* ---- a refused first OffsetsForLeaderEpoch ------------------------------ */
static void ofe_tweak(int node, hw_rm_config *c, void *arg)
{
	(void)node;
	(void)arg;
	c->truncate_via_offsets_for_epoch = 1;
}

static void test_ofe_send_refused(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 2, .seed = g_seed, .tweak = ofe_tweak };
	hx *h = hx_create(&o);
	const int reps[2] = { 1, 2 };
	hx_ctl_create(h, 0, reps, 2, 1);
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 2 });
	assert_true(resp_time(h, c, 3000) >= 0);
	hx_run_quiet(h, 100);
	/* node 2 takes over (epoch 1, it has leader epochs: the old leader
	 * will reconcile with OffsetsForLeaderEpoch), and node 1 cannot reach
	 * it for a while after it learns that. The controller moves the
	 * leadership by fencing node 1, so node 1 leaves the ISR: what is
	 * timed is when it has copied the new batch. */
	int64_t window = 1 + (int64_t)(hx_rand(h) % 5);
	int64_t t0 = hx_now(h);
	hx_net_unreachable(h, 1, 2, t0 + window);
	hx_ctl_fence(h, 1); /* the controller elects node 2 (epoch 1) */
	hx_ctl_unfence(h, 1);
	hx_net_faults(h, 0, 0, 0, 1);
	uint32_t c2 = hx_produce(h, &(hx_produce_req){ .node = 2, .part = 0, .acks = -1, .nrec = 2 });
	assert_true(resp_time(h, c2, t0 + 2000) >= 0);
	hw_rm_part_info pi;
	for (hx_info(h, 1, 0, &pi); pi.leo < 4 && hx_now(h) < t0 + 2000; hx_info(h, 1, 0, &pi))
		hx_run_until(h, hx_now(h) + 1);
	int64_t t = pi.leo == 4 ? hx_now(h) : -1;
	printf("# OffsetsForLeaderEpoch: unreachable for %" PRId64 " ms, %" PRIu64
	       " refused, the new batch copied %" PRId64 " ms after the election\n",
	       window, hx_net_refused(h), t < 0 ? -1 : t - t0);
	assert_true(t >= 0);
	assert_true(hx_net_refused(h) >= 1);
	assert_true(t - t0 <= 2 * window + 20);
	assert_true(metric(h, 1, 0, HW_PM_OFFSETS_FOR_EPOCH_SEND_FAILED) >= 1);
	hx_info(h, 1, 0, &pi);
	assert_int_equal(pi.leo, 4); /* reconciled (nothing to cut) and copied the new batch */
	assert_int_equal(pi.fetcher_state, HW_FETCHER_FETCHING);
	hx_destroy(h);
}

/* ---- a refused AlterPartition (ISR shrink) ------------------------------ */
static void alter_tweak(int node, hw_rm_config *c, void *arg)
{
	(void)node;
	(void)arg;
	c->replica_lag_time_max_ms = 200; /* ISR checks every 10 ms */
}

static void test_alter_send_refused(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = g_seed, .tweak = alter_tweak };
	hx *h = hx_create(&o);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 1 });
	assert_true(resp_time(h, c, 3000) >= 0);
	hx_run_quiet(h, 100);
	/* follower 3 dies; the leader's shrink proposal is refused for a
	 * while (no route to the controller) */
	hx_pause(h, 3, 1);
	int64_t t0 = hx_now(h);
	uint32_t c2 = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 1 });
	/* the shrink is proposed ~lag (200 ms) + one ISR check after t0 */
	int64_t window = 300 + (int64_t)(hx_rand(h) % 5);
	hx_net_unreachable(h, 1, HX_CTL, t0 + window);
	int64_t t = resp_time(h, c2, t0 + 3000);
	hw_rm_part_info pi;
	hx_info(h, 1, 0, &pi);
	printf("# AlterPartition: unreachable until +%" PRId64 " ms, %" PRIu64
	       " refused, acks=all answered %" PRId64 " ms after the follower died, isr n=%u\n",
	       window, hx_net_refused(h), t < 0 ? -1 : t - t0, pi.isr.n);
	assert_true(t >= 0);
	assert_true(hx_net_refused(h) >= 1); /* the proposal was refused at least once */
	assert_true(pi.metrics[HW_PM_ALTER_PARTITION_SEND_FAILED] >= 1);
	assert_int_equal(pi.isr.n, 2);
	/* answered when the shrink commits: shortly after the route appears,
	 * not alter retry (1000 ms) after the refused proposal */
	assert_true(t - t0 <= window + 2 * 10 + 40);
	hx_destroy(h);
}

int main(void)
{
	if (!getenv("HW_LOG"))
		hw_logging_configure("warn");
	g_seed = hw_test_seed("repl_sendfail");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fetch_send_refused),
		cmocka_unit_test(test_ofe_send_refused),
		cmocka_unit_test(test_alter_send_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
