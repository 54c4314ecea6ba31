/* hw_ctrl_broker.c — the controller's brokers: lookup, state changes,
 * fencing, registration and heartbeats (Kafka's ClusterControlManager and
 * the broker side of ReplicationControlManager). The design note is in
 * hw_ctrl.h; topics, partitions and timers are in hw_ctrl.c,
 * hw_ctrl_topic.c and hw_ctrl_part.c. */
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

static int64_t now_ns(hw_ctrl *c) { return hw_clock_ns(c->clock); }

/* ------------------------------------------------------------- brokers */

ctrl_broker *ctrl_broker_find(hw_ctrl *c, int32_t id)
{
	for (int i = 0; i < c->n_brokers; i++)
		if (c->brokers[i].id == id)
			return &c->brokers[i];
	return NULL;
}

int ctrl_broker_acceptable(hw_ctrl *c, int32_t id)
{
	ctrl_broker *b = ctrl_broker_find(c, id);
	return b && b->state == HW_CTRL_BROKER_ACTIVE;
}

static int replica_offline(const ctrl_broker *b, uint32_t topic_id, uint32_t partition)
{
	for (int i = 0; i < b->n_offline; i++)
		if (b->offline[i].topic_id == topic_id && b->offline[i].partition == partition)
			return 1;
	return 0;
}

int ctrl_replica_acceptable(hw_ctrl *c, int32_t id, const ctrl_topic *t, uint32_t pi)
{
	ctrl_broker *b = ctrl_broker_find(c, id);
	return b && b->state == HW_CTRL_BROKER_ACTIVE && !replica_offline(b, t->info.id, pi);
}

ctrl_topic *ctrl_topic_by_id(hw_ctrl *c, uint32_t id)
{
	for (int i = 0; i < c->n_topics; i++)
		if (c->topics[i].info.id == id)
			return &c->topics[i];
	return NULL;
}

ctrl_topic *ctrl_topic_by_name(const hw_ctrl *c, const char *name)
{
	for (int i = 0; i < c->n_topics; i++)
		if (strcmp(c->topics[i].info.name, name) == 0)
			return &c->topics[i];
	return NULL;
}

int ctrl_topic_add(hw_ctrl *c, const ctrl_topic *t)
{
	if (c->n_topics == c->cap_topics) {
		int cap = c->cap_topics ? c->cap_topics * 2 : 8;
		ctrl_topic *nt = realloc(c->topics, (size_t)cap * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		c->topics = nt;
		c->cap_topics = cap;
	}
	c->topics[c->n_topics++] = *t;
	if (t->info.id >= c->next_topic_id)
		c->next_topic_id = t->info.id + 1;
	return 0;
}

/* Persist and apply a broker state change, logging the transition. */
static int broker_set_state(hw_ctrl *c, ctrl_broker *b, uint8_t state, const char *why)
{
	if (b->state == state)
		return 0;
	ctrl_broker nb = *b;
	nb.state = state;
	int rc = ctrl_persist_broker(c, &nb);
	if (rc < 0)
		return rc;
	HW_LOG(INFO, "ctrl", "broker %d (epoch %lld): %s -> %s (%s)", b->id, (long long)b->epoch,
	       hw_ctrl_broker_state_name(b->state), hw_ctrl_broker_state_name(state), why);
	b->state = state;
	return 0;
}

/* A broker registered with a new epoch: the leaders of the partitions it
 * replicates learn it (PARTITION_STATE's replica epochs), so they refuse
 * fetches from its older incarnation at once. */
static void broker_epoch_push(hw_ctrl *c, const ctrl_broker *b)
{
	for (int ti = 0; ti < c->n_topics; ti++) {
		ctrl_topic *t = &c->topics[ti];
		for (int pi = 0; pi < t->info.partitions; pi++) {
			const ctrl_part *p = &t->parts[pi];
			if (hw_idset_has(&p->replicas, b->id) && p->leader >= 0 && p->leader != b->id)
				ctrl_part_push(c, t, (uint32_t)pi, p->leader);
		}
	}
}

/* Push every partition the broker replicates to it. */
void broker_resync(hw_ctrl *c, ctrl_broker *b)
{
	b->last_resync_ns = now_ns(c);
	for (int ti = 0; ti < c->n_topics; ti++) {
		ctrl_topic *t = &c->topics[ti];
		for (int pi = 0; pi < t->info.partitions; pi++)
			if (hw_idset_has(&t->parts[pi].replicas, b->id))
				ctrl_part_push(c, t, (uint32_t)pi, b->id);
	}
	ctrl_deleted_resync(c, b->id);
}

/* Remove `id` from the ISR (and, for an unclean shutdown, the ELR) of every
 * partition, electing new leaders where needed. */
static int remove_everywhere(hw_ctrl *c, int32_t id, int unclean_shutdown, const char *why)
{
	for (int ti = 0; ti < c->n_topics; ti++) {
		ctrl_topic *t = &c->topics[ti];
		for (int pi = 0; pi < t->info.partitions; pi++) {
			ctrl_part *p = &t->parts[pi];
			int in_isr = hw_idset_has(&p->isr, id);
			int in_elr = hw_idset_has(&p->elr, id);
			if (!in_isr && !(unclean_shutdown && in_elr))
				continue;
			ctrl_change ch;
			ctrl_change_init(&ch, p, why);
			ctrl_set_remove(&ch.target_isr, id);
			if (unclean_shutdown) {
				ctrl_set_remove(&ch.target_elr, id);
				ch.unclean_shutdown = (hw_idset){ .n = 1, .id = { id } };
			}
			int rc = ctrl_part_apply(c, t, (uint32_t)pi, &ch, NULL);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* Try to elect a leader for every leaderless partition (a broker became
 * acceptable, or unclean election got enabled). */
int ctrl_elect_leaderless(hw_ctrl *c, ctrl_topic *only, const char *why)
{
	for (int ti = 0; ti < c->n_topics; ti++) {
		ctrl_topic *t = &c->topics[ti];
		if (only && t != only)
			continue;
		for (int pi = 0; pi < t->info.partitions; pi++) {
			ctrl_part *p = &t->parts[pi];
			if (p->leader != HW_NO_NODE)
				continue;
			ctrl_change ch;
			ctrl_change_init(&ch, p, why);
			int rc = ctrl_part_apply(c, t, (uint32_t)pi, &ch, NULL);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* remove_everywhere, remembered for a retry when a metadata append fails
 * (the broker's state already moved on, so nothing else would redo it). */
int remove_or_defer(hw_ctrl *c, ctrl_broker *b, int unclean, const char *why)
{
	int rc = remove_everywhere(c, b->id, unclean, why);
	b->removal_pending = rc < 0;
	b->removal_unclean = (uint8_t)unclean;
	b->removal_why = why;
	return rc;
}

int broker_fence(hw_ctrl *c, ctrl_broker *b, const char *why)
{
	int rc = broker_set_state(c, b, HW_CTRL_BROKER_FENCED, why);
	if (rc < 0)
		return rc;
	c->counters[HW_CTRL_C_BROKERS_FENCED]++;
	return remove_or_defer(c, b, 0, why);
}

static int leads_anything(const hw_ctrl *c, int32_t id)
{
	for (int ti = 0; ti < c->n_topics; ti++)
		for (int pi = 0; pi < c->topics[ti].info.partitions; pi++)
			if (c->topics[ti].parts[pi].leader == id)
				return 1;
	return 0;
}

int hw_ctrl_register(hw_ctrl *c, const hw_broker_register_req *req, hw_broker_heartbeat_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->broker_epoch = -1;
	resp->is_fenced = 1;
	if (req->broker_id < 0 || req->broker_id >= HW_CLIENT_NODE_BASE ||
	    memchr(req->control_ep, 0, sizeof(req->control_ep)) == NULL ||
	    memchr(req->data_ep, 0, sizeof(req->data_ep)) == NULL) {
		resp->error = HW_ERR_INVALID_REQUEST;
		return 0;
	}
	ctrl_broker *b = ctrl_broker_find(c, req->broker_id);
	if (b && b->state != HW_CTRL_BROKER_UNREGISTERED && b->incarnation == req->incarnation_id) {
		/* A retried registration of the same process: same epoch. */
		b->last_contact_ns = now_ns(c);
		resp->broker_epoch = b->epoch;
		resp->is_fenced = b->state == HW_CTRL_BROKER_FENCED;
		resp->is_caught_up = 1;
		broker_resync(c, b);
		return 0;
	}
	if (!b && c->n_brokers == HW_CTRL_MAX_BROKERS) {
		resp->error = HW_ERR_BROKER_NOT_AVAILABLE;
		return 0;
	}
	int rc;
	int unclean = 0;
	if (b) {
		/* A new incarnation: the old process is gone. Fence its session
		 * first if it still had one (KAFKA-18106). */
		if (b->state == HW_CTRL_BROKER_ACTIVE || b->state == HW_CTRL_BROKER_CONTROLLED_SHUTDOWN) {
			rc = broker_fence(c, b, "re-registered with a new incarnation");
			if (rc < 0)
				return rc;
		}
		unclean = req->previous_broker_epoch != b->epoch;
	}
	ctrl_broker nb = { 0 };
	nb.id = req->broker_id;
	nb.epoch = (int64_t)c->records + 1; /* this record's number */
	nb.incarnation = req->incarnation_id;
	nb.state = HW_CTRL_BROKER_FENCED;
	snprintf(nb.control_ep, sizeof(nb.control_ep), "%s", req->control_ep);
	snprintf(nb.data_ep, sizeof(nb.data_ep), "%s", req->data_ep);
	nb.n_listeners = req->n_listeners <= HW_MAX_LISTENERS ? req->n_listeners : 0;
	memcpy(nb.listeners, req->listeners, sizeof(nb.listeners));
	snprintf(nb.rack, sizeof(nb.rack), "%s", req->rack);
	rc = ctrl_persist_broker(c, &nb);
	if (rc < 0)
		return rc;
	HW_LOG(INFO, "ctrl", "broker %d: %s -> FENCED (registered, epoch %lld, previous epoch %lld: %s shutdown)",
	       nb.id, hw_ctrl_broker_state_name(b ? b->state : HW_CTRL_BROKER_UNREGISTERED),
	       (long long)nb.epoch, (long long)req->previous_broker_epoch,
	       !b ? "first" : unclean ? "UNCLEAN" : "clean");
	if (!b)
		b = &c->brokers[c->n_brokers++];
	*b = nb;
	b->last_contact_ns = now_ns(c);
	c->counters[HW_CTRL_C_BROKERS_REGISTERED]++;
	if (unclean) {
		c->counters[HW_CTRL_C_UNCLEAN_SHUTDOWNS]++;
		rc = remove_everywhere(c, b->id, 1, "unclean shutdown detected at registration");
		if (rc < 0)
			return rc;
	}
	resp->broker_epoch = b->epoch;
	resp->is_caught_up = 1;
	broker_resync(c, b);
	broker_epoch_push(c, b);
	return 0;
}

/* The replicas on the broker's offline log dirs (docs/logdirs.md; Kafka's
 * ReplicationControlManager.handleDirectoriesOffline): the list replaces
 * the last one (every heartbeat carries all of it), and each listed replica
 * still in its partition's ISR leaves it — leadership moves to another ISR
 * member. The broker stays ACTIVE for its other partitions. Done on every
 * heartbeat, so a change a failed metadata append refused is retried.
 * 0 or the metadata append's -errno. */
static int broker_offline_replicas(hw_ctrl *c, ctrl_broker *b, const hw_broker_heartbeat_req *req)
{
	int n = req->offline_dirs && req->offline ? req->n_offline : 0;
	if (n > HW_MAX_OFFLINE_REPLICAS)
		n = HW_MAX_OFFLINE_REPLICAS; /* the decoder refuses more */
	int fresh = 0;
	for (int i = 0; i < n; i++)
		fresh += !replica_offline(b, req->offline[i].topic_id, req->offline[i].partition);
	if (n)
		memcpy(b->offline, req->offline, (size_t)n * sizeof b->offline[0]);
	b->n_offline = (uint16_t)n;
	if (fresh) {
		c->counters[HW_CTRL_C_OFFLINE_REPLICAS_REPORTED] += (uint64_t)fresh;
		HW_LOG(WARN, "ctrl", "broker %d: %u log director%s offline holding %d replica%s (%d new): "
		       "moving them out of their ISRs", b->id, req->offline_dirs, req->offline_dirs == 1 ? "y" : "ies",
		       n, n == 1 ? "" : "s", fresh);
	}
	for (int i = 0; i < n; i++) {
		ctrl_topic *t = ctrl_topic_by_id(c, b->offline[i].topic_id);
		uint32_t pi = b->offline[i].partition;
		if (!t || pi >= (uint32_t)t->info.partitions)
			continue;
		ctrl_part *p = &t->parts[pi];
		if (!hw_idset_has(&p->isr, b->id) && p->leader != b->id)
			continue;
		ctrl_change ch;
		ctrl_change_init(&ch, p, "replica on an offline log directory");
		ctrl_set_remove(&ch.target_isr, b->id);
		int rc = ctrl_part_apply(c, t, pi, &ch, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int hw_ctrl_heartbeat(hw_ctrl *c, const hw_broker_heartbeat_req *req, hw_broker_heartbeat_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->broker_epoch = req->broker_epoch;
	ctrl_broker *b = ctrl_broker_find(c, req->broker_id);
	if (!b || b->state == HW_CTRL_BROKER_UNREGISTERED || b->epoch != req->broker_epoch) {
		resp->error = HW_ERR_STALE_BROKER_EPOCH;
		resp->is_fenced = 1;
		return 0;
	}
	b->last_contact_ns = now_ns(c);
	int rc = broker_offline_replicas(c, b, req);
	if (rc < 0)
		return rc;
	if (req->want_shutdown) {
		if (b->state == HW_CTRL_BROKER_ACTIVE) {
			rc = broker_set_state(c, b, HW_CTRL_BROKER_CONTROLLED_SHUTDOWN, "heartbeat want_shutdown");
			if (rc < 0)
				return rc;
			c->counters[HW_CTRL_C_CONTROLLED_SHUTDOWNS]++;
			rc = remove_or_defer(c, b, 0, "controlled shutdown");
			if (rc < 0)
				return rc;
		}
		if (b->state == HW_CTRL_BROKER_CONTROLLED_SHUTDOWN && !leads_anything(c, b->id)) {
			rc = broker_set_state(c, b, HW_CTRL_BROKER_FENCED, "controlled shutdown complete");
			if (rc < 0)
				return rc;
		}
		resp->should_shut_down = b->state == HW_CTRL_BROKER_FENCED;
	} else if (req->want_fence && b->state == HW_CTRL_BROKER_ACTIVE) {
		/* the broker's log directories are offline (docs/security.md
		 * "Faults", Kafka's offline-log-dir handling): fence it now, which
		 * moves its leaderships away and takes it out of every ISR */
		HW_LOG(WARN, "ctrl", "broker %d reports offline log directories: fencing", b->id);
		rc = broker_fence(c, b, "offline log directories");
		if (rc < 0)
			return rc;
	} else if (b->state == HW_CTRL_BROKER_FENCED && !req->want_fence) {
		rc = broker_set_state(c, b, HW_CTRL_BROKER_ACTIVE, "heartbeat");
		if (rc < 0)
			return rc;
		c->counters[HW_CTRL_C_BROKERS_UNFENCED]++;
		rc = ctrl_elect_leaderless(c, NULL, "broker unfenced");
		if (rc < 0)
			return rc;
		broker_resync(c, b);
	}
	resp->is_fenced = b->state == HW_CTRL_BROKER_FENCED;
	resp->is_caught_up = 1;
	return 0;
}


/* Kafka ReplicationControlManager.validateAlterPartitionData, in its order. */
