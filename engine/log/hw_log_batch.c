/* hw_log_batch.c — the framing checks the log needs on RecordBatch v2
 * headers, on top of engine/record's decoder (hw_batch.h). The log never
 * decodes records: it needs sizes and offsets to place batches, and the CRC
 * to trust bytes it reads back during recovery. */
#include <errno.h>
#include <stddef.h>
#include "hw_batch.h"
#include "hw_log_int.h"

static int fill(const hw_batch_hdr *b, hw_lb_hdr *h)
{
	if (b->magic != HW_BATCH_MAGIC || b->base_offset < 0 || b->last_offset_delta < 0 ||
	    b->base_offset > INT64_MAX - b->last_offset_delta - 1)
		return -EBADMSG;
	h->base = b->base_offset;
	h->last = b->base_offset + b->last_offset_delta;
	h->size = b->size;
	h->epoch = b->partition_leader_epoch;
	h->max_ts = b->max_timestamp;
	h->count = b->record_count;
	return 0;
}

int hw_lb_probe(const uint8_t *p, hw_lb_hdr *h)
{
	hw_batch_hdr b;
	int rc = hw_batch_parse_header(p, HW_LB_PROBE, &b);
	if (rc != 0 && rc != HW_BATCH_TRUNCATED)
		return -EBADMSG;
	return fill(&b, h);
}

int hw_lb_check(const uint8_t *p, size_t avail, hw_lb_hdr *h)
{
	hw_batch_hdr b;
	if (hw_batch_validate(p, avail, &b, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED) != 0)
		return -EBADMSG;
	return fill(&b, h);
}
