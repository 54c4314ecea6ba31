/* hw_purg.h — the purgatory: delayed operations on a timing wheel, keyed by
 * partition (Kafka's DelayedOperationPurgatory, docs/replication.md#purgatory).
 *
 * Design note. A request that cannot be answered yet (acks=all produce
 * waiting for the HW, a fetch waiting for bytes) becomes a delayed
 * operation (hw_dop). try_complete_else_watch runs its check once; if it is
 * not satisfied the op is put on the watch list of every partition it
 * concerns (hw_purg_key, embedded in the partition — no hash map on the hot
 * path), checked again (closing the race with a state change between the
 * first check and the watch), and armed on the wheel with its deadline.
 * When a partition's state changes (HW advance: produce and fetch; LEO
 * change: fetch) the owner calls check_and_complete on that key.
 *
 * Exactly once: an op completes once — satisfied, expired (wheel) or forced
 * (leadership lost, partition removed) — guarded by a flag; the first
 * completion cancels the timer and runs on_complete. Completed ops linger on
 * other keys' watch lists until those are scanned; a key is compacted before
 * it grows (so a list never holds more than twice its live ops) and on every
 * check. Memory: an op is reference counted (the owner's reference until
 * completion, plus one per watch-list entry) and freed through ops->free
 * when the last reference goes.
 *
 * Single-threaded (one reactor), so there is no lock: Kafka's per-op lock
 * and CAS become a plain flag. Time unit: milliseconds of the wheel.
 */
#ifndef HW_PURG_H
#define HW_PURG_H
#include <stddef.h>
#include <stdint.h>
#include "hw_wheel.h"

#define HW_DOP_REASON_TABLE(X) \
	X(PENDING)   /* not completed yet */ \
	X(SATISFIED) /* try_complete said yes */ \
	X(EXPIRED)   /* deadline reached */ \
	X(FORCED)    /* completed by the owner (leader change, removal) */

typedef enum hw_dop_reason {
#define HW_DOP_REASON_ENUM(n) HW_DOP_##n,
	HW_DOP_REASON_TABLE(HW_DOP_REASON_ENUM)
#undef HW_DOP_REASON_ENUM
	HW_DOP_REASON_MAX
} hw_dop_reason;
const char *hw_dop_reason_name(int r); /* never NULL */

typedef struct hw_dop hw_dop;
typedef struct hw_purg hw_purg;

typedef struct hw_dop_ops {
	/* 1 if the operation can complete now (its result is computed by
	 * on_complete), 0 if it must keep waiting. Must not complete the op.
	 * hint: -1 for a full check; otherwise the index (in the keys array
	 * given to try_complete_else_watch) of the key whose state changed, so
	 * an op watching many partitions can look at just that one (a fetch of
	 * 10,000 partitions must not rescan them all on every append). */
	int (*try_complete)(hw_dop *op, int hint);
	/* Runs exactly once per op, with the reason. Typically sends the
	 * response. May call any purgatory function except on this op. */
	void (*on_complete)(hw_dop *op, int reason);
	/* Release the op's memory (last reference gone). */
	void (*free)(hw_dop *op);
} hw_dop_ops;

struct hw_dop {
	const hw_dop_ops *ops;
	hw_purg *purg;
	hw_timer timer;
	uint32_t refs;
	uint8_t reason;          /* hw_dop_reason; PENDING until completed */
};

/* A watch list; embed one per partition per purgatory, zero-initialised. */
typedef struct hw_purg_watch {
	hw_dop *op;
	int32_t hint;            /* the key's index in the op's keys array */
} hw_purg_watch;

typedef struct hw_purg_key {
	hw_purg_watch *v;
	uint32_t n, cap;
	uint32_t scanning;       /* >0 while check/force iterates: no compaction */
} hw_purg_key;

typedef struct hw_purg_stats {
	uint64_t created;
	uint64_t completed[HW_DOP_REASON_MAX];
	uint64_t live;           /* created and not completed */
	uint64_t watched;        /* entries on watch lists (incl. completed) */
} hw_purg_stats;

/* name is for logs ("produce", "fetch"). The wheel is borrowed (ms units).
 * NULL on allocation failure. */
hw_purg *hw_purg_create(const char *name, hw_wheel *wheel);
/* Drops every live op without completing it (process exit) — keys must
 * have been released first with hw_purg_key_release. NULL is a no-op. */
void hw_purg_destroy(hw_purg *p);

void hw_dop_init(hw_dop *op, const hw_dop_ops *ops);

/* Kafka tryCompleteElseWatch. Returns 1 when the op completed (on_complete
 * ran; the op may already be freed), 0 when it is parked until
 * deadline_ms, -ENOMEM when it could not be watched (the op was then
 * force-completed with HW_DOP_FORCED, so the caller still gets exactly one
 * on_complete). */
int hw_purg_try_complete_else_watch(hw_purg *p, hw_dop *op, int64_t deadline_ms,
				    hw_purg_key *const *keys, int nkeys);

/* Kafka checkAndComplete: try every live op watching key, complete the
 * satisfied ones, drop completed ones from the list. Returns how many this
 * call completed. */
size_t hw_purg_check_and_complete(hw_purg *p, hw_purg_key *key);

/* Complete every live op watching key with `reason` (FORCED), regardless of
 * try_complete. Returns how many it completed. */
size_t hw_purg_force_all(hw_purg *p, hw_purg_key *key);

/* Complete op now with reason (SATISFIED, EXPIRED or FORCED). Returns 1 if
 * this call completed it, 0 if it was already complete. */
int hw_purg_complete(hw_purg *p, hw_dop *op, int reason);

/* Drop the list's references (its ops must be complete — force_all first).
 * Frees the list memory; the key may be reused. */
void hw_purg_key_release(hw_purg *p, hw_purg_key *key);

void hw_purg_get_stats(const hw_purg *p, hw_purg_stats *out);

#endif
