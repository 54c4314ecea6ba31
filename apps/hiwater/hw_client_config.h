/* hw_client_config.h — the client properties of `--command-config FILE`
 * (Kafka's flag name): how a CLI process reaches a cluster it did not start.
 *
 * Keys (java.util.Properties syntax, lib/props; an unknown key or a bad
 * value fails with "<file>:<line>: ..." naming the key):
 *   hiwater.transport        udp | dpdk (default udp): the data plane
 *   dpdk.eal.args            EAL arguments (required with dpdk), e.g.
 *                            "--no-huge -m 256 --no-pci --vdev=net_af_packet0,iface=eth1"
 *   hiwater.dpdk.ip          our IPv4 address on the DPDK port
 *   hiwater.dpdk.udp.port    our UDP port there (default 9092)
 *   hiwater.dpdk.port        the port routes to brokers go through (vdev
 *                            name or port id; default: the only port)
 *   hiwater.dpdk.mtu         MTU of the DPDK port (0: the port's largest)
 *   hiwater.control.listen   our control socket, udp:HOST:PORT (default
 *                            udp:0.0.0.0:0)
 *   hiwater.data.listen      our udp data socket (default udp:0.0.0.0:0)
 *   cluster.id               the cluster's id (default 0; frames of other
 *                            clusters are dropped)
 *   hiwater.client.node.id   our node id (default: random >= 100000)
 */
#ifndef HW_CLIENT_CONFIG_H
#define HW_CLIENT_CONFIG_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HW_CLIENT_NODE_ID_MIN 100000   /* random client node ids start here */

typedef struct hw_client_config {
	int transport_dpdk;
	char eal_args[2048];
	char dpdk_ip[32];              /* "" -> the transport's default */
	int32_t dpdk_udp_port;
	char dpdk_port[64];            /* "" -> the only port */
	int32_t dpdk_mtu;              /* 0 -> the port's largest */
	char control_listen[96];       /* "udp:A.B.C.D:PORT" */
	char data_listen[96];
	uint32_t cluster_id;
	int32_t node_id;               /* -1 -> random >= HW_CLIENT_NODE_ID_MIN */
	int auth_none;                 /* hiwater.auth=none */
	char secret_file[512];         /* hiwater.cluster.secret.file */
} hw_client_config;

/* The defaults above. Never fails. */
void hw_client_config_defaults(hw_client_config *c);
/* Defaults, then the properties in `text` (messages name `name`:line) /
 * in the file at path. 0; -EINVAL (syntax, unknown key, bad value) or
 * -errno (unreadable file) with a one-line message in err. */
int hw_client_config_parse(hw_client_config *c, const char *name, const char *text, size_t len,
			   char *err, size_t errlen);
int hw_client_config_load(hw_client_config *c, const char *path, char *err, size_t errlen);

/* The client properties' schema (`hiwater --print-client-config`): TSV,
 * or Markdown (markdown != 0) for apps/hiwater/README.md. 0 or -EIO. */
int hw_client_config_print_schema(int markdown, FILE *out);

/* "HOST:PORT" (or "udp:HOST:PORT"; HOST an IPv4 address or localhost) of
 * --bootstrap-server into "udp:A.B.C.D:PORT". 0 or -EINVAL (port 0 too). */
int hw_client_parse_bootstrap(const char *s, char *out, size_t cap);

#endif
