/* hw_props.c — java.util.Properties reader with a declared-keys schema.
 *
 * Reading follows Properties.load: natural lines are joined into logical
 * lines (continuations), comments dropped, the logical line split into key
 * and value on the first unescaped separator, then both unescaped. Each
 * (key, value) goes through one validation path (validate()), shared with
 * programmatic sets, so a file, `--config k=v` and hw_props_set fail alike;
 * it checks the type, then the def's validator (range, enum, check). The
 * schema's printing is in hw_props_schema.c.
 * Entries remember where they came from (file, line) so a getter's parse
 * error can still name them.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "hw_props.h"

typedef struct prop_entry {
	char *key, *value;
	char *origin;     /* file name or "--config" */
	int line;         /* 0 when not from a file */
} prop_entry;

struct hw_props {
	const hw_prop_def *defs;
	size_t ndefs;
	int deferred;     /* hw_props_defer_checks: values checked by hw_props_validate */
	prop_entry *e;
	size_t n, cap;
};

static const char *type_names[] = {
#define HW_PROP_TYPE_NAME(n, s) s,
	HW_PROP_TYPES(HW_PROP_TYPE_NAME)
#undef HW_PROP_TYPE_NAME
};

const char *hw_prop_type_name(int type)
{
	return type >= 0 && type < (int)(sizeof(type_names) / sizeof(type_names[0]))
		       ? type_names[type]
		       : "?";
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen,
						      const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* "file:12" or "--config" */
static void where(char *buf, size_t len, const char *origin, int line)
{
	if (line > 0)
		snprintf(buf, len, "%s:%d", origin ? origin : "?", line);
	else
		snprintf(buf, len, "%s", origin ? origin : "?");
}

/* ---- value parsing ------------------------------------------------------ */

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			return -EINVAL;
	errno = 0;
	long long v = strtoll(s, NULL, 10);
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	if (strcasecmp(s, "true") == 0)
		*out = 1;
	else if (strcasecmp(s, "false") == 0)
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	if (!*s)
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || !isfinite(v))
		return -EINVAL;
	if (errno == ERANGE && fabs(v) > 1)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_enum(const char *s, const char *const *choices, int *out)
{
	for (int i = 0; choices && choices[i]; i++)
		if (strcmp(s, choices[i]) == 0) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

/* Kafka's validators on top of the type: the integer range (and its one
 * special value), a STRING's check. 0 or -EINVAL with why filled. */
static int check_valid(const hw_prop_def *d, const char *v, char *why, size_t whylen)
{
	why[0] = 0;
	if (!d)
		return 0;
	if (d->ranged && (d->type == HW_PROP_INT32 || d->type == HW_PROP_INT64)) {
		int64_t i;
		if (parse_i64(v, INT64_MIN, INT64_MAX, &i))
			return -EINVAL;
		if ((i < d->min || i > d->max) && !(d->has_special && i == d->special))
			return -EINVAL;
	}
	if (d->check && d->type == HW_PROP_STRING && !(d->def && !d->def[0] && !v[0]))
		return d->check(v, why, whylen) ? -EINVAL : 0;
	return 0;
}

/* Check text against a type and (d != NULL) the def's validator; message
 * "<where>: bad value '<v>' for key ...". */
static int check_value(const hw_prop_def *d, hw_prop_type type, const char *const *choices,
		       const char *key, const char *v, const char *origin, int line, char *err,
		       size_t errlen)
{
	int64_t i;
	int b;
	double x;
	int rc = 0;
	switch (type) {
	case HW_PROP_STRING: break;
	case HW_PROP_INT32: rc = parse_i64(v, INT32_MIN, INT32_MAX, &i); break;
	case HW_PROP_INT64: rc = parse_i64(v, INT64_MIN, INT64_MAX, &i); break;
	case HW_PROP_BOOL: rc = parse_bool(v, &b); break;
	case HW_PROP_DOUBLE: rc = parse_double(v, &x); break;
	case HW_PROP_ENUM: rc = parse_enum(v, choices, &b); break;
	}
	char why[160] = "";
	if (rc == 0 && check_valid(d, v, why, sizeof(why)) == 0)
		return 0;
	char w[512];
	where(w, sizeof(w), origin, line);
	if (type == HW_PROP_ENUM) {
		char list[256] = "";
		size_t off = 0;
		for (int k = 0; choices && choices[k] && off < sizeof(list); k++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
						k ? ", " : "", choices[k]);
		fail(err, errlen, "%s: bad value '%s' for key '%s': expected one of [%s]", w, v,
		     key, list);
		return -EINVAL;
	}
	if (rc == 0) { /* the type parsed, the validator refused */
		char valid[256];
		hw_prop_valid_text(d, valid, sizeof(valid));
		fail(err, errlen, "%s: bad value '%s' for key '%s': expected %s%s%s%s", w, v, key, valid,
		     why[0] ? " (" : "", why, why[0] ? ")" : "");
		return -EINVAL;
	}
	fail(err, errlen, "%s: bad value '%s' for key '%s': %s %s", w, v, key,
	     rc == -ERANGE ? "out of range for" : "expected", hw_prop_type_name((int)type));
	return rc;
}

/* ---- schema ------------------------------------------------------------- */

/* A family name "pre<id>post" matches pre, 1..9 digits, post. */
static int template_match(const char *name, const char *key)
{
	const char *ph = strstr(name, "<id>");
	if (!ph)
		return 0;
	size_t pre = (size_t)(ph - name);
	if (strncmp(name, key, pre))
		return 0;
	const char *q = key + pre;
	size_t nd = 0;
	while (isdigit((unsigned char)q[nd]))
		nd++;
	return nd >= 1 && nd <= 9 && strcmp(q + nd, ph + 4) == 0;
}

static int is_template(const hw_prop_def *d)
{
	return strstr(d->name, "<id>") != NULL;
}

static const hw_prop_def *find_def(const hw_props *p, const char *key)
{
	for (size_t i = 0; i < p->ndefs; i++)
		if (strcmp(p->defs[i].name, key) == 0 || template_match(p->defs[i].name, key))
			return &p->defs[i];
	return NULL;
}

/* Levenshtein distance, capped (short keys only). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 127 || lb > 127)
		return (size_t)-1;
	size_t row[128];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static int validate(const hw_props *p, const char *key, const char *value, const char *origin,
		    int line, char *err, size_t errlen)
{
	if (!p->defs)
		return 0;
	const hw_prop_def *d = find_def(p, key);
	if (!d) {
		char w[512];
		where(w, sizeof(w), origin, line);
		const char *best = NULL;
		size_t bestd = 4; /* suggest within 3 edits */
		for (size_t i = 0; i < p->ndefs; i++) {
			if (is_template(&p->defs[i]))
				continue;
			size_t dist = edit_distance(key, p->defs[i].name);
			if (dist < bestd) {
				bestd = dist;
				best = p->defs[i].name;
			}
		}
		if (best)
			return fail(err, errlen, "%s: unknown key '%s' (did you mean '%s'?)", w, key,
				    best);
		return fail(err, errlen, "%s: unknown key '%s'", w, key);
	}
	if (p->deferred)
		return 0;
	return check_value(d, d->type, d->choices, key, value, origin, line, err, errlen);
}

void hw_props_defer_checks(hw_props *p)
{
	if (p)
		p->deferred = 1;
}

int hw_props_validate(const hw_props *p, char *err, size_t errlen)
{
	for (size_t i = 0; p && p->defs && i < p->n; i++) {
		const prop_entry *e = &p->e[i];
		const hw_prop_def *d = find_def(p, e->key);
		int rc = d ? check_value(d, d->type, d->choices, e->key, e->value, e->origin, e->line, err,
					 errlen)
			   : 0;
		if (rc)
			return rc;
	}
	return 0;
}

int hw_props_create(hw_props **out, const hw_prop_def *defs, size_t ndefs, char *err,
		    size_t errlen)
{
	if (!out)
		return fail(err, errlen, "hw_props_create: NULL out");
	for (size_t i = 0; defs && i < ndefs; i++) {
		const hw_prop_def *d = &defs[i];
		if (!d->name)
			return fail(err, errlen, "schema entry %zu has no name", i);
		if (d->type == HW_PROP_ENUM && (!d->choices || !d->choices[0]))
			return fail(err, errlen, "schema: enum key '%s' has no choices", d->name);
		if (d->ranged && ((d->type != HW_PROP_INT32 && d->type != HW_PROP_INT64) ||
				  d->min > d->max))
			return fail(err, errlen, "schema: key '%s' has a bad range", d->name);
		if (d->check && (d->type != HW_PROP_STRING || !d->valid))
			return fail(err, errlen, "schema: key '%s': a check needs a STRING and its text",
				    d->name);
		if (d->def) {
			int rc = check_value(d, d->type, d->choices, d->name, d->def,
					     "schema default", 0, err, errlen);
			if (rc)
				return -EINVAL;
		}
	}
	hw_props *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->defs = defs;
	p->ndefs = defs ? ndefs : 0;
	*out = p;
	return 0;
}

void hw_props_destroy(hw_props *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->e[i].key);
		free(p->e[i].value);
		free(p->e[i].origin);
	}
	free(p->e);
	free(p);
}

static prop_entry *find_entry(const hw_props *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->e[i].key, key) == 0)
			return &p->e[i];
	return NULL;
}

void hw_props_where(const hw_props *p, const char *key, char *buf, size_t len)
{
	if (!buf || !len)
		return;
	const prop_entry *e = p && key ? find_entry(p, key) : NULL;
	if (e)
		where(buf, len, e->origin, e->line);
	else
		snprintf(buf, len, "default");
}

/* Trim Kafka-style (String.trim: every char <= ' '), in place. */
static char *trim(char *s)
{
	while (*s && (unsigned char)*s <= ' ')
		s++;
	size_t n = strlen(s);
	while (n && (unsigned char)s[n - 1] <= ' ')
		s[--n] = 0;
	return s;
}

/* Validate and store (takes nothing: copies key/value/origin). */
static int store(hw_props *p, const char *key, const char *value, const char *origin, int line,
		 char *err, size_t errlen)
{
	char *v = strdup(value);
	if (!v)
		return -ENOMEM;
	char *tv = trim(v);
	int rc = validate(p, key, tv, origin, line, err, errlen);
	if (rc) {
		free(v);
		return rc;
	}
	memmove(v, tv, strlen(tv) + 1);
	char *o = strdup(origin ? origin : "?");
	if (!o) {
		free(v);
		return -ENOMEM;
	}
	prop_entry *e = find_entry(p, key);
	if (!e) {
		if (p->n == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 16;
			prop_entry *ne = realloc(p->e, cap * sizeof(*ne));
			if (!ne) {
				free(v);
				free(o);
				return -ENOMEM;
			}
			p->e = ne;
			p->cap = cap;
		}
		char *k = strdup(key);
		if (!k) {
			free(v);
			free(o);
			return -ENOMEM;
		}
		e = &p->e[p->n++];
		e->key = k;
	} else {
		free(e->value);
		free(e->origin);
	}
	e->value = v;
	e->origin = o;
	e->line = line;
	return 0;
}

int hw_props_set(hw_props *p, const char *key, const char *value, const char *origin,
		 char *err, size_t errlen)
{
	if (!p || !key || !value)
		return fail(err, errlen, "hw_props_set: NULL argument");
	return store(p, key, value, origin ? origin : "set", 0, err, errlen);
}

int hw_props_set_arg(hw_props *p, const char *kv, const char *origin, char *err, size_t errlen)
{
	if (!p || !kv)
		return fail(err, errlen, "hw_props_set_arg: NULL argument");
	const char *eq = strchr(kv, '=');
	if (!eq)
		return fail(err, errlen, "%s: expected key=value, got '%s'",
			    origin ? origin : "--config", kv);
	char *k = strndup(kv, (size_t)(eq - kv));
	if (!k)
		return -ENOMEM;
	int rc = store(p, trim(k), eq + 1, origin ? origin : "--config", 0, err, errlen);
	free(k);
	return rc;
}

/* ---- the .properties reader --------------------------------------------- */

typedef struct linebuf {
	char *s;
	size_t n, cap;
} linebuf;

static int lb_put(linebuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 128;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *ns = realloc(b->s, cap);
		if (!ns)
			return -ENOMEM;
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
	return 0;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\f';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int read_u4(const char *s, size_t n, size_t i, unsigned *cp)
{
	if (i + 4 > n)
		return -1;
	unsigned v = 0;
	for (int k = 0; k < 4; k++) {
		int h = hexval(s[i + (size_t)k]);
		if (h < 0)
			return -1;
		v = v << 4 | (unsigned)h;
	}
	*cp = v;
	return 0;
}

/* Unescape s[0..n) into out (NUL-terminated). 0 or -EINVAL (bad \u). */
static int unescape(const char *s, size_t n, linebuf *out)
{
	out->n = 0;
	if (lb_put(out, "", 0))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c != '\\') {
			if (lb_put(out, &c, 1))
				return -ENOMEM;
			continue;
		}
		if (++i >= n)
			break; /* a lone trailing backslash is dropped (as Java) */
		c = s[i];
		switch (c) {
		case 't': c = '\t'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 'f': c = '\f'; break;
		case 'u': {
			unsigned cp;
			if (read_u4(s, n, i + 1, &cp))
				return -EINVAL;
			i += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) { /* surrogate pair */
				unsigned lo;
				if (i + 2 >= n || s[i + 1] != '\\' || s[i + 2] != 'u' ||
				    read_u4(s, n, i + 3, &lo) || lo < 0xDC00 || lo > 0xDFFF)
					return -EINVAL;
				i += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				return -EINVAL;
			}
			char u[4];
			size_t k;
			if (cp < 0x80) {
				u[0] = (char)cp;
				k = 1;
			} else if (cp < 0x800) {
				u[0] = (char)(0xC0 | cp >> 6);
				u[1] = (char)(0x80 | (cp & 0x3F));
				k = 2;
			} else if (cp < 0x10000) {
				u[0] = (char)(0xE0 | cp >> 12);
				u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
				u[2] = (char)(0x80 | (cp & 0x3F));
				k = 3;
			} else {
				u[0] = (char)(0xF0 | cp >> 18);
				u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
				u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
				u[3] = (char)(0x80 | (cp & 0x3F));
				k = 4;
			}
			if (lb_put(out, u, k))
				return -ENOMEM;
			continue;
		}
		default: break; /* \c -> c */
		}
		if (lb_put(out, &c, 1))
			return -ENOMEM;
	}
	return 0;
}

/* Split one logical line into key and value and store them. */
static int handle_logical_line(hw_props *p, const char *name, int line, const char *s, size_t n,
			       linebuf *kb, linebuf *vb, char *err, size_t errlen)
{
	size_t klen = 0, vstart = n;
	int has_sep = 0, backslash = 0;
	while (klen < n) {
		char c = s[klen];
		if ((c == '=' || c == ':') && !backslash) {
			vstart = klen + 1;
			has_sep = 1;
			break;
		}
		if (is_ws(c) && !backslash) {
			vstart = klen + 1;
			break;
		}
		backslash = c == '\\' ? !backslash : 0;
		klen++;
	}
	while (vstart < n) {
		char c = s[vstart];
		if (!is_ws(c)) {
			if (!has_sep && (c == '=' || c == ':'))
				has_sep = 1;
			else
				break;
		}
		vstart++;
	}
	int rc = unescape(s, klen, kb);
	if (rc == 0)
		rc = unescape(s + vstart, n - vstart, vb);
	if (rc == -EINVAL)
		return fail(err, errlen, "%s:%d: malformed \\uxxxx escape", name, line);
	if (rc)
		return rc;
	if (strlen(kb->s) != kb->n || strlen(vb->s) != vb->n)
		return fail(err, errlen, "%s:%d: NUL character (\\u0000) not allowed", name, line);
	return store(p, kb->s, vb->s, name, line, err, errlen);
}

int hw_props_load_string(hw_props *p, const char *name, const char *text, size_t len,
			 char *err, size_t errlen)
{
	if (!p || (!text && len))
		return fail(err, errlen, "hw_props_load_string: NULL argument");
	if (!name)
		name = "<string>";
	linebuf lb = { 0 }, kb = { 0 }, vb = { 0 };
	int rc = 0, lineno = 0, start_line = 0, continuing = 0;
	size_t i = 0;
	while (i < len && rc == 0) {
		/* One natural line: [i, eol). */
		size_t eol = i;
		while (eol < len && text[eol] != '\n' && text[eol] != '\r')
			eol++;
		size_t next = eol; /* past "\n", "\r" or "\r\n" */
		if (next < len && text[next] == '\r')
			next++;
		if (next < len && text[next] == '\n' && (next == eol || text[eol] == '\r'))
			next++;
		lineno++;
		if (memchr(text + i, 0, eol - i)) {
			rc = fail(err, errlen, "%s:%d: NUL byte in file", name, lineno);
			break;
		}
		size_t b = i;
		while (b < eol && is_ws(text[b]))
			b++;
		i = next;
		if (!continuing) {
			if (b == eol || text[b] == '#' || text[b] == '!')
				continue; /* blank or comment: never continued */
			lb.n = 0;
			start_line = lineno;
		}
		/* Odd number of trailing backslashes: continues. */
		size_t nbs = 0;
		while (eol - nbs > b && text[eol - nbs - 1] == '\\')
			nbs++;
		continuing = nbs % 2 == 1;
		if (lb_put(&lb, text + b, (eol - b) - (continuing ? 1 : 0))) {
			rc = -ENOMEM;
			break;
		}
		if (continuing && i < len)
			continue;
		continuing = 0;
		rc = handle_logical_line(p, name, start_line, lb.s, lb.n, &kb, &vb, err, errlen);
	}
	free(lb.s);
	free(kb.s);
	free(vb.s);
	return rc;
}

int hw_props_load_file(hw_props *p, const char *path, char *err, size_t errlen)
{
	if (!p || !path)
		return fail(err, errlen, "hw_props_load_file: NULL argument");
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		fail(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (len + 4096 > cap) {
			size_t ncap = cap ? cap * 2 : 8192;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				rc = -EIO;
				fail(err, errlen, "%s: read error", path);
			}
			break;
		}
	}
	fclose(f);
	if (rc == 0)
		rc = hw_props_load_string(p, path, buf, len, err, errlen);
	free(buf);
	return rc;
}

/* ---- getters ------------------------------------------------------------ */

int hw_props_is_set(const hw_props *p, const char *key)
{
	return p && key && find_entry(p, key) != NULL;
}

int hw_props_next_set(const hw_props *p, const char *prefix, size_t *cursor, const char **key,
		      const char **value)
{
	size_t pl = prefix ? strlen(prefix) : 0;
	for (; p && cursor && *cursor < p->n; (*cursor)++) {
		const prop_entry *e = &p->e[*cursor];
		if (pl && strncmp(e->key, prefix, pl))
			continue;
		*key = e->key;
		if (value)
			*value = e->value;
		(*cursor)++;
		return 1;
	}
	return 0;
}

int hw_props_check_required(const hw_props *p, char *err, size_t errlen)
{
	for (size_t i = 0; p && i < p->ndefs; i++)
		if (!p->defs[i].def && !find_entry(p, p->defs[i].name)) {
			fail(err, errlen, "missing required key '%s'", p->defs[i].name);
			return -ENOENT;
		}
	return 0;
}

/* The text for key and where it came from; NULL if neither set nor
 * defaulted by the schema. */
static const char *lookup(const hw_props *p, const char *key, const char **origin, int *line)
{
	const prop_entry *e = find_entry(p, key);
	if (e) {
		*origin = e->origin;
		*line = e->line;
		return e->value;
	}
	const hw_prop_def *d = find_def(p, key);
	*origin = "schema default";
	*line = 0;
	return d ? d->def : NULL;
}

#define GETTER_PROLOGUE                                                           \
	if (!p || !key || !out)                                                   \
		return fail(err, errlen, "hw_props_get: NULL argument");          \
	const char *origin;                                                       \
	int line;                                                                 \
	const char *v = lookup(p, key, &origin, &line)

int hw_props_get_string(const hw_props *p, const char *key, const char *def, const char **out,
			char *err, size_t errlen)
{
	GETTER_PROLOGUE;
	*out = v ? v : def;
	return 0;
}

static int get_int(const hw_props *p, const char *key, hw_prop_type t, int64_t def,
		   int64_t *out, char *err, size_t errlen)
{
	GETTER_PROLOGUE;
	if (!v) {
		*out = def;
		return 0;
	}
	int rc = check_value(NULL, t, NULL, key, v, origin, line, err, errlen);
	if (rc)
		return rc;
	return parse_i64(v, INT64_MIN, INT64_MAX, out);
}

int hw_props_get_int32(const hw_props *p, const char *key, int32_t def, int32_t *out,
		       char *err, size_t errlen)
{
	int64_t v;
	int rc = get_int(p, key, HW_PROP_INT32, def, &v, err, errlen);
	if (rc == 0 && out)
		*out = (int32_t)v;
	return rc;
}

int hw_props_get_int64(const hw_props *p, const char *key, int64_t def, int64_t *out,
		       char *err, size_t errlen)
{
	int64_t v;
	int rc = get_int(p, key, HW_PROP_INT64, def, &v, err, errlen);
	if (rc == 0 && out)
		*out = v;
	return rc;
}

int hw_props_get_bool(const hw_props *p, const char *key, int def, int *out, char *err,
		      size_t errlen)
{
	GETTER_PROLOGUE;
	if (!v) {
		*out = def;
		return 0;
	}
	int rc = check_value(NULL, HW_PROP_BOOL, NULL, key, v, origin, line, err, errlen);
	return rc ? rc : parse_bool(v, out);
}

int hw_props_get_double(const hw_props *p, const char *key, double def, double *out,
			char *err, size_t errlen)
{
	GETTER_PROLOGUE;
	if (!v) {
		*out = def;
		return 0;
	}
	int rc = check_value(NULL, HW_PROP_DOUBLE, NULL, key, v, origin, line, err, errlen);
	return rc ? rc : parse_double(v, out);
}

int hw_props_get_enum(const hw_props *p, const char *key, const char *const *choices, int def,
		      int *out, char *err, size_t errlen)
{
	GETTER_PROLOGUE;
	if (!v) {
		*out = def;
		return 0;
	}
	if (!choices) {
		const hw_prop_def *d = find_def(p, key);
		choices = d ? d->choices : NULL;
	}
	int rc = check_value(NULL, HW_PROP_ENUM, choices, key, v, origin, line, err, errlen);
	return rc ? rc : parse_enum(v, choices, out);
}

/* ---- dump ----------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int hw_props_dump(const hw_props *p, FILE *out)
{
	size_t cap = p->ndefs + p->n, n = 0;
	const char **keys = malloc((cap ? cap : 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < p->ndefs; i++)
		if (!is_template(&p->defs[i]))
			keys[n++] = p->defs[i].name;
	for (size_t i = 0; i < p->n; i++) {
		const hw_prop_def *d = find_def(p, p->e[i].key);
		if (!d || is_template(d))
			keys[n++] = p->e[i].key;
	}
	qsort(keys, n, sizeof(*keys), cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *origin;
		int line;
		const char *v = lookup(p, keys[i], &origin, &line);
		if (fprintf(out, "\t%s = %s\n", keys[i], v ? v : "null") < 0)
			rc = -EIO;
	}
	free(keys);
	return rc;
}
