/* test_obs.c — the pieces of `hiwater top` and `cluster up --prometheus`
 * that need no daemon (suite 'cli'): the Prometheus text reader, the
 * histogram quantile, the generated scrape config and rules. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_cluster_prom.h"
#include "hw_top.h"

static hw_top_node *node_from(const char *text)
{
	hw_top_node *n = calloc(1, sizeof(*n));
	char *copy = strdup(text);
	assert_non_null(n);
	assert_non_null(copy);
	hw_top_parse_metrics(copy, n);
	free(copy);
	return n;
}

static void test_parse(void **state)
{
	(void)state;
	hw_top_node *n = node_from(
		"# HELP hiwater_partition_high_watermark x\n"
		"# TYPE hiwater_partition_high_watermark gauge\n"
		"hiwater_partition_high_watermark{topic=\"t\",partition=\"1\"} 42\n"
		"hiwater_partition_log_end_offset{topic=\"t\",partition=\"1\"} 50\n"
		"hiwater_partition_is_leader{topic=\"t\",partition=\"1\"} 1\n"
		"hiwater_partition_follower_max_lag_offsets{topic=\"t\",partition=\"1\"} 8\n"
		"hiwater_partition_high_watermark{topic=\"u\",partition=\"0\"} 7\n"
		"hiwater_under_replicated_partitions 2\n"
		"hiwater_leader_partitions 3\n"
		"hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"1\",le=\"0.001\"} 99\n"
		"hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"0.001\"} 5\n"
		"hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"+Inf\"} 6\n");
	const hw_top_pmetrics *p = hw_top_find(n, "t", 1);
	assert_non_null(p);
	assert_true(p->hw == 42 && p->leo == 50 && p->is_leader == 1 && p->max_lag == 8);
	assert_true(isnan(p->produce_requests)); /* not in the text: unknown, not 0 */
	p = hw_top_find(n, "u", 0);
	assert_non_null(p);
	assert_true(p->hw == 7 && isnan(p->leo));
	assert_null(hw_top_find(n, "t", 0));
	assert_true(n->under_replicated == 2 && n->leaders == 3 && isnan(n->under_min_isr));
	/* only the acks=all Produce buckets */
	assert_int_equal(n->n_le, 2);
	assert_true(n->le[0] == 0.001 && isinf(n->le[1]) && n->bucket[0] == 5 && n->bucket[1] == 6);
	free(n);
}

static void test_parse_hostile(void **state)
{
	(void)state;
	/* truncated labels, no value, unterminated quotes, too many labels,
	 * a name too long for a topic, descending buckets: skipped, no crash */
	char big[400];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	char text[2048];
	snprintf(text, sizeof(text),
		 "hiwater_partition_high_watermark{topic=\"t\",partition=\"1\" 5\n"
		 "hiwater_partition_high_watermark{topic=\"t\n"
		 "hiwater_partition_high_watermark{topic=\"t\",partition=\"2\"}\n"
		 "hiwater_partition_high_watermark{topic=\"t\",partition=\"3\"} abc\n"
		 "{} 1\n"
		 "hiwater_leader_partitions{a=\"1\",b=\"2\",c=\"3\",d=\"4\",e=\"5\",f=\"6\",g=\"7\",h=\"8\",i=\"9\"} 4\n"
		 "hiwater_partition_high_watermark{topic=\"%s\",partition=\"1\"} 5\n"
		 "hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"0.01\"} 1\n"
		 "hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"0.001\"} 1\n"
		 "\n\n#\n",
		 big);
	hw_top_node *n = node_from(text);
	assert_int_equal(n->n_parts, 0);
	assert_true(isnan(n->leaders));
	assert_int_equal(n->n_le, 1);
	free(n);
}

static void test_quantile(void **state)
{
	(void)state;
	const char *fmt = "hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"0.001\"} %d\n"
			  "hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"0.01\"} %d\n"
			  "hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"+Inf\"} %d\n";
	char a[512], b[512];
	snprintf(a, sizeof(a), fmt, 10, 10, 10);
	snprintf(b, sizeof(b), fmt, 60, 110, 110); /* +50 below 1 ms, +50 in 1..10 ms */
	hw_top_node *prev = node_from(a), *cur = node_from(b);
	/* rank 99 of 100: 49/50 into the second bucket, as histogram_quantile() */
	assert_float_equal(hw_top_quantile(0.99, cur, prev), 0.001 + 0.009 * 49.0 / 50.0, 1e-12);
	assert_float_equal(hw_top_quantile(0.5, cur, prev), 0.001, 1e-12);
	assert_float_equal(hw_top_quantile(0.25, cur, prev), 0.0005, 1e-12);
	/* no observations in between: NaN, not 0 */
	assert_true(isnan(hw_top_quantile(0.99, cur, cur)));
	/* everything above the last finite bound: that bound */
	snprintf(b, sizeof(b), fmt, 10, 10, 20);
	hw_top_node *slow = node_from(b);
	assert_float_equal(hw_top_quantile(0.99, slow, prev), 0.01, 1e-12);
	/* a first bound <= 0 is returned as is, not interpolated from 0 */
	hw_top_node *neg0 = node_from("hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"-1\"} 0\n"
				      "hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"+Inf\"} 0\n");
	hw_top_node *neg1 = node_from("hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"-1\"} 5\n"
				      "hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"+Inf\"} 5\n");
	assert_float_equal(hw_top_quantile(0.5, neg1, neg0), -1, 1e-12);
	free(neg0);
	free(neg1);
	/* other bucket layouts (a broker of another version): NaN */
	hw_top_node *other = node_from(
		"hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"0.002\"} 90\n"
		"hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"0.01\"} 100\n"
		"hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\",le=\"+Inf\"} 100\n");
	assert_true(isnan(hw_top_quantile(0.99, other, prev)));
	free(prev);
	free(cur);
	free(slow);
	free(other);
}

static void test_prom_files(void **state)
{
	(void)state;
	hw_cluster c;
	memset(&c, 0, sizeof(c));
	snprintf(c.dir, sizeof(c.dir), "/tmp/x");
	c.brokers = 3;
	c.base_port = 20000;
	c.cluster_id = 77;
	assert_int_equal(hw_cluster_prom_port(&c), 20800);
	char buf[8192];
	assert_int_equal(hw_cluster_prom_render_config(&c, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "- targets: [\"127.0.0.1:20400\"]\n        labels: {node: \"0\", role: controller}"));
	for (int n = 1; n <= 3; n++) {
		char want[128];
		snprintf(want, sizeof(want), "- targets: [\"127.0.0.1:%d\"]\n        labels: {node: \"%d\", role: broker}",
			 20400 + n, n);
		assert_non_null(strstr(buf, want));
	}
	assert_null(strstr(buf, "20404"));
	assert_non_null(strstr(buf, "cluster_id: \"77\""));
	assert_int_equal(hw_cluster_prom_render_config(&c, buf, 64), -ENOSPC);
	assert_int_equal(hw_cluster_prom_render_rules(buf, sizeof(buf)), 0);
	int rules = 0;
#define COUNT_RULE(name, expr, what) \
	assert_non_null(strstr(buf, "- record: " name "\n")); \
	rules++;
	HW_PROM_RULE_TABLE(COUNT_RULE)
#undef COUNT_RULE
	assert_true(rules >= 10);
	/* the expressions' quotes survive YAML single quoting */
	assert_non_null(strstr(buf, "expr: 'histogram_quantile(0.99, sum by (node, le) "
				    "(rate(hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\"}[30s])))'"));
	assert_int_equal(hw_cluster_prom_render_rules(buf, 100), -ENOSPC);
}

int main(int argc, char **argv)
{
	/* `test_obs rules`: print the rules file (for promtool check rules) */
	if (argc == 2 && !strcmp(argv[1], "rules")) {
		static char buf[65536];
		if (hw_cluster_prom_render_rules(buf, sizeof(buf)))
			return 1;
		fputs(buf, stdout);
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_prom_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
