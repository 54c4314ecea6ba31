/* fuzz_props.c — libFuzzer target for the .properties reader.
 *
 * The input is read as a file twice: without a schema (any key accepted)
 * and with a small schema (unknown keys and bad values rejected; values
 * checked at each line, or once at the end as hiwaterd does). Beyond
 * "no crash, no sanitizer report" it checks the reader's contract: an error
 * always comes with a message naming the input ("fuzz.properties:" or the
 * --config origin); a successful schema-less parse leaves every key
 * retrievable and dumpable; the first line of the input used as a
 * `--config k=v` argument fails or succeeds cleanly. The input is copied
 * to an exact-size heap buffer so ASan catches a read one byte past it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_props.h"

static const char *const choices[] = { "a", "b", NULL };

static int check_colon(const char *v, char *why, size_t len)
{
	if (strchr(v, ':'))
		return 0;
	snprintf(why, len, "no colon");
	return -EINVAL;
}
static const hw_prop_def schema[] = {
	{ .name = "s", .type = HW_PROP_STRING, .def = "x", .doc = "" },   { .name = "i", .type = HW_PROP_INT32, .def = "1", .doc = "" },
	{ .name = "l", .type = HW_PROP_INT64, .def = "2", .doc = "" },    { .name = "b", .type = HW_PROP_BOOL, .def = "true", .doc = "" },
	{ .name = "d", .type = HW_PROP_DOUBLE, .def = "0.5", .doc = "" }, { .name = "e", .type = HW_PROP_ENUM, .def = "a", .doc = "", .choices = choices },
	/* validators: a range with a special value, a check, a key family */
	{ .name = "r", .type = HW_PROP_INT32, .def = "0", .doc = "", .ranged = 1, .min = 10, .max = 20,
	  .has_special = 1, .special = 0 },
	{ .name = "c", .type = HW_PROP_STRING, .def = "", .doc = "", .check = check_colon, .valid = "A:B" },
	{ .name = "n.<id>", .type = HW_PROP_STRING, .def = "", .doc = "", .check = check_colon, .valid = "A:B" },
};
#define NSCHEMA (sizeof(schema) / sizeof(schema[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	char err[256];
	/* no schema; the schema checked at each line; checked once at the end */
	for (int with_schema = 0; with_schema < 3; with_schema++) {
		hw_props *p = NULL;
		if (hw_props_create(&p, with_schema ? schema : NULL, with_schema ? NSCHEMA : 0, err,
				    sizeof(err)) != 0)
			abort();
		if (with_schema == 2)
			hw_props_defer_checks(p);
		err[0] = 0;
		int rc = hw_props_load_string(p, "fuzz.properties", buf, size, err, sizeof(err));
		if (rc != 0 && rc != -ENOMEM && strncmp(err, "fuzz.properties:", 16) != 0)
			abort(); /* every failure names the input */
		if (rc == 0 && with_schema == 1 && hw_props_validate(p, err, sizeof(err)) != 0)
			abort(); /* what was checked line by line passes the final check */
		if (rc == 0 && with_schema == 2) {
			rc = hw_props_validate(p, err, sizeof(err));
			if (rc != 0 && strncmp(err, "fuzz.properties:", 16) != 0)
				abort();
		}
		size_t cur = 0;
		const char *k, *v;
		while (hw_props_next_set(p, "n.", &cur, &k, &v))
			if (!k || !v)
				abort();
		int32_t i32;
		int64_t i64;
		int b, e;
		double d;
		const char *s;
		hw_props_get_int32(p, "i", 0, &i32, err, sizeof(err));
		hw_props_get_int64(p, "l", 0, &i64, err, sizeof(err));
		hw_props_get_bool(p, "b", 0, &b, err, sizeof(err));
		hw_props_get_double(p, "d", 0, &d, err, sizeof(err));
		hw_props_get_enum(p, "e", choices, 0, &e, err, sizeof(err));
		if (hw_props_get_string(p, "s", NULL, &s, err, sizeof(err)) != 0)
			abort();
		FILE *devnull = fopen("/dev/null", "w");
		if (devnull) {
			if (hw_props_dump(p, devnull) != 0)
				abort();
			fclose(devnull);
		}
		/* The first line as a --config argument. */
		size_t n = 0;
		while (n < size && buf[n] != '\n' && buf[n] != 0)
			n++;
		char *arg = strndup(buf, n);
		if (arg) {
			rc = hw_props_set_arg(p, arg, "--config", err, sizeof(err));
			if (rc != 0 && rc != -ENOMEM && strncmp(err, "--config", 8) != 0)
				abort();
			free(arg);
		}
		hw_props_destroy(p);
	}
	free(buf);
	return 0;
}
