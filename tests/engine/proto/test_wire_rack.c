/* test_wire_rack.c — the rack trailers (docs/racks.md, docs/wire.md):
 * BROKER_REGISTER's rack after the listeners and METADATA_RESP's racks
 * after the controller epoch round-trip alone and with the earlier
 * trailers, force those in their zero form, re-encode byte-identically,
 * and the non-canonical encodings (an empty rack, a rack block with no
 * rack, a zero epoch with nothing after it) are drops; likewise FETCH's
 * rack_id tag, FETCH_RESP's preferred read replica tag and CREATE_TOPIC's
 * assignment trailer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "hw_wire.h"
#include "hw_err.h"

#define CLUSTER 0xC0FFEEu

static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t frame[HW_WIRE_MAX_FRAME];
static uint8_t frame2[HW_WIRE_MAX_FRAME];

static int encode(const hw_msg *m, uint8_t *buf, size_t cap)
{
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 7, .seq = 0 };
	return hw_wire_encode(&tx, m, NULL, buf, cap);
}

/* Decode buf; 0 and *out, or -EBADMSG with *why. */
static int decode(const uint8_t *buf, int len, hw_msg *out, hw_wire_drop *why)
{
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	return hw_wire_decode(buf, (size_t)len, CLUSTER, &a, NULL, out, why, NULL);
}

/* With HW_WIRE_RACK_SEEDS=DIR set, the frame is also written there as a
 * fuzz_wire seed (how the corpus seeds register_rack and metadata_resp_racks were made). */
static void seed(const char *name, const uint8_t *buf, int len)
{
	const char *dir = getenv("HW_WIRE_RACK_SEEDS");
	if (!dir)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
}

/* Decoding then re-encoding gives the same bytes (fuzz_wire's invariant). */
static void reencodes(const uint8_t *buf, int len)
{
	hw_msg d;
	hw_wire_drop why = HW_WIRE_DROP__COUNT;
	if (decode(buf, len, &d, &why))
		fail_msg("decode failed: %s", hw_wire_drop_name(why));
	int n2 = encode(&d, frame2, sizeof frame2);
	assert_int_equal(n2, len);
	assert_memory_equal(frame2, buf, (size_t)len);
}

/* Replace the last `cut` payload bytes of frame[0..len) by `add` (n bytes),
 * fixing payload_len. The new length. */
static int splice_tail(int len, int cut, const uint8_t *add, int n)
{
	memcpy(frame + len - cut, add, (size_t)n);
	len = len - cut + n;
	uint32_t pl = (uint32_t)len - HW_WIRE_HDR_LEN;
	frame[32] = (uint8_t)(pl >> 24);
	frame[33] = (uint8_t)(pl >> 16);
	frame[34] = (uint8_t)(pl >> 8);
	frame[35] = (uint8_t)pl;
	return len;
}

static void test_register_rack(void **st)
{
	(void)st;
	hw_broker_register_req rq;
	memset(&rq, 0, sizeof rq);
	rq.broker_id = 4;
	rq.previous_broker_epoch = -1;
	rq.metadata_offset = -1;
	strcpy(rq.control_ep, "udp:127.0.0.1:9104");
	strcpy(rq.data_ep, "udp:127.0.0.1:9204");
	hw_msg m = { .type = HW_MSG_BROKER_REGISTER, .src = 4, .dst = 0, .u.other = &rq };
	int bare = encode(&m, frame, sizeof frame);
	assert_true(bare > 0);

	/* rack alone: an empty listener block (u16 0) precedes it */
	strcpy(rq.rack, "rack-b");
	int n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, bare + 2 + 2 + 6);
	hw_msg d;
	hw_wire_drop why;
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_memory_equal(d.u.other, &rq, sizeof rq);
	reencodes(frame, n);
	seed("register_rack", frame, n);

	/* with a listener */
	rq.n_listeners = 1;
	strcpy(rq.listeners[0].name, "PLAINTEXT");
	strcpy(rq.listeners[0].value, "127.0.0.1:9504");
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_memory_equal(d.u.other, &rq, sizeof rq);
	reencodes(frame, n);

	/* an empty rack string after the listeners is not the canonical form */
	static const uint8_t empty[2] = { 0, 0 };
	n = splice_tail(n, 2 + 6, empty, 2);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);

	/* an over-long rack is refused by the encoder */
	memset(rq.rack, 'r', sizeof rq.rack);
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
}

static void test_metadata_racks(void **st)
{
	(void)st;
	hw_broker_info br[3];
	memset(br, 0, sizeof br);
	for (int i = 0; i < 3; i++) {
		br[i].id = i + 1;
		br[i].broker_epoch = 10 + i;
		br[i].state = HW_BROKER_ACTIVE;
		snprintf(br[i].control_ep, sizeof br[i].control_ep, "udp:127.0.0.1:%d", 9101 + i);
	}
	hw_metadata_resp mr = { .controller_id = 0, .metadata_offset = 5, .n_brokers = 3, .brokers = br };
	hw_msg m = { .type = HW_MSG_METADATA_RESP, .src = 0, .dst = 1000, .u.other = &mr };
	int bare = encode(&m, frame, sizeof frame);

	/* racks alone (broker 2 has none): the listener block (3 x {id, 0})
	 * and a zero epoch come first */
	strcpy(br[0].rack, "a");
	strcpy(br[2].rack, "c");
	int n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, bare + (2 + 3 * 6) + 4 + (2 + 3 * 6 + 2));
	hw_msg d;
	hw_wire_drop why;
	assert_int_equal(decode(frame, n, &d, &why), 0);
	const hw_metadata_resp *dm = d.u.other;
	assert_int_equal(dm->controller_epoch, 0);
	assert_memory_equal(dm->brokers, br, sizeof br);
	reencodes(frame, n);
	seed("metadata_resp_racks", frame, n);

	/* with listeners and a ZooKeeper epoch */
	br[1].n_listeners = 1;
	strcpy(br[1].listeners[0].name, "PLAINTEXT");
	strcpy(br[1].listeners[0].value, "127.0.0.1:9502");
	mr.controller_epoch = 3;
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(decode(frame, n, &d, &why), 0);
	dm = d.u.other;
	assert_int_equal(dm->controller_epoch, 3);
	assert_memory_equal(dm->brokers, br, sizeof br);
	reencodes(frame, n);

	/* a rack block in which no broker has a rack: drop */
	br[0].rack[0] = br[2].rack[0] = 0;
	mr.controller_epoch = 0;
	int listeners_only = encode(&m, frame, sizeof frame);
	uint8_t blk[4 + 2 + 3 * 6];
	memset(blk, 0, sizeof blk);
	blk[5] = 3;                            /* u16 nb = 3 after the i32 epoch 0 */
	for (int i = 0; i < 3; i++)
		blk[6 + 6 * i + 3] = (uint8_t)(i + 1); /* id, then str "" */
	n = splice_tail(listeners_only, 0, blk, sizeof blk);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* a zero epoch with nothing after it: drop */
	n = splice_tail(listeners_only, 0, blk, 4);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* racks of brokers out of order: drop */
	strcpy(br[0].rack, "a");
	n = encode(&m, frame, sizeof frame);
	frame[n - (2 + 3 * 6 + 1) + 5] ^= 3;   /* the rack block's first id: 1 -> 2 */
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
}

/* FETCH tag 1 rack_id and FETCH_RESP tag 2 preferred read replicas
 * (docs/wire.md "Tagged fields"). */
static void test_fetch_tags(void **st)
{
	(void)st;
	hw_fetch_part fp = { .tp = { 3, 1 }, .fetch_offset = 42, .current_leader_epoch = 2, .last_fetched_epoch = -1,
			     .log_start_offset = -1, .partition_max_bytes = 1 << 20 };
	hw_msg m = { .type = HW_MSG_FETCH, .src = 1000, .dst = 2, .correlation_id = 9 };
	m.u.fetch = (hw_fetch_req){ .replica_id = -1, .replica_epoch = -1, .max_wait_ms = 500, .min_bytes = 1,
				    .max_bytes = 1 << 20, .n_parts = 1, .parts = &fp };
	int bare = encode(&m, frame, sizeof frame);
	strcpy(m.u.fetch.rack_id, "rack-b");
	int n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, bare + 1 + 3 + 6);           /* u8 n, {u8 tag, u16 len, bytes} */
	hw_msg d;
	hw_wire_drop why;
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_string_equal(d.u.fetch.rack_id, "rack-b");
	assert_int_equal(d.n_unknown_tags, 0);
	reencodes(frame, n);
	seed("fetch_rack", frame, n);
	/* an empty rack value is not the canonical form (absent is) */
	static const uint8_t empty_tag[4] = { 1, 1, 0, 0 };
	n = splice_tail(bare, 0, empty_tag, sizeof empty_tag);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_STRING);
	/* a NUL inside the rack: drop */
	static const uint8_t nul_tag[6] = { 1, 1, 0, 2, 'a', 0 };
	n = splice_tail(bare, 0, nul_tag, sizeof nul_tag);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);

	hw_fetch_resp_part rp = { .tp = { 3, 1 }, .high_watermark = 50, .log_start_offset = 0,
				  .diverging_epoch = -1, .diverging_end_offset = -1, .leader_id = 1, .leader_epoch = 2 };
	hw_fetch_preferred pr = { .tp = { 3, 1 }, .replica = 5 };
	hw_msg r = { .type = HW_MSG_FETCH_RESP, .src = 1, .dst = 1000, .correlation_id = 9 };
	r.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &rp };
	bare = encode(&r, frame, sizeof frame);
	r.u.fetch_resp.n_preferred = 1;
	r.u.fetch_resp.preferred = &pr;
	n = encode(&r, frame, sizeof frame);
	assert_int_equal(n, bare + 1 + 3 + 2 + 12);
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_int_equal(d.u.fetch_resp.n_preferred, 1);
	assert_int_equal(d.u.fetch_resp.preferred[0].tp.topic_id, 3);
	assert_int_equal(d.u.fetch_resp.preferred[0].tp.partition, 1);
	assert_int_equal(d.u.fetch_resp.preferred[0].replica, 5);
	reencodes(frame, n);
	seed("fetch_resp_preferred", frame, n);
	/* an empty list (n = 0) and a negative replica are drops */
	static const uint8_t empty_list[6] = { 1, 2, 0, 2, 0, 0 };
	n = splice_tail(bare, 0, empty_list, sizeof empty_list);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_COUNT);
	static const uint8_t neg[18] = { 1, 2, 0, 14, 0, 1, 0, 0, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff };
	n = splice_tail(bare, 0, neg, sizeof neg);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
}

/* CREATE_TOPIC's explicit assignment trailer (--replica-assignment). */
static void test_create_assignment(void **st)
{
	(void)st;
	hw_idset a[2] = { { .n = 3, .id = { 1, 2, 3 } }, { .n = 3, .id = { 2, 3, 1 } } };
	hw_create_topic_req q = { .name = "orders", .partitions = -1, .replication_factor = -1, .timeout_ms = 5000,
				  .n_assignments = 2, .assignments = a };
	hw_msg m = { .type = HW_MSG_CREATE_TOPIC, .src = 1000, .dst = 0, .u.other = &q };
	int n = encode(&m, frame, sizeof frame);
	hw_msg d;
	hw_wire_drop why;
	assert_int_equal(decode(frame, n, &d, &why), 0);
	const hw_create_topic_req *dq = d.u.other;
	assert_int_equal(dq->n_assignments, 2);
	assert_int_equal(dq->assignments[1].n, 3);
	assert_int_equal(dq->assignments[1].id[0], 2);
	assert_int_equal(dq->assignments[1].id[2], 1);
	reencodes(frame, n);
	seed("create_assignment", frame, n);
	/* a present trailer with no partition: drop */
	static const uint8_t zero[4] = { 0, 0, 0, 0 };
	n = splice_tail(n, 4 + 2 * (1 + 12), zero, sizeof zero);
	assert_int_equal(decode(frame, n, &d, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_rack),
		cmocka_unit_test(test_metadata_racks),
		cmocka_unit_test(test_fetch_tags),
		cmocka_unit_test(test_create_assignment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
