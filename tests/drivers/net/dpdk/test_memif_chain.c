/* test_memif_chain.c — regression test for the rule hw_dpdk's zero-copy TX
 * on memif relies on (hw_dpdk_int.h, MEMIF_TX_CHAINS): an mbuf CHAIN whose
 * whole length fits one memif buffer goes out as ONE memif descriptor, so
 * the PMD's stale-MEMIF_DESC_FLAG_NEXT bug (reused descriptors keep NEXT
 * after a multi-descriptor packet) never triggers.
 *
 * Two processes over net_memif (--no-huge), raw ethdev API, no hiwater
 * framing in between: this process is the memif server, a copy of itself
 * (fork + exec with --echo) the client. The server sends N packets of random
 * sizes (60 bytes .. bsize), each built at random as one mbuf, as a chain of
 * pool mbufs, or as a chain of a header mbuf plus external buffers (the
 * shape of a zero-copy fetch response), sometimes mixing both; the client
 * checks every byte of each against the pattern (seed, sequence number,
 * offset) and echoes it back, again with a random shape. The server checks
 * every echoed byte, that every sequence number comes back exactly once
 * (a stale NEXT flag shows as duplicated or merged packets), and that every
 * external buffer was released (the PMD copies in tx_burst and frees).
 * Both ring directions (client-to-server and server-to-client) carry chains.
 */
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
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include "hw_dpdk.h"
#include "hw_reactor.h"
#include "../../../support/hw_test.h"

#define BSIZE 65535u          /* vdev bsize: one memif buffer */
#define MAGIC 0x48574d43u     /* "HWMC" */
#define STOP 0x53544f50u      /* "STOP": the echo process exits */
#define HDR 12                /* magic, sequence number, length (LE) */
#define WINDOW 48             /* packets in flight */

static uint64_t seed;
static char dir[128], sock[192];
static struct rte_mempool *pool, *jumbo;
static long ext_holds;        /* external buffers not yet released */

/* ---- packet contents: bytes HDR.. are a splitmix64 stream of (seed, seq) */

static uint64_t xs(uint64_t *s)
{
	hw_rng r = { *s };
	uint64_t v = hw_rng_next(&r);
	*s = r.s;
	return v;
}

static void fill(uint8_t *p, uint32_t len, uint32_t seq)
{
	uint64_t s = (seed ^ ((uint64_t)seq * 0x9E3779B97F4A7C15ull)) | 1;
	p[0] = (uint8_t)MAGIC, p[1] = (uint8_t)(MAGIC >> 8), p[2] = (uint8_t)(MAGIC >> 16),
	p[3] = (uint8_t)(MAGIC >> 24);
	memcpy(p + 4, &seq, 4);
	memcpy(p + 8, &len, 4);
	for (uint32_t k = HDR; k < len; k += 8) {
		uint64_t v = xs(&s);
		memcpy(p + k, &v, len - k < 8 ? len - k : 8);
	}
}

/* 0 if p[0..len) is packet seq as fill() makes it; *seq_out its number. */
static int check(const uint8_t *p, uint32_t len, uint32_t *seq_out)
{
	static uint8_t want[BSIZE];
	uint32_t magic, seq, l;
	if (len < HDR)
		return -1;
	memcpy(&magic, p, 4);
	memcpy(&seq, p + 4, 4);
	memcpy(&l, p + 8, 4);
	if (magic != MAGIC || l != len)
		return -1;
	fill(want, len, seq);
	*seq_out = seq;
	return memcmp(want, p, len) ? -1 : 0;
}

/* ---- packet shapes */

typedef struct ext_buf {
	struct rte_mbuf_ext_shared_info shinfo;
	uint8_t data[];
} ext_buf;

static void ext_free(void *addr, void *opaque)
{
	(void)addr;
	ext_holds--;
	free(opaque);
}

/* One external mbuf holding a private copy of src[0..n) (as a log chunk
 * holds records: the bytes live outside any mempool). */
static struct rte_mbuf *ext_mbuf(const uint8_t *src, uint16_t n)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	ext_buf *e = malloc(sizeof *e + n);
	if (!m || !e) {
		rte_pktmbuf_free(m);
		free(e);
		return NULL;
	}
	memcpy(e->data, src, n);
	e->shinfo.free_cb = ext_free;
	e->shinfo.fcb_opaque = e;
	rte_mbuf_ext_refcnt_set(&e->shinfo, 1);
	rte_pktmbuf_attach_extbuf(m, e->data, RTE_BAD_IOVA, n, &e->shinfo);
	m->data_off = 0;
	m->data_len = n;
	m->pkt_len = n;
	ext_holds++;
	return m;
}

static struct rte_mbuf *copy_mbuf(struct rte_mempool *mp, const uint8_t *src, uint16_t n)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	if (!m)
		return NULL;
	char *d = rte_pktmbuf_append(m, n);
	if (!d) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, src, n);
	return m;
}

enum { SHAPE_ONE, SHAPE_POOL_CHAIN, SHAPE_EXT_CHAIN, SHAPE_MIXED, SHAPE__N };

/* Build p[0..len) as an mbuf (chain) of a random shape; NULL when out of mbufs. */
static struct rte_mbuf *build(const uint8_t *p, uint32_t len, int shape, uint64_t *rs)
{
	uint16_t room = (uint16_t)(rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM);
	uint16_t jroom = (uint16_t)(rte_pktmbuf_data_room_size(jumbo) - RTE_PKTMBUF_HEADROOM);
	if (shape == SHAPE_ONE && len > jroom)
		shape = SHAPE_POOL_CHAIN;   /* bsize is more than one mbuf can hold */
	if (shape == SHAPE_ONE)
		return copy_mbuf(len > room ? jumbo : pool, p, (uint16_t)len);
	/* a header mbuf (as hw_dpdk's: network + hiwater headers) ... */
	uint32_t off = 1 + (uint32_t)(xs(rs) % (len < 200 ? len : 200));
	struct rte_mbuf *head = copy_mbuf(pool, p, (uint16_t)off);
	if (!head)
		return NULL;
	/* ... then segments of random sizes */
	while (off < len) {
		uint32_t n = 1 + (uint32_t)(xs(rs) % (xs(rs) % 4 ? 3000 : 20000));
		if (n > len - off)
			n = len - off;
		int ext = shape == SHAPE_EXT_CHAIN || (shape == SHAPE_MIXED && (xs(rs) & 1));
		if (!ext && n > room)
			n = room;
		struct rte_mbuf *m = ext ? ext_mbuf(p + off, (uint16_t)n) : copy_mbuf(pool, p + off, (uint16_t)n);
		if (!m || rte_pktmbuf_chain(head, m)) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		off += n;
	}
	return head;
}

static uint32_t pick_len(uint64_t *rs)
{
	switch (xs(rs) % 4) {
	case 0: return 60 + (uint32_t)(xs(rs) % 1500);               /* small */
	case 1: return BSIZE - (uint32_t)(xs(rs) % 64);              /* just fits */
	default: return 60 + (uint32_t)(xs(rs) % (BSIZE - 60 + 1));  /* anything */
	}
}

/* Send one mbuf, retrying while the ring is full (the peer drains it). */
static int send_one(uint16_t port, struct rte_mbuf *m, int64_t deadline_ns)
{
	while (rte_eth_tx_burst(port, 0, &m, 1) == 0) {
		if (hw_reactor_now_ns() > deadline_ns) {
			rte_pktmbuf_free(m);
			return -ETIMEDOUT;
		}
		usleep(20);
	}
	return 0;
}

static int eal_init(const char *role, const char *prefix)
{
	char args[768];
	snprintf(args, sizeof args,
		 "--no-huge -m 256 --no-pci --no-telemetry --log-level=pmd.net.memif:error --file-prefix=%s "
		 "--lcores=0@(0-%ld) --vdev=net_memif0,role=%s,bsize=%u,rsize=9,socket=%s",
		 prefix, sysconf(_SC_NPROCESSORS_ONLN) - 1, role, BSIZE, sock);
	if (hw_dpdk_eal_init(args))
		return -1;
	pool = rte_pktmbuf_pool_create("mc_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	jumbo = rte_pktmbuf_pool_create("mc_jumbo", 127, 16, 0, UINT16_MAX, (int)rte_socket_id());
	if (!pool || !jumbo)
		return -1;
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof conf);
	conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (rte_eth_dev_configure(0, 1, 1, &conf) || rte_eth_rx_queue_setup(0, 0, 1024, 0, NULL, pool) ||
	    rte_eth_tx_queue_setup(0, 0, 1024, 0, NULL) || rte_eth_dev_start(0))
		return -1;
	return 0;
}

static int link_up(uint16_t port)
{
	struct rte_eth_link l;
	memset(&l, 0, sizeof l);
	return rte_eth_link_get_nowait(port, &l) == 0 && l.link_status;
}

/* Linear copy of a received packet (RX chains when it exceeds an RX mbuf). */
static const uint8_t *rx_bytes(struct rte_mbuf *m, uint32_t *len)
{
	static uint8_t lin[BSIZE + 64];
	*len = rte_pktmbuf_pkt_len(m);
	if (*len > sizeof lin)
		return NULL;
	return rte_pktmbuf_read(m, 0, *len, lin);
}

/* ---- the echo process (memif client) */

static int echo_main(void)
{
	if (eal_init("client", strrchr(dir, '/') + 1) < 0)
		return 10;
	uint64_t rs = seed ^ 0xEC40;
	int64_t deadline = hw_reactor_now_ns() + 120LL * 1000000000LL;
	static uint8_t buf[BSIZE];
	for (;;) {
		struct rte_mbuf *in[32];
		uint16_t n = rte_eth_rx_burst(0, 0, in, 32);
		if (!n) {
			if (hw_reactor_now_ns() > deadline)
				return 11;
			usleep(20);
			continue;
		}
		for (uint16_t i = 0; i < n; i++) {
			uint32_t len, seq, magic = 0;
			const uint8_t *p = rx_bytes(in[i], &len);
			if (p && len >= 4)
				memcpy(&magic, p, 4);
			if (magic == STOP) {
				for (uint16_t k = i; k < n; k++)
					rte_pktmbuf_free(in[k]);
				rte_eth_dev_stop(0);
				rte_eth_dev_close(0);
				hw_dpdk_eal_cleanup();
				return ext_holds == 0 ? 0 : 13;
			}
			if (!p || check(p, len, &seq)) {
				fprintf(stderr, "echo: corrupt packet (len %u)\n", len);
				return 12;
			}
			memcpy(buf, p, len);
			rte_pktmbuf_free(in[i]);
			struct rte_mbuf *out;
			while ((out = build(buf, len, (int)(xs(&rs) % SHAPE__N), &rs)) == NULL)
				usleep(20);
			if (send_one(0, out, deadline))
				return 14;
		}
	}
}

/* ---- the test (memif server) */

static pid_t start_echo(void)
{
	char exe[512], sd[32];
	const char *b = getenv("HW_BUILDDIR");
	snprintf(exe, sizeof exe, "%s/tests/drivers/net/dpdk/test_memif_chain", b ? b : ".");
	snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
	pid_t pid = fork();
	if (pid == 0) {
		execl(exe, exe, "--echo", dir, sd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void test_chains_one_descriptor(void **st)
{
	(void)st;
	/* the server's socket first: a 22.11 memif client that finds no
	 * server never dials again */
	char prefix[160];
	snprintf(prefix, sizeof prefix, "%s-s", strrchr(dir, '/') + 1);
	assert_int_equal(eal_init("server", prefix), 0);
	pid_t echo = start_echo();
	assert_true(echo > 0);
	int64_t deadline = hw_reactor_now_ns() + 60LL * 1000000000LL;
	while (!link_up(0)) {
		assert_true(hw_reactor_now_ns() < deadline);
		usleep(1000);
	}

	uint64_t rs = seed;
	const uint32_t n_pkts = 1500 + (uint32_t)(xs(&rs) % 500);
	uint8_t *back = calloc(n_pkts, 1);
	static uint8_t buf[BSIZE];
	uint32_t sent = 0, got = 0, chained = 0, ext_pkts = 0;
	uint64_t bytes = 0;
	while (got < n_pkts) {
		assert_true(hw_reactor_now_ns() < deadline);
		int status;
		if (waitpid(echo, &status, WNOHANG) == echo)
			fail_msg("echo process exited early (status %d): it saw a corrupt packet", status);
		/* the echo may not poll yet when the link comes up: a packet the
		 * ring drops is a failure below (missing), so send only while
		 * fewer than WINDOW are out */
		while (sent < n_pkts && sent - got < WINDOW) {
			uint32_t len = pick_len(&rs);
			int shape = (int)(xs(&rs) % SHAPE__N);
			fill(buf, len, sent);
			struct rte_mbuf *m = build(buf, len, shape, &rs);
			if (!m)
				break;
			chained += m->nb_segs > 1;
			ext_pkts += shape == SHAPE_EXT_CHAIN || shape == SHAPE_MIXED;
			assert_int_equal(rte_pktmbuf_pkt_len(m), len);
			assert_int_equal(send_one(0, m, deadline), 0);
			sent++;
			bytes += len;
		}
		struct rte_mbuf *in[32];
		uint16_t n = rte_eth_rx_burst(0, 0, in, 32);
		for (uint16_t i = 0; i < n; i++) {
			uint32_t len, seq = UINT32_MAX;
			const uint8_t *p = rx_bytes(in[i], &len);
			int bad = !p || check(p, len, &seq) || seq >= sent;
			rte_pktmbuf_free(in[i]);
			if (bad)
				fail_msg("echoed packet %u: corrupt or unknown (len %u)", got, len);
			if (back[seq])
				fail_msg("packet %u echoed twice", seq);
			back[seq] = 1;
			got++;
		}
		if (!n)
			usleep(20);
	}
	/* the memif TX copied every external buffer and freed its mbuf */
	assert_int_equal(ext_holds, 0);
	for (int i = 0; i < 2000; i++) {   /* stragglers: there must be none */
		struct rte_mbuf *in[32];
		uint16_t n = rte_eth_rx_burst(0, 0, in, 32);
		if (n)
			fail_msg("%u packets more than sent came back", n);
		usleep(50);
	}
	print_message("%u packets (%u chained, %u with external buffers), %.1f MB each way, all echoed once, "
		      "byte-identical\n", n_pkts, chained, ext_pkts, (double)bytes / 1e6);
	uint32_t stop = STOP;
	memcpy(buf, &stop, 4);
	assert_int_equal(send_one(0, copy_mbuf(pool, buf, 64), deadline), 0);
	int status = -1;
	assert_int_equal(waitpid(echo, &status, 0), echo);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("echo process failed (status %d)", status);
	free(back);
	/* let the interrupt thread handle the peer's disconnect before the
	 * port goes away (closing under it crashed that thread now and then) */
	int64_t down_by = hw_reactor_now_ns() + 5000000000LL;
	while (link_up(0) && hw_reactor_now_ns() < down_by)
		usleep(1000);
	usleep(20000);
	rte_eth_dev_stop(0);
	rte_eth_dev_close(0);
	hw_dpdk_eal_cleanup();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--echo")) {
		snprintf(dir, sizeof dir, "%s", argv[2]);
		snprintf(sock, sizeof sock, "%s/memif.sock", dir);
		seed = strtoull(argv[3], NULL, 10);
		return echo_main();
	}
	seed = hw_test_seed("test_memif_chain");
	seed = seed * 2654435761u + 1;
	mkdir("/tmp/net", 0777);
	snprintf(dir, sizeof dir, "/tmp/net/mc%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(sock, sizeof sock, "%s/memif.sock", dir);
	unlink(sock);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chains_one_descriptor),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(sock);
	rmdir(dir);
	return rc;
}
