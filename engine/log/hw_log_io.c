/* hw_log_io.c — the log's io_uring plumbing and its user-space tail buffer.
 *
 * Design note. Appended bytes land in refcounted chunks (the tail buffer),
 * and nowhere else until `hw_log_submit` turns each chunk's unsubmitted
 * range into one write SQE at the position the log tracks for it; all SQEs
 * prepared in one poll go to the kernel in one io_uring_submit. Write ops
 * are kept in a FIFO in issue order: a completion marks its op done, and
 * the done prefix of the FIFO advances `written_offset` (every write below
 * it has completed) — the only offset an fdatasync can make durable.
 *
 * fdatasync runs in "groups": one SQE per segment with completed-but-
 * unsynced bytes, issued only when no group is out. When the whole group
 * has completed, everything below the `written_offset` seen at issue time
 * is on stable storage: that advances the recovery point, and under
 * FSYNC_BEFORE_ACK the durable end. No IOSQE_IO_DRAIN is needed because a
 * sync is only issued for writes that already completed.
 *
 * Small writes inline. A buffered write that the file system cannot do
 * without blocking (ext4 and tmpfs answer RWF_NOWAIT with EOPNOTSUPP) is
 * never done inside io_uring_submit: io_uring hands it to an io-wq worker
 * thread, which copies it into the page cache and passes the completion
 * back as task work — two thread wake-ups for a ~1 us memcpy (measured on
 * this kernel: 41 us per 1 KiB write, one in flight, vs 1.05 us for
 * pwrite). Kafka appends with write(2) on the request thread. So when the
 * open-time probe says the file system punts, a write of at most
 * `inline_write_max_bytes` is done right here with pwrite(2) and completes
 * in its FIFO slot at once; larger writes (and every fdatasync) still go
 * through io_uring, so a big catch-up never stalls the reactor for long.
 * On a file system that completes buffered writes inline (XFS, btrfs),
 * io_uring is used for everything.
 *
 * A chunk stays in the log's list until all of its writes completed and the
 * list holds more than `tail_buffer_bytes`; so every byte whose write is
 * still in flight is readable from memory, and the chunks of one segment
 * always form a suffix of its file — bytes before the first of them are on
 * disk (in the page cache) and can be pread.
 *
 * Writeback window: hw_log_wback.c.
 *
 * By reference. A follower can hand over the received buffer its batches
 * arrived in (hw_log_append_validated_ref; a memif mbuf, hw_rxhold.h):
 * then the chunk's data points into that buffer (ext_ref), the write goes
 * from there, and the buffer is released with the chunk. Such a chunk is
 * never appended to by copy and never recycled. Buffered writes only.
 *
 * Mode switches (HW_LOG_DIRECT_AUTO). Each chunk is written one way,
 * direct (block-aligned, through the O_DIRECT descriptor) or buffered,
 * fixed when it is linked; the mode follows the moving average of the
 * log's batch sizes (hw_log_io_note_batch), and a change starts a new
 * chunk. Buffered and direct writes of one file never overlap in time: a
 * write of the other mode than the last one issued waits until every write
 * out has completed (write_held; reap issues it). Else a buffered write
 * could fill its page from the disk while a direct write of that block is
 * in flight, and write stale bytes back later; or a direct write could be
 * overtaken by a buffered one of the same block. The kernel keeps the page
 * cache coherent across completed writes of either kind (a direct write
 * writes back and invalidates its range; a buffered one after it reads the
 * block it starts in). A direct chunk after a buffered one copies the
 * partial block's earlier bytes from the chunk before it, or, once those
 * writes completed, reads them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_logging.h"
#include "hw_log_int.h"

hw_log_chunk *hw_log_chunk_new(uint32_t cap, uint32_t align)
{
	hw_log_chunk *c;
	size_t hdr = sizeof(*c);
	if (align) {
		/* header in the first block, data[] from the second: one
		 * allocation, so free(c) releases both */
		hdr = align;
		cap = (cap + align - 1) / align * align;
		void *m = NULL;
		if (posix_memalign(&m, align, hdr + cap) != 0)
			return NULL;
		c = m;
	} else if (!(c = malloc(hdr + cap))) {
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->data = (uint8_t *)c + hdr;
	c->cap = cap;
	c->refs = 1;
	return c;
}

void hw_log_chunk_hold(hw_log_chunk *c)
{
	/* Relaxed is enough to take a hold: the caller already has one (the
	 * log's), so the chunk cannot be freed concurrently. */
	__atomic_fetch_add(&c->refs, 1, __ATOMIC_RELAXED);
}

void hw_log_ref_hold(void *ref)
{
	HW_ASSERT(ref && __atomic_load_n(&((hw_log_chunk *)ref)->refs, __ATOMIC_RELAXED) > 0);
	hw_log_chunk_hold(ref);
}

void hw_log_ref_release(void *ref)
{
	hw_log_chunk *c = ref;
	if (!c)
		return;
	/* acq_rel: our reads of data[] happen before the decrement (release),
	 * and the thread that frees sees every other holder's reads done
	 * (acquire). */
	if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		if (c->ext_release)
			c->ext_release(c->ext_ref);
		free(c);
	}
}

static void chunk_drop(hw_log *log, hw_log_chunk *c)
{
	log->chunk_bytes_held -= c->cap;
	/* acquire: if we are the only holder, no reader's access to data[] can
	 * still be pending, so the chunk may be recycled. */
	if (log->nspare < log->max_spare && c->cap == log->cfg.chunk_bytes && !c->ext_release &&
	    __atomic_load_n(&c->refs, __ATOMIC_ACQUIRE) == 1) {
		/* Recycled, not freed: a fresh 1 MiB allocation costs a page
		 * fault per 4 KiB on first touch — more than the append. */
		c->next = log->spare;
		log->spare = c;
		log->nspare++;
		return;
	}
	hw_log_ref_release(c);
}

static void chunk_unlink_head(hw_log *log)
{
	hw_log_chunk *c = log->chunks;
	if (log->submit_from == c)
		log->submit_from = c->next;
	log->chunks = c->next;
	if (!log->chunks)
		log->chunks_tail = NULL;
	c->next = NULL;
	chunk_drop(log, c);
}

static void chunks_evict(hw_log *log)
{
	while (log->chunks && log->chunks != log->chunks_tail &&
	       log->chunk_bytes_held > log->cfg.tail_buffer_bytes && log->chunks->inflight == 0 &&
	       log->chunks->submitted == log->chunks->len)
		chunk_unlink_head(log);
}

int hw_log_io_init(hw_log *log)
{
	log->inline_max = 0;
	log->dio_align = 0;
	log->dio_auto = log->dio_want = 0;
	log->batch_avg = 0;
	if (log->cfg.direct_io != HW_LOG_DIRECT_OFF) {
		int d = hw_log_fs_direct_io(log->dir);
		if (d == HW_LOG_DIO_YES)
			log->dio_align = HW_LOG_DIO_ALIGN;
		else if (d == HW_LOG_DIO_MEMORY)
			HW_LOG(INFO, HW_LOG_MOD,
			       "%s: hiwater.log.direct.io: a memory-backed file system (tmpfs/ramfs), "
			       "nothing to bypass: buffered writes",
			       log->dir);
		else
			HW_LOG(WARN, HW_LOG_MOD,
			       "%s: hiwater.log.direct.io: the file system refuses O_DIRECT: buffered writes",
			       log->dir);
	}
	if (log->dio_align && log->cfg.direct_io == HW_LOG_DIRECT_AUTO)
		log->dio_auto = 1; /* buffered until the batches are large */
	else
		log->dio_want = log->dio_align != 0;
	/* A direct write waits for the device: never on the reactor
	 * (write_op); buffered writes of an auto log are inlined. */
	if ((!log->dio_align || log->dio_auto) && log->cfg.inline_write_max_bytes && !log->cfg.async_writes &&
	    hw_log_fs_punts_buffered(log->dir))
		log->inline_max = log->cfg.inline_write_max_bytes;

	/* Buffered writes to ext4 (and most file systems) cannot complete
	 * inline: an io-wq worker on another CPU copies them into the page
	 * cache and hands each completion back to this thread as task work.
	 * By default the kernel kicks the owner with an IPI for every one of
	 * them while it runs (interrupting the appends' memcpy; in a VM that
	 * is two exits). COOP_TASKRUN drops only that kick: the completions
	 * run at the owner's next syscall, which hw_log_poll makes anyway
	 * (TASKRUN_FLAG tells reap when to enter just for them), and an owner
	 * asleep (epoll_wait, io_uring_wait_cqe) is still woken, as before —
	 * checked on 6.18: epoll_wait returns EINTR on a write completion
	 * with or without the flag. */
	int rc = io_uring_queue_init(log->cfg.ring_entries, &log->ring,
				     IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
	if (rc == -EINVAL) /* a kernel before 5.19 */
		rc = io_uring_queue_init(log->cfg.ring_entries, &log->ring, 0);
	if (rc < 0)
		return rc;
	log->ring_ok = 1;
	log->max_spare = 2; /* recycled chunks per log: bounded, touched memory */
	log->nops = log->cfg.ring_entries * 2;
	log->ops = calloc(log->nops, sizeof(*log->ops));
	log->wfifo = calloc(log->nops, sizeof(*log->wfifo));
	if (!log->ops || !log->wfifo)
		return -ENOMEM;
	log->wf_cap = log->nops;
	for (uint32_t i = 0; i < log->nops; i++) {
		log->ops[i].next_free = log->op_free;
		log->op_free = &log->ops[i];
	}
	return 0;
}

void hw_log_io_fini(hw_log *log)
{
	while (log->chunks)
		chunk_unlink_head(log);
	while (log->spare) {
		hw_log_chunk *c = log->spare;
		log->spare = c->next;
		hw_log_ref_release(c);
	}
	log->nspare = 0;
	if (log->ring_ok)
		io_uring_queue_exit(&log->ring);
	log->ring_ok = 0;
	free(log->ops);
	free(log->wfifo);
	log->ops = NULL;
	log->wfifo = NULL;
}

void hw_log_io_fail(hw_log *log, int err, const char *what)
{
	HW_LOG_CTR_INC(log, IO_ERRORS, 1);
	if (log->state != HW_LOG_STATE_FAILED) {
		log->io_error = err;
		HW_LOG(ERROR, HW_LOG_MOD, "%s: %s failed: %s", log->dir, what, strerror(-err));
		hw_log_set_state(log, HW_LOG_STATE_FAILED, what);
	}
}

static int ring_submit(hw_log *log)
{
	if (!log->unsubmitted)
		return 0;
	int rc = io_uring_submit(&log->ring);
	HW_LOG_CTR_INC(log, SUBMITS, 1);
	if (rc < 0) {
		hw_log_io_fail(log, rc, "io_uring_submit");
		return -EIO;
	}
	log->unsubmitted = 0;
	return 0;
}

struct io_uring_sqe *hw_log_get_sqe(hw_log *log)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&log->ring);
	if (!sqe) {
		ring_submit(log);
		sqe = io_uring_get_sqe(&log->ring);
	}
	return sqe;
}

hw_log_op *hw_log_op_alloc(hw_log *log)
{
	while (!log->op_free) {
		/* Every op is in flight or prepared: push them out and wait. */
		if (ring_submit(log) < 0 || hw_log_reap(log, 1) < 0)
			return NULL;
	}
	hw_log_op *op = log->op_free;
	log->op_free = op->next_free;
	memset(op, 0, sizeof(*op));
	return op;
}

void hw_log_op_free(hw_log *log, hw_log_op *op)
{
	op->next_free = log->op_free;
	log->op_free = op;
}

static int prep_write(hw_log *log, hw_log_op *op)
{
	struct io_uring_sqe *sqe = hw_log_get_sqe(log);
	if (!sqe) {
		hw_log_io_fail(log, -EBUSY, "io_uring_get_sqe");
		return -EIO;
	}
	io_uring_prep_write(sqe, op->chunk->direct ? op->seg->dfd : op->seg->fd,
			    op->chunk->data + op->chunk_off, op->len, (uint64_t)op->pos);
	io_uring_sqe_set_data(sqe, op);
	if (log->cfg.async_writes)
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
	log->unsubmitted++;
	HW_LOG_CTR_INC(log, WRITE_SQES, 1);
	return 0;
}

/* Write op's bytes now with pwrite(2) (see "Small writes inline"): the op
 * is complete when this returns; fifo_pop moves the offsets. 0, or -EIO
 * (the log is FAILED; the op still counts as done so the FIFO drains). */
static int write_inline(hw_log *log, hw_log_op *op)
{
	const uint8_t *p = op->chunk->data + op->chunk_off;
	uint32_t left = op->len;
	int64_t pos = op->pos;
	int rc = 0;
	while (left) {
		ssize_t n = pwrite(op->seg->fd, p, left, pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			hw_log_io_fail(log, n < 0 ? -errno : -EIO, "pwrite");
			rc = -EIO;
			break;
		}
		if ((uint32_t)n < left)
			HW_LOG_CTR_INC(log, SHORT_WRITES, 1);
		p += n;
		pos += n;
		left -= (uint32_t)n;
	}
	HW_LOG_CTR_INC(log, INLINE_WRITES, 1);
	op->done = 1;
	return rc;
}

/* Queue one write op over the chunk's data[off, off + len) at file
 * position pos; wend/end_offset: what its completion (in FIFO order) moves
 * seg->written and written_offset to (0: nothing). Inline (pwrite) when
 * small enough, else a prepared SQE. 0 or -EIO. */
static int write_op(hw_log *log, hw_log_chunk *c, uint32_t off, uint32_t len, int64_t pos, int64_t wend,
		    int64_t end_offset)
{
	hw_log_op *op = hw_log_op_alloc(log);
	if (!op)
		return -EIO;
	op->type = HW_LOG_OP_WRITE;
	op->seg = c->seg;
	op->chunk = c;
	op->chunk_off = off;
	op->len = len;
	op->pos = pos;
	op->wend = wend;
	op->end_offset = end_offset;
	HW_ASSERT(log->wf_n < log->wf_cap);
	log->wfifo[(log->wf_head + log->wf_n) % log->wf_cap] = op;
	log->wf_n++;
	if (op->len <= log->inline_max && !c->direct)
		return write_inline(log, op);
	c->inflight++;
	log->inflight++;
	log->writes_inflight++;
	return prep_write(log, op);
}

/* Direct writes: split after the partial first block. A write always
 * starts on the block holding its first new byte (that block's earlier
 * bytes, written and padded by the previous write, go out again) and
 * ends on a block boundary. Into a preallocated file that first block is
 * written and the rest allocated-but-unwritten: ext4 maps such a range as
 * two extents, does not count it as an overwrite, wants its exclusive
 * inode lock, and io_uring hands the write to an io-wq worker — every
 * write, two thread switches and a wake-up each (measured on 6.18: 1023 of
 * 1024 such writes punted, 0 of 1024 when each write covers only one kind
 * of block). Two SQEs, the block alone and the rest, are both issued by
 * io_uring_enter itself. They cover disjoint blocks, so both may be out at
 * once; the next write waits for both (submit_pending). A NOP follows
 * them: io_uring holds a block plug over a submission only when it has
 * more than two SQEs (io_submit_state_start), and inside a plug the two
 * adjacent bios merge into one request — one device request and one
 * virtio notification (a VM exit here) per write instead of two (measured:
 * 2047 requests for 1024 split writes without the NOP, 1024 with it, and
 * 30% less CPU). */
static int issue_direct(hw_log *log, hw_log_chunk *c)
{
	/* Whole blocks: from the block holding the first new byte
	 * (re-sending the earlier bytes of a partial block) to the next
	 * block boundary, zero-padded in memory. The chunk and its file
	 * position are block-aligned (hw_log_tail_put). */
	uint32_t a = log->dio_align;
	uint32_t off = c->submitted;
	uint32_t from = off / a * a;
	uint32_t to = (c->len + a - 1) / a * a;
	int64_t wend = c->file_pos + c->len;
	HW_ASSERT(to <= c->cap && c->file_pos % a == 0);
	memset(c->data + c->len, 0, to - c->len);
	HW_LOG_CTR_INC(log, DIRECT_REWRITE_BYTES, off - from);
	HW_LOG_CTR_INC(log, DIRECT_WRITES, 1);
	c->seg->padded = 1;
	c->submitted = c->len;
	hw_log_seg_preallocate(log, c->seg, c->file_pos + to);
	if (from < off && to - from > a && c->seg->prealloc_end >= c->file_pos + to) {
		HW_LOG_CTR_INC(log, DIRECT_SPLIT_WRITES, 1);
		/* the rewritten block moves nothing: the second op, behind it
		 * in the FIFO, carries the write's ends */
		if (write_op(log, c, from, a, c->file_pos + from, 0, 0) < 0 ||
		    write_op(log, c, from + a, to - from - a, c->file_pos + from + a, wend, c->end_offset) < 0)
			return -EIO;
		struct io_uring_sqe *nop = io_uring_get_sqe(&log->ring);
		if (nop) { /* no room: the writes just go as two requests */
			io_uring_prep_nop(nop);
			io_uring_sqe_set_data(nop, NULL); /* reap skips it */
			log->unsubmitted++;
		}
		return 0;
	}
	return write_op(log, c, from, to - from, c->file_pos + from, wend, c->end_offset);
}

static int issue_write(hw_log *log, hw_log_chunk *c)
{
	log->last_direct = c->direct;
	if (c->direct)
		return issue_direct(log, c);
	uint32_t off = c->submitted, len = c->len - c->submitted;
	c->submitted = c->len;
	hw_log_seg_preallocate(log, c->seg, c->file_pos + c->len);
	return write_op(log, c, off, len, c->file_pos + off, c->file_pos + c->len, c->end_offset);
}

static void fifo_pop(hw_log *log);
static int submit_pending(hw_log *log);

int hw_log_submit(hw_log *log)
{
	if (log->state == HW_LOG_STATE_FAILED)
		return -EIO;
	log->submitting = 1;
	int rc = submit_pending(log);
	log->submitting = 0;
	return rc;
}

static int submit_pending(hw_log *log)
{
	/* Pending bytes are only ever in a suffix of the list (chunks fill
	 * in order), so start where the last submit stopped. */
	hw_log_chunk *c = log->submit_from ? log->submit_from : log->chunks;
	log->write_held = 0;
	for (; c; c = c->next) {
		if (c->submitted >= c->len)
			continue;
		/* direct_io: one write in flight per log. Two could cover the
		 * same partial block (a write always ends on a block boundary
		 * and the next one starts on the block of its first byte), and
		 * the device may complete them in either order; the next write
		 * goes out when this one completes (hw_log_reap), and then
		 * covers everything appended meanwhile. */
		/* Mode switches: nor does a write of one mode overlap
		 * one of the other. */
		if (log->writes_inflight && (c->direct || log->last_direct)) {
			log->write_held = 1;
			break;
		}
		if (issue_write(log, c) < 0)
			return -EIO;
	}
	log->submit_from = c ? c : log->chunks_tail;
	/* inline writes completed: move written/durable now, even if no reap
	 * follows (hw_log_drain with nothing in flight); O(1) when none did */
	fifo_pop(log);
	hw_log_wb_advance(log);
	return ring_submit(log);
}

/* A new chunk is about to follow the tail t (NULL: none): t will not grow,
 * so write it now, one SQE, and memory stays bounded even if the owner
 * polls rarely; then backpressure, as a blocking write(2) gives Kafka:
 * while the disk lags by more than four tail buffers, wait for it. */
static void tail_finish(hw_log *log, hw_log_chunk *t)
{
	if (t && t->submitted < t->len && log->state != HW_LOG_STATE_FAILED) {
		hw_log_submit(log);
		hw_log_reap(log, 0);
	}
	uint64_t limit = 4 * (uint64_t)log->cfg.tail_buffer_bytes + 2 * (uint64_t)log->cfg.chunk_bytes;
	while (log->chunk_bytes_held > limit && log->inflight && log->state != HW_LOG_STATE_FAILED)
		if (hw_log_reap(log, 1) < 0)
			break;
}

/* Make c the log's tail chunk. */
static void chunk_link(hw_log *log, hw_log_chunk *c)
{
	if (log->chunks_tail)
		log->chunks_tail->next = c;
	else
		log->chunks = c;
	log->chunks_tail = c;
	log->chunk_bytes_held += c->cap;
}

void hw_log_io_note_batch(hw_log *log, uint32_t n)
{
	if (!log->dio_auto)
		return;
	/* a quarter of each new batch: a change of load shows within a few
	 * batches; hysteresis (direct from the threshold, buffered below
	 * half of it) keeps a mixed load from flapping */
	log->batch_avg = log->batch_avg - log->batch_avg / 4 + n / 4;
	uint32_t thr = log->cfg.direct_auto_batch_bytes;
	int want = log->dio_want ? log->batch_avg >= thr / 2 : log->batch_avg >= thr;
	if (want == log->dio_want)
		return;
	log->dio_want = want;
	HW_LOG_CTR_INC(log, DIRECT_AUTO_SWITCHES, 1);
	HW_LOG(INFO, HW_LOG_MOD, "%s: writes %s -> %s (batches average %u B, threshold %u B)", log->dir,
	       want ? "buffered" : "direct", want ? "direct" : "buffered", log->batch_avg, thr);
}

int hw_log_tail_put(hw_log *log, hw_log_seg *seg, const uint8_t *p, uint32_t n, int64_t end_offset)
{
	hw_log_chunk *t = log->chunks_tail;
	if (!t || t->seg != seg || t->file_pos + t->len != seg->size || t->cap - t->len < n ||
	    t->direct != log->dio_want) {
		tail_finish(log, t);
		hw_log_chunk *c;
		/* direct: the chunk starts on the block holding seg->size,
		 * with that block's earlier bytes copied in (they go out again
		 * with the first write from this chunk). Every chunk is
		 * allocated aligned when direct writes may come (dio_align). */
		uint32_t a = log->dio_align;
		int direct = log->dio_want;
		uint32_t pre = direct ? (uint32_t)(seg->size % a) : 0;
		uint32_t need = pre + n;
		if (log->spare && need <= log->spare->cap) {
			c = log->spare;
			log->spare = c->next;
			log->nspare--;
			uint32_t cap = c->cap;
			uint8_t *data = c->data;
			memset(c, 0, sizeof(*c));
			c->cap = cap;
			c->data = data;
			c->refs = 1;
		} else {
			c = hw_log_chunk_new(need > log->cfg.chunk_bytes ? need : log->cfg.chunk_bytes, a);
			if (!c)
				return -ENOMEM;
		}
		c->seg = seg;
		c->file_pos = seg->size - pre;
		if (pre) {
			int rc = 0;
			if (t && t->seg == seg && t->file_pos <= c->file_pos && t->file_pos + t->len == seg->size) {
				memcpy(c->data, t->data + (c->file_pos - t->file_pos), pre);
			} else {
				/* after buffered chunks (Mode switches): those bytes
				 * are read back once their writes completed */
				while (log->writes_inflight && log->state != HW_LOG_STATE_FAILED)
					if (hw_log_reap(log, 1) < 0)
						break;
				rc = log->state == HW_LOG_STATE_FAILED
					     ? -EIO
					     : hw_log_seg_pread(log, seg, c->file_pos, c->data, pre);
			}
			if (rc < 0) {
				hw_log_ref_release(c);
				return rc;
			}
			c->len = c->submitted = c->dup = pre;
		}
		c->direct = direct;
		chunk_link(log, c);
		t = c;
	}
	memcpy(t->data + t->len, p, n);
	t->len += n;
	t->end_offset = end_offset;
	return 0;
}

int hw_log_tail_put_ref(hw_log *log, hw_log_seg *seg, const uint8_t *p, uint32_t n, int64_t end_offset,
			void *ref, void (*release)(void *), int *taken)
{
	hw_log_chunk *t = log->chunks_tail;
	if (*taken && t && t->ext_ref == ref && t->seg == seg && t->data + t->len == p &&
	    t->file_pos + t->len == seg->size) {
		/* the next batch of the same buffer: one chunk, one write */
		t->len += n;
		t->cap += n;
		t->end_offset = end_offset;
		log->chunk_bytes_held += n;
		return 0;
	}
	if (*taken)
		return 1;
	tail_finish(log, t);
	hw_log_chunk *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->refs = 1;
	c->data = (uint8_t *)p;
	c->len = c->cap = n;
	c->seg = seg;
	c->file_pos = seg->size;
	c->end_offset = end_offset;
	c->ext_ref = ref;
	c->ext_release = release;
	chunk_link(log, c);
	*taken = 1;
	return 0;
}

hw_log_chunk *hw_log_chunk_at(hw_log *log, const hw_log_seg *seg, int64_t pos)
{
	for (hw_log_chunk *c = log->chunks; c; c = c->next)
		if (c->seg == seg && pos >= c->file_pos + c->dup && pos < c->file_pos + c->len)
			return c;
	return NULL;
}

int64_t hw_log_mem_start(hw_log *log, const hw_log_seg *seg)
{
	/* a dup prefix is on disk: its own chunk was evicted only after
	 * its writes completed */
	for (hw_log_chunk *c = log->chunks; c; c = c->next)
		if (c->seg == seg)
			return c->file_pos + c->dup;
	return seg->size;
}

void hw_log_chunks_cut(hw_log *log, const hw_log_seg *seg, int64_t pos)
{
	HW_ASSERT(log->inflight == 0);
	log->submit_from = NULL; /* rescan from the head next time */
	hw_log_chunk **pp = &log->chunks, *prev = NULL;
	while (*pp) {
		hw_log_chunk *c = *pp;
		if (c->seg == seg && c->file_pos + c->len > pos) {
			if (c->file_pos < pos) {
				/* Keep the valid prefix readable but never append
				 * into it again: holders may own the bytes past pos. */
				uint32_t keep = (uint32_t)(pos - c->file_pos);
				log->chunk_bytes_held -= c->cap - keep;
				c->len = c->cap = keep;
				if (c->dup > keep)
					c->dup = keep;
				if (c->submitted > keep)
					c->submitted = keep;
			} else {
				*pp = c->next;
				if (log->chunks_tail == c)
					log->chunks_tail = prev;
				c->next = NULL;
				chunk_drop(log, c);
				continue;
			}
		}
		prev = c;
		pp = &c->next;
	}
}

static void group_done(hw_log *log)
{
	int64_t c = log->sync_covers;
	if (c > log->leo)
		c = log->leo;
	if (c > log->recovery_point) {
		log->recovery_point = c;
		/* Persist when the recovery point reaches a newer segment:
		 * recovery then skips the older ones. */
		size_t i = log->nsegs;
		while (i > 0 && log->segs[i - 1]->base > c)
			i--;
		if (i > 0 && log->rp_persisted < log->segs[i - 1]->base)
			hw_log_write_recovery_point(log);
	}
	if (log->cfg.flush_policy == HW_LOG_FLUSH_FSYNC_BEFORE_ACK && c > log->durable)
		log->durable = c;
}

int hw_log_sync_issue(hw_log *log)
{
	if (log->sync_groups || log->state == HW_LOG_STATE_FAILED)
		return 0;
	log->sync_covers = log->written_offset;
	for (size_t i = log->nsegs; i-- > 0;) {
		hw_log_seg *s = log->segs[i];
		/* direct_io: a sealed segment's padding is cut before this
		 * group's fdatasync (which then makes the new size stable), so
		 * the recovery point never passes a file that ends in zeros:
		 * only segments below it are trusted without a scan. */
		int trimmed = 0;
		if (s->sealed && s->padded && s->written == s->size && !s->sync_inflight) {
			if (hw_log_seg_trim(log, s) < 0) {
				hw_log_io_fail(log, -EIO, "ftruncate (direct_io padding)");
				return -EIO;
			}
			trimmed = 1;
		}
		if ((s->written <= s->synced && !trimmed) || s->sync_inflight)
			continue;
		hw_log_op *op = hw_log_op_alloc(log);
		if (!op)
			return -EIO;
		struct io_uring_sqe *sqe = hw_log_get_sqe(log);
		if (!sqe) {
			hw_log_op_free(log, op);
			hw_log_io_fail(log, -EBUSY, "io_uring_get_sqe");
			return -EIO;
		}
		op->type = HW_LOG_OP_SYNC;
		op->seg = s;
		s->sync_target = s->written;
		s->sync_inflight = 1;
		io_uring_prep_fsync(sqe, s->fd, IORING_FSYNC_DATASYNC);
		io_uring_sqe_set_data(sqe, op);
		log->unsubmitted++;
		log->inflight++;
		log->sync_groups++;
		HW_LOG_CTR_INC(log, SYNC_SQES, 1);
	}
	if (!log->sync_groups)
		group_done(log); /* nothing unsynced: covers is already stable */
	return ring_submit(log);
}

static void maybe_sync(hw_log *log)
{
	if (log->sync_groups || log->state == HW_LOG_STATE_FAILED)
		return;
	int want = 0;
	if (log->cfg.flush_policy == HW_LOG_FLUSH_FSYNC_BEFORE_ACK) {
		want = log->written_offset > log->durable;
	} else if (log->cfg.flush_policy == HW_LOG_FLUSH_INTERVAL &&
		   log->written_offset > log->recovery_point) {
		int64_t now = hw_log_wall_ms();
		want = log->records_since_flush >= log->cfg.flush_messages ||
		       now - log->last_flush_ms >= log->cfg.flush_ms;
		if (want) {
			log->records_since_flush = 0;
			log->last_flush_ms = now;
		}
	}
	/* A sealed segment whose writes all completed gets synced (as Kafka
	 * flushes a segment on roll), advancing the recovery point. */
	for (size_t i = log->nsegs - 1; !want && i-- > 0;) {
		hw_log_seg *s = log->segs[i];
		if (s->synced >= s->size && !s->padded)
			break;
		if (s->written == s->size)
			want = 1;
	}
	if (want)
		hw_log_sync_issue(log);
}

static void handle_cqe(hw_log *log, hw_log_op *op, int res)
{
	if (op->type == HW_LOG_OP_WRITE) {
		HW_LOG_CTR_INC(log, WRITE_CQES, 1);
		if (res < 0) {
			hw_log_io_fail(log, res, "write");
		} else if ((uint32_t)res < op->len && res > 0) {
			/* Short write: reissue the rest; the op stays in flight. */
			HW_LOG_CTR_INC(log, SHORT_WRITES, 1);
			op->chunk_off += (uint32_t)res;
			op->pos += res;
			op->len -= (uint32_t)res;
			if (prep_write(log, op) == 0)
				return;
		} else if (res == 0 && op->len > 0) {
			hw_log_io_fail(log, -EIO, "write (0 bytes)");
		}
		op->done = 1;
		op->chunk->inflight--;
		log->inflight--;
		log->writes_inflight--;
		return;
	}
	if (op->type == HW_LOG_OP_WBACK) {
		hw_log_wb_done(log, op, res);
		return;
	}
	/* sync */
	log->inflight--;
	op->seg->sync_inflight = 0;
	if (res < 0)
		hw_log_io_fail(log, res, "fdatasync");
	else if (op->seg->sync_target > op->seg->synced)
		op->seg->synced = op->seg->sync_target;
	hw_log_op_free(log, op);
	if (--log->sync_groups == 0 && log->state != HW_LOG_STATE_FAILED)
		group_done(log);
}

static void fifo_pop(hw_log *log)
{
	while (log->wf_n) {
		hw_log_op *op = log->wfifo[log->wf_head];
		if (!op->done)
			break;
		log->wf_head = (log->wf_head + 1) % log->wf_cap;
		log->wf_n--;
		if (log->state != HW_LOG_STATE_FAILED) {
			if (op->end_offset > log->written_offset)
				log->written_offset = op->end_offset;
			/* PAGE_CACHE / INTERVAL: in the page cache is durable
			 * enough for an ack (Kafka's write(2) returned) */
			if (log->cfg.flush_policy != HW_LOG_FLUSH_FSYNC_BEFORE_ACK &&
			    log->written_offset > log->durable)
				log->durable = log->written_offset;
			if (op->wend > op->seg->written)
				op->seg->written = op->wend;
		}
		hw_log_op_free(log, op);
	}
}

int hw_log_reap(hw_log *log, unsigned wait_nr)
{
	int n = 0;
	struct io_uring_cqe *cqe;
	/* Completions waiting as task work (COOP_TASKRUN): enter to run them
	 * (liburing >= 2.2 peeks do it too; this does not depend on that).
	 * Acquire: pairs with the kernel setting the flag after queueing. */
	if (!wait_nr && (__atomic_load_n(log->ring.sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN))
		io_uring_get_events(&log->ring);
	if (wait_nr && (log->inflight || log->wb_inflight)) {
		if (ring_submit(log) < 0)
			return -EIO;
		int rc;
		do
			rc = io_uring_wait_cqe(&log->ring, &cqe);
		while (rc == -EINTR);
		if (rc < 0) {
			hw_log_io_fail(log, rc, "io_uring_wait_cqe");
			return -EIO;
		}
	}
	while (io_uring_peek_cqe(&log->ring, &cqe) == 0) {
		hw_log_op *op = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&log->ring, cqe);
		n++;
		if (op)
			handle_cqe(log, op, res);
	}
	fifo_pop(log);
	hw_log_wb_advance(log);
	maybe_sync(log);
	chunks_evict(log);
	/* what waited for the completed writes goes out now */
	if (log->write_held && !log->writes_inflight && log->submit_from && !log->submitting &&
	    log->state != HW_LOG_STATE_FAILED && hw_log_submit(log) < 0)
		return -EIO;
	if (log->unsubmitted && ring_submit(log) < 0)
		return -EIO;
	return log->state == HW_LOG_STATE_FAILED ? -EIO : n;
}

int hw_log_drain(hw_log *log)
{
	if (hw_log_submit(log) < 0)
		return -EIO;
	while (log->inflight || log->wb_inflight)
		if (hw_log_reap(log, 1) < 0)
			break;
	if (log->state == HW_LOG_STATE_FAILED) {
		/* Nothing may still point into our buffers after a failure. */
		struct io_uring_cqe *cqe;
		while ((log->inflight || log->wb_inflight) && io_uring_wait_cqe(&log->ring, &cqe) == 0) {
			hw_log_op *op = io_uring_cqe_get_data(cqe);
			io_uring_cqe_seen(&log->ring, cqe);
			if (op)
				handle_cqe(log, op, -EIO);
		}
		fifo_pop(log);
		return -EIO;
	}
	return 0;
}
