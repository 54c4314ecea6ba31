/* hw_props.h — `.properties` configuration (Kafka server.properties).
 *
 * Design note. The syntax is java.util.Properties', which is what Kafka
 * reads server.properties with:
 *   - `key=value`, `key: value` and `key value` (the first unescaped '=',
 *     ':' or whitespace ends the key; whitespace around the separator is
 *     skipped);
 *   - lines whose first non-blank character is '#' or '!' are comments;
 *   - a line ending in an odd number of backslashes continues on the next
 *     line, whose leading whitespace is dropped;
 *   - escapes \t \n \r \f \uXXXX (written as UTF-8) and \c -> c for any
 *     other c (so "\=" "\:" "\ " "\\" "\#");
 *   - values are then trimmed of surrounding whitespace, as Kafka's
 *     ConfigDef does before parsing.
 * A later definition of a key replaces an earlier one.
 *
 * Schema. The caller may declare its keys, as Kafka's ConfigDef does: name,
 * type, default, importance, unit, doc, and a validator — an inclusive
 * integer range (with at most one extra allowed value outside it, e.g.
 * "0 = automatic"), the allowed strings of an enum, or a check function
 * for structured strings (an endpoint, an address list). With a schema
 * every key read from a file or set programmatically must be declared and
 * its value must parse as its type and pass its validator, otherwise
 * loading fails with a message naming the file, the line, the key and
 * what is valid, e.g.
 *   server.properties:12: unknown key 'replica.lag.time.maxms' (did you mean 'replica.lag.time.max.ms'?)
 *   server.properties:7: bad value 'many' for key 'num.partitions': expected int32
 *   server.properties:9: bad value '0' for key 'log.roll.ms': expected [1,...]
 * A name containing "<id>" declares a family of keys (hiwater.neighbour.<id>):
 * "<id>" stands for a non-negative decimal number. Without a schema
 * (defs == NULL) any key is accepted and values are only checked by the
 * typed getters.
 *
 * Error contract: every function returning int returns 0 or a negative
 * errno; when err/errlen are given (err may be NULL) a one-line message is
 * written there (always NUL-terminated, truncated to errlen).
 */
#ifndef HW_PROPS_H
#define HW_PROPS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* X(NAME, "name in messages") */
#define HW_PROP_TYPES(X)                                                     \
	X(STRING, "string") X(INT32, "int32") X(INT64, "int64") X(BOOL, "bool") \
	X(DOUBLE, "double") X(ENUM, "enum")
typedef enum hw_prop_type {
#define HW_PROP_TYPE_ENUM(n, s) HW_PROP_##n,
	HW_PROP_TYPES(HW_PROP_TYPE_ENUM)
#undef HW_PROP_TYPE_ENUM
} hw_prop_type;
const char *hw_prop_type_name(int type); /* "int32"...; never NULL */

/* Kafka's ConfigDef.Importance. X(NAME, "name"); 0 (unset) is MEDIUM. */
#define HW_PROP_IMPORTANCES(X) X(MEDIUM, "medium") X(HIGH, "high") X(LOW, "low")
typedef enum hw_prop_importance {
#define HW_PROP_IMP_ENUM(n, s) HW_PROP_##n,
	HW_PROP_IMPORTANCES(HW_PROP_IMP_ENUM)
#undef HW_PROP_IMP_ENUM
} hw_prop_importance;
const char *hw_prop_importance_name(int imp); /* "high"...; never NULL */

/* A check for a structured STRING value (Kafka's ConfigDef.Validator):
 * 0 if value is valid, else -EINVAL with a short reason in why (may be
 * left empty). Must not keep value. */
typedef int (*hw_prop_check_fn)(const char *value, char *why, size_t whylen);

typedef struct hw_prop_def {
	const char *name;
	hw_prop_type type;
	const char *def;              /* default, as text; NULL = required */
	const char *doc;
	const char *const *choices;   /* ENUM: NULL-terminated allowed values */
	/* INT32/INT64: valid values are [min, max] (inclusive) when ranged,
	 * plus `special` when has_special (e.g. 0 = automatic, -1 = off). */
	int ranged, has_special;
	int64_t min, max, special;
	/* STRING: check (may be NULL: any string) and what it accepts, for
	 * messages and the printed schema ("udp:HOST:PORT"). "" is always
	 * accepted when it is the default (unset). */
	hw_prop_check_fn check;
	const char *valid;
	const char *unit;             /* "ms", "bytes", ...; NULL: none */
	hw_prop_importance importance;
	const char *group;            /* section of the printed schema; NULL: none */
} hw_prop_def;

/* What key accepts, as Kafka prints validators: "[1,...]",
 * "[0,...,65535]", "0 or [308,...,65535]", "[udp, dpdk]", "true|false",
 * d->valid, or "" (any string / any number of the type). Always
 * NUL-terminated when len > 0. Returns buf. */
char *hw_prop_valid_text(const hw_prop_def *d, char *buf, size_t len);

/* The schema as text, one key per line in declaration order, for
 * `--print-config`: HW_PROPS_PRINT_TSV = tab-separated
 *   name type default valid unit importance doc
 * after a header line starting with "#" (default "(required)" or
 * "(empty)"; "-" for no unit / no validator); HW_PROPS_PRINT_MARKDOWN = one
 * Markdown table per group, "### <group>" before each. Returns 0 or -EIO. */
enum { HW_PROPS_PRINT_TSV, HW_PROPS_PRINT_MARKDOWN };
int hw_props_print_schema(const hw_prop_def *defs, size_t ndefs, int format, FILE *out);

typedef struct hw_props hw_props;

/* A property set. defs (may be NULL: no schema) must outlive it. Returns 0,
 * -ENOMEM, or -EINVAL if a declared default does not parse as its type or
 * fails its validator, an ENUM has no choices, a range is set on a
 * non-integer type or is empty, or a check has no `valid` text (message
 * names the key). */
int hw_props_create(hw_props **out, const hw_prop_def *defs, size_t ndefs, char *err,
		    size_t errlen);
void hw_props_destroy(hw_props *p);

/* Read a file / a buffer named `name` (used in messages). Returns 0;
 * -errno if the file cannot be read ("<path>: <strerror>"); -EINVAL for a
 * syntax error (malformed \u escape, NUL byte), an unknown key or a bad
 * value ("<name>:<line>: ..."). On error the keys before the failing line
 * stay set. */
int hw_props_load_file(hw_props *p, const char *path, char *err, size_t errlen);
int hw_props_load_string(hw_props *p, const char *name, const char *text, size_t len,
			 char *err, size_t errlen);

/* Set key to value (no escapes processed; value trimmed), validated like a
 * file line; `origin` names the source in messages (e.g. "--config").
 * -EINVAL as for load, -ENOMEM. */
int hw_props_set(hw_props *p, const char *key, const char *value, const char *origin,
		 char *err, size_t errlen);
/* "key=value" (as given to --config); -EINVAL without '='. */
int hw_props_set_arg(hw_props *p, const char *kv, const char *origin, char *err,
		     size_t errlen);

/* Check values only once every source is read (as Kafka validates the
 * merged properties): after this, loads and sets refuse unknown keys
 * only, and hw_props_validate checks each set key's final value — so an
 * override can replace a bad value of the file. */
void hw_props_defer_checks(hw_props *p);
/* Every set key's value against its type and validator, in the order the
 * keys were first set; the message names where the value came from
 * ("<file>:<line>: bad value ..."). 0, -EINVAL or -ERANGE. */
int hw_props_validate(const hw_props *p, char *err, size_t errlen);

/* Every declared key without a default has been set: 0, or -ENOENT naming
 * the first missing one ("missing required key 'node.id'"). */
int hw_props_check_required(const hw_props *p, char *err, size_t errlen);

/* 1 if key has been set (file or set), 0 if not. */
int hw_props_is_set(const hw_props *p, const char *key);

/* The set keys starting with prefix, in the order they were first set:
 * start with *cursor = 0; returns 1 with *key (and *value if not NULL)
 * while there is one, then 0. The strings live until the key changes. */
int hw_props_next_set(const hw_props *p, const char *prefix, size_t *cursor, const char **key,
		      const char **value);

/* Where key's value came from, for messages about values that parse as
 * their type but are still wrong (a bad address): "<file>:<line>", the
 * origin of a programmatic set ("--config"), or "default". Always writes
 * a NUL-terminated string when len > 0. */
void hw_props_where(const hw_props *p, const char *key, char *buf, size_t len);

/* Typed getters. The value is the one set, else the schema's default, else
 * `def`. Return 0 and *out; -EINVAL if the text does not parse as the type
 * ("<file>:<line>: bad value 'x' for key 'k': expected int32"), -ERANGE if
 * it overflows the type. *out is untouched on error. */
int hw_props_get_string(const hw_props *p, const char *key, const char *def, const char **out,
			char *err, size_t errlen); /* *out valid until the key changes */
int hw_props_get_int32(const hw_props *p, const char *key, int32_t def, int32_t *out,
		       char *err, size_t errlen);
int hw_props_get_int64(const hw_props *p, const char *key, int64_t def, int64_t *out,
		       char *err, size_t errlen);
int hw_props_get_bool(const hw_props *p, const char *key, int def, int *out, char *err,
		      size_t errlen); /* "true"/"false", any case (Kafka) */
int hw_props_get_double(const hw_props *p, const char *key, double def, double *out,
			char *err, size_t errlen);
/* *out = index in choices (NULL-terminated, exact match; NULL: the schema's
 * choices for key); def is an index. */
int hw_props_get_enum(const hw_props *p, const char *key, const char *const *choices, int def,
		      int *out, char *err, size_t errlen);

/* The effective configuration, one "key = value" line per declared key
 * (and per undeclared set key), sorted by key — what Kafka logs as
 * "KafkaConfig values". Returns 0 or -EIO. */
int hw_props_dump(const hw_props *p, FILE *out);

#endif
