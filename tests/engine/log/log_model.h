/* log_model.h — what the tests expect a log to hold: every appended batch,
 * in order, with its bytes; and the checks that compare a log against it. */
#ifndef LOG_MODEL_H
#define LOG_MODEL_H
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>
#include "hw_log.h"
#include "log_testutil.h"

typedef struct tm_batch {
	int64_t base, last;
	size_t pos;
	uint32_t size;
	int32_t epoch;
} tm_batch;

typedef struct tmodel {
	uint8_t *buf;
	size_t len, cap;
	tm_batch *b;
	size_t n, bcap;
	int64_t start; /* first offset the log should still have */
} tmodel;

static inline void tm_free(tmodel *m) { free(m->buf); free(m->b); memset(m, 0, sizeof(*m)); }

static inline int64_t tm_leo(const tmodel *m) { return m->n ? m->b[m->n - 1].last + 1 : m->start; }

/* Build one batch at the model's LEO and record it; returns a pointer into
 * the model (valid until the next tm_add). */
static inline const uint8_t *tm_add(tmodel *m, int32_t epoch, int count, size_t vlen, int64_t ts, size_t *size)
{
	size_t need = tu_batch_size(count, vlen);
	if (m->len + need > m->cap) {
		m->cap = (m->len + need) * 2;
		m->buf = realloc(m->buf, m->cap);
		assert_non_null(m->buf);
	}
	if (m->n == m->bcap) {
		m->bcap = m->bcap ? m->bcap * 2 : 64;
		m->b = realloc(m->b, m->bcap * sizeof(*m->b));
		assert_non_null(m->b);
	}
	int64_t base = tm_leo(m);
	size_t sz = tu_batch(m->buf + m->len, m->cap - m->len, base, epoch, count, vlen, ts);
	assert_int_equal(sz, need);
	m->b[m->n] = (tm_batch){ base, base + count - 1, m->len, (uint32_t)sz, epoch };
	m->n++;
	m->len += sz;
	*size = sz;
	return m->buf + m->len - sz;
}

/* Drop batches at/after the one containing `offset`. */
static inline void tm_truncate(tmodel *m, int64_t offset)
{
	while (m->n && m->b[m->n - 1].last >= offset)
		m->n--;
	m->len = m->n ? m->b[m->n - 1].pos + m->b[m->n - 1].size : 0;
}

static inline size_t tm_find(const tmodel *m, int64_t offset)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->b[i].last >= offset)
			return i;
	return m->n;
}

/* Read at `offset` and check the result is whole batches starting with the
 * one containing it, matching the model byte for byte. */
static inline void tm_check_read(hw_log *log, const tmodel *m, int64_t offset, size_t max_bytes)
{
	hw_store_read r;
	int rc = hw_log_read(log, offset, max_bytes, INT64_MAX, &r);
	assert_int_equal(rc, 0);
	if (offset == tm_leo(m)) {
		assert_int_equal(r.len, 0);
		return;
	}
	size_t i = tm_find(m, offset);
	assert_true(i < m->n);
	if (r.len == 0) printf("# empty read at %lld (leo %lld)\n", (long long)offset, (long long)tm_leo(m));
	assert_true(r.len > 0);
	assert_non_null(r.ref);
	assert_int_equal(r.first_offset, m->b[i].base);
	/* whole batches, at least one, at most max_bytes unless just one */
	size_t j = i, sum = 0;
	while (j < m->n && sum < r.len)
		sum += m->b[j++].size;
	assert_int_equal(sum, r.len);
	assert_true(j - i == 1 || r.len <= max_bytes);
	assert_int_equal(r.next_offset, m->b[j - 1].last + 1);
	assert_memory_equal(r.data, m->buf + m->b[i].pos, r.len);
	hw_log_ref_release(r.ref);
}

static inline void tm_check_all(hw_log *log, const tmodel *m, size_t max_bytes)
{
	assert_int_equal(hw_log_end_offset(log), tm_leo(m));
	for (int64_t o = m->start; o <= tm_leo(m); o++)
		tm_check_read(log, m, o, max_bytes);
}

#endif
