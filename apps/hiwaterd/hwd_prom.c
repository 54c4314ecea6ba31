/* hwd_prom.c — Prometheus histograms from hw_hist (see hwd_prom.h). */
#include <errno.h>
#include "hwd_prom.h"

#define US 1000LL
#define MS 1000000LL
#define S 1000000000LL

const int64_t hwd_prom_bounds_ns[HWD_PROM_BUCKETS] = {
	10 * US,  25 * US,  50 * US,  100 * US, 250 * US, 500 * US, 1 * MS, 2500 * US, 5 * MS, 10 * MS,
	25 * MS,  50 * MS,  100 * MS, 250 * MS, 500 * MS, 1 * S,    2500 * MS, 5 * S,  10 * S,
};

int hwd_prom_series_init(hwd_prom_series *s)
{
	s->sum_ns = 0;
	s->h = hw_hist_create_latency();
	return s->h ? 0 : -ENOMEM;
}

void hwd_prom_series_fini(hwd_prom_series *s)
{
	hw_hist_destroy(s->h);
	s->h = NULL;
}

int hwd_prom_series_record(hwd_prom_series *s, int64_t ns)
{
	int rc = hw_hist_record_shared(s->h, ns);
	if (rc == 0) /* relaxed store (single writer): makes the metrics thread's
		      * concurrent load defined; orders nothing else */
		__atomic_store_n(&s->sum_ns, __atomic_load_n(&s->sum_ns, __ATOMIC_RELAXED) + ns,
				 __ATOMIC_RELAXED);
	return rc;
}

void hwd_prom_series_reset(hwd_prom_series *s)
{
	if (s->h)
		hw_hist_reset(s->h);
	s->sum_ns = 0;
}

int hwd_prom_series_merge_shared(hwd_prom_series *dst, const hwd_prom_series *src)
{
	if (!dst || !src || !dst->h || !src->h)
		return -EINVAL;
	int rc = hw_hist_merge_shared(dst->h, src->h);
	if (rc < 0)
		return rc;
	/* relaxed: pairs with the writer's relaxed store of the sum; no order
	 * with the histogram's slots */
	dst->sum_ns += __atomic_load_n(&src->sum_ns, __ATOMIC_RELAXED);
	return 0;
}

int hwd_prom_buckets(const hwd_prom_series *s, uint64_t *cum, uint64_t *inf)
{
	if (!s || !s->h || !cum || !inf)
		return -EINVAL;
	int rc = hw_hist_cumulative_counts(s->h, hwd_prom_bounds_ns, HWD_PROM_BUCKETS, cum);
	if (rc < 0)
		return rc;
	*inf = hw_hist_count(s->h);
	return 0;
}

int hwd_prom_write_header(FILE *out, const char *name, const char *help)
{
	if (!out || !name || !help)
		return -EINVAL;
	return fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name) < 0 ? -EIO : 0;
}

int hwd_prom_write_series(FILE *out, const char *name, const char *labels, const hwd_prom_series *s)
{
	if (!out || !name || !labels)
		return -EINVAL;
	uint64_t cum[HWD_PROM_BUCKETS], inf;
	int rc = hwd_prom_buckets(s, cum, &inf);
	if (rc < 0)
		return rc;
	const char *sep = labels[0] ? "," : "";
	int bad = 0;
	for (int i = 0; i < HWD_PROM_BUCKETS; i++)
		bad |= fprintf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
			       (double)hwd_prom_bounds_ns[i] / 1e9, (unsigned long long)cum[i]) < 0;
	bad |= fprintf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, (unsigned long long)inf) < 0;
	const char *lb = labels[0] ? "{" : "", *rb = labels[0] ? "}" : "";
	bad |= fprintf(out, "%s_sum%s%s%s %.9f\n", name, lb, labels, rb, (double)s->sum_ns / 1e9) < 0;
	bad |= fprintf(out, "%s_count%s%s%s %llu\n", name, lb, labels, rb, (unsigned long long)inf) < 0;
	return bad ? -EIO : 0;
}
