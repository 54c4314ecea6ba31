/* hw_group_memlog.h — an in-memory hw_glog for tests (and a broker without
 * replication wiring): per partition, the batches back to back, offsets
 * stamped as a leader would. Appends complete at once, or are held until the
 * test releases them (a slow ISR), or fail with a chosen Kafka error.
 */
#ifndef HW_GROUP_MEMLOG_H
#define HW_GROUP_MEMLOG_H
#include "hw_group_log.h"

typedef struct hw_gmemlog hw_gmemlog;

/* 0 and *out (partitions 0..nparts-1, all led here), -EINVAL, -ENOMEM. */
int hw_gmemlog_create(int32_t nparts, hw_gmemlog **out);
void hw_gmemlog_free(hw_gmemlog *m);
hw_glog *hw_gmemlog_log(hw_gmemlog *m);

/* hold = 1: appends are stored but their completions wait for
 * hw_gmemlog_release; 0: later appends complete inside append. */
void hw_gmemlog_hold(hw_gmemlog *m, int hold);
/* Complete every held append (in order) with err (NONE stores the batch;
 * any other code drops it, as a failed acks=all append is not in the log).
 * Returns how many completed. */
int hw_gmemlog_release(hw_gmemlog *m, int err);
/* The next n appends complete with err without being stored. */
void hw_gmemlog_fail_next(hw_gmemlog *m, int n, int err);
/* Partition p not led here (-ENOENT from append/read) when gone = 1. */
void hw_gmemlog_set_gone(hw_gmemlog *m, int32_t p, int gone);
/* Records in partition p's log (sum of the batches' record counts). */
int64_t hw_gmemlog_end_offset(hw_gmemlog *m, int32_t p);

#endif
