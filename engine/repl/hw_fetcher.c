/* hw_fetcher.c — the follower fetcher (Kafka AbstractFetcherThread /
 * ReplicaFetcherThread), as a state machine per partition plus one fetch
 * session per leader.
 *
 * Design note. When a partition becomes a follower it enters FETCHING: as
 * Kafka >= 2.7 (Fetch v12+, KIP-320/595) reconciliation with the leader
 * happens on the fetch path itself — each fetch carries the follower's LEO
 * (its acknowledgement) and the epoch of its last batch; a leader that
 * finds the follower's log diverged answers DivergingEpoch{epoch, end}, and
 * the follower truncates as AbstractFetcherThread.getOffsetTruncationState
 * does (docs/replication.md#truncation-by-leader-epoch, the same rule as
 * the KIP-101/279 OffsetsForLeaderEpoch round trip): if its own end for
 * that epoch is the leader's epoch it
 * truncates to min(own end, leader end, LEO); if its largest epoch <= the
 * leader's differs it truncates to min(own end, LEO) and fetches again
 * (another round); with no epoch at all to min(leader end, LEO); and for an
 * undefined leader answer to its HW. A follower with an empty epoch cache
 * but a non-empty log starts from its HW (RM.initialFetchOffset).
 *
 * With truncate_via_offsets_for_epoch the older KIP-101/279 flow is used
 * instead: a new follower with leader epochs enters TRUNCATING and asks the
 * leader OffsetsForLeaderEpoch(latest local epoch); the answer goes through
 * the same truncation rule, another round is asked while the local epoch
 * differs, then FETCHING (unanswered requests are re-sent).
 *
 * One fetch is outstanding per leader, covering all partitions followed
 * from it; the next is sent by the poll right after a response is
 * processed. Datagrams can be lost, so an unanswered fetch is re-sent after
 * fetch_request_timeout_ms (counted; a fetch the transport refused is not
 * unanswered but unsent: see "Refused sends" below); a response the transport split into
 * several frames is taken frame by frame, the next fetch going out after
 * the last one. Each response part is appended (only
 * whole batches that start exactly at our LEO: duplicates and stale
 * responses are dropped), then the follower's HW = leader HW clamped to its
 * own LEO. Errors: FENCED_LEADER_EPOCH parks the partition in FAILED until
 * new metadata; OFFSET_OUT_OF_RANGE truncates (to the leader's log start if
 * we are below it, else to our HW); other errors back the partition off for
 * replica.fetch.backoff.ms (BACKOFF), a top-level error the whole session.
 *
 * Replication throttle, follower side (Kafka ReplicaFetcherThread
 * shouldFollowerThrottle): a partition our follower quota covers
 * (PARTITION_STATE follower_throttled) is left out of a fetch while the
 * quota is exceeded and the partition is not in sync — in sync meaning, as
 * Kafka's fetch-state lag, that our LEO reached the leader's HW in the last
 * response (unknown, so not in sync, after a leader change). A session
 * whose only partitions are held back re-checks when the quota will have
 * freed up (hw_quota_wait_ms), at the latest after replica.fetch.backoff.ms
 * (Kafka's empty-fetch back-off; it always waits that long). Every appended
 * byte of a covered partition is recorded against the quota.
 *
 * Refused sends. hw_net_send can refuse a request before it leaves:
 * -EHOSTUNREACH while the transport has not learnt the new leader's data
 * address (it arrives with the broker registration, ~1 ms after the
 * PARTITION_STATE that made us follow), -EAGAIN with the TX ring full,
 * -EMSGSIZE. Nothing is in flight then, so waiting for an answer (the
 * re-send timeout, 700 ms by default) would only delay replication — it
 * held the first acks=all produce of a new cluster for ~700 ms. A refused
 * fetch therefore does not count as outstanding; the session retries after
 * send_retry_backoff_ms (default 1 ms), doubled per consecutive refusal up
 * to replica.fetch.backoff.ms, and counts REPLICA_FETCH_SEND_FAILED. The
 * same holds for a refused OffsetsForLeaderEpoch. Kafka differs on
 * purpose: AbstractFetcherThread.processFetchRequest treats any failure of
 * leader.fetch (connection refused, disconnect, timeout) as an error of all
 * the session's partitions and delays them replica.fetch.backoff.ms (1000
 * ms). Kafka never sees a "no route yet" — its fetcher is created with the
 * leader's endpoint from the metadata image — and its failures are remote
 * ones that a quick retry would not fix. Ours is local and clears within a
 * millisecond, so a short, growing back-off is what a user expects; a
 * persistent refusal still settles at Kafka's replica.fetch.backoff.ms.
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
#include "hw_rxhold.h"
#include "hw_wire_piece.h"

static hw_fsess *sess_find(hw_rm *rm, int32_t leader, int create)
{
	for (int i = 0; i < rm->nsess; i++)
		if (rm->sess[i].leader == leader)
			return &rm->sess[i];
	if (!create || rm->nsess == HW_RM_MAX_SESS)
		return NULL;
	hw_fsess *s = &rm->sess[rm->nsess++];
	memset(s, 0, sizeof(*s));
	s->leader = leader;
	s->nparts_sent = 1; /* scan at the next poll */
	s->part_backoff_min_ms = INT64_MAX;
	return s;
}

void hw_fetcher_start(hw_part *p)
{
	hw_rm *rm = p->rm;
	hw_store *s = p->store;
	p->fbackoff_until_ms = 0;
	p->f_in_sync = 0; /* lag unknown until the new leader answers */
	hw_piece_reset(&p->pasm); /* pieces of the old leader's batch are of no use */
	if (hw_epoch_latest(s->ops->epochs(s)) < 0 && s->ops->log_end_offset(s) > p->hw)
		hw_part_truncate(p, p->hw, "no leader epochs: start from the HW");
	if (rm->cfg.truncate_via_offsets_for_epoch && hw_epoch_latest(s->ops->epochs(s)) >= 0) {
		p->ofe_corr = 0;
		p->ofe_sent_ms = 0;
		p->ofe_retry_ms = 0;
		p->ofe_send_failures = 0;
		rm->ofe_pending = 1;
		hw_part_set_fstate(p, HW_FETCHER_TRUNCATING, "reconcile with OffsetsForLeaderEpoch");
	} else {
		hw_part_set_fstate(p, HW_FETCHER_FETCHING, "following a new leader/epoch");
	}
	hw_fsess *ss = sess_find(rm, p->leader, 1);
	if (!ss) {
		HW_LOG(ERROR, "repl", "node %d: too many leaders to fetch from", rm->cfg.node_id);
		hw_part_set_fstate(p, HW_FETCHER_FAILED, "no fetch session");
		return;
	}
	/* a fetch sent before this change would carry the old epoch: forget it */
	ss->outstanding = 0;
	ss->nparts_sent = 1;
	ss->backoff_until_ms = 0;
	ss->send_failures = 0;
}

static void part_backoff(hw_part *p, int64_t now, const char *why)
{
	p->fbackoff_until_ms = now + p->rm->cfg.replica_fetch_backoff_ms;
	hw_part_set_fstate(p, HW_FETCHER_BACKOFF, why);
}

/* AbstractFetcherThread.getOffsetTruncationState: the leader says its log
 * for epoch le ends at lend. Truncates and returns 1 when reconciliation is
 * complete, 0 when another round is needed (the local epoch differed). */
static int truncation_rule(hw_part *p, int32_t le, int64_t lend, int *progress)
{
	hw_store *s = p->store;
	int64_t leo = s->ops->log_end_offset(s);
	int32_t latest = hw_epoch_latest(s->ops->epochs(s));
	int64_t target;
	const char *why;
	int done = 1;
	if (le < 0 || lend < 0) {
		target = p->hw;
		why = "leader has no end offset for our epoch: truncate to HW";
	} else {
		int32_t fe;
		int64_t fend;
		hw_epoch_end_offset_for(s->ops->epochs(s), le, leo, &fe, &fend);
		if (fe < 0 || fend < 0) {
			target = lend < leo ? lend : leo;
			why = "diverging: no local epoch <= leader's";
		} else if (fe == le) {
			target = fend < lend ? fend : lend;
			if (leo < target)
				target = leo;
			why = "diverging: same epoch, truncate to the common end";
		} else {
			target = fend < leo ? fend : leo;
			why = "diverging: local epoch differs, truncate and retry";
			done = 0;
		}
	}
	HW_LOG(INFO, "repl", "node %d %u-%u leader epoch %d ends at %" PRId64 " -> truncate to %" PRId64,
	       p->rm->cfg.node_id, p->tp.topic_id, p->tp.partition, le, lend, target);
	hw_part_truncate(p, target, why);
	*progress = s->ops->log_end_offset(s) != leo || hw_epoch_latest(s->ops->epochs(s)) != latest;
	return done;
}

static void on_diverging(hw_part *p, int32_t le, int64_t lend, int64_t now)
{
	int progress;
	truncation_rule(p, le, lend, &progress); /* the next fetch carries the new epoch */
	if (!progress)
		part_backoff(p, now, "diverging without progress"); /* never a hot loop */
}

static void on_records(hw_part *p, const hw_fetch_resp_part *r, int64_t now)
{
	hw_store *s = p->store;
	int64_t leo = s->ops->log_end_offset(s);
	size_t len = 0, skip = 0;
	if (r->records && r->records_len) {
		hw_batch_iter it;
		hw_batch_hdr h;
		const uint8_t *bp;
		int first = 1;
		/* framing and CRC of every batch (Kafka's follower append validates
		 * too); a corrupt batch ends the usable prefix */
		hw_batch_iter_init(&it, r->records, r->records_len, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED);
		while (hw_batch_iter_next(&it, &h, &bp) == 1) {
			if (hw_batch_last_offset(&h) < leo && first) {
				skip = (size_t)(bp - r->records) + h.size; /* already have it */
				continue;
			}
			first = 0;
		}
		len = hw_batch_iter_whole_bytes(&it);
		if (it.rc < 0 && len <= skip) {
			/* no usable batch: a corrupt one at our LEO. Back off instead
			 * of refetching it at once (docs/security.md "Faults") */
			p->m[HW_PM_CORRUPT_BATCHES]++;
			if (p->corrupt_logged_plus1 != leo + 1) {
				p->corrupt_logged_plus1 = leo + 1;
				HW_LOG(ERROR, "repl", "node %d %s-%u: leader %d sent a corrupt batch at offset %"
				       PRId64 " (%s): backing off", p->rm->cfg.node_id, p->topic, p->tp.partition,
				       p->leader, leo, hw_batch_rc_name(it.rc));
			}
			part_backoff(p, now, "corrupt batch");
			return;
		}
	}
	if (len > skip) {
		const uint8_t *data = r->records + skip;
		size_t n = len - skip;
		/* a batch beyond our LEO, or gaps between the batches: the
		 * leader's log was compacted there; appended with their offsets
		 * as they are, as Kafka's follower does (docs/compaction.md
		 * "Replication across gaps") */
		int gaps_ok = s->ops->append_replica != NULL;
		int64_t base = hw_batch_raw_base_offset(data);
		if (base < leo || (base > leo && !gaps_ok)) {
			HW_LOG(DEBUG, "repl", "node %d %u-%u response at %" PRId64 " != leo %" PRId64 ": dropped",
			       p->rm->cfg.node_id, p->tp.topic_id, p->tp.partition,
			       hw_batch_raw_base_offset(data), leo);
			return;
		}
		/* the iterator above CRC-checked every batch of this prefix;
		 * where the transport lets us keep its receive buffer (memif
		 * mbufs), the log writes the records from it (hw_rxhold.h) */
		void (*release)(void *) = NULL;
		void *ref = n >= HW_RXHOLD_MIN_BYTES ? hw_rxhold_take(p->rm->cfg.rxhold, data, n, &release) : NULL;
		int rc = gaps_ok ? s->ops->append_replica(s, data, n, ref, release)
			 : ref ? hw_store_append_validated_ref(s, data, n, ref, release)
			       : hw_store_append_validated(s, data, n);
		if (ref && rc == 0)
			p->m[HW_PM_REPLICA_BYTES_RX_HELD] += n;
		if (rc < 0) {
			p->m[HW_PM_STORE_ERRORS]++;
			HW_LOG(ERROR, "repl", "node %d %u-%u follower append failed: %d", p->rm->cfg.node_id,
			       p->tp.topic_id, p->tp.partition, rc);
			if (rc == -EIO || rc == -ENOSPC)
				hw_part_store_failed(p, rc, "a follower append");
			part_backoff(p, now, "append failed");
			return;
		}
		hw_pidmap_apply_batches(&p->pids, data, n);
		p->m[HW_PM_REPLICA_BYTES_APPENDED] += n;
		if (p->fthrottled) {
			hw_quota_record(&p->rm->follower_quota, (int64_t)n, now);
			p->m[HW_PM_FOLLOWER_THROTTLED_BYTES] += n;
		}
		hw_rm_mark_dirty(p->rm, p); /* the poll submits the store's writes */
	}
	if (r->high_watermark >= 0) {
		int64_t hw = r->high_watermark;
		p->f_in_sync = s->ops->log_end_offset(s) >= hw; /* Kafka: fetch lag == 0 */
		int64_t mine = hw_part_leo(p);
		int64_t ls = s->ops->log_start_offset(s);
		if (hw > mine)
			hw = mine;
		if (hw < ls)
			hw = ls;
		if (hw > p->hw) {
			/* consumer fetches this follower parked (fetch from the
			 * closest replica, docs/racks.md) complete now, as
			 * Kafka's fetcher completes delayed fetches of partitions
			 * with a new HW */
			p->hw_moved = 1;
			hw_rm_mark_dirty(p->rm, p);
		}
		p->hw = hw;
	}
}

/* One piece of a batch too large for a frame (docs/wire.md#batch-pieces):
 * assembled per partition (bounded by the larger of message.max.bytes and
 * replica.fetch.response.max.bytes) for the LEO it is to extend, in any
 * order, and only a whole batch goes on to on_records, which checks its
 * framing, CRC and base offset as for any fetched batch. While a piece is
 * missing nothing is appended, the LEO stays, and the next fetch asks for
 * the batch again from the same offset, filling the gap. Pieces not used
 * (repeats, a batch over the limit) are counted. */
static void on_piece(hw_part *p, const hw_fetch_resp_part *q, int64_t now)
{
	hw_rm *rm = p->rm;
	uint64_t max = (uint64_t)rm->cfg.message_max_bytes;
	if ((uint64_t)rm->cfg.replica_fetch_response_max_bytes > max)
		max = (uint64_t)rm->cfg.replica_fetch_response_max_bytes;
	if (max > UINT32_MAX)
		max = UINT32_MAX;
	const uint8_t *whole = NULL;
	hw_piece_drop why = HW_PIECE_DROP_TOO_SCATTERED;
	/* only the batch at our LEO can be appended: assemble nothing else
	 * (one behind it we have, one ahead of it cannot follow our log yet) */
	int64_t leo = p->store->ops->log_end_offset(p->store);
	int rc = -EPROTO;
	if (q->piece_base != leo)
		why = HW_PIECE_DROP_NOT_NEXT;
	else
		rc = hw_piece_feed(&p->pasm, (uint32_t)max, q->piece_base, q->piece_batch_len, q->piece_off,
				   q->records, q->records_len, &whole, &why);
	hw_fetch_resp_part r = *q;
	r.piece_batch_len = 0;
	r.piece_off = 0;
	r.records = NULL;
	r.records_len = 0;
	if (rc < 0) {
		p->m[HW_PM_BATCH_PIECES_DROPPED]++;
		HW_LOG(DEBUG, "repl", "node %d %s-%u: batch piece at %u of %u dropped: %s", rm->cfg.node_id, p->topic,
		       p->tp.partition, q->piece_off, q->piece_batch_len,
		       rc == -EINVAL ? "malformed" : hw_piece_drop_name(why));
		if (rc == -EMSGSIZE)
			part_backoff(p, now, "batch larger than this follower accepts");
		return;
	}
	if (rc == 1) {
		r.records = whole;
		r.records_len = q->piece_batch_len;
		p->m[HW_PM_BATCHES_ASSEMBLED]++;
	}
	on_records(p, &r, now); /* without records: only the HW */
	if (rc == 1)
		hw_piece_reset(&p->pasm);
}

void hw_fetcher_on_fetch_resp(hw_rm *rm, const hw_msg *m)
{
	const hw_fetch_resp *r = &m->u.fetch_resp;
	hw_fsess *ss = sess_find(rm, m->src, 0);
	if (!ss || !ss->outstanding || ss->corr != m->correlation_id)
		return; /* stale, duplicate or unsolicited */
	if (r->n_parts && !r->parts) {
		rm->dropped_malformed++;
		return;
	}
	int64_t now = rm_now_ms(rm);
	/* A response split over several frames (r->more on all but the last)
	 * is used whole: the fetch stays outstanding until its last frame, so
	 * the next fetch does not ask again for what is still arriving; a lost
	 * frame makes the following ones not start at our LEO (dropped), and a
	 * lost last frame is covered by the re-send timeout, counted from the
	 * latest frame. */
	ss->outstanding = r->more && !r->error;
	ss->sent_ms = now;
	if (r->want_turnaround && !r->more) {
		/* acks=all stage timing (hw_ptiming.h): report our turnaround */
		int64_t t = hw_clock_ns(rm->clock);
		ss->turn_wanted = 1;
		ss->turn_rx_ns = rm->msg_rx_ns > 0 && rm->msg_rx_ns <= t ? rm->msg_rx_ns : t;
	}
	if (r->error) {
		ss->backoff_until_ms = now + rm->cfg.replica_fetch_backoff_ms;
		HW_LOG(INFO, "repl", "node %d fetch from %d failed: %s, backing off", rm->cfg.node_id,
		       m->src, hw_err_name(r->error));
		return;
	}
	for (uint16_t i = 0; i < r->n_parts; i++) {
		const hw_fetch_resp_part *q = &r->parts[i];
		hw_part *p = hw_rm_find(rm, q->tp);
		if (!p || p->role != HW_PART_FOLLOWER || p->leader != m->src ||
		    p->fstate != HW_FETCHER_FETCHING)
			continue;
		switch (q->error) {
		case HW_ERR_NONE:
			if (q->diverging_epoch >= 0 || q->diverging_end_offset >= 0)
				on_diverging(p, q->diverging_epoch, q->diverging_end_offset, now);
			else if (q->piece_batch_len)
				on_piece(p, q, now);
			else
				on_records(p, q, now);
			break;
		case HW_ERR_OFFSET_OUT_OF_RANGE: {
			hw_store *s = p->store;
			if (q->log_start_offset > s->ops->log_end_offset(s)) {
				HW_LOG(INFO, "repl", "node %d %u-%u behind leader log start %" PRId64,
				       rm->cfg.node_id, p->tp.topic_id, p->tp.partition, q->log_start_offset);
				s->ops->truncate_fully_and_start_at(s, q->log_start_offset);
				p->hw = q->log_start_offset;
				hw_pidmap_clear(&p->pids);
			} else {
				int64_t t = p->hw;
				int64_t before = s->ops->log_end_offset(s);
				if (q->high_watermark >= 0 && q->high_watermark < t)
					t = q->high_watermark;
				hw_part_truncate(p, t, "offset out of range on the leader");
				if (s->ops->log_end_offset(s) == before)
					part_backoff(p, now, "offset out of range without progress");
			}
			break;
		}
		case HW_ERR_FENCED_LEADER_EPOCH:
			p->m[HW_PM_FETCH_ERRORS]++;
			hw_part_set_fstate(p, HW_FETCHER_FAILED, "fenced: waiting for new metadata");
			break;
		default:
			p->m[HW_PM_FETCH_ERRORS]++;
			part_backoff(p, now, hw_err_name(q->error));
			break;
		}
	}
}

void hw_fetcher_on_ofe_resp(hw_rm *rm, const hw_msg *m)
{
	const hw_ofe_resp *r = &m->u.ofe_resp;
	if (r->n_parts && !r->parts) {
		rm->dropped_malformed++;
		return;
	}
	int64_t now = rm_now_ms(rm);
	for (uint16_t i = 0; i < r->n_parts; i++) {
		const hw_ofe_resp_part *q = &r->parts[i];
		hw_part *p = hw_rm_find(rm, q->tp);
		if (!p || p->role != HW_PART_FOLLOWER || p->leader != m->src ||
		    p->fstate != HW_FETCHER_TRUNCATING || p->ofe_corr != m->correlation_id)
			continue; /* stale, duplicate or unsolicited */
		p->ofe_corr = 0;
		if (q->error == HW_ERR_FENCED_LEADER_EPOCH) {
			hw_part_set_fstate(p, HW_FETCHER_FAILED, "fenced: waiting for new metadata");
			continue;
		}
		if (q->error) {
			part_backoff(p, now, hw_err_name(q->error)); /* then the fetch path */
			hw_fsess *ss = sess_find(rm, p->leader, 1);
			if (ss && p->fbackoff_until_ms < ss->part_backoff_min_ms)
				ss->part_backoff_min_ms = p->fbackoff_until_ms;
			continue;
		}
		int progress;
		if (truncation_rule(p, q->leader_epoch, q->end_offset, &progress)) {
			hw_part_set_fstate(p, HW_FETCHER_FETCHING, "reconciled");
			hw_fsess *ss = sess_find(rm, p->leader, 1);
			if (ss)
				ss->nparts_sent = 1; /* include it in the next fetch */
		}
		else if (!progress) {
			part_backoff(p, now, "reconciliation without progress");
			hw_fsess *ss = sess_find(rm, p->leader, 1);
			if (ss && p->fbackoff_until_ms < ss->part_backoff_min_ms)
				ss->part_backoff_min_ms = p->fbackoff_until_ms;
		}
		else
			rm->ofe_pending = 1; /* another round with the new latest epoch */
	}
}

static void send_ofe(hw_rm *rm, hw_part *p, int64_t now)
{
	hw_store *s = p->store;
	hw_ofe_part q;
	memset(&q, 0, sizeof(q));
	q.tp = p->tp;
	q.current_leader_epoch = p->leader_epoch;
	q.leader_epoch = hw_epoch_latest(s->ops->epochs(s));
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_OFFSETS_FOR_EPOCH;
	m.src = rm->cfg.node_id;
	m.dst = p->leader;
	m.correlation_id = hw_rm_new_corr(rm);
	m.u.ofe.replica_id = rm->cfg.node_id;
	m.u.ofe.n_parts = 1;
	m.u.ofe.parts = &q;
	p->ofe_corr = m.correlation_id;
	p->ofe_sent_ms = now;
	int rc = hw_rm_send(rm, &m);
	if (rc < 0) {
		/* never left: retry soon, not after the re-send timeout (design note) */
		int64_t b = hw_rm_send_backoff_ms(rm, &p->ofe_send_failures, rm->cfg.replica_fetch_backoff_ms);
		p->ofe_corr = 0;
		p->ofe_retry_ms = now + b;
		p->m[HW_PM_OFFSETS_FOR_EPOCH_SEND_FAILED]++;
		if (p->ofe_send_failures == 1)
			HW_LOG(INFO, "repl", "node %d %u-%u OffsetsForLeaderEpoch to %d refused by the "
			       "transport (%d): retry in %" PRId64 " ms", rm->cfg.node_id, p->tp.topic_id, p->tp.partition, p->leader, rc, b);
		return;
	}
	p->ofe_send_failures = 0;
}

/* Send due OffsetsForLeaderEpoch requests of TRUNCATING partitions. */
static int ofe_poll(hw_rm *rm, int64_t now)
{
	if (!rm->ofe_pending)
		return 0;
	int work = 0, pending = 0;
	for (size_t i = 0; i < rm->nparts; i++) {
		hw_part *p = rm->parts[i];
		if (p->role != HW_PART_FOLLOWER || p->fstate != HW_FETCHER_TRUNCATING)
			continue;
		pending = 1;
		if (p->ofe_corr == 0 ? now >= p->ofe_retry_ms
				     : now - p->ofe_sent_ms >= rm->cfg.fetch_request_timeout_ms) {
			send_ofe(rm, p, now);
			work++;
		}
	}
	rm->ofe_pending = pending;
	return work;
}

/* Kafka's follower appends synchronously, then fetches again from its new
 * LEO. Here the append completes asynchronously (io_uring), and the offset
 * a follower reports — its fetch offset, which the leader takes as its LEO
 * for the HW — is its durable end. Fetching again before the local write
 * completed would re-request the bytes in flight (a second copy on the
 * wire for every batch) and tell the leader nothing new. So a session
 * waits until every one of its partitions' writes has completed; the
 * replica manager keeps polling those stores, and their completions wake
 * the reactor. */
static int session_writes_pending(hw_rm *rm, const hw_fsess *ss)
{
	for (size_t i = 0; i < rm->nparts; i++) {
		hw_part *p = rm->parts[i];
		if (p->role == HW_PART_FOLLOWER && p->leader == ss->leader && p->fstate == HW_FETCHER_FETCHING &&
		    hw_part_writes_pending(p))
			return 1;
	}
	return 0;
}

static uint32_t turn_ns(int64_t d) { return d <= 0 ? 0 : d >= (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d; }

static int send_fetch(hw_rm *rm, hw_fsess *ss, int64_t now)
{
	size_t cap = 0;
	if (session_writes_pending(rm, ss))
		return 0;
	hw_fetch_part *fp = NULL;
	int64_t turn_done_ns = ss->turn_wanted ? hw_clock_ns(rm->clock) : 0; /* writes done */
	uint16_t n = 0;
	int throttled = 0;
	int quota_exceeded = hw_quota_exceeded(&rm->follower_quota, now);
	ss->part_backoff_min_ms = INT64_MAX;
	for (size_t i = 0; i < rm->nparts && n < UINT16_MAX; i++) {
		hw_part *p = rm->parts[i];
		if (p->role != HW_PART_FOLLOWER || p->leader != ss->leader)
			continue;
		if (p->store_failed) {
			/* its log dir is offline (docs/logdirs.md): Kafka stops
			 * the fetcher of an offline replica; the others of the
			 * session fetch on */
			if (p->fstate != HW_FETCHER_FAILED)
				hw_part_set_fstate(p, HW_FETCHER_FAILED, "log failed: offline log dir");
			continue;
		}
		if (p->fstate == HW_FETCHER_BACKOFF) {
			if (now < p->fbackoff_until_ms) {
				if (p->fbackoff_until_ms < ss->part_backoff_min_ms)
					ss->part_backoff_min_ms = p->fbackoff_until_ms;
				continue;
			}
			hw_part_set_fstate(p, HW_FETCHER_FETCHING, "back-off over");
		}
		if (p->fstate != HW_FETCHER_FETCHING)
			continue;
		if (p->fthrottled && quota_exceeded && !p->f_in_sync) {
			p->m[HW_PM_FOLLOWER_THROTTLED]++; /* catch-up held back */
			throttled = 1;
			continue;
		}
		if ((size_t)n + 1 > cap) {
			cap = cap ? cap * 2 : 64;
			fp = hw_rm_scratch(&rm->fscratch, &rm->fscratch_cap, cap * sizeof(*fp));
			if (!fp)
				return 0;
		}
		hw_store *s = p->store;
		hw_fetch_part *f = &fp[n++];
		f->tp = p->tp;
		f->fetch_offset = s->ops->durable_end_offset(s);
		f->current_leader_epoch = p->leader_epoch;
		/* the cache's latest epoch, as Kafka (log.latestEpoch); an entry a
		 * leader assigned without appending is dropped by truncateTo(LEO)
		 * in the diverging round */
		f->last_fetched_epoch = hw_epoch_latest(s->ops->epochs(s));
		f->log_start_offset = s->ops->log_start_offset(s);
		f->partition_max_bytes = (int32_t)rm->cfg.replica_fetch_max_bytes;
		p->m[HW_PM_REPLICA_FETCH_SENT]++;
	}
	if (throttled) {
		/* re-check when the quota frees up (at most replica.fetch.backoff.ms) */
		int64_t wait = hw_quota_wait_ms(&rm->follower_quota, now);
		if (wait < 1 || wait > rm->cfg.replica_fetch_backoff_ms)
			wait = rm->cfg.replica_fetch_backoff_ms;
		if (now + wait < ss->part_backoff_min_ms)
			ss->part_backoff_min_ms = now + wait;
	}
	ss->nparts_sent = n;
	if (n == 0)
		return 0;
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_FETCH;
	m.src = rm->cfg.node_id;
	m.dst = ss->leader;
	m.correlation_id = hw_rm_new_corr(rm);
	m.u.fetch.replica_id = rm->cfg.node_id;
	m.u.fetch.replica_epoch = rm->cfg.broker_epoch;
	m.u.fetch.max_wait_ms = (int32_t)rm->cfg.replica_fetch_wait_max_ms;
	m.u.fetch.min_bytes = (int32_t)rm->cfg.replica_fetch_min_bytes;
	m.u.fetch.max_bytes = (int32_t)rm->cfg.replica_fetch_response_max_bytes;
	m.u.fetch.isolation_level = 0;
	m.u.fetch.n_parts = n;
	m.u.fetch.parts = fp;
	if (ss->turn_wanted) {
		int64_t t = hw_clock_ns(rm->clock);
		m.u.fetch.has_turnaround = 1;
		m.u.fetch.turn_write_ns = turn_ns(turn_done_ns - ss->turn_rx_ns);
		m.u.fetch.turn_send_ns = turn_ns(t - turn_done_ns);
		ss->turn_wanted = 0;
	}
	ss->outstanding = 1; /* before the send: a transport may answer from inside it */
	ss->corr = m.correlation_id;
	ss->sent_ms = now;
	int rc = hw_rm_send(rm, &m);
	if (rc < 0) {
		/* Refused: nothing is in flight, so it is not outstanding (no
		 * re-send timeout to wait for); retry after the short send
		 * back-off (design note "Refused sends"). The partitions keep
		 * their state; the retry rebuilds the request. */
		int64_t b = hw_rm_send_backoff_ms(rm, &ss->send_failures, rm->cfg.replica_fetch_backoff_ms);
		ss->outstanding = 0;
		ss->backoff_until_ms = now + b;
		for (uint16_t i = 0; i < n; i++) {
			hw_part *p = hw_rm_find(rm, fp[i].tp);
			if (p) {
				p->m[HW_PM_REPLICA_FETCH_SENT]--; /* counted above, never sent */
				p->m[HW_PM_REPLICA_FETCH_SEND_FAILED]++;
			}
		}
		if (ss->send_failures == 1)
			HW_LOG(INFO, "repl", "node %d fetch to %d refused by the transport (%d): retry in %" PRId64 " ms",
			       rm->cfg.node_id, ss->leader, rc, b);
		return 1;
	}
	ss->send_failures = 0;
	return 1;
}

int hw_fetcher_poll(hw_rm *rm, int64_t now)
{
	int work = ofe_poll(rm, now);
	for (int i = 0; i < rm->nsess; i++) {
		hw_fsess *ss = &rm->sess[i];
		if (ss->outstanding) {
			if (now - ss->sent_ms < rm->cfg.fetch_request_timeout_ms)
				continue;
			HW_LOG(DEBUG, "repl", "node %d fetch to %d unanswered for %" PRId64 " ms: re-send",
			       rm->cfg.node_id, ss->leader, now - ss->sent_ms);
			ss->outstanding = 0;
			ss->nparts_sent = 1;
			for (size_t j = 0; j < rm->nparts; j++)
				if (rm->parts[j]->role == HW_PART_FOLLOWER && rm->parts[j]->leader == ss->leader)
					rm->parts[j]->m[HW_PM_REPLICA_FETCH_RESENT]++;
		}
		if (now < ss->backoff_until_ms)
			continue;
		if (ss->nparts_sent == 0 && now < ss->part_backoff_min_ms)
			continue; /* nothing to fetch until a back-off ends or metadata changes */
		work += send_fetch(rm, ss, now);
	}
	return work;
}

int64_t hw_fetcher_next_deadline_ms(hw_rm *rm)
{
	int64_t d = INT64_MAX;
	for (size_t i = 0; rm->ofe_pending && i < rm->nparts; i++) {
		hw_part *p = rm->parts[i];
		if (p->role == HW_PART_FOLLOWER && p->fstate == HW_FETCHER_TRUNCATING) {
			int64_t t = p->ofe_corr ? p->ofe_sent_ms + rm->cfg.fetch_request_timeout_ms
						: p->ofe_retry_ms; /* 0 unless refused */
			if (t < d)
				d = t;
		}
	}
	for (int i = 0; i < rm->nsess; i++) {
		hw_fsess *ss = &rm->sess[i];
		int64_t t;
		if (ss->outstanding)
			t = ss->sent_ms + rm->cfg.fetch_request_timeout_ms;
		else if (rm->cfg.stores_signal_completions && session_writes_pending(rm, ss))
			continue; /* the completion wakes us; then it sends */
		else if (ss->nparts_sent)
			t = ss->backoff_until_ms;
		else
			t = ss->part_backoff_min_ms;
		if (t < d)
			d = t;
	}
	return d;
}
