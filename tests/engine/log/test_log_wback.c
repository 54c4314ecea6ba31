/* test_log_wback.c — the writeback window (hiwater.log.writeback.window.bytes,
 * engine/log/hw_log_io.c "Writeback window"): buffered appends start the
 * writeback of every window they fill and drop the window three behind from
 * the page cache; every byte still reads back (from the disk when dropped),
 * across a truncation and a reopen; direct_io and window 0 issue none.
 * argv[1] "inline" or "io_uring" picks how the writes themselves go. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "log_model.h"

static int g_inline;
#define WIN (64u << 10)

static void cfg(hw_log_config *c, uint32_t window)
{
	hw_log_config_default(c);
	c->inline_write_max_bytes = g_inline ? 64u << 10 : 0;
	c->segment_bytes = 64 << 20; /* one segment: the window follows the active one */
	c->chunk_bytes = 16u << 10;
	c->tail_buffer_bytes = 32u << 10;
	c->ring_entries = 16;
	c->writeback_window_bytes = window;
}

/* Append batches of ~4 KiB until the log holds at least `bytes` more. */
static void fill_bytes(hw_log *log, tmodel *m, size_t bytes)
{
	size_t done = 0;
	while (done < bytes) {
		size_t sz;
		const uint8_t *b = tm_add(m, 1, 4, 1000, 1000, &sz);
		assert_int_equal(hw_log_append(log, b, sz), 0);
		done += sz;
		assert_true(hw_log_poll(log) >= 0);
	}
	assert_int_equal(hw_log_flush(log), 0); /* drains the window ops too */
}

/* Pages of the segment file resident in the page cache, of the first
 * `bytes` (mincore on a read-only mapping). */
static size_t resident_pages(const char *dir, size_t bytes)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/00000000000000000000.log", dir);
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	void *a = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(a != MAP_FAILED);
	size_t n = bytes / 4096, r = 0;
	unsigned char *v = malloc(n);
	assert_int_equal(mincore(a, bytes, v), 0);
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	munmap(a, bytes);
	close(fd);
	return r;
}

static void test_window_drops_behind_writer(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "wback");
	hw_log_config c;
	cfg(&c, WIN);
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	fill_bytes(log, &m, 20 * WIN);
	uint64_t kicked = hw_log_counter_get(log, HW_LOG_CTR_WRITEBACK_WINDOWS);
	uint64_t dropped = hw_log_counter_get(log, HW_LOG_CTR_PAGECACHE_DROPPED_BYTES);
	/* every full window kicked; all but the last three dropped */
	assert_true(kicked >= 20);
	assert_int_equal(dropped, (kicked - 3) * WIN);
	/* the first windows left the page cache: written back, clean, dropped
	 * (tmpfs has no backing store to write to, so it keeps them) */
	struct statfs fs;
	assert_int_equal(statfs(dir, &fs), 0);
	size_t res = resident_pages(dir, 8 * WIN);
	printf("# resident pages of the first 8 windows after the drops: %zu of %u\n", res, 8 * WIN / 4096);
	if (fs.f_type != 0x01021994 /* TMPFS_MAGIC */)
		assert_true(res < 8 * WIN / 4096 / 4);
	/* every offset reads back, dropped ones from the disk */
	tm_check_all(log, &m, 1 << 20);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_READS_DISK) > 0);
	/* a truncation below the dropped windows, then appends: the window
	 * restarts at the new end and the bytes still match */
	int64_t cut = tm_leo(&m) / 4;
	assert_int_equal(hw_log_truncate_to(log, cut), 0);
	tm_truncate(&m, cut);
	fill_bytes(log, &m, 6 * WIN);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_WRITEBACK_WINDOWS) > kicked);
	tm_check_all(log, &m, 1 << 20);
	hw_log_close(log);
	/* reopen: the bytes found are not dropped again; appends go on */
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tm_check_all(log, &m, 1 << 20);
	fill_bytes(log, &m, 5 * WIN);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_WRITEBACK_WINDOWS) >= 4);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_PAGECACHE_DROPPED_BYTES) <= 2 * WIN);
	tm_check_all(log, &m, 1 << 20);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_IO_ERRORS), 0);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

static void test_window_off_and_direct(void **st)
{
	(void)st;
	for (int direct = 0; direct < 2; direct++) {
		char dir[128];
		tu_tmpdir(dir, sizeof(dir), "wback-off");
		hw_log_config c;
		cfg(&c, direct ? WIN : 0);
		c.direct_io = direct;
		hw_log *log;
		assert_int_equal(hw_log_open(dir, &c, &log), 0);
		tmodel m = { 0 };
		fill_bytes(log, &m, 8 * WIN);
		/* window 0: the kernel alone decides; direct_io: no page cache */
		assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_WRITEBACK_WINDOWS), 0);
		assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_PAGECACHE_DROPPED_BYTES), 0);
		tm_check_all(log, &m, 1 << 20);
		hw_log_close(log);
		tm_free(&m);
		tu_rmrf(dir);
	}
}

static void test_window_config_checked(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "wback-cfg");
	hw_log_config c;
	cfg(&c, 4096); /* below 64 KiB */
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), -EINVAL);
	tu_rmrf(dir);
}

int main(int argc, char **argv)
{
	g_inline = argc > 1 && !strcmp(argv[1], "inline");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_drops_behind_writer),
		cmocka_unit_test(test_window_off_and_direct),
		cmocka_unit_test(test_window_config_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
