/* hw_compress_enc.c — one-shot compression for tests and tools (the broker
 * never compresses: it stores batches as producers sent them). Output
 * layouts are the ones Kafka's producers write; see hw_compress.h. */
#include "hw_compress.h"
#include "hw_bytes.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define XERIAL_BLOCK 32768 /* xerial SnappyOutputStream's default block size */

static const hw_zopts hw_zopts_default = { 0, 0 };

static void lz4_prefs(LZ4F_preferences_t *p, int level)
{
	memset(p, 0, sizeof(*p));
	p->frameInfo.blockSizeID = LZ4F_max64KB;
	p->frameInfo.blockMode = LZ4F_blockIndependent;
	p->frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	p->compressionLevel = level;
}

/* Sum that reports overflow as 0 (the bound's "cannot" value). */
static size_t add_or_zero(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? 0 : a + b;
}

size_t hw_compress_bound(int codec, const hw_zopts *o, size_t n)
{
	if (!o)
		o = &hw_zopts_default;
	switch (codec) {
	case HW_CODEC_NONE:
		return n;
	case HW_CODEC_GZIP:
		/* zlib's compressBound plus the gzip wrapper (18 bytes, not
		 * zlib's 6), with margin */
		if (n > UINT_MAX)
			return 0;
		return add_or_zero((size_t)compressBound((uLong)n), 32);
	case HW_CODEC_SNAPPY:
		if (!o->snappy_xerial)
			return snappy_max_compressed_length(n);
		{
			size_t blocks = n / XERIAL_BLOCK + 1;
			size_t per = 4 + snappy_max_compressed_length(XERIAL_BLOCK);
			if (blocks > SIZE_MAX / per)
				return 0;
			return add_or_zero(blocks * per, 16);
		}
	case HW_CODEC_LZ4: {
		LZ4F_preferences_t p;
		lz4_prefs(&p, o->level);
		return LZ4F_compressFrameBound(n, &p);
	}
	case HW_CODEC_ZSTD:
		return ZSTD_compressBound(n);
	}
	return 0;
}

static ssize_t gz_encode(int level, const void *src, size_t n, void *dst, size_t cap)
{
	if (level < 0 || level > 9)
		return -EINVAL;
	if (n > UINT_MAX)
		return -EMSGSIZE;
	z_stream z;
	memset(&z, 0, sizeof z);
	int r = deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			     Z_DEFAULT_STRATEGY);
	if (r != Z_OK)
		return r == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	z.next_in = (Bytef *)(uintptr_t)src;
	z.avail_in = (uInt)n;
	z.next_out = dst;
	z.avail_out = cap > UINT_MAX ? UINT_MAX : (uInt)cap;
	r = deflate(&z, Z_FINISH);
	size_t out = (size_t)z.total_out;
	deflateEnd(&z);
	return r == Z_STREAM_END ? (ssize_t)out : -EMSGSIZE;
}

static ssize_t snappy_encode(int xerial, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
	if (!xerial) {
		size_t out = cap;
		snappy_status s = snappy_compress((const char *)src, n, (char *)dst, &out);
		return s == SNAPPY_OK ? (ssize_t)out : -EMSGSIZE;
	}
	static const uint8_t hdr[16] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
					 0, 0, 0, 1,    /* version 1 */
					 0, 0, 0, 1 };  /* compatible version 1 */
	if (cap < sizeof hdr)
		return -EMSGSIZE;
	memcpy(dst, hdr, sizeof hdr);
	size_t pos = sizeof hdr;
	for (size_t at = 0; at < n; at += XERIAL_BLOCK) {
		size_t k = n - at < XERIAL_BLOCK ? n - at : XERIAL_BLOCK;
		if (cap - pos < 4)
			return -EMSGSIZE;
		size_t out = cap - pos - 4;
		if (snappy_compress((const char *)src + at, k, (char *)dst + pos + 4, &out) != SNAPPY_OK)
			return -EMSGSIZE;
		hw_be32_put(dst + pos, (uint32_t)out);
		pos += 4 + out;
	}
	return (ssize_t)pos;
}

ssize_t hw_compress(int codec, const hw_zopts *o, const void *src, size_t n,
		    void *dst, size_t cap)
{
	if (!o)
		o = &hw_zopts_default;
	if ((!src && n) || (!dst && cap) || codec < 0 || codec >= HW_CODEC_COUNT ||
	    cap > (size_t)SSIZE_MAX)
		return -EINVAL;
	switch (codec) {
	case HW_CODEC_NONE:
		if (n > cap)
			return -EMSGSIZE;
		if (n)
			memcpy(dst, src, n);
		return (ssize_t)n;
	case HW_CODEC_GZIP:
		return gz_encode(o->level, src, n, dst, cap);
	case HW_CODEC_SNAPPY:
		return snappy_encode(o->snappy_xerial, src, n, dst, cap);
	case HW_CODEC_LZ4: {
		if (o->level < 0 || o->level > 12)
			return -EINVAL;
		LZ4F_preferences_t p;
		lz4_prefs(&p, o->level);
		/* LZ4F_compressFrame wants the whole bound, however well the
		 * input compresses */
		if (cap < LZ4F_compressFrameBound(n, &p))
			return -EMSGSIZE;
		size_t r = LZ4F_compressFrame(dst, cap, src, n, &p);
		return LZ4F_isError(r) ? -EINVAL : (ssize_t)r;
	}
	default: {
		if (o->level < 0 || o->level > ZSTD_maxCLevel())
			return -EINVAL;
		size_t r = ZSTD_compress(dst, cap, src, n, o->level ? o->level : 3);
		if (ZSTD_isError(r))
			return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ? -EMSGSIZE :
			       ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? -ENOMEM : -EINVAL;
		return (ssize_t)r;
	}
	}
}
