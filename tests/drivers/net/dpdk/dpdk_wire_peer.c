/* dpdk_wire_peer.c — one end of the two-process DPDK link tests over real
 * kernel interfaces (net_veth.sh: a veth pair between two network
 * namespaces, af_packet / af_xdp / tap PMDs).
 *
 *   dpdk_wire_peer echo|send SELF PEER "EAL ARGS" [key=value ...]
 *
 * Both ends use DPDK port 0, IPv4 10.201.0.<id>, UDP 9092, neighbour PEER.
 * echo: every PRODUCE is sent back to its sender unchanged (same records,
 *       same correlation id); a PRODUCE to topic 0xFEED is answered with a
 *       PRODUCE_RESP carrying its own counters (base_offset = messages its
 *       reassembler gave up: TIMEOUT + EVICTED; log_start_offset = messages
 *       it reassembled). Runs until SIGTERM.
 * send: warms the link up (a small PRODUCE every 200 ms until one is
 *       echoed), then count= times: a PRODUCE whose records are 0..max=
 *       bytes of deterministic batches (dpdk_test_common.h), waits up to
 *       wait_ms= (400) for its echo and checks it byte for byte. Then asks the echo
 *       for its counters and checks (exit 0 = pass, 1 = fail, with why):
 *         - the port's MTU is expect_mtu= (when given);
 *         - no echo is ever corrupt or unexpected;
 *         - without loss=1: every message came back, every fragmented
 *           frame we sent was answered by one we reassembled, no fragment
 *           drop of any reason on our side or the echo's;
 *         - with loss=1: some messages were lost, and every lost message
 *           that was fragmented is accounted for as a reassembly that gave
 *           up (TIMEOUT/EVICTED) on one side — never delivered corrupt.
 * echo zc=1: answers with a FETCH_RESP whose records go by reference
 *       (records_ref), as a leader's log lends them; a PRODUCE to 0xFEEE
 *       gets its tx_linearized_packets / tx_bytes_zero_copy; the sender's
 *       expect_multiseg=1 then wants zero-copy and nothing linearized,
 *       expect_multiseg=0 (a port without TX MULTI_SEGS) the reverse.
 * keys: mtu= (hw_dpdk_cfg.mtu), expect_mtu=, count= (300), max= (65000),
 *       seed=, loss=0|1, wait_ms= (400; more than the 100 ms reassembly
 *       timeout, so a lost message has been given up when we move on). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "hw_dpdk.h"
#include "dpdk_test_common.h"

#define CLUSTER 20126u
#define STATS_TOPIC 0xFEEDu
#define TX_STATS_TOPIC 0xFEEEu

/* zc=1: the echo answers with a FETCH_RESP whose records are lent by
 * reference (hw_dpdk_cfg.ref_ops), as a leader's log lends them */
typedef struct zc_buf {
	long refs;
	uint8_t *data;
} zc_buf;

static void zc_hold(void *ref)
{
	((zc_buf *)ref)->refs++;
}

static void zc_release(void *ref)
{
	zc_buf *b = ref;
	if (--b->refs == 0) {
		free(b->data);
		free(b);
	}
}

static int zc_mode;

static hw_dpdk *dp;
static int32_t self_id, peer_id;
static volatile sig_atomic_t stop;
static int echo_mode;
/* sender side */
static int32_t want_corr = -1;
static size_t want_len;
static int got_ok, corrupt, unexpected, late;
static int64_t peer_gave_up = -1, peer_completed = -1, peer_linearized = -1, peer_zero_copy = -1;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t msg_seed(uint64_t seed, int32_t corr)
{
	return seed * 1000003u + (uint64_t)corr;
}

static uint64_t g_seed;

static void on_msg(void *ctx, const hw_msg *m)
{
	(void)ctx;
	if (echo_mode) {
		if (m->type != HW_MSG_PRODUCE)
			return;
		hw_msg r;
		memset(&r, 0, sizeof r);
		r.src = self_id;
		r.dst = m->src;
		r.correlation_id = m->correlation_id;
		if (m->u.produce.tp.topic_id == STATS_TOPIC) {
			const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);
			r.type = HW_MSG_PRODUCE_RESP;
			r.u.produce_resp.tp = m->u.produce.tp;
			r.u.produce_resp.base_offset =
				(int64_t)(s->frag.drops[HW_FRAG_DROP_TIMEOUT] + s->frag.drops[HW_FRAG_DROP_EVICTED]);
			r.u.produce_resp.log_start_offset = (int64_t)s->frag.messages_completed;
		} else if (m->u.produce.tp.topic_id == TX_STATS_TOPIC) {
			const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);
			r.type = HW_MSG_PRODUCE_RESP;
			r.u.produce_resp.tp = m->u.produce.tp;
			r.u.produce_resp.base_offset = (int64_t)s->tx_linearized_packets;
			r.u.produce_resp.log_start_offset = (int64_t)s->tx_bytes_zero_copy;
		} else if (zc_mode) {
			zc_buf *b = malloc(sizeof *b);
			uint32_t n = m->u.produce.records_len;
			if (!b || !(b->data = malloc(n ? n : 1)))
				abort();
			if (n)   /* an empty produce has no records pointer */
				memcpy(b->data, m->u.produce.records, n);
			b->refs = 1;
			hw_fetch_resp_part part;
			memset(&part, 0, sizeof part);
			part.tp = m->u.produce.tp;
			part.diverging_epoch = -1;
			part.diverging_end_offset = -1;
			part.leader_id = self_id;
			part.records = b->data;
			part.records_len = n;
			part.records_ref = b;
			r.type = HW_MSG_FETCH_RESP;
			r.u.fetch_resp = (hw_fetch_resp){ .error = 0, .n_parts = 1, .parts = &part, .more = 0 };
			int rc = hw_net_send(hw_dpdk_net(dp), &r);
			if (rc)
				fprintf(stderr, "echo: send %d: %s\n", m->correlation_id, strerror(-rc));
			zc_release(b);   /* the mbufs hold what they still need */
			return;
		} else {
			r.type = HW_MSG_PRODUCE;
			r.u.produce = m->u.produce;
		}
		int rc = hw_net_send(hw_dpdk_net(dp), &r);
		if (rc)
			fprintf(stderr, "echo: send %d: %s\n", m->correlation_id, strerror(-rc));
		return;
	}
	if (m->type == HW_MSG_PRODUCE_RESP && m->u.produce_resp.tp.topic_id == STATS_TOPIC) {
		peer_gave_up = m->u.produce_resp.base_offset;
		peer_completed = m->u.produce_resp.log_start_offset;
		return;
	}
	if (m->type == HW_MSG_PRODUCE_RESP && m->u.produce_resp.tp.topic_id == TX_STATS_TOPIC) {
		peer_linearized = m->u.produce_resp.base_offset;
		peer_zero_copy = m->u.produce_resp.log_start_offset;
		return;
	}
	const uint8_t *recs;
	uint32_t rlen;
	if (m->type == HW_MSG_PRODUCE) {
		recs = m->u.produce.records;
		rlen = m->u.produce.records_len;
	} else if (m->type == HW_MSG_FETCH_RESP && m->u.fetch_resp.n_parts == 1) {
		recs = m->u.fetch_resp.parts[0].records;
		rlen = m->u.fetch_resp.parts[0].records_len;
	} else {
		unexpected++;
		return;
	}
	int32_t c = m->correlation_id;
	int good = dt_check_batches(recs, rlen, msg_seed(g_seed, c)) == 0;
	if (!good) {
		corrupt++;
		fprintf(stderr, "send: echo %d is corrupt (%u bytes)\n", c, rlen);
		return;
	}
	if (c == want_corr && rlen == want_len) {
		got_ok++;
		want_corr = -1;
	} else {
		late++;
		if (getenv("HW_NET_DEBUG"))
			fprintf(stderr, "echo %d (%u bytes) while waiting for %d (%zu)\n", c, rlen,
				want_corr, want_len);
	}
	/* a valid echo of an earlier message (it came after we gave up): late,
	 * not corrupt */
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Poll for up to ns, sleeping 20 us when idle (no busy spin). */
static void poll_for(int64_t ns)
{
	int64_t end = now_ns() + ns;
	while (now_ns() < end && !stop) {
		if (hw_dpdk_poll(dp) == 0) {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
}

static int send_produce(int32_t corr, uint32_t topic, const uint8_t *recs, size_t n)
{
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE;
	m.src = self_id;
	m.dst = peer_id;
	m.correlation_id = corr;
	m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = 1000, .tp = { topic, 0 }, .records = recs, .records_len = (uint32_t)n };
	return hw_net_send(hw_dpdk_net(dp), &m);
}

static long kv(int argc, char **argv, const char *key, long dflt)
{
	size_t kl = strlen(key);
	long v = dflt;   /* the last one given wins */
	for (int i = 5; i < argc; i++)
		if (!strncmp(argv[i], key, kl) && argv[i][kl] == '=')
			v = strtol(argv[i] + kl + 1, NULL, 10);
	return v;
}

#define CHECK(cond, ...)                                        \
	do {                                                    \
		if (!(cond)) {                                  \
			fprintf(stderr, "FAIL: " __VA_ARGS__);  \
			fprintf(stderr, "\n");                  \
			fails++;                                \
		}                                               \
	} while (0)

static int run_sender(int argc, char **argv)
{
	int fails = 0;
	long count = kv(argc, argv, "count", 300), max = kv(argc, argv, "max", 65000);
	long expect_mtu = kv(argc, argv, "expect_mtu", -1);
	int loss = (int)kv(argc, argv, "loss", 0);
	long wait_ms = kv(argc, argv, "wait_ms", 400);
	g_seed = (uint64_t)kv(argc, argv, "seed", (long)time(NULL));
	printf("seed %llu\n", (unsigned long long)g_seed);
	int mtu = hw_dpdk_port_mtu(dp, 0);
	printf("port 0 MTU %d\n", mtu);
	if (expect_mtu >= 0)
		CHECK(mtu == expect_mtu, "MTU %d, expected %ld", mtu, expect_mtu);
	static uint8_t recs[65536];
	/* warm-up: ARP, MAC learning, a bridge coming up */
	int warm = 0;
	for (int k = 0; k < 100 && !warm && !stop; k++) {
		want_corr = 0;
		want_len = dt_make_batches(recs, 200, msg_seed(g_seed, 0));
		(void)send_produce(0, 1, recs, want_len);
		int before = got_ok;
		poll_for(200000000LL);
		warm = got_ok > before;
	}
	CHECK(warm, "no echo within 20 s: the link does not carry frames");
	if (!warm)
		return 1;
	got_ok = 0;
	const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);
	hw_dpdk_stats s0 = *s;
	long lost = 0, lost_frag = 0, sent_frag = 0, refused = 0;
	uint64_t state = g_seed | 1;
	int64_t t0 = now_ns();
	for (long i = 1; i <= count && !stop; i++) {
		size_t cap = (size_t)(dt_next(&state) % (uint64_t)(max + 1));
		size_t n = dt_make_batches(recs, cap, msg_seed(g_seed, (int32_t)i));
		uint64_t fr0 = s->tx_fragmented_frames;
		want_corr = (int32_t)i;
		want_len = n;
		int rc = send_produce((int32_t)i, 1, recs, n);
		if (rc) {
			fprintf(stderr, "send %ld (%zu bytes): %s\n", i, n, strerror(-rc));
			refused++;
			continue;
		}
		int frag = s->tx_fragmented_frames > fr0;
		sent_frag += frag;
		int before = got_ok;
		int64_t end = now_ns() + wait_ms * 1000000LL;
		while (got_ok == before && now_ns() < end && !stop)
			poll_for(1000000LL);
		if (got_ok == before) {
			lost++;
			lost_frag += frag;
		}
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	/* let both reassemblers time out what is incomplete, then ask the echo */
	poll_for(300000000LL);
	for (int k = 0; k < 20 && peer_gave_up < 0 && !stop; k++) {
		(void)send_produce(1 << 30, STATS_TOPIC, NULL, 0);
		poll_for(200000000LL);
	}
	long expect_ms = kv(argc, argv, "expect_multiseg", -1);
	for (int k = 0; k < 20 && expect_ms >= 0 && peer_linearized < 0 && !stop; k++) {
		(void)send_produce(1 << 30, TX_STATS_TOPIC, NULL, 0);
		poll_for(200000000LL);
	}
	hw_frag_stats f = s->frag;
	uint64_t gave_up = f.drops[HW_FRAG_DROP_TIMEOUT] + f.drops[HW_FRAG_DROP_EVICTED];
	uint64_t frag_drops = 0, wire_drops = 0;
	for (int r = 0; r < HW_WIRE_DROP__COUNT; r++)
		wire_drops += s->wire.drops[r];
	for (int r = 0; r < HW_FRAG_DROP__COUNT; r++)
		frag_drops += f.drops[r];
	printf("messages %ld in %.1f s: echoed %d, lost %ld (%ld fragmented), late %d, refused %ld, corrupt %d, "
	       "unexpected %d\n", count, secs, got_ok, lost, lost_frag, late, refused, corrupt, unexpected);
	printf("sent: %ld frames fragmented, %llu fragment packets, %llu packets, linearized %llu, refused for size %llu\n",
	       sent_frag, (unsigned long long)(s->tx_fragments - s0.tx_fragments),
	       (unsigned long long)(s->tx_packets - s0.tx_packets),
	       (unsigned long long)(s->tx_linearized_packets - s0.tx_linearized_packets),
	       (unsigned long long)s->tx_refused_size);
	printf("our reassembly: %llu fragments, %llu messages completed, %llu gave up;", (unsigned long long)f.fragments,
	       (unsigned long long)f.messages_completed, (unsigned long long)gave_up);
	for (int r = 0; r < HW_FRAG_DROP__COUNT; r++)
		if (f.drops[r])
			printf(" %s=%llu", hw_frag_drop_name(r), (unsigned long long)f.drops[r]);
	printf("\nthe echo's reassembly: %lld messages completed, %lld gave up\n", (long long)peer_completed,
	       (long long)peer_gave_up);
	printf("our wire decoder: %llu frames dropped\n", (unsigned long long)wire_drops);
	hw_dpdk_port_stats ps;
	CHECK(hw_dpdk_port_stats_get(dp, 0, &ps) == 0, "port stats");
	printf("port %s: rx %llu packets, tx %llu, imissed %llu, ierrors %llu, oerrors %llu, rx_nombuf %llu\n", ps.name,
	       (unsigned long long)ps.ipackets, (unsigned long long)ps.opackets, (unsigned long long)ps.imissed,
	       (unsigned long long)ps.ierrors, (unsigned long long)ps.oerrors, (unsigned long long)ps.rx_nombuf);
	/* nothing sent over the MTU (af_packet counts an oversized packet in
	 * oerrors and drops it), no RX mbuf shortage */
	CHECK(ps.oerrors == 0 && ps.rx_nombuf == 0, "port errors: oerrors %llu rx_nombuf %llu",
	      (unsigned long long)ps.oerrors, (unsigned long long)ps.rx_nombuf);
	CHECK(ps.opackets >= s->tx_packets - s0.tx_packets, "the port sent fewer packets than we handed it");
	if (expect_ms >= 0) {
		printf("the echo's TX: %lld packets linearized (no MULTI_SEGS), %lld record bytes by reference\n",
		       (long long)peer_linearized, (long long)peer_zero_copy);
		CHECK(peer_linearized >= 0, "the echo never answered the TX stats query");
		if (expect_ms)
			CHECK(peer_zero_copy > 0 && peer_linearized == 0,
			      "a MULTI_SEGS port: expected zero-copy and nothing linearized");
		else
			CHECK(peer_zero_copy == 0 && peer_linearized > 0,
			      "a port without MULTI_SEGS: expected no zero-copy, records linearized");
	}
	CHECK(corrupt == 0, "%d corrupt echoes", corrupt);
	CHECK(wire_drops == 0, "%llu received frames failed hw_wire_decode / replay checks",
	      (unsigned long long)wire_drops);
	CHECK(unexpected == 0, "%d unexpected messages", unexpected);
	CHECK(refused == 0, "%ld sends refused", refused);
	CHECK(peer_gave_up >= 0, "the echo never answered the stats query");
	if (mtu > 0 && max + 200 > mtu)
		CHECK(sent_frag > 0, "nothing was fragmented at MTU %d", mtu);
	if (!loss) {
		CHECK(lost == 0, "%ld messages lost on a clean link", lost);
		CHECK(late == 0, "%d echoes came after we gave up on them", late);
		CHECK(got_ok == count, "echoed %d of %ld", got_ok, count);
		CHECK(frag_drops == 0, "%llu fragment drops on a clean link", (unsigned long long)frag_drops);
		CHECK(peer_gave_up == 0, "the echo gave up %lld messages on a clean link", (long long)peer_gave_up);
		/* a PRODUCE echo is the size of what we sent: each fragmented
		 * request came back as a fragmented echo we reassembled (a fetch
		 * response echo, expect_multiseg=, has a few bytes more header) */
		uint64_t reasm = f.messages_completed - s0.frag.messages_completed;
		CHECK(expect_ms >= 0 ? reasm >= (uint64_t)sent_frag : reasm == (uint64_t)sent_frag,
		      "reassembled %llu echoes, sent %ld fragmented frames",
		      (unsigned long long)(f.messages_completed - s0.frag.messages_completed), sent_frag);
		CHECK(peer_completed >= sent_frag, "the echo reassembled %lld, we sent %ld fragmented",
		      (long long)peer_completed, sent_frag);
	} else {
		CHECK(lost > 0, "no message lost: the loss did not apply");
		CHECK(got_ok > 0, "nothing came through");
		/* every message given up was one we lost (no retransmission);
		 * a lost fragmented message is a reassembly that gave up, unless
		 * every one of its fragments was lost (rare: small ones) */
		long accounted = (long)gave_up + (long)peer_gave_up;
		CHECK(accounted <= lost_frag, "%ld given up but only %ld fragmented messages lost", accounted, lost_frag);
		CHECK(accounted >= lost_frag - 1 - lost_frag / 10,
		      "%ld fragmented messages lost, only %ld counted as given up", lost_frag, accounted);
	}
	printf("%s\n", fails ? "FAILED" : "PASSED");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 5 || (strcmp(argv[1], "echo") && strcmp(argv[1], "send"))) {
		fprintf(stderr, "usage: %s echo|send SELF PEER \"EAL ARGS\" [key=value ...]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	echo_mode = !strcmp(argv[1], "echo");
	self_id = atoi(argv[2]);
	peer_id = atoi(argv[3]);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	int rc = hw_dpdk_eal_init(argv[4]);
	if (rc) {
		fprintf(stderr, "EAL init (%s): %s\n", argv[4], strerror(-rc));
		return 3;
	}
	zc_mode = (int)kv(argc, argv, "zc", 0);
	hw_dpdk_cfg cfg = { .cluster_id = CLUSTER, .self_id = self_id, .on_msg = on_msg,
			    .ip = htonl((10u << 24) | (201u << 16) | (uint32_t)self_id),
			    .mtu = (uint16_t)kv(argc, argv, "mtu", 0) };
	if (zc_mode)
		cfg.ref_ops = (hw_net_ref_ops){ zc_hold, zc_release };
	int err = 0;
	dp = hw_dpdk_create(&cfg, &err);
	if (!dp) {
		fprintf(stderr, "hw_dpdk_create: %s\n", strerror(-err));
		hw_dpdk_eal_cleanup();
		return 3;
	}
	char ep[64];
	snprintf(ep, sizeof ep, "dpdk:port=0,ip=10.201.0.%d", (int)peer_id);
	rc = hw_dpdk_add_neighbour(dp, peer_id, ep);
	if (rc) {
		fprintf(stderr, "neighbour %s: %s\n", ep, strerror(-rc));
		return 3;
	}
	if (echo_mode) {
		printf("echo up, port 0 MTU %d\n", hw_dpdk_port_mtu(dp, 0));
		while (!stop)
			poll_for(100000000LL);
		const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);
		printf("echo: %llu fragments sent, reassembled %llu, gave up %llu\n",
		       (unsigned long long)s->tx_fragments, (unsigned long long)s->frag.messages_completed,
		       (unsigned long long)(s->frag.drops[HW_FRAG_DROP_TIMEOUT] + s->frag.drops[HW_FRAG_DROP_EVICTED]));
		rc = 0;
	} else {
		rc = run_sender(argc, argv);
	}
	hw_dpdk_destroy(dp);
	hw_dpdk_eal_cleanup();
	return rc;
}
