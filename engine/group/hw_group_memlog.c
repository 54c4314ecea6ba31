/* hw_group_memlog.c — in-memory hw_glog (see hw_group_memlog.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_batch.h"
#include "hw_group_memlog.h"

typedef struct mpart {
	uint8_t *buf;
	size_t len, cap;
	int64_t next_offset;
	int gone;
} mpart;

typedef struct held {
	int32_t p;
	uint8_t *batch;
	size_t len;
	hw_glog_done_fn done;
	void *ctx;
	struct held *next;
} held;

struct hw_gmemlog {
	hw_glog log; /* first: hw_glog * <-> hw_gmemlog * */
	int32_t nparts;
	mpart *parts;
	int hold;
	held *head, **tail;
	int fail_n, fail_err;
};

/* Store a validated batch at the end of p, stamping its base offset. */
static int store(hw_gmemlog *m, int32_t p, const uint8_t *b, size_t len, int64_t *base)
{
	mpart *mp = &m->parts[p];
	if (mp->len + len > mp->cap) {
		size_t nc = mp->cap ? mp->cap : 4096;
		while (nc < mp->len + len) nc *= 2;
		uint8_t *nb = realloc(mp->buf, nc);
		if (!nb) return -ENOMEM;
		mp->buf = nb; mp->cap = nc;
	}
	memcpy(mp->buf + mp->len, b, len);
	hw_batch_set_base_offset(mp->buf + mp->len, mp->next_offset);
	*base = mp->next_offset;
	mp->next_offset += hw_batch_raw_last_offset_delta(b) + 1;
	mp->len += len;
	return 0;
}

static int ml_append(hw_glog *l, int32_t p, const void *batch, size_t len, hw_glog_done_fn done, void *ctx)
{
	hw_gmemlog *m = (hw_gmemlog *)l;
	if (p < 0 || p >= m->nparts || m->parts[p].gone) return -ENOENT;
	hw_batch_hdr h;
	if (hw_batch_validate(batch, len, &h, HW_BATCH_V_CRC) != 0 || (size_t)hw_batch_raw_length(batch) + 12 != len)
		return -EINVAL;
	if (m->fail_n > 0) {
		m->fail_n--;
		done(ctx, m->fail_err, -1);
		return 0;
	}
	if (m->hold) {
		held *e = calloc(1, sizeof *e);
		if (!e) return -ENOMEM;
		e->batch = malloc(len);
		if (!e->batch) { free(e); return -ENOMEM; }
		memcpy(e->batch, batch, len);
		e->p = p; e->len = len; e->done = done; e->ctx = ctx;
		*m->tail = e;
		m->tail = &e->next;
		return 0;
	}
	int64_t base;
	int rc = store(m, p, batch, len, &base);
	if (rc) return rc;
	done(ctx, HW_ERR_NONE, base);
	return 0;
}

static ssize_t ml_read(hw_glog *l, int32_t p, int64_t offset, void *buf, size_t cap, size_t *need)
{
	hw_gmemlog *m = (hw_gmemlog *)l;
	if (need) *need = 0;
	if (p < 0 || p >= m->nparts || m->parts[p].gone) return -ENOENT;
	mpart *mp = &m->parts[p];
	size_t pos = 0, out = 0;
	while (pos < mp->len) {
		const uint8_t *b = mp->buf + pos;
		size_t blen = (size_t)hw_batch_raw_length(b) + 12;
		int64_t last = hw_batch_raw_base_offset(b) + hw_batch_raw_last_offset_delta(b);
		if (last >= offset) {
			if (out + blen > cap) {
				if (out == 0 && need) *need = blen;
				break;
			}
			memcpy((uint8_t *)buf + out, b, blen);
			out += blen;
		}
		pos += blen;
	}
	return (ssize_t)out;
}

int hw_gmemlog_create(int32_t nparts, hw_gmemlog **out)
{
	if (nparts < 1) return -EINVAL;
	hw_gmemlog *m = calloc(1, sizeof *m);
	if (!m) return -ENOMEM;
	m->parts = calloc((size_t)nparts, sizeof *m->parts);
	if (!m->parts) { free(m); return -ENOMEM; }
	m->nparts = nparts;
	m->log.append = ml_append;
	m->log.read = ml_read;
	m->tail = &m->head;
	*out = m;
	return 0;
}

void hw_gmemlog_free(hw_gmemlog *m)
{
	if (!m) return;
	while (m->head) {
		held *e = m->head;
		m->head = e->next;
		free(e->batch);
		free(e);
	}
	for (int32_t i = 0; i < m->nparts; i++) free(m->parts[i].buf);
	free(m->parts);
	free(m);
}

hw_glog *hw_gmemlog_log(hw_gmemlog *m) { return &m->log; }
void hw_gmemlog_hold(hw_gmemlog *m, int hold) { m->hold = hold; }
void hw_gmemlog_fail_next(hw_gmemlog *m, int n, int err) { m->fail_n = n; m->fail_err = err; }
void hw_gmemlog_set_gone(hw_gmemlog *m, int32_t p, int gone) { if (p >= 0 && p < m->nparts) m->parts[p].gone = gone; }
int64_t hw_gmemlog_end_offset(hw_gmemlog *m, int32_t p) { return p >= 0 && p < m->nparts ? m->parts[p].next_offset : -1; }

int hw_gmemlog_release(hw_gmemlog *m, int err)
{
	int n = 0;
	while (m->head) {
		held *e = m->head;
		m->head = e->next;
		if (!m->head) m->tail = &m->head;
		int64_t base = -1;
		int e_err = err;
		if (e_err == HW_ERR_NONE && store(m, e->p, e->batch, e->len, &base) != 0)
			e_err = HW_ERR_KAFKA_STORAGE_ERROR;
		free(e->batch);
		e->done(e->ctx, e_err, base);
		free(e);
		n++;
	}
	return n;
}
