/* hw_rig.c — network namespaces, bridges and veths of a `--rig netns`
 * cluster, the rig's per-node configuration, and link faults. Layout and
 * naming in hw_rig.h.
 *
 * Every change to the network is made with iproute2 (`ip -n NS ...`,
 * `tc -n NS ...`), run without a shell (argv vectors, no quoting issues),
 * and every veth is created from the switch namespace straight into the
 * node's namespace: no interface of the rig exists in the root namespace
 * at any moment. */
#include "hw_rig.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NETNS_DIR "/run/netns"
#define DATA_MTU 9000               /* jumbo frames where the PMD can use them */
/* af_xdp: native XDP on a veth refuses a peer MTU above one page minus
 * its headroom and skb_shared_info ("veth: Peer MTU is too large to set
 * XDP", above 3498), and a frame must fit one 2 KiB UMEM frame after the
 * XDP and mbuf headroom: at interface MTU 3498 (hiwater MTU 2026) most
 * fragments of 1.7-2 KB were dropped by the kernel (veth rx_dropped), so
 * 1500 (frames of at most 1514 bytes). */
#define DATA_MTU_XDP 1500

static int data_mtu(const hw_cluster *c)
{
	return strcmp(c->rig_port, "af_xdp") ? DATA_MTU : DATA_MTU_XDP;
}

int hw_rig_port_valid(const char *name)
{
#define HW_RIG_PORT_CMP(n, drv) if (name && !strcmp(name, #n)) return 1;
	HW_RIG_PORT_TABLE(HW_RIG_PORT_CMP)
#undef HW_RIG_PORT_CMP
	return 0;
}

void hw_rig_tag(const char *dir, char tag[8])
{
	/* FNV-1a of the directory path, folded to 16 bits. */
	uint32_t h = 2166136261u;
	for (const char *p = dir; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	snprintf(tag, 8, "%04x", (unsigned)((h ^ (h >> 16)) & 0xffff));
}

void hw_rig_ns_name(const hw_cluster *c, int node, char *buf, size_t cap)
{
	if (node == HW_RIG_SWITCH_NODE)
		snprintf(buf, cap, "hwr%s-sw", c->rig_tag);
	else if (node == HW_RIG_CLIENT_NODE)
		snprintf(buf, cap, "hwr%s-cl", c->rig_tag);
	else
		snprintf(buf, cap, "hwr%s-n%d", c->rig_tag, node);
}

static int host_octet(int node)
{
	return node == HW_RIG_CLIENT_NODE ? HW_RIG_CLIENT_HOST : node + 1;
}

void hw_rig_ctl_ip(int node, char *buf, size_t cap)
{
	snprintf(buf, cap, "10.99.0.%d", host_octet(node));
}

void hw_rig_data_ip(int node, char *buf, size_t cap)
{
	snprintf(buf, cap, "10.99.1.%d", host_octet(node));
}

void hw_rig_dpdk_ip(int node, char *buf, size_t cap)
{
	snprintf(buf, cap, "10.77.0.%d", node == HW_RIG_CLIENT_NODE ? HW_RIG_CLIENT_HOST : node);
}

/* Switch-side veth names (15 chars max): hwrc<id>/hwrd<id>, client "cl". */
static void sw_end(int node, char plane, char *buf, size_t cap)
{
	if (node == HW_RIG_CLIENT_NODE)
		snprintf(buf, cap, "hwr%ccl", plane);
	else
		snprintf(buf, cap, "hwr%c%d", plane, node);
}

int hw_rig_reactors(const hw_cluster *c)
{
	const char *l = hw_cli_kvs_get(&c->extra, "hiwater.reactor.lcores");
	if (!l || !*l)
		return 1;
	int n = 1;
	for (const char *p = l; *p; p++)
		n += *p == ',';
	return n;
}

int hw_rig_client_queues(const hw_cluster *c)
{
	/* af_xdp binds queue_count queues, at most the veth's channel count,
	 * which is 1 however many queues the veth was made with */
	return strcmp(c->rig_port, "af_xdp") ? HW_RIG_CLIENT_QUEUES : 1;
}

/* ---- running iproute2 -------------------------------------------------- */

/* Run argv (argv[0] looked up in PATH), stdout to /dev/null, stderr kept
 * unless quiet. Returns its exit status (0 = success), -ENOENT when it
 * could not be run, -errno from fork. */
static int run_argv(char *const argv[], int quiet)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);
		if (nul >= 0) {
			dup2(nul, 1);
			if (quiet)
				dup2(nul, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return -ENOENT;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* run("ip -n X link ...") with the command split at spaces (no argument of
 * ours contains one, except tc netem args, which are split too — as a
 * shell would). quiet: failure expected sometimes (probes). Returns 0 on
 * success, -EIO after printing the failing command (unless quiet). */
static int run(int quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run(int quiet, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line))
		return -EINVAL;
	char copy[1024], *argv[64];
	memcpy(copy, line, (size_t)n + 1);
	int argc = 0;
	for (char *save, *t = strtok_r(copy, " ", &save); t && argc < 63; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	int rc = run_argv(argv, quiet);
	if (rc == -ENOENT && !quiet)
		hw_cli_err("rig: cannot run '%s' (is iproute2 installed?)", argv[0]);
	else if (rc && !quiet)
		hw_cli_err("rig: '%s' failed (status %d)", line, rc);
	return rc == 0 ? 0 : rc == -ENOENT ? -ENOENT : -EIO;
}

static int ns_exists(const char *ns)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), NETNS_DIR "/%s", ns);
	return access(path, F_OK) == 0;
}

/* ---- building the rig --------------------------------------------------- */

/* A namespace with loopback up and IPv6 off (no router solicitations or
 * MLD reports on the data links: every frame on them is ours). */
static int make_ns(const char *ns)
{
	int rc = run(0, "ip netns add %s", ns);
	if (!rc)
		rc = run(0, "ip netns exec %s sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 "
			 "net.ipv6.conf.default.disable_ipv6=1", ns);
	if (!rc)
		rc = run(0, "ip -n %s link set dev lo up", ns);
	return rc;
}

/* --port tap: the tap PMD makes its own kernel interface, so the rig makes
 * it first — a persistent multi-queue tap dtap0 the PMD attaches to
 * (`iface=dtap0,persist`) — and joins it to data0 inside the node's
 * namespace with two tc mirred redirects (ingress of one to egress of the
 * other, a u32 match-all filter each). Not a bridge: the PMD gives the
 * kernel tap interface the DPDK port's own MAC, so a bridge would take
 * the node's frames for itself (a port's address is local) instead of
 * forwarding them. A restarted daemon finds the same interface. */
static int plug_tap(const char *ns, int queues)
{
	(void)queues;
	int rc = run(0, "ip -n %s tuntap add dev dtap0 mode tap multi_queue", ns);
	if (!rc)
		rc = run(0, "ip -n %s link set dev dtap0 mtu %d up", ns, DATA_MTU);
	static const char *const pairs[2][2] = {{"dtap0", "data0"}, {"data0", "dtap0"}};
	for (int i = 0; i < 2 && !rc; i++) {
		rc = run(0, "tc -n %s qdisc add dev %s ingress", ns, pairs[i][0]);
		if (!rc)
			rc = run(0, "tc -n %s filter add dev %s parent ffff: protocol all prio 1 u32 match u32 0 0 "
				 "action mirred egress redirect dev %s", ns, pairs[i][0], pairs[i][1]);
	}
	return rc;
}

/* Plug node (or the client) into the switch: control veth on brc, data
 * veth on brd, addresses inside the node's namespace. With K reactors the
 * data veth has K queue pairs (multi-queue PMD args). */
static int plug(const hw_cluster *c, int node, int queues)
{
	char sw[32], ns[32], se[16], ip[24];
	hw_rig_ns_name(c, HW_RIG_SWITCH_NODE, sw, sizeof(sw));
	hw_rig_ns_name(c, node, ns, sizeof(ns));
	int rc = make_ns(ns);
	sw_end(node, 'c', se, sizeof(se));
	if (!rc)
		rc = run(0, "ip -n %s link add name %s type veth peer name ctl0 netns %s", sw, se, ns);
	if (!rc)
		rc = run(0, "ip -n %s link set dev %s master brc up", sw, se);
	hw_rig_ctl_ip(node, ip, sizeof(ip));
	if (!rc)
		rc = run(0, "ip -n %s addr add %s/24 dev ctl0", ns, ip);
	if (!rc)
		rc = run(0, "ip -n %s link set dev ctl0 up", ns);
	sw_end(node, 'd', se, sizeof(se));
	if (!rc)
		rc = run(0, "ip -n %s link add name %s mtu %d numtxqueues %d numrxqueues %d type veth "
			 "peer name data0 mtu %d numtxqueues %d numrxqueues %d netns %s",
			 sw, se, data_mtu(c), queues, queues, data_mtu(c), queues, queues, ns);
	if (!rc)
		rc = run(0, "ip -n %s link set dev %s master brd up", sw, se);
	if (!rc && !strcmp(c->rig_port, "udp")) {
		hw_rig_data_ip(node, ip, sizeof(ip));
		rc = run(0, "ip -n %s addr add %s/24 dev data0", ns, ip);
	}
	if (!rc)
		rc = run(0, "ip -n %s link set dev data0 up", ns);
	if (!rc && !strcmp(c->rig_port, "tap") && node != HW_RIG_CLIENT_NODE)
		rc = plug_tap(ns, queues);
	else if (!rc && !strcmp(c->rig_port, "tap"))
		rc = plug_tap(ns, HW_RIG_CLIENT_QUEUES);
	return rc;
}

int hw_rig_complete(const hw_cluster *c)
{
	char ns[32];
	hw_rig_ns_name(c, HW_RIG_SWITCH_NODE, ns, sizeof(ns));
	if (!ns_exists(ns))
		return 0;
	for (int node = HW_RIG_CLIENT_NODE; node <= c->brokers; node++) {
		if (node == HW_RIG_SWITCH_NODE)
			continue;
		hw_rig_ns_name(c, node, ns, sizeof(ns));
		if (!ns_exists(ns) || run(1, "ip -n %s link show dev data0", ns) ||
		    run(1, "ip -n %s link show dev ctl0", ns))
			return 0;
	}
	return 1;
}

int hw_rig_up(const hw_cluster *c)
{
	if (hw_rig_complete(c))
		return 0;
	/* partial leftovers of a crashed `up`: start from nothing */
	int rc = hw_rig_down(c->dir);
	if (rc)
		return rc;
	char sw[32];
	hw_rig_ns_name(c, HW_RIG_SWITCH_NODE, sw, sizeof(sw));
	rc = make_ns(sw);
	/* STP off (the default) and no forward delay: ports forward at once */
	if (!rc)
		rc = run(0, "ip -n %s link add name brc type bridge forward_delay 0", sw);
	if (!rc)
		rc = run(0, "ip -n %s link add name brd mtu %d type bridge forward_delay 0", sw, data_mtu(c));
	if (!rc)
		rc = run(0, "ip -n %s link set dev brc up", sw);
	if (!rc)
		rc = run(0, "ip -n %s link set dev brd up", sw);
	int q = hw_rig_reactors(c);
	for (int node = 0; !rc && node <= c->brokers; node++)
		rc = plug(c, node, node == 0 ? 1 : q);
	if (!rc)
		rc = plug(c, HW_RIG_CLIENT_NODE, hw_rig_client_queues(c));
	if (rc) {
		hw_cli_err("rig: building the namespaces failed; removing what was made");
		hw_rig_down(c->dir);
	}
	return rc;
}

int hw_rig_down(const char *dir)
{
	char tag[8], prefix[16];
	hw_rig_tag(dir, tag);
	snprintf(prefix, sizeof(prefix), "hwr%s-", tag);
	DIR *d = opendir(NETNS_DIR);
	if (!d)
		return 0; /* no namespace was ever made */
	char names[64][32];
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < 64;)
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && strlen(e->d_name) < 32)
			snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
	closedir(d);
	int rc = 0;
	for (int i = 0; i < n; i++)
		if (run(0, "ip netns del %s", names[i]))
			rc = -EIO;
	return rc;
}

/* ---- configuration ------------------------------------------------------ */

static const char *port_driver(const char *port)
{
#define HW_RIG_PORT_DRV(n, drv) if (!strcmp(port, #n)) return drv;
	HW_RIG_PORT_TABLE(HW_RIG_PORT_DRV)
#undef HW_RIG_PORT_DRV
	return NULL;
}

/* EAL arguments for a process in node's namespace, its DPDK port on data0
 * with `queues` queue pairs. File prefixes are per rig and node ("hwr<tag>-
 * n<id>", client "hwr<tag>-cl"), so `cluster down --purge` can find them. */
static int eal_args(const hw_cluster *c, int node, int queues, char *buf, size_t cap)
{
	char ns[32];
	hw_rig_ns_name(c, node, ns, sizeof(ns));
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t off = 0;
	hw_cli_appendf(buf, cap, &off, "--no-huge -m 512 --no-pci --no-telemetry --file-prefix=%s "
		"--lcores=0@(0-%ld) --log-level=pmd.net.af_packet:error", ns, ncpu > 1 ? ncpu - 1 : 0);
	const char *drv = port_driver(c->rig_port);
	if (!strcmp(c->rig_port, "af_packet"))
		/* jumbo: a ring frame holds a 9000-byte MTU frame (9022 bytes
		 * with Ethernet/VLAN/CRC) plus the PMD's 32-byte TPACKET header;
		 * framesz a multiple of 16, <= blocksz, a multiple of the page
		 * (drivers/net/README.md "MTU"); qdisc_bypass=0: the PMD's
		 * default bypasses the interface's qdisc on TX, which would send
		 * the node's frames past `cluster netem` */
		hw_cli_appendf(buf, cap, &off, " --vdev=%s0,iface=data0,qpairs=%d,framesz=10240,blocksz=20480,"
			"qdisc_bypass=0", drv, queues);
	else if (!strcmp(c->rig_port, "af_xdp"))
		hw_cli_appendf(buf, cap, &off, " --vdev=%s0,iface=data0,start_queue=0,queue_count=%d", drv, queues);
	else if (!strcmp(c->rig_port, "tap"))
		/* the rig made dtap0 (persistent, multi-queue), mirred to data0 */
		hw_cli_appendf(buf, cap, &off, " --vdev=%s0,iface=dtap0,persist", drv);
	return off >= cap ? -ENOSPC : 0;
}

int hw_rig_render_node(const hw_cluster *c, int node, char *buf, size_t cap, size_t *off)
{
	char ip[24], ctl0[24];
	const int is_ctl = node == 0, udp = !strcmp(c->rig_port, "udp");
	hw_rig_ctl_ip(0, ctl0, sizeof(ctl0));
	hw_rig_ctl_ip(node, ip, sizeof(ip));
	hw_cli_appendf(buf, cap, off, "# rig netns: namespace hwr%s-n%d, port %s\n", c->rig_tag, node,
		c->rig_port);
	hw_cli_appendf(buf, cap, off, "controller.quorum.voters=0@%s:%d\n", ctl0, hw_cluster_control_port(c, 0));
	hw_cli_appendf(buf, cap, off, "hiwater.control.listen=udp:%s:%d\n", ip, hw_cluster_control_port(c, node));
	hw_cli_appendf(buf, cap, off, "hiwater.metrics.port=%d\n", hw_cluster_metrics_port(c, node));
	if (is_ctl)
		return *off >= cap ? -ENOSPC : 0;
	hw_cli_appendf(buf, cap, off, "hiwater.transport=%s\n", udp ? "udp" : "dpdk");
	if (udp) {
		hw_rig_data_ip(node, ip, sizeof(ip));
		hw_cli_appendf(buf, cap, off, "hiwater.data.listen=udp:%s:%d\n", ip, c->base_port + 100 + node);
		for (int p = 1; p <= c->brokers; p++) {
			if (p == node)
				continue;
			hw_rig_data_ip(p, ip, sizeof(ip));
			hw_cli_appendf(buf, cap, off, "hiwater.neighbour.%d=udp:%s:%d\n", p, ip, c->base_port + 100 + p);
		}
		return *off >= cap ? -ENOSPC : 0;
	}
	char eal[1024];
	int q = hw_rig_reactors(c);
	int rc = eal_args(c, node, q, eal, sizeof(eal));
	if (rc)
		return rc;
	hw_cli_appendf(buf, cap, off, "dpdk.eal.args=%s\n", eal);
	hw_rig_dpdk_ip(node, ip, sizeof(ip));
	hw_cli_appendf(buf, cap, off, "hiwater.dpdk.ip=%s\n", ip);
	/* Routes to the other brokers over the one port; MACs by ARP. */
	for (int p = 1; p <= c->brokers; p++) {
		if (p == node)
			continue;
		hw_rig_dpdk_ip(p, ip, sizeof(ip));
		if (q > 1)
			hw_cli_appendf(buf, cap, off, "hiwater.neighbour.%d=dpdk:port=%s0,ip=%s,queues=%d\n", p,
				port_driver(c->rig_port), ip, q);
		else
			hw_cli_appendf(buf, cap, off, "hiwater.neighbour.%d=dpdk:port=%s0,ip=%s\n", p,
				port_driver(c->rig_port), ip);
	}
	return *off >= cap ? -ENOSPC : 0;
}

void hw_rig_client_properties_path(const hw_cluster *c, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/client.properties", c->dir);
}

void hw_rig_bootstrap(const hw_cluster *c, char *buf, size_t cap)
{
	char ip[24];
	hw_rig_ctl_ip(0, ip, sizeof(ip));
	snprintf(buf, cap, "%s:%d", ip, hw_cluster_control_port(c, 0));
}

int hw_rig_write_client_files(const hw_cluster *c)
{
	char buf[2048], path[PATH_MAX], ip[24], eal[1024];
	size_t off = 0;
	const int udp = !strcmp(c->rig_port, "udp");
	hw_cli_appendf(buf, sizeof(buf), &off,
		"# --command-config for a client in namespace hwr%s-cl (written by\n"
		"# `hiwater cluster up --rig netns`): `ip netns exec hwr%s-cl hiwater produce\n"
		"# --bootstrap-server $(cat bootstrap) --command-config client.properties ...`\n",
		c->rig_tag, c->rig_tag);
	hw_cli_appendf(buf, sizeof(buf), &off, "cluster.id=%u\n", c->cluster_id);
	if (hw_cluster_auth_none(c)) {
		hw_cli_appendf(buf, sizeof(buf), &off, "hiwater.auth=none\n");
	} else {
		char sp[PATH_MAX];
		hw_cluster_secret_path(c, sp, sizeof(sp));
		hw_cli_appendf(buf, sizeof(buf), &off, "hiwater.cluster.secret.file=%s\n", sp);
	}
	hw_cli_appendf(buf, sizeof(buf), &off, "hiwater.transport=%s\n", udp ? "udp" : "dpdk");
	hw_rig_ctl_ip(HW_RIG_CLIENT_NODE, ip, sizeof(ip));
	hw_cli_appendf(buf, sizeof(buf), &off, "hiwater.control.listen=udp:%s:0\n", ip);
	if (udp) {
		hw_rig_data_ip(HW_RIG_CLIENT_NODE, ip, sizeof(ip));
		hw_cli_appendf(buf, sizeof(buf), &off, "hiwater.data.listen=udp:%s:0\n", ip);
	} else {
		int rc = eal_args(c, HW_RIG_CLIENT_NODE, hw_rig_client_queues(c), eal, sizeof(eal));
		if (rc)
			return rc;
		hw_cli_appendf(buf, sizeof(buf), &off, "dpdk.eal.args=%s\n", eal);
		hw_rig_dpdk_ip(HW_RIG_CLIENT_NODE, ip, sizeof(ip));
		hw_cli_appendf(buf, sizeof(buf), &off, "hiwater.dpdk.ip=%s\n", ip);
		hw_cli_appendf(buf, sizeof(buf), &off, "hiwater.dpdk.port=%s0\n", port_driver(c->rig_port));
	}
	if (off >= sizeof(buf))
		return -ENOSPC;
	hw_rig_client_properties_path(c, path, sizeof(path));
	int rc = hw_cli_write_file(path, buf, off);
	if (rc)
		return rc;
	char boot[64];
	hw_rig_bootstrap(c, boot, sizeof(boot));
	int n = snprintf(buf, sizeof(buf), "%s\n", boot);
	snprintf(path, sizeof(path), "%s/bootstrap", c->dir);
	return hw_cli_write_file(path, buf, (size_t)n);
}

/* ---- entering a namespace ----------------------------------------------- */

int hw_rig_enter(const hw_cluster *c, int node)
{
	char ns[32], path[PATH_MAX];
	hw_rig_ns_name(c, node, ns, sizeof(ns));
	snprintf(path, sizeof(path), NETNS_DIR "/%s", ns);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return rc;
}

int hw_rig_enter_client(const hw_cluster *c)
{
	int rc = hw_rig_enter(c, HW_RIG_CLIENT_NODE);
	if (rc)
		hw_cli_err("cannot enter the client namespace hwr%s-cl: %s%s", c->rig_tag, strerror(-rc),
			   rc == -ENOENT ? " (is the rig up? `hiwater cluster up`)" : "");
	return rc;
}

/* ---- faults ------------------------------------------------------------- */

/* ---- netem, or its emulation on kernels without sch_netem --------------
 *
 * Some kernels are built without CONFIG_NET_SCH_NETEM (this project's CI VM
 * is). There the rig emulates the two impairments its tests use with what
 * such kernels do have: an HTB root qdisc whose classifier is a classic BPF
 * program drawing a random number per frame (cls_bpf, SKF_AD_RANDOM):
 *   class 1:30  loss P%: a pfifo of limit 0, which drops every frame given
 *               to it (counted in the qdisc's "dropped");
 *   class 1:20  reorder Q%: frames shaped to a rate at which a 1 KiB frame
 *               takes the netem delay D (default 100 us) to leave, so they
 *               fall behind the frames sent after them;
 *   class 1:10  everything else, unshaped.
 * Frames are really dropped and reordered by the kernel on the node's link;
 * what netem's delay would add to every frame is not emulated (netem
 * "delay D reorder Q%" delays the others by D and sends Q% at once — the
 * emulation holds the Q% back instead: the same reordering). Other netem
 * options are refused there. */

/* Percent value "5%" / "5" -> fraction of 2^32 (saturating). -EINVAL. */
static int pct_threshold(const char *v, uint64_t *out)
{
	char *end;
	double p = strtod(v, &end);
	if (end == v || (*end && strcmp(end, "%")) || p < 0 || p > 100)
		return -EINVAL;
	double t = p / 100.0 * 4294967296.0;
	*out = t >= 4294967295.0 ? 4294967295u : (uint64_t)t;
	return 0;
}

/* "100us", "1ms", "0.5ms" -> ns. -EINVAL. */
static int netem_time_ns(const char *v, double *ns)
{
	char *end;
	double t = strtod(v, &end);
	if (end == v || t < 0)
		return -EINVAL;
	if (!strcmp(end, "us") || !strcmp(end, "usec"))
		t *= 1e3;
	else if (!strcmp(end, "ms") || !strcmp(end, "msec"))
		t *= 1e6;
	else if (!strcmp(end, "s") || !strcmp(end, "sec"))
		t *= 1e9;
	else if (strcmp(end, "ns") && strcmp(end, "nsec"))
		return -EINVAL;
	*ns = t;
	return 0;
}

static int emulate(const char *ns, const char *dev, const char *args)
{
	uint64_t loss = 0, reorder = 0;
	double delay_ns = 100000;
	char copy[512];
	snprintf(copy, sizeof(copy), "%s", args);
	for (char *save, *k = strtok_r(copy, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		char *v = strtok_r(NULL, " ", &save);
		int bad = !v;
		if (!bad && !strcmp(k, "loss"))
			bad = pct_threshold(v, &loss);
		else if (!bad && !strcmp(k, "reorder"))
			bad = pct_threshold(v, &reorder);
		else if (!bad && !strcmp(k, "delay"))
			bad = netem_time_ns(v, &delay_ns) || delay_ns < 1000;
		else
			bad = 1;
		if (bad) {
			hw_cli_err("rig: without the kernel's netem only 'loss P%%', 'reorder Q%%' and "
				   "'delay T' (the reorder gap) are emulated; not '%s%s%s'", k, v ? " " : "",
				   v ? v : "");
			return -EINVAL;
		}
	}
	uint64_t t2 = loss + reorder > 4294967295u ? 4294967295u : loss + reorder;
	/* 1 KiB takes delay_ns to leave the reorder class */
	unsigned long kbit = (unsigned long)(1024.0 * 8 / (delay_ns / 1e9) / 1000);
	int rc = run(0, "tc -n %s qdisc replace dev %s root handle 1: htb default 10 r2q 1000", ns, dev);
	if (!rc)
		rc = run(0, "tc -n %s class add dev %s parent 1: classid 1:10 htb rate 10gbit quantum 60000", ns, dev);
	if (!rc)
		rc = run(0, "tc -n %s class add dev %s parent 1: classid 1:20 htb rate %lukbit ceil %lukbit "
			 "burst 1600 cburst 1600", ns, dev, kbit ? kbit : 1, kbit ? kbit : 1);
	if (!rc)
		rc = run(0, "tc -n %s class add dev %s parent 1: classid 1:30 htb rate 10gbit quantum 60000", ns, dev);
	if (!rc)
		rc = run(0, "tc -n %s qdisc add dev %s parent 1:30 handle 30: pfifo limit 0", ns, dev);
	/* A = random; A < loss: 1:30; A < loss + reorder: 1:20; else 1:10
	 * (jge k jt jf: 0x35; ret k: 0x06; ld rand: 0x20 at SKF_AD_OFF + 56) */
	char code[256];
	snprintf(code, sizeof(code), "6,32 0 0 4294963256,53 1 0 %" PRIu64 ",6 0 0 65584,53 1 0 %" PRIu64
		 ",6 0 0 65568,6 0 0 65552", loss, t2);
	char nsa[32], deva[16];
	snprintf(nsa, sizeof(nsa), "%s", ns);
	snprintf(deva, sizeof(deva), "%s", dev);
	char *argv[] = {"tc", "-n", nsa, "filter", "add", "dev", deva, "parent", "1:", "protocol", "all",
			"prio", "1", "bpf", "bytecode", code, NULL};
	if (!rc && run_argv(argv, 0)) {
		hw_cli_err("rig: tc refused the BPF classifier '%s'", code);
		rc = -EIO;
	}
	return rc;
}

static void netem_state_path(const hw_cluster *c, int node, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/node-%d/netem", c->dir, node);
}

int hw_rig_netem(const hw_cluster *c, int node, const char *args)
{
	if (!hw_cluster_node_valid(c, node))
		return -EINVAL;
	char sw[32], ns[32], se[16], state[PATH_MAX];
	hw_rig_ns_name(c, HW_RIG_SWITCH_NODE, sw, sizeof(sw));
	hw_rig_ns_name(c, node, ns, sizeof(ns));
	sw_end(node, 'd', se, sizeof(se));
	netem_state_path(c, node, state, sizeof(state));
	/* no qdisc there is fine: `off` is idempotent, and a new one replaces */
	run(1, "tc -n %s qdisc del dev data0 root", ns);
	run(1, "tc -n %s qdisc del dev %s root", sw, se);
	unlink(state);
	if (!strcmp(args, "off"))
		return 0;
	int rc = run(1, "tc -n %s qdisc replace dev data0 root netem %s", ns, args);
	const char *how = "netem";
	if (!rc) {
		rc = run(0, "tc -n %s qdisc replace dev %s root netem %s", sw, se, args);
	} else if (run(1, "tc -n %s qdisc add dev lo root netem delay 1us", ns) == 0) {
		/* the kernel has netem: it refused these args */
		run(1, "tc -n %s qdisc del dev lo root", ns);
		rc = run(0, "tc -n %s qdisc replace dev data0 root netem %s", ns, args);
	} else {
		how = "emulated (no sch_netem in this kernel: htb + BPF classifier)";
		hw_cli_info("rig: this kernel has no netem qdisc; emulating '%s' with htb and a BPF classifier",
			    args);
		rc = emulate(ns, "data0", args);
		if (!rc)
			rc = emulate(sw, se, args);
	}
	if (rc) {
		run(1, "tc -n %s qdisc del dev data0 root", ns);
		run(1, "tc -n %s qdisc del dev %s root", sw, se);
		return rc == -EINVAL ? -EINVAL : -EIO;
	}
	char line[600];
	int n = snprintf(line, sizeof(line), "%s [%s]\n", args, how);
	return hw_cli_write_file(state, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1));
}

int hw_rig_partition(const hw_cluster *c, int node, int on)
{
	if (!hw_cluster_node_valid(c, node))
		return -EINVAL;
	char sw[32], se[16];
	hw_rig_ns_name(c, HW_RIG_SWITCH_NODE, sw, sizeof(sw));
	int rc = 0;
	for (const char *pl = "cd"; *pl && !rc; pl++) {
		sw_end(node, *pl, se, sizeof(se));
		rc = run(0, "ip -n %s link set dev %s %s", sw, se, on ? "down" : "up");
	}
	return rc;
}

/* First line of `cmd` output, or "" (the status probes). */
static void capture(char *out, size_t cap, const char *cmd)
{
	out[0] = 0;
	FILE *f = popen(cmd, "r");
	if (!f)
		return;
	if (fgets(out, (int)cap, f))
		out[strcspn(out, "\n")] = 0;
	pclose(f);
}

void hw_rig_node_status(const hw_cluster *c, int node, char *buf, size_t cap)
{
	char ns[32], sw[32], se[16], ctl[24], data[24], q[160], link[64], cmd[256];
	hw_rig_ns_name(c, node, ns, sizeof(ns));
	hw_rig_ns_name(c, HW_RIG_SWITCH_NODE, sw, sizeof(sw));
	sw_end(node, 'd', se, sizeof(se));
	hw_rig_ctl_ip(node, ctl, sizeof(ctl));
	if (!strcmp(c->rig_port, "udp") || node == 0)
		hw_rig_data_ip(node, data, sizeof(data));
	else
		hw_rig_dpdk_ip(node, data, sizeof(data));
	if (!ns_exists(ns)) {
		snprintf(buf, cap, "ns=%s MISSING", ns);
		return;
	}
	snprintf(cmd, sizeof(cmd), "ip -n %s -o link show dev %s 2>/dev/null | grep -o 'state [A-Z]*'", sw, se);
	capture(link, sizeof(link), cmd);
	char state[PATH_MAX], *text = NULL;
	netem_state_path(c, node, state, sizeof(state));
	q[0] = 0;
	if (!hw_cli_read_file(state, &text, NULL)) {
		text[strcspn(text, "\n")] = 0;
		snprintf(q, sizeof(q), "netem=%s", text);
		free(text);
	}
	snprintf(buf, cap, "ns=%s ctl=%s data=%s%s link=%s%s%s", ns, ctl,
		 node == 0 ? "-" : data, node == 0 ? "" : (!strcmp(c->rig_port, "udp") ? "(udp)" : "(dpdk)"),
		 strstr(link, "DOWN") ? "PARTITIONED" : "up", q[0] ? " " : "", q);
}
