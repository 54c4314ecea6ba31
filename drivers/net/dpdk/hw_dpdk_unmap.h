/* hw_dpdk_unmap.h — bursts against the memif PMD unmapping its regions.
 *
 * Design note. When a memif peer goes away (it crashed, or it was killed
 * while we were stopped), the PMD (DPDK 22.11, and unchanged upstream since)
 * handles the hang-up on the EAL interrupt thread: memif_disconnect clears
 * its CONNECTED flag and then munmaps the shared regions (memif_free_regions)
 * right away. A reactor inside rte_eth_rx_burst / rte_eth_tx_burst on that
 * port has already passed the flag check and dereferences the ring in the
 * unmapped region: SIGSEGV inside librte_net_memif.so. It shows when a
 * process resumes after SIGSTOP with a peer that died meanwhile: both threads
 * wake together, and the reactor may have been stopped mid-burst.
 *
 * The PMD takes no lock we could share, so hiwater orders the two from
 * outside:
 *   - every instance marks its slot busy around each burst on a memif port
 *     (hw_dpdk_unmap_enter / _leave, from port_enter / port_leave);
 *   - the executable defines munmap (exported with the dynamic list
 *     hw_dpdk_unmap.dynlist, so the dlopened PMD's call binds to it). On the
 *     EAL interrupt thread, once a memif port exists, it first makes every
 *     thread's busy mark visible (membarrier PRIVATE_EXPEDITED: the
 *     asymmetric fence; the burst side only needs a compiler barrier) and
 *     waits until no slot is busy, then unmaps with the raw system call.
 *   A burst that began before the wait ends first. A burst that begins after
 *   the fence sees CONNECTED cleared (the PMD cleared it before the munmap)
 *   and returns 0 before it touches the rings.
 *
 * Every other munmap (other threads, other libraries, jemalloc) passes
 * straight to the system call after two loads (or to a sanitizer's munmap
 * interceptor, where its runtime has one). Without membarrier (old kernel,
 * seccomp) the burst side uses a full fence instead.
 *
 * Error contract: hw_dpdk_unmap_arm returns 0 or a negative errno
 * (-ENOSPC: more than HW_DPDK_UNMAP_SLOTS instances in this process; the
 * instance runs unguarded, its slot is -1). The rest cannot fail.
 */
#ifndef HW_DPDK_UNMAP_H
#define HW_DPDK_UNMAP_H
#include <stdint.h>

#define HW_DPDK_UNMAP_SLOTS 64

typedef struct hw_dpdk_unmap_slot {
	uint32_t busy;            /* the slot's instance is inside a memif burst */
	uint8_t pad[60];          /* one cache line each: slots are written per burst */
} hw_dpdk_unmap_slot;

extern hw_dpdk_unmap_slot hw_dpdk_unmap_slots[HW_DPDK_UNMAP_SLOTS];
extern uint32_t hw_dpdk_unmap_full_fence;  /* 1: membarrier unavailable */

/* Arms the guard for this process (idempotent) and gives the calling
 * instance a slot in *slot (-1 on error). */
int hw_dpdk_unmap_arm(int *slot);

/* Before a burst on a memif port (slot from hw_dpdk_unmap_arm; < 0: no-op). */
static inline void hw_dpdk_unmap_enter(int slot)
{
	if (slot < 0)
		return;
	__atomic_store_n(&hw_dpdk_unmap_slots[slot].busy, 1, __ATOMIC_RELAXED);
	/* orders our busy store before the PMD's load of its CONNECTED flag
	 * inside the burst. With membarrier the interrupt thread's
	 * MEMBARRIER_CMD_PRIVATE_EXPEDITED makes this compiler barrier a full
	 * one whenever it matters; without it, a full fence here (Dekker with
	 * the fence in the waiter) */
	if (__atomic_load_n(&hw_dpdk_unmap_full_fence, __ATOMIC_RELAXED))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* After the burst. */
static inline void hw_dpdk_unmap_leave(int slot)
{
	if (slot < 0)
		return;
	/* release: the burst's ring accesses happen before a waiter that sees
	 * busy == 0 lets the PMD unmap the ring */
	__atomic_store_n(&hw_dpdk_unmap_slots[slot].busy, 0, __ATOMIC_RELEASE);
}

/* munmap calls that waited for a burst, and all guarded ones (on the EAL
 * interrupt thread while armed). */
uint64_t hw_dpdk_unmap_waited(void);
uint64_t hw_dpdk_unmap_guarded(void);

#endif
