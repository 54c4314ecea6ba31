/* hwd_store.h — the partition store hiwaterd gives the replica manager:
 * the io_uring segmented log (engine/log/hw_log.h). The broker sees only
 * these few calls. */
#ifndef HWD_STORE_H
#define HWD_STORE_H
#include <stdint.h>
#include "hw_log.h"
#include "hw_netconf.h"
#include "hw_store.h"

typedef hw_log hwd_log;
typedef hw_log_config hwd_log_config;

/* Defaults of the log config. */
void hwd_log_config_default(hwd_log_config *c);
/* 0-2: page_cache, interval, fsync_before_ack. */
void hwd_log_config_set_policy(hwd_log_config *c, int policy);
/* Open + recover the log in dir. 0 or -errno. */
int hwd_log_open(const char *dir, const hwd_log_config *cfg, hwd_log **out);
/* The log config of a partition of `topic`: the broker's, except that
 * `__consumer_offsets` is compacted and rolls at offsets_segment_bytes
 * (Kafka's GroupMetadataManager.offsetsTopicConfigs; docs/compaction.md). */
void hwd_log_config_for_topic(hwd_log_config *c, const char *topic, int64_t offsets_segment_bytes);
hw_store *hwd_log_store(hwd_log *l);
int hwd_log_flush(hwd_log *l);     /* 0 or -EIO */
/* Submit pending writes, reap completions; completions reaped or -EIO. */
int hwd_log_poll(hwd_log *l);
uint32_t hwd_log_io_inflight(const hwd_log *l);
void hwd_log_close(hwd_log *l);
int64_t hwd_log_start(hwd_log *l);
int64_t hwd_log_end(hwd_log *l);
/* The hooks that let a zero-copy transport hold the log's read buffers
 * ({hw_log_ref_hold, hw_log_ref_release}), for hw_dpdk_cfg.ref_ops: fetch
 * response records (hw_store_read.ref) go to DPDK ports by reference.
 * Every store of hiwaterd is an hw_log. */
hw_net_ref_ops hwd_log_ref_ops(void);

#endif
