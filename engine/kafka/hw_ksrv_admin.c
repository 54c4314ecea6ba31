/* hw_ksrv_admin.c — the Kafka server's DeleteTopics and InitProducerId
 * (docs/kafka.md "DeleteTopics", "InitProducerId").
 *
 * DeleteTopics v0-v6 (v4+ flexible; v5 adds error messages; v6 names topics
 * by name or id): every topic becomes one DELETE_TOPIC to the controller,
 * answered once the controller's deletion record is durable (KRaft's
 * behaviour: the brokers remove the replicas asynchronously), or
 * REQUEST_TIMED_OUT when the controller does not answer. Duplicate names
 * are INVALID_REQUEST (Kafka's ControllerApis); with delete.topic.enable
 * false every topic gets TOPIC_DELETION_DISABLED (INVALID_REQUEST below
 * v3, as Kafka). Internal topics are deleted like any other: Kafka refuses
 * them only in its CLI (TopicCommand) and through ACLs.
 *
 * InitProducerId v0-v4 (v2+ flexible): the next id of the broker's block
 * from the controller (hw_pid_block.h), epoch 0; no block at hand:
 * COORDINATOR_LOAD_IN_PROGRESS (retriable; Kafka's RPCProducerIdManager).
 * A transactional id is refused (transactions are not supported). Without
 * one, a v3+ request naming the producer's current id and epoch (KIP-360)
 * gets a new id too: Kafka's TransactionCoordinator "blindly accepts" a
 * request without a transactional id and hands out a fresh producer id. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_ksrv_int.h"

/* ---- DeleteTopics ------------------------------------------------------------ */
typedef struct dt_topic {
	char name[HW_TOPIC_NAME_MAX];   /* "" when named by id (v6) and not known */
	int named;                      /* v6: the request gave a name */
	uint32_t id;                    /* from the request (v6) or the controller */
	int16_t err;
	char msg[HW_ERRMSG_MAX];
} dt_topic;

typedef struct dt_state {
	int n;
	dt_topic *t;
} dt_state;

static void dt_state_free(void *p)
{
	dt_state *st = p;
	free(st->t);
	free(st);
}

static void dt_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	dt_state *st = r->state;
	if (m->type != HW_MSG_DELETE_TOPIC_RESP || !m->u.other)
		return;
	const hw_delete_topic_resp *q = m->u.other;
	dt_topic *t = &st->t[idx];
	t->err = q->error;
	if (q->error == HW_ERR_NONE) {
		t->id = q->topic_id;
		if (!t->name[0])
			snprintf(t->name, sizeof(t->name), "%s", q->name);
	} else if (q->error == HW_ERR_TOPIC_DELETION_DISABLED && r->hdr.api_version < 3) {
		t->err = HW_ERR_INVALID_REQUEST; /* Kafka: v0-v2 have no TOPIC_DELETION_DISABLED */
	}
	snprintf(t->msg, sizeof(t->msg), "%s", q->error_message);
}

static void dt_fail(hw_kreq *r, int idx, int16_t err)
{
	dt_state *st = r->state;
	st->t[idx].err = err;
	snprintf(st->t[idx].msg, sizeof(st->t[idx].msg), "the controller did not answer");
}

static void dt_finish(hw_kreq *r)
{
	dt_state *st = r->state;
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	if (v >= 1)
		hw_kw_i32(w, 0); /* throttle_time_ms */
	hw_kw_array_v(w, fx, st->n);
	for (int i = 0; i < st->n; i++) {
		const dt_topic *t = &st->t[i];
		if (v >= 6) {
			hw_kw_nstrz_v(w, fx, t->name[0] ? t->name : NULL);
			uint8_t u[16] = { 0 }; /* Kafka's ZERO_UUID: unknown */
			if (t->id)
				hw_kafka_topic_uuid(t->id, u);
			hw_kw_uuid(w, u);
		} else {
			hw_kw_strz_v(w, fx, t->name);
		}
		hw_kw_i16(w, t->err);
		ksrv_err(r, t->err);
		if (v >= 5)
			hw_kw_nstrz_v(w, fx, t->err && t->msg[0] ? t->msg : NULL);
		hw_kw_tags_v(w, fx);
	}
	hw_kw_tags_v(w, fx);
}

/* Topic i of the request: its name (or id, v6) into t. */
static void dt_read_topic(hw_kr *rd, int16_t v, bool fx, dt_topic *t)
{
	hw_kstr name = v >= 6 ? hw_kr_nstr_v(rd, fx) : hw_kr_str_v(rd, fx);
	if (v >= 6) {
		uint8_t u[16];
		hw_kr_uuid(rd, u);
		hw_kr_tags_v(rd, fx);
		if (name.len < 0) { /* by id */
			if (hw_kafka_topic_uuid_id(u, &t->id) < 0 || !t->id)
				t->err = HW_ERR_UNKNOWN_TOPIC_ID;
			return;
		}
	}
	t->named = 1;
	t->err = ksrv_topic_name(name, t->name);
	if (t->err && name.len > 0)
		snprintf(t->name, sizeof(t->name), "%.*s", name.len < HW_TOPIC_NAME_MAX - 1 ? (int)name.len : HW_TOPIC_NAME_MAX - 1,
			 name.p);
	if (t->err)
		t->err = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION; /* no such topic can exist */
}

int hw_kapi_delete_topics(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	int32_t n = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	dt_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r->state = st;
	r->free_state = dt_state_free;
	st->n = n > 0 ? n : 0;
	st->t = calloc(st->n ? (size_t)st->n : 1, sizeof(*st->t));
	if (!st->t)
		return -ENOMEM;
	for (int i = 0; i < st->n && !rd->err; i++)
		dt_read_topic(rd, v, fx, &st->t[i]);
	int32_t timeout = hw_kr_i32(rd);
	hw_kr_tags_v(rd, fx);
	if (rd->err)
		return rd->err;
	/* Kafka's ControllerApis: a name (or id) given twice fails all its copies */
	for (int i = 0; i < st->n; i++)
		for (int j = i + 1; j < st->n; j++) {
			dt_topic *a = &st->t[i], *b = &st->t[j];
			int same = a->named && b->named ? !strcmp(a->name, b->name) :
				   !a->named && !b->named && a->id && a->id == b->id;
			if (same) {
				a->err = b->err = HW_ERR_INVALID_REQUEST;
				snprintf(a->msg, sizeof(a->msg), "Duplicate topic %s.", a->named ? "name" : "id");
				memcpy(b->msg, a->msg, sizeof(b->msg));
			}
		}
	for (int i = 0; i < st->n; i++) {
		dt_topic *t = &st->t[i];
		if (t->err)
			continue;
		hw_delete_topic_req q = { .timeout_ms = timeout, .topic_id = t->named ? 0 : t->id };
		if (t->named)
			snprintf(q.name, sizeof(q.name), "%s", t->name);
		hw_msg m = { .type = HW_MSG_DELETE_TOPIC, .src = s->cfg.node_id };
		m.u.other = &q;
		if (ksrv_submit(s, r, &m, i, 1, true, dt_answer, dt_fail) < 0)
			t->err = HW_ERR_NOT_CONTROLLER;
	}
	r->finish = dt_finish;
	return 0;
}

/* ---- InitProducerId --------------------------------------------------------- */
int hw_kapi_init_producer_id(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	hw_kstr txn = hw_kr_nstr_v(rd, fx);
	(void)hw_kr_i32(rd); /* transaction_timeout_ms */
	if (v >= 3) {
		(void)hw_kr_i64(rd); /* producer_id, KIP-360: not needed without transactions */
		(void)hw_kr_i16(rd); /* producer_epoch */
	}
	hw_kr_tags_v(rd, fx);
	if (rd->err)
		return rd->err;
	hw_kw *w = &r->body;
	int16_t err = HW_ERR_NONE;
	int64_t pid = -1;
	if (txn.len >= 0) {
		err = HW_KERR_TRANSACTIONAL_ID_AUTH; /* transactions are not supported */
	} else {
		pid = s->ops.alloc_producer_id(s->ctx);
		if (pid < 0) {
			/* no block from the controller yet: retriable, as Kafka */
			err = HW_ERR_COORDINATOR_LOAD_IN_PROGRESS;
			pid = -1;
		}
	}
	hw_kw_i32(w, 0);
	hw_kw_i16(w, err);
	ksrv_err(r, err);
	hw_kw_i64(w, pid);
	hw_kw_i16(w, pid >= 0 ? 0 : -1);
	hw_kw_tags_v(w, fx);
	return 0;
}
