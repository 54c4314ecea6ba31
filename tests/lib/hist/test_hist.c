/* test_hist.c — latency histogram against exact sorted samples.
 *
 * A seeded log-uniform sample over 1 µs .. 60 s (in ns) is recorded and
 * every percentile is compared with the exact nearest-rank value of the
 * sorted sample: never below it, at most 1% above. Merge must equal
 * recording everything in one histogram; the .hgrm export is parsed back
 * and every row checked against the sample. A shared histogram is read
 * (hw_hist_merge_shared) while another thread records into it.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_hist.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;

#define NS_1US 1000LL
#define NS_60S (60LL * 1000 * 1000 * 1000)

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Log-uniform in [lo, hi]. */
static int64_t sample(hw_rng *r, int64_t lo, int64_t hi)
{
	double v = exp(log((double)lo) + hw_rng_unit(r) * (log((double)hi) - log((double)lo)));
	int64_t x = (int64_t)v;
	return x < lo ? lo : (x > hi ? hi : x);
}

static int64_t *make_sample(uint64_t salt, size_t n)
{
	hw_rng r = { g_seed ^ salt };
	int64_t *v = malloc(n * sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = sample(&r, NS_1US, NS_60S);
	v[0] = NS_1US; /* the range ends are in every sample */
	v[1] = NS_60S;
	return v;
}

static int64_t exact_percentile(const int64_t *sorted, size_t n, double p)
{
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static void check_percentiles(const hw_hist *h, const int64_t *sorted, size_t n, uint64_t salt)
{
	static const double fixed[] = { 0.001, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 100 };
	hw_rng r = { g_seed ^ salt };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 500; i++) {
		double p = i < sizeof(fixed) / sizeof(fixed[0]) ? fixed[i] : 100.0 * hw_rng_unit(&r);
		int64_t want = exact_percentile(sorted, n, p);
		int64_t got = hw_hist_value_at_percentile(h, p);
		if (got < want || (double)(got - want) > 0.01 * (double)want)
			fail_msg("p%.6f: histogram %lld, exact %lld (rel err %.4f%%)", p,
				 (long long)got, (long long)want,
				 100.0 * (double)(got - want) / (double)want);
	}
}

static void test_relative_error(void **state)
{
	(void)state;
	enum { N = 300000 };
	int64_t *v = make_sample(1, N);
	hw_hist *h = hw_hist_create_latency();
	assert_non_null(h);
	double exact_sum = 0;
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(hw_hist_record(h, v[i]), 0);
		exact_sum += (double)v[i];
	}
	qsort(v, N, sizeof(*v), cmp_i64);
	assert_int_equal(hw_hist_count(h), N);
	assert_int_equal(hw_hist_min(h), v[0]);
	assert_int_equal(hw_hist_max(h), v[N - 1]);
	check_percentiles(h, v, N, 11);
	double mean = hw_hist_mean(h), exact_mean = exact_sum / N;
	assert_true(fabs(mean - exact_mean) <= 0.01 * exact_mean);
	double var = 0;
	for (size_t i = 0; i < N; i++)
		var += ((double)v[i] - exact_mean) * ((double)v[i] - exact_mean);
	double sd = sqrt(var / N);
	assert_true(fabs(hw_hist_stddev(h) - sd) <= 0.01 * sd);

	/* Every single value from 1 µs to 60 s sits in a slot narrower than
	 * 1% of it, and the slot contains it. */
	hw_rng r = { g_seed ^ 12 };
	for (int i = 0; i < 200000; i++) {
		int64_t x = i < 100000 ? NS_1US + i : sample(&r, NS_1US, NS_60S);
		int64_t lo = hw_hist_lowest_equivalent(h, x), hi = hw_hist_highest_equivalent(h, x);
		assert_true(lo <= x && x <= hi);
		assert_true((double)(hi - lo) <= 0.01 * (double)x);
	}
	hw_hist_destroy(h);
	free(v);
}

static void test_record_edges(void **state)
{
	(void)state;
	hw_hist *h = NULL;
	assert_int_equal(hw_hist_create(&h, 0, 100, 2), -EINVAL);
	assert_int_equal(hw_hist_create(&h, 1, 100, 0), -EINVAL);
	assert_int_equal(hw_hist_create(&h, 1, 100, 6), -EINVAL);
	assert_int_equal(hw_hist_create(&h, 10, 15, 2), -EINVAL);
	assert_int_equal(hw_hist_create(NULL, 1, 100, 2), -EINVAL);
	h = hw_hist_create_latency();
	assert_non_null(h);
	/* empty */
	assert_int_equal(hw_hist_count(h), 0);
	assert_int_equal(hw_hist_value_at_percentile(h, 50), 0);
	assert_int_equal(hw_hist_min(h), 0);
	assert_int_equal(hw_hist_max(h), 0);
	assert_true(hw_hist_mean(h) == 0);
	/* out of range */
	assert_int_equal(hw_hist_record(h, -1), -ERANGE);
	assert_int_equal(hw_hist_record(h, 3600LL * 1000000000 + 1), -ERANGE);
	assert_int_equal(hw_hist_record_n(h, 5, -1), -EINVAL);
	assert_int_equal(hw_hist_dropped(h), 2);
	assert_int_equal(hw_hist_count(h), 0);
	/* record_n is n records */
	hw_rng r = { g_seed ^ 3 };
	hw_hist *one = hw_hist_create_latency();
	assert_non_null(one);
	for (int i = 0; i < 1000; i++) {
		int64_t v = sample(&r, 1, NS_60S);
		int64_t n = (int64_t)hw_rng_below(&r, 50);
		assert_int_equal(hw_hist_record_n(h, v, n), 0);
		for (int64_t k = 0; k < n; k++)
			assert_int_equal(hw_hist_record(one, v), 0);
	}
	assert_int_equal(hw_hist_count(h), hw_hist_count(one));
	for (double p = 0; p <= 100; p += 0.5)
		assert_int_equal(hw_hist_value_at_percentile(h, p), hw_hist_value_at_percentile(one, p));
	assert_true(hw_hist_mean(h) == hw_hist_mean(one));
	/* small values are exact (slots of width 1 below 128) */
	hw_hist_reset(h);
	assert_int_equal(hw_hist_count(h), 0);
	assert_int_equal(hw_hist_dropped(h), 0);
	for (int64_t v = 0; v < 128; v++)
		assert_int_equal(hw_hist_record(h, v), 0);
	assert_int_equal(hw_hist_value_at_percentile(h, 100), 127);
	assert_int_equal(hw_hist_value_at_percentile(h, 50), 63);
	assert_int_equal(hw_hist_value_at_percentile(h, 0), 0);
	hw_hist_destroy(h);
	hw_hist_destroy(one);
}

/* Coordinated-omission correction fills in the samples a stall hid. */
static void test_record_corrected(void **state)
{
	(void)state;
	hw_rng r = { g_seed ^ 8 };
	hw_hist *c = hw_hist_create_latency(), *model = hw_hist_create_latency();
	assert_non_null(c);
	assert_non_null(model);
	for (int i = 0; i < 2000; i++) {
		int64_t interval = 1 + (int64_t)hw_rng_below(&r, 100000);
		int64_t v = (int64_t)hw_rng_below(&r, 50) == 0
				    ? interval * (2 + (int64_t)hw_rng_below(&r, 200)) +
					      (int64_t)hw_rng_below(&r, (uint64_t)interval)
				    : (int64_t)hw_rng_below(&r, (uint64_t)interval);
		assert_int_equal(hw_hist_record_corrected(c, v, interval), 0);
		hw_hist_record(model, v);
		for (int64_t k = 1; v - k * interval >= interval; k++)
			hw_hist_record(model, v - k * interval);
	}
	assert_true(hw_hist_count(c) > 2000);
	assert_int_equal(hw_hist_count(c), hw_hist_count(model));
	for (double p = 0; p <= 100; p += 0.5)
		assert_int_equal(hw_hist_value_at_percentile(c, p), hw_hist_value_at_percentile(model, p));
	/* no interval: just the value; out of range: nothing at all */
	uint64_t n = hw_hist_count(c);
	assert_int_equal(hw_hist_record_corrected(c, 5000, 0), 0);
	assert_int_equal(hw_hist_count(c), n + 1);
	assert_int_equal(hw_hist_record_corrected(c, -5, 1), -ERANGE);
	assert_int_equal(hw_hist_count(c), n + 1);
	hw_hist_destroy(c);
	hw_hist_destroy(model);
}

static void test_merge(void **state)
{
	(void)state;
	enum { N = 100000 };
	int64_t *v = make_sample(4, N);
	hw_hist *all = hw_hist_create_latency(), *a = hw_hist_create_latency(),
		*b = hw_hist_create_latency();
	hw_hist *other = NULL, *small = NULL;
	assert_int_equal(hw_hist_create(&other, 1, 100LL * 1000 * 1000 * 1000, 3), 0);
	assert_int_equal(hw_hist_create(&small, 1, 1000000, 2), 0);
	assert_non_null(all);
	assert_non_null(a);
	assert_non_null(b);
	hw_rng r = { g_seed ^ 5 };
	for (size_t i = 0; i < N; i++) {
		hw_hist_record(all, v[i]);
		hw_hist_record(hw_rng_below(&r, 3) ? a : b, v[i]);
	}
	assert_int_equal(hw_hist_merge(a, b), 0);
	assert_int_equal(hw_hist_count(a), N);
	assert_int_equal(hw_hist_min(a), hw_hist_min(all));
	assert_int_equal(hw_hist_max(a), hw_hist_max(all));
	for (double p = 0; p <= 100; p += 0.25)
		assert_int_equal(hw_hist_value_at_percentile(a, p), hw_hist_value_at_percentile(all, p));
	/* Into a different layout: still within the error bounds. */
	assert_int_equal(hw_hist_merge(other, all), 0);
	assert_int_equal(hw_hist_count(other), N);
	qsort(v, N, sizeof(*v), cmp_i64);
	for (double p = 0.5; p <= 100; p += 0.5) {
		int64_t want = exact_percentile(v, N, p), got = hw_hist_value_at_percentile(other, p);
		assert_true(fabs((double)(got - want)) <= 0.02 * (double)want);
	}
	/* Values beyond the destination's range: refused, dst unchanged. */
	assert_int_equal(hw_hist_record(small, 500), 0);
	assert_int_equal(hw_hist_merge(small, all), -ERANGE);
	assert_int_equal(hw_hist_count(small), 1);
	assert_int_equal(hw_hist_merge(NULL, all), -EINVAL);
	hw_hist_destroy(all);
	hw_hist_destroy(a);
	hw_hist_destroy(b);
	hw_hist_destroy(other);
	hw_hist_destroy(small);
	free(v);
}

/* Parse an .hgrm back and check each row against the sample. */
static void test_hgrm_roundtrip(void **state)
{
	(void)state;
	enum { N = 50000 };
	int64_t *v = make_sample(6, N);
	hw_hist *h = hw_hist_create_latency();
	assert_non_null(h);
	for (size_t i = 0; i < N; i++)
		hw_hist_record(h, v[i]);
	qsort(v, N, sizeof(*v), cmp_i64);

	/* Once in ns (rows checked exactly against the sample), once in µs
	 * (rows must be the ns rows divided by 1000). */
	enum { MAXROWS = 4096 };
	static double ns_values[MAXROWS];
	int rows = 0;
	char *buf = NULL, *save = NULL, *line;
	size_t len = 0;
	FILE *f;
	for (int pass = 0; pass < 2; pass++) {
	const double ratio = pass == 0 ? 1.0 : 1000.0;
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(hw_hist_write_hgrm(h, f, 5, ratio), 0);
	fclose(f);

	line = strtok_r(buf, "\n", &save);
	assert_non_null(line);
	assert_string_equal(line, "       Value     Percentile TotalCount 1/(1-Percentile)");
	int saw_last = 0, footer = 0;
	rows = 0;
	double prev_value = -1, prev_pct = -1;
	uint64_t prev_count = 0;
	for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double value, pct, inv, a, b;
		unsigned long long count, total;
		int ia, ib;
		if (line[0] == '#') {
			if (sscanf(line, "#[Mean    = %lf, StdDeviation   = %lf]", &a, &b) == 2) {
				assert_true(fabs(a - hw_hist_mean(h) / ratio) <= 0.01);
				assert_true(fabs(b - hw_hist_stddev(h) / ratio) <= 0.01);
				footer |= 1;
			} else if (sscanf(line, "#[Max     = %lf, Total count    = %llu]", &a, &total) == 2) {
				assert_true(fabs(a * ratio - (double)hw_hist_highest_equivalent(h, v[N - 1])) <= 0.01 * ratio);
				assert_int_equal(total, N);
				footer |= 2;
			} else if (sscanf(line, "#[Buckets = %d, SubBuckets     = %d]", &ia, &ib) == 2) {
				assert_int_equal(ia, hw_hist_bucket_count(h));
				assert_int_equal(ib, hw_hist_sub_bucket_count(h));
				footer |= 4;
			} else {
				fail_msg("unexpected footer line: %s", line);
			}
			continue;
		}
		assert_false(saw_last); /* nothing but footer after the 100% row */
		int nf = sscanf(line, "%lf %lf %llu %lf", &value, &pct, &count, &inv);
		assert_true(nf == 3 || nf == 4);
		if (nf == 3) {
			assert_true(pct == 1.0);
			assert_int_equal(count, N);
			saw_last = 1;
		} else {
			assert_true(fabs(inv - 1.0 / (1.0 - pct)) <= 0.01 + 1e-6 * inv);
		}
		assert_true(value >= prev_value && pct >= prev_pct && count >= prev_count);
		/* The row's count is the number of samples in slots up to the row's value. */
		assert_true(rows < MAXROWS);
		if (pass == 1) {
			/* printed to 0.01 µs */
			assert_true(fabs(value - ns_values[rows] / 1000.0) <= 0.0051);
			prev_value = value;
			prev_pct = pct;
			prev_count = count;
			rows++;
			continue;
		}
		ns_values[rows] = value;
		int64_t row_v = (int64_t)llround(value);
		int64_t slot_hi = hw_hist_highest_equivalent(h, row_v);
		assert_int_equal(slot_hi, row_v); /* rows print a slot's highest value */
		size_t lo = 0, hi = N;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (v[mid] <= slot_hi)
				lo = mid + 1;
			else
				hi = mid;
		}
		assert_int_equal(count, lo);
		/* ...and reaches the row's percentile level. */
		assert_true(100.0 * (double)count / N >= 100.0 * pct - 1e-6);
		prev_value = value;
		prev_pct = pct;
		prev_count = count;
		rows++;
	}
	assert_true(saw_last);
	assert_int_equal(footer, 7);
	assert_true(rows > 50);
	free(buf);
	}
	const double ratio = 1000.0;

	/* CSV: same steps, monotonic percentile,value rows. */
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(hw_hist_write_csv(h, f, 5, ratio), 0);
	fclose(f);
	line = strtok_r(buf, "\n", &save);
	assert_string_equal(line, "percentile,value");
	int crows = 0;
	double lp = -1, lv = -1, p, val;
	for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		assert_int_equal(sscanf(line, "%lf,%lf", &p, &val), 2);
		assert_true(p >= lp && val >= lv);
		assert_true(fabs(val * ratio - (double)hw_hist_value_at_percentile(h, p)) <= 0.01 * val * ratio);
		lp = p;
		lv = val;
		crows++;
	}
	assert_int_equal(crows, rows);
	assert_true(lp == 100.0);
	free(buf);
	assert_int_equal(hw_hist_write_hgrm(h, NULL, 5, ratio), -EINVAL);
	hw_hist_destroy(h);
	free(v);
}

/* Cumulative counts at bounds: against the sorted sample, every count lies
 * between the exact count of values <= bound and of values <= the bound's
 * highest equivalent; counts never decrease; the end bounds count nothing
 * and everything; bad arguments are refused. */
static size_t count_le(const int64_t *sorted, size_t n, int64_t x)
{
	size_t lo = 0, hi = n; /* first index with sorted[i] > x */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void test_cumulative_counts(void **state)
{
	(void)state;
	enum { N = 100000, NB = 64 };
	int64_t *v = make_sample(21, N);
	hw_hist *h = hw_hist_create_latency();
	assert_non_null(h);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(hw_hist_record(h, v[i]), 0);
	qsort(v, N, sizeof(*v), cmp_i64);
	int64_t b[NB];
	uint64_t out[NB];
	hw_rng r = { g_seed ^ 22 };
	b[0] = -5;
	b[1] = 0;
	for (int i = 2; i < NB - 2; i++)
		b[i] = sample(&r, NS_1US / 2, 2 * NS_60S);
	b[NB - 2] = v[N / 2];              /* a recorded value exactly */
	b[NB - 1] = 3600LL * 1000000000;   /* the highest trackable value */
	qsort(b, NB, sizeof(*b), cmp_i64);
	assert_int_equal(hw_hist_cumulative_counts(h, b, NB, out), 0);
	for (int i = 0; i < NB; i++) {
		size_t lo = b[i] < 0 ? 0 : count_le(v, N, b[i]);
		size_t hi = b[i] < 0 ? 0 : count_le(v, N, hw_hist_highest_equivalent(h, b[i]));
		if (out[i] < lo || out[i] > hi)
			fail_msg("bound %lld: cumulative %llu, exact %zu..%zu", (long long)b[i],
				 (unsigned long long)out[i], lo, hi);
		if (i)
			assert_true(out[i] >= out[i - 1]);
	}
	assert_int_equal(out[0], 0);
	assert_int_equal(out[NB - 1], N);
	/* one bound at a time gives the same answers as the one pass */
	for (int i = 0; i < NB; i += 7) {
		uint64_t one;
		assert_int_equal(hw_hist_cumulative_counts(h, &b[i], 1, &one), 0);
		assert_int_equal(one, out[i]);
	}
	/* refused: descending bounds, NULLs, negative n; nothing to do for 0 */
	int64_t desc[2] = { 10, 5 };
	out[0] = 77;
	assert_int_equal(hw_hist_cumulative_counts(h, desc, 2, out), -EINVAL);
	assert_int_equal(out[0], 77);
	assert_int_equal(hw_hist_cumulative_counts(NULL, b, 1, out), -EINVAL);
	assert_int_equal(hw_hist_cumulative_counts(h, b, -1, out), -EINVAL);
	assert_int_equal(hw_hist_cumulative_counts(h, NULL, 0, NULL), 0);
	hw_hist_destroy(h);
	free(v);
}

/* ---- one writer thread, one concurrent reader ---- */

enum { SHARED_N = 200000 };

typedef struct shared_run {
	hw_hist *h;
	const int64_t *v;
	int done;               /* relaxed atomic: the reader's stop flag */
} shared_run;

static void *shared_writer(void *arg)
{
	shared_run *r = arg;
	for (size_t i = 0; i < SHARED_N; i++)
		hw_hist_record_shared(r->h, r->v[i]);
	hw_hist_record_shared(r->h, -5); /* out of range: dropped */
	/* release: the main thread's join orders everything anyway; the flag
	 * only ends the reader's loop */
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_shared_concurrent(void **state)
{
	(void)state;
	int64_t *v = make_sample(6, SHARED_N);
	shared_run r = { .h = hw_hist_create_latency(), .v = v };
	hw_hist *snap = hw_hist_create_latency(), *model = hw_hist_create_latency();
	assert_non_null(r.h);
	assert_non_null(snap);
	assert_non_null(model);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, shared_writer, &r), 0);
	/* Each slot only grows and relaxed loads of one location are coherent,
	 * so successive snapshots never shrink; a snapshot's buckets and count
	 * agree; nothing beyond what the writer recorded appears. */
	uint64_t last = 0;
	int snaps = 0;
	int64_t bounds[] = { 10000, 1000000, 100000000, NS_60S };
	uint64_t cum[4];
	while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) || snaps == 0) {
		hw_hist_reset(snap);
		assert_int_equal(hw_hist_merge_shared(snap, r.h), 0);
		uint64_t c = hw_hist_count(snap);
		assert_true(c >= last);
		assert_true(c <= SHARED_N);
		assert_int_equal(hw_hist_cumulative_counts(snap, bounds, 4, cum), 0);
		assert_int_equal(cum[3], c);
		if (c)
			assert_true(hw_hist_min(snap) <= hw_hist_max(snap));
		last = c;
		snaps++;
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	/* quiescent: the shared copy is exact */
	for (size_t i = 0; i < SHARED_N; i++)
		hw_hist_record(model, v[i]);
	hw_hist_reset(snap);
	assert_int_equal(hw_hist_merge_shared(snap, r.h), 0);
	assert_int_equal(hw_hist_count(snap), SHARED_N);
	assert_int_equal(hw_hist_count(r.h), SHARED_N);
	assert_int_equal(hw_hist_dropped(r.h), 1);
	assert_int_equal(hw_hist_min(snap), hw_hist_min(model));
	assert_int_equal(hw_hist_max(snap), hw_hist_max(model));
	for (double p = 0; p <= 100; p += 0.5)
		assert_int_equal(hw_hist_value_at_percentile(snap, p), hw_hist_value_at_percentile(model, p));
	/* merging twice adds twice (it is a merge, not a copy) */
	assert_int_equal(hw_hist_merge_shared(snap, r.h), 0);
	assert_int_equal(hw_hist_count(snap), 2 * SHARED_N);
	/* another layout, NULL: refused, dst unchanged */
	hw_hist *other = NULL;
	assert_int_equal(hw_hist_create(&other, 1, 1000000, 3), 0);
	assert_int_equal(hw_hist_merge_shared(other, r.h), -EINVAL);
	assert_int_equal(hw_hist_count(other), 0);
	assert_int_equal(hw_hist_merge_shared(NULL, r.h), -EINVAL);
	assert_int_equal(hw_hist_merge_shared(snap, NULL), -EINVAL);
	print_message("shared: %d snapshots taken while the writer ran\n", snaps);
	hw_hist_destroy(other);
	hw_hist_destroy(r.h);
	hw_hist_destroy(snap);
	hw_hist_destroy(model);
	free(v);
}

int main(void)
{
	g_seed = hw_test_seed("hist");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative_error),
		cmocka_unit_test(test_record_edges),
		cmocka_unit_test(test_record_corrected),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_hgrm_roundtrip),
		cmocka_unit_test(test_cumulative_counts),
		cmocka_unit_test(test_shared_concurrent),
	};
	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
