/* test_mailbox.c — the cross-reactor mailbox (lib/reactor/hw_mailbox.h) and
 * hiwaterd's partition -> reactor function (apps/hiwaterd/hwd_shard_of.h).
 *
 * - shard function: in range, deterministic, consecutive partitions go
 *   round-robin, topics are offset by their id, no overflow near UINT32_MAX,
 *   a whole round of partitions is exactly balanced;
 * - mailbox by hand: FIFO per sender, a full ring refuses (and the sender
 *   keeps the message), counters, bad arguments, destroy frees what is left;
 * - mailbox on real threads: three BACKOFF reactors with a 1 s sleep cap and
 *   no deadlines; two producers post bursts to a consumer after pauses long
 *   enough for it to fall asleep. Each burst must arrive in order and within
 *   500 ms — a lost wake-up would leave it waiting for the 1 s cap.
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
#include <cmocka.h>
#include "hw_mailbox.h"
#include "hw_reactor.h"
#include "hwd_shard_of.h"
#include "../../support/hw_test.h"

static uint64_t seed;
static uint64_t rnd(void) { return hw_test_rand(); }

static void test_shard_of(void **st)
{
	(void)st;
	for (int iter = 0; iter < 2000; iter++) {
		int n = 1 + (int)(rnd() % 8);
		uint32_t t = (uint32_t)rnd();
		if (iter % 10 == 0)
			t = UINT32_MAX - (uint32_t)(rnd() % 4);   /* overflow corner */
		uint32_t p = (uint32_t)(rnd() % 100000);
		int s = hwd_shard_of(t, p, n);
		assert_true(s >= 0 && s < n);
		assert_int_equal(s, hwd_shard_of(t, p, n));               /* deterministic */
		assert_int_equal(hwd_shard_of(t, p + 1, n), (s + 1) % n);   /* round-robin */
		if (t < UINT32_MAX)
			assert_int_equal(hwd_shard_of(t + 1, p, n), hwd_shard_of(t, p + 1, n));
		/* a round of n consecutive partitions: one on each reactor */
		int seen[8] = { 0 };
		for (int k = 0; k < n; k++)
			seen[hwd_shard_of(t, p + (uint32_t)k, n)]++;
		for (int k = 0; k < n; k++)
			assert_int_equal(seen[k], 1);
	}
	assert_int_equal(hwd_shard_of(7, 9, 1), 0);
	assert_int_equal(hwd_shard_of(7, 9, 0), 0);
	assert_int_equal(hwd_shard_of(0, 5, 2), 1);
	assert_int_equal(hwd_shard_of(1, 5, 2), 0);
}

static int freed;
static void count_free(void *m)
{
	(void)m;
	freed++;
}

typedef struct got {
	int from[64];
	uintptr_t val[64];
	int n;
} got;

static void collect(void *ctx, int from, void *msg)
{
	got *g = ctx;
	g->from[g->n] = from;
	g->val[g->n] = (uintptr_t)msg;
	g->n++;
}

static void test_mailbox_by_hand(void **st)
{
	(void)st;
	hw_mailbox *mb;
	assert_int_equal(hw_mailbox_create(0, 4, &mb), -EINVAL);
	assert_int_equal(hw_mailbox_create(3, 3, &mb), -EINVAL);          /* not a power of two */
	assert_int_equal(hw_mailbox_create(HW_MAILBOX_MAX + 1, 4, &mb), -EINVAL);
	assert_int_equal(hw_mailbox_create(3, 4, &mb), 0);
	assert_int_equal(hw_mailbox_size(mb), 3);
	assert_int_equal(hw_mailbox_post(mb, 1, 1, (void *)1), -EINVAL);  /* to itself */
	assert_int_equal(hw_mailbox_post(mb, 0, 3, (void *)1), -EINVAL);
	assert_int_equal(hw_mailbox_post(mb, 0, 1, NULL), -EINVAL);
	/* 0 -> 1 fills its ring of 4; 2 -> 1 has its own ring */
	uintptr_t base = 1 + rnd() % 1000;
	for (uintptr_t i = 0; i < 4; i++)
		assert_int_equal(hw_mailbox_post(mb, 0, 1, (void *)(base + i)), 0);
	assert_int_equal(hw_mailbox_post(mb, 0, 1, (void *)(base + 4)), -ENOBUFS);
	assert_int_equal(hw_mailbox_post(mb, 2, 1, (void *)(base + 100)), 0);
	hw_mailbox_stats s;
	hw_mailbox_get_stats(mb, 1, &s);
	assert_int_equal(s.posted, 5);
	assert_int_equal(s.full, 1);
	assert_int_equal(s.queued, 5);
	/* a bounded drain takes 3, the rest come next time, FIFO per sender */
	got g = { .n = 0 };
	assert_int_equal(hw_mailbox_drain(mb, 1, collect, &g, 3), 3);
	assert_int_equal(hw_mailbox_drain(mb, 1, collect, &g, 0), 2);
	assert_int_equal(hw_mailbox_drain(mb, 1, collect, &g, 0), 0);
	assert_int_equal(g.n, 5);
	uintptr_t next0 = base;
	int from2 = 0;
	for (int i = 0; i < g.n; i++) {
		if (g.from[i] == 0) {
			assert_int_equal(g.val[i], next0);
			next0++;
		} else {
			assert_int_equal(g.from[i], 2);
			assert_int_equal(g.val[i], base + 100);
			from2++;
		}
	}
	assert_int_equal(next0, base + 4);
	assert_int_equal(from2, 1);
	hw_mailbox_get_stats(mb, 1, &s);
	assert_int_equal(s.received, 5);
	assert_int_equal(s.queued, 0);
	/* the ring has room again; leftovers are handed to free at destroy */
	assert_int_equal(hw_mailbox_post(mb, 0, 1, (void *)(base + 4)), 0);
	assert_int_equal(hw_mailbox_post(mb, 1, 0, (void *)(base + 5)), 0);
	freed = 0;
	hw_mailbox_destroy(mb, count_free);
	assert_int_equal(freed, 2);
}

/* ---- on real reactors ----------------------------------------------------- */

#define BURSTS 12

typedef struct producer {
	hw_mailbox *mb;
	int idx;
	int bursts_done;
	int64_t next_ns;
	uint32_t burst_len;
	uintptr_t next_val;
	volatile int *go;           /* burst number the consumer asks for */
} producer;

typedef struct consumer {
	hw_mailbox *mb;
	uintptr_t expect[3];
	uint64_t received;
	int bad_order;
	int64_t burst_sent_ns;      /* written by the test thread */
} consumer;

static int producer_poll(void *arg)
{
	producer *p = arg;
	/* acquire: pairs with the test thread's release of go */
	int go = __atomic_load_n(p->go, __ATOMIC_ACQUIRE);
	if (p->bursts_done >= go)
		return 0;
	for (uint32_t i = 0; i < p->burst_len; i++) {
		while (hw_mailbox_post(p->mb, p->idx, 0, (void *)p->next_val) == -ENOBUFS)
			;   /* consumer drains; never lose a test message */
		p->next_val++;
	}
	p->bursts_done++;
	return (int)p->burst_len;
}

static void consume(void *ctx, int from, void *msg)
{
	consumer *c = ctx;
	uintptr_t v = (uintptr_t)msg;
	if (v != c->expect[from])
		c->bad_order = 1;
	c->expect[from] = v + 1;
	/* release: the test thread reads the count after the order check */
	__atomic_store_n(&c->received, c->received + 1, __ATOMIC_RELEASE);
}

static int consumer_poll(void *arg)
{
	consumer *c = arg;
	return hw_mailbox_drain(c->mb, 0, consume, c, 64);
}

static int64_t now_ns(void) { return hw_reactor_now_ns(); }

static void test_mailbox_threads(void **st)
{
	(void)st;
	hw_mailbox *mb;
	assert_int_equal(hw_mailbox_create(3, 16, &mb), 0);
	hw_reactor *r[3];
	for (int i = 0; i < 3; i++) {
		/* a 1 s sleep cap and no deadlines: only a wake ends a sleep early */
		hw_reactor_cfg c = { .id = i, .cpu = -1, .idle = HW_IDLE_BACKOFF, .spin_us = 50,
				     .sleep_min_us = 1000000, .sleep_max_us = 1000000 };
		r[i] = hw_reactor_create(&c);
		assert_non_null(r[i]);
		assert_int_equal(hw_mailbox_attach(mb, i, r[i]), 0);
	}
	volatile int go = 0;
	consumer c = { .mb = mb };
	producer p[2];
	for (int i = 0; i < 2; i++) {
		p[i] = (producer){ .mb = mb, .idx = i + 1, .burst_len = 1 + (uint32_t)(rnd() % 100),
				   .next_val = 1 + 1000000u * (uintptr_t)(i + 1), .go = &go };
		c.expect[i + 1] = p[i].next_val;
		assert_int_equal(hw_reactor_add_poller(r[i + 1], "producer", producer_poll, NULL, &p[i]), 0);
	}
	assert_int_equal(hw_reactor_add_poller(r[0], "mailbox", consumer_poll, NULL, &c), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(hw_reactor_start(r[i]), 0);
	uint64_t want = 0;
	int64_t worst = 0;
	for (int b = 1; b <= BURSTS; b++) {
		/* let every reactor fall asleep (spin window 50 us) */
		usleep(3000 + (useconds_t)(rnd() % 3000));
		want += p[0].burst_len + p[1].burst_len;
		int64_t t0 = now_ns();
		/* release: the producers read go with acquire */
		__atomic_store_n(&go, b, __ATOMIC_RELEASE);
		hw_reactor_wake(r[1]);
		hw_reactor_wake(r[2]);
		/* acquire: pairs with the consumer's release of received */
		while (__atomic_load_n(&c.received, __ATOMIC_ACQUIRE) < want && now_ns() - t0 < 3000000000LL)
			usleep(200);
		int64_t took = now_ns() - t0;
		if (took > worst)
			worst = took;
		assert_int_equal(__atomic_load_n(&c.received, __ATOMIC_ACQUIRE), want);
	}
	for (int i = 0; i < 3; i++) {
		hw_reactor_stop(r[i]);
		hw_reactor_join(r[i]);
	}
	hw_reactor_stats rs;
	hw_reactor_get_stats(r[0], &rs);
	print_message("mailbox: %llu messages in %d bursts, worst burst %.2f ms, consumer slept %llu times, "
		      "woken %llu\n", (unsigned long long)want, BURSTS, (double)worst / 1e6,
		      (unsigned long long)rs.sleeps, (unsigned long long)rs.wakeups);
	assert_false(c.bad_order);
	assert_true(rs.sleeps > 0);          /* the consumer did sleep between bursts */
	assert_true(rs.wakeups > 0);         /* and was woken by the posts */
	assert_true(worst < 500000000LL);    /* no burst waited for the 1 s cap */
	hw_mailbox_stats ms;
	hw_mailbox_get_stats(mb, 0, &ms);
	assert_int_equal(ms.received, want);
	assert_int_equal(ms.queued, 0);
	for (int i = 0; i < 3; i++)
		hw_reactor_destroy(r[i]);
	hw_mailbox_destroy(mb, NULL);
}

int main(void)
{
	seed = hw_test_seed_init("test_mailbox");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shard_of),
		cmocka_unit_test(test_mailbox_by_hand),
		cmocka_unit_test(test_mailbox_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
