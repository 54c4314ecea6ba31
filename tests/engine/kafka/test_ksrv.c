/* test_ksrv.c — the Kafka server's request FIFO and engine bridge
 * (engine/kafka/hw_ksrv.h) with a fake broker that holds engine requests
 * until the test answers them:
 *   - responses leave in request order although the engine answers later
 *     ones first (Produce held, ApiVersions and Metadata behind it);
 *   - acks=0 produce sends its PRODUCE (appended as acks=1) but no
 *     response; the next request waits for the append; an error the engine
 *     answers, or an unknown topic, closes the connection;
 *   - a multi-partition Produce sends one PRODUCE per partition and joins
 *     the answers (partition errors kept per partition);
 *   - a Fetch split over two engine answers (two reactors) goes out once,
 *     after both, with each partition's records;
 *   - Fetch v11's rack_id reaches the engine fetch and the engine's
 *     preferred read replica comes back as preferred_read_replica;
 *   - a group request left pending (hw_ksrv_complete later) keeps its place;
 *   - a closed connection's pending requests are freed when answered;
 *   - a control-plane request that is never answered times out;
 *   - old versions (docs/kafka.md "Versions"): Produce v0-2 decode without a
 *     transactional_id and answer in their layouts; a MessageSet of magic 0
 *     or 1 is UNSUPPORTED_FOR_MESSAGE_FORMAT (v0-2) or INVALID_RECORD (v3+)
 *     for its partition only, zstd below v7 UNSUPPORTED_COMPRESSION_TYPE;
 *     Fetch v0-3 answer a hosted partition UNSUPPORTED_VERSION at once
 *     (no engine fetch), an unknown topic UNKNOWN_TOPIC_OR_PARTITION, in the
 *     v0 (no throttle) and v1-3 layouts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hw_admin_msg.h"
#include "hw_err.h"
#include "hw_ksrv.h"

#define MAXQ 64
static hw_msg held[MAXQ];
static hw_fetch_part held_fp[MAXQ][8];
static int n_held;
static int64_t now_ns_v;
static int ready_calls;
static hw_kreq *group_req;

static int f_submit(void *ctx, const hw_msg *m)
{
	(void)ctx;
	assert_true(n_held < MAXQ);
	held[n_held] = *m;
	if (m->type == HW_MSG_FETCH) {
		assert_true(m->u.fetch.n_parts <= 8);
		memcpy(held_fp[n_held], m->u.fetch.parts, m->u.fetch.n_parts * sizeof(hw_fetch_part));
		held[n_held].u.fetch.parts = held_fp[n_held];
	}
	if (m->type == HW_MSG_PRODUCE)
		held[n_held].u.produce.records = NULL; /* borrowed: not kept */
	n_held++;
	return 0;
}

static int f_topic_id(void *ctx, const char *topic, uint32_t *id)
{
	(void)ctx;
	if (strcmp(topic, "t"))
		return -ENOENT;
	*id = 7;
	return 0;
}

static int f_part_info(void *ctx, hw_tp tp, hw_rm_part_info *out)
{
	(void)ctx;
	(void)tp;
	(void)out;
	return -ENOENT;
}

static int64_t f_pid(void *ctx)
{
	(void)ctx;
	return 1;
}

static void f_ready(void *ctx, hw_kconn *c)
{
	(void)ctx;
	(void)c;
	ready_calls++;
}

static int64_t f_now(void *ctx)
{
	(void)ctx;
	return now_ns_v;
}

static char group_host[64], group_client[64];

static int f_group(void *ctx, hw_kreq *req, const hw_kafka_req_hdr *h, hw_kr *r, hw_kw *w)
{
	(void)ctx;
	(void)r;
	(void)w;
	(void)hw_kstr_copy(h->client_host, group_host, sizeof group_host);
	(void)hw_kstr_copy(h->client_id, group_client, sizeof group_client);
	group_req = req;
	return 1; /* answered later */
}

static hw_ksrv *srv;

static hw_ksrv *mk(int with_group)
{
	hw_ksrv_config cfg = { .node_id = 1, .auto_create_topics = 0, .socket_request_max_bytes = 1 << 20 };
	hw_ksrv_ops ops = { .submit = f_submit, .topic_id = f_topic_id, .part_info = f_part_info,
			    .alloc_producer_id = f_pid, .conn_ready = f_ready, .now_ns = f_now,
			    .group_request = with_group ? f_group : NULL };
	n_held = 0;
	ready_calls = 0;
	group_req = NULL;
	assert_int_equal(hw_ksrv_create(&cfg, &ops, NULL, &srv), 0);
	return srv;
}

/* ---- request builders --------------------------------------------------- */
static void frame(hw_kw *w, int16_t key, int16_t ver, int32_t corr, const hw_kw *body)
{
	hw_kafka_req_hdr h = { key, ver, corr, { "t", 1 }, 0, 0, { NULL, -1 } };
	size_t at = hw_kw_skip(w, 4);
	hw_kafka_req_hdr_encode(w, &h);
	hw_kw_raw(w, body->buf, body->len);
	hw_kw_patch_i32(w, at, (int32_t)(w->len - at - 4));
}

static const uint8_t batch[61] = { [11] = 49, [16] = 2 };

static void produce_body(hw_kw *b, int16_t acks, const char *topic, int nparts)
{
	hw_kw_init(b, 0);
	hw_kw_nstr(b, NULL, 0);
	hw_kw_i16(b, acks);
	hw_kw_i32(b, 1000);
	hw_kw_i32(b, 1);
	hw_kw_str(b, topic, strlen(topic));
	hw_kw_i32(b, nparts);
	for (int p = 0; p < nparts; p++) {
		hw_kw_i32(b, p);
		hw_kw_nbytes_v(b, false, batch, sizeof batch);
	}
}

/* A MessageSet of one message of magic 0 or 1 (value "x", key null). */
static size_t old_message(uint8_t *out, int magic)
{
	hw_kw w;
	hw_kw_init(&w, 0);
	hw_kw_i64(&w, 0);
	hw_kw_i32(&w, magic ? 23 : 15);
	hw_kw_i32(&w, 0); /* crc: not checked before the magic */
	hw_kw_i8(&w, (int8_t)magic);
	hw_kw_i8(&w, 0);
	if (magic)
		hw_kw_i64(&w, 1700000000000);
	hw_kw_i32(&w, -1);
	hw_kw_i32(&w, 1);
	hw_kw_i8(&w, 'x');
	size_t n = w.len;
	memcpy(out, w.buf, n);
	hw_kw_free(&w);
	return n;
}

/* A Produce body of version ver to topic "t": partition i carries recs[i]. */
static void produce_body_v(hw_kw *b, int16_t ver, int nparts, const uint8_t *const *recs, const size_t *lens)
{
	hw_kw_init(b, 0);
	if (ver >= 3)
		hw_kw_nstr(b, NULL, 0);
	hw_kw_i16(b, -1);
	hw_kw_i32(b, 1000);
	hw_kw_i32(b, 1);
	hw_kw_str(b, "t", 1);
	hw_kw_i32(b, nparts);
	for (int p = 0; p < nparts; p++) {
		hw_kw_i32(b, p);
		hw_kw_nbytes_v(b, false, recs[p], lens[p]);
	}
}

static void input(hw_kconn *c, int16_t key, int16_t ver, int32_t corr, hw_kw *body, int want)
{
	hw_kw w;
	hw_kw_init(&w, 0);
	frame(&w, key, ver, corr, body);
	assert_int_equal(hw_kconn_input(c, w.buf, w.len), want);
	hw_kw_free(&w);
	hw_kw_free(body);
}

static void empty(hw_kw *b) { hw_kw_init(b, 0); }

/* Correlation ids of the complete frames in c's output (consumed). */
static int out_corrs(hw_kconn *c, int32_t *ids, int max)
{
	const uint8_t *p;
	size_t n = hw_kconn_output(c, &p), off = 0;
	int k = 0;
	while (off + 8 <= n && k < max) {
		uint32_t fs = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
		hw_kr r;
		hw_kr_init(&r, p + off + 4, 4);
		ids[k++] = hw_kr_i32(&r);
		off += 4 + fs;
	}
	assert_int_equal(off, n);
	hw_kconn_output_done(c, n);
	return k;
}

static void answer_produce(int i, int16_t err, int64_t base)
{
	hw_msg a = { .type = HW_MSG_PRODUCE_RESP, .dst = HW_KSRV_NODE, .correlation_id = held[i].correlation_id };
	a.u.produce_resp = (hw_produce_resp){ .tp = held[i].u.produce.tp, .error = err, .base_offset = base };
	assert_int_equal(hw_ksrv_on_msg(srv, &a), 1);
}

/* ---- tests ----------------------------------------------------------------- */
static void test_order(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kw b;
	produce_body(&b, -1, "t", 1);
	input(c, 0, 7, 1, &b, 0); /* held */
	empty(&b);
	input(c, 18, 2, 2, &b, 0); /* immediate, but behind 1 */
	int32_t ids[8];
	assert_int_equal(out_corrs(c, ids, 8), 0);
	assert_int_equal(n_held, 1);
	assert_int_equal(held[0].type, HW_MSG_PRODUCE);
	assert_int_equal(held[0].u.produce.acks, -1);
	assert_int_equal(held[0].u.produce.tp.topic_id, 7);
	assert_int_equal(held[0].src, HW_KSRV_NODE);
	answer_produce(0, 0, 42);
	assert_int_equal(out_corrs(c, ids, 8), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_true(ready_calls > 0);
	/* a late duplicate answer is counted, not applied */
	answer_produce(0, 0, 42);
	assert_int_equal(hw_ksrv_get_stats(srv)->late_answers, 1);
	assert_int_equal(hw_ksrv_get_stats(srv)->api[hw_kafka_api_index(0)].requests, 1);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

static void test_acks0(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kw b;
	produce_body(&b, 0, "t", 2);
	input(c, 0, 7, 1, &b, 0);
	assert_int_equal(n_held, 2);
	/* appended as acks=1 so that the engine's answer can show an error */
	assert_int_equal(held[0].u.produce.acks, 1);
	assert_true(held[0].correlation_id != 0);
	empty(&b);
	input(c, 18, 0, 2, &b, 0);
	int32_t ids[4];
	assert_int_equal(out_corrs(c, ids, 4), 0); /* the ApiVersions waits for the append */
	answer_produce(0, 0, 10);
	answer_produce(1, 0, 11);
	assert_int_equal(out_corrs(c, ids, 4), 1); /* only the ApiVersions: acks=0 has no response */
	assert_int_equal(ids[0], 2);
	assert_false(hw_kconn_close_wanted(c));

	/* an error the engine finds (not the leader any more) closes the
	 * connection once the request is at the head; what follows is not
	 * answered and no more input is read */
	produce_body(&b, 0, "t", 1);
	input(c, 0, 7, 3, &b, 0);
	empty(&b);
	input(c, 18, 0, 4, &b, 0);
	answer_produce(2, HW_ERR_NOT_LEADER_OR_FOLLOWER, -1);
	assert_true(hw_kconn_close_wanted(c));
	assert_int_equal(hw_ksrv_get_stats(srv)->closes[HW_KSRV_CLOSE_ACKS0_ERROR], 1);
	assert_int_equal(out_corrs(c, ids, 4), 0);
	assert_false(hw_kconn_wants_input(c));
	empty(&b);
	input(c, 18, 0, 5, &b, 0);
	assert_int_equal(out_corrs(c, ids, 4), 0);
	hw_kconn_close(c, HW_KSRV_CLOSE_ACKS0_ERROR);

	c = hw_kconn_open(srv, NULL);
	produce_body(&b, 0, "nosuch", 1);
	input(c, 0, 7, 6, &b, -EPIPE); /* found before the engine: closes at once */
	assert_int_equal(hw_ksrv_get_stats(srv)->closes[HW_KSRV_CLOSE_ACKS0_ERROR], 2);
	hw_kconn_close(c, HW_KSRV_CLOSE_BAD_REQUEST);
	hw_ksrv_destroy(srv);
}

static void test_multi_produce(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kw b;
	produce_body(&b, 1, "t", 3);
	input(c, 0, 7, 9, &b, 0);
	assert_int_equal(n_held, 3);
	answer_produce(2, 0, 300);
	answer_produce(0, 0, 100);
	int32_t ids[4];
	assert_int_equal(out_corrs(c, ids, 4), 0);
	answer_produce(1, HW_ERR_NOT_ENOUGH_REPLICAS, -1);
	const uint8_t *p;
	size_t n = hw_kconn_output(c, &p);
	hw_kr r;
	hw_kr_init(&r, p, n);
	(void)hw_kr_i32(&r);
	assert_int_equal(hw_kr_i32(&r), 9);
	assert_int_equal(hw_kr_array(&r), 1);
	assert_true(hw_kstr_eq(hw_kr_str(&r), "t"));
	assert_int_equal(hw_kr_array(&r), 3);
	int16_t want_err[3] = { 0, HW_ERR_NOT_ENOUGH_REPLICAS, 0 };
	int64_t want_base[3] = { 100, -1, 300 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hw_kr_i32(&r), i);
		assert_int_equal(hw_kr_i16(&r), want_err[i]);
		assert_int_equal(hw_kr_i64(&r), want_base[i]);
		(void)hw_kr_i64(&r); /* log_append_time */
		(void)hw_kr_i64(&r); /* log_start_offset (v5+) */
	}
	assert_int_equal(hw_kr_i32(&r), 0); /* throttle */
	assert_int_equal(r.err, 0);
	assert_int_equal(r.off, n);
	assert_int_equal(hw_ksrv_get_stats(srv)->api[hw_kafka_api_index(0)].errors, 1);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

static void test_fetch_split(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kw b;
	hw_kw_init(&b, 0);
	hw_kw_i32(&b, -1);
	hw_kw_i32(&b, 500);
	hw_kw_i32(&b, 1);
	hw_kw_i32(&b, 1 << 20);
	hw_kw_i8(&b, 0);
	hw_kw_i32(&b, 0);
	hw_kw_i32(&b, -1);
	hw_kw_i32(&b, 1);
	hw_kw_str(&b, "t", 1);
	hw_kw_i32(&b, 2);
	for (int p = 0; p < 2; p++) {
		hw_kw_i32(&b, p);
		hw_kw_i32(&b, -1);
		hw_kw_i64(&b, 0);
		hw_kw_i64(&b, -1);
		hw_kw_i32(&b, 1 << 20);
	}
	hw_kw_i32(&b, 0);
	hw_kw_str(&b, "", 0);
	input(c, 1, 11, 5, &b, 0);
	assert_int_equal(n_held, 1);
	assert_int_equal(held[0].u.fetch.replica_id, -1);
	assert_int_equal(held[0].u.fetch.n_parts, 2);
	/* two reactors answer one partition each */
	for (int p = 1; p >= 0; p--) {
		hw_fetch_resp_part rp = { .tp = held[0].u.fetch.parts[p].tp, .high_watermark = 10 + p,
					  .records = batch, .records_len = sizeof batch };
		hw_msg a = { .type = HW_MSG_FETCH_RESP, .dst = HW_KSRV_NODE, .correlation_id = held[0].correlation_id };
		a.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &rp };
		assert_int_equal(hw_ksrv_on_msg(srv, &a), 1);
		int32_t ids[2];
		assert_int_equal(out_corrs(c, ids, 2), p == 0 ? 1 : 0);
	}
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

/* Fetch v11 (docs/racks.md): rack_id reaches the engine fetch, and the
 * engine's preferred read replica comes back as preferred_read_replica of
 * its partition (-1 for the other). */
static void test_fetch_rack(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kw b;
	hw_kw_init(&b, 0);
	hw_kw_i32(&b, -1);
	hw_kw_i32(&b, 0);
	hw_kw_i32(&b, 1);
	hw_kw_i32(&b, 1 << 20);
	hw_kw_i8(&b, 0);
	hw_kw_i32(&b, 0);
	hw_kw_i32(&b, -1);
	hw_kw_i32(&b, 1);
	hw_kw_str(&b, "t", 1);
	hw_kw_i32(&b, 2);
	for (int p = 0; p < 2; p++) {
		hw_kw_i32(&b, p);
		hw_kw_i32(&b, -1);
		hw_kw_i64(&b, 0);
		hw_kw_i64(&b, -1);
		hw_kw_i32(&b, 1 << 20);
	}
	hw_kw_i32(&b, 0);
	hw_kw_str(&b, "rack-b", 6);
	input(c, 1, 11, 6, &b, 0);
	assert_int_equal(n_held, 1);
	assert_string_equal(held[0].u.fetch.rack_id, "rack-b");
	hw_fetch_resp_part rp[2];
	memset(rp, 0, sizeof rp);
	for (int p = 0; p < 2; p++) {
		rp[p].tp = held[0].u.fetch.parts[p].tp;
		rp[p].high_watermark = 7;
	}
	hw_fetch_preferred pr = { .tp = rp[1].tp, .replica = 3 };
	hw_msg a = { .type = HW_MSG_FETCH_RESP, .dst = HW_KSRV_NODE, .correlation_id = held[0].correlation_id };
	a.u.fetch_resp = (hw_fetch_resp){ .n_parts = 2, .parts = rp, .n_preferred = 1, .preferred = &pr };
	assert_int_equal(hw_ksrv_on_msg(srv, &a), 1);
	const uint8_t *o;
	size_t n = hw_kconn_output(c, &o);
	hw_kr r;
	hw_kr_init(&r, o, n);
	(void)hw_kr_i32(&r);                    /* size */
	assert_int_equal(hw_kr_i32(&r), 6);     /* correlation id */
	assert_int_equal(hw_kr_i32(&r), 0);     /* throttle */
	assert_int_equal(hw_kr_i16(&r), 0);
	(void)hw_kr_i32(&r);                    /* session id */
	assert_int_equal(hw_kr_array(&r), 1);
	(void)hw_kr_str(&r);
	assert_int_equal(hw_kr_array(&r), 2);
	for (int p = 0; p < 2; p++) {
		assert_int_equal(hw_kr_i32(&r), p);
		assert_int_equal(hw_kr_i16(&r), 0);
		assert_int_equal(hw_kr_i64(&r), 7);  /* high watermark */
		(void)hw_kr_i64(&r);                 /* last stable offset */
		(void)hw_kr_i64(&r);                 /* log start offset */
		assert_int_equal(hw_kr_array(&r), 0); /* aborted transactions */
		assert_int_equal(hw_kr_i32(&r), p ? 3 : -1); /* preferred_read_replica */
		(void)hw_kr_nbytes(&r);
	}
	assert_int_equal(r.err, 0);
	assert_int_equal(r.off, n);
	hw_kconn_output_done(c, n);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

static void test_group_pending_and_close(void **state)
{
	(void)state;
	mk(1);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kw b;
	empty(&b);
	hw_kw_str(&b, "g", 1);
	hw_kw_i8(&b, 0);
	input(c, 10, 2, 1, &b, 0); /* FindCoordinator: pending in the group handler */
	assert_non_null(group_req);
	empty(&b);
	input(c, 18, 0, 2, &b, 0);
	int32_t ids[4];
	assert_int_equal(out_corrs(c, ids, 4), 0);
	hw_kw_i16(hw_kreq_writer(group_req), 0);
	hw_ksrv_complete(srv, group_req);
	assert_int_equal(out_corrs(c, ids, 4), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	/* close with a Produce pending: freed when its answer arrives (ASan) */
	produce_body(&b, -1, "t", 1);
	input(c, 0, 7, 3, &b, 0);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	answer_produce(n_held - 1, 0, 1);
	assert_int_equal(hw_ksrv_get_stats(srv)->connections_open, 0);
	hw_ksrv_destroy(srv);
}

/* Produce v9 (flexible): header v2 and body with unknown tags, answered with
 * response header v1 and compact fields; the connection's peer reaches the
 * group handler beside the client id (DescribeGroups' client_host). */
static void test_flexible_produce_and_peer(void **state)
{
	(void)state;
	mk(1);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kconn_set_peer(c, "/10.1.2.3");
	hw_kw b, w;
	hw_kw_init(&b, 0);
	hw_kw_cnstr(&b, NULL, 0);
	hw_kw_i16(&b, -1);
	hw_kw_i32(&b, 1000);
	hw_kw_uvarint(&b, 2);
	hw_kw_cstr(&b, "t", 1);
	hw_kw_uvarint(&b, 3);
	for (int p = 0; p < 2; p++) {
		hw_kw_i32(&b, p);
		hw_kw_nbytes_v(&b, true, batch, sizeof batch);
		hw_kw_uvarint(&b, 1); /* one unknown tag: 7, 2 bytes */
		hw_kw_uvarint(&b, 7);
		hw_kw_uvarint(&b, 2);
		hw_kw_i16(&b, 0);
	}
	hw_kw_tags_none(&b);
	hw_kw_uvarint(&b, 1); /* body: tag 1000, 0 bytes */
	hw_kw_uvarint(&b, 1000);
	hw_kw_uvarint(&b, 0);
	hw_kw_init(&w, 0);
	hw_kafka_req_hdr h = { 0, 9, 21, { "t", 1 }, 0, 0, { NULL, -1 } };
	size_t at = hw_kw_skip(&w, 4);
	hw_kafka_req_hdr_encode(&w, &h); /* header v2: an empty tagged section */
	hw_kw_raw(&w, b.buf, b.len);
	hw_kw_patch_i32(&w, at, (int32_t)(w.len - at - 4));
	assert_int_equal(hw_kconn_input(c, w.buf, w.len), 0);
	hw_kw_free(&w);
	hw_kw_free(&b);
	assert_int_equal(n_held, 2);
	assert_int_equal(held[0].u.produce.records_len, sizeof batch);
	answer_produce(0, 0, 100);
	answer_produce(1, 0, 200);
	const uint8_t *p;
	size_t n = hw_kconn_output(c, &p);
	hw_kr r;
	hw_kr_init(&r, p, n);
	(void)hw_kr_i32(&r);
	assert_int_equal(hw_kr_i32(&r), 21);
	hw_kr_tags(&r, NULL, NULL); /* response header v1 */
	assert_int_equal(hw_kr_carray(&r), 1);
	assert_true(hw_kstr_eq(hw_kr_cstr(&r), "t"));
	assert_int_equal(hw_kr_carray(&r), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(hw_kr_i32(&r), i);
		assert_int_equal(hw_kr_i16(&r), 0);
		assert_int_equal(hw_kr_i64(&r), 100 * (i + 1));
		(void)hw_kr_i64(&r);                     /* log_append_time */
		(void)hw_kr_i64(&r);                     /* log_start_offset */
		assert_int_equal(hw_kr_carray(&r), 0);   /* record_errors */
		assert_int_equal(hw_kr_cnstr(&r).len, -1); /* error_message */
		assert_int_equal(hw_kr_uvarint(&r), 0);  /* tags */
	}
	assert_int_equal(hw_kr_uvarint(&r), 0);
	assert_int_equal(hw_kr_i32(&r), 0); /* throttle */
	assert_int_equal(hw_kr_uvarint(&r), 0);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.off, n);
	hw_kconn_output_done(c, n);
	/* a group request carries the peer and the client id to the coordinator */
	hw_kw_init(&b, 0);
	hw_kw_str(&b, "g", 1);
	hw_kw_i8(&b, 0);
	input(c, 10, 2, 22, &b, 0);
	assert_string_equal(group_host, "/10.1.2.3");
	assert_string_equal(group_client, "t");
	hw_kw_i16(hw_kreq_writer(group_req), 0);
	hw_ksrv_complete(srv, group_req);
	/* a compact string longer than the frame: the connection closes */
	hw_kw_init(&b, 0);
	hw_kw_uvarint(&b, 100);
	h.correlation_id = 23;
	hw_kw_init(&w, 0);
	at = hw_kw_skip(&w, 4);
	hw_kafka_req_hdr_encode(&w, &h);
	hw_kw_raw(&w, b.buf, b.len);
	hw_kw_patch_i32(&w, at, (int32_t)(w.len - at - 4));
	assert_true(hw_kconn_input(c, w.buf, w.len) < 0);
	assert_true(hw_ksrv_get_stats(srv)->closes[HW_KSRV_CLOSE_BAD_REQUEST] >= 1);
	hw_kw_free(&w);
	hw_kw_free(&b);
	hw_kconn_close(c, HW_KSRV_CLOSE_BAD_REQUEST);
	hw_ksrv_destroy(srv);
}

static void test_ctrl_timeout(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	hw_kw b;
	empty(&b);
	hw_kw_i32(&b, 1);
	hw_kw_str(&b, "t", 1);
	input(c, 3, 1, 4, &b, 0); /* Metadata: a METADATA to the controller */
	assert_int_equal(held[0].type, HW_MSG_METADATA);
	assert_true(held[0].correlation_id & HW_KSRV_CORR_BIT);
	int32_t ids[2];
	assert_int_equal(out_corrs(c, ids, 2), 0);
	now_ns_v += (int64_t)(HW_KSRV_CTRL_TIMEOUT_MS + 200) * 1000000;
	assert_int_equal(hw_ksrv_poll(srv), 1);
	assert_int_equal(out_corrs(c, ids, 2), 1); /* answered: LEADER_NOT_AVAILABLE, retriable */
	assert_int_equal(hw_ksrv_get_stats(srv)->ctrl_timeouts, 1);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

/* Produce v0 and v2 (no transactional_id; v0: no log_append_time, no
 * throttle) with old and new record formats side by side. */
static void test_produce_old_versions(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	uint8_t m1[64], m0[64];
	const uint8_t *recs[3] = { m1, m0, batch };
	size_t lens[3] = { old_message(m1, 1), old_message(m0, 0), sizeof batch };
	hw_kw b;
	produce_body_v(&b, 2, 3, recs, lens);
	input(c, 0, 2, 21, &b, 0);
	assert_int_equal(n_held, 1); /* only the RecordBatch v2 reaches the engine */
	assert_int_equal(held[0].u.produce.tp.partition, 2);
	answer_produce(0, 0, 5);
	const uint8_t *p;
	size_t n = hw_kconn_output(c, &p);
	hw_kr r;
	hw_kr_init(&r, p, n);
	(void)hw_kr_i32(&r);
	assert_int_equal(hw_kr_i32(&r), 21);
	assert_int_equal(hw_kr_array(&r), 1);
	assert_true(hw_kstr_eq(hw_kr_str(&r), "t"));
	assert_int_equal(hw_kr_array(&r), 3);
	int16_t want_err[3] = { 43, 43, 0 };
	int64_t want_base[3] = { -1, -1, 5 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hw_kr_i32(&r), i);
		assert_int_equal(hw_kr_i16(&r), want_err[i]);
		assert_int_equal(hw_kr_i64(&r), want_base[i]);
		assert_int_equal(hw_kr_i64(&r), -1); /* log_append_time (v2), no log_start_offset */
	}
	assert_int_equal(hw_kr_i32(&r), 0); /* throttle (v1+) */
	assert_int_equal(r.err, 0);
	assert_int_equal(r.off, n);
	hw_kconn_output_done(c, n);

	const uint8_t *one[1] = { batch };
	size_t one_len[1] = { sizeof batch };
	produce_body_v(&b, 0, 1, one, one_len);
	input(c, 0, 0, 22, &b, 0);
	assert_int_equal(n_held, 2);
	answer_produce(1, 0, 6);
	n = hw_kconn_output(c, &p);
	hw_kr_init(&r, p, n);
	(void)hw_kr_i32(&r);
	assert_int_equal(hw_kr_i32(&r), 22);
	assert_int_equal(hw_kr_array(&r), 1);
	(void)hw_kr_str(&r);
	assert_int_equal(hw_kr_array(&r), 1);
	assert_int_equal(hw_kr_i32(&r), 0);
	assert_int_equal(hw_kr_i16(&r), 0);
	assert_int_equal(hw_kr_i64(&r), 6);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.off, n); /* v0: nothing after base_offset */
	hw_kconn_output_done(c, n);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

/* The error of the one partition of a Produce of version ver carrying rec. */
static int16_t produce_one_err(hw_kconn *c, int16_t ver, const uint8_t *rec, size_t len)
{
	hw_kw b;
	const uint8_t *recs[1] = { rec };
	produce_body_v(&b, ver, 1, recs, &len);
	int before = n_held;
	input(c, 0, ver, 30 + ver, &b, 0);
	if (n_held > before)
		answer_produce(n_held - 1, 0, 0);
	const uint8_t *p;
	size_t n = hw_kconn_output(c, &p);
	hw_kr r;
	hw_kr_init(&r, p, n);
	(void)hw_kr_i32(&r);
	assert_int_equal(hw_kr_i32(&r), 30 + ver);
	(void)hw_kr_array(&r);
	(void)hw_kr_str(&r);
	(void)hw_kr_array(&r);
	(void)hw_kr_i32(&r);
	int16_t err = hw_kr_i16(&r);
	assert_int_equal(r.err, 0);
	hw_kconn_output_done(c, n);
	return err;
}

static void test_produce_format_checks(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	uint8_t m1[64];
	size_t l1 = old_message(m1, 1);
	assert_int_equal(produce_one_err(c, 1, m1, l1), 43);
	assert_int_equal(produce_one_err(c, 3, m1, l1), HW_ERR_INVALID_RECORD);
	assert_int_equal(produce_one_err(c, 8, m1, l1), HW_ERR_INVALID_RECORD);
	assert_int_equal(n_held, 0);
	uint8_t z[61];
	memcpy(z, batch, sizeof z);
	z[22] = 4; /* zstd */
	assert_int_equal(produce_one_err(c, 6, z, sizeof z), HW_ERR_UNSUPPORTED_COMPRESSION_TYPE);
	assert_int_equal(produce_one_err(c, 2, z, sizeof z), HW_ERR_UNSUPPORTED_COMPRESSION_TYPE);
	assert_int_equal(n_held, 0);
	assert_int_equal(produce_one_err(c, 7, z, sizeof z), 0);
	assert_int_equal(n_held, 1);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

/* Fetch v0 (no throttle) and v3 (throttle, max_bytes): hosted partitions
 * UNSUPPORTED_VERSION, an unknown topic UNKNOWN_TOPIC_OR_PARTITION, no
 * engine fetch, answered at once. */
static void test_fetch_old_versions(void **state)
{
	(void)state;
	mk(0);
	hw_kconn *c = hw_kconn_open(srv, NULL);
	for (int16_t ver = 0; ver <= 3; ver += 3) {
		hw_kw b;
		hw_kw_init(&b, 0);
		hw_kw_i32(&b, -1);
		hw_kw_i32(&b, 500);
		hw_kw_i32(&b, 1);
		if (ver >= 3)
			hw_kw_i32(&b, 1 << 20);
		hw_kw_i32(&b, 2);
		hw_kw_str(&b, "t", 1);
		hw_kw_i32(&b, 2);
		for (int p = 0; p < 2; p++) {
			hw_kw_i32(&b, p);
			hw_kw_i64(&b, 0);
			hw_kw_i32(&b, 1 << 20);
		}
		hw_kw_str(&b, "nosuch", 6);
		hw_kw_i32(&b, 1);
		hw_kw_i32(&b, 0);
		hw_kw_i64(&b, 0);
		hw_kw_i32(&b, 1 << 20);
		input(c, 1, ver, 40 + ver, &b, 0);
		assert_int_equal(n_held, 0);
		const uint8_t *p;
		size_t n = hw_kconn_output(c, &p);
		hw_kr r;
		hw_kr_init(&r, p, n);
		(void)hw_kr_i32(&r);
		assert_int_equal(hw_kr_i32(&r), 40 + ver);
		if (ver >= 1)
			assert_int_equal(hw_kr_i32(&r), 0); /* throttle */
		assert_int_equal(hw_kr_array(&r), 2);
		for (int t = 0; t < 2; t++) {
			(void)hw_kr_str(&r);
			int np = hw_kr_array(&r);
			assert_int_equal(np, t ? 1 : 2);
			for (int i = 0; i < np; i++) {
				assert_int_equal(hw_kr_i32(&r), i);
				assert_int_equal(hw_kr_i16(&r),
						 t ? HW_ERR_UNKNOWN_TOPIC_OR_PARTITION : HW_ERR_UNSUPPORTED_VERSION);
				assert_int_equal(hw_kr_i64(&r), -1); /* high watermark */
				assert_int_equal(hw_kr_nbytes(&r).len, 0);
			}
		}
		assert_int_equal(r.err, 0);
		assert_int_equal(r.off, n);
		hw_kconn_output_done(c, n);
	}
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_acks0),
		cmocka_unit_test(test_multi_produce),
		cmocka_unit_test(test_fetch_split),
		cmocka_unit_test(test_fetch_rack),
		cmocka_unit_test(test_group_pending_and_close),
		cmocka_unit_test(test_ctrl_timeout),
		cmocka_unit_test(test_flexible_produce_and_peer),
		cmocka_unit_test(test_produce_old_versions),
		cmocka_unit_test(test_produce_format_checks),
		cmocka_unit_test(test_fetch_old_versions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
