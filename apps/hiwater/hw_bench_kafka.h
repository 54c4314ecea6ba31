/* hw_bench_kafka.h — `hiwater bench --kafka`: the bench workload driven
 * through librdkafka against any Kafka-protocol cluster (hiwater's Kafka
 * listener, Kafka, Redpanda), with the native bench's result type, so the
 * same report, .hgrm, JSON and plot (hw_bench_report.c) come out.
 *
 * Design note. librdkafka builds its own batches, so the native engine
 * (hw_bench.c, which sends RecordBatch bytes it built) cannot drive it;
 * this is a second driver with the same workload semantics:
 *   - records carry the native bench's value (hw_bench_fill_value: producer
 *     id, partition, sequence, intended time), so --verify reads them back
 *     the same way;
 *   - open loop (--rate R): record k is due at start + k/R and its latency
 *     runs from that intended time to its delivery report (no coordinated
 *     omission: a record librdkafka's queue refused waits in our backlog
 *     and keeps its intended time); closed loop: --inflight x --batch-size
 *     records outstanding per partition and producer, latency from the
 *     hand-off to librdkafka;
 *   - --batch-size is librdkafka's batch.num.messages with linger.ms=0 (a
 *     batch is whatever is queued when the previous one left, at most that
 *     many records), --inflight its max.in.flight.requests.per.connection,
 *     acks its acks, idempotence its enable.idempotence (acks=all only, as
 *     librdkafka requires); Nagle is off;
 *   - delivery reports wake the loop through librdkafka's queue IO event
 *     (an eventfd-like pipe), so a report is timed when it arrives, not at
 *     the next millisecond poll;
 *   - --verify: every acknowledged record present exactly once at its
 *     acknowledged offset, read back with librdkafka's simple consumer
 *     (no consumer group) from each partition's end offset before the run.
 * Record k belongs to producer k % N, partition (k / N) % P, sequence
 * k / (N P).
 */
#ifndef HW_BENCH_KAFKA_H
#define HW_BENCH_KAFKA_H
#include <stdio.h>
#include "hw_bench.h"

typedef struct hw_bench_kafka_opts {
	const char *bootstrap;   /* bootstrap.servers */
	const char *topic;
	const char *compression; /* none | gzip | snappy | lz4 | zstd */
	int debug;               /* librdkafka debug=msg,protocol to stderr */
} hw_bench_kafka_opts;

/* Resolve cfg->partitions (0: all of the topic; the topic must exist or be
 * auto-created). Returns 0, -ENOENT (no such topic), -ETIMEDOUT, -EINVAL. */
int hw_bench_kafka_partitions(const hw_bench_kafka_opts *o, int32_t *partitions);

/* One run at cfg->rate (or closed loop). Same result contract as
 * hw_bench_run: 0 and res filled (caller frees with hw_bench_result_free),
 * or -EINVAL (bad option for librdkafka, message on stderr), -ENOMEM,
 * -EIO (librdkafka could not be set up). */
int hw_bench_kafka_run(const hw_bench_cfg *cfg, const hw_bench_kafka_opts *o, FILE *progress,
		       hw_bench_result *res);

/* librdkafka's version string. */
const char *hw_bench_kafka_version(void);

#endif
