/* hwd_prom.h — Prometheus exposition of hw_hist latency histograms.
 *
 * Design note. hw_hist keeps every value at HdrHistogram resolution (ns,
 * <= 0.78% relative error); Prometheus wants a histogram with a few fixed
 * cumulative buckets that every scrape shares, so that rates and
 * histogram_quantile() can be computed across time and brokers. The bounds
 * here are fixed for the daemon's life: 10 us .. 10 s on a 1-2.5-5 log
 * scale (19 bounds) plus +Inf, printed in seconds. Each bucket's count is
 * hw_hist_cumulative_counts at the bound (a value within the histogram's
 * resolution above a bound may count in it), so counts never decrease with
 * `le` and the +Inf bucket equals `_count` (the values recorded; values
 * beyond the histogram's range are not recorded, hence not counted). `_sum`
 * is kept exactly by the recorder (hwd_prom_series_record), since the
 * histogram only knows slot midpoints.
 *
 * Threads. A series is written by one reactor thread (record on the
 * request path) and may be read at the same time by the metrics reactor:
 * recording publishes with relaxed atomic stores (hw_hist_record_shared,
 * and the sum), and another thread reads a series only through
 * hwd_prom_series_merge_shared into a private series, which it then
 * renders. No locks.
 */
#ifndef HWD_PROM_H
#define HWD_PROM_H
#include <stdint.h>
#include <stdio.h>
#include "hw_hist.h"

#define HWD_PROM_BUCKETS 19
/* The upper bounds, ascending, in ns (10 us .. 10 s). */
extern const int64_t hwd_prom_bounds_ns[HWD_PROM_BUCKETS];

/* One labelled series of a histogram family: values in ns. */
typedef struct hwd_prom_series {
	hw_hist *h;
	int64_t sum_ns;          /* exact sum of the recorded values; relaxed
				  * atomic stores by the writer */
} hwd_prom_series;

/* Create the series' histogram (hw_hist_create_latency). 0 or -ENOMEM. */
int hwd_prom_series_init(hwd_prom_series *s);
void hwd_prom_series_fini(hwd_prom_series *s);
/* Record one value (ns), on the series' one writer thread. 0, or -ERANGE
 * (negative or above an hour: not recorded, not summed). */
int hwd_prom_series_record(hwd_prom_series *s, int64_t ns);
/* Empty a private series (no concurrent writer). */
void hwd_prom_series_reset(hwd_prom_series *s);
/* Add src (which its writer may be recording into right now) into the
 * private series dst: hw_hist_merge_shared plus a relaxed load of the sum
 * (each may include a record in flight the other does not). 0, -EINVAL
 * (NULL, not initialised). */
int hwd_prom_series_merge_shared(hwd_prom_series *dst, const hwd_prom_series *src);

/* Cumulative counts of s at hwd_prom_bounds_ns into cum[HWD_PROM_BUCKETS]
 * and the +Inf count into *inf. 0 or -EINVAL (NULL). */
int hwd_prom_buckets(const hwd_prom_series *s, uint64_t *cum, uint64_t *inf);

/* "# HELP name help\n# TYPE name histogram\n". 0, -EINVAL, -EIO. */
int hwd_prom_write_header(FILE *out, const char *name, const char *help);
/* The series' lines: name_bucket{labels,le="..."} for every bound and
 * "+Inf", then name_sum{labels} (seconds) and name_count{labels}. labels is
 * the inside of the braces without them ("request=\"Produce\""), "" for
 * none. 0, -EINVAL (NULL), -EIO (write error). */
int hwd_prom_write_series(FILE *out, const char *name, const char *labels, const hwd_prom_series *s);

#endif
