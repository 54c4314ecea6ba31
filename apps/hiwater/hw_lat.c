/* hw_lat.c — log-linear latency histogram; see hw_lat.h. */
#include "hw_lat.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Bucket index of v >= 1: values below 2^SUB_BITS map linearly (exact);
 * above, exponent e = floor(log2 v) selects a row of SUB buckets, the next
 * SUB_BITS bits below the top bit select the column. */
static int bucket_of(uint64_t v)
{
	if (v < HW_LAT_SUB)
		return (int)v;
	int e = 63 - __builtin_clzll(v);               /* >= SUB_BITS */
	int row = e - HW_LAT_SUB_BITS + 1;              /* 1.. */
	int col = (int)((v >> (e - HW_LAT_SUB_BITS)) & (HW_LAT_SUB - 1));
	return row * HW_LAT_SUB + col;
}

/* Largest value that maps to bucket i. */
static uint64_t bucket_hi(int i)
{
	int row = i / HW_LAT_SUB, col = i % HW_LAT_SUB;
	if (row == 0)
		return (uint64_t)col;
	int e = row + HW_LAT_SUB_BITS - 1;
	int shift = e - HW_LAT_SUB_BITS;
	uint64_t lo = ((uint64_t)1 << e) | ((uint64_t)col << shift);
	return lo + ((uint64_t)1 << shift) - 1;
}

void hw_lat_reset(hw_lat *h)
{
	memset(h, 0, sizeof(*h));
	h->min = INT64_MAX;
}

void hw_lat_record(hw_lat *h, int64_t ns)
{
	if (ns < 1)
		ns = 1;
	uint64_t v = (uint64_t)ns;
	if (v >= ((uint64_t)1 << (HW_LAT_MAX_EXP + 1)) - 1) {
		v = ((uint64_t)1 << (HW_LAT_MAX_EXP + 1)) - 1;
		h->clamped++;
	}
	h->b[bucket_of(v)]++;
	h->count++;
	h->sum += (double)ns;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
}

void hw_lat_add(hw_lat *dst, const hw_lat *src)
{
	for (int i = 0; i < HW_LAT_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->clamped += src->clamped;
	dst->sum += src->sum;
	if (src->count && src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

int64_t hw_lat_percentile(const hw_lat *h, double q)
{
	if (!h->count)
		return 0;
	if (q >= 100.0)
		return h->max;
	/* rank: the ceil(q% of count)-th value (at least the first). */
	uint64_t rank = (uint64_t)ceil(q / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (int i = 0; i < HW_LAT_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			int64_t v = (int64_t)bucket_hi(i);
			return v > h->max ? h->max : v;
		}
	}
	return h->max;
}

double hw_lat_mean(const hw_lat *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

int hw_lat_write_hgrm(const hw_lat *h, FILE *f, double unit_ns)
{
	fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
	uint64_t seen = 0;
	double sq = 0, mean = hw_lat_mean(h);
	for (int i = 0; i < HW_LAT_BUCKETS; i++) {
		if (!h->b[i])
			continue;
		seen += h->b[i];
		double v = (double)bucket_hi(i);
		if (v > (double)h->max)
			v = (double)h->max;
		double d = v - mean;
		sq += d * d * (double)h->b[i];
		double p = (double)seen / (double)h->count;
		if (p < 1.0)
			fprintf(f, "%12.3f %2.12f %10llu %14.2f\n", v / unit_ns, p,
				(unsigned long long)seen, 1.0 / (1.0 - p));
		else
			fprintf(f, "%12.3f %2.12f %10llu\n", v / unit_ns, p, (unsigned long long)seen);
	}
	double sd = h->count ? sqrt(sq / (double)h->count) : 0;
	fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", mean / unit_ns, sd / unit_ns);
	fprintf(f, "#[Max     = %12.3f, Total count    = %12llu]\n", (double)h->max / unit_ns,
		(unsigned long long)h->count);
	fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", HW_LAT_MAX_EXP - HW_LAT_SUB_BITS + 1,
		HW_LAT_SUB);
	return ferror(f) ? -EIO : 0;
}
