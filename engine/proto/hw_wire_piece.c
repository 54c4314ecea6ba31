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
	a->n_ranges = 0;
}

static int refuse(hw_piece_asm *a, hw_piece_drop r, hw_piece_drop *why, int rc)
{
	hw_piece_reset(a);
	if (why)
		*why = r;
	return rc;
}

/* 1 if [lo, hi) lies inside one range already there. */
static int covered(const hw_piece_asm *a, uint32_t lo, uint32_t hi)
{
	for (unsigned i = 0; i < a->n_ranges; i++)
		if (a->r[i].lo <= lo && hi <= a->r[i].hi)
			return 1;
	return 0;
}

/* Add [lo, hi) to the sorted, disjoint, non-touching ranges, merging what it
 * overlaps or touches. 0, or -ENOSPC when that would need more than
 * HW_PIECE_MAX_RANGES ranges (nothing changed). */
static int add_range(hw_piece_asm *a, uint32_t lo, uint32_t hi)
{
	unsigned i = 0, j;
	while (i < a->n_ranges && a->r[i].hi < lo)
		i++;                          /* ranges wholly before, not touching */
	j = i;
	while (j < a->n_ranges && a->r[j].lo <= hi) {
		if (a->r[j].lo < lo)
			lo = a->r[j].lo;
		if (a->r[j].hi > hi)
			hi = a->r[j].hi;
		j++;                          /* ranges [i, j) merge into the new one */
	}
	unsigned n = a->n_ranges - (j - i) + 1;
	if (n > HW_PIECE_MAX_RANGES)
		return -ENOSPC;
	memmove(&a->r[i + 1], &a->r[j], (a->n_ranges - j) * sizeof a->r[0]);
	a->r[i].lo = lo;
	a->r[i].hi = hi;
	a->n_ranges = (uint8_t)n;
	a->have = 0;
	for (unsigned k = 0; k < a->n_ranges; k++)
		a->have += a->r[k].hi - a->r[k].lo;
	return 0;
}

int hw_piece_feed(hw_piece_asm *a, uint32_t max_batch, int64_t base, uint32_t batch_len, uint32_t off,
		  const uint8_t *p, uint32_t len, const uint8_t **out, hw_piece_drop *why)
{
	if (!a || !p || !out || !len || off > batch_len || len > batch_len - off)
		return -EINVAL;
	*out = NULL;
	if (batch_len > max_batch || batch_len > HW_WIRE_PIECE_MAX_BATCH)
		return refuse(a, HW_PIECE_DROP_TOO_LARGE, why, -EMSGSIZE);
	/* phase 1: a piece of another batch starts a new assembly */
	if (a->buf && (a->batch_len != batch_len || a->base != base))
		hw_piece_reset(a);
	if (!a->buf) {
		a->buf = malloc(batch_len);
		if (!a->buf)
			return refuse(a, HW_PIECE_DROP_NO_MEMORY, why, -ENOMEM);
		a->batch_len = batch_len;
		a->base = base;
	}
	/* phase 2: place the bytes, in any order; repeats change nothing */
	if (covered(a, off, off + len)) {
		if (why)
			*why = HW_PIECE_DROP_DUPLICATE;
		return -EALREADY;
	}
	if (add_range(a, off, off + len) < 0)
		return refuse(a, HW_PIECE_DROP_TOO_SCATTERED, why, -EPROTO);
	memcpy(a->buf + off, p, len);
	if (a->have < a->batch_len)
		return 0;
	/* phase 3: whole — the caller validates and uses it, then resets */
	*out = a->buf;
	return 1;
}
