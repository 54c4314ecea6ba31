/* test_ctrl.c — controller unit tests: topic creation and assignment,
 * fencing on session timeout, election order (ISR, ELR, unclean, offline),
 * the "Isr 2, Elr 3" scenario in both variants (docs/scenarios.md), controlled
 * shutdown, AlterPartition validation, metadata/describe answers, and the
 * metadata log (persistence, replay, torn tail). Fake clock, in-process
 * capturing net. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctrl_harness.h"

/* Count PARTITION_STATE pushes of tp to dst since message index `from`. */
static int pushes(world *w, int from, hw_tp tp, int32_t dst)
{
	int n = 0;
	for (int i = from; i < w->net.n; i++) {
		const hw_msg *m = &w->net.msgs[i].m;
		if (m->type == HW_MSG_PARTITION_STATE && m->dst == dst && hw_tp_eq(m->u.pstate.tp, tp))
			n++;
	}
	return n;
}

static int in_isr(world *w, uint32_t t, uint32_t p, int32_t id)
{
	hw_partition_state s = part(w, t, p);
	return hw_idset_has(&s.isr, id);
}

/* ------------------------------------------------------------ creation */

static void test_create_and_assign(void **state)
{
	(void)state;
	for (int round = 0; round < 20; round++) {
		world *w = world_new(0);
		int nb = 3 + (int)below(6);                 /* 3..8 brokers */
		int ids[8];
		for (int i = 0; i < nb; i++) {
			ids[i] = (i ? ids[i - 1] : 0) + 1 + (int)below(3); /* sparse ids */
			reg_and_unfence(w, ids[i]);
		}
		/* A registered but fenced broker never gets replicas. */
		reg(w, 900, -1);
		int rf = 1 + (int)below((uint64_t)(nb < HW_MAX_RF ? nb : HW_MAX_RF));
		int np = 1 + (int)below(40);
		if (round % 2)
			np = nb * (1 + (int)below(5)); /* whole rounds: exact balance */
		int from = w->net.n;
		uint32_t tid = create(w, "orders", np, rf, "2", NULL);
		int leaders[1000] = { 0 }, replicas[1000] = { 0 };
		for (int p = 0; p < np; p++) {
			hw_partition_state s = part(w, tid, (uint32_t)p);
			assert_int_equal(s.replicas.n, rf);
			for (int i = 0; i < rf; i++) {
				assert_true(s.replicas.id[i] != 900);
				for (int j = 0; j < i; j++)
					assert_true(s.replicas.id[i] != s.replicas.id[j]);
				replicas[s.replicas.id[i]]++;
				/* every replica got exactly one push */
				assert_int_equal(pushes(w, from, s.tp, s.replicas.id[i]), 1);
			}
			assert_int_equal(s.leader, s.replicas.id[0]);
			assert_memory_equal(&s.isr, &s.replicas, sizeof(s.isr));
			assert_int_equal(s.elr.n, 0);
			assert_int_equal(s.leader_epoch, 0);
			assert_int_equal(s.partition_epoch, 0);
			assert_int_equal(s.min_insync_replicas, 2);
			assert_string_equal(s.topic, "orders");
			leaders[s.leader]++;
		}
		assert_int_equal(pushes(w, from, (hw_tp){ tid, 0 }, 900), 0);
		int lmin = np, lmax = 0, rmin = np * rf, rmax = 0;
		for (int i = 0; i < nb; i++) {
			int l = leaders[ids[i]], r = replicas[ids[i]];
			lmin = l < lmin ? l : lmin;
			lmax = l > lmax ? l : lmax;
			rmin = r < rmin ? r : rmin;
			rmax = r > rmax ? r : rmax;
		}
		assert_true(lmax - lmin <= 1);               /* leaders spread evenly */
		if (np % nb == 0)
			assert_int_equal(rmin, rmax);        /* replicas too, per whole round */
		else
			assert_true(rmax - rmin <= rf);
		world_free(w);
	}
}

static void test_create_errors(void **state)
{
	(void)state;
	world *w = world_new(0);
	reg_and_unfence(w, 1);
	reg_and_unfence(w, 2);
	reg(w, 3, -1); /* fenced: not usable */
	hw_create_topic_req r = { .partitions = 1, .replication_factor = 3 };
	hw_create_topic_resp resp;
	snprintf(r.name, sizeof(r.name), "t");
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_INVALID_REPLICATION_FACTOR);
	r.replication_factor = 2;
	r.partitions = 0;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_INVALID_PARTITIONS);
	r.partitions = HW_CTRL_MAX_PARTITIONS + 1;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_INVALID_PARTITIONS);
	r.partitions = 2;
	snprintf(r.name, sizeof(r.name), "bad/name");
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_INVALID_REQUEST);
	snprintf(r.name, sizeof(r.name), "t");
	hw_config_kv kv = { .key = "min.insync.replicas", .value = "zero" };
	r.configs = &kv;
	r.n_configs = 1;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_INVALID_CONFIG);
	snprintf(kv.key, sizeof(kv.key), "no.such.config");
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_INVALID_CONFIG);
	/* compression.type: Kafka's values parse, only "producer" is served
	 * (docs/compression.md#compressiontype) */
	snprintf(kv.key, sizeof(kv.key), "compression.type");
	static const char *const ctypes[] = { "gzip", "snappy", "lz4", "zstd", "uncompressed", "bzip2", "" };
	for (size_t i = 0; i < sizeof ctypes / sizeof ctypes[0]; i++) {
		snprintf(kv.value, sizeof(kv.value), "%s", ctypes[i]);
		assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
		assert_int_equal(resp.error, HW_ERR_INVALID_CONFIG);
		assert_non_null(strstr(resp.error_message, i < 5 ? "only 'producer'" : "expected one of"));
	}
	snprintf(kv.value, sizeof(kv.value), "producer");
	r.validate_only = 1;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_NONE);
	r.validate_only = 0;
	r.n_configs = 0;
	r.validate_only = 1;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_NONE);
	assert_int_equal(hw_ctrl_topic_count(w->ctrl), 0);
	r.validate_only = 0;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_NONE);
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_TOPIC_ALREADY_EXISTS);
	world_free(w);
}

/* ------------------------------------------------------------- fencing */

static void test_fencing_after_session_timeout(void **state)
{
	(void)state;
	world *w = world_new(0);
	w->cfg.session_timeout_ms = 9000;
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "payments", 6, 3, "2", NULL);
	int victim = 1 + (int)below(3);
	uint64_t alive = (1u << 1 | 1u << 2 | 1u << 3) & ~(1u << victim);
	hb(w, victim, 0);
	int64_t last = w->clock.now;
	hw_partition_state before[6];
	for (int p = 0; p < 6; p++)
		before[p] = part(w, t, (uint32_t)p);
	/* The victim goes silent; the others keep heartbeating. */
	run_heartbeats(w, alive, 8900);
	w->clock.now = last + 9000 * MS; /* exactly the session timeout: still valid */
	assert_int_equal(hw_ctrl_poll(w->ctrl), 0);
	hw_ctrl_broker_info bi;
	assert_int_equal(hw_ctrl_broker_get(w->ctrl, victim, &bi), 0);
	assert_int_equal(bi.state, HW_CTRL_BROKER_ACTIVE);
	assert_true(hw_ctrl_next_deadline_ns(w->ctrl) <= last + 9000 * MS + 1);
	for (int p = 0; p < 6; p++)
		assert_true(in_isr(w, t, (uint32_t)p, victim));
	int from = w->net.n;
	w->clock.now = last + 9000 * MS + 1;
	assert_int_equal(hw_ctrl_poll(w->ctrl), 0);
	assert_int_equal(hw_ctrl_broker_get(w->ctrl, victim, &bi), 0);
	assert_int_equal(bi.state, HW_CTRL_BROKER_FENCED);
	for (int p = 0; p < 6; p++) {
		hw_partition_state s = part(w, t, (uint32_t)p);
		assert_false(hw_idset_has(&s.isr, victim));
		assert_int_equal(s.isr.n, 2);
		assert_int_equal(s.elr.n, 0);         /* ISR 2 >= min ISR 2 */
		assert_int_equal(s.partition_epoch, before[p].partition_epoch + 1);
		if (before[p].leader == victim) {
			/* first live ISR replica in assignment order */
			int32_t expect = before[p].replicas.id[1];
			assert_int_equal(s.leader, expect);
			assert_int_equal(s.leader_epoch, before[p].leader_epoch + 1);
		} else {
			assert_int_equal(s.leader, before[p].leader);
			assert_int_equal(s.leader_epoch, before[p].leader_epoch);
		}
		/* the change was pushed to every replica, the fenced one included */
		for (int i = 0; i < 3; i++)
			assert_int_equal(pushes(w, from, s.tp, s.replicas.id[i]), 1);
	}
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_BROKERS_FENCED), 1);
	/* Past its resync time the silent victim gets no re-push, and its
	 * deadline must not stay in the past (the reactor would wake on every
	 * pass while a broker is down). */
	run_heartbeats(w, alive, 3000);
	assert_int_equal(hw_ctrl_poll(w->ctrl), 0);
	assert_true(hw_ctrl_next_deadline_ns(w->ctrl) > w->clock.now);
	/* The victim comes back (same process): unfenced, but not back in the
	 * ISR — only its leader's AlterPartition brings it back. */
	hw_broker_heartbeat_resp r = hb(w, victim, 0);
	assert_int_equal(r.is_fenced, 0);
	for (int p = 0; p < 6; p++)
		assert_false(in_isr(w, t, (uint32_t)p, victim));
	world_free(w);
}

/* ----------------------------------------------------------- elections */

static void fence_now(world *w, int id)
{
	/* Let only `id` miss its session: everyone else heartbeats first. */
	hw_ctrl_broker_info bi;
	for (int i = 0; i < hw_ctrl_broker_count(w->ctrl); i++) {
		assert_int_equal(hw_ctrl_broker_at(w->ctrl, i, &bi), 0);
		if (bi.id != id && bi.state == HW_CTRL_BROKER_ACTIVE)
			hb(w, bi.id, 0);
	}
	w->clock.now += (int64_t)w->cfg.session_timeout_ms * MS + 1;
	for (int i = 0; i < hw_ctrl_broker_count(w->ctrl); i++) {
		assert_int_equal(hw_ctrl_broker_at(w->ctrl, i, &bi), 0);
		if (bi.id != id && bi.state == HW_CTRL_BROKER_ACTIVE)
			hb(w, bi.id, 0);
	}
	assert_int_equal(hw_ctrl_poll(w->ctrl), 0);
	assert_int_equal(hw_ctrl_broker_get(w->ctrl, id, &bi), 0);
	assert_int_equal(bi.state, HW_CTRL_BROKER_FENCED);
}

static void test_election_order_isr(void **state)
{
	(void)state;
	world *w = world_new(0);
	for (int id = 1; id <= 4; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "e", 1, 3, "1", NULL);
	hw_partition_state s0 = part(w, t, 0);
	int32_t a = s0.replicas.id[0], b = s0.replicas.id[1], c = s0.replicas.id[2];
	/* A follower fails: the leader is kept (epoch unchanged). */
	fence_now(w, c);
	hw_partition_state s = part(w, t, 0);
	assert_int_equal(s.leader, a);
	assert_int_equal(s.leader_epoch, s0.leader_epoch);
	assert_true(set_is(&s.isr, 2, a, b));
	/* The leader fails: the next ISR replica in assignment order. */
	fence_now(w, a);
	s = part(w, t, 0);
	assert_int_equal(s.leader, b);
	assert_int_equal(s.leader_epoch, s0.leader_epoch + 1);
	assert_true(set_is(&s.isr, 1, b));
	/* The old leader returns: leadership stays where it is (KEEP). */
	hb(w, a, 0);
	s = part(w, t, 0);
	assert_int_equal(s.leader, b);
	assert_int_equal(s.leader_epoch, s0.leader_epoch + 1);
	/* The last ISR member fails; min ISR 1, so ELR = [it]: offline, and
	 * unfencing an out-of-sync replica does not elect it (unclean off). */
	fence_now(w, b);
	s = part(w, t, 0);
	assert_int_equal(s.leader, HW_NO_NODE);
	assert_int_equal(s.isr.n, 0);
	assert_true(set_is(&s.elr, 1, b));
	assert_int_equal(s.leader_epoch, s0.leader_epoch + 2);
	hb(w, c, 0);
	assert_int_equal(part(w, t, 0).leader, HW_NO_NODE);
	/* It comes back: elected from the ELR, ISR = [it]. */
	hb(w, b, 0);
	s = part(w, t, 0);
	assert_int_equal(s.leader, b);
	assert_true(set_is(&s.isr, 1, b));
	assert_int_equal(s.elr.n, 0);
	assert_int_equal(s.leader_recovery_state, HW_LRS_RECOVERED);
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_ELECTIONS_ELR), 1);
	world_free(w);
}

static void test_unclean_election(void **state)
{
	(void)state;
	for (int enabled = 0; enabled <= 1; enabled++) {
		world *w = world_new(0);
		for (int id = 1; id <= 3; id++)
			reg_and_unfence(w, id);
		uint32_t t = create(w, "u", 1, 3, "2", enabled ? "true" : "false");
		hw_partition_state s0 = part(w, t, 0);
		int32_t a = s0.replicas.id[0], b = s0.replicas.id[1], c = s0.replicas.id[2];
		fence_now(w, c); /* ISR [a,b] */
		fence_now(w, b); /* ISR [a], ELR [b] */
		hw_partition_state s = part(w, t, 0);
		assert_true(set_is(&s.isr, 1, a));
		assert_true(set_is(&s.elr, 1, b));
		/* b crashes for good and restarts: unclean shutdown, loses ELR. */
		reg(w, b, -1);
		s = part(w, t, 0);
		assert_int_equal(s.elr.n, 0);
		assert_false(hw_idset_has(&s.isr, b));
		fence_now(w, a); /* ISR [], ELR [a] */
		s = part(w, t, 0);
		assert_int_equal(s.leader, HW_NO_NODE);
		assert_true(set_is(&s.elr, 1, a));
		/* c (out of sync, clean) comes back. */
		hb(w, c, 0);
		s = part(w, t, 0);
		if (!enabled) {
			assert_int_equal(s.leader, HW_NO_NODE);
			/* enabling it at runtime elects now */
			int16_t err;
			assert_int_equal(hw_ctrl_alter_config(w->ctrl, "u", "unclean.leader.election.enable",
							      "true", &err), 0);
			assert_int_equal(err, HW_ERR_NONE);
			s = part(w, t, 0);
		}
		assert_int_equal(s.leader, c);
		assert_true(set_is(&s.isr, 1, c));
		assert_int_equal(s.elr.n, 0);
		assert_int_equal(s.last_known_elr.n, 0);
		assert_int_equal(s.leader_recovery_state, HW_LRS_RECOVERING);
		assert_int_equal(s.unclean_leader_election, 1);
		assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_ELECTIONS_UNCLEAN), 1);
		world_free(w);
	}
}

static void test_elr_disabled_keeps_last_isr(void **state)
{
	(void)state;
	world *w = calloc(1, sizeof(*w));
	assert_non_null(w);
	w->clock.now = 1000 * MS;
	hw_ctrl_config_defaults(&w->cfg);
	w->cfg.elr_enabled = 0;
	world_open(w);
	for (int id = 1; id <= 2; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "x", 1, 2, "2", NULL);
	hw_partition_state s0 = part(w, t, 0);
	fence_now(w, s0.replicas.id[1]);
	fence_now(w, s0.replicas.id[0]);
	hw_partition_state s = part(w, t, 0);
	assert_int_equal(s.leader, HW_NO_NODE);
	assert_true(set_is(&s.isr, 1, s0.replicas.id[0])); /* stays in the ISR */
	assert_int_equal(s.elr.n, 0);
	hb(w, s0.replicas.id[0], 0);
	assert_int_equal(part(w, t, 0).leader, s0.replicas.id[0]);
	world_free(w);
}

/* docs/scenarios.md#isr-2-elr-3-which-broker-leads-next: "A topic shows
 * Isr: 2 and Elr: 3. Broker 2 crashes, and broker 3 is started again. Which
 * broker leads next?" Clean shutdown of 3 -> elected from the ELR; crash of
 * 3 -> offline until broker 2 returns. */
static void isr2_elr3(int clean)
{
	world *w = world_new(0);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "payments", 1, 3, "2", NULL);
	hw_partition_state s0 = part(w, t, 0);
	/* Name the roles as in the scenario: leader "2", followers "1" and "3". */
	int32_t b2 = s0.replicas.id[0], b1 = s0.replicas.id[1], b3 = s0.replicas.id[2];
	fence_now(w, b1); /* broker 1 killed ... */
	int64_t b3_epoch = w->epoch[b3];
	if (clean) {
		/* ... broker 3 stopped cleanly: controlled shutdown. */
		hw_broker_heartbeat_resp r = hb(w, b3, 1);
		assert_int_equal(r.should_shut_down, 1);
		assert_int_equal(r.is_fenced, 1);
	} else {
		fence_now(w, b3); /* ... broker 3 killed */
	}
	hw_partition_state s = part(w, t, 0);
	assert_int_equal(s.leader, b2);
	assert_true(set_is(&s.isr, 1, b2));   /* "Isr: 2" */
	assert_true(set_is(&s.elr, 1, b3));   /* "Elr: 3" */
	/* Broker 2 crashes. */
	fence_now(w, b2);
	s = part(w, t, 0);
	assert_int_equal(s.leader, HW_NO_NODE);
	assert_int_equal(s.isr.n, 0);
	assert_true(hw_idset_has(&s.elr, b2) && hw_idset_has(&s.elr, b3));
	/* Broker 3 is started again: a new process; its clean-shutdown file
	 * holds its last broker epoch only after a clean shutdown. */
	reg(w, b3, clean ? b3_epoch : -1);
	hb(w, b3, 0);
	s = part(w, t, 0);
	if (clean) {
		assert_int_equal(s.leader, b3);
		assert_true(set_is(&s.isr, 1, b3));
		assert_true(set_is(&s.elr, 1, b2));
		assert_int_equal(s.leader_recovery_state, HW_LRS_RECOVERED);
	} else {
		assert_int_equal(s.leader, HW_NO_NODE);
		assert_true(set_is(&s.elr, 1, b2));
		assert_false(hw_idset_has(&s.elr, b3));
		/* The last leader is remembered from the moment the partition
		 * went leaderless. */
		assert_true(set_is(&s.last_known_elr, 1, b2));
		if (below(2)) {
			/* Broker 2 returns (its process survived, e.g. a network
			 * partition healed): elected from the ELR. */
			hb(w, b2, 0);
			s = part(w, t, 0);
			assert_int_equal(s.leader, b2);
			assert_true(set_is(&s.isr, 1, b2));
			assert_int_equal(s.elr.n, 0);
			assert_int_equal(s.leader_recovery_state, HW_LRS_RECOVERED);
		} else {
			/* Broker 2 crashed too and restarts: it loses its ELR place,
			 * ISR and ELR are empty, so the last known leader — broker
			 * 2 — is elected, as an unclean election (RECOVERING). */
			reg(w, b2, -1);
			s = part(w, t, 0);
			assert_int_equal(s.leader, HW_NO_NODE);
			assert_int_equal(s.elr.n, 0);
			hb(w, b2, 0);
			s = part(w, t, 0);
			assert_int_equal(s.leader, b2);
			assert_true(set_is(&s.isr, 1, b2));
			assert_int_equal(s.leader_recovery_state, HW_LRS_RECOVERING);
			assert_int_equal(s.last_known_elr.n, 0);
			assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_ELECTIONS_UNCLEAN), 1);
		}
		assert_int_equal(s.last_known_elr.n, 0);
	}
	world_free(w);
}

static void test_isr2_elr3_clean_shutdown_keeps_elr(void **state)
{
	(void)state;
	isr2_elr3(1);
}

static void test_isr2_elr3_crash_loses_elr(void **state)
{
	(void)state;
	isr2_elr3(0);
}

static void test_controlled_shutdown_moves_leadership(void **state)
{
	(void)state;
	world *w = world_new(0);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "cs", 3, 3, "2", NULL);
	int victim = 1 + (int)below(3);
	hw_broker_heartbeat_resp r = hb(w, victim, 1);
	assert_int_equal(r.should_shut_down, 1);
	for (int p = 0; p < 3; p++) {
		hw_partition_state s = part(w, t, (uint32_t)p);
		assert_true(s.leader != victim && s.leader >= 0);
		assert_false(hw_idset_has(&s.isr, victim));
		assert_int_equal(s.isr.n, 2);
	}
	hw_ctrl_broker_info bi;
	assert_int_equal(hw_ctrl_broker_get(w->ctrl, victim, &bi), 0);
	assert_int_equal(bi.state, HW_CTRL_BROKER_FENCED);
	/* It restarts cleanly: no unclean-shutdown record. */
	reg(w, victim, bi.epoch);
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_UNCLEAN_SHUTDOWNS), 0);
	assert_true(w->epoch[victim] > bi.epoch);
	world_free(w);
}

/* ------------------------------------------------------ AlterPartition */

static void test_alter_partition_validation(void **state)
{
	(void)state;
	world *w = world_new(0);
	for (int id = 1; id <= 4; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "ap", 2, 3, "1", NULL);
	hw_partition_state s = part(w, t, 0);
	int32_t L = s.leader, f1 = s.replicas.id[1], f2 = s.replicas.id[2];
	int32_t outsider = 0;
	for (int id = 1; id <= 4; id++)
		if (!hw_idset_has(&s.replicas, id))
			outsider = id;

	/* Accepted shrink: partition epoch +1, leader epoch unchanged, pushed. */
	hw_msg m = alter_req(w, L, s);
	m.u.alter.new_isr = (hw_idset){ .n = 2, .id = { L, f1 } };
	int from = w->net.n;
	hw_alter_partition_resp r = send_alter(w, &m);
	assert_int_equal(r.error, HW_ERR_NONE);
	assert_int_equal(r.partition_epoch, s.partition_epoch + 1);
	assert_int_equal(r.leader_epoch, s.leader_epoch);
	assert_true(set_is(&r.isr, 2, L, f1));
	assert_int_equal(pushes(w, from, s.tp, f2), 1);
	hw_partition_state s1 = part(w, t, 0);
	assert_int_equal(s1.partition_epoch, s.partition_epoch + 1);

	/* 1. stale broker epoch (wins over everything else that is wrong) */
	m = alter_req(w, L, s1);
	m.u.alter.broker_epoch = w->epoch[L] - 1;
	m.u.alter.new_isr = (hw_idset){ .n = 1, .id = { 99 } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_STALE_BROKER_EPOCH);
	/* 2. unknown partition */
	m = alter_req(w, L, s1);
	m.u.alter.tp.partition = 7;
	assert_int_equal(send_alter(w, &m).error, HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);
	/* 3. epochs from the future */
	m = alter_req(w, L, s1);
	m.u.alter.partition_epoch++;
	assert_int_equal(send_alter(w, &m).error, HW_ERR_NOT_CONTROLLER);
	/* 5. not the leader */
	m = alter_req(w, f1, s1);
	assert_int_equal(send_alter(w, &m).error, HW_ERR_INVALID_REQUEST);
	/* 6. old partition epoch (the state before the accepted shrink) */
	m = alter_req(w, L, s);
	assert_int_equal(send_alter(w, &m).error, HW_ERR_INVALID_UPDATE_VERSION);
	/* 7. ISR not a subset / without the leader / duplicate */
	m = alter_req(w, L, s1);
	m.u.alter.new_isr = (hw_idset){ .n = 2, .id = { L, outsider } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_INVALID_REQUEST);
	m.u.alter.new_isr = (hw_idset){ .n = 1, .id = { f1 } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_INVALID_REQUEST);
	m.u.alter.new_isr = (hw_idset){ .n = 2, .id = { L, L } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_INVALID_REQUEST);
	/* 8. ineligible: a mismatched broker epoch, then a fenced member */
	m = alter_req(w, L, s1);
	m.u.alter.new_isr = (hw_idset){ .n = 3, .id = { L, f1, f2 } };
	m.u.alter.new_isr_broker_epochs[2] = w->epoch[f2] + 5;
	assert_int_equal(send_alter(w, &m).error, HW_ERR_INELIGIBLE_REPLICA);
	m.u.alter.new_isr_broker_epochs[2] = -1;
	fence_now(w, f2);
	s1 = part(w, t, 0);
	m = alter_req(w, L, s1);
	m.u.alter.new_isr = (hw_idset){ .n = 3, .id = { L, f1, f2 } };
	r = send_alter(w, &m);
	assert_int_equal(r.error, HW_ERR_INELIGIBLE_REPLICA);
	/* The rejection reports the current state so the leader can resync. */
	assert_int_equal(r.partition_epoch, s1.partition_epoch);
	/* Expansion with an eligible replica is accepted. */
	hb(w, f2, 0);
	s1 = part(w, t, 0);
	m = alter_req(w, L, s1);
	m.u.alter.new_isr = (hw_idset){ .n = 3, .id = { f2, L, f1 } }; /* any order */
	m.u.alter.new_isr_broker_epochs[0] = w->epoch[f2];
	m.u.alter.new_isr_broker_epochs[1] = w->epoch[L];
	m.u.alter.new_isr_broker_epochs[2] = w->epoch[f1];
	r = send_alter(w, &m);
	assert_int_equal(r.error, HW_ERR_NONE);
	assert_int_equal(part(w, t, 0).isr.n, 3);
	/* 4. fenced leader epoch: the leader is replaced, then the old one
	 * sends with its old leader epoch. */
	hw_partition_state before = part(w, t, 0);
	fence_now(w, L);
	hw_partition_state after = part(w, t, 0);
	assert_int_equal(after.leader_epoch, before.leader_epoch + 1);
	hb(w, L, 0);
	m = alter_req(w, L, before);
	assert_int_equal(send_alter(w, &m).error, HW_ERR_FENCED_LEADER_EPOCH);
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_ALTER_PARTITION_ACCEPTED), 2);
	world_free(w);
}

/* Shrinking the ISR below min ISR moves the removed replicas into the ELR
 * (the HW is frozen from then on); growing back to min ISR clears it. */
static void test_alter_partition_elr_maintenance(void **state)
{
	(void)state;
	world *w = world_new(0);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "elr", 1, 3, "2", NULL);
	hw_partition_state s = part(w, t, 0);
	int32_t L = s.leader, f1 = s.replicas.id[1], f2 = s.replicas.id[2];
	hw_msg m = alter_req(w, L, s);
	m.u.alter.new_isr = (hw_idset){ .n = 2, .id = { L, f1 } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_NONE);
	assert_int_equal(part(w, t, 0).elr.n, 0);
	m = alter_req(w, L, part(w, t, 0));
	m.u.alter.new_isr = (hw_idset){ .n = 1, .id = { L } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_NONE);
	s = part(w, t, 0);
	assert_true(set_is(&s.elr, 1, f1));
	m = alter_req(w, L, s);
	m.u.alter.new_isr = (hw_idset){ .n = 2, .id = { L, f2 } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_NONE);
	s = part(w, t, 0);
	assert_int_equal(s.elr.n, 0);
	assert_int_equal(s.last_known_elr.n, 0);
	/* Changing min.insync.replicas clears the ELR. */
	m = alter_req(w, L, s);
	m.u.alter.new_isr = (hw_idset){ .n = 1, .id = { L } };
	assert_int_equal(send_alter(w, &m).error, HW_ERR_NONE);
	assert_int_equal(part(w, t, 0).elr.n, 1);
	int16_t err;
	assert_int_equal(hw_ctrl_alter_config(w->ctrl, "elr", "min.insync.replicas", "3", &err), 0);
	assert_int_equal(err, HW_ERR_NONE);
	s = part(w, t, 0);
	assert_int_equal(s.elr.n, 0);
	assert_int_equal(s.min_insync_replicas, 3);
	assert_int_equal(hw_ctrl_alter_config(w->ctrl, "elr", "min.insync.replicas", "x", &err), 0);
	assert_int_equal(err, HW_ERR_INVALID_CONFIG);
	assert_int_equal(hw_ctrl_alter_config(w->ctrl, "elr", "compression.type", "producer", &err), 0);
	assert_int_equal(err, HW_ERR_NONE);
	assert_int_equal(hw_ctrl_alter_config(w->ctrl, "elr", "compression.type", "zstd", &err), 0);
	assert_int_equal(err, HW_ERR_INVALID_CONFIG);
	assert_int_equal(hw_ctrl_alter_config(w->ctrl, "nope", "min.insync.replicas", "2", &err), 0);
	assert_int_equal(err, HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);
	world_free(w);
}

/* ------------------------------------------------- messages and answers */

static void test_admin_messages(void **state)
{
	(void)state;
	world *w = world_new(0);
	hw_broker_register_req rr = { .broker_id = 5, .incarnation_id = 42, .previous_broker_epoch = -1 };
	snprintf(rr.control_ep, sizeof(rr.control_ep), "udp:127.0.0.1:9105");
	hw_msg m = { .type = HW_MSG_BROKER_REGISTER, .src = 5, .correlation_id = 1 };
	m.u.other = &rr;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	cap_msg *last = &w->net.msgs[w->net.n - 1];
	assert_int_equal(last->m.type, HW_MSG_BROKER_HEARTBEAT_RESP);
	assert_int_equal(last->m.dst, 5);
	assert_int_equal(last->hb.error, HW_ERR_NONE);
	assert_int_equal(last->hb.is_fenced, 1);
	int64_t epoch = last->hb.broker_epoch;
	assert_true(epoch > 0);
	/* a retry by the same incarnation gets the same epoch */
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	assert_int_equal(w->net.msgs[w->net.n - 1].hb.broker_epoch, epoch);
	hw_broker_heartbeat_req hr = { .broker_id = 5, .broker_epoch = epoch };
	m = (hw_msg){ .type = HW_MSG_BROKER_HEARTBEAT, .src = 5, .correlation_id = 2 };
	m.u.other = &hr;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	last = &w->net.msgs[w->net.n - 1];
	assert_int_equal(last->m.correlation_id, 2);
	assert_int_equal(last->hb.is_fenced, 0);
	hr.broker_epoch = epoch + 100;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	assert_int_equal(w->net.msgs[w->net.n - 1].hb.error, HW_ERR_STALE_BROKER_EPOCH);

	hw_create_topic_req ct = { .partitions = 2, .replication_factor = 1 };
	snprintf(ct.name, sizeof(ct.name), "adm");
	m = (hw_msg){ .type = HW_MSG_CREATE_TOPIC, .src = 1000, .correlation_id = 3 };
	m.u.other = &ct;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	last = &w->net.msgs[w->net.n - 1];
	assert_int_equal(last->m.type, HW_MSG_CREATE_TOPIC_RESP);
	assert_int_equal(last->m.dst, 1000);
	assert_int_equal(last->ct.error, HW_ERR_NONE);
	assert_true(last->ct.topic_id > 0);

	hw_topic_name names[2];
	memset(names, 0, sizeof(names));
	snprintf(names[0].s, sizeof(names[0].s), "adm");
	snprintf(names[1].s, sizeof(names[1].s), "missing");
	hw_describe_topic_req dr = { .n_topics = 2, .topics = names };
	m = (hw_msg){ .type = HW_MSG_DESCRIBE_TOPIC, .src = 1000, .correlation_id = 4 };
	m.u.other = &dr;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	last = &w->net.msgs[w->net.n - 1];
	assert_int_equal(last->m.type, HW_MSG_DESCRIBE_TOPIC_RESP);
	assert_int_equal(last->n_topics, 2);
	assert_string_equal(last->t0.name, "adm");
	assert_int_equal(last->t0.n_parts, 2);
	assert_int_equal(last->p0.leader, 5);
	assert_int_equal(last->p0.high_watermark, -1);

	hw_metadata_req mr = { 0 };
	m = (hw_msg){ .type = HW_MSG_METADATA, .src = 1000, .correlation_id = 5 };
	m.u.other = &mr;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	last = &w->net.msgs[w->net.n - 1];
	assert_int_equal(last->m.type, HW_MSG_METADATA_RESP);
	assert_int_equal(last->n_topics, 1);
	assert_int_equal(last->t0.topic_id, w->net.msgs[w->net.n - 3].ct.topic_id);
	/* A body-less admin message is counted, not crashed on. */
	m.u.other = NULL;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_MESSAGES_IGNORED), 1);
	world_free(w);
}

/* ---------------------------------------------------------- persistence */

typedef struct snapshot {
	int n_brokers, n_topics;
	hw_ctrl_broker_info brokers[16];
	hw_ctrl_topic_info topics[8];
	hw_partition_state parts[8][16];
} snapshot;

static void snap(world *w, snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->n_brokers = hw_ctrl_broker_count(w->ctrl);
	for (int i = 0; i < s->n_brokers; i++)
		assert_int_equal(hw_ctrl_broker_at(w->ctrl, i, &s->brokers[i]), 0);
	s->n_topics = hw_ctrl_topic_count(w->ctrl);
	for (int i = 0; i < s->n_topics; i++) {
		assert_int_equal(hw_ctrl_topic_at(w->ctrl, i, &s->topics[i]), 0);
		for (int p = 0; p < s->topics[i].partitions; p++)
			s->parts[i][p] = part(w, s->topics[i].id, (uint32_t)p);
	}
}

static void reopen(world *w)
{
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	world_open(w);
}

static off_t file_size(const char *p)
{
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

static void test_persistence_and_replay(void **state)
{
	(void)state;
	world *w = world_new(1);
	for (int id = 1; id <= 4; id++)
		reg_and_unfence(w, id);
	create(w, "p1", 5, 3, "2", NULL);
	create(w, "p2", 3, 2, NULL, "true");
	int victim = 1 + (int)below(4);
	fence_now(w, victim);
	int16_t err;
	assert_int_equal(hw_ctrl_alter_config(w->ctrl, "p1", "min.insync.replicas", "3", &err), 0);
	snapshot a, b;
	snap(w, &a);
	reopen(w);
	snap(w, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_MLOG_RECORDS_REPLAYED) > 10);
	/* Broker epochs keep growing across a restart. */
	int64_t old = w->epoch[victim];
	reg(w, victim, -1);
	assert_true(w->epoch[victim] > old);
	/* A new topic after restart gets a fresh id. */
	uint32_t t3 = create(w, "p3", 1, 1, NULL, NULL);
	assert_true(t3 > a.topics[1].id);
	snap(w, &a);

	/* Torn tail: a half-written record is cut off at the next start. */
	off_t good = file_size(w->path);
	int fd = open(w->path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	uint8_t torn[13] = { 40, 0, 0, 0, 1, 2, 3, 4, 3, 9, 9, 9, 9 }; /* says 40 bytes, has 5 */
	assert_int_equal(write(fd, torn, sizeof(torn)), (ssize_t)sizeof(torn));
	close(fd);
	reopen(w);
	assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_MLOG_TORN_BYTES_TRUNCATED), sizeof(torn));
	assert_int_equal(file_size(w->path), good);
	snap(w, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	/* A whole record with a bad checksum is also a torn tail. */
	fd = open(w->path, O_WRONLY | O_APPEND);
	uint8_t badcrc[10] = { 2, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, 1, 0 };
	assert_int_equal(write(fd, badcrc, sizeof(badcrc)), (ssize_t)sizeof(badcrc));
	close(fd);
	reopen(w);
	assert_int_equal(file_size(w->path), good);
	snap(w, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	/* Brokers get a fresh session at controller start: not fenced before
	 * the session timeout counted from the restart. */
	advance(w, (int64_t)w->cfg.session_timeout_ms * MS);
	hw_ctrl_broker_info bi;
	assert_int_equal(hw_ctrl_broker_get(w->ctrl, victim == 1 ? 2 : 1, &bi), 0);
	assert_int_equal(bi.state, HW_CTRL_BROKER_ACTIVE);
	advance(w, 1);
	assert_int_equal(hw_ctrl_broker_get(w->ctrl, victim == 1 ? 2 : 1, &bi), 0);
	assert_int_equal(bi.state, HW_CTRL_BROKER_FENCED);
	/* Not our file: refused. */
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	fd = open(w->path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "NOTAMLOG", 8), 8);
	close(fd);
	assert_int_equal(hw_ctrl_create(&w->cfg, &w->clock.base, &w->net.base, &w->ctrl), -EBADMSG);
	assert_null(w->ctrl);
	world_free(w);
}

/* docs/security.md "Faults": a bad record with valid records after it is
 * corruption, not a torn tail: the controller refuses to start (-EUCLEAN)
 * and leaves the file as it was, instead of forgetting the topics after it
 * and handing their ids out again. */
static void test_mlog_midfile_corruption(void **state)
{
	(void)state;
	world *w = world_new(1);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	create(w, "a", 1, 3, NULL, NULL);
	uint32_t tb = create(w, "b", 2, 3, NULL, NULL);
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	off_t size = file_size(w->path);
	/* flip one payload byte of the first record (header 8, record header 8) */
	off_t at = 8 + 8 + 1 + (off_t)below(4);
	int fd = open(w->path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t byte;
	assert_int_equal(pread(fd, &byte, 1, at), 1);
	byte ^= 0x40;
	assert_int_equal(pwrite(fd, &byte, 1, at), 1);
	close(fd);
	assert_int_equal(hw_ctrl_create(&w->cfg, &w->clock.base, &w->net.base, &w->ctrl), -EUCLEAN);
	assert_null(w->ctrl);
	assert_int_equal(file_size(w->path), size);          /* nothing truncated */
	/* repaired, it starts and keeps the ids: a new topic gets a fresh one */
	fd = open(w->path, O_RDWR);
	byte ^= 0x40;
	assert_int_equal(pwrite(fd, &byte, 1, at), 1);
	close(fd);
	world_open(w);
	uint32_t tc = create(w, "c", 1, 3, NULL, NULL);
	assert_true(tc > tb);
	world_free(w);
}

static void test_compaction(void **state)
{
	(void)state;
	world *w = world_new(1);
	hw_ctrl_destroy(w->ctrl);
	w->cfg.fsync = 0; /* thousands of records: no fdatasync each */
	world_open(w);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	create(w, "c", 4, 3, "2", NULL);
	int cycles = 550 + (int)below(100); /* >= 2 records each */
	for (int i = 0; i < cycles; i++) {
		int b = 1 + (int)below(3);
		fence_now(w, b);
		hb(w, b, 0);
	}
	int64_t max_epoch = 0;
	for (int id = 1; id <= 3; id++)
		max_epoch = w->epoch[id] > max_epoch ? w->epoch[id] : max_epoch;
	snapshot a, b;
	snap(w, &a);
	off_t big = file_size(w->path);
	reopen(w);
	off_t small = file_size(w->path);
	assert_true(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_MLOG_RECORDS_REPLAYED) >= 1000);
	assert_true(small * 4 < big);
	snap(w, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	/* Epochs keep growing after compaction. */
	reg(w, 2, -1);
	assert_true(w->epoch[2] > max_epoch);
	snap(w, &a);
	reopen(w); /* the compacted log replays to the same state */
	assert_true(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_MLOG_RECORDS_REPLAYED) < 100);
	snap(w, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	reg(w, 3, -1);
	assert_true(w->epoch[3] > w->epoch[2]);
	world_free(w);
}

static void test_auto_leader_rebalance(void **state)
{
	(void)state;
	for (int enabled = 0; enabled <= 1; enabled++) {
		world *w = calloc(1, sizeof(*w));
		assert_non_null(w);
		w->clock.now = 1000 * MS;
		hw_ctrl_config_defaults(&w->cfg);
		w->cfg.auto_leader_rebalance = (uint8_t)enabled;
		w->cfg.leader_imbalance_check_interval_ms = 20000 + (int32_t)below(20000);
		world_open(w);
		int64_t t0 = w->clock.now; /* checks run every interval from the start */
		for (int id = 1; id <= 3; id++)
			reg_and_unfence(w, id);
		uint32_t t = create(w, "lb", 3, 3, "1", NULL);
		hw_partition_state s0 = part(w, t, 0);
		int32_t pref = s0.leader;
		fence_now(w, pref);
		hw_partition_state s1 = part(w, t, 0);
		assert_true(s1.leader != pref);
		hb(w, pref, 0);
		/* the new leader takes the preferred replica back into the ISR */
		hw_msg m = alter_req(w, s1.leader, s1);
		m.u.alter.new_isr = s0.replicas;
		for (int i = 0; i < HW_MAX_RF; i++)
			m.u.alter.new_isr_broker_epochs[i] = -1;
		assert_int_equal(send_alter(w, &m).error, HW_ERR_NONE);
		assert_int_equal(part(w, t, 0).leader, s1.leader);
		/* nothing before the check interval, preferred leader after it */
		int64_t until = t0 + (int64_t)w->cfg.leader_imbalance_check_interval_ms * MS;
		assert_true(w->clock.now < until - 2000 * MS);
		while (w->clock.now + 1000 * MS < until - 2000 * MS) {
			run_heartbeats(w, 1u << 1 | 1u << 2 | 1u << 3, 1000);
			assert_int_equal(part(w, t, 0).leader, s1.leader);
		}
		run_heartbeats(w, 1u << 1 | 1u << 2 | 1u << 3, 4000);
		hw_partition_state s2 = part(w, t, 0);
		if (enabled) {
			assert_int_equal(s2.leader, pref);
			assert_int_equal(s2.leader_epoch, part(w, t, 0).leader_epoch);
			assert_true(s2.leader_epoch > s1.leader_epoch);
			assert_int_equal(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_ELECTIONS_PREFERRED), 1);
		} else {
			assert_int_equal(s2.leader, s1.leader);
		}
		/* every partition is led by its preferred replica again (or was never moved) */
		for (uint32_t p = 1; p < 3 && enabled; p++) {
			hw_partition_state sp = part(w, t, p);
			if (hw_idset_has(&sp.isr, sp.replicas.id[0]))
				assert_int_equal(sp.leader, sp.replicas.id[0]);
		}
		world_free(w);
	}
}

static void test_resync_pushes(void **state)
{
	(void)state;
	world *w = world_new(0);
	w->cfg.resync_interval_ms = 10000;
	for (int id = 1; id <= 2; id++)
		reg_and_unfence(w, id);
	uint32_t t = create(w, "r", 1, 2, NULL, NULL);
	int from = w->net.n;
	run_heartbeats(w, 1u << 1 | 1u << 2, 10500);
	/* Every live replica got its partition again (lost pushes heal). */
	assert_true(pushes(w, from, (hw_tp){ t, 0 }, 1) >= 1);
	assert_true(pushes(w, from, (hw_tp){ t, 0 }, 2) >= 1);
	world_free(w);
}

int main(void)
{
	seed_init("controller");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_and_assign),
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_fencing_after_session_timeout),
		cmocka_unit_test(test_election_order_isr),
		cmocka_unit_test(test_unclean_election),
		cmocka_unit_test(test_elr_disabled_keeps_last_isr),
		cmocka_unit_test(test_isr2_elr3_clean_shutdown_keeps_elr),
		cmocka_unit_test(test_isr2_elr3_crash_loses_elr),
		cmocka_unit_test(test_controlled_shutdown_moves_leadership),
		cmocka_unit_test(test_alter_partition_validation),
		cmocka_unit_test(test_alter_partition_elr_maintenance),
		cmocka_unit_test(test_admin_messages),
		cmocka_unit_test(test_persistence_and_replay),
		cmocka_unit_test(test_compaction),
		cmocka_unit_test(test_mlog_midfile_corruption),
		cmocka_unit_test(test_auto_leader_rebalance),
		cmocka_unit_test(test_resync_pushes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
