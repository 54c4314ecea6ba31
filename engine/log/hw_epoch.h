/* hw_epoch.h — the leader-epoch cache (Kafka's LeaderEpochFileCache).
 *
 * Design note. Each leader epoch starts at an offset: the leader's LEO when
 * it was elected. Followers compare their cache with the leader's to find
 * where their logs diverge (KIP-101/279/320): the leader answers "for epoch
 * E, my log ends at offset X" (end_offset_for), and the follower truncates
 * there. Entries are strictly increasing in both epoch and start offset.
 * The cache is rebuilt from v2 batches' partitionLeaderEpoch on append and
 * persisted as `leader-epoch-checkpoint` (version 0, count, "epoch offset").
 *
 * Single-threaded: owned by the reactor that owns the partition.
 */
#ifndef HW_EPOCH_H
#define HW_EPOCH_H
#include <stddef.h>
#include <stdint.h>

typedef struct hw_epoch_entry {
	int32_t epoch;
	int64_t start_offset;
} hw_epoch_entry;

typedef struct hw_epoch_cache {
	hw_epoch_entry *v;
	size_t n, cap;
} hw_epoch_cache;

void hw_epoch_init(hw_epoch_cache *c);
void hw_epoch_free(hw_epoch_cache *c);

/* Kafka `assign(e, o)` (LeaderEpochFileCache.isUpdateNeeded): acts only if
 * e differs from the latest epoch, or o is below the latest start; then it
 * first drops tail entries with epoch >= e or start >= o, and adds (e, o).
 * e < 0 or o < 0 is ignored (Kafka throws). Returns 1 if the cache changed,
 * 0 if not, -ENOMEM. */
int hw_epoch_assign(hw_epoch_cache *c, int32_t epoch, int64_t start_offset);

/* Drop entries with start >= end_offset (log truncated to end_offset). */
void hw_epoch_truncate_from_end(hw_epoch_cache *c, int64_t end_offset);

/* Drop entries with start <= start_offset, re-adding the last dropped one at
 * start_offset (log start moved). */
void hw_epoch_truncate_from_start(hw_epoch_cache *c, int64_t start_offset);

/* Latest epoch, or -1 if empty. */
int32_t hw_epoch_latest(const hw_epoch_cache *c);
/* Start offset of the latest epoch, or -1 if empty. */
int64_t hw_epoch_latest_start(const hw_epoch_cache *c);
/* Largest epoch <= e's entry exists? Returns that epoch or -1. */
int32_t hw_epoch_floor(const hw_epoch_cache *c, int32_t e);

/* Kafka `endOffsetFor(requested, leo)`:
 *   requested == -1            -> (-1, -1)
 *   requested == latest        -> (latest, leo)
 *   no entry > requested       -> (-1, -1)   [requested above all we know]
 *   no entry <= requested      -> (requested, start of first entry)
 *   else                       -> (largest epoch <= requested, start of next) */
void hw_epoch_end_offset_for(const hw_epoch_cache *c, int32_t requested, int64_t leo,
			     int32_t *out_epoch, int64_t *out_end_offset);

/* Checkpoint file I/O (atomic write: tmp + fsync + rename).
 * write: 0 or -errno. read: 0, -ENOENT (no file: empty cache), -EBADMSG
 * (malformed file: cache left empty; caller rebuilds from the log). */
int hw_epoch_write_checkpoint(const hw_epoch_cache *c, const char *path);
int hw_epoch_read_checkpoint(hw_epoch_cache *c, const char *path);

#endif
