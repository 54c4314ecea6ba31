/* hwd_broker.c — the broker role of hiwaterd: wiring engine/broker to the
 * process.
 *
 * Design note. The broker role itself lives in engine/broker: the
 * controller conversation (hw_broker.h: registration, heartbeats with the
 * offline-log-dir trailer, fencing, which controller to follow, controlled
 * shutdown), the METADATA / DESCRIBE_TOPIC answers (hw_broker_view.h), the
 * clean-shutdown file and partition directory names (hw_broker_disk.h), the
 * partition logs on log.dirs — start-up recovery, placement, deleted and
 * stale logs, offline dirs (hw_broker_logs.h). This file gives them what
 * only the process has:
 *   - start: the file system (hw_broker_posix_fs) and engine/log's io_uring
 *     log under hw_broker_logs, then reactor 0's replica manager and the
 *     broker role on the control socket;
 *   - the advertised endpoints for the registration (hw_netaddr.h), the
 *     ready line, stopping the reactor at STOPPED;
 *   - every reactor's store factory (hw_broker_logs_open), and a claimed
 *     log's completions waking its reactor;
 *   - data routes learnt from the controller's metadata (METADATA with one
 *     unknown topic name returns just the brokers), so a udp cluster needs
 *     no neighbour configuration;
 *   - the stray check once registered: METADATA naming the topics of the
 *     recovered logs no replica manager claimed, the answer to
 *     hw_broker_logs_check_strays; a pushed deletion of such a log to
 *     hw_broker_logs_delete_recovered (docs/logdirs.md "Stray logs");
 *   - at exit: flush and close every log, and record the broker epoch in the
 *     clean-shutdown file after a clean stop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_netaddr.h"
#include "hw_broker.h"
#include "hw_broker_view.h"
#include "hw_broker_disk.h"
#include "hw_broker_logs.h"
#include "hwd_kafka.h"
#include "hwd_node.h"
#include "hwd_shard.h"

#define METADATA_PROBE_TOPIC "__hiwater_brokers"

static int64_t now_ns(hwd_node *n) { return hw_clock_ns(n->clock); }

/* ---- partition logs: engine/log's io_uring log for engine/broker -------- */

/* hw_broker_log_ops.open: the log config of the topic, owned by `reactor`
 * (recovery, -1: the configured owner until a reactor adopts it). */
static int log_open(void *ctx, const char *dir, const char *topic, int reactor, hw_store **out)
{
	hwd_node *n = ctx;
	hwd_log_config lc = n->cfg->log;
	if (reactor >= 0)
		lc.owner_reactor = reactor; /* used by that reactor alone (HW_ASSERT_OWNER) */
	hwd_log_config_for_topic(&lc, topic, n->cfg->offsets_topic_segment_bytes);
	hwd_log *log;
	int rc = hwd_log_open(dir, &lc, &log);
	if (rc == 0)
		*out = hwd_log_store(log);
	return rc;
}

/* hw_broker_log_ops.adopt: completions of the log's io_uring signal the
 * eventfd of the reactor that owns the log (its shard's log_efd), a wait
 * source of that reactor: a reactor sleeping while writes complete wakes at
 * once (acks=1 and a follower's next fetch wait for the write). */
static void log_adopt(void *ctx, hw_store *s, int reactor)
{
	hwd_node *n = ctx;
	hwd_log *log = hw_log_from_store(s);
	hw_log_set_owner(log, reactor);
	int efd = n->shards[reactor].log_efd;
	if (efd < 0)
		return;
	int rc = hw_log_set_wake_fd(log, efd);
	if (rc < 0)
		HW_LOG(WARN, "broker", "reactor %d: cannot register a log's completion eventfd: %s (completions "
		       "are seen on the reactor's sleep cap)", reactor, strerror(-rc));
}

static int log_flush(void *ctx, hw_store *s)
{
	(void)ctx;
	return hwd_log_flush(hw_log_from_store(s));
}

static void log_close(void *ctx, hw_store *s, int reactor)
{
	(void)ctx;
	hwd_log *log = hw_log_from_store(s);
	if (reactor >= 0)
		hw_log_set_owner(log, reactor);
	hwd_log_close(log);
}

static int log_failed(void *ctx, hw_store *s)
{
	(void)ctx;
	return hw_log_get_state(hw_log_from_store(s)) == HW_LOG_STATE_FAILED;
}

int hwd_broker_open_log(hwd_node *n, int shard, hw_tp tp, const char *topic, int is_new, hwd_log **out)
{
	hw_store *s;
	int rc = hw_broker_logs_open(n->logs, shard, tp, topic, is_new, &s);
	if (rc == 0)
		*out = hw_log_from_store(s);
	return rc;
}

int hwd_broker_delete_log(hwd_node *n, hwd_log *log)
{
	return hw_broker_logs_delete(n->logs, hwd_log_store(log));
}

int hwd_broker_offline_log_dirs(hwd_node *n) { return n->logs ? hw_broker_logs_offline_dirs(n->logs) : 0; }

int hwd_broker_offline_replicas(hwd_node *n, hw_tp *out, int cap, int *n_listed)
{
	if (!n->logs) {
		if (n_listed)
			*n_listed = 0;
		return 0;
	}
	return hw_broker_logs_offline_replicas(n->logs, out, cap, n_listed);
}

int hwd_broker_offline_replica_count(hwd_node *n, const hw_rm_part_info *parts, size_t np)
{
	int listed = 0, k = hwd_broker_offline_replicas(n, NULL, 0, NULL);
	hw_tp *tps = k > 0 ? malloc((size_t)k * sizeof(*tps)) : NULL;
	if (tps)
		k = hwd_broker_offline_replicas(n, tps, k, &listed);
	for (size_t i = 0; i < np; i++) {
		if (parts[i].role != HW_PART_OFFLINE)
			continue;
		int dup = 0;
		for (int j = 0; j < listed && !dup; j++)
			dup = tps[j].topic_id == parts[i].tp.topic_id && tps[j].partition == parts[i].tp.partition;
		k += !dup;
	}
	free(tps);
	return k;
}

static int broker_create(hwd_node *n);

/* ---- start -------------------------------------------------------------- */

/* The partition logs on log.dirs (engine/broker) over the file system. 0
 * or -errno (printed). */
static int logs_create(hwd_node *n)
{
	hwd_config *c = n->cfg;
	hw_broker_logs_config lc = { .n_dirs = c->n_log_dirs, .fs = hw_broker_posix_fs, .clock = n->clock,
				     .log = { .open = log_open, .adopt = log_adopt, .flush = log_flush,
					      .close = log_close, .failed = log_failed, .ctx = n } };
	const char *dirs[HW_BROKER_MAX_LOG_DIRS];
	for (int d = 0; d < c->n_log_dirs && d < HW_BROKER_MAX_LOG_DIRS; d++)
		dirs[d] = c->log_dirs[d];
	lc.dirs = dirs;
	int rc = hw_broker_logs_create(&lc, &n->logs);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: %s: key 'log.dirs': %s\n", c->path, strerror(-rc));
		return rc;
	}
	int bad = 0;
	rc = hw_broker_logs_make_dirs(n->logs, &bad);
	if (rc < 0)
		fprintf(stderr, "hiwaterd: %s: cannot create log dir '%s' (key 'log.dirs'): %s\n", c->path,
			c->log_dirs[bad], strerror(-rc));
	return rc;
}

int hwd_broker_recover(hwd_node *n)
{
	hwd_config *c = n->cfg;
	int rc = logs_create(n);
	if (rc < 0)
		return rc;
	n->previous_epoch = hw_broker_take_clean_shutdown(&hw_broker_posix_fs, c->log_dirs[0]);
	rc = hw_broker_logs_recover(n->logs);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: log recovery failed: %s\n", c->node_id, strerror(-rc));
		return rc;
	}
	if (getrandom(&n->incarnation, sizeof(n->incarnation), 0) != (ssize_t)sizeof(n->incarnation))
		n->incarnation = (uint64_t)now_ns(n) ^ ((uint64_t)getpid() << 32);
	n->broker_epoch = -1;
	return 0;
}

int hwd_broker_init(hwd_node *n)
{
	hwd_config *c = n->cfg;
	int rc = broker_create(n);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: broker role: %s\n", c->node_id, strerror(-rc));
		return rc;
	}
	hw_broker_start(n->broker);
	HW_LOG(INFO, "broker", "broker %d: %d partition logs recovered; registering with controller %d at %s "
	       "(previous broker epoch %lld)", c->node_id, hw_broker_logs_count(n->logs), c->controller_id, c->controller_ep,
	       (long long)n->previous_epoch);
	return 0;
}

/* ---- controller conversation ------------------------------------------ */

static void send_ctl(hwd_node *n, uint16_t type, const void *body, uint32_t corr)
{
	hw_msg m = { .type = type, .src = n->cfg->node_id, .dst = n->cfg->controller_id,
		     .correlation_id = corr };
	m.u.other = body;
	int rc = hw_net_send(hw_udp_net(n->ctl), &m);
	if (rc < 0)
		HW_LOG(DEBUG, "broker", "sending %s to the controller failed: %s", hw_msg_type_name(type),
		       strerror(-rc));
}

/* What we register and print in the ready line (hw_netaddr.h): the
 * advertised control endpoint, and the data endpoint — udp:HOST:P0/P1/...
 * (reactor k listens on Pk, hwd_shard.h) or, over DPDK,
 * dpdk:ip=A.B.C.D,udp=BASE,queues=N (reactor k on BASE + k). Computed at
 * every registration attempt: a wildcard listen host is resolved toward the
 * controller, whose route may appear after we start. 0 or -errno (logged). */
static int compute_advertised(hwd_node *n)
{
	hwd_config *c = n->cfg;
	int rc = hw_netaddr_advertise(c->control_listen, c->control_advertised, hw_udp_local_port(n->ctl),
				      c->controller_ep, n->control_adv, sizeof(n->control_adv));
	if (rc < 0) {
		HW_LOG(WARN, "broker", "no control address to advertise (listen %s, toward the controller %s): %s",
		       c->control_listen, c->controller_ep, strerror(-rc));
		return rc;
	}
	if (n->shards[0].data) {
		rc = hw_netaddr_advertise(c->data_listen, c->data_advertised, hw_udp_local_port(n->shards[0].data),
					  c->controller_ep, n->data_adv, sizeof(n->data_adv));
		if (rc < 0) {
			HW_LOG(WARN, "broker", "no data address to advertise (listen %s): %s", c->data_listen,
			       strerror(-rc));
			return rc;
		}
		size_t off = strlen(n->data_adv);
		for (int k = 1; k < n->n_reactors && off < sizeof(n->data_adv); k++)
			off += (size_t)snprintf(n->data_adv + off, sizeof(n->data_adv) - off, "/%u",
						hw_udp_local_port(n->shards[k].data));
		if (off >= sizeof(n->data_adv))
			return -ENOSPC;
		return 0;
	}
	struct in_addr ip = { .s_addr = htonl((10u << 24) | (77u << 16) | ((uint32_t)c->node_id & 255u)) };
	if (c->dpdk_ip[0] && inet_pton(AF_INET, c->dpdk_ip, &ip) != 1)
		return -EINVAL; /* checked by hwd_config */
	return hw_netaddr_dpdk_registration(ip.s_addr, (uint16_t)c->dpdk_udp_port,
					    n->n_reactors > 0 ? n->n_reactors : 1, n->data_adv, sizeof(n->data_adv));
}

/* hw_broker_ops.fill_register: the endpoints, the Kafka listener, the rack. */
static int fill_register(void *ctx, hw_broker_register_req *r)
{
	hwd_node *n = ctx;
	int rc = compute_advertised(n);
	if (rc < 0)
		return rc;
	snprintf(r->control_ep, sizeof(r->control_ep), "%s", n->control_adv);
	snprintf(r->data_ep, sizeof(r->data_ep), "%s", n->data_adv);
	if (n->cfg->kafka.listeners[0]) {
		/* the Kafka listener, for Metadata (docs/kafka.md) */
		r->n_listeners = 1;
		snprintf(r->listeners[0].name, sizeof(r->listeners[0].name), "PLAINTEXT");
		snprintf(r->listeners[0].value, sizeof(r->listeners[0].value), "%s", n->cfg->kafka.adv_hostport);
	}
	snprintf(r->rack, sizeof(r->rack), "%s", n->cfg->rm.rack); /* broker.rack (docs/racks.md) */
	return 0;
}

/* hw_broker_ops.offline: the log dirs that are offline (hw_broker_logs.h). */
static void offline_dirs(void *ctx, hw_tp *out, int cap, hw_broker_offline *o)
{
	hwd_node *n = ctx;
	o->dirs = hwd_broker_offline_log_dirs(n);
	o->listed = 0;
	o->replicas = o->dirs ? hwd_broker_offline_replicas(n, out, cap, &o->listed) : 0;
}

/* hw_broker_ops.registered: every reactor's replica manager needs the epoch. */
static void registered(void *ctx, int64_t epoch)
{
	hwd_node *n = ctx;
	n->broker_epoch = epoch;
	hw_rm_set_broker_epoch(n->shards[0].rm, epoch);
	hwd_shards_set_broker_epoch(n, epoch);
	n->next_metadata_ns = now_ns(n);
	/* the controller that registered us has its metadata: check the
	 * recovered logs nobody claimed against it, once unfenced and a
	 * heartbeat interval on — the partition states and the deletions it
	 * remembers are pushed at the unfencing: a deleted topic's log is
	 * then deleted, not moved aside */
	n->strays_checked = 0;
	n->next_stray_ns = now_ns(n) + (int64_t)n->cfg->heartbeat_interval_ms * 1000000;
}

/* hw_broker_ops.state_changed: the ready line once unfenced the first
 * time; STOPPED ends the reactor (hwd_broker_fini flushes the logs). */
static void state_changed(void *ctx, hw_broker_role_state from, hw_broker_role_state to, const char *why)
{
	hwd_node *n = ctx;
	(void)from;
	(void)why;
	if (to == HW_BROLE_RUNNING && !n->ready_printed) {
		printf("hiwaterd: node %d ready (roles %s, control %s, data %s, broker epoch %lld)\n",
		       n->cfg->node_id, n->cfg->roles, n->control_adv, n->data_adv, (long long)n->broker_epoch);
		fflush(stdout);
		n->ready_printed = 1;
	}
	if (to == HW_BROLE_STOPPED)
		hw_reactor_stop(n->shards[0].reactor);
}

/* hw_broker_ops.controller_changed: the voter's endpoint becomes the
 * controller's (docs/controller-ha.md). */
static void controller_changed(void *ctx, int32_t id)
{
	hwd_node *n = ctx;
	hwd_config *c = n->cfg;
	for (int i = 0; i < c->n_voters; i++)
		if (c->voters[i].node == id) {
			c->controller_id = id;
			snprintf(c->controller_ep, sizeof(c->controller_ep), "%s", c->voters[i].ep);
		}
	if (n->shards[0].rm)
		hw_rm_set_controller(n->shards[0].rm, id);
}

static const hw_broker_ops broker_ops = { .fill_register = fill_register, .offline = offline_dirs,
					  .registered = registered, .state_changed = state_changed,
					  .controller_changed = controller_changed };

/* The broker role (engine/broker) over the control socket. 0 or -errno. */
static int broker_create(hwd_node *n)
{
	hwd_config *c = n->cfg;
	hw_broker_config bc = { .node_id = c->node_id, .controller_id = c->controller_id,
				.heartbeat_interval_ms = c->heartbeat_interval_ms,
				.controlled_shutdown_enable = c->controlled_shutdown_enable,
				.controlled_shutdown_timeout_ms = c->controlled_shutdown_timeout_ms,
				.n_log_dirs = c->n_log_dirs, .incarnation = n->incarnation,
				.previous_epoch = n->previous_epoch, .ops = &broker_ops, .ctx = n };
	for (int i = 0; i < c->n_voters && bc.n_voters < HW_BROKER_MAX_VOTERS; i++)
		bc.voters[bc.n_voters++] = c->voters[i].node;
	return hw_broker_create(&bc, n->clock, hw_udp_net(n->ctl), &n->broker);
}

/* Configured routes win: a hiwater.neighbour.<id> is never replaced. */
static int configured_route(const hwd_node *n, int32_t id)
{
	for (int j = 0; j < n->cfg->n_data_nb; j++)
		if (n->cfg->data_nb[j].node == id)
			return 1;
	return 0;
}

/* DPDK routes come from the controller's metadata unless the config
 * derives them for a local memif cluster (hiwater.cluster.brokers). */
static int learns_dpdk_routes(const hwd_node *n)
{
	return n->shards[0].dpdk && n->cfg->cluster_brokers == 0;
}

static int routed(hwd_node *n, int32_t id)
{
	if (id == n->cfg->node_id || (!n->shards[0].data && !learns_dpdk_routes(n)))
		return 1;
	for (int j = 0; j < n->n_learned; j++)
		if (n->learned[j].node == id && n->learned[j].ep[0])
			return 1;
	return configured_route(n, id);
}

/* Some replica of a partition we host has no data route yet. */
static int any_unrouted(hwd_node *n)
{
	hw_rm_part_info *v;
	size_t np;
	if (hwd_node_partitions(n, &v, &np, NULL, NULL) < 0)
		return 0;
	int found = 0;
	for (size_t i = 0; i < np && !found; i++)
		for (int r = 0; r < v[i].replicas.n; r++)
			if (!routed(n, v[i].replicas.id[r]))
				found = 1;
	free(v);
	return found;
}

static void send_metadata_probe(hwd_node *n)
{
	hw_topic_name t;
	memset(&t, 0, sizeof(t));
	snprintf(t.s, sizeof(t.s), "%s", METADATA_PROBE_TOPIC);
	hw_metadata_req r = { .n_topics = 1, .topics = &t };
	send_ctl(n, HW_MSG_METADATA, &r, ++n->next_corr);
}

/* ---- stray logs (docs/logdirs.md "Stray logs") --------------------------- */

#define STRAY_QUERY_TOPICS 16

/* The next METADATA of the stray check: the topics of recovered logs not
 * yet decided, or none left (done until the next registration). */
static void send_stray_query(hwd_node *n)
{
	hw_topic_name names[STRAY_QUERY_TOPICS];
	int k = n->logs ? hw_broker_logs_unchecked_topics(n->logs, names, STRAY_QUERY_TOPICS) : 0;
	if (k == 0) {
		n->strays_checked = 1;
		return;
	}
	hw_metadata_req r = { .n_topics = (uint16_t)k, .topics = names };
	n->stray_corr = ++n->next_corr;
	send_ctl(n, HW_MSG_METADATA, &r, n->stray_corr);
}

/* The controller's answer about those topics. Only from the controller we
 * follow, without error, not older than the controller epoch we know (a
 * standby answers NOT_CONTROLLER; a deposed controller an older epoch). */
static void on_stray_answer(hwd_node *n, const hw_msg *m)
{
	const hw_metadata_resp *r = m->u.other;
	if (r->error != HW_ERR_NONE || r->controller_epoch < hwd_broker_controller_epoch(n) ||
	    (r->n_topics && !r->topics))
		return;
	n->stray_corr = 0;
	int moved = hw_broker_logs_check_strays(n->logs, 0, n->cfg->node_id, r->topics, r->n_topics);
	if (moved)
		HW_LOG(WARN, "broker", "broker %d: %d stray log(s) moved aside (docs/logdirs.md \"Stray logs\")",
		       n->cfg->node_id, moved);
	n->next_stray_ns = now_ns(n); /* the next topics at once */
}

/* A deletion pushed for a partition whose recovered log no replica
 * manager holds (the broker was down when the topic was deleted). */
static void on_deleted_push(hwd_node *n, const hw_msg *m)
{
	const hw_partition_state *ps = &m->u.pstate;
	if (!n->logs || m->src != n->cfg->controller_id || !hw_topic_name_valid(ps->topic))
		return;
	int rc = hw_broker_logs_delete_recovered(n->logs, 0, ps->tp, ps->topic);
	if (rc < 0 && rc != -ENOENT)
		HW_LOG(WARN, "broker", "deleting the recovered log of %s-%u: %s", ps->topic, ps->tp.partition,
		       strerror(-rc));
}

/* A registered DPDK endpoint "dpdk:ip=..,udp=..,queues=N" as a route
 * through hiwater.dpdk.port (default: our only port) on every reactor's
 * instance. The queues= field is dropped if this build's endpoint parser
 * does not know it. 0 or -errno. */
static int add_dpdk_route(hwd_node *n, int32_t id, const char *reg)
{
	char port[64], ep[HWD_EP_MAX];
	int rc = 0;
	if (n->cfg->dpdk_port[0])
		snprintf(port, sizeof(port), "%s", n->cfg->dpdk_port);
	else if ((rc = hw_netaddr_dpdk_default_port(port, sizeof(port))) < 0) {
		HW_LOG(WARN, "broker", "no route to broker %d (%s): %s", id, reg,
		       rc == -EEXIST ? "several DPDK ports: set hiwater.dpdk.port" : strerror(-rc));
		return rc;
	}
	for (int with_queues = 1; with_queues >= 0; with_queues--) {
		rc = hw_netaddr_dpdk_route(reg, port, with_queues, ep, sizeof(ep));
		if (rc == 0)
			rc = hwd_shards_add_route(n, id, ep);
		if (rc != -EINVAL || !strstr(reg, "queues="))
			break;
	}
	HW_LOG(INFO, "broker", "data route to broker %d: %s%s", id, rc == 0 ? ep : reg,
	       rc < 0 ? " (not applied)" : "");
	return rc;
}

static void on_metadata_resp(hwd_node *n, const hw_msg *m)
{
	const hw_metadata_resp *r = m->u.other;
	/* keep the cluster's broker list: METADATA answered by this broker
	 * carries it too (clients may bootstrap from any broker) */
	for (int i = 0; i < r->n_brokers; i++) { /* racks that changed, to the rms (docs/racks.md) */
		int known = 0;
		for (int j = 0; j < n->n_brokers && !known; j++)
			known = n->brokers[j].id == r->brokers[i].id && !strcmp(n->brokers[j].rack, r->brokers[i].rack);
		if (!known && r->brokers[i].id >= 0)
			hwd_shards_set_broker_rack(n, r->brokers[i].id, r->brokers[i].rack);
	}
	n->n_brokers = 0;
	for (int i = 0; i < r->n_brokers && n->n_brokers < (int)(sizeof(n->brokers) / sizeof(n->brokers[0])); i++)
		n->brokers[n->n_brokers++] = r->brokers[i];
	for (int i = 0; i < r->n_brokers; i++) {
		const hw_broker_info *b = &r->brokers[i];
		int udp = n->shards[0].data && !strncmp(b->data_ep, "udp:", 4);
		int dpdk = learns_dpdk_routes(n) && !strncmp(b->data_ep, "dpdk:", 5);
		if (b->id == n->cfg->node_id || (!udp && !dpdk) || configured_route(n, b->id))
			continue;
		int slot = -1;
		for (int j = 0; j < n->n_learned; j++)
			if (n->learned[j].node == b->id)
				slot = j;
		if (slot >= 0 && !strcmp(n->learned[slot].ep, b->data_ep))
			continue;
		if (slot < 0) {
			if (n->n_learned == (int)(sizeof(n->learned) / sizeof(n->learned[0])))
				continue;
			slot = n->n_learned++;
		}
		int rc;
		if (dpdk) {
			rc = add_dpdk_route(n, b->id, b->data_ep);
		} else {
			rc = hwd_shards_add_route(n, b->id, b->data_ep);
			HW_LOG(INFO, "broker", "data route to broker %d: %s%s", b->id, b->data_ep,
			       rc < 0 ? " (not applied)" : "");
		}
		if (rc < 0) {
			if (slot == n->n_learned - 1)
				n->n_learned--; /* not routed: ask again at the next probe */
			else
				n->learned[slot].ep[0] = 0;
			continue;
		}
		n->learned[slot].node = b->id;
		snprintf(n->learned[slot].ep, sizeof(n->learned[slot].ep), "%s", b->data_ep);
	}
}

/* ---- answering METADATA / DESCRIBE_TOPIC --------------------------------- */

/* Every partition this process knows (the controller's, in combined mode,
 * and every reactor's replica manager's) answered through engine/broker. */
static void answer_view(hwd_node *n, const hw_msg *m, uint16_t n_names, const hw_topic_name *names)
{
	hw_broker_view v = { 0 };
	hw_rm_part_info *infos = NULL;
	size_t np = 0;
	int rc = n->ctrl ? hw_broker_view_add_controller(&v, n->ctrl) : 0;
	if (rc == 0)
		rc = hwd_node_partitions(n, &infos, &np, NULL, NULL) < 0 ? -ENOMEM : 0;
	if (rc == 0)
		rc = hw_broker_view_add_replicas(&v, infos, np);
	free(infos);
	if (rc == 0) {
		hw_broker_view_src src = { .node_id = n->cfg->node_id, .controller_id = n->cfg->controller_id,
					   .controller_ep = n->cfg->controller_ep,
					   .controller_epoch = hwd_broker_controller_epoch(n),
					   .brokers = n->brokers, .n_brokers = n->n_brokers };
		rc = hw_broker_view_answer(&v, &src, m, n_names, names, hw_udp_net(n->ctl));
	}
	if (rc < 0)
		HW_LOG(WARN, "broker", "answering %s to %d failed: %s", hw_msg_type_name(m->type), m->src,
		       strerror(-rc));
	hw_broker_view_free(&v);
}

void hwd_broker_note_partition_state(hwd_node *n, const hw_msg *m)
{
	if (!n->shards[0].data && !learns_dpdk_routes(n))
		return;
	/* A replica we have no data route to yet (it registered after our
	 * last metadata probe): probe now instead of at the next heartbeat,
	 * or a follower could miss replica.lag.time.max.ms. */
	const hw_idset *rs = &m->u.pstate.replicas;
	for (int i = 0; i < rs->n; i++) {
		if (!routed(n, rs->id[i]) && n->next_metadata_ns > now_ns(n) + 50000000) {
			n->next_metadata_ns = now_ns(n);
		}
	}
}

void hwd_broker_on_msg(hwd_node *n, const hw_msg *m)
{
	if (hwd_kafka_on_msg(n, m))
		return; /* an answer to the Kafka listener's request */
	if (hw_broker_on_msg(n->broker, m))
		return; /* registration / heartbeat answers */
	if (hw_msg_owner_of(m->type) == HW_OWNER_PARTITION) {
		/* the owner column of HW_MSG_TABLE: this reactor's replica manager */
		if (m->type == HW_MSG_PARTITION_STATE)
			hwd_broker_note_partition_state(n, m);
		int rc = hw_rm_on_msg_at(n->shards[0].rm, m, n->shards[0].rx_burst_ns);
		if (rc < 0 && rc != -EPROTO)
			HW_LOG(DEBUG, "broker", "%s from %d not handled: %s", hw_msg_type_name(m->type), m->src,
			       strerror(-rc));
		if (m->type == HW_MSG_PARTITION_STATE && m->u.pstate.deleted)
			on_deleted_push(n, m);
		return;
	}
	switch (m->type) { /* NODE and VIEW rows the broker role answers */
	case HW_MSG_METADATA_RESP:
		if (m->u.other && m->src == n->cfg->controller_id) {
			on_metadata_resp(n, m);
			if (n->stray_corr && m->correlation_id == n->stray_corr)
				on_stray_answer(n, m);
		}
		return;
	case HW_MSG_METADATA: {
		const hw_metadata_req *r = m->u.other;
		if (r && (!r->n_topics || r->topics))
			answer_view(n, m, r->n_topics, r->topics);
		return;
	}
	case HW_MSG_DESCRIBE_TOPIC: {
		const hw_describe_topic_req *r = m->u.other;
		if (r && (!r->n_topics || r->topics))
			answer_view(n, m, r->n_topics, r->topics);
		return;
	}
	}
	HW_LOG(DEBUG, "broker", "%s from %d not handled: not the broker role's (%s)", hw_msg_type_name(m->type),
	       m->src, hw_msg_owner_name(hw_msg_owner_of(m->type)));
}

/* ---- timers -------------------------------------------------------------- */

static int probing(const hwd_node *n)
{
	hw_broker_role_state st = hw_broker_get_state(n->broker);
	return st == HW_BROLE_FENCED || st == HW_BROLE_RUNNING;
}

/* The stray check runs while unfenced, until every recovered log is decided. */
static int stray_checking(const hwd_node *n)
{
	return !n->strays_checked && hw_broker_get_state(n->broker) == HW_BROLE_RUNNING;
}

int hwd_broker_tick(hwd_node *n)
{
	int work = hw_broker_tick(n->broker);
	int64_t now = now_ns(n);
	if (probing(n) && now >= n->next_metadata_ns) {
		int64_t hb = (int64_t)n->cfg->heartbeat_interval_ms * 1000000;
		send_metadata_probe(n);
		/* quickly again while a replica is unreachable */
		n->next_metadata_ns = now + (any_unrouted(n) ? hb / 10 : hb);
		work++;
	}
	if (stray_checking(n) && now >= n->next_stray_ns) {
		/* again after a heartbeat interval if the answer was lost */
		n->next_stray_ns = now + (int64_t)n->cfg->heartbeat_interval_ms * 1000000;
		send_stray_query(n);
		work++;
	}
	return work;
}

int64_t hwd_broker_deadline(hwd_node *n)
{
	int64_t d = hw_broker_deadline(n->broker);
	if (probing(n) && n->next_metadata_ns < d)
		d = n->next_metadata_ns;
	if (stray_checking(n) && n->next_stray_ns < d)
		d = n->next_stray_ns;
	return d;
}

void hwd_broker_begin_shutdown(hwd_node *n) { hw_broker_begin_shutdown(n->broker); }

int32_t hwd_broker_controller_epoch(const hwd_node *n)
{
	hw_broker_stats st = { 0 };
	if (n->broker)
		hw_broker_get_stats(n->broker, &st);
	return st.controller_epoch;
}

void hwd_broker_fini(hwd_node *n)
{
	int clean = n->broker && hw_broker_get_state(n->broker) == HW_BROLE_STOPPED && n->broker_epoch >= 0;
	/* Flush everything while the logs are still ours to reach. */
	if (n->logs && hw_broker_logs_flush(n->logs) < 0)
		clean = 0;
	/* every reactor's replica manager (the others have stopped), reactor
	 * 0's last: each closes the logs it claimed */
	for (int k = n->shards ? n->n_reactors - 1 : -1; k >= 0; k--) {
		hw_rm_destroy(n->shards[k].rm);
		n->shards[k].rm = NULL;
	}
	/* Claimed logs were closed by the rm; the others are closed here. */
	hw_broker_logs_destroy(n->logs);
	n->logs = NULL;
	if (clean) {
		int rc = hw_broker_record_clean_shutdown(&hw_broker_posix_fs, n->cfg->log_dirs[0], n->broker_epoch);
		if (rc < 0)
			HW_LOG(ERROR, "broker", "writing the clean-shutdown file failed: %s", strerror(-rc));
		else
			HW_LOG(INFO, "broker", "clean shutdown: broker epoch %lld recorded",
			       (long long)n->broker_epoch);
	}
	hw_broker_destroy(n->broker);
	n->broker = NULL;
}
