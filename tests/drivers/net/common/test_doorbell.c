/* test_doorbell.c — the memif doorbell's no-lost-wakeup property on a real
 * reactor thread: a BACKOFF reactor whose sleep cap is 10 s (so only the
 * doorbell can end a sleep in time) consumes a shared "ring" (a counter the
 * sender bumps, standing in for the memif ring); the sender publishes,
 * rings, and must see every item consumed within 2 s, thousands of times,
 * with random pauses so the reactor is caught in every phase (spinning,
 * arming, re-polling, asleep). Also: a peer that is not up is not rung, and
 * bad arguments are refused. Seeded by HW_TEST_SEED. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_doorbell.h"
#include "hw_reactor.h"
#include "../../../support/hw_test.h"

static uint64_t seed;
static char dir[64];

typedef struct mailbox {
	uint64_t posted;   /* written by the sender (release) */
	uint64_t seen;     /* written by the reactor (release) */
} mailbox;

static int mailbox_poll(void *arg)
{
	mailbox *m = arg;
	/* acquire: pairs with the sender's release of `posted` */
	uint64_t p = __atomic_load_n(&m->posted, __ATOMIC_ACQUIRE);
	if (p == m->seen)
		return 0;
	/* release: the sender waits on `seen` */
	__atomic_store_n(&m->seen, p, __ATOMIC_RELEASE);
	return 1;
}

static int arm(void *arg)
{
	hw_doorbell_set_sleeping(arg, 1);
	return 0;
}

static void disarm(void *arg)
{
	hw_doorbell_set_sleeping(arg, 0);
}

static uint64_t rnd(void) { return hw_test_rand(); }

static void test_no_lost_wakeup(void **st)
{
	(void)st;
	int err = 0;
	hw_doorbell *tx = hw_doorbell_open(dir, 1, &err);
	hw_doorbell *rx = hw_doorbell_open(dir, 2, &err);
	assert_non_null(tx);
	assert_non_null(rx);
	static mailbox m;
	hw_reactor_cfg cfg = { .id = 9, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_iters = 1, .spin_us = 1,
			       .sleep_min_us = 10000000, .sleep_max_us = 10000000 };
	hw_reactor *r = hw_reactor_create(&cfg);
	assert_non_null(r);
	assert_int_equal(hw_reactor_add_poller(r, "mailbox", mailbox_poll, NULL, &m), 0);
	assert_int_equal(hw_reactor_add_wait_fd(r, hw_doorbell_fd(rx), 0, arm, disarm, rx), 0);
	assert_int_equal(hw_reactor_start(r), 0);
	const int iters = 2000;
	int lost = 0;
	for (int i = 1; i <= iters && !lost; i++) {
		uint64_t pause = rnd() % 4;
		if (pause == 1) {
			struct timespec d = { 0, (long)(rnd() % 200000) };
			nanosleep(&d, NULL);   /* reactor likely asleep */
		} else if (pause == 2) {
			for (volatile uint64_t k = rnd() % 20000; k; k--)
				;                  /* reactor likely arming/re-polling */
		}
		/* release: the "packet" is published before the ring's fence */
		__atomic_store_n(&m.posted, (uint64_t)i, __ATOMIC_RELEASE);
		int rc = hw_doorbell_ring(tx, 2);
		assert_true(rc >= 0);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* acquire: pairs with the reactor's release of `seen` */
		while (__atomic_load_n(&m.seen, __ATOMIC_ACQUIRE) != (uint64_t)i) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if ((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec) > 2000000000LL) {
				fprintf(stderr, "lost wakeup at item %d\n", i);
				lost = 1;
				break;
			}
		}
	}
	hw_reactor_stats s;
	hw_reactor_get_stats(r, &s);
	const hw_doorbell_stats *bs = hw_doorbell_get_stats(tx);
	printf("# %d items: %llu rings, %llu skipped (peer awake), reactor slept %llu times, %llu wakeups\n",
	       iters, (unsigned long long)bs->rings, (unsigned long long)bs->skipped,
	       (unsigned long long)s.sleeps, (unsigned long long)s.wakeups);
	hw_reactor_destroy(r);
	assert_false(lost);
	/* the sleeping path was exercised, not just the awake one */
	assert_true(bs->rings > 0);
	assert_true(s.wakeups > 0);
	assert_int_equal(bs->ring_errors, 0);
	hw_doorbell_close(tx);
	hw_doorbell_close(rx);
}

static void test_absent_peer_and_errors(void **st)
{
	(void)st;
	int err = 0;
	assert_null(hw_doorbell_open(NULL, 1, &err));
	assert_int_equal(err, -EINVAL);
	assert_null(hw_doorbell_open(dir, -1, &err));
	assert_int_equal(err, -EINVAL);
	char longdir[200];
	memset(longdir, 'x', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = 0;
	assert_null(hw_doorbell_open(longdir, 1, &err));
	assert_int_equal(err, -ENAMETOOLONG);
	hw_doorbell *a = hw_doorbell_open(dir, 5, &err);
	assert_non_null(a);
	/* node 6 is not up: nothing mapped, not rung */
	assert_int_equal(hw_doorbell_ring(a, 6), 0);
	assert_true(hw_doorbell_get_stats(a)->unmapped >= 1);
	/* node 6 comes up asleep: mapped on a later try (retry after 100 ms) */
	hw_doorbell *b = hw_doorbell_open(dir, 6, &err);
	assert_non_null(b);
	hw_doorbell_set_sleeping(b, 1);
	usleep(120000);
	assert_int_equal(hw_doorbell_ring(a, 6), 1);
	hw_doorbell_set_sleeping(b, 0);   /* drains */
	assert_int_equal(hw_doorbell_get_stats(b)->received, 1);
	assert_int_equal(hw_doorbell_ring(a, 6), 0);   /* awake: not rung */
	hw_doorbell_close(b);
	hw_doorbell_close(a);
}

/* Regression: a peer that goes away and comes back under the same node id
 * (every `hiwater bench` run reuses a client slot) creates a new flag file;
 * a sender that kept the old file mapped read a flag nobody wrote and never
 * rang the new process again, so the bench client woke only on its 1 ms
 * sleep cap for every produce response. */
static void test_peer_restart(void **st)
{
	(void)st;
	int err = 0;
	hw_doorbell *a = hw_doorbell_open(dir, 7, &err);
	hw_doorbell *b = hw_doorbell_open(dir, 8, &err);
	assert_non_null(a);
	assert_non_null(b);
	hw_doorbell_set_sleeping(b, 1);
	assert_int_equal(hw_doorbell_ring(a, 8), 1); /* mapped now */
	hw_doorbell_set_sleeping(b, 0);
	/* clean restart: close, then a new process opens node 8 and sleeps */
	hw_doorbell_close(b);
	b = hw_doorbell_open(dir, 8, &err);
	assert_non_null(b);
	hw_doorbell_set_sleeping(b, 1);
	assert_int_equal(hw_doorbell_ring(a, 8), 1);
	assert_true(hw_doorbell_get_stats(a)->remaps >= 1);
	hw_doorbell_set_sleeping(b, 0);
	assert_int_equal(hw_doorbell_get_stats(b)->received, 1);
	/* crash restart: the old process never closes (SIGKILL); its files
	 * stay; the new one replaces them */
	uint64_t remaps = hw_doorbell_get_stats(a)->remaps;
	hw_doorbell *c = hw_doorbell_open(dir, 8, &err); /* b is the "dead" one */
	assert_non_null(c);
	hw_doorbell_set_sleeping(c, 1);
	assert_int_equal(hw_doorbell_ring(a, 8), 1);
	assert_int_equal(hw_doorbell_get_stats(a)->remaps, remaps + 1);
	hw_doorbell_set_sleeping(c, 0);
	assert_int_equal(hw_doorbell_get_stats(c)->received, 1);
	hw_doorbell_close(c);
	/* b's files are gone already (c replaced them); closing b must not
	 * disturb anything of c's either: c is closed, so just free b */
	hw_doorbell_close(b);
	hw_doorbell_close(a);
}

static int readable(const hw_doorbell *b)
{
	struct pollfd pfd = { .fd = hw_doorbell_fd(b), .events = POLLIN };
	return poll(&pfd, 1, 0) == 1;
}

/* One doorbell per (node, queue): ringing queue 1 of a node wakes only the
 * reactor sleeping on that queue's bell, and a restart of one queue's bell
 * (retired marker) re-maps that bell only. */
static void test_per_queue(void **st)
{
	(void)st;
	int err = 0;
	hw_doorbell *q0 = hw_doorbell_open_queue(dir, 9, 0, &err);
	hw_doorbell *q1 = hw_doorbell_open_queue(dir, 9, 1, &err);
	hw_doorbell *a = hw_doorbell_open_queue(dir, 10, 1, &err);
	assert_non_null(q0);
	assert_non_null(q1);
	assert_non_null(a);
	char path[128];
	snprintf(path, sizeof(path), "%s/bell-9-q1.sock", dir);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/bell-9.sock", dir);   /* queue 0 keeps the one-queue name */
	assert_int_equal(access(path, F_OK), 0);
	hw_doorbell_set_sleeping(q0, 1);
	hw_doorbell_set_sleeping(q1, 1);
	assert_int_equal(hw_doorbell_ring_queue(a, 9, 1), 1);
	assert_true(readable(q1));
	assert_false(readable(q0));
	hw_doorbell_set_sleeping(q1, 0);
	assert_false(readable(q1));
	assert_int_equal(hw_doorbell_ring_queue(a, 9, 1), 0);   /* awake now: skipped */
	assert_int_equal(hw_doorbell_ring_queue(a, 9, 0), 1);
	assert_true(readable(q0));
	hw_doorbell_set_sleeping(q0, 0);
	/* queue 1's reactor restarts after a crash: only its bell is re-mapped */
	uint64_t remaps = hw_doorbell_get_stats(a)->remaps;
	hw_doorbell *n1 = hw_doorbell_open_queue(dir, 9, 1, &err);
	assert_non_null(n1);
	hw_doorbell_set_sleeping(n1, 1);
	hw_doorbell_set_sleeping(q0, 1);
	assert_int_equal(hw_doorbell_ring_queue(a, 9, 1), 1);
	assert_int_equal(hw_doorbell_get_stats(a)->remaps, remaps + 1);
	assert_true(readable(n1));
	assert_int_equal(hw_doorbell_ring_queue(a, 9, 0), 1);
	assert_int_equal(hw_doorbell_get_stats(a)->remaps, remaps + 1);
	hw_doorbell_set_sleeping(n1, 0);
	hw_doorbell_set_sleeping(q0, 0);
	assert_int_equal(hw_doorbell_get_stats(n1)->received, 1);
	assert_int_equal(hw_doorbell_get_stats(q0)->received, 2);
	hw_doorbell_close(n1);
	hw_doorbell_close(q1);
	hw_doorbell_close(q0);
	hw_doorbell_close(a);
}

int main(void)
{
	seed = hw_test_seed_init("test_doorbell");
	if (hw_test_tmpdir(dir, sizeof(dir), "bell") < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_lost_wakeup),
		cmocka_unit_test(test_absent_peer_and_errors),
		cmocka_unit_test(test_peer_restart),
		cmocka_unit_test(test_per_queue),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	hw_test_rmtree(dir);
	return rc;
}
