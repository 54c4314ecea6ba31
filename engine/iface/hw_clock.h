/* hw_clock.h — the clock the engine reads. Real (CLOCK_MONOTONIC) in brokers,
 * simulated in the deterministic harness. Kafka's rules are in milliseconds;
 * latency accounting wants nanoseconds, so the clock gives ns. */
#ifndef HW_CLOCK_H
#define HW_CLOCK_H
#include <stdint.h>

typedef struct hw_clock hw_clock;
struct hw_clock {
	/* Monotonic nanoseconds. Never fails, never goes backwards. */
	int64_t (*now_ns)(hw_clock *c);
};

static inline int64_t hw_clock_ns(hw_clock *c) { return c->now_ns(c); }
static inline int64_t hw_clock_ms(hw_clock *c) { return c->now_ns(c) / 1000000; }

/* The process-wide CLOCK_MONOTONIC clock. */
hw_clock *hw_clock_monotonic(void);

#endif
