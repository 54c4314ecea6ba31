/* hw_batch.c — Kafka RecordBatch v2 codec. See hw_batch.h for the design
 * note, the layout and the error contract.
 *
 * Every read below is guarded by an explicit "bytes left" check against the
 * end of the batch (never the end of the caller's buffer, so a record cannot
 * borrow bytes from the next batch). Offsets and timestamps derived from
 * hostile deltas use unsigned wrapping arithmetic: garbage in, garbage out,
 * but no undefined behaviour.
 */
#include "hw_batch.h"

#include <errno.h>
#include <limits.h>

#include "hw_crc32c.h"
#include "hw_err.h"
#include "hw_assert.h"
#include "hw_varint.h"

/* ---- names ------------------------------------------------------------ */
const char *hw_batch_codec_name(int codec)
{
	switch (codec) {
	case HW_BATCH_CODEC_NONE: return "none";
	case HW_BATCH_CODEC_GZIP: return "gzip";
	case HW_BATCH_CODEC_SNAPPY: return "snappy";
	case HW_BATCH_CODEC_LZ4: return "lz4";
	case HW_BATCH_CODEC_ZSTD: return "zstd";
	}
	return "unknown";
}

const char *hw_batch_rc_name(int rc)
{
	switch (rc) {
#define X(name, num, kerr, desc) case -(num): return #name;
		HW_BATCH_RC_TABLE(X)
#undef X
	}
	return rc > 0 ? "OK" : "UNKNOWN";
}

const char *hw_batch_rc_desc(int rc)
{
	switch (rc) {
#define X(name, num, kerr, desc) case -(num): return desc;
		HW_BATCH_RC_TABLE(X)
#undef X
	}
	return rc > 0 ? "valid" : "not a hw_batch result code";
}

int hw_batch_rc_kafka(int rc)
{
	if (rc >= 0)
		return HW_ERR_NONE;
	switch (rc) {
#define X(name, num, kerr, desc) case -(num): return HW_ERR_##kerr;
		HW_BATCH_RC_TABLE(X)
#undef X
	}
	return HW_ERR_UNKNOWN_SERVER_ERROR;
}

/* ---- sequences -------------------------------------------------------- */
int32_t hw_batch_seq_add(int32_t seq, int32_t inc)
{
	/* Kafka: sequences wrap from INT32_MAX to 0. */
	if (seq > INT32_MAX - inc)
		return inc - (INT32_MAX - seq) - 1;
	return seq + inc;
}

int32_t hw_batch_last_sequence(const hw_batch_hdr *h)
{
	if (h->base_sequence == HW_NO_SEQUENCE)
		return HW_NO_SEQUENCE;
	if (h->base_sequence < 0 || h->last_offset_delta < 0)
		return h->base_sequence; /* hostile header: no arithmetic on nonsense */
	return hw_batch_seq_add(h->base_sequence, h->last_offset_delta);
}

/* ---- header ------------------------------------------------------------ */
static void hw_batch_read_header(const uint8_t *b, hw_batch_hdr *h)
{
	h->base_offset = (int64_t)hw_be64_get(b + HW_BATCH_OFF_BASE_OFFSET);
	h->batch_length = (int32_t)hw_be32_get(b + HW_BATCH_OFF_LENGTH);
	h->partition_leader_epoch = (int32_t)hw_be32_get(b + HW_BATCH_OFF_LEADER_EPOCH);
	h->magic = (int8_t)b[HW_BATCH_OFF_MAGIC];
	h->crc = hw_be32_get(b + HW_BATCH_OFF_CRC);
	h->attributes = (int16_t)hw_be16_get(b + HW_BATCH_OFF_ATTRIBUTES);
	h->last_offset_delta = (int32_t)hw_be32_get(b + HW_BATCH_OFF_LAST_DELTA);
	h->base_timestamp = (int64_t)hw_be64_get(b + HW_BATCH_OFF_BASE_TS);
	h->max_timestamp = (int64_t)hw_be64_get(b + HW_BATCH_OFF_MAX_TS);
	h->producer_id = (int64_t)hw_be64_get(b + HW_BATCH_OFF_PRODUCER_ID);
	h->producer_epoch = (int16_t)hw_be16_get(b + HW_BATCH_OFF_PRODUCER_EPOCH);
	h->base_sequence = (int32_t)hw_be32_get(b + HW_BATCH_OFF_BASE_SEQ);
	h->record_count = (int32_t)hw_be32_get(b + HW_BATCH_OFF_COUNT);
	h->size = 0;
}

int hw_batch_parse_header(const void *buf, size_t len, hw_batch_hdr *hdr)
{
	hw_batch_hdr tmp;
	hw_batch_hdr *h = hdr ? hdr : &tmp;
	if (len < HW_BATCH_HEADER_SIZE || buf == NULL)
		return HW_BATCH_SHORT_HEADER;
	hw_batch_read_header(buf, h);
	if (h->batch_length < HW_BATCH_MIN_BATCH_LENGTH ||
	    h->batch_length > INT32_MAX - HW_BATCH_LOG_OVERHEAD)
		return HW_BATCH_BAD_BATCH_LENGTH;
	h->size = (uint32_t)h->batch_length + HW_BATCH_LOG_OVERHEAD;
	if (len < h->size)
		return HW_BATCH_TRUNCATED;
	return 0;
}

uint32_t hw_batch_compute_crc(const void *buf, size_t size)
{
	return hw_crc32c(0, (const uint8_t *)buf + HW_BATCH_OFF_ATTRIBUTES,
			 size - HW_BATCH_OFF_ATTRIBUTES);
}

/* Header-level checks after framing (magic, CRC, codec, counts, flags). */
static int hw_batch_check_header(const uint8_t *b, const hw_batch_hdr *h, unsigned flags)
{
	if (h->magic != HW_BATCH_MAGIC)
		return HW_BATCH_BAD_MAGIC;
	if ((flags & HW_BATCH_V_CRC) && hw_batch_compute_crc(b, h->size) != h->crc)
		return HW_BATCH_BAD_CRC;
	int codec = hw_batch_codec(h);
	if (codec > HW_BATCH_CODEC_ZSTD)
		return HW_BATCH_UNKNOWN_CODEC;
	/* a compressed section's length says nothing about the record count:
	 * hw_batch_records checks it against the decompressed length */
	size_t body = h->size - HW_BATCH_HEADER_SIZE;
	int count_ok = (flags & HW_BATCH_V_COMPACTED)
			       ? h->record_count >= 0 && h->last_offset_delta >= 0 &&
					 (int64_t)h->record_count <= (int64_t)h->last_offset_delta + 1
			       : h->record_count >= 1 && h->last_offset_delta == h->record_count - 1;
	if (!count_ok || (codec == HW_BATCH_CODEC_NONE &&
			  (size_t)h->record_count > body / HW_BATCH_MIN_RECORD_SIZE))
		return HW_BATCH_BAD_RECORD_COUNT;
	if (hw_batch_is_control(h)) {
		if (flags & HW_BATCH_V_FROM_CLIENT)
			return HW_BATCH_CONTROL_FROM_CLIENT;
		if (!hw_batch_is_transactional(h) || h->record_count != 1)
			return HW_BATCH_BAD_CONTROL;
	}
	if (hw_batch_is_transactional(h) && !hw_batch_has_producer_id(h))
		return HW_BATCH_BAD_PRODUCER;
	if ((flags & HW_BATCH_V_FROM_CLIENT) && hw_batch_has_producer_id(h) &&
	    (h->base_sequence < 0 || h->producer_epoch < 0))
		return HW_BATCH_BAD_PRODUCER;
	return 0;
}

int hw_batch_validate(const void *buf, size_t len, hw_batch_hdr *hdr, unsigned flags)
{
	hw_batch_hdr tmp;
	hw_batch_hdr *h = hdr ? hdr : &tmp;
	int rc = hw_batch_parse_header(buf, len, h);
	if (rc < 0)
		return rc;
	rc = hw_batch_check_header(buf, h, flags);
	if (rc < 0 || !(flags & HW_BATCH_V_RECORDS))
		return rc;
	hw_record_iter it;
	hw_record rec;
	hw_zbuf *scratch = NULL;
	if (hw_batch_codec(h) != HW_BATCH_CODEC_NONE &&
	    !(scratch = hw_zbuf_thread(HW_BATCH_ZSLOT_VALIDATE)))
		return HW_BATCH_DECOMPRESS_NOMEM;
	it.hdr = *h;
	it.index = 0;
	it.rc = 0;
	it.compacted = !!(flags & HW_BATCH_V_COMPACTED);
	it.prev_delta = -1;
	rc = hw_batch_records(buf, h, scratch, &it.p, &it.end);
	if (rc == 0)
		while ((rc = hw_record_iter_next(&it, &rec)) > 0)
			;
	if (scratch && scratch->cap > HW_BATCH_ZSCRATCH_KEEP)
		hw_zbuf_free(scratch); /* a rare huge batch: do not keep its memory */
	return rc;
}

/* ---- batch iteration --------------------------------------------------- */
void hw_batch_iter_init(hw_batch_iter *it, const void *buf, size_t len, unsigned flags)
{
	it->buf = buf;
	it->len = buf ? len : 0;
	it->pos = 0;
	it->flags = flags;
	it->rc = 0;
	it->partial = 0;
}

int hw_batch_iter_next(hw_batch_iter *it, hw_batch_hdr *hdr, const uint8_t **batch)
{
	if (it->rc < 0)
		return it->rc;
	if (it->partial || it->pos == it->len)
		return 0;
	hw_batch_hdr tmp;
	hw_batch_hdr *h = hdr ? hdr : &tmp;
	const uint8_t *b = it->buf + it->pos;
	size_t left = it->len - it->pos;
	/* A partial tail: not even the fixed prefix up to batchLength, or fewer
	 * bytes than batchLength announces. A nonsense batchLength is corruption,
	 * not a partial batch, but it can only be judged once 12 bytes are in. */
	if (left < HW_BATCH_LOG_OVERHEAD) {
		it->partial = 1;
		return 0;
	}
	int32_t blen = (int32_t)hw_be32_get(b + HW_BATCH_OFF_LENGTH);
	if (blen < HW_BATCH_MIN_BATCH_LENGTH || blen > INT32_MAX - HW_BATCH_LOG_OVERHEAD)
		return it->rc = HW_BATCH_BAD_BATCH_LENGTH;
	if (left < HW_BATCH_HEADER_SIZE || left < (size_t)blen + HW_BATCH_LOG_OVERHEAD) {
		it->partial = 1;
		return 0;
	}
	int rc = hw_batch_validate(b, left, h, it->flags);
	if (rc < 0)
		return it->rc = rc;
	it->pos += h->size;
	if (batch)
		*batch = b;
	return 1;
}

/* ---- stamping ----------------------------------------------------------- */
void hw_batch_set_base_offset(void *buf, int64_t base_offset)
{
	hw_be64_put((uint8_t *)buf + HW_BATCH_OFF_BASE_OFFSET, (uint64_t)base_offset);
}

void hw_batch_set_leader_epoch(void *buf, int32_t epoch)
{
	hw_be32_put((uint8_t *)buf + HW_BATCH_OFF_LEADER_EPOCH, (uint32_t)epoch);
}

int hw_batch_update_crc(void *buf, size_t len)
{
	hw_batch_hdr h;
	int rc = hw_batch_parse_header(buf, len, &h);
	if (rc < 0)
		return rc;
	hw_be32_put((uint8_t *)buf + HW_BATCH_OFF_CRC, hw_batch_compute_crc(buf, h.size));
	return 0;
}

int hw_batch_set_log_append_time(void *buf, size_t len, int64_t ts)
{
	hw_batch_hdr h;
	int rc = hw_batch_parse_header(buf, len, &h);
	if (rc < 0)
		return rc;
	uint8_t *b = buf;
	uint16_t attr = (uint16_t)h.attributes | HW_BATCH_ATTR_LOG_APPEND_TIME;
	hw_be16_put(b + HW_BATCH_OFF_ATTRIBUTES, attr);
	hw_be64_put(b + HW_BATCH_OFF_MAX_TS, (uint64_t)ts);
	hw_be32_put(b + HW_BATCH_OFF_CRC, hw_batch_compute_crc(b, h.size));
	return 0;
}

/* ---- record iteration --------------------------------------------------- */
int hw_record_iter_init_buf(hw_record_iter *it, const void *buf, size_t len, unsigned flags,
			    hw_zbuf *scratch)
{
	it->index = 0;
	it->compacted = !!(flags & HW_BATCH_V_COMPACTED);
	it->prev_delta = -1;
	it->p = it->end = NULL;
	int rc = hw_batch_validate(buf, len, &it->hdr, flags & ~HW_BATCH_V_RECORDS);
	if (rc == 0)
		rc = hw_batch_records(buf, &it->hdr, scratch, &it->p, &it->end);
	it->rc = rc < 0 ? rc : 0;
	return rc;
}

int hw_record_iter_init(hw_record_iter *it, const void *buf, size_t len, unsigned flags)
{
	/* the scratch is only looked up (and created) for a compressed batch */
	hw_zbuf *scratch = NULL;
	if (len >= HW_BATCH_HEADER_SIZE && buf &&
	    (hw_be16_get((const uint8_t *)buf + HW_BATCH_OFF_ATTRIBUTES) & HW_BATCH_ATTR_CODEC_MASK))
		scratch = hw_zbuf_thread(HW_BATCH_ZSLOT_ITER);
	return hw_record_iter_init_buf(it, buf, len, flags, scratch);
}

/* Varint readers bounded by end; map varint errors to record rcs. */
static inline int hw_rec_i32(const uint8_t **p, const uint8_t *end, int32_t *v)
{
	/* fast path: most record varints (attributes aside) are one byte */
	if (HW_LIKELY(*p < end && **p < 0x80)) {
		*v = hw_unzigzag32(**p);
		(*p)++;
		return 0;
	}
	int n = hw_varint_get_i32(*p, (size_t)(end - *p), v);
	if (n < 0)
		return n == -EMSGSIZE ? HW_BATCH_RECORD_TRUNCATED : HW_BATCH_RECORD_VARINT;
	*p += n;
	return 0;
}

static inline int hw_rec_i64(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	if (HW_LIKELY(*p < end && **p < 0x80)) {
		*v = hw_unzigzag64(**p);
		(*p)++;
		return 0;
	}
	int n = hw_varlong_get_i64(*p, (size_t)(end - *p), v);
	if (n < 0)
		return n == -EMSGSIZE ? HW_BATCH_RECORD_TRUNCATED : HW_BATCH_RECORD_VARINT;
	*p += n;
	return 0;
}

/* A length-prefixed byte field; -1 means null unless !nullable. */
static int hw_rec_bytes(const uint8_t **p, const uint8_t *end, int nullable,
			const uint8_t **data, int32_t *len)
{
	int rc = hw_rec_i32(p, end, len);
	if (rc < 0)
		return rc;
	if (*len == -1 && nullable) {
		*data = NULL;
		return 0;
	}
	if (*len < 0)
		return HW_BATCH_FIELD_LENGTH;
	if ((size_t)*len > (size_t)(end - *p))
		return HW_BATCH_RECORD_TRUNCATED;
	*data = *p;
	*p += *len;
	return 0;
}

int hw_record_header_next(const uint8_t **p, const uint8_t *end, hw_record_header *h)
{
	if (*p >= end)
		return 0;
	int rc = hw_rec_bytes(p, end, 0, &h->key, &h->key_len);
	if (rc < 0)
		return rc;
	rc = hw_rec_bytes(p, end, 1, &h->value, &h->value_len);
	return rc < 0 ? rc : 1;
}

static int hw_record_parse(hw_record_iter *it, hw_record *r)
{
	const uint8_t *start = it->p, *p = it->p;
	int32_t body_len;
	int rc = hw_rec_i32(&p, it->end, &body_len);
	if (rc < 0)
		return rc;
	if (body_len < 0)
		return HW_BATCH_RECORD_LENGTH;
	if ((size_t)body_len > (size_t)(it->end - p))
		return HW_BATCH_RECORD_TRUNCATED;
	const uint8_t *rend = p + body_len; /* fields must end exactly here */
	if (p >= rend)
		return HW_BATCH_RECORD_TRUNCATED;
	r->attributes = (int8_t)*p++;
	if ((rc = hw_rec_i64(&p, rend, &r->timestamp_delta)) < 0 ||
	    (rc = hw_rec_i32(&p, rend, &r->offset_delta)) < 0)
		return rc;
	if (it->compacted ? r->offset_delta <= it->prev_delta ||
				    r->offset_delta > it->hdr.last_offset_delta
			  : r->offset_delta != it->index)
		return HW_BATCH_OFFSET_DELTA;
	if ((rc = hw_rec_bytes(&p, rend, 1, &r->key, &r->key_len)) < 0 ||
	    (rc = hw_rec_bytes(&p, rend, 1, &r->value, &r->value_len)) < 0 ||
	    (rc = hw_rec_i32(&p, rend, &r->header_count)) < 0)
		return rc;
	/* Each header takes at least 2 bytes (two one-byte varints). */
	if (r->header_count < 0 || (size_t)r->header_count > (size_t)(rend - p) / 2)
		return HW_BATCH_HEADER_COUNT;
	r->headers = p;
	for (int32_t i = 0; i < r->header_count; i++) {
		hw_record_header h;
		rc = hw_record_header_next(&p, rend, &h);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return HW_BATCH_RECORD_TRUNCATED;
	}
	r->headers_len = (size_t)(p - r->headers);
	if (p != rend)
		return HW_BATCH_RECORD_LENGTH;
	r->offset = (int64_t)((uint64_t)it->hdr.base_offset + (uint64_t)(int64_t)r->offset_delta);
	r->timestamp = hw_batch_is_log_append_time(&it->hdr) ?
		it->hdr.max_timestamp :
		(int64_t)((uint64_t)it->hdr.base_timestamp + (uint64_t)r->timestamp_delta);
	r->raw = start;
	r->raw_len = (size_t)(rend - start);
	it->p = rend;
	return 1;
}

int hw_record_iter_next(hw_record_iter *it, hw_record *rec)
{
	if (it->rc < 0)
		return it->rc;
	if (it->index >= it->hdr.record_count) {
		if (it->p != it->end)
			return it->rc = HW_BATCH_RECORD_COUNT;
		return 0;
	}
	if (it->p >= it->end)
		return it->rc = HW_BATCH_RECORD_COUNT;
	hw_record tmp;
	int rc = hw_record_parse(it, rec ? rec : &tmp);
	if (rc < 0)
		return it->rc = rc;
	it->index++;
	it->prev_delta = (rec ? rec : &tmp)->offset_delta;
	return 1;
}

/* ---- builder ------------------------------------------------------------ */
void hw_batch_spec_init(hw_batch_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->partition_leader_epoch = HW_NO_PARTITION_LEADER_EPOCH;
	s->producer_id = HW_NO_PRODUCER_ID;
	s->producer_epoch = HW_NO_PRODUCER_EPOCH;
	s->base_sequence = HW_NO_SEQUENCE;
	s->log_append_time = HW_NO_TIMESTAMP;
}

static int64_t hw_ts_delta(int64_t ts, int64_t base)
{
	return (int64_t)((uint64_t)ts - (uint64_t)base);
}

/* Size of a nullable field: NULL pointer encodes as -1. */
static int64_t hw_field_size(const void *data, int32_t len)
{
	if (data == NULL)
		return hw_varint_size_i32(-1);
	if (len < 0)
		return -1;
	return hw_varint_size_i32(len) + (int64_t)len;
}

/* Body size (excluding the length varint) of record i, or -1 if invalid. */
static int64_t hw_record_body_size(const hw_record_in *r, int32_t index, int64_t base_ts)
{
	int64_t sz = 1 + hw_varlong_size_i64(hw_ts_delta(r->timestamp, base_ts)) +
		     hw_varint_size_i32(index);
	int64_t k = hw_field_size(r->key, r->key_len), v = hw_field_size(r->value, r->value_len);
	if (k < 0 || v < 0 || r->header_count < 0 || (r->header_count > 0 && !r->headers))
		return -1;
	sz += k + v + hw_varint_size_i32(r->header_count);
	for (int32_t i = 0; i < r->header_count; i++) {
		const hw_record_header *h = &r->headers[i];
		if (h->key == NULL || h->key_len < 0)
			return -1;
		int64_t hv = hw_field_size(h->value, h->value_len);
		if (hv < 0)
			return -1;
		sz += hw_varint_size_i32(h->key_len) + h->key_len + hv;
		if (sz > INT32_MAX)
			return -1;
	}
	return sz > INT32_MAX ? -1 : sz;
}

ssize_t hw_batch_build_size(const hw_batch_spec *s, const hw_record_in *recs, size_t n)
{
	if (!s || !recs || n < 1 || n > INT32_MAX)
		return -EINVAL;
	int64_t total = HW_BATCH_HEADER_SIZE;
	for (size_t i = 0; i < n; i++) {
		int64_t body = hw_record_body_size(&recs[i], (int32_t)i, recs[0].timestamp);
		if (body < 0)
			return -EINVAL;
		total += hw_varint_size_i32((int32_t)body) + body;
		if (total > INT32_MAX)
			return -EINVAL;
	}
	return (ssize_t)total;
}

/* Writers for the builder; capacity was checked up front. */
static uint8_t *hw_put_i32(uint8_t *p, int32_t v)
{
	return p + hw_varint_put_i32(p, HW_VARINT_MAX_BYTES, v);
}

static uint8_t *hw_put_field(uint8_t *p, const void *data, int32_t len)
{
	if (data == NULL)
		return hw_put_i32(p, -1);
	p = hw_put_i32(p, len);
	memcpy(p, data, (size_t)len);
	return p + len;
}

ssize_t hw_batch_build(void *buf, size_t cap, const hw_batch_spec *s,
		       const hw_record_in *recs, size_t n)
{
	ssize_t size = hw_batch_build_size(s, recs, n);
	if (size < 0)
		return size;
	if (s->attributes & HW_BATCH_ATTR_CODEC_MASK)
		return -EINVAL;
	if (buf == NULL || (size_t)size > cap)
		return -EMSGSIZE;
	uint8_t *b = buf, *p = b + HW_BATCH_OFF_RECORDS;
	int64_t base_ts = recs[0].timestamp, max_ts = recs[0].timestamp;
	for (size_t i = 0; i < n; i++) {
		const hw_record_in *r = &recs[i];
		int64_t delta = hw_ts_delta(r->timestamp, base_ts);
		int32_t body = (int32_t)hw_record_body_size(r, (int32_t)i, base_ts);
		if (r->timestamp > max_ts)
			max_ts = r->timestamp;
		p = hw_put_i32(p, body);
		*p++ = 0; /* record attributes: unused in v2 */
		p += hw_varlong_put_i64(p, HW_VARLONG_MAX_BYTES, delta);
		p = hw_put_i32(p, (int32_t)i);
		p = hw_put_field(p, r->key, r->key_len);
		p = hw_put_field(p, r->value, r->value_len);
		p = hw_put_i32(p, r->header_count);
		for (int32_t j = 0; j < r->header_count; j++) {
			p = hw_put_field(p, r->headers[j].key, r->headers[j].key_len);
			p = hw_put_field(p, r->headers[j].value, r->headers[j].value_len);
		}
	}
	if (s->attributes & HW_BATCH_ATTR_LOG_APPEND_TIME)
		max_ts = s->log_append_time;
	hw_be64_put(b + HW_BATCH_OFF_BASE_OFFSET, (uint64_t)s->base_offset);
	hw_be32_put(b + HW_BATCH_OFF_LENGTH, (uint32_t)(size - HW_BATCH_LOG_OVERHEAD));
	hw_be32_put(b + HW_BATCH_OFF_LEADER_EPOCH, (uint32_t)s->partition_leader_epoch);
	b[HW_BATCH_OFF_MAGIC] = HW_BATCH_MAGIC;
	hw_be16_put(b + HW_BATCH_OFF_ATTRIBUTES, (uint16_t)s->attributes);
	hw_be32_put(b + HW_BATCH_OFF_LAST_DELTA, (uint32_t)(n - 1));
	hw_be64_put(b + HW_BATCH_OFF_BASE_TS, (uint64_t)base_ts);
	hw_be64_put(b + HW_BATCH_OFF_MAX_TS, (uint64_t)max_ts);
	hw_be64_put(b + HW_BATCH_OFF_PRODUCER_ID, (uint64_t)s->producer_id);
	hw_be16_put(b + HW_BATCH_OFF_PRODUCER_EPOCH, (uint16_t)s->producer_epoch);
	hw_be32_put(b + HW_BATCH_OFF_BASE_SEQ, (uint32_t)s->base_sequence);
	hw_be32_put(b + HW_BATCH_OFF_COUNT, (uint32_t)n);
	hw_be32_put(b + HW_BATCH_OFF_CRC, hw_batch_compute_crc(b, (size_t)size));
	HW_ASSERT(p == b + size);
	return size;
}
