/* hw_dpdk_rx.c — DPDK transport RX: bursts, header checks, decode,
 * replay check, neighbour learning, delivery. Design note in hw_dpdk.h. */
#include <stddef.h>
#include <string.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include "hw_assert.h"
#include "hw_dpdk_int.h"
#include "hw_dpdk_steer.h"
#include "hw_dpdk_rxhold.h"
#include "hw_logging.h"
#include "hw_rxhold.h"
#include "hw_qhello.h"

/* The neighbour table is full: forget every learned neighbour (configured
 * ones stay); a sender still alive is learned again from its next frame. */
static void forget_learned(hw_dpdk *d)
{
	static __thread dneigh old[HW_NODEMAP_CAP];
	d->st.forgotten += (uint64_t)hw_nodemap_forget(&d->map, d->neigh, sizeof d->neigh[0],
						       offsetof(dneigh, configured), old);
}

static void learn(hw_dpdk *d, int pi, int32_t src, const struct rte_ether_hdr *eth,
		  const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp)
{
	int created;
	int s = hw_nodemap_slot(&d->map, src, 1, &created);
	if (s == -ENOSPC) {
		forget_learned(d);
		s = hw_nodemap_slot(&d->map, src, 1, &created);
	}
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

/* Feed a fragment to the reassembler. 1 with *frame / *flen replaced by
 * the whole frame when this one completed it, else 0 (stored, or dropped
 * and counted; drops are logged on the 1st, 2nd, 4th ... of each reason). */
static int reassemble(hw_dpdk *d, int pi, uint32_t src_ip, uint16_t src_port, const uint8_t **frame, size_t *flen)
{
	const uint8_t *whole = NULL;
	size_t wlen = 0;
	hw_frag_drop why;
	int rc = hw_frag_reasm_push(d->reasm, src_ip, src_port, *frame, *flen, now_ns(), &whole, &wlen, &why);
	d->frag_seen = 1;
	if (rc < 0) {
		uint64_t n = hw_frag_reasm_stats(d->reasm)->drops[why];
		if ((n & (n - 1)) == 0 && why != HW_FRAG_DROP_DUPLICATE)
			HW_LOG(WARN, "dpdk", "port %s: fragment dropped, %s (%s; %zu bytes, drop #%llu)", d->ports[pi].name,
			       hw_frag_drop_name(why), hw_frag_drop_desc(why), *flen, (unsigned long long)n);
		return 0;
	}
	if (rc == 0)
		return 0;
	*frame = whole;
	*flen = wlen;
	return 1;
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
		dpdk_handle_arp(d, pi, mb);
		return;
	}
	if (et == HW_QHELLO_ETHER_TYPE) {
		dpdk_handle_hello(d, pi, mb);
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
	    /* any of our instances' ports (memif: whatever our queue got) */
	    (uint32_t)rte_be_to_cpu_16(udp->dst_port) - d->cfg.udp_port >= d->cfg.n_queues ||
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
	if (hw_frag_is_fragment(frame, flen)) {
		/* part of a frame larger than one packet (hw_frag.h): the
		 * reassembled frame is decoded from the reassembler's slot */
		if (!reassemble(d, pi, ip->src_addr, udp->src_port, &frame, &flen))
			return;
		in_mbuf = 0;
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
	/* sender identity (docs/security.md): a node with a configured route
	 * sends through that port (a memif port is one point-to-point link)
	 * from that address; a frame claiming its id from elsewhere is forged,
	 * refused before it can move the replay window */
	int known = hw_nodemap_slot(&d->map, h.src, 0, NULL);
	if (known >= 0 && d->neigh[known].configured &&
	    (d->neigh[known].port != pi || (d->neigh[known].ip && d->neigh[known].ip != ip->src_addr))) {
		d->st.wire.rx_frames--;
		d->st.wire.drops[HW_WIRE_DROP_WRONG_PEER]++;
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
		hw_rxhold_enter(d->cfg.rxhold, &hold);
	d->cfg.on_msg(d->cfg.ctx, &m);
	if (in_mbuf)
		hw_rxhold_leave(d->cfg.rxhold);
}

/* Frames other instances received for our UDP port (hw_dpdk_steer.h). */
static int poll_handoffs(hw_dpdk *d, struct rte_mbuf **pk)
{
	unsigned n = dpdk_steer_take(d, pk, BURST);
	for (unsigned k = 0; k < n; k++) {
		int pi = 0;
		while (pi < d->n_ports && d->ports[pi].port_id != pk[k]->port)
			pi++;
		if (pi < d->n_ports)
			handle_pkt(d, pi, pk[k]);
		else
			d->st.rx_not_hiwater++;   /* cannot happen: the ports are the same */
		rte_pktmbuf_free(pk[k]);
	}
	return (int)n;
}

int hw_dpdk_poll(hw_dpdk *d)
{
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
	int work = 0;
	struct rte_mbuf *pk[BURST];
	int64_t t = now_ns();
	if (t - d->last_link_check > LINK_CHECK_NS) {
		d->last_link_check = t;
		dpdk_check_links(d, t);
	}
	if (d->owner && t - d->last_fast_check > FAST_LINK_CHECK_NS) {
		d->last_fast_check = t;
		dpdk_check_server_links(d);
	}
	int handed = poll_handoffs(d, pk);
	int drained = handed < BURST;   /* every burst below came back short */
	work += handed;
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
			drained &= n < BURST;
			if (q < HW_DPDK_MAX_QUEUES)
				d->st.rx_queue_packets[q] += n;
			for (uint16_t k = 0; k < n; k++) {
				if (k + 1 < n)
					rte_prefetch0(rte_pktmbuf_mtod(pk[k + 1], void *));
				int to = dpdk_steer_target(d, &d->ports[i], pk[k]);
				if (to >= 0) {
					dpdk_steer_handoff(d, to, pid, pk[k]);   /* takes it */
					continue;
				}
				handle_pkt(d, i, pk[k]);
				rte_pktmbuf_free(pk[k]);
			}
			work += n;
		}
	}
	/* Give up incomplete messages only once the fragments that have
	 * arrived are all pushed (our queues drained): after a deschedule
	 * longer than the timeout, the rest of a message may still be waiting
	 * in the ring (hw_frag.h, "Reassembly"). */
	if (drained && t - d->last_frag_expire > FRAG_EXPIRE_NS) {
		d->last_frag_expire = t;
		if (hw_frag_reasm_expire(d->reasm, now_ns()))
			d->frag_seen = 1;
	}
	if (d->frag_seen) {
		/* the reassembler's counters into ours (hw_dpdk_get_stats) */
		d->st.frag = *hw_frag_reasm_stats(d->reasm);
		d->frag_seen = 0;
	}
	dpdk_steer_wake(d);
	hw_dpdk_flush(d);
	return work;
}
