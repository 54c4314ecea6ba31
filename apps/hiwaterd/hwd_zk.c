/* hwd_zk.c — the controller role in ZooKeeper mode (zookeeper.connect):
 * one hw_zk session per controller process; the hw_ctrl exists only while
 * this process is the active controller (docs/controller-ha.md).
 *
 * Design note. The ZooKeeper client's threads post events to an eventfd
 * the reactor waits on; the "zookeeper" poller (reactor thread) runs the
 * election and acts on its outcome: BECOME_ACTIVE creates the controller
 * from the znodes with the new controller epoch and re-pushes every
 * partition state (brokers learn the new controller and its epoch from
 * those pushes); STEP_DOWN destroys it at once (a write failed on a znode
 * version, the session expired, or /controller is no longer ours). While
 * standing by, controller-bound requests are answered NOT_CONTROLLER with
 * the active controller's id (the broker's redirect), nothing else. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hw_ctrl_zk.h"
#include "hw_err.h"
#include "hw_logging.h"
#include "hwd_node.h"
#include "hwd_shard.h"

static void become_active(hwd_node *n)
{
	hwd_config *cfg = n->cfg;
	cfg->ctrl.store = hw_zk_store(n->zk);
	cfg->ctrl.controller_epoch = hw_zk_epoch(n->zk);
	int rc = hw_ctrl_create(&cfg->ctrl, n->clock, hw_udp_net(n->ctl), &n->ctrl);
	cfg->ctrl.store = NULL;
	if (rc < 0) {
		HW_LOG(ERROR, "hiwaterd", "controller %d: loading the metadata from ZooKeeper failed: %s; resigning",
		       cfg->node_id, strerror(-rc));
		hw_zk_resign(n->zk, "metadata load failed");
		n->ctrl = NULL;
		return;
	}
	n->ctrl_became_active_ns = hw_clock_ns(n->clock);
	/* routes to the registered brokers (we may never have heard from
	 * them), then every partition state: the pushes carry our epoch */
	for (int i = 0; i < hw_ctrl_broker_count(n->ctrl); i++) {
		hw_ctrl_broker_info b;
		if (hw_ctrl_broker_at(n->ctrl, i, &b) == 0 && b.control_ep[0] && b.id != cfg->node_id &&
		    hw_udp_add_neighbour(n->ctl, b.id, b.control_ep) < 0)
			HW_LOG(WARN, "hiwaterd", "no route to broker %d (%s)", b.id, b.control_ep);
	}
	hw_ctrl_push_all(n->ctrl);
	HW_LOG(INFO, "hiwaterd", "controller %d active (controller epoch %d): %d brokers, %d topics loaded",
	       cfg->node_id, hw_ctrl_epoch(n->ctrl), hw_ctrl_broker_count(n->ctrl), hw_ctrl_topic_count(n->ctrl));
}

static int poll_zk(void *arg)
{
	hwd_node *n = arg;
	hw_zk_action a = hw_zk_poll(n->zk);
	switch (a) {
	case HW_ZK_ACT_BECOME_ACTIVE:
		if (!n->ctrl)
			become_active(n);
		return 1;
	case HW_ZK_ACT_STEP_DOWN:
		hw_ctrl_destroy(n->ctrl);
		n->ctrl = NULL;
		return 1;
	default:
		return 0;
	}
}

static int64_t deadline_zk(void *arg) { return hw_zk_next_deadline_ns(((hwd_node *)arg)->zk); }

int hwd_zk_init(hwd_node *n)
{
	hwd_config *cfg = n->cfg;
	hw_zk_cfg zc = { .connect = cfg->zk_connect, .session_timeout_ms = cfg->zk_session_timeout_ms,
			 .connection_timeout_ms = cfg->zk_connection_timeout_ms, .node_id = cfg->node_id,
			 .control_ep = cfg->controller_ep };
	int rc = hw_zk_create(&zc, &n->zk);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: %s: bad value for key 'zookeeper.connect': %s\n", cfg->path,
			strerror(-rc));
		return rc;
	}
	rc = hw_reactor_add_poller(n->shards[0].reactor, "zookeeper", poll_zk, deadline_zk, n);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->shards[0].reactor, hw_zk_wait_fd(n->zk), 0, NULL, NULL, NULL);
	return rc;
}

void hwd_zk_fini(hwd_node *n)
{
	/* the controller first (it writes nothing on destroy), then the
	 * session: deleting /controller lets a standby take over at once */
	hw_ctrl_destroy(n->ctrl);
	n->ctrl = NULL;
	hw_zk_destroy(n->zk);
	n->zk = NULL;
}

static void reply(hwd_node *n, const hw_msg *req, uint16_t type, const void *body)
{
	hw_msg out = { .type = type, .src = n->cfg->node_id, .dst = req->src,
		       .correlation_id = req->correlation_id };
	out.u.other = body;
	if (hw_net_send(hw_udp_net(n->ctl), &out) < 0)
		HW_LOG(DEBUG, "hiwaterd", "NOT_CONTROLLER answer to %d failed", req->src);
}

/* The error message of a standby's NOT_CONTROLLER: where to go, or that
 * no controller is known to be active yet (none elected, or /controller
 * not read yet): then a retry later finds one. */
static void standby_message(const hwd_node *n, int32_t active, const char *ep, char *buf, size_t cap)
{
	if (active < 0)
		snprintf(buf, cap, "controller %d is a standby and knows of no active controller yet (an election may "
			 "be under way): retry", n->cfg->node_id);
	else if (ep[0])
		snprintf(buf, cap, "controller %d is a standby; the active controller is %d (%.40s)", n->cfg->node_id,
			 active, ep);
	else
		snprintf(buf, cap, "controller %d is a standby; the active controller is %d", n->cfg->node_id, active);
}

int hwd_zk_standby_answer(hwd_node *n, const hw_msg *m)
{
	char ep[128] = "";
	int32_t active = hw_zk_active_id(n->zk, ep, sizeof(ep));
	n->standby_not_controller++;
	switch (m->type) {
	case HW_MSG_BROKER_REGISTER:
	case HW_MSG_BROKER_HEARTBEAT: {
		hw_broker_heartbeat_resp r;
		memset(&r, 0, sizeof(r));
		r.error = HW_ERR_NOT_CONTROLLER;
		r.broker_epoch = -1;
		r.is_fenced = 1;
		r.controller_epoch = hw_zk_epoch(n->zk) > 0 ? hw_zk_epoch(n->zk) : 0;
		r.active_controller_id = active;
		reply(n, m, HW_MSG_BROKER_HEARTBEAT_RESP, &r);
		return 1;
	}
	case HW_MSG_CREATE_TOPIC: {
		const hw_create_topic_req *q = m->u.other;
		hw_create_topic_resp r;
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", q ? q->name : "");
		r.error = HW_ERR_NOT_CONTROLLER;
		standby_message(n, active, ep, r.error_message, sizeof(r.error_message));
		reply(n, m, HW_MSG_CREATE_TOPIC_RESP, &r);
		return 1;
	}
	case HW_MSG_DELETE_TOPIC: {
		const hw_delete_topic_req *q = m->u.other;
		hw_delete_topic_resp r;
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", q ? q->name : "");
		r.error = HW_ERR_NOT_CONTROLLER;
		standby_message(n, active, ep, r.error_message, sizeof(r.error_message));
		reply(n, m, HW_MSG_DELETE_TOPIC_RESP, &r);
		return 1;
	}
	case HW_MSG_ALLOCATE_PRODUCER_IDS: {
		hw_alloc_pids_resp r = { .error = HW_ERR_NOT_CONTROLLER, .first_id = -1, .count = 0 };
		reply(n, m, HW_MSG_ALLOCATE_PRODUCER_IDS_RESP, &r);
		return 1;
	}
	case HW_MSG_ALTER_CONFIG: {
		const hw_alter_config_req *q = m->u.other;
		hw_alter_config_resp r;
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", q ? q->name : "");
		r.error = HW_ERR_NOT_CONTROLLER;
		standby_message(n, active, ep, r.error_message, sizeof(r.error_message));
		reply(n, m, HW_MSG_ALTER_CONFIG_RESP, &r);
		return 1;
	}
	case HW_MSG_METADATA: {
		/* the active controller's control endpoint as /controller names
		 * it: a client that bootstrapped here goes there */
		hw_broker_info ab;
		memset(&ab, 0, sizeof(ab));
		ab.id = active;
		ab.broker_epoch = -1;
		ab.state = HW_BROKER_UNKNOWN;
		snprintf(ab.control_ep, sizeof(ab.control_ep), "%.*s", (int)sizeof(ab.control_ep) - 1, ep);
		hw_metadata_resp r = { .error = HW_ERR_NOT_CONTROLLER, .controller_id = active,
				       .metadata_offset = -1, .n_brokers = active >= 0 && ep[0] ? 1 : 0,
				       .brokers = &ab, .controller_epoch = hw_zk_epoch(n->zk) };
		reply(n, m, HW_MSG_METADATA_RESP, &r);
		return 1;
	}
	case HW_MSG_DESCRIBE_TOPIC: {
		hw_describe_topic_resp r = { .error = HW_ERR_NOT_CONTROLLER, .responder_id = n->cfg->node_id };
		reply(n, m, HW_MSG_DESCRIBE_TOPIC_RESP, &r);
		return 1;
	}
	}
	/* AlterPartition and acks: the sender follows the active controller */
	return 0;
}
