/* test_dpdk_frag.c — hw_dpdk's fragments inside the driver, on a net_ring
 * loopback (single process, --no-huge) given an MTU (hw_dpdk_cfg.mtu =
 * 1500; a ring port has none of its own):
 *   - produce frames of random sizes up to 65000 bytes and a zero-copy
 *     fetch response go out as fragments no larger than the MTU, come back
 *     reassembled and byte-identical, and the fragment counters add up;
 *   - a fetch response with a batch larger than a frame goes as batch
 *     pieces, every frame fragmented, and assembles byte-identical;
 *   - a raw packet over the MTU is refused (-EMSGSIZE, tx_refused_size);
 *   - hostile fragments (bad fields, a duplicate, an inconsistent one,
 *     an incomplete message left to time out) sent as raw Ethernet/IPv4/UDP
 *     packets are counted under their reason in hw_dpdk_stats.frag and
 *     never delivered;
 *   - hiwater.dpdk.mtu below 308 is refused at create.
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
#include <arpa/inet.h>
#include <cmocka.h>
#include "hw_dpdk.h"
#include "dpdk_test_common.h"
#include "hw_wire_piece.h"
#include "../../../support/hw_test.h"

#define SELF 1
#define CLUSTER 7171u
#define MTU 1500

static uint64_t seed;
static int produces, bad, fetch_frames;
static size_t fetch_bytes;
static uint8_t *fetch_got;
static hw_piece_asm pasm;     /* docs/wire.md "Batch pieces" */
static int pieces;

static void on_msg(void *ctx, const hw_msg *m)
{
	(void)ctx;
	if (m->type == HW_MSG_PRODUCE) {
		if (dt_check_batches(m->u.produce.records, m->u.produce.records_len, (uint64_t)m->correlation_id))
			bad++;
		produces++;
	} else if (m->type == HW_MSG_FETCH_RESP) {
		fetch_frames++;
		for (int i = 0; i < m->u.fetch_resp.n_parts; i++) {
			const hw_fetch_resp_part *p = &m->u.fetch_resp.parts[i];
			const uint8_t *rec = p->records;
			uint32_t len = p->records_len;
			if (p->piece_batch_len) {   /* a batch larger than a frame */
				pieces++;
				int rc = hw_piece_feed(&pasm, 1u << 20, p->piece_base, p->piece_batch_len, p->piece_off,
						       p->records, p->records_len, &rec, NULL);
				if (rc < 0)
					bad++;
				len = rc == 1 ? p->piece_batch_len : 0;
			}
			if (len) /* rec is NULL for a piece that completed nothing */
				memcpy(fetch_got + fetch_bytes, rec, len);
			fetch_bytes += len;
			if (p->piece_batch_len && len)
				hw_piece_reset(&pasm);
		}
	} else {
		bad++;
	}
}

static void zc_hold(void *ref)
{
	(void)ref;
}

static void zc_release(void *ref)
{
	(void)ref;
}

static void poll_n(hw_dpdk *dp, int n)
{
	for (int i = 0; i < n; i++)
		hw_dpdk_poll(dp);
}

/* A raw packet carrying payload (a fragment) from 10.77.0.9:9100 to us. */
static size_t raw_udp(uint8_t *pkt, const uint8_t *payload, size_t len)
{
	memset(pkt, 0, 42);
	memset(pkt, 0xff, 6);
	pkt[6] = 2;
	pkt[12] = 0x08;
	uint8_t *ip = pkt + 14;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + 8 + len) >> 8);
	ip[3] = (uint8_t)(20 + 8 + len);
	ip[6] = 0x40;   /* DF */
	ip[8] = 64;
	ip[9] = 17;
	uint32_t src = htonl(0x0A4D0009u), dst = htonl(0x0A4D0000u | SELF);
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	uint8_t *udp = ip + 20;
	udp[0] = 9100 >> 8;
	udp[1] = 9100 & 255;
	udp[2] = 9092 >> 8;
	udp[3] = 9092 & 255;
	udp[4] = (uint8_t)((8 + len) >> 8);
	udp[5] = (uint8_t)(8 + len);
	memcpy(pkt + 42, payload, len);
	return 42 + len;
}

static void send_frag(hw_dpdk *dp, const hw_frag_hdr *h, size_t payload_len, int mutate_off, uint8_t mutate_val)
{
	uint8_t f[HW_FRAG_HDR_LEN + 1500], pkt[2048];
	assert_int_equal(hw_frag_encode(h, f, sizeof f), HW_FRAG_HDR_LEN);
	memset(f + HW_FRAG_HDR_LEN, 0xAB, payload_len);
	if (mutate_off >= 0)
		f[mutate_off] = mutate_val;
	size_t n = raw_udp(pkt, f, HW_FRAG_HDR_LEN + payload_len);
	assert_int_equal(hw_dpdk_tx_raw(dp, 0, pkt, n), 0);
}

static void test_fragments_on_ring(void **st)
{
	(void)st;
	char args[256];
	snprintf(args, sizeof args, "--no-huge -m 128 --no-pci --no-telemetry --file-prefix=hwfr%d --lcores=0@(0-%ld) "
		 "--vdev=net_ring0", (int)getpid(), sysconf(_SC_NPROCESSORS_ONLN) - 1);
	assert_int_equal(hw_dpdk_eal_init(args), 0);
	/* with zero-copy hooks: fragmented frames must still be copied */
	hw_dpdk_cfg cfg = { .cluster_id = CLUSTER, .self_id = SELF, .on_msg = on_msg, .mtu = 307,
			    .ref_ops = { zc_hold, zc_release } };
	int err = 0;
	assert_null(hw_dpdk_create(&cfg, &err));
	assert_int_equal(err, -EINVAL);
	cfg.mtu = MTU;
	hw_dpdk *dp = hw_dpdk_create(&cfg, &err);
	if (!dp)
		fail_msg("hw_dpdk_create: %s", strerror(-err));
	assert_int_equal(hw_dpdk_port_mtu(dp, 0), MTU);
	assert_int_equal(hw_dpdk_add_neighbour(dp, SELF, "dpdk:port=net_ring0"), 0);
	const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);

	/* produce frames of random sizes, each checked on arrival */
	static uint8_t recs[65000];
	int n_msgs = 40, expect_frag = 0;
	for (int i = 0; i < n_msgs; i++) {
		size_t n = dt_make_batches(recs, (size_t)(dt_next(&seed) % sizeof recs), 500u + (unsigned)i);
		hw_msg m;
		memset(&m, 0, sizeof m);
		m.type = HW_MSG_PRODUCE;
		m.src = SELF;
		m.dst = SELF;
		m.correlation_id = 500 + i;
		m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = 1000, .tp = { 1, 0 }, .records = recs, .records_len = (uint32_t)n };
		uint64_t f0 = s->tx_fragmented_frames;
		assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
		expect_frag += s->tx_fragmented_frames > f0;
		poll_n(dp, 4);
	}
	poll_n(dp, 20);
	assert_int_equal(produces, n_msgs);
	assert_int_equal(bad, 0);
	assert_true(expect_frag > n_msgs / 2);
	assert_int_equal(s->frag.messages_completed, (uint64_t)expect_frag);
	assert_int_equal(s->frag.fragments, s->tx_fragments);
	for (int r = 0; r < HW_FRAG_DROP__COUNT; r++)
		assert_int_equal(s->frag.drops[r], 0);
	/* every packet fit the MTU: at most MTU - 28 - 24 bytes of frame per
	 * fragment, so fragments >= bytes / 1448 */
	assert_true(s->tx_fragments * (MTU - 28 - HW_FRAG_HDR_LEN) >= s->frag.bytes_completed);
	assert_int_equal(s->tx_refused_size, 0);

	/* a zero-copy fetch response: fragmented frames are copied, and come
	 * back whole */
	size_t cap = 320000; /* the batch-piece step below needs ~310,000 */
	uint8_t *log = malloc(cap);
	size_t len = dt_make_batches(log, 150000, 77);
	fetch_got = malloc(len);
	hw_fetch_resp_part p;
	memset(&p, 0, sizeof p);
	p.tp = (hw_tp){ 1, 0 };
	p.diverging_epoch = -1;
	p.diverging_end_offset = -1;
	p.leader_id = SELF;
	p.records = log;
	p.records_len = (uint32_t)len;
	p.records_ref = log;
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_FETCH_RESP;
	m.src = SELF;
	m.dst = SELF;
	m.correlation_id = 31;
	m.u.fetch_resp = (hw_fetch_resp){ .error = 0, .n_parts = 1, .parts = &p, .more = 0 };
	uint64_t zc0 = s->tx_bytes_zero_copy;
	assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
	poll_n(dp, 50);
	assert_int_equal(fetch_bytes, len);
	assert_memory_equal(fetch_got, log, len);
	assert_int_equal(s->tx_bytes_zero_copy, zc0);   /* every frame was fragmented: copied */

	/* a 300,000-byte batch between two small ones: batch pieces, each frame
	 * fragmented, assembled back byte-identical (docs/wire.md "Batch pieces") */
	size_t n1 = dt_make_batches(log, 5000, 78);
	uint8_t *b = log + n1;
	size_t bsz = 300000;
	memcpy(b, log, HW_WIRE_BATCH_HDR);
	b[8] = (uint8_t)((bsz - 12) >> 24);
	b[9] = (uint8_t)((bsz - 12) >> 16);
	b[10] = (uint8_t)((bsz - 12) >> 8);
	b[11] = (uint8_t)(bsz - 12);
	for (size_t k = HW_WIRE_BATCH_HDR; k < bsz; k++)
		b[k] = (uint8_t)(k * 131u);
	memcpy(b + bsz, log, n1);
	len = n1 * 2 + bsz;
	free(fetch_got);
	fetch_got = malloc(len);
	fetch_bytes = 0;
	p.records = log;
	p.records_len = (uint32_t)len;
	p.records_ref = NULL;
	assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
	poll_n(dp, 200);
	assert_true(pieces >= (int)(bsz / HW_WIRE_MAX_FRAME) + 1);
	assert_int_equal(bad, 0);
	assert_int_equal(fetch_bytes, len);
	assert_memory_equal(fetch_got, log, len);

	/* a raw packet over the MTU */
	static uint8_t big[MTU + 15];
	memset(big, 0, sizeof big);
	assert_int_equal(hw_dpdk_tx_raw(dp, 0, big, sizeof big), -EMSGSIZE);
	assert_int_equal(s->tx_refused_size, 1);
	assert_int_equal(hw_dpdk_tx_raw(dp, 0, big, MTU + 14), 0);
	poll_n(dp, 4);

	/* hostile fragments, each counted under its reason, none delivered */
	int before = produces + fetch_frames;
	uint64_t wire_bad_magic = s->wire.drops[HW_WIRE_DROP_BAD_MAGIC];
	hw_frag_hdr h = { .index = 0, .count = 3, .frag_size = 1000, .msg_id = 77, .total_len = 2500, .offset = 0 };
	send_frag(dp, &h, 1000, 0, 0x00);    /* not a fragment: the wire decoder's BAD_MAGIC */
	send_frag(dp, &h, 1000, 4, 9);       /* BAD_VERSION */
	send_frag(dp, &h, 1000, 5, 1);       /* BAD_RESERVED */
	send_frag(dp, &h, 1000, 9, 4);       /* BAD_COUNT: count 4 */
	send_frag(dp, &h, 1000, 7, 3);       /* BAD_INDEX: index 3 */
	send_frag(dp, &h, 999, -1, 0);       /* BAD_LENGTH */
	send_frag(dp, &h, 1000, -1, 0);      /* stored */
	send_frag(dp, &h, 1000, -1, 0);      /* DUPLICATE */
	hw_frag_hdr o = h;
	o.index = 1;
	o.offset = 1000;
	o.total_len = 2400;                  /* still 3 x 1000: INCONSISTENT with the first */
	send_frag(dp, &o, 1000, -1, 0);
	poll_n(dp, 10);
	const hw_frag_stats *f = &s->frag;
	assert_int_equal(f->drops[HW_FRAG_DROP_BAD_MAGIC], 0);
	assert_int_equal(s->wire.drops[HW_WIRE_DROP_BAD_MAGIC], wire_bad_magic + 1);
	assert_int_equal(f->drops[HW_FRAG_DROP_BAD_VERSION], 1);
	assert_int_equal(f->drops[HW_FRAG_DROP_BAD_RESERVED], 1);
	assert_int_equal(f->drops[HW_FRAG_DROP_BAD_COUNT], 1);
	assert_int_equal(f->drops[HW_FRAG_DROP_BAD_INDEX], 1);
	assert_int_equal(f->drops[HW_FRAG_DROP_BAD_LENGTH], 1);
	assert_int_equal(f->drops[HW_FRAG_DROP_DUPLICATE], 1);
	assert_int_equal(f->drops[HW_FRAG_DROP_INCONSISTENT], 1);
	/* the incomplete message times out (100 ms) and its straggler is late */
	struct timespec ts = { 0, 150 * 1000000L };
	nanosleep(&ts, NULL);
	poll_n(dp, 2);
	assert_int_equal(f->drops[HW_FRAG_DROP_TIMEOUT], 1);
	h.index = 2;
	h.offset = 2000;
	send_frag(dp, &h, 500, -1, 0);
	poll_n(dp, 4);
	assert_int_equal(f->drops[HW_FRAG_DROP_LATE], 1);
	assert_int_equal(produces + fetch_frames, before);
	assert_int_equal(bad, 0);

	hw_dpdk_port_stats ps;
	assert_int_equal(hw_dpdk_port_stats_get(dp, 0, &ps), 0);
	assert_string_equal(ps.name, "net_ring0");
	assert_int_equal(ps.mtu, MTU);
	assert_true(ps.ipackets >= s->tx_fragments);
	assert_true(ps.n_queues >= 1);
	assert_int_equal(hw_dpdk_port_stats_get(dp, 1, &ps), -EINVAL);
	print_message("%llu fragments for %llu frames, %llu reassembled\n", (unsigned long long)s->tx_fragments,
		      (unsigned long long)s->tx_fragmented_frames, (unsigned long long)f->messages_completed);
	hw_dpdk_destroy(dp);
	hw_dpdk_eal_cleanup();
	free(log);
	free(fetch_got);
}

int main(void)
{
	seed = hw_test_seed("test_dpdk_frag");
	seed = seed * 2654435761u + 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fragments_on_ring),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
