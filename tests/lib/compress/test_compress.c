/* test_compress.c — lib/compress: round trips of every codec (snappy raw and
 * xerial-framed) over random and repetitive inputs, the output bound
 * (exact fit, one byte short, a decompression bomb against a growable
 * buffer), every truncation, trailing garbage, concatenated members/frames
 * /streams, bit flips, names, and a xerial stream written by Java's
 * snappy-java (xerial_java.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_compress.h"
#include "../../support/hw_test.h"
#include "xerial_java.h"

/* A codec variant under test: snappy twice (raw and xerial). */
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
	{ HW_CODEC_GZIP, { 9, 0 }, "gzip-9" },
	{ HW_CODEC_LZ4, { 9, 0 }, "lz4-hc" },
	{ HW_CODEC_ZSTD, { 19, 0 }, "zstd-19" },
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

/* Fill with a mix of random bytes and repeated phrases (compressible). */
static void fill(uint8_t *p, size_t n, int mode)
{
	static const char phrase[] = "hiwater record value 0123456789 ";
	for (size_t i = 0; i < n; i++) {
		if (mode == 0)
			p[i] = (uint8_t)hw_test_rand();
		else if (mode == 1)
			p[i] = (uint8_t)phrase[i % (sizeof phrase - 1)];
		else
			p[i] = (i / 64) % 3 ? (uint8_t)phrase[i % 7] : (uint8_t)hw_test_rand();
	}
}

static uint8_t *compress_new(const variant *v, const uint8_t *src, size_t n, size_t *out)
{
	size_t bound = hw_compress_bound(v->codec, &v->o, n);
	assert_true(bound > 0);
	uint8_t *c = malloc(bound);
	assert_non_null(c);
	ssize_t k = hw_compress(v->codec, &v->o, src, n, c, bound);
	assert_true(k > 0);
	assert_true((size_t)k <= bound);
	*out = (size_t)k;
	return c;
}

static void test_round_trips(void **state)
{
	(void)state;
	static const size_t sizes[] = { 0, 1, 7, 100, 4096, 32767, 32768, 32769, 65536, 200000, 1 << 20 };
	hw_zbuf zb = { 0 };
	for (size_t vi = 0; vi < NVARIANTS; vi++) {
		const variant *v = &variants[vi];
		for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
			for (int mode = 0; mode < 3; mode++) {
				size_t n = sizes[si];
				uint8_t *src = malloc(n + 1);
				fill(src, n, mode);
				size_t clen;
				uint8_t *c = compress_new(v, src, n, &clen);
				/* fixed buffer, exact size: all of it, nothing past it */
				uint8_t *dst = malloc(n + 1);
				dst[n] = 0xA5;
				ssize_t d = hw_decompress(NULL, v->codec, c, clen, dst, n);
				if (d != (ssize_t)n)
					print_error("%s n=%zu mode=%d: %zd\n", v->name, n, mode, d);
				assert_int_equal(d, (ssize_t)n);
				assert_memory_equal(dst, src, n);
				assert_int_equal(dst[n], 0xA5);
				/* one byte short: refused, still nothing past the bound */
				if (n > 0) {
					dst[n - 1] = 0x5A;
					assert_int_equal(hw_decompress(NULL, v->codec, c, clen, dst, n - 1),
							 -EMSGSIZE);
					assert_int_equal(dst[n - 1], 0x5A);
				}
				/* growable buffer from whatever it holds */
				assert_int_equal(hw_decompress_buf(NULL, v->codec, c, clen, &zb, n), (ssize_t)n);
				assert_int_equal(zb.len, n);
				assert_true(n == 0 || memcmp(zb.p, src, n) == 0);
				if (n > 0)
					assert_int_equal(hw_decompress_buf(NULL, v->codec, c, clen, &zb, n - 1),
							 -EMSGSIZE);
				assert_int_equal(zb.len, 0);
				free(src);
				free(dst);
				free(c);
			}
		}
	}
	hw_zbuf_free(&zb);
}

/* 64 MiB of zeros compress to a few KiB; decompressing with a 1 MiB bound
 * stops at the bound without allocating more. */
static void test_bomb(void **state)
{
	(void)state;
	size_t n = 64u << 20;
	uint8_t *zeros = calloc(1, n);
	assert_non_null(zeros);
	for (size_t vi = 0; vi < 5; vi++) {
		const variant *v = &variants[vi];
		size_t clen;
		uint8_t *c = compress_new(v, zeros, n, &clen);
		assert_true(clen < n / 16);
		hw_zbuf zb = { 0 };
		assert_int_equal(hw_decompress_buf(NULL, v->codec, c, clen, &zb, 1u << 20), -EMSGSIZE);
		assert_true(zb.cap <= 1u << 20);
		assert_int_equal(zb.len, 0);
		/* and with a bound that fits, all of it */
		assert_int_equal(hw_decompress_buf(NULL, v->codec, c, clen, &zb, n), (ssize_t)n);
		assert_int_equal(zb.p[n - 1], 0);
		hw_zbuf_free(&zb);
		free(c);
	}
	free(zeros);
}

/* Every proper prefix fails — except, for xerial framing (no end marker),
 * a prefix ending on a block boundary, which is a shorter valid stream. */
static void test_truncations(void **state)
{
	(void)state;
	size_t n = 70000;
	uint8_t *src = malloc(n), *dst = malloc(n);
	fill(src, n, 2);
	for (size_t vi = 0; vi < 5; vi++) {
		const variant *v = &variants[vi];
		size_t clen;
		uint8_t *c = compress_new(v, src, n, &clen);
		for (size_t k = 0; k < clen; k++) {
			uint8_t *cut = malloc(k ? k : 1);
			memcpy(cut, c, k);
			ssize_t d = hw_decompress(NULL, v->codec, cut, k, dst, n);
			if (v->o.snappy_xerial && d >= 0) {
				assert_true((size_t)d < n && d % 32768 == 0);
				assert_memory_equal(dst, src, (size_t)d);
			} else {
				if (d != -EBADMSG)
					print_error("%s prefix %zu/%zu: %zd\n", v->name, k, clen, d);
				assert_int_equal(d, -EBADMSG);
			}
			free(cut);
		}
		free(c);
	}
	free(src);
	free(dst);
}

/* Streams back to back decode as one; garbage after a stream does not. */
static void test_concat_and_trailing(void **state)
{
	(void)state;
	uint8_t a[5000], b[3000], ab[8000], dst[9000];
	fill(a, sizeof a, 1);
	fill(b, sizeof b, 0);
	memcpy(ab, a, sizeof a);
	memcpy(ab + sizeof a, b, sizeof b);
	for (size_t vi = 0; vi < 5; vi++) {
		const variant *v = &variants[vi];
		size_t ca, cb;
		uint8_t *za = compress_new(v, a, sizeof a, &ca), *zb = compress_new(v, b, sizeof b, &cb);
		uint8_t *cat = malloc(ca + cb + 8);
		memcpy(cat, za, ca);
		memcpy(cat + ca, zb, cb);
		ssize_t d = hw_decompress(NULL, v->codec, cat, ca + cb, dst, sizeof dst);
		if (v->codec == HW_CODEC_SNAPPY && !v->o.snappy_xerial) {
			/* raw snappy is one block with its length up front: a second
			 * block after it is garbage */
			assert_int_equal(d, -EBADMSG);
		} else {
			assert_int_equal(d, (ssize_t)sizeof ab);
			assert_memory_equal(dst, ab, sizeof ab);
		}
		/* trailing bytes that start nothing */
		memcpy(cat, za, ca);
		memcpy(cat + ca, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
		for (size_t t = 1; t <= 8; t++) {
			d = hw_decompress(NULL, v->codec, cat, ca + t, dst, sizeof dst);
			if (d != -EBADMSG)
				print_error("%s trailing %zu: %zd\n", v->name, t, d);
			assert_int_equal(d, -EBADMSG);
		}
		free(cat);
		free(za);
		free(zb);
	}
}

/* Random bit flips never crash or write past the bound; where the format
 * carries a checksum over the data (gzip CRC-32, our lz4 frames' content
 * checksum), a flip is never silently accepted with different output. */
static void test_bit_flips(void **state)
{
	(void)state;
	uint8_t src[20000], dst[20001];
	fill(src, sizeof src, 2);
	for (size_t vi = 0; vi < 5; vi++) {
		const variant *v = &variants[vi];
		size_t clen;
		uint8_t *c = compress_new(v, src, sizeof src, &clen);
		for (int i = 0; i < 3000; i++) {
			size_t bit = hw_test_below(clen * 8);
			c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			dst[sizeof src] = 0xA5;
			ssize_t d = hw_decompress(NULL, v->codec, c, clen, dst, sizeof src);
			assert_true(d == -EBADMSG || d == -EMSGSIZE || d == -ENOTSUP ||
				    (d >= 0 && d <= (ssize_t)sizeof src));
			assert_int_equal(dst[sizeof src], 0xA5);
			if ((v->codec == HW_CODEC_GZIP || v->codec == HW_CODEC_LZ4) && d >= 0)
				assert_true(d == (ssize_t)sizeof src && memcmp(dst, src, sizeof src) == 0);
			c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		assert_int_equal(hw_decompress(NULL, v->codec, c, clen, dst, sizeof src), (ssize_t)sizeof src);
		free(c);
	}
}

/* zstd: a frame whose header declares a content size its blocks do not
 * produce is corrupt whatever room the output has (zstd's streaming path
 * alone would accept it with a small output; found by fuzz_batch_z); a
 * skippable frame before a real one is skipped. */
static void test_zstd_frame_sizes(void **state)
{
	(void)state;
	static const uint8_t lie[] = { 0x28, 0xb5, 0x2f, 0xfd, 0xa1, 0x00, 0x76, 0x50, 0x59, 0x00,
				       0x00, 0x00, 0x00, 0x01, 0x00, 0x00 }; /* says 5853302 B, holds 0 */
	static const size_t caps[] = { 0, 4096, 1 << 20, 8 << 20 };
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		hw_zbuf zb = { 0 };
		if (caps[i]) {
			zb.p = malloc(caps[i]);
			zb.cap = caps[i];
		}
		assert_int_equal(hw_decompress_buf(NULL, HW_CODEC_ZSTD, lie, sizeof lie, &zb, 64 << 20), -EBADMSG);
		hw_zbuf_free(&zb);
	}
	uint8_t plain[3000], z[4096], out[3000];
	fill(plain, sizeof plain, 1);
	/* skippable frame: magic 0x184D2A50, 4-byte length, payload */
	static const uint8_t skip[] = { 0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c' };
	memcpy(z, skip, sizeof skip);
	ssize_t k = hw_compress(HW_CODEC_ZSTD, NULL, plain, sizeof plain, z + sizeof skip, sizeof z - sizeof skip);
	assert_true(k > 0);
	assert_int_equal(hw_decompress(NULL, HW_CODEC_ZSTD, z, sizeof skip + (size_t)k, out, sizeof out),
			 (ssize_t)sizeof plain);
	assert_memory_equal(out, plain, sizeof plain);
}

/* A xerial stream written by Java's snappy-java (see xerial_java.h). */
static void test_xerial_from_java(void **state)
{
	(void)state;
	uint8_t dst[XERIAL_JAVA_PLAIN_LEN];
	ssize_t d = hw_decompress(NULL, HW_CODEC_SNAPPY, xerial_java, sizeof xerial_java, dst, sizeof dst);
	assert_int_equal(d, XERIAL_JAVA_PLAIN_LEN);
	for (size_t i = 0; i < sizeof dst; i++)
		assert_int_equal(dst[i], xerial_java_plain_byte(i));
}

static void test_names_and_args(void **state)
{
	(void)state;
	for (int c = 0; c < HW_CODEC_COUNT; c++)
		assert_int_equal(hw_codec_from_name(hw_codec_name(c)), c);
	assert_string_equal(hw_codec_name(7), "unknown");
	assert_int_equal(hw_codec_from_name("producer"), -EINVAL);
	assert_int_equal(hw_codec_from_name("GZIP"), -EINVAL);
	uint8_t b[32];
	assert_int_equal(hw_decompress(NULL, 5, "x", 1, b, sizeof b), -EINVAL);
	assert_int_equal(hw_decompress(NULL, -1, "x", 1, b, sizeof b), -EINVAL);
	assert_int_equal(hw_decompress(NULL, HW_CODEC_GZIP, NULL, 1, b, sizeof b), -EINVAL);
	assert_int_equal(hw_decompress(NULL, HW_CODEC_ZSTD, "", 0, b, sizeof b), -EBADMSG);
	assert_int_equal(hw_decompress(NULL, HW_CODEC_NONE, "abc", 3, b, 2), -EMSGSIZE);
	assert_int_equal(hw_decompress(NULL, HW_CODEC_NONE, "abc", 3, b, 3), 3);
	hw_zopts bad = { 23, 0 };
	assert_int_equal(hw_compress(HW_CODEC_ZSTD, &bad, "abc", 3, b, sizeof b), -EINVAL);
	assert_int_equal(hw_compress(HW_CODEC_GZIP, NULL, "abc", 3, b, 4), -EMSGSIZE);
	/* an explicit context behaves as the thread's */
	hw_zctx *ctx = hw_zctx_new();
	assert_non_null(ctx);
	for (size_t vi = 0; vi < 5; vi++) {
		size_t clen;
		uint8_t *c = compress_new(&variants[vi], (const uint8_t *)"hello hello hello", 17, &clen);
		assert_int_equal(hw_decompress(ctx, variants[vi].codec, c, clen, b, sizeof b), 17);
		assert_memory_equal(b, "hello hello hello", 17);
		free(c);
	}
	hw_zctx_free(ctx);
	hw_zctx_free(NULL);
}

int main(void)
{
	hw_test_seed_init("compress");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_bomb),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_concat_and_trailing),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_zstd_frame_sizes),
		cmocka_unit_test(test_xerial_from_java),
		cmocka_unit_test(test_names_and_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
