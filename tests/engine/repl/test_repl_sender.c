/* test_repl_sender.c — docs/security.md "Sender identity" in the replica
 * manager, on the simulated cluster (tests/engine/repl/hx.h): a PARTITION_STATE
 * that is not from the controller moves nothing; one whose topic name is a
 * path is refused; a follower FETCH claiming another replica acknowledges
 * nothing (the HW does not move to its offset); a follower FETCH with an
 * older broker epoch than the replica's newest, or than the epoch the
 * controller registered for it, is refused and moves no HW. Each refusal is
 * counted by reason. Seed from HW_TEST_SEED. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_rm.h"
#include "hx.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;

static uint64_t rejected(hx *h, int node, int why)
{
	hw_rm_stats st;
	hw_rm_get_stats(hx_rm(h, node), &st);
	return st.rejected[why];
}

static void test_sender_identity(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = g_seed };
	hx *h = hx_create(&o);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 2000);
	for (int i = 0; i < 4; i++) {
		uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 5 });
		hx_run_quiet(h, 2000);
		assert_non_null(hx_resp_get(h, c));
	}
	hw_rm_part_info before, after;
	hx_info(h, 2, 0, &before);

	/* 1. the forged PARTITION_STATE, from a node that is not the
	 * controller: leader 3 at a huge epoch, ISR {3} */
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PARTITION_STATE;
	m.src = 200 + (int32_t)(hx_rand(h) % 50);
	m.dst = 2;
	m.u.pstate = *hx_ctl_state(h, 0);
	m.u.pstate.leader = 3;
	m.u.pstate.leader_epoch += 1000;
	m.u.pstate.partition_epoch += 1000;
	m.u.pstate.isr = (hw_idset){ 1, { 3 } };
	hx_send_raw(h, &m);
	hx_run_quiet(h, 500);
	hx_info(h, 2, 0, &after);
	assert_int_equal(after.leader, before.leader);
	assert_int_equal(after.leader_epoch, before.leader_epoch);
	assert_int_equal(after.leo, before.leo);
	assert_int_equal(rejected(h, 2, HW_RM_REJECT_NOT_CONTROLLER), 1);

	/* 2. from the controller's id, but a topic name that is a path */
	m.src = HX_CTL;
	m.u.pstate = *hx_ctl_state(h, 0);
	m.u.pstate.tp.topic_id = 77;
	snprintf(m.u.pstate.topic, sizeof m.u.pstate.topic, "../../../etc");
	hx_send_raw(h, &m);
	hx_run_quiet(h, 500);
	assert_int_equal(rejected(h, 2, HW_RM_REJECT_BAD_TOPIC_NAME), 1);
	assert_true(hw_topic_name_valid("payments.v2_x-y"));
	assert_false(hw_topic_name_valid(".."));
	assert_false(hw_topic_name_valid("a/b"));
	assert_false(hw_topic_name_valid(""));

	/* 3. a follower FETCH "from replica 3" sent by someone else, claiming
	 * records far past the leader's LEO: no acknowledgement */
	hx_pause(h, 3, 1);
	hw_fetch_part fp = { .tp = { 1, 0 }, .fetch_offset = before.leo, .current_leader_epoch = -1,
			     .last_fetched_epoch = -1, .log_start_offset = -1, .partition_max_bytes = 1 << 20 };
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_FETCH;
	m.src = 201;
	m.dst = 1;
	m.u.fetch = (hw_fetch_req){ .replica_id = 3, .replica_epoch = 1 << 30, .max_bytes = 1 << 20,
				    .n_parts = 1, .parts = &fp };
	hx_send_raw(h, &m);
	hx_run_quiet(h, 500);
	assert_int_equal(rejected(h, 1, HW_RM_REJECT_REPLICA_NOT_SENDER), 1);

	/* 4. the replica's own id, but an older broker epoch than its fetches
	 * carried: refused (a stale instance) */
	hx_pause(h, 3, 0);
	hx_run_quiet(h, 1000);
	m.src = 3;
	m.u.fetch.replica_epoch = -5;
	hx_send_raw(h, &m);
	hx_run_quiet(h, 500);
	assert_int_equal(rejected(h, 1, HW_RM_REJECT_STALE_BROKER_EPOCH), 1);
	/* and the cluster still works */
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 5 });
	hx_run_quiet(h, 3000);
	const hx_resp *r = hx_resp_get(h, c);
	assert_non_null(r);
	assert_int_equal(r->error, 0);

	/* 5. the controller registered replica 3 anew (a fenced broker that
	 * restarted: epoch 40) and tells the leader in the partition state's
	 * replica epochs. A fetch of 3's old incarnation — its epoch is the
	 * newest the leader has seen from it, so only the registration can
	 * tell — at the leader's LEO while 3 lags: refused, counted, and the
	 * HW does not move; the same fetch at the registered epoch moves it. */
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PARTITION_STATE;
	m.src = HX_CTL;
	m.dst = 1;
	m.u.pstate = *hx_ctl_state(h, 0);
	m.u.pstate.n_replica_epochs = (uint8_t)m.u.pstate.replicas.n;
	for (int i = 0; i < m.u.pstate.replicas.n; i++)
		m.u.pstate.replica_epochs[i] = m.u.pstate.replicas.id[i] == 3 ? 40 : 1;
	hx_send_raw(h, &m);
	hx_pause(h, 3, 1);
	c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 5 }); /* acks=1: the HW waits for 3 */
	hx_run_quiet(h, 1000);
	assert_non_null(hx_resp_get(h, c));
	hw_rm_part_info lag;
	hx_info(h, 1, 0, &lag);
	assert_true(lag.hw < lag.leo);
	uint64_t stale = rejected(h, 1, HW_RM_REJECT_STALE_BROKER_EPOCH);
	fp.fetch_offset = lag.leo;
	fp.current_leader_epoch = lag.leader_epoch;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_FETCH;
	m.src = 3;
	m.dst = 1;
	m.u.fetch = (hw_fetch_req){ .replica_id = 3, .replica_epoch = 1, .max_bytes = 1 << 20, .n_parts = 1,
				    .parts = &fp };
	hx_send_raw(h, &m);
	hx_run_quiet(h, 300);
	assert_int_equal(rejected(h, 1, HW_RM_REJECT_STALE_BROKER_EPOCH), stale + 1);
	hx_info(h, 1, 0, &after);
	assert_int_equal(after.hw, lag.hw);
	m.u.fetch.replica_epoch = 40;
	hx_send_raw(h, &m);
	hx_run_quiet(h, 300);
	hx_info(h, 1, 0, &after);
	assert_int_equal(after.hw, lag.leo);
	assert_int_equal(rejected(h, 1, HW_RM_REJECT_STALE_BROKER_EPOCH), stale + 1);
	hx_destroy(h);
}

int main(void)
{
	g_seed = hw_test_seed("repl_sender");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sender_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
