/* test_dpdk_mq.c — one DPDK queue pair per reactor over memif, between two
 * processes (hw_dpdk.h, "memif queues").
 *
 * This process is a memif SERVER with two instances (queue 0 on the main
 * thread, queue 1 on its own thread, like two reactors). The peer — this
 * executable again, `test_dpdk_mq peer <queues> <EAL args>` — is a memif
 * CLIENT with 1 or 2 instances polled by one thread; it answers every
 * PRODUCE from the instance that received it with base_offset = that
 * instance's queue. So each answer says which peer queue the request
 * arrived on, and the instance the answer arrives at says which of ours.
 *
 *   A. peer with 2 queues: the hello makes our port use 2 queues; requests
 *      sent on our queue q arrive on the peer's queue q and come back on
 *      ours, once each (no duplicate: nothing polled twice).
 *   B. peer killed and restarted with 1 queue: the port drops to 1 queue at
 *      once; queue 1 refuses to send (-EXDEV), and while queue 0 carries
 *      traffic our queue 1 receives nothing — polling it would re-read ring
 *      0 (DPDK 22.11 memif: a server queue the client did not connect
 *      aliases ring 0; every packet came back twice before).
 *   C. peer restarted with 2 queues: both queues are back, without
 *      restarting this process.
 *   D. peer restarted with 3 queues (more reactors than ours): all three
 *      connect (memif servers take up to HW_DPDK_MAX_QUEUES), and queue 2
 *      is polled by our instance 0 (queues round-robin over instances).
 *
 * HW_TEST_SEED picks the number of requests per round. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_dpdk.h"
#include "hw_reactor.h"
#include "../../../support/hw_test.h"

#define SELF 1
#define PEER 2
#define CLUSTER 77u
#define ALL_QUEUES 0xA11u   /* correlation id: the peer answers from every queue */
#define PEER_MAX_Q 3

/* ---- the peer (memif client) ------------------------------------------- */

static hw_dpdk *pinst[PEER_MAX_Q];
static volatile sig_atomic_t peer_stop;

static int peer_nq;

/* Answers a queue refused (-EXDEV before its queue hello is through,
 * -EAGAIN on a full ring), resent by run_peer's loop outside the receive
 * callback: dropping them lost a round trip now and then (the test then
 * timed out waiting for it). One slot list per queue, in order. */
#define PEER_PENDING_MAX 512
static hw_msg peer_pending[PEER_MAX_Q][PEER_PENDING_MAX];
static int peer_npending[PEER_MAX_Q];

static void peer_flush(int k)
{
	int n = 0;
	while (n < peer_npending[k] && hw_net_send(hw_dpdk_net(pinst[k]), &peer_pending[k][n]) == 0)
		n++;
	memmove(peer_pending[k], peer_pending[k] + n, (size_t)(peer_npending[k] - n) * sizeof(hw_msg));
	peer_npending[k] -= n;
}

/* Answer produce m from queue k; base_offset names the queue it leaves on. */
static void peer_answer(const hw_msg *m, int k)
{
	hw_msg r;
	memset(&r, 0, sizeof r);
	r.type = HW_MSG_PRODUCE_RESP;
	r.src = PEER;
	r.dst = m->src;
	r.correlation_id = m->correlation_id;
	r.u.produce_resp.tp = m->u.produce.tp;
	r.u.produce_resp.base_offset = k;
	/* behind earlier refused answers, never ahead of them */
	if ((peer_npending[k] || hw_net_send(hw_dpdk_net(pinst[k]), &r) != 0) &&
	    peer_npending[k] < PEER_PENDING_MAX)
		peer_pending[k][peer_npending[k]++] = r;
}

static void peer_on_msg(void *ctx, const hw_msg *m)
{
	uintptr_t q = (uintptr_t)ctx;
	if (m->type != HW_MSG_PRODUCE)
		return;
	if (m->correlation_id == ALL_QUEUES) {
		/* answer from every queue */
		for (int k = 0; k < peer_nq; k++)
			peer_answer(m, k);
		return;
	}
	peer_answer(m, (int)q);
}

static void on_term(int sig)
{
	(void)sig;
	peer_stop = 1;
}

static int run_peer(int nq, const char *eal)
{
	signal(SIGTERM, on_term);
	if (nq < 1 || nq > PEER_MAX_Q || hw_dpdk_eal_init(eal) < 0)
		return 2;
	peer_nq = nq;
	for (int q = 0; q < nq; q++) {
		hw_dpdk_cfg c = { .cluster_id = CLUSTER, .self_id = PEER, .on_msg = peer_on_msg,
				  .ctx = (void *)(uintptr_t)q, .queue = (uint16_t)q, .n_queues = (uint16_t)nq,
				  .n_mbufs = 2047 };
		int err = 0;
		pinst[q] = hw_dpdk_create(&c, &err);
		if (!pinst[q] || hw_dpdk_add_neighbour(pinst[q], SELF, "dpdk:port=net_memif0") < 0)
			return 3;
	}
	while (!peer_stop && getppid() != 1) {
		int work = 0;
		for (int q = 0; q < nq; q++) {
			work += hw_dpdk_poll(pinst[q]);
			peer_flush(q);
		}
		if (!work)
			usleep(100);
	}
	for (int q = nq - 1; q >= 0; q--)
		hw_dpdk_destroy(pinst[q]);
	hw_dpdk_eal_cleanup();
	return 0;
}

/* ---- this process (memif server, two instances) ------------------------ */

typedef struct side {
	hw_dpdk *d;
	/* answers received on this instance, by the peer queue in base_offset
	 * (relaxed atomics: written by the instance's thread, read by main) */
	uint64_t by_peer_queue[PEER_MAX_Q + 1];   /* last: anything else */
} side;

static side sides[2];
static char dir[128], eal[1024];
static pid_t peer_pid = -1;

/* queue 1's thread: polls, sends what main asks for, publishes counters */
static struct {
	pthread_t th;
	int stop;
	uint32_t send_n;         /* requests main asked for (release by main) */
	uint32_t sent_n;         /* requests handled (release by the thread) */
	int last_rc;
	int retry_unconnected;   /* 1: a send refused as unconnected (-EXDEV)
				  * is retried, not counted (main, release) */
	uint64_t rx_q1;          /* sides[1]'s rx_queue_packets[1] */
	uint64_t unconnected;
} t1;

static void on_msg(void *ctx, const hw_msg *m)
{
	side *s = ctx;
	if (m->type != HW_MSG_PRODUCE_RESP)
		return;
	int64_t q = m->u.produce_resp.base_offset;
	int k = q >= 0 && q < PEER_MAX_Q ? (int)q : PEER_MAX_Q;
	/* relaxed: a counter main reads after waiting; no other data */
	__atomic_fetch_add(&s->by_peer_queue[k], 1, __ATOMIC_RELAXED);
}

static uint64_t got(int inst, int k)
{
	return __atomic_load_n(&sides[inst].by_peer_queue[k], __ATOMIC_RELAXED);
}

static int send_req(hw_dpdk *d, uint32_t corr)
{
	static const uint8_t none[1];
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = SELF;
	m.dst = PEER;
	m.correlation_id = corr;
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_LEADER, .timeout_ms = 1000, .tp = { 1, 0 }, .records = none, .records_len = 0 };
	return hw_net_send(hw_dpdk_net(d), &m);
}

static void *t1_main(void *arg)
{
	(void)arg;
	hw_dpdk *d = sides[1].d;
	/* acquire: pairs with main's release of stop */
	while (!__atomic_load_n(&t1.stop, __ATOMIC_ACQUIRE)) {
		/* acquire: pairs with main's release store of send_n */
		uint32_t want = __atomic_load_n(&t1.send_n, __ATOMIC_ACQUIRE);
		uint32_t done = t1.sent_n;
		while (done < want) {
			int rc = send_req(d, 100000 + done);
			/* acquire: pairs with round_trip's release store. A peer that
			 * came back with two ring pairs has connected queue 1 only
			 * once this instance has polled its queue hello: until then
			 * a send is refused (-EXDEV), and counting it as sent lost
			 * requests whose answers phase C then waited for in vain */
			if (rc == -EAGAIN ||
			    (rc == -EXDEV && __atomic_load_n(&t1.retry_unconnected, __ATOMIC_ACQUIRE)))
				break;
			t1.last_rc = rc;
			done++;
		}
		int work = hw_dpdk_poll(d);
		const hw_dpdk_stats *st = hw_dpdk_get_stats(d);
		/* relaxed: statistics for main's assertions */
		__atomic_store_n(&t1.rx_q1, st->rx_queue_packets[1], __ATOMIC_RELAXED);
		__atomic_store_n(&t1.unconnected, st->tx_queue_unconnected, __ATOMIC_RELAXED);
		/* release: last_rc written before sent_n is seen by main */
		__atomic_store_n(&t1.sent_n, done, __ATOMIC_RELEASE);
		if (!work)
			usleep(100);
	}
	return NULL;
}

/* main thread: poll queue 0 until cond or fail */
#define POLL_UNTIL(cond, secs)                                                         \
	do {                                                                           \
		int64_t until_ = hw_reactor_now_ns() + (int64_t)(secs) * 1000000000LL; \
		while (!(cond)) {                                                      \
			if (hw_reactor_now_ns() > until_)                              \
				fail_msg("timeout waiting for %s", #cond);             \
			if (!hw_dpdk_poll(sides[0].d))                                 \
				usleep(100);                                           \
		}                                                                      \
	} while (0)

static void start_peer(int nq)
{
	char peer_eal[1024], q[8];
	snprintf(peer_eal, sizeof peer_eal,
		 "--no-huge -m 128 --no-pci --no-telemetry --file-prefix=hwmq%d-b --log-level=pmd.net.memif:error "
		 "--vdev=net_memif0,role=client,bsize=2048,rsize=8,socket=%s/memif.sock",
		 (int)getpid(), dir);
	snprintf(q, sizeof q, "%d", nq);
	peer_pid = fork();
	assert_true(peer_pid >= 0);
	if (peer_pid == 0) {
		execl("/proc/self/exe", "test_dpdk_mq", "peer", q, peer_eal, (char *)NULL);
		_exit(127);
	}
}

static void kill_peer(void)
{
	if (peer_pid > 0) {
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, NULL, 0);
	}
	peer_pid = -1;
}

static uint32_t seed_k;

/* k requests on each usable queue; every answer comes back on the queue it
 * left from, from the same peer queue, exactly once */
static void round_trip(int queues)
{
	uint64_t a0 = got(0, 0), a1 = got(1, 1);
	uint64_t bad0 = got(0, 1) + got(0, 2) + got(0, 3), bad1 = got(1, 0) + got(1, 2) + got(1, 3);
	uint32_t base = __atomic_load_n(&t1.send_n, __ATOMIC_RELAXED);
	if (queues == 2) {
		/* release: pairs with the thread's acquire loads */
		__atomic_store_n(&t1.retry_unconnected, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&t1.send_n, base + seed_k, __ATOMIC_RELEASE);
	}
	for (uint32_t i = 0; i < seed_k; i++) {
		int rc;
		while ((rc = send_req(sides[0].d, i)) == -EAGAIN)
			hw_dpdk_poll(sides[0].d);
		assert_int_equal(rc, 0);
	}
	POLL_UNTIL(got(0, 0) - a0 >= seed_k, 10);
	if (queues == 2) {
		POLL_UNTIL(__atomic_load_n(&t1.sent_n, __ATOMIC_ACQUIRE) == base + seed_k, 10);
		assert_int_equal(t1.last_rc, 0);
		__atomic_store_n(&t1.retry_unconnected, 0, __ATOMIC_RELEASE);   /* release: see t1_main */
		POLL_UNTIL(got(1, 1) - a1 >= seed_k, 10);
	}
	/* stragglers would be duplicates: give them time to show up */
	int64_t until = hw_reactor_now_ns() + 100000000LL;
	while (hw_reactor_now_ns() < until)
		if (!hw_dpdk_poll(sides[0].d))
			usleep(100);
	assert_int_equal(got(0, 0) - a0, seed_k);
	assert_int_equal(got(1, 1) - a1, queues == 2 ? seed_k : 0);
	assert_int_equal(got(0, 1) + got(0, 2) + got(0, 3), bad0);     /* nothing crossed queues */
	assert_int_equal(got(1, 0) + got(1, 2) + got(1, 3), bad1);
}

static void test_memif_queues(void **st)
{
	(void)st;
	unsigned long seed = (unsigned long)hw_test_seed("test_dpdk_mq");
	seed_k = 20 + (uint32_t)(seed % 40);

	snprintf(dir, sizeof dir, "/tmp/net/mq-%d", (int)getpid());
	mkdir("/tmp/net", 0700);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(eal, sizeof eal,
		 "--no-huge -m 128 --no-pci --no-telemetry --file-prefix=hwmq%d-a --log-level=pmd.net.memif:error "
		 "--vdev=net_memif0,role=server,bsize=2048,rsize=8,socket=%s/memif.sock",
		 (int)getpid(), dir);
	assert_int_equal(hw_dpdk_eal_init(eal), 0);
	for (int q = 0; q < 2; q++) {
		hw_dpdk_cfg c = { .cluster_id = CLUSTER, .self_id = SELF, .on_msg = on_msg, .ctx = &sides[q],
				  .queue = (uint16_t)q, .n_queues = 2, .n_mbufs = 2047 };
		int err = 0;
		sides[q].d = hw_dpdk_create(&c, &err);
		assert_non_null(sides[q].d);
		assert_int_equal(hw_dpdk_add_neighbour(sides[q].d, PEER, "dpdk:port=net_memif0"), 0);
	}
	assert_int_equal(hw_dpdk_port_queues(sides[0].d, 0), 1);   /* nobody connected yet */
	assert_int_equal(pthread_create(&t1.th, NULL, t1_main, NULL), 0);
	const hw_dpdk_stats *s0 = hw_dpdk_get_stats(sides[0].d);

	/* A: two queues each way */
	start_peer(2);
	POLL_UNTIL(hw_dpdk_link_up(sides[0].d, 0) && hw_dpdk_port_queues(sides[0].d, 0) == 2, 30);
	round_trip(2);
	print_message("2 queues: %u answers on each queue, queue 1 received %llu packets\n", seed_k,
		      (unsigned long long)__atomic_load_n(&t1.rx_q1, __ATOMIC_RELAXED));

	/* B: the peer comes back with one ring pair */
	uint64_t hellos = s0->queue_hello_rx;
	kill_peer();
	POLL_UNTIL(hw_dpdk_port_queues(sides[0].d, 0) == 1, 5);   /* at once, before any hello */
	start_peer(1);
	POLL_UNTIL(hw_dpdk_link_up(sides[0].d, 0) && s0->queue_hello_rx > hellos, 30);
	assert_int_equal(hw_dpdk_port_queues(sides[0].d, 0), 1);
	uint64_t rx1 = __atomic_load_n(&t1.rx_q1, __ATOMIC_RELAXED);
	uint64_t unc = __atomic_load_n(&t1.unconnected, __ATOMIC_RELAXED);
	round_trip(1);
	/* queue 1 refuses: the peer did not connect it */
	uint32_t base = __atomic_load_n(&t1.send_n, __ATOMIC_RELAXED);
	__atomic_store_n(&t1.send_n, base + 1, __ATOMIC_RELEASE);   /* release: see t1_main */
	POLL_UNTIL(__atomic_load_n(&t1.sent_n, __ATOMIC_ACQUIRE) == base + 1, 10);
	assert_int_equal(t1.last_rc, -EXDEV);
	POLL_UNTIL(__atomic_load_n(&t1.unconnected, __ATOMIC_RELAXED) > unc, 5);
	/* and nothing was read from queue 1 while ring 0 carried traffic */
	assert_int_equal(__atomic_load_n(&t1.rx_q1, __ATOMIC_RELAXED), rx1);
	print_message("1 queue: %u answers on queue 0, queue 1 refused and silent\n", seed_k);

	/* C: two again, no restart here */
	kill_peer();
	start_peer(2);
	POLL_UNTIL(hw_dpdk_link_up(sides[0].d, 0) && hw_dpdk_port_queues(sides[0].d, 0) == 2, 30);
	round_trip(2);

	/* D: a peer with more queues than we have instances */
	kill_peer();
	start_peer(3);
	POLL_UNTIL(hw_dpdk_link_up(sides[0].d, 0) && hw_dpdk_port_queues(sides[0].d, 0) == 3, 30);
	uint64_t q0 = got(0, 0), q1 = got(1, 1), q2 = got(0, 2);
	int rc;
	while ((rc = send_req(sides[0].d, ALL_QUEUES)) == -EAGAIN)
		hw_dpdk_poll(sides[0].d);
	assert_int_equal(rc, 0);
	POLL_UNTIL(got(0, 0) > q0 && got(1, 1) > q1 && got(0, 2) > q2, 10);
	assert_int_equal(got(0, 0), q0 + 1);
	assert_int_equal(got(1, 1), q1 + 1);
	assert_int_equal(got(0, 2), q2 + 1);   /* queue 2: instance 0's, round-robin */
	assert_int_equal(got(1, 2) + got(0, 3) + got(1, 3), 0);
	print_message("3 peer queues on 2 instances: queue 2 served by instance 0\n");

	kill(peer_pid, SIGTERM);
	waitpid(peer_pid, NULL, 0);
	peer_pid = -1;
	/* release: pairs with the thread's acquire */
	__atomic_store_n(&t1.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t1.th, NULL);
	hw_dpdk_destroy(sides[1].d);
	hw_dpdk_destroy(sides[0].d);
	hw_dpdk_eal_cleanup();
	char f[256];
	snprintf(f, sizeof f, "rm -rf %s", dir);
	assert_int_equal(system(f), 0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "peer"))
		return run_peer(atoi(argv[2]), argv[3]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memif_queues),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	kill_peer();
	if (rc) {
		/* a failed assertion left the way out early: no files behind */
		char cmd[512];
		snprintf(cmd, sizeof cmd, "rm -rf %s /var/run/dpdk/hwmq%d-a /var/run/dpdk/hwmq%d-b", dir[0] ? dir : "/nonexistent",
			 (int)getpid(), (int)getpid());
		if (system(cmd) != 0)
			fprintf(stderr, "test_dpdk_mq: cleanup failed: %s\n", cmd);
	}
	return rc;
}
