/* test_tconf_schema.c — the topic config table (engine/iface/hw_topic_config.h)
 * against hiwaterd's schema (apps/hiwaterd/hwd_config_schema.c): every
 * topic config's broker synonym is a broker key, and a topic value is
 * accepted exactly when the broker key accepts it (the range edges, -1,
 * out-of-range and malformed numbers, booleans, ratios, policies), so a
 * topic override and the broker-wide value follow one rule (docs/kafka.md
 * "Topic configuration"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "hw_props.h"
#include "hw_topic_config.h"
#include "hwd_config_schema.h"

static const hw_prop_def *schema_key(const char *name)
{
	size_t n;
	const hw_prop_def *d = hwd_config_schema(&n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(d[i].name, name))
			return &d[i];
	return NULL;
}

static void test_agree(void **st)
{
	(void)st;
	size_t n;
	const hw_prop_def *defs = hwd_config_schema(&n);
	hw_props *p;
	char err[256];
	assert_int_equal(hw_props_create(&p, defs, n, err, sizeof(err)), 0);
	int compared = 0;
	for (int id = 0; id < HW_TC_COUNT; id++) {
		const hw_tc_def *t = hw_tc_def_of(id);
		if (!t->synonym[0] || t->type == HW_TC_T_COMPRESSION) /* compression: one value served, docs/compression.md */
			continue;
		const hw_prop_def *b = schema_key(t->synonym);
		if (!b)
			fail_msg("%s: broker synonym %s is not a hiwaterd key", t->name, t->synonym);
		char vals[16][32];
		int nv = 0;
		if (t->type == HW_TC_T_I64 || t->type == HW_TC_T_ORNEG1) {
			long long edges[] = { t->min, t->max, -1, 0, 1 };
			for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
				snprintf(vals[nv++], sizeof(vals[0]), "%lld", edges[e]);
			if (t->min > INT64_MIN)
				snprintf(vals[nv++], sizeof(vals[0]), "%lld", (long long)t->min - 1);
			if (t->max < INT64_MAX)
				snprintf(vals[nv++], sizeof(vals[0]), "%lld", (long long)t->max + 1);
			snprintf(vals[nv++], sizeof(vals[0]), "12x");
		} else {
			static const char *const other[] = { "true", "false", "0.5", "1.5", "-0.1", "compact",
							     "compact,delete", "bogus" };
			for (size_t e = 0; e < sizeof(other) / sizeof(other[0]); e++)
				snprintf(vals[nv++], sizeof(vals[0]), "%s", other[e]);
		}
		for (int v = 0; v < nv; v++) {
			int topic_ok = hw_tc_parse(id, vals[v], NULL, NULL, 0) == 0;
			int broker_ok = hw_props_set(p, t->synonym, vals[v], "test", err, sizeof(err)) == 0;
			if (topic_ok != broker_ok)
				fail_msg("%s=%s: topic %s, broker %s=%s %s (%s)", t->name, vals[v],
					 topic_ok ? "accepts" : "refuses", t->synonym, vals[v],
					 broker_ok ? "accepts" : "refuses", err);
			compared++;
		}
	}
	assert_true(compared > 100);
	hw_props_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
