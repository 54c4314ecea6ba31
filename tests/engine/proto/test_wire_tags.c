/* test_wire_tags.c — the tagged section at the end of PRODUCE, PRODUCE_RESP,
 * FETCH and FETCH_RESP (docs/wire.md "Tagged fields"): a message with no tag
 * encodes without a section; a section of tags the receiver does not know is
 * skipped and counted; malformed sections (n = 0, tags out of order or
 * repeated, a value running past the payload) are drops; and every frame of
 * a split FETCH_RESP still fits its limit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "hw_wire.h"

#define CLUSTER 0xC0FFEEu

static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t frame[HW_WIRE_MAX_FRAME];
static uint8_t records[3 * 30000];

static void make_batch(uint8_t *p, size_t len, int64_t base)
{
	memset(p, 0, len);
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)((uint64_t)base >> (56 - 8 * i));
	uint32_t bl = (uint32_t)(len - 12);
	p[8] = (uint8_t)(bl >> 24);
	p[9] = (uint8_t)(bl >> 16);
	p[10] = (uint8_t)(bl >> 8);
	p[11] = (uint8_t)bl;
	p[16] = 2;
}

static int encode(const hw_msg *m, uint8_t *buf, size_t cap)
{
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 7, .seq = 0 };
	return hw_wire_encode(&tx, m, NULL, buf, cap);
}

/* Append `extra` to the frame's body and fix payload_len (auth is off). */
static int append(uint8_t *buf, int len, const uint8_t *extra, size_t n)
{
	memcpy(buf + len, extra, n);
	uint32_t plen = (uint32_t)((size_t)len + n - HW_WIRE_HDR_LEN);
	buf[32] = (uint8_t)(plen >> 24);
	buf[33] = (uint8_t)(plen >> 16);
	buf[34] = (uint8_t)(plen >> 8);
	buf[35] = (uint8_t)plen;
	return (int)((size_t)len + n);
}

static int decode(const uint8_t *buf, int len, hw_msg *m, hw_wire_drop *why, hw_wire_stats *st)
{
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	return hw_wire_decode(buf, (size_t)len, CLUSTER, &a, NULL, m, why, st);
}

static int sample(int type, uint8_t *buf)
{
	static hw_fetch_part fp = { .tp = { 3, 1 }, .fetch_offset = 42, .current_leader_epoch = 2,
				    .last_fetched_epoch = 1, .partition_max_bytes = 1 << 20 };
	static hw_fetch_resp_part rp = { .tp = { 3, 1 }, .high_watermark = 40, .diverging_epoch = -1,
					 .diverging_end_offset = -1, .leader_id = 1, .leader_epoch = 2 };
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = (uint16_t)type;
	m.src = 1;
	m.dst = 2;
	m.correlation_id = 99;
	switch (type) {
	case HW_MSG_PRODUCE:
		make_batch(records, 100, 0);
		m.u.produce = (hw_produce_req){ .acks = -1, .timeout_ms = 30000, .tp = { 3, 1 },
						.records = records, .records_len = 100 };
		break;
	case HW_MSG_PRODUCE_RESP:
		m.u.produce_resp = (hw_produce_resp){ .tp = { 3, 1 }, .base_offset = 5 };
		break;
	case HW_MSG_FETCH:
		m.u.fetch = (hw_fetch_req){ .replica_id = 2, .replica_epoch = 9, .max_bytes = 1 << 20,
					    .n_parts = 1, .parts = &fp };
		break;
	default:
		m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &rp };
		break;
	}
	return encode(&m, buf, HW_WIRE_MAX_FRAME);
}

static const int types[] = { HW_MSG_PRODUCE, HW_MSG_PRODUCE_RESP, HW_MSG_FETCH, HW_MSG_FETCH_RESP };

/* No tag set: the frame is exactly the body (no section byte), and it
 * decodes with no unknown tag. */
static void test_absent(void **st)
{
	(void)st;
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		int n = sample(types[i], frame);
		assert_true(n > HW_WIRE_HDR_LEN);
		hw_msg m;
		hw_wire_drop why;
		assert_int_equal(decode(frame, n, &m, &why, NULL), 0);
		assert_int_equal(m.n_unknown_tags, 0);
	}
}

/* Tags 200 and 201 (never assigned: docs/wire.md) are skipped and counted,
 * the rest of the message is intact. */
static void test_unknown_skipped(void **st)
{
	(void)st;
	const uint8_t sec[] = { 2, 200, 0, 3, 'a', 'b', 'c', 201, 0, 0 };
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		int n = append(frame, sample(types[i], frame), sec, sizeof sec);
		hw_msg m;
		hw_wire_drop why = HW_WIRE_DROP__COUNT;
		hw_wire_stats s;
		memset(&s, 0, sizeof s);
		assert_int_equal(decode(frame, n, &m, &why, &s), 0);
		assert_int_equal(m.n_unknown_tags, 2);
		assert_int_equal(s.rx_unknown_tags, 1);
		assert_int_equal(s.rx_frames, 1);
		if (types[i] == HW_MSG_FETCH) {
			assert_int_equal(m.u.fetch.n_parts, 1);
			assert_int_equal(m.u.fetch.parts[0].fetch_offset, 42);
		}
		if (types[i] == HW_MSG_PRODUCE)
			assert_int_equal(m.u.produce.records_len, 100);
	}
}

static void expect_drop(const uint8_t *sec, size_t len, hw_wire_drop want)
{
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		int n = append(frame, sample(types[i], frame), sec, len);
		hw_msg m;
		hw_wire_drop why = HW_WIRE_DROP__COUNT;
		hw_wire_stats s;
		memset(&s, 0, sizeof s);
		assert_int_not_equal(decode(frame, n, &m, &why, &s), 0);
		assert_string_equal(hw_wire_drop_name(why), hw_wire_drop_name(want));
		assert_int_equal(s.drops[want], 1);
		assert_int_equal(s.rx_frames, 0);
	}
}

static void test_malformed(void **st)
{
	(void)st;
	const uint8_t zero[] = { 0 };
	expect_drop(zero, sizeof zero, HW_WIRE_DROP_BAD_FIELD);
	const uint8_t order[] = { 2, 201, 0, 0, 200, 0, 0 };
	expect_drop(order, sizeof order, HW_WIRE_DROP_BAD_FIELD);
	const uint8_t repeat[] = { 2, 200, 0, 0, 200, 0, 0 };
	expect_drop(repeat, sizeof repeat, HW_WIRE_DROP_BAD_FIELD);
	const uint8_t past[] = { 1, 200, 0, 9, 'x' };
	expect_drop(past, sizeof past, HW_WIRE_DROP_TRUNCATED);
	const uint8_t short_n[] = { 3, 200, 0, 0 };
	expect_drop(short_n, sizeof short_n, HW_WIRE_DROP_TRUNCATED);
}

/* A FETCH_RESP split over frames of 16 KiB: every frame within the limit,
 * all batches delivered in order. */
static void test_split_fits(void **st)
{
	(void)st;
	size_t off = 0;
	for (int i = 0; i < 6; i++) {
		make_batch(records + off, 9000, i);
		off += 9000;
	}
	hw_fetch_resp_part rp = { .tp = { 3, 1 }, .high_watermark = 6, .diverging_epoch = -1,
				  .diverging_end_offset = -1, .leader_id = 1, .leader_epoch = 2,
				  .records = records, .records_len = (uint32_t)off };
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_FETCH_RESP;
	m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &rp };
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 7 };
	hw_wire_split sp = { 0 };
	size_t got = 0;
	int frames = 0;
	while (!sp.done) {
		int n = hw_wire_encode(&tx, &m, &sp, frame, 16384);
		assert_true(n > 0 && n <= 16384);
		hw_msg d;
		hw_wire_drop why;
		assert_int_equal(decode(frame, n, &d, &why, NULL), 0);
		assert_int_equal(d.n_unknown_tags, 0);
		got += d.u.fetch_resp.parts[0].records_len;
		frames++;
	}
	assert_int_equal(got, off);
	assert_int_equal(frames, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_unknown_skipped),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_split_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
