/* hwd_store.c — see hwd_store.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "hwd_store.h"

#if HWD_HAVE_LOG
void hwd_log_config_default(hwd_log_config *c) { hw_log_config_default(c); }
void hwd_log_config_set_policy(hwd_log_config *c, int policy)
{
	c->flush_policy = policy == 0 ? HW_LOG_FLUSH_PAGE_CACHE
			  : policy == 1 ? HW_LOG_FLUSH_INTERVAL
					: HW_LOG_FLUSH_FSYNC_BEFORE_ACK;
}
int hwd_log_open(const char *dir, const hwd_log_config *cfg, hwd_log **out)
{
	return hw_log_open(dir, cfg, out);
}
hw_store *hwd_log_store(hwd_log *l) { return hw_log_store(l); }
int hwd_log_flush(hwd_log *l) { return hw_log_flush(l); }
int hwd_log_poll(hwd_log *l) { return hw_log_poll(l); }
void hwd_log_close(hwd_log *l) { hw_log_close(l); }
int64_t hwd_log_start(hwd_log *l) { return hw_log_start_offset(l); }
int64_t hwd_log_end(hwd_log *l) { return hw_log_end_offset(l); }
int hwd_log_persistent(void) { return 1; }
#else
#include "hw_memstore.h"
struct hwd_log {
	hw_store *s;
};
void hwd_log_config_default(hwd_log_config *c)
{
	*c = (hwd_log_config){ .segment_bytes = 1073741824, .roll_ms = 604800000, .retention_bytes = -1,
			       .retention_ms = 604800000, .flush_messages = INT64_MAX, .flush_ms = INT64_MAX,
			       .index_interval_bytes = 4096, .index_size_max_bytes = 10485760 };
}
void hwd_log_config_set_policy(hwd_log_config *c, int policy) { c->flush_policy = policy; }
int hwd_log_open(const char *dir, const hwd_log_config *cfg, hwd_log **out)
{
	(void)cfg;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	hwd_log *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	/* persistent: hw_rm's close only detaches; hwd_log_close frees */
	int rc = hw_memstore_create(1, &l->s);
	if (rc < 0) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}
hw_store *hwd_log_store(hwd_log *l) { return l->s; }
int hwd_log_flush(hwd_log *l) { (void)l; return 0; }
int hwd_log_poll(hwd_log *l) { (void)l; return 0; }
void hwd_log_close(hwd_log *l)
{
	if (!l)
		return;
	hw_memstore_free(l->s);
	free(l);
}
int64_t hwd_log_start(hwd_log *l) { return l->s->ops->log_start_offset(l->s); }
int64_t hwd_log_end(hwd_log *l) { return l->s->ops->log_end_offset(l->s); }
int hwd_log_persistent(void) { return 0; }
#endif
