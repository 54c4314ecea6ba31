/* hw_store.h — the "disk" the replication engine writes a partition to.
 *
 * Two implementations: the io_uring segmented log (engine/log, hw_log_*) and
 * an in-memory store (engine/repl/hw_memstore.c) for the deterministic
 * harness. The engine never sees which one it has.
 *
 * Offsets: the store holds whole RecordBatch v2 batches with offsets already
 * assigned (the leader assigns them in place before append; a follower
 * appends the leader's bytes verbatim). LEO = last offset + 1 of the last
 * batch. The store keeps the leader-epoch cache in step with appends (from
 * each batch's partitionLeaderEpoch) and truncation.
 *
 * Durability: `durable_end_offset` is how far the configured flush policy is
 * satisfied. With Kafka's default policy (page cache only) it equals the LEO
 * as soon as append returns. With fsync-before-ack it trails until the
 * fdatasync completes (reaped by `poll`); the engine acknowledges — and a
 * follower reports as its fetch offset — only up to it.
 *
 * All functions: single-threaded, owned by the partition's reactor. Error
 * contract: 0 (or a count) on success, negative errno on failure; a failed
 * call leaves the store unchanged unless it says otherwise.
 */
#ifndef HW_STORE_H
#define HW_STORE_H
#include <stddef.h>
#include <stdint.h>
#include "hw_epoch.h"
#include "hw_topic_config.h"

typedef struct hw_store hw_store;

/* Result of a read: whole batches, contiguous. `data` stays valid until the
 * next call that mutates the store (append, truncate, retention) — or, if
 * `ref` is non-NULL, until hw_store_ops.release(ref) (zero-copy holds). */
typedef struct hw_store_read {
	const uint8_t *data;
	size_t len;
	int64_t first_offset;   /* base offset of the first batch, -1 if none */
	int64_t next_offset;    /* last offset + 1 of the last batch returned */
	void *ref;              /* buffer hold for zero-copy senders, or NULL */
} hw_store_read;

typedef struct hw_store_ops {
	/* Append whole batches; the first batch's base offset must equal the LEO
	 * and offsets must be contiguous. -EINVAL: not contiguous / malformed;
	 * -ENOSPC, -EIO: storage error (store unchanged). */
	int (*append)(hw_store *s, const uint8_t *batches, size_t len);

	/* Read whole batches starting with the batch containing `start_offset`,
	 * up to max_bytes — but at least one whole batch if any exists (as Kafka,
	 * so an oversized batch still makes progress), and nothing at or beyond
	 * `max_offset` (pass INT64_MAX for "up to LEO"; a batch straddling
	 * max_offset is not returned). start == LEO: 0 with len 0.
	 * -ERANGE: start < log start or > LEO (OFFSET_OUT_OF_RANGE). */
	int (*read)(hw_store *s, int64_t start_offset, size_t max_bytes, int64_t max_offset,
		    hw_store_read *out);

	/* Release a zero-copy hold returned in hw_store_read.ref. May be NULL
	 * when the store never returns refs. */
	void (*release)(hw_store *s, void *ref);

	/* Remove everything at and above `offset` (no-op if offset >= LEO).
	 * The epoch cache drops entries starting at or after it. */
	int (*truncate_to)(hw_store *s, int64_t offset);

	/* Remove everything; the log restarts empty at `offset` (start = LEO = offset). */
	int (*truncate_fully_and_start_at)(hw_store *s, int64_t offset);

	int64_t (*log_end_offset)(hw_store *s);
	int64_t (*log_start_offset)(hw_store *s);
	int64_t (*durable_end_offset)(hw_store *s);

	/* The epoch cache; the engine reads it, and writes only through
	 * assign_epoch (a new leader records (epoch, LEO)), which persists it. */
	const hw_epoch_cache *(*epochs)(hw_store *s);
	int (*assign_epoch)(hw_store *s, int32_t epoch, int64_t start_offset);

	/* Reap asynchronous completions (io_uring CQEs); may advance the durable
	 * end. Returns the number of completions reaped (>= 0) or -errno. */
	int (*poll)(hw_store *s);

	/* Flush per policy and release everything. */
	void (*close)(hw_store *s);

	/* (added) As append, for bytes whose every batch CRC-32C the caller has
	 * already checked (leader produce validation, follower fetch check), so
	 * the store need not recompute it; framing and contiguity are still
	 * checked, same error contract as append. May be NULL: callers use
	 * hw_store_append_validated, which falls back to append. */
	int (*append_validated)(hw_store *s, const uint8_t *batches, size_t len);

	/* (added) Retention (Kafka's LogManager.cleanupLogs ->
	 * UnifiedLog.deleteOldSegments): delete whole oldest segments past the
	 * store's retention.ms / retention.bytes, but only segments that end
	 * at or below `max_offset` (the caller passes the partition's HW:
	 * nothing a consumer cannot read yet is deleted). Moves the log start
	 * offset. Returns the number of segments deleted (>= 0) or -EIO. May
	 * be NULL: the store keeps everything. */
	int (*apply_retention)(hw_store *s, int64_t max_offset);

	/* (added) High-watermark checkpoint (Kafka's
	 * replication-offset-checkpoint, written every
	 * replica.high.watermark.checkpoint.interval.ms and at close).
	 * write: 0 or -errno. read: the HW last written, clamped to
	 * [log start, LEO], or -1 if none. Both may be NULL (the HW then
	 * starts at the log start after a restart). */
	int (*write_hw_checkpoint)(hw_store *s, int64_t hw);
	int64_t (*read_hw_checkpoint)(hw_store *s);

	/* (added) As append_validated, with a hold on the buffer holding the
	 * batches (hw_rxhold.h: a received mbuf): the store may keep pointers
	 * into `batches` instead of copying them and write them from there.
	 * The hold passes to the store whatever the result: it calls
	 * release(ref) exactly once, when it no longer needs the bytes (at
	 * once if it copied them or failed). Same error contract as append.
	 * May be NULL: hw_store_append_validated_ref copies and releases. */
	int (*append_validated_ref)(hw_store *s, const uint8_t *batches, size_t len, void *ref,
				    void (*release)(void *ref));

	/* (added) As append_validated_ref (ref may be NULL: copied), for a
	 * follower appending its leader's batches with their offsets as they
	 * are: a batch may start beyond the end of the one before it (the LEO
	 * for the first) — a compacted leader log has gaps (Kafka's
	 * appendAsFollower; docs/compaction.md). Offsets must still increase.
	 * May be NULL: the store cannot follow a gap. */
	int (*append_replica)(hw_store *s, const uint8_t *batches, size_t len, void *ref,
			      void (*release)(void *ref));

	/* (added) Log compaction (Kafka's LogCleaner): if the store's
	 * cleanup.policy has compact and a pass is due, keep only the latest
	 * record per key in closed segments that end at or below max_offset
	 * (the HW). Returns 1 (cleaned), 0 (nothing due), or negative errno.
	 * May be NULL: the store keeps everything. docs/compaction.md */
	int (*clean)(hw_store *s, int64_t max_offset);

	/* (added) 1 if the store's cleanup.policy has compact: the leader
	 * then refuses records without a key (Kafka's LogValidator:
	 * INVALID_RECORD), since the cleaner would drop them. May be NULL:
	 * not compacted. */
	int (*compacted)(hw_store *s);

	/* (added) The topic's configs (PARTITION_STATE tconf): the store
	 * applies the keys it reads (cleanup.policy, retention.*, segment.*,
	 * the cleaner's keys, ...) on top of the broker-wide values it was
	 * opened with; a key no longer set falls back to that value. Called
	 * on every push that changes them, also for an open log. Returns 1
	 * (changed), 0 (nothing changed), or negative errno. May be NULL: the
	 * store follows the broker-wide values. docs/kafka.md "Topic
	 * configuration" */
	int (*set_topic_config)(hw_store *s, const hw_topic_config *tc);
} hw_store_ops;

struct hw_store {
	const hw_store_ops *ops;
};

/* Append bytes the caller has CRC-checked: ops->append_validated if the
 * store has it, else ops->append. Error contract of append. */
static inline int hw_store_append_validated(hw_store *s, const uint8_t *batches, size_t len)
{
	return s->ops->append_validated ? s->ops->append_validated(s, batches, len)
					: s->ops->append(s, batches, len);
}

/* Append with a buffer hold (ops->append_validated_ref), or copy and
 * release the hold at once if the store cannot keep it. The hold is
 * released exactly once in every case. Error contract of append. */
static inline int hw_store_append_validated_ref(hw_store *s, const uint8_t *batches, size_t len,
						void *ref, void (*release)(void *ref))
{
	if (s->ops->append_validated_ref)
		return s->ops->append_validated_ref(s, batches, len, ref, release);
	int rc = hw_store_append_validated(s, batches, len);
	release(ref);
	return rc;
}

#endif
