/* hw_log_clean_int.h — the cleaner's parts below the driver (hw_log_clean.c):
 * the key -> latest offset map (hw_log_clean_map.c) and the filter that
 * rewrites one batch (hw_log_clean_batch.c). The filter decodes records of
 * bytes read from disk: it is bounds-checked like every decoder and has a
 * libFuzzer target (tests/engine/log/fuzz_clean_batch.c). Not for use outside
 * engine/log and its tests. */
#ifndef HW_LOG_CLEAN_INT_H
#define HW_LOG_CLEAN_INT_H
#include <stddef.h>
#include <stdint.h>

/* ---- key map ------------------------------------------------------------- */
/* Exact keys (copied), so a hash collision can never drop a live record
 * (Kafka's SkimpyOffsetMap keeps MD5 digests instead). Bounded by
 * max_bytes of keys plus slots. */
typedef struct hw_clean_map hw_clean_map;

/* NULL on ENOMEM. max_bytes: the bound put enforces (>= 4096). */
hw_clean_map *hw_clean_map_new(size_t max_bytes);
void hw_clean_map_free(hw_clean_map *m);
/* Set key -> value (replacing). 0, -ENOSPC (the map is at max_bytes;
 * nothing changed) or -ENOMEM. */
int hw_clean_map_put(hw_clean_map *m, const uint8_t *key, size_t len, int64_t value);
/* The value for key, or -1 if absent. */
int64_t hw_clean_map_get(const hw_clean_map *m, const uint8_t *key, size_t len);
size_t hw_clean_map_count(const hw_clean_map *m);

/* ---- one batch ----------------------------------------------------------- */
/* 1 if the record of `key` at `offset` is the latest for its key. */
typedef int (*hw_clean_latest_fn)(void *ctx, const uint8_t *key, int32_t key_len, int64_t offset);

typedef struct hw_clean_filter {
	int64_t now_ms;              /* delete horizons are compared with this */
	int64_t delete_retention_ms; /* delete.retention.ms: a new horizon is now + this */
	hw_clean_latest_fn latest;
	void *ctx;
	int retain_empty;            /* keep an empty batch (no records, same offsets and
				      * producer fields) when no record stays: the last batch
				      * of its producer, or of the log (Kafka's RETAIN_EMPTY) */
} hw_clean_filter;

#define HW_CLEAN_ACTION_TABLE(X) \
	X(COPY)    /* keep the original bytes */ \
	X(DROP)    /* nothing stays */ \
	X(REWRITE) /* out holds the rebuilt batch */
typedef enum hw_clean_action {
#define HW_CLEAN_ACT_ENUM(n) HW_CLEAN_##n,
	HW_CLEAN_ACTION_TABLE(HW_CLEAN_ACT_ENUM)
#undef HW_CLEAN_ACT_ENUM
} hw_clean_action;
const char *hw_clean_action_name(int a); /* never NULL */

typedef struct hw_clean_buf {
	uint8_t *p;
	size_t cap;
} hw_clean_buf;

typedef struct hw_clean_outcome {
	hw_clean_action action;
	size_t len;                /* REWRITE: bytes of the new batch in out->p */
	int32_t kept, removed;     /* records */
	int32_t unkeyed;           /* of removed: records without a key */
	int32_t tombstones_removed;
	int64_t horizon;           /* delete horizon of the kept batch if it still holds a
				    * tombstone, else -1 */
} hw_clean_outcome;

/* Decide the cleaned form of the batch at b[0..len) (one whole batch:
 * framing, CRC and records are checked with HW_BATCH_V_COMPACTED, a
 * compressed records section is decompressed and, if rebuilt, compressed
 * again with the same codec). out grows as needed (realloc; free p when
 * done). Control batches are copied. Returns 0 with *res filled, a
 * negative hw_batch_rc (the batch does not decode), or -ENOMEM / -EINVAL. */
int hw_clean_batch(const uint8_t *b, size_t len, const hw_clean_filter *f, hw_clean_buf *out,
		   hw_clean_outcome *res);

/* A filler: an empty batch (no records, no producer, codec none) that
 * covers offsets [base, last] whose batches compaction dropped, so a log
 * stays contiguous — every offset below the LEO lies in some batch, which
 * recovery checks (docs/compaction.md "Fillers"). Writes HW_BATCH_HEADER_SIZE
 * bytes at out, CRC set. last - base must be in [0, INT32_MAX]. */
void hw_clean_filler(uint8_t *out, int64_t base, int64_t last, int32_t epoch, int64_t ts);

#endif
