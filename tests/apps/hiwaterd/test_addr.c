/* test_addr.c — addresses across hosts (suite 'cli'): the advertised
 * endpoint rules (drivers/net/common/hw_netaddr.h), DPDK registrations and
 * the routes built from them, hiwaterd's new keys (hiwater.*.advertised,
 * hiwater.metrics.listen, hiwater.dpdk.port) and the CLI's --command-config
 * properties, with their file:line:key errors. Real sockets for the
 * kernel-picked address (toward loopback: the only route every machine
 * has). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cmocka.h>

#include "hw_admin_msg.h"
#include "hw_client_config.h"
#include "hw_udp.h"
#include "hw_wire.h"
#include "hw_wire_auth.h"
#include "hw_netaddr.h"
#include "hw_netconf.h"
#include "hwd.h"

static void test_advertise(void **state)
{
	(void)state;
	char out[96];
	/* a concrete listen host is advertised as it is; port 0 -> the bound one */
	assert_int_equal(hw_netaddr_advertise("udp:10.203.1.2:0", "", 4711, "udp:127.0.0.1:9", out, sizeof(out)), 0);
	assert_string_equal(out, "udp:10.203.1.2:4711");
	assert_int_equal(hw_netaddr_advertise("udp:10.203.1.2:9090", NULL, 9090, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "udp:10.203.1.2:9090");
	/* the wildcard: the local address the kernel picks toward the controller */
	assert_int_equal(hw_netaddr_advertise("udp:0.0.0.0:0", "", 5000, "udp:127.0.0.1:19090", out, sizeof(out)), 0);
	assert_string_equal(out, "udp:127.0.0.1:5000");
	/* an explicit advertised endpoint wins, its port 0 means the bound port */
	assert_int_equal(hw_netaddr_advertise("udp:0.0.0.0:0", "udp:192.0.2.7:9999", 5000, "udp:127.0.0.1:1",
					      out, sizeof(out)), 0);
	assert_string_equal(out, "udp:192.0.2.7:9999");
	assert_int_equal(hw_netaddr_advertise("udp:0.0.0.0:9190", "udp:192.0.2.7:0", 9190, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "udp:192.0.2.7:9190");
	/* advertised with a wildcard host: the host rule of the listen side */
	assert_int_equal(hw_netaddr_advertise("udp:10.203.1.3:1", "udp:0.0.0.0:77", 1, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "udp:10.203.1.3:77");
	/* a wildcard needs somewhere to look toward */
	assert_int_equal(hw_netaddr_advertise("udp:0.0.0.0:0", "", 1, NULL, out, sizeof(out)), -EINVAL);
	assert_int_equal(hw_netaddr_advertise("udp:nohost:1", "", 1, NULL, out, sizeof(out)), -EINVAL);
	assert_int_equal(hw_netaddr_advertise("udp:10.0.0.1:1", "dpdk:port=x", 1, NULL, out, sizeof(out)), -EINVAL);
	assert_int_equal(hw_netaddr_advertise("udp:10.0.0.1:1", "", 1, NULL, out, 8), -ENOSPC);
	assert_int_equal(hw_netaddr_is_wildcard("udp:0.0.0.0:5"), 1);
	assert_int_equal(hw_netaddr_is_wildcard("udp:127.0.0.1:5"), 0);
	assert_int_equal(hw_netaddr_is_wildcard("junk"), 0);
	char host[32];
	assert_int_equal(hw_netaddr_local_toward("udp:127.0.0.1:0", host, sizeof(host)), 0);
	assert_string_equal(host, "127.0.0.1");
}

static void test_dpdk_routes(void **state)
{
	(void)state;
	char reg[96], route[160];
	assert_int_equal(hw_netaddr_dpdk_registration(htonl(0x0a4d0002), 9092, 2, reg, sizeof(reg)), 0);
	assert_string_equal(reg, "dpdk:ip=10.77.0.2,udp=9092,queues=2");
	assert_int_equal(hw_netaddr_dpdk_registration(0, 0, 1, reg, sizeof(reg)), -EINVAL);
	assert_int_equal(hw_netaddr_dpdk_registration(0, 1, 0, reg, sizeof(reg)), -EINVAL);
	assert_int_equal(hw_netaddr_dpdk_route(reg, "net_af_packet0", 1, route, sizeof(route)), 0);
	assert_string_equal(route, "dpdk:port=net_af_packet0,ip=10.77.0.2,udp=9092,queues=2");
	assert_int_equal(hw_netaddr_dpdk_route(reg, "0", 0, route, sizeof(route)), 0);
	assert_string_equal(route, "dpdk:port=0,ip=10.77.0.2,udp=9092");
	/* the registration order does not matter, and the route parses */
	assert_int_equal(hw_netaddr_dpdk_route("dpdk:queues=1,udp=7,ip=10.0.0.9", "p", 0, route, sizeof(route)), 0);
	assert_string_equal(route, "dpdk:port=p,udp=7,ip=10.0.0.9");
	hw_endpoint e;
	assert_int_equal(hw_endpoint_parse(route, &e), 0);
	assert_int_equal(e.udp_port, 7);
	/* what a registration cannot be */
	assert_int_equal(hw_netaddr_dpdk_route("udp:1.2.3.4:5", "p", 1, route, sizeof(route)), -EINVAL);
	assert_int_equal(hw_netaddr_dpdk_route("dpdk:udp=7", "p", 1, route, sizeof(route)), -EINVAL);
	assert_int_equal(hw_netaddr_dpdk_route("dpdk:port=x,ip=1.2.3.4", "p", 1, route, sizeof(route)), -EINVAL);
	assert_int_equal(hw_netaddr_dpdk_route(reg, "a,b", 1, route, sizeof(route)), -EINVAL);
	assert_int_equal(hw_netaddr_dpdk_route(reg, "", 1, route, sizeof(route)), -EINVAL);
	assert_int_equal(hw_netaddr_dpdk_route(reg, "p", 1, route, 20), -ENOSPC);
}

/* ---- bootstrap: a METADATA addressed to any node (HW_WIRE_DST_ANY) is
 * delivered, any other type so addressed is dropped as NOT_FOR_US */

static int g_delivered, g_last_type;
static void on_msg(void *ctx, const hw_msg *m)
{
	(void)ctx;
	g_delivered++;
	g_last_type = m->type;
}

static void send_any(int fd, uint16_t port, hw_wire_tx *tx, hw_msg *m)
{
	uint8_t buf[2048];
	m->src = 123456;
	m->dst = HW_WIRE_DST_ANY;
	int n = hw_wire_encode(tx, m, NULL, buf, sizeof(buf));
	assert_true(n > 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&a, sizeof(a)), n);
}

static void test_dst_any(void **state)
{
	(void)state;
	hw_udp_cfg uc = {.listen = "udp:127.0.0.1:0", .cluster_id = 77, .self_id = 3, .on_msg = on_msg};
	int err = 0;
	hw_udp *u = hw_udp_create(&uc, &err);
	assert_non_null(u);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	hw_wire_tx tx = {.cluster_id = 77, .incarnation = hw_wire_new_incarnation()};
	hw_topic_name t;
	memset(&t, 0, sizeof(t));
	snprintf(t.s, sizeof(t.s), "x");
	hw_metadata_req mr = {.n_topics = 1, .topics = &t};
	hw_msg meta = {.type = HW_MSG_METADATA, .correlation_id = 1, .u.other = &mr};
	send_any(fd, hw_udp_local_port(u), &tx, &meta);
	hw_msg hb = {.type = HW_MSG_BROKER_HEARTBEAT, .correlation_id = 2};
	hw_broker_heartbeat_req hr = {.broker_id = 1, .broker_epoch = 1};
	hb.u.other = &hr;
	send_any(fd, hw_udp_local_port(u), &tx, &hb);
	for (int i = 0; i < 50 && hw_udp_get_stats(u)->wire.drops[HW_WIRE_DROP_NOT_FOR_US] == 0; i++)
		hw_udp_wait(u, 20);
	assert_int_equal(g_delivered, 1);
	assert_int_equal(g_last_type, HW_MSG_METADATA);
	assert_int_equal(hw_udp_get_stats(u)->wire.drops[HW_WIRE_DROP_NOT_FOR_US], 1);
	close(fd);
	hw_udp_destroy(u);
}

/* ---- hiwaterd's keys: through hwd_config_load on a real file */

static char g_dir[64];

static const char *write_file(const char *name, const char *text)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Load text as server.properties; stderr goes to a file whose text is
 * returned in msg. */
static int load_daemon(const char *text, hwd_config *c, char *msg, size_t cap)
{
	const char *path = write_file("server.properties", text);
	char errpath[128];
	snprintf(errpath, sizeof(errpath), "%s/stderr", g_dir);
	fflush(stderr);
	int saved = dup(2);
	FILE *ef = fopen(errpath, "w+");
	assert_non_null(ef);
	dup2(fileno(ef), 2);
	char *argv[] = {"hiwaterd", "--config", (char *)path, NULL};
	int rc = hwd_config_load(3, argv, c);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(ef);
	size_t n = fread(msg, 1, cap - 1, ef);
	msg[n] = 0;
	fclose(ef);
	return rc;
}

/* msg names file line `line` and key: "server.properties:<line>: bad
 * value ['<v>'] for key '<key>'" (the schema's message quotes the value,
 * a cross-key rule's does not). */
static int bad_at(const char *msg, int line, const char *key)
{
	char at[64], k[128];
	snprintf(at, sizeof(at), "server.properties:%d: bad value ", line);
	snprintf(k, sizeof(k), "for key '%s'", key);
	const char *a = strstr(msg, at);
	if (!a || !strstr(a, k))
		fprintf(stderr, "message '%s' does not name line %d and key '%s'\n", msg, line, key);
	return a && strstr(a, k);
}

#define BROKER "process.roles=broker\nnode.id=2\ncontroller.quorum.voters=0@10.203.0.1:9090\nhiwater.auth=none\n"

static void test_daemon_keys(void **state)
{
	(void)state;
	hwd_config *c = calloc(1, sizeof(*c));
	char msg[1024];
	assert_non_null(c);
	assert_int_equal(load_daemon(BROKER, c, msg, sizeof(msg)), 0);
	assert_string_equal(c->control_advertised, "");
	assert_string_equal(c->data_advertised, "");
	assert_string_equal(c->metrics_listen, "127.0.0.1");
	assert_string_equal(c->dpdk_port, "");
	assert_int_equal(load_daemon(BROKER "hiwater.control.advertised=10.203.0.3:9090\n"
				     "hiwater.data.advertised=udp:10.203.0.3:0\nhiwater.metrics.listen=0.0.0.0\n"
				     "hiwater.dpdk.port=net_af_packet0\nhiwater.data.listen=udp:0.0.0.0:9190\n",
				     c, msg, sizeof(msg)), 0);
	assert_string_equal(c->control_advertised, "udp:10.203.0.3:9090");
	assert_string_equal(c->data_advertised, "udp:10.203.0.3:0");
	assert_string_equal(c->metrics_listen, "0.0.0.0");
	assert_string_equal(c->dpdk_port, "net_af_packet0");
	/* bad values name the file, the line and the key */
	assert_int_equal(load_daemon(BROKER "hiwater.data.advertised=udp:host.example:1\n", c, msg, sizeof(msg)), -1);
	assert_true(bad_at(msg, 5, "hiwater.data.advertised"));
	assert_int_equal(load_daemon(BROKER "hiwater.metrics.listen=everywhere\n", c, msg, sizeof(msg)), -1);
	assert_true(bad_at(msg, 5, "hiwater.metrics.listen"));
	assert_int_equal(load_daemon(BROKER "\nhiwater.control.advertised=9090\n", c, msg, sizeof(msg)), -1);
	assert_true(bad_at(msg, 6, "hiwater.control.advertised"));
	assert_int_equal(load_daemon(BROKER "hiwater.dpdk.port=a,b\n", c, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "'hiwater.dpdk.port'"));
	assert_int_equal(load_daemon(BROKER "hiwater.dpdk.ip=10.77.0.300\n", c, msg, sizeof(msg)), -1);
	assert_true(bad_at(msg, 5, "hiwater.dpdk.ip"));
	/* the controller: its voter address, or the wildcard on the voter's port */
	const char *ctrl = "process.roles=controller\nnode.id=0\ncontroller.quorum.voters=0@10.203.0.1:9090\n"
			   "hiwater.auth=none\n";
	char buf[512];
	snprintf(buf, sizeof(buf), "%shiwater.control.listen=udp:0.0.0.0:9090\n", ctrl);
	assert_int_equal(load_daemon(buf, c, msg, sizeof(msg)), 0);
	assert_string_equal(c->control_listen, "udp:0.0.0.0:9090");
	snprintf(buf, sizeof(buf), "%shiwater.control.listen=udp:0.0.0.0:9091\n", ctrl);
	assert_int_equal(load_daemon(buf, c, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "'hiwater.control.listen'"));
	assert_int_equal(load_daemon(ctrl, c, msg, sizeof(msg)), 0);
	assert_string_equal(c->control_listen, "udp:10.203.0.1:9090");
	/* authentication (docs/security.md): on unless hiwater.auth=none; the
	 * secret must exist, be 0600 and hold 64 hex digits */
	static const char noauth[] = "process.roles=broker\nnode.id=2\ncontroller.quorum.voters=0@10.203.0.1:9090\n";
	assert_int_equal(load_daemon(noauth, c, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "'hiwater.cluster.secret.file' (default): required"));
	char sec[256];
	snprintf(sec, sizeof(sec), "%s/cluster.secret", g_dir);
	(void)unlink(sec);
	assert_int_equal(hw_wire_auth_secret_create(sec), 0);
	snprintf(buf, sizeof(buf), "%shiwater.auth=aes-gcm\nhiwater.cluster.secret.file=%s\n", noauth, sec);
	assert_int_equal(load_daemon(buf, c, msg, sizeof(msg)), 0);
	assert_int_equal(hw_wire_auth_on(), 1);
	assert_int_equal(chmod(sec, 0644), 0);
	assert_int_equal(load_daemon(buf, c, msg, sizeof(msg)), -1);
	assert_true(bad_at(msg, 5, "hiwater.cluster.secret.file"));
	assert_non_null(strstr(msg, "must be 0600"));
	snprintf(buf, sizeof(buf), "%shiwater.auth=hmac\n", noauth);
	assert_true(load_daemon(buf, c, msg, sizeof(msg)) < 0);
	assert_non_null(strstr(msg, "'hiwater.auth'"));
	hw_wire_auth_set_key(NULL, 0);
	unlink(sec);
	/* values the daemon used to accept (or refuse later without a name):
	 * each refused at start-up naming file, line and key */
	static const struct { const char *kv, *key; } badv[] = {
		{ "log.flush.interval.messages=0", "log.flush.interval.messages" },
		{ "log.roll.ms=0", "log.roll.ms" },
		{ "log.index.size.max.bytes=3", "log.index.size.max.bytes" },
		{ "log.segment.bytes=13", "log.segment.bytes" },
		{ "log.index.interval.bytes=-1", "log.index.interval.bytes" },
		{ "log.retention.ms=-2", "log.retention.ms" },
		{ "log.flush.interval.ms=-1", "log.flush.interval.ms" },
		{ "hiwater.metrics.port=70000", "hiwater.metrics.port" },
		{ "hiwater.controlled.shutdown.timeout.ms=0", "hiwater.controlled.shutdown.timeout.ms" },
		{ "num.partitions=0", "num.partitions" },
		{ "default.replication.factor=0", "default.replication.factor" },
		{ "hiwater.log.level=loud", "hiwater.log.level" },
	};
	for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++) {
		snprintf(buf, sizeof(buf), BROKER "%s\n", badv[i].kv);
		assert_int_equal(load_daemon(buf, c, msg, sizeof(msg)), -1);
		if (!bad_at(msg, 5, badv[i].key))
			fail_msg("'%s': got '%s'", badv[i].kv, msg);
	}
	free(c);
}

static void test_client_config(void **state)
{
	(void)state;
	hw_client_config c;
	char err[512];
	hw_client_config_defaults(&c);
	assert_int_equal(c.node_id, -1);
	assert_string_equal(c.control_listen, "udp:0.0.0.0:0");
	static const char good[] = "# rig client\nhiwater.transport=dpdk\n"
				   "dpdk.eal.args=--no-huge -m 256 --no-pci --vdev=net_af_packet0,iface=data0\n"
				   "hiwater.dpdk.ip=10.77.0.200\nhiwater.dpdk.port=net_af_packet0\n"
				   "hiwater.dpdk.udp.port=9100\nhiwater.dpdk.mtu=1500\ncluster.id=4000000000\n"
				   "hiwater.control.listen=udp:10.99.0.200:0\nhiwater.client.node.id=123456\n";
	assert_int_equal(hw_client_config_parse(&c, "client.properties", good, sizeof(good) - 1, err, sizeof(err)), 0);
	assert_int_equal(c.transport_dpdk, 1);
	assert_string_equal(c.eal_args, "--no-huge -m 256 --no-pci --vdev=net_af_packet0,iface=data0");
	assert_string_equal(c.dpdk_ip, "10.77.0.200");
	assert_string_equal(c.dpdk_port, "net_af_packet0");
	assert_int_equal(c.dpdk_udp_port, 9100);
	assert_int_equal(c.dpdk_mtu, 1500);
	assert_true(c.cluster_id == 4000000000u);
	assert_string_equal(c.control_listen, "udp:10.99.0.200:0");
	assert_string_equal(c.data_listen, "udp:0.0.0.0:0");
	assert_int_equal(c.node_id, 123456);
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"hiwater.transport=rdma\n", "client.properties:1: bad value 'rdma' for key 'hiwater.transport'"},
		{"hiwater.client.node.id=-2\n", "client.properties:1: bad value for key 'hiwater.client.node.id'"},
		{"hiwater.dpdk.mtu=100\n", "client.properties:1: bad value for key 'hiwater.dpdk.mtu'"},
		{"\nhiwater.dpdk.ip=10.77.0\n", "client.properties:2: bad value for key 'hiwater.dpdk.ip'"},
		{"hiwater.transport=dpdk\n", "default: bad value for key 'dpdk.eal.args': required"},
		{"cluster.id=-1\n", "client.properties:1: bad value for key 'cluster.id'"},
		{"hiwater.client.node.id=5\n", "client.properties:1: bad value for key 'hiwater.client.node.id'"},
		{"hiwater.control.listen=0.0.0.0:0\n", "client.properties:1: bad value for key 'hiwater.control.listen'"},
		{"hiwater.dpdk.udp.port=0\n", "client.properties:1: bad value for key 'hiwater.dpdk.udp.port'"},
		{"hiwater.dpdk.portt=1\n", "client.properties:1: unknown key 'hiwater.dpdk.portt'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(hw_client_config_parse(&c, "client.properties", bad[i].text, strlen(bad[i].text),
							err, sizeof(err)), -EINVAL);
		/* "<file>:<line>: bad value ['<v>'] for key '<k>'": the schema's
		 * message quotes the value, a rule's does not */
		const char *k = strstr(bad[i].want, " for key ");
		char head[128];
		snprintf(head, sizeof(head), "%.*s", k ? (int)(k - bad[i].want) : 0, bad[i].want);
		const char *at = k ? strstr(err, head) : strstr(err, bad[i].want);
		if (!at || (k && !strstr(at, k)))
			fail_msg("'%s': got '%s', want '%s'", bad[i].text, err, bad[i].want);
	}
	/* from a file, as --command-config reads it */
	const char *path = write_file("client.properties", "cluster.id=7\n");
	assert_int_equal(hw_client_config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.cluster_id, 7);
	assert_int_equal(hw_client_config_load(&c, "/nonexistent/x.properties", err, sizeof(err)) < 0, 1);

	char ep[64];
	assert_int_equal(hw_client_parse_bootstrap("10.203.0.1:9090", ep, sizeof(ep)), 0);
	assert_string_equal(ep, "udp:10.203.0.1:9090");
	assert_int_equal(hw_client_parse_bootstrap("udp:localhost:1", ep, sizeof(ep)), 0);
	assert_string_equal(ep, "udp:127.0.0.1:1");
	assert_int_equal(hw_client_parse_bootstrap("10.203.0.1", ep, sizeof(ep)), -EINVAL);
	assert_int_equal(hw_client_parse_bootstrap("10.203.0.1:0", ep, sizeof(ep)), -EINVAL);
	assert_int_equal(hw_client_parse_bootstrap("0.0.0.0:9090", ep, sizeof(ep)), -EINVAL);
	assert_int_equal(hw_client_parse_bootstrap("broker1:9090", ep, sizeof(ep)), -EINVAL);
}

int main(void)
{
	snprintf(g_dir, sizeof(g_dir), "/tmp/hw-test-addr-XXXXXX");
	if (!mkdtemp(g_dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_advertise),
		cmocka_unit_test(test_dpdk_routes),
		cmocka_unit_test(test_daemon_keys),
		cmocka_unit_test(test_dst_any),
		cmocka_unit_test(test_client_config),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
