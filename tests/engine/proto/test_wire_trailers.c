/* test_wire_trailers.c — the positional trailers of the failed-log-dir and
 * registered-epoch work (docs/wire.md): BROKER_HEARTBEAT's offline log dirs
 * and their replicas (docs/logdirs.md), PARTITION_STATE's registered broker
 * epochs after the controller epoch (docs/security.md "Sender identity").
 * Each round-trips, is absent when empty, has one encoding (the zero forms
 * a later trailer forces, and nothing else), and refuses what does not
 * fit. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "hw_admin_msg.h"
#include "hw_wire.h"

#define CLUSTER 0xC0FFEEu

static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t frame[HW_WIRE_MAX_FRAME];

static int encode(const hw_msg *m, uint8_t *buf, size_t cap)
{
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 7, .seq = 0 };
	return hw_wire_encode(&tx, m, NULL, buf, cap);
}

/* Decode; 0 and *out, or the drop reason (never HW_WIRE_DROP__COUNT). */
static int decode(const uint8_t *buf, int len, hw_msg *out, hw_wire_drop *why)
{
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	*why = HW_WIRE_DROP__COUNT;
	int rc = hw_wire_decode(buf, (size_t)len, CLUSTER, &a, NULL, out, why, NULL);
	if (rc)
		assert_true(*why < HW_WIRE_DROP__COUNT);
	return rc;
}

static void hdr(hw_msg *m, int type)
{
	memset(m, 0, sizeof *m);
	m->type = (uint16_t)type;
	m->src = 2;
	m->dst = 0;
	m->correlation_id = 41;
}

static void test_heartbeat_offline_dirs(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	hw_broker_heartbeat_req hq = { .broker_id = 2, .broker_epoch = 55, .metadata_offset = -1,
				       .want_shutdown = 1 };
	hdr(&m, HW_MSG_BROKER_HEARTBEAT);
	m.u.other = &hq;
	int bare = encode(&m, frame, sizeof frame);
	assert_true(bare > 0);
	assert_int_equal(decode(frame, bare, &d, &why), 0);
	assert_int_equal(((const hw_broker_heartbeat_req *)d.u.other)->offline_dirs, 0);

	hw_tp off[3] = { { 7, 0 }, { 7, 2 }, { 9, 1 } };
	hq.offline_dirs = 1;
	hq.n_offline = 3;
	hq.offline = off;
	int with = encode(&m, frame, sizeof frame);
	assert_int_equal(with, bare + 2 + 2 + 3 * 8);
	assert_int_equal(decode(frame, with, &d, &why), 0);
	const hw_broker_heartbeat_req *q = d.u.other;
	assert_int_equal(q->offline_dirs, 1);
	assert_int_equal(q->n_offline, 3);
	assert_memory_equal(q->offline, off, sizeof off);
	assert_int_equal(q->want_shutdown, 1);
	assert_int_equal(q->broker_epoch, 55);

	/* an offline dir holding no claimed replica yet: the counts alone */
	hq.n_offline = 0;
	int dirs_only = encode(&m, frame, sizeof frame);
	assert_int_equal(dirs_only, bare + 4);
	assert_int_equal(decode(frame, dirs_only, &d, &why), 0);
	assert_int_equal(((const hw_broker_heartbeat_req *)d.u.other)->offline_dirs, 1);

	/* one encoding: a zero dir count in the trailer is a drop */
	hq.n_offline = 3;
	with = encode(&m, frame, sizeof frame);
	frame[bare] = 0;
	frame[bare + 1] = 0;
	assert_int_not_equal(decode(frame, with, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* a count the bytes do not hold */
	with = encode(&m, frame, sizeof frame);
	frame[bare + 3] = 4;
	assert_int_not_equal(decode(frame, with, &d, &why), 0);
	/* the encoder refuses more than the decoder takes */
	hq.n_offline = HW_MAX_OFFLINE_REPLICAS + 1;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	hq.n_offline = 2;
	hq.offline = NULL;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
}

static void test_pstate_replica_epochs(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_drop why;
	hdr(&m, HW_MSG_PARTITION_STATE);
	m.src = 0;
	m.dst = 2;
	hw_partition_state *s = &m.u.pstate;
	s->tp = (hw_tp){ 3, 1 };
	s->leader = 2;
	s->leader_epoch = 4;
	s->partition_epoch = 9;
	s->replicas = (hw_idset){ .n = 3, .id = { 2, 1, 3 } };
	s->isr = s->replicas;
	s->min_insync_replicas = 2;
	strcpy(s->topic, "orders");
	int bare = encode(&m, frame, sizeof frame);
	assert_true(bare > 0);

	/* the epochs force the throttle sets (empty) and the controller epoch
	 * (0, the embedded controller) in front of them */
	s->n_replica_epochs = 3;
	s->replica_epochs[0] = 12;
	s->replica_epochs[1] = -1;
	s->replica_epochs[2] = 40;
	int with = encode(&m, frame, sizeof frame);
	assert_int_equal(with, bare + 1 + 1 + 4 + 1 + 3 * 8);
	assert_int_equal(decode(frame, with, &d, &why), 0);
	assert_int_equal(d.u.pstate.controller_epoch, 0);
	assert_int_equal(d.u.pstate.n_replica_epochs, 3);
	assert_memory_equal(d.u.pstate.replica_epochs, s->replica_epochs, 3 * sizeof s->replica_epochs[0]);
	assert_int_equal(d.u.pstate.leader_throttled.n + d.u.pstate.follower_throttled.n, 0);
	/* with a ZooKeeper controller's epoch too */
	s->controller_epoch = 6;
	int with_ce = encode(&m, frame, sizeof frame);
	assert_int_equal(with_ce, with);
	assert_int_equal(decode(frame, with_ce, &d, &why), 0);
	assert_int_equal(d.u.pstate.controller_epoch, 6);
	assert_int_equal(d.u.pstate.replica_epochs[2], 40);
	s->controller_epoch = 0;

	/* one epoch per replica: another count is refused both ways */
	s->n_replica_epochs = 2;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	s->n_replica_epochs = 3;
	with = encode(&m, frame, sizeof frame);
	frame[bare + 6] = 2; /* the count byte after sets and epoch */
	assert_int_not_equal(decode(frame, with, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* an epoch below -1 */
	with = encode(&m, frame, sizeof frame);
	frame[bare + 7] = 0x80;
	assert_int_not_equal(decode(frame, with, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	/* a zero controller epoch with nothing after it is not an encoding */
	s->n_replica_epochs = 0;
	s->leader_throttled = (hw_idset){ .n = 1, .id = { 3 } };
	int thr = encode(&m, frame, sizeof frame);
	assert_int_equal(thr, bare + 1 + 4 + 1);
	uint8_t zero[4] = { 0 };
	memcpy(frame + thr, zero, 4);
	uint32_t pl = (uint32_t)(thr + 4 - HW_WIRE_HDR_LEN);
	frame[32] = (uint8_t)(pl >> 24);
	frame[33] = (uint8_t)(pl >> 16);
	frame[34] = (uint8_t)(pl >> 8);
	frame[35] = (uint8_t)pl;
	assert_int_not_equal(decode(frame, thr + 4, &d, &why), 0);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heartbeat_offline_dirs),
		cmocka_unit_test(test_pstate_replica_epochs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
