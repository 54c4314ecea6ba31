/* hwd_shard_net.c — a shard's data path: its endpoint (a kernel-UDP data
 * socket or its DPDK queue), the poller that is its RX burst, and the mux
 * its replica manager sends through (hwd_shard.h "Addressing", "DPDK").
 * The same code for every reactor; what differs for reactor 0 is named
 * where it differs: it listens on hiwater.data.listen (the others on an
 * ephemeral port of that host), brings up DPDK's EAL before its queue, and
 * sends the CONTROL plane on the node's control socket. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "hw_ksrv.h"
#include "hw_logging.h"
#include "hw_netaddr.h"
#include "hwd_shard.h"

/* DPDK data plane: EAL from dpdk.eal.args; neighbours from
 * hiwater.neighbour.<id>, or — for a local memif cluster
 * (hiwater.cluster.brokers) — derived from the ports the EAL probed: the
 * local topology's vdev of each peer (hw_dpdk_local_vdev_name:
 * net_memif_b<J>/net_memif_c<K>) where the port exists, else net_memif<i>
 * numbered over the peer brokers, then the client slots.
 * One instance per reactor, each on its own queue of every port. */
static int local_cluster_named(hwd_node *n, hw_dpdk *d)
{
	hwd_config *cfg = n->cfg;
	for (int i = 1; i <= cfg->cluster_brokers + cfg->cluster_client_slots; i++) {
		int32_t node = i <= cfg->cluster_brokers ? i : HW_CLIENT_NODE_BASE + (i - cfg->cluster_brokers - 1);
		char vdev[24];
		if (node != cfg->node_id && hw_dpdk_local_vdev_name(node, vdev, sizeof(vdev)) == 0 &&
		    hw_dpdk_port_index(d, vdev) >= 0)
			return 1;
	}
	return 0;
}

static int open_dpdk_queue(hwd_node *n, uint16_t queue, hw_net_on_msg_fn cb, void *ctx, hw_dpdk **out)
{
	hwd_config *cfg = n->cfg;
	int rc;
	hw_dpdk_cfg dc = { .cluster_id = cfg->cluster_id, .self_id = cfg->node_id, .on_msg = cb,
			   .ctx = ctx, .udp_port = (uint16_t)cfg->dpdk_udp_port, .mtu = (uint16_t)cfg->dpdk_mtu, .queue = queue,
			   .n_queues = (uint16_t)(n->n_reactors > 0 ? n->n_reactors : 1),
			   .owner_reactor = queue /* reactor k polls and sends on queue k */,
			   /* fetch responses: records go to the ports by reference
			    * (the log's refcounted chunks), not copied into mbufs
			    * (hw_dpdk.h, zero-copy) */
			   .ref_ops = hwd_log_ref_ops(),
			   /* a follower's log may keep a received mbuf: the rm of
			    * this queue's reactor takes its holds here */
			   .rxhold = &n->shards[queue].rxhold };
	if (cfg->dpdk_ip[0]) {
		struct in_addr a;
		if (inet_pton(AF_INET, cfg->dpdk_ip, &a) != 1) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.dpdk.ip'\n", cfg->path);
			return -EINVAL;
		}
		dc.ip = a.s_addr;
	}
	int err = 0;
	hw_dpdk *d = hw_dpdk_create(&dc, &err);
	if (!d) {
		fprintf(stderr, "hiwaterd: node %d: DPDK transport (queue %u): %s (check dpdk.eal.args)\n",
			cfg->node_id, queue, strerror(err < 0 ? -err : EINVAL));
		return err < 0 ? err : -EINVAL;
	}
	*out = d;
	for (int i = 0; i < cfg->n_data_nb; i++) {
		rc = hw_dpdk_add_neighbour(d, cfg->data_nb[i].node, cfg->data_nb[i].ep);
		if (rc < 0) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.neighbour.%d': %s\n",
				cfg->path, cfg->data_nb[i].node, strerror(-rc));
			return -EINVAL;
		}
	}
	if (cfg->n_data_nb == 0 && cfg->cluster_brokers > 0) {
		int named = local_cluster_named(n, d);
		int idx = 0;
		for (int i = 1; i <= cfg->cluster_brokers + cfg->cluster_client_slots; i++) {
			int32_t node = i <= cfg->cluster_brokers ? i : HW_CLIENT_NODE_BASE + (i - cfg->cluster_brokers - 1);
			if (node == cfg->node_id)
				continue;
			char ep[HWD_EP_MAX];
			if (!named || hw_dpdk_local_route(node, ep, sizeof(ep)))
				snprintf(ep, sizeof(ep), "dpdk:port=net_memif%d,ip=10.77.0.%d", idx, node & 255);
			idx++;
			rc = hw_dpdk_add_neighbour(d, node, ep);
			if (rc < 0)
				HW_LOG(WARN, "hiwaterd", "no DPDK route to node %d (%s): %s", node, ep, strerror(-rc));
			else if (queue == 0)
				HW_LOG(INFO, "hiwaterd", "DPDK route to node %d: %s", node, ep);
		}
	}
	return 0;
}

/* DPDK: reactor 0 brings up the EAL (dpdk.eal.args) first. */
static int open_dpdk(hwd_node *n, hwd_shard *s)
{
	hwd_config *cfg = n->cfg;
	if (s->idx == 0) {
		int rc = hw_dpdk_eal_init(cfg->eal_args);
		if (rc < 0) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'dpdk.eal.args': EAL init failed: %s\n",
				cfg->path, strerror(-rc));
			return -EINVAL;
		}
		n->eal_up = 1;
	}
	return open_dpdk_queue(n, (uint16_t)s->idx, hwd_shard_on_msg, s, &s->dpdk);
}

/* UDP: reactor 0 on hiwater.data.listen, reactor k on an ephemeral port of
 * its host (wire stream k); the configured neighbours; reactors >= 1 also
 * reach the voters through it (their CONTROL plane). */
static int open_udp(hwd_node *n, hwd_shard *s)
{
	hwd_config *cfg = n->cfg;
	char listen[HWD_EP_MAX];
	snprintf(listen, sizeof(listen), "%s", cfg->data_listen);
	if (s->idx > 0) {
		hw_endpoint ep;
		if (hw_endpoint_parse(cfg->data_listen, &ep) || ep.kind != HW_EP_UDP)
			return -EINVAL;
		char host[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &ep.udp.sin_addr, host, sizeof(host));
		snprintf(listen, sizeof(listen), "udp:%s:0", host);
	}
	hw_udp_cfg uc = { .listen = listen, .cluster_id = cfg->cluster_id, .self_id = cfg->node_id,
			  .on_msg = hwd_shard_on_msg, .ctx = s, .stream = (uint8_t)s->idx,
			  .owner_reactor = s->idx, .bind_wait_ms = HW_NETADDR_BIND_WAIT_MS };
	int err = 0;
	s->data = hw_udp_create(&uc, &err);
	if (!s->data) {
		fprintf(stderr, "hiwaterd: node %d: cannot open the data endpoint of reactor %d (%s): %s\n",
			cfg->node_id, s->idx, listen, strerror(err < 0 ? -err : EINVAL));
		return err < 0 ? err : -EADDRNOTAVAIL;
	}
	for (int i = 0; i < cfg->n_data_nb; i++) {
		int rc = hw_udp_add_neighbour(s->data, cfg->data_nb[i].node, cfg->data_nb[i].ep);
		if (rc < 0 && s->idx == 0) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.neighbour.%d'\n", cfg->path,
				cfg->data_nb[i].node);
			return rc;
		}
	}
	for (int i = 0; s->idx > 0 && i < cfg->n_voters; i++) {
		int rc = hw_udp_add_neighbour(s->data, cfg->voters[i].node, cfg->voters[i].ep);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Each transport poll is one RX burst: hwd_shard_on_msg stamps its first
 * message; messages delivered otherwise (mailbox) are timed from their
 * start. */
static int poll_udp(void *arg)
{
	hwd_shard *s = arg;
	s->rx_burst_ns = 0;
	s->rx_via = s->data;
	int rc = hw_udp_poll(s->data);
	s->rx_via = NULL;
	s->rx_burst_ns = 0;
	return rc;
}

static int poll_dpdk(void *arg)
{
	hwd_shard *s = arg;
	s->rx_burst_ns = 0;
	int rc = hw_dpdk_poll(s->dpdk);
	s->rx_burst_ns = 0;
	return rc;
}

/* The mux the shard's rm sends through: the default is our data net; the
 * CONTROL plane (HW_MSG_TABLE) goes to the control socket from reactor 0,
 * through reactor 0 from a DPDK reactor (funnel), through our own socket
 * from a UDP reactor (its voters are neighbours); answers to the Kafka
 * listener to reactor 0 (its listener routes HW_KSRV_NODE on reactor 0's
 * mux itself). Into *rm_net: what the rm sends through. */
static int shard_mux(hwd_node *n, hwd_shard *s, hw_net *data_net, hw_net **rm_net)
{
	s->mux = hw_netmux_create(data_net);
	if (!s->mux)
		return -ENOMEM;
	*rm_net = hw_netmux_net(s->mux);
	if (s->idx == 0)
		return hw_netmux_route_plane(s->mux, HW_PLANE_CONTROL, hw_udp_net(n->ctl));
	s->to0.send = hwd_shard_to0_send;
	int rc = hw_netmux_route(s->mux, HW_KSRV_NODE, &s->to0);
	if (rc < 0 || !s->dpdk)
		return rc;
	s->funnel.send = hwd_shard_funnel_send;
	s->dnet.send = hwd_shard_dpdk_send;
	*rm_net = &s->dnet;
	return hw_netmux_route_plane(s->mux, HW_PLANE_CONTROL, &s->funnel);
}

int hwd_shard_open_data(hwd_shard *s, hw_net **rm_net)
{
	hwd_node *n = s->node;
	int rc = n->cfg->transport_dpdk ? open_dpdk(n, s) : open_udp(n, s);
	if (rc < 0)
		return rc;
	rc = shard_mux(n, s, s->dpdk ? hw_dpdk_net(s->dpdk) : hw_udp_net(s->data), rm_net);
	if (rc < 0)
		return rc;
	if (s->data) {
		rc = hw_reactor_add_poller(s->reactor, "data-udp", poll_udp, NULL, s);
		if (rc == 0)
			rc = hw_reactor_add_wait_fd(s->reactor, hw_udp_wait_fd(s->data), 1, NULL, NULL, NULL);
		return rc;
	}
	/* memif has no RX interrupt: its doorbell (hw_doorbell.h) wakes a
	 * sleeping reactor; ports with RX interrupts add theirs; otherwise the
	 * backoff cap bounds the wake-up */
	rc = hw_reactor_add_poller(s->reactor, "data-dpdk", poll_dpdk, NULL, s);
	if (rc < 0)
		return rc;
	int w = hw_dpdk_add_wait_sources(s->dpdk, s->reactor);
	return w < 0 ? w : 0;
}

void hwd_shard_close_data(hwd_shard *s)
{
	if (s->mux)
		hw_netmux_destroy(s->mux);
	s->mux = NULL;
	if (s->data)
		hw_udp_destroy(s->data);
	s->data = NULL;
	if (s->dpdk)
		hw_dpdk_destroy(s->dpdk);
	s->dpdk = NULL;
}
