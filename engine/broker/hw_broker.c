/* hw_broker.c — the broker role's controller conversation (hw_broker.h). */
#include "hw_broker.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_logging.h"

#define REGISTER_RETRY_NS 1000000000LL
#define SHUTDOWN_HB_MAX_NS 250000000LL

struct hw_broker {
	hw_broker_config cfg;
	hw_clock *clock;
	hw_net *net;
	hw_broker_role_state state;
	int64_t epoch;              /* -1: not registered */
	int64_t previous_epoch;     /* sent with the registration */
	uint32_t reg_corr;          /* correlation id of the outstanding register */
	uint64_t corr_clock;        /* last correlation id, in clock microseconds (new_corr) */
	int64_t next_send_ns;       /* next register / heartbeat */
	int64_t shutdown_deadline_ns;
	int64_t last_ctrl_answer_ns;
	hw_broker_stats st;
	hw_tp offline[HW_MAX_OFFLINE_REPLICAS];
};

static const char *const state_names[] = {
#define N(n) #n,
	HW_BROKER_ROLE_STATES(N)
#undef N
};

const char *hw_broker_role_state_name(int s)
{
	return s >= 0 && s < HW_BROLE_STATE_COUNT ? state_names[s] : "UNKNOWN_STATE";
}

static int64_t now_ns(const hw_broker *b) { return hw_clock_ns(b->clock); }

static int64_t hb_ns(const hw_broker *b) { return (int64_t)b->cfg.heartbeat_interval_ms * 1000000; }

static void set_state(hw_broker *b, hw_broker_role_state s, const char *why)
{
	if (b->state == s)
		return;
	hw_broker_role_state from = b->state;
	HW_LOG(INFO, "broker", "broker %d: %s -> %s (%s)", b->cfg.node_id, hw_broker_role_state_name(from),
	       hw_broker_role_state_name(s), why);
	b->state = s;
	if (b->cfg.ops->state_changed)
		b->cfg.ops->state_changed(b->cfg.ctx, from, s, why);
}

int hw_broker_create(const hw_broker_config *cfg, hw_clock *clock, hw_net *net, hw_broker **out)
{
	if (!cfg || !cfg->ops || !cfg->ops->fill_register || !clock || !net || !out ||
	    cfg->heartbeat_interval_ms < 1 || cfg->n_voters < 0 || cfg->n_voters > HW_BROKER_MAX_VOTERS)
		return -EINVAL;
	hw_broker *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->cfg = *cfg;
	b->clock = clock;
	b->net = net;
	b->state = HW_BROLE_STARTING;
	b->epoch = -1;
	b->previous_epoch = cfg->previous_epoch;
	*out = b;
	return 0;
}

void hw_broker_destroy(hw_broker *b) { free(b); }

void hw_broker_start(hw_broker *b)
{
	set_state(b, HW_BROLE_REGISTERING, "start");
	b->next_send_ns = now_ns(b);
}

/* ---- sending ------------------------------------------------------------ */

/* A correlation id no earlier process of this broker used: the clock in
 * microseconds (31 bits, never 0), at least one more than the last. An
 * answer addressed to the previous process (same node id, answered after
 * a restart) then carries an id this process never sent and is ignored,
 * as the replica manager's ids (hw_rm_new_corr) do. */
static uint32_t new_corr(hw_broker *b)
{
	int64_t ns = now_ns(b);
	uint64_t us = ns > 0 ? (uint64_t)ns / 1000 : 0;
	b->corr_clock = b->corr_clock + 1 > us ? b->corr_clock + 1 : us;
	uint32_t c = (uint32_t)(b->corr_clock & 0x7FFFFFFFu);
	if (c == 0) {
		b->corr_clock++;
		c = 1;
	}
	return c;
}

static void send_ctl(hw_broker *b, uint16_t type, const void *body, uint32_t corr)
{
	hw_msg m = { .type = type, .src = b->cfg.node_id, .dst = b->cfg.controller_id, .correlation_id = corr };
	m.u.other = body;
	int rc = hw_net_send(b->net, &m);
	if (rc < 0) /* lost: the next interval retries */
		HW_LOG(DEBUG, "broker", "sending %s to the controller failed: %s", hw_msg_type_name(type),
		       strerror(-rc));
}

static void send_register(hw_broker *b)
{
	hw_broker_register_req r;
	memset(&r, 0, sizeof(r));
	if (b->cfg.ops->fill_register(b->cfg.ctx, &r) < 0)
		return; /* retried with the next registration attempt */
	r.broker_id = b->cfg.node_id;
	r.incarnation_id = b->cfg.incarnation;
	r.previous_broker_epoch = b->previous_epoch;
	r.metadata_offset = -1;
	b->reg_corr = new_corr(b);
	send_ctl(b, HW_MSG_BROKER_REGISTER, &r, b->reg_corr);
}

/* The offline-log-dir trailer (docs/logdirs.md, Kafka's JBOD handling):
 * every heartbeat lists the replicas on offline dirs, and the controller
 * moves those out of their ISRs, leadership with them; the broker keeps
 * serving its other dirs. With every dir offline (one log dir: the usual
 * case) it also asks to be fenced, so it leaves every ISR now rather than
 * after the session times out. */
static void send_heartbeat(hw_broker *b, int want_shutdown)
{
	hw_broker_offline o = { 0, 0, 0 };
	if (b->cfg.ops->offline)
		b->cfg.ops->offline(b->cfg.ctx, b->offline, HW_MAX_OFFLINE_REPLICAS, &o);
	if (o.listed < 0 || o.listed > HW_MAX_OFFLINE_REPLICAS)
		o.listed = 0;
	int all = o.dirs > 0 && o.dirs == b->cfg.n_log_dirs;
	if (o.dirs != b->st.offline_log_dirs) {
		if (o.dirs)
			HW_LOG(ERROR, "broker", "%d of %d log directories offline (%d replicas): %s", o.dirs,
			       b->cfg.n_log_dirs, o.replicas,
			       all ? "asking the controller to fence this broker"
				   : "reporting their replicas to the controller");
		else
			HW_LOG(INFO, "broker", "every log directory online again");
		b->st.offline_log_dirs = o.dirs;
	}
	hw_broker_heartbeat_req r = { .broker_id = b->cfg.node_id, .broker_epoch = b->epoch,
				      .metadata_offset = -1, .want_shutdown = (uint8_t)want_shutdown,
				      .want_fence = (uint8_t)all, .offline_dirs = (uint16_t)o.dirs,
				      .n_offline = (uint16_t)o.listed, .offline = b->offline };
	send_ctl(b, HW_MSG_BROKER_HEARTBEAT, &r, new_corr(b));
}

/* ---- which controller (docs/controller-ha.md) --------------------------- */

static int64_t silence_ns(const hw_broker *b)
{
	int64_t s = hb_ns(b) * 3;
	return s < 1500000000LL ? 1500000000LL : s;
}

static int voter_index(const hw_broker *b, int32_t id)
{
	for (int i = 0; i < b->cfg.n_voters; i++)
		if (b->cfg.voters[i] == id)
			return i;
	return -1;
}

/* Talk to voter `id` from now on. 0, or -ENOENT (not a voter). */
static int use_controller(hw_broker *b, int32_t id, const char *why)
{
	if (voter_index(b, id) < 0)
		return -ENOENT;
	if (b->cfg.controller_id == id)
		return 0;
	HW_LOG(INFO, "broker", "broker %d: controller %d -> %d (%s)", b->cfg.node_id, b->cfg.controller_id, id,
	       why);
	b->cfg.controller_id = id;
	if (b->cfg.ops->controller_changed)
		b->cfg.ops->controller_changed(b->cfg.ctx, id);
	b->st.controller_switches++;
	b->last_ctrl_answer_ns = now_ns(b);
	b->next_send_ns = b->last_ctrl_answer_ns; /* register/heartbeat there now */
	return 0;
}

/* 1 = handle the answer, 0 = dropped (stale controller epoch) or redirected. */
static int ctrl_filter(hw_broker *b, const hw_msg *m, const hw_broker_heartbeat_resp *r)
{
	if (r->controller_epoch > 0 && r->controller_epoch < b->st.controller_epoch) {
		b->st.stale_controller_heartbeat_resps++;
		return 0;
	}
	b->last_ctrl_answer_ns = now_ns(b);
	if (r->error == HW_ERR_NOT_CONTROLLER) {
		b->st.not_controller_redirects++;
		if (r->active_controller_id < 0 || use_controller(b, r->active_controller_id, "NOT_CONTROLLER redirect"))
			HW_LOG(DEBUG, "broker", "controller %d is a standby and knows no active controller yet",
			       m->src);
		return 0;
	}
	if (r->controller_epoch > b->st.controller_epoch)
		b->st.controller_epoch = r->controller_epoch;
	return 1;
}

static void on_push(hw_broker *b, const hw_msg *m)
{
	int32_t e = m->u.pstate.controller_epoch;
	if (e <= b->st.controller_epoch)
		return;
	b->st.controller_epoch = e;
	if (m->src != b->cfg.controller_id)
		(void)use_controller(b, m->src, "a push with a higher controller epoch");
}

static int ctrl_tick(hw_broker *b, int64_t now)
{
	if (b->cfg.n_voters < 2)
		return 0;
	if (!b->last_ctrl_answer_ns)
		b->last_ctrl_answer_ns = now;
	if (now - b->last_ctrl_answer_ns < silence_ns(b))
		return 0;
	int i = voter_index(b, b->cfg.controller_id);
	int32_t next = b->cfg.voters[(i + 1) % b->cfg.n_voters];
	return use_controller(b, next, "the controller is silent") == 0;
}

/* ---- answers ------------------------------------------------------------ */

static void on_registered(hw_broker *b, const hw_msg *m, const hw_broker_heartbeat_resp *r)
{
	if (m->correlation_id != b->reg_corr)
		return; /* a late answer to an older attempt */
	if (r->error != HW_ERR_NONE) {
		HW_LOG(WARN, "broker", "registration refused: %s; retrying", hw_err_name(r->error));
		return;
	}
	b->epoch = r->broker_epoch;
	if (b->cfg.ops->registered)
		b->cfg.ops->registered(b->cfg.ctx, b->epoch);
	set_state(b, HW_BROLE_FENCED, "registered");
	HW_LOG(INFO, "broker", "broker %d registered: broker epoch %lld", b->cfg.node_id, (long long)b->epoch);
	b->next_send_ns = now_ns(b); /* heartbeat now: that unfences us */
}

static void on_heartbeat_resp(hw_broker *b, const hw_msg *m, const hw_broker_heartbeat_resp *r)
{
	if (b->state == HW_BROLE_REGISTERING) {
		on_registered(b, m, r);
		return;
	}
	if (b->state == HW_BROLE_STARTING || b->state == HW_BROLE_STOPPED)
		return;
	if (r->error == HW_ERR_STALE_BROKER_EPOCH) {
		/* the answer echoes the epoch it refused: a late or duplicated
		 * answer about an older session is not about us */
		if (r->broker_epoch >= 0 && r->broker_epoch != b->epoch)
			return;
		if (b->state == HW_BROLE_CONTROLLED_SHUTDOWN) {
			set_state(b, HW_BROLE_STOPPED, "controller no longer knows this broker");
			return;
		}
		/* Same process, data intact: present our epoch as the previous one. */
		b->previous_epoch = b->epoch;
		set_state(b, HW_BROLE_REGISTERING, "stale broker epoch");
		b->next_send_ns = now_ns(b);
		return;
	}
	if (r->error != HW_ERR_NONE) {
		HW_LOG(WARN, "broker", "heartbeat error %s", hw_err_name(r->error));
		return;
	}
	switch (b->state) {
	case HW_BROLE_FENCED:
		if (!r->is_fenced)
			set_state(b, HW_BROLE_RUNNING, "unfenced");
		break;
	case HW_BROLE_RUNNING:
		if (r->is_fenced)
			set_state(b, HW_BROLE_FENCED, "controller fenced us");
		break;
	case HW_BROLE_CONTROLLED_SHUTDOWN:
		if (r->should_shut_down)
			set_state(b, HW_BROLE_STOPPED, "controller: leadership moved away");
		break;
	default:
		break;
	}
}

int hw_broker_on_msg(hw_broker *b, const hw_msg *m)
{
	if (m->type == HW_MSG_PARTITION_STATE) {
		on_push(b, m);
		return 0;
	}
	if (m->type != HW_MSG_BROKER_HEARTBEAT_RESP)
		return 0;
	const hw_broker_heartbeat_resp *r = m->u.other;
	if (r && m->src == b->cfg.controller_id && ctrl_filter(b, m, r))
		on_heartbeat_resp(b, m, r);
	return 1;
}

/* ---- timers --------------------------------------------------------------- */

int hw_broker_tick(hw_broker *b)
{
	int64_t now = now_ns(b);
	int work = ctrl_tick(b, now);
	switch (b->state) {
	case HW_BROLE_REGISTERING:
		if (now >= b->next_send_ns) {
			send_register(b);
			b->next_send_ns = now + REGISTER_RETRY_NS;
			work++;
		}
		break;
	case HW_BROLE_FENCED:
	case HW_BROLE_RUNNING:
		if (now >= b->next_send_ns) {
			send_heartbeat(b, 0);
			b->next_send_ns = now + hb_ns(b);
			work++;
		}
		break;
	case HW_BROLE_CONTROLLED_SHUTDOWN:
		if (now >= b->shutdown_deadline_ns) {
			HW_LOG(WARN, "broker", "controlled shutdown did not complete in %d ms; stopping anyway",
			       b->cfg.controlled_shutdown_timeout_ms);
			set_state(b, HW_BROLE_STOPPED, "controlled shutdown timeout");
			work++;
		} else if (now >= b->next_send_ns) {
			send_heartbeat(b, 1);
			b->next_send_ns = now + (hb_ns(b) < SHUTDOWN_HB_MAX_NS ? hb_ns(b) : SHUTDOWN_HB_MAX_NS);
			work++;
		}
		break;
	default:
		break;
	}
	return work;
}

int64_t hw_broker_deadline(const hw_broker *b)
{
	if (b->state == HW_BROLE_STOPPED || b->state == HW_BROLE_STARTING)
		return INT64_MAX;
	int64_t d = b->next_send_ns;
	if (b->state == HW_BROLE_CONTROLLED_SHUTDOWN && b->shutdown_deadline_ns < d)
		d = b->shutdown_deadline_ns;
	if (b->cfg.n_voters >= 2 && b->last_ctrl_answer_ns && b->last_ctrl_answer_ns + silence_ns(b) < d)
		d = b->last_ctrl_answer_ns + silence_ns(b);
	return d;
}

void hw_broker_begin_shutdown(hw_broker *b)
{
	if (b->state == HW_BROLE_STOPPED || b->state == HW_BROLE_CONTROLLED_SHUTDOWN)
		return;
	if (!b->cfg.controlled_shutdown_enable) {
		set_state(b, HW_BROLE_STOPPED, "SIGTERM (controlled.shutdown.enable=false)");
	} else if (b->state == HW_BROLE_RUNNING || b->state == HW_BROLE_FENCED) {
		set_state(b, HW_BROLE_CONTROLLED_SHUTDOWN, "SIGTERM");
		b->shutdown_deadline_ns = now_ns(b) + (int64_t)b->cfg.controlled_shutdown_timeout_ms * 1000000;
		b->next_send_ns = now_ns(b);
	} else {
		set_state(b, HW_BROLE_STOPPED, "SIGTERM before registration");
	}
}

void hw_broker_kick(hw_broker *b) { b->next_send_ns = now_ns(b); }

hw_broker_role_state hw_broker_get_state(const hw_broker *b) { return b->state; }
int64_t hw_broker_epoch(const hw_broker *b) { return b->epoch; }
int32_t hw_broker_controller(const hw_broker *b) { return b->cfg.controller_id; }
void hw_broker_get_stats(const hw_broker *b, hw_broker_stats *out) { *out = b->st; }
