/* hw_ctrl_topic.c — the controller's topics: creation (name rules,
 * replica placement, topic configs) and runtime config changes
 * (docs/replication.md). Split from hw_ctrl.c; the design note is in
 * hw_ctrl.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_assert.h"
#include "hw_batch.h"
#include "hw_ctrl_int.h"
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_names.h"

/* -------------------------------------------------------------- topics */

static int legal_topic_name(const char *s)
{
	return hw_topic_name_legal(s, HW_CTRL_TOPIC_NAME - 1);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Kafka's rack-unaware assignment (AdminUtils.assignReplicasToBrokers): the
 * first replica round-robins over the sorted brokers from a start index; the
 * followers are placed at a shift from it that grows by one each time the
 * partitions wrap around the broker list, so leaders and followers both
 * spread evenly. Kafka picks start and shift at random; here both derive
 * from the topic id so that assignments are reproducible. */
static void assign_replicas(const int32_t *brokers, int n, int partitions, int rf, uint32_t topic_id,
			    ctrl_part *parts)
{
	int start = (int)(topic_id % (uint32_t)n);
	int shift = n > 1 ? (int)((topic_id / (uint32_t)n) % (uint32_t)(n - 1)) : 0;
	for (int p = 0; p < partitions; p++) {
		if (p > 0 && p % n == 0)
			shift++;
		int first = (p + start) % n;
		hw_idset *r = &parts[p].replicas;
		r->n = 0;
		r->id[r->n++] = brokers[first];
		for (int j = 0; j < rf - 1; j++) {
			int s = 1 + (shift + j) % (n - 1);
			r->id[r->n++] = brokers[(first + s) % n];
		}
		parts[p].isr = *r;
		parts[p].leader = r->id[0];
		parts[p].leader_epoch = 0;
		parts[p].partition_epoch = 0;
		parts[p].lrs = HW_LRS_RECOVERED;
	}
}

/* Kafka CreateTopics with explicit assignments (ReplicationControlManager
 * validateManualPartitionAssignment): every partition lists rf distinct
 * brokers, each registered and unfenced. 0, or -EINVAL. */
static int manual_assignment(hw_ctrl *c, const hw_idset *a, int partitions, int rf, ctrl_part *parts)
{
	for (int p = 0; p < partitions; p++) {
		if (a[p].n != rf)
			return -EINVAL;
		for (int i = 0; i < rf; i++) {
			if (!ctrl_broker_acceptable(c, a[p].id[i]))
				return -EINVAL;
			for (int j = 0; j < i; j++)
				if (a[p].id[j] == a[p].id[i])
					return -EINVAL;
		}
		parts[p].replicas = a[p];
		parts[p].isr = a[p];
		parts[p].leader = a[p].id[0];
		parts[p].leader_epoch = 0;
		parts[p].partition_epoch = 0;
		parts[p].lrs = HW_LRS_RECOVERED;
	}
	return 0;
}

static int parse_bool(const char *v, int *out)
{
	if (strcmp(v, "true") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0)
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int parse_min_isr(const char *v, int *out)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < 1 || x > INT16_MAX)
		return -EINVAL;
	*out = (int)x;
	return 0;
}

int hw_ctrl_throttled_replicas_resolve(const char *v, uint32_t partition, const hw_idset *replicas,
				       hw_idset *out)
{
	if (out)
		memset(out, 0, sizeof(*out));
	if (!v)
		return -EINVAL;
	while (*v == ' ' || *v == '\t')
		v++;
	if (v[0] == '*') {
		const char *e = v + 1;
		while (*e == ' ' || *e == '\t')
			e++;
		if (*e && *e != ',')
			return -EINVAL;
		if (out && replicas)
			*out = *replicas;
		return 0;
	}
	/* covered[i]: replicas->id[i] is listed for this partition */
	uint8_t covered[HW_MAX_RF] = { 0 };
	const char *q = v;
	for (;;) {
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == ',' || *q == 0) { /* empty item */
			if (*q == 0)
				break;
			q++;
			continue;
		}
		uint64_t part = 0, broker = 0;
		int nd = 0;
		for (; *q >= '0' && *q <= '9'; q++, nd++)
			if ((part = part * 10 + (uint64_t)(*q - '0')) > UINT32_MAX)
				return -EINVAL;
		if (!nd || *q++ != ':')
			return -EINVAL;
		nd = 0;
		for (; *q >= '0' && *q <= '9'; q++, nd++)
			if ((broker = broker * 10 + (uint64_t)(*q - '0')) > INT32_MAX)
				return -EINVAL;
		if (!nd)
			return -EINVAL;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != ',' && *q != 0)
			return -EINVAL;
		if (replicas && part == partition)
			for (int i = 0; i < replicas->n && i < HW_MAX_RF; i++)
				if (replicas->id[i] == (int32_t)broker)
					covered[i] = 1;
		if (*q == ',')
			q++;
	}
	if (out && replicas)
		for (int i = 0; i < replicas->n && i < HW_MAX_RF; i++)
			if (covered[i])
				out->id[out->n++] = replicas->id[i];
	return 0;
}

static int is_throttle_key(const char *key)
{
	return strcmp(key, "leader.replication.throttled.replicas") == 0 ||
	       strcmp(key, "follower.replication.throttled.replicas") == 0;
}

/* Validate and store a throttled-replicas value into info. 0 / -EINVAL. */
static int set_throttle(hw_ctrl_topic_info *info, const char *key, const char *value)
{
	if (strlen(value) >= sizeof(info->leader_throttled_replicas) ||
	    hw_ctrl_throttled_replicas_resolve(value, 0, NULL, NULL) < 0)
		return -EINVAL;
	char *dst = key[0] == 'l' ? info->leader_throttled_replicas : info->follower_throttled_replicas;
	snprintf(dst, sizeof(info->leader_throttled_replicas), "%s", value);
	return 0;
}

#define CT_FAIL(code, ...)                                                          \
	do {                                                                        \
		resp->error = (code);                                               \
		snprintf(resp->error_message, sizeof(resp->error_message), __VA_ARGS__); \
		return 0;                                                           \
	} while (0)

int hw_ctrl_create_topic(hw_ctrl *c, const hw_create_topic_req *req, hw_create_topic_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	memcpy(resp->name, req->name, sizeof(resp->name));
	resp->name[sizeof(resp->name) - 1] = 0;
	if (memchr(req->name, 0, sizeof(req->name)) == NULL || !legal_topic_name(req->name))
		CT_FAIL(HW_ERR_INVALID_REQUEST, "illegal topic name (1-63 of [a-zA-Z0-9._-])");
	if (ctrl_topic_by_name(c, req->name))
		CT_FAIL(HW_ERR_TOPIC_ALREADY_EXISTS, "topic '%s' already exists", req->name);
	int partitions = req->partitions > 0 ? req->partitions : c->cfg.default_partitions;
	int rf = req->replication_factor > 0 ? req->replication_factor : c->cfg.default_rf;
	int min_isr = c->cfg.default_min_isr;
	int unclean = !!c->cfg.default_unclean;
	hw_ctrl_topic_info throttle = { .name = "" };
	if (req->partitions == 0 || req->replication_factor == 0)
		CT_FAIL(req->partitions == 0 ? HW_ERR_INVALID_PARTITIONS : HW_ERR_INVALID_REPLICATION_FACTOR,
			"partitions and replication factor must be >= 1 (or -1 for the default)");
	for (int i = 0; i < req->n_configs; i++) {
		const hw_config_kv *kv = &req->configs[i];
		if (strcmp(kv->key, "min.insync.replicas") == 0) {
			if (parse_min_isr(kv->value, &min_isr) < 0)
				CT_FAIL(HW_ERR_INVALID_CONFIG, "min.insync.replicas must be an integer >= 1");
		} else if (strcmp(kv->key, "unclean.leader.election.enable") == 0) {
			if (parse_bool(kv->value, &unclean) < 0)
				CT_FAIL(HW_ERR_INVALID_CONFIG, "unclean.leader.election.enable must be true or false");
		} else if (strcmp(kv->key, "compression.type") == 0) {
			/* Kafka's topic config; only its default is implemented */
			int crc = memchr(kv->value, 0, sizeof(kv->value)) ?
				  hw_compression_type_check(kv->value) : -EINVAL;
			if (crc < 0)
				CT_FAIL(HW_ERR_INVALID_CONFIG, "compression.type=%.20s: %s", kv->value,
					hw_compression_type_error(crc));
		} else if (is_throttle_key(kv->key)) {
			if (memchr(kv->value, 0, sizeof(kv->value)) == NULL ||
			    set_throttle(&throttle, kv->key, kv->value) < 0)
				CT_FAIL(HW_ERR_INVALID_CONFIG, "%.60s must be '*' or a list partitionId:brokerId,...",
					kv->key);
		} else {
			CT_FAIL(HW_ERR_INVALID_CONFIG, "unknown topic config '%.60s'", kv->key);
		}
	}
	if (partitions < 1 || partitions > HW_CTRL_MAX_PARTITIONS)
		CT_FAIL(HW_ERR_INVALID_PARTITIONS, "partitions must be 1..%d", HW_CTRL_MAX_PARTITIONS);
	int32_t usable[HW_CTRL_MAX_BROKERS];
	int n = 0;
	for (int i = 0; i < c->n_brokers; i++)
		if (c->brokers[i].state == HW_CTRL_BROKER_ACTIVE)
			usable[n++] = c->brokers[i].id;
	if (rf < 1 || rf > HW_MAX_RF || rf > n)
		CT_FAIL(HW_ERR_INVALID_REPLICATION_FACTOR,
			"replication factor %d: %d unfenced brokers available (max %d)", rf, n, HW_MAX_RF);
	resp->partitions = partitions;
	resp->replication_factor = (int16_t)rf;
	if (req->validate_only)
		return 0;
	qsort(usable, (size_t)n, sizeof(usable[0]), cmp_i32);
	ctrl_topic t = { 0 };
	snprintf(t.info.name, sizeof(t.info.name), "%s", req->name);
	t.info.id = c->next_topic_id;
	t.info.partitions = partitions;
	t.info.replication_factor = (int16_t)rf;
	t.info.min_insync_replicas = (int16_t)min_isr;
	t.info.unclean_leader_election = (uint8_t)unclean;
	memcpy(t.info.leader_throttled_replicas, throttle.leader_throttled_replicas,
	       sizeof(t.info.leader_throttled_replicas));
	memcpy(t.info.follower_throttled_replicas, throttle.follower_throttled_replicas,
	       sizeof(t.info.follower_throttled_replicas));
	t.parts = calloc((size_t)partitions, sizeof(*t.parts));
	if (!t.parts)
		return -ENOMEM;
	if (!req->assignments) {
		assign_replicas(usable, n, partitions, rf, t.info.id, t.parts);
	} else if (manual_assignment(c, req->assignments, partitions, rf, t.parts) < 0) {
		free(t.parts);
		CT_FAIL(HW_ERR_INVALID_REPLICA_ASSIGNMENT,
			"each assignment must list %d distinct unfenced brokers", rf);
	}
	int rc = ctrl_persist_topic(c, &t);
	if (rc == 0)
		rc = ctrl_topic_add(c, &t);
	if (rc < 0) {
		free(t.parts);
		return rc;
	}
	HW_LOG(INFO, "ctrl", "topic %s created: id %u, %d partitions, RF %d, min.insync.replicas %d, "
	       "unclean.leader.election.enable %s", t.info.name, t.info.id, partitions, rf, min_isr,
	       unclean ? "true" : "false");
	ctrl_topic *tt = ctrl_topic_by_id(c, t.info.id);
	for (int pi = 0; pi < partitions; pi++)
		ctrl_part_push(c, tt, (uint32_t)pi, -1);
	resp->topic_id = t.info.id;
	return 0;
}

int hw_ctrl_alter_config(hw_ctrl *c, const char *topic, const char *key, const char *value,
			 int16_t *error)
{
	*error = HW_ERR_NONE;
	ctrl_topic *t = ctrl_topic_by_name(c, topic);
	if (!t) {
		*error = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
		return 0;
	}
	ctrl_topic nt = *t;
	int clear_elr = 0, elect = 0;
	if (strcmp(key, "min.insync.replicas") == 0) {
		int v;
		if (parse_min_isr(value, &v) < 0) {
			*error = HW_ERR_INVALID_CONFIG;
			return 0;
		}
		clear_elr = v != t->info.min_insync_replicas;
		nt.info.min_insync_replicas = (int16_t)v;
	} else if (strcmp(key, "unclean.leader.election.enable") == 0) {
		int v;
		if (parse_bool(value, &v) < 0) {
			*error = HW_ERR_INVALID_CONFIG;
			return 0;
		}
		nt.info.unclean_leader_election = (uint8_t)v;
		elect = nt.info.unclean_leader_election && !t->info.unclean_leader_election;
	} else if (strcmp(key, "compression.type") == 0) {
		/* only Kafka's default "producer": nothing to store or push */
		if (hw_compression_type_check(value) < 0)
			*error = HW_ERR_INVALID_CONFIG;
		return 0;
	} else if (is_throttle_key(key)) {
		if (set_throttle(&nt.info, key, value) < 0) {
			*error = HW_ERR_INVALID_CONFIG;
			return 0;
		}
	} else {
		*error = HW_ERR_INVALID_CONFIG;
		return 0;
	}
	int rc = ctrl_persist_topic_config(c, &nt);
	if (rc < 0)
		return rc;
	HW_LOG(INFO, "ctrl", "topic %s config %s = %s", t->info.name, key, value);
	t->info = nt.info;
	for (int pi = 0; pi < t->info.partitions; pi++) {
		ctrl_part *p = &t->parts[pi];
		ctrl_change ch;
		ctrl_change_init(&ch, p, "config change");
		if (clear_elr) {
			ch.target_elr = (hw_idset){ 0 };
			ch.clear_lke = 1;
		}
		rc = ctrl_part_apply(c, t, (uint32_t)pi, &ch, NULL);
		if (rc < 0)
			return rc;
		if (rc == 0)
			ctrl_part_push(c, t, (uint32_t)pi, -1); /* new config in force */
	}
	if (elect)
		return ctrl_elect_leaderless(c, t, "unclean leader election enabled");
	return 0;
}

/* ------------------------------------------------------ AlterPartition */
