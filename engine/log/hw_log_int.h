/* hw_log_int.h — the segmented log's private structures, shared by
 * hw_log.c (append/read/truncate/retention), hw_log_io.c (io_uring and the
 * tail buffer), hw_log_seg.c (segment files, index files) and
 * hw_log_recover.c (open-time recovery, checkpoints).
 * Not for use outside engine/log. */
#ifndef HW_LOG_INT_H
#define HW_LOG_INT_H
#include <liburing.h>
#include <stdint.h>
#include "hw_batch.h" /* RecordBatch v2 layout and hw_be*_get/put */
#include "hw_log.h"

#define HW_LOG_MOD "log"
#define HW_LOG_DIO_ALIGN 4096u /* direct_io block: a multiple of every logical block size */

/* ---- RecordBatch v2 framing (Kafka DefaultRecordBatch, big-endian) ------ */
#define HW_LB_HEADER      HW_BATCH_HEADER_SIZE /* fixed header: records start here */
#define HW_LB_PROBE       HW_BATCH_HEADER_SIZE /* bytes hw_lb_probe reads */

typedef struct hw_lb_hdr {
	int64_t base;       /* baseOffset */
	int64_t last;       /* base + lastOffsetDelta */
	uint32_t size;      /* whole batch: batchLength + 12 */
	int32_t epoch;      /* partitionLeaderEpoch */
	int64_t max_ts;     /* maxTimestamp */
	int32_t count;      /* recordsCount */
} hw_lb_hdr;

/* Decode the first HW_LB_PROBE bytes: framing only (sizes, magic, offsets,
 * epoch, max timestamp, count). 0, or -EBADMSG (bad magic / length / delta). */
int hw_lb_probe(const uint8_t *p, hw_lb_hdr *h);
/* Full check of the complete batch at p (hw_batch_validate with the CRC,
 * no per-record walk), then as hw_lb_probe. 0 or -EBADMSG. */
int hw_lb_check(const uint8_t *p, size_t avail, hw_lb_hdr *h);

/* ---- segments ---------------------------------------------------------- */
typedef struct hw_log_idx {
	uint32_t rel;   /* offset - segment base */
	uint32_t pos;   /* file position of the batch */
} hw_log_idx;

typedef struct hw_log_seg {
	int64_t base;          /* base offset (file name) */
	int64_t next_offset;   /* last offset + 1 of its last batch (== base if empty) */
	int64_t size;          /* bytes appended (written or still in the tail buffer) */
	int64_t written;       /* bytes whose writes completed, in file order */
	int64_t synced;        /* bytes covered by a completed fdatasync */
	int64_t sync_target;   /* `written` when the in-flight fdatasync was issued */
	int fd;                /* O_RDWR, buffered: reads, fdatasync, ftruncate */
	int dfd;               /* O_WRONLY|O_DIRECT for appends (direct_io), else -1 */
	int padded;            /* the file may extend past size: direct_io block padding
				* or preallocation; hw_log_seg_trim cuts it */
	int64_t prealloc_end;  /* [0, prealloc_end) is allocated (fallocate'd) and
				* inside the file's size; 0: nothing preallocated */
	int sync_inflight;     /* an fdatasync SQE for this fd is out */
	int sealed;            /* no longer the active segment */
	hw_log_idx *idx;
	uint32_t idx_n, idx_cap, idx_max;
	int64_t bytes_since_index;
	int64_t max_ts;        /* largest batch maxTimestamp, -1 if none */
	int32_t max_ts_rel;    /* relative offset of the batch holding it */
	int64_t first_ts;      /* first batch's maxTimestamp (roll basis), -1 */
	int64_t created_ms;    /* wall clock at creation/load (roll fallback) */
	int64_t wb_kicked;     /* writeback window: [0, wb_kicked) has had its
				* writeback started (buffered writes only) */
	int64_t wb_dropped;    /* [0, wb_dropped) was dropped from the page cache */
	int wb_init;           /* wb_* set from the size found at open */
	int64_t hint_offset;   /* a batch base offset known to start at hint_pos */
	int64_t hint_pos;
} hw_log_seg;

/* ---- the tail buffer --------------------------------------------------- */
typedef struct hw_log_chunk {
	int refs;              /* atomic: the log's hold + each reader's */
	int inflight;          /* write SQEs still reading data[] */
	hw_log_seg *seg;       /* segment whose bytes these are; NULL: read buffer / detached */
	int64_t file_pos;      /* file position of data[0] */
	uint32_t len, cap;     /* bytes filled / capacity */
	uint32_t dup;          /* direct_io: data[0, dup) repeats the previous chunk's
				* last partial block; the chunk holds [file_pos + dup,
				* file_pos + len) for readers */
	uint32_t submitted;    /* data[0, submitted) has write SQEs issued */
	int direct;            /* written with O_DIRECT (block-aligned, dup prefix);
				* 0: buffered. Fixed when the chunk is linked */
	int64_t end_offset;    /* LEO after the last batch copied in */
	struct hw_log_chunk *next; /* log's list, oldest first */
	uint8_t *data;         /* right after the header, or (direct_io) at the next
				* block boundary, with file_pos block-aligned too, or
				* (ext_release) inside a caller's buffer */
	void *ext_ref;         /* the caller's buffer (a received mbuf) this chunk's
				* data points into; released with ext_release when the
				* chunk is freed. NULL: data is the chunk's own */
	void (*ext_release)(void *ext_ref);
} hw_log_chunk;

/* ---- I/O operations (io_uring user_data) -------------------------------- */
enum { HW_LOG_OP_WRITE = 1, HW_LOG_OP_SYNC = 2, HW_LOG_OP_WBACK = 3 };
typedef struct hw_log_op {
	uint8_t type, done;
	hw_log_seg *seg;
	hw_log_chunk *chunk;   /* write: source */
	uint32_t chunk_off, len;
	int64_t pos;
	int64_t wend;          /* write: file position of the last real byte + 1
				* (pos + len, less any direct_io padding) */
	int64_t end_offset;    /* write: log offset reached when it completes */
	int fd;                /* wback: a dup of the segment's fd, closed on completion
				* (the segment may be freed while the op is out) */
	int last;              /* wback: the last op of its chain (owns fd) */
	struct hw_log_op *next_free;
} hw_log_op;

struct hw_log {
	hw_store store;        /* first: hw_store* <-> hw_log* */
	char *dir;
	hw_log_config cfg;
	/* the config it was opened with (broker-wide values): what a topic
	 * config no longer set falls back to (hw_log_tconf.c); set at open */
	hw_log_config base_cfg;
	hw_log_state state;
	int io_error;
	struct io_uring ring;
	int ring_ok;
	uint32_t inline_max;   /* writes <= this go by pwrite(2); 0: all io_uring */
	uint32_t dio_align;    /* direct_io on or auto, and the file system takes
				* O_DIRECT: block size (4096), every chunk aligned to it;
				* 0: buffered only */
	int dio_auto;          /* HW_LOG_DIRECT_AUTO in effect (dio_align set) */
	int dio_want;          /* the next chunk is written direct (always when on) */
	uint32_t batch_avg;    /* auto: moving average of appended batch sizes */
	int last_direct;       /* the last write issued was direct */
	int write_held;        /* submit_pending stopped at a write that must wait
				* for the ones out (see "Mode switches" in io.c) */
	uint32_t writes_inflight; /* write SQEs out (direct writes allow one, see io.c) */
	int wb_busy;           /* inside wb_advance (it may reap, which calls it) */
	uint32_t wb_inflight;  /* writeback-window SQEs out (not in `inflight`: nothing
				* waits for them but drain and close) */
	int submitting;        /* inside hw_log_submit: reap must not re-enter it */
	int prealloc_warned;   /* log.preallocate failed once (logged) */

	hw_log_seg **segs;     /* oldest first; segs[nsegs-1] is active */
	size_t nsegs, segs_cap;

	int64_t leo;
	int64_t durable;
	int64_t recovery_point;
	int64_t rp_persisted;   /* recovery point last written to its checkpoint */
	int64_t written_offset; /* every write below it completed */

	hw_log_chunk *chunks, *chunks_tail; /* retained tail buffer, oldest first */
	hw_log_chunk *submit_from; /* first chunk that may hold unsubmitted bytes */
	uint64_t chunk_bytes_held;
	hw_log_chunk *spare;     /* standard-size chunks kept for reuse (list via next) */
	uint32_t nspare, max_spare;

	hw_log_op *ops;          /* pool */
	hw_log_op *op_free;
	uint32_t nops;
	hw_log_op **wfifo;       /* write ops in issue order */
	uint32_t wf_head, wf_n, wf_cap;
	uint32_t inflight;       /* SQEs issued, CQE not yet reaped */
	uint32_t unsubmitted;    /* SQEs prepared, not yet io_uring_submit()ed */

	int sync_groups;         /* fdatasyncs of the current group still out */
	int64_t sync_covers;     /* offset the current group makes durable */
	int64_t records_since_flush;
	int64_t last_flush_ms;

	hw_epoch_cache epochs;
	uint64_t ctr[HW_LOG_CTR__COUNT];

	/* log compaction (hw_log_clean.c) */
	int64_t clean_first_dirty; /* -1: not read from cleaner-offset-checkpoint yet */
	int64_t clean_horizon;     /* earliest delete horizon a kept tombstone waits for */
	int clean_crash_step;      /* test hook (hw_log_clean_set_crash_step) */
};

#define HW_LOG_CTR_INC(log, name, by) ((log)->ctr[HW_LOG_CTR_##name] += (uint64_t)(by))

static inline hw_log_seg *hw_log_active(hw_log *log) { return log->segs[log->nsegs - 1]; }

int64_t hw_log_wall_ms(void);
/* The store op set_topic_config (hw_log_tconf.c). */
int hw_log_st_set_topic_config(hw_store *s, const hw_topic_config *tc);
void hw_log_set_state(hw_log *log, hw_log_state st, const char *why);
/* fsync the log's directory, so renames and new files in it survive a
 * crash. Best effort: an error is ignored (the next fsync retries). */
void hw_log_fsync_dir(hw_log *log);

/* hw_log_fs.c: the file system under a log dir, probed once per device
 * (thread-safe). direct_io: HW_LOG_DIO_YES if O_DIRECT opens there,
 * HW_LOG_DIO_MEMORY on tmpfs/ramfs (nothing to bypass), HW_LOG_DIO_REFUSED
 * otherwise. punts_buffered: 1 if buffered writes there may block (io_uring
 * would punt them to a worker; also when the probe file cannot be made),
 * 0 if a non-blocking buffered write completed. Never fail. */
enum { HW_LOG_DIO_REFUSED = 0, HW_LOG_DIO_YES = 1, HW_LOG_DIO_MEMORY = 2 };
int hw_log_fs_direct_io(const char *dir);
int hw_log_fs_punts_buffered(const char *dir);

/* hw_log_io.c */
int hw_log_io_init(hw_log *log);
void hw_log_io_fini(hw_log *log);
/* Copy one batch into the tail buffer for segment seg at its current size. */
int hw_log_tail_put(hw_log *log, hw_log_seg *seg, const uint8_t *p, uint32_t n, int64_t end_offset);
/* io.c helpers shared with hw_log_wback.c. io_fail: count the error, mark
 * the log FAILED (logged once). op_alloc: a free op, reaping to make one
 * (NULL: the log FAILED). get_sqe: an SQE, submitting to make room (NULL:
 * none). */
void hw_log_io_fail(hw_log *log, int err, const char *what);
hw_log_op *hw_log_op_alloc(hw_log *log);
void hw_log_op_free(hw_log *log, hw_log_op *op);
struct io_uring_sqe *hw_log_get_sqe(hw_log *log);
/* hw_log_wback.c: start writeback of each window the active segment's
 * completed writes filled, drop the window three behind (buffered writes
 * only; never fails, an error marks the log FAILED); and a window op's
 * completion. */
void hw_log_wb_advance(hw_log *log);
void hw_log_wb_done(hw_log *log, hw_log_op *op, int res);
/* HW_LOG_DIRECT_AUTO: account one batch of n bytes about to be appended and
 * decide the write mode of the chunks after it (log->dio_want); every change
 * is logged and counted. No-op otherwise. Never fails. */
void hw_log_io_note_batch(hw_log *log, uint32_t n);
/* Place one batch by reference into the caller's held buffer (see
 * hw_log_append_validated_ref): extends the log's last chunk if it is the
 * same buffer's and contiguous, else starts a chunk owning the hold if
 * *taken is 0 (then sets it). 0: placed; 1: not placed (copy it with
 * hw_log_tail_put); -ENOMEM. */
int hw_log_tail_put_ref(hw_log *log, hw_log_seg *seg, const uint8_t *p, uint32_t n, int64_t end_offset,
			void *ref, void (*release)(void *), int *taken);
/* Issue write SQEs for every pending range and io_uring_submit. */
int hw_log_submit(hw_log *log);
/* Reap CQEs; wait_nr > 0 blocks for that many. Returns CQEs reaped or -EIO. */
int hw_log_reap(hw_log *log, unsigned wait_nr);
/* Submit and wait until no I/O is in flight. 0 or -EIO. */
int hw_log_drain(hw_log *log);
/* Issue fdatasync for every segment with written-but-unsynced bytes. */
int hw_log_sync_issue(hw_log *log);
/* The retained chunk of seg holding file position pos (not counting a
 * chunk's dup prefix), or NULL. */
hw_log_chunk *hw_log_chunk_at(hw_log *log, const hw_log_seg *seg, int64_t pos);
/* First file position of seg held in the tail buffer (seg->size if none). */
int64_t hw_log_mem_start(hw_log *log, const hw_log_seg *seg);
/* Drop the log's hold on chunks of seg at/after pos (truncation/deletion);
 * a chunk straddling pos is cut to it and sealed. Requires no I/O in flight. */
void hw_log_chunks_cut(hw_log *log, const hw_log_seg *seg, int64_t pos);
/* A chunk of capacity cap (rounded up to align), data[] aligned to align
 * (0: no alignment). NULL on ENOMEM. */
hw_log_chunk *hw_log_chunk_new(uint32_t cap, uint32_t align);
/* direct_io: cut seg's file to its size if writes left zero padding past
 * it (before a sealed segment's fdatasync, and at close). 0 or -errno. */
int hw_log_seg_trim(hw_log *log, hw_log_seg *seg);
void hw_log_chunk_hold(hw_log_chunk *c);

/* hw_log_recover.c */
int hw_log_recover(hw_log *log);
/* hw_log_clean.c: finish or discard a segment swap a crash interrupted
 * (before the segments are listed). 0 or -errno. */
int hw_log_clean_recover(hw_log *log);
/* hw_log_seg.c */
/* A segment of `base` with no files yet (fd, dfd -1; empty): NULL on
 * -ENOMEM. create: with its new, empty .log file (stale indexes of that
 * base removed); NULL with *err. */
hw_log_seg *hw_log_seg_alloc(hw_log *log, int64_t base);
hw_log_seg *hw_log_seg_create(hw_log *log, int64_t base, int *err);
void hw_log_seg_free(hw_log_seg *seg);
int hw_log_seg_unlink(hw_log *log, hw_log_seg *seg);
/* Write .index and .timeindex of seg (plain pwrite; sanity-checked on open). */
int hw_log_seg_write_indexes(hw_log *log, hw_log_seg *seg);
int hw_log_seg_index_add(hw_log *log, hw_log_seg *seg, int64_t last_offset, int64_t pos);
/* Position of the batch containing `offset` in seg (or seg->size). Reads
 * headers from memory or disk. 0 or -EIO. */
int hw_log_seg_locate(hw_log *log, hw_log_seg *seg, int64_t offset, int64_t *pos_out,
		      hw_lb_hdr *hdr_out);
/* Read n bytes at pos of seg from the tail buffer or the file. */
int hw_log_seg_pread(hw_log *log, const hw_log_seg *seg, int64_t pos, void *buf, size_t n);
int hw_log_path(const hw_log *log, int64_t base, const char *ext, char *out, size_t cap);
/* hw_log_recover.c */
int hw_log_write_recovery_point(hw_log *log);
int hw_log_write_epochs(hw_log *log);

/* hw_log_seg.c. hw_log_seg_preallocate: preallocation (log.preallocate, or
 * direct writes in effect), step-wise: make sure s's file is allocated, and
 * sized, at least half a step past `need` (the step: what the segment
 * already holds, at least 1 MiB and at most preallocate_step_bytes; 0: the
 * whole segment at once), the end of the write about to be issued
 * (0 at creation, the segment's size at open), up to segment_bytes. Never
 * fails: a file system without fallocate just does not preallocate (logged
 * once per log); the writes then extend the file.
 * hw_log_seg_tail_is_padding: 1 if the bytes [from, to) of s are what an
 * untrimmed segment ends in (zeros, then holes), 0 if not (a torn or
 * corrupt batch), as documented at its definition. */
void hw_log_seg_preallocate(hw_log *log, hw_log_seg *s, int64_t need);
int hw_log_seg_tail_is_padding(const hw_log_seg *s, int64_t from, int64_t to);

#endif
