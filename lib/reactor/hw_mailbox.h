/* hw_mailbox.h — cross-reactor messages: a full mesh of SPSC rings.
 *
 * Design note. Reactors share nothing; when one of them holds work that
 * belongs to another (a frame for a partition another reactor owns, a
 * control-plane update), it posts a pointer to the owner's mailbox and wakes
 * it. A mailbox for N reactors is N x N single-producer single-consumer
 * rings (hw_spsc.h): ring [from][to] is written only by reactor `from` and
 * read only by reactor `to`, so no ring ever needs a compare-and-swap and a
 * message from one reactor to another is delivered in FIFO order. This is
 * the role rte_ring plays in DPDK applications; our own ring keeps lib/ free
 * of an EAL dependency (the UDP transport and the unit tests run without
 * one), and a fixed mesh of SPSC rings is cheaper than MP/MC rings.
 *
 * Posting: push onto ring [from][to], then hw_reactor_wake(to): the push's
 * release store publishes the message, the wake's full fence orders it
 * before the read of the owner's "sleeping" flag (hw_reactor.h lost-wakeup
 * protocol), and the owner, after setting that flag and fencing, polls its
 * rings once more before sleeping — so a message is never left behind a
 * sleeping owner. The owner's mailbox poller drains every ring addressed to
 * it, in a bounded batch, once per loop iteration.
 *
 * Ownership of a message passes with the pointer: the receiver's handler
 * frees it. A full ring refuses the post (-ENOBUFS, counted): the sender
 * frees the message — cross-reactor traffic is datagram-like, exactly as
 * the network it stands in for (Kafka's retries and refetches heal it).
 *
 * Counters are written by the one thread that owns each side with relaxed
 * atomic stores and may be read from any thread.
 */
#ifndef HW_MAILBOX_H
#define HW_MAILBOX_H
#include <stdint.h>
#include "hw_reactor.h"

#define HW_MAILBOX_MAX 16   /* reactors per mailbox */

typedef struct hw_mailbox hw_mailbox;

/* n reactors (1..HW_MAILBOX_MAX), `capacity` slots per ring (power of two
 * >= 2). 0 and *out, -EINVAL, -ENOMEM. */
int hw_mailbox_create(int n, uint32_t capacity, hw_mailbox **out);
/* Frees the rings; messages still queued are passed to free_msg (may be
 * NULL). Call after every reactor using it has stopped. NULL is a no-op. */
void hw_mailbox_destroy(hw_mailbox *mb, void (*free_msg)(void *msg));

int hw_mailbox_size(const hw_mailbox *mb);
/* The reactor woken when a message is posted to `idx` (NULL: no wake, e.g.
 * tests that drain by hand). Before the reactors start. 0 or -EINVAL. */
int hw_mailbox_attach(hw_mailbox *mb, int idx, hw_reactor *r);

/* On reactor `from`'s thread only: post msg (not NULL) to reactor `to` and
 * wake it. 0; -ENOBUFS when the ring is full (msg NOT taken: the caller
 * still owns it); -EINVAL bad index, from == to, or NULL msg. */
int hw_mailbox_post(hw_mailbox *mb, int from, int to, void *msg);

typedef void (*hw_mailbox_fn)(void *ctx, int from, void *msg);
/* On reactor `to`'s thread only: hand up to `max` queued messages (0: no
 * limit beyond one ring's capacity per sender) to fn, round-robin over the
 * senders. Returns how many were handed over (the amount of work done). */
int hw_mailbox_drain(hw_mailbox *mb, int to, hw_mailbox_fn fn, void *ctx, int max);

typedef struct hw_mailbox_stats {
	uint64_t posted;      /* messages accepted for `to`, from every sender */
	uint64_t full;        /* posts to `to` refused: ring full */
	uint64_t received;    /* messages `to` drained */
	uint32_t queued;      /* snapshot of messages waiting */
} hw_mailbox_stats;
/* Any thread: counters of the rings addressed to reactor `to`. */
void hw_mailbox_get_stats(const hw_mailbox *mb, int to, hw_mailbox_stats *out);

#endif
