/* fuzz_clean_batch.c — libFuzzer target for the log cleaner's batch filter
 * (engine/log/hw_log_clean_int.h: hw_clean_batch), the part of compaction
 * that decodes records of bytes read from disk. Input: byte 0 picks the
 * filter (bit 0 retain_empty, bits 1-3 which keys count as superseded,
 * bit 4 a clock past every delete horizon), the rest is one batch whose
 * magic and CRC the target sets (so the record walk is reached). For every
 * input the filter either refuses the batch with a batch rc or returns an
 * outcome that is consistent: COPY removes nothing, DROP keeps nothing, and
 * a REWRITE is a valid compacted batch (full check with
 * HW_BATCH_V_COMPACTED) with the same base offset, lastOffsetDelta,
 * producer id and codec, holding exactly the kept records. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_log_clean_int.h"

static int g_mask;

/* superseded iff (first key byte + key length) & 7 hits the mask */
static int latest(void *ctx, const uint8_t *key, int32_t len, int64_t offset)
{
	(void)ctx;
	(void)offset;
	int h = ((len > 0 ? key[0] : 0) + len) & 7;
	return !((g_mask >> (h % 3)) & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	size_t n = size - 1;
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return 0;
	memcpy(b, data + 1, n);
	hw_batch_hdr h;
	if (n >= HW_BATCH_HEADER_SIZE) {
		b[HW_BATCH_OFF_MAGIC] = HW_BATCH_MAGIC;
		if (hw_batch_parse_header(b, n, &h) == 0)
			hw_batch_update_crc(b, n);
	}
	g_mask = (sel >> 1) & 7;
	hw_clean_filter f = { .now_ms = (sel & 16) ? INT64_MAX : 1000, .delete_retention_ms = 500,
			      .latest = latest, .retain_empty = sel & 1 };
	hw_clean_buf out = { 0 };
	hw_clean_outcome o;
	int rc = hw_clean_batch(b, n, &f, &out, &o);
	if (rc < 0) {
		if (rc > -1000 && rc != -ENOMEM && rc != -EINVAL)
			abort(); /* only batch rcs, or allocation/size limits */
	} else {
		if (hw_batch_validate(b, n, &h, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED) != 0)
			abort(); /* accepted what the checks refuse */
		if (o.kept < 0 || o.removed < 0 || o.tombstones_removed > o.removed || o.unkeyed > o.removed)
			abort();
		if (!hw_batch_is_control(&h) && o.kept + o.removed != h.record_count)
			abort();
		switch (o.action) {
		case HW_CLEAN_COPY:
			if (o.removed)
				abort();
			break;
		case HW_CLEAN_DROP:
			if (o.kept)
				abort();
			break;
		case HW_CLEAN_REWRITE: {
			hw_batch_hdr r;
			if (o.len > out.cap ||
			    hw_batch_validate(out.p, o.len, &r, HW_BATCH_V_FULL | HW_BATCH_V_COMPACTED) != 0 ||
			    r.size != o.len || r.base_offset != h.base_offset ||
			    r.last_offset_delta != h.last_offset_delta || r.producer_id != h.producer_id ||
			    r.record_count != o.kept || (o.kept && hw_batch_codec(&r) != hw_batch_codec(&h)))
				abort();
			break;
		}
		default:
			abort();
		}
	}
	free(out.p);
	free(b);
	return 0;
}
