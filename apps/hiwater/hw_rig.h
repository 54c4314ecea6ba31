/* hw_rig.h — `hiwater cluster up --rig netns`: a multi-host rig on one
 * machine, every node in its own network namespace.
 *
 * Design note. The rig stands in for a test rig of separate hosts: each
 * node (controller 0, brokers 1..N) and the client get a network namespace
 * with two veths, plugged into two Linux bridges of a "switch" namespace:
 *
 *   hwr<tag>-sw          bridges brc (control) and brd (data); the switch
 *                        ends of the veths: hwrc<id>/hwrd<id>, hwrccl/hwrdcl
 *   hwr<tag>-n<id>       ctl0 10.99.0.<id+1>/24 (kernel UDP control plane)
 *                        data0 (the node's "NIC": the DPDK port's interface;
 *                        with --port udp it carries 10.99.1.<id+1>/24)
 *   hwr<tag>-cl          the client: ctl0 10.99.0.200, data0 (10.99.1.200
 *                        with --port udp); DPDK IP 10.77.0.200
 *
 * Brokers' DPDK IPs are hiwaterd's default 10.77.0.<id>. The tag is four
 * hex digits of a hash of the cluster directory, so every name can be
 * derived from the directory alone: `cluster down` removes every
 * hwr<tag>-* namespace even after the CLI crashed half way through `up`,
 * and is idempotent. Deleting a namespace deletes the veths inside it (a
 * veth pair dies with either end) and the bridges, so nothing of the rig
 * ever lives in the root namespace.
 *
 * Daemons are spawned into their namespace (setns before exec); CLI
 * commands that talk to a rig cluster enter the client namespace before
 * they open sockets or the EAL (hw_rig_enter_client) and reach the cluster
 * through D/bootstrap and D/client.properties, exactly as a client on a
 * fourth host would with --bootstrap-server / --command-config.
 *
 * Faults (hw_rig_netem, hw_rig_partition) act on real links: tc netem on
 * both ends of a node's data veth, and the switch ends of both of a node's
 * veths set down for a partition.
 */
#ifndef HW_RIG_H
#define HW_RIG_H
#include <stddef.h>
#include "hw_cluster.h"

#define HW_RIG_CLIENT_NODE (-2)    /* ns / address selector for the client */
#define HW_RIG_SWITCH_NODE (-1)    /* ns selector for the switch */
#define HW_RIG_CLIENT_HOST 200     /* last octet of the client's addresses */
#define HW_RIG_CLIENT_QUEUES 4     /* client port queue pairs: `bench --producers`
				    * up to 4 (one queue per producer) */

/* X(name, dpdk vdev driver or NULL for kernel UDP) — the --port choices. */
#define HW_RIG_PORT_TABLE(X)       \
	X(af_packet, "net_af_packet") \
	X(af_xdp, "net_af_xdp")       \
	X(tap, "net_tap")             \
	X(udp, NULL)

/* 1 if name is one of HW_RIG_PORT_TABLE, else 0. */
int hw_rig_port_valid(const char *name);

/* The 4-hex-digit tag of a cluster directory (absolute path). Never fails. */
void hw_rig_tag(const char *dir, char tag[8]);

/* Namespace of node (0..brokers, HW_RIG_CLIENT_NODE, HW_RIG_SWITCH_NODE). */
void hw_rig_ns_name(const hw_cluster *c, int node, char *buf, size_t cap);

/* Kernel addresses: control plane 10.99.0.<id+1> (client .200), data plane
 * of --port udp 10.99.1.<id+1>; DPDK IP 10.77.0.<id> (client .200). */
void hw_rig_ctl_ip(int node, char *buf, size_t cap);
void hw_rig_data_ip(int node, char *buf, size_t cap);
void hw_rig_dpdk_ip(int node, char *buf, size_t cap);

/* Number of reactors per broker (from hiwater.reactor.lcores; 1 without). */
int hw_rig_reactors(const hw_cluster *c);

/* Queue pairs of the client's port: HW_RIG_CLIENT_QUEUES, 1 for af_xdp
 * (a veth offers AF_XDP one channel). Never fails. */
int hw_rig_client_queues(const hw_cluster *c);

/* Append node's rig-specific server.properties lines (addresses, transport,
 * EAL arguments, neighbour routes) at buf+*off. 0, -ENOSPC. */
int hw_rig_render_node(const hw_cluster *c, int node, char *buf, size_t cap, size_t *off);

/* Create the switch, node and client namespaces, bridges, veths and
 * addresses. Idempotent: a complete rig is left alone; an incomplete one
 * (a crash during an earlier `up`) is removed and made again, which the
 * caller must only allow when no node runs. 0, -EIO (an `ip` command
 * failed: its message printed), -ENOENT (no `ip` binary). */
int hw_rig_up(const hw_cluster *c);
/* 1 if every namespace and veth of the rig exists, else 0. */
int hw_rig_complete(const hw_cluster *c);

/* Remove every hwr<tag>-* namespace of the cluster directory dir (found by
 * listing /run/netns, so it works without cluster.properties). Idempotent.
 * 0, or -EIO when one could not be removed (still in use: message). */
int hw_rig_down(const char *dir);

/* Write D/client.properties (a --command-config for the client namespace)
 * and D/bootstrap ("HOST:PORT" of the controller's control endpoint).
 * 0 / -errno. */
int hw_rig_write_client_files(const hw_cluster *c);
/* Paths of those two files. Never fail. */
void hw_rig_client_properties_path(const hw_cluster *c, char *buf, size_t cap);
void hw_rig_bootstrap(const hw_cluster *c, char *buf, size_t cap);

/* setns(CLONE_NEWNET) of the calling thread into node's namespace (for a
 * process about to exec hiwaterd, or a CLI before any socket / EAL).
 * 0, -ENOENT (no such namespace: rig down), -errno from setns. */
int hw_rig_enter(const hw_cluster *c, int node);
/* hw_rig_enter(c, HW_RIG_CLIENT_NODE), with the error printed. */
int hw_rig_enter_client(const hw_cluster *c);

/* tc netem on node's data link, both directions (the node's data0 and the
 * switch end hwrd<id>): args as tc netem takes them ("loss 5% delay 100us
 * reorder 10%"), or "off" to remove it. 0, -EINVAL (bad node), -EIO (tc
 * refused: its message printed; e.g. a kernel without sch_netem). */
int hw_rig_netem(const hw_cluster *c, int node, const char *args);
/* Partition (on = 1) or heal (on = 0) node: the switch ends of its control
 * and data veths set down / up, so the node's ctl0 and data0 lose carrier
 * and every frame to or from it is dropped. 0, -EIO. */
int hw_rig_partition(const hw_cluster *c, int node, int on);

/* One line of rig facts for `cluster status` about node: namespace,
 * addresses, link state (up / PARTITIONED) and netem qdisc. */
void hw_rig_node_status(const hw_cluster *c, int node, char *buf, size_t cap);

#endif
