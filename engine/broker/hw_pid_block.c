/* hw_pid_block.c — see hw_pid_block.h. */
#include <errno.h>
#include <string.h>
#include "hw_err.h"
#include "hw_pid_block.h"

void hw_pid_blocks_init(hw_pid_blocks *b)
{
	memset(b, 0, sizeof(*b));
}

/* Move the prefetched block in when the current one is used up. */
static void roll(hw_pid_blocks *b)
{
	if (b->next < b->end || b->pf_first == b->pf_end)
		return;
	b->next = b->pf_first;
	b->end = b->pf_end;
	b->block_len = b->end - b->next;
	b->pf_first = b->pf_end = 0;
}

int64_t hw_pid_blocks_take(hw_pid_blocks *b)
{
	roll(b);
	if (b->next >= b->end)
		return -EAGAIN;
	return b->next++;
}

int hw_pid_blocks_want(const hw_pid_blocks *b, int64_t now_ns)
{
	if (b->pf_first != b->pf_end)
		return 0; /* the next block is already here */
	if (b->in_flight && now_ns - b->sent_ns < HW_PID_BLOCK_RETRY_NS)
		return 0;
	int64_t left = b->end - b->next;
	/* Kafka's RPCProducerIdManager: prefetch once 90 % is used */
	return left <= 0 || left * 10 <= b->block_len;
}

void hw_pid_blocks_sent(hw_pid_blocks *b, int64_t now_ns)
{
	b->in_flight = 1;
	b->sent_ns = now_ns;
}

int hw_pid_blocks_on_resp(hw_pid_blocks *b, const hw_alloc_pids_resp *r)
{
	if (r->error != HW_ERR_NONE || r->first_id < 0 || r->count <= 0 || r->first_id > INT64_MAX - r->count) {
		/* stays "in flight": asked again after the retry time, not at
		 * once (no request storm while the controller refuses) */
		b->rejected++;
		return -EINVAL;
	}
	int64_t first = r->first_id, end = r->first_id + r->count;
	if (b->pf_first != b->pf_end || (first < b->end && end > b->next)) {
		b->rejected++; /* a duplicate answer (retry) or an overlap: keep what we have */
		return -EINVAL;
	}
	b->in_flight = 0;
	b->pf_first = first;
	b->pf_end = end;
	b->blocks++;
	roll(b);
	return 0;
}
