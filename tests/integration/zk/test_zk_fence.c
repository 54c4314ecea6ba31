/* test_zk_fence.c — the ZooKeeper store's fencing against a real ZooKeeper
 * server (docs/controller-ha.md "Fencing a zombie", "Metadata in
 * ZooKeeper"); run by it_zk_fence.sh with HW_ZK_CONNECT set. Everything
 * lives under a chroot of its own. Two hw_zk instances (controllers 1 and
 * 2) and a raw client that plays "another controller" / "another writer":
 *   - the first wins /controller with epoch 1 and writes a record;
 *   - the second stands by and names the first as active;
 *   - the epoch is bumped under the first's live session: its next write
 *     fails on the /controller_epoch version (-ESTALE, counted), it steps
 *     down and deletes /controller; the second takes over with a higher
 *     epoch and loads the record;
 *   - another writer changes the entity znode: the second's write fails on
 *     the entity version;
 *   - a clean destroy of the active one deletes /controller at once;
 * and topic deletion's znodes (docs/kafka.md "DeleteTopics"): a TOPIC_DELETE
 * record removes the topic's topic, config and partition znodes in its
 * multi-op and leaves /hiwater/deleted_topic (the id floor); PRODUCER_IDS
 * is /hiwater/latest_producer_id_block; a load replays both. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <zookeeper/zookeeper.h>
#include "hw_ctrl_int.h"
#include "hw_ctrl_zk.h"

static char root[64], connect_str[512];
static zhandle_t *raw;

static void raw_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

/* Poll z until it asks for `want` (or `ms` pass). */
static hw_zk_action poll_until(hw_zk *z, hw_zk_action want, int ms)
{
	for (int t = 0; t < ms; t += 20) {
		struct pollfd p = { .fd = hw_zk_wait_fd(z), .events = POLLIN };
		(void)poll(&p, 1, 20);
		hw_zk_action a = hw_zk_poll(z);
		if (a == want)
			return a;
	}
	return HW_ZK_ACT_NONE;
}

static int wait_standby(hw_zk *z, int32_t active, int ms)
{
	for (int t = 0; t < ms; t += 20) {
		struct pollfd p = { .fd = hw_zk_wait_fd(z), .events = POLLIN };
		(void)poll(&p, 1, 20);
		(void)hw_zk_poll(z);
		if (hw_zk_active_id(z, NULL, 0) == active && !hw_zk_is_active(z))
			return 1;
	}
	return 0;
}

static hw_zk *new_zk(int32_t id)
{
	hw_zk_cfg cfg = { .connect = connect_str, .session_timeout_ms = 4000, .node_id = id,
			  .control_ep = "udp:127.0.0.1:1" };
	hw_zk *z = NULL;
	assert_int_equal(hw_zk_create(&cfg, &z), 0);
	return z;
}

static uint8_t rec[12] = { 7, 0, 0, 0, 'b', 'r', 'o', 'k', 'e', 'r', '-', '7' }; /* BROKER id 7 */

static int seen_records;
static int on_record(void *arg, uint8_t type, const uint8_t *p, size_t len)
{
	(void)arg;
	if (type == HW_CTRL_REC_BROKER && len == sizeof(rec) && !memcmp(p, rec, len))
		seen_records++;
	return 0;
}

static void test_fencing(void **state)
{
	(void)state;
	const hw_ctrl_store *s1, *s2;
	hw_zk *z1 = new_zk(1);
	assert_int_equal(poll_until(z1, HW_ZK_ACT_BECOME_ACTIVE, 10000), HW_ZK_ACT_BECOME_ACTIVE);
	assert_int_equal(hw_zk_epoch(z1), 1);
	s1 = hw_zk_store(z1);
	uint64_t n = 0;
	assert_int_equal(s1->ops->load(s1->ctx, on_record, NULL, &n), 0);
	assert_int_equal(s1->ops->write(s1->ctx, HW_CTRL_REC_BROKER, rec, sizeof(rec), 1), 0);
	char buf[64], path[128];
	int len = sizeof(buf);
	snprintf(path, sizeof(path), "%s/hiwater/brokers/7", root);
	assert_int_equal(zoo_get(raw, path, 0, buf, &len, NULL), ZOK);
	assert_int_equal(len, (int)sizeof(rec));
	assert_memory_equal(buf, rec, sizeof(rec));

	hw_zk *z2 = new_zk(2);
	assert_true(wait_standby(z2, 1, 10000));

	/* another controller's epoch bump while z1's session lives */
	struct Stat st;
	len = sizeof(buf) - 1;
	snprintf(path, sizeof(path), "%s/controller_epoch", root);
	assert_int_equal(zoo_get(raw, path, 0, buf, &len, &st), ZOK);
	assert_int_equal(zoo_set(raw, path, "2", 1, st.version), ZOK);
	assert_int_equal(s1->ops->write(s1->ctx, HW_CTRL_REC_BROKER, rec, sizeof(rec), 2), -ESTALE);
	assert_int_equal(hw_zk_counter_get(z1, HW_ZK_C_WRITES_FAILED_EPOCH_VERSION), 1);
	assert_int_equal(hw_zk_poll(z1), HW_ZK_ACT_STEP_DOWN);
	assert_false(hw_zk_is_active(z1));
	/* a fenced store writes nothing more */
	assert_int_equal(s1->ops->write(s1->ctx, HW_CTRL_REC_BROKER, rec, sizeof(rec), 3), -ESTALE);

	/* z1 deleted /controller: z2 wins with an epoch above the bump */
	assert_int_equal(poll_until(z2, HW_ZK_ACT_BECOME_ACTIVE, 10000), HW_ZK_ACT_BECOME_ACTIVE);
	assert_int_equal(hw_zk_epoch(z2), 3);
	s2 = hw_zk_store(z2);
	seen_records = 0;
	assert_int_equal(s2->ops->load(s2->ctx, on_record, NULL, &n), 0);
	assert_int_equal(seen_records, 1);
	assert_int_equal(n, 1); /* /hiwater/seq: the record number written */
	assert_int_equal(s2->ops->write(s2->ctx, HW_CTRL_REC_BROKER, rec, sizeof(rec), 2), 0);

	/* another writer changes the entity: z2's write fails on its version */
	snprintf(path, sizeof(path), "%s/hiwater/brokers/7", root);
	assert_int_equal(zoo_set(raw, path, "x", 1, -1), ZOK);
	assert_int_equal(s2->ops->write(s2->ctx, HW_CTRL_REC_BROKER, rec, sizeof(rec), 3), -ESTALE);
	assert_int_equal(hw_zk_counter_get(z2, HW_ZK_C_WRITES_FAILED_ENTITY_VERSION), 1);
	assert_int_equal(hw_zk_poll(z2), HW_ZK_ACT_STEP_DOWN);

	/* one of them is active again; a clean destroy deletes /controller */
	hw_zk *act = NULL;
	for (int t = 0; t < 10000 && !act; t += 20) {
		struct pollfd p[2] = { { .fd = hw_zk_wait_fd(z1), .events = POLLIN },
				       { .fd = hw_zk_wait_fd(z2), .events = POLLIN } };
		(void)poll(p, 2, 20);
		if (hw_zk_poll(z1) == HW_ZK_ACT_BECOME_ACTIVE)
			act = z1;
		else if (hw_zk_poll(z2) == HW_ZK_ACT_BECOME_ACTIVE)
			act = z2;
	}
	assert_non_null(act);
	hw_zk_destroy(act);
	snprintf(path, sizeof(path), "%s/controller", root);
	assert_int_equal(zoo_exists(raw, path, 0, NULL), ZNONODE);
	hw_zk_destroy(act == z1 ? z2 : z1);
}

static int seen_delete, seen_pids, seen_topic5;
static int on_any(void *arg, uint8_t type, const uint8_t *p, size_t len)
{
	(void)arg;
	seen_delete += type == HW_CTRL_REC_TOPIC_DELETE && len >= 8 && p[0] == 5 && p[4] == 2;
	seen_pids += type == HW_CTRL_REC_PRODUCER_IDS && len == 20;
	seen_topic5 += (type == HW_CTRL_REC_TOPIC || type == HW_CTRL_REC_PARTITION) && len >= 4 && p[0] == 5;
	return 0;
}

static int exists(const char *rel)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/hiwater/%s", root, rel);
	return zoo_exists(raw, path, 0, NULL) == ZOK;
}

static void test_delete_znodes(void **state)
{
	(void)state;
	hw_zk *z = new_zk(3);
	assert_int_equal(poll_until(z, HW_ZK_ACT_BECOME_ACTIVE, 10000), HW_ZK_ACT_BECOME_ACTIVE);
	const hw_ctrl_store *s = hw_zk_store(z);
	uint64_t n = 0;
	assert_int_equal(s->ops->load(s->ctx, on_any, NULL, &n), 0);
	/* topic 5 with 2 partitions, its config and both partitions changed */
	/* a TOPIC record the store decodes (it mirrors the topic's configs at
	 * /config/topics/<name>): id 5, min ISR 1, unclean 0, name "t", 2
	 * partitions, RF 1, replicas {1} {1}; a TOPIC_CONFIG of an old writer */
	uint8_t topic[26] = { 5, 0, 0, 0, 1, 0, 0, 1, 0, 't', 2, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0 };
	uint8_t cfg[7] = { 5, 0, 0, 0, 2, 0, 0 };
	uint8_t p0[8] = { 5, 0, 0, 0, 0, 0, 0, 0 }, p1[8] = { 5, 0, 0, 0, 1, 0, 0, 0 };
	uint8_t other[8] = { 6, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_TOPIC, topic, sizeof(topic), n + 1), 0);
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_TOPIC_CONFIG, cfg, sizeof(cfg), n + 2), 0);
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_PARTITION, p0, sizeof(p0), n + 3), 0);
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_PARTITION, p1, sizeof(p1), n + 4), 0);
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_PARTITION, other, sizeof(other), n + 5), 0);
	assert_true(exists("topics/5") && exists("topic_configs/5") && exists("partitions/5-1"));
	char mirror[128];
	snprintf(mirror, sizeof(mirror), "%s/config/topics/t", root);
	assert_int_equal(zoo_exists(raw, mirror, 0, NULL), ZOK); /* Kafka's config znode, with the topic */
	uint8_t del[11] = { 5, 0, 0, 0, 2, 0, 0, 0, 1, 0, 't' };
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_TOPIC_DELETE, del, sizeof(del), n + 6), 0);
	assert_false(exists("topics/5"));
	assert_false(exists("topic_configs/5"));
	assert_false(exists("partitions/5-0"));
	assert_false(exists("partitions/5-1"));
	assert_true(exists("partitions/6-0")); /* another topic's: kept */
	assert_true(exists("deleted_topic"));
	assert_int_equal(zoo_exists(raw, mirror, 0, NULL), ZNONODE); /* and gone with it */
	uint8_t pids[20] = { 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0xe8, 3, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_PRODUCER_IDS, pids, sizeof(pids), n + 7), 0);
	assert_true(exists("latest_producer_id_block"));
	/* the next write of a deleted path creates it again (recreated topic) */
	assert_int_equal(s->ops->write(s->ctx, HW_CTRL_REC_PARTITION, p0, sizeof(p0), n + 8), 0);
	assert_true(exists("partitions/5-0"));
	seen_delete = seen_pids = seen_topic5 = 0;
	assert_int_equal(s->ops->load(s->ctx, on_any, NULL, &n), 0);
	assert_int_equal(seen_delete, 1);
	assert_int_equal(seen_pids, 1);
	assert_int_equal(seen_topic5, 1); /* only the recreated partition znode */
	hw_zk_destroy(z);
}

int main(void)
{
	const char *zk = getenv("HW_ZK_CONNECT");
	if (!zk || !*zk) {
		fprintf(stderr, "test_zk_fence: HW_ZK_CONNECT is not set (run it through it_zk_fence.sh)\n");
		return 1;
	}
	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	raw = zookeeper_init(zk, raw_watcher, 10000, NULL, NULL, 0);
	for (int t = 0; raw && zoo_state(raw) != ZOO_CONNECTED_STATE && t < 200; t++)
		usleep(50000);
	if (!raw || zoo_state(raw) != ZOO_CONNECTED_STATE) {
		fprintf(stderr, "test_zk_fence: cannot connect to %s\n", zk);
		return 1;
	}
	snprintf(root, sizeof(root), "/fence-%d", (int)getpid());
	if (zoo_create(raw, root, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0) != ZOK) {
		fprintf(stderr, "test_zk_fence: cannot create %s\n", root);
		return 1;
	}
	snprintf(connect_str, sizeof(connect_str), "%s%s", zk, root); /* the chroot */
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_fencing), cmocka_unit_test(test_delete_znodes) };
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	zookeeper_close(raw);
	return rc;
}
