/* test_group_schema.c — `__consumer_offsets` records (engine/group/
 * hw_group_schema.h): java String.hashCode vectors and Kafka's Utils.abs,
 * the exact bytes of each key/value, every truncation rejected, unknown
 * versions rejected, older value versions read. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "hw_group_schema.h"

/* Reference hash, written from the Java spec for ASCII input only. */
static int32_t ref_hash_ascii(const char *s)
{
	uint32_t h = 0;
	for (; *s; s++) h = 31u * h + (uint8_t)*s;
	return (int32_t)h;
}

static void test_java_hash(void **state)
{
	(void)state;
	/* widely published values of java.lang.String.hashCode() */
	assert_int_equal(hw_gschema_java_hash("", 0), 0);
	assert_int_equal(hw_gschema_java_hash("hello", 5), 99162322);
	assert_int_equal(hw_gschema_java_hash("Hello World", 11), -862545276);
	assert_int_equal(hw_gschema_java_hash("polygenelubricants", 18), INT32_MIN);
	const char *names[] = { "my-group", "console-consumer-12345", "g", "orders.billing", "x_y-z.0" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		assert_int_equal(hw_gschema_java_hash(names[i], strlen(names[i])), ref_hash_ascii(names[i]));
	/* U+00E9 is one UTF-16 unit 0xE9; U+1F600 is the pair D83D DE00 */
	assert_int_equal(hw_gschema_java_hash("\xc3\xa9", 2), 0xE9);
	assert_int_equal(hw_gschema_java_hash("\xf0\x9f\x98\x80", 4), 0xD83D * 31 + 0xDE00);
	/* malformed bytes decode to U+FFFD each; a truncated sequence to one */
	assert_int_equal(hw_gschema_java_hash("\xff", 1), 0xFFFD);
	assert_int_equal(hw_gschema_java_hash("\xe2\x82", 2), 0xFFFD);
	assert_int_equal(hw_gschema_java_hash("\xed\xa0\x80", 3), (0xFFFD * 31 + 0xFFFD) * 31 + 0xFFFD);
}

static void test_partition_for(void **state)
{
	(void)state;
	assert_int_equal(hw_gschema_partition_for("hello", 5, 50), 99162322 % 50);
	assert_int_equal(hw_gschema_partition_for("Hello World", 11, 50), 862545276 % 50);
	/* Utils.abs(Integer.MIN_VALUE) is 0, not Math.abs's MIN_VALUE */
	assert_int_equal(hw_gschema_partition_for("polygenelubricants", 18, 50), 0);
	assert_int_equal(hw_gschema_partition_for("polygenelubricants", 18, 7), 0);
	assert_int_equal(hw_gschema_partition_for("abc", 3, 1), 0);
	assert_int_equal(hw_gschema_partition_for("abc", 3, 0), -EINVAL);
	for (int i = 0; i < 200; i++) {
		char g[16];
		int n = snprintf(g, sizeof g, "grp-%d", i * 7919);
		int32_t p = hw_gschema_partition_for(g, (size_t)n, 50);
		int32_t h = ref_hash_ascii(g);
		assert_int_equal(p, (h == INT32_MIN ? 0 : (h < 0 ? -h : h)) % 50);
	}
}

static void test_offset_key_bytes(void **state)
{
	(void)state;
	uint8_t b[64];
	static const uint8_t want[] = { 0, 1, 0, 2, 'g', '1', 0, 3, 't', 'o', 'p', 0, 0, 0, 7 };
	int n = hw_gschema_offset_key_encode(b, sizeof b, "g1", 2, "top", 3, 7);
	assert_int_equal(n, sizeof want);
	assert_memory_equal(b, want, sizeof want);
	assert_int_equal(hw_gschema_offset_key_encode(NULL, 0, "g1", 2, "top", 3, 7), n);
	assert_int_equal(hw_gschema_offset_key_encode(b, (size_t)n - 1, "g1", 2, "top", 3, 7), -EMSGSIZE);
	hw_gschema_key k;
	assert_int_equal(hw_gschema_key_decode(b, (size_t)n, &k), 0);
	assert_int_equal(k.version, 1);
	assert_int_equal(k.group.len, 2);
	assert_memory_equal(k.group.p, "g1", 2);
	assert_int_equal(k.topic.len, 3);
	assert_int_equal(k.partition, 7);
	for (int l = 0; l < n; l++)
		assert_int_equal(hw_gschema_key_decode(b, (size_t)l, &k), HW_GSCHEMA_ETRUNC);
	b[n] = 0;
	assert_int_equal(hw_gschema_key_decode(b, (size_t)n + 1, &k), HW_GSCHEMA_ETRAILING);
	/* version 0 keys (older brokers) have the same layout */
	b[1] = 0;
	assert_int_equal(hw_gschema_key_decode(b, (size_t)n, &k), 0);
	assert_int_equal(k.version, 0);
	b[1] = 3;
	assert_int_equal(hw_gschema_key_decode(b, (size_t)n, &k), HW_GSCHEMA_EVERSION);
	/* a negative string length is not a null here */
	static const uint8_t neg[] = { 0, 1, 0xff, 0xff, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(hw_gschema_key_decode(neg, sizeof neg, &k), HW_GSCHEMA_ELENGTH);
}

static void test_group_key_bytes(void **state)
{
	(void)state;
	uint8_t b[16];
	static const uint8_t want[] = { 0, 2, 0, 3, 'a', 'b', 'c' };
	int n = hw_gschema_group_key_encode(b, sizeof b, "abc", 3);
	assert_int_equal(n, sizeof want);
	assert_memory_equal(b, want, sizeof want);
	hw_gschema_key k;
	assert_int_equal(hw_gschema_key_decode(b, (size_t)n, &k), 0);
	assert_int_equal(k.version, 2);
	assert_int_equal(k.group.len, 3);
	assert_int_equal(k.topic.len, -1);
}

static void test_offset_value(void **state)
{
	(void)state;
	uint8_t b[64];
	int n = hw_gschema_offset_value_encode(b, sizeof b, 0x0102030405060708LL, 9, "md", 2, 1700000000123LL);
	static const uint8_t want[] = { 0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 9, 0, 2, 'm', 'd',
					0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x7b };
	assert_int_equal(n, sizeof want);
	assert_memory_equal(b, want, sizeof want);
	hw_gschema_offset v;
	assert_int_equal(hw_gschema_offset_value_decode(b, (size_t)n, &v), 0);
	assert_int_equal(v.version, 3);
	assert_true(v.offset == 0x0102030405060708LL);
	assert_int_equal(v.leader_epoch, 9);
	assert_int_equal(v.metadata.len, 2);
	assert_true(v.commit_timestamp == 1700000000123LL);
	for (int l = 0; l < n; l++)
		assert_int_equal(hw_gschema_offset_value_decode(b, (size_t)l, &v), HW_GSCHEMA_ETRUNC);
	/* NULL metadata is written as "" */
	n = hw_gschema_offset_value_encode(b, sizeof b, 5, -1, NULL, 0, 1);
	assert_int_equal(hw_gschema_offset_value_decode(b, (size_t)n, &v), 0);
	assert_int_equal(v.metadata.len, 0);
	/* version 1: offset, metadata, commit ts, expire ts */
	static const uint8_t v1[] = { 0, 1, 0, 0, 0, 0, 0, 0, 0, 42, 0, 1, 'x',
				      0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 20 };
	assert_int_equal(hw_gschema_offset_value_decode(v1, sizeof v1, &v), 0);
	assert_int_equal(v.offset, 42);
	assert_int_equal(v.leader_epoch, -1);
	assert_int_equal(v.commit_timestamp, 10);
	assert_int_equal(v.expire_timestamp, 20);
	static const uint8_t v4[] = { 0, 4, 0, 0, 0, 0, 0, 0, 0, 42 };
	assert_int_equal(hw_gschema_offset_value_decode(v4, sizeof v4, &v), HW_GSCHEMA_EVERSION);
}

static void test_group_value(void **state)
{
	(void)state;
	hw_gschema_member_in m[2] = {
		{ .member_id = "c1-aaaa", .client_id = "c1", .client_host = "/127.0.0.1", .rebalance_timeout = 300000,
		  .session_timeout = 10000, .subscription = "\x00\x01sub", .subscription_len = 5,
		  .assignment = "asg1", .assignment_len = 4 },
		{ .member_id = "c2-bbbb", .group_instance_id = "inst-2", .client_id = "c2", .client_host = "/127.0.0.2",
		  .rebalance_timeout = 60000, .session_timeout = 6000, .subscription = NULL, .subscription_len = 0,
		  .assignment = NULL, .assignment_len = 0 },
	};
	uint8_t b[512];
	int n = hw_gschema_group_value_encode(b, sizeof b, "consumer", 7, "range", "c1-aaaa", 123, m, 2);
	assert_true(n > 0);
	assert_int_equal(hw_gschema_group_value_encode(NULL, 0, "consumer", 7, "range", "c1-aaaa", 123, m, 2), n);
	/* version, then STRING protocol_type */
	assert_memory_equal(b, "\x00\x03\x00\x08" "consumer", 12);
	hw_gschema_group g;
	assert_int_equal(hw_gschema_group_value_decode(b, (size_t)n, &g), 0);
	assert_int_equal(g.version, 3);
	assert_int_equal(g.generation, 7);
	assert_int_equal(g.protocol.len, 5);
	assert_memory_equal(g.leader.p, "c1-aaaa", 7);
	assert_int_equal(g.current_state_timestamp, 123);
	assert_int_equal(g.n_members, 2);
	const uint8_t *p = g.members;
	int32_t idx = 0;
	hw_gschema_member sm;
	assert_int_equal(hw_gschema_member_next(&g, &p, &idx, &sm), 1);
	assert_int_equal(sm.group_instance_id.len, -1);
	assert_int_equal(sm.rebalance_timeout, 300000);
	assert_int_equal(sm.session_timeout, 10000);
	assert_int_equal(sm.subscription.len, 5);
	assert_memory_equal(sm.assignment.p, "asg1", 4);
	assert_int_equal(hw_gschema_member_next(&g, &p, &idx, &sm), 1);
	assert_int_equal(sm.group_instance_id.len, 6);
	assert_int_equal(sm.assignment.len, 0);
	assert_int_equal(hw_gschema_member_next(&g, &p, &idx, &sm), 0);
	for (int l = 0; l < n; l++)
		assert_true(hw_gschema_group_value_decode(b, (size_t)l, &g) < 0);
	/* empty group, null protocol and leader */
	n = hw_gschema_group_value_encode(b, sizeof b, "consumer", 8, NULL, NULL, 5, NULL, 0);
	assert_int_equal(hw_gschema_group_value_decode(b, (size_t)n, &g), 0);
	assert_int_equal(g.protocol.len, -1);
	assert_null(g.protocol.p);
	assert_int_equal(g.n_members, 0);
	/* a member count the bytes cannot hold */
	b[n - 1] = 0x7f;
	assert_int_equal(hw_gschema_group_value_decode(b, (size_t)n, &g), HW_GSCHEMA_ECOUNT);
	assert_string_equal(hw_gschema_rc_name(HW_GSCHEMA_ECOUNT), "ECOUNT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_java_hash),
		cmocka_unit_test(test_partition_for),
		cmocka_unit_test(test_offset_key_bytes),
		cmocka_unit_test(test_group_key_bytes),
		cmocka_unit_test(test_offset_value),
		cmocka_unit_test(test_group_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
