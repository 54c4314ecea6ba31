/* hw_dpdk.c — DPDK transport. Design note in hw_dpdk.h. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <rte_arp.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_udp.h>
#include <rte_version.h>
#include "hw_assert.h"
#include "hw_doorbell.h"
#include "hw_dpdk.h"
#include "hw_dpdk_rxhold.h"
#include "hw_logging.h"
#include "hw_rxhold.h"
#include "hw_qhello.h"
#include "hw_reactor.h"

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
	dport ports[MAX_PORTS];
	int n_ports;
	int owner;                /* configured the ports (queue 0) */
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
	hw_doorbell *bell;        /* memif ports: wake sleeping peers (hw_doorbell.h) */
	hw_dpdk_stats st;
};

static int eal_up;
static char eal_args_copy[4096];   /* for per-vdev parameters (memif bsize) */

/* ---- per-port state shared by the instances of a process (one per
 * reactor). Written by the queue-0 instance (n_cfg, paused, n_conn) and by
 * instance q (busy[q]); see "Port restarts" and "memif queues" in hw_dpdk.h. */
typedef struct port_share {
	uint32_t paused;                        /* the owner is restarting the port */
	uint32_t n_conn;                        /* queue pairs usable now */
	uint32_t n_cfg;                         /* queue pairs configured (0: not set up) */
	uint32_t link_up;                       /* as the owner last saw it */
	uint32_t busy[HW_DPDK_MAX_QUEUES];      /* instance q inside a burst on the port */
} port_share;
static port_share g_share[RTE_MAX_ETHPORTS];

static uint32_t port_conn(uint16_t port_id)
{
	/* acquire: pairs with the release store of n_conn by the instance that
	 * learned it (queue hello) or reset it (link down); orders nothing
	 * else — the PMD's own CONNECTED flag guards the rings */
	return __atomic_load_n(&g_share[port_id].n_conn, __ATOMIC_ACQUIRE);
}

static void port_set_conn(uint16_t port_id, uint32_t n)
{
	/* release: pairs with the acquire in port_conn */
	__atomic_store_n(&g_share[port_id].n_conn, n, __ATOMIC_RELEASE);
}

/* Instance q > 0 before a burst on a port: 1 = go ahead (call port_leave
 * after), 0 = the port is being restarted, skip it. */
static int port_enter(hw_dpdk *d, uint16_t port_id)
{
	uint16_t q = d->cfg.queue;
	if (q == 0)
		return 1;    /* the owner is the restarter: never concurrent with itself */
	port_share *sh = &g_share[port_id];
	__atomic_store_n(&sh->busy[q], 1, __ATOMIC_RELAXED);
	/* full fence (Dekker): our busy flag is visible before we read paused;
	 * pairs with the fence in port_quiesce between its paused store and
	 * its busy reads — one of the two sides sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->paused, __ATOMIC_RELAXED)) {
		/* release: nothing of the port touched; keeps the order simple */
		__atomic_store_n(&sh->busy[q], 0, __ATOMIC_RELEASE);
		d->st.port_busy_skips++;
		return 0;
	}
	return 1;
}

static void port_leave(hw_dpdk *d, uint16_t port_id)
{
	if (d->cfg.queue == 0)
		return;
	/* release: our burst's accesses to the port happen before the owner,
	 * seeing busy == 0 (port_quiesce), stops it */
	__atomic_store_n(&g_share[port_id].busy[d->cfg.queue], 0, __ATOMIC_RELEASE);
}

/* The owner, before restarting a port: 1 once no other instance is in a
 * burst on it (it stays paused until port_resume). */
static int port_quiesce(hw_dpdk *d, uint16_t port_id)
{
	port_share *sh = &g_share[port_id];
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

static void port_resume(uint16_t port_id)
{
	/* release: the restart (stop + start) happens before another instance,
	 * seeing paused == 0, bursts on the port again */
	__atomic_store_n(&g_share[port_id].paused, 0, __ATOMIC_RELEASE);
}

static int dpdk_send(hw_net *n, const hw_msg *m);
static void port_enqueue(hw_dpdk *d, dport *p, struct rte_mbuf *m);
static void handle_hello(hw_dpdk *d, int pi, struct rte_mbuf *mb);
static void send_arp(hw_dpdk *d, dport *p, uint16_t op, const struct rte_ether_addr *tha, uint32_t tip);

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int hw_dpdk_eal_init(const char *eal_args)
{
	if (eal_up)
		return 0;
	if (!eal_args)
		return -EINVAL;
	static char buf[4096];
	static char *argv[128];
	if (strlen(eal_args) >= sizeof buf)
		return -EINVAL;
	strcpy(buf, eal_args);
	strcpy(eal_args_copy, eal_args);
	int argc = 0;
	argv[argc++] = (char *)"hiwater";
	char *save = NULL;
	for (char *t = strtok_r(buf, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		if (argc >= 127)
			return -EINVAL;
		argv[argc++] = t;
	}
	argv[argc] = NULL;
	int rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		HW_LOG(ERROR, "dpdk", "rte_eal_init(%s) failed: %s", eal_args, rte_strerror(rte_errno));
		return -(rte_errno ? rte_errno : EINVAL);
	}
	eal_up = 1;
	HW_LOG(INFO, "dpdk", "EAL up (%s), %u ports", eal_args, rte_eth_dev_count_avail());
	return 0;
}

void hw_dpdk_eal_cleanup(void)
{
	if (!eal_up)
		return;
	/* The runtime directory (/var/run/dpdk/<file-prefix>) outlives
	 * rte_eal_cleanup; every hiwater process has its own prefix and no
	 * secondary processes, so remove it rather than leave one per run. */
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	eal_up = 0;
	DIR *dh = opendir(dir);
	if (dh) {
		struct dirent *e;
		while ((e = readdir(dh)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char f[PATH_MAX + 256];
			snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
			(void)unlink(f);
		}
		closedir(dh);
		(void)rmdir(dir);
	}
}

static int setup_port(hw_dpdk *d, dport *p)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc)
		return rc;
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof conf);
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	p->tx_offloads = conf.txmode.offloads;
	/* memif server: room for any client's rings (hw_dpdk.h "memif queues") */
	uint16_t nq = p->memif_server ? HW_DPDK_MAX_QUEUES : d->cfg.n_queues;
	if (info.max_rx_queues < nq || info.max_tx_queues < nq) {
		HW_LOG(ERROR, "dpdk", "port %s supports %u/%u queues, need %u", p->name,
		       info.max_rx_queues, info.max_tx_queues, nq);
		return -EINVAL;
	}
	/* RX-queue interrupts where the PMD has them (virtio_user, vhost, most
	 * NICs; not memif): a sleeping reactor then wakes on a packet instead of
	 * its backoff timer. Fall back to polling only if configure refuses. */
	conf.intr_conf.rxq = d->cfg.no_rx_intr ? 0 : 1;
	rc = rte_eth_dev_configure(p->port_id, nq, nq, &conf);
	if (rc && conf.intr_conf.rxq) {
		conf.intr_conf.rxq = 0;
		rc = rte_eth_dev_configure(p->port_id, nq, nq, &conf);
	}
	if (rc)
		return rc;
	p->rx_intr = conf.intr_conf.rxq;
	uint16_t nrx = RX_DESC, ntx = TX_DESC;
	rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nrx, &ntx);
	for (uint16_t q = 0; q < nq; q++) {
		/* memif RX copies each descriptor into mbufs of this pool: with
		 * 2 KiB mbufs a 56 KB frame became a 28-segment chain that
		 * handle_pkt then copied again to decode it; one 64 KiB mbuf per
		 * packet needs neither (memif allocates per packet received, it
		 * does not pre-fill the ring, so a small pool suffices) */
		struct rte_mempool *rx_pool = p->memif && d->jumbo_rx ? d->jumbo_rx : d->pool;
		rc = rte_eth_rx_queue_setup(p->port_id, q, nrx, (unsigned)rte_eth_dev_socket_id(p->port_id),
					    NULL, rx_pool);
		if (rc)
			return rc;
		rc = rte_eth_tx_queue_setup(p->port_id, q, ntx, (unsigned)rte_eth_dev_socket_id(p->port_id), NULL);
		if (rc)
			return rc;
	}
	/* large frames: ask for a jumbo MTU where the port has one (memif and
	 * friends do not enforce it; a NIC rig should set it in config) */
	if (info.max_mtu >= 9000)
		(void)rte_eth_dev_set_mtu(p->port_id, 9000);
	rc = rte_eth_dev_start(p->port_id);
	if (rc)
		return rc;
	(void)rte_eth_promiscuous_enable(p->port_id);
	return 0;
}

/* Record what setup_port configured, for every instance. */
static void share_port(const dport *p, uint16_t nq_instances)
{
	uint32_t nq = p->memif_server ? HW_DPDK_MAX_QUEUES : nq_instances;
	g_share[p->port_id].n_cfg = nq;
	g_share[p->port_id].paused = 0;
	/* a memif server uses queue 0 only until the client announces its rings */
	port_set_conn(p->port_id, p->memif_server ? 1 : nq);
}

/* memif ports: the PMD (22.11 and later) never clears MEMIF_DESC_FLAG_NEXT
 * on reused ring descriptors, so once a multi-descriptor packet has gone
 * through a ring slot, later packets in that slot are read as chained with
 * stale slots: duplicated and corrupt packets. hiwater therefore never sends
 * a multi-descriptor packet on memif: every packet fits one memif buffer,
 * whose size is the vdev's bsize (default 2048; hw_dpdk_local_cluster_args
 * uses 65535) — p->max_frame is cut to it.
 *
 * An mbuf CHAIN is not a multi-descriptor packet. 22.11's eth_memif_tx (copy
 * mode) copies the segments of a chain one after the other into the current
 * descriptor's buffer and moves to the next descriptor (setting NEXT) only
 * when that buffer is full; a chain whose pkt_len fits one buffer therefore
 * goes out as ONE descriptor and NEXT is never set. So zero-copy record
 * bytes (external mbufs attached to the log's buffers) may be chained on
 * memif, as long as the whole packet fits memif_room. Regression test:
 * tests/net/test_memif_chain.c (two processes, mixed chains and single
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

static uint32_t memif_bsize(const char *port_name)
{
	char key[RTE_ETH_NAME_MAX_LEN + 16];
	snprintf(key, sizeof key, "--vdev=%s,", port_name);
	const char *v = strstr(eal_args_copy, key);
	if (!v)
		return 2048;
	const char *end = strpbrk(v, " \t\n");
	const char *b = strstr(v, "bsize=");
	if (!b || (end && b > end))
		return 2048;
	unsigned long x = strtoul(b + 6, NULL, 10);
	return x >= 128 && x <= UINT16_MAX ? (uint32_t)x : 2048;
}

static void port_limits(hw_dpdk *d, dport *p)
{
	struct rte_eth_dev_info info;
	p->max_frame = d->cfg.max_frame;
	if (rte_eth_dev_info_get(p->port_id, &info) == 0 && info.driver_name &&
	    strstr(info.driver_name, "memif")) {
		uint32_t room = memif_bsize(p->name);
		if (room > UINT16_MAX - RTE_PKTMBUF_HEADROOM)
			room = UINT16_MAX - RTE_PKTMBUF_HEADROOM;   /* one jumbo mbuf */
		p->memif = 1;
		p->memif_room = room;
		const struct rte_devargs *da = info.device ? rte_dev_devargs(info.device) : NULL;
		p->memif_client = da && da->args && strstr(da->args, "role=client") != NULL;
		p->memif_server = !p->memif_client;
		if (room - NET_HDR < p->max_frame)
			p->max_frame = room - (uint32_t)NET_HDR;
		HW_LOG(INFO, "dpdk", "port %s (memif): one memif buffer per packet%s, frames <= %u bytes%s",
		       p->name, MEMIF_TX_CHAINS ? " (zero-copy records as chains that fit it)" : "",
		       p->max_frame, p->max_frame < 16384 ? " (add bsize=65535 to the vdev for larger)" : "");
	}
}

/* ---- memif doorbell (hw_doorbell.h): the directory of the first memif
 * vdev's socket= is shared by every process of the link, so it also holds
 * the doorbells. Only queue 0, and only with a node id. */
static void open_doorbell(hw_dpdk *d)
{
	int memif = 0;
	for (int i = 0; i < d->n_ports; i++)
		memif |= !strncmp(d->ports[i].name, "net_memif", 9);
	if (!memif || d->cfg.no_doorbell || d->cfg.self_id < 0)
		return;
	const char *s = strstr(eal_args_copy, "socket=");
	if (!s)
		return;
	s += 7;
	size_t len = strcspn(s, ", \t");
	char dir[PATH_MAX];
	if (len >= sizeof dir)
		return;
	memcpy(dir, s, len);
	dir[len] = 0;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	if (!*dir)
		strcpy(dir, "/");
	int err = 0;
	d->bell = hw_doorbell_open_queue(dir, d->cfg.self_id, d->cfg.queue, &err);
	if (!d->bell)
		HW_LOG(WARN, "dpdk", "memif doorbell in %s: %s (sleeping peers wake on their timer only)", dir,
		       strerror(-err));
}

hw_dpdk *hw_dpdk_create(const hw_dpdk_cfg *cfg, int *err)
{
	int rc = -EINVAL;
	hw_dpdk *d = NULL;
	if (!cfg || !cfg->on_msg || !eal_up || cfg->n_queues > HW_DPDK_MAX_QUEUES || cfg->wire_stream > 15 ||
	    cfg->queue >= (cfg->n_queues ? cfg->n_queues : 1))
		goto fail;
	rc = -ENOMEM;
	d = calloc(1, sizeof *d);
	if (!d)
		goto fail;
	d->cfg = *cfg;
	if (!d->cfg.n_queues)
		d->cfg.n_queues = 1;
	if (!d->cfg.n_mbufs)
		d->cfg.n_mbufs = 8191;
	if (!d->cfg.max_frame || d->cfg.max_frame > HW_WIRE_MAX_FRAME)
		d->cfg.max_frame = HW_WIRE_MAX_FRAME;
	if (!d->cfg.udp_port)
		d->cfg.udp_port = HW_DPDK_DEFAULT_UDP_PORT;
	if (!d->cfg.ip)
		d->cfg.ip = htonl((10u << 24) | (77u << 16) | ((uint32_t)cfg->self_id & 255u));
	d->net.send = NULL;
	d->tx.cluster_id = cfg->cluster_id;
	d->tx.incarnation = hw_wire_new_incarnation();
	d->tx.stream = cfg->wire_stream;
	d->replay = malloc(sizeof *d->replay);
	d->arena_buf = malloc(HW_WIRE_ARENA_SIZE);
	d->lin = malloc(HW_WIRE_MAX_FRAME + 64);
	d->hdrbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	d->intr = calloc(MAX_PORTS, sizeof *d->intr);
	if (!d->replay || !d->arena_buf || !d->lin || !d->hdrbuf || !d->intr)
		goto fail;
	hw_wire_replay_init(d->replay);
	char name[64];
	snprintf(name, sizeof name, "hw_mp_%u", cfg->queue);
	d->pool = rte_pktmbuf_pool_create(name, d->cfg.n_mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (!d->pool) {
		rc = -(rte_errno ? rte_errno : ENOMEM);
		HW_LOG(ERROR, "dpdk", "mempool %s: %s", name, rte_strerror(rte_errno));
		goto fail;
	}
	uint16_t pid;
	RTE_ETH_FOREACH_DEV(pid) {
		if (d->n_ports >= MAX_PORTS)
			break;
		dport *p = &d->ports[d->n_ports];
		p->port_id = pid;
		rte_eth_dev_get_name_by_port(pid, p->name);
		rte_eth_macaddr_get(pid, &p->mac);
		port_limits(d, p);
		p->bell_peer = -1;
		d->n_ports++;
	}
	for (int i = 0; i < d->n_ports; i++) {
		if (!d->ports[i].memif || d->jumbo)
			continue;
		snprintf(name, sizeof name, "hw_jmb_%u", cfg->queue);
		d->jumbo = rte_pktmbuf_pool_create(name, 255, 16, 0, UINT16_MAX, (int)rte_socket_id());
		if (!d->jumbo) {
			rc = -(rte_errno ? rte_errno : ENOMEM);
			HW_LOG(ERROR, "dpdk", "mempool %s: %s", name, rte_strerror(rte_errno));
			goto fail;
		}
	}
	for (int i = 0; i < d->n_ports && cfg->queue == 0; i++) {
		if (!d->ports[i].memif || d->jumbo_rx)
			continue;
		/* RX of every queue of the memif ports (set up by queue 0);
		 * no per-lcore cache: reactor threads are not EAL lcores */
		d->jumbo_rx = rte_pktmbuf_pool_create("hw_jmb_rx", 511, 0, 0, UINT16_MAX, (int)rte_socket_id());
		hw_dpdk_rx_hold_budget(511 / 4);
		if (!d->jumbo_rx) {
			rc = -(rte_errno ? rte_errno : ENOMEM);
			HW_LOG(ERROR, "dpdk", "mempool hw_jmb_rx: %s", rte_strerror(rte_errno));
			goto fail;
		}
	}
	if (!d->n_ports) {
		rc = -ENODEV;
		HW_LOG(ERROR, "dpdk", "no DPDK ports (add --vdev=... to dpdk.eal.args)");
		goto fail;
	}
	d->owner = cfg->queue == 0;
	if (!d->owner) {
		for (int i = 0; i < d->n_ports; i++) {
			if (!g_share[d->ports[i].port_id].n_cfg) {
				HW_LOG(ERROR, "dpdk", "queue %u: port %s not set up (create the queue-0 instance first)",
				       cfg->queue, d->ports[i].name);
				rc = -EINVAL;
				goto fail;
			}
		}
	}
	if (d->owner) {
		for (int i = 0; i < d->n_ports; i++) {
			share_port(&d->ports[i], d->cfg.n_queues);
			rc = setup_port(d, &d->ports[i]);
			if (rc && d->ports[i].memif_client) {
				/* its server (a peer broker) is down: configured, not
				 * started; check_links dials it until it is back */
				HW_LOG(INFO, "dpdk", "port %s: memif server not there yet (%s), will retry",
				       d->ports[i].name, strerror(rc < 0 ? -rc : EIO));
				d->ports[i].reconnect_at = now_ns() + MEMIF_RECONNECT_NS;
				d->ports[i].reconnects = 1;
				rc = 0;
			}
			if (rc) {
				HW_LOG(ERROR, "dpdk", "port %s setup: %s", d->ports[i].name, strerror(-rc));
				rc = rc < 0 ? rc : -EIO;
				goto fail;
			}
		}
	}
	d->net.send = dpdk_send;
	open_doorbell(d);
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &d->cfg.ip, ip, sizeof ip);
	HW_LOG(INFO, "dpdk", "node %d queue %u: %d ports, ip %s udp %u", cfg->self_id, cfg->queue,
	       d->n_ports, ip, d->cfg.udp_port);
	return d;
fail:
	if (d) {
		if (d->pool)
			rte_mempool_free(d->pool);
		if (d->jumbo)
			rte_mempool_free(d->jumbo);
		if (d->jumbo_rx)
			rte_mempool_free(d->jumbo_rx);
		free(d->replay);
		free(d->arena_buf);
		free(d->lin);
		free(d->hdrbuf);
		free(d->intr);
		free(d);
	}
	if (err)
		*err = rc;
	return NULL;
}

void hw_dpdk_destroy(hw_dpdk *d)
{
	if (!d)
		return;
	hw_dpdk_flush(d);
	for (int i = 0; i < d->n_ports; i++) {
		dport *p = &d->ports[i];
		for (uint16_t k = 0; k < p->n_txq; k++)
			rte_pktmbuf_free(p->txq[k]);
		p->n_txq = 0;
		if (d->owner) {
			rte_eth_dev_stop(p->port_id);
			rte_eth_dev_close(p->port_id);
			memset(&g_share[p->port_id], 0, sizeof(g_share[p->port_id]));
		}
	}
	rte_mempool_free(d->pool);
	if (d->jumbo)
		rte_mempool_free(d->jumbo);
	if (d->jumbo_rx)
		rte_mempool_free(d->jumbo_rx);
	hw_doorbell_close(d->bell);
	free(d->replay);
	free(d->arena_buf);
	free(d->lin);
	free(d->hdrbuf);
	free(d->intr);
	free(d);
}

hw_net *hw_dpdk_net(hw_dpdk *d)
{
	return &d->net;
}

const hw_dpdk_stats *hw_dpdk_get_stats(const hw_dpdk *d)
{
	return &d->st;
}

int hw_dpdk_port_count(const hw_dpdk *d)
{
	return d->n_ports;
}

int hw_dpdk_link_up(const hw_dpdk *d, int i)
{
	return i >= 0 && i < d->n_ports ? d->ports[i].link_up : 0;
}

int hw_dpdk_port_queues(const hw_dpdk *d, int i)
{
	return i >= 0 && i < d->n_ports ? (int)port_conn(d->ports[i].port_id) : -EINVAL;
}

/* ---- RX interrupts as reactor wait sources */

static int intr_arm(void *arg)
{
	intr_src *s = arg;
	/* the reactor re-polls after arming, so a packet that arrived before
	 * the enable is not slept on; if enabling fails the sleep is simply
	 * bounded by the reactor's cap, so never veto */
	(void)rte_eth_dev_rx_intr_enable(s->port_id, s->queue);
	return 0;
}

static void intr_disarm(void *arg)
{
	intr_src *s = arg;
	(void)rte_eth_dev_rx_intr_disable(s->port_id, s->queue);
}

static int bell_arm(void *arg)
{
	/* the reactor's full fence and RX re-poll follow (hw_doorbell.h) */
	hw_doorbell_set_sleeping(arg, 1);
	return 0;
}

static void bell_disarm(void *arg)
{
	hw_doorbell_set_sleeping(arg, 0);
}

int hw_dpdk_idle_wait(hw_dpdk *d, int64_t timeout_ns)
{
	if (timeout_ns < 0)
		timeout_ns = 0;
	struct timespec ts = { timeout_ns / 1000000000LL, timeout_ns % 1000000000LL };
	if (!d->bell) {
		nanosleep(&ts, NULL);
		return hw_dpdk_poll(d);
	}
	hw_doorbell_set_sleeping(d->bell, 1);
	/* full fence: our flag is globally visible before the RX re-poll
	 * below reads the rings; pairs with the fence in hw_doorbell_ring */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int n = hw_dpdk_poll(d);
	if (n == 0) {
		struct pollfd pfd = { .fd = hw_doorbell_fd(d->bell), .events = POLLIN };
		(void)ppoll(&pfd, 1, &ts, NULL);
	}
	hw_doorbell_set_sleeping(d->bell, 0);
	return n ? n : hw_dpdk_poll(d);
}

const struct hw_doorbell_stats *hw_dpdk_doorbell_stats(const hw_dpdk *d)
{
	return d->bell ? hw_doorbell_get_stats(d->bell) : NULL;
}

int hw_dpdk_add_wait_sources(hw_dpdk *d, hw_reactor *r)
{
	int n = 0;
	if (d->bell) {
		int rc = hw_reactor_add_wait_fd(r, hw_doorbell_fd(d->bell), 0, bell_arm, bell_disarm, d->bell);
		if (rc)
			return rc;
		n++;
		HW_LOG(INFO, "dpdk", "memif doorbell registered (fd %d)", hw_doorbell_fd(d->bell));
	}
	for (int i = 0; i < d->n_ports; i++) {
		dport *p = &d->ports[i];
		if (!p->rx_intr || d->n_intr >= MAX_PORTS)
			continue;
		int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(p->port_id, d->cfg.queue);
		if (fd < 0)
			continue;
		/* Only eventfds: the reactor clears them with an 8-byte read. Some
		 * PMDs (net_vhost in 22.11) hand out an epoll set around the kick
		 * eventfd that nothing here can clear — sleeping on it would spin. */
		char link[64], target[64];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t tl = readlink(link, target, sizeof target - 1);
		if (tl <= 0 || (target[tl] = 0, strcmp(target, "anon_inode:[eventfd]") != 0)) {
			HW_LOG(INFO, "dpdk", "port %s: RX interrupt fd is not an eventfd (%s): polling with backoff",
			       p->name, tl > 0 ? target : "?");
			continue;
		}
		intr_src *s = &d->intr[d->n_intr];
		s->port_id = p->port_id;
		s->queue = d->cfg.queue;
		(void)rte_eth_dev_rx_intr_disable(p->port_id, d->cfg.queue);
		int rc = hw_reactor_add_wait_fd(r, fd, 1, intr_arm, intr_disarm, s);
		if (rc)
			return rc;
		d->n_intr++;
		n++;
		HW_LOG(INFO, "dpdk", "port %s queue %u: RX interrupts (fd %d)", p->name, d->cfg.queue, fd);
	}
	return n;
}

int hw_dpdk_port_index(const hw_dpdk *d, const char *name)
{
	for (int i = 0; i < d->n_ports; i++)
		if (!strcmp(d->ports[i].name, name))
			return i;
	char *end;
	long v = strtol(name, &end, 10);
	if (*name && !*end)
		for (int i = 0; i < d->n_ports; i++)
			if (d->ports[i].port_id == v)
				return i;
	return -ENODEV;
}

int hw_dpdk_add_neighbour(hw_dpdk *d, int32_t node, const char *endpoint)
{
	hw_endpoint ep;
	if (hw_endpoint_parse(endpoint, &ep) || ep.kind != HW_EP_DPDK)
		return -EINVAL;
	int pi = hw_dpdk_port_index(d, ep.port);
	if (pi < 0)
		return pi;
	int s = hw_nodemap_slot(&d->map, node, 1, NULL);
	if (s < 0)
		return s;
	dneigh *n = &d->neigh[s];
	memset(n, 0, sizeof *n);
	n->port = pi;
	n->configured = 1;
	if (ep.has_mac) {
		memcpy(n->mac.addr_bytes, ep.mac, 6);
		n->has_mac = 1;
	}
	n->ip = ep.ip ? ep.ip : htonl((10u << 24) | (77u << 16) | ((uint32_t)node & 255u));
	n->udp_port = ep.udp_port ? ep.udp_port : HW_DPDK_DEFAULT_UDP_PORT;
	if (!strncmp(d->ports[pi].name, "net_memif", 9))
		d->ports[pi].bell_peer = node; /* a memif link has one peer */
	return 0;
}

/* ---- TX */

static int port_flush(hw_dpdk *d, dport *p)
{
	uint16_t sent = 0;
	if (!p->n_txq)
		return 0;
	/* never a queue the peer did not connect (it would alias ring 0), nor
	 * a port the owner is restarting: those packets are dropped (counted) */
	if (d->cfg.queue < port_conn(p->port_id) && port_enter(d, p->port_id)) {
		/* a few retries: the peer may be draining its ring right now */
		for (int tries = 0; tries < 4 && sent < p->n_txq; tries++)
			sent += rte_eth_tx_burst(p->port_id, d->cfg.queue, p->txq + sent,
						 (uint16_t)(p->n_txq - sent));
		port_leave(d, p->port_id);
	}
	/* the burst is in the peer's RX queue (same index): wake the reactor
	 * polling it if it sleeps (the fence of the no-lost-wakeup protocol is
	 * inside hw_doorbell_ring_queue) */
	if (sent && d->bell && p->bell_peer >= 0)
		(void)hw_doorbell_ring_queue(d->bell, p->bell_peer, d->cfg.queue);
	for (uint16_t k = sent; k < p->n_txq; k++) {
		rte_pktmbuf_free(p->txq[k]);
		d->st.tx_dropped++;
	}
	p->n_txq = 0;
	return sent;
}

int hw_dpdk_flush(hw_dpdk *d)
{
	int n = 0;
	for (int i = 0; i < d->n_ports; i++)
		n += port_flush(d, &d->ports[i]);
	return n;
}

static void port_enqueue(hw_dpdk *d, dport *p, struct rte_mbuf *m)
{
	if (p->n_txq == TXQ_LEN)
		port_flush(d, p);
	p->txq[p->n_txq++] = m;
}

static void fill_l2l3(hw_dpdk *d, dport *p, const dneigh *n, struct rte_mbuf *head, size_t frame_len)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(head, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	if (n->has_mac)
		rte_ether_addr_copy(&n->mac, &eth->dst_addr);
	else
		memset(eth->dst_addr.addr_bytes, 0xff, 6);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof *ip + sizeof *udp + frame_len));
	ip->packet_id = rte_cpu_to_be_16(d->ip_id++);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = d->cfg.ip;
	ip->dst_addr = n->ip;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(d->cfg.udp_port);
	udp->dst_port = rte_cpu_to_be_16(n->udp_port);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof *udp + frame_len));
	udp->dgram_cksum = 0;
	if (p->tx_offloads & RTE_ETH_TX_OFFLOAD_UDP_CKSUM) {
		head->l2_len = sizeof *eth;
		head->l3_len = sizeof *ip;
		head->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_UDP_CKSUM;
		udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, head->ol_flags);
	}
}

typedef struct zc_hold {
	struct rte_mbuf_ext_shared_info shinfo;
	void *ref;
} zc_hold;

static void zc_free_cb(void *addr, void *opaque)
{
	(void)addr;
	zc_hold *h = opaque;
	const hw_net_ref_ops *ops = hw_net_get_ref_ops();
	if (ops)
		ops->release(h->ref);
	free(h);
}

/* Which records_ref covers the bytes at p (fetch responses only). */
static void *ref_for(const hw_msg *m, const void *p)
{
	if (m->type != HW_MSG_FETCH_RESP)
		return NULL;
	for (unsigned i = 0; i < m->u.fetch_resp.n_parts; i++) {
		const hw_fetch_resp_part *fp = &m->u.fetch_resp.parts[i];
		if (fp->records_ref && (const uint8_t *)p >= fp->records &&
		    (const uint8_t *)p < fp->records + fp->records_len)
			return fp->records_ref;
	}
	return NULL;
}

/* Does m carry record bytes lent by the store (fetch response parts with
 * records_ref)? Only those can go by reference. */
static int has_refs(const hw_msg *m)
{
	if (m->type != HW_MSG_FETCH_RESP)
		return 0;
	for (unsigned i = 0; i < m->u.fetch_resp.n_parts; i++)
		if (m->u.fetch_resp.parts[i].records_ref && m->u.fetch_resp.parts[i].records_len)
			return 1;
	return 0;
}

/* Append bytes by copy to the chain ending at *tail. 0 or -ENOBUFS. */
static int chain_copy(hw_dpdk *d, struct rte_mbuf *head, struct rte_mbuf **tail, const uint8_t *src, size_t len)
{
	while (len) {
		struct rte_mbuf *t = *tail;
		uint16_t room = rte_pktmbuf_tailroom(t);
		if (!room || RTE_MBUF_HAS_EXTBUF(t)) {
			struct rte_mbuf *nm = rte_pktmbuf_alloc(d->pool);
			if (!nm)
				return -ENOBUFS;
			if (rte_pktmbuf_chain(head, nm)) {
				rte_pktmbuf_free(nm);
				return -ENOBUFS;
			}
			*tail = nm;
			continue;
		}
		uint16_t n = len < room ? (uint16_t)len : room;
		memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len), src, n);
		t->data_len = (uint16_t)(t->data_len + n);
		head->pkt_len += n;
		src += n;
		len -= n;
		d->st.tx_bytes_copied += n;
	}
	return 0;
}

static int chain_extbuf(hw_dpdk *d, struct rte_mbuf *head, struct rte_mbuf **tail, void *addr, size_t len, void *ref)
{
	const hw_net_ref_ops *ops = hw_net_get_ref_ops();
	struct rte_mbuf *nm = rte_pktmbuf_alloc(d->pool);
	zc_hold *h = malloc(sizeof *h);
	if (!nm || !h || len > UINT16_MAX) {
		rte_pktmbuf_free(nm);
		free(h);
		return -ENOBUFS;
	}
	h->ref = ref;
	h->shinfo.free_cb = zc_free_cb;
	h->shinfo.fcb_opaque = h;
	rte_mbuf_ext_refcnt_set(&h->shinfo, 1);
	ops->hold(ref);
	rte_iova_t iova = rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)addr : RTE_BAD_IOVA;
	rte_pktmbuf_attach_extbuf(nm, addr, iova, (uint16_t)len, &h->shinfo);
	nm->data_off = 0;
	nm->data_len = (uint16_t)len;
	nm->pkt_len = (uint32_t)len;
	if (rte_pktmbuf_chain(head, nm)) {
		rte_pktmbuf_free(nm);   /* runs the free callback: releases the hold */
		return -ENOBUFS;
	}
	*tail = nm;
	d->st.tx_bytes_zero_copy += len;
	return 0;
}

static int dpdk_send(hw_net *net, const hw_msg *m)
{
	hw_dpdk *d = (hw_dpdk *)net;
	int s = hw_nodemap_slot(&d->map, m->dst, 0, NULL);
	if (s < 0) {
		d->st.tx_unroutable++;
		return -EHOSTUNREACH;
	}
	dneigh *n = &d->neigh[s];
	dport *p = &d->ports[n->port];
	if (d->cfg.queue >= port_conn(p->port_id)) {
		d->st.tx_queue_unconnected++;
		return -EXDEV;   /* the peer has fewer rings: another instance sends it */
	}
	if (!n->has_mac && n->configured) {
		int64_t t = now_ns();
		if (t - n->last_arp_ns > ARP_RETRY_NS) {
			n->last_arp_ns = t;
			send_arp(d, p, RTE_ARP_OP_REQUEST, NULL, n->ip);
		}
	}
	/* Zero-copy: record bytes the store lent us (records_ref) go out as
	 * external mbufs chained after a header mbuf. On memif only as a chain
	 * that fits one memif buffer (memif_room): max_frame already bounds
	 * every packet by it (see MEMIF_TX_CHAINS). */
	int zc = !d->cfg.no_zero_copy && (!p->memif || MEMIF_TX_CHAINS) && has_refs(m) &&
		 hw_net_get_ref_ops() != NULL;
	hw_wire_split sp = { 0 };
	int rc = 0;
	do {
		int niov = 0;
		int len = hw_wire_encode_iov(&d->tx, m, &sp, p->max_frame, d->hdrbuf, HW_WIRE_MAX_FRAME,
					     d->iov, MAX_IOV, &niov, d->rec_iov);
		if (len < 0)
			return len;
		struct rte_mempool *mp = d->pool;
		if (p->memif && !zc && NET_HDR + (size_t)len > RTE_MBUF_DEFAULT_DATAROOM)
			mp = d->jumbo;
		struct rte_mbuf *head = rte_pktmbuf_alloc(mp);
		if (!head) {
			d->st.tx_no_mbuf++;
			return -EAGAIN;
		}
		head->data_len = NET_HDR;
		head->pkt_len = NET_HDR;
		struct rte_mbuf *tail = head;
		for (int i = 0; i < niov && !rc; i++) {
			void *ref = zc && d->rec_iov[i] ? ref_for(m, d->iov[i].iov_base) : NULL;
			if (ref)
				rc = chain_extbuf(d, head, &tail, d->iov[i].iov_base, d->iov[i].iov_len, ref);
			else
				rc = chain_copy(d, head, &tail, d->iov[i].iov_base, d->iov[i].iov_len);
		}
		if (rc) {
			rte_pktmbuf_free(head);
			d->st.tx_no_mbuf++;
			return -EAGAIN;
		}
		/* memif: never a multi-descriptor packet (stale NEXT flags) */
		HW_ASSERT(!p->memif || head->pkt_len <= p->memif_room);
		HW_ASSERT(p->memif ? (zc || head->nb_segs == 1) : 1);
		fill_l2l3(d, p, n, head, (size_t)len);
		d->st.tx_packets++;
		d->st.tx_segments += head->nb_segs;
		d->st.wire.tx_frames++;
		d->st.wire.tx_bytes += (uint64_t)len;
		port_enqueue(d, p, head);
	} while (!sp.done);
	if (!d->cfg.defer_tx)
		port_flush(d, p);
	return rc;
}

int hw_dpdk_tx_raw(hw_dpdk *d, int port_index, const void *frame, size_t len)
{
	if (port_index < 0 || port_index >= d->n_ports || (!frame && len) || len > 9000)
		return -EINVAL;
	dport *p = &d->ports[port_index];
	if (p->memif && len > p->max_frame + NET_HDR)
		return -EMSGSIZE;
	struct rte_mbuf *head = rte_pktmbuf_alloc(p->memif && len > RTE_MBUF_DEFAULT_DATAROOM ? d->jumbo : d->pool);
	if (!head) {
		d->st.tx_no_mbuf++;
		return -ENOBUFS;
	}
	struct rte_mbuf *tail = head;
	if (chain_copy(d, head, &tail, frame, len)) {
		rte_pktmbuf_free(head);
		d->st.tx_no_mbuf++;
		return -ENOBUFS;
	}
	d->st.tx_packets++;
	d->st.tx_segments += head->nb_segs;
	port_enqueue(d, &d->ports[port_index], head);
	if (!d->cfg.defer_tx)
		port_flush(d, &d->ports[port_index]);
	return 0;
}

/* ---- ARP */

static void send_arp(hw_dpdk *d, dport *p, uint16_t op, const struct rte_ether_addr *tha, uint32_t tip)
{
	struct rte_mbuf *mb = rte_pktmbuf_alloc(d->pool);
	if (!mb) {
		d->st.tx_no_mbuf++;
		return;
	}
	size_t len = sizeof(struct rte_ether_hdr) + sizeof(struct rte_arp_hdr);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)rte_pktmbuf_append(mb, (uint16_t)len);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	if (op == RTE_ARP_OP_REQUEST)
		memset(eth->dst_addr.addr_bytes, 0xff, 6);
	else
		rte_ether_addr_copy(tha, &eth->dst_addr);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&p->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = d->cfg.ip;
	if (op == RTE_ARP_OP_REQUEST)
		memset(arp->arp_data.arp_tha.addr_bytes, 0, 6);
	else
		rte_ether_addr_copy(tha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = tip;
	port_enqueue(d, p, mb);
	if (op == RTE_ARP_OP_REQUEST)
		d->st.arp_requests_tx++;
	else
		d->st.arp_replies_tx++;
}

static void handle_arp(hw_dpdk *d, int pi, struct rte_mbuf *mb)
{
	d->st.arp_rx++;
	if (rte_pktmbuf_data_len(mb) < sizeof(struct rte_ether_hdr) + sizeof(struct rte_arp_hdr))
		return;
	struct rte_arp_hdr *arp = rte_pktmbuf_mtod_offset(mb, struct rte_arp_hdr *, sizeof(struct rte_ether_hdr));
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || arp->arp_hlen != 6 || arp->arp_plen != 4)
		return;
	uint32_t sip = arp->arp_data.arp_sip;
	/* learn the sender's MAC for every neighbour with that IP on this port */
	for (int s = 0; s < HW_NODEMAP_CAP; s++) {
		dneigh *n = &d->neigh[s];
		if (d->map.used[s] && n->port == pi && n->ip == sip && sip) {
			rte_ether_addr_copy(&arp->arp_data.arp_sha, &n->mac);
			n->has_mac = 1;
		}
	}
	if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) && arp->arp_data.arp_tip == d->cfg.ip)
		send_arp(d, &d->ports[pi], RTE_ARP_OP_REPLY, &arp->arp_data.arp_sha, sip);
}

/* ---- queue hello (hw_dpdk.h "memif queues"): a memif client tells its
 * server how many ring pairs it connected; the frame after the Ethernet
 * header is hw_qhello.h's (format, version, compatibility). */

_Static_assert(HW_DPDK_MAX_QUEUES <= HW_QHELLO_MAX_QUEUES, "a queue count must fit a hello");

static void send_hello(hw_dpdk *d, dport *p)
{
	hw_qhello h = { .queue_count = (uint16_t)g_share[p->port_id].n_cfg, .cluster_id = d->cfg.cluster_id,
			.node_id = d->cfg.self_id < -1 ? -1 : d->cfg.self_id };
	struct rte_mbuf *mb = rte_pktmbuf_alloc(d->pool);
	if (!mb) {
		d->st.tx_no_mbuf++;
		return;
	}
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(mb, (uint16_t)(sizeof(struct rte_ether_hdr) + HW_QHELLO_LEN));
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	memset(eth->dst_addr.addr_bytes, 0xff, 6);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(HW_QHELLO_ETHER_TYPE);
	/* n_cfg is 1..HW_DPDK_MAX_QUEUES once set up: the encoder cannot refuse */
	int len = hw_qhello_encode(&h, f + sizeof(*eth), HW_QHELLO_LEN);
	HW_ASSERT(len == HW_QHELLO_LEN);
	port_enqueue(d, p, mb);
	d->st.queue_hello_tx++;
}

static void handle_hello(hw_dpdk *d, int pi, struct rte_mbuf *mb)
{
	dport *p = &d->ports[pi];
	if (!p->memif_server) {
		d->st.rx_not_hiwater++;   /* only memif servers listen to hellos */
		return;
	}
	/* decode the true payload length; at most HW_QHELLO_LEN bytes are read */
	uint32_t plen = rte_pktmbuf_pkt_len(mb) - (uint32_t)sizeof(struct rte_ether_hdr);
	uint8_t copy[HW_QHELLO_LEN];
	const uint8_t *b = plen >= HW_QHELLO_LEN ? rte_pktmbuf_read(mb, sizeof(struct rte_ether_hdr),
								       HW_QHELLO_LEN, copy) : NULL;
	hw_qhello h;
	hw_qhello_drop why;
	if (hw_qhello_decode(b, b ? plen : 0, d->cfg.cluster_id, &h, &why) < 0) {
		/* logged at the 1st, 2nd, 4th ... drop of a reason: O(log n) lines */
		uint64_t n = ++d->st.queue_hello_drops[why];
		char ver[8] = "none";
		if (b)
			snprintf(ver, sizeof ver, "%u", b[4]);
		if ((n & (n - 1)) == 0)
			HW_LOG(WARN, "dpdk", "port %s: queue hello dropped, %s (%s; version %s, %u bytes, drop #%llu)%s",
			       p->name, hw_qhello_drop_name(why), hw_qhello_drop_desc(why), ver, plen,
			       (unsigned long long)n, why == HW_QHELLO_DROP_BAD_VERSION || why == HW_QHELLO_DROP_TRUNCATED
			       ? ": a peer of another hiwater build? the port keeps using queue 0 only" : "");
		return;
	}
	d->st.queue_hello_rx++;
	uint32_t n = h.queue_count < g_share[p->port_id].n_cfg ? h.queue_count : g_share[p->port_id].n_cfg;
	uint32_t old = port_conn(p->port_id);
	if (n != old) {
		port_set_conn(p->port_id, n);
		HW_LOG(INFO, "dpdk", "port %s: node %d connected %u queue pair%s (was %u)", p->name, h.node_id, n,
		       n == 1 ? "" : "s", old);
	}
}

/* ---- RX */

static void learn(hw_dpdk *d, int pi, int32_t src, const struct rte_ether_hdr *eth,
		  const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp)
{
	int created;
	int s = hw_nodemap_slot(&d->map, src, 1, &created);
	if (s < 0)
		return;
	dneigh *n = &d->neigh[s];
	if (created || !n->configured) {
		uint16_t up = rte_be_to_cpu_16(udp->src_port);
		if (created || n->port != pi || n->ip != ip->src_addr || n->udp_port != up ||
		    !rte_is_same_ether_addr(&n->mac, &eth->src_addr))
			d->st.learned++;
		n->port = pi;
		n->ip = ip->src_addr;
		n->udp_port = up;
		rte_ether_addr_copy(&eth->src_addr, &n->mac);
		n->has_mac = 1;
	} else if (!n->has_mac && n->port == pi) {
		rte_ether_addr_copy(&eth->src_addr, &n->mac);
		n->has_mac = 1;
	}
}

static void handle_pkt(hw_dpdk *d, int pi, struct rte_mbuf *mb)
{
	d->st.rx_packets++;
	if (rte_pktmbuf_data_len(mb) < sizeof(struct rte_ether_hdr)) {
		d->st.rx_not_hiwater++;
		return;
	}
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(mb, const struct rte_ether_hdr *);
	uint16_t et = rte_be_to_cpu_16(eth->ether_type);
	if (et == RTE_ETHER_TYPE_ARP) {
		handle_arp(d, pi, mb);
		return;
	}
	if (et == HW_QHELLO_ETHER_TYPE) {
		handle_hello(d, pi, mb);
		return;
	}
	if (et != RTE_ETHER_TYPE_IPV4 || rte_pktmbuf_data_len(mb) < NET_HDR) {
		d->st.rx_not_hiwater++;
		return;
	}
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);
	uint16_t frag = rte_be_to_cpu_16(ip->fragment_offset);
	if (ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP ||
	    (frag & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) ||
	    rte_be_to_cpu_16(udp->dst_port) != d->cfg.udp_port ||
	    (ip->dst_addr != d->cfg.ip && ip->dst_addr != 0xffffffffu)) {
		d->st.rx_not_hiwater++;
		return;
	}
	uint32_t ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (ulen < sizeof *udp || NET_HDR + (ulen - sizeof *udp) > rte_pktmbuf_pkt_len(mb) ||
	    rte_be_to_cpu_16(ip->total_length) != sizeof *ip + ulen) {
		d->st.rx_not_hiwater++;
		return;
	}
	size_t flen = ulen - sizeof *udp;
	const uint8_t *frame;
	int in_mbuf = rte_pktmbuf_data_len(mb) >= NET_HDR + flen;
	if (in_mbuf) {
		frame = rte_pktmbuf_mtod_offset(mb, const uint8_t *, NET_HDR);
	} else {
		frame = rte_pktmbuf_read(mb, NET_HDR, (uint32_t)flen, d->lin);
		if (!frame) {
			d->st.rx_not_hiwater++;
			return;
		}
		d->st.rx_linearized_bytes += flen;
	}
	hw_wire_hdr h;
	hw_msg m;
	hw_wire_drop why;
	hw_wire_arena_init(&d->arena, d->arena_buf, HW_WIRE_ARENA_SIZE);
	if (hw_wire_decode(frame, flen, d->cfg.cluster_id, &d->arena, &h, &m, &why, &d->st.wire))
		return;
	if (d->cfg.self_id >= 0 && h.dst != d->cfg.self_id) {
		d->st.wire.rx_frames--;
		d->st.wire.drops[HW_WIRE_DROP_NOT_FOR_US]++;
		return;
	}
	if (hw_wire_replay_check(d->replay, &h, &why)) {
		d->st.wire.rx_frames--;
		d->st.wire.drops[why]++;
		return;
	}
	learn(d, pi, h.src, eth, ip, udp);
	/* the frame's mbuf may be kept by a follower's log (hw_dpdk_rxhold.h) */
	hw_rxhold_buf hold = { .base = frame, .len = flen, .ref = mb, .hold = hw_dpdk_rx_hold,
			       .release = hw_dpdk_rx_release };
	if (in_mbuf)
		hw_rxhold_enter(&hold);
	d->cfg.on_msg(d->cfg.ctx, &m);
	if (in_mbuf)
		hw_rxhold_leave();
}

/* A memif client connects to its server's socket only in dev_start: when
 * the server process dies and restarts, the PMD disconnects the client and
 * never dials again (22.11), so a restarted broker would stay unreachable
 * from its peers. A down client port is therefore restarted (stop + start =
 * a new connect attempt) every MEMIF_RECONNECT_NS until its link is up.
 * A client whose server is not there when it starts is dialled the same way. */
static void memif_reconnect(hw_dpdk *d, dport *p, int64_t t)
{
	if (t < p->reconnect_at)
		return;
	p->reconnect_at = t + MEMIF_RECONNECT_NS;
	/* the other reactors' bursts on this port end first (port_quiesce);
	 * if one is inside one now, try again at the next period */
	if (!port_quiesce(d, p->port_id))
		return;
	if (p->reconnects++ == 0)
		HW_LOG(INFO, "dpdk", "port %s: memif server gone, reconnecting every %lld ms", p->name,
		       MEMIF_RECONNECT_NS / 1000000);
	(void)rte_eth_dev_stop(p->port_id);
	int rc = rte_eth_dev_start(p->port_id);
	port_resume(p->port_id);
	if (rc)
		HW_LOG(DEBUG, "dpdk", "port %s: restart for reconnect: %d", p->name, rc);
}

static void check_links(hw_dpdk *d, int64_t t)
{
	for (int i = 0; i < d->n_ports; i++) {
		dport *p = &d->ports[i];
		if (!d->owner) {
			/* link events, reconnects and hellos are the owner's; the
			 * others do not call into the PMD for link state (not every
			 * PMD's link_update is thread-safe). relaxed: a hint only */
			p->link_up = (int)__atomic_load_n(&g_share[p->port_id].link_up, __ATOMIC_RELAXED);
			continue;
		}
		struct rte_eth_link link;
		memset(&link, 0, sizeof link);
		if (rte_eth_link_get_nowait(p->port_id, &link))
			continue;
		int up = link.link_status == RTE_ETH_LINK_UP;
		/* relaxed: a hint for the other instances' hw_dpdk_link_up */
		__atomic_store_n(&g_share[p->port_id].link_up, (uint32_t)up, __ATOMIC_RELAXED);
		if (up && p->memif_client && p->checks_up++ % HELLO_EVERY_CHECKS == 0)
			send_hello(d, p);   /* on link up, then every second */
		if (up != p->link_up) {
			p->link_up = up;
			if (up)
				d->st.link_up_events++;
			else
				d->st.link_down_events++;
			HW_LOG(INFO, "dpdk", "port %s link %s%s", p->name, up ? "UP" : "DOWN",
			       up && p->reconnects ? " (memif client reconnected)" : "");
			if (up) {
				p->reconnects = 0;
			} else {
				p->reconnect_at = t + MEMIF_RECONNECT_NS;
				p->checks_up = 0;
				if (p->memif_server)
					port_set_conn(p->port_id, 1);
			}
		}
		if (!up && p->memif_client && p->reconnect_at)
			memif_reconnect(d, p, t);
	}
}

/* memif servers: the moment a client is gone, only queue 0 is safe (a
 * reconnecting client may bring fewer rings); checked every millisecond,
 * far below a process restart, and made good by the next hello anyway. */
static void check_server_links(hw_dpdk *d)
{
	for (int i = 0; i < d->n_ports; i++) {
		dport *p = &d->ports[i];
		if (!p->memif_server || port_conn(p->port_id) <= 1)
			continue;
		struct rte_eth_link link;
		memset(&link, 0, sizeof link);
		if (rte_eth_link_get_nowait(p->port_id, &link) == 0 && link.link_status != RTE_ETH_LINK_UP) {
			port_set_conn(p->port_id, 1);
			HW_LOG(INFO, "dpdk", "port %s: memif client gone, queue 0 only until it announces its rings",
			       p->name);
		}
	}
}

int hw_dpdk_poll(hw_dpdk *d)
{
	int work = 0;
	struct rte_mbuf *pk[BURST];
	int64_t t = now_ns();
	if (t - d->last_link_check > LINK_CHECK_NS) {
		d->last_link_check = t;
		check_links(d, t);
	}
	if (d->owner && t - d->last_fast_check > FAST_LINK_CHECK_NS) {
		d->last_fast_check = t;
		check_server_links(d);
	}
	uint16_t step = d->cfg.n_queues;
	for (int i = 0; i < d->n_ports; i++) {
		uint16_t pid = d->ports[i].port_id;
		uint32_t nconn = port_conn(pid);
		/* our queue, and on a memif server the connected queues beyond
		 * our reactor count that fall to us round-robin */
		for (uint32_t q = d->cfg.queue; q < nconn; q += step) {
			if (!port_enter(d, pid))
				break;
			uint16_t n = rte_eth_rx_burst(pid, (uint16_t)q, pk, BURST);
			port_leave(d, pid);
			if (q < HW_DPDK_MAX_QUEUES)
				d->st.rx_queue_packets[q] += n;
			for (uint16_t k = 0; k < n; k++) {
				if (k + 1 < n)
					rte_prefetch0(rte_pktmbuf_mtod(pk[k + 1], void *));
				handle_pkt(d, i, pk[k]);
				rte_pktmbuf_free(pk[k]);
			}
			work += n;
		}
	}
	hw_dpdk_flush(d);
	return work;
}

/* ---- local memif cluster topology */

static int peer_kind_name(int32_t node, int n_brokers, int n_slots, char *out, size_t cap)
{
	if (node >= 1 && node <= n_brokers)
		return snprintf(out, cap, "b%d", node);
	if (node >= HW_DPDK_CLIENT_BASE && node < HW_DPDK_CLIENT_BASE + n_slots)
		return snprintf(out, cap, "c%d", node - HW_DPDK_CLIENT_BASE);
	return -EINVAL;
}

int hw_dpdk_local_cluster_args(const char *dir, int32_t self_id, int n_brokers, int n_client_slots,
			       int mem_mb, char *eal_args, size_t eal_cap,
			       hw_dpdk_local_peer *peers, int peers_cap, int *n_peers)
{
	char me[16], pn[16];
	if (!dir || !eal_args || n_brokers < 1 || n_brokers > 64 || n_client_slots < 0 || n_client_slots > 64 ||
	    peer_kind_name(self_id, n_brokers, n_client_slots, me, sizeof me) < 0)
		return -EINVAL;
	if (mem_mb <= 0)
		mem_mb = 256;
	uint32_t h = 2166136261u;   /* FNV-1a of dir: distinct clusters, distinct prefixes */
	for (const char *c = dir; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	size_t off = 0;
	int n = snprintf(eal_args, eal_cap,
			 "--no-huge -m %d --no-pci --no-telemetry --file-prefix=hw%08x-%s --lcores=0@(0-%ld) "
			 "--log-level=pmd.net.memif:error",
			 mem_mb, h, me, ncpu - 1);
	if (n < 0 || (size_t)n >= eal_cap)
		return -ENOSPC;
	off = (size_t)n;
	int np = 0;
	int is_client = self_id >= HW_DPDK_CLIENT_BASE;
	int total = n_brokers + n_client_slots;
	for (int idx = 0; idx < total; idx++) {
		int32_t peer = idx < n_brokers ? idx + 1 : HW_DPDK_CLIENT_BASE + (idx - n_brokers);
		if (peer == self_id)
			continue;
		int peer_client = peer >= HW_DPDK_CLIENT_BASE;
		if (is_client && peer_client)
			continue;                 /* clients link to brokers only */
		char sock[256];
		const char *role;
		if (!is_client && !peer_client) {
			int lo = self_id < peer ? self_id : peer, hi = self_id < peer ? peer : self_id;
			n = snprintf(sock, sizeof sock, "%s/memif-b%d-b%d.sock", dir, lo, hi);
			role = self_id == lo ? "server" : "client";
		} else if (!is_client) {
			n = snprintf(sock, sizeof sock, "%s/memif-b%d-c%d.sock", dir, self_id,
				     peer - HW_DPDK_CLIENT_BASE);
			role = "server";
		} else {
			n = snprintf(sock, sizeof sock, "%s/memif-b%d-c%d.sock", dir, peer,
				     self_id - HW_DPDK_CLIENT_BASE);
			role = "client";
		}
		if (n < 0 || (size_t)n >= 108)
			return -ENAMETOOLONG;
		peer_kind_name(peer, n_brokers, n_client_slots, pn, sizeof pn);
		n = snprintf(eal_args + off, eal_cap - off, " --vdev=net_memif_%s,role=%s,bsize=65535,rsize=9,socket=%s",
			     pn, role, sock);
		if (n < 0 || (size_t)n >= eal_cap - off)
			return -ENOSPC;
		off += (size_t)n;
		if (peers) {
			if (np >= peers_cap)
				return -ENOSPC;
			peers[np].node = peer;
			snprintf(peers[np].endpoint, sizeof peers[np].endpoint, "dpdk:port=net_memif_%s,ip=10.77.0.%d",
				 pn, (int)(peer & 255));
		}
		np++;
	}
	if (n_peers)
		*n_peers = np;
	return 0;
}
