/* hwd_shard_of.h — which reactor of a broker owns a partition (hwd_shard.h).
 * Alone in its header so unit tests include it without the daemon. */
#ifndef HWD_SHARD_OF_H
#define HWD_SHARD_OF_H
#include <stdint.h>

/* The reactor (0..n-1) that owns partition `partition` of topic `topic_id`
 * in a broker running n reactors: (topic_id + partition) mod n, computed
 * without overflow; 0 when n <= 1. Every broker uses the same function, so
 * brokers with equal reactor counts place a partition on the same reactor
 * index. */
static inline int hwd_shard_of(uint32_t topic_id, uint32_t partition, int n)
{
	if (n <= 1)
		return 0;
	return (int)(((uint64_t)topic_id + partition) % (uint64_t)n);
}

#endif
