/* hwd_group.h — the broker's group coordinator (docs/groups.md): the
 * engine's hw_gcoord on reactor 0 behind the Kafka listener, its
 * `__consumer_offsets` log bound to the replica manager by engine messages.
 *
 * Design note. The coordinator's log (hw_glog) is an acks=all PRODUCE to
 * `__consumer_offsets` partition p, submitted where the listener's produce
 * requests go; its replay is a consumer FETCH loop from offset 0 to the high
 * watermark, run when a partition scan (every HWD_GROUP_SCAN_MS) finds this
 * broker its leader, fed to hw_gcoord_load_feed; it also waits until the HW
 * reached the log end the leader began its epoch with (Kafka replays to the
 * log end; a consumer fetch reads below the HW, which on a new leader can lag
 * commits the previous leader acknowledged). Leadership lost: the
 * partition's groups are unloaded (their waiters get NOT_COORDINATOR).
 * FindCoordinator answers from a METADATA view of `__consumer_offsets` the
 * node refreshes every HWD_GROUP_META_MS (leaders and the brokers' Kafka
 * listeners); a missing topic is created through the controller with
 * offsets.topic.num.partitions and offsets.topic.replication.factor.
 *
 * Answers to these engine messages come back addressed to the listener's
 * node (HW_KSRV_NODE) or, from the controller, with the listener's
 * correlation bit; they carry correlation ids the listener never makes
 * (bits 16..30 zero: the listener's ids always have a non-zero generation
 * there) and hwd_group_on_msg claims them before the listener sees them.
 */
#ifndef HWD_GROUP_H
#define HWD_GROUP_H
#include "hwd_node.h"
#include "hw_group.h"
#include "hw_ksrv.h"

#define HWD_GROUP_SCAN_MS 200
#define HWD_GROUP_META_MS 1000

typedef struct hwd_group hwd_group;

/* Reactor 0, from hwd_kafka_init once the server exists. 0 or -errno. */
int hwd_group_init(hwd_node *n, hw_ksrv *srv);
void hwd_group_fini(hwd_node *n);
/* The listener's group_request: see hw_ksrv_ops. */
int hwd_group_request(hwd_node *n, hw_kreq *req, const hw_kafka_req_hdr *h, hw_kr *r, hw_kw *w);
/* The coordinator's counters and how many offsets partitions it has
 * loaded; NULL without a coordinator (reactor 0). */
const hw_gstats *hwd_group_stats(const hwd_node *n, int32_t *loaded);
/* An engine answer for the coordinator: consumed (1) or not (0). */
int hwd_group_on_msg(hwd_node *n, const hw_msg *m);

#endif
