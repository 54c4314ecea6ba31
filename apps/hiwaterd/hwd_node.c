/* hwd_node.c — the daemon's process: endpoints, message routing, the
 * reactor loop, signals, and the controller role.
 *
 * Design note. Every process has a kernel-UDP control endpoint (controller
 * <-> brokers <-> admin CLI); brokers also have a data endpoint for produce,
 * fetch and replication (hiwater.transport). Both are polled by reactor 0;
 * a broker with several reactors (hiwater.reactor.lcores) shards its
 * partitions over them, each with its own data socket (hwd_shard.h), and
 * reactor 0 hands what it receives for another reactor's partitions over. Inbound messages
 * are routed by type: controller-bound types go to hw_ctrl (controller
 * role), the rest to the broker role. Outbound engine messages go through a
 * small mux hw_net that picks the control endpoint for controller traffic
 * (AlterPartition, registration, heartbeats, admin answers) and the data
 * endpoint for produce/fetch. SIGTERM and SIGINT arrive on a signalfd the
 * reactor also waits on: a broker starts its controlled shutdown, a
 * controller-only process stops at once (its state is already durable).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "hw_logging.h"
#include "hwd_kafka.h"
#include "hwd_node.h"
#include "hwd_shard.h"

static int is_controller_bound(int type)
{
	switch (type) {
	case HW_MSG_BROKER_REGISTER:
	case HW_MSG_BROKER_HEARTBEAT:
	case HW_MSG_ALTER_PARTITION:
	case HW_MSG_CREATE_TOPIC:
	case HW_MSG_ALTER_CONFIG:
	case HW_MSG_DELETE_TOPIC:
	case HW_MSG_ALLOCATE_PRODUCER_IDS:
	case HW_MSG_PARTITION_STATE_ACK:
		return 1;
	}
	return 0;
}

void hwd_node_dispatch0(hwd_node *n, const hw_msg *m)
{
	int for_ctrl = is_controller_bound(m->type) ||
		       (m->type == HW_MSG_METADATA && !n->cfg->is_broker) ||
		       (m->type == HW_MSG_DESCRIBE_TOPIC && !n->cfg->is_broker);
	if (!n->ctrl && n->zk && for_ctrl && hwd_zk_standby_answer(n, m))
		return; /* a standby controller redirects */
	if (n->ctrl && for_ctrl) {
		int rc = hw_ctrl_on_msg(n->ctrl, m);
		if (rc < 0)
			HW_LOG(ERROR, "hiwaterd", "controller: %s from %d failed: %s",
			       hw_msg_type_name(m->type), m->src, strerror(-rc));
		return;
	}
	if (n->cfg->is_broker) {
		hwd_broker_on_msg(n, m);
		return;
	}
	HW_LOG(DEBUG, "hiwaterd", "ignoring %s from %d", hw_msg_type_name(m->type), m->src);
}

/* The control socket's (and a one-reactor broker's data socket's) on_msg:
 * with several reactors, reactor 0 routes by owner (hwd_shard.h). */
static void on_msg(void *ctx, const hw_msg *m)
{
	hwd_node *n = ctx;
	/* The RX burst's receipt time, read once per non-empty poll (only
	 * while request latency is measured): the rm times each request from
	 * it, so a message's wait behind the earlier ones of its burst counts
	 * as Kafka's request queue time. */
	if (!n->rx_burst_ns && n->metrics)
		n->rx_burst_ns = hw_clock_ns(n->clock);
	if (n->n_reactors > 1)
		hwd_shard_route(&n->shards[0], m, NULL);
	else
		hwd_node_dispatch0(n, m);
}

/* ---- pollers ------------------------------------------------------------ */

/* Each transport poll is one RX burst: on_msg stamps its first message. */
static int poll_ctl(void *arg)
{
	hwd_node *n = arg;
	n->rx_burst_ns = 0;
	int rc = hw_udp_poll(n->ctl);
	n->rx_burst_ns = 0; /* a message delivered outside a poll is stamped anew */
	return rc;
}
static int poll_data(void *arg)
{
	hwd_node *n = arg;
	n->rx_burst_ns = 0;
	int rc = hw_udp_poll(n->data);
	n->rx_burst_ns = 0;
	return rc;
}
static int poll_dpdk(void *arg)
{
	hwd_node *n = arg;
	n->rx_burst_ns = 0;
	int rc = hw_dpdk_poll(n->dpdk);
	n->rx_burst_ns = 0;
	return rc;
}

static int poll_ctrl(void *arg)
{
	hwd_node *n = arg;
	if (!n->ctrl) /* ZooKeeper mode, standing by */
		return 0;
	int rc = hw_ctrl_poll(n->ctrl);
	/* ZooKeeper mode: a refused write changed nothing (logged), a fenced
	 * one makes the zookeeper poller step down */
	return rc < 0 && !n->zk ? rc : 0;
}

static int64_t deadline_ctrl(void *arg)
{
	hwd_node *n = arg;
	return n->ctrl ? hw_ctrl_next_deadline_ns(n->ctrl) : INT64_MAX;
}

static int poll_rm(void *arg) { return hw_rm_poll(((hwd_node *)arg)->rm); }
static int64_t deadline_rm(void *arg) { return hw_rm_next_deadline_ns(((hwd_node *)arg)->rm); }

static int poll_broker(void *arg) { return hwd_broker_tick(arg); }
static int64_t deadline_broker(void *arg) { return hwd_broker_deadline(arg); }

static int poll_signals(void *arg)
{
	hwd_node *n = arg;
	struct signalfd_siginfo si;
	int work = 0;
	/* a read(2) per reactor turn is a syscall on the busy-poll path: look
	 * at most every millisecond (the signalfd is also a wait source, so a
	 * sleeping reactor still wakes on a signal) */
	int64_t now = hw_clock_ns(n->clock);
	if (now < n->next_signal_check_ns)
		return 0;
	n->next_signal_check_ns = now + 1000000LL;
	while (read(n->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		work++;
		HW_LOG(INFO, "hiwaterd", "signal %s received", strsignal((int)si.ssi_signo));
		if (n->stop_requested) {
			HW_LOG(WARN, "hiwaterd", "second signal: stopping now");
			n->exit_code = 1;
			hw_reactor_stop(n->reactor);
			continue;
		}
		n->stop_requested = 1;
		if (n->cfg->is_broker && n->rm)
			hwd_broker_begin_shutdown(n);
		else
			hw_reactor_stop(n->reactor);
	}
	return work;
}

/* ---- life cycle --------------------------------------------------------- */

static hw_udp *open_udp(hwd_node *n, const char *listen, const char *what)
{
	hw_udp_cfg uc = { .listen = listen, .cluster_id = n->cfg->cluster_id,
			  .self_id = n->cfg->node_id, .on_msg = on_msg, .ctx = n,
			  .check_peer_addr = !strcmp(what, "control"), .owner_reactor = 0 };
	int err = 0;
	hw_udp *u = hw_udp_create(&uc, &err);
	if (!u)
		fprintf(stderr, "hiwaterd: node %d: cannot open the %s endpoint %s: %s\n",
			n->cfg->node_id, what, listen, strerror(err < 0 ? -err : EINVAL));
	return u;
}

/* DPDK data plane: EAL from dpdk.eal.args; neighbours from
 * hiwater.neighbour.<id>, or — for a local memif cluster
 * (hiwater.cluster.brokers) — derived from the ports the EAL probed: the
 * local topology's vdev of each peer (hw_dpdk_local_vdev_name:
 * net_memif_b<J>/net_memif_c<K>) where the port exists, else net_memif<i>
 * numbered over the peer brokers, then the client slots.
 * One instance per reactor, each on its own queue of every port. */
static int local_cluster_named(hwd_node *n, hw_dpdk *d)
{
	hwd_config *cfg = n->cfg;
	for (int i = 1; i <= cfg->cluster_brokers + cfg->cluster_client_slots; i++) {
		int32_t node = i <= cfg->cluster_brokers ? i : HW_CLIENT_NODE_BASE + (i - cfg->cluster_brokers - 1);
		char vdev[24];
		if (node != cfg->node_id && hw_dpdk_local_vdev_name(node, vdev, sizeof(vdev)) == 0 &&
		    hw_dpdk_port_index(d, vdev) >= 0)
			return 1;
	}
	return 0;
}

int hwd_node_open_dpdk_queue(hwd_node *n, uint16_t queue, hw_net_on_msg_fn cb, void *ctx, hw_dpdk **out)
{
	hwd_config *cfg = n->cfg;
	int rc;
	hw_dpdk_cfg dc = { .cluster_id = cfg->cluster_id, .self_id = cfg->node_id, .on_msg = cb,
			   .ctx = ctx, .udp_port = (uint16_t)cfg->dpdk_udp_port, .mtu = (uint16_t)cfg->dpdk_mtu, .queue = queue,
			   .n_queues = (uint16_t)(n->n_reactors > 0 ? n->n_reactors : 1),
			   .owner_reactor = queue /* reactor k polls and sends on queue k */,
			   /* fetch responses: records go to the ports by reference
			    * (the log's refcounted chunks), not copied into mbufs
			    * (hw_dpdk.h, zero-copy) */
			   .ref_ops = hwd_log_ref_ops(),
			   /* a follower's log may keep a received mbuf: the rm of
			    * this queue's reactor takes its holds here */
			   .rxhold = n->shards ? &n->shards[queue].rxhold : NULL };
	if (cfg->dpdk_ip[0]) {
		struct in_addr a;
		if (inet_pton(AF_INET, cfg->dpdk_ip, &a) != 1) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.dpdk.ip'\n", cfg->path);
			return -EINVAL;
		}
		dc.ip = a.s_addr;
	}
	int err = 0;
	hw_dpdk *d = hw_dpdk_create(&dc, &err);
	if (!d) {
		fprintf(stderr, "hiwaterd: node %d: DPDK transport (queue %u): %s (check dpdk.eal.args)\n",
			cfg->node_id, queue, strerror(err < 0 ? -err : EINVAL));
		return err < 0 ? err : -EINVAL;
	}
	*out = d;
	for (int i = 0; i < cfg->n_data_nb; i++) {
		rc = hw_dpdk_add_neighbour(d, cfg->data_nb[i].node, cfg->data_nb[i].ep);
		if (rc < 0) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.neighbour.%d': %s\n",
				cfg->path, cfg->data_nb[i].node, strerror(-rc));
			return -EINVAL;
		}
	}
	if (cfg->n_data_nb == 0 && cfg->cluster_brokers > 0) {
		int named = local_cluster_named(n, d);
		int idx = 0;
		for (int i = 1; i <= cfg->cluster_brokers + cfg->cluster_client_slots; i++) {
			int32_t node = i <= cfg->cluster_brokers ? i : HW_CLIENT_NODE_BASE + (i - cfg->cluster_brokers - 1);
			if (node == cfg->node_id)
				continue;
			char ep[HWD_EP_MAX];
			if (!named || hw_dpdk_local_route(node, ep, sizeof(ep)))
				snprintf(ep, sizeof(ep), "dpdk:port=net_memif%d,ip=10.77.0.%d", idx, node & 255);
			idx++;
			rc = hw_dpdk_add_neighbour(d, node, ep);
			if (rc < 0)
				HW_LOG(WARN, "hiwaterd", "no DPDK route to node %d (%s): %s", node, ep, strerror(-rc));
			else if (queue == 0)
				HW_LOG(INFO, "hiwaterd", "DPDK route to node %d: %s", node, ep);
		}
	}
	return 0;
}

static int open_dpdk(hwd_node *n)
{
	hwd_config *cfg = n->cfg;
	int rc = hw_dpdk_eal_init(cfg->eal_args);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: %s: bad value for key 'dpdk.eal.args': EAL init failed: %s\n",
			cfg->path, strerror(-rc));
		return -EINVAL;
	}
	n->eal_up = 1;
	return hwd_node_open_dpdk_queue(n, 0, on_msg, n, &n->dpdk);
}

/* Start-up phase: the control endpoint, its neighbours (the voters, or
 * our own controller half), its poller and the signals poller. 0 or
 * negative errno (a bad neighbour key printed). */
static int node_init_control(hwd_node *n)
{
	hwd_config *cfg = n->cfg;
	n->ctl = open_udp(n, cfg->control_listen, "control");
	if (!n->ctl)
		return -EADDRNOTAVAIL;
	if (cfg->controller_id != cfg->node_id) {
		/* every voter: in ZooKeeper mode a broker follows the active one */
		for (int i = 0; i < cfg->n_voters; i++) {
			int rc = hw_udp_add_neighbour(n->ctl, cfg->voters[i].node, cfg->voters[i].ep);
			if (rc < 0)
				return rc;
		}
	} else {
		/* combined mode: the broker half talks to its own controller half */
		(void)hw_udp_add_neighbour(n->ctl, cfg->node_id, cfg->controller_ep);
	}
	for (int i = 0; i < cfg->n_control_nb; i++) {
		int rc = hw_udp_add_neighbour(n->ctl, cfg->control_nb[i].node, cfg->control_nb[i].ep);
		if (rc < 0) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.control.neighbour.%d'\n",
				cfg->path, cfg->control_nb[i].node);
			return rc;
		}
	}
	int rc = hw_reactor_add_poller(n->reactor, "control-udp", poll_ctl, NULL, n);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->reactor, hw_udp_wait_fd(n->ctl), 1, NULL, NULL, NULL);
	if (rc == 0)
		rc = hw_reactor_add_poller(n->reactor, "signals", poll_signals, NULL, n);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->reactor, n->sigfd, 0, NULL, NULL, NULL);
	return rc < 0 ? rc : 0;
}

/* Start-up phase of a broker: its data endpoint, DPDK (queue 0) or UDP
 * (a routing one with several reactors), into *data_net. 0 or negative
 * errno (the reason printed). */
static int node_open_data(hwd_node *n, hw_net **data_net)
{
	hwd_config *cfg = n->cfg;
	int rc;
	if (cfg->transport_dpdk) {
		rc = open_dpdk(n);
		if (rc < 0)
			return rc;
		*data_net = hw_dpdk_net(n->dpdk);
	} else {
		if (n->n_reactors > 1) {
			/* every data socket routes by partition owner */
			hw_udp_cfg uc = { .listen = cfg->data_listen, .cluster_id = cfg->cluster_id,
					  .self_id = cfg->node_id, .on_msg = hwd_shard_on_data_msg,
					  .ctx = &n->shards[0], .owner_reactor = 0 };
			int err = 0;
			n->data = hw_udp_create(&uc, &err);
			if (!n->data)
				fprintf(stderr, "hiwaterd: node %d: cannot open the data endpoint %s: %s\n",
					cfg->node_id, cfg->data_listen, strerror(err < 0 ? -err : EINVAL));
		} else {
			n->data = open_udp(n, cfg->data_listen, "data");
		}
		if (!n->data)
			return -EADDRNOTAVAIL;
		n->shards[0].data = n->data;
		for (int i = 0; i < cfg->n_data_nb; i++) {
			rc = hw_udp_add_neighbour(n->data, cfg->data_nb[i].node, cfg->data_nb[i].ep);
			if (rc < 0) {
				fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.neighbour.%d'\n",
					cfg->path, cfg->data_nb[i].node);
				return rc;
			}
		}
		*data_net = hw_udp_net(n->data);
	}
	return 0;
}

/* Start-up phase of a broker: reactor 0's shard, data endpoint and mux,
 * then in this order its pollers, the broker role, the replica manager,
 * the other reactors and the Kafka listener. 0 or negative errno. */
static int node_init_broker(hwd_node *n)
{
	int rc;
	hw_net *data_net;
	rc = hwd_shards_alloc(n);
	if (rc < 0)
		return rc;
	n->shards[0].reactor = n->reactor;
	rc = node_open_data(n, &data_net);
	if (rc < 0)
		return rc;
	n->mux = hw_netmux_create(data_net);
	if (!n->mux)
		return -ENOMEM;
	rc = hw_netmux_route_control_types(n->mux, hw_udp_net(n->ctl));
	if (rc == 0 && n->data) {
		rc = hw_reactor_add_poller(n->reactor, "data-udp", poll_data, NULL, n);
		if (rc == 0)
			rc = hw_reactor_add_wait_fd(n->reactor, hw_udp_wait_fd(n->data), 1, NULL, NULL, NULL);
	} else if (rc == 0) {
		/* memif has no RX interrupt: its doorbell (hw_doorbell.h)
		 * wakes a sleeping reactor; ports with RX interrupts add
		 * theirs; otherwise the backoff cap bounds the wake-up */
		rc = hw_reactor_add_poller(n->reactor, "data-dpdk", poll_dpdk, NULL, n);
		if (rc == 0) {
			int w = hw_dpdk_add_wait_sources(n->dpdk, n->reactor);
			rc = w < 0 ? w : 0;
		}
	}
	n->shards[0].mux = n->mux;
	if (rc == 0)   /* frames other reactors hand us; before the rm: same-turn HW work */
		rc = hwd_shard_add_mailbox_poller(&n->shards[0]);
	if (rc == 0)
		rc = hwd_broker_init(n);
	n->shards[0].rm = n->rm;
	if (rc == 0 && n->log_efd >= 0)
		rc = hw_reactor_add_wait_fd(n->reactor, n->log_efd, 1, NULL, NULL, NULL);
	if (rc == 0)
		rc = hw_reactor_add_poller(n->reactor, "replica-manager", poll_rm, deadline_rm, n);
	if (rc == 0)
		rc = hwd_shard_add_log_poller(&n->shards[0]);
	if (rc == 0)
		rc = hwd_shards_init(n);
	if (rc == 0)
		rc = hw_reactor_add_poller(n->reactor, "broker", poll_broker, deadline_broker, n);
	if (rc == 0)
		rc = hwd_kafka_init(n);
	return rc < 0 ? rc : 0;
}

int hwd_node_init(hwd_node *n, hwd_config *cfg)
{
	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->sigfd = -1;
	n->log_efd = -1;
	n->clock = hw_clock_monotonic();
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "n%d", cfg->node_id);
	hw_logging_set_prefix(prefix);
	if (hw_logging_configure(cfg->log_level) < 0)
		fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.log.level' ignored\n", cfg->path);

	/* Signals first, so a SIGTERM during start-up is not lost. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	n->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (n->sigfd < 0)
		return -errno;

	hw_reactor_cfg rc_cfg = { .id = 0, .cpu = cfg->reactor_cpu,
				  .idle = (hw_idle_strategy)cfg->idle_strategy,
				  .spin_us = (uint32_t)cfg->idle_spin_us,
				  .spin_max_us = (uint32_t)cfg->idle_spin_max_us,
				  .sleep_min_us = (uint32_t)cfg->idle_sleep_min_us,
				  .sleep_max_us = (uint32_t)cfg->idle_sleep_max_us };
	n->reactor = hw_reactor_create(&rc_cfg);
	if (!n->reactor)
		return -ENOMEM;

	int rc = node_init_control(n);
	if (rc < 0)
		return rc;

	if (cfg->is_controller && cfg->zk_connect[0]) {
		rc = hwd_zk_init(n);
		if (rc == 0)
			rc = hw_reactor_add_poller(n->reactor, "controller", poll_ctrl, deadline_ctrl, n);
		if (rc < 0)
			return rc;
	} else if (cfg->is_controller) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof(path), "%s/__cluster_metadata.log", cfg->metadata_log_dir);
		if (hwd_mkdirs(cfg->metadata_log_dir) < 0) {
			fprintf(stderr, "hiwaterd: %s: cannot create metadata.log.dir %s: %s\n", cfg->path,
				cfg->metadata_log_dir, strerror(errno));
			return -EIO;
		}
		cfg->ctrl.metadata_log_path = path;
		rc = hw_ctrl_create(&cfg->ctrl, n->clock, hw_udp_net(n->ctl), &n->ctrl);
		cfg->ctrl.metadata_log_path = NULL;
		if (rc < 0) {
			fprintf(stderr, "hiwaterd: node %d: controller start failed (metadata log %s): %s\n",
				cfg->node_id, path, strerror(-rc));
			return rc;
		}
		rc = hw_reactor_add_poller(n->reactor, "controller", poll_ctrl, deadline_ctrl, n);
		if (rc < 0)
			return rc;
	}
	if (cfg->is_broker && (rc = node_init_broker(n)) < 0)
		return rc;
	if (cfg->metrics_port > 0) {
		rc = hwd_metrics_start(n, &n->metrics);
		if (rc < 0) {
			fprintf(stderr, "hiwaterd: %s: bad value for key 'hiwater.metrics.port': cannot listen on "
				"%s:%d (hiwater.metrics.listen): %s\n", cfg->path, cfg->metrics_listen,
				cfg->metrics_port, strerror(-rc));
			return rc;
		}
	}
	if (!cfg->is_broker) {
		/* what brokers and clients reach us at: the voter's address */
		printf("hiwaterd: node %d ready (roles %s, control %s)\n", cfg->node_id, cfg->roles,
		       cfg->controller_ep);
		fflush(stdout);
		n->ready_printed = 1;
	}
	return 0;
}

int hwd_node_run(hwd_node *n)
{
	if (n->shards && hwd_shards_start(n) < 0) {
		hwd_shards_stop(n);
		return 1;
	}
	hw_reactor_run(n->reactor);
	if (n->shards)
		hwd_shards_stop(n);  /* reactor 0 is done: the data reactors follow */
	return n->exit_code;
}

void hwd_node_fini(hwd_node *n)
{
	hwd_metrics_stop(n->metrics);
	n->metrics = NULL;
	hwd_kafka_fini(n);
	if (n->cfg->is_broker)
		hwd_broker_fini(n);
	hwd_shards_fini(n);
	if (n->zk)
		hwd_zk_fini(n); /* deletes /controller at once when active */
	hw_ctrl_destroy(n->ctrl);
	n->ctrl = NULL;
	if (n->mux)
		hw_netmux_destroy(n->mux);
	if (n->data)
		hw_udp_destroy(n->data);
	if (n->dpdk)
		hw_dpdk_destroy(n->dpdk);
	if (n->eal_up)
		hw_dpdk_eal_cleanup();
	if (n->ctl)
		hw_udp_destroy(n->ctl);
	if (n->reactor)
		hw_reactor_destroy(n->reactor);
	if (n->sigfd >= 0)
		close(n->sigfd);
	if (n->log_efd >= 0)
		close(n->log_efd); /* the logs that signalled it are closed */
	memset(n, 0, sizeof(*n));
}
