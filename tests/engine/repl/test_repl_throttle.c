/* test_repl_throttle.c — the replication throttle (Kafka KIP-73) on the
 * deterministic harness: a follower that fell out of the ISR catches up a
 * backlog at the configured leader / follower rate, an ISR follower is never
 * held back, `*` versus explicit partition:broker lists (controller
 * resolution and the resulting coverage), and a dynamic rate change.
 *
 * The rate model checked (hw_quota.h: Kafka's SampledStat + SimpleRate,
 * n = 11 windows of w = 1 s): t seconds after catch-up starts the follower
 * has copied at most R * (t + n*w) plus one fetch (SimpleRate lets a burst
 * use the credit of the sampled window, up to n*w, e.g. right after the
 * follower left the ISR) and at least 0.9 * R * (t - w) (10% for the wait
 * for a parked fetch, 500 ms, after the quota frees up); between n*w + 1 s
 * and the end the copy rate is R within [0.9, 1.05]. So catch-up of B bytes
 * takes between (B - n*w*R - fetch) / R and B / (0.9 R) + w seconds, and
 * the follower is back in the ISR right after.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_ctrl.h"
#include "hw_logging.h"
#include "hw_quota.h"
#include "hx.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;

#define RATE       50000   /* bytes/s */
#define FETCH_MAX  8192    /* replica.fetch.max.bytes: fine-grained pacing */
#define BACKLOG    1500000 /* bytes produced while the follower is away */
#define WIN_S      1       /* replication.quota.window.size.seconds (default) */
#define NWIN       11      /* replication.quota.window.num (default) */

typedef struct tcfg {
	int64_t leader_rate, follower_rate;
} tcfg;

static void tweak(int node, hw_rm_config *c, void *arg)
{
	(void)node;
	const tcfg *t = arg;
	c->replica_lag_time_max_ms = 2000;
	c->replica_fetch_max_bytes = FETCH_MAX;
	c->leader_replication_throttled_rate = t->leader_rate;
	c->follower_replication_throttled_rate = t->follower_rate;
}

static hx *mk(tcfg *t)
{
	hx_opts o = { .nodes = 2, .seed = g_seed, .tweak = tweak, .arg = t };
	return hx_create(&o);
}

static hw_idset ids(int n, int a, int b)
{
	hw_idset s = { 0 };
	if (n > 0)
		s.id[s.n++] = a;
	if (n > 1)
		s.id[s.n++] = b;
	return s;
}

static uint64_t metric(hx *h, int node, int m)
{
	hw_rm_part_info pi;
	hx_info(h, node, 0, &pi);
	return pi.metrics[m];
}

/* Partition 0 on brokers {1 (leader), 2} with the throttle configs lt/ft
 * (brokers covered on the leader / follower side); broker 2 pauses, the leader
 * produces `bytes` of acks=1 batches and drops 2 from the ISR. Returns the
 * backlog in bytes (what 2 must copy). */
static int64_t make_backlog(hx *h, int64_t bytes, hw_idset lt, hw_idset ft)
{
	int reps[2] = { 1, 2 };
	hx_ctl_create(h, 0, reps, 2, 1);
	hx_ctl_set_throttle(h, 0, &lt, &ft); /* topic created with the configs */
	hx_run_quiet(h, 100);
	hx_pause(h, 2, 1);
	while ((int64_t)metric(h, 1, HW_PM_PRODUCE_BYTES) < bytes) {
		hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 256 });
		hx_run_until(h, hx_now(h) + 1);
	}
	hx_run_until(h, hx_now(h) + 3000); /* > replica.lag.time.max.ms */
	hw_rm_part_info l, f;
	hx_info(h, 1, 0, &l);
	hx_info(h, 2, 0, &f);
	assert_int_equal(l.isr.n, 1); /* follower out of the ISR: catch-up traffic */
	return (int64_t)metric(h, 1, HW_PM_PRODUCE_BYTES) - (int64_t)metric(h, 2, HW_PM_REPLICA_BYTES_APPENDED);
}

typedef struct catchup {
	double secs;            /* until the follower's LEO equals the leader's */
	double rejoin_secs;     /* until the leader's ISR holds it again */
	int64_t copied[200];    /* bytes appended by the follower after k seconds */
	int n;
} catchup;

/* Resume broker 2 and sample its appended bytes every 100 ms until it is
 * caught up and back in the ISR (max_s seconds at most). */
static void run_catchup(hx *h, catchup *c, int max_s)
{
	memset(c, 0, sizeof(*c));
	c->secs = c->rejoin_secs = -1;
	int64_t t0 = hx_now(h);
	int64_t b0 = (int64_t)metric(h, 2, HW_PM_REPLICA_BYTES_APPENDED);
	hx_pause(h, 2, 0);
	for (int64_t t = 100; t <= (int64_t)max_s * 1000; t += 100) {
		hx_run_until(h, t0 + t);
		hw_rm_part_info l, f;
		hx_info(h, 1, 0, &l);
		hx_info(h, 2, 0, &f);
		if (t % 1000 == 0 && c->n < 200)
			c->copied[c->n++] = (int64_t)f.metrics[HW_PM_REPLICA_BYTES_APPENDED] - b0;
		if (c->secs < 0 && f.leo == l.leo)
			c->secs = (double)t / 1000.0;
		if (c->rejoin_secs < 0 && hw_idset_has(&l.isr, 2))
			c->rejoin_secs = (double)t / 1000.0;
		if (c->secs >= 0 && c->rejoin_secs >= 0 && c->n >= 1)
			break;
	}
}

/* The model of the file comment, for a throttled catch-up of B bytes. */
static void check_rate_model(const catchup *c, int64_t B, const char *what)
{
	printf("%s: backlog %" PRId64 " B at %d B/s: caught up after %.1f s, back in the ISR after "
	       "%.1f s (B/R = %.1f s)\n", what, B, RATE, c->secs, c->rejoin_secs, (double)B / RATE);
	for (int k = 0; k < c->n; k++) {
		double t = k + 1;
		double hi = RATE * (t + NWIN * WIN_S) + 2.0 * FETCH_MAX;
		double lo = 0.9 * RATE * (t - WIN_S);
		if (c->copied[k] >= B)
			lo = 0; /* done */
		if (k % 5 == 4 || c->copied[k] > hi || c->copied[k] < lo)
			printf("  t=%2.0f s copied %7" PRId64 "  (model %.0f .. %.0f)\n", t, c->copied[k],
			       lo > 0 ? lo : 0, hi);
		assert_true(c->copied[k] <= hi);
		assert_true(c->copied[k] >= lo);
	}
	/* steady state, once the sampled window is past the start: the rate */
	int a = NWIN * WIN_S + 1, b = (int)(B / RATE) - 4;
	assert_true(b - a >= 10 && b <= c->n);
	double steady = (double)(c->copied[b - 1] - c->copied[a - 1]) / (b - a);
	printf("  steady rate t=%d..%d s: %.0f B/s (%.3f of the bound)\n", a, b, steady, steady / RATE);
	assert_true(steady >= 0.9 * RATE && steady <= 1.05 * RATE);
	assert_true(c->secs > 0);
	assert_true(c->secs >= (double)(B - NWIN * WIN_S * RATE - 2 * FETCH_MAX) / RATE);
	assert_true(c->secs <= (double)B / (0.9 * RATE) + WIN_S + 1);
	assert_true(c->rejoin_secs > 0 && c->rejoin_secs <= c->secs + 1); /* rejoins the ISR */
}

/* ---- hw_quota arithmetic (Kafka Rate.windowSize) ------------------------ */
static void test_quota_model(void **state)
{
	(void)state;
	hw_quota q;
	assert_int_equal(hw_quota_init(&q, -1, 11, 1000), -EINVAL);
	assert_int_equal(hw_quota_init(&q, 100, 0, 1000), -EINVAL);
	assert_int_equal(hw_quota_init(&q, 100, 11, 0), -EINVAL);
	assert_int_equal(hw_quota_init(&q, 100, 11, 1000), 0);
	assert_false(hw_quota_exceeded(&q, 0));
	/* fresh: the rate is taken over at least one window: 100 B = 100 B/s */
	hw_quota_record(&q, 100, 5000);
	assert_true(hw_quota_rate(&q, 5000) == 100.0);
	assert_false(hw_quota_exceeded(&q, 5000));
	hw_quota_record(&q, 1, 5000);
	assert_true(hw_quota_exceeded(&q, 5000));
	assert_true(hw_quota_exceeded(&q, 6000));  /* 101 B / 1 s */
	assert_false(hw_quota_exceeded(&q, 6010)); /* 101 B / 1.01 s */
	/* a new sample starts after a window; the first expires after 11 */
	hw_quota_record(&q, 500, 9000);
	assert_true(q.used == 2);
	assert_true(hw_quota_rate(&q, 10000) == 601.0 * 1000 / 5000);
	assert_true(hw_quota_exceeded(&q, 10000));
	assert_true(hw_quota_rate(&q, 15999) == 601.0 * 1000 / 10999);
	assert_true(hw_quota_rate(&q, 16000) == 500.0 * 1000 / 7000); /* 1st expired */
	/* unlimited never exceeds; a bound change keeps the samples */
	assert_int_equal(hw_quota_set_bound(&q, HW_QUOTA_UNLIMITED), 0);
	hw_quota_record(&q, 1 << 30, 16000);
	assert_false(hw_quota_exceeded(&q, 16000));
	assert_int_equal(hw_quota_set_bound(&q, 100), 0);
	assert_true(hw_quota_exceeded(&q, 16000));
	assert_int_equal(hw_quota_set_bound(&q, -5), -EINVAL);
	assert_true(q.recorded_bytes == 601 + (1u << 30));
	/* everything expires after n windows of silence */
	assert_true(hw_quota_rate(&q, 16000 + 11000) == 0.0);
	assert_false(hw_quota_exceeded(&q, 16000 + 11000));
}

/* ---- controller: `*` and explicit lists --------------------------------- */
static void test_throttled_replicas_syntax(void **state)
{
	(void)state;
	hw_idset reps = ids(2, 1, 2), out;
	reps.id[reps.n++] = 3;
	assert_int_equal(hw_ctrl_throttled_replicas_resolve("*", 4, &reps, &out), 0);
	assert_int_equal(out.n, 3);
	assert_int_equal(hw_ctrl_throttled_replicas_resolve(" * ", 0, &reps, &out), 0);
	assert_int_equal(out.n, 3);
	assert_int_equal(hw_ctrl_throttled_replicas_resolve("", 0, &reps, &out), 0);
	assert_int_equal(out.n, 0);
	assert_int_equal(hw_ctrl_throttled_replicas_resolve("0:3, 1:1 ,0:1,0:9,,2:2", 0, &reps, &out), 0);
	assert_int_equal(out.n, 2); /* replicas order; 9 is no replica */
	assert_int_equal(out.id[0], 1);
	assert_int_equal(out.id[1], 3);
	assert_int_equal(hw_ctrl_throttled_replicas_resolve("0:3,1:1", 1, &reps, &out), 0);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.id[0], 1);
	assert_int_equal(hw_ctrl_throttled_replicas_resolve("0:3,1:1", 2, &reps, &out), 0);
	assert_int_equal(out.n, 0);
	/* Kafka looks only at a leading "*" (ThrottledReplicaListValidator) */
	assert_int_equal(hw_ctrl_throttled_replicas_resolve("*,0:1x", 0, &reps, &out), 0);
	assert_int_equal(out.n, 3);
	static const char *bad[] = { "x", "0", "0:", ":1", "0:1:2", "0;1", "0:1x", "-1:1", "*x",
				     "0:99999999999", "1 :2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		printf("  rejects '%s'\n", bad[i]);
		assert_int_equal(hw_ctrl_throttled_replicas_resolve(bad[i], 0, &reps, &out), -EINVAL);
	}
}

/* ---- leader side --------------------------------------------------------- */
static void test_leader_throttle_explicit(void **state)
{
	(void)state;
	tcfg t = { RATE, INT64_MAX };
	hx *h = mk(&t);
	hw_idset lt = ids(1, 1, 0), none = ids(0, 0, 0); /* "0:1" */
	int64_t B = make_backlog(h, BACKLOG, lt, none);
	hw_rm_part_info l;
	hx_info(h, 1, 0, &l);
	assert_int_equal(l.leader_throttled, 1);
	assert_int_equal(l.follower_throttled, 0);
	catchup c;
	run_catchup(h, &c, 120);
	check_rate_model(&c, B, "leader throttle 0:1");
	assert_true(metric(h, 1, HW_PM_LEADER_THROTTLED) > 0);
	/* all but what a response sent before the throttle was set carried */
	assert_true(metric(h, 1, HW_PM_LEADER_THROTTLED_BYTES) >= (uint64_t)(B - 2 * FETCH_MAX));
	assert_int_equal(metric(h, 2, HW_PM_FOLLOWER_THROTTLED), 0);
	hw_rm_stats st;
	hw_rm_get_stats(hx_rm(h, 1), &st);
	assert_true(st.leader_throttled_bytes == metric(h, 1, HW_PM_LEADER_THROTTLED_BYTES));
	assert_true(st.leader_throttle_bound == RATE);
	hx_destroy(h);
}

/* ---- follower side ------------------------------------------------------- */
static void test_follower_throttle(void **state)
{
	(void)state;
	tcfg t = { INT64_MAX, RATE };
	hx *h = mk(&t);
	hw_idset ft = ids(1, 2, 0), none = ids(0, 0, 0); /* "0:2" */
	int64_t B = make_backlog(h, BACKLOG, none, ft);
	catchup c;
	run_catchup(h, &c, 120);
	check_rate_model(&c, B, "follower throttle 0:2");
	assert_true(metric(h, 2, HW_PM_FOLLOWER_THROTTLED) > 0);
	assert_true(metric(h, 2, HW_PM_FOLLOWER_THROTTLED_BYTES) >= (uint64_t)(B - 2 * FETCH_MAX));
	assert_int_equal(metric(h, 1, HW_PM_LEADER_THROTTLED), 0);
	hw_rm_part_info f;
	hx_info(h, 2, 0, &f);
	assert_int_equal(f.follower_in_sync, 1);
	hx_destroy(h);
}

/* ---- `*` covers the leader; a list naming only the follower does not ---- */
static void test_star_vs_list(void **state)
{
	(void)state;
	tcfg t = { RATE, INT64_MAX };
	/* "*" resolved: every replica */
	hx *h = mk(&t);
	hw_idset all = ids(2, 1, 2), none = ids(0, 0, 0);
	int64_t B = make_backlog(h, BACKLOG, all, none);
	catchup c;
	run_catchup(h, &c, 120);
	check_rate_model(&c, B, "leader throttle *");
	hx_destroy(h);

	/* "0:2" as leader list: broker 2 is not the leader: no throttle */
	h = mk(&t);
	hw_idset only2 = ids(1, 2, 0);
	B = make_backlog(h, BACKLOG, only2, none);
	run_catchup(h, &c, 120);
	printf("leader list 0:2 (leader is 1): caught up after %.1f s (B/R = %.1f s)\n", c.secs,
	       (double)B / RATE);
	assert_true(c.secs > 0 && c.secs < 2.0);
	assert_int_equal(metric(h, 1, HW_PM_LEADER_THROTTLED), 0);
	hx_destroy(h);

	/* no throttle at all (the default rate): also fast */
	tcfg u = { INT64_MAX, INT64_MAX };
	h = mk(&u);
	B = make_backlog(h, BACKLOG, all, all);
	run_catchup(h, &c, 120);
	printf("unlimited rate, *: caught up after %.1f s\n", c.secs);
	assert_true(c.secs > 0 && c.secs < 2.0);
	hx_destroy(h);
}

/* ---- an ISR follower is never throttled --------------------------------- */
static void test_isr_follower_not_throttled(void **state)
{
	(void)state;
	tcfg t = { RATE, RATE };
	hx *h = mk(&t);
	int reps[2] = { 1, 2 };
	hx_ctl_create(h, 0, reps, 2, 2);
	hx_run_quiet(h, 100);
	hw_idset all = ids(2, 1, 2);
	hx_ctl_set_throttle(h, 0, &all, &all);
	/* ~4 x the rate for 20 s, acks=all: every batch needs the follower */
	int64_t t0 = hx_now(h);
	int acked = 0, sent = 0;
	uint32_t corr[1000];
	for (int64_t t = 0; t < 20000; t += 20) {
		if (sent < 1000)
			corr[sent++] = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1,
					.nrec = 200 });
		hx_run_until(h, t0 + t + 20);
		hw_rm_part_info l;
		hx_info(h, 1, 0, &l);
		assert_int_equal(l.isr.n, 2); /* never shrinks */
	}
	hx_run_quiet(h, 2000);
	for (int i = 0; i < sent; i++) {
		const hx_resp *r = hx_resp_get(h, corr[i]);
		acked += r && r->error == 0;
	}
	hw_rm_part_info l, f;
	hx_info(h, 1, 0, &l);
	hx_info(h, 2, 0, &f);
	uint64_t copied = f.metrics[HW_PM_REPLICA_BYTES_APPENDED];
	hw_rm_stats ls, fs;
	hw_rm_get_stats(hx_rm(h, 1), &ls);
	hw_rm_get_stats(hx_rm(h, 2), &fs);
	printf("ISR follower: %d/%d acks=all acknowledged, %" PRIu64 " B copied in 20 s (%.0f B/s, "
	       "rate %d B/s); quota rates leader %.0f follower %.0f B/s\n",
	       acked, sent, copied, copied / 20.0, RATE, ls.leader_throttle_rate, fs.follower_throttle_rate);
	assert_int_equal(acked, sent);
	assert_int_equal(f.leo, l.leo);
	/* well above what the throttle would allow an out-of-ISR follower */
	assert_true(copied > (uint64_t)RATE * (20 + 1) * 2);
	/* the bytes were recorded: the quotas are exceeded, yet not applied */
	assert_true(ls.leader_throttle_rate > RATE && fs.follower_throttle_rate > RATE);
	assert_int_equal(l.metrics[HW_PM_LEADER_THROTTLED], 0);
	assert_int_equal(f.metrics[HW_PM_FOLLOWER_THROTTLED], 0);
	assert_true(ls.leader_throttled_bytes >= copied);
	hx_destroy(h);
}

/* ---- dynamic broker config ---------------------------------------------- */
static void test_dynamic_rate(void **state)
{
	(void)state;
	tcfg t = { RATE, INT64_MAX };
	hx *h = mk(&t);
	hw_idset lt = ids(1, 1, 0), none = ids(0, 0, 0);
	int64_t B = make_backlog(h, BACKLOG, lt, none);
	hw_rm *rm = hx_rm(h, 1);
	assert_int_equal(hw_rm_set_dynamic_config(rm, "no.such.config", 1), -ENOENT);
	assert_int_equal(hw_rm_set_dynamic_config(rm, "replica.lag.time.max.ms", 1000), -ENOTSUP);
	assert_int_equal(hw_rm_set_dynamic_config(rm, "leader.replication.throttled.rate", -1), -EINVAL);
	int64_t t0 = hx_now(h);
	hx_pause(h, 2, 0);
	hx_run_until(h, t0 + 15000);
	uint64_t at15 = metric(h, 2, HW_PM_REPLICA_BYTES_APPENDED);
	assert_true(at15 < (uint64_t)B); /* still throttled */
	assert_int_equal(hw_rm_set_dynamic_config(rm, "leader.replication.throttled.rate", INT64_MAX), 0);
	int64_t done = -1;
	for (int64_t t = 15100; t < 30000 && done < 0; t += 100) {
		hx_run_until(h, t0 + t);
		hw_rm_part_info l, f;
		hx_info(h, 1, 0, &l);
		hx_info(h, 2, 0, &f);
		if (f.leo == l.leo)
			done = t;
	}
	printf("dynamic: %" PRIu64 " of %" PRId64 " B after 15 s throttled; unthrottled, done at %.1f s\n",
	       at15, B, done / 1000.0);
	/* the follower may be waiting out one parked fetch (max wait 500 ms) */
	assert_true(done > 0 && done <= 15000 + 1500);
	hx_destroy(h);
}

int main(void)
{
	g_seed = hw_test_seed("repl_throttle");
	if (!getenv("HW_LOG"))
		hw_logging_configure("warn");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_model),
		cmocka_unit_test(test_throttled_replicas_syntax),
		cmocka_unit_test(test_leader_throttle_explicit),
		cmocka_unit_test(test_follower_throttle),
		cmocka_unit_test(test_star_vs_list),
		cmocka_unit_test(test_isr_follower_not_throttled),
		cmocka_unit_test(test_dynamic_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
