/* hw_lat.h — the bench's latency histogram (HdrHistogram-style, log-linear).
 *
 * Values are nanoseconds from 1 ns to 2^37 ns (~137 s); each power-of-two
 * range is split into 128 linear sub-buckets, so any recorded value is
 * reported within 1/128 (< 0.8%) of itself — the issue asks for <= 1% over
 * 1 us..60 s. Recording is O(1) (a clz and an increment). Percentiles are
 * reported as the upper edge of the bucket (never lower than any value in
 * it), the HdrHistogram convention. Larger values are clamped and counted
 * in `clamped`.
 */
#ifndef HW_LAT_H
#define HW_LAT_H
#include <stdint.h>
#include <stdio.h>

#define HW_LAT_SUB_BITS 7
#define HW_LAT_SUB      (1 << HW_LAT_SUB_BITS)
#define HW_LAT_MAX_EXP  37
#define HW_LAT_BUCKETS  ((HW_LAT_MAX_EXP - HW_LAT_SUB_BITS + 2) * HW_LAT_SUB)

typedef struct hw_lat {
	uint64_t count;
	uint64_t clamped;
	int64_t min, max;
	double sum;
	uint64_t b[HW_LAT_BUCKETS];
} hw_lat;

void hw_lat_reset(hw_lat *h);
void hw_lat_record(hw_lat *h, int64_t ns);
/* Add every count of src into dst. */
void hw_lat_add(hw_lat *dst, const hw_lat *src);
/* Value at percentile q (0..100]: the smallest bucket upper edge below which
 * q% of the values lie; exact max for q >= 100; 0 when empty. */
int64_t hw_lat_percentile(const hw_lat *h, double q);
double hw_lat_mean(const hw_lat *h);

/* Write HdrHistogram's percentile distribution format (.hgrm: Value,
 * Percentile, TotalCount, 1/(1-Percentile), then Mean/StdDeviation/Max/
 * Total count footer) with values in `unit_ns` units (1000 = microseconds,
 * as HdrHistogram's plotter expects). 0 or -EIO. */
int hw_lat_write_hgrm(const hw_lat *h, FILE *f, double unit_ns);

#endif
