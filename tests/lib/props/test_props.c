/* test_props.c — .properties syntax, schema errors, defaults, overrides.
 *
 * Syntax cases are the java.util.Properties rules; a seeded round-trip
 * writes random keys/values with escapes, random separators and random
 * continuation splits and reads them back. Error cases check that each
 * message names the file, the (logical) line and the key.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_props.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;
static char g_err[512];

static hw_props *parse(const char *text)
{
	hw_props *p = NULL;
	assert_int_equal(hw_props_create(&p, NULL, 0, g_err, sizeof(g_err)), 0);
	int rc = hw_props_load_string(p, "t.properties", text, strlen(text), g_err, sizeof(g_err));
	if (rc)
		fail_msg("parse failed (%d): %s", rc, g_err);
	return p;
}

static void expect(const hw_props *p, const char *key, const char *want)
{
	const char *v = NULL;
	assert_int_equal(hw_props_get_string(p, key, NULL, &v, g_err, sizeof(g_err)), 0);
	if (!want) {
		if (v)
			fail_msg("key '%s': expected unset, got '%s'", key, v);
		return;
	}
	if (!v || strcmp(v, want) != 0)
		fail_msg("key '%s': expected '%s', got '%s'", key, want, v ? v : "(unset)");
}

static void test_syntax(void **state)
{
	(void)state;
	hw_props *p = parse(
		"# comment line\n"
		"   ! bang comment\n"
		"\n"
		"   \t\n"
		"a=1\n"
		"b: two\n"
		"c three\n"
		"  d   =   spaced value   \n"
		"e=x=y:z\n"
		"f\n"
		"g=\n"
		"h = first \\\n"
		"     second \\\n"
		"\t# not a comment\n"
		"i = even\\\\\n"
		"j = next line\n"
		"# comment ending in backslash \\\n"
		"k = after comment\n"
		"key\\ with\\ spaces\\=eq\\:colon = v\n"
		"esc = tab\\there\\nnl \\u0041\\u00e9\\u20ac\\ud83d\\ude00 \\q\n"
		"dup = one\n"
		"dup = two\n"
		"crlf = yes\r\n"
		"cr = also\r"
		"last = no newline \\\n");
	expect(p, "a", "1");
	expect(p, "b", "two");
	expect(p, "c", "three");
	expect(p, "d", "spaced value");
	expect(p, "e", "x=y:z");
	expect(p, "f", "");
	expect(p, "g", "");
	expect(p, "h", "first second # not a comment");
	expect(p, "i", "even\\");
	expect(p, "j", "next line");
	expect(p, "k", "after comment");
	expect(p, "key with spaces=eq:colon", "v");
	expect(p, "esc", "tab\there\nnl A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 q");
	expect(p, "dup", "two");
	expect(p, "crlf", "yes");
	expect(p, "cr", "also");
	expect(p, "last", "no newline");
	expect(p, "comment", NULL);
	expect(p, "not", NULL);
	assert_true(hw_props_is_set(p, "f"));
	assert_false(hw_props_is_set(p, "zz"));
	hw_props_destroy(p);

	/* Malformed escapes and NUL bytes are errors naming the line. */
	hw_props *q = NULL;
	assert_int_equal(hw_props_create(&q, NULL, 0, NULL, 0), 0);
	const char *bad[] = { "a=1\nb=\\u12G4\n", "a=1\nb=\\ud800x\n", "a=1\nb=\\u12" };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(hw_props_load_string(q, "bad.properties", bad[i], strlen(bad[i]),
						      g_err, sizeof(g_err)), -EINVAL);
		assert_non_null(strstr(g_err, "bad.properties:2: malformed \\uxxxx escape"));
	}
	const char nul[] = "a=1\nb=x\0y\n";
	assert_int_equal(hw_props_load_string(q, "nul.properties", nul, sizeof(nul) - 1, g_err,
					      sizeof(g_err)), -EINVAL);
	assert_non_null(strstr(g_err, "nul.properties:2:"));
	assert_int_equal(hw_props_load_string(q, "u0.properties", "k=\\u0000", 8, g_err,
					      sizeof(g_err)), -EINVAL);
	hw_props_destroy(q);
}

/* Escape s the way a .properties writer must (java Properties.store). */
static void put_escaped(char *out, size_t *o, const char *s, int is_key)
{
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];
		const char *rep = NULL;
		char tmp[3] = { '\\', c, 0 };
		switch (c) {
		case '\t': rep = "\\t"; break;
		case '\n': rep = "\\n"; break;
		case '\\': case '=': case ':': case '#': case '!': rep = tmp; break;
		case ' ': rep = (is_key || i == 0) ? "\\ " : NULL; break;
		default: break;
		}
		if (rep) {
			memcpy(out + *o, rep, strlen(rep));
			*o += strlen(rep);
		} else {
			out[(*o)++] = c;
		}
	}
}

static void test_roundtrip_random(void **state)
{
	(void)state;
	enum { N = 300 };
	static const char alphabet[] = "abcXYZ019._- =:#!\\\t\n";
	hw_rng r = { g_seed ^ 21 };
	static char keys[N][24], vals[N][40];
	size_t cap = N * 200, o = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	for (int i = 0; i < N; i++) {
		/* Unique keys: a prefix then random chars. */
		int kl = snprintf(keys[i], sizeof(keys[i]), "k%d.", i);
		for (int k = 0; k < 6; k++)
			keys[i][kl++] = alphabet[hw_rng_below(&r, sizeof(alphabet) - 1)];
		keys[i][kl] = 0;
		/* Values: no surrounding whitespace (values are trimmed). */
		int vl = (int)hw_rng_below(&r, 30);
		for (int k = 0; k < vl; k++)
			vals[i][k] = alphabet[hw_rng_below(&r, sizeof(alphabet) - 1)];
		vals[i][vl] = 0;
		while (vl > 0 && (unsigned char)vals[i][vl - 1] <= ' ')
			vals[i][--vl] = 0;
		while (vals[i][0] && (unsigned char)vals[i][0] <= ' ')
			memmove(vals[i], vals[i] + 1, strlen(vals[i]));

		if (hw_rng_below(&r, 4) == 0)
			o += (size_t)sprintf(text + o, "%s comment %d\n", hw_rng_below(&r, 2) ? "#" : "  !", i);
		o += (size_t)sprintf(text + o, "%s", hw_rng_below(&r, 2) ? "" : " \t");
		put_escaped(text, &o, keys[i], 1);
		static const char *seps[] = { "=", " = ", ":", ": ", " ", "\t", " \t:\t" };
		o += (size_t)sprintf(text + o, "%s", seps[hw_rng_below(&r, 7)]);
		/* The value, split by continuations at random points between
		 * escape sequences. */
		char ev[200];
		size_t eo = 0;
		put_escaped(ev, &eo, vals[i], 0);
		for (size_t k = 0; k < eo; k++) {
			/* never split right after an escaping backslash */
			size_t bs = 0;
			while (bs < k && ev[k - 1 - bs] == '\\')
				bs++;
			int at_boundary = bs % 2 == 0;
			/* a continuation drops the next line's leading blanks */
			if (at_boundary && ev[k] != ' ' && ev[k] != '\t' && hw_rng_below(&r, 8) == 0)
				o += (size_t)sprintf(text + o, "\\\n%s", hw_rng_below(&r, 2) ? "   " : "");
			text[o++] = ev[k];
		}
		o += (size_t)sprintf(text + o, "%s", hw_rng_below(&r, 3) ? "\n" : "\r\n");
		assert_true(o + 400 < cap);
	}
	text[o] = 0;
	hw_props *p = parse(text);
	for (int i = 0; i < N; i++)
		expect(p, keys[i], vals[i]);
	hw_props_destroy(p);
	free(text);
}

/* ---- schema, errors, defaults -------------------------------------------- */

static const char *const acks_choices[] = { "0", "1", "all", NULL };
static const char *const policy_choices[] = { "none", "interval", "fsync", NULL };
static const hw_prop_def schema[] = {
	{ .name = "broker.id", .type = HW_PROP_INT32, .def = NULL, .doc = "required" },
	{ .name = "num.partitions", .type = HW_PROP_INT32, .def = "1", .doc = "partitions per topic" },
	{ .name = "log.segment.bytes", .type = HW_PROP_INT64, .def = "1073741824", .doc = "segment size" },
	{ .name = "replica.lag.time.max.ms", .type = HW_PROP_INT64, .def = "30000", .doc = "ISR lag" },
	{ .name = "unclean.leader.election.enable", .type = HW_PROP_BOOL, .def = "false", .doc = "unclean" },
	{ .name = "ratio", .type = HW_PROP_DOUBLE, .def = "0.5", .doc = "a double" },
	{ .name = "acks", .type = HW_PROP_ENUM, .def = "all", .doc = "producer acks", .choices = acks_choices },
	{ .name = "flush.policy", .type = HW_PROP_ENUM, .def = "none", .doc = "flush", .choices = policy_choices },
	{ .name = "log.dirs", .type = HW_PROP_STRING, .def = "/tmp/kafka-logs", .doc = "dirs" },
	{ .name = "min.insync.replicas", .type = HW_PROP_INT32, .def = "1", .doc = "min ISR" },
	{ .name = "no.default", .type = HW_PROP_STRING, .def = NULL, .doc = "required string" },
};
#define NSCHEMA (sizeof(schema) / sizeof(schema[0]))

static char g_dir[64];

static const char *write_file(const char *name, const char *text)
{
	static char path[160];
	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static hw_props *schema_props(void)
{
	hw_props *p = NULL;
	assert_int_equal(hw_props_create(&p, schema, NSCHEMA, g_err, sizeof(g_err)), 0);
	return p;
}

static void expect_load_error(const char *text, int want_rc, const char *want_msg)
{
	hw_props *p = schema_props();
	const char *path = write_file("server.properties", text);
	g_err[0] = 0;
	int rc = hw_props_load_file(p, path, g_err, sizeof(g_err));
	char full[400];
	snprintf(full, sizeof(full), "%s%s", path, want_msg);
	if (rc != want_rc || !strstr(g_err, full))
		fail_msg("rc %d (want %d), message '%s' (want '%s')", rc, want_rc, g_err, full);
	hw_props_destroy(p);
}

static void test_schema_errors(void **state)
{
	(void)state;
	const char *head =
		"# server.properties\n" /* 1 */
		"broker.id=1\n"          /* 2 */
		"\n"                     /* 3 */
		"num.partitions=3\n";    /* 4 */
	char text[512];
	snprintf(text, sizeof(text), "%sreplica.lag.time.maxms=100\n", head);
	expect_load_error(text, -EINVAL,
			  ":5: unknown key 'replica.lag.time.maxms' (did you mean 'replica.lag.time.max.ms'?)");
	snprintf(text, sizeof(text), "%stotally.unrelated.setting.name=1\n", head);
	expect_load_error(text, -EINVAL, ":5: unknown key 'totally.unrelated.setting.name'");
	snprintf(text, sizeof(text), "%s# c\nnum.partitions=many\n", head);
	expect_load_error(text, -EINVAL, ":6: bad value 'many' for key 'num.partitions': expected int32");
	snprintf(text, sizeof(text), "%snum.partitions = 3000000000\n", head);
	expect_load_error(text, -ERANGE,
			  ":5: bad value '3000000000' for key 'num.partitions': out of range for int32");
	snprintf(text, sizeof(text), "%slog.segment.bytes=1e9\n", head);
	expect_load_error(text, -EINVAL, ":5: bad value '1e9' for key 'log.segment.bytes': expected int64");
	snprintf(text, sizeof(text), "%sunclean.leader.election.enable=yes\n", head);
	expect_load_error(text, -EINVAL,
			  ":5: bad value 'yes' for key 'unclean.leader.election.enable': expected bool");
	snprintf(text, sizeof(text), "%sratio=0.5x\n", head);
	expect_load_error(text, -EINVAL, ":5: bad value '0.5x' for key 'ratio': expected double");
	snprintf(text, sizeof(text), "%sacks=2\n", head);
	expect_load_error(text, -EINVAL, ":5: bad value '2' for key 'acks': expected one of [0, 1, all]");
	/* A continued line is reported at its first line. */
	snprintf(text, sizeof(text), "%smin.insync.replicas = \\\n   two\n", head);
	expect_load_error(text, -EINVAL, ":5: bad value 'two' for key 'min.insync.replicas': expected int32");

	/* Missing file. */
	hw_props *p = schema_props();
	char missing[128];
	snprintf(missing, sizeof(missing), "%s/nope.properties", g_dir);
	assert_int_equal(hw_props_load_file(p, missing, g_err, sizeof(g_err)), -ENOENT);
	assert_non_null(strstr(g_err, missing));
	/* Programmatic sets validate the same way and name the origin. */
	assert_int_equal(hw_props_set_arg(p, "num.partitons=4", "--config", g_err, sizeof(g_err)), -EINVAL);
	assert_string_equal(g_err, "--config: unknown key 'num.partitons' (did you mean 'num.partitions'?)");
	assert_int_equal(hw_props_set_arg(p, "acks", "--config", g_err, sizeof(g_err)), -EINVAL);
	assert_int_equal(hw_props_set(p, "acks", "most", "cli", g_err, sizeof(g_err)), -EINVAL);
	assert_non_null(strstr(g_err, "cli: bad value 'most' for key 'acks'"));
	hw_props_destroy(p);

	/* A schema whose default does not parse is refused. */
	static const hw_prop_def bad_schema[] = {
		{ .name = "x", .type = HW_PROP_INT32, .def = "ten", .doc = "bad default" },
	};
	hw_props *q = NULL;
	assert_int_equal(hw_props_create(&q, bad_schema, 1, g_err, sizeof(g_err)), -EINVAL);
	assert_null(q);
	assert_non_null(strstr(g_err, "'x'"));
	static const hw_prop_def bad_enum[] = { { .name = "e", .type = HW_PROP_ENUM, .def = NULL, .doc = "no choices" } };
	assert_int_equal(hw_props_create(&q, bad_enum, 1, g_err, sizeof(g_err)), -EINVAL);
}

static void test_defaults_and_overrides(void **state)
{
	(void)state;
	hw_rng r = { g_seed ^ 22 };
	int32_t parts = (int32_t)hw_rng_below(&r, 1000) + 2;
	int64_t seg = (int64_t)hw_rng_below(&r, 1LL << 40) + 1;
	char text[512];
	snprintf(text, sizeof(text),
		 "broker.id = 7\n"
		 "num.partitions : %d\n"
		 "log.segment.bytes %lld\n"
		 "unclean.leader.election.enable=TRUE\n"
		 "acks=1\n"
		 "ratio = -2.25e-3\n",
		 parts, (long long)seg);
	hw_props *p = schema_props();
	const char *path = write_file("ok.properties", text);
	assert_int_equal(hw_props_load_file(p, path, g_err, sizeof(g_err)), 0);

	int32_t i32;
	int64_t i64;
	int b, e;
	double d;
	const char *s;
	assert_int_equal(hw_props_get_int32(p, "num.partitions", -1, &i32, g_err, sizeof(g_err)), 0);
	assert_int_equal(i32, parts);
	assert_int_equal(hw_props_get_int64(p, "log.segment.bytes", -1, &i64, g_err, sizeof(g_err)), 0);
	assert_int_equal(i64, seg);
	assert_int_equal(hw_props_get_bool(p, "unclean.leader.election.enable", 0, &b, NULL, 0), 0);
	assert_int_equal(b, 1);
	assert_int_equal(hw_props_get_double(p, "ratio", 0, &d, NULL, 0), 0);
	assert_true(d == -2.25e-3);
	assert_int_equal(hw_props_get_enum(p, "acks", NULL, 0, &e, NULL, 0), 0);
	assert_int_equal(e, 1);
	/* Schema defaults for keys the file does not set. */
	assert_int_equal(hw_props_get_int64(p, "replica.lag.time.max.ms", -1, &i64, NULL, 0), 0);
	assert_int_equal(i64, 30000);
	assert_int_equal(hw_props_get_enum(p, "flush.policy", NULL, 2, &e, NULL, 0), 0);
	assert_int_equal(e, 0);
	assert_int_equal(hw_props_get_string(p, "log.dirs", "x", &s, NULL, 0), 0);
	assert_string_equal(s, "/tmp/kafka-logs");
	/* The caller's default when neither set nor defaulted. */
	assert_int_equal(hw_props_get_string(p, "no.default", "fallback", &s, NULL, 0), 0);
	assert_string_equal(s, "fallback");
	assert_int_equal(hw_props_get_int32(p, "undeclared", 42, &i32, NULL, 0), 0);
	assert_int_equal(i32, 42);
	/* Required keys. */
	assert_int_equal(hw_props_check_required(p, g_err, sizeof(g_err)), -ENOENT);
	assert_string_equal(g_err, "missing required key 'no.default'");
	/* --config overrides the file, a later load overrides again. */
	assert_int_equal(hw_props_set_arg(p, "num.partitions= 99 ", "--config", g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_set(p, "no.default", "given", "--config", g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_check_required(p, g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_get_int32(p, "num.partitions", -1, &i32, NULL, 0), 0);
	assert_int_equal(i32, 99);
	/* Getter type mismatch names where the value came from. */
	assert_int_equal(hw_props_get_int32(p, "log.dirs", 0, &i32, g_err, sizeof(g_err)), -EINVAL);
	assert_non_null(strstr(g_err, "schema default: bad value '/tmp/kafka-logs' for key 'log.dirs'"));
	assert_int_equal(hw_props_get_int32(p, "log.segment.bytes", 0, &i32, g_err, sizeof(g_err)),
			 seg > INT32_MAX ? -ERANGE : 0);
	if (seg > INT32_MAX)
		assert_non_null(strstr(g_err, "ok.properties:3: bad value"));
	/* Dump: every declared key once, sorted, effective values. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(hw_props_dump(p, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\tnum.partitions = 99\n"));
	assert_non_null(strstr(buf, "\treplica.lag.time.max.ms = 30000\n"));
	assert_true(strstr(buf, "\tacks = ") < strstr(buf, "\tbroker.id = "));
	free(buf);
	hw_props_destroy(p);
}

/* ---- validators (Kafka's ConfigDef ranges, enums, checks) ---------------- */

static int check_hostport(const char *v, char *why, size_t len)
{
	const char *c = strrchr(v, ':');
	if (c && c != v && c[1])
		return 0;
	snprintf(why, len, "no port");
	return -EINVAL;
}

static const hw_prop_def vschema[] = {
	{ .name = "log.roll.ms", .type = HW_PROP_INT64, .def = "604800000", .doc = "roll age",
	  .ranged = 1, .min = 1, .max = INT64_MAX, .unit = "ms", .importance = HW_PROP_HIGH,
	  .group = "Log" },
	{ .name = "port", .type = HW_PROP_INT32, .def = "0", .doc = "a port", .ranged = 1, .min = 0,
	  .max = 65535, .group = "Log" },
	{ .name = "mtu", .type = HW_PROP_INT32, .def = "0", .doc = "0: automatic", .ranged = 1,
	  .min = 308, .max = 65535, .has_special = 1, .special = 0, .unit = "bytes", .group = "Net" },
	{ .name = "ep", .type = HW_PROP_STRING, .def = "", .doc = "an endpoint | or none",
	  .check = check_hostport, .valid = "HOST:PORT", .importance = HW_PROP_LOW, .group = "Net" },
	{ .name = "route.<id>", .type = HW_PROP_STRING, .def = "", .doc = "a route",
	  .check = check_hostport, .valid = "HOST:PORT", .group = "Net" },
};

static hw_props *vprops(void)
{
	hw_props *p = NULL;
	assert_int_equal(hw_props_create(&p, vschema, sizeof(vschema) / sizeof(vschema[0]), g_err,
					 sizeof(g_err)), 0);
	return p;
}

static void expect_set_error(const char *key, const char *value, const char *want)
{
	hw_props *p = vprops();
	g_err[0] = 0;
	int rc = hw_props_set(p, key, value, "f.properties:3", g_err, sizeof(g_err));
	if (rc != -EINVAL || strcmp(g_err, want))
		fail_msg("%s=%s: rc %d '%s', want '%s'", key, value, rc, g_err, want);
	hw_props_destroy(p);
}

static void test_validators(void **state)
{
	(void)state;
	/* below, above and on the bounds; the special value outside the range */
	expect_set_error("log.roll.ms", "0",
			 "f.properties:3: bad value '0' for key 'log.roll.ms': expected [1,...]");
	expect_set_error("port", "65536",
			 "f.properties:3: bad value '65536' for key 'port': expected [0,...,65535]");
	expect_set_error("port", "-1", "f.properties:3: bad value '-1' for key 'port': expected [0,...,65535]");
	expect_set_error("mtu", "307",
			 "f.properties:3: bad value '307' for key 'mtu': expected 0 or [308,...,65535]");
	expect_set_error("ep", "nohost", "f.properties:3: bad value 'nohost' for key 'ep': expected HOST:PORT (no port)");
	expect_set_error("route.7", "x:", "f.properties:3: bad value 'x:' for key 'route.7': expected HOST:PORT (no port)");
	expect_set_error("route.x", "a:1", "f.properties:3: unknown key 'route.x'");
	expect_set_error("route.", "a:1", "f.properties:3: unknown key 'route.'");
	hw_props *p = vprops();
	static const char *const ok[][2] = { { "log.roll.ms", "1" }, { "port", "65535" }, { "port", "0" },
					     { "mtu", "0" },        { "mtu", "308" },   { "ep", "a:1" },
					     { "route.12", "b:2" }, { "route.3", "c:3" } };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (hw_props_set(p, ok[i][0], ok[i][1], "t", g_err, sizeof(g_err)))
			fail_msg("%s=%s refused: %s", ok[i][0], ok[i][1], g_err);
	/* a template's instances are found in the order they were set */
	size_t cur = 0;
	const char *k, *v;
	assert_int_equal(hw_props_next_set(p, "route.", &cur, &k, &v), 1);
	assert_string_equal(k, "route.12");
	assert_string_equal(v, "b:2");
	assert_int_equal(hw_props_next_set(p, "route.", &cur, &k, &v), 1);
	assert_string_equal(k, "route.3");
	assert_int_equal(hw_props_next_set(p, "route.", &cur, &k, &v), 0);
	const char *s;
	assert_int_equal(hw_props_get_string(p, "route.99", "x", &s, g_err, sizeof(g_err)), 0);
	assert_string_equal(s, ""); /* the family's default */
	hw_props_destroy(p);

	/* deferred: the final value is checked, where it came from is named */
	p = vprops();
	hw_props_defer_checks(p);
	static const char file[] = "port=70000\nmtu=1\n";
	assert_int_equal(hw_props_load_string(p, "f.properties", file, sizeof(file) - 1, g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_set_arg(p, "port=80", "--override", g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_validate(p, g_err, sizeof(g_err)), -EINVAL);
	assert_string_equal(g_err, "f.properties:2: bad value '1' for key 'mtu': expected 0 or [308,...,65535]");
	assert_int_equal(hw_props_set_arg(p, "mtu=x", "--override", g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_validate(p, g_err, sizeof(g_err)), -EINVAL);
	assert_string_equal(g_err, "--override: bad value 'x' for key 'mtu': expected int32");
	assert_int_equal(hw_props_set_arg(p, "mtu=0", "--override", g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_validate(p, g_err, sizeof(g_err)), 0);
	assert_int_equal(hw_props_set_arg(p, "nope=0", "--override", g_err, sizeof(g_err)), -EINVAL);
	hw_props_destroy(p);

	/* bad schemas are refused at create */
	static const hw_prop_def bad[][1] = {
		{ { .name = "r", .type = HW_PROP_STRING, .def = "", .ranged = 1, .min = 0, .max = 1 } },
		{ { .name = "r", .type = HW_PROP_INT32, .def = "0", .ranged = 1, .min = 2, .max = 1 } },
		{ { .name = "r", .type = HW_PROP_INT32, .def = "0", .ranged = 1, .min = 1, .max = 5 } },
		{ { .name = "r", .type = HW_PROP_STRING, .def = "x", .check = check_hostport } },
		{ { .name = "r", .type = HW_PROP_STRING, .def = "x", .check = check_hostport, .valid = "H:P" } },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		hw_props *q = NULL;
		g_err[0] = 0;
		assert_int_equal(hw_props_create(&q, bad[i], 1, g_err, sizeof(g_err)), -EINVAL);
		assert_non_null(strstr(g_err, "'r'"));
	}

	/* the printed schema: TSV in declaration order, Markdown by group */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(hw_props_print_schema(vschema, sizeof(vschema) / sizeof(vschema[0]),
					       HW_PROPS_PRINT_TSV, f), 0);
	fclose(f);
	assert_string_equal(buf,
		"# name\ttype\tdefault\tvalid\tunit\timportance\tdoc\n"
		"log.roll.ms\tint64\t604800000\t[1,...]\tms\thigh\troll age\n"
		"port\tint32\t0\t[0,...,65535]\t-\tmedium\ta port\n"
		"mtu\tint32\t0\t0 or [308,...,65535]\tbytes\tmedium\t0: automatic\n"
		"ep\tstring\t(empty)\tHOST:PORT\t-\tlow\tan endpoint | or none\n"
		"route.<id>\tstring\t(empty)\tHOST:PORT\t-\tmedium\ta route\n");
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(hw_props_print_schema(vschema, 3, HW_PROPS_PRINT_MARKDOWN, f), 0);
	fclose(f);
	assert_string_equal(buf,
		"### Log\n\n| key | type | default | valid values | unit | importance | notes |\n"
		"|---|---|---|---|---|---|---|\n"
		"| `log.roll.ms` | int64 | `604800000` | [1,...] | ms | high | roll age |\n"
		"| `port` | int32 | `0` | [0,...,65535] |  | medium | a port |\n"
		"\n### Net\n\n| key | type | default | valid values | unit | importance | notes |\n"
		"|---|---|---|---|---|---|---|\n"
		"| `mtu` | int32 | `0` | 0 or [308,...,65535] | bytes | medium | 0: automatic |\n");
	free(buf);
}

int main(void)
{
	g_seed = hw_test_seed("props");
	snprintf(g_dir, sizeof(g_dir), "/tmp/lib-props-XXXXXX");
	if (!mkdtemp(g_dir)) {
		perror("mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_schema_errors),
		cmocka_unit_test(test_defaults_and_overrides),
		cmocka_unit_test(test_validators),
	};
	int rc = cmocka_run_group_tests_name("props", tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_dir);
	return rc;
}
