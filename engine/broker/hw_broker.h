/* hw_broker.h — the broker role's conversation with the controller:
 * registration, heartbeats (with the offline-log-dir trailer), fencing,
 * which controller to follow, and controlled shutdown (docs/replication.md,
 * docs/controller-ha.md, docs/logdirs.md). Kafka keeps the same in
 * BrokerLifecycleManager; Redpanda in cluster/members_manager.
 *
 * Design note. A state machine driven by the controller's answers
 * (hw_broker_on_msg) and a clock (hw_broker_tick / hw_broker_deadline); it
 * sends through hw_net and touches nothing else: what only the process
 * knows (its advertised endpoints, its offline log dirs, what to do once
 * registered or stopped) comes through hw_broker_ops. The daemon
 * (apps/hiwaterd/hwd_broker.c) and the deterministic harness
 * (tests/engine/repl/hx_ctl.c) run this same code.
 *
 *   STARTING -> REGISTERING: hw_broker_start; BROKER_REGISTER every second
 *     until answered (previous_broker_epoch from the clean-shutdown file
 *     tells the controller a clean restart from a crash, KIP-966).
 *   REGISTERING -> FENCED: registered; heartbeat at once.
 *   FENCED -> RUNNING: a heartbeat answer says not fenced; RUNNING ->
 *     FENCED: one says fenced. Heartbeats every broker.heartbeat.interval.ms.
 *   any -> REGISTERING: STALE_BROKER_EPOCH for our epoch (the controller
 *     forgot us): register again presenting that epoch as the previous one.
 *   FENCED/RUNNING -> CONTROLLED_SHUTDOWN: hw_broker_begin_shutdown;
 *     want_shutdown heartbeats (every min(interval, 250 ms)) until the
 *     controller answers should_shut_down or the timeout passes -> STOPPED.
 * Every transition is logged ("broker N: A -> B (why)").
 *
 * Controller fencing: heartbeat answers with a controller epoch below the
 * highest seen are dropped (counted); with several voters the broker moves
 * to a push's sender with a higher epoch, to the active controller a
 * standby names (NOT_CONTROLLER), or to the next voter after 3 silent
 * heartbeat intervals (at least 1.5 s).
 *
 * One reactor owns a hw_broker; nothing here locks. */
#ifndef HW_BROKER_H
#define HW_BROKER_H
#include <stdint.h>
#include "hw_admin_msg.h"
#include "hw_clock.h"
#include "hw_net.h"

#define HW_BROKER_ROLE_STATES(X)    \
	X(STARTING)            \
	X(REGISTERING)         \
	X(FENCED)              \
	X(RUNNING)             \
	X(CONTROLLED_SHUTDOWN) \
	X(STOPPED)
typedef enum hw_broker_role_state {
#define HW_BS_ENUM(n) HW_BROLE_##n,
	HW_BROKER_ROLE_STATES(HW_BS_ENUM)
#undef HW_BS_ENUM
	HW_BROLE_STATE_COUNT
} hw_broker_role_state;
const char *hw_broker_role_state_name(int s);

#define HW_BROKER_MAX_VOTERS 16

/* Offline log dirs at heartbeat time (docs/logdirs.md). */
typedef struct hw_broker_offline {
	int dirs;       /* offline log dirs */
	int replicas;   /* partition logs in them */
	int listed;     /* of those, written to out[] (topic id known) */
} hw_broker_offline;

typedef struct hw_broker_ops {
	/* Fill the process's part of a registration: control_ep, data_ep,
	 * listeners, rack (the rest is set). 0, or -errno to skip this attempt
	 * (retried a second later). */
	int (*fill_register)(void *ctx, hw_broker_register_req *r);
	/* The offline log dirs and up to cap of their replicas into out[].
	 * NULL: none ever. */
	void (*offline)(void *ctx, hw_tp *out, int cap, hw_broker_offline *o);
	/* Registered with this broker epoch (the replica managers need it). */
	void (*registered)(void *ctx, int64_t broker_epoch);
	/* A state change, after it is logged (from, to, why). STOPPED is the
	 * end: the process flushes its logs and exits. */
	void (*state_changed)(void *ctx, hw_broker_role_state from, hw_broker_role_state to, const char *why);
	/* We follow controller `id` (a voter) from now on. NULL: one voter. */
	void (*controller_changed)(void *ctx, int32_t id);
} hw_broker_ops;

typedef struct hw_broker_config {
	int32_t node_id;
	int32_t controller_id;               /* the one followed first */
	int32_t voters[HW_BROKER_MAX_VOTERS]; /* controller.quorum.voters ids, in order */
	int n_voters;                        /* < 2: one controller, never switched */
	int32_t heartbeat_interval_ms;       /* broker.heartbeat.interval.ms */
	int controlled_shutdown_enable;      /* controlled.shutdown.enable */
	int32_t controlled_shutdown_timeout_ms; /* hiwater.controlled.shutdown.timeout.ms */
	int n_log_dirs;                      /* all offline: ask to be fenced */
	uint64_t incarnation;                /* random per process start */
	int64_t previous_epoch;              /* clean-shutdown file's epoch, -1 none */
	const hw_broker_ops *ops;
	void *ctx;
} hw_broker_config;

typedef struct hw_broker_stats {
	uint64_t controller_switches;
	uint64_t not_controller_redirects;
	uint64_t stale_controller_heartbeat_resps; /* dropped: lower controller epoch */
	int32_t controller_epoch;                  /* highest seen, 0: none (embedded) */
	int offline_log_dirs;                      /* as in the last heartbeat */
} hw_broker_stats;

typedef struct hw_broker hw_broker;

/* 0 and *out (STARTING), -EINVAL (bad config), -ENOMEM. The clock and net
 * are borrowed for the broker's lifetime. */
int hw_broker_create(const hw_broker_config *cfg, hw_clock *clock, hw_net *net, hw_broker **out);
void hw_broker_destroy(hw_broker *b);
/* STARTING -> REGISTERING: the first registration goes out at the next tick. */
void hw_broker_start(hw_broker *b);
/* A message from a controller. 1 if it was the broker role's
 * (BROKER_HEARTBEAT_RESP, which answers registrations too): consumed, also
 * when dropped as stale; 0 otherwise. PARTITION_STATE is looked at (its
 * controller epoch) and 0 returned: it is the replica manager's. */
int hw_broker_on_msg(hw_broker *b, const hw_msg *m);
/* Timers: registration retry, heartbeat, shutdown timeout, controller
 * silence. Returns how many messages went out (or transitions). */
int hw_broker_tick(hw_broker *b);
/* When hw_broker_tick has something to do (ns), INT64_MAX when STOPPED. */
int64_t hw_broker_deadline(const hw_broker *b);
/* SIGTERM: controlled shutdown if enabled and registered, else STOPPED. */
void hw_broker_begin_shutdown(hw_broker *b);
/* Send the next registration/heartbeat now (e.g. a route appeared). */
void hw_broker_kick(hw_broker *b);

hw_broker_role_state hw_broker_get_state(const hw_broker *b);
int64_t hw_broker_epoch(const hw_broker *b);      /* -1 until registered */
int32_t hw_broker_controller(const hw_broker *b); /* the controller followed */
void hw_broker_get_stats(const hw_broker *b, hw_broker_stats *out);

#endif
