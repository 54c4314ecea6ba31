/* hw_hist.h — latency histogram in the HdrHistogram manner.
 *
 * Design note. Values are int64 counts of a unit the caller chooses; the
 * convention in hiwater is NANOSECONDS (hw_hist_create_latency: 1 ns ..
 * 1 hour at 2 significant digits, i.e. <= 1/128 = 0.78% relative error).
 * The layout is HdrHistogram's: bucket b (b >= 0) covers values
 * [2^(b+m) * H, 2^(b+m+1) * H) with H = sub_bucket_count/2 "sub-buckets" of
 * equal width 2^(b+m) (m = log2 of the lowest discernible value); bucket 0
 * also covers [0, H * 2^m) at unit width. So every value lands in a slot
 * whose width is at most 1/H of the value: the relative error bound.
 * Recording is a count-leading-zeros, two shifts and an increment: O(1), no
 * allocation, no branches on the common path. Percentiles walk the counts.
 *
 * Export: hw_hist_write_hgrm prints exactly HdrHistogram's (Java)
 * outputPercentileDistribution text ("       Value     Percentile
 * TotalCount 1/(1-Percentile)" header, percentile-iterator rows, the
 * #[Mean/#[Max/#[Buckets footer), so HdrHistogram plotters read it; values
 * are divided by `unit_ratio` on output (ns recorded, 1000.0 prints µs,
 * 1e6 prints ms). hw_hist_write_csv prints "percentile,value" rows.
 *
 * Single writer; no internal locking (one histogram per reactor, merge at
 * report time). Reading a histogram while its writer thread records into
 * it: the writer uses hw_hist_record_shared (every word it changes is
 * published with a relaxed atomic store) and the reader only
 * hw_hist_merge_shared (relaxed atomic loads); every other function
 * assumes no concurrent writer.
 */
#ifndef HW_HIST_H
#define HW_HIST_H
#include <stdint.h>
#include <stdio.h>

typedef struct hw_hist hw_hist;

/* A histogram for values in [0, highest] with `sigfigs` (1..5) significant
 * decimal digits above `lowest` (>= 1; values below it share one unit
 * slot). highest >= 2 * lowest. Returns 0 and *out, -EINVAL on bad
 * arguments, -ENOMEM. */
int hw_hist_create(hw_hist **out, int64_t lowest, int64_t highest, int sigfigs);
/* The hiwater latency histogram: ns, 1 .. 3600e9 (1 h), 2 significant
 * digits (<= 0.78% relative error). NULL on allocation failure. */
hw_hist *hw_hist_create_latency(void);
void hw_hist_destroy(hw_hist *h);

/* Record one value / n values. Returns 0, or -ERANGE for v < 0 or
 * v > highest (the value is not recorded; hw_hist_dropped counts it),
 * -EINVAL for n < 0. */
int hw_hist_record(hw_hist *h, int64_t v);
int hw_hist_record_n(hw_hist *h, int64_t v, int64_t n);

/* HdrHistogram's recordValueWithExpectedInterval: record v and, if v is
 * larger than the expected interval between samples (e.g. the producer's
 * send interval in a fixed-rate benchmark), also v - interval,
 * v - 2*interval, ... down to interval, the samples a stalled load
 * generator failed to take (coordinated-omission correction). interval
 * <= 0 records v alone. Returns as hw_hist_record (-ERANGE: nothing
 * recorded). */
int hw_hist_record_corrected(hw_hist *h, int64_t v, int64_t expected_interval);

/* Add src's counts into dst. Returns 0, -EINVAL (NULL), or -ERANGE if src
 * holds values beyond dst's range (dst unchanged). */
int hw_hist_merge(hw_hist *dst, const hw_hist *src);
void hw_hist_reset(hw_hist *h);

/* Shared histograms: one writer thread, readers on other threads.
 *
 * hw_hist_record_shared is hw_hist_record with every changed word (the
 * slot's count, the total, min, max, dropped) published by a relaxed
 * atomic store after a relaxed load (single writer: no read-modify-write
 * instruction, no lock prefix; on x86-64 the same plain moves). Use it, and
 * only it, on a histogram another thread reads concurrently.
 *
 * hw_hist_merge_shared adds src's counts into dst reading src with relaxed
 * atomic loads only, so it is defined behaviour against ONE concurrent
 * hw_hist_record_shared writer (not against a concurrent reset, merge or
 * plain record). Relaxed: each count is some value the writer stored, with
 * no ordering between slots, so the copy is not a consistent cut: values
 * recorded while it runs may or may not be in it. dst's total is the sum of
 * the slot counts actually read (its buckets and count agree); min and max
 * are each a value the writer recorded and may lag the counts by the
 * records in flight. dst must be private to the caller (no concurrent
 * writer) and have src's layout (created with the same lowest and sigfigs,
 * highest >= src's). Returns 0, -EINVAL (NULL, different layout). */
int hw_hist_record_shared(hw_hist *h, int64_t v);
int hw_hist_merge_shared(hw_hist *dst, const hw_hist *src);

uint64_t hw_hist_count(const hw_hist *h);   /* values recorded */
uint64_t hw_hist_dropped(const hw_hist *h); /* out-of-range record attempts */
int64_t hw_hist_min(const hw_hist *h);      /* exact smallest value; 0 if empty */
int64_t hw_hist_max(const hw_hist *h);      /* exact largest value; 0 if empty */
/* Mean and standard deviation over the slots' midpoints (HdrHistogram's
 * definition); 0 if empty. */
double hw_hist_mean(const hw_hist *h);
double hw_hist_stddev(const hw_hist *h);
/* The value at percentile p (0..100) by nearest rank: the highest value
 * equivalent to the ceil(p/100 * count)-th smallest recorded value (so
 * within the relative error of it, never below it); p <= 0 gives the lowest
 * equivalent of the minimum. 0 if empty. */
int64_t hw_hist_value_at_percentile(const hw_hist *h, double p);

/* Cumulative counts at ascending upper bounds, for bucketed exports
 * (Prometheus histograms): out[i] = the number of recorded values in the
 * slots up to and including the slot holding bounds[i], i.e. every value
 * <= bounds[i] and none above hw_hist_highest_equivalent(bounds[i]) (the
 * histogram's relative error). A bound >= the highest trackable value
 * counts everything; a negative bound counts nothing. One pass over the
 * counts. Returns 0, or -EINVAL (NULL with n > 0, n < 0, bounds not
 * non-decreasing; out untouched). */
int hw_hist_cumulative_counts(const hw_hist *h, const int64_t *bounds, int n, uint64_t *out);

/* Layout facts, as the .hgrm footer prints them. */
int hw_hist_bucket_count(const hw_hist *h);
int hw_hist_sub_bucket_count(const hw_hist *h);
int64_t hw_hist_highest_equivalent(const hw_hist *h, int64_t v);
int64_t hw_hist_lowest_equivalent(const hw_hist *h, int64_t v);

/* HdrHistogram outputPercentileDistribution(out, ticks_per_half_distance,
 * unit_ratio) text. ticks_per_half_distance >= 1 (HdrHistogram's tools use
 * 5); unit_ratio > 0. Returns 0, -EINVAL, or -EIO on a write error. */
int hw_hist_write_hgrm(const hw_hist *h, FILE *out, int ticks_per_half_distance,
		       double unit_ratio);
/* "percentile,value" header then one row per percentile-iterator step
 * (percentile in percent, value divided by unit_ratio). Same errors. */
int hw_hist_write_csv(const hw_hist *h, FILE *out, int ticks_per_half_distance,
		      double unit_ratio);

#endif
