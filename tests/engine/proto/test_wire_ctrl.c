/* test_wire_ctrl.c — the controller messages of topic deletion and
 * producer id blocks (engine/proto/hw_wire_ctrl.c, docs/wire.md): DELETE_TOPIC
 * (by name or by id, exactly one), DELETE_TOPIC_RESP,
 * ALLOCATE_PRODUCER_IDS(_RESP) (an error answer carries no block; a block
 * is 1..1000 ids), and PARTITION_STATE's `deleted` trailer (after the
 * replica epochs, present iff 1). Each round-trips byte for byte; what does
 * not fit is refused by the encoder and dropped by the decoder. With
 * HW_WIRE_CTRL_CORPUS=DIR the frames are written there (the fuzz_wire
 * corpus entries delete_topic*, alloc_pids*, pstate_deleted, pstate_tconf*,
 * alter_config*). Also PARTITION_STATE's topic config trailer and
 * ALTER_CONFIG's flags/deletes trailer. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_admin_msg.h"
#include "hw_err.h"
#include "hw_topic_config.h"
#include "hw_wire.h"

#define CLUSTER 0xC0FFEEu

static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t frame[HW_WIRE_MAX_FRAME], frame2[HW_WIRE_MAX_FRAME];

static int encode(const hw_msg *m, uint8_t *buf, size_t cap)
{
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 7, .seq = 0 };
	return hw_wire_encode(&tx, m, NULL, buf, cap);
}

static int decode(const uint8_t *buf, int len, hw_msg *out, hw_wire_drop *why)
{
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	*why = HW_WIRE_DROP__COUNT;
	return hw_wire_decode(buf, (size_t)len, CLUSTER, &a, NULL, out, why, NULL);
}

static void seed(const char *name, const uint8_t *buf, int len)
{
	const char *dir = getenv("HW_WIRE_CTRL_CORPUS");
	if (!dir)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
}

/* Encode m, decode it into *d, re-encode: the same bytes. The length. */
static int roundtrip(const hw_msg *m, hw_msg *d, const char *seed_name)
{
	int len = encode(m, frame, sizeof frame);
	assert_true(len > 0);
	hw_wire_drop why;
	if (decode(frame, len, d, &why))
		fail_msg("decode failed: %s", hw_wire_drop_name(why));
	assert_int_equal(d->type, m->type);
	int n2 = encode(d, frame2, sizeof frame2);
	assert_int_equal(n2, len);
	assert_memory_equal(frame2, frame, (size_t)len);
	seed(seed_name, frame, len);
	return len;
}

static void hdr(hw_msg *m, int type)
{
	memset(m, 0, sizeof *m);
	m->type = (uint16_t)type;
	m->src = 1;
	m->dst = 0;
	m->correlation_id = 77;
}

/* Patch payload byte `off` (from the payload's start) of frame[0..len). */
static void patch_payload(int len, int off_from_end, uint8_t v)
{
	frame[len - off_from_end] = v;
}

static void test_delete_topic(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	hw_delete_topic_req q = { .timeout_ms = 30000 };
	snprintf(q.name, sizeof q.name, "orders");
	hdr(&m, HW_MSG_DELETE_TOPIC);
	m.u.other = &q;
	roundtrip(&m, &d, "delete_topic");
	const hw_delete_topic_req *dq = d.u.other;
	assert_string_equal(dq->name, "orders");
	assert_int_equal(dq->topic_id, 0);
	assert_int_equal(dq->timeout_ms, 30000);
	/* by id */
	hw_delete_topic_req qi = { .topic_id = 42, .timeout_ms = -1 };
	m.u.other = &qi;
	roundtrip(&m, &d, "delete_topic_id");
	assert_int_equal(((const hw_delete_topic_req *)d.u.other)->topic_id, 42);
	/* both or neither: refused by the encoder ... */
	qi.name[0] = 'x';
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	hw_delete_topic_req none = { 0 };
	m.u.other = &none;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	/* ... and dropped by the decoder (the id of a by-name frame set) */
	m.u.other = &q;
	int len = encode(&m, frame, sizeof frame);
	patch_payload(len, 5, 9); /* u32 topic_id's low byte, before i32 timeout */
	assert_int_not_equal(decode(frame, len, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* truncated */
	assert_int_not_equal(decode(frame, len - 1, &d, &why), 0);
}

static void test_delete_topic_resp(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_delete_topic_resp r = { .topic_id = 9, .error = HW_ERR_NONE };
	snprintf(r.name, sizeof r.name, "orders");
	hdr(&m, HW_MSG_DELETE_TOPIC_RESP);
	m.u.other = &r;
	roundtrip(&m, &d, "delete_topic_resp");
	const hw_delete_topic_resp *dr = d.u.other;
	assert_int_equal(dr->topic_id, 9);
	assert_string_equal(dr->name, "orders");
	r = (hw_delete_topic_resp){ .error = HW_ERR_TOPIC_DELETION_DISABLED };
	snprintf(r.error_message, sizeof r.error_message, "Topic deletion is disabled.");
	roundtrip(&m, &d, "delete_topic_resp_disabled");
	dr = d.u.other;
	assert_int_equal(dr->error, HW_ERR_TOPIC_DELETION_DISABLED);
	assert_string_equal(dr->error_message, "Topic deletion is disabled.");
}

static void test_alloc_pids(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	hw_alloc_pids_req q = { .broker_id = 3, .broker_epoch = 123456 };
	hdr(&m, HW_MSG_ALLOCATE_PRODUCER_IDS);
	m.u.other = &q;
	roundtrip(&m, &d, "alloc_pids");
	assert_int_equal(((const hw_alloc_pids_req *)d.u.other)->broker_epoch, 123456);
	hw_alloc_pids_resp r = { .error = HW_ERR_NONE, .first_id = 5000, .count = HW_PRODUCER_ID_BLOCK };
	hdr(&m, HW_MSG_ALLOCATE_PRODUCER_IDS_RESP);
	m.u.other = &r;
	int len = roundtrip(&m, &d, "alloc_pids_resp");
	const hw_alloc_pids_resp *dr = d.u.other;
	assert_int_equal(dr->first_id, 5000);
	assert_int_equal(dr->count, HW_PRODUCER_ID_BLOCK);
	/* a block of 1001: the decoder drops it (the count's low byte + 1) */
	patch_payload(len, 1, (uint8_t)((HW_PRODUCER_ID_BLOCK + 1) & 0xff));
	assert_int_not_equal(decode(frame, len, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	r = (hw_alloc_pids_resp){ .error = HW_ERR_STALE_BROKER_EPOCH, .first_id = -1, .count = 0 };
	roundtrip(&m, &d, "alloc_pids_resp_stale");
	/* an error with a block, a block without ids: refused */
	r.first_id = 0;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	r = (hw_alloc_pids_resp){ .error = HW_ERR_NONE, .first_id = 7, .count = 0 };
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	r = (hw_alloc_pids_resp){ .error = HW_ERR_NONE, .first_id = INT64_MAX - 10, .count = 1000 };
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
}

static void test_pstate_deleted(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	hdr(&m, HW_MSG_PARTITION_STATE);
	hw_partition_state *s = &m.u.pstate;
	s->tp = (hw_tp){ 5, 1 };
	s->leader = -1;
	s->replicas = (hw_idset){ .n = 3, .id = { 1, 2, 3 } };
	s->isr = s->replicas;
	s->min_insync_replicas = 1;
	snprintf(s->topic, sizeof s->topic, "orders");
	s->n_replica_epochs = 3;
	for (int i = 0; i < 3; i++)
		s->replica_epochs[i] = -1;
	int plain = encode(&m, frame, sizeof frame);
	assert_true(plain > 0);
	s->deleted = 1;
	int len = roundtrip(&m, &d, "pstate_deleted");
	assert_int_equal(len, plain + 1);
	assert_int_equal(d.u.pstate.deleted, 1);
	/* any other value of the trailer byte: dropped */
	patch_payload(len, 1, 2);
	assert_int_not_equal(decode(frame, len, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* deleted needs the replica epochs before it */
	s->n_replica_epochs = 0;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	/* a push without it decodes as not deleted */
	s->n_replica_epochs = 3;
	s->deleted = 0;
	roundtrip(&m, &d, "pstate_not_deleted");
	assert_int_equal(d.u.pstate.deleted, 0);
}

/* PARTITION_STATE's topic config trailer (after `deleted`, which is then
 * present as 0 or 1): u8 n, n x {u8 id, i64 value}, LOG rows ascending. */
static void test_pstate_tconf(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	hdr(&m, HW_MSG_PARTITION_STATE);
	hw_partition_state *s = &m.u.pstate;
	s->tp = (hw_tp){ 5, 0 };
	s->leader = 1;
	s->replicas = (hw_idset){ .n = 2, .id = { 1, 2 } };
	s->isr = s->replicas;
	snprintf(s->topic, sizeof s->topic, "compacted");
	s->n_replica_epochs = 2;
	s->replica_epochs[0] = s->replica_epochs[1] = 4;
	int plain = encode(&m, frame, sizeof frame);
	assert_true(plain > 0);
	char why_s[128];
	assert_int_equal(hw_tc_set(&s->tconf, "cleanup.policy", "compact,delete", why_s, sizeof why_s), 0);
	assert_int_equal(hw_tc_set(&s->tconf, "segment.bytes", "4096", why_s, sizeof why_s), 0);
	assert_int_equal(hw_tc_set(&s->tconf, "min.cleanable.dirty.ratio", "0.01", why_s, sizeof why_s), 0);
	int len = roundtrip(&m, &d, "pstate_tconf");
	assert_int_equal(len, plain + 1 + 1 + 3 * 9);
	assert_int_equal(d.u.pstate.deleted, 0);
	assert_int_equal(d.u.pstate.tconf.set, s->tconf.set);
	assert_int_equal(d.u.pstate.tconf.v[HW_TC_SEGMENT_BYTES], 4096);
	assert_int_equal(d.u.pstate.tconf.v[HW_TC_CLEANUP_POLICY], HW_TC_POLICY_COMPACT | HW_TC_POLICY_DELETE);
	assert_true(hw_tc_ratio(d.u.pstate.tconf.v[HW_TC_MIN_CLEANABLE_DIRTY_RATIO]) == 0.01);
	/* a value outside the row's range: the ratio's top byte 0xff (a
	 * negative number or NaN, big-endian on the wire) */
	patch_payload(len, 8, 0xff);
	assert_int_not_equal(decode(frame, len, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* segment.bytes 13 (below the schema's 14): dropped */
	roundtrip(&m, &d, "pstate_tconf");
	int seg_off = len - 2 * 9; /* entries: policy, segment.bytes, ratio */
	assert_int_equal(frame[seg_off], HW_TC_SEGMENT_BYTES);
	memset(&frame[seg_off + 1], 0, 8);
	frame[seg_off + 8] = 13;
	assert_int_not_equal(decode(frame, len, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* ids out of order: dropped */
	roundtrip(&m, &d, "pstate_tconf");
	frame[seg_off] = HW_TC_CLEANUP_POLICY;
	assert_int_not_equal(decode(frame, len, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* with deleted: both trailers */
	s->deleted = 1;
	len = roundtrip(&m, &d, "pstate_tconf_deleted");
	assert_int_equal(d.u.pstate.deleted, 1);
	assert_int_equal(d.u.pstate.tconf.set, s->tconf.set);
	/* a CTRL row (min.insync.replicas has its own field): refused */
	s->deleted = 0;
	assert_int_equal(hw_tc_set(&s->tconf, "min.insync.replicas", "2", why_s, sizeof why_s), 0);
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	/* no replica epochs: nothing to hang the trailer on */
	s->tconf.set &= ~(1u << HW_TC_MIN_INSYNC_REPLICAS);
	s->n_replica_epochs = 0;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
}

/* ALTER_CONFIG's trailer: u8 flags (replace, validate_only), deletes. */
static void test_alter_config_trailer(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	hw_config_kv set[1] = { { "retention.ms", "60000" } }, del[2] = { { "segment.bytes", "" },
									  { "cleanup.policy", "" } };
	hw_alter_config_req q = { .name = "orders", .n_configs = 1, .configs = set };
	hdr(&m, HW_MSG_ALTER_CONFIG);
	m.u.other = &q;
	int plain = roundtrip(&m, &d, "alter_config");
	const hw_alter_config_req *dq = d.u.other;
	assert_int_equal(dq->replace | dq->validate_only | dq->n_deletes, 0);
	q.replace = 1;
	q.validate_only = 1;
	q.n_deletes = 2;
	q.deletes = del;
	int len = roundtrip(&m, &d, "alter_config_replace_deletes");
	assert_true(len > plain);
	dq = d.u.other;
	assert_int_equal(dq->replace, 1);
	assert_int_equal(dq->validate_only, 1);
	assert_int_equal(dq->n_deletes, 2);
	assert_string_equal(dq->deletes[1].key, "cleanup.policy");
	/* flags beyond the two bits: dropped */
	patch_payload(len, 1 + 2 + 2 * (2 + 2) + (int)strlen("segment.bytes") + (int)strlen("cleanup.policy"), 4);
	assert_int_not_equal(decode(frame, len, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delete_topic),
		cmocka_unit_test(test_delete_topic_resp),
		cmocka_unit_test(test_alloc_pids),
		cmocka_unit_test(test_pstate_deleted),
		cmocka_unit_test(test_pstate_tconf),
		cmocka_unit_test(test_alter_config_trailer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
