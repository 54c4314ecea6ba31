/* test_qhello.c — the memif queue hello codec (drivers/net/dpdk/hw_qhello.h):
 * round trips over random fields (with and without Ethernet padding), the
 * byte layout against the documented offsets, truncated frames (every
 * length below 16, in exact-size heap buffers so ASan catches an overread),
 * bad magic / version / reserved byte / cluster id / queue count / node id
 * each reported with its reason and errno, the unversioned hello of earlier
 * builds, every single-byte mutation of a valid hello, and the encoder's
 * and decoder's argument errors. Seeded by HW_TEST_SEED. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "hw_qhello.h"
#include "../../../support/hw_test.h"

static uint64_t seed;

static uint64_t rnd(void) { return hw_test_rand(); }

static hw_qhello random_hello(void)
{
	hw_qhello h;
	memset(&h, 0, sizeof h);
	h.queue_count = (uint16_t)(1 + rnd() % HW_QHELLO_MAX_QUEUES);
	h.cluster_id = (uint32_t)rnd();
	h.node_id = (int32_t)(rnd() % 3 == 0 ? -1 : (int64_t)(rnd() % 0x80000000u));
	return h;
}

static void encode_ok(const hw_qhello *h, uint8_t *buf)
{
	assert_int_equal(hw_qhello_encode(h, buf, HW_QHELLO_LEN), HW_QHELLO_LEN);
}

/* decode len bytes of src from an exact-size heap copy */
static int decode_exact(const uint8_t *src, size_t len, uint32_t cluster, hw_qhello *out, hw_qhello_drop *why)
{
	uint8_t *b = malloc(len ? len : 1);
	assert_non_null(b);
	memcpy(b, src, len);
	int rc = hw_qhello_decode(len ? b : NULL, len, cluster, out, why);
	free(b);
	return rc;
}

static void expect_drop(const uint8_t *buf, size_t len, uint32_t cluster, hw_qhello_drop reason, int err)
{
	hw_qhello out;
	memset(&out, 0xAB, sizeof out);
	hw_qhello before = out;
	hw_qhello_drop why = HW_QHELLO_DROP__COUNT;
	assert_int_equal(decode_exact(buf, len, cluster, &out, &why), -err);
	assert_int_equal(why, reason);
	assert_memory_equal(&out, &before, sizeof out);   /* untouched on error */
}

static void test_round_trip(void **st)
{
	(void)st;
	for (int i = 0; i < 20000; i++) {
		hw_qhello h = random_hello();
		uint8_t buf[64];
		memset(buf, (int)(rnd() & 0xff), sizeof buf);   /* padding: any bytes */
		encode_ok(&h, buf);
		size_t len = HW_QHELLO_LEN + (i % 2 ? rnd() % (sizeof buf - HW_QHELLO_LEN + 1) : 0);
		hw_qhello out;
		hw_qhello_drop why;
		assert_int_equal(decode_exact(buf, len, h.cluster_id, &out, &why), 0);
		assert_int_equal(out.version, HW_QHELLO_VERSION);
		assert_int_equal(out.queue_count, h.queue_count);
		assert_int_equal(out.cluster_id, h.cluster_id);
		assert_int_equal(out.node_id, h.node_id);
	}
	/* the bounds themselves */
	hw_qhello lo = { 0, 1, 7, -1 }, hi = { 0, HW_QHELLO_MAX_QUEUES, 7, INT32_MAX };
	uint8_t buf[HW_QHELLO_LEN];
	hw_qhello out;
	hw_qhello_drop why;
	encode_ok(&lo, buf);
	assert_int_equal(hw_qhello_decode(buf, sizeof buf, 7, &out, &why), 0);
	assert_int_equal(out.queue_count, 1);
	assert_int_equal(out.node_id, -1);
	encode_ok(&hi, buf);
	assert_int_equal(hw_qhello_decode(buf, sizeof buf, 7, &out, &why), 0);
	assert_int_equal(out.queue_count, HW_QHELLO_MAX_QUEUES);
	assert_int_equal(out.node_id, INT32_MAX);
}

/* The bytes are where hw_qhello.h says, big-endian. */
static void test_layout(void **st)
{
	(void)st;
	hw_qhello h = random_hello();
	uint8_t buf[HW_QHELLO_LEN];
	encode_ok(&h, buf);
	uint8_t want[HW_QHELLO_LEN];
	for (int k = 0; k < 4; k++) {
		want[k] = (uint8_t)(HW_QHELLO_MAGIC >> (24 - 8 * k));
		want[8 + k] = (uint8_t)(h.cluster_id >> (24 - 8 * k));
		want[12 + k] = (uint8_t)((uint32_t)h.node_id >> (24 - 8 * k));
	}
	want[4] = HW_QHELLO_VERSION;
	want[5] = 0;
	want[6] = (uint8_t)(h.queue_count >> 8);
	want[7] = (uint8_t)h.queue_count;
	assert_memory_equal(buf, want, sizeof want);
	assert_memory_equal(buf, "HWQH", 4);
}

static void test_truncated(void **st)
{
	(void)st;
	hw_qhello h = random_hello();
	uint8_t buf[HW_QHELLO_LEN];
	encode_ok(&h, buf);
	for (size_t len = 0; len < HW_QHELLO_LEN; len++)
		expect_drop(buf, len, h.cluster_id, HW_QHELLO_DROP_TRUNCATED, EBADMSG);
	/* NULL with length 0 is an empty frame, not an argument error */
	hw_qhello out;
	hw_qhello_drop why;
	assert_int_equal(hw_qhello_decode(NULL, 0, h.cluster_id, &out, &why), -EBADMSG);
	assert_int_equal(why, HW_QHELLO_DROP_TRUNCATED);
}

static void test_bad_magic_version_reserved(void **st)
{
	(void)st;
	hw_qhello h = random_hello();
	uint8_t good[HW_QHELLO_LEN], buf[HW_QHELLO_LEN];
	encode_ok(&h, good);
	for (int bit = 0; bit < 32; bit++) {
		memcpy(buf, good, sizeof buf);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		expect_drop(buf, sizeof buf, h.cluster_id, HW_QHELLO_DROP_BAD_MAGIC, EBADMSG);
	}
	for (int v = 0; v < 256; v++) {
		memcpy(buf, good, sizeof buf);
		buf[4] = (uint8_t)v;
		if (v >= HW_QHELLO_VERSION_MIN && v <= HW_QHELLO_VERSION) {
			hw_qhello out;
			hw_qhello_drop why;
			assert_int_equal(decode_exact(buf, sizeof buf, h.cluster_id, &out, &why), 0);
			assert_int_equal(out.version, v);
		} else {
			expect_drop(buf, sizeof buf, h.cluster_id, HW_QHELLO_DROP_BAD_VERSION, EPROTONOSUPPORT);
		}
	}
	for (int r = 1; r < 256; r++) {
		memcpy(buf, good, sizeof buf);
		buf[5] = (uint8_t)r;
		expect_drop(buf, sizeof buf, h.cluster_id, HW_QHELLO_DROP_BAD_RESERVED, EBADMSG);
	}
	/* several faults: the first in table order is reported */
	memcpy(buf, good, sizeof buf);
	buf[4] = 9;
	buf[5] = 1;
	expect_drop(buf, sizeof buf, h.cluster_id ^ 1, HW_QHELLO_DROP_BAD_VERSION, EPROTONOSUPPORT);
}

static void test_cluster_count_node(void **st)
{
	(void)st;
	hw_qhello h = random_hello();
	uint8_t buf[HW_QHELLO_LEN];
	encode_ok(&h, buf);
	uint32_t other = h.cluster_id ^ (uint32_t)(1u << (rnd() % 32));
	expect_drop(buf, sizeof buf, other, HW_QHELLO_DROP_FOREIGN_CLUSTER, EACCES);

	uint16_t bad_counts[] = { 0, HW_QHELLO_MAX_QUEUES + 1, 0x0100, 0xFFFF,
				  (uint16_t)(HW_QHELLO_MAX_QUEUES + 1 + rnd() % (0x10000 - HW_QHELLO_MAX_QUEUES - 1)) };
	for (size_t i = 0; i < sizeof bad_counts / sizeof bad_counts[0]; i++) {
		buf[6] = (uint8_t)(bad_counts[i] >> 8);
		buf[7] = (uint8_t)bad_counts[i];
		expect_drop(buf, sizeof buf, h.cluster_id, HW_QHELLO_DROP_BAD_COUNT, ERANGE);
	}
	encode_ok(&h, buf);
	int32_t bad_nodes[] = { -2, INT32_MIN, (int32_t)(-2 - (int64_t)(rnd() % 0x7FFFFFFEu)) };
	for (size_t i = 0; i < sizeof bad_nodes / sizeof bad_nodes[0]; i++) {
		uint32_t u = (uint32_t)bad_nodes[i];
		buf[12] = (uint8_t)(u >> 24), buf[13] = (uint8_t)(u >> 16), buf[14] = (uint8_t)(u >> 8),
		buf[15] = (uint8_t)u;
		expect_drop(buf, sizeof buf, h.cluster_id, HW_QHELLO_DROP_BAD_NODE, ERANGE);
	}
}

/* The 14-byte unversioned hello of earlier builds (magic, cluster id, node
 * id, count) is never decoded, padded or not. */
static void test_unversioned_hello(void **st)
{
	(void)st;
	for (int i = 0; i < 5000; i++) {
		uint32_t cluster = (uint32_t)rnd();
		if (i % 4 == 0)   /* top byte 1: read as version 1 */
			cluster = 0x01000000u | (cluster & 0xFFFFu);
		int32_t node = (int32_t)(rnd() % 2000);
		uint16_t q = (uint16_t)(1 + rnd() % 8);
		uint8_t old[46];
		memset(old, 0, sizeof old);
		for (int k = 0; k < 4; k++) {
			old[k] = (uint8_t)(HW_QHELLO_MAGIC >> (24 - 8 * k));
			old[4 + k] = (uint8_t)(cluster >> (24 - 8 * k));
			old[8 + k] = (uint8_t)((uint32_t)node >> (24 - 8 * k));
		}
		old[12] = (uint8_t)(q >> 8), old[13] = (uint8_t)q;
		hw_qhello out;
		hw_qhello_drop why;
		assert_int_equal(decode_exact(old, 14, cluster, &out, &why), -EBADMSG);
		assert_int_equal(why, HW_QHELLO_DROP_TRUNCATED);
		assert_true(decode_exact(old, sizeof old, cluster, &out, &why) < 0);
		assert_true(why < HW_QHELLO_DROP__COUNT);
	}
}

/* Every single-byte change of a valid hello is either refused with the
 * reason of the field it hit, or (node id, queue count in range) decodes
 * to exactly the changed value. */
static void test_every_mutation(void **st)
{
	(void)st;
	for (int i = 0; i < 200; i++) {
		hw_qhello h = random_hello();
		uint8_t good[HW_QHELLO_LEN], buf[HW_QHELLO_LEN];
		encode_ok(&h, good);
		for (int pos = 0; pos < HW_QHELLO_LEN; pos++) {
			for (int x = 1; x < 256; x++) {
				memcpy(buf, good, sizeof buf);
				buf[pos] ^= (uint8_t)x;
				hw_qhello out;
				hw_qhello_drop why = HW_QHELLO_DROP__COUNT;
				int rc = hw_qhello_decode(buf, sizeof buf, h.cluster_id, &out, &why);
				uint16_t q = (uint16_t)(buf[6] << 8 | buf[7]);
				int32_t node = (int32_t)((uint32_t)buf[12] << 24 | (uint32_t)buf[13] << 16 |
							 (uint32_t)buf[14] << 8 | buf[15]);
				if (pos < 4)
					assert_int_equal(why, HW_QHELLO_DROP_BAD_MAGIC);
				else if (pos == 4)
					assert_int_equal(why, HW_QHELLO_DROP_BAD_VERSION);
				else if (pos == 5)
					assert_int_equal(why, HW_QHELLO_DROP_BAD_RESERVED);
				else if (pos < 8 && (q == 0 || q > HW_QHELLO_MAX_QUEUES))
					assert_int_equal(why, HW_QHELLO_DROP_BAD_COUNT);
				else if (pos >= 8 && pos < 12)
					assert_int_equal(why, HW_QHELLO_DROP_FOREIGN_CLUSTER);
				else if (pos >= 12 && node < -1)
					assert_int_equal(why, HW_QHELLO_DROP_BAD_NODE);
				else {
					assert_int_equal(rc, 0);
					assert_int_equal(out.queue_count, q);
					assert_int_equal(out.node_id, node);
					continue;
				}
				assert_true(rc < 0);
			}
		}
	}
}

static void test_argument_errors(void **st)
{
	(void)st;
	hw_qhello h = random_hello();
	uint8_t buf[HW_QHELLO_LEN + 1];
	memset(buf, 0x5A, sizeof buf);
	assert_int_equal(hw_qhello_encode(NULL, buf, sizeof buf), -EINVAL);
	assert_int_equal(hw_qhello_encode(&h, NULL, sizeof buf), -EINVAL);
	hw_qhello bad = h;
	bad.queue_count = 0;
	assert_int_equal(hw_qhello_encode(&bad, buf, sizeof buf), -EINVAL);
	bad.queue_count = HW_QHELLO_MAX_QUEUES + 1;
	assert_int_equal(hw_qhello_encode(&bad, buf, sizeof buf), -EINVAL);
	bad = h;
	bad.node_id = -2;
	assert_int_equal(hw_qhello_encode(&bad, buf, sizeof buf), -EINVAL);
	assert_int_equal(hw_qhello_encode(&h, buf, HW_QHELLO_LEN - 1), -ENOSPC);
	for (size_t k = 0; k < sizeof buf; k++)
		assert_int_equal(buf[k], 0x5A);   /* nothing written on error */

	encode_ok(&h, buf);
	hw_qhello out;
	hw_qhello_drop why = HW_QHELLO_DROP__COUNT;
	assert_int_equal(hw_qhello_decode(buf, HW_QHELLO_LEN, h.cluster_id, NULL, &why), -EINVAL);
	assert_int_equal(hw_qhello_decode(buf, HW_QHELLO_LEN, h.cluster_id, &out, NULL), -EINVAL);
	assert_int_equal(hw_qhello_decode(NULL, HW_QHELLO_LEN, h.cluster_id, &out, &why), -EINVAL);
	assert_int_equal(why, HW_QHELLO_DROP__COUNT);
}

static void test_names(void **st)
{
	(void)st;
	for (int r = 0; r < HW_QHELLO_DROP__COUNT; r++) {
		assert_non_null(hw_qhello_drop_name(r));
		assert_true(strlen(hw_qhello_drop_desc(r)) > 0);
		assert_string_not_equal(hw_qhello_drop_name(r), "UNKNOWN_DROP");
		for (int o = 0; o < r; o++)
			assert_string_not_equal(hw_qhello_drop_name(r), hw_qhello_drop_name(o));
	}
	assert_string_equal(hw_qhello_drop_name(-1), "UNKNOWN_DROP");
	assert_string_equal(hw_qhello_drop_name(HW_QHELLO_DROP__COUNT), "UNKNOWN_DROP");
	assert_non_null(hw_qhello_drop_desc(HW_QHELLO_DROP__COUNT));
}

int main(void)
{
	seed = hw_test_seed_init("test_qhello");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_magic_version_reserved),
		cmocka_unit_test(test_cluster_count_node),
		cmocka_unit_test(test_unversioned_hello),
		cmocka_unit_test(test_every_mutation),
		cmocka_unit_test(test_argument_errors),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
