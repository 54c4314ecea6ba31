/* hwd_logdirs.c — offline log directories (docs/logdirs.md), as Kafka's
 * JBOD handling: a log I/O error (EIO, ENOSPC) FAILs that partition's log,
 * which takes its whole log directory offline — every replica in it — and
 * only that directory. The broker's heartbeat reports the offline dirs and
 * their replicas (the controller moves them out of their ISRs); a new
 * partition is never placed on an offline dir; the metrics count both. A
 * directory comes back with a restart, when its logs open again. */
#include <pthread.h>
#include <string.h>
#include "hw_log.h"
#include "hwd_node.h"

/* p lives in log dir d. */
static int in_dir(const hwd_node *n, const hwd_plog *p, int d)
{
	size_t len = strlen(n->cfg->log_dirs[d]);
	return !strncmp(p->dir, n->cfg->log_dirs[d], len) && p->dir[len] == '/';
}

int hwd_logdir_offline_locked(hwd_node *n, int d)
{
	for (int i = 0; i < n->n_plogs; i++) {
		hwd_plog *p = &n->plogs[i];
		if (p->log && in_dir(n, p, d) && hw_log_get_state(p->log) == HW_LOG_STATE_FAILED)
			return 1;
	}
	return 0;
}

int hwd_broker_offline_log_dirs(hwd_node *n)
{
	int off = 0;
	pthread_mutex_lock(&n->plog_lock);
	for (int d = 0; d < n->cfg->n_log_dirs; d++)
		off += hwd_logdir_offline_locked(n, d);
	pthread_mutex_unlock(&n->plog_lock);
	return off;
}

int hwd_broker_offline_replicas(hwd_node *n, hw_tp *out, int cap, int *n_listed)
{
	int k = 0, listed = 0;
	pthread_mutex_lock(&n->plog_lock);
	for (int d = 0; d < n->cfg->n_log_dirs; d++) {
		if (!hwd_logdir_offline_locked(n, d))
			continue;
		for (int i = 0; i < n->n_plogs; i++) {
			hwd_plog *p = &n->plogs[i];
			if (!p->log || !in_dir(n, p, d))
				continue;
			k++;
			/* the topic id is known once the replica manager claimed the log */
			if (p->claimed && out && listed < cap)
				out[listed++] = p->tp;
		}
	}
	pthread_mutex_unlock(&n->plog_lock);
	if (n_listed)
		*n_listed = listed;
	return k;
}
