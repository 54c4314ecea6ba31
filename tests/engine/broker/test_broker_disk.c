/* test_broker_disk.c — engine/broker's clean-shutdown file (taken once,
 * recorded at a clean stop, malformed = a crash), partition directory
 * names, and where a new partition's log goes (docs/logdirs.md), over an
 * in-memory hw_broker_fs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "hw_broker_disk.h"

/* One file in memory. */
static struct mem {
	char path[256];
	char data[64];
	int exists, replaces, removes, fail_remove;
} M;

static int m_read(void *ctx, const char *path, char *buf, size_t cap)
{
	(void)ctx;
	if (!M.exists || strcmp(path, M.path))
		return -ENOENT;
	snprintf(buf, cap, "%s", M.data);
	return (int)strlen(buf);
}

static int m_replace(void *ctx, const char *path, const void *buf, size_t n)
{
	(void)ctx;
	assert_true(n < sizeof(M.data));
	snprintf(M.path, sizeof(M.path), "%s", path);
	memcpy(M.data, buf, n);
	M.data[n] = 0;
	M.exists = 1;
	M.replaces++;
	return 0;
}

static int m_remove(void *ctx, const char *path)
{
	(void)ctx;
	M.removes++;
	if (M.fail_remove)
		return -EACCES;
	if (!M.exists || strcmp(path, M.path))
		return -ENOENT;
	M.exists = 0;
	return 0;
}

static const hw_broker_fs fs = { .read = m_read, .replace = m_replace, .remove = m_remove };

static void test_clean_shutdown_file(void **state)
{
	(void)state;
	memset(&M, 0, sizeof(M));
	assert_int_equal(hw_broker_take_clean_shutdown(&fs, "/d"), -1); /* none: first start or crash */
	assert_int_equal(hw_broker_record_clean_shutdown(&fs, "/d", 17), 0);
	assert_string_equal(M.path, "/d/" HW_BROKER_CLEAN_SHUTDOWN_FILE);
	assert_string_equal(M.data, "broker.epoch=17\n");
	assert_int_equal(hw_broker_take_clean_shutdown(&fs, "/d"), 17);
	assert_false(M.exists); /* taken: a crash from now on leaves none */
	assert_int_equal(hw_broker_take_clean_shutdown(&fs, "/d"), -1);
	assert_int_equal(hw_broker_record_clean_shutdown(&fs, "/d", -1), -EINVAL);
	/* malformed contents count as a crash, and are removed too */
	M.exists = 1;
	snprintf(M.data, sizeof(M.data), "epoch 5");
	assert_int_equal(hw_broker_take_clean_shutdown(&fs, "/d"), -1);
	assert_false(M.exists);
	/* a removal that fails still returns the epoch (and is logged) */
	assert_int_equal(hw_broker_record_clean_shutdown(&fs, "/d", 3), 0);
	M.fail_remove = 1;
	assert_int_equal(hw_broker_take_clean_shutdown(&fs, "/d"), 3);
	char longdir[5000];
	memset(longdir, 'a', sizeof(longdir) - 1);
	longdir[sizeof(longdir) - 1] = 0;
	assert_int_equal(hw_broker_record_clean_shutdown(&fs, longdir, 3), -ENAMETOOLONG);
}

/* partition.metadata: written at the first claim, the same id claims
 * again, another id (a deleted topic's log under a recreated topic's name)
 * is stale, an unreadable file is rewritten. */
static void test_partition_meta(void **state)
{
	(void)state;
	memset(&M, 0, sizeof(M));
	assert_int_equal(hw_broker_partition_meta_claim(&fs, "/d/t-0", 7), 0);
	assert_string_equal(M.path, "/d/t-0/" HW_BROKER_PARTITION_META_FILE);
	assert_string_equal(M.data, "version: 0\ntopic_id: 7\n");
	assert_int_equal(M.replaces, 1);
	assert_int_equal(hw_broker_partition_meta_claim(&fs, "/d/t-0", 7), 0);
	assert_int_equal(M.replaces, 1); /* nothing rewritten */
	assert_int_equal(hw_broker_partition_meta_claim(&fs, "/d/t-0", 8), 1);
	assert_string_equal(M.data, "version: 0\ntopic_id: 7\n"); /* left for the caller to delete */
	snprintf(M.data, sizeof(M.data), "version: 1\ntopic_id: 8\n");
	assert_int_equal(hw_broker_partition_meta_claim(&fs, "/d/t-0", 8), 0);
	assert_string_equal(M.data, "version: 0\ntopic_id: 8\n");
}

static void test_partition_dir_names(void **state)
{
	(void)state;
	char t[32];
	uint32_t p = 99;
	assert_int_equal(hw_broker_parse_partition_dir("orders-3", t, sizeof(t), &p), 0);
	assert_string_equal(t, "orders");
	assert_int_equal(p, 3);
	assert_int_equal(hw_broker_parse_partition_dir("a-b.c_d-12", t, sizeof(t), &p), 0);
	assert_string_equal(t, "a-b.c_d");
	assert_int_equal(p, 12);
	const char *bad[] = { "orders", "-3", "orders-", "orders-x", "or/ders-1", "orders-1048577", "orders-+1",
			      "orders-1x", "0123456789012345678901234567890123-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(hw_broker_parse_partition_dir(bad[i], t, sizeof(t), &p), -EINVAL);
}

static void test_placement(void **state)
{
	(void)state;
	const char *dirs[] = { "/a", "/b", "/ab" };
	int off[] = { 0, 0, 0 };
	const char *logs[] = { "/a/t-0", "/a/t-1", "/b/t-2", "/ab/t-3", "/ab/t-4" };
	assert_int_equal(hw_broker_place_log(dirs, off, 3, logs, 5), 1); /* "/ab" is not in "/a" */
	assert_int_equal(hw_broker_place_log(dirs, off, 3, logs, 0), 0); /* ties: the first */
	off[1] = 1;
	assert_int_equal(hw_broker_place_log(dirs, off, 3, logs, 5), 0);
	off[0] = off[2] = 1;
	assert_int_equal(hw_broker_place_log(dirs, off, 3, logs, 5), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_shutdown_file),
		cmocka_unit_test(test_partition_dir_names),
		cmocka_unit_test(test_partition_meta),
		cmocka_unit_test(test_placement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
