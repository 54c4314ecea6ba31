/* hw_dpdk_local.c — the local memif cluster topology (hw_dpdk.h "Local
 * memif cluster topology"): described once as a struct, rendered into EAL
 * arguments and neighbour routes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hw_dpdk.h"

/* snprintf's result: 0 when it fitted cap, else -ENOSPC. */
static int fitted(int n, size_t cap) { return n < 0 || (size_t)n >= cap ? -ENOSPC : 0; }

/* "b<j>" for a broker, "c<k>" for client slot k. */
static int node_tag(int32_t node, char *out, size_t cap)
{
	if (node >= 1 && node < HW_CLIENT_NODE_BASE)
		return fitted(snprintf(out, cap, "b%d", (int)node), cap);
	if (node >= HW_CLIENT_NODE_BASE && node < HW_CLIENT_NODE_BASE + HW_DPDK_LOCAL_MAX_NODES)
		return fitted(snprintf(out, cap, "c%d", (int)(node - HW_CLIENT_NODE_BASE)), cap);
	return -EINVAL;
}

int hw_dpdk_local_vdev_name(int32_t peer, char *buf, size_t cap)
{
	char tag[16];
	int rc = node_tag(peer, tag, sizeof tag);
	return rc ? rc : fitted(snprintf(buf, cap, "net_memif_%s", tag), cap);
}

int hw_dpdk_local_route(int32_t peer, char *buf, size_t cap)
{
	char vdev[24];
	int rc = hw_dpdk_local_vdev_name(peer, vdev, sizeof vdev);
	return rc ? rc : fitted(snprintf(buf, cap, "dpdk:port=%s,ip=10.77.0.%d", vdev, (int)(peer & 255)), cap);
}

/* The link between self and peer: its socket and our role (brokers: the
 * lower id serves; a broker serves its client slots). */
static int link_fill(const char *dir, int32_t self, int32_t peer, hw_dpdk_local_link *l)
{
	int self_client = self >= HW_CLIENT_NODE_BASE, peer_client = peer >= HW_CLIENT_NODE_BASE;
	int n;
	memset(l, 0, sizeof(*l));
	l->peer = peer;
	if (!self_client && !peer_client) {
		int32_t lo = self < peer ? self : peer, hi = self < peer ? peer : self;
		n = snprintf(l->socket, sizeof l->socket, "%s/memif-b%d-b%d.sock", dir, (int)lo, (int)hi);
		l->server = self == lo;
	} else if (!self_client) {
		n = snprintf(l->socket, sizeof l->socket, "%s/memif-b%d-c%d.sock", dir, (int)self,
			     (int)(peer - HW_CLIENT_NODE_BASE));
		l->server = 1;
	} else {
		n = snprintf(l->socket, sizeof l->socket, "%s/memif-b%d-c%d.sock", dir, (int)peer,
			     (int)(self - HW_CLIENT_NODE_BASE));
		l->server = 0;
	}
	if (n < 0 || (size_t)n >= sizeof l->socket)
		return -ENAMETOOLONG;
	return hw_dpdk_local_vdev_name(peer, l->vdev, sizeof l->vdev) ? -EINVAL : 0;
}

int hw_dpdk_local_topo_build(const char *dir, int32_t self_id, int n_brokers, int n_client_slots,
			     int mem_mb, hw_dpdk_local_topo *t)
{
	char me[16];
	if (!dir || !t || n_brokers < 1 || n_brokers > HW_DPDK_LOCAL_MAX_NODES || n_client_slots < 0 ||
	    n_client_slots > HW_DPDK_LOCAL_MAX_NODES || node_tag(self_id, me, sizeof me) ||
	    (self_id < HW_CLIENT_NODE_BASE && self_id > n_brokers) ||
	    (self_id >= HW_CLIENT_NODE_BASE && self_id >= HW_CLIENT_NODE_BASE + n_client_slots))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->self = self_id;
	t->mem_mb = mem_mb > 0 ? mem_mb : 256;
	uint32_t h = 2166136261u;   /* FNV-1a of dir: distinct clusters, distinct prefixes */
	for (const char *c = dir; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	snprintf(t->file_prefix, sizeof t->file_prefix, "hw%08x-%s", h, me);
	int is_client = self_id >= HW_CLIENT_NODE_BASE;
	for (int idx = 0; idx < n_brokers + n_client_slots; idx++) {
		int32_t peer = idx < n_brokers ? idx + 1 : HW_CLIENT_NODE_BASE + (idx - n_brokers);
		if (peer == self_id || (is_client && peer >= HW_CLIENT_NODE_BASE))
			continue;                 /* clients link to brokers only */
		int rc = link_fill(dir, self_id, peer, &t->link[t->n_links]);
		if (rc)
			return rc;
		t->n_links++;
	}
	return 0;
}

void hw_dpdk_local_topo_drop(hw_dpdk_local_topo *t, int i)
{
	if (i < 0 || i >= t->n_links)
		return;
	memmove(&t->link[i], &t->link[i + 1], (size_t)(t->n_links - i - 1) * sizeof(t->link[0]));
	t->n_links--;
}

int hw_dpdk_local_eal_args(const hw_dpdk_local_topo *t, char *buf, size_t cap)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	int n = snprintf(buf, cap,
			 "--no-huge -m %d --no-pci --no-telemetry --file-prefix=%s --lcores=0@(0-%ld) "
			 "--log-level=pmd.net.memif:error",
			 t->mem_mb, t->file_prefix, ncpu - 1);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	size_t off = (size_t)n;
	for (int i = 0; i < t->n_links; i++) {
		const hw_dpdk_local_link *l = &t->link[i];
		n = snprintf(buf + off, cap - off,
			     " --vdev=%s,role=%s,bsize=65535,rsize=9,socket=%s,socket-abstract=no", l->vdev,
			     l->server ? "server" : "client", l->socket);
		if (n < 0 || (size_t)n >= cap - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return 0;
}
