/* hw_bytes.h — fixed-width integers in byte buffers: raw field access, a
 * bounds-checked reader and a bounds-checked writer. The one implementation
 * every codec is built on (engine/proto's wire frames, the record batch
 * header, the controller's metadata records and log, the DPDK driver's
 * queue hello and fragments).
 *
 * Big-endian (network order) is the default and carries no suffix; the
 * little-endian forms (_le) exist for the controller's on-disk formats
 * (hw_ctrl_mlog.h), which are little-endian.
 *
 * Raw access (hw_be32_get, hw_le32_put, ...): p must hold the bytes; no
 * checks (for fixed headers whose length was checked once).
 *
 * Reader: never reads past `len`; the first short read latches `bad` and
 * later reads return zeros, so a decoder checks once per message (and
 * before trusting any count).
 *
 * Writer: appends into a fixed buffer (hw_bytes_wr_fixed) or a growing heap
 * one (hw_bytes_wr_grow, realloc'd; free w->buf). The first failure latches
 * `err` (-EMSGSIZE: a fixed buffer is full; -ENOMEM) and later writes are
 * no-ops, so an encoder checks once at the end.
 *
 * Header-only: codecs compiled alone into their fuzz targets need no
 * library.
 */
#ifndef HW_BYTES_H
#define HW_BYTES_H
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- raw access */
static inline uint16_t hw_be16_get(const void *p) { uint16_t v; memcpy(&v, p, 2); return __builtin_bswap16(v); }
static inline uint32_t hw_be32_get(const void *p) { uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
static inline uint64_t hw_be64_get(const void *p) { uint64_t v; memcpy(&v, p, 8); return __builtin_bswap64(v); }
static inline void hw_be16_put(void *p, uint16_t v) { v = __builtin_bswap16(v); memcpy(p, &v, 2); }
static inline void hw_be32_put(void *p, uint32_t v) { v = __builtin_bswap32(v); memcpy(p, &v, 4); }
static inline void hw_be64_put(void *p, uint64_t v) { v = __builtin_bswap64(v); memcpy(p, &v, 8); }

/* n = 1..8 bytes (the low n bytes of v), big- and little-endian. */
static inline uint64_t hw_be_get(const void *p, unsigned n)
{
	const uint8_t *b = p;
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}
static inline void hw_be_put(void *p, uint64_t v, unsigned n)
{
	uint8_t *b = p;
	for (unsigned i = n; i-- > 0; v >>= 8)
		b[i] = (uint8_t)v;
}
static inline uint64_t hw_le_get(const void *p, unsigned n)
{
	const uint8_t *b = p;
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}
static inline void hw_le_put(void *p, uint64_t v, unsigned n)
{
	uint8_t *b = p;
	for (unsigned i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t hw_le32_get(const void *p) { return (uint32_t)hw_le_get(p, 4); }
static inline void hw_le32_put(void *p, uint32_t v) { hw_le_put(p, v, 4); }

/* ---- reader */
typedef struct hw_bytes_rd {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int bad;               /* latched: a read went past len */
} hw_bytes_rd;

static inline hw_bytes_rd hw_bytes_rd_init(const void *p, size_t len)
{
	return (hw_bytes_rd){ .p = p, .len = len };
}

/* n bytes at *pos of [p, p + len), advancing *pos; NULL (and *pos
 * unchanged) when fewer than n are left. The one bounds check every reader
 * here goes through. */
static inline const uint8_t *hw_bytes_span(const uint8_t *p, size_t len, size_t *pos, size_t n)
{
	if (*pos > len || n > len - *pos)
		return NULL;
	const uint8_t *q = p + *pos;
	*pos += n;
	return q;
}

static inline const uint8_t *hw_bytes_take(hw_bytes_rd *r, size_t n)
{
	const uint8_t *q = r->bad ? NULL : hw_bytes_span(r->p, r->len, &r->pos, n);
	if (!q)
		r->bad = 1;
	return q;
}
static inline size_t hw_bytes_left(const hw_bytes_rd *r) { return r->bad ? 0 : r->len - r->pos; }

static inline uint8_t hw_bytes_u8(hw_bytes_rd *r)
{
	const uint8_t *q = hw_bytes_take(r, 1);
	return q ? q[0] : 0;
}
static inline uint16_t hw_bytes_u16(hw_bytes_rd *r)
{
	const uint8_t *q = hw_bytes_take(r, 2);
	return q ? hw_be16_get(q) : 0;
}
static inline uint32_t hw_bytes_u32(hw_bytes_rd *r)
{
	const uint8_t *q = hw_bytes_take(r, 4);
	return q ? hw_be32_get(q) : 0;
}
static inline uint64_t hw_bytes_u64(hw_bytes_rd *r)
{
	const uint8_t *q = hw_bytes_take(r, 8);
	return q ? hw_be64_get(q) : 0;
}
/* n = 1..8 little-endian bytes. */
static inline uint64_t hw_bytes_le(hw_bytes_rd *r, unsigned n)
{
	const uint8_t *q = hw_bytes_take(r, n);
	return q ? hw_le_get(q, n) : 0;
}

/* ---- writer */
typedef struct hw_bytes_wr {
	uint8_t *buf;
	size_t cap;
	size_t pos;            /* bytes written */
	int err;               /* 0 or negative errno, latched */
	int grow;              /* 1: buf is heap memory, realloc'd as needed */
} hw_bytes_wr;

static inline hw_bytes_wr hw_bytes_wr_fixed(void *buf, size_t cap)
{
	return (hw_bytes_wr){ .buf = buf, .cap = cap };
}
static inline hw_bytes_wr hw_bytes_wr_grow(void) { return (hw_bytes_wr){ .grow = 1 }; }

/* The writers' one growth rule, on a buffer described by its parts (so
 * writers with more state, lib/kafka's hw_kw, share it): room for n more
 * bytes after *used, doubling a heap buffer (grow) from 256 bytes; returns
 * where to write them (*used advanced), or NULL with *err latched (-EMSGSIZE:
 * a fixed buffer is full; -ENOMEM). Does nothing once *err is set. */
static inline uint8_t *hw_bytes_room(uint8_t **buf, size_t *cap, size_t *used, size_t n, int grow, int *err)
{
	if (*err)
		return NULL;
	if (n > *cap - *used) {
		if (!grow) {
			*err = -EMSGSIZE;
			return NULL;
		}
		size_t want = *cap ? *cap : 256;
		while (want - *used < n) {
			if (want > SIZE_MAX / 2) {
				*err = -ENOMEM;
				return NULL;
			}
			want *= 2;
		}
		uint8_t *nb = realloc(*buf, want);
		if (!nb) {
			*err = -ENOMEM;
			return NULL;
		}
		*buf = nb;
		*cap = want;
	}
	uint8_t *q = *buf + *used;
	*used += n;
	return q;
}

/* Room for n more bytes: where to write them (pos advanced), or NULL with
 * err latched. */
static inline uint8_t *hw_bytes_reserve(hw_bytes_wr *w, size_t n)
{
	return hw_bytes_room(&w->buf, &w->cap, &w->pos, n, w->grow, &w->err);
}

static inline void hw_bytes_put(hw_bytes_wr *w, const void *p, size_t n)
{
	uint8_t *q = hw_bytes_reserve(w, n);
	if (q && n)
		memcpy(q, p, n);
}
static inline void hw_bytes_put_u8(hw_bytes_wr *w, uint8_t v) { hw_bytes_put(w, &v, 1); }
static inline void hw_bytes_put_u16(hw_bytes_wr *w, uint16_t v)
{
	uint8_t *q = hw_bytes_reserve(w, 2);
	if (q)
		hw_be16_put(q, v);
}
static inline void hw_bytes_put_u32(hw_bytes_wr *w, uint32_t v)
{
	uint8_t *q = hw_bytes_reserve(w, 4);
	if (q)
		hw_be32_put(q, v);
}
static inline void hw_bytes_put_u64(hw_bytes_wr *w, uint64_t v)
{
	uint8_t *q = hw_bytes_reserve(w, 8);
	if (q)
		hw_be64_put(q, v);
}
/* n = 1..8 little-endian bytes. */
static inline void hw_bytes_put_le(hw_bytes_wr *w, uint64_t v, unsigned n)
{
	uint8_t *q = hw_bytes_reserve(w, n);
	if (q)
		hw_le_put(q, v, n);
}

#endif
