/* test_wire.c — round trips of every message type through the wire codec,
 * the fetch-response split, replay windows and hostile inputs (truncation at
 * every length, every single-byte mutation, foreign cluster, oversize,
 * random garbage). Randomised parts take their seed from HW_TEST_SEED. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <cmocka.h>
#include "hw_wire.h"
#include "hw_err.h"
#include "../../support/hw_test.h"

#define CLUSTER 0xC0FFEEu

static uint32_t rnd(void) { return (uint32_t)(hw_test_rand() >> 11); }

static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t frame[HW_WIRE_MAX_FRAME];
static uint8_t frame2[HW_WIRE_MAX_FRAME];

/* A syntactically valid RecordBatch v2 of `len` bytes (>= 61). */
static void make_batch(uint8_t *p, size_t len, int64_t base)
{
	memset(p, 0, len);
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)((uint64_t)base >> (56 - 8 * i));
	uint32_t bl = (uint32_t)(len - 12);
	p[8] = (uint8_t)(bl >> 24);
	p[9] = (uint8_t)(bl >> 16);
	p[10] = (uint8_t)(bl >> 8);
	p[11] = (uint8_t)bl;
	p[16] = 2;
	for (size_t i = HW_WIRE_BATCH_HDR; i < len; i++)
		p[i] = (uint8_t)rnd();
}

/* n batches of random sizes in [61, maxsz] into buf; returns total bytes. */
static size_t make_batches(uint8_t *buf, size_t cap, int n, size_t maxsz)
{
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		size_t sz = HW_WIRE_BATCH_HDR + rnd() % (maxsz - HW_WIRE_BATCH_HDR + 1);
		if (off + sz > cap)
			break;
		make_batch(buf + off, sz, i * 10);
		off += sz;
	}
	return off;
}

static int encode(const hw_msg *m, uint8_t *buf, size_t cap)
{
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 7, .seq = 0 };
	return hw_wire_encode(&tx, m, NULL, buf, cap);
}

static void decode_ok(const uint8_t *buf, int len, hw_msg *out)
{
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	hw_wire_drop why = HW_WIRE_DROP__COUNT;
	hw_wire_hdr h;
	int rc = hw_wire_decode(buf, (size_t)len, CLUSTER, &a, &h, out, &why, NULL);
	if (rc != 0)
		fail_msg("decode failed: %s", hw_wire_drop_name(why));
	assert_int_equal(h.payload_len, (uint32_t)len - HW_WIRE_HDR_LEN);
}

static void hdr_fill(hw_msg *m, int type)
{
	memset(m, 0, sizeof *m);
	m->type = (uint16_t)type;
	m->src = (int32_t)(rnd() % 2000);
	m->dst = (int32_t)(rnd() % 2000) - 1;
	m->correlation_id = rnd();
}

static void hdr_eq(const hw_msg *a, const hw_msg *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->src, b->src);
	assert_int_equal(a->dst, b->dst);
	assert_int_equal(a->correlation_id, b->correlation_id);
}

static hw_idset rand_idset(void)
{
	hw_idset s;
	memset(&s, 0, sizeof s);
	s.n = (uint8_t)(rnd() % (HW_MAX_RF + 1));
	for (int i = 0; i < s.n; i++)
		s.id[i] = (int32_t)(rnd() % 10);
	return s;
}

static void idset_eq(const hw_idset *a, const hw_idset *b)
{
	assert_int_equal(a->n, b->n);
	for (int i = 0; i < a->n; i++)
		assert_int_equal(a->id[i], b->id[i]);
}

static void test_produce(void **st)
{
	(void)st;
	static uint8_t recs[8000];
	hw_msg m, d;
	hdr_fill(&m, HW_MSG_PRODUCE);
	m.u.produce.acks = HW_ACKS_ALL;
	m.u.produce.timeout_ms = 30000;
	m.u.produce.tp = (hw_tp){ 3, 5 };
	m.u.produce.records_len = (uint32_t)make_batches(recs, sizeof recs, 3, 2000);
	m.u.produce.records = recs;
	int n = encode(&m, frame, sizeof frame);
	assert_true(n > 0);
	decode_ok(frame, n, &d);
	hdr_eq(&m, &d);
	assert_int_equal(d.u.produce.acks, -1);
	assert_int_equal(d.u.produce.timeout_ms, 30000);
	assert_true(hw_tp_eq(d.u.produce.tp, m.u.produce.tp));
	assert_int_equal(d.u.produce.records_len, m.u.produce.records_len);
	assert_memory_equal(d.u.produce.records, recs, m.u.produce.records_len);

	hdr_fill(&m, HW_MSG_PRODUCE_RESP);
	m.u.produce_resp = (hw_produce_resp){ .tp = { 1, 2 }, .error = HW_ERR_NOT_ENOUGH_REPLICAS, .base_offset = -1, .log_start_offset = 77 };
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	hdr_eq(&m, &d);
	assert_int_equal(d.u.produce_resp.error, HW_ERR_NOT_ENOUGH_REPLICAS);
	assert_int_equal(d.u.produce_resp.base_offset, -1);
	assert_int_equal(d.u.produce_resp.log_start_offset, 77);
}

static void test_fetch(void **st)
{
	(void)st;
	hw_fetch_part parts[5];
	hw_msg m, d;
	hdr_fill(&m, HW_MSG_FETCH);
	memset(parts, 0, sizeof parts);   /* padding too: compared bytewise below */
	for (int i = 0; i < 5; i++) {
		parts[i].tp = (hw_tp){ rnd(), rnd() };
		parts[i].fetch_offset = (int64_t)rnd() << 20;
		parts[i].current_leader_epoch = (int32_t)rnd();
		parts[i].last_fetched_epoch = -1;
		parts[i].log_start_offset = (int64_t)rnd();
		parts[i].partition_max_bytes = (int32_t)rnd();
	}
	m.u.fetch = (hw_fetch_req){ .replica_id = 2, .replica_epoch = 99, .max_wait_ms = 500, .min_bytes = 1, .max_bytes = 1 << 20, .isolation_level = 1, .n_parts = 5, .parts = parts };
	int n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	hdr_eq(&m, &d);
	assert_int_equal(d.u.fetch.replica_id, 2);
	assert_int_equal(d.u.fetch.replica_epoch, 99);
	assert_int_equal(d.u.fetch.max_wait_ms, 500);
	assert_int_equal(d.u.fetch.max_bytes, 1 << 20);
	assert_int_equal(d.u.fetch.isolation_level, 1);
	assert_int_equal(d.u.fetch.n_parts, 5);
	assert_memory_equal(d.u.fetch.parts, parts, sizeof parts);
}

static void test_fetch_resp_split(void **st)
{
	(void)st;
	static uint8_t recs[3][200000];
	hw_fetch_resp_part parts[3];
	size_t lens[3];
	for (int i = 0; i < 3; i++) {
		lens[i] = make_batches(recs[i], sizeof recs[i], 30 + (int)(rnd() % 30), 9000);
		parts[i] = (hw_fetch_resp_part){ .tp = { 9, (uint32_t)i }, .error = 0,
			.high_watermark = 1000 + i, .log_start_offset = 5, .diverging_epoch = -1,
			.diverging_end_offset = -1, .leader_id = 1, .leader_epoch = 4,
			.records = recs[i], .records_len = (uint32_t)lens[i] };
	}
	parts[1].records_len = 0;   /* an empty part in the middle */
	parts[1].records = NULL;
	lens[1] = 0;
	hw_msg m, d;
	hdr_fill(&m, HW_MSG_FETCH_RESP);
	m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 3, .parts = parts };

	/* without a split it cannot fit */
	assert_int_equal(encode(&m, frame, sizeof frame), -EMSGSIZE);

	size_t max_frames[] = { 9000 + 200, 16384, HW_WIRE_MAX_FRAME };
	for (int k = 0; k < 3; k++) {
		hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
		hw_wire_split sp = { 0 };
		size_t got[3] = { 0 };
		int frames = 0, seen_empty = 0;
		while (!sp.done) {
			static uint8_t hdr[HW_WIRE_MAX_FRAME];
			struct iovec iov[64];
			uint8_t isrec[64];
			int niov;
			int n = hw_wire_encode_iov(&tx, &m, &sp, max_frames[k], hdr, sizeof hdr, iov, 64,
						   &niov, isrec);
			assert_true(n > 0);
			assert_true((size_t)n <= max_frames[k]);
			size_t off = 0;
			for (int i = 0; i < niov; i++) {
				memcpy(frame + off, iov[i].iov_base, iov[i].iov_len);
				off += iov[i].iov_len;
			}
			assert_int_equal(off, (size_t)n);
			decode_ok(frame, n, &d);
			hw_wire_hdr h;
			hw_wire_drop why;
			assert_int_equal(hw_wire_decode_hdr(frame, (size_t)n, CLUSTER, &h, &why), 0);
			assert_int_equal(h.frag, frames);
			assert_int_equal(!!(h.flags & HW_WIRE_F_MORE), !sp.done);
			assert_true(d.u.fetch_resp.n_parts >= 1);
			for (int i = 0; i < d.u.fetch_resp.n_parts; i++) {
				const hw_fetch_resp_part *p = &d.u.fetch_resp.parts[i];
				uint32_t pi = p->tp.partition;
				assert_true(pi < 3);
				assert_int_equal(p->high_watermark, 1000 + pi);
				/* whole batches, contiguous with what came before */
				assert_int_equal(hw_wire_check_batches(p->records, p->records_len, NULL), 0);
				assert_true(got[pi] + p->records_len <= lens[pi]);
				if (p->records_len)
					assert_memory_equal(p->records, recs[pi] + got[pi], p->records_len);
				got[pi] += p->records_len;
				if (pi == 1)
					seen_empty = 1;
			}
			frames++;
			assert_true(frames < 1000);
		}
		for (int i = 0; i < 3; i++)
			assert_int_equal(got[i], lens[i]);
		assert_true(seen_empty);
		assert_true(frames >= 2);
		assert_int_equal(tx.seq, (uint32_t)frames);
	}

	/* a single batch larger than the frame goes as pieces (test_wire_piece.c);
	 * a frame without room even for a piece of HW_WIRE_PIECE_MIN bytes:
	 * -EMSGSIZE, nothing advanced */
	static uint8_t big[20000];
	make_batch(big, sizeof big, 0);
	hw_fetch_resp_part bp = parts[0];
	bp.records = big;
	bp.records_len = sizeof big;
	m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &bp };
	hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
	hw_wire_split sp = { 0 };
	assert_int_equal(hw_wire_encode(&tx, &m, &sp, frame, HW_WIRE_HDR_LEN + 4 + 50 + 12 + 255), -EMSGSIZE);
	assert_int_equal(sp.part, 0);
	assert_int_equal(tx.seq, 0);
	assert_true(hw_wire_encode(&tx, &m, &sp, frame, 16384) > 0);
	assert_int_equal(sp.piece_len, sizeof big);
	assert_int_equal(tx.seq, 1);
}

static void test_ofe_alter_pstate(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_ofe_part op[3];
	memset(op, 0, sizeof op);
	for (int i = 0; i < 3; i++) {
		op[i].tp = (hw_tp){ rnd(), rnd() };
		op[i].current_leader_epoch = (int32_t)rnd();
		op[i].leader_epoch = (int32_t)rnd();
	}
	hdr_fill(&m, HW_MSG_OFFSETS_FOR_EPOCH);
	m.u.ofe = (hw_ofe_req){ 3, 3, op };
	int n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_int_equal(d.u.ofe.replica_id, 3);
	assert_int_equal(d.u.ofe.n_parts, 3);
	assert_memory_equal(d.u.ofe.parts, op, sizeof op);

	hw_ofe_resp_part orp[2];
	memset(orp, 0, sizeof orp);
	orp[0].tp = (hw_tp){ 1, 1 };
	orp[0].leader_epoch = 5;
	orp[0].end_offset = 1234;
	orp[1].tp = (hw_tp){ 1, 2 };
	orp[1].error = HW_ERR_FENCED_LEADER_EPOCH;
	orp[1].leader_epoch = -1;
	orp[1].end_offset = -1;
	hdr_fill(&m, HW_MSG_OFFSETS_FOR_EPOCH_RESP);
	m.u.ofe_resp = (hw_ofe_resp){ 2, orp };
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_int_equal(d.u.ofe_resp.n_parts, 2);
	assert_memory_equal(d.u.ofe_resp.parts, orp, sizeof orp);

	hdr_fill(&m, HW_MSG_ALTER_PARTITION);
	hw_alter_partition_req *a = &m.u.alter;
	a->broker_id = 1;
	a->broker_epoch = 1LL << 40;
	a->tp = (hw_tp){ 4, 0 };
	a->leader_epoch = 3;
	a->partition_epoch = 9;
	a->new_isr = rand_idset();
	for (int i = 0; i < HW_MAX_RF; i++)
		a->new_isr_broker_epochs[i] = i < a->new_isr.n ? (int64_t)rnd() : -1;
	a->leader_recovery_state = HW_LRS_RECOVERING;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	hdr_eq(&m, &d);
	assert_int_equal(d.u.alter.broker_epoch, 1LL << 40);
	idset_eq(&d.u.alter.new_isr, &a->new_isr);
	for (int i = 0; i < HW_MAX_RF; i++)
		assert_int_equal(d.u.alter.new_isr_broker_epochs[i], a->new_isr_broker_epochs[i]);
	assert_int_equal(d.u.alter.leader_recovery_state, HW_LRS_RECOVERING);

	hdr_fill(&m, HW_MSG_ALTER_PARTITION_RESP);
	m.u.alter_resp = (hw_alter_partition_resp){ HW_ERR_INVALID_UPDATE_VERSION, { 4, 1 }, 2, 7, 11,
						    rand_idset(), 0, 5 };
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_int_equal(d.u.alter_resp.controller_epoch, 5); /* the controller epoch trailer */
	assert_int_equal(d.u.alter_resp.error, HW_ERR_INVALID_UPDATE_VERSION);
	assert_int_equal(d.u.alter_resp.partition_epoch, 11);
	idset_eq(&d.u.alter_resp.isr, &m.u.alter_resp.isr);

	for (int t = HW_MSG_PARTITION_STATE; t <= HW_MSG_PARTITION_STATE_ACK; t++) {
		hdr_fill(&m, t);
		hw_partition_state *s = &m.u.pstate;
		s->tp = (hw_tp){ 8, 2 };
		s->leader = -1;
		s->leader_epoch = 12;
		s->partition_epoch = 40;
		s->replicas = rand_idset();
		s->isr = rand_idset();
		s->elr = rand_idset();
		s->last_known_elr = rand_idset();
		s->leader_recovery_state = 1;
		s->min_insync_replicas = 2;
		s->unclean_leader_election = 1;
		strcpy(s->topic, "orders");
		s->leader_throttled = rand_idset();
		s->follower_throttled = rand_idset();
		n = encode(&m, frame, sizeof frame);
		decode_ok(frame, n, &d);
		hdr_eq(&m, &d);
		assert_int_equal(d.u.pstate.leader, -1);
		assert_int_equal(d.u.pstate.partition_epoch, 40);
		idset_eq(&d.u.pstate.replicas, &s->replicas);
		idset_eq(&d.u.pstate.isr, &s->isr);
		idset_eq(&d.u.pstate.elr, &s->elr);
		idset_eq(&d.u.pstate.last_known_elr, &s->last_known_elr);
		assert_int_equal(d.u.pstate.min_insync_replicas, 2);
		assert_string_equal(d.u.pstate.topic, "orders");
		idset_eq(&d.u.pstate.leader_throttled, &s->leader_throttled);
		idset_eq(&d.u.pstate.follower_throttled, &s->follower_throttled);

		/* the controller epoch trailer follows the throttle sets,
		 * which are then present even when empty */
		s->leader_throttled = (hw_idset){ 0 };
		s->follower_throttled = (hw_idset){ 0 };
		int bare = encode(&m, frame, sizeof frame);
		s->controller_epoch = 3;
		int with_epoch = encode(&m, frame, sizeof frame);
		assert_int_equal(with_epoch - bare, 1 + 1 + 4);
		decode_ok(frame, with_epoch, &d);
		assert_int_equal(d.u.pstate.controller_epoch, 3);
		assert_int_equal(d.u.pstate.leader_throttled.n + d.u.pstate.follower_throttled.n, 0);
		s->controller_epoch = 0;

		/* the throttle trailer is there iff a set is non-empty: one
		 * encoding per message, an explicit empty pair is refused */
		s->leader_throttled = (hw_idset){ .n = 1, .id = { 3 } };
		s->follower_throttled = (hw_idset){ 0 };
		int with = encode(&m, frame, sizeof frame);
		s->leader_throttled = (hw_idset){ 0 };
		int without = encode(&m, frame2, sizeof frame2);
		assert_int_equal(with - without, 1 + 4 + 1);
		decode_ok(frame2, without, &d);
		assert_int_equal(d.u.pstate.leader_throttled.n + d.u.pstate.follower_throttled.n, 0);
		frame[with - 6] = 0;                 /* leader set: n = 0 */
		frame[with - 5] = 0;                 /* follower set: n = 0 */
		uint32_t pl = (uint32_t)(with - 4 - HW_WIRE_HDR_LEN);
		frame[32] = (uint8_t)(pl >> 24);
		frame[33] = (uint8_t)(pl >> 16);
		frame[34] = (uint8_t)(pl >> 8);
		frame[35] = (uint8_t)pl;
		hw_wire_arena a;
		hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
		hw_wire_drop why = HW_WIRE_DROP__COUNT;
		assert_int_not_equal(hw_wire_decode(frame, (size_t)(with - 4), CLUSTER, &a, NULL, &d, &why, NULL), 0);
		assert_int_equal(why, HW_WIRE_DROP_BAD_FIELD);
	}
}

static void test_admin(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_topic_name names[2];
	strcpy(names[0].s, "a");
	strcpy(names[1].s, "orders-eu");
	hw_metadata_req mq = { 2, names };
	hdr_fill(&m, HW_MSG_METADATA);
	m.u.other = &mq;
	int n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	const hw_metadata_req *dmq = d.u.other;
	assert_int_equal(dmq->n_topics, 2);
	assert_string_equal(dmq->topics[1].s, "orders-eu");

	hw_describe_topic_req dq = { 0, NULL };
	hdr_fill(&m, HW_MSG_DESCRIBE_TOPIC);
	m.u.other = &dq;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_int_equal(((const hw_describe_topic_req *)d.u.other)->n_topics, 0);

	hw_broker_info br[3];
	memset(br, 0, sizeof br);
	for (int i = 0; i < 3; i++) {
		br[i].id = i + 1;
		br[i].broker_epoch = 100 + i;
		br[i].state = HW_BROKER_ACTIVE;
		snprintf(br[i].control_ep, sizeof br[i].control_ep, "udp:127.0.0.1:%d", 9100 + i);
		snprintf(br[i].data_ep, sizeof br[i].data_ep, "dpdk:port=net_memif%d", i);
		/* the Kafka listener trailer (brokers 1 and 3 have one) */
		if (i != 1) {
			br[i].n_listeners = 1;
			strcpy(br[i].listeners[0].name, "PLAINTEXT");
			snprintf(br[i].listeners[0].value, sizeof br[i].listeners[0].value, "127.0.0.1:%d", 9501 + i);
		}
	}
	hw_partition_meta pm[4];
	memset(pm, 0, sizeof pm);
	for (int i = 0; i < 4; i++) {
		pm[i].partition = (uint32_t)i;
		pm[i].leader = i % 3 + 1;
		pm[i].leader_epoch = 1;
		pm[i].partition_epoch = 2;
		pm[i].replicas = rand_idset();
		pm[i].isr = rand_idset();
		pm[i].elr = rand_idset();
		pm[i].high_watermark = 10 * i;
		pm[i].log_end_offset = 10 * i + 3;
		pm[i].log_start_offset = -1;
	}
	hw_config_kv cfg[2];
	memset(cfg, 0, sizeof cfg);
	strcpy(cfg[0].key, "min.insync.replicas");
	strcpy(cfg[0].value, "2");
	strcpy(cfg[1].key, "unclean.leader.election.enable");
	strcpy(cfg[1].value, "false");
	hw_topic_meta tm[2];
	memset(tm, 0, sizeof tm);
	strcpy(tm[0].name, "t0");
	tm[0].topic_id = 1;
	tm[0].n_parts = 4;
	tm[0].parts = pm;
	tm[0].n_configs = 2;
	tm[0].configs = cfg;
	strcpy(tm[1].name, "missing");
	tm[1].error = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
	hw_metadata_resp mr = { 0, 0, 42, 3, br, 2, tm, 6 };
	hdr_fill(&m, HW_MSG_METADATA_RESP);
	m.u.other = &mr;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	const hw_metadata_resp *dmr = d.u.other;
	assert_int_equal(dmr->metadata_offset, 42);
	assert_int_equal(dmr->controller_epoch, 6); /* the controller epoch trailer */
	assert_int_equal(dmr->n_brokers, 3);
	assert_memory_equal(dmr->brokers, br, sizeof br);
	assert_int_equal(dmr->n_topics, 2);
	assert_string_equal(dmr->topics[0].name, "t0");
	assert_int_equal(dmr->topics[0].n_parts, 4);
	for (int i = 0; i < 4; i++) {
		const hw_partition_meta *p = &dmr->topics[0].parts[i];
		assert_int_equal(p->leader, pm[i].leader);
		idset_eq(&p->replicas, &pm[i].replicas);
		idset_eq(&p->isr, &pm[i].isr);
		idset_eq(&p->elr, &pm[i].elr);
		assert_int_equal(p->high_watermark, pm[i].high_watermark);
		assert_int_equal(p->log_end_offset, pm[i].log_end_offset);
	}
	assert_int_equal(dmr->topics[0].n_configs, 2);
	assert_string_equal(dmr->topics[0].configs[1].value, "false");
	assert_int_equal(dmr->topics[1].error, HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);

	/* the two METADATA_RESP trailers alone (docs/wire.md): the controller
	 * epoch without any listener (an empty listener block precedes it),
	 * and listeners without the epoch */
	hw_broker_info br0[3];
	memcpy(br0, br, sizeof br);
	for (int i = 0; i < 3; i++)
		br0[i].n_listeners = 0;
	hw_metadata_resp mr0 = { 0, 0, 43, 3, br0, 0, NULL, 9 };
	m.u.other = &mr0;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	dmr = d.u.other;
	assert_int_equal(dmr->controller_epoch, 9);
	for (int i = 0; i < 3; i++)
		assert_int_equal(dmr->brokers[i].n_listeners, 0);
	mr.controller_epoch = 0;
	m.u.other = &mr;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	dmr = d.u.other;
	assert_int_equal(dmr->controller_epoch, 0);
	assert_int_equal(dmr->brokers[2].n_listeners, 1);
	assert_string_equal(dmr->brokers[2].listeners[0].value, "127.0.0.1:9503");

	hw_describe_topic_resp dr = { 0, 2, 1, tm };
	hdr_fill(&m, HW_MSG_DESCRIBE_TOPIC_RESP);
	m.u.other = &dr;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_int_equal(((const hw_describe_topic_resp *)d.u.other)->responder_id, 2);
	assert_int_equal(((const hw_describe_topic_resp *)d.u.other)->topics[0].parts[3].log_end_offset, 33);

	hw_create_topic_req cq;
	memset(&cq, 0, sizeof cq);
	strcpy(cq.name, "orders");
	cq.partitions = 6;
	cq.replication_factor = 3;
	cq.timeout_ms = 5000;
	cq.n_configs = 2;
	cq.configs = cfg;
	hdr_fill(&m, HW_MSG_CREATE_TOPIC);
	m.u.other = &cq;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	const hw_create_topic_req *dcq = d.u.other;
	assert_string_equal(dcq->name, "orders");
	assert_int_equal(dcq->partitions, 6);
	assert_int_equal(dcq->replication_factor, 3);
	assert_string_equal(dcq->configs[0].key, "min.insync.replicas");

	hw_create_topic_resp cr;
	memset(&cr, 0, sizeof cr);
	strcpy(cr.name, "orders");
	cr.error = HW_ERR_TOPIC_ALREADY_EXISTS;
	strcpy(cr.error_message, "Topic 'orders' already exists.");
	cr.partitions = -1;
	cr.replication_factor = -1;
	hdr_fill(&m, HW_MSG_CREATE_TOPIC_RESP);
	m.u.other = &cr;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_memory_equal(d.u.other, &cr, sizeof cr);

	hw_broker_register_req rq;
	memset(&rq, 0, sizeof rq);
	rq.broker_id = 2;
	rq.incarnation_id = 0xDEADBEEFCAFEF00Dull;
	rq.previous_broker_epoch = -1;
	rq.metadata_offset = 17;
	strcpy(rq.control_ep, "udp:127.0.0.1:9102");
	strcpy(rq.data_ep, "udp:127.0.0.1:9202");
	rq.n_listeners = 1;
	strcpy(rq.listeners[0].name, "PLAINTEXT");
	strcpy(rq.listeners[0].value, "127.0.0.1:9502");
	hdr_fill(&m, HW_MSG_BROKER_REGISTER);
	m.u.other = &rq;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_memory_equal(d.u.other, &rq, sizeof rq);

	hw_broker_heartbeat_req hq;
	memset(&hq, 0, sizeof hq);
	hq.broker_id = 2;
	hq.broker_epoch = 55;
	hq.metadata_offset = 18;
	hq.want_shutdown = 1;
	hdr_fill(&m, HW_MSG_BROKER_HEARTBEAT);
	m.u.other = &hq;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_memory_equal(d.u.other, &hq, sizeof hq);

	hw_broker_heartbeat_resp hr;
	memset(&hr, 0, sizeof hr);
	hr.broker_epoch = 55;
	hr.is_caught_up = 1;
	hr.should_shut_down = 1;
	hr.active_controller_id = -1;
	hdr_fill(&m, HW_MSG_BROKER_HEARTBEAT_RESP);
	m.u.other = &hr;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_memory_equal(d.u.other, &hr, sizeof hr);
	/* trailers: the controller epoch; NOT_CONTROLLER adds the active id */
	hr.controller_epoch = 7;
	int with_epoch = encode(&m, frame, sizeof frame);
	assert_int_equal(with_epoch, n + 4);
	decode_ok(frame, with_epoch, &d);
	assert_memory_equal(d.u.other, &hr, sizeof hr);
	hr.error = HW_ERR_NOT_CONTROLLER;
	hr.active_controller_id = 901;
	n = encode(&m, frame, sizeof frame);
	assert_int_equal(n, with_epoch + 4);
	decode_ok(frame, n, &d);
	assert_memory_equal(d.u.other, &hr, sizeof hr);
	hr.error = HW_ERR_NONE;
	hr.controller_epoch = 0;
	hr.active_controller_id = -1;

	/* AlterConfig round trip (`hiwater topic alter-config`) */
	hw_alter_config_req aq;
	memset(&aq, 0, sizeof aq);
	strcpy(aq.name, "payments");
	aq.n_configs = 2;
	aq.configs = cfg;
	hdr_fill(&m, HW_MSG_ALTER_CONFIG);
	m.u.other = &aq;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	const hw_alter_config_req *daq = d.u.other;
	assert_string_equal(daq->name, "payments");
	assert_int_equal(daq->n_configs, 2);
	assert_memory_equal(daq->configs, cfg, 2 * sizeof cfg[0]);
	hw_alter_config_resp ar;
	memset(&ar, 0, sizeof ar);
	strcpy(ar.name, "payments");
	ar.error = HW_ERR_INVALID_CONFIG;
	strcpy(ar.error_message, "min.insync.replicas must be >= 1");
	hdr_fill(&m, HW_MSG_ALTER_CONFIG_RESP);
	m.u.other = &ar;
	n = encode(&m, frame, sizeof frame);
	decode_ok(frame, n, &d);
	assert_memory_equal(d.u.other, &ar, sizeof ar);

	/* encoder rejects: NULL other, string without NUL, unknown type */
	hdr_fill(&m, HW_MSG_BROKER_HEARTBEAT_RESP);
	m.u.other = NULL;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	memset(cr.name, 'x', sizeof cr.name);
	hdr_fill(&m, HW_MSG_CREATE_TOPIC_RESP);
	m.u.other = &cr;
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
	hdr_fill(&m, 40);
	assert_int_equal(encode(&m, frame, sizeof frame), -EINVAL);
}

/* A set of valid frames of every type, for the hostile tests. */
static int sample_frames(uint8_t bufs[][4096], int *lens)
{
	static uint8_t recs[1500];
	int k = 0;
	hw_msg m;
	hdr_fill(&m, HW_MSG_PRODUCE);
	m.u.produce.acks = 1;
	m.u.produce.records_len = (uint32_t)make_batches(recs, sizeof recs, 3, 400);
	m.u.produce.records = recs;
	lens[k] = encode(&m, bufs[k], 4096);
	k++;
	hw_fetch_part fp = { { 1, 2 }, 3, 4, 5, 6, 7 };
	hdr_fill(&m, HW_MSG_FETCH);
	m.u.fetch = (hw_fetch_req){ .replica_id = 1, .replica_epoch = 2, .max_wait_ms = 3, .min_bytes = 4, .max_bytes = 5, .n_parts = 1, .parts = &fp };
	lens[k] = encode(&m, bufs[k], 4096);
	k++;
	hw_fetch_resp_part rp = { .tp = { 1, 2 }, .records = recs, .records_len = m.u.produce.records_len };
	rp.records_len = (uint32_t)make_batches(recs, sizeof recs, 2, 300);
	hdr_fill(&m, HW_MSG_FETCH_RESP);
	m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &rp };
	lens[k] = encode(&m, bufs[k], 4096);
	k++;
	hdr_fill(&m, HW_MSG_PARTITION_STATE);
	m.u.pstate.isr = rand_idset();
	strcpy(m.u.pstate.topic, "t");
	lens[k] = encode(&m, bufs[k], 4096);
	k++;
	hw_partition_meta pm = { .partition = 0 };
	hw_config_kv kv = { "k", "v" };
	hw_topic_meta tm = { .name = "t", .n_parts = 1, .parts = &pm, .n_configs = 1, .configs = &kv };
	hw_describe_topic_resp dr = { 0, 1, 1, &tm };
	hdr_fill(&m, HW_MSG_DESCRIBE_TOPIC_RESP);
	m.u.other = &dr;
	lens[k] = encode(&m, bufs[k], 4096);
	k++;
	hw_broker_heartbeat_req hq = { .broker_id = 1, .broker_epoch = 2, .metadata_offset = 3 };
	hdr_fill(&m, HW_MSG_BROKER_HEARTBEAT);
	m.u.other = &hq;
	lens[k] = encode(&m, bufs[k], 4096);
	k++;
	hw_alter_config_req aq = { .name = "t", .n_configs = 1, .configs = &kv };
	hdr_fill(&m, HW_MSG_ALTER_CONFIG);
	m.u.other = &aq;
	lens[k] = encode(&m, bufs[k], 4096);
	k++;
	for (int i = 0; i < k; i++)
		assert_true(lens[i] > 0);
	return k;
}

static void test_hostile(void **st)
{
	(void)st;
	static uint8_t bufs[8][4096];
	static uint8_t work[4096 + 16];
	int lens[8];
	int k = sample_frames(bufs, lens);
	hw_wire_stats stats;
	memset(&stats, 0, sizeof stats);
	uint64_t attempts = 0, accepted = 0;
	for (int f = 0; f < k; f++) {
		hw_msg d;
		hw_wire_arena a;
		/* every truncation is a drop (the payload length no longer matches) */
		for (int len = 0; len < lens[f]; len++) {
			hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
			hw_wire_drop why;
			memcpy(work, bufs[f], (size_t)len);
			assert_int_equal(hw_wire_decode(work, (size_t)len, CLUSTER, &a, NULL, &d, &why, &stats),
					 -EBADMSG);
			attempts++;
		}
		/* truncation with a consistent payload_len: a body-level drop */
		for (int len = HW_WIRE_HDR_LEN; len < lens[f]; len++) {
			memcpy(work, bufs[f], (size_t)len);
			uint32_t pl = (uint32_t)len - HW_WIRE_HDR_LEN;
			work[32] = (uint8_t)(pl >> 24);
			work[33] = (uint8_t)(pl >> 16);
			work[34] = (uint8_t)(pl >> 8);
			work[35] = (uint8_t)pl;
			hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
			hw_wire_drop why = HW_WIRE_DROP__COUNT;
			int rc = hw_wire_decode(work, (size_t)len, CLUSTER, &a, NULL, &d, &why, &stats);
			attempts++;
			if (rc == 0) {
				accepted++;
			} else {
				assert_int_equal(rc, -EBADMSG);
				assert_true(why < HW_WIRE_DROP__COUNT);
			}
		}
		/* every single-byte mutation: decodes or drops, never crashes */
		for (int i = 0; i < lens[f]; i++) {
			memcpy(work, bufs[f], (size_t)lens[f]);
			work[i] ^= (uint8_t)(1u << (rnd() % 8));
			hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
			int rc = hw_wire_decode(work, (size_t)lens[f], CLUSTER, &a, NULL, &d, NULL, &stats);
			attempts++;
			accepted += rc == 0;
		}
		/* trailing byte */
		memcpy(work, bufs[f], (size_t)lens[f]);
		work[lens[f]] = 0;
		uint32_t pl = (uint32_t)lens[f] + 1 - HW_WIRE_HDR_LEN;
		work[32] = (uint8_t)(pl >> 24);
		work[33] = (uint8_t)(pl >> 16);
		work[34] = (uint8_t)(pl >> 8);
		work[35] = (uint8_t)pl;
		hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
		hw_wire_drop why;
		assert_int_equal(hw_wire_decode(work, (size_t)lens[f] + 1, CLUSTER, &a, NULL, &d, &why, &stats),
				 -EBADMSG);
		/* where a tagged section may follow, a lone 0 is its count
		 * (docs/wire.md "Tagged fields": n = 0 is not canonical) */
		unsigned ty = (unsigned)bufs[f][8] << 8 | bufs[f][9];
		int tagged = ty == HW_MSG_PRODUCE || ty == HW_MSG_PRODUCE_RESP || ty == HW_MSG_FETCH ||
			     ty == HW_MSG_FETCH_RESP;
		assert_int_equal(why, tagged ? HW_WIRE_DROP_BAD_FIELD : HW_WIRE_DROP_TRAILING);
		attempts++;
		/* foreign cluster */
		hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
		assert_int_equal(hw_wire_decode(bufs[f], (size_t)lens[f], CLUSTER + 1, &a, NULL, &d, &why, &stats),
				 -EBADMSG);
		assert_int_equal(why, HW_WIRE_DROP_FOREIGN_CLUSTER);
		attempts++;
		/* arena too small */
		uint8_t tiny[8];
		hw_wire_arena_init(&a, tiny, sizeof tiny);
		int rc = hw_wire_decode(bufs[f], (size_t)lens[f], CLUSTER, &a, NULL, &d, &why, &stats);
		attempts++;
		if (rc)
			assert_int_equal(why, HW_WIRE_DROP_NO_SCRATCH);
		else
			accepted++;
	}
	/* oversized and random garbage */
	static uint8_t huge[HW_WIRE_MAX_FRAME + 100];
	memcpy(huge, bufs[0], (size_t)lens[0]);
	hw_wire_drop why;
	hw_wire_arena a;
	hw_msg d;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	assert_int_equal(hw_wire_decode(huge, sizeof huge, CLUSTER, &a, NULL, &d, &why, &stats), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_OVERSIZED);
	attempts++;
	for (int i = 0; i < 20000; i++) {
		size_t len = rnd() % 600;
		for (size_t j = 0; j < len; j++)
			work[j] = (uint8_t)rnd();
		if (len >= 36 && (rnd() & 1)) {   /* valid header, random body */
			memcpy(work, bufs[rnd() % (unsigned)k], 12);
			uint32_t pl = (uint32_t)len - HW_WIRE_HDR_LEN;
			work[32] = (uint8_t)(pl >> 24);
			work[33] = (uint8_t)(pl >> 16);
			work[34] = (uint8_t)(pl >> 8);
			work[35] = (uint8_t)pl;
		}
		hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
		accepted += hw_wire_decode(work, len, CLUSTER, &a, NULL, &d, NULL, &stats) == 0;
		attempts++;
	}
	/* every attempt was either delivered or counted as a drop */
	assert_int_equal(stats.rx_frames + hw_wire_stats_total_drops(&stats), attempts);
	assert_int_equal(stats.rx_frames, accepted);
	assert_true(stats.drops[HW_WIRE_DROP_TRUNCATED] > 0);
	assert_true(stats.drops[HW_WIRE_DROP_LEN_MISMATCH] > 0);
	assert_true(stats.drops[HW_WIRE_DROP_BAD_MAGIC] > 0);
	print_message("hostile: %llu attempts, %llu accepted\n", (unsigned long long)attempts,
		      (unsigned long long)accepted);
	for (int i = 0; i < HW_WIRE_DROP__COUNT; i++)
		if (stats.drops[i])
			print_message("  %-16s %llu\n", hw_wire_drop_name(i), (unsigned long long)stats.drops[i]);
}

static void test_replay(void **st)
{
	(void)st;
	static hw_wire_replay r;
	hw_wire_replay_init(&r);
	hw_wire_hdr h = { .src = 5, .incarnation = 100, .seq = 10 };
	hw_wire_drop why;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), 0);
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_REPLAYED);
	/* out of order inside the window is fine, once */
	h.seq = 12;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), 0);
	h.seq = 11;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), 0);
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), -EBADMSG);
	/* far ahead, then something behind the window */
	h.seq = 10 + 5000;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), 0);
	h.seq = 12;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_REPLAYED);
	/* slots the window moved past are clear again */
	h.seq = 5000 + 10 + HW_WIRE_REPLAY_WINDOW - 1;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), 0);
	/* sequence wrap */
	h.seq = 0xFFFFFFFFu;
	h.incarnation = 101;       /* restart resets */
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), 0);
	h.seq = 0;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), 0);
	h.seq = 0xFFFFFFFFu;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), -EBADMSG);
	/* the old incarnation is stale */
	h.incarnation = 100;
	h.seq = 99999;
	assert_int_equal(hw_wire_replay_check(&r, &h, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_STALE_SENDER);
	/* many senders: LRU eviction keeps working, other senders unaffected */
	for (int s = 0; s < 3 * HW_WIRE_REPLAY_PEERS; s++) {
		hw_wire_hdr g = { .src = 1000 + s, .incarnation = 1, .seq = 1 };
		assert_int_equal(hw_wire_replay_check(&r, &g, &why), 0);
		assert_int_equal(hw_wire_replay_check(&r, &g, &why), -EBADMSG);
	}
	/* random: a fresh permutation of seqs within the window is all accepted once */
	hw_wire_replay_init(&r);
	uint32_t seqs[512];
	for (int i = 0; i < 512; i++)
		seqs[i] = (uint32_t)i + 1000;
	for (int i = 511; i > 0; i--) {
		int j = (int)(rnd() % (unsigned)(i + 1));
		uint32_t t = seqs[i];
		seqs[i] = seqs[j];
		seqs[j] = t;
	}
	for (int i = 0; i < 512; i++) {
		hw_wire_hdr g = { .src = 9, .incarnation = 3, .seq = seqs[i] };
		assert_int_equal(hw_wire_replay_check(&r, &g, &why), 0);
	}
	for (int i = 0; i < 512; i++) {
		hw_wire_hdr g = { .src = 9, .incarnation = 3, .seq = seqs[i] };
		assert_int_equal(hw_wire_replay_check(&r, &g, &why), -EBADMSG);
	}
}

/* Version 2: one node, several reactors, each its own (incarnation, seq)
 * stream; receivers keep a replay window per (src, stream). */
static void test_streams(void **st)
{
	(void)st;
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE_RESP;
	m.src = 4;
	m.dst = 2;
	m.u.produce_resp.base_offset = 1;
	uint8_t a[256], b[256], arena_buf[4096];
	uint32_t stream = 1 + rnd() % HW_WIRE_STREAM_MAX;
	hw_wire_tx t0 = { CLUSTER, 50, 7, 0 }, tk = { CLUSTER, 60, 7, (uint8_t)stream };
	int la = hw_wire_encode(&t0, &m, NULL, a, sizeof a);
	int lb = hw_wire_encode(&tk, &m, NULL, b, sizeof b);
	assert_true(la > 0 && lb == la);
	assert_int_equal(a[2], 1);                  /* stream 0: version 1 bytes */
	assert_int_equal(b[2], 2);
	assert_int_equal(b[3] >> HW_WIRE_STREAM_SHIFT, stream);
	hw_wire_arena ar;
	hw_wire_hdr h0, hk;
	hw_msg d;
	hw_wire_drop why;
	hw_wire_arena_init(&ar, arena_buf, sizeof arena_buf);
	assert_int_equal(hw_wire_decode(a, (size_t)la, CLUSTER, &ar, &h0, &d, &why, NULL), 0);
	assert_int_equal(h0.stream, 0);
	hw_wire_arena_init(&ar, arena_buf, sizeof arena_buf);
	assert_int_equal(hw_wire_decode(b, (size_t)lb, CLUSTER, &ar, &hk, &d, &why, NULL), 0);
	assert_int_equal(hk.stream, stream);
	assert_int_equal(hk.flags, 0);              /* the stream is not a flag */
	assert_int_equal(d.u.produce_resp.base_offset, 1);
	/* a stream in a version-1 frame is a reserved flag bit */
	b[2] = 1;
	assert_int_equal(hw_wire_decode_hdr(b, (size_t)lb, CLUSTER, &hk, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_FLAGS);
	/* streams past the 4 bits are refused by the encoder */
	hw_wire_tx bad = { CLUSTER, 1, 1, HW_WIRE_STREAM_MAX + 1 };
	assert_int_equal(hw_wire_encode(&bad, &m, NULL, a, sizeof a), -EINVAL);
	/* two streams of one node: different incarnations and interleaved seqs
	 * are both fresh; a replay is caught within its own stream */
	static hw_wire_replay r;
	hw_wire_replay_init(&r);
	for (uint32_t s = 100; s < 100 + 3 * HW_WIRE_REPLAY_WINDOW; s++) {
		hw_wire_hdr x = { .src = 4, .incarnation = 50, .seq = s, .stream = 0 };
		hw_wire_hdr y = { .src = 4, .incarnation = 60, .seq = 9000 + s, .stream = (uint8_t)stream };
		assert_int_equal(hw_wire_replay_check(&r, &x, &why), 0);
		assert_int_equal(hw_wire_replay_check(&r, &y, &why), 0);
		if (s % 97 == 0) {
			assert_int_equal(hw_wire_replay_check(&r, &y, &why), -EBADMSG);
			assert_int_equal(why, HW_WIRE_DROP_REPLAYED);
		}
	}
	/* relaying a frame that was not its response's last keeps MORE */
	hw_msg fr;
	memset(&fr, 0, sizeof fr);
	fr.type = HW_MSG_FETCH_RESP;
	fr.src = 4;
	fr.dst = 2;
	fr.u.fetch_resp.more = 1;
	hw_wire_split sp = { 0 };
	int lf = hw_wire_encode(&tk, &fr, &sp, a, sizeof a);
	assert_true(lf > 0);
	assert_int_equal(sp.done, 1);                        /* one frame: the split is over */
	assert_int_equal(a[3] & HW_WIRE_F_MORE, HW_WIRE_F_MORE);
	hw_wire_arena_init(&ar, arena_buf, sizeof arena_buf);
	assert_int_equal(hw_wire_decode(a, (size_t)lf, CLUSTER, &ar, &hk, &d, &why, NULL), 0);
	assert_int_equal(d.u.fetch_resp.more, 1);
	fr.u.fetch_resp.more = 0;
	memset(&sp, 0, sizeof sp);
	lf = hw_wire_encode(&tk, &fr, &sp, a, sizeof a);
	assert_true(lf > 0);
	assert_int_equal(a[3] & HW_WIRE_F_MORE, 0);
	/* the older incarnation is stale only within its stream */
	hw_wire_hdr old = { .src = 4, .incarnation = 40, .seq = 1, .stream = (uint8_t)stream };
	assert_int_equal(hw_wire_replay_check(&r, &old, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_STALE_SENDER);
}

int main(void)
{
	hw_test_seed_init("test_wire");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_produce),
		cmocka_unit_test(test_fetch),
		cmocka_unit_test(test_fetch_resp_split),
		cmocka_unit_test(test_ofe_alter_pstate),
		cmocka_unit_test(test_admin),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_streams),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
