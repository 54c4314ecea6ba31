/* hw_log.h — one partition's segmented on-disk log, written with io_uring.
 *
 * Design note. A partition's log is a directory of segments, each a pair of
 * Kafka-named files: `<base offset, 20 digits>.log` holding whole RecordBatch
 * v2 batches back to back, and `.index`, a sparse offset index of 8-byte
 * big-endian entries (offset relative to the base, file position). A
 * `.timeindex` with one 12-byte entry (largest timestamp, its relative
 * offset) is written when a segment is sealed, for time retention. The last
 * segment is the active one; it rolls at `log.segment.bytes`, `log.roll.ms`
 * or a full index.
 *
 * Writes. An append validates the batches, copies them into the user-space
 * tail buffer (chunks of `chunk_bytes`) and records what still has to be
 * written; no system call happens on the append path. `poll` (the reactor
 * calls it once per loop turn) turns every pending chunk range into ONE
 * io_uring write SQE and submits them all with one io_uring_enter, then reaps
 * completions. A chunk that fills up is submitted right away so memory stays
 * bounded. Because the tail buffer holds every byte whose write has not
 * completed, a read of just-appended data is served from memory with zero
 * copies (the chunk is refcounted and handed out as `hw_store_read.ref`);
 * older data is read with pread into a refcounted buffer.
 *
 * Durability (the flush policy):
 *   PAGE_CACHE        Kafka's default: the kernel writes back when it likes;
 *                     durable_end_offset advances as write CQEs arrive (the
 *                     bytes are in the page cache, so a crash of the
 *                     process loses nothing below it — what Kafka's
 *                     synchronous write(2) gives acks=1 and the LEO a
 *                     replica reports).
 *   INTERVAL          as PAGE_CACHE for acknowledgement, plus an fdatasync
 *                     every `flush.messages` records or `flush.ms`.
 *   FSYNC_BEFORE_ACK  durable_end_offset trails the LEO: it advances when an
 *                     fdatasync CQE arrives that was issued after every write
 *                     up to that offset completed (group commit: one sync in
 *                     flight covers everything written before it).
 * A sealed segment is fdatasync'ed after its last write completes; that
 * advances the recovery point, kept in `recovery-point-checkpoint`.
 *
 * Recovery on open: every segment from the one holding the recovery point on
 * is scanned from the recovery point, each batch's framing, offsets and CRC
 * checked; at the first torn or corrupt batch the file is truncated and later
 * segments are deleted. Indexes of earlier segments are sanity-checked and
 * rebuilt if missing or corrupt. The leader-epoch cache comes from
 * `leader-epoch-checkpoint`, or is rebuilt from the batches when that file is
 * missing or malformed.
 *
 * Threading: a log is owned by one reactor; every call is from that thread.
 * The only exception is hw_log_ref_release, which may run anywhere.
 */
#ifndef HW_LOG_H
#define HW_LOG_H
#include <stddef.h>
#include <stdint.h>
#include "hw_epoch.h"
#include "hw_store.h"
#include "hw_topic_config.h"

typedef struct hw_log hw_log;

/* ---- flush policy ------------------------------------------------------ */
#define HW_LOG_FLUSH_POLICY_TABLE(X) \
	X(PAGE_CACHE)                \
	X(INTERVAL)                  \
	X(FSYNC_BEFORE_ACK)

/* How segments are written (hw_log_config.direct_io). */
typedef enum hw_log_direct_mode {
	HW_LOG_DIRECT_OFF = 0,  /* buffered (page cache), Kafka's way */
	HW_LOG_DIRECT_ON = 1,   /* O_DIRECT always */
	HW_LOG_DIRECT_AUTO = 2, /* by batch size: large batches O_DIRECT, small ones buffered */
	HW_LOG_DIRECT__COUNT
} hw_log_direct_mode;

typedef enum hw_log_flush_policy {
#define HW_LOG_FP_ENUM(n) HW_LOG_FLUSH_##n,
	HW_LOG_FLUSH_POLICY_TABLE(HW_LOG_FP_ENUM)
#undef HW_LOG_FP_ENUM
	HW_LOG_FLUSH__COUNT
} hw_log_flush_policy;

/* "PAGE_CACHE"...; "UNKNOWN" for anything else. Never NULL. */
const char *hw_log_flush_policy_name(int policy);
/* Name -> policy (case-insensitive). -EINVAL if unknown. */
int hw_log_flush_policy_parse(const char *name);

/* ---- life-cycle state ---------------------------------------------------- */
#define HW_LOG_STATE_TABLE(X) \
	X(RECOVERING)         \
	X(ONLINE)             \
	X(FAILED)

typedef enum hw_log_state {
#define HW_LOG_ST_ENUM(n) HW_LOG_STATE_##n,
	HW_LOG_STATE_TABLE(HW_LOG_ST_ENUM)
#undef HW_LOG_ST_ENUM
} hw_log_state;
const char *hw_log_state_name(int state); /* never NULL */

/* ---- counters ------------------------------------------------------------ */
#define HW_LOG_COUNTER_TABLE(X)                                                  \
	X(APPEND_CALLS)        /* hw_log_append calls that succeeded */         \
	X(APPEND_BATCHES)      /* batches appended */                           \
	X(APPEND_BYTES)        /* bytes appended */                             \
	X(APPEND_REJECTED)     /* appends refused (malformed / not contiguous) */\
	X(SUBMITS)             /* io_uring_submit calls */                      \
	X(WRITE_SQES)          /* write SQEs issued */                          \
	X(SHORT_WRITES)        /* write CQEs that wrote less; remainder reissued */\
	X(SYNC_SQES)           /* fdatasync SQEs issued */                      \
	X(ROLLS)               /* segments rolled */                            \
	X(READS_MEMORY)        /* reads served zero-copy from the tail buffer */ \
	X(READS_DISK)          /* reads served with pread */                    \
	X(READS_PAST_EMPTY)    /* reads continued past a segment of record-less batches */\
	X(TRUNCATIONS)         /* truncate_to / truncate_fully calls that cut */ \
	X(RETENTION_DELETED)   /* segments deleted by retention */              \
	X(RECOVERED_BATCHES)   /* batches CRC-checked during recovery */        \
	X(CORRUPT_BATCHES)     /* torn/corrupt batches found by recovery */     \
	X(RECOVERY_TRUNCATED_BYTES) /* bytes cut off by recovery */             \
	X(RECOVERY_DELETED_SEGMENTS) /* segments after a corrupt one, deleted */ \
	X(INDEX_REBUILDS)      /* offset indexes rebuilt on open */             \
	X(EPOCH_REBUILDS)      /* epoch caches rebuilt from batches on open */  \
	X(IO_ERRORS)           /* failed I/O (log goes FAILED) */                \
	X(WRITE_CQES)          /* write completions reaped (== WRITE_SQES when idle) */\
	X(INLINE_WRITES)       /* writes done with pwrite(2) by the appending thread */\
	X(APPEND_REF_BYTES)    /* bytes appended by reference (written from the
				* caller's held buffer, not copied) */\
	X(DIRECT_WRITES)       /* O_DIRECT write SQEs (direct_io), padded to blocks */\
	X(DIRECT_REWRITE_BYTES) /* bytes written again: a partial last block re-sent */\
	X(DIRECT_AUTO_SWITCHES) /* HW_LOG_DIRECT_AUTO: changes between buffered and
				 * direct writes */\
	X(RECOVERY_PADDING_BYTES) /* zeros past the last batch (block padding or
				   * preallocation) trimmed by recovery */\
	X(WRITEBACK_WINDOWS)   /* page-cache windows whose writeback was started
				* (writeback_window_bytes) */\
	X(PAGECACHE_DROPPED_BYTES) /* written-back bytes dropped from the page
				    * cache behind the writer */\
	X(PREALLOCATIONS)      /* fallocate steps taken (preallocate_step_bytes) */\
	X(DIRECT_SPLIT_WRITES) /* direct writes split after their partial first
				* block (so neither half spans written and
				* preallocated blocks: see hw_log_io.c) */\
	X(CLEAN_RUNS)          /* compaction passes that rewrote the log (hw_log_clean.h) */\
	X(CLEAN_RECORDS_REMOVED) /* records compaction removed (all reasons) */\
	X(CLEAN_TOMBSTONES_REMOVED) /* of those: tombstones past their delete horizon */\
	X(CLEAN_UNKEYED_REMOVED) /* of those: records without a key */\
	X(CLEAN_BATCHES_REWRITTEN) /* batches rebuilt with the records that stay */\
	X(CLEAN_BATCHES_DROPPED) /* batches of which no record stayed */\
	X(CLEAN_BYTES_FREED)   /* segment bytes compaction removed */\
	X(CLEAN_ERRORS)        /* passes abandoned (undecodable batch, I/O error) */\
	X(CLEAN_SWAPS_RECOVERED) /* half-done segment swaps finished or discarded on open */

typedef enum hw_log_counter {
#define HW_LOG_CTR_ENUM(n, ...) HW_LOG_CTR_##n,
	HW_LOG_COUNTER_TABLE(HW_LOG_CTR_ENUM)
#undef HW_LOG_CTR_ENUM
	HW_LOG_CTR__COUNT
} hw_log_counter;
const char *hw_log_counter_name(int c); /* never NULL */

/* ---- configuration ------------------------------------------------------- */
typedef struct hw_log_config {
	int64_t segment_bytes;        /* log.segment.bytes (1 GiB); >= 14, < 2 GiB */
	int64_t roll_ms;              /* log.roll.ms (7 days) */
	int32_t index_interval_bytes; /* log.index.interval.bytes (4096) */
	int32_t index_size_max_bytes; /* log.index.size.max.bytes (10 MiB, >= 4); roll when full */
	int64_t retention_bytes;      /* retention.bytes (-1: unlimited) */
	int64_t retention_ms;         /* retention.ms (7 days; -1: unlimited) */
	int64_t flush_messages;       /* flush.messages (INT64_MAX), INTERVAL policy */
	int64_t flush_ms;             /* flush.ms (INT64_MAX), INTERVAL policy */
	hw_log_flush_policy flush_policy; /* PAGE_CACHE (Kafka's default) */
	/* hiwater-specific */
	uint32_t chunk_bytes;         /* tail-buffer chunk (128 KiB); one write SQE per chunk
				       * range; only the bytes written into it are touched */
	uint32_t tail_buffer_bytes;   /* written chunks kept for zero-copy reads (512 KiB):
				       * per partition, so kept small; followers fetch right
				       * behind the leader */
	uint32_t ring_entries;        /* io_uring SQ entries (256) */
	int verify_crc_on_append;     /* 1: CRC-check every appended batch (default) */
	int async_writes;             /* 1: IOSQE_ASYNC on every write SQE (always hand the
				       * copy to an io-wq worker). 0 (default): io_uring tries
				       * the write inline and punts it to io-wq itself when it
				       * would block (extending writes usually do) */
	uint32_t inline_write_max_bytes; /* hiwater.log.inline.write.max.bytes (64 KiB): a
				       * write of at most this many bytes is done by the
				       * appending thread with pwrite(2), not through io_uring,
				       * IF the file system cannot complete buffered writes
				       * without blocking (probed at open with RWF_NOWAIT: ext4,
				       * tmpfs). There io_uring hands every buffered write to an
				       * io-wq worker thread and back (~10-40 us of wake-ups on
				       * shared cores; pwrite of 1 KiB into the page cache ~1 us).
				       * On XFS/btrfs io_uring completes them inline and is used.
				       * 0: every write through io_uring. */
	int direct_io;                /* hiwater.log.direct.io: a hw_log_direct_mode.
				       * HW_LOG_DIRECT_ON: segment writes go through an
				       * O_DIRECT descriptor from the aligned tail buffer,
				       * bypassing the page cache (no copy into it, no
				       * writeback); acks then wait for the device, not for a
				       * memcpy. HW_LOG_DIRECT_OFF: Kafka's buffered writes.
				       * HW_LOG_DIRECT_AUTO (the default, chosen by
				       * measurement: perf/README.md "The default write
				       * mode"): direct while the log's recent batches average
				       * direct_auto_batch_bytes or more, buffered otherwise
				       * (docs/storage.md#write-mode). Direct falls back to
				       * buffered writes (logged) where the file system
				       * refuses O_DIRECT. See hw_log_io.c. */
	uint32_t direct_auto_batch_bytes; /* hiwater.log.direct.auto.batch.bytes (32768,
				       * twice a Kafka producer's default batch.size):
				       * with HW_LOG_DIRECT_AUTO, the average batch size from
				       * which the log writes direct; it goes back to buffered
				       * writes below half of it */
	int preallocate;              /* log.preallocate (false): the active segment's file
				       * is fallocate'd ahead of its writes, preallocate_step_bytes
				       * at a time (trimmed to its batches when sealed, before
				       * its fdatasync, and at close, as Kafka's
				       * FileRecords.trim). Direct writes preallocate whether
				       * this is set or not: it keeps ext4 from handing every
				       * write to an io-wq worker (writes inside the file size
				       * onto allocated blocks are issued from io_uring_enter
				       * itself). */
	uint32_t preallocate_step_bytes; /* hiwater.log.preallocate.step.bytes (32 MiB):
				       * the largest step preallocation reaches ahead of the
				       * write position (a new step when less than half of one
				       * is left); a step is as large as the segment already
				       * is, at least 1 MiB, so quiet partitions reserve little;
				       * 0: the whole segment_bytes at once, as Kafka's
				       * log.preallocate. */
	int owner_reactor;            /* the reactor (hw_reactor_cfg.id) that uses the log:
				       * every entry point below that changes it or does
				       * I/O asserts it (HW_ASSERT_OWNER); HW_OWNER_ANY
				       * (the default): not checked. The const getters and
				       * the ref calls are not checked (one-word reads;
				       * refs are released from any thread). */
	uint32_t writeback_window_bytes; /* hiwater.log.writeback.window.bytes (16 MiB;
				       * 0: off, the kernel alone decides): buffered writes
				       * only. Each time the active segment's completed writes
				       * fill a window, its writeback is started
				       * (sync_file_range WRITE, on io_uring), and the window
				       * three behind it, written back by then, is dropped from
				       * the page cache (POSIX_FADV_DONTNEED): the log's cached
				       * footprint stays under 4 windows, so new appends reuse
				       * pages just freed instead of taking fresh ones (on a VM
				       * whose free memory the host reclaims, a fresh page
				       * costs a host fault: perf/README.md). Reads older than
				       * that come from the disk. Never an fsync: no durability
				       * claim changes. See hw_log_io.c "Writeback window". */
	/* log compaction (hw_log_clean.h, docs/compaction.md) */
	int cleanup_policy;           /* cleanup.policy: HW_LOG_CLEANUP_DELETE (Kafka's
				       * default "delete": retention applies), _COMPACT
				       * (hw_log_clean keeps the latest record per key), or both */
	double min_cleanable_dirty_ratio; /* min.cleanable.dirty.ratio (0.5) */
	int64_t delete_retention_ms;  /* delete.retention.ms (86400000): tombstones stay at
				       * least this long after their batch is first cleaned */
	int64_t min_compaction_lag_ms; /* min.compaction.lag.ms (0) */
	int64_t max_compaction_lag_ms; /* max.compaction.lag.ms (INT64_MAX) */
	int64_t cleaner_dedupe_bytes; /* hiwater.log.cleaner.map.bytes: bound of one pass's
				       * key map (64 MiB; Kafka's log.cleaner.dedupe.buffer.size
				       * is 128 MiB shared by its cleaner threads) */
} hw_log_config;

/* Kafka's defaults, as listed above. */
void hw_log_config_default(hw_log_config *c);

/* ---- API ----------------------------------------------------------------- */

/* 1 if this log writes small appends inline with pwrite(2) (see
 * inline_write_max_bytes: configured > 0 and the probe found that the file
 * system punts buffered io_uring writes to a worker thread), else 0. */
int hw_log_writes_inline(const hw_log *log);
/* File-system probes (RWF_NOWAIT, O_DIRECT: a file created, written and
 * unlinked in the log directory) run so far by this process. Their answers
 * are kept per file system (st_dev), so opening more logs on one file
 * system runs none. Never fails. */
uint64_t hw_log_fs_probes_run(void);
/* The block size O_DIRECT writes are aligned to (direct_io on or auto and
 * the file system accepted O_DIRECT at open), or 0: buffered writes only. */
uint32_t hw_log_direct_align(const hw_log *log);
/* 1 if the log's next batch will be written with O_DIRECT (on, or auto and
 * its recent batches are large), else 0. */
int hw_log_writes_direct(const hw_log *log);

/* Open (creating if needed) the log in directory `dir` and recover it.
 * cfg NULL = defaults. Errors: -EINVAL (bad config), -ENOMEM, or -errno of
 * the failing mkdir/open/read/io_uring_queue_init. *out is set only on 0. */
int hw_log_open(const char *dir, const hw_log_config *cfg, hw_log **out);

/* Hand the log to another reactor (a log recovered at start-up on the main
 * thread, claimed by the reactor that leads or follows the partition):
 * later entry points assert owner_reactor. Called on the current owner or
 * a thread without a reactor. Never fails. */
void hw_log_set_owner(hw_log *log, int owner_reactor);

/* The hw_store view (ops as in hw_store.h). Valid until hw_log_close. */
hw_store *hw_log_store(hw_log *log);
/* The log behind a store obtained from hw_log_store; NULL if it is not one. */
hw_log *hw_log_from_store(hw_store *s);

/* hw_store contract. append: -EINVAL (not contiguous with the LEO,
 * malformed framing, bad CRC, codec id 5..7): nothing appended. -EMSGSIZE (a
 * batch larger than log.segment.bytes, Kafka's RecordBatchTooLarge):
 * nothing appended. -EIO (log FAILED): nothing appended. -ENOMEM or -errno
 * of a failed roll (segment file creation) part-way through a call of
 * several batches: the batches before it stay appended (LEO tells). */
int hw_log_append(hw_log *log, const uint8_t *batches, size_t len);

/* hw_log_append for bytes whose every batch CRC the caller has already
 * checked (the leader's produce validation, the follower's fetch-response
 * check): framing, offsets and sizes are still checked, the CRC is not
 * recomputed, whatever verify_crc_on_append says. Same error contract as
 * hw_log_append (a corrupt CRC is not detected here — recovery on open still
 * checks every batch). The store's append_validated op. */
int hw_log_append_validated(hw_log *log, const uint8_t *batches, size_t len);

/* As hw_log_append_validated, keeping the batches where they are: the log
 * writes them from `batches` and serves reads from there, holding the
 * caller's buffer through `ref` until it no longer needs it, then calls
 * release(ref) exactly once — at once when it copied instead (direct_io:
 * O_DIRECT needs block-aligned bytes; batches after a segment roll) or
 * failed. The bytes must not change while held. Error contract of
 * hw_log_append. */
int hw_log_append_validated_ref(hw_log *log, const uint8_t *batches, size_t len, void *ref,
				void (*release)(void *));

/* As hw_log_append_validated_ref (ref may be NULL: the bytes are copied),
 * for a follower copying its leader's batches with their offsets as they
 * are (Kafka's appendAsFollower): a batch may start beyond the end of the
 * one before it (the LEO for the first) — a leader log with a gap; the
 * gap is covered by an empty filler batch so this log stays contiguous.
 * Offsets must still increase, by at most INT32_MAX (-EINVAL otherwise).
 * The store's append_replica op; docs/compaction.md "Fillers". */
int hw_log_append_replica(hw_log *log, const uint8_t *batches, size_t len, void *ref,
			  void (*release)(void *));

/* hw_store contract (whole batches from the one containing start_offset).
 * A non-empty result always carries out->ref (a chunk or read buffer); call
 * hw_log_ref_release(out->ref) when done. Reads never cross a segment or a
 * tail-buffer chunk, so they may return less than max_bytes — except that a
 * read that would hold no batch with records (a cleaned segment that is one
 * filler, or max_bytes 1 on a filler) goes on, copied, past max_bytes and
 * into the following segments up to the first batch with records
 * (docs/compaction.md "Fillers").
 * -ERANGE: start outside [log start, LEO]; -EIO: pread failed or the bytes
 * on disk do not frame as batches; -ENOMEM. */
int hw_log_read(hw_log *log, int64_t start_offset, size_t max_bytes, int64_t max_offset,
		hw_store_read *out);
/* Drop a read hold. Safe from any thread, also after hw_log_close. */
void hw_log_ref_release(void *ref);
/* Take another hold on a ref returned by hw_log_read (for a zero-copy
 * sender: hw_net_ref_ops.hold), released with hw_log_ref_release. The
 * caller must already own a hold on ref (so it cannot be freed meanwhile).
 * Safe from any thread. No error: ref must be a live hw_log_read ref. The
 * bytes a ref covers never change while it is held: a chunk is recycled
 * only when the log holds its last reference, appends only add bytes after
 * every reader's range, and truncation cuts chunks without touching them. */
void hw_log_ref_hold(void *ref);

/* Remove everything at and above `offset`: the batch containing `offset` and
 * all later ones go (so the LEO becomes that batch's base: == offset when it
 * is a batch boundary). offset >= LEO: no-op; offset < log start: as
 * truncate_fully_and_start_at(offset). Waits for in-flight I/O.
 * -EIO (log FAILED or ftruncate failed). */
int hw_log_truncate_to(hw_log *log, int64_t offset);
/* Delete every segment and restart empty at `offset` (start = LEO = offset);
 * clears the epoch cache. -EINVAL (offset < 0), -EIO, -errno of file creation. */
int hw_log_truncate_fully_and_start_at(hw_log *log, int64_t offset);

int64_t hw_log_end_offset(const hw_log *log);
int64_t hw_log_start_offset(const hw_log *log);
int64_t hw_log_durable_end_offset(const hw_log *log);
int64_t hw_log_recovery_point(const hw_log *log);
int64_t hw_log_size_bytes(const hw_log *log);   /* sum of segment sizes */
size_t hw_log_segment_count(const hw_log *log);
/* Base offset of segment i (0 = oldest), -1 if out of range. */
int64_t hw_log_segment_base(const hw_log *log, size_t i);
hw_log_state hw_log_get_state(const hw_log *log);
uint64_t hw_log_counter_get(const hw_log *log, hw_log_counter c);

const hw_epoch_cache *hw_log_epochs(const hw_log *log);
/* Record (epoch, start_offset) as Kafka's assign and persist the checkpoint.
 * 0 or -errno of the checkpoint write / -ENOMEM. */
int hw_log_assign_epoch(hw_log *log, int32_t epoch, int64_t start_offset);

/* Submit pending writes (one io_uring_enter) and reap completions without
 * blocking; may advance the durable end. Returns completions reaped (>= 0),
 * or -EIO once the log has FAILED. */
int hw_log_poll(hw_log *log);
/* SQEs issued whose completion has not been reaped yet (0: no I/O in
 * flight). The ring runs with COOP_TASKRUN: a completion of a write the
 * kernel punted to an io-wq worker is posted (and the wake fd of
 * hw_log_set_wake_fd written) only when the owner thread next enters the
 * kernel, so an owner that sleeps on other fds while this is > 0 must bound
 * its sleep (hiwaterd's log poller deadline). Never fails. */
uint32_t hw_log_io_inflight(const hw_log *log);
/* Like poll but blocks until at least one completion arrives if any I/O is
 * in flight. Returns completions reaped or -EIO. */
int hw_log_wait(hw_log *log);
/* Write everything, fdatasync every segment with unsynced data and wait:
 * afterwards durable end == recovery point == LEO. 0 or -EIO. */
int hw_log_flush(hw_log *log);

/* Register an eventfd that the log's io_uring signals on every completion,
 * so a reactor sleeping in epoll wakes when a write or sync completes (the
 * durable end, which acks wait for, may then advance). One fd may serve
 * many logs. 0, or -errno from io_uring_register_eventfd (-EINVAL: no
 * ring). */
int hw_log_set_wake_fd(hw_log *log, int efd);

/* High-watermark checkpoint (Kafka's replication-offset-checkpoint, kept
 * per partition in `high-watermark-checkpoint`). write: 0, -EINVAL (hw <
 * 0), or -errno of the file write/rename. read: the checkpointed HW
 * clamped to [log start, LEO], or -1 if there is none or it is malformed
 * (logged). */
int hw_log_write_hw_checkpoint(hw_log *log, int64_t hw);
int64_t hw_log_read_hw_checkpoint(hw_log *log);

/* Delete whole oldest segments past retention.ms (largest batch timestamp
 * older than now_ms - retention.ms) or beyond retention.bytes (Kafka's
 * rules; an empty active segment is never deleted — if every segment goes,
 * the log rolls first). Moves the log start and the epoch cache's start.
 * Returns the number of segments deleted, or -EIO. */
int hw_log_apply_retention(hw_log *log, int64_t now_ms);
/* As hw_log_apply_retention, deleting only segments that end at or below
 * max_offset (the HW bound of UnifiedLog.deleteOldSegments); the active
 * segment is rolled and deleted only when max_offset >= LEO. */
int hw_log_apply_retention_below(hw_log *log, int64_t now_ms, int64_t max_offset);

/* Per-topic configuration (hw_log_tconf.c, docs/kafka.md "Topic
 * configuration"): apply the LOG rows of tc (cleanup.policy, retention.ms,
 * retention.bytes, segment.bytes, segment.ms, segment.index.bytes,
 * index.interval.bytes, flush.messages, flush.ms, delete.retention.ms,
 * min/max.compaction.lag.ms, min.cleanable.dirty.ratio, preallocate) over
 * the config the log was opened with; keys not set in tc take that config's
 * value again. Retention, rolling and the cleaner read them from their next
 * decision on (a smaller segment.bytes rolls at the next append). Returns 1
 * if the log's config changed, 0 if not. Never fails. */
int hw_log_set_topic_config(hw_log *log, const hw_topic_config *tc);
/* The log's config in force (the broker-wide one with the topic's
 * overrides). Never NULL. */
const hw_log_config *hw_log_get_config(const hw_log *log);

/* Flush (as hw_log_flush), write the indexes and checkpoints, free. NULL ok.
 * Outstanding read refs stay valid until released. */
void hw_log_close(hw_log *log);

#endif
