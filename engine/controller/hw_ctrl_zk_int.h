/* hw_ctrl_zk_int.h — internals shared by hw_ctrl_zk.c (session, election)
 * and hw_ctrl_zk_store.c (the metadata znodes). Not a public header. */
#ifndef HW_CTRL_ZK_INT_H
#define HW_CTRL_ZK_INT_H
#include <stdatomic.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>
#include "hw_ctrl_zk.h"
#include "hw_hist.h"

#define ZK_CONTROLLER "/controller"
#define ZK_EPOCH      "/controller_epoch"
#define ZK_ROOT       "/hiwater"
#define ZK_SEQ        ZK_ROOT "/seq"
#define ZK_DELETED    ZK_ROOT "/deleted_topic"             /* the last TOPIC_DELETE: id floor */
#define ZK_PIDS       ZK_ROOT "/latest_producer_id_block"  /* Kafka's /latest_producer_id_block */
#define ZK_BUF_MAX    (1 << 20)  /* a znode's data: ZooKeeper's jute.maxbuffer */
#define ZK_TOPIC_CONFIGS "/config/topics"  /* Kafka's: one JSON znode per topic */
#define ZK_TOPIC_CONFIG_PATH_MAX (sizeof(ZK_TOPIC_CONFIGS) + 1 + 256)
#define ZK_PATH_MAX   64

/* Bits the watcher posts (ZooKeeper completion thread -> controller thread). */
#define ZK_EV_SESSION    1u
#define ZK_EV_CONTROLLER 2u

/* The version we last saw of each metadata znode. */
typedef struct zk_vent {
	char path[ZK_PATH_MAX];        /* "" = free slot */
	int32_t version;
} zk_vent;

struct hw_zk {
	hw_zk_cfg cfg;
	char connect[1024];
	char control_ep[128];
	zhandle_t *zh;
	int efd;
	_Atomic uint32_t pending;      /* ZK_EV_* from the watcher */
	hw_zk_session_state session;
	int64_t disconnected_since_ns;
	int warned_connect;
	int paths_ok;
	int active;
	int fenced;                    /* a write failed with -ESTALE: step down at the next poll */
	int32_t epoch;
	int32_t epoch_version;         /* /controller_epoch's version after our bump */
	int32_t active_id;
	char active_ep[128];
	int64_t retry_ns;
	zk_vent *vmap;
	uint32_t vcap, vcount;
	uint8_t *buf;
	struct hw_hist *latency;
	int64_t latency_sum_ns;
	hw_ctrl_store store;
	uint64_t counters[HW_ZK_COUNTER_COUNT];
};

int64_t zk_now_ns(void);
void zk_wake(hw_zk *z);
void zk_latency(hw_zk *z, int64_t t0);
void zk_store_init(hw_zk *z);
void zk_vmap_clear(hw_zk *z);

#endif
