/* hwd.h — hiwaterd internals: the configuration, and the broker and
 * controller roles that run on the daemon's reactor. */
#ifndef HWD_H
#define HWD_H
#include <limits.h>
#include <stdint.h>
#include "hw_ctrl.h"
#include "hwd_store.h"
#include "hw_rm.h"

#define HWD_MAX_LOG_DIRS   8
#define HWD_MAX_NEIGHBOURS 320
#define HWD_EP_MAX         96
#define HWD_MAX_REACTORS   8    /* hiwater.reactor.lcores entries */

typedef struct hwd_neighbour {
	int32_t node;
	char ep[HWD_EP_MAX];
} hwd_neighbour;

#define HWD_MAX_VOTERS 8
/* The Kafka listener (docs/kafka.md): Kafka's keys and defaults. */
#define HWD_KAFKA_DESCRIBED_MAX 96
typedef struct hwd_kafka_config {
	char listeners[HWD_EP_MAX];          /* listeners: "PLAINTEXT://HOST:PORT", "" none */
	char advertised[HWD_EP_MAX];         /* advertised.listeners ("" = listeners) */
	char listen_host[64];                /* parsed from listeners */
	int32_t listen_port;
	char adv_hostport[HWD_EP_MAX];       /* "HOST:PORT" registered with the controller */
	int auto_create_topics;              /* auto.create.topics.enable */
	int64_t socket_request_max_bytes;    /* socket.request.max.bytes */
	int64_t max_connections;             /* max.connections */
	int32_t offsets_topic_num_partitions;     /* offsets.topic.num.partitions (groups) */
	int16_t offsets_topic_replication_factor; /* offsets.topic.replication.factor (groups) */
	int32_t num_partitions;              /* copies for DescribeConfigs */
	int32_t default_replication_factor;
	/* every Kafka-named key of the schema (not hiwater.*) with its value
	 * and whether server.properties set it: DescribeConfigs BROKER */
	struct hwd_kafka_kv {
		char name[48];
		char value[128];
		uint8_t is_set;
	} described[HWD_KAFKA_DESCRIBED_MAX];
	int n_described;
} hwd_kafka_config;

/* The group coordinator (docs/groups.md "Configuration"): Kafka's keys. */
typedef struct hwd_group_config {
	int32_t initial_rebalance_delay_ms;  /* group.initial.rebalance.delay.ms */
	int32_t min_session_timeout_ms;      /* group.min.session.timeout.ms */
	int32_t max_session_timeout_ms;      /* group.max.session.timeout.ms */
	int32_t max_size;                    /* group.max.size */
	int32_t offset_metadata_max_bytes;   /* offset.metadata.max.bytes */
	int64_t offsets_retention_minutes;   /* offsets.retention.minutes */
	int32_t offsets_commit_timeout_ms;   /* offsets.commit.timeout.ms */
} hwd_group_config;

typedef struct hwd_config {
	char path[PATH_MAX];            /* --config file */
	int32_t node_id;
	int is_broker, is_controller;
	char roles[64];
	char log_dirs[HWD_MAX_LOG_DIRS][PATH_MAX];
	int n_log_dirs;
	char metadata_log_dir[PATH_MAX];
	int32_t controller_id;          /* from controller.quorum.voters */
	char controller_ep[HWD_EP_MAX]; /* "udp:HOST:PORT" */
	/* ZooKeeper mode (docs/controller-ha.md): every voter of
	 * controller.quorum.voters (controller_id/ep: the one we talk to now,
	 * a controller's own entry on a controller), zookeeper.* keys */
	int n_voters;
	hwd_neighbour voters[HWD_MAX_VOTERS];
	int self_voter;                 /* index of node.id in voters, -1 none */
	char zk_connect[1024];          /* zookeeper.connect, "" = embedded single controller */
	int32_t zk_session_timeout_ms;  /* zookeeper.session.timeout.ms, 18000 */
	int32_t zk_connection_timeout_ms; /* zookeeper.connection.timeout.ms, default the session timeout */
	uint32_t cluster_id;
	int auth_none;                  /* hiwater.auth=none: frames unauthenticated (versions 1/2) */
	char secret_file[PATH_MAX];     /* hiwater.cluster.secret.file */
	char control_listen[HWD_EP_MAX];
	int control_listen_given;       /* hiwater.control.listen (or its alias) was set */
	char data_listen[HWD_EP_MAX];
	char control_advertised[HWD_EP_MAX]; /* hiwater.control.advertised, "" default */
	char data_advertised[HWD_EP_MAX];    /* hiwater.data.advertised, "" default */
	char dpdk_port[64];             /* hiwater.dpdk.port: port of learned routes, "" the only one */
	char metrics_listen[64];        /* hiwater.metrics.listen (IPv4 literal) */
	int transport_dpdk;             /* hiwater.transport: 0 udp, 1 dpdk */
	char eal_args[2048];
	char dpdk_ip[32];
	int32_t dpdk_udp_port;
	int32_t dpdk_mtu;               /* hiwater.dpdk.mtu (0: the largest the port accepts) */
	int32_t cluster_brokers;        /* hiwater.cluster.brokers (derived routes), 0: none */
	int32_t cluster_client_slots;
	hwd_neighbour data_nb[HWD_MAX_NEIGHBOURS];
	int n_data_nb;
	hwd_neighbour control_nb[HWD_MAX_NEIGHBOURS];
	int n_control_nb;
	int32_t heartbeat_interval_ms;
	int32_t session_timeout_ms;
	int32_t controlled_shutdown_timeout_ms;
	int controlled_shutdown_enable;
	int idle_strategy;              /* hiwater.idle.strategy: hw_idle_strategy */
	int idle_spin_us;               /* hiwater.idle.spin.us (backoff) */
	int idle_spin_max_us;           /* hiwater.idle.spin.max.us (adaptive) */
	int idle_demote_us;             /* hiwater.idle.demote.us (adaptive; 0 = off) */
	int idle_sleep_min_us;          /* hiwater.idle.sleep.min.us */
	int idle_sleep_max_us;          /* hiwater.idle.sleep.max.us */
	int32_t reactor_cpu;            /* first of hiwater.reactor.lcores, -1 none */
	int32_t metrics_port;
	char log_level[128];
	hw_rm_config rm;
	hw_ctrl_config ctrl;
	hwd_log_config log;
	int64_t offsets_topic_segment_bytes; /* offsets.topic.segment.bytes: the
					      * compacted __consumer_offsets logs roll here */
	int n_reactors;                 /* entries of hiwater.reactor.lcores (>= 1) */
	int32_t reactor_cpus[HWD_MAX_REACTORS];
	hwd_kafka_config kafka;
	hwd_group_config group;
} hwd_config;

/* Parse argv (--config FILE, --override k=v ..., --print-config[=markdown],
 * --help) and load the configuration (hwd_config.c: parse, validate
 * against hwd_config_schema.c, fill, cross-key rules). Returns 0; 1 when
 * the caller should exit 0 (help, the schema or the effective
 * configuration printed); -1 after printing a message naming the file,
 * line and key to stderr. */
int hwd_config_load(int argc, char **argv, hwd_config *out);


#endif
