/* hw_client_int.h — hw_client's private types, shared by hw_client.c (open,
 * close, control calls, metadata), hw_client_dpdk.c (the DPDK endpoint: EAL,
 * instances, routes) and hw_client_data.c (the data path: produce, fetch,
 * polling, forwarding between producer endpoints). Design note in hw_client.c. */
#ifndef HW_CLIENT_INT_H
#define HW_CLIENT_INT_H
#include "hw_client.h"
#include "hw_wire_piece.h"
#include "hw_idle.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw_dpdk.h"
#include "hw_rig_client.h"
#include "hw_spsc.h"
#include "hw_err.h"
#include "hw_netaddr.h"
#include "hw_netconf.h"
#include "hw_wire.h"

/* After the last packet the client keeps polling (yielding) this long
 * by default, then sleeps on its memif doorbell, like the brokers'
 * hiwater.idle.spin.us (hw_client_set_spin_us changes it). */
#define CLIENT_SPIN_NS (-1) /* adaptive, as the brokers' default */

#define FWD_RING_CAP 1024u          /* forwarded responses in flight per (from, to) */
#define UDP_NODE_STRIDE 64          /* udp endpoint p: slot node + 64 * p */

/* A response received by another producer's endpoint. */
typedef struct fwd_entry {
	hw_bench_resp r;
	uint8_t *records;             /* owned copy of r.records (fetch) */
} fwd_entry;


/* A node of the cluster as Metadata names it (slots only appended, so an
 * index is stable). */
typedef struct client_node {
	int32_t id;
	struct sockaddr_in ctl;       /* control endpoint; sin_port 0: unknown */
	struct sockaddr_in data;      /* udp data endpoint (P0); sin_port 0: unknown */
	char data_ep[HW_ENDPOINT_MAX]; /* as registered ("dpdk:ip=.." over dpdk) */
	unsigned ver;                 /* bumped when data_ep changes */
} client_node;

typedef struct client_ep {
	hw_client *cl;
	int idx;
	hw_idle_policy idle;          /* the learnt spin window (spin_ns < 0) */
	int32_t node;                 /* src of our data frames */
	int data_fd;                  /* udp data endpoint */
	hw_dpdk *dpdk;                /* dpdk instance of queue idx */
	hw_wire_tx tx;                /* udp data frames */
	uint8_t *rxbuf, *txbuf, *arena_mem;
	hw_wire_stats stats;
	/* this endpoint's copy of the topic's leaders (hw_client.topic) */
	hw_client_topic topic;
	client_node nodes[HW_CLIENT_MAX_NODES];
	int n_nodes;
	unsigned routed_ver[HW_CLIENT_MAX_NODES]; /* dpdk: node version our route has, 0 none */
	unsigned topic_gen;
	/* the poll in progress (the DPDK transport delivers via a callback) */
	hw_bench_resp_fn poll_fn;
	void *poll_arg;
	int poll_delivered, poll_refresh;
	/* a leader that died answers nothing (no NOT_LEADER_OR_FOLLOWER to
	 * refresh on): requests sent and no response for a second -> look
	 * the leaders up again, as Kafka's producer does after a timeout */
	int64_t last_send_ns, last_resp_ns, last_silent_refresh_ns;
	/* per partition: when a produce went out with no produce answer for
	 * that partition since (0: answered). A dead leader of one partition is
	 * noticed even while the other partitions' leaders keep answering. */
	int64_t part_unanswered_ns[HW_CLIENT_MAX_PARTS];
	/* fetch from the closest replica (docs/racks.md): per partition the
	 * preferred read replica the leader named + 1 (0: the leader) */
	int32_t read_replica_plus1[HW_CLIENT_MAX_PARTS];
	hw_bench_io io;
	/* forwarding between endpoints (dpdk with several producers) */
	hw_spsc *in;                  /* in[j]: fwd_entry pointers from endpoint j to us
				       * (single producer: j, single consumer: us;
				       * hwc_inbox_open / hwc_inbox_close) */
	_Atomic int sleeping;         /* about to sleep / sleeping on the doorbell */
	int wake_fd;                  /* unix datagram socket to ring others' bells */
	struct sockaddr_un bell;      /* our queue's doorbell socket */
	int have_bell;
	uint64_t fwd_out, fwd_dropped;
	/* idle counters of this endpoint's poll loop (hw_client_idle_stats) */
	uint64_t idle_sleeps, idle_wakeups, idle_yields;
	/* fetched batches larger than a frame, per partition (docs/wire.md
	 * #batch-pieces), and the pieces that could not be used, by reason */
	hw_piece_asm pasm[HW_CLIENT_MAX_PARTS];
	uint64_t piece_drops[HW_PIECE_DROP__COUNT];
} client_ep;

struct hw_client {
	hw_cluster cluster;
	int slot, slot_fd;
	int32_t node;
	int ctl_fd;                   /* control endpoint */
	hw_wire_tx tx;                /* control frames */
	uint32_t next_corr;
	pthread_mutex_t mu;           /* control socket, topic, nodes, last_refresh_ns */
	hw_client_topic topic;
	int have_topic;
	int64_t last_refresh_ns;
	/* where the nodes are: from the cluster directory, or from Metadata
	 * of the --bootstrap-server node (bootstrap mode) */
	int bootstrap;                /* opened with hw_client_open_bootstrap */
	hw_client_config ccfg;        /* bootstrap mode: --command-config */
	struct sockaddr_in boot;      /* bootstrap mode: --bootstrap-server */
	struct sockaddr_in bind_host; /* our sockets' host (port 0) */
	int32_t controller_id;
	int n_controllers;              /* controller processes of a cluster directory (1: embedded) */
	int controller_checked;         /* asked the nodes for the active controller once */
	client_node nodes[HW_CLIENT_MAX_NODES];
	int n_nodes;
	/* bumped (release, under mu) after topic/nodes change; endpoints
	 * read it (acquire) before each send and copy on a change */
	_Atomic unsigned topic_gen;
	uint8_t *rxbuf, *txbuf, *arena_mem;
	hw_wire_stats stats;
	int busy_poll;                /* never yield or sleep while polling */
	int64_t spin_ns;              /* poll (yielding) this long before sleeping;
				       * < 0: adaptive (hw_idle.h), the default */
	int produce_timing;           /* bench --breakdown: PRODUCEs ask for stage timing */
	int n_ep;
	client_ep ep[HW_CLIENT_MAX_PRODUCERS];
	int collect;                  /* all_io polling: deliver everything here */
	hw_bench_io all_io;
	char client_rack[HW_RACK_MAX];  /* consume/bench --client-rack ("" none) */
};

/* ---- shared between the hw_client files (hwc_ prefix) */
/* Topic metadata being looked up (hwc_refresh_metadata). */
typedef struct meta_ctx {
	hw_client *cl;
	const char *name;
	int found;
	int16_t error;
	int all_leaders;
} meta_ctx;

/* Open the DPDK endpoints: on any port from --command-config (_any), or on
 * the local memif cluster's slot. 0 or -errno (message printed). */
int hwc_open_dpdk_any(hw_client *cl);
int hwc_open_dpdk(hw_client *cl);
/* Add routes to the brokers whose registered data endpoint changed. */
void hwc_ep_add_dpdk_routes(client_ep *ep);
/* Copy the client's topic and nodes into the endpoint when they changed. */
void hwc_ep_sync(client_ep *ep);
/* hw_dpdk on_msg callback of an endpoint. */
void hwc_on_dpdk_msg(void *ctx, const hw_msg *m);
/* Receive one frame from fd and decode it: 1 with *m and *h set; 0 when
 * nothing waits or the frame was dropped (counted in st). */
int hwc_recv_one(const hw_cluster *c, int32_t node, int fd, uint8_t *rxbuf, uint8_t *arena_mem, hw_wire_stats *st, hw_wire_arena *arena, hw_wire_hdr *h, hw_msg *m);
/* ppoll fd1 (and fd2 when >= 0) up to timeout_ns: ppoll's return. */
int hwc_wait_readable(int fd1, int fd2, int64_t timeout_ns);
/* The node with id, or NULL. */
client_node *hwc_node_find(client_node *nodes, int n, int32_t id);
int64_t hwc_now_ns(void);
/* Metadata for topic name into x (under cl->mu): 0, -ETIMEDOUT. */
int hwc_refresh_metadata(hw_client *cl, const char *name, int timeout_ms, meta_ctx *x);
/* Encode m with the endpoint's wire state and send it: 0 or -errno. */
int hwc_ep_encode_and_send(client_ep *ep, const struct sockaddr_in *to, hw_msg *m);

/* ep's inbox: one SPSC ring (FWD_RING_CAP entries) per endpoint that may
 * forward it responses. 0 or -ENOMEM. Close frees what is left in it. */
int hwc_inbox_open(client_ep *ep);
void hwc_inbox_close(client_ep *ep);

/* hw_client.c, for hw_client_meta.c (both under cl->mu). hwc_node_update:
 * take what Metadata says about a node (its registered, advertised
 * endpoints). hwc_call_locked: send req to node dst and wait up to
 * timeout_ms for a resp_type answer, handed to fn (resent every 200 ms):
 * 0, -EHOSTUNREACH (dst has no address), -ETIMEDOUT, or the encoder's
 * -EINVAL / -EMSGSIZE. */
void hwc_node_update(hw_client *cl, const hw_broker_info *b);
int hwc_call_locked(hw_client *cl, int32_t dst, hw_msg *req, uint16_t resp_type, int timeout_ms,
		    void (*fn)(void *arg, const hw_msg *resp), void *arg);

#endif
