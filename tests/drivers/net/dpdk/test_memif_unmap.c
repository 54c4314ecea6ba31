/* test_memif_unmap.c — regression test for drivers/net/dpdk/hw_dpdk_unmap.h:
 * a memif peer that dies while we burst on the port must not crash us.
 *
 * The memif PMD handles a peer's hang-up on the EAL interrupt thread and
 * munmaps the shared rings at once, under a reactor that may be inside a
 * burst (leader_crash_dpdk segfaulted in librte_net_memif.so this way). Here
 * a memif server process bursts (rx, then tx of what came in) in a tight
 * loop, each burst inside hw_dpdk_unmap_enter/leave as the driver's
 * port_enter/leave do; a client process (this binary with --client) floods
 * it with packets and is SIGKILLed mid-stream, CYCLES times. The server must
 * live through every disconnect, and its munmap guard must have run on the
 * interrupt thread at each one (hw_dpdk_unmap_guarded grows).
 *
 * `test_memif_unmap --bare` runs the same loop without the enter/leave marks
 * instead: the PMD's own behaviour. It is a demonstration, not part of the
 * test (a race need not lose every run): on the 2-core CI machine it died of
 * SIGSEGV in librte_net_memif.so in 3 runs of 5, while the guarded loop lived
 * through all 100 disconnects in every run (drivers/net/README.md, "memif
 * peers that die mid-burst").
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include "hw_dpdk.h"
#include "hw_dpdk_unmap.h"
#include "hw_reactor.h"
#include "../../../support/hw_test.h"

#define CYCLES 100
#define BURST 32

static char dir[128], sock[192];
static struct rte_mempool *pool;

static int eal_init(const char *role, const char *prefix)
{
	char args[768];
	snprintf(args, sizeof args,
		 "--no-huge -m 256 --no-pci --no-telemetry --log-level=pmd.net.memif:error --file-prefix=%s "
		 "--lcores=0@(0-%ld) --vdev=net_memif0,role=%s,rsize=9,socket=%s",
		 prefix, sysconf(_SC_NPROCESSORS_ONLN) - 1, role, sock);
	if (hw_dpdk_eal_init(args))
		return -1;
	pool = rte_pktmbuf_pool_create("mu_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (!pool)
		return -1;
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof conf);
	if (rte_eth_dev_configure(0, 1, 1, &conf) || rte_eth_rx_queue_setup(0, 0, 1024, 0, NULL, pool) ||
	    rte_eth_tx_queue_setup(0, 0, 1024, 0, NULL) || rte_eth_dev_start(0))
		return -1;
	return 0;
}

static int link_up(void)
{
	struct rte_eth_link l;
	memset(&l, 0, sizeof l);
	return rte_eth_link_get_nowait(0, &l) == 0 && l.link_status;
}

/* ---- the client: floods the server until it is killed */

static int client_main(void)
{
	if (eal_init("client", strrchr(dir, '/') + 1) < 0)
		return 10;
	int64_t deadline = hw_reactor_now_ns() + 60LL * 1000000000LL;
	while (hw_reactor_now_ns() < deadline) {
		struct rte_mbuf *m[BURST];
		if (rte_pktmbuf_alloc_bulk(pool, m, BURST) == 0) {
			for (int i = 0; i < BURST; i++)
				memset(rte_pktmbuf_append(m[i], 256), 0x5a, 256);
			uint16_t k = rte_eth_tx_burst(0, 0, m, BURST);
			rte_pktmbuf_free_bulk(m + k, BURST - k);
		}
		uint16_t n = rte_eth_rx_burst(0, 0, m, BURST);
		rte_pktmbuf_free_bulk(m, n);
	}
	return 11;   /* never killed: the server is gone */
}

/* ---- the server: bursts while its clients die */

static pid_t start_client(void)
{
	char exe[512];
	const char *b = getenv("HW_BUILDDIR");
	snprintf(exe, sizeof exe, "%s/tests/drivers/net/dpdk/test_memif_unmap", b ? b : ".");
	pid_t pid = fork();
	if (pid == 0) {
		execl(exe, exe, "--client", dir, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* rx, then tx back what came in, for ns nanoseconds; packets received. */
static uint64_t burst_for(int slot, int64_t ns)
{
	uint64_t got = 0;
	int64_t end = hw_reactor_now_ns() + ns;
	while (hw_reactor_now_ns() < end) {
		struct rte_mbuf *m[BURST];
		hw_dpdk_unmap_enter(slot);
		uint16_t n = rte_eth_rx_burst(0, 0, m, BURST);
		uint16_t k = n ? rte_eth_tx_burst(0, 0, m, n) : 0;
		hw_dpdk_unmap_leave(slot);
		rte_pktmbuf_free_bulk(m + k, n - k);
		got += n;
	}
	return got;
}

/* exit 0: every cycle connected, exchanged packets and disconnected. Each
 * cycle prints "client PID" on stdout once the flood is on; the test then
 * stops us, kills the client and resumes us (run_server). */
static int server_main(int guarded, int cycles)
{
	char prefix[160];
	snprintf(prefix, sizeof prefix, "%s-s", strrchr(dir, '/') + 1);
	if (eal_init("server", prefix) < 0)
		return 20;
	int slot = -1;
	if (guarded && (hw_dpdk_unmap_arm(&slot) || slot < 0))
		return 21;
	uint64_t pkts = 0;
	for (int c = 0; c < cycles; c++) {
		pid_t cl = start_client();
		if (cl < 0)
			return 22;
		int64_t deadline = hw_reactor_now_ns() + 20LL * 1000000000LL;
		uint64_t got = 0;
		while (!link_up() || got < 1000) {   /* connected, and the flood on */
			if (hw_reactor_now_ns() > deadline) {
				fprintf(stderr, "cycle %d: client never connected/sent (link %d, %llu packets)\n", c,
					link_up(), (unsigned long long)got);
				kill(cl, SIGKILL);
				return 23;
			}
			got += burst_for(slot, 1000000);
		}
		printf("client %d\n", (int)cl);
		fflush(stdout);
		/* burst on through the stop, the client's death and the resume */
		while (link_up()) {
			if (hw_reactor_now_ns() > deadline) {
				fprintf(stderr, "cycle %d: link still up after the client's death\n", c);
				return 24;
			}
			got += burst_for(slot, 1000000);
		}
		got += burst_for(slot, 5000000);
		int st;
		waitpid(cl, &st, 0);
		pkts += got;
	}
	printf("server (%s): %d disconnects survived, %llu packets, munmap guard ran %llu times "
	       "(%llu waited for a burst)\n", guarded ? "guarded" : "bare", cycles, (unsigned long long)pkts,
	       (unsigned long long)hw_dpdk_unmap_guarded(), (unsigned long long)hw_dpdk_unmap_waited());
	fflush(stdout);
	if (guarded && hw_dpdk_unmap_guarded() < (uint64_t)cycles)
		return 25;   /* the PMD's munmap did not come through our guard */
	rte_eth_dev_stop(0);
	rte_eth_dev_close(0);
	hw_dpdk_eal_cleanup();
	return 0;
}

/* ---- the test */

/* 1 once pid is a zombie (its sockets are closed) or gone. */
static int dead(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *r = strrchr(buf, ')');
	return !r || r[1] == 0 || r[2] == 'Z' || r[2] == 'X';
}

/* Runs `--server MODE cycles` in a fresh directory; for each client it
 * announces: SIGSTOP the server, let the client fill the rings for 20 ms,
 * SIGKILL the client, SIGCONT the server once the client is dead — the
 * server's reactor and interrupt thread resume together with the peer's
 * hang-up pending and full rings to burst on (how leader_crash_dpdk hit
 * it). Passes the server's other output through; its wait status. */
static int run_server(const char *mode, int cycles)
{
	char exe[512], cs[16];
	const char *b = getenv("HW_BUILDDIR");
	snprintf(exe, sizeof exe, "%s/tests/drivers/net/dpdk/test_memif_unmap", b ? b : ".");
	snprintf(cs, sizeof cs, "%d", cycles);
	assert_int_equal(hw_test_tmpdir(dir, sizeof dir, "mu"), 0);
	int out[2];
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		execl(exe, exe, "--server", mode, dir, cs, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	close(out[1]);
	FILE *f = fdopen(out[0], "r");
	char line[256];
	while (f && fgets(line, sizeof line, f)) {
		int cl;
		if (sscanf(line, "client %d", &cl) != 1) {
			print_message("%s", line);
			continue;
		}
		kill(pid, SIGSTOP);
		usleep(20000);
		kill(cl, SIGKILL);
		for (int i = 0; i < 5000 && !dead(cl); i++)
			usleep(1000);
		kill(pid, SIGCONT);
	}
	if (f)
		fclose(f);
	int st = -1;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* a crashed server leaves its clients and files behind */
	char cmd[300];
	snprintf(cmd, sizeof cmd, "pkill -KILL -f 'test_memif_unmap --client %s' 2>/dev/null", dir);
	(void)system(cmd);
	hw_test_rmtree(dir);
	return st;
}

static void test_guarded_survives_disconnects(void **state)
{
	(void)state;
	int st = run_server("guarded", CYCLES);
	if (WIFSIGNALED(st))
		fail_msg("the guarded server died of signal %d during its %d disconnects", WTERMSIG(st), CYCLES);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* --bare only: prints how the unguarded loop ended */
static void demo_bare(void **state)
{
	(void)state;
	int st = run_server("bare", CYCLES);
	if (WIFSIGNALED(st))
		print_message("bare server (no enter/leave marks): died of signal %d, as the PMD alone does\n",
			      WTERMSIG(st));
	else
		print_message("bare server (no enter/leave marks): exit %d (the race did not hit this time)\n",
			      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--client")) {
		snprintf(dir, sizeof dir, "%s", argv[2]);
		snprintf(sock, sizeof sock, "%s/memif.sock", dir);
		return client_main();
	}
	if (argc == 5 && !strcmp(argv[1], "--server")) {
		snprintf(dir, sizeof dir, "%s", argv[3]);
		snprintf(sock, sizeof sock, "%s/memif.sock", dir);
		return server_main(!strcmp(argv[2], "guarded"), atoi(argv[4]));
	}
	if (argc == 2 && !strcmp(argv[1], "--bare")) {
		const struct CMUnitTest demo[] = { cmocka_unit_test(demo_bare) };
		return cmocka_run_group_tests(demo, NULL, NULL);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guarded_survives_disconnects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
