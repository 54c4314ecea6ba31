/* hw_dpdk_steer.c — frames to the instance that owns their destination UDP
 * port: rte_flow rules where the port takes them, software hand-off over
 * SPSC rings always. Design note in hw_dpdk_steer.h and hw_dpdk.h
 * ("Steering"). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_ring.h>
#include <rte_udp.h>
#include "hw_dpdk_steer.h"
#include "hw_logging.h"

/* Process-wide, like dpdk_share: one set of instances per process. The
 * rings and `active` are written by the queue-0 instance before the other
 * instances are created (and after they are destroyed); efd[q] and
 * sleeping[q] by instance q; pending[q] only by instance q. */
static struct rte_ring *rings[HW_DPDK_MAX_QUEUES][HW_DPDK_MAX_QUEUES];   /* [from][to] */
static int active;                                  /* some port is steered */
static int efd1[HW_DPDK_MAX_QUEUES];                /* eventfd + 1; 0: none */
static uint32_t sleeping[HW_DPDK_MAX_QUEUES];
static uint32_t pending[HW_DPDK_MAX_QUEUES];        /* targets to wake (bit per queue) */
static uint8_t mode[RTE_MAX_ETHPORTS];              /* HW_DPDK_STEER_* per port id */

static void drain_free(struct rte_ring *r)
{
	void *m;
	while (r && rte_ring_sc_dequeue(r, &m) == 0)
		rte_pktmbuf_free(m);
}

static void free_rings(void)
{
	for (int f = 0; f < HW_DPDK_MAX_QUEUES; f++)
		for (int t = 0; t < HW_DPDK_MAX_QUEUES; t++) {
			drain_free(rings[f][t]);
			rte_ring_free(rings[f][t]);
			rings[f][t] = NULL;
		}
}

static int create_rings(uint16_t n)
{
	for (uint16_t f = 0; f < n; f++)
		for (uint16_t t = 0; t < n; t++) {
			if (f == t)
				continue;
			char name[32];
			snprintf(name, sizeof name, "hw_st_%u_%u", f, t);
			rings[f][t] = rte_ring_create(name, STEER_RING_SLOTS, (int)rte_socket_id(),
						      RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (!rings[f][t]) {
				HW_LOG(ERROR, "dpdk", "hand-off ring %s: %s", name, rte_strerror(rte_errno));
				free_rings();
				return -ENOMEM;
			}
		}
	return 0;
}

int dpdk_steer_init(hw_dpdk *d)
{
	uint16_t q = d->cfg.queue;
	if (d->owner) {
		int plain = 0;
		for (int i = 0; i < d->n_ports; i++)
			plain |= !d->ports[i].memif;
		active = 0;
		if (d->cfg.n_queues > 1 && plain) {
			int rc = create_rings(d->cfg.n_queues);
			if (rc)
				return rc;
			active = 1;
		}
	}
	if (!active)
		return 0;
	if (!rings[0][q] && q != 0)
		return -EINVAL;   /* the queue-0 instance comes first */
	__atomic_store_n(&sleeping[q], 0, __ATOMIC_RELAXED);
	pending[q] = 0;
	if (__atomic_load_n(&efd1[q], __ATOMIC_RELAXED) > 0)
		return 0;   /* an earlier instance of this queue's: kept until queue 0 goes */
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* release: the eventfd exists before another instance may write it */
	__atomic_store_n(&efd1[q], fd + 1, __ATOMIC_RELEASE);
	return 0;
}

void dpdk_steer_fini(hw_dpdk *d)
{
	uint16_t q = d->cfg.queue;
	/* relaxed: nobody waits on it any more; a late writer's wake-up is lost */
	__atomic_store_n(&sleeping[q], 0, __ATOMIC_RELAXED);
	for (int f = 0; f < HW_DPDK_MAX_QUEUES; f++)
		drain_free(rings[f][q]);
	if (!d->owner)
		return;   /* our eventfd stays open: another instance may be writing it now */
	/* queue 0 goes last (hw_dpdk.h): no instance writes an eventfd now */
	for (int k = 0; k < HW_DPDK_MAX_QUEUES; k++) {
		int fd1 = __atomic_exchange_n(&efd1[k], 0, __ATOMIC_ACQ_REL);
		if (fd1 > 0)
			close(fd1 - 1);
	}
	for (int i = 0; i < d->n_ports; i++) {
		uint16_t pid = d->ports[i].port_id;
		if (mode[pid] == HW_DPDK_STEER_FLOW) {
			struct rte_flow_error fe;
			(void)rte_flow_flush(pid, &fe);
		}
		mode[pid] = HW_DPDK_STEER_NONE;
	}
	free_rings();
	active = 0;
}

/* One rule per queue k: ETH / IPV4 / UDP dst = BASE + k -> QUEUE k.
 * validate only, or create. 0, or the first refusal's -errno with *fe. */
static int flow_rules(hw_dpdk *d, const dport *p, int create, struct rte_flow_error *fe)
{
	for (uint16_t k = 0; k < d->cfg.n_queues; k++) {
		struct rte_flow_attr attr = { .ingress = 1 };
		struct rte_flow_item_udp spec = { .hdr.dst_port = rte_cpu_to_be_16((uint16_t)(d->cfg.udp_port + k)) };
		struct rte_flow_item_udp mask = { .hdr.dst_port = RTE_BE16(0xffff) };
		struct rte_flow_item pattern[] = {
			{ .type = RTE_FLOW_ITEM_TYPE_ETH },
			{ .type = RTE_FLOW_ITEM_TYPE_IPV4 },
			{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &spec, .mask = &mask },
			{ .type = RTE_FLOW_ITEM_TYPE_END },
		};
		struct rte_flow_action_queue qa = { .index = k };
		struct rte_flow_action actions[] = {
			{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &qa },
			{ .type = RTE_FLOW_ACTION_TYPE_END },
		};
		memset(fe, 0, sizeof *fe);
		if (!create) {
			int rc = rte_flow_validate(p->port_id, &attr, pattern, actions, fe);
			if (rc)
				return rc < 0 ? rc : -rc;
		} else if (!rte_flow_create(p->port_id, &attr, pattern, actions, fe)) {
			return -(rte_errno ? rte_errno : EIO);
		}
	}
	return 0;
}

void dpdk_steer_port(hw_dpdk *d, dport *p)
{
	uint16_t pid = p->port_id;
	mode[pid] = HW_DPDK_STEER_NONE;
	struct rte_eth_dev_info info;
	uint32_t ncfg = dpdk_share[pid].n_cfg;
	if (!p->memif && ncfg > d->cfg.n_queues)
		HW_LOG(INFO, "dpdk", "port %s: %u queue pairs for %u instance%s (instance q polls q, q + %u, ...)",
		       p->name, ncfg, d->cfg.n_queues, d->cfg.n_queues == 1 ? "" : "s", d->cfg.n_queues);
	if (!p->memif && rte_eth_dev_info_get(pid, &info) == 0 && info.driver_name &&
	    !strcmp(info.driver_name, "net_af_packet") && info.max_rx_queues > ncfg)
		HW_LOG(WARN, "dpdk", "port %s: %u af_packet sockets, at most %u polled: frames the kernel hashes "
		       "to the others are lost (use qpairs <= %u)", p->name, info.max_rx_queues, ncfg,
		       HW_DPDK_MAX_QUEUES);
	if (!active || p->memif)
		return;    /* memif: the queue pairing is the steering */
	struct rte_flow_error fe;
	int rc = flow_rules(d, p, 0, &fe);
	if (rc == 0)
		rc = flow_rules(d, p, 1, &fe);
	if (rc == 0) {
		mode[pid] = HW_DPDK_STEER_FLOW;
		HW_LOG(INFO, "dpdk", "port %s: %u queues steered by rte_flow (UDP dst %u..%u -> queue 0..%u)",
		       p->name, d->cfg.n_queues, d->cfg.udp_port, d->cfg.udp_port + d->cfg.n_queues - 1,
		       d->cfg.n_queues - 1);
		return;
	}
	struct rte_flow_error fe2;
	(void)rte_flow_flush(pid, &fe2);   /* rules created before a refusal */
	mode[pid] = HW_DPDK_STEER_SW;
	HW_LOG(INFO, "dpdk", "port %s: rte_flow refused (%s: %s): frames for another reactor's UDP port are "
	       "handed to it in software", p->name, strerror(rc < 0 ? -rc : rc),
	       fe.message ? fe.message : "no message");
}

int dpdk_steer_target(const hw_dpdk *d, const dport *p, const struct rte_mbuf *mb)
{
	if (mode[p->port_id] == HW_DPDK_STEER_NONE || rte_pktmbuf_data_len(mb) < NET_HDR)
		return -1;
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(mb, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || ip->version_ihl != RTE_IPV4_VHL_DEF ||
	    ip->next_proto_id != IPPROTO_UDP ||
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) ||
	    (ip->dst_addr != d->cfg.ip && ip->dst_addr != 0xffffffffu))
		return -1;
	uint32_t k = (uint32_t)rte_be_to_cpu_16(udp->dst_port) - d->cfg.udp_port;   /* wraps if below */
	if (k >= d->cfg.n_queues || k == d->cfg.queue)
		return -1;
	return (int)k;
}

void dpdk_steer_handoff(hw_dpdk *d, int to, uint16_t port_id, struct rte_mbuf *mb)
{
	uint16_t q = d->cfg.queue;
	struct rte_ring *r = to >= 0 && to < HW_DPDK_MAX_QUEUES ? rings[q][to] : NULL;
	mb->port = port_id;
	/* rte_ring's enqueue ends with a release store of the producer tail:
	 * the mbuf (header and the bytes the PMD wrote) is visible to the
	 * consumer whose dequeue loads that tail with acquire */
	if (!r || rte_ring_sp_enqueue(r, mb) != 0) {
		rte_pktmbuf_free(mb);
		d->st.rx_steer_dropped++;
		return;
	}
	d->st.rx_steered_out++;
	pending[q] |= 1u << to;
}

void dpdk_steer_wake(hw_dpdk *d)
{
	uint16_t q = d->cfg.queue;
	uint32_t m = pending[q];
	if (!m)
		return;
	pending[q] = 0;
	/* full fence (Dekker): our enqueues are globally visible before we
	 * read the targets' sleeping flags; pairs with the fence a target
	 * issues between setting its flag and re-polling its rings (hw_reactor
	 * sleep, hw_dpdk_idle_wait) — either it sees the frames or we see it
	 * asleep and write its eventfd */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int to = 0; to < HW_DPDK_MAX_QUEUES; to++) {
		if (!(m & (1u << to)) || !__atomic_load_n(&sleeping[to], __ATOMIC_RELAXED))
			continue;
		/* acquire: pairs with the release in dpdk_steer_init (fd open) */
		int fd1 = __atomic_load_n(&efd1[to], __ATOMIC_ACQUIRE);
		uint64_t one = 1;
		if (fd1 > 0 && write(fd1 - 1, &one, sizeof one) == (ssize_t)sizeof one)
			d->st.rx_steer_wakeups++;
	}
}

unsigned dpdk_steer_take(hw_dpdk *d, struct rte_mbuf **pk, unsigned n)
{
	if (!active)
		return 0;
	uint16_t q = d->cfg.queue;
	unsigned got = 0;
	for (uint16_t f = 0; f < d->cfg.n_queues && got < n; f++)
		if (f != q && rings[f][q])
			got += rte_ring_sc_dequeue_burst(rings[f][q], (void **)(pk + got), n - got, NULL);
	d->st.rx_steered_in += got;
	return got;
}

int dpdk_steer_fd(const hw_dpdk *d)
{
	/* relaxed: only this instance's thread writes its own slot */
	int fd1 = __atomic_load_n(&efd1[d->cfg.queue], __ATOMIC_RELAXED);
	return fd1 > 0 ? fd1 - 1 : -1;
}

void dpdk_steer_set_sleeping(hw_dpdk *d, int on)
{
	/* relaxed: the caller's full fence (after setting) orders it against
	 * its re-poll; clearing late only costs a spare eventfd write */
	__atomic_store_n(&sleeping[d->cfg.queue], on ? 1u : 0u, __ATOMIC_RELAXED);
}

uint16_t dpdk_port_queues(const dport *p, uint16_t n)
{
	if (p->memif_server)
		return HW_DPDK_MAX_QUEUES;
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(p->port_id, &info) || !info.driver_name ||
	    strcmp(info.driver_name, "net_af_packet") || info.max_rx_queues <= n)
		return n;
	uint16_t all = info.max_rx_queues < info.max_tx_queues ? info.max_rx_queues : info.max_tx_queues;
	return all > HW_DPDK_MAX_QUEUES ? HW_DPDK_MAX_QUEUES : all < n ? n : all;
}

int dpdk_steer_mode(const hw_dpdk *d, int i)
{
	return i >= 0 && i < d->n_ports ? mode[d->ports[i].port_id] : -EINVAL;
}
