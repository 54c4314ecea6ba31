/* hw_dpdk_local.c — EAL arguments and neighbours of a local memif
 * cluster (hw_dpdk_local_cluster_args, hw_dpdk.h). */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include "hw_dpdk.h"

static int peer_kind_name(int32_t node, int n_brokers, int n_slots, char *out, size_t cap)
{
	if (node >= 1 && node <= n_brokers)
		return snprintf(out, cap, "b%d", node);
	if (node >= HW_CLIENT_NODE_BASE && node < HW_CLIENT_NODE_BASE + n_slots)
		return snprintf(out, cap, "c%d", node - HW_CLIENT_NODE_BASE);
	return -EINVAL;
}

int hw_dpdk_local_cluster_args(const char *dir, int32_t self_id, int n_brokers, int n_client_slots,
			       int mem_mb, char *eal_args, size_t eal_cap,
			       hw_dpdk_local_peer *peers, int peers_cap, int *n_peers)
{
	char me[16], pn[16];
	if (!dir || !eal_args || n_brokers < 1 || n_brokers > 64 || n_client_slots < 0 || n_client_slots > 64 ||
	    peer_kind_name(self_id, n_brokers, n_client_slots, me, sizeof me) < 0)
		return -EINVAL;
	if (mem_mb <= 0)
		mem_mb = 256;
	uint32_t h = 2166136261u;   /* FNV-1a of dir: distinct clusters, distinct prefixes */
	for (const char *c = dir; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	size_t off = 0;
	int n = snprintf(eal_args, eal_cap,
			 "--no-huge -m %d --no-pci --no-telemetry --file-prefix=hw%08x-%s --lcores=0@(0-%ld) "
			 "--log-level=pmd.net.memif:error",
			 mem_mb, h, me, ncpu - 1);
	if (n < 0 || (size_t)n >= eal_cap)
		return -ENOSPC;
	off = (size_t)n;
	int np = 0;
	int is_client = self_id >= HW_CLIENT_NODE_BASE;
	int total = n_brokers + n_client_slots;
	for (int idx = 0; idx < total; idx++) {
		int32_t peer = idx < n_brokers ? idx + 1 : HW_CLIENT_NODE_BASE + (idx - n_brokers);
		if (peer == self_id)
			continue;
		int peer_client = peer >= HW_CLIENT_NODE_BASE;
		if (is_client && peer_client)
			continue;                 /* clients link to brokers only */
		char sock[256];
		const char *role;
		if (!is_client && !peer_client) {
			int lo = self_id < peer ? self_id : peer, hi = self_id < peer ? peer : self_id;
			n = snprintf(sock, sizeof sock, "%s/memif-b%d-b%d.sock", dir, lo, hi);
			role = self_id == lo ? "server" : "client";
		} else if (!is_client) {
			n = snprintf(sock, sizeof sock, "%s/memif-b%d-c%d.sock", dir, self_id,
				     peer - HW_CLIENT_NODE_BASE);
			role = "server";
		} else {
			n = snprintf(sock, sizeof sock, "%s/memif-b%d-c%d.sock", dir, peer,
				     self_id - HW_CLIENT_NODE_BASE);
			role = "client";
		}
		if (n < 0 || (size_t)n >= 108)
			return -ENAMETOOLONG;
		peer_kind_name(peer, n_brokers, n_client_slots, pn, sizeof pn);
		n = snprintf(eal_args + off, eal_cap - off, " --vdev=net_memif_%s,role=%s,bsize=65535,rsize=9,socket=%s,socket-abstract=no",
			     pn, role, sock);
		if (n < 0 || (size_t)n >= eal_cap - off)
			return -ENOSPC;
		off += (size_t)n;
		if (peers) {
			if (np >= peers_cap)
				return -ENOSPC;
			peers[np].node = peer;
			snprintf(peers[np].endpoint, sizeof peers[np].endpoint, "dpdk:port=net_memif_%s,ip=10.77.0.%d",
				 pn, (int)(peer & 255));
		}
		np++;
	}
	if (n_peers)
		*n_peers = np;
	return 0;
}
