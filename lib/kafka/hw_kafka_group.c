/* hw_kafka_group.c — the group APIs' codecs (see hw_kafka_group.h). Each
 * decoder reads the version's fields in schema order, then checks the
 * reader's sticky error and that the body was consumed exactly. In flexible
 * versions (`fx`) strings, arrays and bytes are compact and every structure
 * ends with tagged fields (skipped when read, written empty). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "hw_kafka_group.h"

/* Kafka's first flexible version of each group API (KIP-482). */
#define FX_FIND     3
#define FX_JOIN     6
#define FX_SYNC     4
#define FX_HB       4
#define FX_LEAVE    4
#define FX_COMMIT   8
#define FX_FETCH    6
#define FX_DESCRIBE 5
#define FX_LIST     3

/* The end of every decoder: the body's tagged fields (flexible), then the
 * reader's error, or trailing bytes. */
static int finish(hw_kr *r, bool fx)
{
	hw_kr_tags_v(r, fx);
	if (r->err) return r->err;
	return hw_kr_left(r) ? -EBADMSG : 0;
}

/* A required (non-null) array count, or -1 with the reader failed. */
static int32_t array_req(hw_kr *r, bool fx)
{
	int32_t n = hw_kr_array_v(r, fx);
	if (!r->err && n < 0) hw_kr_fail(r, -EINVAL);
	return r->err ? -1 : n;
}

static void *array_alloc(hw_kr *r, int32_t n, size_t elem)
{
	void *p = calloc(n > 0 ? (size_t)n : 1, elem);
	if (!p) hw_kr_fail(r, -ENOMEM);
	return p;
}

/* Non-nullable bytes (JoinGroup metadata, SyncGroup assignment). */
static hw_kbytes bytes_req(hw_kr *r, bool fx)
{
	hw_kbytes b = hw_kr_nbytes_v(r, fx);
	if (!r->err && b.len < 0) hw_kr_fail(r, -EINVAL);
	return b;
}

static void wstrz(hw_kw *w, bool fx, const char *z) { hw_kw_strz_v(w, fx, z ? z : ""); }
static void wbytes(hw_kw *w, bool fx, const void *p, int32_t len)
{
	hw_kw_nbytes_v(w, fx, p ? p : "", (size_t)(len > 0 ? len : 0));
}
/* NULL or "" as null (Kafka's nullable protocol names). */
static void wnstr_empty_null(hw_kw *w, bool fx, const char *z) { hw_kw_nstrz_v(w, fx, z && *z ? z : NULL); }

/* ---- FindCoordinator --------------------------------------------------------- */
int hw_kg_find_decode(hw_kr *r, int16_t v, hw_kg_find_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_FIND_COORDINATOR_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_FIND;
	if (v <= 3) q->key = hw_kr_str_v(r, fx);
	if (v >= 1) q->key_type = hw_kr_i8(r);
	if (v <= 3) {
		q->keys = array_alloc(r, 1, sizeof *q->keys);
		if (r->err) return r->err;
		q->keys[0] = q->key;
		q->n_keys = 1;
		return finish(r, fx);
	}
	int32_t n = array_req(r, fx);
	if (n < 0) return r->err;
	q->keys = array_alloc(r, n, sizeof *q->keys);
	for (int32_t i = 0; i < n && !r->err; i++) {
		q->keys[i] = hw_kr_str_v(r, fx);
		q->n_keys = i + 1;
	}
	if (q->n_keys) q->key = q->keys[0];
	return finish(r, fx);
}

void hw_kg_find_free(hw_kg_find_req *q) { free(q->keys); q->keys = NULL; q->n_keys = 0; }

void hw_kg_find_encode_n(hw_kw *w, int16_t v, int32_t n, const hw_kg_find_resp *a)
{
	bool fx = v >= FX_FIND;
	if (v >= 1) hw_kw_i32(w, 0); /* throttle_time_ms */
	if (v <= 3) {
		hw_kw_i16(w, a->error);
		if (v >= 1) hw_kw_nstrz_v(w, fx, a->error_message);
		hw_kw_i32(w, a->node_id);
		wstrz(w, fx, a->host);
		hw_kw_i32(w, a->port);
	} else {
		hw_kw_array_v(w, fx, n);
		for (int32_t i = 0; i < n; i++) {
			hw_kw_kstr_v(w, fx, a[i].key);
			hw_kw_i32(w, a[i].node_id);
			wstrz(w, fx, a[i].host);
			hw_kw_i32(w, a[i].port);
			hw_kw_i16(w, a[i].error);
			hw_kw_nstrz_v(w, fx, a[i].error_message);
			hw_kw_tags_v(w, fx);
		}
	}
	hw_kw_tags_v(w, fx);
}

void hw_kg_find_encode(hw_kw *w, int16_t v, const hw_kg_find_resp *a) { hw_kg_find_encode_n(w, v, 1, a); }

/* ---- JoinGroup ------------------------------------------------------------------ */
int hw_kg_join_decode(hw_kr *r, int16_t v, hw_kg_join_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	q->reason.len = -1;
	if (v < 0 || v > HW_KG_JOIN_GROUP_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_JOIN;
	q->group_id = hw_kr_str_v(r, fx);
	q->session_timeout_ms = hw_kr_i32(r);
	q->rebalance_timeout_ms = v >= 1 ? hw_kr_i32(r) : q->session_timeout_ms;
	q->member_id = hw_kr_str_v(r, fx);
	if (v >= 5) q->group_instance_id = hw_kr_nstr_v(r, fx);
	q->protocol_type = hw_kr_str_v(r, fx);
	int32_t n = array_req(r, fx);
	if (n < 0) return r->err;
	q->protocols = array_alloc(r, n, sizeof *q->protocols);
	for (int32_t i = 0; i < n && !r->err; i++) {
		q->protocols[i].name = hw_kr_str_v(r, fx);
		q->protocols[i].metadata = bytes_req(r, fx);
		hw_kr_tags_v(r, fx);
		q->n_protocols = i + 1;
	}
	if (v >= 8) q->reason = hw_kr_nstr_v(r, fx);
	return finish(r, fx);
}

void hw_kg_join_free(hw_kg_join_req *q) { free(q->protocols); q->protocols = NULL; q->n_protocols = 0; }

void hw_kg_join_encode(hw_kw *w, int16_t v, const hw_kg_join_resp *a)
{
	bool fx = v >= FX_JOIN;
	if (v >= 2) hw_kw_i32(w, 0);
	hw_kw_i16(w, a->error);
	hw_kw_i32(w, a->generation);
	if (v >= 7) {
		wnstr_empty_null(w, fx, a->protocol_type);
		wnstr_empty_null(w, fx, a->protocol_name); /* nullable from v7: null when none chosen */
	} else {
		wstrz(w, fx, a->protocol_name);
	}
	wstrz(w, fx, a->leader);
	if (v >= 9) hw_kw_bool(w, false); /* skip_assignment: the leader always assigns (no static leader rejoin shortcut) */
	wstrz(w, fx, a->member_id);
	hw_kw_array_v(w, fx, a->n_members);
	for (int32_t i = 0; i < a->n_members; i++) {
		const hw_kg_join_member *m = &a->members[i];
		wstrz(w, fx, m->member_id);
		if (v >= 5) hw_kw_nstrz_v(w, fx, m->group_instance_id);
		wbytes(w, fx, m->metadata, m->metadata_len);
		hw_kw_tags_v(w, fx);
	}
	hw_kw_tags_v(w, fx);
}

/* ---- SyncGroup ------------------------------------------------------------------ */
int hw_kg_sync_decode(hw_kr *r, int16_t v, hw_kg_sync_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	q->protocol_type.len = -1;
	q->protocol_name.len = -1;
	if (v < 0 || v > HW_KG_SYNC_GROUP_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_SYNC;
	q->group_id = hw_kr_str_v(r, fx);
	q->generation = hw_kr_i32(r);
	q->member_id = hw_kr_str_v(r, fx);
	if (v >= 3) q->group_instance_id = hw_kr_nstr_v(r, fx);
	if (v >= 5) {
		q->protocol_type = hw_kr_nstr_v(r, fx);
		q->protocol_name = hw_kr_nstr_v(r, fx);
	}
	int32_t n = array_req(r, fx);
	if (n < 0) return r->err;
	q->assign = array_alloc(r, n, sizeof *q->assign);
	for (int32_t i = 0; i < n && !r->err; i++) {
		q->assign[i].member_id = hw_kr_str_v(r, fx);
		q->assign[i].assignment = bytes_req(r, fx);
		hw_kr_tags_v(r, fx);
		q->n_assign = i + 1;
	}
	return finish(r, fx);
}

void hw_kg_sync_free(hw_kg_sync_req *q) { free(q->assign); q->assign = NULL; q->n_assign = 0; }

void hw_kg_sync_encode5(hw_kw *w, int16_t v, int16_t error, const char *protocol_type, const char *protocol_name,
			const uint8_t *assignment, int32_t len)
{
	bool fx = v >= FX_SYNC;
	if (v >= 1) hw_kw_i32(w, 0);
	hw_kw_i16(w, error);
	if (v >= 5) {
		wnstr_empty_null(w, fx, protocol_type);
		wnstr_empty_null(w, fx, protocol_name);
	}
	wbytes(w, fx, assignment, len);
	hw_kw_tags_v(w, fx);
}

void hw_kg_sync_encode(hw_kw *w, int16_t v, int16_t error, const uint8_t *assignment, int32_t len)
{
	hw_kg_sync_encode5(w, v, error, NULL, NULL, assignment, len);
}

/* ---- Heartbeat ------------------------------------------------------------------ */
int hw_kg_hb_decode(hw_kr *r, int16_t v, hw_kg_hb_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	if (v < 0 || v > HW_KG_HEARTBEAT_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_HB;
	q->group_id = hw_kr_str_v(r, fx);
	q->generation = hw_kr_i32(r);
	q->member_id = hw_kr_str_v(r, fx);
	if (v >= 3) q->group_instance_id = hw_kr_nstr_v(r, fx);
	return finish(r, fx);
}

void hw_kg_hb_encode(hw_kw *w, int16_t v, int16_t error)
{
	if (v >= 1) hw_kw_i32(w, 0);
	hw_kw_i16(w, error);
	hw_kw_tags_v(w, v >= FX_HB);
}

/* ---- LeaveGroup ----------------------------------------------------------------- */
int hw_kg_leave_decode(hw_kr *r, int16_t v, hw_kg_leave_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_LEAVE_GROUP_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_LEAVE;
	q->group_id = hw_kr_str_v(r, fx);
	if (v < 3) {
		q->members = array_alloc(r, 1, sizeof *q->members);
		if (r->err) return r->err;
		q->members[0].member_id = hw_kr_str(r);
		q->members[0].group_instance_id.len = -1;
		q->members[0].reason.len = -1;
		q->n = 1;
		return finish(r, fx);
	}
	int32_t n = array_req(r, fx);
	if (n < 0) return r->err;
	q->members = array_alloc(r, n, sizeof *q->members);
	for (int32_t i = 0; i < n && !r->err; i++) {
		q->members[i].member_id = hw_kr_str_v(r, fx);
		q->members[i].group_instance_id = hw_kr_nstr_v(r, fx);
		q->members[i].reason = v >= 5 ? hw_kr_nstr_v(r, fx) : (hw_kstr){ NULL, -1 };
		hw_kr_tags_v(r, fx);
		q->n = i + 1;
	}
	return finish(r, fx);
}

void hw_kg_leave_free(hw_kg_leave_req *q) { free(q->members); q->members = NULL; q->n = 0; }

void hw_kg_leave_encode(hw_kw *w, int16_t v, int16_t error, const hw_kg_leave_req *q, const int16_t *errs)
{
	bool fx = v >= FX_LEAVE;
	if (v >= 1) hw_kw_i32(w, 0);
	/* v0-2 have one member: its error is the response's */
	hw_kw_i16(w, v < 3 && !error && q->n == 1 ? errs[0] : error);
	if (v >= 3) {
		hw_kw_array_v(w, fx, q->n);
		for (int32_t i = 0; i < q->n; i++) {
			hw_kw_kstr_v(w, fx, q->members[i].member_id);
			hw_kw_knstr_v(w, fx, q->members[i].group_instance_id);
			hw_kw_i16(w, errs[i]);
			hw_kw_tags_v(w, fx);
		}
	}
	hw_kw_tags_v(w, fx);
}

/* ---- OffsetCommit ----------------------------------------------------------------- */
int hw_kg_commit_decode(hw_kr *r, int16_t v, hw_kg_commit_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	q->generation = -1;
	q->retention_ms = -1;
	if (v < 0 || v > HW_KG_OFFSET_COMMIT_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_COMMIT;
	q->group_id = hw_kr_str_v(r, fx);
	if (v >= 1) {
		q->generation = hw_kr_i32(r);
		q->member_id = hw_kr_str_v(r, fx);
	} else {
		q->member_id = (hw_kstr){ "", 0 };
	}
	if (v >= 7) q->group_instance_id = hw_kr_nstr_v(r, fx);
	if (v >= 2 && v <= 4) q->retention_ms = hw_kr_i64(r);
	int32_t nt = array_req(r, fx);
	if (nt < 0) return r->err;
	/* a first pass counts the partitions so parts is one allocation: walk
	 * a copy of the reader */
	hw_kr c = *r;
	int64_t total = 0;
	for (int32_t t = 0; t < nt && !c.err; t++) {
		hw_kr_str_v(&c, fx);
		int32_t np = array_req(&c, fx);
		if (np < 0) break;
		total += np;
		for (int32_t i = 0; i < np && !c.err; i++) {
			hw_kr_i32(&c);
			hw_kr_i64(&c);
			if (v >= 6) hw_kr_i32(&c);
			if (v == 1) hw_kr_i64(&c);
			hw_kr_nstr_v(&c, fx);
			hw_kr_tags_v(&c, fx);
		}
		hw_kr_tags_v(&c, fx);
	}
	if (c.err) return hw_kr_fail(r, c.err);
	if (total > INT32_MAX) return hw_kr_fail(r, -EINVAL);
	q->parts = array_alloc(r, (int32_t)total, sizeof *q->parts);
	if (r->err) return r->err;
	for (int32_t t = 0; t < nt && !r->err; t++) {
		hw_kstr topic = hw_kr_str_v(r, fx);
		int32_t np = array_req(r, fx);
		for (int32_t i = 0; i < np && !r->err && q->n < total; i++) {
			hw_kg_commit_part *p = &q->parts[q->n];
			p->topic = topic;
			p->partition = hw_kr_i32(r);
			p->offset = hw_kr_i64(r);
			p->leader_epoch = v >= 6 ? hw_kr_i32(r) : -1;
			p->timestamp = v == 1 ? hw_kr_i64(r) : -1;
			p->metadata = hw_kr_nstr_v(r, fx);
			hw_kr_tags_v(r, fx);
			q->n++;
		}
		hw_kr_tags_v(r, fx);
	}
	return finish(r, fx);
}

void hw_kg_commit_free(hw_kg_commit_req *q) { free(q->parts); q->parts = NULL; q->n = 0; }

static int same_topic(const hw_kstr *a, const hw_kstr *b)
{
	return a->len == b->len && (a->len <= 0 || memcmp(a->p, b->p, (size_t)a->len) == 0);
}

void hw_kg_commit_encode(hw_kw *w, int16_t v, const hw_kg_commit_req *q, const int16_t *errs)
{
	bool fx = v >= FX_COMMIT;
	if (v >= 3) hw_kw_i32(w, 0);
	int32_t runs = 0;
	for (int32_t i = 0; i < q->n; i++)
		if (!i || !same_topic(&q->parts[i].topic, &q->parts[i - 1].topic)) runs++;
	hw_kw_array_v(w, fx, runs);
	for (int32_t i = 0; i < q->n;) {
		int32_t j = i;
		while (j < q->n && same_topic(&q->parts[j].topic, &q->parts[i].topic)) j++;
		hw_kw_kstr_v(w, fx, q->parts[i].topic);
		hw_kw_array_v(w, fx, j - i);
		for (int32_t k = i; k < j; k++) {
			hw_kw_i32(w, q->parts[k].partition);
			hw_kw_i16(w, errs[k]);
			hw_kw_tags_v(w, fx);
		}
		hw_kw_tags_v(w, fx);
		i = j;
	}
	hw_kw_tags_v(w, fx);
}

/* ---- OffsetFetch ----------------------------------------------------------------- */
/* One group's topics (nullable from v2: null = all). */
static int fetch_group_decode(hw_kr *r, int16_t v, bool fx, hw_kg_fetch_group *g)
{
	int32_t nt = hw_kr_array_v(r, fx);
	if (r->err) return r->err;
	if (nt < 0) {
		if (v < 2) return hw_kr_fail(r, -EINVAL); /* null topics only from v2 */
		g->all = 1;
		return 0;
	}
	hw_kr c = *r;
	int64_t total = 0;
	for (int32_t t = 0; t < nt && !c.err; t++) {
		hw_kr_str_v(&c, fx);
		int32_t np = array_req(&c, fx);
		if (np < 0) break;
		total += np;
		hw_kr_skip(&c, (size_t)np * 4);
		hw_kr_tags_v(&c, fx);
	}
	if (c.err) return hw_kr_fail(r, c.err);
	if (total > INT32_MAX) return hw_kr_fail(r, -EINVAL);
	g->parts = array_alloc(r, (int32_t)total, sizeof *g->parts);
	for (int32_t t = 0; t < nt && !r->err; t++) {
		hw_kstr topic = hw_kr_str_v(r, fx);
		int32_t np = array_req(r, fx);
		for (int32_t i = 0; i < np && !r->err && g->n < total; i++) {
			g->parts[g->n].topic = topic;
			g->parts[g->n].partition = hw_kr_i32(r);
			g->n++;
		}
		hw_kr_tags_v(r, fx);
	}
	return r->err;
}

int hw_kg_fetch_decode(hw_kr *r, int16_t v, hw_kg_fetch_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_OFFSET_FETCH_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_FETCH;
	if (v <= 7) {
		q->groups = array_alloc(r, 1, sizeof *q->groups);
		if (r->err) return r->err;
		q->n_groups = 1;
		q->groups[0].group_id = hw_kr_str_v(r, fx);
		if (fetch_group_decode(r, v, fx, &q->groups[0])) return r->err;
	} else {
		int32_t ng = array_req(r, fx);
		if (ng < 0) return r->err;
		q->groups = array_alloc(r, ng, sizeof *q->groups);
		for (int32_t i = 0; i < ng && !r->err; i++) {
			q->n_groups = i + 1;
			q->groups[i].group_id = hw_kr_str_v(r, fx);
			if (fetch_group_decode(r, v, fx, &q->groups[i])) break;
			hw_kr_tags_v(r, fx);
		}
		if (r->err) return r->err;
	}
	if (v >= 7) q->require_stable = hw_kr_bool(r);
	return finish(r, fx);
}

void hw_kg_fetch_free(hw_kg_fetch_req *q)
{
	for (int32_t i = 0; q->groups && i < q->n_groups; i++) free(q->groups[i].parts);
	free(q->groups);
	q->groups = NULL;
	q->n_groups = 0;
}

void hw_kg_fetch_begin(hw_kw *w, int16_t v, int32_t n_groups)
{
	if (v >= 3) hw_kw_i32(w, 0);
	if (v >= 8) hw_kw_array_v(w, true, n_groups);
}

void hw_kg_fetch_group_encode(hw_kw *w, int16_t v, const char *group_id, int32_t n, const hw_kg_fetch_out *parts,
			      int16_t error)
{
	bool fx = v >= FX_FETCH;
	if (v >= 8) wstrz(w, fx, group_id);
	int32_t runs = 0;
	for (int32_t i = 0; i < n; i++)
		if (!i || strcmp(parts[i].topic, parts[i - 1].topic) != 0) runs++;
	hw_kw_array_v(w, fx, runs);
	for (int32_t i = 0; i < n;) {
		int32_t j = i;
		while (j < n && strcmp(parts[j].topic, parts[i].topic) == 0) j++;
		wstrz(w, fx, parts[i].topic);
		hw_kw_array_v(w, fx, j - i);
		for (int32_t k = i; k < j; k++) {
			hw_kw_i32(w, parts[k].partition);
			hw_kw_i64(w, parts[k].offset);
			if (v >= 5) hw_kw_i32(w, parts[k].leader_epoch);
			hw_kw_nstr_v(w, fx, parts[k].metadata,
				     (size_t)(parts[k].metadata_len > 0 ? parts[k].metadata_len : 0));
			hw_kw_i16(w, v < 2 && error ? error : parts[k].error);
			hw_kw_tags_v(w, fx);
		}
		hw_kw_tags_v(w, fx);
		i = j;
	}
	if (v >= 2) hw_kw_i16(w, error);
	if (v >= 8) hw_kw_tags_v(w, fx);
}

void hw_kg_fetch_end(hw_kw *w, int16_t v) { hw_kw_tags_v(w, v >= FX_FETCH); }

void hw_kg_fetch_encode(hw_kw *w, int16_t v, int32_t n, const hw_kg_fetch_out *parts, int16_t error)
{
	hw_kg_fetch_begin(w, v, 1);
	hw_kg_fetch_group_encode(w, v, "", n, parts, error);
	hw_kg_fetch_end(w, v);
}

/* ---- DescribeGroups ------------------------------------------------------------- */
int hw_kg_describe_decode(hw_kr *r, int16_t v, hw_kg_describe_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_DESCRIBE_GROUPS_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_DESCRIBE;
	int32_t n = array_req(r, fx);
	if (n < 0) return r->err;
	q->groups = array_alloc(r, n, sizeof *q->groups);
	for (int32_t i = 0; i < n && !r->err; i++)
		q->groups[i] = hw_kr_str_v(r, fx);
	if (r->err) return r->err;
	q->n = n;
	if (v >= 3) q->include_authorized_operations = hw_kr_i8(r) != 0;
	return finish(r, fx);
}

void hw_kg_describe_free(hw_kg_describe_req *q)
{
	free(q->groups);
	q->groups = NULL;
	q->n = 0;
}

void hw_kg_describe_begin(hw_kw *w, int16_t v, int32_t n_groups)
{
	if (v >= 1) hw_kw_i32(w, 0);   /* throttle_time_ms */
	hw_kw_array_v(w, v >= FX_DESCRIBE, n_groups);
}

void hw_kg_describe_group_encode(hw_kw *w, int16_t v, const hw_kg_describe_group *g)
{
	bool fx = v >= FX_DESCRIBE;
	hw_kw_i16(w, g->error);
	wstrz(w, fx, g->group_id);
	wstrz(w, fx, g->state);
	wstrz(w, fx, g->protocol_type);
	wstrz(w, fx, g->protocol);
	hw_kw_array_v(w, fx, g->n_members);
	for (int32_t i = 0; i < g->n_members; i++) {
		const hw_kg_describe_member *m = &g->members[i];
		wstrz(w, fx, m->member_id);
		if (v >= 4) hw_kw_nstrz_v(w, fx, m->group_instance_id);
		wstrz(w, fx, m->client_id);
		wstrz(w, fx, m->client_host);
		wbytes(w, fx, m->metadata, m->metadata_len);
		wbytes(w, fx, m->assignment, m->assignment_len);
		hw_kw_tags_v(w, fx);
	}
	if (v >= 3) hw_kw_i32(w, INT32_MIN);   /* authorized_operations: not computed (no ACLs) */
	hw_kw_tags_v(w, fx);
}

void hw_kg_describe_end(hw_kw *w, int16_t v) { hw_kw_tags_v(w, v >= FX_DESCRIBE); }

/* ---- ListGroups ------------------------------------------------------------------ */
int hw_kg_list_decode_q(hw_kr *r, int16_t v, hw_kg_list_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_LIST_GROUPS_MAX) return -EPROTONOSUPPORT;
	bool fx = v >= FX_LIST;
	if (v >= 4) {
		int32_t n = array_req(r, fx);
		if (n < 0) return r->err;
		if (n > HW_KG_LIST_MAX_STATES) return hw_kr_fail(r, -EINVAL); /* more names than Kafka has */
		for (int32_t i = 0; i < n && !r->err; i++) q->states[i] = hw_kr_str_v(r, fx);
		q->n_states = n;
	}
	return finish(r, fx);
}

int hw_kg_list_decode(hw_kr *r, int16_t v)
{
	hw_kg_list_req q;
	return hw_kg_list_decode_q(r, v, &q);
}

int hw_kg_list_wants(const hw_kg_list_req *q, const char *state)
{
	if (!q->n_states) return 1;
	size_t l = strlen(state);
	for (int32_t i = 0; i < q->n_states; i++)
		if (q->states[i].len == (int32_t)l && strncasecmp(q->states[i].p, state, l) == 0) return 1;
	return 0;
}

void hw_kg_list_begin(hw_kw *w, int16_t v, int16_t error, int32_t n_groups)
{
	if (v >= 1) hw_kw_i32(w, 0);   /* throttle_time_ms */
	hw_kw_i16(w, error);
	hw_kw_array_v(w, v >= FX_LIST, n_groups);
}

void hw_kg_list_group_encode4(hw_kw *w, int16_t v, const char *group_id, const char *protocol_type,
			      const char *state)
{
	bool fx = v >= FX_LIST;
	wstrz(w, fx, group_id);
	wstrz(w, fx, protocol_type);
	if (v >= 4) wstrz(w, fx, state);
	hw_kw_tags_v(w, fx);
}

void hw_kg_list_group_encode(hw_kw *w, int16_t v, const char *group_id, const char *protocol_type)
{
	hw_kg_list_group_encode4(w, v, group_id, protocol_type, "");
}

void hw_kg_list_end(hw_kw *w, int16_t v) { hw_kw_tags_v(w, v >= FX_LIST); }
