/* hw_cmd_metrics.c — `hiwater metrics [NODE ...] [--grep S]`: print each
 * node's Prometheus metrics.
 *
 * Every hiwaterd of a local cluster serves Prometheus text on
 * 127.0.0.1:<hiwater.metrics.port> (GET /metrics, a real HTTP listener on
 * its reactor). This command is a tiny HTTP/1.0 client for it: it fetches
 * /metrics from each node asked for (default: every node of the cluster),
 * prefixes each line with `node=<id> ` when more than one node is printed,
 * and exits 3 if any node does not answer. An argument HOST:PORT names an
 * endpoint directly (a node of a cluster this machine did not start, whose
 * hiwater.metrics.listen is not loopback; Metadata does not carry metrics
 * endpoints, so --bootstrap-server alone cannot find them).
 */
#include "hw_client.h"
#include "hw_cluster.h"
#include "hw_http.h"
#include "hw_netconf.h"
#include "hw_rig.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char metrics_usage[] =
	"Usage: hiwater metrics [NODE | HOST:PORT ...] [--grep S] [--dir D] [--timeout MS]\n"
	"\n"
	"Print the Prometheus metrics of the given nodes (default: all nodes of the\n"
	"cluster): UnderReplicatedPartitions, UnderMinIsrPartitionCount,\n"
	"OfflinePartitionsCount, ISR shrink/expand counts, follower lag, request\n"
	"rates and latency histograms, reactor busy/idle, jemalloc bytes...\n"
	"\n"
	"  HOST:PORT       a node's metrics endpoint (hiwater.metrics.listen:port),\n"
	"                  for a cluster without a cluster directory here\n"
	"  --bootstrap-server H:P --metrics-port P [--command-config F]\n"
	"                  every node Metadata names (controller and brokers), at\n"
	"                  its control address and metrics port P\n"
	"  --grep S        only lines containing S\n"
	"  --dir D         cluster directory (as for `hiwater cluster`)\n"
	"  --timeout MS    per node (default 2000)\n";

/* GET /metrics from a into a malloc'd NUL-terminated body: 0, or the
 * errors of hw_http_get, -EPROTO also for a status other than 200. */
static int http_get_metrics(struct sockaddr_in a, int timeout_ms, char **body_out)
{
	int status, rc = hw_http_get(a, "/metrics", timeout_ms, &status, body_out);
	if (!rc && status != 200) {
		free(*body_out);
		*body_out = NULL;
		rc = -EPROTO;
	}
	return rc;
}

/* The HOST:PORT arguments among argv[0..argc) into eps[] (at most
 * HW_CLUSTER_MAX_BROKERS + 1): endpoints given directly, no cluster
 * directory. Returns how many (0 when none are), or -1 after printing why
 * (a bad one, too many, or mixed with node ids). */
static int metrics_endpoints(int argc, char **argv, struct sockaddr_in *eps)
{
	int n_eps = 0;
	for (int i = 0; i < argc; i++) {
		if (!strchr(argv[i], ':'))
			continue;
		char ep[128];
		hw_endpoint e;
		snprintf(ep, sizeof(ep), "udp:%s", argv[i]);
		if (hw_endpoint_parse(ep, &e) || e.kind != HW_EP_UDP || !e.udp.sin_port ||
		    n_eps == HW_CLUSTER_MAX_BROKERS + 1) {
			hw_cli_err("'%s': expected HOST:PORT (HOST an IPv4 address)", argv[i]);
			return -1;
		}
		eps[n_eps++] = e.udp;
	}
	if (n_eps && n_eps != argc) {
		hw_cli_err("give either node ids or HOST:PORT endpoints");
		return -1;
	}
	return n_eps;
}

/* Prints body's lines that contain grep (all when NULL), each after
 * "endpoint=EP " when ep is non-NULL, else "node=N " when node >= 0.
 * Consumes body (strtok). */
static void metrics_print(char *body, const char *grep, const char *ep, int node)
{
	for (char *line = strtok(body, "\n"); line; line = strtok(NULL, "\n")) {
		if (grep && !strstr(line, grep))
			continue;
		if (ep)
			printf("endpoint=%s %s\n", ep, line);
		else if (node >= 0)
			printf("node=%d %s\n", node, line);
		else
			printf("%s\n", line);
	}
}

int hw_cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, 0, 'h'},
		{"dir", required_argument, 0, 'd'},
		{"grep", required_argument, 0, 'g'},
		{"timeout", required_argument, 0, 'T'},
		{"bootstrap-server", required_argument, 0, 'S'},
		{"command-config", required_argument, 0, 'C'},
		{"metrics-port", required_argument, 0, 'P'},
		{0, 0, 0, 0},
	};
	char dir[512];
	hw_cluster_default_dir(dir, sizeof(dir));
	const char *grep = NULL;
	int timeout_ms = 2000;
	int64_t v;
	optind = 1;
	int o;
	const char *bootstrap = NULL, *command_config = NULL;
	int metrics_port = 0;
	while ((o = getopt_long(argc, argv, "hd:g:T:S:C:P:", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(metrics_usage, stdout);
			hw_cli_print_exit_codes(stdout);
			return HW_CLI_EXIT_OK;
		case 'd':
			snprintf(dir, sizeof(dir), "%s", optarg);
			break;
		case 'g':
			grep = optarg;
			break;
		case 'S': bootstrap = optarg; break;
		case 'C': command_config = optarg; break;
		case 'P':
			if (hw_cli_parse_i64(optarg, 1, 65535, &v)) {
				hw_cli_err("--metrics-port wants 1..65535");
				return HW_CLI_EXIT_USAGE;
			}
			metrics_port = (int)v;
			break;
		case 'T':
			if (hw_cli_parse_i64(optarg, 1, 600000, &v)) {
				hw_cli_err("--timeout wants 1..600000 ms");
				return HW_CLI_EXIT_USAGE;
			}
			timeout_ms = (int)v;
			break;
		default:
			hw_cli_err("see `hiwater metrics --help`");
			return HW_CLI_EXIT_USAGE;
		}
	}
	struct sockaddr_in eps[HW_CLUSTER_MAX_BROKERS + 1];
	int n_eps = metrics_endpoints(argc - optind, argv + optind, eps);
	if (n_eps < 0)
		return HW_CLI_EXIT_USAGE;
	int32_t boot_ids[HW_CLUSTER_MAX_BROKERS + 1];
	if (bootstrap) {
		/* Metadata has no metrics endpoints: the nodes' control hosts
		 * and the one metrics port the rig gives them all */
		if (!metrics_port || optind < argc) {
			hw_cli_err("with --bootstrap-server give --metrics-port P (and no NODE arguments)");
			return HW_CLI_EXIT_USAGE;
		}
		hw_client *cl;
		int ex = hw_client_open_cli(&cl, dir, bootstrap, command_config, 0, 1);
		if (ex)
			return ex;
		n_eps = hw_client_nodes(cl, boot_ids, eps, HW_CLUSTER_MAX_BROKERS + 1);
		hw_client_close(cl);
		for (int i = 0; i < n_eps; i++)
			eps[i].sin_port = htons((uint16_t)metrics_port);
	} else if (metrics_port || command_config) {
		hw_cli_err("--metrics-port and --command-config go with --bootstrap-server");
		return HW_CLI_EXIT_USAGE;
	}
	hw_cluster c;
	if (!n_eps && hw_cluster_load(&c, dir) != 0) {
		hw_cli_err("no cluster in %s (or name endpoints: hiwater metrics HOST:PORT ...)", dir);
		return HW_CLI_EXIT_NO_CLUSTER;
	}
	int nodes[HW_CLUSTER_MAX_BROKERS + 1], n = 0;
	for (int i = optind; i < argc && !n_eps; i++) {
		if (hw_cli_parse_i64(argv[i], 0, c.brokers, &v) || !hw_cluster_node_valid(&c, (int)v)) {
			hw_cli_err("no node '%s' in this cluster (0..%d)", argv[i], c.brokers);
			return HW_CLI_EXIT_USAGE;
		}
		if (n < HW_CLUSTER_MAX_BROKERS + 1)
			nodes[n++] = (int)v;
	}
	if (n_eps) {
		for (int i = 0; i < n_eps; i++)
			nodes[n++] = bootstrap ? boot_ids[i] : i;
	} else if (n == 0) {
		for (int i = 0; i <= c.brokers; i++)
			nodes[n++] = i;
	}
	int rc = HW_CLI_EXIT_OK;
	for (int i = 0; i < n; i++) {
		char *body = NULL;
		struct sockaddr_in a = { .sin_family = AF_INET };
		if (n_eps) {
			a = eps[i];
		} else {
			a.sin_port = htons((uint16_t)hw_cluster_metrics_port(&c, nodes[i]));
			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		}
		/* a rig node serves on 127.0.0.1 of its own namespace (hw_rig.h) */
		int r = !n_eps && c.rig[0] ? hw_rig_enter(&c, nodes[i]) : 0;
		if (!r)
			r = http_get_metrics(a, timeout_ms, &body);
		if (r) {
			char ip[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
			hw_cli_err("%s %d: metrics at %s:%u: %s", n_eps && !bootstrap ? "endpoint" : "node", nodes[i], ip,
				   ntohs(a.sin_port), strerror(-r));
			rc = HW_CLI_EXIT_NO_CLUSTER;
			continue;
		}
		if (n > 1 && n_eps && !bootstrap)
			metrics_print(body, grep, argv[optind + i], -1);
		else if (n > 1)
			metrics_print(body, grep, NULL, nodes[i]);
		else
			metrics_print(body, grep, NULL, -1);
		free(body);
	}
	return rc;
}
