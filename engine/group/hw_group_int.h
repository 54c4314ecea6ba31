/* hw_group_int.h — the coordinator's internal types, shared by hw_group.c
 * (lifecycle, states, timers), hw_group_join.c (JoinGroup, SyncGroup,
 * Heartbeat, LeaveGroup) and hw_group_offsets.c (commits, fetches, the
 * `__consumer_offsets` records and their replay). Not a public header. */
#ifndef HW_GROUP_INT_H
#define HW_GROUP_INT_H
#include "hw_group.h"

typedef struct gproto {
	char *name;
	uint8_t *meta;
	int32_t meta_len;
} gproto;

typedef struct gmember {
	char *id;
	char *client_id, *client_host;
	int32_t session_ms, rebalance_ms;
	int32_t n_protocols;
	gproto *protocols;
	uint8_t *assignment;
	int32_t assignment_len;
	int64_t hb_deadline;          /* ms; session expiry when not awaiting */
	/* the waiting JoinGroup / SyncGroup (awaiting even if cb was forgotten) */
	int awaiting_join, awaiting_sync;
	hw_gjoin_cb join_cb; void *join_ctx;
	hw_gsync_cb sync_cb; void *sync_ctx;
	int is_new;                   /* joined during this rebalance */
} gmember;

typedef struct gpending {
	char *id;
	int64_t deadline;
} gpending;

typedef struct goffset {
	char *topic;
	int32_t partition;
	int64_t offset;
	int32_t leader_epoch;
	char *metadata;               /* may hold NUL bytes: metadata_len counts */
	int32_t metadata_len;
	int64_t commit_ts;
} goffset;

typedef struct ggroup {
	char *id;
	int32_t partition;
	hw_group_state state;
	int64_t state_ts;             /* wall ms of the last transition */
	int32_t generation;
	char *protocol_type;          /* NULL until the first member */
	char *protocol;               /* selected protocol, NULL if none */
	char *leader;                 /* NULL if none */
	int32_t n_members, cap_members;
	gmember *members;             /* join order */
	int32_t n_pending, cap_pending;
	gpending *pending;
	int32_t n_offsets, cap_offsets;
	goffset *offsets;
	/* the delayed join: deadline, and the initial-delay bookkeeping */
	int64_t join_deadline;        /* INT64_MAX when none */
	int initial_delay;            /* 1 while the initial delay runs */
	int64_t initial_remaining_ms;
	int64_t initial_cur_delay_ms; /* the running delay (Kafka subtracts it) */
	int new_member_added;
	int sync_write_pending;       /* the leader's assignment is being written */
	struct ggroup *next;
} ggroup;

struct hw_gcoord {
	hw_gcoord_cfg cfg;
	hw_clock *clock;
	hw_glog *log;
	uint8_t *loaded;              /* per offsets partition: HWG_UNLOADED, HWG_LOADING, HWG_LOADED */
	uint32_t *load_epoch;         /* bumped on each load/unload */
	ggroup *groups;
	uint64_t rng;
	hw_gstats st;
};

enum { HWG_UNLOADED = 0, HWG_LOADING = 1, HWG_LOADED = 2 };

/* hw_group.c */
int64_t hwg_now(hw_gcoord *c);
int64_t hwg_wall(hw_gcoord *c);
char *hwg_strdup(hw_gstr s);          /* NULL on ENOMEM or for a null string */
int hwg_streq(const char *a, hw_gstr b);
ggroup *hwg_find(const hw_gcoord *c, const char *id, size_t len);
ggroup *hwg_add_group(hw_gcoord *c, hw_gstr id);
void hwg_remove_group(hw_gcoord *c, ggroup *g);
void hwg_transition(hw_gcoord *c, ggroup *g, hw_group_state to, const char *why);
gmember *hwg_member(ggroup *g, hw_gstr id);
void hwg_member_free(gmember *m);
/* Group-level check shared by every request: NONE, INVALID_GROUP_ID,
 * NOT_COORDINATOR. */
int16_t hwg_route(hw_gcoord *c, hw_gstr group);

/* hw_group_join.c */
void hwg_prepare_rebalance(hw_gcoord *c, ggroup *g, hw_group_reason why);
void hwg_check_join_complete(hw_gcoord *c, ggroup *g);
void hwg_complete_join(hw_gcoord *c, ggroup *g);
void hwg_remove_member(hw_gcoord *c, ggroup *g, int32_t idx, hw_group_reason why);
void hwg_fail_waiters(hw_gcoord *c, ggroup *g, int16_t err);
void hwg_group_timers(hw_gcoord *c, ggroup *g, int64_t now);
/* The leader's group record is written (err NONE) or failed: Kafka's
 * storeGroup callback in doSyncGroup. */
void hwg_sync_written(hw_gcoord *c, ggroup *g, int32_t generation, int16_t err);

/* hw_group_offsets.c */
int hwg_store_group(hw_gcoord *c, ggroup *g, int await);
int hwg_replay(hw_gcoord *c, int32_t p);
int hwg_replay_batches(hw_gcoord *c, int32_t p, const uint8_t *buf, size_t len, int64_t *next);
void hwg_offsets_free(ggroup *g);
void hwg_offsets_expire(hw_gcoord *c, ggroup *g, int64_t wall_now);

#endif
