/* hw_group_api.c — Kafka group requests in, coordinator calls, responses
 * out (see hw_group_api.h). One function per API, each: decode, convert,
 * call the coordinator, encode (now or in the coordinator's callback). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_kafka_group.h"
#include "hw_group_api.h"

struct hw_group_api {
	hw_gcoord *co;
	hw_group_api_ops ops;
	void *ctx;
	hw_group_api_stats st;
};

/* A request whose answer may come later. While the handler runs (in_call)
 * an answer goes to the caller's writer; after it, to the pending slot. */
typedef struct gpend {
	hw_group_api *a;
	void *req;
	int16_t version;
	int in_call, answered;
	hw_kw *now;
	/* OffsetCommit: the request's partitions, owned (the response names them) */
	hw_kg_commit_req commit;
	char *names;
	int16_t *errs;
} gpend;

static hw_gstr G(hw_kstr s) { return s.len < 0 ? (hw_gstr){ NULL, -1 } : (hw_gstr){ s.p, s.len }; }

static gpend *pend_new(hw_group_api *a, void *req, int16_t v, hw_kw *w)
{
	gpend *p = calloc(1, sizeof *p);
	if (!p) return NULL;
	p->a = a; p->req = req; p->version = v; p->in_call = 1; p->now = w;
	return p;
}

static void pend_free(gpend *p)
{
	free(p->commit.parts);
	free(p->names);
	free(p->errs);
	free(p);
}

/* The writer for an answer now. */
static hw_kw *pend_writer(gpend *p)
{
	return p->in_call ? p->now : p->a->ops.pending_writer(p->a->ctx, p->req);
}

/* After the answer is written: complete a pending request. */
static void pend_answered(gpend *p)
{
	if (p->in_call) { p->answered = 1; return; }
	hw_group_api *a = p->a;
	a->st.pending_now--;
	a->ops.complete(a->ctx, p->req);
	pend_free(p);
}

/* End of a handler that may have gone pending: 0 answered, 1 pending. */
static int pend_leave(gpend *p)
{
	p->in_call = 0;
	if (p->answered) { pend_free(p); return 0; }
	p->a->st.pending_now++;
	return 1;
}

/* ---- FindCoordinator ------------------------------------------------------ */
/* One coordinator key: the broker leading its `__consumer_offsets`
 * partition, or an error. host is the caller's buffer. */
static hw_kg_find_resp find_one(hw_group_api *a, int8_t key_type, hw_kstr key, char *host, size_t hcap)
{
	hw_kg_find_resp out = { .error = HW_ERR_COORDINATOR_NOT_AVAILABLE, .node_id = -1, .host = "", .port = -1,
				.key = key };
	host[0] = 0;
	if (key_type != 0) {
		out.error_message = "transactions are not supported";
	} else if (key.len <= 0) {
		out.error = HW_ERR_INVALID_REQUEST;
	} else {
		int32_t p = hw_gcoord_partition_of(a->co, key.p, (size_t)key.len);
		int32_t node = -1, port = -1;
		int rc = a->ops.coordinator ? a->ops.coordinator(a->ctx, p, &node, host, hcap, &port) : -ENOENT;
		if (rc == 0) {
			out.error = HW_ERR_NONE;
			out.node_id = node;
			out.host = host;
			out.port = port;
		} else if (rc == -ENOENT && a->ops.ensure_offsets_topic) {
			a->ops.ensure_offsets_topic(a->ctx);
		}
	}
	return out;
}

/* v4+ batches keys (KIP-699): one answer per key, in request order. */
static int find_coordinator(hw_group_api *a, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_find_req q;
	int rc = hw_kg_find_decode(r, v, &q);
	if (rc) { hw_kg_find_free(&q); return rc; }
	int32_t n = q.n_keys > 0 ? q.n_keys : 1;
	hw_kg_find_resp *out = calloc((size_t)n, sizeof *out);
	char (*hosts)[256] = calloc((size_t)n, sizeof *hosts);
	if (!out || !hosts) { free(out); free(hosts); hw_kg_find_free(&q); return -ENOMEM; }
	for (int32_t i = 0; i < n; i++)
		out[i] = find_one(a, q.key_type, q.n_keys ? q.keys[i] : q.key, hosts[i], sizeof hosts[i]);
	hw_kg_find_encode_n(w, v, q.n_keys, out);
	free(out);
	free(hosts);
	hw_kg_find_free(&q);
	return 0;
}

/* ---- JoinGroup ------------------------------------------------------------- */
static void join_done(void *ctx, const hw_gjoin_resp *g)
{
	gpend *p = ctx;
	hw_kg_join_member *ms = NULL;
	hw_kg_join_resp out = { .error = g->error, .generation = g->generation, .protocol_name = g->protocol_name,
				.leader = g->leader, .member_id = g->member_id, .protocol_type = g->protocol_type };
	if (g->n_members > 0 && (ms = calloc((size_t)g->n_members, sizeof *ms)) != NULL) {
		for (int32_t i = 0; i < g->n_members; i++) {
			ms[i].member_id = g->members[i].member_id;
			ms[i].group_instance_id = g->members[i].group_instance_id;
			ms[i].metadata = g->members[i].metadata;
			ms[i].metadata_len = g->members[i].metadata_len;
		}
		out.n_members = g->n_members;
		out.members = ms;
	} else if (g->n_members > 0) {
		out.error = HW_ERR_COORDINATOR_NOT_AVAILABLE;
	}
	hw_kg_join_encode(pend_writer(p), p->version, &out);
	free(ms);
	pend_answered(p);
}

static int join_group(hw_group_api *a, void *req, int16_t v, hw_kstr client_id, hw_kstr client_host, hw_kr *r,
		      hw_kw *w)
{
	hw_kg_join_req q;
	int rc = hw_kg_join_decode(r, v, &q);
	if (rc) { hw_kg_join_free(&q); return rc; }
	hw_gproto *ps = calloc((size_t)(q.n_protocols ? q.n_protocols : 1), sizeof *ps);
	gpend *p = ps ? pend_new(a, req, v, w) : NULL;
	if (!p) { free(ps); hw_kg_join_free(&q); return -ENOMEM; }
	for (int32_t i = 0; i < q.n_protocols; i++) {
		ps[i].name = G(q.protocols[i].name);
		ps[i].metadata = q.protocols[i].metadata.p;
		ps[i].metadata_len = q.protocols[i].metadata.len;
	}
	hw_gjoin_req g = {
		.group_id = G(q.group_id), .member_id = G(q.member_id), .group_instance_id = G(q.group_instance_id),
		.client_id = client_id.len > 0 ? G(client_id) : (hw_gstr){ "", 0 },
		.client_host = client_host.len > 0 ? G(client_host) : (hw_gstr){ "", 0 }, .protocol_type = G(q.protocol_type),
		.session_timeout_ms = q.session_timeout_ms, .rebalance_timeout_ms = q.rebalance_timeout_ms,
		/* KIP-394: JoinGroup v4+ without a group.instance.id */
		.require_known_member_id = v >= 4 && q.group_instance_id.len < 0,
		.n_protocols = q.n_protocols, .protocols = ps,
	};
	hw_group_join(a->co, &g, join_done, p);
	free(ps);
	hw_kg_join_free(&q);
	return pend_leave(p);
}

/* ---- SyncGroup ----------------------------------------------------------------- */
static void sync_done(void *ctx, const hw_gsync_resp *g)
{
	gpend *p = ctx;
	hw_kg_sync_encode5(pend_writer(p), p->version, g->error, g->protocol_type, g->protocol_name, g->assignment,
			   g->assignment_len);
	pend_answered(p);
}

static int sync_group(hw_group_api *a, void *req, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_sync_req q;
	int rc = hw_kg_sync_decode(r, v, &q);
	if (rc) { hw_kg_sync_free(&q); return rc; }
	hw_gassign *as = calloc((size_t)(q.n_assign ? q.n_assign : 1), sizeof *as);
	gpend *p = as ? pend_new(a, req, v, w) : NULL;
	if (!p) { free(as); hw_kg_sync_free(&q); return -ENOMEM; }
	for (int32_t i = 0; i < q.n_assign; i++) {
		as[i].member_id = G(q.assign[i].member_id);
		as[i].assignment = q.assign[i].assignment.p;
		as[i].assignment_len = q.assign[i].assignment.len;
	}
	hw_gsync_req g = { .group_id = G(q.group_id), .member_id = G(q.member_id),
			   .group_instance_id = G(q.group_instance_id), .generation = q.generation,
			   .n_assign = q.n_assign, .assign = as };
	hw_group_sync(a->co, &g, sync_done, p);
	free(as);
	hw_kg_sync_free(&q);
	return pend_leave(p);
}

/* ---- Heartbeat, LeaveGroup --------------------------------------------------- */
static int heartbeat(hw_group_api *a, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_hb_req q;
	int rc = hw_kg_hb_decode(r, v, &q);
	if (rc) return rc;
	int16_t e = hw_group_heartbeat(a->co, G(q.group_id), G(q.member_id), G(q.group_instance_id), q.generation);
	hw_kg_hb_encode(w, v, e);
	return 0;
}

static int leave_group(hw_group_api *a, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_leave_req q;
	int rc = hw_kg_leave_decode(r, v, &q);
	if (rc) { hw_kg_leave_free(&q); return rc; }
	hw_gstr *ids = calloc((size_t)(q.n ? q.n : 1), sizeof *ids);
	int16_t *errs = calloc((size_t)(q.n ? q.n : 1), sizeof *errs);
	if (!ids || !errs) { free(ids); free(errs); hw_kg_leave_free(&q); return -ENOMEM; }
	for (int32_t i = 0; i < q.n; i++) ids[i] = G(q.members[i].member_id);
	int16_t e = hw_group_leave(a->co, G(q.group_id), q.n, ids, errs);
	hw_kg_leave_encode(w, v, e, &q, errs);
	free(ids); free(errs);
	hw_kg_leave_free(&q);
	return 0;
}

/* ---- OffsetCommit --------------------------------------------------------------- */
static void commit_done(void *ctx, int32_t n, const int16_t *errs)
{
	gpend *p = ctx;
	/* n < commit.n only when the coordinator ran out of memory: its one
	 * error then stands for every partition */
	for (int32_t i = 0; i < p->commit.n; i++)
		p->errs[i] = i < n ? errs[i] : (n > 0 ? errs[0] : HW_ERR_COORDINATOR_NOT_AVAILABLE);
	hw_kg_commit_encode(pend_writer(p), p->version, &p->commit, p->errs);
	pend_answered(p);
}

/* Copy the topic names so the answer can name them after the request is gone. */
static int own_commit_topics(gpend *p, const hw_kg_commit_req *q)
{
	size_t total = 0;
	for (int32_t i = 0; i < q->n; i++) total += (size_t)(q->parts[i].topic.len > 0 ? q->parts[i].topic.len : 0);
	p->names = malloc(total + 1);
	p->commit.parts = calloc((size_t)(q->n ? q->n : 1), sizeof *p->commit.parts);
	p->errs = calloc((size_t)(q->n ? q->n : 1), sizeof *p->errs);
	if (!p->names || !p->commit.parts || !p->errs) return -ENOMEM;
	size_t at = 0;
	for (int32_t i = 0; i < q->n; i++) {
		hw_kg_commit_part *d = &p->commit.parts[i];
		*d = q->parts[i];
		int32_t l = d->topic.len > 0 ? d->topic.len : 0;
		if (l) memcpy(p->names + at, d->topic.p, (size_t)l);
		d->topic = (hw_kstr){ p->names + at, d->topic.len };
		d->metadata = (hw_kstr){ NULL, -1 }; /* not needed by the answer */
		at += (size_t)l;
	}
	p->commit.n = q->n;
	return 0;
}

static int offset_commit(hw_group_api *a, void *req, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_commit_req q;
	int rc = hw_kg_commit_decode(r, v, &q);
	if (rc) { hw_kg_commit_free(&q); return rc; }
	hw_gcommit_part *ps = calloc((size_t)(q.n ? q.n : 1), sizeof *ps);
	gpend *p = ps ? pend_new(a, req, v, w) : NULL;
	if (!p || own_commit_topics(p, &q) != 0) {
		if (p) pend_free(p);
		free(ps); hw_kg_commit_free(&q);
		return -ENOMEM;
	}
	for (int32_t i = 0; i < q.n; i++) {
		ps[i].topic = G(q.parts[i].topic);
		ps[i].partition = q.parts[i].partition;
		ps[i].offset = q.parts[i].offset;
		ps[i].leader_epoch = q.parts[i].leader_epoch;
		ps[i].metadata = G(q.parts[i].metadata);
	}
	hw_gcommit_req g = { .group_id = G(q.group_id), .member_id = G(q.member_id),
			     .group_instance_id = G(q.group_instance_id), .generation = q.generation,
			     .n = q.n, .parts = ps };
	hw_group_commit(a->co, &g, commit_done, p);
	free(ps);
	hw_kg_commit_free(&q);
	return pend_leave(p);
}

/* ---- OffsetFetch ------------------------------------------------------------------ */
typedef struct fetch_all {
	hw_kg_fetch_out *o;
	int32_t n, cap;
	int oom;
} fetch_all;

static void fetch_one(void *ctx, const char *topic, int32_t partition, int64_t offset, int32_t epoch, const char *md,
		      int32_t mdlen)
{
	fetch_all *f = ctx;
	if (f->n == f->cap) {
		int32_t nc = f->cap ? f->cap * 2 : 16;
		hw_kg_fetch_out *no = realloc(f->o, (size_t)nc * sizeof *no);
		if (!no) { f->oom = 1; return; }
		f->o = no; f->cap = nc;
	}
	f->o[f->n++] = (hw_kg_fetch_out){ topic, partition, offset, epoch, md, mdlen, HW_ERR_NONE };
}

/* Sort by topic so equal topics are consecutive (the response groups them). */
static int by_topic(const void *x, const void *y)
{
	const hw_kg_fetch_out *a = x, *b = y;
	int c = strcmp(a->topic, b->topic);
	return c ? c : (a->partition > b->partition) - (a->partition < b->partition);
}

/* One group's offsets encoded (v8+ a request names several groups). */
static int offset_fetch_group(hw_group_api *a, int16_t v, const hw_kg_fetch_group *q, hw_kw *w)
{
	int16_t e;
	fetch_all f = { 0 };
	char *names = NULL;
	if (q->all) {
		e = hw_group_fetch_all(a->co, G(q->group_id), fetch_one, &f);
		if (f.oom) { free(f.o); return -ENOMEM; }
		if (f.n) qsort(f.o, (size_t)f.n, sizeof *f.o, by_topic);
	} else {
		hw_gfetch_part *ps = calloc((size_t)(q->n ? q->n : 1), sizeof *ps);
		f.o = calloc((size_t)(q->n ? q->n : 1), sizeof *f.o);
		size_t total = 0;
		for (int32_t i = 0; i < q->n; i++) total += (size_t)(q->parts[i].topic.len > 0 ? q->parts[i].topic.len : 0) + 1;
		names = malloc(total + 1);
		if (!ps || !f.o || !names) { free(ps); free(f.o); free(names); return -ENOMEM; }
		for (int32_t i = 0; i < q->n; i++) {
			ps[i].topic = G(q->parts[i].topic);
			ps[i].partition = q->parts[i].partition;
		}
		e = hw_group_fetch(a->co, G(q->group_id), q->n, ps);
		size_t at = 0;
		for (int32_t i = 0; i < q->n; i++) {
			int32_t l = q->parts[i].topic.len > 0 ? q->parts[i].topic.len : 0;
			if (l) memcpy(names + at, q->parts[i].topic.p, (size_t)l);
			names[at + (size_t)l] = 0;
			f.o[i] = (hw_kg_fetch_out){ names + at, ps[i].partition, ps[i].offset, ps[i].leader_epoch,
						    ps[i].metadata, ps[i].metadata_len, ps[i].error };
			at += (size_t)l + 1;
		}
		f.n = q->n;
		free(ps);
	}
	/* the answer names the group as asked */
	int32_t gl = q->group_id.len > 0 ? q->group_id.len : 0;
	char *gid = malloc((size_t)gl + 1);
	if (!gid) { free(f.o); free(names); return -ENOMEM; }
	if (gl) memcpy(gid, q->group_id.p, (size_t)gl);
	gid[gl] = 0;
	hw_kg_fetch_group_encode(w, v, gid, f.n, f.o, e);
	free(gid);
	free(f.o);
	free(names);
	return 0;
}

static int offset_fetch(hw_group_api *a, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_fetch_req q;
	int rc = hw_kg_fetch_decode(r, v, &q);
	if (rc) { hw_kg_fetch_free(&q); return rc; }
	/* require_stable (v7+): no transactions, so no offset is pending */
	hw_kg_fetch_begin(w, v, q.n_groups);
	for (int32_t i = 0; i < q.n_groups && !rc; i++) rc = offset_fetch_group(a, v, &q.groups[i], w);
	hw_kg_fetch_end(w, v);
	hw_kg_fetch_free(&q);
	return rc;
}

/* ---- DescribeGroups, ListGroups ---------------------------------------------------- */
typedef struct desc_out {
	hw_kw *w;
	int16_t v;
	const char *group_id;
	hw_kg_describe_member *ms;
	int oom;
} desc_out;

static void describe_one(void *ctx, const hw_gdesc *d)
{
	desc_out *o = ctx;
	o->ms = calloc((size_t)(d->n_members ? d->n_members : 1), sizeof *o->ms);
	if (!o->ms) { o->oom = 1; return; }
	for (int32_t i = 0; i < d->n_members; i++) {
		const hw_gdesc_member *m = &d->members[i];
		o->ms[i] = (hw_kg_describe_member){ .member_id = m->member_id, .client_id = m->client_id,
			.client_host = m->client_host, .metadata = m->metadata, .metadata_len = m->metadata_len,
			.assignment = m->assignment, .assignment_len = m->assignment_len };
	}
	hw_kg_describe_group g = { .error = d->error, .group_id = o->group_id, .state = d->state,
				   .protocol_type = d->protocol_type, .protocol = d->protocol,
				   .n_members = d->n_members, .members = o->ms };
	hw_kg_describe_group_encode(o->w, o->v, &g);
	free(o->ms);
}

static int describe_groups(hw_group_api *a, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_describe_req q;
	int rc = hw_kg_describe_decode(r, v, &q);
	if (rc) { hw_kg_describe_free(&q); return rc; }
	hw_kg_describe_begin(w, v, q.n);
	for (int32_t i = 0; i < q.n && rc == 0; i++) {
		/* the answer names the group as asked (NUL-terminated copy) */
		int32_t l = q.groups[i].len > 0 ? q.groups[i].len : 0;
		char *id = malloc((size_t)l + 1);
		if (!id) { rc = -ENOMEM; break; }
		if (l) memcpy(id, q.groups[i].p, (size_t)l);
		id[l] = 0;
		desc_out o = { .w = w, .v = v, .group_id = id };
		rc = hw_group_describe(a->co, G(q.groups[i]), describe_one, &o);
		if (!rc && o.oom) rc = -ENOMEM;
		free(id);
	}
	hw_kg_describe_end(w, v);
	hw_kg_describe_free(&q);
	return rc;
}

typedef struct list_all {
	const hw_kg_list_req *q;
	const char **ids, **types, **states;
	int32_t n, cap;
	int oom;
} list_all;

static void list_one(void *ctx, const char *id, const char *protocol_type, int state)
{
	list_all *l = ctx;
	const char *sn = hw_group_state_name(state);
	if (!hw_kg_list_wants(l->q, sn)) return; /* v4 states filter */
	if (l->n == l->cap) {
		int32_t nc = l->cap ? l->cap * 2 : 16;
		const char **ni = realloc(l->ids, (size_t)nc * sizeof *ni);
		if (ni) l->ids = ni;
		const char **nt = ni ? realloc(l->types, (size_t)nc * sizeof *nt) : NULL;
		if (nt) l->types = nt;
		const char **ns = nt ? realloc(l->states, (size_t)nc * sizeof *ns) : NULL;
		if (ns) l->states = ns;
		if (!ni || !nt || !ns) { l->oom = 1; return; }
		l->cap = nc;
	}
	l->ids[l->n] = id;
	l->states[l->n] = sn;
	l->types[l->n++] = protocol_type;
}

static int list_groups(hw_group_api *a, int16_t v, hw_kr *r, hw_kw *w)
{
	hw_kg_list_req q;
	int rc = hw_kg_list_decode_q(r, v, &q);
	if (rc) return rc;
	list_all l = { .q = &q };
	int16_t e = hw_group_list(a->co, list_one, &l);
	if (!l.oom) {
		hw_kg_list_begin(w, v, e, l.n);
		for (int32_t i = 0; i < l.n; i++)
			hw_kg_list_group_encode4(w, v, l.ids[i], l.types[i], l.states[i]);
		hw_kg_list_end(w, v);
	}
	free(l.ids);
	free(l.types);
	free(l.states);
	return l.oom ? -ENOMEM : 0;
}

/* ---- the entry point -------------------------------------------------------------- */
int hw_group_api_handle(hw_group_api *a, void *req, const hw_kafka_req_hdr *h, hw_kr *r, hw_kw *w)
{
	int rc;
	int16_t api_key = h->api_key, version = h->api_version;
	a->st.requests++;
	switch (api_key) {
	case 10: rc = find_coordinator(a, version, r, w); break;
	case 11: rc = join_group(a, req, version, h->client_id, h->client_host, r, w); break;
	case 12: rc = heartbeat(a, version, r, w); break;
	case 13: rc = leave_group(a, version, r, w); break;
	case 14: rc = sync_group(a, req, version, r, w); break;
	case 8:  rc = offset_commit(a, req, version, r, w); break;
	case 9:  rc = offset_fetch(a, version, r, w); break;
	case 15: rc = describe_groups(a, version, r, w); break;
	case 16: rc = list_groups(a, version, r, w); break;
	default: rc = -ENOTSUP; break;
	}
	if (rc < 0) a->st.bad_requests++;
	return rc;
}

int hw_group_api_create(hw_gcoord *co, const hw_group_api_ops *ops, void *ctx, hw_group_api **out)
{
	if (!co || !ops || !ops->pending_writer || !ops->complete) return -EINVAL;
	hw_group_api *a = calloc(1, sizeof *a);
	if (!a) return -ENOMEM;
	a->co = co; a->ops = *ops; a->ctx = ctx;
	*out = a;
	return 0;
}

void hw_group_api_free(hw_group_api *a) { free(a); }

const hw_group_api_stats *hw_group_api_get_stats(const hw_group_api *a) { return &a->st; }
