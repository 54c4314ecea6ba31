/* hw_mailbox.c — see hw_mailbox.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_mailbox.h"
#include "hw_spsc.h"

typedef struct mb_ring {
	hw_spsc q;
	uint64_t posted;      /* written by the producer (relaxed) */
	uint64_t full;        /* written by the producer (relaxed) */
	uint64_t received;    /* written by the consumer (relaxed) */
} mb_ring;

struct hw_mailbox {
	int n;
	hw_reactor *reactor[HW_MAILBOX_MAX];
	mb_ring *ring;        /* n * n, [from * n + to]; the diagonal is unused */
	int next_from[HW_MAILBOX_MAX]; /* consumer-side round-robin start */
};

static mb_ring *ring_at(const hw_mailbox *mb, int from, int to)
{
	return &mb->ring[from * mb->n + to];
}

int hw_mailbox_create(int n, uint32_t capacity, hw_mailbox **out)
{
	if (!out || n < 1 || n > HW_MAILBOX_MAX || capacity < 2 || (capacity & (capacity - 1)))
		return -EINVAL;
	hw_mailbox *mb = calloc(1, sizeof(*mb));
	if (!mb)
		return -ENOMEM;
	mb->n = n;
	/* aligned: hw_spsc keeps producer and consumer indices on separate lines */
	mb->ring = aligned_alloc(HW_CACHELINE, ((size_t)n * (size_t)n * sizeof(mb_ring) + HW_CACHELINE - 1) /
						       HW_CACHELINE * HW_CACHELINE);
	if (!mb->ring) {
		free(mb);
		return -ENOMEM;
	}
	memset(mb->ring, 0, (size_t)n * (size_t)n * sizeof(mb_ring));
	for (int f = 0; f < n; f++)
		for (int t = 0; t < n; t++) {
			if (f == t)
				continue;
			if (hw_spsc_init(&ring_at(mb, f, t)->q, capacity) < 0) {
				hw_mailbox_destroy(mb, NULL);
				return -ENOMEM;
			}
		}
	*out = mb;
	return 0;
}

void hw_mailbox_destroy(hw_mailbox *mb, void (*free_msg)(void *msg))
{
	if (!mb)
		return;
	for (int f = 0; f < mb->n; f++)
		for (int t = 0; t < mb->n; t++) {
			mb_ring *r = ring_at(mb, f, t);
			if (!r->q.slot)
				continue;
			void *m;
			while ((m = hw_spsc_pop(&r->q)))
				if (free_msg)
					free_msg(m);
			hw_spsc_fini(&r->q);
		}
	free(mb->ring);
	free(mb);
}

int hw_mailbox_size(const hw_mailbox *mb)
{
	return mb ? mb->n : 0;
}

int hw_mailbox_attach(hw_mailbox *mb, int idx, hw_reactor *r)
{
	if (!mb || idx < 0 || idx >= mb->n)
		return -EINVAL;
	mb->reactor[idx] = r;
	return 0;
}

int hw_mailbox_post(hw_mailbox *mb, int from, int to, void *msg)
{
	if (!mb || !msg || from < 0 || to < 0 || from >= mb->n || to >= mb->n || from == to)
		return -EINVAL;
	mb_ring *r = ring_at(mb, from, to);
	if (hw_spsc_push(&r->q, msg) < 0) {
		/* relaxed: a statistic written only by this producer */
		__atomic_store_n(&r->full, r->full + 1, __ATOMIC_RELAXED);
		return -ENOBUFS;
	}
	/* relaxed: a statistic written only by this producer */
	__atomic_store_n(&r->posted, r->posted + 1, __ATOMIC_RELAXED);
	/* the push's release store published the message; hw_reactor_wake
	 * issues the full fence that orders it before reading `sleeping` */
	if (mb->reactor[to])
		hw_reactor_wake(mb->reactor[to]);
	return 0;
}

int hw_mailbox_drain(hw_mailbox *mb, int to, hw_mailbox_fn fn, void *ctx, int max)
{
	if (!mb || !fn || to < 0 || to >= mb->n || mb->n == 1)
		return 0;
	int done = 0;
	int start = mb->next_from[to];
	for (int i = 0; i < mb->n; i++) {
		int from = (start + i) % mb->n;
		if (from == to)
			continue;
		mb_ring *r = ring_at(mb, from, to);
		uint32_t budget = r->q.mask + 1;  /* at most one ring's worth per sender */
		void *m;
		uint64_t got = 0;
		while (budget-- && (max <= 0 || done < max) && (m = hw_spsc_pop(&r->q))) {
			fn(ctx, from, m);
			done++;
			got++;
		}
		if (got)
			/* relaxed: a statistic written only by this consumer */
			__atomic_store_n(&r->received, r->received + got, __ATOMIC_RELAXED);
		if (max > 0 && done >= max) {
			mb->next_from[to] = (from + 1) % mb->n;  /* fairness next time */
			break;
		}
	}
	return done;
}

void hw_mailbox_get_stats(const hw_mailbox *mb, int to, hw_mailbox_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!mb || to < 0 || to >= mb->n)
		return;
	for (int f = 0; f < mb->n; f++) {
		if (f == to)
			continue;
		const mb_ring *r = ring_at(mb, f, to);
		/* relaxed: monotonic statistics, no ordering with the ring needed */
		out->posted += __atomic_load_n(&r->posted, __ATOMIC_RELAXED);
		out->full += __atomic_load_n(&r->full, __ATOMIC_RELAXED);
		out->received += __atomic_load_n(&r->received, __ATOMIC_RELAXED);
		out->queued += hw_spsc_count(&r->q);
	}
}
