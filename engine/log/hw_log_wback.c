/* hw_log_wback.c — the log's writeback window (buffered writes).
 *
 * Writeback window. Buffered appends take a new page-cache page per 4 KiB,
 * and the kernel frees old ones only under memory pressure: the page cache
 * grows by every byte written (3 per byte replicated). On a VM that gives
 * its free memory back to the host (virtio-balloon free page reporting)
 * each of those fresh pages costs a host fault when first written — the
 * copy into the page cache then costs several times a memcpy (perf/README.md
 * "Where the page-cache mode's CPU went"). With writeback_window_bytes W,
 * each time the active segment's completed writes fill a window its
 * writeback is started (SYNC_FILE_RANGE_WRITE: queues the I/O, waits for
 * nothing), and the window three behind it is waited for and dropped
 * (SYNC_FILE_RANGE_WAIT_BEFORE|WRITE|WAIT_AFTER linked to FADV_DONTNEED):
 * the pages it frees are the next appends' pages. Both go through io_uring
 * (io-wq runs them: two SQEs per W bytes, not per write) on a dup of the
 * segment's fd, so a segment deleted meanwhile is never touched by number.
 * No fsync, no durability claim: Kafka's page-cache semantics are kept;
 * reads further back than ~3 W come from the disk instead of the cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "hw_log_int.h"

/* One SQE of a window op chain on fd: sync_file_range with flags over
 * [pos, pos + len), or (advice != 0) posix_fadvise; owns_fd: close fd when
 * it completes (the chain's last SQE). The op, or NULL (log FAILED). */
static hw_log_op *wb_prep(hw_log *log, int fd, int owns_fd, int64_t pos, uint32_t len, unsigned flags,
			  int advice, int link)
{
	hw_log_op *op = hw_log_op_alloc(log);
	if (!op)
		return NULL;
	struct io_uring_sqe *sqe = hw_log_get_sqe(log);
	if (!sqe) {
		hw_log_op_free(log, op);
		hw_log_io_fail(log, -EBUSY, "io_uring_get_sqe");
		return NULL;
	}
	op->type = HW_LOG_OP_WBACK;
	op->fd = fd;
	op->last = owns_fd;
	op->pos = pos;
	op->len = len;
	if (advice)
		io_uring_prep_fadvise(sqe, fd, (uint64_t)pos, len, advice);
	else
		io_uring_prep_sync_file_range(sqe, fd, len, (uint64_t)pos, (int)flags);
	io_uring_sqe_set_data(sqe, op);
	if (link)
		io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK);
	log->unsubmitted++;
	log->wb_inflight++;
	return op;
}

/* A window op completed: count it, report an error (the log goes FAILED:
 * a writeback error is lost data, as a failed fdatasync would say), close
 * the chain's fd with its last op. */
void hw_log_wb_done(hw_log *log, hw_log_op *op, int res)
{
	log->wb_inflight--;
	/* -ECANCELED: the chain's first SQE failed (reported with it) */
	if (res < 0 && res != -ECANCELED)
		hw_log_io_fail(log, res, op->wend ? "fadvise (writeback window)" : "sync_file_range (writeback window)");
	else if (res >= 0 && op->wend)
		HW_LOG_CTR_INC(log, PAGECACHE_DROPPED_BYTES, op->len);
	if (op->last)
		close(op->fd);
	hw_log_op_free(log, op);
}

static void wb_windows(hw_log *log, uint32_t w);

/* Start writeback of each window the active segment's completed writes
 * filled, and drop the window three behind each. Buffered writes only;
 * never fails the caller (an error marks the log FAILED). */
void hw_log_wb_advance(hw_log *log)
{
	uint32_t w = log->cfg.writeback_window_bytes;
	/* wb_busy: op_alloc may reap, and reap comes back here */
	if (!w || (log->dio_align && !log->dio_auto) || log->state == HW_LOG_STATE_FAILED || !log->nsegs || log->wb_busy)
		return;
	log->wb_busy = 1;
	wb_windows(log, w);
	log->wb_busy = 0;
}

static void wb_windows(hw_log *log, uint32_t w)
{
	hw_log_seg *s = log->segs[log->nsegs - 1];
	if (!s->wb_init || s->written < s->wb_kicked) {
		/* bytes found at open (or above a truncation) are not ours to
		 * drop: start at the window holding the current end */
		s->wb_kicked = s->wb_dropped = s->written / w * w;
		s->wb_init = 1;
	}
	const unsigned wait = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	while (s->written - s->wb_kicked >= w && log->state != HW_LOG_STATE_FAILED) {
		int fd = dup(s->fd);
		if (fd < 0) {
			hw_log_io_fail(log, -errno, "dup (writeback window)");
			return;
		}
		if (!wb_prep(log, fd, 1, s->wb_kicked, w, SYNC_FILE_RANGE_WRITE, 0, 0)) {
			close(fd);
			return;
		}
		HW_LOG_CTR_INC(log, WRITEBACK_WINDOWS, 1);
		s->wb_kicked += w;
		if (s->wb_kicked - s->wb_dropped <= 3 * (int64_t)w)
			continue;
		/* wait for the oldest cached window's writeback, then drop it */
		if ((fd = dup(s->fd)) < 0) {
			hw_log_io_fail(log, -errno, "dup (writeback window)");
			return;
		}
		hw_log_op *d = NULL;
		if (!wb_prep(log, fd, 0, s->wb_dropped, w, wait, 0, 1) ||
		    !(d = wb_prep(log, fd, 1, s->wb_dropped, w, 0, POSIX_FADV_DONTNEED, 0))) {
			close(fd);
			return;
		}
		d->wend = 1; /* the drop: counted on success */
		s->wb_dropped += w;
	}
}

