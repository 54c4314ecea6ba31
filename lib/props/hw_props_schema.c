/* hw_props_schema.c — describing a hw_props schema: the validator text of
 * a key (what messages say is expected) and the whole schema as a
 * tab-separated listing or Markdown tables (`--print-config`, the README
 * key tables generated from it). The formats are meant to be stable:
 * scripts and doc tests read them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "hw_props.h"

static const char *imp_names[] = {
#define HW_PROP_IMP_NAME(n, s) s,
	HW_PROP_IMPORTANCES(HW_PROP_IMP_NAME)
#undef HW_PROP_IMP_NAME
};

const char *hw_prop_importance_name(int imp)
{
	return imp >= 0 && imp < (int)(sizeof(imp_names) / sizeof(imp_names[0])) ? imp_names[imp]
										   : "?";
}

/* Kafka's Range.toString: "[1,...]", "[...,5]", "[0,...,65535]". */
static void range_text(const hw_prop_def *d, char *buf, size_t len)
{
	int64_t tmin = d->type == HW_PROP_INT32 ? INT32_MIN : INT64_MIN;
	int64_t tmax = d->type == HW_PROP_INT32 ? INT32_MAX : INT64_MAX;
	char sp[32] = "";
	if (d->has_special)
		snprintf(sp, sizeof(sp), "%lld or ", (long long)d->special);
	if (d->min <= tmin && d->max >= tmax)
		snprintf(buf, len, "%sany %s", sp, hw_prop_type_name((int)d->type));
	else if (d->max >= tmax)
		snprintf(buf, len, "%s[%lld,...]", sp, (long long)d->min);
	else if (d->min <= tmin)
		snprintf(buf, len, "%s[...,%lld]", sp, (long long)d->max);
	else if (d->min == d->max)
		snprintf(buf, len, "%s[%lld]", sp, (long long)d->min);
	else
		snprintf(buf, len, "%s[%lld,...,%lld]", sp, (long long)d->min, (long long)d->max);
}

char *hw_prop_valid_text(const hw_prop_def *d, char *buf, size_t len)
{
	if (!buf || !len)
		return buf;
	buf[0] = 0;
	if (!d)
		return buf;
	if (d->ranged) {
		range_text(d, buf, len);
	} else if (d->type == HW_PROP_ENUM) {
		size_t off = snprintf(buf, len, "[");
		for (int k = 0; d->choices && d->choices[k] && off < len; k++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", k ? ", " : "",
						d->choices[k]);
		if (off < len)
			snprintf(buf + off, len - off, "]");
	} else if (d->type == HW_PROP_BOOL) {
		snprintf(buf, len, "true|false");
	} else if (d->check) {
		snprintf(buf, len, "%s", d->valid);
	}
	return buf;
}

/* Markdown cell text: '|' escaped, newlines flattened. */
static int md_cell(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|' && fputs("\\|", out) < 0)
			return -EIO;
		if (*s != '|' && fputc(*s == '\n' ? ' ' : *s, out) == EOF)
			return -EIO;
	}
	return 0;
}

static const char *default_text(const hw_prop_def *d)
{
	return !d->def ? "(required)" : !d->def[0] ? "(empty)" : d->def;
}

static int print_tsv(const hw_prop_def *defs, size_t ndefs, FILE *out)
{
	if (fprintf(out, "# name\ttype\tdefault\tvalid\tunit\timportance\tdoc\n") < 0)
		return -EIO;
	for (size_t i = 0; i < ndefs; i++) {
		const hw_prop_def *d = &defs[i];
		char valid[512];
		hw_prop_valid_text(d, valid, sizeof(valid));
		if (fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d->name, hw_prop_type_name((int)d->type),
			    default_text(d), valid[0] ? valid : "-", d->unit ? d->unit : "-",
			    hw_prop_importance_name((int)d->importance), d->doc ? d->doc : "") < 0)
			return -EIO;
	}
	return 0;
}

/* One row: | `key` | type | default | valid | unit | importance | doc | */
static int md_row(const hw_prop_def *d, FILE *out)
{
	char valid[512];
	hw_prop_valid_text(d, valid, sizeof(valid));
	const char *def = default_text(d);
	int code = d->def && d->def[0]; /* a real value: in backticks */
	if (fprintf(out, "| `%s` | %s | %s", d->name, hw_prop_type_name((int)d->type),
		    code ? "`" : "") < 0 ||
	    md_cell(out, def) || fprintf(out, "%s | ", code ? "`" : "") < 0 || md_cell(out, valid) ||
	    fprintf(out, " | %s | %s | ", d->unit ? d->unit : "",
		    hw_prop_importance_name((int)d->importance)) < 0 ||
	    md_cell(out, d->doc) || fputs(" |\n", out) < 0)
		return -EIO;
	return 0;
}

static int print_markdown(const hw_prop_def *defs, size_t ndefs, FILE *out)
{
	const char *group = NULL;
	for (size_t i = 0; i < ndefs; i++) {
		const hw_prop_def *d = &defs[i];
		const char *g = d->group ? d->group : "Other";
		if (!group || strcmp(group, g)) {
			if (fprintf(out, "%s### %s\n\n| key | type | default | valid values | unit | "
					 "importance | notes |\n|---|---|---|---|---|---|---|\n",
				    group ? "\n" : "", g) < 0)
				return -EIO;
			group = g;
		}
		if (md_row(d, out))
			return -EIO;
	}
	return 0;
}

int hw_props_print_schema(const hw_prop_def *defs, size_t ndefs, int format, FILE *out)
{
	if (!out || (!defs && ndefs))
		return -EINVAL;
	if (format == HW_PROPS_PRINT_MARKDOWN)
		return print_markdown(defs, ndefs, out);
	return print_tsv(defs, ndefs, out);
}
