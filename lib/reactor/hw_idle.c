/* hw_idle.c — the adaptive idle policy; see hw_idle.h and docs/idle.md. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "hw_idle.h"

/* relaxed: statistics only; a metrics reader wants a recent value and
 * orders nothing against it */
#define ST_SET(p, f, v) __atomic_store_n(&(p)->st.f, (uint64_t)(v), __ATOMIC_RELAXED)
#define ST_ADD(p, f, v) ST_SET(p, f, (p)->st.f + (v))

static int64_t mono_now(void *arg)
{
	(void)arg;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void plain_yield(void *arg)
{
	(void)arg;
	sched_yield();
}

/* ---- demotion (hw_idle.h "Demotion") ------------------------------------ */

/* The calling thread's class as the real switch left it: 0 never switched,
 * 1 SCHED_OTHER, 2 SCHED_IDLE, 3 not SCHED_OTHER to begin with (never
 * switched). Per thread, so that several policies on one thread (a
 * client's endpoints) agree on it. */
static __thread int thread_class;

static int real_set_class(void *arg, int idle)
{
	(void)arg;
	if (thread_class == 3 || (!thread_class && !idle))
		return thread_class == 3 && idle ? -EPERM : 0;
	if (!thread_class) {
		/* only a SCHED_OTHER thread demotes: going back must not
		 * drop a real-time or batch policy its owner chose */
		if (sched_getscheduler(0) != SCHED_OTHER) {
			thread_class = 3;
			return -EPERM;
		}
		thread_class = 1;
	}
	if (thread_class == (idle ? 2 : 1))
		return 0;
	struct sched_param sp = { 0 };
	if (sched_setscheduler(0, idle ? SCHED_IDLE : SCHED_OTHER, &sp) != 0)
		return -errno;
	thread_class = idle ? 2 : 1;
	return 0;
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_ok;

static void *probe_thread(void *arg)
{
	(void)arg;
	struct sched_param sp = { 0 };
	int ok = sched_getscheduler(0) == SCHED_OTHER && sched_setscheduler(0, SCHED_IDLE, &sp) == 0 &&
		 sched_setscheduler(0, SCHED_OTHER, &sp) == 0;
	return ok ? (void *)1 : NULL;
}

static void probe(void)
{
	pthread_t t;
	void *res = NULL;
	if (pthread_create(&t, NULL, probe_thread, NULL) == 0 && pthread_join(t, &res) == 0)
		probe_ok = res != NULL;
}

int hw_idle_demote_supported(void)
{
	pthread_once(&probe_once, probe);
	return probe_ok;
}

void hw_idle_set_demote(hw_idle_policy *p, uint32_t after_us, hw_idle_class_fn fn, void *arg)
{
	if (!fn && after_us && !hw_idle_demote_supported())
		after_us = 0;
	p->demote_ns = (int64_t)after_us * 1000;
	p->set_class = fn ? fn : real_set_class;
	p->class_arg = arg;
}

/* Phase: demote once per idle period, after demote_ns of it, while no
 * recent yield was contended. */
static void maybe_demote(hw_idle_policy *p, int64_t now)
{
	if (!p->demote_ns || p->demoted || p->yields_contended || now - p->last_work_end < p->demote_ns)
		return;
	int rc = p->set_class(p->class_arg, 1);
	if (rc) {
		ST_ADD(p, demote_errors, 1);
		p->demote_ns = 0;
		return;
	}
	p->demoted = 1;
	ST_ADD(p, demotions, 1);
}

/* Phase: back to SCHED_OTHER (work or sleep ends the idle period). Asked
 * whenever demotion is on, not only after this policy demoted: another
 * policy on the thread may have. A failure is counted and retried at the
 * next call; demotion is off from then on. */
static void promote(hw_idle_policy *p)
{
	if (!p->set_class || (!p->demote_ns && !p->demoted))
		return;
	if (p->set_class(p->class_arg, 0)) {
		ST_ADD(p, demote_errors, 1);
		p->demote_ns = 0;
		p->demoted = 1; /* try again next time */
		return;
	}
	p->demoted = 0;
}

/* log2 bucket of a gap in us: bucket k covers [2^k, 2^(k+1)) us. */
static int gap_bucket(int64_t gap_ns)
{
	uint64_t us = gap_ns > 0 ? (uint64_t)gap_ns / 1000 : 0;
	int k = 0;
	while (us >= 2 && k < HW_IDLE_BUCKETS - 1) {
		us >>= 1;
		k++;
	}
	return k;
}

static int64_t bucket_upper_ns(int k)
{
	return ((int64_t)2 << k) * 1000; /* 2^(k+1) us */
}

/* Phase: choose the window from the decayed gap histogram (hw_idle.h). */
static void recompute_window(hw_idle_policy *p)
{
	uint64_t total = 0, shortg = 0;
	int kmax = gap_bucket(p->spin_max_ns);
	for (int k = 0; k < HW_IDLE_BUCKETS; k++) {
		total += p->hist[k];
		if (k < kmax)
			shortg += p->hist[k];
	}
	int64_t w = p->spin_floor_ns;
	if (total && shortg * 100 >= total * HW_IDLE_SHORT_PCT) {
		uint64_t acc = 0;
		for (int k = 0; k < kmax; k++) {
			acc += p->hist[k];
			if (acc * 100 >= shortg * HW_IDLE_COVER_PCT) {
				w = bucket_upper_ns(k) * HW_IDLE_HEADROOM;
				break;
			}
		}
	}
	if (w > p->spin_max_ns)
		w = p->spin_max_ns;
	if (w < p->spin_floor_ns)
		w = p->spin_floor_ns;
	p->window_ns = w;
	ST_SET(p, window_ns, hw_idle_window_ns(p));
}

static void record_gap(hw_idle_policy *p, int64_t gap_ns)
{
	p->hist[gap_bucket(gap_ns)]++;
	if (++p->recorded >= HW_IDLE_DECAY_EVERY) {
		p->recorded = 0;
		for (int k = 0; k < HW_IDLE_BUCKETS; k++)
			p->hist[k] >>= 1;
	}
	recompute_window(p);
}

static int is_contended(const hw_idle_policy *p)
{
	return p->yields_seen >= 8 &&
	       (uint64_t)p->yields_contended * 100 > (uint64_t)p->yields_seen * HW_IDLE_CONTENDED_PCT;
}

/* Phase: learn the period of arrivals the window cannot catch (hw_idle.h
 * "Periodic arrivals"). A regular interval refines the period; an
 * irregular one (a stray request between two records, a stall's backlog)
 * halves the confidence, and the period is re-seeded once none is left. */
static void learn_arrival(hw_idle_policy *p, int64_t t)
{
	if (p->arrive_last) {
		int64_t iv = t - p->arrive_last;
		int64_t dev = iv > p->period_ns ? iv - p->period_ns : p->period_ns - iv;
		if (p->period_ns > 0 && dev <= p->period_ns / HW_IDLE_PERIOD_TOL_DIV) {
			p->period_ns += (iv - p->period_ns) / 8;
			p->jitter_ns += (dev - p->jitter_ns) / 8;
			if (p->period_hits < 2 * HW_IDLE_PERIOD_HITS)
				p->period_hits++;
		} else if (p->period_hits > 1) {
			p->period_hits >>= 1;
		} else {
			p->period_ns = iv;
			p->jitter_ns = 0;
			p->period_hits = 0;
		}
	}
	p->arrive_last = t;
	ST_SET(p, period_ns, hw_idle_next_arrival_ns(p) ? p->period_ns : 0);
}

static int64_t arrival_lead_ns(const hw_idle_policy *p)
{
	return HW_IDLE_LEAD_NS + 2 * p->jitter_ns;
}

/* now is inside the spin around the next expected arrival */
static int in_arrival_spin(const hw_idle_policy *p, int64_t now)
{
	int64_t na = hw_idle_next_arrival_ns(p), lead = arrival_lead_ns(p);
	return na && now >= na - lead && now <= na + lead;
}

/* Phase: one timed yield; feeds the contention share. may_demote: a spin
 * turn (not a probe). */
static void timed_yield(hw_idle_policy *p, int may_demote)
{
	int64_t t0 = p->now(p->arg);
	if (may_demote)
		maybe_demote(p, t0);
	p->yield(p->arg);
	int64_t dt = p->now(p->arg) - t0;
	int was = is_contended(p);
	p->yields_seen++;
	if (dt >= HW_IDLE_CONTENDED_NS) {
		p->yields_contended++;
		ST_ADD(p, contended_yields, 1);
		if (dt >= HW_IDLE_STALLED_NS)
			ST_ADD(p, stalled_yields, 1);
	} else if (was) {
		/* a probe came back at once: the hog may be gone; forget fast
		 * (a few probes, not a whole decay period, bring spinning back) */
		p->yields_contended >>= 1;
	}
	if (p->yields_seen >= 64) {
		p->yields_seen >>= 1;
		p->yields_contended >>= 1;
	}
	if (was != is_contended(p)) {
		ST_SET(p, contended, is_contended(p));
		ST_SET(p, window_ns, hw_idle_window_ns(p));
	}
}

void hw_idle_init(hw_idle_policy *p, uint32_t spin_max_us, uint32_t spin_floor_us,
		  hw_idle_now_fn now, hw_idle_yield_fn yield, void *arg)
{
	memset(p, 0, sizeof *p); /* demotion off (hw_idle_set_demote) */
	p->spin_max_ns = (int64_t)(spin_max_us ? spin_max_us : HW_IDLE_DEFAULT_SPIN_MAX_US) * 1000;
	p->spin_floor_ns = (int64_t)(spin_floor_us ? spin_floor_us : HW_IDLE_DEFAULT_SPIN_FLOOR_US) * 1000;
	if (p->spin_floor_ns > p->spin_max_ns)
		p->spin_floor_ns = p->spin_max_ns;
	p->now = now ? now : mono_now;
	p->yield = yield ? yield : plain_yield;
	p->arg = arg;
	/* Until something is learnt, spin for the longest window: the first
	 * exchanges of a closed loop then find their peers awake, and long
	 * gaps pull the window down within a few periods. */
	p->window_ns = p->spin_max_ns;
	ST_SET(p, window_ns, p->window_ns);
}

void hw_idle_on_work(hw_idle_policy *p, int64_t work_start_ns, int64_t work_end_ns)
{
	promote(p);
	if (p->idle && !p->unawaited) {
		int64_t gap = work_start_ns - p->last_work_end;
		if (!p->slept)
			ST_ADD(p, spins_to_work, 1);
		if (p->early)
			ST_ADD(p, early_wakes_to_work, 1);
		if (gap > p->window_ns)
			learn_arrival(p, work_start_ns);
		record_gap(p, gap);
	}
	p->idle = 0;
	p->slept = 0;
	p->early = 0;
	p->unawaited = 0;
	p->last_work_end = work_end_ns;
}

void hw_idle_mark_work(hw_idle_policy *p, int64_t now_ns)
{
	promote(p);
	p->idle = 0;
	p->slept = 0;
	p->early = 0;
	p->unawaited = 0;
	p->last_work_end = now_ns;
}

void hw_idle_expect_nothing(hw_idle_policy *p, int64_t now_ns, int64_t until_ns)
{
	p->idle = 1;
	p->slept = 0;
	p->early = 0;
	p->unawaited = 1;
	p->until_ns = until_ns;
	p->last_work_end = now_ns;
}

int64_t hw_idle_sleep_ns(const hw_idle_policy *p, int64_t now_ns)
{
	if (p->idle && p->unawaited) {
		int64_t d = p->until_ns - hw_idle_window_ns(p) - now_ns;
		return d > 0 ? d : 0;
	}
	int64_t na = hw_idle_next_arrival_ns(p), lead = arrival_lead_ns(p);
	if (!na || now_ns > na + lead)
		return INT64_MAX;
	return now_ns < na - lead ? na - lead - now_ns : 0;
}

int hw_idle_spin(hw_idle_policy *p)
{
	int64_t now = p->now(p->arg);
	if (!p->idle) {
		p->idle = 1;
		if (!p->last_work_end)
			p->last_work_end = now;
	}
	if (p->unawaited) {
		/* a known deadline: spin its last window only (hw_idle.h) */
		if (now >= p->until_ns || p->until_ns - now > hw_idle_window_ns(p))
			return 0;
		timed_yield(p, 1);
		return 1;
	}
	if (in_arrival_spin(p, now)) {
		/* a predicted arrival: spin across it, also after a sleep */
		if (p->slept && !p->early) {
			p->early = 1;
			ST_ADD(p, early_wakes, 1);
		}
		timed_yield(p, 1);
		return 1;
	}
	if (p->slept)
		return 0;
	if (is_contended(p)) {
		if (now - p->last_probe >= HW_IDLE_PROBE_NS) {
			p->last_probe = now;
			ST_ADD(p, probes, 1);
			timed_yield(p, 0);
			return 1;
		}
		return 0;
	}
	if (now - p->last_work_end >= p->window_ns)
		return 0;
	timed_yield(p, 1);
	return 1;
}

void hw_idle_on_sleep(hw_idle_policy *p)
{
	promote(p);
	if (!p->idle) {
		p->idle = 1;
		if (!p->last_work_end)
			p->last_work_end = p->now(p->arg);
	}
	if (!p->slept && !p->unawaited) {
		p->slept = 1;
		ST_ADD(p, spins_to_sleep, 1);
	}
}

int64_t hw_idle_window_ns(const hw_idle_policy *p)
{
	return is_contended(p) ? 0 : p->window_ns;
}

int64_t hw_idle_next_arrival_ns(const hw_idle_policy *p)
{
	if (!p->arrive_last || p->period_hits < HW_IDLE_PERIOD_HITS || p->period_ns <= 0 ||
	    p->period_ns > HW_IDLE_PERIOD_MAX_NS || is_contended(p))
		return 0;
	return p->arrive_last + p->period_ns;
}

void hw_idle_get_stats(const hw_idle_policy *p, hw_idle_stats *out)
{
	out->spins_to_work = __atomic_load_n(&p->st.spins_to_work, __ATOMIC_RELAXED);
	out->spins_to_sleep = __atomic_load_n(&p->st.spins_to_sleep, __ATOMIC_RELAXED);
	out->contended_yields = __atomic_load_n(&p->st.contended_yields, __ATOMIC_RELAXED);
	out->stalled_yields = __atomic_load_n(&p->st.stalled_yields, __ATOMIC_RELAXED);
	out->probes = __atomic_load_n(&p->st.probes, __ATOMIC_RELAXED);
	out->window_ns = __atomic_load_n(&p->st.window_ns, __ATOMIC_RELAXED);
	out->contended = __atomic_load_n(&p->st.contended, __ATOMIC_RELAXED);
	out->early_wakes = __atomic_load_n(&p->st.early_wakes, __ATOMIC_RELAXED);
	out->early_wakes_to_work = __atomic_load_n(&p->st.early_wakes_to_work, __ATOMIC_RELAXED);
	out->period_ns = __atomic_load_n(&p->st.period_ns, __ATOMIC_RELAXED);
	out->demotions = __atomic_load_n(&p->st.demotions, __ATOMIC_RELAXED);
	out->demote_errors = __atomic_load_n(&p->st.demote_errors, __ATOMIC_RELAXED);
}
