/* test_ctrl_tconf.c — per-topic configs (docs/kafka.md "Topic
 * configuration"): the topic config table's validation (Kafka's messages,
 * the broker schema's ranges), CreateTopic configs and ALTER_CONFIG changes
 * (set, delete, replace, validate_only, all-or-nothing), the configs in the
 * PARTITION_STATE pushes, their persistence in TOPIC / TOPIC_CONFIG records
 * across a restart and a compaction, records written before the configs
 * trailer still replaying, and the /config/topics JSON. */
#include <fcntl.h>
#include <sys/stat.h>
#include "ctrl_harness.h"
#include "hw_crc32c.h"
#include "hw_topic_config.h"

static void reopen(world *w)
{
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	world_open(w);
}

static void test_validation(void **state)
{
	(void)state;
	hw_topic_config tc = { 0 };
	char why[256];
	static const struct { const char *k, *v; int rc; const char *msg; } cases[] = {
		{ "cleanup.policy", "compact", 0, NULL },
		{ "cleanup.policy", "compact,delete", 0, NULL },
		{ "cleanup.policy", "delete, compact", 0, NULL },
		{ "cleanup.policy", "", -EINVAL, "Invalid value  for configuration cleanup.policy" },
		{ "cleanup.policy", "compacted", -EINVAL, "String must be one of: compact, delete" },
		{ "retention.ms", "-1", 0, NULL },
		{ "retention.ms", "0", -EINVAL, "Value must be at least 1 (or -1)" },
		{ "retention.ms", "-2", -EINVAL, "Value must be at least 1 (or -1)" },
		{ "retention.ms", "10s", -EINVAL, "Not a number of type LONG" },
		{ "retention.bytes", "-1", 0, NULL },
		{ "retention.bytes", "-2", -EINVAL, "at least -1" },
		{ "segment.bytes", "14", 0, NULL },
		{ "segment.bytes", "13", -EINVAL, "Value must be at least 14" },
		{ "segment.bytes", "2147483648", -EINVAL, "Value must be no more than 2147483647" },
		{ "segment.ms", "0", -EINVAL, "at least 1" },
		{ "min.cleanable.dirty.ratio", "0.01", 0, NULL },
		{ "min.cleanable.dirty.ratio", "1.5", -EINVAL, "Value must be between 0 and 1" },
		{ "min.cleanable.dirty.ratio", "x", -EINVAL, "Not a number of type DOUBLE" },
		{ "preallocate", "TRUE", 0, NULL },
		{ "preallocate", "yes", -EINVAL, "Expected value to be either true or false" },
		{ "max.message.bytes", "-1", -EINVAL, "at least 0" },
		{ "min.insync.replicas", "32768", -EINVAL, "no more than 32767" },
		{ "compression.type", "producer", 0, NULL },
		{ "retention.hours", "1", -ENOENT, "Unknown topic config name: retention.hours" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = 0;
		int rc = hw_tc_set(&tc, cases[i].k, cases[i].v, why, sizeof(why));
		if (rc != cases[i].rc || (cases[i].msg && !strstr(why, cases[i].msg)))
			fail_msg("%s=%s: rc %d, '%s'", cases[i].k, cases[i].v, rc, why);
	}
	assert_int_equal(tc.v[HW_TC_CLEANUP_POLICY], HW_TC_POLICY_COMPACT | HW_TC_POLICY_DELETE);
	assert_int_equal(tc.v[HW_TC_RETENTION_MS], -1);
	assert_int_equal(tc.v[HW_TC_SEGMENT_BYTES], 14);
	assert_true(hw_tc_ratio(tc.v[HW_TC_MIN_CLEANABLE_DIRTY_RATIO]) == 0.01);
	assert_true(tc.set & (1u << HW_TC_PREALLOCATE));
	assert_false(tc.set & (1u << HW_TC_MAX_MESSAGE_BYTES)); /* refused: not set */
	/* every row has a name, a synonym column and a known type */
	for (int i = 0; i < HW_TC_COUNT; i++) {
		const hw_tc_def *d = hw_tc_def_of(i);
		assert_non_null(d);
		assert_int_equal(hw_tc_lookup(d->name), i);
	}
	assert_null(hw_tc_def_of(HW_TC_COUNT));
}

static hw_create_topic_resp create_kv(world *w, const char *name, int n, const hw_config_kv *kv, int validate_only)
{
	hw_create_topic_req r = { .partitions = 2, .replication_factor = 3, .n_configs = (uint16_t)n,
				  .configs = kv, .validate_only = (uint8_t)validate_only };
	snprintf(r.name, sizeof(r.name), "%s", name);
	hw_create_topic_resp resp;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	return resp;
}

/* The last PARTITION_STATE pushed for (topic, partition). */
static const hw_partition_state *last_push(world *w, uint32_t topic, uint32_t p)
{
	for (int i = w->net.n - 1; i >= 0; i--) {
		const hw_msg *m = &w->net.msgs[i].m;
		if (m->type == HW_MSG_PARTITION_STATE && m->u.pstate.tp.topic_id == topic &&
		    m->u.pstate.tp.partition == p)
			return &m->u.pstate;
	}
	fail_msg("no push for %u-%u", topic, p);
	return NULL;
}

static hw_alter_config_resp alter(world *w, const char *name, int n, const hw_config_kv *set, int nd,
				  const hw_config_kv *del, int replace, int validate_only)
{
	hw_alter_config_req q = { .n_configs = (uint16_t)n, .configs = set, .n_deletes = (uint16_t)nd,
				  .deletes = del, .replace = (uint8_t)replace, .validate_only = (uint8_t)validate_only };
	snprintf(q.name, sizeof(q.name), "%s", name);
	hw_alter_config_resp resp;
	assert_int_equal(hw_ctrl_alter_configs(w->ctrl, &q, &resp), 0);
	return resp;
}

static void test_create_alter_replay(void **state)
{
	(void)state;
	world *w = world_new(1);
	for (int id = 1; id <= 3; id++)
		reg_and_unfence(w, id);
	(void)create;
	(void)part;
	hw_config_kv kv[4] = { { "cleanup.policy", "compact" }, { "segment.bytes", "4096" },
			       { "min.insync.replicas", "2" }, { "min.cleanable.dirty.ratio", "0.01" } };
	/* a bad entry: nothing created, Kafka's message */
	hw_config_kv bad[2] = { { "cleanup.policy", "compact" }, { "segment.bytes", "1" } };
	hw_create_topic_resp r = create_kv(w, "c", 2, bad, 0);
	assert_int_equal(r.error, HW_ERR_INVALID_CONFIG);
	assert_non_null(strstr(r.error_message, "Invalid value 1 for configuration segment.bytes"));
	hw_config_kv unk[1] = { { "cleanup.polcy", "compact" } };
	r = create_kv(w, "c", 1, unk, 0);
	assert_int_equal(r.error, HW_ERR_INVALID_CONFIG);
	assert_string_equal(r.error_message, "Unknown topic config name: cleanup.polcy");
	r = create_kv(w, "c", 4, kv, 1); /* validate_only */
	assert_int_equal(r.error, HW_ERR_NONE);
	assert_int_equal(hw_ctrl_topic_count(w->ctrl), 0);
	r = create_kv(w, "c", 4, kv, 0);
	assert_int_equal(r.error, HW_ERR_NONE);
	uint32_t id = r.topic_id;
	hw_ctrl_topic_info ti;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "c", &ti), 0);
	assert_int_equal(ti.min_insync_replicas, 2);
	assert_string_equal(ti.tc_value[HW_TC_SEGMENT_BYTES], "4096");
	/* the pushes carry the LOG rows, parsed; min ISR in its own field */
	const hw_partition_state *ps = last_push(w, id, 1);
	assert_int_equal(ps->min_insync_replicas, 2);
	assert_int_equal(ps->tconf.set, (1u << HW_TC_CLEANUP_POLICY) | (1u << HW_TC_SEGMENT_BYTES) |
						(1u << HW_TC_MIN_CLEANABLE_DIRTY_RATIO));
	assert_int_equal(ps->tconf.v[HW_TC_CLEANUP_POLICY], HW_TC_POLICY_COMPACT);
	char js[512];
	assert_true(hw_ctrl_topic_config_json(&ti, js, sizeof(js)) > 0);
	assert_string_equal(js, "{\"version\":1,\"config\":{\"cleanup.policy\":\"compact\",\"segment.bytes\":"
				"\"4096\",\"min.cleanable.dirty.ratio\":\"0.01\",\"min.insync.replicas\":\"2\"}}");
	assert_int_equal(hw_ctrl_topic_config_json(&ti, js, 20), -EMSGSIZE);

	/* alter: one bad entry changes nothing */
	hw_config_kv set[2] = { { "retention.ms", "60000" }, { "retention.bytes", "x" } };
	hw_alter_config_resp a = alter(w, "c", 2, set, 0, NULL, 0, 0);
	assert_int_equal(a.error, HW_ERR_INVALID_CONFIG);
	assert_non_null(strstr(a.error_message, "retention.bytes"));
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "c", &ti), 0);
	assert_false(ti.tc_set & (1u << HW_TC_RETENTION_MS));
	a = alter(w, "nope", 1, set, 0, NULL, 0, 0);
	assert_int_equal(a.error, HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);
	/* validate_only: checked, not applied */
	a = alter(w, "c", 1, set, 0, NULL, 0, 1);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "c", &ti), 0);
	assert_false(ti.tc_set & (1u << HW_TC_RETENTION_MS));
	/* set retention.ms, delete segment.bytes and min ISR (back to the default) */
	hw_config_kv del[2] = { { "segment.bytes", "" }, { "min.insync.replicas", "" } };
	int before = w->net.n;
	a = alter(w, "c", 1, set, 2, del, 0, 0);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_true(w->net.n > before); /* re-pushed */
	ps = last_push(w, id, 0);
	assert_int_equal(ps->tconf.set, (1u << HW_TC_CLEANUP_POLICY) | (1u << HW_TC_RETENTION_MS) |
						(1u << HW_TC_MIN_CLEANABLE_DIRTY_RATIO));
	assert_int_equal(ps->tconf.v[HW_TC_RETENTION_MS], 60000);
	assert_int_equal(ps->min_insync_replicas, w->cfg.default_min_isr);
	hw_ctrl_topic_info before_restart;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "c", &before_restart), 0);

	/* persisted: a restart replays TOPIC + TOPIC_CONFIG to the same configs */
	reopen(w);
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "c", &ti), 0);
	assert_memory_equal(&ti, &before_restart, sizeof(ti));
	assert_int_equal(last_push(w, id, 0)->tconf.set, ps->tconf.set);

	/* replace (Kafka's AlterConfigs): the entries are the whole set */
	hw_config_kv only[1] = { { "cleanup.policy", "delete" } };
	a = alter(w, "c", 1, only, 0, NULL, 1, 0);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "c", &ti), 0);
	assert_int_equal(ti.tc_set, 1u << HW_TC_CLEANUP_POLICY);
	assert_string_equal(ti.tc_value[HW_TC_CLEANUP_POLICY], "delete");
	reopen(w);
	hw_ctrl_topic_info again;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "c", &again), 0);
	assert_memory_equal(&ti, &again, sizeof(ti));
	world_free(w);
}

/* A metadata log record by hand: u32 len, u32 crc32c(type + payload), type, payload. */
static void put_record(int fd, uint8_t type, const uint8_t *p, size_t n)
{
	uint8_t hdr[9];
	uint32_t len = (uint32_t)n + 1;
	uint32_t crc = hw_crc32c(hw_crc32c(0, &type, 1), p, n);
	for (int i = 0; i < 4; i++) {
		hdr[i] = (uint8_t)(len >> (8 * i));
		hdr[4 + i] = (uint8_t)(crc >> (8 * i));
	}
	hdr[8] = type;
	assert_int_equal(write(fd, hdr, 9), 9);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

/* Records written before the configs trailer: TOPIC (id 1, min ISR 2,
 * unclean 1, "old", 1 partition on [1], RF 1, both throttles "") and
 * TOPIC_CONFIG (min ISR 3, unclean 0, throttles "") still replay; the
 * topic then has no configs set, and a new TOPIC_CONFIG adds them. */
static void test_old_records(void **state)
{
	(void)state;
	world *w = world_new(1);
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	int fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "HWMLOG01", 8), 8);
	const uint8_t topic[] = { 1, 0, 0, 0, 2, 0, 1, 3, 0, 'o', 'l', 'd', 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0,
				  0, 0, 0, 0 };
	put_record(fd, 2 /* TOPIC */, topic, sizeof(topic));
	const uint8_t tconf[] = { 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0 };
	put_record(fd, 4 /* TOPIC_CONFIG */, tconf, sizeof(tconf));
	close(fd);
	world_open(w);
	hw_ctrl_topic_info ti;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "old", &ti), 0);
	assert_int_equal(ti.min_insync_replicas, 3);
	assert_int_equal(ti.unclean_leader_election, 0);
	assert_int_equal(ti.tc_set, 0);
	reg_and_unfence(w, 1);
	hw_config_kv set[1] = { { "cleanup.policy", "compact" } };
	assert_int_equal(alter(w, "old", 1, set, 0, NULL, 0, 0).error, HW_ERR_NONE);
	reopen(w);
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "old", &ti), 0);
	assert_int_equal(ti.tc_set, 1u << HW_TC_CLEANUP_POLICY);
	assert_int_equal(ti.min_insync_replicas, 3);
	/* a configs trailer naming an unknown key: the record does not decode */
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	fd = open(w->path, O_WRONLY | O_APPEND);
	const uint8_t badconf[] = { 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 1, 3, 0, 'f', 'o', 'o', 1, 0, '1', 3, 0,
				    'o', 'l', 'd' };
	put_record(fd, 4, badconf, sizeof(badconf));
	close(fd);
	assert_int_equal(hw_ctrl_create(&w->cfg, &w->clock.base, &w->net.base, &w->ctrl), -EBADMSG);
	assert_null(w->ctrl);
	unlink(w->path);
	world_open(w);
	world_free(w);
}

int main(void)
{
	seed_init("test_ctrl_tconf");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_create_alter_replay),
		cmocka_unit_test(test_old_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
