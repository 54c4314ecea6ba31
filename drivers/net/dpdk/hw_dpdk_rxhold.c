/* hw_dpdk_rxhold.c — budgeted holds on received mbufs. Design note in
 * hw_dpdk_rxhold.h. */
#include <errno.h>
#include <rte_mbuf.h>
#include "hw_dpdk_rxhold.h"

/* Relaxed atomics throughout: they count, they order nothing else (the
 * mbuf's own refcount is DPDK's atomic). */
static uint32_t budget;
static uint32_t held;
static uint64_t granted, refused;

int hw_dpdk_rx_hold(void *mbuf)
{
	uint32_t max = __atomic_load_n(&budget, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&held, 1, __ATOMIC_RELAXED) > max) {
		__atomic_sub_fetch(&held, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
		return -ENOBUFS;
	}
	rte_mbuf_refcnt_update((struct rte_mbuf *)mbuf, 1);
	__atomic_add_fetch(&granted, 1, __ATOMIC_RELAXED);
	return 0;
}

void hw_dpdk_rx_release(void *mbuf)
{
	rte_pktmbuf_free((struct rte_mbuf *)mbuf);
	__atomic_sub_fetch(&held, 1, __ATOMIC_RELAXED);
}

void hw_dpdk_rx_hold_budget(uint32_t n)
{
	uint32_t cur = __atomic_load_n(&budget, __ATOMIC_RELAXED);
	while (n > cur && !__atomic_compare_exchange_n(&budget, &cur, n, 0, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
		;
}

void hw_dpdk_rx_hold_stats(hw_dpdk_rxhold_stats *out)
{
	out->held = __atomic_load_n(&held, __ATOMIC_RELAXED);
	out->granted = __atomic_load_n(&granted, __ATOMIC_RELAXED);
	out->refused = __atomic_load_n(&refused, __ATOMIC_RELAXED);
}
