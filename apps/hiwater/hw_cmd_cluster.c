/* hw_cmd_cluster.c — `hiwater cluster up|down|status|kill|start|stop|pause|resume`.
 *
 * `up` is idempotent: a second `up` with the same shape starts whatever is
 * not running and leaves running nodes alone; a different shape while nodes
 * run is refused (exit 2) rather than silently reconfiguring a live cluster.
 */
#include "hw_cluster.h"
#include "hw_cluster_prom.h"
#include "hw_rig.h"

#include <errno.h>
#include <dirent.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char cluster_usage[] =
	"Usage: hiwater cluster <command> [options]\n"
	"\n"
	"Run a local hiwater cluster: one controller (node 0, its own process) and\n"
	"N brokers (nodes 1..N), each a separate hiwaterd process.\n"
	"\n"
	"Commands:\n"
	"  up --brokers N [--transport dpdk|udp] [--base-port P] [--reactors R]\n"
	"     [--rig netns --port af_packet|af_xdp|tap|udp] [--config k=v ...] [--prometheus]\n"
	"                  generate configs, start what is not running, wait until ready;\n"
	"                  --reactors R: R pinned reactors per broker, partitions sharded\n"
	"                  over them (hiwater.reactor.lcores=0,1,.. over this host's CPUs;\n"
	"                  with --rig, R queue pairs per data port);\n"
	"                  --rig netns: every node and a client in its own network namespace\n"
	"                  (hwr<tag>-n<id>, hwr<tag>-cl) on two bridges of hwr<tag>-sw;\n"
	"                  control plane on 10.99.0.<id+1>, data plane on the --port PMD\n"
	"                  over the node's data0 veth (udp: kernel UDP on 10.99.1.<id+1>);\n"
	"                  --prometheus: also run Prometheus (127.0.0.1:<base+800>, files in\n"
	"                  D/prometheus/) scraping every node, with hiwater's recording rules;\n"
	"                  later `up`s start it again until `down --purge`\n"
	"     [--racks a,b,c]  broker.rack of broker k: the ((k-1) mod n)-th name, round-robin\n"
	"                  (docs/racks.md)\n"
	"     [--controllers N --zookeeper M]\n"
	"                  ZooKeeper mode (docs/controller-ha.md): M local ZooKeeper servers\n"
	"                  (zk1..zkM, java processes, data in the cluster dir) and N\n"
	"                  controllers (node 0 and 900..898+N), one active, the others standby\n"
	"  down [--purge]  stop every node (SIGTERM, then SIGKILL after --timeout) and remove\n"
	"                  a rig's namespaces; --purge also deletes the cluster directory\n"
	"  status          one line per node: id, role, pid, state, ports, log\n"
	"  kill N          SIGKILL node N (a crash); N is a node id or zk<k> (a ZooKeeper\n"
	"                  server) for kill, start, stop, pause and resume\n"
	"  start N         start node N if it is not running and wait until ready\n"
	"  stop N          SIGTERM node N (clean shutdown) and wait for it to exit\n"
	"  start|stop prometheus   the cluster's Prometheus (after `up --prometheus`)\n"
	"  pause N         SIGSTOP node N (a GC pause)\n"
	"  resume N        SIGCONT node N\n"
	"  netem N 'ARGS'  (rig) tc netem ARGS on node N's data link, both directions,\n"
	"                  e.g. 'loss 5% delay 100us reorder 10%'; 'off' removes it\n"
	"  partition N     (rig) the switch ends of node N's control and data veths down\n"
	"  heal N          (rig) and up again\n"	"\n"
	"Options for every command:\n"
	"  --dir D         cluster directory (default $HIWATER_CLUSTER_DIR or\n"
	"                  /tmp/hiwater-<uid>/cluster); everything is recorded there\n"
	"  --timeout MS    how long to wait for ready lines (default 30000) and for exits\n"
	"                  (default: the brokers' hiwater.controlled.shutdown.timeout.ms\n"
	"                  + 15000, so a stop outlasts a controlled shutdown that gives up)\n"
	"  -q, --quiet     no progress messages\n"
	"\n"
	"hiwaterd is found in $HIWATER_BIN_DIR, next to hiwater, or in the build tree.\n";

static int usage_err(const char *msg)
{
	hw_cli_err("%s (see `hiwater cluster --help`)", msg);
	return HW_CLI_EXIT_USAGE;
}

static uint32_t new_cluster_id(const char *dir)
{
	/* Unique per directory and creation: memif sockets, DPDK file prefixes
	 * and wire frames are keyed by it (frames from another cluster drop). */
	uint32_t h = 2166136261u;
	for (const char *p = dir; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	h ^= (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() << 8;
	return h ? h : 1;
}

static int any_running(const hw_cluster *c)
{
	pid_t pid;
	int all[HW_CLUSTER_MAX_NODES];
	int n_all = hw_cluster_all_nodes(c, all, HW_CLUSTER_MAX_NODES);
	for (int i = 0; i < n_all; i++) {
		/* a zombie has exited: only its parent has not reaped it */
		hw_node_state st = hw_cluster_node_state(c, all[i], &pid);
		if (st == HW_NODE_RUNNING || st == HW_NODE_PAUSED)
			return 1;
	}
	return 0;
}

/* ZooKeeper mode: the servers (in parallel), a quorum, then every
 * controller (in parallel: one wins, the others stand by). */
static int start_zk_and_controllers(const hw_cluster *c, int timeout_ms)
{
	int nodes[HW_CLUSTER_MAX_NODES], n = 0;
	for (int k = 1; k <= c->zookeepers; k++)
		nodes[n++] = HW_CLUSTER_ZK_NODE_BASE + k;
	int rc = n ? hw_cluster_start_nodes(c, nodes, n, timeout_ms) : 0;
	int64_t deadline = hw_cli_now_ns() + (int64_t)timeout_ms * 1000000;
	for (int serving = !n; !rc && !serving;) {
		char mode[32];
		for (int i = 0; i < n && !serving; i++)
			serving = hw_cluster_zk_mode(c, nodes[i], mode, sizeof(mode)) == 0;
		if (!serving && hw_cli_now_ns() > deadline) {
			hw_cli_err("the ZooKeeper ensemble has no quorum after %d ms", timeout_ms);
			return -ETIMEDOUT;
		}
		if (!serving)
			usleep(100000);
	}
	n = 0;
	nodes[n++] = 0;
	for (int k = 0; k < c->controllers - 1; k++)
		nodes[n++] = HW_CLUSTER_CTRL_NODE_BASE + k;
	return rc ? rc : hw_cluster_start_nodes(c, nodes, n, timeout_ms);
}

static int cmd_up(const char *dir, int brokers, const char *transport, int base_port,
		  const char *rig, const char *port, const hw_cli_kvs *extra, int timeout_ms, int prometheus,
		  int controllers, int zookeepers, const char *racks)
{
	hw_cluster c, old;
	int rc = hw_cluster_load(&old, dir);
	if (rc && rc != -ENOENT)
		return HW_CLI_EXIT_ERROR;
	int have_old = rc == 0;
	if (brokers <= 0) {
		if (!have_old)
			return usage_err("--brokers N is required for a new cluster");
		brokers = old.brokers;
	}
	memset(&c, 0, sizeof(c));
	snprintf(c.dir, sizeof(c.dir), "%s", dir);
	c.brokers = brokers;
	snprintf(c.transport, sizeof(c.transport), "%s",
		 transport ? transport : have_old ? old.transport : "dpdk");
	c.base_port = base_port > 0 ? base_port : have_old ? old.base_port : HW_CLUSTER_DEFAULT_PORT;
	c.client_slots = have_old ? old.client_slots : HW_CLUSTER_DEFAULT_SLOTS;
	c.cluster_id = have_old ? old.cluster_id : new_cluster_id(dir);
	c.extra = have_old && extra->n == 0 ? old.extra : *extra;
	c.controllers = controllers > 0 ? controllers : have_old ? old.controllers : 1;
	c.zookeepers = zookeepers >= 0 ? zookeepers : have_old ? old.zookeepers : 0;
	snprintf(c.racks, sizeof(c.racks), "%s", racks ? racks : have_old ? old.racks : "");
	if (c.controllers > 1 && !c.zookeepers)
		return usage_err("--controllers N > 1 needs --zookeeper M (the embedded controller is a single voter)");
	if (c.zookeepers && rig)
		return usage_err("--zookeeper is not available with --rig");
	if (rig || (have_old && old.rig[0] && !transport)) {
		snprintf(c.rig, sizeof(c.rig), "%s", rig ? rig : old.rig);
		snprintf(c.rig_port, sizeof(c.rig_port), "%s",
			 port ? port : have_old && old.rig[0] ? old.rig_port : "af_packet");
		hw_rig_tag(dir, c.rig_tag);
		/* the transport follows the port (kernel UDP or a DPDK PMD) */
		snprintf(c.transport, sizeof(c.transport), "%s", strcmp(c.rig_port, "udp") ? "dpdk" : "udp");
		if (!strcmp(c.rig_port, "af_xdp") && hw_rig_reactors(&c) > 1)
			return usage_err("--port af_xdp takes one reactor: a veth offers AF_XDP one "
					 "channel (queue_count is refused above it)");
	} else if (port)
		return usage_err("--port needs --rig netns");
	if (prometheus && c.rig[0])
		return usage_err("--prometheus does not work with --rig (metrics listen inside the namespaces)");

	if (have_old && any_running(&old)) {
		int same = old.brokers == c.brokers && !strcmp(old.transport, c.transport) &&
			   old.base_port == c.base_port && old.extra.n == c.extra.n &&
			   old.controllers == c.controllers && old.zookeepers == c.zookeepers &&
			   !strcmp(old.rig, c.rig) && !strcmp(old.rig_port, c.rig_port) &&
			   !strcmp(old.racks, c.racks);
		for (int i = 0; same && i < c.extra.n; i++)
			same = !strcmp(old.extra.key[i], c.extra.key[i]) &&
			       !strcmp(old.extra.value[i], c.extra.value[i]);
		if (!same) {
			hw_cli_err("a cluster with a different shape is running in %s "
				   "(%d brokers, %s, port %d): run `hiwater cluster down --dir %s` first",
				   dir, old.brokers, old.transport, old.base_port, dir);
			return HW_CLI_EXIT_USAGE;
		}
	}
	if ((rc = hw_cluster_write_configs(&c))) {
		hw_cli_err("writing configs in %s: %s", dir, strerror(-rc));
		return HW_CLI_EXIT_ERROR;
	}
	/* The rig after cluster.properties: a crash from here on leaves a
	 * directory `down` finds the namespaces from. A partial rig is only
	 * rebuilt while no node runs in it. */
	if (c.rig[0] && !hw_rig_complete(&c)) {
		if (have_old && any_running(&old)) {
			hw_cli_err("the rig of %s is incomplete while nodes run: `hiwater cluster down --dir %s` first",
				   dir, dir);
			return HW_CLI_EXIT_ERROR;
		}
		if ((rc = hw_rig_up(&c)))
			return HW_CLI_EXIT_ERROR;
	}
	/* Controller first: brokers register with it as they start. */
	rc = c.zookeepers ? start_zk_and_controllers(&c, timeout_ms) : hw_cluster_start_node(&c, 0, timeout_ms);
	if (!rc && !strcmp(c.transport, "dpdk") && !c.rig[0]) {
		/* In id order, each ready before the next: the lower id of a memif
		 * link is its server, and a memif client cannot start before its
		 * server's socket exists. */
		for (int i = 1; !rc && i <= c.brokers; i++)
			rc = hw_cluster_start_node(&c, i, timeout_ms);
	} else if (!rc) {
		int nodes[HW_CLUSTER_MAX_BROKERS];
		for (int i = 0; i < c.brokers; i++)
			nodes[i] = i + 1;
		rc = hw_cluster_start_nodes(&c, nodes, c.brokers, timeout_ms);
	}
	/* Prometheus after the nodes: its first scrape finds them up */
	if (!rc && (prometheus || hw_cluster_prom_enabled(&c)))
		rc = hw_cluster_prom_up(&c, timeout_ms);
	if (rc == -ETIMEDOUT)
		return HW_CLI_EXIT_TIMEOUT;
	if (rc)
		return HW_CLI_EXIT_ERROR;
	if (c.rig[0]) {
		char boot[64];
		hw_rig_bootstrap(&c, boot, sizeof(boot));
		hw_cli_info("rig %s up in %s: bootstrap %s, %d brokers over %s, client namespace hwr%s-cl "
			    "(%s/client.properties)", c.rig, dir, boot, c.brokers, c.rig_port, c.rig_tag, dir);
		return HW_CLI_EXIT_OK;
	}
	if (c.zookeepers)
		hw_cli_info("cluster up in %s: %d ZooKeeper servers, %d controllers, %d brokers over %s", dir,
			    c.zookeepers, c.controllers, c.brokers, c.transport);
	else
		hw_cli_info("cluster up in %s: controller on 127.0.0.1:%d, %d brokers over %s", dir,
			    hw_cluster_control_port(&c, 0), c.brokers, c.transport);
	return HW_CLI_EXIT_OK;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	int rc = flag == FTW_DP ? rmdir(path) : unlink(path);
	return rc && errno != ENOENT ? -1 : 0;
}

/* Remove a directory tree in this process (nftw, depth first): no shell
 * ever sees a path (a quote in --dir once deleted another directory), no
 * symlink is followed (FTW_PHYS) and no other file system is entered
 * (FTW_MOUNT). 0, or -EIO when something could not be removed. */
static int rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) && errno == ENOENT)
		return 0;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) ? -EIO : 0;
}

/* rm_rf every entry of dir whose name starts with prefix. */
static void rm_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[PATH_MAX];
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p) && rm_rf(p))
			hw_cli_info("could not remove DPDK runtime files %s", p);
	}
	closedir(d);
}

/* DPDK leaves a runtime directory per file prefix (/var/run/dpdk/<prefix>,
 * or $XDG_RUNTIME_DIR/dpdk for non-root). The cluster's prefixes are
 * "hw<8 hex>-<node>": take the stem from a broker config and remove them. */
static void purge_dpdk_runtime(const hw_cluster *c)
{
	char path[PATH_MAX], *text;
	snprintf(path, sizeof(path), "%s/node-1/server.properties", c->dir);
	if (hw_cli_read_file(path, &text, NULL))
		return;
	const char *p = strstr(text, "--file-prefix=hw");
	char stem[16] = {0};
	if (p) {
		p += strlen("--file-prefix=");
		int ok = strlen(p) > 11 && p[10] == '-';
		for (int i = 2; ok && i < 10; i++)
			ok = (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f');
		if (ok)
			memcpy(stem, p, 11); /* "hwXXXXXXXX-" */
	}
	free(text);
	if (!stem[0])
		return;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (getuid() == 0 || !xdg) {
		rm_prefixed("/var/run/dpdk", stem);
	} else {
		snprintf(path, sizeof(path), "%s/dpdk", xdg);
		rm_prefixed(path, stem);
	}
}

/* The rig's DPDK file prefixes are its namespace names (hw_rig.c). */
static void purge_rig_runtime(const hw_cluster *c)
{
	char stem[32];
	snprintf(stem, sizeof(stem), "hwr%s-", c->rig_tag);
	if (getuid() == 0)
		rm_prefixed("/var/run/dpdk", stem);
}

static int cmd_down(const hw_cluster *c, int purge, int timeout_ms)
{
	/* Prometheus first: it would only record the nodes going away */
	int rc = hw_cluster_prom_stop(c, timeout_ms) ? -EIO : 0;
	/* Brokers first (each may still want the controller while stopping),
	 * then the controllers, the ZooKeeper servers last. */
	int all[HW_CLUSTER_MAX_NODES];
	int n_all = hw_cluster_all_nodes(c, all, HW_CLUSTER_MAX_NODES);
	for (int i = n_all - 1; i >= 0; i--) {
		int n = all[i];
		pid_t pid;
		if (hw_cluster_node_state(c, n, &pid) == HW_NODE_DOWN)
			continue;
		hw_cli_info("stopping node %d (pid %d)", n, (int)pid);
		if (hw_cluster_stop_node(c, n, timeout_ms))
			rc = -EIO;
	}
	/* every namespace (and with it every veth and bridge) of the rig */
	if (c->rig[0] && hw_rig_down(c->dir))
		rc = -EIO;
	if (purge && c->rig[0])
		purge_rig_runtime(c);
	if (purge) {
		purge_dpdk_runtime(c);
		char sock[64];
		hw_cluster_memif_dir(c, sock, sizeof(sock));
		rm_rf(sock);
		if (rm_rf(c->dir))
			rc = -EIO;
	}
	return rc ? HW_CLI_EXIT_ERROR : HW_CLI_EXIT_OK;
}

static int cmd_status(const hw_cluster *c)
{
	int up = 0;
	printf("%-5s %-20s %-8s %-8s %-17s %-8s %-21s %-6s %s\n", "NODE", "ROLE", "PID", "STATE", "CONTROL", "METRICS",
	       "KAFKA", "RACK", "LOG");
	int all[HW_CLUSTER_MAX_NODES];
	int n_all = hw_cluster_all_nodes(c, all, HW_CLUSTER_MAX_NODES);
	int active = -1, active_epoch = -1, n_active = 0;
	for (int i = 0; i < n_all; i++) {
		int n = all[i];
		pid_t pid;
		hw_node_state st = hw_cluster_node_state(c, n, &pid);
		char ctl[32], host[24] = "127.0.0.1", name[16], role[40];
		if (c->rig[0])
			hw_rig_ctl_ip(n, host, sizeof(host));
		snprintf(ctl, sizeof(ctl), "%s:%d", host, hw_cluster_control_port(c, n));
		hw_cluster_node_name(c, n, name, sizeof(name));
		snprintf(role, sizeof(role), "%s", n == 0 || hw_cluster_is_controller(c, n) ? "controller" : "broker");
		int metrics = hw_cluster_metrics_port(c, n);
		if (hw_cluster_is_zk(c, n)) {
			char mode[24];
			hw_cluster_zk_mode(c, n, mode, sizeof(mode));
			snprintf(role, sizeof(role), "zookeeper(%s)", mode);
			metrics = 0;
		} else if (c->zookeepers && hw_cluster_is_controller(c, n) && st == HW_NODE_RUNNING) {
			int epoch;
			int r = hw_cluster_controller_role(c, n, &epoch);
			snprintf(role, sizeof(role), "%s", r > 0 ? "controller*" : r == 0 ? "standby" : "controller?");
			if (r > 0) {
				active = n;
				active_epoch = epoch;
				n_active++;
			}
		}
		char kafka[40] = "-";
		if (n > 0 && n <= c->brokers && !c->rig[0])
			snprintf(kafka, sizeof(kafka), "kafka=127.0.0.1:%d", hw_cluster_kafka_port(c, n));
		char rack[64];
		if (hw_cluster_rack_of(c, n, rack, sizeof(rack)))
			snprintf(rack, sizeof(rack), "-");
		printf("%-5s %-20s %-8d %-8s %-17s %-8d %-21s %-6s %s/node-%d/hiwaterd.log\n", name, role, (int)pid,
		       hw_node_state_name(st), ctl, metrics, kafka, rack, c->dir, n);
		up += st == HW_NODE_RUNNING;
	}
	printf("transport=%s brokers=%d running=%d/%d dir=%s\n", c->transport, c->brokers, up, n_all, c->dir);
	if (c->racks[0])
		printf("racks=%s\n", c->racks);
	if (c->zookeepers)
		printf("active.controller=%d controller.epoch=%d active.controllers=%d zookeeper.servers=%d\n", active,
		       active_epoch, n_active, c->zookeepers);
	hw_cluster_prom_status(c, stdout);
	char boot[4096];
	if (!c->rig[0] && hw_cluster_kafka_bootstrap(c, boot, sizeof(boot)) == 0)
		printf("bootstrap.servers=%s\n", boot);
	if (c->rig[0]) {
		char line[512], boot[64];
		hw_rig_bootstrap(c, boot, sizeof(boot));
		printf("rig=%s port=%s tag=%s complete=%s bootstrap=%s command-config=%s/client.properties\n",
		       c->rig, c->rig_port, c->rig_tag, hw_rig_complete(c) ? "yes" : "NO", boot, c->dir);
		for (int n = 0; n <= c->brokers; n++) {
			hw_rig_node_status(c, n, line, sizeof(line));
			printf("rig node %d: %s\n", n, line);
		}
		char ns[32], ip[24], dip[24];
		hw_rig_ns_name(c, HW_RIG_CLIENT_NODE, ns, sizeof(ns));
		hw_rig_ctl_ip(HW_RIG_CLIENT_NODE, ip, sizeof(ip));
		if (strcmp(c->rig_port, "udp"))
			hw_rig_dpdk_ip(HW_RIG_CLIENT_NODE, dip, sizeof(dip));
		else
			hw_rig_data_ip(HW_RIG_CLIENT_NODE, dip, sizeof(dip));
		printf("rig client: ns=%s ctl=%s data=%s\n", ns, ip, dip);
	}
	return HW_CLI_EXIT_OK;
}

/* `netem N ARGS...` / `partition N` / `heal N` on a rig cluster. */
static int cmd_fault(const hw_cluster *c, const char *cmd, int argc, char **argv)
{
	if (!c->rig[0]) {
		hw_cli_err("`cluster %s` needs a rig cluster (`cluster up --rig netns`)", cmd);
		return HW_CLI_EXIT_USAGE;
	}
	int netem = !strcmp(cmd, "netem");
	if (netem ? argc < 2 : argc != 1)
		return usage_err(netem ? "usage: cluster netem N 'netem args' | off" : "expected exactly one node id");
	int64_t node;
	if (hw_cli_parse_i64(argv[0], 0, HW_CLUSTER_MAX_BROKERS, &node) || !hw_cluster_node_valid(c, (int)node)) {
		hw_cli_err("no node '%s' in this cluster (nodes 0..%d)", argv[0], c->brokers);
		return HW_CLI_EXIT_USAGE;
	}
	int rc;
	if (netem) {
		char args[512];
		size_t off = 0;
		args[0] = 0;
		for (int i = 1; i < argc && off < sizeof(args); i++)
			off += (size_t)snprintf(args + off, sizeof(args) - off, "%s%s", i > 1 ? " " : "", argv[i]);
		if (off >= sizeof(args) || strpbrk(args, "'\"\\;|&$`"))
			return usage_err("netem args: tc netem words only");
		rc = hw_rig_netem(c, (int)node, args);
		if (!rc)
			hw_cli_info("node %d data link: %s", (int)node, strcmp(args, "off") ? args : "netem removed");
	} else {
		rc = hw_rig_partition(c, (int)node, !strcmp(cmd, "partition"));
		if (!rc)
			hw_cli_info("node %d %s", (int)node, !strcmp(cmd, "heal") ? "healed" : "partitioned");
	}
	return rc == -EINVAL ? HW_CLI_EXIT_USAGE : rc ? HW_CLI_EXIT_ERROR : HW_CLI_EXIT_OK;
}

/* `start prometheus` / `stop prometheus`. */
static int cmd_prometheus(const hw_cluster *c, const char *cmd, int timeout_ms)
{
	if (!hw_cluster_prom_enabled(c)) {
		hw_cli_err("no Prometheus in %s (start it with `hiwater cluster up --prometheus`)", c->dir);
		return HW_CLI_EXIT_USAGE;
	}
	if (!strcmp(cmd, "stop"))
		return hw_cluster_prom_stop(c, timeout_ms) ? HW_CLI_EXIT_ERROR : HW_CLI_EXIT_OK;
	if (strcmp(cmd, "start"))
		return usage_err("prometheus takes start or stop");
	int rc = hw_cluster_prom_up(c, timeout_ms);
	return rc == -ETIMEDOUT ? HW_CLI_EXIT_TIMEOUT : rc ? HW_CLI_EXIT_ERROR : HW_CLI_EXIT_OK;
}

/* Everything `hiwater cluster` is told besides its command. */
typedef struct cluster_opts {
	char dir[512];
	int brokers, base_port, purge, timeout_ms, timeout_given, prometheus, controllers, zookeepers;
	const char *transport, *rig, *port, *racks;
	hw_cli_kvs extra;
} cluster_opts;

/* cluster_opt_one()'s "option taken, go on". */
#define CLUSTER_GO_ON (-1)

static const struct option cluster_opts_table[] = {
	{"help", no_argument, 0, 'h'},
	{"dir", required_argument, 0, 'd'},
	{"brokers", required_argument, 0, 'b'},
	{"transport", required_argument, 0, 't'},
	{"base-port", required_argument, 0, 'p'},
	{"config", required_argument, 0, 'c'},
	{"reactors", required_argument, 0, 'r'},
	{"timeout", required_argument, 0, 'T'},
	{"purge", no_argument, 0, 'P'},
	{"quiet", no_argument, 0, 'q'},
	{"rig", required_argument, 0, 'R'},
	{"port", required_argument, 0, 'o'},
	{"prometheus", no_argument, 0, 'M'},
	{"controllers", required_argument, 0, 'C'},
	{"zookeeper", required_argument, 0, 'Z'},
	{"racks", required_argument, 0, 'K'},
	{0, 0, 0, 0},
};

/* One getopt_long() result c into o: CLUSTER_GO_ON, or the exit status to
 * return now (HW_CLI_EXIT_OK after --help, HW_CLI_EXIT_USAGE on a bad value). */
static int cluster_opt_one(cluster_opts *o, int c)
{
	int64_t v;
	switch (c) {
	case 'C':
		if (hw_cli_parse_i64(optarg, 1, HW_CLUSTER_MAX_CONTROLLERS, &v))
			return usage_err("--controllers wants 1..5");
		o->controllers = (int)v;
		break;
	case 'K':
		if (!hw_cluster_racks_valid(optarg))
			return usage_err("--racks wants a,b,c: rack names of [A-Za-z0-9._-]");
		o->racks = optarg;
		break;
	case 'Z':
		if (hw_cli_parse_i64(optarg, 0, HW_CLUSTER_MAX_ZK, &v))
			return usage_err("--zookeeper wants 0..5");
		o->zookeepers = (int)v;
		break;
	case 'h':
		fputs(cluster_usage, stdout);
		hw_cli_print_exit_codes(stdout);
		return HW_CLI_EXIT_OK;
	case 'q':
		hw_cli_quiet = 1;
		break;
	case 'd':
		snprintf(o->dir, sizeof(o->dir), "%s", optarg);
		break;
	case 'b':
		if (hw_cli_parse_i64(optarg, 1, HW_CLUSTER_MAX_BROKERS, &v))
			return usage_err("--brokers wants 1..16");
		o->brokers = (int)v;
		break;
	case 't':
		if (strcmp(optarg, "dpdk") && strcmp(optarg, "udp"))
			return usage_err("--transport wants dpdk or udp");
		o->transport = optarg;
		break;
	case 'p':
		if (hw_cli_parse_i64(optarg, 1024, 65000, &v))
			return usage_err("--base-port wants 1024..65000");
		o->base_port = (int)v;
		break;
	case 'c':
		if (hw_cli_kvs_add(&o->extra, optarg))
			return usage_err("--config wants key=value");
		break;
	case 'r': {
		/* reactor k on CPU k mod ncpu (hiwaterd's hiwater.reactor.lcores) */
		if (hw_cli_parse_i64(optarg, 1, 8, &v))
			return usage_err("--reactors wants 1..8");
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		char kv[96];
		size_t off = (size_t)snprintf(kv, sizeof(kv), "hiwater.reactor.lcores=");
		for (int k = 0; k < (int)v; k++)
			off += (size_t)snprintf(kv + off, sizeof(kv) - off, "%s%ld", k ? "," : "",
						ncpu > 0 ? k % ncpu : 0);
		if (hw_cli_kvs_add(&o->extra, kv))
			return usage_err("too many --config settings");
		break;
	}
	case 'T':
		if (hw_cli_parse_i64(optarg, 1, 3600000, &v))
			return usage_err("--timeout wants milliseconds");
		o->timeout_ms = (int)v;
		o->timeout_given = 1;
		break;
	case 'P':
		o->purge = 1;
		break;
	case 'M':
		o->prometheus = 1;
		break;
	case 'R':
		if (strcmp(optarg, "netns"))
			return usage_err("--rig wants netns");
		o->rig = optarg;
		break;
	case 'o':
		if (!hw_rig_port_valid(optarg))
			return usage_err("--port wants af_packet, af_xdp, tap or udp");
		o->port = optarg;
		break;
	default:
		return usage_err("bad option");
	}
	return CLUSTER_GO_ON;
}

/* Defaults, then argv's options (GNU getopt permutes: they may come before
 * or after the command): CLUSTER_GO_ON, or the exit status to return now. */
static int cluster_parse_args(cluster_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	hw_cluster_default_dir(o->dir, sizeof(o->dir));
	o->timeout_ms = 30000;
	o->zookeepers = -1;
	optind = 1;
	int c, rc;
	while ((c = getopt_long(argc, argv, "hqd:b:t:p:c:r:T:PR:o:MC:Z:K:", cluster_opts_table, NULL)) != -1)
		if ((rc = cluster_opt_one(o, c)) != CLUSTER_GO_ON)
			return rc;
	return CLUSTER_GO_ON;
}

/* Makes dir absolute (configs and pid files outlive our cwd): 0, or -1 when
 * the path does not fit. */
static int cluster_abs_dir(char dir[512])
{
	if (dir[0] == '/')
		return 0;
	char cwd[PATH_MAX], abs[512];
	if (!getcwd(cwd, sizeof(cwd)) || snprintf(abs, sizeof(abs), "%s/%s", cwd, dir) >= (int)sizeof(abs))
		return -1;
	memcpy(dir, abs, 512);
	return 0;
}

/* The commands on one node (kill, pause, resume, start, stop) with their
 * arguments argv[0..argc): the exit status, or CLUSTER_GO_ON when cmd is
 * none of them. */
static int cmd_node(hw_cluster *c, const char *cmd, int argc, char **argv, int timeout_ms, int stop_ms)
{
	int rc;
	static const struct {
		const char *name;
		int sig;
	} node_cmds[] = {
		{"kill", SIGKILL}, {"pause", SIGSTOP}, {"resume", SIGCONT},
		{"start", 0},      {"stop", SIGTERM},
	};
	for (size_t i = 0; i < sizeof(node_cmds) / sizeof(node_cmds[0]); i++) {
		if (strcmp(cmd, node_cmds[i].name))
			continue;
		if (argc != 1)
			return usage_err("expected exactly one node id");
		int node;
		if (hw_cluster_parse_node(c, argv[0], &node)) {
			hw_cli_err("no node '%s' in this cluster (nodes 0..%d%s)", argv[0], c->brokers,
				   c->zookeepers ? ", the controllers 900.., zk1.." : "");
			return HW_CLI_EXIT_USAGE;
		}
		if (!strcmp(cmd, "start")) {
			rc = hw_cluster_start_node(c, (int)node, timeout_ms);
			return rc == -ETIMEDOUT ? HW_CLI_EXIT_TIMEOUT : rc ? HW_CLI_EXIT_ERROR : 0;
		}
		if (!strcmp(cmd, "stop"))
			return hw_cluster_stop_node(c, (int)node, stop_ms) ? HW_CLI_EXIT_ERROR : 0;
		rc = hw_cluster_signal_node(c, (int)node, node_cmds[i].sig);
		if (rc == -ESRCH) {
			hw_cli_err("node %d is not running", (int)node);
			return HW_CLI_EXIT_ERROR;
		}
		if (rc) {
			hw_cli_err("signalling node %d: %s", (int)node, strerror(-rc));
			return HW_CLI_EXIT_ERROR;
		}
		if (node_cmds[i].sig == SIGKILL) {
			/* Wait until it has exited so a following `start` sees it
			 * down (a zombie has: only its parent has not reaped it). */
			pid_t pid;
			hw_node_state st;
			for (int t = 0; t < 500 && (st = hw_cluster_node_state(c, (int)node, &pid)) != HW_NODE_DOWN &&
					st != HW_NODE_ZOMBIE; t++)
				usleep(2000);
		}
		hw_cli_info("%s node %d", cmd, (int)node);
		return HW_CLI_EXIT_OK;
	}
	return CLUSTER_GO_ON;
}

int hw_cmd_cluster(int argc, char **argv)
{
	cluster_opts o;
	int rc = cluster_parse_args(&o, argc, argv);
	if (rc != CLUSTER_GO_ON)
		return rc;
	if (optind >= argc)
		return usage_err("missing command (up, down, status, kill, start, stop, pause, resume)");
	const char *cmd = argv[optind++];
	if (cluster_abs_dir(o.dir))
		return usage_err("--dir path too long");

	if (!strcmp(cmd, "up")) {
		if (optind != argc)
			return usage_err("unexpected argument after `up`");
		if (o.rig && o.transport)
			return usage_err("--rig takes --port, not --transport");
		return cmd_up(o.dir, o.brokers, o.transport, o.base_port, o.rig, o.port, &o.extra, o.timeout_ms,
			      o.prometheus, o.controllers, o.zookeepers, o.racks);
	}

	hw_cluster c;
	rc = hw_cluster_load(&c, o.dir);
	if (rc == -ENOENT) {
		if (!strcmp(cmd, "down")) {
			/* a rig whose directory is gone: its names follow from dir */
			if (hw_rig_down(o.dir))
				return HW_CLI_EXIT_ERROR;
			hw_cli_info("no cluster in %s: nothing to stop", o.dir);
			return HW_CLI_EXIT_OK; /* down is idempotent */
		}
		hw_cli_err("no cluster in %s (run `hiwater cluster up --dir %s --brokers N`)", o.dir, o.dir);
		return HW_CLI_EXIT_NO_CLUSTER;
	}
	if (rc)
		return HW_CLI_EXIT_ERROR;
	int stop_ms = o.timeout_given ? o.timeout_ms : hw_cluster_stop_timeout_ms(&c);
	if (!strcmp(cmd, "down")) {
		if (optind != argc)
			return usage_err("unexpected argument after `down`");
		return cmd_down(&c, o.purge, stop_ms);
	}
	if (!strcmp(cmd, "status"))
		return cmd_status(&c);
	if (!strcmp(cmd, "netem") || !strcmp(cmd, "partition") || !strcmp(cmd, "heal"))
		return cmd_fault(&c, cmd, argc - optind, argv + optind);
	if (optind + 1 == argc && !strcmp(argv[optind], "prometheus"))
		return cmd_prometheus(&c, cmd, o.timeout_ms);
	rc = cmd_node(&c, cmd, argc - optind, argv + optind, o.timeout_ms, stop_ms);
	if (rc != CLUSTER_GO_ON)
		return rc;
	hw_cli_err("unknown cluster command '%s'", cmd);
	return HW_CLI_EXIT_USAGE;
}
