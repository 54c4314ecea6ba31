/* hw_rm.c — the replica manager: partition table, message dispatch, poll.
 *
 * Design note. The rm owns a table of partitions (hash by topic id and
 * partition), one timing wheel (1 ms tick, 20 buckets, as Kafka's
 * SystemTimer) shared by two purgatories (produce, fetch), and one fetch
 * session per leader it follows. hw_rm_on_msg only does what must happen
 * in order with the message (validate, append, record follower state,
 * answer or park); everything that may cascade — HW recomputation,
 * waking DelayedProduce/DelayedFetch watchers — is deferred to a dirty list
 * that hw_rm_poll drains once per call, so a burst of follower fetches
 * costs one HW computation and one purgatory scan per partition.
 *
 * Poll order: expire timers; ISR-expiry check (every
 * isr_check_interval_ms, default lag/20); AlterPartition re-sends; drain the
 * dirty list (poll the store for durability, recompute the HW, wake
 * produce and fetch watchers on an HW advance, fetch watchers on an LEO
 * change); send due follower fetches.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "hw_assert.h"
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_names.h"
#include "hw_repl_int.h"

void hw_rm_config_defaults(hw_rm_config *c)
{
	memset(c, 0, sizeof(*c));
	c->node_id = 0;
	c->broker_epoch = -1;
	c->controller_id = -1;
	c->owner_reactor = HW_OWNER_ANY;
#define HW_RM_CFG_DEF(field, name, def, lo, hi, unit, imp, doc) c->field = (def);
	HW_RM_KAFKA_CONFIG_TABLE(HW_RM_CFG_DEF)
#undef HW_RM_CFG_DEF
	c->log_cleaner_enable = 1;
	c->log_cleaner_backoff_ms = 15000;
}

int hw_rm_config_set(hw_rm_config *c, const char *name, int64_t v)
{
#define HW_RM_CFG_SET(field, kname, def, lo, hi, unit, imp, doc) \
	if (strcmp(name, kname) == 0) {                    \
		if (v < (lo) || v > (hi))                  \
			return -EINVAL;                    \
		c->field = v;                              \
		return 0;                                  \
	}
	HW_RM_KAFKA_CONFIG_TABLE(HW_RM_CFG_SET)
#undef HW_RM_CFG_SET
	return -ENOENT;
}

int hw_rm_set_dynamic_config(hw_rm *rm, const char *name, int64_t v)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	hw_quota *q;
	if (strcmp(name, "leader.replication.throttled.rate") == 0)
		q = &rm->leader_quota;
	else if (strcmp(name, "follower.replication.throttled.rate") == 0)
		q = &rm->follower_quota;
	else {
		hw_rm_config probe = rm->cfg;
		int rc = hw_rm_config_set(&probe, name, v);
		return rc < 0 ? rc : -ENOTSUP;
	}
	if (v < 0)
		return -EINVAL;
	hw_rm_config_set(&rm->cfg, name, v);
	hw_quota_set_bound(q, v);
	HW_LOG(INFO, "repl", "node %d dynamic config %s = %lld", rm->cfg.node_id, name, (long long)v);
	return 0;
}

void *hw_rm_scratch(void **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return *buf;
	size_t c = *cap ? *cap : 4096;
	while (c < need)
		c *= 2;
	void *n = realloc(*buf, c);
	if (!n)
		return NULL;
	*buf = n;
	*cap = c;
	return n;
}

int hw_rm_create(const hw_rm_config *cfg, hw_clock *clock, hw_net *net, hw_rm **out)
{
	if (!cfg || !clock || !net || !out || !cfg->open_store || cfg->node_id < 0 ||
	    cfg->replica_lag_time_max_ms < 1 || cfg->replica_fetch_max_bytes < 1 ||
	    cfg->replica_fetch_response_max_bytes < 1 || cfg->message_max_bytes < 1 ||
	    cfg->min_insync_replicas < 1 || cfg->replica_fetch_wait_max_ms < 0 ||
	    cfg->leader_replication_throttled_rate < 0 || cfg->follower_replication_throttled_rate < 0 ||
	    cfg->replication_quota_window_num < 1 ||
	    cfg->replication_quota_window_num > HW_QUOTA_MAX_SAMPLES ||
	    cfg->replication_quota_window_size_seconds < 1 ||
	    cfg->replication_quota_window_size_seconds > 86400 || cfg->log_retention_check_interval_ms < 1 ||
	    cfg->replica_high_watermark_checkpoint_interval_ms < 1)
		return -EINVAL;
	hw_rm *rm = calloc(1, sizeof(*rm));
	if (!rm)
		return -ENOMEM;
	rm->cfg = *cfg;
	if (rm->cfg.isr_check_interval_ms <= 0) {
		rm->cfg.isr_check_interval_ms = rm->cfg.replica_lag_time_max_ms / 20;
		if (rm->cfg.isr_check_interval_ms < 1)
			rm->cfg.isr_check_interval_ms = 1;
	}
	if (rm->cfg.fetch_request_timeout_ms <= 0)
		rm->cfg.fetch_request_timeout_ms = rm->cfg.replica_fetch_wait_max_ms + 200;
	if (rm->cfg.alter_partition_retry_ms <= 0)
		rm->cfg.alter_partition_retry_ms = 1000;
	if (rm->cfg.send_retry_backoff_ms <= 0)
		rm->cfg.send_retry_backoff_ms = 1;
	rm->clock = clock;
	rm->net = net;
	hw_quota_init(&rm->leader_quota, cfg->leader_replication_throttled_rate,
		      (int)cfg->replication_quota_window_num,
		      cfg->replication_quota_window_size_seconds * 1000);
	hw_quota_init(&rm->follower_quota, cfg->follower_replication_throttled_rate,
		      (int)cfg->replication_quota_window_num,
		      cfg->replication_quota_window_size_seconds * 1000);
	int64_t now = hw_clock_ms(clock);
	rm->wheel = hw_wheel_create(1, 20, now);
	if (rm->wheel) {
		rm->produce_purg = hw_purg_create("produce", rm->wheel);
		rm->fetch_purg = hw_purg_create("fetch", rm->wheel);
	}
	if (!rm->wheel || !rm->produce_purg || !rm->fetch_purg) {
		hw_rm_destroy(rm);
		return -ENOMEM;
	}
	rm->next_isr_check_ms = now + rm->cfg.isr_check_interval_ms;
	rm->next_retention_check_ms = now + rm->cfg.log_retention_check_interval_ms;
	rm->next_hw_checkpoint_ms = now + rm->cfg.replica_high_watermark_checkpoint_interval_ms;
	rm->next_clean_check_ms = now + rm->cfg.log_cleaner_backoff_ms;
	*out = rm;
	return 0;
}

void hw_rm_destroy(hw_rm *rm)
{
	if (!rm)
		return;
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	rm->req_fn = NULL; /* the forced completions below are not reported */
	/* Parked ops get no response; run their completion into the void by
	 * dropping them with their partition. Sends still go out: the caller
	 * keeps the net alive until destroy returns. */
	for (size_t i = 0; i < rm->nparts; i++)
		hw_part_destroy(rm->parts[i]);
	free(rm->parts);
	free(rm->hidx);
	free(rm->dirty);
	free(rm->scratch);
	free(rm->rscratch);
	free(rm->pscratch);
	free(rm->fscratch);
	hw_purg_destroy(rm->produce_purg);
	hw_purg_destroy(rm->fetch_purg);
	if (rm->wheel)
		hw_wheel_destroy(rm->wheel);
	free(rm);
}

void hw_rm_set_broker_epoch(hw_rm *rm, int64_t e)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	rm->cfg.broker_epoch = e;
}

void hw_rm_set_controller(hw_rm *rm, int32_t id)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	rm->cfg.controller_id = id;
}

/* ---- table ----------------------------------------------------------- */
static size_t tp_hash(hw_tp tp)
{
	uint64_t x = ((uint64_t)tp.topic_id << 32 | tp.partition) * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 29);
}

hw_part *hw_rm_find(hw_rm *rm, hw_tp tp)
{
	if (!rm->hcap)
		return NULL;
	for (size_t i = tp_hash(tp) & (rm->hcap - 1);; i = (i + 1) & (rm->hcap - 1)) {
		uint32_t v = rm->hidx[i];
		if (!v)
			return NULL;
		if (hw_tp_eq(rm->parts[v - 1]->tp, tp))
			return rm->parts[v - 1];
	}
}

static int table_add(hw_rm *rm, hw_part *p)
{
	if (rm->nparts == rm->capparts) {
		size_t c = rm->capparts ? rm->capparts * 2 : 16;
		hw_part **n = realloc(rm->parts, c * sizeof(*n));
		if (!n)
			return -ENOMEM;
		rm->parts = n;
		rm->capparts = c;
	}
	if ((rm->nparts + 1) * 2 > rm->hcap) {
		size_t c = rm->hcap ? rm->hcap * 2 : 32;
		uint32_t *h = calloc(c, sizeof(*h));
		if (!h)
			return -ENOMEM;
		for (size_t j = 0; j < rm->nparts; j++) {
			size_t i = tp_hash(rm->parts[j]->tp) & (c - 1);
			while (h[i])
				i = (i + 1) & (c - 1);
			h[i] = (uint32_t)(j + 1);
		}
		free(rm->hidx);
		rm->hidx = h;
		rm->hcap = c;
	}
	rm->parts[rm->nparts++] = p;
	size_t i = tp_hash(p->tp) & (rm->hcap - 1);
	while (rm->hidx[i])
		i = (i + 1) & (rm->hcap - 1);
	rm->hidx[i] = (uint32_t)rm->nparts;
	return 0;
}

void hw_rm_mark_dirty(hw_rm *rm, hw_part *p)
{
	if (p->dirty)
		return;
	if (rm->ndirty == rm->capdirty) {
		size_t c = rm->capdirty ? rm->capdirty * 2 : 64;
		hw_part **n = realloc(rm->dirty, c * sizeof(*n));
		if (!n)
			return; /* recomputed at the next mark; the ISR check also recomputes */
		rm->dirty = n;
		rm->capdirty = c;
	}
	p->dirty = 1;
	rm->dirty[rm->ndirty++] = p;
}

int hw_rm_send(hw_rm *rm, const hw_msg *m)
{
	int rc = hw_net_send(rm->net, m);
	if (rc < 0)
		HW_LOG(DEBUG, "repl", "node %d send %s to %d failed: %d", rm->cfg.node_id,
		       hw_msg_type_name(m->type), m->dst, rc);
	return rc;
}

/* Correlation ids. A response is matched to its request by the sender and
 * the correlation id alone (hw_fetcher.c, hw_part.c). Over TCP (Kafka) the
 * connection dies with the process; over datagrams it does not: a response
 * to a restarted broker's previous incarnation (a fetch answered after a
 * pause, a duplicate, one delayed by the network) reaches the new process.
 * Were its ids counted from 1 again, that answer would match one of its own
 * requests: a diverging epoch meant for a log the new process has since
 * truncated and refetched makes it truncate records the leader already
 * counted for the HW (an ISR member below the HW; docs/replication.md
 * "Deviations"). So ids follow the clock: each is the larger of the
 * previous one + 1 and the monotonic clock in microseconds (shared by all
 * processes of the host, and the harness's virtual clock), kept in 31 bits
 * (the top bit marks the Kafka server's own requests, hw_ksrv.h). A new
 * incarnation starts above every id its predecessor issued before the
 * restart while that one issued fewer than one request per microsecond on
 * average, and the 31 bits wrap after ~35 minutes — longer than any stale
 * answer stays in flight. */
uint32_t hw_rm_new_corr(hw_rm *rm) { return hw_clock_corr_next(rm->clock, &rm->corr_clock); }

/* A refused send is retried sooner than Kafka would (see the fetcher's
 * design note): base, 2 base, 4 base... per consecutive refusal, capped. */
int64_t hw_rm_send_backoff_ms(const hw_rm *rm, uint8_t *failures, int64_t cap)
{
	int64_t b = rm->cfg.send_retry_backoff_ms;
	if (cap < b)
		cap = b; /* never 0: a permanent refusal must not spin the reactor */
	for (uint8_t i = 0; i < *failures && b < cap; i++)
		b *= 2;
	if (b > cap)
		b = cap;
	if (*failures < UINT8_MAX)
		(*failures)++;
	return b;
}

/* ---- sender identity (docs/security.md "Sender identity") ----------- */
static const char *const reject_names[] = {
#define X(n, d) #n,
	HW_RM_REJECT_TABLE(X)
#undef X
};

const char *hw_rm_reject_name(int r)
{
	return r >= 0 && r < HW_RM_REJECT__COUNT ? reject_names[r] : "UNKNOWN_REJECT";
}

int hw_topic_name_valid(const char *s)
{
	return hw_topic_name_legal(s, 249);
}

/* Count a refused message; the first of each reason is logged (later ones
 * only counted: a flood must not become a log flood). */
void hw_rm_count_reject(hw_rm *rm, hw_rm_reject why, const hw_msg *m)
{
	if (!rm->rejected[why]++)
		HW_LOG(WARN, "repl", "node %d: refused %s from node %d: %s (counted in "
		       "hiwater_messages_rejected_total{reason=\"%s\"}; further ones are not logged)",
		       rm->cfg.node_id, hw_msg_type_name(m->type), m->src, hw_rm_reject_name(why),
		       hw_rm_reject_name(why));
}

/* Control messages only from the controller (when one is configured). */
static int from_controller(hw_rm *rm, const hw_msg *m)
{
	if (rm->cfg.controller_id < 0 || m->src == rm->cfg.controller_id)
		return 1;
	hw_rm_count_reject(rm, HW_RM_REJECT_NOT_CONTROLLER, m);
	return 0;
}

/* Take p out of the table (parts, hash index, dirty list). */
static void table_remove(hw_rm *rm, hw_part *p)
{
	for (size_t i = 0; i < rm->ndirty; i++)
		if (rm->dirty[i] == p) {
			rm->dirty[i] = rm->dirty[--rm->ndirty];
			break;
		}
	p->dirty = 0;
	for (size_t j = 0; j < rm->nparts; j++)
		if (rm->parts[j] == p) {
			rm->parts[j] = rm->parts[--rm->nparts];
			break;
		}
	/* rebuild the index (deletions are rare) */
	memset(rm->hidx, 0, rm->hcap * sizeof(*rm->hidx));
	for (size_t j = 0; j < rm->nparts; j++) {
		size_t i = tp_hash(rm->parts[j]->tp) & (rm->hcap - 1);
		while (rm->hidx[i])
			i = (i + 1) & (rm->hcap - 1);
		rm->hidx[i] = (uint32_t)(j + 1);
	}
}

/* The topic was deleted (Kafka's RemoveTopicRecord reaching a broker): the
 * replica stops, leaves the table first — so the forced completions below
 * (parked produces: UNKNOWN_TOPIC_OR_PARTITION; parked fetches re-read and
 * find no partition: UNKNOWN_TOPIC_OR_PARTITION) and later fetches no
 * longer see it, and no follower fetch names it again — and its log is
 * deleted (rm config delete_store). */
static void on_partition_deleted(hw_rm *rm, const hw_partition_state *ps)
{
	hw_part *p = hw_rm_find(rm, ps->tp);
	if (!p)
		return; /* already gone, or never ours */
	HW_LOG(INFO, "repl", "node %d %s-%u (topic id %u): topic deleted, removing the replica", rm->cfg.node_id,
	       p->topic, p->tp.partition, p->tp.topic_id);
	p->deleted = 1;
	p->role = HW_PART_NONE; /* parked fetches complete with UNKNOWN_TOPIC_OR_PARTITION */
	table_remove(rm, p);
	hw_part_destroy(p);
}

/* ---- dispatch -------------------------------------------------------- */
static void on_partition_state(hw_rm *rm, const hw_msg *m)
{
	const hw_partition_state *ps = &m->u.pstate;
	if (!from_controller(rm, m))
		return;
	if (ps->deleted) {
		on_partition_deleted(rm, ps);
		return;
	}
	if (ps->topic[0] && !hw_topic_name_valid(ps->topic)) {
		hw_rm_count_reject(rm, HW_RM_REJECT_BAD_TOPIC_NAME, m);   /* it would become a path */
		return;
	}
	if (!hw_idset_valid(&ps->replicas) || !hw_idset_valid(&ps->isr) || !hw_idset_valid(&ps->elr) ||
	    !hw_idset_valid(&ps->last_known_elr) || ps->leader_epoch < -1 || ps->partition_epoch < -1) {
		rm->dropped_malformed++;
		return;
	}
	hw_part *p = hw_rm_find(rm, ps->tp);
	if (!p) {
		if (!hw_idset_has(&ps->replicas, rm->cfg.node_id))
			return; /* not ours */
		p = hw_part_create(rm, ps);
		if (!p || table_add(rm, p) < 0) {
			HW_LOG(ERROR, "repl", "node %d: out of memory adding a partition", rm->cfg.node_id);
			if (p) {
				if (p->store)
					p->store->ops->close(p->store);
				hw_pidmap_free(&p->pids);
				free(p);
			}
			return;
		}
	}
	hw_part_on_state(p, ps);
}

static void on_alter_resp(hw_rm *rm, const hw_msg *m)
{
	if (!from_controller(rm, m))
		return;
	if (!hw_idset_valid(&m->u.alter_resp.isr)) {
		rm->dropped_malformed++;
		return;
	}
	hw_part *p = hw_rm_find(rm, m->u.alter_resp.tp);
	if (p)
		hw_part_on_alter_resp(p, &m->u.alter_resp, m->correlation_id);
}

/* ---- request timing (hw_rm.h) ----------------------------------------- */
static const char *const req_kind_names[] = {
#define HW_RM_REQ_NAME(n, req, acks) #n,
	HW_RM_REQ_KIND_TABLE(HW_RM_REQ_NAME)
#undef HW_RM_REQ_NAME
};
static const char *const req_kind_requests[] = {
#define HW_RM_REQ_REQUEST(n, req, acks) req,
	HW_RM_REQ_KIND_TABLE(HW_RM_REQ_REQUEST)
#undef HW_RM_REQ_REQUEST
};
static const char *const req_kind_acks[] = {
#define HW_RM_REQ_ACKS(n, req, acks) acks,
	HW_RM_REQ_KIND_TABLE(HW_RM_REQ_ACKS)
#undef HW_RM_REQ_ACKS
};

const char *hw_rm_req_kind_name(int k)
{
	return k >= 0 && k < HW_RM_REQ_KIND_MAX ? req_kind_names[k] : "UNKNOWN_REQUEST";
}
const char *hw_rm_req_kind_request(int k)
{
	return k >= 0 && k < HW_RM_REQ_KIND_MAX ? req_kind_requests[k] : "Unknown";
}
const char *hw_rm_req_kind_acks(int k)
{
	return k >= 0 && k < HW_RM_REQ_KIND_MAX ? req_kind_acks[k] : "";
}

void hw_rm_set_req_observer(hw_rm *rm, hw_rm_req_observer_fn fn, void *ctx)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	rm->req_fn = fn;
	rm->req_ctx = fn ? ctx : NULL;
}

hw_req_clock hw_rm_req_current(hw_rm *rm)
{
	return rm->cur ? *rm->cur : HW_REQ_CLOCK_NONE;
}

void hw_rm_req_park(hw_rm *rm, hw_req_clock *t)
{
	if (t->kind >= 0) {
		t->parked_ns = hw_clock_ns(rm->clock);
		t->parked = 1;
	}
}

int hw_rm_req_answer(hw_rm *rm, const hw_req_clock *t, const hw_msg *m, int16_t error)
{
	if (t->kind < 0 || !rm->req_fn)
		return m ? hw_rm_send(rm, m) : 0;
	hw_rm_req_timing r = { .kind = t->kind, .error = error, .delayed = t->parked,
			       .rx_ns = t->rx_ns, .start_ns = t->start_ns };
	r.ready_ns = hw_clock_ns(rm->clock);
	r.parked_ns = r.delayed ? t->parked_ns : r.ready_ns;
	if (m && m->type == HW_MSG_PRODUCE_RESP && m->u.produce_resp.has_timing)
		r.stages = &m->u.produce_resp.timing;
	int rc = 0;
	if (m) {
		rc = hw_rm_send(rm, m);
		r.sent_ns = hw_clock_ns(rm->clock);
	} else {
		r.sent_ns = r.ready_ns;
	}
	rm->req_fn(rm->req_ctx, &r);
	return rc;
}

static int req_kind_of(const hw_msg *m)
{
	if (m->type == HW_MSG_PRODUCE)
		return m->u.produce.acks == 0   ? HW_RM_REQ_PRODUCE_ACKS0
		       : m->u.produce.acks == 1 ? HW_RM_REQ_PRODUCE_ACKS1
						: HW_RM_REQ_PRODUCE_ACKSALL; /* -1 or invalid (answered with an error) */
	if (m->type == HW_MSG_FETCH)
		return m->u.fetch.replica_id >= 0 ? HW_RM_REQ_FETCH_FOLLOWER : HW_RM_REQ_FETCH_CONSUMER;
	return -1;
}

static int dispatch(hw_rm *rm, const hw_msg *m);

int hw_rm_on_msg_at(hw_rm *rm, const hw_msg *m, int64_t rx_ns)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	rm->msg_rx_ns = rx_ns > 0 ? rx_ns : 0;
	if (!m || !rm->req_fn || (m->type != HW_MSG_PRODUCE && m->type != HW_MSG_FETCH))
		return dispatch(rm, m);
	hw_req_clock t = { .start_ns = hw_clock_ns(rm->clock), .kind = req_kind_of(m) };
	t.rx_ns = rx_ns > 0 && rx_ns <= t.start_ns ? rx_ns : t.start_ns;
	rm->cur = &t;
	int rc = dispatch(rm, m);
	rm->cur = NULL;
	return rc;
}

int hw_rm_on_msg(hw_rm *rm, const hw_msg *m) { return hw_rm_on_msg_at(rm, m, 0); }

/* Controller fencing (hw_rm.h): 0 = from a lower controller epoch, drop. */
static int controller_epoch_ok(hw_rm *rm, const hw_msg *m, int32_t epoch)
{
	if (epoch <= 0)
		return 1; /* the embedded controller (or an old encoder) */
	if (epoch < rm->controller_epoch)
		return 0;
	if (epoch > rm->controller_epoch) {
		if (rm->controller_epoch > 0 || rm->cfg.controller_id != m->src)
			HW_LOG(INFO, "repl", "controller epoch %d from controller %d (was %d from %d)", epoch, m->src,
			       rm->controller_epoch, rm->cfg.controller_id);
		rm->controller_epoch = epoch;
		rm->cfg.controller_id = m->src;
	}
	return 1;
}

static int dispatch(hw_rm *rm, const hw_msg *m)
{
	if (!m)
		return -EPROTO;
	switch (m->type) {
	case HW_MSG_PRODUCE:
		if (m->u.produce.records_len && !m->u.produce.records)
			goto bad;
		hw_produce_handle(rm, m);
		return 0;
	case HW_MSG_FETCH:
		if (m->u.fetch.n_parts && !m->u.fetch.parts)
			goto bad;
		hw_fetch_handle(rm, m);
		return 0;
	case HW_MSG_FETCH_RESP:
		if (m->u.fetch_resp.n_parts && !m->u.fetch_resp.parts)
			goto bad;
		hw_fetcher_on_fetch_resp(rm, m);
		return 0;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		if (m->u.ofe.n_parts && !m->u.ofe.parts)
			goto bad;
		hw_ofe_handle(rm, m);
		return 0;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		hw_fetcher_on_ofe_resp(rm, m);
		return 0;
	case HW_MSG_ALTER_PARTITION_RESP:
		if (!controller_epoch_ok(rm, m, m->u.alter_resp.controller_epoch)) {
			rm->stale_controller_alter_resps++;
			return 0;
		}
		on_alter_resp(rm, m);
		return 0;
	case HW_MSG_PARTITION_STATE:
		if (!controller_epoch_ok(rm, m, m->u.pstate.controller_epoch)) {
			rm->stale_controller_pushes++;
			return 0;
		}
		on_partition_state(rm, m);
		return 0;
	default:
		return -ENOTSUP;
	}
bad:
	rm->dropped_malformed++;
	return -EPROTO;
}

/* ---- poll ------------------------------------------------------------ */
static int drain_dirty(hw_rm *rm, int64_t now)
{
	int work = 0;
	/* completions may mark partitions dirty again: swap the list out */
	size_t n = rm->ndirty, io_wait = 0;
	for (size_t i = 0; i < n; i++) {
		hw_part *p = rm->dirty[i];
		p->dirty = 0;
		int reaped = 0;
		if (p->store) {
			/* submit appended data, reap completions (may advance the
			 * durable end, which the HW and acks wait for) */
			int rc = p->store->ops->poll(p->store);
			if (rc > 0) {
				work++;
				reaped = 1;
			} else if (rc < 0) {
				p->m[HW_PM_STORE_ERRORS]++;
				hw_part_store_failed(p, rc, "a log write");
			}
		}
		hw_part_maybe_increment_hw(p, now);
		int64_t durable = hw_part_leo(p); /* nothing below moves it */
		int hw_moved = p->hw_moved;
		p->hw_moved = 0;
		if (hw_moved) {
			hw_purg_check_and_complete(rm->produce_purg, &p->produce_key);
			hw_purg_check_and_complete(rm->fetch_purg, &p->fetch_key);
			work++;
		} else if (p->store && durable != p->durable_seen) {
			/* the durable end moved: acks=1 waiters */
			hw_purg_check_and_complete(rm->produce_purg, &p->produce_key);
			if (p->leo_changed)
				hw_purg_check_and_complete(rm->fetch_purg, &p->fetch_key);
			work++;
		} else if (p->leo_changed) {
			hw_purg_check_and_complete(rm->fetch_purg, &p->fetch_key);
		}
		p->leo_changed = 0;
		p->durable_seen = durable;
		hw_part_update_gauges(p, now);
		/* I/O still completing or durability pending: keep it on the list */
		if (p->store && (reaped || hw_part_writes_pending(p))) {
			int was_dirty = p->dirty;
			hw_rm_mark_dirty(rm, p);
			if (!reaped && !was_dirty)
				io_wait++;
		}
	}
	rm->nio_wait = io_wait;
	/* keep entries marked during this drain */
	if (rm->ndirty > n)
		memmove(rm->dirty, rm->dirty + n, (rm->ndirty - n) * sizeof(*rm->dirty));
	rm->ndirty -= n;
	return work;
}

/* Retention, as Kafka's LogManager.cleanupLogs every
 * log.retention.check.interval.ms: every replica (leader or follower)
 * deletes its own old segments, never past its HW
 * (UnifiedLog.deleteOldSegments' upper bound), so nothing a consumer
 * cannot read yet goes. A follower behind the leader's new log start is
 * moved up by the fetch path (OFFSET_OUT_OF_RANGE). */
static int apply_retention(hw_rm *rm)
{
	int work = 0;
	for (size_t i = 0; i < rm->nparts; i++) {
		hw_part *p = rm->parts[i];
		if (!p->store || !p->store->ops->apply_retention ||
		    (p->role != HW_PART_LEADER && p->role != HW_PART_FOLLOWER))
			continue;
		int64_t before = p->store->ops->log_start_offset(p->store);
		int rc = p->store->ops->apply_retention(p->store, p->hw);
		if (rc < 0) {
			p->m[HW_PM_STORE_ERRORS]++;
			HW_LOG(ERROR, "repl", "node %d %u-%u retention failed: %d", rm->cfg.node_id, p->tp.topic_id,
			       p->tp.partition, rc);
		} else if (rc > 0) {
			HW_LOG(INFO, "repl", "node %d %u-%u retention: %d segment(s) deleted, log start %" PRId64
			       " -> %" PRId64 " (HW %" PRId64 ")", rm->cfg.node_id, p->tp.topic_id,
			       p->tp.partition, rc, before,
			       p->store->ops->log_start_offset(p->store), p->hw);
			hw_part_update_gauges(p, rm_now_ms(rm));
			work++;
		}
	}
	return work;
}

/* Log compaction, as Kafka's CleanerThread: the first partition from the
 * cursor whose store cleans (cleanup.policy=compact and due), bounded by
 * its HW so nothing a follower could still truncate is rewritten; each
 * replica cleans its own log. 1 if one was cleaned (look again at once),
 * else 0 (back off). */
static int clean_one(hw_rm *rm)
{
	for (size_t n = 0; n < rm->nparts; n++) {
		size_t i = (rm->clean_cursor + n) % rm->nparts;
		hw_part *p = rm->parts[i];
		if (!p->store || !p->store->ops->clean ||
		    (p->role != HW_PART_LEADER && p->role != HW_PART_FOLLOWER))
			continue;
		int rc = p->store->ops->clean(p->store, p->hw);
		if (rc < 0) {
			p->m[HW_PM_STORE_ERRORS]++;
			HW_LOG(ERROR, "repl", "node %d %s-%u log cleaning failed: %d", rm->cfg.node_id, p->topic,
			       p->tp.partition, rc);
			if (rc == -EIO)
				hw_part_store_failed(p, rc, "log cleaning");
		}
		if (rc != 0) {
			rm->clean_cursor = i + 1;
			return rc > 0;
		}
	}
	return 0;
}

int hw_rm_poll(hw_rm *rm)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	int64_t now = rm_now_ms(rm);
	int work = (int)hw_wheel_advance_to(rm->wheel, now);
	if (now >= rm->next_isr_check_ms) {
		rm->next_isr_check_ms = now + rm->cfg.isr_check_interval_ms;
		for (size_t i = 0; i < rm->nparts; i++) {
			hw_part *p = rm->parts[i];
			if (p->role != HW_PART_LEADER)
				continue;
			hw_part_maybe_shrink_isr(p, now);
			hw_part_update_gauges(p, now);
		}
		work++;
	}
	if (now >= rm->next_retention_check_ms) {
		rm->next_retention_check_ms = now + rm->cfg.log_retention_check_interval_ms;
		work += apply_retention(rm);
	}
	if (rm->cfg.log_cleaner_enable && now >= rm->next_clean_check_ms) {
		int cleaned = clean_one(rm);
		rm->next_clean_check_ms = cleaned ? now : now + rm->cfg.log_cleaner_backoff_ms;
		work += cleaned;
	}
	if (now >= rm->next_hw_checkpoint_ms) {
		/* Kafka's ReplicaManager.checkpointHighWatermarks */
		rm->next_hw_checkpoint_ms = now + rm->cfg.replica_high_watermark_checkpoint_interval_ms;
		for (size_t i = 0; i < rm->nparts; i++)
			hw_part_checkpoint_hw(rm->parts[i]);
	}
	if (now >= rm->next_alter_check_ms) {
		/* AlterPartition re-sends: coarse (100 ms) so a poll stays O(dirty) */
		rm->next_alter_check_ms = now + 100;
		for (size_t i = 0; i < rm->nparts; i++)
			if (rm->parts[i]->alter_in_flight == 1)
				hw_part_retry_alter(rm->parts[i], now);
	}
	work += drain_dirty(rm, now);
	work += hw_fetcher_poll(rm, now);
	return work;
}

int64_t hw_rm_next_deadline_ns(hw_rm *rm)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	int64_t d = rm->next_isr_check_ms;
	if (rm->next_retention_check_ms < d)
		d = rm->next_retention_check_ms;
	if (rm->next_hw_checkpoint_ms < d)
		d = rm->next_hw_checkpoint_ms;
	int64_t w = hw_wheel_next_expiry(rm->wheel);
	if (w < d)
		d = w;
	int64_t f = hw_fetcher_next_deadline_ms(rm);
	if (f < d)
		d = f;
	for (size_t i = 0; i < rm->nparts; i++)
		if (rm->parts[i]->alter_in_flight == 1) {
			int64_t a = rm->parts[i]->alter_retry_ms;
			if (a < rm->next_alter_check_ms)
				a = rm->next_alter_check_ms;
			if (a < d)
				d = a;
		}
	if (rm->ndirty > (rm->cfg.stores_signal_completions ? rm->nio_wait : 0))
		d = 0;
	if (d == INT64_MAX)
		return INT64_MAX;
	if (d < 0)
		d = 0;
	return d * 1000000;
}

/* ---- introspection --------------------------------------------------- */
int hw_rm_partition_info(hw_rm *rm, hw_tp tp, hw_rm_part_info *out)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	hw_part *p = hw_rm_find(rm, tp);
	if (!p)
		return -ENOENT;
	hw_part_fill_info(p, out, rm_now_ms(rm));
	return 0;
}

size_t hw_rm_partition_count(hw_rm *rm)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	return rm->nparts;
}

int hw_rm_partition_at(hw_rm *rm, size_t i, hw_tp *out)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	if (i >= rm->nparts)
		return -ENOENT;
	*out = rm->parts[i]->tp;
	return 0;
}

void hw_rm_get_stats(hw_rm *rm, hw_rm_stats *o)
{
	HW_ASSERT_OWNER(rm->cfg.owner_reactor);
	memset(o, 0, sizeof(*o));
	int64_t now = rm_now_ms(rm);
	for (size_t i = 0; i < rm->nparts; i++) {
		hw_part *p = rm->parts[i];
		hw_part_update_gauges(p, now);
		o->partitions++;
		o->leaders += p->role == HW_PART_LEADER;
		o->offline += p->role == HW_PART_OFFLINE;
		o->under_replicated += (uint32_t)p->m[HW_PM_UNDER_REPLICATED];
		o->under_min_isr += (uint32_t)p->m[HW_PM_UNDER_MIN_ISR];
		o->leader_throttled_fetches += p->m[HW_PM_LEADER_THROTTLED];
		o->follower_throttled_fetches += p->m[HW_PM_FOLLOWER_THROTTLED];
	}
	o->leader_throttle_bound = rm->leader_quota.bound;
	o->follower_throttle_bound = rm->follower_quota.bound;
	o->leader_throttle_rate = hw_quota_rate(&rm->leader_quota, now);
	o->follower_throttle_rate = hw_quota_rate(&rm->follower_quota, now);
	o->leader_throttled_bytes = rm->leader_quota.recorded_bytes;
	o->follower_throttled_bytes = rm->follower_quota.recorded_bytes;
	hw_purg_stats s;
	hw_purg_get_stats(rm->produce_purg, &s);
	o->delayed_produce = s.live;
	hw_purg_get_stats(rm->fetch_purg, &s);
	o->delayed_fetch = s.live;
	o->dropped_malformed = rm->dropped_malformed;
	o->controller_epoch = rm->controller_epoch;
	o->stale_controller_pushes = rm->stale_controller_pushes;
	o->stale_controller_alter_resps = rm->stale_controller_alter_resps;
	for (int i = 0; i < HW_RM_REJECT__COUNT; i++)
		o->rejected[i] = rm->rejected[i];
}
