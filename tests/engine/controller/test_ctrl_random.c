/* test_ctrl_random.c — randomized controller runs (seeded by HW_TEST_SEED):
 * brokers crash, restart cleanly or not, shut down cleanly, go silent and
 * come back; leaders send valid and stale AlterPartitions; topic configs
 * change; the controller itself restarts from its metadata log. After every
 * step the partition invariants are checked:
 *   - ISR, ELR ⊆ replicas, no duplicates, ISR ∩ ELR = ∅;
 *   - a leader is in the ISR and is an active (unfenced, not shutting down)
 *     broker; with ELR on every ISR member is active;
 *   - leader and partition epochs never go down; a new leader means a new
 *     leader epoch;
 *   - ELR non-empty only while ISR < min ISR;
 *   - leader -1 only when nobody could be elected (no active ISR member, no
 *     active ELR member when the ISR is empty, not the last known leader
 *     when ISR and ELR are empty, and no active replica at all when unclean
 *     election is on) — elections are never missed;
 *   - the last known ELR is empty or one broker, and empty while there is
 *     a leader;
 *   - a controller restart reproduces the state exactly. */
#include <errno.h>
#include "ctrl_harness.h"

#define NB 5
#define NT 3

typedef struct model {
	int alive[NB + 1];          /* process up and heartbeating */
	int64_t clean_epoch[NB + 1]; /* epoch in its clean-shutdown file, -1 none */
	int32_t last_le[NT + 1][8], last_pe[NT + 1][8], last_leader[NT + 1][8];
} model;

static int broker_state(world *w, int32_t id)
{
	hw_ctrl_broker_info bi;
	if (hw_ctrl_broker_get(w->ctrl, id, &bi))
		return HW_CTRL_BROKER_UNREGISTERED;
	return bi.state;
}

static int active(world *w, int32_t id) { return broker_state(w, id) == HW_CTRL_BROKER_ACTIVE; }

static void check_invariants(world *w, model *md, const char *after)
{
	hw_ctrl_topic_info ti;
	for (int t = 0; hw_ctrl_topic_at(w->ctrl, t, &ti) == 0; t++) {
		for (int p = 0; p < ti.partitions; p++) {
			hw_partition_state s = part(w, ti.id, (uint32_t)p);
			char a[48], b[48];
			for (int i = 0; i < s.isr.n; i++) {
				assert_true(hw_idset_has(&s.replicas, s.isr.id[i]));
				assert_false(hw_idset_has(&s.elr, s.isr.id[i]));
				for (int j = 0; j < i; j++)
					assert_true(s.isr.id[i] != s.isr.id[j]);
				if (!active(w, s.isr.id[i]))
					fail_msg("after %s: %s-%d ISR %s holds inactive broker %d", after, ti.name, p,
						 hw_ctrl_idset_str(&s.isr, a, sizeof(a)), s.isr.id[i]);
			}
			for (int i = 0; i < s.elr.n; i++) {
				assert_true(hw_idset_has(&s.replicas, s.elr.id[i]));
				for (int j = 0; j < i; j++)
					assert_true(s.elr.id[i] != s.elr.id[j]);
			}
			int min_isr = ti.min_insync_replicas < s.replicas.n ? ti.min_insync_replicas : s.replicas.n;
			if (s.elr.n && s.isr.n >= min_isr)
				fail_msg("after %s: %s-%d ELR %s with ISR %s >= min ISR %d", after, ti.name, p,
					 hw_ctrl_idset_str(&s.elr, a, sizeof(a)),
					 hw_ctrl_idset_str(&s.isr, b, sizeof(b)), min_isr);
			assert_true(s.last_known_elr.n <= 1);
			if (s.leader >= 0) {
				assert_int_equal(s.last_known_elr.n, 0);
				assert_true(hw_idset_has(&s.isr, s.leader));
				assert_true(active(w, s.leader));
			} else {
				int could = 0;
				for (int i = 0; i < s.isr.n; i++)
					could |= active(w, s.isr.id[i]);
				if (s.isr.n == 0)
					for (int i = 0; i < s.elr.n; i++)
						could |= active(w, s.elr.id[i]);
				/* the last known leader, once ISR and ELR are empty */
				if (s.isr.n == 0 && s.elr.n == 0 && s.last_known_elr.n == 1)
					could |= active(w, s.last_known_elr.id[0]);
				if (ti.unclean_leader_election)
					for (int i = 0; i < s.replicas.n; i++)
						could |= active(w, s.replicas.id[i]);
				if (could)
					fail_msg("after %s: %s-%d offline although a leader could be elected "
						 "(isr %s elr %s)", after, ti.name, p,
						 hw_ctrl_idset_str(&s.isr, a, sizeof(a)),
						 hw_ctrl_idset_str(&s.elr, b, sizeof(b)));
			}
			int32_t *le = &md->last_le[ti.id][p], *pe = &md->last_pe[ti.id][p],
				*ld = &md->last_leader[ti.id][p];
			assert_true(s.leader_epoch >= *le);
			assert_true(s.partition_epoch >= *pe);
			if (s.leader != *ld && *le >= 0)
				assert_true(s.leader_epoch > *le);
			*le = s.leader_epoch;
			*pe = s.partition_epoch;
			*ld = s.leader;
		}
	}
}

static void heartbeat_alive(world *w, model *md)
{
	for (int b = 1; b <= NB; b++)
		if (md->alive[b]) {
			hw_broker_heartbeat_resp r = hb(w, b, 0);
			assert_int_equal(r.error, HW_ERR_NONE);
		}
}

static void random_alter(world *w, model *md)
{
	hw_ctrl_topic_info ti;
	int t = (int)below(NT);
	if (hw_ctrl_topic_at(w->ctrl, t, &ti))
		return;
	uint32_t p = (uint32_t)below((uint64_t)ti.partitions);
	hw_partition_state s = part(w, ti.id, p);
	if (s.leader < 0 || !md->alive[s.leader])
		return;
	hw_msg m = { .type = HW_MSG_ALTER_PARTITION, .src = s.leader, .correlation_id = (uint32_t)rnd() };
	hw_alter_partition_req *r = &m.u.alter;
	r->broker_id = s.leader;
	r->broker_epoch = w->epoch[s.leader];
	r->tp = s.tp;
	r->leader_epoch = s.leader_epoch;
	r->partition_epoch = s.partition_epoch;
	r->leader_recovery_state = HW_LRS_RECOVERED;
	r->new_isr.id[r->new_isr.n++] = s.leader;
	for (int i = 0; i < s.replicas.n; i++) {
		int32_t id = s.replicas.id[i];
		if (id != s.leader && active(w, id) && below(2))
			r->new_isr.id[r->new_isr.n++] = id;
	}
	for (int i = 0; i < HW_MAX_RF; i++)
		r->new_isr_broker_epochs[i] = -1;
	int16_t expect = HW_ERR_NONE;
	switch (below(6)) {
	case 0:
		r->partition_epoch--;
		expect = HW_ERR_INVALID_UPDATE_VERSION;
		break;
	case 1:
		r->broker_epoch--;
		expect = HW_ERR_STALE_BROKER_EPOCH;
		break;
	default:
		break;
	}
	int from = w->net.n;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	assert_true(w->net.n > from);
	const hw_msg *o = &w->net.msgs[w->net.n - 1].m;
	for (int i = from; i < w->net.n; i++)
		if (w->net.msgs[i].m.type == HW_MSG_ALTER_PARTITION_RESP)
			o = &w->net.msgs[i].m;
	assert_int_equal(o->type, HW_MSG_ALTER_PARTITION_RESP);
	assert_int_equal(o->u.alter_resp.error, expect);
}

typedef struct snapshot {
	hw_ctrl_broker_info brokers[NB];
	hw_partition_state parts[NT][8];
} snapshot;

static void snap(world *w, snapshot *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < hw_ctrl_broker_count(w->ctrl) && i < NB; i++)
		assert_int_equal(hw_ctrl_broker_at(w->ctrl, i, &s->brokers[i]), 0);
	hw_ctrl_topic_info ti;
	for (int t = 0; hw_ctrl_topic_at(w->ctrl, t, &ti) == 0; t++)
		for (int p = 0; p < ti.partitions; p++)
			s->parts[t][p] = part(w, ti.id, (uint32_t)p);
}

static void test_random_runs(void **state)
{
	(void)state;
	for (int run = 0; run < 12; run++) {
		world *w = world_new(run % 3 == 0);
		w->cfg.elr_enabled = 1;
		model md;
		memset(&md, 0, sizeof(md));
		for (int t = 0; t <= NT; t++)
			for (int p = 0; p < 8; p++)
				md.last_le[t][p] = -1;
		for (int b = 1; b <= NB; b++) {
			reg_and_unfence(w, b);
			md.alive[b] = 1;
			md.clean_epoch[b] = -1;
		}
		for (int t = 0; t < NT; t++) {
			char name[16], mi[8];
			snprintf(name, sizeof(name), "t%d", t);
			snprintf(mi, sizeof(mi), "%d", 1 + (int)below(3));
			create(w, name, 1 + (int)below(8), 1 + (int)below(NB < HW_MAX_RF ? NB : HW_MAX_RF), mi,
			       below(3) == 0 ? "true" : "false");
		}
		check_invariants(w, &md, "create");
		for (int step = 0; step < 300; step++) {
			int b = 1 + (int)below(NB);
			const char *what;
			switch (below(10)) {
			case 0: /* crash */
				what = "crash";
				md.alive[b] = 0;
				md.clean_epoch[b] = -1;
				break;
			case 1: /* restart (clean or not, as it last stopped) */
				what = "restart";
				if (!md.alive[b]) {
					reg(w, b, md.clean_epoch[b]);
					md.clean_epoch[b] = -1;
					md.alive[b] = 1;
					hb(w, b, 0);
				}
				break;
			case 2: { /* controlled shutdown */
				what = "controlled shutdown";
				if (!md.alive[b])
					break;
				hw_broker_heartbeat_resp r = hb(w, b, 1);
				assert_int_equal(r.should_shut_down, 1);
				md.clean_epoch[b] = w->epoch[b];
				md.alive[b] = 0;
				break;
			}
			case 3: /* silence long enough to be fenced */
				what = "session timeout";
				heartbeat_alive(w, &md);
				advance(w, (int64_t)w->cfg.session_timeout_ms / 2 * MS);
				heartbeat_alive(w, &md);
				advance(w, ((int64_t)w->cfg.session_timeout_ms / 2 + 1) * MS);
				heartbeat_alive(w, &md);
				break;
			case 4: {
				what = "alter config";
				int16_t err;
				char name[16], v[8];
				snprintf(name, sizeof(name), "t%d", (int)below(NT));
				if (below(2)) {
					snprintf(v, sizeof(v), "%d", 1 + (int)below(3));
					assert_int_equal(hw_ctrl_alter_config(w->ctrl, name, "min.insync.replicas", v, &err), 0);
				} else {
					assert_int_equal(hw_ctrl_alter_config(w->ctrl, name, "unclean.leader.election.enable",
									      below(2) ? "true" : "false", &err), 0);
				}
				assert_int_equal(err, HW_ERR_NONE);
				break;
			}
			case 5:
				what = "controller restart";
				if (w->path[0]) {
					snapshot a, s2;
					snap(w, &a);
					hw_ctrl_destroy(w->ctrl);
					w->ctrl = NULL;
					world_open(w);
					snap(w, &s2);
					assert_memory_equal(&a, &s2, sizeof(a));
				}
				break;
			default:
				what = "alter partition";
				random_alter(w, &md);
				break;
			}
			advance(w, (int64_t)below(1500) * MS);
			heartbeat_alive(w, &md);
			check_invariants(w, &md, what);
		}
		world_free(w);
	}
}

int main(void)
{
	seed_init("controller_random");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
