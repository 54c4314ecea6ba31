/* hw_wire_io.h — internal to engine/proto: the bounds-checked big-endian
 * writer and reader the codecs are built from, on lib/bytes/hw_bytes.h
 * (its bounds check and byte order; this adds the frame limit, gather
 * iovecs, drop reasons and the decode arena).
 *
 * The writer appends to a header buffer; record blobs are either copied in
 * (flat mode) or referenced by an iovec entry (gather mode). Every put
 * checks both the buffer capacity and the frame limit; the first failure
 * latches `err` and later puts are no-ops, so codecs check once at the end.
 *
 * The reader never reads past `len`; the first failure latches `why` and
 * later gets return zeros, so decoders check once per message (plus before
 * trusting any count).
 */
#ifndef HW_WIRE_IO_H
#define HW_WIRE_IO_H
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "hw_bytes.h"
#include "hw_wire.h"

typedef struct hw_wr {
	uint8_t *buf;
	size_t cap;
	size_t pos;            /* bytes used in buf */
	size_t seg_start;      /* first byte of buf not yet covered by an iov */
	size_t total;          /* frame bytes so far (buf + referenced) */
	size_t max;            /* frame limit */
	struct iovec *iov;     /* NULL: flat mode */
	int iov_cap;
	int n_iov;
	uint8_t *rec_iov;
	int err;               /* 0 or negative errno, latched */
} hw_wr;

static inline int hw_wr_room(hw_wr *w, size_t n)
{
	if (w->err)
		return 0;
	if (w->total + n > w->max || w->pos + n > w->cap) {
		w->err = -EMSGSIZE;
		return 0;
	}
	return 1;
}

static inline void hw_wr_bytes(hw_wr *w, const void *p, size_t n)
{
	if (!hw_wr_room(w, n))
		return;
	if (n)
		memcpy(w->buf + w->pos, p, n);
	w->pos += n;
	w->total += n;
}

static inline void hw_wr_u8(hw_wr *w, uint8_t v) { hw_wr_bytes(w, &v, 1); }
static inline void hw_wr_u16(hw_wr *w, uint16_t v)
{
	uint8_t b[2];
	hw_be16_put(b, v);
	hw_wr_bytes(w, b, 2);
}
static inline void hw_wr_u32(hw_wr *w, uint32_t v)
{
	uint8_t b[4];
	hw_be32_put(b, v);
	hw_wr_bytes(w, b, 4);
}
static inline void hw_wr_u64(hw_wr *w, uint64_t v)
{
	uint8_t b[8];
	hw_be64_put(b, v);
	hw_wr_bytes(w, b, 8);
}
#define hw_wr_i16(w, v) hw_wr_u16((w), (uint16_t)(int16_t)(v))
#define hw_wr_i32(w, v) hw_wr_u32((w), (uint32_t)(int32_t)(v))
#define hw_wr_i64(w, v) hw_wr_u64((w), (uint64_t)(int64_t)(v))

/* Close the current buf segment into an iov entry (gather mode). */
static inline void hw_wr_flush_seg(hw_wr *w)
{
	if (!w->iov || w->err || w->pos == w->seg_start)
		return;
	if (w->n_iov >= w->iov_cap) {
		w->err = -EMSGSIZE;
		return;
	}
	w->iov[w->n_iov].iov_base = w->buf + w->seg_start;
	w->iov[w->n_iov].iov_len = w->pos - w->seg_start;
	if (w->rec_iov)
		w->rec_iov[w->n_iov] = 0;
	w->n_iov++;
	w->seg_start = w->pos;
}

/* Record bytes: copied (flat) or referenced (gather). */
static inline void hw_wr_records(hw_wr *w, const uint8_t *p, uint32_t n)
{
	hw_wr_u32(w, n);
	if (!n || w->err)
		return;
	if (!w->iov) {
		hw_wr_bytes(w, p, n);
		return;
	}
	if (w->total + n > w->max) {
		w->err = -EMSGSIZE;
		return;
	}
	hw_wr_flush_seg(w);
	if (w->err)
		return;
	if (w->n_iov >= w->iov_cap) {
		w->err = -EMSGSIZE;
		return;
	}
	w->iov[w->n_iov].iov_base = (void *)(uintptr_t)p;
	w->iov[w->n_iov].iov_len = n;
	if (w->rec_iov)
		w->rec_iov[w->n_iov] = 1;
	w->n_iov++;
	w->total += n;
}

/* A NUL-terminated string from a fixed array of `max` bytes. */
static inline void hw_wr_str(hw_wr *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	if (n >= max) {          /* not NUL-terminated inside its array */
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	hw_wr_u16(w, (uint16_t)n);
	hw_wr_bytes(w, s, n);
}

static inline void hw_wr_idset(hw_wr *w, const hw_idset *s)
{
	if (s->n > HW_MAX_RF) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	hw_wr_u8(w, s->n);
	for (int i = 0; i < s->n; i++)
		hw_wr_i32(w, s->id[i]);
}

static inline void hw_wr_tp(hw_wr *w, hw_tp tp)
{
	hw_wr_u32(w, tp.topic_id);
	hw_wr_u32(w, tp.partition);
}

static inline void hw_wr_einval(hw_wr *w)
{
	if (!w->err)
		w->err = -EINVAL;
}

/* ---- reader */
typedef struct hw_rd {
	union {
		hw_bytes_rd b;         /* lib's reader, which does the bounds check */
		struct {               /* its fields, by their names */
			const uint8_t *p;
			size_t len;
			size_t pos;
			int bad;       /* latched */
		};
	};
	hw_wire_drop why;      /* the first failure's reason */
	hw_wire_arena *arena;
} hw_rd;
_Static_assert(offsetof(hw_rd, p) == offsetof(hw_rd, b) + offsetof(hw_bytes_rd, p) &&
	       offsetof(hw_rd, len) == offsetof(hw_rd, b) + offsetof(hw_bytes_rd, len) &&
	       offsetof(hw_rd, pos) == offsetof(hw_rd, b) + offsetof(hw_bytes_rd, pos) &&
	       offsetof(hw_rd, bad) == offsetof(hw_rd, b) + offsetof(hw_bytes_rd, bad),
	       "hw_rd's field names alias lib's reader");

static inline void hw_rd_fail(hw_rd *r, hw_wire_drop why)
{
	if (!r->bad) {
		r->bad = 1;
		r->why = why;
	}
}

/* A read of lib's reader that came up short: TRUNCATED, unless the reader
 * had already failed (the first reason stays). */
static inline void hw_rd_short(hw_rd *r, int was_bad)
{
	if (r->bad && !was_bad)
		r->why = HW_WIRE_DROP_TRUNCATED;
}
static inline const uint8_t *hw_rd_take(hw_rd *r, size_t n)
{
	int was_bad = r->bad;
	const uint8_t *q = hw_bytes_take(&r->b, n);
	hw_rd_short(r, was_bad);
	return q;
}
/* Fixed-width big-endian integers: lib's, with the drop reason. */
static inline uint8_t hw_rd_u8(hw_rd *r) { int w = r->bad; uint8_t v = hw_bytes_u8(&r->b); hw_rd_short(r, w); return v; }
static inline uint16_t hw_rd_u16(hw_rd *r) { int w = r->bad; uint16_t v = hw_bytes_u16(&r->b); hw_rd_short(r, w); return v; }
static inline uint32_t hw_rd_u32(hw_rd *r) { int w = r->bad; uint32_t v = hw_bytes_u32(&r->b); hw_rd_short(r, w); return v; }
static inline uint64_t hw_rd_u64(hw_rd *r) { int w = r->bad; uint64_t v = hw_bytes_u64(&r->b); hw_rd_short(r, w); return v; }
#define hw_rd_i16(r) ((int16_t)hw_rd_u16(r))
#define hw_rd_i32(r) ((int32_t)hw_rd_u32(r))
#define hw_rd_i64(r) ((int64_t)hw_rd_u64(r))

/* A 0/1 flag byte. */
static inline uint8_t hw_rd_bool(hw_rd *r)
{
	uint8_t v = hw_rd_u8(r);
	if (v > 1)
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
	return v;
}

static inline void hw_rd_str(hw_rd *r, char *dst, size_t max)
{
	uint16_t n = hw_rd_u16(r);
	dst[0] = 0;
	if (r->bad)
		return;
	if ((size_t)n >= max) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_STRING);
		return;
	}
	const uint8_t *q = hw_rd_take(r, n);
	if (!q)
		return;
	if (memchr(q, 0, n)) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_STRING);
		return;
	}
	memcpy(dst, q, n);
	dst[n] = 0;
}

static inline void hw_rd_idset(hw_rd *r, hw_idset *s)
{
	memset(s, 0, sizeof *s);
	uint8_t n = hw_rd_u8(r);
	if (n > HW_MAX_RF) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return;
	}
	s->n = n;
	for (int i = 0; i < n; i++)
		s->id[i] = hw_rd_i32(r);
}

static inline hw_tp hw_rd_tp(hw_rd *r)
{
	hw_tp tp;
	tp.topic_id = hw_rd_u32(r);
	tp.partition = hw_rd_u32(r);
	return tp;
}

/* Record bytes without the whole-batch check (a batch piece may follow in
 * the tagged section: the caller checks them once it knows). */
static inline void hw_rd_records_raw(hw_rd *r, const uint8_t **p, uint32_t *n)
{
	*p = NULL;
	*n = hw_rd_u32(r);
	if (r->bad) {
		*n = 0;
		return;
	}
	const uint8_t *q = hw_rd_take(r, *n);
	if (!q) {
		*n = 0;
		return;
	}
	*p = *n ? q : NULL;
}

static inline void hw_rd_records(hw_rd *r, const uint8_t **p, uint32_t *n)
{
	*p = NULL;
	*n = hw_rd_u32(r);
	if (r->bad) {
		*n = 0;
		return;
	}
	const uint8_t *q = hw_rd_take(r, *n);
	if (!q) {
		*n = 0;
		return;
	}
	if (hw_wire_check_batches(q, *n, NULL) != 0) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_RECORDS);
		*n = 0;
		return;
	}
	*p = *n ? q : NULL;
}

/* Read an array count and check that `count` elements of at least
 * `min_elem` bytes each can still be in the payload. */
static inline uint32_t hw_rd_count(hw_rd *r, uint32_t count, size_t min_elem)
{
	if (r->bad)
		return 0;
	if (count > HW_WIRE_MAX_PARTS) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_COUNT);
		return 0;
	}
	if ((size_t)count * min_elem > r->len - r->pos) {
		hw_rd_fail(r, HW_WIRE_DROP_TRUNCATED);
		return 0;
	}
	return count;
}

static inline void *hw_rd_alloc(hw_rd *r, size_t n)
{
	if (r->bad)
		return NULL;
	hw_wire_arena *a = r->arena;
	size_t at = (a->used + 7u) & ~(size_t)7u;
	if (!a->base || at > a->cap || n > a->cap - at) {
		hw_rd_fail(r, HW_WIRE_DROP_NO_SCRATCH);
		return NULL;
	}
	a->used = at + n;
	void *p = a->base + at;
	memset(p, 0, n);
	return p;
}

/* Internal codec entry points shared between hw_wire.c and hw_wire_admin.c. */
int hw_wire_admin_encode(hw_wr *w, const hw_msg *m);   /* 1 handled, 0 not admin */
int hw_wire_admin_decode(hw_rd *r, hw_msg *m);         /* 1 handled, 0 not admin */
/* hw_wire_tconf.c: PARTITION_STATE's topic config trailer. enc: -EINVAL
 * latched for a CTRL row or an unknown bit; dec: BAD_FIELD for a count,
 * id order or value out of range. */
void hw_wire_enc_tconf(hw_wr *w, const hw_topic_config *tc);
void hw_wire_dec_tconf(hw_rd *r, hw_topic_config *tc);

/* hw_wire_ctrl.c: DELETE_TOPIC(_RESP), ALLOCATE_PRODUCER_IDS(_RESP) */
int hw_wire_ctrl_encode(hw_wr *w, const hw_msg *m);    /* 1 handled, 0 not one of them */
int hw_wire_ctrl_decode(hw_rd *r, hw_msg *m);          /* 1 handled, 0 not one of them */

#endif
