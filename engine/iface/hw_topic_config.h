/* hw_topic_config.h — per-topic configuration (Kafka's topic-level config
 * names, docs/kafka.md "Topic configuration").
 *
 * One table names every topic config hiwater honours: its Kafka name, the
 * broker-wide key it overrides (Kafka's "synonym"), its value type and the
 * range the broker schema gives the broker key (apps/hiwaterd's schema;
 * tests/apps check that the two agree). The controller keeps the values
 * users set as strings (what DescribeConfigs shows); brokers get them
 * parsed (hw_topic_config) with every PARTITION_STATE, and each replica's
 * log applies the ones it reads (engine/log hw_log_set_topic_config),
 * falling back to the broker-wide value for the keys not set.
 *
 * X(ID, "topic.name", "broker.synonym", TYPE, min, max, where)
 *   TYPE   I64 (decimal integer in [min, max], also -1 when min is 1 and
 *          the row says ORNEG1), BOOL ("true"/"false"), RATIO (a number in
 *          [0, 1]), POLICY (cleanup.policy: delete, compact or both),
 *          COMPRESSION (Kafka's codec names; only "producer" is served)
 *   where  LOG: the replica's log / replica manager reads it (carried by
 *          PARTITION_STATE); CTRL: the controller applies it (it has its own
 *          PARTITION_STATE fields or is resolved per partition).
 * Ids are on the wire (PARTITION_STATE's topic config trailer): append
 * only, never reuse one.
 */
#ifndef HW_TOPIC_CONFIG_H
#define HW_TOPIC_CONFIG_H
#include <stddef.h>
#include <stdint.h>

#define HW_TC_TABLE(X)                                                                                        \
	X(CLEANUP_POLICY, "cleanup.policy", "log.cleanup.policy", POLICY, 0, 0, LOG)                          \
	X(RETENTION_MS, "retention.ms", "log.retention.ms", ORNEG1, 1, INT64_MAX, LOG)                       \
	X(RETENTION_BYTES, "retention.bytes", "log.retention.bytes", I64, -1, INT64_MAX, LOG)                 \
	X(SEGMENT_BYTES, "segment.bytes", "log.segment.bytes", I64, 14, INT32_MAX, LOG)                      \
	X(SEGMENT_MS, "segment.ms", "log.roll.ms", I64, 1, INT64_MAX, LOG)                                    \
	X(SEGMENT_INDEX_BYTES, "segment.index.bytes", "log.index.size.max.bytes", I64, 4, INT32_MAX, LOG)    \
	X(INDEX_INTERVAL_BYTES, "index.interval.bytes", "log.index.interval.bytes", I64, 0, INT32_MAX, LOG)  \
	X(FLUSH_MESSAGES, "flush.messages", "log.flush.interval.messages", I64, 1, INT64_MAX, LOG)           \
	X(FLUSH_MS, "flush.ms", "log.flush.interval.ms", I64, 0, INT64_MAX, LOG)                             \
	X(DELETE_RETENTION_MS, "delete.retention.ms", "log.cleaner.delete.retention.ms", I64, 0, INT64_MAX, LOG) \
	X(MIN_COMPACTION_LAG_MS, "min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", I64, 0,       \
	  INT64_MAX, LOG)                                                                                       \
	X(MAX_COMPACTION_LAG_MS, "max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", I64, 1,       \
	  INT64_MAX, LOG)                                                                                       \
	X(MIN_CLEANABLE_DIRTY_RATIO, "min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio", RATIO, 0, \
	  0, LOG)                                                                                               \
	X(PREALLOCATE, "preallocate", "log.preallocate", BOOL, 0, 1, LOG)                                     \
	X(MAX_MESSAGE_BYTES, "max.message.bytes", "message.max.bytes", I64, 0, INT32_MAX, LOG)               \
	X(MIN_INSYNC_REPLICAS, "min.insync.replicas", "min.insync.replicas", I64, 1, INT16_MAX, CTRL)        \
	X(UNCLEAN_LEADER_ELECTION, "unclean.leader.election.enable", "unclean.leader.election.enable", BOOL, 0, \
	  1, CTRL)                                                                                              \
	X(COMPRESSION_TYPE, "compression.type", "compression.type", COMPRESSION, 0, 0, CTRL)                 \
	X(LEADER_THROTTLED, "leader.replication.throttled.replicas", "", THROTTLE, 0, 0, CTRL)                \
	X(FOLLOWER_THROTTLED, "follower.replication.throttled.replicas", "", THROTTLE, 0, 0, CTRL)

typedef enum hw_tc_id {
#define HW_TC_ENUM(id, ...) HW_TC_##id,
	HW_TC_TABLE(HW_TC_ENUM)
#undef HW_TC_ENUM
	HW_TC_COUNT
} hw_tc_id;

/* Value types (the TYPE column). */
#define HW_TC_TYPES(X) X(I64) X(ORNEG1) X(BOOL) X(RATIO) X(POLICY) X(COMPRESSION) X(THROTTLE)
typedef enum hw_tc_type {
#define HW_TC_TYPE_ENUM(t) HW_TC_T_##t,
	HW_TC_TYPES(HW_TC_TYPE_ENUM)
#undef HW_TC_TYPE_ENUM
} hw_tc_type;

/* cleanup.policy bits (the same as engine/log's HW_LOG_CLEANUP_*) */
#define HW_TC_POLICY_DELETE  1
#define HW_TC_POLICY_COMPACT 2

typedef struct hw_tc_def {
	const char *name;       /* Kafka's topic config name */
	const char *synonym;    /* the broker-wide key it overrides ("" none) */
	uint8_t type;           /* hw_tc_type */
	uint8_t log;            /* 1: LOG (carried to replicas), 0: CTRL */
	int64_t min, max;       /* I64/ORNEG1 range */
} hw_tc_def;

/* The row of id (0..HW_TC_COUNT-1), NULL otherwise. */
const hw_tc_def *hw_tc_def_of(int id);
/* The id of a topic config name, or -ENOENT. */
int hw_tc_lookup(const char *name);

/* Parsed topic configs: bit i of `set` says v[i] holds topic config i
 * (I64/ORNEG1/BOOL: the number; POLICY: HW_TC_POLICY_* bits; RATIO: the
 * double's bits, see hw_tc_ratio). Unset entries are 0. */
typedef struct hw_topic_config {
	uint32_t set;
	int64_t v[HW_TC_COUNT];
} hw_topic_config;

/* Validate `value` for topic config `id` and parse it into *out (may be
 * NULL to only validate). 0, or -EINVAL with a Kafka-style reason in why
 * ("Invalid value X for configuration retention.ms: ..."), which may be
 * NULL. THROTTLE values are the controller's to check (always 0 here). */
int hw_tc_parse(int id, const char *value, int64_t *out, char *why, size_t why_len);

/* Set topic config `name` = value in *tc: 0, -ENOENT (unknown key: why
 * says "Unknown topic config name: X"), -EINVAL (bad value). */
int hw_tc_set(hw_topic_config *tc, const char *name, const char *value, char *why, size_t why_len);

/* min.cleanable.dirty.ratio as a double (v of a RATIO entry). */
double hw_tc_ratio(int64_t v);

#endif
