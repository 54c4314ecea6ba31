/* hw_client.c — control and data endpoints of a CLI process; see hw_client.h.
 *
 * Sockets are plain non-blocking kernel UDP sockets: a CLI process sends a
 * few requests, so io_uring buys nothing here. The data socket of the udp
 * transport is bound to the slot's data port so brokers may answer either to
 * the source address or to the endpoint their config lists for the slot. */
#include "hw_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw_dpdk.h"
#include "hw_err.h"
#include "hw_wire.h"

/* After the last packet the client keeps polling (yielding) this long
 * by default, then sleeps on its memif doorbell, like the brokers'
 * hiwater.idle.spin.us (hw_client_set_spin_us changes it). */
#define CLIENT_SPIN_NS 20000

struct hw_client {
	hw_cluster cluster;
	int slot, slot_fd;
	int32_t node;
	int ctl_fd;                   /* control endpoint */
	int data_fd;                  /* udp data endpoint */
	hw_dpdk *dpdk;                /* dpdk data endpoint (memif links of the slot) */
	/* the poll in progress (the DPDK transport delivers via a callback) */
	hw_bench_resp_fn poll_fn;
	void *poll_arg;
	int poll_delivered, poll_refresh;
	hw_wire_tx tx;
	uint32_t next_corr;
	hw_client_topic topic;
	int have_topic;
	int64_t last_refresh_ns;
	int32_t data_port[HW_CLUSTER_MAX_BROKERS + 1];
	hw_bench_io io;
	uint8_t *rxbuf, *txbuf, *arena_mem;
	hw_wire_stats stats;
	int busy_poll;                /* never yield or sleep while polling */
	int64_t spin_ns;              /* poll (yielding) this long before sleeping */
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

static int udp_bind(int port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int big = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int send_to_port(int fd, int port, const uint8_t *buf, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ssize_t n = sendto(fd, buf, len, 0, (struct sockaddr *)&a, sizeof(a));
	if (n < 0)
		return -errno;
	return 0;
}

static int encode_and_send(hw_client *cl, int fd, int port, hw_msg *m)
{
	m->src = cl->node;
	int n = hw_wire_encode(&cl->tx, m, NULL, cl->txbuf, HW_WIRE_MAX_FRAME);
	if (n < 0)
		return n;
	return send_to_port(fd, port, cl->txbuf, (size_t)n);
}

int32_t hw_client_node_id(const hw_client *cl)
{
	return cl->node;
}


static void on_dpdk_msg(void *ctx, const hw_msg *m);

/* The client side of this slot's memif links (one per broker), EAL with
 * --no-huge and a file prefix unique to the cluster and slot. Waits up to
 * 5 s for the links to come up. */
static int open_dpdk(hw_client *cl)
{
	char sockdir[64], eal[4096];
	hw_dpdk_local_peer peers[HW_CLUSTER_MAX_BROKERS];
	int n_peers = 0;
	hw_cluster_memif_dir(&cl->cluster, sockdir, sizeof(sockdir));
	int rc = hw_dpdk_local_cluster_args(sockdir, cl->node, cl->cluster.brokers,
					    cl->cluster.client_slots, 256, eal, sizeof(eal) - 64, peers,
					    HW_CLUSTER_MAX_BROKERS, &n_peers);
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
	hw_dpdk_cfg dc = {.cluster_id = cl->cluster.cluster_id, .self_id = cl->node,
			  .on_msg = on_dpdk_msg, .ctx = cl, .n_queues = 1};
	cl->dpdk = hw_dpdk_create(&dc, &rc);
	if (!cl->dpdk) {
		hw_cli_err("DPDK ports for slot %d: %s", cl->slot, strerror(-rc));
		hw_dpdk_eal_cleanup();
		return rc ? rc : -ENODEV;
	}
	for (int i = 0; i < n_peers; i++)
		if ((rc = hw_dpdk_add_neighbour(cl->dpdk, peers[i].node, peers[i].endpoint))) {
			hw_cli_err("neighbour %d (%s): %s", peers[i].node, peers[i].endpoint, strerror(-rc));
			return rc;
		}
	int64_t deadline = now_ns() + 5000000000LL;
	for (;;) {
		int up = 0, n = hw_dpdk_port_count(cl->dpdk);
		for (int i = 0; i < n; i++)
			up += hw_dpdk_link_up(cl->dpdk, i) > 0;
		if (up == n)
			return 0;
		if (now_ns() > deadline) {
			hw_cli_err("only %d of %d memif links up after 5 s (are the brokers running?)", up, n);
			return -ETIMEDOUT;
		}
		hw_dpdk_poll(cl->dpdk);
		usleep(2000);
	}
}

int hw_client_open(hw_client **out, const hw_cluster *c)
{
	return hw_client_open2(out, c, 1);
}

int hw_client_open2(hw_client **out, const hw_cluster *c, int with_data)
{
	hw_client *cl = calloc(1, sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	cl->cluster = *c;
	cl->ctl_fd = cl->data_fd = cl->slot_fd = -1;
	cl->spin_ns = CLIENT_SPIN_NS;
	cl->rxbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	cl->txbuf = malloc(HW_WIRE_MAX_FRAME + 64);
	cl->arena_mem = malloc(HW_WIRE_ARENA_SIZE);
	int rc = -ENOMEM;
	if (!cl->rxbuf || !cl->txbuf || !cl->arena_mem)
		goto fail;
	rc = hw_cluster_claim_slot(c, &cl->slot_fd);
	if (rc < 0) {
		hw_cli_err("no free client slot in %s (all %d in use)", c->dir, c->client_slots);
		goto fail;
	}
	cl->slot = rc;
	cl->node = HW_CLUSTER_CLIENT_NODE_BASE + cl->slot;
	rc = udp_bind(hw_cluster_control_port(c, cl->node));
	if (rc < 0) {
		hw_cli_err("binding control port %d: %s", hw_cluster_control_port(c, cl->node),
			   strerror(-rc));
		goto fail;
	}
	cl->ctl_fd = rc;
	rc = udp_bind(c->base_port + 200 + cl->slot);
	if (rc < 0) {
		hw_cli_err("binding data port %d: %s", c->base_port + 200 + cl->slot, strerror(-rc));
		goto fail;
	}
	cl->data_fd = rc;
	if (with_data && !strcmp(c->transport, "dpdk") && (rc = open_dpdk(cl)))
		goto fail;
	cl->tx.cluster_id = c->cluster_id;
	cl->tx.incarnation = hw_wire_new_incarnation();
	cl->tx.seq = 0;
	cl->next_corr = (uint32_t)now_ns() & 0xffffff;
	for (int i = 0; i <= HW_CLUSTER_MAX_BROKERS; i++)
		cl->data_port[i] = c->base_port + 100 + i;
	*out = cl;
	return 0;
fail:
	hw_client_close(cl);
	return rc;
}

void hw_client_close(hw_client *cl)
{
	if (!cl)
		return;
	if (cl->dpdk) {
		hw_dpdk_destroy(cl->dpdk);
		hw_dpdk_eal_cleanup();
	}
	if (cl->ctl_fd >= 0)
		close(cl->ctl_fd);
	if (cl->data_fd >= 0)
		close(cl->data_fd);
	if (cl->slot_fd >= 0)
		close(cl->slot_fd); /* releases the slot's flock */
	free(cl->rxbuf);
	free(cl->txbuf);
	free(cl->arena_mem);
	free(cl);
}

/* Receive one frame from fd and decode it. 1 with m and h set, 0 when nothing
 * is waiting, 0 also for a frame that was dropped (counted). */
static int recv_one(hw_client *cl, int fd, hw_wire_arena *arena, hw_wire_hdr *h, hw_msg *m)
{
	ssize_t n = recv(fd, cl->rxbuf, HW_WIRE_MAX_FRAME + 64, 0);
	if (n < 0)
		return 0;
	hw_wire_drop why;
	hw_wire_arena_init(arena, cl->arena_mem, HW_WIRE_ARENA_SIZE);
	if (hw_wire_decode(cl->rxbuf, (size_t)n, cl->cluster.cluster_id, arena, h, m, &why, &cl->stats))
		return 0;
	if (h->dst != cl->node)
		return 0;
	return 1;
}

static int wait_readable(int fd1, int fd2, int64_t timeout_ns)
{
	struct pollfd p[2] = {{.fd = fd1, .events = POLLIN}, {.fd = fd2, .events = POLLIN}};
	struct timespec ts = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
	return ppoll(p, fd2 >= 0 ? 2 : 1, &ts, NULL);
}

int hw_client_call(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type, int timeout_ms,
		   void (*fn)(void *arg, const hw_msg *resp), void *arg)
{
	req->dst = dst;
	req->correlation_id = ++cl->next_corr;
	int port = hw_cluster_control_port(&cl->cluster, dst);
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
	int64_t retry_ns = 200000000, next_send = 0;
	for (;;) {
		int64_t now = now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (now >= next_send) {
			int rc = encode_and_send(cl, cl->ctl_fd, port, req);
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
		while (recv_one(cl, cl->ctl_fd, &arena, &h, &m)) {
			if (m.type == resp_type && m.correlation_id == req->correlation_id) {
				fn(arg, &m);
				return 0;
			}
		}
	}
}

/* ---- topic metadata ------------------------------------------------------ */

typedef struct meta_ctx {
	hw_client *cl;
	const char *name;
	int found;
	int16_t error;
	int all_leaders;
} meta_ctx;

static int parse_udp_port(const char *ep)
{
	/* "udp:HOST:PORT" */
	if (strncmp(ep, "udp:", 4))
		return -1;
	const char *colon = strrchr(ep, ':');
	if (!colon || colon == ep + 3)
		return -1;
	int port = atoi(colon + 1);
	return port > 0 && port < 65536 ? port : -1;
}

static void on_metadata(void *arg, const hw_msg *m)
{
	meta_ctx *x = arg;
	const hw_metadata_resp *r = m->u.other;
	x->error = r->error;
	for (int i = 0; i < r->n_brokers; i++) {
		const hw_broker_info *b = &r->brokers[i];
		int port = parse_udp_port(b->data_ep);
		if (b->id >= 0 && b->id <= HW_CLUSTER_MAX_BROKERS && port > 0)
			x->cl->data_port[b->id] = port;
	}
	for (int i = 0; i < r->n_topics; i++) {
		const hw_topic_meta *t = &r->topics[i];
		if (strcmp(t->name, x->name))
			continue;
		x->error = t->error;
		if (t->error != HW_ERR_NONE)
			return;
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
}

static int refresh_metadata(hw_client *cl, const char *name, int timeout_ms, meta_ctx *x)
{
	hw_topic_name tn;
	snprintf(tn.s, sizeof(tn.s), "%s", name);
	hw_metadata_req mr = {.n_topics = 1, .topics = &tn};
	hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
	*x = (meta_ctx){.cl = cl, .name = name, .error = HW_ERR_NONE};
	cl->last_refresh_ns = now_ns();
	return hw_client_call(cl, 0, &m, HW_MSG_METADATA_RESP, timeout_ms, on_metadata, x);
}

int hw_client_use_topic(hw_client *cl, const char *name, int timeout_ms)
{
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
	for (;;) {
		meta_ctx x;
		int left = (int)((deadline - now_ns()) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		int rc = refresh_metadata(cl, name, left, &x);
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

static int leader_port(hw_client *cl, uint32_t partition)
{
	if (partition >= cl->topic.n_parts)
		return -EINVAL;
	int32_t l = cl->topic.leader[partition];
	if (l < 1 || l > cl->cluster.brokers)
		return -EHOSTUNREACH;
	return cl->dpdk ? 0 : cl->data_port[l];
}

/* A broker told us it is not the leader (or the leader died): look again,
 * at most every 100 ms. */
static void maybe_refresh(hw_client *cl)
{
	if (now_ns() - cl->last_refresh_ns < 100000000)
		return;
	meta_ctx x;
	char name[HW_TOPIC_NAME_MAX];
	snprintf(name, sizeof(name), "%s", cl->topic.name);
	refresh_metadata(cl, name, 300, &x);
}

static int data_send(hw_client *cl, int port, hw_msg *m)
{
	if (!cl->dpdk)
		return encode_and_send(cl, cl->data_fd, port, m);
	m->src = cl->node;
	int rc = hw_net_send(hw_dpdk_net(cl->dpdk), m);
	hw_dpdk_flush(cl->dpdk);
	return rc;
}

static int io_send_produce(void *ctx, uint32_t partition, int16_t acks, int32_t timeout_ms,
			   const uint8_t *records, uint32_t len, uint32_t corr)
{
	hw_client *cl = ctx;
	int port = leader_port(cl, partition);
	if (port < 0) {
		maybe_refresh(cl);
		return port;
	}
	hw_msg m = {.type = HW_MSG_PRODUCE, .dst = cl->topic.leader[partition], .correlation_id = corr};
	m.u.produce = (hw_produce_req){.acks = acks, .timeout_ms = timeout_ms,
				       .tp = {cl->topic.topic_id, partition},
				       .records = records, .records_len = len};
	return data_send(cl, port, &m);
}

static int io_send_fetch(void *ctx, uint32_t partition, int64_t offset, int32_t max_bytes,
			 uint32_t corr)
{
	hw_client *cl = ctx;
	int port = leader_port(cl, partition);
	if (port < 0) {
		maybe_refresh(cl);
		return port;
	}
	hw_fetch_part fp = {.tp = {cl->topic.topic_id, partition}, .fetch_offset = offset,
			    .current_leader_epoch = -1, .last_fetched_epoch = -1,
			    .log_start_offset = -1, .partition_max_bytes = max_bytes};
	hw_msg m = {.type = HW_MSG_FETCH, .dst = cl->topic.leader[partition], .correlation_id = corr};
	m.u.fetch = (hw_fetch_req){.replica_id = HW_CONSUMER_ID, .replica_epoch = -1,
				   .max_wait_ms = 0, .min_bytes = 1, .max_bytes = max_bytes,
				   .n_parts = 1, .parts = &fp};
	return data_send(cl, port, &m);
}

/* Hand one decoded data-plane message to the poll's callback. */
static void deliver(hw_client *cl, const hw_msg *m, int more)
{
	hw_bench_resp r = {.correlation_id = m->correlation_id};
	if (m->type == HW_MSG_PRODUCE_RESP) {
		const hw_produce_resp *p = &m->u.produce_resp;
		r.kind = HW_BENCH_PRODUCE;
		r.partition = p->tp.partition;
		r.error = p->error;
		r.base_offset = p->base_offset;
		cl->poll_fn(cl->poll_arg, &r);
		cl->poll_delivered++;
		cl->poll_refresh |= p->error == HW_ERR_NOT_LEADER_OR_FOLLOWER;
	} else if (m->type == HW_MSG_FETCH_RESP) {
		const hw_fetch_resp *f = &m->u.fetch_resp;
		r.kind = HW_BENCH_FETCH;
		r.more = (uint8_t)more;
		if (f->n_parts == 0) {
			r.error = f->error;
			cl->poll_fn(cl->poll_arg, &r);
		}
		for (int i = 0; i < f->n_parts; i++) {
			const hw_fetch_resp_part *fp = &f->parts[i];
			r.partition = fp->tp.partition;
			r.error = fp->error != HW_ERR_NONE ? fp->error : f->error;
			r.high_watermark = fp->high_watermark;
			r.log_start_offset = fp->log_start_offset;
			r.records = fp->records;
			r.records_len = fp->records_len;
			cl->poll_fn(cl->poll_arg, &r);
			cl->poll_refresh |= r.error == HW_ERR_NOT_LEADER_OR_FOLLOWER;
		}
		cl->poll_delivered++;
	}
}

static void on_dpdk_msg(void *ctx, const hw_msg *m)
{
	hw_client *cl = ctx;
	if (cl->poll_fn)
		deliver(cl, m, 0); /* split fetch frames each stand alone here */
}

static int io_poll(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	hw_client *cl = ctx;
	cl->poll_fn = fn;
	cl->poll_arg = arg;
	cl->poll_delivered = 0;
	cl->poll_refresh = 0;
	if (cl->dpdk) {
		/* Busy-poll the memif rings (that is the point of DPDK), but after
		 * CLIENT_SPIN_NS without traffic sleep on the doorbell so a client
		 * sharing 2 cores with three brokers does not starve them. */
		int64_t start = now_ns(), deadline = start + timeout_ns, last_rx = start;
		for (;;) {
			int n = hw_dpdk_poll(cl->dpdk);
			int64_t now = now_ns();
			if (n > 0)
				last_rx = now;
			if (cl->poll_delivered || now >= deadline)
				break;
			if (cl->busy_poll)
				continue; /* a core of our own: poll, nothing else */
			if (n == 0 && now - last_rx <= cl->spin_ns)
				sched_yield(); /* share the core while spinning */
			if (now - last_rx > cl->spin_ns) {
				/* sleep until a broker rings our memif doorbell
				 * (hw_doorbell.h) or 1 ms passes */
				int64_t left = deadline - now;
				if (hw_dpdk_idle_wait(cl->dpdk, left < 1000000 ? left : 1000000) > 0)
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
			while (recv_one(cl, cl->data_fd, &arena, &h, &m)) {
				deliver(cl, &m, (h.flags & HW_WIRE_F_MORE) != 0);
				got = 1;
			}
			int64_t now = now_ns();
			if (got)
				last_rx = now;
			if (cl->poll_delivered || now >= deadline)
				break;
			if (cl->busy_poll)
				continue;
			if (now - last_rx <= cl->spin_ns) {
				sched_yield();
				continue;
			}
			if (wait_readable(cl->data_fd, -1, deadline - now) <= 0)
				break;
		}
	}
	cl->poll_fn = NULL;
	if (cl->poll_refresh)
		maybe_refresh(cl);
	return cl->poll_delivered;
}

hw_bench_io *hw_client_io(hw_client *cl)
{
	cl->io = (hw_bench_io){.ctx = cl, .send_produce = io_send_produce,
			       .send_fetch = io_send_fetch, .poll = io_poll};
	return &cl->io;
}
