/* hw_batch_z.c — compressed RecordBatch v2: the records section of a
 * gzip/snappy/lz4/zstd batch decompressed for validation and iteration,
 * and the builder producers' compressed batches are made with in tests and
 * tools. See hw_batch.h (design note, "Compressed batches") and
 * docs/compression.md.
 */
#include "hw_batch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw_compress.h"

/* Kafka's attribute codec ids are lib/compress's codec ids. */
#define HW_BATCH_CODEC_SAME(n, v) _Static_assert((int)HW_BATCH_CODEC_##n == (int)HW_CODEC_##n, "codec " #n);
HW_BATCH_CODEC_TABLE(HW_BATCH_CODEC_SAME)
#undef HW_BATCH_CODEC_SAME

const char *const hw_compression_types[] = {
#define HW_CT_NAME(n, v) v,
	HW_COMPRESSION_TYPE_TABLE(HW_CT_NAME)
#undef HW_CT_NAME
	NULL
};

int hw_compression_type_check(const char *value)
{
	if (!value)
		return -EINVAL;
	for (size_t i = 0; hw_compression_types[i]; i++)
		if (strcmp(value, hw_compression_types[i]) == 0)
			return strcmp(value, HW_COMPRESSION_TYPE_DEFAULT) == 0 ? 0 : -ENOTSUP;
	return -EINVAL;
}

const char *hw_compression_type_error(int rc)
{
	if (rc == -ENOTSUP)
		return "only 'producer' is supported: hiwater stores batches as the producer "
		       "compressed them and does not recompress";
	if (rc < 0)
		return "expected one of uncompressed, zstd, lz4, snappy, gzip, producer";
	return "valid";
}

int hw_batch_records(const void *b, const hw_batch_hdr *h, hw_zbuf *scratch,
		     const uint8_t **p, const uint8_t **end)
{
	const uint8_t *sec = (const uint8_t *)b + HW_BATCH_OFF_RECORDS;
	size_t sec_len = h->size - HW_BATCH_HEADER_SIZE;
	int codec = hw_batch_codec(h);
	if (codec == HW_BATCH_CODEC_NONE) {
		*p = sec;
		*end = sec + sec_len;
		return 0;
	}
	*p = *end = NULL;
	if (codec > HW_BATCH_CODEC_ZSTD)
		return HW_BATCH_UNKNOWN_CODEC;
	if (!scratch)
		return HW_BATCH_DECOMPRESS_NOMEM;
	ssize_t n = hw_decompress_buf(NULL, codec, sec, sec_len, scratch, HW_BATCH_MAX_DECOMPRESSED);
	if (n < 0)
		return n == -EMSGSIZE ? HW_BATCH_DECOMPRESSED_TOO_LARGE :
		       n == -ENOMEM ? HW_BATCH_DECOMPRESS_NOMEM : HW_BATCH_DECOMPRESS;
	/* the count check hw_batch_validate makes on an uncompressed section */
	if ((size_t)h->record_count > (size_t)n / HW_BATCH_MIN_RECORD_SIZE)
		return HW_BATCH_BAD_RECORD_COUNT;
	*p = scratch->p;
	*end = scratch->p + n;
	return 0;
}

ssize_t hw_batch_build_compressed(void *buf, size_t cap, const hw_batch_spec *s,
				  const hw_record_in *recs, size_t n, int codec,
				  const hw_zopts *o)
{
	if (codec < HW_BATCH_CODEC_GZIP || codec > HW_BATCH_CODEC_ZSTD || !s ||
	    (s->attributes & HW_BATCH_ATTR_CODEC_MASK))
		return -EINVAL;
	ssize_t size = hw_batch_build_size(s, recs, n);
	if (size < 0)
		return size;
	/* phase 1: the uncompressed batch, in a buffer of its own */
	uint8_t *plain = malloc((size_t)size);
	if (!plain)
		return -ENOMEM;
	ssize_t rc = hw_batch_build(plain, (size_t)size, s, recs, n);
	if (rc < 0 || buf == NULL || cap < HW_BATCH_HEADER_SIZE) {
		free(plain);
		return rc < 0 ? rc : -EMSGSIZE;
	}
	/* phase 2: its records section compressed behind the same header */
	uint8_t *b = buf;
	ssize_t clen = hw_compress(codec, o, plain + HW_BATCH_OFF_RECORDS,
				   (size_t)size - HW_BATCH_HEADER_SIZE,
				   b + HW_BATCH_OFF_RECORDS, cap - HW_BATCH_HEADER_SIZE);
	if (clen < 0 || clen > INT32_MAX - HW_BATCH_HEADER_SIZE) {
		free(plain);
		return clen < 0 ? clen : -EMSGSIZE;
	}
	memcpy(b, plain, HW_BATCH_HEADER_SIZE);
	free(plain);
	/* phase 3: codec bits, length and CRC over the compressed bytes */
	size_t total = HW_BATCH_HEADER_SIZE + (size_t)clen;
	hw_be16_put(b + HW_BATCH_OFF_ATTRIBUTES, (uint16_t)((uint16_t)s->attributes | (uint16_t)codec));
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, (uint32_t)(total - HW_BATCH_LOG_OVERHEAD));
	hw_be32_put(b + HW_BATCH_OFF_CRC, hw_batch_compute_crc(b, total));
	return (ssize_t)total;
}
