/* hwd_group.c — the broker's group coordinator: hw_gcoord + hw_group_api on
 * reactor 0, its `__consumer_offsets` log over engine messages. See
 * hwd_group.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_admin_msg.h"
#include "hw_err.h"
#include "hw_group.h"
#include "hw_group_api.h"
#include "hw_logging.h"
#include "hwd_group.h"
#include "hwd_shard.h"

#define NOPS 256
#define FETCH_MAX_BYTES (1 << 20)
#define CREATE_EVERY_NS (3000 * 1000000LL)

enum { OP_FREE, OP_APPEND, OP_FETCH, OP_META, OP_CREATE };
enum { P_IDLE, P_LOADING, P_LOADED };

typedef struct gop {
	uint32_t corr;              /* 0: free */
	int kind;
	int32_t partition;
	uint32_t epoch;             /* the partition's load epoch when sent (fetches) */
	int64_t deadline_ns;
	hw_glog_done_fn done;
	void *ctx;
} gop;

typedef struct gpart {
	int state;
	uint32_t epoch;
	int64_t next_offset;
	int64_t target;             /* the LEO when our leader epoch began: load at least this far */
	int fetch_inflight;
	int64_t retry_ns;           /* next fetch after an error */
	int32_t leader;             /* from the metadata view, -1 */
} gpart;

struct hwd_group {
	hwd_node *n;
	hw_ksrv *srv;
	hw_glog log;                /* first member: hw_glog * <-> hwd_group * */
	hw_gcoord *co;
	hw_group_api *api;
	gop ops[NOPS];
	uint8_t gen;
	int32_t nparts;
	gpart *parts;
	uint32_t topic_id;          /* 0 until the scan or metadata finds the topic */
	int topic_known;            /* the controller said it exists */
	int64_t next_scan_ns, next_meta_ns, last_create_ns;
	int meta_inflight;
};

static hwd_group *of_log(hw_glog *l) { return (hwd_group *)((char *)l - offsetof(hwd_group, log)); }
static int64_t now_ns(hwd_group *g) { return hw_clock_ns(g->n->clock); }

/* ---- engine messages -------------------------------------------------------- */
static gop *op_new(hwd_group *g, int kind, int64_t timeout_ms)
{
	for (int i = 0; i < NOPS; i++) {
		if (g->ops[i].corr) continue;
		if (++g->gen == 0) g->gen = 1;
		gop *o = &g->ops[i];
		memset(o, 0, sizeof *o);
		/* bits 16..30 stay zero: never an id of the listener (hwd_group.h) */
		o->corr = HW_KSRV_CORR_BIT | (uint32_t)g->gen << 8 | (uint32_t)i;
		o->kind = kind;
		o->deadline_ns = now_ns(g) + timeout_ms * 1000000LL;
		return o;
	}
	return NULL;
}

static gop *op_find(hwd_group *g, uint32_t corr)
{
	if ((corr & 0x7FFF0000u) || !(corr & HW_KSRV_CORR_BIT)) return NULL;
	gop *o = &g->ops[corr & 0xFF];
	return o->corr == corr ? o : NULL;
}

static int submit_data(hwd_group *g, hw_msg *m)
{
	hwd_node *n = g->n;
	m->src = HW_KSRV_NODE;
	m->dst = n->cfg->node_id;
	hwd_shard_route(&n->shards[0], m, NULL); /* to the owning reactor */
	return 0;
}

static int submit_ctrl(hwd_group *g, hw_msg *m)
{
	hwd_node *n = g->n;
	m->src = n->cfg->node_id;
	m->dst = n->cfg->controller_id;
	return hw_net_send(hw_udp_net(n->ctl), m);
}

/* ---- hw_glog over PRODUCE ------------------------------------------------------ */
static int log_append(hw_glog *l, int32_t p, const void *batch, size_t len, hw_glog_done_fn done, void *ctx)
{
	hwd_group *g = of_log(l);
	if (p < 0 || p >= g->nparts || g->parts[p].state == P_IDLE || !g->topic_id) return -ENOENT;
	int32_t timeout = g->n->cfg->group.offsets_commit_timeout_ms;
	gop *o = op_new(g, OP_APPEND, timeout + 5000);
	if (!o) return -ENOMEM;
	o->done = done; o->ctx = ctx; o->partition = p;
	hw_msg m = { .type = HW_MSG_PRODUCE, .correlation_id = o->corr };
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = timeout,
					.tp = { g->topic_id, (uint32_t)p },
					.records = batch, .records_len = (uint32_t)len };
	submit_data(g, &m); /* the rm copies the records; its answer may come inside */
	return 0;
}

/* Replay goes through fetch messages (hw_gcoord_load_feed), never read. */
static ssize_t log_read(hw_glog *l, int32_t p, int64_t offset, void *buf, size_t cap, size_t *need)
{
	(void)l; (void)p; (void)offset; (void)buf; (void)cap;
	if (need) *need = 0;
	return -ENOTSUP;
}

static void on_produce_resp(gop *o, const hw_produce_resp *r)
{
	hw_glog_done_fn done = o->done;
	void *ctx = o->ctx;
	o->corr = 0;
	done(ctx, r->error, r->error ? -1 : r->base_offset);
}

/* ---- loading a partition by FETCH -------------------------------------------------- */
static void send_fetch(hwd_group *g, int32_t p)
{
	gpart *gp = &g->parts[p];
	gop *o = op_new(g, OP_FETCH, 10000);
	if (!o) { gp->retry_ns = now_ns(g) + 100 * 1000000LL; return; }
	o->partition = p;
	o->epoch = gp->epoch;
	hw_fetch_part fp = { .tp = { g->topic_id, (uint32_t)p }, .fetch_offset = gp->next_offset,
			     .current_leader_epoch = -1, .last_fetched_epoch = -1, .log_start_offset = -1,
			     .partition_max_bytes = FETCH_MAX_BYTES };
	hw_msg m = { .type = HW_MSG_FETCH, .correlation_id = o->corr };
	m.u.fetch = (hw_fetch_req){ .replica_id = -1, .replica_epoch = -1, .max_wait_ms = 0, .min_bytes = 0,
				    .max_bytes = FETCH_MAX_BYTES, .n_parts = 1, .parts = &fp };
	gp->fetch_inflight = 1;
	submit_data(g, &m);
}

static void on_fetch_resp(hwd_group *g, gop *o, const hw_fetch_resp *r)
{
	int32_t p = o->partition;
	uint32_t epoch = o->epoch;
	if (!r->more) o->corr = 0;
	gpart *gp = &g->parts[p];
	if (gp->state != P_LOADING || gp->epoch != epoch) return; /* a load that was abandoned */
	if (!r->more) gp->fetch_inflight = 0;
	const hw_fetch_resp_part *fp = r->n_parts ? &r->parts[0] : NULL;
	int16_t err = fp ? fp->error : (r->error ? r->error : HW_ERR_UNKNOWN_SERVER_ERROR);
	if (err) {
		HW_LOG(DEBUG, "group", "offsets partition %d: load fetch: %s", p, hw_err_name(err));
		gp->retry_ns = now_ns(g) + 100 * 1000000LL;
		return;
	}
	if (fp->records_len) hw_gcoord_load_feed(g->co, p, fp->records, fp->records_len, &gp->next_offset);
	if (r->more) return;
	/* done at the high watermark, but never before the log end this
	 * leader started its epoch with: a new leader's HW may still lag the
	 * records the previous leader had committed (they are in our log) */
	if (gp->next_offset >= fp->high_watermark && gp->next_offset >= gp->target) {
		hw_gcoord_load_end(g->co, p);
		gp->state = P_LOADED;
	} else if (!fp->records_len) {
		gp->retry_ns = now_ns(g) + 50 * 1000000LL; /* the HW has not reached the target yet */
	} else {
		/* The next fetch goes at the next poll, not from here: this answer
		 * is delivered inside the replica manager's respond(), and a fetch
		 * handled synchronously from it would reuse the manager's response
		 * scratch while respond() still has to release the records it
		 * holds (a double release, found by ASan in group_clients). */
		gp->retry_ns = 0;
	}
}

/* ---- leadership: which offsets partitions this broker leads --------------------------- */
static void unload(hwd_group *g, int32_t p)
{
	gpart *gp = &g->parts[p];
	if (gp->state == P_IDLE) return;
	gp->state = P_IDLE;
	gp->epoch++;
	gp->fetch_inflight = 0;
	hw_gcoord_unload(g->co, p);
}

static void scan(hwd_group *g)
{
	hw_rm_part_info *v;
	size_t np;
	if (hwd_node_partitions(g->n, &v, &np, NULL, NULL) < 0) return;
	uint8_t *lead = calloc((size_t)g->nparts, 1);
	int64_t *start = calloc((size_t)g->nparts, sizeof *start);
	if (!lead || !start) { free(lead); free(start); free(v); return; }
	for (size_t i = 0; i < np; i++) {
		if (strcmp(v[i].topic, HW_GROUP_OFFSETS_TOPIC) != 0) continue;
		g->topic_id = v[i].tp.topic_id;
		if (v[i].tp.partition < (uint32_t)g->nparts && v[i].role == HW_PART_LEADER) {
			lead[v[i].tp.partition] = 1;
			start[v[i].tp.partition] = v[i].leader_epoch_start_offset;
		}
	}
	free(v);
	int64_t now = now_ns(g);
	for (int32_t p = 0; p < g->nparts; p++) {
		gpart *gp = &g->parts[p];
		if (!lead[p]) { unload(g, p); continue; }
		if (gp->state == P_IDLE) {
			gp->epoch++;
			gp->state = P_LOADING;
			gp->next_offset = 0;
			gp->target = start[p] > 0 ? start[p] : 0;
			gp->retry_ns = 0;
			hw_gcoord_load_begin(g->co, p);
		}
		if (gp->state == P_LOADING && !gp->fetch_inflight && now >= gp->retry_ns) send_fetch(g, p);
	}
	free(lead);
	free(start);
}

/* ---- the metadata view (FindCoordinator) ------------------------------------------------ */
static void send_metadata(hwd_group *g)
{
	gop *o = op_new(g, OP_META, HW_KSRV_CTRL_TIMEOUT_MS);
	if (!o) return;
	hw_topic_name t;
	snprintf(t.s, sizeof t.s, "%s", HW_GROUP_OFFSETS_TOPIC);
	hw_metadata_req q = { .n_topics = 1, .topics = &t };
	hw_msg m = { .type = HW_MSG_METADATA, .correlation_id = o->corr };
	m.u.other = &q;
	if (submit_ctrl(g, &m) < 0) { o->corr = 0; return; }
	g->meta_inflight = 1;
}

static void on_metadata(hwd_group *g, const hw_metadata_resp *r)
{
	g->meta_inflight = 0;
	for (int32_t p = 0; p < g->nparts; p++) g->parts[p].leader = -1;
	for (uint16_t t = 0; t < r->n_topics; t++) {
		const hw_topic_meta *tm = &r->topics[t];
		if (strcmp(tm->name, HW_GROUP_OFFSETS_TOPIC) != 0) continue;
		g->topic_known = tm->error == HW_ERR_NONE;
		if (!g->topic_known) continue;
		g->topic_id = tm->topic_id;
		for (uint32_t i = 0; i < tm->n_parts; i++)
			if (tm->parts[i].partition < (uint32_t)g->nparts)
				g->parts[tm->parts[i].partition].leader = tm->parts[i].error ? -1 : tm->parts[i].leader;
	}
}

static void create_topic(void *ctx)
{
	hwd_group *g = ctx;
	int64_t now = now_ns(g);
	if (g->last_create_ns && now - g->last_create_ns < CREATE_EVERY_NS) return;
	g->last_create_ns = now;
	gop *o = op_new(g, OP_CREATE, HW_KSRV_CTRL_TIMEOUT_MS);
	if (!o) return;
	hw_create_topic_req q = { .partitions = g->nparts,
				  .replication_factor = g->n->cfg->kafka.offsets_topic_replication_factor,
				  .timeout_ms = HW_KSRV_CTRL_TIMEOUT_MS };
	snprintf(q.name, sizeof q.name, "%s", HW_GROUP_OFFSETS_TOPIC);
	hw_msg m = { .type = HW_MSG_CREATE_TOPIC, .correlation_id = o->corr };
	m.u.other = &q;
	if (submit_ctrl(g, &m) < 0) o->corr = 0;
	HW_LOG(INFO, "group", "creating %s (%d partitions, replication factor %d)", HW_GROUP_OFFSETS_TOPIC,
	       g->nparts, q.replication_factor);
}

static void on_create(hwd_group *g, const hw_create_topic_resp *r)
{
	if (r->error && r->error != HW_ERR_TOPIC_ALREADY_EXISTS)
		HW_LOG(WARN, "group", "creating %s: %s %s", HW_GROUP_OFFSETS_TOPIC, hw_err_name(r->error), r->error_message);
	g->next_meta_ns = 0; /* learn the leaders soon */
}

/* "HOST:PORT" of a broker's PLAINTEXT listener. 0 or -ENOENT. */
static int listener_of(hwd_group *g, int32_t id, char *host, size_t cap, int32_t *port)
{
	hwd_node *n = g->n;
	const char *hp = NULL;
	if (id == n->cfg->node_id) hp = n->cfg->kafka.adv_hostport;
	for (int i = 0; !hp && i < n->n_brokers; i++)
		if (n->brokers[i].id == id && n->brokers[i].n_listeners)
			hp = n->brokers[i].listeners[0].value;
	if (!hp || !*hp) return -ENOENT;
	const char *colon = strrchr(hp, ':');
	if (!colon || (size_t)(colon - hp) >= cap) return -ENOENT;
	memcpy(host, hp, (size_t)(colon - hp));
	host[colon - hp] = 0;
	*port = (int32_t)atoi(colon + 1);
	return *port > 0 ? 0 : -ENOENT;
}

static int coordinator(void *ctx, int32_t p, int32_t *node, char *host, size_t cap, int32_t *port)
{
	hwd_group *g = ctx;
	if (!g->topic_known) return -ENOENT;
	int32_t leader = p >= 0 && p < g->nparts ? g->parts[p].leader : -1;
	if (leader < 0) return -EAGAIN;
	*node = leader;
	return listener_of(g, leader, host, cap, port) == 0 ? 0 : -EAGAIN;
}

/* ---- the listener's pending slots ------------------------------------------------------- */
static hw_kw *pending_writer(void *ctx, void *req) { (void)ctx; return hw_kreq_writer(req); }
static void complete(void *ctx, void *req) { hwd_group *g = ctx; hw_ksrv_complete(g->srv, req); }

/* ---- reactor poller ------------------------------------------------------------------------- */
static int poll_group(void *arg)
{
	hwd_group *g = arg;
	int64_t now = now_ns(g);
	int work = 0;
	if (now >= g->next_scan_ns) {
		scan(g);
		g->next_scan_ns = now + HWD_GROUP_SCAN_MS * 1000000LL;
		work++;
	} else {
		for (int32_t p = 0; p < g->nparts; p++)
			if (g->parts[p].state == P_LOADING && !g->parts[p].fetch_inflight && now >= g->parts[p].retry_ns)
				send_fetch(g, p);
	}
	if (now >= g->next_meta_ns && !g->meta_inflight) {
		send_metadata(g);
		g->next_meta_ns = now + HWD_GROUP_META_MS * 1000000LL;
	}
	for (int i = 0; i < NOPS; i++) {
		gop *o = &g->ops[i];
		if (!o->corr || now < o->deadline_ns) continue;
		int kind = o->kind;
		o->corr = 0;
		if (kind == OP_APPEND) o->done(o->ctx, HW_ERR_REQUEST_TIMED_OUT, -1);
		else if (kind == OP_FETCH && o->partition < g->nparts) g->parts[o->partition].fetch_inflight = 0;
		else if (kind == OP_META) g->meta_inflight = 0;
		work++;
	}
	if (hw_gcoord_next_deadline_ms(g->co) <= hw_clock_ms(g->n->clock)) {
		hw_gcoord_tick(g->co);
		work++;
	}
	return work;
}

static int64_t deadline_group(void *arg)
{
	hwd_group *g = arg;
	int64_t d = g->next_scan_ns < g->next_meta_ns ? g->next_scan_ns : g->next_meta_ns;
	int64_t c = hw_gcoord_next_deadline_ms(g->co);
	if (c < INT64_MAX / 1000000 && c * 1000000 < d) d = c * 1000000;
	for (int i = 0; i < NOPS; i++)
		if (g->ops[i].corr && g->ops[i].deadline_ns < d) d = g->ops[i].deadline_ns;
	for (int32_t p = 0; p < g->nparts; p++) /* a loading partition's next fetch */
		if (g->parts[p].state == P_LOADING && !g->parts[p].fetch_inflight && g->parts[p].retry_ns < d)
			d = g->parts[p].retry_ns;
	return d;
}

/* ---- entry points ------------------------------------------------------------------------------ */
int hwd_group_on_msg(hwd_node *n, const hw_msg *m)
{
	hwd_group *g = n->group;
	if (!g) return 0;
	gop *o = op_find(g, m->correlation_id);
	if (!o) return 0;
	switch (m->type) {
	case HW_MSG_PRODUCE_RESP: if (o->kind == OP_APPEND) on_produce_resp(o, &m->u.produce_resp); break;
	case HW_MSG_FETCH_RESP: if (o->kind == OP_FETCH) on_fetch_resp(g, o, &m->u.fetch_resp); break;
	case HW_MSG_METADATA_RESP: if (o->kind == OP_META) { o->corr = 0; on_metadata(g, m->u.other); } break;
	case HW_MSG_CREATE_TOPIC_RESP: if (o->kind == OP_CREATE) { o->corr = 0; on_create(g, m->u.other); } break;
	default: return 0;
	}
	return 1;
}

const hw_gstats *hwd_group_stats(const hwd_node *n, int32_t *loaded)
{
	const hwd_group *g = n->group;
	if (!g) return NULL;
	int32_t k = 0;
	for (int32_t p = 0; p < g->nparts; p++) k += hw_gcoord_owns(g->co, p);
	*loaded = k;
	return hw_gcoord_stats(g->co);
}

int hwd_group_request(hwd_node *n, hw_kreq *req, const hw_kafka_req_hdr *h, hw_kr *r, hw_kw *w)
{
	hwd_group *g = n->group;
	if (!g) return -ENOTSUP;
	return hw_group_api_handle(g->api, req, h, r, w);
}

int hwd_group_init(hwd_node *n, hw_ksrv *srv)
{
	hwd_group *g = calloc(1, sizeof *g);
	if (!g) return -ENOMEM;
	g->n = n;
	g->srv = srv;
	g->nparts = n->cfg->kafka.offsets_topic_num_partitions;
	g->parts = calloc((size_t)g->nparts, sizeof *g->parts);
	if (!g->parts) { free(g); return -ENOMEM; }
	for (int32_t p = 0; p < g->nparts; p++) g->parts[p].leader = -1;
	g->log.append = log_append;
	g->log.read = log_read;
	const hwd_group_config *gc = &n->cfg->group;
	hw_gcoord_cfg cfg;
	hw_gcoord_cfg_init(&cfg);
	cfg.offsets_partitions = g->nparts;
	cfg.initial_rebalance_delay_ms = gc->initial_rebalance_delay_ms;
	cfg.min_session_timeout_ms = gc->min_session_timeout_ms;
	cfg.max_session_timeout_ms = gc->max_session_timeout_ms;
	cfg.max_group_size = gc->max_size;
	cfg.offset_metadata_max_bytes = gc->offset_metadata_max_bytes;
	cfg.offsets_retention_ms = gc->offsets_retention_minutes * 60000;
	cfg.member_id_seed = (uint64_t)now_ns(g) ^ ((uint64_t)n->cfg->node_id << 48) ^ n->incarnation;
	int rc = hw_gcoord_create(&cfg, n->clock, &g->log, &g->co);
	hw_group_api_ops ops = { .pending_writer = pending_writer, .complete = complete,
				 .coordinator = coordinator, .ensure_offsets_topic = create_topic };
	if (rc == 0) rc = hw_group_api_create(g->co, &ops, g, &g->api);
	if (rc == 0) rc = hw_reactor_add_poller(n->shards[0].reactor, "group", poll_group, deadline_group, g);
	if (rc < 0) {
		hw_gcoord_free(g->co);
		free(g->parts);
		free(g);
		return rc;
	}
	n->group = g;
	HW_LOG(INFO, "group", "broker %d: group coordinator over %s (%d partitions)", n->cfg->node_id,
	       HW_GROUP_OFFSETS_TOPIC, g->nparts);
	return 0;
}

void hwd_group_fini(hwd_node *n)
{
	hwd_group *g = n->group;
	if (!g) return;
	/* appends the replica manager will not answer any more */
	for (int i = 0; i < NOPS; i++)
		if (g->ops[i].corr && g->ops[i].kind == OP_APPEND) {
			g->ops[i].corr = 0;
			g->ops[i].done(g->ops[i].ctx, HW_ERR_NOT_LEADER_OR_FOLLOWER, -1);
		}
	hw_gcoord_free(g->co); /* answers the waiters NOT_COORDINATOR */
	hw_group_api_free(g->api);
	free(g->parts);
	free(g);
	n->group = NULL;
}
