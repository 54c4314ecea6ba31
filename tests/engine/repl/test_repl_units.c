/* test_repl_units.c — unit tests of the replication core's building blocks:
 * the purgatory (exactly-once completion, expiry, forced completion, watch
 * list compaction, the waking key's hint), the in-memory store against the
 * hw_store contract, the idempotent producer state rules, request
 * timing (hw_rm_set_req_observer) on a simulated 3-broker cluster, and
 * controller-epoch fencing of pushes and AlterPartition answers (hw_rm.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_batch.h"
#include "hw_err.h"
#include "hw_log.h"
#include "hw_log_clean.h"
#include "hw_logging.h"
#include "hw_memstore.h"
#include "hw_repl_int.h"
#include "hx.h"
#include "../../support/hw_test.h"

/* ---- purgatory ---------------------------------------------------------- */
typedef struct top {
	hw_dop op;
	int ready;
	int completions;
	int reason;
	int last_hint;
	int *freed;
} top;

static int t_try(hw_dop *op, int hint)
{
	top *t = (top *)op;
	t->last_hint = hint;
	return t->ready;
}
static void t_complete(hw_dop *op, int reason)
{
	top *t = (top *)op;
	t->completions++;
	t->reason = reason;
}
static void t_free(hw_dop *op) { (*((top *)op)->freed)++; }
static const hw_dop_ops t_ops = { t_try, t_complete, t_free };

static void test_purg_exactly_once(void **state)
{
	(void)state;
	hw_wheel *w = hw_wheel_create(1, 20, 0);
	hw_purg *p = hw_purg_create("t", w);
	hw_purg_key k1 = { 0 }, k2 = { 0 };
	hw_purg_key *keys[2] = { &k1, &k2 };
	int freed = 0;
	top a = { .freed = &freed }, b = { .freed = &freed }, c = { .freed = &freed };
	hw_dop_init(&a.op, &t_ops);
	hw_dop_init(&b.op, &t_ops);
	hw_dop_init(&c.op, &t_ops);

	/* satisfied at once: completes without watching */
	c.ready = 1;
	assert_int_equal(hw_purg_try_complete_else_watch(p, &c.op, 100, keys, 2), 1);
	assert_int_equal(c.completions, 1);
	assert_int_equal(c.reason, HW_DOP_SATISFIED);
	assert_int_equal(freed, 1);

	assert_int_equal(hw_purg_try_complete_else_watch(p, &a.op, 100, keys, 2), 0);
	assert_int_equal(hw_purg_try_complete_else_watch(p, &b.op, 50, keys, 2), 0);
	assert_int_equal(k1.n, 2);
	/* not ready: nothing completes; the hint names the key */
	assert_int_equal(hw_purg_check_and_complete(p, &k2), 0);
	assert_int_equal(a.last_hint, 1);
	a.ready = 1;
	assert_int_equal(hw_purg_check_and_complete(p, &k1), 1);
	assert_int_equal(a.last_hint, 0);
	assert_int_equal(a.completions, 1);
	assert_int_equal(k1.n, 1); /* a purged from k1 */
	/* completing again through the other key or by force: no second run */
	assert_int_equal(hw_purg_check_and_complete(p, &k2), 0);
	assert_int_equal(hw_purg_complete(p, &a.op, HW_DOP_FORCED), 0);
	assert_int_equal(a.completions, 1);
	assert_int_equal(freed, 2); /* a's last reference went with k2's compaction */

	/* b expires at 50, exactly once */
	assert_int_equal(hw_wheel_advance_to(w, 49), 0);
	assert_int_equal(b.completions, 0);
	hw_wheel_advance_to(w, 50);
	assert_int_equal(b.completions, 1);
	assert_int_equal(b.reason, HW_DOP_EXPIRED);
	hw_wheel_advance_to(w, 500);
	assert_int_equal(b.completions, 1);
	assert_int_equal(hw_purg_force_all(p, &k1), 0);

	hw_purg_stats st;
	hw_purg_get_stats(p, &st);
	assert_int_equal(st.created, 3);
	assert_int_equal(st.live, 0);
	assert_int_equal(st.completed[HW_DOP_SATISFIED], 2);
	assert_int_equal(st.completed[HW_DOP_EXPIRED], 1);
	hw_purg_key_release(p, &k1);
	hw_purg_key_release(p, &k2);
	assert_int_equal(freed, 3);
	hw_purg_destroy(p);
	hw_wheel_destroy(w);
}

static void test_purg_force_and_compaction(void **state)
{
	(void)state;
	hw_wheel *w = hw_wheel_create(1, 20, 0);
	hw_purg *p = hw_purg_create("t", w);
	hw_purg_key k = { 0 };
	hw_purg_key *keys[1] = { &k };
	int freed = 0;
	enum { N = 100 };
	top *ops = calloc(N, sizeof(*ops));
	for (int i = 0; i < N; i++) {
		ops[i].freed = &freed;
		hw_dop_init(&ops[i].op, &t_ops);
		assert_int_equal(hw_purg_try_complete_else_watch(p, &ops[i].op, 10 + i, keys, 1), 0);
		/* expire every op right away except the last few: the list must not
		 * grow beyond twice its live entries */
		if (i < N - 4)
			hw_purg_complete(p, &ops[i].op, HW_DOP_EXPIRED);
		assert_true(k.n <= 2 * 4 + 8);
	}
	assert_int_equal(hw_purg_force_all(p, &k), 4);
	for (int i = 0; i < N; i++)
		assert_int_equal(ops[i].completions, 1);
	assert_int_equal(ops[N - 1].reason, HW_DOP_FORCED);
	hw_wheel_advance_to(w, 1000); /* timers were cancelled */
	for (int i = 0; i < N; i++)
		assert_int_equal(ops[i].completions, 1);
	hw_purg_key_release(p, &k);
	assert_int_equal(freed, N);
	free(ops);
	hw_purg_destroy(p);
	hw_wheel_destroy(w);
}

/* ---- memstore ----------------------------------------------------------- */
static size_t mk_batch(uint8_t *buf, size_t cap, int64_t base, int32_t epoch, int n)
{
	hw_record_in r[8];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < n; i++) {
		r[i].value = "x";
		r[i].value_len = 1;
	}
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	s.base_offset = base;
	s.partition_leader_epoch = epoch;
	ssize_t len = hw_batch_build(buf, cap, &s, r, (size_t)n);
	assert_true(len > 0);
	return (size_t)len;
}

/* docs/compaction.md: a leader whose log is compacted refuses a batch with
 * a record without a key (INVALID_RECORD, nothing appended) and takes keyed
 * ones; an uncompacted log takes both. */
static void test_compacted_needs_keys(void **state)
{
	(void)state;
	for (int compact = 0; compact <= 1; compact++) {
		hx_opts o = { .nodes = 1, .seed = 7, .use_log = 1, .log_compact = compact };
		hx *h = hx_create(&o);
		int reps[1] = { 1 };
		hx_ctl_create(h, 0, reps, 1, 1);
		hx_run_quiet(h, 200);
		uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 3 });
		uint32_t k = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 3, .keyed = 1 });
		hx_run_quiet(h, 200);
		const hx_resp *r = hx_resp_get(h, c), *rk = hx_resp_get(h, k);
		assert_non_null(r);
		assert_non_null(rk);
		assert_int_equal(r->error, compact ? HW_ERR_INVALID_RECORD : HW_ERR_NONE);
		assert_int_equal(rk->error, HW_ERR_NONE);
		assert_int_equal(rk->base_offset, compact ? 0 : 3);
		hx_destroy(h);
	}
}

/* Regression (docs/compaction.md "Fillers"): a cleaned segment whose every
 * batch was dropped is one empty filler, and a store read never crosses a
 * segment, so consumer fetches from the log start were answered with a
 * lone filler each. librdkafka takes an answer without records for a batch
 * too large for its buffer: it doubles its fetch size, and after ten such
 * answers fails the partition ("Message at offset N might be too large to
 * fetch"; kcat failed so on __consumer_offsets in it_group). Now such a
 * read goes on into the next segments up to a batch with records. Also:
 * every answer is whole batches starting at the one holding the fetch
 * offset, before and after the clean, from a position (hint) the read
 * before the clean left. */
static void test_consumer_reads_past_filler_segments(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 1, .seed = 3, .use_log = 1, .log_compact = 1, .log_segment_bytes = 400 };
	hx *h = hx_create(&o);
	int reps[1] = { 1 };
	hx_ctl_create(h, 0, reps, 1, 1);
	hx_run_quiet(h, 200);
	const int nb = 30;
	for (int i = 0; i < nb; i++) {
		/* every batch rewrites keys k0..k2: only the last one's records stay */
		uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 3, .keyed = 1 });
		hx_run_quiet(h, 20);
		const hx_resp *r = hx_resp_get(h, c);
		assert_non_null(r);
		assert_int_equal(r->error, HW_ERR_NONE);
	}
	hw_store *s = hx_store(h, 1, 0);
	hw_log *log = hw_log_from_store(s);
	size_t segs_before = hw_log_segment_count(log);
	assert_true(segs_before >= 6);
	/* a read in the middle leaves the segment's position hint there */
	uint32_t c = hx_consume(h, 1, 0, 40, 0);
	hx_run_quiet(h, 50);
	const hx_resp *r = hx_resp_get(h, c);
	assert_non_null(r);
	assert_true(r->whole);
	assert_true(r->nrecords > 0);
	hw_log_clean_result res;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int rc = hw_log_clean(log, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, 3 * nb, 1, &res);
	assert_true(rc >= 0);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_CLEAN_RUNS) >= 1);
	/* at least two segments now hold nothing but a filler */
	int filler_segs = 0;
	for (size_t k = 0; k + 1 < hw_log_segment_count(log); k++) {
		hw_store_read rd;
		/* bounded by the next segment's base: that segment alone */
		assert_int_equal(hw_log_read(log, hw_log_segment_base(log, k), 1 << 20,
					     hw_log_segment_base(log, k + 1), &rd), 0);
		hw_batch_iter it;
		hw_batch_hdr hd;
		int recs = 0;
		hw_batch_iter_init(&it, rd.data, rd.len, HW_BATCH_V_COMPACTED);
		int n = 0;
		while (hw_batch_iter_next(&it, &hd, NULL) == 1)
			recs += hd.record_count, n++;
		assert_int_equal(it.rc, 0);
		assert_true(n >= 1);
		filler_segs += recs == 0 && rd.len > 0;
		hw_log_ref_release(rd.ref);
	}
	printf("# %zu -> %zu segment(s), %d of only fillers\n", segs_before, hw_log_segment_count(log),
	       filler_segs);
	assert_true(filler_segs >= 2);
	/* the same offset again after the swap: whole batches with records */
	c = hx_consume(h, 1, 0, 40, 0);
	hx_run_quiet(h, 50);
	r = hx_resp_get(h, c);
	assert_non_null(r);
	assert_int_equal(r->error, HW_ERR_NONE);
	assert_true(r->whole);
	assert_true(r->nrecords > 0);
	/* a consumer from the start: every answer has records, all three keys' latest */
	int64_t off = 0, hw = -1;
	int answers = 0, records = 0;
	while (off < 3 * nb && answers < 50) {
		c = hx_consume(h, 1, 0, off, 0);
		hx_run_quiet(h, 50);
		r = hx_resp_get(h, c);
		assert_non_null(r);
		assert_int_equal(r->error, HW_ERR_NONE);
		assert_true(r->whole);
		assert_true(r->nrecords > 0); /* never an answer of only empty batches */
		assert_true(r->first_offset <= off); /* from the batch holding off: no gap */
		assert_true(r->next_offset > off);
		records += r->nrecords;
		hw = r->hw;
		off = r->next_offset;
		answers++;
	}
	assert_int_equal(hw, 3 * nb);
	assert_int_equal(off, 3 * nb);
	/* the active segment is never cleaned: its batches all keep k0..k2 */
	assert_true(records >= 3 && records % 3 == 0 && records < 3 * nb);
	assert_true(hw_log_counter_get(log, HW_LOG_CTR_READS_PAST_EMPTY) >= 2);
	hx_destroy(h);
}

static void test_memstore_contract(void **state)
{
	(void)state;
	hw_store *s;
	assert_int_equal(hw_memstore_create(0, &s), 0);
	const hw_store_ops *o = s->ops;
	uint8_t b[4096];
	size_t l0 = mk_batch(b, sizeof(b), 0, 0, 3);
	size_t l1 = mk_batch(b + l0, sizeof(b) - l0, 3, 0, 2);
	size_t l2 = mk_batch(b + l0 + l1, sizeof(b) - l0 - l1, 5, 2, 1);
	assert_int_equal(o->append(s, b, l0 + l1 + l2), 0);
	assert_int_equal(o->log_end_offset(s), 6);
	assert_int_equal(o->durable_end_offset(s), 6);
	/* not contiguous / partial: rejected, store unchanged */
	assert_int_equal(o->append(s, b, l0), -EINVAL);
	uint8_t c[256];
	size_t lc = mk_batch(c, sizeof(c), 6, 2, 1);
	assert_int_equal(o->append(s, c, lc - 1), -EINVAL);
	assert_int_equal(o->log_end_offset(s), 6);
	/* epoch cache from the batches */
	const hw_epoch_cache *ec = o->epochs(s);
	assert_int_equal(ec->n, 2);
	assert_int_equal(ec->v[1].epoch, 2);
	assert_int_equal(ec->v[1].start_offset, 5);
	/* reads: whole batches from the one containing start, >= one batch */
	hw_store_read r;
	assert_int_equal(o->read(s, 4, 1, INT64_MAX, &r), 0);
	assert_int_equal(r.first_offset, 3);
	assert_int_equal(r.next_offset, 5);
	assert_int_equal(r.len, l1);
	assert_int_equal(o->read(s, 0, 1 << 20, 5, &r), 0); /* max_offset: nothing at/after 5 */
	assert_int_equal(r.next_offset, 5);
	assert_int_equal(r.len, l0 + l1);
	assert_int_equal(o->read(s, 0, 1 << 20, 4, &r), 0); /* straddling batch not returned */
	assert_int_equal(r.next_offset, 3);
	assert_int_equal(o->read(s, 6, 100, INT64_MAX, &r), 0);
	assert_int_equal(r.len, 0);
	assert_int_equal(o->read(s, 7, 100, INT64_MAX, &r), -ERANGE);
	/* truncation: to batch boundaries, epoch cache follows */
	assert_int_equal(o->truncate_to(s, 4), 0);
	assert_int_equal(o->log_end_offset(s), 3);
	assert_int_equal(o->epochs(s)->n, 1);
	/* an epoch assigned without data is dropped by truncate_to(LEO) */
	assert_int_equal(o->assign_epoch(s, 7, 3), 0);
	assert_int_equal(hw_epoch_latest(o->epochs(s)), 7);
	assert_int_equal(o->truncate_to(s, 3), 0);
	assert_int_equal(hw_epoch_latest(o->epochs(s)), 0);
	assert_int_equal(o->truncate_fully_and_start_at(s, 100), 0);
	assert_int_equal(o->log_start_offset(s), 100);
	assert_int_equal(o->log_end_offset(s), 100);
	assert_int_equal(o->read(s, 99, 100, INT64_MAX, &r), -ERANGE);
	hw_memstore_fail_appends(s, 1);
	size_t ld = mk_batch(c, sizeof(c), 100, 3, 1);
	assert_int_equal(o->append(s, c, ld), -EIO);
	assert_int_equal(o->append(s, c, ld), 0);
	assert_int_equal(o->log_end_offset(s), 101);
	o->close(s);
}

/* ---- idempotent producer state ------------------------------------------ */
static void test_pidmap_rules(void **state)
{
	(void)state;
	hw_pidmap m;
	hw_pidmap_init(&m);
	hw_pid_batch d;
	assert_int_equal(hw_pidmap_check(&m, 9, 0, 17, 20, &d), HW_PID_NEW); /* unknown: any seq */
	for (int i = 0; i < 7; i++)
		assert_int_equal(hw_pidmap_update(&m, 9, 0, i * 2, i * 2 + 1, 100 + i * 2, 101 + i * 2), 0);
	/* only the last 5 batches are remembered */
	assert_int_equal(hw_pidmap_check(&m, 9, 0, 0, 1, &d), HW_PID_OUT_OF_ORDER);
	assert_int_equal(hw_pidmap_check(&m, 9, 0, 4, 5, &d), HW_PID_DUPLICATE);
	assert_int_equal(d.first_off, 104);
	assert_int_equal(d.last_off, 105);
	assert_int_equal(hw_pidmap_check(&m, 9, 0, 14, 14, &d), HW_PID_NEW);
	assert_int_equal(hw_pidmap_check(&m, 9, 0, 15, 15, &d), HW_PID_OUT_OF_ORDER);
	assert_int_equal(hw_pidmap_check(&m, 9, 1, 0, 3, &d), HW_PID_NEW);
	assert_int_equal(hw_pidmap_check(&m, 9, 1, 1, 3, &d), HW_PID_OUT_OF_ORDER);
	assert_int_equal(hw_pidmap_update(&m, 9, 1, 0, 3, 200, 203), 0);
	assert_int_equal(hw_pidmap_check(&m, 9, 0, 14, 14, &d), HW_PID_INVALID_EPOCH);
	/* sequence wraps from INT32_MAX to 0 */
	assert_int_equal(hw_pidmap_update(&m, 5, 0, INT32_MAX - 1, INT32_MAX, 0, 1), 0);
	assert_int_equal(hw_pidmap_check(&m, 5, 0, 0, 0, &d), HW_PID_NEW);
	for (int64_t pid = 1000; pid < 1200; pid++) /* growth */
		assert_int_equal(hw_pidmap_update(&m, pid, 0, 0, 0, pid, pid), 0);
	assert_int_equal(hw_pidmap_check(&m, 1100, 0, 0, 0, &d), HW_PID_DUPLICATE);
	assert_int_equal(d.first_off, 1100);
	hw_pidmap_free(&m);
}

/* ---- config ----------------------------------------------------------------- */
static void test_config_kafka_names(void **state)
{
	(void)state;
	hw_rm_config c;
	hw_rm_config_defaults(&c);
	assert_int_equal(c.replica_lag_time_max_ms, 30000);
	assert_int_equal(c.replica_fetch_wait_max_ms, 500);
	assert_int_equal(c.replica_fetch_min_bytes, 1);
	assert_int_equal(c.replica_fetch_max_bytes, 1048576);
	assert_int_equal(c.replica_fetch_response_max_bytes, 10485760);
	assert_int_equal(c.replica_fetch_backoff_ms, 1000);
	assert_int_equal(c.message_max_bytes, 1048588);
	assert_int_equal(c.min_insync_replicas, 1);
	assert_int_equal(hw_rm_config_set(&c, "replica.lag.time.max.ms", 10000), 0);
	assert_int_equal(c.replica_lag_time_max_ms, 10000);
	assert_int_equal(hw_rm_config_set(&c, "no.such.config", 1), -ENOENT);
	assert_int_equal(hw_rm_config_set(&c, "min.insync.replicas", -1), -EINVAL);
	assert_string_equal(hw_part_role_name(HW_PART_LEADER), "LEADER");
	assert_string_equal(hw_fetcher_state_name(HW_FETCHER_TRUNCATING), "TRUNCATING");
	assert_string_equal(hw_part_metric_name(HW_PM_ISR_SHRINKS), "isr_shrinks");
	assert_string_equal(hw_part_role_name(99), "UNKNOWN_ROLE");
	assert_string_equal(hw_dop_reason_name(HW_DOP_EXPIRED), "EXPIRED");
}

/* ---- request timing ------------------------------------------------------ */
typedef struct treq {
	hw_rm_req_timing t[256];
	int n;
} treq;

static void treq_observe(void *ctx, const hw_rm_req_timing *t)
{
	treq *q = ctx;
	assert_true(q->n < 256);
	q->t[q->n++] = *t;
}

/* The last report of kind k since index from, or NULL. */
static const hw_rm_req_timing *treq_last(const treq *q, int from, int k)
{
	for (int i = q->n - 1; i >= from; i--)
		if (q->t[i].kind == k)
			return &q->t[i];
	return NULL;
}

static void check_order(const hw_rm_req_timing *t)
{
	assert_true(t->rx_ns <= t->start_ns);
	assert_true(t->start_ns <= t->parked_ns);
	assert_true(t->parked_ns <= t->ready_ns);
	assert_true(t->ready_ns <= t->sent_ns);
	if (!t->delayed)
		assert_true(t->parked_ns == t->ready_ns);
}

static void test_request_timing(void **state)
{
	(void)state;
	uint64_t seed = hw_test_seed("repl_units");
	hx_opts o = { .nodes = 3, .seed = seed };
	hx *h = hx_create(&o);
	assert_non_null(h);
	/* every message takes 1..3 virtual ms: an acks=all produce waits at
	 * least a follower's fetch response and its next fetch */
	hx_net_faults(h, 0, 0, 1, 3);
	const int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_until(h, 100);
	assert_int_equal(hx_ctl_leader(h, 0), 1);
	/* settle: the followers may start in fetch back-off (they can ask
	 * before the leader knows the partition); one acks=all gets through */
	uint32_t w = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 1 });
	hx_run_until(h, hx_now(h) + 3000);
	assert_non_null(hx_resp_get(h, w));
	assert_int_equal(hx_resp_get(h, w)->error, 0);
	treq q = { .n = 0 };
	hw_rm *rm = hx_rm(h, 1);
	hw_rm_set_req_observer(rm, treq_observe, &q);

	/* acks=1: answered in the handler, nothing remote */
	int from = q.n;
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 3 });
	hx_run_until(h, hx_now(h) + 500);
	assert_non_null(hx_resp_get(h, c));
	const hw_rm_req_timing *t = treq_last(&q, from, HW_RM_REQ_PRODUCE_ACKS1);
	assert_non_null(t);
	check_order(t);
	assert_false(t->delayed);
	assert_int_equal(t->error, 0);
	assert_string_equal(hw_rm_req_kind_request(t->kind), "Produce");
	assert_string_equal(hw_rm_req_kind_acks(t->kind), "1");

	/* acks=all: parked until the followers fetched; the wait is remote time */
	from = q.n;
	int64_t sent_ms = hx_now(h);
	c = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 2 });
	hx_run_until(h, hx_now(h) + 500);
	const hx_resp *r = hx_resp_get(h, c);
	assert_non_null(r);
	assert_int_equal(r->error, 0);
	int n_all = 0;
	for (int i = from; i < q.n; i++)
		n_all += q.t[i].kind == HW_RM_REQ_PRODUCE_ACKSALL;
	assert_int_equal(n_all, 1);
	t = treq_last(&q, from, HW_RM_REQ_PRODUCE_ACKSALL);
	check_order(t);
	assert_true(t->delayed);
	assert_true(t->ready_ns - t->parked_ns >= 2 * 1000000LL); /* two 1+ ms hops at least */
	assert_true(t->start_ns >= sent_ms * 1000000LL);
	assert_true(t->sent_ns <= r->at_ms * 1000000LL);
	assert_string_equal(hw_rm_req_kind_acks(t->kind), "all");
	/* the followers' fetches were timed too, as FetchFollower */
	t = treq_last(&q, from, HW_RM_REQ_FETCH_FOLLOWER);
	assert_non_null(t);
	check_order(t);
	assert_string_equal(hw_rm_req_kind_request(t->kind), "FetchFollower");

	/* acks=0: no response, still one report */
	from = q.n;
	hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 0, .nrec = 1 });
	hx_run_until(h, hx_now(h) + 500);
	t = treq_last(&q, from, HW_RM_REQ_PRODUCE_ACKS0);
	assert_non_null(t);
	check_order(t);
	assert_true(t->sent_ns == t->ready_ns);

	/* a consumer long poll at the HW: parked until max_wait (nothing new) */
	hw_rm_part_info pi;
	hx_info(h, 1, 0, &pi);
	from = q.n;
	c = hx_consume(h, 1, 0, pi.hw, 50);
	hx_run_until(h, hx_now(h) + 200);
	assert_non_null(hx_resp_get(h, c));
	t = treq_last(&q, from, HW_RM_REQ_FETCH_CONSUMER);
	assert_non_null(t);
	check_order(t);
	assert_true(t->delayed);
	assert_true(t->ready_ns - t->parked_ns >= 50 * 1000000LL);
	assert_string_equal(hw_rm_req_kind_request(t->kind), "Fetch");

	/* a produce to a follower: answered with the error, reported with it */
	from = q.n;
	treq q2 = { .n = 0 };
	hw_rm_set_req_observer(hx_rm(h, 2), treq_observe, &q2);
	hx_produce(h, &(hx_produce_req){ .node = 2, .part = 0, .acks = 1, .nrec = 1 });
	hx_run_until(h, hx_now(h) + 500);
	t = treq_last(&q2, 0, HW_RM_REQ_PRODUCE_ACKS1);
	assert_non_null(t);
	assert_int_equal(t->error, HW_ERR_NOT_LEADER_OR_FOLLOWER);
	hw_rm_set_req_observer(hx_rm(h, 2), NULL, NULL);

	/* cleared: nothing more is reported */
	hw_rm_set_req_observer(rm, NULL, NULL);
	int before = q.n;
	hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 1 });
	hx_run_until(h, hx_now(h) + 500);
	assert_int_equal(q.n, before);
	assert_string_equal(hw_rm_req_kind_name(HW_RM_REQ_KIND_MAX), "UNKNOWN_REQUEST");
	hx_destroy(h);
}

/* A one-broker harness with partition 0 of RF 1 created and settled;
 * *store is broker 1's store of it. */
static hx *one_replica(const hx_opts *o, hw_store **store)
{
	hx *h = hx_create(o);
	int reps[1] = { 1 };
	hx_ctl_create(h, 0, reps, 1, 1);
	hx_run_quiet(h, 100);
	*store = hx_store(h, 1, 0);
	assert_non_null(*store);
	return h;
}

/* Regression: acks=1 was answered as soon as the batch was in the store's
 * buffer, before the write (or, with fsync-before-ack, the fdatasync)
 * completed — a leader crash could lose an acknowledged record. Kafka
 * answers acks=1 after its synchronous append. The durable end is held
 * back here (a slow write): no acknowledgement, for acks=1 or acks=all,
 * until it catches up. */
static void test_acks1_waits_for_write(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 1, .seed = 1, .memstore = 1 };
	hw_store *s;
	hx *h = one_replica(&o, &s);
	hw_memstore_hold_durable(s, 1);
	uint32_t c1 = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 3 });
	uint32_t c2 = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = -1, .nrec = 2 });
	hx_run_quiet(h, 200);
	assert_int_equal(s->ops->log_end_offset(s), 5); /* appended ... */
	assert_int_equal(s->ops->durable_end_offset(s), 0); /* ... not written */
	assert_null(hx_resp_get(h, c1));
	assert_null(hx_resp_get(h, c2));
	hw_memstore_hold_durable(s, 0);
	hx_run_quiet(h, 200);
	const hx_resp *r1 = hx_resp_get(h, c1), *r2 = hx_resp_get(h, c2);
	assert_non_null(r1);
	assert_non_null(r2);
	assert_int_equal(r1->error, 0);
	assert_int_equal(r1->base_offset, 0);
	assert_int_equal(r2->error, 0);
	assert_int_equal(r2->base_offset, 3);
	/* durable already: acks=1 is answered at once, as before */
	uint32_t c3 = hx_produce(h, &(hx_produce_req){ .node = 1, .part = 0, .acks = 1, .nrec = 1 });
	hx_run_quiet(h, 10);
	assert_non_null(hx_resp_get(h, c3));
	hx_destroy(h);
}

/* Regression: hw_memstore's test knobs cast any store to a memstore; run
 * with HX_STORE=log, test_acks1_waits_for_write held back the "durable
 * end" of an io_uring log by writing into its struct. A knob on another
 * store now aborts (death test: a forked child, SIGABRT). */
static void test_memstore_knob_on_log_aborts(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 1, .seed = 2, .use_log = 1 };
	hw_store *s;
	hx *h = one_replica(&o, &s);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		hw_logging_configure("error");
		hw_memstore_hold_durable(s, 1);
		_exit(0); /* not reached: the knob must abort */
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	hx_destroy(h);
}

/* docs/kafka.md "DeleteTopics": a deleted topic's replicas stop at once —
 * the parked acks=all produce is answered UNKNOWN_TOPIC_OR_PARTITION, the
 * partition leaves every replica manager and its store is deleted; a new
 * produce gets UNKNOWN_TOPIC_OR_PARTITION; the other topic goes on. */
static void test_topic_deleted(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = 5 };
	hx *h = hx_create(&o);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_ctl_create(h, 1, reps, 3, 2);
	hx_run_quiet(h, 2000);
	int leader = hx_ctl_leader(h, 0);
	assert_true(leader >= 1);
	uint32_t ok0 = hx_produce(h, &(hx_produce_req){ .node = leader, .part = 0, .acks = -1, .nrec = 2 });
	hx_run_quiet(h, 2000);
	assert_non_null(hx_resp_get(h, ok0));
	assert_int_equal(hx_resp_get(h, ok0)->error, 0);
	/* the followers stop fetching: the next acks=all produce parks */
	for (int f = 1; f <= 3; f++)
		if (f != leader)
			hx_pause(h, f, 1);
	uint32_t parked = hx_produce(h, &(hx_produce_req){ .node = leader, .part = 0, .acks = -1, .nrec = 1 });
	hx_run_until(h, hx_now(h) + 50);
	assert_null(hx_resp_get(h, parked));
	for (int f = 1; f <= 3; f++)
		hx_pause(h, f, 0);
	assert_int_equal(hx_ctl_delete(h, 0), 0);
	hx_run_until(h, hx_now(h) + 50);
	const hx_resp *r = hx_resp_get(h, parked);
	assert_non_null(r);
	assert_int_equal(r->error, HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);
	for (int n = 1; n <= 3; n++) {
		hw_rm_part_info info;
		hx_info(h, n, 0, &info);
		assert_int_equal(info.replicas.n, 0); /* not there (hx_info zeroes) */
		assert_null(hx_store(h, n, 0));
		assert_non_null(hx_store(h, n, 1));
	}
	uint32_t late = hx_produce(h, &(hx_produce_req){ .node = leader, .part = 0, .acks = -1, .nrec = 1 });
	uint32_t other = hx_produce(h, &(hx_produce_req){ .node = hx_ctl_leader(h, 1), .part = 1, .acks = -1,
							 .nrec = 1 });
	hx_run_quiet(h, 2000);
	assert_int_equal(hx_resp_get(h, late)->error, HW_ERR_UNKNOWN_TOPIC_OR_PARTITION);
	assert_int_equal(hx_resp_get(h, other)->error, 0);
	int unanswered = 0;
	assert_int_equal(hx_answer_check(h, &unanswered), 0);
	assert_int_equal(unanswered, 0);
	hx_destroy(h);
}

/* docs/logdirs.md "Start-up: recovery and deleted logs": a topic deleted
 * and created again under its name while broker 3 was down. Its restart
 * recovers the old log (engine/broker, over the simulated disk), sees
 * another topic id in its partition.metadata and deletes it: broker 3
 * follows the new topic from an empty log and ends with the leader's bytes,
 * not the old topic's. */
static void test_recreated_topic_after_restart(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = 11 };
	hx *h = hx_create(&o);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 2000);
	int leader = hx_ctl_leader(h, 0);
	assert_true(leader == 1 || leader == 2);
	for (int i = 0; i < 3; i++) { /* the old topic: 2 + 4 + 4 records */
		uint32_t c = hx_produce(h, &(hx_produce_req){ .node = leader, .part = 0, .acks = -1,
							      .nrec = i ? 4 : 2 });
		hx_run_quiet(h, 2000);
		assert_int_equal(hx_resp_get(h, c)->error, 0);
	}
	assert_int_equal(hx_store(h, 3, 0)->ops->log_end_offset(hx_store(h, 3, 0)), 10);
	/* broker 3 is down (no traffic) while t0 is deleted and created again */
	hx_isolate(h, 3, 1);
	assert_int_equal(hx_ctl_delete(h, 0), 0);
	hx_run_quiet(h, 2000);
	hx_ctl_create(h, 0, reps, 3, 1);
	hx_run_quiet(h, 2000);
	leader = hx_ctl_leader(h, 0);
	assert_true(leader == 1 || leader == 2);
	uint32_t c = hx_produce(h, &(hx_produce_req){ .node = leader, .part = 0, .acks = 1, .nrec = 3 });
	hx_run_quiet(h, 2000);
	assert_int_equal(hx_resp_get(h, c)->error, 0);
	/* broker 3 starts again: its old t0-0 log is recovered, then refused */
	hx_isolate(h, 3, 0);
	hx_restart(h, 3);
	hx_run_until(h, hx_now(h) + 20000);
	hw_store *s3 = hx_store(h, 3, 0);
	assert_non_null(s3);
	assert_int_equal(s3->ops->log_end_offset(s3), 3);
	size_t ll = 0, fl = 0;
	uint8_t *ld = hx_read_all(h, leader, 0, INT64_MAX, &ll);
	uint8_t *fd = hx_read_all(h, 3, 0, INT64_MAX, &fl);
	assert_true(ll > 0);
	assert_int_equal(fl, ll);
	assert_memory_equal(fd, ld, ll);
	free(ld);
	free(fd);
	hx_destroy(h);
}

/* docs/controller-ha.md "Fencing a zombie": once a broker has seen
 * controller epoch 2, a push or an AlterPartition answer of epoch 1 is
 * dropped and counted, however new its partition epoch; epoch 2 and 3 pass. */
static void test_controller_epoch_fencing(void **state)
{
	(void)state;
	hx_opts o = { .nodes = 3, .seed = 1 };
	hx *h = hx_create(&o);
	int reps[3] = { 1, 2, 3 };
	hx_ctl_create(h, 0, reps, 3, 2);
	hx_run_quiet(h, 200);
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_PARTITION_STATE;
	m.src = HX_CTL;
	m.dst = 2;
	m.u.pstate = *hx_ctl_state(h, 0);
	int32_t pe = m.u.pstate.partition_epoch;
	m.u.pstate.partition_epoch = pe + 1;
	m.u.pstate.controller_epoch = 2;
	hx_send_raw(h, &m);
	hx_run_quiet(h, 50);
	hw_rm_stats st;
	hw_rm_get_stats(hx_rm(h, 2), &st);
	assert_int_equal(st.controller_epoch, 2);
	assert_int_equal(st.stale_controller_pushes, 0);
	hw_rm_part_info pi;
	hx_info(h, 2, 0, &pi);
	assert_int_equal(pi.partition_epoch, pe + 1);

	/* a zombie of epoch 1 shrinks the ISR with a much newer partition epoch */
	m.u.pstate.controller_epoch = 1;
	m.u.pstate.partition_epoch = pe + 10;
	m.u.pstate.isr.n = 2;
	hx_send_raw(h, &m);
	hx_run_quiet(h, 50);
	hw_rm_get_stats(hx_rm(h, 2), &st);
	assert_int_equal(st.stale_controller_pushes, 1);
	hx_info(h, 2, 0, &pi);
	assert_int_equal(pi.partition_epoch, pe + 1); /* not applied */
	assert_int_equal(pi.replicas.n, 3);

	hw_msg a;
	memset(&a, 0, sizeof(a));
	a.type = HW_MSG_ALTER_PARTITION_RESP;
	a.src = HX_CTL;
	a.dst = 2;
	a.u.alter_resp.tp = m.u.pstate.tp;
	a.u.alter_resp.error = HW_ERR_NONE;
	a.u.alter_resp.controller_epoch = 1;
	hx_send_raw(h, &a);
	hx_run_quiet(h, 50);
	hw_rm_get_stats(hx_rm(h, 2), &st);
	assert_int_equal(st.stale_controller_alter_resps, 1);

	/* a newer controller (epoch 3) is followed */
	m.u.pstate.controller_epoch = 3;
	m.u.pstate.partition_epoch = pe + 2;
	m.u.pstate.isr = hx_ctl_state(h, 0)->isr;
	hx_send_raw(h, &m);
	hx_run_quiet(h, 50);
	hw_rm_get_stats(hx_rm(h, 2), &st);
	assert_int_equal(st.controller_epoch, 3);
	assert_int_equal(st.stale_controller_pushes, 1);
	hx_info(h, 2, 0, &pi);
	assert_int_equal(pi.partition_epoch, pe + 2);
	hx_destroy(h);
}

int main(void)
{
	if (!getenv("HW_LOG"))
		hw_logging_configure("warn");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_purg_exactly_once),
		cmocka_unit_test(test_purg_force_and_compaction),
		cmocka_unit_test(test_memstore_contract),
		cmocka_unit_test(test_compacted_needs_keys),
		cmocka_unit_test(test_pidmap_rules),
		cmocka_unit_test(test_config_kafka_names),
		cmocka_unit_test(test_request_timing),
		cmocka_unit_test(test_acks1_waits_for_write),
		cmocka_unit_test(test_memstore_knob_on_log_aborts),
		cmocka_unit_test(test_controller_epoch_fencing),
		cmocka_unit_test(test_topic_deleted),
		cmocka_unit_test(test_recreated_topic_after_restart),
		cmocka_unit_test(test_consumer_reads_past_filler_segments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
