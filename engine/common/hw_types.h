/* hw_types.h — identifiers shared by every engine module. */
#ifndef HW_TYPES_H
#define HW_TYPES_H
#include <stdint.h>

#define HW_MAX_RF        7      /* most replicas a partition may have */
#define HW_NO_NODE       (-1)   /* leader -1: offline / unknown */
#define HW_NO_EPOCH      (-1)   /* Kafka's "no epoch" */
#define HW_NO_OFFSET     (-1LL)
#define HW_CONSUMER_ID   (-1)   /* replica_id of a consumer fetch */
/* Node ids: brokers and controllers are 0 .. HW_CLIENT_NODE_BASE - 1,
 * clients HW_CLIENT_NODE_BASE and above (a local cluster's client slot k is
 * node HW_CLIENT_NODE_BASE + k; docs/wire.md). */
#define HW_CLIENT_NODE_BASE 1000

/* A topic partition. Topics are named in metadata; the data path uses ids. */
typedef struct hw_tp {
	uint32_t topic_id;
	uint32_t partition;
} hw_tp;

static inline int hw_tp_eq(hw_tp a, hw_tp b)
{
	return a.topic_id == b.topic_id && a.partition == b.partition;
}

/* A small replica-id set in assignment order (replicas, ISR, ELR...). */
typedef struct hw_idset {
	uint8_t n;
	int32_t id[HW_MAX_RF];
} hw_idset;

static inline int hw_idset_has(const hw_idset *s, int32_t id)
{
	for (int i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return 1;
	return 0;
}

#endif
