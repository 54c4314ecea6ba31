/* hw_cluster.h — a local hiwater cluster described by a directory.
 *
 * Design note. `hiwater cluster up` writes everything it knows into the
 * cluster directory D, so any later command — from a fresh shell, another
 * script, the integration tests — finds the cluster by reading D alone:
 *
 *   D/cluster.properties      what was asked for: brokers, transport, base
 *                             port, client slots, cluster id, --config k=v
 *   D/node-<id>/server.properties   the generated hiwaterd config
 *   D/node-<id>/data/               log.dirs
 *   D/node-<id>/hiwaterd.log        the daemon's stdout+stderr (appended)
 *   D/node-<id>/pid                 "<pid> <starttime>" while started by us
 *   D/clients/slot-<k>.lock         flock'ed by a CLI process using slot k
 *   D/client.properties, D/bootstrap  with --rig netns: how a client in the
 *                             client namespace reaches the cluster (hw_rig.h)
 *   D/prometheus/             with --prometheus: the cluster's Prometheus
 *                             server on 127.0.0.1:(base_port + 800)
 *                             (hw_cluster_prom.h)
 *
 * Node 0 is the controller (process.roles=controller, its own process), nodes
 * 1..N are brokers. Every node has a kernel-UDP control endpoint on
 * 127.0.0.1:(base_port + id); data endpoints for the udp transport are
 * base_port + 100 + id; client slot k is node 1000 + k with control port
 * base_port + 300 + k and udp data port base_port + 200 + k. Node n serves
 * Prometheus metrics on 127.0.0.1:(base_port + 400 + n). With
 * --transport dpdk, drivers/net's local memif topology
 * (hw_dpdk_local_topo) gives every broker one memif vdev per peer
 * broker and per client slot, sockets in /tmp/hiwater-<cluster id>/, and an
 * explicit hiwater.neighbour.<id> route per peer; a CLI process builds the
 * client side of its slot the same way.
 *
 * With `--rig netns` (hw_rig.h) every node runs in a network namespace of
 * its own and listens on that namespace's addresses (10.99.0.<id+1>, data
 * plane on a DPDK PMD over its veth or kernel UDP on 10.99.1.<id+1>); the
 * ports stay base_port + id / + 100 + id / + 400 + id.
 *
 * ZooKeeper mode (`--controllers N --zookeeper M`, hw_cluster_zk.c,
 * docs/controller-ha.md): the controllers are node 0 and nodes 900..898+N
 * (control port base_port + 700 + k, metrics base_port + 720 + k for node
 * 900 + k), every one a voter with zookeeper.connect naming the ensemble;
 * ZooKeeper server k (1..M) is node 800 + k, named zk<k> on the command
 * line, a plain java process (Debian's zookeeper jars) with D/node-80<k>/zoo.cfg,
 * its data in D/node-80<k>/data, client port base_port + 600 + k, quorum
 * ports base_port + 620 + k and base_port + 640 + k, its output in
 * D/node-80<k>/hiwaterd.log like every node's.
 *
 * A pid file holds the process start time from /proc/<pid>/stat too, so a
 * recycled pid is never mistaken for (or signalled as) our daemon.
 */
#ifndef HW_CLUSTER_H
#define HW_CLUSTER_H
#include <stdint.h>
#include <sys/types.h>
#include "hw_cli.h"
#include "hw_types.h"

#define HW_CLUSTER_MAX_BROKERS 16
#define HW_CLUSTER_DEFAULT_PORT 19090
#define HW_CLUSTER_DEFAULT_SLOTS 6
#define HW_CLUSTER_MAX_CONTROLLERS 5
#define HW_CLUSTER_MAX_ZK 5
#define HW_CLUSTER_ZK_NODE_BASE 800    /* ZooKeeper server k is node 800 + k */
#define HW_CLUSTER_CTRL_NODE_BASE 900  /* extra controllers: 900, 901, ... */
#define HW_CLUSTER_MAX_NODES (HW_CLUSTER_MAX_BROKERS + HW_CLUSTER_MAX_CONTROLLERS + HW_CLUSTER_MAX_ZK + 1)

typedef struct hw_cluster {
	char dir[512];
	int brokers;               /* N: nodes 1..N */
	char transport[8];         /* "dpdk" | "udp" */
	int base_port;
	int client_slots;
	uint32_t cluster_id;
	hw_cli_kvs extra;          /* --config k=v for every broker config */
	/* `--rig netns` (hw_rig.h): rig "netns" or "" (local cluster), the
	 * data port (af_packet|af_xdp|tap|udp) and the namespace tag */
	char rig[8];
	char rig_port[12];
	char rig_tag[8];
	int controllers;           /* controller processes (1: the embedded one, node 0) */
	int zookeepers;            /* local ZooKeeper servers (0: none) */
} hw_cluster;

/* Process states as `cluster status` shows them. */
#define HW_NODE_STATE_TABLE(X) \
	X(DOWN)                \
	X(RUNNING)             \
	X(PAUSED)              \
	X(ZOMBIE)
typedef enum hw_node_state {
#define HW_NODE_STATE_ENUM(n) HW_NODE_##n,
	HW_NODE_STATE_TABLE(HW_NODE_STATE_ENUM)
#undef HW_NODE_STATE_ENUM
} hw_node_state;
const char *hw_node_state_name(int s); /* never NULL */

/* Default cluster dir: $HIWATER_CLUSTER_DIR, else /tmp/hiwater-<uid>/cluster. */
void hw_cluster_default_dir(char *buf, size_t cap);

/* Read D/cluster.properties. -ENOENT: no cluster there; -EINVAL: damaged
 * file (message printed). */
int hw_cluster_load(hw_cluster *c, const char *dir);
/* Write D/cluster.properties and every node's server.properties. 0 / -errno. */
int hw_cluster_write_configs(const hw_cluster *c);
/* Render node's server.properties into buf. 0, -ENOSPC when it does not fit. */
int hw_cluster_render_config(const hw_cluster *c, int node, char *buf, size_t cap);

/* The cluster secret (hw_cluster_auth.c, docs/security.md). */
int hw_cluster_auth_none(const hw_cluster *c);   /* --config hiwater.auth=none */
void hw_cluster_secret_path(const hw_cluster *c, char *buf, size_t cap);
/* Create the secret (0600) unless it exists or auth is off. 0 or -errno
 * (message printed). */
int hw_cluster_secret_ensure(const hw_cluster *c);
/* Install the cluster's key for this process's frames (or none). 0 or
 * -errno (message printed). */
int hw_cluster_auth_install(const hw_cluster *c);

/* Node helpers. node 0 = controller, 1..brokers = brokers. */
int hw_cluster_control_port(const hw_cluster *c, int node);
int hw_cluster_node_valid(const hw_cluster *c, int node);
/* Prometheus endpoint of node: http://127.0.0.1:<port>/metrics. */
int hw_cluster_metrics_port(const hw_cluster *c, int node);
/* Kafka listeners (hw_cluster_kafka.c): broker id at B+500+id. */
int hw_cluster_kafka_port(const hw_cluster *c, int node);
/* Append the broker's `listeners=` line (nothing for the controller). */
void hw_cluster_kafka_render(const hw_cluster *c, int node, char *buf, size_t cap, size_t *off);
/* "127.0.0.1:P1,127.0.0.1:P2,..." of every broker. 0 or -ENOSPC. */
int hw_cluster_kafka_bootstrap(const hw_cluster *c, char *buf, size_t cap);
/* D/kafka.properties (bootstrap.servers=...). 0 or -errno. */
int hw_cluster_kafka_write_properties(const hw_cluster *c);
/* Process state of node; *pid_out gets its pid (0 when DOWN). */
hw_node_state hw_cluster_node_state(const hw_cluster *c, int node, pid_t *pid_out);

/* Start node if it is not running and wait up to timeout_ms for its ready
 * line. 0 (also when it was already running), -ETIMEDOUT, -ECHILD (it
 * exited; the tail of its log was printed), -ENOENT (no hiwaterd binary). */
int hw_cluster_start_node(const hw_cluster *c, int node, int timeout_ms);
/* Start several nodes in parallel, then wait for all. Same returns. */
int hw_cluster_start_nodes(const hw_cluster *c, const int *nodes, int n, int timeout_ms);

/* 1 if `text` (a hiwaterd log, NUL-terminated) holds node's readiness line
 * "hiwaterd: node N ready (...)", else 0 (also for NULL). Only that line
 * counts: a bare "ready" also matches "Address already in use". */
int hw_cluster_log_says_ready(const char *text, int node);
/* Send sig to node's process. 0, -ESRCH when it is not running. */
int hw_cluster_signal_node(const hw_cluster *c, int node, int sig);
/* SIGTERM (after SIGCONT) and wait up to timeout_ms; SIGKILL after that.
 * 0 when the node is down at the end. */
int hw_cluster_stop_node(const hw_cluster *c, int node, int timeout_ms);

/* Start time (field 22 of /proc/<pid>/stat, clock ticks) and state letter
 * of pid: what a pid file records so a recycled pid is never taken for
 * ours. 0, -ESRCH when there is no such process. */
int hw_cluster_proc_stat(pid_t pid, unsigned long long *start, char *state);
/* Fork a child in its own session with stdin /dev/null and stdout/stderr
 * appended to log_path (created with log_mode); in the child, enter(arg,
 * logfd) (may be NULL; non-zero: the child exits 126, having said why on
 * logfd) runs before the redirect and exec_fn(arg) after it (it execs; if
 * it returns the child exits 127). The parent writes "PID START" to
 * pid_path. Returns the pid or -errno (log open, fork). */
pid_t hw_cluster_spawn(const char *log_path, mode_t log_mode, const char *pid_path,
		       int (*enter)(void *arg, int logfd), void (*exec_fn)(void *arg), void *arg);

/* Claim a free client slot (flock on D/clients/slot-<k>.lock, released when
 * the process exits). Returns the slot number >= 0 and *fd_out, or -EBUSY
 * when all slots are in use. */
int hw_cluster_claim_slot(const hw_cluster *c, int *fd_out);

/* ---- ZooKeeper mode (hw_cluster_zk.c) ---- */
int hw_cluster_is_zk(const hw_cluster *c, int node);
int hw_cluster_is_controller(const hw_cluster *c, int node);
int hw_cluster_zk_client_port(const hw_cluster *c, int k);
/* "zk2" for a ZooKeeper node, else the id; snprintf's return. */
int hw_cluster_node_name(const hw_cluster *c, int node, char *buf, size_t cap);
/* "N" or "zkK" -> a node of this cluster. 0 / -EINVAL. */
int hw_cluster_parse_node(const hw_cluster *c, const char *s, int *node);
/* Every node in start order (ZooKeeper servers, controllers, brokers). */
int hw_cluster_all_nodes(const hw_cluster *c, int *nodes, int cap);
/* controller.quorum.voters (every node) and zookeeper.connect (controllers). */
void hw_cluster_render_zk(const hw_cluster *c, int node, char *buf, size_t cap, size_t *off);
/* D/node-80<k>/zoo.cfg and data/myid for every server. 0 / -errno. */
int hw_cluster_zk_write(const hw_cluster *c);
/* In a forked child: exec the ZooKeeper server of node (returns only on failure). */
void hw_cluster_zk_exec(const hw_cluster *c, int node);
/* The server's "Mode:" (leader, follower, standalone). 0, or -ENOTCONN
 * (down or not serving: no quorum), mode "-". */
int hw_cluster_zk_mode(const hw_cluster *c, int node, char *mode, size_t cap);
/* 1 if the server answers on its client port (serving or not). */
int hw_cluster_zk_answers(const hw_cluster *c, int node);
/* A controller's role from its /metrics: 1 active, 0 standby, -ENOTCONN;
 * *epoch its controller epoch (-1 unknown). */
int hw_cluster_controller_role(const hw_cluster *c, int node, int *epoch);

/* Directory of the cluster's memif sockets (short: sun_path is 108 bytes). */
void hw_cluster_memif_dir(const hw_cluster *c, char *buf, size_t cap);

/* Path of the hiwaterd binary: $HIWATER_BIN_DIR/hiwaterd, else next to this
 * binary, else ../hiwaterd/hiwaterd (the build tree). -ENOENT if none. */
int hw_cluster_find_daemon(char *buf, size_t cap);

/* How long `cluster stop` / `down` wait before SIGKILL: longer than the
 * brokers' own controlled-shutdown timeout (hiwater.controlled.shutdown.timeout.ms
 * of the cluster's --config, else hiwaterd's default; the bounds are the
 * daemon schema's, test cli_cluster checks both against it), plus
 * HW_CLUSTER_STOP_GRACE_MS, so a broker that gives up moving leadership
 * (the controller is down) still exits cleanly. */
#define HW_CLUSTER_SHUTDOWN_TIMEOUT_DEFAULT_MS 30000
#define HW_CLUSTER_SHUTDOWN_TIMEOUT_MAX_MS     3600000
#define HW_CLUSTER_STOP_GRACE_MS               15000
int hw_cluster_stop_timeout_ms(const hw_cluster *c);

#endif
