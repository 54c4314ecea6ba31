/* hw_dpdk_steer.h — one wire stream per reactor on multi-queue ports
 * (private to drivers/net/dpdk; design note "Steering" in hw_dpdk.h).
 *
 * Instance k of a process with n queues listens on and sends from UDP port
 * BASE + k (BASE = hw_dpdk_cfg.udp_port). On a memif port the queue
 * pairing delivers a peer's queue-k frames to the instance polling our
 * queue k, so whatever an instance polls there it handles. On every other
 * port the kernel or NIC picks the RX queue by its own hash; each frame is
 * therefore steered to the instance that owns its destination port:
 *   - by rte_flow where the port accepts the rules (one "UDP dst port
 *     BASE + k -> QUEUE k" rule per queue, validated at start by queue 0);
 *   - and in software always: an instance that receives a frame for another
 *     instance's port hands the mbuf itself (no copy, nothing decoded yet)
 *     to that instance over a single-producer/single-consumer rte_ring per
 *     ordered pair of instances, and wakes it if it sleeps. The receiver of
 *     the hand-off decodes, replay-checks and delivers it: every frame is
 *     replay-checked once, by the instance that delivers it, and its mbuf
 *     is freed only after that (or held by a follower log, hw_dpdk_rxhold.h).
 */
#ifndef HW_DPDK_STEER_H
#define HW_DPDK_STEER_H
#include "hw_dpdk_int.h"

#define STEER_RING_SLOTS 1024     /* per (from, to) pair; power of two */

/* This instance's own UDP port: BASE + queue. */
static inline uint16_t dpdk_udp_self(const hw_dpdk *d)
{
	return (uint16_t)(d->cfg.udp_port + d->cfg.queue);
}

/* Set up this instance's side (hw_dpdk_create, after the ports are known;
 * the queue-0 instance also creates every hand-off ring). 0, -ENOMEM
 * (rings), -errno (eventfd), -EINVAL (queue > 0 before queue 0). */
int dpdk_steer_init(hw_dpdk *d);
/* Undo dpdk_steer_init: frees the mbufs still queued to us; queue 0 (last)
 * also removes its rte_flow rules (before the ports stop), the rings and
 * every instance's eventfd (closed only then: until the last instance is
 * gone another may be writing one). */
void dpdk_steer_fini(hw_dpdk *d);
/* Queue 0, after port p started: choose its steering (none on memif or
 * with one queue; rte_flow if every rule validates and is created; else
 * software) and log it. Never fails: software steering always works. */
void dpdk_steer_port(hw_dpdk *d, dport *p);

/* The instance that must handle mb, received on port p: -1 for this one
 * (not a steered port, not IPv4/UDP to us, or our own port), else the
 * queue that owns its destination UDP port. Reads headers only (bounds
 * checked against the first segment). */
int dpdk_steer_target(const hw_dpdk *d, const dport *p, const struct rte_mbuf *mb);
/* Hand mb (ours; received on port id port_id) to instance `to`. Takes mb
 * in every case: on a full ring it is freed and counted (rx_steer_dropped).
 * Wakes are batched: call dpdk_steer_wake after the burst. */
void dpdk_steer_handoff(hw_dpdk *d, int to, uint16_t port_id, struct rte_mbuf *mb);
/* Wake the instances handed frames since the last call, if they sleep. */
void dpdk_steer_wake(hw_dpdk *d);
/* Up to n mbufs other instances handed to us (each mbuf's `port` is the
 * port id it arrived on). Returns how many. */
unsigned dpdk_steer_take(hw_dpdk *d, struct rte_mbuf **pk, unsigned n);

/* Sleeping on hand-offs: the eventfd another instance writes when it hands
 * us a frame while we sleep (-1: no steered port), and the flag it reads.
 * Set the flag, full fence, re-poll, sleep, clear it (hw_reactor's wait
 * protocol; hw_dpdk_idle_wait does the same). */
int dpdk_steer_fd(const hw_dpdk *d);
void dpdk_steer_set_sleeping(hw_dpdk *d, int on);
/* Queue pairs to configure on p for n instances: n, except a memif server
 * (HW_DPDK_MAX_QUEUES, hw_dpdk.h "memif queues") and net_af_packet, whose
 * vdev opened `qpairs` sockets the kernel hashes flows over whether they are
 * configured or not — all of them are configured (up to HW_DPDK_MAX_QUEUES)
 * and instance q polls q, q + n, ... like a memif server's extra rings, so
 * no frame lands on a socket nobody reads. */
uint16_t dpdk_port_queues(const dport *p, uint16_t n);
/* HW_DPDK_STEER_* of port index i. */
int dpdk_steer_mode(const hw_dpdk *d, int i);

#endif
