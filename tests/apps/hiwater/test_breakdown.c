/* test_breakdown.c — the stage arithmetic of `bench --breakdown`
 * (docs/breakdown.md): the leader's stamps cut into stages that add up to its
 * residence time, stale or out-of-order stamps give zero stages (never
 * negative ones), the follower's reported turnaround is capped by the round
 * trip it is part of, the client's split of its round trip, and the "at p50"
 * band whose stages add up to the median records' latency. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "hw_bench_breakdown.h"
#include "hw_ptiming.h"

static uint64_t sum(const hw_produce_timing *t) { return hw_pt_total_ns(t); }

/* A follower is critical: every stage is the difference of its stamps. */
static void test_follower_path(void **st)
{
	(void)st;
	hw_pt_stamps s = { .rx_ns = 1000, .start_ns = 1300, .appended_ns = 2300,
			   .mv = { .resp_begin_ns = 4300, .resp_sent_ns = 7300, .fetch_rx_ns = 40300, .turn_write_ns = 5000,
				   .turn_send_ns = 200, .hw_ns = 41300, .critical = 2 },
			   .done_ns = 41800 };
	hw_produce_timing t;
	hw_pt_compute(&s, &t);
	assert_int_equal(t.stage_ns[HW_PT_QUEUE], 300);
	assert_int_equal(t.stage_ns[HW_PT_APPEND], 1000);
	assert_int_equal(t.stage_ns[HW_PT_LEADER_WRITE], 0);
	assert_int_equal(t.stage_ns[HW_PT_DISPATCH_WAIT], 2000);
	assert_int_equal(t.stage_ns[HW_PT_DISPATCH_SEND], 3000);
	assert_int_equal(t.stage_ns[HW_PT_FOLLOWER_WRITE], 5000);
	assert_int_equal(t.stage_ns[HW_PT_FOLLOWER_SEND], 200);
	assert_int_equal(t.stage_ns[HW_PT_FOLLOWER_NET], 33000 - 5200);
	assert_int_equal(t.stage_ns[HW_PT_HW_ADVANCE], 1000);
	assert_int_equal(t.stage_ns[HW_PT_RESPOND], 500);
	assert_int_equal(t.critical, 2);
	assert_int_equal(sum(&t), 41800 - 1000);
}

/* The leader's own write completed last: its wait is one stage, the
 * follower rows are 0, the total is unchanged. */
static void test_leader_write_path(void **st)
{
	(void)st;
	hw_pt_stamps s = { .rx_ns = 0, .start_ns = 10, .appended_ns = 110,
			   .mv = { .hw_ns = 9110, .critical = -1 }, .done_ns = 9300 };
	hw_produce_timing t;
	hw_pt_compute(&s, &t);
	assert_int_equal(t.stage_ns[HW_PT_LEADER_WRITE], 9000);
	assert_int_equal(t.stage_ns[HW_PT_DISPATCH_WAIT] + t.stage_ns[HW_PT_DISPATCH_SEND] +
				 t.stage_ns[HW_PT_FOLLOWER_NET] +
				 t.stage_ns[HW_PT_FOLLOWER_WRITE] + t.stage_ns[HW_PT_HW_ADVANCE],
			 0);
	assert_int_equal(t.stage_ns[HW_PT_RESPOND], 190);
	assert_int_equal(t.critical, -1);
	assert_int_equal(sum(&t), 9300);
}

/* Stamps out of order (a response stamp from before the append, a HW move
 * recorded before the fetch, a turnaround longer than the round trip): each
 * stage is >= 0 and the stages still add up to done - rx. */
static void test_clamped(void **st)
{
	(void)st;
	hw_pt_stamps s = { .rx_ns = 500, .start_ns = 400 /* before rx */, .appended_ns = 900,
			   .mv = { .resp_begin_ns = 50, .resp_sent_ns = 100 /* stale */, .fetch_rx_ns = 3000,
				   .turn_write_ns = 1500, .turn_send_ns = 1500 /* > what is left */,
				   .hw_ns = 2500 /* before the fetch */, .critical = 1 },
			   .done_ns = 2600 };
	hw_produce_timing t;
	hw_pt_compute(&s, &t);
	for (int i = 0; i < HW_PT__COUNT; i++)
		assert_true(t.stage_ns[i] <= 2600);
	assert_int_equal(t.stage_ns[HW_PT_QUEUE], 0);
	assert_int_equal(t.stage_ns[HW_PT_DISPATCH_WAIT], 0);       /* begin, sent clamped to appended */
	assert_int_equal(t.stage_ns[HW_PT_DISPATCH_SEND], 0);
	/* fetch_rx clamped to hw: round trip 900..2500 = 1600, write 1500, send the 100 left */
	assert_int_equal(t.stage_ns[HW_PT_FOLLOWER_WRITE], 1500);
	assert_int_equal(t.stage_ns[HW_PT_FOLLOWER_SEND], 100);
	assert_int_equal(t.stage_ns[HW_PT_FOLLOWER_NET], 0);
	assert_int_equal(t.stage_ns[HW_PT_HW_ADVANCE], 0);
	assert_int_equal(sum(&t), 2600 - 500);
	/* done before everything: all stages but the clamped chain are 0 */
	s.done_ns = 0;
	hw_pt_compute(&s, &t);
	assert_int_equal(t.stage_ns[HW_PT_RESPOND], 0);
	assert_int_equal(sum(&t), 2500 - 500);
}

/* The client's round trip minus the leader's total, halved; odd ns go to
 * the way back; a round trip below the leader's total is flagged. */
static void test_client_split(void **st)
{
	(void)st;
	hw_produce_timing t = { .critical = 2 };
	t.stage_ns[HW_PT_APPEND] = 1000;
	t.stage_ns[HW_PT_FOLLOWER_NET] = 4000;
	int64_t row[HW_BD__COUNT];
	assert_int_equal(hw_bd_split(100, 300, 300 + 5000 + 2001, &t, row), 0);
	assert_int_equal(row[HW_BD_CLIENT_QUEUE], 200);
	assert_int_equal(row[HW_BD_CLIENT_TO_LEADER], 1000);
	assert_int_equal(row[HW_BD_LEADER_TO_CLIENT], 1001);
	assert_int_equal(row[HW_BD_LEADER0 + HW_PT_FOLLOWER_NET], 4000);
	int64_t total = 0;
	for (int k = 0; k < HW_BD__COUNT; k++) {
		assert_true(row[k] >= 0);
		total += row[k];
	}
	assert_int_equal(total, 300 + 5000 + 2001 - 100);      /* the record's latency */
	assert_int_equal(hw_bd_split(300, 300, 300 + 4000, &t, row), 1);
	assert_int_equal(row[HW_BD_CLIENT_TO_LEADER] + row[HW_BD_LEADER_TO_CLIENT], 0);
}

/* 100 records with latencies 1..100 us, each the sum of its rows: the
 * 45..55% band is records 46..55, its rows add up to its mean latency,
 * which is the median's neighbourhood; critical counts add up. */
static void test_band(void **st)
{
	(void)st;
	hw_bench_breakdown *bd = hw_bd_create();
	assert_non_null(bd);
	for (int i = 100; i >= 1; i--) {   /* out of order on purpose */
		hw_produce_timing t = { .critical = i % 3 ? 2 : -1 };
		t.stage_ns[HW_PT_APPEND] = 250u * (unsigned)i;       /* a quarter of the latency */
		t.stage_ns[HW_PT_FOLLOWER_NET] = 250u * (unsigned)i;
		int64_t intended = 0;
		/* rtt = 1000 i: network rows 500 i together */
		hw_follower_ack acks[2] = { { .id = 2, .ack_ns = 100u * (unsigned)i, .write_ns = 7 },
					    { .id = 3, .ack_ns = 50, .write_ns = 9 } };
		hw_bd_record(bd, &intended, 1, 0, 1000 * (int64_t)i, &t, acks, i % 2 ? 2 : 1);
	}
	assert_int_equal(bd->records, 100);
	double at[HW_BD__COUNT], lat;
	assert_int_equal(hw_bd_band(bd, 45, 55, at, &lat), 10);
	assert_float_equal(lat, 50500.0, 1e-6);               /* mean of 46..55 us */
	double s = 0;
	for (int k = 0; k < HW_BD__COUNT; k++)
		s += at[k];
	assert_float_equal(s, lat, 1e-6);
	assert_float_equal(at[HW_BD_LEADER0 + HW_PT_APPEND], lat / 4, 1e-6);
	assert_float_equal(at[HW_BD_CLIENT_TO_LEADER], lat / 4, 1e-6);
	/* a band of less than one record is the record at its lower end */
	assert_int_equal(hw_bd_band(bd, 99, 99.5, at, &lat), 1);
	assert_float_equal(lat, 100000.0, 1e-6);
	uint64_t n = bd->critical_other;
	for (int i = 0; i < bd->n_critical; i++)
		n += bd->critical_n[i];
	assert_int_equal(n, 100);
	assert_int_equal(bd->n_critical, 2);
	/* each follower's acknowledgements: 2 in every record, 3 in the odd ones */
	assert_int_equal(bd->n_fol, 2);
	assert_int_equal(bd->fol_id[0], 2);
	assert_int_equal(bd->fol_n[0], 100);
	assert_int_equal(bd->fol_n[1], 50);
	assert_int_equal(hw_hist_max(bd->fol_ack[0]), 10000);
	assert_int_equal(hw_hist_max(bd->fol_write[1]), 9);
	hw_bd_destroy(bd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_follower_path),
		cmocka_unit_test(test_leader_write_path),
		cmocka_unit_test(test_clamped),
		cmocka_unit_test(test_client_split),
		cmocka_unit_test(test_band),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
