/* test_batch_z.c — compressed RecordBatch v2 (engine/record hw_batch_z.c):
 * batches compressed by zlib, libsnappy (raw and xerial framing), liblz4
 * and libzstd validate, iterate to the same records as the uncompressed
 * batch, and are never modified; record-level damage inside a compressed
 * section gives the same rc as in an uncompressed one; corrupt or cut
 * streams are CORRUPT_MESSAGE, bombs MESSAGE_TOO_LARGE, codec ids 5-7
 * UNSUPPORTED_COMPRESSION_TYPE; the record iterator's scratch lifetime. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_batch.h"
#include "hw_compress.h"
#include "hw_err.h"
#include "../../support/hw_test.h"

typedef struct variant {
	int codec;
	hw_zopts o;
	const char *name;
} variant;

static const variant variants[] = {
	{ HW_CODEC_GZIP, { 0, 0 }, "gzip" },
	{ HW_CODEC_SNAPPY, { 0, 0 }, "snappy" },
	{ HW_CODEC_SNAPPY, { 0, 1 }, "snappy-xerial" },
	{ HW_CODEC_LZ4, { 0, 0 }, "lz4" },
	{ HW_CODEC_ZSTD, { 0, 0 }, "zstd" },
};
#define NV (sizeof variants / sizeof variants[0])

#define MAXR 600
static hw_record_in recs[MAXR];
static hw_record_header hdrs[MAXR][3];
static uint8_t pool[1 << 20];

/* n random records: keys, values (text-like, so they compress), headers. */
static size_t random_records(void)
{
	size_t n = 1 + hw_test_below(MAXR), at = 0;
	for (size_t i = 0; i < n; i++) {
		hw_record_in *r = &recs[i];
		r->timestamp = 1700000000000LL + (int64_t)hw_test_below(100000);
		int32_t kl = (int32_t)hw_test_below(24), vl = (int32_t)hw_test_below(1200);
		for (int32_t j = 0; j < kl + vl; j++)
			pool[at + (size_t)j] = (uint8_t)("abcdefgh 0123"[hw_test_below(13)]);
		r->key = hw_test_below(5) ? pool + at : NULL;
		r->key_len = kl;
		r->value = hw_test_below(9) ? pool + at + kl : NULL;
		r->value_len = vl;
		at += (size_t)(kl + vl);
		r->header_count = (int32_t)hw_test_below(4);
		for (int32_t h = 0; h < r->header_count; h++) {
			hdrs[i][h].key = (const uint8_t *)"trace";
			hdrs[i][h].key_len = 1 + h;
			hdrs[i][h].value = h == 1 ? NULL : (const uint8_t *)"xyz";
			hdrs[i][h].value_len = h == 1 ? -1 : 3;
		}
		r->headers = hdrs[i];
	}
	return n;
}

static uint8_t *build(const variant *v, const hw_batch_spec *s, size_t n, size_t *size)
{
	ssize_t plain = hw_batch_build_size(s, recs, n);
	assert_true(plain > 0);
	size_t cap = HW_BATCH_HEADER_SIZE +
		     hw_compress_bound(v ? v->codec : 0, v ? &v->o : NULL, (size_t)plain);
	uint8_t *b = malloc(cap);
	assert_non_null(b);
	ssize_t k = v ? hw_batch_build_compressed(b, cap, s, recs, n, v->codec, &v->o)
		      : hw_batch_build(b, cap, s, recs, n);
	assert_true(k >= HW_BATCH_HEADER_SIZE);
	*size = (size_t)k;
	return b;
}

/* The records of batch b equal recs[0..n). */
static void check_records(const uint8_t *b, size_t size, size_t n)
{
	hw_record_iter it;
	hw_record r;
	assert_int_equal(hw_record_iter_init(&it, b, size, HW_BATCH_V_CRC), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(hw_record_iter_next(&it, &r), 1);
		const hw_record_in *w = &recs[i];
		assert_int_equal(r.offset_delta, (int32_t)i);
		assert_true(r.timestamp == w->timestamp);
		assert_int_equal(r.key_len, w->key ? w->key_len : -1);
		assert_int_equal(r.value_len, w->value ? w->value_len : -1);
		if (w->key)
			assert_memory_equal(r.key, w->key, (size_t)w->key_len);
		if (w->value)
			assert_memory_equal(r.value, w->value, (size_t)w->value_len);
		assert_int_equal(r.header_count, w->header_count);
		const uint8_t *hp = r.headers, *he = r.headers + r.headers_len;
		hw_record_header hh;
		for (int32_t h = 0; h < w->header_count; h++) {
			assert_int_equal(hw_record_header_next(&hp, he, &hh), 1);
			assert_int_equal(hh.key_len, w->headers[h].key_len);
			assert_int_equal(hh.value_len, w->headers[h].value_len);
		}
	}
	assert_int_equal(hw_record_iter_next(&it, &r), 0);
}

static void test_valid_batches(void **state)
{
	(void)state;
	for (int round = 0; round < 40; round++) {
		size_t n = random_records();
		hw_batch_spec s;
		hw_batch_spec_init(&s);
		if (round % 2) {
			s.producer_id = 4000 + round;
			s.producer_epoch = 2;
			s.base_sequence = round * 10;
		}
		size_t psize;
		uint8_t *plain = build(NULL, &s, n, &psize);
		for (size_t vi = 0; vi < NV; vi++) {
			const variant *v = &variants[vi];
			size_t size;
			uint8_t *b = build(v, &s, n, &size);
			uint8_t *copy = malloc(size);
			memcpy(copy, b, size);
			hw_batch_hdr h, hp;
			assert_int_equal(hw_batch_validate(b, size, &h, HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT), 0);
			assert_int_equal(hw_batch_validate(plain, psize, &hp, HW_BATCH_V_FULL), 0);
			assert_int_equal(hw_batch_codec(&h), v->codec);
			assert_string_equal(hw_batch_codec_name(hw_batch_codec(&h)), hw_codec_name(v->codec));
			/* the header is the uncompressed batch's but for codec, length, CRC */
			assert_int_equal(h.record_count, (int32_t)n);
			assert_int_equal(h.last_offset_delta, hp.last_offset_delta);
			assert_true(h.max_timestamp == hp.max_timestamp && h.base_timestamp == hp.base_timestamp);
			assert_true(h.producer_id == hp.producer_id && h.base_sequence == hp.base_sequence);
			assert_int_equal(h.size, size);
			check_records(b, size, n);
			assert_memory_equal(b, copy, size); /* validated and read, never written */
			/* the leader's stamping: outside the CRC, and LogAppendTime */
			hw_batch_set_base_offset(b, 1000);
			hw_batch_set_leader_epoch(b, 3);
			assert_memory_equal(b + HW_BATCH_OFF_MAGIC, copy + HW_BATCH_OFF_MAGIC,
					    size - HW_BATCH_OFF_MAGIC);
			assert_int_equal(hw_batch_validate(b, size, &h, HW_BATCH_V_FULL), 0);
			assert_true(h.base_offset == 1000);
			assert_int_equal(hw_batch_set_log_append_time(b, size, 1800000000000LL), 0);
			assert_int_equal(hw_batch_validate(b, size, &h, HW_BATCH_V_FULL), 0);
			assert_int_equal(hw_batch_codec(&h), v->codec);
			assert_memory_equal(b + HW_BATCH_OFF_RECORDS, copy + HW_BATCH_OFF_RECORDS,
					    size - HW_BATCH_OFF_RECORDS);
			free(copy);
			free(b);
		}
		free(plain);
	}
}

/* A compressed batch wrapping the records section sec[0..n) (which may be
 * damaged) behind the header of the valid uncompressed batch plain. */
static size_t wrap(uint8_t *out, size_t cap, const uint8_t *plain, const uint8_t *sec, size_t n,
		   const variant *v)
{
	memcpy(out, plain, HW_BATCH_HEADER_SIZE);
	ssize_t k = hw_compress(v->codec, &v->o, sec, n, out + HW_BATCH_HEADER_SIZE,
				cap - HW_BATCH_HEADER_SIZE);
	assert_true(k > 0);
	size_t size = HW_BATCH_HEADER_SIZE + (size_t)k;
	uint16_t attr = (uint16_t)(hw_be16_get(plain + HW_BATCH_OFF_ATTRIBUTES) | v->codec);
	hw_be16_put(out + HW_BATCH_OFF_ATTRIBUTES, attr);
	hw_be32_put(out + HW_BATCH_OFF_LENGTH, (uint32_t)(size - HW_BATCH_LOG_OVERHEAD));
	assert_int_equal(hw_batch_update_crc(out, size), 0);
	return size;
}

/* Damage inside the records gives the same rc compressed as uncompressed:
 * the same checks run on the decompressed section. */
static void test_record_damage_same_rc(void **state)
{
	(void)state;
	int nonzero = 0;
	uint8_t *z = malloc(1 << 21);
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + hw_test_below(20);
		random_records();
		hw_batch_spec s;
		hw_batch_spec_init(&s);
		size_t psize;
		uint8_t *plain = build(NULL, &s, n, &psize);
		/* a few random byte changes in the records section, most of them
		 * in its first bytes (record framing, not the long values) */
		size_t sec = psize - HW_BATCH_HEADER_SIZE;
		for (int k = 1 + (int)hw_test_below(3); k > 0; k--)
			plain[HW_BATCH_HEADER_SIZE + hw_test_below(k == 1 && sec > 48 ? 48 : sec)] =
				(uint8_t)hw_test_rand();
		assert_int_equal(hw_batch_update_crc(plain, psize), 0);
		int want = hw_batch_validate(plain, psize, NULL, HW_BATCH_V_FULL);
		nonzero += want != 0;
		for (size_t vi = 0; vi < NV; vi++) {
			size_t size = wrap(z, 1 << 21, plain, plain + HW_BATCH_HEADER_SIZE,
					   psize - HW_BATCH_HEADER_SIZE, &variants[vi]);
			assert_int_equal(hw_batch_validate(z, size, NULL, HW_BATCH_V_FULL), want);
			hw_record_iter it;
			hw_record r;
			int rc = hw_record_iter_init(&it, z, size, HW_BATCH_V_CRC);
			if (rc == 0)
				while ((rc = hw_record_iter_next(&it, &r)) == 1)
					;
			assert_int_equal(rc, want); /* the iterator agrees */
		}
		free(plain);
	}
	print_message("# %d of 300 damaged batches invalid\n", nonzero);
	assert_true(nonzero > 15); /* the damage did reach the record checks (about 1 in 6) */
	free(z);
}

/* A damaged or cut compressed stream (CRC repaired, so the CRC check does
 * not catch it first) is CORRUPT_MESSAGE — or, for a bit flip that still
 * decodes, a record-level rc or (snappy has no checksum) a valid batch;
 * never a crash or a read outside the batch. */
static void test_corrupt_streams(void **state)
{
	(void)state;
	random_records();
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	for (size_t vi = 0; vi < NV; vi++) {
		const variant *v = &variants[vi];
		size_t size;
		uint8_t *b = build(v, &s, 30, &size);
		/* cut: every shorter stream */
		for (size_t cut = HW_BATCH_HEADER_SIZE; cut < size; cut++) {
			uint8_t *c = malloc(cut);
			memcpy(c, b, cut);
			hw_be32_put(c + HW_BATCH_OFF_LENGTH, (uint32_t)(cut - HW_BATCH_LOG_OVERHEAD));
			assert_int_equal(hw_batch_update_crc(c, cut), 0);
			int rc = hw_batch_validate(c, cut, NULL, HW_BATCH_V_FULL);
			if (v->o.snappy_xerial && rc != HW_BATCH_DECOMPRESS)
				/* a xerial cut at a block boundary decodes, short */
				assert_true(rc == HW_BATCH_BAD_RECORD_COUNT || rc == HW_BATCH_RECORD_COUNT ||
					    rc == HW_BATCH_RECORD_TRUNCATED);
			else
				assert_int_equal(rc, HW_BATCH_DECOMPRESS);
			assert_int_equal(hw_batch_rc_kafka(HW_BATCH_DECOMPRESS), HW_ERR_CORRUPT_MESSAGE);
			free(c);
		}
		/* bit flips in the compressed bytes: without the CRC repaired the
		 * CRC catches every one */
		for (int i = 0; i < 500; i++) {
			size_t at = HW_BATCH_HEADER_SIZE + hw_test_below(size - HW_BATCH_HEADER_SIZE);
			uint8_t bit = (uint8_t)(1u << hw_test_below(8));
			b[at] ^= bit;
			assert_int_equal(hw_batch_validate(b, size, NULL, HW_BATCH_V_FULL), HW_BATCH_BAD_CRC);
			assert_int_equal(hw_batch_update_crc(b, size), 0);
			int rc = hw_batch_validate(b, size, NULL, HW_BATCH_V_FULL);
			assert_true(rc <= 0);
			if (rc < 0)
				assert_true(hw_batch_rc_kafka(rc) == HW_ERR_CORRUPT_MESSAGE ||
					    hw_batch_rc_kafka(rc) == HW_ERR_INVALID_RECORD ||
					    hw_batch_rc_kafka(rc) == HW_ERR_MESSAGE_TOO_LARGE);
			b[at] ^= bit;
			assert_int_equal(hw_batch_update_crc(b, size), 0);
		}
		assert_int_equal(hw_batch_validate(b, size, NULL, HW_BATCH_V_FULL), 0);
		free(b);
	}
}

/* A record section inflating past HW_BATCH_MAX_DECOMPRESSED is refused
 * (MESSAGE_TOO_LARGE, so a Java producer splits the batch); one just under
 * it validates. */
static void test_bomb_and_limit(void **state)
{
	(void)state;
	size_t big = HW_BATCH_MAX_DECOMPRESSED - 64;
	uint8_t *zeros = calloc(1, big);
	hw_record_in r = { 1700000000000LL, NULL, 0, zeros, 0, NULL, 0 };
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	/* LZ4F wants room for its worst case, however well zeros compress */
	size_t cap = HW_BATCH_HEADER_SIZE +
		     hw_compress_bound(HW_CODEC_LZ4, NULL, HW_BATCH_MAX_DECOMPRESSED + 2048);
	uint8_t *b = malloc(cap);
	/* one record whose value fills the section to just under the bound */
	r.value_len = (int32_t)(big - 16);
	ssize_t size = hw_batch_build_compressed(b, cap, &s, &r, 1, HW_CODEC_ZSTD, NULL);
	assert_true(size > 0 && size < 1 << 20);
	assert_int_equal(hw_batch_validate(b, (size_t)size, NULL, HW_BATCH_V_FULL), 0);
	/* the same with a value 1 KiB longer than the bound allows */
	r.value_len = (int32_t)(HW_BATCH_MAX_DECOMPRESSED + 1024);
	zeros = realloc(zeros, (size_t)r.value_len);
	memset(zeros, 0, (size_t)r.value_len);
	r.value = zeros;
	for (int codec = HW_CODEC_GZIP; codec <= HW_CODEC_ZSTD; codec++) {
		if (codec == HW_CODEC_SNAPPY)
			continue; /* snappy's ratio is at most ~21: 64 MiB is no bomb for a 1 MiB batch */
		size = hw_batch_build_compressed(b, cap, &s, &r, 1, codec, NULL);
		assert_true(size > 0 && size < 1 << 20);
		int rc = hw_batch_validate(b, (size_t)size, NULL, HW_BATCH_V_FULL);
		assert_int_equal(rc, HW_BATCH_DECOMPRESSED_TOO_LARGE);
		assert_int_equal(hw_batch_rc_kafka(rc), HW_ERR_MESSAGE_TOO_LARGE);
		hw_record_iter it;
		assert_int_equal(hw_record_iter_init(&it, b, (size_t)size, 0), HW_BATCH_DECOMPRESSED_TOO_LARGE);
		assert_int_equal(hw_record_iter_next(&it, NULL), HW_BATCH_DECOMPRESSED_TOO_LARGE);
		/* the per-thread validation scratch did not keep the big buffer */
		assert_true(hw_zbuf_thread(HW_BATCH_ZSLOT_VALIDATE)->cap <= HW_BATCH_ZSCRATCH_KEEP);
	}
	free(zeros);
	free(b);
}

static void test_codec_ids_5_to_7(void **state)
{
	(void)state;
	random_records();
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	size_t size;
	uint8_t *b = build(&variants[0], &s, 3, &size);
	for (int c = 5; c <= 7; c++) {
		uint16_t attr = (uint16_t)((hw_be16_get(b + HW_BATCH_OFF_ATTRIBUTES) & ~7u) | (unsigned)c);
		hw_be16_put(b + HW_BATCH_OFF_ATTRIBUTES, attr);
		assert_int_equal(hw_batch_update_crc(b, size), 0);
		for (unsigned f = 0; f <= HW_BATCH_V_FULL; f++) {
			int rc = hw_batch_validate(b, size, NULL, f);
			assert_int_equal(rc, HW_BATCH_UNKNOWN_CODEC);
			assert_int_equal(hw_batch_rc_kafka(rc), HW_ERR_UNSUPPORTED_COMPRESSION_TYPE);
		}
	}
	free(b);
}

/* A record set mixing codecs walks with full checks; two compressed
 * batches read at once need their own scratch buffers. */
static void test_mixed_stream_and_scratch(void **state)
{
	(void)state;
	size_t n = random_records();
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	uint8_t *set = NULL;
	size_t set_len = 0, sizes[NV + 1];
	for (size_t vi = 0; vi <= NV; vi++) {
		size_t size;
		uint8_t *b = build(vi < NV ? &variants[vi] : NULL, &s, n, &size);
		hw_batch_set_base_offset(b, (int64_t)(vi * n));
		set = realloc(set, set_len + size);
		memcpy(set + set_len, b, size);
		set_len += size;
		sizes[vi] = size;
		free(b);
	}
	hw_batch_iter bi;
	hw_batch_hdr h;
	const uint8_t *bp;
	hw_batch_iter_init(&bi, set, set_len, HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT);
	size_t k = 0;
	while (hw_batch_iter_next(&bi, &h, &bp) == 1) {
		assert_int_equal(h.size, sizes[k]);
		assert_true(h.base_offset == (int64_t)(k * n));
		k++;
	}
	assert_int_equal(k, NV + 1);
	assert_int_equal(hw_batch_iter_whole_bytes(&bi), set_len);

	/* interleaved: gzip batch with its own scratch, zstd one with another */
	hw_zbuf za = { 0 }, zb = { 0 };
	hw_record_iter ia, ib;
	hw_record ra, rb;
	const uint8_t *ga = set, *gz = set + sizes[0] + sizes[1] + sizes[2] + sizes[3];
	assert_int_equal(hw_record_iter_init_buf(&ia, ga, sizes[0], HW_BATCH_V_CRC, &za), 0);
	assert_int_equal(hw_record_iter_init_buf(&ib, gz, sizes[4], HW_BATCH_V_CRC, &zb), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(hw_record_iter_next(&ia, &ra), 1);
		assert_int_equal(hw_record_iter_next(&ib, &rb), 1);
		assert_true(ra.offset == (int64_t)i && rb.offset == (int64_t)(4 * n + i));
		assert_int_equal(ra.value_len, rb.value_len);
		if (ra.value_len > 0)
			assert_memory_equal(ra.value, rb.value, (size_t)ra.value_len);
		assert_true(ra.raw >= za.p && ra.raw + ra.raw_len <= za.p + za.len);
	}
	assert_int_equal(hw_record_iter_next(&ia, &ra), 0);
	assert_int_equal(hw_record_iter_next(&ib, &rb), 0);
	/* NULL scratch for a compressed batch is an allocation failure */
	assert_int_equal(hw_record_iter_init_buf(&ia, ga, sizes[0], 0, NULL), HW_BATCH_DECOMPRESS_NOMEM);
	hw_zbuf_free(&za);
	hw_zbuf_free(&zb);
	free(set);
	/* builder argument checks */
	uint8_t tiny[64];
	assert_int_equal(hw_batch_build_compressed(tiny, sizeof tiny, &s, recs, n, 0, NULL), -EINVAL);
	assert_int_equal(hw_batch_build_compressed(tiny, sizeof tiny, &s, recs, n, 5, NULL), -EINVAL);
	assert_int_equal(hw_batch_build_compressed(tiny, 10, &s, recs, n, HW_CODEC_LZ4, NULL), -EMSGSIZE);
}

int main(void)
{
	hw_test_seed_init("batch_compressed");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_batches),
		cmocka_unit_test(test_record_damage_same_rc),
		cmocka_unit_test(test_corrupt_streams),
		cmocka_unit_test(test_bomb_and_limit),
		cmocka_unit_test(test_codec_ids_5_to_7),
		cmocka_unit_test(test_mixed_stream_and_scratch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
