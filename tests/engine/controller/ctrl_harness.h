/* ctrl_harness.h — a fake clock, an in-process capturing net and helpers
 * for the controller tests. Seed from env HW_TEST_SEED (default: time),
 * printed with a repro line. */
#ifndef CTRL_HARNESS_H
#define CTRL_HARNESS_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_ctrl.h"
#include "hw_err.h"
#include "../../support/hw_test.h"

#define MS (1000000LL)

typedef struct fclock {
	hw_clock base;
	int64_t now;
} fclock;

static int64_t fclock_now(hw_clock *c) { return ((fclock *)c)->now; }

/* Captured messages: the hw_msg plus copies of the bodies the tests read. */
typedef struct cap_msg {
	hw_msg m;
	hw_broker_heartbeat_resp hb;
	hw_create_topic_resp ct;
	int n_topics;
	hw_topic_meta t0;                /* first topic of a METADATA/DESCRIBE answer */
	hw_partition_meta p0;            /* its partition 0 */
	int n_racks;                     /* METADATA_RESP: brokers with a rack */
} cap_msg;

typedef struct cap_net {
	hw_net base;
	cap_msg *msgs;
	int n, cap;
} cap_net;

static int cap_send(hw_net *n, const hw_msg *m)
{
	cap_net *cn = (cap_net *)n;
	if (cn->n == cn->cap) {
		cn->cap = cn->cap ? cn->cap * 2 : 256;
		cn->msgs = realloc(cn->msgs, (size_t)cn->cap * sizeof(*cn->msgs));
		assert_non_null(cn->msgs);
	}
	cap_msg *c = &cn->msgs[cn->n++];
	memset(c, 0, sizeof(*c));
	c->m = *m;
	switch (m->type) {
	case HW_MSG_BROKER_HEARTBEAT_RESP:
		c->hb = *(const hw_broker_heartbeat_resp *)m->u.other;
		break;
	case HW_MSG_CREATE_TOPIC_RESP:
		c->ct = *(const hw_create_topic_resp *)m->u.other;
		break;
	case HW_MSG_METADATA_RESP: {
		const hw_metadata_resp *r = m->u.other;
		for (int i = 0; i < r->n_brokers; i++)
			c->n_racks += r->brokers[i].rack[0] != 0;
		c->n_topics = r->n_topics;
		if (r->n_topics) {
			c->t0 = r->topics[0];
			if (r->topics[0].n_parts)
				c->p0 = r->topics[0].parts[0];
		}
		break;
	}
	case HW_MSG_DESCRIBE_TOPIC_RESP: {
		const hw_describe_topic_resp *r = m->u.other;
		c->n_topics = r->n_topics;
		if (r->n_topics) {
			c->t0 = r->topics[0];
			if (r->topics[0].n_parts)
				c->p0 = r->topics[0].parts[0];
		}
		break;
	}
	}
	c->m.u.other = NULL;
	if (m->type == HW_MSG_PARTITION_STATE || m->type == HW_MSG_ALTER_PARTITION_RESP)
		c->m.u = m->u; /* self-contained structs */
	c->t0.parts = NULL;
	c->t0.configs = NULL;
	return 0;
}

typedef struct world {
	fclock clock;
	cap_net net;
	hw_ctrl *ctrl;
	hw_ctrl_config cfg;
	int64_t epoch[1000];             /* broker epochs by id */
	uint64_t incarnation[1000];
	char dir[128];
	char path[192];
} world;

static uint64_t rnd(void) { return hw_test_rand(); }
static __attribute__((unused)) uint64_t below(uint64_t n) { return hw_test_below(n); }

static void seed_init(const char *name) { hw_test_seed_init(name); }

static void world_open(world *w)
{
	w->clock.base.now_ns = fclock_now;
	w->net.base.send = cap_send;
	assert_int_equal(hw_ctrl_create(&w->cfg, &w->clock.base, &w->net.base, &w->ctrl), 0);
}

static world *world_new(int persistent)
{
	world *w = calloc(1, sizeof(*w));
	assert_non_null(w);
	w->clock.now = 1000 * MS;
	hw_ctrl_config_defaults(&w->cfg);
	w->cfg.node_id = 0;
	if (persistent) {
		snprintf(w->dir, sizeof(w->dir), "/tmp/broker-ctrl-test-XXXXXX");
		assert_non_null(mkdtemp(w->dir));
		snprintf(w->path, sizeof(w->path), "%s/metadata.log", w->dir);
		w->cfg.metadata_log_path = w->path;
	}
	world_open(w);
	return w;
}

static void world_free(world *w)
{
	hw_ctrl_destroy(w->ctrl);
	if (w->path[0]) {
		unlink(w->path);
		rmdir(w->dir);
	}
	free(w->net.msgs);
	free(w);
}

static void advance(world *w, int64_t ns)
{
	w->clock.now += ns;
	assert_int_equal(hw_ctrl_poll(w->ctrl), 0);
}

/* Register broker id (new incarnation) with a previous epoch. */
static hw_broker_heartbeat_resp reg(world *w, int32_t id, int64_t prev_epoch)
{
	hw_broker_register_req r = { .broker_id = id, .incarnation_id = rnd() | 1,
				     .previous_broker_epoch = prev_epoch, .metadata_offset = -1 };
	snprintf(r.control_ep, sizeof(r.control_ep), "udp:127.0.0.1:%d", 9100 + id);
	hw_broker_heartbeat_resp resp;
	assert_int_equal(hw_ctrl_register(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_NONE);
	w->epoch[id] = resp.broker_epoch;
	w->incarnation[id] = r.incarnation_id;
	return resp;
}

static hw_broker_heartbeat_resp hb(world *w, int32_t id, int want_shutdown)
{
	hw_broker_heartbeat_req r = { .broker_id = id, .broker_epoch = w->epoch[id],
				      .metadata_offset = -1, .want_shutdown = (uint8_t)want_shutdown };
	hw_broker_heartbeat_resp resp;
	assert_int_equal(hw_ctrl_heartbeat(w->ctrl, &r, &resp), 0);
	return resp;
}

static void reg_and_unfence(world *w, int32_t id)
{
	reg(w, id, -1);
	hw_broker_heartbeat_resp r = hb(w, id, 0);
	assert_int_equal(r.error, HW_ERR_NONE);
	assert_int_equal(r.is_fenced, 0);
}

static uint32_t create(world *w, const char *name, int parts, int rf, const char *min_isr,
		       const char *unclean)
{
	hw_config_kv kv[2];
	int n = 0;
	memset(kv, 0, sizeof(kv));
	if (min_isr) {
		snprintf(kv[n].key, sizeof(kv[n].key), "min.insync.replicas");
		snprintf(kv[n].value, sizeof(kv[n].value), "%s", min_isr);
		n++;
	}
	if (unclean) {
		snprintf(kv[n].key, sizeof(kv[n].key), "unclean.leader.election.enable");
		snprintf(kv[n].value, sizeof(kv[n].value), "%s", unclean);
		n++;
	}
	hw_create_topic_req r = { .partitions = parts, .replication_factor = (int16_t)rf,
				  .n_configs = (uint16_t)n, .configs = kv };
	snprintf(r.name, sizeof(r.name), "%s", name);
	hw_create_topic_resp resp;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	if (resp.error)
		printf("# create %s: %s: %s\n", name, hw_err_name(resp.error), resp.error_message);
	assert_int_equal(resp.error, HW_ERR_NONE);
	return resp.topic_id;
}

static hw_partition_state part(world *w, uint32_t topic, uint32_t p)
{
	hw_partition_state s;
	assert_int_equal(hw_ctrl_partition(w->ctrl, (hw_tp){ topic, p }, &s), 0);
	return s;
}

static __attribute__((unused)) int set_is(const hw_idset *s, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	int ok = s->n == n;
	for (int i = 0; i < n; i++) {
		int v = va_arg(ap, int);
		if (ok && s->id[i] != v)
			ok = 0;
	}
	va_end(ap);
	if (!ok) {
		char b[64];
		printf("# set is %s\n", hw_ctrl_idset_str(s, b, sizeof(b)));
	}
	return ok;
}

/* An ALTER_PARTITION from `from` proposing s (its ISR as new_isr). */
static __attribute__((unused)) hw_msg alter_req(world *w, int32_t from, hw_partition_state s)
{
	hw_msg m = { .type = HW_MSG_ALTER_PARTITION, .src = from, .dst = 0, .correlation_id = 77 };
	hw_alter_partition_req *r = &m.u.alter;
	r->broker_id = from;
	r->broker_epoch = w->epoch[from];
	r->tp = s.tp;
	r->leader_epoch = s.leader_epoch;
	r->partition_epoch = s.partition_epoch;
	r->new_isr = s.isr;
	for (int i = 0; i < HW_MAX_RF; i++)
		r->new_isr_broker_epochs[i] = i < s.isr.n ? w->epoch[s.isr.id[i]] : -1;
	r->leader_recovery_state = s.leader_recovery_state;
	return m;
}

/* Deliver m; the controller's answer (fails the test without one). */
static __attribute__((unused)) hw_alter_partition_resp send_alter(world *w, const hw_msg *m)
{
	int from = w->net.n;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, m), 0);
	for (int i = from; i < w->net.n; i++) {
		const hw_msg *o = &w->net.msgs[i].m;
		if (o->type == HW_MSG_ALTER_PARTITION_RESP) {
			assert_int_equal(o->dst, m->src);
			assert_int_equal(o->correlation_id, m->correlation_id);
			return o->u.alter_resp;
		}
	}
	fail_msg("no ALTER_PARTITION_RESP");
	return (hw_alter_partition_resp){ 0 };
}

/* Keep brokers in `alive` (bitmask by id) heartbeating every 2 s while time
 * advances by total_ms. */
static __attribute__((unused)) void run_heartbeats(world *w, uint64_t alive_mask, int64_t total_ms)
{
	for (int64_t t = 0; t < total_ms; t += 100) {
		if (t % 2000 == 0)
			for (int id = 0; id < 64; id++)
				if (alive_mask & (1ull << id))
					hb(w, id, 0);
		advance(w, 100 * MS);
	}
}

#endif
