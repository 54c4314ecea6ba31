/* test_bytes.c — lib/bytes/hw_bytes.h: byte order both ways, the reader
 * never reads past its end and latches the first short read, the fixed
 * writer refuses to overflow and latches, the growing writer grows. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "hw_bytes.h"

static void test_raw(void **st)
{
	(void)st;
	uint8_t b[8];
	hw_be32_put(b, 0x01020304u);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[3], 4);
	assert_int_equal(hw_be32_get(b), 0x01020304u);
	hw_be64_put(b, 0x0102030405060708ull);
	assert_int_equal(b[7], 8);
	assert_true(hw_be64_get(b) == 0x0102030405060708ull);
	hw_be16_put(b, 0xbeef);
	assert_int_equal(hw_be16_get(b), 0xbeef);
	hw_le32_put(b, 0x01020304u);
	assert_int_equal(b[0], 4);
	assert_int_equal(b[3], 1);
	assert_int_equal(hw_le32_get(b), 0x01020304u);
	hw_le_put(b, 0xa1b2c3u, 3);
	assert_int_equal(b[0], 0xc3);
	assert_int_equal(hw_le_get(b, 3), 0xa1b2c3u);
}

static void test_reader(void **st)
{
	(void)st;
	const uint8_t in[7] = { 0x12, 0x34, 0x00, 0x00, 0x00, 0x2a, 0x99 };
	hw_bytes_rd r = hw_bytes_rd_init(in, sizeof in);
	assert_int_equal(hw_bytes_u16(&r), 0x1234);
	assert_int_equal(hw_bytes_u32(&r), 42);
	assert_int_equal(hw_bytes_left(&r), 1);
	assert_int_equal(r.bad, 0);
	assert_true(hw_bytes_u64(&r) == 0);   /* 1 byte left: short */
	assert_int_equal(r.bad, 1);
	assert_int_equal(r.pos, 6);           /* nothing consumed by the short read */
	assert_int_equal(hw_bytes_u8(&r), 0); /* latched: even what is there reads 0 */
	assert_int_equal(hw_bytes_left(&r), 0);
	assert_null(hw_bytes_take(&r, 0));
	/* lengths past the end, including ones that overflow pos + n */
	size_t pos = 3;
	assert_null(hw_bytes_span(in, sizeof in, &pos, SIZE_MAX));
	assert_int_equal(pos, 3);
	assert_non_null(hw_bytes_span(in, sizeof in, &pos, 4));
	assert_int_equal(pos, 7);
	assert_non_null(hw_bytes_span(in, sizeof in, &pos, 0));
	pos = 8;                              /* a position past the end is never trusted */
	assert_null(hw_bytes_span(in, sizeof in, &pos, 0));
	hw_bytes_rd le = hw_bytes_rd_init(in, sizeof in);
	assert_int_equal(hw_bytes_le(&le, 2), 0x3412);
	hw_bytes_rd empty = hw_bytes_rd_init(NULL, 0);
	assert_int_equal(hw_bytes_u8(&empty), 0);
	assert_int_equal(empty.bad, 1);
}

static void test_writer_fixed(void **st)
{
	(void)st;
	uint8_t buf[6];
	hw_bytes_wr w = hw_bytes_wr_fixed(buf, sizeof buf);
	hw_bytes_put_u32(&w, 0xdeadbeefu);
	hw_bytes_put_u8(&w, 7);
	assert_int_equal(w.err, 0);
	hw_bytes_put_u16(&w, 0x0102);         /* 1 byte of room: refused whole */
	assert_int_equal(w.err, -EMSGSIZE);
	assert_int_equal(w.pos, 5);
	hw_bytes_put_u8(&w, 9);               /* latched: no more writes */
	assert_int_equal(w.pos, 5);
	assert_int_equal(hw_be32_get(buf), 0xdeadbeefu);
	assert_int_equal(buf[4], 7);
}

static void test_writer_grow(void **st)
{
	(void)st;
	hw_bytes_wr w = hw_bytes_wr_grow();
	for (uint32_t i = 0; i < 1000; i++) {
		hw_bytes_put_u64(&w, i);
		hw_bytes_put_le(&w, i, 4);
	}
	assert_int_equal(w.err, 0);
	assert_int_equal(w.pos, 12000);
	assert_true(w.cap >= w.pos);
	hw_bytes_rd r = hw_bytes_rd_init(w.buf, w.pos);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_true(hw_bytes_u64(&r) == i);
		assert_true(hw_bytes_le(&r, 4) == i);
	}
	assert_int_equal(r.bad, 0);
	assert_int_equal(hw_bytes_left(&r), 0);
	free(w.buf);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_writer_fixed),
		cmocka_unit_test(test_writer_grow),
	};
	return cmocka_run_group_tests_name("bytes", t, NULL, NULL);
}
