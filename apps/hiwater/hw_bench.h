/* hw_bench.h — the produce benchmark engine behind `hiwater bench`.
 *
 * Design note. The engine is a single-threaded event loop that knows nothing
 * about sockets or DPDK: it talks to the cluster through hw_bench_io (send a
 * produce, send a fetch, poll for responses), which the CLI implements over
 * the real client transport and the unit tests over an in-process model.
 * hw_bench_run drives every producer from the calling thread (the unit
 * tests); hw_bench_run_multi (`hiwater bench --producers N`) runs the same
 * loop once per producer on its own thread over its own hw_bench_io and
 * merges the results (hw_bench_multi.c).
 *
 * Streams. Each (producer, partition) pair is a stream with its own
 * idempotent sequence space: producer p has a random 63-bit producer id,
 * epoch 0, and the stream's next sequence. A stream owns a backlog (records
 * generated but not yet sent, each remembering its INTENDED send time) and
 * a window of up to `inflight` batches (Kafka's
 * max.in.flight.requests.per.connection, 5 with idempotence). The first
 * batch of a stream flies alone: a broker without state for a producer id
 * accepts any sequence, so over an unordered datagram network a second
 * batch overtaking the first would be taken as the start.
 *
 * Open loop (--rate R): record k is due at start + k/R seconds no matter how
 * the cluster is doing; records are spread round-robin over the streams and
 * wait in the backlog while the window is full. A record's latency runs from
 * its intended time to its acknowledgement, so a stalled broker shows up as
 * latency of every record that should have been sent during the stall
 * (no coordinated omission). Closed loop (--closed-loop): each stream keeps
 * `inflight` full batches outstanding; latency runs from the send.
 *
 * Retries. A batch keeps its bytes (same producer id/epoch/sequence) until
 * acknowledged. A timeout or retriable error resends, go-back-N, every
 * unacknowledged batch of the stream from the failed one, after a backoff;
 * the broker's idempotent-producer state dedups what already landed (it
 * answers with the original offset). OUT_OF_ORDER_SEQUENCE_NUMBER for a
 * batch behind an unacknowledged one (that one was lost or is slower) is
 * retriable but in sequence order only, as in Kafka's producer: the batch
 * is held, not resent on its own (the leader would answer the same until
 * the gap closes), and goes again with the earlier batch's resend or once
 * that batch is acknowledged. A non-retriable error fails the batch's
 * records (counted by code) and the stream moves on.
 *
 * Records. A record's value starts with a 32-byte header — magic "hwbench1",
 * producer id, partition, sequence, intended time (CLOCK_MONOTONIC ns, the
 * same clock in every process of the host) — then a pattern derived from the
 * sequence. --verify and --end-to-end read it back.
 */
#ifndef HW_BENCH_H
#define HW_BENCH_H
#include <stdint.h>
#include <stdio.h>
#include "hw_hist.h"
#include "hw_msg.h"

#define HW_BENCH_REC_HDR 32
#define HW_BENCH_MAX_SWEEP 16
#define HW_BENCH_MAX_SAMPLES 900
#define HW_BENCH_MAX_PRODUCER_IDS 64
/* A produce request's correlation id carries its producer's index in the
 * bits from here up (a transport with one endpoint per producer thread
 * routes responses by it: hw_client.c). Fetch requests carry producer 0,
 * the thread that consumes. */
#define HW_BENCH_CORR_PRODUCER_SHIFT 26

typedef struct hw_bench_cfg {
	int16_t acks;              /* 0, 1, -1 */
	int32_t record_size;       /* value bytes, >= HW_BENCH_REC_HDR */
	int32_t batch_size;        /* records per batch */
	int32_t partitions;
	int32_t producers;
	int64_t rate;              /* records/s in open loop */
	int closed_loop;
	int32_t inflight;          /* batches in flight per stream */
	int64_t duration_ns;
	int64_t warmup_ns;
	int idempotent;
	int verify;
	int end_to_end;
	int64_t request_timeout_ns;/* resend after this long without an answer */
	int64_t retry_backoff_ns;
	int64_t drain_timeout_ns;  /* after the run, wait this long for stragglers */
	int progress;              /* print a progress line every second */
	int breakdown;             /* --breakdown: per-stage histograms from the
				    * leader's timing answers (docs/breakdown.md) */
	uint64_t seed;             /* producer ids */
	int64_t rate_sweep[HW_BENCH_MAX_SWEEP];
	int n_sweep;
	/* hw_bench_run_multi: pin producer p to CPU pin_cpu[p % n_pin] for the
	 * run (n_pin 0: no pinning) */
	int n_pin;
	int pin_cpu[HW_BENCH_MAX_PRODUCER_IDS];
} hw_bench_cfg;

void hw_bench_cfg_defaults(hw_bench_cfg *c);

/* ---- the seam to the cluster -------------------------------------------- */
typedef enum hw_bench_resp_kind { HW_BENCH_PRODUCE, HW_BENCH_FETCH } hw_bench_resp_kind;

typedef struct hw_bench_resp {
	hw_bench_resp_kind kind;
	uint32_t correlation_id;
	uint32_t partition;
	int16_t error;             /* hw_err */
	int64_t base_offset;       /* produce */
	int64_t high_watermark;    /* fetch */
	const uint8_t *records;    /* fetch: whole batches, borrowed for the call */
	uint32_t records_len;
	uint8_t more;              /* fetch: further frames of this response follow */
	int64_t log_start_offset;  /* fetch: the leader's log start (-1 unknown) */
	uint8_t has_timing;        /* produce: the leader's stage timing (--breakdown) */
	hw_produce_timing timing;
	uint8_t n_acks;            /* ... and each follower's acknowledgement */
	hw_follower_ack acks[HW_MAX_RF - 1];
} hw_bench_resp;

typedef void (*hw_bench_resp_fn)(void *arg, const hw_bench_resp *r);

typedef struct hw_bench_io {
	void *ctx;
	/* Send a produce of `records` (whole RecordBatch v2) to the leader of
	 * partition. 0 when handed to the transport; negative errno otherwise
	 * (the engine retries after the backoff). */
	int (*send_produce)(void *ctx, uint32_t partition, int16_t acks, int32_t timeout_ms,
			    const uint8_t *records, uint32_t len, uint32_t correlation_id);
	/* Consumer fetch (replica id -1) from offset, at most max_bytes. */
	int (*send_fetch)(void *ctx, uint32_t partition, int64_t offset, int32_t max_bytes,
			  uint32_t correlation_id);
	/* Deliver every response that arrived, waiting up to timeout_ns for the
	 * first. Returns the number delivered (>= 0) or negative errno. */
	int (*poll)(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg);
} hw_bench_io;

/* ---- results ----------------------------------------------------------- */
#define HW_BENCH_MAX_ERR_CODES 32
typedef struct hw_bench_result {
	int64_t offered_rate;      /* records/s asked for (0: closed loop) */
	hw_hist *lat;              /* publish latency (ns), measured records */
	hw_hist *e2e;              /* produce-to-consume (ns), with --end-to-end */
	uint64_t sent_records;     /* records sent at least once */
	uint64_t acked_records;    /* acknowledged (all) */
	uint64_t measured_records; /* acknowledged and in the measured window */
	uint64_t failed_records;   /* non-retriable errors or never acknowledged */
	uint64_t retries;          /* batch resends */
	uint64_t max_backlog;
	double measured_secs;
	double records_per_sec;
	double mb_per_sec;         /* 10^6 bytes of record values per second */
	int n_err;
	int16_t err_code[HW_BENCH_MAX_ERR_CODES];
	uint64_t err_count[HW_BENCH_MAX_ERR_CODES];
	/* --verify */
	int verified;
	uint64_t verify_checked, verify_lost, verify_dup, verify_misplaced, verify_corrupt;
	uint64_t verify_unacked_present;
	/* per-second acknowledged records/s (progress intervals), for --json */
	int n_samples;
	double rate_samples[HW_BENCH_MAX_SAMPLES];
	/* records acknowledged per producer (index = producer) */
	int n_producers;
	uint64_t producer_acked[HW_BENCH_MAX_PRODUCER_IDS];
	/* --breakdown (hw_bench_breakdown.c); NULL without */
	struct hw_bench_breakdown *bd;
	/* the hiwater client's idle counters over the run, warmup included
	 * (hw_client_idle_stats, docs/idle.md "Counters"); 0: not taken (--kafka) */
	int client_idle_valid;
	uint64_t client_spins_to_work, client_spins_to_sleep, client_contended_yields,
		 client_stalled_yields, client_probes;
	uint64_t client_sleeps, client_wakeups, client_yields;
} hw_bench_result;

/* Run one benchmark at cfg (rate = cfg->rate). Progress lines go to
 * `progress` (NULL: none). Returns 0, -EINVAL (bad cfg), -ENOMEM, or the
 * first negative errno of io->poll. On 0 the caller owns res's histograms
 * (hw_bench_result_free); on error they are freed. */
int hw_bench_run(const hw_bench_cfg *cfg, hw_bench_io *io, FILE *progress, hw_bench_result *res);

/* The same with one thread per producer (cfg->producers > 1): producer p
 * runs on its own thread over prod_io[p] (thread 0 is the caller), records
 * into its own histograms, and keeps its own open-loop schedule (the
 * run-wide record k, due at start + k/rate, belongs to producer k mod N, so
 * each producer runs at rate/N with its own intended times); the
 * --closed-loop window is per producer. all_io reaches every producer's
 * endpoint and is used by the calling thread only while no producer thread
 * runs (the high-watermark probe before, --verify and the --end-to-end
 * drain after). Responses for producer p must be delivered by prod_io[p]'s
 * poll (fetch responses by prod_io[0]'s). The result merges every
 * producer's. With producers == 1 this is hw_bench_run(cfg, prod_io[0]).
 * Same returns as hw_bench_run, and -EAGAIN when a thread cannot start. */
int hw_bench_run_multi(const hw_bench_cfg *cfg, hw_bench_io **prod_io, hw_bench_io *all_io,
		       FILE *progress, hw_bench_result *res);

/* Free the histograms of a result filled by hw_bench_run. */
void hw_bench_result_free(hw_bench_result *r);

/* ---- output -------------------------------------------------------------- */
void hw_bench_print_report(const hw_bench_cfg *cfg, const hw_bench_result *r, FILE *f);
/* Rate sweep summary: one row per result. */
void hw_bench_print_sweep(const hw_bench_result *r, int n, FILE *f);
/* OpenMessaging-Benchmark-style JSON of one or more results. 0 / -errno. */
int hw_bench_write_json(const hw_bench_cfg *cfg, const hw_bench_result *r, int n, const char *path);
/* HdrHistogram .hgrm of the (first) result, in microseconds. 0 / -errno. */
int hw_bench_write_hgrm(const hw_bench_result *r, const char *path);
/* Latency-by-percentile plot with gnuplot (one curve per result). 0,
 * -ENOENT when gnuplot is missing, -EIO when it failed. */
int hw_bench_write_plot(const hw_bench_cfg *cfg, const hw_bench_result *r, int n, const char *path);

/* ---- record values (exposed for tests) --------------------------------- */
void hw_bench_fill_value(uint8_t *v, int32_t size, uint64_t producer_id, uint32_t partition,
			 uint32_t seq, int64_t intended_ns);
/* 0 and fields set when v is a bench value with an intact pattern;
 * -EINVAL when it is not a bench value, -EBADMSG when the pattern is damaged. */
int hw_bench_parse_value(const uint8_t *v, int32_t size, uint64_t *producer_id,
			 uint32_t *partition, uint32_t *seq, int64_t *intended_ns);

#endif
