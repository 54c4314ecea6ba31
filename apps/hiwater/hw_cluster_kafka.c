/* hw_cluster_kafka.c — the Kafka listeners of a local `hiwater cluster`
 * (apps/hiwater/README.md "cluster", docs/kafka.md): broker id listens on
 * 127.0.0.1:B+500+id; the cluster directory gets kafka.properties with
 * bootstrap.servers for Kafka clients. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hw_cli.h"
#include "hw_cluster.h"

int hw_cluster_kafka_port(const hw_cluster *c, int node)
{
	return c->base_port + 500 + node;
}

void hw_cluster_kafka_render(const hw_cluster *c, int node, char *buf, size_t cap, size_t *off)
{
	if (node == 0 || c->rig[0])
		return; /* the controller has none; rig nodes: not yet (docs/kafka.md) */
	hw_cli_appendf(buf, cap, off, "listeners=PLAINTEXT://127.0.0.1:%d\n", hw_cluster_kafka_port(c, node));
}

int hw_cluster_kafka_bootstrap(const hw_cluster *c, char *buf, size_t cap)
{
	size_t off = 0;
	buf[0] = 0;
	for (int b = 1; b <= c->brokers; b++)
		hw_cli_appendf(buf, cap, &off, "%s127.0.0.1:%d", b > 1 ? "," : "", hw_cluster_kafka_port(c, b));
	return off >= cap ? -ENOSPC : 0;
}

int hw_cluster_kafka_write_properties(const hw_cluster *c)
{
	if (c->rig[0])
		return 0;
	char boot[4096], text[4200], path[4200];
	int rc = hw_cluster_kafka_bootstrap(c, boot, sizeof(boot));
	if (rc)
		return rc;
	int n = snprintf(text, sizeof(text),
			 "# Kafka clients of this cluster (written by `hiwater cluster up`)\n"
			 "bootstrap.servers=%s\n", boot);
	snprintf(path, sizeof(path), "%s/kafka.properties", c->dir);
	return hw_cli_write_file(path, text, (size_t)n);
}
