/* hw_spsc.h — a bounded single-producer single-consumer ring of pointers,
 * for cross-reactor messages.
 *
 * Why our own ring and not rte_ring: lib/ has no DPDK dependency (the UDP
 * transport, the CLI and every unit test run without an EAL), and the
 * reactor topology is a fixed mesh — one ring per ordered pair of reactors —
 * so each ring has exactly one producer and one consumer and needs no
 * compare-and-swap at all: two monotonically increasing indices, each written
 * by one side only, published with release stores and read with acquire
 * loads. rte_ring (MP/MC capable) would add a CAS and head/tail pairs we
 * do not need.
 *
 * Capacity is a power of two; indices are free-running uint32 (wrap is
 * harmless: the difference of two indices is the fill level). The producer
 * caches the consumer index and vice versa, so the shared cache lines are
 * only touched when the cached view says full/empty (the "cached index"
 * trick of Vyukov / folly ProducerConsumerQueue).
 */
#ifndef HW_SPSC_H
#define HW_SPSC_H
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define HW_CACHELINE 64

typedef struct hw_spsc {
	/* producer side */
	_Alignas(HW_CACHELINE) uint32_t head;      /* next slot to write; written by producer */
	uint32_t tail_cache;                       /* producer's view of tail */
	/* consumer side */
	_Alignas(HW_CACHELINE) uint32_t tail;      /* next slot to read; written by consumer */
	uint32_t head_cache;                       /* consumer's view of head */
	_Alignas(HW_CACHELINE) uint32_t mask;
	void **slot;
} hw_spsc;

/* capacity: power of two >= 2. Returns 0, -EINVAL, -ENOMEM. */
static inline int hw_spsc_init(hw_spsc *q, uint32_t capacity)
{
	if (capacity < 2 || (capacity & (capacity - 1)))
		return -EINVAL;
	q->slot = calloc(capacity, sizeof *q->slot);
	if (!q->slot)
		return -ENOMEM;
	q->head = q->tail = q->tail_cache = q->head_cache = 0;
	q->mask = capacity - 1;
	return 0;
}

static inline void hw_spsc_fini(hw_spsc *q)
{
	free(q->slot);
	q->slot = NULL;
}

/* Producer only. p must not be NULL (NULL is "empty" to pop). 0, or
 * -ENOBUFS when full, -EINVAL for NULL. */
static inline int hw_spsc_push(hw_spsc *q, void *p)
{
	uint32_t h = q->head;  /* our own index: plain read */
	if (!p)
		return -EINVAL;
	if (h - q->tail_cache > q->mask) {
		/* acquire: the consumer's release of `tail` happened after it read
		 * the slots it frees, so we may overwrite them now */
		q->tail_cache = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
		if (h - q->tail_cache > q->mask)
			return -ENOBUFS;
	}
	q->slot[h & q->mask] = p;
	/* release: the slot write above is visible before the new head */
	__atomic_store_n(&q->head, h + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Consumer only. The pointer, or NULL when empty. */
static inline void *hw_spsc_pop(hw_spsc *q)
{
	uint32_t t = q->tail;  /* our own index: plain read */
	if (t == q->head_cache) {
		/* acquire: pairs with the producer's release of `head`, so the
		 * slot contents written before it are visible to us */
		q->head_cache = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
		if (t == q->head_cache)
			return NULL;
	}
	void *p = q->slot[t & q->mask];
	/* release: our read of the slot completes before the producer can see
	 * the slot as free and overwrite it */
	__atomic_store_n(&q->tail, t + 1, __ATOMIC_RELEASE);
	return p;
}

/* Either side; a snapshot (may be stale by the time it is used). */
static inline uint32_t hw_spsc_count(const hw_spsc *q)
{
	/* relaxed: an estimate only, orders nothing */
	return __atomic_load_n(&q->head, __ATOMIC_RELAXED) - __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
}

#endif
