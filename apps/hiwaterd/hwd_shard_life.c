/* hwd_shard_life.c — a broker's data reactors: their logs and life cycle
 * (alloc, init, start, stop, fini). Routing between reactors is in
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

static int shard_open_store(void *ctx, hw_tp tp, const char *topic, hw_store **out)
{
	hwd_shard *s = ctx;
	hwd_log *log = NULL;
	int rc = hwd_broker_open_log(s->node, s->idx, tp, topic, &log);
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

static int shard_buffers(hwd_shard *s, hwd_node *n, int idx)
{
	s->node = n;
	s->idx = idx;
	s->log_efd = -1;
	s->fwd_tx.cluster_id = n->cfg->cluster_id;
	s->fwd_tx.incarnation = hw_wire_new_incarnation();
	if (n->cfg->n_reactors <= 1)
		return 0;
	s->arena_buf = malloc(HW_WIRE_ARENA_SIZE);
	s->scratch = malloc(HW_WIRE_MAX_FRAME);
	if (!s->arena_buf || !s->scratch)
		return -ENOMEM;
	if (pthread_mutex_init(&s->snap_lock, NULL))
		return -ENOMEM;
	s->snap_lock_ok = 1;
	return 0;
}

int hwd_shards_alloc(hwd_node *n)
{
	int nr = n->cfg->n_reactors > 0 ? n->cfg->n_reactors : 1;
	n->shards = calloc((size_t)nr, sizeof(*n->shards));
	if (!n->shards)
		return -ENOMEM;
	n->n_reactors = nr;
	if (pthread_mutex_init(&n->plog_lock, NULL))
		return -ENOMEM;
	n->plog_lock_ok = 1;
	for (int k = 0; k < nr; k++) {
		int rc = shard_buffers(&n->shards[k], n, k);
		if (rc < 0)
			return rc;
	}
	if (nr > 1) {
		int rc = hw_mailbox_create(nr, MAILBOX_SLOTS, &n->mbox);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Each transport poll is one RX burst: hwd_shard_on_data_msg stamps its
 * first message; messages delivered otherwise (mailbox) are timed from
 * their start. */
static int poll_data(void *arg)
{
	hwd_shard *s = arg;
	s->rx_burst_ns = 0;
	int rc = hw_udp_poll(s->data);
	s->rx_burst_ns = 0;
	return rc;
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

static int poll_dpdk(void *arg)
{
	hwd_shard *s = arg;
	s->rx_burst_ns = 0;
	int rc = hw_dpdk_poll(s->dpdk);
	s->rx_burst_ns = 0;
	return rc;
}

/* DPDK: our own queue on every port (hwd_shard.h "DPDK"). */
static int shard_init_dpdk(hwd_node *n, hwd_shard *s)
{
	s->funnel.send = hwd_shard_funnel_send;
	s->dnet.send = hwd_shard_dpdk_send;
	int rc = hwd_node_open_dpdk_queue(n, (uint16_t)s->idx, hwd_shard_on_data_msg, s, &s->dpdk);
	if (rc < 0)
		return rc;
	s->dmux = hw_netmux_create(hw_dpdk_net(s->dpdk));
	if (!s->dmux)
		return -ENOMEM;
	rc = hw_netmux_route_control_types(s->dmux, &s->funnel);
	if (rc < 0)
		return rc;
	rc = hw_reactor_add_poller(s->reactor, "data-dpdk", poll_dpdk, NULL, s);
	if (rc < 0)
		return rc;
	int w = hw_dpdk_add_wait_sources(s->dpdk, s->reactor);
	if (w < 0)
		return w;
	rc = shard_log_efd(s);
	if (rc < 0)
		return rc;
	hw_rm_config rmc;
	hwd_shard_rm_config(s, &rmc);
	rmc.stores_signal_completions = s->log_efd >= 0;
	s->knet.send = hwd_shard_kafka_send;
	s->knet_inner = &s->dnet;
	rc = hw_rm_create(&rmc, n->clock, &s->knet, &s->rm);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: replica manager of reactor %d: %s\n", n->cfg->node_id, s->idx,
			strerror(-rc));
		return rc;
	}
	if (n->broker_epoch >= 0)
		hw_rm_set_broker_epoch(s->rm, n->broker_epoch);
	rc = hwd_shard_add_mailbox_poller(s);
	if (rc == 0)
		rc = hw_reactor_add_poller(s->reactor, "replica-manager", poll_rm, deadline_rm, s);
	if (rc == 0)
		rc = hwd_shard_add_log_poller(s);
	if (rc == 0)
		rc = hwd_shard_add_publish_poller(s);
	return rc;
}

static int shard_init(hwd_node *n, hwd_shard *s)
{
	hwd_config *cfg = n->cfg;
	hw_reactor_cfg rc_cfg = { .id = s->idx, .cpu = cfg->reactor_cpus[s->idx],
				  .idle = (hw_idle_strategy)cfg->idle_strategy,
				  .spin_us = (uint32_t)cfg->idle_spin_us,
				  .spin_max_us = (uint32_t)cfg->idle_spin_max_us,
				  .sleep_min_us = (uint32_t)cfg->idle_sleep_min_us,
				  .sleep_max_us = (uint32_t)cfg->idle_sleep_max_us };
	s->reactor = hw_reactor_create(&rc_cfg);
	if (!s->reactor)
		return -ENOMEM;
	int rc = hw_mailbox_attach(n->mbox, s->idx, s->reactor);
	if (rc < 0)
		return rc;
	if (cfg->transport_dpdk)
		return shard_init_dpdk(n, s);
	/* our data socket: the host of hiwater.data.listen, an ephemeral port */
	hw_endpoint ep;
	char listen[HWD_EP_MAX];
	if (hw_endpoint_parse(cfg->data_listen, &ep) || ep.kind != HW_EP_UDP)
		return -EINVAL;
	char host[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &ep.udp.sin_addr, host, sizeof(host));
	snprintf(listen, sizeof(listen), "udp:%s:0", host);
	hw_udp_cfg uc = { .listen = listen, .cluster_id = cfg->cluster_id, .self_id = cfg->node_id,
			  .on_msg = hwd_shard_on_data_msg, .ctx = s, .stream = (uint8_t)s->idx,
			  .owner_reactor = s->idx };
	int err = 0;
	s->data = hw_udp_create(&uc, &err);
	if (!s->data) {
		fprintf(stderr, "hiwaterd: node %d: cannot open the data endpoint of reactor %d (%s): %s\n",
			cfg->node_id, s->idx, listen, strerror(err < 0 ? -err : EINVAL));
		return err < 0 ? err : -EADDRNOTAVAIL;
	}
	for (int i = 0; i < cfg->n_data_nb; i++)
		(void)hw_udp_add_neighbour(s->data, cfg->data_nb[i].node, cfg->data_nb[i].ep);
	/* controller-bound messages of this reactor's rm (AlterPartition) go
	 * out through its own socket */
	for (int i = 0; i < cfg->n_voters; i++) {
		rc = hw_udp_add_neighbour(s->data, cfg->voters[i].node, cfg->voters[i].ep);
		if (rc < 0)
			return rc;
	}
	rc = shard_log_efd(s);
	if (rc < 0)
		return rc;
	hw_rm_config rmc;
	hwd_shard_rm_config(s, &rmc);
	rmc.stores_signal_completions = s->log_efd >= 0;
	s->knet.send = hwd_shard_kafka_send;
	s->knet_inner = hw_udp_net(s->data);
	rc = hw_rm_create(&rmc, n->clock, &s->knet, &s->rm);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: replica manager of reactor %d: %s\n", cfg->node_id, s->idx,
			strerror(-rc));
		return rc;
	}
	if (n->broker_epoch >= 0)
		hw_rm_set_broker_epoch(s->rm, n->broker_epoch);
	rc = hw_reactor_add_poller(s->reactor, "data-udp", poll_data, NULL, s);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(s->reactor, hw_udp_wait_fd(s->data), 1, NULL, NULL, NULL);
	if (rc == 0)
		rc = hwd_shard_add_mailbox_poller(s);
	if (rc == 0)
		rc = hw_reactor_add_poller(s->reactor, "replica-manager", poll_rm, deadline_rm, s);
	if (rc == 0)
		rc = hwd_shard_add_log_poller(s);
	if (rc == 0)
		rc = hwd_shard_add_publish_poller(s);
	return rc;
}

int hwd_shards_init(hwd_node *n)
{
	for (int k = 1; k < n->n_reactors; k++) {
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
		hw_reactor_get_stats(s->reactor ? s->reactor : n->reactor, &rs);
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

static void free_xmsg(void *m) { free(m); }

void hwd_shards_fini(hwd_node *n)
{
	if (!n->shards)
		return;
	for (int k = 0; k < n->n_reactors; k++) {
		hwd_shard *s = &n->shards[k];
		if (k > 0) {
			if (s->log_efd >= 0)
				close(s->log_efd);
			if (s->data)
				hw_udp_destroy(s->data);
			if (s->dmux)
				hw_netmux_destroy(s->dmux);
			if (s->dpdk)
				hw_dpdk_destroy(s->dpdk);   /* before reactor 0's: it owns the ports */
			if (s->reactor)
				hw_reactor_destroy(s->reactor);
		}
		free(s->logs);
		free(s->arena_buf);
		free(s->scratch);
		free(s->snap);
		free(s->pub);
		if (s->snap_lock_ok)
			pthread_mutex_destroy(&s->snap_lock);
	}
	hw_mailbox_destroy(n->mbox, free_xmsg);
	n->mbox = NULL;
	free(n->shards);
	n->shards = NULL;
	if (n->plog_lock_ok)
		pthread_mutex_destroy(&n->plog_lock);
	n->plog_lock_ok = 0;
}
