/* perf_repl — cost of the replication hot path on the deterministic harness
 * (no network, in-memory stores): follower fetch -> HW advance ->
 * DelayedProduce completion, in ns per partition-operation, for 1, 100 and
 * 10,000 partitions (RF 3, min.insync.replicas 2, acks=all).
 *
 * One round: a one-record acks=all batch is appended to every partition
 * (delivered to the leader, not timed), then the clock starts and the
 * harness runs until every produce is acknowledged: the leader's parked
 * follower fetches complete, both followers append and fetch again (the
 * piggybacked LEO), the leader updates follower state, advances the HW and
 * completes each DelayedProduce. Time per partition per round is reported.
 * The harness itself (deep-copying messages through a priority queue) is
 * included, as a network would be.
 *
 * Baseline, measured in the same run: a bare loop over the same number of
 * partitions doing only what the HW rule fundamentally needs (min of three
 * LEOs, compare, store) — the ratio says how much the full state machine,
 * purgatory and fetch protocol cost on top of the arithmetic.
 *
 * Times are thread CPU time (CLOCK_THREAD_CPUTIME_ID).
 *
 * Usage: perf_repl [rounds]   rounds default: 200 for 1 and 100 partitions,
 *                              20 for 10,000; PERF_REPL_ONLY=<partitions>
 *                              runs one size.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hw_logging.h"
#include "hx.h"

/* Thread CPU time: the machine is shared, and wall time would charge other
 * processes' scheduling to the engine. Both sides use the same clock. */
static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile int64_t sink;

static double baseline_ns(int nparts, int rounds)
{
	int64_t *leo = calloc((size_t)nparts * 3, sizeof(int64_t));
	int64_t *hw = calloc((size_t)nparts, sizeof(int64_t));
	int64_t t0 = mono_ns();
	for (int r = 0; r < rounds; r++) {
		for (int p = 0; p < nparts; p++) { /* leader append, two follower fetches */
			leo[3 * p] += 1;
			leo[3 * p + 1] = leo[3 * p];
			leo[3 * p + 2] = leo[3 * p];
		}
		for (int p = 0; p < nparts; p++) {
			int64_t m = leo[3 * p];
			if (leo[3 * p + 1] < m)
				m = leo[3 * p + 1];
			if (leo[3 * p + 2] < m)
				m = leo[3 * p + 2];
			if (m > hw[p])
				hw[p] = m;
		}
	}
	int64_t t = mono_ns() - t0;
	int64_t s = 0;
	for (int p = 0; p < nparts; p++)
		s += hw[p];
	sink = s;
	free(leo);
	free(hw);
	return (double)t / ((double)rounds * nparts);
}

static double engine_ns(int nparts, int rounds, int *ok)
{
	hx_opts o = { .nodes = 3, .seed = 1 };
	hx *h = hx_create(&o);
	hx_set_repush_ms(h, 0);
	for (int p = 0; p < nparts; p++) {
		int reps[3] = { 1, 2, 3 };
		hx_ctl_create(h, p, reps, 3, 2);
	}
	hx_run_quiet(h, 100);
	int64_t total = 0;
	uint32_t *corr = malloc(sizeof(uint32_t) * (size_t)nparts);
	*ok = 1;
	for (int r = 0; r < rounds + 2; r++) { /* 2 warm-up rounds */
		for (int p = 0; p < nparts; p++)
			corr[p] = hx_produce(h, &(hx_produce_req){ .node = 1, .part = p, .acks = -1,
					.nrec = 1 });
		hx_deliver_now(h); /* the leader appends and parks each DelayedProduce */
		int64_t t0 = mono_ns();
		hx_run_quiet(h, 1000);
		int64_t t = mono_ns() - t0;
		if (r >= 2)
			total += t;
		for (int p = 0; p < nparts; p++) {
			const hx_resp *x = hx_resp_get(h, corr[p]);
			if (!x || x->error)
				*ok = 0;
		}
	}
	free(corr);
	hx_destroy(h);
	return (double)total / ((double)rounds * nparts);
}

int main(int argc, char **argv)
{
	if (!getenv("HW_LOG"))
		hw_logging_configure("error");
	int arg_rounds = argc > 1 ? atoi(argv[1]) : 0;
	static const int sizes[3] = { 1, 100, 10000 };
	const char *only = getenv("PERF_REPL_ONLY");
	printf("perf_repl: follower fetch -> HW advance -> DelayedProduce completion (RF 3, acks=all)\n");
	printf("%-11s %8s %14s %14s %8s   (thread CPU time)\n", "partitions", "rounds", "engine ns/op",
	       "baseline ns/op", "ratio");
	int all_ok = 1;
	for (int i = 0; i < 3; i++) {
		int n = sizes[i];
		if (only && atoi(only) != n)
			continue;
		int rounds = arg_rounds > 0 ? arg_rounds : (n >= 10000 ? 20 : 200);
		int ok;
		double e = engine_ns(n, rounds, &ok);
		double b = baseline_ns(n, rounds * 50);
		printf("%-11d %8d %14.1f %14.2f %8.0f%s\n", n, rounds, e, b, e / b, ok ? "" : "  (ERRORS)");
		all_ok &= ok;
	}
	return all_ok ? 0 : 1;
}
