/* hw_fetch.c — the leader's fetch path, DelayedFetch and
 * OffsetsForLeaderEpoch (docs/replication.md#fetch,
 * docs/replication.md#truncation-by-leader-epoch).
 *
 * Design note. One FETCH names many partitions. Per partition the leader
 * checks leadership and the KIP-320 epoch (current_leader_epoch lower ->
 * FENCED_LEADER_EPOCH, higher -> UNKNOWN_LEADER_EPOCH, -1 unchecked). A
 * follower (replica_id >= 0) fetch is also an acknowledgement: unless the
 * follower's last_fetched_epoch shows a diverging log (then the response
 * carries DivergingEpoch{epoch, end offset} and no records, and the
 * follower's state is not touched), its fetch offset becomes its LEO on the
 * leader (lastCaughtUp rule, ISR expand, HW recomputed in the next poll).
 * Followers read up to the LEO, consumers strictly below the HW; a consumer
 * offset in (HW, LEO] gets an empty answer, one beyond the LEO or below the
 * log start OFFSET_OUT_OF_RANGE. The HW put in a response is the one before
 * this fetch's effect, as in Kafka (the follower learns an advance one fetch
 * later).
 *
 * Fetch from the closest replica (KIP-392, docs/racks.md): a consumer fetch
 * that names its rack may be answered by the leader with a preferred read
 * replica instead of records (hw_select.c), and is served by a follower in
 * the ISR of its partition state, strictly below the follower's own HW.
 *
 * Long polling: answered at once when max_wait <= 0, min_bytes are there,
 * or any partition has an error or a divergence; otherwise a DelayedFetch
 * watches every partition's fetch key until enough bytes accumulate below
 * the end offset (LEO for followers, HW for consumers; capped per partition
 * at partition_max_bytes), the partition changes leadership/epoch
 * (forced), or max_wait passes. On completion it re-reads and answers with
 * whatever exists, without touching follower state again.
 *
 * Responses respect partition_max_bytes and the response max_bytes, but
 * always carry at least one whole batch for the first partition with data
 * (Kafka's progress guarantee). To keep many-partition follower responses
 * small, a follower response omits partitions with nothing new — no
 * records, no error, HW unchanged since the last response to that replica —
 * and re-sends the HW at least once a second in case a datagram was lost
 * (a simple form of KIP-227 incremental fetch).
 *
 * Replication throttle, leader side (Kafka ReplicaManager
 * shouldLeaderThrottle / KafkaApis sizeOfThrottledPartitions): for a
 * partition our leader quota covers (PARTITION_STATE leader_throttled), a
 * follower outside the ISR gets no records while the quota is exceeded —
 * only HW and log start, so it keeps fetching — and such bytes do not count
 * toward a parked fetch's min_bytes (it waits out max_wait instead of
 * spinning). The quota is checked once per response, before reading; after
 * sending, every record byte of covered partitions sent to any follower
 * (in the ISR or not) is recorded against it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "hw_assert.h"
#include "hw_batch.h"
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_repl_int.h"

#define HW_HW_REFRESH_MS 1000

typedef struct fpart {
	hw_part *p;              /* NULL: unknown partition */
	hw_fetch_part req;
	int16_t err;
	int32_t div_epoch;
	int64_t div_end;
	int32_t leader_epoch;    /* the partition's epoch when the fetch arrived */
	int64_t hw_snap;         /* HW before this fetch's effect (immediate answers), -1 */
	uint8_t follower_read;   /* a consumer fetch a follower may serve (it names its rack) */
	int32_t preferred;       /* leader: answer "read from this replica" (>= 0), -1 none */
} fpart;

typedef struct delayed_fetch {
	hw_dop op;
	hw_rm *rm;
	int32_t src;
	uint32_t corr;
	int32_t replica_id;
	int32_t min_bytes, max_bytes;
	uint16_t n;
	uint16_t *keyidx;        /* watch key index -> parts index */
	hw_req_clock rq;         /* request timing (RemoteTime = the wait here) */
	fpart parts[];
} delayed_fetch;

/* acks=all stage timing (hw_ptiming.h): a HW move while this follower
 * fetch is handled is rs's, with the turnaround the fetch reports. */
static void timing_begin(hw_rm *rm, hw_replica_state *rs, const hw_fetch_req *r, int64_t fetch_offset)
{
	rm->timing_rs = rs;
	rm->timing_fetch_rx_ns = rm->cur ? rm->cur->rx_ns : hw_clock_ns(rm->clock);
	rm->timing_turn_write_ns = r->has_turnaround ? r->turn_write_ns : 0;
	rm->timing_turn_send_ns = r->has_turnaround ? r->turn_send_ns : 0;
	rs->ack_rx_ns = rm->timing_fetch_rx_ns;
	rs->ack_offset = fetch_offset;
	rs->ack_write_ns = rm->timing_turn_write_ns;
}

int hw_part_check_epoch(const hw_part *p, int32_t cle)
{
	if (cle < 0)
		return 0;
	if (cle < p->leader_epoch)
		return HW_ERR_FENCED_LEADER_EPOCH;
	if (cle > p->leader_epoch)
		return HW_ERR_UNKNOWN_LEADER_EPOCH;
	return 0;
}

/* Errors that do not depend on the offset. A follower serves a consumer
 * fetch that names its rack (follower_read, Kafka Fetch v11+) while it is
 * in the ISR its partition state shows; out of it the consumer is sent
 * back to the leader with NOT_LEADER_OR_FOLLOWER (docs/racks.md). */
static int part_error_as(hw_part *p, int32_t cle, int follower_read)
{
	if (!p || p->role == HW_PART_NONE)
		return HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
	if (p->role == HW_PART_FOLLOWER && follower_read && p->store) {
		if (!hw_idset_has(&p->isr, p->rm->cfg.node_id))
			return HW_ERR_NOT_LEADER_OR_FOLLOWER;
		return hw_part_check_epoch(p, cle);
	}
	if (p->role != HW_PART_LEADER)
		return p->store ? HW_ERR_NOT_LEADER_OR_FOLLOWER : HW_ERR_KAFKA_STORAGE_ERROR;
	return hw_part_check_epoch(p, cle);
}

static int part_error(hw_part *p, int32_t cle)
{
	return part_error_as(p, cle, 0);
}

static int fpart_error(const fpart *f)
{
	return part_error_as(f->p, f->req.current_leader_epoch, f->follower_read);
}

/* docs/security.md "Faults": the batches a fetch serves are CRC-checked
 * (hw_batch_iter, SSE4.2 CRC-32C); r is cut to the whole valid prefix. A
 * corrupt batch is counted, logged once per offset with the partition, and
 * never sent: 0 means the first batch itself is corrupt (answered
 * CORRUPT_MESSAGE, so a follower backs off instead of refetching at once). */
static size_t served_prefix(hw_part *p, hw_store_read *r, int64_t fetch_offset)
{
	hw_batch_iter it;
	hw_batch_hdr h;
	hw_batch_iter_init(&it, r->data, r->len, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED);
	while (hw_batch_iter_next(&it, &h, NULL) == 1)
		;
	if (it.rc >= 0)
		return r->len;
	size_t good = hw_batch_iter_whole_bytes(&it);
	if (good == 0) {
		p->m[HW_PM_CORRUPT_BATCHES]++;
		if (p->corrupt_logged_plus1 != fetch_offset + 1) {
			p->corrupt_logged_plus1 = fetch_offset + 1;
			HW_LOG(ERROR, "repl", "node %d %s-%u (topic id %u): corrupt batch at offset %" PRId64
			       " (%s) found while serving a fetch: answered CORRUPT_MESSAGE",
			       p->rm->cfg.node_id, p->topic, p->tp.partition, p->tp.topic_id, fetch_offset,
			       hw_batch_rc_name(it.rc));
		}
	}
	r->len = good;
	return good;
}

/* acks=all stage timing (hw_ptiming.h): the response just sent to follower
 * replica_id is the one its next fetch acknowledges. */
static void stamp_resp_sent(hw_rm *rm, int32_t replica_id, const hw_fetch_resp_part *rp, uint16_t k,
			    int64_t begin_ns)
{
	int64_t now = hw_clock_ns(rm->clock);
	for (uint16_t i = 0; i < k; i++) {
		hw_part *p = hw_rm_find(rm, rp[i].tp);
		hw_replica_state *rs = p ? hw_part_rs(p, replica_id) : NULL;
		if (rs) {
			rs->resp_begin_ns = begin_ns;
			rs->resp_sent_ns = now;
		}
	}
}

/* Build and send the response to request t. Returns the record bytes sent. */
static size_t respond(hw_rm *rm, const hw_req_clock *t, int32_t dst, uint32_t corr, int32_t replica_id,
		      int32_t max_bytes, fpart *fp, uint16_t n, int64_t now_ms)
{
	hw_fetch_resp_part *rp = hw_rm_scratch(&rm->rscratch, &rm->rscratch_cap,
					       (size_t)(n ? n : 1) * sizeof(*rp));
	if (!rp)
		return 0;
	int follower = replica_id >= 0;
	/* acks=all stage timing (hw_ptiming.h): when answering began */
	int64_t begin_ns = follower && rm->timed_waiting ? hw_clock_ns(rm->clock) : 0;
	int64_t budget = max_bytes > 0 ? max_bytes : INT32_MAX;
	size_t total = 0;
	uint16_t n_pref = 0;
	for (uint16_t i = 0; i < n; i++)
		n_pref += fp[i].preferred >= 0;
	hw_fetch_preferred *pref = n_pref ? hw_rm_scratch((void **)&rm->pscratch, &rm->pscratch_cap,
							   (size_t)n_pref * sizeof(*pref)) : NULL;
	if (n_pref && !pref)
		return 0;
	n_pref = 0;
	int64_t throttled_bytes = 0;
	int quota_exceeded = follower && hw_quota_exceeded(&rm->leader_quota, now_ms);
	uint16_t k = 0;
	for (uint16_t i = 0; i < n; i++) {
		fpart *f = &fp[i];
		hw_part *p = f->p;
		hw_fetch_resp_part *o = &rp[k];
		memset(o, 0, sizeof(*o));
		o->tp = f->req.tp;
		o->diverging_epoch = -1;
		o->diverging_end_offset = -1;
		o->high_watermark = -1;
		o->log_start_offset = -1;
		o->leader_id = p ? p->leader : -1;
		o->leader_epoch = p ? p->leader_epoch : -1;
		int16_t err = f->err;
		if (!err)
			err = (int16_t)fpart_error(f);
		if (!err && p->leader_epoch != f->leader_epoch)
			err = HW_ERR_NOT_LEADER_OR_FOLLOWER; /* leadership changed while parked */
		if (err) {
			o->error = err;
			k++;
			continue;
		}
		hw_store *s = p->store;
		o->high_watermark = f->hw_snap >= 0 ? f->hw_snap : p->hw;
		o->log_start_offset = s->ops->log_start_offset(s);

		if (f->div_epoch >= 0) {
			o->diverging_epoch = f->div_epoch;
			o->diverging_end_offset = f->div_end;
			k++;
			continue;
		}
		if (f->preferred >= 0) {
			/* Kafka: a preferred read replica is answered without
			 * records; the consumer fetches from it next */
			pref[n_pref].tp = o->tp;
			pref[n_pref++].replica = f->preferred;
			p->m[HW_PM_PREFERRED_READ_REPLICA]++;
			k++;
			continue;
		}
		int64_t end = follower ? INT64_MAX : p->hw;
		int64_t leo = s->ops->log_end_offset(s);
		if (f->req.fetch_offset < o->log_start_offset || f->req.fetch_offset > leo) {
			o->error = HW_ERR_OFFSET_OUT_OF_RANGE;
			k++;
			continue;
		}
		int has_data = f->req.fetch_offset < (follower ? leo : p->hw);
		if (has_data && follower && p->lthrottled && quota_exceeded &&
		    !hw_idset_has(&p->isr, replica_id)) {
			p->m[HW_PM_LEADER_THROTTLED]++; /* catch-up held back: HW only */
			has_data = 0;
		}
		if (budget > 0 && has_data) {
			int64_t pmax = f->req.partition_max_bytes > 0 ? f->req.partition_max_bytes : 1;
			if (pmax > budget)
				pmax = budget;
			hw_store_read r;
			int rc = s->ops->read(s, f->req.fetch_offset, (size_t)pmax, end, &r);
			if (rc == 0 && r.len > 0 && served_prefix(p, &r, f->req.fetch_offset) == 0) {
				o->error = HW_ERR_CORRUPT_MESSAGE;   /* the next batch fails its CRC */
				if (r.ref && s->ops->release)
					s->ops->release(s, r.ref);
			} else if (rc == 0 && r.len > 0) {
				if (total > 0 && (int64_t)r.len > budget) {
					/* only the first partition with data may exceed the budget */
					if (r.ref && s->ops->release)
						s->ops->release(s, r.ref);
				} else {
					o->records = r.data;
					o->records_len = (uint32_t)r.len;
					o->records_ref = r.ref;
					budget -= (int64_t)r.len;
					total += r.len;
					if (follower && p->lthrottled) {
						throttled_bytes += (int64_t)r.len;
						p->m[HW_PM_LEADER_THROTTLED_BYTES] += r.len;
					}
				}
			} else if (rc < 0) {
				o->error = rc == -ERANGE ? HW_ERR_OFFSET_OUT_OF_RANGE : HW_ERR_KAFKA_STORAGE_ERROR;
			}
		}
		if (follower) {
			hw_replica_state *rs = hw_part_rs(p, replica_id);
			if (!o->records_len && !o->error && rs && rs->last_sent_hw == p->hw &&
			    now_ms - rs->last_sent_hw_ms < HW_HW_REFRESH_MS)
				continue; /* nothing new for this replica: omit */
			if (rs) {
				rs->last_sent_hw = p->hw;
				rs->last_sent_hw_ms = now_ms;
			}
		}
		k++;
	}
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_FETCH_RESP;
	m.src = rm->cfg.node_id;
	m.dst = dst;
	m.correlation_id = corr;
	m.u.fetch_resp.error = 0;
	m.u.fetch_resp.n_parts = k;
	m.u.fetch_resp.parts = rp;
	int timing = follower && rm->timed_waiting;
	m.u.fetch_resp.want_turnaround = (uint8_t)timing;
	m.u.fetch_resp.n_preferred = n_pref;
	m.u.fetch_resp.preferred = pref;
	hw_rm_req_answer(rm, t, &m, 0);
	if (timing)
		stamp_resp_sent(rm, replica_id, rp, k, begin_ns ? begin_ns : hw_clock_ns(rm->clock));
	if (throttled_bytes)
		hw_quota_record(&rm->leader_quota, throttled_bytes, now_ms);
	for (uint16_t i = 0; i < k; i++) {
		if (rp[i].records_ref) {
			hw_part *p = hw_rm_find(rm, rp[i].tp);
			if (p && p->store && p->store->ops->release)
				p->store->ops->release(p->store, rp[i].records_ref);
		}
	}
	return total;
}

/* DelayedFetch.tryComplete for one partition: 1 = force completion,
 * otherwise adds the bytes available below the end offset to *acc. */
static int df_part(delayed_fetch *d, fpart *f, int64_t *acc)
{
	hw_part *p = f->p;
	if (f->err || !p)
		return 0;
	if (fpart_error(f) || p->leader_epoch != f->leader_epoch)
		return 1; /* not leader (or serving follower) any more / fenced: force completion */
	hw_store *s = p->store;
	int64_t leo = s->ops->log_end_offset(s);
	if (f->req.fetch_offset > leo)
		return 1; /* truncated leader */
	int64_t end = d->replica_id >= 0 ? leo : p->hw;
	if (end <= f->req.fetch_offset)
		return 0;
	if (d->replica_id >= 0 && p->lthrottled && !hw_idset_has(&p->isr, d->replica_id) &&
	    hw_quota_exceeded(&d->rm->leader_quota, rm_now_ms(d->rm)))
		return 0; /* throttled catch-up bytes do not satisfy min_bytes */
	if (d->min_bytes <= 1) {
		*acc += 1;
		return 0;
	}
	hw_store_read r;
	size_t pmax = f->req.partition_max_bytes > 0 ? (size_t)f->req.partition_max_bytes : 1;
	if (s->ops->read(s, f->req.fetch_offset, pmax, end, &r) == 0) {
		*acc += (int64_t)(r.len < pmax ? r.len : pmax);
		if (r.ref && s->ops->release)
			s->ops->release(s, r.ref);
	}
	return 0;
}

static int df_try(hw_dop *op, int hint)
{
	delayed_fetch *d = (delayed_fetch *)op;
	int64_t acc = 0;
	/* With min_bytes <= 1 one partition with data suffices, and every
	 * partition change wakes its own key, so the changed one is enough. */
	if (hint >= 0 && hint < d->n && d->min_bytes <= 1) {
		if (df_part(d, &d->parts[d->keyidx[hint]], &acc))
			return 1;
		return acc >= 1;
	}
	for (uint16_t i = 0; i < d->n; i++) {
		if (df_part(d, &d->parts[i], &acc))
			return 1;
		if (acc >= (d->min_bytes > 1 ? d->min_bytes : 1))
			return 1;
	}
	return 0;
}

static void df_complete(hw_dop *op, int reason)
{
	delayed_fetch *d = (delayed_fetch *)op;
	if (reason == HW_DOP_EXPIRED)
		for (uint16_t i = 0; i < d->n; i++)
			if (d->parts[i].p)
				d->parts[i].p->m[HW_PM_DELAYED_FETCH_EXPIRED]++;
	respond(d->rm, &d->rq, d->src, d->corr, d->replica_id, d->max_bytes, d->parts, d->n,
		rm_now_ms(d->rm));
}

static void df_free(hw_dop *op)
{
	free(((delayed_fetch *)op)->keyidx);
	free(op);
}

static const hw_dop_ops df_ops = { df_try, df_complete, df_free };

void hw_fetch_handle(hw_rm *rm, const hw_msg *m)
{
	const hw_fetch_req *r = &m->u.fetch;
	int64_t now = rm_now_ms(rm);
	int follower = r->replica_id >= 0;
	if (r->n_parts && !r->parts) {
		rm->dropped_malformed++;
		return;
	}
	if (follower && m->src != r->replica_id) {
		/* a follower fetch is an acknowledgement: only the replica itself
		 * may send one (docs/security.md "Sender identity") */
		hw_rm_count_reject(rm, HW_RM_REJECT_REPLICA_NOT_SENDER, m);
		return;
	}
	delayed_fetch *d = malloc(sizeof(*d) + (size_t)r->n_parts * sizeof(fpart));
	if (!d)
		return;
	hw_dop_init(&d->op, &df_ops);
	d->rm = rm;
	d->src = m->src;
	d->corr = m->correlation_id;
	d->replica_id = r->replica_id;
	d->min_bytes = r->min_bytes;
	d->max_bytes = r->max_bytes;
	d->n = r->n_parts;
	d->keyidx = NULL;
	d->rq = hw_rm_req_current(rm);
	int immediate = r->max_wait_ms <= 0 || r->n_parts == 0;
	for (uint16_t i = 0; i < r->n_parts; i++) {
		fpart *f = &d->parts[i];
		const hw_fetch_part *q = &r->parts[i];
		hw_part *p = hw_rm_find(rm, q->tp);
		f->p = p;
		f->req = *q;
		f->div_epoch = -1;
		f->div_end = -1;
		f->leader_epoch = p ? p->leader_epoch : -1;
		f->hw_snap = p ? p->hw : -1;
		f->follower_read = !follower && r->rack_id[0];
		f->preferred = -1;
		f->err = (int16_t)fpart_error(f);
		if (p)
			p->m[follower ? HW_PM_FOLLOWER_FETCHES : HW_PM_CONSUMER_FETCHES]++;
		if (p && !f->err && !follower && p->role == HW_PART_FOLLOWER)
			p->m[HW_PM_CONSUMER_FETCHES_AS_FOLLOWER]++;
		if (!f->err && follower && !hw_idset_has(&p->replicas, r->replica_id))
			f->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
		hw_replica_state *rs = !f->err && follower ? hw_part_rs(p, r->replica_id) : NULL;
		if (rs && (r->replica_epoch < rs->broker_epoch ||
			   r->replica_epoch < hw_part_registered_epoch(p, r->replica_id))) {
			/* an older incarnation of the replica than its newest
			 * fetches carried or than the controller registered
			 * (Kafka's ReplicaState.replicaEpoch check; a fenced and
			 * re-registered broker): no acknowledgement, and no word
			 * about the log (checked before the offsets) */
			hw_rm_count_reject(rm, HW_RM_REJECT_STALE_BROKER_EPOCH, m);
			f->err = HW_ERR_STALE_BROKER_EPOCH;
		}
		if (f->err) {
			if (p)
				p->m[HW_PM_FETCH_ERRORS]++;
			immediate = 1;
			continue;
		}
		hw_store *s = p->store;
		int64_t leo = s->ops->log_end_offset(s);
		if (follower && q->last_fetched_epoch >= 0) {
			int32_t e;
			int64_t end;
			hw_epoch_end_offset_for(s->ops->epochs(s), q->last_fetched_epoch, leo, &e, &end);
			if (e < 0 || end < 0) {
				f->err = HW_ERR_OFFSET_OUT_OF_RANGE;
				immediate = 1;
				continue;
			}
			if (e < q->last_fetched_epoch || end < q->fetch_offset) {
				f->div_epoch = e;
				f->div_end = end;
				immediate = 1;
				continue; /* no follower-state update for a diverging fetch */
			}
		}
		if (q->fetch_offset < s->ops->log_start_offset(s) || q->fetch_offset > leo) {
			/* respond() reports OFFSET_OUT_OF_RANGE with HW and log start */
			p->m[HW_PM_FETCH_ERRORS]++;
			immediate = 1;
			continue;
		}
		if (f->follower_read &&
		    (f->preferred = hw_select_read_replica(rm, p, r->rack_id, q->fetch_offset, now)) >= 0) {
			immediate = 1;
			continue;
		}
		if (rs) {
			rs->broker_epoch = r->replica_epoch;
			if (rm->timed_waiting)
				timing_begin(rm, rs, r, q->fetch_offset);
			hw_part_update_follower(p, rs, q->fetch_offset, q->last_fetched_epoch, now);
			rm->timing_rs = NULL;
		}
	}
	if (!immediate) {
		/* answer now if min_bytes are already there; a parked fetch reports
		 * the HW current at completion */
		for (uint16_t i = 0; i < d->n; i++)
			d->parts[i].hw_snap = -1;
		d->op.purg = rm->fetch_purg;
		hw_purg_key *stack_keys[16];
		hw_purg_key **keys = d->n <= 16 ? stack_keys : malloc(d->n * sizeof(*keys));
		d->keyidx = malloc((d->n ? d->n : 1) * sizeof(*d->keyidx));
		if (keys && d->keyidx) {
			int nk = 0;
			for (uint16_t i = 0; i < d->n; i++)
				if (d->parts[i].p) {
					d->keyidx[nk] = i;
					keys[nk++] = &d->parts[i].p->fetch_key;
				}
			for (uint16_t i = 0; i < d->n; i++)
				if (d->parts[i].p)
					d->parts[i].p->m[HW_PM_DELAYED_FETCH]++;
			hw_rm_req_park(rm, &d->rq);
			hw_purg_try_complete_else_watch(rm->fetch_purg, &d->op, now + r->max_wait_ms,
							keys, nk);
			if (keys != stack_keys)
				free(keys);
			return;
		}
		if (keys && keys != stack_keys)
			free(keys);
	}
	respond(rm, &d->rq, m->src, m->correlation_id, r->replica_id, r->max_bytes, d->parts, d->n, now);
	free(d->keyidx);
	free(d);
}

void hw_ofe_handle(hw_rm *rm, const hw_msg *m)
{
	const hw_ofe_req *r = &m->u.ofe;
	if (r->n_parts && !r->parts) {
		rm->dropped_malformed++;
		return;
	}
	hw_ofe_resp_part *rp = hw_rm_scratch(&rm->rscratch, &rm->rscratch_cap,
					     (size_t)(r->n_parts ? r->n_parts : 1) * sizeof(*rp));
	if (!rp)
		return;
	for (uint16_t i = 0; i < r->n_parts; i++) {
		const hw_ofe_part *q = &r->parts[i];
		hw_part *p = hw_rm_find(rm, q->tp);
		hw_ofe_resp_part *o = &rp[i];
		o->tp = q->tp;
		o->leader_epoch = -1;
		o->end_offset = -1;
		o->error = (int16_t)part_error(p, q->current_leader_epoch);
		if (o->error)
			continue;
		hw_store *s = p->store;
		hw_epoch_end_offset_for(s->ops->epochs(s), q->leader_epoch, s->ops->log_end_offset(s),
					&o->leader_epoch, &o->end_offset);
	}
	hw_msg out;
	memset(&out, 0, sizeof(out));
	out.type = HW_MSG_OFFSETS_FOR_EPOCH_RESP;
	out.src = rm->cfg.node_id;
	out.dst = m->src;
	out.correlation_id = m->correlation_id;
	out.u.ofe_resp.n_parts = r->n_parts;
	out.u.ofe_resp.parts = rp;
	hw_rm_send(rm, &out);
}
