/* test_batch.c — Kafka RecordBatch v2 codec: byte compatibility with a batch
 * hand-assembled from the Kafka spec, random round trips, every truncation,
 * every bit flip, hostile record fields, stamping, multi-batch iteration. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_batch.h"
#include "hw_crc32c.h"
#include "hw_err.h"
#include "../../support/hw_test.h"
#include "hw_varint.h"

/* ---- the hand-assembled batch ------------------------------------------
 * One record, key "k1", value "hello", one header "h" -> "v", producer 1000
 * epoch 5 sequence 7, CreateTime 1700000000000 (0x0000018BCFE56800).
 * Every byte below is written from DefaultRecordBatch / DefaultRecord, not
 * from the encoder. The CRC was computed with an independent bitwise
 * CRC-32C (Python) over bytes 21..78. */
static const uint8_t kafka_batch[79] = {
	0, 0, 0, 0, 0, 0, 0, 0,                         /* baseOffset 0 */
	0x00, 0x00, 0x00, 0x43,                         /* batchLength 67 = 79 - 12 */
	0xff, 0xff, 0xff, 0xff,                         /* partitionLeaderEpoch -1 */
	0x02,                                           /* magic */
	0x2e, 0xc5, 0x8c, 0xb2,                         /* crc */
	0x00, 0x00,                                     /* attributes */
	0x00, 0x00, 0x00, 0x00,                         /* lastOffsetDelta 0 */
	0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, /* baseTimestamp */
	0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, /* maxTimestamp */
	0, 0, 0, 0, 0, 0, 0x03, 0xe8,                   /* producerId 1000 */
	0x00, 0x05,                                     /* producerEpoch 5 */
	0x00, 0x00, 0x00, 0x07,                         /* baseSequence 7 */
	0x00, 0x00, 0x00, 0x01,                         /* recordsCount 1 */
	0x22,                   /* record length 17 (zigzag 34) */
	0x00,                   /* attributes */
	0x00,                   /* timestampDelta 0 */
	0x00,                   /* offsetDelta 0 */
	0x04, 'k', '1',         /* keyLength 2 */
	0x0a, 'h', 'e', 'l', 'l', 'o', /* valueLength 5 */
	0x02,                   /* headerCount 1 */
	0x02, 'h',              /* header key length 1 */
	0x02, 'v',              /* header value length 1 */
};

static void test_kafka_bytes(void **state)
{
	(void)state;
	hw_record_header hdr = { (const uint8_t *)"h", 1, (const uint8_t *)"v", 1 };
	hw_record_in rec = { 1700000000000LL, "k1", 2, "hello", 5, &hdr, 1 };
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	s.producer_id = 1000;
	s.producer_epoch = 5;
	s.base_sequence = 7;
	uint8_t buf[128];
	assert_int_equal(hw_batch_build_size(&s, &rec, 1), (ssize_t)sizeof kafka_batch);
	assert_int_equal(hw_batch_build(buf, sizeof buf, &s, &rec, 1), (ssize_t)sizeof kafka_batch);
	assert_memory_equal(buf, kafka_batch, sizeof kafka_batch);
	/* the CRC both paths compute over attributes..end */
	assert_int_equal(hw_crc32c_sw(0, kafka_batch + 21, sizeof kafka_batch - 21), 0x2EC58CB2u);
	assert_int_equal(hw_crc32c_hw(0, kafka_batch + 21, sizeof kafka_batch - 21), 0x2EC58CB2u);

	hw_batch_hdr h;
	assert_int_equal(hw_batch_validate(kafka_batch, sizeof kafka_batch, &h,
					   HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT), 0);
	assert_int_equal(h.size, 79);
	assert_int_equal(h.batch_length, 67);
	assert_int_equal(h.partition_leader_epoch, -1);
	assert_int_equal(h.crc, 0x2EC58CB2u);
	assert_true(h.producer_id == 1000);
	assert_int_equal(h.producer_epoch, 5);
	assert_int_equal(h.base_sequence, 7);
	assert_int_equal(hw_batch_last_sequence(&h), 7);
	assert_int_equal(h.record_count, 1);
	assert_true(h.max_timestamp == 1700000000000LL);
	assert_true(hw_batch_last_offset(&h) == 0);
	assert_true(hw_batch_next_offset(&h) == 1);

	hw_record_iter it;
	hw_record r;
	assert_int_equal(hw_record_iter_init(&it, kafka_batch, sizeof kafka_batch, HW_BATCH_V_CRC), 0);
	assert_int_equal(hw_record_iter_next(&it, &r), 1);
	assert_true(r.offset == 0 && r.timestamp == 1700000000000LL);
	assert_int_equal(r.key_len, 2);
	assert_memory_equal(r.key, "k1", 2);
	assert_int_equal(r.value_len, 5);
	assert_memory_equal(r.value, "hello", 5);
	assert_int_equal(r.header_count, 1);
	assert_ptr_equal(r.raw, kafka_batch + 61);
	assert_int_equal(r.raw_len, 18);
	const uint8_t *hp = r.headers;
	hw_record_header rh;
	assert_int_equal(hw_record_header_next(&hp, r.headers + r.headers_len, &rh), 1);
	assert_int_equal(rh.key_len, 1);
	assert_int_equal(rh.key[0], 'h');
	assert_int_equal(rh.value_len, 1);
	assert_int_equal(rh.value[0], 'v');
	assert_int_equal(hw_record_header_next(&hp, r.headers + r.headers_len, &rh), 0);
	assert_int_equal(hw_record_iter_next(&it, &r), 0);
	assert_int_equal(hw_record_iter_next(&it, &r), 0);
}

/* ---- random batches ------------------------------------------------------ */
#define MAXR 40
struct rnd_batch {
	hw_batch_spec spec;
	hw_record_in recs[MAXR];
	hw_record_header hdrs[MAXR][4];
	uint8_t pool[MAXR][6][64];
	size_t n;
};

static void rnd_field(uint8_t *pool, const void **data, int32_t *len, int nullable)
{
	if (nullable && hw_test_below(5) == 0) {
		*data = NULL;
		*len = (int32_t)hw_test_below(100) - 50; /* ignored for NULL */
		return;
	}
	*len = (int32_t)hw_test_below(64);
	for (int32_t i = 0; i < *len; i++)
		pool[i] = (uint8_t)hw_test_rand();
	*data = pool;
}

static void rnd_make(struct rnd_batch *b)
{
	hw_batch_spec_init(&b->spec);
	b->spec.base_offset = (int64_t)hw_test_below(1ull << 40);
	b->spec.partition_leader_epoch = (int32_t)hw_test_below(1000);
	if (hw_test_below(2)) {
		b->spec.producer_id = (int64_t)hw_test_below(1ull << 40);
		b->spec.producer_epoch = (int16_t)hw_test_below(100);
		b->spec.base_sequence = (int32_t)hw_test_below(1u << 30);
	}
	b->n = 1 + hw_test_below(MAXR);
	int64_t t0 = 1600000000000LL + (int64_t)hw_test_below(1ull << 36);
	for (size_t i = 0; i < b->n; i++) {
		hw_record_in *r = &b->recs[i];
		/* timestamps go backwards sometimes: negative deltas must work */
		r->timestamp = t0 + (int64_t)hw_test_below(2000000) - 1000000;
		rnd_field(b->pool[i][0], &r->key, &r->key_len, 1);
		rnd_field(b->pool[i][1], &r->value, &r->value_len, 1);
		r->header_count = (int32_t)hw_test_below(5);
		r->headers = b->hdrs[i];
		for (int32_t j = 0; j < r->header_count; j++) {
			const void *k, *v;
			rnd_field(b->pool[i][2 + j % 2] , &k, &b->hdrs[i][j].key_len, 0);
			rnd_field(b->pool[i][4 + j % 2], &v, &b->hdrs[i][j].value_len, 1);
			b->hdrs[i][j].key = k;
			b->hdrs[i][j].value = v;
		}
	}
}

static void check_field(const uint8_t *got, int32_t got_len, const void *want, int32_t want_len)
{
	if (want == NULL) {
		assert_int_equal(got_len, -1);
		assert_null(got);
	} else {
		assert_int_equal(got_len, want_len);
		if (want_len)
			assert_memory_equal(got, want, (size_t)want_len);
	}
}

static void rnd_check(const struct rnd_batch *b, const uint8_t *buf, size_t len)
{
	hw_batch_hdr h;
	assert_int_equal(hw_batch_validate(buf, len, &h, HW_BATCH_V_FULL), 0);
	assert_int_equal(h.record_count, (int32_t)b->n);
	assert_true(h.base_offset == b->spec.base_offset);
	assert_int_equal(h.partition_leader_epoch, b->spec.partition_leader_epoch);
	int64_t maxts = INT64_MIN;
	for (size_t i = 0; i < b->n; i++)
		if (b->recs[i].timestamp > maxts)
			maxts = b->recs[i].timestamp;
	assert_true(h.max_timestamp == maxts);
	assert_true(h.base_timestamp == b->recs[0].timestamp);
	hw_record_iter it;
	hw_record r;
	assert_int_equal(hw_record_iter_init(&it, buf, len, HW_BATCH_V_CRC), 0);
	for (size_t i = 0; i < b->n; i++) {
		const hw_record_in *w = &b->recs[i];
		assert_int_equal(hw_record_iter_next(&it, &r), 1);
		assert_true(r.offset == b->spec.base_offset + (int64_t)i);
		assert_true(r.timestamp == w->timestamp);
		check_field(r.key, r.key_len, w->key, w->key_len);
		check_field(r.value, r.value_len, w->value, w->value_len);
		assert_int_equal(r.header_count, w->header_count);
		const uint8_t *hp = r.headers;
		for (int32_t j = 0; j < w->header_count; j++) {
			hw_record_header rh;
			assert_int_equal(hw_record_header_next(&hp, r.headers + r.headers_len, &rh), 1);
			check_field(rh.key, rh.key_len, w->headers[j].key, w->headers[j].key_len);
			check_field(rh.value, rh.value_len, w->headers[j].value, w->headers[j].value_len);
		}
		assert_ptr_equal(hp, r.headers + r.headers_len);
	}
	assert_int_equal(hw_record_iter_next(&it, &r), 0);
}

static uint8_t big[1 << 20];

static void test_round_trip_random(void **state)
{
	(void)state;
	static struct rnd_batch b;
	for (int iter = 0; iter < 300; iter++) {
		rnd_make(&b);
		ssize_t sz = hw_batch_build_size(&b.spec, b.recs, b.n);
		assert_true(sz >= HW_BATCH_HEADER_SIZE + 7 * (ssize_t)b.n);
		assert_int_equal(hw_batch_build(big, (size_t)sz - 1, &b.spec, b.recs, b.n), -EMSGSIZE);
		assert_int_equal(hw_batch_build(big, sizeof big, &b.spec, b.recs, b.n), sz);
		rnd_check(&b, big, (size_t)sz);
		/* trailing bytes after the batch are not part of it */
		big[sz] = 0xEE;
		rnd_check(&b, big, (size_t)sz + 1);
	}
}

/* Build one random valid batch into buf; returns its size. */
static size_t one_batch(uint8_t *buf, size_t cap)
{
	static struct rnd_batch b;
	rnd_make(&b);
	ssize_t sz = hw_batch_build(buf, cap, &b.spec, b.recs, b.n);
	assert_true(sz > 0);
	return (size_t)sz;
}

static void test_truncation_every_length(void **state)
{
	(void)state;
	for (int iter = 0; iter < 20; iter++) {
		size_t sz = one_batch(big, sizeof big);
		for (size_t len = 0; len < sz; len++) {
			uint8_t *copy = malloc(len ? len : 1); /* exact-size: ASan sees overreads */
			memcpy(copy, big, len);
			hw_batch_hdr h;
			int rc = hw_batch_validate(copy, len, &h, HW_BATCH_V_FULL);
			assert_int_equal(rc, len < HW_BATCH_HEADER_SIZE ? HW_BATCH_SHORT_HEADER
								      : HW_BATCH_TRUNCATED);
			assert_int_equal(hw_batch_rc_kafka(rc), HW_ERR_CORRUPT_MESSAGE);
			hw_batch_iter bi;
			hw_batch_iter_init(&bi, copy, len, HW_BATCH_V_FULL);
			assert_int_equal(hw_batch_iter_next(&bi, &h, NULL), 0);
			assert_int_equal(hw_batch_iter_whole_bytes(&bi), 0);
			assert_int_equal(hw_batch_iter_rest_bytes(&bi), len);
			free(copy);
		}
	}
}

static void test_multi_batch_iter(void **state)
{
	(void)state;
	size_t ends[8], total = 0;
	int n = 2 + (int)hw_test_below(6);
	for (int i = 0; i < n; i++) {
		total += one_batch(big + total, sizeof big - total);
		ends[i] = total;
	}
	/* every cut: whole batches counted exactly, no error */
	for (size_t len = 0; len <= total; len++) {
		hw_batch_iter it;
		hw_batch_iter_init(&it, big, len, HW_BATCH_V_FULL);
		const uint8_t *bp;
		hw_batch_hdr h;
		int got = 0, rc;
		while ((rc = hw_batch_iter_next(&it, &h, &bp)) == 1) {
			assert_ptr_equal(bp, big + (got ? ends[got - 1] : 0));
			got++;
		}
		assert_int_equal(rc, 0);
		int want = 0;
		while (want < n && ends[want] <= len)
			want++;
		assert_int_equal(got, want);
		assert_int_equal(hw_batch_iter_whole_bytes(&it), want ? ends[want - 1] : 0);
	}
	/* corrupt batch 1: the walk stops there with BAD_CRC, whole = first batch */
	big[ends[0] + 30] ^= 0x40;
	hw_batch_iter it;
	hw_batch_iter_init(&it, big, total, HW_BATCH_V_FULL);
	assert_int_equal(hw_batch_iter_next(&it, NULL, NULL), 1);
	assert_int_equal(hw_batch_iter_next(&it, NULL, NULL), HW_BATCH_BAD_CRC);
	assert_int_equal(hw_batch_iter_next(&it, NULL, NULL), HW_BATCH_BAD_CRC); /* sticky */
	assert_int_equal(hw_batch_iter_whole_bytes(&it), ends[0]);
	/* framing-only walk does not look at the CRC */
	hw_batch_iter_init(&it, big, total, 0);
	int cnt = 0;
	while (hw_batch_iter_next(&it, NULL, NULL) == 1)
		cnt++;
	assert_int_equal(cnt, n);
	/* nonsense batchLength in the 2nd batch is corruption, not a partial tail */
	hw_be32_put(big + ends[0] + HW_BATCH_OFF_LENGTH, 10);
	hw_batch_iter_init(&it, big, total, 0);
	assert_int_equal(hw_batch_iter_next(&it, NULL, NULL), 1);
	assert_int_equal(hw_batch_iter_next(&it, NULL, NULL), HW_BATCH_BAD_BATCH_LENGTH);
}

static void test_bit_flips(void **state)
{
	(void)state;
	size_t sz = one_batch(big, sizeof big);
	for (size_t bit = 0; bit < sz * 8; bit++) {
		size_t byte = bit / 8;
		big[byte] ^= (uint8_t)(1u << (bit % 8));
		int rc = hw_batch_validate(big, sz, NULL, HW_BATCH_V_FULL);
		if (byte < 8 || (byte >= 12 && byte < 16))
			assert_int_equal(rc, 0); /* baseOffset, leader epoch: outside the CRC */
		else if (byte < 12)
			assert_true(rc == HW_BATCH_BAD_BATCH_LENGTH || rc == HW_BATCH_TRUNCATED ||
				    rc == HW_BATCH_BAD_CRC /* shorter batch, CRC over fewer bytes */);
		else if (byte == HW_BATCH_OFF_MAGIC)
			assert_int_equal(rc, HW_BATCH_BAD_MAGIC);
		else
			assert_int_equal(rc, HW_BATCH_BAD_CRC);
		/* without the CRC check nothing may crash; with records on */
		(void)hw_batch_validate(big, sz, NULL, HW_BATCH_V_RECORDS);
		big[byte] ^= (uint8_t)(1u << (bit % 8));
	}
	assert_int_equal(hw_batch_validate(big, sz, NULL, HW_BATCH_V_FULL), 0);
}

/* ---- hostile records ------------------------------------------------------
 * Assemble a batch header around raw record bytes, with a correct CRC, so the
 * record-level checks (not the CRC) must catch the problem. */
static size_t mk(uint8_t *b, const uint8_t *recs, size_t rlen, int32_t count,
		 int32_t last_delta, int16_t attrs)
{
	memset(b, 0, HW_BATCH_HEADER_SIZE);
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, (uint32_t)(HW_BATCH_HEADER_SIZE - 12 + rlen));
	b[HW_BATCH_OFF_MAGIC] = 2;
	hw_be16_put(b + HW_BATCH_OFF_ATTRIBUTES, (uint16_t)attrs);
	hw_be32_put(b + HW_BATCH_OFF_LAST_DELTA, (uint32_t)last_delta);
	hw_be64_put(b + HW_BATCH_OFF_PRODUCER_ID, (uint64_t)-1);
	hw_be16_put(b + HW_BATCH_OFF_PRODUCER_EPOCH, (uint16_t)-1);
	hw_be32_put(b + HW_BATCH_OFF_BASE_SEQ, (uint32_t)-1);
	hw_be32_put(b + HW_BATCH_OFF_COUNT, (uint32_t)count);
	memcpy(b + HW_BATCH_HEADER_SIZE, recs, rlen);
	size_t sz = HW_BATCH_HEADER_SIZE + rlen;
	assert_int_equal(hw_batch_update_crc(b, sz), 0);
	return sz;
}

static int vrec(const uint8_t *recs, size_t rlen, int32_t count)
{
	uint8_t b[256];
	size_t sz = mk(b, recs, rlen, count, count - 1, 0);
	int rc = hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL);
	/* the iterator must agree with validate on the first failure */
	hw_record_iter it;
	hw_record r;
	int irc;
	irc = hw_record_iter_init(&it, b, sz, HW_BATCH_V_CRC);
	while (irc == 0 && (irc = hw_record_iter_next(&it, &r)) == 1)
		irc = 0;
	assert_int_equal(irc, rc);
	return rc;
}

static void test_hostile_records(void **state)
{
	(void)state;
	/* a good minimal record: len 6 (0x0c), attr, tsd, offd, key null, value null, 0 headers */
	static const uint8_t good[] = { 0x0c, 0, 0, 0, 0x01, 0x01, 0 };
	assert_int_equal(vrec(good, sizeof good, 1), 0);
	/* negative record length */
	static const uint8_t neg_len[] = { 0x01, 0, 0, 0, 0x01, 0x01, 0 };
	assert_int_equal(vrec(neg_len, sizeof neg_len, 1), HW_BATCH_RECORD_LENGTH);
	/* record length past the batch */
	static const uint8_t long_len[] = { 0x7e, 0, 0, 0, 0x01, 0x01, 0 };
	assert_int_equal(vrec(long_len, sizeof long_len, 1), HW_BATCH_RECORD_TRUNCATED);
	/* record length shorter than its fields */
	static const uint8_t short_len[] = { 0x0a, 0, 0, 0, 0x01, 0x01, 0, 0 };
	assert_int_equal(vrec(short_len, sizeof short_len, 1), HW_BATCH_RECORD_TRUNCATED);
	/* record length longer than its fields (bytes left inside the record) */
	static const uint8_t slack[] = { 0x0e, 0, 0, 0, 0x01, 0x01, 0, 0 };
	assert_int_equal(vrec(slack, sizeof slack, 1), HW_BATCH_RECORD_LENGTH);
	/* key length -2 */
	static const uint8_t key_m2[] = { 0x0c, 0, 0, 0, 0x03, 0x01, 0 };
	assert_int_equal(vrec(key_m2, sizeof key_m2, 1), HW_BATCH_FIELD_LENGTH);
	/* key length huge */
	static const uint8_t key_big[] = { 0x10, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x01, 0 };
	assert_int_equal(vrec(key_big, sizeof key_big, 1), HW_BATCH_RECORD_TRUNCATED);
	/* value varint 6 bytes long */
	static const uint8_t val_ovf[] = { 0x14, 0, 0, 0, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0 };
	assert_int_equal(vrec(val_ovf, sizeof val_ovf, 1), HW_BATCH_RECORD_VARINT);
	/* timestampDelta varlong 11 bytes */
	static const uint8_t ts_ovf[] = { 0x1e, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x00, 0, 0x01, 0x01, 0 };
	assert_int_equal(vrec(ts_ovf, sizeof ts_ovf, 1), HW_BATCH_RECORD_VARINT);
	/* record length varint overflow */
	static const uint8_t len_ovf[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0 };
	assert_int_equal(vrec(len_ovf, sizeof len_ovf, 1), HW_BATCH_RECORD_VARINT);
	/* negative header count */
	static const uint8_t hc_neg[] = { 0x0c, 0, 0, 0, 0x01, 0x01, 0x01 };
	assert_int_equal(vrec(hc_neg, sizeof hc_neg, 1), HW_BATCH_HEADER_COUNT);
	/* header count huge */
	static const uint8_t hc_big[] = { 0x14, 0, 0, 0, 0x01, 0x01, 0xfe, 0xff, 0xff, 0xff, 0x07, 0 };
	assert_int_equal(vrec(hc_big, sizeof hc_big, 1), HW_BATCH_HEADER_COUNT);
	/* header with null (-1) key */
	static const uint8_t hk_null[] = { 0x10, 0, 0, 0, 0x01, 0x01, 0x02, 0x01, 0x01 };
	assert_int_equal(vrec(hk_null, sizeof hk_null, 1), HW_BATCH_FIELD_LENGTH);
	/* header with null value is fine */
	static const uint8_t hv_null[] = { 0x12, 0, 0, 0, 0x01, 0x01, 0x02, 0x02, 'a', 0x01 };
	assert_int_equal(vrec(hv_null, sizeof hv_null, 1), 0);
	/* offsetDelta 1 for the first record */
	static const uint8_t od[] = { 0x0c, 0, 0, 0x02, 0x01, 0x01, 0 };
	assert_int_equal(vrec(od, sizeof od, 1), HW_BATCH_OFFSET_DELTA);
	/* count 2 but only one record: the 2nd has length 0, its fields run past it */
	static const uint8_t one_plus[] = { 0x0c, 0, 0, 0, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(vrec(one_plus, sizeof one_plus, 2), HW_BATCH_RECORD_TRUNCATED);
	/* count 1 but bytes left after the record */
	assert_int_equal(vrec(one_plus, sizeof one_plus, 1), HW_BATCH_RECORD_COUNT);
	/* two good records */
	static const uint8_t two[] = { 0x0c, 0, 0, 0, 0x01, 0x01, 0, 0x0c, 0, 0, 0x02, 0x01, 0x01, 0 };
	assert_int_equal(vrec(two, sizeof two, 2), 0);
	/* truncated mid-record at every length: a specific record error, never a crash */
	for (size_t cut = 1; cut < sizeof two; cut++) {
		int rc = vrec(two, cut, 2);
		assert_true(rc == HW_BATCH_RECORD_TRUNCATED || rc == HW_BATCH_RECORD_COUNT ||
			    rc == HW_BATCH_BAD_RECORD_COUNT);
		assert_int_equal(hw_batch_rc_kafka(rc), HW_ERR_INVALID_RECORD);
	}
}

static void test_hostile_header(void **state)
{
	(void)state;
	static const uint8_t good[] = { 0x0c, 0, 0, 0, 0x01, 0x01, 0 };
	uint8_t b[256];
	size_t sz;
	/* counts */
	sz = mk(b, good, sizeof good, 0, -1, 0);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), HW_BATCH_BAD_RECORD_COUNT);
	sz = mk(b, good, sizeof good, -5, -6, 0);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), HW_BATCH_BAD_RECORD_COUNT);
	sz = mk(b, good, sizeof good, INT32_MAX, INT32_MAX - 1, 0);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), HW_BATCH_BAD_RECORD_COUNT);
	sz = mk(b, good, sizeof good, 1, 5, 0); /* lastOffsetDelta disagrees */
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), HW_BATCH_BAD_RECORD_COUNT);
	/* codecs */
	for (int c = 1; c <= 7; c++) {
		sz = mk(b, good, sizeof good, 1, 0, (int16_t)c);
		int rc = hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL);
		/* 1..4: these records are not a gzip/snappy/lz4/zstd stream */
		assert_int_equal(rc, c <= 4 ? HW_BATCH_DECOMPRESS : HW_BATCH_UNKNOWN_CODEC);
		assert_int_equal(hw_batch_rc_kafka(rc), c <= 4 ? HW_ERR_CORRUPT_MESSAGE
							       : HW_ERR_UNSUPPORTED_COMPRESSION_TYPE);
		/* without the records walk nothing is decompressed: a header-only
		 * check (log recovery) accepts the codec bits */
		assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_CRC),
				 c <= 4 ? 0 : HW_BATCH_UNKNOWN_CODEC);
	}
	/* magic */
	sz = mk(b, good, sizeof good, 1, 0, 0);
	b[HW_BATCH_OFF_MAGIC] = 1;
	assert_int_equal(hw_batch_validate(b, sz, NULL, 0), HW_BATCH_BAD_MAGIC);
	/* batchLength extremes */
	sz = mk(b, good, sizeof good, 1, 0, 0);
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, 48);
	assert_int_equal(hw_batch_validate(b, sz, NULL, 0), HW_BATCH_BAD_BATCH_LENGTH);
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, (uint32_t)-1);
	assert_int_equal(hw_batch_validate(b, sz, NULL, 0), HW_BATCH_BAD_BATCH_LENGTH);
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, INT32_MAX);
	assert_int_equal(hw_batch_validate(b, sz, NULL, 0), HW_BATCH_BAD_BATCH_LENGTH);
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, INT32_MAX - 12);
	assert_int_equal(hw_batch_validate(b, sz, NULL, 0), HW_BATCH_TRUNCATED);
	/* control batches */
	sz = mk(b, good, sizeof good, 1, 0, HW_BATCH_ATTR_CONTROL | HW_BATCH_ATTR_TRANSACTIONAL);
	hw_be64_put(b + HW_BATCH_OFF_PRODUCER_ID, 9);
	hw_batch_update_crc(b, sz);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), 0);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT),
			 HW_BATCH_CONTROL_FROM_CLIENT);
	sz = mk(b, good, sizeof good, 1, 0, HW_BATCH_ATTR_CONTROL);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), HW_BATCH_BAD_CONTROL);
	/* transactional without producer id */
	sz = mk(b, good, sizeof good, 1, 0, HW_BATCH_ATTR_TRANSACTIONAL);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), HW_BATCH_BAD_PRODUCER);
	/* producer id with no sequence, from a client */
	sz = mk(b, good, sizeof good, 1, 0, 0);
	hw_be64_put(b + HW_BATCH_OFF_PRODUCER_ID, 9);
	hw_batch_update_crc(b, sz);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL), 0);
	assert_int_equal(hw_batch_validate(b, sz, NULL, HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT),
			 HW_BATCH_BAD_PRODUCER);
	/* size limits */
	hw_batch_hdr h;
	assert_int_equal(hw_batch_parse_header(b, sz, &h), 0);
	assert_int_equal(hw_batch_check_size(&h, sz), 0);
	assert_int_equal(hw_batch_check_size(&h, sz - 1), HW_BATCH_TOO_LARGE);
	assert_int_equal(hw_batch_rc_kafka(HW_BATCH_TOO_LARGE), HW_ERR_MESSAGE_TOO_LARGE);
	assert_int_equal(hw_batch_check_set_size(100, 99), HW_BATCH_LIST_TOO_LARGE);
	assert_int_equal(hw_batch_rc_kafka(HW_BATCH_LIST_TOO_LARGE), HW_ERR_RECORD_LIST_TOO_LARGE);
}

static void test_stamping(void **state)
{
	(void)state;
	size_t sz = one_batch(big, sizeof big);
	hw_batch_hdr h0, h;
	assert_int_equal(hw_batch_validate(big, sz, &h0, HW_BATCH_V_FULL), 0);
	hw_batch_set_base_offset(big, 123456789012LL);
	hw_batch_set_leader_epoch(big, 77);
	assert_int_equal(hw_batch_validate(big, sz, &h, HW_BATCH_V_FULL), 0); /* CRC unaffected */
	assert_true(h.base_offset == 123456789012LL);
	assert_int_equal(h.partition_leader_epoch, 77);
	assert_int_equal(h.crc, h0.crc);
	assert_true(hw_batch_raw_base_offset(big) == 123456789012LL);
	assert_int_equal(hw_batch_raw_leader_epoch(big), 77);
	assert_true(hw_batch_last_offset(&h) == 123456789012LL + h0.last_offset_delta);
	hw_record_iter it;
	hw_record r;
	assert_int_equal(hw_record_iter_init(&it, big, sz, HW_BATCH_V_CRC), 0);
	for (int64_t i = 0; hw_record_iter_next(&it, &r) == 1; i++)
		assert_true(r.offset == 123456789012LL + i);
	/* LogAppendTime: attribute, maxTimestamp, new CRC, every record's timestamp */
	assert_int_equal(hw_batch_set_log_append_time(big, sz, 1800000000000LL), 0);
	assert_int_equal(hw_batch_validate(big, sz, &h, HW_BATCH_V_FULL), 0);
	assert_true(hw_batch_is_log_append_time(&h));
	assert_true(h.max_timestamp == 1800000000000LL);
	assert_int_not_equal(h.crc, h0.crc);
	assert_int_equal(hw_record_iter_init(&it, big, sz, HW_BATCH_V_CRC), 0);
	int n = 0;
	while (hw_record_iter_next(&it, &r) == 1) {
		assert_true(r.timestamp == 1800000000000LL);
		n++;
	}
	assert_int_equal(n, h.record_count);
	assert_int_equal(hw_batch_set_log_append_time(big, 60, 1), HW_BATCH_SHORT_HEADER);
}

static void test_builder_errors_and_sequences(void **state)
{
	(void)state;
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	uint8_t buf[256];
	hw_record_in r = { 5, NULL, 0, "x", 1, NULL, 0 };
	assert_int_equal(hw_batch_build(buf, sizeof buf, &s, &r, 0), -EINVAL);
	r.value_len = -3;
	assert_int_equal(hw_batch_build(buf, sizeof buf, &s, &r, 1), -EINVAL);
	r.value_len = 1;
	hw_record_header bad = { NULL, 0, NULL, -1 };
	r.headers = &bad;
	r.header_count = 1;
	assert_int_equal(hw_batch_build(buf, sizeof buf, &s, &r, 1), -EINVAL);
	r.header_count = 0;
	s.attributes = HW_BATCH_CODEC_GZIP;
	assert_int_equal(hw_batch_build(buf, sizeof buf, &s, &r, 1), -EINVAL);
	s.attributes = 0;
	assert_int_equal(hw_batch_build(buf, 10, &s, &r, 1), -EMSGSIZE);
	assert_true(hw_batch_build(buf, sizeof buf, &s, &r, 1) > 0);

	hw_batch_hdr h = { 0 };
	h.base_sequence = INT32_MAX - 1;
	h.last_offset_delta = 3;
	assert_int_equal(hw_batch_last_sequence(&h), 1); /* wraps past INT32_MAX to 0 */
	h.base_sequence = HW_NO_SEQUENCE;
	assert_int_equal(hw_batch_last_sequence(&h), HW_NO_SEQUENCE);
	assert_int_equal(hw_batch_seq_add(10, 5), 15);
	assert_int_equal(hw_batch_seq_add(INT32_MAX, 1), 0);
}

static void test_rc_table(void **state)
{
	(void)state;
	static const int rcs[] = {
#define X(name, num, kerr, desc) HW_BATCH_##name,
		HW_BATCH_RC_TABLE(X)
#undef X
	};
	for (size_t i = 0; i < sizeof rcs / sizeof rcs[0]; i++) {
		assert_true(rcs[i] == 0 || rcs[i] <= -1000); /* never collides with -errno */
		assert_true(hw_err_known(hw_batch_rc_kafka(rcs[i])));
		assert_string_not_equal(hw_batch_rc_name(rcs[i]), "UNKNOWN");
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(hw_batch_rc_name(rcs[i]), hw_batch_rc_name(rcs[j]));
	}
	assert_int_equal(hw_batch_rc_kafka(HW_BATCH_BAD_CRC), HW_ERR_CORRUPT_MESSAGE);
	assert_int_equal(hw_batch_rc_kafka(HW_BATCH_OFFSET_DELTA), HW_ERR_INVALID_RECORD);
	assert_int_equal(hw_batch_rc_kafka(-EINVAL), HW_ERR_UNKNOWN_SERVER_ERROR);
	assert_string_equal(hw_batch_rc_name(-EINVAL), "UNKNOWN");
}

int main(void)
{
	hw_test_seed_init("record_batch");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kafka_bytes),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_truncation_every_length),
		cmocka_unit_test(test_multi_batch_iter),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_hostile_records),
		cmocka_unit_test(test_hostile_header),
		cmocka_unit_test(test_stamping),
		cmocka_unit_test(test_builder_errors_and_sequences),
		cmocka_unit_test(test_rc_table),
	};
	return cmocka_run_group_tests_name("record_batch", tests, NULL, NULL);
}
