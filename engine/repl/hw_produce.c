/* hw_produce.c — the produce path on the leader (docs/replication.md#acks,
 * docs/replication.md#idempotent-producer, docs/replication.md#record-batches).
 *
 * Design note. A PRODUCE carries one partition's record set. In order, as
 * Kafka's ReplicaManager.appendRecords / Partition.appendRecordsToLeader /
 * UnifiedLog.append: the partition must be led here; acks must be 0, 1 or
 * -1; every batch is validated (framing, magic, CRC-32C, records, client
 * rules, size <= message.max.bytes) before anything else; acks=-1 with a
 * committed ISR below the effective min ISR is NOT_ENOUGH_REPLICAS and
 * nothing is written; the idempotent producer state is checked (an exact
 * retry of one of the last 5 batches returns the original offsets and
 * writes nothing; a gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch
 * INVALID_PRODUCER_EPOCH). Then the batches are copied to a scratch buffer,
 * offsets are assigned in place (baseOffset rewritten) and the leader epoch
 * stamped (partitionLeaderEpoch) — both outside the CRC — and appended.
 *
 * acks=0 gets no response. acks=1 is answered once the leader's own
 * durable end (hw_store.durable_end_offset: the write completed for the
 * page-cache policy, the fdatasync for fsync-before-ack) passes the record
 * — at once when it already has, else it parks a local DelayedProduce that
 * the replica manager re-checks as completions arrive; Kafka's acks=1 is
 * answered after the leader's synchronous append, so a crash of the leader
 * process never loses an acknowledged acks=1 record. acks=-1 parks a
 * DelayedProduce waiting for HW >= last offset + 1. It completes with NONE
 * when the maximal ISR still meets the minimum, NOT_ENOUGH_REPLICAS_AFTER_-
 * APPEND when it shrank (a race: the HW cannot advance under min ISR),
 * NOT_LEADER_OR_FOLLOWER when leadership is lost (forced), and
 * REQUEST_TIMED_OUT on the request's timeout. An acks=-1 NONE is only ever
 * sent with HW past the record (HW_ASSERT).
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

typedef struct delayed_produce {
	hw_dop op;
	hw_rm *rm;
	hw_part *p;
	int32_t leader_epoch;
	int32_t client;
	uint32_t corr;
	int64_t base_offset;
	int64_t required;        /* last offset + 1 */
	int16_t result;
	int local;               /* acks=1: wait for the leader's durable end only */
	hw_req_clock rq;         /* request timing (RemoteTime = the wait for the ISR) */
	/* acks=all stage timing asked for (hw_ptiming.h): rx, start, appended set */
	uint8_t timed;
	hw_pt_stamps ts;
} delayed_produce;

/* A timed answer's tags 8 and 9 (hw_ptiming.h). */
typedef struct timed_answer {
	hw_produce_timing t;
	uint8_t n_acks;
	hw_follower_ack acks[HW_MAX_RF - 1];
} timed_answer;

/* Answer request t (hw_rm_req_answer reports its timing), with the stage
 * timing when timing is not NULL. */
static void send_resp_timed(hw_rm *rm, const hw_req_clock *t, int32_t dst, uint32_t corr, hw_tp tp, int16_t err,
			    int64_t base, int64_t log_start, const timed_answer *timing)
{
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_PRODUCE_RESP;
	m.src = rm->cfg.node_id;
	m.dst = dst;
	m.correlation_id = corr;
	m.u.produce_resp.tp = tp;
	m.u.produce_resp.error = err;
	m.u.produce_resp.base_offset = err ? -1 : base;
	m.u.produce_resp.log_start_offset = log_start;
	if (timing) {
		m.u.produce_resp.has_timing = 1;
		m.u.produce_resp.timing = timing->t;
		m.u.produce_resp.n_acks = timing->n_acks;
		memcpy(m.u.produce_resp.acks, timing->acks, sizeof(timing->acks));
	}
	hw_rm_req_answer(rm, t, &m, err);
}

static void send_resp(hw_rm *rm, const hw_req_clock *t, int32_t dst, uint32_t corr, hw_tp tp, int16_t err,
		      int64_t base, int64_t log_start)
{
	send_resp_timed(rm, t, dst, corr, tp, err, base, log_start, NULL);
}

static uint32_t sat_ns(int64_t d) { return d <= 0 ? 0 : d >= (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d; }

/* The stages of timed produce d, completed now with HW move p->hw_move,
 * and every follower whose last fetch acknowledged it after its append
 * (hw_ptiming.h). */
static void dp_timing(delayed_produce *d, timed_answer *out)
{
	hw_part *p = d->p;
	memset(out, 0, sizeof(*out));
	d->ts.mv = p->hw_move;
	d->ts.done_ns = hw_clock_ns(d->rm->clock);
	hw_pt_compute(&d->ts, &out->t);
	out->n_acks = 0;
	for (int i = 0; i < p->nrs && out->n_acks < HW_MAX_RF - 1; i++) {
		const hw_replica_state *r = &p->rs[i];
		if (r->ack_offset < d->required || r->ack_rx_ns < d->ts.appended_ns)
			continue;
		out->acks[out->n_acks++] = (hw_follower_ack){ .id = r->id,
							      .ack_ns = sat_ns(r->ack_rx_ns - d->ts.appended_ns),
							      .write_ns = r->ack_write_ns };
	}
}

static int dp_try(hw_dop *op, int hint)
{
	(void)hint; /* one key */
	delayed_produce *d = (delayed_produce *)op;
	hw_part *p = d->p;
	if (p->role != HW_PART_LEADER || p->leader_epoch != d->leader_epoch) {
		d->result = HW_ERR_NOT_LEADER_OR_FOLLOWER;
		return 1;
	}
	if (d->local) {
		if (hw_part_leo(p) < d->required)
			return 0;
		d->result = HW_ERR_NONE;
		return 1;
	}
	if (p->hw < d->required)
		return 0;
	hw_idset max;
	hw_part_maximal_isr(p, &max);
	d->result = max.n >= hw_part_effective_min_isr(p) ? HW_ERR_NONE
							  : HW_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
	return 1;
}

static void dp_complete(hw_dop *op, int reason)
{
	delayed_produce *d = (delayed_produce *)op;
	hw_part *p = d->p;
	int16_t err = d->result;
	if (reason == HW_DOP_EXPIRED) {
		err = HW_ERR_REQUEST_TIMED_OUT;
		p->m[HW_PM_DELAYED_PRODUCE_EXPIRED]++;
	} else if (reason == HW_DOP_FORCED) {
		err = p->deleted ? HW_ERR_UNKNOWN_TOPIC_OR_PARTITION : HW_ERR_NOT_LEADER_OR_FOLLOWER;
	}
	if (err == HW_ERR_NONE && d->local)
		HW_ASSERT(hw_part_leo(p) >= d->required); /* acks=1: written first */
	else if (err == HW_ERR_NONE)
		HW_ASSERT(p->hw >= d->required); /* no acks=all ack before the HW passed it */
	else
		p->m[HW_PM_PRODUCE_ERRORS]++;
	timed_answer tm;
	if (d->timed) {
		d->rm->timed_waiting--;
		dp_timing(d, &tm);
	}
	send_resp_timed(d->rm, &d->rq, d->client, d->corr, p->tp, err, d->base_offset,
			p->store ? p->store->ops->log_start_offset(p->store) : 0, d->timed ? &tm : NULL);
}

static void dp_free(hw_dop *op) { free(op); }

static const hw_dop_ops dp_ops = { dp_try, dp_complete, dp_free };

/* A compacted log's records need keys (Kafka's LogValidator.validateKey:
 * "Compacted topic cannot accept message without key"): 1 if batch b
 * (validated) has a record without one. */
static int has_unkeyed(const uint8_t *b, uint32_t size)
{
	hw_record_iter it;
	hw_record rec;
	if (hw_record_iter_init(&it, b, size, 0) < 0)
		return 1;
	while (hw_record_iter_next(&it, &rec) == 1)
		if (!rec.key)
			return 1;
	return 0;
}

/* Validate a client record set (compact: the partition's log is
 * compacted, docs/compaction.md). Returns 0 or a Kafka error code. */
static int validate(int64_t max_bytes, const hw_produce_req *r, int compact, int *nbatches)
{
	hw_batch_iter it;
	hw_batch_hdr h;
	const uint8_t *b;
	int rc, n = 0;
	if (!r->records || r->records_len == 0)
		return HW_ERR_CORRUPT_MESSAGE;
	hw_batch_iter_init(&it, r->records, r->records_len, 0);
	while ((rc = hw_batch_iter_next(&it, &h, &b)) == 1) {
		int v = hw_batch_validate(b, h.size, &h, HW_BATCH_V_FULL | HW_BATCH_V_FROM_CLIENT);
		if (v < 0)
			return hw_batch_rc_kafka(v);
		if (hw_batch_check_size(&h, (uint64_t)max_bytes))
			return HW_ERR_MESSAGE_TOO_LARGE;
		if (compact && has_unkeyed(b, h.size))
			return HW_ERR_INVALID_RECORD;
		n++;
	}
	if (rc < 0)
		return hw_batch_rc_kafka(rc);
	if (hw_batch_iter_rest_bytes(&it) || n == 0)
		return HW_ERR_CORRUPT_MESSAGE;
	*nbatches = n;
	return 0;
}

/* Idempotence check over every producer batch. 0, a Kafka error, or
 * -1 with *dup filled when the first batch is an exact retry. */
static int check_producer(hw_part *p, const hw_produce_req *r, hw_pid_batch *dup)
{
	hw_batch_iter it;
	hw_batch_hdr h;
	int first = 1;
	hw_batch_iter_init(&it, r->records, r->records_len, 0);
	while (hw_batch_iter_next(&it, &h, NULL) == 1) {
		if (h.producer_id >= 0) {
			int c = hw_pidmap_check(&p->pids, h.producer_id, h.producer_epoch, h.base_sequence,
						hw_batch_last_sequence(&h), dup);
			if (c == HW_PID_INVALID_EPOCH)
				return HW_ERR_INVALID_PRODUCER_EPOCH;
			if (c == HW_PID_OUT_OF_ORDER)
				return HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
			if (c == HW_PID_DUPLICATE)
				return first ? -1 : HW_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
		}
		first = 0;
	}
	return 0;
}

static void park(hw_rm *rm, hw_part *p, const hw_msg *m, int64_t base, int64_t required, int local,
		 const hw_pt_stamps *ts)
{
	hw_req_clock rq = hw_rm_req_current(rm);
	delayed_produce *d = calloc(1, sizeof(*d));
	if (!d) {
		if (ts)
			rm->timed_waiting--; /* hw_produce_handle counted it */
		send_resp(rm, &rq, m->src, m->correlation_id, p->tp, HW_ERR_UNKNOWN_SERVER_ERROR, -1, 0);
		return;
	}
	hw_dop_init(&d->op, &dp_ops);
	d->rm = rm;
	d->p = p;
	d->leader_epoch = p->leader_epoch;
	d->client = m->src;
	d->corr = m->correlation_id;
	d->base_offset = base;
	d->required = required;
	d->local = local;
	d->result = HW_ERR_REQUEST_TIMED_OUT; /* Kafka presets the timeout error */
	d->rq = rq;
	if (ts) {
		d->timed = 1; /* owns the rm->timed_waiting count hw_produce_handle took */
		d->ts = *ts;
	}
	/* Kafka's acks=1 append is synchronous, inside LocalTime: the wait for
	 * our own write stays local; only the wait for the ISR is remote */
	if (!local)
		hw_rm_req_park(rm, &d->rq);
	p->m[HW_PM_DELAYED_PRODUCE]++;
	hw_purg_key *keys[1] = { &p->produce_key };
	int64_t to = m->u.produce.timeout_ms > 0 ? m->u.produce.timeout_ms : 0;
	hw_purg_try_complete_else_watch(rm->produce_purg, &d->op, rm_now_ms(rm) + to, keys, 1);
}

void hw_produce_handle(hw_rm *rm, const hw_msg *m)
{
	const hw_produce_req *r = &m->u.produce;
	hw_req_clock rq = hw_rm_req_current(rm);
	hw_part *p = hw_rm_find(rm, r->tp);
	int acks = r->acks;
	int err = 0;
	/* acks=all stage timing (hw_ptiming.h): only when asked */
	hw_pt_stamps ts, *tsp = NULL;
	if (r->want_timing && acks == -1) {
		tsp = &ts;
		ts.start_ns = rq.kind >= 0 ? rq.start_ns : hw_clock_ns(rm->clock);
		ts.rx_ns = rq.kind >= 0 ? rq.rx_ns : ts.start_ns;
		ts.appended_ns = ts.start_ns;
		/* counted from before the append, so a HW move the append itself
		 * causes is stamped too; park() hands the count to the delayed
		 * produce, every other exit gives it back */
		rm->timed_waiting++;
	}
	if (!p || p->role == HW_PART_NONE) {
		err = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
		goto fail;
	}
	p->m[HW_PM_PRODUCE_REQUESTS]++;
	if (p->role != HW_PART_LEADER) {
		err = p->store ? HW_ERR_NOT_LEADER_OR_FOLLOWER : HW_ERR_KAFKA_STORAGE_ERROR;
		goto fail;
	}
	if (acks != 0 && acks != 1 && acks != -1) {
		err = HW_ERR_INVALID_REQUIRED_ACKS;
		goto fail;
	}
	int nb = 0;
	/* max.message.bytes: the topic's, else the broker's message.max.bytes */
	int64_t max_bytes = p->max_message_bytes >= 0 ? p->max_message_bytes : rm->cfg.message_max_bytes;
	err = validate(max_bytes, r, p->store && p->store->ops->compacted && p->store->ops->compacted(p->store), &nb);
	if (err)
		goto fail;
	if (acks == -1 && p->isr.n < hw_part_effective_min_isr(p)) {
		err = HW_ERR_NOT_ENOUGH_REPLICAS; /* checked before anything is written */
		goto fail;
	}
	hw_pid_batch dup;
	int c = check_producer(p, r, &dup);
	if (c > 0) {
		err = c;
		goto fail;
	}
	int64_t base, required;
	if (c < 0) {
		/* exact retry: original offsets, nothing written, no error */
		p->m[HW_PM_PRODUCE_DUPLICATES]++;
		base = dup.first_off;
		required = dup.last_off + 1;
		HW_LOG(DEBUG, "repl", "node %d %u-%u duplicate batch: offsets %" PRId64 "..%" PRId64,
		       rm->cfg.node_id, p->tp.topic_id, p->tp.partition, dup.first_off, dup.last_off);
	} else {
		uint8_t *buf = hw_rm_scratch((void **)&rm->scratch, &rm->scratch_cap, r->records_len);
		if (!buf) {
			err = HW_ERR_UNKNOWN_SERVER_ERROR;
			goto fail;
		}
		memcpy(buf, r->records, r->records_len);
		int64_t next = p->store->ops->log_end_offset(p->store);
		base = next;
		hw_batch_iter it;
		hw_batch_hdr h;
		const uint8_t *bp;
		hw_batch_iter_init(&it, buf, r->records_len, 0);
		while (hw_batch_iter_next(&it, &h, &bp) == 1) {
			uint8_t *w = buf + (bp - buf);
			hw_batch_set_base_offset(w, next);
			hw_batch_set_leader_epoch(w, p->leader_epoch);
			next += (int64_t)h.last_offset_delta + 1;
		}
		/* validate() checked every batch's CRC; base offset and leader
		 * epoch set above lie outside the CRC'd range */
		int rc = hw_store_append_validated(p->store, buf, r->records_len);
		if (rc < 0) {
			p->m[HW_PM_STORE_ERRORS]++;
			if (rc == -EMSGSIZE) {
				/* a batch larger than log.segment.bytes: Kafka's
				 * RecordBatchTooLargeException, the client's fault */
				err = HW_ERR_RECORD_LIST_TOO_LARGE;
				goto fail;
			}
			HW_LOG(ERROR, "repl", "node %d %u-%u append failed: %d", rm->cfg.node_id,
			       p->tp.topic_id, p->tp.partition, rc);
			if (rc == -EIO || rc == -ENOSPC)
				hw_part_store_failed(p, rc, "an append");
			err = HW_ERR_KAFKA_STORAGE_ERROR;
			goto fail;
		}
		if (tsp)
			ts.appended_ns = hw_clock_ns(rm->clock);
		hw_pidmap_apply_batches(&p->pids, buf, r->records_len);
		p->m[HW_PM_PRODUCE_RECORDS_BATCHES] += (uint64_t)nb;
		p->m[HW_PM_PRODUCE_BYTES] += r->records_len;
		required = next;
		p->leo_changed = 1;
		hw_rm_mark_dirty(rm, p);
		hw_part_maybe_increment_hw(p, rm_now_ms(rm));
	}
	if (acks == 0) {
		hw_rm_req_answer(rm, &rq, NULL, HW_ERR_NONE); /* timed, no response */
		return;
	}
	if (acks == 1) {
		if (hw_part_leo(p) >= required) {
			send_resp(rm, &rq, m->src, m->correlation_id, p->tp, HW_ERR_NONE, base,
				  p->store->ops->log_start_offset(p->store));
			return;
		}
		park(rm, p, m, base, required, 1, NULL);
		return;
	}
	park(rm, p, m, base, required, 0, tsp);
	return;
fail:
	if (tsp)
		rm->timed_waiting--;
	if (p)
		p->m[HW_PM_PRODUCE_ERRORS]++;
	if (acks != 0)
		send_resp(rm, &rq, m->src, m->correlation_id, r->tp, (int16_t)err, -1, 0);
	else
		hw_rm_req_answer(rm, &rq, NULL, (int16_t)err);
}
