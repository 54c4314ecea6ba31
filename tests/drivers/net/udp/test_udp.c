/* test_udp.c — the kernel-UDP transport (io_uring) between two real sockets:
 * produce / produce response, a fetch answered by a response split over
 * several datagrams, admin messages, learned routes for unconfigured
 * clients (also more of them than the route table holds), hostile and replayed datagrams counted as drops, and a reactor
 * in BACKOFF mode sleeping on the transport's eventfd being woken by a
 * datagram. Seeded by HW_TEST_SEED. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_reactor.h"
#include "hw_udp.h"
#include "hw_err.h"
#include "../../../support/hw_test.h"

#define CLUSTER 77u

static uint32_t rnd(void) { return (uint32_t)(hw_test_rand() >> 11); }

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

/* What a node received. */
typedef struct inbox {
	int n;
	int types[4096];
	uint32_t corr[4096];
	int32_t src[4096];
	uint8_t *recs;            /* concatenated fetch-response records */
	size_t recs_len;
	size_t recs_cap;
	int64_t base_offset;
	char topic[HW_TOPIC_NAME_MAX];
	hw_net *reply_via;        /* if set, answer PRODUCE with PRODUCE_RESP */
	int32_t self;
	int nmore;                /* FETCH_RESP frames marked `more` */
} inbox;

static void on_msg(void *ctx, const hw_msg *m)
{
	inbox *b = ctx;
	if (b->n < 4096) {
		b->types[b->n] = m->type;
		b->corr[b->n] = m->correlation_id;
		b->src[b->n] = m->src;
	}
	b->n++;
	if (m->type == HW_MSG_FETCH_RESP) {
		b->nmore += m->u.fetch_resp.more;
		for (int i = 0; i < m->u.fetch_resp.n_parts; i++) {
			const hw_fetch_resp_part *p = &m->u.fetch_resp.parts[i];
			assert_true(b->recs_len + p->records_len <= b->recs_cap);
			memcpy(b->recs + b->recs_len, p->records, p->records_len);
			b->recs_len += p->records_len;
		}
	} else if (m->type == HW_MSG_PRODUCE_RESP) {
		b->base_offset = m->u.produce_resp.base_offset;
	} else if (m->type == HW_MSG_CREATE_TOPIC) {
		const hw_create_topic_req *q = m->u.other;
		strcpy(b->topic, q->name);
	}
	if (b->reply_via && m->type == HW_MSG_PRODUCE) {
		hw_msg r;
		memset(&r, 0, sizeof r);
		r.type = HW_MSG_PRODUCE_RESP;
		r.src = b->self;
		r.dst = m->src;
		r.correlation_id = m->correlation_id;
		r.u.produce_resp.tp = m->u.produce.tp;
		r.u.produce_resp.error = HW_ERR_NONE;
		r.u.produce_resp.base_offset = 4242;
		assert_int_equal(hw_net_send(b->reply_via, &r), 0);
	}
}

/* Poll both until pred or 5 s. */
static void pump(hw_udp *a, hw_udp *b, int (*pred)(void *), void *arg)
{
	int64_t until = hw_reactor_now_ns() + 5000000000LL;
	while (!pred(arg)) {
		assert_true(hw_reactor_now_ns() < until);
		assert_true(hw_udp_wait(a, 1) >= 0);
		if (b)
			assert_true(hw_udp_poll(b) >= 0);
	}
}

static int want_n;
static int got_n(void *arg) { return ((inbox *)arg)->n >= want_n; }

static void pair(hw_udp **a, inbox *ia, hw_udp **b, inbox *ib)
{
	int err = 0;
	hw_udp_cfg ca = { .listen = "udp:127.0.0.1:0", .cluster_id = CLUSTER, .self_id = 1,
			  .on_msg = on_msg, .ctx = ia };
	hw_udp_cfg cb = ca;
	cb.self_id = 2;
	cb.ctx = ib;
	*a = hw_udp_create(&ca, &err);
	assert_non_null(*a);
	*b = hw_udp_create(&cb, &err);
	assert_non_null(*b);
	char ep[64];
	snprintf(ep, sizeof ep, "udp:127.0.0.1:%u", hw_udp_local_port(*b));
	assert_int_equal(hw_udp_add_neighbour(*a, 2, ep), 0);
	snprintf(ep, sizeof ep, "udp:127.0.0.1:%u", hw_udp_local_port(*a));
	assert_int_equal(hw_udp_add_neighbour(*b, 1, ep), 0);
	ia->self = 1;
	ib->self = 2;
}

static void test_produce_roundtrip(void **st)
{
	(void)st;
	static inbox ia, ib;
	memset(&ia, 0, sizeof ia);
	memset(&ib, 0, sizeof ib);
	hw_udp *a, *b;
	pair(&a, &ia, &b, &ib);
	ib.reply_via = hw_udp_net(b);
	static uint8_t recs[3000];
	make_batch(recs, 1000, 0);
	make_batch(recs + 1000, 2000, 1);
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = 1;
	m.dst = 2;
	int rounds = 50 + (int)(rnd() % 50);
	for (int i = 0; i < rounds; i++) {
		m.correlation_id = (uint32_t)i + 1000;
		m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = 1000, .tp = { 1, 0 }, .records = recs, .records_len = sizeof recs };
		assert_int_equal(hw_net_send(hw_udp_net(a), &m), 0);
		want_n = i + 1;
		pump(a, b, got_n, &ia);
		assert_int_equal(ia.types[i], HW_MSG_PRODUCE_RESP);
		assert_int_equal(ia.corr[i], (uint32_t)i + 1000);
		assert_int_equal(ia.base_offset, 4242);
	}
	assert_int_equal(ib.n, rounds);
	/* unknown node */
	m.dst = 99;
	assert_int_equal(hw_net_send(hw_udp_net(a), &m), -EHOSTUNREACH);
	assert_int_equal(hw_wire_stats_total_drops(&hw_udp_get_stats(a)->wire), 0);
	assert_int_equal(hw_wire_stats_total_drops(&hw_udp_get_stats(b)->wire), 0);
	hw_udp_destroy(a);
	hw_udp_destroy(b);
}

static void test_split_fetch(void **st)
{
	(void)st;
	static inbox ia, ib;
	memset(&ia, 0, sizeof ia);
	memset(&ib, 0, sizeof ib);
	hw_udp *a, *b;
	pair(&a, &ia, &b, &ib);
	size_t cap = 600000;
	static uint8_t *recs;
	recs = malloc(cap);
	ia.recs = malloc(cap);
	ia.recs_cap = cap;
	size_t len = 0;
	for (int i = 0; len < cap - 20000; i++) {
		size_t sz = 100 + rnd() % 16000;
		make_batch(recs + len, sz, i);
		len += sz;
	}
	hw_fetch_resp_part p = { .tp = { 1, 0 }, .high_watermark = 10, .diverging_epoch = -1,
				 .diverging_end_offset = -1, .leader_id = 2, .leader_epoch = 1,
				 .records = recs, .records_len = (uint32_t)len };
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_FETCH_RESP;
	m.src = 2;
	m.dst = 1;
	m.correlation_id = 5;
	m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &p };
	assert_int_equal(hw_net_send(hw_udp_net(b), &m), 0);
	int min_frames = (int)(len / HW_WIRE_MAX_FRAME) + 1;
	want_n = min_frames;
	/* all frames arrive on loopback; wait until the bytes are all there */
	int64_t until = hw_reactor_now_ns() + 5000000000LL;
	while (ia.recs_len < len) {
		assert_true(hw_reactor_now_ns() < until);
		hw_udp_wait(a, 1);
	}
	assert_true(ia.n >= min_frames);
	assert_int_equal(ia.recs_len, len);
	assert_memory_equal(ia.recs, recs, len);
	for (int i = 0; i < ia.n; i++)
		assert_int_equal(ia.corr[i], 5);
	assert_int_equal(ia.nmore, ia.n - 1); /* every frame but the last says more */
	print_message("fetch response of %zu bytes in %d datagrams\n", len, ia.n);
	free(recs);
	free(ia.recs);
	hw_udp_destroy(a);
	hw_udp_destroy(b);
}

static void test_learned_and_admin(void **st)
{
	(void)st;
	static inbox ia, ib;
	memset(&ia, 0, sizeof ia);
	memset(&ib, 0, sizeof ib);
	int err;
	/* broker 2 knows nobody; client 1000 knows broker 2 */
	hw_udp_cfg cb = { .listen = "udp:127.0.0.1:0", .cluster_id = CLUSTER, .self_id = 2,
			  .on_msg = on_msg, .ctx = &ib, .defer_tx = 1 };
	hw_udp *b = hw_udp_create(&cb, &err);
	assert_non_null(b);
	hw_udp_cfg cc = cb;
	cc.self_id = 1000;
	cc.ctx = &ia;
	cc.defer_tx = 0;
	hw_udp *c = hw_udp_create(&cc, &err);
	assert_non_null(c);
	char ep[64];
	snprintf(ep, sizeof ep, "udp:localhost:%u", hw_udp_local_port(b));
	assert_int_equal(hw_udp_add_neighbour(c, 2, ep), 0);
	ib.reply_via = hw_udp_net(b);
	ib.self = 2;

	hw_create_topic_req q;
	memset(&q, 0, sizeof q);
	strcpy(q.name, "orders");
	q.partitions = 3;
	q.replication_factor = 3;
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_CREATE_TOPIC;
	m.src = 1000;
	m.dst = 2;
	m.u.other = &q;
	assert_int_equal(hw_net_send(hw_udp_net(c), &m), 0);
	want_n = 1;
	pump(b, NULL, got_n, &ib);
	assert_string_equal(ib.topic, "orders");

	static uint8_t recs[200];
	make_batch(recs, sizeof recs, 0);
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = 1000;
	m.dst = 2;
	m.correlation_id = 9;
	m.u.produce = (hw_produce_req){ .acks = 1, .timeout_ms = 100, .tp = { 1, 0 }, .records = recs, .records_len = sizeof recs };
	assert_int_equal(hw_net_send(hw_udp_net(c), &m), 0);
	want_n = 2;
	pump(b, NULL, got_n, &ib);
	/* b answered through a learned route (deferred: flushed by b's poll) */
	assert_true(hw_udp_get_stats(b)->learned >= 1);
	hw_udp_flush(b);
	want_n = 1;
	pump(c, NULL, got_n, &ia);
	assert_int_equal(ia.types[0], HW_MSG_PRODUCE_RESP);
	assert_int_equal(ia.corr[0], 9);
	hw_udp_destroy(b);
	hw_udp_destroy(c);
}

static int not_for_us_at_least(void *arg)
{
	void **v = arg;
	return hw_udp_get_stats(v[0])->wire.drops[HW_WIRE_DROP_NOT_FOR_US] >= (uint64_t)(uintptr_t)v[1];
}

/* More short-lived clients than the route table holds (CLI processes come
 * and go with fresh ids, docs/wire.md "Node ids"): every one still gets its
 * answer, the learned routes are forgotten when the table fills, and the
 * configured route survives. */
static void test_learned_table_full(void **st)
{
	(void)st;
	static inbox ia, ib, ic;
	memset(&ia, 0, sizeof ia);
	memset(&ib, 0, sizeof ib);
	memset(&ic, 0, sizeof ic);
	hw_udp *a, *b;
	pair(&a, &ia, &b, &ib);
	ib.reply_via = hw_udp_net(b);
	int err;
	hw_udp_cfg cc = { .listen = "udp:127.0.0.1:0", .cluster_id = CLUSTER, .self_id = 1000,
			  .on_msg = on_msg, .ctx = &ic };
	hw_udp *c = hw_udp_create(&cc, &err);
	assert_non_null(c);
	char ep[64];
	snprintf(ep, sizeof ep, "udp:127.0.0.1:%u", hw_udp_local_port(b));
	assert_int_equal(hw_udp_add_neighbour(c, 2, ep), 0);
	static uint8_t recs[100];
	make_batch(recs, sizeof recs, 0);
	const int clients = HW_NODEMAP_CAP + 200;
	for (int i = 0; i < clients; i++) {
		hw_msg m;
		memset(&m, 0, sizeof m);
		m.type = HW_MSG_PRODUCE;
		m.src = 100000 + i;        /* a fresh client id each time */
		m.dst = 2;
		m.correlation_id = (uint32_t)i;
		m.u.produce = (hw_produce_req){ .acks = 1, .timeout_ms = 100, .tp = { 1, 0 }, .records = recs,
						.records_len = sizeof recs };
		assert_int_equal(hw_net_send(hw_udp_net(c), &m), 0);
		/* b answers (on_msg asserts the send found a route) to the
		 * address it learned: c's socket, which drops the answers as
		 * NOT_FOR_US (c is node 1000) and so counts each arrival */
		want_n = i + 1;
		pump(b, NULL, got_n, &ib);
		assert_int_equal(ib.src[i], 100000 + i);
		uint64_t arrived = (uint64_t)i + 1;
		pump(c, NULL, not_for_us_at_least, (void *[]){ c, (void *)(uintptr_t)arrived });
	}
	assert_true(hw_udp_get_stats(b)->forgotten > 0);
	/* the configured route to node 1 is still there */
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE_RESP;
	m.src = 2;
	m.dst = 1;
	m.correlation_id = 77;
	assert_int_equal(hw_net_send(hw_udp_net(b), &m), 0);
	want_n = 1;
	pump(a, NULL, got_n, &ia);
	assert_int_equal(ia.corr[0], 77);
	hw_udp_destroy(a);
	hw_udp_destroy(b);
	hw_udp_destroy(c);
}

static int drops_at_least(void *arg)
{
	void **v = arg;
	return hw_wire_stats_total_drops(&hw_udp_get_stats(v[0])->wire) >= (uint64_t)(uintptr_t)v[1];
}

static void test_hostile(void **st)
{
	(void)st;
	static inbox ib;
	memset(&ib, 0, sizeof ib);
	int err;
	hw_udp_cfg cb = { .listen = "udp:127.0.0.1:0", .cluster_id = CLUSTER, .self_id = 2,
			  .on_msg = on_msg, .ctx = &ib };
	hw_udp *b = hw_udp_create(&cb, &err);
	assert_non_null(b);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(hw_udp_local_port(b)) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	/* a valid frame, sent twice: the second is a replay */
	static uint8_t frame[2048];
	hw_wire_tx tx = { CLUSTER, 12345, 1, 0 };
	hw_broker_heartbeat_req hq;
	memset(&hq, 0, sizeof hq);
	hq.broker_id = 3;
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_BROKER_HEARTBEAT;
	m.src = 3;
	m.dst = 2;
	m.u.other = &hq;
	int n = hw_wire_encode(&tx, &m, NULL, frame, sizeof frame);
	assert_true(n > 0);
	assert_int_equal(sendto(fd, frame, (size_t)n, 0, (struct sockaddr *)&to, sizeof to), n);
	want_n = 1;
	pump(b, NULL, got_n, &ib);
	assert_int_equal(sendto(fd, frame, (size_t)n, 0, (struct sockaddr *)&to, sizeof to), n);
	/* another cluster, another destination, garbage */
	uint8_t other[2048];
	hw_wire_tx tx2 = { CLUSTER + 1, 1, 1, 0 };
	int n2 = hw_wire_encode(&tx2, &m, NULL, other, sizeof other);
	assert_int_equal(sendto(fd, other, (size_t)n2, 0, (struct sockaddr *)&to, sizeof to), n2);
	m.dst = 7;
	n2 = hw_wire_encode(&tx, &m, NULL, other, sizeof other);
	assert_int_equal(sendto(fd, other, (size_t)n2, 0, (struct sockaddr *)&to, sizeof to), n2);
	int garbage = 500;
	for (int i = 0; i < garbage; i++) {
		size_t len = rnd() % sizeof other;
		for (size_t j = 0; j < len; j++)
			other[j] = (uint8_t)rnd();
		if (len > 12 && (rnd() & 1))
			memcpy(other, frame, 12);    /* plausible header start */
		sendto(fd, other, len, 0, (struct sockaddr *)&to, sizeof to);
		if (i % 50 == 0)
			hw_udp_poll(b);
	}
	void *arg[2] = { b, (void *)(uintptr_t)(garbage + 3) };
	int64_t until = hw_reactor_now_ns() + 5000000000LL;
	while (!drops_at_least(arg) && hw_reactor_now_ns() < until)
		hw_udp_wait(b, 1);
	const hw_udp_stats *s = hw_udp_get_stats(b);
	assert_int_equal(s->wire.drops[HW_WIRE_DROP_REPLAYED], 1);
	assert_int_equal(s->wire.drops[HW_WIRE_DROP_FOREIGN_CLUSTER], 1);
	assert_int_equal(s->wire.drops[HW_WIRE_DROP_NOT_FOR_US], 1);
	/* every datagram is accounted for: delivered or dropped with a reason */
	assert_int_equal(s->wire.rx_frames + hw_wire_stats_total_drops(&s->wire), (uint64_t)garbage + 4);
	assert_int_equal((uint64_t)ib.n, s->wire.rx_frames);
	close(fd);
	hw_udp_destroy(b);
}

/* A reactor in BACKOFF mode sleeps on the transport's eventfd and is woken
 * by an arriving datagram well before its sleep cap would end the sleep. */
typedef struct rx_ctx {
	hw_udp *u;
	int got;                   /* atomic */
	int64_t got_ns;
} rx_ctx;

static void on_msg_flag(void *ctx, const hw_msg *m)
{
	(void)m;
	rx_ctx *c = ctx;
	c->got_ns = hw_reactor_now_ns();
	/* release: got_ns is written before the flag the test thread reads */
	__atomic_store_n(&c->got, 1, __ATOMIC_RELEASE);
}

static int udp_poller(void *arg)
{
	return hw_udp_poll(((rx_ctx *)arg)->u);
}

static void test_reactor_sleep_wake(void **st)
{
	(void)st;
	static rx_ctx c;
	memset(&c, 0, sizeof c);
	int err;
	hw_udp_cfg cfg = { .listen = "udp:127.0.0.1:0", .cluster_id = CLUSTER, .self_id = 2,
			   .on_msg = on_msg_flag, .ctx = &c, .owner_reactor = 1 };
	c.u = hw_udp_create(&cfg, &err);
	assert_non_null(c.u);
	/* sleep cap 200 ms: a wake-up through the eventfd is much faster */
	hw_reactor_cfg rc = { .id = 1, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_iters = 10,
			      .sleep_min_us = 200000, .sleep_max_us = 200000 };
	hw_reactor *r = hw_reactor_create(&rc);
	assert_non_null(r);
	assert_int_equal(hw_reactor_add_poller(r, "udp", udp_poller, NULL, &c), 0);
	assert_int_equal(hw_reactor_add_wait_fd(r, hw_udp_wait_fd(c.u), 0, NULL, NULL, NULL), 0);
	assert_int_equal(hw_reactor_start(r), 0);
	/* let it fall asleep */
	hw_reactor_stats s;
	int64_t until = hw_reactor_now_ns() + 5000000000LL;
	do {
		usleep(20000);
		hw_reactor_get_stats(r, &s);
	} while (s.sleeps == 0 && hw_reactor_now_ns() < until);
	assert_true(s.sleeps > 0);
	uint64_t wakeups_before = s.wakeups;

	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(hw_udp_local_port(c.u)) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	uint8_t frame[256];
	hw_wire_tx tx = { CLUSTER, 1, 1, 0 };
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE_RESP;
	m.src = 3;
	m.dst = 2;
	int n = hw_wire_encode(&tx, &m, NULL, frame, sizeof frame);
	int64_t sent = hw_reactor_now_ns();
	assert_int_equal(sendto(fd, frame, (size_t)n, 0, (struct sockaddr *)&to, sizeof to), n);
	/* acquire: pairs with the release in on_msg_flag */
	while (!__atomic_load_n(&c.got, __ATOMIC_ACQUIRE) && hw_reactor_now_ns() < until)
		usleep(100);
	assert_true(__atomic_load_n(&c.got, __ATOMIC_ACQUIRE));
	int64_t lat = c.got_ns - sent;
	hw_reactor_stop(r);
	hw_reactor_join(r);
	hw_reactor_get_stats(r, &s);
	print_message("woken after %lld us; iterations %llu busy %llu idle %llu sleeps %llu wakeups %llu\n",
		      (long long)lat / 1000, (unsigned long long)s.iterations,
		      (unsigned long long)s.busy_iterations, (unsigned long long)s.idle_iterations,
		      (unsigned long long)s.sleeps, (unsigned long long)s.wakeups);
	assert_true(s.wakeups > wakeups_before);
	assert_true(s.busy_iterations >= 1);
	assert_true(s.idle_iterations > s.busy_iterations);
	/* woken by the datagram, not by the 200 ms cap (generous bound for a
	 * loaded 2-core machine) */
	assert_true(lat < 150000000LL);
	close(fd);
	hw_reactor_destroy(r);
	hw_udp_destroy(c.u);
}

int main(void)
{
	hw_test_seed_init("test_udp");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_produce_roundtrip),
		cmocka_unit_test(test_split_fetch),
		cmocka_unit_test(test_learned_and_admin),
		cmocka_unit_test(test_learned_table_full),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_reactor_sleep_wake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
