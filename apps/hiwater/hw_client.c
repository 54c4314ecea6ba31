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
#include "hw_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw_dpdk.h"
#include "hw_err.h"
#include "hw_netaddr.h"
#include "hw_netconf.h"
#include "hw_wire.h"

/* After the last packet the client keeps polling (yielding) this long
 * by default, then sleeps on its memif doorbell, like the brokers'
 * hiwater.idle.spin.us (hw_client_set_spin_us changes it). */
#define CLIENT_SPIN_NS 20000

#define FWD_RING_CAP 1024u          /* forwarded responses in flight per (from, to) */
#define UDP_NODE_STRIDE 64          /* udp endpoint p: slot node + 64 * p */

/* A response received by another producer's endpoint. */
typedef struct fwd_entry {
	hw_bench_resp r;
	uint8_t *records;             /* owned copy of r.records (fetch) */
} fwd_entry;

/* Single producer (the endpoint that received) / single consumer (the
 * endpoint it is for). */
typedef struct fwd_ring {
	_Alignas(64) _Atomic uint32_t head;   /* consumer's */
	_Alignas(64) _Atomic uint32_t tail;   /* producer's */
	fwd_entry e[FWD_RING_CAP];
} fwd_ring;

/* A node of the cluster as Metadata names it (slots only appended, so an
 * index is stable). */
typedef struct client_node {
	int32_t id;
	struct sockaddr_in ctl;       /* control endpoint; sin_port 0: unknown */
	struct sockaddr_in data;      /* udp data endpoint (P0); sin_port 0: unknown */
	char data_ep[HW_ENDPOINT_MAX]; /* as registered ("dpdk:ip=.." over dpdk) */
	unsigned ver;                 /* bumped when data_ep changes */
} client_node;

typedef struct client_ep {
	hw_client *cl;
	int idx;
	int32_t node;                 /* src of our data frames */
	int data_fd;                  /* udp data endpoint */
	hw_dpdk *dpdk;                /* dpdk instance of queue idx */
	hw_wire_tx tx;                /* udp data frames */
	uint8_t *rxbuf, *txbuf, *arena_mem;
	hw_wire_stats stats;
	/* this endpoint's copy of the topic's leaders (hw_client.topic) */
	hw_client_topic topic;
	client_node nodes[HW_CLIENT_MAX_NODES];
	int n_nodes;
	unsigned routed_ver[HW_CLIENT_MAX_NODES]; /* dpdk: node version our route has, 0 none */
	unsigned topic_gen;
	/* the poll in progress (the DPDK transport delivers via a callback) */
	hw_bench_resp_fn poll_fn;
	void *poll_arg;
	int poll_delivered, poll_refresh;
	hw_bench_io io;
	/* forwarding between endpoints (dpdk with several producers) */
	fwd_ring *in;                 /* in[j]: from endpoint j to us */
	_Atomic int sleeping;         /* about to sleep / sleeping on the doorbell */
	int wake_fd;                  /* unix datagram socket to ring others' bells */
	struct sockaddr_un bell;      /* our queue's doorbell socket */
	int have_bell;
	uint64_t fwd_out, fwd_dropped;
} client_ep;

struct hw_client {
	hw_cluster cluster;
	int slot, slot_fd;
	int32_t node;
	int ctl_fd;                   /* control endpoint */
	hw_wire_tx tx;                /* control frames */
	uint32_t next_corr;
	pthread_mutex_t mu;           /* control socket, topic, nodes, last_refresh_ns */
	hw_client_topic topic;
	int have_topic;
	int64_t last_refresh_ns;
	/* where the nodes are: from the cluster directory, or from Metadata
	 * of the --bootstrap-server node (bootstrap mode) */
	int bootstrap;                /* opened with hw_client_open_bootstrap */
	hw_client_config ccfg;        /* bootstrap mode: --command-config */
	struct sockaddr_in boot;      /* bootstrap mode: --bootstrap-server */
	struct sockaddr_in bind_host; /* our sockets' host (port 0) */
	int32_t controller_id;
	client_node nodes[HW_CLIENT_MAX_NODES];
	int n_nodes;
	/* bumped (release, under mu) after topic/nodes change; endpoints
	 * read it (acquire) before each send and copy on a change */
	_Atomic unsigned topic_gen;
	uint8_t *rxbuf, *txbuf, *arena_mem;
	hw_wire_stats stats;
	int busy_poll;                /* never yield or sleep while polling */
	int64_t spin_ns;              /* poll (yielding) this long before sleeping */
	int n_ep;
	client_ep ep[HW_CLIENT_MAX_PRODUCERS];
	int collect;                  /* all_io polling: deliver everything here */
	hw_bench_io all_io;
};

void hw_client_set_busy_poll(hw_client *cl, int on)
{
	cl->busy_poll = on != 0;
}

void hw_client_set_spin_us(hw_client *cl, int32_t us)
{
	cl->spin_ns = us < 0 ? CLIENT_SPIN_NS : (int64_t)us * 1000;
}

static int64_t now_ns(void)
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
static int ep_encode_and_send(client_ep *ep, const struct sockaddr_in *to, hw_msg *m)
{
	m->src = ep->node;
	int n = hw_wire_encode(&ep->tx, m, NULL, ep->txbuf, HW_WIRE_MAX_FRAME);
	if (n < 0)
		return n;
	return send_to(ep->data_fd, to, ep->txbuf, (size_t)n);
}

/* ---- the node table --------------------------------------------------- */

static client_node *node_find(client_node *nodes, int n, int32_t id)
{
	for (int i = 0; i < n; i++)
		if (nodes[i].id == id)
			return &nodes[i];
	return NULL;
}

/* The node's entry, added when new. NULL when the table is full. */
static client_node *node_get(hw_client *cl, int32_t id)
{
	client_node *nd = node_find(cl->nodes, cl->n_nodes, id);
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
static void node_update(hw_client *cl, const hw_broker_info *b)
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


static void on_dpdk_msg(void *ctx, const hw_msg *m);
static int wait_links(hw_client *cl);
static void ep_sync(client_ep *ep);

/* The client side of this slot's memif links (one per broker), EAL with
 * --no-huge and a file prefix unique to the cluster and slot, one hw_dpdk
 * instance (queue) per endpoint. Waits up to 5 s for the links to come up. */
static int open_dpdk(hw_client *cl)
{
	char sockdir[64], eal[4096];
	hw_dpdk_local_peer peers[HW_CLUSTER_MAX_BROKERS];
	int n_peers = 0;
	hw_cluster_memif_dir(&cl->cluster, sockdir, sizeof(sockdir));
	/* each further queue has its own mempools (~35 MB) */
	int rc = hw_dpdk_local_cluster_args(sockdir, cl->node, cl->cluster.brokers,
					    cl->cluster.client_slots, 256 + 64 * (cl->n_ep - 1), eal,
					    sizeof(eal) - 64, peers, HW_CLUSTER_MAX_BROKERS, &n_peers);
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
	char filtered[4096];
	size_t off = 0;
	filtered[0] = 0;
	for (char *save, *tok = strtok_r(eal, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int b;
		if (sscanf(tok, "--vdev=net_memif_b%d,", &b) == 1 && b >= 1 && b <= cl->cluster.brokers &&
		    !alive[b])
			continue;
		off += (size_t)snprintf(filtered + off, sizeof(filtered) - off, "%s%s", off ? " " : "", tok);
	}
	int k = 0;
	for (int i = 0; i < n_peers; i++)
		if (peers[i].node > cl->cluster.brokers || alive[peers[i].node])
			peers[k++] = peers[i];
	n_peers = k;
	snprintf(eal, sizeof(eal), "%s --log-level=lib.eal:error", filtered);
	rc = hw_dpdk_eal_init(eal);
	if (rc) {
		hw_cli_err("DPDK EAL init failed (%s): %s", eal, strerror(-rc));
		return rc;
	}
	/* queue 0 first: it configures and starts the ports with n_ep queues */
	for (int q = 0; q < cl->n_ep; q++) {
		client_ep *ep = &cl->ep[q];
		hw_dpdk_cfg dc = {.cluster_id = cl->cluster.cluster_id, .self_id = cl->node,
				  .on_msg = on_dpdk_msg, .ctx = ep, .queue = (uint16_t)q,
				  .n_queues = (uint16_t)cl->n_ep, .wire_stream = (uint8_t)q};
		ep->dpdk = hw_dpdk_create(&dc, &rc);
		if (!ep->dpdk) {
			hw_cli_err("DPDK ports for slot %d, queue %d: %s", cl->slot, q, strerror(-rc));
			return rc ? rc : -ENODEV;
		}
		for (int i = 0; i < n_peers; i++)
			if ((rc = hw_dpdk_add_neighbour(ep->dpdk, peers[i].node, peers[i].endpoint))) {
				hw_cli_err("neighbour %d (%s): %s", peers[i].node, peers[i].endpoint,
					   strerror(-rc));
				return rc;
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
			/* fwd_ring is 64-byte aligned (head and tail on their own lines) */
			ep->in = aligned_alloc(64, (size_t)cl->n_ep * sizeof(fwd_ring));
			if (!ep->in)
				return -ENOMEM;
			memset(ep->in, 0, (size_t)cl->n_ep * sizeof(fwd_ring));
		}
	}
	return wait_links(cl);
}

/* Every port's link up within 5 s. 0 or -ETIMEDOUT (message printed). */
static int wait_links(hw_client *cl)
{
	int64_t deadline = now_ns() + 5000000000LL;
	hw_dpdk *d0 = cl->ep[0].dpdk;
	for (;;) {
		int up = 0, n = hw_dpdk_port_count(d0);
		for (int i = 0; i < n; i++)
			up += hw_dpdk_link_up(d0, i) > 0;
		if (up == n)
			return 0;
		if (now_ns() > deadline) {
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
 * come from Metadata (their registered dpdk:ip=..,udp=..: ep_sync); the
 * transport ARPs for their MACs. */
static int open_dpdk_any(hw_client *cl)
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
				  .on_msg = on_dpdk_msg, .ctx = ep, .queue = (uint16_t)q,
				  .n_queues = (uint16_t)cl->n_ep, .wire_stream = (uint8_t)q,
				  .ip = ip.s_addr, .udp_port = (uint16_t)cc->dpdk_udp_port};
		ep->dpdk = hw_dpdk_create(&dc, &rc);
		if (!ep->dpdk) {
			hw_cli_err("DPDK ports, queue %d: %s", q, strerror(-rc));
			return rc ? rc : -ENODEV;
		}
		if (cl->n_ep > 1) {
			/* no doorbell off memif: a forwarded answer waits for
			 * the owner's next poll (its sleep is capped at 1 ms) */
			ep->in = aligned_alloc(64, (size_t)cl->n_ep * sizeof(fwd_ring));
			if (!ep->in)
				return -ENOMEM;
			memset(ep->in, 0, (size_t)cl->n_ep * sizeof(fwd_ring));
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
static void ep_add_dpdk_routes(client_ep *ep)
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

static int ep_init(hw_client *cl, int idx)
{
	client_ep *ep = &cl->ep[idx];
	ep->cl = cl;
	ep->idx = idx;
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
	if (ep->in) {
		for (int j = 0; j < ep->cl->n_ep; j++) {
			fwd_ring *r = &ep->in[j];
			for (uint32_t h = r->head; h != r->tail; h++)
				free(r->e[h % FWD_RING_CAP].records);
		}
		free(ep->in);
	}
	free(ep->rxbuf);
	free(ep->txbuf);
	free(ep->arena_mem);
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
	cl->next_corr = (uint32_t)now_ns() & 0xffffff;
}

int hw_client_open_producers(hw_client **out, const hw_cluster *c, int with_data, int n_producers)
{
	int is_dpdk = !strcmp(c->transport, "dpdk");
	if (n_producers < 1 || n_producers > HW_CLIENT_MAX_PRODUCERS ||
	    (is_dpdk && n_producers > HW_DPDK_MAX_QUEUES))
		return -EINVAL;
	hw_client *cl;
	int rc = client_alloc(&cl, n_producers);
	if (rc)
		goto fail;
	cl->cluster = *c;
	rc = hw_cluster_claim_slot(c, &cl->slot_fd);
	if (rc < 0) {
		hw_cli_err("no free client slot in %s (all %d in use)", c->dir, c->client_slots);
		goto fail;
	}
	cl->slot = rc;
	cl->node = HW_CLUSTER_CLIENT_NODE_BASE + cl->slot;
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
	if (with_data && is_dpdk && (rc = open_dpdk(cl)))
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
	for (int i = 0; i < cl->n_ep; i++)
		ep_sync(&cl->ep[i]);
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
		node_update(x->cl, &r->brokers[i]);
	client_node *self = node_get(x->cl, m->src);
	if (self)
		self->ctl = x->cl->boot; /* the address that answered */
	atomic_fetch_add_explicit(&x->cl->topic_gen, 1, memory_order_release);
}

static int client_call_locked(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type,
			      int timeout_ms, void (*fn)(void *arg, const hw_msg *resp), void *arg);

static int bootstrap_metadata(hw_client *cl, const char *bootstrap, int timeout_ms)
{
	hw_topic_name t;
	memset(&t, 0, sizeof(t));
	snprintf(t.s, sizeof(t.s), "__hiwater_brokers"); /* names no topic: just the nodes */
	hw_metadata_req mr = {.n_topics = 1, .topics = &t};
	hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
	boot_ctx x = {.cl = cl, .responder = -1};
	int rc = client_call_locked(cl, HW_WIRE_DST_ANY, &m, HW_MSG_METADATA_RESP, timeout_ms,
				    on_boot_metadata, &x);
	if (rc) {
		hw_cli_err("the bootstrap server %s did not answer in %d ms: %s", bootstrap, timeout_ms,
			   strerror(-rc));
		return rc;
	}
	client_node *ctrl = node_find(cl->nodes, cl->n_nodes, cl->controller_id);
	if (!ctrl || !ctrl->ctl.sin_port) {
		hw_cli_err("the bootstrap server %s (node %d) does not know the controller's address yet",
			   bootstrap, x.responder);
		return -EHOSTUNREACH;
	}
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
	int rc = client_alloc(&cl, n_producers);
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
			r = (uint32_t)now_ns() ^ ((uint32_t)getpid() << 12);
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
	if (with_data && cfg->transport_dpdk && (rc = open_dpdk_any(cl)))
		goto fail;
	for (int i = 0; i < cl->n_ep; i++)
		ep_sync(&cl->ep[i]);
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
static int recv_one(const hw_cluster *c, int32_t node, int fd, uint8_t *rxbuf, uint8_t *arena_mem,
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

static int wait_readable(int fd1, int fd2, int64_t timeout_ns)
{
	struct pollfd p[2] = {{.fd = fd1, .events = POLLIN}, {.fd = fd2, .events = POLLIN}};
	struct timespec ts = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
	return ppoll(p, fd2 >= 0 ? 2 : 1, &ts, NULL);
}

static int client_call_locked(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type,
			      int timeout_ms, void (*fn)(void *arg, const hw_msg *resp), void *arg)
{
	req->dst = dst;
	req->correlation_id = ++cl->next_corr;
	struct sockaddr_in to;
	if (dst == HW_WIRE_DST_ANY) {
		to = cl->boot;
	} else {
		const client_node *nd = node_find(cl->nodes, cl->n_nodes, dst);
		if (!nd || !nd->ctl.sin_port)
			return -EHOSTUNREACH;
		to = nd->ctl;
	}
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
	int64_t retry_ns = 200000000, next_send = 0;
	for (;;) {
		int64_t now = now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (now >= next_send) {
			int rc = encode_and_send(cl, cl->ctl_fd, &to, req);
			if (rc == -EINVAL || rc == -EMSGSIZE)
				return rc;
			next_send = now + retry_ns;
		}
		int64_t wait = next_send < deadline ? next_send - now : deadline - now;
		if (wait_readable(cl->ctl_fd, -1, wait) <= 0)
			continue;
		hw_wire_arena arena;
		hw_wire_hdr h;
		hw_msg m;
		while (recv_one(&cl->cluster, cl->node, cl->ctl_fd, cl->rxbuf, cl->arena_mem, &cl->stats,
				&arena, &h, &m)) {
			if (m.type == resp_type && m.correlation_id == req->correlation_id) {
				fn(arg, &m);
				return 0;
			}
		}
	}
}

int hw_client_call(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type, int timeout_ms,
		   void (*fn)(void *arg, const hw_msg *resp), void *arg)
{
	/* producer threads may refresh metadata at the same time */
	pthread_mutex_lock(&cl->mu);
	int rc = client_call_locked(cl, dst, req, resp_type, timeout_ms, fn, arg);
	pthread_mutex_unlock(&cl->mu);
	return rc;
}

/* ---- topic metadata ------------------------------------------------------ */

typedef struct meta_ctx {
	hw_client *cl;
	const char *name;
	int found;
	int16_t error;
	int all_leaders;
} meta_ctx;

/* Called under cl->mu (inside hw_client_call). */
static void on_metadata(void *arg, const hw_msg *m)
{
	meta_ctx *x = arg;
	const hw_metadata_resp *r = m->u.other;
	x->error = r->error;
	for (int i = 0; i < r->n_brokers; i++)
		node_update(x->cl, &r->brokers[i]);
	for (int i = 0; i < r->n_topics; i++) {
		const hw_topic_meta *t = &r->topics[i];
		if (strcmp(t->name, x->name))
			continue;
		x->error = t->error;
		if (t->error != HW_ERR_NONE)
			break;
		hw_client_topic *ct = &x->cl->topic;
		snprintf(ct->name, sizeof(ct->name), "%s", t->name);
		ct->topic_id = t->topic_id;
		ct->n_parts = t->n_parts < HW_CLIENT_MAX_PARTS ? t->n_parts : HW_CLIENT_MAX_PARTS;
		x->all_leaders = 1;
		for (uint32_t p = 0; p < ct->n_parts; p++) {
			ct->leader[p] = -1;
			ct->leader_epoch[p] = -1;
		}
		for (uint32_t p = 0; p < t->n_parts; p++) {
			const hw_partition_meta *pm = &t->parts[p];
			if (pm->partition >= ct->n_parts)
				continue;
			ct->leader[pm->partition] = pm->leader;
			ct->leader_epoch[pm->partition] = pm->leader_epoch;
		}
		for (uint32_t p = 0; p < ct->n_parts; p++)
			if (ct->leader[p] < 0)
				x->all_leaders = 0;
		x->found = 1;
	}
	/* release: the topic and ports written above are visible to an
	 * endpoint that reads the new generation with acquire (ep_sync) */
	atomic_fetch_add_explicit(&x->cl->topic_gen, 1, memory_order_release);
}

static int refresh_metadata(hw_client *cl, const char *name, int timeout_ms, meta_ctx *x)
{
	hw_topic_name tn;
	snprintf(tn.s, sizeof(tn.s), "%s", name);
	hw_metadata_req mr = {.n_topics = 1, .topics = &tn};
	hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
	*x = (meta_ctx){.cl = cl, .name = name, .error = HW_ERR_NONE};
	return client_call_locked(cl, cl->controller_id, &m, HW_MSG_METADATA_RESP, timeout_ms, on_metadata, x);
}

int hw_client_use_topic(hw_client *cl, const char *name, int timeout_ms)
{
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
	for (;;) {
		meta_ctx x;
		int left = (int)((deadline - now_ns()) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		pthread_mutex_lock(&cl->mu);
		cl->last_refresh_ns = now_ns();
		int rc = refresh_metadata(cl, name, left, &x);
		pthread_mutex_unlock(&cl->mu);
		if (rc)
			return rc;
		if (x.found && x.all_leaders) {
			cl->have_topic = 1;
			return 0;
		}
		if (!x.found && x.error == HW_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
			hw_cli_err("topic '%s' does not exist", name);
			return -ENOENT;
		}
		usleep(50000); /* partitions without a leader yet: ask again */
	}
}

const hw_client_topic *hw_client_topic_info(const hw_client *cl)
{
	return &cl->topic;
}

/* ---- data path ------------------------------------------------------------ */

/* Copy the client's topic and ports when they changed (ep's thread). */
static void ep_sync(client_ep *ep)
{
	hw_client *cl = ep->cl;
	/* acquire: pairs with the release in on_metadata */
	unsigned g = atomic_load_explicit(&cl->topic_gen, memory_order_acquire);
	if (g == ep->topic_gen)
		return;
	pthread_mutex_lock(&cl->mu);
	ep->topic = cl->topic;
	memcpy(ep->nodes, cl->nodes, (size_t)cl->n_nodes * sizeof(cl->nodes[0]));
	ep->n_nodes = cl->n_nodes;
	ep->topic_gen = atomic_load_explicit(&cl->topic_gen, memory_order_relaxed);
	pthread_mutex_unlock(&cl->mu);
	if (cl->bootstrap && ep->dpdk)
		ep_add_dpdk_routes(ep);
}

/* The data address of the partition's leader (udp), or NULL over dpdk
 * (the transport routes by node id). 0, -EINVAL (no such partition),
 * -EHOSTUNREACH (no leader, or a leader Metadata gave no address for). */
static int leader_addr(client_ep *ep, uint32_t partition, const struct sockaddr_in **out)
{
	ep_sync(ep);
	if (partition >= ep->topic.n_parts)
		return -EINVAL;
	int32_t l = ep->topic.leader[partition];
	const client_node *nd = l >= 0 ? node_find(ep->nodes, ep->n_nodes, l) : NULL;
	*out = NULL;
	if (ep->dpdk)
		return nd ? 0 : -EHOSTUNREACH;
	if (!nd || !nd->data.sin_port)
		return -EHOSTUNREACH;
	*out = &nd->data;
	return 0;
}

/* A broker told us it is not the leader (or the leader died): look again,
 * at most every 100 ms (over all producers). */
static void maybe_refresh(hw_client *cl)
{
	pthread_mutex_lock(&cl->mu);
	if (now_ns() - cl->last_refresh_ns >= 100000000) {
		meta_ctx x;
		char name[HW_TOPIC_NAME_MAX];
		snprintf(name, sizeof(name), "%s", cl->topic.name);
		cl->last_refresh_ns = now_ns();
		refresh_metadata(cl, name, 300, &x);
	}
	pthread_mutex_unlock(&cl->mu);
}

static int data_send(client_ep *ep, const struct sockaddr_in *to, hw_msg *m)
{
	if (!ep->dpdk)
		return ep_encode_and_send(ep, to, m);
	m->src = ep->node;
	int rc = hw_net_send(hw_dpdk_net(ep->dpdk), m);
	hw_dpdk_flush(ep->dpdk);
	return rc;
}

static int io_send_produce(void *ctx, uint32_t partition, int16_t acks, int32_t timeout_ms,
			   const uint8_t *records, uint32_t len, uint32_t corr)
{
	client_ep *ep = ctx;
	const struct sockaddr_in *to;
	int rc = leader_addr(ep, partition, &to);
	if (rc < 0) {
		maybe_refresh(ep->cl);
		return rc;
	}
	hw_msg m = {.type = HW_MSG_PRODUCE, .dst = ep->topic.leader[partition], .correlation_id = corr};
	m.u.produce = (hw_produce_req){.acks = acks, .timeout_ms = timeout_ms,
				       .tp = {ep->topic.topic_id, partition},
				       .records = records, .records_len = len};
	return data_send(ep, to, &m);
}

static int io_send_fetch(void *ctx, uint32_t partition, int64_t offset, int32_t max_bytes,
			 uint32_t corr)
{
	client_ep *ep = ctx;
	const struct sockaddr_in *to;
	int rc = leader_addr(ep, partition, &to);
	if (rc < 0) {
		maybe_refresh(ep->cl);
		return rc;
	}
	hw_fetch_part fp = {.tp = {ep->topic.topic_id, partition}, .fetch_offset = offset,
			    .current_leader_epoch = -1, .last_fetched_epoch = -1,
			    .log_start_offset = -1, .partition_max_bytes = max_bytes};
	hw_msg m = {.type = HW_MSG_FETCH, .dst = ep->topic.leader[partition], .correlation_id = corr};
	m.u.fetch = (hw_fetch_req){.replica_id = HW_CONSUMER_ID, .replica_epoch = -1,
				   .max_wait_ms = 0, .min_bytes = 1, .max_bytes = max_bytes,
				   .n_parts = 1, .parts = &fp};
	return data_send(ep, to, &m);
}

/* Hand one response to the poll in progress on ep (dropped when none). */
static void ep_deliver_resp(client_ep *ep, const hw_bench_resp *r)
{
	if (!ep->poll_fn)
		return;
	ep->poll_fn(ep->poll_arg, r);
	ep->poll_refresh |= r->error == HW_ERR_NOT_LEADER_OR_FOLLOWER;
}

/* The endpoint a response belongs to (design note). */
static int resp_owner(const client_ep *ep, const hw_bench_resp *r)
{
	if (ep->cl->n_ep == 1 || !ep->in || ep->cl->collect)
		return ep->idx;
	if (r->kind == HW_BENCH_FETCH)
		return 0;
	uint32_t p = r->correlation_id >> HW_BENCH_CORR_PRODUCER_SHIFT;
	return p < (uint32_t)ep->cl->n_ep ? (int)p : ep->idx;
}

/* Publish r in to's ring from ep; wake `to` if it sleeps. */
static void forward(client_ep *ep, client_ep *to, const hw_bench_resp *r)
{
	fwd_ring *q = &to->in[ep->idx];
	/* relaxed: only we write tail */
	uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
	/* acquire: the consumer is done with the slot it freed (its head
	 * store is a release) before we overwrite it */
	uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);
	if (t - h >= FWD_RING_CAP) {
		ep->fwd_dropped++; /* the bench resends after its timeout */
		return;
	}
	fwd_entry *e = &q->e[t % FWD_RING_CAP];
	e->r = *r;
	e->records = NULL;
	if (r->records_len) {
		e->records = malloc(r->records_len);
		if (!e->records) {
			ep->fwd_dropped++;
			return;
		}
		memcpy(e->records, r->records, r->records_len);
	}
	e->r.records = e->records;
	/* release: the entry written above is visible before the new tail */
	atomic_store_explicit(&q->tail, t + 1, memory_order_release);
	ep->fwd_out++;
	/* full fence: our tail store is globally visible before we read
	 * `sleeping`; pairs with the fence in ep_sleep (Dekker) */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&to->sleeping, memory_order_relaxed) && to->have_bell)
		(void)sendto(ep->wake_fd, "w", 1, 0, (const struct sockaddr *)&to->bell, sizeof(to->bell));
}

/* Deliver what other endpoints forwarded to ep. Returns how many. */
static int drain_inbox(client_ep *ep)
{
	if (!ep->in)
		return 0;
	int n = 0;
	for (int j = 0; j < ep->cl->n_ep; j++) {
		fwd_ring *q = &ep->in[j];
		/* relaxed: only we write head */
		uint32_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
		/* acquire: pairs with the producer's release of tail (entries) */
		uint32_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
		for (; h != t; h++) {
			fwd_entry *e = &q->e[h % FWD_RING_CAP];
			ep_deliver_resp(ep, &e->r);
			if (e->r.kind == HW_BENCH_PRODUCE || !e->r.more)
				ep->poll_delivered++;
			free(e->records);
			e->records = NULL;
			n++;
			/* release: we are done with the slot before the producer reuses it */
			atomic_store_explicit(&q->head, h + 1, memory_order_release);
		}
	}
	return n;
}

static void route(client_ep *ep, const hw_bench_resp *r)
{
	int owner = resp_owner(ep, r);
	if (owner == ep->idx)
		ep_deliver_resp(ep, r);
	else
		forward(ep, &ep->cl->ep[owner], r);
}

/* Hand one decoded data-plane message to its owner's poll. */
static void deliver(client_ep *ep, const hw_msg *m, int more)
{
	hw_bench_resp r = {.correlation_id = m->correlation_id};
	if (m->type == HW_MSG_PRODUCE_RESP) {
		const hw_produce_resp *p = &m->u.produce_resp;
		r.kind = HW_BENCH_PRODUCE;
		r.partition = p->tp.partition;
		r.error = p->error;
		r.base_offset = p->base_offset;
		if (resp_owner(ep, &r) == ep->idx)
			ep->poll_delivered++;
		route(ep, &r);
	} else if (m->type == HW_MSG_FETCH_RESP) {
		const hw_fetch_resp *f = &m->u.fetch_resp;
		r.kind = HW_BENCH_FETCH;
		r.more = (uint8_t)more;
		if (f->n_parts == 0) {
			r.error = f->error;
			route(ep, &r);
		}
		for (int i = 0; i < f->n_parts; i++) {
			const hw_fetch_resp_part *fp = &f->parts[i];
			r.partition = fp->tp.partition;
			r.error = fp->error != HW_ERR_NONE ? fp->error : f->error;
			r.high_watermark = fp->high_watermark;
			r.log_start_offset = fp->log_start_offset;
			r.records = fp->records;
			r.records_len = fp->records_len;
			route(ep, &r);
		}
		if (resp_owner(ep, &r) == ep->idx)
			ep->poll_delivered++;
	}
}

static void on_dpdk_msg(void *ctx, const hw_msg *m)
{
	client_ep *ep = ctx;
	if (ep->poll_fn || ep->in)
		deliver(ep, m, 0); /* split fetch frames each stand alone here */
}

/* Sleep on ep's memif doorbell up to timeout_ns unless a packet arrives or
 * another endpoint forwards us a response. Returns what was handled. */
static int ep_sleep(client_ep *ep, int64_t timeout_ns)
{
	if (!ep->in)
		return hw_dpdk_idle_wait(ep->dpdk, timeout_ns);
	atomic_store_explicit(&ep->sleeping, 1, memory_order_relaxed);
	/* full fence: `sleeping` is globally visible before we look at our
	 * rings; pairs with the fence in forward() */
	atomic_thread_fence(memory_order_seq_cst);
	int n = drain_inbox(ep);
	if (!n)
		n = hw_dpdk_idle_wait(ep->dpdk, timeout_ns);
	/* relaxed: a late wake-up byte only ends a later sleep early */
	atomic_store_explicit(&ep->sleeping, 0, memory_order_relaxed);
	return n + drain_inbox(ep);
}

static int ep_poll(client_ep *ep, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	hw_client *cl = ep->cl;
	ep->poll_fn = fn;
	ep->poll_arg = arg;
	ep->poll_delivered = 0;
	ep->poll_refresh = 0;
	if (ep->dpdk) {
		/* Busy-poll the memif rings (that is the point of DPDK), but after
		 * spin_ns without traffic sleep on the doorbell so a client
		 * sharing 2 cores with three brokers does not starve them. */
		int64_t start = now_ns(), deadline = start + timeout_ns, last_rx = start;
		for (;;) {
			int n = hw_dpdk_poll(ep->dpdk) + drain_inbox(ep);
			int64_t now = now_ns();
			if (n > 0)
				last_rx = now;
			if (ep->poll_delivered || now >= deadline)
				break;
			if (cl->busy_poll)
				continue; /* a core of our own: poll, nothing else */
			if (n == 0 && now - last_rx <= cl->spin_ns)
				sched_yield(); /* share the core while spinning */
			if (now - last_rx > cl->spin_ns) {
				/* sleep until a broker rings our memif doorbell
				 * (hw_doorbell.h), a producer forwards us an
				 * answer, or 1 ms passes */
				int64_t left = deadline - now;
				if (ep_sleep(ep, left < 1000000 ? left : 1000000) > 0)
					last_rx = now_ns();
			}
		}
	} else {
		/* The same policy on the UDP socket: spin (yielding) on
		 * non-blocking receives, then block in the kernel. */
		int64_t start = now_ns(), deadline = start + timeout_ns, last_rx = start;
		for (;;) {
			hw_wire_arena arena;
			hw_wire_hdr h;
			hw_msg m;
			int got = 0;
			while (recv_one(&cl->cluster, ep->node, ep->data_fd, ep->rxbuf, ep->arena_mem,
					&ep->stats, &arena, &h, &m)) {
				deliver(ep, &m, (h.flags & HW_WIRE_F_MORE) != 0);
				got = 1;
			}
			int64_t now = now_ns();
			if (got)
				last_rx = now;
			if (ep->poll_delivered || now >= deadline)
				break;
			if (cl->busy_poll)
				continue;
			if (now - last_rx <= cl->spin_ns) {
				sched_yield();
				continue;
			}
			if (wait_readable(ep->data_fd, -1, deadline - now) <= 0)
				break;
		}
	}
	ep->poll_fn = NULL;
	if (ep->poll_refresh)
		maybe_refresh(cl);
	return ep->poll_delivered;
}

static int io_poll(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	return ep_poll(ctx, timeout_ns, fn, arg);
}

/* Every endpoint from the calling thread, while no producer thread runs:
 * sends through endpoint 0, polls all of them (no forwarding: each
 * delivers what it receives). */
static int all_send_produce(void *ctx, uint32_t partition, int16_t acks, int32_t timeout_ms,
			    const uint8_t *records, uint32_t len, uint32_t corr)
{
	hw_client *cl = ctx;
	return io_send_produce(&cl->ep[0], partition, acks, timeout_ms, records, len, corr);
}

static int all_send_fetch(void *ctx, uint32_t partition, int64_t offset, int32_t max_bytes,
			  uint32_t corr)
{
	hw_client *cl = ctx;
	return io_send_fetch(&cl->ep[0], partition, offset, max_bytes, corr);
}

static int all_poll(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	hw_client *cl = ctx;
	if (cl->n_ep == 1)
		return ep_poll(&cl->ep[0], timeout_ns, fn, arg);
	cl->collect = 1;
	int64_t deadline = now_ns() + timeout_ns;
	int total = 0;
	for (;;) {
		for (int i = 0; i < cl->n_ep; i++) {
			/* leftovers forwarded while the producers ran */
			client_ep *ep = &cl->ep[i];
			ep->poll_fn = fn;
			ep->poll_arg = arg;
			total += drain_inbox(ep);
			ep->poll_fn = NULL;
			int n = ep_poll(ep, 0, fn, arg);
			total += n > 0 ? n : 0;
		}
		int64_t left = deadline - now_ns();
		if (total || left <= 0)
			break;
		/* nothing anywhere: a short nap on endpoint 0 (a response on
		 * another queue waits at most this long) */
		int n = ep_poll(&cl->ep[0], left < 50000 ? left : 50000, fn, arg);
		total += n > 0 ? n : 0;
		if (total)
			break;
	}
	cl->collect = 0;
	return total;
}

hw_bench_io *hw_client_io(hw_client *cl)
{
	return hw_client_producer_io(cl, 0);
}

hw_bench_io *hw_client_producer_io(hw_client *cl, int p)
{
	if (p < 0 || p >= cl->n_ep)
		return NULL;
	client_ep *ep = &cl->ep[p];
	ep_sync(ep);
	ep->io = (hw_bench_io){.ctx = ep, .send_produce = io_send_produce,
			       .send_fetch = io_send_fetch, .poll = io_poll};
	return &ep->io;
}

hw_bench_io *hw_client_all_io(hw_client *cl)
{
	if (cl->n_ep == 1)
		return hw_client_io(cl);
	cl->all_io = (hw_bench_io){.ctx = cl, .send_produce = all_send_produce,
				   .send_fetch = all_send_fetch, .poll = all_poll};
	return &cl->all_io;
}

int hw_client_producers(const hw_client *cl)
{
	return cl->n_ep;
}

void hw_client_forward_stats(const hw_client *cl, uint64_t *forwarded, uint64_t *dropped)
{
	*forwarded = *dropped = 0;
	for (int i = 0; i < cl->n_ep; i++) {
		*forwarded += cl->ep[i].fwd_out;
		*dropped += cl->ep[i].fwd_dropped;
	}
}
