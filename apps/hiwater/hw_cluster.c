/* hw_cluster.c — the cluster directory, generated configs and the daemon
 * processes of a local cluster. See hw_cluster.h for the layout. */
#include "hw_cluster.h"

#include "hw_dpdk.h"
#include "hw_rig.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *hw_node_state_name(int s)
{
	static const char *names[] = {
#define HW_NODE_STATE_NAME(n) #n,
		HW_NODE_STATE_TABLE(HW_NODE_STATE_NAME)
#undef HW_NODE_STATE_NAME
	};
	if (s < 0 || s >= (int)(sizeof(names) / sizeof(names[0])))
		return "?";
	return names[s];
}

void hw_cluster_default_dir(char *buf, size_t cap)
{
	const char *env = getenv("HIWATER_CLUSTER_DIR");
	if (env && *env)
		snprintf(buf, cap, "%s", env);
	else
		snprintf(buf, cap, "/tmp/hiwater-%u/cluster", (unsigned)getuid());
}

int hw_cluster_control_port(const hw_cluster *c, int node)
{
	if (node >= HW_CLIENT_NODE_BASE)
		return c->base_port + 300 + (node - HW_CLIENT_NODE_BASE);
	if (node >= HW_CLUSTER_CTRL_NODE_BASE)
		return c->base_port + 700 + (node - HW_CLUSTER_CTRL_NODE_BASE);
	if (node > HW_CLUSTER_ZK_NODE_BASE)
		return hw_cluster_zk_client_port(c, node - HW_CLUSTER_ZK_NODE_BASE);
	return c->base_port + node;
}

int hw_cluster_metrics_port(const hw_cluster *c, int node)
{
	if (node >= HW_CLUSTER_CTRL_NODE_BASE)
		return c->base_port + 720 + (node - HW_CLUSTER_CTRL_NODE_BASE);
	return c->base_port + 400 + node;
}

int hw_cluster_node_valid(const hw_cluster *c, int node)
{
	return (node >= 0 && node <= c->brokers) || hw_cluster_is_controller(c, node) || hw_cluster_is_zk(c, node);
}

static void node_path(const hw_cluster *c, int node, const char *leaf, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/node-%d%s%s", c->dir, node, leaf ? "/" : "", leaf ? leaf : "");
}

/* ---- cluster.properties ------------------------------------------------ */

int hw_cluster_load(hw_cluster *c, const char *dir)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	char path[PATH_MAX], *text;
	snprintf(path, sizeof(path), "%s/cluster.properties", dir);
	int rc = hw_cli_read_file(path, &text, NULL);
	if (rc)
		return rc;
	c->base_port = HW_CLUSTER_DEFAULT_PORT;
	c->client_slots = HW_CLUSTER_DEFAULT_SLOTS;
	c->controllers = 1;
	snprintf(c->transport, sizeof(c->transport), "dpdk");
	int lineno = 0;
	rc = 0;
	for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (line[0] == '#' || !line[0])
			continue;
		char *eq = strchr(line, '=');
		if (!eq) {
			hw_cli_err("%s:%d: expected key=value", path, lineno);
			rc = -EINVAL;
			break;
		}
		*eq = 0;
		const char *k = line, *v = eq + 1;
		int64_t n;
		if (!strcmp(k, "brokers") && !hw_cli_parse_i64(v, 1, HW_CLUSTER_MAX_BROKERS, &n))
			c->brokers = (int)n;
		else if (!strcmp(k, "transport") && (!strcmp(v, "dpdk") || !strcmp(v, "udp")))
			snprintf(c->transport, sizeof(c->transport), "%s", v);
		else if (!strcmp(k, "base.port") && !hw_cli_parse_i64(v, 1024, 65000, &n))
			c->base_port = (int)n;
		else if (!strcmp(k, "client.slots") && !hw_cli_parse_i64(v, 1, 64, &n))
			c->client_slots = (int)n;
		else if (!strcmp(k, "controllers") && !hw_cli_parse_i64(v, 1, HW_CLUSTER_MAX_CONTROLLERS, &n))
			c->controllers = (int)n;
		else if (!strcmp(k, "zookeeper.servers") && !hw_cli_parse_i64(v, 0, HW_CLUSTER_MAX_ZK, &n))
			c->zookeepers = (int)n;
		else if (!strcmp(k, "cluster.id") && !hw_cli_parse_i64(v, 0, UINT32_MAX, &n))
			c->cluster_id = (uint32_t)n;
		else if (!strcmp(k, "racks") && hw_cluster_racks_valid(v))
			snprintf(c->racks, sizeof(c->racks), "%s", v);
		else if (!strcmp(k, "rig") && !strcmp(v, "netns"))
			snprintf(c->rig, sizeof(c->rig), "%s", v);
		else if (!strcmp(k, "rig.port") && hw_rig_port_valid(v))
			snprintf(c->rig_port, sizeof(c->rig_port), "%s", v);
		else if (!strcmp(k, "rig.tag") && strlen(v) == 4 && strspn(v, "0123456789abcdef") == 4)
			snprintf(c->rig_tag, sizeof(c->rig_tag), "%s", v);
		else if (!strncmp(k, "config.", 7)) {
			char kv[256];
			snprintf(kv, sizeof(kv), "%s=%s", k + 7, v);
			if (hw_cli_kvs_add(&c->extra, kv)) {
				hw_cli_err("%s:%d: bad config entry", path, lineno);
				rc = -EINVAL;
				break;
			}
		} else {
			hw_cli_err("%s:%d: bad key or value for '%s'", path, lineno, k);
			rc = -EINVAL;
			break;
		}
	}
	free(text);
	if (!rc && c->brokers == 0) {
		hw_cli_err("%s: no 'brokers' entry", path);
		rc = -EINVAL;
	}
	if (!rc && c->rig[0] && (!c->rig_port[0] || !c->rig_tag[0])) {
		hw_cli_err("%s: rig=%s needs rig.port and rig.tag", path, c->rig);
		rc = -EINVAL;
	}
	return rc;
}

/* ---- server.properties --------------------------------------------------- */

void hw_cluster_memif_dir(const hw_cluster *c, char *buf, size_t cap)
{
	/* Unix socket paths are limited to 108 bytes: the memif sockets live
	 * in a short directory keyed by the cluster id rather than under D. */
	snprintf(buf, cap, "/tmp/hiwater-%08x", c->cluster_id);
}

int hw_cluster_render_config(const hw_cluster *c, int node, char *buf, size_t cap)
{
	size_t off = 0;
	const int is_ctl = hw_cluster_is_controller(c, node);
	hw_cli_appendf(buf, cap, &off,
		"# Generated by `hiwater cluster up` for node %d; regenerated on every\n"
		"# `cluster up`. Change settings with `hiwater cluster up --config k=v`.\n",
		node);
	hw_cli_appendf(buf, cap, &off, "node.id=%d\n", node);
	hw_cli_appendf(buf, cap, &off, "process.roles=%s\n", is_ctl ? "controller" : "broker");
	hw_cli_appendf(buf, cap, &off, "cluster.id=%u\n", c->cluster_id);
	hw_cli_appendf(buf, cap, &off, "log.dirs=%s/node-%d/data\n", c->dir, node);
	hw_cluster_rack_render(c, node, buf, cap, &off);
	if (!hw_cli_kvs_get(&c->extra, "hiwater.cluster.secret.file")) {
		char sp[PATH_MAX];
		hw_cluster_secret_path(c, sp, sizeof sp);
		hw_cli_appendf(buf, cap, &off, "hiwater.cluster.secret.file=%s\n", sp);
	}
	if (c->rig[0]) {
		/* every node in its own namespace: hw_rig.c */
		int rc = hw_rig_render_node(c, node, buf, cap, &off);
		if (rc)
			return rc;
		for (int i = 0; i < c->extra.n; i++)
			hw_cli_appendf(buf, cap, &off, "%s=%s\n", c->extra.key[i], c->extra.value[i]);
		return off >= cap ? -ENOSPC : 0;
	}
	if (c->zookeepers || c->controllers > 1)
		hw_cluster_render_zk(c, node, buf, cap, &off);
	else
		hw_cli_appendf(buf, cap, &off, "controller.quorum.voters=0@127.0.0.1:%d\n",
			hw_cluster_control_port(c, 0));
	hw_cli_appendf(buf, cap, &off, "hiwater.control.endpoint=127.0.0.1:%d\n",
		hw_cluster_control_port(c, node));
	hw_cli_appendf(buf, cap, &off, "hiwater.metrics.port=%d\n", hw_cluster_metrics_port(c, node));
	hw_cluster_kafka_render(c, node, buf, cap, &off);
	if (!is_ctl) {
		hw_cli_appendf(buf, cap, &off, "hiwater.transport=%s\n", c->transport);
		hw_cli_appendf(buf, cap, &off, "hiwater.cluster.brokers=%d\n", c->brokers);
		hw_cli_appendf(buf, cap, &off, "hiwater.cluster.client.slots=%d\n", c->client_slots);
		hw_cli_appendf(buf, cap, &off, "hiwater.udp.endpoint=127.0.0.1:%d\n",
			c->base_port + 100 + node);
		if (!strcmp(c->transport, "dpdk")) {
			/* drivers/net's local memif topology: one link per broker
			 * pair and per (broker, client slot), sockets in a short
			 * per-cluster directory, and one neighbour route per peer. */
			char sockdir[64], eal[4096], route[HW_ENDPOINT_MAX];
			hw_dpdk_local_topo t;
			hw_cluster_memif_dir(c, sockdir, sizeof(sockdir));
			int rc = hw_dpdk_local_topo_build(sockdir, node, c->brokers, c->client_slots, 512, &t);
			if (rc == 0)
				rc = hw_dpdk_local_eal_args(&t, eal, sizeof(eal));
			if (rc)
				return rc;
			hw_cli_appendf(buf, cap, &off, "dpdk.eal.args=%s\n", eal);
			for (int i = 0; i < t.n_links; i++) {
				if ((rc = hw_dpdk_local_route(t.link[i].peer, route, sizeof(route))))
					return rc;
				hw_cli_appendf(buf, cap, &off, "hiwater.neighbour.%d=%s\n", t.link[i].peer, route);
			}
		}
	}
	for (int i = 0; i < c->extra.n; i++)
		hw_cli_appendf(buf, cap, &off, "%s=%s\n", c->extra.key[i], c->extra.value[i]);
	return off >= cap ? -ENOSPC : 0;
}

int hw_cluster_write_configs(const hw_cluster *c)
{
	char path[PATH_MAX];
	/* 0700: the directory holds the cluster secret, the configs and the
	 * memif sockets' peers' data; nobody else needs into it */
	int rc = hw_cli_mkdirs(c->dir, 0700);
	if (rc || (rc = hw_cli_chmod(c->dir, 0700)))
		return rc;
	snprintf(path, sizeof(path), "%s/clients", c->dir);
	if ((rc = hw_cli_mkdirs(path, 0700)))
		return rc;
	hw_cluster_memif_dir(c, path, sizeof(path));
	if ((rc = hw_cli_mkdirs(path, 0700)) || (rc = hw_cli_chmod(path, 0700)))
		return rc;
	if ((rc = hw_cluster_secret_ensure(c)))
		return rc;

	char *buf = malloc(16384);
	if (!buf)
		return -ENOMEM;
	size_t off = 0;
	hw_cli_appendf(buf, 16384, &off,
		"# hiwater local cluster (written by `hiwater cluster up`)\n"
		"brokers=%d\ntransport=%s\nbase.port=%d\nclient.slots=%d\ncluster.id=%u\n",
		c->brokers, c->transport, c->base_port, c->client_slots, c->cluster_id);
	if (c->rig[0])
		hw_cli_appendf(buf, 16384, &off, "rig=%s\nrig.port=%s\nrig.tag=%s\n", c->rig, c->rig_port,
			c->rig_tag);
	if (c->controllers > 1 || c->zookeepers)
		hw_cli_appendf(buf, 16384, &off, "controllers=%d\nzookeeper.servers=%d\n", c->controllers,
			c->zookeepers);
	if (c->racks[0])
		hw_cli_appendf(buf, 16384, &off, "racks=%s\n", c->racks);
	for (int i = 0; i < c->extra.n; i++)
		hw_cli_appendf(buf, 16384, &off, "config.%s=%s\n", c->extra.key[i], c->extra.value[i]);
	snprintf(path, sizeof(path), "%s/cluster.properties", c->dir);
	rc = off >= 16384 ? -ENOSPC : hw_cli_write_file(path, buf, off);
	int all[HW_CLUSTER_MAX_NODES];
	int n_all = hw_cluster_all_nodes(c, all, HW_CLUSTER_MAX_NODES);
	if (!rc)
		rc = hw_cluster_zk_write(c);
	for (int i = 0; !rc && i < n_all; i++) {
		int node = all[i];
		if (hw_cluster_is_zk(c, node))
			continue;
		node_path(c, node, "data", path, sizeof(path));
		if ((rc = hw_cli_mkdirs(path, 0700)))
			break;
		if ((rc = hw_cluster_render_config(c, node, buf, 16384)))
			break;
		node_path(c, node, "server.properties", path, sizeof(path));
		rc = hw_cli_write_file(path, buf, strlen(buf));
	}
	if (!rc && c->rig[0])
		rc = hw_rig_write_client_files(c);
	if (!rc)
		rc = hw_cluster_kafka_write_properties(c);
	free(buf);
	return rc;
}

/* ---- processes ---------------------------------------------------------- */

/* Field 22 of /proc/<pid>/stat (start time in clock ticks) and the state
 * letter (field 3). -ESRCH when the process does not exist. */
static int proc_stat(pid_t pid, unsigned long long *start, char *state)
{
	char path[64], *text;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int rc = hw_cli_read_file(path, &text, NULL);
	if (rc)
		return -ESRCH;
	/* comm may contain spaces or parens: parse from the last ')'. */
	char *p = strrchr(text, ')');
	rc = -ESRCH;
	if (p && p[1] == ' ') {
		*state = p[2];
		/* after ')': field 3 is state; start time is field 22 -> skip 19 more. */
		char *q = p + 2;
		int field = 3;
		while (*q && field < 22) {
			if (*q == ' ')
				field++;
			q++;
		}
		if (field == 22) {
			*start = strtoull(q, NULL, 10);
			rc = 0;
		}
	}
	free(text);
	return rc;
}

int hw_cluster_proc_stat(pid_t pid, unsigned long long *start, char *state)
{
	return proc_stat(pid, start, state);
}

static int read_pidfile(const hw_cluster *c, int node, pid_t *pid, unsigned long long *start)
{
	char path[PATH_MAX], *text;
	node_path(c, node, "pid", path, sizeof(path));
	if (hw_cli_read_file(path, &text, NULL))
		return -ENOENT;
	int p = 0;
	unsigned long long s = 0;
	int ok = sscanf(text, "%d %llu", &p, &s) == 2 && p > 0;
	free(text);
	if (!ok)
		return -EINVAL;
	*pid = p;
	*start = s;
	return 0;
}

hw_node_state hw_cluster_node_state(const hw_cluster *c, int node, pid_t *pid_out)
{
	pid_t pid;
	unsigned long long start, now_start;
	char st;
	*pid_out = 0;
	if (read_pidfile(c, node, &pid, &start))
		return HW_NODE_DOWN;
	/* Reap it if it was our child and has exited. */
	waitpid(pid, NULL, WNOHANG);
	if (proc_stat(pid, &now_start, &st) || now_start != start)
		return HW_NODE_DOWN;
	*pid_out = pid;
	if (st == 'Z' || st == 'X')
		return HW_NODE_ZOMBIE;
	if (st == 'T' || st == 't')
		return HW_NODE_PAUSED;
	return HW_NODE_RUNNING;
}

int hw_cluster_find_daemon(char *buf, size_t cap)
{
	const char *env = getenv("HIWATER_BIN_DIR");
	char self[PATH_MAX];
	if (env && *env) {
		snprintf(buf, cap, "%s/hiwaterd", env);
		return access(buf, X_OK) ? -ENOENT : 0;
	}
	if (hw_cli_self_dir(self, sizeof(self)))
		return -ENOENT;
	snprintf(buf, cap, "%s/hiwaterd", self);
	if (!access(buf, X_OK))
		return 0;
	snprintf(buf, cap, "%s/../hiwaterd/hiwaterd", self);
	if (!access(buf, X_OK))
		return 0;
	return -ENOENT;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? 0 : st.st_size;
}

pid_t hw_cluster_spawn(const char *log_path, mode_t log_mode, const char *pid_path,
		       int (*enter)(void *arg, int logfd), void (*exec_fn)(void *arg), void *arg)
{
	int logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, log_mode);
	if (logfd < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(logfd);
		return e;
	}
	if (pid == 0) {
		setsid(); /* its own session: a ^C or hangup of our shell leaves it */
		if (enter && enter(arg, logfd))
			_exit(126); /* enter said why on logfd */
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		exec_fn(arg); /* returns only when the exec failed */
		dprintf(2, "hiwater: exec: %s\n", strerror(errno));
		_exit(127);
	}
	close(logfd);
	unsigned long long start = 0;
	char st;
	/* The child exists (maybe not yet exec'ed): its start time is fixed. */
	if (proc_stat(pid, &start, &st))
		start = 0;
	char line[64];
	int n = snprintf(line, sizeof(line), "%d %llu\n", (int)pid, start);
	hw_cli_write_file(pid_path, line, (size_t)n);
	return pid;
}

typedef struct node_spawn {
	const hw_cluster *c;
	int node;
	const char *daemon;
	char cfg[PATH_MAX];
} node_spawn;

/* In the child, before its output goes to the log: a rig node enters its
 * namespace, and never runs in the wrong one. */
static int node_enter(void *arg, int logfd)
{
	node_spawn *x = arg;
	int rc = x->c->rig[0] ? hw_rig_enter(x->c, x->node) : 0;
	if (rc)
		dprintf(logfd, "hiwater: cannot enter the namespace of node %d: %s\n", x->node, strerror(-rc));
	return rc;
}

static void node_exec(void *arg)
{
	node_spawn *x = arg;
	if (hw_cluster_is_zk(x->c, x->node)) {
		hw_cluster_zk_exec(x->c, x->node);
		dprintf(2, "hiwater: exec java (ZooKeeper server): %s\n", strerror(errno));
		_exit(127);
	}
	char label[32];
	snprintf(label, sizeof(label), "node%d", x->node);
	setenv("HW_NODE_LABEL", label, 1);
	execl(x->daemon, "hiwaterd", "--config", x->cfg, (char *)NULL);
	dprintf(2, "hiwater: exec %s: %s\n", x->daemon, strerror(errno));
	_exit(127);
}

/* Fork+exec hiwaterd (or a ZooKeeper server) for node in its own session,
 * output appended to its log; writes the pid file. The pid or -errno. */
static pid_t spawn_node(const hw_cluster *c, int node, const char *daemon)
{
	node_spawn x = { c, node, daemon, "" };
	char logp[PATH_MAX], pidp[PATH_MAX];
	node_path(c, node, "server.properties", x.cfg, sizeof(x.cfg));
	node_path(c, node, "hiwaterd.log", logp, sizeof(logp));
	node_path(c, node, "pid", pidp, sizeof(pidp));
	return hw_cluster_spawn(logp, 0600, pidp, node_enter, node_exec, &x);
}

static void print_log_tail(const hw_cluster *c, int node)
{
	char path[PATH_MAX], *text;
	size_t len;
	node_path(c, node, "hiwaterd.log", path, sizeof(path));
	if (hw_cli_read_file(path, &text, &len))
		return;
	size_t from = len > 1500 ? len - 1500 : 0;
	hw_cli_err("last lines of %s:\n%s", path, text + from);
	free(text);
}

int hw_cluster_log_says_ready(const char *text, int node)
{
	char needle[48];
	snprintf(needle, sizeof(needle), "hiwaterd: node %d ready ", node);
	return text && strstr(text, needle) != NULL;
}

/* Does the log have node's ready line after offset from? */
static int log_has_ready(const hw_cluster *c, int node, off_t from)
{
	char path[PATH_MAX], *text;
	size_t len;
	node_path(c, node, "hiwaterd.log", path, sizeof(path));
	if (hw_cli_read_file(path, &text, &len))
		return 0;
	int ready = (size_t)from <= len && hw_cluster_log_says_ready(text + from, node);
	free(text);
	return ready;
}

/* A ZooKeeper server is "ready" once it answers on its client port (it
 * serves only with a quorum: that is waited for separately). */
static int zk_listening(const hw_cluster *c, int node)
{
	return hw_cluster_zk_answers(c, node);
}

int hw_cluster_start_nodes(const hw_cluster *c, const int *nodes, int n, int timeout_ms)
{
	char daemon[PATH_MAX];
	if (hw_cluster_find_daemon(daemon, sizeof(daemon))) {
		hw_cli_err("cannot find the hiwaterd binary (set HIWATER_BIN_DIR, or build it next to hiwater)");
		return -ENOENT;
	}
	off_t from[HW_CLUSTER_MAX_NODES];
	pid_t pids[HW_CLUSTER_MAX_NODES];
	int waiting[HW_CLUSTER_MAX_NODES];
	if (n > HW_CLUSTER_MAX_NODES)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int node = nodes[i];
		hw_node_state st = hw_cluster_node_state(c, node, &pid);
		waiting[i] = 0;
		if (st == HW_NODE_RUNNING || st == HW_NODE_PAUSED)
			continue;
		char logp[PATH_MAX];
		node_path(c, node, "hiwaterd.log", logp, sizeof(logp));
		from[i] = file_size(logp);
		pid = spawn_node(c, node, daemon);
		if (pid < 0) {
			hw_cli_err("starting node %d: %s", node, strerror((int)-pid));
			return (int)pid;
		}
		hw_cli_info("started node %d (pid %d)", node, (int)pid);
		pids[i] = pid;
		waiting[i] = 1;
	}
	int64_t deadline = hw_cli_now_ns() + (int64_t)timeout_ms * 1000000;
	for (;;) {
		int left = 0;
		for (int i = 0; i < n; i++) {
			if (!waiting[i])
				continue;
			if (hw_cluster_is_zk(c, nodes[i]) ? zk_listening(c, nodes[i])
							  : log_has_ready(c, nodes[i], from[i])) {
				waiting[i] = 0;
				continue;
			}
			int status;
			if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
				hw_cli_err("node %d exited during startup (%s %d)", nodes[i],
					   WIFEXITED(status) ? "exit status" : "signal",
					   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
				print_log_tail(c, nodes[i]);
				return -ECHILD;
			}
			left++;
		}
		if (!left)
			return 0;
		if (hw_cli_now_ns() > deadline) {
			for (int i = 0; i < n; i++)
				if (waiting[i]) {
					hw_cli_err("node %d not ready after %d ms", nodes[i], timeout_ms);
					print_log_tail(c, nodes[i]);
				}
			return -ETIMEDOUT;
		}
		usleep(20000);
	}
}

int hw_cluster_start_node(const hw_cluster *c, int node, int timeout_ms)
{
	return hw_cluster_start_nodes(c, &node, 1, timeout_ms);
}

int hw_cluster_signal_node(const hw_cluster *c, int node, int sig)
{
	pid_t pid;
	hw_node_state st = hw_cluster_node_state(c, node, &pid);
	if (st == HW_NODE_DOWN || st == HW_NODE_ZOMBIE)
		return -ESRCH;
	if (kill(pid, sig))
		return -errno;
	return 0;
}

int hw_cluster_stop_node(const hw_cluster *c, int node, int timeout_ms)
{
	pid_t pid;
	hw_node_state st = hw_cluster_node_state(c, node, &pid);
	if (st == HW_NODE_DOWN)
		return 0;
	if (st == HW_NODE_PAUSED)
		kill(pid, SIGCONT); /* a stopped process cannot act on SIGTERM */
	kill(pid, SIGTERM);
	int64_t deadline = hw_cli_now_ns() + (int64_t)timeout_ms * 1000000;
	/* A zombie has exited (sockets, files and DPDK runtime released): only
	 * its parent has not collected it yet, which for a node whose `cluster
	 * up` is gone is an init that may reap every few seconds. */
	while ((st = hw_cluster_node_state(c, node, &pid)) != HW_NODE_DOWN && st != HW_NODE_ZOMBIE) {
		if (hw_cli_now_ns() > deadline) {
			hw_cli_err("node %d did not exit %d ms after SIGTERM; sending SIGKILL", node,
				   timeout_ms);
			kill(pid, SIGKILL);
			usleep(50000);
			deadline = hw_cli_now_ns() + 2000000000LL;
			timeout_ms = 2000;
		}
		usleep(10000);
	}
	char path[PATH_MAX];
	node_path(c, node, "pid", path, sizeof(path));
	unlink(path);
	return 0;
}

int hw_cluster_claim_slot(const hw_cluster *c, int *fd_out)
{
	char path[PATH_MAX];
	for (int s = 0; s < c->client_slots; s++) {
		snprintf(path, sizeof(path), "%s/clients/slot-%d.lock", c->dir, s);
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			dprintf(fd, "%d\n", (int)getpid());
			*fd_out = fd;
			return s;
		}
		close(fd);
	}
	return -EBUSY;
}

int hw_cluster_stop_timeout_ms(const hw_cluster *c)
{
	const char *v = hw_cli_kvs_get(&c->extra, "hiwater.controlled.shutdown.timeout.ms");
	int64_t ms = HW_CLUSTER_SHUTDOWN_TIMEOUT_DEFAULT_MS;
	if (v && hw_cli_parse_i64(v, 1, HW_CLUSTER_SHUTDOWN_TIMEOUT_MAX_MS, &ms))
		ms = HW_CLUSTER_SHUTDOWN_TIMEOUT_DEFAULT_MS;
	return (int)ms + HW_CLUSTER_STOP_GRACE_MS;
}
