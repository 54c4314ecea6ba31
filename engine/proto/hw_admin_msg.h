/* hw_admin_msg.h — the admin and controller messages that hw_msg.h names but
 * does not define: Metadata, CreateTopic, DescribeTopic, BrokerRegister,
 * BrokerHeartbeat and their responses. They travel in hw_msg.u.other; the
 * message type says which struct it points to:
 *
 *   HW_MSG_METADATA              -> const hw_metadata_req *
 *   HW_MSG_METADATA_RESP         -> const hw_metadata_resp *
 *   HW_MSG_CREATE_TOPIC          -> const hw_create_topic_req *
 *   HW_MSG_CREATE_TOPIC_RESP     -> const hw_create_topic_resp *
 *   HW_MSG_DESCRIBE_TOPIC        -> const hw_describe_topic_req *
 *   HW_MSG_DESCRIBE_TOPIC_RESP   -> const hw_describe_topic_resp *
 *   HW_MSG_BROKER_REGISTER       -> const hw_broker_register_req *
 *   HW_MSG_BROKER_HEARTBEAT      -> const hw_broker_heartbeat_req *
 *   HW_MSG_BROKER_HEARTBEAT_RESP -> const hw_broker_heartbeat_resp *
 *   HW_MSG_ALTER_CONFIG          -> const hw_alter_config_req *
 *   HW_MSG_ALTER_CONFIG_RESP     -> const hw_alter_config_resp *
 *   HW_MSG_DELETE_TOPIC          -> const hw_delete_topic_req *
 *   HW_MSG_DELETE_TOPIC_RESP     -> const hw_delete_topic_resp *
 *   HW_MSG_ALLOCATE_PRODUCER_IDS -> const hw_alloc_pids_req *
 *   HW_MSG_ALLOCATE_PRODUCER_IDS_RESP -> const hw_alloc_pids_resp *
 *
 * A BROKER_REGISTER is answered with a BROKER_HEARTBEAT_RESP carrying the
 * new broker epoch (Kafka's BrokerRegistrationResponse has only error +
 * broker epoch, a subset of the heartbeat response), so the message table
 * needs no extra id.
 *
 * Strings are fixed-size NUL-terminated arrays (no ownership questions; the
 * decoder always NUL-terminates and rejects over-long strings). Arrays are
 * borrowed pointers, valid for the call that delivers or sends the message
 * (same rule as hw_msg.h). Kafka correspondence: MetadataResponse v12,
 * CreateTopicsRequest v7 (one topic per request), DescribeTopicPartitions
 * (plus HW/LEO, which Kafka exposes only via ListOffsets/JMX),
 * BrokerRegistrationRequest v3, BrokerHeartbeatRequest v1.
 */
#ifndef HW_ADMIN_MSG_H
#define HW_ADMIN_MSG_H
#include <stdint.h>
#include "hw_types.h"

/* HW_TOPIC_NAME_MAX (hw_types.h): topic name buffers, as hw_partition_state.topic */
#define HW_CONFIG_KEY_MAX   64   /* incl. NUL */
#define HW_CONFIG_VALUE_MAX 128  /* incl. NUL */
#define HW_ENDPOINT_MAX     96   /* incl. NUL: "udp:127.0.0.1:9093", "dpdk:port=net_memif3,..." */
#define HW_ERRMSG_MAX       384  /* incl. NUL */

typedef struct hw_topic_name {
	char s[HW_TOPIC_NAME_MAX];
} hw_topic_name;

/* One topic config override, e.g. {"min.insync.replicas", "2"}. */
typedef struct hw_config_kv {
	char key[HW_CONFIG_KEY_MAX];
	char value[HW_CONFIG_VALUE_MAX];
} hw_config_kv;

/* ---- Metadata (client/broker -> controller or any broker) */
typedef struct hw_metadata_req {
	uint16_t n_topics;             /* 0: all topics */
	const hw_topic_name *topics;
} hw_metadata_req;

/* Broker registration state as the controller sees it. */
#define HW_BROKER_STATE_TABLE(X) \
	X(UNKNOWN, 0)            \
	X(FENCED, 1)             \
	X(ACTIVE, 2)             \
	X(SHUTTING_DOWN, 3)
typedef enum hw_broker_state {
#define HW_BROKER_STATE_ENUM(n, v) HW_BROKER_##n = (v),
	HW_BROKER_STATE_TABLE(HW_BROKER_STATE_ENUM)
#undef HW_BROKER_STATE_ENUM
} hw_broker_state;
const char *hw_broker_state_name(int s); /* never NULL */

/* A broker's client listeners (Kafka's `advertised.listeners`): name
 * "PLAINTEXT", value "HOST:PORT". hiwater brokers have at most one. Carried
 * as wire trailers of BROKER_REGISTER and METADATA_RESP (hw_wire.h). */
#define HW_LISTENER_NAME_MAX 32   /* incl. NUL */
#define HW_MAX_LISTENERS     2
typedef struct hw_listener {
	char name[HW_LISTENER_NAME_MAX];
	char value[HW_ENDPOINT_MAX];
} hw_listener;

/* A broker's rack (Kafka's `broker.rack`; "" = none). Carried as the wire
 * trailer after the listeners of BROKER_REGISTER and METADATA_RESP
 * (hw_wire.h, docs/racks.md). */
/* HW_RACK_MAX: hw_types.h */

typedef struct hw_broker_info {
	int32_t id;
	int64_t broker_epoch;          /* -1 unknown */
	uint8_t state;                 /* hw_broker_state */
	char control_ep[HW_ENDPOINT_MAX];  /* "udp:127.0.0.1:PORT" */
	char data_ep[HW_ENDPOINT_MAX];     /* "udp:HOST:PORT" or "dpdk:..." ("" unknown) */
	uint16_t n_listeners;              /* METADATA_RESP trailer; 0 for old controllers */
	hw_listener listeners[HW_MAX_LISTENERS];
	char rack[HW_RACK_MAX];            /* METADATA_RESP trailer; "" none */
} hw_broker_info;

/* Per-partition view. Metadata fills leader/replicas/ISR/ELR/epochs and
 * sets high_watermark/log_end_offset/log_start_offset to -1; DescribeTopic
 * (answered by the partition's leader, or aggregated by the CLI) fills them. */
typedef struct hw_partition_meta {
	uint32_t partition;
	int16_t error;                 /* hw_err code, per partition */
	int32_t leader;                /* -1 offline */
	int32_t leader_epoch;
	int32_t partition_epoch;
	uint8_t leader_recovery_state; /* HW_LRS_* */
	hw_idset replicas;
	hw_idset isr;
	hw_idset elr;
	hw_idset last_known_elr;
	int64_t high_watermark;        /* -1 unknown */
	int64_t log_end_offset;        /* -1 unknown */
	int64_t log_start_offset;      /* -1 unknown */
} hw_partition_meta;

typedef struct hw_topic_meta {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t topic_id;             /* id used in hw_tp on the data path */
	int16_t error;                 /* UNKNOWN_TOPIC_OR_PARTITION, ... */
	uint32_t n_parts;
	const hw_partition_meta *parts;
	uint16_t n_configs;            /* overrides in force */
	const hw_config_kv *configs;
} hw_topic_meta;

typedef struct hw_metadata_resp {
	int16_t error;
	int32_t controller_id;
	int64_t metadata_offset;       /* controller's metadata log offset of this view */
	uint16_t n_brokers;
	const hw_broker_info *brokers;
	uint16_t n_topics;
	const hw_topic_meta *topics;
	/* trailer after the topics (ZooKeeper mode, > 0): the controller epoch
	 * of controller_id as the answering node knows it; 0 absent/embedded */
	int32_t controller_epoch;
} hw_metadata_resp;

/* ---- CreateTopic (admin -> controller), one topic per request */
typedef struct hw_create_topic_req {
	char name[HW_TOPIC_NAME_MAX];
	int32_t partitions;            /* -1: num.partitions default */
	int16_t replication_factor;    /* -1: default.replication.factor */
	int32_t timeout_ms;
	uint8_t validate_only;
	uint16_t n_configs;
	const hw_config_kv *configs;
	/* trailer: an explicit assignment (Kafka's CreatableTopic.assignments,
	 * `--replica-assignment`): partition p's replicas, leader first; with
	 * it partitions and replication_factor are -1 (docs/racks.md) */
	uint32_t n_assignments;
	const hw_idset *assignments;
} hw_create_topic_req;

typedef struct hw_create_topic_resp {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t topic_id;             /* 0 on error */
	int16_t error;                 /* TOPIC_ALREADY_EXISTS, INVALID_REPLICATION_FACTOR, ... */
	char error_message[HW_ERRMSG_MAX];
	int32_t partitions;
	int16_t replication_factor;
} hw_create_topic_resp;

/* ---- DescribeTopic (admin -> controller for assignment, -> brokers for HW/LEO) */
typedef struct hw_describe_topic_req {
	uint16_t n_topics;             /* 0: all topics */
	const hw_topic_name *topics;
} hw_describe_topic_req;

typedef struct hw_describe_topic_resp {
	int16_t error;
	int32_t responder_id;          /* node that answered (leader's HW/LEO are authoritative) */
	uint16_t n_topics;
	const hw_topic_meta *topics;
} hw_describe_topic_resp;

/* ---- BrokerRegister (broker -> controller, at start) */
typedef struct hw_broker_register_req {
	int32_t broker_id;
	uint64_t incarnation_id;       /* random per process start */
	int64_t previous_broker_epoch; /* from .kafka_cleanshutdown; -1 after a crash */
	int64_t metadata_offset;       /* last metadata offset the broker applied, -1 */
	char control_ep[HW_ENDPOINT_MAX];
	char data_ep[HW_ENDPOINT_MAX];
	uint16_t n_listeners;          /* trailer: the broker's Kafka listeners */
	hw_listener listeners[HW_MAX_LISTENERS];
	char rack[HW_RACK_MAX];        /* trailer after the listeners: broker.rack, "" none */
} hw_broker_register_req;

/* ---- BrokerHeartbeat (broker -> controller, every broker.heartbeat.interval.ms) */
typedef struct hw_broker_heartbeat_req {
	int32_t broker_id;
	int64_t broker_epoch;
	int64_t metadata_offset;       /* current metadata offset the broker applied */
	uint8_t want_fence;
	uint8_t want_shutdown;         /* controlled shutdown in progress */
	/* trailer, present iff offline_dirs > 0 (docs/logdirs.md, Kafka's
	 * BrokerHeartbeat OfflineLogDirs): how many of the broker's log.dirs
	 * are offline, and every replica whose log lives on one of them
	 * (at most HW_MAX_OFFLINE_REPLICAS; borrowed array) */
	uint16_t offline_dirs;
	uint16_t n_offline;
	const hw_tp *offline;
} hw_broker_heartbeat_req;

/* Replicas one heartbeat may report offline (8 bytes each on the wire). */
#define HW_MAX_OFFLINE_REPLICAS 1024

/* Answers both BROKER_REGISTER and BROKER_HEARTBEAT. */
typedef struct hw_broker_heartbeat_resp {
	int16_t error;                 /* STALE_BROKER_EPOCH, NOT_CONTROLLER, ... */
	int64_t broker_epoch;          /* assigned at registration; echoed afterwards */
	uint8_t is_caught_up;
	uint8_t is_fenced;
	uint8_t should_shut_down;
	int32_t controller_epoch;      /* trailer: the answering controller's epoch (0: embedded/old) */
	/* trailer after the epoch, NOT_CONTROLLER only: the active controller
	 * a standby redirects to (-1: unknown or absent) */
	int32_t active_controller_id;
} hw_broker_heartbeat_resp;

/* ---- AlterConfig (admin -> controller): runtime topic config change of
 * one topic, Kafka's IncrementalAlterConfigs (SET, DELETE) or, with
 * `replace`, AlterConfigs. The controller validates every entry first (any
 * key of engine/iface/hw_topic_config.h) and applies all or none
 * (hw_ctrl_alter_configs). */
typedef struct hw_alter_config_req {
	char name[HW_TOPIC_NAME_MAX];
	uint16_t n_configs;
	const hw_config_kv *configs;
	/* trailer (present iff any is set): u8 flags (1 replace, 2
	 * validate_only), u16 n, n x {str key, str value ""} (deletes) */
	uint8_t replace;               /* Kafka's AlterConfigs: the entries are the whole set */
	uint8_t validate_only;
	uint16_t n_deletes;
	const hw_config_kv *deletes;   /* keys to remove (values ignored) */
} hw_alter_config_req;

typedef struct hw_alter_config_resp {
	char name[HW_TOPIC_NAME_MAX];
	int16_t error;                 /* NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG */
	char error_message[HW_ERRMSG_MAX];
} hw_alter_config_resp;

/* ---- DeleteTopic (admin/broker -> controller), one topic per request:
 * Kafka's DeleteTopics (by name, or by id as DeleteTopics v6). The
 * controller answers once the deletion record is durable (KRaft's
 * behaviour); brokers learn it from PARTITION_STATE pushes with `deleted`
 * set (hw_msg.h). Codec: hw_wire_ctrl.c. */
typedef struct hw_delete_topic_req {
	char name[HW_TOPIC_NAME_MAX];  /* "" when topic_id is given */
	uint32_t topic_id;             /* 0: by name */
	int32_t timeout_ms;
} hw_delete_topic_req;

typedef struct hw_delete_topic_resp {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t topic_id;             /* the deleted topic's id, 0 on error */
	int16_t error;                 /* NONE, UNKNOWN_TOPIC_OR_PARTITION, TOPIC_DELETION_DISABLED, ... */
	char error_message[HW_ERRMSG_MAX];
} hw_delete_topic_resp;

/* ---- AllocateProducerIds (broker -> controller; Kafka's KIP-730): a
 * block of `count` producer ids starting at first_id, never handed out
 * before by any controller (the block is in the metadata store first). */
typedef struct hw_alloc_pids_req {
	int32_t broker_id;
	int64_t broker_epoch;
} hw_alloc_pids_req;

#define HW_PRODUCER_ID_BLOCK 1000      /* Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE */

typedef struct hw_alloc_pids_resp {
	int16_t error;                 /* NONE, STALE_BROKER_EPOCH, UNKNOWN_SERVER_ERROR, ... */
	int64_t first_id;              /* -1 on error */
	int32_t count;                 /* 0 on error, else 1..HW_PRODUCER_ID_BLOCK */
} hw_alloc_pids_resp;

#endif
