/* hw_topic_config.c — the topic config table and its value parsers (see
 * hw_topic_config.h). */
#include "hw_topic_config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "hw_batch.h"
#include "hw_log_clean.h"

static const hw_tc_def defs[HW_TC_COUNT] = {
#define HW_TC_ROW(id, nm, syn, ty, lo, hi, where) \
	[HW_TC_##id] = { .name = nm, .synonym = syn, .type = HW_TC_T_##ty, .log = #where[0] == 'L', .min = lo, .max = hi },
	HW_TC_TABLE(HW_TC_ROW)
#undef HW_TC_ROW
};

const hw_tc_def *hw_tc_def_of(int id)
{
	return id >= 0 && id < HW_TC_COUNT ? &defs[id] : NULL;
}

int hw_tc_lookup(const char *name)
{
	for (int i = 0; name && i < HW_TC_COUNT; i++)
		if (strcmp(defs[i].name, name) == 0)
			return i;
	return -ENOENT;
}

#define BAD(...)                                            \
	do {                                                \
		if (why && why_len)                         \
			snprintf(why, why_len, __VA_ARGS__); \
		return -EINVAL;                             \
	} while (0)

/* Kafka's cleanup.policy list is parsed by engine/log (one parser for the
 * broker key and the topic key); its bits are HW_TC_POLICY_*. */
_Static_assert(HW_TC_POLICY_DELETE == HW_LOG_CLEANUP_DELETE && HW_TC_POLICY_COMPACT == HW_LOG_CLEANUP_COMPACT,
	       "cleanup.policy bits differ between the topic config table and the log");
int hw_tc_parse(int id, const char *value, int64_t *out, char *why, size_t why_len)
{
	const hw_tc_def *d = hw_tc_def_of(id);
	int64_t v = 0;
	if (!d || !value)
		BAD("Unknown topic config");
	const char *nm = d->name;
	switch ((hw_tc_type)d->type) {
	case HW_TC_T_I64:
	case HW_TC_T_ORNEG1: {
		char *end;
		errno = 0;
		long long x = strtoll(value, &end, 10);
		if (errno || end == value || *end)
			BAD("Invalid value %.40s for configuration %s: Not a number of type %s", value, nm,
			    d->max > INT32_MAX ? "LONG" : "INT");
		if (d->type == HW_TC_T_ORNEG1 && x == -1) {
			v = -1;
			break;
		}
		if (x < d->min)
			BAD("Invalid value %.40s for configuration %s: Value must be at least %lld%s", value, nm,
			    (long long)d->min, d->type == HW_TC_T_ORNEG1 ? " (or -1)" : "");
		if (x > d->max)
			BAD("Invalid value %.40s for configuration %s: Value must be no more than %lld", value, nm,
			    (long long)d->max);
		v = x;
		break;
	}
	case HW_TC_T_BOOL:
		if (strcasecmp(value, "true") == 0)
			v = 1;
		else if (strcasecmp(value, "false") == 0)
			v = 0;
		else
			BAD("Invalid value %.40s for configuration %s: Expected value to be either true or false",
			    value, nm);
		break;
	case HW_TC_T_RATIO: {
		char *end;
		double x = strtod(value, &end);
		if (end == value || *end)
			BAD("Invalid value %.40s for configuration %s: Not a number of type DOUBLE", value, nm);
		if (!(x >= 0 && x <= 1))
			BAD("Invalid value %.40s for configuration %s: Value must be between 0 and 1", value, nm);
		memcpy(&v, &x, sizeof(v));
		break;
	}
	case HW_TC_T_POLICY: {
		int b = hw_log_cleanup_policy_parse(value);
		if (b < 0)
			BAD("Invalid value %.40s for configuration %s: String must be one of: compact, delete", value,
			    nm);
		v = b;
		break;
	}
	case HW_TC_T_COMPRESSION: {
		int rc = hw_compression_type_check(value);
		if (rc)
			BAD("Invalid value %.40s for configuration %s: %s", value, nm, hw_compression_type_error(rc));
		break;
	}
	case HW_TC_T_THROTTLE:
		break;
	}
	if (out)
		*out = v;
	return 0;
}

int hw_tc_set(hw_topic_config *tc, const char *name, const char *value, char *why, size_t why_len)
{
	int id = hw_tc_lookup(name);
	if (id < 0) {
		if (why && why_len)
			snprintf(why, why_len, "Unknown topic config name: %.60s", name ? name : "");
		return -ENOENT;
	}
	int64_t v;
	int rc = hw_tc_parse(id, value, &v, why, why_len);
	if (rc < 0)
		return rc;
	tc->set |= 1u << id;
	tc->v[id] = v;
	return 0;
}

double hw_tc_ratio(int64_t v)
{
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}
