/* test_reactor.c — reactors and cross-reactor rings on real threads: two
 * BACKOFF reactors ping-pong messages over SPSC rings (each push followed by
 * hw_reactor_wake), so every message must survive the sleep/wake protocol;
 * a BUSY reactor never sleeps; timer deadlines bound the sleep; an idle
 * reactor whose only work is a periodic tick sleeps a bounded number of times
 * per tick; the mux
 * routes by node, then type, then default over real UDP transports; the
 * local memif cluster arguments name every link exactly once on each side.
 * Seeded by HW_TEST_SEED. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_dpdk.h"
#include "hw_netmux.h"
#include "hw_reactor.h"
#include "hw_spsc.h"
#include "hw_udp.h"
#include "../../support/hw_test.h"

static uint64_t seed;

typedef struct side {
	hw_reactor *self;
	hw_reactor *peer;
	hw_spsc *in;              /* consumed by self */
	hw_spsc *out;             /* produced by self */
	uint64_t expect;          /* next value expected */
	uint64_t received;
	uint64_t limit;
	int bad_order;
	int starter;
} side;

static int ping_poller(void *arg)
{
	side *s = arg;
	int work = 0;
	void *p;
	while ((p = hw_spsc_pop(s->in)) != NULL) {
		uint64_t v = (uint64_t)(uintptr_t)p - 1;   /* +1: NULL means empty */
		if (v != s->expect)
			s->bad_order = 1;
		s->expect = v + 2;
		s->received++;
		work++;
		if (v + 1 <= s->limit) {
			while (hw_spsc_push(s->out, (void *)(uintptr_t)(v + 2)) != 0)
				;   /* the peer drains; capacity 2 keeps this honest */
			hw_reactor_wake(s->peer);
		}
		if (s->received * 2 >= s->limit)
			hw_reactor_stop(s->self);
	}
	return work;
}

static void test_pingpong_backoff(void **st)
{
	(void)st;
	static hw_spsc ab, ba;
	assert_int_equal(hw_spsc_init(&ab, 3), -EINVAL);
	assert_int_equal(hw_spsc_init(&ab, 2), 0);
	assert_int_equal(hw_spsc_init(&ba, 2), 0);
	assert_int_equal(hw_spsc_push(&ab, NULL), -EINVAL);
	uint64_t limit = 20000 + (seed * 2654435761u) % 20000;
	hw_reactor_cfg ca = { .id = 1, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_iters = 1 + (uint32_t)(seed % 50),
			      .sleep_min_us = 10, .sleep_max_us = 100000 };
	hw_reactor_cfg cb = ca;
	cb.id = 2;
	hw_reactor *a = hw_reactor_create(&ca), *b = hw_reactor_create(&cb);
	assert_non_null(a);
	assert_non_null(b);
	static side sa, sb;
	sa = (side){ a, b, &ba, &ab, 1, 0, limit, 0, 1 };   /* a receives odd numbers */
	sb = (side){ b, a, &ab, &ba, 0, 0, limit, 0, 0 };   /* b receives even numbers */
	hw_reactor_add_poller(a, "ping", ping_poller, NULL, &sa);
	hw_reactor_add_poller(b, "pong", ping_poller, NULL, &sb);
	assert_int_equal(hw_reactor_start(a), 0);
	assert_int_equal(hw_reactor_start(b), 0);
	usleep(20000);   /* both asleep before the first message */
	assert_int_equal(hw_spsc_push(&ab, (void *)(uintptr_t)1), 0);   /* value 0 */
	hw_reactor_wake(b);
	int64_t t0 = hw_reactor_now_ns();
	hw_reactor_join(a);
	hw_reactor_join(b);
	int64_t el = hw_reactor_now_ns() - t0;
	hw_reactor_stats s1, s2;
	hw_reactor_get_stats(a, &s1);
	hw_reactor_get_stats(b, &s2);
	print_message("%llu messages in %lld ms; a: iters %llu busy %llu idle %llu sleeps %llu wakeups %llu\n",
		      (unsigned long long)limit, (long long)el / 1000000, (unsigned long long)s1.iterations,
		      (unsigned long long)s1.busy_iterations, (unsigned long long)s1.idle_iterations,
		      (unsigned long long)s1.sleeps, (unsigned long long)s1.wakeups);
	assert_false(sa.bad_order);
	assert_false(sb.bad_order);
	assert_true(sa.received * 2 >= limit);
	assert_true(sb.received * 2 >= limit);
	/* 100 ms sleep cap: a lost wake-up would cost 100 ms per message */
	assert_true(el < 60LL * 1000000000LL);
	assert_int_equal(s1.iterations, s1.busy_iterations + s1.idle_iterations);
	assert_true(s1.sleeps > 0 || s2.sleeps > 0);
	hw_reactor_destroy(a);
	hw_reactor_destroy(b);
	hw_spsc_fini(&ab);
	hw_spsc_fini(&ba);
}

static int idle_poller(void *arg)
{
	(void)arg;
	return 0;
}

static int64_t deadline_at;
static int64_t deadline_fn(void *arg)
{
	(void)arg;
	return deadline_at;
}

static void test_busy_and_deadline(void **st)
{
	(void)st;
	hw_reactor_cfg c = { .id = 3, .cpu = 0, .idle = HW_IDLE_BUSY };
	hw_reactor *r = hw_reactor_create(&c);
	hw_reactor_add_poller(r, "idle", idle_poller, NULL, NULL);
	hw_reactor_start(r);
	usleep(20000);
	hw_reactor_stop(r);
	hw_reactor_join(r);
	hw_reactor_stats s;
	hw_reactor_get_stats(r, &s);
	assert_int_equal(s.sleeps, 0);
	assert_true(s.idle_iterations > 0);
	hw_reactor_destroy(r);

	/* BACKOFF with a 1 s cap but a deadline 20 ms away: sleeps end at it */
	hw_reactor_cfg b = { .id = 4, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_iters = 1,
			     .sleep_min_us = 1000000, .sleep_max_us = 1000000 };
	r = hw_reactor_create(&b);
	deadline_at = hw_reactor_now_ns() + 20000000LL;
	hw_reactor_add_poller(r, "timer", idle_poller, deadline_fn, NULL);
	int64_t t0 = hw_reactor_now_ns();
	hw_reactor_start(r);
	do {
		usleep(1000);
		hw_reactor_get_stats(r, &s);
	} while (s.sleeps < 1 && hw_reactor_now_ns() - t0 < 5000000000LL);
	usleep(50000);
	hw_reactor_stop(r);
	hw_reactor_join(r);
	hw_reactor_get_stats(r, &s);
	/* it slept, and the sleeps ended at the 20 ms deadline (afterwards the
	 * deadline is past: no sleeping), not at the 1 s cap */
	print_message("deadline: sleeps %llu slept %llu us\n", (unsigned long long)s.sleeps,
		      (unsigned long long)s.slept_ns / 1000);
	assert_true(s.sleeps >= 1);
	assert_true(s.slept_ns < 500000000ULL);
	hw_reactor_destroy(r);

	assert_int_equal(hw_idle_parse("busy"), HW_IDLE_BUSY);
	assert_int_equal(hw_idle_parse("BackOff"), HW_IDLE_BACKOFF);
	assert_int_equal(hw_idle_parse("nap"), -EINVAL);
}

/* ---- idle wake-ups: bookkeeping every 100 ms must not cost a dozen sleeps */
typedef struct ticker {
	int64_t next;             /* the poller's next deadline */
	int64_t period_ns;
	int ticks;
} ticker;

static int tick_poller(void *arg)
{
	ticker *t = arg;
	int64_t now = hw_reactor_now_ns();
	if (now < t->next)
		return 0;
	t->next = now + t->period_ns;
	__atomic_store_n(&t->ticks, t->ticks + 1, __ATOMIC_RELAXED); /* read by the test thread */
	return 1;
}

static int64_t tick_deadline(void *arg)
{
	return ((ticker *)arg)->next;
}

/* Count the sleeps of an ADAPTIVE reactor under the automatic cap (every
 * source can wake it) whose only work is a 100 ms periodic tick — an idle
 * broker's group scan, a metadata refresh. Between two ticks it needs one
 * sleep to the tick's deadline (two if the 100 ms cap ends one first); a
 * cap that ramps from sleep_min_us after each tick (10, 20, 40 us ...)
 * sleeps 13 times in the period. A loaded machine only makes sleeps
 * longer, so the bound is a count that holds there too. */
static void test_idle_sleeps_per_tick(void **st)
{
	(void)st;
	hw_reactor_cfg c = { .id = 5, .cpu = -1, .idle = HW_IDLE_ADAPTIVE };
	hw_reactor *r = hw_reactor_create(&c);
	assert_non_null(r);
	assert_int_equal(hw_reactor_sleep_max_us(r), HW_REACTOR_AUTO_SLEEP_MAX_US);
	assert_int_equal(hw_reactor_first_sleep_us(r), HW_REACTOR_AUTO_SLEEP_MAX_US);
	static ticker t;
	t = (ticker){ .next = 0, .period_ns = 100000000LL };
	assert_int_equal(hw_reactor_add_poller(r, "tick", tick_poller, tick_deadline, &t), 0);
	assert_int_equal(hw_reactor_start(r), 0);
	int64_t t0 = hw_reactor_now_ns();
	while (__atomic_load_n(&t.ticks, __ATOMIC_RELAXED) < 6 && hw_reactor_now_ns() - t0 < 10000000000LL)
		usleep(10000);
	hw_reactor_stop(r);
	hw_reactor_join(r);
	hw_reactor_stats s;
	hw_reactor_get_stats(r, &s);
	int ticks = __atomic_load_n(&t.ticks, __ATOMIC_RELAXED);
	print_message("idle ticks %d: sleeps %llu wakeups %llu yields %llu\n", ticks,
		      (unsigned long long)s.sleeps, (unsigned long long)s.wakeups, (unsigned long long)s.yields);
	assert_true(ticks >= 6);
	/* at most 2 per period, one more for the stop wake-up and rounding */
	assert_true(s.sleeps <= (uint64_t)ticks * 3 + 2);
	hw_reactor_destroy(r);

	/* a source that cannot wake the reactor keeps the ramp (it must be
	 * polled soon after work), and so does a configured cap */
	r = hw_reactor_create(&c);
	hw_reactor_need_polling(r, 1000);
	assert_int_equal(hw_reactor_sleep_max_us(r), 1000);
	assert_int_equal(hw_reactor_first_sleep_us(r), 10);
	hw_reactor_destroy(r);
	hw_reactor_cfg fixed = { .id = 6, .cpu = -1, .idle = HW_IDLE_ADAPTIVE, .sleep_min_us = 30, .sleep_max_us = 5000 };
	r = hw_reactor_create(&fixed);
	assert_int_equal(hw_reactor_first_sleep_us(r), 30);
	hw_reactor_destroy(r);
}

/* ---- mux over two real UDP transports */
static int got_data, got_ctrl;
static void on_data(void *c, const hw_msg *m) { (void)c; (void)m; got_data++; }
static void on_ctrl(void *c, const hw_msg *m) { (void)c; (void)m; got_ctrl++; }

static void test_mux(void **st)
{
	(void)st;
	int err;
	hw_udp_cfg rc = { .listen = "udp:127.0.0.1:0", .cluster_id = 1, .self_id = 2, .on_msg = on_data };
	hw_udp *rx_data = hw_udp_create(&rc, &err);
	rc.on_msg = on_ctrl;
	hw_udp *rx_ctrl = hw_udp_create(&rc, &err);
	rc.self_id = 1;
	rc.on_msg = on_data;
	hw_udp *tx_data = hw_udp_create(&rc, &err);
	hw_udp *tx_ctrl = hw_udp_create(&rc, &err);
	assert_non_null(rx_data);
	assert_non_null(rx_ctrl);
	assert_non_null(tx_data);
	assert_non_null(tx_ctrl);
	char ep[64];
	snprintf(ep, sizeof ep, "udp:127.0.0.1:%u", hw_udp_local_port(rx_data));
	hw_udp_add_neighbour(tx_data, 2, ep);
	snprintf(ep, sizeof ep, "udp:127.0.0.1:%u", hw_udp_local_port(rx_ctrl));
	hw_udp_add_neighbour(tx_ctrl, 2, ep);
	hw_udp_add_neighbour(tx_ctrl, 3, ep);
	hw_netmux *x = hw_netmux_create(hw_udp_net(tx_data));
	assert_int_equal(hw_netmux_route_control_types(x, hw_udp_net(tx_ctrl)), 0);
	assert_int_equal(hw_netmux_route(x, 3, hw_udp_net(tx_ctrl)), 0);
	assert_int_equal(hw_netmux_route_type(x, 0, hw_udp_net(tx_ctrl)), -EINVAL);
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.src = 1;
	m.dst = 2;
	m.type = HW_MSG_PRODUCE_RESP;                 /* data -> default */
	assert_int_equal(hw_net_send(hw_netmux_net(x), &m), 0);
	hw_partition_state ps;
	memset(&ps, 0, sizeof ps);
	m.type = HW_MSG_PARTITION_STATE;              /* control type */
	m.u.pstate = ps;
	assert_int_equal(hw_net_send(hw_netmux_net(x), &m), 0);
	m.type = HW_MSG_PRODUCE_RESP;                 /* node 3 -> control link (dst 3 is dropped there) */
	m.dst = 3;
	assert_int_equal(hw_net_send(hw_netmux_net(x), &m), 0);
	int64_t until = hw_reactor_now_ns() + 5000000000LL;
	while ((got_data < 1 || got_ctrl < 1 ||
		hw_udp_get_stats(rx_ctrl)->wire.drops[HW_WIRE_DROP_NOT_FOR_US] < 1) && hw_reactor_now_ns() < until) {
		hw_udp_wait(rx_data, 1);
		hw_udp_poll(rx_ctrl);
	}
	assert_int_equal(got_data, 1);
	assert_int_equal(got_ctrl, 1);
	assert_int_equal(hw_udp_get_stats(rx_ctrl)->wire.drops[HW_WIRE_DROP_NOT_FOR_US], 1);
	const hw_netmux_stats *s = hw_netmux_get_stats(x);
	assert_int_equal(s->by_default, 1);
	assert_int_equal(s->by_type, 1);
	assert_int_equal(s->by_node, 1);
	hw_netmux_destroy(x);
	hw_udp_destroy(rx_data);
	hw_udp_destroy(rx_ctrl);
	hw_udp_destroy(tx_data);
	hw_udp_destroy(tx_ctrl);
}

/* ---- endpoints and the local memif topology */
static void test_endpoints_and_topology(void **st)
{
	(void)st;
	hw_endpoint ep;
	char buf[128];
	assert_int_equal(hw_endpoint_parse("udp:127.0.0.1:9092", &ep), 0);
	assert_int_equal(ep.kind, HW_EP_UDP);
	assert_true(hw_endpoint_format(&ep, buf, sizeof buf) > 0);
	assert_string_equal(buf, "udp:127.0.0.1:9092");
	assert_int_equal(hw_endpoint_parse("dpdk:port=net_memif_b2,mac=02:00:00:00:00:0a,ip=10.77.0.2,udp=9000", &ep), 0);
	assert_int_equal(ep.kind, HW_EP_DPDK);
	assert_string_equal(ep.port, "net_memif_b2");
	assert_int_equal(ep.mac[5], 0x0a);
	assert_int_equal(ep.udp_port, 9000);
	hw_endpoint_format(&ep, buf, sizeof buf);
	assert_string_equal(buf, "dpdk:port=net_memif_b2,mac=02:00:00:00:00:0a,ip=10.77.0.2,udp=9000");
	const char *bad[] = { "udp:1.2.3.4", "udp:1.2.3.4:70000", "udp:host:1", "tcp:1.2.3.4:5", "dpdk:",
			      "dpdk:mac=01:02", "dpdk:port=x,what=1", "dpdk:port=x,udp=-1", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(hw_endpoint_parse(bad[i], &ep), -EINVAL);

	/* 3 brokers + 2 client slots: each link appears once on each side with
	 * complementary roles */
	int nb = 3, nc = 2;
	int servers = 0, clients = 0;
	char links[64][160];
	int n_links = 0;
	for (int i = 0; i < nb + nc; i++) {
		int32_t self = i < nb ? i + 1 : HW_CLIENT_NODE_BASE + (i - nb);
		static char args[4096];
		static hw_dpdk_local_topo t;
		assert_int_equal(hw_dpdk_local_topo_build("/tmp/hwc", self, nb, nc, 0, &t), 0);
		assert_int_equal(t.n_links, self < HW_CLIENT_NODE_BASE ? nb - 1 + nc : nb);
		assert_int_equal(hw_dpdk_local_eal_args(&t, args, sizeof args), 0);
		assert_non_null(strstr(args, "--no-huge"));
		for (int k = 0; k < t.n_links; k++) {
			const hw_dpdk_local_link *l = &t.link[k];
			/* the route names this process's vdev for the link */
			char route[HW_ENDPOINT_MAX], want[256];
			hw_endpoint e;
			assert_int_equal(hw_dpdk_local_route(l->peer, route, sizeof route), 0);
			assert_int_equal(hw_endpoint_parse(route, &e), 0);
			assert_string_equal(e.port, l->vdev);
			/* the rendered EAL args carry the link as described */
			snprintf(want, sizeof want, "--vdev=%s,role=%s,bsize=65535,rsize=9,socket=%s,", l->vdev,
				 l->server ? "server" : "client", l->socket);
			assert_non_null(strstr(args, want));
			if (l->server)
				servers++;
			else
				clients++;
			int found = 0;
			for (int m = 0; m < n_links; m++)
				if (!strcmp(links[m], l->socket))
					found = 1;
			if (!found)
				strcpy(links[n_links++], l->socket);
		}
	}
	/* links: 3 broker pairs + 3 x 2 broker-client */
	assert_int_equal(n_links, 3 + 3 * 2);
	assert_int_equal(servers, n_links);
	assert_int_equal(clients, n_links);
	/* a link left out is not rendered */
	static hw_dpdk_local_topo t;
	static char args[4096];
	assert_int_equal(hw_dpdk_local_topo_build("/tmp/hwc", HW_CLIENT_NODE_BASE + 1, 3, 2, 0, &t), 0);
	assert_string_equal(t.link[1].vdev, "net_memif_b2");
	hw_dpdk_local_topo_drop(&t, 1);
	assert_int_equal(t.n_links, 2);
	assert_int_equal(hw_dpdk_local_eal_args(&t, args, sizeof args), 0);
	assert_null(strstr(args, "net_memif_b2"));
	assert_non_null(strstr(args, "--vdev=net_memif_b3,role=client"));
	assert_int_equal(hw_dpdk_local_topo_build("/tmp/hwc", 7, 3, 2, 0, &t), -EINVAL);
	assert_int_equal(hw_dpdk_local_topo_build("/tmp/hwc", HW_CLIENT_NODE_BASE + 2, 3, 2, 0, &t), -EINVAL);
	assert_int_equal(hw_dpdk_local_topo_build("/tmp/hwc", 1, 3, 2, 0, &t), 0);
	char small[64];
	assert_int_equal(hw_dpdk_local_eal_args(&t, small, sizeof small), -ENOSPC);
}

int main(void)
{
	seed = hw_test_seed("test_reactor");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pingpong_backoff),
		cmocka_unit_test(test_busy_and_deadline),
		cmocka_unit_test(test_idle_sleeps_per_tick),
		cmocka_unit_test(test_mux),
		cmocka_unit_test(test_endpoints_and_topology),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
