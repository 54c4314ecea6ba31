#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "hw_logging.h"

#define MAX_MODS 32
static struct {
	int def;
	int n;
	char mod[MAX_MODS][24];
	int lvl[MAX_MODS];
	char prefix[32];
	int inited;
} L = { .def = HW_LVL_INFO };
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *names[] = {
#define N(n) #n,
	HW_LOG_LEVELS(N)
#undef N
};

const char *hw_log_level_name(int lvl)
{
	return (lvl >= 0 && lvl < (int)(sizeof(names) / sizeof(names[0]))) ? names[lvl] : "?";
}

static int parse_level(const char *s, size_t n)
{
	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strlen(names[i]) == n && strncasecmp(names[i], s, n) == 0)
			return i;
	return -1;
}

/* A parsed spec: the default level and per-module levels. */
typedef struct log_spec {
	int def, n;
	char mod[MAX_MODS][24];
	int lvl[MAX_MODS];
} log_spec;

static int parse_spec(const char *spec, log_spec *out)
{
	out->def = L.def;
	out->n = 0;
	const char *p = spec;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (!eq) {
			int l = parse_level(p, len);
			if (l < 0)
				return -EINVAL;
			out->def = l;
		} else {
			size_t ml = (size_t)(eq - p);
			int l = parse_level(eq + 1, len - ml - 1);
			if (l < 0 || ml == 0 || ml >= sizeof(out->mod[0]) || out->n == MAX_MODS)
				return -EINVAL;
			memcpy(out->mod[out->n], p, ml);
			out->mod[out->n][ml] = 0;
			out->lvl[out->n++] = l;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

int hw_logging_spec_check(const char *spec)
{
	log_spec s;
	return parse_spec(spec, &s);
}

int hw_logging_configure(const char *spec)
{
	log_spec s;
	if (parse_spec(spec, &s))
		return -EINVAL;
	L.def = s.def;
	L.n = s.n;
	memcpy(L.mod, s.mod, sizeof(s.mod));
	memcpy(L.lvl, s.lvl, sizeof(s.lvl));
	return 0;
}

static void init_env(void)
{
	const char *e = getenv("HW_LOG");
	if (e && hw_logging_configure(e) != 0)
		fprintf(stderr, "hiwater: ignoring malformed HW_LOG=%s\n", e);
}

int hw_logging_enabled(int lvl, const char *module)
{
	pthread_once(&once, init_env);
	for (int i = 0; i < L.n; i++)
		if (strcmp(L.mod[i], module) == 0)
			return lvl <= L.lvl[i];
	return lvl <= L.def;
}

void hw_logging_set_prefix(const char *prefix)
{
	snprintf(L.prefix, sizeof(L.prefix), "%s", prefix ? prefix : "");
}

void hw_vlogf(int lvl, const char *module, const char *fmt, va_list ap)
{
	char buf[1024];
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int n = snprintf(buf, sizeof(buf), "%lld.%03ld %s%s%-5s %s: ", (long long)ts.tv_sec,
			 ts.tv_nsec / 1000000, L.prefix, L.prefix[0] ? " " : "",
			 hw_log_level_name(lvl), module);
	if (n < 0)
		return;
	if (n < (int)sizeof(buf) - 1) {
		int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
		if (m > 0)
			n += m < (int)(sizeof(buf) - (size_t)n - 1) ? m : (int)(sizeof(buf) - (size_t)n - 2);
	}
	buf[n++] = '\n';
	ssize_t w = write(2, buf, (size_t)n);
	(void)w;
}

void hw_logf(int lvl, const char *module, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hw_vlogf(lvl, module, fmt, ap);
	va_end(ap);
}
