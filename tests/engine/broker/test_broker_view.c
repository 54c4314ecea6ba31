/* test_broker_view.c — engine/broker's METADATA / DESCRIBE_TOPIC answers:
 * the replica managers' partitions grouped by topic in name and partition
 * order, requested names in request order with unknown ones marked, the
 * controller's entry added for a client that bootstrapped at a broker, and
 * a combined-mode view whose controller partitions get the replica
 * manager's offsets. docs/kafka.md, docs/wire.md. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_broker_view.h"
#include "hw_err.h"

/* What the view sent: the message type and a summary of its topics. */
static struct seen {
	int sends;
	uint16_t type;
	int32_t dst;
	uint32_t corr;
	int n_topics;
	char names[8][HW_TOPIC_NAME_MAX];
	int16_t errors[8];
	uint32_t n_parts[8];
	uint32_t first_part[8];
	int64_t first_hw[8];
	int n_brokers;
	int32_t last_broker;
	char last_broker_ep[HW_ENDPOINT_MAX];
	int32_t controller_epoch;
} S;

static void record_topics(const hw_topic_meta *t, int n)
{
	S.n_topics = n;
	for (int i = 0; i < n && i < 8; i++) {
		snprintf(S.names[i], sizeof(S.names[i]), "%s", t[i].name);
		S.errors[i] = t[i].error;
		S.n_parts[i] = t[i].n_parts;
		S.first_part[i] = t[i].n_parts ? t[i].parts[0].partition : 0;
		S.first_hw[i] = t[i].n_parts ? t[i].parts[0].high_watermark : -2;
	}
}

static int capture(hw_net *n, const hw_msg *m)
{
	(void)n;
	S.sends++;
	S.type = m->type;
	S.dst = m->dst;
	S.corr = m->correlation_id;
	if (m->type == HW_MSG_METADATA_RESP) {
		const hw_metadata_resp *r = m->u.other;
		record_topics(r->topics, r->n_topics);
		S.n_brokers = r->n_brokers;
		S.last_broker = r->brokers[r->n_brokers - 1].id;
		snprintf(S.last_broker_ep, sizeof(S.last_broker_ep), "%s", r->brokers[r->n_brokers - 1].control_ep);
		S.controller_epoch = r->controller_epoch;
	} else {
		const hw_describe_topic_resp *r = m->u.other;
		record_topics(r->topics, r->n_topics);
	}
	return 0;
}

static hw_rm_part_info part(uint32_t topic_id, const char *topic, uint32_t p, int64_t hw)
{
	hw_rm_part_info i;
	memset(&i, 0, sizeof(i));
	i.tp = (hw_tp){ topic_id, p };
	snprintf(i.topic, sizeof(i.topic), "%s", topic);
	i.role = HW_PART_LEADER;
	i.leader = 1;
	i.hw = hw;
	i.leo = hw + 1;
	return i;
}

static void test_named_and_all(void **state)
{
	(void)state;
	hw_rm_part_info infos[] = { part(2, "beta", 1, 11), part(1, "alpha", 0, 5), part(2, "beta", 0, 10) };
	hw_broker_info b = { .id = 1, .broker_epoch = 3 };
	hw_broker_view_src src = { .node_id = 1, .controller_id = 0, .controller_ep = "127.0.0.1:9000",
				   .controller_epoch = 4, .brokers = &b, .n_brokers = 1 };
	hw_net net = { .send = capture };
	hw_msg req = { .type = HW_MSG_METADATA, .src = 1000, .dst = 1, .correlation_id = 77 };
	hw_topic_name names[2];
	memset(names, 0, sizeof(names));
	snprintf(names[0].s, sizeof(names[0].s), "nosuch");
	snprintf(names[1].s, sizeof(names[1].s), "beta");

	hw_broker_view v = { 0 };
	assert_int_equal(hw_broker_view_add_replicas(&v, infos, 3), 0);
	memset(&S, 0, sizeof(S));
	assert_int_equal(hw_broker_view_answer(&v, &src, &req, 2, names, &net), 0);
	assert_int_equal(S.type, HW_MSG_METADATA_RESP);
	assert_int_equal(S.dst, 1000);
	assert_int_equal(S.corr, 77);
	assert_int_equal(S.n_topics, 2);
	assert_string_equal(S.names[0], "nosuch");
	assert_int_equal(S.errors[0], HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);
	assert_string_equal(S.names[1], "beta");
	assert_int_equal(S.errors[1], HW_ERR_NONE);
	assert_int_equal(S.n_parts[1], 2);
	assert_int_equal(S.first_part[1], 0);
	assert_int_equal(S.first_hw[1], 10);
	assert_int_equal(S.n_brokers, 2); /* the controller's entry added */
	assert_int_equal(S.last_broker, 0);
	assert_string_equal(S.last_broker_ep, "127.0.0.1:9000");
	assert_int_equal(S.controller_epoch, 4);

	req.type = HW_MSG_DESCRIBE_TOPIC;
	memset(&S, 0, sizeof(S));
	assert_int_equal(hw_broker_view_answer(&v, &src, &req, 0, NULL, &net), 0);
	assert_int_equal(S.type, HW_MSG_DESCRIBE_TOPIC_RESP);
	assert_int_equal(S.n_topics, 2);
	assert_string_equal(S.names[0], "alpha");
	assert_string_equal(S.names[1], "beta");
	assert_int_equal(S.first_hw[0], 5);

	src.n_brokers = HW_BROKER_VIEW_MAX_BROKERS + 1;
	assert_int_equal(hw_broker_view_answer(&v, &src, &req, 0, NULL, &net), -EINVAL);
	hw_broker_view_free(&v);
	assert_null(v.v);
}

/* Combined mode: the controller's partitions, with the offsets of the
 * replica manager that hosts one of them; the other stays at -1. */
static int64_t fake_now(hw_clock *c)
{
	(void)c;
	return 1000000000LL;
}
static int drop(hw_net *n, const hw_msg *m)
{
	(void)n;
	(void)m;
	return 0;
}

static void test_combined(void **state)
{
	(void)state;
	hw_clock clock = { .now_ns = fake_now };
	hw_net cnet = { .send = drop };
	hw_ctrl_config c;
	hw_ctrl_config_defaults(&c);
	c.node_id = 0;
	c.fsync = 0;
	c.metadata_log_path = NULL;
	hw_ctrl *ctl;
	assert_int_equal(hw_ctrl_create(&c, &clock, &cnet, &ctl), 0);
	hw_broker_register_req r = { .broker_id = 1, .incarnation_id = 1, .previous_broker_epoch = -1,
				     .metadata_offset = -1 };
	hw_broker_heartbeat_resp resp;
	assert_int_equal(hw_ctrl_register(ctl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_NONE);
	hw_broker_heartbeat_req hb = { .broker_id = 1, .broker_epoch = resp.broker_epoch, .metadata_offset = -1 };
	assert_int_equal(hw_ctrl_heartbeat(ctl, &hb, &resp), 0); /* unfenced: placement may use it */
	assert_int_equal(resp.error, HW_ERR_NONE);
	hw_create_topic_req q = { .partitions = 2, .replication_factor = 1 };
	snprintf(q.name, sizeof(q.name), "gamma");
	hw_create_topic_resp cr;
	assert_int_equal(hw_ctrl_create_topic(ctl, &q, &cr), 0);
	assert_int_equal(cr.error, HW_ERR_NONE);

	hw_broker_view v = { 0 };
	assert_int_equal(hw_broker_view_add_controller(&v, ctl), 0);
	assert_int_equal(v.n, 2);
	hw_rm_part_info p1 = part(cr.topic_id, "gamma", 1, 42);
	assert_int_equal(hw_broker_view_add_replicas(&v, &p1, 1), 0);
	assert_int_equal(v.n, 2); /* merged, not added */
	hw_broker_view_src src = { .node_id = 1, .controller_id = 1, .controller_ep = "x", .n_brokers = 0 };
	hw_net net = { .send = capture };
	hw_msg req = { .type = HW_MSG_METADATA, .src = 1000 };
	memset(&S, 0, sizeof(S));
	assert_int_equal(hw_broker_view_answer(&v, &src, &req, 0, NULL, &net), 0);
	assert_int_equal(S.n_topics, 1);
	assert_int_equal(S.n_parts[0], 2);
	assert_int_equal(S.first_hw[0], -1); /* partition 0: no replica here */
	assert_int_equal(v.v[1].pm.high_watermark, 42);
	assert_int_equal(v.v[1].pm.log_end_offset, 43);
	hw_broker_view_free(&v);
	hw_ctrl_destroy(ctl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_and_all),
		cmocka_unit_test(test_combined),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
