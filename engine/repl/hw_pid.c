/* hw_pid.c — idempotent producer state (docs/replication.md#idempotent-producer;
 * Kafka ProducerStateEntry /
 * ProducerAppendInfo).
 *
 * Design note. Per producer id the partition remembers the producer epoch
 * and the last 5 batches (first/last sequence, first/last offset). A client
 * batch is checked before anything is written: the exact (first, last)
 * sequence of a remembered batch under the same epoch is a retry — the
 * original offsets are returned and nothing is appended, no error; a lower
 * epoch is INVALID_PRODUCER_EPOCH; a new epoch must start at sequence 0 and
 * the same epoch must continue at last + 1 (INT32_MAX wraps to 0), else
 * OUT_OF_ORDER_SEQUENCE_NUMBER; an unknown producer may start anywhere.
 * Every appended batch (leader and follower alike, so a new leader already
 * knows the producers) updates the state; on restart and after truncation
 * it is rebuilt by scanning the log — Kafka's snapshot files are an
 * optimisation of the same scan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_repl_int.h"

void hw_pidmap_init(hw_pidmap *m) { memset(m, 0, sizeof(*m)); }

void hw_pidmap_free(hw_pidmap *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

void hw_pidmap_clear(hw_pidmap *m)
{
	for (uint32_t i = 0; i < m->cap; i++)
		m->e[i].pid = -1;
	m->n = 0;
}

static uint32_t pid_hash(int64_t pid)
{
	uint64_t x = (uint64_t)pid * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(x >> 32);
}

static hw_pid_entry *lookup(const hw_pidmap *m, int64_t pid)
{
	if (!m->cap)
		return NULL;
	for (uint32_t i = pid_hash(pid) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->e[i].pid == pid)
			return &m->e[i];
		if (m->e[i].pid == -1)
			return NULL;
	}
}

static int grow(hw_pidmap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 16;
	hw_pid_entry *e = malloc(cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		e[i].pid = -1;
	for (uint32_t i = 0; i < m->cap; i++) {
		if (m->e[i].pid == -1)
			continue;
		uint32_t j = pid_hash(m->e[i].pid) & (cap - 1);
		while (e[j].pid != -1)
			j = (j + 1) & (cap - 1);
		e[j] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
	return 0;
}

static int32_t seq_next(int32_t s) { return s == INT32_MAX ? 0 : s + 1; }

int hw_pidmap_check(const hw_pidmap *m, int64_t pid, int16_t epoch, int32_t first_seq,
		    int32_t last_seq, hw_pid_batch *dup)
{
	const hw_pid_entry *e = lookup(m, pid);
	if (!e || e->n == 0)
		return HW_PID_NEW;
	if (epoch < e->epoch)
		return HW_PID_INVALID_EPOCH;
	if (epoch > e->epoch)
		return first_seq == 0 ? HW_PID_NEW : HW_PID_OUT_OF_ORDER;
	for (int i = 0; i < e->n; i++) {
		const hw_pid_batch *b = &e->b[(e->head + i) % HW_PID_CACHED_BATCHES];
		if (b->first_seq == first_seq && b->last_seq == last_seq) {
			if (dup)
				*dup = *b;
			return HW_PID_DUPLICATE;
		}
	}
	const hw_pid_batch *last = &e->b[(e->head + e->n - 1) % HW_PID_CACHED_BATCHES];
	return first_seq == seq_next(last->last_seq) ? HW_PID_NEW : HW_PID_OUT_OF_ORDER;
}

int hw_pidmap_update(hw_pidmap *m, int64_t pid, int16_t epoch, int32_t first_seq,
		     int32_t last_seq, int64_t first_off, int64_t last_off)
{
	hw_pid_entry *e = lookup(m, pid);
	if (!e) {
		if ((m->n + 1) * 2 > m->cap && grow(m))
			return -ENOMEM;
		uint32_t i = pid_hash(pid) & (m->cap - 1);
		while (m->e[i].pid != -1)
			i = (i + 1) & (m->cap - 1);
		e = &m->e[i];
		memset(e, 0, sizeof(*e));
		e->pid = pid;
		e->epoch = epoch;
		m->n++;
	}
	if (epoch != e->epoch) {
		e->epoch = epoch;
		e->n = 0;
		e->head = 0;
	}
	hw_pid_batch nb = { first_seq, last_seq, first_off, last_off };
	if (e->n < HW_PID_CACHED_BATCHES) {
		e->b[(e->head + e->n) % HW_PID_CACHED_BATCHES] = nb;
		e->n++;
	} else {
		e->b[e->head] = nb;
		e->head = (uint8_t)((e->head + 1) % HW_PID_CACHED_BATCHES);
	}
	return 0;
}

void hw_pidmap_apply_batches(hw_pidmap *m, const uint8_t *buf, size_t len)
{
	hw_batch_iter it;
	hw_batch_hdr h;
	hw_batch_iter_init(&it, buf, len, 0);
	while (hw_batch_iter_next(&it, &h, NULL) == 1) {
		if (h.producer_id < 0 || h.base_sequence < 0)
			continue;
		(void)hw_pidmap_update(m, h.producer_id, h.producer_epoch, h.base_sequence,
				       hw_batch_last_sequence(&h), h.base_offset,
				       hw_batch_last_offset(&h));
	}
}

int hw_pidmap_rebuild(hw_pidmap *m, hw_store *s)
{
	hw_pidmap_clear(m);
	int64_t off = s->ops->log_start_offset(s);
	int64_t leo = s->ops->log_end_offset(s);
	while (off < leo) {
		hw_store_read r;
		int rc = s->ops->read(s, off, 1 << 20, INT64_MAX, &r);
		if (rc < 0)
			return rc;
		if (r.len == 0 || r.next_offset <= off)
			break;
		hw_pidmap_apply_batches(m, r.data, r.len);
		off = r.next_offset;
		if (r.ref && s->ops->release)
			s->ops->release(s, r.ref);
	}
	return 0;
}
