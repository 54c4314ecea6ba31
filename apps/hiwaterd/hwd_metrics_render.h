/* hwd_metrics_render.h — a node's metric families as Prometheus text, on
 * the metrics reactor (reactor 0). The request histograms are hwd_metrics.c's. */
#ifndef HWD_METRICS_RENDER_H
#define HWD_METRICS_RENDER_H
#include "hwd_metric_defs.h"
#include "hwd_node.h"

/* The broker's families: ReplicaManager gauges, replication throttle,
 * per partition, totals over partitions, per reactor. Nothing when the
 * partitions cannot be read (out of memory). */
void hwd_metrics_render_broker(hwd_node *n, hwd_tbuf *t);
/* Every node's: transports, DPDK (when its data plane is DPDK), the node's
 * reactor, the controller's (when it is one), jemalloc (when linked). */
void hwd_metrics_render_node(hwd_node *n, hwd_tbuf *t);

#endif
