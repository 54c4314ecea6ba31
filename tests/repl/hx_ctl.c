/* hx_ctl.c — the real controller (engine/controller) inside the harness,
 * and the broker side of registration and heartbeats.
 *
 * The controller runs unchanged, as TigerBeetle's simulator runs its real
 * replica: only its I/O is simulated — the clock is the harness's virtual
 * clock, its net sends into the simulated network (node HX_CTL, so cuts,
 * loss, delay and duplication apply to it too), and its metadata store
 * (hw_ctrl_store.h, as ZooKeeper mode uses) keeps the records in memory, so
 * hx_ctl_restart can stop the controller and start it again over them. Brokers register
 * and heartbeat over the simulated network as the daemon's broker role does
 * (BROKER_REGISTER until answered, then BROKER_HEARTBEAT every
 * broker.heartbeat.interval.ms), so fencing after a missed session,
 * unfencing, controlled shutdown, unclean-shutdown detection at
 * re-registration, leader election, ELR and unclean election
 * (docs/replication.md) all run the controller's own code.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hw_assert.h"
#include "hw_err.h"
#include "hw_ctrl_int.h"
#include "hx_int.h"

#define HX_HB_DEFAULT_MS 2000      /* broker.heartbeat.interval.ms */
#define HX_SESSION_DEFAULT_MS 9000 /* broker.session.timeout.ms */
#define HX_RESYNC_DEFAULT_MS 500   /* controller re-push of every partition state */

static int hb_ms(hx *h) { return h->o.heartbeat_interval_ms > 0 ? h->o.heartbeat_interval_ms : HX_HB_DEFAULT_MS; }

int hx_part_of(hx *h, hw_tp tp)
{
	if (tp.partition != 0 || tp.topic_id > HX_MAX_PARTS || !h->topic_part[tp.topic_id])
		return -1;
	return h->topic_part[tp.topic_id] - 1;
}

hw_tp hx_tp_of(hx *h, int part)
{
	if (part >= 0 && part < HX_MAX_PARTS && h->cp[part].exists)
		return h->cp[part].tp;
	return (hw_tp){ 0, (uint32_t)part }; /* no such topic: the rm answers UNKNOWN */
}

/* ---- the broker side ------------------------------------------------- */

static void agent_send(hx *h, int node, uint16_t type, const void *body, uint32_t corr)
{
	hw_msg m = { .type = type, .src = node, .dst = HX_CTL, .correlation_id = corr };
	m.u.other = body;
	(void)hw_net_send(&h->nodes[node].net, &m); /* lost ones: the next interval retries */
}

static void agent_register(hx *h, int node)
{
	hx_agent *a = &h->agents[node];
	hw_broker_register_req r = { .broker_id = node, .incarnation_id = a->incarnation,
				     .previous_broker_epoch = a->previous_epoch, .metadata_offset = -1 };
	snprintf(r.control_ep, sizeof(r.control_ep), "hx:%d", node);
	snprintf(r.data_ep, sizeof(r.data_ep), "hx:%d", node);
	a->reg_corr = ++a->next_corr;
	agent_send(h, node, HW_MSG_BROKER_REGISTER, &r, a->reg_corr);
}

static void agent_heartbeat(hx *h, int node)
{
	hx_agent *a = &h->agents[node];
	hw_broker_heartbeat_req r = { .broker_id = node, .broker_epoch = a->epoch, .metadata_offset = -1,
				      .want_shutdown = (uint8_t)a->shutting };
	agent_send(h, node, HW_MSG_BROKER_HEARTBEAT, &r, ++a->next_corr);
}

/* Registration or heartbeat due: send it. 1 if sent. */
static int agent_step(hx *h, int node)
{
	hx_agent *a = &h->agents[node];
	if (h->nodes[node].paused)
		return 0; /* a stopped process sends nothing */
	if (a->restart_pending) {
		/* controlled shutdown done: the process restarts and registers
		 * with the epoch it wrote to its clean-shutdown file */
		a->restart_pending = 0;
		a->shutting = 0;
		a->stay_down = 0;
		a->previous_epoch = a->epoch;
		a->epoch = -1;
		a->incarnation = ((uint64_t)node << 32) | (uint64_t)++a->restarts;
		hx_rm_recreate(h, node);
		a->next_send = h->now;
	}
	if (a->silent || h->now < a->next_send)
		return 0;
	a->next_send = h->now + hb_ms(h);
	if (a->epoch < 0)
		agent_register(h, node);
	else
		agent_heartbeat(h, node);
	return 1;
}

int hx_agent_on_msg(hx *h, int node, const hw_msg *m)
{
	if (m->type != HW_MSG_BROKER_HEARTBEAT_RESP)
		return 0;
	hx_agent *a = &h->agents[node];
	const hw_broker_heartbeat_resp *r = m->u.other;
	if (!r)
		return 1;
	if (a->epoch < 0) {
		if (m->correlation_id != a->reg_corr || r->error != HW_ERR_NONE)
			return 1; /* late answer to an older attempt, or refused: retried */
		a->epoch = r->broker_epoch;
		hw_rm_set_broker_epoch(h->nodes[node].rm, a->epoch);
		a->next_send = h->now; /* heartbeat now: that unfences us */
		return 1;
	}
	if (r->error == HW_ERR_STALE_BROKER_EPOCH && r->broker_epoch == a->epoch) {
		/* the controller no longer knows this epoch: same process, data
		 * intact, so our epoch is the previous one */
		a->previous_epoch = a->epoch;
		a->epoch = -1;
		a->next_send = h->now;
		return 1;
	}
	if (a->shutting && r->error == HW_ERR_NONE && r->should_shut_down) {
		a->restart_pending = 1;
		if (a->stay_down)
			h->nodes[node].paused = 1; /* stopped: restarts when resumed */
	}
	return 1;
}

void hx_agent_crashed(hx *h, int node)
{
	hx_agent *a = &h->agents[node];
	a->epoch = -1;
	a->previous_epoch = -1; /* no clean-shutdown file after a crash */
	a->shutting = a->restart_pending = 0;
	a->incarnation = ((uint64_t)node << 32) | (uint64_t)++a->restarts;
	a->next_send = h->now;
}

/* ---- the controller's metadata store: records in memory ------------------ */

static int mstore_load(void *ctx, hw_ctrl_store_replay_fn fn, void *arg, uint64_t *records)
{
	hx *h = ctx;
	for (size_t i = 0; i < h->n_mrecs; i++) {
		int rc = fn(arg, h->mrecs[i].type, h->mrecs[i].payload, h->mrecs[i].len);
		if (rc)
			return rc;
	}
	*records = h->n_mrecs;
	return 0;
}

static int mstore_write(void *ctx, uint8_t type, const uint8_t *payload, size_t len, uint64_t record_no)
{
	hx *h = ctx;
	(void)record_no;
	if (h->n_mrecs == h->cap_mrecs) {
		size_t cap = h->cap_mrecs ? h->cap_mrecs * 2 : 64;
		struct hx_mrec *m = realloc(h->mrecs, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		h->mrecs = m;
		h->cap_mrecs = cap;
	}
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, payload, len);
	h->mrecs[h->n_mrecs++] = (struct hx_mrec){ .type = type, .len = len, .payload = copy };
	return 0;
}

static const hw_ctrl_store_ops mstore_ops = { .load = mstore_load, .write = mstore_write };

/* ---- the controller ---------------------------------------------------- */

void hx_ctl_restart(hx *h)
{
	hw_ctrl_destroy(h->ctl);
	h->ctl = NULL;
	/* replays the store; every registered broker gets a fresh session */
	HW_ASSERT(hw_ctrl_create(&h->ctl_cfg, &h->clock, &h->ctl_node.net, &h->ctl) == 0);
}

void hx_ctl_init(hx *h)
{
	hw_ctrl_config c;
	hw_ctrl_config_defaults(&c);
	c.node_id = HX_CTL;
	c.fsync = 0;
	c.metadata_log_path = NULL;
	h->ctl_store = (hw_ctrl_store){ .ops = &mstore_ops, .ctx = h };
	c.store = &h->ctl_store;
	c.heartbeat_interval_ms = hb_ms(h);
	c.session_timeout_ms = h->o.session_timeout_ms > 0 ? h->o.session_timeout_ms : HX_SESSION_DEFAULT_MS;
	c.resync_interval_ms = HX_RESYNC_DEFAULT_MS;
	c.elr_enabled = !h->o.elr_off;
	c.auto_leader_rebalance = h->o.rebalance_ms > 0;
	if (h->o.rebalance_ms > 0)
		c.leader_imbalance_check_interval_ms = h->o.rebalance_ms;
	h->ctl_cfg = c;
	HW_ASSERT(hw_ctrl_create(&h->ctl_cfg, &h->clock, &h->ctl_node.net, &h->ctl) == 0);
	/* the brokers start: registration and the first heartbeat (which
	 * unfences them) complete at time 0 — no faults are set yet */
	for (int i = 1; i <= h->o.nodes; i++) {
		h->agents[i].epoch = -1;
		hx_agent_crashed(h, i);
	}
	hx_run_until(h, 0);
	for (int i = 1; i <= h->o.nodes; i++) {
		hw_ctrl_broker_info b;
		HW_ASSERT(hw_ctrl_broker_get(h->ctl, i, &b) == 0 && b.state == HW_CTRL_BROKER_ACTIVE);
	}
}

void hx_ctl_fini(hx *h)
{
	hw_ctrl_destroy(h->ctl);
	h->ctl = NULL;
	for (size_t i = 0; i < h->n_mrecs; i++)
		free(h->mrecs[i].payload);
	free(h->mrecs);
}

int hx_ctl_step(hx *h)
{
	int work = 0;
	HW_ASSERT(hw_ctrl_poll(h->ctl) == 0);
	for (int i = 1; i <= h->o.nodes; i++)
		work += agent_step(h, i);
	return work;
}

int64_t hx_ctl_next_event(hx *h)
{
	int64_t t = hw_ctrl_next_deadline_ns(h->ctl);
	t = t == INT64_MAX ? INT64_MAX : t / 1000000;
	for (int i = 1; i <= h->o.nodes; i++) {
		const hx_agent *a = &h->agents[i];
		if (h->nodes[i].paused || a->silent)
			continue;
		int64_t n = a->restart_pending ? h->now : a->next_send;
		if (n < t)
			t = n;
	}
	return t;
}

void hx_ctl_on_msg(hx *h, const hw_msg *m)
{
	HW_ASSERT(hw_ctrl_on_msg(h->ctl, m) == 0); /* memory metadata log: never fails */
}

void hx_ctl_create(hx *h, int part, const int *replicas, int n, int min_isr)
{
	HW_ASSERT(part >= 0 && part < HX_MAX_PARTS && !h->cp[part].exists && n >= 1 && n <= HW_MAX_RF);
	hw_idset as = { .n = (uint8_t)n };
	for (int i = 0; i < n; i++)
		as.id[i] = replicas[i];
	hw_config_kv kv;
	memset(&kv, 0, sizeof(kv));
	snprintf(kv.key, sizeof(kv.key), "min.insync.replicas");
	snprintf(kv.value, sizeof(kv.value), "%d", min_isr);
	hw_create_topic_req q = { .partitions = 1, .replication_factor = (int16_t)n, .n_configs = 1,
				  .configs = &kv, .assignments = &as };
	snprintf(q.name, sizeof(q.name), "t%d", part);
	hw_create_topic_resp r;
	HW_ASSERT(hw_ctrl_create_topic(h->ctl, &q, &r) == 0);
	if (r.error != HW_ERR_NONE)
		fprintf(stderr, "hx_ctl_create t%d: %s: %s\n", part, hw_err_name(r.error), r.error_message);
	HW_ASSERT(r.error == HW_ERR_NONE && r.topic_id <= HX_MAX_PARTS);
	hx_cpart *c = &h->cp[part];
	c->exists = 1;
	c->tp = (hw_tp){ r.topic_id, 0 };
	h->topic_part[r.topic_id] = part + 1;
	if (part + 1 > h->nparts_hi)
		h->nparts_hi = part + 1;
}

/* The broker's heartbeat, delivered to the controller now. */
static void heartbeat_now(hx *h, int node, int want_fence)
{
	hx_agent *a = &h->agents[node];
	HW_ASSERT(a->epoch >= 0);
	hw_broker_heartbeat_req r = { .broker_id = node, .broker_epoch = a->epoch, .metadata_offset = -1,
				      .want_fence = (uint8_t)want_fence };
	hw_broker_heartbeat_resp resp;
	HW_ASSERT(hw_ctrl_heartbeat(h->ctl, &r, &resp) == 0 && resp.error == HW_ERR_NONE);
}

void hx_ctl_fence(hx *h, int node)
{
	heartbeat_now(h, node, 1);
	h->agents[node].silent = 1;
}

void hx_ctl_unfence(hx *h, int node)
{
	h->agents[node].silent = 0;
	heartbeat_now(h, node, 0);
	h->agents[node].next_send = h->now + hb_ms(h);
}

void hx_ctl_shutdown(hx *h, int node, int stay_down)
{
	hx_agent *a = &h->agents[node];
	if (a->epoch < 0 || a->shutting)
		return;
	a->shutting = 1;
	a->stay_down = stay_down;
	a->next_send = h->now;
}

int hx_ctl_broker_state(hx *h, int node)
{
	hw_ctrl_broker_info b;
	return hw_ctrl_broker_get(h->ctl, node, &b) == 0 ? b.state : HW_CTRL_BROKER_UNREGISTERED;
}

const hw_partition_state *hx_ctl_state(hx *h, int part)
{
	hx_cpart *c = &h->cp[part];
	if (!c->exists || hw_ctrl_partition(h->ctl, c->tp, &c->st) < 0)
		memset(&c->st, 0, sizeof(c->st));
	return &c->st;
}

int hx_ctl_leader(hx *h, int part) { return hx_ctl_state(h, part)->leader; }

hw_ctrl *hx_ctl(hx *h) { return h->ctl; }

int hx_incarnation(hx *h, int node) { return h->agents[node].restarts; }

void hx_set_repush_ms(hx *h, int64_t ms)
{
	/* a test-only knob on the controller's config (no setter in its API) */
	h->ctl_cfg.resync_interval_ms = ms > 0 ? (int32_t)ms : INT32_MAX;
	h->ctl->cfg.resync_interval_ms = h->ctl_cfg.resync_interval_ms;
}

/* Kafka's throttled-replicas syntax for partition 0 of the part's topic. */
static void throttle_value(const hw_idset *s, char *buf, size_t cap)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < s->n && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s0:%d", i ? "," : "", s->id[i]);
}

void hx_ctl_set_throttle(hx *h, int part, const hw_idset *leader, const hw_idset *follower)
{
	char name[HW_CTRL_TOPIC_NAME], v[HW_CONFIG_VALUE_MAX];
	int16_t err;
	snprintf(name, sizeof(name), "t%d", part);
	throttle_value(leader, v, sizeof(v));
	HW_ASSERT(hw_ctrl_alter_config(h->ctl, name, "leader.replication.throttled.replicas", v, &err) == 0 &&
		  err == HW_ERR_NONE);
	throttle_value(follower, v, sizeof(v));
	HW_ASSERT(hw_ctrl_alter_config(h->ctl, name, "follower.replication.throttled.replicas", v, &err) == 0 &&
		  err == HW_ERR_NONE);
}

int hx_ctl_set_config(hx *h, int part, const char *key, const char *value)
{
	char name[HW_CTRL_TOPIC_NAME];
	int16_t err;
	snprintf(name, sizeof(name), "t%d", part);
	HW_ASSERT(hw_ctrl_alter_config(h->ctl, name, key, value, &err) == 0);
	return err;
}
