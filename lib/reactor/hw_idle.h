/* hw_idle.h — the adaptive idle policy: how long to keep polling after work.
 *
 * Design note (docs/idle.md). A loop that has just finished some work must
 * decide, turn after turn, whether to poll again (spinning, yielding the core
 * between polls) or to sleep until a wait source fires. Sleeping costs a
 * wake-up on the path of whatever arrives next (futex/epoll and the
 * scheduler: 5-50 us on a shared vCPU); spinning costs CPU other processes
 * may need. The right window is the gap between "work done" and "the next
 * work arrives" when that gap is short: in an acks=all round it is the time
 * the other hops take (follower fetch, write, next fetch), 30-100 us here,
 * which a fixed 20 us window always misses.
 *
 * So the policy learns it. Every idle period (from the end of one burst of
 * work to the start of the next) is recorded in a log2 histogram of gaps
 * whose counts decay (halved every HW_IDLE_DECAY_EVERY periods), and the
 * spin window is chosen from it:
 *   - the "short" gaps are those <= spin_max_us (what we would ever spin
 *     for); if fewer than HW_IDLE_SHORT_PCT % of recent gaps are short the
 *     next work is unlikely to come soon: the window is spin_floor_us;
 *   - otherwise the window is HW_IDLE_HEADROOM times the upper bound of
 *     the log2 bucket that covers HW_IDLE_COVER_PCT % of the short gaps (so
 *     a bimodal workload spins for its short mode only), at least
 *     spin_floor_us and at most spin_max_us. The headroom is for the tail:
 *     in a closed loop a gap runs long when a hop upstream was itself late
 *     (descheduled, or woken), and a window that stops at the largest
 *     recent gap adds this loop's wake-up on top of that delay.
 * Periodic arrivals: work that ends a gap longer than the window (an
 * open-loop producer's record at 1,000/s, the fetch response it causes on
 * a follower) is an arrival the window cannot catch. When such arrivals
 * come every period P (within P / HW_IDLE_PERIOD_TOL_DIV, for
 * HW_IDLE_PERIOD_HITS of them in a row, P up to HW_IDLE_PERIOD_MAX_NS), the
 * loop sleeps only until a lead before the next expected one and spins
 * across it (hw_idle_sleep_ns bounds the sleep, hw_idle_spin spins): the
 * wake-up's lateness falls before the arrival, not on it. The lead is
 * HW_IDLE_LEAD_NS plus twice the arrivals' mean deviation; a predicted
 * spin that sees no work by the same lead after the expected time ends,
 * and the loop sleeps as before.
 * Oversubscription: each yield in a spin window is timed. A yield that does
 * not come back within HW_IDLE_CONTENDED_NS means another runnable thread
 * took the core for a while (a CPU hog, more threads than cores): spinning
 * then only delays this loop behind it, while a sleeping thread that is
 * woken gets the core back quickly (the scheduler favours wakers). A decayed
 * share of contended yields above HW_IDLE_CONTENDED_PCT % turns spinning off
 * (window 0: sleep at once); while it is off one probe yield per
 * HW_IDLE_PROBE_NS re-measures, so the policy recovers when the hog leaves.
 * Stalls: a contended yield that comes back HW_IDLE_STALLED_NS or more
 * later is also counted apart. The loop was runnable and off its core for a
 * whole millisecond: on a kernel without preemption a kernel thread (a
 * memory scanner, a reclaimer) keeps the core it took until it gives it
 * up, and a loop queued behind it waits even while the other core idles
 * (docs/idle.md "What the tail is made of"). Counted only: the policy does
 * not act on it.
 *
 * Demotion (off by default, hw_idle_set_demote): a loop that has spun
 * HW_IDLE_DEMOTE_US (50 us) of one
 * idle period with no contended yield among its recent ones switches its
 * thread to SCHED_IDLE, and back to SCHED_OTHER at its next work or sleep.
 * Why: a spinning loop is runnable, and when a kernel thread takes its CPU
 * on a kernel without preemption it waits queued while the other CPU may
 * idle; that CPU's balancer leaves tasks alone that ran in the last 0.5 ms
 * ("cache hot"), but never counts a SCHED_IDLE task as hot, so it pulls a
 * demoted loop at once (docs/idle.md "Demotion"). Closed-loop gaps are
 * mostly shorter than 50 us and never pay the two syscalls; probes and
 * contended loops never demote (behind a CPU hog a SCHED_IDLE thread
 * starves). Not the default: under a CPU hog loops still demote thousands
 * of times a second and the closed-loop p50 got 2-3x worse. Off when the thread cannot switch back (no CAP_SYS_NICE
 * and RLIMIT_NICE < 20), when it is not SCHED_OTHER to begin with, and for
 * pinned reactors (the owner turns it off: there is no other CPU to go to).
 *
 * Counters: spins that ended in work (the window caught the next request),
 * spins that ended in sleep (it did not), contended yields, probes, the
 * current window, early wakes (sleeps cut short for a predicted arrival)
 * and those whose arrival came inside the predicted spin. Wake-ups are the owner's (hw_reactor_stats.wakeups).
 *
 * Threading: one policy per loop, used by that loop's thread only; stats
 * are written with relaxed atomic stores so a metrics thread may read them.
 */
#ifndef HW_IDLE_H
#define HW_IDLE_H
#include <stdint.h>

#define HW_IDLE_BUCKETS          24      /* bucket k: gap in [2^k, 2^(k+1)) us; 0: < 2 us */
#define HW_IDLE_DECAY_EVERY      64      /* halve the histogram every N recorded gaps */
#define HW_IDLE_SHORT_PCT        25      /* spin only if >= this % of gaps are short */
#ifndef HW_IDLE_COVER_PCT                /* (overridable for A/B builds, -DHW_IDLE_COVER_PCT=N) */
#define HW_IDLE_COVER_PCT        99      /* window covers this % of the short gaps ... */
#endif
#ifndef HW_IDLE_HEADROOM
#define HW_IDLE_HEADROOM         2       /* ... times this (capped at spin_max) */
#endif
#define HW_IDLE_PERIOD_HITS      8       /* regular arrivals in a row before waking early */
#define HW_IDLE_PERIOD_TOL_DIV   8       /* "regular": within period / 8 of the period */
#define HW_IDLE_PERIOD_MAX_NS    5000000 /* no early wakes for periods above 5 ms */
#define HW_IDLE_LEAD_NS          50000   /* wake this long (+ 2x jitter) before an arrival */
#define HW_IDLE_CONTENDED_NS     50000   /* a yield longer than 50 us was contended */
#define HW_IDLE_CONTENDED_PCT    30      /* above this share spinning turns off */
#define HW_IDLE_STALLED_NS       1000000 /* a yield that took 1 ms or more: a stall */
#define HW_IDLE_PROBE_NS         20000000 /* while off: one probe yield per 20 ms */

#define HW_IDLE_DEFAULT_SPIN_MAX_US   250
#define HW_IDLE_DEMOTE_US             50 /* the measured choice when it is on (off by default) */
#define HW_IDLE_DEFAULT_SPIN_FLOOR_US 5

typedef struct hw_idle_stats {
	uint64_t spins_to_work;     /* idle periods whose work came inside the spin window */
	uint64_t spins_to_sleep;    /* spin windows that ran out: the loop slept */
	uint64_t contended_yields;  /* yields that took >= HW_IDLE_CONTENDED_NS */
	uint64_t stalled_yields;    /* ... of those, yields that took >= HW_IDLE_STALLED_NS */
	uint64_t probes;            /* probe yields while spinning was off */
	uint64_t window_ns;         /* the current spin window (gauge) */
	uint64_t contended;         /* 1 while spinning is off for contention (gauge) */
	uint64_t early_wakes;       /* sleeps cut to wake before a predicted arrival */
	uint64_t early_wakes_to_work; /* ... whose arrival came inside the predicted spin */
	uint64_t period_ns;         /* the learnt arrival period, 0 when not regular (gauge) */
	uint64_t demotions;         /* idle periods that switched the thread to SCHED_IDLE */
	uint64_t demote_errors;     /* switches that failed (demotion is then off) */
} hw_idle_stats;

typedef int64_t (*hw_idle_now_fn)(void *arg);   /* CLOCK_MONOTONIC ns */
typedef void (*hw_idle_yield_fn)(void *arg);    /* give the core away once */
/* Switch the calling thread to SCHED_IDLE (idle = 1) or back to SCHED_OTHER
 * (0). 0, or a negative errno. */
typedef int (*hw_idle_class_fn)(void *arg, int idle);

typedef struct hw_idle_policy {
	/* config (hw_idle_init) */
	int64_t spin_max_ns;
	int64_t spin_floor_ns;
	hw_idle_now_fn now;
	hw_idle_yield_fn yield;
	void *arg;
	/* learning */
	uint32_t hist[HW_IDLE_BUCKETS];
	uint32_t recorded;          /* gaps since the last decay */
	int64_t last_work_end;      /* when the last busy turn ended (0: never) */
	int idle;                   /* an idle period is open */
	int slept;                  /* this idle period went to sleep */
	int unawaited;              /* this idle period waits for nothing (hw_idle_expect_nothing) */
	int64_t until_ns;           /* ... and spins up to this time */
	int64_t window_ns;          /* recomputed after every recorded gap */
	uint32_t yields_seen;       /* decayed, for the contention share */
	uint32_t yields_contended;
	int64_t last_probe;
	/* periodic arrivals (gaps longer than the window) */
	int64_t arrive_last;        /* start of the last such arrival's work (0: none) */
	int64_t period_ns;          /* smoothed interval between them (0: none yet) */
	int64_t jitter_ns;          /* smoothed |interval - period| */
	uint32_t period_hits;       /* regular intervals in a row (saturating) */
	int early;                  /* this idle period woke early for an arrival */
	/* demotion (hw_idle_set_demote) */
	int64_t demote_ns;          /* 0: never */
	hw_idle_class_fn set_class;
	void *class_arg;
	int demoted;                /* this idle period switched to SCHED_IDLE */
	hw_idle_stats st;
} hw_idle_policy;

/* Initialise p. spin_max_us: the longest window (0 -> default 250);
 * spin_floor_us: the window when gaps are long (0 -> default 5; use
 * hw_idle_init's caller-side clamp to go lower). now/yield may be NULL:
 * CLOCK_MONOTONIC and sched_yield. Never fails. */
void hw_idle_init(hw_idle_policy *p, uint32_t spin_max_us, uint32_t spin_floor_us,
		  hw_idle_now_fn now, hw_idle_yield_fn yield, void *arg);

/* Demote the loop's thread to SCHED_IDLE after after_us of spinning in one
 * idle period (hw_idle.h "Demotion"); after_us 0: never. fn NULL: the real
 * switch (sched_setscheduler on the calling thread), and demotion stays
 * off unless hw_idle_demote_supported(). Off after hw_idle_init.
 * Call from the loop's thread or before it starts. Never fails. */
void hw_idle_set_demote(hw_idle_policy *p, uint32_t after_us, hw_idle_class_fn fn, void *arg);

/* 1 when this process's threads may go SCHED_OTHER -> SCHED_IDLE -> SCHED_OTHER
 * (probed once, on a short-lived thread of its own), else 0. */
int hw_idle_demote_supported(void);

/* The loop did work in a turn that started at work_start_ns and ended at
 * work_end_ns (the policy's clock): ends the idle period if one was open
 * (records its gap: work_start - the previous work's end). Call once per
 * busy turn. */
void hw_idle_on_work(hw_idle_policy *p, int64_t work_start_ns, int64_t work_end_ns);

/* The owner did work of its own at now_ns (a client sent a request): ends
 * an open idle period without recording it as a gap, and starts the next
 * one from now_ns. */
void hw_idle_mark_work(hw_idle_policy *p, int64_t now_ns);

/* The owner awaits nothing (a client with no request out) and knows when it
 * must act next: until_ns (an open-loop bench's next send). The idle period
 * that starts at now_ns is not a gap — whatever arrives in it was not
 * waited for, so it would teach a window for nothing — and its sleeps are
 * not spins that ended in sleep. It spins only for the last window before
 * until_ns: hw_idle_spin returns 0 while until_ns is further away (sleep,
 * bounded by hw_idle_sleep_ns, so the wake-up's lateness falls inside the
 * spin and not on the send) and yields from then until until_ns. Spinning
 * the whole wait (1 ms between records at 1,000/s) only took the core from
 * the loops carrying the previous request. Work or hw_idle_mark_work ends
 * the period. */
void hw_idle_expect_nothing(hw_idle_policy *p, int64_t now_ns, int64_t until_ns);

/* How long the owner may sleep from now_ns before it must spin again:
 * until_ns minus the window in a period of hw_idle_expect_nothing (0 if
 * that is past); when arrivals are periodic, the time to one lead before
 * the next expected one (0 inside the predicted spin); INT64_MAX otherwise
 * (only the owner's own timeout). */
int64_t hw_idle_sleep_ns(const hw_idle_policy *p, int64_t now_ns);

/* The loop found nothing to do. Returns 1 after spending one spin turn
 * (a timed yield): poll again; 0: the window is over (or spinning is off),
 * go to sleep — the policy counts it; call hw_idle_on_sleep(). After a
 * sleep it returns 1 again inside a predicted arrival's spin. */
int hw_idle_spin(hw_idle_policy *p);

/* The loop is about to sleep for this idle period (counts a spin that ended
 * in sleep once per period). */
void hw_idle_on_sleep(hw_idle_policy *p);

/* The current spin window (ns): 0 while spinning is off for contention. */
int64_t hw_idle_window_ns(const hw_idle_policy *p);

/* The expected start of the next periodic arrival (ns, the policy's clock),
 * 0 when arrivals are not regular or spinning is off. */
int64_t hw_idle_next_arrival_ns(const hw_idle_policy *p);

/* Relaxed snapshot, any thread. */
void hw_idle_get_stats(const hw_idle_policy *p, hw_idle_stats *out);

#endif
