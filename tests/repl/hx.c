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
#include "hx.h"
#include "hw_wire.h"
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct hx_qmsg {
	hw_msg m;
	int64_t at;
	uint64_t seq;
	void *blob;
} hx_qmsg;

typedef struct hx_node {
	hx *h;
	int id;
	hw_net net;
	hw_rm *rm;
	int paused;
	int hold;
	hw_store *stores[HX_MAX_PARTS];
} hx_node;

typedef struct hx_cpart {
	int exists;
	hw_partition_state st;
} hx_cpart;

typedef struct hx_req {
	uint32_t corr;
	int part;
	int16_t acks;
	int nrec;
	int count;
	int sends;
	hx_resp r;
} hx_req;

typedef struct hx_raw {
	int id;
	int type;
	hx_qmsg q;
	int valid;
} hx_raw;

struct hx {
	hx_opts o;
	int64_t now;
	hw_clock clock;
	uint64_t rng;
	uint64_t seq;
	hx_node nodes[HX_MAX_NODES + 1];
	hx_qmsg *q;
	size_t nq, capq;
	hx_qmsg *held;
	size_t nheld, capheld;
	int drop_pct, dup_pct, dmin, dmax;
	uint8_t cut[256][256];
	/* no route yet: sends from node a to b fail with -EHOSTUNREACH while
	 * now < unreach_until[a][b] (the transport has not learnt b's address) */
	int64_t unreach_until[HX_MAX_NODES + 1][256];
	uint64_t refused;
	int nparts_hi;              /* highest created partition + 1 */
	hx_cpart cp[HX_MAX_PARTS];
	uint8_t fenced[HX_MAX_NODES + 1];
	int64_t next_push;
	int64_t repush_ms;
	char dir[256];
	hx_req *reqs;
	size_t nreqs, capreqs;
	uint32_t next_corr;
	hx_raw raws[8];
	void (*hook)(hx *h, void *arg);
	void *hook_arg;
	hx_stats st;
};

uint64_t hx_rand(hx *h)
{
	/* splitmix64 */
	uint64_t z = (h->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t hx_seed_from_env(void)
{
	const char *s = getenv("HW_TEST_SEED");
	if (s && *s)
		return strtoull(s, NULL, 0);
	return (uint64_t)time(NULL);
}

static hx *clock_hx(hw_clock *c) { return (hx *)((char *)c - offsetof(hx, clock)); }
static int64_t sim_now_ns(hw_clock *c) { return clock_hx(c)->now * 1000000LL; }

/* ---- deep copy -------------------------------------------------------- */
static int copy_msg(const hw_msg *in, hx_qmsg *out)
{
	out->m = *in;
	out->blob = NULL;
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
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		need = (size_t)in->u.ofe.n_parts * sizeof(hw_ofe_part);
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		need = (size_t)in->u.ofe_resp.n_parts * sizeof(hw_ofe_resp_part);
		break;
	default:
		return 0;
	}
	uint8_t *b = malloc(need ? need : 1);
	if (!b)
		return -ENOMEM;
	out->blob = b;
	switch (in->type) {
	case HW_MSG_PRODUCE:
		memcpy(b, in->u.produce.records, need);
		out->m.u.produce.records = b;
		break;
	case HW_MSG_FETCH:
		memcpy(b, in->u.fetch.parts, need);
		out->m.u.fetch.parts = (hw_fetch_part *)b;
		break;
	case HW_MSG_FETCH_RESP: {
		hw_fetch_resp_part *p = (hw_fetch_resp_part *)b;
		size_t n = in->u.fetch_resp.n_parts;
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
		break;
	}
	case HW_MSG_OFFSETS_FOR_EPOCH:
		memcpy(b, in->u.ofe.parts, need);
		out->m.u.ofe.parts = (hw_ofe_part *)b;
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		memcpy(b, in->u.ofe_resp.parts, need);
		out->m.u.ofe_resp.parts = (hw_ofe_resp_part *)b;
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

static void enqueue(hx *h, const hw_msg *m, int64_t delay)
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
	enqueue(h, m, d);
	if (h->dup_pct && (int)(hx_rand(h) % 100) < h->dup_pct) {
		h->st.duplicated++;
		enqueue(h, m, d + 1 + (int64_t)(hx_rand(h) % 5));
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
static hx_node *cfg_node(hx *h, int i, hw_rm_config *c);
static void ctl_push(hx *h, int part);

static int open_store(void *ctx, hw_tp tp, const char *topic, hw_store **out)
{
	(void)topic;
	hx_node *n = ctx;
	if (tp.partition >= HX_MAX_PARTS)
		return -EINVAL;
	if (n->h->o.use_log) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/n%d-p%u", n->h->dir, n->id, tp.partition);
		hw_log_config c;
		hw_log_config_default(&c);
		c.ring_entries = 32;
		hw_log *log;
		int rc = hw_log_open(dir, &c, &log);
		if (rc < 0)
			return rc;
		n->stores[tp.partition] = hw_log_store(log);
		*out = n->stores[tp.partition];
		return 0;
	}
	if (!n->stores[tp.partition]) {
		int rc = hw_memstore_create(1, &n->stores[tp.partition]);
		if (rc < 0)
			return rc;
	}
	*out = n->stores[tp.partition];
	return 0;
}

hx *hx_create(const hx_opts *o)
{
	hx *h = calloc(1, sizeof(*h));
	HW_ASSERT(h && o->nodes >= 1 && o->nodes <= HX_MAX_NODES);
	h->o = *o;
	const char *st = getenv("HX_STORE");
	if (st && strcmp(st, "log") == 0)
		h->o.use_log = 1;
	if (h->o.use_log) {
		static unsigned seq;
		mkdir("/tmp/repl", 0755);
		snprintf(h->dir, sizeof(h->dir), "/tmp/repl/hx-%d-%u", (int)getpid(), seq++);
		HW_ASSERT(mkdir(h->dir, 0755) == 0 || errno == EEXIST);
	}
	h->rng = o->seed;
	h->clock.now_ns = sim_now_ns;
	h->now = 0;
	h->next_corr = 1;
	h->repush_ms = 500;
	for (int i = 1; i <= o->nodes; i++) {
		hw_rm_config c;
		hx_node *n = cfg_node(h, i, &c);
		int rc = hw_rm_create(&c, &h->clock, &n->net, &n->rm);
		HW_ASSERT(rc == 0);
	}
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
	c->broker_epoch = 1;
	c->controller_id = HX_CTL;
	c->open_store = open_store;
	c->store_ctx = n;
	if (h->o.tweak)
		h->o.tweak(i, c, h->o.arg);
	return n;
}

void hx_restart(hx *h, int node)
{
	hw_rm_destroy(h->nodes[node].rm);
	if (h->o.use_log)
		memset(h->nodes[node].stores, 0, sizeof(h->nodes[node].stores)); /* closed */
	hw_rm_config c;
	hx_node *n = cfg_node(h, node, &c);
	int rc = hw_rm_create(&c, &h->clock, &n->net, &n->rm);
	HW_ASSERT(rc == 0);
	for (int p = 0; p < h->nparts_hi; p++)
		if (h->cp[p].exists)
			ctl_push(h, p);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int hx_uses_log(hx *h) { return h->o.use_log; }

void hx_destroy(hx *h)
{
	for (int i = 1; i <= h->o.nodes; i++) {
		hw_rm_destroy(h->nodes[i].rm); /* closes the stores (hw_log: flush + free) */
		if (!h->o.use_log)
			for (int p = 0; p < h->nparts_hi; p++)
				hw_memstore_free(h->nodes[i].stores[p]);
	}
	if (h->o.use_log && h->dir[0])
		nftw(h->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
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
void hx_set_repush_ms(hx *h, int64_t ms) { h->repush_ms = ms; }
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
	hw_tp tp = { 1, (uint32_t)part };
	if (hw_rm_partition_info(h->nodes[node].rm, tp, out) < 0)
		memset(out, 0, sizeof(*out));
}

/* ---- controller stub --------------------------------------------------- */
static void ctl_send(hx *h, hw_msg *m)
{
	m->src = HX_CTL;
	int a = HX_CTL, b = m->dst & 0xff;
	h->st.sent++;
	if (h->cut[a][b] || (h->drop_pct && (int)(hx_rand(h) % 100) < h->drop_pct)) {
		h->st.dropped++;
		return;
	}
	int64_t d = h->dmin;
	if (h->dmax > h->dmin)
		d += (int64_t)(hx_rand(h) % (uint64_t)(h->dmax - h->dmin + 1));
	enqueue(h, m, d);
}

static void ctl_push(hx *h, int part)
{
	hx_cpart *c = &h->cp[part];
	for (int i = 0; i < c->st.replicas.n; i++) {
		hw_msg m;
		memset(&m, 0, sizeof(m));
		m.type = HW_MSG_PARTITION_STATE;
		m.dst = c->st.replicas.id[i];
		m.correlation_id = 0;
		m.u.pstate = c->st;
		ctl_send(h, &m);
	}
}

static void idset_remove(hw_idset *s, int id)
{
	int j = 0;
	for (int i = 0; i < s->n; i++)
		if (s->id[i] != id)
			s->id[j++] = s->id[i];
	s->n = (uint8_t)j;
}

static void idset_add(hw_idset *s, int id)
{
	if (!hw_idset_has(s, id) && s->n < HW_MAX_RF)
		s->id[s->n++] = id;
}

/* KIP-966: ISR >= min -> ELR cleared; else ELR = (ELR u old ISR) - new ISR */
static void ctl_elr(hx_cpart *c, const hw_idset *old_isr)
{
	if (c->st.isr.n >= c->st.min_insync_replicas) {
		c->st.elr.n = 0;
		return;
	}
	hw_idset e = c->st.elr;
	for (int i = 0; i < old_isr->n; i++)
		idset_add(&e, old_isr->id[i]);
	for (int i = 0; i < c->st.isr.n; i++)
		idset_remove(&e, c->st.isr.id[i]);
	c->st.elr = e;
}

void hx_ctl_create(hx *h, int part, const int *replicas, int n, int min_isr)
{
	hx_cpart *c = &h->cp[part];
	memset(c, 0, sizeof(*c));
	c->exists = 1;
	if (part + 1 > h->nparts_hi)
		h->nparts_hi = part + 1;
	c->st.tp.topic_id = 1;
	c->st.tp.partition = (uint32_t)part;
	c->st.leader = replicas[0];
	c->st.leader_epoch = 0;
	c->st.partition_epoch = 0;
	for (int i = 0; i < n; i++) {
		c->st.replicas.id[i] = replicas[i];
		c->st.isr.id[i] = replicas[i];
	}
	c->st.replicas.n = c->st.isr.n = (uint8_t)n;
	c->st.min_insync_replicas = (int16_t)min_isr;
	snprintf(c->st.topic, sizeof(c->st.topic), "t%d", part);
	ctl_push(h, part);
}

static int ctl_pick_leader(hx *h, hx_cpart *c)
{
	for (int i = 0; i < c->st.replicas.n; i++) {
		int id = c->st.replicas.id[i];
		if (hw_idset_has(&c->st.isr, id) && !h->fenced[id])
			return id;
	}
	return -1;
}

void hx_ctl_fence(hx *h, int node)
{
	h->fenced[node] = 1;
	for (int p = 0; p < h->nparts_hi; p++) {
		hx_cpart *c = &h->cp[p];
		if (!c->exists || !hw_idset_has(&c->st.replicas, node))
			continue;
		hw_idset old = c->st.isr;
		int was_leader = c->st.leader == node;
		if (hw_idset_has(&c->st.isr, node) && (c->st.isr.n > 1 || was_leader)) {
			idset_remove(&c->st.isr, node);
			if (c->st.isr.n == 0) /* ELR off semantics: keep the last member */
				c->st.isr = old;
		}
		if (was_leader) {
			int l = ctl_pick_leader(h, c);
			c->st.leader = l;
			c->st.leader_epoch++;
			if (l >= 0 && !hw_idset_has(&c->st.isr, l))
				idset_add(&c->st.isr, l);
		}
		ctl_elr(c, &old);
		c->st.partition_epoch++;
		ctl_push(h, p);
	}
}

void hx_ctl_unfence(hx *h, int node)
{
	h->fenced[node] = 0;
	for (int p = 0; p < h->nparts_hi; p++) {
		hx_cpart *c = &h->cp[p];
		if (!c->exists || c->st.leader >= 0)
			continue;
		int l = ctl_pick_leader(h, c);
		if (l < 0)
			continue;
		c->st.leader = l;
		c->st.leader_epoch++;
		c->st.partition_epoch++;
		ctl_push(h, p);
	}
}

void hx_ctl_elect(hx *h, int part, int leader)
{
	hx_cpart *c = &h->cp[part];
	hw_idset old = c->st.isr;
	c->st.leader = leader;
	c->st.leader_epoch++;
	c->st.partition_epoch++;
	if (!hw_idset_has(&c->st.isr, leader))
		c->st.isr.n = 0, idset_add(&c->st.isr, leader); /* unclean / forced */
	ctl_elr(c, &old);
	ctl_push(h, part);
}

int hx_ctl_leader(hx *h, int part) { return h->cp[part].st.leader; }
const hw_partition_state *hx_ctl_state(hx *h, int part) { return &h->cp[part].st; }

void hx_ctl_set_throttle(hx *h, int part, const hw_idset *leader, const hw_idset *follower)
{
	hx_cpart *c = &h->cp[part];
	c->st.leader_throttled = *leader;
	c->st.follower_throttled = *follower;
	ctl_push(h, part); /* same epochs: a topic config change */
}

static void ctl_on_alter(hx *h, const hw_msg *m)
{
	const hw_alter_partition_req *a = &m->u.alter;
	hw_msg r;
	memset(&r, 0, sizeof(r));
	r.type = HW_MSG_ALTER_PARTITION_RESP;
	r.dst = m->src;
	r.correlation_id = m->correlation_id;
	r.u.alter_resp.tp = a->tp;
	int part = (int)a->tp.partition;
	int16_t err = 0;
	hx_cpart *c = part < HX_MAX_PARTS ? &h->cp[part] : NULL;
	if (!c || !c->exists)
		err = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
	else if (a->leader_epoch < c->st.leader_epoch)
		err = HW_ERR_FENCED_LEADER_EPOCH;
	else if (a->broker_id != c->st.leader)
		err = HW_ERR_INVALID_REQUEST;
	else if (a->partition_epoch != c->st.partition_epoch)
		err = HW_ERR_INVALID_UPDATE_VERSION;
	else if (!hw_idset_has(&a->new_isr, c->st.leader))
		err = HW_ERR_INVALID_REQUEST;
	if (!err)
		for (int i = 0; i < a->new_isr.n; i++) {
			int id = a->new_isr.id[i];
			if (!hw_idset_has(&c->st.replicas, id))
				err = HW_ERR_INVALID_REQUEST;
			else if (h->fenced[id])
				err = HW_ERR_INELIGIBLE_REPLICA;
		}
	if (!err) {
		hw_idset old = c->st.isr;
		c->st.isr = a->new_isr;
		c->st.partition_epoch++;
		ctl_elr(c, &old);
	}
	r.u.alter_resp.error = err;
	if (c) {
		r.u.alter_resp.leader_id = c->st.leader;
		r.u.alter_resp.leader_epoch = c->st.leader_epoch;
		r.u.alter_resp.partition_epoch = c->st.partition_epoch;
		r.u.alter_resp.isr = c->st.isr;
	}
	ctl_send(h, &r);
	if (!err)
		ctl_push(h, part);
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

uint32_t hx_produce(hx *h, int node, int part, int acks, int nrec, int64_t pid, int16_t pepoch,
		    int32_t seq, int32_t timeout_ms)
{
	hw_record_in recs[256];
	char vals[256][24];
	HW_ASSERT(nrec >= 1 && nrec <= 256);
	for (int i = 0; i < nrec; i++) {
		memset(&recs[i], 0, sizeof(recs[i]));
		int l = snprintf(vals[i], sizeof(vals[i]), "v%" PRIu64, hx_rand(h) % 1000000);
		recs[i].timestamp = h->now;
		recs[i].value = vals[i];
		recs[i].value_len = l;
	}
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	if (pid >= 0) {
		s.producer_id = pid;
		s.producer_epoch = pepoch;
		s.base_sequence = seq;
	}
	uint8_t buf[256 * 40 + 128];
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
	m.u.produce.tp.topic_id = 1;
	m.u.produce.tp.partition = (uint32_t)part;
	m.u.produce.records = buf;
	m.u.produce.records_len = (uint32_t)n;
	enqueue(h, &m, 0);
	return r->corr;
}

uint32_t hx_consume(hx *h, int node, int part, int64_t offset, int32_t max_wait_ms)
{
	hx_req *r = req_new(h, part, 0, 0);
	hw_fetch_part fp;
	memset(&fp, 0, sizeof(fp));
	fp.tp.topic_id = 1;
	fp.tp.partition = (uint32_t)part;
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
	enqueue(h, &m, 0);
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
		hw_batch_iter_init(&it, p->records, p->records_len, 0);
		while (hw_batch_iter_next(&it, &hd, NULL) == 1) {
			if (r->r.first_offset < 0)
				r->r.first_offset = hd.base_offset;
			r->r.next_offset = hw_batch_next_offset(&hd);
			r->r.nrecords += hd.record_count;
		}
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

void hx_send_raw(hx *h, const hw_msg *m) { enqueue(h, m, 0); }

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
				fprintf(stderr, " [p%u e%d hw%" PRId64 " len%u div%d]",
					q->m.u.fetch_resp.parts[i].tp.partition, q->m.u.fetch_resp.parts[i].error,
					q->m.u.fetch_resp.parts[i].high_watermark,
					q->m.u.fetch_resp.parts[i].records_len,
					q->m.u.fetch_resp.parts[i].diverging_epoch);
		if (q->m.type == HW_MSG_FETCH)
			for (int i = 0; i < q->m.u.fetch.n_parts; i++)
				fprintf(stderr, " [p%u off%" PRId64 " cle%d lfe%d]", q->m.u.fetch.parts[i].tp.partition,
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
		hw_rm_on_msg(n->rm, &q->m);
	} else if (dst == HX_CTL) {
		h->st.delivered++;
		if (q->m.type == HW_MSG_ALTER_PARTITION)
			ctl_on_alter(h, &q->m);
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
		if (!n->paused && !(n->hold && h->held[i].m.type == HW_MSG_FETCH_RESP)) {
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
		for (int p = 0; p < HX_MAX_PARTS; p++) {
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
	if (h->repush_ms > 0 && h->now >= h->next_push) {
		h->next_push = h->now + h->repush_ms;
		for (int p = 0; p < h->nparts_hi; p++)
			if (h->cp[p].exists)
				ctl_push(h, p);
	}
	if (h->hook)
		h->hook(h, h->hook_arg);
	return work;
}

static int64_t next_event(hx *h)
{
	int64_t t = h->repush_ms > 0 ? h->next_push : INT64_MAX;
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
