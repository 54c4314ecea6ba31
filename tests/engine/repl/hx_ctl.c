/* hx_ctl.c — the real controller (engine/controller) inside the harness,
 * and the broker side of registration and heartbeats.
 *
 * The controller runs unchanged, as TigerBeetle's simulator runs its real
 * replica: only its I/O is simulated — the clock is the harness's virtual
 * clock, its net sends into the simulated network (node HX_CTL, so cuts,
 * loss, delay and duplication apply to it too), and its metadata store
 * (hw_ctrl_store.h, as ZooKeeper mode uses) keeps the records in memory, so
 * hx_ctl_restart can stop the controller and start it again over them. Each
 * broker runs the daemon's own broker role (engine/broker: BROKER_REGISTER
 * until answered, then BROKER_HEARTBEAT every broker.heartbeat.interval.ms,
 * controlled shutdown) over the simulated network, so fencing after a missed session,
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
#define HX_SHUTDOWN_TIMEOUT_MS 30000 /* hiwater.controlled.shutdown.timeout.ms */

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

/* ---- the broker side: engine/broker ------------------------------------- */

static int fill_register(void *ctx, hw_broker_register_req *r)
{
	hx_agent *a = ctx;
	snprintf(r->control_ep, sizeof(r->control_ep), "hx:%d", a->node);
	snprintf(r->data_ep, sizeof(r->data_ep), "hx:%d", a->node);
	return 0;
}

static void registered(void *ctx, int64_t epoch)
{
	hx_agent *a = ctx;
	hw_rm_set_broker_epoch(a->h->nodes[a->node].rm, epoch);
}

/* The node's clean-shutdown file, in memory (one log dir, "hx"). */
static int cf_read(void *ctx, const char *path, char *buf, size_t cap)
{
	hx_agent *a = ctx;
	(void)path;
	if (!a->clean_file[0])
		return -ENOENT;
	snprintf(buf, cap, "%s", a->clean_file);
	return (int)strlen(buf);
}

static int cf_replace(void *ctx, const char *path, const void *buf, size_t n)
{
	hx_agent *a = ctx;
	(void)path;
	HW_ASSERT(n < sizeof(a->clean_file));
	memcpy(a->clean_file, buf, n);
	a->clean_file[n] = 0;
	return 0;
}

static int cf_remove(void *ctx, const char *path)
{
	hx_agent *a = ctx;
	(void)path;
	a->clean_file[0] = 0;
	return 0;
}

static hw_broker_fs agent_fs(hx_agent *a)
{
	return (hw_broker_fs){ .read = cf_read, .replace = cf_replace, .remove = cf_remove, .ctx = a };
}

static void state_changed(void *ctx, hw_broker_role_state from, hw_broker_role_state to, const char *why)
{
	hx_agent *a = ctx;
	(void)from;
	(void)why;
	if (to != HW_BROLE_STOPPED)
		return;
	/* the process flushed its logs, recorded its epoch in the
	 * clean-shutdown file (as the daemon's hwd_broker_fini) and exited:
	 * it restarts at the next step (or when resumed) */
	hw_broker_fs fs = agent_fs(a);
	if (hw_broker_epoch(a->b) >= 0)
		HW_ASSERT(hw_broker_record_clean_shutdown(&fs, "hx", hw_broker_epoch(a->b)) == 0);
	a->restart_pending = 1;
	if (a->stay_down)
		a->h->nodes[a->node].paused = 1;
}

static const hw_broker_ops agent_ops = { .fill_register = fill_register, .registered = registered,
					 .state_changed = state_changed };

/* A process start: a new broker role, registering with the epoch its
 * clean-shutdown file holds (taken: none after a crash that follows). */
static void agent_start(hx *h, int node)
{
	hx_agent *a = &h->agents[node];
	hw_broker_destroy(a->b);
	a->h = h;
	a->node = node;
	a->restart_pending = a->stay_down = 0;
	hw_broker_fs fs = agent_fs(a);
	hw_broker_config c = { .node_id = node, .controller_id = HX_CTL, .heartbeat_interval_ms = hb_ms(h),
			       .controlled_shutdown_enable = 1,
			       .controlled_shutdown_timeout_ms = HX_SHUTDOWN_TIMEOUT_MS, .n_log_dirs = 1,
			       .incarnation = ((uint64_t)node << 32) | (uint64_t)++a->restarts,
			       .previous_epoch = hw_broker_take_clean_shutdown(&fs, "hx"), .ops = &agent_ops,
			       .ctx = a };
	HW_ASSERT(hw_broker_create(&c, &h->clock, &h->nodes[node].net, &a->b) == 0);
	hw_broker_start(a->b);
}

/* Timers of node's broker role. > 0 if it sent something. */
static int agent_step(hx *h, int node)
{
	hx_agent *a = &h->agents[node];
	if (h->nodes[node].paused)
		return 0; /* a stopped process sends nothing */
	if (a->restart_pending) {
		/* controlled shutdown done: the process restarts and registers
		 * with the epoch it wrote to its clean-shutdown file */
		a->silent = 0;
		hx_rm_recreate(h, node);
		agent_start(h, node);
		return 1;
	}
	if (a->silent)
		return 0;
	return hw_broker_tick(a->b);
}

int hx_agent_on_msg(hx *h, int node, const hw_msg *m)
{
	return hw_broker_on_msg(h->agents[node].b, m);
}

void hx_agent_crashed(hx *h, int node)
{
	agent_start(h, node); /* no clean-shutdown file: taken at the last start */
}

static void agents_fini(hx *h)
{
	for (int i = 1; i <= h->o.nodes; i++) {
		hw_broker_destroy(h->agents[i].b);
		h->agents[i].b = NULL;
	}
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
	for (int i = 1; i <= h->o.nodes; i++)
		hx_agent_crashed(h, i);
	hx_run_until(h, 0);
	for (int i = 1; i <= h->o.nodes; i++) {
		hw_ctrl_broker_info b;
		HW_ASSERT(hw_ctrl_broker_get(h->ctl, i, &b) == 0 && b.state == HW_CTRL_BROKER_ACTIVE);
	}
}

void hx_ctl_fini(hx *h)
{
	agents_fini(h);
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
		int64_t d = hw_broker_deadline(a->b);
		int64_t n = a->restart_pending ? h->now : d == INT64_MAX ? INT64_MAX : (d + 999999) / 1000000;
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
	/* an explicit assignment: partitions and RF come from it (-1) */
	hw_create_topic_req q = { .partitions = -1, .replication_factor = -1, .n_configs = 1,
				  .configs = &kv, .n_assignments = 1, .assignments = &as };
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
	int64_t epoch = hw_broker_epoch(h->agents[node].b);
	HW_ASSERT(epoch >= 0);
	hw_broker_heartbeat_req r = { .broker_id = node, .broker_epoch = epoch, .metadata_offset = -1,
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
}

void hx_ctl_shutdown(hx *h, int node, int stay_down)
{
	hx_agent *a = &h->agents[node];
	hw_broker_role_state st = hw_broker_get_state(a->b);
	if (st != HW_BROLE_RUNNING && st != HW_BROLE_FENCED)
		return;
	a->stay_down = stay_down;
	hw_broker_begin_shutdown(a->b);
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

int hx_ctl_delete(hx *h, int part)
{
	hw_delete_topic_req q = { .timeout_ms = 1000 };
	snprintf(q.name, sizeof(q.name), "t%d", part);
	hw_delete_topic_resp r;
	HW_ASSERT(hw_ctrl_delete_topic(h->ctl, &q, &r) == 0);
	if (r.error == HW_ERR_NONE)
		h->cp[part].exists = 0; /* may be created again (a new topic id) */
	return r.error;
}

int hx_ctl_set_config(hx *h, int part, const char *key, const char *value)
{
	char name[HW_CTRL_TOPIC_NAME];
	int16_t err;
	snprintf(name, sizeof(name), "t%d", part);
	HW_ASSERT(hw_ctrl_alter_config(h->ctl, name, key, value, &err) == 0);
	return err;
}
