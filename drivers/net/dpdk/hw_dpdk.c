/* hw_dpdk.c — DPDK transport: EAL, instance create/destroy, accessors,
 * neighbours. Design note in hw_dpdk.h; the rest of the driver:
 * hw_dpdk_port.c (ports), hw_dpdk_tx.c, hw_dpdk_rx.c, hw_dpdk_ctl.c (ARP,
 * queue hello), hw_dpdk_wait.c (doorbell, RX interrupts: idle waits),
 * hw_dpdk_local.c (local memif topology); shared state in hw_dpdk_int.h. */
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
#include "hw_dpdk_int.h"
#include "hw_dpdk_steer.h"
#include "hw_dpdk_rxhold.h"
#include "hw_logging.h"
#include <sys/stat.h>
#include <unistd.h>
#include "hw_rxhold.h"
#include "hw_qhello.h"
#include "hw_reactor.h"

static int eal_up;
char dpdk_eal_args[4096];   /* for per-vdev parameters (memif bsize) */

/* A memif server on a filesystem socket (socket-abstract=no) cannot bind
 * over the socket file a killed predecessor left: remove a stale SOCKET
 * (nothing else) at every server vdev's socket= path before EAL init. */
static void unlink_stale_memif_sockets(const char *eal_args)
{
	for (const char *v = strstr(eal_args, "net_memif"); v; v = strstr(v + 1, "net_memif")) {
		size_t len = strcspn(v, " \t\n");
		char one[512];
		if (len >= sizeof one)
			continue;
		memcpy(one, v, len);
		one[len] = 0;
		const char *sock = strstr(one, "socket="), *ab = strstr(one, "socket-abstract=no");
		if (!strstr(one, "role=server") || !sock || !ab)
			continue;
		char path[256];
		size_t pl = strcspn(sock + 7, ",");
		if (pl >= sizeof path)
			continue;
		memcpy(path, sock + 7, pl);
		path[pl] = 0;
		struct stat st;
		if (!lstat(path, &st) && S_ISSOCK(st.st_mode))
			(void)unlink(path);
	}
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
	strcpy(dpdk_eal_args, eal_args);
	int argc = 0;
	argv[argc++] = (char *)"hiwater";
	char *save = NULL;
	for (char *t = strtok_r(buf, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		if (argc >= 127)
			return -EINVAL;
		argv[argc++] = t;
	}
	argv[argc] = NULL;
	unlink_stale_memif_sockets(eal_args);
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


/* TX mbufs that hold one packet whole: 64 KiB for memif ports (one memif
 * buffer per packet) and for ports without MULTI_SEGS and without an MTU;
 * MTU-sized for ports without MULTI_SEGS whose MTU exceeds a 2 KiB mbuf
 * (their jumbo packets cannot be chains). 0 or -errno. */
static int make_tx_pools(hw_dpdk *d)
{
	uint32_t big = 0;
	int jumbo = 0;
	for (int i = 0; i < d->n_ports; i++) {
		const dport *p = &d->ports[i];
		jumbo |= p->memif || (!p->multi_seg && !p->mtu);
		if (!p->memif && !p->multi_seg && p->mtu && p->mtu + RTE_ETHER_HDR_LEN > big)
			big = p->mtu + RTE_ETHER_HDR_LEN;
	}
	char name[64];
	if (jumbo) {
		snprintf(name, sizeof name, "hw_jmb_%u", d->cfg.queue);
		d->jumbo = rte_pktmbuf_pool_create(name, 255, 16, 0, UINT16_MAX, (int)rte_socket_id());
		if (!d->jumbo) {
			HW_LOG(ERROR, "dpdk", "mempool %s: %s", name, rte_strerror(rte_errno));
			return -(rte_errno ? rte_errno : ENOMEM);
		}
	}
	if (big > RTE_MBUF_DEFAULT_DATAROOM) {
		snprintf(name, sizeof name, "hw_txj_%u", d->cfg.queue);
		d->txj = rte_pktmbuf_pool_create(name, 2047, 32, 0, (uint16_t)(big + RTE_PKTMBUF_HEADROOM),
						 (int)rte_socket_id());
		if (!d->txj) {
			HW_LOG(ERROR, "dpdk", "mempool %s: %s", name, rte_strerror(rte_errno));
			return -(rte_errno ? rte_errno : ENOMEM);
		}
		d->txj_room = big;
	}
	return 0;
}

/* create phase 1: cfg checked (-EINVAL), defaults filled in, d's wire
 * state and buffers allocated (-ENOMEM) and its packet mempool made. */
static int dpdk_create_state(hw_dpdk *d, const hw_dpdk_cfg *cfg)
{
	d->cfg = *cfg;
	if (!d->cfg.n_queues)
		d->cfg.n_queues = 1;
	if (!d->cfg.n_mbufs)
		d->cfg.n_mbufs = 8191;
	if (!d->cfg.max_frame || d->cfg.max_frame > HW_WIRE_MAX_FRAME)
		d->cfg.max_frame = HW_WIRE_MAX_FRAME;
	if (!d->cfg.udp_port)
		d->cfg.udp_port = HW_DPDK_DEFAULT_UDP_PORT;
	if ((uint32_t)d->cfg.udp_port + d->cfg.n_queues - 1 > 65535)
		return -EINVAL;   /* every instance needs its port BASE + q */
	if (!d->cfg.ip)
		d->cfg.ip = htonl((10u << 24) | (77u << 16) | ((uint32_t)cfg->self_id & 255u));
	d->net.send = NULL;
	d->tx.cluster_id = cfg->cluster_id;
	d->tx.incarnation = hw_wire_new_incarnation();
	/* one wire stream per instance (hw_dpdk.h "Steering") */
	d->tx.stream = cfg->wire_stream ? cfg->wire_stream : d->cfg.n_queues > 1 ? (uint8_t)cfg->queue : 0;
	d->replay = malloc(sizeof *d->replay);
	d->arena_buf = malloc(HW_WIRE_ARENA_SIZE);
	d->lin = malloc(HW_WIRE_MAX_FRAME + 64);
	d->hdrbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	d->intr = calloc(MAX_PORTS, sizeof *d->intr);
	d->reasm = hw_frag_reasm_create(FRAG_SLOTS, FRAG_TIMEOUT_NS, NULL);
	if (!d->replay || !d->arena_buf || !d->lin || !d->hdrbuf || !d->intr || !d->reasm)
		return -ENOMEM;
	/* fragment msg_ids start at a per-incarnation value, so a restarted
	 * sender's ids do not meet its old ones in a receiver's slots */
	d->frag_msg_id = d->tx.incarnation * 2654435761u + cfg->queue;
	hw_wire_replay_init(d->replay);
	char name[64];
	snprintf(name, sizeof name, "hw_mp_%u", cfg->queue);
	d->pool = rte_pktmbuf_pool_create(name, d->cfg.n_mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (!d->pool) {
		HW_LOG(ERROR, "dpdk", "mempool %s: %s", name, rte_strerror(rte_errno));
		return -(rte_errno ? rte_errno : ENOMEM);
	}
	return 0;
}

/* create phase 2: every ethdev port (at most MAX_PORTS) into d->ports,
 * with its limits; queue 0 also makes the memif ports' RX pool. 0,
 * -ENODEV when there is no port, -errno when the pool cannot be made. */
static int dpdk_find_ports(hw_dpdk *d)
{
	uint16_t pid;
	RTE_ETH_FOREACH_DEV(pid) {
		if (d->n_ports >= MAX_PORTS)
			break;
		dport *p = &d->ports[d->n_ports];
		p->port_id = pid;
		rte_eth_dev_get_name_by_port(pid, p->name);
		rte_eth_macaddr_get(pid, &p->mac);
		dpdk_port_limits(d, p);
		p->bell_peer = -1;
		d->n_ports++;
	}
	for (int i = 0; i < d->n_ports && d->cfg.queue == 0; i++) {
		if (!d->ports[i].memif || d->jumbo_rx)
			continue;
		/* RX of every queue of the memif ports (set up by queue 0);
		 * no per-lcore cache: reactor threads are not EAL lcores */
		d->jumbo_rx = rte_pktmbuf_pool_create("hw_jmb_rx", 511, 0, 0, UINT16_MAX, (int)rte_socket_id());
		hw_dpdk_rx_hold_budget(511 / 4);
		if (!d->jumbo_rx) {
			HW_LOG(ERROR, "dpdk", "mempool hw_jmb_rx: %s", rte_strerror(rte_errno));
			return -(rte_errno ? rte_errno : ENOMEM);
		}
	}
	if (!d->n_ports) {
		HW_LOG(ERROR, "dpdk", "no DPDK ports (add --vdev=... to dpdk.eal.args)");
		return -ENODEV;
	}
	return 0;
}

/* create phase 3, the queue-0 instance (the owner): shares, configures and
 * starts every port and steers it. A memif client whose server is not
 * there yet is left to dpdk_check_links to dial. 0 or -errno. */
static int dpdk_setup_ports(hw_dpdk *d)
{
	for (int i = 0; i < d->n_ports; i++) {
		dpdk_share_port(&d->ports[i], d->cfg.n_queues);
		int rc = dpdk_setup_port(d, &d->ports[i]);
		if (rc && d->ports[i].memif_client) {
			/* its server (a peer broker) is down: configured, not
			 * started; dpdk_check_links dials it until it is back */
			HW_LOG(INFO, "dpdk", "port %s: memif server not there yet (%s), will retry",
			       d->ports[i].name, strerror(rc < 0 ? -rc : EIO));
			d->ports[i].reconnect_at = now_ns() + MEMIF_RECONNECT_NS;
			d->ports[i].reconnects = 1;
			rc = 0;
		}
		if (rc) {
			HW_LOG(ERROR, "dpdk", "port %s setup: %s", d->ports[i].name, strerror(-rc));
			return rc < 0 ? rc : -EIO;
		}
		dpdk_steer_port(d, &d->ports[i]);
	}
	return 0;
}

/* create phase 3, any other queue: its ports must have been set up by the
 * queue-0 instance. 0 or -EINVAL. */
static int dpdk_check_ports_shared(const hw_dpdk *d)
{
	for (int i = 0; i < d->n_ports; i++) {
		if (!dpdk_share[d->ports[i].port_id].n_cfg) {
			HW_LOG(ERROR, "dpdk", "queue %u: port %s not set up (create the queue-0 instance first)",
			       d->cfg.queue, d->ports[i].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* What a failed hw_dpdk_create made, freed (steering only if steer_up). */
static void dpdk_create_undo(hw_dpdk *d, int steer_up)
{
	if (steer_up)
		dpdk_steer_fini(d);
	if (d->pool)
		rte_mempool_free(d->pool);
	if (d->jumbo)
		rte_mempool_free(d->jumbo);
	if (d->jumbo_rx)
		rte_mempool_free(d->jumbo_rx);
	if (d->txj)
		rte_mempool_free(d->txj);
	/* ports' rx_pool: a started port may hold it; left with the port */
	hw_frag_reasm_destroy(d->reasm);
	free(d->replay);
	free(d->arena_buf);
	free(d->lin);
	free(d->hdrbuf);
	free(d->intr);
	free(d);
}

hw_dpdk *hw_dpdk_create(const hw_dpdk_cfg *cfg, int *err)
{
	int rc = -EINVAL, steer_up = 0;
	hw_dpdk *d = NULL;
	if (!cfg || !cfg->on_msg || !eal_up || cfg->n_queues > HW_DPDK_MAX_QUEUES || cfg->wire_stream > 15 ||
	    cfg->queue >= (cfg->n_queues ? cfg->n_queues : 1) || (cfg->mtu && cfg->mtu < HW_DPDK_MTU_MIN))
		goto fail;
	rc = -ENOMEM;
	d = calloc(1, sizeof *d);
	if (!d)
		goto fail;
	if ((rc = dpdk_create_state(d, cfg)) || (rc = dpdk_find_ports(d)))
		goto fail;
	d->owner = cfg->queue == 0;
	d->unmap_slot = -1;
	for (int i = 0; i < d->n_ports; i++)
		if (d->ports[i].memif) {
			(void)hw_dpdk_unmap_arm(&d->unmap_slot);   /* -ENOSPC: logged, unguarded */
			break;
		}
	if (!d->owner && (rc = dpdk_check_ports_shared(d)))
		goto fail;
	rc = dpdk_steer_init(d);
	steer_up = rc == 0;
	if (rc) {
		HW_LOG(ERROR, "dpdk", "queue %u: steering: %s", cfg->queue, strerror(-rc));
		goto fail;
	}
	if (d->owner && (rc = dpdk_setup_ports(d)))
		goto fail;
	for (int i = 0; i < d->n_ports; i++)
		dpdk_port_apply_mtu(&d->ports[i]);
	rc = make_tx_pools(d);
	if (rc)
		goto fail;
	d->net.send = dpdk_send;
	dpdk_open_doorbell(d);
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &d->cfg.ip, ip, sizeof ip);
	HW_LOG(INFO, "dpdk", "node %d queue %u: %d ports, ip %s udp %u, wire stream %u", cfg->self_id,
	       cfg->queue, d->n_ports, ip, dpdk_udp_self(d), d->tx.stream);
	return d;
fail:
	if (d)
		dpdk_create_undo(d, steer_up);
	if (err)
		*err = rc;
	return NULL;
}

void hw_dpdk_destroy(hw_dpdk *d)
{
	if (!d)
		return;
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
	hw_dpdk_flush(d);
	dpdk_steer_fini(d);   /* queue 0: its rte_flow rules go before the ports stop */
	for (int i = 0; i < d->n_ports; i++) {
		dport *p = &d->ports[i];
		for (uint16_t k = 0; k < p->n_txq; k++)
			rte_pktmbuf_free(p->txq[k]);
		p->n_txq = 0;
		if (d->owner) {
			rte_eth_dev_stop(p->port_id);
			rte_eth_dev_close(p->port_id);
			memset(&dpdk_share[p->port_id], 0, sizeof(dpdk_share[p->port_id]));
			if (p->rx_pool)
				rte_mempool_free(p->rx_pool);   /* the port is closed: no RX queue holds it */
		}
	}
	rte_mempool_free(d->pool);
	if (d->jumbo)
		rte_mempool_free(d->jumbo);
	if (d->jumbo_rx)
		rte_mempool_free(d->jumbo_rx);
	if (d->txj)
		rte_mempool_free(d->txj);
	hw_frag_reasm_destroy(d->reasm);
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

int hw_dpdk_port_mtu(const hw_dpdk *d, int i)
{
	return i >= 0 && i < d->n_ports ? (int)d->ports[i].mtu : -EINVAL;
}

int hw_dpdk_port_stats_get(const hw_dpdk *d, int i, hw_dpdk_port_stats *out)
{
	if (!out || i < 0 || i >= d->n_ports)
		return -EINVAL;
	const dport *p = &d->ports[i];
	struct rte_eth_stats es;
	int rc = rte_eth_stats_get(p->port_id, &es);
	if (rc)
		return rc < 0 ? rc : -EIO;
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", p->name);
	out->mtu = p->mtu;
	out->link_up = p->link_up;
	out->ipackets = es.ipackets;
	out->opackets = es.opackets;
	out->ibytes = es.ibytes;
	out->obytes = es.obytes;
	out->imissed = es.imissed;
	out->ierrors = es.ierrors;
	out->oerrors = es.oerrors;
	out->rx_nombuf = es.rx_nombuf;
	uint32_t nq = dpdk_share[p->port_id].n_cfg;
	_Static_assert(HW_DPDK_MAX_QUEUES <= RTE_ETHDEV_QUEUE_STAT_CNTRS, "per-queue counters for every queue");
	out->n_queues = nq < HW_DPDK_MAX_QUEUES ? nq : HW_DPDK_MAX_QUEUES;
	for (unsigned q = 0; q < out->n_queues; q++) {
		out->q_ipackets[q] = es.q_ipackets[q];
		out->q_opackets[q] = es.q_opackets[q];
		out->q_ibytes[q] = es.q_ibytes[q];
		out->q_obytes[q] = es.q_obytes[q];
		out->q_errors[q] = es.q_errors[q];
	}
	return 0;
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


int hw_dpdk_port_steering(const hw_dpdk *d, int i)
{
	return dpdk_steer_mode(d, i);
}

const char *hw_dpdk_steer_name(int m)
{
	static const char *const names[] = {
#define HW_DPDK_STEER_NAME(n) #n,
		HW_DPDK_STEER_TABLE(HW_DPDK_STEER_NAME)
#undef HW_DPDK_STEER_NAME
	};
	return m >= 0 && m < (int)(sizeof names / sizeof names[0]) ? names[m] : "UNKNOWN";
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
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
	hw_endpoint ep;
	if (hw_endpoint_parse(endpoint, &ep) || ep.kind != HW_EP_DPDK)
		return -EINVAL;
	if (!ep.port[0] && d->n_ports != 1)
		return -EINVAL;   /* no port named, and no single port to imply */
	int pi = ep.port[0] ? hw_dpdk_port_index(d, ep.port) : 0;
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
	/* the peer's reactor with our index (mod its count): hw_dpdk.h "Steering";
	 * the parser keeps BASE + queues - 1 a port */
	uint16_t base = ep.udp_port ? ep.udp_port : HW_DPDK_DEFAULT_UDP_PORT;
	n->udp_port = (uint16_t)(base + d->cfg.queue % (ep.queues ? ep.queues : 1));
	if (!strncmp(d->ports[pi].name, "net_memif", 9))
		d->ports[pi].bell_peer = node; /* a memif link has one peer */
	return 0;
}
