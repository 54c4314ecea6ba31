/* hw_ctrl.h — the controller: KRaft's role for a hiwater cluster.
 *
 * Design note. The controller owns the cluster metadata: which brokers are
 * registered and alive, which topics exist, and for every partition its
 * replicas, leader, leader epoch, partition epoch, ISR, ELR, last known ELR
 * and leader recovery state. Brokers never decide leadership themselves;
 * they register (incarnation id -> broker epoch), heartbeat, and leaders
 * report ISR changes with AlterPartition. Whenever a partition changes, the
 * controller pushes its whole state (PARTITION_STATE) to every replica
 * broker; brokers ignore pushes with a lower partition epoch, so loss,
 * duplication and reordering of pushes are harmless. Every replica broker
 * also gets all its partitions re-pushed on registration, on unfence and
 * every `resync_interval_ms`, which heals lost datagrams.
 *
 * Liveness (Kafka BrokerHeartbeatManager): a broker whose last heartbeat is
 * older than `broker.session.timeout.ms` is fenced: removed from the ISR of
 * every partition at once, with new leaders elected. A fenced broker is
 * unfenced by its next heartbeat with the current broker epoch; leaderless
 * partitions are then re-elected.
 *
 * Every change goes through one function, the partition change builder
 * (Kafka PartitionChangeBuilder), in this order:
 *   1. ELR (KIP-966): target ISR >= min ISR -> ELR cleared; else
 *      ELR = (ELR ∪ old ISR) − target ISR − unclean-shutdown replicas.
 *   2. Election: keep the current leader if it is in the target ISR (or the
 *      ISR is empty and it is in the ELR) and acceptable (registered, not
 *      fenced, not in controlled shutdown); else the first such replica in
 *      assignment order; else, when ISR and ELR are both empty and the last
 *      known ELR holds exactly one broker (the last leader) that is
 *      acceptable, that one, treated as unclean; else, if the topic has
 *      unclean.leader.election.enable, the first acceptable replica; else
 *      leader -1. An unclean leader gets ISR = [it], leader recovery state
 *      RECOVERING, ELR cleared. A leader taken from the ELR becomes
 *      ISR = [it] and leaves the ELR.
 *   3. Last known ELR: set to [the leader] when the ISR first becomes
 *      empty; cleared when the partition has a leader again.
 *   4. A leader change bumps the leader epoch; any change bumps the
 *      partition epoch.
 * With ELR on (the default, as on new Kafka 4.1 clusters) the ISR may become
 * empty; with ELR off the last ISR member stays in the ISR, leader -1.
 *
 * Auto leader rebalance (auto.leader.rebalance.enable, as KRaft's
 * maybeBalancePartitionLeaders): every leader.imbalance.check.interval, each
 * partition whose preferred replica (the first in assignment order) is in
 * the ISR and acceptable but does not lead gets it back as leader (a
 * PREFERRED election: new leader epoch), so leadership spreads evenly again
 * after failovers.
 *
 * Clean shutdown: a heartbeat with want_shutdown moves the broker to
 * CONTROLLED_SHUTDOWN: it leaves every ISR and its leaderships move; once it
 * leads nothing the reply says should_shutdown and the broker is fenced. The
 * broker then writes its broker epoch to its clean-shutdown file and sends it
 * as previous_broker_epoch when it registers again: equal to the stored
 * epoch -> clean, it keeps its ELR places; otherwise (crash) it is removed
 * from every ISR and ELR (Kafka handleBrokerUncleanShutdown).
 * A registration with a new incarnation while the old one still has a live
 * session fences the old one first (KAFKA-18106), then registers.
 *
 * Persistence: every change is appended to the metadata log (see
 * hw_ctrl_mlog.h) and made durable before it takes effect in memory or is
 * sent; on start the log is replayed, so a controller restart loses nothing.
 * Registered brokers get a fresh session at controller start.
 *
 * Threading: single-threaded; owned by the controller's reactor.
 *
 * Deviations from Kafka (documented, deliberate): one controller, not a
 * Raft quorum; broker epochs are metadata log record numbers; an unknown
 * broker's heartbeat is answered with STALE_BROKER_EPOCH (the broker then
 * registers again); a broker is unfenced by its first heartbeat after
 * registration (there is no metadata offset to catch up to: pushes carry
 * whole partition states).
 */
#ifndef HW_CTRL_H
#define HW_CTRL_H
#include <stdint.h>
#include "hw_clock.h"
#include "hw_admin_msg.h"
#include "hw_msg.h"
#include "hw_net.h"
#include "hw_types.h"
#include "hw_ctrl_store.h"

#define HW_CTRL_MAX_BROKERS   64
#define HW_CTRL_TOPIC_NAME    HW_TOPIC_NAME_MAX
#define HW_CTRL_MAX_PARTITIONS 4096   /* per topic */

/* Broker registration states (X(NAME)). */
#define HW_CTRL_BROKER_STATES(X) \
	X(UNREGISTERED)          \
	X(FENCED)                \
	X(ACTIVE)                \
	X(CONTROLLED_SHUTDOWN)
typedef enum hw_ctrl_broker_state {
#define HW_CTRL_BS_ENUM(n) HW_CTRL_BROKER_##n,
	HW_CTRL_BROKER_STATES(HW_CTRL_BS_ENUM)
#undef HW_CTRL_BS_ENUM
	HW_CTRL_BROKER_STATE_COUNT
} hw_ctrl_broker_state;
const char *hw_ctrl_broker_state_name(int s); /* never NULL */

/* How a partition got (or kept, or lost) its leader. */
#define HW_CTRL_ELECTIONS(X) \
	X(NONE)        /* no election attempted / leader unchanged */ \
	X(KEEP)        /* current leader still valid */               \
	X(ISR)         /* first acceptable ISR replica */             \
	X(ELR)         /* from the eligible leader replicas */        \
	X(LAST_KNOWN_LEADER) /* ISR and ELR empty: the last leader (unclean) */ \
	X(UNCLEAN)     /* unclean: any acceptable replica */          \
	X(PREFERRED)   /* auto leader rebalance: back to replicas[0] */ \
	X(OFFLINE)     /* nobody: leader -1 */
typedef enum hw_ctrl_election {
#define HW_CTRL_EL_ENUM(n) HW_CTRL_ELECT_##n,
	HW_CTRL_ELECTIONS(HW_CTRL_EL_ENUM)
#undef HW_CTRL_EL_ENUM
	HW_CTRL_ELECTION_COUNT
} hw_ctrl_election;
const char *hw_ctrl_election_name(int e); /* never NULL */

/* Leader recovery state names (HW_LRS_*). */
const char *hw_ctrl_lrs_name(int lrs); /* never NULL */

/* Counters (X(NAME)). */
#define HW_CTRL_COUNTERS(X)              \
	X(BROKERS_REGISTERED)            \
	X(BROKERS_FENCED)                \
	X(BROKERS_UNFENCED)              \
	X(CONTROLLED_SHUTDOWNS)          \
	X(UNCLEAN_SHUTDOWNS)             \
	X(ELECTIONS_CLEAN)               \
	X(ELECTIONS_ELR)                 \
	X(ELECTIONS_UNCLEAN)             \
	X(ELECTIONS_PREFERRED)           \
	X(PARTITIONS_OFFLINE_TRANSITIONS) \
	X(ALTER_PARTITION_ACCEPTED)      \
	X(ALTER_PARTITION_REJECTED)      \
	X(PARTITION_STATE_PUSHED)        \
	X(PUSH_SEND_FAILED)              \
	X(MLOG_RECORDS_WRITTEN)          \
	X(MLOG_RECORDS_REPLAYED)         \
	X(MLOG_TORN_BYTES_TRUNCATED)     \
	X(MESSAGES_IGNORED)              \
	X(MLOG_APPEND_FAILURES)          \
	X(MLOG_APPENDS_DEFERRED)         \
	X(OFFLINE_REPLICAS_REPORTED)
typedef enum hw_ctrl_counter {
#define HW_CTRL_C_ENUM(n) HW_CTRL_C_##n,
	HW_CTRL_COUNTERS(HW_CTRL_C_ENUM)
#undef HW_CTRL_C_ENUM
	HW_CTRL_COUNTER_COUNT
} hw_ctrl_counter;
const char *hw_ctrl_counter_name(int c); /* never NULL */

typedef struct hw_ctrl_config {
	int32_t node_id;                /* the controller's node id (src of its messages) */
	int32_t session_timeout_ms;     /* broker.session.timeout.ms, 9000 */
	int32_t heartbeat_interval_ms;  /* broker.heartbeat.interval.ms, 2000 (told to brokers) */
	int32_t resync_interval_ms;     /* hiwater.controller.resync.interval.ms, 10000 */
	int16_t default_min_isr;        /* min.insync.replicas, 1 */
	uint8_t default_unclean;        /* unclean.leader.election.enable, 0 */
	uint8_t elr_enabled;            /* eligible.leader.replicas.enable, 1 */
	int32_t default_partitions;     /* num.partitions, 1 */
	int16_t default_rf;             /* default.replication.factor, 1 */
	uint8_t fsync;                  /* fdatasync each metadata record, 1 */
	const char *metadata_log_path;  /* NULL: memory only (tests) */
	uint8_t auto_leader_rebalance;  /* auto.leader.rebalance.enable, 1 */
	int32_t leader_imbalance_check_interval_ms; /* leader.imbalance.check.interval.seconds * 1000, 300000 */
	/* NULL: the metadata log at metadata_log_path (or memory). Otherwise
	 * records are loaded from and written to this store (ZooKeeper mode,
	 * hw_ctrl_zk.h); borrowed for the controller's lifetime. */
	const struct hw_ctrl_store *store;
	/* The controller epoch this controller was elected with (ZooKeeper
	 * mode's /controller_epoch; 0 for the embedded controller). Carried on
	 * every controller-to-broker message (docs/controller-ha.md). */
	int32_t controller_epoch;
	uint8_t delete_topic_enable;    /* delete.topic.enable, 1 */
} hw_ctrl_config;

/* Kafka's defaults; metadata_log_path NULL. */
void hw_ctrl_config_defaults(hw_ctrl_config *c);

typedef struct hw_ctrl hw_ctrl;

/* Create a controller; replays cfg->metadata_log_path if it exists (a torn
 * tail is truncated). clock and net are borrowed for its lifetime.
 * Returns 0, -EINVAL (bad config), -ENOMEM, -EIO/-errno (metadata log could
 * not be opened, read or truncated), -EBADMSG (a record that passed its
 * checksum does not decode: the file is not ours / a bug). */
int hw_ctrl_create(const hw_ctrl_config *cfg, hw_clock *clock, hw_net *net, hw_ctrl **out);
void hw_ctrl_destroy(hw_ctrl *c);

/* ---- Requests. The request/response structs are engine/proto's
 * (hw_admin_msg.h). Each returns 0 with resp->error a Kafka code, or -errno
 * when the metadata log write failed (nothing changed; the caller may answer
 * UNKNOWN_SERVER_ERROR or let the client retry). */

/* BrokerRegistration. resp->error: NONE, INVALID_REQUEST (id outside
 * [0, HW_CLIENT_NODE_BASE) or unterminated endpoint), BROKER_NOT_AVAILABLE (table full).
 * resp->broker_epoch is the new (or, for a retry by the same incarnation,
 * the existing) broker epoch; resp->is_fenced = 1 until the first heartbeat. */
int hw_ctrl_register(hw_ctrl *c, const hw_broker_register_req *req, hw_broker_heartbeat_resp *resp);

/* BrokerHeartbeat. resp->error: NONE, STALE_BROKER_EPOCH (unknown broker or
 * an old epoch: register again). want_shutdown starts/continues a controlled
 * shutdown; resp->should_shut_down = 1 once the broker leads nothing. */
int hw_ctrl_heartbeat(hw_ctrl *c, const hw_broker_heartbeat_req *req, hw_broker_heartbeat_resp *resp);

/* CreateTopic. Configs: every key of the topic config table
 * (engine/iface/hw_topic_config.h; docs/kafka.md "Topic configuration"),
 * validated there; an unknown key or a bad value is INVALID_CONFIG with
 * Kafka's message, nothing created. resp->error:
 * NONE, INVALID_REQUEST (bad name), TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS,
 * INVALID_REPLICATION_FACTOR (RF > HW_MAX_RF or > unfenced brokers),
 * INVALID_CONFIG, INVALID_REPLICA_ASSIGNMENT (req->assignments given and a
 * list is not RF distinct unfenced brokers); resp->error_message says why. */
int hw_ctrl_create_topic(hw_ctrl *c, const hw_create_topic_req *req, hw_create_topic_resp *resp);

/* Alter one topic config at runtime (hw_ctrl_alter_configs with one SET
 * entry): any key of the topic config table; "min.insync.replicas" changes
 * clear every ELR of the topic (as Kafka), enabling
 * "unclean.leader.election.enable" elects leaders for offline partitions
 * now, the throttled-replicas keys take Kafka's syntax (see
 * hw_ctrl_throttled_replicas_resolve; "" removes the throttle). Every
 * partition's state is re-pushed with the new configs.
 * Returns 0 with *error = NONE, UNKNOWN_TOPIC_OR_PARTITION or
 * INVALID_CONFIG; -errno on metadata log failure. */
int hw_ctrl_alter_config(hw_ctrl *c, const char *topic, const char *key, const char *value,
			 int16_t *error);

/* Alter a topic's configs as one change (ALTER_CONFIG, hw_admin_msg.h):
 * req->replace (Kafka's AlterConfigs) first drops every config set before,
 * then the entries are set and req->deletes removed (back to the broker's
 * value); any key of hw_topic_config.h's table. Validated as a whole:
 * one bad entry changes nothing (resp->error INVALID_CONFIG, the message
 * Kafka's: "Unknown topic config name: x", "Invalid value ... for
 * configuration ..."). validate_only: checked, nothing changed. One
 * TOPIC_CONFIG record; every partition's state re-pushed. Returns 0 with
 * resp->error NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG,
 * INVALID_REQUEST; -errno on metadata store failure (nothing changed). */
int hw_ctrl_alter_configs(hw_ctrl *c, const hw_alter_config_req *req, hw_alter_config_resp *resp);


/* DeleteTopic (Kafka's DeleteTopics, one topic; hw_ctrl_delete.c): by
 * name, or by id when req->name is "". The deletion record is made durable,
 * the topic leaves the controller and every replica gets its partitions'
 * deletion pushed (PARTITION_STATE deleted = 1). resp->error: NONE,
 * TOPIC_DELETION_DISABLED (delete.topic.enable=false),
 * UNKNOWN_TOPIC_OR_PARTITION (no such name), UNKNOWN_TOPIC_ID (no such id).
 * Returns 0, or -errno when the record could not be written (nothing
 * changed). The topic's id is never handed out again. */
int hw_ctrl_delete_topic(hw_ctrl *c, const hw_delete_topic_req *req, hw_delete_topic_resp *resp);

/* AllocateProducerIds (KIP-730): the next block of HW_PRODUCER_ID_BLOCK
 * producer ids for a registered broker with its current epoch, persisted
 * before it is answered. resp->error: NONE, STALE_BROKER_EPOCH,
 * UNKNOWN_SERVER_ERROR (ids exhausted). 0 or -errno (record not written,
 * no block handed out). */
int hw_ctrl_alloc_producer_ids(hw_ctrl *c, const hw_alloc_pids_req *req, hw_alloc_pids_resp *resp);
/* The first id of the block the next allocation hands out (0: none yet). */
int64_t hw_ctrl_next_producer_id(const hw_ctrl *c);

/* ---- Messages, answered through the net to m->src with the same
 * correlation id: BROKER_REGISTER and BROKER_HEARTBEAT -> BROKER_HEARTBEAT_RESP,
 * CREATE_TOPIC -> CREATE_TOPIC_RESP, ALTER_CONFIG -> ALTER_CONFIG_RESP,
 * DELETE_TOPIC -> DELETE_TOPIC_RESP, ALLOCATE_PRODUCER_IDS ->
 * ALLOCATE_PRODUCER_IDS_RESP,
 * METADATA -> METADATA_RESP,
 * DESCRIBE_TOPIC -> DESCRIBE_TOPIC_RESP (assignment and epochs; HW/LEO -1:
 * brokers answer those), ALTER_PARTITION -> ALTER_PARTITION_RESP.
 * PARTITION_STATE_ACK and other types are counted as ignored.
 * Returns 0, -ENOMEM, or -errno (metadata log failure: not answered, the
 * sender retries). */
int hw_ctrl_on_msg(hw_ctrl *c, const hw_msg *m);

/* Run timers: fence brokers whose session expired, re-push partition states
 * every resync interval, rebalance leaders every imbalance check interval.
 * Returns 0 or -errno. */
int hw_ctrl_poll(hw_ctrl *c);
/* Earliest time (clock ns) poll has something to do; INT64_MAX if never. */
int64_t hw_ctrl_next_deadline_ns(hw_ctrl *c);

/* ---- Read access (for METADATA / DESCRIBE_TOPIC answers and tests).
 * Pointers stay valid until the next call that changes the controller. */
typedef struct hw_ctrl_broker_info {
	int32_t id;
	int64_t epoch;
	uint64_t incarnation_id;
	uint8_t state;                  /* hw_ctrl_broker_state */
	char control_ep[HW_ENDPOINT_MAX];
	char data_ep[HW_ENDPOINT_MAX];
} hw_ctrl_broker_info;

typedef struct hw_ctrl_topic_info {
	char name[HW_CTRL_TOPIC_NAME];
	uint32_t id;
	int32_t partitions;
	int16_t replication_factor;
	int16_t min_insync_replicas;
	uint8_t unclean_leader_election;
	/* {leader,follower}.replication.throttled.replicas as given ("" unset) */
	char leader_throttled_replicas[HW_CONFIG_VALUE_MAX];
	char follower_throttled_replicas[HW_CONFIG_VALUE_MAX];
	/* The topic configs users set (hw_topic_config.h ids; docs/kafka.md
	 * "Topic configuration"): bit i of tc_set says tc_value[i] holds
	 * config i as given. The fields above mirror the CTRL rows. */
	uint32_t tc_set;
	char tc_value[HW_TC_COUNT][HW_CONFIG_VALUE_MAX];
} hw_ctrl_topic_info;

/* Kafka's {leader,follower}.replication.throttled.replicas value: "*" (every
 * replica) or a comma-separated list of partitionId:brokerId (blanks around
 * items allowed, empty items ignored, "" = none), as Kafka's
 * ThrottledReplicaListValidator. Resolves it for `partition`: *out gets the
 * brokers among `replicas` whose quota covers it (replicas order, "*" = all
 * of them). replicas/out may be NULL to only validate. 0, or -EINVAL for a
 * malformed value. */
int hw_ctrl_throttled_replicas_resolve(const char *value, uint32_t partition,
				       const hw_idset *replicas, hw_idset *out);

int hw_ctrl_broker_count(const hw_ctrl *c);
/* i in [0, count): 0, or -ENOENT. */
int hw_ctrl_broker_at(const hw_ctrl *c, int i, hw_ctrl_broker_info *out);
/* By id: 0, or -ENOENT. */
int hw_ctrl_broker_get(const hw_ctrl *c, int32_t id, hw_ctrl_broker_info *out);

int hw_ctrl_topic_count(const hw_ctrl *c);
int hw_ctrl_topic_at(const hw_ctrl *c, int i, hw_ctrl_topic_info *out);   /* 0 / -ENOENT */
int hw_ctrl_topic_find(const hw_ctrl *c, const char *name, hw_ctrl_topic_info *out); /* 0 / -ENOENT */

/* Kafka's JSON of a topic's configs ({"version":1,"config":{"k":"v",...}},
 * ZooKeeper's /config/topics/<name>) into buf (NUL-terminated). Returns the
 * length, or -EMSGSIZE when it does not fit. */
int hw_ctrl_topic_config_json(const hw_ctrl_topic_info *info, char *buf, size_t cap);

/* The partition's whole state, exactly as pushed to brokers. 0 / -ENOENT. */
int hw_ctrl_partition(const hw_ctrl *c, hw_tp tp, hw_partition_state *out);

uint64_t hw_ctrl_counter_get(const hw_ctrl *c, hw_ctrl_counter which);

/* The controller epoch it was created with (hw_ctrl_config.controller_epoch). */
int32_t hw_ctrl_epoch(const hw_ctrl *c);

/* Push every partition's state to all its replicas now (a newly active
 * controller announces itself and its epoch this way). */
void hw_ctrl_push_all(hw_ctrl *c);

/* Format an id set as "[1,2,3]" into buf (always NUL-terminated); returns buf. */
const char *hw_ctrl_idset_str(const hw_idset *s, char *buf, int len);

#endif
