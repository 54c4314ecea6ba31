/* hwd_shard_life.c — every reactor of a process: its logs and life cycle
 * (alloc, init, start, stop, fini), one function each for all reactors.
 * Endpoints are in hwd_shard_net.c, routing between reactors in
 * hwd_shard.c; see the design note in hwd_shard.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "hw_logging.h"
#include "hw_quota.h"
#include "hwd_kafka.h"
#include "hwd_shard.h"

#define MAILBOX_SLOTS   1024

/* ---- logs --------------------------------------------------------------- */

static int shard_open_store(void *ctx, hw_tp tp, const char *topic, int is_new, hw_store **out)
{
	hwd_shard *s = ctx;
	hwd_log *log = NULL;
	int rc = hwd_broker_open_log(s->node, s->idx, tp, topic, is_new, &log);
	if (rc < 0)
		return rc;
	if (s->n_logs == s->cap_logs) {
		int cap = s->cap_logs ? s->cap_logs * 2 : 16;
		hwd_log **nl = realloc(s->logs, (size_t)cap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;  /* the log stays in the node's list, closed at exit */
		s->logs = nl;
		s->cap_logs = cap;
	}
	s->logs[s->n_logs++] = log;
	*out = hwd_log_store(log);
	return 0;
}

/* The rm's delete_store: the shard forgets the log, the node deletes it. */
static void shard_delete_store(void *ctx, hw_tp tp, const char *topic, hw_store *store)
{
	hwd_shard *s = ctx;
	(void)tp;
	(void)topic;
	for (int i = 0; i < s->n_logs; i++)
		if (hwd_log_store(s->logs[i]) == store) {
			hwd_log *log = s->logs[i];
			s->logs[i] = s->logs[--s->n_logs];
			(void)hwd_broker_delete_log(s->node, log);
			return;
		}
	store->ops->close(store); /* not in our list (out of memory at open) */
}

int64_t hwd_shard_throttle_share(int64_t rate, int k, int n)
{
	if (rate == HW_QUOTA_UNLIMITED || rate < 0 || n <= 1)
		return rate;
	/* the remainder goes to the first reactors: the shares add up to rate */
	return rate / n + (k < rate % n ? 1 : 0);
}

void hwd_shard_rm_config(hwd_shard *s, hw_rm_config *rc)
{
	*rc = s->node->cfg->rm;
	rc->open_store = shard_open_store;
	rc->delete_store = shard_delete_store;
	rc->store_ctx = s;
	rc->owner_reactor = s->idx;  /* shard k's rm runs on reactor k alone */
	rc->rxhold = &s->rxhold;     /* where our DPDK instance announces its mbufs */
	/* Kafka's replication throttle is per broker: each reactor's quota
	 * gets its share of the rate (hwd_shard.h "Replication throttle") */
	int nr = s->node->n_reactors;
	rc->leader_replication_throttled_rate =
		hwd_shard_throttle_share(rc->leader_replication_throttled_rate, s->idx, nr);
	rc->follower_replication_throttled_rate =
		hwd_shard_throttle_share(rc->follower_replication_throttled_rate, s->idx, nr);
}

/* The replica manager polls a store only while its durable end trails the
 * LEO (fsync-before-ack); with the page-cache policy the appended bytes
 * still wait in the log's tail buffer for a poll to submit them. Polling
 * every log of the reactor once per loop turn puts them in the page cache
 * promptly, so a SIGKILL loses nothing the kernel had (Kafka's default
 * guarantee). */
static int poll_logs(void *arg)
{
	hwd_shard *s = arg;
	int work = 0;
	for (int i = 0; i < s->n_logs; i++) {
		int rc = hwd_log_poll(s->logs[i]);
		if (rc > 0)
			work += rc;
	}
	return work;
}

/* While a log has I/O in flight the reactor may not sleep long: a write
 * completion the kernel hands back as task work (COOP_TASKRUN, see
 * hw_log_io_inflight) is posted — and the log's wake eventfd written — only
 * at this thread's next syscall, so nothing would wake a reactor asleep in
 * epoll for its completion. Poll again after HWD_LOG_INFLIGHT_POLL_NS. */
#define HWD_LOG_INFLIGHT_POLL_NS 50000LL
static int64_t deadline_logs(void *arg)
{
	hwd_shard *s = arg;
	for (int i = 0; i < s->n_logs; i++)
		if (hwd_log_io_inflight(s->logs[i]))
			return hw_reactor_now_ns() + HWD_LOG_INFLIGHT_POLL_NS;
	return INT64_MAX;
}

int hwd_shard_add_log_poller(hwd_shard *s)
{
	return hw_reactor_add_poller(s->reactor, "partition-logs", poll_logs, deadline_logs, s);
}

/* ---- life cycle ---------------------------------------------------------- */

/* The reactor of shard k: pinned to the k-th hiwater.reactor.lcores entry
 * (none configured: not pinned), the configured idle strategy. */
static int shard_reactor(hwd_node *n, hwd_shard *s)
{
	hwd_config *cfg = n->cfg;
	hw_reactor_cfg rc_cfg = { .id = s->idx, .cpu = s->idx == 0 ? cfg->reactor_cpu : cfg->reactor_cpus[s->idx],
				  .idle = (hw_idle_strategy)cfg->idle_strategy,
				  .spin_us = (uint32_t)cfg->idle_spin_us,
				  .spin_max_us = (uint32_t)cfg->idle_spin_max_us,
				  .demote_us = (uint32_t)cfg->idle_demote_us,
				  .sleep_min_us = (uint32_t)cfg->idle_sleep_min_us,
				  .sleep_max_us = (uint32_t)cfg->idle_sleep_max_us };
	s->reactor = hw_reactor_create(&rc_cfg);
	if (!s->reactor)
		return -ENOMEM;
	return n->mbox ? hw_mailbox_attach(n->mbox, s->idx, s->reactor) : 0;
}

static int shard_alloc(hwd_node *n, hwd_shard *s, int idx)
{
	s->node = n;
	s->idx = idx;
	s->log_efd = -1;
	s->fwd_tx.cluster_id = n->cfg->cluster_id;
	s->fwd_tx.incarnation = hw_wire_new_incarnation();
	if (n->n_reactors > 1) {
		s->arena_buf = malloc(HW_WIRE_ARENA_SIZE);
		if (!s->arena_buf)
			return -ENOMEM;
		hw_wire_arena_init(&s->arena, s->arena_buf, HW_WIRE_ARENA_SIZE);
		if (pthread_mutex_init(&s->snap_lock, NULL))
			return -ENOMEM;
		s->snap_lock_ok = 1;
	}
	return shard_reactor(n, s);
}

int hwd_shards_alloc(hwd_node *n)
{
	int nr = n->cfg->is_broker && n->cfg->n_reactors > 0 ? n->cfg->n_reactors : 1;
	n->shards = calloc((size_t)nr, sizeof(*n->shards));
	if (!n->shards)
		return -ENOMEM;
	n->n_reactors = nr;
	if (nr > 1) {
		int rc = hw_mailbox_create(nr, MAILBOX_SLOTS, &n->mbox);
		if (rc < 0)
			return rc;
	}
	for (int k = 0; k < nr; k++) {
		int rc = shard_alloc(n, &n->shards[k], k);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int poll_rm(void *arg) { return hw_rm_poll(((hwd_shard *)arg)->rm); }
static int64_t deadline_rm(void *arg) { return hw_rm_next_deadline_ns(((hwd_shard *)arg)->rm); }

/* The eventfd this reactor's logs signal on write completions. */
static int shard_log_efd(hwd_shard *s)
{
	s->log_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->log_efd < 0) {
		HW_LOG(WARN, "shard", "reactor %d: eventfd: %s (log completions are seen on the sleep cap)",
		       s->idx, strerror(errno));
		return 0;
	}
	return hw_reactor_add_wait_fd(s->reactor, s->log_efd, 1, NULL, NULL, NULL);
}

/* The shard's replica manager on `net`, with the broker epoch when it is
 * known already. 0 or -errno (printed). */
static int shard_rm(hwd_node *n, hwd_shard *s, hw_net *net)
{
	hw_rm_config rmc;
	hwd_shard_rm_config(s, &rmc);
	rmc.stores_signal_completions = s->log_efd >= 0;
	int rc = hw_rm_create(&rmc, n->clock, net, &s->rm);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: replica manager of reactor %d: %s\n", n->cfg->node_id, s->idx,
			strerror(-rc));
		return rc;
	}
	if (n->broker_epoch >= 0)
		hw_rm_set_broker_epoch(s->rm, n->broker_epoch);
	return 0;
}

/* One reactor's data path, the same for every reactor, in its poller
 * order: the data endpoint (RX), the mailbox (frames other reactors hand
 * us; before the rm: same-turn HW work), the replica manager, its logs,
 * and for reactors >= 1 the snapshot reactor 0 reads. */
static int shard_init(hwd_node *n, hwd_shard *s)
{
	hw_net *rm_net;
	int rc = hwd_shard_open_data(s, &rm_net);
	if (rc == 0)
		rc = hwd_shard_add_mailbox_poller(s);
	if (rc == 0)
		rc = shard_log_efd(s);
	if (rc == 0)
		rc = shard_rm(n, s, rm_net);
	if (rc == 0)
		rc = hw_reactor_add_poller(s->reactor, "replica-manager", poll_rm, deadline_rm, s);
	if (rc == 0)
		rc = hwd_shard_add_log_poller(s);
	if (rc == 0 && s->idx > 0)
		rc = hwd_shard_add_publish_poller(s);
	return rc;
}

int hwd_shards_init(hwd_node *n)
{
	for (int k = 0; k < n->n_reactors; k++) {
		int rc = shard_init(n, &n->shards[k]);
		if (rc < 0)
			return rc;
	}
	if (n->n_reactors > 1) {
		char cpus[96];
		size_t off = 0;
		cpus[0] = 0;
		for (int k = 0; k < n->n_reactors && off < sizeof(cpus); k++)
			off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d", k ? "," : "",
						n->cfg->reactor_cpus[k]);
		HW_LOG(INFO, "shard", "broker %d: %d reactors on CPUs %s; partition p of topic t on reactor "
		       "(t + p) mod %d", n->cfg->node_id, n->n_reactors, cpus, n->n_reactors);
	}
	return 0;
}

int hwd_shards_start(hwd_node *n)
{
	for (int k = 1; k < n->n_reactors; k++) {
		int rc = hw_reactor_start(n->shards[k].reactor);
		if (rc < 0) {
			HW_LOG(ERROR, "shard", "cannot start reactor %d: %s", k, strerror(-rc));
			return rc;
		}
		n->n_started = k;
	}
	return 0;
}

void hwd_shards_stop(hwd_node *n)
{
	for (int k = 1; k <= n->n_started && k < n->n_reactors; k++) {
		hw_reactor_stop(n->shards[k].reactor);
		hw_reactor_join(n->shards[k].reactor);
	}
	for (int k = 0; k < n->n_reactors && n->n_reactors > 1; k++) {
		hwd_shard *s = &n->shards[k];
		hw_reactor_stats rs;
		hw_reactor_get_stats(s->reactor, &rs);
		HW_LOG(INFO, "shard", "reactor %d: %llu iterations, %llu busy, %d partition logs, frames forwarded "
		       "out %llu in %llu lost %llu, split %llu", k, (unsigned long long)rs.iterations,
		       (unsigned long long)rs.busy_iterations, s->n_logs,
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_FORWARDED_OUT),
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_FORWARDED_IN),
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_FORWARD_LOST),
		       (unsigned long long)hwd_shard_counter_get(s, HWD_SC_SPLIT));
	}
	n->n_started = 0;
}

static void free_xmsg(void *m) { hwd_xmsg_free(m); }

void hwd_shards_fini(hwd_node *n)
{
	/* reactors >= 1 first: DPDK's reactor 0 owns the ports */
	for (int k = n->n_reactors - 1; n->shards && k >= 0; k--) {
		hwd_shard *s = &n->shards[k];
		hwd_shard_close_data(s);
		if (s->log_efd >= 0)
			close(s->log_efd); /* the logs that signalled it are closed */
		s->log_efd = -1;
	}
}

void hwd_shards_free(hwd_node *n)
{
	if (!n->shards)
		return;
	for (int k = 0; k < n->n_reactors; k++) {
		hwd_shard *s = &n->shards[k];
		if (s->reactor)
			hw_reactor_destroy(s->reactor);
		free(s->logs);
		free(s->arena_buf);
		free(s->snap);
		free(s->pub);
		if (s->snap_lock_ok)
			pthread_mutex_destroy(&s->snap_lock);
	}
	hw_mailbox_destroy(n->mbox, free_xmsg);
	n->mbox = NULL;
	free(n->shards);
	n->shards = NULL;
}
