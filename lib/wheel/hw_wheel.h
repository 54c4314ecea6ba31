/* hw_wheel.h — hierarchical timing wheel (Varghese & Lauck), as Kafka's
 * purgatory timer (TimingWheel.java / SystemTimer.java).
 *
 * Design note. Level 0 has `wheel_size` buckets of `tick` time units each;
 * level k+1 has the same number of buckets, each as wide as all of level k.
 * Overflow levels are created on demand, so a timeout hours away costs a few
 * levels, not millions of buckets. A timer lives in exactly one bucket's
 * intrusive doubly linked list: add is O(levels), cancel O(1). advance_to
 * walks the buckets whose time has come; timers in a coarse bucket are
 * re-inserted into finer levels (cascade) or fired. Every timer fires
 * exactly once unless cancelled first.
 *
 * Reentrancy: a callback may add, cancel (itself or any other timer,
 * including ones due in the same advance) and re-arm; advance_to never fires
 * a timer that was cancelled before its callback ran, and a timer added
 * during advance_to with an expiry <= now fires within the same call.
 *
 * Time units are the caller's (purgatory: ms); times are >= 0 (an expiry
 * below 0 is simply already due). Single-threaded; owned by one reactor.
 * Timers are caller-allocated and intrusive (no malloc per add; the only
 * allocation is a new overflow level, at most ~63/log2(wheel_size) times).
 *
 * Firing time. A timer never fires before its expiry, and always fires in
 * the first advance_to whose `now` is >= its expiry. Inside a callback
 * hw_wheel_now() is the time being processed: >= the timer's expiry, <= the
 * advance_to argument, and normally equal to the expiry (a timer added by a
 * callback into the level-0 tick being processed may see up to tick-1 more).
 * The ready set is a min-heap of non-empty buckets (Kafka's DelayQueue of
 * TimerTaskLists), so advance_to jumps straight over idle hours.
 */
#ifndef HW_WHEEL_H
#define HW_WHEEL_H
#include <stddef.h>
#include <stdint.h>

typedef struct hw_timer hw_timer;
typedef void (*hw_timer_fn)(hw_timer *t, void *arg);

struct hw_timer {
	hw_timer *next, *prev;   /* bucket list; NULL when not pending */
	int64_t expires;
	hw_timer_fn fn;
	void *arg;
	void *bucket;            /* internal: the list it is on */
};

typedef struct hw_wheel hw_wheel;

/* Create a wheel whose clock starts at `start`. tick >= 1, wheel_size >= 2,
 * start >= 0. Returns NULL on bad arguments or allocation failure. */
hw_wheel *hw_wheel_create(int64_t tick, int wheel_size, int64_t start);
void hw_wheel_destroy(hw_wheel *w); /* pending timers are dropped, not fired */

void hw_timer_init(hw_timer *t, hw_timer_fn fn, void *arg);
static inline int hw_timer_pending(const hw_timer *t) { return t->bucket != NULL; }

/* Schedule t to fire at `expires` (absolute). If t is pending it is moved.
 * An expiry at or before the wheel's current time fires on the next
 * advance_to. Returns 0, -EINVAL for a NULL wheel/timer or a timer with no
 * callback, -ENOMEM if a needed overflow level cannot be allocated (the
 * timer is then not pending). */
int hw_wheel_add(hw_wheel *w, hw_timer *t, int64_t expires);

/* Cancel t. Returns 1 if it was pending, 0 if it was not (already fired or
 * cancelled) — safe to call any number of times, from any callback. */
int hw_wheel_cancel(hw_wheel *w, hw_timer *t);

/* Fire every timer with expires <= now, each exactly once, in non-decreasing
 * expiry order per bucket. Returns how many fired. now < current time is a
 * no-op, and so is a call from inside a callback (returns 0). */
size_t hw_wheel_advance_to(hw_wheel *w, int64_t now);

size_t hw_wheel_size(const hw_wheel *w);      /* pending timers */
int64_t hw_wheel_now(const hw_wheel *w);      /* the wheel's clock */
/* Earliest time at which advance_to could fire something (a lower bound),
 * or INT64_MAX when empty — lets an idle reactor sleep that long. */
int64_t hw_wheel_next_expiry(const hw_wheel *w);

#endif
