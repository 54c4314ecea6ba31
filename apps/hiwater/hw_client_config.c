/* hw_client_config.c — `--command-config FILE` parsing; see hw_client_config.h. */
#include "hw_client_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_cli.h"
#include "hw_netconf.h"
#include "hw_props.h"

static const char *const transports[] = {"udp", "dpdk", NULL};
static const char *const auth_modes[] = {"aes-gcm", "none", NULL};

/* X(name, type, default, doc) */
#define CLIENT_KEYS(X)                                                                         \
	X("hiwater.transport", ENUM, "udp", "data plane: udp | dpdk")                          \
	X("dpdk.eal.args", STRING, "", "DPDK EAL arguments (required with dpdk)")             \
	X("hiwater.dpdk.ip", STRING, "", "our IPv4 address on the DPDK port")                 \
	X("hiwater.dpdk.udp.port", INT32, "9092", "our UDP port on the DPDK port")            \
	X("hiwater.dpdk.port", STRING, "", "DPDK port routes to brokers go through (default: the only one)") \
	X("hiwater.dpdk.mtu", INT32, "0", "MTU of the DPDK port (0: the largest it accepts)") \
	X("hiwater.control.listen", STRING, "udp:0.0.0.0:0", "our control socket")            \
	X("hiwater.data.listen", STRING, "udp:0.0.0.0:0", "our udp data socket")              \
	X("cluster.id", INT64, "0", "the cluster's id (u32)")                                 \
	X("hiwater.client.node.id", INT32, "-1", "our node id (-1: random >= 100000)")       \
	X("hiwater.auth", ENUM, "aes-gcm", "frame authentication: aes-gcm | none (as the cluster's)") \
	X("hiwater.cluster.secret.file", STRING, "", "the cluster secret (0600; required unless hiwater.auth=none)")

#define CHOICES_OF(name)                                                   \
	(!strcmp(name, "hiwater.transport") ? transports                   \
	 : !strcmp(name, "hiwater.auth")    ? auth_modes : NULL)
static const hw_prop_def defs[] = {
#define D(n, t, d, doc_) {.name = n, .type = HW_PROP_##t, .def = d, .doc = doc_},
	CLIENT_KEYS(D)
#undef D
};

/* The schema with the enums' choices (a static initialiser cannot pick
 * them by name). */
static void schema(hw_prop_def *out)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		out[i] = defs[i];
		out[i].choices = CHOICES_OF(defs[i].name);
	}
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

static int udp_ep_ok(const char *s)
{
	hw_endpoint e;
	return hw_endpoint_parse(s, &e) == 0 && e.kind == HW_EP_UDP;
}

static int fill(hw_client_config *c, const hw_props *p, char *err, size_t errlen)
{
	int idx, rc;
	int64_t cid;
	struct in_addr ia;
	if ((rc = hw_props_get_enum(p, "hiwater.transport", transports, 0, &idx, err, errlen)))
		return rc;
	c->transport_dpdk = idx == 1;
	if ((rc = get_str(p, "dpdk.eal.args", c->eal_args, sizeof(c->eal_args), err, errlen)) ||
	    (rc = get_str(p, "hiwater.dpdk.ip", c->dpdk_ip, sizeof(c->dpdk_ip), err, errlen)) ||
	    (rc = get_str(p, "hiwater.dpdk.port", c->dpdk_port, sizeof(c->dpdk_port), err, errlen)) ||
	    (rc = get_str(p, "hiwater.control.listen", c->control_listen, sizeof(c->control_listen), err,
			  errlen)) ||
	    (rc = get_str(p, "hiwater.data.listen", c->data_listen, sizeof(c->data_listen), err, errlen)) ||
	    (rc = hw_props_get_int32(p, "hiwater.dpdk.udp.port", 0, &c->dpdk_udp_port, err, errlen)) ||
	    (rc = hw_props_get_int32(p, "hiwater.dpdk.mtu", 0, &c->dpdk_mtu, err, errlen)) ||
	    (rc = hw_props_get_int64(p, "cluster.id", 0, &cid, err, errlen)) ||
	    (rc = hw_props_get_int32(p, "hiwater.client.node.id", 0, &c->node_id, err, errlen)))
		return rc;
	if (c->transport_dpdk && !c->eal_args[0])
		return bad(p, "dpdk.eal.args", "required with hiwater.transport=dpdk", err, errlen);
	if (c->dpdk_ip[0] && inet_pton(AF_INET, c->dpdk_ip, &ia) != 1)
		return bad(p, "hiwater.dpdk.ip", "expected an IPv4 address", err, errlen);
	if (c->dpdk_udp_port < 1 || c->dpdk_udp_port > 65535)
		return bad(p, "hiwater.dpdk.udp.port", "expected 1 .. 65535", err, errlen);
	if (strchr(c->dpdk_port, ',') || strchr(c->dpdk_port, ' '))
		return bad(p, "hiwater.dpdk.port", "expected a vdev name or a port id", err, errlen);
	if (c->dpdk_mtu != 0 && (c->dpdk_mtu < 308 || c->dpdk_mtu > 65535)) /* HW_DPDK_MTU_MIN */
		return bad(p, "hiwater.dpdk.mtu", "expected 0 (the largest the port accepts) or 308..65535",
			   err, errlen);
	if (!udp_ep_ok(c->control_listen))
		return bad(p, "hiwater.control.listen", "expected udp:HOST:PORT (HOST an IPv4 address)", err, errlen);
	if (!udp_ep_ok(c->data_listen))
		return bad(p, "hiwater.data.listen", "expected udp:HOST:PORT (HOST an IPv4 address)", err, errlen);
	if (cid < 0 || cid > UINT32_MAX)
		return bad(p, "cluster.id", "expected 0 .. 4294967295", err, errlen);
	c->cluster_id = (uint32_t)cid;
	if ((rc = hw_props_get_enum(p, "hiwater.auth", auth_modes, 0, &idx, err, errlen)) ||
	    (rc = get_str(p, "hiwater.cluster.secret.file", c->secret_file, sizeof(c->secret_file), err, errlen)))
		return rc;
	c->auth_none = idx == 1;   /* a missing secret file is refused when the client opens */
	if (c->node_id != -1 && (c->node_id < 1000 || c->node_id > INT32_MAX - 64 * 64))
		return bad(p, "hiwater.client.node.id", "expected -1 (random) or 1000 .. 2147479551 "
			   "(0..999 are brokers and the controller)", err, errlen);
	return 0;
}

static int load(hw_client_config *c, const char *name, const char *text, size_t len, const char *path,
		char *err, size_t errlen)
{
	hw_client_config_defaults(c);
	hw_props *p = NULL;
	static hw_prop_def sch[sizeof(defs) / sizeof(defs[0])];
	schema(sch);
	int rc = hw_props_create(&p, sch, sizeof(sch) / sizeof(sch[0]), err, errlen);
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
