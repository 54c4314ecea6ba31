/* hwd_logdirs.c — offline log directories (docs/security.md "Faults"):
 * which log.dirs hold a FAILED partition log, for the broker's heartbeat
 * (want_fence) and the metrics. */
#include <pthread.h>
#include <string.h>
#include "hw_log.h"
#include "hwd_node.h"

/* Log directories with a FAILED log (an I/O error: EIO, ENOSPC), as
 * Kafka's LogDirFailureChannel takes a whole directory offline on any log's
 * IOException. Logged when the count changes. 0..n_log_dirs. */
int hwd_broker_offline_log_dirs(hwd_node *n)
{
	int off = 0;
	pthread_mutex_lock(&n->plog_lock);
	for (int d = 0; d < n->cfg->n_log_dirs; d++) {
		size_t len = strlen(n->cfg->log_dirs[d]);
		for (int i = 0; i < n->n_plogs; i++) {
			hwd_plog *p = &n->plogs[i];
			if (p->log && !strncmp(p->dir, n->cfg->log_dirs[d], len) && p->dir[len] == '/' &&
			    hw_log_get_state(p->log) == HW_LOG_STATE_FAILED) {
				off++;
				break;
			}
		}
	}
	pthread_mutex_unlock(&n->plog_lock);
	return off;
}

int hwd_broker_failed_logs(hwd_node *n)
{
	int k = 0;
	pthread_mutex_lock(&n->plog_lock);
	for (int i = 0; i < n->n_plogs; i++)
		k += n->plogs[i].log && hw_log_get_state(n->plogs[i].log) == HW_LOG_STATE_FAILED;
	pthread_mutex_unlock(&n->plog_lock);
	return k;
}
