/* hw_udp.h — the kernel-UDP transport on io_uring.
 *
 * Design note. One non-blocking IPv4 UDP socket per instance (used for the
 * control plane of every process, and as the data plane when
 * hiwater.transport=udp). Receiving keeps `rx_depth` recvmsg SQEs
 * outstanding, each with its own 64 KiB buffer; hw_udp_poll reaps
 * completions without a system call when there are some (io_uring's CQ is
 * shared memory), decodes each datagram (hw_wire_decode: bounds-checked,
 * counted drops), checks replay and destination, learns the sender's
 * address for replies, delivers it to on_msg, and re-arms all the consumed
 * receives with ONE io_uring_submit. Sending encodes into a TX slot buffer
 * and queues a sendmsg SQE; with defer_tx the SQEs of everything sent during
 * a reactor iteration go to the kernel in one submit at the next poll (or
 * hw_udp_flush), otherwise each send submits at once. When every TX slot is
 * in flight, the frame is sent with a plain sendmsg(2) (counted). A fetch
 * response larger than max_frame goes out as several frames (hw_wire split).
 *
 * The ring is set up with COOP_TASKRUN: the kernel does not interrupt us to
 * complete receives; hw_udp_poll notices IORING_SQ_TASKRUN and enters the
 * kernel once to run them (measurably lower round-trip latency when
 * busy-polling). A sleeping reactor therefore waits on the socket's
 * readability (hw_udp_wait_fd: an epoll fd holding the socket), not on a CQ
 * eventfd, which would only fire after that kernel entry.
 *
 * Several instances may belong to one node (a multi-reactor broker has a
 * data socket per reactor): cfg.stream then tells them apart on the wire
 * (hw_wire.h version 2), so receivers keep a replay window per stream.
 *
 * Threading: one instance belongs to one thread (its reactor): the first
 * hw_udp_poll posts the receives, and io_uring completes them through task
 * work of the thread that posted them, so create anywhere but poll from one
 * thread only. A datagram that arrives before the first poll waits in the
 * socket buffer.
 */
#ifndef HW_UDP_H
#define HW_UDP_H
#include <stdint.h>
#include "hw_net.h"
#include "hw_netconf.h"
#include "hw_wire.h"

typedef struct hw_udp hw_udp;

typedef struct hw_udp_cfg {
	const char *listen;            /* "udp:127.0.0.1:PORT" (PORT 0: ephemeral) */
	uint32_t cluster_id;
	int32_t self_id;               /* frames with another dst are dropped (NOT_FOR_US); -1: accept any */
	hw_net_on_msg_fn on_msg;
	void *ctx;
	uint32_t rx_depth;             /* outstanding receives (0 -> 32) */
	uint32_t tx_depth;             /* TX slots (0 -> 32) */
	uint32_t max_frame;            /* 0 -> HW_WIRE_MAX_FRAME */
	uint8_t defer_tx;              /* submit sends at the next poll/flush */
	uint8_t no_replay_check;       /* tests of replay handling only */
	uint8_t stream;                /* wire stream of our frames (hw_wire.h, version 2):
					* the reactor index of a multi-reactor node; 0..15 */
	uint8_t check_peer_addr;       /* drop (WRONG_PEER) a frame whose src has a configured
					* route with another address (docs/security.md); for
					* the control plane, where every node has one endpoint */
	int32_t owner_reactor;         /* the reactor (hw_reactor_cfg.id) that uses the socket:
					* send, poll, flush, wait, learn, add_neighbour and
					* destroy assert it (HW_ASSERT_OWNER); HW_OWNER_ANY:
					* not checked. 0 (a zeroed cfg) is reactor 0 */
	int32_t bind_wait_ms;          /* on EADDRINUSE keep trying this long (a restarted
					* node: hw_netaddr_bind_wait); 0: fail at once */
} hw_udp_cfg;

typedef struct hw_udp_stats {
	hw_wire_stats wire;            /* rx/tx frames and bytes, drops by reason */
	uint64_t rx_errors;            /* failed recvmsg completions */
	uint64_t tx_errors;            /* failed sends (completion or syscall) */
	uint64_t tx_sync_fallback;     /* sends done with sendmsg(2): no free slot */
	uint64_t tx_unroutable;        /* -EHOSTUNREACH */
	uint64_t learned;              /* sender addresses learned */
	uint64_t forgotten;            /* learned routes dropped: table full (docs/wire.md "Node ids") */
	uint64_t bytes_copied;         /* payload bytes memcpy'd on TX */
} hw_udp_stats;

/* Create and bind. NULL on failure with *err (-EINVAL bad cfg/listen string,
 * -errno of socket/bind/io_uring setup). */
hw_udp *hw_udp_create(const hw_udp_cfg *cfg, int *err);
void hw_udp_destroy(hw_udp *u);

/* The hw_net to send through (send: see hw_net.h; -EHOSTUNREACH for a node
 * with no configured or learned address, -EMSGSIZE, -EINVAL bad message). */
hw_net *hw_udp_net(hw_udp *u);

/* Route node -> "udp:HOST:PORT". 0, -EINVAL, -ENOSPC (table full). A
 * configured route is never replaced by a learned one. */
int hw_udp_add_neighbour(hw_udp *u, int32_t node, const char *endpoint);

/* Inside on_msg only: the address the frame being delivered came from.
 * 0, or -ENOENT outside a delivery. (A multi-reactor broker hands a frame
 * to the reactor that owns its partition along with this address.) */
struct sockaddr_in;
int hw_udp_rx_peer(const hw_udp *u, struct sockaddr_in *out);
/* Learn node -> addr as if a frame from it had arrived here (a configured
 * route is kept). Owner thread only. 0, -EINVAL, -ENOSPC. */
int hw_udp_learn(hw_udp *u, int32_t node, const struct sockaddr_in *addr);

/* Reap completions, deliver messages, re-arm receives, flush deferred
 * sends. Returns the number of completions handled (>= 0) or -errno. */
int hw_udp_poll(hw_udp *u);
/* Submit deferred sends now. 0 or -errno. */
int hw_udp_flush(hw_udp *u);

/* Block up to timeout_ms for at least one completion, then poll. For tools
 * and tests without a reactor. Returns like hw_udp_poll. */
int hw_udp_wait(hw_udp *u, int timeout_ms);

/* Readable (level-triggered) while datagrams wait: an epoll fd holding the
 * socket, for hw_reactor_add_wait_fd (drain 0 saves a failing read; 1 is
 * harmless). */
int hw_udp_wait_fd(const hw_udp *u);
uint16_t hw_udp_local_port(const hw_udp *u);
const hw_udp_stats *hw_udp_get_stats(const hw_udp *u);

#endif
