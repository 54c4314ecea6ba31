/* hw_msg.h — the messages brokers, clients and the controller exchange, as
 * decoded C structs. The engine speaks only these; engine/proto encodes them
 * into versioned wire frames (see engine/proto/hw_wire.h), the simulated
 * network of the test harness passes deep copies.
 *
 * Pointers inside a message (records, partition arrays) are borrowed: valid
 * only for the duration of the call that delivers or sends the message. A
 * receiver that keeps anything copies it (or, for records, appends them).
 *
 * Kafka correspondence: Produce v9, Fetch v13+ (replica_id, current leader
 * epoch, last fetched epoch, diverging epoch), OffsetsForLeaderEpoch v4,
 * AlterPartition v3, and a PartitionState push standing in for KRaft's
 * metadata records (PartitionRecord / PartitionChangeRecord).
 */
#ifndef HW_MSG_H
#define HW_MSG_H
#include <stdint.h>
#include "hw_topic_config.h"
#include "hw_types.h"

/* X(NAME, wire_id, plane, owner) — one row per message type; every router
 * reads the row, none lists types of its own.
 *
 *   wire_id  stable; never reuse one.
 *   plane    the endpoint a broker SENDS it on (hw_netmux: hw_netmux_route_plane):
 *              DATA     the data endpoint (hiwater.transport: DPDK or UDP):
 *                       produce, fetch, replication;
 *              CONTROL  the kernel-UDP control endpoint: everything to, from
 *                       or about the controller, and the admin CLI's requests.
 *   owner    who HANDLES it where it is received (apps/hiwaterd/hwd_route.h):
 *              PARTITION  the replica manager of the reactor owning the
 *                         message's partition(s) (hwd_shard_of; a message
 *                         naming partitions of several reactors is split);
 *              NODE       reactor 0's broker role (answers to the broker's own
 *                         requests: registration, metadata, the Kafka
 *                         listener's); a process without the broker role
 *                         ignores it;
 *              VIEW       requests about the cluster: the broker role answers
 *                         from its view; a process without the broker role
 *                         answers from its controller role;
 *              CONTROLLER the controller role (on reactor 0): a broker-only
 *                         process ignores it, a ZooKeeper standby answers
 *                         NOT_CONTROLLER.
 *            One exception is by destination, not type: anything addressed
 *            to the Kafka listener (HW_KSRV_NODE) goes to reactor 0's
 *            listener (apps/hiwaterd/hwd_kafka.h).
 * Adding a type: a new row with a fresh wire id, its plane and owner; a
 * PARTITION row also needs its partition(s) named in hwd_route.c
 * (hwd_route_parts), which its unit test checks for every such row. */
#define HW_MSG_TABLE(X)                                                    \
	X(PRODUCE,                  1, DATA,    PARTITION)                 \
	X(PRODUCE_RESP,             2, DATA,    NODE)                      \
	X(FETCH,                    3, DATA,    PARTITION)                 \
	X(FETCH_RESP,               4, DATA,    PARTITION)                 \
	X(OFFSETS_FOR_EPOCH,        5, DATA,    PARTITION)                 \
	X(OFFSETS_FOR_EPOCH_RESP,   6, DATA,    PARTITION)                 \
	X(ALTER_PARTITION,          7, CONTROL, CONTROLLER)                \
	X(ALTER_PARTITION_RESP,     8, CONTROL, PARTITION)                 \
	X(PARTITION_STATE,          9, CONTROL, PARTITION)                 \
	X(PARTITION_STATE_ACK,     10, CONTROL, CONTROLLER)                \
	X(METADATA,                11, CONTROL, VIEW)                      \
	X(METADATA_RESP,           12, CONTROL, NODE)                      \
	X(CREATE_TOPIC,            13, CONTROL, CONTROLLER)                \
	X(CREATE_TOPIC_RESP,       14, CONTROL, NODE)                      \
	X(DESCRIBE_TOPIC,          15, CONTROL, VIEW)                      \
	X(DESCRIBE_TOPIC_RESP,     16, CONTROL, NODE)                      \
	X(BROKER_REGISTER,         17, CONTROL, CONTROLLER)                \
	X(BROKER_HEARTBEAT,        18, CONTROL, CONTROLLER)                \
	X(BROKER_HEARTBEAT_RESP,   19, CONTROL, NODE)                      \
	X(ALTER_CONFIG,            20, CONTROL, CONTROLLER)                \
	X(ALTER_CONFIG_RESP,       21, CONTROL, NODE)                      \
	X(DELETE_TOPIC,            40, CONTROL, CONTROLLER)                \
	X(DELETE_TOPIC_RESP,       41, CONTROL, NODE)                      \
	X(ALLOCATE_PRODUCER_IDS,   42, CONTROL, CONTROLLER)                \
	X(ALLOCATE_PRODUCER_IDS_RESP, 43, CONTROL, NODE)
/* 22..63 reserved for controller messages (44..47 still free). */

typedef enum hw_msg_type {
#define HW_MSG_ENUM(name, id, plane, owner) HW_MSG_##name = (id),
	HW_MSG_TABLE(HW_MSG_ENUM)
#undef HW_MSG_ENUM
	HW_MSG_TYPE_MAX = 64
} hw_msg_type;

/* The plane and owner columns of HW_MSG_TABLE. X(NAME) */
#define HW_MSG_PLANE_TABLE(X) X(DATA) X(CONTROL)
typedef enum hw_msg_plane {
#define HW_PLANE_ENUM(n) HW_PLANE_##n,
	HW_MSG_PLANE_TABLE(HW_PLANE_ENUM)
#undef HW_PLANE_ENUM
	HW_PLANE__COUNT
} hw_msg_plane;
#define HW_MSG_OWNER_TABLE(X) X(PARTITION) X(NODE) X(VIEW) X(CONTROLLER)
typedef enum hw_msg_owner {
#define HW_OWNER_ENUM(n) HW_OWNER_##n,
	HW_MSG_OWNER_TABLE(HW_OWNER_ENUM)
#undef HW_OWNER_ENUM
	HW_OWNER__COUNT
} hw_msg_owner;

/* The row of `type`: its plane / owner, or -EINVAL for a type not in the
 * table. Never fail for a row's type. */
int hw_msg_plane_of(int type);
int hw_msg_owner_of(int type);
const char *hw_msg_plane_name(int plane); /* never NULL */
const char *hw_msg_owner_name(int owner); /* never NULL */

const char *hw_msg_type_name(int type); /* never NULL */

#define HW_ACKS_NONE   0
#define HW_ACKS_LEADER 1
#define HW_ACKS_ALL    (-1)

/* ---- Produce (one partition per request; batching is inside the records) */
typedef struct hw_produce_req {
	int16_t acks;              /* 0, 1, -1 */
	int32_t timeout_ms;        /* DelayedProduce timeout (request.timeout.ms) */
	hw_tp tp;
	const uint8_t *records;    /* one or more RecordBatch v2 */
	uint32_t records_len;
	/* tag 8: the client asks for the leader's stage timing in the answer
	 * (docs/breakdown.md); 0: untimed, no cost on the leader */
	uint8_t want_timing;
} hw_produce_req;

/* Where an acks=all produce spent its time on the leader, along its
 * critical path (docs/breakdown.md "Stages"); every duration is measured on
 * one clock (the leader's, or the critical follower's for its turnaround),
 * in ns, saturated at UINT32_MAX. X(NAME, JSON key, label) */
#define HW_PT_STAGE_TABLE(X)                                               \
	X(QUEUE,          "queue",         "leader queue")                 \
	X(APPEND,         "append",        "leader append")                \
	X(LEADER_WRITE,   "leader_write",  "leader write (critical)")      \
	X(DISPATCH_WAIT,  "dispatch_wait", "append to fetch answer begun") \
	X(DISPATCH_SEND,  "dispatch_send", "fetch response built and sent") \
	X(FOLLOWER_NET,   "follower_net",  "leader<->follower network")    \
	X(FOLLOWER_WRITE, "follower_write", "follower write")              \
	X(FOLLOWER_SEND,  "follower_send", "follower next fetch")          \
	X(HW_ADVANCE,     "hw_advance",    "fetch received to HW advance") \
	X(RESPOND,        "respond",       "HW advance to response sent")
typedef enum hw_pt_stage {
#define HW_PT_ENUM(n, k, l) HW_PT_##n,
	HW_PT_STAGE_TABLE(HW_PT_ENUM)
#undef HW_PT_ENUM
	HW_PT__COUNT
} hw_pt_stage;

/* Each follower's acknowledgement of a timed record (tag 9 of
 * PRODUCE_RESP): on the leader's clock, append -> the fetch that
 * acknowledged the record received; and the write that follower reported
 * for it (its clock). The critical follower is the largest ack. */
typedef struct hw_follower_ack {
	int32_t id;
	uint32_t ack_ns, write_ns;
} hw_follower_ack;

typedef struct hw_produce_timing {
	uint32_t stage_ns[HW_PT__COUNT];
	/* the replica whose fetch moved the HW past the record; -1: the
	 * leader's own write was last (or no follower) */
	int32_t critical;
} hw_produce_timing;

typedef struct hw_produce_resp {
	hw_tp tp;
	int16_t error;
	int64_t base_offset;       /* -1 on error */
	int64_t log_start_offset;
	/* tag 8: set when the request asked (want_timing) */
	uint8_t has_timing;
	hw_produce_timing timing;
	/* tag 9 (with tag 8): every follower whose acknowledgement of the
	 * record the leader saw, n_acks 0..HW_MAX_RF-1 (0: no tag) */
	uint8_t n_acks;
	hw_follower_ack acks[HW_MAX_RF - 1];
} hw_produce_resp;

/* ---- Fetch (follower: replica_id >= 0; consumer: -1) */
typedef struct hw_fetch_part {
	hw_tp tp;
	int64_t fetch_offset;
	int32_t current_leader_epoch;  /* -1: not checked */
	int32_t last_fetched_epoch;    /* -1: none */
	int64_t log_start_offset;      /* follower's, informational */
	int32_t partition_max_bytes;
} hw_fetch_part;

typedef struct hw_fetch_req {
	int32_t replica_id;
	int64_t replica_epoch;         /* broker epoch of a follower, -1 otherwise */
	int32_t max_wait_ms;
	int32_t min_bytes;
	int32_t max_bytes;             /* response max bytes */
	uint8_t isolation_level;       /* 0 = read_uncommitted */
	uint16_t n_parts;
	const hw_fetch_part *parts;
	/* tag 8: the follower's turnaround since the previous response, which
	 * asked for it (want_turnaround): response received -> its write done,
	 * write done -> this fetch sent (ns on the follower's clock;
	 * docs/breakdown.md) */
	uint8_t has_turnaround;
	uint32_t turn_write_ns, turn_send_ns;
	/* tag 1: the consumer's rack (Kafka Fetch v11 rack_id, client.rack;
	 * "" absent). With it a leader may answer with a preferred read
	 * replica and a follower serves the fetch (docs/racks.md). */
	char rack_id[HW_RACK_MAX];
} hw_fetch_req;

/* One preferred read replica (Kafka Fetch v11 preferred_read_replica). */
typedef struct hw_fetch_preferred {
	hw_tp tp;
	int32_t replica;
} hw_fetch_preferred;

typedef struct hw_fetch_resp_part {
	hw_tp tp;
	int16_t error;
	int64_t high_watermark;
	int64_t log_start_offset;
	int32_t diverging_epoch;       /* -1: no divergence */
	int64_t diverging_end_offset;  /* -1: no divergence */
	int32_t leader_id;             /* current leader known to the responder, -1 */
	int32_t leader_epoch;          /* its epoch, -1 */
	const uint8_t *records;        /* whole batches (may be a prefix: datagram split) */
	uint32_t records_len;
	void *records_ref;             /* zero-copy hold from hw_store_read.ref, or NULL */
	/* Batch piece (docs/wire.md#batch-pieces): piece_batch_len > 0 says
	 * that `records` is not whole batches but bytes [piece_off, piece_off +
	 * records_len) of ONE record batch of piece_batch_len bytes, too large
	 * for a frame. The wire encoder cuts such batches itself (senders leave
	 * both 0, or pass a decoded piece on unchanged); receivers assemble the
	 * pieces (hw_wire_piece.h) and use the batch only once it is whole. */
	uint32_t piece_batch_len;
	uint32_t piece_off;
	int64_t piece_base;            /* that batch's baseOffset */
} hw_fetch_resp_part;

typedef struct hw_fetch_resp {
	int16_t error;                 /* top-level error */
	uint16_t n_parts;
	const hw_fetch_resp_part *parts;
	/* Set by the transport's decoder: a response too large for one frame
	 * is sent as several FETCH_RESP frames with the same correlation id,
	 * all but the last with `more` = 1. Senders leave it 0. */
	uint8_t more;
	/* tag 8: a timed produce waits on this follower: report the
	 * turnaround in the next FETCH (docs/breakdown.md) */
	uint8_t want_turnaround;
	/* tag 2: partitions the consumer should fetch from another replica
	 * (answered without records; docs/racks.md). 0: none. */
	uint16_t n_preferred;
	const hw_fetch_preferred *preferred;
	/* The codec's own: this frame's BATCH_PIECE tag (docs/wire.md
	 * #batch-pieces) on its way between the body and the tagged section.
	 * Senders leave both 0; decoded messages have them 0 (the piece is on
	 * the part: hw_fetch_resp_part.piece_batch_len). */
	uint32_t frame_piece_len;
	uint32_t frame_piece_off;
	int64_t frame_piece_base;
} hw_fetch_resp;

/* ---- OffsetsForLeaderEpoch (leader-only) */
typedef struct hw_ofe_part {
	hw_tp tp;
	int32_t current_leader_epoch;
	int32_t leader_epoch;          /* the epoch asked about */
} hw_ofe_part;

typedef struct hw_ofe_req {
	int32_t replica_id;
	uint16_t n_parts;
	const hw_ofe_part *parts;
} hw_ofe_req;

typedef struct hw_ofe_resp_part {
	hw_tp tp;
	int16_t error;
	int32_t leader_epoch;
	int64_t end_offset;
} hw_ofe_resp_part;

typedef struct hw_ofe_resp {
	uint16_t n_parts;
	const hw_ofe_resp_part *parts;
} hw_ofe_resp;

/* ---- Leader recovery state (KIP-704) */
#define HW_LRS_RECOVERED  0
#define HW_LRS_RECOVERING 1

/* ---- AlterPartition (leader -> controller) */
typedef struct hw_alter_partition_req {
	int32_t broker_id;
	int64_t broker_epoch;
	hw_tp tp;
	int32_t leader_epoch;
	int32_t partition_epoch;
	hw_idset new_isr;
	int64_t new_isr_broker_epochs[HW_MAX_RF];  /* -1 when unknown */
	uint8_t leader_recovery_state;
} hw_alter_partition_req;

typedef struct hw_alter_partition_resp {
	int16_t error;
	hw_tp tp;
	int32_t leader_id;
	int32_t leader_epoch;
	int32_t partition_epoch;
	hw_idset isr;
	uint8_t leader_recovery_state;
	/* The answering controller's epoch (ZooKeeper mode; 0: embedded
	 * controller or an old encoder). A leader ignores answers from an
	 * epoch lower than the highest it has seen (docs/controller-ha.md). */
	int32_t controller_epoch;
} hw_alter_partition_resp;

/* ---- PartitionState (controller -> brokers): the partition's whole
 * metadata. Stale pushes (lower partition epoch) are ignored by brokers. */
typedef struct hw_partition_state {
	hw_tp tp;
	int32_t leader;                /* -1: offline */
	int32_t leader_epoch;
	int32_t partition_epoch;
	hw_idset replicas;
	hw_idset isr;
	hw_idset elr;
	hw_idset last_known_elr;
	uint8_t leader_recovery_state;
	int16_t min_insync_replicas;   /* topic config in force */
	uint8_t unclean_leader_election;
	char topic[HW_TOPIC_NAME_MAX];                /* NUL-terminated topic name */
	/* Topic configs leader/follower.replication.throttled.replicas resolved
	 * by the controller for this partition: the broker ids whose leader
	 * (resp. follower) replication quota covers it ("*" = every replica).
	 * Empty: not throttled. */
	hw_idset leader_throttled;
	hw_idset follower_throttled;
	/* The pushing controller's epoch (ZooKeeper mode; 0: embedded
	 * controller or an old encoder). Brokers drop pushes from an epoch
	 * lower than the highest they have seen, counted (docs/controller-ha.md). */
	int32_t controller_epoch;
	/* The broker epoch the controller registered for each replica, in
	 * replicas order (n_replica_epochs == replicas.n, -1: not registered),
	 * or none (0, an old encoder). A leader refuses a follower FETCH whose
	 * replica_epoch is older (docs/security.md "Sender identity", Kafka's
	 * ReplicaState broker epoch). */
	uint8_t n_replica_epochs;
	int64_t replica_epochs[HW_MAX_RF];
	/* 1: the topic was deleted (Kafka's RemoveTopicRecord): every replica
	 * stops the partition, answers what waits on it with
	 * UNKNOWN_TOPIC_OR_PARTITION and deletes its log. Final whatever the
	 * epochs say (topic ids are never reused). Wire trailer after the
	 * replica epochs (which it requires). */
	uint8_t deleted;
	/* The topic's configs its replicas apply (hw_topic_config.h, the LOG
	 * rows only; set == 0: none, every key follows the broker-wide value).
	 * Wire trailer after `deleted` (docs/kafka.md "Topic configuration"). */
	hw_topic_config tconf;
} hw_partition_state;

/* ---- The envelope */
typedef struct hw_msg {
	uint16_t type;                 /* hw_msg_type */
	int32_t src;                   /* sender node id (clients: >= 1000) */
	int32_t dst;
	uint32_t correlation_id;       /* responses echo the request's */
	uint8_t n_unknown_tags;        /* set by the wire decoder: tags of the
					* tagged section it does not know and
					* skipped (engine/proto/hw_wire_tags.h) */
	union {
		hw_produce_req produce;
		hw_produce_resp produce_resp;
		hw_fetch_req fetch;
		hw_fetch_resp fetch_resp;
		hw_ofe_req ofe;
		hw_ofe_resp ofe_resp;
		hw_alter_partition_req alter;
		hw_alter_partition_resp alter_resp;
		hw_partition_state pstate;
		const void *other;     /* messages defined by engine/proto or engine/controller */
	} u;
} hw_msg;

#endif
