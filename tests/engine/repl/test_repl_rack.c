/* test_repl_rack.c — fetching from the closest replica (docs/racks.md
 * "Fetching from the closest replica") in the deterministic harness: three
 * brokers in racks a, b, c with RackAwareReplicaSelector. A consumer in
 * rack b is sent by the leader to the rack-b follower, which serves it
 * only below its own high watermark even when its log holds more (the
 * rack-c follower, cut off from the leader, holds the HW back), and after
 * the ISR shrinks its HW moves and so does what it serves. Cut off itself
 * and removed from the ISR, the follower answers NOT_LEADER_OR_FOLLOWER
 * and the leader stops redirecting there; a fetch with an old leader epoch
 * is fenced; without a rack (or with the default selector) nothing
 * changes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "hx.h"
#include "hw_batch.h"
#include "hw_err.h"

#define CONSUMER 200   /* pseudo node the raw fetches come from */

static const char *const RACK[4] = { "", "a", "b", "c" };

static void rack_tweak(int node, hw_rm_config *c, void *arg)
{
	int selector = *(const int *)arg;
	snprintf(c->rack, sizeof c->rack, "%s", RACK[node]);
	c->replica_selector = selector;
	c->replica_lag_time_max_ms = 1000;
}

static hx *world(int selector)
{
	static int sel;
	sel = selector;
	hx_opts o = { .nodes = 3, .seed = 7, .tweak = rack_tweak, .arg = &sel };
	hx *h = hx_create(&o);
	for (int n = 1; n <= 3; n++)
		for (int b = 1; b <= 3; b++)
			assert_int_equal(hw_rm_set_broker_rack(hx_rm(h, n), b, RACK[b]), 0);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 500);
	assert_int_equal(hx_ctl_leader(h, 0), 1);
	return h;
}

typedef struct answer {
	int16_t error;
	int64_t hw;
	int32_t preferred;        /* -1 none */
	int64_t first, next;      /* records [first, next); first = next: none */
} answer;

static uint32_t corr = 1;

/* Send one consumer fetch of partition 0 at offset from rack `rack` to
 * node, parked up to max_wait_ms. Returns its correlation id. */
static uint32_t fetch_send(hx *h, int node, const char *rack, int64_t offset, int32_t leader_epoch,
			   int32_t max_wait_ms)
{
	hw_fetch_part fp = { .tp = { 1, 0 }, .fetch_offset = offset, .current_leader_epoch = leader_epoch,
			     .last_fetched_epoch = -1, .log_start_offset = -1, .partition_max_bytes = 1 << 20 };
	hw_msg m = { .type = HW_MSG_FETCH, .src = CONSUMER, .dst = node, .correlation_id = ++corr };
	m.u.fetch = (hw_fetch_req){ .replica_id = -1, .replica_epoch = -1, .max_wait_ms = max_wait_ms,
				    .min_bytes = 1, .max_bytes = 1 << 20, .n_parts = 1, .parts = &fp };
	snprintf(m.u.fetch.rack_id, sizeof m.u.fetch.rack_id, "%s", rack);
	hx_send_raw(h, &m);
	return corr;
}

/* One consumer fetch of partition 0 at offset from rack `rack` to node. */
static answer fetch(hx *h, int node, const char *rack, int64_t offset, int32_t leader_epoch)
{
	fetch_send(h, node, rack, offset, leader_epoch, 0);
	hx_run_until(h, hx_now(h) + 5);
	const hw_msg *r = hx_last_to(h, CONSUMER, HW_MSG_FETCH_RESP);
	assert_non_null(r);
	assert_int_equal(r->correlation_id, corr);
	assert_int_equal(r->u.fetch_resp.n_parts, 1);
	const hw_fetch_resp_part *p = &r->u.fetch_resp.parts[0];
	answer a = { .error = p->error, .hw = p->high_watermark, .preferred = -1, .first = offset, .next = offset };
	for (int i = 0; i < r->u.fetch_resp.n_preferred; i++)
		a.preferred = r->u.fetch_resp.preferred[i].replica;
	hw_batch_iter it;
	hw_batch_hdr bh;
	hw_batch_iter_init(&it, p->records, p->records_len, HW_BATCH_V_CRC);
	int first = 1;
	while (hw_batch_iter_next(&it, &bh, NULL) == 1) {
		if (first)
			a.first = bh.base_offset;
		first = 0;
		a.next = bh.base_offset + bh.last_offset_delta + 1;
	}
	return a;
}

/* acks=all to the leader, then 600 ms of virtual time: the followers
 * learn the new HW with their next fetch (answered at its max wait at the
 * latest) */
static void produce(hx *h, int nrec)
{
	hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = nrec, .timeout_ms = 30000 });
	hx_run_until(h, hx_now(h) + 600);
}

static void test_follower_serves_below_its_hw(void **state)
{
	(void)state;
	hx *h = world(HW_RM_SELECTOR_RACK_AWARE);
	produce(h, 10);

	/* the leader (rack a) sends a rack-b consumer to broker 2 */
	answer a = fetch(h, 1, "b", 0, -1);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_int_equal(a.preferred, 2);
	assert_true(a.next == a.first);                  /* no records with the redirect */
	/* a rack-a consumer, one without a rack: served by the leader */
	a = fetch(h, 1, "a", 0, -1);
	assert_int_equal(a.preferred, -1);
	assert_int_equal(a.next, 10);
	a = fetch(h, 1, "", 0, -1);
	assert_int_equal(a.preferred, -1);
	assert_int_equal(a.next, 10);
	/* without a rack a follower still refuses consumers (as before) */
	assert_int_equal(fetch(h, 2, "", 0, -1).error, HW_ERR_NOT_LEADER_OR_FOLLOWER);

	/* the follower serves everything below its HW */
	a = fetch(h, 2, "b", 0, -1);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_int_equal(a.hw, 10);
	assert_int_equal(a.first, 0);
	assert_int_equal(a.next, 10);

	/* broker 3 cut off from the leader: it stays in the ISR for
	 * replica.lag.time.max.ms and holds the HW at 10, while broker 2
	 * replicates 10 more records */
	hx_net_cut(h, 1, 3, 1);
	produce(h, 10);
	hw_rm_part_info pi;
	hx_info(h, 2, 0, &pi);
	assert_int_equal(pi.leo, 20);
	assert_int_equal(pi.hw, 10);
	a = fetch(h, 2, "b", 0, -1);
	assert_int_equal(a.next, 10);                    /* never above its HW */
	a = fetch(h, 2, "b", 10, -1);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_true(a.next == a.first);                  /* in (HW, LEO]: empty */
	assert_int_equal(a.hw, 10);

	/* the ISR shrinks to {1, 2}: the HW moves, the follower learns it */
	hx_run_until(h, hx_now(h) + 3000);
	assert_int_equal(hx_ctl_state(h, 0)->isr.n, 2);
	a = fetch(h, 2, "b", 10, -1);
	assert_int_equal(a.error, HW_ERR_NONE);
	assert_int_equal(a.hw, 20);
	assert_int_equal(a.first, 10);
	assert_int_equal(a.next, 20);
	/* a consumer fetch parked on the follower (max wait 5 s) is answered
	 * as soon as the follower's HW moves, not at its max wait */
	uint32_t c = fetch_send(h, 2, "b", 20, -1, 5000);
	hx_run_until(h, hx_now(h) + 5);
	const hw_msg *r = hx_last_to(h, CONSUMER, HW_MSG_FETCH_RESP);
	assert_true(!r || r->correlation_id != c);      /* parked */
	int64_t sent = hx_now(h);
	hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 5, .timeout_ms = 30000 });
	for (int i = 0; i < 100 && (!(r = hx_last_to(h, CONSUMER, HW_MSG_FETCH_RESP)) || r->correlation_id != c); i++)
		hx_run_until(h, hx_now(h) + 10);
	assert_non_null(r);
	assert_int_equal(r->correlation_id, c);
	assert_true(hx_now(h) - sent < 1000);           /* the follower fetch max wait is 500 ms */
	assert_int_equal(r->u.fetch_resp.parts[0].high_watermark, 25);
	assert_true(r->u.fetch_resp.parts[0].records_len > 0);
	hw_rm_part_info fi;
	hx_info(h, 2, 0, &fi);
	assert_true(fi.metrics[HW_PM_CONSUMER_FETCHES_AS_FOLLOWER] >= 4);
	hx_info(h, 1, 0, &pi);
	assert_int_equal(pi.metrics[HW_PM_PREFERRED_READ_REPLICA], 1);
	assert_int_equal(pi.metrics[HW_PM_CONSUMER_FETCHES_AS_FOLLOWER], 0);
	hx_destroy(h);
}

static void test_back_to_the_leader(void **state)
{
	(void)state;
	hx *h = world(HW_RM_SELECTOR_RACK_AWARE);
	produce(h, 5);
	int32_t epoch = hx_ctl_state(h, 0)->leader_epoch;
	assert_int_equal(fetch(h, 1, "b", 0, epoch).preferred, 2);
	assert_int_equal(fetch(h, 2, "b", 0, epoch).next, 5);

	/* broker 2 falls out of the ISR (cut off while records arrive; Kafka
	 * drops only a follower behind the leader's LEO): it refuses, the
	 * leader serves */
	hx_net_cut(h, 1, 2, 1);
	produce(h, 5);
	hx_run_until(h, hx_now(h) + 3000);
	assert_false(hw_idset_has(&hx_ctl_state(h, 0)->isr, 2));
	assert_int_equal(fetch(h, 2, "b", 0, epoch).error, HW_ERR_NOT_LEADER_OR_FOLLOWER);
	answer a = fetch(h, 1, "b", 0, epoch);
	assert_int_equal(a.preferred, -1);
	assert_int_equal(a.next, 10);
	hx_net_cut(h, 1, 2, 0);
	for (int i = 0; i < 20 && !hw_idset_has(&hx_ctl_state(h, 0)->isr, 2); i++)
		hx_run_until(h, hx_now(h) + 500);
	assert_true(hw_idset_has(&hx_ctl_state(h, 0)->isr, 2));
	assert_int_equal(fetch(h, 1, "b", 0, epoch).preferred, 2);

	/* a new leader (the real controller moves leadership when it fences
	 * broker 1: broker 2, the next replica): the old epoch is fenced on
	 * the replicas, and the new leader redirects a rack-c consumer to
	 * the rack-c follower */
	hx_ctl_fence(h, 1);
	hx_run_quiet(h, 500);
	assert_int_equal(hx_ctl_leader(h, 0), 2);
	int32_t now_epoch = hx_ctl_state(h, 0)->leader_epoch;
	assert_true(now_epoch > epoch);
	assert_int_equal(fetch(h, 2, "b", 0, epoch).error, HW_ERR_FENCED_LEADER_EPOCH);
	assert_int_equal(fetch(h, 3, "c", 0, epoch).error, HW_ERR_FENCED_LEADER_EPOCH);
	assert_int_equal(fetch(h, 2, "c", 0, now_epoch).preferred, 3);
	hx_destroy(h);
}

static void test_default_selector_leader_only(void **state)
{
	(void)state;
	hx *h = world(HW_RM_SELECTOR_LEADER);
	produce(h, 3);
	answer a = fetch(h, 1, "b", 0, -1);
	assert_int_equal(a.preferred, -1);
	assert_int_equal(a.next, 3);
	/* a follower still serves a client that names its rack and came on
	 * its own (Kafka: any Fetch v11+ consumer) */
	assert_int_equal(fetch(h, 2, "b", 0, -1).next, 3);
	hx_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_follower_serves_below_its_hw),
		cmocka_unit_test(test_back_to_the_leader),
		cmocka_unit_test(test_default_selector_leader_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
