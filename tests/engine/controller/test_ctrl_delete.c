/* test_ctrl_delete.c — topic deletion and producer id blocks at the
 * controller (docs/kafka.md "DeleteTopics", "InitProducerId"): a deleted
 * topic leaves the controller, every replica gets a deletion push per
 * partition (and again at its next resync), its id is never handed out
 * again — across restarts and compaction — and a recreated topic gets a new
 * one; delete.topic.enable=false refuses; producer id blocks of 1000 never
 * overlap, for two brokers, across a restart and a compaction, and only a
 * registered broker with its current epoch gets one. Fake clock,
 * in-process capturing net, real metadata log files. */
#include <fcntl.h>
#include <sys/stat.h>
#include "ctrl_harness.h"

static hw_delete_topic_resp del(world *w, const char *name, uint32_t id)
{
	hw_delete_topic_req q = { .topic_id = id, .timeout_ms = 1000 };
	snprintf(q.name, sizeof(q.name), "%s", name);
	hw_delete_topic_resp r;
	assert_int_equal(hw_ctrl_delete_topic(w->ctrl, &q, &r), 0);
	return r;
}

/* Deletion pushes captured since message index `from` for topic id t, to
 * broker `to` (-1: any). */
static int deleted_pushes(world *w, int from, uint32_t t, int32_t to)
{
	int n = 0;
	for (int i = from; i < w->net.n; i++) {
		const hw_msg *m = &w->net.msgs[i].m;
		if (m->type == HW_MSG_PARTITION_STATE && m->u.pstate.deleted && m->u.pstate.tp.topic_id == t &&
		    (to < 0 || m->dst == to))
			n++;
	}
	return n;
}

static hw_alloc_pids_resp pids(world *w, int32_t id, int64_t epoch)
{
	hw_alloc_pids_req q = { .broker_id = id, .broker_epoch = epoch };
	hw_alloc_pids_resp r;
	assert_int_equal(hw_ctrl_alloc_producer_ids(w->ctrl, &q, &r), 0);
	return r;
}

/* Let only `id` miss its session (as test_ctrl.c). */
static void fence_now(world *w, int id)
{
	hw_ctrl_broker_info bi;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < hw_ctrl_broker_count(w->ctrl); i++) {
			assert_int_equal(hw_ctrl_broker_at(w->ctrl, i, &bi), 0);
			if (bi.id != id && bi.state == HW_CTRL_BROKER_ACTIVE)
				hb(w, bi.id, 0);
		}
		if (pass == 0)
			w->clock.now += (int64_t)w->cfg.session_timeout_ms * MS + 1;
	}
	assert_int_equal(hw_ctrl_poll(w->ctrl), 0);
	assert_int_equal(hw_ctrl_broker_get(w->ctrl, id, &bi), 0);
	assert_int_equal(bi.state, HW_CTRL_BROKER_FENCED);
}

static void reopen(world *w)
{
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	world_open(w);
}

static void test_delete_pushes_and_forgets(void **state)
{
	(void)state;
	world *w = world_new(0);
	for (int id = 1; id <= 4; id++)
		reg_and_unfence(w, id);
	uint32_t keep = create(w, "keep", 1, 3, NULL, NULL);
	uint32_t t = create(w, "gone", 3, 3, NULL, NULL);
	int from = w->net.n;
	hw_delete_topic_resp r = del(w, "gone", 0);
	assert_int_equal(r.error, HW_ERR_NONE);
	assert_int_equal(r.topic_id, t);
	assert_string_equal(r.name, "gone");
	hw_ctrl_topic_info info;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "gone", &info), -ENOENT);
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "keep", &info), 0);
	assert_true(part(w, keep, 0).leader >= 1); /* the other topic is untouched */
	hw_partition_state s;
	assert_int_equal(hw_ctrl_partition(w->ctrl, (hw_tp){ t, 0 }, &s), -ENOENT);
	/* 3 partitions x 3 replicas, each a deletion to that replica only */
	assert_int_equal(deleted_pushes(w, from, t, -1), 9);
	for (int i = from; i < w->net.n; i++) {
		const hw_msg *m = &w->net.msgs[i].m;
		if (m->type == HW_MSG_PARTITION_STATE && m->u.pstate.deleted)
			assert_true(hw_idset_has(&m->u.pstate.replicas, m->dst));
	}
	/* gone twice, by an id never handed out, by the kept topic's id */
	assert_int_equal(del(w, "gone", 0).error, HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);
	assert_int_equal(del(w, "", t).error, HW_ERR_UNKNOWN_TOPIC_ID);
	assert_int_equal(del(w, "", 999).error, HW_ERR_UNKNOWN_TOPIC_ID);
	/* recreated: a new id, no push for the old one touches it */
	uint32_t t2 = create(w, "gone", 1, 3, NULL, NULL);
	assert_true(t2 > t && t2 != keep);
	/* a replica that missed the push gets it again at its resync */
	int32_t rep = -1;
	for (int id = 1; id <= 4 && rep < 0; id++)
		if (deleted_pushes(w, from, t, id))
			rep = id;
	assert_true(rep > 0);
	from = w->net.n;
	for (int i = 0; i < 12; i++)
		run_heartbeats(w, 0xfull << 1, 1000);
	assert_true(deleted_pushes(w, from, t, rep) >= 1);
	/* by id */
	r = del(w, "", t2);
	assert_int_equal(r.error, HW_ERR_NONE);
	assert_string_equal(r.name, "gone");
	world_free(w);
}

static void test_delete_disabled(void **state)
{
	(void)state;
	world *w = world_new(0);
	hw_ctrl_destroy(w->ctrl);
	w->cfg.delete_topic_enable = 0;
	world_open(w);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	create(w, "stay", 1, 3, NULL, NULL);
	int from = w->net.n;
	assert_int_equal(del(w, "stay", 0).error, HW_ERR_TOPIC_DELETION_DISABLED);
	hw_ctrl_topic_info info;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "stay", &info), 0);
	assert_int_equal(w->net.n, from); /* nothing pushed */
	world_free(w);
}

static off_t file_size(const char *p)
{
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

/* Ids survive restarts and compaction: the deleted topic had the highest
 * id, so only the TOPIC_DELETE record (or the compaction's floor record)
 * keeps it from being handed out again; producer id blocks likewise. */
static void test_ids_survive_restart_and_compaction(void **state)
{
	(void)state;
	world *w = world_new(1);
	hw_ctrl_destroy(w->ctrl);
	w->cfg.fsync = 0;
	world_open(w);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	uint32_t a = create(w, "a", 2, 3, NULL, NULL);
	uint32_t b = create(w, "b", 2, 3, NULL, NULL);
	assert_true(b > a);
	hw_alloc_pids_resp p1 = pids(w, 1, w->epoch[1]);
	hw_alloc_pids_resp p2 = pids(w, 2, w->epoch[2]);
	assert_int_equal(p1.error, HW_ERR_NONE);
	assert_int_equal(p1.count, HW_PRODUCER_ID_BLOCK);
	assert_int_equal(p2.first_id, p1.first_id + HW_PRODUCER_ID_BLOCK);
	assert_int_equal(del(w, "b", 0).error, HW_ERR_NONE);

	reopen(w);
	hw_ctrl_topic_info info;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "b", &info), -ENOENT);
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "a", &info), 0);
	hw_alloc_pids_resp p3 = pids(w, 3, w->epoch[3]);
	assert_int_equal(p3.first_id, p2.first_id + HW_PRODUCER_ID_BLOCK);
	uint32_t c = create(w, "b", 1, 3, NULL, NULL);
	assert_true(c > b);
	assert_int_equal(del(w, "b", 0).error, HW_ERR_NONE); /* the highest id deleted again */

	/* enough records for a compaction at the next start */
	int cycles = 550 + (int)below(50);
	for (int i = 0; i < cycles; i++) {
		int k = 1 + (int)below(3);
		fence_now(w, k);
		hb(w, k, 0);
	}
	off_t big = file_size(w->path);
	reopen(w);
	assert_true(file_size(w->path) * 4 < big); /* compacted */
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "b", &info), -ENOENT);
	reopen(w); /* the compacted log replays the floors too */
	assert_true(hw_ctrl_counter_get(w->ctrl, HW_CTRL_C_MLOG_RECORDS_REPLAYED) < 100);
	uint32_t d = create(w, "d", 1, 3, NULL, NULL);
	assert_true(d > c);
	hw_alloc_pids_resp p4 = pids(w, 1, w->epoch[1]);
	assert_int_equal(p4.first_id, p3.first_id + HW_PRODUCER_ID_BLOCK);
	world_free(w);
}

static void test_producer_ids_need_current_epoch(void **state)
{
	(void)state;
	world *w = world_new(0);
	reg_and_unfence(w, 1);
	assert_int_equal(pids(w, 1, w->epoch[1] - 1).error, HW_ERR_STALE_BROKER_EPOCH);
	assert_int_equal(pids(w, 7, 1).error, HW_ERR_STALE_BROKER_EPOCH); /* never registered */
	hw_alloc_pids_resp r = pids(w, 1, w->epoch[1]);
	assert_int_equal(r.error, HW_ERR_NONE);
	/* above every id the broker-computed scheme (epoch << 20 + counter)
	 * could have handed out */
	assert_true(r.first_id >= (w->epoch[1] + 1) << 20);
	assert_int_equal(hw_ctrl_next_producer_id(w->ctrl), r.first_id + HW_PRODUCER_ID_BLOCK);
	world_free(w);
}

int main(void)
{
	seed_init("controller_delete");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delete_pushes_and_forgets),
		cmocka_unit_test(test_delete_disabled),
		cmocka_unit_test(test_ids_survive_restart_and_compaction),
		cmocka_unit_test(test_producer_ids_need_current_epoch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
