/* hw_log_tconf.c — a log's per-topic configuration: the topic configs a
 * replica's log reads, laid over the broker-wide config it was opened with
 * (hw_log.h hw_log_set_topic_config; docs/kafka.md "Topic configuration"). */
#include <string.h>
#include "hw_log_clean.h"
#include "hw_log_int.h"
#include "hw_logging.h"

/* tc's value of id if set, else the base config's. */
#define PICK(id, field, base) ((tc->set & (1u << HW_TC_##id)) ? tc->v[HW_TC_##id] : (base)->field)

int hw_log_set_topic_config(hw_log *log, const hw_topic_config *tc)
{
	const hw_log_config *b = &log->base_cfg;
	hw_log_config n = log->cfg;
	n.cleanup_policy = (int)PICK(CLEANUP_POLICY, cleanup_policy, b);
	n.retention_ms = PICK(RETENTION_MS, retention_ms, b);
	n.retention_bytes = PICK(RETENTION_BYTES, retention_bytes, b);
	n.segment_bytes = PICK(SEGMENT_BYTES, segment_bytes, b);
	n.roll_ms = PICK(SEGMENT_MS, roll_ms, b);
	n.index_size_max_bytes = (int32_t)PICK(SEGMENT_INDEX_BYTES, index_size_max_bytes, b);
	n.index_interval_bytes = (int32_t)PICK(INDEX_INTERVAL_BYTES, index_interval_bytes, b);
	n.flush_messages = PICK(FLUSH_MESSAGES, flush_messages, b);
	n.flush_ms = PICK(FLUSH_MS, flush_ms, b);
	n.delete_retention_ms = PICK(DELETE_RETENTION_MS, delete_retention_ms, b);
	n.min_compaction_lag_ms = PICK(MIN_COMPACTION_LAG_MS, min_compaction_lag_ms, b);
	n.max_compaction_lag_ms = PICK(MAX_COMPACTION_LAG_MS, max_compaction_lag_ms, b);
	n.preallocate = (int)PICK(PREALLOCATE, preallocate, b);
	n.min_cleanable_dirty_ratio = (tc->set & (1u << HW_TC_MIN_CLEANABLE_DIRTY_RATIO)) ?
				      hw_tc_ratio(tc->v[HW_TC_MIN_CLEANABLE_DIRTY_RATIO]) :
				      b->min_cleanable_dirty_ratio;
	if (memcmp(&n, &log->cfg, sizeof(n)) == 0)
		return 0;
	HW_LOG(DEBUG, HW_LOG_MOD, "%s: cleanup.policy %s, segment.bytes %lld, retention.ms %lld, "
	       "min.cleanable.dirty.ratio %g", log->dir, hw_log_cleanup_policy_name(n.cleanup_policy),
	       (long long)n.segment_bytes, (long long)n.retention_ms, n.min_cleanable_dirty_ratio);
	log->cfg = n;
	return 1;
}

const hw_log_config *hw_log_get_config(const hw_log *log) { return &log->cfg; }

int hw_log_st_set_topic_config(hw_store *s, const hw_topic_config *tc)
{
	return hw_log_set_topic_config((hw_log *)s, tc);
}
