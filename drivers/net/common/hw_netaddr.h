/* hw_netaddr.h — addresses that work across hosts: what a node advertises
 * (registers with the controller, prints in its ready line) and how a
 * registered DPDK data endpoint becomes a route.
 *
 * Design note. A node listens on `hiwater.control.listen` /
 * `hiwater.data.listen` and tells others to reach it at the ADVERTISED
 * endpoint (Kafka's `listeners` vs `advertised.listeners`). The default is
 * the listen address itself; a wildcard host (0.0.0.0) is not an address
 * anyone can send to, so then the host is the local address the kernel
 * picks toward the controller (a connected UDP socket and getsockname: no
 * packet is sent), i.e. the address of the interface peers reach us on in
 * a one-subnet rig. A port 0 (ephemeral) is replaced by the bound port.
 *
 * A DPDK broker registers `dpdk:ip=A.B.C.D,udp=BASE,queues=N`: its IPv4
 * address on the DPDK port, the UDP base port (reactor k listens on BASE+k)
 * and its reactor count. A peer turns that into its neighbour route by
 * naming the local port the route goes through:
 * `dpdk:port=<P>,ip=A.B.C.D,udp=BASE,queues=N` (hw_dpdk_add_neighbour).
 *
 * Error contract: 0 or a negative errno; out buffers are always
 * NUL-terminated when cap > 0.
 */
#ifndef HW_NETADDR_H
#define HW_NETADDR_H
#include <stddef.h>
#include <stdint.h>

/* The local IPv4 address the kernel would send from toward `peer`
 * ("udp:HOST:PORT"), as text into host. -EINVAL (bad peer), -errno of
 * socket/connect (-ENETUNREACH: no route). */
int hw_netaddr_local_toward(const char *peer, char *host, size_t cap);

/* The endpoint to advertise, "udp:HOST:PORT", into out:
 *   host: advertised's host unless empty/wildcard, else listen's unless
 *         wildcard, else hw_netaddr_local_toward(toward);
 *   port: advertised's port unless 0, else bound_port.
 * listen and advertised are "udp:HOST:PORT" (advertised may be "" or NULL).
 * -EINVAL (bad endpoint strings), -ENOSPC, or the errors of
 * hw_netaddr_local_toward (only consulted for a wildcard host). */
int hw_netaddr_advertise(const char *listen, const char *advertised, uint16_t bound_port,
			 const char *toward, char *out, size_t cap);

/* 1 if ep ("udp:HOST:PORT") has the wildcard host 0.0.0.0, else 0. */
int hw_netaddr_is_wildcard(const char *ep);

/* The data endpoint a DPDK broker registers into out:
 * "dpdk:ip=A.B.C.D,udp=BASE,queues=N". ip in network order. -EINVAL
 * (udp_base 0, queues < 1), -ENOSPC. */
int hw_netaddr_dpdk_registration(uint32_t ip, uint16_t udp_base, int queues, char *out, size_t cap);

/* A neighbour route through local port `port` (vdev name or port id) to a
 * registered DPDK endpoint `reg` ("dpdk:ip=..,udp=..[,queues=N]"), into
 * out: "dpdk:port=<port>,ip=..,udp=..[,queues=N]"; with_queues 0 leaves
 * the queues= field out (a parser that does not know it yet). -EINVAL
 * (reg not "dpdk:..." or without ip=, bad port), -ENOSPC. The fields
 * themselves are validated by hw_endpoint_parse when the route is added. */
int hw_netaddr_dpdk_route(const char *reg, const char *port, int with_queues, char *out, size_t cap);

/* `hiwater.dpdk.port` when unset: the only DPDK port of this process
 * (EAL up), as its ethdev port id in text. -ENODEV (no port), -EEXIST
 * (several ports: the key is required then). */
int hw_netaddr_dpdk_default_port(char *out, size_t cap);

/* bind(2) that waits out a port still held by this node's previous run.
 * A SIGKILLed process's io_uring receives (and accepts) keep their socket
 * open until the kernel's asynchronous ring teardown has cancelled them,
 * which on a loaded machine can outlast the process by seconds; a restart
 * in that window gets EADDRINUSE. On EADDRINUSE this retries every 20 ms
 * for up to wait_ms, logging one WARN (what: the endpoint's role, for the
 * message) and, if it then binds, one INFO with the time it waited.
 * 0, or the negative errno of the last bind (-EADDRINUSE after wait_ms:
 * some other live process holds the port). */
int hw_netaddr_bind_wait(int fd, const void *addr, unsigned addrlen, int wait_ms, const char *what);

/* How long the daemon's listeners wait in hw_netaddr_bind_wait. */
#define HW_NETADDR_BIND_WAIT_MS 10000

#endif
