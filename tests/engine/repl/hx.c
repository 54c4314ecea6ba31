#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hw_assert.h"
#include "hw_batch.h"
#include "hw_err.h"
#include "hw_log.h"
#include "hw_log_clean.h"
#include "hx_int.h"
#include "../../support/hw_test.h"
#include "hw_wire.h"
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t hx_rand(hx *h) { return hw_rng_next(&h->rng); }

static hx *clock_hx(hw_clock *c) { return (hx *)((char *)c - offsetof(hx, clock)); }
static int64_t sim_now_ns(hw_clock *c) { return clock_hx(c)->now * 1000000LL; }

/* ---- deep copy -------------------------------------------------------- */
static int copy_msg(const hw_msg *in, hx_qmsg *out)
{
	out->m = *in;
	out->blob = NULL;
	out->kept = 0;
	size_t need = 0;
	switch (in->type) {
	case HW_MSG_PRODUCE:
		need = in->u.produce.records_len;
		break;
	case HW_MSG_FETCH:
		need = (size_t)in->u.fetch.n_parts * sizeof(hw_fetch_part);
		break;
	case HW_MSG_FETCH_RESP:
		need = (size_t)in->u.fetch_resp.n_parts * sizeof(hw_fetch_resp_part);
		for (int i = 0; i < in->u.fetch_resp.n_parts; i++)
			need += in->u.fetch_resp.parts[i].records_len;
		need += (size_t)in->u.fetch_resp.n_preferred * sizeof(hw_fetch_preferred);
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		need = (size_t)in->u.ofe.n_parts * sizeof(hw_ofe_part);
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		need = (size_t)in->u.ofe_resp.n_parts * sizeof(hw_ofe_resp_part);
		break;
	case HW_MSG_BROKER_REGISTER:
		need = sizeof(hw_broker_register_req);
		break;
	case HW_MSG_BROKER_HEARTBEAT:
		need = sizeof(hw_broker_heartbeat_req);
		break;
	case HW_MSG_BROKER_HEARTBEAT_RESP:
		need = sizeof(hw_broker_heartbeat_resp);
		break;
	default:
		return 0;
	}
	if ((in->type == HW_MSG_BROKER_REGISTER || in->type == HW_MSG_BROKER_HEARTBEAT ||
	     in->type == HW_MSG_BROKER_HEARTBEAT_RESP) && !in->u.other)
		return 0; /* no body: delivered as sent (the controller counts it) */
	uint8_t *b = malloc(need ? need : 1);
	if (!b)
		return -ENOMEM;
	out->blob = b;
	switch (in->type) {
	case HW_MSG_PRODUCE:
		if (need) /* memcpy from NULL is undefined even for 0 bytes */
			memcpy(b, in->u.produce.records, need);
		out->m.u.produce.records = b;
		break;
	case HW_MSG_FETCH:
		if (need) /* memcpy from NULL is undefined even for 0 bytes */
			memcpy(b, in->u.fetch.parts, need);
		out->m.u.fetch.parts = (hw_fetch_part *)b;
		break;
	case HW_MSG_FETCH_RESP: {
		hw_fetch_resp_part *p = (hw_fetch_resp_part *)b;
		size_t n = in->u.fetch_resp.n_parts;
		if (n) /* a frame with only a preferred replica or a piece has no part array */
			memcpy(p, in->u.fetch_resp.parts, n * sizeof(*p));
		uint8_t *d = b + n * sizeof(*p);
		for (size_t i = 0; i < n; i++) {
			if (p[i].records_len)
				memcpy(d, p[i].records, p[i].records_len);
			p[i].records = d;
			p[i].records_ref = NULL;
			d += p[i].records_len;
		}
		out->m.u.fetch_resp.parts = p;
		if (in->u.fetch_resp.n_preferred) { /* preferred read replicas (docs/racks.md) */
			memcpy(d, in->u.fetch_resp.preferred, in->u.fetch_resp.n_preferred * sizeof(hw_fetch_preferred));
			out->m.u.fetch_resp.preferred = (const hw_fetch_preferred *)d;
		}
		break;
	}
	case HW_MSG_OFFSETS_FOR_EPOCH:
		if (need) /* memcpy from NULL is undefined even for 0 bytes */
			memcpy(b, in->u.ofe.parts, need);
		out->m.u.ofe.parts = (hw_ofe_part *)b;
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		if (need) /* memcpy from NULL is undefined even for 0 bytes */
			memcpy(b, in->u.ofe_resp.parts, need);
		out->m.u.ofe_resp.parts = (hw_ofe_resp_part *)b;
		break;
	default: /* admin bodies (u.other) */
		if (need) /* memcpy from NULL is undefined even for 0 bytes */
			memcpy(b, in->u.other, need);
		out->m.u.other = b;
		break;
	}
	return 0;
}

/* The in-flight queue is a binary min-heap on (due time, send order). */
static int qless(const hx_qmsg *a, const hx_qmsg *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_push(hx *h, const hx_qmsg *e)
{
	if (h->nq == h->capq) {
		h->capq = h->capq ? h->capq * 2 : 256;
		h->q = realloc(h->q, h->capq * sizeof(*h->q));
		HW_ASSERT(h->q);
	}
	size_t i = h->nq++;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (!qless(e, &h->q[up]))
			break;
		h->q[i] = h->q[up];
		i = up;
	}
	h->q[i] = *e;
}

static hx_qmsg heap_pop(hx *h)
{
	hx_qmsg top = h->q[0];
	hx_qmsg last = h->q[--h->nq];
	size_t i = 0, n = h->nq;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && qless(&h->q[c + 1], &h->q[c]))
			c++;
		if (!qless(&h->q[c], &last))
			break;
		h->q[i] = h->q[c];
		i = c;
	}
	if (n)
		h->q[i] = last;
	return top;
}

void hx_enqueue(hx *h, const hw_msg *m, int64_t delay)
{
	hx_qmsg e;
	if (copy_msg(m, &e) < 0)
		return;
	e.at = h->now + delay;
	e.seq = h->seq++;
	heap_push(h, &e);
}

static hx_req *req_find(hx *h, uint32_t corr)
{
	/* client correlation ids are 1, 2, 3... in request order */
	if (corr >= 1 && corr <= h->nreqs && h->reqs[corr - 1].corr == corr)
		return &h->reqs[corr - 1];
	return NULL;
}

/* Check at send time: an acks=all NONE answer only with HW past the batch. */
static void check_send(hx *h, hx_node *n, const hw_msg *m)
{
	if (m->type != HW_MSG_PRODUCE_RESP || m->dst < HX_CLIENT)
		return;
	hx_req *r = req_find(h, m->correlation_id);
	if (r)
		r->sends++;
	if (!r || m->u.produce_resp.error != 0)
		return;
	int copies = 0;
	for (int i = 1; i <= h->o.nodes; i++) {
		hw_store *st = h->nodes[i].stores[r->part];
		if (st && st->ops->log_end_offset(st) > m->u.produce_resp.base_offset + r->nrec - 1)
			copies++;
	}
	if (!r->r.copies_at_ack || copies < r->r.copies_at_ack)
		r->r.copies_at_ack = copies;
	if (r->acks != -1)
		return;
	hw_rm_part_info pi;
	if (hw_rm_partition_info(n->rm, m->u.produce_resp.tp, &pi) < 0)
		return;
	h->st.acks_all_ok++;
	if (pi.hw < m->u.produce_resp.base_offset + r->nrec)
		h->st.ack_violations++;
}

/* One message on the simulated link: dropped, delayed, maybe duplicated. */
static void link_send(hx *h, int a, int b, const hw_msg *m)
{
	h->st.sent++;
	if (h->cut[a][b] || (h->drop_pct && (int)(hx_rand(h) % 100) < h->drop_pct)) {
		h->st.dropped++;
		return;
	}
	int64_t d = h->dmin;
	if (h->dmax > h->dmin)
		d += (int64_t)(hx_rand(h) % (uint64_t)(h->dmax - h->dmin + 1));
	hx_enqueue(h, m, d);
	if (h->dup_pct && (int)(hx_rand(h) % 100) < h->dup_pct) {
		h->st.duplicated++;
		hx_enqueue(h, m, d + 1 + (int64_t)(hx_rand(h) % 5));
	}
}

/* hx_opts.wire_frame: a FETCH_RESP as the frames a transport would send,
 * each decoded back (as a receiver would) and sent on its own. */
static void wire_send(hx *h, int a, int b, const hw_msg *m)
{
	static uint8_t frame[HW_WIRE_MAX_FRAME], arena[HW_WIRE_ARENA_SIZE];
	hw_wire_tx tx = { .cluster_id = 1, .incarnation = 1 };
	hw_wire_split sp = { 0 };
	while (!sp.done) {
		int len = hw_wire_encode(&tx, m, &sp, frame, (size_t)h->o.wire_frame);
		HW_ASSERT(len > 0);
		hw_wire_arena ar;
		hw_wire_arena_init(&ar, arena, sizeof arena);
		hw_msg d;
		hw_wire_drop why;
		HW_ASSERT(hw_wire_decode(frame, (size_t)len, 1, &ar, NULL, &d, &why, NULL) == 0);
		link_send(h, a, b, &d);
	}
}

static int net_send(hw_net *net, const hw_msg *m)
{
	hx_node *n = (hx_node *)((char *)net - offsetof(hx_node, net));
	hx *h = n->h;
	int a = m->src & 0xff, b = m->dst & 0xff;
	if (n->id >= 1 && n->id <= HX_MAX_NODES && h->now < h->unreach_until[n->id][b]) {
		h->refused++;
		return -EHOSTUNREACH; /* refused: not sent, not checked as an answer */
	}
	check_send(h, n, m);
	if (h->o.wire_frame > 0 && m->type == HW_MSG_FETCH_RESP)
		wire_send(h, a, b, m);
	else
		link_send(h, a, b, m);
	return 0;
}

/* ---- stores ----------------------------------------------------------- */
/* Every node's partition logs are engine/broker's (hw_broker_logs.h): the
 * replica manager's store factory asks them, as the daemon's does, for
 * the log of "t<part>-0" in the node's log dir, over the simulated disk
 * (hw_broker_memfs.h: persistent memstores) or, with use_log, engine/log's
 * io_uring log in the temp dir. A restart recovers them from there. */
static hx_node *cfg_node(hx *h, int i, hw_rm_config *c);

static int hwlog_open(void *ctx, const char *dir, const char *topic, int reactor, hw_store **out)
{
	hx *h = ctx;
	(void)topic;
	(void)reactor;
	hw_log_config c;
	hw_log_config_default(&c);
	c.ring_entries = 32;
	if (h->o.log_compact)
		c.cleanup_policy = HW_LOG_CLEANUP_COMPACT;
	if (h->o.log_segment_bytes > 0)
		c.segment_bytes = h->o.log_segment_bytes;
	hw_log *log;
	int rc = hw_log_open(dir, &c, &log);
	if (rc == 0)
		*out = hw_log_store(log);
	return rc;
}

static void hwlog_adopt(void *ctx, hw_store *s, int reactor)
{
	(void)ctx;
	(void)s;
	(void)reactor; /* one thread, no reactor ids */
}

static int hwlog_flush(void *ctx, hw_store *s)
{
	(void)ctx;
	return hw_log_flush(hw_log_from_store(s));
}

static void hwlog_close(void *ctx, hw_store *s, int reactor)
{
	(void)ctx;
	(void)reactor;
	hw_log_close(hw_log_from_store(s));
}

static int hwlog_failed(void *ctx, hw_store *s)
{
	(void)ctx;
	return hw_log_get_state(hw_log_from_store(s)) == HW_LOG_STATE_FAILED;
}

/* The node's partition logs, recovered from its log dir. */
static void logs_start(hx *h, hx_node *n)
{
	char dir[300];
	const char *dirs[1] = { dir };
	hw_broker_logs_config c = { .dirs = dirs, .n_dirs = 1, .clock = &h->clock };
	if (h->o.use_log) {
		snprintf(dir, sizeof(dir), "%s/n%d", h->dir, n->id);
		c.fs = hw_broker_posix_fs;
		c.log = (hw_broker_log_ops){ .open = hwlog_open, .adopt = hwlog_adopt, .flush = hwlog_flush,
					     .close = hwlog_close, .failed = hwlog_failed, .ctx = h };
	} else {
		snprintf(dir, sizeof(dir), "/n%d/logs", n->id);
		c.fs = hw_broker_memfs_fs(h->memfs);
		c.log = hw_broker_memfs_log_ops(h->memfs);
	}
	HW_ASSERT(hw_broker_logs_create(&c, &n->logs) == 0);
	HW_ASSERT(hw_broker_logs_make_dirs(n->logs, NULL) == 0);
	HW_ASSERT(hw_broker_logs_recover(n->logs) == 0);
}

static int open_store(void *ctx, hw_tp tp, const char *topic, int is_new, hw_store **out)
{
	hx_node *n = ctx;
	int part = hx_part_of(n->h, tp);
	if (part < 0)
		return -EINVAL; /* not a topic of the harness's controller */
	int rc = hw_broker_logs_open(n->logs, 0, tp, topic, is_new, out);
	if (rc == 0)
		n->stores[part] = *out;
	return rc;
}

/* The topic was deleted (hw_rm delete_store): its log goes away. */
static void delete_store(void *ctx, hw_tp tp, const char *topic, hw_store *store)
{
	(void)topic;
	hx_node *n = ctx;
	int part = hx_part_of(n->h, tp);
	int rc = hw_broker_logs_delete(n->logs, store);
	HW_ASSERT(rc == 0);
	if (part >= 0 && n->stores[part] == store)
		n->stores[part] = NULL;
}

hx *hx_create(const hx_opts *o)
{
	hx *h = calloc(1, sizeof(*h));
	HW_ASSERT(h && o->nodes >= 1 && o->nodes <= HX_MAX_NODES);
	h->o = *o;
	const char *st = getenv("HX_STORE");
	if (st && strcmp(st, "log") == 0 && !o->memstore)
		h->o.use_log = 1;
	HW_ASSERT(!(h->o.use_log && o->memstore));
	if (h->o.use_log)
		HW_ASSERT(hw_test_tmpdir(h->dir, sizeof(h->dir), "repl") == 0);
	else
		HW_ASSERT(hw_broker_memfs_create(&h->memfs) == 0);
	h->rng.s = o->seed;
	h->clock.now_ns = sim_now_ns;
	h->now = 0;
	h->next_corr = 1;
	for (int i = 1; i <= o->nodes; i++) {
		hw_rm_config c;
		hx_node *n = cfg_node(h, i, &c);
		logs_start(h, n);
		int rc = hw_rm_create(&c, &h->clock, &n->net, &n->rm);
		HW_ASSERT(rc == 0);
	}
	h->ctl_node.h = h; /* the controller sends into the same simulated network */
	h->ctl_node.id = HX_CTL;
	h->ctl_node.net.send = net_send;
	hx_ctl_init(h);
	return h;
}

static hx_node *cfg_node(hx *h, int i, hw_rm_config *c)
{
	hx_node *n = &h->nodes[i];
	n->h = h;
	n->id = i;
	n->net.send = net_send;
	hw_rm_config_defaults(c);
	c->node_id = i;
	c->broker_epoch = -1; /* until registered (hx_ctl.c) */
	c->controller_id = HX_CTL;
	c->open_store = open_store;
	c->delete_store = delete_store;
	c->store_ctx = n;
	if (h->o.tweak)
		h->o.tweak(i, c, h->o.arg);
	return n;
}

void hx_rm_recreate(hx *h, int node)
{
	hw_rm_destroy(h->nodes[node].rm); /* closes the logs it claimed */
	hw_broker_logs_destroy(h->nodes[node].logs);
	if (h->o.use_log)
		memset(h->nodes[node].stores, 0, sizeof(h->nodes[node].stores)); /* closed */
	hw_rm_config c;
	hx_node *n = cfg_node(h, node, &c);
	logs_start(h, n); /* the process starts again: its logs recovered */
	int rc = hw_rm_create(&c, &h->clock, &n->net, &n->rm);
	HW_ASSERT(rc == 0);
}

void hx_restart(hx *h, int node)
{
	hx_rm_recreate(h, node);
	hx_agent_crashed(h, node);
}

int hx_uses_log(hx *h) { return h->o.use_log; }

void hx_destroy(hx *h)
{
	hx_ctl_fini(h);
	for (int i = 1; i <= h->o.nodes; i++) {
		hw_rm_destroy(h->nodes[i].rm); /* closes the stores (hw_log: flush + free) */
		hw_broker_logs_destroy(h->nodes[i].logs);
	}
	hw_broker_memfs_destroy(h->memfs); /* every memstore */
	if (h->o.use_log && h->dir[0])
		hw_test_rmtree(h->dir);
	for (size_t i = 0; i < h->nq; i++)
		free(h->q[i].blob);
	for (size_t i = 0; i < h->nheld; i++)
		free(h->held[i].blob);
	for (int i = 0; i < 8; i++)
		if (h->raws[i].valid)
			free(h->raws[i].q.blob);
	free(h->q);
	free(h->held);
	free(h->reqs);
	free(h);
}

int64_t hx_now(hx *h) { return h->now; }
hw_rm *hx_rm(hx *h, int node) { return h->nodes[node].rm; }
hw_store *hx_store(hx *h, int node, int part) { return h->nodes[node].stores[part]; }

uint8_t *hx_read_all(hx *h, int node, int part, int64_t upto, size_t *len)
{
	hw_store *s = h->nodes[node].stores[part];
	*len = 0;
	if (!s)
		return NULL;
	uint8_t *buf = NULL;
	size_t cap = 0;
	int64_t off = s->ops->log_start_offset(s);
	int64_t end = s->ops->log_end_offset(s);
	while (off < end && off < upto) {
		hw_store_read r;
		if (s->ops->read(s, off, 1 << 20, upto, &r) < 0 || r.len == 0)
			break;
		if (*len + r.len > cap) {
			cap = (*len + r.len) * 2;
			buf = realloc(buf, cap);
			HW_ASSERT(buf);
		}
		memcpy(buf + *len, r.data, r.len);
		*len += r.len;
		off = r.next_offset;
		if (r.ref && s->ops->release)
			s->ops->release(s, r.ref);
	}
	return buf;
}
void hx_get_stats(hx *h, hx_stats *out) { *out = h->st; }
void hx_set_step_hook(hx *h, void (*fn)(hx *, void *), void *arg)
{
	h->hook = fn;
	h->hook_arg = arg;
}

void hx_info(hx *h, int node, int part, hw_rm_part_info *out)
{
	hw_tp tp = hx_tp_of(h, part);
	if (hw_rm_partition_info(h->nodes[node].rm, tp, out) < 0)
		memset(out, 0, sizeof(*out));
}

/* ---- clients ---------------------------------------------------------- */
static hx_req *req_new(hx *h, int part, int16_t acks, int nrec)
{
	if (h->nreqs == h->capreqs) {
		h->capreqs = h->capreqs ? h->capreqs * 2 : 64;
		h->reqs = realloc(h->reqs, h->capreqs * sizeof(*h->reqs));
		HW_ASSERT(h->reqs);
	}
	hx_req *r = &h->reqs[h->nreqs++];
	memset(r, 0, sizeof(*r));
	r->corr = h->next_corr++;
	r->part = part;
	r->acks = acks;
	r->nrec = nrec;
	return r;
}

uint32_t hx_produce(hx *h, const hx_produce_req *q)
{
	int node = q->node, part = q->part, acks = q->acks, nrec = q->nrec;
	int32_t timeout_ms = q->timeout_ms ? q->timeout_ms : 30000;
	hw_record_in recs[256];
	char vals[256][24], keys[256][8];
	HW_ASSERT(nrec >= 1 && nrec <= 256);
	for (int i = 0; i < nrec; i++) {
		memset(&recs[i], 0, sizeof(recs[i]));
		int l = snprintf(vals[i], sizeof(vals[i]), "v%" PRIu64, hx_rand(h) % 1000000);
		recs[i].timestamp = h->now;
		recs[i].value = vals[i];
		recs[i].value_len = l;
		if (q->keyed) {
			recs[i].key_len = snprintf(keys[i], sizeof(keys[i]), "k%d", i % 100);
			recs[i].key = keys[i];
		}
	}
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	if (q->idem) {
		s.producer_id = q->idem->pid;
		s.producer_epoch = q->idem->epoch;
		s.base_sequence = q->idem->seq;
	}
	uint8_t buf[256 * 48 + 128]; /* values, and keys when keyed */
	ssize_t n = hw_batch_build(buf, sizeof(buf), &s, recs, (size_t)nrec);
	HW_ASSERT(n > 0);
	hx_req *r = req_new(h, part, (int16_t)acks, nrec);
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_PRODUCE;
	m.src = HX_CLIENT;
	m.dst = node;
	m.correlation_id = r->corr;
	m.u.produce.acks = (int16_t)acks;
	m.u.produce.timeout_ms = timeout_ms;
	m.u.produce.tp = hx_tp_of(h, part);
	m.u.produce.records = buf;
	m.u.produce.records_len = (uint32_t)n;
	hx_enqueue(h, &m, 0);
	return r->corr;
}

uint32_t hx_consume(hx *h, int node, int part, int64_t offset, int32_t max_wait_ms)
{
	hx_req *r = req_new(h, part, 0, 0);
	hw_fetch_part fp;
	memset(&fp, 0, sizeof(fp));
	fp.tp = hx_tp_of(h, part);
	fp.fetch_offset = offset;
	fp.current_leader_epoch = -1;
	fp.last_fetched_epoch = -1;
	fp.partition_max_bytes = 1 << 20;
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_FETCH;
	m.src = HX_CLIENT;
	m.dst = node;
	m.correlation_id = r->corr;
	m.u.fetch.replica_id = -1;
	m.u.fetch.replica_epoch = -1;
	m.u.fetch.max_wait_ms = max_wait_ms;
	m.u.fetch.min_bytes = 1;
	m.u.fetch.max_bytes = 1 << 20;
	m.u.fetch.n_parts = 1;
	m.u.fetch.parts = &fp;
	hx_enqueue(h, &m, 0);
	return r->corr;
}

const hx_resp *hx_resp_get(hx *h, uint32_t corr)
{
	hx_req *r = req_find(h, corr);
	return r && r->count ? &r->r : NULL;
}

int hx_resp_count(hx *h, uint32_t corr)
{
	hx_req *r = req_find(h, corr);
	return r ? r->count : 0;
}

static void client_recv(hx *h, const hw_msg *m)
{
	hx_req *r = req_find(h, m->correlation_id);
	if (!r)
		return;
	r->count++;
	r->r.corr = m->correlation_id;
	r->r.type = m->type;
	r->r.at_ms = h->now;
	r->r.acks = r->acks;
	r->r.nrec = r->nrec;
	if (m->type == HW_MSG_PRODUCE_RESP) {
		r->r.error = m->u.produce_resp.error;
		r->r.base_offset = m->u.produce_resp.base_offset;
	} else if (m->type == HW_MSG_FETCH_RESP && m->u.fetch_resp.n_parts >= 1) {
		const hw_fetch_resp_part *p = &m->u.fetch_resp.parts[0];
		r->r.error = p->error;
		r->r.hw = p->high_watermark;
		r->r.first_offset = -1;
		r->r.next_offset = -1;
		r->r.nrecords = 0;
		hw_batch_iter it;
		hw_batch_hdr hd;
		/* a compacted log's batches too (fillers: no records) */
		hw_batch_iter_init(&it, p->records, p->records_len, HW_BATCH_V_COMPACTED);
		while (hw_batch_iter_next(&it, &hd, NULL) == 1) {
			if (r->r.first_offset < 0)
				r->r.first_offset = hd.base_offset;
			r->r.next_offset = hw_batch_next_offset(&hd);
			r->r.nrecords += hd.record_count;
		}
		r->r.whole = it.rc == 0 && !it.partial && hw_batch_iter_rest_bytes(&it) == 0;
	}
}

int hx_answer_check(hx *h, int *unanswered)
{
	int multi = 0;
	*unanswered = 0;
	for (size_t i = 0; i < h->nreqs; i++) {
		const hx_req *r = &h->reqs[i];
		if (r->acks == 0 || r->nrec == 0)
			continue;
		if (r->sends == 0)
			(*unanswered)++;
		else if (r->sends > 1)
			multi++;
	}
	return multi;
}

void hx_send_raw(hx *h, const hw_msg *m) { hx_enqueue(h, m, 0); }

const hw_msg *hx_last_to(hx *h, int id, int type)
{
	for (int i = 0; i < 8; i++)
		if (h->raws[i].valid && h->raws[i].id == id && h->raws[i].type == type)
			return &h->raws[i].q.m;
	return NULL;
}

static void raw_recv(hx *h, hx_qmsg *q)
{
	int slot = -1;
	for (int i = 0; i < 8; i++)
		if (h->raws[i].valid && h->raws[i].id == q->m.dst && h->raws[i].type == q->m.type)
			slot = i;
	for (int i = 0; i < 8 && slot < 0; i++)
		if (!h->raws[i].valid)
			slot = i;
	if (slot < 0)
		slot = 0;
	if (h->raws[slot].valid)
		free(h->raws[slot].q.blob);
	h->raws[slot].valid = 1;
	h->raws[slot].id = q->m.dst;
	h->raws[slot].type = q->m.type;
	h->raws[slot].q = *q;
	q->blob = NULL; /* ownership moved */
}

/* ---- faults ----------------------------------------------------------- */
void hx_net_faults(hx *h, int drop, int dup, int dmin, int dmax)
{
	h->drop_pct = drop;
	h->dup_pct = dup;
	h->dmin = dmin;
	h->dmax = dmax;
}

void hx_net_cut(hx *h, int a, int b, int cut)
{
	h->cut[a & 0xff][b & 0xff] = (uint8_t)cut;
	h->cut[b & 0xff][a & 0xff] = (uint8_t)cut;
}

void hx_net_unreachable(hx *h, int from, int to, int64_t until_ms)
{
	HW_ASSERT(from >= 1 && from <= HX_MAX_NODES);
	h->unreach_until[from][to & 0xff] = until_ms;
}

uint64_t hx_net_refused(hx *h) { return h->refused; }

void hx_isolate(hx *h, int node, int iso)
{
	for (int i = 0; i < 256; i++)
		if (i != node)
			hx_net_cut(h, node, i, iso);
}

void hx_pause(hx *h, int node, int paused) { h->nodes[node].paused = paused; }
void hx_hold_to(hx *h, int node, int hold) { h->nodes[node].hold = hold; }

void hx_hold_keep(hx *h, int node)
{
	for (size_t i = 0; i < h->nheld; i++)
		if (h->held[i].m.dst == node && h->held[i].m.type == HW_MSG_FETCH_RESP)
			h->held[i].kept = 1;
	h->nodes[node].hold = 0;
}

static void deliver(hx *h, hx_qmsg *q);

int hx_release_to(hx *h, int node, int n)
{
	int done = 0;
	for (size_t i = 0; i < h->nheld && done < n;) {
		if (h->held[i].m.dst != node) {
			i++;
			continue;
		}
		hx_qmsg q = h->held[i];
		memmove(&h->held[i], &h->held[i + 1], (h->nheld - i - 1) * sizeof(*h->held));
		h->nheld--;
		int hold = h->nodes[node].hold;
		h->nodes[node].hold = 0;
		deliver(h, &q);
		h->nodes[node].hold = hold;
		done++;
	}
	return done;
}

/* ---- run -------------------------------------------------------------- */
static void deliver(hx *h, hx_qmsg *q)
{
	int dst = q->m.dst;
	static int trace = -1;
	if (trace < 0)
		trace = getenv("HX_TRACE") != NULL;
	if (trace) {
		fprintf(stderr, "%" PRId64 " %s %d->%d corr %u", h->now, hw_msg_type_name(q->m.type),
			q->m.src, q->m.dst, q->m.correlation_id);
		if (q->m.type == HW_MSG_FETCH_RESP)
			for (int i = 0; i < q->m.u.fetch_resp.n_parts; i++)
				fprintf(stderr, " [t%u e%d hw%" PRId64 " len%u div%d]",
					q->m.u.fetch_resp.parts[i].tp.topic_id, q->m.u.fetch_resp.parts[i].error,
					q->m.u.fetch_resp.parts[i].high_watermark,
					q->m.u.fetch_resp.parts[i].records_len,
					q->m.u.fetch_resp.parts[i].diverging_epoch);
		if (q->m.type == HW_MSG_FETCH)
			fprintf(stderr, " rep%d repoch %" PRId64, q->m.u.fetch.replica_id, (int64_t)q->m.u.fetch.replica_epoch);
		if (q->m.type == HW_MSG_FETCH)
			for (int i = 0; i < q->m.u.fetch.n_parts; i++)
				fprintf(stderr, " [t%u off%" PRId64 " cle%d lfe%d]", q->m.u.fetch.parts[i].tp.topic_id,
					q->m.u.fetch.parts[i].fetch_offset, q->m.u.fetch.parts[i].current_leader_epoch,
					q->m.u.fetch.parts[i].last_fetched_epoch);
		fprintf(stderr, "\n");
	}
	if (dst >= 1 && dst <= h->o.nodes) {
		hx_node *n = &h->nodes[dst];
		if (n->paused || (n->hold && q->m.type == HW_MSG_FETCH_RESP)) {
			if (h->nheld == h->capheld) {
				h->capheld = h->capheld ? h->capheld * 2 : 64;
				h->held = realloc(h->held, h->capheld * sizeof(*h->held));
				HW_ASSERT(h->held);
			}
			h->held[h->nheld++] = *q;
			return; /* blob moves to the held queue */
		}
		h->st.delivered++;
		if (!hx_agent_on_msg(h, dst, &q->m))
			hw_rm_on_msg(n->rm, &q->m);
	} else if (dst == HX_CTL) {
		h->st.delivered++;
		hx_ctl_on_msg(h, &q->m);
	} else if (dst >= HX_CLIENT) {
		h->st.delivered++;
		client_recv(h, &q->m);
	} else {
		h->st.delivered++;
		raw_recv(h, q);
	}
	free(q->blob);
	q->blob = NULL;
}

/* Deliver every message due at or before now, in (time, seq) order. */
static long deliver_due(hx *h)
{
	long n = 0;
	while (h->nq && h->q[0].at <= h->now) {
		hx_qmsg q = heap_pop(h);
		deliver(h, &q);
		n++;
	}
	return n;
}

void hx_deliver_now(hx *h) { deliver_due(h); }

static void unhold_resumed(hx *h)
{
	for (size_t i = 0; i < h->nheld;) {
		hx_node *n = &h->nodes[h->held[i].m.dst];
		if (!h->held[i].kept && !n->paused && !(n->hold && h->held[i].m.type == HW_MSG_FETCH_RESP)) {
			hx_qmsg q = h->held[i];
			memmove(&h->held[i], &h->held[i + 1], (h->nheld - i - 1) * sizeof(*h->held));
			h->nheld--;
			deliver(h, &q);
		} else {
			i++;
		}
	}
}

/* Real disk under virtual time: a write's completion takes real
 * microseconds, in which virtual time must not move (or followers would
 * fetch "during" the leader's write and runs would depend on the disk's
 * speed). So before a step ends, every live node's submitted writes are
 * waited for: disk I/O is instantaneous in virtual time. Returns the
 * number of stores whose durable end moved (work for the next step). */
static int drain_store_io(hx *h)
{
	int moved = 0;
	if (!h->o.use_log)
		return 0;
	for (int i = 1; i <= h->o.nodes; i++) {
		if (h->nodes[i].paused)
			continue;
		for (int p = 0; p < h->nparts_hi; p++) {
			hw_store *s = h->nodes[i].stores[p];
			if (!s)
				continue;
			int64_t d0 = s->ops->durable_end_offset(s);
			/* bounded by real time, not by a poll count: under load an
			 * io_uring worker may take milliseconds to run the write */
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			while (s->ops->durable_end_offset(s) < s->ops->log_end_offset(s)) {
				if (s->ops->poll(s) < 0)
					break;
				clock_gettime(CLOCK_MONOTONIC, &t1);
				if (t1.tv_sec - t0.tv_sec > 10)
					HW_ASSERT(!"store I/O did not complete in 10 s");
				sched_yield();
			}
			moved += s->ops->durable_end_offset(s) != d0;
		}
	}
	return moved;
}

static int step(hx *h)
{
	int work = (int)deliver_due(h);
	unhold_resumed(h);
	for (int i = 1; i <= h->o.nodes; i++) {
		if (h->nodes[i].paused)
			continue;
		int w = hw_rm_poll(h->nodes[i].rm);
		if (w > 0)
			work += w;
	}
	work += drain_store_io(h);
	work += hx_ctl_step(h);
	if (h->hook)
		h->hook(h, h->hook_arg);
	return work;
}

static int64_t next_event(hx *h)
{
	int64_t t = hx_ctl_next_event(h);
	if (h->nq && h->q[0].at < t)
		t = h->q[0].at;
	for (int i = 1; i <= h->o.nodes; i++) {
		if (h->nodes[i].paused)
			continue;
		int64_t d = hw_rm_next_deadline_ns(h->nodes[i].rm);
		if (d != INT64_MAX && d / 1000000 < t)
			t = d / 1000000;
	}
	return t;
}

long hx_run_until(hx *h, int64_t t)
{
	long steps = 0;
	int spins = 0;
	for (;;) {
		int w = step(h);
		steps++;
		if (w > 0 && spins++ < 1000)
			continue;
		spins = 0;
		int64_t nx = next_event(h);
		if (nx <= h->now)
			nx = h->now + 1;
		if (nx > t) {
			if (h->now < t) {
				h->now = t;
				step(h);
			}
			return steps;
		}
		h->now = nx;
	}
}

long hx_run_quiet(hx *h, int64_t max_ms)
{
	int64_t end = h->now + max_ms;
	long steps = 0;
	while (h->now < end) {
		int w = step(h);
		steps++;
		if (w > 0)
			continue;
		if (h->nq == 0)
			return steps;
		int64_t nx = h->q[0].at > h->now ? h->q[0].at : h->now + 1;
		h->now = nx;
	}
	return steps;
}
