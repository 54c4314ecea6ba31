/* hw_dpdk_port.c — DPDK ports: limits, setup, link checks, memif client
 * re-dials and the per-port state shared by the instances (hw_dpdk.h
 * "Port restarts", "memif queues"). */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <rte_errno.h>
#include <rte_devargs.h>
#include <rte_dev.h>
#include "hw_dpdk_int.h"
#include "hw_logging.h"
#include "hw_dpdk_steer.h"

port_share dpdk_share[RTE_MAX_ETHPORTS];

/* A numeric vdev argument ("framesz=10240") of the port, or dflt. */
static uint32_t vdev_arg(const struct rte_eth_dev_info *info, const char *key, uint32_t dflt)
{
	const struct rte_devargs *da = info->device ? rte_dev_devargs(info->device) : NULL;
	if (!da || !da->args)
		return dflt;
	size_t kl = strlen(key);
	for (const char *s = da->args; (s = strstr(s, key)) != NULL; s += kl) {
		if ((s == da->args || s[-1] == ',') && s[kl] == '=') {
			unsigned long x = strtoul(s + kl + 1, NULL, 10);
			return x > 0 && x <= UINT32_MAX ? (uint32_t)x : dflt;
		}
	}
	return dflt;
}

/* The MTU of the kernel interface behind a port (af_packet, af_xdp, tap),
 * 0 if there is none or it cannot be read. */
static uint32_t kernel_mtu(uint32_t if_index)
{
	char name[IF_NAMESIZE];
	if (!if_index || !if_indextoname(if_index, name))
		return 0;
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return 0;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
	int rc = ioctl(s, SIOCGIFMTU, &ifr);
	close(s);
	return rc == 0 && ifr.ifr_mtu > 0 ? (uint32_t)ifr.ifr_mtu : 0;
}

/* Largest MTU ethdev lets us set (its eth_dev_validate_mtu rule). */
static uint32_t ethdev_max_mtu(const struct rte_eth_dev_info *info)
{
	uint32_t overhead = info->max_mtu != UINT16_MAX && info->max_rx_pktlen > info->max_mtu
		? info->max_rx_pktlen - info->max_mtu : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	uint32_t m = info->max_rx_pktlen > overhead ? info->max_rx_pktlen - overhead : 0;
	return m < info->max_mtu ? m : info->max_mtu;
}

#define AF_PACKET_FRAME_OVERHEAD 32   /* TPACKET2_HDRLEN - sizeof(sockaddr_ll): the PMD's RX mbuf rule */
/* Where the kernel puts a received frame in a TPACKET_V2 ring slot:
 * macoff = TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - 14 = 66; a longer frame is
 * truncated to framesz - 66 (tpacket_rcv), so that bounds the MTU. */
#define AF_PACKET_RX_MACOFF 66
#define RX_FRAME_SLACK (RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN)

/* Decide the port's MTU (hw_dpdk.h "MTU"), set it where ethdev owns it,
 * and say why. Called by the owner between configure and queue setup.
 * Returns the MTU, or 0 for "no limit" (ring/null without cfg.mtu). */
static uint32_t choose_mtu(hw_dpdk *d, dport *p, const struct rte_eth_dev_info *info)
{
	uint32_t want = d->cfg.mtu ? d->cfg.mtu : HW_DPDK_MTU_CAP;
	uint32_t kmtu = kernel_mtu(info->if_index);
	int unlimited = !info->if_index && info->max_rx_pktlen >= UINT16_MAX && info->max_mtu == UINT16_MAX;
	if (unlimited && !d->cfg.mtu) {
		HW_LOG(INFO, "dpdk", "port %s (%s): no MTU (software port), frames <= %u bytes in one packet", p->name,
		       info->driver_name, p->max_frame);
		return 0;
	}
	uint32_t mtu = want;
	const char *why = "";
	if (p->af_packet) {
		/* 22.11 reports max_rx_pktlen 1518 (a constant) but carries
		 * whatever fits its ring frame (framesz) — the kernel interface's
		 * MTU is the link's real limit */
		uint32_t room = p->af_packet_framesz > AF_PACKET_RX_MACOFF + RX_FRAME_SLACK + HW_DPDK_MTU_MIN
			? p->af_packet_framesz - AF_PACKET_RX_MACOFF - RX_FRAME_SLACK : HW_DPDK_MTU_MIN;
		if (room < mtu) {
			mtu = room;
			why = " (capped by the vdev's framesz)";
		}
	} else if (!unlimited) {
		uint32_t m = ethdev_max_mtu(info);
		if (p->af_xdp && m > RTE_MBUF_DEFAULT_DATAROOM - RX_FRAME_SLACK)
			m = RTE_MBUF_DEFAULT_DATAROOM - RX_FRAME_SLACK;   /* one UMEM frame, one mbuf */
		if (m < mtu) {
			mtu = m;
			why = " (the most the port accepts)";
		}
	}
	if (kmtu && kmtu < mtu) {
		mtu = kmtu;
		why = " (the kernel interface's MTU)";
	}
	if (!info->if_index && !unlimited) {
		/* ethdev owns the MTU (NICs): set it; keep what the port has if
		 * it refuses */
		int rc = rte_eth_dev_set_mtu(p->port_id, (uint16_t)mtu);
		uint16_t cur = 0;
		if (rc && rte_eth_dev_get_mtu(p->port_id, &cur) == 0 && cur) {
			HW_LOG(WARN, "dpdk", "port %s: set_mtu(%u) refused (%s), keeping %u", p->name, mtu,
			       strerror(rc < 0 ? -rc : rc), cur);
			mtu = cur;
			why = " (what the port kept)";
		}
	}
	if (d->cfg.mtu && mtu < d->cfg.mtu)
		HW_LOG(WARN, "dpdk", "port %s: hiwater.dpdk.mtu=%u not possible, using %u%s", p->name, d->cfg.mtu, mtu,
		       why);
	char kbuf[48] = "";
	if (kmtu)
		snprintf(kbuf, sizeof kbuf, ", interface MTU %u", kmtu);
	HW_LOG(INFO, "dpdk", "port %s (%s): MTU %u%s%s, frames over %u bytes go as fragments; TX %s "
	       "(dev_info: max_rx_pktlen %u, mtu %u..%u)", p->name, info->driver_name, mtu, why, kbuf,
	       mtu - HW_DPDK_L3L4_HDR, p->multi_seg ? "multi-segment" : "one mbuf per packet (no MULTI_SEGS: no zero-copy)",
	       info->max_rx_pktlen, info->min_mtu, info->max_mtu);
	return mtu;
}

/* RX mbufs for a port that cannot scatter: one packet must fit one mbuf.
 * 0: the default 2 KiB pool does (or the port scatters). */
static uint32_t rx_room_needed(const dport *p, uint32_t mtu, int scatter)
{
	uint32_t need = mtu ? mtu + RX_FRAME_SLACK : 0;
	if (p->af_packet && p->af_packet_framesz - AF_PACKET_FRAME_OVERHEAD > need)
		need = p->af_packet_framesz - AF_PACKET_FRAME_OVERHEAD;   /* its rx_queue_setup demands it */
	if (scatter || p->memif || p->af_xdp || need <= RTE_MBUF_DEFAULT_DATAROOM)
		return 0;
	return need;
}

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
	uint32_t mtu = p->memif ? 0 : choose_mtu(d, p, &info);
	dpdk_share[p->port_id].mtu = mtu;
	uint16_t nrx = RX_DESC, ntx = TX_DESC;
	rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nrx, &ntx);
	uint32_t room = rx_room_needed(p, mtu, !!(conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_SCATTER));
	if (room && !p->rx_pool) {
		/* shared by the RX queues of every instance (set up here): no
		 * per-lcore cache, reactor threads are not EAL lcores */
		char name[RTE_MEMPOOL_NAMESIZE];
		snprintf(name, sizeof name, "hw_rx_p%u", p->port_id);
		unsigned n = (unsigned)nq * nrx + 1023;
		p->rx_pool = rte_pktmbuf_pool_create(name, n, 0, 0, (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
						     (int)rte_socket_id());
		if (!p->rx_pool) {
			HW_LOG(ERROR, "dpdk", "port %s: RX pool of %u x %u-byte mbufs: %s", p->name, n, room,
			       rte_strerror(rte_errno));
			return -(rte_errno ? rte_errno : ENOMEM);
		}
		HW_LOG(INFO, "dpdk", "port %s: RX pool of %u mbufs of %u bytes (one packet per mbuf)", p->name, n,
		       room);
	}
	for (uint16_t q = 0; q < nq; q++) {
		/* memif RX copies each descriptor into mbufs of this pool: with
		 * 2 KiB mbufs a 56 KB frame became a 28-segment chain that
		 * handle_pkt then copied again to decode it; one 64 KiB mbuf per
		 * packet needs neither (memif allocates per packet received, it
		 * does not pre-fill the ring, so a small pool suffices) */
		struct rte_mempool *rx_pool = p->memif && d->jumbo_rx ? d->jumbo_rx : p->rx_pool ? p->rx_pool : d->pool;
		rc = rte_eth_rx_queue_setup(p->port_id, q, nrx, (unsigned)rte_eth_dev_socket_id(p->port_id),
					    NULL, rx_pool);
		if (rc)
			return rc;
		rc = rte_eth_tx_queue_setup(p->port_id, q, ntx, (unsigned)rte_eth_dev_socket_id(p->port_id), NULL);
		if (rc)
			return rc;
	}
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

void dpdk_port_apply_mtu(dport *p)
{
	p->mtu = dpdk_share[p->port_id].mtu;
	p->payload = p->mtu ? p->mtu - HW_DPDK_L3L4_HDR : 0;
}

void dpdk_port_limits(hw_dpdk *d, dport *p)
{
	struct rte_eth_dev_info info;
	p->max_frame = d->cfg.max_frame;
	if (rte_eth_dev_info_get(p->port_id, &info) != 0)
		return;
	/* Deliver only what the port can do: without MULTI_SEGS every packet
	 * is one mbuf and nothing goes by reference (22.11: af_xdp does not
	 * advertise it, and its TX copies the first segment only) */
	p->multi_seg = !!(info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	p->af_packet = info.driver_name && strstr(info.driver_name, "af_packet") != NULL;
	p->af_xdp = info.driver_name && strstr(info.driver_name, "af_xdp") != NULL;
	if (p->af_packet)
		p->af_packet_framesz = vdev_arg(&info, "framesz", 2048);   /* the PMD's default */
	if (info.driver_name && strstr(info.driver_name, "memif")) {
		uint32_t room = vdev_arg(&info, "bsize", 2048);
		if (room < 128 || room > UINT16_MAX)
			room = 2048;
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
