/* test_owner.c — thread ownership (engine/common/hw_assert.h HW_ASSERT_OWNER):
 * an entry point of a replica manager, a partition log or a transport
 * instance owned by reactor 0, called from the loop of reactor 1, aborts
 * naming the function and both reactors; the same call from reactor 0, and
 * from a thread that runs no reactor, goes through.
 *
 * Death test: each call runs in a forked child whose stderr goes into a
 * pipe; the parent checks the child's signal (SIGABRT) and message. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_assert.h"
#include "hw_dpdk.h"
#include "hw_log.h"
#include "hw_memstore.h"
#include "hw_reactor.h"
#include "hw_rm.h"
#include "hw_udp.h"

/* ---- the objects, all owned by reactor 0, built before any fork */
static hw_rm *rm;
static hw_log *log_;
static hw_udp *udp;
static hw_dpdk *dpdk;
static char log_dir[64];

static int net_send(hw_net *n, const hw_msg *m) { (void)n; (void)m; return 0; }
static hw_net null_net = { .send = net_send };
static void on_msg(void *ctx, const hw_msg *m) { (void)ctx; (void)m; }

static int open_store(void *ctx, hw_tp tp, const char *topic, int is_new, hw_store **out)
{
	(void)ctx, (void)tp, (void)topic, (void)is_new;
	return hw_memstore_create(0, out);
}

/* One call into an owned object; returns whether it went through. */
typedef void (*entry_fn)(void);
static void call_rm_poll(void) { (void)hw_rm_poll(rm); }
static void call_rm_stats(void) { hw_rm_stats st; hw_rm_get_stats(rm, &st); }
static void call_log_poll(void) { (void)hw_log_poll(log_); }
static void call_log_append(void) { (void)hw_log_append(log_, NULL, 0); }
static void call_udp_poll(void) { (void)hw_udp_poll(udp); }
static void call_udp_send(void)
{
	hw_msg m = { .type = HW_MSG_FETCH, .dst = 2 };
	(void)hw_net_send(hw_udp_net(udp), &m);
}
static void call_dpdk_poll(void) { (void)hw_dpdk_poll(dpdk); }

static entry_fn child_fn;
static hw_reactor *child_reactor;

static int child_poller(void *arg)
{
	(void)arg;
	child_fn();
	hw_reactor_stop(child_reactor);
	return 1;
}

/* Run fn in a child: on the loop of a reactor with id `reactor`, or (-1)
 * on a thread without one. *status gets the child's wait status; msg its
 * stderr. */
static void run_child(entry_fn fn, int reactor, int *status, char *msg, size_t cap)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		if (reactor < 0) {
			fn();
			_exit(0);
		}
		child_fn = fn;
		hw_reactor_cfg rc = { .id = reactor, .cpu = -1, .idle = HW_IDLE_BACKOFF };
		child_reactor = hw_reactor_create(&rc);
		if (!child_reactor || hw_reactor_add_poller(child_reactor, "owner", child_poller, NULL, NULL))
			_exit(3);
		hw_reactor_run(child_reactor);
		_exit(hw_reactor_current_id == HW_OWNER_ANY ? 0 : 4);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(p[0], msg + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	msg[n] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
}

static void expect_abort(entry_fn fn, const char *func)
{
	int st;
	char msg[4096], want[256];
	run_child(fn, 1, &st, msg, sizeof msg);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
		fail_msg("%s from reactor 1: child status %#x, stderr: %s", func, st, msg);
	snprintf(want, sizeof want, "invariant violated: %s called on reactor 1, owner is reactor 0", func);
	if (!strstr(msg, want))
		fail_msg("%s: expected \"%s\" in the child's stderr, got: %s", func, want, msg);
}

static void expect_passes(entry_fn fn, int reactor, const char *func)
{
	int st;
	char msg[4096];
	run_child(fn, reactor, &st, msg, sizeof msg);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s on %d: child status %#x, stderr: %s", func, reactor, st, msg);
	assert_null(strstr(msg, "invariant violated"));
}

#define CHECK(fn, name)                      \
	do {                                 \
		expect_abort(fn, name);      \
		expect_passes(fn, 0, name);  \
		expect_passes(fn, -1, name); \
	} while (0)

static void test_rm(void **st)
{
	(void)st;
	CHECK(call_rm_poll, "hw_rm_poll");
	CHECK(call_rm_stats, "hw_rm_get_stats");
}

static void test_log(void **st)
{
	(void)st;
	CHECK(call_log_poll, "hw_log_poll");
	CHECK(call_log_append, "hw_log_append");
}

static void test_udp(void **st)
{
	(void)st;
	CHECK(call_udp_poll, "hw_udp_poll");
	CHECK(call_udp_send, "udp_send");
}

static void test_dpdk(void **st)
{
	(void)st;
	CHECK(call_dpdk_poll, "hw_dpdk_poll");
}

/* The id is the running loop's only: before and after hw_reactor_run the
 * thread has none. */
static int stop_poller(void *arg)
{
	hw_reactor *r = arg;
	assert_int_equal(hw_reactor_current_id, 5);
	hw_reactor_stop(r);
	return 1;
}

static void test_current_id(void **st)
{
	(void)st;
	assert_int_equal(hw_reactor_current_id, HW_OWNER_ANY);
	hw_reactor_cfg rc = { .id = 5, .cpu = -1, .idle = HW_IDLE_BACKOFF };
	hw_reactor *r = hw_reactor_create(&rc);
	assert_non_null(r);
	assert_int_equal(hw_reactor_add_poller(r, "stop", stop_poller, NULL, r), 0);
	hw_reactor_run(r);
	assert_int_equal(hw_reactor_current_id, HW_OWNER_ANY);
	hw_reactor_destroy(r);
}

static int setup(void **st)
{
	(void)st;
	hw_rm_config c;
	hw_rm_config_defaults(&c);
	c.node_id = 1;
	c.open_store = open_store;
	c.owner_reactor = 0;
	if (hw_rm_create(&c, hw_clock_monotonic(), &null_net, &rm))
		return -1;
	snprintf(log_dir, sizeof log_dir, "/tmp/hw-owner-%d", (int)getpid());
	hw_log_config lc;
	hw_log_config_default(&lc);
	lc.owner_reactor = 0;
	if (hw_log_open(log_dir, &lc, &log_))
		return -1;
	int err;
	hw_udp_cfg uc = { .listen = "udp:127.0.0.1:0", .cluster_id = 1, .self_id = 1, .on_msg = on_msg,
			  .owner_reactor = 0 };
	if (!(udp = hw_udp_create(&uc, &err)))
		return -1;
	char eal[256];
	snprintf(eal, sizeof eal, "--no-huge -m 64 --no-pci --no-telemetry --file-prefix=hwo%d "
		 "--lcores=0@(0-%ld) --vdev=net_null0 --log-level=lib.eal:error", (int)getpid(),
		 sysconf(_SC_NPROCESSORS_ONLN) - 1);
	if (hw_dpdk_eal_init(eal))
		return -1;
	hw_dpdk_cfg dc = { .cluster_id = 1, .self_id = 1, .on_msg = on_msg, .n_mbufs = 1023,
			   .owner_reactor = 0 };
	if (!(dpdk = hw_dpdk_create(&dc, &err)))
		return -1;
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	hw_dpdk_destroy(dpdk);
	hw_dpdk_eal_cleanup();
	hw_udp_destroy(udp);
	hw_log_close(log_);
	hw_rm_destroy(rm);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", log_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_current_id),
		cmocka_unit_test(test_rm),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_dpdk),
	};
	return cmocka_run_group_tests(t, setup, teardown);
}
