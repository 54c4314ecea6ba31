/* test_broker.c — engine/broker's state machine against the real
 * controller (engine/controller, in-memory metadata log), over a queue
 * that delivers one millisecond later and a virtual clock: registration
 * and its retry, unfencing, fencing by an all-offline heartbeat,
 * re-registration after the controller forgets the broker, controlled
 * shutdown (answered and timed out), stale controller answers, and the
 * names table. docs/replication.md "Fencing and controlled shutdown". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_broker.h"
#include "hw_ctrl.h"
#include "hw_err.h"

#define CTL 0
#define NODE 1
#define QMAX 64

typedef struct qmsg {
	hw_msg m;
	union {
		hw_broker_register_req reg;
		hw_broker_heartbeat_req hb;
		hw_broker_heartbeat_resp hr;
	} body;
	hw_tp offline[HW_MAX_OFFLINE_REPLICAS];
	int64_t at_ms;
} qmsg;

typedef struct world {
	hw_clock clock;
	int64_t now_ms;
	hw_net bnet, cnet;
	hw_ctrl *ctl;
	hw_broker *b;
	qmsg q[QMAX];
	int nq;
	int cut;                 /* drop everything */
	int sent_register, sent_heartbeat, want_fence_seen, want_shutdown_seen;
	int64_t last_register_ms, last_prev_epoch;
	uint32_t last_register_corr;
	int offline_dirs;        /* what ops.offline reports */
	int stopped, transitions, registered_calls;
	int64_t registered_epoch;
} world;

static world *W;

static int64_t clock_ns(hw_clock *c)
{
	(void)c;
	return W->now_ms * 1000000LL;
}

static void enqueue(const hw_msg *m)
{
	if (W->cut)
		return;
	assert_true(W->nq < QMAX);
	qmsg *e = &W->q[W->nq++];
	memset(e, 0, sizeof(*e));
	e->m = *m;
	e->at_ms = W->now_ms + 1;
	switch (m->type) {
	case HW_MSG_BROKER_REGISTER:
		e->body.reg = *(const hw_broker_register_req *)m->u.other;
		e->m.u.other = &e->body.reg;
		break;
	case HW_MSG_BROKER_HEARTBEAT:
		e->body.hb = *(const hw_broker_heartbeat_req *)m->u.other;
		memcpy(e->offline, e->body.hb.offline, e->body.hb.n_offline * sizeof(hw_tp));
		e->body.hb.offline = e->offline;
		e->m.u.other = &e->body.hb;
		break;
	case HW_MSG_BROKER_HEARTBEAT_RESP:
		e->body.hr = *(const hw_broker_heartbeat_resp *)m->u.other;
		e->m.u.other = &e->body.hr;
		break;
	case HW_MSG_PARTITION_STATE:
		break; /* inline */
	default:
		W->nq--; /* nothing else matters here */
	}
}

static int broker_send(hw_net *n, const hw_msg *m)
{
	(void)n;
	assert_int_equal(m->dst, CTL);
	if (m->type == HW_MSG_BROKER_REGISTER) {
		W->sent_register++;
		W->last_register_ms = W->now_ms;
		W->last_prev_epoch = ((const hw_broker_register_req *)m->u.other)->previous_broker_epoch;
		W->last_register_corr = m->correlation_id;
	} else if (m->type == HW_MSG_BROKER_HEARTBEAT) {
		const hw_broker_heartbeat_req *r = m->u.other;
		W->sent_heartbeat++;
		W->want_fence_seen |= r->want_fence;
		W->want_shutdown_seen |= r->want_shutdown;
	}
	enqueue(m);
	return 0;
}

static int ctl_send(hw_net *n, const hw_msg *m)
{
	(void)n;
	if (m->dst == NODE)
		enqueue(m);
	return 0;
}

static int fill_register(void *ctx, hw_broker_register_req *r)
{
	(void)ctx;
	snprintf(r->control_ep, sizeof(r->control_ep), "127.0.0.1:1");
	snprintf(r->data_ep, sizeof(r->data_ep), "udp:127.0.0.1:2");
	return 0;
}

static void offline(void *ctx, hw_tp *out, int cap, hw_broker_offline *o)
{
	(void)ctx;
	(void)out;
	(void)cap;
	o->dirs = W->offline_dirs;
	o->replicas = 0;
	o->listed = 0;
}

static void registered(void *ctx, int64_t epoch)
{
	(void)ctx;
	W->registered_calls++;
	W->registered_epoch = epoch;
}

static void state_changed(void *ctx, hw_broker_role_state from, hw_broker_role_state to, const char *why)
{
	(void)ctx;
	assert_int_not_equal(from, to);
	assert_non_null(why);
	W->transitions++;
	W->stopped |= to == HW_BROLE_STOPPED;
}

static const hw_broker_ops ops = { .fill_register = fill_register, .offline = offline,
				   .registered = registered, .state_changed = state_changed };

static void ctl_start(world *w)
{
	hw_ctrl_config c;
	hw_ctrl_config_defaults(&c);
	c.node_id = CTL;
	c.fsync = 0;
	c.metadata_log_path = NULL;
	c.heartbeat_interval_ms = 100;
	c.session_timeout_ms = 1000;
	assert_int_equal(hw_ctrl_create(&c, &w->clock, &w->cnet, &w->ctl), 0);
}

static world *world_new(int shutdown_timeout_ms)
{
	world *w = calloc(1, sizeof(*w));
	assert_non_null(w);
	W = w;
	w->clock.now_ns = clock_ns;
	w->now_ms = 1000;
	w->bnet.send = broker_send;
	w->cnet.send = ctl_send;
	ctl_start(w);
	hw_broker_config bc = { .node_id = NODE, .controller_id = CTL, .heartbeat_interval_ms = 100,
				.controlled_shutdown_enable = 1, .controlled_shutdown_timeout_ms = shutdown_timeout_ms,
				.n_log_dirs = 1, .incarnation = 42, .previous_epoch = -1, .ops = &ops };
	assert_int_equal(hw_broker_create(&bc, &w->clock, &w->bnet, &w->b), 0);
	return w;
}

static void world_free(world *w)
{
	hw_broker_destroy(w->b);
	hw_ctrl_destroy(w->ctl);
	free(w);
	W = NULL;
}

/* Advance the clock a millisecond at a time to `ms`: deliver what is due,
 * then both sides' timers. */
static void run_to(world *w, int64_t ms)
{
	while (w->now_ms < ms) {
		w->now_ms++;
		int k = 0;
		qmsg due[QMAX];
		int nd = 0;
		for (int i = 0; i < w->nq; i++)
			if (w->q[i].at_ms <= w->now_ms)
				due[nd++] = w->q[i];
			else
				w->q[k++] = w->q[i];
		w->nq = k;
		for (int i = 0; i < nd; i++) {
			qmsg *e = &due[i];
			/* the copies moved: point the bodies at this copy */
			if (e->m.type == HW_MSG_BROKER_REGISTER)
				e->m.u.other = &e->body.reg;
			else if (e->m.type == HW_MSG_BROKER_HEARTBEAT) {
				e->body.hb.offline = e->offline;
				e->m.u.other = &e->body.hb;
			} else if (e->m.type == HW_MSG_BROKER_HEARTBEAT_RESP)
				e->m.u.other = &e->body.hr;
			if (e->m.dst == CTL)
				assert_int_equal(hw_ctrl_on_msg(w->ctl, &e->m), 0);
			else
				(void)hw_broker_on_msg(w->b, &e->m);
		}
		(void)hw_broker_tick(w->b);
		assert_int_equal(hw_ctrl_poll(w->ctl), 0);
		int64_t d = hw_broker_deadline(w->b);
		assert_true(d == INT64_MAX || d >= w->now_ms * 1000000LL);
	}
}

static int ctl_state(world *w)
{
	hw_ctrl_broker_info bi;
	return hw_ctrl_broker_get(w->ctl, NODE, &bi) == 0 ? (int)bi.state : -1;
}

static void test_names(void **state)
{
	(void)state;
	for (int s = 0; s < HW_BROLE_STATE_COUNT; s++)
		assert_string_not_equal(hw_broker_role_state_name(s), "UNKNOWN_STATE");
	assert_string_equal(hw_broker_role_state_name(HW_BROLE_CONTROLLED_SHUTDOWN), "CONTROLLED_SHUTDOWN");
	assert_string_equal(hw_broker_role_state_name(HW_BROLE_STATE_COUNT), "UNKNOWN_STATE");
	assert_string_equal(hw_broker_role_state_name(-1), "UNKNOWN_STATE");
	hw_broker_config bad = { .node_id = 1, .heartbeat_interval_ms = 0, .ops = &ops };
	hw_broker *b;
	hw_clock c = { .now_ns = clock_ns };
	hw_net n = { .send = broker_send };
	assert_int_equal(hw_broker_create(&bad, &c, &n, &b), -EINVAL);
}

/* Lost registrations are retried a second apart; the answer registers,
 * the next heartbeat unfences. */
static void test_register_retry_unfence(void **state)
{
	(void)state;
	world *w = world_new(5000);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_STARTING);
	assert_int_equal(hw_broker_deadline(w->b), INT64_MAX);
	hw_broker_start(w->b);
	w->cut = 1;
	run_to(w, 3500);
	assert_int_equal(w->sent_register, 3); /* at 1001, 2001, 3001 */
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_REGISTERING);
	assert_int_equal(hw_broker_epoch(w->b), -1);
	w->cut = 0;
	run_to(w, 4010);
	assert_int_equal(w->sent_register, 4);
	assert_int_equal(w->last_prev_epoch, -1);
	assert_int_equal(w->registered_calls, 1);
	assert_true(hw_broker_epoch(w->b) >= 0);
	assert_int_equal(w->registered_epoch, hw_broker_epoch(w->b));
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_RUNNING);
	assert_int_equal(ctl_state(w), HW_CTRL_BROKER_ACTIVE);
	int hb = w->sent_heartbeat;
	run_to(w, 5010);
	assert_in_range(w->sent_heartbeat - hb, 9, 11); /* every 100 ms */
	world_free(w);
}

/* A restarted broker process (same node id) must not take the answer to
 * its previous process's registration for its own: correlation ids start
 * from the clock, not from 1 in every process. Without that both first
 * registrations carry id 1 and the late answer registers the new process
 * with an epoch the controller gave the old one. */
static void test_late_register_answer_after_restart(void **state)
{
	(void)state;
	world *w = world_new(5000);
	w->cut = 1; /* nothing reaches the controller: we answer by hand */
	hw_broker_start(w->b);
	run_to(w, 1010);
	assert_int_equal(w->sent_register, 1);
	uint32_t old_corr = w->last_register_corr;

	/* the process dies; a new one starts 300 ms later */
	hw_broker_destroy(w->b);
	w->b = NULL;
	w->now_ms = 1310; /* nothing runs meanwhile */
	hw_broker_config bc = { .node_id = NODE, .controller_id = CTL, .heartbeat_interval_ms = 100,
				.controlled_shutdown_enable = 1, .controlled_shutdown_timeout_ms = 5000,
				.n_log_dirs = 1, .incarnation = 43, .previous_epoch = -1, .ops = &ops };
	assert_int_equal(hw_broker_create(&bc, &w->clock, &w->bnet, &w->b), 0);
	hw_broker_start(w->b);
	run_to(w, 1320);
	assert_int_equal(w->sent_register, 2);
	assert_int_not_equal(w->last_register_corr, old_corr);

	/* the controller's answer to the old process arrives now */
	hw_broker_heartbeat_resp late = { .error = HW_ERR_NONE, .broker_epoch = 77 };
	hw_msg m = { .type = HW_MSG_BROKER_HEARTBEAT_RESP, .src = CTL, .dst = NODE, .correlation_id = old_corr };
	m.u.other = &late;
	(void)hw_broker_on_msg(w->b, &m);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_REGISTERING);
	assert_int_equal(hw_broker_epoch(w->b), -1);
	assert_int_equal(w->registered_calls, 0);

	/* its own answer registers it */
	hw_broker_heartbeat_resp own = { .error = HW_ERR_NONE, .broker_epoch = 78 };
	m.correlation_id = w->last_register_corr;
	m.u.other = &own;
	(void)hw_broker_on_msg(w->b, &m);
	assert_int_equal(hw_broker_epoch(w->b), 78);
	assert_int_equal(w->registered_calls, 1);
	world_free(w);
}

/* Every log dir offline: heartbeats ask to be fenced, the controller
 * fences, the broker follows; back online, it is unfenced again. */
static void test_offline_dirs_fence(void **state)
{
	(void)state;
	world *w = world_new(5000);
	hw_broker_start(w->b);
	run_to(w, 1100);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_RUNNING);
	w->offline_dirs = 1;
	run_to(w, 1400);
	assert_true(w->want_fence_seen);
	assert_int_equal(ctl_state(w), HW_CTRL_BROKER_FENCED);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_FENCED);
	hw_broker_stats st;
	hw_broker_get_stats(w->b, &st);
	assert_int_equal(st.offline_log_dirs, 1);
	w->offline_dirs = 0;
	run_to(w, 1700);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_RUNNING);
	assert_int_equal(ctl_state(w), HW_CTRL_BROKER_ACTIVE);
	world_free(w);
}

/* A controller that no longer knows the broker's epoch (its metadata was
 * lost: a new in-memory controller) answers STALE_BROKER_EPOCH: the broker
 * registers again, presenting the epoch it had as the previous one. */
static void test_stale_epoch_reregisters(void **state)
{
	(void)state;
	world *w = world_new(5000);
	hw_broker_start(w->b);
	run_to(w, 1100);
	int64_t e = hw_broker_epoch(w->b);
	assert_true(e >= 0);
	hw_ctrl_destroy(w->ctl);
	w->nq = 0;
	ctl_start(w);
	int regs = w->sent_register;
	run_to(w, 1400);
	assert_int_equal(w->sent_register, regs + 1);
	assert_int_equal(w->last_prev_epoch, e);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_RUNNING);
	assert_int_equal(ctl_state(w), HW_CTRL_BROKER_ACTIVE);
	/* a late STALE answer about an older epoch changes nothing */
	hw_broker_heartbeat_resp r = { .error = HW_ERR_STALE_BROKER_EPOCH, .broker_epoch = e + 1000,
				       .is_fenced = 1 };
	hw_msg m = { .type = HW_MSG_BROKER_HEARTBEAT_RESP, .src = CTL, .dst = NODE };
	m.u.other = &r;
	assert_int_equal(hw_broker_on_msg(w->b, &m), 1);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_RUNNING);
	world_free(w);
}

/* An answer carrying a lower controller epoch than seen is dropped and
 * counted; one from a node that is not our controller is ignored. */
static void test_stale_controller(void **state)
{
	(void)state;
	world *w = world_new(5000);
	hw_broker_start(w->b);
	run_to(w, 1100);
	hw_broker_heartbeat_resp r = { .error = HW_ERR_NONE, .broker_epoch = hw_broker_epoch(w->b),
				       .is_fenced = 1, .controller_epoch = 7 };
	hw_msg m = { .type = HW_MSG_BROKER_HEARTBEAT_RESP, .src = CTL, .dst = NODE };
	m.u.other = &r;
	assert_int_equal(hw_broker_on_msg(w->b, &m), 1); /* epoch 7: fenced */
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_FENCED);
	r.is_fenced = 0;
	r.controller_epoch = 6;
	assert_int_equal(hw_broker_on_msg(w->b, &m), 1);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_FENCED); /* dropped */
	hw_broker_stats st;
	hw_broker_get_stats(w->b, &st);
	assert_int_equal(st.stale_controller_heartbeat_resps, 1);
	assert_int_equal(st.controller_epoch, 7);
	r.controller_epoch = 7;
	m.src = 5;
	assert_int_equal(hw_broker_on_msg(w->b, &m), 1);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_FENCED); /* not our controller */
	m.src = CTL;
	assert_int_equal(hw_broker_on_msg(w->b, &m), 1);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_RUNNING);
	hw_msg other = { .type = HW_MSG_FETCH, .src = 2, .dst = NODE };
	assert_int_equal(hw_broker_on_msg(w->b, &other), 0);
	world_free(w);
}

/* SIGTERM: want_shutdown heartbeats until the controller agrees. */
static void test_controlled_shutdown(void **state)
{
	(void)state;
	world *w = world_new(5000);
	hw_broker_start(w->b);
	run_to(w, 1100);
	hw_broker_begin_shutdown(w->b);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_CONTROLLED_SHUTDOWN);
	run_to(w, 1200);
	assert_true(w->want_shutdown_seen);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_STOPPED);
	assert_true(w->stopped);
	assert_int_equal(hw_broker_deadline(w->b), INT64_MAX);
	assert_int_not_equal(ctl_state(w), HW_CTRL_BROKER_ACTIVE);
	int sent = w->sent_heartbeat + w->sent_register;
	run_to(w, 2000);
	assert_int_equal(w->sent_heartbeat + w->sent_register, sent); /* nothing after STOPPED */
	world_free(w);
}

/* A silent controller: the shutdown stops at the timeout anyway. Before
 * registration, SIGTERM stops at once. */
static void test_shutdown_timeout(void **state)
{
	(void)state;
	world *w = world_new(700);
	hw_broker_start(w->b);
	run_to(w, 1100);
	w->cut = 1;
	hw_broker_begin_shutdown(w->b);
	run_to(w, 1750);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_CONTROLLED_SHUTDOWN);
	run_to(w, 1850);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_STOPPED);
	world_free(w);
	w = world_new(700);
	hw_broker_start(w->b);
	hw_broker_begin_shutdown(w->b);
	assert_int_equal(hw_broker_get_state(w->b), HW_BROLE_STOPPED);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_register_retry_unfence),
		cmocka_unit_test(test_late_register_answer_after_restart),
		cmocka_unit_test(test_offline_dirs_fence),
		cmocka_unit_test(test_stale_epoch_reregisters),
		cmocka_unit_test(test_stale_controller),
		cmocka_unit_test(test_controlled_shutdown),
		cmocka_unit_test(test_shutdown_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
