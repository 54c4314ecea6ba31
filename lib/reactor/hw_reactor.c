/* hw_reactor.c — see hw_reactor.h for the design note. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "hw_logging.h"
#include "hw_owner.h"
#include "hw_reactor.h"

#define MAX_POLLERS 32
#define MAX_WAIT_FDS 32

typedef struct poller {
	const char *name;
	hw_poller_fn poll;
	hw_deadline_fn deadline;
	void *arg;
	int logged_error;
} poller;

typedef struct wait_src {
	int fd;
	int drain;
	hw_wait_arm_fn arm;
	hw_wait_disarm_fn disarm;
	void *arg;
} wait_src;

struct hw_reactor {
	hw_reactor_cfg cfg;
	poller pollers[MAX_POLLERS];
	int n_pollers;
	wait_src waits[MAX_WAIT_FDS];
	int n_waits;
	int epfd;
	int wake_fd;             /* eventfd other threads write to wake us */
	int stop;                /* atomic: set by hw_reactor_stop */
	int sleeping;            /* atomic: lost-wakeup protocol flag */
	pthread_t thread;
	int started;
	hw_reactor_stats st;     /* written by the reactor with relaxed atomics */
	hw_idle_policy idle;     /* ADAPTIVE's learnt window */
	int auto_cap;            /* sleep_max_us was 0: hw_reactor_need_polling lowers it */
	int needs_polling;       /* hw_reactor_need_polling was called */
};

static __thread hw_reactor *self_reactor;
_Thread_local int hw_reactor_current_id = HW_OWNER_ANY;

static const char *const idle_names[] = {
#define X(n) #n,
	HW_IDLE_TABLE(X)
#undef X
};

const char *hw_idle_name(int s)
{
	if (s < 0 || s >= HW_IDLE__COUNT)
		return "UNKNOWN_IDLE";
	return idle_names[s];
}

int hw_idle_parse(const char *s)
{
	for (int i = 0; s && i < HW_IDLE__COUNT; i++)
		if (!strcasecmp(s, idle_names[i]))
			return i;
	return -EINVAL;
}

int64_t hw_reactor_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* relaxed: statistics only; readers on other threads want a recent value,
 * they do not order anything against it */
#define STAT_ADD(r, f, v) __atomic_store_n(&(r)->st.f, (r)->st.f + (v), __ATOMIC_RELAXED)

hw_reactor *hw_reactor_create(const hw_reactor_cfg *cfg)
{
	if (!cfg || cfg->id < 0 || cfg->idle < 0 || cfg->idle >= HW_IDLE__COUNT)
		return NULL;
	hw_reactor *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->cfg = *cfg;
	if (!r->cfg.spin_iters)
		r->cfg.spin_iters = 200;
	if (!r->cfg.spin_us)
		r->cfg.spin_us = 100;
	if (!r->cfg.sleep_min_us)
		r->cfg.sleep_min_us = 10;
	r->auto_cap = !r->cfg.sleep_max_us;
	if (r->auto_cap)
		r->cfg.sleep_max_us = HW_REACTOR_AUTO_SLEEP_MAX_US;
	if (r->cfg.sleep_max_us < r->cfg.sleep_min_us)
		r->cfg.sleep_max_us = r->cfg.sleep_min_us;
	hw_idle_init(&r->idle, r->cfg.spin_max_us, 0, NULL, NULL, NULL);
	/* a pinned reactor has no other CPU to be pulled to */
	if (r->cfg.demote_us && r->cfg.cpu < 0)
		hw_idle_set_demote(&r->idle, r->cfg.demote_us, NULL, NULL);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->epfd < 0 || r->wake_fd < 0)
		goto fail;
	if (hw_reactor_add_wait_fd(r, r->wake_fd, 1, NULL, NULL, NULL) != 0)
		goto fail;
	return r;
fail:
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	free(r);
	return NULL;
}

void hw_reactor_destroy(hw_reactor *r)
{
	if (!r)
		return;
	if (r->started) {
		hw_reactor_stop(r);
		hw_reactor_join(r);
	}
	close(r->epfd);
	close(r->wake_fd);
	free(r);
}

int hw_reactor_add_poller(hw_reactor *r, const char *name, hw_poller_fn poll,
			  hw_deadline_fn deadline, void *arg)
{
	if (!r || !poll)
		return -EINVAL;
	if (r->n_pollers >= MAX_POLLERS)
		return -ENOSPC;
	r->pollers[r->n_pollers++] = (poller){ name ? name : "?", poll, deadline, arg, 0 };
	return 0;
}

int hw_reactor_add_wait_fd(hw_reactor *r, int fd, int drain, hw_wait_arm_fn arm,
			   hw_wait_disarm_fn disarm, void *arg)
{
	if (!r || fd < 0)
		return -EINVAL;
	if (r->n_waits >= MAX_WAIT_FDS)
		return -ENOSPC;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)r->n_waits };
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
		return -errno;
	r->waits[r->n_waits++] = (wait_src){ fd, drain, arm, disarm, arg };
	return 0;
}

void hw_reactor_need_polling(hw_reactor *r, uint32_t max_us)
{
	if (!r || !r->auto_cap || !max_us)
		return;
	r->needs_polling = 1;
	if (max_us < r->cfg.sleep_min_us)
		max_us = r->cfg.sleep_min_us;
	if (max_us < r->cfg.sleep_max_us) {
		r->cfg.sleep_max_us = max_us;
		HW_LOG(INFO, "reactor", "r%d: a source without wake-ups: sleeps capped at %u us",
		       r->cfg.id, max_us);
	}
}

uint32_t hw_reactor_sleep_max_us(const hw_reactor *r)
{
	return r->cfg.sleep_max_us;
}

/* The sleep cap after work. The doubling from sleep_min_us exists to poll
 * sources that cannot wake the reactor soon after work; when every source
 * can (the automatic cap and no hw_reactor_need_polling), those short sleeps
 * only time out and poll for nothing — a dozen timer wake-ups (10, 20, 40 us
 * ... up to the cap) after every piece of idle bookkeeping, which made an
 * idle broker wake ~150 times a second instead of ~55 (with a 20 ms cap).
 * Deadlines still bound every sleep. */
uint32_t hw_reactor_first_sleep_us(const hw_reactor *r)
{
	return r->auto_cap && !r->needs_polling ? r->cfg.sleep_max_us : r->cfg.sleep_min_us;
}

int hw_reactor_run_once(hw_reactor *r)
{
	int work = 0;
	for (int i = 0; i < r->n_pollers; i++) {
		poller *p = &r->pollers[i];
		int rc = p->poll(p->arg);
		if (rc > 0) {
			work += rc;
		} else if (rc < 0) {
			STAT_ADD(r, poller_errors, 1);
			if (!p->logged_error) {
				p->logged_error = 1;
				HW_LOG(WARN, "reactor", "r%d poller %s failed: %s (logged once)",
				       r->cfg.id, p->name, strerror(-rc));
			}
		}
	}
	STAT_ADD(r, iterations, 1);
	if (work)
		STAT_ADD(r, busy_iterations, 1);
	else
		STAT_ADD(r, idle_iterations, 1);
	return work;
}

static int64_t next_deadline(hw_reactor *r)
{
	int64_t d = INT64_MAX;
	for (int i = 0; i < r->n_pollers; i++) {
		if (!r->pollers[i].deadline)
			continue;
		int64_t x = r->pollers[i].deadline(r->pollers[i].arg);
		if (x < d)
			d = x;
	}
	return d;
}

/* Sleep up to cap_us (or the next deadline). Returns 1 if it slept, 2 if
 * the last look before sleeping found work (done; the caller counts it as a
 * busy turn), 0 otherwise. */
static int reactor_sleep(hw_reactor *r, uint32_t cap_us)
{
	int armed = 0, veto = 0;
	for (; armed < r->n_waits; armed++) {
		wait_src *w = &r->waits[armed];
		if (w->arm && w->arm(w->arg) != 0) {
			veto = 1;
			break;
		}
	}
	/* seq_cst store + full fence: our `sleeping = 1` must be globally
	 * visible before we re-check for work below; pairs with the fence in
	 * hw_reactor_wake (publish work, fence, read `sleeping`) */
	__atomic_store_n(&r->sleeping, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int slept = 0, recheck = 0;
	/* acquire: a stop request (and anything published before it) is seen */
	if (!veto && !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) && (recheck = hw_reactor_run_once(r)) == 0) {
		int64_t now = hw_reactor_now_ns();
		int64_t until = now + (int64_t)cap_us * 1000;
		int64_t dl = next_deadline(r);
		if (dl < until)
			until = dl;
		/* adaptive: wake a lead before a predicted arrival (hw_idle.h) */
		int64_t early = r->cfg.idle == HW_IDLE_ADAPTIVE ? hw_idle_sleep_ns(&r->idle, now) : INT64_MAX;
		if (early < until - now)
			until = now + early;
		int64_t wait_ns = until - now;
		if (wait_ns > 0) {
			/* epoll_wait has ms resolution; epoll_pwait2 takes a timespec */
			struct timespec ts = { wait_ns / 1000000000LL, wait_ns % 1000000000LL };
			struct epoll_event evs[MAX_WAIT_FDS];
			int n = epoll_pwait2(r->epfd, evs, MAX_WAIT_FDS, &ts, NULL);
			if (n < 0 && errno == ENOSYS) {
				int ms = (int)((wait_ns + 999999) / 1000000);
				n = epoll_wait(r->epfd, evs, MAX_WAIT_FDS, ms);
			}
			int64_t after = hw_reactor_now_ns();
			STAT_ADD(r, sleeps, 1);
			STAT_ADD(r, slept_ns, (uint64_t)(after - now));
			slept = 1;
			if (n > 0)
				STAT_ADD(r, wakeups, 1);
			for (int i = 0; i < n; i++) {
				wait_src *w = &r->waits[evs[i].data.u32];
				if (w->drain) {
					uint64_t v;
					if (read(w->fd, &v, sizeof v) < 0 && errno != EAGAIN)
						HW_LOG(DEBUG, "reactor", "drain fd %d: %s", w->fd, strerror(errno));
				}
			}
		}
	}
	/* relaxed is enough here: clearing only makes wakers write the eventfd
	 * needlessly or not; a missed clear costs one extra eventfd write */
	__atomic_store_n(&r->sleeping, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < armed; i++)
		if (r->waits[i].disarm)
			r->waits[i].disarm(r->waits[i].arg);
	return recheck > 0 ? 2 : slept;
}

int hw_reactor_run(hw_reactor *r)
{
	self_reactor = r;
	/* ownership checks (hw_owner.h) see this reactor until the loop ends */
	int prev_id = hw_reactor_current_id;
	hw_reactor_current_id = r->cfg.id;
	if (r->cfg.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(r->cfg.cpu, &set);
		int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
		if (rc)
			HW_LOG(WARN, "reactor", "r%d: cannot pin to cpu %d: %s", r->cfg.id, r->cfg.cpu, strerror(rc));
	}
	/* Timed sleeps (the backoff cap, the next poller deadline) are in
	 * microseconds; Linux's default 50 us timer slack lets every one of
	 * them fire up to 50 us late, which lands straight on a request's
	 * latency. 1 us keeps the timers honest at negligible cost. */
	if (prctl(PR_SET_TIMERSLACK, HW_REACTOR_TIMER_SLACK_NS, 0, 0, 0) != 0)
		HW_LOG(WARN, "reactor", "r%d: PR_SET_TIMERSLACK: %s", r->cfg.id, strerror(errno));
	if (r->cfg.on_start)
		r->cfg.on_start(r->cfg.on_start_arg);
	HW_LOG(INFO, "reactor", "r%d running (idle %s, cpu %d, sleep cap %u us)", r->cfg.id,
	       hw_idle_name(r->cfg.idle), r->cfg.cpu, r->cfg.sleep_max_us);
	uint32_t idle_run = 0, cap = hw_reactor_first_sleep_us(r);
	int64_t spin_ns = (int64_t)r->cfg.spin_us * 1000, last_work = hw_reactor_now_ns();
	int adaptive = r->cfg.idle == HW_IDLE_ADAPTIVE;
	/* acquire: pairs with the release in hw_reactor_stop */
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int64_t t0 = adaptive ? hw_reactor_now_ns() : 0;
		if (hw_reactor_run_once(r)) {
			idle_run = 0;
			cap = hw_reactor_first_sleep_us(r);
			last_work = hw_reactor_now_ns();
			if (adaptive)
				hw_idle_on_work(&r->idle, t0, last_work);
			continue;
		}
		if (r->cfg.idle == HW_IDLE_BUSY) {
			/* Busy: poll without a syscall while work keeps coming
			 * (bare metal, a core per reactor: a request landing
			 * during a yield would wait for it). Once idle for the
			 * spin window, every idle turn yields: with the core to
			 * ourselves that is a ~0.3 us no-op; on a shared core it
			 * lets the threads our work waits for run (an io_uring
			 * worker doing a large log write, whose completion the
			 * acks wait for), and the syscall runs io_uring's
			 * deferred completion work. */
			if (hw_reactor_now_ns() - last_work >= spin_ns) {
				sched_yield();
				STAT_ADD(r, yields, 1);
			}
			continue;
		}
		if (adaptive) {
			/* learnt window: hw_idle_spin yields once per turn */
			if (hw_idle_spin(&r->idle)) {
				STAT_ADD(r, yields, 1);
				continue;
			}
			hw_idle_on_sleep(&r->idle);
		} else if (++idle_run < r->cfg.spin_iters && hw_reactor_now_ns() - last_work < spin_ns) {
			/* spin window: give the core to whoever is runnable */
			sched_yield();
			STAT_ADD(r, yields, 1);
			continue;
		}
		int64_t t1 = adaptive ? hw_reactor_now_ns() : 0;
		int rc = reactor_sleep(r, cap);
		if (rc == 2) {
			/* the last look found work: a busy turn like any other */
			idle_run = 0;
			cap = hw_reactor_first_sleep_us(r);
			last_work = hw_reactor_now_ns();
			if (adaptive)
				hw_idle_on_work(&r->idle, t1, last_work);
		} else if (rc == 1 && cap < r->cfg.sleep_max_us) {
			cap *= 2;
			if (cap > r->cfg.sleep_max_us)
				cap = r->cfg.sleep_max_us;
		}
	}
	HW_LOG(INFO, "reactor", "r%d stopped", r->cfg.id);
	hw_reactor_current_id = prev_id;
	self_reactor = NULL;
	return 0;
}

static void *reactor_thread(void *arg)
{
	hw_reactor *r = arg;
	char name[16];
	snprintf(name, sizeof name, "hw-r%d", r->cfg.id);
	pthread_setname_np(pthread_self(), name);
	hw_reactor_run(r);
	return NULL;
}

int hw_reactor_start(hw_reactor *r)
{
	if (!r || r->started)
		return -EINVAL;
	/* release: the reset of `stop` is ordered before the thread starts */
	__atomic_store_n(&r->stop, 0, __ATOMIC_RELEASE);
	int rc = pthread_create(&r->thread, NULL, reactor_thread, r);
	if (rc)
		return -rc;
	r->started = 1;
	return 0;
}

void hw_reactor_stop(hw_reactor *r)
{
	/* release: whatever the caller did before asking to stop is visible to
	 * the loop when it observes `stop` */
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	uint64_t one = 1;
	if (write(r->wake_fd, &one, sizeof one) < 0) {
		/* EAGAIN: counter saturated, the reactor is being woken anyway */
	}
}

int hw_reactor_join(hw_reactor *r)
{
	if (!r || !r->started)
		return -EINVAL;
	pthread_join(r->thread, NULL);
	r->started = 0;
	return 0;
}

void hw_reactor_wake(hw_reactor *r)
{
	/* full fence: the caller's publication of work (e.g. hw_spsc_push)
	 * is globally visible before we read `sleeping`; pairs with the fence
	 * in reactor_sleep, so either we see sleeping = 1 and write the
	 * eventfd, or the reactor's re-check sees our work */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->sleeping, __ATOMIC_SEQ_CST)) {
		uint64_t one = 1;
		if (write(r->wake_fd, &one, sizeof one) < 0) {
			/* EAGAIN: already signalled */
		}
	}
}

void hw_reactor_get_stats(const hw_reactor *r, hw_reactor_stats *out)
{
	/* relaxed loads: a consistent-enough snapshot for metrics */
	out->iterations = __atomic_load_n(&r->st.iterations, __ATOMIC_RELAXED);
	out->busy_iterations = __atomic_load_n(&r->st.busy_iterations, __ATOMIC_RELAXED);
	out->idle_iterations = __atomic_load_n(&r->st.idle_iterations, __ATOMIC_RELAXED);
	out->sleeps = __atomic_load_n(&r->st.sleeps, __ATOMIC_RELAXED);
	out->wakeups = __atomic_load_n(&r->st.wakeups, __ATOMIC_RELAXED);
	out->slept_ns = __atomic_load_n(&r->st.slept_ns, __ATOMIC_RELAXED);
	out->poller_errors = __atomic_load_n(&r->st.poller_errors, __ATOMIC_RELAXED);
	out->yields = __atomic_load_n(&r->st.yields, __ATOMIC_RELAXED);
	hw_idle_get_stats(&r->idle, &out->adaptive);
	if (r->cfg.idle != HW_IDLE_ADAPTIVE)
		memset(&out->adaptive, 0, sizeof out->adaptive);
}

int hw_reactor_id(const hw_reactor *r)
{
	return r->cfg.id;
}

hw_reactor *hw_reactor_self(void)
{
	return self_reactor;
}
