/* hw_dpdk_unmap.c — the munmap that waits for memif bursts; see
 * hw_dpdk_unmap.h. */
#include "hw_dpdk_unmap.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_interrupts.h>

#include "hw_logging.h"

hw_dpdk_unmap_slot hw_dpdk_unmap_slots[HW_DPDK_UNMAP_SLOTS];
uint32_t hw_dpdk_unmap_full_fence;

static uint32_t armed;          /* a memif-capable instance exists */
static uint32_t n_slots;        /* slots handed out */
static uint64_t n_waited, n_guarded;

/* A sanitizer runtime that intercepts munmap (clang 14's and GCC 12's ASan
 * do not) exports its interceptor under this name: call it, so that its
 * bookkeeping stays right; otherwise, the system call. */
extern int __interceptor_munmap(void *addr, size_t len) __attribute__((weak));

int hw_dpdk_unmap_arm(int *slot)
{
	*slot = -1;
	uint32_t s = __atomic_fetch_add(&n_slots, 1, __ATOMIC_RELAXED);
	if (s >= HW_DPDK_UNMAP_SLOTS) {
		HW_LOG(WARN, "dpdk", "more than %d DPDK instances in this process: instance %u runs without "
		       "the memif unmap guard", HW_DPDK_UNMAP_SLOTS, s);
		return -ENOSPC;
	}
	if (s == 0) {
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) {
			/* relaxed: read by the burst side before its first burst,
			 * which comes after this instance is created */
			__atomic_store_n(&hw_dpdk_unmap_full_fence, 1, __ATOMIC_RELAXED);
			HW_LOG(INFO, "dpdk", "membarrier unavailable (%s): memif bursts use a full fence",
			       strerror(errno));
		}
		/* release: the fence mode is set before a munmap sees armed */
		__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	}
	*slot = (int)s;
	return 0;
}

/* Every burst that may have seen the port CONNECTED is over. */
static void wait_bursts(void)
{
	if (__atomic_load_n(&hw_dpdk_unmap_full_fence, __ATOMIC_RELAXED))
		/* full fence (Dekker): the PMD's CONNECTED clear before our busy
		 * reads; pairs with the fence in hw_dpdk_unmap_enter */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	else
		/* every thread of the process passes a full barrier: a busy mark
		 * stored before it is visible to the reads below, and a burst
		 * after it sees the PMD's CONNECTED clear */
		(void)syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	uint32_t n = __atomic_load_n(&n_slots, __ATOMIC_RELAXED);
	if (n > HW_DPDK_UNMAP_SLOTS)
		n = HW_DPDK_UNMAP_SLOTS;
	int waited = 0;
	for (uint32_t i = 0; i < n; i++)
		/* acquire: pairs with hw_dpdk_unmap_leave's release */
		while (__atomic_load_n(&hw_dpdk_unmap_slots[i].busy, __ATOMIC_ACQUIRE)) {
			waited = 1;
			sched_yield();   /* the burst's thread may share our core */
		}
	/* relaxed: counters */
	__atomic_fetch_add(&n_guarded, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_waited, (uint64_t)waited, __ATOMIC_RELAXED);
}

/* Interposes libc's munmap for the whole process (hw_dpdk_unmap.dynlist
 * exports it from the executable). Same contract as munmap(2): 0, or -1
 * with errno set. */
int munmap(void *addr, size_t len)
{
	/* acquire: pairs with the release in hw_dpdk_unmap_arm */
	if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) && rte_thread_is_intr())
		wait_bursts();
	if (__interceptor_munmap)
		return __interceptor_munmap(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

uint64_t hw_dpdk_unmap_waited(void) { return __atomic_load_n(&n_waited, __ATOMIC_RELAXED); }
uint64_t hw_dpdk_unmap_guarded(void) { return __atomic_load_n(&n_guarded, __ATOMIC_RELAXED); }
