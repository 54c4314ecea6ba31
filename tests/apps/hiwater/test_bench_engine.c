/* test_bench_engine.c — the `hiwater bench` engine against an in-process
 * model of a partition leader (suite 'cli').
 *
 * The model is deliberately small but keeps the rules the engine relies
 * on: offsets assigned in append order, the idempotent producer's
 * duplicate detection (last 5 batches) and OUT_OF_ORDER_SEQUENCE_NUMBER,
 * consumer fetches served below the high watermark. It can drop requests
 * and responses at random, delay answers, and stall (answer nothing) for a
 * window — the situations the engine's retries, verify and
 * coordinated-omission accounting exist for. Time is real (the engine reads
 * CLOCK_MONOTONIC), so runs are kept to a few hundred milliseconds.
 */
#include <errno.h>
#include <pthread.h>
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

#include "hw_batch.h"
#include "hw_bench.h"
#include "hw_err.h"
#include "../../support/hw_test.h"

#define MODEL_PARTS 4
#define MODEL_Q 65536

typedef struct model_resp {
	int64_t due;
	hw_bench_resp r;
	uint32_t rec_off, rec_len;
} model_resp;

typedef struct model_part {
	uint8_t *log;
	size_t len, cap;
	int64_t next_offset;
	/* idempotence: one producer per test partition stream is enough to
	 * model; keyed by pid with the last 5 batches */
	int64_t pid;
	int32_t next_seq;
	struct { int32_t first, last; int64_t base; } recent[5];
	int n_recent;
} model_part;

typedef struct model {
	hw_rng rng;
	int64_t delay_ns;
	double drop_req, drop_resp;
	int64_t stall_from, stall_to;    /* answers due inside are held until stall_to */
	int no_dedup;                    /* append duplicates (a broken broker) */
	int64_t lose_offset;             /* >= 0: the record at this offset vanishes from fetches */
	int owner;                       /* >= 0: m_poll delivers only producer `owner`'s
					  * answers (fetch answers: producer 0) */
	/* lose_seq >= 0: the first produce request of partition lose_part with
	 * that base sequence vanishes (a datagram the kernel dropped) */
	uint32_t lose_part;
	int32_t lose_seq;
	int lose_done;
	/* late_seq >= 0: the first produce request of partition late_part with
	 * that base sequence reaches the leader only after the next produce
	 * request (overtaken on the way) */
	uint32_t late_part;
	int32_t late_seq;
	int late_done;
	uint8_t *late_rec;
	uint32_t late_len, late_corr;
	int16_t late_acks;
	int64_t oosn_extra_ns;           /* OUT_OF_ORDER_SEQUENCE_NUMBER answers take
					  * this much longer than the others */
	int16_t gap_error;               /* answer a sequence gap with this retriable
					  * code instead (0: OUT_OF_ORDER_SEQUENCE_NUMBER) */
	model_part part[MODEL_PARTS];
	model_resp q[MODEL_Q];
	int nq;
	uint64_t produced_batches, dropped;
} model;

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void enqueue(model *m, const hw_bench_resp *r, uint32_t rec_off, uint32_t rec_len)
{
	if (m->nq == MODEL_Q)
		return;
	int64_t due = mono() + m->delay_ns;
	if (r->error == HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER)
		due += m->oosn_extra_ns;
	if (due >= m->stall_from && due < m->stall_to)
		due = m->stall_to;
	m->q[m->nq++] = (model_resp){.due = due, .r = *r, .rec_off = rec_off, .rec_len = rec_len};
}

/* The leader's handling of one produce request that reached it. */
static void m_apply_produce(model *m, uint32_t p, int16_t acks, const uint8_t *rec, uint32_t len,
			    uint32_t corr)
{
	hw_batch_hdr h;
	assert_int_equal(hw_batch_validate(rec, len, &h, HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT), 0);
	model_part *mp = &m->part[p];
	hw_bench_resp r = {.kind = HW_BENCH_PRODUCE, .correlation_id = corr, .partition = p};
	int32_t last = h.base_sequence + h.last_offset_delta;
	if (h.producer_id >= 0 && !m->no_dedup) {
		if (mp->pid != h.producer_id) {
			mp->pid = h.producer_id;
			mp->next_seq = h.base_sequence; /* no state: any sequence */
			mp->n_recent = 0;
		}
		for (int i = 0; i < mp->n_recent; i++)
			if (mp->recent[i].first == h.base_sequence && mp->recent[i].last == last) {
				r.base_offset = mp->recent[i].base;
				if (acks)
					enqueue(m, &r, 0, 0);
				return;
			}
		if (h.base_sequence != mp->next_seq) {
			r.error = m->gap_error ? m->gap_error : HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
			r.base_offset = -1;
			if (acks)
				enqueue(m, &r, 0, 0);
			return;
		}
	}
	if (mp->len + len > mp->cap) {
		mp->cap = (mp->len + len) * 2;
		mp->log = realloc(mp->log, mp->cap);
		assert_non_null(mp->log);
	}
	memcpy(mp->log + mp->len, rec, len);
	hw_batch_set_base_offset(mp->log + mp->len, mp->next_offset);
	mp->len += len;
	r.base_offset = mp->next_offset;
	mp->next_offset += h.record_count;
	m->produced_batches++;
	if (h.producer_id >= 0) {
		mp->next_seq = last + 1;
		if (mp->n_recent == 5)
			memmove(&mp->recent[0], &mp->recent[1], 4 * sizeof(mp->recent[0]));
		else
			mp->n_recent++;
		mp->recent[mp->n_recent - 1].first = h.base_sequence;
		mp->recent[mp->n_recent - 1].last = last;
		mp->recent[mp->n_recent - 1].base = r.base_offset;
	}
	if (acks)
		enqueue(m, &r, 0, 0);
}

static int m_send_produce(void *ctx, uint32_t p, int16_t acks, int32_t tmo, const uint8_t *rec,
			  uint32_t len, uint32_t corr)
{
	model *m = ctx;
	(void)tmo;
	assert_true(p < MODEL_PARTS);
	if (hw_rng_unit(&m->rng) < m->drop_req) {
		m->dropped++;
		return 0;
	}
	int32_t base_seq = len >= HW_BATCH_OFF_RECORDS ? (int32_t)hw_be32_get(rec + HW_BATCH_OFF_BASE_SEQ) : -1;
	if (m->lose_seq >= 0 && !m->lose_done && p == m->lose_part && base_seq == m->lose_seq) {
		m->lose_done = 1;
		m->dropped++;
		return 0;
	}
	if (m->late_seq >= 0 && !m->late_done && p == m->late_part && base_seq == m->late_seq) {
		m->late_done = 1;
		m->late_rec = malloc(len);
		assert_non_null(m->late_rec);
		memcpy(m->late_rec, rec, len);
		m->late_len = len;
		m->late_corr = corr;
		m->late_acks = acks;
		return 0;
	}
	m_apply_produce(m, p, acks, rec, len, corr);
	if (m->late_rec) {
		uint8_t *late = m->late_rec;
		m->late_rec = NULL;
		m_apply_produce(m, m->late_part, m->late_acks, late, m->late_len, m->late_corr);
		free(late);
	}
	return 0;
}

static int m_send_fetch(void *ctx, uint32_t p, int64_t offset, int32_t max_bytes, uint32_t corr)
{
	model *m = ctx;
	if (hw_rng_unit(&m->rng) < m->drop_req) {
		m->dropped++;
		return 0;
	}
	model_part *mp = &m->part[p];
	hw_bench_resp r = {.kind = HW_BENCH_FETCH, .correlation_id = corr, .partition = p,
			   .high_watermark = mp->next_offset};
	/* Whole batches from the one holding offset, at least one, up to max_bytes. */
	hw_batch_iter it;
	hw_batch_hdr h;
	const uint8_t *b;
	hw_batch_iter_init(&it, mp->log, mp->len, 0);
	uint32_t from = 0, to = 0;
	int started = 0;
	while (hw_batch_iter_next(&it, &h, &b) == 1) {
		if (!started) {
			if (hw_batch_next_offset(&h) <= offset)
				continue;
			started = 1;
			from = (uint32_t)(b - mp->log);
			to = from + h.size;
			continue;
		}
		if ((int64_t)(to - from) + h.size > max_bytes)
			break;
		to += h.size;
	}
	enqueue(m, &r, from, to - from);
	return 0;
}

static int resp_owned(const model *m, const hw_bench_resp *r)
{
	if (m->owner < 0)
		return 1;
	int p = r->kind == HW_BENCH_FETCH ? 0 : (int)(r->correlation_id >> HW_BENCH_CORR_PRODUCER_SHIFT);
	return p == m->owner;
}

static int m_poll(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	model *m = ctx;
	int64_t now = mono(), deadline = now + timeout_ns;
	int n = 0;
	for (;;) {
		int64_t earliest = INT64_MAX;
		for (int i = 0; i < m->nq;) {
			if (m->q[i].due <= now && resp_owned(m, &m->q[i].r)) {
				model_resp x = m->q[i];
				m->q[i] = m->q[--m->nq];
				if (hw_rng_unit(&m->rng) < m->drop_resp) {
					m->dropped++;
					continue;
				}
				uint8_t *copy = NULL;
				if (x.r.kind == HW_BENCH_FETCH) {
					model_part *mp = &m->part[x.r.partition];
					copy = malloc(x.rec_len + 1);
					if (x.rec_len)
						memcpy(copy, mp->log + x.rec_off, x.rec_len);
					/* lose_offset: blank the record's value pattern so it no
					 * longer parses as ours (a "lost" record). */
					if (m->lose_offset >= 0) {
						hw_batch_iter it;
						hw_batch_hdr h;
						const uint8_t *b;
						hw_batch_iter_init(&it, copy, x.rec_len, 0);
						while (hw_batch_iter_next(&it, &h, &b) == 1) {
							if (m->lose_offset < h.base_offset ||
							    m->lose_offset > hw_batch_last_offset(&h))
								continue;
							hw_record_iter ri;
							hw_record rec;
							hw_record_iter_init(&ri, b, h.size, 0);
							while (hw_record_iter_next(&ri, &rec) == 1)
								if (rec.offset == m->lose_offset)
									memset((uint8_t *)rec.value, 'X', 8);
							hw_batch_update_crc((uint8_t *)b, h.size);
						}
					}
					x.r.records = copy;
					x.r.records_len = x.rec_len;
				}
				fn(arg, &x.r);
				free(copy);
				n++;
				continue;
			}
			if (m->q[i].due < earliest)
				earliest = m->q[i].due;
			i++;
		}
		if (n || now >= deadline)
			return n;
		int64_t until = earliest < deadline ? earliest : deadline;
		if (until > now) {
			struct timespec d = {0, until - now > 200000 ? 200000 : until - now};
			nanosleep(&d, NULL);
		}
		now = mono();
	}
}

static model *model_new(uint64_t seed)
{
	model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	m->rng.s = seed;
	m->delay_ns = 50000;
	m->lose_offset = -1;
	m->owner = -1;
	m->lose_seq = m->late_seq = -1;
	for (int i = 0; i < MODEL_PARTS; i++)
		m->part[i].pid = -2;
	return m;
}

static void model_free(model *m)
{
	free(m->late_rec);
	for (int i = 0; i < MODEL_PARTS; i++)
		free(m->part[i].log);
	free(m);
}

static hw_bench_io model_io(model *m)
{
	return (hw_bench_io){.ctx = m, .send_produce = m_send_produce, .send_fetch = m_send_fetch,
			     .poll = m_poll};
}

static uint64_t g_seed;

static void base_cfg(hw_bench_cfg *c)
{
	hw_bench_cfg_defaults(c);
	c->record_size = 100;
	c->batch_size = 8;
	c->partitions = 2;
	c->rate = 20000;
	c->duration_ns = 300000000;
	c->warmup_ns = 50000000;
	c->progress = 0;
	c->request_timeout_ns = 20000000;
	c->retry_backoff_ns = 1000000;
	c->drain_timeout_ns = 3000000000LL;
	c->seed = g_seed;
}

/* ---- one model shared by producer threads (hw_bench_run_multi) ----------
 * Each producer's io locks the model; its poll delivers only that
 * producer's answers (owner), as hw_client's endpoints do; the "all" io
 * (owner -1) delivers everything. */
typedef struct shared_view {
	model *m;
	pthread_mutex_t *mu;
	int owner;
} shared_view;

static int sv_send_produce(void *ctx, uint32_t p, int16_t acks, int32_t tmo, const uint8_t *rec,
			   uint32_t len, uint32_t corr)
{
	shared_view *v = ctx;
	pthread_mutex_lock(v->mu);
	int rc = m_send_produce(v->m, p, acks, tmo, rec, len, corr);
	pthread_mutex_unlock(v->mu);
	return rc;
}

static int sv_send_fetch(void *ctx, uint32_t p, int64_t offset, int32_t max_bytes, uint32_t corr)
{
	shared_view *v = ctx;
	pthread_mutex_lock(v->mu);
	int rc = m_send_fetch(v->m, p, offset, max_bytes, corr);
	pthread_mutex_unlock(v->mu);
	return rc;
}

static int sv_poll(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	shared_view *v = ctx;
	int64_t deadline = mono() + timeout_ns;
	for (;;) {
		pthread_mutex_lock(v->mu);
		v->m->owner = v->owner;
		int n = m_poll(v->m, 0, fn, arg);
		pthread_mutex_unlock(v->mu);
		if (n || mono() >= deadline)
			return n;
		struct timespec d = {0, 50000};
		nanosleep(&d, NULL);
	}
}

/* Producer threads over one model: each producer's share of the open loop
 * and its acknowledgements are its own, the merged result covers all of
 * them, --verify and --end-to-end see every producer's records. */
static void run_shared(hw_bench_cfg *c, hw_bench_result *r)
{
	model *m = model_new(g_seed);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	shared_view views[4], all = {.m = m, .mu = &mu, .owner = -1};
	hw_bench_io ios[4], all_io = {.ctx = &all, .send_produce = sv_send_produce,
				      .send_fetch = sv_send_fetch, .poll = sv_poll};
	hw_bench_io *pio[4];
	assert_true(c->producers <= 4);
	for (int p = 0; p < c->producers; p++) {
		views[p] = (shared_view){.m = m, .mu = &mu, .owner = p};
		ios[p] = (hw_bench_io){.ctx = &views[p], .send_produce = sv_send_produce,
				       .send_fetch = sv_send_fetch, .poll = sv_poll};
		pio[p] = &ios[p];
	}
	assert_int_equal(hw_bench_run_multi(c, pio, &all_io, NULL, r), 0);
	model_free(m);
}

static void test_multi_producers_open_loop(void **state)
{
	(void)state;
	hw_bench_cfg c;
	base_cfg(&c);
	c.producers = 3;
	c.verify = 1;
	c.end_to_end = 1;
	/* no resends: the model keeps idempotence state for one producer per
	 * partition, so a resend by another producer would not be deduplicated */
	c.request_timeout_ns = 2000000000LL;
	hw_bench_result r;
	run_shared(&c, &r);
	uint64_t expect = (uint64_t)((double)c.rate * (double)(c.duration_ns + c.warmup_ns) / 1e9);
	assert_true(r.sent_records >= expect - 3 && r.sent_records <= expect + 3);
	assert_int_equal(r.acked_records, r.sent_records);
	assert_int_equal(r.failed_records, 0);
	assert_int_equal(r.n_producers, 3);
	uint64_t sum = 0;
	for (int p = 0; p < 3; p++) {
		/* record k belongs to producer k mod 3: shares differ by at most 1 */
		assert_true(r.producer_acked[p] + 1 >= r.acked_records / 3 &&
			    r.producer_acked[p] <= r.acked_records / 3 + 1);
		sum += r.producer_acked[p];
	}
	assert_int_equal(sum, r.acked_records);
	assert_true(hw_hist_count(r.lat) >= r.measured_records * 9 / 10);
	assert_int_equal(r.verified, 1);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost + r.verify_dup + r.verify_misplaced + r.verify_corrupt, 0);
	/* the consumer counts every producer's records, not only producer 0's */
	assert_true(hw_hist_count(r.e2e) >= hw_hist_count(r.lat) * 9 / 10);
	hw_bench_result_free(&r);
}

static void test_multi_producers_closed_loop(void **state)
{
	(void)state;
	hw_bench_cfg c;
	base_cfg(&c);
	c.producers = 2;
	c.closed_loop = 1;
	c.inflight = 2;
	c.verify = 1;
	c.duration_ns = 150000000;
	c.request_timeout_ns = 2000000000LL;
	hw_bench_result r;
	run_shared(&c, &r);
	assert_int_equal(r.failed_records, 0);
	assert_true(r.producer_acked[0] > 0 && r.producer_acked[1] > 0);
	assert_int_equal(r.producer_acked[0] + r.producer_acked[1], r.acked_records);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost + r.verify_dup + r.verify_misplaced + r.verify_corrupt, 0);
	hw_bench_result_free(&r);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_value_roundtrip(void **state)
{
	(void)state;
	uint8_t v[200];
	hw_bench_fill_value(v, sizeof(v), 0x1234567890ull, 7, 99, 123456789);
	uint64_t pid;
	uint32_t part, seq;
	int64_t t;
	assert_int_equal(hw_bench_parse_value(v, sizeof(v), &pid, &part, &seq, &t), 0);
	assert_true(pid == 0x1234567890ull && part == 7 && seq == 99 && t == 123456789);
	v[150] ^= 1;
	assert_int_equal(hw_bench_parse_value(v, sizeof(v), &pid, &part, &seq, &t), -EBADMSG);
	v[0] = 'X';
	assert_int_equal(hw_bench_parse_value(v, sizeof(v), &pid, &part, &seq, &t), -EINVAL);
	assert_int_equal(hw_bench_parse_value(v, 10, &pid, &part, &seq, &t), -EINVAL);
	/* values longer than the pattern's 256-byte period (filled by
	 * copying the first period): every byte still checked */
	static uint8_t big[16411];
	for (uint32_t s = 0; s < 300; s += 37) {
		hw_bench_fill_value(big, sizeof(big), 5, 1, s, 42);
		assert_int_equal(hw_bench_parse_value(big, sizeof(big), &pid, &part, &seq, &t), 0);
		assert_true(seq == s);
		size_t at = 33 + (size_t)(s * 131) % (sizeof(big) - 33);
		big[at] ^= 0x40;
		assert_int_equal(hw_bench_parse_value(big, sizeof(big), &pid, &part, &seq, &t), -EBADMSG);
	}
	/* longer than the fill's 64 KiB ramp: the second slice continues the
	 * pattern */
	static uint8_t huge[65536 + 32 + 777];
	hw_bench_fill_value(huge, sizeof(huge), 5, 1, 251, 42);
	assert_int_equal(hw_bench_parse_value(huge, sizeof(huge), &pid, &part, &seq, &t), 0);
	huge[sizeof(huge) - 1] ^= 1;
	assert_int_equal(hw_bench_parse_value(huge, sizeof(huge), &pid, &part, &seq, &t), -EBADMSG);
}

/* Open loop, clean network: everything acked once, offered rate reached,
 * verify finds every record at its offset. */
static void test_open_loop_clean_verify(void **state)
{
	(void)state;
	model *m = model_new(g_seed);
	hw_bench_io io = model_io(m);
	hw_bench_cfg c;
	base_cfg(&c);
	c.verify = 1;
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	uint64_t expect = (uint64_t)((double)c.rate * (double)(c.duration_ns + c.warmup_ns) / 1e9);
	assert_true(r.sent_records >= expect - 1 && r.sent_records <= expect + 1);
	assert_int_equal(r.acked_records, r.sent_records);
	assert_int_equal(r.failed_records, 0);
	assert_true(r.verified);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost, 0);
	assert_int_equal(r.verify_dup, 0);
	assert_int_equal(r.verify_misplaced, 0);
	assert_int_equal(r.verify_corrupt, 0);
	/* measured records: those intended inside the measured window */
	uint64_t measured = hw_hist_count(r.lat);
	uint64_t want = (uint64_t)((double)c.rate * (double)c.duration_ns / 1e9);
	assert_true(measured + 2 >= want && measured <= want + 2);
	/* latency at least the model's delay */
	assert_true(hw_hist_value_at_percentile(r.lat, 1) >= m->delay_ns * 99 / 100);
	assert_true(r.records_per_sec > c.rate * 0.9 && r.records_per_sec < c.rate * 1.1);
	hw_bench_result_free(&r);
	model_free(m);
}

/* Lossy network: 5% of requests and responses vanish. Retries (same
 * sequence) plus the broker's dedup keep every record exactly once. */
static void test_lossy_retries_exactly_once(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0x55);
	m->drop_req = 0.05;
	m->drop_resp = 0.05;
	hw_bench_io io = model_io(m);
	hw_bench_cfg c;
	base_cfg(&c);
	c.verify = 1;
	c.rate = 10000;
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	assert_true(m->dropped > 0);
	assert_true(r.retries > 0);
	assert_int_equal(r.failed_records, 0);
	assert_int_equal(r.acked_records, r.sent_records);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost, 0);
	assert_int_equal(r.verify_dup, 0);
	assert_int_equal(r.verify_misplaced, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

/* A broker without dedup turns resends into duplicates: verify must see them. */
static void test_verify_detects_duplicates(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0xd0);
	m->no_dedup = 1;
	m->drop_resp = 0.10; /* lost answers -> resends -> second appends */
	hw_bench_io io = model_io(m);
	hw_bench_cfg c;
	base_cfg(&c);
	c.verify = 1;
	c.rate = 5000;
	c.inflight = 1; /* no OOO path: every resend is a plain duplicate */
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	assert_true(r.retries > 0);
	assert_true(r.verify_dup > 0);
	hw_bench_result_free(&r);
	model_free(m);
}

/* A record that vanishes from the log after its ack is reported lost. */
static void test_verify_detects_loss(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0x1);
	m->lose_offset = 17;
	hw_bench_io io = model_io(m);
	hw_bench_cfg c;
	base_cfg(&c);
	c.partitions = 1;
	c.verify = 1;
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	assert_int_equal(r.verify_lost, 1);
	assert_int_equal(r.verify_dup, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

/* Coordinated omission: the broker stalls 150 ms in the middle of an open
 * loop run. Every record intended during the stall must carry the stall in
 * its latency (measured from its intended time), so the high percentiles
 * see it even though the client sent nothing while blocked. */
static void test_open_loop_sees_stall(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0x57);
	hw_bench_io io = model_io(m);
	hw_bench_cfg c;
	base_cfg(&c);
	c.partitions = 1;
	c.rate = 2000;
	c.inflight = 1;
	c.batch_size = 4;
	c.duration_ns = 600000000;
	c.warmup_ns = 0;
	int64_t t0 = mono();
	m->stall_from = t0 + 200000000;
	m->stall_to = t0 + 350000000;
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	/* ~25% of the records were intended during or just before the stall
	 * and waited for it: p90 must be well above the model's 50 us. */
	assert_true(hw_hist_value_at_percentile(r.lat, 90) > 30000000);
	assert_true(hw_hist_max(r.lat) > 120000000);
	assert_true(r.max_backlog > 100);
	assert_int_equal(r.failed_records, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

static int64_t test_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Regression: closed loop with acks=0 never left its send loop (a batch
 * completes as it is sent, so the window never filled). It must send for
 * the duration and stop. */
static void test_closed_loop_acks0_terminates(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0xa0);
	hw_bench_io io = model_io(m);
	hw_bench_cfg c;
	base_cfg(&c);
	c.closed_loop = 1;
	c.acks = 0;
	c.inflight = 3;
	hw_bench_result r;
	int64_t t0 = test_now_ns();
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	int64_t took = test_now_ns() - t0;
	assert_true(took < c.warmup_ns + c.duration_ns + 2000000000LL);
	assert_true(r.sent_records > 100);
	assert_int_equal(r.failed_records, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

static uint64_t err_count(const hw_bench_result *r, int16_t code)
{
	for (int i = 0; i < r->n_err; i++)
		if (r->err_code[i] == code)
			return r->err_count[i];
	return 0;
}

/* One stream, closed loop, two batches in flight: the model applies the
 * engine's idempotent sequences like the leader does, batch k is the
 * window's head and k+1 rides behind it. */
static void one_stream_cfg(hw_bench_cfg *c)
{
	base_cfg(c);
	c->partitions = 1;
	c->closed_loop = 1;
	c->inflight = 2;
	c->verify = 1;
	c->warmup_ns = 0;
	c->duration_ns = 100000000;
	c->drain_timeout_ns = 1000000000;
}

/* Regression (bench_producers_udp failing 1 run in 4): the datagram of a
 * window's head batch is lost, the batch behind it reaches the leader and
 * is answered OUT_OF_ORDER_SEQUENCE_NUMBER. The engine used to resend that
 * batch alone after every backoff; each resend got the same answer before
 * the next loop turn, and a pending resend suppressed the timeout scan, so
 * the lost head was never resent: both batches failed at the drain
 * deadline after thousands of resends. Kafka resends in sequence order:
 * the head after its timeout, then the one behind it; both land once. */
static void test_lost_head_batch_resent_in_order(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0x105e);
	hw_bench_cfg c;
	one_stream_cfg(&c);
	m->lose_part = 0;
	m->lose_seq = 40 * c.batch_size; /* well after the first (lone) batch */
	hw_bench_io io = model_io(m);
	hw_bench_result r;
	int64_t t0 = test_now_ns();
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	int64_t took = test_now_ns() - t0;
	assert_int_equal(m->lose_done, 1);
	assert_int_equal(r.failed_records, 0);
	assert_int_equal(r.acked_records, r.sent_records);
	assert_true(r.sent_records > (uint64_t)m->lose_seq + (uint64_t)c.batch_size);
	/* the batch behind the gap was refused once, then held: not resent
	 * into the gap again and again */
	assert_int_equal(err_count(&r, HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER), 1);
	assert_true(err_count(&r, HW_ERR_REQUEST_TIMED_OUT) >= 1);
	assert_int_equal(r.retries, 2); /* go-back-N: the lost head and the held one */
	assert_true(took < c.duration_ns + c.drain_timeout_ns / 2);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost + r.verify_dup + r.verify_misplaced + r.verify_corrupt, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

/* The head batch is overtaken, not lost: the one behind it is refused
 * OUT_OF_ORDER_SEQUENCE_NUMBER (answer delivered first), then the head
 * lands and is acknowledged. The held batch is the next sequence now and
 * goes again at once, without waiting for a request timeout. */
static void test_overtaken_head_then_held_batch_resent(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0x1a7e);
	hw_bench_cfg c;
	one_stream_cfg(&c);
	c.request_timeout_ns = 2000000000LL; /* a timeout would fail the test */
	m->late_part = 0;
	m->late_seq = 40 * c.batch_size;
	hw_bench_io io = model_io(m);
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	assert_int_equal(m->late_done, 1);
	assert_int_equal(r.failed_records, 0);
	assert_int_equal(r.acked_records, r.sent_records);
	assert_int_equal(err_count(&r, HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER), 1);
	assert_int_equal(err_count(&r, HW_ERR_REQUEST_TIMED_OUT), 0);
	assert_int_equal(r.retries, 1);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost + r.verify_dup + r.verify_misplaced + r.verify_corrupt, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

/* As above, but the refusal's answer is slower than the head's
 * acknowledgement: when it arrives its batch is the window's head. It was
 * sent behind an unacknowledged batch, so the refusal is stale (no gap in
 * the leader's sequences): resend, do not fail it (the engine used to fail
 * any OUT_OF_ORDER_SEQUENCE_NUMBER of a head batch). */
static void test_stale_refusal_after_head_ack_resent(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0x57a1);
	hw_bench_cfg c;
	one_stream_cfg(&c);
	c.request_timeout_ns = 2000000000LL;
	m->late_part = 0;
	m->late_seq = 40 * c.batch_size;
	m->oosn_extra_ns = 2000000;
	hw_bench_io io = model_io(m);
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	assert_int_equal(m->late_done, 1);
	assert_int_equal(r.failed_records, 0);
	assert_int_equal(r.acked_records, r.sent_records);
	/* once the head was acknowledged the window took the next batch,
	 * which the leader refuses as well (the stale refusal has not arrived
	 * yet): one or two refusals, one go-back-N resend of one or both */
	uint64_t oosn = err_count(&r, HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
	assert_true(oosn >= 1 && oosn <= 2);
	assert_int_equal(err_count(&r, HW_ERR_REQUEST_TIMED_OUT), 0);
	assert_true(r.retries >= 1 && r.retries <= 2);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost + r.verify_dup + r.verify_misplaced + r.verify_corrupt, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

/* A retriable error for the batch behind the head (here: the leader's
 * answer to an overtaking batch), delivered just before the head's
 * acknowledgement: the scheduled go-back-N resend must still start at that
 * batch after the head leaves the window (its window index moved; the
 * engine used to skip it, and it waited for the request timeout). */
static void test_retriable_error_behind_head_resent_after_pop(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0x90b);
	hw_bench_cfg c;
	one_stream_cfg(&c);
	c.request_timeout_ns = 2000000000LL; /* a timeout would fail the test */
	m->late_part = 0;
	m->late_seq = 40 * c.batch_size;
	m->gap_error = HW_ERR_NOT_ENOUGH_REPLICAS;
	hw_bench_io io = model_io(m);
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	assert_int_equal(m->late_done, 1);
	assert_int_equal(r.failed_records, 0);
	assert_int_equal(r.acked_records, r.sent_records);
	assert_int_equal(err_count(&r, HW_ERR_NOT_ENOUGH_REPLICAS), 1);
	assert_int_equal(err_count(&r, HW_ERR_REQUEST_TIMED_OUT), 0);
	assert_int_equal(r.retries, 1);
	assert_int_equal(r.verify_checked, r.acked_records);
	assert_int_equal(r.verify_lost + r.verify_dup + r.verify_misplaced + r.verify_corrupt, 0);
	hw_bench_result_free(&r);
	model_free(m);
}

static void test_closed_loop_and_outputs(void **state)
{
	(void)state;
	model *m = model_new(g_seed ^ 0xc1);
	hw_bench_io io = model_io(m);
	hw_bench_cfg c;
	base_cfg(&c);
	c.closed_loop = 1;
	c.inflight = 2;
	c.end_to_end = 1;
	c.verify = 1;
	hw_bench_result r;
	assert_int_equal(hw_bench_run(&c, &io, NULL, &r), 0);
	assert_true(r.acked_records > 1000);
	assert_int_equal(r.verify_lost + r.verify_dup, 0);
	assert_true(hw_hist_count(r.e2e) > 0);
	/* produce-to-consume can't be faster than the produce answer's delay */
	assert_true(hw_hist_value_at_percentile(r.e2e, 50) >= m->delay_ns / 2);

	char dir[] = "/tmp/hw-bench-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256], *text = NULL;
	size_t n = 0;
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(hw_bench_write_json(&c, &r, 1, path), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&text, &n, 0, f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "\"aggregatedPublishLatency50pct\""));
	assert_non_null(strstr(text, "\"aggregatedPublishLatency99pct\""));
	assert_non_null(strstr(text, "\"publishRate\""));
	assert_non_null(strstr(text, "\"aggregatedEndToEndLatency99pct\""));
	unlink(path);
	snprintf(path, sizeof(path), "%s/r.hgrm", dir);
	assert_int_equal(hw_bench_write_hgrm(&r, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&text, &n, 0, f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "Percentile"));
	assert_non_null(strstr(text, "#[Max"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/r.png", dir);
	assert_int_equal(hw_bench_write_plot(&c, &r, 1, path), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	unsigned char sig[8] = {0};
	assert_int_equal(fread(sig, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
	unlink(path);
	rmdir(dir);
	free(text);
	hw_bench_result_free(&r);
	model_free(m);
}

int main(void)
{
	g_seed = hw_test_seed("bench_engine");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_roundtrip),
		cmocka_unit_test(test_open_loop_clean_verify),
		cmocka_unit_test(test_lossy_retries_exactly_once),
		cmocka_unit_test(test_verify_detects_duplicates),
		cmocka_unit_test(test_verify_detects_loss),
		cmocka_unit_test(test_open_loop_sees_stall),
		cmocka_unit_test(test_closed_loop_and_outputs),
		cmocka_unit_test(test_closed_loop_acks0_terminates),
		cmocka_unit_test(test_lost_head_batch_resent_in_order),
		cmocka_unit_test(test_overtaken_head_then_held_batch_resent),
		cmocka_unit_test(test_stale_refusal_after_head_ack_resent),
		cmocka_unit_test(test_retriable_error_behind_head_resent_after_pop),
		cmocka_unit_test(test_multi_producers_open_loop),
		cmocka_unit_test(test_multi_producers_closed_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
