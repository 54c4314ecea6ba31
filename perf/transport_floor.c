/* perf_transport_floor — the floor under every latency hiwater reports: a
 * one-packet round trip between two processes, through hiwater's own
 * transports (encode, frame, send, receive, decode, deliver, and back):
 *   1. DPDK net_memif (--no-huge), both sides busy-polling;
 *   2. kernel UDP on io_uring (hw_udp), both sides busy-polling the CQ.
 * Prints p50/p90/p99/max per transport and the ratio UDP/memif, measured in
 * the same run.
 *
 *   perf_transport_floor [--rounds N] [--warmup N] [--only memif|udp]
 *
 * The parent forks+execs itself as the echo peer ("--child ...").
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "hw_dpdk.h"
#include "hw_reactor.h"
#include "hw_udp.h"

#define CLUSTER 99u
#define PARENT 1
#define CHILD 2

static hw_net *out_net;
static volatile int got;
static volatile sig_atomic_t stop_child;

static void child_echo(void *ctx, const hw_msg *m)
{
	(void)ctx;
	hw_msg r = *m;
	r.type = HW_MSG_PRODUCE_RESP;
	r.src = CHILD;
	r.dst = m->src;
	hw_net_send(out_net, &r);
}

static void parent_rx(void *ctx, const hw_msg *m)
{
	(void)ctx;
	(void)m;
	got++;
}

static void on_term(int s)
{
	(void)s;
	stop_child = 1;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

typedef struct result {
	double p50, p90, p99, max;
	int ok;
} result;

static result summarize(const char *name, int64_t *rtt, int n)
{
	result r = { 0 };
	qsort(rtt, (size_t)n, sizeof *rtt, cmp64);
	r.p50 = (double)rtt[n / 2] / 1000.0;
	r.p90 = (double)rtt[(int)(n * 0.90)] / 1000.0;
	r.p99 = (double)rtt[(int)(n * 0.99)] / 1000.0;
	r.max = (double)rtt[n - 1] / 1000.0;
	r.ok = 1;
	printf("%-14s rounds %7d  p50 %8.2f us  p90 %8.2f us  p99 %8.2f us  max %9.2f us\n", name, n, r.p50,
	       r.p90, r.p99, r.max);
	return r;
}

/* One ping: send, spin on poll until the echo arrives (or 1 s). */
typedef int (*poll_fn)(void *);
static int64_t ping(hw_net *net, poll_fn poll, void *arg, uint32_t corr)
{
	hw_msg m;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_PRODUCE_RESP;
	m.src = PARENT;
	m.dst = CHILD;
	m.correlation_id = corr;
	m.u.produce_resp.base_offset = corr;
	int before = got;
	int64_t t0 = hw_reactor_now_ns();
	if (hw_net_send(net, &m) != 0)
		return -1;
	while (got == before) {
		poll(arg);
		if (hw_reactor_now_ns() - t0 > 1000000000LL)
			return -1;
	}
	return hw_reactor_now_ns() - t0;
}

static int dpdk_poll_fn(void *a) { return hw_dpdk_poll(a); }
static int udp_poll_fn(void *a) { return hw_udp_poll(a); }

static pid_t spawn(const char *self, char *const args[])
{
	pid_t p = fork();
	if (p == 0) {
		execv(self, args);
		_exit(127);
	}
	return p;
}

static int run_child(int argc, char **argv)
{
	signal(SIGTERM, on_term);
	if (!strcmp(argv[2], "memif") && argc == 4) {
		if (hw_dpdk_eal_init(argv[3]))
			return 1;
		hw_dpdk_cfg cfg = { .cluster_id = CLUSTER, .self_id = CHILD, .on_msg = child_echo };
		int err;
		hw_dpdk *d = hw_dpdk_create(&cfg, &err);
		if (!d || hw_dpdk_add_neighbour(d, PARENT, "dpdk:port=0"))
			return 1;
		out_net = hw_dpdk_net(d);
		while (!stop_child)
			hw_dpdk_poll(d);
		hw_dpdk_destroy(d);
		hw_dpdk_eal_cleanup();
		return 0;
	}
	if (!strcmp(argv[2], "udp") && argc == 5) {
		hw_udp_cfg cfg = { .listen = argv[3], .cluster_id = CLUSTER, .self_id = CHILD, .on_msg = child_echo };
		int err;
		hw_udp *u = hw_udp_create(&cfg, &err);
		if (!u || hw_udp_add_neighbour(u, PARENT, argv[4]))
			return 1;
		out_net = hw_udp_net(u);
		while (!stop_child)
			hw_udp_poll(u);
		hw_udp_destroy(u);
		return 0;
	}
	return 2;
}

static result bench_memif(const char *self, int rounds, int warmup, int64_t *rtt)
{
	result r = { 0 };
	char dir[128], sock[192], args[512], cargs[512];
	mkdir("/tmp/net", 0777);
	snprintf(dir, sizeof dir, "/tmp/net/floor-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(sock, sizeof sock, "%s/memif.sock", dir);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *common = "--no-huge -m 256 --no-pci --no-telemetry --log-level=pmd.net.memif:error";
	snprintf(args, sizeof args, "%s --file-prefix=hwfloor%d-a --lcores=0@(0-%ld) --vdev=net_memif0,role=server,bsize=65535,rsize=9,socket=%s",
		 common, (int)getpid(), ncpu - 1, sock);
	snprintf(cargs, sizeof cargs, "%s --file-prefix=hwfloor%d-b --lcores=0@(0-%ld) --vdev=net_memif0,role=client,bsize=65535,rsize=9,socket=%s",
		 common, (int)getpid(), ncpu - 1, sock);
	if (hw_dpdk_eal_init(args)) {
		fprintf(stderr, "memif: EAL init failed\n");
		return r;
	}
	hw_dpdk_cfg cfg = { .cluster_id = CLUSTER, .self_id = PARENT, .on_msg = parent_rx };
	int err;
	hw_dpdk *d = hw_dpdk_create(&cfg, &err);
	if (!d || hw_dpdk_add_neighbour(d, CHILD, "dpdk:port=0")) {
		fprintf(stderr, "memif: create failed\n");
		return r;
	}
	char *cargv[] = { (char *)self, (char *)"--child", (char *)"memif", cargs, NULL };
	pid_t child = spawn(self, cargv);
	int64_t until = hw_reactor_now_ns() + 30000000000LL;
	while (!hw_dpdk_link_up(d, 0) && hw_reactor_now_ns() < until)
		hw_dpdk_poll(d);
	/* the child's poll loop may start a little after link up */
	int n = 0, lost = 0;
	for (int i = 0; i < warmup + rounds && hw_reactor_now_ns() < until + 60000000000LL; i++) {
		int64_t t = ping(hw_dpdk_net(d), dpdk_poll_fn, d, (uint32_t)i);
		if (t < 0) {
			lost++;
			if (lost > 50)
				break;
			continue;
		}
		if (i >= warmup && n < rounds)
			rtt[n++] = t;
	}
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	hw_dpdk_destroy(d);
	hw_dpdk_eal_cleanup();
	unlink(sock);
	rmdir(dir);
	if (n < rounds / 2) {
		fprintf(stderr, "memif: only %d round trips (%d lost)\n", n, lost);
		return r;
	}
	return summarize("memif/DPDK", rtt, n);
}

static result bench_udp(const char *self, int rounds, int warmup, int64_t *rtt)
{
	result r = { 0 };
	hw_udp_cfg cfg = { .listen = "udp:127.0.0.1:0", .cluster_id = CLUSTER, .self_id = PARENT, .on_msg = parent_rx };
	int err;
	hw_udp *u = hw_udp_create(&cfg, &err);
	if (!u)
		return r;
	/* pick a child port: bind a throwaway socket to learn a free one */
	hw_udp_cfg probe = cfg;
	hw_udp *p = hw_udp_create(&probe, &err);
	if (!p)
		return r;
	unsigned child_port = hw_udp_local_port(p);
	hw_udp_destroy(p);
	char listen[64], back[64], to[64];
	snprintf(listen, sizeof listen, "udp:127.0.0.1:%u", child_port);
	snprintf(back, sizeof back, "udp:127.0.0.1:%u", hw_udp_local_port(u));
	snprintf(to, sizeof to, "udp:127.0.0.1:%u", child_port);
	hw_udp_add_neighbour(u, CHILD, to);
	char *cargv[] = { (char *)self, (char *)"--child", (char *)"udp", listen, back, NULL };
	pid_t child = spawn(self, cargv);
	int n = 0, lost = 0;
	int64_t until = hw_reactor_now_ns() + 60000000000LL;
	for (int i = 0; i < warmup + rounds && hw_reactor_now_ns() < until; i++) {
		int64_t t = ping(hw_udp_net(u), udp_poll_fn, u, (uint32_t)i);
		if (t < 0) {
			lost++;
			if (lost > 50)
				break;
			continue;
		}
		if (i >= warmup && n < rounds)
			rtt[n++] = t;
	}
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	hw_udp_destroy(u);
	if (n < rounds / 2) {
		fprintf(stderr, "udp: only %d round trips (%d lost)\n", n, lost);
		return r;
	}
	return summarize("kernel UDP", rtt, n);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--child"))
		return run_child(argc, argv);
	int rounds = 20000, warmup = 2000;
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--rounds N] [--warmup N] [--only memif|udp]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 10)
		rounds = 10;
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0)
		return 1;
	self[sl] = 0;
	int64_t *rtt = calloc((size_t)rounds, sizeof *rtt);
	printf("transport floor: one-packet round trip between two processes, both busy-polling (%d rounds, %d warmup)\n",
	       rounds, warmup);
	result m = { 0 }, u = { 0 };
	if (!only || !strcmp(only, "memif"))
		m = bench_memif(self, rounds, warmup, rtt);
	if (!only || !strcmp(only, "udp"))
		u = bench_udp(self, rounds, warmup, rtt);
	if (m.ok && u.ok)
		printf("ratio UDP/memif: p50 %.1fx  p99 %.1fx\n", u.p50 / m.p50, u.p99 / m.p99);
	/* one key=value line per transport for scripts (perf/run-all) */
	if (m.ok)
		printf("floor memif p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.2f\n", m.p50, m.p90, m.p99, m.max);
	if (u.ok)
		printf("floor udp p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.2f\n", u.p50, u.p90, u.p99, u.max);
	free(rtt);
	return (only ? (m.ok || u.ok) : (m.ok && u.ok)) ? 0 : 1;
}
