/* hw_group_api.h — the one entry point the Kafka listener calls for every
 * group API key (FindCoordinator 10, JoinGroup 11, Heartbeat 12, LeaveGroup
 * 13, SyncGroup 14, OffsetCommit 8, OffsetFetch 9, DescribeGroups 15,
 * ListGroups 16): decode the request
 * (lib/kafka/hw_kafka_group.h), run it on the coordinator (hw_group.h),
 * encode the answer. docs/groups.md "Wire".
 *
 * Design note. A JoinGroup waits for the rebalance, a follower's SyncGroup
 * for the leader, an OffsetCommit for its acks=all append: such a request is
 * left pending and its answer is written later through the listener's
 * pending-slot mechanism (ops->pending_writer + ops->complete, which keep
 * the connection's responses in request order). An answer available at once
 * is written to the caller's writer. The listener owns `req`: it stays valid
 * until ops->complete is called for it, also after its connection closed.
 * Not thread-safe: call from the thread that owns the coordinator.
 */
#ifndef HW_GROUP_API_H
#define HW_GROUP_API_H
#include <stddef.h>
#include <stdint.h>
#include "hw_kafka_api.h"
#include "hw_kafka_io.h"
#include "hw_group.h"

#define HW_GROUP_OFFSETS_TOPIC "__consumer_offsets"

typedef struct hw_group_api_ops {
	/* The response-body writer of a request left pending. Never NULL for a
	 * req this api returned 1 for. */
	hw_kw *(*pending_writer)(void *ctx, void *req);
	/* The body of a pending request is written: send it. */
	void (*complete)(void *ctx, void *req);
	/* FindCoordinator: the broker leading `__consumer_offsets` partition p
	 * and its Kafka listener. 0 and the fields; -ENOENT: the topic does not
	 * exist (the api then calls ensure_offsets_topic and answers
	 * COORDINATOR_NOT_AVAILABLE, as Kafka does); -EAGAIN: no leader now. */
	int (*coordinator)(void *ctx, int32_t p, int32_t *node_id, char *host, size_t hcap, int32_t *port);
	/* Create `__consumer_offsets` with offsets.topic.num.partitions,
	 * offsets.topic.replication.factor and cleanup.policy=compact if it
	 * does not exist (asynchronous; repeated calls are harmless). May be
	 * NULL. */
	void (*ensure_offsets_topic)(void *ctx);
} hw_group_api_ops;

typedef struct hw_group_api hw_group_api;

/* 0 and *out, -EINVAL, -ENOMEM. co and ctx outlive the api. */
int hw_group_api_create(hw_gcoord *co, const hw_group_api_ops *ops, void *ctx, hw_group_api **out);
/* Answers nothing more: pending requests are completed first by
 * hw_gcoord_free (NOT_COORDINATOR); free the api after the coordinator. */
void hw_group_api_free(hw_group_api *a);

/* Handle one group request: h is its decoded request header (api key,
 * version, client id: the prefix of new member ids, as Kafka), r is
 * positioned at the body. Returns 0 (the response body is in w), 1
 * (pending: completed later through ops), or a negative errno: the request
 * does not decode (-EMSGSIZE, -EINVAL, -EOVERFLOW, -EBADMSG), the version is
 * not a supported one (-EPROTONOSUPPORT), the key is not a group key
 * (-ENOTSUP) — the listener closes the connection — or -ENOMEM. */
int hw_group_api_handle(hw_group_api *a, void *req, const hw_kafka_req_hdr *h, hw_kr *r, hw_kw *w);

/* Requests handled and left pending so far (metrics, tests). */
typedef struct hw_group_api_stats {
	uint64_t requests, pending_now, bad_requests;
} hw_group_api_stats;
const hw_group_api_stats *hw_group_api_get_stats(const hw_group_api *a);

#endif
