/* hwd_config_fill.c — phase 3 of hwd_config_load, continued: copying the
 * validated controller, replication, log, runtime and Kafka-listener keys
 * into hwd_config. No range checks here: the schema
 * (hwd_config_schema.c) has refused every out-of-range value, with its
 * file and line, before this runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_log_clean.h"
#include "hw_reactor.h"
#include "hwd.h"
#include "hwd_config_int.h"
#include "hwd_config_schema.h"

static int fill_controller(const hw_props *p, hwd_config *c)
{
	int32_t imb, rf;
	int unclean, elr, rebalance, del;
	hw_ctrl_config_defaults(&c->ctrl);
	c->ctrl.node_id = c->controller_id;
	if (hwd_cfg_i32(p, "broker.heartbeat.interval.ms", &c->heartbeat_interval_ms) ||
	    hwd_cfg_i32(p, "broker.session.timeout.ms", &c->session_timeout_ms) ||
	    hwd_cfg_i32(p, "hiwater.controller.resync.interval.ms", &c->ctrl.resync_interval_ms) ||
	    hwd_cfg_bool(p, "unclean.leader.election.enable", &unclean) ||
	    hwd_cfg_bool(p, "eligible.leader.replicas.enable", &elr) ||
	    hwd_cfg_i32(p, "num.partitions", &c->ctrl.default_partitions) ||
	    hwd_cfg_bool(p, "auto.leader.rebalance.enable", &rebalance) ||
	    hwd_cfg_i32(p, "leader.imbalance.check.interval.seconds", &imb) ||
	    hwd_cfg_i32(p, "default.replication.factor", &rf) ||
	    hwd_cfg_bool(p, "delete.topic.enable", &del))
		return -1;
	c->ctrl.delete_topic_enable = (uint8_t)del;
	c->ctrl.default_unclean = (uint8_t)unclean;
	c->ctrl.elr_enabled = (uint8_t)elr;
	c->ctrl.auto_leader_rebalance = (uint8_t)rebalance;
	c->ctrl.heartbeat_interval_ms = c->heartbeat_interval_ms;
	c->ctrl.session_timeout_ms = c->session_timeout_ms;
	c->ctrl.leader_imbalance_check_interval_ms = imb * 1000; /* <= 86400 s: fits */
	c->ctrl.default_rf = (int16_t)rf;
	return 0;
}

/* The Kafka replica.* keys of hw_rm.h's table, and compression.type. */
static int fill_replication(const hw_props *p, hwd_config *c)
{
	int64_t v;
	hw_rm_config_defaults(&c->rm);
	c->rm.node_id = c->node_id;
	c->rm.controller_id = c->controller_id;
#define RM_GET(field, name, def, lo, hi, unit, imp, doc)                 \
	if (hwd_cfg_i64(p, name, &v) || hw_rm_config_set(&c->rm, name, v)) \
		return hwd_cfg_err(p, c, name, "refused by the replica manager");
	HW_RM_KAFKA_CONFIG_TABLE(RM_GET)
#undef RM_GET
	c->ctrl.default_min_isr = (int16_t)c->rm.min_insync_replicas; /* <= 32767 (schema) */
	/* Kafka's values parse (the schema's enum); only the default is served */
	char codec[32];
	if (hwd_cfg_str(p, "compression.type", codec, sizeof(codec)))
		return -1;
	int crc = hw_compression_type_check(codec);
	if (crc < 0)
		return hwd_cfg_err(p, c, "compression.type", hw_compression_type_error(crc));
	return 0;
}

static int fill_log(const hw_props *p, hwd_config *c)
{
	int32_t inline_max, wb_window, prealloc_step, dio_batch;
	int policy;
	hwd_log_config_default(&c->log);
	if (hwd_cfg_i64(p, "log.segment.bytes", &c->log.segment_bytes) ||
	    hwd_cfg_i64(p, "log.roll.ms", &c->log.roll_ms) ||
	    hwd_cfg_i32(p, "log.index.interval.bytes", &c->log.index_interval_bytes) ||
	    hwd_cfg_i32(p, "log.index.size.max.bytes", &c->log.index_size_max_bytes) ||
	    hwd_cfg_i64(p, "log.retention.bytes", &c->log.retention_bytes) ||
	    hwd_cfg_i64(p, "log.retention.ms", &c->log.retention_ms) ||
	    hwd_cfg_i64(p, "log.flush.interval.messages", &c->log.flush_messages) ||
	    hwd_cfg_i64(p, "log.flush.interval.ms", &c->log.flush_ms) ||
	    hwd_cfg_i32(p, "hiwater.log.inline.write.max.bytes", &inline_max) ||
	    hwd_cfg_i32(p, "hiwater.log.writeback.window.bytes", &wb_window) ||
	    hwd_cfg_i32(p, "hiwater.log.preallocate.step.bytes", &prealloc_step) ||
	    hwd_cfg_enum(p, "hiwater.log.direct.io", &c->log.direct_io) || /* hw_log_direct_mode order */
	    hwd_cfg_i32(p, "hiwater.log.direct.auto.batch.bytes", &dio_batch) ||
	    hwd_cfg_bool(p, "log.preallocate", &c->log.preallocate) ||
	    hwd_cfg_enum(p, "hiwater.log.flush.policy", &policy))
		return -1;
	/* log compaction defaults (docs/compaction.md) */
	char pol[32], ratio[32];
	if (hwd_cfg_str(p, "log.cleanup.policy", pol, sizeof(pol)) ||
	    hwd_cfg_str(p, "log.cleaner.min.cleanable.ratio", ratio, sizeof(ratio)) ||
	    hwd_cfg_i64(p, "log.cleaner.delete.retention.ms", &c->log.delete_retention_ms) ||
	    hwd_cfg_i64(p, "log.cleaner.min.compaction.lag.ms", &c->log.min_compaction_lag_ms) ||
	    hwd_cfg_i64(p, "log.cleaner.max.compaction.lag.ms", &c->log.max_compaction_lag_ms) ||
	    hwd_cfg_i64(p, "log.cleaner.dedupe.buffer.size", &c->log.cleaner_dedupe_bytes) ||
	    hwd_cfg_bool(p, "log.cleaner.enable", &c->rm.log_cleaner_enable) ||
	    hwd_cfg_i64(p, "log.cleaner.backoff.ms", &c->rm.log_cleaner_backoff_ms) ||
	    hwd_cfg_i64(p, "offsets.topic.segment.bytes", &c->offsets_topic_segment_bytes))
		return -1;
	c->log.cleanup_policy = hw_log_cleanup_policy_parse(pol); /* valid (schema) */
	c->log.min_cleanable_dirty_ratio = strtod(ratio, NULL);   /* in [0, 1] (schema) */
	c->log.inline_write_max_bytes = (uint32_t)inline_max; /* >= 0 (schema) */
	c->log.writeback_window_bytes = (uint32_t)wb_window;  /* 0 or 64 KiB .. 1 GiB (schema) */
	c->log.direct_auto_batch_bytes = (uint32_t)dio_batch; /* >= 1 (schema) */
	c->log.preallocate_step_bytes = (uint32_t)prealloc_step; /* 0 or 1 MiB .. 1 GiB (schema) */
	hwd_log_config_set_policy(&c->log, policy);
	return 0;
}

int hwd_config_fill_engine(const hw_props *p, hwd_config *c)
{
	return fill_controller(p, c) || fill_replication(p, c) || fill_log(p, c) ? -1 : 0;
}

/* "0,1,3" (validated): one reactor per entry, pinned to that CPU. */
static void fill_lcores(const char *lcores, hwd_config *c)
{
	c->reactor_cpu = -1;
	c->n_reactors = 1;
	if (!lcores[0])
		return;
	c->n_reactors = 0;
	for (const char *q = lcores; c->n_reactors < HWD_MAX_REACTORS;) {
		char *end;
		c->reactor_cpus[c->n_reactors++] = (int32_t)strtol(q, &end, 10);
		if (*end != ',')
			break;
		q = end + 1;
	}
	c->reactor_cpu = c->reactor_cpus[0];
}

int hwd_config_fill_runtime(const hw_props *p, hwd_config *c)
{
	char lcores[128];
	int32_t v[5];
	if (hwd_cfg_enum(p, "hiwater.idle.strategy", &c->idle_strategy) || /* hw_idle_strategy order */
	    hwd_cfg_i32(p, "hiwater.idle.spin.us", &v[0]) || hwd_cfg_i32(p, "hiwater.idle.spin.max.us", &v[1]) ||
	    hwd_cfg_i32(p, "hiwater.idle.demote.us", &v[4]) ||
	    hwd_cfg_i32(p, "hiwater.idle.sleep.min.us", &v[2]) ||
	    hwd_cfg_i32(p, "hiwater.idle.sleep.max.us", &v[3]) ||
	    hwd_cfg_str(p, "hiwater.reactor.lcores", lcores, sizeof(lcores)) ||
	    hwd_cfg_i32(p, "hiwater.metrics.port", &c->metrics_port) ||
	    hwd_cfg_str(p, "hiwater.metrics.listen", c->metrics_listen, sizeof(c->metrics_listen)) ||
	    hwd_cfg_i32(p, "hiwater.controlled.shutdown.timeout.ms", &c->controlled_shutdown_timeout_ms) ||
	    hwd_cfg_bool(p, "controlled.shutdown.enable", &c->controlled_shutdown_enable) ||
	    hwd_cfg_str(p, "hiwater.log.level", c->log_level, sizeof(c->log_level)))
		return -1;
	c->idle_spin_us = v[0];
	c->idle_spin_max_us = v[1];
	c->idle_demote_us = v[4];
	c->idle_sleep_min_us = v[2];
	c->idle_sleep_max_us = v[3];
	fill_lcores(lcores, c);
	if (!strcmp(c->metrics_listen, "localhost"))
		snprintf(c->metrics_listen, sizeof(c->metrics_listen), "127.0.0.1");
	return 0;
}

/* "PLAINTEXT://HOST:PORT" (validated) -> host, port. */
static void split_listener(const char *v, char *host, size_t cap, int32_t *port)
{
	const char *hp = v + strlen("PLAINTEXT://"), *colon = strrchr(hp, ':');
	snprintf(host, cap, "%.*s", (int)(colon - hp), hp);
	*port = (int32_t)strtol(colon + 1, NULL, 10);
}

/* The group coordinator keys (docs/groups.md "Configuration"). */
static int fill_group(const hw_props *p, hwd_config *c)
{
	hwd_group_config *g = &c->group;
	return hwd_cfg_i32(p, "group.initial.rebalance.delay.ms", &g->initial_rebalance_delay_ms) ||
			       hwd_cfg_i32(p, "group.min.session.timeout.ms", &g->min_session_timeout_ms) ||
			       hwd_cfg_i32(p, "group.max.session.timeout.ms", &g->max_session_timeout_ms) ||
			       hwd_cfg_i32(p, "group.max.size", &g->max_size) ||
			       hwd_cfg_i32(p, "offset.metadata.max.bytes", &g->offset_metadata_max_bytes) ||
			       hwd_cfg_i64(p, "offsets.retention.minutes", &g->offsets_retention_minutes) ||
			       hwd_cfg_i32(p, "offsets.commit.timeout.ms", &g->offsets_commit_timeout_ms)
		       ? -1
		       : 0;
}

/* The broker configs DescribeConfigs reports (docs/kafka.md "Semantics"):
 * every key of the schema with a Kafka name, its value, and whether it was
 * set. hiwater's own keys (and the route families) are left out. */
static void fill_described(const hw_props *p, hwd_config *c)
{
	size_t ndefs;
	const hw_prop_def *defs = hwd_config_schema(&ndefs);
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

/* The Kafka listener keys (docs/kafka.md "Configuration"), the groups',
 * and what DescribeConfigs answers. */
int hwd_config_fill_kafka(const hw_props *p, hwd_config *c)
{
	hwd_kafka_config *k = &c->kafka;
	int32_t rf;
	if (hwd_cfg_str(p, "listeners", k->listeners, sizeof(k->listeners)) ||
	    hwd_cfg_str(p, "advertised.listeners", k->advertised, sizeof(k->advertised)) ||
	    hwd_cfg_bool(p, "auto.create.topics.enable", &k->auto_create_topics) ||
	    hwd_cfg_i64(p, "socket.request.max.bytes", &k->socket_request_max_bytes) ||
	    hwd_cfg_i64(p, "max.connections", &k->max_connections) ||
	    hwd_cfg_i32(p, "offsets.topic.num.partitions", &k->offsets_topic_num_partitions) ||
	    hwd_cfg_i32(p, "offsets.topic.replication.factor", &rf) ||
	    hwd_cfg_i32(p, "num.partitions", &k->num_partitions) ||
	    hwd_cfg_i32(p, "default.replication.factor", &k->default_replication_factor) || fill_group(p, c))
		return -1;
	char selector[sizeof(HW_RM_RACK_AWARE_SELECTOR_CLASS)];
	if (hwd_cfg_str(p, "broker.rack", c->rm.rack, sizeof(c->rm.rack)) ||
	    hwd_cfg_str(p, "replica.selector.class", selector, sizeof(selector)))
		return -1;
	/* racks (docs/racks.md); the schema admits only these two selectors */
	c->rm.replica_selector = selector[0] ? HW_RM_SELECTOR_RACK_AWARE : HW_RM_SELECTOR_LEADER;
	k->offsets_topic_replication_factor = (int16_t)rf; /* <= 7 (schema) */
	fill_described(p, c);
	if (!k->listeners[0])
		return 0;
	split_listener(k->listeners, k->listen_host, sizeof(k->listen_host), &k->listen_port);
	char host[64];
	int32_t port = k->listen_port;
	snprintf(host, sizeof(host), "%s", k->listen_host);
	if (k->advertised[0])
		split_listener(k->advertised, host, sizeof(host), &port);
	if (!host[0] || !strcmp(host, "0.0.0.0"))
		snprintf(host, sizeof(host), "127.0.0.1");
	snprintf(k->adv_hostport, sizeof(k->adv_hostport), "%s:%d", host, port);
	return 0;
}
