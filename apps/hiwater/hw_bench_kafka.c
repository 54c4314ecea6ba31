/* hw_bench_kafka.c — `hiwater bench --kafka`: the bench workload through
 * librdkafka. See hw_bench_kafka.h for the design note. */
#include "hw_bench_kafka.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "hw_bench_int.h"
#include "hw_cli.h"

#define KB_UNACKED INT64_MIN

typedef struct kb_prod {
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	int wake[2];             /* librdkafka writes here when reports are queued */
	int64_t outstanding;     /* handed to librdkafka, not yet reported */
} kb_prod;

typedef struct kb_run {
	const hw_bench_cfg *cfg;
	const hw_bench_kafka_opts *o;
	hw_bench_result *res;
	kb_prod prod[HW_BENCH_MAX_PRODUCERS];
	uint64_t pids[HW_BENCH_MAX_PRODUCERS];
	int n, p;                /* producers, partitions */
	int64_t *intended;       /* [k] intended send time */
	int64_t *ack_off;        /* [k] acknowledged offset or KB_UNACKED */
	size_t cap;              /* of both */
	int64_t start, measure_start, gen_end;
	uint64_t window_acked;   /* acked in the current progress second */
	int64_t start_off[256];  /* partition end offsets before the run */
	uint8_t *value;
} kb_run;

/* ---- librdkafka setup ---------------------------------------------------- */
static int kb_set(rd_kafka_conf_t *c, const char *k, const char *v)
{
	char err[256];
	if (rd_kafka_conf_set(c, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
		hw_cli_err("bench --kafka: %s=%s: %s", k, v, err);
		return -EINVAL;
	}
	return 0;
}

static int kb_set_i(rd_kafka_conf_t *c, const char *k, int64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRId64, v);
	return kb_set(c, k, b);
}

static rd_kafka_conf_t *kb_common_conf(const hw_bench_kafka_opts *o)
{
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	if (kb_set(c, "bootstrap.servers", o->bootstrap) || kb_set(c, "socket.nagle.disable", "true") ||
	    (o->debug && kb_set(c, "debug", "msg,protocol,broker"))) {
		rd_kafka_conf_destroy(c);
		return NULL;
	}
	return c;
}

static void kb_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

static int kb_prod_open(kb_run *r, int i)
{
	const hw_bench_cfg *cfg = r->cfg;
	rd_kafka_conf_t *c = kb_common_conf(r->o);
	if (!c)
		return -EINVAL;
	int idem = cfg->idempotent && cfg->acks == -1;
	int rc = kb_set(c, "acks", cfg->acks == -1 ? "all" : cfg->acks == 0 ? "0" : "1");
	rc = rc ? rc : kb_set(c, "enable.idempotence", idem ? "true" : "false");
	rc = rc ? rc : kb_set_i(c, "max.in.flight.requests.per.connection", cfg->inflight);
	rc = rc ? rc : kb_set(c, "linger.ms", "0");
	rc = rc ? rc : kb_set_i(c, "batch.num.messages", cfg->batch_size);
	/* batch.size: librdkafka's default (batches larger than a frame replicate: docs/wire.md#batch-pieces) */
	rc = rc ? rc : kb_set(c, "compression.codec", r->o->compression ? r->o->compression : "none");
	rc = rc ? rc : kb_set(c, "queue.buffering.max.messages", "1000000");
	rc = rc ? rc : kb_set(c, "message.timeout.ms", "30000");
	if (rc) {
		rd_kafka_conf_destroy(c);
		return rc;
	}
	rd_kafka_conf_set_dr_msg_cb(c, kb_dr);
	rd_kafka_conf_set_opaque(c, r);
	char err[256];
	kb_prod *p = &r->prod[i];
	p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!p->rk) {
		hw_cli_err("bench --kafka: producer: %s", err);
		return -EIO;
	}
	p->rkt = rd_kafka_topic_new(p->rk, r->o->topic, NULL);
	if (!p->rkt || pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) != 0)
		return -EIO;
	/* every delivery report queued on the main queue writes one byte */
	rd_kafka_queue_t *q = rd_kafka_queue_get_main(p->rk);
	rd_kafka_queue_io_event_enable(q, p->wake[1], "1", 1);
	rd_kafka_queue_destroy(q);
	return 0;
}

static void kb_prod_close(kb_prod *p)
{
	if (p->rkt)
		rd_kafka_topic_destroy(p->rkt);
	if (p->rk)
		rd_kafka_destroy(p->rk);
	if (p->wake[0] > 0) {
		close(p->wake[0]);
		close(p->wake[1]);
	}
	memset(p, 0, sizeof(*p));
}

int hw_bench_kafka_partitions(const hw_bench_kafka_opts *o, int32_t *partitions)
{
	rd_kafka_conf_t *c = kb_common_conf(o);
	if (!c)
		return -EINVAL;
	char err[256];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk) {
		hw_cli_err("bench --kafka: %s", err);
		return -EINVAL;
	}
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
	int rc = -ETIMEDOUT;
	/* a topic being auto-created answers LEADER_NOT_AVAILABLE first */
	for (int tries = 0; tries < 20 && rc == -ETIMEDOUT; tries++) {
		const rd_kafka_metadata_t *md = NULL;
		if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) != RD_KAFKA_RESP_ERR_NO_ERROR)
			continue;
		if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
		    md->topics[0].partition_cnt > 0) {
			*partitions = md->topics[0].partition_cnt;
			rc = 0;
		} else if (md->topic_cnt == 1 &&
			   md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
			rc = -ENOENT;
		} else {
			struct timespec ts = { 0, 250 * 1000000L };
			nanosleep(&ts, NULL);
		}
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	rd_kafka_destroy(rk);
	return rc;
}

/* ---- records -------------------------------------------------------------- */
static int kb_reserve(kb_run *r, size_t k)
{
	if (k < r->cap)
		return 0;
	size_t ncap = r->cap ? r->cap * 2 : 65536;
	while (ncap <= k)
		ncap *= 2;
	int64_t *a = realloc(r->intended, ncap * sizeof(*a));
	if (!a)
		return -ENOMEM;
	r->intended = a;
	int64_t *b = realloc(r->ack_off, ncap * sizeof(*b));
	if (!b)
		return -ENOMEM;
	r->ack_off = b;
	for (size_t i = r->cap; i < ncap; i++)
		b[i] = KB_UNACKED;
	r->cap = ncap;
	return 0;
}

static void kb_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	kb_run *r = opaque;
	size_t k = (size_t)(uintptr_t)m->_private;
	int prod = (int)(k % (size_t)r->n);
	int64_t now = hw_bench_now_ns();
	r->prod[prod].outstanding--;
	hw_bench_result *res = r->res;
	if (m->err) {
		res->failed_records++;
		/* librdkafka's own errors are negative (e.g. -192 message timed out) */
		hw_bench_count_error(res, (int16_t)m->err);
		return;
	}
	r->ack_off[k] = m->offset;
	res->acked_records++;
	res->producer_acked[prod]++;
	int64_t t = r->intended[k];
	if (t >= r->measure_start && t < r->gen_end) {
		res->measured_records++;
		hw_hist_record(res->lat, now - t > 0 ? now - t : 0);
		r->window_acked++;
	}
}

/* Hand record k to librdkafka: 0, -ENOBUFS (its queue is full: retry
 * later), or -EIO (counted as failed). */
static int kb_produce(kb_run *r, size_t k, int64_t intended)
{
	if (kb_reserve(r, k))
		return -ENOMEM;
	int prod = (int)(k % (size_t)r->n);
	size_t rest = k / (size_t)r->n;
	int32_t part = (int32_t)(rest % (size_t)r->p);
	uint32_t seq = (uint32_t)(rest / (size_t)r->p);
	r->intended[k] = intended;
	hw_bench_fill_value(r->value, r->cfg->record_size, r->pids[prod], (uint32_t)part, seq, intended);
	if (rd_kafka_produce(r->prod[prod].rkt, part, RD_KAFKA_MSG_F_COPY, r->value,
			     (size_t)r->cfg->record_size, NULL, 0, (void *)(uintptr_t)k) == 0) {
		r->prod[prod].outstanding++;
		r->res->sent_records++;
		return 0;
	}
	rd_kafka_resp_err_t e = rd_kafka_last_error();
	if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		return -ENOBUFS;
	r->res->failed_records++;
	hw_bench_count_error(r->res, (int16_t)e);
	return -EIO;
}

/* Serve delivery reports; wait up to timeout_ns for the first. */
static void kb_poll(kb_run *r, int64_t timeout_ns)
{
	struct pollfd pf[HW_BENCH_MAX_PRODUCERS];
	for (int i = 0; i < r->n; i++)
		pf[i] = (struct pollfd){ .fd = r->prod[i].wake[0], .events = POLLIN };
	if (timeout_ns > 0) {
		struct timespec ts = { timeout_ns / 1000000000, timeout_ns % 1000000000 };
		ppoll(pf, (nfds_t)r->n, &ts, NULL);
	}
	char sink[256];
	for (int i = 0; i < r->n; i++) {
		while (read(r->prod[i].wake[0], sink, sizeof(sink)) > 0)
			;
		rd_kafka_poll(r->prod[i].rk, 0);
	}
}

static void kb_progress(kb_run *r, int64_t now, int64_t *next, FILE *f)
{
	if (now < *next)
		return;
	double secs = 1.0 + (double)(now - *next) / 1e9;
	double rps = (double)r->window_acked / secs;
	r->window_acked = 0;
	int64_t began = now - (int64_t)(secs * 1e9);
	if (began >= r->measure_start && r->res->n_samples < HW_BENCH_MAX_SAMPLES)
		r->res->rate_samples[r->res->n_samples++] = rps;
	if (f && r->cfg->progress)
		fprintf(f, "bench --kafka: %s %6.1fs  acked %" PRIu64 "  failed %" PRIu64 "  %.0f rec/s\n",
			hw_bench_phase_name(began, r->measure_start, r->gen_end),
			(double)(now - r->start) / 1e9, r->res->acked_records, r->res->failed_records, rps);
	*next = now + 1000000000LL;
}

/* ---- the load loop ---------------------------------------------------------- */
static int kb_loop(kb_run *r, FILE *progress)
{
	const hw_bench_cfg *cfg = r->cfg;
	size_t k = 0;
	int64_t next_progress = r->start + 1000000000LL;
	int64_t window = (int64_t)cfg->inflight * cfg->batch_size * r->p;
	for (;;) {
		int64_t now = hw_bench_now_ns();
		if (now >= r->gen_end)
			break;
		int64_t wait = 1000000; /* closed loop: until a report comes, at most 1 ms */
		if (!cfg->closed_loop) {
			for (;;) {
				int64_t due = r->start + (int64_t)((double)k * 1e9 / (double)cfg->rate);
				if (due > now) {
					wait = due - now;
					break;
				}
				int rc = kb_produce(r, k, due);
				if (rc == -ENOBUFS) {
					uint64_t backlog = (uint64_t)((double)(now - due) * (double)cfg->rate / 1e9) + 1;
					if (backlog > r->res->max_backlog)
						r->res->max_backlog = backlog;
					break;
				}
				if (rc == -ENOMEM)
					return rc;
				k++;
			}
		} else {
			while (r->prod[k % (size_t)r->n].outstanding < window) {
				int rc = kb_produce(r, k, now);
				if (rc == -ENOBUFS)
					break;
				if (rc == -ENOMEM)
					return rc;
				k++;
			}
		}
		kb_poll(r, wait > 1000000 ? 1000000 : wait);
		kb_progress(r, hw_bench_now_ns(), &next_progress, progress);
	}
	/* drain: wait for every report (librdkafka fails what it cannot deliver
	 * within message.timeout.ms) */
	int64_t deadline = hw_bench_now_ns() + (cfg->drain_timeout_ns > 0 ? cfg->drain_timeout_ns : 30000000000LL);
	for (;;) {
		int64_t left = 0;
		for (int i = 0; i < r->n; i++)
			left += r->prod[i].outstanding;
		int64_t now = hw_bench_now_ns();
		if (left == 0 || now >= deadline) {
			r->res->failed_records += (uint64_t)left;
			break;
		}
		kb_poll(r, 1000000);
		kb_progress(r, hw_bench_now_ns(), &next_progress, progress);
	}
	return 0;
}

/* ---- --verify ------------------------------------------------------------------ */
/* Partition end offsets (high watermarks) from the first producer. */
static int kb_end_offsets(kb_run *r, int64_t *out)
{
	for (int p = 0; p < r->p; p++) {
		int64_t lo, hi;
		if (rd_kafka_query_watermark_offsets(r->prod[0].rk, r->o->topic, p, &lo, &hi, 10000))
			return -ETIMEDOUT;
		out[p] = hi;
	}
	return 0;
}

static void kb_verify_msg(kb_run *r, const rd_kafka_message_t *m, uint8_t *seen)
{
	uint64_t pid;
	uint32_t part, seq;
	int64_t t;
	int rc = hw_bench_parse_value(m->payload, (int32_t)m->len, &pid, &part, &seq, &t);
	if (rc == -EBADMSG) {
		r->res->verify_corrupt++;
		return;
	}
	int prod = -1;
	for (int i = 0; rc == 0 && i < r->n; i++)
		if (r->pids[i] == pid)
			prod = i;
	if (prod < 0)
		return; /* another run's record */
	size_t k = ((size_t)seq * (size_t)r->p + part) * (size_t)r->n + (size_t)prod;
	if ((int32_t)part != m->partition || k >= r->cap) {
		r->res->verify_corrupt++;
		return;
	}
	if (seen[k] < 255)
		seen[k]++;
	if (r->ack_off[k] == KB_UNACKED)
		r->res->verify_unacked_present++;
	else if (r->ack_off[k] != m->offset)
		r->res->verify_misplaced++;
}

static int kb_verify(kb_run *r)
{
	int64_t end[256];
	if (kb_end_offsets(r, end))
		return -ETIMEDOUT;
	uint8_t *seen = calloc(r->cap ? r->cap : 1, 1);
	if (!seen)
		return -ENOMEM;
	rd_kafka_conf_t *c = kb_common_conf(r->o);
	int rc = c ? kb_set(c, "enable.partition.eof", "true") : -EINVAL;
	rc = rc ? rc : kb_set(c, "fetch.wait.max.ms", "100");
	char err[256];
	rd_kafka_t *rk = rc ? NULL : rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	if (!rk) {
		if (!rc)
			hw_cli_err("bench --kafka --verify: consumer: %s", err);
		free(seen);
		return -EIO;
	}
	rd_kafka_topic_conf_t *tc = rd_kafka_topic_conf_new();
	rd_kafka_topic_conf_set(tc, "auto.commit.enable", "false", err, sizeof(err));
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, r->o->topic, tc);
	for (int p = 0; p < r->p; p++) {
		int64_t off = r->start_off[p];
		if (off >= end[p])
			continue;
		rd_kafka_consume_start(rkt, p, off);
		int64_t idle_until = hw_bench_now_ns() + 10000000000LL;
		while (off < end[p] && hw_bench_now_ns() < idle_until) {
			rd_kafka_message_t *m = rd_kafka_consume(rkt, p, 200);
			if (!m)
				continue;
			if (!m->err) {
				kb_verify_msg(r, m, seen);
				off = m->offset + 1;
				idle_until = hw_bench_now_ns() + 10000000000LL;
			}
			rd_kafka_message_destroy(m);
		}
		rd_kafka_consume_stop(rkt, p);
	}
	hw_bench_result *res = r->res;
	for (size_t k = 0; k < r->cap; k++) {
		if (r->ack_off[k] == KB_UNACKED)
			continue;
		res->verify_checked++;
		if (seen[k] == 0)
			res->verify_lost++;
		else if (seen[k] > 1)
			res->verify_dup++;
	}
	res->verified = 1;
	rd_kafka_topic_destroy(rkt);
	rd_kafka_destroy(rk);
	free(seen);
	return 0;
}

const char *hw_bench_kafka_version(void)
{
	return rd_kafka_version_str();
}

/* ---- the run ---------------------------------------------------------------------- */
int hw_bench_kafka_run(const hw_bench_cfg *cfg, const hw_bench_kafka_opts *o, FILE *progress,
		       hw_bench_result *res)
{
	if (cfg->partitions < 1 || cfg->partitions > 256 || cfg->producers < 1 ||
	    cfg->producers > HW_BENCH_MAX_PRODUCERS || cfg->end_to_end)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	kb_run *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfg = cfg;
	r->o = o;
	r->res = res;
	r->n = cfg->producers;
	r->p = cfg->partitions;
	res->n_producers = r->n;
	res->offered_rate = cfg->closed_loop ? 0 : cfg->rate;
	res->lat = hw_hist_create_latency();
	res->e2e = hw_hist_create_latency();
	r->value = malloc((size_t)cfg->record_size);
	int rc = res->lat && res->e2e && r->value ? 0 : -ENOMEM;
	hw_bench_make_pids(cfg, r->pids);
	for (int i = 0; rc == 0 && i < r->n; i++)
		rc = kb_prod_open(r, i);
	/* where this run's records start: each partition's end before it */
	if (rc == 0 && kb_end_offsets(r, r->start_off))
		rc = -ETIMEDOUT;
	if (rc == 0) {
		r->start = hw_bench_now_ns();
		r->measure_start = r->start + cfg->warmup_ns;
		r->gen_end = r->measure_start + cfg->duration_ns;
		rc = kb_loop(r, progress);
	}
	if (rc == 0) {
		res->measured_secs = (double)cfg->duration_ns / 1e9;
		res->records_per_sec = (double)res->measured_records / res->measured_secs;
		res->mb_per_sec = res->records_per_sec * cfg->record_size / 1e6;
		if (cfg->verify)
			rc = kb_verify(r);
	}
	for (int i = 0; i < r->n; i++)
		kb_prod_close(&r->prod[i]);
	free(r->intended);
	free(r->ack_off);
	free(r->value);
	free(r);
	if (rc)
		hw_bench_result_free(res);
	return rc;
}
