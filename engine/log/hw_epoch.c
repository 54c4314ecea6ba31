#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hw_epoch.h"
#include "hw_file.h"

void hw_epoch_init(hw_epoch_cache *c) { memset(c, 0, sizeof(*c)); }

void hw_epoch_free(hw_epoch_cache *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int push(hw_epoch_cache *c, int32_t e, int64_t o)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		hw_epoch_entry *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].epoch = e;
	c->v[c->n].start_offset = o;
	c->n++;
	return 0;
}

int hw_epoch_assign(hw_epoch_cache *c, int32_t epoch, int64_t start_offset)
{
	if (epoch < 0 || start_offset < 0)
		return 0;
	if (c->n) {
		/* Kafka's isUpdateNeeded: a different epoch, or a start below
		 * the latest one. (An older epoch at/after the latest start does
		 * replace the latest entry, as in LeaderEpochFileCache.) */
		const hw_epoch_entry *last = &c->v[c->n - 1];
		if (epoch == last->epoch && start_offset >= last->start_offset)
			return 0; /* same epoch, later batch: nothing new */
	}
	while (c->n && (c->v[c->n - 1].epoch >= epoch || c->v[c->n - 1].start_offset >= start_offset))
		c->n--;
	int rc = push(c, epoch, start_offset);
	return rc ? rc : 1;
}

void hw_epoch_truncate_from_end(hw_epoch_cache *c, int64_t end_offset)
{
	while (c->n && c->v[c->n - 1].start_offset >= end_offset)
		c->n--;
}

void hw_epoch_truncate_from_start(hw_epoch_cache *c, int64_t start_offset)
{
	size_t i = 0;
	while (i < c->n && c->v[i].start_offset <= start_offset)
		i++;
	if (i == 0)
		return;
	hw_epoch_entry last = c->v[i - 1];
	last.start_offset = start_offset;
	memmove(&c->v[1], &c->v[i], (c->n - i) * sizeof(*c->v));
	c->n = c->n - i + 1;
	c->v[0] = last;
}

int32_t hw_epoch_latest(const hw_epoch_cache *c) { return c->n ? c->v[c->n - 1].epoch : -1; }

int64_t hw_epoch_latest_start(const hw_epoch_cache *c)
{
	return c->n ? c->v[c->n - 1].start_offset : -1;
}

int32_t hw_epoch_floor(const hw_epoch_cache *c, int32_t e)
{
	for (size_t i = c->n; i-- > 0;)
		if (c->v[i].epoch <= e)
			return c->v[i].epoch;
	return -1;
}

void hw_epoch_end_offset_for(const hw_epoch_cache *c, int32_t requested, int64_t leo,
			     int32_t *out_epoch, int64_t *out_end_offset)
{
	*out_epoch = -1;
	*out_end_offset = -1;
	if (requested < 0 || c->n == 0)
		return;
	if (requested == c->v[c->n - 1].epoch) {
		*out_epoch = requested;
		*out_end_offset = leo;
		return;
	}
	/* first entry with epoch > requested */
	size_t hi = 0;
	while (hi < c->n && c->v[hi].epoch <= requested)
		hi++;
	if (hi == c->n)
		return; /* requested is above everything we know */
	if (hi == 0) {
		*out_epoch = requested;
		*out_end_offset = c->v[0].start_offset;
		return;
	}
	*out_epoch = c->v[hi - 1].epoch;
	*out_end_offset = c->v[hi].start_offset;
}

int hw_epoch_write_checkpoint(const hw_epoch_cache *c, const char *path)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return -ENOMEM;
	fprintf(f, "0\n%zu\n", c->n);
	for (size_t i = 0; i < c->n; i++)
		fprintf(f, "%" PRId32 " %" PRId64 "\n", c->v[i].epoch, c->v[i].start_offset);
	int rc = fclose(f) != 0 ? -ENOMEM : hw_file_replace(path, buf, n, 1);
	free(buf);
	return rc;
}

int hw_epoch_read_checkpoint(hw_epoch_cache *c, const char *path)
{
	c->n = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int version;
	long long count;
	int rc = 0;
	if (fscanf(f, "%d %lld", &version, &count) != 2 || version != 0 || count < 0 || count > 1000000) {
		rc = -EBADMSG;
		goto out;
	}
	for (long long i = 0; i < count; i++) {
		long long e, o;
		if (fscanf(f, "%lld %lld", &e, &o) != 2 || e < 0 || e > INT32_MAX || o < 0 ||
		    (c->n && (e <= c->v[c->n - 1].epoch || o < c->v[c->n - 1].start_offset))) {
			rc = -EBADMSG;
			goto out;
		}
		if ((rc = push(c, (int32_t)e, o)) != 0)
			goto out;
	}
out:
	fclose(f);
	if (rc)
		c->n = 0;
	return rc;
}
