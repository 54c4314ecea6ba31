/* hw_top.h — the samples `hiwater top` shows: what the controller's
 * Metadata says (leader, replicas, ISR per partition) and what each
 * broker's /metrics says (HW, LEO, follower lag, produce counters, the
 * acks=all produce latency histogram), taken at one instant.
 *
 * Design note. Rates and the p99 are differences of two samples (counters
 * and histogram buckets are cumulative), so a frame always needs the
 * previous sample; the first frame of `top` waits one interval. The p99 is
 * computed from the bucket deltas the way Prometheus's
 * histogram_quantile() does (linear inside the bucket), so `top` and the
 * recording rule node:hiwater_request_total_time_seconds:p99_produce_acks_all agree up to
 * their windows. The histogram is per broker: a partition's p99 is its
 * leader's.
 */
#ifndef HW_TOP_H
#define HW_TOP_H
#include <stdint.h>

#include "hw_cluster.h"
#include "hw_types.h"

#define HW_TOP_MAX_PARTS 512   /* partitions shown (and per broker) */
#define HW_TOP_MAX_LE 32       /* histogram buckets */
#define HW_TOP_TOPIC_MAX HW_TOPIC_NAME_MAX

/* One partition as a broker's /metrics reports it (NaN: not reported). */
typedef struct hw_top_pmetrics {
	char topic[HW_TOP_TOPIC_MAX];
	int partition;
	double hw, leo, is_leader, max_lag, produce_requests, produce_bytes;
} hw_top_pmetrics;

typedef struct hw_top_node {
	int up;                            /* /metrics answered */
	int n_parts;
	hw_top_pmetrics parts[HW_TOP_MAX_PARTS];
	int n_le;                          /* acks=all Produce total-time buckets */
	double le[HW_TOP_MAX_LE];          /* upper bounds, ascending, last +Inf */
	double bucket[HW_TOP_MAX_LE];      /* cumulative counts */
	double under_replicated, under_min_isr, leaders, produce_requests;
} hw_top_node;

/* One partition as the controller's Metadata says. */
typedef struct hw_top_part {
	char topic[HW_TOP_TOPIC_MAX];
	int partition;
	int32_t leader;                    /* -1: offline */
	hw_idset replicas, isr;
} hw_top_part;

typedef struct hw_top_sample {
	int64_t t_ns;                      /* CLOCK_MONOTONIC */
	int meta_ok;                       /* the controller answered */
	int n_parts;
	hw_top_part parts[HW_TOP_MAX_PARTS];
	int n_nodes;                       /* controller 0 + brokers */
	hw_top_node node[HW_CLUSTER_MAX_BROKERS + 1];
} hw_top_sample;

/* Fold a broker's Prometheus text (NUL-terminated, modified in place) into
 * n. Lines it does not know are skipped; malformed lines too (never a
 * crash). Returns the number of lines used. */
int hw_top_parse_metrics(char *text, hw_top_node *n);
/* Quantile q (0..1) of the histogram whose bucket deltas are
 * cur - prev (cumulative counts at upper bounds le, last +Inf), as
 * Prometheus's histogram_quantile(). NaN without observations in between
 * or when the bucket layouts differ. */
double hw_top_quantile(double q, const hw_top_node *cur, const hw_top_node *prev);
/* The node's metrics of topic/partition, or NULL. */
const hw_top_pmetrics *hw_top_find(const hw_top_node *n, const char *topic, int partition);

#endif
