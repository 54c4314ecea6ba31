/* hwd_config.c — hiwaterd's configuration: Kafka property names and
 * defaults (server.properties), plus hiwater's own keys.
 *
 * Design note. Every key the daemon understands is declared in one schema
 * (hw_props), so a misspelt or mistyped key fails the start with
 * "<file>:<line>: ..." naming the key, exactly like a bad value. Per-node
 * route keys (hiwater.neighbour.<id>, hiwater.control.neighbour.<id>) are
 * declared for node ids 0..255 and client ids 1000..1063. Values that need
 * more than a type check (process.roles, controller.quorum.voters, endpoint
 * strings) are validated here with the same file:line:key message. The
 * Kafka replica.* and min.insync.replicas keys come from hw_rm.h's table so
 * the broker and the replication core cannot disagree on names or defaults.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_logging.h"
#include "hw_netaddr.h"
#include "hw_netconf.h"
#include "hw_props.h"
#include "hw_quota.h"
#include "hw_reactor.h"
#include "hw_wire_auth.h"
#include "hwd.h"

#define NB_NODE_MAX 256
#define NB_CLIENT_BASE 1000
#define NB_CLIENTS 64
#define NB_COUNT (NB_NODE_MAX + NB_CLIENTS)

static const char *const transports[] = { "udp", "dpdk", NULL };
static const char *const idles[] = { "busy", "backoff", "adaptive", NULL }; /* hw_idle_strategy order */
static const char *const flush_policies[] = { "page_cache", "interval", "fsync_before_ack", NULL };
static const char *const auth_modes[] = { "aes-gcm", "none", NULL };

/* X(name, type, default, doc) — the static part of the schema. */
#define HWD_KEYS(X)                                                                            \
	X("process.roles", STRING, NULL, "broker, controller, or broker,controller")            \
	X("node.id", INT32, NULL, "this node's id (brokers 0..999)")                            \
	X("log.dirs", STRING, "", "comma-separated partition log directories (default log.dir)") \
	X("log.dir", STRING, "/tmp/hiwater-logs", "partition log directory if log.dirs is unset") \
	X("metadata.log.dir", STRING, "", "controller metadata log directory (default: first log dir)") \
	X("controller.quorum.voters", STRING, NULL, "the controller(s): ID@HOST:PORT[,ID@HOST:PORT...] (several only with zookeeper.connect)") \
	X("zookeeper.connect", STRING, "", "ZooKeeper mode: HOST:PORT[,HOST:PORT...] of the ensemble (empty: the embedded single controller)") \
	X("zookeeper.session.timeout.ms", INT32, "18000", "ZooKeeper session timeout: a dead active controller is replaced after this") \
	X("zookeeper.connection.timeout.ms", INT32, "-1", "warn when no ZooKeeper connection for this long (-1: the session timeout)") \
	X("cluster.id", INT64, "0", "cluster id stamped into every frame (u32)")                \
	X("hiwater.cluster.id", INT64, "-1", "overrides cluster.id when >= 0")                  \
	X("hiwater.auth", ENUM, "aes-gcm", "frame authentication: aes-gcm (every frame MACed under the cluster secret) | none (explicit opt-out)") \
	X("hiwater.cluster.secret.file", STRING, "", "file (mode 0600) with the cluster secret: 64 hex digits (required unless hiwater.auth=none)") \
	X("unclean.leader.election.enable", BOOL, "false", "default for topics")                \
	X("eligible.leader.replicas.enable", BOOL, "true", "KIP-966 ELR")                       \
	X("compression.type", ENUM, HW_COMPRESSION_TYPE_DEFAULT, "default codec of topics' stored batches; only 'producer' (as sent) is implemented") \
	X("broker.heartbeat.interval.ms", INT32, "2000", "broker heartbeat period")             \
	X("broker.session.timeout.ms", INT32, "9000", "controller fences a broker silent this long") \
	X("num.partitions", INT32, "1", "default partitions of a new topic")                   \
	X("default.replication.factor", INT32, "1", "default RF of a new topic")               \
	X("controlled.shutdown.enable", BOOL, "true", "SIGTERM moves leadership away first")   \
	X("auto.leader.rebalance.enable", BOOL, "true", "preferred replicas lead again")        \
	X("leader.imbalance.check.interval.seconds", INT32, "300", "how often leaders are rebalanced") \
	X("log.segment.bytes", INT64, "1073741824", "segment roll size")                       \
	X("log.roll.ms", INT64, "604800000", "segment roll age")                               \
	X("log.index.interval.bytes", INT32, "4096", "bytes between offset index entries")     \
	X("log.index.size.max.bytes", INT32, "10485760", "offset index size")                  \
	X("log.retention.bytes", INT64, "-1", "retention by size (-1: unlimited)")            \
	X("log.retention.ms", INT64, "604800000", "retention by age (-1: unlimited)")         \
	X("log.flush.interval.messages", INT64, "9223372036854775807", "fsync every N messages") \
	X("log.flush.interval.ms", INT64, "9223372036854775807", "fsync every N ms")          \
	X("hiwater.log.flush.policy", ENUM, "page_cache", "page_cache | interval | fsync_before_ack") \
	X("log.preallocate", BOOL, "false", "fallocate new segments to log.segment.bytes (trimmed when sealed and at close)") \
	X("hiwater.log.direct.io", BOOL, "false", "append segments with O_DIRECT from the aligned tail buffer: no page-cache copy or writeback; acks wait for the device") \
	X("hiwater.log.inline.write.max.bytes", INT32, "65536", "writes up to this size by pwrite on the reactor when the fs would punt io_uring buffered writes to a worker (0: all io_uring)") \
	X("hiwater.log.writeback.window.bytes", INT32, "16777216", "buffered writes: start writeback of each window written and drop the one 3 behind from the page cache, so appends reuse freed pages (0: off; 65536 .. 1 GiB)") \
	X("hiwater.transport", ENUM, "udp", "data-plane transport: udp | dpdk")                 \
	X("dpdk.eal.args", STRING, "", "DPDK EAL arguments")                                    \
	X("hiwater.dpdk.ip", STRING, "", "our IPv4 address on DPDK ports")                      \
	X("hiwater.dpdk.udp.port", INT32, "9092", "our UDP port on DPDK ports")                 \
	X("hiwater.dpdk.mtu", INT32, "0", "MTU of non-memif DPDK ports (0: largest, <= 9000)")  \
	X("hiwater.control.listen", STRING, "", "control endpoint udp:HOST:PORT")               \
	X("hiwater.control.endpoint", STRING, "", "alias: HOST:PORT of the control endpoint")   \
	X("hiwater.data.listen", STRING, "", "data endpoint (udp transport) udp:HOST:PORT")     \
	X("hiwater.udp.endpoint", STRING, "", "alias: HOST:PORT of the data endpoint")          \
	X("hiwater.control.advertised", STRING, "", "control endpoint others reach us at, udp:HOST:PORT (default: the listen address; wildcard host: our address toward the controller)") \
	X("hiwater.data.advertised", STRING, "", "data endpoint (udp transport) registered with the controller, udp:HOST:PORT (default as hiwater.control.advertised)") \
	X("hiwater.dpdk.port", STRING, "", "DPDK port (vdev name or port id) that routes learned from the controller's metadata go through (default: the only port)") \
	X("hiwater.cluster.brokers", INT32, "0", "local cluster: brokers 1..N (derives memif routes)") \
	X("hiwater.cluster.client.slots", INT32, "0", "local cluster: client slots (memif ports after the peers)") \
	X("hiwater.reactor.lcores", STRING, "", "CPU list: one pinned reactor per entry (partitions sharded over them)") \
	X("hiwater.idle.strategy", ENUM, "adaptive", "busy | backoff | adaptive (docs/idle.md)") \
	X("hiwater.idle.spin.us", INT32, "20", "backoff: poll (yielding) this long after work before sleeping") \
	X("hiwater.idle.spin.max.us", INT32, "250", "adaptive: the longest learnt spin window") \
	X("hiwater.idle.sleep.min.us", INT32, "10", "backoff: first sleep cap (doubles while idle)") \
	X("hiwater.idle.sleep.max.us", INT32, "0", "largest sleep cap; 0 = automatic: 20 ms when every source wakes the reactor, else 1 ms") \
	X("hiwater.metrics.port", INT32, "0", "Prometheus endpoint port (0: off)")             \
	X("hiwater.metrics.listen", STRING, "127.0.0.1", "IPv4 address the Prometheus endpoint listens on (0.0.0.0: every interface)") \
	X("hiwater.controller.resync.interval.ms", INT32, "10000", "controller re-pushes partition states") \
	X("hiwater.controlled.shutdown.timeout.ms", INT32, "30000", "give up moving leadership after this") \
	X("hiwater.log.level", STRING, "info", "log levels, e.g. info,ctrl=debug")             \
	X("listeners", STRING, "", "Kafka listener PLAINTEXT://HOST:PORT (empty: none)")        \
	X("advertised.listeners", STRING, "", "Kafka listener registered for clients (default: listeners)") \
	X("auto.create.topics.enable", BOOL, "true", "Metadata/Produce create missing topics")  \
	X("socket.request.max.bytes", INT64, "104857600", "largest Kafka request accepted")    \
	X("max.connections", INT64, "2147483647", "Kafka client connections accepted at once") \
	X("offsets.topic.num.partitions", INT32, "50", "partitions of __consumer_offsets")     \
	X("offsets.topic.replication.factor", INT32, "3", "replication factor of __consumer_offsets") \
	X("group.initial.rebalance.delay.ms", INT32, "3000", "a new group's first JoinGroup waits this for more members") \
	X("group.min.session.timeout.ms", INT32, "6000", "smallest session.timeout.ms a member may ask for") \
	X("group.max.session.timeout.ms", INT32, "1800000", "largest session.timeout.ms a member may ask for") \
	X("group.max.size", INT32, "2147483647", "members of one group at most") \
	X("offset.metadata.max.bytes", INT32, "4096", "largest commit metadata") \
	X("offsets.retention.minutes", INT64, "10080", "committed offsets of an empty group are kept this long") \
	X("offsets.commit.timeout.ms", INT32, "5000", "an offset commit's acks=all append waits this long")

static hw_prop_def *build_schema(size_t *n_out, char (**names_out)[48])
{
	static const hw_prop_def fixed[] = {
#define D(name, type, def, doc) { name, HW_PROP_##type, def, doc, NULL },
		HWD_KEYS(D)
#undef D
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	static const struct { const char *name; int64_t def; } rm_keys[] = {
#define R(field, name, def) { name, def },
		HW_RM_KAFKA_CONFIG_TABLE(R)
#undef R
	};
	size_t nrm = sizeof(rm_keys) / sizeof(rm_keys[0]);
	size_t n = nfixed + nrm + 2 * NB_COUNT;
	hw_prop_def *defs = calloc(n, sizeof(*defs));
	char (*names)[48] = calloc(nrm + 2 * NB_COUNT, sizeof(*names));
	if (!defs || !names) {
		free(defs);
		free(names);
		return NULL;
	}
	size_t k = 0, nk = 0;
	for (size_t i = 0; i < nfixed; i++) {
		defs[k] = fixed[i];
		if (strcmp(defs[k].name, "hiwater.transport") == 0)
			defs[k].choices = transports;
		else if (strcmp(defs[k].name, "hiwater.idle.strategy") == 0)
			defs[k].choices = idles;
		else if (strcmp(defs[k].name, "hiwater.log.flush.policy") == 0)
			defs[k].choices = flush_policies;
		else if (strcmp(defs[k].name, "compression.type") == 0)
			defs[k].choices = hw_compression_types;
		else if (strcmp(defs[k].name, "hiwater.auth") == 0)
			defs[k].choices = auth_modes;
		k++;
	}
	for (size_t i = 0; i < nrm; i++) {
		snprintf(names[nk], sizeof(names[nk]), "%lld", (long long)rm_keys[i].def);
		defs[k++] = (hw_prop_def){ rm_keys[i].name, HW_PROP_INT64, names[nk++],
					   "Kafka broker config (hw_rm.h)", NULL };
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < NB_COUNT; i++) {
			int node = i < NB_NODE_MAX ? i : NB_CLIENT_BASE + (i - NB_NODE_MAX);
			snprintf(names[nk], sizeof(names[nk]), "hiwater.%sneighbour.%d",
				 pass ? "control." : "", node);
			defs[k++] = (hw_prop_def){ names[nk++], HW_PROP_STRING, "",
						   pass ? "control-plane route" : "data-plane route", NULL };
		}
	*n_out = k;
	*names_out = names;
	return defs;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hiwaterd --config server.properties [--override key=value ...] [--print-config]\n"
		"\n"
		"Runs a hiwater node: a broker, the controller, or both (process.roles).\n"
		"Kafka property names and defaults; see README for hiwater's own keys.\n"
		"Exit status: 0 after a clean shutdown (SIGTERM/SIGINT), 2 on a bad\n"
		"configuration (the message names file, line and key), 1 on other errors.\n");
}

/* "ID@HOST:PORT" -> id and "udp:HOST:PORT". */
static int parse_voter(const char *s, int32_t *id, char *ep, size_t cap)
{
	const char *at = strchr(s, '@');
	if (!at || strchr(s, ','))
		return -EINVAL;
	char *end;
	long v = strtol(s, &end, 10);
	if (end != at || v < 0 || v >= 1000)
		return -EINVAL;
	const char *hp = at + 1;
	const char *colon = strrchr(hp, ':');
	if (!colon || colon == hp || !colon[1])
		return -EINVAL;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -EINVAL;
	*id = (int32_t)v;
	snprintf(ep, cap, "udp:%.*s:%ld", (int)(colon - hp), hp, port);
	return 0;
}

/* "ID@HOST:PORT[,ID@HOST:PORT...]" -> c->voters (distinct ids); the
 * first one becomes controller_id/ep. 0 / -EINVAL. */
static int parse_voters(const char *s, hwd_config *c)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", s);
	c->n_voters = 0;
	for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (c->n_voters == HWD_MAX_VOTERS)
			return -EINVAL;
		hwd_neighbour *v = &c->voters[c->n_voters];
		if (parse_voter(tok, &v->node, v->ep, sizeof(v->ep)))
			return -EINVAL;
		for (int i = 0; i < c->n_voters; i++)
			if (c->voters[i].node == v->node)
				return -EINVAL;
		c->n_voters++;
	}
	if (!c->n_voters)
		return -EINVAL;
	c->controller_id = c->voters[0].node;
	snprintf(c->controller_ep, sizeof(c->controller_ep), "%s", c->voters[0].ep);
	return 0;
}

/* Accept "udp:HOST:PORT" or "HOST:PORT" (alias keys); "" stays "". */
static int norm_udp_ep(const char *s, char *out, size_t cap)
{
	if (!*s) {
		out[0] = 0;
		return 0;
	}
	const char *hp = strncmp(s, "udp:", 4) == 0 ? s + 4 : s;
	const char *colon = strrchr(hp, ':');
	char *end;
	if (!colon || colon == hp)
		return -EINVAL;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535 || colon[1] == 0)
		return -EINVAL;
	snprintf(out, cap, "udp:%s", hp);
	return 0;
}

/* Where a key was set last: "--override" if an override set it, else the
 * file line that defines it (0: not in the file, i.e. a default). */
static int g_argc;
static char **g_argv;

static int key_line(const char *path, const char *key, int *from_override)
{
	*from_override = 0;
	for (int i = 1; i + 1 < g_argc; i++)
		if (!strcmp(g_argv[i], "--override") && !strncmp(g_argv[i + 1], key, strlen(key)) &&
		    g_argv[i + 1][strlen(key)] == '=')
			*from_override = 1;
	if (*from_override)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[4096];
	int no = 0, found = 0;
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f)) {
		no++;
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, key, kl) && strchr(" \t=:", p[kl]))
			found = no;
	}
	fclose(f);
	return found;
}

static int key_err(const hw_props *p, const hwd_config *c, const char *key, const char *what);

/* An endpoint a socket binds or others send to: "udp:A.B.C.D:PORT" (or
 * localhost); "" is fine (unset). 0, or -1 after key_err. */
static int check_udp_ep(const hw_props *p, const hwd_config *c, const char *key, const char *ep)
{
	hw_endpoint e;
	if (!ep[0] || (hw_endpoint_parse(ep, &e) == 0 && e.kind == HW_EP_UDP))
		return 0;
	return key_err(p, c, key, "expected udp:HOST:PORT (HOST an IPv4 address)");
}

static int key_err(const hw_props *p, const hwd_config *c, const char *key, const char *what)
{
	(void)p;
	int ovr;
	int line = key_line(c->path, key, &ovr);
	if (ovr)
		fprintf(stderr, "hiwaterd: --override: bad value for key '%s': %s\n", key, what);
	else if (line)
		fprintf(stderr, "hiwaterd: %s:%d: bad value for key '%s': %s\n", c->path, line, key, what);
	else
		fprintf(stderr, "hiwaterd: %s: bad value for key '%s' (default): %s\n", c->path, key, what);
	return -1;
}

/* "PLAINTEXT://HOST:PORT" -> host, port (HOST may be empty or 0.0.0.0). */
static int parse_listener(const char *v, char *host, size_t cap, int32_t *port)
{
	const char *pfx = "PLAINTEXT://";
	if (strncmp(v, pfx, strlen(pfx)))
		return -EINVAL;
	const char *hp = v + strlen(pfx);
	const char *colon = strrchr(hp, ':');
	if (!colon || (size_t)(colon - hp) >= cap)
		return -EINVAL;
	char *end;
	long pt = strtol(colon + 1, &end, 10);
	if (*end || pt <= 0 || pt > 65535)
		return -EINVAL;
	memcpy(host, hp, (size_t)(colon - hp));
	host[colon - hp] = 0;
	*port = (int32_t)pt;
	return 0;
}

/* The group coordinator keys (docs/groups.md "Configuration"). 0 or -1 (printed). */
static int group_config(const hw_props *p, hwd_config *c)
{
	hwd_group_config *g = &c->group;
	char err[256];
	if (hw_props_get_int32(p, "group.initial.rebalance.delay.ms", 3000, &g->initial_rebalance_delay_ms, err, sizeof(err)) ||
	    hw_props_get_int32(p, "group.min.session.timeout.ms", 6000, &g->min_session_timeout_ms, err, sizeof(err)) ||
	    hw_props_get_int32(p, "group.max.session.timeout.ms", 1800000, &g->max_session_timeout_ms, err, sizeof(err)) ||
	    hw_props_get_int32(p, "group.max.size", INT32_MAX, &g->max_size, err, sizeof(err)) ||
	    hw_props_get_int32(p, "offset.metadata.max.bytes", 4096, &g->offset_metadata_max_bytes, err, sizeof(err)) ||
	    hw_props_get_int64(p, "offsets.retention.minutes", 10080, &g->offsets_retention_minutes, err, sizeof(err)) ||
	    hw_props_get_int32(p, "offsets.commit.timeout.ms", 5000, &g->offsets_commit_timeout_ms, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		return -1;
	}
	if (g->initial_rebalance_delay_ms < 0) { key_err(p, c, "group.initial.rebalance.delay.ms", "expected >= 0"); return -1; }
	if (g->min_session_timeout_ms < 0) { key_err(p, c, "group.min.session.timeout.ms", "expected >= 0"); return -1; }
	if (g->max_session_timeout_ms < g->min_session_timeout_ms) {
		key_err(p, c, "group.max.session.timeout.ms", "expected >= group.min.session.timeout.ms");
		return -1;
	}
	if (g->max_size < 1) { key_err(p, c, "group.max.size", "expected >= 1"); return -1; }
	if (g->offset_metadata_max_bytes < 0) { key_err(p, c, "offset.metadata.max.bytes", "expected >= 0"); return -1; }
	if (g->offsets_retention_minutes < 1 || g->offsets_retention_minutes > INT64_MAX / 60000) {
		key_err(p, c, "offsets.retention.minutes", "expected >= 1");
		return -1;
	}
	if (g->offsets_commit_timeout_ms < 1) { key_err(p, c, "offsets.commit.timeout.ms", "expected >= 1"); return -1; }
	return 0;
}

/* The broker configs DescribeConfigs reports (docs/kafka.md "Semantics"):
 * every key of the schema with a Kafka name, its value, and whether it was
 * set. Per-node route keys and hiwater's own keys are left out. */
static void kafka_described(const hw_props *p, hwd_config *c, const hw_prop_def *defs, size_t ndefs)
{
	hwd_kafka_config *k = &c->kafka;
	k->n_described = 0;
	for (size_t i = 0; i < ndefs && k->n_described < HWD_KAFKA_DESCRIBED_MAX; i++) {
		const char *name = defs[i].name, *v = NULL;
		char err[64];
		if (!strncmp(name, "hiwater.", 8) || strlen(name) >= sizeof(k->described[0].name) ||
		    hw_props_get_string(p, name, "", &v, err, sizeof(err)))
			continue;
		struct hwd_kafka_kv *e = &k->described[k->n_described++];
		snprintf(e->name, sizeof(e->name), "%s", name);
		snprintf(e->value, sizeof(e->value), "%s", v ? v : "");
		e->is_set = (uint8_t)hw_props_is_set(p, name);
	}
}

/* The Kafka listener keys (docs/kafka.md "Configuration"). 0 or -1 (printed). */
static int kafka_config(const hw_props *p, hwd_config *c)
{
	hwd_kafka_config *k = &c->kafka;
	char err[256];
	char tmp[HWD_EP_MAX];
	const char *sv;
	int32_t rf;
	if (hw_props_get_string(p, "listeners", "", &sv, err, sizeof(err)))
		goto bad;
	snprintf(k->listeners, sizeof(k->listeners), "%s", sv);
	if (hw_props_get_string(p, "advertised.listeners", "", &sv, err, sizeof(err)))
		goto bad;
	snprintf(k->advertised, sizeof(k->advertised), "%s", sv);
	if (hw_props_get_bool(p, "auto.create.topics.enable", 1, &k->auto_create_topics, err, sizeof(err)) ||
	    hw_props_get_int64(p, "socket.request.max.bytes", 0, &k->socket_request_max_bytes, err, sizeof(err)) ||
	    hw_props_get_int64(p, "max.connections", 0, &k->max_connections, err, sizeof(err)) ||
	    hw_props_get_int32(p, "offsets.topic.num.partitions", 0, &k->offsets_topic_num_partitions, err,
			       sizeof(err)) ||
	    hw_props_get_int32(p, "offsets.topic.replication.factor", 0, &rf, err, sizeof(err)) ||
	    hw_props_get_int32(p, "num.partitions", 1, &k->num_partitions, err, sizeof(err)) ||
	    hw_props_get_int32(p, "default.replication.factor", 1, &k->default_replication_factor, err,
			       sizeof(err)))
		goto bad;
	if (rf < 1 || rf > HW_MAX_RF) {
		key_err(p, c, "offsets.topic.replication.factor", "expected 1 .. 7");
		return -1;
	}
	k->offsets_topic_replication_factor = (int16_t)rf;
	if (k->offsets_topic_num_partitions < 1) {
		key_err(p, c, "offsets.topic.num.partitions", "expected >= 1");
		return -1;
	}
	if (k->socket_request_max_bytes < 1024 || k->socket_request_max_bytes > INT32_MAX) {
		key_err(p, c, "socket.request.max.bytes", "expected 1024 .. 2147483647");
		return -1;
	}
	if (k->max_connections < 1) {
		key_err(p, c, "max.connections", "expected >= 1");
		return -1;
	}
	if (!k->listeners[0])
		return 0;
	if (parse_listener(k->listeners, k->listen_host, sizeof(k->listen_host), &k->listen_port) < 0) {
		key_err(p, c, "listeners", "expected PLAINTEXT://HOST:PORT (one listener)");
		return -1;
	}
	char host[64];
	int32_t port = k->listen_port;
	snprintf(host, sizeof(host), "%s", k->listen_host);
	if (k->advertised[0] && parse_listener(k->advertised, host, sizeof(host), &port) < 0) {
		key_err(p, c, "advertised.listeners", "expected PLAINTEXT://HOST:PORT (one listener)");
		return -1;
	}
	if (!host[0] || !strcmp(host, "0.0.0.0"))
		snprintf(host, sizeof(host), "127.0.0.1");
	snprintf(tmp, sizeof(tmp), "%s:%d", host, port);
	snprintf(k->adv_hostport, sizeof(k->adv_hostport), "%s", tmp);
	return 0;
bad:
	fprintf(stderr, "hiwaterd: %s\n", err);
	return -1;
}

int hwd_config_load(int argc, char **argv, hwd_config *c)
{
	memset(c, 0, sizeof(*c));
	g_argc = argc;
	g_argv = argv;
	const char *cfg_path = NULL;
	int print = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			cfg_path = argv[++i];
		} else if (!strcmp(argv[i], "--override") && i + 1 < argc) {
			i++; /* applied after the file */
		} else if (!strcmp(argv[i], "--print-config")) {
			print = 1;
		} else {
			fprintf(stderr, "hiwaterd: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return -1;
		}
	}
	if (!cfg_path) {
		fprintf(stderr, "hiwaterd: --config FILE is required\n");
		usage(stderr);
		return -1;
	}
	snprintf(c->path, sizeof(c->path), "%s", cfg_path);
	size_t ndefs;
	char (*names)[48] = NULL;
	hw_prop_def *defs = build_schema(&ndefs, &names);
	if (!defs) {
		fprintf(stderr, "hiwaterd: out of memory\n");
		return -1;
	}
	char err[512];
	hw_props *p = NULL;
	int rc = hw_props_create(&p, defs, ndefs, err, sizeof(err));
	if (rc == 0)
		rc = hw_props_load_file(p, cfg_path, err, sizeof(err));
	for (int i = 1; rc == 0 && i < argc; i++)
		if (!strcmp(argv[i], "--override") && i + 1 < argc)
			rc = hw_props_set_arg(p, argv[++i], "--override", err, sizeof(err));
	if (rc == 0)
		rc = hw_props_check_required(p, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		goto fail;
	}
	rc = -1;
	const char *s;
	int b;
	int64_t v64;

#define GET_STR(key, dst)                                                        \
	do {                                                                     \
		if (hw_props_get_string(p, key, "", &s, err, sizeof(err))) {     \
			fprintf(stderr, "hiwaterd: %s\n", err);                  \
			goto fail;                                               \
		}                                                                \
		snprintf(dst, sizeof(dst), "%s", s);                             \
	} while (0)
#define GET_I32(key, dst)                                                        \
	do {                                                                     \
		if (hw_props_get_int32(p, key, 0, &(dst), err, sizeof(err))) {   \
			fprintf(stderr, "hiwaterd: %s\n", err);                  \
			goto fail;                                               \
		}                                                                \
	} while (0)
#define GET_I64(key, dst)                                                        \
	do {                                                                     \
		if (hw_props_get_int64(p, key, 0, &(dst), err, sizeof(err))) {   \
			fprintf(stderr, "hiwaterd: %s\n", err);                  \
			goto fail;                                               \
		}                                                                \
	} while (0)
#define GET_BOOL(key, dst)                                                       \
	do {                                                                     \
		if (hw_props_get_bool(p, key, 0, &b, err, sizeof(err))) {        \
			fprintf(stderr, "hiwaterd: %s\n", err);                  \
			goto fail;                                               \
		}                                                                \
		dst = b;                                                         \
	} while (0)

	/* ---- roles and identity */
	GET_STR("process.roles", c->roles);
	if (!strcmp(c->roles, "broker"))
		c->is_broker = 1;
	else if (!strcmp(c->roles, "controller"))
		c->is_controller = 1;
	else if (!strcmp(c->roles, "broker,controller") || !strcmp(c->roles, "controller,broker"))
		c->is_broker = c->is_controller = 1;
	else {
		key_err(p, c, "process.roles", "expected broker, controller or broker,controller");
		goto fail;
	}
	GET_I32("node.id", c->node_id);
	if (c->node_id < 0 || c->node_id >= 1000) {
		key_err(p, c, "node.id", "expected 0..999");
		goto fail;
	}
	char voters[1024];
	GET_STR("controller.quorum.voters", voters);
	GET_STR("zookeeper.connect", c->zk_connect);
	GET_I32("zookeeper.session.timeout.ms", c->zk_session_timeout_ms);
	GET_I32("zookeeper.connection.timeout.ms", c->zk_connection_timeout_ms);
	if (c->zk_session_timeout_ms < 100) {
		key_err(p, c, "zookeeper.session.timeout.ms", "must be >= 100");
		goto fail;
	}
	if (c->zk_connection_timeout_ms < 0)
		c->zk_connection_timeout_ms = c->zk_session_timeout_ms;
	if (parse_voters(voters, c)) {
		key_err(p, c, "controller.quorum.voters", "expected ID@HOST:PORT[,ID@HOST:PORT...] (distinct ids)");
		goto fail;
	}
	if (c->n_voters > 1 && c->is_controller && !c->zk_connect[0]) {
		key_err(p, c, "controller.quorum.voters",
			"several voters need zookeeper.connect (the embedded controller is a single voter)");
		goto fail;
	}
	int self_voter = -1;
	for (int i = 0; i < c->n_voters; i++)
		if (c->voters[i].node == c->node_id)
			self_voter = i;
	if (c->is_controller && self_voter < 0) {
		key_err(p, c, "controller.quorum.voters", "a controller's node.id must be the voter's id");
		goto fail;
	}
	if (c->is_controller) {
		c->controller_id = c->node_id;
		snprintf(c->controller_ep, sizeof(c->controller_ep), "%s", c->voters[self_voter].ep);
	}
	if (!c->is_controller && self_voter >= 0) {
		key_err(p, c, "node.id", "a broker-only node cannot have the controller's id");
		goto fail;
	}
	int64_t cid, hcid;
	GET_I64("cluster.id", cid);
	GET_I64("hiwater.cluster.id", hcid);
	if (hcid >= 0)
		cid = hcid;
	if (cid < 0 || cid > UINT32_MAX) {
		key_err(p, c, "cluster.id", "expected 0..4294967295");
		goto fail;
	}
	c->cluster_id = (uint32_t)cid;

	/* ---- frame authentication (docs/security.md): the key is installed
	 * here, before any transport or reactor exists */
	{
		char mode[16];
		GET_STR("hiwater.auth", mode);
		c->auth_none = !strcmp(mode, "none");
		GET_STR("hiwater.cluster.secret.file", c->secret_file);
		if (!c->auth_none) {
			uint8_t key[HW_WIRE_AUTH_KEY_LEN];
			char why[PATH_MAX + 128];
			if (!c->secret_file[0]) {
				key_err(p, c, "hiwater.cluster.secret.file",
					"required (a 0600 file made by `hiwater cluster up`) unless hiwater.auth=none");
				goto fail;
			}
			if (hw_wire_auth_secret_load(c->secret_file, key, why, sizeof why)) {
				key_err(p, c, "hiwater.cluster.secret.file", why);
				goto fail;
			}
			hw_wire_auth_set_key(key, sizeof key);
			memset(key, 0, sizeof key);
		} else {
			hw_wire_auth_set_key(NULL, 0);
		}
	}

	/* ---- directories */
	char dirs[4096];
	GET_STR("log.dirs", dirs);
	if (!dirs[0])
		GET_STR("log.dir", dirs);
	for (char *save = NULL, *tok = strtok_r(dirs, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (c->n_log_dirs == HWD_MAX_LOG_DIRS) {
			key_err(p, c, "log.dirs", "too many directories");
			goto fail;
		}
		snprintf(c->log_dirs[c->n_log_dirs++], PATH_MAX, "%s", tok);
	}
	if (!c->n_log_dirs) {
		key_err(p, c, "log.dirs", "no directory");
		goto fail;
	}
	GET_STR("metadata.log.dir", c->metadata_log_dir);
	if (!c->metadata_log_dir[0])
		snprintf(c->metadata_log_dir, sizeof(c->metadata_log_dir), "%s", c->log_dirs[0]);

	/* ---- endpoints and transports */
	char tmp[HWD_EP_MAX * 2];
	GET_STR("hiwater.control.listen", tmp);
	if (!tmp[0])
		GET_STR("hiwater.control.endpoint", tmp);
	if (norm_udp_ep(tmp, c->control_listen, sizeof(c->control_listen))) {
		key_err(p, c, "hiwater.control.listen", "expected udp:HOST:PORT");
		goto fail;
	}
	if (c->is_controller) {
		/* the voter's address, or the wildcard host on the voter's port */
		if (c->control_listen[0] && strcmp(c->control_listen, c->controller_ep) &&
		    !(hw_netaddr_is_wildcard(c->control_listen) &&
		      !strcmp(strrchr(c->control_listen, ':'), strrchr(c->controller_ep, ':')))) {
			key_err(p, c, "hiwater.control.listen",
				"must be controller.quorum.voters' address, or 0.0.0.0 with its port, on the controller");
			goto fail;
		}
		if (!c->control_listen[0])
			snprintf(c->control_listen, sizeof(c->control_listen), "%s", c->controller_ep);
	} else if (!c->control_listen[0]) {
		snprintf(c->control_listen, sizeof(c->control_listen), "udp:127.0.0.1:0");
	}
	GET_STR("hiwater.data.listen", tmp);
	if (!tmp[0])
		GET_STR("hiwater.udp.endpoint", tmp);
	if (norm_udp_ep(tmp, c->data_listen, sizeof(c->data_listen))) {
		key_err(p, c, "hiwater.data.listen", "expected udp:HOST:PORT");
		goto fail;
	}
	if (!c->data_listen[0])
		snprintf(c->data_listen, sizeof(c->data_listen), "udp:127.0.0.1:0");
	if (check_udp_ep(p, c, "hiwater.control.listen", c->control_listen) ||
	    check_udp_ep(p, c, "hiwater.data.listen", c->data_listen))
		goto fail;
	static const struct { const char *key; size_t off; } adv[] = {
		{ "hiwater.control.advertised", offsetof(hwd_config, control_advertised) },
		{ "hiwater.data.advertised", offsetof(hwd_config, data_advertised) },
	};
	for (size_t i = 0; i < sizeof(adv) / sizeof(adv[0]); i++) {
		char *dst = (char *)c + adv[i].off;
		GET_STR(adv[i].key, tmp);
		if (norm_udp_ep(tmp, dst, HWD_EP_MAX)) {
			key_err(p, c, adv[i].key, "expected udp:HOST:PORT (HOST an IPv4 address)");
			goto fail;
		}
		if (check_udp_ep(p, c, adv[i].key, dst))
			goto fail;
	}
	int idx;
	if (hw_props_get_enum(p, "hiwater.transport", NULL, 0, &idx, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		goto fail;
	}
	c->transport_dpdk = idx == 1;
	GET_STR("dpdk.eal.args", c->eal_args);
	if (c->transport_dpdk && c->is_broker && !c->eal_args[0]) {
		key_err(p, c, "dpdk.eal.args", "required with hiwater.transport=dpdk");
		goto fail;
	}
	GET_STR("hiwater.dpdk.ip", c->dpdk_ip);
	GET_I32("hiwater.dpdk.udp.port", c->dpdk_udp_port);
	if (c->dpdk_udp_port < 1 || c->dpdk_udp_port > 65535 - HWD_MAX_REACTORS) {
		key_err(p, c, "hiwater.dpdk.udp.port", "expected 1 .. 65527 (reactor k uses the port + k)");
		goto fail;
	}
	if (c->dpdk_ip[0]) {
		struct in_addr ia;
		if (inet_pton(AF_INET, c->dpdk_ip, &ia) != 1) {
			key_err(p, c, "hiwater.dpdk.ip", "expected an IPv4 address");
			goto fail;
		}
	}
	GET_STR("hiwater.dpdk.port", c->dpdk_port);
	if (strchr(c->dpdk_port, ',') || strchr(c->dpdk_port, ' ')) {
		key_err(p, c, "hiwater.dpdk.port", "expected a vdev name or a port id");
		goto fail;
	}
	GET_I32("hiwater.dpdk.mtu", c->dpdk_mtu);
	if (c->dpdk_mtu != 0 && (c->dpdk_mtu < 308 || c->dpdk_mtu > 65535)) {   /* HW_DPDK_MTU_MIN */
		key_err(p, c, "hiwater.dpdk.mtu", "expected 0 (the largest the port accepts) or 308..65535");
		goto fail;
	}
	GET_I32("hiwater.cluster.brokers", c->cluster_brokers);
	GET_I32("hiwater.cluster.client.slots", c->cluster_client_slots);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < NB_COUNT; i++) {
			int node = i < NB_NODE_MAX ? i : NB_CLIENT_BASE + (i - NB_NODE_MAX);
			char key[64];
			snprintf(key, sizeof(key), "hiwater.%sneighbour.%d", pass ? "control." : "", node);
			if (!hw_props_is_set(p, key))
				continue;
			GET_STR(key, tmp);
			hwd_neighbour *nb = pass ? &c->control_nb[c->n_control_nb++] : &c->data_nb[c->n_data_nb++];
			nb->node = node;
			if (pass || strncmp(tmp, "dpdk:", 5) != 0) {
				if (norm_udp_ep(tmp, nb->ep, sizeof(nb->ep))) {
					key_err(p, c, key, "expected udp:HOST:PORT");
					goto fail;
				}
			} else {
				snprintf(nb->ep, sizeof(nb->ep), "%.95s", tmp);
			}
		}

	/* ---- controller */
	hw_ctrl_config_defaults(&c->ctrl);
	c->ctrl.node_id = c->controller_id;
	GET_I32("broker.heartbeat.interval.ms", c->heartbeat_interval_ms);
	GET_I32("broker.session.timeout.ms", c->session_timeout_ms);
	if (c->heartbeat_interval_ms < 1) {
		key_err(p, c, "broker.heartbeat.interval.ms", "must be >= 1");
		goto fail;
	}
	if (c->session_timeout_ms <= c->heartbeat_interval_ms) {
		key_err(p, c, "broker.session.timeout.ms", "must be larger than broker.heartbeat.interval.ms");
		goto fail;
	}
	c->ctrl.heartbeat_interval_ms = c->heartbeat_interval_ms;
	c->ctrl.session_timeout_ms = c->session_timeout_ms;
	GET_I32("hiwater.controller.resync.interval.ms", c->ctrl.resync_interval_ms);
	GET_BOOL("unclean.leader.election.enable", c->ctrl.default_unclean);
	GET_BOOL("eligible.leader.replicas.enable", c->ctrl.elr_enabled);
	GET_I32("num.partitions", c->ctrl.default_partitions);
	GET_BOOL("auto.leader.rebalance.enable", c->ctrl.auto_leader_rebalance);
	int32_t imb;
	GET_I32("leader.imbalance.check.interval.seconds", imb);
	if (imb < 1 || imb > 86400) {
		key_err(p, c, "leader.imbalance.check.interval.seconds", "expected 1..86400");
		goto fail;
	}
	c->ctrl.leader_imbalance_check_interval_ms = imb * 1000;
	int32_t rf;
	GET_I32("default.replication.factor", rf);
	if (c->ctrl.default_partitions < 1 || rf < 1 || rf > HW_MAX_RF || c->ctrl.resync_interval_ms < 1) {
		key_err(p, c, c->ctrl.default_partitions < 1 ? "num.partitions"
			      : c->ctrl.resync_interval_ms < 1 ? "hiwater.controller.resync.interval.ms"
							       : "default.replication.factor",
			"out of range");
		goto fail;
	}
	c->ctrl.default_rf = (int16_t)rf;

	/* ---- replication core (Kafka names from hw_rm.h) */
	hw_rm_config_defaults(&c->rm);
	c->rm.node_id = c->node_id;
	c->rm.controller_id = c->controller_id;
#define RM_GET(field, name, def)                                                 \
	do {                                                                     \
		GET_I64(name, v64);                                              \
		if (hw_rm_config_set(&c->rm, name, v64)) {                       \
			key_err(p, c, name, "out of range");                     \
			goto fail;                                               \
		}                                                                \
	} while (0);
	HW_RM_KAFKA_CONFIG_TABLE(RM_GET)
#undef RM_GET
	if (c->rm.min_insync_replicas < 1 || c->rm.min_insync_replicas > INT16_MAX) {
		key_err(p, c, "min.insync.replicas", "must be >= 1");
		goto fail;
	}
	c->ctrl.default_min_isr = (int16_t)c->rm.min_insync_replicas;
	/* compression.type: Kafka's values parse; only its default is served */
	char cbuf[32];
	GET_STR("compression.type", cbuf);
	if (hw_compression_type_check(cbuf) < 0) {
		key_err(p, c, "compression.type", hw_compression_type_error(hw_compression_type_check(cbuf)));
		goto fail;
	}
	if (c->rm.replication_quota_window_num < 1 || c->rm.replication_quota_window_num > HW_QUOTA_MAX_SAMPLES) {
		key_err(p, c, "replication.quota.window.num", "expected 1..64");
		goto fail;
	}
	if (c->rm.replication_quota_window_size_seconds < 1 ||
	    c->rm.replication_quota_window_size_seconds > 86400) {
		key_err(p, c, "replication.quota.window.size.seconds", "expected 1..86400");
		goto fail;
	}

	/* ---- log */
	hwd_log_config_default(&c->log);
	GET_I64("log.segment.bytes", c->log.segment_bytes);
	GET_I64("log.roll.ms", c->log.roll_ms);
	GET_I32("log.index.interval.bytes", c->log.index_interval_bytes);
	GET_I32("log.index.size.max.bytes", c->log.index_size_max_bytes);
	GET_I64("log.retention.bytes", c->log.retention_bytes);
	GET_I64("log.retention.ms", c->log.retention_ms);
	GET_I64("log.flush.interval.messages", c->log.flush_messages);
	GET_I64("log.flush.interval.ms", c->log.flush_ms);
	int32_t inline_max = 0;
	GET_I32("hiwater.log.inline.write.max.bytes", inline_max);
	if (inline_max < 0) {
		key_err(p, c, "hiwater.log.inline.write.max.bytes", "expected >= 0");
		goto fail;
	}
	c->log.inline_write_max_bytes = (uint32_t)inline_max;
	int32_t wb_window = 0;
	GET_I32("hiwater.log.writeback.window.bytes", wb_window);
	if (wb_window != 0 && (wb_window < 65536 || wb_window > (1 << 30))) {
		key_err(p, c, "hiwater.log.writeback.window.bytes", "expected 0 or 65536 .. 1073741824");
		goto fail;
	}
	c->log.writeback_window_bytes = (uint32_t)wb_window;
	GET_BOOL("hiwater.log.direct.io", c->log.direct_io);
	GET_BOOL("log.preallocate", c->log.preallocate);
	if (c->log.segment_bytes < 64 || c->log.segment_bytes >= (1LL << 31)) {
		key_err(p, c, "log.segment.bytes", "expected 64 .. 2147483647");
		goto fail;
	}
	/* every log key the segmented log would refuse when a partition is
	 * opened (hw_log_config_valid), refused here by name at start-up, with
	 * Kafka's validators' bounds (docs/security.md "Configuration") */
	{
		static const struct { const char *key; int64_t lo, hi; const char *want; } lk[] = {
			{ "log.roll.ms", 1, INT64_MAX, "expected >= 1 (ms)" },
			{ "log.index.interval.bytes", 0, INT32_MAX, "expected >= 0" },
			{ "log.index.size.max.bytes", 8, INT32_MAX, "expected >= 8 (one 8-byte index entry)" },
			{ "log.retention.bytes", -1, INT64_MAX, "expected -1 (unlimited) or >= 0" },
			{ "log.retention.ms", -1, INT64_MAX, "expected -1 (unlimited) or >= 0" },
			{ "log.flush.interval.messages", 1, INT64_MAX, "expected >= 1" },
			{ "log.flush.interval.ms", 0, INT64_MAX, "expected >= 0" },
		};
		const int64_t got[] = { c->log.roll_ms, c->log.index_interval_bytes, c->log.index_size_max_bytes,
					c->log.retention_bytes, c->log.retention_ms, c->log.flush_messages,
					c->log.flush_ms };
		for (size_t i = 0; i < sizeof(lk) / sizeof(lk[0]); i++)
			if (got[i] < lk[i].lo || got[i] > lk[i].hi) {
				key_err(p, c, lk[i].key, lk[i].want);
				goto fail;
			}
	}
	if (hw_props_get_enum(p, "hiwater.log.flush.policy", NULL, 0, &idx, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		goto fail;
	}
	hwd_log_config_set_policy(&c->log, idx);

	/* ---- runtime */
	if (hw_props_get_enum(p, "hiwater.idle.strategy", NULL, HW_IDLE_ADAPTIVE, &idx, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		goto fail;
	}
	c->idle_strategy = idx; /* idles[] is in hw_idle_strategy order */
	GET_I32("hiwater.idle.spin.us", c->idle_spin_us);
	if (c->idle_spin_us < 1 || c->idle_spin_us > 1000000) {
		key_err(p, c, "hiwater.idle.spin.us", "expected 1 .. 1000000");
		goto fail;
	}
	GET_I32("hiwater.idle.spin.max.us", c->idle_spin_max_us);
	if (c->idle_spin_max_us < 1 || c->idle_spin_max_us > 1000000) {
		key_err(p, c, "hiwater.idle.spin.max.us", "expected 1 .. 1000000");
		goto fail;
	}
	GET_I32("hiwater.idle.sleep.min.us", c->idle_sleep_min_us);
	GET_I32("hiwater.idle.sleep.max.us", c->idle_sleep_max_us);
	if (c->idle_sleep_min_us < 1 || c->idle_sleep_min_us > 1000000) {
		key_err(p, c, "hiwater.idle.sleep.min.us", "expected 1 .. 1000000");
		goto fail;
	}
	if ((c->idle_sleep_max_us != 0 && c->idle_sleep_max_us < c->idle_sleep_min_us) ||
	    c->idle_sleep_max_us < 0 || c->idle_sleep_max_us > 1000000) {
		key_err(p, c, "hiwater.idle.sleep.max.us",
			"expected 0 (automatic) or hiwater.idle.sleep.min.us .. 1000000");
		goto fail;
	}
	char lcores[128];
	GET_STR("hiwater.reactor.lcores", lcores);
	c->reactor_cpu = -1;
	c->n_reactors = 1;
	if (lcores[0]) {
		/* "0,1,3": one reactor per entry, pinned to that CPU */
		c->n_reactors = 0;
		const char *q = lcores;
		for (;;) {
			char *end;
			long cpu = strtol(q, &end, 10);
			if (end == q || cpu < 0 || cpu > 1023 || (*end && *end != ',') ||
			    c->n_reactors == HWD_MAX_REACTORS) {
				key_err(p, c, "hiwater.reactor.lcores",
					"expected a list of 1 to 8 CPUs, e.g. 1 or 1,2");
				goto fail;
			}
			c->reactor_cpus[c->n_reactors++] = (int32_t)cpu;
			if (!*end)
				break;
			q = end + 1;
		}
		c->reactor_cpu = c->reactor_cpus[0];
	}
	GET_I32("hiwater.metrics.port", c->metrics_port);
	if (c->metrics_port < 0 || c->metrics_port > 65535) {
		key_err(p, c, "hiwater.metrics.port", "expected 0 .. 65535");
		goto fail;
	}
	GET_STR("hiwater.metrics.listen", c->metrics_listen);
	{
		struct in_addr ia;
		if (!strcmp(c->metrics_listen, "localhost"))
			snprintf(c->metrics_listen, sizeof(c->metrics_listen), "127.0.0.1");
		if (inet_pton(AF_INET, c->metrics_listen, &ia) != 1) {
			key_err(p, c, "hiwater.metrics.listen", "expected an IPv4 address (0.0.0.0: every interface)");
			goto fail;
		}
	}
	GET_I32("hiwater.controlled.shutdown.timeout.ms", c->controlled_shutdown_timeout_ms);
	if (c->controlled_shutdown_timeout_ms < 1) {
		key_err(p, c, "hiwater.controlled.shutdown.timeout.ms", "expected >= 1 (ms)");
		goto fail;
	}
	GET_BOOL("controlled.shutdown.enable", c->controlled_shutdown_enable);
	GET_STR("hiwater.log.level", c->log_level);
	if (kafka_config(p, c) < 0)
		goto fail;
	if (group_config(p, c) < 0)
		goto fail;
	kafka_described(p, c, defs, ndefs);
	if (hw_logging_configure(c->log_level) < 0) {   /* was ignored with a warning */
		key_err(p, c, "hiwater.log.level", "expected LEVEL[,MODULE=LEVEL...] (LEVEL: error, warn, info, debug, trace)");
		goto fail;
	}
	if (print) {
		printf("hiwaterd: effective configuration (%s):\n", cfg_path);
		hw_props_dump(p, stdout);
	}
	rc = 0;
fail:
	hw_props_destroy(p);
	free(defs);
	free(names);
	return rc;
}
