/* test_hwd_metric_defs.c — the metric family table (hwd_metric_defs.h) and
 * the engine's per-partition table (HW_PART_METRIC_TABLE) obey Prometheus's
 * naming rules before any daemon runs (it_promtool.sh checks the served
 * text with promtool itself): names unique and [a-z_] with the hiwater_
 * prefix, counters end in _total and nothing else does, no _count / _sum /
 * _bucket suffix on gauges and counters, no abbreviated units (ms, us, ns,
 * s, ...) as a name part, HELP text present and free of newlines,
 * backslashes and '|' (it is a Markdown table cell too); the rendering
 * helpers write HELP, TYPE and samples in exposition format; and the
 * printed table has one row per family, each with a Kafka column.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_rm.h"
#include "hwd_metric_defs.h"

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* Prometheus's checks on one family name of type ty. */
static void check_name(const char *name, hwd_mtype ty)
{
	static const char *const abbrev[] = { "s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "m", "h", "d" };
	static const char *const types[] = { "counter", "gauge", "histogram", "summary", "untyped" };
	assert_true(!strncmp(name, "hiwater_", 8));
	for (const char *c = name; *c; c++)
		assert_true((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_');
	if (ty == HWD_MT_COUNTER)
		assert_true(ends_with(name, "_total"));
	else
		assert_false(ends_with(name, "_total"));
	if (ty == HWD_MT_GAUGE || ty == HWD_MT_COUNTER) {
		assert_false(ends_with(name, "_count"));
		assert_false(ends_with(name, "_sum"));
		assert_false(ends_with(name, "_bucket"));
	}
	char buf[160];
	snprintf(buf, sizeof buf, "%s", name);
	for (char *save = NULL, *p = strtok_r(buf, "_", &save); p; p = strtok_r(NULL, "_", &save)) {
		for (size_t i = 0; i < sizeof abbrev / sizeof abbrev[0]; i++)
			if (!strcmp(p, abbrev[i]))
				fail_msg("%s: abbreviated unit '%s'", name, p);
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (!strcmp(p, types[i]))
				fail_msg("%s: type '%s' in the name", name, p);
		if (strstr(p, "milli") || strstr(p, "micro") || strstr(p, "nano") || strstr(p, "kilo"))
			fail_msg("%s: not a base unit ('%s')", name, p);
	}
}

static void check_help(const char *name, const char *help)
{
	if (!help[0] || strpbrk(help, "\n\\|"))
		fail_msg("%s: HELP empty or with newline, backslash or '|': '%s'", name, help);
}

static void test_names(void **state)
{
	(void)state;
	char all[HWD_M_COUNT + HW_PM_MAX][160];
	int n = 0;
	for (int m = 0; m < HWD_M_COUNT; m++) {
		check_name(hwd_metric_name(m), hwd_metric_type(m));
		check_help(hwd_metric_name(m), hwd_metric_help(m));
		snprintf(all[n++], sizeof all[0], "%s", hwd_metric_name(m));
	}
	for (int pm = 0; pm < HW_PM_MAX; pm++) {
		char nm[128];
		assert_int_equal(hwd_part_family(pm, nm, sizeof nm), 0);
		check_name(nm, hw_part_metric_is_gauge(pm) ? HWD_MT_GAUGE : HWD_MT_COUNTER);
		check_help(nm, hw_part_metric_help(pm));
		assert_true(hw_part_metric_kafka(pm)[0]);
		assert_true(hw_part_metric_per_unit(pm) >= 1);
		snprintf(all[n++], sizeof all[0], "%s", nm);
	}
	/* unique, also against the histogram/summary series suffixes */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i != j)
				assert_string_not_equal(all[i], all[j]);
			static const char *const suf[] = { "_bucket", "_sum", "_count" };
			size_t lj = strlen(all[j]);
			for (size_t k = 0; k < 3; k++)
				if (!strncmp(all[i], all[j], lj) && !strcmp(all[i] + lj, suf[k]))
					fail_msg("%s collides with a series of %s", all[i], all[j]);
		}
	assert_string_equal(hwd_metric_name(HWD_M_COUNT), "");
	assert_string_equal(hw_part_metric_help(HW_PM_MAX), "");
}

static void test_render(void **state)
{
	(void)state;
	hwd_tbuf t = { 0 };
	hwd_mone(&t, HWD_M_UNDER_REPLICATED, 2);
	hwd_mhead(&t, HWD_M_TRANSPORT_DROPS);
	hwd_mu64(&t, HWD_M_TRANSPORT_DROPS, 18446744073709551615ULL, "plane=\"%s\",reason=\"%s\"", "data", "TRUNCATED");
	hwd_mdbl(&t, HWD_M_FOLLOWER_LAG_SECONDS, 0.1, "topic=\"%s\",partition=\"%u\",follower=\"%d\"", "t", 3u, 2);
	hwd_mdbl(&t, HWD_M_REACTOR_SLEPT_SECONDS, 1.0 / 3, NULL);
	assert_false(t.oom);
	assert_non_null(t.b);
	assert_string_equal(t.b,
			    "# HELP hiwater_under_replicated_partitions partitions this broker leads whose ISR is "
			    "smaller than their replica set\n"
			    "# TYPE hiwater_under_replicated_partitions gauge\n"
			    "hiwater_under_replicated_partitions 2\n"
			    "# HELP hiwater_transport_drops_total received datagrams dropped, by reason "
			    "(engine/proto/hw_wire.h drop reasons)\n"
			    "# TYPE hiwater_transport_drops_total counter\n"
			    "hiwater_transport_drops_total{plane=\"data\",reason=\"TRUNCATED\"} 18446744073709551615\n"
			    "hiwater_follower_lag_seconds{topic=\"t\",partition=\"3\",follower=\"2\"} 0.1\n"
			    "hiwater_reactor_slept_seconds_total 0.33333333333333331\n");
	free(t.b);
}

static void test_table(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(hwd_metrics_print_table(f), 0);
	assert_int_equal(fclose(f), 0);
	int rows = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "| `hiwater_", 11))
			continue;
		rows++;
		int cells = 0;
		for (char *c = line; *c; c++)
			cells += *c == '|';
		assert_int_equal(cells, 7); /* metric, type, labels, Kafka, on, meaning */
	}
	assert_int_equal(rows, HWD_M_COUNT + HW_PM_MAX);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
