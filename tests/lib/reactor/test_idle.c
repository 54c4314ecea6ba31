/* test_idle.c — the adaptive idle policy (lib/reactor/hw_idle.h) on a fake
 * clock: a loop whose work arrives after known gaps, with yields of a known
 * cost (docs/idle.md#learning-the-window). Checks that the window follows
 * short gaps with headroom for their tail, falls to the floor for long
 * ones, keeps the short mode of a bimodal load, turns spinning off when
 * yields are slow (oversubscribed cores) and back on when they are fast
 * again, and that arrivals the window misses wake the loop early when they
 * are periodic and never when they are not; that a loop spinning 50 us
 * demotes its thread to SCHED_IDLE once and is back at work or sleep,
 * never while contended or on a probe, and really does so on this kernel
 * (docs/idle.md "Demotion").
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_idle.h"
#include "../../support/hw_test.h"

typedef struct fake {
	int64_t now;
	int64_t yield_cost;
	uint64_t yields;
} fake;

static int64_t fake_now(void *arg) { return ((fake *)arg)->now; }
static void fake_yield(void *arg)
{
	fake *f = arg;
	f->now += f->yield_cost;
	f->yields++;
}

#define US 1000LL

/* One idle period whose next work arrives gap_ns after the last work ended;
 * a wake-up costs 20 us. Returns 1 if the loop went to sleep. */
static int period(hw_idle_policy *p, fake *f, int64_t gap_ns)
{
	int64_t end = f->now, arrive = end + gap_ns;
	int slept = 0;
	for (;;) {
		if (f->now >= arrive)
			break;
		if (!hw_idle_spin(p)) {
			hw_idle_on_sleep(p);
			slept = 1;
			f->now = (arrive > f->now ? arrive : f->now) + 20 * US;
			break;
		}
	}
	int64_t start = f->now;
	f->now += 2 * US; /* the work itself */
	hw_idle_on_work(p, start, f->now);
	return slept;
}

static void setup(hw_idle_policy *p, fake *f, int64_t yield_cost)
{
	*f = (fake){ .now = 1000 * US, .yield_cost = yield_cost };
	hw_idle_init(p, 250, 5, fake_now, fake_yield, f);
	f->now += 2 * US;
	hw_idle_on_work(p, f->now - 2 * US, f->now);
}

static void test_short_gaps_learnt(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	/* 40 us gaps, as between the hops of an acks=all round */
	for (int i = 0; i < 50; i++)
		period(&p, &f, 40 * US);
	/* bucket [32, 64) us, times the headroom */
	assert_int_equal(hw_idle_window_ns(&p), 64 * US * HW_IDLE_HEADROOM);
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	uint64_t w0 = st.spins_to_work, s0 = st.spins_to_sleep;
	int slept = 0;
	for (int i = 0; i < 100; i++)
		slept += period(&p, &f, 40 * US);
	hw_idle_get_stats(&p, &st);
	assert_int_equal(slept, 0);
	assert_int_equal(st.spins_to_work - w0, 100);
	assert_int_equal(st.spins_to_sleep - s0, 0);
	assert_int_equal(st.window_ns, 64 * US * HW_IDLE_HEADROOM);
}

static void test_long_gaps_floor(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	assert_int_equal(hw_idle_window_ns(&p), 250 * US); /* optimistic start */
	for (int i = 0; i < 10; i++)
		period(&p, &f, 10000 * US);
	assert_int_equal(hw_idle_window_ns(&p), 5 * US);
	/* and spinning costs at most the floor per period */
	uint64_t y0 = f.yields;
	for (int i = 0; i < 10; i++)
		assert_int_equal(period(&p, &f, 10000 * US), 1);
	assert_true(f.yields - y0 <= 10 * 5);
	/* regular, but 10 ms apart: too far apart to wake early for */
	assert_int_equal(hw_idle_next_arrival_ns(&p), 0);
}

/* A gap from a tail that sat just past the covered bucket (an upstream hop
 * that was itself late) is spun through: the headroom. */
static void test_headroom_catches_a_late_hop(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	for (int i = 0; i < 100; i++)
		period(&p, &f, 40 * US);
	/* 40 us gaps, then one of 100 us: past [32, 64), inside the headroom */
	assert_int_equal(period(&p, &f, 100 * US), 0);
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.spins_to_sleep, 0);
}

/* Wait for work arriving at `arrive` as the reactor does: spin while
 * hw_idle_spin says so, else sleep — bounded by hw_idle_sleep_ns, a timer
 * that fires 20 us late — until the work's wake-up (20 us after it
 * arrives). Then 2 us of work. Returns 1 if the work found the loop asleep;
 * *yields gets the yields spent. */
static int wait_until(hw_idle_policy *p, fake *f, int64_t arrive, uint64_t *yields)
{
	uint64_t y0 = f->yields;
	int asleep = 0;
	for (;;) {
		if (f->now >= arrive)
			break;
		if (hw_idle_spin(p))
			continue;
		hw_idle_on_sleep(p);
		int64_t s = hw_idle_sleep_ns(p, f->now);
		int64_t timer = s == INT64_MAX ? INT64_MAX : f->now + s + 20 * US;
		if (timer < arrive + 20 * US) {
			f->now = timer; /* woken by the timer: poll again */
			continue;
		}
		f->now = arrive + 20 * US;
		asleep = 1;
		break;
	}
	int64_t start = f->now;
	f->now += 2 * US;
	hw_idle_on_work(p, start, f->now);
	if (yields)
		*yields = f->yields - y0;
	return asleep;
}

static void test_periodic_arrivals_wake_early(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	/* an open-loop producer at 1,000/s as a follower sees it: a record
	 * every 1 ms, then 30 us later the next piece of its round */
	int64_t t0 = f.now + 1000 * US;
	int asleep_late = 0;
	for (int k = 0; k < 40; k++) {
		uint64_t y;
		int64_t w = hw_idle_window_ns(&p);
		int a = wait_until(&p, &f, t0 + k * 1000 * US, &y);
		if (k >= 20) {
			asleep_late += a;
			/* caught while spinning: the work started on arrival */
			assert_true(f.now - 2 * US - (t0 + k * 1000 * US) <= 1 * US);
			/* the wait spun the window after the round's last work,
			 * then about a lead before the arrival: not the period */
			assert_true(y <= (uint64_t)(w / US) + 2 * (HW_IDLE_LEAD_NS / US) + 20);
		}
		period(&p, &f, 30 * US);
	}
	assert_int_equal(asleep_late, 0);
	assert_int_equal(hw_idle_window_ns(&p), 32 * US * HW_IDLE_HEADROOM);
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_true(st.early_wakes_to_work >= 20);
	assert_true(st.early_wakes_to_work <= st.early_wakes);
	assert_true(st.period_ns >= 990 * US && st.period_ns <= 1010 * US);
	/* the producer stops: one spin around the arrival that does not come,
	 * then a plain sleep until whatever comes next */
	uint64_t y;
	assert_int_equal(wait_until(&p, &f, f.now + 50000 * US, &y), 1);
	assert_true(y <= (uint64_t)(hw_idle_window_ns(&p) / US) + 2 * (HW_IDLE_LEAD_NS / US) + 40);
}

static void test_irregular_arrivals_never_wake_early(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	/* arrivals the window misses, each interval unlike the one before */
	static const int64_t iv_us[] = { 600, 1500, 800, 2400, 1000, 3000, 700, 1800 };
	int64_t at = f.now;
	for (int k = 0; k < 80; k++) {
		at += iv_us[k % 8] * US;
		assert_int_equal(wait_until(&p, &f, at, NULL), 1);
		assert_int_equal(hw_idle_next_arrival_ns(&p), 0);
		assert_int_equal(hw_idle_sleep_ns(&p, f.now), INT64_MAX);
	}
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.early_wakes, 0);
	assert_int_equal(st.period_ns, 0);
}

static void test_bimodal_keeps_short_mode(void **state)
{
	(void)state;
	uint64_t seed = hw_test_seed("idle_bimodal");
	srand((unsigned)seed);
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	for (int i = 0; i < 400; i++)
		period(&p, &f, rand() % 10 < 7 ? (20 + rand() % 20) * US : 20000 * US);
	/* 70 % of gaps are 20..39 us: the window covers them (with its
	 * headroom), not the 20 ms */
	int64_t w = hw_idle_window_ns(&p);
	assert_true(w >= 40 * US && w <= 64 * US * HW_IDLE_HEADROOM);
	/* mostly short gaps back to long ones: the window drops to the floor */
	for (int i = 0; i < 300; i++)
		period(&p, &f, 20000 * US);
	assert_int_equal(hw_idle_window_ns(&p), 5 * US);
}

static void test_contention_turns_spinning_off_and_back_on(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	for (int i = 0; i < 50; i++)
		period(&p, &f, 40 * US);
	assert_int_equal(hw_idle_window_ns(&p), 64 * US * HW_IDLE_HEADROOM);
	/* a CPU hog: every yield gives the core away for 2 ms */
	f.yield_cost = 2000 * US;
	for (int i = 0; i < 20; i++)
		period(&p, &f, 40 * US);
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_int_equal(hw_idle_window_ns(&p), 0);
	assert_int_equal(st.contended, 1);
	assert_true(st.contended_yields >= 3);
	/* 2 ms each: every contended yield was also a stall */
	assert_int_equal(st.stalled_yields, st.contended_yields);
	/* while off, at most one probe yield per 20 ms */
	uint64_t y0 = f.yields;
	int64_t t0 = f.now;
	for (int i = 0; i < 200; i++)
		period(&p, &f, 40 * US);
	uint64_t allowed = (uint64_t)((f.now - t0) / (HW_IDLE_PROBE_NS)) + 1;
	assert_true(f.yields - y0 <= allowed);
	/* the hog leaves: fast probes bring spinning back within a few */
	f.yield_cost = 1 * US;
	int back = -1;
	for (int i = 0; i < 5000 && back < 0; i++) {
		period(&p, &f, 40 * US);
		if (hw_idle_window_ns(&p) > 0)
			back = i;
	}
	assert_true(back >= 0);
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.contended, 0);
	assert_true(st.probes >= 1 && st.probes <= 20);
}

/* docs/idle.md "What the tail is made of": a yield that comes back 1 ms or
 * more later is a stall, counted apart from the contended ones (>= 50 us). */
static void test_stalled_yields_counted_apart(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 60 * US);
	hw_idle_stats st;
	/* 60 us yields: contended, not stalled */
	for (int i = 0; i < 3; i++)
		assert_int_equal(hw_idle_spin(&p), 1);
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.contended_yields, 3);
	assert_int_equal(st.stalled_yields, 0);
	/* just under the threshold, then at it */
	f.yield_cost = HW_IDLE_STALLED_NS - 1;
	hw_idle_on_work(&p, f.now, f.now); /* each spin starts a new window */
	assert_int_equal(hw_idle_spin(&p), 1);
	f.yield_cost = HW_IDLE_STALLED_NS;
	hw_idle_on_work(&p, f.now, f.now);
	assert_int_equal(hw_idle_spin(&p), 1);
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.contended_yields, 5);
	assert_int_equal(st.stalled_yields, 1);
}

static void test_mark_work_records_no_gap(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	for (int i = 0; i < 50; i++)
		period(&p, &f, 40 * US);
	/* a client that sends after long think times but gets its answers
	 * 40 us after each send: the think time is not a gap */
	for (int i = 0; i < 100; i++) {
		f.now += 30000 * US;
		hw_idle_mark_work(&p, f.now);
		period(&p, &f, 40 * US);
	}
	assert_int_equal(hw_idle_window_ns(&p), 64 * US * HW_IDLE_HEADROOM);
}

static void test_expect_nothing_learns_nothing(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	for (int i = 0; i < 50; i++)
		period(&p, &f, 40 * US);
	assert_int_equal(hw_idle_window_ns(&p), 64 * US * HW_IDLE_HEADROOM);
	hw_idle_stats before, after;
	hw_idle_get_stats(&p, &before);
	/* an open-loop client between records: nothing out, the next send is
	 * 900 us away; a stray frame (a metadata answer, a late duplicate)
	 * arrives 100 us into the wait */
	for (int i = 0; i < 100; i++) {
		hw_idle_expect_nothing(&p, f.now, f.now + 900 * US);
		assert_int_equal(hw_idle_spin(&p), 0);
		hw_idle_on_sleep(&p);
		f.now += 100 * US;
		hw_idle_on_work(&p, f.now, f.now + 2 * US);
		f.now += 800 * US;
		/* then a request goes out and its answer comes 40 us later */
		hw_idle_mark_work(&p, f.now);
		period(&p, &f, 40 * US);
	}
	hw_idle_get_stats(&p, &after);
	/* none of the waits for nothing counted as a window that ran out, and
	 * the stray frames are not gaps: the window still covers the 40 us
	 * answers only (with them: the 250 us maximum) */
	assert_int_equal(after.spins_to_sleep, before.spins_to_sleep);
	assert_int_equal(hw_idle_window_ns(&p), 64 * US * HW_IDLE_HEADROOM);
	assert_int_equal(after.spins_to_work - before.spins_to_work, 100);
}

static void test_expect_nothing_spins_only_before_the_deadline(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	setup(&p, &f, 1 * US);
	for (int i = 0; i < 50; i++)
		period(&p, &f, 40 * US);
	assert_int_equal(hw_idle_window_ns(&p), 64 * US * HW_IDLE_HEADROOM);
	hw_idle_stats before, after;
	hw_idle_get_stats(&p, &before);
	for (int i = 0; i < 100; i++) {
		/* records 1 ms apart: after an answer the next send is 900 us
		 * away; sleep until one window before it (the wake-up comes
		 * 20 us late), spin the rest */
		int64_t until = f.now + 900 * US;
		hw_idle_expect_nothing(&p, f.now, until);
		uint64_t y0 = f.yields;
		assert_int_equal(hw_idle_spin(&p), 0);
		hw_idle_on_sleep(&p);
		assert_int_equal(hw_idle_sleep_ns(&p, f.now), (900 - 64 * HW_IDLE_HEADROOM) * US);
		f.now += hw_idle_sleep_ns(&p, f.now) + 20 * US;
		while (hw_idle_spin(&p))
			;
		assert_true(f.now >= until);
		assert_true(f.now < until + 2 * US);
		assert_int_equal(f.yields - y0, 64 * HW_IDLE_HEADROOM - 20);
		/* the send, then its answer 40 us later */
		hw_idle_mark_work(&p, f.now);
		assert_int_equal(hw_idle_sleep_ns(&p, f.now), INT64_MAX);
		period(&p, &f, 40 * US);
	}
	hw_idle_get_stats(&p, &after);
	assert_int_equal(after.spins_to_sleep, before.spins_to_sleep);
	assert_int_equal(hw_idle_window_ns(&p), 64 * US * HW_IDLE_HEADROOM);
	/* records 100 us apart: the next send 50 us away is inside the window */
	hw_idle_expect_nothing(&p, f.now, f.now + 50 * US);
	assert_int_equal(hw_idle_sleep_ns(&p, f.now), 0);
	assert_int_equal(hw_idle_spin(&p), 1);
}

/* ---- demotion (docs/idle.md "Demotion") ---------------------------------- */

typedef struct fake_class {
	int idle;       /* the thread's class as the policy left it */
	int to_idle;    /* switches to SCHED_IDLE */
	int fail;       /* answer -EPERM */
} fake_class;

static int fake_set_class(void *arg, int idle)
{
	fake_class *c = arg;
	if (c->fail)
		return -1;
	if (idle && !c->idle)
		c->to_idle++;
	c->idle = idle;
	return 0;
}

static void test_demotes_after_50us_until_work(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	fake_class c = { 0 };
	setup(&p, &f, 1 * US);
	hw_idle_set_demote(&p, HW_IDLE_DEMOTE_US, fake_set_class, &c);
	/* a 30 us gap: never demoted */
	period(&p, &f, 30 * US);
	assert_int_equal(c.to_idle, 0);
	/* spin 49 us: still normal; then the 50th us demotes, once */
	int64_t end = f.now;
	while (f.now - end < 49 * US)
		assert_int_equal(hw_idle_spin(&p), 1);
	assert_int_equal(c.idle, 0);
	while (f.now - end < 60 * US) /* the window is 64 us */
		assert_int_equal(hw_idle_spin(&p), 1);
	assert_int_equal(c.idle, 1);
	assert_int_equal(c.to_idle, 1);
	/* the work ends it */
	hw_idle_on_work(&p, f.now, f.now + 2 * US);
	f.now += 2 * US;
	assert_int_equal(c.idle, 0);
	/* a period that spins out its window and sleeps: back before the sleep */
	while (hw_idle_spin(&p))
		;
	assert_int_equal(c.idle, 1);
	hw_idle_on_sleep(&p);
	assert_int_equal(c.idle, 0);
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.demotions, 2);
	assert_int_equal(st.demote_errors, 0);
}

static void test_no_demotion_when_contended_or_probing(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	fake_class c = { 0 };
	setup(&p, &f, 1 * US);
	hw_idle_set_demote(&p, HW_IDLE_DEMOTE_US, fake_set_class, &c);
	/* one contended yield among the recent ones: a hog may be there */
	f.yield_cost = HW_IDLE_CONTENDED_NS;
	assert_int_equal(hw_idle_spin(&p), 1);
	f.yield_cost = 1 * US;
	for (int i = 0; i < 20; i++) /* 70 us into the period */
		assert_int_equal(hw_idle_spin(&p), 1);
	assert_int_equal(c.to_idle, 0);
	/* "recent": the decayed yield counts forget it after 64 yields */
	for (int i = 0; i < 60; i++)
		assert_int_equal(hw_idle_spin(&p), 1);
	assert_int_equal(c.to_idle, 1);
	hw_idle_on_work(&p, f.now, f.now);
	assert_int_equal(c.idle, 0);
	c.to_idle = 0;
	/* spinning off for contention: probes never demote */
	f.yield_cost = 60 * US;
	for (int i = 0; i < 40; i++)
		period(&p, &f, 300 * US);
	assert_int_equal(hw_idle_window_ns(&p), 0);
	for (int i = 0; i < 5; i++)
		period(&p, &f, HW_IDLE_PROBE_NS + 100 * US);
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_true(st.probes >= 4); /* one per 20 ms; the first may come too soon */
	assert_int_equal(c.to_idle, 0);
	assert_int_equal(st.demotions, 1); /* the one above */
}

static void test_failed_switch_turns_demotion_off(void **state)
{
	(void)state;
	hw_idle_policy p;
	fake f;
	fake_class c = { .fail = 1 };
	setup(&p, &f, 1 * US);
	hw_idle_set_demote(&p, HW_IDLE_DEMOTE_US, fake_set_class, &c);
	for (int i = 0; i < 3; i++)
		period(&p, &f, 100 * US);
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.demote_errors, 1);
	assert_int_equal(st.demotions, 0);
	/* spinning itself goes on */
	assert_true(st.spins_to_work >= 3);
}

/* The real switch on this kernel: as root (CI) the probe says yes, a loop
 * spinning 60 us is SCHED_IDLE and its work makes it SCHED_OTHER again;
 * without CAP_SYS_NICE and RLIMIT_NICE < 20 the probe says no and the
 * thread never leaves SCHED_OTHER. */
static void test_real_demotion(void **state)
{
	(void)state;
	struct rlimit rl = { 0 };
	getrlimit(RLIMIT_NICE, &rl);
	int expect = geteuid() == 0 || rl.rlim_cur >= 20;
	assert_int_equal(hw_idle_demote_supported(), expect);
	hw_idle_policy p;
	hw_idle_init(&p, 250, 5, NULL, NULL, NULL); /* the real clock and yield */
	hw_idle_stats st;
	hw_idle_get_stats(&p, &st);
	assert_int_equal(p.demote_ns, 0); /* off by default */
	hw_idle_set_demote(&p, HW_IDLE_DEMOTE_US, NULL, NULL);
	hw_idle_on_work(&p, 0, p.now(p.arg));
	int64_t t0 = p.now(p.arg);
	while (p.now(p.arg) - t0 < 60 * US && hw_idle_spin(&p))
		;
	assert_int_equal(sched_getscheduler(0), expect ? SCHED_IDLE : SCHED_OTHER);
	int64_t t1 = p.now(p.arg);
	hw_idle_on_work(&p, t1, t1);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	hw_idle_get_stats(&p, &st);
	assert_int_equal(st.demotions, (uint64_t)expect);
	assert_int_equal(st.demote_errors, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_gaps_learnt),
		cmocka_unit_test(test_long_gaps_floor),
		cmocka_unit_test(test_headroom_catches_a_late_hop),
		cmocka_unit_test(test_periodic_arrivals_wake_early),
		cmocka_unit_test(test_irregular_arrivals_never_wake_early),
		cmocka_unit_test(test_bimodal_keeps_short_mode),
		cmocka_unit_test(test_contention_turns_spinning_off_and_back_on),
		cmocka_unit_test(test_stalled_yields_counted_apart),
		cmocka_unit_test(test_mark_work_records_no_gap),
		cmocka_unit_test(test_expect_nothing_learns_nothing),
		cmocka_unit_test(test_expect_nothing_spins_only_before_the_deadline),
		cmocka_unit_test(test_demotes_after_50us_until_work),
		cmocka_unit_test(test_no_demotion_when_contended_or_probing),
		cmocka_unit_test(test_failed_switch_turns_demotion_off),
		cmocka_unit_test(test_real_demotion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
