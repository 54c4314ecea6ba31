/* hx.h — the deterministic replication harness: N replica managers of M
 * partitions in one process, a simulated clock, a simulated network, a
 * controller stub and scripted clients.
 *
 * Design note. Time is virtual (ms): hx_run_until() delivers every message
 * due, polls every node, and jumps the clock to the next event (message due
 * time or a node's next deadline). The network deep-copies each hw_msg at
 * send time and can drop, duplicate, delay (so reorder) and cut links,
 * all from one seeded PRNG, so a run is a pure function of its seed. Nodes
 * can be paused (a GC pause: no polls, inbound messages held until resume)
 * and messages to a node can be held and released one at a time (a slow
 * follower). The controller is the real one (engine/controller, node
 * HX_CTL, hx_ctl.c) on the virtual clock, the simulated network and an
 * in-memory metadata store (it can be restarted over it); every node registers and heartbeats with it over
 * the simulated network, so fencing (a missed session), unfencing, leader
 * election, ELR and unclean election are the controller's own code.
 * Each harness partition is its own topic "t<part>" (partition 0), created
 * with the given replica assignment and min.insync.replicas. Each node's
 * partition logs are engine/broker's (hw_broker_logs.h) in its log dir on
 * the simulated disk (hw_broker_memfs.h; the file system with use_log), so
 * a restart recovers them, deleted and stale logs included, as hiwaterd.
 */
#ifndef HX_H
#define HX_H
#include <stdint.h>
#include "hw_memstore.h"
#include "hw_rm.h"

#define HX_MAX_NODES 6
#define HX_MAX_PARTS 10240
#define HX_CTL 100
#define HX_CLIENT HW_CLIENT_NODE_BASE
#define HX_MAX_RESP 4096

typedef struct hx hx;

typedef struct hx_resp {
	uint32_t corr;
	int type;
	int16_t error;
	int64_t base_offset;
	int64_t at_ms;
	int16_t acks;
	int nrec;
	/* consumer fetch */
	int64_t hw;
	int64_t first_offset, next_offset; /* records returned: [first, next) */
	int nrecords;
	int whole;               /* the records frame as whole batches, nothing after them */
	int copies_at_ack;       /* replicas holding the batch when the ack was sent */
} hx_resp;

typedef struct hx_opts {
	int nodes;               /* ids 1..nodes */
	uint64_t seed;
	int use_log;             /* 1: the real io_uring hw_log in a temp dir
				  * (also when env HX_STORE=log) */
	int memstore;            /* 1: the simulated disk even with HX_STORE=log
				  * (a test that turns hw_memstore's knobs) */
	int log_compact;         /* use_log: the logs have cleanup.policy=compact */
	int64_t log_segment_bytes; /* use_log: > 0: the logs' segment.bytes */
	void (*tweak)(int node, hw_rm_config *c, void *arg);
	void *arg;
	/* the controller's and brokers' settings; 0: Kafka's defaults
	 * (broker.heartbeat.interval.ms 2000, broker.session.timeout.ms 9000),
	 * ELR on, auto leader rebalance off (rebalance_ms > 0: on, with
	 * leader.imbalance.check.interval of rebalance_ms) */
	int32_t heartbeat_interval_ms;
	int32_t session_timeout_ms;
	int elr_off;
	int32_t rebalance_ms;
	/* > 0: FETCH_RESPs travel as real wire frames of at most this many
	 * bytes (hw_wire_encode with a split, decoded again), each frame
	 * dropped/duplicated on its own — batches larger than that go as
	 * batch pieces (docs/wire.md#batch-pieces). 0: deep copies. */
	int wire_frame;
} hx_opts;

hx *hx_create(const hx_opts *o);
void hx_destroy(hx *h);

int64_t hx_now(hx *h);
hw_rm *hx_rm(hx *h, int node);
/* The node's currently open store of partition part (NULL if none). */
hw_store *hx_store(hx *h, int node, int part);
/* Copy of the node's log bytes of part from its log start up to (not
 * including) batches at/after `upto`; *len set; caller frees. Handles
 * zero-copy refs and short reads. NULL (len 0) when empty. */
uint8_t *hx_read_all(hx *h, int node, int part, int64_t upto, size_t *len);
int hx_uses_log(hx *h);

/* Controller (the real one): create partition `part` as topic "t<part>"
 * with this replica assignment (leader = first) and min ISR; the controller
 * pushes its state to the replicas. */
void hx_ctl_create(hx *h, int part, const int *replicas, int n, int min_isr);
/* The broker asks to be fenced with its heartbeat (want_fence, as with
 * offline log dirs), delivered now, and then stops heartbeating; unfence:
 * its next heartbeat, delivered now. A missed session (isolate or pause the
 * node past session_timeout_ms) fences it through the controller's timer. */
void hx_ctl_fence(hx *h, int node);
void hx_ctl_unfence(hx *h, int node);
/* Controlled shutdown: want_shutdown heartbeats until the controller says
 * should_shut_down, then the node restarts cleanly (it registers with its
 * last broker epoch, so it keeps its ELR places) — at once, or with
 * stay_down when the test resumes it (hx_pause(h, node, 0)). */
void hx_ctl_shutdown(hx *h, int node, int stay_down);
int hx_ctl_broker_state(hx *h, int node);      /* hw_ctrl_broker_state */
int hx_ctl_leader(hx *h, int part);
/* The controller's current state of the partition (refreshed per call). */
const hw_partition_state *hx_ctl_state(hx *h, int part);
/* Topic config change: the brokers whose leader / follower replication
 * quota covers the partition (re-pushed at the same epochs). */
void hx_ctl_set_throttle(hx *h, int part, const hw_idset *leader, const hw_idset *follower);
/* Any topic config the controller alters (min.insync.replicas,
 * unclean.leader.election.enable, ...): the Kafka error code. */
int hx_ctl_set_config(hx *h, int part, const char *key, const char *value);
/* Delete partition part's topic at the controller (DeleteTopics): its
 * error code. The replicas drop the partition; hx_store becomes NULL; part
 * may be created again (hx_ctl_create: the same name, a new topic id). */
int hx_ctl_delete(hx *h, int part);
struct hw_ctrl *hx_ctl(hx *h);
/* Stop the controller and start a new one over the same metadata records:
 * it replays them, and every registered broker gets a fresh session. */
void hx_ctl_restart(hx *h);
/* How many times the node's process started (crash or clean restarts). */
int hx_incarnation(hx *h, int node);
/* The tp the controller gave partition `part`. */
hw_tp hx_tp_of(hx *h, int part);

/* Network faults (percent, ms). */
void hx_net_faults(hx *h, int drop_pct, int dup_pct, int delay_min, int delay_max);
void hx_net_cut(hx *h, int a, int b, int cut); /* both directions */
void hx_isolate(hx *h, int node, int isolated);
/* No route yet (the transport does not know the destination's address):
 * sends from node `from` to `to` fail with -EHOSTUNREACH, nothing sent,
 * while virtual time < until_ms. hx_net_refused: sends refused so far. */
void hx_net_unreachable(hx *h, int from, int to, int64_t until_ms);
uint64_t hx_net_refused(hx *h);
void hx_pause(hx *h, int node, int paused);
void hx_hold_to(hx *h, int node, int hold);    /* hold FETCH_RESPs to node */
int hx_release_to(hx *h, int node, int n);     /* deliver n held messages */
/* The FETCH_RESPs held for node so far stay held until hx_release_to (late
 * datagrams, e.g. answers that outlive the process they were meant for);
 * new ones are delivered again (hold off). */
void hx_hold_keep(hx *h, int node);

/* Clients. Each returns the correlation id. */
typedef struct hx_idem {
	int64_t pid;             /* producer id */
	int16_t epoch;           /* producer epoch */
	int32_t seq;             /* base sequence */
} hx_idem;

typedef struct hx_produce_req {
	int node;                /* the broker it is sent to */
	int part;
	int acks;                /* 0, 1 or -1 (all) */
	int nrec;                /* records in the batch, 1..256 */
	int32_t timeout_ms;      /* 0: 30000 */
	const hx_idem *idem;     /* NULL: not idempotent */
	int keyed;               /* records get keys "k<i>" (else null keys) */
} hx_produce_req;

uint32_t hx_produce(hx *h, const hx_produce_req *r);
uint32_t hx_consume(hx *h, int node, int part, int64_t offset, int32_t max_wait_ms);
const hx_resp *hx_resp_get(hx *h, uint32_t corr); /* NULL if none yet */
int hx_resp_count(hx *h, uint32_t corr);          /* responses seen for corr */

/* Requests (acks != 0) answered != 1 times by the engine (counted at send
 * time): *unanswered gets those answered 0 times, return value those
 * answered more than once. */
int hx_answer_check(hx *h, int *unanswered);
/* Raw send from a pseudo node (tests of the fetch path). */
void hx_send_raw(hx *h, const hw_msg *m);
/* The last message delivered to pseudo node `id` (>= 200) of `type`. */
const hw_msg *hx_last_to(hx *h, int id, int type);

/* Run until virtual time t (ms). Returns messages delivered. */
long hx_run_until(hx *h, int64_t t);
/* Run until nothing is in flight and no node has work, at most max_ms. */
long hx_run_quiet(hx *h, int64_t max_ms);

/* Per-step invariant hook (property tests). */
void hx_set_step_hook(hx *h, void (*fn)(hx *h, void *arg), void *arg);
/* Deliver everything due now to `node` without polling anyone. */
void hx_deliver_now(hx *h);

void hx_info(hx *h, int node, int part, hw_rm_part_info *out);
/* Broker restart: destroy the node's rm and its partition logs, recover
 * the logs from its log dir (the same persistent stores) and create the rm
 * again; it relearns its partitions from the controller. */
void hx_restart(hx *h, int node);

/* Stats the property checker uses. */
typedef struct hx_stats {
	uint64_t sent, dropped, duplicated, delivered;
	uint64_t acks_all_ok;      /* acks=-1 NONE responses sent */
	uint64_t ack_violations;   /* acks=-1 NONE sent with HW <= last offset */
} hx_stats;
void hx_get_stats(hx *h, hx_stats *out);

/* The controller's periodic re-push of every partition state to each broker
 * (hiwater.controller.resync.interval.ms; 500 ms here; 0 disables, e.g. for
 * benchmarks). */
void hx_set_repush_ms(hx *h, int64_t ms);

uint64_t hx_rand(hx *h);

#endif
