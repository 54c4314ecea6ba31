/* dpdk_peer.c — the other process of test_dpdk: a tiny "broker" on a DPDK
 * memif port, run by a reactor in BACKOFF mode.
 *
 *   dpdk_peer <self id> <peer id> <cluster id> "<EAL args>"
 *
 * It answers
 *   PRODUCE        -> PRODUCE_RESP, base_offset = records_len, error 0 if
 *                     the records are whole batches with the expected fill
 *   FETCH          -> FETCH_RESP with parts[0].partition_max_bytes bytes of
 *                     batches generated from fetch_offset (so the caller can
 *                     check them), sent zero-copy through a refcounted
 *                     buffer (hw_net_set_ref_ops), split over frames
 *   DESCRIBE_TOPIC -> DESCRIBE_TOPIC_RESP "stats": partition 0 carries
 *                     hw = tx_bytes_zero_copy, leo = tx_bytes_copied,
 *                     log_start = holds still outstanding
 * and exits on SIGTERM. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hw_dpdk.h"
#include "hw_reactor.h"
#include "hw_err.h"
#include "dpdk_test_common.h"

static hw_dpdk *dp;
static hw_reactor *reactor;
static int32_t self_id, peer_id;
static long holds;           /* outstanding zero-copy holds */

typedef struct zc_buf {
	long refs;
	uint8_t *data;
} zc_buf;

static void zc_hold(void *ref)
{
	((zc_buf *)ref)->refs++;
	holds++;
}

static void zc_release(void *ref)
{
	zc_buf *b = ref;
	holds--;
	if (--b->refs == 0) {
		free(b->data);
		free(b);
	}
}

static void on_msg(void *ctx, const hw_msg *m)
{
	(void)ctx;
	hw_msg r;
	memset(&r, 0, sizeof r);
	r.src = self_id;
	r.dst = m->src;
	r.correlation_id = m->correlation_id;
	switch (m->type) {
	case HW_MSG_PRODUCE: {
		r.type = HW_MSG_PRODUCE_RESP;
		r.u.produce_resp.tp = m->u.produce.tp;
		r.u.produce_resp.base_offset = m->u.produce.records_len;
		r.u.produce_resp.error = dt_check_batches(m->u.produce.records, m->u.produce.records_len,
							  (uint64_t)m->u.produce.timeout_ms)
						 ? HW_ERR_CORRUPT_MESSAGE : HW_ERR_NONE;
		hw_net_send(hw_dpdk_net(dp), &r);
		break;
	}
	case HW_MSG_FETCH: {
		if (m->u.fetch.n_parts < 1)
			return;
		const hw_fetch_part *fp = &m->u.fetch.parts[0];
		zc_buf *b = calloc(1, sizeof *b);
		size_t cap = (size_t)fp->partition_max_bytes;
		b->data = malloc(cap);
		size_t len = dt_make_batches(b->data, cap, (uint64_t)fp->fetch_offset);
		b->refs = 1;   /* our own hold, dropped after send */
		hw_fetch_resp_part p;
		memset(&p, 0, sizeof p);
		p.tp = fp->tp;
		p.high_watermark = fp->fetch_offset;
		p.diverging_epoch = -1;
		p.diverging_end_offset = -1;
		p.leader_id = self_id;
		p.records = b->data;
		p.records_len = (uint32_t)len;
		p.records_ref = b;
		r.type = HW_MSG_FETCH_RESP;
		r.u.fetch_resp.n_parts = 1;
		r.u.fetch_resp.parts = &p;
		hw_net_send(hw_dpdk_net(dp), &r);
		if (--b->refs == 0) {   /* drop our own hold; the mbufs keep theirs */
			free(b->data);
			free(b);
		}
		break;
	}
	case HW_MSG_DESCRIBE_TOPIC: {
		const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);
		hw_partition_meta pm;
		memset(&pm, 0, sizeof pm);
		pm.high_watermark = (int64_t)s->tx_bytes_zero_copy;
		pm.log_end_offset = (int64_t)s->tx_bytes_copied;
		pm.log_start_offset = holds;
		pm.leader = (int32_t)s->rx_linearized_bytes;
		hw_topic_meta tm;
		memset(&tm, 0, sizeof tm);
		strcpy(tm.name, "stats");
		tm.n_parts = 1;
		tm.parts = &pm;
		hw_describe_topic_resp dr = { 0, self_id, 1, &tm };
		r.type = HW_MSG_DESCRIBE_TOPIC_RESP;
		r.u.other = &dr;
		hw_net_send(hw_dpdk_net(dp), &r);
		break;
	}
	default:
		break;
	}
}

static int poller(void *arg)
{
	return hw_dpdk_poll(arg);
}

static void on_term(int sig)
{
	(void)sig;
	if (reactor)
		hw_reactor_stop(reactor);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: dpdk_peer SELF PEER CLUSTER \"EAL ARGS\"\n");
		return 2;
	}
	self_id = atoi(argv[1]);
	peer_id = atoi(argv[2]);
	uint32_t cluster = (uint32_t)strtoul(argv[3], NULL, 10);
	signal(SIGTERM, on_term);
	int rc = hw_dpdk_eal_init(argv[4]);
	if (rc) {
		fprintf(stderr, "dpdk_peer: EAL init failed: %s\n", strerror(-rc));
		return 1;
	}
	hw_net_ref_ops ops = { zc_hold, zc_release };
	hw_net_set_ref_ops(&ops);
	hw_dpdk_cfg cfg = { .cluster_id = cluster, .self_id = self_id, .on_msg = on_msg };
	int err;
	dp = hw_dpdk_create(&cfg, &err);
	if (!dp) {
		fprintf(stderr, "dpdk_peer: create failed: %s\n", strerror(-err));
		return 1;
	}
	/* the only port is the link to the test process */
	char ep[64];
	snprintf(ep, sizeof ep, "dpdk:port=0");
	if (hw_dpdk_add_neighbour(dp, peer_id, ep)) {
		fprintf(stderr, "dpdk_peer: neighbour failed\n");
		return 1;
	}
	hw_reactor_cfg rc_cfg = { .id = 0, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_iters = 2000,
				  .sleep_min_us = 10, .sleep_max_us = 500 };
	reactor = hw_reactor_create(&rc_cfg);
	hw_reactor_add_poller(reactor, "dpdk", poller, NULL, dp);
	int n_intr = hw_dpdk_add_wait_sources(dp, reactor);
	printf("dpdk_peer %d ready (%d RX interrupt sources)\n", self_id, n_intr);
	fflush(stdout);
	hw_reactor_run(reactor);
	hw_reactor_destroy(reactor);
	hw_dpdk_destroy(dp);
	hw_dpdk_eal_cleanup();
	return 0;
}
