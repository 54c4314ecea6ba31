/* hw_dpdk.h — the DPDK transport: hiwater frames in Ethernet/IPv4/UDP
 * packets on DPDK ethdev ports (virtual devices — net_memif, net_ring,
 * net_af_packet, net_af_xdp, net_tap, net_null — or PCI NICs).
 *
 * Design note. The EAL is initialised once per process from the
 * `dpdk.eal.args` string (hw_dpdk_eal_init). Every probed port is used: the
 * first instance (queue 0) configures each port with `n_queues` RX/TX queue
 * pairs and starts it; each reactor then owns one instance bound to its own
 * queue index on every port (shared-nothing: no locks on the data path; a
 * DPDK queue is only ever touched by one thread). Instance q polls RX queue
 * q and transmits on TX queue q.
 *
 * memif queues (DPDK 22.11 PMD, read and reproduced here): the memif CLIENT
 * decides how many ring pairs a connection has (the server's HELLO
 * advertises 255); the server refuses a client with more rings than it has
 * queues ("Invalid ring index": the link never comes up), and accepts one
 * with fewer — but its queues beyond the client's count are NOT dead: their
 * ring offset defaults to 0, so RX on them re-reads ring 0 (every packet
 * delivered once per queue polled) and TX on them writes into ring 0. And
 * the PMD has no API that tells how many rings are connected. So:
 *   - a memif SERVER port is configured with HW_DPDK_MAX_QUEUES queue pairs
 *     whatever our reactor count (any hiwater client connects);
 *   - a memif CLIENT port with n_queues (all of them connect);
 *   - the client's queue-0 instance announces its ring count to the server
 *     in a "queue hello" (EtherType 0x88B5, local experimental; format,
 *     version and compatibility in hw_qhello.h) on queue 0 when its link comes up and
 *     every second while up; the server uses only queue 0 until it hears
 *     it, and again queue 0 only as soon as the link goes down (checked
 *     every millisecond by the queue-0 instance);
 *   - a server instance q polls RX queues q, q + n_queues, ... below the
 *     connected count (a peer with more reactors than we have is served by
 *     our reactors round-robin); it transmits on queue q only if q is below
 *     the connected count: otherwise hw_net send returns -EXDEV (counted in
 *     tx_queue_unconnected) and the caller hands the message to an instance
 *     whose queue is connected (queue 0 always is). A one-queue CLI client
 *     talking to a multi-reactor broker is that case.
 * Non-memif ports have n_queues queues, all usable.
 *
 * Steering (hw_dpdk_steer.h). Instance q listens on and sends from UDP port
 * udp_port + q (udp_port is the BASE, hiwater.dpdk.udp.port) and, when
 * n_queues > 1, sends as wire stream q (unless cfg.wire_stream says
 * otherwise): each instance is its own sequence stream with its own
 * incarnation, so a receiver keeps one replay window per (node, stream)
 * and never drops one instance's frames as STALE_SENDER after another's.
 * Every instance accepts frames to BASE .. BASE + n_queues - 1. A memif
 * port pairs queues (a peer's queue k lands on our queue k), so what an
 * instance polls there it handles. Any other port (af_packet qpairs, af_xdp,
 * tap queues, NIC queues) spreads flows over RX queues by its own hash: a
 * frame is steered to the instance that owns its destination port, by
 * rte_flow rules where the port accepts them (queue 0 validates one rule
 * per queue at start) and in software always: the instance that received
 * it hands the mbuf to the owner over an SPSC ring (counted
 * rx_steered_out / rx_steered_in, a full ring rx_steer_dropped) and wakes
 * it if it sleeps. The owner decodes, replay-checks and delivers it.
 * A neighbour's `queues=N` (its reactor count) makes instance k send to
 * its BASE + (k mod N), i.e. to the peer reactor with the same index.
 *
 * Port restarts. Only the queue-0 instance restarts a port (memif client
 * reconnects: stop + start). The other instances may be inside an RX or TX
 * burst on that port at that moment, so each burst of instance q > 0 is
 * bracketed by a per-(port, queue) "busy" flag and checks the port's
 * "paused" flag (Dekker, both sides with a full fence): the restarter sets
 * paused, and restarts only once no busy flag is set (else it retries at
 * the next link check, staying paused); bursts that see paused skip the
 * port.
 *
 * memif ports are special: every packet must fit ONE memif buffer (vdev
 * bsize), because the memif PMD mishandles multi-descriptor packets (stale
 * NEXT flags on reused ring slots: duplicated, corrupt packets — reproduced
 * here). A packet is one mbuf (a 64 KiB jumbo pool), or, for zero-copy
 * records, a chain of a header mbuf and external mbufs whose total fits one
 * memif buffer: 22.11's memif TX copies such a chain into a single
 * descriptor (verified in its source and by tests/drivers/net/dpdk/test_memif_chain.c).
 * memif then copies the record bytes from the log's buffer into its shared
 * ring inside rte_eth_tx_burst — memif's "DMA", not counted as hiwater's
 * copy (tx_bytes_copied); true zero copy would need the log's buffers to
 * live in the memif region (memif zero-copy mode).
 *
 * Framing: Ethernet II + IPv4 (no options, DF set, software header
 * checksum) + UDP (checksum offloaded when the port can, else 0, which IPv4
 * allows; the hiwater records carry their own CRC-32C) + one hiwater frame
 * (hw_wire.h). So tcpdump/wireshark decode captures and NICs can steer by
 * UDP port (RSS / rte_flow). MTU: on every non-memif port the owner picks
 * an MTU (cfg.mtu, default the largest the port accepts capped at 9000;
 * per port kind in hw_dpdk_port.c choose_mtu and drivers/net/README.md
 * "MTU") and logs it; no packet is sent over it. A frame larger than one
 * packet's UDP payload (MTU - 28) goes out as hiwater fragments (hw_frag.h),
 * reassembled by the receiver with bounded memory and a 100 ms timeout,
 * every drop counted by reason (hw_dpdk_stats.frag). Only ports whose
 * dev_info advertises TX MULTI_SEGS get mbuf chains (copied frames larger
 * than a 2 KiB mbuf on ring/null, zero-copy records); others get one mbuf
 * per packet (MTU-sized TX mbufs), zero-copy records copied and counted
 * (tx_linearized_*). Received chains are linearised into a scratch buffer
 * before decoding (counted). memif RX queues fill 64 KiB mbufs, so a frame
 * arrives in one mbuf and is decoded in place.
 *
 * Zero-copy TX: on MULTI_SEGS ports, a fetch-response part whose
 * records_ref is set (and cfg.ref_ops given), in a frame that
 * fits one packet, is not copied: its record bytes are attached
 * to the packet as external mbuf buffers (rte_pktmbuf_attach_extbuf) whose
 * shared info holds a reference (ops->hold) dropped by the free callback
 * (ops->release) when the PMD frees the mbuf. Bytes sent by reference and
 * bytes copied are both counted.
 *
 * Neighbours: node id -> (port, MAC, IPv4, UDP port) from config
 * ("dpdk:port=net_memif_b2[,mac=..][,ip=..][,udp=..][,queues=..]"); a sender that is not
 * configured is learned from its first valid frame (reply where the request
 * came from), and a configured neighbour without a MAC learns it from
 * traffic or ARP. Until a MAC is known frames go to the broadcast MAC (fine
 * on point-to-point memif links) and an ARP request is sent (rate-limited).
 * ARP requests for our IP are answered.
 *
 * Link state: ports are polled for link changes every 100 ms and changes
 * logged; a memif peer that dies and comes back reconnects: a server port
 * accepts the new connection itself (the memif PMD's control channel), a
 * client port is re-dialled (port stop + start) every 300 ms while down,
 * also when its server was not there at startup. TX to a down link is
 * dropped and counted.
 */
#ifndef HW_DPDK_H
#define HW_DPDK_H
#include <stdint.h>
#include "hw_net.h"
#include "hw_netconf.h"
#include "hw_frag.h"
#include "hw_qhello.h"
#include "hw_wire.h"

#define HW_DPDK_DEFAULT_UDP_PORT 9092
#define HW_DPDK_MAX_QUEUES 8       /* queue pairs per port (memif servers: always) */
#define HW_DPDK_MTU_CAP 9000       /* default MTU: the largest the port accepts, at most this */
#define HW_DPDK_MTU_MIN 308        /* smallest cfg.mtu: 28 bytes IPv4/UDP + a 280-byte fragment */
#define HW_DPDK_L3L4_HDR 28        /* IPv4 (no options) + UDP headers inside the MTU */

/* Initialise the EAL from a whitespace-separated argument string, once per
 * process (later calls return 0 if it is already up). 0, -EINVAL (empty or
 * too many args), or -errno from rte_eal_init. */
int hw_dpdk_eal_init(const char *eal_args);
/* rte_eal_cleanup, after every instance is destroyed; also removes this
 * process's runtime directory (/var/run/dpdk/<file-prefix>). */
void hw_dpdk_eal_cleanup(void);

typedef struct hw_dpdk hw_dpdk;

typedef struct hw_dpdk_cfg {
	uint32_t cluster_id;
	int32_t self_id;               /* dst check; -1 accepts any */
	hw_net_on_msg_fn on_msg;
	void *ctx;
	uint32_t ip;                   /* ours, network order; 0 -> 10.77.0.<self_id & 255> */
	uint16_t udp_port;             /* BASE: instance q listens on and sends from
					* BASE + q; 0 -> HW_DPDK_DEFAULT_UDP_PORT */
	uint16_t queue;                /* this instance's queue index (= reactor index) */
	uint16_t n_queues;             /* instances (reactors) sharing the ports, each
					* with its own queue; <= HW_DPDK_MAX_QUEUES
					* (queue-0 instance configures; 0 -> 1) */
	uint32_t n_mbufs;              /* mempool size (0 -> 8191) */
	uint32_t max_frame;            /* 0 -> HW_WIRE_MAX_FRAME */
	uint16_t mtu;                  /* non-memif ports (hiwater.dpdk.mtu): 0 -> the largest the
					* port accepts, capped at HW_DPDK_MTU_CAP; else
					* HW_DPDK_MTU_MIN.. (lowered, logged, where the port
					* cannot); frames that do not fit go as fragments */
	uint8_t defer_tx;              /* TX burst at the next poll/flush instead of per send */
	uint8_t no_zero_copy;          /* always copy records (for comparisons) */
	uint8_t no_rx_intr;            /* do not configure RX-queue interrupts */
	uint8_t no_doorbell;           /* memif: no doorbell (hw_doorbell.h) */
	uint8_t wire_stream;           /* hw_wire sender stream of this instance's frames
					* (0..15; 0 = the default: the queue index when
					* n_queues > 1, else 0 = wire v1). Instances of one
					* node that may reach the same receiver queue need
					* distinct streams: a receiver keeps one replay window
					* per (src, stream) and drops the lower incarnation
					* (the multi-producer CLI client sets it per queue) */
	hw_net_ref_ops ref_ops;        /* zero-copy TX of records_ref (design note);
					* hold NULL: records are copied */
	struct hw_rxhold_ctx *rxhold;  /* where a frame's mbuf is announced while it is
					* delivered (hw_rxhold.h), the context the
					* consumer on_msg reaches (the rm of this reactor)
					* takes holds from; NULL: none announced */
	int32_t owner_reactor;         /* the reactor (hw_reactor_cfg.id) that uses this
					* instance: send, poll, flush, tx_raw, idle_wait,
					* add_neighbour, add_wait_sources and destroy assert it
					* (HW_ASSERT_OWNER); HW_OWNER_ANY: not checked. 0 (a
					* zeroed cfg) is reactor 0 */
} hw_dpdk_cfg;

typedef struct hw_dpdk_stats {
	hw_wire_stats wire;
	uint64_t rx_packets;           /* every packet received */
	uint64_t rx_not_hiwater;       /* not IPv4/UDP to our port, or runt */
	uint64_t rx_linearized_bytes;  /* multi-segment frames copied to decode */
	uint64_t tx_packets;
	uint64_t tx_segments;
	uint64_t tx_bytes_copied;      /* frame bytes memcpy'd into mbufs */
	uint64_t tx_bytes_zero_copy;   /* record bytes sent as external buffers */
	uint64_t tx_dropped;           /* TX ring full or link down */
	uint64_t tx_no_mbuf;           /* mempool exhausted */
	uint64_t tx_unroutable;
	uint64_t arp_rx;
	uint64_t arp_replies_tx;
	uint64_t arp_requests_tx;
	uint64_t learned;
	uint64_t forgotten;       /* learned neighbours dropped: table full (docs/wire.md "Node ids") */
	uint64_t link_up_events;
	uint64_t link_down_events;
	/* multi-queue (design note) */
	uint64_t rx_queue_packets[HW_DPDK_MAX_QUEUES]; /* packets received per RX queue */
	uint64_t tx_queue_unconnected; /* sends refused: our queue not connected (-EXDEV) */
	uint64_t queue_hello_tx;       /* memif client: ring counts announced */
	uint64_t queue_hello_rx;       /* memif server: announcements received */
	uint64_t port_busy_skips;      /* bursts skipped: port being restarted */
	/* steering (design note): frames received on our queue for another
	 * instance's UDP port and handed to it, frames handed to us, hand-offs
	 * dropped because the target's ring was full, and wake-ups written to
	 * sleeping targets. rx_packets counts what this instance handled: its
	 * own queue's frames minus rx_steered_out, plus rx_steered_in. */
	uint64_t rx_steered_out;
	uint64_t rx_steered_in;
	uint64_t rx_steer_dropped;
	uint64_t rx_steer_wakeups;
	/* memif server: hellos rejected by hw_qhello_decode, per reason (each
	 * such packet is counted here only, not in rx_not_hiwater) */
	uint64_t queue_hello_drops[HW_QHELLO_DROP__COUNT];
	/* sized to the port (hw_dpdk.h "MTU") */
	uint64_t tx_fragmented_frames; /* frames sent as fragments */
	uint64_t tx_fragments;         /* fragment packets sent */
	uint64_t tx_refused_size;      /* frames refused (-EMSGSIZE): no way to fit the port */
	uint64_t tx_linearized_packets;/* would have been chains (zero-copy or > 1 mbuf) but the
					* port has no MULTI_SEGS: built as one mbuf */
	uint64_t tx_linearized_bytes;
	hw_frag_stats frag;            /* reassembly of received fragments, drops by reason */
} hw_dpdk_stats;

/* Create an instance (the EAL must be up). The queue-0 instance configures
 * and starts every port; create it first and destroy it last (the other
 * instances use the ports it configured). NULL on failure with *err:
 * -EINVAL (cfg, queue >= n_queues, n_queues > HW_DPDK_MAX_QUEUES),
 * -ENODEV (no ports), -ENOMEM, -errno from ethdev setup. */
hw_dpdk *hw_dpdk_create(const hw_dpdk_cfg *cfg, int *err);
/* Stops and closes the ports if this is the queue-0 instance. Destroy
 * instances only once none of them polls any more (the others may be
 * handing this one frames). */
void hw_dpdk_destroy(hw_dpdk *d);

/* The instance's hw_net. Its send returns 0, -EHOSTUNREACH (no route to
 * m->dst), -EXDEV (this instance's queue is not connected on the port of
 * m->dst: a memif peer with fewer rings — send through another instance,
 * e.g. queue 0), -EAGAIN (no mbuf), or an encoder error. */
hw_net *hw_dpdk_net(hw_dpdk *d);
/* "dpdk:port=<vdev name|port id>[,mac=..][,ip=..][,udp=BASE][,queues=N]":
 * this instance (queue q) sends to the peer's UDP port BASE + (q mod N)
 * (BASE default HW_DPDK_DEFAULT_UDP_PORT, N default 1). Without port= (the
 * form brokers register) the route goes through the only port; with
 * several ports that is -EINVAL. 0, -EINVAL, -ENODEV (no such port),
 * -ENOSPC. */
int hw_dpdk_add_neighbour(hw_dpdk *d, int32_t node, const char *endpoint);

/* Register the RX-queue interrupt fds of this instance's queue (ports whose
 * PMD has them: virtio_user, vhost, NICs — not memif) as wait sources of a
 * reactor, armed (rte_eth_dev_rx_intr_enable) only while it sleeps. Returns
 * how many were registered (0: the reactor's backoff cap bounds the wake-up
 * latency), or -errno from hw_reactor_add_wait_fd. */
/* A port with neither (af_packet, af_xdp without interrupts, ring/null) asks
 * the reactor to cap its sleeps at HW_DPDK_POLL_CAP_US
 * (hw_reactor_need_polling); memif with a doorbell and ports with RX
 * interrupts let an idle reactor sleep up to the automatic cap. */
#define HW_DPDK_POLL_CAP_US 1000u
struct hw_reactor;
int hw_dpdk_add_wait_sources(hw_dpdk *d, struct hw_reactor *r);
/* memif ports have no RX interrupt: with a node id (cfg.self_id >= 0)
 * every instance opens a doorbell for its queue (hw_doorbell_open_queue) in
 * the directory of the first memif socket= of the EAL args;
 * hw_dpdk_add_wait_sources registers it (counted in the return value) and
 * every TX burst of instance q on a memif port rings the queue-q bell of the
 * neighbour configured on that port if it sleeps (the peer reactor that
 * polls its RX queue q).
 *
 * For loops without a reactor (the CLI client): sleep up to timeout_ns
 * unless a packet arrives — on this queue's RX-interrupt eventfds (ports
 * that have them, armed only for the sleep) and the doorbell; with
 * neither, a plain nanosleep — with the same no-lost-wakeup protocol;
 * returns packets handled (>= 0) by the polls around the sleep. */
int hw_dpdk_idle_wait(hw_dpdk *d, int64_t timeout_ns);
/* NULL when this instance has no doorbell. */
struct hw_doorbell_stats;
const struct hw_doorbell_stats *hw_dpdk_doorbell_stats(const hw_dpdk *d);

/* RX burst on every port, deliver, TX burst of pending packets, link check.
 * Returns packets handled (>= 0). */
int hw_dpdk_poll(hw_dpdk *d);
/* Transmit pending packets now. Returns packets sent. */
int hw_dpdk_flush(hw_dpdk *d);

/* Send a raw Ethernet frame (len <= 9000) on port index i, queued like any
 * other packet (tools and hostile-input tests). 0, -EINVAL, -ENOBUFS,
 * -EMSGSIZE (larger than a memif port's buffer). */
int hw_dpdk_tx_raw(hw_dpdk *d, int port_index, const void *frame, size_t len);

const hw_dpdk_stats *hw_dpdk_get_stats(const hw_dpdk *d);
/* Number of ports in use, and whether port index i (0..n-1) has link. */
int hw_dpdk_port_count(const hw_dpdk *d);
int hw_dpdk_link_up(const hw_dpdk *d, int port_index);
/* Queue pairs usable on port index i right now (memif server: what the
 * client connected and announced, 1 until then), or -EINVAL. */
int hw_dpdk_port_queues(const hw_dpdk *d, int port_index);
/* How frames reach their instance on port index i (design note
 * "Steering"), or -EINVAL. */
#define HW_DPDK_STEER_TABLE(X) \
	X(NONE) /* memif (queue pairing), or one queue */ \
	X(SW)   /* software hand-off only: the port refused the rte_flow rules */ \
	X(FLOW) /* rte_flow rules per UDP port, software hand-off for the rest */
enum {
#define HW_DPDK_STEER_ENUM(n) HW_DPDK_STEER_##n,
	HW_DPDK_STEER_TABLE(HW_DPDK_STEER_ENUM)
#undef HW_DPDK_STEER_ENUM
};
int hw_dpdk_port_steering(const hw_dpdk *d, int port_index);
const char *hw_dpdk_steer_name(int mode);
/* The MTU hiwater uses on port index i (0: no limit — memif, whose
 * packets are bounded by its buffer size, and ring/null without cfg.mtu),
 * or -EINVAL. */
int hw_dpdk_port_mtu(const hw_dpdk *d, int port_index);
/* A port's own counters (rte_eth_stats: every queue, every instance of
 * the process) and what hiwater chose for it. */
typedef struct hw_dpdk_port_stats {
	char name[64];                 /* ethdev name, "net_af_packet0" */
	uint32_t mtu;                  /* hw_dpdk_port_mtu */
	int link_up;
	uint64_t ipackets, opackets, ibytes, obytes;
	uint64_t imissed;              /* dropped by the port: RX queues full */
	uint64_t ierrors, oerrors;     /* erroneous RX packets / failed TX packets */
	uint64_t rx_nombuf;            /* RX mbuf allocation failures */
	unsigned n_queues;             /* q_* entries filled (queue pairs configured) */
	uint64_t q_ipackets[HW_DPDK_MAX_QUEUES], q_opackets[HW_DPDK_MAX_QUEUES];
	uint64_t q_ibytes[HW_DPDK_MAX_QUEUES], q_obytes[HW_DPDK_MAX_QUEUES];
	uint64_t q_errors[HW_DPDK_MAX_QUEUES]; /* RX queue errors (packets dropped) */
} hw_dpdk_port_stats;
/* Fill *out for port index i (rte_eth_stats_get; per-queue counters
 * where the PMD keeps them, else 0). Call on the thread of the queue-0
 * instance. 0, -EINVAL (bad index, out NULL), or -errno from ethdev. */
int hw_dpdk_port_stats_get(const hw_dpdk *d, int port_index, hw_dpdk_port_stats *out);
/* Port index of an ethdev name ("net_memif_b2"), or -ENODEV. */
int hw_dpdk_port_index(const hw_dpdk *d, const char *name);

/* ---- Local memif cluster topology (used by `hiwater cluster up`)
 *
 * Nodes: brokers 1..n_brokers, client slots HW_CLIENT_NODE_BASE (1000) and up.
 * One memif link per broker pair and per (broker, client slot), each with
 * its own socket in `dir`:
 *     <dir>/memif-b<i>-b<j>.sock   (i < j; broker i is the server)
 *     <dir>/memif-b<i>-c<k>.sock   (broker i is the server)
 * Each process gets one vdev per link, named after the peer:
 *     broker i:  --vdev=net_memif_b<j>,role=server|client,bsize=65535,rsize=9,socket=<dir>/memif-b<min>-b<max>.sock
 *                --vdev=net_memif_c<k>,role=server,bsize=65535,rsize=9,socket=<dir>/memif-b<i>-c<k>.sock
 *     client k:  --vdev=net_memif_b<i>,role=client,bsize=65535,rsize=9,socket=<dir>/memif-b<i>-c<k>.sock
 * bsize=65535 matters: hiwater sends every packet on memif as ONE memif
 * buffer (the memif PMD corrupts its ring after multi-descriptor packets:
 * it never clears the NEXT flag of reused descriptors), so the buffer size
 * bounds the frame size; with the default 2048 frames are limited to ~2 KB.
 * plus "--no-huge -m <mem_mb> --no-pci --no-telemetry --file-prefix=hw<hash of dir>-<self>
 * --lcores=0@(0-<ncpu-1>)" (the main lcore floats over every CPU; reactor
 * threads pin themselves). MACs are not configured: frames to a peer go to
 * its learned MAC (broadcast until learned, which a memif link accepts).
 * The neighbour of node P is "dpdk:port=net_memif_<b|c><P>,ip=10.77.0.<P & 255>".
 *
 * The topology is described once, as a struct (hw_dpdk_local_topo: one
 * entry per link, with the peer, our role, our vdev name and the socket);
 * the EAL arguments and the neighbour routes are rendered from it, and a
 * caller that leaves links out (the CLI: brokers that are not running)
 * removes them from the struct before rendering. Nothing parses the
 * rendered string back. */
#define HW_DPDK_LOCAL_MAX_NODES 64     /* brokers, and client slots, each at most */
#define HW_DPDK_LOCAL_MAX_LINKS (2 * HW_DPDK_LOCAL_MAX_NODES)
typedef struct hw_dpdk_local_link {
	int32_t peer;                  /* node id at the other end */
	uint8_t server;                /* 1: we are the link's memif server */
	char vdev[24];                 /* our vdev (ethdev) name, after the peer:
					* "net_memif_b<j>" / "net_memif_c<k>" */
	char socket[108];              /* the link's socket (fits sun_path) */
} hw_dpdk_local_link;

typedef struct hw_dpdk_local_topo {
	int32_t self;
	int mem_mb;
	char file_prefix[32];          /* hw<hash of dir>-<b|c><n> */
	int n_links;
	hw_dpdk_local_link link[HW_DPDK_LOCAL_MAX_LINKS];
} hw_dpdk_local_topo;

/* Describe node self_id's links in a cluster of n_brokers (1..64) and
 * n_client_slots (0..64) with sockets in `dir` (keep it short: socket
 * paths must fit sun_path); mem_mb <= 0: 256. Returns 0, -EINVAL (bad
 * ids/counts), -ENAMETOOLONG. */
int hw_dpdk_local_topo_build(const char *dir, int32_t self_id, int n_brokers, int n_client_slots,
			     int mem_mb, hw_dpdk_local_topo *t);
/* Leave out link i (0 <= i < t->n_links; later links move down). */
void hw_dpdk_local_topo_drop(hw_dpdk_local_topo *t, int i);
/* The EAL argument string of t's links. 0 or -ENOSPC. */
int hw_dpdk_local_eal_args(const hw_dpdk_local_topo *t, char *buf, size_t cap);
/* The vdev name a node of a local cluster gives its link to `peer` (a
 * broker 1..N or a client slot node): 0, -EINVAL (a node id no local
 * cluster has), -ENOSPC. */
int hw_dpdk_local_vdev_name(int32_t peer, char *buf, size_t cap);
/* The neighbour route to `peer` over that vdev,
 * "dpdk:port=net_memif_<b|c><n>,ip=10.77.0.<peer & 255>". 0, -EINVAL, -ENOSPC. */
int hw_dpdk_local_route(int32_t peer, char *buf, size_t cap);

#endif
