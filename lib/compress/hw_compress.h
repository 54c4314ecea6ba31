/* hw_compress.h — bounded decompression (and compression, for tests and
 * tools) of the four codecs Kafka record batches use, with Debian's
 * libraries: gzip (zlib), snappy (libsnappy), lz4 frames (liblz4's
 * lz4frame.h), zstd (libzstd).
 *
 * Design note
 * -----------
 * A broker decompresses what a hostile client sent, so every decoder here
 * writes into an output whose size the CALLER bounds: a stream that would
 * inflate past the bound stops there with -EMSGSIZE (a decompression bomb
 * is an error, never an allocation of what the stream asks for). Memory the
 * libraries allocate on their own is bounded too: zlib's 32 KiB window, an
 * lz4 frame's block buffers (at most 4 MiB blocks), and zstd's window, which
 * is refused above 2^HW_ZSTD_WINDOW_LOG_MAX bytes (16 MiB; see below).
 *
 * Formats accepted, as the producers that write them:
 *   gzip   RFC 1952 (Java's GZIPOutputStream, librdkafka); concatenated
 *          members are read as one stream, as Java's GZIPInputStream does.
 *   snappy raw snappy (librdkafka, Go clients) or xerial's framing (Java's
 *          SnappyOutputStream: "\x82SNAPPY\0", int32 version, int32
 *          compatible version, then blocks of int32 big-endian length +
 *          raw snappy). A stream starting with the xerial magic is framed,
 *          anything else raw — xerial's SnappyInputStream decides the same
 *          way; a second xerial header where a block length is expected
 *          (concatenated streams) is skipped, as xerial does.
 *   lz4    the LZ4 frame format (magic 0x184D2204; Kafka's
 *          KafkaLZ4BlockOutputStream for record format v2, librdkafka);
 *          frames back to back are read as one stream; block and content
 *          checksums are verified when the frame carries them.
 *   zstd   zstd frames (zstd-jni, librdkafka), back to back, skippable
 *          frames skipped. The window is limited to 16 MiB (zstd's own
 *          default limit is 128 MiB): frames from compression levels 1-19
 *          fit; an ultra level (20-22) frame without a content size does
 *          not, and is refused with -ENOTSUP.
 * Bytes after the last complete gzip member / lz4 frame / zstd frame that
 * do not start another one are an error (-EBADMSG), and so is a stream
 * that ends inside a member, frame or block.
 *
 * Codec ids are Kafka's (RecordBatch attributes bits 0-2) because those are
 * the ids every caller has; nothing else here is Kafka-specific.
 *
 * Error contract (every function): >= 0 on success, else a negative errno:
 *   -EINVAL   unknown codec id, NULL buffer with a nonzero length, bad level
 *   -EBADMSG  corrupt, truncated or trailing data; checksum mismatch
 *   -ENOTSUP  valid data this build refuses to decode (zstd window > 16 MiB)
 *   -EMSGSIZE the output would exceed the caller's bound (dst_cap / max)
 *   -ENOMEM   a library context or the output buffer could not be allocated
 *
 * Thread-safety: a hw_zctx is used by one thread at a time. Passing ctx ==
 * NULL uses the calling thread's own context (created on first use, freed
 * when the thread exits), so the functions are safe to call from any
 * number of threads; so are a thread's scratch buffers (hw_zbuf_thread).
 */
#ifndef HW_COMPRESS_H
#define HW_COMPRESS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* X(NAME, id, name) — ids as in Kafka's CompressionType */
#define HW_CODEC_TABLE(X)                                                  \
	X(NONE,   0, "none")                                                 \
	X(GZIP,   1, "gzip")                                                 \
	X(SNAPPY, 2, "snappy")                                               \
	X(LZ4,    3, "lz4")                                                  \
	X(ZSTD,   4, "zstd")

enum hw_codec {
#define HW_CODEC_ENUM(n, v, s) HW_CODEC_##n = (v),
	HW_CODEC_TABLE(HW_CODEC_ENUM)
#undef HW_CODEC_ENUM
	HW_CODEC_COUNT
};

#define HW_ZSTD_WINDOW_LOG_MAX 24  /* 16 MiB */

/* "gzip"...; "unknown" for anything else. Never NULL. */
const char *hw_codec_name(int codec);
/* The id for "none"/"gzip"/"snappy"/"lz4"/"zstd" (exact, lower case), or
 * -EINVAL. */
int hw_codec_from_name(const char *name);

/* ---- contexts ---------------------------------------------------------- */
typedef struct hw_zctx hw_zctx;
/* A context holding one decoder per codec, each created on first use.
 * Returns NULL on allocation failure. */
hw_zctx *hw_zctx_new(void);
void hw_zctx_free(hw_zctx *ctx); /* NULL is a no-op */

/* ---- decompression ------------------------------------------------------ */
/* Decompress src[0..src_len) of codec into dst[0..dst_cap). Returns the
 * bytes written (all of the stream), or -EMSGSIZE if the stream holds more
 * than dst_cap bytes (dst then holds its first dst_cap bytes), or another
 * error above. HW_CODEC_NONE copies. */
ssize_t hw_decompress(hw_zctx *ctx, int codec, const void *src, size_t src_len,
		      void *dst, size_t dst_cap);

/* A growable output buffer owned by its user: p is malloc'ed (or NULL),
 * len bytes are valid, cap allocated. Zero-initialise it; hw_zbuf_free
 * releases it. */
typedef struct hw_zbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
} hw_zbuf;
void hw_zbuf_free(hw_zbuf *b);

/* The calling thread's scratch buffer number slot (0 ..
 * HW_ZBUF_THREAD_SLOTS - 1; each user of a slot names it in its header),
 * freed when the thread exits. NULL for a bad slot or on allocation
 * failure. */
#define HW_ZBUF_THREAD_SLOTS 4
hw_zbuf *hw_zbuf_thread(unsigned slot);

/* Decompress src into out->p[0..), replacing its contents, growing out->p
 * (realloc) as the stream needs but never past max bytes. Returns the
 * decompressed length (== out->len), -EMSGSIZE if the stream holds more
 * than max bytes, or another error above; on error out->len is 0 and the
 * buffer stays allocated (reusable). */
ssize_t hw_decompress_buf(hw_zctx *ctx, int codec, const void *src, size_t src_len,
			  hw_zbuf *out, size_t max);

/* ---- compression (tests, tools) ----------------------------------------- */
typedef struct hw_zopts {
	int level;          /* 0 = the codec's default; gzip 1-9, lz4 0-12, zstd 1-22 */
	int snappy_xerial;  /* snappy: write xerial framing (as Java) instead of raw */
} hw_zopts;

/* An upper bound of hw_compress's output for src_len input bytes, or 0 if
 * codec is unknown or the bound overflows. */
size_t hw_compress_bound(int codec, const hw_zopts *o, size_t src_len);
/* Compress src into dst[0..dst_cap) (o may be NULL: defaults). Returns the
 * bytes written, -EMSGSIZE if dst_cap is too small (use hw_compress_bound),
 * -EINVAL or -ENOMEM. The output is one gzip member / one lz4 frame (64 KiB
 * independent blocks, content checksum) / one zstd frame (content size
 * set). */
ssize_t hw_compress(int codec, const hw_zopts *o, const void *src, size_t src_len,
		    void *dst, size_t dst_cap);

#endif
