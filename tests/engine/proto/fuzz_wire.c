/* fuzz_wire.c — libFuzzer target for the wire decoder. Every input must
 * either decode (and then re-encode to a frame that decodes to the same
 * bytes, for types without a split) or be counted as exactly one drop. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_wire.h"

#define CLUSTER 0xC0FFEEu

static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t out[HW_WIRE_MAX_FRAME];
static hw_wire_replay replay;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		hw_wire_replay_init(&replay);
		init = 1;
	}
	hw_wire_stats st;
	memset(&st, 0, sizeof st);
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	hw_wire_hdr h;
	hw_msg m;
	hw_wire_drop why;
	int rc = hw_wire_decode(data, size, CLUSTER, &a, &h, &m, &why, &st);
	if (st.rx_frames + hw_wire_stats_total_drops(&st) != 1)
		abort();
	if (rc != 0)
		return 0;
	(void)hw_wire_replay_check(&replay, &h, &why);
	/* a decoded message re-encodes to the identical frame (the format has
	 * one encoding per message; seq/incarnation/frag/flags come from h) */
	hw_wire_tx tx = { h.cluster_id, h.incarnation, h.seq, h.stream };
	hw_wire_split sp = { .frag = h.frag };
	int n = hw_wire_encode(&tx, &m, &sp, out, sizeof out);
	if (n < 0)
		abort();
	/* version 2 with stream 0 decodes as version 1 does and re-encodes as
	 * version 1 (the only byte that may differ) */
	if (size > 2 && data[2] == 2 && h.stream == 0 && n > 2)
		out[2] = 2;
	if (m.n_unknown_tags) {
		/* skipped tags are not re-encoded: the frame must still
		 * re-encode, and decode again without them */
		hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
		hw_msg m2;
		if (hw_wire_decode(out, (size_t)n, CLUSTER, &a, NULL, &m2, &why, NULL) != 0 ||
		    m2.n_unknown_tags != 0 || m2.type != m.type)
			abort();
	} else if (m.type == HW_MSG_FETCH_RESP) {
		/* flags MORE is the sender's knowledge; compare everything else */
		if ((size_t)n != size || memcmp(out + 4, data + 4, size - 4) != 0)
			abort();
	} else if ((size_t)n != size || memcmp(out, data, size) != 0) {
		abort();
	}
	return 0;
}
