/* hw_reactor.h — a run-to-completion event loop on one thread (one lcore).
 *
 * Design note. A reactor owns a set of pollers (RX of a port queue, io_uring
 * completions, the timing wheel, a cross-reactor ring...). Each iteration
 * calls every poller once; a poller returns how much work it did. Nothing
 * blocks inside a poller: what arrived in one iteration is processed
 * together (HW advance and ack work happen once per iteration by the engine's
 * own end-of-iteration poller).
 *
 * The idle strategy decides what an iteration that did no work leads to:
 *   BUSY     spin (bare metal: one dedicated core per reactor, lowest latency);
 *            an idle turn calls sched_yield(), a no-op on a core of its own.
 *   BACKOFF  after the last work, keep polling for a spin window of
 *            `spin_us` microseconds (or `spin_iters` idle iterations, which
 *            ever ends first), calling sched_yield() between idle polls so
 *            other runnable processes sharing the core get it (a request
 *            that arrives while its peer is still in the window is served
 *            without any wake-up); then sleep in epoll_wait
 *            on the registered wait sources (UDP sockets, the io_uring
 *            eventfd, DPDK RX-interrupt fds where the port has them, and the
 *            reactor's own eventfd that other threads write to wake it) with
 *            timeout = min(next poller deadline, cap); the cap starts at
 *            sleep_min_us and doubles up to sleep_max_us while the reactor
 *            stays idle, so a port without any wake-up (no RX interrupt, no
 *            doorbell) is still polled every <= sleep_max_us. Any work resets
 *            the cap. sleep_max_us 0 (the default) = automatic: every
 *            source that cannot wake the reactor declares so
 *            (hw_reactor_need_polling) and the cap is the smallest such
 *            period, or HW_REACTOR_AUTO_SLEEP_MAX_US when every source can
 *            wake it (sockets, eventfds, doorbells, RX interrupts), so an
 *            idle node does not wake a thousand times a second for nothing.
 *            In that last case there is nothing to poll for, so the cap
 *            does not ramp either: the first sleep after work is already
 *            the full cap (hw_reactor_first_sleep_us).
 *   ADAPTIVE BACKOFF whose spin window is learnt instead of fixed
 *            (hw_idle.h, docs/idle.md): the window follows the short gaps
 *            between work and the next work, up to spin_max_us, and
 *            spinning turns off while yields show the cores are
 *            oversubscribed. The sleep side is BACKOFF's. The default.
 * This is what lets three brokers and a client share two cores: idle
 * reactors leave the CPU, busy ones run. Transports without RX interrupts
 * (memif) add a doorbell as a wait source (drivers/net/common/hw_doorbell.h):
 * its arm hook publishes "sleeping" before the fence below, so a sender can
 * wake this reactor instead of waiting for the cap.
 *
 * Why yield while spinning: on 2 cores shared by 5 processes a reactor that
 * just answered is likely to get the next request of the same exchange
 * (the follower's next fetch, the client's next produce) within tens of
 * microseconds; sleeping at once costs a wake-up (futex/epoll + scheduler,
 * 5-50 us under load) on that path, while pure spinning would take the core
 * from the process that has to produce that very request. Yielding keeps
 * the reactor responsive and the core shared.
 *
 * Lost-wakeup protocol (Dekker style): the reactor sets `sleeping`, issues a
 * full fence, runs every poller once more, and only then sleeps; a waker
 * publishes its work (e.g. pushes to a ring), issues a full fence, then
 * writes the eventfd if it reads `sleeping` set. One of the two always sees
 * the other's write.
 *
 * Statistics (iterations, busy/idle iterations, sleeps, wakeups, time
 * asleep) are written by the reactor thread with relaxed atomic stores and
 * may be read from any thread (metrics).
 */
#ifndef HW_REACTOR_H
#define HW_REACTOR_H
#include <stdint.h>
#include "hw_idle.h"

#define HW_IDLE_TABLE(X) X(BUSY) X(BACKOFF) X(ADAPTIVE)
typedef enum hw_idle_strategy {
#define HW_IDLE_ENUM(n) HW_IDLE_##n,
	HW_IDLE_TABLE(HW_IDLE_ENUM)
#undef HW_IDLE_ENUM
	HW_IDLE__COUNT
} hw_idle_strategy;

/* Timer slack (ns) every reactor thread sets on start (prctl
 * PR_SET_TIMERSLACK): the kernel default of 50 us would delay each timed
 * wake-up by up to that much. */
#define HW_REACTOR_TIMER_SLACK_NS 1000UL

const char *hw_idle_name(int s); /* never NULL */
/* "busy" / "backoff" / "adaptive" (case-insensitive) -> strategy; -EINVAL otherwise. */
int hw_idle_parse(const char *s);

/* Return work done (> 0 counts the iteration as busy), 0, or a negative
 * errno (logged once per poller, counted as no work). */
typedef int (*hw_poller_fn)(void *arg);
/* Absolute CLOCK_MONOTONIC ns of the poller's next deadline, INT64_MAX if none. */
typedef int64_t (*hw_deadline_fn)(void *arg);
/* Called before the reactor sleeps (e.g. enable a port's RX interrupt) and
 * after it wakes (disable it). Return 0; non-zero from arm vetoes sleeping
 * this time (e.g. packets already pending). */
typedef int (*hw_wait_arm_fn)(void *arg);
typedef void (*hw_wait_disarm_fn)(void *arg);

typedef struct hw_reactor_cfg {
	int id;                       /* >= 0; names the thread "hw-r<id>" */
	int cpu;                      /* pin to this CPU; -1: no pinning */
	hw_idle_strategy idle;
	uint32_t spin_iters;          /* idle iterations before sleeping (0 -> 200), or spin_us */
	uint32_t sleep_min_us;        /* first sleep cap (0 -> 10) */
	uint32_t sleep_max_us;        /* cap growth limit (0 -> automatic, see above) */
	void (*on_start)(void *arg);  /* on the reactor thread before the loop (may be NULL) */
	void *on_start_arg;
	uint32_t spin_us;             /* BACKOFF spin window after work, yielding (0 -> 100) */
	uint32_t spin_max_us;         /* ADAPTIVE: longest learnt window (0 -> 250) */
	uint32_t demote_us;           /* ADAPTIVE: SCHED_IDLE after spinning this long (hw_idle.h
	                               * "Demotion"); 0: never (default); never when pinned */
} hw_reactor_cfg;

typedef struct hw_reactor_stats {
	uint64_t iterations;
	uint64_t busy_iterations;     /* some poller did work */
	uint64_t idle_iterations;
	uint64_t sleeps;              /* epoll_wait calls */
	uint64_t wakeups;             /* sleeps ended by a wait source (not a timeout) */
	uint64_t slept_ns;
	uint64_t poller_errors;
	uint64_t yields;              /* sched_yield calls in spin windows */
	hw_idle_stats adaptive;       /* ADAPTIVE only (zero otherwise) */
} hw_reactor_stats;

typedef struct hw_reactor hw_reactor;

/* Create (does not start). NULL on bad cfg or -ENOMEM (errno untouched). */
hw_reactor *hw_reactor_create(const hw_reactor_cfg *cfg);
/* Stop (if running), join, free. */
void hw_reactor_destroy(hw_reactor *r);

/* Registration: before start, or from the reactor's own thread.
 * add_poller: 0, -ENOSPC (too many), -EINVAL. `name` is borrowed (static). */
int hw_reactor_add_poller(hw_reactor *r, const char *name, hw_poller_fn poll,
			  hw_deadline_fn deadline, void *arg);
/* A file descriptor whose readability ends a sleep (level triggered). If
 * `drain` is set the reactor reads 8 bytes from it after waking (eventfds).
 * arm/disarm may be NULL. 0, -ENOSPC, -errno from epoll_ctl. */
int hw_reactor_add_wait_fd(hw_reactor *r, int fd, int drain, hw_wait_arm_fn arm,
			   hw_wait_disarm_fn disarm, void *arg);

/* Longest sleep cap of the automatic mode (sleep_max_us 0): 100 ms. Every
 * source can wake the reactor then and every timer has a deadline, so the
 * cap only bounds the periodic checks pollers make without one (DPDK link
 * checks every 100 ms, fragment expiry, memif re-dial every 300 ms); at
 * 20 ms an idle cluster spent most of its CPU on these empty wake-ups. */
#define HW_REACTOR_AUTO_SLEEP_MAX_US 100000u
/* A poller has work that arrives without waking the reactor (a port with
 * neither RX interrupts nor a doorbell): under the automatic cap, sleeps are
 * capped at max_us (the smallest of all such calls). No effect when
 * sleep_max_us was configured. Before start or on the reactor's thread. */
void hw_reactor_need_polling(hw_reactor *r, uint32_t max_us);
/* The sleep cap in effect (us). */
uint32_t hw_reactor_sleep_max_us(const hw_reactor *r);
/* The first sleep cap after work (us): sleep_max_us under the automatic cap
 * when every source can wake the reactor (nothing to poll for), else
 * sleep_min_us, doubling from there. Never fails. */
uint32_t hw_reactor_first_sleep_us(const hw_reactor *r);

/* Run on the calling thread until hw_reactor_stop (also pins and calls
 * on_start). While it runs, hw_reactor_current_id (hw_owner.h) is cfg.id on
 * this thread, so objects owned by another reactor refuse to be used here
 * (HW_ASSERT_OWNER). Returns 0. */
int hw_reactor_run(hw_reactor *r);
/* Run on a new thread. 0 or -errno (pthread_create). */
int hw_reactor_start(hw_reactor *r);
/* Any thread, async-signal-safe: ask the loop to end (and wake it). */
void hw_reactor_stop(hw_reactor *r);
/* Join the thread started by hw_reactor_start. 0 or -EINVAL if not started. */
int hw_reactor_join(hw_reactor *r);
/* One iteration on the calling thread (tests, single-threaded tools):
 * returns total work done. */
int hw_reactor_run_once(hw_reactor *r);

/* Any thread: wake the reactor if it sleeps. Call after publishing the work
 * (the function issues the fence of the lost-wakeup protocol itself). */
void hw_reactor_wake(hw_reactor *r);

void hw_reactor_get_stats(const hw_reactor *r, hw_reactor_stats *out);
int hw_reactor_id(const hw_reactor *r);
/* The reactor running on the calling thread, or NULL. */
hw_reactor *hw_reactor_self(void);

/* CLOCK_MONOTONIC in ns. */
int64_t hw_reactor_now_ns(void);

#endif
