/* hw_ksrv_config.c — the Kafka server's AlterConfigs and
 * IncrementalAlterConfigs (docs/kafka.md "Topic configuration").
 *
 * AlterConfigs v0-v2 (v2+ flexible) and IncrementalAlterConfigs v0-v1 (v1+
 * flexible): every TOPIC resource becomes one ALTER_CONFIG to the
 * controller, validated there as a whole (any key of the topic config
 * table, engine/iface/hw_topic_config.h) and answered once its record is
 * durable. AlterConfigs replaces the topic's whole set of overrides (Kafka's
 * legacy semantics: keys not named go back to the broker's value; a null
 * value is left out); IncrementalAlterConfigs SETs and DELETEs single keys
 * (APPEND / SUBTRACT: INVALID_REQUEST, not supported). validate_only is
 * passed on. BROKER and BROKER_LOGGER resources are refused with Kafka's
 * INVALID_REQUEST ("dynamic broker configs are not supported": hiwater's
 * broker configs are static, hiwaterd's config file); other resource types
 * are INVALID_REQUEST too. A resource named twice in one request is
 * INVALID_REQUEST (as Kafka). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_ksrv_int.h"

#define AC_TOPIC         2
#define AC_BROKER        4
#define AC_BROKER_LOGGER 8
#define AC_MAX_CONFIGS   64

/* IncrementalAlterConfigs config_operation */
#define AC_OP_SET      0
#define AC_OP_DELETE   1
#define AC_OP_APPEND   2
#define AC_OP_SUBTRACT 3

typedef struct ac_res {
	int8_t type;
	char name[HW_TOPIC_NAME_MAX];
	int16_t err;
	char msg[HW_ERRMSG_MAX];
} ac_res;

typedef struct ac_state {
	int n;
	ac_res *res;
} ac_state;

static void ac_state_free(void *p)
{
	ac_state *st = p;
	free(st->res);
	free(st);
}

static void ac_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	ac_state *st = r->state;
	if (m->type != HW_MSG_ALTER_CONFIG_RESP || !m->u.other)
		return;
	const hw_alter_config_resp *q = m->u.other;
	st->res[idx].err = q->error;
	snprintf(st->res[idx].msg, sizeof(st->res[idx].msg), "%s", q->error_message);
}

static void ac_fail(hw_kreq *r, int idx, int16_t err)
{
	ac_state *st = r->state;
	st->res[idx].err = err;
	snprintf(st->res[idx].msg, sizeof(st->res[idx].msg), "the controller did not answer");
}

static void ac_finish(hw_kreq *r)
{
	ac_state *st = r->state;
	hw_kw *w = &r->body;
	bool fx = r->hdr.flexible;
	hw_kw_i32(w, 0); /* throttle_time_ms */
	hw_kw_array_v(w, fx, st->n);
	for (int i = 0; i < st->n; i++) {
		const ac_res *a = &st->res[i];
		hw_kw_i16(w, a->err);
		ksrv_err(r, a->err);
		hw_kw_nstrz_v(w, fx, a->err ? (a->msg[0] ? a->msg : hw_err_name(a->err)) : NULL);
		hw_kw_i8(w, a->type);
		hw_kw_strz_v(w, fx, a->name);
		hw_kw_tags_v(w, fx);
	}
	hw_kw_tags_v(w, fx);
}

#define AC_FAIL(a, code, ...)                                            \
	do {                                                             \
		(a)->err = (code);                                       \
		snprintf((a)->msg, sizeof((a)->msg), __VA_ARGS__);       \
	} while (0)

/* One resource of the request into a, and (TOPIC) its entries into q:
 * sets into set[], deletes into del[]. Decode errors latch in rd. */
static void ac_read_resource(hw_kr *rd, bool fx, bool incremental, ac_res *a, hw_alter_config_req *q,
			     hw_config_kv *set, hw_config_kv *del)
{
	a->type = hw_kr_i8(rd);
	hw_kstr name = hw_kr_str_v(rd, fx);
	if (a->type == AC_TOPIC) {
		a->err = ksrv_topic_name(name, a->name);
		if (a->err)
			snprintf(a->msg, sizeof(a->msg), "invalid topic name");
	} else {
		snprintf(a->name, sizeof(a->name), "%.*s", name.len > 0 && name.len < HW_TOPIC_NAME_MAX ? (int)name.len : 0,
			 name.p ? name.p : "");
	}
	if (!a->err && (a->type == AC_BROKER || a->type == AC_BROKER_LOGGER))
		AC_FAIL(a, HW_ERR_INVALID_REQUEST, "dynamic broker configs are not supported: hiwater's broker "
			"configs are static (hiwaterd's config file)");
	else if (!a->err && a->type != AC_TOPIC)
		AC_FAIL(a, HW_ERR_INVALID_REQUEST, "unsupported resource type %d", a->type);
	int32_t nc = hw_kr_array_v(rd, fx);
	for (int32_t c = 0; c < nc && !rd->err; c++) {
		hw_kstr k = hw_kr_str_v(rd, fx);
		int8_t op = incremental ? hw_kr_i8(rd) : AC_OP_SET;
		hw_kstr val = hw_kr_nstr_v(rd, fx);
		hw_kr_tags_v(rd, fx);
		if (rd->err || a->err)
			continue;
		if (k.len <= 0 || k.len >= HW_CONFIG_KEY_MAX || val.len >= HW_CONFIG_VALUE_MAX) {
			AC_FAIL(a, HW_ERR_INVALID_CONFIG, "config name or value too long");
			continue;
		}
		if (op == AC_OP_APPEND || op == AC_OP_SUBTRACT) {
			AC_FAIL(a, HW_ERR_INVALID_REQUEST, "APPEND and SUBTRACT are not supported (SET the whole list)");
			continue;
		}
		if (op != AC_OP_SET && op != AC_OP_DELETE) {
			AC_FAIL(a, HW_ERR_INVALID_REQUEST, "unknown config operation %d", op);
			continue;
		}
		if (op == AC_OP_SET && val.len < 0) {
			if (incremental)
				AC_FAIL(a, HW_ERR_INVALID_REQUEST, "null value for SET");
			continue; /* AlterConfigs: a null value is no override */
		}
		if (q->n_configs + q->n_deletes >= AC_MAX_CONFIGS) {
			AC_FAIL(a, HW_ERR_INVALID_CONFIG, "more than %d config entries", AC_MAX_CONFIGS);
			continue;
		}
		hw_config_kv *e = op == AC_OP_SET ? &set[q->n_configs++] : &del[q->n_deletes++];
		hw_kstr_copy(k, e->key, sizeof(e->key));
		if (op == AC_OP_SET)
			hw_kstr_copy(val, e->value, sizeof(e->value));
	}
	hw_kr_tags_v(rd, fx);
}

/* Both APIs: resources, validate_only, tags. */
static int alter_configs(hw_ksrv *s, hw_kreq *r, hw_kr *rd, bool incremental)
{
	bool fx = r->hdr.flexible;
	int32_t n = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	ac_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r->state = st;
	r->free_state = ac_state_free;
	r->finish = ac_finish;
	st->n = n > 0 ? n : 0;
	st->res = calloc(st->n ? (size_t)st->n : 1, sizeof(*st->res));
	hw_alter_config_req *q = calloc(st->n ? (size_t)st->n : 1, sizeof(*q));
	hw_config_kv *kv = calloc((size_t)(st->n ? st->n : 1) * AC_MAX_CONFIGS * 2, sizeof(*kv));
	if (!st->res || !q || !kv) {
		free(q);
		free(kv);
		return -ENOMEM;
	}
	for (int i = 0; i < st->n && !rd->err; i++) {
		hw_config_kv *set = &kv[(size_t)i * AC_MAX_CONFIGS * 2], *del = set + AC_MAX_CONFIGS;
		q[i].configs = set;
		q[i].deletes = del;
		ac_read_resource(rd, fx, incremental, &st->res[i], &q[i], set, del);
	}
	bool validate_only = hw_kr_bool(rd);
	hw_kr_tags_v(rd, fx);
	int rc = rd->err;
	for (int i = 0; !rc && i < st->n; i++) {
		ac_res *a = &st->res[i];
		for (int j = 0; j < i && !a->err; j++)
			if (st->res[j].type == a->type && !strcmp(st->res[j].name, a->name))
				AC_FAIL(a, HW_ERR_INVALID_REQUEST, "Duplicate resource %s in the request", a->name);
		if (a->err)
			continue;
		snprintf(q[i].name, sizeof(q[i].name), "%s", a->name);
		q[i].replace = !incremental;
		q[i].validate_only = validate_only;
		if (incremental && q[i].n_configs + q[i].n_deletes == 0)
			continue; /* nothing to change: NONE, as Kafka */
		hw_msg m = { .type = HW_MSG_ALTER_CONFIG, .src = s->cfg.node_id };
		m.u.other = &q[i];
		if (ksrv_submit(s, r, &m, i, 1, true, ac_answer, ac_fail) < 0)
			AC_FAIL(a, HW_ERR_NOT_CONTROLLER, "the controller is not reachable");
	}
	free(q);
	free(kv);
	return rc;
}

int hw_kapi_alter_configs(hw_ksrv *s, hw_kreq *r, hw_kr *rd) { return alter_configs(s, r, rd, false); }

int hw_kapi_incremental_alter_configs(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	return alter_configs(s, r, rd, true);
}
