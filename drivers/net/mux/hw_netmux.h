/* hw_netmux.h — an hw_net that routes each message by destination node id
 * to the transport that reaches it.
 *
 * A broker has two planes: the control plane (kernel UDP on 127.0.0.1:
 * controller, brokers, admin CLI) and the data plane (DPDK or kernel UDP:
 * produce, fetch, replication). The engine sends through one hw_net; the mux
 * picks the transport: an explicit route for the node (hw_netmux_route),
 * else a per-message-type choice (hw_netmux_route_type, or every type of a
 * plane at once: hw_netmux_route_plane reads the plane column of
 * HW_MSG_TABLE, engine/iface/hw_msg.h), else the default.
 * Routes are set up before traffic starts; the mux is owned by one reactor.
 */
#ifndef HW_NETMUX_H
#define HW_NETMUX_H
#include "hw_net.h"

typedef struct hw_netmux hw_netmux;

/* NULL on -ENOMEM. `dflt` may be NULL (then unrouted sends fail). */
hw_netmux *hw_netmux_create(hw_net *dflt);
void hw_netmux_destroy(hw_netmux *x);
hw_net *hw_netmux_net(hw_netmux *x);

/* Node route wins over type route, type route over the default.
 * 0, -EINVAL (bad type / NULL), -ENOSPC (node table full). */
int hw_netmux_route(hw_netmux *x, int32_t node, hw_net *via);
int hw_netmux_route_type(hw_netmux *x, int msg_type, hw_net *via);
/* Route every type whose HW_MSG_TABLE plane is `plane` (hw_msg_plane) to
 * `via`. 0, -EINVAL (bad plane / NULL). */
int hw_netmux_route_plane(hw_netmux *x, int plane, hw_net *via);
/* hw_netmux_route_plane(x, HW_PLANE_CONTROL, control). */
int hw_netmux_route_control_types(hw_netmux *x, hw_net *control);

/* Counters: sends per outcome. */
typedef struct hw_netmux_stats {
	uint64_t by_node, by_type, by_default, unroutable;
} hw_netmux_stats;
const hw_netmux_stats *hw_netmux_get_stats(const hw_netmux *x);

#endif
