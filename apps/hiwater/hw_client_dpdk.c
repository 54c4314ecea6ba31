/* hw_client_dpdk.c — the CLI client's DPDK endpoint: the EAL and one hw_dpdk
 * instance per producer endpoint, on a local memif cluster's slot or on any
 * port (--command-config), and its routes to the brokers. See hw_client.c. */
#include "hw_client_int.h"
static int wait_links(hw_client *cl);

/* The client side of this slot's memif links (one per broker), EAL with
 * --no-huge and a file prefix unique to the cluster and slot, one hw_dpdk
 * instance (queue) per endpoint. Waits up to 5 s for the links to come up. */
int hwc_open_dpdk(hw_client *cl)
{
	char sockdir[64], eal[4096];
	hw_dpdk_local_topo topo;
	hw_cluster_memif_dir(&cl->cluster, sockdir, sizeof(sockdir));
	/* each further queue has its own mempools (~35 MB) */
	int rc = hw_dpdk_local_topo_build(sockdir, cl->node, cl->cluster.brokers, cl->cluster.client_slots,
					  256 + 64 * (cl->n_ep - 1), &topo);
	if (rc) {
		hw_cli_err("memif topology for slot %d: %s", cl->slot, strerror(-rc));
		return rc;
	}
	/* A memif client port cannot start without its server: leave out the
	 * links of brokers that are not running (killed or stopped); the CLI
	 * talks to the brokers that are up. */
	int alive[HW_CLUSTER_MAX_BROKERS + 1] = {0}, n_alive = 0;
	for (int b = 1; b <= cl->cluster.brokers; b++) {
		pid_t pid;
		alive[b] = hw_cluster_node_state(&cl->cluster, b, &pid) == HW_NODE_RUNNING;
		n_alive += alive[b];
	}
	if (!n_alive) {
		hw_cli_err("no broker of %s is running", cl->cluster.dir);
		return -EHOSTUNREACH;
	}
	for (int i = topo.n_links - 1; i >= 0; i--)   /* a client links to brokers only */
		if (topo.link[i].peer > HW_CLUSTER_MAX_BROKERS || !alive[topo.link[i].peer])
			hw_dpdk_local_topo_drop(&topo, i);
	rc = hw_dpdk_local_eal_args(&topo, eal, sizeof(eal) - 64);
	if (rc) {
		hw_cli_err("memif topology for slot %d: %s", cl->slot, strerror(-rc));
		return rc;
	}
	strcat(eal, " --log-level=lib.eal:error");
	rc = hw_dpdk_eal_init(eal);
	if (rc) {
		hw_cli_err("DPDK EAL init failed (%s): %s", eal, strerror(-rc));
		return rc;
	}
	/* queue 0 first: it configures and starts the ports with n_ep queues */
	for (int q = 0; q < cl->n_ep; q++) {
		client_ep *ep = &cl->ep[q];
		hw_dpdk_cfg dc = {.cluster_id = cl->cluster.cluster_id, .self_id = cl->node,
				  .on_msg = hwc_on_dpdk_msg, .ctx = ep, .queue = (uint16_t)q,
				  .n_queues = (uint16_t)cl->n_ep, .wire_stream = (uint8_t)q};
		ep->dpdk = hw_dpdk_create(&dc, &rc);
		if (!ep->dpdk) {
			hw_cli_err("DPDK ports for slot %d, queue %d: %s", cl->slot, q, strerror(-rc));
			return rc ? rc : -ENODEV;
		}
		for (int i = 0; i < topo.n_links; i++) {
			char route[HW_ENDPOINT_MAX];
			int32_t peer = topo.link[i].peer;
			if ((rc = hw_dpdk_local_route(peer, route, sizeof(route))) ||
			    (rc = hw_dpdk_add_neighbour(ep->dpdk, peer, route))) {
				hw_cli_err("neighbour %d (%s): %s", peer, topo.link[i].vdev, strerror(-rc));
				return rc;
			}
		}
		if (cl->n_ep > 1) {
			ep->bell.sun_family = AF_UNIX;
			int n = q ? snprintf(ep->bell.sun_path, sizeof(ep->bell.sun_path), "%s/bell-%d-q%d.sock",
					     sockdir, cl->node, q)
				  : snprintf(ep->bell.sun_path, sizeof(ep->bell.sun_path), "%s/bell-%d.sock",
					     sockdir, cl->node);
			ep->have_bell = n > 0 && (size_t)n < sizeof(ep->bell.sun_path);
			ep->wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (ep->wake_fd < 0)
				return -errno;
			if (hwc_inbox_open(ep))
				return -ENOMEM;
		}
	}
	return wait_links(cl);
}

/* Every port's link up within 5 s. 0 or -ETIMEDOUT (message printed). */
static int wait_links(hw_client *cl)
{
	int64_t deadline = hwc_now_ns() + 5000000000LL;
	hw_dpdk *d0 = cl->ep[0].dpdk;
	for (;;) {
		int up = 0, n = hw_dpdk_port_count(d0);
		for (int i = 0; i < n; i++)
			up += hw_dpdk_link_up(d0, i) > 0;
		if (up == n)
			return 0;
		if (hwc_now_ns() > deadline) {
			hw_cli_err("only %d of %d DPDK links up after 5 s (are the brokers running?)", up, n);
			return -ETIMEDOUT;
		}
		for (int q = 0; q < cl->n_ep; q++)
			hw_dpdk_poll(cl->ep[q].dpdk);
		usleep(2000);
	}
}

/* Bootstrap mode over DPDK, any port type (memif, af_packet, af_xdp, tap,
 * a NIC): the EAL from dpdk.eal.args, our IP and UDP port from the
 * command-config, one instance (queue) per endpoint. Routes to the brokers
 * come from Metadata (their registered dpdk:ip=..,udp=..: hwc_ep_sync); the
 * transport ARPs for their MACs. */
int hwc_open_dpdk_any(hw_client *cl)
{
	const hw_client_config *cc = &cl->ccfg;
	struct in_addr ip = {0};
	if (cc->dpdk_ip[0] && inet_pton(AF_INET, cc->dpdk_ip, &ip) != 1)
		return -EINVAL; /* checked by hw_client_config */
	/* a CLI shows the EAL's errors only, unless the args say otherwise */
	char eal[sizeof(cc->eal_args) + 32];
	snprintf(eal, sizeof(eal), "%s%s", cc->eal_args,
		 strstr(cc->eal_args, "--log-level") ? "" : " --log-level=lib.eal:error");
	int rc = hw_dpdk_eal_init(eal);
	if (rc) {
		hw_cli_err("DPDK EAL init failed (dpdk.eal.args '%s'): %s", cc->eal_args, strerror(-rc));
		return rc;
	}
	for (int q = 0; q < cl->n_ep; q++) {
		client_ep *ep = &cl->ep[q];
		hw_dpdk_cfg dc = {.cluster_id = cl->cluster.cluster_id, .self_id = cl->node,
				  .on_msg = hwc_on_dpdk_msg, .ctx = ep, .queue = (uint16_t)q,
				  .n_queues = (uint16_t)cl->n_ep, .wire_stream = (uint8_t)q,
				  .ip = ip.s_addr, .udp_port = (uint16_t)cc->dpdk_udp_port,
				  .mtu = (uint16_t)cc->dpdk_mtu};
		ep->dpdk = hw_dpdk_create(&dc, &rc);
		if (!ep->dpdk) {
			hw_cli_err("DPDK ports, queue %d: %s", q, strerror(-rc));
			return rc ? rc : -ENODEV;
		}
		if (cl->n_ep > 1) {
			/* no doorbell off memif: a forwarded answer waits for
			 * the owner's next poll (its sleep is capped at 1 ms) */
			if (hwc_inbox_open(ep))
				return -ENOMEM;
		}
	}
	if (cc->dpdk_port[0] && hw_dpdk_port_index(cl->ep[0].dpdk, cc->dpdk_port) < 0) {
		hw_cli_err("hiwater.dpdk.port '%s': no such DPDK port", cc->dpdk_port);
		return -ENODEV;
	}
	return wait_links(cl);
}

/* ep's thread: a route to every broker whose registered data endpoint is
 * a DPDK one and changed since (bootstrap mode over DPDK). */
void hwc_ep_add_dpdk_routes(client_ep *ep)
{
	hw_client *cl = ep->cl;
	for (int i = 0; i < ep->n_nodes; i++) {
		client_node *nd = &ep->nodes[i];
		if (strncmp(nd->data_ep, "dpdk:", 5) || ep->routed_ver[i] == nd->ver + 1)
			continue;
		char port[64], route[HW_ENDPOINT_MAX + 80];
		int rc = 0;
		if (cl->ccfg.dpdk_port[0])
			snprintf(port, sizeof(port), "%s", cl->ccfg.dpdk_port);
		else
			rc = hw_netaddr_dpdk_default_port(port, sizeof(port));
		/* the queues= field only where the endpoint parser knows it */
		for (int with_queues = 1; with_queues >= 0 && (rc == 0 || rc == -EINVAL); with_queues--) {
			rc = hw_netaddr_dpdk_route(nd->data_ep, port, with_queues, route, sizeof(route));
			if (rc == 0)
				rc = hw_dpdk_add_neighbour(ep->dpdk, nd->id, route);
			if (rc != -EINVAL || !strstr(nd->data_ep, "queues="))
				break;
		}
		if (rc == 0)
			ep->routed_ver[i] = nd->ver + 1;
		else if (ep->idx == 0)
			hw_cli_err("no DPDK route to broker %d (%s): %s", nd->id, nd->data_ep,
				   rc == -EEXIST ? "several DPDK ports: set hiwater.dpdk.port" : strerror(-rc));
		if (rc)
			ep->routed_ver[i] = nd->ver + 1; /* said once; retried when it changes */
	}
}

