/* test_wire_timing.c — the breakdown tags (docs/wire.md "Tagged fields",
 * docs/breakdown.md): tag 8 of PRODUCE (timing wanted), PRODUCE_RESP (the
 * leader's stages and critical replica), FETCH (the follower's turnaround)
 * FETCH_RESP (turnaround wanted) and tag 9 of PRODUCE_RESP (each
 * follower's acknowledgement) round-trip; a message without them has
 * no tagged section; hostile values are drops. With HW_WIRE_SEED_DIR set,
 * the frames are also written there (the fuzz_wire_corpus seeds). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_wire.h"

#define CLUSTER 0xC0FFEEu

static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t frame[HW_WIRE_MAX_FRAME];
static uint8_t records[100];

static void make_batch(uint8_t *p, size_t len)
{
	memset(p, 0, len);
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

static int decode(const uint8_t *buf, int len, hw_msg *m, hw_wire_drop *why)
{
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	return hw_wire_decode(buf, (size_t)len, CLUSTER, &a, NULL, m, why, NULL);
}

static void seed(const char *name, const uint8_t *buf, int n)
{
	const char *dir = getenv("HW_WIRE_SEED_DIR");
	if (!dir)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
}

static hw_fetch_part fp = { .tp = { 3, 1 }, .fetch_offset = 42, .current_leader_epoch = 2,
			    .last_fetched_epoch = 1, .partition_max_bytes = 1 << 20 };
static hw_fetch_resp_part rp = { .tp = { 3, 1 }, .high_watermark = 40, .diverging_epoch = -1,
				 .diverging_end_offset = -1, .leader_id = 1, .leader_epoch = 2 };

static void msg(hw_msg *m, int type)
{
	memset(m, 0, sizeof *m);
	m->type = (uint16_t)type;
	m->src = 1;
	m->dst = 2;
	m->correlation_id = 99;
	switch (type) {
	case HW_MSG_PRODUCE:
		make_batch(records, sizeof records);
		m->u.produce = (hw_produce_req){ .acks = -1, .timeout_ms = 30000, .tp = { 3, 1 },
						 .records = records, .records_len = sizeof records };
		break;
	case HW_MSG_PRODUCE_RESP:
		m->u.produce_resp = (hw_produce_resp){ .tp = { 3, 1 }, .base_offset = 5 };
		break;
	case HW_MSG_FETCH:
		m->u.fetch = (hw_fetch_req){ .replica_id = 2, .replica_epoch = 9, .max_bytes = 1 << 20,
					     .n_parts = 1, .parts = &fp };
		break;
	default:
		m->u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &rp };
		break;
	}
}

static void test_roundtrip(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	int plain, n;

	msg(&m, HW_MSG_PRODUCE);
	plain = encode(&m, frame, sizeof frame);
	m.u.produce.want_timing = 1;
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, plain + 1 + 3);         /* n, tag, len 0 */
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_int_equal(d.u.produce.want_timing, 1);
	assert_int_equal(d.n_unknown_tags, 0);
	seed("produce_timing", frame, n);

	msg(&m, HW_MSG_PRODUCE_RESP);
	plain = encode(&m, frame, sizeof frame);
	assert_int_equal(decode(frame, plain, &d, &why), 0);
	assert_int_equal(d.u.produce_resp.has_timing, 0);
	m.u.produce_resp.has_timing = 1;
	for (int i = 0; i < HW_PT__COUNT; i++)
		m.u.produce_resp.timing.stage_ns[i] = (uint32_t)(1000u * (unsigned)i + 7u);
	m.u.produce_resp.timing.stage_ns[HW_PT__COUNT - 1] = UINT32_MAX;
	m.u.produce_resp.timing.critical = 3;
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, plain + 1 + 3 + 4 * HW_PT__COUNT + 4);
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_int_equal(d.u.produce_resp.has_timing, 1);
	assert_memory_equal(&d.u.produce_resp.timing, &m.u.produce_resp.timing, sizeof(hw_produce_timing));
	assert_int_equal(d.u.produce_resp.base_offset, 5);
	seed("produce_resp_timing", frame, n);
	/* tag 9: each follower's acknowledgement */
	m.u.produce_resp.n_acks = 2;
	m.u.produce_resp.acks[0] = (hw_follower_ack){ .id = 2, .ack_ns = 40000, .write_ns = 1500 };
	m.u.produce_resp.acks[1] = (hw_follower_ack){ .id = 3, .ack_ns = 52000, .write_ns = 1700 };
	int with_acks = encode(&m, frame, sizeof frame);
	assert_int_equal(with_acks, n + 3 + 1 + 2 * 12);
	assert_int_equal(decode(frame, with_acks, &d, &why), 0);
	assert_int_equal(d.u.produce_resp.n_acks, 2);
	assert_memory_equal(d.u.produce_resp.acks, m.u.produce_resp.acks, 2 * sizeof(hw_follower_ack));
	seed("produce_resp_timing_acks", frame, with_acks);
	m.u.produce_resp.n_acks = 0;
	m.u.produce_resp.timing.critical = -1;      /* the leader's own write */
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_int_equal(d.u.produce_resp.timing.critical, -1);

	msg(&m, HW_MSG_FETCH);
	plain = encode(&m, frame, sizeof frame);
	m.u.fetch.has_turnaround = 1;
	m.u.fetch.turn_write_ns = 12345;
	m.u.fetch.turn_send_ns = 67;
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, plain + 1 + 3 + 8);
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_int_equal(d.u.fetch.has_turnaround, 1);
	assert_int_equal(d.u.fetch.turn_write_ns, 12345);
	assert_int_equal(d.u.fetch.turn_send_ns, 67);
	assert_int_equal(d.u.fetch.parts[0].fetch_offset, 42);
	seed("fetch_turnaround", frame, n);

	msg(&m, HW_MSG_FETCH_RESP);
	plain = encode(&m, frame, sizeof frame);
	m.u.fetch_resp.want_turnaround = 1;
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, plain + 1 + 3);
	assert_int_equal(decode(frame, n, &d, &why), 0);
	assert_int_equal(d.u.fetch_resp.want_turnaround, 1);
	seed("fetch_resp_turnaround", frame, n);
}

/* A critical replica below -1 cannot be encoded and is a drop; an encoder
 * bug leaves no frame. */
static void test_bad_critical(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why = HW_WIRE_DROP__COUNT;
	msg(&m, HW_MSG_PRODUCE_RESP);
	m.u.produce_resp.has_timing = 1;
	m.u.produce_resp.timing.critical = -2;
	assert_true(encode(&m, frame, sizeof frame) < 0);
	/* the same frame with -1 patched to -2 on the wire */
	m.u.produce_resp.timing.critical = -1;
	int n = encode(&m, frame, sizeof frame);
	assert_true(n > 4);
	frame[n - 1] = 0xfe; /* critical is the section's last 4 bytes: ff ff ff fe = -2 */
	assert_int_not_equal(decode(frame, n, &d, &why), 0);
	assert_string_equal(hw_wire_drop_name(why), hw_wire_drop_name(HW_WIRE_DROP_BAD_FIELD));
}

/* Tag 9: a count of 0 or above HW_MAX_RF - 1 is BAD_COUNT (and cannot be
 * encoded), a negative follower id BAD_FIELD. */
static void test_bad_acks(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why = HW_WIRE_DROP__COUNT;
	msg(&m, HW_MSG_PRODUCE_RESP);
	m.u.produce_resp.n_acks = HW_MAX_RF;
	assert_true(encode(&m, frame, sizeof frame) < 0);
	m.u.produce_resp.n_acks = 1;
	m.u.produce_resp.acks[0] = (hw_follower_ack){ .id = -1 };
	assert_true(encode(&m, frame, sizeof frame) < 0);
	m.u.produce_resp.acks[0].id = 4;
	int n = encode(&m, frame, sizeof frame);
	assert_true(n > 13);
	/* section: n=1, tag 9, len 13, count 1, id 4 (4 bytes), ack, write */
	uint8_t *cnt = frame + n - 13, *id = frame + n - 12;
	assert_int_equal(*cnt, 1);
	*cnt = 0;
	assert_int_not_equal(decode(frame, n, &d, &why), 0);
	assert_string_equal(hw_wire_drop_name(why), hw_wire_drop_name(HW_WIRE_DROP_BAD_COUNT));
	*cnt = 1;
	id[0] = 0x80;
	assert_int_not_equal(decode(frame, n, &d, &why), 0);
	assert_string_equal(hw_wire_drop_name(why), hw_wire_drop_name(HW_WIRE_DROP_BAD_FIELD));
}

/* Patch payload_len after changing the body's length (auth is off). */
static void fix_len(uint8_t *buf, int len)
{
	uint32_t plen = (uint32_t)(len - HW_WIRE_HDR_LEN);
	buf[32] = (uint8_t)(plen >> 24);
	buf[33] = (uint8_t)(plen >> 16);
	buf[34] = (uint8_t)(plen >> 8);
	buf[35] = (uint8_t)plen;
}

/* A flag tag with a value is TRAILING; a turnaround cut short is TRUNCATED. */
static void test_bad_values(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why = HW_WIRE_DROP__COUNT;
	msg(&m, HW_MSG_PRODUCE);
	int plain = encode(&m, frame, sizeof frame);
	const uint8_t flag_with_value[] = { 1, 8, 0, 1, 0x55 };
	memcpy(frame + plain, flag_with_value, sizeof flag_with_value);
	fix_len(frame, plain + (int)sizeof flag_with_value);
	assert_int_not_equal(decode(frame, plain + (int)sizeof flag_with_value, &d, &why), 0);
	assert_string_equal(hw_wire_drop_name(why), hw_wire_drop_name(HW_WIRE_DROP_TRAILING));

	msg(&m, HW_MSG_FETCH);
	plain = encode(&m, frame, sizeof frame);
	const uint8_t short_turn[] = { 1, 8, 0, 4, 0, 0, 0, 1 };
	memcpy(frame + plain, short_turn, sizeof short_turn);
	fix_len(frame, plain + (int)sizeof short_turn);
	why = HW_WIRE_DROP__COUNT;
	assert_int_not_equal(decode(frame, plain + (int)sizeof short_turn, &d, &why), 0);
	assert_string_equal(hw_wire_drop_name(why), hw_wire_drop_name(HW_WIRE_DROP_TRUNCATED));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_bad_critical),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_bad_acks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
