/* hw_dpdk_int.h — the DPDK transport's private structures and the calls
 * between its files (hw_dpdk.c, hw_dpdk_port.c, hw_dpdk_tx.c, hw_dpdk_rx.c,
 * hw_dpdk_ctl.c, hw_dpdk_wait.c). Not for use outside drivers/net/dpdk. Design note in
 * hw_dpdk.h. */
#ifndef HW_DPDK_INT_H
#define HW_DPDK_INT_H
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_version.h>
#include "hw_doorbell.h"
#include "hw_frag.h"
#include "hw_dpdk.h"
#include "hw_dpdk_unmap.h"

#define MAX_PORTS 64
#define BURST 32
#define TXQ_LEN 256
#define NET_HDR (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
#define RX_DESC 1024
#define TX_DESC 1024
#define LINK_CHECK_NS 100000000LL
#define MEMIF_RECONNECT_NS 300000000LL  /* memif client re-dial period */
#define ARP_RETRY_NS 100000000LL
#define MAX_IOV 2100
#define FAST_LINK_CHECK_NS 1000000LL   /* memif servers: a down link drops the queue count */
#define HELLO_EVERY_CHECKS 10          /* queue hello: every 10th link check (1 s) */
#define FRAG_SLOTS 16                  /* messages in reassembly per instance (~1 MiB) */
#define FRAG_TIMEOUT_NS 100000000LL    /* an incomplete message is dropped after 100 ms */
#define FRAG_EXPIRE_NS 10000000LL      /* expiry scan period */

typedef struct dport {
	uint16_t port_id;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_ether_addr mac;
	int link_up;
	int rx_intr;              /* port configured with RX-queue interrupts */
	int memif;                /* net_memif: every packet must fit ONE memif buffer */
	uint32_t memif_room;      /* memif: bytes one memif buffer holds (vdev bsize) */
	int memif_client;         /* memif role=client: reconnects itself when down */
	int memif_server;         /* memif role=server: queue count learned (queue hello) */
	uint32_t checks_up;       /* link checks since the link came up (hello pacing) */
	int64_t reconnect_at;     /* next reconnect attempt (ns), memif clients */
	uint32_t reconnects;      /* reconnect attempts since the link went down */
	uint32_t max_frame;       /* largest hiwater frame this port can carry */
	uint32_t mtu;             /* IPv4 MTU, 0 = no limit (memif, ring/null); hw_dpdk.h "MTU" */
	uint32_t payload;         /* UDP payload one packet carries (mtu - 28); larger frames fragment */
	int multi_seg;            /* dev_info advertises TX MULTI_SEGS: chains and zero-copy allowed */
	int af_packet, af_xdp;    /* PMDs with limits ethdev does not report (hw_dpdk_port.c) */
	uint32_t af_packet_framesz; /* af_packet vdev framesz (ring frame; default 2048) */
	struct rte_mempool *rx_pool; /* owner: RX mbufs sized to one packet of this port (or NULL) */
	uint64_t tx_offloads;
	struct rte_mbuf *txq[TXQ_LEN];
	uint16_t n_txq;
	int32_t bell_peer;        /* memif: the node at the other end (doorbell), -1 */
} dport;

typedef struct intr_src {
	uint16_t port_id, queue;
} intr_src;

typedef struct dneigh {
	int port;                 /* index into ports[] */
	struct rte_ether_addr mac;
	uint8_t has_mac;
	uint32_t ip;              /* network order */
	uint16_t udp_port;        /* host order */
	uint8_t configured;
	int64_t last_arp_ns;
} dneigh;

struct hw_dpdk {
	hw_net net;               /* first: container by cast */
	hw_dpdk_cfg cfg;
	struct rte_mempool *pool;
	struct rte_mempool *jumbo;  /* 64 KiB single-segment mbufs for memif ports */
	struct rte_mempool *jumbo_rx; /* owner: 64 KiB mbufs the memif RX queues fill */
	struct rte_mempool *txj;  /* TX mbufs of one jumbo packet (ports with an MTU > 2 KiB) */
	uint32_t txj_room;        /* data room of a txj mbuf */
	struct hw_frag_reasm *reasm; /* fragments received (hw_frag.h) */
	uint32_t frag_msg_id;     /* next fragmented frame's msg_id */
	int64_t last_frag_expire;
	int frag_seen;            /* reassembler counters changed since the last copy into st */
	dport ports[MAX_PORTS];
	int n_ports;
	int owner;                /* configured the ports (queue 0) */
	int unmap_slot;           /* memif ports: our busy mark for the munmap guard
				   * (hw_dpdk_unmap.h); -1: no memif port */
	hw_wire_tx tx;
	hw_wire_replay *replay;
	hw_wire_arena arena;
	uint8_t *arena_buf;
	uint8_t *lin;             /* linearisation buffer for chained RX */
	uint8_t *hdrbuf;          /* encoder scratch for the non-record bytes */
	struct iovec iov[MAX_IOV];
	uint8_t rec_iov[MAX_IOV];
	uint16_t ip_id;
	int64_t last_link_check;
	int64_t last_fast_check;
	hw_nodemap map;
	dneigh neigh[HW_NODEMAP_CAP];
	intr_src *intr;
	int n_intr;
	int intr_probed;          /* intr[] filled (reactor wait sources or the idle wait) */
	hw_doorbell *bell;        /* memif ports: wake sleeping peers (hw_doorbell.h) */
	hw_dpdk_stats st;
};

extern char dpdk_eal_args[4096];   /* copy of the EAL args (per-vdev parameters) */

/* ---- per-port state shared by the instances of a process (one per
 * reactor). Written by the queue-0 instance (n_cfg, paused, n_conn) and by
 * instance q (busy[q]); see "Port restarts" and "memif queues" in hw_dpdk.h. */
typedef struct port_share {
	uint32_t paused;                        /* the owner is restarting the port */
	uint32_t n_conn;                        /* queue pairs usable now */
	uint32_t n_cfg;                         /* queue pairs configured (0: not set up) */
	uint32_t link_up;                       /* as the owner last saw it */
	uint32_t mtu;                           /* chosen by the owner at setup (0: no limit) */
	uint32_t busy[HW_DPDK_MAX_QUEUES];      /* instance q inside a burst on the port */
} port_share;
extern port_share dpdk_share[RTE_MAX_ETHPORTS];

static inline uint32_t port_conn(uint16_t port_id)
{
	/* acquire: pairs with the release store of n_conn by the instance that
	 * learned it (queue hello) or reset it (link down); orders nothing
	 * else — the PMD's own CONNECTED flag guards the rings */
	return __atomic_load_n(&dpdk_share[port_id].n_conn, __ATOMIC_ACQUIRE);
}

static inline void port_set_conn(uint16_t port_id, uint32_t n)
{
	/* release: pairs with the acquire in port_conn */
	__atomic_store_n(&dpdk_share[port_id].n_conn, n, __ATOMIC_RELEASE);
}

/* Instance q > 0 before a burst on a port: 1 = go ahead (call port_leave
 * after), 0 = the port is being restarted, skip it. */
static inline int port_enter(hw_dpdk *d, uint16_t port_id)
{
	uint16_t q = d->cfg.queue;
	/* memif: the PMD may unmap the rings from the interrupt thread */
	hw_dpdk_unmap_enter(d->unmap_slot);
	if (q == 0)
		return 1;    /* the owner is the restarter: never concurrent with itself */
	port_share *sh = &dpdk_share[port_id];
	__atomic_store_n(&sh->busy[q], 1, __ATOMIC_RELAXED);
	/* full fence (Dekker): our busy flag is visible before we read paused;
	 * pairs with the fence in port_quiesce between its paused store and
	 * its busy reads — one of the two sides sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->paused, __ATOMIC_RELAXED)) {
		/* release: nothing of the port touched; keeps the order simple */
		__atomic_store_n(&sh->busy[q], 0, __ATOMIC_RELEASE);
		hw_dpdk_unmap_leave(d->unmap_slot);
		d->st.port_busy_skips++;
		return 0;
	}
	return 1;
}

static inline void port_leave(hw_dpdk *d, uint16_t port_id)
{
	hw_dpdk_unmap_leave(d->unmap_slot);
	if (d->cfg.queue == 0)
		return;
	/* release: our burst's accesses to the port happen before the owner,
	 * seeing busy == 0 (port_quiesce), stops it */
	__atomic_store_n(&dpdk_share[port_id].busy[d->cfg.queue], 0, __ATOMIC_RELEASE);
}

/* The owner, before restarting a port: 1 once no other instance is in a
 * burst on it (it stays paused until port_resume). */
static inline int port_quiesce(hw_dpdk *d, uint16_t port_id)
{
	port_share *sh = &dpdk_share[port_id];
	__atomic_store_n(&sh->paused, 1, __ATOMIC_RELAXED);
	/* full fence (Dekker): paused is visible before we read the busy
	 * flags; pairs with the fence in port_enter */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (uint16_t q = 1; q < d->cfg.n_queues && q < HW_DPDK_MAX_QUEUES; q++)
		/* acquire: pairs with port_leave's release (their burst is over) */
		if (__atomic_load_n(&sh->busy[q], __ATOMIC_ACQUIRE))
			return 0;
	return 1;
}

static inline void port_resume(uint16_t port_id)
{
	/* release: the restart (stop + start) happens before another instance,
	 * seeing paused == 0, bursts on the port again */
	__atomic_store_n(&dpdk_share[port_id].paused, 0, __ATOMIC_RELEASE);
}

static inline int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}


/* memif ports: the PMD (22.11 and later) never clears MEMIF_DESC_FLAG_NEXT
 * on reused ring descriptors, so once a multi-descriptor packet has gone
 * through a ring slot, later packets in that slot are read as chained with
 * stale slots: duplicated and corrupt packets. hiwater therefore never sends
 * a multi-descriptor packet on memif: every packet fits one memif buffer,
 * whose size is the vdev's bsize (default 2048; hw_dpdk_local_eal_args
 * uses 65535) — p->max_frame is cut to it.
 *
 * An mbuf CHAIN is not a multi-descriptor packet. 22.11's eth_memif_tx (copy
 * mode) copies the segments of a chain one after the other into the current
 * descriptor's buffer and moves to the next descriptor (setting NEXT) only
 * when that buffer is full; a chain whose pkt_len fits one buffer therefore
 * goes out as ONE descriptor and NEXT is never set. So zero-copy record
 * bytes (external mbufs attached to the log's buffers) may be chained on
 * memif, as long as the whole packet fits memif_room. Regression test:
 * tests/drivers/net/dpdk/test_memif_chain.c (two processes, mixed chains and single
 * mbufs, every byte and count checked).
 *
 * DPDK 23.03 added a TX fast path (all mbufs of a burst from one pool whose
 * data room fits bsize) that puts each SEGMENT in its own descriptor with
 * NEXT set: chains would then be multi-descriptor packets. Chains on memif
 * are therefore enabled only for the DPDK this was verified on. */
#if RTE_VERSION < RTE_VERSION_NUM(23, 3, 0, 0)
#define MEMIF_TX_CHAINS 1
#else
#define MEMIF_TX_CHAINS 0
#endif

/* hw_dpdk_port.c */
/* Configure (queues, offloads, MTU) and start a port. 0 or -errno from ethdev. */
int dpdk_setup_port(hw_dpdk *d, dport *p);
/* Record in dpdk_share what dpdk_setup_port configures, for every instance. */
void dpdk_share_port(const dport *p, uint16_t nq_instances);
/* Fill p->max_frame and the memif fields from the port's driver and vdev args. */
void dpdk_port_limits(hw_dpdk *d, dport *p);
/* Take the MTU the owner chose (dpdk_share) into p->mtu / p->payload. */
void dpdk_port_apply_mtu(dport *p);
/* Link state (every LINK_CHECK_NS), memif re-dials, hellos; memif servers' fast check. */
void dpdk_check_links(hw_dpdk *d, int64_t t);
void dpdk_check_server_links(hw_dpdk *d);
/* hw_dpdk_tx.c */
/* hw_net send (error contract: hw_dpdk_net in hw_dpdk.h). */
int dpdk_send(hw_net *n, const hw_msg *m);
/* Queue m for TX on p (flushing first if the queue is full); takes m. */
void dpdk_port_enqueue(hw_dpdk *d, dport *p, struct rte_mbuf *m);
/* hw_dpdk_ctl.c: queue an ARP request (tha NULL) or reply; count a hello or ARP received. */
void dpdk_send_arp(hw_dpdk *d, dport *p, uint16_t op, const struct rte_ether_addr *tha, uint32_t tip);
void dpdk_handle_arp(hw_dpdk *d, int pi, struct rte_mbuf *mb);
void dpdk_send_hello(hw_dpdk *d, dport *p);
void dpdk_handle_hello(hw_dpdk *d, int pi, struct rte_mbuf *mb);
/* hw_dpdk_wait.c: open d->bell, the memif doorbell of queue 0 with a node
 * id, in the directory of the first memif vdev's socket= (shared by every
 * process of the link); on failure d->bell stays NULL (logged). */
void dpdk_open_doorbell(hw_dpdk *d);

#endif
