/* hw_client.h — the CLI's connection to a cluster: a local one described by
 * a cluster directory, or any cluster reached through --bootstrap-server
 * (hw_client_open_bootstrap).
 *
 * Design note. A CLI process is a client node of the cluster: it claims a
 * free client slot k in the cluster directory (node id 1000 + k), which
 * gives it a fixed control endpoint (kernel UDP, 127.0.0.1) and a fixed data
 * endpoint the brokers already know from their generated configs. In
 * bootstrap mode there is no slot: a random node id (>= 100000), sockets
 * on hiwater.*.listen, and a node table (ids, control and data addresses)
 * from the Metadata of the --bootstrap-server node, refreshed with every
 * Metadata from the controller. Admin
 * requests (CreateTopic, Metadata, DescribeTopic) go over the control
 * endpoint, request/response with a correlation id and retries (UDP may
 * drop; the requests are idempotent or answered TOPIC_ALREADY_EXISTS).
 * Produce and Fetch go over the data transport of the cluster to the
 * partition's leader, found with Metadata and refreshed when a broker
 * answers NOT_LEADER_OR_FOLLOWER / UNKNOWN_TOPIC_OR_PARTITION.
 *
 * Every frame uses engine/proto's hw_wire encoding with the cluster id of
 * the directory (or cluster.id of the command-config), this process's incarnation and a per-process sequence.
 */
#ifndef HW_CLIENT_H
#define HW_CLIENT_H
#include <stdint.h>
#include "hw_admin_msg.h"
#include "hw_bench.h"
#include "hw_client_config.h"
#include "hw_cluster.h"
#include "hw_msg.h"

typedef struct hw_client hw_client;

/* Open a client on cluster c. 0 and *out, -EBUSY (no free slot), -ENOMEM,
 * -EADDRINUSE or other -errno from the sockets/transport (message printed). */
int hw_client_open(hw_client **out, const hw_cluster *c);
/* Same; with_data 0 opens the control endpoint only (admin commands: no
 * DPDK EAL, works while brokers are down). */
int hw_client_open2(hw_client **out, const hw_cluster *c, int with_data);
/* Same with n_producers data endpoints, one per producer thread of
 * `hiwater bench --producers` (design note in hw_client.c): over dpdk one
 * memif queue each (n_producers <= HW_DPDK_MAX_QUEUES), over udp one
 * socket and node id each. Endpoint p is polled by one thread at a time.
 * 0, -EINVAL (n_producers out of range), or the errors of hw_client_open. */
#define HW_CLIENT_MAX_PRODUCERS 64
int hw_client_open_producers(hw_client **out, const hw_cluster *c, int with_data, int n_producers);
/* Open a client on any cluster from the control endpoint of any of its
 * nodes (`--bootstrap-server HOST:PORT`: the controller or a broker) and
 * the client properties of `--command-config` (cfg; NULL: the defaults,
 * udp). The bootstrap node's Metadata names the controller and every
 * broker with their advertised endpoints; admin requests then go to the
 * controller, produce and fetch to the leaders. Over dpdk the EAL comes
 * from cfg->eal_args and routes to the brokers from their registered
 * dpdk:ip=..,udp=.. endpoints through cfg->dpdk_port (any port type).
 * with_data and n_producers as for hw_client_open_producers. No cluster
 * directory and no client slot are involved. 0 and *out; -EINVAL (bad
 * bootstrap or config), -ETIMEDOUT (the bootstrap node does not answer),
 * -EHOSTUNREACH (it does not know the controller's address), or the
 * errors of the sockets / DPDK (messages printed). */
int hw_client_open_bootstrap(hw_client **out, const char *bootstrap, const hw_client_config *cfg,
			     int with_data, int n_producers);
/* How every subcommand that talks to a cluster opens its client: with
 * bootstrap (--bootstrap-server; command_config, --command-config, may be
 * NULL) through hw_client_open_bootstrap, else from the cluster directory
 * dir as before. Returns a CLI exit code: OK and *out, USAGE (bad
 * --bootstrap-server or command-config: the message names file:line:key,
 * or --command-config without --bootstrap-server), NO_CLUSTER (no cluster
 * in dir, or the bootstrap node does not answer), ERROR (other failures). */
int hw_client_open_cli(hw_client **out, const char *dir, const char *bootstrap,
		       const char *command_config, int with_data, int n_producers);
/* The nodes the client knows (the controller and the brokers, from the
 * cluster directory or Metadata): up to cap ids and control addresses
 * (struct sockaddr_in), in the order learned. Returns how many. */
struct sockaddr_in;
int hw_client_nodes(const hw_client *cl, int32_t *ids, struct sockaddr_in *ctl, int cap);
/* The controller's node id (0 for a cluster directory's cluster). */
int32_t hw_client_controller_id(const hw_client *cl);
#define HW_CLIENT_MAX_NODES 64      /* brokers + the controller a client tracks */

/* Number of data endpoints (1 unless opened with hw_client_open_producers). */
int hw_client_producers(const hw_client *cl);

/* Data endpoint: 1 = busy-poll (memif rings / non-blocking UDP receives)
 * while waiting for responses, no sched_yield, no sleep: for a client with
 * a core of its own (`hiwater bench --busy-poll`); 0 (default) = spin
 * (yielding) for the spin time, then sleep on the memif doorbell / in the
 * kernel on the UDP socket. Never fails. */
void hw_client_set_busy_poll(hw_client *cl, int on);

/* Data endpoint: after the last packet keep polling (with sched_yield)
 * `us` microseconds before sleeping, like a broker's hiwater.idle.spin.us
 * under hiwater.idle.strategy=backoff; < 0 (the default) = adaptive, as the
 * brokers' default: the window is learnt from the round trips
 * (lib/reactor/hw_idle.h, docs/idle.md). Never fails. */
void hw_client_set_spin_us(hw_client *cl, int32_t us);

/* bench --breakdown (docs/breakdown.md): every PRODUCE asks the leader for
 * its stage timing (tag 8), which the answer carries to the bench. */
void hw_client_set_produce_timing(hw_client *cl, int on);
void hw_client_close(hw_client *cl);

/* Consumer fetches name this rack (Kafka's client.rack, "" none), so a
 * rack-aware leader may send them to a replica in it (docs/racks.md).
 * 0, -EINVAL (too long). Call before fetching. */
int hw_client_set_rack(hw_client *cl, const char *rack);
int32_t hw_client_node_id(const hw_client *cl);

/* Send req to node dst on the control endpoint and wait for the response
 * of type resp_type with the same correlation id, retrying every
 * retry_ms up to timeout_ms. On 0, fn(arg, resp) was called with the
 * decoded response (borrowed for the call). -ETIMEDOUT, -EINVAL (req
 * cannot be encoded). */
int hw_client_call(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type, int timeout_ms,
		   void (*fn)(void *arg, const hw_msg *resp), void *arg);

/* ---- topics on the data path ----------------------------------------- */
#define HW_CLIENT_MAX_PARTS 256
typedef struct hw_client_topic {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t topic_id;
	uint32_t n_parts;
	int32_t leader[HW_CLIENT_MAX_PARTS];
	int32_t leader_epoch[HW_CLIENT_MAX_PARTS];
} hw_client_topic;

/* Look topic up with Metadata at the controller and make it the client's
 * current data-path topic. 0, -ENOENT (no such topic: error printed),
 * -ETIMEDOUT (controller does not answer). Waits up to timeout_ms for every
 * partition to have a leader. */
int hw_client_use_topic(hw_client *cl, const char *name, int timeout_ms);
const hw_client_topic *hw_client_topic_info(const hw_client *cl);

/* The data path as the bench engine's seam (the bench, produce and consume
 * commands all use it). Valid after hw_client_use_topic. */
hw_bench_io *hw_client_io(hw_client *cl);
/* Producer p's endpoint (NULL when p is out of range): sends from its own
 * queue/socket; its poll delivers the responses for producer p (index in
 * the correlation id, HW_BENCH_CORR_PRODUCER_SHIFT) and, for p = 0, every
 * fetch response — responses another producer's endpoint received are
 * handed over (hw_client.c). For hw_bench_run_multi's prod_io. */
hw_bench_io *hw_client_producer_io(hw_client *cl, int p);
/* All endpoints from one thread while no producer thread polls: sends
 * through endpoint 0, delivers whatever any endpoint receives. For
 * hw_bench_run_multi's all_io. */
hw_bench_io *hw_client_all_io(hw_client *cl);
/* Responses received by one producer's endpoint and handed to another's,
 * and those dropped because its ring was full. Never fails. */
void hw_client_forward_stats(const hw_client *cl, uint64_t *forwarded, uint64_t *dropped);

/* The data endpoints' idle counters, summed over the producers since the
 * client opened (docs/idle.md "Counters"): adaptive spins that ended in an
 * answer and in a sleep, yields that took >= 50 us (and of those, >= 1 ms)
 * and probe yields while spinning was off for contention (these five 0
 * under a fixed --spin-us),
 * sleeps, sleeps ended by traffic (wake-ups), yields. Read it while no poll runs (after the
 * bench's producers joined). Never fails. */
typedef struct hw_client_idle {
	uint64_t spins_to_work, spins_to_sleep, contended_yields, stalled_yields, probes, sleeps, wakeups,
		yields;
} hw_client_idle;
void hw_client_idle_stats(const hw_client *cl, hw_client_idle *out);

#endif
