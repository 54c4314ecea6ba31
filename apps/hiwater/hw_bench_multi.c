/* hw_bench_multi.c — `hiwater bench --producers N`: one thread per producer.
 *
 * Design note. Each producer is a full idempotent producer on its own
 * thread with its own transport endpoint (hw_client: its own DPDK queue or
 * UDP socket): its own streams (one per partition), windows, retries,
 * open-loop schedule and latency histograms — the event loop of hw_bench.c
 * unchanged, run once per thread (bench_run with prod_base = p, n_prod = 1).
 * Nothing on a producer's data path is shared with another producer except
 * three things, all for the once-a-second progress line:
 *   - `acked`: records acknowledged by every producer, one relaxed
 *     fetch_add per acknowledged batch;
 *   - per-producer `errors` and `backlog`, published (relaxed stores) at
 *     each producer's own one-second tick;
 *   - each producer's latency histogram is recorded under the producer's
 *     own mutex (uncontended but for the progress line, which merges all of
 *     them once a second for p50/p99 "so far").
 * Thread 0 (the caller) prints the line; the relaxed atomics order nothing
 * else: they are counters read for display, and each value read is some
 * value the writer stored (no torn reads), which is all a progress line
 * needs. The final report reads the producers' own results after
 * pthread_join, which orders everything.
 *
 * Open loop: the run-wide record k (due at start + k/rate) belongs to
 * producer k mod N, so producer p generates its records at rate/N with its
 * own intended times, and latency keeps being measured from them (no
 * coordinated omission: a stalled producer's backlog grows and every record
 * it should have sent counts from its intended time).
 *
 * The end-to-end consumer runs on thread 0 while producing (fetch
 * responses are routed to producer 0's endpoint). The high-watermark probe
 * before the run and --verify / the end-to-end drain after it run on the
 * calling thread over `all_io`, with every producer's streams gathered in
 * one bench_run (producer order, so [p * partitions + partition]).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_bench.h"
#include "hw_bench_int.h"

typedef struct bench_shared {
	int n;
	bench_run *runs;
	pthread_mutex_t lat_mu[HW_BENCH_MAX_PRODUCERS];
	_Atomic uint64_t acked;                     /* relaxed: a display counter */
	_Atomic uint64_t errors[HW_BENCH_MAX_PRODUCERS];  /* relaxed: display */
	_Atomic uint64_t backlog[HW_BENCH_MAX_PRODUCERS]; /* relaxed: display */
	/* producers whose load loop has not returned: a finished producer
	 * keeps polling its endpoint until this is 0, because its queue may
	 * receive the answers of the others (hw_client.c hands them over);
	 * release/acquire, though only the count itself matters */
	_Atomic int running;
	uint64_t last_acked;                        /* thread 0 only */
	hw_hist *scratch;                           /* thread 0 only */
} bench_shared;

int hw_bench_multi_record_lat(bench_run *br, const int64_t *intended, int n, int64_t now)
{
	pthread_mutex_t *mu = &br->sh->lat_mu[br->tidx];
	pthread_mutex_lock(mu);
	for (int i = 0; i < n; i++)
		if (intended[i] >= br->measure_start && intended[i] < br->gen_end)
			hw_hist_record(br->res->lat, now - intended[i]);
	pthread_mutex_unlock(mu);
	return 0;
}

void hw_bench_multi_add_acked(bench_run *br, uint64_t n)
{
	/* relaxed: a sum for the progress line, orders nothing */
	atomic_fetch_add_explicit(&br->sh->acked, n, memory_order_relaxed);
}

void hw_bench_progress_multi(bench_run *br, int64_t now, FILE *f)
{
	bench_shared *sh = br->sh;
	uint64_t errs = 0, backlog = 0;
	for (int i = 0; i < br->res->n_err; i++)
		errs += br->res->err_count[i];
	for (int i = 0; i < br->n_streams; i++)
		backlog += br->streams[i].bl_len;
	/* relaxed: display values, read by thread 0 below */
	atomic_store_explicit(&sh->errors[br->tidx], errs, memory_order_relaxed);
	atomic_store_explicit(&sh->backlog[br->tidx], backlog, memory_order_relaxed);
	double secs = (double)(now - br->last_progress) / 1e9;
	int64_t began = br->last_progress;
	br->last_progress = now;
	br->interval_acked = 0;
	if (br->tidx != 0)
		return;
	uint64_t total = atomic_load_explicit(&sh->acked, memory_order_relaxed);
	double rps = (double)(total - sh->last_acked) / secs;
	sh->last_acked = total;
	errs = backlog = 0;
	for (int t = 0; t < sh->n; t++) {
		errs += atomic_load_explicit(&sh->errors[t], memory_order_relaxed);
		backlog += atomic_load_explicit(&sh->backlog[t], memory_order_relaxed);
	}
	if (br->res->n_samples < HW_BENCH_MAX_SAMPLES && began >= br->measure_start)
		br->res->rate_samples[br->res->n_samples++] = rps;
	if (!f)
		return;
	hw_hist_reset(sh->scratch);
	for (int t = 0; t < sh->n; t++) {
		pthread_mutex_lock(&sh->lat_mu[t]);
		hw_hist_merge(sh->scratch, sh->runs[t].res->lat);
		pthread_mutex_unlock(&sh->lat_mu[t]);
	}
	const char *phase = hw_bench_phase_name(began, br->measure_start, br->gen_end);
	fprintf(f,
		"[%5.1fs %-6s] %10.0f rec/s %8.2f MB/s  p50 %8.1f us  p99 %8.1f us  errors %" PRIu64
		"  backlog %" PRIu64 "  (%d producers)\n",
		(double)(now - br->start) / 1e9, phase, rps, rps * br->cfg->record_size / 1e6,
		hw_hist_value_at_percentile(sh->scratch, 50) / 1e3,
		hw_hist_value_at_percentile(sh->scratch, 99) / 1e3, errs, backlog, sh->n);
	fflush(f);
}

typedef struct producer_thread {
	pthread_t th;
	bench_run *br;
	int rc;
} producer_thread;

static void ignore_resp(void *arg, const hw_bench_resp *r)
{
	(void)arg;
	(void)r; /* late answers to this producer's own finished requests */
}

/* --pin-cpus: pin the calling thread to producer p's CPU; *old gets the
 * affinity it had. 1 pinned, 0 not asked, negative errno. */
static int pin_self(const hw_bench_cfg *cfg, int p, cpu_set_t *old)
{
	if (!cfg->n_pin)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cfg->pin_cpu[p % cfg->n_pin], &set);
	int rc = pthread_getaffinity_np(pthread_self(), sizeof(*old), old);
	if (!rc)
		rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	return rc ? -rc : 1;
}

/* Run producer br's load, then keep its endpoint polled until every
 * producer is done. */
static int producer_run(bench_run *br, FILE *progress)
{
	cpu_set_t old;
	int pinned = pin_self(br->cfg, br->tidx, &old);
	int rc = pinned < 0 ? pinned : hw_bench_loop(br, progress);
	bench_shared *sh = br->sh;
	atomic_fetch_sub_explicit(&sh->running, 1, memory_order_release);
	while (atomic_load_explicit(&sh->running, memory_order_acquire) > 0)
		if (br->io->poll(br->io->ctx, 1000000, ignore_resp, NULL) < 0)
			break;
	if (pinned > 0)
		pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return rc;
}

static void *producer_main(void *arg)
{
	producer_thread *pt = arg;
	pt->rc = producer_run(pt->br, NULL);
	return NULL;
}

static void merge_result(hw_bench_result *dst, const hw_bench_result *src)
{
	hw_hist_merge(dst->lat, src->lat);
	hw_hist_merge(dst->e2e, src->e2e);
	dst->sent_records += src->sent_records;
	dst->acked_records += src->acked_records;
	dst->measured_records += src->measured_records;
	dst->failed_records += src->failed_records;
	dst->retries += src->retries;
	dst->max_backlog += src->max_backlog; /* sum of the producers' maxima */
	dst->verify_corrupt += src->verify_corrupt;
	for (int p = 0; p < HW_BENCH_MAX_PRODUCER_IDS; p++)
		dst->producer_acked[p] += src->producer_acked[p];
	for (int i = 0; i < src->n_err; i++) {
		int j = 0;
		while (j < dst->n_err && dst->err_code[j] != src->err_code[i])
			j++;
		if (j == dst->n_err) {
			if (dst->n_err == HW_BENCH_MAX_ERR_CODES)
				continue;
			dst->err_code[dst->n_err++] = src->err_code[i];
		}
		dst->err_count[j] += src->err_count[i];
	}
}

int hw_bench_run_multi(const hw_bench_cfg *cfg, hw_bench_io **prod_io, hw_bench_io *all_io,
		       FILE *progress, hw_bench_result *res)
{
	if (cfg->producers == 1) {
		cpu_set_t old;
		int pinned = pin_self(cfg, 0, &old);
		if (pinned < 0)
			return pinned;
		int rc = hw_bench_run(cfg, prod_io[0], progress, res);
		if (pinned > 0)
			pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
		return rc;
	}
	if (hw_bench_cfg_check(cfg))
		return -EINVAL;
	const int n = cfg->producers;
	memset(res, 0, sizeof(*res));
	res->offered_rate = cfg->closed_loop ? 0 : cfg->rate;
	res->n_producers = n;
	uint64_t pids[HW_BENCH_MAX_PRODUCERS];
	hw_bench_make_pids(cfg, pids);
	bench_shared *sh = calloc(1, sizeof(*sh));
	bench_run *runs = calloc((size_t)n, sizeof(*runs));
	hw_bench_result *rres = calloc((size_t)n, sizeof(*rres));
	producer_thread *pt = calloc((size_t)n, sizeof(*pt));
	/* the calling thread's view: probe, verify, e2e drain */
	bench_run all = {.cfg = cfg, .io = all_io, .res = res, .prod_base = 0, .n_prod = 0,
			 .stride = 1, .consumer = 1, .pids = pids, .tidx = -1};
	int rc = -ENOMEM, n_mu = 0;
	res->lat = hw_hist_create_latency();
	res->e2e = hw_hist_create_latency();
	if (!sh || !runs || !rres || !pt || !res->lat || !res->e2e)
		goto out;
	sh->n = n;
	sh->runs = runs;
	if (!(sh->scratch = hw_hist_create_latency()))
		goto out;
	for (; n_mu < n; n_mu++)
		if (pthread_mutex_init(&sh->lat_mu[n_mu], NULL))
			goto out;
	if ((rc = hw_bench_alloc(&all)))
		goto out;
	rc = -ENOMEM;
	for (int t = 0; t < n; t++) {
		bench_run *br = &runs[t];
		rres[t].lat = hw_hist_create_latency();
		rres[t].e2e = hw_hist_create_latency();
		if (!rres[t].lat || !rres[t].e2e)
			goto out;
		*br = (bench_run){.cfg = cfg, .io = prod_io[t], .res = &rres[t], .prod_base = t,
				  .n_prod = 1, .stride = n, .phase = t, .consumer = t == 0,
				  .pids = pids, .sh = sh, .tidx = t};
		if ((rc = hw_bench_alloc(br)))
			goto out;
		/* producer 0's consumer is the probe's (start offsets) */
		free(br->cons);
		br->cons = all.cons;
		br->cons_borrowed = 1;
	}
	if (cfg->verify || cfg->end_to_end) {
		rc = hw_bench_probe_hw(&all);
		if (rc)
			goto out;
	}
	all.start = hw_bench_now_ns() + 1000000;
	all.measure_start = all.start + cfg->warmup_ns;
	all.gen_end = all.measure_start + cfg->duration_ns;
	for (int t = 0; t < n; t++) {
		runs[t].start = runs[t].last_progress = all.start;
		runs[t].measure_start = all.measure_start;
		runs[t].gen_end = all.gen_end;
	}
	int started = 1;
	rc = 0;
	atomic_store_explicit(&sh->running, n, memory_order_relaxed); /* before the threads exist */
	for (int t = 1; t < n; t++) {
		pt[t].br = &runs[t];
		if (pthread_create(&pt[t].th, NULL, producer_main, &pt[t])) {
			rc = -EAGAIN;
			/* the producers never started count as done */
			atomic_fetch_sub_explicit(&sh->running, n - t, memory_order_release);
			/* the started producers run their course; nothing else to do */
			break;
		}
		started++;
	}
	pt[0].br = &runs[0];
	if (rc) {
		atomic_fetch_sub_explicit(&sh->running, 1, memory_order_release);
		pt[0].rc = rc;
	} else {
		pt[0].rc = producer_run(&runs[0], progress);
	}
	for (int t = 1; t < started; t++)
		pthread_join(pt[t].th, NULL);
	/* After the joins every producer's run is ours to read. */
	for (int t = 0; t < started && !rc; t++)
		rc = pt[t].rc;
	if (rc)
		goto out;
	for (int t = 0; t < n; t++)
		merge_result(res, &rres[t]);
	res->n_samples = rres[0].n_samples;
	memcpy(res->rate_samples, rres[0].rate_samples, sizeof(res->rate_samples));
	res->measured_secs = (double)cfg->duration_ns / 1e9;
	res->records_per_sec = (double)res->measured_records / res->measured_secs;
	res->mb_per_sec = res->records_per_sec * cfg->record_size / 1e6;
	/* Gather every producer's streams (moved, not copied) into `all`. */
	free(all.streams);
	all.streams = calloc((size_t)n * (size_t)cfg->partitions, sizeof(bench_stream));
	rc = -ENOMEM;
	if (!all.streams)
		goto out;
	for (int t = 0; t < n; t++) {
		memcpy(&all.streams[t * cfg->partitions], runs[t].streams,
		       (size_t)cfg->partitions * sizeof(bench_stream));
		memset(runs[t].streams, 0, (size_t)cfg->partitions * sizeof(bench_stream));
		runs[t].n_streams = 0;
	}
	all.n_prod = n;
	all.n_streams = n * cfg->partitions;
	all.fetch_corr = runs[0].fetch_corr;
	rc = 0;
	if (cfg->end_to_end)
		hw_bench_e2e_drain(&all);
	if (cfg->verify && cfg->acks != 0)
		rc = hw_bench_verify(&all);
out:
	for (int t = 0; runs && t < n; t++) {
		hw_bench_free(&runs[t]);
		if (rres)
			hw_bench_result_free(&rres[t]);
	}
	hw_bench_free(&all);
	if (sh) {
		for (int t = 0; t < n_mu; t++)
			pthread_mutex_destroy(&sh->lat_mu[t]);
		hw_hist_destroy(sh->scratch);
	}
	free(sh);
	free(runs);
	free(rres);
	free(pt);
	if (rc)
		hw_bench_result_free(res);
	return rc;
}
