/* hw_rxhold.c — the delivery context of hw_rxhold.h: the buffer a
 * transport is delivering, set around each delivery. */
#include "hw_rxhold.h"
#include <stdint.h>

void hw_rxhold_enter(hw_rxhold_ctx *c, const hw_rxhold_buf *b)
{
	if (c)
		c->cur = b;
}

void hw_rxhold_leave(hw_rxhold_ctx *c)
{
	if (c)
		c->cur = NULL;
}

void *hw_rxhold_take(hw_rxhold_ctx *c, const void *p, size_t n, void (**release)(void *ref))
{
	const hw_rxhold_buf *b = c ? c->cur : NULL;
	if (!b || !p || !release)
		return NULL;
	uintptr_t lo = (uintptr_t)b->base, x = (uintptr_t)p;
	if (x < lo || n > b->len || x - lo > b->len - n)
		return NULL;
	if (b->hold(b->ref) < 0)
		return NULL;
	*release = b->release;
	return b->ref;
}
