/* test_wheel.c — timing wheel against a fake clock.
 *
 * The big test schedules 1e6 timers with log-uniform timeouts from 1 ms to
 * 5 hours, cancels half of them (some before any time passes, some midway),
 * advances the clock in random steps and checks after every step that
 * exactly the live timers with expiry <= now have fired, each once, with
 * the wheel clock in the callback equal to the expiry (never early, never
 * late, whatever the tick). Others cover cancel and
 * re-add from inside callbacks, moves, and edge times.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../../support/hw_test.h"
#include "hw_wheel.h"

static uint64_t g_seed;

/* ---- bookkeeping shared by the randomized tests ----------------------- */

typedef struct tstate {
	hw_timer t;
	int64_t exp;
	int64_t cancel_at;
	int fired;
	int cancelled;
} tstate;

typedef struct run {
	hw_wheel *w;
	int64_t tick;
	int64_t target;       /* argument of the advance_to in progress */
	int64_t lower_bound;  /* next_expiry() before that advance_to */
	size_t fired;
	size_t errors;        /* counted, asserted after (cmocka in callbacks is fine too) */
} run;

static run g_run;

static void on_fire(hw_timer *t, void *arg)
{
	tstate *s = arg;
	(void)t;
	int64_t now = hw_wheel_now(g_run.w);
	if (s->fired || s->cancelled || s->exp > g_run.target || now < s->exp ||
	    now < g_run.lower_bound ||
	    now != s->exp)
		g_run.errors++;
	s->fired++;
	g_run.fired++;
}

static int cmp_exp(const void *a, const void *b)
{
	int64_t x = (*(tstate *const *)a)->exp, y = (*(tstate *const *)b)->exp;
	return (x > y) - (x < y);
}

static int cmp_cancel_at(const void *a, const void *b)
{
	int64_t x = (*(tstate *const *)a)->cancel_at, y = (*(tstate *const *)b)->cancel_at;
	return (x > y) - (x < y);
}

/* Log-uniform in [1, hi]. */
static int64_t log_uniform(hw_rng *r, int64_t hi)
{
	double v = exp(hw_rng_unit(r) * log((double)hi));
	int64_t x = (int64_t)v;
	return x < 1 ? 1 : (x > hi ? hi : x);
}

static void big_random(size_t n, int64_t tick, int wheel_size, uint64_t salt)
{
	hw_rng r = { g_seed ^ salt };
	const int64_t start = (int64_t)hw_rng_below(&r, 1000000);
	const int64_t hours5 = 5LL * 3600 * 1000;
	hw_wheel *w = hw_wheel_create(tick, wheel_size, start);
	assert_non_null(w);
	memset(&g_run, 0, sizeof(g_run));
	g_run.w = w;
	g_run.tick = tick;

	tstate *st = calloc(n, sizeof(*st));
	tstate **by_exp = calloc(n, sizeof(*by_exp));
	assert_non_null(st);
	assert_non_null(by_exp);
	for (size_t i = 0; i < n; i++) {
		st[i].exp = start + log_uniform(&r, hours5);
		hw_timer_init(&st[i].t, on_fire, &st[i]);
		assert_int_equal(hw_wheel_add(w, &st[i].t, st[i].exp), 0);
		by_exp[i] = &st[i];
	}
	assert_int_equal(hw_wheel_size(w), n);
	qsort(by_exp, n, sizeof(*by_exp), cmp_exp);

	/* Half the timers get cancelled: each picked one at a random time
	 * between creation and its expiry (a third of them before time moves).
	 * by_cancel lists them in cancel-time order. */
	tstate **by_cancel = calloc(n, sizeof(*by_cancel));
	assert_non_null(by_cancel);
	size_t ncancel = 0, live = n;
	for (size_t i = 0; i < n; i++) {
		if (hw_rng_below(&r, 2))
			continue;
		st[i].cancel_at = hw_rng_below(&r, 3) == 0
					  ? start - 1
					  : start + (int64_t)hw_rng_below(&r, (uint64_t)(st[i].exp - start));
		by_cancel[ncancel++] = &st[i];
	}
	qsort(by_cancel, ncancel, sizeof(*by_cancel), cmp_cancel_at);
	size_t next_cancel = 0;
	while (next_cancel < ncancel && by_cancel[next_cancel]->cancel_at < start) {
		tstate *s = by_cancel[next_cancel++];
		assert_int_equal(hw_wheel_cancel(w, &s->t), 1);
		s->cancelled = 1;
		live--;
	}
	assert_int_equal(hw_wheel_size(w), live);

	int64_t now = start;
	size_t next = 0;          /* by_exp[next..] have exp > now */
	size_t expect_fired = 0;
	size_t steps = 0;
	while (next < n) {
		/* Steps from 1 tick to ~1 minute, occasionally ~1 hour. */
		int64_t step = hw_rng_below(&r, 100) == 0
				       ? (int64_t)hw_rng_below(&r, 3600000)
				       : log_uniform(&r, 60000);
		/* Cancel the timers whose cancel time falls in this step: all
		 * still pending (cancel_at < exp), some due in this very step. */
		while (next_cancel < ncancel && by_cancel[next_cancel]->cancel_at < now + step) {
			tstate *s = by_cancel[next_cancel++];
			assert_int_equal(hw_wheel_cancel(w, &s->t), 1);
			assert_int_equal(hw_wheel_cancel(w, &s->t), 0);
			s->cancelled = 1;
			live--;
		}
		g_run.lower_bound = hw_wheel_next_expiry(w);
		now += step;
		g_run.target = now;
		size_t before = g_run.fired;
		size_t got = hw_wheel_advance_to(w, now);
		assert_int_equal(got, g_run.fired - before);
		while (next < n && by_exp[next]->exp <= now) {
			if (!by_exp[next]->cancelled)
				expect_fired++;
			next++;
		}
		assert_int_equal(g_run.fired, expect_fired);
		assert_int_equal(g_run.errors, 0);
		assert_int_equal(hw_wheel_size(w), live - expect_fired);
		assert_int_equal(hw_wheel_now(w), now);
		steps++;
	}
	/* One more step past the tick slack: nothing left, nothing more fires. */
	assert_int_equal(hw_wheel_advance_to(w, now + tick), 0);
	assert_int_equal(hw_wheel_size(w), 0);
	assert_int_equal(hw_wheel_next_expiry(w), INT64_MAX);
	size_t cancelled = 0;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(st[i].fired, st[i].cancelled ? 0 : 1);
		assert_false(hw_timer_pending(&st[i].t));
		cancelled += (size_t)st[i].cancelled;
	}
	assert_int_equal(cancelled, ncancel);
	assert_true(ncancel > n / 3);
	printf("# big_random n=%zu tick=%lld size=%d: %zu steps, %zu fired, %zu cancelled\n",
	       n, (long long)tick, wheel_size, steps, expect_fired, cancelled);
	hw_wheel_destroy(w);
	free(st);
	free(by_exp);
	free(by_cancel);
}

static void test_million_tick1(void **state)
{
	(void)state;
	big_random(1000000, 1, 20, 1); /* Kafka's purgatory: 1 ms tick, 20 buckets */
}

static void test_random_coarse_tick(void **state)
{
	(void)state;
	big_random(200000, 7, 64, 2);   /* tick > 1: bounded lateness, ordered */
	big_random(100000, 1, 2, 3);    /* many levels */
	big_random(100000, 3, 4096, 4); /* wide wheel */
}

/* ---- exactness and basic API --------------------------------------------- */

static int64_t fired_at[16];
static int nfired;

static void record_now(hw_timer *t, void *arg)
{
	hw_wheel *w = arg;
	(void)t;
	fired_at[nfired++] = hw_wheel_now(w);
}

static void test_basic_and_args(void **state)
{
	(void)state;
	assert_null(hw_wheel_create(0, 20, 0));
	assert_null(hw_wheel_create(1, 1, 0));
	assert_null(hw_wheel_create(1, 20, -1));
	hw_wheel *w = hw_wheel_create(1, 20, 100);
	assert_non_null(w);
	hw_timer t, nofn;
	hw_timer_init(&t, record_now, w);
	hw_timer_init(&nofn, NULL, NULL);
	assert_int_equal(hw_wheel_add(w, &nofn, 5), -EINVAL);
	assert_int_equal(hw_wheel_add(NULL, &t, 5), -EINVAL);
	assert_int_equal(hw_wheel_add(w, NULL, 5), -EINVAL);
	assert_int_equal(hw_wheel_next_expiry(w), INT64_MAX);

	/* Exact firing with tick 1, at 1 unit granularity across levels. */
	nfired = 0;
	assert_int_equal(hw_wheel_add(w, &t, 100 + 12345), 0);
	assert_true(hw_timer_pending(&t));
	assert_true(hw_wheel_next_expiry(w) <= 100 + 12345);
	assert_int_equal(hw_wheel_advance_to(w, 100 + 12344), 0);
	assert_int_equal(nfired, 0);
	assert_int_equal(hw_wheel_advance_to(w, 100 + 12345), 1);
	assert_int_equal(nfired, 1);
	assert_int_equal(fired_at[0], 100 + 12345);
	assert_false(hw_timer_pending(&t));
	/* Backwards is a no-op. */
	assert_int_equal(hw_wheel_advance_to(w, 5), 0);
	assert_int_equal(hw_wheel_now(w), 100 + 12345);

	/* Expiry in the past: due on the next advance, not before. */
	nfired = 0;
	assert_int_equal(hw_wheel_add(w, &t, 3), 0);
	assert_int_equal(hw_wheel_next_expiry(w), hw_wheel_now(w));
	assert_int_equal(hw_wheel_advance_to(w, hw_wheel_now(w)), 1);
	assert_int_equal(nfired, 1);

	/* Moving a pending timer: fires once, at the new time. */
	nfired = 0;
	int64_t now = hw_wheel_now(w);
	assert_int_equal(hw_wheel_add(w, &t, now + 1000000), 0);
	assert_int_equal(hw_wheel_add(w, &t, now + 50), 0);
	assert_int_equal(hw_wheel_size(w), 1);
	assert_int_equal(hw_wheel_advance_to(w, now + 2000000), 1);
	assert_int_equal(nfired, 1);
	assert_int_equal(fired_at[0], now + 50);

	/* The end of time. */
	nfired = 0;
	assert_int_equal(hw_wheel_add(w, &t, INT64_MAX), 0);
	assert_int_equal(hw_wheel_advance_to(w, INT64_MAX - 1), 0);
	assert_int_equal(hw_wheel_advance_to(w, INT64_MAX), 1);
	assert_int_equal(fired_at[0], INT64_MAX);

	/* Destroy drops pending timers without firing them. */
	hw_wheel *w2 = hw_wheel_create(1, 8, 0);
	assert_non_null(w2);
	nfired = 0;
	assert_int_equal(hw_wheel_add(w2, &t, 1LL << 40), 0);
	hw_wheel_destroy(w2);
	assert_false(hw_timer_pending(&t));
	assert_int_equal(nfired, 0);
	hw_wheel_destroy(w);
}

/* Within one level-0 bucket (tick > 1) timers fire in expiry order. */
static int64_t order_seen[64];
static int norder;
static void record_exp(hw_timer *t, void *arg)
{
	hw_wheel *w = arg;
	assert_int_equal(hw_wheel_now(w), t->expires); /* clock follows expiries */
	order_seen[norder++] = t->expires;
}

static void test_order_within_bucket(void **state)
{
	(void)state;
	hw_rng r = { g_seed ^ 5 };
	hw_wheel *w = hw_wheel_create(1000, 16, 0);
	assert_non_null(w);
	hw_timer ts[64];
	for (int i = 0; i < 64; i++) {
		hw_timer_init(&ts[i], record_exp, w);
		assert_int_equal(hw_wheel_add(w, &ts[i], 5000 + (int64_t)hw_rng_below(&r, 1000)), 0);
	}
	int64_t mid = 5000 + (int64_t)hw_rng_below(&r, 1000);
	int due_by_mid = 0;
	for (int i = 0; i < 64; i++)
		due_by_mid += ts[i].expires <= mid;
	norder = 0;
	assert_int_equal(hw_wheel_advance_to(w, 4999), 0);
	/* target inside the bucket's tick: exactly the due prefix fires */
	assert_int_equal(hw_wheel_advance_to(w, mid), due_by_mid);
	assert_int_equal(hw_wheel_size(w), 64 - due_by_mid);
	for (int i = 0; i < due_by_mid; i++)
		assert_true(order_seen[i] <= mid);
	assert_int_equal(hw_wheel_advance_to(w, 6000), 64 - due_by_mid);
	for (int i = 1; i < 64; i++)
		assert_true(order_seen[i - 1] <= order_seen[i]);
	hw_wheel_destroy(w);
}

/* ---- reentrancy ----------------------------------------------------------- */

typedef struct canceller {
	hw_timer t;
	int fired;
	int cancelled;        /* someone cancelled it while pending */
	struct canceller *victims[4];
} canceller;

static hw_wheel *g_w;

static void cancel_victims(hw_timer *t, void *arg)
{
	canceller *c = arg;
	(void)t;
	assert_false(c->cancelled);   /* cancelled before its callback: must not run */
	c->fired++;
	for (int i = 0; i < 4; i++) {
		canceller *v = c->victims[i];
		if (!v)
			continue;
		int was = hw_timer_pending(&v->t);
		assert_int_equal(hw_wheel_cancel(g_w, &v->t), was);
		if (was)
			v->cancelled = 1;
		assert_int_equal(hw_wheel_cancel(g_w, &v->t), 0); /* idempotent */
	}
	/* cancelling itself (already unlinked) is a harmless 0 */
	assert_int_equal(hw_wheel_cancel(g_w, t), 0);
}

static void test_cancel_from_callback(void **state)
{
	(void)state;
	enum { N = 20000 };
	hw_rng r = { g_seed ^ 6 };
	g_w = hw_wheel_create(1, 20, 0);
	assert_non_null(g_w);
	canceller *cs = calloc(N, sizeof(*cs));
	assert_non_null(cs);
	for (int i = 0; i < N; i++) {
		hw_timer_init(&cs[i].t, cancel_victims, &cs[i]);
		/* Few distinct expiries so victims are often in the same bucket
		 * and due in the same advance. */
		assert_int_equal(hw_wheel_add(g_w, &cs[i].t, 1 + (int64_t)hw_rng_below(&r, 500)), 0);
		for (int k = 0; k < 4; k++)
			cs[i].victims[k] = hw_rng_below(&r, 2) ? &cs[hw_rng_below(&r, N)] : NULL;
	}
	size_t total = 0;
	for (int64_t now = 0; now <= 520; now += 1 + (int64_t)hw_rng_below(&r, 40))
		total += hw_wheel_advance_to(g_w, now);
	total += hw_wheel_advance_to(g_w, 600);
	size_t fired = 0, cancelled = 0;
	for (int i = 0; i < N; i++) {
		assert_int_equal(cs[i].fired + cs[i].cancelled, 1); /* exactly one fate */
		fired += (size_t)cs[i].fired;
		cancelled += (size_t)cs[i].cancelled;
	}
	assert_int_equal(total, fired);
	assert_true(cancelled > 0);
	assert_int_equal(hw_wheel_size(g_w), 0);
	free(cs);
	hw_wheel_destroy(g_w);
}

typedef struct periodic {
	hw_timer t;
	int64_t period;
	int64_t last;
	int count;
	int immediate;      /* re-arm at <= now this many more times */
} periodic;

static void rearm(hw_timer *t, void *arg)
{
	periodic *p = arg;
	int64_t now = hw_wheel_now(g_w);
	/* advance_to from a callback is refused, not recursed into */
	assert_int_equal(hw_wheel_advance_to(g_w, now + 1000000000), 0);
	assert_int_equal(hw_wheel_now(g_w), now);
	assert_int_equal(now, t->expires);   /* tick 1: exact */
	assert_false(hw_timer_pending(t));
	p->count++;
	p->last = now;
	if (p->immediate > 0) {
		p->immediate--;
		/* expiry <= now during advance: fires within the same call */
		assert_int_equal(hw_wheel_add(g_w, t, now), 0);
		return;
	}
	assert_int_equal(hw_wheel_add(g_w, t, now + p->period), 0);
}

static void test_readd_from_callback(void **state)
{
	(void)state;
	hw_rng r = { g_seed ^ 7 };
	g_w = hw_wheel_create(1, 20, 0);
	assert_non_null(g_w);
	enum { P = 50 };
	periodic ps[P];
	for (int i = 0; i < P; i++) {
		memset(&ps[i], 0, sizeof(ps[i]));
		ps[i].period = 1 + (int64_t)hw_rng_below(&r, 100000);
		hw_timer_init(&ps[i].t, rearm, &ps[i]);
		assert_int_equal(hw_wheel_add(g_w, &ps[i].t, ps[i].period), 0);
	}
	ps[0].immediate = 3;
	const int64_t end = 10000000; /* ~2.8 h of ms */
	int64_t now = 0;
	while (now < end) {
		now += 1 + (int64_t)hw_rng_below(&r, 200000);
		if (now > end)
			now = end;
		hw_wheel_advance_to(g_w, now);
	}
	for (int i = 0; i < P; i++) {
		int extra = i == 0 ? 3 : 0;
		assert_int_equal(ps[i].count, end / ps[i].period + extra);
		assert_int_equal(ps[i].last, end / ps[i].period * ps[i].period);
		assert_true(hw_timer_pending(&ps[i].t));
	}
	assert_int_equal(hw_wheel_size(g_w), P);
	hw_wheel_destroy(g_w);
}

int main(void)
{
	g_seed = hw_test_seed("wheel");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_and_args),
		cmocka_unit_test(test_order_within_bucket),
		cmocka_unit_test(test_cancel_from_callback),
		cmocka_unit_test(test_readd_from_callback),
		cmocka_unit_test(test_million_tick1),
		cmocka_unit_test(test_random_coarse_tick),
	};
	return cmocka_run_group_tests_name("wheel", tests, NULL, NULL);
}
