/* hw_kafka_io.h — bounds-checked readers and writers of the Kafka protocol's
 * primitive types (docs/kafka.md "Wire primitives").
 *
 * Design note
 * -----------
 * Kafka's protocol (https://kafka.apache.org/protocol#protocol_types) is
 * big-endian fixed-width integers, Kafka varints (lib/varint), strings,
 * bytes and arrays in a classic form (int16/int32 length, -1 = null) and, in
 * flexible versions (KIP-482), a compact form (unsigned varint N = length+1,
 * 0 = null) followed by tagged fields.
 *
 * Reader (hw_kr): a cursor over [buf, buf+len) with a STICKY error. Every
 * getter checks the bytes it needs; on a short or invalid input it sets
 * r->err (negative errno, below) once, returns a zero value, and every later
 * getter is a no-op returning zero. A decoder therefore reads a whole
 * structure as straight-line code and checks r->err once per phase. A reader
 * never reads outside [buf, buf+len).
 *   -EMSGSIZE  the input ends inside a value;
 *   -EOVERFLOW a varint that is too long / carries bits past its width;
 *   -EINVAL    a negative length other than -1 (null), a null where the type
 *              is not nullable, or an array count larger than the bytes left
 *              could hold (each element takes >= 1 byte: a hostile count can
 *              never make a caller allocate more than the request's size).
 *
 * Writer (hw_kw): appends to a heap buffer that grows (realloc) as needed, or
 * to a fixed caller buffer (hw_kw_init_fixed) that never grows. Errors are
 * sticky as in the reader: -ENOMEM (growth failed) or -EMSGSIZE (fixed buffer
 * full); after an error nothing more is written. Placeholders (hw_kw_skip)
 * let a caller write a size/count first and patch it later (hw_kw_patch_i32).
 *
 * Thread-safety: none needed; a reader/writer is owned by its caller.
 */
#ifndef HW_KAFKA_IO_H
#define HW_KAFKA_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- reader -------------------------------------------------------------- */
typedef struct hw_kr {
	const uint8_t *buf;
	size_t len;
	size_t off;
	int err; /* 0 or the first error (negative errno) */
} hw_kr;

/* A string or bytes view into the reader's buffer (not NUL-terminated).
 * len == -1 means null. */
typedef struct hw_kstr {
	const char *p;
	int32_t len;
} hw_kstr;

typedef struct hw_kbytes {
	const uint8_t *p;
	int32_t len;
} hw_kbytes;

static inline void hw_kr_init(hw_kr *r, const void *buf, size_t len)
{
	r->buf = (const uint8_t *)buf;
	r->len = len;
	r->off = 0;
	r->err = 0;
}
static inline size_t hw_kr_left(const hw_kr *r) { return r->err ? 0 : r->len - r->off; }
static inline bool hw_kr_ok(const hw_kr *r) { return r->err == 0; }
/* Set the sticky error (first one wins). Returns err. */
int hw_kr_fail(hw_kr *r, int err);

int8_t hw_kr_i8(hw_kr *r);
int16_t hw_kr_i16(hw_kr *r);
int32_t hw_kr_i32(hw_kr *r);
int64_t hw_kr_i64(hw_kr *r);
uint32_t hw_kr_u32(hw_kr *r);
bool hw_kr_bool(hw_kr *r);                  /* any non-zero byte = true, as Kafka */
uint32_t hw_kr_uvarint(hw_kr *r);           /* unsigned varint */
int32_t hw_kr_varint(hw_kr *r);             /* zigzag varint */
int64_t hw_kr_varlong(hw_kr *r);            /* zigzag varlong */
void hw_kr_uuid(hw_kr *r, uint8_t out[16]); /* 16 raw bytes */
/* Skip n bytes. */
void hw_kr_skip(hw_kr *r, size_t n);

/* Strings: classic (int16 length) or compact (uvarint length+1). The
 * nullable variants return len -1 for null; the others fail -EINVAL on null. */
hw_kstr hw_kr_str(hw_kr *r);
hw_kstr hw_kr_nstr(hw_kr *r);
hw_kstr hw_kr_cstr(hw_kr *r);
hw_kstr hw_kr_cnstr(hw_kr *r);
/* flexible ? compact : classic, for codecs shared across versions. */
hw_kstr hw_kr_str_v(hw_kr *r, bool flexible);
hw_kstr hw_kr_nstr_v(hw_kr *r, bool flexible);

/* Bytes: classic nullable (int32 length) or compact nullable. */
hw_kbytes hw_kr_nbytes(hw_kr *r);
hw_kbytes hw_kr_cnbytes(hw_kr *r);
hw_kbytes hw_kr_nbytes_v(hw_kr *r, bool flexible);

/* Array counts: classic (int32, -1 = null) or compact (uvarint N, N-1 =
 * count, 0 = null). Null is returned as -1. A count above the bytes left
 * fails -EINVAL (every element is at least one byte). */
int32_t hw_kr_array(hw_kr *r);
int32_t hw_kr_carray(hw_kr *r);
int32_t hw_kr_array_v(hw_kr *r, bool flexible);

/* Tagged fields (KIP-482): uvarint count, then count x {uvarint tag,
 * uvarint size, size bytes}. Tags must strictly increase (Kafka rejects
 * duplicates); unknown tags are skipped. If cb is non-NULL it is called for
 * every field (tag, data view); a negative return becomes the reader error. */
typedef int (*hw_kr_tag_fn)(void *arg, uint32_t tag, const uint8_t *p, size_t len);
void hw_kr_tags(hw_kr *r, hw_kr_tag_fn cb, void *arg);
/* flexible ? hw_kr_tags(r, NULL, NULL) : nothing — the tagged section that
 * ends every structure of a flexible version, unknown tags skipped. */
void hw_kr_tags_v(hw_kr *r, bool flexible);

/* Copy a string view into a NUL-terminated buffer of cap bytes. Returns the
 * length, or -ENAMETOOLONG if it does not fit, -EINVAL if null. */
int hw_kstr_copy(hw_kstr s, char *out, size_t cap);
/* 1 if s equals the C string z. */
int hw_kstr_eq(hw_kstr s, const char *z);

/* ---- writer -------------------------------------------------------------- */
typedef struct hw_kw {
	uint8_t *buf;
	size_t cap;
	size_t len;
	int err;    /* 0, -ENOMEM or -EMSGSIZE */
	bool fixed; /* caller's buffer: never realloc'd, never freed */
} hw_kw;

/* Heap writer with an initial capacity (0 = a small default). Never fails
 * itself: an allocation failure becomes the sticky error. */
void hw_kw_init(hw_kw *w, size_t initial);
void hw_kw_init_fixed(hw_kw *w, void *buf, size_t cap);
/* Free a heap writer's buffer (no-op for fixed). */
void hw_kw_free(hw_kw *w);
/* Hand the heap buffer to the caller (who free()s it); the writer is reset. */
uint8_t *hw_kw_take(hw_kw *w, size_t *len);
/* Make room for n more bytes; returns a pointer to them or NULL (error set). */
uint8_t *hw_kw_reserve(hw_kw *w, size_t n);

void hw_kw_raw(hw_kw *w, const void *p, size_t n);
void hw_kw_i8(hw_kw *w, int8_t v);
void hw_kw_i16(hw_kw *w, int16_t v);
void hw_kw_i32(hw_kw *w, int32_t v);
void hw_kw_i64(hw_kw *w, int64_t v);
void hw_kw_u32(hw_kw *w, uint32_t v);
void hw_kw_bool(hw_kw *w, bool v);
void hw_kw_uvarint(hw_kw *w, uint32_t v);
void hw_kw_varint(hw_kw *w, int32_t v);
void hw_kw_varlong(hw_kw *w, int64_t v);
void hw_kw_uuid(hw_kw *w, const uint8_t v[16]);

/* Strings from (p, n); p == NULL writes null (nullable forms only; the
 * non-nullable forms write an empty string for NULL). n > INT16_MAX fails
 * -EMSGSIZE for the classic forms. */
void hw_kw_str(hw_kw *w, const char *p, size_t n);
void hw_kw_nstr(hw_kw *w, const char *p, size_t n);
void hw_kw_cstr(hw_kw *w, const char *p, size_t n);
void hw_kw_cnstr(hw_kw *w, const char *p, size_t n);
void hw_kw_str_v(hw_kw *w, bool flexible, const char *p, size_t n);
void hw_kw_nstr_v(hw_kw *w, bool flexible, const char *p, size_t n);
/* NUL-terminated convenience forms (z == NULL = null). */
void hw_kw_strz_v(hw_kw *w, bool flexible, const char *z);
void hw_kw_nstrz_v(hw_kw *w, bool flexible, const char *z);
/* Nullable bytes (p == NULL = null). */
void hw_kw_nbytes_v(hw_kw *w, bool flexible, const void *p, size_t n);
/* Array count (n < 0 = null). */
void hw_kw_array_v(hw_kw *w, bool flexible, int32_t n);
/* An empty tagged-field section (flexible versions only: callers write it
 * where the schema has one). */
void hw_kw_tags_none(hw_kw *w);
/* flexible ? hw_kw_tags_none(w) : nothing. */
void hw_kw_tags_v(hw_kw *w, bool flexible);
/* A string view (len -1 = null) in the nullable / non-nullable form. */
void hw_kw_kstr_v(hw_kw *w, bool flexible, hw_kstr s);
void hw_kw_knstr_v(hw_kw *w, bool flexible, hw_kstr s);

/* Placeholders: hw_kw_skip reserves n bytes and returns their offset (or
 * SIZE_MAX on error); hw_kw_patch_i32 / _i16 write a big-endian value there. */
size_t hw_kw_skip(hw_kw *w, size_t n);
void hw_kw_patch_i32(hw_kw *w, size_t at, int32_t v);
void hw_kw_patch_i16(hw_kw *w, size_t at, int16_t v);

#endif
