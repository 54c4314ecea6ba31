/* hw_netconf.h — what every transport in drivers/net shares: the inbound
 * callback, endpoint strings, the zero-copy hold hooks, and the config keys.
 *
 * ---- Config keys (server.properties; the broker/CLI parse them and pass
 * the values to hw_udp_create / hw_dpdk_create / the mux) -----------------
 *
 *   hiwater.transport=dpdk|udp           data-plane transport (default udp)
 *   dpdk.eal.args=...                    EAL arguments, whitespace separated,
 *                                        e.g. "--no-huge -m 512 --no-pci
 *                                        --file-prefix=b1 --vdev=net_memif0,..."
 *   hiwater.data.listen=udp:127.0.0.1:PORT
 *                                        data-plane socket (udp transport)
 *   hiwater.control.listen=udp:127.0.0.1:PORT
 *                                        control-plane socket (every process)
 *   hiwater.neighbour.<nodeid>=udp:HOST:PORT
 *   hiwater.neighbour.<nodeid>=dpdk:port=<vdev name|port id>[,mac=aa:bb:..][,ip=A.B.C.D][,udp=N][,queues=Q]
 *                                        data-plane route to a node; Q: its
 *                                        reactor count (default 1): our
 *                                        reactor k sends to its UDP port
 *                                        N + (k mod Q)
 *   hiwater.control.neighbour.<nodeid>=udp:HOST:PORT
 *                                        control-plane route to a node
 *   hiwater.dpdk.ip=A.B.C.D              our IPv4 address on DPDK ports
 *                                        (default 10.77.0.<node id & 255>)
 *   hiwater.dpdk.udp.port=N              the BASE UDP port on DPDK ports (default
 *                                        9092): reactor k listens on and sends
 *                                        from BASE + k
 *   hiwater.cluster.id=N                 u32 stamped into every frame
 *
 * Clients that are not configured neighbours are learned: a reply goes
 * back where the request came from (UDP source address, or DPDK port + MAC
 * + IP + UDP port of the request).
 */
#ifndef HW_NETCONF_H
#define HW_NETCONF_H
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hw_msg.h"

/* Inbound: a transport calls this for every decoded message. The message
 * and everything it points to is valid for the call only. */
typedef void (*hw_net_on_msg_fn)(void *ctx, const hw_msg *m);

/* Zero-copy holds. A fetch response part with records_ref != NULL may be
 * sent by reference: the transport calls hold(ref) for each frame that
 * references the records and release(ref) when the NIC/kernel is done with
 * it (release may run on any thread). Given to each transport instance in
 * its config (hw_dpdk_cfg.ref_ops: the broker passes the log's,
 * hw_log_ref_hold / hw_log_ref_release). With no hooks (hold == NULL) the
 * transport copies. */
typedef struct hw_net_ref_ops {
	void (*hold)(void *ref);
	void (*release)(void *ref);
} hw_net_ref_ops;

/* ---- endpoints */
#define HW_EP_KIND_TABLE(X) X(UDP) X(DPDK)
typedef enum hw_ep_kind {
#define HW_EP_ENUM(n) HW_EP_##n,
	HW_EP_KIND_TABLE(HW_EP_ENUM)
#undef HW_EP_ENUM
} hw_ep_kind;

typedef struct hw_endpoint {
	hw_ep_kind kind;
	struct sockaddr_in udp;        /* HW_EP_UDP */
	/* HW_EP_DPDK */
	char port[64];                 /* vdev name ("net_memif0") or port id ("0") */
	uint8_t mac[6];
	uint8_t has_mac;
	uint32_t ip;                   /* network byte order; 0: unset */
	uint16_t udp_port;             /* host order; 0: unset (the BASE port of the peer) */
	uint16_t queues;               /* the peer's reactor count, 1..HW_EP_MAX_QUEUES;
					* 0: unset (= 1) */
} hw_endpoint;

#define HW_EP_MAX_QUEUES 255

/* Parse "udp:HOST:PORT" (HOST an IPv4 literal or "localhost") or
 * "dpdk:[port=P][,mac=..][,ip=..][,udp=N][,queues=Q]" with at least port= or
 * ip= (a broker's registered data endpoint, "dpdk:ip=A.B.C.D,udp=N,queues=Q",
 * names no port: the receiver picks its own). Q is 1..HW_EP_MAX_QUEUES and
 * N + Q - 1 must be a UDP port (every reactor's port exists). A repeated
 * key: the last one counts. 0 or -EINVAL. */
int hw_endpoint_parse(const char *s, hw_endpoint *out);
/* Format back into buf (always NUL-terminated). Returns chars written or -ENOSPC. */
int hw_endpoint_format(const hw_endpoint *ep, char *buf, size_t cap);

/* ---- node id -> slot index, for neighbour tables (open addressing, fixed
 * capacity, no deletion: configured + learned nodes of one process). */
#define HW_NODEMAP_CAP 1024
typedef struct hw_nodemap {
	int32_t key[HW_NODEMAP_CAP];
	uint8_t used[HW_NODEMAP_CAP];
	uint32_t n;
} hw_nodemap;

/* Slot of `node`, or -ENOENT; with create, inserts (-ENOSPC when full).
 * *created (may be NULL) says whether it was inserted now. */
static inline int hw_nodemap_slot(hw_nodemap *m, int32_t node, int create, int *created)
{
	uint32_t h = ((uint32_t)node * 2654435761u) % HW_NODEMAP_CAP;
	if (created)
		*created = 0;
	for (uint32_t i = 0; i < HW_NODEMAP_CAP; i++) {
		uint32_t s = (h + i) % HW_NODEMAP_CAP;
		if (m->used[s] && m->key[s] == node)
			return (int)s;
		if (!m->used[s]) {
			if (!create || m->n >= HW_NODEMAP_CAP * 3 / 4)
				return create ? -ENOSPC : -ENOENT;
			m->used[s] = 1;
			m->key[s] = node;
			m->n++;
			if (created)
				*created = 1;
			return (int)s;
		}
	}
	return create ? -ENOSPC : -ENOENT;
}

/* Open addressing has no delete: rebuild m with only the slots whose
 * keep[s] is non-zero. new_slot[s] receives where kept slot s went (-1 for a
 * dropped one), so the caller moves its per-slot data (from a copy: new and
 * old slots overlap). Used when a table fills with learned nodes (CLI
 * clients come and go with fresh ids, docs/wire.md "Node ids"). Returns the
 * number of entries dropped; never fails (the kept ones always fit). */
static inline int hw_nodemap_compact(hw_nodemap *m, const uint8_t *keep, int16_t *new_slot)
{
	static __thread hw_nodemap old;   /* 5 KiB: off the stack, per thread */
	old = *m;
	memset(m, 0, sizeof *m);
	int dropped = 0;
	for (uint32_t s = 0; s < HW_NODEMAP_CAP; s++) {
		new_slot[s] = -1;
		if (!old.used[s])
			continue;
		if (!keep[s]) {
			dropped++;
			continue;
		}
		new_slot[s] = (int16_t)hw_nodemap_slot(m, old.key[s], 1, NULL);
	}
	return dropped;
}

/* The table is full of learned nodes: compact m keeping only the slots
 * whose entry in the per-slot array `entries` (HW_NODEMAP_CAP entries of
 * `esz` bytes) has a non-zero byte at `keep_off` (the entry's `configured`
 * flag), and move the kept entries to their new slots; dropped slots'
 * entries end zeroed. `scratch` must hold HW_NODEMAP_CAP entries (the old
 * array goes there). Returns the number of entries dropped; never fails. */
static inline int hw_nodemap_forget(hw_nodemap *m, void *entries, size_t esz, size_t keep_off, void *scratch)
{
	static __thread uint8_t keep[HW_NODEMAP_CAP];
	static __thread int16_t moved[HW_NODEMAP_CAP];
	uint8_t *e = entries, *old = scratch;
	for (uint32_t s = 0; s < HW_NODEMAP_CAP; s++)
		keep[s] = e[s * esz + keep_off];
	memcpy(old, e, esz * HW_NODEMAP_CAP);
	int dropped = hw_nodemap_compact(m, keep, moved);
	memset(e, 0, esz * HW_NODEMAP_CAP);
	for (uint32_t s = 0; s < HW_NODEMAP_CAP; s++)
		if (moved[s] >= 0)
			memcpy(e + (size_t)moved[s] * esz, old + s * esz, esz);
	return dropped;
}
#endif
