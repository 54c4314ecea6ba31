/* test_kafka_io.c — lib/kafka primitives and request header (hw_kafka_io.h,
 * hw_kafka_api.h): round trips of every type in classic and compact forms,
 * truncation at every byte, hostile lengths and counts, tagged fields. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hw_kafka_api.h"
#include "hw_kafka_io.h"

static size_t encode_all(hw_kw *w, bool flex)
{
	hw_kw_i8(w, -5);
	hw_kw_i16(w, -300);
	hw_kw_i32(w, -70000);
	hw_kw_i64(w, -5000000000LL);
	hw_kw_uvarint(w, 300);
	hw_kw_varint(w, -129);
	hw_kw_varlong(w, -(1LL << 40));
	hw_kw_str_v(w, flex, "topic", 5);
	hw_kw_nstr_v(w, flex, NULL, 0);
	hw_kw_nbytes_v(w, flex, "\x01\x02\x03", 3);
	hw_kw_array_v(w, flex, 2);
	hw_kw_array_v(w, flex, -1);
	if (flex)
		hw_kw_tags_none(w);
	return w->len;
}

static int decode_all(const uint8_t *b, size_t n, bool flex)
{
	hw_kr r;
	hw_kr_init(&r, b, n);
	int ok = 1;
	ok &= hw_kr_i8(&r) == -5;
	ok &= hw_kr_i16(&r) == -300;
	ok &= hw_kr_i32(&r) == -70000;
	ok &= hw_kr_i64(&r) == -5000000000LL;
	ok &= hw_kr_uvarint(&r) == 300;
	ok &= hw_kr_varint(&r) == -129;
	ok &= hw_kr_varlong(&r) == -(1LL << 40);
	hw_kstr s = hw_kr_str_v(&r, flex);
	ok &= hw_kstr_eq(s, "topic");
	ok &= hw_kr_nstr_v(&r, flex).len == -1;
	hw_kbytes by = hw_kr_nbytes_v(&r, flex);
	ok &= by.len == 3 && memcmp(by.p, "\x01\x02\x03", 3) == 0;
	/* the array of 2 has no elements following in this buffer, so a count
	 * check against the bytes left is what keeps hostile counts bounded */
	int32_t c = hw_kr_array_v(&r, flex);
	ok &= c == 2;
	ok &= hw_kr_array_v(&r, flex) == -1;
	if (flex)
		hw_kr_tags(&r, NULL, NULL);
	if (r.err)
		return r.err;
	return ok && r.off == n ? 0 : -EBADMSG;
}

static void test_roundtrip_truncation(void **state)
{
	(void)state;
	for (int flex = 0; flex < 2; flex++) {
		hw_kw w;
		hw_kw_init(&w, 1); /* forces growth */
		size_t n = encode_all(&w, flex);
		assert_int_equal(w.err, 0);
		assert_int_equal(decode_all(w.buf, n, flex), 0);
		/* every cut fails: -EMSGSIZE, or -EINVAL where a count no
		 * longer fits the bytes left */
		for (size_t cut = 0; cut < n; cut++) {
			int rc = decode_all(w.buf, cut, flex);
			assert_true(rc == -EMSGSIZE || rc == -EINVAL);
		}
		hw_kw_free(&w);
	}
}

static void test_hostile(void **state)
{
	(void)state;
	hw_kr r;
	/* string length -2: invalid; the error is sticky */
	uint8_t neg[] = { 0xFF, 0xFE, 'a' };
	hw_kr_init(&r, neg, sizeof neg);
	hw_kr_str(&r);
	assert_int_equal(r.err, -EINVAL);
	assert_int_equal(hw_kr_i8(&r), 0);
	assert_int_equal(r.err, -EINVAL);
	/* null where not nullable */
	uint8_t nul[] = { 0xFF, 0xFF };
	hw_kr_init(&r, nul, sizeof nul);
	hw_kr_str(&r);
	assert_int_equal(r.err, -EINVAL);
	/* array count of 2^31-1 in 8 bytes */
	uint8_t big[] = { 0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0 };
	hw_kr_init(&r, big, sizeof big);
	hw_kr_array(&r);
	assert_int_equal(r.err, -EINVAL);
	/* varint too long */
	uint8_t vl[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	hw_kr_init(&r, vl, sizeof vl);
	hw_kr_uvarint(&r);
	assert_int_equal(r.err, -EOVERFLOW);
	/* tagged fields: duplicate tag refused; a proper pair skipped */
	uint8_t tg[] = { 2, 1, 1, 0xAA, 1, 0 };
	hw_kr_init(&r, tg, sizeof tg);
	hw_kr_tags(&r, NULL, NULL);
	assert_int_equal(r.err, -EINVAL);
	uint8_t tg2[] = { 2, 0, 1, 0xAA, 3, 0, 7 };
	hw_kr_init(&r, tg2, sizeof tg2);
	hw_kr_tags(&r, NULL, NULL);
	assert_int_equal(r.err, 0);
	assert_int_equal(hw_kr_i8(&r), 7);
	/* fixed writer overflows stickily */
	uint8_t fb[3];
	hw_kw w;
	hw_kw_init_fixed(&w, fb, sizeof fb);
	hw_kw_i16(&w, 1);
	hw_kw_i16(&w, 2);
	assert_int_equal(w.err, -EMSGSIZE);
	assert_int_equal(w.len, 2);
}

static void test_header(void **state)
{
	(void)state;
	struct { int16_t key, ver; int flex; } cases[] = {
		{ HW_KAPI_API_VERSIONS, 3, 1 }, { HW_KAPI_API_VERSIONS, 2, 0 },
		{ HW_KAPI_METADATA, 8, 0 },     { HW_KAPI_METADATA, 9, 1 },
		{ HW_KAPI_PRODUCE, 7, 0 },      { 999, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hw_kafka_req_hdr h = { cases[i].key, cases[i].ver, 42, { "cli", 3 }, 0, 0, { NULL, -1 } };
		hw_kw w;
		hw_kw_init(&w, 0);
		hw_kafka_req_hdr_encode(&w, &h);
		hw_kw_i8(&w, 9); /* body */
		hw_kr r;
		hw_kr_init(&r, w.buf, w.len);
		hw_kafka_req_hdr d;
		assert_int_equal(hw_kafka_req_hdr_decode(&r, &d), 0);
		assert_int_equal(d.api_key, cases[i].key);
		assert_int_equal(d.correlation_id, 42);
		assert_int_equal(d.flexible, cases[i].flex);
		assert_true(hw_kstr_eq(d.client_id, "cli"));
		assert_int_equal(hw_kr_i8(&r), 9);
		hw_kw_free(&w);
	}
	/* ApiVersions v3 answers with a v0 header; Metadata v9 with v1 */
	assert_false(hw_kafka_resp_hdr_flexible(HW_KAPI_API_VERSIONS, 3));
	assert_true(hw_kafka_resp_hdr_flexible(HW_KAPI_METADATA, 9));
	assert_true(hw_kafka_api_supported(HW_KAPI_FETCH, 11));
	assert_true(hw_kafka_api_supported(HW_KAPI_FETCH, 0)); /* Kafka's minimum (docs/kafka.md "Versions") */
	assert_true(hw_kafka_api_supported(HW_KAPI_FETCH, 12));  /* flexible (docs/kafka.md "Versions") */
	assert_false(hw_kafka_api_supported(HW_KAPI_FETCH, 13)); /* topic ids: not served */
	/* topic UUIDs: the 32-bit id round-trips; Kafka's zero UUID is not ours */
	uint8_t u[16], zero[16] = { 0 };
	uint32_t id = 0;
	hw_kafka_topic_uuid(0x01020304, u);
	assert_int_equal(hw_kafka_topic_uuid_id(u, &id), 0);
	assert_int_equal(id, 0x01020304);
	assert_memory_not_equal(u, zero, 8);
	assert_int_equal(hw_kafka_topic_uuid_id(zero, &id), -ENOENT);
	assert_false(hw_kafka_api_supported(HW_KAPI_END_TXN, 0));
	/* a response frame's size covers the header and body */
	hw_kw w;
	hw_kw_init(&w, 0);
	size_t at = hw_kafka_resp_begin(&w, 7, true);
	hw_kw_i16(&w, 0);
	assert_int_equal(hw_kafka_resp_end(&w, at), 0);
	assert_int_equal(w.len, 4 + 4 + 1 + 2);
	assert_memory_equal(w.buf, "\0\0\0\x07\0\0\0\x07\0\0\0", 11);
	hw_kw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_truncation),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
