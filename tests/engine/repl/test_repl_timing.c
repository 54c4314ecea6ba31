/* test_repl_timing.c — acks=all stage timing through the real replica
 * managers (engine/repl/hw_ptiming.h, docs/breakdown.md), in the
 * deterministic harness with 1..3 virtual ms per message:
 *   - a PRODUCE with want_timing is answered with has_timing: its critical
 *     replica is a follower, its leader stages add up exactly to the
 *     leader's residence as the request observer reports it (same clock),
 *     the leader<->follower row holds the two hops of the follower's round
 *     trip (>= 2 ms), and the brokers' observer saw the same stages; both
 *     followers' acknowledgements are in the answer, the critical one's
 *     the latest;
 *   - a PRODUCE without it is answered without, and nothing is left
 *     counted as waiting on the leader afterwards (no stamping goes on). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "hw_batch.h"
#include "hw_repl_int.h"
#include "hx.h"
#include "../../support/hw_test.h"

#define PSEUDO 200

typedef struct seen {
	int n, n_timed;
	hw_rm_req_timing last;
	hw_produce_timing stages;
} seen;

static void observe(void *ctx, const hw_rm_req_timing *t)
{
	seen *s = ctx;
	if (t->kind != HW_RM_REQ_PRODUCE_ACKSALL)
		return;
	s->n++;
	s->last = *t;
	if (t->stages) {
		s->n_timed++;
		s->stages = *t->stages; /* borrowed for the call */
	}
}

static void send_produce(hx *h, int leader, uint32_t corr, int want_timing)
{
	hw_record_in rec;
	memset(&rec, 0, sizeof(rec));
	rec.value = "timed";
	rec.value_len = 5;
	hw_batch_spec sp;
	hw_batch_spec_init(&sp);
	uint8_t buf[256];
	ssize_t n = hw_batch_build(buf, sizeof(buf), &sp, &rec, 1);
	assert_true(n > 0);
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_PRODUCE;
	m.src = PSEUDO;
	m.dst = leader;
	m.correlation_id = corr;
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = 30000, .tp = { 1, 0 },
					.records = buf, .records_len = (uint32_t)n,
					.want_timing = (uint8_t)want_timing };
	hx_send_raw(h, &m);
}

static void test_timed_produce(void **st)
{
	(void)st;
	uint64_t seed = hw_test_seed("repl_timing");
	hx_opts o = { .nodes = 3, .seed = seed };
	hx *h = hx_create(&o);
	assert_non_null(h);
	hx_net_faults(h, 0, 0, 1, 3);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_until(h, 100);
	int leader = hx_ctl_leader(h, 0);
	assert_int_equal(leader, 1);
	uint32_t w = hx_produce(h, &(hx_produce_req){ .node = leader, .part = 0, .acks = -1, .nrec = 1,
						     .timeout_ms = 30000 }); /* settle */
	hx_run_until(h, hx_now(h) + 3000);
	assert_non_null(hx_resp_get(h, w));
	hw_rm *rm = hx_rm(h, leader);
	seen s = { 0 };
	hw_rm_set_req_observer(rm, observe, &s);

	for (int round = 0; round < 5; round++) {
		send_produce(h, leader, 7000u + (uint32_t)round, 1);
		hx_run_until(h, hx_now(h) + 500);
		const hw_msg *r = hx_last_to(h, PSEUDO, HW_MSG_PRODUCE_RESP);
		assert_non_null(r);
		assert_int_equal(r->correlation_id, 7000u + (uint32_t)round);
		assert_int_equal(r->u.produce_resp.error, 0);
		assert_int_equal(r->u.produce_resp.has_timing, 1);
		const hw_produce_timing *t = &r->u.produce_resp.timing;
		assert_true(t->critical == 2 || t->critical == 3);
		/* the leader's residence on its own clock, to the ns */
		assert_int_equal(s.n_timed, round + 1);
		assert_int_equal((int64_t)hw_pt_total_ns(t), s.last.ready_ns - s.last.rx_ns);
		assert_memory_equal(&s.stages, t, sizeof(*t));
		/* response to the follower and its next fetch: two hops of >= 1 ms */
		assert_true(t->stage_ns[HW_PT_FOLLOWER_NET] >= 2000000u);
		assert_int_equal(t->stage_ns[HW_PT_LEADER_WRITE], 0);
		assert_int_equal(rm->timed_waiting, 0);
		/* both followers acknowledged it; the critical one last */
		assert_int_equal(r->u.produce_resp.n_acks, 2);
		uint32_t crit_ack = 0, max_ack = 0;
		for (int i = 0; i < 2; i++) {
			const hw_follower_ack *a = &r->u.produce_resp.acks[i];
			assert_true(a->id == 2 || a->id == 3);
			assert_true(a->ack_ns >= 2000000u); /* a response and a fetch: >= 2 hops */
			if (a->ack_ns > max_ack)
				max_ack = a->ack_ns;
			if (a->id == t->critical)
				crit_ack = a->ack_ns;
		}
		assert_int_equal(crit_ack, max_ack);
	}

	/* not asked: not answered, not reported, nothing left waiting */
	send_produce(h, leader, 8000u, 0);
	hx_run_until(h, hx_now(h) + 500);
	const hw_msg *r = hx_last_to(h, PSEUDO, HW_MSG_PRODUCE_RESP);
	assert_non_null(r);
	assert_int_equal(r->correlation_id, 8000u);
	assert_int_equal(r->u.produce_resp.error, 0);
	assert_int_equal(r->u.produce_resp.has_timing, 0);
	assert_int_equal(r->u.produce_resp.n_acks, 0);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.n_timed, 5);
	assert_int_equal(rm->timed_waiting, 0);
	hw_rm_set_req_observer(rm, NULL, NULL);
	hx_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timed_produce),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
