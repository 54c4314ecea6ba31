/* hwd_node.h — one hiwaterd process: its endpoints, its roles, its loop. */
#ifndef HWD_NODE_H
#define HWD_NODE_H
#include <pthread.h>
#include "hwd.h"
#include "hw_mailbox.h"
#include "hw_reactor.h"
#include "hw_dpdk.h"
#include "hw_netmux.h"
#include "hw_udp.h"
#include "hw_broker.h"
#include "hw_broker_view.h"
#include "hw_broker_logs.h"

typedef struct hwd_metrics hwd_metrics;
struct hwd_shard;
struct hwd_kafka;
struct hwd_group;

/* The process. Its reactors are shards (hwd_shard.h), all built by one
 * function: shards[0] is reactor 0, the thread hwd_node_run runs, and
 * carries the data path of a broker like every other shard; the node adds
 * the process roles, which run on reactor 0: the control socket, signals,
 * the controller role, the broker role (registration, heartbeats, the
 * controller conversation), metrics and the Kafka listener. A process
 * without the broker role has one shard with no data path. */
typedef struct hwd_node {
	hwd_config *cfg;
	hw_clock *clock;
	hw_udp *ctl;                    /* control plane: every process */
	int eal_up;                     /* DPDK's EAL (process-wide; shard 0 brought it up) */
	int sigfd;
	int64_t next_signal_check_ns; /* poll_signals reads at most every ms */
	int stop_requested;
	int exit_code;
	int ready_printed;
	hwd_metrics *metrics;           /* hiwater.metrics.port > 0 */

	/* controller role */
	hw_ctrl *ctrl;                  /* ZooKeeper mode: only while active */
	struct hw_zk *zk;               /* ZooKeeper mode (hwd_zk.c), NULL embedded */
	int64_t ctrl_became_active_ns;
	uint64_t standby_not_controller; /* requests answered NOT_CONTROLLER as a standby */

	/* broker role */
	hw_broker *broker;              /* registration, heartbeats, shutdown (engine/broker) */
	uint64_t incarnation;
	int64_t broker_epoch;
	int64_t previous_epoch;         /* read from the clean-shutdown file */
	uint32_t next_corr;             /* metadata probes */
	hw_broker_logs *logs;           /* the partition logs on log.dirs (engine/broker) */
	char control_adv[HWD_EP_MAX];   /* advertised control endpoint (registered) */
	char data_adv[HWD_EP_MAX];      /* registered data endpoint: udp:HOST:P0/P1.. | dpdk:ip=.. */
	hwd_neighbour learned[64];      /* data routes learned from the controller */
	int n_learned;
	int64_t next_metadata_ns;
	int64_t next_stray_ns;          /* the stray check's next METADATA (docs/logdirs.md "Stray logs") */
	uint32_t stray_corr;            /* its correlation id */
	int strays_checked;             /* every recovered log decided since the registration */
	hw_broker_info brokers[HW_BROKER_VIEW_MAX_BROKERS]; /* cluster view from the last metadata probe */
	int n_brokers;

	/* reactors (hwd_shard.h): every process has shards[0] */
	int n_reactors;                 /* brokers: hiwater.reactor.lcores entries; else 1 */
	struct hwd_shard *shards;
	hw_mailbox *mbox;               /* n_reactors > 1 */
	int n_started;                  /* reactors 1.. running on their threads */

	/* Kafka listener (hwd_kafka.h), NULL without `listeners` */
	struct hwd_kafka *kafka;
	/* group coordinator (hwd_group.h), with the Kafka listener */
	struct hwd_group *group;
} hwd_node;

/* Build everything the configuration asks for. 0 or -errno (logged). */
int hwd_node_init(hwd_node *n, hwd_config *cfg);
/* Run until SIGTERM/SIGINT and a completed shutdown. Returns the exit code. */
int hwd_node_run(hwd_node *n);
void hwd_node_fini(hwd_node *n);

/* ZooKeeper mode of the controller role (hwd_zk.c). init: 0 or -errno
 * (printed). standby_answer: 1 if m was answered NOT_CONTROLLER. */
int hwd_zk_init(hwd_node *n);
void hwd_zk_fini(hwd_node *n);
int hwd_zk_standby_answer(hwd_node *n, const hw_msg *m);

/* Broker role (hwd_broker.c). recover: the log dirs, the clean-shutdown
 * file, every partition log recovered (before the shards: their replica
 * managers claim them); init: the role itself, after the shards. Both 0
 * or -errno (printed). */
int hwd_broker_recover(hwd_node *n);
int hwd_broker_init(hwd_node *n);
void hwd_broker_on_msg(hwd_node *n, const hw_msg *m);
int hwd_broker_tick(hwd_node *n);           /* timers; returns work done */
/* Reactor `shard`'s store factory (hw_broker_logs_open): the recovered log
 * of (tp, topic), or a new one in the log dir holding the fewest
 * partitions (not for a partition that is not is_new while a dir is
 * offline since start-up: -EIO). Any reactor. 0 and *out, or -errno. */
int hwd_broker_open_log(hwd_node *n, int shard, hw_tp tp, const char *topic, int is_new, hwd_log **out);
/* The topic of `log` was deleted (hw_broker_logs_delete): forget it, close
 * it, rename its directory to "<dir>.<hex>-delete" and remove that. 0 or
 * -errno (logged). */
int hwd_broker_delete_log(hwd_node *n, hwd_log *log);
/* Offline log directories (docs/logdirs.md; hw_broker_logs.h): how many,
 * and the partition logs in them (the first `cap` claimed ones to out[],
 * may be NULL; their number to *n_listed, may be NULL). 0 without the
 * broker role. */
int hwd_broker_offline_log_dirs(hwd_node *n);
int hwd_broker_offline_replicas(hwd_node *n, hw_tp *out, int cap, int *n_listed);
/* Kafka's OfflineReplicaCount: the replicas on offline log dirs or
 * refused a log (hwd_broker_offline_replicas) and the partitions of
 * parts[0..np) (every reactor's) whose role is OFFLINE (no leader, no
 * store), each partition counted once: a replica refused a log has no
 * store, so it is in both. */
int hwd_broker_offline_replica_count(hwd_node *n, const hw_rm_part_info *parts, size_t np);
/* Reactor 0: a PARTITION_STATE naming a replica we have no data route to
 * triggers a metadata probe now. */
void hwd_broker_note_partition_state(hwd_node *n, const hw_msg *m);
/* Reactor 0: hand m to the role of the process that handles it
 * (hwd_route_role: controller, broker — whose PARTITION rows go to reactor
 * 0's replica manager). */
void hwd_node_dispatch0(hwd_node *n, const hw_msg *m);
int64_t hwd_broker_deadline(hwd_node *n);
void hwd_broker_begin_shutdown(hwd_node *n);
/* The highest controller epoch the broker role saw, 0: none. */
int32_t hwd_broker_controller_epoch(const hwd_node *n);
void hwd_broker_fini(hwd_node *n);

/* Prometheus endpoint on hiwater.metrics.listen:hiwater.metrics.port (hwd_metrics.c).
 * 0 or -errno (bind/listen). */
int hwd_metrics_start(hwd_node *n, hwd_metrics **out);
void hwd_metrics_stop(hwd_metrics *x);

#endif
