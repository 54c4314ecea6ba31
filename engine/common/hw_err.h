/* hw_err.h — hiwater's error codes: Kafka's protocol error codes, one table.
 *
 * Codes travel on the wire as int16 exactly as Kafka numbers them
 * (clients/src/main/java/org/apache/kafka/common/protocol/Errors.java), so a
 * packet capture or a Kafka-literate user reads them without translation.
 * Local (non-protocol) failures use negative errno values, never this table.
 */
#ifndef HW_ERR_H
#define HW_ERR_H
#include <stdint.h>

/* X(NAME, kafka_code, retriable) */
#define HW_ERR_TABLE(X)                                   \
	X(UNKNOWN_SERVER_ERROR,               -1, 0)      \
	X(NONE,                                0, 0)      \
	X(OFFSET_OUT_OF_RANGE,                 1, 0)      \
	X(CORRUPT_MESSAGE,                     2, 1)      \
	X(UNKNOWN_TOPIC_OR_PARTITION,          3, 1)      \
	X(INVALID_FETCH_SIZE,                  4, 0)      \
	X(LEADER_NOT_AVAILABLE,                5, 1)      \
	X(NOT_LEADER_OR_FOLLOWER,              6, 1)      \
	X(REQUEST_TIMED_OUT,                   7, 1)      \
	X(BROKER_NOT_AVAILABLE,                8, 0)      \
	X(REPLICA_NOT_AVAILABLE,               9, 1)      \
	X(MESSAGE_TOO_LARGE,                  10, 0)      \
	X(OFFSET_METADATA_TOO_LARGE,          12, 0)      \
	X(NETWORK_EXCEPTION,                  13, 1)      \
	X(COORDINATOR_LOAD_IN_PROGRESS,       14, 1)      \
	X(COORDINATOR_NOT_AVAILABLE,          15, 1)      \
	X(NOT_COORDINATOR,                    16, 1)      \
	X(RECORD_LIST_TOO_LARGE,              18, 0)      \
	X(NOT_ENOUGH_REPLICAS,                19, 1)      \
	X(NOT_ENOUGH_REPLICAS_AFTER_APPEND,   20, 1)      \
	X(INVALID_REQUIRED_ACKS,              21, 0)      \
	X(ILLEGAL_GENERATION,                 22, 0)      \
	X(INCONSISTENT_GROUP_PROTOCOL,        23, 0)      \
	X(INVALID_GROUP_ID,                   24, 0)      \
	X(UNKNOWN_MEMBER_ID,                  25, 0)      \
	X(INVALID_SESSION_TIMEOUT,            26, 0)      \
	X(REBALANCE_IN_PROGRESS,              27, 0)      \
	X(INVALID_COMMIT_OFFSET_SIZE,         28, 0)      \
	X(UNSUPPORTED_VERSION,                35, 0)      \
	X(TOPIC_ALREADY_EXISTS,               36, 0)      \
	X(INVALID_PARTITIONS,                 37, 0)      \
	X(INVALID_REPLICATION_FACTOR,         38, 0)      \
	X(INVALID_REPLICA_ASSIGNMENT,         39, 0)      \
	X(INVALID_CONFIG,                     40, 0)      \
	X(NOT_CONTROLLER,                     41, 1)      \
	X(INVALID_REQUEST,                    42, 0)      \
	X(OUT_OF_ORDER_SEQUENCE_NUMBER,       45, 0)      \
	X(DUPLICATE_SEQUENCE_NUMBER,          46, 0)      \
	X(INVALID_PRODUCER_EPOCH,             47, 0)      \
	X(OPERATION_NOT_ATTEMPTED,            55, 0)      \
	X(KAFKA_STORAGE_ERROR,                56, 1)      \
	X(UNKNOWN_PRODUCER_ID,                59, 0)      \
	X(NON_EMPTY_GROUP,                    68, 0)      \
	X(GROUP_ID_NOT_FOUND,                 69, 0)      \
	X(TOPIC_DELETION_DISABLED,            73, 0)      \
	X(FENCED_LEADER_EPOCH,                74, 1)      \
	X(UNKNOWN_LEADER_EPOCH,               75, 1)      \
	X(UNSUPPORTED_COMPRESSION_TYPE,       76, 0)      \
	X(STALE_BROKER_EPOCH,                 77, 0)      \
	X(MEMBER_ID_REQUIRED,                 79, 0)      \
	X(GROUP_MAX_SIZE_REACHED,             81, 0)      \
	X(FENCED_INSTANCE_ID,                 82, 0)      \
	X(INVALID_RECORD,                     87, 0)      \
	X(INVALID_UPDATE_VERSION,             95, 0)      \
	X(UNKNOWN_TOPIC_ID,                  100, 1)      \
	X(INELIGIBLE_REPLICA,                107, 0)      \
	X(NEW_LEADER_ELECTED,                108, 1)

typedef enum hw_err {
#define HW_ERR_ENUM(name, code, retriable) HW_ERR_##name = (code),
	HW_ERR_TABLE(HW_ERR_ENUM)
#undef HW_ERR_ENUM
} hw_err;

/* Name of a code ("NOT_ENOUGH_REPLICAS"); "UNKNOWN_ERROR_CODE" if not in the table. Never NULL. */
const char *hw_err_name(int code);
/* 1 if Kafka clients retry this code, 0 otherwise (also for unknown codes). */
int hw_err_retriable(int code);
/* 1 if code is in the table. */
int hw_err_known(int code);

#endif
