/* test_repl_corrupt.c — docs/security.md "Faults": a corrupt batch on the
 * leader (a byte flipped in its store, as a bad disk would) while a
 * follower lags behind it. Before: the follower refetched the same offset
 * at once, forever (~7500 fetches/s, no log line). Now the leader serves
 * the valid prefix, answers the corrupt batch CORRUPT_MESSAGE (counted),
 * the follower backs off replica.fetch.backoff.ms, and a consumer fetch at
 * that offset gets CORRUPT_MESSAGE too. And a follower's failed store no
 * longer holds its other partitions' fetches. Simulated network and clock
 * (tests/engine/repl/hx.h), seed from HW_TEST_SEED. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "hw_err.h"
#include "hw_memstore.h"
#include "hw_rm.h"
#include "hx.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;

static uint64_t metric(hx *h, int node, int m)
{
	hw_rm_part_info pi;
	hx_info(h, node, 0, &pi);
	return pi.metrics[m];
}

static void test_corrupt_batch_on_leader(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = g_seed, .memstore = 1 };
	hx *h = hx_create(&o);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 2000);
	hx_pause(h, 3, 1);                          /* the lagging follower */
	int nb = 8 + (int)(hx_rand(h) % 8), bad = 2 + (int)(hx_rand(h) % (uint64_t)(nb - 4));
	for (int i = 0; i < nb; i++) {
		uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 3 });
		hx_run_quiet(h, 1000);
		assert_non_null(hx_resp_get(h, c));
	}
	hw_store *ls = hx_store(h, 1, 0);
	assert_int_equal(hw_memstore_corrupt_batch(ls, (size_t)bad), 0);
	uint64_t sent0 = metric(h, 3, HW_PM_REPLICA_FETCH_SENT);
	hx_pause(h, 3, 0);
	int64_t t0 = hx_now(h);
	hx_run_until(h, t0 + 10000);                /* 10 s of virtual time */
	hw_rm_part_info pi;
	hx_info(h, 3, 0, &pi);
	/* the follower got everything before the corrupt batch, nothing after */
	assert_int_equal(pi.leo, (int64_t)bad * 3);
	uint64_t fetches = metric(h, 3, HW_PM_REPLICA_FETCH_SENT) - sent0;
	/* backing off 1 s per corrupt answer: about 10 in 10 s, not thousands
	 * (the fetch that came back with the prefix and one per backoff) */
	printf("# %d batches, batch %d corrupt: follower LEO %" PRId64 ", %llu fetches in 10 s, "
	       "leader counted %llu corrupt\n", nb, bad, pi.leo, (unsigned long long)fetches,
	       (unsigned long long)metric(h, 1, HW_PM_CORRUPT_BATCHES));
	assert_true(fetches <= 30);
	assert_true(metric(h, 1, HW_PM_CORRUPT_BATCHES) >= 5);
	assert_true(metric(h, 3, HW_PM_CORRUPT_BATCHES) == 0); /* the leader never sent it */
	/* once the stuck follower leaves the ISR (replica.lag.time.max.ms) the
	 * HW passes the corrupt batch; a consumer at its offset is told */
	hx_run_until(h, hx_now(h) + 40000);
	hx_info(h, 1, 0, &pi);
	assert_true(pi.hw > (int64_t)bad * 3);
	uint32_t c = hx_consume(h, 1, 0, (int64_t)bad * 3, 0);
	hx_run_quiet(h, 1000);
	const hx_resp *r = hx_resp_get(h, c);
	assert_non_null(r);
	assert_int_equal(r->error, HW_ERR_CORRUPT_MESSAGE);
	hx_destroy(h);
}

/* docs/logdirs.md: a follower's disk dies with writes in flight for one of
 * two partitions it fetches from the same leader. The failed partition's
 * writes never complete; before, they held the whole fetch session (no
 * fetch is sent while a partition of it has writes pending), so the healthy
 * partition stalled and its HW with it. Now the failed one leaves the
 * session (fetch state FAILED) and the other keeps replicating. */
static void test_failed_store_leaves_the_session(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = g_seed, .memstore = 1 };
	hx *h = hx_create(&o);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_ctl_create(h, 1, reps, 3, 2);
	hx_run_quiet(h, 2000);
	/* node 3's write of partition 0 is in flight when its disk dies */
	hw_store *dead = hx_store(h, 3, 0);
	hw_memstore_hold_durable(dead, 1);
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 3 });
	hx_run_quiet(h, 500);
	assert_non_null(hx_resp_get(h, c));
	hw_memstore_fail_writes(dead);
	int n = 5 + (int)(hx_rand(h) % 10);
	for (int i = 0; i < n; i++) {
		c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 1, .acks = -1, .nrec = 2 }); /* acks=all on the healthy partition */
		hx_run_quiet(h, 300);
		const hx_resp *r = hx_resp_get(h, c);
		assert_non_null(r);
		assert_int_equal(r->error, 0);
	}
	hx_run_quiet(h, 1000);
	hw_rm_part_info lead, f1, f0;
	hx_info(h, 1, 1, &lead);
	hx_info(h, 3, 1, &f1);
	hx_info(h, 3, 0, &f0);
	printf("# %d acks=all produces; node 3: partition 1 LEO %" PRId64 " of %" PRId64
	       ", partition 0 fetcher %s\n", n, f1.leo, lead.leo,
	       hw_fetcher_state_name(f0.fetcher_state));
	assert_int_equal(f1.leo, lead.leo);        /* the healthy partition kept replicating */
	assert_int_equal(lead.hw, lead.leo);
	assert_int_equal(f0.fetcher_state, HW_FETCHER_FAILED);
	hx_destroy(h);
}

int main(void)
{
	g_seed = hw_test_seed("repl_corrupt");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corrupt_batch_on_leader),
		cmocka_unit_test(test_failed_store_leaves_the_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
