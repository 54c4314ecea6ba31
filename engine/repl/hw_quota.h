/* hw_quota.h — the replication throttle's byte-rate quota (Kafka
 * ReplicationQuotaManager over a sampled Rate).
 *
 * Design note. A quota has a bound (bytes/s; INT64_MAX = unthrottled, as
 * Kafka's Long.MAX_VALUE default) and a windowed rate made of `samples`
 * consecutive windows of `window_ms` each (Kafka replication.quota.window.num
 * = 11, replication.quota.window.size.seconds = 1), exactly as the
 * SampledStat + SimpleRate that Kafka's ReplicationQuotaManager uses:
 *   - record(bytes, now): the current sample takes the bytes; a sample is
 *     complete once window_ms have passed since it started, and the next
 *     record starts a new one (overwriting the oldest: a ring).
 *   - rate(now): samples that started samples * window_ms or more ago are
 *     emptied (restarted at now); rate = sum of the samples / elapsed,
 *     where elapsed = now - start of the oldest sample, but at least one
 *     window (SimpleRate; Kafka's client-quota Rate pads to samples-1
 *     windows instead).
 *   - exceeded(now): rate(now) > bound.
 * Consequence (as in Kafka): a fresh or idle quota admits about one
 * window's worth (window * bound) at once, then the measured rate is held
 * at the bound; the admitted bytes over t seconds stay below
 * bound * (t + window) plus what one check lets through (a fetch). It is
 * a pure function of the (fake or real) clock values passed in:
 * deterministic.
 *
 * Callers check exceeded() before sending/fetching throttled bytes and
 * record() the bytes afterwards (Kafka checks, then records the response).
 */
#ifndef HW_QUOTA_H
#define HW_QUOTA_H
#include <stdint.h>

#define HW_QUOTA_UNLIMITED INT64_MAX  /* Long.MAX_VALUE: no throttle */
#define HW_QUOTA_MAX_SAMPLES 64

typedef struct hw_quota_sample {
	int64_t start_ms;
	int64_t bytes;
} hw_quota_sample;

typedef struct hw_quota {
	int64_t bound;                /* bytes/s */
	int64_t window_ms;
	int samples;                  /* 1..HW_QUOTA_MAX_SAMPLES */
	int used;                     /* samples started so far (<= samples) */
	int cur;                      /* index of the current sample */
	hw_quota_sample s[HW_QUOTA_MAX_SAMPLES];
	uint64_t recorded_bytes;      /* every byte ever recorded */
} hw_quota;

/* Initialise. 0, or -EINVAL for bound < 0, samples outside
 * 1..HW_QUOTA_MAX_SAMPLES or window_ms < 1 (q then left unlimited). */
int hw_quota_init(hw_quota *q, int64_t bound, int samples, int64_t window_ms);

/* Change the bound at runtime, keeping the measured samples. 0 / -EINVAL. */
int hw_quota_set_bound(hw_quota *q, int64_t bound);

/* Account bytes (>= 0; negative ignored) at time now_ms (non-decreasing). */
void hw_quota_record(hw_quota *q, int64_t bytes, int64_t now_ms);

/* The measured rate in bytes/s at now_ms (0 when nothing recorded). */
double hw_quota_rate(hw_quota *q, int64_t now_ms);

/* 1 when the measured rate exceeds the bound; always 0 when unlimited. */
int hw_quota_exceeded(hw_quota *q, int64_t now_ms);

/* How long (ms, >= 1) until the measured rate falls back to the bound if
 * nothing more is recorded; 0 when not exceeded now. (Samples expiring may
 * make it sooner: a safe re-check time, not an exact one.) */
int64_t hw_quota_wait_ms(hw_quota *q, int64_t now_ms);

#endif
