/* hw_kafka_io.c — Kafka protocol primitives. See hw_kafka_io.h. */
#include "hw_kafka_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw_bytes.h"
#include "hw_varint.h"

/* ---- reader -------------------------------------------------------------- */
int hw_kr_fail(hw_kr *r, int err)
{
	if (!r->err)
		r->err = err;
	return r->err;
}

/* Pointer to the next n bytes and advance, or NULL (error set). */
static const uint8_t *kr_take(hw_kr *r, size_t n)
{
	if (r->err)
		return NULL;
	const uint8_t *p = hw_bytes_span(r->buf, r->len, &r->off, n);
	if (!p)
		hw_kr_fail(r, -EMSGSIZE);
	return p;
}

int8_t hw_kr_i8(hw_kr *r)
{
	const uint8_t *p = kr_take(r, 1);
	return p ? (int8_t)p[0] : 0;
}
int16_t hw_kr_i16(hw_kr *r)
{
	const uint8_t *p = kr_take(r, 2);
	return p ? (int16_t)(uint16_t)hw_be_get(p, 2) : 0;
}
int32_t hw_kr_i32(hw_kr *r)
{
	const uint8_t *p = kr_take(r, 4);
	return p ? (int32_t)(uint32_t)hw_be_get(p, 4) : 0;
}
uint32_t hw_kr_u32(hw_kr *r)
{
	const uint8_t *p = kr_take(r, 4);
	return p ? (uint32_t)hw_be_get(p, 4) : 0;
}
int64_t hw_kr_i64(hw_kr *r)
{
	const uint8_t *p = kr_take(r, 8);
	return p ? (int64_t)hw_be_get(p, 8) : 0;
}
bool hw_kr_bool(hw_kr *r) { return hw_kr_i8(r) != 0; }

void hw_kr_skip(hw_kr *r, size_t n) { (void)kr_take(r, n); }

void hw_kr_uuid(hw_kr *r, uint8_t out[16])
{
	const uint8_t *p = kr_take(r, 16);
	if (p)
		memcpy(out, p, 16);
	else
		memset(out, 0, 16);
}

uint32_t hw_kr_uvarint(hw_kr *r)
{
	if (r->err)
		return 0;
	uint32_t v = 0;
	int n = hw_varint_get_u32(r->buf + r->off, r->len - r->off, &v);
	if (n < 0) {
		hw_kr_fail(r, n);
		return 0;
	}
	r->off += (size_t)n;
	return v;
}
int32_t hw_kr_varint(hw_kr *r)
{
	if (r->err)
		return 0;
	int32_t v = 0;
	int n = hw_varint_get_i32(r->buf + r->off, r->len - r->off, &v);
	if (n < 0) {
		hw_kr_fail(r, n);
		return 0;
	}
	r->off += (size_t)n;
	return v;
}
int64_t hw_kr_varlong(hw_kr *r)
{
	if (r->err)
		return 0;
	int64_t v = 0;
	int n = hw_varlong_get_i64(r->buf + r->off, r->len - r->off, &v);
	if (n < 0) {
		hw_kr_fail(r, n);
		return 0;
	}
	r->off += (size_t)n;
	return v;
}

/* A view of len bytes (len -1 = null, allowed iff nullable). */
static hw_kstr kr_view(hw_kr *r, int64_t len, bool nullable)
{
	hw_kstr s = { NULL, -1 };
	if (r->err)
		return (hw_kstr){ "", 0 };
	if (len == -1 && nullable)
		return s;
	if (len < 0) {
		hw_kr_fail(r, -EINVAL);
		return (hw_kstr){ "", 0 };
	}
	if (len > INT32_MAX) {
		hw_kr_fail(r, -EMSGSIZE);
		return (hw_kstr){ "", 0 };
	}
	const uint8_t *p = kr_take(r, (size_t)len);
	if (!p)
		return (hw_kstr){ "", 0 };
	s.p = (const char *)p;
	s.len = (int32_t)len;
	return s;
}

hw_kstr hw_kr_str(hw_kr *r) { return kr_view(r, hw_kr_i16(r), false); }
hw_kstr hw_kr_nstr(hw_kr *r) { return kr_view(r, hw_kr_i16(r), true); }
hw_kstr hw_kr_cstr(hw_kr *r) { return kr_view(r, (int64_t)hw_kr_uvarint(r) - 1, false); }
hw_kstr hw_kr_cnstr(hw_kr *r) { return kr_view(r, (int64_t)hw_kr_uvarint(r) - 1, true); }
hw_kstr hw_kr_str_v(hw_kr *r, bool flexible) { return flexible ? hw_kr_cstr(r) : hw_kr_str(r); }
hw_kstr hw_kr_nstr_v(hw_kr *r, bool flexible) { return flexible ? hw_kr_cnstr(r) : hw_kr_nstr(r); }

static hw_kbytes as_bytes(hw_kstr s) { return (hw_kbytes){ (const uint8_t *)s.p, s.len }; }
hw_kbytes hw_kr_nbytes(hw_kr *r) { return as_bytes(kr_view(r, hw_kr_i32(r), true)); }
hw_kbytes hw_kr_cnbytes(hw_kr *r) { return as_bytes(kr_view(r, (int64_t)hw_kr_uvarint(r) - 1, true)); }
hw_kbytes hw_kr_nbytes_v(hw_kr *r, bool flexible) { return flexible ? hw_kr_cnbytes(r) : hw_kr_nbytes(r); }

static int32_t kr_count(hw_kr *r, int64_t n)
{
	if (r->err)
		return 0;
	if (n == -1)
		return -1;
	if (n < 0 || (uint64_t)n > r->len - r->off) {
		hw_kr_fail(r, -EINVAL);
		return 0;
	}
	return (int32_t)n;
}
int32_t hw_kr_array(hw_kr *r) { return kr_count(r, hw_kr_i32(r)); }
int32_t hw_kr_carray(hw_kr *r) { return kr_count(r, (int64_t)hw_kr_uvarint(r) - 1); }
int32_t hw_kr_array_v(hw_kr *r, bool flexible) { return flexible ? hw_kr_carray(r) : hw_kr_array(r); }

void hw_kr_tags(hw_kr *r, hw_kr_tag_fn cb, void *arg)
{
	uint32_t n = hw_kr_uvarint(r);
	if (!r->err && n > r->len - r->off) {
		hw_kr_fail(r, -EINVAL);
		return;
	}
	int64_t last = -1;
	for (uint32_t i = 0; i < n && !r->err; i++) {
		uint32_t tag = hw_kr_uvarint(r);
		uint32_t size = hw_kr_uvarint(r);
		const uint8_t *p = kr_take(r, size);
		if (!p)
			return;
		if ((int64_t)tag <= last) {
			hw_kr_fail(r, -EINVAL);
			return;
		}
		last = tag;
		if (cb) {
			int rc = cb(arg, tag, p, size);
			if (rc < 0)
				hw_kr_fail(r, rc);
		}
	}
}

void hw_kr_tags_v(hw_kr *r, bool flexible)
{
	if (flexible)
		hw_kr_tags(r, NULL, NULL);
}

int hw_kstr_copy(hw_kstr s, char *out, size_t cap)
{
	if (s.len < 0)
		return -EINVAL;
	if ((size_t)s.len >= cap)
		return -ENAMETOOLONG;
	memcpy(out, s.p, (size_t)s.len);
	out[s.len] = '\0';
	return s.len;
}

int hw_kstr_eq(hw_kstr s, const char *z)
{
	if (s.len < 0 || !z)
		return s.len < 0 && !z;
	size_t n = strlen(z);
	return n == (size_t)s.len && memcmp(s.p, z, n) == 0;
}

/* ---- writer -------------------------------------------------------------- */
void hw_kw_init(hw_kw *w, size_t initial)
{
	memset(w, 0, sizeof *w);
	if (!initial)
		initial = 256;
	w->buf = malloc(initial);
	if (!w->buf)
		w->err = -ENOMEM;
	else
		w->cap = initial;
}

void hw_kw_init_fixed(hw_kw *w, void *buf, size_t cap)
{
	memset(w, 0, sizeof *w);
	w->buf = buf;
	w->cap = cap;
	w->fixed = true;
}

void hw_kw_free(hw_kw *w)
{
	if (!w->fixed)
		free(w->buf);
	w->buf = NULL;
	w->cap = w->len = 0;
}

uint8_t *hw_kw_take(hw_kw *w, size_t *len)
{
	uint8_t *b = w->buf;
	*len = w->len;
	w->buf = NULL;
	w->cap = w->len = 0;
	return b;
}

uint8_t *hw_kw_reserve(hw_kw *w, size_t n)
{
	return hw_bytes_room(&w->buf, &w->cap, &w->len, n, !w->fixed, &w->err);
}

void hw_kw_raw(hw_kw *w, const void *p, size_t n)
{
	uint8_t *d = hw_kw_reserve(w, n);
	if (d && n)
		memcpy(d, p, n);
}

static void kw_be(hw_kw *w, uint64_t v, int n)
{
	uint8_t *p = hw_kw_reserve(w, (size_t)n);
	if (p)
		hw_be_put(p, v, n);
}
void hw_kw_i8(hw_kw *w, int8_t v) { kw_be(w, (uint8_t)v, 1); }
void hw_kw_i16(hw_kw *w, int16_t v) { kw_be(w, (uint16_t)v, 2); }
void hw_kw_i32(hw_kw *w, int32_t v) { kw_be(w, (uint32_t)v, 4); }
void hw_kw_u32(hw_kw *w, uint32_t v) { kw_be(w, v, 4); }
void hw_kw_i64(hw_kw *w, int64_t v) { kw_be(w, (uint64_t)v, 8); }
void hw_kw_bool(hw_kw *w, bool v) { kw_be(w, v ? 1 : 0, 1); }
void hw_kw_uuid(hw_kw *w, const uint8_t v[16]) { hw_kw_raw(w, v, 16); }

void hw_kw_uvarint(hw_kw *w, uint32_t v)
{
	uint8_t tmp[HW_VARINT_MAX_BYTES];
	int n = hw_varint_put_u32(tmp, sizeof tmp, v);
	hw_kw_raw(w, tmp, (size_t)n);
}
void hw_kw_varint(hw_kw *w, int32_t v)
{
	uint8_t tmp[HW_VARINT_MAX_BYTES];
	int n = hw_varint_put_i32(tmp, sizeof tmp, v);
	hw_kw_raw(w, tmp, (size_t)n);
}
void hw_kw_varlong(hw_kw *w, int64_t v)
{
	uint8_t tmp[HW_VARLONG_MAX_BYTES];
	int n = hw_varlong_put_i64(tmp, sizeof tmp, v);
	hw_kw_raw(w, tmp, (size_t)n);
}

static void kw_fail(hw_kw *w, int err)
{
	if (!w->err)
		w->err = err;
}

void hw_kw_str(hw_kw *w, const char *p, size_t n)
{
	if (!p)
		n = 0;
	if (n > INT16_MAX) {
		kw_fail(w, -EMSGSIZE);
		return;
	}
	hw_kw_i16(w, (int16_t)n);
	hw_kw_raw(w, p, n);
}
void hw_kw_nstr(hw_kw *w, const char *p, size_t n)
{
	if (!p) {
		hw_kw_i16(w, -1);
		return;
	}
	hw_kw_str(w, p, n);
}
void hw_kw_cstr(hw_kw *w, const char *p, size_t n)
{
	if (!p)
		n = 0;
	if (n >= UINT32_MAX) {
		kw_fail(w, -EMSGSIZE);
		return;
	}
	hw_kw_uvarint(w, (uint32_t)n + 1);
	hw_kw_raw(w, p, n);
}
void hw_kw_cnstr(hw_kw *w, const char *p, size_t n)
{
	if (!p) {
		hw_kw_uvarint(w, 0);
		return;
	}
	hw_kw_cstr(w, p, n);
}
void hw_kw_str_v(hw_kw *w, bool flexible, const char *p, size_t n)
{
	if (flexible)
		hw_kw_cstr(w, p, n);
	else
		hw_kw_str(w, p, n);
}
void hw_kw_nstr_v(hw_kw *w, bool flexible, const char *p, size_t n)
{
	if (flexible)
		hw_kw_cnstr(w, p, n);
	else
		hw_kw_nstr(w, p, n);
}
void hw_kw_strz_v(hw_kw *w, bool flexible, const char *z)
{
	hw_kw_str_v(w, flexible, z ? z : "", z ? strlen(z) : 0);
}
void hw_kw_nstrz_v(hw_kw *w, bool flexible, const char *z)
{
	hw_kw_nstr_v(w, flexible, z, z ? strlen(z) : 0);
}

void hw_kw_nbytes_v(hw_kw *w, bool flexible, const void *p, size_t n)
{
	if (flexible) {
		if (!p) {
			hw_kw_uvarint(w, 0);
			return;
		}
		if (n >= UINT32_MAX) {
			kw_fail(w, -EMSGSIZE);
			return;
		}
		hw_kw_uvarint(w, (uint32_t)n + 1);
	} else {
		if (!p) {
			hw_kw_i32(w, -1);
			return;
		}
		if (n > INT32_MAX) {
			kw_fail(w, -EMSGSIZE);
			return;
		}
		hw_kw_i32(w, (int32_t)n);
	}
	hw_kw_raw(w, p, n);
}

void hw_kw_array_v(hw_kw *w, bool flexible, int32_t n)
{
	if (flexible)
		hw_kw_uvarint(w, n < 0 ? 0u : (uint32_t)n + 1);
	else
		hw_kw_i32(w, n < 0 ? -1 : n);
}

void hw_kw_tags_none(hw_kw *w) { hw_kw_uvarint(w, 0); }

void hw_kw_tags_v(hw_kw *w, bool flexible)
{
	if (flexible)
		hw_kw_uvarint(w, 0);
}

void hw_kw_kstr_v(hw_kw *w, bool flexible, hw_kstr s)
{
	hw_kw_str_v(w, flexible, s.len > 0 ? s.p : "", s.len > 0 ? (size_t)s.len : 0);
}

void hw_kw_knstr_v(hw_kw *w, bool flexible, hw_kstr s)
{
	hw_kw_nstr_v(w, flexible, s.len >= 0 ? (s.p ? s.p : "") : NULL, s.len > 0 ? (size_t)s.len : 0);
}

size_t hw_kw_skip(hw_kw *w, size_t n)
{
	uint8_t *p = hw_kw_reserve(w, n);
	if (!p)
		return SIZE_MAX;
	memset(p, 0, n);
	return (size_t)(p - w->buf);
}
void hw_kw_patch_i32(hw_kw *w, size_t at, int32_t v)
{
	if (w->err || at > w->len || w->len - at < 4)
		return;
	hw_be_put(w->buf + at, (uint32_t)v, 4);
}
void hw_kw_patch_i16(hw_kw *w, size_t at, int16_t v)
{
	if (w->err || at > w->len || w->len - at < 2)
		return;
	hw_be_put(w->buf + at, (uint16_t)v, 2);
}
