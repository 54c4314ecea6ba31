/* fuzz_batch.c — libFuzzer target for the RecordBatch v2 decoder, validator
 * and record iterator (hw_batch.h).
 *
 * The input is treated as a buffer of concatenated batches (a produce record
 * set / a segment read). Beyond "no crash, no sanitizer report", it asserts
 * the decoder's contract:
 *  - hw_batch_iter only returns batches that lie inside the buffer, back to
 *    back, and whole_bytes + rest_bytes == input length;
 *  - hw_batch_validate(FULL) == 0 implies the record iterator walks exactly
 *    recordsCount records, each inside the batch, contiguous, offsets
 *    base + i, ending exactly at the batch end; headers walk header_count
 *    times inside headers_len; and weaker flag sets also accept the batch;
 *  - validate and the iterator agree on the first error;
 *  - a valid batch re-encoded with hw_batch_build from the decoded records
 *    is valid and decodes to the same keys, values and headers;
 *  - stamping (offset, epoch, LogAppendTime) keeps a valid batch valid.
 * Compressed batches go through the same checks (their records decompressed
 * into scratch); tests/engine/record/fuzz_batch_z.c aims at them directly.
 * Each input is also checked with its CRC repaired (hw_batch_update_crc), so
 * the fuzzer explores record-level structure rather than CRC mismatches.
 * The input is copied to an exact-size heap buffer so ASan catches any read
 * one byte past the end.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_batch.h"
#include "hw_varint.h"

#define FZ_CHECK(c)                                                              \
	do {                                                                     \
		if (!(c)) {                                                      \
			fprintf(stderr, "fuzz_batch: invariant failed: %s (line %d)\n", #c, \
				__LINE__);                                       \
			abort();                                                 \
		}                                                                \
	} while (0)

#define FZ_MAX_RECS 4096

static hw_record_in fz_recs[FZ_MAX_RECS];
static hw_record_header fz_hdrs[FZ_MAX_RECS * 4];

static int fz_in(const uint8_t *p, const uint8_t *lo, const uint8_t *hi, size_t n)
{
	return p >= lo && p <= hi && (size_t)(hi - p) >= n;
}

/* Walk a batch's records and check them; returns the record count walked
 * (or a negative rc), and fills fz_recs when it fits. */
static int fz_walk(const uint8_t *b, const hw_batch_hdr *h, size_t *nhdr_out)
{
	hw_record_iter it;
	hw_record r;
	int rc = hw_record_iter_init(&it, b, h->size, 0);
	if (rc < 0)
		return rc;
	/* the records section: in the batch, or decompressed into the
	 * iterator's scratch buffer */
	const uint8_t *lo = it.p, *hi = it.end, *expect = lo;
	if (hw_batch_codec(h) == HW_BATCH_CODEC_NONE)
		FZ_CHECK(lo == b + HW_BATCH_HEADER_SIZE && hi == b + h->size);
	int n = 0;
	size_t nh = 0;
	while ((rc = hw_record_iter_next(&it, &r)) == 1) {
		FZ_CHECK(r.raw == expect);
		FZ_CHECK(fz_in(r.raw, lo, hi, r.raw_len));
		FZ_CHECK(r.offset_delta == n);
		FZ_CHECK(r.offset == (int64_t)((uint64_t)h->base_offset + (uint64_t)n));
		FZ_CHECK(r.key_len >= -1 && r.value_len >= -1);
		FZ_CHECK((r.key == NULL) == (r.key_len == -1));
		FZ_CHECK((r.value == NULL) == (r.value_len == -1));
		if (r.key)
			FZ_CHECK(fz_in(r.key, r.raw, r.raw + r.raw_len, (size_t)r.key_len));
		if (r.value)
			FZ_CHECK(fz_in(r.value, r.raw, r.raw + r.raw_len, (size_t)r.value_len));
		FZ_CHECK(fz_in(r.headers, r.raw, r.raw + r.raw_len, r.headers_len));
		if (n < FZ_MAX_RECS) {
			hw_record_in *in = &fz_recs[n];
			in->timestamp = r.timestamp;
			in->key = r.key;
			in->key_len = r.key_len;
			in->value = r.value;
			in->value_len = r.value_len;
			in->headers = &fz_hdrs[nh];
			in->header_count = 0;
		}
		const uint8_t *hp = r.headers, *he = r.headers + r.headers_len;
		hw_record_header hh;
		int32_t k = 0;
		while ((rc = hw_record_header_next(&hp, he, &hh)) == 1) {
			FZ_CHECK(hh.key_len >= 0 && hh.value_len >= -1);
			FZ_CHECK(fz_in(hh.key, r.headers, he, (size_t)hh.key_len));
			if (hh.value)
				FZ_CHECK(fz_in(hh.value, r.headers, he, (size_t)hh.value_len));
			if (n < FZ_MAX_RECS && nh < FZ_MAX_RECS * 4) {
				fz_hdrs[nh++] = hh;
				fz_recs[n].header_count++;
			}
			k++;
		}
		FZ_CHECK(rc == 0);
		FZ_CHECK(k == r.header_count);
		expect = r.raw + r.raw_len;
		n++;
	}
	if (rc < 0)
		return rc;
	FZ_CHECK(n == h->record_count);
	FZ_CHECK(expect == hi);
	FZ_CHECK(hw_record_iter_next(&it, &r) == 0); /* stays at end */
	*nhdr_out = nh;
	return n;
}

/* Re-encode a valid batch from its decoded records and compare. */
static void fz_reencode(const hw_batch_hdr *h, int n)
{
	if (n > FZ_MAX_RECS)
		return;
	int64_t total_hdrs = 0;
	for (int i = 0; i < n; i++)
		total_hdrs += fz_recs[i].header_count;
	if (total_hdrs >= FZ_MAX_RECS * 4)
		return; /* some headers were not captured */
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	s.base_offset = h->base_offset;
	s.partition_leader_epoch = h->partition_leader_epoch;
	s.attributes = h->attributes & ~HW_BATCH_ATTR_CODEC_MASK;
	s.producer_id = h->producer_id;
	s.producer_epoch = h->producer_epoch;
	s.base_sequence = h->base_sequence;
	s.log_append_time = h->max_timestamp;
	ssize_t need = hw_batch_build_size(&s, fz_recs, (size_t)n);
	FZ_CHECK(need >= HW_BATCH_HEADER_SIZE);
	int codec = hw_batch_codec(h);
	if (codec != HW_BATCH_CODEC_NONE) /* re-encode with the same codec */
		need = HW_BATCH_HEADER_SIZE + (ssize_t)hw_compress_bound(codec, NULL, (size_t)need);
	uint8_t *out = malloc((size_t)need);
	FZ_CHECK(out);
	if (codec == HW_BATCH_CODEC_NONE) {
		FZ_CHECK(hw_batch_build(out, (size_t)need, &s, fz_recs, (size_t)n) == need);
	} else {
		need = hw_batch_build_compressed(out, (size_t)need, &s, fz_recs, (size_t)n, codec, NULL);
		FZ_CHECK(need > HW_BATCH_HEADER_SIZE);
	}
	hw_batch_hdr h2;
	FZ_CHECK(hw_batch_validate(out, (size_t)need, &h2, HW_BATCH_V_FULL) == 0);
	FZ_CHECK(h2.record_count == h->record_count && h2.attributes == h->attributes);
	hw_record_iter it;
	hw_record r;
	/* own scratch: fz_recs point into the thread's iterator scratch */
	static hw_zbuf z2;
	FZ_CHECK(hw_record_iter_init_buf(&it, out, (size_t)need, HW_BATCH_V_CRC, &z2) == 0);
	for (int i = 0; i < n; i++) {
		FZ_CHECK(hw_record_iter_next(&it, &r) == 1);
		const hw_record_in *w = &fz_recs[i];
		FZ_CHECK(r.timestamp == w->timestamp);
		FZ_CHECK(r.key_len == w->key_len && r.value_len == w->value_len);
		FZ_CHECK(r.key_len <= 0 || memcmp(r.key, w->key, (size_t)r.key_len) == 0);
		FZ_CHECK(r.value_len <= 0 || memcmp(r.value, w->value, (size_t)r.value_len) == 0);
		FZ_CHECK(r.header_count == w->header_count);
	}
	FZ_CHECK(hw_record_iter_next(&it, &r) == 0);
	free(out);
}

static void fz_one_batch(const uint8_t *b, size_t len)
{
	hw_batch_hdr h;
	int full = hw_batch_validate(b, len, &h, HW_BATCH_V_FULL);
	int hdr_only = hw_batch_validate(b, len, NULL, HW_BATCH_V_CRC);
	int recs_only = hw_batch_validate(b, len, NULL, HW_BATCH_V_RECORDS);
	(void)hw_batch_validate(b, len, NULL, HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT);
	FZ_CHECK(full <= 0 && hdr_only <= 0 && recs_only <= 0);
	FZ_CHECK(hw_batch_rc_kafka(full) != 0 || full == 0);
	if (hdr_only < 0)
		FZ_CHECK(full == hdr_only); /* header checks come first */
	if (full < 0)
		return;
	FZ_CHECK(hdr_only == 0 && recs_only == 0);
	FZ_CHECK(h.size <= len && h.size >= HW_BATCH_HEADER_SIZE);
	size_t nh = 0;
	int n = fz_walk(b, &h, &nh);
	FZ_CHECK(n == h.record_count);
	fz_reencode(&h, n);

	/* stamping keeps it valid */
	uint8_t *c = malloc(h.size);
	FZ_CHECK(c);
	memcpy(c, b, h.size);
	hw_batch_set_base_offset(c, 42);
	hw_batch_set_leader_epoch(c, 7);
	FZ_CHECK(hw_batch_validate(c, h.size, NULL, HW_BATCH_V_FULL) == 0);
	FZ_CHECK(hw_batch_set_log_append_time(c, h.size, 1700000000000LL) == 0);
	hw_batch_hdr h3;
	FZ_CHECK(hw_batch_validate(c, h.size, &h3, HW_BATCH_V_FULL) == 0);
	FZ_CHECK(h3.base_offset == 42 && h3.partition_leader_epoch == 7 &&
		 h3.max_timestamp == 1700000000000LL);
	free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	/* 1: the first batch on its own, all checks; then the same bytes with
	 * the CRC repaired, so mutations inside records reach the record-level
	 * checks and the invariants on valid batches instead of dying at BAD_CRC */
	fz_one_batch(buf, size);
	if (hw_batch_update_crc(buf, size) == 0)
		fz_one_batch(buf, size);

	/* 2: the buffer as a stream of batches */
	hw_batch_iter bi;
	hw_batch_iter_init(&bi, buf, size, HW_BATCH_V_FULL);
	hw_batch_hdr h;
	const uint8_t *bp;
	size_t at = 0;
	int rc;
	while ((rc = hw_batch_iter_next(&bi, &h, &bp)) == 1) {
		FZ_CHECK(bp == buf + at);
		FZ_CHECK(h.size <= size - at);
		if (at > 0)
			fz_one_batch(bp, h.size);
		at += h.size;
		FZ_CHECK(hw_batch_iter_whole_bytes(&bi) == at);
		if (at > HW_BATCH_HEADER_SIZE * 64)
			break; /* long streams: enough */
	}
	FZ_CHECK(rc <= 1);
	FZ_CHECK(hw_batch_iter_whole_bytes(&bi) + hw_batch_iter_rest_bytes(&bi) == size);
	if (rc == 0 && !bi.partial)
		FZ_CHECK(at == size);
	if (bi.partial)
		FZ_CHECK(at < size);

	/* 3: the varint decoders on the raw bytes never read past the end */
	int32_t v32;
	int64_t v64;
	int n32 = hw_varint_get_i32(buf, size, &v32);
	int n64 = hw_varlong_get_i64(buf, size, &v64);
	FZ_CHECK(n32 <= (int)size && n64 <= (int)size);
	if (n32 > 0)
		FZ_CHECK(n32 <= HW_VARINT_MAX_BYTES && hw_varint_size_i32(v32) <= n32);
	if (n64 > 0)
		FZ_CHECK(n64 <= HW_VARLONG_MAX_BYTES && hw_varlong_size_i64(v64) <= n64);
	free(buf);
	return 0;
}
