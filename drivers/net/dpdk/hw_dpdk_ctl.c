/* hw_dpdk_ctl.c — the DPDK transport's non-hiwater frames: ARP (answer
 * for our IP, learn neighbours' MACs, ask for unknown ones) and the memif
 * queue hello (hw_qhello.h). */
#include <stdio.h>
#include <string.h>
#include <rte_arp.h>
#include "hw_dpdk_int.h"
#include "hw_assert.h"
#include "hw_logging.h"
#include "hw_qhello.h"

/* ---- ARP */

void dpdk_send_arp(hw_dpdk *d, dport *p, uint16_t op, const struct rte_ether_addr *tha, uint32_t tip)
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
	dpdk_port_enqueue(d, p, mb);
	if (op == RTE_ARP_OP_REQUEST)
		d->st.arp_requests_tx++;
	else
		d->st.arp_replies_tx++;
}

void dpdk_handle_arp(hw_dpdk *d, int pi, struct rte_mbuf *mb)
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
		dpdk_send_arp(d, &d->ports[pi], RTE_ARP_OP_REPLY, &arp->arp_data.arp_sha, sip);
}

/* ---- queue hello (hw_dpdk.h "memif queues"): a memif client tells its
 * server how many ring pairs it connected; the frame after the Ethernet
 * header is hw_qhello.h's (format, version, compatibility). */

_Static_assert(HW_DPDK_MAX_QUEUES <= HW_QHELLO_MAX_QUEUES, "a queue count must fit a hello");

void dpdk_send_hello(hw_dpdk *d, dport *p)
{
	hw_qhello h = { .queue_count = (uint16_t)dpdk_share[p->port_id].n_cfg, .cluster_id = d->cfg.cluster_id,
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
	dpdk_port_enqueue(d, p, mb);
	d->st.queue_hello_tx++;
}

void dpdk_handle_hello(hw_dpdk *d, int pi, struct rte_mbuf *mb)
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
	uint32_t n = h.queue_count < dpdk_share[p->port_id].n_cfg ? h.queue_count : dpdk_share[p->port_id].n_cfg;
	uint32_t old = port_conn(p->port_id);
	if (n != old) {
		port_set_conn(p->port_id, n);
		HW_LOG(INFO, "dpdk", "port %s: node %d connected %u queue pair%s (was %u)", p->name, h.node_id, n,
		       n == 1 ? "" : "s", old);
	}
}
