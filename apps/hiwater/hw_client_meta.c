/* hw_client_meta.c — a CLI process's metadata: following the active
 * controller (ZooKeeper mode), hw_client_call, the topic in use. The
 * endpoints and the node table are in hw_client.c; see hw_client.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_client_int.h"

/* ---- following the active controller (ZooKeeper mode, docs/controller-ha.md)
 * The controller we know may be dead or a standby now: any other node we
 * know (brokers follow the active controller; a standby names it in its
 * NOT_CONTROLLER answer) tells us which one is active. */
typedef struct find_ctx {
	hw_client *cl;
	int32_t controller;
} find_ctx;

static void on_find_metadata(void *arg, const hw_msg *m)
{
	find_ctx *x = arg;
	const hw_metadata_resp *r = m->u.other;
	for (int i = 0; i < r->n_brokers; i++)
		hwc_node_update(x->cl, &r->brokers[i]);
	x->controller = r->controller_id;
}

/* Ask the known nodes but `avoid` for the active controller; 0 when one
 * other than `avoid` was named (cl->controller_id set), else -EHOSTUNREACH. */
static int find_controller_locked(hw_client *cl, int32_t avoid)
{
	hw_topic_name t;
	memset(&t, 0, sizeof(t));
	snprintf(t.s, sizeof(t.s), "__hiwater_brokers");
	int32_t ids[HW_CLIENT_MAX_NODES];
	int n = 0;
	for (int i = 0; i < cl->n_nodes && n < HW_CLIENT_MAX_NODES; i++)
		if (cl->nodes[i].id != avoid && cl->nodes[i].ctl.sin_port)
			ids[n++] = cl->nodes[i].id;
	for (int i = 0; i < n; i++) {
		hw_metadata_req mr = {.n_topics = 1, .topics = &t};
		hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
		find_ctx x = {.cl = cl, .controller = -1};
		if (hwc_call_locked(cl, ids[i], &m, HW_MSG_METADATA_RESP, 400, on_find_metadata, &x) == 0 &&
		    x.controller >= 0 && x.controller != avoid &&
		    hwc_node_find(cl->nodes, cl->n_nodes, x.controller)) {
			cl->controller_id = x.controller;
			return 0;
		}
	}
	return -EHOSTUNREACH;
}

/* A request to the controller: if it does not answer within a slice,
 * find the active one and send there. Same returns as hwc_call_locked. */
static int controller_call_locked(hw_client *cl, hw_msg *req, uint16_t resp_type, int timeout_ms,
				  void (*fn)(void *arg, const hw_msg *resp), void *arg)
{
	if (cl->n_controllers > 1 && !cl->controller_checked) {
		cl->controller_checked = 1;
		(void)find_controller_locked(cl, -1);
	}
	int64_t deadline = hwc_now_ns() + (int64_t)timeout_ms * 1000000;
	for (;;) {
		int left = (int)((deadline - hwc_now_ns()) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		int slice = left > 1500 ? 1500 : left;
		int rc = hwc_call_locked(cl, cl->controller_id, req, resp_type, slice, fn, arg);
		if (rc != -ETIMEDOUT && rc != -EHOSTUNREACH)
			return rc;
		if (find_controller_locked(cl, cl->controller_id) < 0 && left <= slice)
			return rc;
	}
}

int hw_client_call(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type, int timeout_ms,
		   void (*fn)(void *arg, const hw_msg *resp), void *arg)
{
	/* producer threads may refresh metadata at the same time */
	pthread_mutex_lock(&cl->mu);
	int rc = dst == cl->controller_id && dst != HW_WIRE_DST_ANY
			 ? controller_call_locked(cl, req, resp_type, timeout_ms, fn, arg)
			 : hwc_call_locked(cl, dst, req, resp_type, timeout_ms, fn, arg);
	pthread_mutex_unlock(&cl->mu);
	return rc;
}

/* ---- topic metadata ------------------------------------------------------ */

/* Called under cl->mu (inside hw_client_call). */
static void on_metadata(void *arg, const hw_msg *m)
{
	meta_ctx *x = arg;
	const hw_metadata_resp *r = m->u.other;
	x->error = r->error;
	if (r->error == HW_ERR_NOT_CONTROLLER && r->controller_id >= 0 &&
	    hwc_node_find(x->cl->nodes, x->cl->n_nodes, r->controller_id))
		x->cl->controller_id = r->controller_id; /* a standby's redirect */
	for (int i = 0; i < r->n_brokers; i++)
		hwc_node_update(x->cl, &r->brokers[i]);
	for (int i = 0; i < r->n_topics; i++) {
		const hw_topic_meta *t = &r->topics[i];
		if (strcmp(t->name, x->name))
			continue;
		x->error = t->error;
		if (t->error != HW_ERR_NONE)
			break;
		hw_client_topic *ct = &x->cl->topic;
		snprintf(ct->name, sizeof(ct->name), "%s", t->name);
		ct->topic_id = t->topic_id;
		ct->n_parts = t->n_parts < HW_CLIENT_MAX_PARTS ? t->n_parts : HW_CLIENT_MAX_PARTS;
		x->all_leaders = 1;
		for (uint32_t p = 0; p < ct->n_parts; p++) {
			ct->leader[p] = -1;
			ct->leader_epoch[p] = -1;
		}
		for (uint32_t p = 0; p < t->n_parts; p++) {
			const hw_partition_meta *pm = &t->parts[p];
			if (pm->partition >= ct->n_parts)
				continue;
			ct->leader[pm->partition] = pm->leader;
			ct->leader_epoch[pm->partition] = pm->leader_epoch;
		}
		for (uint32_t p = 0; p < ct->n_parts; p++)
			if (ct->leader[p] < 0)
				x->all_leaders = 0;
		x->found = 1;
	}
	/* release: the topic and ports written above are visible to an
	 * endpoint that reads the new generation with acquire (hwc_ep_sync) */
	atomic_fetch_add_explicit(&x->cl->topic_gen, 1, memory_order_release);
}

int hwc_refresh_metadata(hw_client *cl, const char *name, int timeout_ms, meta_ctx *x)
{
	hw_topic_name tn;
	snprintf(tn.s, sizeof(tn.s), "%s", name);
	hw_metadata_req mr = {.n_topics = 1, .topics = &tn};
	hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
	*x = (meta_ctx){.cl = cl, .name = name, .error = HW_ERR_NONE};
	return controller_call_locked(cl, &m, HW_MSG_METADATA_RESP, timeout_ms, on_metadata, x);
}

int hw_client_use_topic(hw_client *cl, const char *name, int timeout_ms)
{
	int64_t deadline = hwc_now_ns() + (int64_t)timeout_ms * 1000000;
	for (;;) {
		meta_ctx x;
		int left = (int)((deadline - hwc_now_ns()) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		pthread_mutex_lock(&cl->mu);
		cl->last_refresh_ns = hwc_now_ns();
		int rc = hwc_refresh_metadata(cl, name, left, &x);
		pthread_mutex_unlock(&cl->mu);
		if (rc)
			return rc;
		if (x.found && x.all_leaders) {
			cl->have_topic = 1;
			return 0;
		}
		if (!x.found && x.error == HW_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
			hw_cli_err("topic '%s' does not exist", name);
			return -ENOENT;
		}
		usleep(50000); /* partitions without a leader yet: ask again */
	}
}

const hw_client_topic *hw_client_topic_info(const hw_client *cl)
{
	return &cl->topic;
}
