/* hw_ctrl_int.h — controller internals shared by hw_ctrl.c (brokers, topics,
 * requests, timers) and hw_ctrl_part.c (the partition change builder,
 * metadata records). Not a public header. */
#ifndef HW_CTRL_INT_H
#define HW_CTRL_INT_H
#include <stddef.h>
#include <stdint.h>
#include "hw_bytes.h"
#include "hw_ctrl.h"
#include "hw_ctrl_mlog.h"

/* Compact the metadata log at start when it holds at least this many
 * records and more than 4 per entity. */
#define HW_CTRL_COMPACT_MIN_RECORDS 1000

/* Metadata log record types: X(NAME, id). Ids are on disk; never reuse. */
#define HW_CTRL_RECORDS(X)      \
	X(BROKER,        1)     \
	X(TOPIC,         2)     \
	X(PARTITION,     3)     \
	X(TOPIC_CONFIG,  4)     \
	X(BASE,          5)     /* compacted log: record count before it */ \
	X(TOPIC_DELETE,  6)     /* Kafka's RemoveTopicRecord; also the topic id floor */ \
	X(PRODUCER_IDS,  7)     /* Kafka's ProducerIdsRecord: the next block's start */
enum {
#define HW_CTRL_REC_ENUM(n, id) HW_CTRL_REC_##n = (id),
	HW_CTRL_RECORDS(HW_CTRL_REC_ENUM)
#undef HW_CTRL_REC_ENUM
};
const char *hw_ctrl_record_name(int type);

typedef struct ctrl_broker {
	int32_t id;
	int64_t epoch;
	uint64_t incarnation;
	uint8_t state;                  /* hw_ctrl_broker_state */
	char control_ep[HW_ENDPOINT_MAX];
	char data_ep[HW_ENDPOINT_MAX];
	uint16_t n_listeners;           /* Kafka listeners (BROKER_REGISTER trailer) */
	hw_listener listeners[HW_MAX_LISTENERS];
	char rack[HW_RACK_MAX];         /* broker.rack ("" none), docs/racks.md */
	int64_t last_contact_ns;        /* not persisted: fresh session at start */
	int64_t last_resync_ns;
	/* its removal from the ISRs (fenced, controlled shutdown) failed on a
	 * metadata append: hw_ctrl_poll retries it after the backoff (not
	 * persisted: a restart re-derives it, docs/security.md "Faults") */
	uint8_t removal_pending;
	uint8_t removal_unclean;
	const char *removal_why;
	/* replicas on its offline log dirs (BROKER_HEARTBEAT trailer,
	 * docs/logdirs.md): never elected, never admitted to an ISR. Not
	 * persisted: every heartbeat carries the whole list, and a new
	 * registration (a restart, the disk back) starts with none. */
	uint16_t n_offline;
	hw_tp offline[HW_MAX_OFFLINE_REPLICAS];
} ctrl_broker;

typedef struct ctrl_part {
	int32_t leader;
	int32_t leader_epoch;
	int32_t partition_epoch;
	uint8_t lrs;                    /* HW_LRS_* */
	hw_idset replicas, isr, elr, lke;
} ctrl_part;

typedef struct ctrl_topic {
	hw_ctrl_topic_info info;
	ctrl_part *parts;
} ctrl_topic;

/* Deleted topics the controller still tells brokers about (a broker that
 * missed the push learns it at its next resync): the last
 * HW_CTRL_DELETED_KEEP, in memory (rebuilt from the TOPIC_DELETE records
 * a replay sees; a compaction forgets them). */
#define HW_CTRL_DELETED_KEEP 64

struct hw_ctrl {
	hw_ctrl_config cfg;
	char *path;
	hw_clock *clock;
	hw_net *net;
	hw_mlog *mlog;
	int replaying;
	/* a failed append: changes are refused (-EAGAIN, counted as deferred)
	 * until mlog_retry_ns, the backoff doubling 100 ms .. 5 s; one log line
	 * per failed attempt, none while waiting (docs/security.md "Faults") */
	int64_t mlog_retry_ns;
	int64_t mlog_backoff_ns;
	uint64_t records;               /* metadata records so far (the "offset") */
	ctrl_broker brokers[HW_CTRL_MAX_BROKERS];
	int n_brokers;
	ctrl_topic *topics;
	int n_topics, cap_topics;
	uint32_t next_topic_id;
	ctrl_topic deleted[HW_CTRL_DELETED_KEEP]; /* ring, parts owned */
	int n_deleted, next_deleted;
	/* the first producer id of the next block (PRODUCER_IDS records) */
	int64_t next_producer_id;
	uint64_t counters[HW_CTRL_COUNTER_COUNT];
	int64_t next_rebalance_ns;
};

/* A requested partition change (Kafka PartitionChangeBuilder inputs). */
typedef struct ctrl_change {
	hw_idset target_isr;
	hw_idset target_elr;
	hw_idset unclean_shutdown;      /* replicas excluded from the new ELR */
	int clear_lke;                  /* drop the last known ELR too */
	int set_lrs;                    /* apply lrs below */
	int preferred;                  /* PREFERRED election: replicas[0] if valid */
	uint8_t lrs;
	const char *reason;
} ctrl_change;

/* ---- id sets (all kept in assignment order of the partition's replicas) */
int ctrl_set_has(const hw_idset *s, int32_t id);
void ctrl_set_remove(hw_idset *s, int32_t id);
int ctrl_set_eq(const hw_idset *a, const hw_idset *b);

/* ---- brokers */
ctrl_broker *ctrl_broker_find(hw_ctrl *c, int32_t id);
/* Registered, not fenced, not in controlled shutdown. */
int ctrl_broker_acceptable(hw_ctrl *c, int32_t id);
/* Acceptable, and its replica of t's partition pi is not on an offline log
 * dir (docs/logdirs.md): what elections and ISR admission ask. */
int ctrl_replica_acceptable(hw_ctrl *c, int32_t id, const ctrl_topic *t, uint32_t pi);

/* ---- topic configs (hw_ctrl_topic.c; docs/kafka.md "Topic configuration") */
/* Set topic config key = value in info (value NULL: remove it, back to the
 * broker's value), keeping the CTRL rows' fields in step. 0, -ENOENT
 * (unknown key) or -EINVAL (bad value), with Kafka's message in why. */
int ctrl_tc_set(const hw_ctrl *c, hw_ctrl_topic_info *info, const char *key, const char *value, char *why,
		size_t why_len);
/* The LOG rows of info's configs, parsed, for PARTITION_STATE. */
void ctrl_tc_to_state(const hw_ctrl_topic_info *info, hw_topic_config *out);
/* The TOPIC / TOPIC_CONFIG records' configs trailer (hw_ctrl_part.c):
 * u8 n, n x {str key, str value}; read: every key known and every value
 * valid, else r->bad. */
void ctrl_w_tconf(hw_bytes_wr *w, const hw_ctrl_topic_info *info);
void ctrl_r_tconf(const hw_ctrl *c, hw_bytes_rd *r, hw_ctrl_topic_info *info);

/* The name and configs a TOPIC or TOPIC_CONFIG record carries (name ""
 * for a TOPIC_CONFIG written before it had one; the ZooKeeper store's
 * /config/topics mirror). 0, -EINVAL (other type), -EBADMSG. */
int ctrl_record_topic_configs(const hw_ctrl *c, uint8_t type, const uint8_t *payload, size_t len,
			      hw_ctrl_topic_info *out);

/* ---- partitions */
ctrl_topic *ctrl_topic_by_id(hw_ctrl *c, uint32_t id);
ctrl_topic *ctrl_topic_by_name(const hw_ctrl *c, const char *name);
/* A change seeded with the partition's current ISR and ELR. */
void ctrl_change_init(ctrl_change *ch, const ctrl_part *p, const char *reason);
/* Compute, persist, apply, log and push one change. Returns 1 if the
 * partition changed, 0 if it was a no-op, -errno on metadata log failure
 * (nothing changed). *election (may be NULL) says how the leader was chosen. */
int ctrl_part_apply(hw_ctrl *c, ctrl_topic *t, uint32_t pi, const ctrl_change *ch,
		    hw_ctrl_election *election);
/* Push one partition's state to every replica, or only to `only` (>= 0). */
void ctrl_part_push(hw_ctrl *c, const ctrl_topic *t, uint32_t pi, int32_t only);
void ctrl_part_to_state(const ctrl_topic *t, uint32_t pi, hw_partition_state *out);

/* ---- metadata records */
int ctrl_persist_broker(hw_ctrl *c, const ctrl_broker *b);
int ctrl_persist_topic(hw_ctrl *c, const ctrl_topic *t);
int ctrl_persist_topic_config(hw_ctrl *c, const ctrl_topic *t);
int ctrl_replay(void *arg, uint8_t type, const uint8_t *payload, size_t len);
/* Rewrite the metadata log as one record per entity (see hw_ctrl_mlog.h).
 * 0 or -errno (the old log stays in place). */
int ctrl_compact(hw_ctrl *c);
/* Add a topic (takes ownership of t->parts). 0 or -ENOMEM. */
int ctrl_topic_add(hw_ctrl *c, const ctrl_topic *t);
/* Try to elect a leader for every leaderless partition (of `only`, or of
 * every topic when NULL): a broker became acceptable, or unclean election
 * got enabled. 0 or the first push error (hw_ctrl.c). */
int ctrl_elect_leaderless(hw_ctrl *c, ctrl_topic *only, const char *why);

/* ---- topic deletion and producer id blocks (hw_ctrl_delete.c) */
/* Replay a TOPIC_DELETE / PRODUCER_IDS record. 0 or -EBADMSG. */
int ctrl_replay_delete(hw_ctrl *c, const uint8_t *payload, size_t len);
int ctrl_replay_producer_ids(hw_ctrl *c, const uint8_t *payload, size_t len);
/* Compaction: the records that keep the topic id floor and the producer id
 * block after the deleted topics' records are gone. 0 or -errno. */
int ctrl_compact_ids(hw_ctrl *c);
/* Re-push the deletion of every remembered deleted topic b replicated. */
void ctrl_deleted_resync(hw_ctrl *c, int32_t broker);
void ctrl_deleted_free(hw_ctrl *c);
/* Write one record (hw_ctrl_part.c; frees w's buffer). 0 or -errno. */
int ctrl_write_record(hw_ctrl *c, uint8_t type, hw_bytes_wr *w);
/* DELETE_TOPIC / ALLOCATE_PRODUCER_IDS with m->u.other set: answered. */
int ctrl_on_ids_msg(hw_ctrl *c, const hw_msg *m);

/* ---- admin messages (hw_ctrl_admin.c): BROKER_REGISTER, BROKER_HEARTBEAT,
 * CREATE_TOPIC, METADATA, DESCRIBE_TOPIC with m->u.other set. */
int ctrl_on_admin_msg(hw_ctrl *c, const hw_msg *m);
/* Controller broker state -> hw_broker_state (wire). */
uint8_t ctrl_broker_state_wire(uint8_t state);

/* hw_ctrl_broker.c, for the timers in hw_ctrl.c. broker_resync: push every
 * partition the broker replicates to it. remove_or_defer: remove the broker
 * from every ISR (unclean: as an unclean shutdown), remembered for a retry
 * when a metadata append fails; 0 or negative errno. broker_fence: fence it
 * (why logged) and remove it; 0 or negative errno. */
void broker_resync(hw_ctrl *c, ctrl_broker *b);
int remove_or_defer(hw_ctrl *c, ctrl_broker *b, int unclean, const char *why);
int broker_fence(hw_ctrl *c, ctrl_broker *b, const char *why);

#endif
