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
 * Schema. The caller may declare its keys (name, type, default, doc, and
 * for enums the allowed strings). With a schema every key read from a file
 * or set programmatically must be declared and its value must parse as its
 * type, otherwise loading fails with a message naming the file, the line
 * and the key, e.g.
 *   server.properties:12: unknown key 'replica.lag.time.maxms' (did you mean 'replica.lag.time.max.ms'?)
 *   server.properties:7: bad value 'many' for key 'num.partitions': expected int32
 * Without a schema (defs == NULL) any key is accepted and values are only
 * checked by the typed getters.
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

typedef struct hw_prop_def {
	const char *name;
	hw_prop_type type;
	const char *def;              /* default, as text; NULL = required */
	const char *doc;
	const char *const *choices;   /* ENUM: NULL-terminated allowed values */
} hw_prop_def;

typedef struct hw_props hw_props;

/* A property set. defs (may be NULL: no schema) must outlive it. Returns 0,
 * -ENOMEM, or -EINVAL if a declared default does not parse as its type or
 * an ENUM has no choices (message names the key). */
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

/* Every declared key without a default has been set: 0, or -ENOENT naming
 * the first missing one ("missing required key 'node.id'"). */
int hw_props_check_required(const hw_props *p, char *err, size_t errlen);

/* 1 if key has been set (file or set), 0 if not. */
int hw_props_is_set(const hw_props *p, const char *key);

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
