/* hw_kafka_group.c — the group APIs' codecs (see hw_kafka_group.h). Each
 * decoder reads the version's fields in schema order, then checks the
 * reader's sticky error and that the body was consumed exactly. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_kafka_group.h"

/* The end of every decoder: the reader's error, or trailing bytes. */
static int finish(hw_kr *r)
{
	if (r->err) return r->err;
	return hw_kr_left(r) ? -EBADMSG : 0;
}

/* A required (non-null) array count, or -1 with the reader failed. */
static int32_t array_req(hw_kr *r)
{
	int32_t n = hw_kr_array(r);
	if (!r->err && n < 0) hw_kr_fail(r, -EINVAL);
	return r->err ? -1 : n;
}

static void *array_alloc(hw_kr *r, int32_t n, size_t elem)
{
	void *p = calloc(n > 0 ? (size_t)n : 1, elem);
	if (!p) hw_kr_fail(r, -ENOMEM);
	return p;
}

static void wstrz(hw_kw *w, const char *z) { hw_kw_strz_v(w, false, z ? z : ""); }

/* ---- FindCoordinator --------------------------------------------------------- */
int hw_kg_find_decode(hw_kr *r, int16_t v, hw_kg_find_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_FIND_COORDINATOR_MAX) return -EPROTONOSUPPORT;
	q->key = hw_kr_str(r);
	if (v >= 1) q->key_type = hw_kr_i8(r);
	return finish(r);
}

void hw_kg_find_encode(hw_kw *w, int16_t v, const hw_kg_find_resp *a)
{
	if (v >= 1) hw_kw_i32(w, 0); /* throttle_time_ms */
	hw_kw_i16(w, a->error);
	if (v >= 1) hw_kw_nstrz_v(w, false, a->error_message);
	hw_kw_i32(w, a->node_id);
	wstrz(w, a->host);
	hw_kw_i32(w, a->port);
}

/* ---- JoinGroup ------------------------------------------------------------------ */
int hw_kg_join_decode(hw_kr *r, int16_t v, hw_kg_join_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	if (v < 0 || v > HW_KG_JOIN_GROUP_MAX) return -EPROTONOSUPPORT;
	q->group_id = hw_kr_str(r);
	q->session_timeout_ms = hw_kr_i32(r);
	q->rebalance_timeout_ms = v >= 1 ? hw_kr_i32(r) : q->session_timeout_ms;
	q->member_id = hw_kr_str(r);
	if (v >= 5) q->group_instance_id = hw_kr_nstr(r);
	q->protocol_type = hw_kr_str(r);
	int32_t n = array_req(r);
	if (n < 0) return r->err;
	q->protocols = array_alloc(r, n, sizeof *q->protocols);
	for (int32_t i = 0; i < n && !r->err; i++) {
		q->protocols[i].name = hw_kr_str(r);
		q->protocols[i].metadata = hw_kr_nbytes(r);
		if (!r->err && q->protocols[i].metadata.len < 0) hw_kr_fail(r, -EINVAL);
		q->n_protocols = i + 1;
	}
	return finish(r);
}

void hw_kg_join_free(hw_kg_join_req *q) { free(q->protocols); q->protocols = NULL; q->n_protocols = 0; }

void hw_kg_join_encode(hw_kw *w, int16_t v, const hw_kg_join_resp *a)
{
	if (v >= 2) hw_kw_i32(w, 0);
	hw_kw_i16(w, a->error);
	hw_kw_i32(w, a->generation);
	wstrz(w, a->protocol_name);
	wstrz(w, a->leader);
	wstrz(w, a->member_id);
	hw_kw_array_v(w, false, a->n_members);
	for (int32_t i = 0; i < a->n_members; i++) {
		const hw_kg_join_member *m = &a->members[i];
		wstrz(w, m->member_id);
		if (v >= 5) hw_kw_nstrz_v(w, false, m->group_instance_id);
		hw_kw_nbytes_v(w, false, m->metadata ? (const void *)m->metadata : "", (size_t)(m->metadata_len > 0 ? m->metadata_len : 0));
	}
}

/* ---- SyncGroup ------------------------------------------------------------------ */
int hw_kg_sync_decode(hw_kr *r, int16_t v, hw_kg_sync_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	if (v < 0 || v > HW_KG_SYNC_GROUP_MAX) return -EPROTONOSUPPORT;
	q->group_id = hw_kr_str(r);
	q->generation = hw_kr_i32(r);
	q->member_id = hw_kr_str(r);
	if (v >= 3) q->group_instance_id = hw_kr_nstr(r);
	int32_t n = array_req(r);
	if (n < 0) return r->err;
	q->assign = array_alloc(r, n, sizeof *q->assign);
	for (int32_t i = 0; i < n && !r->err; i++) {
		q->assign[i].member_id = hw_kr_str(r);
		q->assign[i].assignment = hw_kr_nbytes(r);
		if (!r->err && q->assign[i].assignment.len < 0) hw_kr_fail(r, -EINVAL);
		q->n_assign = i + 1;
	}
	return finish(r);
}

void hw_kg_sync_free(hw_kg_sync_req *q) { free(q->assign); q->assign = NULL; q->n_assign = 0; }

void hw_kg_sync_encode(hw_kw *w, int16_t v, int16_t error, const uint8_t *assignment, int32_t len)
{
	if (v >= 1) hw_kw_i32(w, 0);
	hw_kw_i16(w, error);
	hw_kw_nbytes_v(w, false, assignment ? (const void *)assignment : "", (size_t)(len > 0 ? len : 0));
}

/* ---- Heartbeat ------------------------------------------------------------------ */
int hw_kg_hb_decode(hw_kr *r, int16_t v, hw_kg_hb_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	if (v < 0 || v > HW_KG_HEARTBEAT_MAX) return -EPROTONOSUPPORT;
	q->group_id = hw_kr_str(r);
	q->generation = hw_kr_i32(r);
	q->member_id = hw_kr_str(r);
	if (v >= 3) q->group_instance_id = hw_kr_nstr(r);
	return finish(r);
}

void hw_kg_hb_encode(hw_kw *w, int16_t v, int16_t error)
{
	if (v >= 1) hw_kw_i32(w, 0);
	hw_kw_i16(w, error);
}

/* ---- LeaveGroup ----------------------------------------------------------------- */
int hw_kg_leave_decode(hw_kr *r, int16_t v, hw_kg_leave_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_LEAVE_GROUP_MAX) return -EPROTONOSUPPORT;
	q->group_id = hw_kr_str(r);
	if (v < 3) {
		q->members = array_alloc(r, 1, sizeof *q->members);
		if (r->err) return r->err;
		q->members[0].member_id = hw_kr_str(r);
		q->members[0].group_instance_id.len = -1;
		q->n = 1;
		return finish(r);
	}
	int32_t n = array_req(r);
	if (n < 0) return r->err;
	q->members = array_alloc(r, n, sizeof *q->members);
	for (int32_t i = 0; i < n && !r->err; i++) {
		q->members[i].member_id = hw_kr_str(r);
		q->members[i].group_instance_id = hw_kr_nstr(r);
		q->n = i + 1;
	}
	return finish(r);
}

void hw_kg_leave_free(hw_kg_leave_req *q) { free(q->members); q->members = NULL; q->n = 0; }

void hw_kg_leave_encode(hw_kw *w, int16_t v, int16_t error, const hw_kg_leave_req *q, const int16_t *errs)
{
	if (v >= 1) hw_kw_i32(w, 0);
	/* v0-2 have one member: its error is the response's */
	hw_kw_i16(w, v < 3 && !error && q->n == 1 ? errs[0] : error);
	if (v < 3) return;
	hw_kw_array_v(w, false, q->n);
	for (int32_t i = 0; i < q->n; i++) {
		hw_kw_str(w, q->members[i].member_id.p, (size_t)(q->members[i].member_id.len > 0 ? q->members[i].member_id.len : 0));
		hw_kw_nstr(w, q->members[i].group_instance_id.len >= 0 ? q->members[i].group_instance_id.p : NULL,
			   (size_t)(q->members[i].group_instance_id.len > 0 ? q->members[i].group_instance_id.len : 0));
		hw_kw_i16(w, errs[i]);
	}
}

/* ---- OffsetCommit ----------------------------------------------------------------- */
int hw_kg_commit_decode(hw_kr *r, int16_t v, hw_kg_commit_req *q)
{
	memset(q, 0, sizeof *q);
	q->group_instance_id.len = -1;
	q->generation = -1;
	q->retention_ms = -1;
	if (v < 0 || v > HW_KG_OFFSET_COMMIT_MAX) return -EPROTONOSUPPORT;
	q->group_id = hw_kr_str(r);
	if (v >= 1) {
		q->generation = hw_kr_i32(r);
		q->member_id = hw_kr_str(r);
	} else {
		q->member_id = (hw_kstr){ "", 0 };
	}
	if (v >= 7) q->group_instance_id = hw_kr_nstr(r);
	if (v >= 2 && v <= 4) q->retention_ms = hw_kr_i64(r);
	int32_t nt = array_req(r);
	if (nt < 0) return r->err;
	/* a first pass counts the partitions so parts is one allocation: walk
	 * a copy of the reader */
	hw_kr c = *r;
	int64_t total = 0;
	for (int32_t t = 0; t < nt && !c.err; t++) {
		hw_kr_str(&c);
		int32_t np = array_req(&c);
		if (np < 0) break;
		total += np;
		for (int32_t i = 0; i < np && !c.err; i++) {
			hw_kr_i32(&c);
			hw_kr_i64(&c);
			if (v >= 6) hw_kr_i32(&c);
			if (v == 1) hw_kr_i64(&c);
			hw_kr_nstr(&c);
		}
	}
	if (c.err) return hw_kr_fail(r, c.err);
	q->parts = array_alloc(r, (int32_t)total, sizeof *q->parts);
	if (r->err) return r->err;
	for (int32_t t = 0; t < nt && !r->err; t++) {
		hw_kstr topic = hw_kr_str(r);
		int32_t np = array_req(r);
		for (int32_t i = 0; i < np && !r->err; i++) {
			hw_kg_commit_part *p = &q->parts[q->n];
			p->topic = topic;
			p->partition = hw_kr_i32(r);
			p->offset = hw_kr_i64(r);
			p->leader_epoch = v >= 6 ? hw_kr_i32(r) : -1;
			p->timestamp = v == 1 ? hw_kr_i64(r) : -1;
			p->metadata = hw_kr_nstr(r);
			q->n++;
		}
	}
	return finish(r);
}

void hw_kg_commit_free(hw_kg_commit_req *q) { free(q->parts); q->parts = NULL; q->n = 0; }

/* Topics of consecutive equal names: the number of runs. */
static int32_t topic_runs(int32_t n, const hw_kstr *(*topic_at)(const void *, int32_t), const void *arr)
{
	int32_t runs = 0;
	for (int32_t i = 0; i < n; i++) {
		const hw_kstr *a = topic_at(arr, i), *b = i ? topic_at(arr, i - 1) : NULL;
		if (!b || a->len != b->len || (a->len > 0 && memcmp(a->p, b->p, (size_t)a->len) != 0)) runs++;
	}
	return runs;
}

static const hw_kstr *commit_topic(const void *arr, int32_t i) { return &((const hw_kg_commit_part *)arr)[i].topic; }

static int same_topic(const hw_kstr *a, const hw_kstr *b)
{
	return a->len == b->len && (a->len <= 0 || memcmp(a->p, b->p, (size_t)a->len) == 0);
}

void hw_kg_commit_encode(hw_kw *w, int16_t v, const hw_kg_commit_req *q, const int16_t *errs)
{
	if (v >= 3) hw_kw_i32(w, 0);
	hw_kw_array_v(w, false, topic_runs(q->n, commit_topic, q->parts));
	for (int32_t i = 0; i < q->n;) {
		int32_t j = i;
		while (j < q->n && same_topic(&q->parts[j].topic, &q->parts[i].topic)) j++;
		hw_kw_str(w, q->parts[i].topic.p, (size_t)(q->parts[i].topic.len > 0 ? q->parts[i].topic.len : 0));
		hw_kw_array_v(w, false, j - i);
		for (int32_t k = i; k < j; k++) {
			hw_kw_i32(w, q->parts[k].partition);
			hw_kw_i16(w, errs[k]);
		}
		i = j;
	}
}

/* ---- OffsetFetch ----------------------------------------------------------------- */
int hw_kg_fetch_decode(hw_kr *r, int16_t v, hw_kg_fetch_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_OFFSET_FETCH_MAX) return -EPROTONOSUPPORT;
	q->group_id = hw_kr_str(r);
	int32_t nt = hw_kr_array(r);
	if (r->err) return r->err;
	if (nt < 0) {
		if (v < 2) return hw_kr_fail(r, -EINVAL); /* null topics only from v2 */
		q->all = 1;
		return finish(r);
	}
	hw_kr c = *r;
	int64_t total = 0;
	for (int32_t t = 0; t < nt && !c.err; t++) {
		hw_kr_str(&c);
		int32_t np = array_req(&c);
		if (np < 0) break;
		total += np;
		hw_kr_skip(&c, (size_t)np * 4);
	}
	if (c.err) return hw_kr_fail(r, c.err);
	q->parts = array_alloc(r, (int32_t)total, sizeof *q->parts);
	for (int32_t t = 0; t < nt && !r->err; t++) {
		hw_kstr topic = hw_kr_str(r);
		int32_t np = array_req(r);
		for (int32_t i = 0; i < np && !r->err; i++) {
			q->parts[q->n].topic = topic;
			q->parts[q->n].partition = hw_kr_i32(r);
			q->n++;
		}
	}
	return finish(r);
}

void hw_kg_fetch_free(hw_kg_fetch_req *q) { free(q->parts); q->parts = NULL; q->n = 0; }

void hw_kg_fetch_encode(hw_kw *w, int16_t v, int32_t n, const hw_kg_fetch_out *parts, int16_t error)
{
	if (v >= 3) hw_kw_i32(w, 0);
	int32_t runs = 0;
	for (int32_t i = 0; i < n; i++)
		if (!i || strcmp(parts[i].topic, parts[i - 1].topic) != 0) runs++;
	hw_kw_array_v(w, false, runs);
	for (int32_t i = 0; i < n;) {
		int32_t j = i;
		while (j < n && strcmp(parts[j].topic, parts[i].topic) == 0) j++;
		wstrz(w, parts[i].topic);
		hw_kw_array_v(w, false, j - i);
		for (int32_t k = i; k < j; k++) {
			hw_kw_i32(w, parts[k].partition);
			hw_kw_i64(w, parts[k].offset);
			if (v >= 5) hw_kw_i32(w, parts[k].leader_epoch);
			hw_kw_nstr(w, parts[k].metadata, (size_t)(parts[k].metadata_len > 0 ? parts[k].metadata_len : 0));
			hw_kw_i16(w, v < 2 && error ? error : parts[k].error);
		}
		i = j;
	}
	if (v >= 2) hw_kw_i16(w, error);
}

/* ---- DescribeGroups ------------------------------------------------------------- */
int hw_kg_describe_decode(hw_kr *r, int16_t v, hw_kg_describe_req *q)
{
	memset(q, 0, sizeof *q);
	if (v < 0 || v > HW_KG_DESCRIBE_GROUPS_MAX) return -EPROTONOSUPPORT;
	int32_t n = array_req(r);
	if (n < 0) return r->err;
	q->groups = array_alloc(r, n, sizeof *q->groups);
	for (int32_t i = 0; i < n && !r->err; i++)
		q->groups[i] = hw_kr_str(r);
	if (r->err) return r->err;
	q->n = n;
	if (v >= 3) q->include_authorized_operations = hw_kr_i8(r) != 0;
	return finish(r);
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
	hw_kw_array_v(w, false, n_groups);
}

void hw_kg_describe_group_encode(hw_kw *w, int16_t v, const hw_kg_describe_group *g)
{
	hw_kw_i16(w, g->error);
	wstrz(w, g->group_id);
	wstrz(w, g->state);
	wstrz(w, g->protocol_type);
	wstrz(w, g->protocol);
	hw_kw_array_v(w, false, g->n_members);
	for (int32_t i = 0; i < g->n_members; i++) {
		const hw_kg_describe_member *m = &g->members[i];
		wstrz(w, m->member_id);
		if (v >= 4) hw_kw_nstrz_v(w, false, m->group_instance_id);
		wstrz(w, m->client_id);
		wstrz(w, m->client_host);
		hw_kw_nbytes_v(w, false, m->metadata ? (const void *)m->metadata : "",
			       (size_t)(m->metadata_len > 0 ? m->metadata_len : 0));
		hw_kw_nbytes_v(w, false, m->assignment ? (const void *)m->assignment : "",
			       (size_t)(m->assignment_len > 0 ? m->assignment_len : 0));
	}
	if (v >= 3) hw_kw_i32(w, INT32_MIN);   /* authorized_operations: not computed (no ACLs) */
}

/* ---- ListGroups ------------------------------------------------------------------ */
int hw_kg_list_decode(hw_kr *r, int16_t v)
{
	if (v < 0 || v > HW_KG_LIST_GROUPS_MAX) return -EPROTONOSUPPORT;
	return finish(r);
}

void hw_kg_list_begin(hw_kw *w, int16_t v, int16_t error, int32_t n_groups)
{
	if (v >= 1) hw_kw_i32(w, 0);   /* throttle_time_ms */
	hw_kw_i16(w, error);
	hw_kw_array_v(w, false, n_groups);
}

void hw_kg_list_group_encode(hw_kw *w, int16_t v, const char *group_id, const char *protocol_type)
{
	(void)v;
	wstrz(w, group_id);
	wstrz(w, protocol_type);
}
