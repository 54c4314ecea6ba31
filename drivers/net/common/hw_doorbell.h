/* hw_doorbell.h — wake a sleeping receiver whose transport has no RX
 * interrupt (memif), across processes on one host.
 *
 * Design note. A memif receiver only sees packets when it polls its ring;
 * DPDK's memif PMD offers no RX interrupt, so a reactor that sleeps (BACKOFF
 * idle strategy on shared cores) would notice a packet only when its sleep
 * cap expires (up to 1 ms). The doorbell closes that gap:
 *
 *   - every node owns a 64-byte shared flag file `<dir>/bell-<node>` and a
 *     unix datagram socket `<dir>/bell-<node>.sock` (its "doorbell fd", a
 *     reactor wait source);
 *   - before sleeping, the receiver sets its flag (hw_doorbell_set_sleeping
 *     as the wait source's arm hook); the reactor then issues a full fence
 *     and polls every RX ring once more before it sleeps;
 *   - a sender, after its TX burst to a peer (the packets are in the
 *     peer's ring), issues a full fence and reads the peer's flag; if set it
 *     sends one byte to the peer's socket, which ends the peer's epoll wait.
 *
 * No lost wakeup (Dekker): receiver = {flag := 1; fence; read ring}, sender
 * = {write ring; fence; read flag}. With both fences one of them sees the
 * other's write: either the receiver's re-poll finds the packet, or the
 * sender sees the flag and rings. Tested in tests/drivers/net/common/test_doorbell.c.
 *
 * Queues. A node whose reactors each poll their own RX queue (hw_dpdk.h)
 * has one doorbell per (node, queue): reactor k sleeps on bell-<node>-q<k>
 * (queue 0 keeps the name bell-<node>), and a sender that put packets in
 * the peer's RX queue k rings that queue's bell (hw_doorbell_ring_queue):
 * only the reactor that will find the packets wakes up. Each bell has its
 * own flag file, so the protocol and the retired marker are per queue.
 *
 * A process that replaces a node's flag file (a restart under the same
 * node id) marks the old file "retired" first, so senders drop the stale
 * mapping and map the new file (see hw_doorbell.c).
 *
 * The peer's flag file is mapped lazily by the sender (a peer that is not
 * up yet is retried at most every 100 ms; until then it is not rung and
 * falls back to its reactor's sleep cap). Cost on the sender: one fence and
 * one shared-cache-line read per burst, a sendto only when the peer sleeps.
 * One thread per hw_doorbell (the reactor's).
 */
#ifndef HW_DOORBELL_H
#define HW_DOORBELL_H
#include <stdint.h>

typedef struct hw_doorbell hw_doorbell;

/* Counters (read by the owner thread or for metrics). */
typedef struct hw_doorbell_stats {
	uint64_t rings;        /* bytes sent to a sleeping peer */
	uint64_t ring_errors;  /* sendto failed (peer gone, socket full) */
	uint64_t skipped;      /* peer awake: no ring needed */
	uint64_t unmapped;     /* peer's flag file not (yet) there */
	uint64_t received;     /* rings drained from our socket */
	uint64_t remaps;       /* a peer's flag file was retired (peer restarted): re-mapped */
} hw_doorbell_stats;

/* Create our flag file and bind our socket in `dir` (replacing stale ones).
 * NULL on failure with *err: -EINVAL, -ENAMETOOLONG (path > sun_path),
 * -ENOMEM, -errno from open/ftruncate/mmap/socket/bind. */
hw_doorbell *hw_doorbell_open(const char *dir, int32_t self_id, int *err);
/* The same for queue `queue` of node self_id (queue 0 = hw_doorbell_open;
 * files bell-<node>-q<queue>[.sock] otherwise). Same errors. */
hw_doorbell *hw_doorbell_open_queue(const char *dir, int32_t self_id, uint16_t queue, int *err);
/* Close the socket, unmap peers, remove our files. NULL is a no-op. */
void hw_doorbell_close(hw_doorbell *b);

/* Readable when rung (level triggered; hw_doorbell_set_sleeping(b, 0)
 * drains it). */
int hw_doorbell_fd(const hw_doorbell *b);

/* on = 1: publish "sleeping" (the caller must then issue a full fence and
 * poll its RX once more before sleeping — hw_reactor does both);
 * on = 0: clear it and drain pending rings. */
void hw_doorbell_set_sleeping(hw_doorbell *b, int on);

/* After putting packets in peer's RX ring: full fence, then ring the peer
 * if its flag is set. Returns 1 if rung, 0 if not needed/possible, or
 * -errno from sendto (counted in ring_errors). */
int hw_doorbell_ring(hw_doorbell *b, int32_t peer);
/* The same for the peer's queue `queue` bell (hw_doorbell_ring is queue 0).
 * Returns as hw_doorbell_ring. */
int hw_doorbell_ring_queue(hw_doorbell *b, int32_t peer, uint16_t queue);

const hw_doorbell_stats *hw_doorbell_get_stats(const hw_doorbell *b);

#endif
