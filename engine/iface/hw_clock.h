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

/* A request correlation id no earlier process of this node used: the clock
 * in microseconds (31 bits, never 0), at least one more than the last id
 * (*last, 0 at start, kept by the caller). An answer addressed to a
 * previous process of the same node (answered after a restart) then
 * carries an id this process never sent. Never fails. */
static inline uint32_t hw_clock_corr_next(hw_clock *c, uint64_t *last)
{
	int64_t ns = hw_clock_ns(c);
	uint64_t us = ns > 0 ? (uint64_t)ns / 1000 : 0;
	*last = *last + 1 > us ? *last + 1 : us;
	uint32_t id = (uint32_t)(*last & 0x7FFFFFFFu);
	if (id == 0) {
		(*last)++;
		id = 1;
	}
	return id;
}

/* The process-wide CLOCK_MONOTONIC clock. */
hw_clock *hw_clock_monotonic(void);

#endif
