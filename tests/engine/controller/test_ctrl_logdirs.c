/* test_ctrl_logdirs.c — offline log directories at the controller
 * (docs/logdirs.md, Kafka's handleDirectoriesOffline): the replicas a
 * broker's heartbeat lists as on an offline log dir leave their ISRs and
 * lose their leaderships, are never elected or admitted back, while the
 * broker stays ACTIVE for its other replicas; a new registration (a restart
 * with the disk back) clears them; with every dir offline the broker asks
 * to be fenced. Fake clock, in-process capturing net. */
#include "ctrl_harness.h"

static hw_broker_heartbeat_resp hb_offline(world *w, int32_t id, int dirs, int want_fence, const hw_tp *off,
					   int n)
{
	hw_broker_heartbeat_req r = { .broker_id = id, .broker_epoch = w->epoch[id], .metadata_offset = -1,
				      .want_fence = (uint8_t)want_fence, .offline_dirs = (uint16_t)dirs,
				      .n_offline = (uint16_t)n, .offline = off };
	hw_broker_heartbeat_resp resp;
	assert_int_equal(hw_ctrl_heartbeat(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_NONE);
	return resp;
}

static void test_offline_replicas_leave_isr(void **state)
{
	(void)state;
	world *w = world_new(0);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "jbod", 4, 3, "1", NULL);
	int32_t x = part(w, t, 0).leader;
	assert_true(x >= 1);
	/* x's log dir holding partitions 0 and 1 failed */
	hw_tp off[2] = { { t, 0 }, { t, 1 } };
	hw_broker_heartbeat_resp r = hb_offline(w, x, 1, 0, off, 2);
	assert_int_equal(r.is_fenced, 0);
	for (uint32_t p = 0; p < 4; p++) {
		hw_partition_state s = part(w, t, p);
		if (p < 2) {
			assert_int_not_equal(s.leader, x);
			assert_true(s.leader >= 1);
			assert_false(hw_idset_has(&s.isr, x));
		} else {
			assert_true(hw_idset_has(&s.isr, x)); /* its healthy dir keeps serving */
		}
	}
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_OFFLINE_REPLICAS_REPORTED), 2);
	/* every heartbeat repeats the list: nothing new is counted */
	hb_offline(w, x, 1, 0, off, 2);
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_OFFLINE_REPLICAS_REPORTED), 2);

	/* the leader of partition 0 cannot take x back into the ISR */
	hw_partition_state s0 = part(w, t, 0);
	hw_msg m = alter_req(w, s0.leader, s0);
	m.u.alter.new_isr.id[m.u.alter.new_isr.n] = x;
	m.u.alter.new_isr_broker_epochs[m.u.alter.new_isr.n] = w->epoch[x];
	m.u.alter.new_isr.n++;
	assert_int_equal(send_alter(w, &m).error, HW_ERR_INELIGIBLE_REPLICA);
	/* the others' sessions expire: x keeps leading its healthy dir's
	 * partitions and takes the rest, but is never elected for 0 and 1,
	 * which go offline */
	run_heartbeats(w, 1ull << x, 20000);
	for (uint32_t p = 0; p < 4; p++)
		assert_int_equal(part(w, t, p).leader, p < 2 ? HW_NO_NODE : x);

	/* the restart: a new registration with the disk back clears the list,
	 * and x is eligible again (leader of the leaderless partitions) */
	int64_t prev = w->epoch[x];
	reg(w, x, prev);
	hb_offline(w, x, 0, 0, NULL, 0);
	for (int id = 1; id <= 3; id++)
		if (id != x) {
			reg(w, id, w->epoch[id]);
			hb_offline(w, id, 0, 0, NULL, 0);
		}
	hw_partition_state s1 = part(w, t, 0);
	hw_msg m1 = alter_req(w, s1.leader, s1);
	if (!hw_idset_has(&s1.isr, x)) {
		m1.u.alter.new_isr.id[m1.u.alter.new_isr.n] = x;
		m1.u.alter.new_isr_broker_epochs[m1.u.alter.new_isr.n] = w->epoch[x];
		m1.u.alter.new_isr.n++;
	}
	if (s1.leader >= 0)
		assert_int_equal(send_alter(w, &m1).error, HW_ERR_NONE);
	world_free(w);
}

/* With every log dir offline (one log dir: the usual case) the broker asks
 * to be fenced, and the controller fences it: it leads nothing. */
static void test_all_dirs_offline_fences(void **state)
{
	(void)state;
	world *w = world_new(0);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "one", 3, 3, "1", NULL);
	int32_t x = part(w, t, 0).leader;
	hw_tp off[3] = { { t, 0 }, { t, 1 }, { t, 2 } };
	hw_broker_heartbeat_resp r = hb_offline(w, x, 1, 1, off, 3);
	assert_int_equal(r.is_fenced, 1);
	for (uint32_t p = 0; p < 3; p++) {
		hw_partition_state s = part(w, t, p);
		assert_int_not_equal(s.leader, x);
		assert_false(hw_idset_has(&s.isr, x));
	}
	/* still offline: stays fenced */
	r = hb_offline(w, x, 1, 1, off, 3);
	assert_int_equal(r.is_fenced, 1);
	world_free(w);
}

int main(void)
{
	seed_init("controller_logdirs");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offline_replicas_leave_isr),
		cmocka_unit_test(test_all_dirs_offline_fences),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
