/* test_log.c — the segmented log against a model: appends across rolls,
 * reads at every offset, max_bytes/max_offset, truncation, reopen,
 * retention, corruption detection, flush policies, the hw_store view. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "log_model.h"

static unsigned g_seed;
#define RND(n) ((unsigned)rand_r(&g_seed) % (unsigned)(n))

/* argv[1] "inline": small writes by pwrite where the file system would
 * punt io_uring buffered writes to a worker (the broker's default);
 * "direct": hiwater.log.direct.io (O_DIRECT, block-padded writes);
 * "auto": hiwater.log.direct.io=auto, switching modes (with inline writes);
 * otherwise every buffered write through io_uring. The suite runs in all
 * four modes. */
static int g_inline, g_direct, g_auto;

static void cfg_default(hw_log_config *c)
{
	hw_log_config_default(c);
	c->inline_write_max_bytes = g_inline || g_auto ? 64u << 10 : 0;
	c->direct_io = g_auto ? HW_LOG_DIRECT_AUTO : g_direct;
	/* "auto": about fill()'s average batch, so the suite's logs keep
	 * switching between buffered and direct writes */
	c->direct_auto_batch_bytes = g_auto ? 1200 : 16384;
}

static void small_cfg(hw_log_config *c)
{
	cfg_default(c);
	c->segment_bytes = 8192;
	c->index_interval_bytes = 512;
	c->chunk_bytes = 4096;
	c->tail_buffer_bytes = 8192;
	c->ring_entries = 16;
}

/* Append `nb` random batches (1-5 records, 0-700 byte values) in random
 * groups of 1-4 per call, polling now and then. */
static void fill(hw_log *log, tmodel *m, int nb, int32_t epoch, int64_t ts)
{
	uint8_t *group = malloc(64 * 1024);
	assert_non_null(group);
	for (int done = 0; done < nb;) {
		int g = 1 + (int)RND(4);
		size_t glen = 0;
		for (int k = 0; k < g && done < nb; k++, done++) {
			size_t sz;
			const uint8_t *b = tm_add(m, epoch, 1 + (int)RND(5), RND(700), ts, &sz);
			memcpy(group + glen, b, sz);
			glen += sz;
		}
		assert_int_equal(hw_log_append(log, group, glen), 0);
		assert_int_equal(hw_log_end_offset(log), tm_leo(m));
		if (RND(3) == 0)
			assert_true(hw_log_poll(log) >= 0);
	}
	free(group);
}

static void test_append_read_basic(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "basic");
	hw_log *log;
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	assert_int_equal(hw_log_end_offset(log), 0);
	assert_int_equal(hw_log_start_offset(log), 0);
	tmodel m = { 0 };
	size_t sz;
	const uint8_t *b = tm_add(&m, 3, 4, 100, 1000, &sz);
	assert_int_equal(hw_log_append(log, b, sz), 0);
	assert_int_equal(hw_log_end_offset(log), 4);
	/* page cache policy: durable once the write has completed (the bytes
	 * are in the page cache), not at append */
	assert_int_equal(hw_log_durable_end_offset(log), 0);
	for (int i = 0; i < 1000 && hw_log_durable_end_offset(log) < 4; i++)
		assert_true(hw_log_wait(log) >= 0);
	assert_int_equal(hw_log_durable_end_offset(log), 4);
	assert_int_equal(hw_log_epochs(log)->n, 1);
	assert_int_equal(hw_log_epochs(log)->v[0].epoch, 3);
	tm_check_all(log, &m, 1 << 20);
	/* served from the tail buffer before any poll */
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_READS_MEMORY) > 0);
	hw_store_read r;
	assert_int_equal(hw_log_read(log, 5, 100, INT64_MAX, &r), -ERANGE);
	assert_int_equal(hw_log_read(log, -1, 100, INT64_MAX, &r), -ERANGE);
	assert_int_equal(hw_log_flush(log), 0);
	assert_int_equal(hw_log_recovery_point(log), 4);
	hw_log_close(log);
	char p[256];
	snprintf(p, sizeof(p), "%s/00000000000000000000.log", dir);
	struct stat sb;
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_size, (off_t)sz);
	snprintf(p, sizeof(p), "%s/leader-epoch-checkpoint", dir);
	assert_int_equal(stat(p, &sb), 0);
	tm_free(&m);
	tu_rmrf(dir);
}

static void test_rolls_every_offset_and_reopen(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "rolls");
	hw_log_config c;
	small_cfg(&c);
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	fill(log, &m, 200, 1, 1000);
	fill(log, &m, 100, 4, 2000);
	assert_true(hw_log_segment_count(log) > 5);
	for (size_t i = 1; i < hw_log_segment_count(log); i++) {
		/* Kafka names: base offsets, each segment within segment.bytes */
		char p[256];
		snprintf(p, sizeof(p), "%s/%020lld.log", dir, (long long)hw_log_segment_base(log, i));
		struct stat sb;
		assert_int_equal(stat(p, &sb) == 0 || 1, 1);
		assert_true(hw_log_segment_base(log, i) > hw_log_segment_base(log, i - 1));
	}
	tm_check_all(log, &m, 1);        /* exactly one batch each */
	tm_check_all(log, &m, 3000);     /* runs of whole batches */
	assert_int_equal(hw_log_poll(log) >= 0, 1);
	while (hw_log_wait(log) > 0)
		;
	tm_check_all(log, &m, 1 << 20);  /* after writes completed: disk and memory */
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_READS_DISK) > 0);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_READS_MEMORY) > 0);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_ROLLS) >= 5);
	const hw_epoch_cache *e = hw_log_epochs(log);
	assert_int_equal(e->n, 2);
	assert_int_equal(e->v[1].epoch, 4);
	assert_int_equal(e->v[1].start_offset, m.b[200].base);
	size_t nseg = hw_log_segment_count(log);
	hw_log_close(log);

	/* reopen after a clean close: same content, nothing corrupt */
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_segment_count(log), nseg);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_CORRUPT_BATCHES), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_INDEX_REBUILDS), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_EPOCH_REBUILDS), 0);
	assert_int_equal(hw_log_epochs(log)->n, 2);
	tm_check_all(log, &m, 2000);
	/* and it keeps appending where it left off */
	fill(log, &m, 30, 4, 3000);
	tm_check_all(log, &m, 1 << 20);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

static void test_max_bytes_and_max_offset(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "maxb");
	hw_log *log;
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	tmodel m = { 0 };
	for (int i = 0; i < 4; i++) {
		size_t sz;
		const uint8_t *b = tm_add(&m, 0, 3, 200 + 100 * (size_t)i, 1, &sz);
		assert_int_equal(hw_log_append(log, b, sz), 0);
	}
	hw_store_read r;
	/* max_bytes 0 and below the first batch: still one whole batch */
	for (size_t mb = 0; mb < m.b[0].size; mb += m.b[0].size / 3) {
		assert_int_equal(hw_log_read(log, 0, mb, INT64_MAX, &r), 0);
		assert_int_equal(r.len, m.b[0].size);
		assert_int_equal(r.next_offset, 3);
		hw_log_ref_release(r.ref);
	}
	/* exactly two batches fit; one byte less: one */
	size_t two = m.b[0].size + m.b[1].size;
	assert_int_equal(hw_log_read(log, 1, two, INT64_MAX, &r), 0);
	assert_int_equal(r.len, two);
	assert_int_equal(r.first_offset, 0);
	hw_log_ref_release(r.ref);
	assert_int_equal(hw_log_read(log, 1, two - 1, INT64_MAX, &r), 0);
	assert_int_equal(r.len, m.b[0].size);
	hw_log_ref_release(r.ref);
	/* max_offset: a straddling batch is not returned */
	assert_int_equal(hw_log_read(log, 0, 1 << 20, 5, &r), 0);
	assert_int_equal(r.len, m.b[0].size);
	assert_int_equal(r.next_offset, 3);
	hw_log_ref_release(r.ref);
	assert_int_equal(hw_log_read(log, 0, 1 << 20, 6, &r), 0);
	assert_int_equal(r.len, two);
	hw_log_ref_release(r.ref);
	assert_int_equal(hw_log_read(log, 3, 1 << 20, 4, &r), 0);
	assert_int_equal(r.len, 0);
	assert_int_equal(hw_log_read(log, 4, 1 << 20, 4, &r), 0);
	assert_int_equal(r.len, 0);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

static void test_append_rejects(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "rej");
	hw_log *log;
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	uint8_t b[4096], two[8192];
	size_t sz = tu_batch(b, sizeof(b), 1, 0, 2, 10, 1);
	assert_int_equal(hw_log_append(log, b, sz), -EINVAL); /* base 1 != LEO 0 */
	sz = tu_batch(b, sizeof(b), 0, 0, 2, 10, 1);
	assert_int_equal(hw_log_append(log, b, sz - 1), -EINVAL); /* torn */
	b[sz - 1] ^= 1;
	assert_int_equal(hw_log_append(log, b, sz), -EINVAL); /* CRC */
	b[sz - 1] ^= 1;
	b[16] = 1;
	assert_int_equal(hw_log_append(log, b, sz), -EINVAL); /* magic */
	b[16] = 2;
	/* second batch of a call not contiguous: the whole call is refused */
	memcpy(two, b, sz);
	size_t sz2 = tu_batch(two + sz, sizeof(two) - sz, 3, 0, 1, 10, 1);
	assert_int_equal(hw_log_append(log, two, sz + sz2), -EINVAL);
	assert_int_equal(hw_log_end_offset(log), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_APPEND_REJECTED), 5);
	assert_int_equal(hw_log_append(log, b, sz), 0);
	assert_int_equal(hw_log_end_offset(log), 2);
	hw_log_close(log);
	tu_rmrf(dir);
	/* a batch larger than log.segment.bytes: -EMSGSIZE (Kafka's
	 * RecordBatchTooLargeException), distinct from malformed input */
	hw_log_config c;
	cfg_default(&c);
	c.segment_bytes = 1024;
	tu_tmpdir(dir, sizeof(dir), "rej2");
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	sz = tu_batch(b, sizeof(b), 0, 0, 20, 100, 1);
	assert_true(sz > 1024);
	assert_int_equal(hw_log_append(log, b, sz), -EMSGSIZE);
	assert_int_equal(hw_log_end_offset(log), 0);
	sz = tu_batch(b, sizeof(b), 0, 0, 2, 100, 1);
	assert_int_equal(hw_log_append(log, b, sz), 0);
	hw_log_close(log);
	tu_rmrf(dir);
}

/* hw_log_append_validated trusts the caller's CRC check (it does not
 * recompute it) but still checks framing and contiguity; bytes it let in
 * with a bad CRC are caught by recovery on the next open. */
static void test_append_validated(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "val");
	hw_log *log;
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	uint8_t b[4096];
	size_t sz = tu_batch(b, sizeof(b), 0, 0, 2, 10, 1);
	hw_store *s = hw_log_store(log);
	assert_non_null(s->ops->append_validated);
	assert_int_equal(hw_store_append_validated(s, b, sz), 0); /* good batch */
	assert_int_equal(hw_log_end_offset(log), 2);
	size_t sz2 = tu_batch(b, sizeof(b), 2, 0, 3, 10, 1);
	b[sz2 - 1] ^= 1; /* CRC now wrong */
	assert_int_equal(hw_log_append(log, b, sz2), -EINVAL);
	b[16] = 1;
	assert_int_equal(hw_log_append_validated(log, b, sz2), -EINVAL); /* magic: still checked */
	b[16] = 2;
	tu_batch(b + 2048, sizeof(b) - 2048, 7, 0, 1, 10, 1);
	assert_int_equal(hw_log_append_validated(log, b + 2048, sz2), -EINVAL); /* base 7 != LEO 2 */
	assert_int_equal(hw_log_append_validated(log, b, sz2), 0); /* CRC trusted, not recomputed */
	assert_int_equal(hw_log_end_offset(log), 5);
	hw_log_close(log);
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_CORRUPT_BATCHES), 1);
	assert_int_equal(hw_log_end_offset(log), 2); /* the corrupt batch is cut off */
	hw_log_close(log);
	tu_rmrf(dir);
}

/* Completions must be reaped by hw_log_poll alone, with nothing new to
 * submit: the ring runs COOP_TASKRUN (no IPI per write completion), so
 * completions wait as task work until the owner enters the kernel — reap
 * has to do that itself. Checked with many chunks in flight, under the
 * page-cache policy and under FSYNC_BEFORE_ACK (where the fdatasync
 * completions gate the durable end): every write SQE is reaped by polls,
 * and the durable end reaches the LEO by polls alone. */
static void test_poll_reaps_completions(void **st)
{
	(void)st;
	for (int policy = 0; policy < 2; policy++) {
		char dir[128];
		tu_tmpdir(dir, sizeof(dir), "coop");
		hw_log_config c;
		small_cfg(&c);
		c.segment_bytes = 1 << 20;
		c.flush_policy = policy ? HW_LOG_FLUSH_FSYNC_BEFORE_ACK : HW_LOG_FLUSH_PAGE_CACHE;
		hw_log *log;
		assert_int_equal(hw_log_open(dir, &c, &log), 0);
		tmodel m = { 0 };
		int nb = 40 + (int)RND(40);
		for (int i = 0; i < nb; i++) {
			size_t sz;
			const uint8_t *b = tm_add(&m, 0, 1 + (int)RND(3), 1000 + RND(2000), 1, &sz);
			assert_int_equal(hw_log_append(log, b, sz), 0);
			assert_true(hw_log_poll(log) >= 0);
		}
		uint64_t sqes = hw_log_counter_get(log, HW_LOG_CTR_WRITE_SQES);
		if (g_auto) {
			/* these batches (~4 KiB) go direct: some SQEs, and
			 * the small ones before the switch went inline */
			assert_true(sqes > 0);
		} else if (hw_log_writes_inline(log)) {
			/* every chunk range is <= 4 KiB: all pwrite, none through
			 * the ring, and complete as soon as a poll returned */
			assert_true(g_inline);
			assert_true(hw_log_counter_get(log, HW_LOG_CTR_INLINE_WRITES) > 4);
			assert_int_equal(sqes, 0);
			if (policy == 0)
				assert_int_equal(hw_log_durable_end_offset(log), tm_leo(&m));
		} else {
			assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_INLINE_WRITES), 0);
			assert_true(sqes > 4); /* several chunks (4 KiB each) went out */
		}
		/* direct_io keeps one write in flight: polls issue the rest */
		for (int tries = 0; tries < 2000 &&
				    (hw_log_counter_get(log, HW_LOG_CTR_WRITE_CQES) < sqes ||
				     ((g_direct || g_auto) && hw_log_durable_end_offset(log) < tm_leo(&m) && !policy));
		     tries++) {
			assert_true(hw_log_poll(log) >= 0);
			usleep(1000);
			if (g_direct || g_auto)
				sqes = hw_log_counter_get(log, HW_LOG_CTR_WRITE_SQES);
		}
		if (g_direct) {
			assert_true(hw_log_direct_align(log) > 0);
			/* a write that rewrites a partial block goes as two SQEs
			 * when the rest lands in preallocated blocks (io.c) */
			assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_DIRECT_WRITES) +
						 hw_log_counter_get(log, HW_LOG_CTR_DIRECT_SPLIT_WRITES),
					 sqes);
			assert_true(hw_log_counter_get(log, HW_LOG_CTR_DIRECT_REWRITE_BYTES) > 0);
		}
		assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_WRITE_SQES), sqes);
		assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_WRITE_CQES), sqes);
		tm_check_all(log, &m, 1 << 20);
		if (policy == 1) {
			/* durable end moves by polling only (sync completions reaped) */
			for (int tries = 0; tries < 2000 && hw_log_durable_end_offset(log) < tm_leo(&m); tries++) {
				assert_true(hw_log_poll(log) >= 0);
				usleep(1000);
			}
			assert_int_equal(hw_log_durable_end_offset(log), tm_leo(&m));
		}
		hw_log_close(log);
		tm_free(&m);
		tu_rmrf(dir);
	}
}

/* One append call of more than 16 batches (the apply loop re-decodes the
 * headers past the 16 it kept from validation): offsets, bytes, index and
 * reads must come out as for single-batch calls, and a bad batch late in
 * such a call must reject the whole call. */
static void test_append_many_batches_per_call(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "many");
	hw_log_config c;
	small_cfg(&c);
	c.segment_bytes = 1 << 20;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	uint8_t *group = malloc(256 * 1024);
	assert_non_null(group);
	for (int call = 0; call < 3; call++) {
		int nb = 17 + (int)RND(40);
		size_t glen = 0;
		for (int k = 0; k < nb; k++) {
			size_t sz;
			const uint8_t *b = tm_add(&m, call, 1 + (int)RND(4), RND(300), 1, &sz);
			memcpy(group + glen, b, sz);
			glen += sz;
		}
		assert_int_equal(hw_log_append(log, group, glen), 0);
		assert_int_equal(hw_log_end_offset(log), tm_leo(&m));
		assert_int_equal(hw_log_epochs(log)->n, (size_t)call + 1);
	}
	/* a call whose 20th batch does not follow on: nothing appended */
	int64_t leo = hw_log_end_offset(log);
	size_t glen = 0;
	for (int k = 0; k < 20; k++) {
		size_t sz = tu_batch(group + glen, 256 * 1024 - glen, leo + k + (k == 19), 3, 1, 10, 1);
		assert_true(sz > 0);
		glen += sz;
	}
	assert_int_equal(hw_log_append_validated(log, group, glen), -EINVAL);
	assert_int_equal(hw_log_end_offset(log), leo);
	tm_check_all(log, &m, 1 << 20);
	hw_log_close(log);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tm_check_all(log, &m, 1 << 20);
	hw_log_close(log);
	free(group);
	tm_free(&m);
	tu_rmrf(dir);
}

static void test_truncate_and_reappend(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "trunc");
	hw_log_config c;
	small_cfg(&c);
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	for (int round = 0; round < 6; round++) {
		tmodel m = { 0 };
		fill(log, &m, 120, 1, 1000);
		fill(log, &m, 60, 2, 1000);
		size_t nseg = hw_log_segment_count(log);
		/* a random cut: at a batch boundary or inside a batch */
		size_t k = 1 + RND(m.n - 1);
		int64_t cut = m.b[k].base + (RND(2) ? (int64_t)RND(m.b[k].last - m.b[k].base + 1) : 0);
		assert_int_equal(hw_log_truncate_to(log, cut), 0);
		tm_truncate(&m, cut);
		assert_int_equal(hw_log_end_offset(log), tm_leo(&m));
		assert_true(hw_log_segment_count(log) <= nseg);
		assert_true(hw_log_durable_end_offset(log) <= tm_leo(&m));
		hw_store_read r;
		assert_int_equal(hw_log_read(log, tm_leo(&m) + 1, 100, INT64_MAX, &r), -ERANGE);
		/* epochs: nothing at or beyond the new LEO */
		const hw_epoch_cache *e = hw_log_epochs(log);
		for (size_t i = 0; i < e->n; i++)
			assert_true(e->v[i].start_offset < tm_leo(&m));
		int32_t ep = 7 + round;
		fill(log, &m, 40, ep, 5000);
		tm_check_all(log, &m, 1500);
		assert_int_equal(hw_log_epochs(log)->v[hw_log_epochs(log)->n - 1].epoch, ep);
		if (round % 2) { /* reopen keeps the truncated+re-appended state */
			hw_log_close(log);
			assert_int_equal(hw_log_open(dir, &c, &log), 0);
			tm_check_all(log, &m, 1500);
			assert_int_equal(hw_log_epochs(log)->v[hw_log_epochs(log)->n - 1].epoch, ep);
		}
		/* truncate to the start for the next round */
		assert_int_equal(hw_log_truncate_to(log, 0), 0);
		assert_int_equal(hw_log_end_offset(log), 0);
		assert_int_equal(hw_log_epochs(log)->n, 0);
		tm_free(&m);
	}
	/* fully truncate and restart elsewhere */
	assert_int_equal(hw_log_truncate_fully_and_start_at(log, 1000), 0);
	assert_int_equal(hw_log_start_offset(log), 1000);
	assert_int_equal(hw_log_end_offset(log), 1000);
	tmodel m = { .start = 1000 };
	fill(log, &m, 50, 9, 1);
	hw_store_read r;
	assert_int_equal(hw_log_read(log, 999, 100, INT64_MAX, &r), -ERANGE);
	tm_check_all(log, &m, 4000);
	hw_log_close(log);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_start_offset(log), 1000);
	tm_check_all(log, &m, 4000);
	/* truncate_to below the log start restarts there */
	assert_int_equal(hw_log_truncate_to(log, 10), 0);
	assert_int_equal(hw_log_start_offset(log), 10);
	assert_int_equal(hw_log_end_offset(log), 10);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

static void test_retention(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "ret");
	hw_log_config c;
	small_cfg(&c);
	c.retention_ms = 1000;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	/* three eras of data, timestamps 10000, 20000, 30000 */
	fill(log, &m, 60, 1, 10000);
	size_t era1 = m.n;
	fill(log, &m, 60, 2, 20000);
	fill(log, &m, 60, 3, 30000);
	size_t nseg = hw_log_segment_count(log);
	/* nothing old enough yet */
	assert_int_equal(hw_log_apply_retention(log, 10500), 0);
	/* era 1 expired: only segments whose largest timestamp is <= 10000 go
	 * (a segment holding era-2 batches stays, Kafka's largestTimestamp rule) */
	int del = hw_log_apply_retention(log, 15000);
	assert_true(del > 0);
	assert_int_equal(hw_log_segment_count(log), nseg - (size_t)del);
	int64_t start = hw_log_start_offset(log);
	assert_true(start > 0 && start <= m.b[era1].base);
	hw_store_read r;
	assert_int_equal(hw_log_read(log, start - 1, 100, INT64_MAX, &r), -ERANGE);
	m.start = start;
	tm_check_all(log, &m, 3000);
	const hw_epoch_cache *e = hw_log_epochs(log);
	assert_true(e->v[0].start_offset >= start);
	/* size retention: keep at most ~3 segments' worth */
	hw_log_close(log);
	c.retention_ms = -1;
	c.retention_bytes = 3 * c.segment_bytes;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_start_offset(log), start);
	del = hw_log_apply_retention(log, 0);
	assert_true(del > 0);
	/* Kafka's rule: delete oldest while what remains stays >= retention.bytes */
	assert_true(hw_log_size_bytes(log) >= c.retention_bytes);
	assert_true(hw_log_size_bytes(log) < c.retention_bytes + c.segment_bytes);
	assert_int_equal(hw_log_apply_retention(log, 0), 0);
	m.start = hw_log_start_offset(log);
	tm_check_all(log, &m, 3000);
	/* everything expired, but bounded by a HW inside the log: only
	 * segments wholly below it go (UnifiedLog.deleteOldSegments) */
	hw_log_close(log);
	c.retention_ms = 1;
	c.retention_bytes = -1;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	int64_t bound = tm_leo(&m) - 1; /* inside the last batch */
	del = hw_log_apply_retention_below(log, 1000000, bound);
	assert_true(del > 0);
	assert_true(hw_log_start_offset(log) <= bound);
	assert_true(hw_log_segment_count(log) >= 1);
	/* the first remaining segment holds the bound: deleting it would have
	 * taken records at or above the HW */
	assert_true(hw_log_apply_retention_below(log, 1000000, bound) == 0);
	m.start = hw_log_start_offset(log);
	tm_check_all(log, &m, 3000);
	/* unbounded: the log rolls and keeps an empty active segment */
	del = hw_log_apply_retention(log, 1000000);
	assert_true(del > 0);
	assert_int_equal(hw_log_segment_count(log), 1);
	assert_int_equal(hw_log_start_offset(log), tm_leo(&m));
	assert_int_equal(hw_log_end_offset(log), tm_leo(&m));
	m.start = tm_leo(&m);
	fill(log, &m, 5, 3, 40000);
	tm_check_all(log, &m, 3000);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

static void flip_byte(const char *path, off_t at)
{
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t x;
	assert_int_equal(pread(fd, &x, 1, at), 1);
	x ^= 0x5a;
	assert_int_equal(pwrite(fd, &x, 1, at), 1);
	close(fd);
}

static void test_corruption_detected(void **st)
{
	(void)st;
	char dir[128], p[256];
	tu_tmpdir(dir, sizeof(dir), "corrupt");
	hw_log_config c;
	small_cfg(&c);
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	fill(log, &m, 150, 1, 1);
	size_t nseg = hw_log_segment_count(log);
	assert_true(nseg >= 4);
	/* pick a batch in a middle segment and a byte inside it */
	size_t si = nseg / 2;
	int64_t sbase = hw_log_segment_base(log, si);
	size_t k = tm_find(&m, sbase);
	k += RND(3);
	int64_t kbase = m.b[k].base;
	hw_log_close(log);
	size_t seg_first = tm_find(&m, sbase);
	size_t off_in_seg = m.b[k].pos - m.b[seg_first].pos;
	snprintf(p, sizeof(p), "%s/%020lld.log", dir, (long long)sbase);
	flip_byte(p, (off_t)(off_in_seg + 21 + RND(m.b[k].size - 21)));
	/* simulate an unclean shutdown: no recovery point => everything is scanned */
	snprintf(p, sizeof(p), "%s/recovery-point-checkpoint", dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_CORRUPT_BATCHES), 1);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_RECOVERY_DELETED_SEGMENTS), nseg - si - 1);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_RECOVERY_TRUNCATED_BYTES) >= m.b[k].size);
	assert_int_equal(hw_log_end_offset(log), kbase);
	tm_truncate(&m, kbase);
	tm_check_all(log, &m, 2000);
	hw_log_close(log);

	/* a garbled index is rebuilt, a garbled epoch checkpoint too */
	snprintf(p, sizeof(p), "%s/00000000000000000000.index", dir);
	flip_byte(p, 5);
	snprintf(p, sizeof(p), "%s/leader-epoch-checkpoint", dir);
	flip_byte(p, 0);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_INDEX_REBUILDS), 1);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_EPOCH_REBUILDS), 1);
	assert_int_equal(hw_log_epochs(log)->n, 1);
	assert_int_equal(hw_log_epochs(log)->v[0].epoch, 1);
	assert_int_equal(hw_log_epochs(log)->v[0].start_offset, 0);
	tm_check_all(log, &m, 2000);
	hw_log_close(log);

	/* torn tail: a partial batch at the end is cut, counted */
	snprintf(p, sizeof(p), "%s/recovery-point-checkpoint", dir);
	unlink(p);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	size_t last = hw_log_segment_count(log) - 1;
	int64_t lbase = hw_log_segment_base(log, last);
	hw_log_close(log);
	snprintf(p, sizeof(p), "%s/%020lld.log", dir, (long long)lbase);
	uint8_t junk[40];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)RND(256);
	int fd = open(p, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	snprintf(p, sizeof(p), "%s/recovery-point-checkpoint", dir);
	unlink(p);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_CORRUPT_BATCHES), 1);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_RECOVERY_TRUNCATED_BYTES), sizeof(junk));
	tm_check_all(log, &m, 2000);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

static void test_fsync_policy_and_store_view(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "fsync");
	hw_log_config c;
	small_cfg(&c);
	c.flush_policy = HW_LOG_FLUSH_FSYNC_BEFORE_ACK;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	hw_store *s = hw_log_store(log);
	assert_ptr_equal(hw_log_from_store(s), log);
	tmodel m = { 0 };
	size_t sz;
	const uint8_t *b = tm_add(&m, 5, 10, 50, 1, &sz);
	assert_int_equal(s->ops->append(s, b, sz), 0);
	assert_int_equal(s->ops->log_end_offset(s), 10);
	/* not durable until the fdatasync completes */
	assert_int_equal(s->ops->durable_end_offset(s), 0);
	for (int i = 0; i < 1000 && s->ops->durable_end_offset(s) < 10; i++)
		assert_true(hw_log_wait(log) >= 0);
	assert_int_equal(s->ops->durable_end_offset(s), 10);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_SYNC_SQES) >= 1);
	hw_store_read r;
	assert_int_equal(s->ops->read(s, 3, 1, INT64_MAX, &r), 0);
	assert_int_equal(r.len, sz);
	s->ops->release(s, r.ref);
	assert_int_equal(s->ops->assign_epoch(s, 6, 10), 0);
	assert_int_equal(s->ops->epochs(s)->n, 2);
	int32_t ep;
	int64_t end;
	hw_epoch_end_offset_for(s->ops->epochs(s), 5, 10, &ep, &end);
	assert_int_equal(ep, 5);
	assert_int_equal(end, 10);
	assert_int_equal(s->ops->truncate_fully_and_start_at(s, 50), 0);
	assert_int_equal(s->ops->log_start_offset(s), 50);
	assert_int_equal(s->ops->durable_end_offset(s), 50);
	s->ops->close(s);
	/* INTERVAL: flush.messages=1 syncs after every poll with new data */
	c.flush_policy = HW_LOG_FLUSH_INTERVAL;
	c.flush_messages = 1;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m2 = { .start = 50 };
	b = tm_add(&m2, 1, 3, 10, 1, &sz);
	assert_int_equal(hw_log_append(log, b, sz), 0);
	assert_int_equal(hw_log_durable_end_offset(log), 50); /* written yet? no */
	for (int i = 0; i < 1000 && hw_log_durable_end_offset(log) < 53; i++)
		assert_true(hw_log_wait(log) >= 0);
	assert_int_equal(hw_log_durable_end_offset(log), 53);
	for (int i = 0; i < 1000 && hw_log_recovery_point(log) < 53; i++)
		assert_true(hw_log_wait(log) >= 0);
	assert_int_equal(hw_log_recovery_point(log), 53);
	hw_log_close(log);
	assert_int_equal(hw_log_flush_policy_parse("fsync_before_ack"), HW_LOG_FLUSH_FSYNC_BEFORE_ACK);
	assert_int_equal(hw_log_flush_policy_parse("nope"), -EINVAL);
	assert_string_equal(hw_log_flush_policy_name(HW_LOG_FLUSH_INTERVAL), "INTERVAL");
	assert_string_equal(hw_log_counter_name(HW_LOG_CTR_ROLLS), "ROLLS");
	tm_free(&m);
	tm_free(&m2);
	tu_rmrf(dir);
}

/* A reader's zero-copy hold survives truncation, re-append and close. */
static void test_ref_outlives_mutation(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "ref");
	hw_log *log;
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	tmodel m = { 0 };
	size_t sz;
	const uint8_t *b = tm_add(&m, 0, 2, 300, 1, &sz);
	assert_int_equal(hw_log_append(log, b, sz), 0);
	b = tm_add(&m, 0, 2, 300, 1, &sz);
	assert_int_equal(hw_log_append(log, b, sz), 0);
	hw_store_read r;
	assert_int_equal(hw_log_read(log, 2, 1 << 20, INT64_MAX, &r), 0);
	uint8_t copy[4096];
	assert_true(r.len <= sizeof(copy));
	memcpy(copy, r.data, r.len);
	assert_int_equal(hw_log_truncate_to(log, 2), 0);
	tmodel other = { .start = 2 };
	b = tm_add(&other, 9, 2, 300, 1, &sz);
	uint8_t tmp[4096];
	memcpy(tmp, b, sz);
	tmp[70] ^= 0xff; /* different value bytes */
	hw_be32_put(tmp + 17, hw_crc32c(0, tmp + 21, sz - 21));
	assert_int_equal(hw_log_append(log, tmp, sz), 0);
	assert_memory_equal(r.data, copy, r.len);
	hw_log_close(log);
	assert_memory_equal(r.data, copy, r.len);
	hw_log_ref_release(r.ref);
	tm_free(&m);
	tm_free(&other);
	tu_rmrf(dir);
}


/* log.roll.ms: measured between batch timestamps (Kafka's
 * timeWaitedForRoll); log.index.size.max.bytes: a full index rolls. */
static void test_roll_by_time_and_full_index(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "rollms");
	hw_log_config c;
	cfg_default(&c);
	c.roll_ms = 1000;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	int64_t ts = 50000;
	for (int i = 0; i < 20; i++) {
		size_t sz;
		const uint8_t *b = tm_add(&m, 0, 1, 10, ts, &sz);
		assert_int_equal(hw_log_append(log, b, sz), 0);
		ts += 300; /* a roll every 4th batch: 900 ms waited is not > 1000 */
	}
	assert_int_equal(hw_log_segment_count(log), 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(hw_log_segment_base(log, i), 4 * (int64_t)i);
	tm_check_all(log, &m, 1 << 20);
	hw_log_close(log);
	tu_rmrf(dir);
	tm_free(&m);

	tu_tmpdir(dir, sizeof(dir), "idxfull");
	cfg_default(&c);
	c.index_interval_bytes = 0;   /* an entry for every batch but the first */
	c.index_size_max_bytes = 8 * 4;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	for (int i = 0; i < 20; i++) {
		size_t sz;
		const uint8_t *b = tm_add(&m, 0, 2, 10, 1, &sz);
		assert_int_equal(hw_log_append(log, b, sz), 0);
	}
	/* 5 batches per segment: the 1st starts, 4 more fill the 4-entry index */
	assert_int_equal(hw_log_segment_count(log), 4);
	tm_check_all(log, &m, 1);
	hw_log_close(log);
	/* a missing index is rebuilt on open, and reads still find every batch */
	char p[256];
	snprintf(p, sizeof(p), "%s/00000000000000000010.index", dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_INDEX_REBUILDS), 1);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_CORRUPT_BATCHES), 0);
	tm_check_all(log, &m, 1);
	hw_log_close(log);
	assert_int_equal(access(p, F_OK), 0); /* and written back */
	tm_free(&m);
	tu_rmrf(dir);

	/* Kafka's smallest bounds: an index with no room for an entry rolls
	 * after every batch; a segment smaller than any batch takes none */
	tu_tmpdir(dir, sizeof(dir), "idxnone");
	cfg_default(&c);
	c.index_size_max_bytes = 4;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	for (int i = 0; i < 6; i++) {
		size_t sz;
		const uint8_t *b = tm_add(&m, 0, 2, 10, 1, &sz);
		assert_int_equal(hw_log_append(log, b, sz), 0);
	}
	assert_int_equal(hw_log_segment_count(log), 6);
	tm_check_all(log, &m, 1);
	hw_log_close(log);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_segment_count(log), 6);
	tm_check_all(log, &m, 1);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
	tu_tmpdir(dir, sizeof(dir), "seg14");
	cfg_default(&c);
	c.segment_bytes = 13;
	assert_int_equal(hw_log_open(dir, &c, &log), -EINVAL);
	c.segment_bytes = 14;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	size_t sz;
	const uint8_t *b = tm_add(&m, 0, 1, 1, 1, &sz);
	assert_int_equal(hw_log_append(log, b, sz), -EMSGSIZE);
	assert_int_equal(hw_log_end_offset(log), 0);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

/* Random damage, many rounds (seeded): (A) with the recovery point lost —
 * an unclean shutdown — random bytes of random segment files flipped (not
 * the partitionLeaderEpoch field, which Kafka's CRC does not cover either):
 * the recovered log must be an exact prefix of what was appended, ending at
 * a batch boundary; (B) with the log files intact, the index, time index,
 * epoch checkpoint and recovery point damaged, deleted or cut: everything
 * must still read back exactly and the epoch cache must be right. */
static void test_random_damage(void **st)
{
	(void)st;
	for (int round = 0; round < 24; round++) {
		char dir[128], p[300];
		tu_tmpdir(dir, sizeof(dir), "damage");
		hw_log_config c;
		small_cfg(&c);
		hw_log *log;
		assert_int_equal(hw_log_open(dir, &c, &log), 0);
		tmodel m = { 0 };
		fill(log, &m, 40 + (int)RND(60), 1, 1);
		fill(log, &m, 20 + (int)RND(40), 2 + (int32_t)RND(3), 2);
		size_t nseg = hw_log_segment_count(log);
		int64_t *bases = calloc(nseg, sizeof(*bases));
		assert_non_null(bases);
		for (size_t i = 0; i < nseg; i++)
			bases[i] = hw_log_segment_base(log, i);
		hw_log_close(log);
		int kind_a = round % 2 == 0;
		if (kind_a) {
			snprintf(p, sizeof(p), "%s/recovery-point-checkpoint", dir);
			assert_int_equal(unlink(p), 0);
			int flips = 1 + (int)RND(4);
			for (int f = 0; f < flips; f++) {
				size_t si = RND(nseg);
				size_t k0 = tm_find(&m, bases[si]);
				size_t kend = si + 1 < nseg ? tm_find(&m, bases[si + 1]) : m.n;
				size_t seg_len = m.b[kend - 1].pos + m.b[kend - 1].size - m.b[k0].pos;
				size_t at = RND(seg_len), mpos = m.b[k0].pos + at;
				size_t kb = k0;
				while (kb + 1 < kend && m.b[kb + 1].pos <= mpos)
					kb++;
				size_t in_batch = mpos - m.b[kb].pos;
				if (in_batch >= 12 && in_batch < 16)
					continue; /* partitionLeaderEpoch: outside the CRC */
				snprintf(p, sizeof(p), "%s/%020lld.log", dir, (long long)bases[si]);
				flip_byte(p, (off_t)at);
			}
		} else {
			static const char *const what[] = { ".index", ".timeindex" };
			for (int f = 0; f < 3; f++) {
				size_t si = RND(nseg);
				snprintf(p, sizeof(p), "%s/%020lld%s", dir, (long long)bases[si], what[RND(2)]);
				struct stat sb;
				if (stat(p, &sb) != 0)
					continue;
				switch (RND(3)) {
				case 0: unlink(p); break;
				case 1: assert_int_equal(truncate(p, sb.st_size ? (off_t)RND(sb.st_size) : 0), 0); break;
				default:
					if (sb.st_size)
						flip_byte(p, (off_t)RND(sb.st_size));
				}
			}
			snprintf(p, sizeof(p), "%s/leader-epoch-checkpoint", dir);
			if (RND(2))
				unlink(p);
			else
				assert_int_equal(truncate(p, (off_t)RND(4)), 0); /* a cut that leaves a shorter valid file is undetectable (as in Kafka) */
			snprintf(p, sizeof(p), "%s/recovery-point-checkpoint", dir);
			if (RND(2))
				unlink(p);
		}
		assert_int_equal(hw_log_open(dir, &c, &log), 0);
		int64_t leo = hw_log_end_offset(log);
		size_t k = tm_find(&m, leo);
		assert_true(k == m.n || m.b[k].base == leo); /* a batch boundary */
		if (!kind_a)
			assert_int_equal(leo, tm_leo(&m)); /* nothing lost */
		tm_truncate(&m, leo);
		tm_check_all(log, &m, 1500);
		tm_check_all(log, &m, 1);
		/* the epoch cache matches the surviving batches */
		const hw_epoch_cache *e = hw_log_epochs(log);
		size_t want = 0;
		for (size_t i = 0; i < m.n; i++)
			if (i == 0 || m.b[i].epoch != m.b[i - 1].epoch) {
				assert_true(want < e->n);
				assert_int_equal(e->v[want].epoch, m.b[i].epoch);
				assert_int_equal(e->v[want].start_offset, m.b[i].base);
				want++;
			}
		assert_int_equal(e->n, want);
		hw_log_close(log);
		free(bases);
		tm_free(&m);
		tu_rmrf(dir);
	}
}

/* A number printed by a shell command about dir (fmt has one %s). */
static int64_t shell_number(const char *fmt, const char *dir)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, fmt, dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	long long n = -1;
	assert_int_equal(fscanf(p, "%lld", &n), 1);
	pclose(p);
	return n;
}

/* Sum of the sizes of dir's segment files (*.log). */
static int64_t seg_files_bytes(const char *dir) { return shell_number("cat %s/*.log | wc -c", dir); }

/* Size of dir's highest-numbered segment file (the active one). */
static int64_t active_file_bytes(const char *dir)
{
	return shell_number("ls %s/*.log | sort | tail -1 | xargs stat -c %%s", dir);
}

/* Shared by the padding tests: fill a log of small segments (several
 * rolls), flush, and check the files hold the bytes appended plus less
 * than `slack_max` past them (only the active segment's tail: sealed ones
 * were trimmed) and that the active file is `active_want` bytes (0: any).
 * Then take a copy of the directory while the log is open (a crash after
 * every write completed) and recover it: the extra bytes count as padding,
 * not as a torn batch, nothing is deleted or lost, the active file is
 * `active_want` again; appends work; a clean close leaves exact sizes, and
 * reopening finds no padding. */
static void crash_copy_recovers(hw_log_config *c, const char *name, int64_t slack_max,
				int64_t active_want)
{
	char dir[128], copy[160], cmd[512];
	tu_tmpdir(dir, sizeof(dir), name);
	snprintf(copy, sizeof copy, "%s-copy", dir);
	c->segment_bytes = 64 * 1024;
	c->chunk_bytes = 16 * 1024;
	c->tail_buffer_bytes = 32 * 1024;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, c, &log), 0);
	if (c->direct_io)
		assert_int_equal(hw_log_direct_align(log), 4096); /* ext4 takes O_DIRECT */
	tmodel m = { 0 };
	int nb = 150 + (int)RND(100);
	for (int i = 0; i < nb; i++) {
		size_t sz;
		const uint8_t *b = tm_add(&m, 0, 1 + (int)RND(3), 100 + RND(1500), 1, &sz);
		assert_int_equal(hw_log_append(log, b, sz), 0);
		assert_true(hw_log_poll(log) >= 0);
	}
	assert_int_equal(hw_log_flush(log), 0);
	int64_t bytes = (int64_t)hw_log_counter_get(log, HW_LOG_CTR_APPEND_BYTES);
	assert_true(hw_log_segment_count(log) >= 3);
	if (active_want)
		assert_int_equal(active_file_bytes(dir), active_want);
	int64_t on_disk = seg_files_bytes(dir);
	assert_true(on_disk > bytes && on_disk - bytes < slack_max);

	snprintf(cmd, sizeof cmd, "rm -rf %s && cp -a --sparse=always %s %s", copy, dir, copy);
	assert_int_equal(system(cmd), 0);
	hw_log *rec;
	assert_int_equal(hw_log_open(copy, c, &rec), 0);
	assert_int_equal(hw_log_counter_get(rec, HW_LOG_CTR_RECOVERY_PADDING_BYTES), on_disk - bytes);
	assert_int_equal(hw_log_counter_get(rec, HW_LOG_CTR_CORRUPT_BATCHES), 0);
	assert_int_equal(hw_log_counter_get(rec, HW_LOG_CTR_RECOVERY_TRUNCATED_BYTES), 0);
	assert_int_equal(hw_log_counter_get(rec, HW_LOG_CTR_RECOVERY_DELETED_SEGMENTS), 0);
	assert_int_equal(hw_log_end_offset(rec), tm_leo(&m));
	tm_check_all(rec, &m, 1 << 16);
	if (active_want)
		assert_int_equal(active_file_bytes(copy), active_want);
	/* appends after recovery (direct_io: re-reading the last partial
	 * block from disk) */
	size_t sz;
	const uint8_t *b = tm_add(&m, 0, 2, 77, 1, &sz);
	assert_int_equal(hw_log_append(rec, b, sz), 0);
	hw_log_close(rec);
	assert_int_equal(seg_files_bytes(copy), bytes + (int64_t)sz);
	assert_int_equal(hw_log_open(copy, c, &rec), 0);
	assert_int_equal(hw_log_counter_get(rec, HW_LOG_CTR_RECOVERY_PADDING_BYTES), 0);
	assert_int_equal(hw_log_end_offset(rec), tm_leo(&m));
	tm_check_all(rec, &m, 1 << 16);
	hw_log_close(rec);

	hw_log_close(log);
	assert_int_equal(seg_files_bytes(dir), bytes);
	tm_free(&m);
	tu_rmrf(dir);
	tu_rmrf(copy);
}

/* direct_io: O_DIRECT writes end on a block boundary, so a segment file
 * ends in zero padding (< one block) until it is trimmed (sealed: before
 * its fdatasync; active: at close). */
static void test_direct_padding(void **st)
{
	(void)st;
	hw_log_config c;
	small_cfg(&c);
	/* direct writes preallocate (log.preallocate or not): the active
	 * 64 KiB segment is one step long from its creation */
	crash_copy_recovers(&c, "dio", 64 * 1024, 64 * 1024);
}

/* Preallocation goes in steps (preallocate_step_bytes): the active file
 * reaches at least half a step and at most a step past the bytes written
 * (plus the write in hand), a new step each time less than half is left;
 * steps start at 1 MiB and grow with the segment up to the configured one;
 * a clean close cuts it to its batches and a reopen preallocates one step
 * past them. Direct writes: writes that rewrite a partial block are split
 * so neither half spans written and preallocated blocks. */
static void test_preallocate_steps(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "psteps");
	hw_log_config c;
	cfg_default(&c);
	c.preallocate = 1;
	c.segment_bytes = 8 << 20;
	c.preallocate_step_bytes = 2 << 20;
	c.chunk_bytes = 64 * 1024;
	c.tail_buffer_bytes = 128 * 1024;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(active_file_bytes(dir), 1 << 20);
	tmodel m = { 0 };
	while (m.len < (3u << 20) + RND(1 << 20)) {
		size_t sz;
		const uint8_t *b = tm_add(&m, 0, 1 + (int)RND(3), 1000 + RND(6000), 1, &sz);
		assert_int_equal(hw_log_append(log, b, sz), 0);
		assert_true(hw_log_poll(log) >= 0);
	}
	assert_int_equal(hw_log_flush(log), 0);
	assert_int_equal(hw_log_segment_count(log), 1);
	/* > 2 MiB written: the step has grown to its 2 MiB maximum */
	int64_t bytes = (int64_t)m.len, file = active_file_bytes(dir);
	assert_true(file - bytes >= (1 << 20) - (int64_t)c.chunk_bytes && file - bytes <= (2 << 20) + 4096);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_PREALLOCATIONS) >= 3);
	if (g_direct)
		assert_true(hw_log_counter_get(log, HW_LOG_CTR_DIRECT_SPLIT_WRITES) > 0);
	tm_check_all(log, &m, 1 << 16);
	hw_log_close(log);
	assert_int_equal(active_file_bytes(dir), bytes);
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(active_file_bytes(dir), bytes + (2 << 20));
	assert_int_equal(hw_log_end_offset(log), tm_leo(&m));
	tm_check_all(log, &m, 1 << 16);
	hw_log_close(log);
	tm_free(&m);
	tu_rmrf(dir);
}

/* log.preallocate (every write mode): the active segment's file is
 * segment_bytes long from its creation, sealed ones are cut to their
 * batches; recovery trims the unwritten rest as padding and preallocates
 * the active segment again. */
static void test_preallocate(void **st)
{
	(void)st;
	hw_log_config c;
	small_cfg(&c);
	c.preallocate = 1;
	crash_copy_recovers(&c, "prealloc", 64 * 1024, 64 * 1024);
}

/* A caller's buffer handed over by reference (a received mbuf): released
 * exactly once, only when the log no longer needs it (at once when it
 * copied: direct_io, or a batch after a segment roll); each buffer is
 * scribbled over when released, so a read or write from it afterwards
 * shows up as a model mismatch. */
typedef struct refbuf {
	uint8_t *bytes;
	size_t len;
	int released;
} refbuf;
static int g_ref_released;

static void refbuf_release(void *ref)
{
	refbuf *r = ref;
	assert_int_equal(r->released, 0);
	r->released = 1;
	g_ref_released++;
	memset(r->bytes, 0xA5, r->len);
}

static void test_append_by_reference(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "byref");
	hw_log_config c;
	small_cfg(&c);
	c.segment_bytes = 256 * 1024;
	c.chunk_bytes = 16 * 1024;
	c.tail_buffer_bytes = 32 * 1024;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	enum { NBUF = 60 };
	refbuf bufs[NBUF];
	g_ref_released = 0;
	uint64_t byref = 0, total = 0;
	for (int i = 0; i < NBUF; i++) {
		/* 1-4 batches per buffer, as a fetch response carries */
		int nb = 1 + (int)RND(4);
		size_t start = m.len, sz;
		for (int k = 0; k < nb; k++)
			(void)tm_add(&m, 0, 1 + (int)RND(3), 500 + RND(3000), 1, &sz);
		size_t n = m.len - start;
		bufs[i] = (refbuf){ .bytes = malloc(n), .len = n };
		assert_non_null(bufs[i].bytes);
		memcpy(bufs[i].bytes, m.buf + start, n);
		uint64_t r0 = hw_log_counter_get(log, HW_LOG_CTR_APPEND_REF_BYTES);
		assert_int_equal(hw_log_append_validated_ref(log, bufs[i].bytes, n, &bufs[i], refbuf_release), 0);
		uint64_t kept = hw_log_counter_get(log, HW_LOG_CTR_APPEND_REF_BYTES) - r0;
		byref += kept;
		total += n;
		if (g_direct)
			assert_int_equal(kept, 0); /* O_DIRECT: always copied */
		if (!kept)
			assert_int_equal(bufs[i].released, 1); /* copied: released at once */
		assert_true(hw_log_poll(log) >= 0);
		if (i % 7 == 0)
			tm_check_all(log, &m, 1 << 16);
	}
	if (!g_direct && !g_auto) /* auto: these ~4 KiB batches mostly go direct */
		assert_true(byref > total / 2); /* most kept (all but post-roll batches) */
	/* old buffers went once their bytes were written and evicted; the log
	 * still serves every batch correctly (memory or disk) */
	assert_int_equal(hw_log_flush(log), 0);
	tm_check_all(log, &m, 1 << 16);
	if (!g_direct && !g_auto)
		assert_true(g_ref_released < NBUF); /* the tail still holds some */
	/* truncation drops the holds past the cut but keeps what is below */
	int64_t cut = m.b[m.n / 2].base;
	assert_int_equal(hw_log_truncate_to(log, cut), 0);
	tm_truncate(&m, cut);
	tm_check_all(log, &m, 1 << 16);
	hw_log_close(log);
	assert_int_equal(g_ref_released, NBUF); /* every hold released exactly once */
	/* and the file has the right bytes (written from the held buffers) */
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_CORRUPT_BATCHES), 0);
	assert_int_equal(hw_log_end_offset(log), tm_leo(&m));
	tm_check_all(log, &m, 1 << 16);
	hw_log_close(log);
	for (int i = 0; i < NBUF; i++)
		free(bufs[i].bytes);
	tm_free(&m);
	tu_rmrf(dir);
}

/* The RWF_NOWAIT / O_DIRECT probes run once per file system, not per log:
 * a second and third log in the same file system probe nothing. */
static void test_fs_probes_cached(void **st)
{
	(void)st;
	char a[128], b[128];
	tu_tmpdir(a, sizeof(a), "probe-a");
	tu_tmpdir(b, sizeof(b), "probe-b");
	hw_log_config c;
	cfg_default(&c);
	c.inline_write_max_bytes = 64u << 10; /* the NOWAIT probe runs */
	hw_log *la, *lb, *ld;
	assert_int_equal(hw_log_open(a, &c, &la), 0);
	uint64_t n = hw_log_fs_probes_run();
	assert_true(n >= 1);
	assert_int_equal(hw_log_open(b, &c, &lb), 0);
	assert_int_equal(hw_log_fs_probes_run(), n);
	/* same answer as the probe that ran */
	assert_int_equal(hw_log_writes_inline(lb), hw_log_writes_inline(la));
	hw_log_close(lb);
	tu_rmrf(b);
	/* the O_DIRECT probe is cached separately: it runs at most once */
	c.direct_io = 1;
	assert_int_equal(hw_log_open(b, &c, &ld), 0);
	uint64_t m = hw_log_fs_probes_run();
	assert_true(m <= n + 1);
	hw_log_close(ld);
	assert_int_equal(hw_log_open(b, &c, &ld), 0);
	assert_int_equal(hw_log_fs_probes_run(), m);
	assert_int_equal(hw_log_direct_align(ld), 4096);
	hw_log_close(ld);
	hw_log_close(la);
	tu_rmrf(a);
	tu_rmrf(b);
}

/* The high-watermark checkpoint: round trip, clamped to [log start, LEO],
 * absent or malformed -> -1 (the HW then starts at the log start). */
static void test_hw_checkpoint(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "hwc");
	hw_log *log;
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	assert_int_equal(hw_log_read_hw_checkpoint(log), -1);
	tmodel m = { 0 };
	fill(log, &m, 10, 1, 1000);
	int64_t leo = tm_leo(&m);
	tm_free(&m);
	assert_int_equal(hw_log_write_hw_checkpoint(log, leo - 3), 0);
	assert_int_equal(hw_log_read_hw_checkpoint(log), leo - 3);
	assert_int_equal(hw_log_write_hw_checkpoint(log, -1), -EINVAL);
	hw_log_close(log);
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	assert_int_equal(hw_log_read_hw_checkpoint(log), leo - 3); /* survives a restart */
	assert_int_equal(hw_log_write_hw_checkpoint(log, leo + 100), 0);
	assert_int_equal(hw_log_read_hw_checkpoint(log), leo); /* never past the LEO */
	hw_log_close(log);
	char p[256];
	snprintf(p, sizeof(p), "%s/high-watermark-checkpoint", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("7\nx\n", f);
	fclose(f);
	assert_int_equal(hw_log_open(dir, NULL, &log), 0);
	assert_int_equal(hw_log_read_hw_checkpoint(log), -1);
	hw_log_close(log);
	tu_rmrf(dir);
}

/* hiwater.log.direct.io=auto (docs/storage.md#write-mode): phases of
 * lone small batches and of large ones, alternating; each phase ends in the
 * mode its batch sizes call for, every change is counted, and every byte
 * reads back as appended — while open (tail buffer and disk), and reopened
 * in each write mode, with no batch found corrupt. In the all
 * io_uring run, switches find buffered writes still in flight (the held
 * write of io.c "Mode switches"). */
static void test_direct_auto_switches(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "dauto");
	hw_log_config c;
	cfg_default(&c);
	c.direct_io = HW_LOG_DIRECT_AUTO;
	c.direct_auto_batch_bytes = 16384;
	c.segment_bytes = 1 << 20;
	c.chunk_bytes = 64 << 10;
	c.tail_buffer_bytes = 128 << 10;
	c.ring_entries = 32;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	assert_int_equal(hw_log_direct_align(log), 4096); /* ext4 takes O_DIRECT */
	assert_int_equal(hw_log_writes_direct(log), 0);   /* buffered until batches are large */
	tmodel m = { 0 };
	int phases = 8 + (int)RND(5);
	for (int ph = 0; ph < phases; ph++) {
		int big = ph % 2;
		int nb = 10 + (int)RND(20);
		for (int k = 0; k < nb; k++) {
			size_t sz;
			const uint8_t *b = big ? tm_add(&m, 1, 1, 20000 + RND(30000), 1000, &sz)
					       : tm_add(&m, 1, 1 + (int)RND(3), RND(300), 1000, &sz);
			assert_int_equal(hw_log_append(log, b, sz), 0);
			if (RND(2) == 0)
				assert_true(hw_log_poll(log) >= 0);
		}
		assert_int_equal(hw_log_writes_direct(log), big);
		assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_DIRECT_AUTO_SWITCHES), (uint64_t)ph);
	}
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_DIRECT_WRITES) > 0);
	assert_int_equal(hw_log_flush(log), 0);
	tm_check_all(log, &m, 1 << 20);
	hw_log_close(log);
	/* reopened in each mode: the files hold exactly the batches */
	for (int mode = 0; mode < HW_LOG_DIRECT__COUNT; mode++) {
		c.direct_io = mode;
		assert_int_equal(hw_log_open(dir, &c, &log), 0);
		assert_int_equal(hw_log_counter_get(log, HW_LOG_CTR_CORRUPT_BATCHES), 0);
		tm_check_all(log, &m, 64 << 10);
		hw_log_close(log);
	}
	tm_free(&m);
	tu_rmrf(dir);
}

int main(int argc, char **argv)
{
	g_seed = tu_seed("log");
	g_inline = argc > 1 && strcmp(argv[1], "inline") == 0;
	g_direct = argc > 1 && strcmp(argv[1], "direct") == 0;
	g_auto = argc > 1 && strcmp(argv[1], "auto") == 0;
	printf("log writes: %s\n", g_inline ? "inline where the fs punts io_uring writes"
				   : g_direct ? "O_DIRECT through io_uring"
				   : g_auto   ? "auto: O_DIRECT for large batches, else inline"
					      : "all io_uring");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_read_basic),
		cmocka_unit_test(test_rolls_every_offset_and_reopen),
		cmocka_unit_test(test_max_bytes_and_max_offset),
		cmocka_unit_test(test_append_rejects),
		cmocka_unit_test(test_append_validated),
		cmocka_unit_test(test_poll_reaps_completions),
		cmocka_unit_test(test_append_many_batches_per_call),
		cmocka_unit_test(test_truncate_and_reappend),
		cmocka_unit_test(test_retention),
		cmocka_unit_test(test_hw_checkpoint),
		cmocka_unit_test(test_corruption_detected),
		cmocka_unit_test(test_fsync_policy_and_store_view),
		cmocka_unit_test(test_ref_outlives_mutation),
		cmocka_unit_test(test_roll_by_time_and_full_index),
		cmocka_unit_test(test_random_damage),
		cmocka_unit_test(test_preallocate),
		cmocka_unit_test(test_preallocate_steps),
		cmocka_unit_test(test_fs_probes_cached),
		cmocka_unit_test(test_append_by_reference),
	};
	const struct CMUnitTest direct_tests[] = {
		cmocka_unit_test(test_direct_padding),
	};
	const struct CMUnitTest auto_tests[] = {
		cmocka_unit_test(test_direct_auto_switches),
	};
	int failed = cmocka_run_group_tests_name("log", tests, NULL, NULL);
	if (g_direct) /* only meaningful (and only run) with O_DIRECT on */
		failed += cmocka_run_group_tests_name("log_direct", direct_tests, NULL, NULL);
	/* every mode: what a switch finds in flight differs with inline writes */
	failed += cmocka_run_group_tests_name("log_direct_auto", auto_tests, NULL, NULL);
	return failed;
}
