/* hw_cluster_prom.h — a Prometheus server for a local cluster
 * (`hiwater cluster up --prometheus`).
 *
 * Design note. The server is Debian's `prometheus` binary run as a plain
 * process of the cluster, like a node: its files live in D/prometheus/
 *
 *   D/prometheus/prometheus.yml     scrape config: every node (controller
 *                                   node 0 and brokers 1..N) at
 *                                   127.0.0.1:<base+400+n>/metrics, labels
 *                                   node="<n>", role="controller|broker";
 *                                   scrape and rule evaluation every 1 s
 *   D/prometheus/hiwater.rules.yml  the recording rules (HW_PROM_RULE_TABLE)
 *   D/prometheus/data/              its TSDB (retention 1 day)
 *   D/prometheus/prometheus.log     its stdout+stderr (appended)
 *   D/prometheus/pid                "<pid> <starttime>" while it runs
 *
 * It listens on 127.0.0.1:<base+800> (the cluster port plan). The config
 * file is also the marker: once `up --prometheus` wrote it, a later `up`
 * starts the server again, `down` stops it (before the nodes), `down
 * --purge` deletes it with the directory. Rig clusters are refused: their
 * nodes serve metrics on 127.0.0.1 inside their own namespaces, which a
 * server in the root namespace cannot reach.
 *
 * The server binary is $HIWATER_PROMETHEUS, else `prometheus` on PATH.
 */
#ifndef HW_CLUSTER_PROM_H
#define HW_CLUSTER_PROM_H
#include <stdio.h>
#include <sys/types.h>

#include "hw_cluster.h"

#define HW_PROM_PORT_OFFSET 800
#define HW_PROM_SCRAPE_INTERVAL "1s"

/* The recording rules: X(record name, PromQL expression, what it answers).
 * Latency quantiles come from the request histogram (rate over 30 s), so
 * they are recomputed across brokers and time, never averaged quantiles. */
#define HW_PROM_RULE_TABLE(X)                                                                             \
	X("node:hiwater_request_total_time_seconds:p99_produce_acks_all",                                                    \
	  "histogram_quantile(0.99, sum by (node, le) "                                                   \
	  "(rate(hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\"}[30s])))",     \
	  "acks=all produce latency p99 per broker (leader), last 30 s")                                  \
	X("cluster:hiwater_request_total_time_seconds:p99_produce_acks_all",                                                 \
	  "histogram_quantile(0.99, sum by (le) "                                                         \
	  "(rate(hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\"}[30s])))",     \
	  "acks=all produce latency p99 over all brokers, last 30 s")                                     \
	X("cluster:hiwater_request_total_time_seconds:p999_produce_acks_all",                                                \
	  "histogram_quantile(0.999, sum by (le) "                                                        \
	  "(rate(hiwater_request_total_time_seconds_bucket{request=\"Produce\",acks=\"all\"}[30s])))",     \
	  "acks=all produce latency p99.9 over all brokers, last 30 s")                                   \
	X("cluster:hiwater_under_replicated_partitions:sum", "sum(hiwater_under_replicated_partitions)",  \
	  "partitions whose ISR is smaller than their replica set (Kafka UnderReplicatedPartitions)")     \
	X("cluster:hiwater_under_min_isr_partitions:sum", "sum(hiwater_under_min_isr_partitions)",        \
	  "partitions whose ISR is smaller than min.insync.replicas (acks=all produce fails)")             \
	X("cluster:hiwater_offline_replicas:sum", "sum(hiwater_offline_replicas)",                        \
	  "replicas with no leader or a failed store, over the live brokers")                             \
	X("partition:hiwater_partition_follower_max_lag_offsets:max",                                                   \
	  "max by (topic, partition) (hiwater_partition_follower_max_lag_offsets)",                       \
	  "largest follower lag in offsets per partition, seen from its leader")                          \
	X("cluster:hiwater_partition_follower_max_lag_offsets:max", "max(hiwater_partition_follower_max_lag_offsets)",  \
	  "largest follower lag in offsets over every partition")                                         \
	X("cluster:hiwater_partition_follower_max_lag_seconds:max", "max(hiwater_partition_follower_max_lag_seconds)",  \
	  "longest time since some follower was caught up (compare replica.lag.time.max.ms)")             \
	X("node:hiwater_produce_requests:rate30s", "sum by (node) (rate(hiwater_produce_requests_total[30s]))", \
	  "produce requests per second per broker")                                                       \
	X("partition:hiwater_partition_produce_bytes:rate30s",                                                      \
	  "sum by (topic, partition) (rate(hiwater_partition_produce_bytes_total[30s]))",                 \
	  "record bytes produced per second per partition (at its leader)")                               \
	X("role:up:sum", "sum by (role) (up{job=\"hiwater\"})",                                             \
	  "nodes Prometheus scraped successfully at the last scrape, by role (broker, controller)")

/* 127.0.0.1:<this port> is the server's HTTP API and UI. */
int hw_cluster_prom_port(const hw_cluster *c);
/* 1 once `up --prometheus` wrote D/prometheus/prometheus.yml, else 0. */
int hw_cluster_prom_enabled(const hw_cluster *c);
/* Render the scrape config / the rules file into buf: 0, -ENOSPC. */
int hw_cluster_prom_render_config(const hw_cluster *c, char *buf, size_t cap);
int hw_cluster_prom_render_rules(char *buf, size_t cap);
/* Write both files, start the server unless it runs (a running one gets
 * SIGHUP: it rereads them) and wait up to timeout_ms until it answers
 * /-/ready. 0; -EINVAL (a rig cluster), -ENOENT (no prometheus binary),
 * -ECHILD (it exited: the tail of its log was printed), -ETIMEDOUT, or the
 * errno of writing the files. Messages printed. */
int hw_cluster_prom_up(const hw_cluster *c, int timeout_ms);
/* Its process state; *pid_out its pid (0 when DOWN). */
hw_node_state hw_cluster_prom_state(const hw_cluster *c, pid_t *pid_out);
/* SIGTERM, wait up to timeout_ms, then SIGKILL. 0 when it is down. */
int hw_cluster_prom_stop(const hw_cluster *c, int timeout_ms);
/* The `cluster status` line (nothing when not enabled). */
void hw_cluster_prom_status(const hw_cluster *c, FILE *out);

#endif
