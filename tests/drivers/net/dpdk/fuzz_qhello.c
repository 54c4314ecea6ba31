/* fuzz_qhello.c — libFuzzer target for the memif queue hello decoder
 * (drivers/net/dpdk/hw_qhello.h). For every input:
 *   - decoding against a fixed cluster id and against the cluster id the
 *     input itself carries (so the checks behind the cluster check are
 *     reached) either succeeds or reports a reason in the table with that
 *     reason's errno, leaving the output untouched;
 *   - a decoded hello re-encodes to the input's first HW_QHELLO_LEN bytes
 *     (one encoding per hello; trailing bytes are padding);
 *   - the input read as encoder fields encodes iff the fields are in range,
 *     and what it encodes decodes back to the same fields. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_qhello.h"

#define CLUSTER 0xC0FFEEu

static const int reason_errno[] = {
#define X(n, e, d) e,
	HW_QHELLO_DROP_TABLE(X)
#undef X
};

static void check_decode(const uint8_t *data, size_t size, uint32_t cluster)
{
	hw_qhello out, before;
	memset(&out, 0xA5, sizeof out);
	before = out;
	hw_qhello_drop why = HW_QHELLO_DROP__COUNT;
	int rc = hw_qhello_decode(data, size, cluster, &out, &why);
	if (rc < 0) {
		if ((int)why < 0 || why >= HW_QHELLO_DROP__COUNT || rc != -reason_errno[why] ||
		    memcmp(&out, &before, sizeof out) != 0)
			abort();
		return;
	}
	if (rc != 0 || size < HW_QHELLO_LEN || out.cluster_id != cluster || out.queue_count == 0 ||
	    out.queue_count > HW_QHELLO_MAX_QUEUES || out.node_id < -1 || out.version < HW_QHELLO_VERSION_MIN ||
	    out.version > HW_QHELLO_VERSION)
		abort();
	uint8_t again[HW_QHELLO_LEN];
	if (hw_qhello_encode(&out, again, sizeof again) != HW_QHELLO_LEN || memcmp(again, data, sizeof again) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: ASan reports any read past the input */
	uint8_t *b = malloc(size ? size : 1);
	if (!b)
		return 0;
	memcpy(b, data, size);
	check_decode(size ? b : NULL, size, CLUSTER);
	if (size >= 12)
		check_decode(b, size, (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11]);
	if (size >= 10) {
		hw_qhello h;
		memset(&h, 0, sizeof h);
		h.queue_count = (uint16_t)(b[0] << 8 | b[1]);
		memcpy(&h.cluster_id, b + 2, 4);
		memcpy(&h.node_id, b + 6, 4);
		uint8_t enc[HW_QHELLO_LEN];
		int n = hw_qhello_encode(&h, enc, sizeof enc);
		int valid = h.queue_count >= 1 && h.queue_count <= HW_QHELLO_MAX_QUEUES && h.node_id >= -1;
		if (valid != (n == HW_QHELLO_LEN) || (!valid && n != -EINVAL))
			abort();
		if (valid) {
			hw_qhello out;
			hw_qhello_drop why;
			if (hw_qhello_decode(enc, sizeof enc, h.cluster_id, &out, &why) != 0 ||
			    out.queue_count != h.queue_count || out.node_id != h.node_id ||
			    out.version != HW_QHELLO_VERSION)
				abort();
		}
	}
	free(b);
	return 0;
}
