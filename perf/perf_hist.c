/* perf_hist — histogram record cost against a plain array increment.
 *
 * Records the same pre-generated latencies (log-uniform 1 µs .. 60 s, ns)
 * into hw_hist and, as the baseline measured in the same run, into a plain
 * counter array indexed by (value & mask) — the cheapest possible
 * "histogram". Prints ns per record and the ratio.
 * Usage: perf_hist [N]   (default 10000000)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "hw_hist.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000;
	enum { NV = 1 << 16, MASK = (1 << 12) - 1 };
	int64_t *v = malloc(NV * sizeof(int64_t));
	uint64_t *plain = calloc(MASK + 1, sizeof(uint64_t));
	hw_hist *h = hw_hist_create_latency();
	if (!v || !plain || !h)
		return 1;
	uint64_t s = 0x243F6A8885A308D3ull;
	for (int i = 0; i < NV; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		double u = (double)(s >> 11) / 9007199254740992.0;
		v[i] = (int64_t)exp(log(1e3) + u * (log(6e10) - log(1e3)));
	}
	double best_hist = 1e9, best_plain = 1e9;
	for (int r = 0; r < 3; r++) {
		double t0 = now_s();
		for (size_t i = 0; i < n; i++)
			hw_hist_record(h, v[i & (NV - 1)]);
		double th = now_s() - t0;
		t0 = now_s();
		for (size_t i = 0; i < n; i++) {
			plain[v[i & (NV - 1)] & MASK]++;
			__asm__ volatile("" ::: "memory"); /* keep the loop a loop */
		}
		double tp = now_s() - t0;
		if (th < best_hist)
			best_hist = th;
		if (tp < best_plain)
			best_plain = tp;
	}
	uint64_t sum = 0;
	for (int i = 0; i <= MASK; i++)
		sum += plain[i];
	if (sum != 3 * n || hw_hist_count(h) != 3 * n)
		return 1;
	double ns_h = best_hist * 1e9 / (double)n, ns_p = best_plain * 1e9 / (double)n;
	printf("perf_hist: %zu records (best of 3), values 1 us .. 60 s\n", n);
	printf("  hw_hist_record %6.2f ns/op   plain array increment %6.2f ns/op   ratio %.2f\n",
	       ns_h, ns_p, ns_h / ns_p);
	printf("  p50 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f s\n",
	       (double)hw_hist_value_at_percentile(h, 50) / 1e3,
	       (double)hw_hist_value_at_percentile(h, 99) / 1e3,
	       (double)hw_hist_value_at_percentile(h, 99.9) / 1e3, (double)hw_hist_max(h) / 1e9);
	hw_hist_destroy(h);
	free(v);
	free(plain);
	return 0;
}
