/* hwd_node.c — the daemon's process: its roles on reactor 0, signals,
 * the controller role, start-up and shut-down.
 *
 * Design note. Every process has a kernel-UDP control endpoint (controller
 * <-> brokers <-> admin CLI), polled by reactor 0; a broker's reactors are
 * shards (hwd_shard.h), all built by one function, each with its data
 * endpoint (hiwater.transport), replica manager and logs. Every endpoint
 * delivers to the one RX entry point hwd_shard_on_msg, which routes by the
 * owner column of HW_MSG_TABLE (hwd_route.h): PARTITION rows to the
 * owning reactor, everything else to reactor 0, where hwd_node_dispatch0
 * picks the role: controller-bound rows to hw_ctrl (controller role), the
 * rest to the broker role. Outbound engine messages go through each
 * shard's mux, which sends the CONTROL plane on the control endpoint
 * (AlterPartition, registration, heartbeats, admin answers) and the DATA
 * plane on the data endpoint. SIGTERM and SIGINT arrive on a signalfd
 * reactor 0 also waits on: a broker starts its controlled shutdown, a
 * controller-only process stops at once (its state is already durable).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "hw_file.h"
#include "hw_logging.h"
#include "hw_netaddr.h"
#include "hwd_kafka.h"
#include "hwd_node.h"
#include "hwd_route.h"
#include "hwd_shard.h"

void hwd_node_dispatch0(hwd_node *n, const hw_msg *m)
{
	/* the owner column of HW_MSG_TABLE (hwd_route.h) */
	int for_ctrl = hwd_route_role(m->type, n->cfg->is_broker) == HWD_ROLE_CONTROLLER;
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

/* ---- pollers ------------------------------------------------------------ */

/* The control socket's poll is one RX burst of reactor 0 (hwd_shard_on_msg
 * stamps its first message). */
static int poll_ctl(void *arg)
{
	hwd_node *n = arg;
	hwd_shard *s0 = &n->shards[0];
	s0->rx_burst_ns = 0;
	s0->rx_via = n->ctl;
	int rc = hw_udp_poll(n->ctl);
	s0->rx_via = NULL;
	s0->rx_burst_ns = 0; /* a message delivered outside a poll is stamped anew */
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
			hw_reactor_stop(n->shards[0].reactor);
			continue;
		}
		n->stop_requested = 1;
		if (n->cfg->is_broker && n->shards[0].rm)
			hwd_broker_begin_shutdown(n);
		else
			hw_reactor_stop(n->shards[0].reactor);
	}
	return work;
}

/* ---- life cycle --------------------------------------------------------- */

/* Start-up phase: the control endpoint, its neighbours (the voters, or
 * our own controller half), its poller and the signals poller. 0 or
 * negative errno (a bad neighbour key printed). */
static int node_init_control(hwd_node *n)
{
	hwd_config *cfg = n->cfg;
	hw_udp_cfg uc = { .listen = cfg->control_listen, .cluster_id = cfg->cluster_id,
			  .self_id = cfg->node_id, .on_msg = hwd_shard_on_msg, .ctx = &n->shards[0],
			  .check_peer_addr = 1, .owner_reactor = 0, .bind_wait_ms = HW_NETADDR_BIND_WAIT_MS };
	int err = 0;
	n->ctl = hw_udp_create(&uc, &err);
	if (!n->ctl) {
		fprintf(stderr, "hiwaterd: node %d: cannot open the control endpoint %s: %s\n", cfg->node_id,
			cfg->control_listen, strerror(err < 0 ? -err : EINVAL));
		return -EADDRNOTAVAIL;
	}
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
	int rc = hw_reactor_add_poller(n->shards[0].reactor, "control-udp", poll_ctl, NULL, n);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->shards[0].reactor, hw_udp_wait_fd(n->ctl), 1, NULL, NULL, NULL);
	if (rc == 0)
		rc = hw_reactor_add_poller(n->shards[0].reactor, "signals", poll_signals, NULL, n);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->shards[0].reactor, n->sigfd, 0, NULL, NULL, NULL);
	return rc < 0 ? rc : 0;
}

/* Start-up phase of a broker: the partition logs recovered, every
 * reactor's data path (hwd_shards_init), then on reactor 0 the broker role
 * and the Kafka listener. 0 or negative errno (printed). */
static int node_init_broker(hwd_node *n)
{
	int rc = hwd_broker_recover(n);
	if (rc == 0)
		rc = hwd_shards_init(n);
	if (rc == 0)
		rc = hwd_broker_init(n);
	if (rc == 0)
		rc = hw_reactor_add_poller(n->shards[0].reactor, "broker", poll_broker, deadline_broker, n);
	if (rc == 0)
		rc = hwd_kafka_init(n);
	return rc < 0 ? rc : 0;
}

/* Start-up phase: the controller role (embedded, or ZooKeeper mode) and
 * its poller. 0 or negative errno (printed). */
static int node_init_controller(hwd_node *n)
{
	hwd_config *cfg = n->cfg;
	hw_reactor *r0 = n->shards[0].reactor;
	int rc;
	if (cfg->zk_connect[0]) {
		rc = hwd_zk_init(n);
		if (rc == 0)
			rc = hw_reactor_add_poller(r0, "controller", poll_ctrl, deadline_ctrl, n);
		return rc;
	}
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/__cluster_metadata.log", cfg->metadata_log_dir);
	if ((rc = hw_file_mkdirs(cfg->metadata_log_dir, 0755)) < 0) {
		fprintf(stderr, "hiwaterd: %s: cannot create metadata.log.dir %s: %s\n", cfg->path,
			cfg->metadata_log_dir, strerror(-rc));
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
	return hw_reactor_add_poller(r0, "controller", poll_ctrl, deadline_ctrl, n);
}

int hwd_node_init(hwd_node *n, hwd_config *cfg)
{
	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->sigfd = -1;
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

	/* every reactor, reactor 0 first: the roles' pollers go on it */
	int rc = hwd_shards_alloc(n);
	if (rc < 0)
		return rc;
	rc = node_init_control(n);
	if (rc == 0 && cfg->is_controller)
		rc = node_init_controller(n);
	if (rc == 0 && cfg->is_broker)
		rc = node_init_broker(n);
	if (rc < 0)
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
	if (hwd_shards_start(n) < 0) {
		hwd_shards_stop(n);
		return 1;
	}
	hw_reactor_run(n->shards[0].reactor);
	hwd_shards_stop(n);  /* reactor 0 is done: the others follow */
	return n->exit_code;
}

void hwd_node_fini(hwd_node *n)
{
	hwd_metrics_stop(n->metrics);
	n->metrics = NULL;
	hwd_kafka_fini(n);
	if (n->cfg->is_broker)
		hwd_broker_fini(n);
	hwd_shards_fini(n);  /* every data path */
	if (n->zk)
		hwd_zk_fini(n); /* deletes /controller at once when active */
	hw_ctrl_destroy(n->ctrl);
	n->ctrl = NULL;
	if (n->eal_up)
		hw_dpdk_eal_cleanup();
	if (n->ctl)
		hw_udp_destroy(n->ctl);
	hwd_shards_free(n);  /* the reactors, reactor 0's last used just now */
	if (n->sigfd >= 0)
		close(n->sigfd);
	memset(n, 0, sizeof(*n));
}
