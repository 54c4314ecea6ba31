/* fuzz_props.c — libFuzzer target for the .properties reader.
 *
 * The input is read as a file twice: without a schema (any key accepted)
 * and with a small schema (unknown keys and bad values rejected). Beyond
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
static const hw_prop_def schema[] = {
	{ .name = "s", .type = HW_PROP_STRING, .def = "x", .doc = "" },   { .name = "i", .type = HW_PROP_INT32, .def = "1", .doc = "" },
	{ .name = "l", .type = HW_PROP_INT64, .def = "2", .doc = "" },    { .name = "b", .type = HW_PROP_BOOL, .def = "true", .doc = "" },
	{ .name = "d", .type = HW_PROP_DOUBLE, .def = "0.5", .doc = "" }, { .name = "e", .type = HW_PROP_ENUM, .def = "a", .doc = "", .choices = choices },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	char err[256];
	for (int with_schema = 0; with_schema < 2; with_schema++) {
		hw_props *p = NULL;
		if (hw_props_create(&p, with_schema ? schema : NULL, with_schema ? 6 : 0, err,
				    sizeof(err)) != 0)
			abort();
		err[0] = 0;
		int rc = hw_props_load_string(p, "fuzz.properties", buf, size, err, sizeof(err));
		if (rc != 0 && rc != -ENOMEM && strncmp(err, "fuzz.properties:", 16) != 0)
			abort(); /* every failure names the input */
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
