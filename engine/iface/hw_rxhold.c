/* hw_rxhold.c — the delivery context of hw_rxhold.h: one thread-local
 * pointer, set by the transport around each delivery. */
#include "hw_rxhold.h"
#include <stdint.h>

static _Thread_local const hw_rxhold_buf *cur;

void hw_rxhold_enter(const hw_rxhold_buf *b) { cur = b; }

void hw_rxhold_leave(void) { cur = NULL; }

void *hw_rxhold_take(const void *p, size_t n, void (**release)(void *ref))
{
	const hw_rxhold_buf *b = cur;
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
