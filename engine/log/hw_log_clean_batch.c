/* hw_log_clean_batch.c — the cleaned form of one RecordBatch v2, as
 * Kafka's MemoryRecords.filterTo with LogCleaner's record filter
 * (shouldRetainRecord): a record stays if it has a key, is the latest
 * for that key, and is not a tombstone whose batch's delete horizon has
 * passed. A rebuilt batch keeps baseOffset, lastOffsetDelta (Kafka's
 * overrideLastOffset: the producer's last sequence must survive),
 * partitionLeaderEpoch and the producer fields; it gets recordsCount,
 * maxTimestamp (CreateTime: the largest kept), batchLength and a CRC
 * anew. Record bytes are copied as they are unless the batch gets its
 * delete horizon now, which moves baseTimestamp (KIP-534: the horizon is
 * stored there) and so every record's timestampDelta. docs/compaction.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_compress.h"
#include "hw_log_clean_int.h"
#include "hw_varint.h"

static const char *const action_names[] = {
#define X(n) #n,
	HW_CLEAN_ACTION_TABLE(X)
#undef X
};

const char *hw_clean_action_name(int a)
{
	return a >= 0 && a < (int)(sizeof(action_names) / sizeof(*action_names)) ? action_names[a] : "UNKNOWN";
}

static int buf_reserve(hw_clean_buf *o, size_t need)
{
	if (need <= o->cap)
		return 0;
	size_t cap = o->cap ? o->cap : 4096;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	uint8_t *p = realloc(o->p, cap);
	if (!p)
		return -ENOMEM;
	o->p = p;
	o->cap = cap;
	return 0;
}

/* Append record r to recs at *n, re-encoding its timestampDelta relative
 * to new_base_ts when shift is set (the rest of its bytes as they are). */
static int put_record(hw_clean_buf *recs, size_t *n, const hw_record *r, int shift, int64_t new_base_ts)
{
	if (!shift) {
		int rc = buf_reserve(recs, *n + r->raw_len);
		if (rc)
			return rc;
		memcpy(recs->p + *n, r->raw, r->raw_len);
		*n += r->raw_len;
		return 0;
	}
	/* raw: length varint, attributes, timestampDelta varlong, rest */
	const uint8_t *p = r->raw, *end = r->raw + r->raw_len;
	int32_t body;
	int k = hw_varint_get_i32(p, (size_t)(end - p), &body);
	if (k < 0 || p + k >= end)
		return HW_BATCH_RECORD_TRUNCATED;
	p += k + 1; /* + attributes */
	int64_t old_delta;
	k = hw_varlong_get_i64(p, (size_t)(end - p), &old_delta);
	if (k < 0)
		return HW_BATCH_RECORD_VARINT;
	const uint8_t *rest = p + k;
	size_t rest_len = (size_t)(end - rest);
	int64_t delta = (int64_t)((uint64_t)r->timestamp - (uint64_t)new_base_ts);
	size_t nbody = 1 + (size_t)hw_varlong_size_i64(delta) + rest_len;
	if (nbody > INT32_MAX)
		return -EINVAL;
	int rc = buf_reserve(recs, *n + 5 + nbody);
	if (rc)
		return rc;
	uint8_t *w = recs->p + *n;
	size_t cap = recs->cap - *n;
	int a = hw_varint_put_i32(w, cap, (int32_t)nbody);
	w[a] = (uint8_t)r->attributes;
	int b = hw_varlong_put_i64(w + a + 1, cap - (size_t)a - 1, delta);
	memcpy(w + a + 1 + b, rest, rest_len);
	*n += (size_t)a + 1 + (size_t)b + rest_len;
	return 0;
}

/* What happens to record r of batch h; updates the tallies. 1: it stays. */
static int keep_record(const hw_clean_filter *f, const hw_batch_hdr *h, const hw_record *r,
		       hw_clean_outcome *res, int *tombstone_kept)
{
	if (!r->key) {
		res->unkeyed++; /* Kafka refuses unkeyed records on compacted topics */
		return 0;
	}
	if (!f->latest(f->ctx, r->key, r->key_len, r->offset))
		return 0;
	if (r->value)
		return 1;
	int has_horizon = (h->attributes & HW_BATCH_ATTR_DELETE_HORIZON) != 0;
	if (has_horizon && f->now_ms >= h->base_timestamp) {
		res->tombstones_removed++;
		return 0;
	}
	*tombstone_kept = 1;
	return 1;
}

/* The 61-byte header of the rebuilt batch (or of an empty one) at o. */
static void write_header(uint8_t *o, const uint8_t *b, const hw_batch_hdr *h, uint16_t attr, int64_t base_ts,
			 int64_t max_ts, int32_t count, size_t total)
{
	memcpy(o, b, HW_BATCH_HEADER_SIZE);
	hw_be32_put(o + HW_BATCH_OFF_LENGTH, (uint32_t)(total - HW_BATCH_LOG_OVERHEAD));
	hw_be16_put(o + HW_BATCH_OFF_ATTRIBUTES, attr);
	hw_be32_put(o + HW_BATCH_OFF_LAST_DELTA, (uint32_t)h->last_offset_delta);
	hw_be64_put(o + HW_BATCH_OFF_BASE_TS, (uint64_t)base_ts);
	hw_be64_put(o + HW_BATCH_OFF_MAX_TS, (uint64_t)max_ts);
	hw_be32_put(o + HW_BATCH_OFF_COUNT, (uint32_t)count);
	hw_be32_put(o + HW_BATCH_OFF_CRC, hw_batch_compute_crc(o, total));
}

/* Kafka's DefaultRecordBatch.writeEmptyHeader: no records, codec none,
 * both timestamps the batch's maxTimestamp. */
static int write_empty(const uint8_t *b, const hw_batch_hdr *h, hw_clean_buf *out, hw_clean_outcome *res)
{
	int rc = buf_reserve(out, HW_BATCH_HEADER_SIZE);
	if (rc)
		return rc;
	uint16_t attr = (uint16_t)(h->attributes & ~(HW_BATCH_ATTR_CODEC_MASK | HW_BATCH_ATTR_DELETE_HORIZON));
	write_header(out->p, b, h, attr, h->max_timestamp, h->max_timestamp, 0, HW_BATCH_HEADER_SIZE);
	res->action = HW_CLEAN_REWRITE;
	res->len = HW_BATCH_HEADER_SIZE;
	return 0;
}

/* Header + records section (compressed with the batch's codec) into out. */
static int assemble(const uint8_t *b, const hw_batch_hdr *h, uint16_t attr, int64_t base_ts, int64_t max_ts,
		    const hw_clean_buf *recs, size_t nrec, hw_clean_buf *out, hw_clean_outcome *res)
{
	int codec = hw_batch_codec(h);
	size_t body = nrec;
	int rc;
	if (codec == HW_BATCH_CODEC_NONE) {
		if ((rc = buf_reserve(out, HW_BATCH_HEADER_SIZE + nrec)) != 0)
			return rc;
		memcpy(out->p + HW_BATCH_HEADER_SIZE, recs->p, nrec);
	} else {
		/* snappy in xerial framing, as the Java producer writes it */
		hw_zopts zo = { .level = 0, .snappy_xerial = 1 };
		size_t bound = hw_compress_bound(codec, &zo, nrec);
		if (!bound || (rc = buf_reserve(out, HW_BATCH_HEADER_SIZE + bound)) != 0)
			return bound ? rc : -EINVAL;
		ssize_t z = hw_compress(codec, &zo, recs->p, nrec, out->p + HW_BATCH_HEADER_SIZE, bound);
		if (z < 0)
			return (int)z;
		body = (size_t)z;
	}
	size_t total = HW_BATCH_HEADER_SIZE + body;
	if (total > INT32_MAX)
		return -EINVAL;
	write_header(out->p, b, h, attr, base_ts, max_ts, res->kept, total);
	res->action = HW_CLEAN_REWRITE;
	res->len = total;
	return 0;
}

int hw_clean_batch(const uint8_t *b, size_t len, const hw_clean_filter *f, hw_clean_buf *out,
		   hw_clean_outcome *res)
{
	memset(res, 0, sizeof(*res));
	res->horizon = -1;
	if (!f || !f->latest || !out)
		return -EINVAL;
	hw_record_iter it;
	int rc = hw_record_iter_init(&it, b, len, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED);
	if (rc < 0)
		return rc;
	const hw_batch_hdr h = it.hdr;
	if (hw_batch_is_control(&h)) {
		res->action = HW_CLEAN_COPY;
		return 0;
	}
	int has_horizon = (h.attributes & HW_BATCH_ATTR_DELETE_HORIZON) != 0;
	int lat = hw_batch_is_log_append_time(&h);
	/* pass 1 decides; the kept records are copied into recs as they come
	 * (their bytes may live in the iterator's decompression scratch) */
	hw_clean_buf recs = { 0 };
	size_t nrec = 0;
	int tomb = 0;
	int64_t max_ts = HW_NO_TIMESTAMP;
	hw_record r;
	/* a horizon is set the first time a batch keeping a tombstone is
	 * cleaned: new record deltas are relative to it */
	int64_t new_base = (int64_t)((uint64_t)f->now_ms + (uint64_t)f->delete_retention_ms);
	if (f->delete_retention_ms < 0 || f->now_ms > INT64_MAX - f->delete_retention_ms)
		new_base = INT64_MAX;
	/* two decodes of a compressed batch would be needed to know in advance
	 * whether a tombstone stays; instead the kept records are copied as
	 * they are and, if a horizon turns out to be needed, re-encoded. */
	hw_clean_buf shifted = { 0 };
	while ((rc = hw_record_iter_next(&it, &r)) == 1) {
		if (!keep_record(f, &h, &r, res, &tomb)) {
			res->removed++;
			continue;
		}
		res->kept++;
		if (r.timestamp > max_ts)
			max_ts = r.timestamp;
		if ((rc = put_record(&recs, &nrec, &r, 0, 0)) < 0)
			break;
	}
	if (rc < 0)
		goto out;
	rc = 0;
	int need_horizon = tomb && !has_horizon;
	if (res->kept == 0 && res->removed == 0 && !f->retain_empty) {
		/* an empty batch kept by an earlier pass that is no longer the
		 * last of its producer or of its segment */
		res->action = HW_CLEAN_DROP;
		goto out;
	}
	if (res->removed == 0 && !need_horizon) {
		res->action = HW_CLEAN_COPY;
		res->horizon = tomb ? h.base_timestamp : -1;
		goto out;
	}
	if (res->kept == 0) {
		if (f->retain_empty)
			rc = write_empty(b, &h, out, res);
		else
			res->action = HW_CLEAN_DROP;
		goto out;
	}
	int64_t base_ts = need_horizon ? new_base : h.base_timestamp;
	uint16_t attr = (uint16_t)h.attributes;
	const hw_clean_buf *src = &recs;
	size_t nsrc = nrec;
	if (need_horizon) {
		attr |= HW_BATCH_ATTR_DELETE_HORIZON;
		/* re-walk the kept copies (uncompressed now) to shift deltas */
		hw_record_iter rit = { 0 };
		rit.hdr = h;
		rit.hdr.record_count = res->kept;
		rit.compacted = 1;
		rit.prev_delta = -1;
		rit.p = recs.p;
		rit.end = recs.p + nrec;
		size_t ns = 0;
		while ((rc = hw_record_iter_next(&rit, &r)) == 1)
			if ((rc = put_record(&shifted, &ns, &r, 1, base_ts)) < 0)
				break;
		if (rc < 0)
			goto out;
		src = &shifted;
		nsrc = ns;
	}
	res->horizon = tomb ? base_ts : -1;
	rc = assemble(b, &h, attr, base_ts, lat ? h.max_timestamp : max_ts, src, nsrc, out, res);
out:
	free(recs.p);
	free(shifted.p);
	return rc;
}

void hw_clean_filler(uint8_t *out, int64_t base, int64_t last, int32_t epoch, int64_t ts)
{
	memset(out, 0, HW_BATCH_HEADER_SIZE);
	hw_be64_put(out + HW_BATCH_OFF_BASE_OFFSET, (uint64_t)base);
	hw_be32_put(out + HW_BATCH_OFF_LENGTH, HW_BATCH_HEADER_SIZE - HW_BATCH_LOG_OVERHEAD);
	hw_be32_put(out + HW_BATCH_OFF_LEADER_EPOCH, (uint32_t)epoch);
	out[HW_BATCH_OFF_MAGIC] = HW_BATCH_MAGIC;
	hw_be32_put(out + HW_BATCH_OFF_LAST_DELTA, (uint32_t)(last - base));
	hw_be64_put(out + HW_BATCH_OFF_BASE_TS, (uint64_t)ts);
	hw_be64_put(out + HW_BATCH_OFF_MAX_TS, (uint64_t)ts);
	hw_be64_put(out + HW_BATCH_OFF_PRODUCER_ID, (uint64_t)HW_NO_PRODUCER_ID);
	hw_be16_put(out + HW_BATCH_OFF_PRODUCER_EPOCH, (uint16_t)HW_NO_PRODUCER_EPOCH);
	hw_be32_put(out + HW_BATCH_OFF_BASE_SEQ, (uint32_t)HW_NO_SEQUENCE);
	hw_be32_put(out + HW_BATCH_OFF_CRC, hw_batch_compute_crc(out, HW_BATCH_HEADER_SIZE));
}
