/* hw_dpdk_rxhold.h — holds on received memif mbufs (hw_rxhold.h) for a
 * follower's log: the fetched records are written to the segment from the
 * mbuf they arrived in, not copied into the log's tail buffer first.
 *
 * Design note. The driver announces each single-segment frame's mbuf for
 * the duration of its delivery (hw_rxhold_enter on cfg.rxhold); a hold takes one more
 * mbuf reference, a release frees one (rte_pktmbuf_free, from any thread).
 * Every held mbuf is one fewer for the RX rings to refill from, so holds
 * are budgeted process-wide: at most a quarter of the RX pool (the logs
 * keep a few per partition, ~tail_buffer_bytes worth); past the budget a
 * hold is refused (counted) and the follower copies, as before.
 */
#ifndef HW_DPDK_RXHOLD_H
#define HW_DPDK_RXHOLD_H
#include <stdint.h>

/* hw_rxhold_buf.hold / .release for an rte_mbuf. hold: 0 or -ENOBUFS. */
int hw_dpdk_rx_hold(void *mbuf);
void hw_dpdk_rx_release(void *mbuf);

/* Raise the process-wide budget to at least `n` held mbufs (called by the
 * instance that creates the RX pool: a quarter of its size). Never fails. */
void hw_dpdk_rx_hold_budget(uint32_t n);

typedef struct hw_dpdk_rxhold_stats {
	uint64_t held;       /* mbufs held now */
	uint64_t granted;    /* holds granted in total */
	uint64_t refused;    /* holds refused: budget spent */
} hw_dpdk_rxhold_stats;
void hw_dpdk_rx_hold_stats(hw_dpdk_rxhold_stats *out);

#endif
