/* hw_compress.c — bounded decompression of gzip, snappy (raw and xerial),
 * lz4 frames and zstd. See hw_compress.h for the formats and the error
 * contract.
 *
 * Every streaming decoder (zlib, LZ4F, zstd) writes into an hw_zout: the
 * caller's fixed buffer, or a hw_zbuf grown by doubling up to the caller's
 * bound. Once the output is at its bound the decoder is given a one-byte
 * probe instead: if it writes into the probe the stream holds more than
 * the bound (-EMSGSIZE); if it finishes without writing, the output was
 * exactly the bound. So no decoder ever writes past the bound, and none is
 * ever asked to stop early on a valid stream that fits. Snappy knows its
 * uncompressed length before decoding (a varint at the start of each raw
 * block), so it is checked against the bound before any byte is written.
 */
#include "hw_compress.h"
#include "hw_bytes.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* ---- names ------------------------------------------------------------ */
const char *hw_codec_name(int codec)
{
	switch (codec) {
#define X(n, v, s) case (v): return s;
		HW_CODEC_TABLE(X)
#undef X
	}
	return "unknown";
}

int hw_codec_from_name(const char *name)
{
	if (!name)
		return -EINVAL;
#define X(n, v, s) if (strcmp(name, s) == 0) return (v);
	HW_CODEC_TABLE(X)
#undef X
	return -EINVAL;
}

/* ---- contexts ----------------------------------------------------------- */
struct hw_zctx {
	z_stream z;
	int z_ready;
	LZ4F_dctx *lz4;
	ZSTD_DCtx *zstd;
};

hw_zctx *hw_zctx_new(void)
{
	return calloc(1, sizeof(hw_zctx));
}

void hw_zctx_free(hw_zctx *c)
{
	if (!c)
		return;
	if (c->z_ready)
		inflateEnd(&c->z);
	if (c->lz4)
		LZ4F_freeDecompressionContext(c->lz4);
	ZSTD_freeDCtx(c->zstd); /* NULL is a no-op */
	free(c);
}

/* Per-thread state: the default context and the scratch buffers, freed by
 * the key's destructor when the thread exits. */
typedef struct hw_zthread {
	hw_zctx *ctx;
	hw_zbuf bufs[HW_ZBUF_THREAD_SLOTS];
} hw_zthread;

static pthread_key_t hw_zthread_key;
static pthread_once_t hw_zthread_once = PTHREAD_ONCE_INIT;
static int hw_zthread_key_rc;

static void hw_zthread_dtor(void *p)
{
	hw_zthread *t = p;
	hw_zctx_free(t->ctx);
	for (unsigned i = 0; i < HW_ZBUF_THREAD_SLOTS; i++)
		hw_zbuf_free(&t->bufs[i]);
	free(t);
}

static void hw_zthread_key_make(void)
{
	hw_zthread_key_rc = pthread_key_create(&hw_zthread_key, hw_zthread_dtor);
}

/* The calling thread's state (NULL on allocation failure). */
static hw_zthread *hw_zthread_get(void)
{
	pthread_once(&hw_zthread_once, hw_zthread_key_make);
	if (hw_zthread_key_rc != 0)
		return NULL;
	hw_zthread *t = pthread_getspecific(hw_zthread_key);
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (t && pthread_setspecific(hw_zthread_key, t) != 0) {
		free(t);
		t = NULL;
	}
	return t;
}

static hw_zctx *hw_zctx_thread(void)
{
	hw_zthread *t = hw_zthread_get();
	if (t && !t->ctx)
		t->ctx = hw_zctx_new();
	return t ? t->ctx : NULL;
}

hw_zbuf *hw_zbuf_thread(unsigned slot)
{
	if (slot >= HW_ZBUF_THREAD_SLOTS)
		return NULL;
	hw_zthread *t = hw_zthread_get();
	return t ? &t->bufs[slot] : NULL;
}

void hw_zbuf_free(hw_zbuf *b)
{
	if (!b)
		return;
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- bounded output ------------------------------------------------------ */
typedef struct hw_zout {
	uint8_t *p;
	size_t len, cap, max;
	hw_zbuf *grow;     /* NULL: fixed caller buffer (cap == max) */
	uint8_t probe[1];
	int probing;
} hw_zout;

/* Where the decoder may write next: *w, *room bytes (>= 1). At the bound,
 * the one-byte probe. Returns 0 or -ENOMEM. */
static int zout_room(hw_zout *o, uint8_t **w, size_t *room)
{
	if (o->len == o->cap && o->grow && o->cap < o->max) {
		size_t ncap = o->cap < 4096 ? 4096 : o->cap * 2;
		if (ncap > o->max || ncap < o->cap)
			ncap = o->max;
		uint8_t *np = realloc(o->p, ncap);
		if (!np)
			return -ENOMEM;
		o->p = o->grow->p = np;
		o->cap = o->grow->cap = ncap;
	}
	o->probing = o->len == o->cap;
	if (o->probing) {
		*w = o->probe;
		*room = 1;
	} else {
		*w = o->p + o->len;
		*room = o->cap - o->len;
	}
	return 0;
}

/* Account for n bytes the decoder wrote at zout_room's pointer. */
static int zout_commit(hw_zout *o, size_t n)
{
	if (o->probing)
		return n ? -EMSGSIZE : 0;
	o->len += n;
	return 0;
}

/* Make room for exactly n more bytes without a probe (snappy, copies). A
 * fixed buffer has cap == max, so it never reaches the realloc. */
static int zout_reserve(hw_zout *o, size_t n)
{
	if (n > o->max - o->len)
		return -EMSGSIZE;
	if (o->len + n <= o->cap)
		return 0;
	size_t ncap = o->cap < 4096 ? 4096 : o->cap;
	while (ncap < o->len + n)
		ncap = ncap > o->max / 2 ? o->max : ncap * 2;
	uint8_t *np = realloc(o->p, ncap);
	if (!np)
		return -ENOMEM;
	o->p = o->grow->p = np;
	o->cap = o->grow->cap = ncap;
	return 0;
}

/* ---- gzip ---------------------------------------------------------------- */
static int gz_ready(hw_zctx *c)
{
	if (c->z_ready)
		return inflateReset(&c->z) == Z_OK ? 0 : -ENOMEM;
	memset(&c->z, 0, sizeof(c->z));
	int r = inflateInit2(&c->z, 15 + 16); /* 32 KiB window, gzip wrapper only */
	if (r != Z_OK)
		return r == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	c->z_ready = 1;
	return 0;
}

static int gz_decode(hw_zctx *c, const uint8_t *src, size_t n, hw_zout *o)
{
	int rc = gz_ready(c);
	if (rc < 0)
		return rc;
	z_stream *z = &c->z;
	z->next_in = NULL; /* inflateReset keeps the last call's input */
	z->avail_in = 0;
	size_t fed = 0;
	for (;;) {
		if (z->avail_in == 0 && fed < n) {
			size_t k = n - fed > UINT_MAX ? UINT_MAX : n - fed;
			z->next_in = (Bytef *)(uintptr_t)(src + fed);
			z->avail_in = (uInt)k;
			fed += k;
		}
		uint8_t *w;
		size_t room;
		if ((rc = zout_room(o, &w, &room)) < 0)
			return rc;
		if (room > UINT_MAX)
			room = UINT_MAX;
		z->next_out = w;
		z->avail_out = (uInt)room;
		uInt in_before = z->avail_in;
		int r = inflate(z, Z_NO_FLUSH);
		size_t produced = room - z->avail_out;
		if ((rc = zout_commit(o, produced)) < 0)
			return rc;
		if (r == Z_STREAM_END) {
			if (z->avail_in == 0 && fed == n)
				return 0;
			/* another member follows (Java's GZIPInputStream reads them
			 * all); garbage fails in its header as Z_DATA_ERROR */
			if (inflateReset(z) != Z_OK)
				return -EBADMSG;
			continue;
		}
		if (r == Z_OK && (produced || z->avail_in != in_before))
			continue;
		if (r == Z_OK || r == Z_BUF_ERROR) {
			/* no progress with room to write: the input ran out */
			if (z->avail_in == 0 && fed == n)
				return -EBADMSG;
			continue;
		}
		return r == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
	}
}

/* ---- snappy --------------------------------------------------------------- */
static const uint8_t xerial_magic[8] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0 };
#define XERIAL_HEADER_SIZE 16 /* magic, int32 version, int32 compatible version */

static int snappy_block(const uint8_t *src, size_t n, hw_zout *o)
{
	size_t ulen;
	if (snappy_uncompressed_length((const char *)src, n, &ulen) != SNAPPY_OK)
		return -EBADMSG;
	int rc = zout_reserve(o, ulen);
	if (rc < 0)
		return rc;
	size_t got = ulen;
	char empty; /* an empty block decodes nowhere: o->p may still be NULL */
	char *dst = ulen ? (char *)o->p + o->len : &empty;
	if (snappy_uncompress((const char *)src, n, dst, &got) != SNAPPY_OK ||
	    got != ulen)
		return -EBADMSG;
	o->len += got;
	return 0;
}

static int is_xerial_header(const uint8_t *p, size_t n)
{
	return n >= XERIAL_HEADER_SIZE && memcmp(p, xerial_magic, sizeof xerial_magic) == 0;
}

static int snappy_decode(const uint8_t *src, size_t n, hw_zout *o)
{
	if (!is_xerial_header(src, n))
		return snappy_block(src, n, o);
	/* versions are not checked: every xerial version since 1 writes the
	 * same block layout (librdkafka does not check them either) */
	size_t pos = XERIAL_HEADER_SIZE;
	while (pos < n) {
		if (n - pos < 4)
			return -EBADMSG;
		if (is_xerial_header(src + pos, n - pos)) { /* concatenated stream */
			pos += XERIAL_HEADER_SIZE;
			continue;
		}
		uint32_t blen = hw_be32_get(src + pos);
		pos += 4;
		if (blen == 0 || blen > INT32_MAX || blen > n - pos)
			return -EBADMSG;
		int rc = snappy_block(src + pos, blen, o);
		if (rc < 0)
			return rc;
		pos += blen;
	}
	return 0;
}

/* ---- lz4 frame ------------------------------------------------------------ */
static int lz4_decode(hw_zctx *c, const uint8_t *src, size_t n, hw_zout *o)
{
	if (!c->lz4 && LZ4F_isError(LZ4F_createDecompressionContext(&c->lz4, LZ4F_VERSION))) {
		c->lz4 = NULL;
		return -ENOMEM;
	}
	LZ4F_resetDecompressionContext(c->lz4);
	size_t pos = 0;
	int rc;
	for (;;) {
		uint8_t *w;
		size_t room;
		if ((rc = zout_room(o, &w, &room)) < 0)
			return rc;
		size_t dsz = room, ssz = n - pos;
		size_t r = LZ4F_decompress(c->lz4, w, &dsz, src + pos, &ssz, NULL);
		if (LZ4F_isError(r)) {
			LZ4F_resetDecompressionContext(c->lz4);
			return -EBADMSG;
		}
		pos += ssz;
		if ((rc = zout_commit(o, dsz)) < 0) {
			LZ4F_resetDecompressionContext(c->lz4);
			return rc;
		}
		if (r == 0 && pos == n)
			return 0; /* a frame ended with the input */
		/* r == 0 with input left: the next frame starts (LZ4F resets
		 * itself after a complete frame). Otherwise it wants more input:
		 * if it had room to spare and none is left, the frame is cut. */
		if (r != 0 && pos == n && dsz < room) {
			LZ4F_resetDecompressionContext(c->lz4);
			return -EBADMSG;
		}
	}
}

/* ---- zstd ----------------------------------------------------------------- */
/* 0 if the zstd frame at f[0..n) declares no content size or the one it
 * produced (out bytes), else -EBADMSG. zstd's streaming path does not hold
 * a frame to its declared size (its one-shot path, taken when the output
 * has room for the whole frame, does): checked here, so the verdict does
 * not depend on the output's capacity. Skippable frames declare 0. */
static int zstd_frame_size_ok(const uint8_t *f, size_t n, size_t out)
{
	unsigned long long fcs = ZSTD_getFrameContentSize(f, n);
	if (fcs == ZSTD_CONTENTSIZE_UNKNOWN)
		return 0;
	return fcs == (unsigned long long)out ? 0 : -EBADMSG;
}

static int zstd_decode(hw_zctx *c, const uint8_t *src, size_t n, hw_zout *o)
{
	if (!c->zstd) {
		c->zstd = ZSTD_createDCtx();
		if (!c->zstd)
			return -ENOMEM;
		if (ZSTD_isError(ZSTD_DCtx_setParameter(c->zstd, ZSTD_d_windowLogMax,
							HW_ZSTD_WINDOW_LOG_MAX)))
			return -EINVAL;
	}
	ZSTD_DCtx_reset(c->zstd, ZSTD_reset_session_only);
	ZSTD_inBuffer in = { src, n, 0 };
	size_t frame_in = 0, frame_out = 0; /* where the current frame started */
	int rc;
	for (;;) {
		uint8_t *w;
		size_t room;
		if ((rc = zout_room(o, &w, &room)) < 0)
			return rc;
		ZSTD_outBuffer out = { w, room, 0 };
		size_t r = ZSTD_decompressStream(c->zstd, &out, &in);
		if (ZSTD_isError(r)) {
			ZSTD_DCtx_reset(c->zstd, ZSTD_reset_session_only);
			switch (ZSTD_getErrorCode(r)) {
			case ZSTD_error_memory_allocation: return -ENOMEM;
			case ZSTD_error_frameParameter_windowTooLarge: return -ENOTSUP;
			default: return -EBADMSG;
			}
		}
		if ((rc = zout_commit(o, out.pos)) < 0) {
			ZSTD_DCtx_reset(c->zstd, ZSTD_reset_session_only);
			return rc;
		}
		if (r == 0) { /* a frame ended and was flushed */
			if (zstd_frame_size_ok(src + frame_in, in.pos - frame_in, o->len - frame_out) < 0) {
				ZSTD_DCtx_reset(c->zstd, ZSTD_reset_session_only);
				return -EBADMSG;
			}
			if (in.pos == in.size)
				return 0;
			frame_in = in.pos; /* the next frame starts here */
			frame_out = o->len;
		}
		if (r != 0 && in.pos == in.size && out.pos < out.size) {
			ZSTD_DCtx_reset(c->zstd, ZSTD_reset_session_only);
			return -EBADMSG; /* room to spare, no input: cut frame */
		}
	}
}

/* ---- dispatch --------------------------------------------------------------- */
static int hw_decode(hw_zctx *ctx, int codec, const uint8_t *src, size_t n, hw_zout *o)
{
	if (codec < 0 || codec >= HW_CODEC_COUNT || (!src && n))
		return -EINVAL;
	if (codec == HW_CODEC_NONE) {
		int rc = zout_reserve(o, n);
		if (rc < 0)
			return rc;
		if (n)
			memcpy(o->p + o->len, src, n);
		o->len += n;
		return 0;
	}
	if (codec == HW_CODEC_SNAPPY)
		return snappy_decode(src, n, o);
	if (!ctx && !(ctx = hw_zctx_thread()))
		return -ENOMEM;
	switch (codec) {
	case HW_CODEC_GZIP: return gz_decode(ctx, src, n, o);
	case HW_CODEC_LZ4: return lz4_decode(ctx, src, n, o);
	default: return zstd_decode(ctx, src, n, o);
	}
}

ssize_t hw_decompress(hw_zctx *ctx, int codec, const void *src, size_t src_len,
		      void *dst, size_t dst_cap)
{
	if (!dst && dst_cap)
		return -EINVAL;
	hw_zout o = { .p = dst, .len = 0, .cap = dst_cap, .max = dst_cap };
	int rc = hw_decode(ctx, codec, src, src_len, &o);
	return rc < 0 ? rc : (ssize_t)o.len;
}

ssize_t hw_decompress_buf(hw_zctx *ctx, int codec, const void *src, size_t src_len,
			  hw_zbuf *out, size_t max)
{
	if (!out)
		return -EINVAL;
	if (max > (size_t)SSIZE_MAX)
		max = (size_t)SSIZE_MAX;
	out->len = 0;
	hw_zout o = { .p = out->p, .len = 0, .cap = out->cap < max ? out->cap : max,
		      .max = max, .grow = out };
	int rc = hw_decode(ctx, codec, src, src_len, &o);
	out->len = rc < 0 ? 0 : o.len;
	return rc < 0 ? rc : (ssize_t)o.len;
}
