/* hwd_kafka.h — the broker's Kafka listener (docs/kafka.md): TCP on io_uring
 * on reactor 0, feeding the Kafka server (engine/kafka/hw_ksrv.h).
 *
 * Design note. One io_uring (its completions signal an eventfd reactor 0
 * sleeps on) carries accept, recv and send for every connection: one recv
 * and at most one send in flight per connection, the send from a buffer of
 * the connection's own (so responses completed meanwhile can grow the
 * server's output buffer). Engine requests go where the native data plane's
 * go: PRODUCE/FETCH through the reactor routing of hwd_shard.h (to the
 * owning reactor; answers come back addressed to HW_KSRV_NODE and are
 * handed to reactor 0), METADATA/CREATE_TOPIC to the controller on the
 * control socket (answers recognised by the correlation id bit). Producer
 * ids are (broker epoch << 20) + a counter: the controller hands out each
 * broker epoch once in the cluster (its metadata record number), so the ids
 * are unique across brokers and restarts (docs/kafka.md "InitProducerId").
 */
#ifndef HWD_KAFKA_H
#define HWD_KAFKA_H
#include "hwd_node.h"
#include "hw_ksrv.h"

typedef struct hwd_kafka hwd_kafka;

/* Reactor 0, after hwd_broker_init: open the listener of cfg->kafka (none
 * when `listeners` is empty: returns 0, n->kafka NULL). 0 or -errno (printed). */
int hwd_kafka_init(hwd_node *n);
void hwd_kafka_fini(hwd_node *n);
/* An engine message for the Kafka server (dst HW_KSRV_NODE, or a control
 * answer with the correlation bit): handled, 1; else 0. */
int hwd_kafka_on_msg(hwd_node *n, const hw_msg *m);
/* The hw_net data reactors' replica managers answer through: messages to
 * HW_KSRV_NODE are posted to reactor 0, the rest go to `inner`. */
int hwd_kafka_is_dst(const hw_msg *m);
/* Server statistics (reactor 0), NULL without a listener. */
const hw_ksrv_stats *hwd_kafka_stats(const hwd_node *n);

#endif
