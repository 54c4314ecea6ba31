/* hw_wire_piece.c — assembling a record batch from its pieces
 * (hw_wire_piece.h, docs/wire.md#batch-pieces). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_wire_piece.h"

static const char *const drop_names[] = {
#define X(n, d) #n,
	HW_PIECE_DROP_TABLE(X)
#undef X
};

const char *hw_piece_drop_name(int reason)
{
	if (reason < 0 || reason >= HW_PIECE_DROP__COUNT)
		return "UNKNOWN_DROP";
	return drop_names[reason];
}

void hw_piece_reset(hw_piece_asm *a)
{
	free(a->buf);
	a->buf = NULL;
	a->batch_len = 0;
	a->have = 0;
}

static int refuse(hw_piece_asm *a, hw_piece_drop r, hw_piece_drop *why, int rc)
{
	hw_piece_reset(a);
	if (why)
		*why = r;
	return rc;
}

int hw_piece_feed(hw_piece_asm *a, uint32_t max_batch, uint32_t batch_len, uint32_t off,
		  const uint8_t *p, uint32_t len, const uint8_t **out, hw_piece_drop *why)
{
	if (!a || !p || !out || !len || off > batch_len || len > batch_len - off)
		return -EINVAL;
	*out = NULL;
	if (batch_len > max_batch || batch_len > HW_WIRE_PIECE_MAX_BATCH)
		return refuse(a, HW_PIECE_DROP_TOO_LARGE, why, -EMSGSIZE);
	if (off == 0) {
		/* phase 1: a first piece starts the batch (again) */
		hw_piece_reset(a);
		a->buf = malloc(batch_len);
		if (!a->buf)
			return refuse(a, HW_PIECE_DROP_NO_MEMORY, why, -ENOMEM);
		a->batch_len = batch_len;
	} else if (!a->buf || a->batch_len != batch_len || a->have != off) {
		/* phase 2: anything but the continuation means a piece was lost */
		return refuse(a, HW_PIECE_DROP_OUT_OF_ORDER, why, -EPROTO);
	}
	memcpy(a->buf + off, p, len);
	a->have = off + len;
	if (a->have < a->batch_len)
		return 0;
	/* phase 3: whole — the caller validates and uses it, then resets */
	*out = a->buf;
	return 1;
}
