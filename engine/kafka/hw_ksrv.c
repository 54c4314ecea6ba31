/* hw_ksrv.c — Kafka server core: connections, framing, request FIFO,
 * engine operations, dispatch, ApiVersions. See hw_ksrv.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_assert.h"
#include "hw_ksrv_int.h"
#include "hw_logging.h"

static const char *const close_names[] = {
#define HW_KSRV_CLOSE_NAME(n, s) s,
	HW_KSRV_CLOSE_TABLE(HW_KSRV_CLOSE_NAME)
#undef HW_KSRV_CLOSE_NAME
};

const char *hw_ksrv_close_name(int r)
{
	return r >= 0 && r < HW_KSRV_CLOSE__COUNT ? close_names[r] : "unknown_reason";
}

double hw_ksrv_lat_bound_s(int i)
{
	/* 100 us, 200 us, ... 2^14 * 100 us = 1.6 s */
	return 100e-6 * (double)(1u << (i < 0 ? 0 : i > 14 ? 14 : i));
}

int64_t ksrv_now(hw_ksrv *s) { return s->ops.now_ns(s->ctx); }

int hw_ksrv_create(const hw_ksrv_config *cfg, const hw_ksrv_ops *ops, void *ctx, hw_ksrv **out)
{
	if (!cfg || !ops || !ops->submit || !ops->now_ns || !ops->topic_id || !ops->part_info ||
	    !ops->alloc_producer_id || !out || cfg->socket_request_max_bytes < 64)
		return -EINVAL;
	hw_ksrv *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opv = calloc(HW_KSRV_MAX_OPS, sizeof(*s->opv));
	if (!s->opv) {
		free(s);
		return -ENOMEM;
	}
	s->cfg = *cfg;
	s->ops = *ops;
	s->ctx = ctx;
	s->gen = 1;
	*out = s;
	return 0;
}

void hw_ksrv_destroy(hw_ksrv *s)
{
	if (!s)
		return;
	free(s->opv);
	free(s->topics);
	free(s);
}

const hw_ksrv_stats *hw_ksrv_get_stats(const hw_ksrv *s) { return &s->st; }

/* ---- topic cache -------------------------------------------------------- */
void ksrv_topic_learn(hw_ksrv *s, const char *name, uint32_t id)
{
	for (size_t i = 0; i < s->n_topics; i++)
		if (!strcmp(s->topics[i].name, name)) {
			s->topics[i].id = id;
			return;
		}
	if (s->n_topics == s->cap_topics) {
		size_t cap = s->cap_topics ? s->cap_topics * 2 : 16;
		hw_ktopic *t = realloc(s->topics, cap * sizeof(*t));
		if (!t)
			return; /* a cache: the next metadata tries again */
		s->topics = t;
		s->cap_topics = cap;
	}
	hw_ktopic *t = &s->topics[s->n_topics++];
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->id = id;
}

int ksrv_topic_id(hw_ksrv *s, const char *name, uint32_t *id)
{
	if (s->ops.topic_id(s->ctx, name, id) == 0)
		return 0;
	for (size_t i = 0; i < s->n_topics; i++)
		if (!strcmp(s->topics[i].name, name)) {
			*id = s->topics[i].id;
			return 1; /* known in the cluster, not hosted here */
		}
	return -ENOENT;
}

int16_t ksrv_topic_name(hw_kstr n, char out[HW_TOPIC_NAME_MAX])
{
	out[0] = 0;
	if (n.len <= 0 || n.len >= HW_TOPIC_NAME_MAX)
		return HW_KERR_INVALID_TOPIC;
	for (int32_t i = 0; i < n.len; i++) {
		char ch = n.p[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		      ch == '_' || ch == '-'))
			return HW_KERR_INVALID_TOPIC; /* Kafka's legal characters */
	}
	memcpy(out, n.p, (size_t)n.len);
	out[n.len] = 0;
	if (!strcmp(out, ".") || !strcmp(out, ".."))
		return HW_KERR_INVALID_TOPIC;
	return 0;
}

/* ---- operations ------------------------------------------------------------ */
static hw_kop *op_alloc(hw_ksrv *s)
{
	if (s->n_ops >= HW_KSRV_MAX_OPS - 1)
		return NULL;
	for (uint32_t k = 0; k < HW_KSRV_MAX_OPS; k++) {
		uint32_t i = (s->free_hint + k) % HW_KSRV_MAX_OPS;
		if (!s->opv[i].corr) {
			s->free_hint = i + 1;
			s->gen = (s->gen + 1) & 0x7FFF;
			if (!s->gen)
				s->gen = 1;
			s->opv[i].corr = HW_KSRV_CORR_BIT | s->gen << 16 | i;
			s->n_ops++;
			return &s->opv[i];
		}
	}
	return NULL;
}

static void op_free(hw_ksrv *s, hw_kop *op)
{
	memset(op, 0, sizeof(*op));
	s->n_ops--;
}

static hw_kop *op_find(hw_ksrv *s, uint32_t corr)
{
	if (!(corr & HW_KSRV_CORR_BIT))
		return NULL;
	hw_kop *op = &s->opv[corr & 0xFFFF];
	return op->corr == corr ? op : NULL;
}

int ksrv_submit(hw_ksrv *s, hw_kreq *r, hw_msg *m, int idx, int parts, bool ctrl, hw_kop_answer_fn answer,
		hw_kop_fail_fn fail)
{
	hw_kop *op = op_alloc(s);
	if (!op) {
		s->st.engine_send_failed++;
		return -ENOSPC;
	}
	op->req = r;
	op->idx = idx;
	op->parts_left = parts > 0 ? parts : 1;
	/* data-plane answers come from this process; the long bound only
	 * catches one lost between reactors */
	op->deadline_ns = ksrv_now(s) + (int64_t)(ctrl ? HW_KSRV_CTRL_TIMEOUT_MS : HW_KSRV_DATA_TIMEOUT_MS) * 1000000;
	op->answer = answer;
	op->fail = fail;
	m->correlation_id = op->corr;
	if (!ctrl)
		m->src = HW_KSRV_NODE;
	r->pending++;
	int rc = s->ops.submit(s->ctx, m);
	if (rc < 0) {
		r->pending--;
		op_free(s, op);
		s->st.engine_send_failed++;
		return rc;
	}
	return 0;
}

/* How many partitions an answer covers (split fetches). */
static int answer_parts(const hw_msg *m)
{
	return m->type == HW_MSG_FETCH_RESP ? m->u.fetch_resp.n_parts : 1;
}

int hw_ksrv_on_msg(hw_ksrv *s, const hw_msg *m)
{
	if (!(m->correlation_id & HW_KSRV_CORR_BIT) && m->dst != HW_KSRV_NODE)
		return 0;
	hw_kop *op = op_find(s, m->correlation_id);
	if (!op) {
		s->st.late_answers++;
		return 1;
	}
	hw_kreq *r = op->req;
	op->answer(r, op->idx, m);
	int n = answer_parts(m);
	op->parts_left -= n > 0 ? n : 1;
	if (op->parts_left <= 0 || m->type != HW_MSG_FETCH_RESP) {
		op_free(s, op);
		ksrv_req_release(r);
	}
	return 1;
}

/* Timeouts are coarse (seconds): the operation table is swept at most every
 * HW_KSRV_SWEEP_MS, so a busy reactor does not walk it on every turn. */
#define HW_KSRV_SWEEP_MS 100

int hw_ksrv_poll(hw_ksrv *s)
{
	if (!s->n_ops)
		return 0;
	int64_t now = ksrv_now(s);
	if (now < s->next_sweep_ns)
		return 0;
	s->next_sweep_ns = now + (int64_t)HW_KSRV_SWEEP_MS * 1000000;
	int work = 0;
	for (uint32_t i = 0; i < HW_KSRV_MAX_OPS && s->n_ops; i++) {
		hw_kop *op = &s->opv[i];
		if (!op->corr || op->deadline_ns > now)
			continue;
		hw_kreq *r = op->req;
		s->st.ctrl_timeouts++;
		op->fail(r, op->idx, HW_ERR_REQUEST_TIMED_OUT);
		op_free(s, op);
		ksrv_req_release(r);
		work++;
	}
	return work;
}

int64_t hw_ksrv_next_deadline_ns(hw_ksrv *s)
{
	return s->n_ops ? s->next_sweep_ns : INT64_MAX;
}

/* ---- requests -------------------------------------------------------------- */
static void req_free(hw_kreq *r)
{
	if (r->free_state && r->state)
		r->free_state(r->state);
	hw_kw_free(&r->body);
	free(r);
}

static void conn_free(hw_kconn *c)
{
	free(c->in);
	hw_kw_free(&c->out);
	free(c);
}

static void record_stats(hw_ksrv *s, hw_kreq *r)
{
	if (r->api_idx < 0)
		return;
	hw_ksrv_api_stats *a = &s->st.api[r->api_idx];
	a->requests++;
	if (r->had_error)
		a->errors++;
	int64_t d = ksrv_now(s) - r->start_ns;
	if (d < 0)
		d = 0;
	a->latency_sum_ns += (uint64_t)d;
	int b = 0;
	while (b < HW_KSRV_LAT_BUCKETS - 1 && (double)d / 1e9 > hw_ksrv_lat_bound_s(b))
		b++;
	a->latency_bucket[b]++;
}

/* Move completed requests at the FIFO head into the output. */
static void conn_flush(hw_kconn *c)
{
	hw_ksrv *s = c->srv;
	int wrote = 0;
	while (c->head && c->head->done) {
		hw_kreq *r = c->head;
		c->head = r->next;
		if (!c->head)
			c->tail = NULL;
		c->n_req--;
		record_stats(s, r);
		if (r->close_conn && !c->closed && !c->want_close) {
			/* Kafka closes an acks=0 connection whose produce failed;
			 * what was queued behind it is never answered */
			c->want_close = true;
			s->st.closes[HW_KSRV_CLOSE_ACKS0_ERROR]++;
			wrote = 1;
		}
		if (!r->no_response && !c->closed && !c->want_close) {
			bool flex = hw_kafka_resp_hdr_flexible(r->hdr.api_key, r->hdr.api_version);
			size_t at = hw_kafka_resp_begin(&c->out, r->hdr.correlation_id, flex);
			hw_kw_raw(&c->out, r->body.buf, r->body.len);
			if (r->body.err)
				c->out.err = r->body.err;
			(void)hw_kafka_resp_end(&c->out, at);
			wrote = 1;
		}
		req_free(r);
	}
	if (c->closed) {
		if (!c->n_req)
			conn_free(c);
		return;
	}
	if (wrote && s->ops.conn_ready)
		s->ops.conn_ready(s->ctx, c);
}

static void req_finish(hw_kreq *r)
{
	if (r->finish)
		r->finish(r);
	r->done = true;
	conn_flush(r->conn);
}

void ksrv_req_release(hw_kreq *r)
{
	HW_ASSERT(r->pending > 0);
	if (--r->pending == 0 && !r->group_pending)
		req_finish(r);
}

hw_kw *hw_kreq_writer(hw_kreq *r) { return &r->body; }
const hw_kafka_req_hdr *hw_kreq_hdr(const hw_kreq *r) { return &r->hdr; }

void hw_ksrv_complete(hw_ksrv *s, hw_kreq *r)
{
	(void)s;
	if (!r->group_pending)
		return;
	r->group_pending = false;
	if (r->pending == 0)
		req_finish(r);
}

/* ---- ApiVersions ------------------------------------------------------------ */
static void write_api_versions(hw_kreq *r, int16_t err, int16_t v)
{
	hw_kw *w = &r->body;
	bool flex = v >= 3;
	hw_kw_i16(w, err);
	ksrv_err(r, err);
	int n = 0;
	for (int i = 0; i < HW_KAPI__COUNT; i++)
		n += hw_kafka_api_at(i)->min >= 0;
	hw_kw_array_v(w, flex, n);
	for (int i = 0; i < HW_KAPI__COUNT; i++) {
		const hw_kafka_api_info *a = hw_kafka_api_at(i);
		if (a->min < 0)
			continue;
		hw_kw_i16(w, a->key);
		hw_kw_i16(w, a->min);
		hw_kw_i16(w, a->max);
		if (flex)
			hw_kw_tags_none(w);
	}
	if (v >= 1)
		hw_kw_i32(w, 0); /* throttle_time_ms */
	if (flex)
		hw_kw_tags_none(w);
}

int hw_kapi_api_versions(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	(void)s;
	if (r->hdr.api_version >= 3) {
		(void)hw_kr_cstr(rd); /* client_software_name */
		(void)hw_kr_cstr(rd); /* client_software_version */
		hw_kr_tags(rd, NULL, NULL);
		if (rd->err)
			return rd->err;
	}
	write_api_versions(r, HW_ERR_NONE, r->hdr.api_version);
	return 0;
}

/* ---- dispatch -------------------------------------------------------------- */
static hw_kapi_fn handler_of(int16_t key)
{
	switch (key) {
	case HW_KAPI_API_VERSIONS: return hw_kapi_api_versions;
	case HW_KAPI_METADATA: return hw_kapi_metadata;
	case HW_KAPI_PRODUCE: return hw_kapi_produce;
	case HW_KAPI_FETCH: return hw_kapi_fetch;
	case HW_KAPI_LIST_OFFSETS: return hw_kapi_list_offsets;
	case HW_KAPI_CREATE_TOPICS: return hw_kapi_create_topics;
	case HW_KAPI_DELETE_TOPICS: return hw_kapi_delete_topics;
	case HW_KAPI_DESCRIBE_CONFIGS: return hw_kapi_describe_configs;
	case HW_KAPI_ALTER_CONFIGS: return hw_kapi_alter_configs;
	case HW_KAPI_INCREMENTAL_ALTER_CONFIGS: return hw_kapi_incremental_alter_configs;
	case HW_KAPI_INIT_PRODUCER_ID: return hw_kapi_init_producer_id;
	default: return NULL;
	}
}

/* Handle one frame (without its size). 0, or -errno with *why set. */
static int handle_frame(hw_kconn *c, const uint8_t *p, size_t len, hw_ksrv_close *why)
{
	hw_ksrv *s = c->srv;
	hw_kr rd;
	hw_kr_init(&rd, p, len);
	hw_kreq *r = calloc(1, sizeof(*r));
	if (!r) {
		*why = HW_KSRV_CLOSE_NO_MEMORY;
		return -ENOMEM;
	}
	r->conn = c;
	r->start_ns = ksrv_now(s);
	hw_kw_init(&r->body, 256);
	if (hw_kafka_req_hdr_decode(&rd, &r->hdr) < 0) {
		req_free(r);
		*why = HW_KSRV_CLOSE_BAD_HEADER;
		return -EBADMSG;
	}
	/* the frame is not kept: client_id is valid only while it is handled
	 * (the group coordinator copies it: member ids, DescribeGroups) */
	hw_kstr client_id = r->hdr.client_id;
	r->hdr.client_id = (hw_kstr){ NULL, -1 };
	r->api_idx = hw_kafka_api_index(r->hdr.api_key);
	const hw_kafka_api_info *a = r->api_idx >= 0 ? hw_kafka_api_at(r->api_idx) : NULL;
	if (!a || a->min < 0) {
		s->st.unsupported_api++;
		HW_LOG(DEBUG, "kafka", "unsupported api key %d v%d: closing", r->hdr.api_key, r->hdr.api_version);
		req_free(r);
		*why = HW_KSRV_CLOSE_UNKNOWN_API;
		return -EOPNOTSUPP;
	}
	/* queue first: the response keeps its place whatever happens next */
	if (c->tail)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
	c->n_req++;
	r->pending = 1;
	HW_LOG(DEBUG, "kafka", "request %s v%d correlation %d", a->name, r->hdr.api_version, r->hdr.correlation_id);
	int rc;
	if (r->hdr.api_version < a->min || r->hdr.api_version > a->max) {
		if (r->hdr.api_key != HW_KAPI_API_VERSIONS) {
			*why = HW_KSRV_CLOSE_BAD_VERSION;
			r->no_response = true;
			r->done = true;
			conn_flush(c);
			return -EPROTONOSUPPORT;
		}
		/* Kafka: answer in v0 with UNSUPPORTED_VERSION and the ranges */
		r->hdr.api_version = 0;
		r->hdr.flexible = false;
		write_api_versions(r, HW_ERR_UNSUPPORTED_VERSION, 0);
		rc = 0;
	} else if (a->owner == HW_KAPI_OWNER_GROUP) {
		if (s->ops.group_request) {
			hw_kafka_req_hdr h = r->hdr;
			h.client_id = client_id;
			h.client_host = (hw_kstr){ c->peer, (int32_t)strlen(c->peer) };
			rc = s->ops.group_request(s->ctx, r, &h, &rd, &r->body);
			if (rc == 1) {
				r->group_pending = true;
				rc = 0;
			}
		} else if (r->hdr.api_key == HW_KAPI_FIND_COORDINATOR) {
			rc = hw_kapi_find_coordinator_stub(s, r, &rd);
		} else {
			rc = -EOPNOTSUPP; /* no coordinator: FindCoordinator said so */
		}
	} else {
		rc = handler_of(r->hdr.api_key)(s, r, &rd);
	}
	if (rc < 0) {
		HW_LOG(DEBUG, "kafka", "api key %d v%d: request does not decode (%s): closing", r->hdr.api_key,
		       r->hdr.api_version, strerror(-rc));
		*why = rc == -EPIPE ? HW_KSRV_CLOSE_ACKS0_ERROR : HW_KSRV_CLOSE_BAD_REQUEST;
		/* the slot stays until its operations are answered; nothing
		 * is sent for it (the connection is closing) */
		r->no_response = true;
		r->finish = NULL;
		ksrv_req_release(r);
		return rc;
	}
	ksrv_req_release(r);
	return 0;
}

hw_kconn *hw_kconn_open(hw_ksrv *s, void *conn_ctx)
{
	hw_kconn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->srv = s;
	c->ctx = conn_ctx;
	hw_kw_init(&c->out, 4096);
	s->st.connections_opened++;
	s->st.connections_open++;
	return c;
}

void *hw_kconn_ctx(const hw_kconn *c) { return c->ctx; }

void hw_kconn_set_peer(hw_kconn *c, const char *peer)
{
	snprintf(c->peer, sizeof(c->peer), "%s", peer ? peer : "");
}

int hw_kconn_input(hw_kconn *c, const uint8_t *buf, size_t len)
{
	hw_ksrv *s = c->srv;
	if (c->closed)
		return -EPIPE;
	if (c->want_close)
		return 0;  /* closing: nothing more is read */
	if (len) {
		if (c->in_cap - c->in_len < len) {
			size_t cap = c->in_cap ? c->in_cap : 4096;
			while (cap - c->in_len < len)
				cap *= 2;
			uint8_t *nb = realloc(c->in, cap);
			if (!nb) {
				s->st.closes[HW_KSRV_CLOSE_NO_MEMORY]++;
				return -ENOMEM;
			}
			c->in = nb;
			c->in_cap = cap;
		}
		memcpy(c->in + c->in_len, buf, len);
		c->in_len += len;
	}
	size_t off = 0;
	int rc = 0;
	while (c->in_len - off >= 4 && c->n_req < HW_KSRV_MAX_INFLIGHT) {
		const uint8_t *q = c->in + off;
		int32_t size = (int32_t)((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]);
		hw_ksrv_close why = HW_KSRV_CLOSE_BAD_REQUEST;
		if (size < 8) {
			c->srv->st.closes[HW_KSRV_CLOSE_BAD_SIZE]++;
			return -EBADMSG;
		}
		if ((int64_t)size > s->cfg.socket_request_max_bytes) {
			HW_LOG(INFO, "kafka", "request of %d bytes over socket.request.max.bytes=%lld: closing", size,
			       (long long)s->cfg.socket_request_max_bytes);
			c->srv->st.closes[HW_KSRV_CLOSE_TOO_LARGE]++;
			return -EMSGSIZE;
		}
		if (c->in_len - off - 4 < (size_t)size)
			break;
		rc = handle_frame(c, q + 4, (size_t)size, &why);
		off += 4 + (size_t)size;
		if (rc < 0) {
			c->srv->st.closes[why]++;
			break;
		}
	}
	if (off && !c->closed) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
	return rc;
}

int hw_kconn_has_parked_input(const hw_kconn *c)
{
	return c->in_len >= 4 && c->n_req < HW_KSRV_MAX_INFLIGHT;
}

int hw_kconn_close_wanted(const hw_kconn *c) { return c->want_close; }

int hw_kconn_wants_input(const hw_kconn *c)
{
	return !c->closed && !c->want_close && c->n_req < HW_KSRV_MAX_INFLIGHT && c->out.len - c->out_off <= HW_KSRV_MAX_OUTPUT;
}

size_t hw_kconn_output(hw_kconn *c, const uint8_t **p)
{
	if (c->out.err) {
		*p = NULL;
		return 0;
	}
	*p = c->out.buf + c->out_off;
	return c->out.len - c->out_off;
}

void hw_kconn_output_done(hw_kconn *c, size_t n)
{
	c->out_off += n;
	if (c->out_off > c->out.len)
		c->out_off = c->out.len;
	if (c->out_off == c->out.len) {
		c->out.len = 0;
		c->out_off = 0;
	} else if (c->out_off > 65536 && c->out_off * 2 > c->out.len) {
		memmove(c->out.buf, c->out.buf + c->out_off, c->out.len - c->out_off);
		c->out.len -= c->out_off;
		c->out_off = 0;
	}
}

void hw_kconn_close(hw_kconn *c, hw_ksrv_close why)
{
	if (c->closed)
		return;
	hw_ksrv *s = c->srv;
	if (why == HW_KSRV_CLOSE_PEER || why == HW_KSRV_CLOSE_IO_ERROR || why == HW_KSRV_CLOSE_SHUTDOWN ||
	    why == HW_KSRV_CLOSE_LIMIT)
		s->st.closes[why]++; /* protocol reasons were counted where found */
	s->st.connections_open--;
	c->closed = true;
	/* drop finished requests; pending ones free themselves */
	conn_flush(c);
}
