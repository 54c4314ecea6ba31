/* test_epoch.c — the leader-epoch cache against Kafka's LeaderEpochFileCache
 * rules (docs/replication.md#truncation-by-leader-epoch): assign, truncateFromEnd/Start, endOffsetFor in
 * every case, and the checkpoint file (round trip, missing, malformed). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_epoch.h"

static void expect(const hw_epoch_cache *c, size_t n, ...)
{
	va_list ap;
	va_start(ap, n);
	assert_int_equal(c->n, n);
	for (size_t i = 0; i < n; i++) {
		int e = va_arg(ap, int);
		long long o = va_arg(ap, long long);
		assert_int_equal(c->v[i].epoch, e);
		assert_int_equal(c->v[i].start_offset, o);
	}
	va_end(ap);
}

static void build(hw_epoch_cache *c) /* (1,0) (3,10) (5,20) */
{
	hw_epoch_init(c);
	assert_int_equal(hw_epoch_assign(c, 1, 0), 1);
	assert_int_equal(hw_epoch_assign(c, 3, 10), 1);
	assert_int_equal(hw_epoch_assign(c, 5, 20), 1);
}

static void test_assign(void **st)
{
	(void)st;
	hw_epoch_cache c;
	build(&c);
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	assert_int_equal(hw_epoch_assign(&c, 5, 25), 0);  /* same epoch, later batch */
	assert_int_equal(hw_epoch_assign(&c, 5, 20), 0);
	assert_int_equal(hw_epoch_assign(&c, -1, 40), 0); /* no epoch */
	assert_int_equal(hw_epoch_assign(&c, 9, -1), 0);
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	/* an older epoch above the latest start replaces the latest entry
	 * (Kafka: epoch != latest => update; drop epoch >= 4 or start >= 30) */
	assert_int_equal(hw_epoch_assign(&c, 4, 30), 1);
	expect(&c, 3, 1, 0LL, 3, 10LL, 4, 30LL);
	assert_int_equal(hw_epoch_assign(&c, 5, 20), 1); /* start below 30: 4@30 goes */
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	/* same epoch at a lower offset: replaces it (offset below latest start) */
	assert_int_equal(hw_epoch_assign(&c, 5, 15), 1);
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 15LL);
	/* older epoch below latest start: drops entries with epoch >= 4 or
	 * start >= 12, then adds (4, 12) */
	assert_int_equal(hw_epoch_assign(&c, 4, 12), 1);
	expect(&c, 3, 1, 0LL, 3, 10LL, 4, 12LL);
	/* newer epoch at an offset below existing starts: those go */
	assert_int_equal(hw_epoch_assign(&c, 7, 5), 1);
	expect(&c, 2, 1, 0LL, 7, 5LL);
	assert_int_equal(hw_epoch_latest(&c), 7);
	assert_int_equal(hw_epoch_latest_start(&c), 5);
	hw_epoch_free(&c);
	assert_int_equal(hw_epoch_latest(&c), -1);
	assert_int_equal(hw_epoch_latest_start(&c), -1);
	/* many entries (growth) stay ordered */
	hw_epoch_init(&c);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(hw_epoch_assign(&c, i, 10LL * i), 1);
	assert_int_equal(c.n, 1000);
	for (size_t i = 1; i < c.n; i++)
		assert_true(c.v[i].epoch > c.v[i - 1].epoch && c.v[i].start_offset > c.v[i - 1].start_offset);
	hw_epoch_free(&c);
}

static void test_truncate_from_end(void **st)
{
	(void)st;
	hw_epoch_cache c;
	build(&c);
	hw_epoch_truncate_from_end(&c, 100); /* beyond everything */
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	hw_epoch_truncate_from_end(&c, 21);
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	hw_epoch_truncate_from_end(&c, 20); /* an entry starting exactly there goes */
	expect(&c, 2, 1, 0LL, 3, 10LL);
	hw_epoch_truncate_from_end(&c, 11);
	expect(&c, 2, 1, 0LL, 3, 10LL);
	hw_epoch_truncate_from_end(&c, 0);
	expect(&c, 0);
	hw_epoch_free(&c);
}

static void test_truncate_from_start(void **st)
{
	(void)st;
	hw_epoch_cache c;
	build(&c);
	hw_epoch_truncate_from_start(&c, -1); /* below the first: nothing */
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	hw_epoch_truncate_from_start(&c, 0);  /* exactly the first start */
	expect(&c, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	hw_epoch_truncate_from_start(&c, 12); /* inside epoch 3: it restarts at 12 */
	expect(&c, 2, 3, 12LL, 5, 20LL);
	hw_epoch_truncate_from_start(&c, 20);
	expect(&c, 1, 5, 20LL);
	hw_epoch_truncate_from_start(&c, 50); /* beyond the last start */
	expect(&c, 1, 5, 50LL);
	hw_epoch_free(&c);
}

static void eo(const hw_epoch_cache *c, int32_t req, int64_t leo, int32_t we, int64_t wo)
{
	int32_t e;
	int64_t o;
	hw_epoch_end_offset_for(c, req, leo, &e, &o);
	assert_int_equal(e, we);
	assert_int_equal(o, wo);
}

static void test_end_offset_for(void **st)
{
	(void)st;
	hw_epoch_cache c;
	hw_epoch_init(&c);
	eo(&c, 3, 30, -1, -1);         /* empty cache */
	build(&c);                     /* (1,0) (3,10) (5,20), LEO 30 */
	eo(&c, -1, 30, -1, -1);        /* undefined epoch */
	eo(&c, 5, 30, 5, 30);          /* latest -> LEO */
	eo(&c, 6, 30, -1, -1);         /* above all we know */
	eo(&c, 3, 30, 3, 20);          /* exact, not latest: next start */
	eo(&c, 4, 30, 3, 20);          /* gap: floor epoch, next start */
	eo(&c, 2, 30, 1, 10);
	eo(&c, 1, 30, 1, 10);
	eo(&c, 0, 30, 0, 0);           /* below the first: (requested, first start) */
	assert_int_equal(hw_epoch_floor(&c, 4), 3);
	assert_int_equal(hw_epoch_floor(&c, 0), -1);
	assert_int_equal(hw_epoch_floor(&c, 99), 5);
	/* after truncate_from_start the first entry moved: below it still answers
	 * with the (moved) first start */
	hw_epoch_truncate_from_start(&c, 12);
	eo(&c, 1, 30, 1, 12);
	hw_epoch_free(&c);
}

static char tmpdir[64];

static void path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", tmpdir, name);
}

static void write_text(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_checkpoint(void **st)
{
	(void)st;
	char p[128], buf[256];
	path(p, sizeof(p), "leader-epoch-checkpoint");
	hw_epoch_cache c, r;
	build(&c);
	hw_epoch_init(&r);
	assert_int_equal(hw_epoch_read_checkpoint(&r, p), -ENOENT);
	assert_int_equal(r.n, 0);
	assert_int_equal(hw_epoch_write_checkpoint(&c, p), 0);
	/* Kafka's text format exactly: version, count, "epoch offset" lines */
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	assert_string_equal(buf, "0\n3\n1 0\n3 10\n5 20\n");
	assert_int_equal(hw_epoch_read_checkpoint(&r, p), 0);
	expect(&r, 3, 1, 0LL, 3, 10LL, 5, 20LL);
	/* an empty cache round-trips too */
	hw_epoch_cache e;
	hw_epoch_init(&e);
	assert_int_equal(hw_epoch_write_checkpoint(&e, p), 0);
	assert_int_equal(hw_epoch_read_checkpoint(&r, p), 0);
	assert_int_equal(r.n, 0);
	/* malformed files: -EBADMSG and an empty cache */
	static const char *const bad[] = {
		"1\n1\n1 0\n",          /* unknown version */
		"0\n3\n1 0\n3 10\n",    /* fewer entries than the count */
		"0\n2\n3 0\n1 10\n",    /* epochs not increasing */
		"0\n2\n1 10\n3 5\n",    /* offsets decreasing */
		"0\n1\n-2 0\n",         /* negative epoch */
		"0\n1\n1 -5\n",         /* negative offset */
		"0\n-1\n",              /* negative count */
		"garbage",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		write_text(p, bad[i]);
		assert_int_equal(hw_epoch_assign(&r, 1, 0), 1); /* non-empty before */
		assert_int_equal(hw_epoch_read_checkpoint(&r, p), -EBADMSG);
		assert_int_equal(r.n, 0);
	}
	/* a write into a missing directory fails with -errno, leaves no tmp */
	assert_true(hw_epoch_write_checkpoint(&c, "/nonexistent-dir-hw/x") < 0);
	unlink(p);
	hw_epoch_free(&c);
	hw_epoch_free(&r);
	hw_epoch_free(&e);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hwepochtest-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_assign),
		cmocka_unit_test(test_truncate_from_end),
		cmocka_unit_test(test_truncate_from_start),
		cmocka_unit_test(test_end_offset_for),
		cmocka_unit_test(test_checkpoint),
	};
	int rc = cmocka_run_group_tests_name("log_epoch", tests, NULL, NULL);
	rmdir(tmpdir);
	return rc;
}
