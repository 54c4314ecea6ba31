/* hwd_shard.c — a broker's data reactors; see the design note in
 * hwd_shard.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "hw_logging.h"
#include "hw_quota.h"
#include "hwd_kafka.h"
#include "hwd_shard.h"

#define MAILBOX_SLOTS   1024
#define DRAIN_BATCH     256

static const char *const xk_names[] = {
#define N(n) #n,
	HWD_XMSG_TABLE(N)
#undef N
};
const char *hwd_xmsg_kind_name(int k)
{
	return k >= 0 && k < HWD_XMSG_KIND_COUNT ? xk_names[k] : "UNKNOWN_XMSG";
}

static const char *const sc_names[] = {
#define N(n, s, h) s,
	HWD_SHARD_COUNTER_TABLE(N)
#undef N
};
static const char *const sc_help[] = {
#define N(n, s, h) h,
	HWD_SHARD_COUNTER_TABLE(N)
#undef N
};
const char *hwd_shard_counter_name(int c) { return c >= 0 && c < HWD_SC_COUNT ? sc_names[c] : "unknown"; }
const char *hwd_shard_counter_help(int c) { return c >= 0 && c < HWD_SC_COUNT ? sc_help[c] : ""; }

static void count(hwd_shard *s, hwd_shard_counter c, uint64_t k)
{
	/* relaxed: a statistic written only by this shard's reactor */
	__atomic_store_n(&s->ctr[c], s->ctr[c] + k, __ATOMIC_RELAXED);
}

uint64_t hwd_shard_counter_get(const hwd_shard *s, hwd_shard_counter c)
{
	/* relaxed: a monotonic statistic; orders nothing */
	return __atomic_load_n(&s->ctr[c], __ATOMIC_RELAXED);
}

/* ---- owners ---------------------------------------------------------------
 *
 * Every part array of the multi-partition messages starts with its hw_tp
 * (hw_fetch_part, hw_fetch_resp_part, hw_ofe_part, hw_ofe_resp_part). */

typedef struct parts_view {
	const uint8_t *base;
	size_t elem;
	uint16_t n;
} parts_view;

static int parts_of(const hw_msg *m, parts_view *v)
{
	switch (m->type) {
	case HW_MSG_FETCH:
		*v = (parts_view){ (const uint8_t *)m->u.fetch.parts, sizeof(hw_fetch_part), m->u.fetch.n_parts };
		return 1;
	case HW_MSG_FETCH_RESP:
		*v = (parts_view){ (const uint8_t *)m->u.fetch_resp.parts, sizeof(hw_fetch_resp_part),
				   m->u.fetch_resp.n_parts };
		return 1;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		*v = (parts_view){ (const uint8_t *)m->u.ofe.parts, sizeof(hw_ofe_part), m->u.ofe.n_parts };
		return 1;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		*v = (parts_view){ (const uint8_t *)m->u.ofe_resp.parts, sizeof(hw_ofe_resp_part),
				   m->u.ofe_resp.n_parts };
		return 1;
	}
	return 0;
}

static void set_parts(hw_msg *m, const void *parts, uint16_t n)
{
	switch (m->type) {
	case HW_MSG_FETCH:
		m->u.fetch.parts = parts;
		m->u.fetch.n_parts = n;
		break;
	case HW_MSG_FETCH_RESP:
		m->u.fetch_resp.parts = parts;
		m->u.fetch_resp.n_parts = n;
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		m->u.ofe.parts = parts;
		m->u.ofe.n_parts = n;
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		m->u.ofe_resp.parts = parts;
		m->u.ofe_resp.n_parts = n;
		break;
	}
}

static int tp_owner(const hwd_node *n, hw_tp tp)
{
	return hwd_shard_of(tp.topic_id, tp.partition, n->n_reactors);
}

/* The reactor that must handle m: partition messages go to the partition's
 * owner, everything else (control plane, admin, controller-bound) to
 * reactor 0. -1: the parts belong to several reactors. `self` for a
 * message without parts (answered wherever it is). */
static int msg_owner(const hwd_node *n, const hw_msg *m, int self)
{
	parts_view v;
	switch (m->type) {
	case HW_MSG_PRODUCE:
		return tp_owner(n, m->u.produce.tp);
	case HW_MSG_ALTER_PARTITION_RESP:
		return tp_owner(n, m->u.alter_resp.tp);
	case HW_MSG_PARTITION_STATE:
		return tp_owner(n, m->u.pstate.tp);
	}
	if (!parts_of(m, &v))
		return 0;
	if (v.n == 0 || !v.base)
		return self;
	int owner = tp_owner(n, *(const hw_tp *)v.base);
	for (uint16_t i = 1; i < v.n; i++)
		if (tp_owner(n, *(const hw_tp *)(v.base + i * v.elem)) != owner)
			return -1;
	return owner;
}

/* ---- handing frames over ---------------------------------------------- */

static void deliver_local(hwd_shard *s, const hw_msg *m)
{
	count(s, HWD_SC_LOCAL, 1);
	if (s->idx == 0) {
		hwd_node_dispatch0(s->node, m);
		return;
	}
	/* receipt time of our RX burst; 0 (= now) for frames from the mailbox */
	int rc = hw_rm_on_msg_at(s->rm, m, s->rx_burst_ns);
	if (rc < 0 && rc != -EPROTO)
		HW_LOG(DEBUG, "shard", "reactor %d: %s from %d not handled: %s", s->idx,
		       hw_msg_type_name(m->type), m->src, strerror(-rc));
}

/* Re-encode m as wire frame(s) and post them to reactor `owner` as `kind`
 * (FRAME: handle it; SEND: send it). 0, or -EAGAIN when a frame was lost
 * (counted). */
static int post_frames(hwd_shard *s, int owner, const hw_msg *m, const struct sockaddr_in *from, int kind)
{
	hwd_node *n = s->node;
	hw_wire_split sp = { 0 };
	int is_split = m->type == HW_MSG_FETCH_RESP;
	do {
		int len = hw_wire_encode(&s->fwd_tx, m, is_split ? &sp : NULL, s->scratch, HW_WIRE_MAX_FRAME);
		if (len < 0) {
			count(s, HWD_SC_FORWARD_LOST, 1);
			HW_LOG(WARN, "shard", "reactor %d: cannot re-encode %s for reactor %d: %s", s->idx,
			       hw_msg_type_name(m->type), owner, strerror(-len));
			return len == -EMSGSIZE ? -EMSGSIZE : -EINVAL;
		}
		hwd_xmsg *x = malloc(sizeof(*x) + (size_t)len);
		if (!x) {
			count(s, HWD_SC_FORWARD_LOST, 1);
			return -EAGAIN;
		}
		memset(x, 0, sizeof(*x));
		x->kind = (uint16_t)kind;
		if (from) {
			x->has_from = 1;
			x->from = *from;
		}
		x->len = (uint32_t)len;
		memcpy(x->frame, s->scratch, (size_t)len);
		if (hw_mailbox_post(n->mbox, s->idx, owner, x) < 0) {
			free(x);
			count(s, HWD_SC_FORWARD_LOST, 1);
			HW_LOG(DEBUG, "shard", "reactor %d: mailbox to reactor %d full: %s dropped", s->idx, owner,
			       hw_msg_type_name(m->type));
			return -EAGAIN;
		}
		count(s, kind == HWD_XMSG_SEND ? HWD_SC_SENT_VIA_0 : HWD_SC_FORWARDED_OUT, 1);
	} while (is_split && !sp.done);
	return 0;
}

static void forward(hwd_shard *s, int owner, const hw_msg *m, const struct sockaddr_in *from)
{
	(void)post_frames(s, owner, m, from, HWD_XMSG_FRAME);
}

/* A DPDK data reactor's hw_net: reactor 0 sends for it (hwd_shard.h). */
static int funnel_send(hw_net *nt, const hw_msg *m)
{
	hwd_shard *s = (hwd_shard *)((char *)nt - offsetof(hwd_shard, funnel));
	return post_frames(s, 0, m, NULL, HWD_XMSG_SEND);
}

/* A DPDK data reactor's rm net: our own queue; control types go to
 * reactor 0 (dmux -> funnel); a peer that did not connect our queue, or
 * one only reactor 0 has learned, is reached through reactor 0 too. */
static int shard_dpdk_send(hw_net *nt, const hw_msg *m)
{
	hwd_shard *s = (hwd_shard *)((char *)nt - offsetof(hwd_shard, dnet));
	int rc = hw_net_send(hw_netmux_net(s->dmux), m);
	if (rc == -EXDEV || rc == -EHOSTUNREACH) {
		count(s, HWD_SC_TX_FALLBACK, 1);
		return post_frames(s, 0, m, NULL, HWD_XMSG_SEND);
	}
	return rc;
}

/* A data reactor's rm net: answers to the Kafka listener are handed to
 * reactor 0 (hwd_kafka.h), the rest go out as before. */
static int shard_kafka_send(hw_net *nt, const hw_msg *m)
{
	hwd_shard *s = (hwd_shard *)((char *)nt - offsetof(hwd_shard, knet));
	if (hwd_kafka_is_dst(m))
		return post_frames(s, 0, m, NULL, HWD_XMSG_FRAME);
	return hw_net_send(s->knet_inner, m);
}

/* Parts of several reactors: one message per owner, each with its parts. */
static void split_route(hwd_shard *s, const hw_msg *m, const struct sockaddr_in *from)
{
	hwd_node *n = s->node;
	parts_view v;
	if (!parts_of(m, &v))
		return;
	uint8_t *buf = malloc(v.elem * v.n);
	if (!buf) {
		count(s, HWD_SC_FORWARD_LOST, 1);
		return;
	}
	count(s, HWD_SC_SPLIT, 1);
	for (int r = 0; r < n->n_reactors; r++) {
		uint16_t k = 0;
		for (uint16_t i = 0; i < v.n; i++) {
			const uint8_t *p = v.base + i * v.elem;
			if (tp_owner(n, *(const hw_tp *)p) == r)
				memcpy(buf + (size_t)k++ * v.elem, p, v.elem);
		}
		if (!k)
			continue;
		hw_msg sub = *m;
		set_parts(&sub, buf, k);
		if (r == s->idx)
			deliver_local(s, &sub);
		else
			forward(s, r, &sub, from);
	}
	free(buf);
}

void hwd_shard_route(hwd_shard *s, const hw_msg *m, const struct sockaddr_in *from)
{
	hwd_node *n = s->node;
	int owner = msg_owner(n, m, s->idx);
	if (s->idx == 0 && m->type == HW_MSG_PARTITION_STATE && owner != 0)
		hwd_broker_note_partition_state(n, m);  /* reactor 0 keeps the routes */
	if (owner == s->idx)
		deliver_local(s, m);
	else if (owner >= 0)
		forward(s, owner, m, from);
	else
		split_route(s, m, from);
}

void hwd_shard_on_data_msg(void *ctx, const hw_msg *m)
{
	hwd_shard *s = ctx;
	struct sockaddr_in from;
	int have = s->data && hw_udp_rx_peer(s->data, &from) == 0;
	hwd_node *n = s->node;
	/* request timing (hwd_node.c on_msg); n->metrics is set before the
	 * data reactors start and cleared after they stop */
	if (s->idx == 0 && !n->rx_burst_ns && n->metrics)
		n->rx_burst_ns = hw_clock_ns(n->clock);
	else if (s->idx > 0 && !s->rx_burst_ns && n->metrics)
		s->rx_burst_ns = hw_clock_ns(n->clock);
	hwd_shard_route(s, m, have ? &from : NULL);
}

static void on_xmsg(void *ctx, int from_reactor, void *msg)
{
	hwd_shard *s = ctx;
	hwd_xmsg *x = msg;
	switch (x->kind) {
	case HWD_XMSG_FRAME: {
		hw_wire_hdr h;
		hw_msg m;
		hw_wire_drop why;
		count(s, HWD_SC_FORWARDED_IN, 1);
		hw_wire_arena_init(&s->arena, s->arena_buf, HW_WIRE_ARENA_SIZE);
		if (hw_wire_decode(x->frame, x->len, s->node->cfg->cluster_id, &s->arena, &h, &m, &why, NULL)) {
			count(s, HWD_SC_FORWARD_LOST, 1);
			HW_LOG(WARN, "shard", "reactor %d: frame from reactor %d does not decode: %s", s->idx,
			       from_reactor, hw_wire_drop_name(why));
			break;
		}
		if (x->has_from && s->data)
			(void)hw_udp_learn(s->data, m.src, &x->from);
		deliver_local(s, &m);
		break;
	}
	case HWD_XMSG_SEND: {
		/* reactor 0 only: a data reactor's outbound frame (DPDK) */
		hw_wire_hdr h;
		hw_msg m;
		hw_wire_drop why;
		hw_wire_arena_init(&s->arena, s->arena_buf, HW_WIRE_ARENA_SIZE);
		if (s->idx != 0 || !s->mux ||
		    hw_wire_decode(x->frame, x->len, s->node->cfg->cluster_id, &s->arena, &h, &m, &why, NULL)) {
			count(s, HWD_SC_FORWARD_LOST, 1);
			break;
		}
		int rc = hw_net_send(hw_netmux_net(s->mux), &m);
		if (rc < 0)
			HW_LOG(DEBUG, "shard", "sending %s to %d for reactor %d failed: %s", hw_msg_type_name(m.type),
			       m.dst, from_reactor, strerror(-rc));
		count(s, HWD_SC_SENT_FOR, 1);
		break;
	}
	case HWD_XMSG_BROKER_EPOCH:
		if (s->rm)
			hw_rm_set_broker_epoch(s->rm, x->value);
		break;
	case HWD_XMSG_ROUTE:
		if (s->data || s->dpdk) {
			int rc = s->data ? hw_udp_add_neighbour(s->data, x->node, x->ep)
					 : hw_dpdk_add_neighbour(s->dpdk, x->node, x->ep);
			HW_LOG(INFO, "shard", "reactor %d: data route to broker %d: %s%s", s->idx, x->node, x->ep,
			       rc < 0 ? " (not applied)" : "");
		}
		break;
	default:
		HW_LOG(WARN, "shard", "reactor %d: unknown cross-reactor message %u", s->idx, x->kind);
		break;
	}
	free(x);
}

static int poll_mailbox(void *arg)
{
	hwd_shard *s = arg;
	return hw_mailbox_drain(s->node->mbox, s->idx, on_xmsg, s, DRAIN_BATCH);
}

int hwd_shard_add_mailbox_poller(hwd_shard *s)
{
	if (!s->node->mbox)
		return 0;
	return hw_reactor_add_poller(s->reactor, "mailbox", poll_mailbox, NULL, s);
}

static int post_typed(hwd_node *n, int to, hwd_xmsg *x)
{
	int rc = hw_mailbox_post(n->mbox, 0, to, x);
	if (rc < 0) {
		HW_LOG(WARN, "shard", "reactor 0: %s for reactor %d lost: %s", hwd_xmsg_kind_name(x->kind), to,
		       strerror(-rc));
		free(x);
		count(&n->shards[0], HWD_SC_FORWARD_LOST, 1);
	}
	return rc;
}

void hwd_shards_set_broker_epoch(hwd_node *n, int64_t epoch)
{
	for (int k = 1; k < n->n_reactors; k++) {
		hwd_xmsg *x = calloc(1, sizeof(*x));
		if (!x)
			continue;
		x->kind = HWD_XMSG_BROKER_EPOCH;
		x->value = epoch;
		post_typed(n, k, x);
	}
}

int hwd_shards_add_route(hwd_node *n, int32_t node, const char *ep)
{
	if (!strncmp(ep, "dpdk:", 5)) {
		/* DPDK (routes learned from metadata): the same route on every
		 * reactor's instance, each adding it on its own thread */
		int rc = n->dpdk ? hw_dpdk_add_neighbour(n->dpdk, node, ep) : -EINVAL;
		for (int k = 1; rc == 0 && k < n->n_reactors; k++) {
			hwd_xmsg *x = calloc(1, sizeof(*x));
			if (!x)
				return -ENOMEM;
			x->kind = HWD_XMSG_ROUTE;
			x->node = node;
			snprintf(x->ep, sizeof(x->ep), "%s", ep);
			post_typed(n, k, x);
		}
		return rc;
	}
	/* "udp:HOST:P0/P1/...": the base endpoint, then the other reactors' ports */
	char base[HWD_EP_MAX];
	snprintf(base, sizeof(base), "%s", ep);
	char *slash = strchr(base, '/');
	int32_t ports[HWD_MAX_REACTORS];
	int n_ports = 0;
	if (slash) {
		*slash = 0;
		const char *q = slash + 1;
		while (*q && n_ports < HWD_MAX_REACTORS - 1) {
			char *end;
			long v = strtol(q, &end, 10);
			if (end == q || v <= 0 || v > 65535 || (*end && *end != '/'))
				return -EINVAL;
			ports[n_ports++] = (int32_t)v;
			q = *end ? end + 1 : end;
		}
	}
	const char *colon = strrchr(base, ':');
	if (!colon || strncmp(base, "udp:", 4))
		return -EINVAL;
	int rc = hw_udp_add_neighbour(n->data, node, base);
	if (rc < 0)
		return rc;
	int same = n_ports + 1 == n->n_reactors;
	for (int k = 1; k < n->n_reactors; k++) {
		hwd_xmsg *x = calloc(1, sizeof(*x));
		if (!x)
			return -ENOMEM;
		x->kind = HWD_XMSG_ROUTE;
		x->node = node;
		if (same)  /* the peer's reactor k owns what ours does */
			snprintf(x->ep, sizeof(x->ep), "%.*s:%d", (int)(colon - base), base, ports[k - 1]);
		else       /* its reactor 0 hands frames on */
			snprintf(x->ep, sizeof(x->ep), "%s", base);
		post_typed(n, k, x);
	}
	return 0;
}

/* ---- logs --------------------------------------------------------------- */

static int shard_open_store(void *ctx, hw_tp tp, const char *topic, hw_store **out)
{
	hwd_shard *s = ctx;
	hwd_log *log = NULL;
	int rc = hwd_broker_open_log(s->node, s->idx, tp, topic, &log);
	if (rc < 0)
		return rc;
	if (s->n_logs == s->cap_logs) {
		int cap = s->cap_logs ? s->cap_logs * 2 : 16;
		hwd_log **nl = realloc(s->logs, (size_t)cap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;  /* the log stays in the node's list, closed at exit */
		s->logs = nl;
		s->cap_logs = cap;
	}
	s->logs[s->n_logs++] = log;
	*out = hwd_log_store(log);
	return 0;
}

int64_t hwd_shard_throttle_share(int64_t rate, int k, int n)
{
	if (rate == HW_QUOTA_UNLIMITED || rate < 0 || n <= 1)
		return rate;
	/* the remainder goes to the first reactors: the shares add up to rate */
	return rate / n + (k < rate % n ? 1 : 0);
}

void hwd_shard_rm_config(hwd_shard *s, hw_rm_config *rc)
{
	*rc = s->node->cfg->rm;
	rc->open_store = shard_open_store;
	rc->store_ctx = s;
	rc->owner_reactor = s->idx;  /* shard k's rm runs on reactor k alone */
	rc->rxhold = &s->rxhold;     /* where our DPDK instance announces its mbufs */
	/* Kafka's replication throttle is per broker: each reactor's quota
	 * gets its share of the rate (hwd_shard.h "Replication throttle") */
	int nr = s->node->n_reactors;
	rc->leader_replication_throttled_rate =
		hwd_shard_throttle_share(rc->leader_replication_throttled_rate, s->idx, nr);
	rc->follower_replication_throttled_rate =
		hwd_shard_throttle_share(rc->follower_replication_throttled_rate, s->idx, nr);
}

/* The replica manager polls a store only while its durable end trails the
 * LEO (fsync-before-ack); with the page-cache policy the appended bytes
 * still wait in the log's tail buffer for a poll to submit them. Polling
 * every log of the reactor once per loop turn puts them in the page cache
 * promptly, so a SIGKILL loses nothing the kernel had (Kafka's default
 * guarantee). */
static int poll_logs(void *arg)
{
	hwd_shard *s = arg;
	int work = 0;
	for (int i = 0; i < s->n_logs; i++) {
		int rc = hwd_log_poll(s->logs[i]);
		if (rc > 0)
			work += rc;
	}
	return work;
}

/* While a log has I/O in flight the reactor may not sleep long: a write
 * completion the kernel hands back as task work (COOP_TASKRUN, see
 * hw_log_io_inflight) is posted — and the log's wake eventfd written — only
 * at this thread's next syscall, so nothing would wake a reactor asleep in
 * epoll for its completion. Poll again after HWD_LOG_INFLIGHT_POLL_NS. */
#define HWD_LOG_INFLIGHT_POLL_NS 50000LL
static int64_t deadline_logs(void *arg)
{
	hwd_shard *s = arg;
	for (int i = 0; i < s->n_logs; i++)
		if (hwd_log_io_inflight(s->logs[i]))
			return hw_reactor_now_ns() + HWD_LOG_INFLIGHT_POLL_NS;
	return INT64_MAX;
}

int hwd_shard_add_log_poller(hwd_shard *s)
{
	return hw_reactor_add_poller(s->reactor, "partition-logs", poll_logs, deadline_logs, s);
}

/* ---- life cycle ---------------------------------------------------------- */

static int shard_buffers(hwd_shard *s, hwd_node *n, int idx)
{
	s->node = n;
	s->idx = idx;
	s->log_efd = -1;
	s->fwd_tx.cluster_id = n->cfg->cluster_id;
	s->fwd_tx.incarnation = hw_wire_new_incarnation();
	if (n->cfg->n_reactors <= 1)
		return 0;
	s->arena_buf = malloc(HW_WIRE_ARENA_SIZE);
	s->scratch = malloc(HW_WIRE_MAX_FRAME);
	if (!s->arena_buf || !s->scratch)
		return -ENOMEM;
	if (pthread_mutex_init(&s->snap_lock, NULL))
		return -ENOMEM;
	s->snap_lock_ok = 1;
	return 0;
}

int hwd_shards_alloc(hwd_node *n)
{
	int nr = n->cfg->n_reactors > 0 ? n->cfg->n_reactors : 1;
	n->shards = calloc((size_t)nr, sizeof(*n->shards));
	if (!n->shards)
		return -ENOMEM;
	n->n_reactors = nr;
	if (pthread_mutex_init(&n->plog_lock, NULL))
		return -ENOMEM;
	n->plog_lock_ok = 1;
	for (int k = 0; k < nr; k++) {
		int rc = shard_buffers(&n->shards[k], n, k);
		if (rc < 0)
			return rc;
	}
	if (nr > 1) {
		int rc = hw_mailbox_create(nr, MAILBOX_SLOTS, &n->mbox);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Each transport poll is one RX burst: hwd_shard_on_data_msg stamps its
 * first message; messages delivered otherwise (mailbox) are timed from
 * their start. */
static int poll_data(void *arg)
{
	hwd_shard *s = arg;
	s->rx_burst_ns = 0;
	int rc = hw_udp_poll(s->data);
	s->rx_burst_ns = 0;
	return rc;
}
static int poll_rm(void *arg) { return hw_rm_poll(((hwd_shard *)arg)->rm); }
static int64_t deadline_rm(void *arg) { return hw_rm_next_deadline_ns(((hwd_shard *)arg)->rm); }

/* The eventfd this reactor's logs signal on write completions. */
static int shard_log_efd(hwd_shard *s)
{
	s->log_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->log_efd < 0) {
		HW_LOG(WARN, "shard", "reactor %d: eventfd: %s (log completions are seen on the sleep cap)",
		       s->idx, strerror(errno));
		return 0;
	}
	return hw_reactor_add_wait_fd(s->reactor, s->log_efd, 1, NULL, NULL, NULL);
}

static int poll_dpdk(void *arg)
{
	hwd_shard *s = arg;
	s->rx_burst_ns = 0;
	int rc = hw_dpdk_poll(s->dpdk);
	s->rx_burst_ns = 0;
	return rc;
}

/* DPDK: our own queue on every port (hwd_shard.h "DPDK"). */
static int shard_init_dpdk(hwd_node *n, hwd_shard *s)
{
	s->funnel.send = funnel_send;
	s->dnet.send = shard_dpdk_send;
	int rc = hwd_node_open_dpdk_queue(n, (uint16_t)s->idx, hwd_shard_on_data_msg, s, &s->dpdk);
	if (rc < 0)
		return rc;
	s->dmux = hw_netmux_create(hw_dpdk_net(s->dpdk));
	if (!s->dmux)
		return -ENOMEM;
	rc = hw_netmux_route_control_types(s->dmux, &s->funnel);
	if (rc < 0)
		return rc;
	rc = hw_reactor_add_poller(s->reactor, "data-dpdk", poll_dpdk, NULL, s);
	if (rc < 0)
		return rc;
	int w = hw_dpdk_add_wait_sources(s->dpdk, s->reactor);
	if (w < 0)
		return w;
	rc = shard_log_efd(s);
	if (rc < 0)
		return rc;
	hw_rm_config rmc;
	hwd_shard_rm_config(s, &rmc);
	rmc.stores_signal_completions = s->log_efd >= 0;
	s->knet.send = shard_kafka_send;
	s->knet_inner = &s->dnet;
	rc = hw_rm_create(&rmc, n->clock, &s->knet, &s->rm);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: replica manager of reactor %d: %s\n", n->cfg->node_id, s->idx,
			strerror(-rc));
		return rc;
	}
	if (n->broker_epoch >= 0)
		hw_rm_set_broker_epoch(s->rm, n->broker_epoch);
	rc = hwd_shard_add_mailbox_poller(s);
	if (rc == 0)
		rc = hw_reactor_add_poller(s->reactor, "replica-manager", poll_rm, deadline_rm, s);
	if (rc == 0)
		rc = hwd_shard_add_log_poller(s);
	if (rc == 0)
		rc = hwd_shard_add_publish_poller(s);
	return rc;
}

static int shard_init(hwd_node *n, hwd_shard *s)
{
	hwd_config *cfg = n->cfg;
	hw_reactor_cfg rc_cfg = { .id = s->idx, .cpu = cfg->reactor_cpus[s->idx],
				  .idle = (hw_idle_strategy)cfg->idle_strategy,
				  .spin_us = (uint32_t)cfg->idle_spin_us,
				  .spin_max_us = (uint32_t)cfg->idle_spin_max_us,
				  .sleep_min_us = (uint32_t)cfg->idle_sleep_min_us,
				  .sleep_max_us = (uint32_t)cfg->idle_sleep_max_us };
	s->reactor = hw_reactor_create(&rc_cfg);
	if (!s->reactor)
		return -ENOMEM;
	int rc = hw_mailbox_attach(n->mbox, s->idx, s->reactor);
	if (rc < 0)
		return rc;
	if (cfg->transport_dpdk)
		return shard_init_dpdk(n, s);
	/* our data socket: the host of hiwater.data.listen, an ephemeral port */
	hw_endpoint ep;
	char listen[HWD_EP_MAX];
	if (hw_endpoint_parse(cfg->data_listen, &ep) || ep.kind != HW_EP_UDP)
		return -EINVAL;
	char host[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &ep.udp.sin_addr, host, sizeof(host));
	snprintf(listen, sizeof(listen), "udp:%s:0", host);
	hw_udp_cfg uc = { .listen = listen, .cluster_id = cfg->cluster_id, .self_id = cfg->node_id,
			  .on_msg = hwd_shard_on_data_msg, .ctx = s, .stream = (uint8_t)s->idx,
			  .owner_reactor = s->idx };
	int err = 0;
	s->data = hw_udp_create(&uc, &err);
	if (!s->data) {
		fprintf(stderr, "hiwaterd: node %d: cannot open the data endpoint of reactor %d (%s): %s\n",
			cfg->node_id, s->idx, listen, strerror(err < 0 ? -err : EINVAL));
		return err < 0 ? err : -EADDRNOTAVAIL;
	}
	for (int i = 0; i < cfg->n_data_nb; i++)
		(void)hw_udp_add_neighbour(s->data, cfg->data_nb[i].node, cfg->data_nb[i].ep);
	/* controller-bound messages of this reactor's rm (AlterPartition) go
	 * out through its own socket */
	for (int i = 0; i < cfg->n_voters; i++) {
		rc = hw_udp_add_neighbour(s->data, cfg->voters[i].node, cfg->voters[i].ep);
		if (rc < 0)
			return rc;
	}
	rc = shard_log_efd(s);
	if (rc < 0)
		return rc;
	hw_rm_config rmc;
	hwd_shard_rm_config(s, &rmc);
	rmc.stores_signal_completions = s->log_efd >= 0;
	s->knet.send = shard_kafka_send;
	s->knet_inner = hw_udp_net(s->data);
	rc = hw_rm_create(&rmc, n->clock, &s->knet, &s->rm);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: replica manager of reactor %d: %s\n", cfg->node_id, s->idx,
			strerror(-rc));
		return rc;
	}
	if (n->broker_epoch >= 0)
		hw_rm_set_broker_epoch(s->rm, n->broker_epoch);
	rc = hw_reactor_add_poller(s->reactor, "data-udp", poll_data, NULL, s);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(s->reactor, hw_udp_wait_fd(s->data), 1, NULL, NULL, NULL);
	if (rc == 0)
		rc = hwd_shard_add_mailbox_poller(s);
	if (rc == 0)
		rc = hw_reactor_add_poller(s->reactor, "replica-manager", poll_rm, deadline_rm, s);
	if (rc == 0)
		rc = hwd_shard_add_log_poller(s);
	if (rc == 0)
		rc = hwd_shard_add_publish_poller(s);
	return rc;
}

int hwd_shards_init(hwd_node *n)
{
	for (int k = 1; k < n->n_reactors; k++) {
		int rc = shard_init(n, &n->shards[k]);
		if (rc < 0)
			return rc;
	}
	if (n->n_reactors > 1) {
		char cpus[96];
		size_t off = 0;
		cpus[0] = 0;
		for (int k = 0; k < n->n_reactors && off < sizeof(cpus); k++)
			off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d", k ? "," : "",
						n->cfg->reactor_cpus[k]);
		HW_LOG(INFO, "shard", "broker %d: %d reactors on CPUs %s; partition p of topic t on reactor "
		       "(t + p) mod %d", n->cfg->node_id, n->n_reactors, cpus, n->n_reactors);
	}
	return 0;
}

int hwd_shards_start(hwd_node *n)
{
	for (int k = 1; k < n->n_reactors; k++) {
		int rc = hw_reactor_start(n->shards[k].reactor);
		if (rc < 0) {
			HW_LOG(ERROR, "shard", "cannot start reactor %d: %s", k, strerror(-rc));
			return rc;
		}
		n->n_started = k;
	}
	return 0;
}

void hwd_shards_stop(hwd_node *n)
{
	for (int k = 1; k <= n->n_started && k < n->n_reactors; k++) {
		hw_reactor_stop(n->shards[k].reactor);
		hw_reactor_join(n->shards[k].reactor);
	}
	for (int k = 0; k < n->n_reactors && n->n_reactors > 1; k++) {
		hwd_shard *s = &n->shards[k];
		hw_reactor_stats rs;
		hw_reactor_get_stats(s->reactor ? s->reactor : n->reactor, &rs);
		HW_LOG(INFO, "shard", "reactor %d: %llu iterations, %llu busy, %d partition logs, frames forwarded "
		       "out %llu in %llu lost %llu, split %llu", k, (unsigned long long)rs.iterations,
		       (unsigned long long)rs.busy_iterations, s->n_logs,
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_FORWARDED_OUT),
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_FORWARDED_IN),
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_FORWARD_LOST),
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_SPLIT));
	}
	n->n_started = 0;
}

static void free_xmsg(void *m) { free(m); }

void hwd_shards_fini(hwd_node *n)
{
	if (!n->shards)
		return;
	for (int k = 0; k < n->n_reactors; k++) {
		hwd_shard *s = &n->shards[k];
		if (k > 0) {
			if (s->log_efd >= 0)
				close(s->log_efd);
			if (s->data)
				hw_udp_destroy(s->data);
			if (s->dmux)
				hw_netmux_destroy(s->dmux);
			if (s->dpdk)
				hw_dpdk_destroy(s->dpdk);   /* before reactor 0's: it owns the ports */
			if (s->reactor)
				hw_reactor_destroy(s->reactor);
		}
		free(s->logs);
		free(s->arena_buf);
		free(s->scratch);
		free(s->snap);
		free(s->pub);
		if (s->snap_lock_ok)
			pthread_mutex_destroy(&s->snap_lock);
	}
	hw_mailbox_destroy(n->mbox, free_xmsg);
	n->mbox = NULL;
	free(n->shards);
	n->shards = NULL;
	if (n->plog_lock_ok)
		pthread_mutex_destroy(&n->plog_lock);
	n->plog_lock_ok = 0;
}
