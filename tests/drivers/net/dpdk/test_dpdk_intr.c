/* test_dpdk_intr.c — a BACKOFF reactor sleeping on a DPDK port's RX-queue
 * interrupt: this process is a virtio_user port in vhost-user server mode
 * (--no-huge --single-file-segments), the peer process (dpdk_peer) a
 * net_vhost port connecting to it. (net_vhost's own interrupt fd is an epoll
 * set the transport cannot clear; hw_dpdk_add_wait_sources skips it, so the
 * peer polls with backoff.)
 * The reactor's sleep cap is 200 ms; replies from the peer must wake it
 * through the interrupt fd far sooner. Requests are handed to the reactor
 * thread over an SPSC ring + hw_reactor_wake (the transport is single-
 * threaded). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_dpdk.h"
#include "hw_err.h"
#include "hw_reactor.h"
#include "hw_spsc.h"
#include "dpdk_test_common.h"
#include "../../../support/hw_test.h"

#define SELF 1
#define PEER 2
#define CLUSTER 4343u
#define ROUNDS 20

static hw_dpdk *dp;
static hw_reactor *r;
static hw_spsc cmd;
static int link_up;            /* atomic: written by the reactor */
static uint32_t answered;      /* atomic: correlation id of the last answer */
static uint64_t seed;

static void on_msg(void *ctx, const hw_msg *m)
{
	(void)ctx;
	if (m->type == HW_MSG_PRODUCE_RESP && m->u.produce_resp.error == HW_ERR_NONE)
		/* release: orders nothing else; the test thread only needs the value */
		__atomic_store_n(&answered, m->correlation_id, __ATOMIC_RELEASE);
}

static int poller(void *arg)
{
	(void)arg;
	int work = hw_dpdk_poll(dp);
	void *p;
	static uint8_t recs[4096];
	while ((p = hw_spsc_pop(&cmd)) != NULL) {
		uint32_t corr = (uint32_t)(uintptr_t)p;
		size_t n = dt_make_batches(recs, sizeof recs, corr);
		hw_msg m;
		memset(&m, 0, sizeof m);
		m.type = HW_MSG_PRODUCE;
		m.src = SELF;
		m.dst = PEER;
		m.correlation_id = corr;
		m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = (int32_t)corr, .tp = { 1, 0 }, .records = recs, .records_len = (uint32_t)n };
		hw_net_send(hw_dpdk_net(dp), &m);
		work++;
	}
	/* relaxed: a status flag for the test thread */
	__atomic_store_n(&link_up, hw_dpdk_link_up(dp, 0), __ATOMIC_RELAXED);
	return work;
}

static void test_rx_interrupt_wakes_reactor(void **st)
{
	(void)st;
	char dir[128], sock[192], args[512], peer_args[512];
	mkdir("/tmp/net", 0777);
	snprintf(dir, sizeof dir, "/tmp/net/i-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(sock, sizeof sock, "%s/vhost.sock", dir);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(args, sizeof args,
		 "--no-huge -m 256 --no-pci --no-telemetry --single-file-segments --file-prefix=hwi%d-a "
		 "--lcores=0@(0-%ld) --vdev=virtio_user0,path=%s,queues=1,server=1",
		 (int)getpid(), ncpu - 1, sock);
	snprintf(peer_args, sizeof peer_args,
		 "--no-huge -m 256 --no-pci --no-telemetry --file-prefix=hwi%d-b --lcores=0@(0-%ld) "
		 "--log-level=pmd.net.vhost:error --log-level=lib.vhost.config:error "
		 "--vdev=net_vhost0,iface=%s,queues=1,client=1",
		 (int)getpid(), ncpu - 1, sock);
	char exe[512];
	const char *b = getenv("HW_BUILDDIR");
	snprintf(exe, sizeof exe, "%s/tests/drivers/net/dpdk/dpdk_peer", b ? b : ".");
	pid_t peer = fork();
	if (peer == 0) {
		char self[16], pn[16], cl[16];
		snprintf(self, sizeof self, "%d", PEER);
		snprintf(pn, sizeof pn, "%d", SELF);
		snprintf(cl, sizeof cl, "%u", CLUSTER);
		execl(exe, exe, self, pn, cl, peer_args, (char *)NULL);
		_exit(127);
	}
	/* the peer (vhost-user client) retries until our server socket exists;
	 * virtio_user in server mode waits in EAL init for it to connect */
	int rc = hw_dpdk_eal_init(args);
	if (rc)
		fail_msg("EAL init: %s", strerror(-rc));
	hw_dpdk_cfg cfg = { .cluster_id = CLUSTER, .self_id = SELF, .on_msg = on_msg, .owner_reactor = 7 };
	int err;
	dp = hw_dpdk_create(&cfg, &err);
	if (!dp)
		fail_msg("hw_dpdk_create: %s", strerror(-err));
	assert_int_equal(hw_dpdk_add_neighbour(dp, PEER, "dpdk:port=0"), 0);
	assert_int_equal(hw_spsc_init(&cmd, 64), 0);
	hw_reactor_cfg rc_cfg = { .id = 7, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_iters = 50,
				  .sleep_min_us = 200000, .sleep_max_us = 200000 };
	r = hw_reactor_create(&rc_cfg);
	assert_non_null(r);
	assert_int_equal(hw_reactor_add_poller(r, "dpdk", poller, NULL, NULL), 0);
	int n_intr = hw_dpdk_add_wait_sources(dp, r);
	print_message("virtio_user port: %d RX interrupt source(s)\n", n_intr);
	assert_true(n_intr >= 1);

	assert_int_equal(hw_reactor_start(r), 0);
	int64_t until = hw_reactor_now_ns() + 30000000000LL;
	/* the reactor may sleep up to 200 ms between link checks */
	while (!__atomic_load_n(&link_up, __ATOMIC_RELAXED) && hw_reactor_now_ns() < until) {
		hw_reactor_wake(r);
		usleep(10000);
	}
	assert_true(__atomic_load_n(&link_up, __ATOMIC_RELAXED));

	/* first answer (the peer may still be starting): resend until it comes */
	uint32_t corr = 1;
	while (__atomic_load_n(&answered, __ATOMIC_ACQUIRE) != corr) {
		assert_true(hw_reactor_now_ns() < until);
		assert_int_equal(hw_spsc_push(&cmd, (void *)(uintptr_t)corr), 0);
		hw_reactor_wake(r);
		usleep(100000);
	}
	hw_reactor_stats s0, s1;
	hw_reactor_get_stats(r, &s0);
	int64_t lat[ROUNDS];
	for (int i = 0; i < ROUNDS; i++) {
		corr = 100 + (uint32_t)i;
		usleep(20000 + (useconds_t)(dt_next(&seed) % 20000));   /* let the reactor fall asleep */
		int64_t t0 = hw_reactor_now_ns();
		assert_int_equal(hw_spsc_push(&cmd, (void *)(uintptr_t)corr), 0);
		hw_reactor_wake(r);
		while (__atomic_load_n(&answered, __ATOMIC_ACQUIRE) != corr) {
			assert_true(hw_reactor_now_ns() < until);
			usleep(20);
		}
		lat[i] = hw_reactor_now_ns() - t0;
	}
	hw_reactor_get_stats(r, &s1);
	int64_t sorted[ROUNDS];
	memcpy(sorted, lat, sizeof lat);
	for (int i = 1; i < ROUNDS; i++)
		for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
			int64_t t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	print_message("round trips with a sleeping reactor: p50 %lld us, max %lld us; sleeps %llu wakeups %llu\n",
		      (long long)sorted[ROUNDS / 2] / 1000, (long long)sorted[ROUNDS - 1] / 1000,
		      (unsigned long long)(s1.sleeps - s0.sleeps), (unsigned long long)(s1.wakeups - s0.wakeups));
	/* woken by the interrupt (and our eventfd), not the 200 ms cap: the
	 * cap alone would make the median ~100 ms or more */
	assert_true(sorted[ROUNDS / 2] < 50000000LL);
	assert_true(s1.wakeups - s0.wakeups >= (uint64_t)ROUNDS);

	hw_reactor_stop(r);
	hw_reactor_join(r);
	kill(peer, SIGTERM);
	int status = 0;
	waitpid(peer, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	hw_reactor_destroy(r);
	hw_dpdk_destroy(dp);
	hw_dpdk_eal_cleanup();
	hw_spsc_fini(&cmd);
	unlink(sock);
	rmdir(dir);
}

int main(void)
{
	seed = hw_test_seed("test_dpdk_intr");
	seed = seed * 2654435761u + 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rx_interrupt_wakes_reactor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
