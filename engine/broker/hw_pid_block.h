/* hw_pid_block.h — the broker's producer id blocks (Kafka's
 * RPCProducerIdManager, KIP-730; docs/kafka.md "InitProducerId").
 *
 * The controller hands out blocks of HW_PRODUCER_ID_BLOCK ids
 * (ALLOCATE_PRODUCER_IDS, persisted before it answers); InitProducerId takes
 * the next id of the current block. Once 90 % of the current block is used
 * (Kafka's prefetch point) the broker asks for the next block, so a steady
 * stream of InitProducerId never waits; while it has no id left it answers
 * COORDINATOR_LOAD_IN_PROGRESS (retriable), as Kafka does. One request in
 * flight; an unanswered or refused one is sent again after
 * HW_PID_BLOCK_RETRY_NS.
 *
 * Not thread-safe: the caller's reactor owns it. Pure state (no I/O), so
 * it is tested on its own (tests/engine/broker). */
#ifndef HW_PID_BLOCK_H
#define HW_PID_BLOCK_H
#include <stdint.h>
#include "hw_admin_msg.h"

#define HW_PID_BLOCK_RETRY_NS (1000 * 1000000LL)

typedef struct hw_pid_blocks {
	int64_t next, end;            /* current block: ids [next, end) */
	int64_t pf_first, pf_end;     /* prefetched block, [pf_first, pf_end), empty if equal */
	int64_t block_len;            /* size of the current block (prefetch at 90 %) */
	int in_flight;
	int64_t sent_ns;
	uint64_t blocks, rejected;    /* blocks taken; error answers */
} hw_pid_blocks;

void hw_pid_blocks_init(hw_pid_blocks *b);
/* The next producer id (>= 0), or -EAGAIN when no block is at hand. */
int64_t hw_pid_blocks_take(hw_pid_blocks *b);
/* 1: send an ALLOCATE_PRODUCER_IDS now (then call hw_pid_blocks_sent). */
int hw_pid_blocks_want(const hw_pid_blocks *b, int64_t now_ns);
void hw_pid_blocks_sent(hw_pid_blocks *b, int64_t now_ns);
/* The controller's answer. 0, or -EINVAL for an error answer / a block
 * that overlaps what we hold (not taken; counted in rejected). */
int hw_pid_blocks_on_resp(hw_pid_blocks *b, const hw_alloc_pids_resp *r);

#endif
