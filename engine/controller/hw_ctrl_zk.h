/* hw_ctrl_zk.h — ZooKeeper mode of the controller: election, epoch and the
 * metadata store (docs/controller-ha.md).
 *
 * Design note (Kafka's ZooKeeper-mode controller, KafkaController /
 * KafkaZkClient). Every controller process connects to the ensemble
 * (`zookeeper.connect`) and tries to create the ephemeral znode
 * /controller holding its id. The winner increments /controller_epoch with
 * a conditional write (the version it read) and becomes active; the
 * others set a watch on /controller and stand by. When /controller goes
 * away (clean shutdown deletes it at once; a crash or a stop lets the
 * session expire after zookeeper.session.timeout.ms) the watchers race to
 * create it again.
 *
 * The metadata lives under /hiwater: one znode per entity, holding the
 * controller's own whole-entity record (hw_ctrl_int.h's encoding):
 *   /hiwater/brokers/<id>        registration, epoch, state
 *   /hiwater/topics/<topic id>   name, partitions, replicas, configs
 *   /hiwater/topic_configs/<id>  configs changed after creation
 *   /hiwater/partitions/<topic id>-<partition>  leader, epochs, ISR, ELR,
 *                                last known ELR, leader recovery state
 *   /hiwater/seq                 records written so far (broker epochs)
 * Every write is one multi-op: check(/controller_epoch, the version our
 * epoch bump produced) + create-or-set(entity, the version we last saw) +
 * set(/hiwater/seq). A controller whose epoch was superseded, whose
 * session ended, or that missed another controller's write fails the
 * whole op (-ESTALE) and steps down; one that cannot reach a quorum fails
 * with -ENOTCONN and nothing changes (metadata changes are refused while
 * the data plane goes on with the states the brokers have).
 *
 * Threading. The ZooKeeper C client (zookeeper_mt) runs an I/O thread and a
 * completion thread. Its watcher callbacks only set bits in an atomic word
 * and write an eventfd; everything else — election, loads, writes — runs
 * on the caller's (the controller reactor's) thread with the synchronous
 * API, which blocks that thread for one round trip and is never issued
 * unless the session is connected.
 */
#ifndef HW_CTRL_ZK_H
#define HW_CTRL_ZK_H
#include <stdint.h>
#include "hw_ctrl_store.h"

/* Session states as this module reports them (X(NAME)); the metric
 * hiwater_controller_zookeeper_session_state uses these numbers. */
#define HW_ZK_SESSION_STATES(X) \
	X(CONNECTING)           \
	X(CONNECTED)            \
	X(EXPIRED)              \
	X(CLOSED)
typedef enum hw_zk_session_state {
#define HW_ZK_SS_ENUM(n) HW_ZK_SESSION_##n,
	HW_ZK_SESSION_STATES(HW_ZK_SS_ENUM)
#undef HW_ZK_SS_ENUM
	HW_ZK_SESSION_STATE_COUNT
} hw_zk_session_state;
const char *hw_zk_session_state_name(int s); /* never NULL */

/* Counters (X(NAME)). Failed writes are counted by why they failed. */
#define HW_ZK_COUNTERS(X)                \
	X(SESSIONS_ESTABLISHED)          \
	X(SESSIONS_EXPIRED)              \
	X(DISCONNECTS)                   \
	X(ELECTIONS_WON)                 \
	X(ELECTIONS_LOST)                \
	X(RESIGNATIONS)                  \
	X(WRITES)                        \
	X(WRITES_FAILED_NOT_CONNECTED)   \
	X(WRITES_FAILED_EPOCH_VERSION)   \
	X(WRITES_FAILED_ENTITY_VERSION)  \
	X(WRITES_FAILED_SESSION)         \
	X(WRITES_FAILED_OTHER)           \
	X(LOADS)
typedef enum hw_zk_counter {
#define HW_ZK_C_ENUM(n) HW_ZK_C_##n,
	HW_ZK_COUNTERS(HW_ZK_C_ENUM)
#undef HW_ZK_C_ENUM
	HW_ZK_COUNTER_COUNT
} hw_zk_counter;
const char *hw_zk_counter_name(int c); /* never NULL */

/* What hw_zk_poll asks its caller to do (X(NAME)). */
#define HW_ZK_ACTIONS(X) \
	X(NONE)          \
	X(BECOME_ACTIVE) /* we won: create the controller from the store with hw_zk_epoch() */ \
	X(STEP_DOWN)     /* we lost the epoch or the session: destroy the controller now */
typedef enum hw_zk_action {
#define HW_ZK_A_ENUM(n) HW_ZK_ACT_##n,
	HW_ZK_ACTIONS(HW_ZK_A_ENUM)
#undef HW_ZK_A_ENUM
	HW_ZK_ACTION_COUNT
} hw_zk_action;

typedef struct hw_zk_cfg {
	const char *connect;            /* zookeeper.connect: HOST:PORT[,HOST:PORT...][/chroot] */
	int32_t session_timeout_ms;     /* zookeeper.session.timeout.ms, 18000 */
	int32_t connection_timeout_ms;  /* zookeeper.connection.timeout.ms (default: the session timeout) */
	int32_t node_id;                /* our controller id, written into /controller */
	const char *control_ep;         /* our control endpoint, written into /controller */
} hw_zk_cfg;

typedef struct hw_zk hw_zk;

/* Start connecting (returns before the session is up). 0, -EINVAL (empty
 * connect string or bad timeouts), -ENOMEM, -errno (eventfd, or the client
 * refused the connect string). */
int hw_zk_create(const hw_zk_cfg *cfg, hw_zk **out);
/* Clean shutdown: delete /controller at once if it is ours, close the
 * session. NULL is a no-op. */
void hw_zk_destroy(hw_zk *z);

/* Readable when the ZooKeeper threads have posted an event. */
int hw_zk_wait_fd(const hw_zk *z);
/* Controller thread: take posted events, run the election; returns the
 * action the caller must take now (NONE most of the time). */
hw_zk_action hw_zk_poll(hw_zk *z);
/* Earliest clock (CLOCK_MONOTONIC ns) hw_zk_poll wants to run again
 * (election retries); INT64_MAX if only events. */
int64_t hw_zk_next_deadline_ns(const hw_zk *z);

/* Give up being active now (the caller could not take over): deletes
 * /controller if ours; the election runs again shortly. */
void hw_zk_resign(hw_zk *z, const char *why);

/* The metadata store of the active controller (valid for z's lifetime). */
const hw_ctrl_store *hw_zk_store(hw_zk *z);

int hw_zk_is_active(const hw_zk *z);
/* Our controller epoch while active (else the last one we saw). */
int32_t hw_zk_epoch(const hw_zk *z);
/* The active controller as /controller names it: its id, or -1 unknown;
 * ep (may be NULL, cap bytes) its control endpoint. */
int32_t hw_zk_active_id(const hw_zk *z, char *ep, int cap);
hw_zk_session_state hw_zk_session(const hw_zk *z);
uint64_t hw_zk_counter_get(const hw_zk *z, hw_zk_counter which);
/* Latency of every ZooKeeper request (ns), read on the controller thread. */
const struct hw_hist *hw_zk_latency(const hw_zk *z);
int64_t hw_zk_latency_sum_ns(const hw_zk *z); /* exact sum of what the histogram holds */

#endif
