/* hw_group_log.h — the coordinator's view of `__consumer_offsets`: append a
 * record batch to one of its partitions with acks=all and learn the outcome
 * later; read that partition's log from an offset (to rebuild the groups when
 * this broker becomes the partition's leader).
 *
 * Design note. The coordinator never touches the replication engine directly:
 * in a broker this interface is bound to the partition's leader append path
 * (acks=all, so a commit is answered only once it is in every in-sync
 * replica, docs/groups.md "Durability"); in tests it is hw_group_memlog.h.
 * Both calls are made on the coordinator's own thread; the append completion
 * may run inside append (synchronously) or later from the same thread's
 * loop, never concurrently with another coordinator call.
 */
#ifndef HW_GROUP_LOG_H
#define HW_GROUP_LOG_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* err: a Kafka error code (hw_err.h): NONE, or e.g. NOT_LEADER_OR_FOLLOWER,
 * NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT, MESSAGE_TOO_LARGE,
 * KAFKA_STORAGE_ERROR. base_offset: offset given to the batch's first
 * record (-1 on error). */
typedef void (*hw_glog_done_fn)(void *ctx, int err, int64_t base_offset);

typedef struct hw_glog hw_glog;
struct hw_glog {
	/* Append one uncompressed RecordBatch (magic 2, as hw_batch_build
	 * writes it; the log stamps baseOffset and the leader epoch) to
	 * partition p with acks=all. Returns 0 and calls done exactly once
	 * (possibly before returning), or returns -errno (-ENOENT: partition
	 * not led here, -ENOMEM, -EINVAL) and never calls done. The log copies
	 * the batch before returning. */
	int (*append)(hw_glog *l, int32_t p, const void *batch, size_t len,
		      hw_glog_done_fn done, void *ctx);
	/* Copy whole batches of partition p, starting with the batch that
	 * holds `offset`, up to the high watermark, into buf[0..cap). Returns
	 * bytes copied (0 at the end of the committed log, or when cap is too
	 * small for the next batch and *need says how many bytes it needs), or
	 * -errno (-ENOENT: partition not here). */
	ssize_t (*read)(hw_glog *l, int32_t p, int64_t offset, void *buf, size_t cap,
			size_t *need);
};

#endif
