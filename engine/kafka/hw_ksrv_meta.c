/* hw_ksrv_meta.c — the Kafka server's metadata and admin APIs: Metadata
 * (with auto topic creation), CreateTopics, DescribeConfigs and the
 * FindCoordinator stub (docs/kafka.md); DeleteTopics and InitProducerId are
 * in hw_ksrv_admin.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_kafka_group.h"
#include "hw_ksrv_int.h"

#define PROBE_TOPIC "__hiwater_brokers" /* METADATA for brokers only (hwd_broker.c) */

/* ---- a deep copy of a controller METADATA_RESP -------------------------- */
typedef struct md_broker {
	int32_t id;
	char host[HW_ENDPOINT_MAX];
	int32_t port;
	char rack[HW_RACK_MAX];        /* broker.rack, "" none (docs/racks.md) */
} md_broker;

typedef struct md_topic {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t id;
	int16_t error;
	uint32_t n_parts;
	hw_partition_meta *parts;
	uint16_t n_configs;
	hw_config_kv *configs;
} md_topic;

typedef struct md_view {
	int got;
	int16_t error;
	int n_brokers;
	md_broker *brokers;
	int n_topics;
	md_topic *topics;
} md_view;

static void md_free(md_view *v)
{
	for (int i = 0; i < v->n_topics; i++) {
		free(v->topics[i].parts);
		free(v->topics[i].configs);
	}
	free(v->topics);
	free(v->brokers);
	memset(v, 0, sizeof(*v));
}

/* "HOST:PORT" -> host, port. 0 or -EINVAL. */
static int split_hostport(const char *v, char *host, size_t cap, int32_t *port)
{
	const char *colon = strrchr(v, ':');
	if (!colon || colon == v || (size_t)(colon - v) >= cap)
		return -EINVAL;
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || p <= 0 || p > 65535)
		return -EINVAL;
	memcpy(host, v, (size_t)(colon - v));
	host[colon - v] = 0;
	*port = (int32_t)p;
	return 0;
}

static int md_copy(hw_ksrv *s, md_view *v, const hw_metadata_resp *q)
{
	md_free(v);
	v->got = 1;
	v->error = q->error;
	v->brokers = calloc(q->n_brokers ? q->n_brokers : 1, sizeof(*v->brokers));
	v->topics = calloc(q->n_topics ? q->n_topics : 1, sizeof(*v->topics));
	if (!v->brokers || !v->topics)
		return -ENOMEM;
	for (int i = 0; i < q->n_brokers; i++) {
		const hw_broker_info *b = &q->brokers[i];
		if (b->state != HW_BROKER_ACTIVE && b->state != HW_BROKER_SHUTTING_DOWN)
			continue; /* Kafka lists the live brokers */
		for (int k = 0; k < b->n_listeners && k < HW_MAX_LISTENERS; k++) {
			md_broker *o = &v->brokers[v->n_brokers];
			if (strcmp(b->listeners[k].name, "PLAINTEXT") ||
			    split_hostport(b->listeners[k].value, o->host, sizeof(o->host), &o->port))
				continue;
			o->id = b->id;
			memcpy(o->rack, b->rack, sizeof(o->rack));
			v->n_brokers++;
			break;
		}
	}
	for (int i = 0; i < q->n_topics; i++) {
		const hw_topic_meta *t = &q->topics[i];
		md_topic *o = &v->topics[v->n_topics++];
		snprintf(o->name, sizeof(o->name), "%s", t->name);
		o->id = t->topic_id;
		o->error = t->error;
		if (!t->error)
			ksrv_topic_learn(s, t->name, t->topic_id);
		if (t->n_parts) {
			o->parts = malloc(t->n_parts * sizeof(*o->parts));
			if (!o->parts)
				return -ENOMEM;
			memcpy(o->parts, t->parts, t->n_parts * sizeof(*o->parts));
			o->n_parts = t->n_parts;
		}
		if (t->n_configs) {
			o->configs = malloc(t->n_configs * sizeof(*o->configs));
			if (!o->configs)
				return -ENOMEM;
			memcpy(o->configs, t->configs, t->n_configs * sizeof(*o->configs));
			o->n_configs = t->n_configs;
		}
	}
	return 0;
}

static const md_topic *md_find(const md_view *v, const char *name)
{
	for (int i = 0; i < v->n_topics; i++)
		if (!strcmp(v->topics[i].name, name))
			return &v->topics[i];
	return NULL;
}

/* A METADATA to the controller for `names` (n == 0 and !all: brokers only). */
static int submit_metadata(hw_ksrv *s, hw_kreq *r, int idx, char (*names)[HW_TOPIC_NAME_MAX], int n, bool all,
			   hw_kop_answer_fn answer, hw_kop_fail_fn fail)
{
	hw_topic_name *t = calloc(n ? (size_t)n : 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	int k = 0;
	for (int i = 0; i < n; i++)
		if (names[i][0])
			snprintf(t[k++].s, sizeof(t[0].s), "%s", names[i]);
	if (!all && !k)
		snprintf(t[k++].s, sizeof(t[0].s), "%s", PROBE_TOPIC);
	hw_metadata_req q = { .n_topics = all ? 0 : (uint16_t)k, .topics = t };
	hw_msg m = { .type = HW_MSG_METADATA, .src = s->cfg.node_id };
	m.u.other = &q;
	int rc = ksrv_submit(s, r, &m, idx, 1, true, answer, fail);
	free(t);
	return rc;
}

/* ---- Metadata --------------------------------------------------------------- */
typedef struct md_state {
	bool all;
	bool auto_create;
	int n;
	char (*names)[HW_TOPIC_NAME_MAX];
	int16_t *err;          /* per requested name: invalid name, create result */
	bool *created;         /* auto-created by this request */
	int16_t ctrl_err;      /* the controller did not answer */
	md_view v;
} md_state;

static void md_state_free(void *p)
{
	md_state *st = p;
	md_free(&st->v);
	free(st->names);
	free(st->err);
	free(st->created);
	free(st);
}

static void md_create_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	md_state *st = r->state;
	if (m->type != HW_MSG_CREATE_TOPIC_RESP)
		return;
	const hw_create_topic_resp *q = m->u.other;
	if (q->error == HW_ERR_NONE || q->error == HW_ERR_TOPIC_ALREADY_EXISTS)
		st->created[idx - 1] = true;
	else
		st->err[idx - 1] = q->error;
}

static void md_create_fail(hw_kreq *r, int idx, int16_t err)
{
	md_state *st = r->state;
	st->err[idx - 1] = err == HW_ERR_REQUEST_TIMED_OUT ? HW_ERR_LEADER_NOT_AVAILABLE : err;
}

static void md_fail(hw_kreq *r, int idx, int16_t err)
{
	(void)idx;
	md_state *st = r->state;
	st->ctrl_err = err;
}

static void md_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	(void)idx;
	md_state *st = r->state;
	hw_ksrv *s = r->conn->srv;
	if (m->type != HW_MSG_METADATA_RESP || md_copy(s, &st->v, m->u.other) < 0) {
		st->ctrl_err = HW_ERR_UNKNOWN_SERVER_ERROR;
		return;
	}
	if (!st->auto_create || !s->cfg.auto_create_topics)
		return;
	for (int i = 0; i < st->n; i++) {
		const md_topic *t = md_find(&st->v, st->names[i]);
		if (st->err[i] || !st->names[i][0] || (t && t->error != HW_ERR_UNKNOWN_TOPIC_OR_PARTITION))
			continue;
		/* the broker's num.partitions / default.replication.factor, as
		 * Kafka's AutoTopicCreationManager sends them */
		hw_create_topic_req q = { .partitions = s->cfg.num_partitions > 0 ? s->cfg.num_partitions : -1,
					  .replication_factor = s->cfg.default_replication_factor > 0
									? s->cfg.default_replication_factor
									: -1,
					  .timeout_ms = 5000 };
		snprintf(q.name, sizeof(q.name), "%s", st->names[i]);
		hw_msg cm = { .type = HW_MSG_CREATE_TOPIC, .src = s->cfg.node_id };
		cm.u.other = &q;
		if (ksrv_submit(s, r, &cm, 1 + i, 1, true, md_create_answer, md_create_fail) < 0)
			st->err[i] = HW_ERR_LEADER_NOT_AVAILABLE;
	}
}

static void write_int_array(hw_kw *w, bool fx, const hw_idset *set)
{
	hw_kw_array_v(w, fx, set->n);
	for (int i = 0; i < set->n; i++)
		hw_kw_i32(w, set->id[i]);
}

static void md_write_topic(hw_kreq *r, const md_topic *t, const char *name, int16_t err)
{
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	if (!err && t)
		err = t->error;
	hw_kw_i16(w, err);
	ksrv_err(r, err);
	hw_kw_strz_v(w, fx, name);
	if (v >= 1)
		hw_kw_bool(w, name[0] == '_' && name[1] == '_'); /* is_internal */
	uint32_t np = !err && t ? t->n_parts : 0;
	hw_kw_array_v(w, fx, (int32_t)np);
	for (uint32_t p = 0; p < np; p++) {
		const hw_partition_meta *pm = &t->parts[p];
		int16_t perr = pm->error;
		if (!perr && pm->leader < 0)
			perr = HW_ERR_LEADER_NOT_AVAILABLE;
		hw_kw_i16(w, perr);
		hw_kw_i32(w, (int32_t)pm->partition);
		hw_kw_i32(w, pm->leader);
		if (v >= 7)
			hw_kw_i32(w, pm->leader_epoch);
		write_int_array(w, fx, &pm->replicas);
		write_int_array(w, fx, &pm->isr);
		if (v >= 5)
			hw_kw_array_v(w, fx, 0); /* offline_replicas */
		hw_kw_tags_v(w, fx);
	}
	if (v >= 8)
		hw_kw_i32(w, INT32_MIN); /* topic_authorized_operations: not requested */
	hw_kw_tags_v(w, fx);
}

static void md_finish(hw_kreq *r)
{
	md_state *st = r->state;
	hw_ksrv *s = r->conn->srv;
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	if (v >= 3)
		hw_kw_i32(w, 0); /* throttle_time_ms */
	hw_kw_array_v(w, fx, st->v.n_brokers);
	for (int i = 0; i < st->v.n_brokers; i++) {
		hw_kw_i32(w, st->v.brokers[i].id);
		hw_kw_strz_v(w, fx, st->v.brokers[i].host);
		hw_kw_i32(w, st->v.brokers[i].port);
		if (v >= 1) /* rack: broker.rack, null without one */
			hw_kw_nstrz_v(w, fx, st->v.brokers[i].rack[0] ? st->v.brokers[i].rack : NULL);
		hw_kw_tags_v(w, fx);
	}
	if (v >= 2)
		hw_kw_nstrz_v(w, fx, s->cfg.cluster_id);
	if (v >= 1)
		hw_kw_i32(w, s->cfg.node_id); /* controller_id: admin requests come to any broker */
	if (st->all) {
		int n = 0;
		for (int i = 0; i < st->v.n_topics; i++)
			n += !st->v.topics[i].error;
		hw_kw_array_v(w, fx, n);
		for (int i = 0; i < st->v.n_topics; i++)
			if (!st->v.topics[i].error)
				md_write_topic(r, &st->v.topics[i], st->v.topics[i].name, 0);
	} else {
		hw_kw_array_v(w, fx, st->n);
		for (int i = 0; i < st->n; i++) {
			const md_topic *t = md_find(&st->v, st->names[i]);
			int16_t err = st->err[i];
			if (!err && st->ctrl_err)
				err = HW_ERR_LEADER_NOT_AVAILABLE; /* retriable: the client asks again */
			if (!err && st->created[i])
				err = HW_ERR_LEADER_NOT_AVAILABLE; /* Kafka's answer for a topic being created */
			if (!err && !t)
				err = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
			md_write_topic(r, t, st->names[i], err);
		}
	}
	if (v >= 8)
		hw_kw_i32(w, INT32_MIN); /* cluster_authorized_operations */
	hw_kw_tags_v(w, fx);
}

int hw_kapi_metadata(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	int32_t n = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	md_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r->state = st;
	r->free_state = md_state_free;
	st->all = n < 0 || (v == 0 && n == 0);
	st->n = n > 0 ? n : 0;
	st->names = calloc(st->n ? (size_t)st->n : 1, sizeof(*st->names));
	st->err = calloc(st->n ? (size_t)st->n : 1, sizeof(*st->err));
	st->created = calloc(st->n ? (size_t)st->n : 1, sizeof(*st->created));
	if (!st->names || !st->err || !st->created)
		return -ENOMEM;
	for (int i = 0; i < st->n; i++) {
		st->err[i] = ksrv_topic_name(hw_kr_str_v(rd, fx), st->names[i]);
		hw_kr_tags_v(rd, fx);
	}
	st->auto_create = v < 4 ? true : hw_kr_bool(rd);
	if (v >= 8) {
		(void)hw_kr_bool(rd); /* include_cluster_authorized_operations */
		(void)hw_kr_bool(rd); /* include_topic_authorized_operations */
	}
	hw_kr_tags_v(rd, fx);
	if (rd->err)
		return rd->err;
	r->finish = md_finish;
	if (submit_metadata(s, r, 0, st->names, st->n, st->all, md_answer, md_fail) < 0)
		st->ctrl_err = HW_ERR_LEADER_NOT_AVAILABLE;
	return 0;
}

/* ---- CreateTopics ----------------------------------------------------------- */
#define CT_MAX_CONFIGS 32

typedef struct ct_topic {
	char name[HW_TOPIC_NAME_MAX];
	int16_t err;
	char msg[HW_ERRMSG_MAX];
	/* v5+: what the topic was created with */
	uint32_t topic_id;         /* v7+, 0: none (error) */
	int32_t partitions;
	int16_t replication_factor;
	int n_configs;             /* the request's overrides */
	hw_config_kv configs[CT_MAX_CONFIGS];
} ct_topic;

typedef struct ct_state {
	int n;
	ct_topic *t;
} ct_state;

static void ct_state_free(void *p)
{
	ct_state *st = p;
	free(st->t);
	free(st);
}

static void ct_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	ct_state *st = r->state;
	if (m->type != HW_MSG_CREATE_TOPIC_RESP)
		return;
	const hw_create_topic_resp *q = m->u.other;
	st->t[idx].err = q->error;
	snprintf(st->t[idx].msg, sizeof(st->t[idx].msg), "%s", q->error_message);
	st->t[idx].topic_id = q->topic_id;
	st->t[idx].partitions = q->partitions;
	st->t[idx].replication_factor = q->replication_factor;
}

static void ct_fail(hw_kreq *r, int idx, int16_t err)
{
	ct_state *st = r->state;
	st->t[idx].err = err;
	snprintf(st->t[idx].msg, sizeof(st->t[idx].msg), "the controller did not answer");
}

static void ct_finish(hw_kreq *r)
{
	ct_state *st = r->state;
	hw_ksrv *s = r->conn->srv;
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	if (v >= 2)
		hw_kw_i32(w, 0);
	hw_kw_array_v(w, fx, st->n);
	for (int i = 0; i < st->n; i++) {
		const ct_topic *t = &st->t[i];
		hw_kw_strz_v(w, fx, t->name);
		if (v >= 7) {
			uint8_t id[16] = { 0 }; /* Kafka's zero UUID on error */
			if (!t->err && t->topic_id)
				hw_kafka_topic_uuid(t->topic_id, id);
			hw_kw_uuid(w, id);
		}
		hw_kw_i16(w, t->err);
		ksrv_err(r, t->err);
		if (v >= 1)
			hw_kw_nstrz_v(w, fx, t->err && t->msg[0] ? t->msg : NULL);
		if (v >= 5) {
			/* KIP-525: the partitions, replication factor and every
			 * topic config the topic got (null configs on error) */
			hw_kw_i32(w, t->err ? -1 : t->partitions);
			hw_kw_i16(w, t->err ? -1 : t->replication_factor);
			if (t->err) {
				hw_kw_array_v(w, fx, -1);
			} else {
				hw_kw_array_v(w, fx, (int32_t)s->cfg.n_topic_configs);
				for (size_t k = 0; k < s->cfg.n_topic_configs; k++) {
					const hw_ksrv_kv *e = &s->cfg.topic_configs[k];
					const char *value = e->value;
					int8_t src = e->is_default ? 5 : 4; /* DEFAULT_CONFIG / STATIC_BROKER_CONFIG */
					for (int c = 0; c < t->n_configs; c++)
						if (!strcmp(t->configs[c].key, e->name)) {
							value = t->configs[c].value;
							src = 1; /* DYNAMIC_TOPIC_CONFIG */
						}
					hw_kw_strz_v(w, fx, e->name);
					hw_kw_nstrz_v(w, fx, value);
					hw_kw_bool(w, false); /* read_only */
					hw_kw_i8(w, src);
					hw_kw_bool(w, false); /* is_sensitive */
					hw_kw_tags_v(w, fx);
				}
			}
		}
		hw_kw_tags_v(w, fx); /* topic_config_error_code (tag 0): configs are never refused separately */
	}
	hw_kw_tags_v(w, fx);
}

int hw_kapi_create_topics(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	int32_t n = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	ct_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r->state = st;
	r->free_state = ct_state_free;
	st->n = n > 0 ? n : 0;
	st->t = calloc(st->n ? (size_t)st->n : 1, sizeof(*st->t));
	hw_create_topic_req *q = calloc(st->n ? (size_t)st->n : 1, sizeof(*q));
	hw_config_kv *kv = calloc((size_t)(st->n ? st->n : 1) * CT_MAX_CONFIGS, sizeof(*kv));
	if (!st->t || !q || !kv) {
		free(q);
		free(kv);
		return -ENOMEM;
	}
	for (int i = 0; i < st->n && !rd->err; i++) {
		hw_kstr name = hw_kr_str_v(rd, fx);
		st->t[i].err = ksrv_topic_name(name, st->t[i].name);
		if (st->t[i].err && name.len > 0)
			snprintf(st->t[i].name, sizeof(st->t[i].name), "%.*s",
				 name.len < HW_TOPIC_NAME_MAX - 1 ? (int)name.len : HW_TOPIC_NAME_MAX - 1, name.p);
		snprintf(q[i].name, sizeof(q[i].name), "%s", st->t[i].name);
		q[i].partitions = hw_kr_i32(rd);
		q[i].replication_factor = hw_kr_i16(rd);
		int32_t na = hw_kr_array_v(rd, fx);
		for (int a = 0; a < na && !rd->err; a++) {
			(void)hw_kr_i32(rd);
			int32_t nb = hw_kr_array_v(rd, fx);
			for (int b = 0; b < nb && !rd->err; b++)
				(void)hw_kr_i32(rd);
			hw_kr_tags_v(rd, fx);
		}
		if (na > 0 && !st->t[i].err) {
			st->t[i].err = HW_ERR_INVALID_REPLICA_ASSIGNMENT;
			snprintf(st->t[i].msg, sizeof(st->t[i].msg), "manual replica assignment is not supported");
		}
		int32_t nc = hw_kr_array_v(rd, fx);
		q[i].configs = &kv[(size_t)i * CT_MAX_CONFIGS];
		for (int c = 0; c < nc && !rd->err; c++) {
			hw_kstr k = hw_kr_str_v(rd, fx);
			hw_kstr val = hw_kr_nstr_v(rd, fx);
			hw_kr_tags_v(rd, fx);
			if (rd->err)
				break;
			if (q[i].n_configs == CT_MAX_CONFIGS || k.len <= 0 || k.len >= HW_CONFIG_KEY_MAX ||
			    val.len >= HW_CONFIG_VALUE_MAX) {
				if (!st->t[i].err)
					st->t[i].err = HW_ERR_INVALID_CONFIG;
				continue;
			}
			if (val.len < 0)
				continue; /* null value: the default */
			hw_config_kv *e = &kv[(size_t)i * CT_MAX_CONFIGS + q[i].n_configs++];
			hw_kstr_copy(k, e->key, sizeof(e->key));
			hw_kstr_copy(val, e->value, sizeof(e->value));
		}
		if (q[i].partitions == 0 || q[i].partitions < -1)
			st->t[i].err = st->t[i].err ? st->t[i].err : HW_ERR_INVALID_PARTITIONS;
		if (q[i].replication_factor == 0 || q[i].replication_factor < -1)
			st->t[i].err = st->t[i].err ? st->t[i].err : HW_ERR_INVALID_REPLICATION_FACTOR;
		hw_kr_tags_v(rd, fx);
		st->t[i].n_configs = q[i].n_configs;
		memcpy(st->t[i].configs, q[i].configs, (size_t)q[i].n_configs * sizeof(hw_config_kv));
		st->t[i].partitions = q[i].partitions;
		st->t[i].replication_factor = q[i].replication_factor;
	}
	int32_t timeout = hw_kr_i32(rd);
	bool validate_only = v >= 1 ? hw_kr_bool(rd) : false;
	hw_kr_tags_v(rd, fx);
	int rc = rd->err;
	for (int i = 0; !rc && i < st->n; i++) {
		if (st->t[i].err)
			continue;
		for (int j = 0; j < i; j++)
			if (!strcmp(st->t[j].name, st->t[i].name))
				st->t[i].err = HW_ERR_INVALID_REQUEST; /* Kafka: duplicate topic */
		if (st->t[i].err)
			continue;
		q[i].timeout_ms = timeout;
		q[i].validate_only = validate_only;
		hw_msg m = { .type = HW_MSG_CREATE_TOPIC, .src = s->cfg.node_id };
		m.u.other = &q[i];
		if (ksrv_submit(s, r, &m, i, 1, true, ct_answer, ct_fail) < 0)
			st->t[i].err = HW_ERR_NOT_CONTROLLER;
	}
	free(q);
	free(kv);
	r->finish = ct_finish;
	return rc;
}

/* ---- DescribeConfigs -------------------------------------------------------- */
#define DC_TOPIC  2
#define DC_BROKER 4
#define DC_SRC_TOPIC   1 /* DYNAMIC_TOPIC_CONFIG */
#define DC_SRC_STATIC  4 /* STATIC_BROKER_CONFIG */
#define DC_SRC_DEFAULT 5 /* DEFAULT_CONFIG */

typedef struct dc_res {
	int8_t type;
	char name[HW_TOPIC_NAME_MAX];
	int16_t err;
	int n_keys;                 /* -1: all */
	char (*keys)[HW_CONFIG_KEY_MAX];
} dc_res;

typedef struct dc_state {
	int n;
	dc_res *res;
	bool synonyms;
	int16_t ctrl_err;
	md_view v;
	int want_md;
} dc_state;

static void dc_state_free(void *p)
{
	dc_state *st = p;
	for (int i = 0; i < st->n; i++)
		free(st->res[i].keys);
	free(st->res);
	md_free(&st->v);
	free(st);
}

static void dc_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	(void)idx;
	dc_state *st = r->state;
	if (m->type != HW_MSG_METADATA_RESP || md_copy(r->conn->srv, &st->v, m->u.other) < 0)
		st->ctrl_err = HW_ERR_UNKNOWN_SERVER_ERROR;
}

static void dc_fail(hw_kreq *r, int idx, int16_t err)
{
	(void)idx;
	dc_state *st = r->state;
	st->ctrl_err = err;
}

static bool dc_wanted(const dc_res *res, const char *key)
{
	if (res->n_keys < 0)
		return true;
	for (int i = 0; i < res->n_keys; i++)
		if (!strcmp(res->keys[i], key))
			return true;
	return false;
}

/* One config entry. e: the broker's value (for a topic config, its
 * synonym's); ovr: the topic's override (NULL: none). Synonyms (v1+, when
 * asked) as Kafka lists them: the override first, then the broker key. */
static void dc_write_entry(hw_kreq *r, const hw_ksrv_kv *e, bool topic, const char *ovr, bool synonyms)
{
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	int8_t bsrc = e->is_default ? DC_SRC_DEFAULT : DC_SRC_STATIC;
	int8_t source = ovr ? DC_SRC_TOPIC : bsrc;
	hw_kw_strz_v(w, fx, e->name);
	hw_kw_nstrz_v(w, fx, ovr ? ovr : e->value);
	/* read_only: broker configs are static; a topic's are alterable
	 * when hiwater has the key (AlterConfigs) */
	hw_kw_bool(w, !topic || hw_tc_lookup(e->name) < 0);
	if (v == 0)
		hw_kw_bool(w, source == DC_SRC_DEFAULT); /* is_default */
	else
		hw_kw_i8(w, source);
	hw_kw_bool(w, false); /* is_sensitive */
	if (v >= 1) {
		if (synonyms) {
			bool bsyn = !topic || e->synonym;
			hw_kw_array_v(w, fx, (ovr ? 1 : 0) + (bsyn ? 1 : 0));
			if (ovr) {
				hw_kw_strz_v(w, fx, e->name);
				hw_kw_nstrz_v(w, fx, ovr);
				hw_kw_i8(w, DC_SRC_TOPIC);
				hw_kw_tags_v(w, fx);
			}
			if (bsyn) {
				hw_kw_strz_v(w, fx, topic ? e->synonym : e->name);
				hw_kw_nstrz_v(w, fx, e->value);
				hw_kw_i8(w, bsrc);
				hw_kw_tags_v(w, fx);
			}
		} else {
			hw_kw_array_v(w, fx, 0);
		}
	}
	if (v >= 3) {
		hw_kw_i8(w, 0);               /* config_type: UNKNOWN (the schema's types are hiwater's) */
		hw_kw_nstrz_v(w, fx, NULL);   /* documentation: none */
	}
	hw_kw_tags_v(w, fx);
}

static void dc_finish(hw_kreq *r)
{
	dc_state *st = r->state;
	hw_ksrv *s = r->conn->srv;
	hw_kw *w = &r->body;
	bool fx = r->hdr.flexible;
	hw_kw_i32(w, 0);
	hw_kw_array_v(w, fx, st->n);
	for (int i = 0; i < st->n; i++) {
		dc_res *res = &st->res[i];
		const md_topic *t = NULL;
		if (!res->err && res->type == DC_TOPIC) {
			t = md_find(&st->v, res->name);
			if (st->ctrl_err)
				res->err = st->ctrl_err;
			else if (!t || t->error)
				res->err = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
		}
		hw_kw_i16(w, res->err);
		ksrv_err(r, res->err);
		hw_kw_nstrz_v(w, fx, res->err ? hw_err_name(res->err) : NULL);
		hw_kw_i8(w, res->type);
		hw_kw_strz_v(w, fx, res->name);
		if (res->err) {
			hw_kw_array_v(w, fx, 0);
			hw_kw_tags_v(w, fx);
			continue;
		}
		const hw_ksrv_kv *list = t ? s->cfg.topic_configs : s->cfg.broker_configs;
		size_t n_list = t ? s->cfg.n_topic_configs : s->cfg.n_broker_configs;
		int32_t cnt = 0; /* counted first: a compact count is a varint */
		for (size_t k = 0; k < n_list; k++)
			cnt += dc_wanted(res, list[k].name);
		hw_kw_array_v(w, fx, cnt);
		for (size_t k = 0; k < n_list; k++) {
			const hw_ksrv_kv *e = &list[k];
			if (!dc_wanted(res, e->name))
				continue;
			const char *ovr = NULL;
			for (int c = 0; t && c < t->n_configs; c++)
				if (!strcmp(t->configs[c].key, e->name))
					ovr = t->configs[c].value;
			/* the controller always lists min.insync.replicas (its
			 * value in force): an override only when it differs */
			if (ovr && e->value && !strcmp(e->name, "min.insync.replicas") && !strcmp(ovr, e->value))
				ovr = NULL;
			dc_write_entry(r, e, t != NULL, ovr, st->synonyms);
		}
		hw_kw_tags_v(w, fx);
	}
	hw_kw_tags_v(w, fx);
}

int hw_kapi_describe_configs(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	int32_t n = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	dc_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r->state = st;
	r->free_state = dc_state_free;
	st->n = n > 0 ? n : 0;
	st->res = calloc(st->n ? (size_t)st->n : 1, sizeof(*st->res));
	if (!st->res)
		return -ENOMEM;
	char (*names)[HW_TOPIC_NAME_MAX] = calloc(st->n ? (size_t)st->n : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	int n_topics = 0;
	for (int i = 0; i < st->n && !rd->err; i++) {
		dc_res *res = &st->res[i];
		res->type = hw_kr_i8(rd);
		hw_kstr name = hw_kr_str_v(rd, fx);
		int32_t nk = hw_kr_array_v(rd, fx);
		if (rd->err)
			break;
		res->n_keys = nk;
		if (nk > 0) {
			res->keys = calloc((size_t)nk, sizeof(*res->keys));
			if (!res->keys) {
				free(names);
				return -ENOMEM;
			}
		}
		for (int k = 0; k < nk && !rd->err; k++)
			(void)hw_kstr_copy(hw_kr_str_v(rd, fx), res->keys[k], sizeof(res->keys[k]));
		hw_kr_tags_v(rd, fx);
		if (res->type == DC_TOPIC) {
			res->err = ksrv_topic_name(name, res->name);
			if (!res->err)
				snprintf(names[n_topics++], sizeof(names[0]), "%s", res->name);
		} else if (res->type == DC_BROKER) {
			snprintf(res->name, sizeof(res->name), "%.*s",
				 name.len > 0 && name.len < HW_TOPIC_NAME_MAX ? (int)name.len : 0, name.p ? name.p : "");
		} else {
			res->err = HW_ERR_INVALID_REQUEST;
		}
	}
	if (v >= 1)
		st->synonyms = hw_kr_bool(rd);
	if (v >= 3)
		(void)hw_kr_bool(rd); /* include_documentation: there is none to include */
	hw_kr_tags_v(rd, fx);
	int rc = rd->err;
	if (!rc && n_topics && submit_metadata(s, r, 0, names, n_topics, false, dc_answer, dc_fail) < 0)
		st->ctrl_err = HW_ERR_NOT_CONTROLLER;
	free(names);
	r->finish = dc_finish;
	return rc;
}

/* ---- FindCoordinator without a group coordinator ---------------------------- */
int hw_kapi_find_coordinator_stub(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	(void)s;
	int16_t v = r->hdr.api_version;
	hw_kg_find_req q;
	int rc = hw_kg_find_decode(rd, v, &q);
	if (rc) {
		hw_kg_find_free(&q);
		return rc;
	}
	int32_t n = q.n_keys > 0 ? q.n_keys : 1;
	hw_kg_find_resp *a = calloc((size_t)n, sizeof(*a));
	if (!a) {
		hw_kg_find_free(&q);
		return -ENOMEM;
	}
	for (int32_t i = 0; i < n; i++)
		a[i] = (hw_kg_find_resp){ .error = HW_KERR_COORDINATOR_NOT_AVAILABLE,
					  .error_message = "no group coordinator in this build", .node_id = -1,
					  .host = "", .port = -1, .key = q.n_keys ? q.keys[i] : q.key };
	hw_kg_find_encode_n(&r->body, v, q.n_keys, a);
	ksrv_err(r, HW_KERR_COORDINATOR_NOT_AVAILABLE);
	free(a);
	hw_kg_find_free(&q);
	return 0;
}
