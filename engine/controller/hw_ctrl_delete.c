/* hw_ctrl_delete.c — the controller's topic deletion (Kafka's
 * ReplicationControlManager.deleteTopics / RemoveTopicRecord) and its
 * producer id blocks (Kafka's ProducerIdControlManager, KIP-730);
 * docs/kafka.md "DeleteTopics", "InitProducerId".
 *
 * Deletion: one TOPIC_DELETE record (u32 id, u32 partitions, str name) is
 * made durable, then the topic leaves the controller's tables and every
 * replica gets a PARTITION_STATE with `deleted` set for each partition (it
 * stops the partition and deletes its log). The answer goes out once the
 * record is durable (KRaft's behaviour: it does not wait for the brokers).
 * Topic ids are never reused: next_topic_id stays above every id ever
 * created, which a TOPIC_DELETE record also carries across a compaction
 * (a "floor" record: partitions 0, name "", no such topic). A recreated
 * topic with the same name gets a new id, so no push for the old one can
 * touch it.
 *
 * Producer ids: blocks of HW_PRODUCER_ID_BLOCK ids; each allocation writes
 * a PRODUCER_IDS record (i32 broker id, i64 broker epoch, i64 the next
 * block's first id) before it answers, so no id is handed out twice across
 * controller restarts and failovers (ZooKeeper mode: the record is the
 * znode /hiwater/latest_producer_id_block, Kafka's /latest_producer_id_block).
 * The first block starts above every id the previous scheme (broker epoch
 * << 20 + a counter, computed in the broker) could have handed out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_bytes.h"
#include "hw_ctrl_int.h"
#include "hw_err.h"
#include "hw_logging.h"

static void w_str(hw_bytes_wr *w, const char *s)
{
	size_t len = strlen(s);
	hw_bytes_put_le(w, len, 2);
	hw_bytes_put(w, s, len);
}

/* ---- remembered deletions (re-pushed at a broker's resync) */

static void push_deleted(hw_ctrl *c, const ctrl_topic *t, int32_t only)
{
	if (c->replaying || !c->net)
		return;
	for (int32_t pi = 0; pi < t->info.partitions; pi++) {
		hw_msg m = { .type = HW_MSG_PARTITION_STATE, .src = c->cfg.node_id };
		ctrl_part_to_state(t, (uint32_t)pi, &m.u.pstate);
		hw_partition_state *ps = &m.u.pstate;
		ps->controller_epoch = c->cfg.controller_epoch;
		ps->deleted = 1;
		ps->leader = HW_NO_NODE;
		/* the trailer needs the replica epochs: -1 (no longer checked) */
		ps->n_replica_epochs = (uint8_t)ps->replicas.n;
		for (int i = 0; i < ps->replicas.n; i++)
			ps->replica_epochs[i] = -1;
		for (int i = 0; i < ps->replicas.n; i++) {
			if (only >= 0 && ps->replicas.id[i] != only)
				continue;
			m.dst = ps->replicas.id[i];
			if (hw_net_send(c->net, &m) < 0)
				c->counters[HW_CTRL_C_PUSH_SEND_FAILED]++;
			else
				c->counters[HW_CTRL_C_PARTITION_STATE_PUSHED]++;
		}
	}
}

void ctrl_deleted_resync(hw_ctrl *c, int32_t broker)
{
	for (int i = 0; i < c->n_deleted; i++) {
		const ctrl_topic *t = &c->deleted[i];
		for (int32_t pi = 0; pi < t->info.partitions; pi++)
			if (hw_idset_has(&t->parts[pi].replicas, broker)) {
				push_deleted(c, t, broker);
				break;
			}
	}
}

void ctrl_deleted_free(hw_ctrl *c)
{
	for (int i = 0; i < c->n_deleted; i++)
		free(c->deleted[i].parts);
	c->n_deleted = 0;
}

/* Take topic index ti out of c->topics into the deleted ring. */
static ctrl_topic *remove_topic(hw_ctrl *c, int ti)
{
	ctrl_topic t = c->topics[ti];
	memmove(&c->topics[ti], &c->topics[ti + 1], (size_t)(c->n_topics - ti - 1) * sizeof(c->topics[0]));
	c->n_topics--;
	int slot;
	if (c->n_deleted < HW_CTRL_DELETED_KEEP) {
		slot = c->n_deleted++;
	} else {
		slot = c->next_deleted;
		c->next_deleted = (c->next_deleted + 1) % HW_CTRL_DELETED_KEEP;
		free(c->deleted[slot].parts);
	}
	c->deleted[slot] = t;
	return &c->deleted[slot];
}

static int topic_index(const hw_ctrl *c, uint32_t id)
{
	for (int i = 0; i < c->n_topics; i++)
		if (c->topics[i].info.id == id)
			return i;
	return -1;
}

static int persist_delete(hw_ctrl *c, uint32_t id, uint32_t partitions, const char *name)
{
	hw_bytes_wr w = hw_bytes_wr_grow();
	hw_bytes_put_le(&w, id, 4);
	hw_bytes_put_le(&w, partitions, 4);
	w_str(&w, name);
	return ctrl_write_record(c, HW_CTRL_REC_TOPIC_DELETE, &w);
}

int ctrl_replay_delete(hw_ctrl *c, const uint8_t *payload, size_t len)
{
	hw_bytes_rd r = hw_bytes_rd_init(payload, len);
	uint32_t id = (uint32_t)hw_bytes_le(&r, 4);
	uint32_t parts = (uint32_t)hw_bytes_le(&r, 4);
	size_t nlen = (size_t)hw_bytes_le(&r, 2);
	const uint8_t *name = r.bad || nlen >= HW_CTRL_TOPIC_NAME ? NULL : hw_bytes_take(&r, nlen);
	if (r.bad || !name || r.pos != r.len || id == 0 || parts > HW_CTRL_MAX_PARTITIONS)
		return -EBADMSG;
	int ti = topic_index(c, id);
	if (ti >= 0) {
		if ((uint32_t)c->topics[ti].info.partitions != parts)
			return -EBADMSG;
		(void)remove_topic(c, ti);
	}
	if (id >= c->next_topic_id)
		c->next_topic_id = id + 1; /* never reuse a deleted topic's id */
	return 0;
}

int hw_ctrl_delete_topic(hw_ctrl *c, const hw_delete_topic_req *req, hw_delete_topic_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	int named = memchr(req->name, 0, sizeof(req->name)) != NULL && req->name[0];
	if (named)
		snprintf(resp->name, sizeof(resp->name), "%s", req->name);
	if (!c->cfg.delete_topic_enable) {
		resp->error = HW_ERR_TOPIC_DELETION_DISABLED;
		snprintf(resp->error_message, sizeof(resp->error_message), "Topic deletion is disabled.");
		return 0;
	}
	int ti = -1;
	if (named) {
		const ctrl_topic *t = ctrl_topic_by_name(c, req->name);
		ti = t ? (int)(t - c->topics) : -1;
	} else if (req->topic_id) {
		ti = topic_index(c, req->topic_id);
	}
	if (ti < 0) {
		resp->error = named || !req->topic_id ? HW_ERR_UNKNOWN_TOPIC_OR_PARTITION : HW_ERR_UNKNOWN_TOPIC_ID;
		snprintf(resp->error_message, sizeof(resp->error_message), "This server does not host this topic%s.",
			 named ? "" : " ID");
		return 0;
	}
	ctrl_topic *t = &c->topics[ti];
	int rc = persist_delete(c, t->info.id, (uint32_t)t->info.partitions, t->info.name);
	if (rc < 0)
		return rc;
	snprintf(resp->name, sizeof(resp->name), "%s", t->info.name);
	resp->topic_id = t->info.id;
	HW_LOG(INFO, "ctrl", "topic %s (id %u, %d partitions) deleted", t->info.name, t->info.id, t->info.partitions);
	const ctrl_topic *gone = remove_topic(c, ti);
	push_deleted(c, gone, -1);
	return 0;
}

/* ---- producer id blocks */

int ctrl_replay_producer_ids(hw_ctrl *c, const uint8_t *payload, size_t len)
{
	hw_bytes_rd r = hw_bytes_rd_init(payload, len);
	(void)hw_bytes_le(&r, 4);                     /* broker id */
	(void)hw_bytes_le(&r, 8);                     /* broker epoch */
	int64_t next = (int64_t)hw_bytes_le(&r, 8);
	if (r.bad || r.pos != r.len || next < 0)
		return -EBADMSG;
	if (next > c->next_producer_id)
		c->next_producer_id = next;
	return 0;
}

static int persist_producer_ids(hw_ctrl *c, int32_t broker, int64_t epoch, int64_t next)
{
	hw_bytes_wr w = hw_bytes_wr_grow();
	hw_bytes_put_le(&w, (uint32_t)broker, 4);
	hw_bytes_put_le(&w, (uint64_t)epoch, 8);
	hw_bytes_put_le(&w, (uint64_t)next, 8);
	return ctrl_write_record(c, HW_CTRL_REC_PRODUCER_IDS, &w);
}

int hw_ctrl_alloc_producer_ids(hw_ctrl *c, const hw_alloc_pids_req *req, hw_alloc_pids_resp *resp)
{
	*resp = (hw_alloc_pids_resp){ .error = HW_ERR_NONE, .first_id = -1, .count = 0 };
	ctrl_broker *b = ctrl_broker_find(c, req->broker_id);
	if (!b || b->state == HW_CTRL_BROKER_UNREGISTERED || b->epoch != req->broker_epoch) {
		resp->error = HW_ERR_STALE_BROKER_EPOCH; /* Kafka: the broker epoch must be current */
		return 0;
	}
	int64_t first = c->next_producer_id;
	if (first == 0) {
		/* no block handed out yet: start above the previous scheme's ids
		 * (broker epoch << 20 + counter; broker epochs are record numbers) */
		first = (int64_t)(c->records + 1) << 20;
	}
	if (first > INT64_MAX - HW_PRODUCER_ID_BLOCK) {
		resp->error = HW_ERR_UNKNOWN_SERVER_ERROR; /* Kafka: exhausted */
		return 0;
	}
	int rc = persist_producer_ids(c, req->broker_id, req->broker_epoch, first + HW_PRODUCER_ID_BLOCK);
	if (rc < 0)
		return rc;
	c->next_producer_id = first + HW_PRODUCER_ID_BLOCK;
	resp->first_id = first;
	resp->count = HW_PRODUCER_ID_BLOCK;
	HW_LOG(DEBUG, "ctrl", "producer ids %lld..%lld to broker %d", (long long)first,
	       (long long)(first + HW_PRODUCER_ID_BLOCK - 1), req->broker_id);
	return 0;
}

int64_t hw_ctrl_next_producer_id(const hw_ctrl *c) { return c->next_producer_id; }

/* ---- compaction */

int ctrl_compact_ids(hw_ctrl *c)
{
	int k = 0, rc = 0;
	uint32_t max_live = 0;
	for (int i = 0; i < c->n_topics; i++)
		if (c->topics[i].info.id > max_live)
			max_live = c->topics[i].info.id;
	if (c->next_topic_id > max_live + 1) { /* the floor left by deleted topics */
		rc = persist_delete(c, c->next_topic_id - 1, 0, "");
		k += rc == 0;
	}
	if (rc == 0 && c->next_producer_id > 0) {
		rc = persist_producer_ids(c, -1, -1, c->next_producer_id);
		k += rc == 0;
	}
	return rc < 0 ? rc : k;
}

/* ---- messages */

int ctrl_on_ids_msg(hw_ctrl *c, const hw_msg *m)
{
	hw_msg out = { .src = c->cfg.node_id, .dst = m->src, .correlation_id = m->correlation_id };
	int rc;
	if (m->type == HW_MSG_DELETE_TOPIC) {
		hw_delete_topic_resp resp;
		rc = hw_ctrl_delete_topic(c, m->u.other, &resp);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0) {
			/* the store refused the record: nothing changed, say so */
			resp.error = rc == -ESTALE ? HW_ERR_NOT_CONTROLLER :
				     rc == -ENOTCONN ? HW_ERR_REQUEST_TIMED_OUT : HW_ERR_KAFKA_STORAGE_ERROR;
			resp.topic_id = 0;
			snprintf(resp.error_message, sizeof(resp.error_message), "metadata store: %s (nothing changed)",
				 strerror(rc == -EAGAIN ? EIO : -rc));
		}
		out.type = HW_MSG_DELETE_TOPIC_RESP;
		out.u.other = &resp;
		if (c->net && hw_net_send(c->net, &out) < 0)
			c->counters[HW_CTRL_C_PUSH_SEND_FAILED]++;
		return rc == -ENOTCONN || rc == -ESTALE ? rc : 0;
	}
	hw_alloc_pids_resp resp;
	rc = hw_ctrl_alloc_producer_ids(c, m->u.other, &resp);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		resp = (hw_alloc_pids_resp){ .error = rc == -ESTALE ? HW_ERR_NOT_CONTROLLER : HW_ERR_UNKNOWN_SERVER_ERROR,
					     .first_id = -1, .count = 0 };
	out.type = HW_MSG_ALLOCATE_PRODUCER_IDS_RESP;
	out.u.other = &resp;
	if (c->net && hw_net_send(c->net, &out) < 0)
		c->counters[HW_CTRL_C_PUSH_SEND_FAILED]++;
	return rc == -ENOTCONN || rc == -ESTALE ? rc : 0;
}
