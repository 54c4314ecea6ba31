/* hw_ctrl.c — the controller: names, config, AlterPartition, timers, life
 * cycle, reads. The design note is in hw_ctrl.h; brokers (registration,
 * heartbeats, fencing) are in hw_ctrl_broker.c, partition changes in
 * hw_ctrl_part.c. */
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

/* ---------------------------------------------------------------- names */

static const char *const broker_state_names[] = {
#define N(n) #n,
	HW_CTRL_BROKER_STATES(N)
#undef N
};
static const char *const election_names[] = {
#define N(n) #n,
	HW_CTRL_ELECTIONS(N)
#undef N
};
static const char *const counter_names[] = {
#define N(n) #n,
	HW_CTRL_COUNTERS(N)
#undef N
};

const char *hw_ctrl_broker_state_name(int s)
{
	return s >= 0 && s < HW_CTRL_BROKER_STATE_COUNT ? broker_state_names[s] : "UNKNOWN_STATE";
}

const char *hw_ctrl_election_name(int e)
{
	return e >= 0 && e < HW_CTRL_ELECTION_COUNT ? election_names[e] : "UNKNOWN_ELECTION";
}

const char *hw_ctrl_counter_name(int c)
{
	return c >= 0 && c < HW_CTRL_COUNTER_COUNT ? counter_names[c] : "UNKNOWN_COUNTER";
}

const char *hw_ctrl_lrs_name(int lrs)
{
	switch (lrs) {
	case HW_LRS_RECOVERED: return "RECOVERED";
	case HW_LRS_RECOVERING: return "RECOVERING";
	}
	return "UNKNOWN_LRS";
}

const char *hw_ctrl_record_name(int type)
{
	switch (type) {
#define N(n, id) case (id): return #n;
		HW_CTRL_RECORDS(N)
#undef N
	}
	return "UNKNOWN_RECORD";
}

uint64_t hw_ctrl_counter_get(const hw_ctrl *c, hw_ctrl_counter which)
{
	return (unsigned)which < HW_CTRL_COUNTER_COUNT ? c->counters[which] : 0;
}

/* -------------------------------------------------------------- config */

void hw_ctrl_config_defaults(hw_ctrl_config *c)
{
	memset(c, 0, sizeof(*c));
	c->node_id = 0;
	c->session_timeout_ms = 9000;
	c->heartbeat_interval_ms = 2000;
	c->resync_interval_ms = 10000;
	c->default_min_isr = 1;
	c->default_unclean = 0;
	c->elr_enabled = 1;
	c->default_partitions = 1;
	c->default_rf = 1;
	c->fsync = 1;
	c->metadata_log_path = NULL;
	c->auto_leader_rebalance = 1;
	c->leader_imbalance_check_interval_ms = 300000;
	c->delete_topic_enable = 1;
}

static int64_t now_ns(hw_ctrl *c) { return hw_clock_ns(c->clock); }

static int16_t validate_alter(hw_ctrl *c, const hw_alter_partition_req *r, ctrl_topic **tout)
{
	ctrl_broker *b = ctrl_broker_find(c, r->broker_id);
	if (!b || b->state == HW_CTRL_BROKER_UNREGISTERED || b->epoch != r->broker_epoch)
		return HW_ERR_STALE_BROKER_EPOCH;
	ctrl_topic *t = ctrl_topic_by_id(c, r->tp.topic_id);
	if (!t || r->tp.partition >= (uint32_t)t->info.partitions)
		return HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
	*tout = t;
	const ctrl_part *p = &t->parts[r->tp.partition];
	if (r->leader_epoch > p->leader_epoch || r->partition_epoch > p->partition_epoch)
		return HW_ERR_NOT_CONTROLLER;
	if (r->leader_epoch < p->leader_epoch)
		return HW_ERR_FENCED_LEADER_EPOCH;
	if (r->broker_id != p->leader)
		return HW_ERR_INVALID_REQUEST;
	if (r->partition_epoch < p->partition_epoch)
		return HW_ERR_INVALID_UPDATE_VERSION;
	const hw_idset *isr = &r->new_isr;
	if (isr->n == 0 || isr->n > HW_MAX_RF || !hw_idset_has(isr, p->leader))
		return HW_ERR_INVALID_REQUEST;
	for (int i = 0; i < isr->n; i++) {
		if (!hw_idset_has(&p->replicas, isr->id[i]))
			return HW_ERR_INVALID_REQUEST;
		for (int j = 0; j < i; j++)
			if (isr->id[j] == isr->id[i])
				return HW_ERR_INVALID_REQUEST;
	}
	if (r->leader_recovery_state > HW_LRS_RECOVERING ||
	    (r->leader_recovery_state == HW_LRS_RECOVERING && p->lrs == HW_LRS_RECOVERED) ||
	    (r->leader_recovery_state == HW_LRS_RECOVERING && isr->n > 1))
		return HW_ERR_INVALID_REQUEST;
	for (int i = 0; i < isr->n; i++) {
		ctrl_broker *m = ctrl_broker_find(c, isr->id[i]);
		int64_t e = r->new_isr_broker_epochs[i];
		if (!m || !ctrl_replica_acceptable(c, m->id, *tout, r->tp.partition) || (e != -1 && e != m->epoch))
			return HW_ERR_INELIGIBLE_REPLICA;
	}
	return HW_ERR_NONE;
}

static int on_alter_partition(hw_ctrl *c, const hw_msg *m)
{
	const hw_alter_partition_req *r = &m->u.alter;
	ctrl_topic *t = NULL;
	hw_msg out = { .type = HW_MSG_ALTER_PARTITION_RESP, .src = c->cfg.node_id, .dst = m->src,
		       .correlation_id = m->correlation_id };
	hw_alter_partition_resp *resp = &out.u.alter_resp;
	resp->tp = r->tp;
	resp->leader_id = HW_NO_NODE;
	resp->leader_epoch = HW_NO_EPOCH;
	resp->partition_epoch = HW_NO_EPOCH;
	resp->controller_epoch = c->cfg.controller_epoch;
	int16_t err = validate_alter(c, r, &t);
	if (err == HW_ERR_NONE) {
		ctrl_part *p = &t->parts[r->tp.partition];
		ctrl_change ch;
		ctrl_change_init(&ch, p, "AlterPartition");
		ch.target_isr = r->new_isr;
		ch.set_lrs = 1;
		ch.lrs = r->leader_recovery_state;
		int rc = ctrl_part_apply(c, t, r->tp.partition, &ch, NULL);
		if (rc < 0)
			return rc; /* no answer: the leader retries */
		c->counters[HW_CTRL_C_ALTER_PARTITION_ACCEPTED]++;
	} else {
		char s[48];
		HW_LOG(INFO, "ctrl", "AlterPartition from broker %d for %u-%u (isr %s, leader epoch %d, "
		       "partition epoch %d) rejected: %s", r->broker_id, r->tp.topic_id, r->tp.partition,
		       hw_ctrl_idset_str(&r->new_isr, s, sizeof(s)), r->leader_epoch, r->partition_epoch,
		       hw_err_name(err));
		c->counters[HW_CTRL_C_ALTER_PARTITION_REJECTED]++;
	}
	resp->error = err;
	if (t && err != HW_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
		const ctrl_part *p = &t->parts[r->tp.partition];
		resp->leader_id = p->leader;
		resp->leader_epoch = p->leader_epoch;
		resp->partition_epoch = p->partition_epoch;
		resp->isr = p->isr;
		resp->leader_recovery_state = p->lrs;
	}
	if (c->net && hw_net_send(c->net, &out) < 0)
		c->counters[HW_CTRL_C_PUSH_SEND_FAILED]++;
	return 0;
}

int hw_ctrl_on_msg(hw_ctrl *c, const hw_msg *m)
{
	switch (m->type) {
	case HW_MSG_ALTER_PARTITION:
		return on_alter_partition(c, m);
	case HW_MSG_BROKER_REGISTER:
	case HW_MSG_BROKER_HEARTBEAT:
	case HW_MSG_CREATE_TOPIC:
	case HW_MSG_ALTER_CONFIG:
	case HW_MSG_METADATA:
	case HW_MSG_DESCRIBE_TOPIC:
		if (!m->u.other) {
			c->counters[HW_CTRL_C_MESSAGES_IGNORED]++;
			return 0;
		}
		return ctrl_on_admin_msg(c, m);
	case HW_MSG_DELETE_TOPIC:
	case HW_MSG_ALLOCATE_PRODUCER_IDS:
		if (!m->u.other) {
			c->counters[HW_CTRL_C_MESSAGES_IGNORED]++;
			return 0;
		}
		return ctrl_on_ids_msg(c, m);
	case HW_MSG_PARTITION_STATE_ACK:
		return 0;
	default:
		c->counters[HW_CTRL_C_MESSAGES_IGNORED]++;
		return 0;
	}
}

/* --------------------------------------------------------------- timers */

/* KRaft's maybeBalancePartitionLeaders: preferred replicas lead again. */
static int rebalance_leaders(hw_ctrl *c)
{
	for (int ti = 0; ti < c->n_topics; ti++) {
		ctrl_topic *t = &c->topics[ti];
		for (int pi = 0; pi < t->info.partitions; pi++) {
			ctrl_part *p = &t->parts[pi];
			if (!p->replicas.n || p->leader == p->replicas.id[0] ||
			    !hw_idset_has(&p->isr, p->replicas.id[0]) ||
			    !ctrl_replica_acceptable(c, p->replicas.id[0], t, (uint32_t)pi))
				continue;
			ctrl_change ch;
			ctrl_change_init(&ch, p, "auto leader rebalance");
			ch.preferred = 1;
			int rc = ctrl_part_apply(c, t, (uint32_t)pi, &ch, NULL);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int hw_ctrl_poll(hw_ctrl *c)
{
	int64_t now = now_ns(c);
	int64_t timeout = (int64_t)c->cfg.session_timeout_ms * 1000000;
	int64_t resync = (int64_t)c->cfg.resync_interval_ms * 1000000;
	/* after a failed metadata append nothing that needs one is tried
	 * before the backoff ends (write_record would refuse it anyway) */
	if (c->mlog_retry_ns && now < c->mlog_retry_ns)
		return 0;
	for (int i = 0; i < c->n_brokers; i++) {
		ctrl_broker *b = &c->brokers[i];
		if (b->removal_pending) {
			int rc = remove_or_defer(c, b, b->removal_unclean, b->removal_why);
			if (rc < 0)
				return rc;
		}
		int live = b->state == HW_CTRL_BROKER_ACTIVE || b->state == HW_CTRL_BROKER_CONTROLLED_SHUTDOWN;
		/* Kafka: the session is valid while lastContact + timeout >= now. */
		if (live && now > b->last_contact_ns + timeout) {
			HW_LOG(WARN, "ctrl", "broker %d: no heartbeat for %lld ms (session timeout %d ms): fencing",
			       b->id, (long long)((now - b->last_contact_ns) / 1000000), c->cfg.session_timeout_ms);
			int rc = broker_fence(c, b, "session timeout");
			if (rc < 0)
				return rc;
			continue;
		}
		if (b->state != HW_CTRL_BROKER_UNREGISTERED && now - b->last_contact_ns <= timeout &&
		    now >= b->last_resync_ns + resync)
			broker_resync(c, b);
	}
	if (c->cfg.auto_leader_rebalance && now >= c->next_rebalance_ns) {
		c->next_rebalance_ns = now + (int64_t)c->cfg.leader_imbalance_check_interval_ms * 1000000;
		int rc = rebalance_leaders(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int64_t hw_ctrl_next_deadline_ns(hw_ctrl *c)
{
	int64_t timeout = (int64_t)c->cfg.session_timeout_ms * 1000000;
	int64_t resync = (int64_t)c->cfg.resync_interval_ms * 1000000;
	int64_t now = now_ns(c);
	int64_t d = c->cfg.auto_leader_rebalance ? c->next_rebalance_ns : INT64_MAX;
	for (int i = 0; i < c->n_brokers; i++) {
		ctrl_broker *b = &c->brokers[i];
		if (b->state == HW_CTRL_BROKER_ACTIVE || b->state == HW_CTRL_BROKER_CONTROLLED_SHUTDOWN)
			if (b->last_contact_ns + timeout + 1 < d)
				d = b->last_contact_ns + timeout + 1;
		/* as hw_ctrl_poll: no re-push to a broker out of contact (its
		 * past resync time would wake the reactor on every pass) */
		if (b->state != HW_CTRL_BROKER_UNREGISTERED && now - b->last_contact_ns <= timeout &&
		    b->last_resync_ns + resync < d)
			d = b->last_resync_ns + resync;
		if (b->removal_pending)
			d = 0;                          /* retry the ISR removal */
	}
	/* backing off after a failed metadata append: not before the retry
	 * time (an expired session's deadline is in the past: no spinning) */
	if (c->mlog_retry_ns && d < c->mlog_retry_ns)
		d = c->mlog_retry_ns;
	return d;
}

/* ------------------------------------------------------------ lifecycle */

int hw_ctrl_create(const hw_ctrl_config *cfg, hw_clock *clock, hw_net *net, hw_ctrl **out)
{
	*out = NULL;
	if (!cfg || !clock || cfg->session_timeout_ms <= 0 || cfg->heartbeat_interval_ms <= 0 ||
	    cfg->resync_interval_ms <= 0 || cfg->leader_imbalance_check_interval_ms <= 0 ||
	    cfg->default_min_isr < 1 || cfg->default_partitions < 1 ||
	    cfg->default_rf < 1)
		return -EINVAL;
	hw_ctrl *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->clock = clock;
	c->net = net;
	c->next_topic_id = 1;
	if (cfg->store) {
		uint64_t recs = 0;
		c->replaying = 1;
		int rc = cfg->store->ops->load(cfg->store->ctx, ctrl_replay, c, &recs);
		c->replaying = 0;
		if (rc) {
			HW_LOG(ERROR, "ctrl", "metadata store load failed: %s", strerror(rc < 0 ? -rc : EBADMSG));
			hw_ctrl_destroy(c);
			return rc < 0 ? rc : -EBADMSG;
		}
		if (recs > c->records)
			c->records = recs; /* broker epochs keep growing across controllers */
		HW_LOG(INFO, "ctrl", "controller epoch %d: loaded %d brokers, %d topics from the metadata store "
		       "(record %llu)", cfg->controller_epoch, c->n_brokers, c->n_topics,
		       (unsigned long long)c->records);
	} else if (cfg->metadata_log_path) {
		c->path = strdup(cfg->metadata_log_path);
		if (!c->path) {
			free(c);
			return -ENOMEM;
		}
		c->cfg.metadata_log_path = c->path;
		uint64_t recs = 0, torn = 0;
		c->replaying = 1;
		int rc = hw_mlog_open(c->path, cfg->fsync, ctrl_replay, c, &c->mlog, &recs, &torn);
		c->replaying = 0;
		if (rc) {
			HW_LOG(ERROR, "ctrl", "metadata log %s: %s", c->path, strerror(rc < 0 ? -rc : EIO));
			hw_ctrl_destroy(c);
			return rc < 0 ? rc : -EIO;
		}
		c->counters[HW_CTRL_C_MLOG_TORN_BYTES_TRUNCATED] = torn;
		c->counters[HW_CTRL_C_MLOG_RECORDS_WRITTEN] = 0;
		HW_LOG(INFO, "ctrl", "metadata log %s: replayed %llu records (%d brokers, %d topics), "
		       "truncated %llu torn bytes", c->path, (unsigned long long)recs, c->n_brokers,
		       c->n_topics, (unsigned long long)torn);
		uint64_t entities = (uint64_t)c->n_brokers + 1;
		for (int i = 0; i < c->n_topics; i++)
			entities += 1 + (uint64_t)c->topics[i].info.partitions;
		if (recs >= HW_CTRL_COMPACT_MIN_RECORDS && recs > 4 * entities)
			(void)ctrl_compact(c); /* failure keeps the old log: logged */
	}
	int64_t now = hw_clock_ns(clock);
	c->next_rebalance_ns = now + (int64_t)cfg->leader_imbalance_check_interval_ms * 1000000;
	for (int i = 0; i < c->n_brokers; i++) {
		c->brokers[i].last_contact_ns = now; /* a fresh session for everyone */
		c->brokers[i].last_resync_ns = now;
	}
	*out = c;
	return 0;
}

int32_t hw_ctrl_epoch(const hw_ctrl *c) { return c->cfg.controller_epoch; }

void hw_ctrl_push_all(hw_ctrl *c)
{
	for (int i = 0; i < c->n_topics; i++)
		for (int32_t p = 0; p < c->topics[i].info.partitions; p++)
			ctrl_part_push(c, &c->topics[i], (uint32_t)p, -1);
}

void hw_ctrl_destroy(hw_ctrl *c)
{
	if (!c)
		return;
	hw_mlog_close(c->mlog);
	for (int i = 0; i < c->n_topics; i++)
		free(c->topics[i].parts);
	ctrl_deleted_free(c);
	free(c->topics);
	free(c->path);
	free(c);
}

/* ----------------------------------------------------------------- read */

static void broker_info(const ctrl_broker *b, hw_ctrl_broker_info *out)
{
	out->id = b->id;
	out->epoch = b->epoch;
	out->incarnation_id = b->incarnation;
	out->state = b->state;
	memcpy(out->control_ep, b->control_ep, sizeof(out->control_ep));
	memcpy(out->data_ep, b->data_ep, sizeof(out->data_ep));
}

int hw_ctrl_broker_count(const hw_ctrl *c) { return c->n_brokers; }

int hw_ctrl_broker_at(const hw_ctrl *c, int i, hw_ctrl_broker_info *out)
{
	if (i < 0 || i >= c->n_brokers)
		return -ENOENT;
	broker_info(&c->brokers[i], out);
	return 0;
}

int hw_ctrl_broker_get(const hw_ctrl *c, int32_t id, hw_ctrl_broker_info *out)
{
	for (int i = 0; i < c->n_brokers; i++)
		if (c->brokers[i].id == id) {
			broker_info(&c->brokers[i], out);
			return 0;
		}
	return -ENOENT;
}

int hw_ctrl_topic_count(const hw_ctrl *c) { return c->n_topics; }

int hw_ctrl_topic_at(const hw_ctrl *c, int i, hw_ctrl_topic_info *out)
{
	if (i < 0 || i >= c->n_topics)
		return -ENOENT;
	*out = c->topics[i].info;
	return 0;
}

int hw_ctrl_topic_find(const hw_ctrl *c, const char *name, hw_ctrl_topic_info *out)
{
	const ctrl_topic *t = ctrl_topic_by_name(c, name);
	if (!t)
		return -ENOENT;
	*out = t->info;
	return 0;
}

int hw_ctrl_partition(const hw_ctrl *c, hw_tp tp, hw_partition_state *out)
{
	for (int i = 0; i < c->n_topics; i++) {
		const ctrl_topic *t = &c->topics[i];
		if (t->info.id == tp.topic_id && tp.partition < (uint32_t)t->info.partitions) {
			ctrl_part_to_state(t, tp.partition, out);
			return 0;
		}
	}
	return -ENOENT;
}
