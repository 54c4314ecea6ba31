/* hw_part.c — the partition state machine: roles, epochs, HW, ISR.
 * Rules: docs/replication.md (#high-watermark, #strict-min-isr,
 * #last-caught-up-time, #isr-shrink, #isr-expand, #alterpartition).
 *
 * Design note. A partition replica is NONE until the controller's first
 * PartitionState names it, then LEADER, FOLLOWER or OFFLINE (no leader, or
 * its log could not be opened). Metadata is applied only if it is not stale
 * (partition epoch and leader epoch never go backwards — HW_ASSERTed after
 * filtering). Becoming leader records (leader epoch, LEO) in the epoch cache
 * (Kafka makeLeader), remembers that LEO as the leader-epoch start offset,
 * and resets every remote replica: LEO unknown, lastCaughtUp = now for ISR
 * members and 0 for the others. Becoming follower (or losing the partition)
 * forces every parked produce/fetch to complete with NOT_LEADER_OR_FOLLOWER.
 *
 * HW (leader, Kafka Partition.maybeIncrementLeaderHW): blocked while the
 * committed ISR is smaller than min(min.insync.replicas, replicas) — strict
 * min ISR, Kafka >= 3.7 — otherwise the minimum of the leader's LEO and the
 * LEO of every remote replica in the maximal ISR or caught up (LEO == leader
 * LEO, or lastCaughtUp within replica.lag.time.max.ms). It only moves
 * forward and never passes the LEO (HW_ASSERT). The leader's LEO here is the
 * store's durable end offset, so with fsync-before-ack nothing is
 * acknowledged before it is on disk.
 *
 * ISR: lastCaughtUp follows Replica.updateFetchStateOrThrow exactly (fetch
 * offset >= leader LEO now -> now; >= leader LEO at the previous fetch ->
 * time of the previous fetch). Shrink: ISR followers whose LEO differs from
 * the leader's and whose lastCaughtUp is older than the lag. DEVIATION from
 * Kafka: the check runs every replica.lag.time.max.ms / 20 (configurable)
 * instead of lag / 2, so a stuck follower leaves within 5% of the lag
 * (Kafka: up to 1.5x). Expand, on each follower fetch: not in the ISR, LEO
 * >= HW and >= the leader-epoch start offset. Both go to the controller as
 * an AlterPartition carrying leader epoch and partition epoch; one is in
 * flight at a time, and until the response commits it the HW uses the
 * maximal ISR (committed plus the pending addition; for a shrink, the old
 * ISR). Response handling follows Partition.handleAlterPartitionError.
 *
 * ELR / last known ELR are the controller's (KIP-966): the broker stores and
 * reports them; HW blocking under min ISR is what makes them safe.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_assert.h"
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_repl_int.h"

const char *hw_part_role_name(int r)
{
	static const char *const n[] = {
#define X(s) #s,
		HW_PART_ROLE_TABLE(X)
#undef X
	};
	return r >= 0 && r < HW_PART_ROLE_MAX ? n[r] : "UNKNOWN_ROLE";
}

const char *hw_fetcher_state_name(int s)
{
	static const char *const n[] = {
#define X(s) #s,
		HW_FETCHER_STATE_TABLE(X)
#undef X
	};
	return s >= 0 && s < HW_FETCHER_STATE_MAX ? n[s] : "UNKNOWN_FETCHER_STATE";
}

const char *hw_part_metric_name(int m)
{
	static const char *const n[] = {
#define X(e, s, g, u, h, k) s,
		HW_PART_METRIC_TABLE(X)
#undef X
	};
	return m >= 0 && m < HW_PM_MAX ? n[m] : "unknown_metric";
}

int hw_part_metric_is_gauge(int m)
{
	static const uint8_t g[] = {
#define X(e, s, gg, u, h, k) gg,
		HW_PART_METRIC_TABLE(X)
#undef X
	};
	return m >= 0 && m < HW_PM_MAX ? g[m] : 0;
}

int hw_part_metric_per_unit(int m)
{
	static const int u[] = {
#define X(e, s, g, uu, h, k) uu,
		HW_PART_METRIC_TABLE(X)
#undef X
	};
	return m >= 0 && m < HW_PM_MAX ? u[m] : 1;
}

const char *hw_part_metric_help(int m)
{
	static const char *const t[] = {
#define X(e, s, g, u, h, k) h,
		HW_PART_METRIC_TABLE(X)
#undef X
	};
	return m >= 0 && m < HW_PM_MAX ? t[m] : "";
}

const char *hw_part_metric_kafka(int m)
{
	static const char *const t[] = {
#define X(e, s, g, u, h, k) k,
		HW_PART_METRIC_TABLE(X)
#undef X
	};
	return m >= 0 && m < HW_PM_MAX ? t[m] : "-";
}

static const char *idset_str(const hw_idset *s, char *buf, size_t n)
{
	size_t o = 0;
	o += (size_t)snprintf(buf + o, n - o, "[");
	for (int i = 0; i < s->n && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? "," : "", s->id[i]);
	if (o < n)
		snprintf(buf + o, n - o, "]");
	return buf;
}

#define TPF "%u-%u"
#define TPA(p) (p)->tp.topic_id, (p)->tp.partition

void hw_part_set_role(hw_part *p, int role, const char *why)
{
	if (p->role == role)
		return;
	HW_LOG(INFO, "repl", "node %d " TPF " role %s -> %s (leader %d epoch %d: %s)",
	       p->rm->cfg.node_id, TPA(p), hw_part_role_name(p->role), hw_part_role_name(role),
	       p->leader, p->leader_epoch, why);
	p->role = role;
}

void hw_part_set_fstate(hw_part *p, int st, const char *why)
{
	if (p->fstate == st)
		return;
	HW_LOG(INFO, "repl", "node %d " TPF " fetcher %s -> %s (%s)", p->rm->cfg.node_id, TPA(p),
	       hw_fetcher_state_name(p->fstate), hw_fetcher_state_name(st), why);
	p->fstate = st;
}

int64_t hw_part_leo(const hw_part *p)
{
	if (!p->store)
		return 0;
	return p->store->ops->durable_end_offset(p->store);
}

static int64_t log_end(const hw_part *p)
{
	return p->store ? p->store->ops->log_end_offset(p->store) : 0;
}

int hw_part_writes_pending(const hw_part *p)
{
	return p->store && !p->store_failed && hw_part_leo(p) < log_end(p);
}

int64_t hw_part_registered_epoch(const hw_part *p, int32_t id)
{
	for (int i = 0; i < p->n_reg_epochs; i++)
		if (p->reg_ids[i] == id)
			return p->reg_epochs[i];
	return -1;
}

/* Registered broker epochs of a PARTITION_STATE (aligned with its
 * replicas), kept while it is current; an old encoder's none clear them. */
static void apply_replica_epochs(hw_part *p, const hw_partition_state *ps)
{
	int n = ps->n_replica_epochs == ps->replicas.n ? ps->n_replica_epochs : 0;
	for (int i = 0; i < n; i++) {
		p->reg_ids[i] = ps->replicas.id[i];
		p->reg_epochs[i] = ps->replica_epochs[i];
	}
	p->n_reg_epochs = (uint8_t)n;
}

void hw_part_store_failed(hw_part *p, int rc, const char *what)
{
	if (p->store_failed)
		return;
	p->store_failed = rc < 0 ? rc : -EIO;
	HW_LOG(ERROR, "repl", "node %d %s-%u: %s failed (%d): the log is offline until a restart",
	       p->rm->cfg.node_id, p->topic, p->tp.partition, what, rc);
}

int hw_part_effective_min_isr(const hw_part *p)
{
	int64_t m = p->min_isr_topic > 0 ? p->min_isr_topic : p->rm->cfg.min_insync_replicas;
	if (m > p->replicas.n)
		m = p->replicas.n;
	return m < 1 ? 1 : (int)m;
}

void hw_part_maximal_isr(const hw_part *p, hw_idset *out)
{
	*out = p->isr;
	if (p->alter_in_flight && p->alter_isr.n > p->isr.n) /* pending expand */
		*out = p->alter_isr;
}

hw_replica_state *hw_part_rs(hw_part *p, int32_t id)
{
	for (int i = 0; i < p->nrs; i++)
		if (p->rs[i].id == id)
			return &p->rs[i];
	return NULL;
}

static void reset_replicas(hw_part *p, int64_t now_ms)
{
	p->nrs = 0;
	for (int i = 0; i < p->replicas.n; i++) {
		int32_t id = p->replicas.id[i];
		if (id == p->rm->cfg.node_id)
			continue;
		hw_replica_state *r = &p->rs[p->nrs++];
		memset(r, 0, sizeof(*r));
		r->id = id;
		r->leo = -1;
		r->last_caught_up_ms = hw_idset_has(&p->isr, id) ? now_ms : HW_NEVER_MS;
		/* outside the ISR the new leader got: e.g. the previous leader in
		 * controlled shutdown, whose last fetches must not hold the HW */
		r->ineligible = !hw_idset_has(&p->isr, id);
		r->last_fetch_ms = HW_NEVER_MS;
		r->last_fetch_leader_leo = -1;
		r->last_fetched_epoch = -1;
		r->last_sent_hw = -1;
	}
}

/* Keep per-replica state when the replica set changes without a new
 * leadership (reassignment): add new ones, drop removed ones. */
static void sync_replicas(hw_part *p)
{
	hw_replica_state old[HW_MAX_RF];
	int n = p->nrs;
	memcpy(old, p->rs, sizeof(old));
	p->nrs = 0;
	for (int i = 0; i < p->replicas.n; i++) {
		int32_t id = p->replicas.id[i];
		if (id == p->rm->cfg.node_id)
			continue;
		hw_replica_state *r = &p->rs[p->nrs++];
		int found = 0;
		for (int j = 0; j < n; j++)
			if (old[j].id == id) {
				*r = old[j];
				found = 1;
			}
		if (!found) {
			memset(r, 0, sizeof(*r));
			r->id = id;
			r->leo = -1;
			r->last_caught_up_ms = HW_NEVER_MS;
			r->last_fetch_ms = HW_NEVER_MS;
			r->last_fetch_leader_leo = -1;
			r->last_fetched_epoch = -1;
			r->last_sent_hw = -1;
		}
	}
}

static void force_ops(hw_part *p)
{
	hw_purg_force_all(p->rm->produce_purg, &p->produce_key);
	hw_purg_force_all(p->rm->fetch_purg, &p->fetch_key);
}

hw_part *hw_part_create(hw_rm *rm, const hw_partition_state *ps)
{
	hw_part *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->rm = rm;
	p->tp = ps->tp;
	memcpy(p->topic, ps->topic, sizeof(p->topic));
	p->topic[sizeof(p->topic) - 1] = 0;
	p->role = HW_PART_NONE;
	p->leader = HW_NO_NODE;
	p->leader_epoch = -1;
	p->partition_epoch = -1;
	p->fstate = HW_FETCHER_IDLE;
	p->max_message_bytes = -1;
	hw_pidmap_init(&p->pids);
	/* new: as created (Kafka's isNew; a broker restart or any leader or
	 * ISR change bumps the partition epoch) */
	int is_new = ps->partition_epoch == 0 && ps->leader_epoch == 0;
	int rc = rm->cfg.open_store(rm->cfg.store_ctx, p->tp, p->topic, is_new, &p->store);
	if (rc < 0 || !p->store) {
		HW_LOG(ERROR, "repl", "node %d " TPF " cannot open log: %d", rm->cfg.node_id, TPA(p), rc);
		p->store = NULL;
		p->store_err = rc < 0 ? rc : -EIO;
	} else {
		/* Kafka: the HW a restarted replica starts from is its last
		 * checkpoint (replication-offset-checkpoint), else the log start */
		p->hw = p->store->ops->log_start_offset(p->store);
		p->hw_checkpointed = -1;
		int64_t cp = p->store->ops->read_hw_checkpoint ? p->store->ops->read_hw_checkpoint(p->store) : -1;
		if (cp > p->hw && cp <= hw_part_leo(p)) {
			p->hw = cp;
			p->hw_checkpointed = cp;
			HW_LOG(INFO, "repl", "node %d " TPF " HW %" PRId64 " from its checkpoint", rm->cfg.node_id,
			       TPA(p), cp);
		}
		rc = hw_pidmap_rebuild(&p->pids, p->store);
		if (rc < 0)
			HW_LOG(WARN, "repl", "node %d " TPF " producer state rebuild failed: %d",
			       rm->cfg.node_id, TPA(p), rc);
	}
	return p;
}

void hw_part_checkpoint_hw(hw_part *p)
{
	if (!p->store || !p->store->ops->write_hw_checkpoint || p->hw == p->hw_checkpointed || p->hw < 0 ||
	    p->store_failed)
		return; /* a failed store: said once already (hw_part_store_failed) */
	int rc = p->store->ops->write_hw_checkpoint(p->store, p->hw);
	if (rc < 0) {
		p->m[HW_PM_STORE_ERRORS]++;
		HW_LOG(WARN, "repl", "node %d " TPF " HW checkpoint failed: %d", p->rm->cfg.node_id, TPA(p), rc);
		return;
	}
	p->hw_checkpointed = p->hw;
}

void hw_part_destroy(hw_part *p)
{
	if (!p)
		return;
	force_ops(p);
	hw_purg_key_release(p->rm->produce_purg, &p->produce_key);
	hw_purg_key_release(p->rm->fetch_purg, &p->fetch_key);
	if (p->store && p->deleted && p->rm->cfg.delete_store) {
		p->rm->cfg.delete_store(p->rm->cfg.store_ctx, p->tp, p->topic, p->store);
	} else if (p->store) {
		if (!p->deleted)
			hw_part_checkpoint_hw(p);
		p->store->ops->close(p->store);
	}
	hw_pidmap_free(&p->pids);
	hw_piece_reset(&p->pasm);
	free(p);
}

static void make_leader(hw_part *p, int64_t now_ms)
{
	hw_store *s = p->store;
	int64_t leo = log_end(p);
	int rc = s->ops->assign_epoch(s, p->leader_epoch, leo);
	if (rc < 0)
		HW_LOG(ERROR, "repl", "node %d " TPF " assign epoch %d failed: %d", p->rm->cfg.node_id,
		       TPA(p), p->leader_epoch, rc);
	p->leader_epoch_start_offset = leo;
	hw_piece_reset(&p->pasm); /* a follower's half-assembled batch */
	reset_replicas(p, now_ms);
	if (p->hw > hw_part_leo(p))
		p->hw = hw_part_leo(p);
	p->fstate = HW_FETCHER_IDLE;
	hw_part_set_role(p, HW_PART_LEADER, "became leader");
	HW_LOG(INFO, "repl", "node %d " TPF " leader epoch %d starts at offset %" PRId64 " hw %" PRId64,
	       p->rm->cfg.node_id, TPA(p), p->leader_epoch, leo, p->hw);
}

/* The log-level topic configs (cleanup.policy, retention.*, segment.*, ...;
 * docs/kafka.md "Topic configuration"): handed to the store when they
 * changed (a failure is logged and retried with the next push), and
 * max.message.bytes kept for produce validation. */
static void apply_log_config(hw_part *p, const hw_topic_config *tc)
{
	p->max_message_bytes = (tc->set & (1u << HW_TC_MAX_MESSAGE_BYTES)) ?
			       (int32_t)tc->v[HW_TC_MAX_MESSAGE_BYTES] : -1;
	if (!p->store || !p->store->ops->set_topic_config || memcmp(&p->tconf, tc, sizeof(*tc)) == 0)
		return;
	int rc = p->store->ops->set_topic_config(p->store, tc);
	if (rc < 0) {
		HW_LOG(WARN, "repl", "node %d " TPF " topic configs not applied: %d", p->rm->cfg.node_id, TPA(p),
		       rc);
		return;
	}
	if (rc > 0)
		HW_LOG(INFO, "repl", "node %d " TPF " topic configs applied (%u set)", p->rm->cfg.node_id, TPA(p),
		       (unsigned)__builtin_popcount(tc->set));
	p->tconf = *tc;
}

/* Topic configs carried by every PARTITION_STATE (also by a re-push at the
 * same epochs after `alter-config`): min.insync.replicas and the
 * replication throttle's coverage. */
static void apply_topic_config(hw_part *p, const hw_partition_state *ps)
{
	int32_t me = p->rm->cfg.node_id;
	p->min_isr_topic = ps->min_insync_replicas;
	if (!hw_idset_valid(&ps->leader_throttled) || !hw_idset_valid(&ps->follower_throttled)) {
		p->rm->dropped_malformed++;
		return;
	}
	uint8_t lt = (uint8_t)hw_idset_has(&ps->leader_throttled, me);
	uint8_t ft = (uint8_t)hw_idset_has(&ps->follower_throttled, me);
	if (lt != p->lthrottled || ft != p->fthrottled)
		HW_LOG(INFO, "repl", "node %d " TPF " replication throttle: leader side %s, follower side %s",
		       me, TPA(p), lt ? "on" : "off", ft ? "on" : "off");
	p->leader_throttled = ps->leader_throttled;
	p->follower_throttled = ps->follower_throttled;
	p->lthrottled = lt;
	p->fthrottled = ft;
	apply_log_config(p, &ps->tconf);
}

/* The pushed ISR is the one we proposed (same members, any order). */
static int pending_committed(const hw_idset *proposed, const hw_idset *pushed)
{
	if (proposed->n != pushed->n)
		return 0;
	for (int i = 0; i < proposed->n; i++)
		if (!hw_idset_has(pushed, proposed->id[i]))
			return 0;
	return 1;
}

void hw_part_on_state(hw_part *p, const hw_partition_state *ps)
{
	hw_rm *rm = p->rm;
	int32_t me = rm->cfg.node_id;
	int64_t now = rm_now_ms(rm);
	char b1[64], b2[64];

	if (ps->partition_epoch < p->partition_epoch || ps->leader_epoch < p->leader_epoch) {
		HW_LOG(DEBUG, "repl", "node %d " TPF " stale state (pe %d le %d < pe %d le %d) ignored",
		       me, TPA(p), ps->partition_epoch, ps->leader_epoch, p->partition_epoch,
		       p->leader_epoch);
		return;
	}
	if (ps->partition_epoch == p->partition_epoch && ps->leader_epoch == p->leader_epoch) {
		/* same partition state; a topic config change (alter-config)
		 * and a replica's new registration come this way: apply the
		 * configs and the registered epochs only */
		apply_topic_config(p, ps);
		apply_replica_epochs(p, ps);
		return;
	}
	if (!hw_idset_valid(&ps->replicas) || !hw_idset_valid(&ps->isr) || !hw_idset_valid(&ps->elr) ||
	    !hw_idset_valid(&ps->last_known_elr)) {
		rm->dropped_malformed++;
		return;
	}
	if (ps->leader >= 0 && !hw_idset_has(&ps->isr, ps->leader) && ps->isr.n > 0) {
		HW_LOG(WARN, "repl", "node %d " TPF " state with leader %d outside ISR %s ignored", me,
		       TPA(p), ps->leader, idset_str(&ps->isr, b1, sizeof(b1)));
		rm->dropped_malformed++;
		return;
	}
	int32_t old_leader = p->leader, old_le = p->leader_epoch;
	int old_role = p->role;
	hw_idset old_isr = p->isr;

	HW_ASSERT(ps->leader_epoch >= p->leader_epoch && ps->partition_epoch >= p->partition_epoch);
	p->leader = ps->leader;
	p->leader_epoch = ps->leader_epoch;
	p->partition_epoch = ps->partition_epoch;
	p->replicas = ps->replicas;
	p->isr = ps->isr;
	p->elr = ps->elr;
	p->last_known_elr = ps->last_known_elr;
	p->lrs = ps->leader_recovery_state;
	apply_topic_config(p, ps);
	apply_replica_epochs(p, ps);
	if (ps->topic[0]) {
		memcpy(p->topic, ps->topic, sizeof(p->topic));
		p->topic[sizeof(p->topic) - 1] = 0;
	}
	if (p->alter_in_flight == 1 && old_role == HW_PART_LEADER && ps->leader == me &&
	    ps->leader_epoch == old_le && pending_committed(&p->alter_isr, &p->isr)) {
		/* the controller pushes the new state before it answers the
		 * AlterPartition (hw_ctrl_part.c): our change committed, and the
		 * answer will be ignored as stale — count it here */
		if (p->isr.n < old_isr.n)
			p->m[HW_PM_ISR_SHRINKS]++;
		else if (p->isr.n > old_isr.n)
			p->m[HW_PM_ISR_EXPANDS]++;
	} else if (p->alter_in_flight) {
		HW_LOG(INFO, "repl", "node %d " TPF " pending ISR %s dropped: new metadata", me,
		       TPA(p), idset_str(&p->alter_isr, b1, sizeof(b1)));
	}
	p->alter_in_flight = 0;
	if (hw_idset_has(&old_isr, me) || old_isr.n != p->isr.n)
		HW_LOG(INFO, "repl", "node %d " TPF " metadata: leader %d epoch %d pe %d isr %s -> %s",
		       me, TPA(p), p->leader, p->leader_epoch, p->partition_epoch,
		       idset_str(&old_isr, b1, sizeof(b1)), idset_str(&p->isr, b2, sizeof(b2)));

	if (!hw_idset_has(&p->replicas, me)) {
		force_ops(p);
		hw_part_set_fstate(p, HW_FETCHER_IDLE, "not a replica");
		hw_part_set_role(p, HW_PART_NONE, "not a replica any more");
	} else if (!p->store || p->leader < 0) {
		force_ops(p);
		hw_part_set_fstate(p, HW_FETCHER_IDLE, "offline");
		hw_part_set_role(p, HW_PART_OFFLINE, p->store ? "no leader" : "log unavailable");
	} else if (p->leader == me) {
		if (old_role != HW_PART_LEADER || old_le != p->leader_epoch) {
			force_ops(p); /* fetches parked under the old epoch */
			hw_part_set_fstate(p, HW_FETCHER_IDLE, "became leader");
			make_leader(p, now);
		} else {
			sync_replicas(p);
			/* A replica the controller removed from the ISR (fenced, shutting
			 * down) is not eligible (Kafka checks the broker registration,
			 * which the broker here only sees as this ISR change): forget its
			 * lastCaughtUp so it no longer holds the HW back. */
			for (int i = 0; i < p->nrs; i++)
				if (hw_idset_has(&old_isr, p->rs[i].id) && !hw_idset_has(&p->isr, p->rs[i].id)) {
					p->rs[i].last_caught_up_ms = HW_NEVER_MS;
					p->rs[i].ineligible = 1;
				}
		}
		hw_rm_mark_dirty(rm, p);
	} else {
		if (old_role != HW_PART_FOLLOWER || old_leader != p->leader || old_le != p->leader_epoch) {
			force_ops(p);
			p->nrs = 0;
			hw_part_set_role(p, HW_PART_FOLLOWER, "follow");
			hw_fetcher_start(p);
		} else if (p->fstate == HW_FETCHER_FAILED) {
			hw_fetcher_start(p);
		}
	}
	hw_part_update_gauges(p, now);
}

int hw_part_maybe_increment_hw(hw_part *p, int64_t now_ms)
{
	if (p->role != HW_PART_LEADER || !p->store)
		return 0;
	int64_t leo = hw_part_leo(p);
	int64_t end = log_end(p);
	if (p->isr.n < hw_part_effective_min_isr(p))
		return 0; /* strict min ISR: the HW is frozen (KIP-966) */
	hw_idset max;
	hw_part_maximal_isr(p, &max);
	HW_ASSERT(hw_idset_has(&max, p->rm->cfg.node_id));
	int64_t nhw = leo;
	for (int i = 0; i < p->nrs; i++) {
		hw_replica_state *r = &p->rs[i];
		if (r->ineligible && hw_idset_has(&p->isr, r->id))
			r->ineligible = 0; /* the controller re-admitted it */
		int caught_up = !r->ineligible && r->leo >= 0 &&
				(r->leo >= end || now_ms - r->last_caught_up_ms <= p->rm->cfg.replica_lag_time_max_ms);
		if (hw_idset_has(&max, r->id) || caught_up)
			if (r->leo < nhw)
				nhw = r->leo;
	}
	if (nhw <= p->hw)
		return 0;
	HW_ASSERT(nhw <= leo);
	HW_LOG(TRACE, "repl", "node %d " TPF " hw %" PRId64 " -> %" PRId64, p->rm->cfg.node_id,
	       TPA(p), p->hw, nhw);
	p->hw = nhw;
	p->m[HW_PM_HW_ADVANCES]++;
	p->hw_moved = 1;
	if (p->rm->timed_waiting)
		hw_pt_note_hw_move(p);
	hw_rm_mark_dirty(p->rm, p);
	return 1;
}

static void send_alter(hw_part *p, const hw_idset *isr, int64_t now_ms)
{
	hw_rm *rm = p->rm;
	p->alter_in_flight = 1;
	p->alter_isr = *isr;
	p->alter_corr = hw_rm_new_corr(rm);
	p->alter_sent_ms = now_ms;
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_ALTER_PARTITION;
	m.src = rm->cfg.node_id;
	m.dst = rm->cfg.controller_id;
	m.correlation_id = p->alter_corr;
	hw_alter_partition_req *a = &m.u.alter;
	a->broker_id = rm->cfg.node_id;
	a->broker_epoch = rm->cfg.broker_epoch;
	a->tp = p->tp;
	a->leader_epoch = p->leader_epoch;
	a->partition_epoch = p->partition_epoch;
	a->new_isr = *isr;
	for (int i = 0; i < HW_MAX_RF; i++)
		a->new_isr_broker_epochs[i] = -1;
	/* Partition.scala prepareIsrExpand/prepareIsrShrink: a leader always
	 * proposes RECOVERED. After an unclean (or last-known-leader) election
	 * the controller holds RECOVERING; this proposal is what completes the
	 * recovery (KIP-704). Echoing RECOVERING with a larger ISR is
	 * INVALID_REQUEST, which left the leader's ISR stuck at [leader]. */
	a->leader_recovery_state = HW_LRS_RECOVERED;
	p->alter_retry_ms = now_ms + rm->cfg.alter_partition_retry_ms;
	int rc = hw_rm_send(rm, &m);
	if (rc < 0) {
		/* Refused by the transport (no route to the controller yet, TX
		 * ring full): it never left, so waiting alter_partition_retry_ms
		 * for an answer would only delay it — and a pending shrink holds
		 * the HW (maximal ISR). Retry after the short send back-off, as
		 * the fetcher does (hw_fetcher.c "Refused sends"). */
		int64_t b = hw_rm_send_backoff_ms(rm, &p->alter_send_failures,
						  rm->cfg.alter_partition_retry_ms);
		p->alter_retry_ms = now_ms + b;
		if (p->alter_retry_ms < rm->next_alter_check_ms)
			rm->next_alter_check_ms = p->alter_retry_ms;
		p->m[HW_PM_ALTER_PARTITION_SEND_FAILED]++;
		if (p->alter_send_failures == 1)
			HW_LOG(INFO, "repl", "node %d " TPF " AlterPartition refused by the transport (%d): "
			       "retry in %" PRId64 " ms", rm->cfg.node_id, TPA(p), rc, b);
		return;
	}
	p->alter_send_failures = 0;
	p->m[HW_PM_ALTER_PARTITION_SENT]++;
}

static void propose_isr(hw_part *p, const hw_idset *isr, const char *why, int64_t now_ms)
{
	char b1[64], b2[64];
	HW_LOG(INFO, "repl", "node %d " TPF " propose ISR %s -> %s (%s), leader epoch %d pe %d",
	       p->rm->cfg.node_id, TPA(p), idset_str(&p->isr, b1, sizeof(b1)),
	       idset_str(isr, b2, sizeof(b2)), why, p->leader_epoch, p->partition_epoch);
	send_alter(p, isr, now_ms);
}

static void maybe_expand_isr(hw_part *p, hw_replica_state *r, int64_t now_ms)
{
	if (p->alter_in_flight || hw_idset_has(&p->isr, r->id))
		return;
	if (r->leo < p->hw || r->leo < p->leader_epoch_start_offset)
		return;
	hw_idset n = { 0 };
	for (int i = 0; i < p->replicas.n; i++) { /* keep assignment order */
		int32_t id = p->replicas.id[i];
		if (hw_idset_has(&p->isr, id) || id == r->id)
			n.id[n.n++] = id;
	}
	propose_isr(p, &n, "follower caught up", now_ms);
}

void hw_part_update_follower(hw_part *p, hw_replica_state *r, int64_t f, int32_t lfe, int64_t now)
{
	int64_t l = log_end(p);
	if (f >= l) {
		if (now > r->last_caught_up_ms)
			r->last_caught_up_ms = now;
	} else if (f >= r->last_fetch_leader_leo) {
		if (r->last_fetch_ms > r->last_caught_up_ms)
			r->last_caught_up_ms = r->last_fetch_ms;
	}
	if (l > r->last_fetch_leader_leo)
		r->last_fetch_leader_leo = l;
	r->last_fetch_ms = now;
	r->leo = f;
	r->last_fetched_epoch = lfe;
	maybe_expand_isr(p, r, now);
	/* HW now, as Kafka's fetch handler; watchers complete in the next poll,
	 * so an ISR change delivered in between is seen by them (the
	 * NotEnoughReplicasAfterAppend window) */
	hw_part_maybe_increment_hw(p, now);
}

void hw_part_maybe_shrink_isr(hw_part *p, int64_t now_ms)
{
	if (p->role != HW_PART_LEADER || p->alter_in_flight)
		return;
	int64_t end = log_end(p);
	hw_idset n = { 0 };
	int out = 0;
	for (int i = 0; i < p->isr.n; i++) {
		int32_t id = p->isr.id[i];
		hw_replica_state *r = hw_part_rs(p, id);
		if (id != p->rm->cfg.node_id && r && r->leo != end &&
		    now_ms - r->last_caught_up_ms > p->rm->cfg.replica_lag_time_max_ms) {
			HW_LOG(INFO, "repl", "node %d " TPF " follower %d out of sync: leo %" PRId64
			       " leader leo %" PRId64 ", caught up %" PRId64 " ms ago",
			       p->rm->cfg.node_id, TPA(p), id, r->leo, end, now_ms - r->last_caught_up_ms);
			out++;
			continue;
		}
		n.id[n.n++] = id;
	}
	if (out)
		propose_isr(p, &n, "lagging followers", now_ms);
}

void hw_part_on_alter_resp(hw_part *p, const hw_alter_partition_resp *r, uint32_t corr)
{
	int32_t me = p->rm->cfg.node_id;
	char b1[64], b2[64];
	if (p->alter_in_flight != 1 || corr != p->alter_corr || p->role != HW_PART_LEADER)
		return; /* stale or duplicate response */
	switch (r->error) {
	case HW_ERR_NONE:
		break;
	case HW_ERR_INELIGIBLE_REPLICA:
	case HW_ERR_OPERATION_NOT_ATTEMPTED:
		HW_LOG(INFO, "repl", "node %d " TPF " AlterPartition %s: revert to committed ISR", me,
		       TPA(p), hw_err_name(r->error));
		p->alter_in_flight = 0;
		return;
	case HW_ERR_FENCED_LEADER_EPOCH:
	case HW_ERR_INVALID_UPDATE_VERSION:
	case HW_ERR_UNKNOWN_TOPIC_OR_PARTITION:
	case HW_ERR_INVALID_REQUEST:
	case HW_ERR_NEW_LEADER_ELECTED:
		HW_LOG(INFO, "repl", "node %d " TPF " AlterPartition %s: pending until new metadata",
		       me, TPA(p), hw_err_name(r->error));
		p->alter_in_flight = 2;
		return;
	default:
		HW_LOG(INFO, "repl", "node %d " TPF " AlterPartition %s: retry", me, TPA(p),
		       hw_err_name(r->error));
		p->alter_retry_ms = INT64_MIN / 2; /* resend on the next poll */
		return;
	}
	if (r->leader_epoch != p->leader_epoch || r->partition_epoch < p->partition_epoch ||
	    !hw_idset_valid(&r->isr) || !hw_idset_has(&r->isr, me)) {
		HW_LOG(INFO, "repl", "node %d " TPF " AlterPartition response for le %d pe %d ignored",
		       me, TPA(p), r->leader_epoch, r->partition_epoch);
		p->alter_in_flight = 2;
		return;
	}
	if (r->isr.n < p->isr.n)
		p->m[HW_PM_ISR_SHRINKS]++;
	else if (r->isr.n > p->isr.n)
		p->m[HW_PM_ISR_EXPANDS]++;
	HW_LOG(INFO, "repl", "node %d " TPF " ISR %s -> %s committed, pe %d -> %d", me, TPA(p),
	       idset_str(&p->isr, b1, sizeof(b1)), idset_str(&r->isr, b2, sizeof(b2)),
	       p->partition_epoch, r->partition_epoch);
	HW_ASSERT(r->partition_epoch >= p->partition_epoch);
	p->isr = r->isr;
	p->partition_epoch = r->partition_epoch;
	p->alter_in_flight = 0;
	hw_part_update_gauges(p, rm_now_ms(p->rm));
	hw_part_maybe_increment_hw(p, rm_now_ms(p->rm));
	hw_rm_mark_dirty(p->rm, p);
}

void hw_part_retry_alter(hw_part *p, int64_t now_ms)
{
	if (p->alter_in_flight == 1 && now_ms >= p->alter_retry_ms) {
		hw_idset isr = p->alter_isr;
		send_alter(p, &isr, now_ms);
	}
}

void hw_part_update_gauges(hw_part *p, int64_t now_ms)
{
	int leader = p->role == HW_PART_LEADER;
	int emin = hw_part_effective_min_isr(p);
	p->m[HW_PM_UNDER_REPLICATED] = leader && p->isr.n < p->replicas.n;
	p->m[HW_PM_UNDER_MIN_ISR] = leader && p->isr.n < emin;
	p->m[HW_PM_AT_MIN_ISR] = leader && p->isr.n == emin;
	uint64_t lag_off = 0, lag_ms = 0;
	if (leader) {
		int64_t end = log_end(p);
		for (int i = 0; i < p->nrs; i++) {
			const hw_replica_state *r = &p->rs[i];
			int64_t lo = r->leo < 0 ? end : end - r->leo;
			int64_t lm = r->leo >= end ? 0 : now_ms - r->last_caught_up_ms;
			if (r->last_caught_up_ms == HW_NEVER_MS && r->leo < end)
				lm = now_ms;
			if (lo > 0 && (uint64_t)lo > lag_off)
				lag_off = (uint64_t)lo;
			if (lm > 0 && (uint64_t)lm > lag_ms)
				lag_ms = (uint64_t)lm;
		}
	}
	p->m[HW_PM_FOLLOWER_LAG_OFFSETS] = lag_off;
	p->m[HW_PM_FOLLOWER_LAG_MS] = lag_ms;
}

void hw_part_fill_info(hw_part *p, hw_rm_part_info *o, int64_t now_ms)
{
	memset(o, 0, sizeof(*o));
	hw_part_update_gauges(p, now_ms);
	o->tp = p->tp;
	memcpy(o->topic, p->topic, sizeof(o->topic));
	o->role = p->role;
	o->fetcher_state = p->fstate;
	o->leader = p->leader;
	o->leader_epoch = p->leader_epoch;
	o->partition_epoch = p->partition_epoch;
	o->leader_throttled = p->lthrottled;
	o->follower_throttled = p->fthrottled;
	o->follower_in_sync = p->f_in_sync;
	o->replicas = p->replicas;
	o->isr = p->isr;
	hw_part_maximal_isr(p, &o->maximal_isr);
	o->alter_in_flight = p->alter_in_flight != 0;
	o->elr = p->elr;
	o->last_known_elr = p->last_known_elr;
	o->min_insync_replicas = (int16_t)hw_part_effective_min_isr(p);
	o->leo = hw_part_leo(p);
	o->hw = p->hw;
	o->log_start = p->store ? p->store->ops->log_start_offset(p->store) : 0;
	o->leader_epoch_start_offset = p->leader_epoch_start_offset;
	if (p->role == HW_PART_LEADER) {
		int64_t end = log_end(p);
		o->n_followers = p->nrs;
		for (int i = 0; i < p->nrs; i++) {
			const hw_replica_state *r = &p->rs[i];
			hw_rm_follower_info *f = &o->followers[i];
			f->id = r->id;
			f->leo = r->leo;
			f->last_caught_up_ms = r->last_caught_up_ms;
			f->last_fetch_ms = r->last_fetch_ms;
			f->lag_offsets = r->leo < 0 ? end : end - r->leo;
			f->lag_ms = r->leo >= end ? 0 : now_ms - r->last_caught_up_ms;
			if (r->last_caught_up_ms == HW_NEVER_MS && r->leo < end)
				f->lag_ms = now_ms;
			f->last_fetched_epoch = r->last_fetched_epoch;
		}
	}
	memcpy(o->metrics, p->m, sizeof(o->metrics));
}

int hw_part_truncate(hw_part *p, int64_t off, const char *why)
{
	int64_t leo = log_end(p);
	if (off >= leo) {
		/* Nothing to cut, but epoch entries at/after the LEO (assigned when
		 * this replica led without appending) must go, or the follower keeps
		 * sending that epoch as last_fetched_epoch and diverges forever
		 * (Kafka's truncateTo does this). A store whose truncate_to is a
		 * plain no-op here keeps them; then re-assign the last real entry
		 * (assign drops every later one), or, for an empty log, restart it
		 * empty (which clears the cache). */
		hw_store *s = p->store;
		int rc = s->ops->truncate_to(s, leo);
		const hw_epoch_cache *c = s->ops->epochs(s);
		if (rc < 0 || c->n == 0 || c->v[c->n - 1].start_offset < leo)
			return rc;
		for (size_t i = c->n; i-- > 0;)
			if (c->v[i].start_offset < leo)
				return s->ops->assign_epoch(s, c->v[i].epoch, c->v[i].start_offset);
		if (leo == s->ops->log_start_offset(s))
			return s->ops->truncate_fully_and_start_at(s, leo);
		return 0;
	}
	int rc = p->store->ops->truncate_to(p->store, off);
	if (rc < 0) {
		p->m[HW_PM_STORE_ERRORS]++;
		HW_LOG(ERROR, "repl", "node %d " TPF " truncate to %" PRId64 " failed: %d",
		       p->rm->cfg.node_id, TPA(p), off, rc);
		return rc;
	}
	p->m[HW_PM_TRUNCATIONS]++;
	HW_LOG(INFO, "repl", "node %d " TPF " truncated %" PRId64 " -> %" PRId64 " (%s)",
	       p->rm->cfg.node_id, TPA(p), leo, log_end(p), why);
	if (p->hw > log_end(p))
		p->hw = log_end(p);
	hw_pidmap_rebuild(&p->pids, p->store);
	return 0;
}
