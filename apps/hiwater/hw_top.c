/* hw_top.c — samples for `hiwater top`; see hw_top.h. */
#include "hw_top.h"


#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Prometheus text ------------------------------------------------------ */

#define MAX_LABELS 8
typedef struct mline {
	const char *name;
	int n_labels;
	const char *key[MAX_LABELS], *val[MAX_LABELS];
	double value;
} mline;

/* Split `name{k="v",...} value` in place. 0, or -EINVAL (comment, blank,
 * malformed: escapes in label values are not needed by hiwater's names). */
static int parse_line(char *s, mline *m)
{
	if (!*s || *s == '#')
		return -EINVAL;
	m->name = s;
	m->n_labels = 0;
	size_t nl = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:");
	if (!nl)
		return -EINVAL;
	char *p = s + nl;
	if (*p == '{') {
		*p++ = 0;
		while (*p && *p != '}') {
			char *eq = strchr(p, '=');
			if (!eq || eq[1] != '"' || m->n_labels == MAX_LABELS)
				return -EINVAL;
			*eq = 0;
			char *v = eq + 2, *end = strchr(v, '"');
			if (!end)
				return -EINVAL;
			*end = 0;
			m->key[m->n_labels] = p;
			m->val[m->n_labels++] = v;
			p = end + 1;
			if (*p == ',')
				p++;
		}
		if (*p != '}')
			return -EINVAL;
		p++;
	}
	if (*p != ' ')
		return -EINVAL;
	*p++ = 0;
	char *e;
	m->value = strtod(p, &e);
	return e == p ? -EINVAL : 0;
}

static const char *label(const mline *m, const char *k)
{
	for (int i = 0; i < m->n_labels; i++)
		if (!strcmp(m->key[i], k))
			return m->val[i];
	return NULL;
}

const hw_top_pmetrics *hw_top_find(const hw_top_node *n, const char *topic, int partition)
{
	for (int i = 0; i < n->n_parts; i++)
		if (n->parts[i].partition == partition && !strcmp(n->parts[i].topic, topic))
			return &n->parts[i];
	return NULL;
}

/* The entry of topic/partition, created (all NaN) when new; NULL when full. */
static hw_top_pmetrics *part_of(hw_top_node *n, const mline *m)
{
	const char *t = label(m, "topic"), *p = label(m, "partition");
	if (!t || !p || strlen(t) >= HW_TOP_TOPIC_MAX)
		return NULL;
	int part = atoi(p);
	hw_top_pmetrics *pm = (hw_top_pmetrics *)hw_top_find(n, t, part);
	if (pm || n->n_parts == HW_TOP_MAX_PARTS)
		return pm;
	pm = &n->parts[n->n_parts++];
	snprintf(pm->topic, sizeof(pm->topic), "%s", t);
	pm->partition = part;
	pm->hw = pm->leo = pm->is_leader = pm->max_lag = pm->produce_requests = pm->produce_bytes = NAN;
	return pm;
}

/* Per-partition families hiwater top reads, and where each goes. */
#define TOP_PART_FIELDS(X)                                          \
	X("hiwater_partition_high_watermark", hw)                   \
	X("hiwater_partition_log_end_offset", leo)                  \
	X("hiwater_partition_is_leader", is_leader)                 \
	X("hiwater_partition_follower_max_lag_offsets", max_lag)    \
	X("hiwater_partition_produce_requests_total", produce_requests) \
	X("hiwater_partition_produce_bytes_total", produce_bytes)

static int use_line(const mline *m, hw_top_node *n)
{
#define TOP_PART_FIELD(fam, field)                     \
	if (!strcmp(m->name, fam)) {                   \
		hw_top_pmetrics *pm = part_of(n, m);   \
		if (pm)                                \
			pm->field = m->value;          \
		return pm != NULL;                     \
	}
	TOP_PART_FIELDS(TOP_PART_FIELD)
#undef TOP_PART_FIELD
	if (!strcmp(m->name, "hiwater_under_replicated_partitions"))
		return n->under_replicated = m->value, 1;
	if (!strcmp(m->name, "hiwater_under_min_isr_partitions"))
		return n->under_min_isr = m->value, 1;
	if (!strcmp(m->name, "hiwater_leader_partitions"))
		return n->leaders = m->value, 1;
	if (!strcmp(m->name, "hiwater_produce_requests_total"))
		return n->produce_requests = m->value, 1;
	if (!strcmp(m->name, "hiwater_request_total_time_seconds_bucket")) {
		const char *rq = label(m, "request"), *acks = label(m, "acks"), *le = label(m, "le");
		if (!rq || !acks || !le || strcmp(rq, "Produce") || strcmp(acks, "all") ||
		    n->n_le == HW_TOP_MAX_LE)
			return 0;
		double bound = !strcmp(le, "+Inf") ? INFINITY : strtod(le, NULL);
		if (n->n_le && !(bound > n->le[n->n_le - 1]))
			return 0; /* not ascending: ignore rather than misread */
		n->le[n->n_le] = bound;
		n->bucket[n->n_le++] = m->value;
		return 1;
	}
	return 0;
}

int hw_top_parse_metrics(char *text, hw_top_node *n)
{
	int used = 0;
	n->under_replicated = n->under_min_isr = n->leaders = n->produce_requests = NAN;
	for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		mline m;
		if (!parse_line(line, &m))
			used += use_line(&m, n);
	}
	return used;
}

double hw_top_quantile(double q, const hw_top_node *cur, const hw_top_node *prev)
{
	int nb = cur->n_le;
	if (nb < 2 || prev->n_le != nb || !isinf(cur->le[nb - 1]))
		return NAN;
	double d[HW_TOP_MAX_LE];
	for (int i = 0; i < nb; i++) {
		if (cur->le[i] != prev->le[i])
			return NAN;
		d[i] = cur->bucket[i] - prev->bucket[i];
	}
	double total = d[nb - 1];
	if (!(total > 0))
		return NAN;
	double rank = q * total;
	int i = 0;
	while (i < nb - 1 && d[i] < rank)
		i++;
	if (i == nb - 1)
		return cur->le[nb - 2]; /* in +Inf: the highest finite bound, like Prometheus */
	if (i == 0 && cur->le[0] <= 0)
		return cur->le[0]; /* nothing to interpolate from (Prometheus does the same) */
	double lo = i ? cur->le[i - 1] : 0, below = i ? d[i - 1] : 0;
	double in = d[i] - below;
	if (in <= 0)
		return cur->le[i];
	return lo + (cur->le[i] - lo) * (rank - below) / in;
}
