/* hwd_store.h — the partition store hiwaterd gives the replica manager.
 *
 * The io_uring segmented log (engine/log/hw_log.h) when it is built;
 * until then (the log module is published separately) an in-memory store,
 * so the daemon runs end to end without persistence. The broker sees only
 * these few calls. */
#ifndef HWD_STORE_H
#define HWD_STORE_H
#include <stdint.h>
#include "hw_store.h"

#if __has_include("hw_log.h")
#include "hw_log.h"
#define HWD_HAVE_LOG 1
typedef hw_log hwd_log;
typedef hw_log_config hwd_log_config;
#else
#define HWD_HAVE_LOG 0
typedef struct hwd_log hwd_log;
/* Mirrors the fields hiwaterd sets (log.* keys parse, are not applied). */
typedef struct hwd_log_config {
	int64_t segment_bytes, roll_ms, retention_bytes, retention_ms, flush_messages, flush_ms;
	int32_t index_interval_bytes, index_size_max_bytes;
	int flush_policy;
} hwd_log_config;
#endif

/* Defaults of the log config. */
void hwd_log_config_default(hwd_log_config *c);
/* 0-2: page_cache, interval, fsync_before_ack. */
void hwd_log_config_set_policy(hwd_log_config *c, int policy);
/* Open + recover the log in dir. 0 or -errno. */
int hwd_log_open(const char *dir, const hwd_log_config *cfg, hwd_log **out);
hw_store *hwd_log_store(hwd_log *l);
int hwd_log_flush(hwd_log *l);     /* 0 or -EIO */
/* Submit pending writes, reap completions; completions reaped or -EIO. */
int hwd_log_poll(hwd_log *l);
void hwd_log_close(hwd_log *l);
int64_t hwd_log_start(hwd_log *l);
int64_t hwd_log_end(hwd_log *l);
/* Persistent logs survive a restart. */
int hwd_log_persistent(void);

#endif
