/* hwd_shard.c — a process's reactors: names and counters, the RX entry
 * point and routing (hwd_route.h decides), handing frames between
 * reactors, the reactors' send hooks.
 * Logs and life cycle are in hwd_shard_life.c; see the design note in
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
#include "hwd_route.h"
#include "hwd_shard.h"

#define DRAIN_BATCH     256

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

/* Hand m to reactor `owner` as `kind` (MSG: handle it; SEND: send it),
 * decoded (hwd_xmsg.h), with the sender's address. 0, or -EAGAIN /
 * -ENOMEM / -EMSGSIZE / -EINVAL when it was lost (counted). */
static int post_msg(hwd_shard *s, int owner, const hw_msg *m, const struct sockaddr_in *from, int kind)
{
	int err = 0;
	hwd_xmsg *x = hwd_xmsg_copy(m, kind, &s->fwd_tx, &err);
	if (!x) {
		count(s, HWD_SC_FORWARD_LOST, 1);
		HW_LOG(WARN, "shard", "reactor %d: cannot hand %s to reactor %d: %s", s->idx,
		       hw_msg_type_name(m->type), owner, strerror(-err));
		return err;
	}
	if (from) {
		x->has_from = 1;
		x->from = *from;
	}
	if (hw_mailbox_post(s->node->mbox, s->idx, owner, x) < 0) {
		hwd_xmsg_free(x);
		count(s, HWD_SC_FORWARD_LOST, 1);
		HW_LOG(DEBUG, "shard", "reactor %d: mailbox to reactor %d full: %s dropped", s->idx, owner,
		       hw_msg_type_name(m->type));
		return -EAGAIN;
	}
	count(s, kind == HWD_XMSG_SEND ? HWD_SC_SENT_VIA_0 : HWD_SC_FORWARDED_OUT, 1);
	return 0;
}

static void forward(hwd_shard *s, int owner, const hw_msg *m, const struct sockaddr_in *from)
{
	(void)post_msg(s, owner, m, from, HWD_XMSG_MSG);
}

/* A DPDK data reactor's hw_net: reactor 0 sends for it (hwd_shard.h). */
int hwd_shard_funnel_send(hw_net *nt, const hw_msg *m)
{
	hwd_shard *s = (hwd_shard *)((char *)nt - offsetof(hwd_shard, funnel));
	return post_msg(s, 0, m, NULL, HWD_XMSG_SEND);
}

/* A DPDK data reactor's rm net: our mux (our own queue; the CONTROL plane
 * -> funnel); a peer that did not connect our queue, or one only reactor 0
 * has learned, is reached through reactor 0 too. */
int hwd_shard_dpdk_send(hw_net *nt, const hw_msg *m)
{
	hwd_shard *s = (hwd_shard *)((char *)nt - offsetof(hwd_shard, dnet));
	int rc = hw_net_send(hw_netmux_net(s->mux), m);
	if (rc == -EXDEV || rc == -EHOSTUNREACH) {
		count(s, HWD_SC_TX_FALLBACK, 1);
		return post_msg(s, 0, m, NULL, HWD_XMSG_SEND);
	}
	return rc;
}

/* Reactors >= 1: a message for reactor 0 to handle (answers to the Kafka
 * listener: the mux routes HW_KSRV_NODE here). */
int hwd_shard_to0_send(hw_net *nt, const hw_msg *m)
{
	hwd_shard *s = (hwd_shard *)((char *)nt - offsetof(hwd_shard, to0));
	return post_msg(s, 0, m, NULL, HWD_XMSG_MSG);
}

/* Parts of several reactors: one message per owner, each with its parts. */
static void split_route(hwd_shard *s, const hw_msg *m, const struct sockaddr_in *from)
{
	hwd_node *n = s->node;
	hwd_parts v;
	if (!hwd_route_parts(m, &v) || !v.many)
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
			if (hwd_shard_of(((const hw_tp *)p)->topic_id, ((const hw_tp *)p)->partition,
					 n->n_reactors) == r)
				memcpy(buf + (size_t)k++ * v.elem, p, v.elem);
		}
		if (!k)
			continue;
		hw_msg sub = *m;
		hwd_route_set_parts(&sub, buf, k);
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
	int owner = hwd_route_reactor(m, n->n_reactors, s->idx);
	if (s->idx == 0 && m->type == HW_MSG_PARTITION_STATE && owner != 0)
		hwd_broker_note_partition_state(n, m);  /* reactor 0 keeps the routes */
	if (owner == s->idx)
		deliver_local(s, m);
	else if (owner >= 0)
		forward(s, owner, m, from);
	else
		split_route(s, m, from);
}

void hwd_shard_on_msg(void *ctx, const hw_msg *m)
{
	hwd_shard *s = ctx;
	hwd_node *n = s->node;
	struct sockaddr_in from;
	/* the sender's data address, for the owner to answer it from its own
	 * socket; control-socket peers are not data routes */
	int have = s->rx_via && s->rx_via == s->data && hw_udp_rx_peer(s->data, &from) == 0;
	/* The RX burst's receipt time, read once per non-empty poll (only
	 * while request latency is measured; n->metrics is set before the
	 * reactors >= 1 start and cleared after they stop): the rm times each
	 * request from it, so a message's wait behind the earlier ones of its
	 * burst counts as Kafka's request queue time. */
	if (!s->rx_burst_ns && n->metrics)
		s->rx_burst_ns = hw_clock_ns(n->clock);
	hwd_shard_route(s, m, have ? &from : NULL);
}

/* A message another reactor handed us: handle it (MSG) or, on reactor 0,
 * send it for that reactor (SEND). */
static void on_handoff(hwd_shard *s, int from_reactor, hwd_xmsg *x)
{
	hw_msg m;
	hw_wire_drop why;
	if (x->kind == HWD_XMSG_MSG)
		count(s, HWD_SC_FORWARDED_IN, 1);
	if (hwd_xmsg_msg(x, s->node->cfg->cluster_id, &s->arena, &m, &why) < 0) {
		count(s, HWD_SC_FORWARD_LOST, 1);
		HW_LOG(WARN, "shard", "reactor %d: frame from reactor %d does not decode: %s", s->idx,
		       from_reactor, hw_wire_drop_name(why));
		return;
	}
	if (x->kind == HWD_XMSG_MSG) {
		if (x->has_from && s->data)
			(void)hw_udp_learn(s->data, m.src, &x->from);
		deliver_local(s, &m);
		return;
	}
	if (s->idx != 0 || !s->mux) { /* SEND: reactor 0 only */
		count(s, HWD_SC_FORWARD_LOST, 1);
		return;
	}
	int rc = hw_net_send(hw_netmux_net(s->mux), &m);
	if (rc < 0)
		HW_LOG(DEBUG, "shard", "sending %s to %d for reactor %d failed: %s", hw_msg_type_name(m.type), m.dst,
		       from_reactor, strerror(-rc));
	count(s, HWD_SC_SENT_FOR, 1);
}

static void on_xmsg(void *ctx, int from_reactor, void *msg)
{
	hwd_shard *s = ctx;
	hwd_xmsg *x = msg;
	switch (x->kind) {
	case HWD_XMSG_MSG:
	case HWD_XMSG_SEND:
		on_handoff(s, from_reactor, x);
		break;
	case HWD_XMSG_BROKER_EPOCH:
		if (s->rm)
			hw_rm_set_broker_epoch(s->rm, x->value);
		break;
	case HWD_XMSG_RACK:
		if (s->rm)
			hw_rm_set_broker_rack(s->rm, x->node, x->ep);
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
	hwd_xmsg_free(x);
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
		hwd_xmsg_free(x);
		count(&n->shards[0], HWD_SC_FORWARD_LOST, 1);
	}
	return rc;
}

void hwd_shards_set_broker_epoch(hwd_node *n, int64_t epoch)
{
	for (int k = 1; k < n->n_reactors; k++) {
		hwd_xmsg *x = hwd_xmsg_new(HWD_XMSG_BROKER_EPOCH);
		if (!x)
			continue;
		x->value = epoch;
		post_typed(n, k, x);
	}
}

void hwd_shards_set_broker_rack(hwd_node *n, int32_t id, const char *rack)
{
	if (n->shards[0].rm)
		hw_rm_set_broker_rack(n->shards[0].rm, id, rack);
	for (int k = 1; k < n->n_reactors; k++) {
		hwd_xmsg *x = hwd_xmsg_new(HWD_XMSG_RACK);
		if (!x)
			continue;
		x->node = id;
		snprintf(x->ep, sizeof(x->ep), "%s", rack);
		post_typed(n, k, x);
	}
}

int hwd_shards_add_route(hwd_node *n, int32_t node, const char *ep)
{
	if (!strncmp(ep, "dpdk:", 5)) {
		/* DPDK (routes learned from metadata): the same route on every
		 * reactor's instance, each adding it on its own thread */
		int rc = n->shards[0].dpdk ? hw_dpdk_add_neighbour(n->shards[0].dpdk, node, ep) : -EINVAL;
		for (int k = 1; rc == 0 && k < n->n_reactors; k++) {
			hwd_xmsg *x = hwd_xmsg_new(HWD_XMSG_ROUTE);
			if (!x)
				return -ENOMEM;
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
	int rc = n->shards[0].data ? hw_udp_add_neighbour(n->shards[0].data, node, base) : -EINVAL;
	if (rc < 0)
		return rc;
	int same = n_ports + 1 == n->n_reactors;
	for (int k = 1; k < n->n_reactors; k++) {
		hwd_xmsg *x = hwd_xmsg_new(HWD_XMSG_ROUTE);
		if (!x)
			return -ENOMEM;
		x->node = node;
		if (same)  /* the peer's reactor k owns what ours does */
			snprintf(x->ep, sizeof(x->ep), "%.*s:%d", (int)(colon - base), base, ports[k - 1]);
		else       /* its reactor 0 hands frames on */
			snprintf(x->ep, sizeof(x->ep), "%s", base);
		post_typed(n, k, x);
	}
	return 0;
}
