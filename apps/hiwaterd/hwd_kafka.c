/* hwd_kafka.c — the broker's Kafka listener: TCP on io_uring on reactor 0,
 * bridged to the Kafka server and the engine. See hwd_kafka.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_netaddr.h"
#include "hw_pid_block.h"
#include "hwd_group.h"
#include "hwd_kafka.h"
#include "hwd_shard.h"

#define RING_DEPTH   512
#define RBUF_SIZE    (64 * 1024)
#define TOPIC_CACHE_NS (200 * 1000000LL)   /* local topic ids re-read at most this often */

/* io_uring user_data: a pointer with the operation in its low bits. */
enum { OP_ACCEPT = 1, OP_RECV = 2, OP_SEND = 3 };

typedef struct kio {
	hwd_kafka *k;
	int fd;
	hw_kconn *kc;                 /* NULL once closed */
	uint8_t *rbuf;
	uint8_t *sbuf;                /* bytes being sent */
	size_t s_len, s_off, s_cap;
	int recv_inflight, send_inflight;
	int recv_paused;              /* not reading: the server's queue is full */
	int closing;
	struct kio *next, *prev;
} kio;

typedef struct ltopic {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t id;
} ltopic;

struct hwd_kafka {
	hw_net net;                   /* reactor 0's rm answers HW_KSRV_NODE here (netmux route) */
	hwd_node *n;
	hw_ksrv *srv;
	struct io_uring ring;
	int ring_ok;
	int efd;
	int lfd;
	int accept_inflight;
	kio *conns;
	int64_t n_conns;
	int pending_sqes;
	hw_pid_blocks pids;           /* producer id blocks from the controller (hw_pid_block.h) */
	ltopic *lt;                   /* local topic ids (hwd_node_partitions) */
	size_t n_lt;
	int64_t lt_at_ns;
	hw_ksrv_kv *kv;               /* DescribeConfigs: broker configs, then */
	size_t n_kv;
	hw_ksrv_kv *tkv;              /* ... the topic-level ones (same allocation) */
	size_t n_tkv;
};

static int64_t now_ns(hwd_kafka *k) { return hw_clock_ns(k->n->clock); }
static void pids_maybe_request(hwd_kafka *k);

/* ---- io_uring ---------------------------------------------------------------- */
static struct io_uring_sqe *get_sqe(hwd_kafka *k)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&k->ring);
	if (!sqe) {
		(void)io_uring_submit(&k->ring);
		k->pending_sqes = 0;
		sqe = io_uring_get_sqe(&k->ring);
	}
	if (sqe)
		k->pending_sqes++;
	return sqe;
}

static void arm_accept(hwd_kafka *k)
{
	if (k->accept_inflight || k->lfd < 0)
		return;
	struct io_uring_sqe *sqe = get_sqe(k);
	if (!sqe)
		return;
	io_uring_prep_accept(sqe, k->lfd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)k | OP_ACCEPT);
	k->accept_inflight = 1;
}

static void arm_recv(kio *c)
{
	if (c->recv_inflight || c->closing)
		return;
	struct io_uring_sqe *sqe = get_sqe(c->k);
	if (!sqe)
		return;
	io_uring_prep_recv(sqe, c->fd, c->rbuf, RBUF_SIZE, 0);
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | OP_RECV);
	c->recv_inflight = 1;
}

/* Send what the server has ready (copied: the server's buffer may grow). */
static void conn_close(kio *c, hw_ksrv_close why);

static void try_send(kio *c)
{
	if (c->send_inflight || c->closing || !c->kc)
		return;
	if (c->s_off == c->s_len) {
		const uint8_t *p;
		size_t len = hw_kconn_output(c->kc, &p);
		if (!len) {
			if (hw_kconn_close_wanted(c->kc))
				conn_close(c, HW_KSRV_CLOSE_ACKS0_ERROR); /* everything before it is sent */
			return;
		}
		if (c->s_cap < len) {
			uint8_t *nb = realloc(c->sbuf, len);
			if (!nb)
				return; /* retried at the next completion */
			c->sbuf = nb;
			c->s_cap = len;
		}
		memcpy(c->sbuf, p, len);
		hw_kconn_output_done(c->kc, len);
		c->s_len = len;
		c->s_off = 0;
	}
	struct io_uring_sqe *sqe = get_sqe(c->k);
	if (!sqe)
		return;
	io_uring_prep_send(sqe, c->fd, c->sbuf + c->s_off, c->s_len - c->s_off, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | OP_SEND);
	c->send_inflight = 1;
}

static void conn_maybe_free(kio *c)
{
	if (!c->closing || c->recv_inflight || c->send_inflight)
		return;
	hwd_kafka *k = c->k;
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		k->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	k->n_conns--;
	free(c->rbuf);
	free(c->sbuf);
	free(c);
}

static void conn_close(kio *c, hw_ksrv_close why)
{
	if (c->closing)
		return;
	c->closing = 1;
	if (c->kc) {
		hw_kconn_close(c->kc, why);
		c->kc = NULL;
	}
	HW_LOG(DEBUG, "kafka", "connection fd %d closed: %s", c->fd, hw_ksrv_close_name(why));
	(void)shutdown(c->fd, SHUT_RDWR); /* ends the recv / send in flight */
	conn_maybe_free(c);
}

/* The peer as Kafka names it in DescribeGroups' client_host: Java's
 * InetAddress.toString() without a host name — "/127.0.0.1"; an IPv6
 * address as eight uncompressed hex groups ("/0:0:0:0:0:0:0:1"), an
 * IPv4-mapped one as its IPv4 address (Java makes it an Inet4Address). */
static void set_peer(hw_kconn *kc, int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char peer[64] = "";
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		char ip[INET_ADDRSTRLEN];
		if (inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip)))
			snprintf(peer, sizeof(peer), "/%s", ip);
	} else if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		const uint8_t *b = a->s6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a))
			snprintf(peer, sizeof(peer), "/%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
		else
			snprintf(peer, sizeof(peer), "/%x:%x:%x:%x:%x:%x:%x:%x", b[0] << 8 | b[1], b[2] << 8 | b[3],
				 b[4] << 8 | b[5], b[6] << 8 | b[7], b[8] << 8 | b[9], b[10] << 8 | b[11],
				 b[12] << 8 | b[13], b[14] << 8 | b[15]);
	}
	if (peer[0])
		hw_kconn_set_peer(kc, peer);
}

static void on_accept(hwd_kafka *k, int res)
{
	k->accept_inflight = 0;
	if (res < 0) {
		if (res != -EAGAIN && res != -EINTR && res != -ECONNABORTED)
			HW_LOG(WARN, "kafka", "accept: %s", strerror(-res));
		arm_accept(k);
		return;
	}
	hwd_kafka_config *kc = &k->n->cfg->kafka;
	hw_ksrv_stats *st = (hw_ksrv_stats *)hw_ksrv_get_stats(k->srv);
	if (k->n_conns >= kc->max_connections) {
		st->closes[HW_KSRV_CLOSE_LIMIT]++;
		close(res);
		arm_accept(k);
		return;
	}
	kio *c = calloc(1, sizeof(*c));
	uint8_t *rb = malloc(RBUF_SIZE);
	if (!c || !rb) {
		free(c);
		free(rb);
		st->closes[HW_KSRV_CLOSE_NO_MEMORY]++;
		close(res);
		arm_accept(k);
		return;
	}
	c->k = k;
	c->fd = res;
	c->rbuf = rb;
	c->kc = hw_kconn_open(k->srv, c);
	if (!c->kc) {
		free(rb);
		free(c);
		close(res);
		arm_accept(k);
		return;
	}
	set_peer(c->kc, res);
	int one = 1;
	(void)setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->next = k->conns;
	if (k->conns)
		k->conns->prev = c;
	k->conns = c;
	k->n_conns++;
	arm_recv(c);
	arm_accept(k);
}

static void on_recv(kio *c, int res)
{
	c->recv_inflight = 0;
	if (c->closing) {
		conn_maybe_free(c);
		return;
	}
	if (res <= 0) {
		conn_close(c, res == 0 || res == -ECONNRESET ? HW_KSRV_CLOSE_PEER : HW_KSRV_CLOSE_IO_ERROR);
		return;
	}
	int rc = hw_kconn_input(c->kc, c->rbuf, (size_t)res);
	if (rc < 0) {
		/* the reason was counted by the server; SHUTDOWN is not re-counted */
		hw_kconn_close(c->kc, HW_KSRV_CLOSE_BAD_REQUEST);
		c->kc = NULL;
		conn_close(c, HW_KSRV_CLOSE_BAD_REQUEST);
		return;
	}
	try_send(c);
	if (hw_kconn_wants_input(c->kc))
		arm_recv(c);
	else
		c->recv_paused = 1; /* resumed by on_send / b_conn_ready */
}

/* Read again once the server takes input (after sends or completions). */
static void maybe_resume(kio *c)
{
	if (c->recv_paused && c->kc && !c->closing && hw_kconn_wants_input(c->kc)) {
		c->recv_paused = 0;
		arm_recv(c);
	}
}

static void on_send(kio *c, int res)
{
	c->send_inflight = 0;
	if (c->closing) {
		conn_maybe_free(c);
		return;
	}
	if (res < 0) {
		conn_close(c, res == -EPIPE || res == -ECONNRESET ? HW_KSRV_CLOSE_PEER : HW_KSRV_CLOSE_IO_ERROR);
		return;
	}
	c->s_off += (size_t)res;
	if (hw_kconn_has_parked_input(c->kc) && hw_kconn_input(c->kc, NULL, 0) < 0) {
		hw_kconn_close(c->kc, HW_KSRV_CLOSE_BAD_REQUEST);
		c->kc = NULL;
		conn_close(c, HW_KSRV_CLOSE_BAD_REQUEST);
		return;
	}
	try_send(c);
	maybe_resume(c);
}

static int poll_kafka(void *arg)
{
	hwd_kafka *k = arg;
	int work = hw_ksrv_poll(k->srv);
	pids_maybe_request(k);
	for (int round = 0; round < 4; round++) {
		if (k->pending_sqes) {
			(void)io_uring_submit(&k->ring);
			k->pending_sqes = 0;
		}
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&k->ring, head, cqe)
		{
			uint64_t ud = io_uring_cqe_get_data64(cqe);
			int res = cqe->res;
			void *p = (void *)(uintptr_t)(ud & ~(uint64_t)7);
			switch (ud & 7) {
			case OP_ACCEPT: on_accept(p, res); break;
			case OP_RECV: on_recv(p, res); break;
			case OP_SEND: on_send(p, res); break;
			default: break;
			}
			seen++;
		}
		if (!seen)
			break;
		io_uring_cq_advance(&k->ring, seen);
		work += (int)seen;
	}
	if (k->pending_sqes) {
		(void)io_uring_submit(&k->ring);
		k->pending_sqes = 0;
	}
	return work;
}

static int64_t deadline_kafka(void *arg)
{
	hwd_kafka *k = arg;
	return hw_ksrv_next_deadline_ns(k->srv);
}

/* ---- the server's bridge to the broker -------------------------------------- */
static int b_submit(void *ctx, const hw_msg *m)
{
	hwd_kafka *k = ctx;
	hwd_node *n = k->n;
	switch (m->type) {
	case HW_MSG_PRODUCE:
	case HW_MSG_FETCH:
		hwd_shard_route(&n->shards[0], m, NULL); /* to the owning reactor */
		return 0;
	case HW_MSG_METADATA:
	case HW_MSG_DELETE_TOPIC:
	case HW_MSG_ALTER_CONFIG:
	case HW_MSG_CREATE_TOPIC: {
		hw_msg c = *m;
		c.src = n->cfg->node_id;
		c.dst = n->cfg->controller_id;
		return hw_net_send(hw_udp_net(n->ctl), &c);
	}
	default:
		return -EINVAL;
	}
}

static void refresh_topics(hwd_kafka *k)
{
	hw_rm_part_info *v;
	size_t np;
	k->lt_at_ns = now_ns(k);
	if (hwd_node_partitions(k->n, &v, &np, NULL, NULL) < 0)
		return;
	ltopic *lt = calloc(np ? np : 1, sizeof(*lt));
	size_t nl = 0;
	for (size_t i = 0; lt && i < np; i++) {
		size_t j = 0;
		while (j < nl && lt[j].id != v[i].tp.topic_id)
			j++;
		if (j == nl) {
			snprintf(lt[nl].name, sizeof(lt[nl].name), "%s", v[i].topic);
			lt[nl++].id = v[i].tp.topic_id;
		}
	}
	free(v);
	if (!lt)
		return;
	free(k->lt);
	k->lt = lt;
	k->n_lt = nl;
}

static int b_topic_id(void *ctx, const char *topic, uint32_t *id)
{
	hwd_kafka *k = ctx;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 || now_ns(k) - k->lt_at_ns > TOPIC_CACHE_NS) {
			if (pass == 1 && now_ns(k) - k->lt_at_ns < TOPIC_CACHE_NS / 10)
				break; /* just refreshed: a miss is a miss */
			refresh_topics(k);
		}
		for (size_t i = 0; i < k->n_lt; i++)
			if (!strcmp(k->lt[i].name, topic)) {
				*id = k->lt[i].id;
				return 0;
			}
	}
	return -ENOENT;
}

static int b_part_info(void *ctx, hw_tp tp, hw_rm_part_info *out)
{
	hwd_kafka *k = ctx;
	hwd_node *n = k->n;
	if (hwd_shard_of(tp.topic_id, tp.partition, n->n_reactors) == 0)
		return hw_rm_partition_info(n->shards[0].rm, tp, out);
	hw_rm_part_info *v;
	size_t np;
	if (hwd_node_partitions(n, &v, &np, NULL, NULL) < 0)
		return -ENOMEM;
	int rc = -ENOENT;
	for (size_t i = 0; i < np; i++)
		if (v[i].tp.topic_id == tp.topic_id && v[i].tp.partition == tp.partition) {
			*out = v[i];
			rc = 0;
			break;
		}
	free(v);
	return rc;
}

/* Ask the controller for the next producer id block when hw_pid_block.h
 * says so (registered brokers only: the request carries the epoch). */
static void pids_maybe_request(hwd_kafka *k)
{
	hwd_node *n = k->n;
	int64_t now = now_ns(k);
	if (n->broker_epoch < 0 || !hw_pid_blocks_want(&k->pids, now))
		return;
	hw_alloc_pids_req q = { .broker_id = n->cfg->node_id, .broker_epoch = n->broker_epoch };
	hw_msg m = { .type = HW_MSG_ALLOCATE_PRODUCER_IDS, .src = n->cfg->node_id, .dst = n->cfg->controller_id };
	m.u.other = &q;
	if (hw_net_send(hw_udp_net(n->ctl), &m) == 0)
		hw_pid_blocks_sent(&k->pids, now);
}

static int64_t b_alloc_pid(void *ctx)
{
	hwd_kafka *k = ctx;
	int64_t id = hw_pid_blocks_take(&k->pids);
	pids_maybe_request(k);
	return id; /* -EAGAIN: no block yet (COORDINATOR_LOAD_IN_PROGRESS) */
}

static void b_conn_ready(void *ctx, hw_kconn *kc)
{
	(void)ctx;
	kio *c = hw_kconn_ctx(kc);
	try_send(c);
	maybe_resume(c);
}

static int64_t b_now_ns(void *ctx) { return now_ns(ctx); }

/* The group API keys go to the group coordinator (hwd_group.h). */
static int b_group(void *ctx, hw_kreq *req, const hw_kafka_req_hdr *h, hw_kr *r, hw_kw *w)
{
	hwd_kafka *k = ctx;
	return hwd_group_request(k->n, req, h, r, w);
}

/* ---- DescribeConfigs' config lists ------------------------------------------- */
/* Kafka's topic-level configs and the broker config each defaults to
 * (LogConfig's ServerTopicConfigSynonyms): the topic config table
 * (hw_topic_config.h), and message.timestamp.type, which is fixed. */
static const struct { const char *topic, *broker, *dflt; } extra_topic_keys[] = {
	{ "message.timestamp.type", "log.message.timestamp.type", "CreateTime" },
};

static void add_topic_key(hwd_kafka *k, const char *topic, const char *broker, const char *dflt)
{
	hwd_kafka_config *kc = &k->n->cfg->kafka;
	hw_ksrv_kv e = { topic, dflt, 1, broker && broker[0] ? broker : NULL };
	for (int i = 0; e.synonym && i < kc->n_described; i++)
		if (!strcmp(kc->described[i].name, broker)) {
			e.value = kc->described[i].value;
			e.is_default = !kc->described[i].is_set;
		}
	if (e.value)
		k->tkv[k->n_tkv++] = e;
}

static int build_configs(hwd_kafka *k)
{
	hwd_kafka_config *kc = &k->n->cfg->kafka;
	size_t nx = sizeof(extra_topic_keys) / sizeof(extra_topic_keys[0]);
	k->kv = calloc((size_t)kc->n_described + HW_TC_COUNT + nx, sizeof(*k->kv));
	if (!k->kv)
		return -ENOMEM;
	for (int i = 0; i < kc->n_described; i++)
		k->kv[k->n_kv++] = (hw_ksrv_kv){ kc->described[i].name, kc->described[i].value,
						 !kc->described[i].is_set, NULL };
	k->tkv = k->kv + k->n_kv;
	for (int id = 0; id < HW_TC_COUNT; id++) {
		const hw_tc_def *d = hw_tc_def_of(id);
		/* the throttles have no broker synonym: "" (none) by default */
		add_topic_key(k, d->name, d->synonym, d->type == HW_TC_T_THROTTLE ? "" : NULL);
	}
	for (size_t t = 0; t < nx; t++)
		add_topic_key(k, extra_topic_keys[t].topic, extra_topic_keys[t].broker, extra_topic_keys[t].dflt);
	return 0;
}

/* Reactor 0's replica manager answering the listener. */
static int net_send(hw_net *nt, const hw_msg *m)
{
	hwd_kafka *k = (hwd_kafka *)nt;
	if (hwd_group_on_msg(k->n, m))
		return 0;
	(void)hw_ksrv_on_msg(k->srv, m);
	return 0;
}

/* ---- lifecycle ------------------------------------------------------------------ */
static int open_listener(hwd_kafka *k)
{
	hwd_kafka_config *kc = &k->n->cfg->kafka;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)kc->listen_port) };
	const char *host = kc->listen_host[0] ? kc->listen_host : "0.0.0.0";
	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -EINVAL;
	k->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (k->lfd < 0)
		return -errno;
	int one = 1;
	(void)setsockopt(k->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	int rc = hw_netaddr_bind_wait(k->lfd, &sa, sizeof(sa), HW_NETADDR_BIND_WAIT_MS, "Kafka listener");
	if (rc < 0)
		return rc;
	if (listen(k->lfd, 1024) < 0)
		return -errno;
	return 0;
}

int hwd_kafka_init(hwd_node *n)
{
	hwd_kafka_config *kc = &n->cfg->kafka;
	if (!kc->listeners[0] || !n->cfg->is_broker)
		return 0;
	hwd_kafka *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->n = n;
	k->lfd = -1;
	k->efd = -1;
	n->kafka = k;
	hw_pid_blocks_init(&k->pids);
	int rc = open_listener(k);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: %s: bad value for key 'listeners': cannot listen on %s: %s\n", n->cfg->path,
			kc->listeners, strerror(-rc));
		return rc;
	}
	rc = io_uring_queue_init(RING_DEPTH, &k->ring, 0);
	if (rc < 0)
		return rc;
	k->ring_ok = 1;
	k->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (k->efd < 0)
		return -errno;
	rc = io_uring_register_eventfd(&k->ring, k->efd);
	if (rc < 0)
		return rc;
	rc = build_configs(k);
	if (rc < 0)
		return rc;
	hw_ksrv_config sc = { .node_id = n->cfg->node_id,
			      .auto_create_topics = kc->auto_create_topics,
			      .num_partitions = kc->num_partitions,
			      .default_replication_factor = (int16_t)kc->default_replication_factor,
			      .socket_request_max_bytes = kc->socket_request_max_bytes,
			      .broker_configs = k->kv,
			      .n_broker_configs = k->n_kv,
			      .topic_configs = k->tkv,
			      .n_topic_configs = k->n_tkv };
	snprintf(sc.cluster_id, sizeof(sc.cluster_id), "hiwater-%u", n->cfg->cluster_id);
	hw_ksrv_ops ops = { .submit = b_submit, .topic_id = b_topic_id, .part_info = b_part_info,
			    .alloc_producer_id = b_alloc_pid, .group_request = b_group,
			    .conn_ready = b_conn_ready, .now_ns = b_now_ns };
	rc = hw_ksrv_create(&sc, &ops, k, &k->srv);
	if (rc < 0)
		return rc;
	rc = hwd_group_init(n, k->srv);
	if (rc < 0)
		return rc;
	k->net.send = net_send;
	rc = n->shards[0].mux ? hw_netmux_route(n->shards[0].mux, HW_KSRV_NODE, &k->net) : -EINVAL;
	if (rc == 0)
		rc = hw_reactor_add_poller(n->shards[0].reactor, "kafka", poll_kafka, deadline_kafka, k);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->shards[0].reactor, k->efd, 1, NULL, NULL, NULL);
	if (rc < 0)
		return rc;
	arm_accept(k);
	(void)io_uring_submit(&k->ring);
	k->pending_sqes = 0;
	HW_LOG(INFO, "kafka", "broker %d: Kafka listener %s (advertised %s)", n->cfg->node_id, kc->listeners,
	       kc->adv_hostport);
	return 0;
}

void hwd_kafka_fini(hwd_node *n)
{
	hwd_kafka *k = n->kafka;
	if (!k)
		return;
	hwd_group_fini(n);
	for (kio *c = k->conns, *nx; c; c = nx) {
		nx = c->next;
		if (c->kc)
			hw_kconn_close(c->kc, HW_KSRV_CLOSE_SHUTDOWN);
		close(c->fd);
		free(c->rbuf);
		free(c->sbuf);
		free(c);
	}
	if (k->ring_ok)
		io_uring_queue_exit(&k->ring);
	if (k->efd >= 0)
		close(k->efd);
	if (k->lfd >= 0)
		close(k->lfd);
	hw_ksrv_destroy(k->srv);
	free(k->lt);
	free(k->kv);
	free(k);
	n->kafka = NULL;
}

int hwd_kafka_is_dst(const hw_msg *m) { return m->dst == HW_KSRV_NODE; }

int hwd_kafka_on_msg(hwd_node *n, const hw_msg *m)
{
	if (!n->kafka)
		return 0;
	if (hwd_group_on_msg(n, m))
		return 1;
	if (m->type == HW_MSG_ALLOCATE_PRODUCER_IDS_RESP) {
		if (m->u.other && m->src == n->cfg->controller_id &&
		    hw_pid_blocks_on_resp(&n->kafka->pids, m->u.other) < 0)
			HW_LOG(WARN, "kafka", "producer id block refused: %s",
			       hw_err_name(((const hw_alloc_pids_resp *)m->u.other)->error));
		return 1;
	}
	int mine = m->dst == HW_KSRV_NODE ||
		   ((m->correlation_id & HW_KSRV_CORR_BIT) &&
		    (m->type == HW_MSG_METADATA_RESP || m->type == HW_MSG_CREATE_TOPIC_RESP ||
		     m->type == HW_MSG_DELETE_TOPIC_RESP || m->type == HW_MSG_ALTER_CONFIG_RESP));
	if (!mine)
		return 0;
	return hw_ksrv_on_msg(n->kafka->srv, m);
}

const hw_ksrv_stats *hwd_kafka_stats(const hwd_node *n)
{
	return n->kafka ? hw_ksrv_get_stats(n->kafka->srv) : NULL;
}
