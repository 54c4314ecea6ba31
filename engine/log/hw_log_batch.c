/* hw_log_batch.c — the framing checks the log needs on RecordBatch v2
 * headers (Kafka DefaultRecordBatch). The log never decodes records: it
 * needs sizes and offsets to place batches, and the CRC to trust bytes it
 * reads back during recovery. */
#include <errno.h>
#include <stddef.h>
#include "hw_log_int.h"

/* TEMPORARY until lib/crc32c lands on main: bitwise-table CRC32C. */
static uint32_t crc_tab[256];
static int crc_tab_ok;

static uint32_t log_crc32c(const uint8_t *p, size_t n)
{
	if (!crc_tab_ok) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
			crc_tab[i] = c;
		}
		crc_tab_ok = 1;
	}
	uint32_t c = 0xFFFFFFFFu;
	while (n--)
		c = crc_tab[(c ^ *p++) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

int hw_lb_probe(const uint8_t *p, hw_lb_hdr *h)
{
	int64_t base = (int64_t)hw_lb_be64(p);
	int32_t blen = (int32_t)hw_lb_be32(p + 8);
	int32_t delta = (int32_t)hw_lb_be32(p + 23);
	if (p[16] != 2)
		return -EBADMSG;
	if (blen < HW_LB_HEADER - HW_LB_LOG_OVERHEAD || blen > INT32_MAX - HW_LB_LOG_OVERHEAD)
		return -EBADMSG;
	if (base < 0 || delta < 0 || base > INT64_MAX - delta - 1)
		return -EBADMSG;
	h->base = base;
	h->last = base + delta;
	h->size = (uint32_t)blen + HW_LB_LOG_OVERHEAD;
	h->epoch = (int32_t)hw_lb_be32(p + 12);
	h->max_ts = -1;
	h->count = -1;
	return 0;
}

int hw_lb_check(const uint8_t *p, size_t avail, hw_lb_hdr *h)
{
	if (avail < HW_LB_HEADER)
		return -EBADMSG;
	int rc = hw_lb_probe(p, h);
	if (rc)
		return rc;
	if (h->size > avail)
		return -EBADMSG;
	int32_t count = (int32_t)hw_lb_be32(p + 57);
	if (count < 0)
		return -EBADMSG;
	uint32_t want = hw_lb_be32(p + 17);
	if (log_crc32c(p + 21, h->size - 21) != want)
		return -EBADMSG;
	h->max_ts = (int64_t)hw_lb_be64(p + 35);
	h->count = count;
	return 0;
}
