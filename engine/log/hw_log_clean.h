/* hw_log_clean.h — log compaction (cleanup.policy=compact): the cleaner
 * that keeps the latest record of every key in a partition's closed
 * segments, as Kafka's LogCleaner. docs/compaction.md describes the rules
 * and the Kafka source each follows.
 *
 * Design note. A pass works on one log, on the owning reactor's thread
 * (the log has one owner): it finds the cleanable range — whole closed
 * segments from the log start up to the first segment that is active, ends
 * above the caller's bound (the HW: nothing uncommitted is cleaned, a
 * follower may truncate it), or is younger than min.compaction.lag.ms —
 * builds a map key -> latest offset over its dirty part (the segments at
 * and after the first dirty offset, kept in `cleaner-offset-checkpoint`),
 * then rewrites the range in groups of segments whose sizes add up to at
 * most segment.bytes. Each batch is copied byte for byte when every record
 * stays, dropped when none does (a run of dropped batches becomes one
 * empty filler batch, so the log stays contiguous), or rebuilt with the
 * records that stay, keeping its base offset and lastOffsetDelta (so
 * offsets never change and an idempotent producer's last sequence stays);
 * a rebuilt batch gets a new CRC. Tombstones (null values) that are the
 * latest for their key stay until the batch's delete horizon (set to
 * now + delete.retention.ms the first time the batch is cleaned, Kafka's
 * KIP-534 DELETE_HORIZON attribute) has passed.
 *
 * Crash safety: a group's output is written to `<base>.log.cleaned` and
 * fdatasync'ed; `<base>.swap-end` (the end offset of the segments it
 * replaces) is written atomically; the rename to `<base>.log.swap` is the
 * commit point; then the replaced segments are deleted and the swap is
 * renamed over `<base>.log`. Opening the log (hw_log_clean_recover) deletes
 * a `.cleaned` file (the old segments are intact) and finishes a `.swap`.
 */
#ifndef HW_LOG_CLEAN_H
#define HW_LOG_CLEAN_H
#include <stddef.h>
#include <stdint.h>
#include "hw_log.h"

/* cleanup.policy bits (hw_log_config.cleanup_policy) */
#define HW_LOG_CLEANUP_DELETE 1
#define HW_LOG_CLEANUP_COMPACT 2
/* "delete", "compact", "compact,delete" / "delete,compact" (Kafka's list
 * syntax, spaces allowed) -> bits; -EINVAL for anything else or empty. */
int hw_log_cleanup_policy_parse(const char *s);
/* "delete", "compact" or "compact,delete"; never NULL. */
const char *hw_log_cleanup_policy_name(int bits);

typedef struct hw_log_clean_result {
	int64_t first_dirty;      /* where the dirty part started */
	int64_t end;              /* first offset not cleaned (cleanable end) */
	int64_t bytes_before;     /* of the cleaned range */
	int64_t bytes_after;
	int64_t records_removed;  /* superseded, unkeyed, or expired tombstones */
	int64_t tombstones_removed;
	int64_t batches_rewritten;
	int64_t batches_dropped;
	int64_t batches_copied;
	int segments_before, segments_after;
	double dirty_ratio;       /* the ratio that made it due */
} hw_log_clean_result;

/* Clean `log` if it is due (cleanup.policy has compact, and the dirty
 * ratio of its cleanable range is >= min.cleanable.dirty.ratio, or a dirty
 * segment is older than max.compaction.lag.ms, or a delete horizon of the
 * last pass has passed, or `force`). now_ms: the clock batch timestamps
 * and delete horizons are compared with (wall clock; tests inject one).
 * max_offset: nothing at or above it is cleaned (the HW). res may be NULL.
 * Returns 1 (cleaned), 0 (nothing due or cleanable), or -EIO (log FAILED,
 * or an I/O error: the log stays as it was or, past the commit point,
 * consistent with the new segment), -EBADMSG (a batch in the range does not
 * decode: counted, the log is left unchanged), -ENOMEM. Owner thread only;
 * it blocks on file I/O (reads and writes of the range). */
int hw_log_clean(hw_log *log, int64_t now_ms, int64_t max_offset, int force, hw_log_clean_result *res);

/* The first dirty offset (log start if never cleaned). */
int64_t hw_log_clean_first_dirty(hw_log *log);

/* Test hook: make the next hw_log_clean stop after step `step` of a group
 * swap (1: .cleaned written, 2: swap-end written, 3: renamed to .swap,
 * 4: old segments deleted) and return -EINTR, leaving the files as a crash
 * there would. 0: off. */
void hw_log_clean_set_crash_step(hw_log *log, int step);

#endif
