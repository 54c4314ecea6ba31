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
#include "hw_ctrl_place.h"
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

/* The new partitions' state: leader the first replica, ISR every replica,
 * epochs 0 (Kafka's PartitionRecord for a new topic). */
static void init_parts(ctrl_part *parts, int partitions)
{
	for (int p = 0; p < partitions; p++) {
		parts[p].isr = parts[p].replicas;
		parts[p].leader = parts[p].replicas.id[0];
		parts[p].leader_epoch = 0;
		parts[p].partition_epoch = 0;
		parts[p].lrs = HW_LRS_RECOVERED;
	}
}

/* Placement (hw_ctrl_place.h, docs/racks.md "Rack-aware placement"):
 * Kafka's AdminUtils.assignReplicasToBrokers over the unfenced brokers,
 * rack-aware when they have racks. Kafka picks the start index and the
 * replica shift at random; here both derive from the topic id so that
 * assignments are reproducible. 0, -ENOTSUP (some brokers without a rack),
 * -ENOMEM. */
static int assign_replicas(hw_ctrl *c, const int32_t *usable, int n, int partitions, int rf,
			   uint32_t topic_id, ctrl_part *parts)
{
	hw_place_broker b[HW_CTRL_MAX_BROKERS];
	hw_idset *out = calloc((size_t)partitions, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		const ctrl_broker *cb = ctrl_broker_find(c, usable[i]);
		b[i] = (hw_place_broker){ .id = usable[i], .rack = cb ? cb->rack : "" };
	}
	int rc = hw_place_assign(b, n, partitions, rf, (int)(topic_id % (uint32_t)n), (int)(topic_id / (uint32_t)n),
				 out);
	for (int p = 0; rc == 0 && p < partitions; p++)
		parts[p].replicas = out[p];
	free(out);
	if (rc == 0)
		init_parts(parts, partitions);
	return rc;
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

int ctrl_tc_set(const hw_ctrl *c, hw_ctrl_topic_info *info, const char *key, const char *value, char *why,
		size_t why_len)
{
	int id = hw_tc_lookup(key);
	if (id < 0) {
		snprintf(why, why_len, "Unknown topic config name: %.60s", key);
		return -ENOENT;
	}
	const hw_tc_def *d = hw_tc_def_of(id);
	if (!value) { /* back to the broker's value */
		info->tc_set &= ~(1u << id);
		memset(info->tc_value[id], 0, sizeof(info->tc_value[id]));
		if (id == HW_TC_MIN_INSYNC_REPLICAS)
			info->min_insync_replicas = c->cfg.default_min_isr;
		else if (id == HW_TC_UNCLEAN_LEADER_ELECTION)
			info->unclean_leader_election = !!c->cfg.default_unclean;
		else if (d->type == HW_TC_T_THROTTLE)
			set_throttle(info, key, "");
		return 0;
	}
	if (strlen(value) >= sizeof(info->tc_value[0])) {
		snprintf(why, why_len, "Invalid value for configuration %s: longer than %zu bytes", key,
			 sizeof(info->tc_value[0]) - 1);
		return -EINVAL;
	}
	int64_t v = 0;
	if (d->type == HW_TC_T_THROTTLE) {
		if (set_throttle(info, key, value) < 0) {
			snprintf(why, why_len, "Invalid value %.40s for configuration %s: must be '*' or a list "
				 "partitionId:brokerId,...", value, key);
			return -EINVAL;
		}
	} else if (hw_tc_parse(id, value, &v, why, why_len) < 0) {
		return -EINVAL;
	}
	if (id == HW_TC_MIN_INSYNC_REPLICAS)
		info->min_insync_replicas = (int16_t)v;
	else if (id == HW_TC_UNCLEAN_LEADER_ELECTION)
		info->unclean_leader_election = (uint8_t)v;
	info->tc_set |= 1u << id;
	memset(info->tc_value[id], 0, sizeof(info->tc_value[id])); /* whole: infos compare by bytes */
	snprintf(info->tc_value[id], sizeof(info->tc_value[id]), "%s", value);
	return 0;
}

void ctrl_tc_to_state(const hw_ctrl_topic_info *info, hw_topic_config *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < HW_TC_COUNT; i++) {
		int64_t v;
		if ((info->tc_set & (1u << i)) && hw_tc_def_of(i)->log &&
		    hw_tc_parse(i, info->tc_value[i], &v, NULL, 0) == 0) {
			out->set |= 1u << i;
			out->v[i] = v;
		}
	}
}

/* Kafka's JSON string body: " and \ escaped, control bytes as \u00XX. */
static size_t json_str(char *b, size_t cap, size_t n, const char *s)
{
	n += (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			n += (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, "\\%c", ch);
		else if (ch < 0x20)
			n += (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, "\\u%04x", ch);
		else
			n += (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, "%c", ch);
	}
	return n + (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, "\"");
}

int hw_ctrl_topic_config_json(const hw_ctrl_topic_info *info, char *b, size_t cap)
{
	size_t n = (size_t)snprintf(b, cap, "{\"version\":1,\"config\":{");
	int first = 1;
	for (int i = 0; i < HW_TC_COUNT; i++) {
		if (!(info->tc_set & (1u << i)))
			continue;
		if (!first)
			n += (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, ",");
		first = 0;
		n = json_str(b, cap, n, hw_tc_def_of(i)->name);
		n += (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, ":");
		n = json_str(b, cap, n, info->tc_value[i]);
	}
	n += (size_t)snprintf(b + (n < cap ? n : cap), n < cap ? cap - n : 0, "}}");
	if (n >= cap)
		return -EMSGSIZE;
	return (int)n;
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
		CT_FAIL(HW_ERR_INVALID_REQUEST, "illegal topic name (1-249 of [a-zA-Z0-9._-])");
	if (ctrl_topic_by_name(c, req->name))
		CT_FAIL(HW_ERR_TOPIC_ALREADY_EXISTS, "topic '%s' already exists", req->name);
	int partitions = req->partitions > 0 ? req->partitions : c->cfg.default_partitions;
	int rf = req->replication_factor > 0 ? req->replication_factor : c->cfg.default_rf;
	hw_ctrl_topic_info conf = { .name = "" };
	conf.min_insync_replicas = c->cfg.default_min_isr;
	conf.unclean_leader_election = !!c->cfg.default_unclean;
	if (req->partitions == 0 || req->replication_factor == 0)
		CT_FAIL(req->partitions == 0 ? HW_ERR_INVALID_PARTITIONS : HW_ERR_INVALID_REPLICATION_FACTOR,
			"partitions and replication factor must be >= 1 (or -1 for the default)");
	for (int i = 0; i < req->n_configs; i++) {
		const hw_config_kv *kv = &req->configs[i];
		char why[HW_ERRMSG_MAX];
		if (memchr(kv->key, 0, sizeof(kv->key)) == NULL || memchr(kv->value, 0, sizeof(kv->value)) == NULL)
			CT_FAIL(HW_ERR_INVALID_CONFIG, "config entry %d is not terminated", i);
		if (ctrl_tc_set(c, &conf, kv->key, kv->value, why, sizeof(why)) < 0)
			CT_FAIL(HW_ERR_INVALID_CONFIG, "%s", why);
	}
	int min_isr = conf.min_insync_replicas, unclean = conf.unclean_leader_election;
	int32_t usable[HW_CTRL_MAX_BROKERS];
	int n = 0;
	for (int i = 0; i < c->n_brokers; i++)
		if (c->brokers[i].state == HW_CTRL_BROKER_ACTIVE)
			usable[n++] = c->brokers[i].id;
	if (req->n_assignments) {
		/* an explicit assignment (Kafka's CreatableTopic.assignments):
		 * partitions and RF come from it (docs/racks.md) */
		if (req->partitions > 0 || req->replication_factor > 0)
			CT_FAIL(HW_ERR_INVALID_REQUEST, "both partitions/replication factor and a replica "
				"assignment were given");
		if (req->n_assignments > HW_CTRL_MAX_PARTITIONS)
			CT_FAIL(HW_ERR_INVALID_PARTITIONS, "partitions must be 1..%d", HW_CTRL_MAX_PARTITIONS);
		char why[HW_ERRMSG_MAX];
		if (hw_place_check_manual(req->assignments, (int)req->n_assignments, usable, n, why, sizeof(why)))
			CT_FAIL(HW_ERR_INVALID_REPLICA_ASSIGNMENT, "%s", why);
		partitions = (int)req->n_assignments;
		rf = req->assignments[0].n;
	}
	if (partitions < 1 || partitions > HW_CTRL_MAX_PARTITIONS)
		CT_FAIL(HW_ERR_INVALID_PARTITIONS, "partitions must be 1..%d", HW_CTRL_MAX_PARTITIONS);
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
	memcpy(t.info.leader_throttled_replicas, conf.leader_throttled_replicas,
	       sizeof(t.info.leader_throttled_replicas));
	memcpy(t.info.follower_throttled_replicas, conf.follower_throttled_replicas,
	       sizeof(t.info.follower_throttled_replicas));
	t.info.tc_set = conf.tc_set;
	memcpy(t.info.tc_value, conf.tc_value, sizeof(t.info.tc_value));
	t.parts = calloc((size_t)partitions, sizeof(*t.parts));
	if (!t.parts)
		return -ENOMEM;
	int rc = 0;
	if (req->n_assignments) {
		for (int p = 0; p < partitions; p++)
			t.parts[p].replicas = req->assignments[p];
		init_parts(t.parts, partitions);
	} else {
		rc = assign_replicas(c, usable, n, partitions, rf, t.info.id, t.parts);
	}
	if (rc == -ENOTSUP) {
		free(t.parts);
		CT_FAIL(HW_ERR_INVALID_REPLICA_ASSIGNMENT,
			"not all brokers have rack information for replica rack aware assignment");
	}
	if (rc == 0)
		rc = ctrl_persist_topic(c, &t);
	if (rc == 0)
		rc = ctrl_topic_add(c, &t);
	if (rc < 0) {
		free(t.parts);
		return rc;
	}
	char js[1024];
	HW_LOG(INFO, "ctrl", "topic %s created: id %u, %d partitions, RF %d, min.insync.replicas %d, "
	       "unclean.leader.election.enable %s, configs %s", t.info.name, t.info.id, partitions, rf, min_isr,
	       unclean ? "true" : "false", hw_ctrl_topic_config_json(&t.info, js, sizeof(js)) > 0 ? js : "(long)");
	ctrl_topic *tt = ctrl_topic_by_id(c, t.info.id);
	for (int pi = 0; pi < partitions; pi++)
		ctrl_part_push(c, tt, (uint32_t)pi, -1);
	resp->topic_id = t.info.id;
	return 0;
}

int hw_ctrl_alter_configs(hw_ctrl *c, const hw_alter_config_req *req, hw_alter_config_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	snprintf(resp->name, sizeof(resp->name), "%.*s", (int)sizeof(resp->name) - 1, req->name);
	if ((req->n_configs && !req->configs) || (req->n_deletes && !req->deletes)) {
		resp->error = HW_ERR_INVALID_REQUEST;
		snprintf(resp->error_message, sizeof(resp->error_message), "config entries missing");
		return 0;
	}
	ctrl_topic *t = ctrl_topic_by_name(c, resp->name);
	if (!t) {
		resp->error = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
		snprintf(resp->error_message, sizeof(resp->error_message), "unknown topic '%s'", resp->name);
		return 0;
	}
	ctrl_topic nt = *t;
	if (req->replace)
		for (int i = 0; i < HW_TC_COUNT; i++)
			if (nt.info.tc_set & (1u << i))
				ctrl_tc_set(c, &nt.info, hw_tc_def_of(i)->name, NULL, resp->error_message,
					    sizeof(resp->error_message));
	for (unsigned i = 0; i < (unsigned)req->n_configs + req->n_deletes; i++) {
		const hw_config_kv *kv = i < req->n_configs ? &req->configs[i] : &req->deletes[i - req->n_configs];
		if (memchr(kv->key, 0, sizeof(kv->key)) == NULL || memchr(kv->value, 0, sizeof(kv->value)) == NULL ||
		    ctrl_tc_set(c, &nt.info, kv->key, i < req->n_configs ? kv->value : NULL, resp->error_message,
				sizeof(resp->error_message)) < 0) {
			resp->error = HW_ERR_INVALID_CONFIG;
			return 0;
		}
	}
	resp->error_message[0] = 0;
	if (req->validate_only)
		return 0;
	int clear_elr = nt.info.min_insync_replicas != t->info.min_insync_replicas;
	int elect = nt.info.unclean_leader_election && !t->info.unclean_leader_election;
	int rc = ctrl_persist_topic_config(c, &nt);
	if (rc < 0)
		return rc;
	char js[1024];
	HW_LOG(INFO, "ctrl", "topic %s configs %s", t->info.name,
	       hw_ctrl_topic_config_json(&nt.info, js, sizeof(js)) > 0 ? js : "(long)");
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

int hw_ctrl_alter_config(hw_ctrl *c, const char *topic, const char *key, const char *value,
			 int16_t *error)
{
	hw_config_kv kv;
	snprintf(kv.key, sizeof(kv.key), "%s", key);
	snprintf(kv.value, sizeof(kv.value), "%s", value);
	hw_alter_config_req req = { .n_configs = 1, .configs = &kv };
	snprintf(req.name, sizeof(req.name), "%s", topic);
	hw_alter_config_resp resp;
	int rc = hw_ctrl_alter_configs(c, &req, &resp);
	*error = resp.error;
	return rc;
}

/* ------------------------------------------------------ AlterPartition */
