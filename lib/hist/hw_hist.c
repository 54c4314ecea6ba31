/* hw_hist.c — HdrHistogram-style histogram (see hw_hist.h).
 *
 * Index arithmetic (HdrHistogram's): with m = unit magnitude, S = sub-bucket
 * count (a power of two >= 2 * 10^sigfigs), H = S/2:
 *   bucket(v)     = base - clz(v | sub_bucket_mask)   (base = 64 - m - log2 S)
 *   sub(v, b)     = v >> (b + m)                      (in [H, S) for b > 0)
 *   index(b, s)   = ((b + 1) << log2 H) + (s - H)
 * Bucket 0 uses all S sub-buckets; every later bucket only its upper half
 * (the lower half is the previous bucket's range at half the width), which
 * is why the counts array has (buckets + 1) * H slots.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hw_hist.h"

struct hw_hist {
	int64_t lowest, highest;
	int sigfigs;
	int unit_magnitude;
	int sub_bucket_count_magnitude;
	int sub_bucket_half_count_magnitude;
	int sub_bucket_count, sub_bucket_half_count;
	int64_t sub_bucket_mask;
	int leading_zero_count_base;
	int bucket_count;
	int counts_len;
	uint64_t total;
	uint64_t dropped;
	int64_t min, max;
	uint64_t counts[];
};

/* ---- index arithmetic ------------------------------------------------- */

static inline int bucket_index(const hw_hist *h, int64_t v)
{
	/* v | mask is never 0, so clzll is defined */
	return h->leading_zero_count_base -
	       __builtin_clzll((uint64_t)(v | h->sub_bucket_mask));
}

static inline int sub_bucket_index(const hw_hist *h, int64_t v, int b)
{
	return (int)(v >> (b + h->unit_magnitude));
}

static inline int counts_index(const hw_hist *h, int b, int s)
{
	return ((b + 1) << h->sub_bucket_half_count_magnitude) + (s - h->sub_bucket_half_count);
}

static inline int counts_index_for(const hw_hist *h, int64_t v)
{
	int b = bucket_index(h, v);
	return counts_index(h, b, sub_bucket_index(h, v, b));
}

static int64_t value_at_index(const hw_hist *h, int idx)
{
	int b = (idx >> h->sub_bucket_half_count_magnitude) - 1;
	int s = (idx & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
	if (b < 0) {
		s -= h->sub_bucket_half_count;
		b = 0;
	}
	return (int64_t)s << (b + h->unit_magnitude);
}

static int64_t equivalent_range(const hw_hist *h, int64_t v)
{
	int b = bucket_index(h, v);
	int s = sub_bucket_index(h, v, b);
	int adj = s >= h->sub_bucket_count ? 1 : 0;
	return (int64_t)1 << (h->unit_magnitude + b + adj);
}

int64_t hw_hist_lowest_equivalent(const hw_hist *h, int64_t v)
{
	int b = bucket_index(h, v);
	int s = sub_bucket_index(h, v, b);
	return (int64_t)s << (b + h->unit_magnitude);
}

int64_t hw_hist_highest_equivalent(const hw_hist *h, int64_t v)
{
	return hw_hist_lowest_equivalent(h, v) + equivalent_range(h, v) - 1;
}

static int64_t median_equivalent(const hw_hist *h, int64_t v)
{
	return hw_hist_lowest_equivalent(h, v) + (equivalent_range(h, v) >> 1);
}

/* ---- lifecycle -------------------------------------------------------- */

int hw_hist_create(hw_hist **out, int64_t lowest, int64_t highest, int sigfigs)
{
	if (!out || lowest < 1 || sigfigs < 1 || sigfigs > 5 || highest < 2 * lowest ||
	    highest > INT64_MAX / 2)
		return -EINVAL;
	int64_t largest_single_unit = 2;
	for (int i = 0; i < sigfigs; i++)
		largest_single_unit *= 10;
	int unit_magnitude = 63 - __builtin_clzll((uint64_t)lowest);
	int scm = (int)ceil(log2((double)largest_single_unit));
	if (unit_magnitude + scm > 62)
		return -EINVAL;
	int sub_bucket_count = 1 << scm;
	/* Buckets needed to reach `highest`. */
	int64_t smallest_untrackable = (int64_t)sub_bucket_count << unit_magnitude;
	int buckets = 1;
	while (smallest_untrackable <= highest) {
		if (smallest_untrackable > INT64_MAX / 2) {
			buckets++;
			break;
		}
		smallest_untrackable <<= 1;
		buckets++;
	}
	int counts_len = (buckets + 1) * (sub_bucket_count / 2);
	hw_hist *h = calloc(1, sizeof(*h) + (size_t)counts_len * sizeof(uint64_t));
	if (!h)
		return -ENOMEM;
	h->lowest = lowest;
	h->highest = highest;
	h->sigfigs = sigfigs;
	h->unit_magnitude = unit_magnitude;
	h->sub_bucket_count_magnitude = scm;
	h->sub_bucket_half_count_magnitude = scm - 1;
	h->sub_bucket_count = sub_bucket_count;
	h->sub_bucket_half_count = sub_bucket_count / 2;
	h->sub_bucket_mask = ((int64_t)sub_bucket_count - 1) << unit_magnitude;
	h->leading_zero_count_base = 64 - unit_magnitude - scm;
	h->bucket_count = buckets;
	h->counts_len = counts_len;
	hw_hist_reset(h);
	*out = h;
	return 0;
}

hw_hist *hw_hist_create_latency(void)
{
	hw_hist *h = NULL;
	return hw_hist_create(&h, 1, 3600LL * 1000 * 1000 * 1000, 2) == 0 ? h : NULL;
}

void hw_hist_destroy(hw_hist *h)
{
	free(h);
}

void hw_hist_reset(hw_hist *h)
{
	memset(h->counts, 0, (size_t)h->counts_len * sizeof(uint64_t));
	h->total = 0;
	h->dropped = 0;
	h->min = INT64_MAX;
	h->max = 0;
}

/* ---- recording -------------------------------------------------------- */

int hw_hist_record_n(hw_hist *h, int64_t v, int64_t n)
{
	if (n < 0)
		return -EINVAL;
	if (v < 0 || v > h->highest) {
		h->dropped++;
		return -ERANGE;
	}
	h->counts[counts_index_for(h, v)] += (uint64_t)n;
	h->total += (uint64_t)n;
	if (n > 0) {
		if (v < h->min)
			h->min = v;
		if (v > h->max)
			h->max = v;
	}
	return 0;
}

int hw_hist_record(hw_hist *h, int64_t v)
{
	/* One unsigned compare covers v < 0 and v > highest. */
	if (__builtin_expect((uint64_t)v > (uint64_t)h->highest, 0)) {
		h->dropped++;
		return -ERANGE;
	}
	h->counts[counts_index_for(h, v)]++;
	h->total++;
	h->min = v < h->min ? v : h->min;
	h->max = v > h->max ? v : h->max;
	return 0;
}

int hw_hist_record_corrected(hw_hist *h, int64_t v, int64_t expected_interval)
{
	int rc = hw_hist_record(h, v);
	if (rc || expected_interval <= 0)
		return rc;
	for (int64_t missing = v - expected_interval; missing >= expected_interval;
	     missing -= expected_interval)
		hw_hist_record(h, missing);
	return 0;
}

int hw_hist_merge(hw_hist *dst, const hw_hist *src)
{
	if (!dst || !src)
		return -EINVAL;
	if (src->total == 0)
		return 0;
	if (src->max > dst->highest)
		return -ERANGE;
	if (dst->unit_magnitude == src->unit_magnitude &&
	    dst->sub_bucket_count == src->sub_bucket_count &&
	    dst->counts_len >= src->counts_len) {
		/* Same layout (dst maybe longer): slot i means the same values. */
		for (int i = 0; i < src->counts_len; i++)
			dst->counts[i] += src->counts[i];
		dst->total += src->total;
	} else {
		/* Different layout: re-record each slot's lowest value. */
		for (int i = 0; i < src->counts_len; i++)
			if (src->counts[i]) {
				int64_t v = value_at_index(src, i);
				dst->counts[counts_index_for(dst, v)] += src->counts[i];
				dst->total += src->counts[i];
			}
	}
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

/* ---- shared histograms (hw_hist.h "Shared histograms") ---------------- */

/* Single-writer publish of one word: a relaxed load of our own last store
 * and a relaxed store of the new value. Relaxed orders nothing with
 * respect to the other words: it only makes the concurrent reader's loads
 * defined and untorn (each sees some value we stored). */
#define PUB_SET(field, val) __atomic_store_n(&(field), (val), __ATOMIC_RELAXED)
#define PUB_GET(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

int hw_hist_record_shared(hw_hist *h, int64_t v)
{
	if (__builtin_expect((uint64_t)v > (uint64_t)h->highest, 0)) {
		/* relaxed: a counter the reader may see late; orders nothing */
		PUB_SET(h->dropped, PUB_GET(h->dropped) + 1);
		return -ERANGE;
	}
	uint64_t *c = &h->counts[counts_index_for(h, v)];
	/* relaxed: the reader sums slot counts it loads one by one; no order
	 * between the slot, total, min and max is promised (hw_hist.h) */
	PUB_SET(*c, PUB_GET(*c) + 1);
	/* relaxed: total only for the writer's own queries; merge_shared
	 * recomputes it from the slots */
	PUB_SET(h->total, PUB_GET(h->total) + 1);
	/* relaxed: min/max are each some recorded value, possibly lagging */
	if (v < PUB_GET(h->min))
		PUB_SET(h->min, v);
	if (v > PUB_GET(h->max))
		PUB_SET(h->max, v);
	return 0;
}

int hw_hist_merge_shared(hw_hist *dst, const hw_hist *src)
{
	if (!dst || !src || dst->unit_magnitude != src->unit_magnitude ||
	    dst->sub_bucket_count != src->sub_bucket_count || dst->counts_len < src->counts_len)
		return -EINVAL;
	uint64_t added = 0;
	int first = -1, last = -1;
	for (int i = 0; i < src->counts_len; i++) {
		/* relaxed: pairs with the writer's relaxed store of this slot;
		 * orders nothing with the other slots (not a consistent cut) */
		uint64_t c = PUB_GET(src->counts[i]);
		if (!c)
			continue;
		dst->counts[i] += c;
		added += c;
		first = first < 0 ? i : first;
		last = i;
	}
	if (!added)
		return 0;
	dst->total += added;
	/* relaxed: each a value the writer stored; may lag the counts */
	int64_t mn = PUB_GET(src->min), mx = PUB_GET(src->max);
	if (mn > mx) { /* the first record's min/max not visible yet: the slots' */
		mn = value_at_index(src, first);
		mx = hw_hist_highest_equivalent(src, value_at_index(src, last));
	}
	if (mn < dst->min)
		dst->min = mn;
	if (mx > dst->max)
		dst->max = mx;
	return 0;
}

/* ---- queries ------------------------------------------------------------ */

uint64_t hw_hist_count(const hw_hist *h) { return h->total; }
uint64_t hw_hist_dropped(const hw_hist *h) { return h->dropped; }
int64_t hw_hist_min(const hw_hist *h) { return h->total ? h->min : 0; }
int64_t hw_hist_max(const hw_hist *h) { return h->total ? h->max : 0; }
int hw_hist_bucket_count(const hw_hist *h) { return h->bucket_count; }
int hw_hist_sub_bucket_count(const hw_hist *h) { return h->sub_bucket_count; }

double hw_hist_mean(const hw_hist *h)
{
	if (!h->total)
		return 0;
	double sum = 0;
	for (int i = 0; i < h->counts_len; i++)
		if (h->counts[i])
			sum += (double)h->counts[i] *
			       (double)median_equivalent(h, value_at_index(h, i));
	return sum / (double)h->total;
}

double hw_hist_stddev(const hw_hist *h)
{
	if (!h->total)
		return 0;
	double mean = hw_hist_mean(h), sq = 0;
	for (int i = 0; i < h->counts_len; i++)
		if (h->counts[i]) {
			double d = (double)median_equivalent(h, value_at_index(h, i)) - mean;
			sq += d * d * (double)h->counts[i];
		}
	return sqrt(sq / (double)h->total);
}

int64_t hw_hist_value_at_percentile(const hw_hist *h, double p)
{
	if (!h->total)
		return 0;
	if (p <= 0)
		return hw_hist_lowest_equivalent(h, h->min);
	if (p > 100)
		p = 100;
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
	if (rank < 1)
		rank = 1;
	if (rank > h->total)
		rank = h->total;
	uint64_t cum = 0;
	for (int i = 0; i < h->counts_len; i++) {
		cum += h->counts[i];
		if (cum >= rank)
			return hw_hist_highest_equivalent(h, value_at_index(h, i));
	}
	return hw_hist_highest_equivalent(h, h->max); /* not reached */
}

int hw_hist_cumulative_counts(const hw_hist *h, const int64_t *bounds, int n, uint64_t *out)
{
	if (n < 0 || (n > 0 && (!h || !bounds || !out)))
		return -EINVAL;
	for (int i = 1; i < n; i++)
		if (bounds[i] < bounds[i - 1])
			return -EINVAL;
	uint64_t cum = 0;
	int next = 0; /* the next slot to add */
	for (int i = 0; i < n; i++) {
		int last; /* the last slot this bound includes */
		if (bounds[i] < 0)
			last = -1;
		else if (bounds[i] >= h->highest)
			last = h->counts_len - 1;
		else
			last = counts_index_for(h, bounds[i]);
		if (last >= h->counts_len) /* highest's slot ends the array */
			last = h->counts_len - 1;
		for (; next <= last; next++)
			cum += h->counts[next];
		out[i] = cum;
	}
	return 0;
}

/* ---- export ------------------------------------------------------------- */

/* HdrHistogram's PercentileIterator: steps from 0% towards 100%, each half
 * of the remaining distance split into `ticks` steps; a row is emitted at
 * the first slot whose cumulative percentile reaches the step's level, and
 * a final row at 100% for the last slot. */
typedef int (*row_fn)(FILE *out, int sigfigs, double value, double level,
		      uint64_t cum, int last);

static int walk_percentiles(const hw_hist *h, FILE *out, int ticks, double ratio, row_fn row)
{
	if (!h->total)
		return 0;
	double level = 0;
	uint64_t cum = 0;
	int last_idx = 0;
	for (int i = 0; i < h->counts_len && cum < h->total; i++) {
		if (!h->counts[i])
			continue;
		cum += h->counts[i];
		last_idx = i;
		double value = (double)hw_hist_highest_equivalent(h, value_at_index(h, i)) / ratio;
		while (100.0 * (double)cum / (double)h->total >= level) {
			if (row(out, h->sigfigs, value, level, cum, 0) < 0)
				return -EIO;
			/* Java's arithmetic, to print the very same levels:
			 * ticks * 2^(trunc(log(100/(100-level))/log(2)) + 1) */
			int64_t scale = (int64_t)(log(100.0 / (100.0 - level)) / log(2.0));
			double ticks_now = (double)ticks * pow(2, (double)(scale + 1));
			level += 100.0 / ticks_now;
			if (cum == h->total)
				break; /* the iterator ends; the 100% row follows */
		}
	}
	double value = (double)hw_hist_highest_equivalent(h, value_at_index(h, last_idx)) / ratio;
	if (row(out, h->sigfigs, value, 100.0, cum, 1) < 0)
		return -EIO;
	return 0;
}

static int hgrm_row(FILE *out, int sig, double value, double level, uint64_t cum, int last)
{
	if (last)
		return fprintf(out, "%12.*f %2.12f %10llu\n", sig, value, level / 100.0,
			       (unsigned long long)cum);
	return fprintf(out, "%12.*f %2.12f %10llu %14.2f\n", sig, value, level / 100.0,
		       (unsigned long long)cum, 1.0 / (1.0 - level / 100.0));
}

static int csv_row(FILE *out, int sig, double value, double level, uint64_t cum, int last)
{
	(void)cum;
	(void)last;
	return fprintf(out, "%.12f,%.*f\n", level, sig, value);
}

int hw_hist_write_hgrm(const hw_hist *h, FILE *out, int ticks_per_half_distance,
		       double unit_ratio)
{
	if (!h || !out || ticks_per_half_distance < 1 || !(unit_ratio > 0))
		return -EINVAL;
	int sig = h->sigfigs;
	if (fprintf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
		    "1/(1-Percentile)") < 0)
		return -EIO;
	int rc = walk_percentiles(h, out, ticks_per_half_distance, unit_ratio, hgrm_row);
	if (rc)
		return rc;
	double max = h->total ? (double)hw_hist_highest_equivalent(h, h->max) : 0;
	if (fprintf(out, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", sig,
		    hw_hist_mean(h) / unit_ratio, sig, hw_hist_stddev(h) / unit_ratio) < 0 ||
	    fprintf(out, "#[Max     = %12.*f, Total count    = %12llu]\n", sig,
		    max / unit_ratio, (unsigned long long)h->total) < 0 ||
	    fprintf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", h->bucket_count,
		    h->sub_bucket_count) < 0)
		return -EIO;
	return fflush(out) == 0 ? 0 : -EIO;
}

int hw_hist_write_csv(const hw_hist *h, FILE *out, int ticks_per_half_distance,
		      double unit_ratio)
{
	if (!h || !out || ticks_per_half_distance < 1 || !(unit_ratio > 0))
		return -EINVAL;
	if (fprintf(out, "percentile,value\n") < 0)
		return -EIO;
	int rc = walk_percentiles(h, out, ticks_per_half_distance, unit_ratio, csv_row);
	if (rc)
		return rc;
	return fflush(out) == 0 ? 0 : -EIO;
}
