/* fuzz_batch_z.c — libFuzzer target for the compressed-batch validator
 * (engine/record hw_batch_z.c over lib/compress).
 *
 * Input: byte 0 picks the codec (bits 0-1: gzip, snappy, lz4, zstd), the
 * mode (bit 2) and, for snappy in mode 1, xerial framing (bit 3); bytes 1-2
 * a record count (big-endian, 1..1024); the rest is
 *   mode 0: a compressed records section, as hostile as it comes: wrapped
 *           in a batch header (codec bits, counts, CRC repaired) and run
 *           through hw_batch_validate(FULL) and the record iterator;
 *   mode 1: an UNcompressed records section: the batch made of it and the
 *           same section compressed by the real library must get the same
 *           verdict from hw_batch_validate, and, when valid, the iterator
 *           must return the same records from both.
 * Invariants asserted beyond "no crash, no sanitizer report":
 *   - validate and the iterator agree on the first error;
 *   - a valid batch's records lie inside the decompressed section, back to
 *     back, exactly filling it; the batch's bytes are never written;
 *   - the decoder bound: if a stream decompresses to n bytes with room to
 *     spare, it does so into exactly n bytes and fails with -EMSGSIZE in
 *     n - 1 (never writing past them);
 *   - every rc maps to a Kafka code: DECOMPRESS -> CORRUPT_MESSAGE, etc.
 * The input is copied to exact-size heap buffers so ASan sees any overread.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_batch.h"
#include "hw_compress.h"
#include "hw_err.h"

#define FZ_CHECK(c)                                                              \
	do {                                                                     \
		if (!(c)) {                                                      \
			fprintf(stderr, "fuzz_batch_z: invariant failed: %s (line %d)\n", #c, \
				__LINE__);                                       \
			abort();                                                 \
		}                                                                \
	} while (0)

#define FZ_MAX_OUT (1u << 20) /* the decoder-bound checks' output bound */

/* A batch: header for count records and codec, then sec[0..n). */
static uint8_t *fz_batch(const uint8_t *sec, size_t n, int32_t count, int codec, size_t *size)
{
	*size = HW_BATCH_HEADER_SIZE + n;
	uint8_t *b = malloc(*size);
	FZ_CHECK(b);
	memset(b, 0, HW_BATCH_HEADER_SIZE);
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, (uint32_t)(*size - HW_BATCH_LOG_OVERHEAD));
	hw_be32_put(b + HW_BATCH_OFF_LEADER_EPOCH, (uint32_t)-1);
	b[HW_BATCH_OFF_MAGIC] = HW_BATCH_MAGIC;
	hw_be16_put(b + HW_BATCH_OFF_ATTRIBUTES, (uint16_t)codec);
	hw_be32_put(b + HW_BATCH_OFF_LAST_DELTA, (uint32_t)(count - 1));
	hw_be64_put(b + HW_BATCH_OFF_PRODUCER_ID, (uint64_t)-1);
	hw_be16_put(b + HW_BATCH_OFF_PRODUCER_EPOCH, (uint16_t)-1);
	hw_be32_put(b + HW_BATCH_OFF_BASE_SEQ, (uint32_t)-1);
	hw_be32_put(b + HW_BATCH_OFF_COUNT, (uint32_t)count);
	if (n)
		memcpy(b + HW_BATCH_HEADER_SIZE, sec, n);
	FZ_CHECK(hw_batch_update_crc(b, *size) == 0);
	return b;
}

/* Walk the records with the iterator; returns its final rc (0 = all of
 * them, exactly filling the section) and checks the layout invariants. */
static int fz_walk(const uint8_t *b, size_t size, hw_zbuf *z, int32_t *nrec)
{
	hw_record_iter it;
	hw_record r;
	int rc = hw_record_iter_init_buf(&it, b, size, HW_BATCH_V_CRC, z);
	*nrec = 0;
	if (rc < 0)
		return rc;
	const uint8_t *expect = it.p, *end = it.end;
	while ((rc = hw_record_iter_next(&it, &r)) == 1) {
		FZ_CHECK(r.raw == expect && r.raw_len <= (size_t)(end - expect));
		FZ_CHECK(r.offset_delta == *nrec);
		expect = r.raw + r.raw_len;
		(*nrec)++;
	}
	if (rc == 0)
		FZ_CHECK(expect == end && *nrec == it.hdr.record_count);
	return rc;
}

static void fz_check_rc(int rc)
{
	FZ_CHECK(rc <= 0);
	if (rc == 0)
		return;
	int k = hw_batch_rc_kafka(rc);
	FZ_CHECK(k != HW_ERR_NONE);
	if (rc == HW_BATCH_DECOMPRESS)
		FZ_CHECK(k == HW_ERR_CORRUPT_MESSAGE);
	if (rc == HW_BATCH_DECOMPRESSED_TOO_LARGE)
		FZ_CHECK(k == HW_ERR_MESSAGE_TOO_LARGE);
	FZ_CHECK(rc != HW_BATCH_UNKNOWN_CODEC); /* codecs 1..4 only here */
}

/* The decoder bound on the raw stream. */
static void fz_bound(int codec, const uint8_t *sec, size_t n)
{
	static hw_zbuf zb;
	ssize_t got = hw_decompress_buf(NULL, codec, sec, n, &zb, FZ_MAX_OUT);
	FZ_CHECK(got == -EBADMSG || got == -EMSGSIZE || got == -ENOTSUP || got >= 0);
	FZ_CHECK(zb.cap <= FZ_MAX_OUT);
	if (got < 0 || (size_t)got > FZ_MAX_OUT - 1)
		return;
	uint8_t *exact = malloc((size_t)got + 1);
	FZ_CHECK(exact);
	exact[got] = 0xA5;
	FZ_CHECK(hw_decompress(NULL, codec, sec, n, exact, (size_t)got) == got);
	FZ_CHECK(got == 0 || memcmp(exact, zb.p, (size_t)got) == 0);
	FZ_CHECK(exact[got] == 0xA5);
	if (got > 0) {
		exact[got - 1] = 0x5A;
		FZ_CHECK(hw_decompress(NULL, codec, sec, n, exact, (size_t)got - 1) == -EMSGSIZE);
		FZ_CHECK(exact[got - 1] == 0x5A);
	}
	free(exact);
}

/* Mode 0: a hostile compressed section. */
static void fz_hostile(int codec, int32_t count, const uint8_t *sec, size_t n)
{
	static hw_zbuf z;
	size_t size;
	uint8_t *b = fz_batch(sec, n, count, codec, &size);
	uint8_t *copy = malloc(size);
	FZ_CHECK(copy);
	memcpy(copy, b, size);
	int v = hw_batch_validate(b, size, NULL, HW_BATCH_V_FULL);
	fz_check_rc(v);
	FZ_CHECK(hw_batch_validate(b, size, NULL, HW_BATCH_V_CRC) == 0); /* no decompression */
	int32_t nrec;
	int w = fz_walk(b, size, &z, &nrec);
	FZ_CHECK(w == v);
	FZ_CHECK(memcmp(b, copy, size) == 0);
	fz_bound(codec, sec, n);
	free(copy);
	free(b);
}

/* Mode 1: the same records section, uncompressed and compressed. */
static void fz_equivalent(int codec, int xerial, int32_t count, const uint8_t *sec, size_t n)
{
	static hw_zbuf za, zb;
	size_t psize, csize;
	uint8_t *plain = fz_batch(sec, n, count, 0, &psize);
	hw_zopts o = { 0, xerial };
	size_t bound = hw_compress_bound(codec, &o, n);
	FZ_CHECK(bound > 0);
	uint8_t *zsec = malloc(bound);
	FZ_CHECK(zsec);
	ssize_t k = hw_compress(codec, &o, sec, n, zsec, bound);
	FZ_CHECK(k > 0);
	uint8_t *comp = fz_batch(zsec, (size_t)k, count, codec, &csize);
	int vp = hw_batch_validate(plain, psize, NULL, HW_BATCH_V_FULL);
	int vc = hw_batch_validate(comp, csize, NULL, HW_BATCH_V_FULL);
	FZ_CHECK(vp == vc);
	fz_check_rc(vc);
	int32_t np, nc;
	FZ_CHECK(fz_walk(plain, psize, &za, &np) == vp);
	FZ_CHECK(fz_walk(comp, csize, &zb, &nc) == vc);
	FZ_CHECK(np == nc);
	if (vc == 0) {
		/* the decompressed section is the plain section, byte for byte */
		hw_record_iter it;
		FZ_CHECK(hw_record_iter_init_buf(&it, comp, csize, 0, &zb) == 0);
		FZ_CHECK((size_t)(it.end - it.p) == n && memcmp(it.p, sec, n) == 0);
	}
	free(zsec);
	free(plain);
	free(comp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	int codec = 1 + (data[0] & 3);
	int mode = (data[0] >> 2) & 1;
	int xerial = (data[0] >> 3) & 1;
	int32_t count = 1 + (int32_t)(((uint32_t)data[1] << 8 | data[2]) % 1024);
	size_t n = size - 3;
	uint8_t *sec = malloc(n ? n : 1);
	if (!sec)
		return 0;
	memcpy(sec, data + 3, n);
	if (mode == 0)
		fz_hostile(codec, count, sec, n);
	else
		fz_equivalent(codec, xerial, count, sec, n);
	free(sec);
	return 0;
}
