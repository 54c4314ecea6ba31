/* hw_repl_int.h — internals shared by the replica manager's files:
 * hw_rm.c (table, dispatch, poll), hw_part.c (partition state machine, HW,
 * ISR), hw_produce.c (produce path, DelayedProduce), hw_fetch.c (leader
 * fetch path, DelayedFetch, OffsetsForLeaderEpoch), hw_fetcher.c (follower
 * fetcher), hw_pid.c (idempotent producer state). Not a public API.
 */
#ifndef HW_REPL_INT_H
#define HW_REPL_INT_H
#include <stddef.h>
#include <stdint.h>
#include "hw_purg.h"
#include "hw_quota.h"
#include "hw_rm.h"
#include "hw_wheel.h"
#include "hw_wire_piece.h"

/* ---- idempotent producer state (hw_pid.c) ---------------------------- */
#define HW_PID_CACHED_BATCHES 5 /* Kafka ProducerStateEntry.NUM_BATCHES_TO_RETAIN */

typedef struct hw_pid_batch {
	int32_t first_seq, last_seq;
	int64_t first_off, last_off;
} hw_pid_batch;

typedef struct hw_pid_entry {
	int64_t pid;              /* -1: empty slot */
	int16_t epoch;
	uint8_t n, head;          /* ring of the last n batches, head = oldest */
	hw_pid_batch b[HW_PID_CACHED_BATCHES];
} hw_pid_entry;

typedef struct hw_pidmap {
	hw_pid_entry *e;
	uint32_t cap, n;          /* open addressing, cap power of two */
} hw_pidmap;

/* Outcome of checking a batch against the producer state. */
#define HW_PID_CHECK_TABLE(X) X(NEW) X(DUPLICATE) X(OUT_OF_ORDER) X(INVALID_EPOCH)
typedef enum hw_pid_check {
#define HW_PID_CHECK_ENUM(n) HW_PID_##n,
	HW_PID_CHECK_TABLE(HW_PID_CHECK_ENUM)
#undef HW_PID_CHECK_ENUM
} hw_pid_check;

void hw_pidmap_init(hw_pidmap *m);
void hw_pidmap_free(hw_pidmap *m);
void hw_pidmap_clear(hw_pidmap *m);
/* Check a client batch (pid >= 0). On DUPLICATE fills *dup. */
int hw_pidmap_check(const hw_pidmap *m, int64_t pid, int16_t epoch, int32_t first_seq,
		    int32_t last_seq, hw_pid_batch *dup);
/* Record an appended batch. 0 or -ENOMEM. */
int hw_pidmap_update(hw_pidmap *m, int64_t pid, int16_t epoch, int32_t first_seq,
		     int32_t last_seq, int64_t first_off, int64_t last_off);
/* Apply every producer batch in buf (appended log bytes). */
void hw_pidmap_apply_batches(hw_pidmap *m, const uint8_t *buf, size_t len);
/* Rebuild from the whole log (restart, truncation). 0 or -errno. */
int hw_pidmap_rebuild(hw_pidmap *m, hw_store *s);

/* ---- partition ------------------------------------------------------- */

/* lastCaughtUp of a replica that never caught up in this leadership (Kafka
 * uses 0 with a wall clock; the engine's clock may start at 0). */
#define HW_NEVER_MS (INT64_MIN / 4)

/* The leader's view of one remote replica (Kafka Replica.scala). */
typedef struct hw_replica_state {
	int32_t id;
	int64_t leo;                  /* -1: unknown since this leadership */
	int64_t last_caught_up_ms;
	int64_t last_fetch_ms;        /* Tprev */
	int64_t last_fetch_leader_leo;/* Lprev */
	int32_t last_fetched_epoch;
	int64_t last_sent_hw;         /* HW last put in a response to it */
	int64_t last_sent_hw_ms;
	/* The controller removed it from the ISR (fenced, controlled shutdown):
	 * not ISR-eligible, so being caught up does not make it hold the HW
	 * (Kafka's isReplicaIsrEligible) until the ISR holds it again. A fetch
	 * already in flight when it stopped would otherwise refresh lastCaughtUp
	 * and stall acks=all for up to replica.lag.time.max.ms. */
	uint8_t ineligible;
	/* newest broker epoch its fetches carried in this leadership: an older
	 * one is a stale (or forged) sender (Kafka's ReplicaState.replicaEpoch,
	 * KIP-903) */
	int64_t broker_epoch;
	/* acks=all stage timing (hw_ptiming.h), kept only while a timed
	 * produce waits (rm->timed_waiting): when the last fetch response to it
	 * was begun and sent (ns) */
	int64_t resp_begin_ns, resp_sent_ns;
	/* its last fetch while timing: received (ns), its offset, the write it
	 * reported (each follower's acknowledgement, hw_follower_ack) */
	int64_t ack_rx_ns, ack_offset;
	uint32_t ack_write_ns;
} hw_replica_state;

/* Count (and log the first of) a message refused for its sender (hw_rm.c). */
void hw_rm_count_reject(hw_rm *rm, hw_rm_reject why, const hw_msg *m);

#include "hw_ptiming.h"

typedef struct hw_part hw_part;
struct hw_part {
	hw_rm *rm;
	hw_hw_move hw_move;           /* the last HW move while timing (hw_ptiming.h) */
	int64_t corrupt_logged_plus1; /* offset + 1 of the last corrupt batch logged (0: none) */
	hw_tp tp;
	char topic[HW_TOPIC_NAME_MAX];
	int role;                     /* hw_part_role */
	int32_t leader;
	int32_t leader_epoch;
	int32_t partition_epoch;
	hw_idset replicas, isr, elr, last_known_elr;
	uint8_t lrs;                  /* leader recovery state */
	int16_t min_isr_topic;        /* from PartitionState, 0 = broker default */
	hw_topic_config tconf;        /* the topic configs last applied to the store */
	int32_t max_message_bytes;    /* max.message.bytes (topic), -1 = message.max.bytes */

	/* AlterPartition: one in flight (Kafka PendingExpandIsr/PendingShrinkIsr) */
	int alter_in_flight;          /* 1: sent, waiting; 2: stuck until new metadata */
	hw_idset alter_isr;           /* the proposed ISR */
	uint32_t alter_corr;
	int64_t alter_sent_ms;
	int64_t alter_retry_ms;       /* re-send due (unanswered, or refused by the transport) */
	uint8_t alter_send_failures;  /* consecutive refused sends */

	/* the broker epoch the controller registered for each replica
	 * (PARTITION_STATE replica epochs; n 0: none known): a follower FETCH
	 * with an older one is from a stale incarnation (hw_fetch.c) */
	uint8_t n_reg_epochs;
	int32_t reg_ids[HW_MAX_RF];
	int64_t reg_epochs[HW_MAX_RF];

	hw_store *store;
	int store_err;                /* open failed: offline */
	/* the store failed an I/O (EIO, ENOSPC: its log dir is offline,
	 * docs/logdirs.md), sticky until the partition is reopened: not
	 * fetched for, and its unwritten bytes are never waited for */
	int store_failed;
	int64_t hw;
	int64_t leader_epoch_start_offset;

	uint8_t nrs;
	hw_replica_state rs[HW_MAX_RF];   /* remote replicas (leader only) */

	hw_purg_key produce_key, fetch_key;
	uint8_t dirty;                /* on rm's dirty list */
	uint8_t deleted;              /* its topic was deleted: forced ops answer UNKNOWN_TOPIC_OR_PARTITION */
	uint8_t leo_changed;          /* wake fetch watchers */
	uint8_t hw_moved;             /* HW advanced since the last drain: wake both */
	int64_t durable_seen;         /* store durable end at the last drain (acks=1 waiters) */
	int64_t hw_checkpointed;      /* HW last written to the store's checkpoint, -1 */

	/* follower fetcher */
	int fstate;                   /* hw_fetcher_state */
	int64_t fbackoff_until_ms;
	uint32_t ofe_corr;            /* 0: none outstanding */
	int64_t ofe_sent_ms;
	int64_t ofe_retry_ms;         /* refused by the transport: not before this */
	uint8_t ofe_send_failures;    /* consecutive refused sends */

	hw_pidmap pids;
	uint64_t m[HW_PM_MAX];

	/* replication throttle (PARTITION_STATE leader/follower_throttled) */
	hw_idset leader_throttled, follower_throttled;
	uint8_t lthrottled;           /* our leader quota covers it */
	uint8_t fthrottled;           /* our follower quota covers it */
	uint8_t f_in_sync;            /* follower: LEO >= leader HW at the last response */
	hw_piece_asm pasm;            /* follower: a batch arriving in pieces (hw_wire_piece.h) */
};

/* ---- follower fetch session: one per leader we follow ---------------- */
typedef struct hw_fsess {
	int32_t leader;
	int outstanding;
	uint32_t corr;
	int64_t sent_ms;
	int64_t backoff_until_ms;
	int64_t part_backoff_min_ms;  /* earliest partition back-off end seen at the last scan */
	uint32_t nparts_sent;         /* 0: nothing to fetch at the last scan */
	uint8_t send_failures;        /* consecutive fetches the transport refused */
	/* acks=all stage timing (hw_ptiming.h): the last response asked for
	 * our turnaround; it was received at turn_rx_ns (our clock) */
	uint8_t turn_wanted;
	int64_t turn_rx_ns;
} hw_fsess;

#define HW_RM_MAX_SESS 64

#define HW_RM_MAX_RACKS 64
struct hw_rm {
	hw_rm_config cfg;
	hw_clock *clock;
	hw_net *net;
	hw_wheel *wheel;
	hw_purg *produce_purg, *fetch_purg;
	/* the last correlation id handed out, unwrapped (hw_rm_new_corr) */
	uint64_t corr_clock;

	hw_part **parts;
	size_t nparts, capparts;
	uint32_t *hidx;               /* hash tp -> index+1, 0 empty */
	size_t hcap;

	hw_part **dirty;
	size_t ndirty, capdirty;
	size_t nio_wait;              /* dirty entries that only wait for store I/O */

	int64_t next_isr_check_ms;
	int64_t next_alter_check_ms;
	int64_t next_retention_check_ms; /* log.retention.check.interval.ms */
	int64_t next_hw_checkpoint_ms;   /* replica.high.watermark.checkpoint.interval.ms */
	int64_t next_clean_check_ms;     /* log.cleaner.backoff.ms */
	size_t clean_cursor;             /* the partition the cleaner looks at next */
	int ofe_pending;              /* some partition is TRUNCATING */
	hw_fsess sess[HW_RM_MAX_SESS];
	int nsess;

	/* scratch buffers reused per request */
	uint8_t *scratch;
	size_t scratch_cap;
	void *rscratch;               /* response part arrays */
	size_t rscratch_cap;
	void *fscratch;               /* follower fetch request parts */
	size_t fscratch_cap;

	uint64_t dropped_malformed;
	int32_t controller_epoch;          /* highest seen (hw_rm.h: controller fencing) */
	uint64_t stale_controller_pushes;
	uint64_t stale_controller_alter_resps;
	uint64_t rejected[HW_RM_REJECT__COUNT];   /* hw_rm.h HW_RM_REJECT_TABLE */

	/* replication throttle: broker-wide quotas (hw_quota.h) */
	hw_quota leader_quota, follower_quota;

	/* the other brokers' racks (hw_rm_set_broker_rack), for the
	 * rack-aware replica selector (docs/racks.md) */
	int n_racks;
	struct { int32_t id; char rack[HW_RACK_MAX]; } racks[HW_RM_MAX_RACKS];
	hw_fetch_preferred *pscratch;  /* preferred read replicas of a response */
	size_t pscratch_cap;

	/* request timing (hw_rm.h "Request timing"); req_fn NULL: off */
	hw_rm_req_observer_fn req_fn;
	void *req_ctx;
	struct hw_req_clock *cur;     /* the request hw_rm_on_msg is handling, or NULL */
	int64_t msg_rx_ns;            /* receive stamp of the message being handled, 0: none */
	/* acks=all stage timing (hw_ptiming.h): parked produces that asked for
	 * it; 0: nothing stamped anywhere */
	uint32_t timed_waiting;
	/* the follower whose fetch is being handled, with its turnaround, while
	 * timing (NULL otherwise): a HW move now is that follower's */
	hw_replica_state *timing_rs;
	int64_t timing_fetch_rx_ns;
	uint32_t timing_turn_write_ns, timing_turn_send_ns;
};

/* Record p's HW move now in p->hw_move (hw_ptiming.h): the follower in
 * rm->timing_rs, or the leader's own write (critical -1). */
void hw_pt_note_hw_move(hw_part *p);

/* A PRODUCE/FETCH's timestamps (kind < 0: not timed). hw_rm_on_msg_at
 * fills one for the message it handles; a parked request copies it into
 * its delayed operation (parked_ns set) and answers through it later. */
typedef struct hw_req_clock {
	int64_t rx_ns, start_ns, parked_ns;
	int kind;                           /* hw_rm_req_kind, -1: untimed */
	uint8_t parked;                     /* parked_ns is set */
} hw_req_clock;
#define HW_REQ_CLOCK_NONE ((hw_req_clock){ .kind = -1 })

/* The request being handled now (rm->cur), or an untimed one. */
hw_req_clock hw_rm_req_current(hw_rm *rm);
/* Mark *t parked now (no-op when untimed). */
void hw_rm_req_park(hw_rm *rm, hw_req_clock *t);
/* Send response m (NULL: none, acks=0) of request t and report its timing
 * (t untimed or no observer: just send). error goes into the report.
 * Returns hw_rm_send's result, 0 for m NULL. */
int hw_rm_req_answer(hw_rm *rm, const hw_req_clock *t, const hw_msg *m, int16_t error);

/* Hostile-input guard: an id set from the network must fit. */
static inline int hw_idset_valid(const hw_idset *s) { return s->n <= HW_MAX_RF; }

static inline int64_t rm_now_ms(hw_rm *rm) { return hw_clock_ms(rm->clock); }
void *hw_rm_scratch(void **buf, size_t *cap, size_t need);

hw_part *hw_rm_find(hw_rm *rm, hw_tp tp);
/* Queue p for HW/purgatory processing in the next poll. */
void hw_rm_mark_dirty(hw_rm *rm, hw_part *p);
int hw_rm_send(hw_rm *rm, const hw_msg *m);
/* The correlation id of a new request (fetch, OffsetsForLeaderEpoch,
 * AlterPartition): in [1, 2^31), never 0 (0 means "none in flight"), and
 * not one the previous incarnation of this broker used recently
 * (hw_rm.c, "Correlation ids"). Never fails. */
uint32_t hw_rm_new_corr(hw_rm *rm);
/* Back-off (ms) before retrying a request the transport refused: the
 * config's send_retry_backoff_ms doubled per earlier consecutive refusal
 * (*failures, then incremented), at most cap (at least the base). A
 * sender resets *failures to 0 when a send is accepted. */
int64_t hw_rm_send_backoff_ms(const hw_rm *rm, uint8_t *failures, int64_t cap);

/* hw_part.c */
hw_part *hw_part_create(hw_rm *rm, const hw_partition_state *ps);
void hw_part_destroy(hw_part *p);
/* Write the HW to the store's checkpoint if it changed since the last one. */
void hw_part_checkpoint_hw(hw_part *p);
void hw_part_on_state(hw_part *p, const hw_partition_state *ps);
int64_t hw_part_leo(const hw_part *p);              /* durable end (what counts) */
/* 1 while appended bytes have not reached the durable end (writes or the
 * fsync in flight); 0 without a store or with a failed one. */
int hw_part_writes_pending(const hw_part *p);
/* The broker epoch the controller registered for replica id, -1 unknown. */
int64_t hw_part_registered_epoch(const hw_part *p, int32_t id);
/* The store failed an I/O with rc (what: which call): marks it failed
 * (store_failed, logged once); the fetcher stops fetching for it. */
void hw_part_store_failed(hw_part *p, int rc, const char *what);
int hw_part_effective_min_isr(const hw_part *p);
void hw_part_maximal_isr(const hw_part *p, hw_idset *out);
/* Leader HW rule. Returns 1 if the HW moved (then hw_moved is set and p is
 * dirty: watchers are completed by the next poll). */
int hw_part_maybe_increment_hw(hw_part *p, int64_t now_ms);
void hw_part_set_role(hw_part *p, int role, const char *why);
void hw_part_set_fstate(hw_part *p, int st, const char *why);
hw_replica_state *hw_part_rs(hw_part *p, int32_t id);
/* Follower fetch bookkeeping (leader): lastCaughtUp rule, ISR expand. */
void hw_part_update_follower(hw_part *p, hw_replica_state *r, int64_t fetch_offset,
			     int32_t last_fetched_epoch, int64_t now_ms);
void hw_part_maybe_shrink_isr(hw_part *p, int64_t now_ms);
void hw_part_on_alter_resp(hw_part *p, const hw_alter_partition_resp *r, uint32_t corr);
void hw_part_retry_alter(hw_part *p, int64_t now_ms);
void hw_part_update_gauges(hw_part *p, int64_t now_ms);
void hw_part_fill_info(hw_part *p, hw_rm_part_info *out, int64_t now_ms);
/* Truncate (follower). Rebuilds producer state, clamps HW. */
int hw_part_truncate(hw_part *p, int64_t offset, const char *why);

/* hw_produce.c */
void hw_produce_handle(hw_rm *rm, const hw_msg *m);

/* hw_fetch.c */
void hw_fetch_handle(hw_rm *rm, const hw_msg *m);
/* hw_select.c: the replica a consumer in client_rack should fetch p from
 * instead of this leader (replica.selector.class), or -1: here. */
int32_t hw_select_read_replica(hw_rm *rm, hw_part *p, const char *client_rack, int64_t fetch_offset,
			       int64_t now_ms);
void hw_ofe_handle(hw_rm *rm, const hw_msg *m);
/* Epoch check (KIP-320): 0 or FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH. */
int hw_part_check_epoch(const hw_part *p, int32_t current_leader_epoch);

/* hw_fetcher.c */
void hw_fetcher_on_fetch_resp(hw_rm *rm, const hw_msg *m);
void hw_fetcher_on_ofe_resp(hw_rm *rm, const hw_msg *m);
/* Send due fetches / re-sends. Returns work done. */
int hw_fetcher_poll(hw_rm *rm, int64_t now_ms);
int64_t hw_fetcher_next_deadline_ms(hw_rm *rm);
/* p just became follower of p->leader (or stopped following). */
void hw_fetcher_start(hw_part *p);

#endif
