/* test_crc32c.c — CRC-32C against published vectors (RFC 3720 B.4 and the
 * standard check value) on the software, SSE4.2 and folding paths,
 * chaining, and every path against a bit-at-a-time reference on random
 * buffers of every alignment and length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <stdlib.h>
#include "hw_crc32c.h"
#include "../../support/hw_test.h"

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);
static const struct { const char *name; crc_fn fn; } impls[] = {
	{ "sw", hw_crc32c_sw }, { "hw", hw_crc32c_hw }, { "fold", hw_crc32c_fold }, { "auto", hw_crc32c },
};

static void check_vectors(crc_fn fn)
{
	uint8_t buf[48];
	memset(buf, 0, 32);
	assert_int_equal(fn(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xFF, 32);
	assert_int_equal(fn(0, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	assert_int_equal(fn(0, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	assert_int_equal(fn(0, buf, 32), 0x113FDB5Cu); /* RFC 3720 B.4 descending */
	assert_int_equal(fn(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(fn(0, NULL, 0), 0u);
	assert_int_equal(fn(0x12345678u, buf, 0), 0x12345678u);
	/* RFC 3720 B.4: iSCSI read command PDU (48 bytes) -> 0xD9963A56 */
	static const uint8_t pdu[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	assert_int_equal(fn(0, pdu, sizeof pdu), 0xD9963A56u);
}

static void test_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++) {
		printf("# vectors on %s path\n", impls[i].name);
		check_vectors(impls[i].fn);
	}
	printf("# SSE4.2 CRC32 instruction available: %d\n", hw_crc32c_hw_available());
	printf("# VPCLMULQDQ folding available: %d\n", hw_crc32c_fold_available());
}

/* Bit-at-a-time reference, independent of both implementations. */
static uint32_t crc_ref(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
	}
	return ~c;
}

static void test_random_agree(void **state)
{
	(void)state;
	static uint8_t buf[4096 + 16];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)hw_test_rand();
	for (int iter = 0; iter < 2000; iter++) {
		size_t off = hw_test_below(16);
		size_t len = iter < 300 ? (size_t)iter : hw_test_below(4096);
		uint32_t ref = crc_ref(buf + off, len);
		for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
			assert_int_equal(impls[i].fn(0, buf + off, len), ref);
		/* chaining at a random split equals the whole */
		size_t cut = len ? hw_test_below(len + 1) : 0;
		for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++) {
			uint32_t a = impls[i].fn(0, buf + off, cut);
			assert_int_equal(impls[i].fn(a, buf + off + cut, len - cut), ref);
		}
	}
}

/* The SSE4.2 path switches between a 3-stream long-block loop (3 * 2 KiB),
 * a 3-stream short-block loop (3 * 256 B) and a single stream: every length
 * 0..4096 at a random alignment, then random larger lengths, hit every
 * boundary between them, each against the bit-by-bit reference. */
static void test_every_length_and_large(void **state)
{
	(void)state;
	enum { BIG = 64 * 1024 };
	uint8_t *buf = malloc(BIG + 16);
	assert_non_null(buf);
	for (size_t i = 0; i < BIG + 16; i++)
		buf[i] = (uint8_t)hw_test_rand();
	for (size_t len = 0; len <= 4096; len++) {
		size_t off = hw_test_below(16);
		uint32_t ref = crc_ref(buf + off, len);
		for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
			assert_int_equal(impls[i].fn(0, buf + off, len), ref);
	}
	for (int iter = 0; iter < 200; iter++) {
		size_t off = hw_test_below(16);
		size_t len = 4097 + hw_test_below(BIG - 4097);
		uint32_t ref = crc_ref(buf + off, len);
		for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
			assert_int_equal(impls[i].fn(0, buf + off, len), ref);
		size_t cut = hw_test_below(len + 1);
		assert_int_equal(hw_crc32c_hw(hw_crc32c_hw(0, buf + off, cut), buf + off + cut, len - cut),
				 ref);
		assert_int_equal(hw_crc32c_fold(hw_crc32c_fold(0, buf + off, cut), buf + off + cut, len - cut),
				 ref);
	}
	free(buf);
}

static void test_single_bit_flips_detected(void **state)
{
	(void)state;
	uint8_t buf[256];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)hw_test_rand();
	uint32_t good = hw_crc32c(0, buf, sizeof buf);
	for (size_t bit = 0; bit < sizeof buf * 8; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(hw_crc32c_sw(0, buf, sizeof buf), good);
		assert_int_not_equal(hw_crc32c_hw(0, buf, sizeof buf), good);
		assert_int_not_equal(hw_crc32c_fold(0, buf, sizeof buf), good);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	assert_int_equal(hw_crc32c(0, buf, sizeof buf), good);
}

int main(void)
{
	hw_test_seed_init("crc32c");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_random_agree),
		cmocka_unit_test(test_every_length_and_large),
		cmocka_unit_test(test_single_bit_flips_detected),
	};
	return cmocka_run_group_tests_name("crc32c", tests, NULL, NULL);
}
