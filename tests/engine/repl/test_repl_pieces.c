/* test_repl_pieces.c — docs/wire.md#batch-pieces on the replication path:
 * fetch responses travel as real wire frames of 700 bytes (hx_opts
 * .wire_frame), so every batch of ~3 KB reaches the followers as batch
 * pieces, over a network that drops 5%, duplicates 3% and reorders the
 * frames (0..2 ms of delay each).
 * Checked: no acks=all produce is acknowledged before the HW passed it (at
 * least half are: a lost request is not retried here); the followers
 * assembled every batch and left pieces unused (repeats, and batches not at
 * their LEO after a loss, refetched from the same offset); in the end all three logs are byte-identical (no
 * partial batch was ever appended) and the HW is the LEO everywhere.
 * Simulated network and clock (tests/engine/repl/hx.h), seed from HW_TEST_SEED. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_err.h"
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

static void test_pieces_with_loss(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = g_seed, .wire_frame = 700 };
	hx *h = hx_create(&o);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 2000);
	hx_net_faults(h, 5, 3, 0, 2);   /* 5% lost, 3% repeated, 0..2 ms: reordered */
	enum { NB = 30, NREC = 200 };
	uint32_t corr[NB];
	for (int i = 0; i < NB; i++) {
		corr[i] = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = NREC });
		hx_run_until(h, hx_now(h) + 20);
	}
	hx_run_until(h, hx_now(h) + 20000);
	hx_net_faults(h, 0, 0, 0, 0);
	hx_run_quiet(h, 20000);
	int acked = 0;
	for (int i = 0; i < NB; i++) {
		const hx_resp *r = hx_resp_get(h, corr[i]);
		if (r && r->error == HW_ERR_NONE)
			acked++;
	}
	hx_stats st;
	hx_get_stats(h, &st);
	hw_rm_part_info pi;
	hx_info(h, 1, 0, &pi);
	uint64_t asm2 = metric(h, 2, HW_PM_BATCHES_ASSEMBLED), asm3 = metric(h, 3, HW_PM_BATCHES_ASSEMBLED);
	uint64_t drop = metric(h, 2, HW_PM_BATCH_PIECES_DROPPED) + metric(h, 3, HW_PM_BATCH_PIECES_DROPPED);
	printf("# %d of %d acks=all produces acknowledged; leader LEO %" PRId64 " HW %" PRId64
	       "; followers assembled %llu and %llu batches, dropped %llu pieces; %llu of %llu frames lost\n",
	       acked, NB, pi.leo, pi.hw, (unsigned long long)asm2, (unsigned long long)asm3,
	       (unsigned long long)drop, (unsigned long long)st.dropped, (unsigned long long)st.sent);
	for (int n = 2; n <= 3; n++) {
		hw_rm_part_info fi;
		hx_info(h, n, 0, &fi);
		printf("# follower %d: LEO %" PRId64 " HW %" PRId64 ", corrupt %llu, fetch errors %llu, fetches %llu\n", n,
		       fi.leo, fi.hw, (unsigned long long)fi.metrics[HW_PM_CORRUPT_BATCHES],
		       (unsigned long long)fi.metrics[HW_PM_FETCH_ERRORS],
		       (unsigned long long)fi.metrics[HW_PM_REPLICA_FETCH_SENT]);
	}
	assert_int_equal(st.ack_violations, 0);
	assert_true(acked >= NB / 2);                     /* the client does not retry here */
	assert_true(asm2 >= (uint64_t)acked && asm3 >= (uint64_t)acked);
	assert_true(drop > 0);                            /* losses were seen, and healed */
	size_t l1, l2, l3;
	uint8_t *b1 = hx_read_all(h, 1, 0, pi.leo, &l1);
	uint8_t *b2 = hx_read_all(h, 2, 0, pi.leo, &l2);
	uint8_t *b3 = hx_read_all(h, 3, 0, pi.leo, &l3);
	assert_true(l1 > (size_t)acked * NREC * 8);
	assert_int_equal(l1, l2);
	assert_int_equal(l1, l3);
	assert_memory_equal(b1, b2, l1);
	assert_memory_equal(b1, b3, l1);
	for (int n = 1; n <= 3; n++) {
		hx_info(h, n, 0, &pi);
		assert_int_equal(pi.hw, pi.leo);
	}
	free(b1);
	free(b2);
	free(b3);
	hx_destroy(h);
}

int main(void)
{
	g_seed = hw_test_seed("repl_pieces");
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_pieces_with_loss),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
