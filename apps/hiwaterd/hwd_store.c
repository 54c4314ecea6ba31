/* hwd_store.c — see hwd_store.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hw_netconf.h"
#include "hw_log_clean.h"
#include "hwd_store.h"

void hwd_log_config_default(hwd_log_config *c) { hw_log_config_default(c); }
void hwd_log_config_set_policy(hwd_log_config *c, int policy)
{
	c->flush_policy = policy == 0 ? HW_LOG_FLUSH_PAGE_CACHE
			  : policy == 1 ? HW_LOG_FLUSH_INTERVAL
					: HW_LOG_FLUSH_FSYNC_BEFORE_ACK;
}
void hwd_log_config_for_topic(hwd_log_config *c, const char *topic, int64_t offsets_segment_bytes)
{
	if (strcmp(topic, "__consumer_offsets") != 0)
		return;
	c->cleanup_policy = HW_LOG_CLEANUP_COMPACT;
	if (offsets_segment_bytes > 0)
		c->segment_bytes = offsets_segment_bytes;
}

int hwd_log_open(const char *dir, const hwd_log_config *cfg, hwd_log **out)
{
	return hw_log_open(dir, cfg, out);
}
hw_store *hwd_log_store(hwd_log *l) { return hw_log_store(l); }
int hwd_log_flush(hwd_log *l) { return hw_log_flush(l); }
int hwd_log_poll(hwd_log *l) { return hw_log_poll(l); }
uint32_t hwd_log_io_inflight(const hwd_log *l) { return hw_log_io_inflight(l); }
void hwd_log_close(hwd_log *l) { hw_log_close(l); }
int64_t hwd_log_start(hwd_log *l) { return hw_log_start_offset(l); }
int64_t hwd_log_end(hwd_log *l) { return hw_log_end_offset(l); }

hw_net_ref_ops hwd_log_ref_ops(void)
{
	return (hw_net_ref_ops){ .hold = hw_log_ref_hold, .release = hw_log_ref_release };
}
