/* test_log_hold.c — zero-copy holds on the log's read buffers: what a DPDK
 * sender keeps while mbufs reference fetched records. hiwaterd lends a
 * hw_log_read ref to the transport (hw_log_ref_hold per frame, released by
 * the mbuf free callback) and hw_fetch drops the reader's own ref right
 * after the send; the bytes must not change or go away until the last hold
 * is released.
 *
 * Random steps against a small log (4 KiB chunks, 8 KiB tail buffer, so
 * chunks fill, are evicted and recycled all the time): appends, reads from
 * memory and from disk whose ref is held and the reader's ref dropped at
 * once, truncations to random offsets followed by appends of different
 * bytes (a new epoch), polls, releases of random holds, and finally the
 * log's close. Every hold's bytes are compared with the copy taken when it
 * was read, before each release and at the end. A chunk recycled or freed
 * under a holder shows as changed bytes or, under ASan, a use after free. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "log_model.h"

static unsigned g_seed;
#define RND(n) ((unsigned)rand_r(&g_seed) % (unsigned)(n))
static int g_inline, g_direct; /* argv[1]: "inline", "direct" (O_DIRECT) or io_uring */

typedef struct hold {
	void *ref;
	const uint8_t *data;
	uint8_t *copy;
	size_t len;
} hold;

static void check_and_release(hold *h)
{
	assert_memory_equal(h->data, h->copy, h->len);
	hw_log_ref_release(h->ref);
	free(h->copy);
	memset(h, 0, sizeof(*h));
}

static void test_holds_survive_eviction_truncation_close(void **st)
{
	(void)st;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "hold");
	hw_log_config c;
	hw_log_config_default(&c);
	c.inline_write_max_bytes = g_inline ? 64u << 10 : 0;
	c.direct_io = g_direct;
	c.direct_auto_batch_bytes = 1200; /* auto: about the average batch here, switching often */
	c.segment_bytes = 16384;
	c.index_interval_bytes = 512;
	c.chunk_bytes = 4096;
	c.tail_buffer_bytes = 8192;
	c.ring_entries = 16;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel m = { 0 };
	enum { MAX_HOLDS = 64 };
	hold holds[MAX_HOLDS];
	memset(holds, 0, sizeof(holds));
	int32_t epoch = 0;
	unsigned n_holds = 0, reads_mem = 0, reads_disk = 0, truncs = 0, released = 0;
	for (int step = 0; step < 4000; step++) {
		unsigned a = RND(100);
		if (a < 40 || tm_leo(&m) == m.start) {
			int nb = 1 + (int)RND(3);
			for (int k = 0; k < nb; k++) {
				size_t sz;
				const uint8_t *b = tm_add(&m, epoch, 1 + (int)RND(4), RND(900), step, &sz);
				assert_int_equal(hw_log_append(log, b, sz), 0);
			}
		} else if (a < 75) {
			int64_t leo = tm_leo(&m);
			/* mostly near the LEO: served from the tail buffer's chunks */
			int64_t off = m.start + (int64_t)RND((unsigned)(leo - m.start));
			int64_t near = leo - 1 - (int64_t)RND(30);
			if (RND(4) && near > off)
				off = near;
			hw_store_read r;
			uint64_t mem0 = hw_log_counter_get(log, HW_LOG_CTR_READS_MEMORY);
			assert_int_equal(hw_log_read(log, off, 1 + RND(6000), INT64_MAX, &r), 0);
			assert_true(r.len > 0 && r.ref != NULL);
			hw_log_counter_get(log, HW_LOG_CTR_READS_MEMORY) > mem0 ? reads_mem++ : reads_disk++;
			unsigned slot = RND(MAX_HOLDS);
			if (holds[slot].ref) {
				check_and_release(&holds[slot]);
				released++;
			}
			/* the sender's hold, then the reader drops its own ref */
			hw_log_ref_hold(r.ref);
			holds[slot] = (hold){ r.ref, r.data, malloc(r.len), r.len };
			assert_non_null(holds[slot].copy);
			memcpy(holds[slot].copy, r.data, r.len);
			hw_log_ref_release(r.ref);
			n_holds++;
		} else if (a < 82) {
			/* truncate somewhere in the last ~40 offsets, then the
			 * appends carry a new epoch: different bytes at the same
			 * offsets and file positions */
			int64_t leo = tm_leo(&m);
			int64_t back = (int64_t)RND((unsigned)(leo - m.start < 40 ? leo - m.start : 40) + 1);
			assert_int_equal(hw_log_truncate_to(log, leo - back), 0);
			tm_truncate(&m, leo - back);
			assert_int_equal(hw_log_end_offset(log), tm_leo(&m));
			epoch++;
			truncs++;
		} else if (a < 92) {
			assert_true(hw_log_poll(log) >= 0);
		} else {
			unsigned slot = RND(MAX_HOLDS);
			if (holds[slot].ref) {
				check_and_release(&holds[slot]);
				released++;
			}
		}
	}
	for (unsigned i = 0; i < MAX_HOLDS; i++)
		if (holds[i].ref)
			assert_memory_equal(holds[i].data, holds[i].copy, holds[i].len);
	tm_check_all(log, &m, 1 << 20);
	hw_log_close(log);
	/* holds outlive the log */
	for (unsigned i = 0; i < MAX_HOLDS; i++)
		if (holds[i].ref) {
			check_and_release(&holds[i]);
			released++;
		}
	print_message("%u holds (%u reads from memory, %u from disk), %u truncations, %u released, all intact\n",
		      n_holds, reads_mem, reads_disk, truncs, released);
	assert_int_equal(released, n_holds);
	assert_true(reads_mem > 0 && reads_disk > 0 && truncs > 0);
	tm_free(&m);
	tu_rmrf(dir);
}

int main(int argc, char **argv)
{
	g_inline = argc > 1 && strcmp(argv[1], "inline") == 0;
	g_direct = tu_direct_mode(argc, argv);
	g_seed = tu_seed(g_inline ? "log_hold_inline"
			 : g_direct == HW_LOG_DIRECT_ON ? "log_hold_direct"
			 : g_direct == HW_LOG_DIRECT_AUTO ? "log_hold_auto"
							  : "log_hold");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds_survive_eviction_truncation_close),
	};
	return cmocka_run_group_tests_name("log_hold", tests, NULL, NULL);
}
