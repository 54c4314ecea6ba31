/* hwd_shard.h — a process's reactors (hiwater.reactor.lcores); the
 * structure is described in docs/reactors.md.
 *
 * Design note. A process runs its reactors as shards, all of one type and
 * built by one function each phase (hwd_shard_life.c: alloc, init, start,
 * stop, fini); reactor 0 is shards[0] and runs on the thread that started
 * the process, the others on threads of their own, each pinned to its CPU,
 * sharing nothing on the data path. A process without the broker role has
 * one shard and no data path. Partition (topic_id, p) belongs to reactor
 *
 *     hwd_shard_of(topic_id, p, N) = (topic_id + p) mod N
 *
 * on every broker (consecutive partitions of a topic go round-robin over the
 * reactors; different topics start at different reactors). Each shard owns
 * its data endpoint (a kernel-UDP socket, wire stream = reactor index,
 * hw_wire.h v2, or its DPDK queue), its mux, its replica manager (its
 * partitions, purgatories, timing wheel, fetcher sessions) and the logs of
 * its partitions (hwd_shard_net.c, hwd_shard_life.c). The process roles
 * are the node's (hwd_node.h) and run on reactor 0: the control socket,
 * signals, the controller role, the broker role (registration, heartbeats,
 * metadata), the metrics endpoint and the Kafka listener. With one reactor
 * (the default) shards[0] is the whole broker.
 *
 * Routing. Every endpoint delivers to one entry point, hwd_shard_on_msg,
 * and every router reads the owner column of HW_MSG_TABLE
 * (engine/iface/hw_msg.h; hwd_route.h): PARTITION rows go to the owning
 * reactor's replica manager, the others to reactor 0's roles. Sends read
 * the plane column: each shard's mux puts the CONTROL plane on the control
 * socket (reactor 0), through reactor 0 (DPDK reactors: `funnel`) or
 * through the reactor's own socket to the voters (UDP reactors).
 *
 * Addressing. A broker registers "udp:HOST:P0/P1/.../P(N-1)" as its data
 * endpoint: reactor k listens on Pk (P0 is hiwater.data.listen, the others
 * ephemeral). A peer with the same reactor count sends from its reactor k
 * straight to our reactor k — the reactor that owns the same partitions —
 * so follower fetches and their responses never cross reactors. Peers with
 * another count, and clients (they address P0), may reach a reactor that
 * does not own the partition: it hands the message to the owner.
 *
 * Hand-offs. A message for another reactor crosses the mailbox
 * (hw_mailbox.h: SPSC rings + wake) decoded (hwd_xmsg.h): one allocation
 * with the hw_msg and what it points to, record bytes the log holds by
 * reference passed with a hold of their own, never re-encoded as a wire
 * frame (admin bodies, u.other, are the exception: framed, the codec being
 * their deep copy). It carries the sender's address, which the owner
 * learns so its answer goes straight back from its own socket. A FETCH /
 * OFFSETS_FOR_EPOCH naming partitions of several reactors is split per
 * owner (each answers its part; a follower keeps the first answer and
 * re-fetches the rest). A lost hand-off (mailbox full, no memory) is
 * counted (FORWARD_LOST).
 *
 * Control-plane updates cross the same way: PARTITION_STATE pushes and
 * ALTER_PARTITION answers arriving at reactor 0 go to the owner; the
 * broker epoch (after registration) and data routes (learned from the
 * controller's metadata) are small typed messages (HWD_XMSG_TABLE).
 *
 * DPDK. Every port has one RX/TX queue pair per reactor (hw_dpdk.h):
 * reactor k owns a hw_dpdk instance on queue k, polls RX queue k and
 * transmits on TX queue k. Steering: a peer with the same reactor count
 * sends from its reactor k on its queue k, which is our queue k (memif
 * pairs queue k with queue k) — the reactor that owns the same partitions —
 * so follower fetches and their answers stay on one reactor per side. A
 * frame that lands on another reactor (clients, peers with other counts) is
 * routed by owner over the mailbox like any other (counted forwarded_out /
 * forwarded_in). A data reactor sends through its own queue, except
 *   - the CONTROL plane (AlterPartition...), posted to reactor 0
 *     (HWD_XMSG_SEND), which sends it on the control socket;
 *   - data frames to a peer that did not connect our queue (a memif client
 *     with fewer rings, e.g. the one-queue CLI: hw_dpdk send -EXDEV) or that
 *     only reactor 0 has learned (-EHOSTUNREACH): posted to reactor 0, whose
 *     queue 0 is always connected (counted tx_fallback).
 * Each reactor sleeps on the doorbell of its own queue (hw_doorbell.h).
 *
 * Reading across reactors. Reactor 0 answers METADATA / DESCRIBE_TOPIC and
 * serves metrics for every partition. It never touches another reactor's
 * replica manager: each data reactor publishes a snapshot of its
 * partitions (hw_rm_partition_info), replica-manager and transport counters
 * under a mutex, at most every 5 ms while it works and every 500 ms while
 * idle. Reactor statistics are relaxed atomics (hw_reactor.h).
 *
 * Replication throttle. Kafka's leader/follower.replication.throttled.rate
 * bound a whole broker. Each reactor's replica manager keeps its own pair
 * of quotas (hw_quota.h, no sharing), so each gets a share of the rate:
 * reactor k of N gets rate/N, plus one byte/s for k < rate mod N (the
 * shares add up to the rate). Exact when the throttled partitions' traffic
 * is spread evenly over the reactors (the shard function spreads
 * partitions round-robin); when it is not, the broker lets through less
 * than the rate (a reactor cannot lend its unused share), never more. The
 * alternative, one quota shared by every reactor (a rate sampled under a
 * lock or with atomics on every throttled fetch), would be exact in both
 * cases at the cost of cross-core traffic on the replication path. The
 * metrics report the sum of the shares as the bound.
 */
#ifndef HWD_SHARD_H
#define HWD_SHARD_H
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include "hw_mailbox.h"
#include "hw_rxhold.h"
#include "hwd_node.h"
#include "hwd_shard_of.h"
#include "hwd_xmsg.h"


/* Per-reactor counters (relaxed atomics: written by the shard's reactor,
 * read by metrics on reactor 0). X(NAME, "metric name", "help") */
#define HWD_SHARD_COUNTER_TABLE(X)                                                      \
	X(FORWARDED_OUT, "forwarded_out", "frames handed to the owning reactor")        \
	X(FORWARDED_IN,  "forwarded_in",  "frames received from other reactors")        \
	X(FORWARD_LOST,  "forward_lost",  "handoffs lost: mailbox full or not encodable") \
	X(SPLIT,         "split",         "requests split over several owners")        \
	X(LOCAL,         "local",         "messages handled by the reactor that received them") \
	X(SENT_VIA_0,    "sent_via_reactor0", "DPDK: frames a data reactor sent through reactor 0") \
	X(SENT_FOR,      "sent_for_others", "DPDK: frames reactor 0 sent for data reactors") \
	X(TX_FALLBACK,   "tx_fallback",   "DPDK: data frames whose peer did not connect our queue, sent via reactor 0")
typedef enum hwd_shard_counter {
#define HWD_SC_ENUM(n, s, h) HWD_SC_##n,
	HWD_SHARD_COUNTER_TABLE(HWD_SC_ENUM)
#undef HWD_SC_ENUM
	HWD_SC_COUNT
} hwd_shard_counter;

/* One reactor. Every reactor of a process is one of these, built by one
 * function (hwd_shards_alloc: the reactor; hwd_shards_init: a broker's
 * data path); reactor 0 is shards[0], whose reactor also runs the node's
 * roles (hwd_node.h). */
typedef struct hwd_shard {
	hwd_node *node;
	int idx;
	hw_reactor *reactor;
	hw_udp *data;                   /* UDP transport: our data socket (reactor 0 on
					 * hiwater.data.listen, the others ephemeral) */
	hw_dpdk *dpdk;                  /* DPDK transport: our queue's instance */
	hw_udp *rx_via;                 /* the socket being polled now (its peer is the
					 * sender's address), NULL outside a poll */
	hw_netmux *mux;                 /* the rm's sends: default our data net; CONTROL
					 * plane -> reactor 0: the control socket, DPDK
					 * reactors: `funnel`; Kafka listener answers
					 * (HW_KSRV_NODE) -> reactor 0's listener, or
					 * `to0` on the others */
	hw_net funnel;                  /* DPDK reactors >= 1: reactor 0 sends for us */
	hw_net to0;                     /* reactors >= 1: hand the message to reactor 0 */
	hw_net dnet;                    /* DPDK reactors >= 1: the rm's net (mux, then
					 * reactor 0 when our queue cannot reach the peer) */
	hw_rm *rm;
	hwd_log **logs;                 /* logs this shard claimed (polled here only) */
	int log_efd;                    /* their io_uring completions signal it (a wait
					 * source of this reactor); -1 */
	int n_logs, cap_logs;
	hw_wire_tx fwd_tx;              /* frames admin messages handed to another reactor */
	hw_wire_arena arena;            /* decodes the framed ones handed to us */
	uint8_t *arena_buf;
	uint64_t ctr[HWD_SC_COUNT];     /* relaxed atomic stores by this reactor */
	/* snapshot published for reactor 0 (shards >= 1) */
	pthread_mutex_t snap_lock;
	int snap_lock_ok;
	hw_rm_part_info *snap, *pub;    /* published / being built (swapped) */
	size_t n_snap, cap_snap, cap_pub;
	hw_rm_stats snap_stats;
	hw_wire_stats snap_wire;
	hw_dpdk_stats snap_dpdk;        /* DPDK: our instance's counters */
	uint64_t snap_forgotten;        /* learned neighbours dropped (table full) */
	int64_t last_pub_ns;
	uint64_t pub_busy;              /* busy iterations at the last publish */
	hw_rxhold_ctx rxhold;           /* DPDK: the mbuf our instance is delivering to our
					 * rm (hw_rxhold.h); this reactor's thread only */
	int64_t rx_burst_ns;            /* receipt time of the current RX burst (request
					 * queue time), 0: none yet */
} hwd_shard;

/* Every process: its shards (one without the broker role, else one per
 * hiwater.reactor.lcores entry), each with its reactor, and the mailbox
 * between them. 0 or -errno. */
int hwd_shards_alloc(hwd_node *n);
/* Brokers, after hwd_broker_recover: every shard's data path in order
 * 0..N-1, one function for all (hwd_shard_life.c): data endpoint, mux,
 * replica manager, pollers. 0 or -errno (printed). */
int hwd_shards_init(hwd_node *n);
/* Start reactors 1..N-1 on their threads / stop and join them. */
int hwd_shards_start(hwd_node *n);
void hwd_shards_stop(hwd_node *n);
/* Close every shard's data path (replica managers are destroyed by
 * hwd_broker_fini before), then, in hwd_shards_free, the reactors. */
void hwd_shards_fini(hwd_node *n);
void hwd_shards_free(hwd_node *n);
/* The mailbox poller of shard s (none without a mailbox). 0 or -errno. */
int hwd_shard_add_mailbox_poller(hwd_shard *s);
/* Shard s's data path (hwd_shard_net.c): its endpoint (UDP socket or DPDK
 * queue k, with the configured or derived neighbours), its RX poller and
 * wait sources, its mux; *rm_net: the net its replica manager sends
 * through. 0, -EINVAL (bad config, printed) or -errno. close: all of it
 * (DPDK: reactor 0's instance last, it owns the ports). */
int hwd_shard_open_data(hwd_shard *s, hw_net **rm_net);
void hwd_shard_close_data(hwd_shard *s);

/* The replica-manager config of shard s (the broker's, with the shard's
 * store factory) and the poller that submits its logs' writes. */
void hwd_shard_rm_config(hwd_shard *s, hw_rm_config *rc);
/* Reactor k's share of a broker-wide throttle rate over n reactors (see
 * "Replication throttle"): rate itself when unlimited, negative or n <= 1,
 * else rate/n (+1 for k < rate mod n). */
int64_t hwd_shard_throttle_share(int64_t rate, int k, int n);
int hwd_shard_add_log_poller(hwd_shard *s);
/* The "snapshot" poller: publishes the shard's partition snapshot for
 * reactor 0 and the metrics (hwd_shard_stats.c). 0 or -errno. */
int hwd_shard_add_publish_poller(hwd_shard *s);

/* The one RX entry point: on_msg of every transport endpoint of every
 * reactor (ctx = the shard; the control socket's is shard 0): stamps the
 * RX burst and routes (hwd_shard_route). */
void hwd_shard_on_msg(void *ctx, const hw_msg *m);
/* Route m from reactor s: to s itself (reactor 0: the node's roles, else
 * its rm), to the owning reactor, or split per owner (hwd_route.h). `from`:
 * the sender's address, which the owner learns (may be NULL). */
void hwd_shard_route(hwd_shard *s, const hw_msg *m, const struct sockaddr_in *from);

/* Reactor 0: post a typed update to every other shard (logged when lost). */
void hwd_shards_set_broker_epoch(hwd_node *n, int64_t epoch);
/* Broker id's rack (from metadata) to every reactor's rm, reactor 0's at
 * once, the others through their mailboxes. */
void hwd_shards_set_broker_rack(hwd_node *n, int32_t id, const char *rack);
/* Reactor 0: route node -> endpoint on every data socket; `ep` is the
 * peer's registered data endpoint "udp:HOST:P0[/P1/...]", or a DPDK
 * neighbour route "dpdk:port=..." added to every reactor's instance.
 * 0, -EINVAL, or the errors of hw_udp/hw_dpdk_add_neighbour. */
int hwd_shards_add_route(hwd_node *n, int32_t node, const char *ep);

/* Reactor 0: every partition of this broker (shard 0 read directly, the
 * others from their snapshots), malloc'd (free it), and the summed
 * replica-manager stats. `shard_of` (may be NULL) gets a malloc'd array
 * of the owning reactor index per entry. 0 or -ENOMEM. */
int hwd_node_partitions(hwd_node *n, hw_rm_part_info **out, size_t *cnt, int **shard_of,
			hw_rm_stats *sum);
/* Reactor 0: snapshot of shard k's data-socket wire counters. */
void hwd_shard_wire_stats(hwd_shard *s, hw_wire_stats *out);
/* Learned neighbours reactor k >= 1 forgot because its table was full
 * (from its last snapshot; docs/wire.md "Node ids"). */
uint64_t hwd_shard_neigh_forgotten(hwd_shard *s);
/* Reactor 0: shard k's DPDK instance counters (zeros without one). */
void hwd_shard_dpdk_stats(hwd_shard *s, hw_dpdk_stats *out);
uint64_t hwd_shard_counter_get(const hwd_shard *s, hwd_shard_counter c);
const char *hwd_shard_counter_name(int c);
const char *hwd_shard_counter_help(int c);

/* hwd_shard.c's send hooks, installed by hwd_shard_life.c (hw_net send
 * contract). hwd_shard_funnel_send: reactor 0 sends m for us (DPDK).
 * hwd_shard_dpdk_send: our mux, else through reactor 0 (DPDK).
 * hwd_shard_to0_send: reactor 0 handles m (answers to the Kafka listener). */
int hwd_shard_funnel_send(hw_net *nt, const hw_msg *m);
int hwd_shard_dpdk_send(hw_net *nt, const hw_msg *m);
int hwd_shard_to0_send(hw_net *nt, const hw_msg *m);

#endif
