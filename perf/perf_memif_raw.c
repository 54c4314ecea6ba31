/* perf_memif_raw — the memif pair's own limits, without hiwater on top: one
 * process sends packets over a net_memif vdev as fast as rte_eth_tx_burst
 * takes them, another (forked and exec'd, its own EAL) receives and frees
 * them; both busy-poll. DPDK 22.11's memif PMD copies every byte on both
 * sides (the sender into the shared ring buffer, the receiver out of it
 * into its own mbuf), so this is the ceiling under perf/throughput's
 * memif hops (perf/README.md "How to read them").
 *
 *   perf_memif_raw [--seconds S (3)] [--size B (56000)] [--zero-copy]
 *   perf_memif_raw --check
 *
 * --zero-copy: the sender is a memif client with `zero-copy=yes` (EAL
 * --single-file-segments): its TX descriptors point at its own mbufs, so
 * only the receiver copies.
 * --check (a test, registered in meson, suite net): what zero-copy can and
 * cannot carry in DPDK 22.11 (drivers/net/memif/rte_eth_memif.c):
 *   1. copy mode, payload in an external buffer (malloc'd, attached with
 *      rte_pktmbuf_attach_extbuf, as hiwater sends log chunks): arrives intact;
 *   2. zero-copy client, payload in a pool mbuf: arrives intact;
 *   3. zero-copy client, payload in an external buffer: does NOT arrive —
 *      memif_tx_one_zc writes `d0->region = 1` ("FIXME: get region index")
 *      and the offset from region 1's base (DPDK memory), truncated to 32
 *      bits, and the receiver (eth_memif_rx) copies from region + offset
 *      with no bounds check: wrong bytes, or the receiver faults.
 * Exit 0 when all three hold; 1 (with the case that did not) otherwise.
 *
 * Output: MB/s received and CPU seconds per GB of both processes
 * (getrusage of each), one line; with --json a JSON object.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define PAT 0x5a
#define BURST 32

static volatile sig_atomic_t stop;
static void on_term(int s)
{
	(void)s;
	stop = 1;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_of(int who)
{
	struct rusage r;
	getrusage(who, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* rte_eal_init on a space-separated argument string. 0 or -1. */
static int eal(const char *args)
{
	static char buf[2048];
	char *argv[64];
	int argc = 0;
	snprintf(buf, sizeof buf, "%s", args);
	argv[argc++] = (char *)"perf_memif_raw";
	for (char *s = NULL, *t = strtok_r(buf, " ", &s); t && argc < 63; t = strtok_r(NULL, " ", &s))
		argv[argc++] = t;
	argv[argc] = NULL;
	return rte_eal_init(argc, argv) < 0 ? -1 : 0;
}

/* Port 0 with one queue pair on pool mp, started. 0 or -1. */
static int port_start(struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof conf);
	conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (rte_eth_dev_configure(0, 1, 1, &conf) < 0 || rte_eth_rx_queue_setup(0, 0, 512, 0, NULL, mp) < 0 ||
	    rte_eth_tx_queue_setup(0, 0, 512, 0, NULL) < 0 || rte_eth_dev_start(0) < 0)
		return -1;
	return 0;
}

/* Port 0's link up within 20 s. 0 or -1. */
static int link_wait(void)
{
	for (double until = now() + 20; now() < until && !stop;) {
		struct rte_eth_link l;
		if (rte_eth_link_get_nowait(0, &l) == 0 && l.link_status)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* Receiver: count bytes, check the first and last bytes of each packet
 * are PAT; on SIGTERM print "bytes bad packets cpu_s" and exit. */
static int run_receiver(const char *args)
{
	signal(SIGTERM, on_term);
	if (eal(args))
		return 2;
	struct rte_mempool *mp = rte_pktmbuf_pool_create("rx", 2048, 0, 0, 65535, (int)rte_socket_id());
	if (!mp || port_start(mp))
		return 3;
	printf("ready\n"); /* the server's socket listens: the sender may connect */
	fflush(stdout);
	if (link_wait())
		return 4;
	unsigned long long bytes = 0, bad = 0, pkts = 0;
	struct rte_mbuf *b[BURST];
	while (!stop) {
		uint16_t n = rte_eth_rx_burst(0, 0, b, BURST);
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m = b[i];
			const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
			uint32_t len = rte_pktmbuf_data_len(m);
			if (len < 2 || p[0] != PAT || p[len / 2] != PAT || p[len - 1] != PAT)
				bad++;
			bytes += rte_pktmbuf_pkt_len(m);
			pkts++;
			rte_pktmbuf_free(m);
		}
	}
	printf("%llu %llu %llu %.3f\n", bytes, bad, pkts, cpu_of(RUSAGE_SELF));
	fflush(stdout);
	rte_eth_dev_stop(0);
	rte_eal_cleanup();
	return 0;
}

static void ext_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

/* An mbuf whose payload is `size` PAT bytes in a malloc'd external buffer
 * (never freed: a handful per check). NULL on failure. */
static struct rte_mbuf *extbuf_mbuf(struct rte_mempool *hdr_pool, uint32_t size)
{
	/* aligned_alloc wants a size that is a multiple of the alignment (C11) */
	uint16_t len = (uint16_t)((size + 256 + 63) & ~63u);
	uint8_t *buf = aligned_alloc(64, len);
	struct rte_mbuf *m = rte_pktmbuf_alloc(hdr_pool);
	if (!buf || !m)
		return NULL;
	memset(buf, PAT, len);
	struct rte_mbuf_ext_shared_info *sh = rte_pktmbuf_ext_shinfo_init_helper(buf, &len, ext_free, NULL);
	if (!sh)
		return NULL;
	rte_pktmbuf_attach_extbuf(m, buf, rte_mem_virt2iova(buf), len, sh);
	m->data_off = 0;
	m->data_len = (uint16_t)size;
	m->pkt_len = size;
	return m;
}

typedef struct {
	unsigned long long bytes, bad, pkts;
	double rx_cpu, tx_cpu, secs;
	int rx_status;
} result;

/* Start the receiver (server role) and this process's sender (client,
 * zero-copy or not); send for `secs` (or `count` packets if > 0, from
 * external buffers if ext); stop the receiver and collect. 0 or -1. */
static int run_pair(int zc, int ext, uint32_t size, double secs, int count, result *res)
{
	char dir[] = "/tmp/hw-memif-raw-XXXXXX";
	if (!mkdtemp(dir))
		return -1;
	char sock[128], args[1024], cargs[1024];
	snprintf(sock, sizeof sock, "%s/memif.sock", dir);
	char common[256];
	/* not pinned to CPU 0 (EAL's default), or both would share it */
	snprintf(common, sizeof common, "--no-huge -m 512 --no-pci --no-telemetry --log-level=pmd.net.memif:error --lcores=0@(0-%ld)",
		 sysconf(_SC_NPROCESSORS_ONLN) - 1);
	snprintf(cargs, sizeof cargs, "%s --file-prefix=hwmraw%d-rx --vdev=net_memif0,role=server,bsize=65535,rsize=9,socket=%s",
		 common, (int)getpid(), sock);
	snprintf(args, sizeof args, "%s%s --file-prefix=hwmraw%d-tx --vdev=net_memif0,role=client,bsize=65535,rsize=9,socket=%s%s",
		 common, zc ? " --single-file-segments" : "", (int)getpid(), sock, zc ? ",zero-copy=yes" : "");
	int pfd[2];
	if (pipe(pfd))
		return -1;
	pid_t child = fork();
	if (child == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = 0;
		execl(self, self, "--receiver", cargs, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *from = fdopen(pfd[0], "r");
	char line[256] = "";
	int rc = -1, eal_ok = 0;
	/* the receiver's socket must listen before the client connects */
	if (fgets(line, sizeof line, from) && !strncmp(line, "ready", 5) && (eal_ok = eal(args) == 0)) {
		struct rte_mempool *mp = rte_pktmbuf_pool_create("tx", 2048, 0, 0, 65535, (int)rte_socket_id());
		struct rte_mempool *hp = rte_pktmbuf_pool_create("hdr", 512, 0, 0, 0, (int)rte_socket_id());
		if (mp && hp && port_start(mp) == 0 && link_wait() == 0) {
			double c0 = cpu_of(RUSAGE_SELF), t0 = now(), end = t0 + secs;
			int sent = 0;
			struct rte_mbuf *b[BURST];
			while (count > 0 ? sent < count : now() < end) {
				unsigned n = count > 0 ? 1 : BURST;
				for (unsigned i = 0; i < n; i++) {
					b[i] = ext ? extbuf_mbuf(hp, size) : rte_pktmbuf_alloc(mp);
					if (!b[i]) {
						n = i;
						break;
					}
					if (!ext) {
						/* the payload: PAT (written once per mbuf
						 * would do; the PMD copies it anyway) */
						uint8_t *p = rte_pktmbuf_mtod(b[i], uint8_t *);
						p[0] = p[size / 2] = p[size - 1] = PAT;
						b[i]->data_len = (uint16_t)size;
						b[i]->pkt_len = size;
					}
				}
				uint16_t k = rte_eth_tx_burst(0, 0, b, (uint16_t)n);
				for (unsigned i = k; i < n; i++)
					rte_pktmbuf_free(b[i]);
				sent += k;
				if (count > 0 && k == 0)
					usleep(100);
			}
			/* let the receiver drain the ring, then stop it */
			for (double d = now() + 0.3; now() < d;)
				rte_eth_tx_burst(0, 0, b, 0);
			res->secs = now() - t0;
			res->tx_cpu = cpu_of(RUSAGE_SELF) - c0;
			rc = 0;
		}
	}
	if (rc < 0)
		fprintf(stderr, "perf_memif_raw: sender side failed (receiver said \"%.*s\")\n", (int)strcspn(line, "\n"), line);
	/* the receiver first: a memif peer that disconnects while the other
	 * side is inside rx_burst can make that side fault (22.11 unmaps the
	 * regions from its interrupt thread) */
	kill(child, SIGTERM);
	int st = 0;
	/* a receiver that faulted may not die of SIGTERM (under ASan its
	 * SEGV handler can spin): 3 s, then SIGKILL, so the test never hangs */
	pid_t got = 0;
	for (double d = now() + 3.0; (got = waitpid(child, &st, WNOHANG)) == 0 && now() < d;)
		usleep(10000);
	if (got == 0) {
		fprintf(stderr, "perf_memif_raw: the receiver ignored SIGTERM for 3 s: SIGKILL\n");
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
	}
	res->rx_status = st;
	line[0] = 0;
	if (rc == 0 && (!fgets(line, sizeof line, from) ||
			sscanf(line, "%llu %llu %llu %lf", &res->bytes, &res->bad, &res->pkts, &res->rx_cpu) != 4))
		res->bytes = res->bad = res->pkts = 0;
	if (rc == 0 && !res->pkts)
		fprintf(stderr, "perf_memif_raw: receiver reported \"%.*s\", status %d\n", (int)strcspn(line, "\n"), line, st);
	if (eal_ok) {
		rte_eth_dev_stop(0);
		rte_eal_cleanup();
	}
	fclose(from);
	unlink(sock);
	rmdir(dir);
	return rc;
}

/* Each case runs in its own process: an EAL is initialised once per process. */
static int run_case_process(const char *self, const char *which)
{
	pid_t p = fork();
	if (p == 0) {
		execl(self, self, "--case", which, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static int run_case(const char *which)
{
	int zc = strstr(which, "zc") != NULL, ext = strstr(which, "ext") != NULL;
	result r;
	memset(&r, 0, sizeof r);
	if (run_pair(zc, ext, 9000, 0, 16, &r) < 0) {
		printf("# %s: the memif pair did not come up\n", which);
		return 2;
	}
	int crashed = WIFSIGNALED(r.rx_status);
	printf("# %s: received %llu packets, %llu with wrong bytes%s\n", which, r.pkts, r.bad,
	       crashed ? ", the receiver died of a signal" : "");
	int intact = !crashed && r.pkts >= 16 && r.bad == 0;
	return intact ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--receiver"))
		return run_receiver(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--case"))
		return run_case(argv[2]);
	double secs = 3;
	uint32_t size = 56000;
	int zc = 0, json = 0, check = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--zero-copy"))
			zc = 1;
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--check"))
			check = 1;
		else {
			fprintf(stderr, "usage: perf_memif_raw [--seconds S] [--size B] [--zero-copy] [--json] | --check\n");
			return 2;
		}
	}
	if (check) {
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = 0;
		int a = run_case_process(self, "copy-ext");
		int b = run_case_process(self, "zc-pool");
		int c = run_case_process(self, "zc-ext");
		printf("copy mode, external buffer: %s\n", a == 0 ? "intact (expected)" : "NOT intact");
		printf("zero-copy client, pool mbuf: %s\n", b == 0 ? "intact (expected)" : "NOT intact");
		printf("zero-copy client, external buffer: %s\n",
		       c == 1 ? "not carried (expected with DPDK 22.11: region hard-coded to 1)"
			      : c == 0 ? "INTACT: this DPDK carries external buffers zero-copy; revisit perf/README.md"
				       : "the pair did not come up");
		return a == 0 && b == 0 && c == 1 ? 0 : 1;
	}
	if (size < 64 || size > 65535) {
		fprintf(stderr, "perf_memif_raw: --size 64..65535\n");
		return 2;
	}
	result r;
	memset(&r, 0, sizeof r);
	if (run_pair(zc, 0, size, secs, 0, &r) < 0 || !r.bytes) {
		fprintf(stderr, "perf_memif_raw: the memif pair did not come up or carried nothing\n");
		return 1;
	}
	double gb = (double)r.bytes / 1e9, mbps = (double)r.bytes / r.secs / 1e6;
	double cpu = (r.rx_cpu + r.tx_cpu) / gb;
	if (json)
		printf("{\"memif_raw\": {\"zero_copy\": %d, \"size\": %u, \"mbps\": %.1f, \"cpu_s_per_gb\": %.3f, "
		       "\"bad_packets\": %llu}}\n",
		       zc, size, mbps, cpu, r.bad);
	else
		printf("memif raw%s, %u B packets: %.1f MB/s, %.3f CPU s/GB (sender %.2f s, receiver %.2f s), %llu bad\n",
		       zc ? " (zero-copy client)" : "", size, mbps, cpu, r.tx_cpu, r.rx_cpu, r.bad);
	return 0;
}
