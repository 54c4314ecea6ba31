/* test_msg_route.c — every router reads the plane/owner column of
 * HW_MSG_TABLE (engine/iface/hw_msg.h), and agrees with it:
 *
 * - every row has a plane and an owner with names; types without a row
 *   have neither;
 * - hw_netmux (drivers/net/mux): a message of every row, to an unrouted
 *   node, leaves on the control transport exactly when its plane is
 *   CONTROL (route_control_types), on the default one otherwise;
 * - hiwaterd's reactor router (apps/hiwaterd/hwd_route.h): every PARTITION
 *   row names its partition(s) and goes to the reactor hwd_shard_of picks
 *   (4 reactors, every partition 0..15), a part array over two reactors is
 *   split (-1), an empty one stays where it is; every other row goes to
 *   reactor 0;
 * - hiwaterd's role router: CONTROLLER rows to the controller role, VIEW
 *   rows to the broker role of a broker and to the controller role
 *   otherwise, NODE / PARTITION rows to the broker role or nowhere;
 * - hand-offs between reactors (apps/hiwaterd/hwd_xmsg.h) carry the decoded
 *   message: a PRODUCE, FETCH and FETCH_RESP (records, parts, preferred
 *   replicas) copied, their sources then overwritten, read back equal; an
 *   admin message (METADATA, body in u.other) framed and decoded back;
 *   a FETCH_RESP whose records a real log lends by reference keeps them
 *   (its own hold) after the reader's hold is dropped, the log truncated,
 *   rewritten with other bytes (chunks recycled) and closed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "hw_msg.h"
#include "hw_netmux.h"
#include "hwd_route.h"
#include "hwd_shard_of.h"
#include "hwd_xmsg.h"
#include "hw_admin_msg.h"
#include "log_model.h"

static const int rows[] = {
#define X(name, id, plane, owner) id,
	HW_MSG_TABLE(X)
#undef X
};
#define N_ROWS ((int)(sizeof(rows) / sizeof(rows[0])))

static int in_table(int t)
{
	for (int i = 0; i < N_ROWS; i++)
		if (rows[i] == t)
			return 1;
	return 0;
}

static void every_row_has_a_plane_and_owner(void **state)
{
	(void)state;
	assert_true(N_ROWS >= 21);
	for (int t = 0; t < HW_MSG_TYPE_MAX + 2; t++) {
		int plane = hw_msg_plane_of(t), owner = hw_msg_owner_of(t);
		if (!in_table(t)) {
			assert_int_equal(plane, -EINVAL);
			assert_int_equal(owner, -EINVAL);
			assert_string_equal(hw_msg_type_name(t), "UNKNOWN_MSG");
			continue;
		}
		assert_true(plane >= 0 && plane < HW_PLANE__COUNT);
		assert_true(owner >= 0 && owner < HW_OWNER__COUNT);
		assert_string_not_equal(hw_msg_plane_name(plane), "UNKNOWN_PLANE");
		assert_string_not_equal(hw_msg_owner_name(owner), "UNKNOWN_OWNER");
		assert_string_not_equal(hw_msg_type_name(t), "UNKNOWN_MSG");
	}
	assert_string_equal(hw_msg_plane_name(HW_PLANE__COUNT), "UNKNOWN_PLANE");
	assert_string_equal(hw_msg_owner_name(-1), "UNKNOWN_OWNER");
	/* spot checks of the column's meaning */
	assert_int_equal(hw_msg_plane_of(HW_MSG_FETCH), HW_PLANE_DATA);
	assert_int_equal(hw_msg_plane_of(HW_MSG_BROKER_HEARTBEAT), HW_PLANE_CONTROL);
	assert_int_equal(hw_msg_owner_of(HW_MSG_PARTITION_STATE), HW_OWNER_PARTITION);
	assert_int_equal(hw_msg_owner_of(HW_MSG_ALTER_PARTITION), HW_OWNER_CONTROLLER);
	assert_int_equal(hw_msg_owner_of(HW_MSG_METADATA), HW_OWNER_VIEW);
}

typedef struct counting_net {
	hw_net net;
	int sent[HW_MSG_TYPE_MAX];
} counting_net;

static int count_send(hw_net *n, const hw_msg *m)
{
	((counting_net *)n)->sent[m->type]++;
	return 0;
}

static void netmux_follows_the_plane(void **state)
{
	(void)state;
	counting_net data = { .net.send = count_send }, ctl = { .net.send = count_send };
	hw_netmux *x = hw_netmux_create(&data.net);
	assert_non_null(x);
	assert_int_equal(hw_netmux_route_control_types(x, &ctl.net), 0);
	assert_int_equal(hw_netmux_route_plane(x, HW_PLANE__COUNT, &ctl.net), -EINVAL);
	for (int i = 0; i < N_ROWS; i++) {
		hw_msg m = { .type = (uint16_t)rows[i], .src = 1, .dst = 7 };
		assert_int_equal(hw_net_send(hw_netmux_net(x), &m), 0);
		int control = hw_msg_plane_of(rows[i]) == HW_PLANE_CONTROL;
		assert_int_equal(ctl.sent[rows[i]], control);
		assert_int_equal(data.sent[rows[i]], !control);
	}
	hw_netmux_destroy(x);
}

/* A PARTITION message of `type` naming partitions p0 (and p1 when two)
 * of topic `topic`; `buf` holds the part array of array rows. */
static int build_partition_msg(hw_msg *m, int type, uint32_t topic, const uint32_t *ps, int n, uint8_t *buf)
{
	memset(m, 0, sizeof(*m));
	m->type = (uint16_t)type;
	hwd_parts v;
	if (!hwd_route_parts(m, &v))
		return -1;
	if (!v.many) {
		assert_int_equal(v.n, 1);
		hw_tp *tp = (hw_tp *)(uintptr_t)v.base; /* inside m */
		tp->topic_id = topic;
		tp->partition = ps[0];
		return 1;
	}
	for (int i = 0; i < n; i++) {
		hw_tp *tp = (hw_tp *)(buf + (size_t)i * v.elem);
		tp->topic_id = topic;
		tp->partition = ps[i];
	}
	hwd_route_set_parts(m, buf, (uint16_t)n);
	assert_true(hwd_route_parts(m, &v));
	assert_int_equal(v.n, n);
	return 2;
}

static void reactor_router_follows_the_owner(void **state)
{
	(void)state;
	static uint8_t buf[4 * 256];
	const int nr = 4;
	int partition_rows = 0;
	for (int i = 0; i < N_ROWS; i++) {
		int t = rows[i];
		hw_msg m;
		if (hw_msg_owner_of(t) != HW_OWNER_PARTITION) {
			memset(&m, 0, sizeof(m));
			m.type = (uint16_t)t;
			hwd_parts v;
			assert_int_equal(hwd_route_parts(&m, &v), 0);
			assert_int_equal(hwd_route_reactor(&m, nr, 3), 0);
			continue;
		}
		partition_rows++;
		for (uint32_t p = 0; p < 16; p++) {
			uint32_t ps[1] = { p };
			/* every PARTITION row names its partition(s) */
			int kind = build_partition_msg(&m, t, 77, ps, 1, buf);
			assert_true(kind > 0);
			assert_int_equal(hwd_route_reactor(&m, nr, 3), hwd_shard_of(77, p, nr));
			assert_int_equal(hwd_route_reactor(&m, 1, 0), 0);
			if (kind == 2) {
				uint32_t two[2] = { p, p + 1 };  /* consecutive: two reactors */
				build_partition_msg(&m, t, 77, two, 2, buf);
				assert_int_equal(hwd_route_reactor(&m, nr, 3), -1);
				uint32_t same[2] = { p, p + (uint32_t)nr };
				build_partition_msg(&m, t, 77, same, 2, buf);
				assert_int_equal(hwd_route_reactor(&m, nr, 3), hwd_shard_of(77, p, nr));
				build_partition_msg(&m, t, 77, same, 0, buf);
				assert_int_equal(hwd_route_reactor(&m, nr, 3), 3); /* nothing named: here */
			}
		}
	}
	assert_true(partition_rows >= 7);
}

static void role_router_follows_the_owner(void **state)
{
	(void)state;
	for (int i = 0; i < N_ROWS; i++) {
		int t = rows[i];
		hwd_role b = hwd_route_role(t, 1), c = hwd_route_role(t, 0);
		switch (hw_msg_owner_of(t)) {
		case HW_OWNER_CONTROLLER:
			assert_int_equal(b, HWD_ROLE_CONTROLLER);
			assert_int_equal(c, HWD_ROLE_CONTROLLER);
			break;
		case HW_OWNER_VIEW:
			assert_int_equal(b, HWD_ROLE_BROKER);
			assert_int_equal(c, HWD_ROLE_CONTROLLER);
			break;
		default:
			assert_int_equal(b, HWD_ROLE_BROKER);
			assert_int_equal(c, HWD_ROLE_NONE);
			break;
		}
	}
	/* no row: the broker role (its rm refuses it) or nobody */
	assert_int_equal(hwd_route_role(HW_MSG_TYPE_MAX - 1, 1), HWD_ROLE_BROKER);
	assert_int_equal(hwd_route_role(HW_MSG_TYPE_MAX - 1, 0), HWD_ROLE_NONE);
	assert_string_equal(hwd_role_name(HWD_ROLE_CONTROLLER), "CONTROLLER");
}

static void handoffs_carry_the_decoded_message(void **state)
{
	(void)state;
	hw_wire_tx tx = { .cluster_id = 7, .incarnation = 1 };
	int err = 0;
	uint8_t rec[300], rec2[40];
	for (size_t i = 0; i < sizeof(rec); i++)
		rec[i] = (uint8_t)(i * 7 + 1);
	memset(rec2, 0xA5, sizeof(rec2));

	hw_msg p = { .type = HW_MSG_PRODUCE, .src = 1001, .dst = 2, .correlation_id = 9 };
	p.u.produce = (hw_produce_req){ .acks = -1, .tp = { 3, 4 }, .records = rec, .records_len = sizeof(rec) };
	hwd_xmsg *x = hwd_xmsg_copy(&p, HWD_XMSG_MSG, &tx, &err);
	assert_non_null(x);
	assert_int_equal(x->framed, 0);
	uint8_t want[sizeof(rec)];
	memcpy(want, rec, sizeof(rec));
	memset(rec, 0, sizeof(rec)); /* the sender's buffer is gone */
	assert_ptr_not_equal(x->m.u.produce.records, rec);
	assert_int_equal(x->m.u.produce.records_len, sizeof(rec));
	assert_memory_equal(x->m.u.produce.records, want, sizeof(want));
	assert_int_equal(x->m.correlation_id, 9);
	assert_int_equal(x->m.u.produce.tp.partition, 4);
	hwd_xmsg_free(x);

	hw_fetch_part fp[3] = { { .tp = { 1, 0 }, .fetch_offset = 10 }, { .tp = { 1, 1 }, .fetch_offset = 11 },
				{ .tp = { 2, 5 }, .fetch_offset = 12, .partition_max_bytes = 99 } };
	hw_msg f = { .type = HW_MSG_FETCH, .src = 3, .dst = 2 };
	f.u.fetch = (hw_fetch_req){ .replica_id = 3, .n_parts = 3, .parts = fp };
	x = hwd_xmsg_copy(&f, HWD_XMSG_MSG, &tx, &err);
	assert_non_null(x);
	memset(fp, 0, sizeof(fp));
	assert_int_equal(x->m.u.fetch.n_parts, 3);
	assert_int_equal(x->m.u.fetch.parts[2].fetch_offset, 12);
	assert_int_equal(x->m.u.fetch.parts[2].partition_max_bytes, 99);
	assert_int_equal(x->m.u.fetch.parts[1].tp.partition, 1);
	hwd_xmsg_free(x);

	hw_fetch_resp_part rp[2] = { { .tp = { 1, 0 }, .high_watermark = 5, .records = rec, .records_len = 100 },
				     { .tp = { 1, 1 }, .high_watermark = 6, .records = rec2, .records_len = 40 } };
	hw_fetch_preferred pref[1] = { { .tp = { 1, 0 }, .replica = 3 } };
	for (size_t i = 0; i < 100; i++)
		rec[i] = (uint8_t)i;
	hw_msg r = { .type = HW_MSG_FETCH_RESP, .src = 2, .dst = 3 };
	r.u.fetch_resp = (hw_fetch_resp){ .n_parts = 2, .parts = rp, .n_preferred = 1, .preferred = pref };
	x = hwd_xmsg_copy(&r, HWD_XMSG_SEND, &tx, &err);
	assert_non_null(x);
	memset(rec, 0, sizeof(rec));
	memset(rec2, 0, sizeof(rec2));
	memset(rp, 0, sizeof(rp));
	memset(pref, 0, sizeof(pref));
	const hw_fetch_resp *c = &x->m.u.fetch_resp;
	assert_int_equal(c->n_parts, 2);
	assert_int_equal(c->parts[1].high_watermark, 6);
	assert_int_equal(c->parts[1].records_len, 40);
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(c->parts[0].records[i], (uint8_t)i);
	for (size_t i = 0; i < 40; i++)
		assert_int_equal(c->parts[1].records[i], 0xA5);
	assert_int_equal(c->n_preferred, 1);
	assert_int_equal(c->preferred[0].replica, 3);
	hw_msg out;
	hw_wire_drop why;
	assert_int_equal(hwd_xmsg_msg(x, 7, NULL, &out, &why), 0); /* decoded: no arena needed */
	assert_int_equal(out.u.fetch_resp.parts[0].high_watermark, 5);
	hwd_xmsg_free(x);

	hw_topic_name names[2];
	snprintf(names[0].s, sizeof(names[0].s), "alpha");
	snprintf(names[1].s, sizeof(names[1].s), "beta");
	hw_metadata_req mr = { .n_topics = 2, .topics = names };
	hw_msg md = { .type = HW_MSG_METADATA, .src = 1001, .dst = 1, .correlation_id = 5 };
	md.u.other = &mr;
	x = hwd_xmsg_copy(&md, HWD_XMSG_MSG, &tx, &err);
	assert_non_null(x);
	assert_int_equal(x->framed, 1);
	memset(names, 0, sizeof(names));
	static uint8_t abuf[HW_WIRE_ARENA_SIZE];
	hw_wire_arena arena;
	hw_wire_arena_init(&arena, abuf, sizeof(abuf));
	assert_int_equal(hwd_xmsg_msg(x, 7, &arena, &out, &why), 0);
	assert_int_equal(out.type, HW_MSG_METADATA);
	assert_int_equal(out.correlation_id, 5);
	const hw_metadata_req *dr = out.u.other;
	assert_int_equal(dr->n_topics, 2);
	assert_string_equal(dr->topics[1].s, "beta");
	assert_int_equal(hwd_xmsg_msg(x, 8, &arena, &out, &why), -EBADMSG); /* another cluster */
	hwd_xmsg_free(x);
	hwd_xmsg_free(NULL);
}

static void handoff_holds_log_records(void **state)
{
	(void)state;
	char dir[128];
	tu_tmpdir(dir, sizeof(dir), "xmsg");
	hw_log_config c;
	hw_log_config_default(&c);
	c.segment_bytes = 16384;
	c.index_interval_bytes = 512;
	c.chunk_bytes = 4096;
	c.tail_buffer_bytes = 8192;
	c.ring_entries = 16;
	hw_log *log;
	assert_int_equal(hw_log_open(dir, &c, &log), 0);
	tmodel tm = { 0 };
	size_t sz;
	const uint8_t *b = tm_add(&tm, 0, 3, 300, 1, &sz);
	assert_int_equal(hw_log_append(log, b, sz), 0);
	hw_store_read r;
	assert_int_equal(hw_log_read(log, 0, 4096, INT64_MAX, &r), 0);
	assert_true(r.len > 0 && r.ref != NULL);
	uint8_t *want = malloc(r.len);
	assert_non_null(want);
	memcpy(want, r.data, r.len);
	hw_fetch_resp_part rp = { .tp = { 1, 0 }, .records = r.data, .records_len = (uint32_t)r.len,
				  .records_ref = r.ref };
	hw_msg m = { .type = HW_MSG_FETCH_RESP, .src = 2, .dst = 3 };
	m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &rp };
	hw_wire_tx tx = { .cluster_id = 7, .incarnation = 1 };
	int err = 0;
	hwd_xmsg *x = hwd_xmsg_copy(&m, HWD_XMSG_SEND, &tx, &err);
	assert_non_null(x);
	/* by reference: the log's bytes, not a copy */
	assert_ptr_equal(x->m.u.fetch_resp.parts[0].records, r.data);
	hw_log_ref_release(r.ref);  /* the reader is done, as hw_fetch is after a send */
	for (int round = 0; round < 20; round++) {  /* recycle every chunk */
		assert_int_equal(hw_log_truncate_to(log, tm.start), 0);
		tm_truncate(&tm, tm.start);
		for (int k = 0; k < 8; k++) {
			b = tm_add(&tm, round + 1, 2, 500, round * 10 + k, &sz);
			assert_int_equal(hw_log_append(log, b, sz), 0);
		}
		(void)hw_log_poll(log);
	}
	hw_log_close(log);
	assert_memory_equal(x->m.u.fetch_resp.parts[0].records, want, r.len);
	hwd_xmsg_free(x);  /* the last hold: the chunk goes now */
	free(want);
	tm_free(&tm);
	tu_rmrf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_row_has_a_plane_and_owner),
		cmocka_unit_test(netmux_follows_the_plane),
		cmocka_unit_test(reactor_router_follows_the_owner),
		cmocka_unit_test(role_router_follows_the_owner),
		cmocka_unit_test(handoffs_carry_the_decoded_message),
		cmocka_unit_test(handoff_holds_log_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
