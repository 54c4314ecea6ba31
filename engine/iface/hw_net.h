/* hw_net.h — how the engine sends messages. Implemented by the DPDK and
 * kernel-UDP transports (drivers/net) and by the simulated network of the
 * deterministic harness (tests/engine/repl).
 *
 * Delivery is unreliable by design, like UDP: a message may be lost,
 * delayed, duplicated or reordered. Kafka's semantics make that safe —
 * fetch is an idempotent pull by offset, produce retries are deduplicated
 * by the idempotent producer, controller pushes carry epochs.
 *
 * Receiving is the other direction: the transport calls the engine's entry
 * point (hw_rm_on_msg) for every decoded message.
 */
#ifndef HW_NET_H
#define HW_NET_H
#include <stdint.h>
#include "hw_msg.h"

typedef struct hw_net hw_net;
struct hw_net {
	/* Send m to node m->dst. The message and everything it points to is
	 * borrowed for the call only (a transport that defers sending copies or
	 * takes refs, e.g. on records_ref). Returns 0 when accepted for sending,
	 * -EAGAIN when the transport dropped it (TX ring full; counted),
	 * -EHOSTUNREACH for an unknown node, -EMSGSIZE when it cannot be framed. */
	int (*send)(hw_net *n, const hw_msg *m);
};

static inline int hw_net_send(hw_net *n, const hw_msg *m) { return n->send(n, m); }

#endif
