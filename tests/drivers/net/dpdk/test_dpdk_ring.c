/* test_dpdk_ring.c — zero-copy TX of fetch-response records on a DPDK port
 * that carries mbuf chains as they are (net_ring: a loopback ring, single
 * process, --no-huge). The records of a split fetch response are attached as
 * external buffers holding a reference (hw_dpdk_cfg.ref_ops); the frames come
 * back as chains, are linearised, decoded and checked, and every hold is
 * released when the mbufs are freed. Copied-path multi-segment frames are
 * checked too. Seeded by HW_TEST_SEED. */
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
#include "hw_dpdk.h"
#include "hw_reactor.h"
#include "dpdk_test_common.h"
#include "../../../support/hw_test.h"

#define SELF 1
#define CLUSTER 5151u

static uint64_t seed;
static long holds, max_holds, released;
static uint8_t *got;
static size_t got_len, got_cap;
static int frames, produces;

static void zc_hold(void *ref)
{
	(void)ref;
	holds++;
	if (holds > max_holds)
		max_holds = holds;
}

static void zc_release(void *ref)
{
	(void)ref;
	holds--;
	released++;
}

static void on_msg(void *ctx, const hw_msg *m)
{
	(void)ctx;
	if (m->type == HW_MSG_FETCH_RESP) {
		frames++;
		for (int i = 0; i < m->u.fetch_resp.n_parts; i++) {
			const hw_fetch_resp_part *p = &m->u.fetch_resp.parts[i];
			if (got_len + p->records_len <= got_cap)
				memcpy(got + got_len, p->records, p->records_len);
			got_len += p->records_len;
		}
	} else if (m->type == HW_MSG_PRODUCE) {
		assert_int_equal(dt_check_batches(m->u.produce.records, m->u.produce.records_len,
						  (uint64_t)m->correlation_id), 0);
		produces++;
	}
}

static void test_zero_copy_loopback(void **st)
{
	(void)st;
	char args[256];
	snprintf(args, sizeof args, "--no-huge -m 128 --no-pci --no-telemetry --file-prefix=hwr%d --lcores=0@(0-%ld) "
		 "--vdev=net_ring0", (int)getpid(), sysconf(_SC_NPROCESSORS_ONLN) - 1);
	int rc = hw_dpdk_eal_init(args);
	if (rc)
		fail_msg("EAL init: %s", strerror(-rc));
	hw_dpdk_cfg cfg = { .cluster_id = CLUSTER, .self_id = SELF, .on_msg = on_msg,
			    .ref_ops = { zc_hold, zc_release } };
	int err;
	hw_dpdk *dp = hw_dpdk_create(&cfg, &err);
	if (!dp)
		fail_msg("hw_dpdk_create: %s", strerror(-err));
	assert_int_equal(hw_dpdk_add_neighbour(dp, SELF, "dpdk:port=net_ring0"), 0);

	/* copied multi-segment produce frames */
	static uint8_t recs[60000];
	for (uint32_t i = 0; i < 5; i++) {
		size_t n = dt_make_batches(recs, 5000 + (size_t)(dt_next(&seed) % 50000), 900 + i);
		hw_msg m;
		memset(&m, 0, sizeof m);
		m.type = HW_MSG_PRODUCE;
		m.src = SELF;
		m.dst = SELF;
		m.correlation_id = 900 + i;
		m.u.produce = (hw_produce_req){ .acks = HW_ACKS_ALL, .timeout_ms = 1000, .tp = { 1, 0 }, .records = recs, .records_len = (uint32_t)n };
		assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
	}
	for (int i = 0; i < 100 && produces < 5; i++)
		hw_dpdk_poll(dp);
	assert_int_equal(produces, 5);
	const hw_dpdk_stats *s = hw_dpdk_get_stats(dp);
	assert_true(s->tx_segments > s->tx_packets);
	uint64_t copied0 = s->tx_bytes_copied;

	/* zero-copy fetch response */
	size_t cap = 300000 + (size_t)(dt_next(&seed) % 100000);
	uint8_t *log = malloc(cap);
	size_t len = dt_make_batches(log, cap, 77);
	got_cap = len;
	got = malloc(got_cap);
	hw_fetch_resp_part p;
	memset(&p, 0, sizeof p);
	p.tp = (hw_tp){ 1, 0 };
	p.high_watermark = 5;
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
	assert_int_equal(hw_net_send(hw_dpdk_net(dp), &m), 0);
	assert_true(max_holds >= 1);
	for (int i = 0; i < 100 && got_len < len; i++)
		hw_dpdk_poll(dp);
	print_message("zero-copy: %zu record bytes in %d frames; by reference %llu, copied %llu; holds max %ld released %ld\n",
		      len, frames, (unsigned long long)s->tx_bytes_zero_copy,
		      (unsigned long long)(s->tx_bytes_copied - copied0), max_holds, released);
	assert_int_equal(got_len, len);
	assert_int_equal(dt_check_batches(got, got_len, 77), 0);
	assert_true(frames >= (int)(len / HW_WIRE_MAX_FRAME) + 1);
	assert_int_equal(s->tx_bytes_zero_copy, len);
	/* headers only: well under 1% of the records */
	assert_true((s->tx_bytes_copied - copied0) * 100 < len);
	/* every hold taken for an external buffer was released when the
	 * received chain was freed */
	assert_int_equal(holds, 0);
	assert_true(released >= frames);
	assert_int_equal(s->rx_linearized_bytes > 0, 1);

	hw_dpdk_destroy(dp);
	hw_dpdk_eal_cleanup();
	free(log);
	free(got);
}

int main(void)
{
	seed = hw_test_seed("test_dpdk_ring");
	seed = seed * 2654435761u + 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_copy_loopback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
