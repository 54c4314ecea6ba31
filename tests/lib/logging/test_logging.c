/* test_logging.c — per-module levels and the line format of hw_logging.
 *
 * A seeded random spec ("level,mod=level,...") is applied and
 * hw_logging_enabled is compared with a model for every (module, level);
 * the output line format is checked by capturing stderr into a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_logging.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;
static const char *const lvl_names[] = { "error", "warn", "info", "debug", "trace" };
#define NLVL 5

static void test_levels(void **state)
{
	(void)state;
	/* First use reads HW_LOG from the environment: get that done before
	 * configuring, so it cannot override the test's settings. */
	(void)hw_logging_enabled(HW_LVL_INFO, "init");
	assert_string_equal(hw_log_level_name(HW_LVL_ERROR), "ERROR");
	assert_string_equal(hw_log_level_name(HW_LVL_TRACE), "TRACE");
	assert_string_equal(hw_log_level_name(99), "?");
	assert_int_equal(hw_logging_configure("warn"), 0);
	assert_true(hw_logging_enabled(HW_LVL_WARN, "any"));
	assert_false(hw_logging_enabled(HW_LVL_INFO, "any"));
	/* malformed specs are refused and leave the old configuration */
	const char *bad[] = { "loud", "info,repl", "info,=debug", "info,repl=sometimes",
			      "info,averyveryveryverylongmodulename=debug" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(hw_logging_configure(bad[i]), -EINVAL);
		assert_true(hw_logging_enabled(HW_LVL_WARN, "any"));
		assert_false(hw_logging_enabled(HW_LVL_INFO, "any"));
	}

	/* Random specs against a model. */
	hw_rng r = { g_seed ^ 31 };
	static const char *const mods[] = { "repl", "log", "net", "wheel", "ctrl", "proto" };
	for (int round = 0; round < 200; round++) {
		char spec[256];
		int def = (int)hw_rng_below(&r, NLVL), want[6];
		size_t o = (size_t)snprintf(spec, sizeof(spec), "%s", lvl_names[def]);
		for (int m = 0; m < 6; m++) {
			want[m] = def;
			if (hw_rng_below(&r, 2)) {
				want[m] = (int)hw_rng_below(&r, NLVL);
				o += (size_t)snprintf(spec + o, sizeof(spec) - o, ",%s=%s", mods[m],
						      hw_rng_below(&r, 2) ? lvl_names[want[m]]
									  : hw_log_level_name(want[m]));
			}
		}
		assert_int_equal(hw_logging_configure(spec), 0);
		for (int m = 0; m < 6; m++)
			for (int l = 0; l < NLVL; l++)
				if (hw_logging_enabled(l, mods[m]) != (l <= want[m]))
					fail_msg("spec '%s': module %s level %s", spec, mods[m], lvl_names[l]);
		for (int l = 0; l < NLVL; l++)
			assert_int_equal(hw_logging_enabled(l, "unlisted"), l <= def);
	}
}

/* Run fn with stderr redirected to a temp file; return what it wrote. */
static char *capture_stderr(void (*fn)(void))
{
	char path[] = "/tmp/lib-logging-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	assert_true(dup2(fd, 2) >= 0);
	fn();
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
	close(fd);
	return buf;
}

static void emit_some(void)
{
	hw_logging_set_prefix("b7");
	HW_LOG(INFO, "repl", "ISR shrink %d -> %d", 3, 2);
	HW_LOG(DEBUG, "repl", "hidden %s", "debug");
	HW_LOG(DEBUG, "log", "shown %s", "debug");
	hw_logging_set_prefix(NULL);
	char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	HW_LOG(WARN, "net", "%s", big);
}

static void test_format(void **state)
{
	(void)state;
	assert_int_equal(hw_logging_configure("info,log=debug"), 0);
	char *out = capture_stderr(emit_some);
	char *save = NULL;
	char *l1 = strtok_r(out, "\n", &save), *l2 = strtok_r(NULL, "\n", &save),
	     *l3 = strtok_r(NULL, "\n", &save), *l4 = strtok_r(NULL, "\n", &save);
	assert_non_null(l1);
	assert_non_null(l2);
	assert_non_null(l3);
	assert_null(l4);
	long sec, ms;
	char rest[1100];
	/* "<mono-sec>.<ms> <prefix> LEVEL module: message" */
	assert_int_equal(sscanf(l1, "%ld.%3ld %1099[^\n]", &sec, &ms, rest), 3);
	assert_true(ms >= 0 && ms < 1000);
	assert_string_equal(rest, "b7 INFO  repl: ISR shrink 3 -> 2");
	assert_int_equal(sscanf(l2, "%ld.%3ld %1099[^\n]", &sec, &ms, rest), 3);
	assert_string_equal(rest, "b7 DEBUG log: shown debug");
	/* an over-long message is truncated to one line, not overflowed */
	assert_true(strlen(l3) < 1024);
	assert_non_null(strstr(l3, "WARN  net: xxxx"));
	free(out);
}

int main(void)
{
	g_seed = hw_test_seed("logging");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests_name("logging", tests, NULL, NULL);
}
