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
#include "hw_cluster.h"
#include "hw_netconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
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
	"  --grep S        only lines containing S\n"
	"  --dir D         cluster directory (as for `hiwater cluster`)\n"
	"  --timeout MS    per node (default 2000)\n";

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* GET /metrics from a (IPv4 address and port) into a malloc'd
 * NUL-terminated body. Returns 0, -ECONNREFUSED / -ETIMEDOUT / -EPROTO
 * (not HTTP 200) / -ENOMEM. */
static int http_get_metrics(struct sockaddr_in a, int timeout_ms, char **body_out)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int64_t deadline = now_ms() + timeout_ms;
	int rc = 0;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
		rc = -errno;
		goto out;
	}
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, timeout_ms) != 1) {
		rc = -ETIMEDOUT;
		goto out;
	}
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
	if (soerr) {
		rc = -soerr;
		goto out;
	}
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(req) - 1)) {
		rc = -EIO;
		goto out;
	}
	for (;;) { /* HTTP/1.0: the server closes when the body is complete */
		int left = (int)(deadline - now_ms());
		if (left <= 0) {
			rc = -ETIMEDOUT;
			goto out;
		}
		p.events = POLLIN;
		if (poll(&p, 1, left) != 1)
			continue;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap ? cap * 2 : 16384);
			if (!nb) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap = cap ? cap * 2 : 16384;
		}
		ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		len += (size_t)n;
	}
	if (!buf) {
		rc = -EPROTO;
		goto out;
	}
	buf[len] = 0;
	char *body = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.", 7) != 0 || !body || strncmp(buf + 8, " 200", 4) != 0) {
		rc = -EPROTO;
		goto out;
	}
	memmove(buf, body + 4, len - (size_t)(body + 4 - buf) + 1);
	*body_out = buf;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

int hw_cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, 0, 'h'},
		{"dir", required_argument, 0, 'd'},
		{"grep", required_argument, 0, 'g'},
		{"timeout", required_argument, 0, 'T'},
		{0, 0, 0, 0},
	};
	char dir[512];
	hw_cluster_default_dir(dir, sizeof(dir));
	const char *grep = NULL;
	int timeout_ms = 2000;
	int64_t v;
	optind = 1;
	int o;
	while ((o = getopt_long(argc, argv, "hd:g:T:", opts, NULL)) != -1) {
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
	/* HOST:PORT arguments: endpoints given directly, no cluster directory */
	struct sockaddr_in eps[HW_CLUSTER_MAX_BROKERS + 1];
	int n_eps = 0;
	for (int i = optind; i < argc; i++) {
		if (!strchr(argv[i], ':'))
			continue;
		char ep[128];
		hw_endpoint e;
		snprintf(ep, sizeof(ep), "udp:%s", argv[i]);
		if (hw_endpoint_parse(ep, &e) || e.kind != HW_EP_UDP || !e.udp.sin_port ||
		    n_eps == HW_CLUSTER_MAX_BROKERS + 1) {
			hw_cli_err("'%s': expected HOST:PORT (HOST an IPv4 address)", argv[i]);
			return HW_CLI_EXIT_USAGE;
		}
		eps[n_eps++] = e.udp;
	}
	if (n_eps && n_eps != argc - optind) {
		hw_cli_err("give either node ids or HOST:PORT endpoints");
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
			nodes[n++] = i;
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
		int r = http_get_metrics(a, timeout_ms, &body);
		if (r) {
			char ip[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
			hw_cli_err("%s %d: metrics at %s:%u: %s", n_eps ? "endpoint" : "node", nodes[i], ip,
				   ntohs(a.sin_port), strerror(-r));
			rc = HW_CLI_EXIT_NO_CLUSTER;
			continue;
		}
		for (char *line = strtok(body, "\n"); line; line = strtok(NULL, "\n")) {
			if (grep && !strstr(line, grep))
				continue;
			if (n > 1 && n_eps)
				printf("endpoint=%s %s\n", argv[optind + i], line);
			else if (n > 1)
				printf("node=%d %s\n", nodes[i], line);
			else
				printf("%s\n", line);
		}
		free(body);
	}
	return rc;
}
