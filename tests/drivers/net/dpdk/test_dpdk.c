/* test_dpdk.c — the DPDK transport between TWO PROCESSES over net_memif
 * (--no-huge): this process is the memif server, dpdk_peer (fork+exec) the
 * client. Checks produce round trips (including multi-segment frames in both
 * directions), a fetch response split over many frames and sent zero-copy
 * by the peer (external mbufs, holds all released), and a peer restart:
 * SIGKILL the peer, start it again, traffic resumes without restarting us.
 *
 * ASan: DPDK's own libraries are not instrumented; our code is. The test
 * runs under ASan+UBSan like every other test (no skip). */
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
#include "hw_reactor.h"
#include "hw_err.h"
#include "dpdk_test_common.h"
#include "../../../support/hw_test.h"

#define SELF 1
#define PEER 2
#define CLUSTER 4242u

static uint64_t seed;
static hw_dpdk *dp;
static char dir[128], sock[192], peer_args[512];
static pid_t peer_pid = -1;

/* what came back */
static struct {
	int n_resp;
	int n_fetch_frames;
	int16_t error;
	int64_t base_offset;
	uint32_t corr;
	uint8_t *recs;
	size_t recs_len, recs_cap;
	int got_stats;
	hw_partition_meta stats;
} in;

static void on_msg(void *ctx, const hw_msg *m)
{
	(void)ctx;
	if (m->src == PEER)
		in.corr = m->correlation_id;
	switch (m->type) {
	case HW_MSG_PRODUCE_RESP:
		if (m->src != PEER)
			break;        /* hostile phase: mutated frames from "node 7" */
		in.n_resp++;
		in.error = m->u.produce_resp.error;
		in.base_offset = m->u.produce_resp.base_offset;
		break;
	case HW_MSG_FETCH_RESP:
		in.n_fetch_frames++;
		for (int i = 0; i < m->u.fetch_resp.n_parts; i++) {
			const hw_fetch_resp_part *p = &m->u.fetch_resp.parts[i];
			if (in.recs_len + p->records_len <= in.recs_cap)
				memcpy(in.recs + in.recs_len, p->records, p->records_len);
			in.recs_len += p->records_len;
		}
		break;
	case HW_MSG_DESCRIBE_TOPIC_RESP: {
		const hw_describe_topic_resp *d = m->u.other;
		if (d->n_topics == 1 && d->topics[0].n_parts == 1) {
			in.stats = d->topics[0].parts[0];
			in.got_stats++;
		}
		break;
	}
	default:
		break;
	}
}

/* Poll until cond or timeout; be nice to the 2 cores when idle. */
#define POLL_UNTIL(cond, secs)                                                  \
	do {                                                                    \
		int64_t until_ = hw_reactor_now_ns() + (int64_t)(secs) * 1000000000LL; \
		while (!(cond)) {                                               \
			if (hw_reactor_now_ns() > until_)                       \
				fail_msg("timeout waiting for %s", #cond);      \
			if (!hw_dpdk_poll(dp))                                  \
				usleep(50);                                     \
		}                                                               \
	} while (0)

static void start_peer(void)
{
	char exe[512];
	const char *b = getenv("HW_BUILDDIR");
	snprintf(exe, sizeof exe, "%s/tests/drivers/net/dpdk/dpdk_peer", b ? b : ".");
	peer_pid = fork();
	assert_true(peer_pid >= 0);
	if (peer_pid == 0) {
		char self[16], peer[16], cl[16];
		snprintf(self, sizeof self, "%d", PEER);
		snprintf(peer, sizeof peer, "%d", SELF);
		snprintf(cl, sizeof cl, "%u", CLUSTER);
		execl(exe, exe, self, peer, cl, peer_args, (char *)NULL);
		_exit(127);
	}
}

static void wait_link(int up)
{
	POLL_UNTIL(hw_dpdk_link_up(dp, 0) == up, 30);
}

static void produce_once(uint32_t corr, size_t len)
{
	static uint8_t recs[70000];
	size_t n = dt_make_batches(recs, len, corr);
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = SELF;
	m.dst = PEER;
	m.correlation_id = corr;
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = (int32_t)corr, .tp = { 1, 0 }, .records = recs, .records_len = (uint32_t)n };
	int before = in.n_resp;
	/* the link may be up before the peer's reactor runs: resend until answered */
	int64_t until = hw_reactor_now_ns() + 20000000000LL;
	for (;;) {
		assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
		int64_t retry = hw_reactor_now_ns() + 200000000LL;
		while (in.n_resp == before && hw_reactor_now_ns() < retry)
			if (!hw_dpdk_poll(dp))
				usleep(50);
		if (in.n_resp > before)
			break;
		assert_true(hw_reactor_now_ns() < until);
	}
	assert_int_equal(in.corr, corr);
	assert_int_equal(in.error, HW_ERR_NONE);
	assert_int_equal(in.base_offset, (int64_t)n);
}

static void test_memif_two_processes(void **st)
{
	(void)st;
	start_peer();
	wait_link(1);
	/* the peer (memif client) announces the ring pairs it connected: one */
	POLL_UNTIL(hw_dpdk_get_stats(dp)->queue_hello_rx > 0, 5);
	assert_int_equal(hw_dpdk_port_queues(dp, 0), 1);

	/* small, then multi-segment frames (>2 KiB mbufs) both ways */
	for (uint32_t i = 0; i < 20; i++)
		produce_once(100 + i, 200 + (size_t)(dt_next(&seed) % 1500));
	for (uint32_t i = 0; i < 10; i++)
		produce_once(200 + i, 9000 + (size_t)(dt_next(&seed) % 50000));
	const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);
	/* memif: a packet without lent records leaves as one segment (see
	 * hw_dpdk.h); every packet, up to 64 KB, arrives in ONE 64 KiB RX mbuf
	 * (memif RX pool), so nothing is linearised to decode it */
	assert_int_equal(s->tx_segments, s->tx_packets);

	/* a fetch answered with ~400 KB: split over >= 7 frames, zero-copy on the peer */
	in.recs_cap = 1 << 20;
	in.recs = malloc(in.recs_cap);
	int64_t fetch_seed = 7000 + (int64_t)(dt_next(&seed) % 1000);
	size_t want_cap = 400000;
	static uint8_t expect[400000];
	size_t want = dt_make_batches(expect, want_cap, (uint64_t)fetch_seed);
	hw_fetch_part fp;
	memset(&fp, 0, sizeof fp);
	fp.tp = (hw_tp){ 1, 0 };
	fp.fetch_offset = fetch_seed;
	fp.current_leader_epoch = -1;
	fp.last_fetched_epoch = -1;
	fp.partition_max_bytes = (int32_t)want_cap;
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_FETCH;
	m.src = SELF;
	m.dst = PEER;
	m.correlation_id = 555;
	m.u.fetch = (hw_fetch_req){ .replica_id = SELF, .replica_epoch = 1, .max_wait_ms = 500, .min_bytes = 1, .max_bytes = (int32_t)want_cap, .isolation_level = 0, .n_parts = 1, .parts = &fp };
	assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
	POLL_UNTIL(in.recs_len >= want, 20);
	assert_int_equal(in.recs_len, want);
	assert_int_equal(dt_check_batches(in.recs, in.recs_len, (uint64_t)fetch_seed), 0);
	assert_true(in.n_fetch_frames >= (int)(want / HW_WIRE_MAX_FRAME) + 1);
	assert_int_equal(s->rx_linearized_bytes, 0);
	print_message("fetch response: %zu bytes in %d frames\n", in.recs_len, in.n_fetch_frames);

	/* the peer sent the records by reference and released every hold */
	hw_describe_topic_req dq = { 0, NULL };
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_DESCRIBE_TOPIC;
	m.src = SELF;
	m.dst = PEER;
	m.u.other = &dq;
	assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
	POLL_UNTIL(in.got_stats, 10);
	print_message("peer: zero-copy %lld bytes, copied %lld bytes, holds outstanding %lld\n",
		      (long long)in.stats.high_watermark, (long long)in.stats.log_end_offset,
		      (long long)in.stats.log_start_offset);
	/* memif carries the records by reference too: chains that fit one
	 * memif buffer (hw_dpdk_int.h, MEMIF_TX_CHAINS); the peer copied only
	 * headers (~100 bytes per frame), and every hold was released (the
	 * PMD copies into its ring inside tx_burst and frees the mbufs) */
	assert_int_equal(in.stats.high_watermark, (int64_t)want);
	assert_int_equal(in.stats.log_start_offset, 0);
	assert_true(in.stats.log_end_offset < 200 * (int64_t)in.n_fetch_frames + 4096);

	/* hostile packets from the peer: every one is accounted for exactly
	 * once (not hiwater / ARP / dropped by reason / delivered), ARP
	 * requests for our IP are answered, and we keep serving */
	uint64_t rx0 = s->rx_packets, arp0 = s->arp_replies_tx;
	uint32_t n_hostile = 2000 + (uint32_t)(dt_next(&seed) % 1000);
	static uint8_t one[200];
	size_t one_len = dt_make_batches(one, sizeof one, 4242);
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = SELF;
	m.dst = PEER;
	m.correlation_id = 4242;
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = (int32_t)n_hostile, .tp = { 0xFEED, 0 }, .records = one, .records_len = (uint32_t)one_len };
	assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
	POLL_UNTIL(in.n_resp > 0 && in.corr == 4242, 60);
	for (int i = 0; i < 1000; i++)   /* stragglers */
		hw_dpdk_poll(dp);
	uint64_t got = s->rx_packets - rx0;
	print_message("hostile: %u sent, %llu received: not hiwater %llu, arp %llu, drops %llu, delivered %llu\n",
		      n_hostile, (unsigned long long)got, (unsigned long long)s->rx_not_hiwater,
		      (unsigned long long)s->arp_rx, (unsigned long long)hw_wire_stats_total_drops(&s->wire),
		      (unsigned long long)s->wire.rx_frames);
	assert_true(got >= (uint64_t)n_hostile * 9 / 10);
	/* and nothing twice: the memif ring stays sane after the multi-frame
	 * fetch response above (regression: stale NEXT flags duplicated
	 * packets ~20x when chains were sent on memif) */
	assert_true(got <= (uint64_t)n_hostile + 1);
	/* (the peer, a memif client, also announces its ring count: queue
	 * hellos; its hostile hellos are refused, counted per reason) */
	uint64_t hello_drops = 0;
	for (int r = 0; r < HW_QHELLO_DROP__COUNT; r++)
		hello_drops += s->queue_hello_drops[r];
	assert_int_equal(s->rx_packets, s->rx_not_hiwater + s->arp_rx + s->queue_hello_rx + hello_drops +
						s->wire.rx_frames + hw_wire_stats_total_drops(&s->wire));
	print_message("hostile hellos refused: %llu (unknown version %llu, truncated %llu)\n",
		      (unsigned long long)hello_drops,
		      (unsigned long long)s->queue_hello_drops[HW_QHELLO_DROP_BAD_VERSION],
		      (unsigned long long)s->queue_hello_drops[HW_QHELLO_DROP_TRUNCATED]);
	assert_true(s->queue_hello_drops[HW_QHELLO_DROP_BAD_VERSION] > 0);
	assert_true(s->queue_hello_drops[HW_QHELLO_DROP_TRUNCATED] > 0);
	/* none of them changed the queue count: the one-queue peer connected one */
	assert_int_equal(hw_dpdk_port_queues(dp, 0), 1);
	assert_true(s->rx_not_hiwater > 0);
	assert_true(s->arp_replies_tx > arp0);
	produce_once(4300, 3000);

	/* peer restart: kill it, the link goes down, start it, traffic resumes */
	uint64_t downs = s->link_down_events;
	kill(peer_pid, SIGKILL);
	waitpid(peer_pid, NULL, 0);
	peer_pid = -1;
	wait_link(0);
	assert_true(s->link_down_events > downs);
	start_peer();
	wait_link(1);
	for (uint32_t i = 0; i < 10; i++)
		produce_once(300 + i, 100 + (size_t)(dt_next(&seed) % 20000));

	kill(peer_pid, SIGTERM);
	int status = 0;
	waitpid(peer_pid, &status, 0);
	peer_pid = -1;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(in.recs);
}

static int setup(void **st)
{
	(void)st;
	mkdir("/tmp/net", 0777);
	snprintf(dir, sizeof dir, "/tmp/net/t-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(sock, sizeof sock, "%s/memif.sock", dir);
	unlink(sock);
	char args[512];
	snprintf(args, sizeof args,
		 "--no-huge -m 256 --no-pci --no-telemetry --file-prefix=hwt%d-a --lcores=0@(0-%ld) "
		 "--log-level=pmd.net.memif:error --vdev=net_memif0,role=server,bsize=65535,rsize=9,socket=%s",
		 (int)getpid(), sysconf(_SC_NPROCESSORS_ONLN) - 1, sock);
	snprintf(peer_args, sizeof peer_args,
		 "--no-huge -m 256 --no-pci --no-telemetry --file-prefix=hwt%d-b --lcores=0@(0-%ld) "
		 "--log-level=pmd.net.memif:error --vdev=net_memif0,role=client,bsize=65535,rsize=9,socket=%s",
		 (int)getpid(), sysconf(_SC_NPROCESSORS_ONLN) - 1, sock);
	int rc = hw_dpdk_eal_init(args);
	if (rc)
		fail_msg("EAL init: %s", strerror(-rc));
	hw_dpdk_cfg cfg = { .cluster_id = CLUSTER, .self_id = SELF, .on_msg = on_msg };
	int err = 0;
	dp = hw_dpdk_create(&cfg, &err);
	if (!dp)
		fail_msg("hw_dpdk_create: %s", strerror(-err));
	assert_int_equal(hw_dpdk_add_neighbour(dp, PEER, "dpdk:port=net_memif0"), 0);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	if (peer_pid > 0) {
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, NULL, 0);
	}
	hw_dpdk_destroy(dp);
	hw_dpdk_eal_cleanup();
	unlink(sock);
	rmdir(dir);
	return 0;
}

int main(void)
{
	seed = hw_test_seed("test_dpdk");
	seed = seed * 2654435761u + 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memif_two_processes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
