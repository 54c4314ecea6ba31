/* hw_group_offsets.c — OffsetCommit / OffsetFetch, the records written to
 * `__consumer_offsets` (group metadata on sync, offsets on commit,
 * tombstones on expiry), and the replay that rebuilds a partition's groups
 * when this broker becomes its leader. After Kafka's GroupMetadataManager
 * (storeGroup, storeOffsets, loadGroupsAndOffsets, cleanupGroupMetadata).
 * docs/groups.md "Offsets". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_batch.h"
#include "hw_group_schema.h"
#include "hw_group_int.h"

/* ---- the offset cache -------------------------------------------------------- */
static goffset *offset_find(ggroup *g, const char *topic, size_t tlen, int32_t partition)
{
	for (int32_t i = 0; i < g->n_offsets; i++) {
		goffset *o = &g->offsets[i];
		if (o->partition == partition && strlen(o->topic) == tlen && memcmp(o->topic, topic, tlen) == 0)
			return o;
	}
	return NULL;
}

static void offset_drop(ggroup *g, goffset *o)
{
	free(o->topic);
	free(o->metadata);
	*o = g->offsets[--g->n_offsets];
}

/* Insert or replace. 0 or -ENOMEM (cache unchanged). */
static int offset_put(ggroup *g, const char *topic, size_t tlen, int32_t partition, int64_t offset,
		      int32_t epoch, const char *meta, size_t mlen, int64_t ts)
{
	char *m = hwg_strdup((hw_gstr){ meta ? meta : "", meta ? (int32_t)mlen : 0 });
	if (!m) return -ENOMEM;
	goffset *o = offset_find(g, topic, tlen, partition);
	if (!o) {
		if (g->n_offsets == g->cap_offsets) {
			int32_t nc = g->cap_offsets ? g->cap_offsets * 2 : 8;
			goffset *no = realloc(g->offsets, (size_t)nc * sizeof *no);
			if (!no) { free(m); return -ENOMEM; }
			g->offsets = no; g->cap_offsets = nc;
		}
		char *t = hwg_strdup((hw_gstr){ topic, (int32_t)tlen });
		if (!t) { free(m); return -ENOMEM; }
		o = &g->offsets[g->n_offsets++];
		memset(o, 0, sizeof *o);
		o->topic = t;
		o->partition = partition;
	}
	free(o->metadata);
	o->metadata = m;
	o->metadata_len = meta ? (int32_t)mlen : 0;
	o->offset = offset;
	o->leader_epoch = epoch;
	o->commit_ts = ts;
	return 0;
}

void hwg_offsets_free(ggroup *g)
{
	while (g->n_offsets) offset_drop(g, &g->offsets[g->n_offsets - 1]);
	free(g->offsets);
	g->offsets = NULL;
	g->cap_offsets = 0;
}

/* ---- writing records ---------------------------------------------------------- */
typedef struct wrec {
	uint8_t *key, *value;   /* value NULL = tombstone */
	int32_t klen, vlen;
} wrec;

/* Build one batch of n records and append it; done(ctx) is the log's
 * completion. 0 or -errno (nothing appended, done never called). */
static int append_records(hw_gcoord *c, int32_t p, const wrec *r, size_t n, hw_glog_done_fn done, void *ctx)
{
	hw_record_in *in = calloc(n, sizeof *in);
	if (!in) return -ENOMEM;
	int64_t ts = hwg_wall(c);
	for (size_t i = 0; i < n; i++) {
		in[i].timestamp = ts;
		in[i].key = r[i].key; in[i].key_len = r[i].klen;
		in[i].value = r[i].value; in[i].value_len = r[i].value ? r[i].vlen : -1;
	}
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	ssize_t sz = hw_batch_build_size(&s, in, n);
	int rc = (int)(sz < 0 ? sz : 0);
	uint8_t *b = sz > 0 ? malloc((size_t)sz) : NULL;
	if (!rc && !b) rc = -ENOMEM;
	if (!rc && hw_batch_build(b, (size_t)sz, &s, in, n) != sz) rc = -EINVAL;
	if (!rc) rc = c->log->append(c->log, p, b, (size_t)sz, done, ctx);
	free(b);
	free(in);
	return rc;
}

static void wrecs_free(wrec *r, size_t n)
{
	for (size_t i = 0; i < n; i++) { free(r[i].key); free(r[i].value); }
	free(r);
}

/* Kafka's storeGroup error mapping. */
static int16_t group_write_error(int err)
{
	switch (err) {
	case HW_ERR_NONE: return HW_ERR_NONE;
	case HW_ERR_UNKNOWN_TOPIC_OR_PARTITION:
	case HW_ERR_NOT_ENOUGH_REPLICAS:
	case HW_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND: return HW_ERR_COORDINATOR_NOT_AVAILABLE;
	case HW_ERR_NOT_LEADER_OR_FOLLOWER:
	case HW_ERR_KAFKA_STORAGE_ERROR: return HW_ERR_NOT_COORDINATOR;
	case HW_ERR_REQUEST_TIMED_OUT: return HW_ERR_REBALANCE_IN_PROGRESS;
	case HW_ERR_MESSAGE_TOO_LARGE:
	case HW_ERR_RECORD_LIST_TOO_LARGE:
	case HW_ERR_INVALID_FETCH_SIZE: return HW_ERR_UNKNOWN_SERVER_ERROR;
	default: return (int16_t)err;
	}
}

/* Kafka's storeOffsets error mapping. */
static int16_t offset_write_error(int err)
{
	switch (err) {
	case HW_ERR_NONE: return HW_ERR_NONE;
	case HW_ERR_UNKNOWN_TOPIC_OR_PARTITION:
	case HW_ERR_NOT_ENOUGH_REPLICAS:
	case HW_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND: return HW_ERR_COORDINATOR_NOT_AVAILABLE;
	case HW_ERR_NOT_LEADER_OR_FOLLOWER:
	case HW_ERR_KAFKA_STORAGE_ERROR: return HW_ERR_NOT_COORDINATOR;
	case HW_ERR_MESSAGE_TOO_LARGE:
	case HW_ERR_RECORD_LIST_TOO_LARGE:
	case HW_ERR_INVALID_FETCH_SIZE: return HW_ERR_INVALID_COMMIT_OFFSET_SIZE;
	default: return (int16_t)err;
	}
}

/* A write in flight: the group it belongs to is looked up again on
 * completion (it may be gone: the partition unloaded). */
typedef struct gwrite {
	hw_gcoord *c;
	char *group;
	int32_t partition;
	uint32_t load_epoch;
	int32_t generation;
	int await;              /* the leader's SyncGroup waits for it */
} gwrite;

static ggroup *write_group(gwrite *w)
{
	hw_gcoord *c = w->c;
	if (c->loaded[w->partition] != HWG_LOADED || c->load_epoch[w->partition] != w->load_epoch) return NULL;
	return hwg_find(c, w->group, strlen(w->group));
}

static void group_written(void *ctx, int err, int64_t base)
{
	(void)base;
	gwrite *w = ctx;
	ggroup *g = write_group(w);
	int16_t e = group_write_error(err);
	if (e) HW_LOG(WARN, "group", "group %s: metadata write failed: %s", w->group, hw_err_name(e));
	if (g && w->await) hwg_sync_written(w->c, g, w->generation, e);
	free(w->group);
	free(w);
}

int hwg_store_group(hw_gcoord *c, ggroup *g, int await)
{
	hw_gschema_member_in *mi = calloc((size_t)(g->n_members ? g->n_members : 1), sizeof *mi);
	gwrite *w = calloc(1, sizeof *w);
	wrec r = { 0 };
	int rc = mi && w ? 0 : -ENOMEM;
	for (int32_t i = 0; !rc && i < g->n_members; i++) {
		const gmember *m = &g->members[i];
		mi[i].member_id = m->id;
		mi[i].client_id = m->client_id;
		mi[i].client_host = m->client_host;
		mi[i].rebalance_timeout = m->rebalance_ms;
		mi[i].session_timeout = m->session_ms;
		for (int32_t k = 0; k < m->n_protocols; k++)
			if (g->protocol && strcmp(m->protocols[k].name, g->protocol) == 0) {
				mi[i].subscription = m->protocols[k].meta;
				mi[i].subscription_len = m->protocols[k].meta_len;
			}
		mi[i].assignment = m->assignment;
		mi[i].assignment_len = m->assignment_len;
	}
	size_t glen = strlen(g->id);
	if (!rc) {
		r.klen = hw_gschema_group_key_encode(NULL, 0, g->id, glen);
		r.vlen = hw_gschema_group_value_encode(NULL, 0, g->protocol_type, g->generation, g->protocol,
							g->leader, g->state_ts, mi, g->n_members);
		if (r.klen < 0 || r.vlen < 0) rc = -EMSGSIZE;
	}
	if (!rc) {
		r.key = malloc((size_t)r.klen);
		r.value = malloc((size_t)r.vlen);
		w->group = hwg_strdup((hw_gstr){ g->id, (int32_t)glen });
		if (!r.key || !r.value || !w->group) rc = -ENOMEM;
	}
	if (!rc) {
		hw_gschema_group_key_encode(r.key, (size_t)r.klen, g->id, glen);
		hw_gschema_group_value_encode(r.value, (size_t)r.vlen, g->protocol_type, g->generation, g->protocol,
					      g->leader, g->state_ts, mi, g->n_members);
		w->c = c;
		w->partition = g->partition;
		w->load_epoch = c->load_epoch[g->partition];
		w->generation = g->generation;
		w->await = await;
		rc = append_records(c, g->partition, &r, 1, group_written, w);
	}
	if (rc && w) { free(w->group); free(w); }
	if (rc) HW_LOG(WARN, "group", "group %s: metadata not written (%d)", g->id, rc);
	free(r.key); free(r.value); free(mi);
	return rc;
}

/* ---- OffsetCommit ------------------------------------------------------------ */
typedef struct gcommit {
	gwrite w;
	hw_gcommit_cb cb;
	void *ctx;
	int32_t n;
	int16_t *errs;
	int32_t *index;          /* parts written -> request index */
	int32_t nw;
	hw_gcommit_part *parts;  /* copies (strings owned) of the written parts */
	int64_t ts;
} gcommit;

static void gcommit_free(gcommit *k)
{
	for (int32_t i = 0; i < k->nw; i++) {
		free((char *)k->parts[i].topic.p);
		free((char *)k->parts[i].metadata.p);
	}
	free(k->parts); free(k->index); free(k->errs); free(k->w.group);
	free(k);
}

static void commit_written(void *ctx, int err, int64_t base)
{
	(void)base;
	gcommit *k = ctx;
	hw_gcoord *c = k->w.c;
	int16_t e = offset_write_error(err);
	ggroup *g = write_group(&k->w);
	if (!e && !g && c->loaded[k->w.partition] == HWG_LOADED && c->load_epoch[k->w.partition] == k->w.load_epoch)
		g = hwg_add_group(c, (hw_gstr){ k->w.group, (int32_t)strlen(k->w.group) });
	if (!e && !g) e = HW_ERR_NOT_COORDINATOR;
	for (int32_t i = 0; i < k->nw; i++) {
		const hw_gcommit_part *p = &k->parts[i];
		int16_t pe = e;
		if (!pe && offset_put(g, p->topic.p, (size_t)p->topic.len, p->partition, p->offset, p->leader_epoch,
				      p->metadata.p, (size_t)p->metadata.len, k->ts) != 0)
			pe = HW_ERR_UNKNOWN_SERVER_ERROR;
		k->errs[k->index[i]] = pe;
	}
	if (e) c->st.commit_errors++; else c->st.commits++;
	if (k->cb) k->cb(k->ctx, k->n, k->errs);
	gcommit_free(k);
}

static void commit_all(hw_gcommit_cb cb, void *ctx, int32_t n, int16_t err)
{
	int16_t *errs = calloc((size_t)(n > 0 ? n : 1), sizeof *errs);
	static int16_t oom[1] = { HW_ERR_COORDINATOR_NOT_AVAILABLE };
	if (!errs) { if (cb) cb(ctx, n > 0 ? 1 : 0, oom); return; }
	for (int32_t i = 0; i < n; i++) errs[i] = err;
	if (cb) cb(ctx, n, errs);
	free(errs);
}

/* Kafka's handleCommitOffsets / doCommitOffsets group checks. */
static int16_t commit_check(hw_gcoord *c, const hw_gcommit_req *q, ggroup **gp)
{
	ggroup *g = hwg_find(c, q->group_id.p, (size_t)q->group_id.len);
	if (!g) {
		if (q->generation >= 0) return HW_ERR_ILLEGAL_GENERATION; /* an older generation */
		g = hwg_add_group(c, q->group_id); /* offsets only, no group management */
		if (!g) return HW_ERR_COORDINATOR_NOT_AVAILABLE;
	}
	*gp = g;
	if (g->state == HW_GST_DEAD) return HW_ERR_COORDINATOR_NOT_AVAILABLE;
	if (q->generation < 0 && g->state == HW_GST_EMPTY) return HW_ERR_NONE;
	if (g->state == HW_GST_COMPLETING_REBALANCE) return HW_ERR_REBALANCE_IN_PROGRESS;
	gmember *m = hwg_member(g, q->member_id);
	if (!m) return HW_ERR_UNKNOWN_MEMBER_ID;
	if (q->generation != g->generation) return HW_ERR_ILLEGAL_GENERATION;
	m->hb_deadline = hwg_now(c) + m->session_ms;
	return HW_ERR_NONE;
}

void hw_group_commit(hw_gcoord *c, const hw_gcommit_req *q, hw_gcommit_cb cb, void *ctx)
{
	int16_t e = hwg_route(c, q->group_id);
	int32_t n = q->n > 0 ? q->n : 0;
	if (e) { commit_all(cb, ctx, n, e); return; }
	ggroup *g = NULL;
	e = commit_check(c, q, &g);
	if (e) {
		if (g && g->n_members == 0 && g->n_offsets == 0 && g->state == HW_GST_EMPTY && g->generation == 0)
			hwg_remove_group(c, g);
		commit_all(cb, ctx, n, e);
		return;
	}
	gcommit *k = calloc(1, sizeof *k);
	wrec *r = calloc((size_t)(n ? n : 1), sizeof *r);
	if (k) {
		k->errs = calloc((size_t)(n ? n : 1), sizeof *k->errs);
		k->index = calloc((size_t)(n ? n : 1), sizeof *k->index);
		k->parts = calloc((size_t)(n ? n : 1), sizeof *k->parts);
		k->w.group = hwg_strdup(q->group_id);
	}
	int rc = k && r && k->errs && k->index && k->parts && k->w.group ? 0 : -ENOMEM;
	size_t glen = (size_t)q->group_id.len;
	for (int32_t i = 0; !rc && i < n; i++) {
		const hw_gcommit_part *p = &q->parts[i];
		int32_t ml = p->metadata.p && p->metadata.len > 0 ? p->metadata.len : 0;
		if (ml > c->cfg.offset_metadata_max_bytes) { k->errs[i] = HW_ERR_OFFSET_METADATA_TOO_LARGE; continue; }
		if (!p->topic.p || p->topic.len < 0 || memchr(p->topic.p, 0, (size_t)p->topic.len)) {
			k->errs[i] = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
			continue;
		}
		wrec *x = &r[k->nw];
		x->klen = hw_gschema_offset_key_encode(NULL, 0, q->group_id.p, glen, p->topic.p, (size_t)p->topic.len, p->partition);
		x->vlen = hw_gschema_offset_value_encode(NULL, 0, p->offset, p->leader_epoch, p->metadata.p, (size_t)ml, 0);
		if (x->klen < 0 || x->vlen < 0) { k->errs[i] = HW_ERR_INVALID_COMMIT_OFFSET_SIZE; continue; }
		x->key = malloc((size_t)x->klen);
		x->value = malloc((size_t)x->vlen);
		hw_gcommit_part *cp = &k->parts[k->nw];
		cp->topic = (hw_gstr){ hwg_strdup(p->topic), p->topic.len };
		cp->metadata = (hw_gstr){ hwg_strdup((hw_gstr){ ml ? p->metadata.p : "", ml }), ml };
		cp->partition = p->partition;
		cp->offset = p->offset;
		cp->leader_epoch = p->leader_epoch;
		k->index[k->nw] = i;
		k->nw++;
		if (!x->key || !x->value || !cp->topic.p || !cp->metadata.p) { rc = -ENOMEM; break; }
		k->ts = hwg_wall(c);
		hw_gschema_offset_key_encode(x->key, (size_t)x->klen, q->group_id.p, glen, p->topic.p, (size_t)p->topic.len, p->partition);
		hw_gschema_offset_value_encode(x->value, (size_t)x->vlen, p->offset, p->leader_epoch, p->metadata.p, (size_t)ml, k->ts);
	}
	if (rc) {
		if (r) wrecs_free(r, k ? (size_t)k->nw : 0);
		if (k) gcommit_free(k);
		commit_all(cb, ctx, n, HW_ERR_COORDINATOR_NOT_AVAILABLE);
		return;
	}
	k->w.c = c;
	k->w.partition = g->partition;
	k->w.load_epoch = c->load_epoch[g->partition];
	k->cb = cb; k->ctx = ctx; k->n = n;
	if (k->nw == 0) { /* nothing valid to write (or n == 0) */
		wrecs_free(r, 0);
		if (cb) cb(ctx, n, k->errs);
		gcommit_free(k);
		return;
	}
	size_t nw = (size_t)k->nw; /* k may be freed inside append */
	rc = append_records(c, g->partition, r, nw, commit_written, k);
	wrecs_free(r, nw);
	if (rc) {
		int16_t fe = rc == -ENOENT ? HW_ERR_NOT_COORDINATOR : HW_ERR_COORDINATOR_NOT_AVAILABLE;
		for (int32_t i = 0; i < k->nw; i++) k->errs[k->index[i]] = fe;
		c->st.commit_errors++;
		if (cb) cb(ctx, n, k->errs);
		gcommit_free(k);
	}
}

/* ---- OffsetFetch ------------------------------------------------------------ */
int16_t hw_group_fetch(hw_gcoord *c, hw_gstr group, int32_t n, hw_gfetch_part *parts)
{
	int16_t e = hwg_route(c, group);
	ggroup *g = e ? NULL : hwg_find(c, group.p, (size_t)group.len);
	for (int32_t i = 0; i < n; i++) {
		hw_gfetch_part *p = &parts[i];
		p->offset = -1; p->leader_epoch = -1; p->metadata = ""; p->metadata_len = 0; p->error = e;
		if (e || !g || !p->topic.p || p->topic.len < 0) continue;
		const goffset *o = offset_find(g, p->topic.p, (size_t)p->topic.len, p->partition);
		if (!o) continue;
		p->offset = o->offset;
		p->leader_epoch = o->leader_epoch;
		p->metadata = o->metadata;
		p->metadata_len = o->metadata_len;
	}
	return e;
}

int16_t hw_group_fetch_all(hw_gcoord *c, hw_gstr group, hw_gfetch_all_fn fn, void *ctx)
{
	int16_t e = hwg_route(c, group);
	if (e) return e;
	ggroup *g = hwg_find(c, group.p, (size_t)group.len);
	for (int32_t i = 0; g && i < g->n_offsets; i++) {
		const goffset *o = &g->offsets[i];
		fn(ctx, o->topic, o->partition, o->offset, o->leader_epoch, o->metadata, o->metadata_len);
	}
	return HW_ERR_NONE;
}

/* ---- expiry (offsets.retention.minutes) --------------------------------------- */
static void tombstones_written(void *ctx, int err, int64_t base)
{
	(void)base;
	if (err) HW_LOG(WARN, "group", "offset tombstones not written: %s", hw_err_name(err));
	(void)ctx;
}

/* Kafka 2.1+ (KIP-211): a group's offsets expire offsets.retention.minutes
 * after the group became Empty; a group without group management (no
 * protocol type) expires each offset that long after its commit. An Empty
 * group left without offsets goes Dead and its metadata is tombstoned. */
void hwg_offsets_expire(hw_gcoord *c, ggroup *g, int64_t wall_now)
{
	if (g->state != HW_GST_EMPTY || c->loaded[g->partition] != HWG_LOADED) return;
	int64_t ret = c->cfg.offsets_retention_ms;
	int simple = g->protocol_type == NULL || g->protocol_type[0] == 0;
	if (!simple && g->state_ts + ret > wall_now) return;
	int32_t n = 0;
	for (int32_t i = 0; i < g->n_offsets; i++)
		if (!simple || g->offsets[i].commit_ts + ret <= wall_now) n++;
	int dead = n == g->n_offsets && g->n_pending == 0;
	if (n == 0 && !dead) return;
	wrec *r = calloc((size_t)n + 1, sizeof *r);
	if (!r) return;
	size_t glen = strlen(g->id), k = 0;
	for (int32_t i = g->n_offsets - 1; i >= 0; i--) {
		goffset *o = &g->offsets[i];
		if (simple && o->commit_ts + ret > wall_now) continue;
		r[k].klen = hw_gschema_offset_key_encode(NULL, 0, g->id, glen, o->topic, strlen(o->topic), o->partition);
		r[k].key = r[k].klen > 0 ? malloc((size_t)r[k].klen) : NULL;
		if (r[k].key)
			hw_gschema_offset_key_encode(r[k].key, (size_t)r[k].klen, g->id, glen, o->topic, strlen(o->topic), o->partition);
		HW_LOG(INFO, "group", "group %s: offset %s-%d expired", g->id, o->topic, o->partition);
		offset_drop(g, o);
		if (r[k].key) k++;
	}
	if (dead && g->generation > 0) {
		r[k].klen = hw_gschema_group_key_encode(NULL, 0, g->id, glen);
		r[k].key = malloc((size_t)r[k].klen);
		if (r[k].key) { hw_gschema_group_key_encode(r[k].key, (size_t)r[k].klen, g->id, glen); k++; }
	}
	if (k) append_records(c, g->partition, r, k, tombstones_written, NULL);
	wrecs_free(r, (size_t)n + 1);
	if (dead) hwg_transition(c, g, HW_GST_DEAD, "no offsets left");
}

/* ---- replay ---------------------------------------------------------------- */
static void replay_group(hw_gcoord *c, int32_t p, const hw_gschema_key *k, const hw_record *rec)
{
	ggroup *g = hwg_find(c, (const char *)k->group.p, (size_t)k->group.len);
	hw_gstr gid = { (const char *)k->group.p, k->group.len };
	if (!rec->value) { /* tombstone: the group's metadata is gone */
		if (g) {
			for (int32_t i = 0; i < g->n_members; i++) hwg_member_free(&g->members[i]);
			c->st.members -= g->n_members;
			g->n_members = 0;
			free(g->leader); free(g->protocol); free(g->protocol_type);
			g->leader = g->protocol = g->protocol_type = NULL;
			g->generation = 0;
			g->state = HW_GST_EMPTY;
			if (g->n_offsets == 0) hwg_remove_group(c, g);
		}
		return;
	}
	hw_gschema_group v;
	if (hw_gschema_group_value_decode(rec->value, (size_t)rec->value_len, &v) != 0) {
		c->st.drops[HW_GD_BAD_VALUE]++;
		return;
	}
	if (!g && !(g = hwg_add_group(c, gid))) { c->st.drops[HW_GD_NO_MEMORY]++; return; }
	(void)p;
	for (int32_t i = 0; i < g->n_members; i++) hwg_member_free(&g->members[i]);
	c->st.members -= g->n_members;
	g->n_members = 0;
	free(g->leader); free(g->protocol); free(g->protocol_type);
	g->protocol_type = hwg_strdup((hw_gstr){ (const char *)v.protocol_type.p, v.protocol_type.len });
	g->protocol = hwg_strdup((hw_gstr){ (const char *)v.protocol.p, v.protocol.len });
	g->leader = hwg_strdup((hw_gstr){ (const char *)v.leader.p, v.leader.len });
	g->generation = v.generation;
	if (v.current_state_timestamp >= 0) g->state_ts = v.current_state_timestamp;
	if (v.n_members > g->cap_members) {
		gmember *nm = realloc(g->members, (size_t)v.n_members * sizeof *nm);
		if (!nm) { c->st.drops[HW_GD_NO_MEMORY]++; return; }
		g->members = nm; g->cap_members = v.n_members;
	}
	const uint8_t *mp = v.members;
	int32_t idx = 0;
	hw_gschema_member sm;
	int64_t now = hwg_now(c);
	while (hw_gschema_member_next(&v, &mp, &idx, &sm) == 1) {
		gmember *m = &g->members[g->n_members];
		memset(m, 0, sizeof *m);
		m->id = hwg_strdup((hw_gstr){ (const char *)sm.member_id.p, sm.member_id.len });
		m->client_id = hwg_strdup((hw_gstr){ (const char *)sm.client_id.p, sm.client_id.len });
		m->client_host = hwg_strdup((hw_gstr){ (const char *)sm.client_host.p, sm.client_host.len });
		m->protocols = calloc(1, sizeof *m->protocols);
		m->assignment = malloc((size_t)sm.assignment.len + 1);
		if (m->protocols) {
			m->n_protocols = 1;
			m->protocols[0].name = hwg_strdup((hw_gstr){ g->protocol ? g->protocol : "", g->protocol ? (int32_t)strlen(g->protocol) : 0 });
			m->protocols[0].meta = malloc((size_t)sm.subscription.len + 1);
			m->protocols[0].meta_len = sm.subscription.len;
		}
		if (!m->id || !m->client_id || !m->client_host || !m->protocols || !m->protocols[0].name ||
		    !m->protocols[0].meta || !m->assignment) {
			hwg_member_free(m);
			c->st.drops[HW_GD_NO_MEMORY]++;
			continue;
		}
		memcpy(m->protocols[0].meta, sm.subscription.p, (size_t)sm.subscription.len);
		memcpy(m->assignment, sm.assignment.p, (size_t)sm.assignment.len);
		m->assignment_len = sm.assignment.len;
		m->session_ms = sm.session_timeout;
		m->rebalance_ms = sm.rebalance_timeout;
		m->hb_deadline = now + m->session_ms;
		g->n_members++;
		c->st.members++;
	}
	g->state = g->n_members ? HW_GST_STABLE : HW_GST_EMPTY;
}

static void replay_record(hw_gcoord *c, int32_t p, const hw_record *rec)
{
	c->st.replayed_records++;
	if (!rec->key) { c->st.drops[HW_GD_NULL_KEY]++; return; }
	hw_gschema_key k;
	if (hw_gschema_key_decode(rec->key, (size_t)rec->key_len, &k) != 0 || k.group.len <= 0) {
		c->st.drops[HW_GD_BAD_KEY]++;
		return;
	}
	if (hw_gcoord_partition_of(c, (const char *)k.group.p, (size_t)k.group.len) != p) {
		c->st.drops[HW_GD_WRONG_PARTITION]++;
		return;
	}
	if (k.version == HW_GSCHEMA_KEY_GROUP_V2) { replay_group(c, p, &k, rec); return; }
	ggroup *g = hwg_find(c, (const char *)k.group.p, (size_t)k.group.len);
	if (!rec->value) { /* tombstone: the offset was deleted */
		goffset *o = g ? offset_find(g, (const char *)k.topic.p, (size_t)k.topic.len, k.partition) : NULL;
		if (o) offset_drop(g, o);
		return;
	}
	hw_gschema_offset v;
	if (hw_gschema_offset_value_decode(rec->value, (size_t)rec->value_len, &v) != 0) {
		c->st.drops[HW_GD_BAD_VALUE]++;
		return;
	}
	if (!g && !(g = hwg_add_group(c, (hw_gstr){ (const char *)k.group.p, k.group.len }))) {
		c->st.drops[HW_GD_NO_MEMORY]++;
		return;
	}
	if (offset_put(g, (const char *)k.topic.p, (size_t)k.topic.len, k.partition, v.offset, v.leader_epoch,
		       (const char *)v.metadata.p, (size_t)v.metadata.len, v.commit_timestamp) != 0)
		c->st.drops[HW_GD_NO_MEMORY]++;
}

int hwg_replay_batches(hw_gcoord *c, int32_t p, const uint8_t *buf, size_t len, int64_t *next)
{
	hw_batch_iter it;
	hw_batch_iter_init(&it, buf, len, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED);
	hw_batch_hdr h;
	const uint8_t *b;
	int r;
	int64_t from = *next;
	while ((r = hw_batch_iter_next(&it, &h, &b)) == 1) {
		int64_t after = hw_batch_next_offset(&h);
		if (after > *next) *next = after;
		if (hw_batch_codec(&h) != HW_BATCH_CODEC_NONE) { c->st.drops[HW_GD_COMPRESSED]++; continue; }
		if (hw_batch_is_control(&h)) continue;
		hw_record_iter ri;
		if (hw_record_iter_init(&ri, b, (size_t)h.batch_length + HW_BATCH_LOG_OVERHEAD, HW_BATCH_V_COMPACTED) != 0) {
			c->st.drops[HW_GD_BAD_BATCH]++;
			continue;
		}
		hw_record rec;
		int rr;
		while ((rr = hw_record_iter_next(&ri, &rec)) == 1)
			if (rec.offset >= from) replay_record(c, p, &rec);
		if (rr < 0) c->st.drops[HW_GD_BAD_BATCH]++;
	}
	if (r < 0) {
		/* a batch that fails its CRC: skip it by its framing */
		c->st.drops[HW_GD_BAD_BATCH]++;
		const uint8_t *bad = buf + hw_batch_iter_whole_bytes(&it);
		if (hw_batch_iter_rest_bytes(&it) >= HW_BATCH_HEADER_SIZE) {
			int64_t after = hw_batch_raw_base_offset(bad) + hw_batch_raw_last_offset_delta(bad) + 1;
			if (after > *next) *next = after;
		}
	}
	return 0;
}

int hwg_replay(hw_gcoord *c, int32_t p)
{
	size_t cap = 64 * 1024;
	uint8_t *buf = malloc(cap);
	if (!buf) return -ENOMEM;
	int64_t next = 0;
	for (;;) {
		size_t need = 0;
		ssize_t got = c->log->read(c->log, p, next, buf, cap, &need);
		if (got < 0) { free(buf); return (int)got; }
		if (got == 0) {
			if (need <= cap) break;
			uint8_t *nb = realloc(buf, need);
			if (!nb) { free(buf); return -ENOMEM; }
			buf = nb; cap = need;
			continue;
		}
		int64_t before = next;
		hwg_replay_batches(c, p, buf, (size_t)got, &next);
		if (next <= before) break; /* no progress: a malformed log must not loop */
	}
	free(buf);
	return 0;
}
