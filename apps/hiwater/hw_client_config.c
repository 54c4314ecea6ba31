/* hw_client_config.c — `--command-config FILE` parsing; see hw_client_config.h. */
#include "hw_client_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_cli.h"
#include "hw_netconf.h"
#include "hw_netconf_check.h"
#include "hw_props.h"

static const char *const transports[] = {"udp", "dpdk", NULL};
static const char *const auth_modes[] = {"aes-gcm", "none", NULL};

#define KEY(n, t, d, imp, doc_, ...)                                                              \
	{.name = n, .type = HW_PROP_##t, .def = d, .importance = HW_PROP_##imp, .doc = doc_,        \
	 .group = "Client properties (--command-config)", __VA_ARGS__},
#define RANGE(lo, hi) .ranged = 1, .min = (lo), .max = (hi)
#define UDP_EP .check = udp_ep_ok, .valid = HW_NETCONF_UDP_EP_VALID

/* The client's sockets: "udp:HOST:PORT" only (hiwaterd also takes the
 * HOST:PORT of its alias keys). */
static int udp_ep_ok(const char *v, char *why, size_t whylen)
{
	hw_endpoint e;
	if (hw_endpoint_parse(v, &e) == 0 && e.kind == HW_EP_UDP)
		return 0;
	if (whylen)
		why[0] = 0;
	return -EINVAL;
}

/* The schema, as hiwaterd's (apps/hiwaterd/hwd_config_schema.c): the
 * same names, types and validators for the keys both read. */
static const hw_prop_def defs[] = {
	KEY("cluster.id", INT64, "0", HIGH, "must be the cluster's (frames of other clusters are dropped)",
	    RANGE(0, UINT32_MAX))
	KEY("hiwater.transport", ENUM, "udp", HIGH, "the data plane", .choices = transports)
	KEY("hiwater.control.listen", STRING, "udp:0.0.0.0:0", MEDIUM, "our control socket", UDP_EP)
	KEY("hiwater.data.listen", STRING, "udp:0.0.0.0:0", MEDIUM,
	    "our udp data socket (producers > 0: same host, ephemeral ports)", UDP_EP)
	KEY("dpdk.eal.args", STRING, "", HIGH,
	    "required with dpdk: the EAL arguments, any port type (`--vdev=net_af_packet0,iface=eth1`, `net_af_xdp`, `net_tap`, `-a <pci>`, memif)")
	KEY("hiwater.dpdk.ip", STRING, "", MEDIUM, "our address on the DPDK port (empty: `10.77.0.<id & 255>`)",
	    .check = hw_netconf_check_ipv4, .valid = HW_NETCONF_IPV4_VALID)
	KEY("hiwater.dpdk.udp.port", INT32, "9092", MEDIUM, "our UDP port on the DPDK port", RANGE(1, 65535))
	KEY("hiwater.dpdk.port", STRING, "", MEDIUM,
	    "the port routes to the brokers go through (from their registered `dpdk:ip=..,udp=..`; empty: the only port)",
	    .check = hw_netconf_check_dpdk_port, .valid = HW_NETCONF_DPDK_PORT_VALID)
	KEY("hiwater.dpdk.mtu", INT32, "0", MEDIUM,
	    "MTU of the DPDK port: 0 = the largest it accepts (at most 9000); as hiwaterd's key, larger frames go as hiwater fragments",
	    RANGE(308, 65535), .has_special = 1, .special = 0, .unit = "bytes")
	KEY("hiwater.client.node.id", INT32, "-1", LOW,
	    "our node id (-1: random >= 100000; 0..999 are brokers and the controller; udp producer p uses id + 64·p)",
	    RANGE(HW_CLIENT_NODE_BASE, INT32_MAX - 64 * 64), .has_special = 1, .special = -1)
	KEY("hiwater.auth", ENUM, "aes-gcm", HIGH, "frame authentication, as the cluster's", .choices = auth_modes)
	KEY("hiwater.cluster.secret.file", STRING, "", HIGH,
	    "the cluster secret (mode 0600; required unless `hiwater.auth=none`, refused when the client opens)")
};

int hw_client_config_print_schema(int markdown, FILE *out)
{
	return hw_props_print_schema(defs, sizeof(defs) / sizeof(defs[0]),
				     markdown ? HW_PROPS_PRINT_MARKDOWN : HW_PROPS_PRINT_TSV, out);
}

void hw_client_config_defaults(hw_client_config *c)
{
	memset(c, 0, sizeof(*c));
	c->dpdk_udp_port = 9092;
	snprintf(c->control_listen, sizeof(c->control_listen), "udp:0.0.0.0:0");
	snprintf(c->data_listen, sizeof(c->data_listen), "udp:0.0.0.0:0");
	c->node_id = -1;
}

/* A value that parsed as its type but is wrong: "<where>: bad value ...". */
static int bad(const hw_props *p, const char *key, const char *what, char *err, size_t errlen)
{
	char w[256];
	hw_props_where(p, key, w, sizeof(w));
	snprintf(err, errlen, "%s: bad value for key '%s': %s", w, key, what);
	return -EINVAL;
}

static int get_str(const hw_props *p, const char *key, char *dst, size_t cap, char *err, size_t errlen)
{
	const char *s;
	int rc = hw_props_get_string(p, key, "", &s, err, errlen);
	if (rc)
		return rc;
	if (strlen(s) >= cap)
		return bad(p, key, "too long", err, errlen);
	snprintf(dst, cap, "%s", s);
	return 0;
}

/* Copy the validated values (the schema refused every bad one). */
static int fill(hw_client_config *c, const hw_props *p, char *err, size_t errlen)
{
	int idx, auth, rc;
	int64_t cid;
	if ((rc = hw_props_get_enum(p, "hiwater.transport", NULL, 0, &idx, err, errlen)) ||
	    (rc = get_str(p, "dpdk.eal.args", c->eal_args, sizeof(c->eal_args), err, errlen)) ||
	    (rc = get_str(p, "hiwater.dpdk.ip", c->dpdk_ip, sizeof(c->dpdk_ip), err, errlen)) ||
	    (rc = get_str(p, "hiwater.dpdk.port", c->dpdk_port, sizeof(c->dpdk_port), err, errlen)) ||
	    (rc = get_str(p, "hiwater.control.listen", c->control_listen, sizeof(c->control_listen), err,
			  errlen)) ||
	    (rc = get_str(p, "hiwater.data.listen", c->data_listen, sizeof(c->data_listen), err, errlen)) ||
	    (rc = hw_props_get_int32(p, "hiwater.dpdk.udp.port", 0, &c->dpdk_udp_port, err, errlen)) ||
	    (rc = hw_props_get_int32(p, "hiwater.dpdk.mtu", 0, &c->dpdk_mtu, err, errlen)) ||
	    (rc = hw_props_get_int64(p, "cluster.id", 0, &cid, err, errlen)) ||
	    (rc = hw_props_get_int32(p, "hiwater.client.node.id", 0, &c->node_id, err, errlen)) ||
	    (rc = hw_props_get_enum(p, "hiwater.auth", NULL, 0, &auth, err, errlen)) ||
	    (rc = get_str(p, "hiwater.cluster.secret.file", c->secret_file, sizeof(c->secret_file), err, errlen)))
		return rc;
	c->transport_dpdk = idx == 1;
	c->cluster_id = (uint32_t)cid;
	c->auth_none = auth == 1; /* a missing secret file is refused when the client opens */
	/* the one rule across keys */
	if (c->transport_dpdk && !c->eal_args[0])
		return bad(p, "dpdk.eal.args", "required with hiwater.transport=dpdk", err, errlen);
	return 0;
}

static int load(hw_client_config *c, const char *name, const char *text, size_t len, const char *path,
		char *err, size_t errlen)
{
	hw_client_config_defaults(c);
	hw_props *p = NULL;
	int rc = hw_props_create(&p, defs, sizeof(defs) / sizeof(defs[0]), err, errlen);
	if (rc == 0)
		rc = path ? hw_props_load_file(p, path, err, errlen)
			  : hw_props_load_string(p, name, text, len, err, errlen);
	if (rc == 0)
		rc = fill(c, p, err, errlen);
	hw_props_destroy(p);
	return rc;
}

int hw_client_config_parse(hw_client_config *c, const char *name, const char *text, size_t len,
			   char *err, size_t errlen)
{
	return load(c, name, text, len, NULL, err, errlen);
}

int hw_client_config_load(hw_client_config *c, const char *path, char *err, size_t errlen)
{
	return load(c, NULL, NULL, 0, path, err, errlen);
}

int hw_client_parse_bootstrap(const char *s, char *out, size_t cap)
{
	if (!s || !*s)
		return -EINVAL;
	char ep[128];
	int n = snprintf(ep, sizeof(ep), "%s%s", strncmp(s, "udp:", 4) ? "udp:" : "", s);
	if (n < 0 || (size_t)n >= sizeof(ep))
		return -EINVAL;
	hw_endpoint e;
	if (hw_endpoint_parse(ep, &e) || e.kind != HW_EP_UDP || !e.udp.sin_port ||
	    e.udp.sin_addr.s_addr == htonl(INADDR_ANY))
		return -EINVAL;
	return hw_endpoint_format(&e, out, cap) < 0 ? -EINVAL : 0;
}
