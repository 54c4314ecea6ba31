#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "hw_memstore.h"
#include "hw_batch.h"
#include "hw_assert.h"

typedef struct ms_batch {
	int64_t base, last;
	int32_t epoch;
	size_t pos;
	uint32_t size;
} ms_batch;

typedef struct memstore {
	hw_store s;               /* must be first */
	int persistent;
	int fail_appends;
	int failed;               /* hw_memstore_fail_writes: a dead disk */
	uint8_t *buf;
	size_t len, cap;
	ms_batch *b;
	size_t nb, capb;
	int64_t start, leo;
	hw_epoch_cache epochs;
	int64_t durable_hold;     /* >= 0: durable end frozen here (test knob) */
} memstore;

static memstore *MS(hw_store *s) { return (memstore *)s; }

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *n = realloc(*p, c * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

static int ms_append(hw_store *s, const uint8_t *batches, size_t len)
{
	memstore *m = MS(s);
	if (m->fail_appends > 0) {
		m->fail_appends--;
		return -EIO;
	}
	if (len == 0)
		return 0;
	/* validate everything first: a failed append leaves the store unchanged */
	size_t n = 0;
	int64_t next = m->leo;
	hw_batch_hdr h;
	hw_batch_iter it;
	int rc;
	hw_batch_iter_init(&it, batches, len, 0);
	while ((rc = hw_batch_iter_next(&it, &h, NULL)) == 1) {
		if (h.magic != HW_BATCH_MAGIC || h.base_offset != next || h.last_offset_delta < 0)
			return -EINVAL;
		next = hw_batch_next_offset(&h);
		n++;
	}
	if (rc < 0 || hw_batch_iter_rest_bytes(&it) != 0)
		return -EINVAL;
	if (grow((void **)&m->buf, &m->cap, m->len + len, 1) ||
	    grow((void **)&m->b, &m->capb, m->nb + n, sizeof(ms_batch)))
		return -ENOMEM;
	memcpy(m->buf + m->len, batches, len);
	const uint8_t *bp;
	hw_batch_iter_init(&it, batches, len, 0);
	while (hw_batch_iter_next(&it, &h, &bp) == 1) {
		ms_batch *e = &m->b[m->nb++];
		e->base = h.base_offset;
		e->last = hw_batch_last_offset(&h);
		e->epoch = h.partition_leader_epoch;
		e->pos = m->len + (size_t)(bp - batches);
		e->size = h.size;
		/* -ENOMEM here only loses a cache entry; the data is in */
		(void)hw_epoch_assign(&m->epochs, h.partition_leader_epoch, h.base_offset);
	}
	m->len += len;
	m->leo = next;
	return 0;
}

/* index of the first batch with last >= off, or nb */
static size_t find_batch(memstore *m, int64_t off)
{
	size_t lo = 0, hi = m->nb;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->b[mid].last < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int ms_read(hw_store *s, int64_t start, size_t max_bytes, int64_t max_offset,
		   hw_store_read *out)
{
	memstore *m = MS(s);
	memset(out, 0, sizeof(*out));
	out->first_offset = -1;
	out->next_offset = start;
	if (start < m->start || start > m->leo)
		return -ERANGE;
	size_t i = find_batch(m, start);
	size_t bytes = 0;
	size_t first = i;
	for (; i < m->nb; i++) {
		const ms_batch *e = &m->b[i];
		if (e->last >= max_offset)
			break;
		if (i > first && bytes + e->size > max_bytes)
			break;
		bytes += e->size;
		out->next_offset = e->last + 1;
	}
	if (bytes) {
		out->data = m->buf + m->b[first].pos;
		out->len = bytes;
		out->first_offset = m->b[first].base;
	}
	return 0;
}

static int ms_truncate_to(hw_store *s, int64_t off)
{
	memstore *m = MS(s);
	if (off >= m->leo) {
		/* as Kafka's UnifiedLog.truncateTo: drop epoch entries past the log
		 * end (an epoch assigned by a leader that never appended in it) */
		hw_epoch_truncate_from_end(&m->epochs, m->leo);
		return 0;
	}
	if (off < m->start)
		off = m->start;
	/* keep batches whose last < off; a batch straddling off is dropped whole
	 * (Kafka truncates to batch boundaries too) */
	size_t i = find_batch(m, off);
	if (i < m->nb && m->b[i].base < off)
		off = m->b[i].base;
	m->nb = i;
	m->len = i ? m->b[i - 1].pos + m->b[i - 1].size : 0;
	m->leo = i ? m->b[i - 1].last + 1 : m->start;
	hw_epoch_truncate_from_end(&m->epochs, m->leo);
	return 0;
}

static int ms_truncate_fully(hw_store *s, int64_t off)
{
	memstore *m = MS(s);
	if (off < 0)
		return -EINVAL;
	m->nb = 0;
	m->len = 0;
	m->start = m->leo = off;
	m->epochs.n = 0;
	return 0;
}

static int64_t ms_leo(hw_store *s) { return MS(s)->leo; }
static int64_t ms_durable(hw_store *s)
{
	memstore *m = MS(s);
	return m->durable_hold >= 0 && m->durable_hold < m->leo ? m->durable_hold : m->leo;
}
static int64_t ms_start(hw_store *s) { return MS(s)->start; }
static const hw_epoch_cache *ms_epochs(hw_store *s) { return &MS(s)->epochs; }
static int ms_assign_epoch(hw_store *s, int32_t e, int64_t o)
{
	int rc = hw_epoch_assign(&MS(s)->epochs, e, o);
	return rc < 0 ? rc : 0;
}
static int ms_poll(hw_store *s)
{
	return MS(s)->failed ? -EIO : 0;
}

static void ms_destroy(memstore *m)
{
	free(m->buf);
	free(m->b);
	hw_epoch_free(&m->epochs);
	free(m);
}

static void ms_close(hw_store *s)
{
	if (!MS(s)->persistent)
		ms_destroy(MS(s));
}

static const hw_store_ops ms_ops = {
	.append = ms_append,
	.read = ms_read,
	.release = NULL,
	.truncate_to = ms_truncate_to,
	.truncate_fully_and_start_at = ms_truncate_fully,
	.log_end_offset = ms_leo,
	.log_start_offset = ms_start,
	.durable_end_offset = ms_durable,
	.epochs = ms_epochs,
	.assign_epoch = ms_assign_epoch,
	.poll = ms_poll,
	.close = ms_close,
};

int hw_memstore_create(int persistent, hw_store **out)
{
	memstore *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->s.ops = &ms_ops;
	m->persistent = persistent;
	m->durable_hold = -1;
	hw_epoch_init(&m->epochs);
	*out = &m->s;
	return 0;
}

void hw_memstore_free(hw_store *s)
{
	if (s)
		ms_destroy(MS(s));
}

/* The test knobs' store: a memstore, or the process aborts — a knob
 * applied to another store (the io_uring log of a harness run with
 * HX_STORE=log) would write into a structure that is not a memstore. */
static memstore *KNOB(hw_store *s)
{
	HW_ASSERT(s && s->ops == &ms_ops);
	return MS(s);
}

void hw_memstore_fail_appends(hw_store *s, int n) { KNOB(s)->fail_appends = n; }
void hw_memstore_fail_writes(hw_store *s)
{
	memstore *m = KNOB(s);
	m->failed = 1;
	m->fail_appends = INT_MAX;
	if (m->durable_hold < 0)
		m->durable_hold = m->leo;
}
void hw_memstore_hold_durable(hw_store *s, int hold)
{
	memstore *m = KNOB(s);
	m->durable_hold = hold ? m->leo : -1;
}
size_t hw_memstore_batch_count(hw_store *s) { return KNOB(s)->nb; }

int hw_memstore_corrupt_batch(hw_store *s, size_t i)
{
	memstore *m = KNOB(s);
	if (i >= m->nb)
		return -ENOENT;
	m->buf[m->b[i].pos + m->b[i].size - 1] ^= 0x5a;   /* a record byte: the CRC no longer matches */
	return 0;
}
