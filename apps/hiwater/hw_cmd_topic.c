/* hw_cmd_topic.c — `hiwater topic create|describe|alter|delete`.
 *
 * describe asks the controller (Metadata: assignment, leader, ISR, ELR,
 * epochs) and then each partition leader (DescribeTopic: HW, LEO — the
 * leader's numbers are the authoritative ones), and prints one line per
 * partition in kafka-topics.sh style. A leader that does not answer shows
 * "-" for HW/LEO rather than failing the whole command.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_client.h"
#include "hw_err.h"

static const char topic_usage[] =
	"Usage: hiwater topic <command> [options]\n"
	"\n"
	"  create NAME --partitions P --replication-factor R [--config k=v ...]\n"
	"          e.g. --config min.insync.replicas=2\n"
	"  create NAME --replica-assignment 1:2:3,2:3:1 [--config k=v ...]\n"
	"          explicit replicas per partition, leader first (Kafka's flag; docs/racks.md)\n"
	"  describe [NAME] [--json] [--under-replicated-partitions] [--under-min-isr-partitions]\n"
	"          [--unavailable-partitions]\n"
	"          per partition: Leader, Replicas, Isr, Elr, LastKnownElr, LeaderEpoch,\n"
	"          HW (high watermark) and LEO (log end offset) from the leader, and the\n"
	"          replicas' Racks (broker.rack) when brokers have one; --json: one JSON\n"
	"          document {brokers: [{id, rack}], topics: [{topic, topic_id, configs: {k: v}}],\n"
	"          partitions: [{topic, partition, leader, leader_epoch, replicas, isr, elr,\n"
	"          last_known_elr, replica_racks, hw, leo}]} (configs: the topic's overrides)\n"
	"  delete NAME   delete the topic: its partitions and their logs on every broker\n"
	"          (delete.topic.enable; internal topics such as __consumer_offsets are refused,\n"
	"          as kafka-topics.sh refuses them; docs/kafka.md \"DeleteTopics\")\n"
	"  alter NAME --config k=v ... [--delete-config k ...]   (also: alter-config NAME k=v ...)\n"
	"          change topic configs at runtime, as one validated change; --delete-config\n"
	"          returns a key to the broker's value. Keys (also at create; Kafka's topic\n"
	"          configs, docs/kafka.md \"Topic configuration\"): cleanup.policy, retention.ms,\n"
	"          retention.bytes, segment.bytes, segment.ms, segment.index.bytes,\n"
	"          index.interval.bytes, flush.messages, flush.ms, delete.retention.ms,\n"
	"          min.compaction.lag.ms, max.compaction.lag.ms, min.cleanable.dirty.ratio,\n"
	"          preallocate, max.message.bytes, min.insync.replicas,\n"
	"          unclean.leader.election.enable, compression.type,\n"
	"          leader.replication.throttled.replicas, follower.replication.throttled.replicas\n"
	"          ('*' or partition:broker,...)\n"
	"\n"
	"Options: --dir D (cluster directory), --timeout MS (default 10000), -q\n"
	"  --bootstrap-server HOST:PORT   any node's control endpoint (instead of --dir)\n"
	"  --command-config FILE          client properties (apps/hiwater/README.md)\n";

#define F_UNDER_REPLICATED 1
#define F_UNDER_MIN_ISR    2
#define F_UNAVAILABLE      4

static int usage_err(const char *msg)
{
	hw_cli_err("%s (see `hiwater topic --help`)", msg);
	return HW_CLI_EXIT_USAGE;
}

/* Topic configs from the command line into the request's array. */
static void fill_configs(const hw_cli_kvs *kv, hw_config_kv *cfgs)
{
	for (int i = 0; i < kv->n; i++) {
		snprintf(cfgs[i].key, sizeof(cfgs[i].key), "%s", kv->key[i]);
		snprintf(cfgs[i].value, sizeof(cfgs[i].value), "%s", kv->value[i]);
	}
}

/* One request to the controller, its answer handed to fn. 0, or the exit
 * code: NO_CLUSTER when it does not answer in time, ERROR otherwise. */
static int controller_call(hw_client *cl, hw_msg *m, int resp_type, int timeout_ms,
			   void (*fn)(void *, const hw_msg *), void *arg)
{
	int rc = hw_client_call(cl, hw_client_controller_id(cl), m, resp_type, timeout_ms, fn, arg);
	if (rc == -ETIMEDOUT) {
		hw_cli_err("the controller did not answer in %d ms", timeout_ms);
		return HW_CLI_EXIT_NO_CLUSTER;
	}
	return rc ? HW_CLI_EXIT_ERROR : 0;
}

/* ---- create ---------------------------------------------------------------- */

typedef struct create_ctx {
	hw_create_topic_resp resp;
} create_ctx;

static void on_create(void *arg, const hw_msg *m)
{
	create_ctx *x = arg;
	x->resp = *(const hw_create_topic_resp *)m->u.other;
}

/* Kafka's --replica-assignment "1:2:3,2:3:1": partition p's replicas
 * (leader first), partitions separated by ','. Returns the partition count
 * (>= 1), or -1 for a malformed list. */
static int parse_assignment(const char *s, hw_idset *out, int max_parts)
{
	int np = 0;
	const char *q = s;
	for (;;) {
		if (np == max_parts)
			return -1;
		hw_idset *r = &out[np++];
		r->n = 0;
		for (;;) {
			char *end;
			long id = strtol(q, &end, 10);
			if (end == q || id < 0 || id > 999 || r->n == HW_MAX_RF)
				return -1;
			r->id[r->n++] = (int32_t)id;
			q = end;
			if (*q != ':')
				break;
			q++;
		}
		if (!*q)
			return np;
		if (*q != ',')
			return -1;
		q++;
	}
}

static int cmd_create(hw_client *cl, const char *name, int partitions, int rf,
		      const hw_cli_kvs *kv, const char *assignment, int timeout_ms)
{
	static hw_idset assign[HW_CLIENT_MAX_PARTS];
	int n_assign = 0;
	if (assignment && (n_assign = parse_assignment(assignment, assign, HW_CLIENT_MAX_PARTS)) < 0) {
		hw_cli_err("--replica-assignment wants broker ids like 1:2:3,2:3:1 (at most %d partitions, %d "
			   "replicas each)", HW_CLIENT_MAX_PARTS, HW_MAX_RF);
		return HW_CLI_EXIT_USAGE;
	}
	hw_config_kv cfgs[HW_CLI_MAX_KV];
	fill_configs(kv, cfgs);
	hw_create_topic_req req = {.partitions = partitions, .replication_factor = (int16_t)rf,
				   .timeout_ms = timeout_ms, .n_configs = (uint16_t)kv->n,
				   .configs = cfgs, .n_assignments = (uint32_t)n_assign, .assignments = assign};
	snprintf(req.name, sizeof(req.name), "%s", name);
	hw_msg m = {.type = HW_MSG_CREATE_TOPIC, .u.other = &req};
	create_ctx x;
	memset(&x, 0, sizeof(x));
	int ex = controller_call(cl, &m, HW_MSG_CREATE_TOPIC_RESP, timeout_ms, on_create, &x);
	if (ex)
		return ex;
	if (x.resp.error != HW_ERR_NONE) {
		hw_cli_err("create topic '%s': %s%s%s", name, hw_err_name(x.resp.error),
			   x.resp.error_message[0] ? ": " : "", x.resp.error_message);
		return HW_CLI_EXIT_BROKER_ERROR;
	}
	printf("Created topic %s (id %u) with %d partition(s), replication factor %d.\n", name,
	       x.resp.topic_id, x.resp.partitions, x.resp.replication_factor);
	/* Wait until every partition has a leader so the next command can use it. */
	int rc = hw_client_use_topic(cl, name, timeout_ms);
	if (rc == -ETIMEDOUT) {
		hw_cli_err("topic created, but not every partition has a leader after %d ms", timeout_ms);
		return HW_CLI_EXIT_TIMEOUT;
	}
	return rc ? HW_CLI_EXIT_ERROR : HW_CLI_EXIT_OK;
}

/* ---- delete ---------------------------------------------------------------- */

static void on_delete(void *arg, const hw_msg *m)
{
	*(hw_delete_topic_resp *)arg = *(const hw_delete_topic_resp *)m->u.other;
}

static int cmd_delete(hw_client *cl, const char *name, int timeout_ms)
{
	if (name[0] == '_' && name[1] == '_') {
		/* Kafka's TopicCommand: internal topics are not deleted by the tool */
		hw_cli_err("topic '%s' is an internal topic and is not allowed to be marked for deletion", name);
		return HW_CLI_EXIT_USAGE;
	}
	hw_delete_topic_req req = {.timeout_ms = timeout_ms};
	snprintf(req.name, sizeof(req.name), "%s", name);
	hw_msg m = {.type = HW_MSG_DELETE_TOPIC, .u.other = &req};
	hw_delete_topic_resp resp;
	memset(&resp, 0, sizeof(resp));
	int ex = controller_call(cl, &m, HW_MSG_DELETE_TOPIC_RESP, timeout_ms, on_delete, &resp);
	if (ex)
		return ex;
	if (resp.error != HW_ERR_NONE) {
		hw_cli_err("delete topic '%s': %s%s%s", name, hw_err_name(resp.error), resp.error_message[0] ? ": " : "",
			   resp.error_message);
		return HW_CLI_EXIT_BROKER_ERROR;
	}
	printf("Deleted topic %s (id %u).\n", name, resp.topic_id);
	return HW_CLI_EXIT_OK;
}

/* ---- alter-config ---------------------------------------------------------- */

typedef struct alter_ctx {
	hw_alter_config_resp resp;
} alter_ctx;

static void on_alter(void *arg, const hw_msg *m)
{
	alter_ctx *x = arg;
	x->resp = *(const hw_alter_config_resp *)m->u.other;
}

static int cmd_alter_config(hw_client *cl, const char *name, const hw_cli_kvs *kv, const hw_cli_kvs *del,
			    int timeout_ms)
{
	hw_config_kv cfgs[HW_CLI_MAX_KV], dels[HW_CLI_MAX_KV];
	fill_configs(kv, cfgs);
	fill_configs(del, dels);
	hw_alter_config_req req = {.n_configs = (uint16_t)kv->n, .configs = cfgs,
				   .n_deletes = (uint16_t)del->n, .deletes = dels};
	snprintf(req.name, sizeof(req.name), "%s", name);
	hw_msg m = {.type = HW_MSG_ALTER_CONFIG, .u.other = &req};
	alter_ctx x;
	memset(&x, 0, sizeof(x));
	int ex = controller_call(cl, &m, HW_MSG_ALTER_CONFIG_RESP, timeout_ms, on_alter, &x);
	if (ex)
		return ex;
	if (x.resp.error != HW_ERR_NONE) {
		hw_cli_err("alter config of '%s': %s%s%s", name, hw_err_name(x.resp.error),
			   x.resp.error_message[0] ? ": " : "", x.resp.error_message);
		return HW_CLI_EXIT_BROKER_ERROR;
	}
	if (!hw_cli_quiet)
		for (int i = 0; i < kv->n; i++)
			printf("Topic %s: %s=%s\n", name, kv->key[i], kv->value[i]);
	if (!hw_cli_quiet)
		for (int i = 0; i < del->n; i++)
			printf("Topic %s: %s deleted (the broker's value)\n", name, del->key[i]);
	return HW_CLI_EXIT_OK;
}

/* ---- describe ------------------------------------------------------------ */

#define MAX_TOPICS 64
typedef struct desc_part {
	hw_partition_meta m;
	int64_t hw, leo;       /* from the leader, -1 unknown */
} desc_part;

typedef struct desc_topic {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t topic_id;
	int16_t error;
	uint32_t n_parts;
	desc_part *parts;
	int min_isr;
	char configs[512];
	int n_configs;                         /* the overrides, for --json */
	hw_config_kv kv[HW_TC_COUNT];
} desc_topic;

typedef struct desc_ctx {
	int32_t controller_id, controller_epoch; /* epoch > 0: ZooKeeper mode */
	int n;
	desc_topic t[MAX_TOPICS];
	int n_brokers, any_rack;               /* broker.rack of each broker (docs/racks.md) */
	int32_t broker_id[HW_CLIENT_MAX_NODES];
	char broker_rack[HW_CLIENT_MAX_NODES][HW_RACK_MAX];
} desc_ctx;

/* The rack of broker id ("" none or unknown). */
static const char *rack_of(const desc_ctx *x, int32_t id)
{
	for (int i = 0; i < x->n_brokers; i++)
		if (x->broker_id[i] == id)
			return x->broker_rack[i];
	return "";
}

static void fmt_racks(const desc_ctx *x, const hw_idset *s, char *buf, size_t cap)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < s->n; i++) {
		const char *r = rack_of(x, s->id[i]);
		hw_cli_appendf(buf, cap, &off, "%s%s", i ? "," : "", r[0] ? r : "-");
	}
}

static void on_desc_metadata(void *arg, const hw_msg *msg)
{
	desc_ctx *x = arg;
	const hw_metadata_resp *r = msg->u.other;
	x->controller_id = r->controller_id;
	x->controller_epoch = r->controller_epoch;
	for (int i = 0; i < r->n_brokers && x->n_brokers < HW_CLIENT_MAX_NODES; i++) {
		x->broker_id[x->n_brokers] = r->brokers[i].id;
		snprintf(x->broker_rack[x->n_brokers++], HW_RACK_MAX, "%s", r->brokers[i].rack);
		x->any_rack |= r->brokers[i].rack[0] != 0;
	}
	for (int i = 0; i < r->n_topics && x->n < MAX_TOPICS; i++) {
		const hw_topic_meta *tm = &r->topics[i];
		desc_topic *t = &x->t[x->n++];
		snprintf(t->name, sizeof(t->name), "%s", tm->name);
		t->topic_id = tm->topic_id;
		t->error = tm->error;
		t->n_parts = tm->n_parts;
		t->parts = calloc(tm->n_parts ? tm->n_parts : 1, sizeof(desc_part));
		if (!t->parts) {
			t->n_parts = 0;
			continue;
		}
		t->min_isr = 1;
		size_t off = 0;
		for (int c = 0; c < tm->n_configs; c++) {
			const hw_config_kv *kv = &tm->configs[c];
			if (!strcmp(kv->key, "min.insync.replicas"))
				t->min_isr = atoi(kv->value);
			if (t->n_configs < HW_TC_COUNT)
				t->kv[t->n_configs++] = *kv;
			int w = snprintf(t->configs + off, sizeof(t->configs) - off, "%s%s=%s",
					 c ? "," : "", kv->key, kv->value);
			if (w > 0 && (size_t)w < sizeof(t->configs) - off)
				off += (size_t)w;
		}
		for (uint32_t p = 0; p < tm->n_parts; p++) {
			t->parts[p].m = tm->parts[p];
			t->parts[p].hw = t->parts[p].leo = -1;
		}
	}
}

typedef struct leader_ctx {
	desc_ctx *x;
	int32_t broker;
} leader_ctx;

static void on_desc_leader(void *arg, const hw_msg *msg)
{
	leader_ctx *lc = arg;
	const hw_describe_topic_resp *r = msg->u.other;
	for (int i = 0; i < r->n_topics; i++) {
		const hw_topic_meta *tm = &r->topics[i];
		for (int k = 0; k < lc->x->n; k++) {
			desc_topic *t = &lc->x->t[k];
			if (strcmp(t->name, tm->name))
				continue;
			for (uint32_t p = 0; p < tm->n_parts; p++) {
				const hw_partition_meta *pm = &tm->parts[p];
				for (uint32_t q = 0; q < t->n_parts; q++) {
					desc_part *dp = &t->parts[q];
					if (dp->m.partition == pm->partition && dp->m.leader == lc->broker) {
						dp->hw = pm->high_watermark;
						dp->leo = pm->log_end_offset;
					}
				}
			}
		}
	}
}

static void fmt_ids(const hw_idset *s, char *buf, size_t cap)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < s->n && off < cap; i++) {
		int w = snprintf(buf + off, cap - off, "%s%d", i ? "," : "", s->id[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

static void fmt_off(int64_t v, char *buf, size_t cap)
{
	if (v < 0)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%lld", (long long)v);
}

static void json_ids(const hw_idset *s)
{
	for (int i = 0; i < s->n; i++)
		printf("%s%d", i ? "," : "", s->id[i]);
}

/* One partition as a JSON object (--json: one array of them, with the
 * brokers' racks; apps/hiwater/README.md "topic"). Names and racks are
 * [A-Za-z0-9._-] (Kafka's topic rule, hw_cluster_racks_valid / broker.rack
 * as registered), printed with JSON escaping of '"' and '\\' anyway. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

static void print_part_json(const desc_ctx *x, const desc_topic *t, const desc_part *dp, int *first)
{
	const hw_partition_meta *pm = &dp->m;
	printf("%s\n  {\"topic\": ", *first ? "" : ",");
	*first = 0;
	json_str(t->name);
	printf(", \"partition\": %u, \"leader\": %d, \"leader_epoch\": %d, \"replicas\": [", pm->partition,
	       pm->leader, pm->leader_epoch);
	json_ids(&pm->replicas);
	printf("], \"isr\": [");
	json_ids(&pm->isr);
	printf("], \"elr\": [");
	json_ids(&pm->elr);
	printf("], \"last_known_elr\": [");
	json_ids(&pm->last_known_elr);
	printf("], \"replica_racks\": [");
	for (int i = 0; i < pm->replicas.n; i++) {
		printf("%s", i ? ", " : "");
		json_str(rack_of(x, pm->replicas.id[i]));
	}
	printf("], \"hw\": %lld, \"leo\": %lld}", (long long)dp->hw, (long long)dp->leo);
}

static int cmd_describe(hw_client *cl, const char *name, int filters, int json, int timeout_ms)
{
	int first = 1;
	desc_ctx *x = calloc(1, sizeof(*x));
	if (!x)
		return HW_CLI_EXIT_ERROR;
	hw_topic_name tn;
	hw_metadata_req mr = {0};
	if (name) {
		snprintf(tn.s, sizeof(tn.s), "%s", name);
		mr.n_topics = 1;
		mr.topics = &tn;
	}
	hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
	int rc = hw_client_call(cl, hw_client_controller_id(cl), &m, HW_MSG_METADATA_RESP, timeout_ms,
				on_desc_metadata, x);
	int ex = HW_CLI_EXIT_OK;
	if (rc) {
		hw_cli_err("the controller did not answer in %d ms", timeout_ms);
		ex = HW_CLI_EXIT_NO_CLUSTER;
		goto out;
	}
	if (json) {
		printf("{\"brokers\": [");
		for (int i = 0; i < x->n_brokers; i++) {
			printf("%s{\"id\": %d, \"rack\": ", i ? ", " : "", x->broker_id[i]);
			json_str(x->broker_rack[i]);
			printf("}");
		}
		printf("],\n \"topics\": [");
		for (int k = 0; k < x->n; k++) {
			const desc_topic *t = &x->t[k];
			printf("%s{\"topic\": ", k ? ", " : "");
			json_str(t->name);
			printf(", \"topic_id\": %u, \"configs\": {", t->topic_id);
			for (int c = 0; c < t->n_configs; c++) {
				printf("%s", c ? ", " : "");
				json_str(t->kv[c].key);
				printf(": ");
				json_str(t->kv[c].value);
			}
			printf("}}");
		}
		printf("],\n \"partitions\": [");
	} else if (x->controller_epoch > 0 && !filters) /* ZooKeeper mode (docs/controller-ha.md) */
		printf("ActiveController: %d\tControllerEpoch: %d\n", x->controller_id, x->controller_epoch);
	/* Ask every leader for HW/LEO (one DescribeTopic per broker). */
	int32_t asked[HW_CLIENT_MAX_NODES];
	int n_asked = 0;
	for (int k = 0; k < x->n; k++)
		for (uint32_t p = 0; p < x->t[k].n_parts; p++) {
			int32_t l = x->t[k].parts[p].m.leader;
			int seen = l < 0;
			for (int j = 0; j < n_asked && !seen; j++)
				seen = asked[j] == l;
			if (seen || n_asked == HW_CLIENT_MAX_NODES)
				continue;
			asked[n_asked++] = l;
			hw_describe_topic_req dr = {0};
			if (name) {
				dr.n_topics = 1;
				dr.topics = &tn;
			}
			hw_msg dm = {.type = HW_MSG_DESCRIBE_TOPIC, .u.other = &dr};
			leader_ctx lc = {.x = x, .broker = l};
			/* A dead leader must not stall describe for long. */
			hw_client_call(cl, l, &dm, HW_MSG_DESCRIBE_TOPIC_RESP, 1000, on_desc_leader, &lc);
		}
	for (int k = 0; k < x->n; k++) {
		desc_topic *t = &x->t[k];
		if (t->error != HW_ERR_NONE) {
			hw_cli_err("topic '%s': %s", t->name, hw_err_name(t->error));
			ex = HW_CLI_EXIT_BROKER_ERROR;
			continue;
		}
		int rf = t->n_parts ? t->parts[0].m.replicas.n : 0;
		if (!filters && !json)
			printf("Topic: %s\tTopicId: %u\tPartitionCount: %u\tReplicationFactor: %d\tConfigs: %s\n",
			       t->name, t->topic_id, t->n_parts, rf, t->configs);
		for (uint32_t p = 0; p < t->n_parts; p++) {
			desc_part *dp = &t->parts[p];
			const hw_partition_meta *pm = &dp->m;
			int show = !filters;
			if ((filters & F_UNDER_REPLICATED) && pm->isr.n < pm->replicas.n)
				show = 1;
			if ((filters & F_UNDER_MIN_ISR) && pm->isr.n < t->min_isr)
				show = 1;
			if ((filters & F_UNAVAILABLE) && pm->leader < 0)
				show = 1;
			if (!show)
				continue;
			char rep[64], isr[64], elr[64], lke[64], hw[24], leo[24];
			fmt_ids(&pm->replicas, rep, sizeof(rep));
			fmt_ids(&pm->isr, isr, sizeof(isr));
			fmt_ids(&pm->elr, elr, sizeof(elr));
			fmt_ids(&pm->last_known_elr, lke, sizeof(lke));
			fmt_off(dp->hw, hw, sizeof(hw));
			fmt_off(dp->leo, leo, sizeof(leo));
			char racks[HW_MAX_RF * HW_RACK_MAX + 16] = "";
			if (x->any_rack) { /* the replicas' racks, in replica order */
				memcpy(racks, "\tRacks: ", 9);
				fmt_racks(x, &pm->replicas, racks + 8, sizeof(racks) - 8);
			}
			if (json) {
				print_part_json(x, t, dp, &first);
				continue;
			}
			printf("\tTopic: %s\tPartition: %u\tLeader: %s%d\tReplicas: %s\tIsr: %s\tElr: %s\t"
			       "LastKnownElr: %s\tLeaderEpoch: %d\tHW: %s\tLEO: %s%s\n",
			       t->name, pm->partition, pm->leader < 0 ? "none " : "", pm->leader, rep, isr,
			       elr, lke, pm->leader_epoch, hw, leo, racks);
		}
	}
	if (json)
		printf("\n]}\n");
	if (name && x->n == 0) {
		hw_cli_err("topic '%s' does not exist", name);
		ex = HW_CLI_EXIT_BROKER_ERROR;
	}
out:
	for (int k = 0; k < x->n; k++)
		free(x->t[k].parts);
	free(x);
	return ex;
}

int hw_cmd_topic(int argc, char **argv)
{
	enum { O_UNDER_REP = 256, O_UNDER_MIN, O_UNAVAIL, O_JSON, O_ASSIGN, O_DELETE_CONFIG };
	static const struct option opts[] = {
		{"help", no_argument, 0, 'h'},
		{"dir", required_argument, 0, 'd'},
		{"partitions", required_argument, 0, 'p'},
		{"replication-factor", required_argument, 0, 'r'},
		{"config", required_argument, 0, 'c'},
		{"timeout", required_argument, 0, 'T'},
		{"quiet", no_argument, 0, 'q'},
		{"bootstrap-server", required_argument, 0, 'S'},
		{"command-config", required_argument, 0, 'C'},
		{"under-replicated-partitions", no_argument, 0, O_UNDER_REP},
		{"under-min-isr-partitions", no_argument, 0, O_UNDER_MIN},
		{"unavailable-partitions", no_argument, 0, O_UNAVAIL},
		{"json", no_argument, 0, O_JSON},
		{"replica-assignment", required_argument, 0, O_ASSIGN},
		{"delete-config", required_argument, 0, O_DELETE_CONFIG},
		{0, 0, 0, 0},
	};
	char dir[512];
	hw_cluster_default_dir(dir, sizeof(dir));
	int partitions = -1, rf = -1, timeout_ms = 10000, filters = 0, json = 0;
	hw_cli_kvs kv = {0}, del = {0};
	const char *bootstrap = NULL, *command_config = NULL, *assignment = NULL;
	int64_t v;
	int o;
	optind = 1;
	while ((o = getopt_long(argc, argv, "hqd:p:r:c:T:S:C:", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(topic_usage, stdout);
			hw_cli_print_exit_codes(stdout);
			return HW_CLI_EXIT_OK;
		case 'q': hw_cli_quiet = 1; break;
		case 'd': snprintf(dir, sizeof(dir), "%s", optarg); break;
		case 'S': bootstrap = optarg; break;
		case 'C': command_config = optarg; break;
		case 'p':
			if (hw_cli_parse_i64(optarg, 1, HW_CLIENT_MAX_PARTS, &v))
				return usage_err("--partitions wants 1..256");
			partitions = (int)v;
			break;
		case 'r':
			if (hw_cli_parse_i64(optarg, 1, 7, &v))
				return usage_err("--replication-factor wants 1..7");
			rf = (int)v;
			break;
		case 'c':
			if (hw_cli_kvs_add(&kv, optarg))
				return usage_err("--config wants key=value");
			break;
		case 'T':
			if (hw_cli_parse_i64(optarg, 1, 3600000, &v))
				return usage_err("--timeout wants milliseconds");
			timeout_ms = (int)v;
			break;
		case O_UNDER_REP: filters |= F_UNDER_REPLICATED; break;
		case O_UNDER_MIN: filters |= F_UNDER_MIN_ISR; break;
		case O_UNAVAIL: filters |= F_UNAVAILABLE; break;
		case O_JSON: json = 1; break;
		case O_ASSIGN: assignment = optarg; break;
		case O_DELETE_CONFIG: {
			char e[200];
			snprintf(e, sizeof(e), "%s=", optarg);
			if (!optarg[0] || strchr(optarg, '=') || hw_cli_kvs_add(&del, e))
				return usage_err("--delete-config wants a config name");
			break;
		}
		default: return usage_err("bad option");
		}
	}
	if (optind >= argc)
		return usage_err("missing command (create, describe, alter, delete)");
	const char *cmd = argv[optind++];
	const char *name = optind < argc ? argv[optind++] : NULL;
	int is_alter = !strcmp(cmd, "alter-config") || !strcmp(cmd, "alter");
	for (; is_alter && optind < argc; optind++)
		if (hw_cli_kvs_add(&kv, argv[optind]))
			return usage_err("alter-config wants key=value entries");
	if (optind < argc)
		return usage_err("unexpected argument");
	if (name && (strlen(name) >= HW_TOPIC_NAME_MAX || !*name))
		return usage_err("topic names are 1..249 bytes");
	int is_create = !strcmp(cmd, "create");
	int is_delete = !strcmp(cmd, "delete");
	if (!is_create && !is_alter && !is_delete && strcmp(cmd, "describe")) {
		hw_cli_err("unknown topic command '%s'", cmd);
		return HW_CLI_EXIT_USAGE;
	}
	if (is_delete && !name)
		return usage_err("delete needs NAME");
	if (is_alter && (!name || kv.n + del.n == 0))
		return usage_err("alter needs NAME and --config key=value or --delete-config key entries");
	if (!is_alter && del.n)
		return usage_err("--delete-config is for alter");
	if (is_create && assignment && (partitions >= 0 || rf >= 0))
		return usage_err("--replica-assignment can't be used with --partitions or --replication-factor");
	if (is_create && (!name || (!assignment && (partitions < 0 || rf < 0))))
		return usage_err("create needs NAME and --partitions P --replication-factor R, or --replica-assignment");
	hw_client *cl;
	int ex = hw_client_open_cli(&cl, dir, bootstrap, command_config, 0, 1);
	if (ex)
		return ex;
	ex = is_delete ? cmd_delete(cl, name, timeout_ms)
	   : is_create ? cmd_create(cl, name, partitions, rf, &kv, assignment, timeout_ms)
		 : is_alter ? cmd_alter_config(cl, name, &kv, &del, timeout_ms)
			    : cmd_describe(cl, name, filters, json, timeout_ms);
	hw_client_close(cl);
	return ex;
}
