/* hw_client.c — control and data endpoints of a CLI process; see hw_client.h.
 *
 * Sockets are plain non-blocking kernel UDP sockets: a CLI process sends a
 * few requests, so io_uring buys nothing here. The data socket of the udp
 * transport is bound to the slot's data port so brokers may answer either to
 * the source address or to the endpoint their config lists for the slot.
 *
 * Producer endpoints (`hiwater bench --producers N`). The data path is a
 * set of endpoints, one per producer thread; endpoint 0 is the
 * single-producer client exactly as before. Each endpoint is polled by its
 * own thread only:
 *   - udp: endpoint p > 0 has its own socket (an ephemeral port) and its
 *     own node id, slot node + 64 * p (client slots are < 64, so no other
 *     CLI process uses it); brokers learn where a node is from the source
 *     address of its frames, so each producer's answers come to its socket.
 *   - dpdk: one EAL, the slot's memif ports configured with N queue pairs
 *     (the memif client decides the ring count and announces it to the
 *     broker in its queue hello, drivers/net/README.md "Queues"); endpoint p
 *     is the hw_dpdk instance of queue p, wire stream p (the broker keeps
 *     one replay window per (node, stream), and all endpoints share the
 *     slot's node id: its neighbour route and doorbells). A broker answers
 *     on the queue of the reactor that owns the partition, not on the
 *     queue the request came in on (a one-reactor broker answers every
 *     producer on queue 0), so an endpoint hands a produce response for
 *     another producer (its index is in the correlation id:
 *     HW_BENCH_CORR_PRODUCER_SHIFT) to that producer through a
 *     single-producer/single-consumer ring per (from, to) pair and wakes it
 *     if it sleeps (below). Fetch responses go to endpoint 0 (the consumer).
 * Wake-up of a forwarded response: the receiver, before sleeping on its
 * memif doorbell, sets `sleeping`, fences, and looks at its inbound rings
 * once more; the forwarder, after publishing the entry, fences and reads
 * `sleeping`; if set it sends one byte to the receiver queue's doorbell
 * socket (bell-<node>[-q<k>].sock, hw_doorbell.h), which ends its ppoll
 * (Dekker: one of the two sees the other's write).
 * Metadata (leaders) is refreshed under the client's mutex over the one
 * control socket; endpoints copy it when its generation changes. */
#include "hw_client_int.h"
#include "hw_wire_auth.h"

void hw_client_set_busy_poll(hw_client *cl, int on)
{
	cl->busy_poll = on != 0;
}

void hw_client_set_produce_timing(hw_client *cl, int on) { cl->produce_timing = on != 0; }

void hw_client_set_spin_us(hw_client *cl, int32_t us)
{
	cl->spin_ns = us < 0 ? CLIENT_SPIN_NS : (int64_t)us * 1000;
}

int64_t hwc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A non-blocking UDP socket bound to cl's host (loopback for a cluster
 * directory, hiwater.*.listen's host in bootstrap mode) and port. fd or
 * -errno. */
static int udp_bind_at(const struct sockaddr_in *host, int port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int big = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	struct sockaddr_in a = *host;
	a.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int send_to(int fd, const struct sockaddr_in *a, const uint8_t *buf, size_t len)
{
	ssize_t n = sendto(fd, buf, len, 0, (const struct sockaddr *)a, sizeof(*a));
	if (n < 0)
		return -errno;
	return 0;
}

/* Control frames (under cl->mu once producer threads may run). */
static int encode_and_send(hw_client *cl, int fd, const struct sockaddr_in *to, hw_msg *m)
{
	m->src = cl->node;
	int n = hw_wire_encode(&cl->tx, m, NULL, cl->txbuf, HW_WIRE_MAX_FRAME);
	if (n < 0)
		return n;
	return send_to(fd, to, cl->txbuf, (size_t)n);
}

/* Data frames of endpoint ep over udp. */
int hwc_ep_encode_and_send(client_ep *ep, const struct sockaddr_in *to, hw_msg *m)
{
	m->src = ep->node;
	int n = hw_wire_encode(&ep->tx, m, NULL, ep->txbuf, HW_WIRE_MAX_FRAME);
	if (n < 0)
		return n;
	return send_to(ep->data_fd, to, ep->txbuf, (size_t)n);
}

/* ---- the node table --------------------------------------------------- */

client_node *hwc_node_find(client_node *nodes, int n, int32_t id)
{
	for (int i = 0; i < n; i++)
		if (nodes[i].id == id)
			return &nodes[i];
	return NULL;
}

/* The node's entry, added when new. NULL when the table is full. */
static client_node *node_get(hw_client *cl, int32_t id)
{
	client_node *nd = hwc_node_find(cl->nodes, cl->n_nodes, id);
	if (nd || cl->n_nodes == HW_CLIENT_MAX_NODES)
		return nd;
	nd = &cl->nodes[cl->n_nodes++];
	memset(nd, 0, sizeof(*nd));
	nd->id = id;
	return nd;
}

/* "udp:HOST:PORT[/P1/...]" -> the address of P0. 0 or -EINVAL. */
static int parse_udp_addr(const char *ep, struct sockaddr_in *out)
{
	char base[HW_ENDPOINT_MAX];
	snprintf(base, sizeof(base), "%s", ep);
	char *slash = strchr(base, '/');
	if (slash)
		*slash = 0;
	hw_endpoint e;
	if (hw_endpoint_parse(base, &e) || e.kind != HW_EP_UDP || !e.udp.sin_port)
		return -EINVAL;
	*out = e.udp;
	return 0;
}

/* What Metadata says about a node (its registered, advertised endpoints).
 * Called under cl->mu. */
void hwc_node_update(hw_client *cl, const hw_broker_info *b)
{
	client_node *nd = node_get(cl, b->id);
	if (!nd)
		return;
	struct sockaddr_in a;
	if (memchr(b->control_ep, 0, sizeof(b->control_ep)) && parse_udp_addr(b->control_ep, &a) == 0)
		nd->ctl = a;
	if (!b->data_ep[0] || !memchr(b->data_ep, 0, sizeof(b->data_ep)))
		return;
	if (parse_udp_addr(b->data_ep, &a) == 0)
		nd->data = a;
	if (strcmp(nd->data_ep, b->data_ep)) {
		snprintf(nd->data_ep, sizeof(nd->data_ep), "%s", b->data_ep);
		nd->ver++;
	}
}

int32_t hw_client_node_id(const hw_client *cl)
{
	return cl->node;
}


static int ep_init(hw_client *cl, int idx)
{
	client_ep *ep = &cl->ep[idx];
	ep->cl = cl;
	ep->idx = idx;
	hw_idle_init(&ep->idle, 0, 0, NULL, NULL, NULL);
	ep->data_fd = ep->wake_fd = -1;
	ep->rxbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	ep->txbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	ep->arena_mem = malloc(HW_WIRE_ARENA_SIZE);
	if (!ep->rxbuf || !ep->txbuf || !ep->arena_mem)
		return -ENOMEM;
	ep->tx.cluster_id = cl->cluster.cluster_id;
	ep->tx.incarnation = hw_wire_new_incarnation();
	ep->tx.seq = 0;
	ep->node = cl->node;
	if (strcmp(cl->cluster.transport, "dpdk") && idx > 0) {
		/* udp: a socket and a node id of our own (design note) */
		ep->node = cl->node + UDP_NODE_STRIDE * idx;
		int rc = udp_bind_at(&cl->bind_host, 0);
		if (rc < 0) {
			hw_cli_err("binding the data socket of producer %d: %s", idx, strerror(-rc));
			return rc;
		}
		ep->data_fd = rc;
	}
	return 0;
}

static void ep_close(client_ep *ep)
{
	if (ep->data_fd >= 0)
		close(ep->data_fd);
	if (ep->wake_fd >= 0)
		close(ep->wake_fd);
	hwc_inbox_close(ep);
	free(ep->rxbuf);
	free(ep->txbuf);
	free(ep->arena_mem);
	for (int i = 0; i < HW_CLIENT_MAX_PARTS; i++)
		hw_piece_reset(&ep->pasm[i]);
}

int hw_client_open(hw_client **out, const hw_cluster *c)
{
	return hw_client_open2(out, c, 1);
}

int hw_client_open2(hw_client **out, const hw_cluster *c, int with_data)
{
	return hw_client_open_producers(out, c, with_data, 1);
}

/* What both ways of opening share: buffers, endpoints' state. */
static int client_alloc(hw_client **out, int n_producers)
{
	hw_client *cl = calloc(1, sizeof(*cl));
	*out = cl;
	if (!cl)
		return -ENOMEM;
	cl->ctl_fd = cl->slot_fd = -1;
	cl->spin_ns = CLIENT_SPIN_NS;
	cl->n_ep = n_producers;
	pthread_mutex_init(&cl->mu, NULL);
	for (int i = 0; i < HW_CLIENT_MAX_PRODUCERS; i++)
		cl->ep[i].data_fd = cl->ep[i].wake_fd = -1;
	cl->rxbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	cl->txbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	cl->arena_mem = malloc(HW_WIRE_ARENA_SIZE);
	cl->bind_host.sin_family = AF_INET;
	cl->bind_host.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*out = cl;
	if (!cl->rxbuf || !cl->txbuf || !cl->arena_mem)
		return -ENOMEM;
	return 0;
}

static void client_start_wire(hw_client *cl)
{
	cl->tx.cluster_id = cl->cluster.cluster_id;
	cl->tx.incarnation = hw_wire_new_incarnation();
	cl->tx.seq = 0;
	cl->next_corr = (uint32_t)hwc_now_ns() & 0xffffff;
}

int hw_client_open_producers(hw_client **out, const hw_cluster *c, int with_data, int n_producers)
{
	if (c->rig[0]) /* from the client namespace, as another host would */
		return hw_rig_client_open(out, c, with_data, n_producers);
	int is_dpdk = !strcmp(c->transport, "dpdk");
	if (n_producers < 1 || n_producers > HW_CLIENT_MAX_PRODUCERS ||
	    (is_dpdk && n_producers > HW_DPDK_MAX_QUEUES))
		return -EINVAL;
	hw_client *cl;
	int rc = hw_cluster_auth_install(c);   /* before any frame: docs/security.md */
	if (rc)
		return rc;
	rc = client_alloc(&cl, n_producers);
	if (rc)
		goto fail;
	cl->cluster = *c;
	rc = hw_cluster_claim_slot(c, &cl->slot_fd);
	if (rc < 0) {
		hw_cli_err("no free client slot in %s (all %d in use)", c->dir, c->client_slots);
		goto fail;
	}
	cl->slot = rc;
	cl->node = HW_CLIENT_NODE_BASE + cl->slot;
	for (int i = 0; i < cl->n_ep; i++)
		if ((rc = ep_init(cl, i)))
			goto fail;
	rc = udp_bind_at(&cl->bind_host, hw_cluster_control_port(c, cl->node));
	if (rc < 0) {
		hw_cli_err("binding control port %d: %s", hw_cluster_control_port(c, cl->node),
			   strerror(-rc));
		goto fail;
	}
	cl->ctl_fd = rc;
	rc = udp_bind_at(&cl->bind_host, c->base_port + 200 + cl->slot);
	if (rc < 0) {
		hw_cli_err("binding data port %d: %s", c->base_port + 200 + cl->slot, strerror(-rc));
		goto fail;
	}
	cl->ep[0].data_fd = rc;
	if (with_data && is_dpdk && (rc = hwc_open_dpdk(cl)))
		goto fail;
	client_start_wire(cl);
	/* the nodes where the cluster directory puts them; Metadata may
	 * correct the data endpoints (hw_cluster.h) */
	cl->controller_id = 0;
	for (int i = 0; i <= c->brokers && i < HW_CLIENT_MAX_NODES; i++) {
		client_node *nd = node_get(cl, i);
		nd->ctl = cl->bind_host;
		nd->ctl.sin_port = htons((uint16_t)hw_cluster_control_port(c, i));
		if (i > 0) {
			nd->data = cl->bind_host;
			nd->data.sin_port = htons((uint16_t)(c->base_port + 100 + i));
		}
	}
	/* ZooKeeper mode: every controller; the active one is asked for */
	cl->n_controllers = c->controllers;
	for (int k = 0; k < c->controllers - 1 && cl->n_nodes < HW_CLIENT_MAX_NODES; k++) {
		client_node *nd = node_get(cl, HW_CLUSTER_CTRL_NODE_BASE + k);
		nd->ctl = cl->bind_host;
		nd->ctl.sin_port = htons((uint16_t)hw_cluster_control_port(c, HW_CLUSTER_CTRL_NODE_BASE + k));
	}
	for (int i = 0; i < cl->n_ep; i++)
		hwc_ep_sync(&cl->ep[i]);
	*out = cl;
	return 0;
fail:
	hw_client_close(cl);
	return rc;
}

/* Bootstrap: ask the node at cl->boot, whatever its id, for Metadata
 * (HW_WIRE_DST_ANY): it names itself (src), the controller and every
 * broker with their advertised endpoints. A broker's answer carries the
 * controller's control endpoint as an entry without a data endpoint;
 * the controller's is the address we asked. */
typedef struct boot_ctx {
	hw_client *cl;
	int32_t responder;
} boot_ctx;

static void on_boot_metadata(void *arg, const hw_msg *m)
{
	boot_ctx *x = arg;
	const hw_metadata_resp *r = m->u.other;
	x->responder = m->src;
	x->cl->controller_id = r->controller_id;
	for (int i = 0; i < r->n_brokers; i++)
		hwc_node_update(x->cl, &r->brokers[i]);
	client_node *self = node_get(x->cl, m->src);
	if (self)
		self->ctl = x->cl->boot; /* the address that answered */
	atomic_fetch_add_explicit(&x->cl->topic_gen, 1, memory_order_release);
}


static int bootstrap_metadata(hw_client *cl, const char *bootstrap, int timeout_ms)
{
	hw_topic_name t;
	memset(&t, 0, sizeof(t));
	snprintf(t.s, sizeof(t.s), "__hiwater_brokers"); /* names no topic: just the nodes */
	hw_metadata_req mr = {.n_topics = 1, .topics = &t};
	hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
	boot_ctx x = {.cl = cl, .responder = -1};
	int rc = hwc_call_locked(cl, HW_WIRE_DST_ANY, &m, HW_MSG_METADATA_RESP, timeout_ms,
				    on_boot_metadata, &x);
	if (rc) {
		hw_cli_err("the bootstrap server %s did not answer in %d ms: %s", bootstrap, timeout_ms,
			   strerror(-rc));
		return rc;
	}
	client_node *ctrl = hwc_node_find(cl->nodes, cl->n_nodes, cl->controller_id);
	if (!ctrl || !ctrl->ctl.sin_port) {
		hw_cli_err("the bootstrap server %s (node %d) does not know the controller's address yet",
			   bootstrap, x.responder);
		return -EHOSTUNREACH;
	}
	return 0;
}

/* The key of --command-config's hiwater.cluster.secret.file (or none). 0,
 * or a negative errno with the message printed. */
static int client_install_key(const hw_client_config *cfg)
{
	char err[700];
	uint8_t key[HW_WIRE_AUTH_KEY_LEN];
	if (cfg->auth_none)
		return hw_wire_auth_set_key(NULL, 0);
	if (!cfg->secret_file[0]) {
		hw_cli_err("--bootstrap-server needs --command-config naming hiwater.cluster.secret.file "
			   "(or hiwater.auth=none for a cluster without authentication)");
		return -EINVAL;
	}
	int rc = hw_wire_auth_secret_load(cfg->secret_file, key, err, sizeof err);
	if (rc) {
		hw_cli_err("cluster secret: %s", err);
		return rc;
	}
	hw_wire_auth_set_key(key, sizeof key);
	memset(key, 0, sizeof key);
	return 0;
}

int hw_client_open_bootstrap(hw_client **out, const char *bootstrap, const hw_client_config *cfg,
			     int with_data, int n_producers)
{
	hw_client_config defaults;
	if (!cfg) {
		hw_client_config_defaults(&defaults);
		cfg = &defaults;
	}
	char boot[HW_ENDPOINT_MAX];
	hw_endpoint be, cl_ep, data_ep;
	if (hw_client_parse_bootstrap(bootstrap, boot, sizeof(boot)) || hw_endpoint_parse(boot, &be) ||
	    hw_endpoint_parse(cfg->control_listen, &cl_ep) || cl_ep.kind != HW_EP_UDP ||
	    hw_endpoint_parse(cfg->data_listen, &data_ep) || data_ep.kind != HW_EP_UDP) {
		hw_cli_err("bad --bootstrap-server '%s' (want HOST:PORT) or listen address", bootstrap);
		return -EINVAL;
	}
	if (n_producers < 1 || n_producers > HW_CLIENT_MAX_PRODUCERS ||
	    (cfg->transport_dpdk && n_producers > HW_DPDK_MAX_QUEUES))
		return -EINVAL;
	hw_client *cl;
	int rc = client_install_key(cfg);      /* before any frame: docs/security.md */
	if (rc)
		return rc;
	rc = client_alloc(&cl, n_producers);
	if (rc)
		goto fail;
	cl->bootstrap = 1;
	cl->ccfg = *cfg;
	cl->boot = be.udp;
	snprintf(cl->cluster.transport, sizeof(cl->cluster.transport), "%s",
		 cfg->transport_dpdk ? "dpdk" : "udp");
	cl->cluster.cluster_id = cfg->cluster_id;
	cl->node = cfg->node_id;
	if (cl->node < 0) {
		uint32_t r = 0;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint32_t)hwc_now_ns() ^ ((uint32_t)getpid() << 12);
		/* room above for the udp producers' node + 64 * p */
		cl->node = HW_CLIENT_NODE_ID_MIN + (int32_t)(r % 1000000000u);
	}
	/* our data sockets: the host of hiwater.data.listen */
	cl->bind_host = data_ep.udp;
	cl->bind_host.sin_port = 0;
	for (int i = 0; i < cl->n_ep; i++)
		if ((rc = ep_init(cl, i)))
			goto fail;
	rc = udp_bind_at(&cl_ep.udp, ntohs(cl_ep.udp.sin_port));
	if (rc < 0) {
		hw_cli_err("binding the control socket %s (hiwater.control.listen): %s", cfg->control_listen,
			   strerror(-rc));
		goto fail;
	}
	cl->ctl_fd = rc;
	rc = udp_bind_at(&data_ep.udp, ntohs(data_ep.udp.sin_port));
	if (rc < 0) {
		hw_cli_err("binding the data socket %s (hiwater.data.listen): %s", cfg->data_listen,
			   strerror(-rc));
		goto fail;
	}
	cl->ep[0].data_fd = rc;
	client_start_wire(cl);
	if ((rc = bootstrap_metadata(cl, boot + 4, 5000)))
		goto fail;
	if (with_data && cfg->transport_dpdk && (rc = hwc_open_dpdk_any(cl)))
		goto fail;
	for (int i = 0; i < cl->n_ep; i++)
		hwc_ep_sync(&cl->ep[i]);
	*out = cl;
	return 0;
fail:
	hw_client_close(cl);
	return rc;
}

int hw_client_open_cli(hw_client **out, const char *dir, const char *bootstrap,
		       const char *command_config, int with_data, int n_producers)
{
	*out = NULL;
	if (!bootstrap) {
		if (command_config) {
			hw_cli_err("--command-config needs --bootstrap-server HOST:PORT");
			return HW_CLI_EXIT_USAGE;
		}
		hw_cluster c;
		int rc = hw_cluster_load(&c, dir);
		if (rc == -ENOENT) {
			hw_cli_err("no cluster in %s (run `hiwater cluster up`, or give --bootstrap-server)", dir);
			return HW_CLI_EXIT_NO_CLUSTER;
		}
		if (rc)
			return HW_CLI_EXIT_ERROR;
		rc = hw_client_open_producers(out, &c, with_data, n_producers);
		return rc == 0 ? HW_CLI_EXIT_OK : rc == -EINVAL ? HW_CLI_EXIT_USAGE : HW_CLI_EXIT_ERROR;
	}
	hw_client_config cfg;
	char err[512];
	hw_client_config_defaults(&cfg);
	if (command_config && hw_client_config_load(&cfg, command_config, err, sizeof(err))) {
		hw_cli_err("--command-config: %s", err);
		return HW_CLI_EXIT_USAGE;
	}
	char boot[HW_ENDPOINT_MAX];
	if (hw_client_parse_bootstrap(bootstrap, boot, sizeof(boot))) {
		hw_cli_err("--bootstrap-server '%s': expected HOST:PORT (HOST an IPv4 address)", bootstrap);
		return HW_CLI_EXIT_USAGE;
	}
	int rc = hw_client_open_bootstrap(out, bootstrap, &cfg, with_data, n_producers);
	if (rc == -ETIMEDOUT || rc == -EHOSTUNREACH)
		return HW_CLI_EXIT_NO_CLUSTER;
	return rc == 0 ? HW_CLI_EXIT_OK : rc == -EINVAL ? HW_CLI_EXIT_USAGE : HW_CLI_EXIT_ERROR;
}

int hw_client_nodes(const hw_client *cl, int32_t *ids, struct sockaddr_in *ctl, int cap)
{
	int n = 0;
	for (int i = 0; i < cl->n_nodes && n < cap; i++) {
		if (!cl->nodes[i].ctl.sin_port)
			continue;
		ids[n] = cl->nodes[i].id;
		ctl[n++] = cl->nodes[i].ctl;
	}
	return n;
}

int32_t hw_client_controller_id(const hw_client *cl)
{
	return cl->controller_id;
}

void hw_client_close(hw_client *cl)
{
	if (!cl)
		return;
	int dpdk = 0;
	/* queue 0 last: it owns the ports the others use */
	for (int i = cl->n_ep - 1; i >= 0; i--)
		if (cl->ep[i].dpdk) {
			hw_dpdk_destroy(cl->ep[i].dpdk);
			dpdk = 1;
		}
	if (dpdk)
		hw_dpdk_eal_cleanup();
	for (int i = 0; i < cl->n_ep; i++)
		ep_close(&cl->ep[i]);
	if (cl->ctl_fd >= 0)
		close(cl->ctl_fd);
	if (cl->slot_fd >= 0)
		close(cl->slot_fd); /* releases the slot's flock */
	pthread_mutex_destroy(&cl->mu);
	free(cl->rxbuf);
	free(cl->txbuf);
	free(cl->arena_mem);
	free(cl);
}

/* Receive one frame from fd into rxbuf/arena_mem and decode it. 1 with m and
 * h set, 0 when nothing is waiting, 0 also for a frame that was dropped
 * (counted in st). */
int hwc_recv_one(const hw_cluster *c, int32_t node, int fd, uint8_t *rxbuf, uint8_t *arena_mem,
		    hw_wire_stats *st, hw_wire_arena *arena, hw_wire_hdr *h, hw_msg *m)
{
	ssize_t n = recv(fd, rxbuf, HW_WIRE_MAX_FRAME + 64, 0);
	if (n < 0)
		return 0;
	hw_wire_drop why;
	hw_wire_arena_init(arena, arena_mem, HW_WIRE_ARENA_SIZE);
	if (hw_wire_decode(rxbuf, (size_t)n, c->cluster_id, arena, h, m, &why, st))
		return 0;
	if (h->dst != node)
		return 0;
	return 1;
}

int hwc_wait_readable(int fd1, int fd2, int64_t timeout_ns)
{
	struct pollfd p[2] = {{.fd = fd1, .events = POLLIN}, {.fd = fd2, .events = POLLIN}};
	struct timespec ts = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
	return ppoll(p, fd2 >= 0 ? 2 : 1, &ts, NULL);
}

int hwc_call_locked(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type,
		    int timeout_ms, void (*fn)(void *arg, const hw_msg *resp), void *arg)
{
	req->dst = dst;
	req->correlation_id = ++cl->next_corr;
	struct sockaddr_in to;
	if (dst == HW_WIRE_DST_ANY) {
		to = cl->boot;
	} else {
		const client_node *nd = hwc_node_find(cl->nodes, cl->n_nodes, dst);
		if (!nd || !nd->ctl.sin_port)
			return -EHOSTUNREACH;
		to = nd->ctl;
	}
	int64_t deadline = hwc_now_ns() + (int64_t)timeout_ms * 1000000;
	int64_t retry_ns = 200000000, next_send = 0;
	for (;;) {
		int64_t now = hwc_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (now >= next_send) {
			int rc = encode_and_send(cl, cl->ctl_fd, &to, req);
			if (rc == -EINVAL || rc == -EMSGSIZE)
				return rc;
			next_send = now + retry_ns;
		}
		int64_t wait = next_send < deadline ? next_send - now : deadline - now;
		if (hwc_wait_readable(cl->ctl_fd, -1, wait) <= 0)
			continue;
		hw_wire_arena arena;
		hw_wire_hdr h;
		hw_msg m;
		while (hwc_recv_one(&cl->cluster, cl->node, cl->ctl_fd, cl->rxbuf, cl->arena_mem, &cl->stats,
				&arena, &h, &m)) {
			if (m.type == resp_type && m.correlation_id == req->correlation_id) {
				fn(arg, &m);
				return 0;
			}
		}
	}
}
