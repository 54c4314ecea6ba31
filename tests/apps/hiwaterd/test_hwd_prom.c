/* test_hwd_prom.c — the daemon's Prometheus histogram export (hwd_prom.c).
 *
 * A seeded log-uniform sample (1 us .. 30 s, plus values past an hour that
 * must be refused) is recorded into a series; the exposition text is parsed
 * back and checked against the exact sorted sample: the bounds are the
 * fixed ones in ascending order, every bucket holds at least the values <=
 * its bound and none beyond the histogram's resolution above it, counts
 * never decrease, +Inf = _count = the values recorded, _sum is the exact
 * sum. The empty series and the label-less form are checked too.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../../support/hw_test.h"
#include "hwd_prom.h"

static uint64_t g_seed;

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static size_t count_le(const int64_t *sorted, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static char *render(const char *name, const char *labels, const hwd_prom_series *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(hwd_prom_write_header(f, name, "test help"), 0);
	assert_int_equal(hwd_prom_write_series(f, name, labels, s), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Parse the series lines back: le[] (seconds; +Inf as INFINITY), cum[],
 * _sum and _count. Returns the number of bucket lines. */
static int parse(char *text, const char *name, const char *labels, double *le, uint64_t *cum, double *sum,
		 uint64_t *count)
{
	char bprefix[256], sname[256], cname[256];
	const char *sep = labels[0] ? "," : "";
	snprintf(bprefix, sizeof(bprefix), "%s_bucket{%s%sle=\"", name, labels, sep);
	if (labels[0]) {
		snprintf(sname, sizeof(sname), "%s_sum{%s} ", name, labels);
		snprintf(cname, sizeof(cname), "%s_count{%s} ", name, labels);
	} else {
		snprintf(sname, sizeof(sname), "%s_sum ", name);
		snprintf(cname, sizeof(cname), "%s_count ", name);
	}
	int nb = 0, got_sum = 0, got_count = 0, lineno = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lineno++) {
		if (lineno == 0) {
			char want[256];
			snprintf(want, sizeof(want), "# HELP %s test help", name);
			assert_string_equal(line, want);
			continue;
		}
		if (lineno == 1) {
			char want[256];
			snprintf(want, sizeof(want), "# TYPE %s histogram", name);
			assert_string_equal(line, want);
			continue;
		}
		if (!strncmp(line, bprefix, strlen(bprefix))) {
			char *p = line + strlen(bprefix);
			char *q = strchr(p, '"');
			assert_non_null(q);
			assert_true(q[1] == '}' && q[2] == ' ');
			*q = 0;
			le[nb] = !strcmp(p, "+Inf") ? INFINITY : strtod(p, NULL);
			cum[nb++] = strtoull(q + 3, NULL, 10);
		} else if (!strncmp(line, sname, strlen(sname))) {
			*sum = strtod(line + strlen(sname), NULL);
			got_sum = 1;
		} else if (!strncmp(line, cname, strlen(cname))) {
			*count = strtoull(line + strlen(cname), NULL, 10);
			got_count = 1;
		} else {
			fail_msg("unexpected line: %s", line);
		}
	}
	assert_true(got_sum && got_count);
	return nb;
}

static void test_buckets_against_sample(void **state)
{
	(void)state;
	enum { N = 50000 };
	hw_rng r = { g_seed };
	int64_t *v = malloc(N * sizeof(*v));
	assert_non_null(v);
	hwd_prom_series s;
	assert_int_equal(hwd_prom_series_init(&s), 0);
	size_t n = 0;
	long double exact_sum = 0;
	for (int i = 0; i < N; i++) {
		double lg = log(1e3) + hw_rng_unit(&r) * (log(3e10) - log(1e3));
		int64_t x = (int64_t)exp(lg);
		if (i % 1000 == 7)
			x = hwd_prom_bounds_ns[(i / 1000) % HWD_PROM_BUCKETS]; /* exactly on a bound */
		assert_int_equal(hwd_prom_series_record(&s, x), 0);
		v[n++] = x;
		exact_sum += x;
	}
	/* refused: negative, beyond an hour; neither counted nor summed */
	assert_int_equal(hwd_prom_series_record(&s, -1), -ERANGE);
	assert_int_equal(hwd_prom_series_record(&s, 3601LL * 1000000000), -ERANGE);
	qsort(v, n, sizeof(*v), cmp_i64);

	const char *labels = "request=\"Produce\",acks=\"all\"";
	char *text = render("x_seconds", labels, &s);
	double le[64], sum = -1;
	uint64_t cum[64], count = 0;
	int nb = parse(text, "x_seconds", labels, le, cum, &sum, &count);
	assert_int_equal(nb, HWD_PROM_BUCKETS + 1);
	for (int i = 0; i < nb; i++) {
		if (i) {
			assert_true(le[i] > le[i - 1]);
			assert_true(cum[i] >= cum[i - 1]);
		}
		if (i == nb - 1) {
			assert_true(isinf(le[i]));
			assert_int_equal(cum[i], n);
			break;
		}
		int64_t bound = hwd_prom_bounds_ns[i];
		assert_true(fabs(le[i] * 1e9 - (double)bound) < 1e-6 * (double)bound);
		size_t lo = count_le(v, n, bound);
		size_t hi = count_le(v, n, hw_hist_highest_equivalent(s.h, bound));
		if (cum[i] < lo || cum[i] > hi)
			fail_msg("le %g: bucket %llu, exact %zu..%zu", le[i], (unsigned long long)cum[i], lo, hi);
	}
	assert_true(le[0] == 1e-5 && le[HWD_PROM_BUCKETS - 1] == 10.0);
	assert_int_equal(count, n);
	assert_true(fabs(sum - (double)(exact_sum / 1e9L)) <= 1e-6 * sum);

	/* the same counts straight from hwd_prom_buckets */
	uint64_t c2[HWD_PROM_BUCKETS], inf = 0;
	assert_int_equal(hwd_prom_buckets(&s, c2, &inf), 0);
	for (int i = 0; i < HWD_PROM_BUCKETS; i++)
		assert_int_equal(c2[i], cum[i]);
	assert_int_equal(inf, n);
	assert_int_equal(hwd_prom_buckets(NULL, c2, &inf), -EINVAL);
	free(text);
	hwd_prom_series_fini(&s);
	free(v);
}

static void test_empty_and_unlabelled(void **state)
{
	(void)state;
	hwd_prom_series s;
	assert_int_equal(hwd_prom_series_init(&s), 0);
	char *text = render("y_seconds", "", &s);
	double le[64], sum = -1;
	uint64_t cum[64], count = 99;
	int nb = parse(text, "y_seconds", "", le, cum, &sum, &count);
	assert_int_equal(nb, HWD_PROM_BUCKETS + 1);
	for (int i = 0; i < nb; i++)
		assert_int_equal(cum[i], 0);
	assert_int_equal(count, 0);
	assert_true(sum == 0);
	free(text);
	assert_int_equal(hwd_prom_write_series(NULL, "y", "", &s), -EINVAL);
	assert_int_equal(hwd_prom_write_header(stdout, NULL, "h"), -EINVAL);
	hwd_prom_series_fini(&s);
	hwd_prom_series_fini(&s); /* twice is harmless */
}

int main(void)
{
	g_seed = hw_test_seed("hwd_prom");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_against_sample),
		cmocka_unit_test(test_empty_and_unlabelled),
	};
	return cmocka_run_group_tests_name("hwd_prom", tests, NULL, NULL);
}
