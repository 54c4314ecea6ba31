/* test_repl_elr.c — docs/scenarios.md "Isr 2, Elr 3: which broker leads
 * next" and "Every replica down", with data, in the harness on the real
 * controller: brokers are
 * fenced by missed sessions, stop by controlled shutdown or crash, and the
 * controller elects from the ELR; every acknowledged record is on the new
 * leader.
 *
 * RF 3 on brokers [2,3,1], min.insync.replicas 2, leader 2. Broker 1 dies
 * (ISR [2,3]); broker 3 stops (ISR [2], ELR [3]); broker 2 dies (ISR [],
 * ELR [2,3], no leader); broker 3 starts again:
 *   - clean stop: it kept its ELR place and leads (ISR [3], ELR [2]);
 *   - crash: it loses its ELR place at registration, the partition stays
 *     offline (ELR [2]) until broker 2's process comes back and is elected
 *     from the ELR; if broker 2 crashed too, ISR and ELR are empty and the
 *     controller elects broker 2 as the last known leader (unclean, leader
 *     recovery state RECOVERING) — still without losing a record here.
 * Then every broker returns and the ISR is whole again.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_ctrl.h"
#include "hw_logging.h"
#include "hw_rm.h"
#include "hx.h"
#include "../../support/hw_test.h"

#define SESSION_MS 1000

static uint64_t g_seed;

static void acked_all(hx *h, int node, int nrec)
{
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = node, .part = 0, .acks = -1, .nrec = nrec });
	hx_run_until(h, hx_now(h) + 200);
	const hx_resp *r = hx_resp_get(h, c);
	assert_non_null(r);
	assert_int_equal(r->error, 0);
}

/* A broker whose process is gone: no heartbeats, no fetches; fenced once
 * its session expires. */
static void dies(hx *h, int node)
{
	hx_pause(h, node, 1);
	hx_run_until(h, hx_now(h) + SESSION_MS + 500);
	assert_int_equal(hx_ctl_broker_state(h, node), HW_CTRL_BROKER_FENCED);
}

static void expect(hx *h, int leader, const char *isr, const char *elr)
{
	const hw_partition_state *s = hx_ctl_state(h, 0);
	char bi[32], be[32];
	hw_ctrl_idset_str(&s->isr, bi, sizeof(bi));
	hw_ctrl_idset_str(&s->elr, be, sizeof(be));
	printf("  leader %d isr %s elr %s (leader epoch %d)\n", s->leader, bi, be, s->leader_epoch);
	assert_int_equal(s->leader, leader);
	assert_string_equal(bi, isr);
	assert_string_equal(be, elr);
}

static void isr2_elr3(int clean, int two_crashed)
{
	hx_opts o = { .nodes = 3, .seed = g_seed, .heartbeat_interval_ms = 250, .session_timeout_ms = SESSION_MS };
	hx *h = hx_create(&o);
	const int reps[3] = { 2, 3, 1 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_until(h, 100);
	printf("Isr 2, Elr 3 (broker 3 stops %s%s)\n", clean ? "cleanly" : "by crashing",
	       two_crashed ? ", broker 2 crashed too" : "");
	acked_all(h, 2, 5);
	dies(h, 1);
	expect(h, 2, "[2,3]", "[]");
	acked_all(h, 2, 3); /* offsets 5..7 on {2,3}: at the minimum */
	size_t ref_len;
	uint8_t *ref = hx_read_all(h, 2, 0, INT64_MAX, &ref_len);
	if (clean) {
		hx_ctl_shutdown(h, 3, 1);
		hx_run_until(h, hx_now(h) + 1000);
		assert_int_equal(hx_ctl_broker_state(h, 3), HW_CTRL_BROKER_FENCED);
	} else {
		dies(h, 3);
	}
	expect(h, 2, "[2]", "[3]");
	dies(h, 2);
	expect(h, -1, "[]", "[2,3]");
	uint64_t elr0 = hw_ctrl_counter_get(hx_ctl(h), HW_CTRL_C_ELECTIONS_ELR);
	int leader;
	if (clean) {
		hx_pause(h, 3, 0); /* restarts, registers with its last epoch */
		hx_run_until(h, hx_now(h) + 1000);
		expect(h, 3, "[3]", "[2]");
		leader = 3;
	} else {
		hx_restart(h, 3); /* a new incarnation, no clean-shutdown epoch */
		hx_pause(h, 3, 0);
		hx_run_until(h, hx_now(h) + 1000);
		expect(h, -1, "[]", "[2]");
		const hw_partition_state *st = hx_ctl_state(h, 0);
		assert_int_equal(st->last_known_elr.n, 1);
		assert_int_equal(st->last_known_elr.id[0], 2);
		if (two_crashed)
			hx_restart(h, 2); /* loses its ELR place too: ISR and ELR empty */
		hx_pause(h, 2, 0); /* else broker 2's process survived: same epoch */
		hx_run_until(h, hx_now(h) + 1000);
		/* from the ELR, or as the last known leader (unclean) */
		expect(h, 2, "[2,3]", "[]"); /* 3 caught up meanwhile */
		leader = 2;
	}
	assert_int_equal(hw_ctrl_counter_get(hx_ctl(h), HW_CTRL_C_ELECTIONS_ELR), elr0 + !two_crashed);
	assert_int_equal(hw_ctrl_counter_get(hx_ctl(h), HW_CTRL_C_ELECTIONS_UNCLEAN), (uint64_t)two_crashed);
	/* no acknowledged record lost: the new leader has all eight */
	size_t len;
	uint8_t *d = hx_read_all(h, leader, 0, INT64_MAX, &len);
	printf("  new leader %d holds %zu of the %zu acknowledged bytes\n", leader, len < ref_len ? len : ref_len,
	       ref_len);
	assert_true(len >= ref_len);
	assert_memory_equal(d, ref, ref_len);
	for (int n = 1; n <= 3; n++)
		hx_pause(h, n, 0); /* the others come back */
	hx_run_until(h, hx_now(h) + 3000);
	expect(h, leader, "[2,3,1]", "[]");
	acked_all(h, leader, 1);
	free(d);
	free(ref);
	hx_destroy(h);
}

/* docs/scenarios.md "Every replica down": RF 3 on [1,2,3], min ISR 2.
 * Follower 3 dies; 10 records are committed by [1,2]; then 2 and the
 * leader 1 crash. 3 comes back first: offline. With unclean election
 * turned on at runtime 3 leads at once (unclean, RECOVERING) and exactly
 * the 10 records it never had are lost when 1 and 2 truncate to it; with
 * it off, 1 and 2 return and the last known leader 1 leads with every
 * acknowledged record. */
static void all_down(int unclean)
{
	hx_opts o = { .nodes = 3, .seed = g_seed, .heartbeat_interval_ms = 250, .session_timeout_ms = SESSION_MS };
	hx *h = hx_create(&o);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_until(h, 100);
	printf("every replica down, unclean.leader.election.enable=%s\n", unclean ? "true (at runtime)" : "false");
	acked_all(h, 1, 5);
	dies(h, 3);
	acked_all(h, 1, 10); /* offsets 5..14: committed by [1,2] only */
	expect(h, 1, "[1,2]", "[]");
	dies(h, 2);
	dies(h, 1);
	expect(h, -1, "[]", "[1,2]");
	hx_restart(h, 3); /* the stale replica comes back first */
	hx_pause(h, 3, 0);
	hx_run_until(h, hx_now(h) + 3000);
	expect(h, -1, "[]", "[1,2]"); /* offline while only 3 is up */
	uint64_t u0 = hw_ctrl_counter_get(hx_ctl(h), HW_CTRL_C_ELECTIONS_UNCLEAN);
	hw_rm_part_info l;
	if (unclean) {
		assert_int_equal(hx_ctl_set_config(h, 0, "unclean.leader.election.enable", "true"), 0);
		expect(h, 3, "[3]", "[]");
		assert_int_equal(hx_ctl_state(h, 0)->leader_recovery_state, HW_LRS_RECOVERING);
		assert_int_equal(hw_ctrl_counter_get(hx_ctl(h), HW_CTRL_C_ELECTIONS_UNCLEAN), u0 + 1);
		hx_run_until(h, hx_now(h) + 200);
		uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 3, .part = 0, .acks = 1, .nrec = 2 });
		hx_run_until(h, hx_now(h) + 200);
		assert_non_null(hx_resp_get(h, c));
		assert_int_equal(hx_resp_get(h, c)->error, 0);
	}
	for (int n = 1; n <= 2; n++) {
		hx_restart(h, n);
		hx_pause(h, n, 0);
	}
	hx_run_until(h, hx_now(h) + 3000);
	int leader = unclean ? 3 : 1;
	expect(h, leader, "[1,2,3]", "[]");
	if (!unclean)
		assert_int_equal(hw_ctrl_counter_get(hx_ctl(h), HW_CTRL_C_ELECTIONS_UNCLEAN), u0 + 1); /* last known leader */
	hx_info(h, leader, 0, &l);
	printf("  leader %d LEO %" PRId64 ": %s\n", leader, l.leo,
	       unclean ? "the 10 records 3 never had are gone" : "every acknowledged record kept");
	assert_int_equal(l.leo, unclean ? 5 + 2 : 15);
	size_t ll;
	uint8_t *ld = hx_read_all(h, leader, 0, INT64_MAX, &ll);
	for (int n = 1; n <= 3; n++) {
		size_t nl;
		uint8_t *nd = hx_read_all(h, n, 0, INT64_MAX, &nl);
		assert_int_equal(nl, ll);
		assert_memory_equal(nd, ld, ll);
		free(nd);
	}
	free(ld);
	hx_destroy(h);
}

static void test_all_down_unclean_off(void **state)
{
	(void)state;
	all_down(0);
}

static void test_all_down_unclean_on(void **state)
{
	(void)state;
	all_down(1);
}

static void test_isr2_elr3_clean(void **state)
{
	(void)state;
	isr2_elr3(1, 0);
}

static void test_isr2_elr3_crash(void **state)
{
	(void)state;
	isr2_elr3(0, 0);
}

static void test_isr2_elr3_both_crash(void **state)
{
	(void)state;
	isr2_elr3(0, 1);
}

int main(void)
{
	if (!getenv("HW_LOG"))
		hw_logging_configure("error");
	g_seed = hw_test_seed("repl_elr");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isr2_elr3_clean),
		cmocka_unit_test(test_isr2_elr3_crash),
		cmocka_unit_test(test_isr2_elr3_both_crash),
		cmocka_unit_test(test_all_down_unclean_off),
		cmocka_unit_test(test_all_down_unclean_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
