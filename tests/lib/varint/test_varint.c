/* test_varint.c — Kafka varint/varlong codecs: Kafka's own byte examples,
 * boundaries, random round trips, size == bytes written, truncation at every
 * length, too-long and overflowing encodings, capacity checks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../support/hw_test.h"
#include "hw_varint.h"

/* Expected bytes computed independently of the codec under test. */
static size_t ref_encode(uint64_t u, uint8_t *out)
{
	size_t n = 0;
	do {
		uint8_t b = u & 0x7F;
		u >>= 7;
		out[n++] = b | (u ? 0x80 : 0);
	} while (u);
	return n;
}

static void test_known_bytes(void **state)
{
	(void)state;
	uint8_t b[16];
	/* zigzag as Kafka's ByteUtilsTest: 0->00, -1->01, 1->02, -2->03, 63->7e, -64->7f, 64->80 01 */
	static const struct { int32_t v; uint8_t bytes[5]; int n; } z[] = {
		{ 0, { 0x00 }, 1 }, { -1, { 0x01 }, 1 }, { 1, { 0x02 }, 1 }, { -2, { 0x03 }, 1 },
		{ 63, { 0x7e }, 1 }, { -64, { 0x7f }, 1 }, { 64, { 0x80, 0x01 }, 2 },
		{ INT32_MAX, { 0xfe, 0xff, 0xff, 0xff, 0x0f }, 5 },
		{ INT32_MIN, { 0xff, 0xff, 0xff, 0xff, 0x0f }, 5 },
	};
	for (size_t i = 0; i < sizeof z / sizeof z[0]; i++) {
		assert_int_equal(hw_varint_put_i32(b, sizeof b, z[i].v), z[i].n);
		assert_memory_equal(b, z[i].bytes, (size_t)z[i].n);
		assert_int_equal(hw_varint_size_i32(z[i].v), z[i].n);
		int32_t out = 12345;
		assert_int_equal(hw_varint_get_i32(z[i].bytes, (size_t)z[i].n, &out), z[i].n);
		assert_int_equal(out, z[i].v);
	}
	/* unsigned: 300 -> ac 02 (protobuf's example) */
	assert_int_equal(hw_varint_put_u32(b, sizeof b, 300), 2);
	assert_int_equal(b[0], 0xac);
	assert_int_equal(b[1], 0x02);
	/* varlong extremes take 10 bytes, last byte 0x01 */
	assert_int_equal(hw_varlong_put_i64(b, sizeof b, INT64_MIN), 10);
	assert_int_equal(b[9], 0x01);
	int64_t l;
	assert_int_equal(hw_varlong_get_i64(b, 10, &l), 10);
	assert_true(l == INT64_MIN);
	assert_int_equal(hw_varlong_put_i64(b, sizeof b, INT64_MAX), 10);
	assert_int_equal(hw_varlong_get_i64(b, 10, &l), 10);
	assert_true(l == INT64_MAX);
	/* non-minimal but in-range encodings are accepted, as in Kafka */
	static const uint8_t zero2[] = { 0x80, 0x00 };
	uint32_t u = 99;
	assert_int_equal(hw_varint_get_u32(zero2, 2, &u), 2);
	assert_int_equal(u, 0);
}

static uint64_t rand_wide(void)
{
	/* spread over all sizes: random value masked to a random bit width */
	int bits = (int)hw_test_below(65);
	uint64_t v = hw_test_rand();
	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

static void test_round_trip_random(void **state)
{
	(void)state;
	uint8_t b[16], ref[16];
	for (int i = 0; i < 200000; i++) {
		uint64_t w = rand_wide();
		int64_t v64 = (int64_t)w;
		int32_t v32 = (int32_t)(uint32_t)w;
		int n = hw_varlong_put_i64(b, sizeof b, v64);
		assert_int_equal(n, hw_varlong_size_i64(v64));
		size_t rn = ref_encode(hw_zigzag64(v64), ref);
		assert_int_equal((size_t)n, rn);
		assert_memory_equal(b, ref, rn);
		int64_t o64;
		assert_int_equal(hw_varlong_get_i64(b, (size_t)n, &o64), n);
		assert_true(o64 == v64);

		n = hw_varint_put_i32(b, sizeof b, v32);
		assert_int_equal(n, hw_varint_size_i32(v32));
		assert_true(n >= 1 && n <= HW_VARINT_MAX_BYTES);
		int32_t o32;
		assert_int_equal(hw_varint_get_i32(b, (size_t)n + 3, &o32), n); /* extra bytes ignored */
		assert_int_equal(o32, v32);

		uint32_t u32 = (uint32_t)w, ou;
		n = hw_varint_put_u32(b, sizeof b, u32);
		assert_int_equal(n, hw_varint_size_u32(u32));
		assert_int_equal(hw_varint_get_u32(b, (size_t)n, &ou), n);
		assert_int_equal(ou, u32);

		uint64_t o;
		n = hw_varint_put_u64(b, sizeof b, w);
		assert_int_equal(hw_varint_get_u64(b, (size_t)n, &o), n);
		assert_true(o == w);
	}
}

static void test_truncation_every_length(void **state)
{
	(void)state;
	uint8_t b[16];
	for (int i = 0; i < 2000; i++) {
		int64_t v = (int64_t)rand_wide();
		int n = hw_varlong_put_i64(b, sizeof b, v);
		for (int cut = 0; cut < n; cut++) {
			int64_t o = 777;
			assert_int_equal(hw_varlong_get_i64(b, (size_t)cut, &o), -EMSGSIZE);
			assert_true(o == 777); /* untouched on error */
		}
		int32_t v32 = (int32_t)v;
		n = hw_varint_put_i32(b, sizeof b, v32);
		for (int cut = 0; cut < n; cut++) {
			int32_t o;
			assert_int_equal(hw_varint_get_i32(b, (size_t)cut, &o), -EMSGSIZE);
		}
	}
	assert_int_equal(hw_varint_get_u32(NULL, 0, NULL), -EMSGSIZE);
}

static void test_too_long_and_overflow(void **state)
{
	(void)state;
	uint8_t b[16];
	uint32_t u;
	uint64_t u64;
	int32_t i32;
	int64_t i64;
	memset(b, 0x80, sizeof b); /* continuation forever */
	assert_int_equal(hw_varint_get_u32(b, sizeof b, &u), -EOVERFLOW);
	assert_int_equal(hw_varint_get_i32(b, sizeof b, &i32), -EOVERFLOW);
	assert_int_equal(hw_varint_get_u64(b, sizeof b, &u64), -EOVERFLOW);
	assert_int_equal(hw_varlong_get_i64(b, sizeof b, &i64), -EOVERFLOW);
	/* exactly 5 continuation bytes then stop: 6 bytes, too long for 32 bits */
	b[5] = 0x00;
	assert_int_equal(hw_varint_get_u32(b, 6, &u), -EOVERFLOW);
	assert_int_equal(hw_varint_get_u64(b, 6, &u64), 6); /* fine as a varlong */
	/* 5th byte carrying bits 32..34 */
	uint8_t o5[] = { 0xff, 0xff, 0xff, 0xff, 0x1f };
	assert_int_equal(hw_varint_get_u32(o5, 5, &u), -EOVERFLOW);
	o5[4] = 0x0f;
	assert_int_equal(hw_varint_get_u32(o5, 5, &u), 5);
	assert_int_equal(u, UINT32_MAX);
	/* 10th byte carrying bit 64 */
	uint8_t o10[10];
	memset(o10, 0xff, 9);
	o10[9] = 0x02;
	assert_int_equal(hw_varint_get_u64(o10, 10, &u64), -EOVERFLOW);
	o10[9] = 0x01;
	assert_int_equal(hw_varint_get_u64(o10, 10, &u64), 10);
	assert_true(u64 == UINT64_MAX);
	/* truncated beats too-long when the input ends first */
	assert_int_equal(hw_varint_get_u32(b, 3, &u), -EMSGSIZE);
}

static void test_capacity(void **state)
{
	(void)state;
	uint8_t b[16];
	for (int i = 0; i < 5000; i++) {
		int64_t v = (int64_t)rand_wide();
		int need = hw_varlong_size_i64(v);
		memset(b, 0xAA, sizeof b);
		assert_int_equal(hw_varlong_put_i64(b, (size_t)need - 1, v), -EMSGSIZE);
		for (size_t k = 0; k < sizeof b; k++)
			assert_int_equal(b[k], 0xAA); /* nothing written */
		assert_int_equal(hw_varlong_put_i64(b, (size_t)need, v), need);
		int32_t v32 = (int32_t)v;
		need = hw_varint_size_i32(v32);
		assert_int_equal(hw_varint_put_i32(b, (size_t)need - 1, v32), -EMSGSIZE);
		assert_int_equal(hw_varint_put_i32(b, (size_t)need, v32), need);
	}
	assert_int_equal(hw_varint_put_u32(NULL, 0, 0), -EMSGSIZE);
}

int main(void)
{
	hw_test_seed_init("varint");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_bytes),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_truncation_every_length),
		cmocka_unit_test(test_too_long_and_overflow),
		cmocka_unit_test(test_capacity),
	};
	return cmocka_run_group_tests_name("varint", tests, NULL, NULL);
}
