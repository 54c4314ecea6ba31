/* perf_wheel — timing-wheel operations per second against a binary heap.
 *
 * Two workloads, each run on hw_wheel and on an indexed binary min-heap
 * (the usual alternative: O(log n) add and cancel) in the same process:
 *   add+cancel: schedule N timers with random timeouts (1 ms .. 1 h), then
 *               cancel them all (purgatory: most requests complete early);
 *   add+expire: schedule N timers (1 ms .. 10 s) and advance a 1 ms clock
 *               until all have fired.
 * Prints operations per second and the wheel/heap ratio.
 * Usage: perf_wheel [N]   (default 1000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "hw_wheel.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- baseline: indexed binary heap of timers ---------------------------- */

typedef struct heap_timer {
	int64_t expires;
	int idx;
} heap_timer;

typedef struct timer_heap {
	heap_timer **a;
	int n;
} timer_heap;

static void hset(timer_heap *h, int i, heap_timer *t)
{
	h->a[i] = t;
	t->idx = i;
}

static void hup(timer_heap *h, int i)
{
	heap_timer *t = h->a[i];
	while (i > 0 && h->a[(i - 1) / 2]->expires > t->expires) {
		hset(h, i, h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	hset(h, i, t);
}

static void hdown(timer_heap *h, int i)
{
	heap_timer *t = h->a[i];
	for (;;) {
		int c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1]->expires < h->a[c]->expires)
			c++;
		if (t->expires <= h->a[c]->expires)
			break;
		hset(h, i, h->a[c]);
		i = c;
	}
	hset(h, i, t);
}

static void heap_add(timer_heap *h, heap_timer *t)
{
	hset(h, h->n++, t);
	hup(h, t->idx);
}

static void heap_remove(timer_heap *h, heap_timer *t)
{
	int i = t->idx;
	heap_timer *last = h->a[--h->n];
	t->idx = -1;
	if (last != t) {
		hset(h, i, last);
		hup(h, i);
		hdown(h, last->idx);
	}
}

/* ---- workloads -------------------------------------------------------------- */

static size_t fired;
static void on_fire(hw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	fired++;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	int64_t *tmo_long = malloc(n * sizeof(int64_t)), *tmo_short = malloc(n * sizeof(int64_t));
	hw_timer *wt = calloc(n, sizeof(hw_timer));
	heap_timer *ht = calloc(n, sizeof(heap_timer));
	timer_heap heap = { calloc(n, sizeof(heap_timer *)), 0 };
	if (!tmo_long || !tmo_short || !wt || !ht || !heap.a)
		return 1;
	for (size_t i = 0; i < n; i++) {
		tmo_long[i] = 1 + (int64_t)(next_rand() % 3600000);
		tmo_short[i] = 1 + (int64_t)(next_rand() % 10000);
		hw_timer_init(&wt[i], on_fire, NULL);
	}
	const int rounds = 3;
	double t0, wheel_ac = 0, heap_ac = 0, wheel_ae = 0, heap_ae = 0;
	int64_t base = 1000;

	for (int r = 0; r < rounds; r++) {
		/* add+cancel */
		hw_wheel *w = hw_wheel_create(1, 512, base);
		t0 = now_s();
		for (size_t i = 0; i < n; i++)
			hw_wheel_add(w, &wt[i], base + tmo_long[i]);
		for (size_t i = 0; i < n; i++)
			hw_wheel_cancel(w, &wt[i]);
		wheel_ac += now_s() - t0;
		t0 = now_s();
		for (size_t i = 0; i < n; i++) {
			ht[i].expires = base + tmo_long[i];
			heap_add(&heap, &ht[i]);
		}
		for (size_t i = 0; i < n; i++)
			heap_remove(&heap, &ht[i]);
		heap_ac += now_s() - t0;

		/* add+expire, 1 ms clock */
		fired = 0;
		t0 = now_s();
		for (size_t i = 0; i < n; i++)
			hw_wheel_add(w, &wt[i], base + tmo_short[i]);
		for (int64_t now = base; hw_wheel_size(w) > 0; now++)
			hw_wheel_advance_to(w, now);
		wheel_ae += now_s() - t0;
		hw_wheel_destroy(w);
		if (fired != n) {
			fprintf(stderr, "perf_wheel: fired %zu of %zu\n", fired, n);
			return 1;
		}
		size_t hfired = 0;
		t0 = now_s();
		for (size_t i = 0; i < n; i++) {
			ht[i].expires = base + tmo_short[i];
			heap_add(&heap, &ht[i]);
		}
		for (int64_t now = base; heap.n > 0; now++)
			while (heap.n > 0 && heap.a[0]->expires <= now) {
				heap_remove(&heap, heap.a[0]);
				hfired++;
			}
		heap_ae += now_s() - t0;
		if (hfired != n)
			return 1;
	}
	double ops = 2.0 * (double)n * rounds; /* an add and a cancel/expire each */
	printf("perf_wheel: %zu timers x %d rounds (wheel: tick 1 ms, 512 buckets; baseline: binary heap)\n",
	       n, rounds);
	printf("  add+cancel  wheel %8.2f Mops/s   heap %8.2f Mops/s   ratio wheel/heap %.2f\n",
	       ops / wheel_ac / 1e6, ops / heap_ac / 1e6, heap_ac / wheel_ac);
	printf("  add+expire  wheel %8.2f Mops/s   heap %8.2f Mops/s   ratio wheel/heap %.2f\n",
	       ops / wheel_ae / 1e6, ops / heap_ae / 1e6, heap_ae / wheel_ae);
	free(tmo_long);
	free(tmo_short);
	free(wt);
	free(ht);
	free(heap.a);
	return 0;
}
