/* hw_ctrl_admin.c — the controller's answers to admin and broker-lifecycle
 * messages (engine/proto/hw_admin_msg.h): registration, heartbeats, topic
 * creation, metadata and describe. Each request is answered once, to m->src
 * with the request's correlation id; the response and the arrays it points
 * to live only for the send call. A request whose metadata record could not
 * be written is not answered (the sender retries). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_ctrl_int.h"
#include "hw_err.h"
#include "hw_logging.h"

uint8_t ctrl_broker_state_wire(uint8_t state)
{
	switch (state) {
	case HW_CTRL_BROKER_FENCED: return HW_BROKER_FENCED;
	case HW_CTRL_BROKER_ACTIVE: return HW_BROKER_ACTIVE;
	case HW_CTRL_BROKER_CONTROLLED_SHUTDOWN: return HW_BROKER_SHUTTING_DOWN;
	}
	return HW_BROKER_UNKNOWN;
}

static void reply(hw_ctrl *c, const hw_msg *req, uint16_t type, const void *body)
{
	hw_msg out = { .type = type, .src = c->cfg.node_id, .dst = req->src,
		       .correlation_id = req->correlation_id };
	out.u.other = body;
	if (c->net && hw_net_send(c->net, &out) < 0)
		c->counters[HW_CTRL_C_PUSH_SEND_FAILED]++;
}

/* Topic views: one hw_topic_meta per requested name (or every topic). */
typedef struct view {
	hw_topic_meta *topics;
	hw_partition_meta *parts;
	hw_config_kv *configs;
	uint16_t n_topics;
} view;

static void view_free(view *v)
{
	free(v->topics);
	free(v->parts);
	free(v->configs);
}

/* The topic's configs as DescribeConfigs lists them (source
 * DYNAMIC_TOPIC_CONFIG): the ones users set, in table order, except that
 * min.insync.replicas is always listed with the value in force (the CLI's
 * --under-min-isr-partitions reads it; the Kafka listener reports it as an
 * override only when it differs from the broker's value). A topic from
 * records older than the configs list has unclean.leader.election.enable
 * only as a field: listed when it differs from the controller's default,
 * the throttles when set. At most HW_TC_COUNT entries into kv; returns
 * how many. */
static uint16_t view_configs(const hw_ctrl *c, const hw_ctrl_topic_info *in, hw_config_kv *kv)
{
	uint16_t n = 0;
	for (int id = 0; id < HW_TC_COUNT; id++) {
		char v[HW_CONFIG_VALUE_MAX];
		if (in->tc_set & (1u << id))
			snprintf(v, sizeof(v), "%s", in->tc_value[id]);
		else if (id == HW_TC_MIN_INSYNC_REPLICAS)
			snprintf(v, sizeof(v), "%d", in->min_insync_replicas);
		else if (id == HW_TC_UNCLEAN_LEADER_ELECTION && in->unclean_leader_election != !!c->cfg.default_unclean)
			snprintf(v, sizeof(v), "%s", in->unclean_leader_election ? "true" : "false");
		else if (id == HW_TC_LEADER_THROTTLED && in->leader_throttled_replicas[0])
			snprintf(v, sizeof(v), "%s", in->leader_throttled_replicas);
		else if (id == HW_TC_FOLLOWER_THROTTLED && in->follower_throttled_replicas[0])
			snprintf(v, sizeof(v), "%s", in->follower_throttled_replicas);
		else
			continue;
		snprintf(kv[n].key, sizeof(kv[n].key), "%s", hw_tc_def_of(id)->name);
		memcpy(kv[n].value, v, sizeof(kv[n].value));
		n++;
	}
	return n;
}

static int view_build(hw_ctrl *c, uint16_t n_req, const hw_topic_name *names, view *v)
{
	memset(v, 0, sizeof(*v));
	uint16_t n = n_req ? n_req : (uint16_t)(c->n_topics > UINT16_MAX ? UINT16_MAX : c->n_topics);
	size_t n_parts = 0;
	for (uint16_t i = 0; i < n; i++) {
		const ctrl_topic *t = NULL;
		if (n_req) {
			char name[HW_TOPIC_NAME_MAX];
			snprintf(name, sizeof(name), "%.*s", (int)(sizeof(name) - 1), names[i].s);
			t = ctrl_topic_by_name(c, name);
		} else {
			t = &c->topics[i];
		}
		if (t)
			n_parts += (size_t)t->info.partitions;
	}
	v->topics = calloc(n ? n : 1, sizeof(*v->topics));
	v->parts = calloc(n_parts ? n_parts : 1, sizeof(*v->parts));
	v->configs = calloc(n ? (size_t)n * HW_TC_COUNT : 1, sizeof(*v->configs));
	if (!v->topics || !v->parts || !v->configs) {
		view_free(v);
		return -ENOMEM;
	}
	size_t pi_all = 0;
	for (uint16_t i = 0; i < n; i++) {
		hw_topic_meta *tm = &v->topics[i];
		const ctrl_topic *t;
		if (n_req) {
			snprintf(tm->name, sizeof(tm->name), "%.*s", (int)(sizeof(tm->name) - 1), names[i].s);
			t = ctrl_topic_by_name(c, tm->name);
		} else {
			t = &c->topics[i];
			memcpy(tm->name, t->info.name, sizeof(tm->name));
		}
		if (!t) {
			tm->error = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
			continue;
		}
		tm->topic_id = t->info.id;
		tm->n_parts = (uint32_t)t->info.partitions;
		tm->parts = &v->parts[pi_all];
		for (int p = 0; p < t->info.partitions; p++) {
			const ctrl_part *cp = &t->parts[p];
			hw_partition_meta *pm = &v->parts[pi_all++];
			pm->partition = (uint32_t)p;
			pm->error = cp->leader < 0 ? HW_ERR_LEADER_NOT_AVAILABLE : HW_ERR_NONE;
			pm->leader = cp->leader;
			pm->leader_epoch = cp->leader_epoch;
			pm->partition_epoch = cp->partition_epoch;
			pm->leader_recovery_state = cp->lrs;
			pm->replicas = cp->replicas;
			pm->isr = cp->isr;
			pm->elr = cp->elr;
			pm->last_known_elr = cp->lke;
			pm->high_watermark = -1;
			pm->log_end_offset = -1;
			pm->log_start_offset = -1;
		}
		hw_config_kv *kv = &v->configs[(size_t)i * HW_TC_COUNT];
		tm->configs = kv;
		tm->n_configs = view_configs(c, &t->info, kv);
	}
	v->n_topics = n;
	return 0;
}

static int on_metadata(hw_ctrl *c, const hw_msg *m)
{
	const hw_metadata_req *req = m->u.other;
	if (req->n_topics && !req->topics) {
		c->counters[HW_CTRL_C_MESSAGES_IGNORED]++;
		return 0;
	}
	view v;
	int rc = view_build(c, req->n_topics, req->topics, &v);
	if (rc < 0)
		return rc;
	hw_broker_info brokers[HW_CTRL_MAX_BROKERS];
	memset(brokers, 0, sizeof(brokers));
	for (int i = 0; i < c->n_brokers; i++) {
		const ctrl_broker *b = &c->brokers[i];
		brokers[i].id = b->id;
		brokers[i].broker_epoch = b->epoch;
		brokers[i].state = ctrl_broker_state_wire(b->state);
		memcpy(brokers[i].control_ep, b->control_ep, sizeof(brokers[i].control_ep));
		memcpy(brokers[i].data_ep, b->data_ep, sizeof(brokers[i].data_ep));
		brokers[i].n_listeners = b->n_listeners;
		memcpy(brokers[i].listeners, b->listeners, sizeof(brokers[i].listeners));
		memcpy(brokers[i].rack, b->rack, sizeof(brokers[i].rack));
	}
	hw_metadata_resp resp = { .error = HW_ERR_NONE, .controller_id = c->cfg.node_id,
				  .metadata_offset = (int64_t)c->records,
				  .n_brokers = (uint16_t)c->n_brokers, .brokers = brokers,
				  .n_topics = v.n_topics, .topics = v.topics,
				  .controller_epoch = c->cfg.controller_epoch };
	reply(c, m, HW_MSG_METADATA_RESP, &resp);
	view_free(&v);
	return 0;
}

static int on_describe(hw_ctrl *c, const hw_msg *m)
{
	const hw_describe_topic_req *req = m->u.other;
	if (req->n_topics && !req->topics) {
		c->counters[HW_CTRL_C_MESSAGES_IGNORED]++;
		return 0;
	}
	view v;
	int rc = view_build(c, req->n_topics, req->topics, &v);
	if (rc < 0)
		return rc;
	hw_describe_topic_resp resp = { .error = HW_ERR_NONE, .responder_id = c->cfg.node_id,
					.n_topics = v.n_topics, .topics = v.topics };
	reply(c, m, HW_MSG_DESCRIBE_TOPIC_RESP, &resp);
	view_free(&v);
	return 0;
}

/* A metadata store that refused a write (ZooKeeper mode): answer with a
 * clear error instead of silence, nothing changed. */
static void store_refused(int rc, char *name, size_t name_cap, const char *req_name, int16_t *error,
			  char *msg, size_t msg_cap)
{
	snprintf(name, name_cap, "%s", req_name);
	if (rc == -ENOTCONN) {
		*error = HW_ERR_REQUEST_TIMED_OUT;
		snprintf(msg, msg_cap, "metadata store unavailable (no ZooKeeper connection or quorum): nothing changed");
	} else {
		*error = HW_ERR_NOT_CONTROLLER;
		snprintf(msg, msg_cap, "this controller was fenced (newer controller epoch): retry");
	}
}

int ctrl_on_admin_msg(hw_ctrl *c, const hw_msg *m)
{
	int rc;
	switch (m->type) {
	case HW_MSG_BROKER_REGISTER: {
		hw_broker_heartbeat_resp resp;
		rc = hw_ctrl_register(c, m->u.other, &resp);
		resp.controller_epoch = c->cfg.controller_epoch;
		resp.active_controller_id = -1;
		if (rc == 0)
			reply(c, m, HW_MSG_BROKER_HEARTBEAT_RESP, &resp);
		return rc;
	}
	case HW_MSG_BROKER_HEARTBEAT: {
		hw_broker_heartbeat_resp resp;
		rc = hw_ctrl_heartbeat(c, m->u.other, &resp);
		resp.controller_epoch = c->cfg.controller_epoch;
		resp.active_controller_id = -1;
		if (rc == 0)
			reply(c, m, HW_MSG_BROKER_HEARTBEAT_RESP, &resp);
		return rc;
	}
	case HW_MSG_CREATE_TOPIC: {
		const hw_create_topic_req *req = m->u.other;
		hw_create_topic_resp resp;
		if (req->n_configs && !req->configs) {
			c->counters[HW_CTRL_C_MESSAGES_IGNORED]++;
			return 0;
		}
		rc = hw_ctrl_create_topic(c, req, &resp);
		if (rc == -ENOTCONN || rc == -ESTALE) {
			/* ZooKeeper mode: no quorum, or no longer the active controller */
			store_refused(rc, resp.name, sizeof resp.name, req->name, &resp.error, resp.error_message,
				      sizeof resp.error_message);
			resp.topic_id = 0;
		} else if (rc < 0 && rc != -ENOMEM) {
			/* the metadata log refused the record: say so, never silence */
			resp.error = HW_ERR_KAFKA_STORAGE_ERROR;
			resp.topic_id = 0;
			snprintf(resp.error_message, sizeof resp.error_message,
				 "metadata log: %s (the controller retries with backoff)",
				 strerror(rc == -EAGAIN ? EIO : -rc));
		}
		if (rc == 0 || rc == -ENOTCONN || rc == -ESTALE || resp.error == HW_ERR_KAFKA_STORAGE_ERROR)
			reply(c, m, HW_MSG_CREATE_TOPIC_RESP, &resp);
		return rc;
	}
	case HW_MSG_ALTER_CONFIG: {
		/* one change for the whole request, validated first (Kafka's
		 * AlterConfigs / IncrementalAlterConfigs are per resource) */
		const hw_alter_config_req *req = m->u.other;
		hw_alter_config_resp resp;
		if (req->n_configs == 0 && req->n_deletes == 0 && !req->replace) {
			memset(&resp, 0, sizeof resp);
			snprintf(resp.name, sizeof resp.name, "%s", req->name);
			resp.error = HW_ERR_INVALID_REQUEST;
			snprintf(resp.error_message, sizeof resp.error_message, "no config entries");
			reply(c, m, HW_MSG_ALTER_CONFIG_RESP, &resp);
			return 0;
		}
		rc = hw_ctrl_alter_configs(c, req, &resp);
		if (rc == -ENOTCONN || rc == -ESTALE) {
			store_refused(rc, resp.name, sizeof resp.name, req->name, &resp.error, resp.error_message,
				      sizeof resp.error_message);
		} else if (rc < 0 && rc != -ENOMEM) {
			/* the metadata log refused the record: answer, never silence */
			resp.error = HW_ERR_KAFKA_STORAGE_ERROR;
			snprintf(resp.error_message, sizeof resp.error_message, "metadata log: %s",
				 strerror(rc == -EAGAIN ? EIO : -rc));
		} else if (rc < 0) {
			return rc;
		}
		reply(c, m, HW_MSG_ALTER_CONFIG_RESP, &resp);
		return rc;
	}
	case HW_MSG_METADATA:
		return on_metadata(c, m);
	case HW_MSG_DESCRIBE_TOPIC:
		return on_describe(c, m);
	}
	c->counters[HW_CTRL_C_MESSAGES_IGNORED]++;
	return 0;
}
