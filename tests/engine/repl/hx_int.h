/* hx_int.h — the harness's internals shared by hx.c (network, clock,
 * clients, run loop) and hx_ctl.c (the real controller and the brokers'
 * registration and heartbeats). Not used by tests. */
#ifndef HX_INT_H
#define HX_INT_H
#include "hw_ctrl.h"
#include "hx.h"
#include "hw_broker.h"
#include "hw_broker_disk.h"
#include "hw_broker_logs.h"
#include "hw_broker_memfs.h"
#include "../../support/hw_test.h"

typedef struct hx_qmsg {
	hw_msg m;
	int64_t at;
	uint64_t seq;
	void *blob;
	int kept;                   /* held until hx_release_to (hx_hold_keep) */
} hx_qmsg;

typedef struct hx_node {
	hx *h;
	int id;
	hw_net net;
	hw_rm *rm;
	int paused;
	int hold;
	/* its partition logs (engine/broker, as the daemon's): over the
	 * simulated disk (hx.memfs), or the file system with HX_STORE=log;
	 * a restart recovers them from there */
	hw_broker_logs *logs;
	hw_store *stores[HX_MAX_PARTS];
} hx_node;

/* A harness partition: one topic of one partition in the controller
 * ("t<part>", so each has its own min.insync.replicas). */
typedef struct hx_cpart {
	int exists;
	hw_tp tp;                   /* the controller's topic id, partition 0 */
	hw_partition_state st;      /* hx_ctl_state's copy */
} hx_cpart;

/* A node's broker role: the real one (engine/broker), over the node's
 * simulated network and the virtual clock; the harness only plays the
 * process around it (restarts, a paused process, a silenced broker). */
typedef struct hx_agent {
	struct hx *h;
	int node;
	hw_broker *b;
	char clean_file[64];        /* its clean-shutdown file's contents, "" none (hw_broker_disk.h) */
	int silent;                 /* hx_ctl_fence: no heartbeats until unfenced */
	int restart_pending;        /* STOPPED after a controlled shutdown: restart cleanly */
	int stay_down;              /* ... but stay stopped (paused) until resumed */
	int restarts;
} hx_agent;

typedef struct hx_req {
	uint32_t corr;
	int part;
	int16_t acks;
	int nrec;
	int count;
	int sends;
	hx_resp r;
} hx_req;

typedef struct hx_raw {
	int id;
	int type;
	hx_qmsg q;
	int valid;
} hx_raw;

struct hx {
	hx_opts o;
	int64_t now;
	hw_clock clock;
	hw_rng rng;                 /* hw_test.h: one generator per run */
	uint64_t seq;
	hx_node nodes[HX_MAX_NODES + 1];
	hx_qmsg *q;
	size_t nq, capq;
	hx_qmsg *held;
	size_t nheld, capheld;
	int drop_pct, dup_pct, dmin, dmax;
	uint8_t cut[256][256];
	/* no route yet: sends from node a to b fail with -EHOSTUNREACH while
	 * now < unreach_until[a][b] (the transport has not learnt b's address) */
	int64_t unreach_until[HX_MAX_NODES + 1][256];
	uint64_t refused;
	int nparts_hi;              /* highest created partition + 1 */
	hx_cpart cp[HX_MAX_PARTS];
	int32_t topic_part[HX_MAX_PARTS + 1]; /* controller topic id -> part + 1 */
	/* the real controller (engine/controller), node HX_CTL, over an
	 * in-memory metadata store that outlives it (hx_ctl_restart) */
	hw_ctrl *ctl;
	hw_ctrl_config ctl_cfg;
	hw_ctrl_store ctl_store;
	struct hx_mrec { uint8_t type; size_t len; uint8_t *payload; } *mrecs;
	size_t n_mrecs, cap_mrecs;
	hx_node ctl_node;
	hx_agent agents[HX_MAX_NODES + 1];
	char dir[256];
	hw_broker_memfs *memfs;     /* the brokers' log dirs, HX_STORE=log: none (h->dir) */
	hx_req *reqs;
	size_t nreqs, capreqs;
	uint32_t next_corr;
	hx_raw raws[8];
	void (*hook)(hx *h, void *arg);
	void *hook_arg;
	hx_stats st;
};


/* hx.c */
void hx_enqueue(hx *h, const hw_msg *m, int64_t delay);
/* The node's rm destroyed and created again over the same stores. */
void hx_rm_recreate(hx *h, int node);

/* hx_ctl.c */
void hx_ctl_init(hx *h);                    /* controller + registered, unfenced brokers */
void hx_ctl_fini(hx *h);
int hx_ctl_step(hx *h);                     /* timers; > 0 if something was sent */
int64_t hx_ctl_next_event(hx *h);           /* ms; INT64_MAX if none */
void hx_ctl_on_msg(hx *h, const hw_msg *m); /* delivered to HX_CTL */
/* A controller answer delivered to broker `node`'s registration/heartbeat
 * side: 1 if consumed, 0 if it is for the replica manager. */
int hx_agent_on_msg(hx *h, int node, const hw_msg *m);
/* Crash restart: the node registers again as a new incarnation. */
void hx_agent_crashed(hx *h, int node);
/* part for a topic the controller created, -1 if none. */
int hx_part_of(hx *h, hw_tp tp);

#endif
