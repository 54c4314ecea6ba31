/* hw_bench.c — the benchmark event loop: load generation, windows, retries,
 * latency recording, end-to-end consumer. See hw_bench.h for the design. */
#include "hw_bench.h"
#include "hw_bench_breakdown.h"
#include "hw_bench_int.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_batch.h"
#include "hw_err.h"

void hw_bench_result_free(hw_bench_result *r)
{
	hw_hist_destroy(r->lat);
	hw_hist_destroy(r->e2e);
	r->lat = r->e2e = NULL;
	hw_bd_destroy(r->bd);
	r->bd = NULL;
}

void hw_bench_cfg_defaults(hw_bench_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->acks = -1;
	c->record_size = 1024;
	c->batch_size = 16;
	c->partitions = 1;
	c->producers = 1;
	c->rate = 10000;
	c->inflight = 5;
	c->duration_ns = 10LL * 1000000000;
	c->warmup_ns = 1LL * 1000000000;
	c->idempotent = 1;
	c->request_timeout_ns = 500LL * 1000000;
	c->retry_backoff_ns = 10LL * 1000000;
	c->drain_timeout_ns = 10LL * 1000000000;
	c->progress = 1;
}

/* ---- record values ------------------------------------------------------ */

static const char bench_magic[8] = {'h', 'w', 'b', 'e', 'n', 'c', 'h', '1'};

static inline uint8_t pattern_byte(uint32_t seq, int32_t i)
{
	return (uint8_t)(seq * 31u + (uint32_t)i);
}

/* ramp[j] = j mod 256, for 64 KiB + 256 bytes: the pattern from any start
 * byte is a slice of it (65536 is a multiple of the 256-byte period) */
#define BENCH_RAMP_SPAN 65536
static uint8_t bench_ramp[BENCH_RAMP_SPAN + 256];
static pthread_once_t bench_ramp_once = PTHREAD_ONCE_INIT;

static void bench_ramp_init(void)
{
	for (size_t j = 0; j < sizeof(bench_ramp); j++)
		bench_ramp[j] = (uint8_t)j;
}

void hw_bench_fill_value(uint8_t *v, int32_t size, uint64_t producer_id, uint32_t partition,
			 uint32_t seq, int64_t intended_ns)
{
	memcpy(v, bench_magic, 8);
	hw_be64_put(v + 8, producer_id);
	hw_be32_put(v + 16, partition);
	hw_be32_put(v + 20, seq);
	hw_be64_put(v + 24, (uint64_t)intended_ns);
	/* The pattern is a ramp mod 256 starting at pattern_byte(seq, HDR): a
	 * memcpy from bench_ramp (a byte loop over the first 256 bytes was
	 * 3.8% of all CPU samples of a 1 KiB perf/throughput row, the client's
	 * biggest item; byte by byte all the way had been 6% at 16 KiB). */
	pthread_once(&bench_ramp_once, bench_ramp_init);
	const uint8_t *src = bench_ramp + pattern_byte(seq, HW_BENCH_REC_HDR);
	for (int32_t i = HW_BENCH_REC_HDR; i < size; i += BENCH_RAMP_SPAN)
		memcpy(v + i, src, (size_t)(size - i < BENCH_RAMP_SPAN ? size - i : BENCH_RAMP_SPAN));
}

int hw_bench_parse_value(const uint8_t *v, int32_t size, uint64_t *producer_id,
			 uint32_t *partition, uint32_t *seq, int64_t *intended_ns)
{
	if (!v || size < HW_BENCH_REC_HDR || memcmp(v, bench_magic, 8))
		return -EINVAL;
	*producer_id = hw_be64_get(v + 8);
	*partition = hw_be32_get(v + 16);
	*seq = hw_be32_get(v + 20);
	*intended_ns = (int64_t)hw_be64_get(v + 24);
	for (int32_t i = HW_BENCH_REC_HDR; i < size; i++)
		if (v[i] != pattern_byte(*seq, i))
			return -EBADMSG;
	return 0;
}

/* ---- errors by code ------------------------------------------------------ */

void hw_bench_count_error(hw_bench_result *r, int16_t code)
{
	for (int i = 0; i < r->n_err; i++)
		if (r->err_code[i] == code) {
			r->err_count[i]++;
			return;
		}
	if (r->n_err < HW_BENCH_MAX_ERR_CODES) {
		r->err_code[r->n_err] = code;
		r->err_count[r->n_err++] = 1;
	}
}

/* ---- correlation ids (layout in hw_bench_int.h) -------------------------- */

static uint32_t batch_corr(const bench_stream *s, int slot, uint32_t use)
{
	return ((uint32_t)s->producer << CORR_PRODUCER_SHIFT) |
	       (s->partition << CORR_PARTITION_SHIFT) | ((uint32_t)slot << CORR_SLOT_SHIFT) |
	       (use & CORR_USE_MASK);
}

/* ---- streams ------------------------------------------------------------- */

static int backlog_push(bench_stream *s, int64_t intended)
{
	if (s->bl_len == s->bl_cap) {
		size_t ncap = s->bl_cap ? s->bl_cap * 2 : 1024;
		if (ncap > HW_BENCH_MAX_BACKLOG)
			return -ENOBUFS;
		int64_t *nb = malloc(ncap * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		for (size_t i = 0; i < s->bl_len; i++)
			nb[i] = s->bl[(s->bl_head + i) % s->bl_cap];
		free(s->bl);
		s->bl = nb;
		s->bl_cap = ncap;
		s->bl_head = 0;
	}
	s->bl[(s->bl_head + s->bl_len) % s->bl_cap] = intended;
	s->bl_len++;
	return 0;
}

static int64_t backlog_pop(bench_stream *s)
{
	int64_t v = s->bl[s->bl_head];
	s->bl_head = (s->bl_head + 1) % s->bl_cap;
	s->bl_len--;
	return v;
}

int hw_bench_ackmap_reserve(bench_stream *s, size_t n)
{
	if (n < s->ack_cap)
		return 0;
	size_t ncap = s->ack_cap ? s->ack_cap : 4096;
	while (ncap <= n)
		ncap *= 2;
	int64_t *na = realloc(s->ack_off, ncap * sizeof(*na));
	if (!na)
		return -ENOMEM;
	for (size_t i = s->ack_cap; i < ncap; i++)
		na[i] = HW_BENCH_UNACKED;
	s->ack_off = na;
	s->ack_cap = ncap;
	return 0;
}

static int ackmap_set(bench_stream *s, uint32_t seq, int64_t offset)
{
	int rc = hw_bench_ackmap_reserve(s, seq);
	if (rc)
		return rc;
	s->ack_off[seq] = offset;
	return 0;
}

static bench_batch *win_at(bench_stream *s, int i)
{
	return &s->win[(s->w_head + i) % s->w_cap];
}

static int64_t now_realtime_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Encode the batch's records (already assigned base_seq, n, intended[]). */
static int encode_batch(bench_run *br, bench_stream *s, bench_batch *b)
{
	const hw_bench_cfg *c = br->cfg;
	hw_batch_spec spec;
	hw_batch_spec_init(&spec);
	if (c->idempotent) {
		spec.producer_id = (int64_t)s->pid;
		spec.producer_epoch = 0;
		spec.base_sequence = b->base_seq;
	}
	int64_t ts = now_realtime_ms();
	for (int i = 0; i < b->n; i++) {
		uint8_t *v = br->values + (size_t)i * (size_t)c->record_size;
		hw_bench_fill_value(v, c->record_size, s->pid, s->partition,
				    (uint32_t)(b->base_seq + i), b->intended[i]);
		br->recs[i] = (hw_record_in){.timestamp = ts, .key = NULL, .value = v,
					     .value_len = c->record_size};
	}
	ssize_t n = hw_batch_build(b->bytes, br->batch_cap, &spec, br->recs, (size_t)b->n);
	if (n < 0)
		return (int)n;
	b->len = (uint32_t)n;
	return 0;
}

static void send_batch(bench_run *br, int si, int slot, bench_batch *b, int64_t now)
{
	bench_stream *s = &br->streams[si];
	b->use++;
	b->corr = batch_corr(s, slot, b->use);
	b->sent_ns = now;
	b->sent_behind = slot != s->w_head;
	int rc = br->io->send_produce(br->io->ctx, s->partition, br->cfg->acks,
				      (int32_t)(br->cfg->request_timeout_ns / 1000000), b->bytes, b->len,
				      b->corr);
	if (rc) {
		/* Not handed over (ring full, no route): retry after the backoff. */
		hw_bench_count_error(br->res, HW_ERR_NETWORK_EXCEPTION);
		b->sent_ns = now - br->cfg->request_timeout_ns + br->cfg->retry_backoff_ns;
	}
}

/* acks=0 and acknowledged batches: record latencies, remember offsets. */
static void complete_batch(bench_run *br, bench_stream *s, bench_batch *b, int64_t base_offset,
			   int64_t now)
{
	hw_bench_result *r = br->res;
	if (br->sh) {
		hw_bench_multi_record_lat(br, b->intended, b->n, now);
		hw_bench_multi_add_acked(br, (uint64_t)b->n);
	}
	for (int i = 0; i < b->n; i++) {
		int64_t intended = b->intended[i];
		if (!br->sh && intended >= br->measure_start && intended < br->gen_end)
			hw_hist_record(r->lat, now - intended);
		if (br->cfg->verify && base_offset >= 0)
			ackmap_set(s, (uint32_t)(b->base_seq + i), base_offset + i);
	}
	r->acked_records += (uint64_t)b->n;
	r->producer_acked[s->producer] += (uint64_t)b->n;
	br->interval_acked += (uint64_t)b->n;
	if (now >= br->measure_start && now <= br->gen_end)
		r->measured_records += (uint64_t)b->n;
	b->state = BATCH_DONE;
}

static void pop_done(bench_stream *s)
{
	while (s->w_len && win_at(s, 0)->state == BATCH_DONE) {
		win_at(s, 0)->state = BATCH_FREE;
		s->w_head = (s->w_head + 1) % s->w_cap;
		s->w_len--;
		/* resend_from is a window index: keep it on the same batch (it
		 * used to point one past it, and the batch waited for its
		 * request timeout instead of the backoff) */
		if (s->resend_from > 0)
			s->resend_from--;
	}
}

/* Schedule a go-back-N resend from window index idx. */
static void schedule_resend(bench_run *br, bench_stream *s, int idx, int64_t now)
{
	if (s->resend_from < 0 || idx < s->resend_from)
		s->resend_from = idx;
	int64_t at = now + br->cfg->retry_backoff_ns;
	if (!s->resend_at || at < s->resend_at)
		s->resend_at = at;
}

/* Pop what is done; a HELD batch that reaches the head waited only for the
 * batches before it, which are now settled: it is the next sequence the
 * leader expects, resend it (and what follows) after the backoff. */
static void advance_window(bench_run *br, bench_stream *s, int64_t now)
{
	pop_done(s);
	if (s->w_len && win_at(s, 0)->state == BATCH_HELD)
		schedule_resend(br, s, 0, now);
}

/* --breakdown: the measured records of acknowledged batch b, with the
 * leader's stage timing of this answer (hw_bench_breakdown.h). */
static void breakdown_record(bench_run *br, const bench_batch *b, const hw_bench_resp *r, int64_t now)
{
	hw_bench_breakdown *bd = br->res->bd;
	for (int i = 0; i < b->n; i++) {
		int64_t intended = b->intended[i];
		if (intended < br->measure_start || intended >= br->gen_end)
			continue;
		if (r->has_timing)
			hw_bd_record(bd, &b->intended[i], 1, b->sent_ns, now, &r->timing, r->acks, r->n_acks);
		else
			bd->untimed++;
	}
}

static void on_produce_resp(bench_run *br, const hw_bench_resp *r, int64_t now)
{
	int prod = (int)(r->correlation_id >> CORR_PRODUCER_SHIFT) - br->prod_base;
	int part = (int)((r->correlation_id >> CORR_PARTITION_SHIFT) & 0xff);
	int slot = (int)((r->correlation_id >> CORR_SLOT_SHIFT) & 0x3f);
	if (prod < 0 || prod >= br->n_prod || part >= br->cfg->partitions)
		return;
	int si = prod * br->cfg->partitions + part;
	bench_stream *s = &br->streams[si];
	if (slot >= s->w_cap)
		return;
	bench_batch *b = &s->win[slot];
	if (b->state != BATCH_INFLIGHT || b->corr != r->correlation_id)
		return; /* an answer to an older send of this slot */
	int idx = (slot - s->w_head + s->w_cap) % s->w_cap;
	if (r->error == HW_ERR_NONE) {
		s->established = 1;
		if (br->res->bd)
			breakdown_record(br, b, r, now);
		complete_batch(br, s, b, r->base_offset, now);
		advance_window(br, s, now);
		return;
	}
	hw_bench_count_error(br->res, r->error);
	if (r->error == HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER && idx > 0) {
		/* The batch before (the head is unacknowledged: done ones are
		 * popped) has not reached the leader yet: lost, or slower than
		 * this one. Kafka's producer retries such a batch only in
		 * sequence order (TransactionManager.canRetry: not the next
		 * sequence -> retriable; the accumulator drains a retried batch
		 * only once the ones before it are settled). Resending it alone
		 * would be answered the same way for as long as the gap stays
		 * open: hold it until the earlier batch is acknowledged
		 * (advance_window) or resent (go-back-N takes it along). */
		b->state = BATCH_HELD;
		return;
	}
	/* At the head now, but sent while an earlier batch was unacknowledged:
	 * the leader saw this send before that batch, which has been
	 * acknowledged since (its answer overtook this one). Stale, not a gap:
	 * resend. Only a send made as the head, every earlier sequence
	 * acknowledged, proves the leader lost sequences. */
	if ((r->error == HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER && b->sent_behind) ||
	    hw_err_retriable(r->error)) {
		schedule_resend(br, s, idx, now);
		return;
	}
	/* Non-retriable (OUT_OF_ORDER_SEQUENCE_NUMBER for the next sequence the
	 * client expects means the leader lost what it had acknowledged; Kafka
	 * would bump the epoch, the bench does not): these records are lost to
	 * the benchmark. */
	br->res->failed_records += (uint64_t)b->n;
	b->state = BATCH_DONE;
	advance_window(br, s, now);
}

/* ---- end-to-end / verify consumer ---------------------------------------- */

static void on_fetch_resp(bench_run *br, const hw_bench_resp *r, int64_t now)
{
	if (r->partition >= (uint32_t)br->cfg->partitions)
		return;
	bench_consumer *cs = &br->cons[r->partition];
	/* Every frame of a split response carries the request's correlation
	 * id; frames of older requests are ignored. */
	if (r->correlation_id != cs->corr)
		return;
	if (!r->more)
		cs->inflight = 0;
	if (r->error != HW_ERR_NONE) {
		hw_bench_count_error(br->res, r->error);
		cs->next_at = now + br->cfg->retry_backoff_ns;
		return;
	}
	if (r->high_watermark > cs->hw)
		cs->hw = r->high_watermark;
	int64_t before = cs->offset;
	hw_bench_consume_records(br, cs, r->records, r->records_len, now);
	/* Nothing new: wait a little before asking again (no busy spin on an
	 * idle partition); new data: ask again at once. */
	if (!r->more)
		cs->next_at = cs->offset == before ? now + HW_BENCH_IDLE_FETCH_NS : now;
}

static void dispatch_resp(void *arg, const hw_bench_resp *r)
{
	bench_run *br = arg;
	int64_t now = hw_bench_now_ns();
	if (r->kind == HW_BENCH_PRODUCE)
		on_produce_resp(br, r, now);
	else
		on_fetch_resp(br, r, now);
}

void hw_bench_consumer_tick(bench_run *br, bench_consumer *cs, uint32_t p, int64_t now)
{
	if (cs->inflight && now - cs->sent_ns > br->cfg->request_timeout_ns)
		cs->inflight = 0; /* lost request or response: ask again */
	if (cs->inflight || now < cs->next_at)
		return;
	cs->corr = ++br->fetch_corr & CORR_FETCH_MASK;
	cs->sent_ns = now;
	cs->inflight = 1;
	if (br->io->send_fetch(br->io->ctx, p, cs->offset, HW_BENCH_FETCH_BYTES, cs->corr)) {
		cs->inflight = 0;
		cs->next_at = now + br->cfg->retry_backoff_ns;
	}
}

int hw_bench_poll(bench_run *br, int64_t timeout_ns)
{
	return br->io->poll(br->io->ctx, timeout_ns, dispatch_resp, br);
}

/* ---- the run ------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void hw_bench_free(bench_run *br)
{
	for (int i = 0; i < br->n_streams; i++) {
		bench_stream *s = &br->streams[i];
		for (int j = 0; s->win && j < s->w_cap; j++) {
			free(s->win[j].bytes);
			free(s->win[j].intended);
		}
		free(s->win);
		free(s->bl);
		free(s->ack_off);
	}
	free(br->streams);
	if (!br->cons_borrowed)
		free(br->cons);
	free(br->values);
	free(br->recs);
}

void hw_bench_make_pids(const hw_bench_cfg *c, uint64_t *pids)
{
	uint64_t seed = c->seed ? c->seed : (uint64_t)hw_bench_now_ns() ^ ((uint64_t)getpid_u() << 32);
	for (int p = 0; p < c->producers; p++)
		pids[p] = splitmix(&seed) >> 1; /* non-negative int64 */
}

int hw_bench_alloc(bench_run *br)
{
	const hw_bench_cfg *c = br->cfg;
	br->n_streams = br->n_prod * c->partitions;
	br->streams = calloc((size_t)br->n_streams + 1, sizeof(bench_stream));
	br->cons = calloc((size_t)c->partitions, sizeof(bench_consumer));
	br->values = malloc((size_t)c->batch_size * (size_t)c->record_size);
	br->recs = calloc((size_t)c->batch_size, sizeof(hw_record_in));
	if (!br->streams || !br->cons || !br->values || !br->recs)
		return -ENOMEM;
	/* Batch bytes: 61-byte header + per record at most 21 bytes of
	 * varints/attributes besides the value. */
	br->batch_cap = 64 + (size_t)c->batch_size * ((size_t)c->record_size + 24);
	for (int i = 0; i < br->n_streams; i++) {
		bench_stream *s = &br->streams[i];
		s->producer = br->prod_base + i / c->partitions;
		s->partition = (uint32_t)(i % c->partitions);
		s->pid = br->pids[s->producer];
		s->resend_from = -1;
		s->w_cap = c->inflight;
		s->win = calloc((size_t)s->w_cap, sizeof(bench_batch));
		if (!s->win)
			return -ENOMEM;
		for (int j = 0; j < s->w_cap; j++) {
			s->win[j].bytes = malloc(br->batch_cap);
			s->win[j].intended = malloc((size_t)c->batch_size * sizeof(int64_t));
			if (!s->win[j].bytes || !s->win[j].intended)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Fill the window of stream si from its backlog (open loop) or with fresh
 * full batches (closed loop, while generating). */
static int fill_window(bench_run *br, int si, int64_t now)
{
	bench_stream *s = &br->streams[si];
	const hw_bench_cfg *c = br->cfg;
	/* Until the broker holds state for our producer id it accepts any
	 * sequence (Kafka's rule), so a reordered second batch could be taken
	 * as the first: keep one batch in flight until the first is acked. */
	int cap = s->established ? s->w_cap : 1;
	/* acks=0 completes a batch as it is sent, so the window never fills:
	 * send at most one window per turn (the closed loop used to spin here
	 * forever, `now` never reaching gen_end inside the loop). */
	int sends = 0;
	while (s->w_len < cap && s->resend_from < 0 && sends++ < cap) {
		int n;
		if (c->closed_loop)
			n = now < br->gen_end ? c->batch_size : 0;
		else
			n = s->bl_len < (size_t)c->batch_size ? (int)s->bl_len : c->batch_size;
		if (!n)
			return 0;
		int slot = (s->w_head + s->w_len) % s->w_cap;
		bench_batch *b = &s->win[slot];
		b->n = n;
		b->base_seq = s->next_seq;
		for (int i = 0; i < n; i++)
			b->intended[i] = c->closed_loop ? now : backlog_pop(s);
		s->next_seq += n;
		int rc = encode_batch(br, s, b);
		if (rc)
			return rc;
		b->state = BATCH_INFLIGHT;
		s->w_len++;
		br->res->sent_records += (uint64_t)n;
		send_batch(br, si, slot, b, now);
		if (c->acks == 0) {
			complete_batch(br, s, b, -1, now);
			pop_done(s);
		}
	}
	return 0;
}

static void check_timeouts_and_resends(bench_run *br, int si, int64_t now)
{
	bench_stream *s = &br->streams[si];
	const hw_bench_cfg *c = br->cfg;
	/* A resend scheduled from index j covers j and later, not the batches
	 * before j: those keep timing out (skipping the scan whenever any
	 * resend was pending starved a lost head batch forever while the
	 * batch behind it kept being answered OUT_OF_ORDER_SEQUENCE_NUMBER). */
	int scan_to = s->resend_from < 0 ? s->w_len : s->resend_from;
	for (int i = 0; i < scan_to; i++) {
		bench_batch *b = win_at(s, i);
		if (b->state == BATCH_INFLIGHT && now - b->sent_ns > c->request_timeout_ns) {
			hw_bench_count_error(br->res, HW_ERR_REQUEST_TIMED_OUT);
			s->resend_from = i;
			s->resend_at = now;
			break;
		}
	}
	if (s->resend_from >= 0 && now >= s->resend_at) {
		for (int i = s->resend_from; i < s->w_len; i++) {
			bench_batch *b = win_at(s, i);
			if (b->state != BATCH_INFLIGHT && b->state != BATCH_HELD)
				continue;
			b->state = BATCH_INFLIGHT;
			br->res->retries++;
			send_batch(br, si, (s->w_head + i) % s->w_cap, b, now);
		}
		s->resend_from = -1;
		s->resend_at = 0;
	}
}

static void progress_line(bench_run *br, int64_t now, FILE *f)
{
	double secs = (double)(now - br->last_progress) / 1e9;
	if (secs <= 0)
		return;
	if (br->sh) {
		hw_bench_progress_multi(br, now, f);
		return;
	}
	uint64_t backlog = 0;
	for (int i = 0; i < br->n_streams; i++)
		backlog += br->streams[i].bl_len;
	uint64_t errs = 0;
	for (int i = 0; i < br->res->n_err; i++)
		errs += br->res->err_count[i];
	double rps = (double)br->interval_acked / secs;
	if (br->res->n_samples < HW_BENCH_MAX_SAMPLES && br->last_progress >= br->measure_start)
		br->res->rate_samples[br->res->n_samples++] = rps;
	const char *phase = hw_bench_phase_name(br->last_progress, br->measure_start, br->gen_end);
	if (!f)
		goto done;
	fprintf(f,
		"[%5.1fs %-6s] %10.0f rec/s %8.2f MB/s  p50 %8.1f us  p99 %8.1f us  errors %" PRIu64
		"  backlog %" PRIu64 "\n",
		(double)(now - br->start) / 1e9, phase, rps,
		rps * br->cfg->record_size / 1e6, hw_hist_value_at_percentile(br->res->lat, 50) / 1e3,
		hw_hist_value_at_percentile(br->res->lat, 99) / 1e3, errs, backlog);
	fflush(f);
done:
	br->interval_acked = 0;
	br->last_progress = now;
}

int hw_bench_cfg_check(const hw_bench_cfg *cfg)
{
	if (cfg->record_size < HW_BENCH_REC_HDR || cfg->batch_size < 1 || cfg->partitions < 1 ||
	    cfg->partitions > 256 || cfg->producers < 1 || cfg->producers > HW_BENCH_MAX_PRODUCERS ||
	    cfg->inflight < 1 || cfg->inflight > 64 || (!cfg->closed_loop && cfg->rate < 1) ||
	    cfg->duration_ns <= 0)
		return -EINVAL;
	return 0;
}

int hw_bench_loop(bench_run *br, FILE *progress)
{
	const hw_bench_cfg *cfg = br->cfg;
	hw_bench_result *res = br->res;
	int rc;
	uint64_t k = 0;
	const double ns_per_rec = cfg->closed_loop ? 0 : 1e9 / (double)cfg->rate;
	int64_t drain_deadline = br->gen_end + cfg->drain_timeout_ns;
	for (;;) {
		int64_t now = hw_bench_now_ns();
		int64_t next_due = INT64_MAX;
		if (!cfg->closed_loop) {
			for (;;) {
				uint64_t g = k * (uint64_t)br->stride + (uint64_t)br->phase;
				int64_t due = br->start + (int64_t)((double)g * ns_per_rec);
				if (due >= br->gen_end)
					break;
				if (due > now) {
					next_due = due;
					break;
				}
				rc = backlog_push(&br->streams[k % (uint64_t)br->n_streams], due);
				if (rc)
					return rc;
				k++;
			}
		}
		int busy = 0;
		uint64_t backlog = 0;
		for (int i = 0; i < br->n_streams; i++) {
			check_timeouts_and_resends(br, i, now);
			if ((rc = fill_window(br, i, now)))
				return rc;
			busy |= br->streams[i].w_len > 0 || br->streams[i].bl_len > 0;
			backlog += br->streams[i].bl_len;
		}
		if (backlog > res->max_backlog)
			res->max_backlog = backlog;
		if (cfg->end_to_end && br->consumer)
			for (int p = 0; p < cfg->partitions; p++)
				hw_bench_consumer_tick(br, &br->cons[p], (uint32_t)p, now);
		if (now - br->last_progress >= 1000000000)
			progress_line(br, now, cfg->progress ? progress : NULL);
		if (now >= br->gen_end && !busy)
			break;
		if (now >= drain_deadline)
			break;
		int64_t wait = next_due == INT64_MAX ? 1000000 : next_due - now;
		if (cfg->closed_loop && cfg->acks == 0)
			wait = 0; /* nothing to wait for: send the next window now */
		if (wait > 1000000)
			wait = 1000000;
		rc = hw_bench_poll(br, wait < 0 ? 0 : wait);
		if (rc < 0)
			return rc;
	}
	/* Whatever never got an answer is failed. */
	for (int i = 0; i < br->n_streams; i++) {
		bench_stream *s = &br->streams[i];
		for (int j = 0; j < s->w_len; j++)
			if (win_at(s, j)->state == BATCH_INFLIGHT || win_at(s, j)->state == BATCH_HELD)
				res->failed_records += (uint64_t)win_at(s, j)->n;
		res->failed_records += s->bl_len;
	}
	return 0;
}

int hw_bench_run(const hw_bench_cfg *cfg, hw_bench_io *io, FILE *progress, hw_bench_result *res)
{
	if (hw_bench_cfg_check(cfg))
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	res->lat = hw_hist_create_latency();
	res->e2e = hw_hist_create_latency();
	if (cfg->breakdown)
		res->bd = hw_bd_create();
	if (!res->lat || !res->e2e || (cfg->breakdown && !res->bd)) {
		hw_bench_result_free(res);
		return -ENOMEM;
	}
	res->offered_rate = cfg->closed_loop ? 0 : cfg->rate;
	res->n_producers = cfg->producers;
	uint64_t pids[HW_BENCH_MAX_PRODUCERS];
	hw_bench_make_pids(cfg, pids);
	bench_run br = {.cfg = cfg, .io = io, .res = res, .prod_base = 0, .n_prod = cfg->producers,
			.stride = 1, .phase = 0, .consumer = 1, .pids = pids, .tidx = -1};
	int rc = hw_bench_alloc(&br);
	if (rc)
		goto out;
	/* Where our records will start: each partition's high watermark now. */
	if (cfg->verify || cfg->end_to_end) {
		rc = hw_bench_probe_hw(&br);
		if (rc)
			goto out;
	}
	br.start = hw_bench_now_ns() + 1000000;
	br.measure_start = br.start + cfg->warmup_ns;
	br.gen_end = br.measure_start + cfg->duration_ns;
	br.last_progress = br.start;
	rc = hw_bench_loop(&br, progress);
	if (rc)
		goto out;
	res->measured_secs = (double)cfg->duration_ns / 1e9;
	res->records_per_sec = (double)res->measured_records / res->measured_secs;
	res->mb_per_sec = res->records_per_sec * cfg->record_size / 1e6;
	if (cfg->end_to_end)
		hw_bench_e2e_drain(&br);
	rc = 0;
	if (cfg->verify && cfg->acks != 0)
		rc = hw_bench_verify(&br);
out:
	hw_bench_free(&br);
	if (rc)
		hw_bench_result_free(res);
	return rc;
}
