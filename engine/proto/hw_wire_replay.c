/* hw_wire_replay.c — the per-sender replay windows of authenticated frames
 * (hw_wire.h, hw_wire_replay): a frame is accepted once per (sender,
 * stream, incarnation, sequence); a newer incarnation resets the window, an
 * older one is a stale sender. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "hw_wire.h"

void hw_wire_replay_init(hw_wire_replay *r)
{
	memset(r, 0, sizeof *r);
	for (int i = 0; i < HW_WIRE_REPLAY_PEERS; i++)
		r->peer[i].node = INT32_MIN;
}

static hw_wire_replay_peer *replay_slot(hw_wire_replay *r, int32_t node, uint8_t stream, int *fresh)
{
	unsigned h = (((uint32_t)node * 16u + stream) * 2654435761u) % HW_WIRE_REPLAY_PEERS;
	hw_wire_replay_peer *lru = NULL;
	for (unsigned i = 0; i < HW_WIRE_REPLAY_PEERS; i++) {
		hw_wire_replay_peer *p = &r->peer[(h + i) % HW_WIRE_REPLAY_PEERS];
		if (p->node == node && p->stream == stream) {
			*fresh = 0;
			return p;
		}
		if (p->node == INT32_MIN) {
			lru = p;
			break;
		}
		if (!lru || p->last_use < lru->last_use)
			lru = p;
	}
	*fresh = 1;
	return lru;
}

int hw_wire_replay_check(hw_wire_replay *r, const hw_wire_hdr *h, hw_wire_drop *why)
{
	int fresh;
	hw_wire_replay_peer *p = replay_slot(r, h->src, h->stream, &fresh);
	p->last_use = ++r->clock;
	if (fresh || (int32_t)(h->incarnation - p->incarnation) > 0) {
		memset(p->bits, 0, sizeof p->bits);
		p->node = h->src;
		p->stream = h->stream;
		p->incarnation = h->incarnation;
		p->top = h->seq;
		p->bits[(h->seq % HW_WIRE_REPLAY_WINDOW) / 64] |= 1ull << (h->seq % 64);
		return 0;
	}
	if (h->incarnation != p->incarnation) {
		if (why)
			*why = HW_WIRE_DROP_STALE_SENDER;
		return -EBADMSG;
	}
	int32_t ahead = (int32_t)(h->seq - p->top);
	if (ahead > 0) {
		/* clear the window slots the top moves past */
		if (ahead >= (int32_t)HW_WIRE_REPLAY_WINDOW) {
			memset(p->bits, 0, sizeof p->bits);
		} else {
			for (uint32_t s = p->top + 1; s != h->seq + 1; s++)
				p->bits[(s % HW_WIRE_REPLAY_WINDOW) / 64] &= ~(1ull << (s % 64));
		}
		p->top = h->seq;
	} else if (p->top - h->seq >= HW_WIRE_REPLAY_WINDOW) {   /* unsigned: wraps fine */
		if (why)
			*why = HW_WIRE_DROP_REPLAYED;
		return -EBADMSG;
	}
	uint64_t *word = &p->bits[(h->seq % HW_WIRE_REPLAY_WINDOW) / 64];
	uint64_t bit = 1ull << (h->seq % 64);
	if (*word & bit) {
		if (why)
			*why = HW_WIRE_DROP_REPLAYED;
		return -EBADMSG;
	}
	*word |= bit;
	return 0;
}
