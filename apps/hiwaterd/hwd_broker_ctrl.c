/* hwd_broker_ctrl.c — which controller a broker talks to, and fencing of
 * a stale one (ZooKeeper mode, docs/controller-ha.md).
 *
 * Design note. With several voters in controller.quorum.voters the broker
 * talks to one at a time (cfg->controller_id). It moves to another when
 *   - a push (PARTITION_STATE) arrives with a controller epoch higher than
 *     any seen: its sender is the new active controller;
 *   - a standby answers NOT_CONTROLLER naming the active one (redirect);
 *   - the current one has not answered a registration or heartbeat for 3
 *     heartbeat intervals (at least 1.5 s): the next voter in order (which
 *     redirects if it is a standby).
 * Heartbeat answers carrying a controller epoch lower than the highest seen
 * are dropped and counted, as the replica manager drops such pushes and
 * AlterPartition answers (hw_rm.h, controller fencing). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hwd_node.h"
#include "hwd_shard.h"

static int64_t silence_ns(const hwd_node *n)
{
	int64_t s = (int64_t)n->cfg->heartbeat_interval_ms * 3 * 1000000;
	return s < 1500000000LL ? 1500000000LL : s;
}

static int voter_index(const hwd_node *n, int32_t id)
{
	for (int i = 0; i < n->cfg->n_voters; i++)
		if (n->cfg->voters[i].node == id)
			return i;
	return -1;
}

/* Talk to voter `id` from now on. 0, or -ENOENT (not a voter). */
static int use_controller(hwd_node *n, int32_t id, const char *why)
{
	int i = voter_index(n, id);
	if (i < 0)
		return -ENOENT;
	hwd_config *c = n->cfg;
	if (c->controller_id == id)
		return 0;
	HW_LOG(INFO, "broker", "broker %d: controller %d -> %d (%s)", c->node_id, c->controller_id, id, why);
	c->controller_id = id;
	snprintf(c->controller_ep, sizeof(c->controller_ep), "%s", c->voters[i].ep);
	if (n->rm)
		hw_rm_set_controller(n->rm, id);
	n->controller_switches++;
	n->last_ctrl_answer_ns = hw_clock_ns(n->clock);
	n->next_send_ns = n->last_ctrl_answer_ns; /* register/heartbeat there now */
	n->next_heartbeat_ns = n->last_ctrl_answer_ns;
	return 0;
}

int hwd_broker_ctrl_on_heartbeat_resp(hwd_node *n, const hw_msg *m)
{
	const hw_broker_heartbeat_resp *r = m->u.other;
	if (r->controller_epoch > 0 && r->controller_epoch < n->controller_epoch) {
		n->stale_controller_heartbeat_resps++;
		return 0;
	}
	n->last_ctrl_answer_ns = hw_clock_ns(n->clock);
	if (r->error == HW_ERR_NOT_CONTROLLER) {
		n->not_controller_redirects++;
		if (r->active_controller_id < 0 || use_controller(n, r->active_controller_id, "NOT_CONTROLLER redirect"))
			HW_LOG(DEBUG, "broker", "controller %d is a standby and knows no active controller yet",
			       m->src);
		return 0;
	}
	if (r->controller_epoch > n->controller_epoch)
		n->controller_epoch = r->controller_epoch;
	return 1;
}

void hwd_broker_ctrl_on_push(hwd_node *n, const hw_msg *m)
{
	int32_t e = m->u.pstate.controller_epoch;
	if (e <= n->controller_epoch)
		return;
	n->controller_epoch = e;
	if (m->src != n->cfg->controller_id)
		(void)use_controller(n, m->src, "a push with a higher controller epoch");
}

void hwd_broker_ctrl_tick(hwd_node *n, int64_t now)
{
	if (n->cfg->n_voters < 2)
		return;
	if (!n->last_ctrl_answer_ns)
		n->last_ctrl_answer_ns = now;
	if (now - n->last_ctrl_answer_ns < silence_ns(n))
		return;
	int i = voter_index(n, n->cfg->controller_id);
	int32_t next = n->cfg->voters[(i + 1) % n->cfg->n_voters].node;
	(void)use_controller(n, next, "the controller is silent");
}
