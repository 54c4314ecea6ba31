/* hw_netmux.c — route by destination node, then message type, then default. */
#include <errno.h>
#include <stdlib.h>
#include "hw_netconf.h"
#include "hw_netmux.h"

struct hw_netmux {
	hw_net net;                      /* first: container by cast */
	hw_net *dflt;
	hw_net *by_type[HW_MSG_TYPE_MAX];
	hw_nodemap map;
	hw_net *by_node[HW_NODEMAP_CAP];
	hw_netmux_stats st;
};

static int mux_send(hw_net *n, const hw_msg *m)
{
	hw_netmux *x = (hw_netmux *)n;
	int s = hw_nodemap_slot(&x->map, m->dst, 0, NULL);
	hw_net *via;
	if (s >= 0 && x->by_node[s]) {
		via = x->by_node[s];
		x->st.by_node++;
	} else if (m->type < HW_MSG_TYPE_MAX && x->by_type[m->type]) {
		via = x->by_type[m->type];
		x->st.by_type++;
	} else if (x->dflt) {
		via = x->dflt;
		x->st.by_default++;
	} else {
		x->st.unroutable++;
		return -EHOSTUNREACH;
	}
	return hw_net_send(via, m);
}

hw_netmux *hw_netmux_create(hw_net *dflt)
{
	hw_netmux *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	x->net.send = mux_send;
	x->dflt = dflt;
	return x;
}

void hw_netmux_destroy(hw_netmux *x)
{
	free(x);
}

hw_net *hw_netmux_net(hw_netmux *x)
{
	return &x->net;
}

int hw_netmux_route(hw_netmux *x, int32_t node, hw_net *via)
{
	if (!x || !via)
		return -EINVAL;
	int s = hw_nodemap_slot(&x->map, node, 1, NULL);
	if (s < 0)
		return s;
	x->by_node[s] = via;
	return 0;
}

int hw_netmux_route_type(hw_netmux *x, int msg_type, hw_net *via)
{
	if (!x || !via || msg_type <= 0 || msg_type >= HW_MSG_TYPE_MAX)
		return -EINVAL;
	x->by_type[msg_type] = via;
	return 0;
}

int hw_netmux_route_plane(hw_netmux *x, int plane, hw_net *via)
{
	if (plane < 0 || plane >= HW_PLANE__COUNT)
		return -EINVAL;
	for (int t = 1; t < HW_MSG_TYPE_MAX; t++) {
		if (hw_msg_plane_of(t) != plane)
			continue; /* another plane's row, or no row */
		int rc = hw_netmux_route_type(x, t, via);
		if (rc)
			return rc;
	}
	return 0;
}

int hw_netmux_route_control_types(hw_netmux *x, hw_net *control)
{
	return hw_netmux_route_plane(x, HW_PLANE_CONTROL, control);
}

const hw_netmux_stats *hw_netmux_get_stats(const hw_netmux *x)
{
	return &x->st;
}
