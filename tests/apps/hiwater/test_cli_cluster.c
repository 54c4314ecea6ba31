/* test_cli_cluster.c — the CLI's parsers, cluster directory and generated
 * configs (suite 'cli'). No daemon runs here: these are the pieces whose
 * mistakes would make `cluster up` start a wrong cluster. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hw_cluster.h"
#include "hwd_config_schema.h"
#include "hw_rig.h"
#include "../../support/hw_test.h"

static uint64_t g_seed;

static void test_parsers(void **state)
{
	(void)state;
	int64_t v;
	assert_int_equal(hw_cli_parse_duration_ns("10s", &v), 0);
	assert_true(v == 10000000000LL);
	assert_int_equal(hw_cli_parse_duration_ns("250ms", &v), 0);
	assert_true(v == 250000000LL);
	assert_int_equal(hw_cli_parse_duration_ns("1.5", &v), 0);
	assert_true(v == 1500000000LL);
	assert_int_equal(hw_cli_parse_duration_ns("2m", &v), 0);
	assert_true(v == 120000000000LL);
	assert_int_equal(hw_cli_parse_duration_ns("7 s", &v), -EINVAL);
	assert_int_equal(hw_cli_parse_duration_ns("-1s", &v), -EINVAL);
	assert_int_equal(hw_cli_parse_size("16k", &v), 0);
	assert_true(v == 16384);
	assert_int_equal(hw_cli_parse_size("1KiB", &v), 0);
	assert_true(v == 1024);
	assert_int_equal(hw_cli_parse_size("2x", &v), -EINVAL);
	int16_t a;
	assert_int_equal(hw_cli_parse_acks("all", &a), 0);
	assert_int_equal(a, -1);
	assert_int_equal(hw_cli_parse_acks("0", &a), 0);
	assert_int_equal(a, 0);
	assert_int_equal(hw_cli_parse_acks("2", &a), -EINVAL);
	assert_int_equal(hw_cli_parse_i64("12", 1, 10, &v), -EINVAL);
	assert_int_equal(hw_cli_parse_i64("9", 1, 10, &v), 0);
	assert_int_equal(hw_cli_parse_i64("9x", 1, 10, &v), -EINVAL);

	/* random round trip of integers through the i64 parser */
	hw_rng r = {g_seed};
	for (int i = 0; i < 1000; i++) {
		int64_t x = (int64_t)(hw_rng_next(&r) >> 2) - (INT64_MAX >> 2);
		char buf[32];
		snprintf(buf, sizeof(buf), "%lld", (long long)x);
		assert_int_equal(hw_cli_parse_i64(buf, INT64_MIN, INT64_MAX, &v), 0);
		assert_true(v == x);
	}
}

static void test_kvs(void **state)
{
	(void)state;
	hw_cli_kvs kv = {0};
	assert_int_equal(hw_cli_kvs_add(&kv, "min.insync.replicas=2"), 0);
	assert_int_equal(hw_cli_kvs_add(&kv, "a=b=c"), 0);
	assert_int_equal(hw_cli_kvs_add(&kv, "min.insync.replicas=3"), 0); /* last wins */
	assert_int_equal(kv.n, 2);
	assert_string_equal(hw_cli_kvs_get(&kv, "min.insync.replicas"), "3");
	assert_string_equal(hw_cli_kvs_get(&kv, "a"), "b=c");
	assert_null(hw_cli_kvs_get(&kv, "b"));
	assert_int_equal(hw_cli_kvs_add(&kv, "novalue"), -EINVAL);
	assert_int_equal(hw_cli_kvs_add(&kv, "=x"), -EINVAL);
}

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The generated configs: each node its own id, role, ports and log dir;
 * dpdk brokers a memif link to every other broker and every client slot,
 * with an explicit route per peer; the directory round-trips through
 * cluster.properties. */
/* Regression: `cluster up` took a node that failed with "Address already
 * in use" for ready ("already" contains "ready"), and a test then failed
 * later at topic create with two brokers missing. */
static void test_ready_line(void **state)
{
	(void)state;
	assert_false(hw_cluster_log_says_ready("udp: bind 127.0.0.1:28502: Address already in use\n"
					       "hiwaterd: node 2: start failed: Cannot assign requested address\n", 2));
	assert_true(hw_cluster_log_says_ready("x\nhiwaterd: node 2 ready (roles broker, control udp:1)\n", 2));
	assert_false(hw_cluster_log_says_ready("hiwaterd: node 12 ready (roles broker)\n", 2));
	assert_false(hw_cluster_log_says_ready("hiwaterd: node 2 ready (roles broker)\n", 1));
	assert_false(hw_cluster_log_says_ready(NULL, 1));
}

static void test_configs(void **state)
{
	(void)state;
	char dir[] = "/tmp/hw-cli-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	hw_cluster c = {0};
	snprintf(c.dir, sizeof(c.dir), "%s/c", dir);
	c.brokers = 3;
	snprintf(c.transport, sizeof(c.transport), "dpdk");
	c.base_port = 30000;
	c.client_slots = 4;
	c.cluster_id = (uint32_t)(hw_rng_next(&(hw_rng){g_seed}) | 1);
	assert_int_equal(hw_cli_kvs_add(&c.extra, "replica.lag.time.max.ms=1500"), 0);
	assert_int_equal(hw_cluster_write_configs(&c), 0);

	hw_cluster back;
	assert_int_equal(hw_cluster_load(&back, c.dir), 0);
	assert_int_equal(back.brokers, 3);
	assert_string_equal(back.transport, "dpdk");
	assert_int_equal(back.base_port, 30000);
	assert_int_equal(back.client_slots, 4);
	assert_true(back.cluster_id == c.cluster_id);
	assert_string_equal(hw_cli_kvs_get(&back.extra, "replica.lag.time.max.ms"), "1500");

	char *buf = malloc(16384);
	for (int node = 0; node <= 3; node++) {
		assert_int_equal(hw_cluster_render_config(&c, node, buf, 16384), 0);
		char want[128];
		snprintf(want, sizeof(want), "\nnode.id=%d\n", node);
		assert_non_null(strstr(buf, want));
		snprintf(want, sizeof(want), "process.roles=%s\n", node ? "broker" : "controller");
		assert_non_null(strstr(buf, want));
		snprintf(want, sizeof(want), "hiwater.control.endpoint=127.0.0.1:%d\n", 30000 + node);
		assert_non_null(strstr(buf, want));
		snprintf(want, sizeof(want), "hiwater.metrics.port=%d\n", 30400 + node);
		assert_non_null(strstr(buf, want));
		assert_non_null(strstr(buf, "controller.quorum.voters=0@127.0.0.1:30000\n"));
		assert_non_null(strstr(buf, "replica.lag.time.max.ms=1500\n"));
		if (node == 0) {
			assert_null(strstr(buf, "dpdk.eal.args"));
			continue;
		}
		/* 2 peer brokers + 4 client slots */
		assert_int_equal(count_lines_with(buf, "--vdev=net_memif_"), 6);
		assert_int_equal(count_lines_with(buf, "\nhiwater.neighbour."), 6);
		assert_non_null(strstr(buf, "--no-huge"));
		for (int p = 1; p <= 3; p++) {
			snprintf(want, sizeof(want), "\nhiwater.neighbour.%d=dpdk:", p);
			assert_true((strstr(buf, want) != NULL) == (p != node));
		}
		snprintf(want, sizeof(want), "--file-prefix=");
		assert_non_null(strstr(buf, want));
	}
	/* Too small a buffer is an error, not a truncated config. */
	assert_int_equal(hw_cluster_render_config(&c, 1, buf, 200), -ENOSPC);

	/* Client slots: exclusive while held, reusable after release. */
	int fd1, fd2, fd3;
	int s1 = hw_cluster_claim_slot(&c, &fd1);
	int s2 = hw_cluster_claim_slot(&c, &fd2);
	assert_true(s1 >= 0 && s2 >= 0 && s1 != s2);
	close(fd1);
	int s3 = hw_cluster_claim_slot(&c, &fd3);
	assert_int_equal(s3, s1);
	close(fd2);
	close(fd3);

	/* No daemon ran: every node is DOWN. */
	for (int node = 0; node <= 3; node++) {
		pid_t pid;
		assert_int_equal(hw_cluster_node_state(&c, node, &pid), HW_NODE_DOWN);
	}
	free(buf);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' /tmp/hiwater-%08x", dir, c.cluster_id);
	assert_int_equal(system(cmd), 0);
}

/* `--rig netns`: names derive from the directory alone (so `down` finds
 * them after a crash), the record round-trips through cluster.properties,
 * and each node's config puts it on its namespace's addresses. No
 * namespace is made here (hw_rig_up is the integration tests' business). */
static void test_rig_configs(void **state)
{
	(void)state;
	char dir[] = "/tmp/hw-cli-rig-XXXXXX";
	assert_non_null(mkdtemp(dir));
	hw_cluster c = {0};
	snprintf(c.dir, sizeof(c.dir), "%s/c", dir);
	c.brokers = 3;
	snprintf(c.transport, sizeof(c.transport), "dpdk");
	c.base_port = 30000;
	c.client_slots = 4;
	c.cluster_id = 77;
	snprintf(c.rig, sizeof(c.rig), "netns");
	snprintf(c.rig_port, sizeof(c.rig_port), "af_packet");
	hw_rig_tag(c.dir, c.rig_tag);
	char tag2[8], ta[8], tb[8];
	hw_rig_tag(c.dir, tag2);
	hw_rig_tag("/tmp/rig-a", ta);
	hw_rig_tag("/tmp/rig-b", tb);
	assert_string_equal(c.rig_tag, tag2);
	assert_int_equal(strlen(c.rig_tag), 4);
	assert_int_equal(strspn(c.rig_tag, "0123456789abcdef"), 4);
	assert_string_not_equal(ta, tb);
	assert_int_equal(hw_cli_kvs_add(&c.extra, "hiwater.reactor.lcores=0,1"), 0);
	assert_int_equal(hw_rig_reactors(&c), 2);
	assert_true(hw_rig_port_valid("af_xdp") && hw_rig_port_valid("udp") && !hw_rig_port_valid("memif"));
	assert_int_equal(hw_cluster_write_configs(&c), 0);

	hw_cluster back;
	assert_int_equal(hw_cluster_load(&back, c.dir), 0);
	assert_string_equal(back.rig, "netns");
	assert_string_equal(back.rig_port, "af_packet");
	assert_string_equal(back.rig_tag, c.rig_tag);

	char ns[32], want[256], *buf = malloc(16384);
	hw_rig_ns_name(&c, 2, ns, sizeof(ns));
	snprintf(want, sizeof(want), "hwr%s-n2", c.rig_tag);
	assert_string_equal(ns, want);
	hw_rig_ns_name(&c, HW_RIG_CLIENT_NODE, ns, sizeof(ns));
	snprintf(want, sizeof(want), "hwr%s-cl", c.rig_tag);
	assert_string_equal(ns, want);
	for (int node = 0; node <= 3; node++) {
		assert_int_equal(hw_cluster_render_config(&c, node, buf, 16384), 0);
		assert_non_null(strstr(buf, "controller.quorum.voters=0@10.99.0.1:30000\n"));
		snprintf(want, sizeof(want), "hiwater.control.listen=udp:10.99.0.%d:%d\n", node + 1, 30000 + node);
		assert_non_null(strstr(buf, want));
		assert_null(strstr(buf, "127.0.0.1"));
		if (node == 0) {
			assert_null(strstr(buf, "dpdk.eal.args"));
			continue;
		}
		assert_non_null(strstr(buf, "--vdev=net_af_packet0,iface=data0,qpairs=2,framesz=10240,blocksz=20480,qdisc_bypass=0"));
		snprintf(want, sizeof(want), "--file-prefix=hwr%s-n%d ", c.rig_tag, node);
		assert_non_null(strstr(buf, want));
		snprintf(want, sizeof(want), "hiwater.dpdk.ip=10.77.0.%d\n", node);
		assert_non_null(strstr(buf, want));
		assert_null(strstr(buf, "net_memif"));
		for (int p = 1; p <= 3; p++) {
			snprintf(want, sizeof(want), "\nhiwater.neighbour.%d=dpdk:port=net_af_packet0,ip=10.77.0.%d,queues=2\n",
				 p, p);
			assert_true((strstr(buf, want) != NULL) == (p != node));
		}
	}
	/* the client's files */
	char path[600], *text;
	snprintf(path, sizeof(path), "%s/bootstrap", c.dir);
	assert_int_equal(hw_cli_read_file(path, &text, NULL), 0);
	assert_string_equal(text, "10.99.0.1:30000\n");
	free(text);
	snprintf(path, sizeof(path), "%s/client.properties", c.dir);
	assert_int_equal(hw_cli_read_file(path, &text, NULL), 0);
	assert_non_null(strstr(text, "\nhiwater.dpdk.ip=10.77.0.200\n"));
	assert_non_null(strstr(text, "\nhiwater.control.listen=udp:10.99.0.200:0\n"));
	assert_non_null(strstr(text, "\ncluster.id=77\n"));
	assert_non_null(strstr(text, "iface=data0,qpairs=4,framesz=10240,blocksz=20480,qdisc_bypass=0"));
	free(text);

	/* --port udp: kernel addresses on the data veths, routes between them */
	snprintf(c.rig_port, sizeof(c.rig_port), "udp");
	snprintf(c.transport, sizeof(c.transport), "udp");
	assert_int_equal(hw_cluster_render_config(&c, 2, buf, 16384), 0);
	assert_non_null(strstr(buf, "hiwater.transport=udp\n"));
	assert_non_null(strstr(buf, "hiwater.data.listen=udp:10.99.1.3:30102\n"));
	assert_non_null(strstr(buf, "hiwater.neighbour.1=udp:10.99.1.2:30101\n"));
	assert_null(strstr(buf, "dpdk.eal.args"));
	free(buf);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' /tmp/hiwater-%08x", dir, c.cluster_id);
	assert_int_equal(system(cmd), 0);
}

/* `cluster stop` outlasts a broker's controlled shutdown: for the daemon's
 * default timeout, and for every value its schema accepts (the CLI reads
 * the same bounds; a value it could not read would fall back to the
 * default and SIGKILL a broker still shutting down). */
static void test_stop_timeout(void **state)
{
	(void)state;
	size_t n;
	const hw_prop_def *defs = hwd_config_schema(&n), *d = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(defs[i].name, "hiwater.controlled.shutdown.timeout.ms"))
			d = &defs[i];
	assert_non_null(d);
	assert_true(d->ranged);
	int64_t daemon_default = strtoll(d->def, NULL, 10);
	hw_cluster *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	assert_true(hw_cluster_stop_timeout_ms(c) > daemon_default);
	assert_int_equal(HW_CLUSTER_SHUTDOWN_TIMEOUT_DEFAULT_MS, daemon_default);
	const int64_t vals[] = { d->min, 4000, daemon_default, d->max };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		char kv[96];
		snprintf(kv, sizeof(kv), "hiwater.controlled.shutdown.timeout.ms=%lld", (long long)vals[i]);
		assert_int_equal(hw_cli_kvs_add(&c->extra, kv), 0);
		int stop = hw_cluster_stop_timeout_ms(c);
		if (stop <= vals[i] || stop - vals[i] < HW_CLUSTER_STOP_GRACE_MS)
			fail_msg("shutdown timeout %lld ms: stop waits only %d ms", (long long)vals[i], stop);
	}
	free(c);
}

/* `cluster up --racks` (docs/racks.md): the list is checked, kept in
 * cluster.properties, and broker k gets the ((k-1) mod n)-th name. */
static void test_racks(void **state)
{
	(void)state;
	assert_true(hw_cluster_racks_valid("a,b,c"));
	assert_true(hw_cluster_racks_valid("us-east-1a"));
	assert_false(hw_cluster_racks_valid(""));
	assert_false(hw_cluster_racks_valid("a,,b"));
	assert_false(hw_cluster_racks_valid("a,"));
	assert_false(hw_cluster_racks_valid("a b"));
	assert_false(hw_cluster_racks_valid("a=b"));
	char dir[] = "/tmp/hw-cli-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	hw_cluster c = {0};
	snprintf(c.dir, sizeof(c.dir), "%s/c", dir);
	c.brokers = 5;
	snprintf(c.transport, sizeof(c.transport), "udp");
	c.base_port = 31000;
	c.client_slots = 1;
	c.cluster_id = 77;
	snprintf(c.racks, sizeof(c.racks), "r1,r2");
	assert_int_equal(hw_cluster_write_configs(&c), 0);
	hw_cluster back;
	assert_int_equal(hw_cluster_load(&back, c.dir), 0);
	assert_string_equal(back.racks, "r1,r2");
	static const char *const want[6] = { "", "r1", "r2", "r1", "r2", "r1" };
	char rack[64], *buf = malloc(16384);
	assert_non_null(buf);
	for (int node = 0; node <= 5; node++) {
		assert_int_equal(hw_cluster_rack_of(&back, node, rack, sizeof rack), node ? 0 : -ENOENT);
		assert_string_equal(rack, want[node]);
		assert_int_equal(hw_cluster_render_config(&back, node, buf, 16384), 0);
		char line[80];
		snprintf(line, sizeof line, "\nbroker.rack=%s\n", want[node]);
		assert_true((strstr(buf, line) != NULL) == (node != 0)); /* the controller has none */
	}
	assert_int_equal(hw_cluster_rack_of(&back, 6, rack, sizeof rack), -ENOENT);
	free(buf);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' /tmp/hiwater-%08x", dir, c.cluster_id);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	g_seed = hw_test_seed("cli_cluster");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parsers),
		cmocka_unit_test(test_kvs),
		cmocka_unit_test(test_stop_timeout),
		cmocka_unit_test(test_configs),
		cmocka_unit_test(test_ready_line),
		cmocka_unit_test(test_rig_configs),
		cmocka_unit_test(test_racks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
