/* hw_group.h — Kafka's classic consumer-group coordinator (client-side
 * assignment), as a deterministic state machine.
 *
 * Design note. One hw_gcoord per broker owns the groups of the
 * `__consumer_offsets` partitions this broker leads (hw_gcoord_load /
 * hw_gcoord_unload as leadership comes and goes). It follows Kafka's
 * GroupCoordinator (core/src/main/scala/kafka/coordinator/group/): the
 * states Empty, PreparingRebalance, CompletingRebalance, Stable and Dead;
 * JoinGroup answered when every known member has rejoined or the rebalance
 * timeout passed (a new group first waits group.initial.rebalance.delay.ms,
 * extended while members keep arriving); SyncGroup answered once the leader's
 * assignment is written; heartbeats and session timeouts; offsets committed
 * as records of `__consumer_offsets` (hw_group_schema.h) through hw_glog and
 * rebuilt by replaying that log. docs/groups.md describes the behaviour.
 *
 * Time comes only from the hw_clock given at creation; nothing happens
 * between calls: the owner calls hw_gcoord_tick() at or after
 * hw_gcoord_next_deadline_ms() (a broker from a timer, tests after advancing
 * a virtual clock). Not thread-safe: one thread calls everything.
 *
 * Strings in requests are (pointer, length) and are copied; pointers in
 * responses are valid only during the callback / until the next call.
 * Callbacks may run inside the call that triggers them (an answer available
 * at once, or a rebalance the call completes) and must not call back into
 * the coordinator: they encode the answer and return.
 */
#ifndef HW_GROUP_H
#define HW_GROUP_H
#include <stdint.h>
#include <stddef.h>
#include "hw_clock.h"
#include "hw_group_log.h"

#define HW_GROUP_STATE_TABLE(X)                                          \
	X(EMPTY,                 "Empty")                               \
	X(PREPARING_REBALANCE,   "PreparingRebalance")                  \
	X(COMPLETING_REBALANCE,  "CompletingRebalance")                 \
	X(STABLE,                "Stable")                              \
	X(DEAD,                  "Dead")

typedef enum hw_group_state {
#define HW_GST_ENUM(n, s) HW_GST_##n,
	HW_GROUP_STATE_TABLE(HW_GST_ENUM)
#undef HW_GST_ENUM
	HW_GST__COUNT
} hw_group_state;
/* Kafka's name of a state ("PreparingRebalance"); "?" out of range. */
const char *hw_group_state_name(int st);

/* Why a rebalance started / a member left: every one is counted. */
#define HW_GROUP_REASON_TABLE(X)                                         \
	X(NEW_MEMBER,        "a new member joined")                     \
	X(MEMBER_REJOIN,     "a member rejoined with new metadata")     \
	X(LEADER_REJOIN,     "the leader rejoined")                     \
	X(SESSION_TIMEOUT,   "a member's session timed out")            \
	X(LEAVE,             "a member left the group")                 \
	X(NOT_REJOINED,      "a member did not rejoin in time")         \
	X(PENDING_TIMEOUT,   "a pending member did not rejoin in time") \
	X(SYNC_FAILED,       "the group metadata write failed")         \
	X(UNLOAD,            "this broker stopped leading the partition")

typedef enum hw_group_reason {
#define HW_GR_ENUM(n, s) HW_GR_##n,
	HW_GROUP_REASON_TABLE(HW_GR_ENUM)
#undef HW_GR_ENUM
	HW_GR__COUNT
} hw_group_reason;
const char *hw_group_reason_name(int r);

/* Records skipped while replaying `__consumer_offsets` — counted by reason. */
#define HW_GROUP_DROP_TABLE(X)                                           \
	X(BAD_BATCH,      "a batch failed validation")                  \
	X(COMPRESSED,     "a compressed batch (the coordinator writes none)") \
	X(NULL_KEY,       "a record without a key")                     \
	X(BAD_KEY,        "an undecodable key")                         \
	X(BAD_VALUE,      "an undecodable value")                       \
	X(NO_MEMORY,      "out of memory while rebuilding")             \
	X(WRONG_PARTITION,"a group that hashes to another partition")

typedef enum hw_group_drop {
#define HW_GD_ENUM(n, s) HW_GD_##n,
	HW_GROUP_DROP_TABLE(HW_GD_ENUM)
#undef HW_GD_ENUM
	HW_GD__COUNT
} hw_group_drop;
const char *hw_group_drop_name(int d);

/* Kafka's names and defaults (docs/groups.md "Configuration"). */
typedef struct hw_gcoord_cfg {
	int32_t offsets_partitions;          /* offsets.topic.num.partitions = 50 */
	int32_t initial_rebalance_delay_ms;  /* group.initial.rebalance.delay.ms = 3000 */
	int32_t min_session_timeout_ms;      /* group.min.session.timeout.ms = 6000 */
	int32_t max_session_timeout_ms;      /* group.max.session.timeout.ms = 1800000 */
	int32_t max_group_size;              /* group.max.size = 2147483647 */
	int32_t offset_metadata_max_bytes;   /* offset.metadata.max.bytes = 4096 */
	int64_t offsets_retention_ms;        /* offsets.retention.minutes = 10080 (in ms here) */
	uint64_t member_id_seed;             /* member ids' random part (tests: fixed) */
	hw_clock *wall;                      /* commit timestamps (ms since epoch); NULL = the coordinator's clock */
} hw_gcoord_cfg;

/* Fill Kafka's defaults. */
void hw_gcoord_cfg_init(hw_gcoord_cfg *c);

typedef struct hw_gcoord hw_gcoord;

typedef struct hw_gstats {
	uint64_t rebalances[HW_GR__COUNT];
	uint64_t removed[HW_GR__COUNT];      /* members removed, by reason */
	uint64_t drops[HW_GD__COUNT];        /* replay records skipped */
	uint64_t transitions;
	uint64_t commits, commit_errors;
	uint64_t replayed_records;
	int64_t groups, members;             /* current */
} hw_gstats;

/* 0 and *out, -EINVAL (cfg out of range), -ENOMEM. clock and log outlive it. */
int hw_gcoord_create(const hw_gcoord_cfg *cfg, hw_clock *clock, hw_glog *log, hw_gcoord **out);
/* Answers every waiting request with NOT_COORDINATOR, then frees. */
void hw_gcoord_free(hw_gcoord *c);
const hw_gstats *hw_gcoord_stats(const hw_gcoord *c);

/* The `__consumer_offsets` partition of a group. */
int32_t hw_gcoord_partition_of(const hw_gcoord *c, const char *group, size_t len);

/* This broker became the leader of offsets partition p: rebuild its groups
 * by reading the whole log (groups with members come back Stable, their
 * sessions restarted from now). 0, -EINVAL (p out of range), -ENOMEM, or the
 * log's read error (the partition stays unloaded: its requests get
 * NOT_COORDINATOR). */
int hw_gcoord_load(hw_gcoord *c, int32_t p);
/* The same, asynchronously, for a log read by messages (a broker): begin
 * (requests for p's groups get COORDINATOR_LOAD_IN_PROGRESS), feed whole
 * batches in offset order (*next_offset advances past them: read on from
 * there), end when the reads reached the high watermark. begin: 0, -EINVAL,
 * -EALREADY (loaded); a begin while loading restarts. feed/end: 0 or
 * -EINVAL (p not loading). Undecodable records are counted drops. */
int hw_gcoord_load_begin(hw_gcoord *c, int32_t p);
int hw_gcoord_load_feed(hw_gcoord *c, int32_t p, const void *batches, size_t len, int64_t *next_offset);
int hw_gcoord_load_end(hw_gcoord *c, int32_t p);
/* Leadership of p lost: its groups go Dead, waiters get NOT_COORDINATOR. */
void hw_gcoord_unload(hw_gcoord *c, int32_t p);
/* 1 if p is loaded here. */
int hw_gcoord_owns(const hw_gcoord *c, int32_t p);

/* Fire every timer due at the clock's now. Never fails. */
void hw_gcoord_tick(hw_gcoord *c);
/* Earliest pending deadline in clock ms, INT64_MAX if none. */
int64_t hw_gcoord_next_deadline_ms(const hw_gcoord *c);

/* ---- requests ------------------------------------------------------------- */
typedef struct hw_gstr {
	const char *p; /* NULL = null string */
	int32_t len;
} hw_gstr;

typedef struct hw_gproto {
	hw_gstr name;
	const uint8_t *metadata;
	int32_t metadata_len;
} hw_gproto;

typedef struct hw_gjoin_req {
	hw_gstr group_id, member_id, group_instance_id, client_id, client_host, protocol_type;
	int32_t session_timeout_ms;
	int32_t rebalance_timeout_ms;   /* JoinGroup v0: = session timeout */
	int require_known_member_id;    /* JoinGroup v4+ */
	int32_t n_protocols;
	const hw_gproto *protocols;
} hw_gjoin_req;

typedef struct hw_gjoin_member {
	const char *member_id;
	const char *group_instance_id; /* NULL */
	const uint8_t *metadata;
	int32_t metadata_len;
} hw_gjoin_member;

typedef struct hw_gjoin_resp {
	int16_t error;
	int32_t generation;           /* -1 on error */
	const char *protocol_type;    /* "" unknown */
	const char *protocol_name;    /* "" on error */
	const char *leader;           /* "" on error */
	const char *member_id;        /* "" unless known (MEMBER_ID_REQUIRED gives the new id) */
	int32_t n_members;            /* > 0 only in the leader's answer */
	const hw_gjoin_member *members;
} hw_gjoin_resp;

typedef void (*hw_gjoin_cb)(void *ctx, const hw_gjoin_resp *r);
/* Answered through cb exactly once (now or when the rebalance completes). */
void hw_group_join(hw_gcoord *c, const hw_gjoin_req *q, hw_gjoin_cb cb, void *ctx);

typedef struct hw_gassign {
	hw_gstr member_id;
	const uint8_t *assignment;
	int32_t assignment_len;
} hw_gassign;

typedef struct hw_gsync_req {
	hw_gstr group_id, member_id, group_instance_id;
	int32_t generation;
	int32_t n_assign;             /* the leader's; others send 0 */
	const hw_gassign *assign;
} hw_gsync_req;

typedef struct hw_gsync_resp {
	int16_t error;
	const char *protocol_type, *protocol_name;
	const uint8_t *assignment;    /* empty on error */
	int32_t assignment_len;
} hw_gsync_resp;

typedef void (*hw_gsync_cb)(void *ctx, const hw_gsync_resp *r);
void hw_group_sync(hw_gcoord *c, const hw_gsync_req *q, hw_gsync_cb cb, void *ctx);

/* Heartbeat: returns the Kafka error code (NONE, REBALANCE_IN_PROGRESS,
 * UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, NOT_COORDINATOR, ...). */
int16_t hw_group_heartbeat(hw_gcoord *c, hw_gstr group, hw_gstr member, hw_gstr instance, int32_t generation);

/* LeaveGroup of n members (v0-2: one). Returns the top-level error; errs[i]
 * gets each member's (v3 per-member errors). */
int16_t hw_group_leave(hw_gcoord *c, hw_gstr group, int32_t n, const hw_gstr *members, int16_t *errs);

/* Forget every callback with this ctx (the connection closed): the
 * members stay until their session times out, as in Kafka. */
void hw_gcoord_forget(hw_gcoord *c, void *ctx);

/* ---- offsets ------------------------------------------------------------ */
typedef struct hw_gcommit_part {
	hw_gstr topic;
	int32_t partition;
	int64_t offset;
	int32_t leader_epoch;         /* -1 */
	hw_gstr metadata;             /* null = "" */
} hw_gcommit_part;

typedef struct hw_gcommit_req {
	hw_gstr group_id, member_id, group_instance_id;
	int32_t generation;           /* -1 = a simple (non-member) commit */
	int32_t n;
	const hw_gcommit_part *parts;
} hw_gcommit_req;

/* errs[i] for parts[i]; valid during the callback. */
typedef void (*hw_gcommit_cb)(void *ctx, int32_t n, const int16_t *errs);
void hw_group_commit(hw_gcoord *c, const hw_gcommit_req *q, hw_gcommit_cb cb, void *ctx);

typedef struct hw_gfetch_part {
	/* in */
	hw_gstr topic;
	int32_t partition;
	/* out */
	int64_t offset;               /* -1: nothing committed */
	int32_t leader_epoch;         /* -1 */
	const char *metadata;         /* "" (NUL-terminated, may hold NULs) */
	int32_t metadata_len;
	int16_t error;
} hw_gfetch_part;

/* Group ids and topic names are Kafka strings without NUL bytes (a group id
 * with one is INVALID_GROUP_ID, a topic UNKNOWN_TOPIC_OR_PARTITION); commit
 * metadata may hold any bytes and round-trips exactly. */
/* OffsetFetch of listed partitions (n >= 0; fills parts[i].out). Returns the
 * group-level error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * INVALID_GROUP_ID, NONE). */
int16_t hw_group_fetch(hw_gcoord *c, hw_gstr group, int32_t n, hw_gfetch_part *parts);
/* OffsetFetch of all the group's partitions (topics = null, v2+): calls fn
 * for each committed offset. Returns the group-level error. */
typedef void (*hw_gfetch_all_fn)(void *ctx, const char *topic, int32_t partition, int64_t offset,
				 int32_t leader_epoch, const char *metadata, int32_t metadata_len);
int16_t hw_group_fetch_all(hw_gcoord *c, hw_gstr group, hw_gfetch_all_fn fn, void *ctx);

/* ---- DescribeGroups and ListGroups (docs/groups.md "Describing and
 * listing groups"; hw_group_describe.c) ------------------------------------ */
typedef struct hw_gdesc_member {
	const char *member_id, *client_id, *client_host;
	const uint8_t *metadata;       /* the selected protocol's; NULL unless Stable */
	int32_t metadata_len;
	const uint8_t *assignment;     /* NULL unless Stable */
	int32_t assignment_len;
} hw_gdesc_member;

typedef struct hw_gdesc {
	int16_t error;                 /* NONE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, INVALID_GROUP_ID */
	const char *state;             /* Kafka's name; "Dead" for a group not known here */
	const char *protocol_type;     /* "" if none */
	const char *protocol;          /* "" unless Stable */
	int32_t n_members;
	const hw_gdesc_member *members;
} hw_gdesc;
typedef void (*hw_gdesc_fn)(void *ctx, const hw_gdesc *d);
/* Describe one group: fn is called once, its pointers valid during the
 * call. Returns 0, or -ENOMEM (fn not called). */
int hw_group_describe(hw_gcoord *c, hw_gstr group, hw_gdesc_fn fn, void *ctx);

typedef void (*hw_glist_fn)(void *ctx, const char *group_id, const char *protocol_type, int state);
/* Every live group of the partitions this coordinator has loaded, through
 * fn. Returns COORDINATOR_LOAD_IN_PROGRESS while a partition is loading
 * (the loaded groups are listed anyway, as Kafka), else NONE. */
int16_t hw_group_list(hw_gcoord *c, hw_glist_fn fn, void *ctx);

/* ---- introspection (tests, metrics) ------------------------------------------ */
/* State of a group, or -1 if unknown here. */
int hw_group_state_of(const hw_gcoord *c, const char *group);
int32_t hw_group_generation_of(const hw_gcoord *c, const char *group);
int32_t hw_group_member_count(const hw_gcoord *c, const char *group);
/* Leader member id ("" if none), NULL if unknown. */
const char *hw_group_leader_of(const hw_gcoord *c, const char *group);

#endif
