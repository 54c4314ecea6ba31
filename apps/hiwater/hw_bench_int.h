/* hw_bench_int.h — internals shared by hw_bench.c (event loop) and
 * hw_bench_verify.c (consumer, --verify, --end-to-end). Not a public API. */
#ifndef HW_BENCH_INT_H
#define HW_BENCH_INT_H
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "hw_batch.h"
#include "hw_bench.h"

#define HW_BENCH_MAX_BACKLOG   (1u << 24)   /* records waiting per stream */
#define HW_BENCH_MAX_PRODUCERS 64
#define HW_BENCH_UNACKED       INT64_MIN
#define HW_BENCH_IDLE_FETCH_NS 50000        /* re-fetch pause on an idle partition */
#define HW_BENCH_FETCH_BYTES   (256 * 1024)

/* A window slot: FREE; INFLIGHT (a send of it is outstanding, or due:
 * timeout / scheduled resend); HELD (its last send was answered
 * OUT_OF_ORDER_SEQUENCE_NUMBER while an earlier batch of the stream was
 * unacknowledged: nothing outstanding, it waits for that batch and is resent
 * in sequence order after it: with it by the go-back-N resend, or alone once
 * it is acknowledged); DONE (acknowledged or failed, popped in order). */
#define BENCH_BATCH_STATES(X) X(FREE) X(INFLIGHT) X(HELD) X(DONE)
enum bench_batch_state {
#define BENCH_BATCH_ENUM(n) BATCH_##n,
	BENCH_BATCH_STATES(BENCH_BATCH_ENUM)
#undef BENCH_BATCH_ENUM
};

typedef struct bench_batch {
	int state;
	uint32_t corr;
	uint32_t use;              /* bumped per send: answers to older sends are ignored */
	int32_t base_seq;
	int32_t n;
	int64_t *intended;         /* per record */
	uint8_t *bytes;            /* the encoded batch, resent unchanged */
	uint32_t len;
	int64_t sent_ns;
	int sent_behind;           /* at the last send an earlier batch of the
				    * stream was unacknowledged */
} bench_batch;

typedef struct bench_stream {
	int producer;
	uint32_t partition;
	uint64_t pid;
	int32_t next_seq;
	int64_t *bl;               /* backlog ring of intended times */
	size_t bl_cap, bl_head, bl_len;
	bench_batch *win;          /* window ring */
	int w_cap, w_head, w_len;
	int established;           /* a batch was acked: the broker knows our sequence */
	int resend_from;           /* window index, -1: none */
	int64_t resend_at;
	int64_t *ack_off;          /* --verify: acked offset by sequence */
	size_t ack_cap;
	uint8_t *seen;             /* --verify: copies found (saturating) */
	uint8_t *at_ack;           /* --verify: a copy at its acked offset */
} bench_stream;

typedef struct bench_consumer {
	int64_t start;             /* high watermark before the run */
	int64_t offset;            /* next offset to read */
	int64_t hw;
	int64_t next_at, sent_ns;
	uint32_t corr;
	int inflight;
	int verifying;
} bench_consumer;

struct bench_shared;

typedef struct bench_run {
	const hw_bench_cfg *cfg;
	hw_bench_io *io;
	hw_bench_result *res;
	bench_stream *streams;     /* n_prod * partitions: [(p - prod_base) * P + partition] */
	int n_streams;
	int prod_base, n_prod;     /* the producers this run drives */
	int stride, phase;         /* open loop: this run's k-th record is the
				    * run-wide record k * stride + phase */
	int consumer;              /* runs the --end-to-end consumer while producing */
	const uint64_t *pids;      /* every producer's id (cfg->producers) */
	bench_consumer *cons;
	int cons_borrowed;         /* cons belongs to another run */
	uint32_t fetch_corr;
	uint8_t *values;           /* batch_size record values */
	hw_record_in *recs;
	size_t batch_cap;
	int64_t start, measure_start, gen_end, last_progress;
	uint64_t interval_acked;
	/* producer threads (hw_bench_multi.c); NULL/-1 for a single run */
	struct bench_shared *sh;
	int tidx;
} bench_run;

/* Correlation ids of produce requests: producer (6 bits) | partition (8) |
 * window slot (6) | use (12). Fetch correlation ids have producer 0 (the
 * consumer lives with producer 0) and a 26-bit counter. */
#define CORR_PRODUCER_SHIFT  HW_BENCH_CORR_PRODUCER_SHIFT
#define CORR_PARTITION_SHIFT 18
#define CORR_SLOT_SHIFT      12
#define CORR_USE_MASK        0xfffu
#define CORR_FETCH_MASK      ((1u << CORR_PRODUCER_SHIFT) - 1)

static inline int64_t hw_bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
/* The label of a progress interval that began at t: "warmup", "run" or
 * "drain". An interval is labelled by its start, so the one that ends as
 * the warmup does (its records are not measured) is not called "run". */
static inline const char *hw_bench_phase_name(int64_t t, int64_t measure_start, int64_t gen_end)
{
	return t < measure_start ? "warmup" : t < gen_end ? "run" : "drain";
}
static inline uint32_t getpid_u(void) { return (uint32_t)getpid(); }

/* Every producer's id from cfg->seed (or the clock): pids[0..producers). */
void hw_bench_make_pids(const hw_bench_cfg *cfg, uint64_t *pids);
/* cfg is runnable: 0 or -EINVAL. */
int hw_bench_cfg_check(const hw_bench_cfg *cfg);
/* Allocate run br's streams (n_prod * partitions), consumers and scratch.
 * 0 / -ENOMEM. */
int hw_bench_alloc(bench_run *br);
void hw_bench_free(bench_run *br);
/* The load loop from br->start until everything is answered or the drain
 * deadline; counts what never got an answer as failed. 0 or -errno. */
int hw_bench_loop(bench_run *br, FILE *progress);
/* Record latencies of a completed batch (under the run's mutex with
 * producer threads). */
void hw_bench_progress_multi(bench_run *br, int64_t now, FILE *f);
int hw_bench_multi_record_lat(bench_run *br, const int64_t *intended, int n, int64_t now);
void hw_bench_multi_add_acked(bench_run *br, uint64_t n);

/* Ack map capacity > n (new entries HW_BENCH_UNACKED). 0 / -ENOMEM. */
int hw_bench_ackmap_reserve(bench_stream *s, size_t n);
void hw_bench_count_error(hw_bench_result *r, int16_t code);
int hw_bench_poll(bench_run *br, int64_t timeout_ns);
void hw_bench_consumer_tick(bench_run *br, bench_consumer *cs, uint32_t p, int64_t now);
/* Parse the batches of a fetch response for consumer cs (contiguous from
 * cs->offset); e2e latency and verify bookkeeping per record. */
void hw_bench_consume_records(bench_run *br, bench_consumer *cs, const uint8_t *rec,
			      uint32_t len, int64_t now);
/* Each partition's HW before the run -> cons[p].start/offset. 0 / -ETIMEDOUT. */
int hw_bench_probe_hw(bench_run *br);
/* Keep the end-to-end consumers going until they read every acked record. */
void hw_bench_e2e_drain(bench_run *br);
/* Read everything back and fill res->verify_*. 0 / -ENOMEM (a timeout
 * leaves unread records counted as lost). */
int hw_bench_verify(bench_run *br);

#endif
