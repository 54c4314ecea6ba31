/* hw_dpdk_port.c — DPDK ports: limits, setup, link checks, memif client
 * re-dials and the per-port state shared by the instances (hw_dpdk.h
 * "Port restarts", "memif queues"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rte_devargs.h>
#include <rte_dev.h>
#include "hw_dpdk_int.h"

#include "hw_logging.h"
#include "hw_dpdk_steer.h"

port_share dpdk_share[RTE_MAX_ETHPORTS];

int dpdk_setup_port(hw_dpdk *d, dport *p)
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
	/* memif server: room for any client's rings (hw_dpdk.h "memif queues");
	 * af_packet: every socket the vdev opened (hw_dpdk_steer.h) */
	uint16_t nq = dpdk_port_queues(p, d->cfg.n_queues);
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

/* Record what dpdk_setup_port configured, for every instance. */
void dpdk_share_port(const dport *p, uint16_t nq_instances)
{
	uint32_t nq = dpdk_port_queues(p, nq_instances);
	dpdk_share[p->port_id].n_cfg = nq;
	dpdk_share[p->port_id].paused = 0;
	/* a memif server uses queue 0 only until the client announces its rings */
	port_set_conn(p->port_id, p->memif_server ? 1 : nq);
}

static uint32_t memif_bsize(const char *port_name)
{
	char key[RTE_ETH_NAME_MAX_LEN + 16];
	snprintf(key, sizeof key, "--vdev=%s,", port_name);
	const char *v = strstr(dpdk_eal_args, key);
	if (!v)
		return 2048;
	const char *end = strpbrk(v, " \t\n");
	const char *b = strstr(v, "bsize=");
	if (!b || (end && b > end))
		return 2048;
	unsigned long x = strtoul(b + 6, NULL, 10);
	return x >= 128 && x <= UINT16_MAX ? (uint32_t)x : 2048;
}

void dpdk_port_limits(hw_dpdk *d, dport *p)
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

void dpdk_check_links(hw_dpdk *d, int64_t t)
{
	for (int i = 0; i < d->n_ports; i++) {
		dport *p = &d->ports[i];
		if (!d->owner) {
			/* link events, reconnects and hellos are the owner's; the
			 * others do not call into the PMD for link state (not every
			 * PMD's link_update is thread-safe). relaxed: a hint only */
			p->link_up = (int)__atomic_load_n(&dpdk_share[p->port_id].link_up, __ATOMIC_RELAXED);
			continue;
		}
		struct rte_eth_link link;
		memset(&link, 0, sizeof link);
		if (rte_eth_link_get_nowait(p->port_id, &link))
			continue;
		int up = link.link_status == RTE_ETH_LINK_UP;
		/* relaxed: a hint for the other instances' hw_dpdk_link_up */
		__atomic_store_n(&dpdk_share[p->port_id].link_up, (uint32_t)up, __ATOMIC_RELAXED);
		if (up && p->memif_client && p->checks_up++ % HELLO_EVERY_CHECKS == 0)
			dpdk_send_hello(d, p);   /* on link up, then every second */
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
void dpdk_check_server_links(hw_dpdk *d)
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
