/* hwd_config_schema.c — hiwaterd's configuration schema: Kafka property
 * names, defaults and validators (the ConfigDef definitions of Kafka's
 * KafkaConfig, ServerLogConfigs, ReplicationConfigs, KRaftConfigs,
 * SocketServerConfigs, GroupCoordinatorConfig, QuotaConfig) where Kafka has
 * the key, hiwater's own keys under `hiwater.`.
 *
 * Adding a key is one KEY(name, type, default, importance, unit, doc,
 * validator) entry here, in its group's block, plus the line in
 * hwd_config*.c that copies it into hwd_config; e.g.
 *   KEY("hiwater.log.writeback.window.bytes", INT32, "16777216", LOW, "bytes",
 *       "...", RANGE(65536, 1 << 30), OR(0))
 * Types are Kafka's (int = INT32, long = INT64) for Kafka's keys (an INT32
 * key may be read into a wider field). A range narrower than Kafka's is
 * what hiwater's implementation needs, and its doc says why. The validators that need more than a range or an enum (an endpoint,
 * a voter list) are the check functions below; the printed schema, the
 * README tables and the all-keys test (tests/apps/hiwaterd/it_config_keys.sh)
 * come from this table.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_log_clean.h"
#include "hw_logging.h"
#include "hw_netconf.h"
#include "hw_netconf_check.h"
#include "hw_quota.h"
#include "hw_rm.h"
#include "hw_types.h"
#include "hwd.h"
#include "hwd_config_schema.h"

/* ---- checks for structured values (hw_prop_check_fn) -------------------- */

static int refuse(char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return -EINVAL;
}

static int check_roles(const char *v, char *why, size_t len)
{
	static const char *const ok[] = { "broker", "controller", "broker,controller",
					  "controller,broker" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(v, ok[i]))
			return 0;
	return refuse(why, len, "");
}

/* One "ID@HOST:PORT": id 0..999, port 1..65535. */
static int voter_ok(const char *s, size_t n)
{
	char tok[128];
	if (n == 0 || n >= sizeof(tok))
		return 0;
	memcpy(tok, s, n);
	tok[n] = 0;
	char *at = strchr(tok, '@'), *end;
	long id = strtol(tok, &end, 10);
	if (!at || end != at || end == tok || id < 0 || id > 999)
		return 0;
	char *colon = strrchr(at + 1, ':');
	if (!colon || colon == at + 1 || !colon[1])
		return 0;
	long port = strtol(colon + 1, &end, 10);
	return !*end && port >= 1 && port <= 65535;
}

static int check_voters(const char *v, char *why, size_t len)
{
	int ids[HWD_MAX_VOTERS], n = 0;
	for (const char *p = v;;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (!voter_ok(p, l))
			return refuse(why, len, "");
		if (n == HWD_MAX_VOTERS)
			return refuse(why, len, "at most 8 voters");
		ids[n] = atoi(p);
		for (int i = 0; i < n; i++)
			if (ids[i] == ids[n])
				return refuse(why, len, "ids must be distinct");
		n++;
		if (!c)
			return 0;
		p = c + 1;
	}
}

/* "PLAINTEXT://HOST:PORT", port 1..65535. */
/* log.cleanup.policy: Kafka's list of delete / compact */
static int check_cleanup_policy(const char *v, char *why, size_t len)
{
	return hw_log_cleanup_policy_parse(v) < 0 ? refuse(why, len, "") : 0;
}

/* log.cleaner.min.cleanable.ratio: a number in [0, 1] (Kafka's DOUBLE) */
static int check_ratio(const char *v, char *why, size_t len)
{
	char *end;
	double d = strtod(v, &end);
	return end == v || *end || !(d >= 0 && d <= 1) ? refuse(why, len, "") : 0;
}

static int check_listener(const char *v, char *why, size_t len)
{
	const char *pfx = "PLAINTEXT://";
	if (strncmp(v, pfx, strlen(pfx)))
		return refuse(why, len, "one PLAINTEXT listener");
	const char *hp = v + strlen(pfx), *colon = strrchr(hp, ':');
	char *end;
	if (!colon || (size_t)(colon - hp) >= 64)
		return refuse(why, len, "");
	long pt = strtol(colon + 1, &end, 10);
	return *end || !colon[1] || pt <= 0 || pt > 65535 ? refuse(why, len, "") : 0;
}

/* "1" or "1,2,5": 1..HWD_MAX_REACTORS CPUs 0..1023. */
static int check_lcores(const char *v, char *why, size_t len)
{
	int n = 0;
	for (const char *q = v;;) {
		char *end;
		long cpu = strtol(q, &end, 10);
		if (end == q || cpu < 0 || cpu > 1023 || (*end && *end != ',') || ++n > HWD_MAX_REACTORS)
			return refuse(why, len, "");
		if (!*end)
			return 0;
		q = end + 1;
	}
}

static int check_log_level(const char *v, char *why, size_t len)
{
	return hw_logging_spec_check(v) ? refuse(why, len, "") : 0;
}

static int check_metrics_listen(const char *v, char *why, size_t len)
{
	return !strcmp(v, "localhost") ? 0 : hw_netconf_check_ipv4(v, why, len);
}

/* A data route: "dpdk:..." (hw_endpoint_parse) or a udp endpoint. */
static int check_route(const char *v, char *why, size_t len)
{
	hw_endpoint e;
	if (!strncmp(v, "dpdk:", 5))
		return strlen(v) < HWD_EP_MAX && hw_endpoint_parse(v, &e) == 0 ? 0 : refuse(why, len, "");
	return hw_netconf_check_udp_ep(v, why, len);
}

/* "HOST:PORT[,HOST:PORT...]" of a ZooKeeper ensemble. */
/* broker.rack: Kafka's is a free string; ours must fit HW_RACK_MAX (it is
 * carried in registration and metadata, docs/racks.md). */
static int check_rack(const char *v, char *why, size_t len)
{
	return strlen(v) < HW_RACK_MAX ? 0 : refuse(why, len, "");
}

/* replica.selector.class: empty (leader only) or Kafka's rack-aware class. */
static int check_selector(const char *v, char *why, size_t len)
{
	return !v[0] || !strcmp(v, HW_RM_RACK_AWARE_SELECTOR_CLASS) ? 0 : refuse(why, len, "");
}

static int check_zk_connect(const char *v, char *why, size_t len)
{
	for (const char *p = v;;) {
		const char *c = strchr(p, ','), *colon = NULL;
		size_t l = c ? (size_t)(c - p) : strlen(p);
		for (size_t i = 0; i < l; i++)
			if (p[i] == ':')
				colon = p + i;
		if (!colon || colon == p || colon + 1 == p + l)
			return refuse(why, len, "");
		long port = 0;
		for (const char *d = colon + 1; d < p + l; d++) {
			if (*d < '0' || *d > '9' || (port = port * 10 + (*d - '0')) > 65535)
				return refuse(why, len, "");
		}
		if (port < 1)
			return refuse(why, len, "");
		if (!c)
			return 0;
		p = c + 1;
	}
}

/* ---- the table ------------------------------------------------------------ */

static const char *const transports[] = { "udp", "dpdk", NULL };
static const char *const idles[] = { "busy", "backoff", "adaptive", NULL }; /* hw_idle_strategy order */
static const char *const direct_modes[] = { "false", "true", "auto", NULL }; /* hw_log_direct_mode order */
static const char *const flush_policies[] = { "page_cache", "interval", "fsync_before_ack", NULL };
static const char *const auth_modes[] = { "aes-gcm", "none", NULL };

#define KEY(n, t, d, imp, unit_, doc_, ...)                                               \
	{ .name = n, .type = HW_PROP_##t, .def = d, .importance = HW_PROP_##imp, .unit = unit_, \
	  .doc = doc_, .group = GROUP, __VA_ARGS__ },
#define RANGE(lo, hi) .ranged = 1, .min = (lo), .max = (hi)
#define ATLEAST(lo)   RANGE(lo, INT64_MAX)
#define OR(v)         .has_special = 1, .special = (v)
#define CHECK(fn, text) .check = fn, .valid = text
#define CHOICES(c)    .choices = c
#define UDP_EP        CHECK(hw_netconf_check_udp_ep, HW_NETCONF_UDP_EP_VALID)
/* hw_rm.h's table: Kafka's int where max fits 32 bits, else long */
#define RM_KEY(field, n, d, lo, hi, unit_, imp, doc_)                                         \
	{ .name = n, .type = (hi) <= INT32_MAX ? HW_PROP_INT32 : HW_PROP_INT64, .def = #d,       \
	  .importance = HW_PROP_##imp, .unit = unit_, .doc = doc_, .group = GROUP, RANGE(lo, hi) },

_Static_assert(HW_QUOTA_MAX_SAMPLES == 64, "replication.quota.window.num's bound in hw_rm.h");
_Static_assert(HW_MAX_RF == 7, "the replication factor bounds below");

static const hw_prop_def schema[] = {
#define GROUP "Roles and identity"
	KEY("process.roles", STRING, NULL, HIGH, NULL, "what this process is (Kafka's KRaft roles; combined mode: both)",
	    CHECK(check_roles, "broker, controller or broker,controller"))
	KEY("node.id", INT32, NULL, HIGH, NULL, "this node's id (clients use ids >= 1000)", RANGE(0, 999))
	KEY("controller.quorum.voters", STRING, NULL, HIGH, NULL,
	    "the controller's control endpoint; with `zookeeper.connect`, every controller (brokers follow the active one)",
	    CHECK(check_voters, "ID@HOST:PORT[,ID@HOST:PORT...] (distinct ids)"))
	KEY("zookeeper.connect", STRING, "", HIGH, NULL,
	    "ZooKeeper mode of a controller: the ensemble; empty: the embedded single controller with its metadata log (docs/controller-ha.md)",
	    CHECK(check_zk_connect, "HOST:PORT[,HOST:PORT...]"))
	KEY("zookeeper.session.timeout.ms", INT32, "18000", HIGH, "ms",
	    "the controller's ZooKeeper session; a crashed or stopped active controller is replaced after it (hiwater: >= 100)",
	    ATLEAST(100))
	KEY("zookeeper.connection.timeout.ms", INT32, "-1", HIGH, "ms",
	    "a controller unconnected this long logs an error and keeps trying (-1: the session timeout)",
	    ATLEAST(1), OR(-1))
	KEY("cluster.id", INT64, "0", HIGH, NULL,
	    "u32 stamped into every frame; frames of other clusters are dropped (`hiwater.cluster.id` overrides)",
	    RANGE(0, UINT32_MAX))
	KEY("hiwater.cluster.id", INT64, "-1", LOW, NULL, "overrides `cluster.id` (-1: not set)", RANGE(-1, UINT32_MAX))
#undef GROUP
#define GROUP "Authentication"
	KEY("hiwater.auth", ENUM, "aes-gcm", HIGH, NULL,
	    "frame authentication: every frame carries an AES-256-GCM tag under the cluster secret (frame version 3); `none` = the explicit opt-out (versions 1/2, unauthenticated). docs/security.md",
	    CHOICES(auth_modes))
	KEY("hiwater.cluster.secret.file", STRING, "", HIGH, NULL,
	    "the cluster secret: 64 hex digits, a regular file owned by the daemon's user with mode 0600 (anything else is refused at start-up, exit 2); required unless `hiwater.auth=none`. `hiwater cluster up` makes `D/cluster.secret`")
#undef GROUP
#define GROUP "Controller and topic defaults"
	KEY("broker.heartbeat.interval.ms", INT32, "2000", MEDIUM, "ms", "broker heartbeat period", ATLEAST(1))
	KEY("broker.session.timeout.ms", INT32, "9000", MEDIUM, "ms",
	    "the controller fences a broker silent longer than this (must exceed `broker.heartbeat.interval.ms`)",
	    ATLEAST(1))
	KEY("unclean.leader.election.enable", BOOL, "false", HIGH, NULL, "default for new topics")
	KEY("eligible.leader.replicas.enable", BOOL, "true", HIGH, NULL, "KIP-966 ELR (on, as on new Kafka 4.1 clusters)")
	KEY("num.partitions", INT32, "1", MEDIUM, NULL, "partitions of a new topic (CreateTopic default)", ATLEAST(1))
	KEY("default.replication.factor", INT32, "1", MEDIUM, NULL,
	    "replication factor of a new topic (hiwater: at most 7 replicas, HW_MAX_RF)", RANGE(1, 7))
	KEY("controlled.shutdown.enable", BOOL, "true", MEDIUM, NULL, "SIGTERM moves leadership away first")
	KEY("auto.leader.rebalance.enable", BOOL, "true", HIGH, NULL,
	    "the controller hands leadership back to each partition's preferred (first) replica when it is in the ISR")
	KEY("leader.imbalance.check.interval.seconds", INT32, "300", HIGH, "s",
	    "how often leaders are rebalanced (hiwater: at most a day)", RANGE(1, 86400))
	KEY("delete.topic.enable", BOOL, "true", HIGH, NULL,
	    "DeleteTopics and `hiwater topic delete` delete topics (false: TOPIC_DELETION_DISABLED); docs/kafka.md \"DeleteTopics\"")
	KEY("compression.type", ENUM, HW_COMPRESSION_TYPE_DEFAULT, HIGH, NULL,
	    "default codec of topics' stored batches; Kafka's values parse, only `producer` (store each batch as the producer compressed it) is implemented, any other is a configuration error (also as a topic config); docs/compression.md",
	    CHOICES(hw_compression_types))
	KEY("hiwater.controller.resync.interval.ms", INT32, "10000", LOW, "ms",
	    "the controller re-pushes every partition state to its replicas (heals lost datagrams)", ATLEAST(1))
	KEY("hiwater.controlled.shutdown.timeout.ms", INT32, "30000", MEDIUM, "ms",
	    "a broker gives up moving leadership away after this and stops anyway; `hiwater cluster stop` waits this + 15 s before SIGKILL (hiwater: at most an hour)",
	    RANGE(1, 3600000))
#undef GROUP
#define GROUP "Replication"
	HW_RM_KAFKA_CONFIG_TABLE(RM_KEY)
#undef GROUP
#define GROUP "Log"
	KEY("log.dirs", STRING, "", HIGH, NULL,
	    "comma-separated partition log directories (empty: `log.dir`); new partitions go to the online dir with the fewest; a failing dir goes offline alone (docs/logdirs.md)")
	KEY("log.dir", STRING, "/tmp/hiwater-logs", HIGH, NULL, "the partition log directory when `log.dirs` is empty")
	KEY("metadata.log.dir", STRING, "", HIGH, NULL, "the controller's metadata log directory (empty: the first log dir)")
	KEY("log.segment.bytes", INT32, "1073741824", HIGH, "bytes",
	    "segment roll size; a batch larger than a segment is refused (MESSAGE_TOO_LARGE)", RANGE(14, INT32_MAX))
	KEY("log.roll.ms", INT64, "604800000", HIGH, "ms", "segment roll age", ATLEAST(1))
	KEY("log.index.interval.bytes", INT32, "4096", MEDIUM, "bytes", "bytes between offset index entries", ATLEAST(0))
	KEY("log.index.size.max.bytes", INT32, "10485760", MEDIUM, "bytes",
	    "offset index size; a full index rolls the segment (4: no room for an 8-byte entry, one batch per segment)",
	    ATLEAST(4))
	KEY("log.retention.bytes", INT64, "-1", HIGH, "bytes", "retention by size (-1: unlimited)", ATLEAST(-1))
	KEY("log.retention.ms", INT64, "604800000", HIGH, "ms", "retention by age (-1: unlimited)", ATLEAST(1), OR(-1))
	KEY("log.flush.interval.messages", INT64, "9223372036854775807", HIGH, "messages", "fsync every N messages",
	    ATLEAST(1))
	KEY("log.flush.interval.ms", INT64, "9223372036854775807", HIGH, "ms", "fsync every N ms", ATLEAST(0))
	KEY("hiwater.log.flush.policy", ENUM, "page_cache", MEDIUM, NULL,
	    "when an acknowledgement waits for the disk (README \"What an acknowledgement means\")", CHOICES(flush_policies))
	KEY("log.preallocate", BOOL, "false", MEDIUM, NULL,
	    "`fallocate` the active segment ahead of its writes, `hiwater.log.preallocate.step.bytes` at a time; trimmed to its batches when sealed and at a clean stop. Direct writes (`hiwater.log.direct.io`) preallocate whether this is set or not: it keeps ext4 from passing every write to an io_uring worker thread")
	KEY("hiwater.log.preallocate.step.bytes", INT32, "33554432", LOW, "bytes",
	    "the largest step by which preallocation reaches ahead of the write position (a new step when less than half of one is left): a step is as large as the segment already is, at least 1 MiB (so a quiet partition reserves little), up to this and `log.segment.bytes`; 0 = the whole segment at once (Kafka's `log.preallocate`)",
	    RANGE(1 << 20, 1 << 30), OR(0))
	KEY("hiwater.log.direct.io", ENUM, "auto", MEDIUM, NULL,
	    "how segments are written. `true`: with `O_DIRECT` from the aligned tail buffer into step-wise preallocated files (no page-cache copy or writeback; acks wait for the device). `false`: Kafka's buffered page-cache writes. `auto`: direct while a partition's recent batches average `hiwater.log.direct.auto.batch.bytes` or more (throughput-bound producers), buffered below half of it (lone records keep page-cache latency). Direct only where the file system takes it (not tmpfs/ramfs: buffered there, logged). Why the default: perf/README.md \"The default write mode\"",
	    CHOICES(direct_modes))
	KEY("hiwater.log.direct.auto.batch.bytes", INT32, "32768", LOW, "bytes",
	    "with `hiwater.log.direct.io=auto`: the average batch size (over the partition's last few batches) from which its log writes direct; buffered again below half of it. Twice a Kafka producer's default `batch.size` (16384): a producer left at its defaults stays buffered (docs/storage.md#write-mode)",
	    ATLEAST(1))
	KEY("hiwater.log.inline.write.max.bytes", INT32, "65536", LOW, "bytes",
	    "writes up to this size by pwrite on the reactor when the file system would punt io_uring buffered writes to a worker (0: all io_uring)",
	    ATLEAST(0))
	KEY("hiwater.log.writeback.window.bytes", INT32, "16777216", LOW, "bytes",
	    "buffered writes only: each time the active segment's completed writes fill a window, start its writeback (`sync_file_range` WRITE, on io_uring) and drop the window three behind it from the page cache (`POSIX_FADV_DONTNEED`), so appends reuse pages just freed instead of growing the page cache by every byte written; reads further back come from the disk. No fsync (Kafka's page-cache semantics). 0 = off (the kernel alone decides, as Kafka). Why: perf/README.md \"Where the page-cache mode's CPU went\"",
	    RANGE(65536, 1 << 30), OR(0))
	KEY("log.cleanup.policy", STRING, "delete", HIGH, NULL,
	    "default `cleanup.policy` of every partition log: `delete` (retention), `compact` (keep the latest record per key; `__consumer_offsets` is always compact), or `compact,delete` (docs/compaction.md)",
	    CHECK(check_cleanup_policy, "delete, compact or compact,delete"))
	KEY("log.cleaner.enable", BOOL, "true", MEDIUM, NULL,
	    "run the log cleaner on the logs whose policy has `compact` (each replica cleans its own, below its HW)")
	KEY("log.cleaner.backoff.ms", INT64, "15000", MEDIUM, "ms",
	    "the cleaner looks for a log to clean this often when none was due (at once after it cleaned one)", ATLEAST(0))
	KEY("log.cleaner.min.cleanable.ratio", STRING, "0.5", MEDIUM, NULL,
	    "default `min.cleanable.dirty.ratio`: a log is cleaned when its dirty bytes are at least this share of its cleanable bytes",
	    CHECK(check_ratio, "a number in [0, 1]"))
	KEY("log.cleaner.delete.retention.ms", INT64, "86400000", MEDIUM, "ms",
	    "default `delete.retention.ms`: a tombstone stays at least this long after its batch is first cleaned", ATLEAST(0))
	KEY("log.cleaner.min.compaction.lag.ms", INT64, "0", MEDIUM, "ms",
	    "default `min.compaction.lag.ms`: a segment whose newest batch is younger is not cleaned yet", ATLEAST(0))
	KEY("log.cleaner.max.compaction.lag.ms", INT64, "9223372036854775807", MEDIUM, "ms",
	    "default `max.compaction.lag.ms`: a dirty segment older than this is cleaned whatever the dirty ratio", ATLEAST(1))
	KEY("offsets.topic.segment.bytes", INT32, "104857600", HIGH, "bytes",
	    "segment size of `__consumer_offsets` (compacted: only closed segments are cleaned)", ATLEAST(1))
	KEY("log.cleaner.dedupe.buffer.size", INT64, "134217728", MEDIUM, "bytes",
	    "bound of one cleaning pass's key map (exact keys; hiwater: per pass, one pass at a time per reactor); a fuller dirty part is cleaned over several passes",
	    ATLEAST(4096))
#undef GROUP
#define GROUP "Kafka listener and consumer groups"
	KEY("listeners", STRING, "", HIGH, NULL,
	    "Kafka protocol listener (one; empty: none). `hiwater cluster up` sets `PLAINTEXT://127.0.0.1:B+500+id` (docs/kafka.md)",
	    CHECK(check_listener, "PLAINTEXT://HOST:PORT"))
	KEY("advertised.listeners", STRING, "", HIGH, NULL,
	    "the listener registered with the controller and named in Metadata (empty: `listeners`); a wildcard host is advertised as 127.0.0.1",
	    CHECK(check_listener, "PLAINTEXT://HOST:PORT"))
	KEY("auto.create.topics.enable", BOOL, "true", HIGH, NULL,
	    "Kafka Metadata / Produce for an unknown topic creates it with `num.partitions`, `default.replication.factor`")
	KEY("socket.request.max.bytes", INT32, "104857600", HIGH, "bytes",
	    "a larger Kafka request closes its connection, counted (hiwater: >= 1024)", RANGE(1024, INT32_MAX))
	KEY("max.connections", INT32, "2147483647", MEDIUM, NULL,
	    "Kafka client connections at once; more are closed at accept, counted (hiwater: >= 1)", RANGE(1, INT32_MAX))
	KEY("offsets.topic.num.partitions", INT32, "50", HIGH, NULL, "partitions of `__consumer_offsets` (docs/groups.md)",
	    ATLEAST(1))
	KEY("offsets.topic.replication.factor", INT32, "3", HIGH, NULL,
	    "replication factor of `__consumer_offsets` (hiwater: at most 7)", RANGE(1, 7))
	KEY("group.initial.rebalance.delay.ms", INT32, "3000", MEDIUM, "ms",
	    "a new group's first rebalance waits this long for more members", ATLEAST(0))
	KEY("group.min.session.timeout.ms", INT32, "6000", MEDIUM, "ms",
	    "smallest consumer `session.timeout.ms` accepted (else INVALID_SESSION_TIMEOUT)", ATLEAST(0))
	KEY("group.max.session.timeout.ms", INT32, "1800000", MEDIUM, "ms",
	    "largest consumer `session.timeout.ms` accepted (at least `group.min.session.timeout.ms`)", ATLEAST(0))
	KEY("group.max.size", INT32, "2147483647", MEDIUM, NULL, "members per group (GROUP_MAX_SIZE_REACHED)", ATLEAST(1))
	KEY("offset.metadata.max.bytes", INT32, "4096", HIGH, "bytes",
	    "larger commit metadata is OFFSET_METADATA_TOO_LARGE", ATLEAST(0))
	KEY("offsets.retention.minutes", INT32, "10080", HIGH, "min",
	    "committed offsets of an Empty group expire this long after it emptied (tombstoned)", RANGE(1, INT32_MAX))
	KEY("offsets.commit.timeout.ms", INT32, "5000", HIGH, "ms",
	    "an offset commit's acks=all append to `__consumer_offsets` waits this long", ATLEAST(1))
#undef GROUP
#define GROUP "Racks"
	KEY("broker.rack", STRING, "", MEDIUM, NULL,
	    "this broker's rack, registered with the controller (kept in its metadata log / ZooKeeper), shown by `topic describe` and used by rack-aware placement and follower fetching (docs/racks.md)",
	    CHECK(check_rack, "at most 63 bytes"))
	KEY("replica.selector.class", STRING, "", MEDIUM, NULL,
	    "which replica a consumer fetch naming its rack is sent to: empty = the leader only (Kafka's default), or `" HW_RM_RACK_AWARE_SELECTOR_CLASS "` (an in-sync replica in the consumer's rack, KIP-392; docs/racks.md)",
	    CHECK(check_selector, "empty or " HW_RM_RACK_AWARE_SELECTOR_CLASS))
#undef GROUP
#define GROUP "Transport and addresses"
	KEY("hiwater.transport", ENUM, "udp", HIGH, NULL, "the data plane", CHOICES(transports))
	KEY("hiwater.control.listen", STRING, "", HIGH, NULL,
	    "control endpoint (empty: `udp:127.0.0.1:0`; a controller listens on its voter address, or on `0.0.0.0` with the voter's port)",
	    UDP_EP)
	KEY("hiwater.control.endpoint", STRING, "", LOW, NULL, "alias of `hiwater.control.listen` (`HOST:PORT`)", UDP_EP)
	KEY("hiwater.data.listen", STRING, "", HIGH, NULL, "data endpoint with the udp transport (empty: `udp:127.0.0.1:0`)",
	    UDP_EP)
	KEY("hiwater.udp.endpoint", STRING, "", LOW, NULL, "alias of `hiwater.data.listen` (`HOST:PORT`)", UDP_EP)
	KEY("hiwater.control.advertised", STRING, "", MEDIUM, NULL,
	    "the control endpoint others reach us at (Kafka's `advertised.listeners`; empty: the listen address): registered with the controller, given to clients in Metadata. A wildcard host is replaced by the local address the kernel picks toward the controller, a port 0 by the bound port (\"Addresses across hosts\")",
	    UDP_EP)
	KEY("hiwater.data.advertised", STRING, "", MEDIUM, NULL,
	    "the udp data endpoint registered with the controller (peers replicate and clients produce to it); same defaults as `hiwater.control.advertised`",
	    UDP_EP)
	KEY("hiwater.neighbour.<id>", STRING, "", LOW, NULL,
	    "data route to node `<id>` (0..255, client slots 1000..1063): `udp:HOST:PORT` or `dpdk:port=<vdev>[,mac=..][,ip=..][,udp=BASE][,queues=N]` (N: the peer's reactor count; our reactor k sends to its BASE + (k mod N); drivers/net \"Steering\")",
	    CHECK(check_route, "udp:HOST:PORT or dpdk:port=..."))
	KEY("hiwater.control.neighbour.<id>", STRING, "", LOW, NULL,
	    "control route to node `<id>` (normally learned: replies go where requests came from)", UDP_EP)
#undef GROUP
#define GROUP "DPDK"
	KEY("dpdk.eal.args", STRING, "", HIGH, NULL, "DPDK EAL arguments; required with `hiwater.transport=dpdk`")
	KEY("hiwater.dpdk.ip", STRING, "", MEDIUM, NULL,
	    "our address on DPDK ports (empty: `10.77.0.<id>`); registered as `dpdk:ip=A.B.C.D,udp=PORT,queues=<reactors>`",
	    CHECK(hw_netconf_check_ipv4, HW_NETCONF_IPV4_VALID))
	KEY("hiwater.dpdk.udp.port", INT32, "9092", MEDIUM, NULL,
	    "the BASE port on DPDK ports: reactor k listens on and sends from BASE + k", RANGE(1, 65535 - HWD_MAX_REACTORS))
	KEY("hiwater.dpdk.port", STRING, "", MEDIUM, NULL,
	    "the port that routes learned from the controller's metadata go through (empty: the only DPDK port); required with several ports and no `hiwater.neighbour.*` routes",
	    CHECK(hw_netconf_check_dpdk_port, HW_NETCONF_DPDK_PORT_VALID))
	KEY("hiwater.dpdk.mtu", INT32, "0", MEDIUM, "bytes",
	    "IPv4 MTU of every non-memif DPDK port: 0 = the largest the port accepts, at most 9000; lowered (WARN) where the port cannot; larger frames go as hiwater fragments (drivers/net \"Frames larger than a packet\")",
	    RANGE(308, 65535), OR(0))
	KEY("hiwater.cluster.brokers", INT32, "0", LOW, NULL,
	    "local memif cluster: derive DPDK routes from the vdev order of `dpdk.eal.args` when no `hiwater.neighbour.*` is set (0: off)",
	    RANGE(0, HWD_NB_NODE_MAX - 1))
	KEY("hiwater.cluster.client.slots", INT32, "0", LOW, NULL, "local memif cluster: client slots (memif ports after the peers)",
	    RANGE(0, HWD_NB_CLIENTS))
#undef GROUP
#define GROUP "Reactors and idling"
	KEY("hiwater.reactor.lcores", STRING, "", MEDIUM, NULL,
	    "one reactor per listed CPU, each pinned to it; partitions sharded over them (\"Reactors\"). Empty: one unpinned reactor",
	    CHECK(check_lcores, "a list of 1 to 8 CPUs 0..1023, e.g. 1 or 1,2"))
	KEY("hiwater.idle.strategy", ENUM, "adaptive", MEDIUM, NULL,
	    "`adaptive` (learn how long to poll after work, sleep on the wait fds otherwise), `busy` (a core per reactor) or `backoff` (a fixed poll window, then sleep); docs/idle.md",
	    CHOICES(idles))
	KEY("hiwater.idle.spin.us", INT32, "20", LOW, "us",
	    "backoff: after work, keep polling (with `sched_yield`) this long before sleeping", RANGE(1, 1000000))
	KEY("hiwater.idle.spin.max.us", INT32, "250", LOW, "us", "adaptive: the longest spin window it may learn",
	    RANGE(1, 1000000))
	KEY("hiwater.idle.demote.us", INT32, "0", LOW, "us",
	    "adaptive: after spinning this long in one idle period an unpinned reactor runs as SCHED_IDLE until its next work or sleep, so an idle CPU may take it from behind a kernel thread; 50 was measured; 0 = never (docs/idle.md \"Demotion\": it costs p50 under a CPU hog)",
	    RANGE(1, 1000000), OR(0))
	KEY("hiwater.idle.sleep.min.us", INT32, "10", LOW, "us", "backoff: first sleep cap, doubling while idle",
	    RANGE(1, 1000000))
	KEY("hiwater.idle.sleep.max.us", INT32, "0", LOW, "us",
	    "largest sleep cap, at least `hiwater.idle.sleep.min.us`; 0 = automatic: 100 ms when every wait source can wake the reactor (the first sleep after work is then the full cap), 1 ms when a port cannot (docs/idle.md)",
	    RANGE(1, 1000000), OR(0))
#undef GROUP
#define GROUP "Metrics and logging"
	KEY("hiwater.metrics.listen", STRING, "127.0.0.1", MEDIUM, NULL,
	    "address the Prometheus endpoint listens on (`0.0.0.0`: every interface)",
	    CHECK(check_metrics_listen, "an IPv4 address or localhost"))
	KEY("hiwater.metrics.port", INT32, "0", MEDIUM, NULL,
	    "Prometheus text endpoint on `http://<hiwater.metrics.listen>:PORT/metrics` (0: off); see \"Metrics\"",
	    RANGE(0, 65535))
	KEY("hiwater.log.level", STRING, "info", LOW, NULL, "log levels, e.g. `info,ctrl=debug,repl=debug`",
	    CHECK(check_log_level, "LEVEL[,MODULE=LEVEL...] (LEVEL: error, warn, info, debug, trace)"))
#undef GROUP
};

const hw_prop_def *hwd_config_schema(size_t *n)
{
	*n = sizeof(schema) / sizeof(schema[0]);
	return schema;
}
