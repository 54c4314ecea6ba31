/* perf_stall — how often this machine fails to run a thread on time, with
 * nothing of hiwater involved.
 *
 * One thread per online CPU, each pinned to its CPU, sleeps 200 us again and
 * again (clock_nanosleep) for the given seconds and records how much later
 * than asked each sleep ended. A vCPU the host did not run, a halted vCPU
 * woken late, a kernel thread that held the CPU: all show up as overshoot.
 * perf/idle runs it before and after its rounds, so a reader can tell the
 * machine's own stalls (docs/idle.md "What the tail is made of") from what
 * a policy did.
 *
 * Output, one line: per second and per CPU, the sleeps that overshot by
 * 0.5 ms or more, 1 ms or more and 2 ms or more; the share of time lost to
 * overshoots of 0.5 ms or more; the largest overshoot.
 * Usage: perf_stall [seconds]   (default 3; 1..600). Exit 2 on a bad
 * argument, 1 when a thread cannot be started.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_NS 200000LL

typedef struct {
	int cpu;
	double secs;
	uint64_t over_500us, over_1ms, over_2ms;
	int64_t lost_ns, max_ns;
} probe;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *run_probe(void *arg)
{
	probe *p = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* unpinned is still a probe */
	int64_t end = now_ns() + (int64_t)(p->secs * 1e9);
	for (int64_t t0 = now_ns(); t0 < end; t0 = now_ns()) {
		struct timespec req = {0, SLEEP_NS};
		clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
		int64_t over = now_ns() - t0 - SLEEP_NS;
		if (over > p->max_ns)
			p->max_ns = over;
		if (over >= 500000) {
			p->over_500us++;
			p->lost_ns += over;
		}
		p->over_1ms += over >= 1000000;
		p->over_2ms += over >= 2000000;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	if (!(secs >= 1 && secs <= 600)) {
		fprintf(stderr, "usage: perf_stall [seconds 1..600]\n");
		return 2;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1 || n > 256)
		n = 1;
	probe ps[256] = {{0}};
	pthread_t th[256];
	for (long i = 0; i < n; i++) {
		ps[i].cpu = (int)i;
		ps[i].secs = secs;
		if (pthread_create(&th[i], NULL, run_probe, &ps[i])) {
			fprintf(stderr, "perf_stall: cannot start a thread\n");
			return 1;
		}
	}
	uint64_t o5 = 0, o1 = 0, o2 = 0;
	int64_t lost = 0, mx = 0;
	for (long i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		o5 += ps[i].over_500us;
		o1 += ps[i].over_1ms;
		o2 += ps[i].over_2ms;
		lost += ps[i].lost_ns;
		if (ps[i].max_ns > mx)
			mx = ps[i].max_ns;
	}
	double per = secs * (double)n;
	printf("machine stalls (200 us sleeps on %ld CPUs, %.0f s): per CPU-second %.1f >= 0.5 ms, "
	       "%.1f >= 1 ms, %.1f >= 2 ms; %.2f %% of the time lost; largest %.1f ms\n",
	       n, secs, (double)o5 / per, (double)o1 / per, (double)o2 / per,
	       100.0 * (double)lost / (per * 1e9), (double)mx / 1e6);
	return 0;
}
