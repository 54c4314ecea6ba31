/* hw_dpdk_tx.c — DPDK transport TX: frames into mbufs (copied or, for
 * records the store lent us, external buffers), Ethernet/IPv4/UDP headers,
 * per-port TX queues and bursts. Design note in hw_dpdk.h. */
#include <stdlib.h>
#include <string.h>
#include <rte_arp.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include "hw_dpdk_int.h"
#include "hw_dpdk_steer.h"
#include "hw_assert.h"
#include "hw_doorbell.h"

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
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
	int n = 0;
	for (int i = 0; i < d->n_ports; i++)
		n += port_flush(d, &d->ports[i]);
	return n;
}

void dpdk_port_enqueue(hw_dpdk *d, dport *p, struct rte_mbuf *m)
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
	udp->src_port = rte_cpu_to_be_16(dpdk_udp_self(d));   /* replies come to this instance */
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
	void (*release)(void *ref);   /* cfg.ref_ops.release of the sending instance */
} zc_hold;

static void zc_free_cb(void *addr, void *opaque)
{
	(void)addr;
	zc_hold *h = opaque;
	h->release(h->ref);
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
	const hw_net_ref_ops *ops = &d->cfg.ref_ops;
	struct rte_mbuf *nm = rte_pktmbuf_alloc(d->pool);
	zc_hold *h = malloc(sizeof *h);
	if (!nm || !h || len > UINT16_MAX) {
		rte_pktmbuf_free(nm);
		free(h);
		return -ENOBUFS;
	}
	h->ref = ref;
	h->release = ops->release;
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

/* The pool of a packet's first mbuf. Packets over 2 KiB: on memif one
 * 64 KiB mbuf (one memif buffer per packet); on a port without MULTI_SEGS
 * one MTU-sized mbuf (txj), or 64 KiB when it has no MTU; on every other
 * port a chain of 2 KiB mbufs, which the 8191-mbuf pool affords even with
 * a NIC's TX ring full of them. */
static struct rte_mempool *tx_pool(hw_dpdk *d, const dport *p, size_t pkt_len, int zc)
{
	if (zc || pkt_len <= RTE_MBUF_DEFAULT_DATAROOM || (p->multi_seg && !p->memif))
		return d->pool;
	if (p->memif)
		return d->jumbo;
	if (d->txj && pkt_len <= d->txj_room)
		return d->txj;
	return d->jumbo;
}

/* Copy len bytes starting at frame offset *off from the iovecs into the
 * chain, advancing the cursor (*vi, *voff). 0 or -ENOBUFS. */
static int chain_copy_iov(hw_dpdk *d, struct rte_mbuf *head, struct rte_mbuf **tail, int niov, int *vi,
			  size_t *voff, size_t len)
{
	while (len && *vi < niov) {
		const struct iovec *v = &d->iov[*vi];
		size_t take = v->iov_len - *voff < len ? v->iov_len - *voff : len;
		int rc = chain_copy(d, head, tail, (const uint8_t *)v->iov_base + *voff, take);
		if (rc)
			return rc;
		len -= take;
		*voff += take;
		if (*voff == v->iov_len) {
			(*vi)++;
			*voff = 0;
		}
	}
	return len ? -ENOBUFS : 0;
}

/* A frame of len bytes (in d->iov) that does not fit one packet of p:
 * hiwater fragments (hw_frag.h), each one packet <= the MTU, copied.
 * 0, -EMSGSIZE (the port's MTU is too small to fragment into; counted in
 * tx_refused_size), -EAGAIN (no mbuf; fragments queued before are sent —
 * the receiver drops the incomplete message after its timeout). */
static int send_fragments(hw_dpdk *d, dport *p, const dneigh *n, int niov, size_t len)
{
	uint16_t fs = 0;
	int count = hw_frag_plan(len, p->payload, &fs);
	if (count < 2) {
		d->st.tx_refused_size++;
		return -EMSGSIZE;
	}
	hw_frag_hdr h = { .count = (uint16_t)count, .frag_size = fs, .msg_id = d->frag_msg_id++,
			  .total_len = (uint32_t)len };
	int vi = 0;
	size_t voff = 0;
	for (int i = 0; i < count; i++) {
		h.index = (uint16_t)i;
		h.offset = (uint32_t)i * fs;
		size_t pl = len - h.offset < fs ? len - h.offset : fs;
		size_t flen = HW_FRAG_HDR_LEN + pl;
		struct rte_mbuf *m = rte_pktmbuf_alloc(tx_pool(d, p, NET_HDR + flen, 0));
		if (!m) {
			d->st.tx_no_mbuf++;
			return -EAGAIN;
		}
		m->data_len = NET_HDR;
		m->pkt_len = NET_HDR;
		struct rte_mbuf *tail = m;
		uint8_t fh[HW_FRAG_HDR_LEN];
		int hl = hw_frag_encode(&h, fh, sizeof fh);
		HW_ASSERT(hl == HW_FRAG_HDR_LEN);   /* fields from hw_frag_plan: always valid */
		if (chain_copy(d, m, &tail, fh, HW_FRAG_HDR_LEN) ||
		    chain_copy_iov(d, m, &tail, niov, &vi, &voff, pl)) {
			rte_pktmbuf_free(m);
			d->st.tx_no_mbuf++;
			return -EAGAIN;
		}
		HW_ASSERT(p->multi_seg || m->nb_segs == 1);
		HW_ASSERT(m->pkt_len <= p->mtu + RTE_ETHER_HDR_LEN);
		fill_l2l3(d, p, n, m, flen);
		d->st.tx_packets++;
		d->st.tx_segments += m->nb_segs;
		d->st.tx_fragments++;
		dpdk_port_enqueue(d, p, m);
	}
	d->st.tx_fragmented_frames++;
	return 0;
}

int dpdk_send(hw_net *net, const hw_msg *m)
{
	hw_dpdk *d = (hw_dpdk *)net;
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
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
			dpdk_send_arp(d, p, RTE_ARP_OP_REQUEST, NULL, n->ip);
		}
	}
	/* Zero-copy: record bytes the store lent us (records_ref) go out as
	 * external mbufs chained after a header mbuf — only on ports that
	 * advertise MULTI_SEGS, and on memif only as a chain that fits one
	 * memif buffer (memif_room): max_frame already bounds every packet by
	 * it (see MEMIF_TX_CHAINS). Elsewhere they are copied into one mbuf
	 * (tx_linearized_*). */
	int refs = has_refs(m) && d->cfg.ref_ops.hold && d->cfg.ref_ops.release;
	int zc = !d->cfg.no_zero_copy && p->multi_seg && (!p->memif || MEMIF_TX_CHAINS) && refs;
	hw_wire_split sp = { 0 };
	int rc = 0;
	do {
		int niov = 0;
		int len = hw_wire_encode_iov(&d->tx, m, &sp, p->max_frame, d->hdrbuf, HW_WIRE_MAX_FRAME,
					     d->iov, MAX_IOV, &niov, d->rec_iov);
		if (len < 0) {
			if (len == -EMSGSIZE)
				d->st.tx_refused_size++;
			return len;
		}
		if (p->payload && (size_t)len > p->payload) {
			/* larger than one packet of this port's MTU */
			rc = send_fragments(d, p, n, niov, (size_t)len);
			if (rc)
				return rc;
			d->st.wire.tx_frames++;
			d->st.wire.tx_bytes += (uint64_t)len;
			continue;
		}
		if (!p->multi_seg && (refs || NET_HDR + (size_t)len > RTE_MBUF_DEFAULT_DATAROOM)) {
			d->st.tx_linearized_packets++;
			d->st.tx_linearized_bytes += (uint64_t)len;
		}
		struct rte_mbuf *head = rte_pktmbuf_alloc(tx_pool(d, p, NET_HDR + (size_t)len, zc));
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
		/* no chain to a port that cannot send one; never over the MTU */
		HW_ASSERT(p->multi_seg || head->nb_segs == 1);
		HW_ASSERT(!p->mtu || head->pkt_len <= p->mtu + RTE_ETHER_HDR_LEN);
		fill_l2l3(d, p, n, head, (size_t)len);
		d->st.tx_packets++;
		d->st.tx_segments += head->nb_segs;
		d->st.wire.tx_frames++;
		d->st.wire.tx_bytes += (uint64_t)len;
		dpdk_port_enqueue(d, p, head);
	} while (!sp.done);
	if (!d->cfg.defer_tx)
		port_flush(d, p);
	return rc;
}

int hw_dpdk_tx_raw(hw_dpdk *d, int port_index, const void *frame, size_t len)
{
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
	if (port_index < 0 || port_index >= d->n_ports || (!frame && len) || len > 9000)
		return -EINVAL;
	dport *p = &d->ports[port_index];
	if ((p->memif && len > p->max_frame + NET_HDR) || (p->mtu && len > p->mtu + RTE_ETHER_HDR_LEN)) {
		d->st.tx_refused_size++;
		return -EMSGSIZE;
	}
	struct rte_mbuf *head = rte_pktmbuf_alloc(tx_pool(d, p, len, 0));
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
	dpdk_port_enqueue(d, &d->ports[port_index], head);
	if (!d->cfg.defer_tx)
		port_flush(d, &d->ports[port_index]);
	return 0;
}
