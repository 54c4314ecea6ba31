/* hw_qhello.c — memif queue hello codec. Format and contract in hw_qhello.h. */
#include <errno.h>
#include <string.h>
#include "hw_qhello.h"
#include "hw_bytes.h"

static const char *const drop_names[] = {
#define X(n, e, d) #n,
	HW_QHELLO_DROP_TABLE(X)
#undef X
};
static const char *const drop_descs[] = {
#define X(n, e, d) d,
	HW_QHELLO_DROP_TABLE(X)
#undef X
};
static const int drop_errnos[] = {
#define X(n, e, d) e,
	HW_QHELLO_DROP_TABLE(X)
#undef X
};

const char *hw_qhello_drop_name(int reason)
{
	if (reason < 0 || reason >= HW_QHELLO_DROP__COUNT)
		return "UNKNOWN_DROP";
	return drop_names[reason];
}

const char *hw_qhello_drop_desc(int reason)
{
	if (reason < 0 || reason >= HW_QHELLO_DROP__COUNT)
		return "unknown drop reason";
	return drop_descs[reason];
}

int hw_qhello_encode(const hw_qhello *h, uint8_t *buf, size_t cap)
{
	if (!h || !buf || h->queue_count == 0 || h->queue_count > HW_QHELLO_MAX_QUEUES || h->node_id < -1)
		return -EINVAL;
	if (cap < HW_QHELLO_LEN)
		return -ENOSPC;
	hw_be32_put(buf, HW_QHELLO_MAGIC);
	buf[4] = HW_QHELLO_VERSION;
	buf[5] = 0;
	hw_be16_put(buf + 6, h->queue_count);
	hw_be32_put(buf + 8, h->cluster_id);
	hw_be32_put(buf + 12, (uint32_t)h->node_id);
	return HW_QHELLO_LEN;
}

static int reject(hw_qhello_drop *why, hw_qhello_drop reason)
{
	*why = reason;
	return -drop_errnos[reason];
}

int hw_qhello_decode(const uint8_t *buf, size_t len, uint32_t cluster_id, hw_qhello *out,
		     hw_qhello_drop *why)
{
	if (!out || !why || (!buf && len > 0))
		return -EINVAL;
	if (len < HW_QHELLO_LEN)
		return reject(why, HW_QHELLO_DROP_TRUNCATED);
	if (hw_be32_get(buf) != HW_QHELLO_MAGIC)
		return reject(why, HW_QHELLO_DROP_BAD_MAGIC);
	uint8_t version = buf[4];
	if (version < HW_QHELLO_VERSION_MIN || version > HW_QHELLO_VERSION)
		return reject(why, HW_QHELLO_DROP_BAD_VERSION);
	if (buf[5] != 0)
		return reject(why, HW_QHELLO_DROP_BAD_RESERVED);
	uint16_t q = hw_be16_get(buf + 6);
	if (q == 0 || q > HW_QHELLO_MAX_QUEUES)
		return reject(why, HW_QHELLO_DROP_BAD_COUNT);
	if (hw_be32_get(buf + 8) != cluster_id)
		return reject(why, HW_QHELLO_DROP_FOREIGN_CLUSTER);
	int32_t node = (int32_t)hw_be32_get(buf + 12);
	if (node < -1)
		return reject(why, HW_QHELLO_DROP_BAD_NODE);
	out->version = version;
	out->queue_count = q;
	out->cluster_id = cluster_id;
	out->node_id = node;
	return 0;
}
