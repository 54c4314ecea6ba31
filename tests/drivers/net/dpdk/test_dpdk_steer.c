/* test_dpdk_steer.c — one wire stream per instance on a multi-queue port
 * that does NOT pair queues (hw_dpdk.h "Steering"): two processes, each in
 * its own network namespace, each with two hw_dpdk instances on
 * `test_dpdk_steer af_packet`: net_af_packet qpairs=2 on the ends of a veth
 *     pair; the kernel spreads flows over the two sockets by its own hash
 *     (PACKET_FANOUT);
 * `test_dpdk_steer tap`: net_tap with two queues, each side's tap device on
 *     a bridge with its veth end; the kernel's multi-queue tun picks the
 *     queue (its flow table / hash);
 * so frames land on either queue whatever UDP port they are for.
 *
 * Needs root (namespaces). Creates namespaces hwm<tag>a / hwm<tag>b with the
 * veth pair hwm<tag>a <-> hwm<tag>b (tag: from our pid; tap: bridges
 * hwm<tag>br and devices hwm<tag>ta / tb), DPDK IPs
 * 10.202.0.1 / .2; a watchdog process removes them when this process ends,
 * however it ends.
 *
 * This process (node 1, namespace a) polls its instances from one thread;
 * the peer (node 2, namespace b: `test_dpdk_steer peer ...` through
 * `ip netns exec`) runs each instance on its own hw_reactor thread with
 * backoff idle, so steered frames must wake a sleeping reactor.
 *   1. For every (our instance i, peer instance j): i sends N produce
 *      requests to the peer's port BASE + j (route "udp=BASE+j"; the i == j
 *      rounds through "udp=BASE,queues=2"); peer instance j answers with
 *      base_offset = j through its learned route (our BASE + i). Every
 *      answer must arrive at instance i and name j: both directions are
 *      steered by destination port, none lost, none duplicated.
 *   2. 256 raw frames from a third sender (node 3, its own wire stream)
 *      with 64 different UDP source ports, to both of the peer's ports:
 *      128 flows, so the kernel hash puts some on the wrong queue for
 *      certain (2^-128 otherwise); the peer instance that delivers each
 *      must be the one its destination port names.
 *   3. Counters: no STALE_SENDER or REPLAYED drop anywhere, no hand-off
 *      dropped, hand-offs out == in on each side, the peer steered frames
 *      in software (af_packet takes no rte_flow rules: mode SW).
 *   4. (af_packet) The peer restarted with ONE instance on the same qpairs=2
 *      port: the kernel still hashes flows to both af_packet sockets, and the
 *      one instance polls both (nothing lost on an unpolled socket).
 * On tap the port may take the rte_flow rules (a kernel with TC flower);
 * then nothing needs a hand-off and phases 1-3 check delivery only.
 * HW_TEST_SEED picks N and the UDP base port. */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include "hw_dpdk.h"
#include "hw_reactor.h"
#include "hw_wire.h"
#include "../../../support/hw_test.h"

#define SELF 1
#define PEER 2
#define THIRD 3
#define CLUSTER 77u
#define RAW_PORTS 64
#define RAW_PER_PORT 4       /* x RAW_PORTS frames, alternating the two ports */

static char tag[16], ns_a[32], ns_b[32], if_a[32], if_b[32];
/* the PMD under test: "af_packet" (the veth end, qpairs=2) or "tap" (a tap
 * device per side, bridged to the veth end in its namespace; the kernel's
 * multi-queue tun picks the queue) */
static const char *pmd = "af_packet";
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int is_tap(void) { return !strcmp(pmd, "tap"); }
static const char *port_name(void) { return is_tap() ? "net_tap0" : "net_af_packet0"; }

/* EAL args for side x ('a' or 'b'); the tap device is hwm<tag>t<x>. */
static void eal_args(char *buf, size_t cap, char x, const char *prefix_tail)
{
	if (is_tap())
		snprintf(buf, cap, "--no-huge -m 256 --no-pci --no-telemetry --file-prefix=hwm%s%c%s "
			 "--vdev=net_tap0,iface=hwm%st%c --log-level=lib.eal:error --log-level=pmd.net.tap:error",
			 tag, x, prefix_tail, tag, x);
	else
		snprintf(buf, cap, "--no-huge -m 256 --no-pci --no-telemetry --file-prefix=hwm%s%c%s "
			 "--vdev=net_af_packet0,iface=hwm%s%c,qpairs=2 --log-level=lib.eal:error", tag, x,
			 prefix_tail, tag, x);
}

/* tap: put our side's tap device (made by the EAL) on the bridge that
 * holds our veth end. The PMD's port MAC is the kernel device's: on a
 * bridge that MAC is the bridge's own (local: frames to it never go out of
 * the tap), so the kernel side gets another one, once the port has started. */
static int tap_plug(char x)
{
	return is_tap() ? sh("ip link set dev hwm%st%c address 02:00:00:00:7a:%02x && "
			     "ip link set dev hwm%st%c master hwm%sbr up", tag, x, (unsigned)x, tag, x, tag) : 0;
}
static uint16_t base_port;

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the peer (node 2): two instances, one reactor thread each ---------- */

typedef struct pside {
	hw_dpdk *d;
	hw_reactor *r;
	int q;
	/* written by this instance's reactor thread only; read after join */
	uint64_t from_self;              /* produce requests from node 1 */
	uint64_t third_right, third_wrong; /* node 3's frames: for our port / not */
} pside;

static pside ps[2];
static volatile sig_atomic_t peer_stop;

static void peer_on_msg(void *ctx, const hw_msg *m)
{
	pside *s = ctx;
	if (m->type != HW_MSG_PRODUCE)
		return;
	if (m->src == THIRD) {
		/* correlation id: the peer port it was sent to, minus BASE */
		if (m->correlation_id == (uint32_t)s->q)
			s->third_right++;
		else
			s->third_wrong++;
		return;
	}
	s->from_self++;
	hw_msg r;
	memset(&r, 0, sizeof r);
	r.type = HW_MSG_PRODUCE_RESP;
	r.src = PEER;
	r.dst = m->src;
	r.correlation_id = m->correlation_id;
	r.u.produce_resp.tp = m->u.produce.tp;
	r.u.produce_resp.base_offset = s->q;
	(void)hw_net_send(hw_dpdk_net(s->d), &r);
}

static int poll_inst(void *arg) { return hw_dpdk_poll(((pside *)arg)->d); }

static void on_term(int sig)
{
	(void)sig;
	peer_stop = 1;
}

static int peer_nq = 2;

static int run_peer(const char *eal, uint16_t base, int nq)
{
	signal(SIGTERM, on_term);
	if (nq < 1 || nq > 2 || hw_dpdk_eal_init(eal) < 0)
		return 2;
	peer_nq = nq;
	for (int q = 0; q < nq; q++) {
		ps[q].q = q;
		hw_dpdk_cfg c = { .cluster_id = CLUSTER, .self_id = PEER, .on_msg = peer_on_msg, .ctx = &ps[q],
				  .ip = inet_addr("10.202.0.2"), .udp_port = base, .queue = (uint16_t)q,
				  .n_queues = (uint16_t)nq, .n_mbufs = 4095, .owner_reactor = q };
		int err = 0;
		ps[q].d = hw_dpdk_create(&c, &err);
		if (!ps[q].d)
			return 3;
		/* node 1 is learned from its frames: answers go to the port the
		 * request came from (the requesting instance's BASE + i) */
		hw_reactor_cfg rc = { .id = q, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_us = 20,
				      .sleep_min_us = 50, .sleep_max_us = 20000 };
		ps[q].r = hw_reactor_create(&rc);
		if (!ps[q].r || hw_reactor_add_poller(ps[q].r, "dpdk", poll_inst, NULL, &ps[q]) < 0 ||
		    hw_dpdk_add_wait_sources(ps[q].d, ps[q].r) < (nq > 1))   /* the hand-off eventfd */
			return 4;
	}
	if (tap_plug('b'))   /* after the port started (it sets the device's MAC) */
		return 6;
	for (int q = 0; q < nq; q++)
		if (hw_reactor_start(ps[q].r) < 0)
			return 5;
	while (!peer_stop && getppid() != 1)
		usleep(10000);
	for (int q = 0; q < nq; q++) {
		hw_reactor_stop(ps[q].r);
		hw_reactor_join(ps[q].r);
	}
	for (int q = 0; q < nq; q++) {
		const hw_dpdk_stats *st = hw_dpdk_get_stats(ps[q].d);
		printf("q=%d self=%llu right=%llu wrong=%llu out=%llu in=%llu dropped=%llu wakeups=%llu "
		       "stale=%llu replayed=%llu mode=%d\n", q, (unsigned long long)ps[q].from_self,
		       (unsigned long long)ps[q].third_right, (unsigned long long)ps[q].third_wrong,
		       (unsigned long long)st->rx_steered_out, (unsigned long long)st->rx_steered_in,
		       (unsigned long long)st->rx_steer_dropped, (unsigned long long)st->rx_steer_wakeups,
		       (unsigned long long)st->wire.drops[HW_WIRE_DROP_STALE_SENDER],
		       (unsigned long long)st->wire.drops[HW_WIRE_DROP_REPLAYED], hw_dpdk_port_steering(ps[q].d, 0));
	}
	fflush(stdout);
	for (int q = nq - 1; q >= 0; q--) {
		hw_dpdk_destroy(ps[q].d);
		hw_reactor_destroy(ps[q].r);
	}
	hw_dpdk_eal_cleanup();
	return 0;
}

/* ---- namespaces --------------------------------------------------------- */

static void netns_down(void)
{
	sh("ip netns del %s 2>/dev/null", ns_a);   /* takes the veth pair with it */
	sh("ip netns del %s 2>/dev/null", ns_b);
}

/* A process in its own session that removes the namespaces once we are
 * gone (EOF on the pipe), also after SIGKILL. */
static void start_watchdog(void)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t w = fork();
	assert_true(w >= 0);
	if (w == 0) {
		setsid();
		close(p[1]);
		int dn = open("/dev/null", O_RDWR);
		dup2(dn, 0);
		dup2(dn, 1);
		dup2(dn, 2);
		char c;
		while (read(p[0], &c, 1) > 0)
			;
		netns_down();
		_exit(0);
	}
	close(p[0]);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);   /* only we hold it open */
}

static void netns_up(void)
{
	snprintf(tag, sizeof tag, "%04x", (unsigned)getpid() & 0xffff);
	snprintf(ns_a, sizeof ns_a, "hwm%sa", tag);
	snprintf(ns_b, sizeof ns_b, "hwm%sb", tag);
	snprintf(if_a, sizeof if_a, "hwm%sa", tag);
	snprintf(if_b, sizeof if_b, "hwm%sb", tag);
	setenv("HW_STEER_TAG", tag, 1);   /* for the peer's tap_plug */
	start_watchdog();
	assert_int_equal(sh("ip netns add %s && ip netns add %s", ns_a, ns_b), 0);
	assert_int_equal(sh("ip -n %s link add %s type veth peer name %s netns %s", ns_a, if_a, if_b, ns_b), 0);
	for (int k = 0; k < 2; k++) {
		const char *ns = k ? ns_b : ns_a, *ifn = k ? if_b : if_a;
		/* no kernel chatter (IPv6 router solicitations) on the link */
		assert_int_equal(sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
				    "net.ipv6.conf.default.disable_ipv6=1 && ip -n %s link set %s up && "
				    "ip -n %s link set lo up", ns, ns, ifn, ns), 0);
		if (is_tap())
			assert_int_equal(sh("ip -n %s link add name hwm%sbr type bridge forward_delay 0 && "
					    "ip -n %s link set dev %s master hwm%sbr && ip -n %s link set dev hwm%sbr up",
					    ns, tag, ns, ifn, tag, ns, tag), 0);
	}
}

static void enter_ns(const char *ns)
{
	char path[128];
	snprintf(path, sizeof path, "/var/run/netns/%s", ns);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(setns(fd, CLONE_NEWNET), 0);
	close(fd);
}

/* ---- this process (node 1) ---------------------------------------------- */

static hw_dpdk *inst[2];
static char self_path[512];
static pid_t peer_pid = -1;
static int peer_out = -1;
/* answers[i][j]: at our instance i, from peer instance j (base_offset);
 * misplaced: at an instance other than the requester (corr id / 10000) */
static uint64_t answers[2][3], misplaced;

static void on_msg(void *ctx, const hw_msg *m)
{
	int i = (int)(uintptr_t)ctx;
	if (m->type != HW_MSG_PRODUCE_RESP)
		return;
	if ((int)(m->correlation_id / 10000) != i) {
		misplaced++;
		return;
	}
	int64_t j = m->u.produce_resp.base_offset;
	answers[i][j == 0 || j == 1 ? j : 2]++;
}

static void poll_all(int64_t ns)
{
	int64_t until = now_ns() + ns;
	while (now_ns() < until) {
		int w = hw_dpdk_poll(inst[0]) + hw_dpdk_poll(inst[1]);
		if (!w)
			usleep(50);
	}
}

static int send_produce(hw_dpdk *d, int32_t src, int32_t dst, int32_t corr)
{
	static const uint8_t none[1];
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = src;
	m.dst = dst;
	m.correlation_id = corr;
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_LEADER, .timeout_ms = 1000, .tp = { 1, 0 }, .records = none, .records_len = 0 };
	return hw_net_send(hw_dpdk_net(d), &m);
}

static uint16_t ip_csum(const uint8_t *h)
{
	uint32_t s = 0;
	for (int k = 0; k < 20; k += 2)
		s += (uint32_t)(h[k] << 8 | h[k + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* One hiwater frame from node 3 in Ethernet/IPv4/UDP, broadcast MAC. */
static int third_frame(hw_wire_tx *tx, uint16_t sport, uint16_t dport, int32_t corr, uint8_t *pkt, size_t cap)
{
	static const uint8_t none[1];
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = THIRD;
	m.dst = PEER;
	m.correlation_id = corr;
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_NONE, .timeout_ms = 1000, .tp = { 1, 0 }, .records = none, .records_len = 0 };
	int flen = hw_wire_encode(tx, &m, NULL, pkt + 42, cap - 42);
	if (flen < 0)
		return flen;
	memset(pkt, 0xff, 6);
	memcpy(pkt + 6, "\x02\x00\x00\x00\x00\x03", 6);
	pkt[12] = 0x08, pkt[13] = 0x00;
	uint8_t *ip = pkt + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	uint16_t tot = (uint16_t)(20 + 8 + flen);
	ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot;
	ip[6] = 0x40;   /* DF */
	ip[8] = 64;
	ip[9] = 17;
	uint32_t s = inet_addr("10.202.0.3"), d = inet_addr("10.202.0.2");
	memcpy(ip + 12, &s, 4);
	memcpy(ip + 16, &d, 4);
	uint16_t c = ip_csum(ip);
	ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
	uint8_t *udp = ip + 20;
	uint16_t ul = (uint16_t)(8 + flen);
	udp[0] = (uint8_t)(sport >> 8), udp[1] = (uint8_t)sport;
	udp[2] = (uint8_t)(dport >> 8), udp[3] = (uint8_t)dport;
	udp[4] = (uint8_t)(ul >> 8), udp[5] = (uint8_t)ul;
	udp[6] = udp[7] = 0;
	return 42 + flen;
}

/* The peer with nq instances in namespace b (forked before we enter a). */
static void start_peer(int nq)
{
	char eal[512], bport[16], nqs[8];
	int pp[2];
	assert_int_equal(pipe(pp), 0);
	char tail[8];
	snprintf(tail, sizeof tail, "%d", nq);
	eal_args(eal, sizeof eal, 'b', tail);
	snprintf(bport, sizeof bport, "%u", base_port);
	snprintf(nqs, sizeof nqs, "%d", nq);
	peer_pid = fork();
	assert_true(peer_pid >= 0);
	if (peer_pid == 0) {
		dup2(pp[1], 1);
		close(pp[0]);
		execlp("ip", "ip", "netns", "exec", ns_b, self_path, "peer", eal, bport, nqs, (char *)NULL);
		_exit(127);
	}
	close(pp[1]);
	peer_out = pp[0];
}

/* The peer is up once it answers our instance 0 (its EAL takes a moment);
 * then the counters start from zero. */
static void wait_peer(void)
{
	int64_t deadline = now_ns() + 20000000000LL;
	memset(answers, 0, sizeof answers);
	while (answers[0][0] == 0) {
		if (now_ns() > deadline) {
			const hw_dpdk_stats *a = hw_dpdk_get_stats(inst[0]), *b = hw_dpdk_get_stats(inst[1]);
			fail_msg("the peer never answered (our queues: rx %llu/%llu, not hiwater %llu/%llu, tx %llu, "
				 "tx dropped %llu, link %d)", (unsigned long long)a->rx_packets,
				 (unsigned long long)b->rx_packets, (unsigned long long)a->rx_not_hiwater,
				 (unsigned long long)b->rx_not_hiwater, (unsigned long long)a->tx_packets,
				 (unsigned long long)a->tx_dropped, hw_dpdk_link_up(inst[0], 0));
		}
		(void)send_produce(inst[0], SELF, PEER, 0 * 10000 + 9999);
		poll_all(100000000LL);
	}
	poll_all(200000000LL);   /* stragglers of the warm-up */
	memset(answers, 0, sizeof answers);
	misplaced = 0;
}

/* SIGTERM the peer; its stats lines into buf. */
static void stop_peer(char *buf, size_t cap)
{
	kill(peer_pid, SIGTERM);
	size_t got = 0;
	ssize_t r;
	while (got < cap - 1 && (r = read(peer_out, buf + got, cap - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = 0;
	close(peer_out);
	int status = 0;
	assert_int_equal(waitpid(peer_pid, &status, 0), peer_pid);
	peer_pid = -1;
	printf("peer:\n%s", buf);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void route(int i, const char *fmt, ...)
{
	char ep[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ep, sizeof ep, fmt, ap);
	va_end(ap);
	assert_int_equal(hw_dpdk_add_neighbour(inst[i], PEER, ep), 0);
}

static void test_steer(void **st)
{
	(void)st;
	uint64_t seed = hw_test_seed(is_tap() ? "test_dpdk_steer_tap" : "test_dpdk_steer_af_packet");
	int n_req = 100 + (int)(seed % 101);
	base_port = (uint16_t)(20000 + (seed / 101) % 20000);
	if (geteuid() != 0)
		fail_msg("needs root: it creates network namespaces (CI runs it as root)");
	netns_up();
	start_peer(2);
	/* us, in namespace a */
	enter_ns(ns_a);
	char eal[512];
	eal_args(eal, sizeof eal, 'a', "");
	assert_int_equal(hw_dpdk_eal_init(eal), 0);
	for (int q = 0; q < 2; q++) {
		hw_dpdk_cfg c = { .cluster_id = CLUSTER, .self_id = SELF, .on_msg = on_msg,
				  .ctx = (void *)(uintptr_t)q, .ip = inet_addr("10.202.0.1"), .udp_port = base_port,
				  .queue = (uint16_t)q, .n_queues = 2, .n_mbufs = 4095 };
		int err = 0;
		inst[q] = hw_dpdk_create(&c, &err);
		if (!inst[q])
			fail_msg("hw_dpdk_create queue %d: %s", q, strerror(-err));
	}
	assert_int_equal(tap_plug('a'), 0);   /* after the port started (it sets the device's MAC) */
	/* af_packet has no flow API: software steering; tap: rte_flow where the
	 * kernel has TC flower (not on this CI's kernel), else software */
	int our_mode = hw_dpdk_port_steering(inst[0], 0);
	printf("%s: steering %s\n", pmd, hw_dpdk_steer_name(our_mode));
	if (is_tap())
		assert_true(our_mode == HW_DPDK_STEER_SW || our_mode == HW_DPDK_STEER_FLOW);
	else
		assert_int_equal(our_mode, HW_DPDK_STEER_SW);
	route(0, "dpdk:port=%s,ip=10.202.0.2,udp=%u,queues=2", port_name(), base_port);
	wait_peer();
	/* 1. every (our instance i, peer instance j) */
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			if (i == j)
				route(i, "dpdk:port=%s,ip=10.202.0.2,udp=%u,queues=2", port_name(), base_port);
			else
				route(i, "dpdk:port=%s,ip=10.202.0.2,udp=%u", port_name(), base_port + j);
			uint64_t before = answers[i][j];
			for (int k = 0; k < n_req; k++) {
				assert_int_equal(send_produce(inst[i], SELF, PEER, i * 10000 + k), 0);
				if (k % 16 == 15)
					poll_all(1000000LL);
			}
			int64_t deadline = now_ns() + 5000000000LL;
			while (answers[i][j] - before < (uint64_t)n_req && now_ns() < deadline)
				poll_all(10000000LL);
			poll_all(50000000LL);   /* duplicates would show now */
			printf("our instance %d -> peer port BASE+%d: %llu of %d answered by peer instance %d\n", i, j,
			       (unsigned long long)(answers[i][j] - before), n_req, j);
			assert_int_equal(answers[i][j] - before, n_req);
		}
	assert_int_equal(answers[0][2] + answers[1][2], 0);   /* no answer from a wrong instance */
	assert_int_equal(misplaced, 0);                         /* none at a wrong instance of ours */

	/* 2. node 3's frames from 64 source ports to both peer ports */
	hw_wire_tx tx3 = { .cluster_id = CLUSTER, .incarnation = hw_wire_new_incarnation(), .stream = 0 };
	uint8_t pkt[512];
	for (int k = 0; k < RAW_PORTS * RAW_PER_PORT; k++) {
		int j = k & 1;
		int len = third_frame(&tx3, (uint16_t)(40000 + k % RAW_PORTS), (uint16_t)(base_port + j), j, pkt,
				      sizeof pkt);
		assert_true(len > 0);
		assert_int_equal(hw_dpdk_tx_raw(inst[0], 0, pkt, (size_t)len), 0);
		if (k % 16 == 15)
			poll_all(1000000LL);
	}
	poll_all(300000000LL);

	/* 3. our counters, then the peer's */
	uint64_t out = 0, in = 0;
	for (int q = 0; q < 2; q++) {
		const hw_dpdk_stats *s = hw_dpdk_get_stats(inst[q]);
		printf("us q%d: handed out %llu, in %llu, dropped %llu, stale %llu, replayed %llu\n", q,
		       (unsigned long long)s->rx_steered_out, (unsigned long long)s->rx_steered_in,
		       (unsigned long long)s->rx_steer_dropped,
		       (unsigned long long)s->wire.drops[HW_WIRE_DROP_STALE_SENDER],
		       (unsigned long long)s->wire.drops[HW_WIRE_DROP_REPLAYED]);
		assert_int_equal(s->wire.drops[HW_WIRE_DROP_STALE_SENDER], 0);
		assert_int_equal(s->wire.drops[HW_WIRE_DROP_REPLAYED], 0);
		assert_int_equal(s->rx_steer_dropped, 0);
		out += s->rx_steered_out;
		in += s->rx_steered_in;
	}
	assert_int_equal(out, in);
	char buf[2048];
	stop_peer(buf, sizeof buf);
	uint64_t pout = 0, pin = 0, right = 0;
	const char *line = buf;
	for (int q = 0; q < 2; q++) {
		int pq, mode;
		unsigned long long self, rt, wr, o, i2, dr, wk, stale, rep;
		assert_non_null(line);
		assert_int_equal(sscanf(line, "q=%d self=%llu right=%llu wrong=%llu out=%llu in=%llu dropped=%llu "
					      "wakeups=%llu stale=%llu replayed=%llu mode=%d",
					&pq, &self, &rt, &wr, &o, &i2, &dr, &wk, &stale, &rep, &mode), 11);
		assert_int_equal(pq, q);
		assert_int_equal(mode, our_mode);   /* the same PMD on the same kernel */
		/* requests: n_req from each of our instances, plus warm-up to 0 */
		assert_true(self >= (uint64_t)(2 * n_req));
		assert_int_equal(wr, 0);          /* node 3's frames: each at its port's instance */
		assert_int_equal(stale, 0);
		assert_int_equal(rep, 0);
		assert_int_equal(dr, 0);
		right += rt;
		pout += o;
		pin += i2;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	assert_int_equal(right, RAW_PORTS * RAW_PER_PORT);
	assert_int_equal(pout, pin);
	if (our_mode == HW_DPDK_STEER_SW)
		assert_true(pout > 0);   /* 128 flows of node 3 alone: some hashed to the other queue */
	if (is_tap())
		goto done;   /* a one-instance tap has one queue: phase 4 is af_packet's */

	/* 4. a peer with ONE instance on the same qpairs=2 port: the kernel
	 * still hashes flows to both sockets; its instance polls both */
	start_peer(1);
	route(0, "dpdk:port=%s,ip=10.202.0.2,udp=%u", port_name(), base_port);
	route(1, "dpdk:port=%s,ip=10.202.0.2,udp=%u", port_name(), base_port);
	wait_peer();
	/* one instance after the other: the peer answers a learned node at
	 * the port its latest frame came from */
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < n_req; k++) {
			assert_int_equal(send_produce(inst[i], SELF, PEER, i * 10000 + k), 0);
			if (k % 16 == 15)
				poll_all(1000000LL);
		}
		int64_t deadline = now_ns() + 5000000000LL;
		while (answers[i][0] < (uint64_t)n_req && now_ns() < deadline)
			poll_all(10000000LL);
		poll_all(50000000LL);
	}
	printf("one-instance peer: answered %llu + %llu of %d + %d\n", (unsigned long long)answers[0][0],
	       (unsigned long long)answers[1][0], n_req, n_req);
	stop_peer(buf, sizeof buf);
	assert_int_equal(answers[0][0], n_req);
	assert_int_equal(answers[1][0], n_req);
	assert_int_equal(answers[0][1] + answers[1][1] + answers[0][2] + answers[1][2] + misplaced, 0);
	int pq, mode;
	unsigned long long self, rt, wr, o, i2, dr, wk, stale, rep;
	assert_int_equal(sscanf(buf, "q=%d self=%llu right=%llu wrong=%llu out=%llu in=%llu dropped=%llu "
				     "wakeups=%llu stale=%llu replayed=%llu mode=%d",
				&pq, &self, &rt, &wr, &o, &i2, &dr, &wk, &stale, &rep, &mode), 11);
	assert_int_equal(mode, HW_DPDK_STEER_NONE);   /* one instance: nothing to steer */
	assert_true(self >= (uint64_t)(2 * n_req));
	assert_int_equal(stale + rep + o + i2, 0);
	assert_null(strchr(strchr(buf, '\n') + 1, 'q'));   /* one instance reported */
done:
	for (int q = 1; q >= 0; q--)
		hw_dpdk_destroy(inst[q]);
	hw_dpdk_eal_cleanup();
}

int main(int argc, char **argv)
{
	if (getenv("HW_STEER_PMD"))
		pmd = getenv("HW_STEER_PMD");
	if (getenv("HW_STEER_TAG"))
		snprintf(tag, sizeof tag, "%s", getenv("HW_STEER_TAG"));
	if (argc == 5 && !strcmp(argv[1], "peer"))
		return run_peer(argv[2], (uint16_t)atoi(argv[3]), atoi(argv[4]));
	if (!realpath(argv[0], self_path))
		return 1;
	if (argc == 2 && (!strcmp(argv[1], "af_packet") || !strcmp(argv[1], "tap")))
		pmd = argv[1];
	setenv("HW_STEER_PMD", pmd, 1);   /* the peer (exec'd through ip netns) reads it */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steer),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (peer_pid > 0) {
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, NULL, 0);
	}
	netns_down();
	return rc;
}
