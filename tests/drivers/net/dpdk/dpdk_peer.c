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
 *                     buffer (hw_dpdk_cfg.ref_ops), split over frames
 *   PRODUCE to topic 0xFEED -> first sends timeout_ms hostile raw packets
 *                     (random bytes, valid Eth/IPv4/UDP headers with random
 *                     or mutated hiwater frames, runts, ARP requests for
 *                     the test's IP, queue hellos that must all be
 *                     refused: unknown version, bad magic, reserved byte,
 *                     queue count 0, another cluster, truncated), then the
 *                     PRODUCE_RESP
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

static uint64_t hrng = 88172645463325252ull;
static uint32_t hr(void)
{
	hrng ^= hrng << 13;
	hrng ^= hrng >> 7;
	hrng ^= hrng << 17;
	return (uint32_t)(hrng >> 11);
}

/* Eth + IPv4 + UDP towards the test (10.77.0.<peer>, port 9092). */
static size_t l2l3(uint8_t *b, size_t payload)
{
	memset(b, 0xff, 6);                         /* dst: broadcast */
	memset(b + 6, 0x02, 6);
	b[12] = 0x08;
	b[13] = 0x00;
	uint8_t *ip = b + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	uint16_t tl = (uint16_t)(20 + 8 + payload);
	ip[2] = (uint8_t)(tl >> 8);
	ip[3] = (uint8_t)tl;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10, ip[13] = 77, ip[14] = 0, ip[15] = (uint8_t)self_id;
	ip[16] = 10, ip[17] = 77, ip[18] = 0, ip[19] = (uint8_t)peer_id;
	uint8_t *udp = ip + 20;
	udp[0] = 0x23, udp[1] = 0x84;               /* 9092 */
	udp[2] = 0x23, udp[3] = 0x84;
	uint16_t ul = (uint16_t)(8 + payload);
	udp[4] = (uint8_t)(ul >> 8);
	udp[5] = (uint8_t)ul;
	udp[6] = udp[7] = 0;
	return 42;
}

static void blast(uint32_t count, uint32_t cluster)
{
	static uint8_t pkt[9000];
	static uint8_t frame[4096];
	for (uint32_t i = 0; i < count; i++) {
		size_t len;
		switch (hr() % 7) {
		case 0:                                     /* random bytes */
			len = 1 + hr() % 2000;
			for (size_t k = 0; k < len; k++)
				pkt[k] = (uint8_t)hr();
			break;
		case 1:                                     /* runt */
			len = 1 + hr() % 41;
			memset(pkt, 0, len);
			if (len > 13)
				pkt[12] = 0x08;
			break;
		case 2: {                                   /* headers fine, random payload */
			size_t pl = hr() % 3000;
			len = l2l3(pkt, pl) + pl;
			for (size_t k = 42; k < len; k++)
				pkt[k] = (uint8_t)hr();
			if (pl >= 4) {
				pkt[42] = 0x48, pkt[43] = 0x57, pkt[44] = 1, pkt[45] = 0;
			}
			break;
		}
		case 3: {                                   /* a valid frame, mutated */
			hw_wire_tx tx = { cluster, 1, hr(), 0 };
			hw_msg m;
			memset(&m, 0, sizeof m);
			m.type = HW_MSG_PRODUCE_RESP;
			m.src = 7;
			m.dst = peer_id;
			int n = hw_wire_encode(&tx, &m, NULL, frame, sizeof frame);
			len = l2l3(pkt, (size_t)n) + (size_t)n;
			memcpy(pkt + 42, frame, (size_t)n);
			pkt[42 + hr() % (uint32_t)n] ^= (uint8_t)(1u << (hr() % 8));
			break;
		}
		case 4: {                                   /* lying lengths */
			size_t pl = 100 + hr() % 500;
			len = l2l3(pkt, pl) + pl;
			for (size_t k = 42; k < len; k++)
				pkt[k] = (uint8_t)hr();
			pkt[14 + 2] = (uint8_t)hr();           /* IP total length */
			pkt[14 + 20 + 4] = (uint8_t)hr();      /* UDP length */
			break;
		}
		case 5: {                                   /* a queue hello the test must refuse */
			memset(pkt, 0xff, 6);
			memset(pkt + 6, 0x02, 6);
			pkt[12] = 0x88, pkt[13] = 0xB5;
			hw_qhello h = { 0, (uint16_t)(1 + hr() % HW_DPDK_MAX_QUEUES), cluster, self_id };
			uint8_t *b = pkt + 14;
			if (hw_qhello_encode(&h, b, HW_QHELLO_LEN) != HW_QHELLO_LEN)
				abort();
			len = 14 + HW_QHELLO_LEN;
			switch (hr() % 6) {
			case 0:
				b[4] = (uint8_t)(HW_QHELLO_VERSION + 1 + hr() % (255 - HW_QHELLO_VERSION));
				break;
			case 1:
				b[hr() % 4] ^= (uint8_t)(1u << (hr() % 8));
				break;
			case 2:
				b[5] = (uint8_t)(1 + hr() % 255);
				break;
			case 3:
				b[6] = b[7] = 0;
				break;
			case 4:
				b[8 + hr() % 4] ^= (uint8_t)(1u << (hr() % 8));
				break;
			default:
				len = 14 + hr() % HW_QHELLO_LEN;
				break;
			}
			break;
		}
		default: {                                  /* ARP request for the test's IP */
			len = 42;
			memset(pkt, 0xff, 6);
			memset(pkt + 6, 0x02, 6);
			pkt[12] = 0x08, pkt[13] = 0x06;
			uint8_t *a = pkt + 14;
			a[0] = 0, a[1] = 1, a[2] = 0x08, a[3] = 0, a[4] = 6, a[5] = 4, a[6] = 0, a[7] = 1;
			memset(a + 8, 0x02, 6);
			a[14] = 10, a[15] = 77, a[16] = 0, a[17] = (uint8_t)self_id;
			memset(a + 18, 0, 6);
			a[24] = 10, a[25] = 77, a[26] = 0, a[27] = (uint8_t)peer_id;
			break;
		}
		}
		while (hw_dpdk_tx_raw(dp, 0, pkt, len) == -ENOBUFS)
			hw_dpdk_poll(dp);
		if (i % 16 == 15)
			usleep(200);   /* pace: memif has no flow control */
	}
	const hw_dpdk_stats *st = hw_dpdk_get_stats(dp);
	fprintf(stderr, "dpdk_peer: blasted %u packets (tx %llu, dropped %llu, no mbuf %llu)\n", count,
		(unsigned long long)st->tx_packets, (unsigned long long)st->tx_dropped,
		(unsigned long long)st->tx_no_mbuf);
}

static uint32_t cluster_id;

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
		if (m->u.produce.tp.topic_id == 0xFEED)
			blast((uint32_t)m->u.produce.timeout_ms, cluster_id);
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
	cluster_id = cluster;
	signal(SIGTERM, on_term);
	int rc = hw_dpdk_eal_init(argv[4]);
	if (rc) {
		fprintf(stderr, "dpdk_peer: EAL init failed: %s\n", strerror(-rc));
		return 1;
	}
	hw_dpdk_cfg cfg = { .cluster_id = cluster, .self_id = self_id, .on_msg = on_msg,
			    .ref_ops = { zc_hold, zc_release } };
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
