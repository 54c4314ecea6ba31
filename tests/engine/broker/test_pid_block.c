/* test_pid_block.c — the broker's producer id blocks (engine/broker/
 * hw_pid_block.h, docs/kafka.md "InitProducerId"): no id before the first
 * block (COORDINATOR_LOAD_IN_PROGRESS upstream), ids in order from the
 * block, the next block asked for once 90 % is used and taken over without
 * a gap in service, one request in flight (again after the retry time,
 * also after an error answer), error and duplicate answers refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "hw_err.h"
#include "hw_pid_block.h"

static hw_alloc_pids_resp block(int64_t first)
{
	return (hw_alloc_pids_resp){ .error = HW_ERR_NONE, .first_id = first, .count = HW_PRODUCER_ID_BLOCK };
}

static void test_blocks(void **st)
{
	(void)st;
	hw_pid_blocks b;
	hw_pid_blocks_init(&b);
	int64_t now = 1;
	assert_int_equal(hw_pid_blocks_take(&b), -EAGAIN);
	assert_true(hw_pid_blocks_want(&b, now));
	hw_pid_blocks_sent(&b, now);
	assert_false(hw_pid_blocks_want(&b, now + 1)); /* one in flight */
	assert_true(hw_pid_blocks_want(&b, now + HW_PID_BLOCK_RETRY_NS)); /* lost: again */
	hw_alloc_pids_resp r = block(5000);
	assert_int_equal(hw_pid_blocks_on_resp(&b, &r), 0);
	assert_int_equal(hw_pid_blocks_take(&b), 5000);
	assert_false(hw_pid_blocks_want(&b, now));
	/* 899 more: 100 left, the prefetch point (Kafka's 90 %) */
	for (int i = 1; i < 900; i++) {
		assert_int_equal(hw_pid_blocks_take(&b), 5000 + i);
		if (i < 899)
			assert_false(hw_pid_blocks_want(&b, now));
	}
	assert_true(hw_pid_blocks_want(&b, now));
	hw_pid_blocks_sent(&b, now);
	/* a late duplicate of an answer overlapping what we hold: refused */
	r = block(5500);
	assert_int_equal(hw_pid_blocks_on_resp(&b, &r), -EINVAL);
	r = (hw_alloc_pids_resp){ .error = HW_ERR_STALE_BROKER_EPOCH, .first_id = -1 };
	assert_int_equal(hw_pid_blocks_on_resp(&b, &r), -EINVAL);
	assert_false(hw_pid_blocks_want(&b, now)); /* refused: not again at once ... */
	now += HW_PID_BLOCK_RETRY_NS;
	assert_true(hw_pid_blocks_want(&b, now)); /* ... but after the retry time */
	hw_pid_blocks_sent(&b, now);
	r = block(9000);
	assert_int_equal(hw_pid_blocks_on_resp(&b, &r), 0);
	assert_false(hw_pid_blocks_want(&b, now)); /* the next block is at hand */
	r = block(20000);
	assert_int_equal(hw_pid_blocks_on_resp(&b, &r), -EINVAL); /* one prefetched block at most */
	for (int i = 900; i < 1000; i++)
		assert_int_equal(hw_pid_blocks_take(&b), 5000 + i);
	assert_int_equal(hw_pid_blocks_take(&b), 9000); /* the prefetched block, no gap in service */
	assert_int_equal(b.blocks, 2);
	assert_int_equal(b.rejected, 3);
	assert_false(hw_pid_blocks_want(&b, now));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
