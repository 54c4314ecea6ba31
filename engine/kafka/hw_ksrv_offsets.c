/* hw_ksrv_offsets.c — Kafka ListOffsets (docs/kafka.md "Semantics"):
 * -1 (latest) = the HW, -2 (earliest) = the log start offset, both from the
 * leader's partition state; a timestamp >= 0 = the first offset whose record
 * timestamp is >= it, found by scanning the log from its start with
 * consumer FETCHes (below the HW) through the replica manager: the batches'
 * maxTimestamp skips whole batches, records of an uncompressed batch are
 * read one by one; in a compressed batch the answer is the batch's base
 * offset (records before the exact one are returned too, never skipped). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_ksrv_int.h"

#define LO_LATEST   (-1)
#define LO_EARLIEST (-2)
#define LO_MAX_TS   (-3)      /* v7+ (KIP-734): the record with the largest timestamp */
#define LO_EARLIEST_LOCAL (-4) /* v8+ (KIP-405): the local log start = the log start (no tiered storage) */
#define LO_SCAN_BYTES  (1 << 20)
#define LO_MAX_ROUNDS  4096    /* 4 GiB of log: then NOT found is answered */

typedef struct lo_part {
	int32_t partition;
	hw_tp tp;
	int16_t err;
	int64_t ts;                /* asked */
	int32_t cle;               /* current_leader_epoch (v4+), -1 */
	int64_t off;               /* answer */
	int64_t found_ts;
	int32_t epoch;
	int64_t next;              /* scan position */
	int rounds;
	bool max_ts;               /* scanning for LO_MAX_TS (off/found_ts: the best so far) */
} lo_part;

typedef struct lo_topic {
	char *name;                /* as the request spelt it */
	int first, n;
} lo_topic;

typedef struct lo_state {
	int n_topics, n_parts;
	lo_topic *topics;
	lo_part *parts;
} lo_state;

static void lo_free(void *p)
{
	lo_state *st = p;
	for (int i = 0; i < st->n_topics; i++)
		free(st->topics[i].name);
	free(st->topics);
	free(st->parts);
	free(st);
}

static void lo_finish(hw_kreq *r)
{
	lo_state *st = r->state;
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	if (v >= 2)
		hw_kw_i32(w, 0);
	hw_kw_array_v(w, fx, st->n_topics);
	for (int t = 0; t < st->n_topics; t++) {
		const lo_topic *tp = &st->topics[t];
		hw_kw_strz_v(w, fx, tp->name);
		hw_kw_array_v(w, fx, tp->n);
		for (int i = tp->first; i < tp->first + tp->n; i++) {
			const lo_part *p = &st->parts[i];
			hw_kw_i32(w, p->partition);
			hw_kw_i16(w, p->err);
			ksrv_err(r, p->err);
			hw_kw_i64(w, p->err ? -1 : p->found_ts);
			hw_kw_i64(w, p->err ? -1 : p->off);
			if (v >= 4)
				hw_kw_i32(w, p->err ? -1 : p->epoch);
			hw_kw_tags_v(w, fx);
		}
		hw_kw_tags_v(w, fx);
	}
	hw_kw_tags_v(w, fx);
}

static int submit_scan(hw_ksrv *s, hw_kreq *r, int idx);

/* Look for the first record at or after p->next with timestamp >= p->ts in
 * the batches rec[0..len). 1: found (off, found_ts set); 0: not here (next
 * advanced past the batches). */
static int scan(lo_part *p, const uint8_t *rec, size_t len)
{
	hw_batch_iter it;
	hw_batch_hdr h;
	const uint8_t *b;
	hw_batch_iter_init(&it, rec, len, 0);
	while (hw_batch_iter_next(&it, &h, &b) == 1) {
		int64_t last = hw_batch_last_offset(&h);
		if (last < p->next)
			continue;
		if (h.max_timestamp >= p->ts) {
			hw_record_iter ri;
			hw_record rc;
			if (hw_batch_codec(&h) == 0 && hw_record_iter_init(&ri, b, h.size, 0) == 0) {
				while (hw_record_iter_next(&ri, &rc) == 1)
					if (rc.offset >= p->next && rc.timestamp >= p->ts) {
						p->off = rc.offset;
						p->found_ts = rc.timestamp;
						return 1;
					}
			} else {
				p->off = h.base_offset > p->next ? h.base_offset : p->next;
				p->found_ts = h.max_timestamp;
				return 1;
			}
		}
		p->next = last + 1;
	}
	return 0;
}

/* LO_MAX_TS over the batches rec[0..len): keep the first record with the
 * largest timestamp (in a compressed batch, whose records are not read
 * here, the batch's last offset, as Kafka's shallow offset of the max
 * timestamp); next advances past the batches. */
static void scan_max(lo_part *p, const uint8_t *rec, size_t len)
{
	hw_batch_iter it;
	hw_batch_hdr h;
	const uint8_t *b;
	hw_batch_iter_init(&it, rec, len, 0);
	while (hw_batch_iter_next(&it, &h, &b) == 1) {
		int64_t last = hw_batch_last_offset(&h);
		if (last < p->next)
			continue;
		if (p->off < 0 || h.max_timestamp > p->found_ts) {
			hw_record_iter ri;
			hw_record rc;
			int64_t off = last, ts = h.max_timestamp;
			if (hw_batch_codec(&h) == 0 && hw_record_iter_init(&ri, b, h.size, 0) == 0) {
				off = -1;
				ts = INT64_MIN;
				while (hw_record_iter_next(&ri, &rc) == 1)
					if (rc.offset >= p->next && (off < 0 || rc.timestamp > ts)) {
						off = rc.offset;
						ts = rc.timestamp;
					}
			}
			if (off >= 0 && (p->off < 0 || ts > p->found_ts)) {
				p->off = off;
				p->found_ts = ts;
			}
		}
		p->next = last + 1;
	}
}

static void lo_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	lo_state *st = r->state;
	lo_part *p = &st->parts[idx];
	if (m->type != HW_MSG_FETCH_RESP || m->u.fetch_resp.n_parts < 1) {
		p->err = HW_ERR_UNKNOWN_SERVER_ERROR;
		return;
	}
	const hw_fetch_resp_part *a = &m->u.fetch_resp.parts[0];
	if (a->error) {
		p->err = a->error;
		return;
	}
	int64_t before = p->next;
	if (p->max_ts) {
		if (a->records_len)
			scan_max(p, a->records, a->records_len);
		if (p->next <= before || p->next >= a->high_watermark || ++p->rounds >= LO_MAX_ROUNDS)
			return; /* the best found (off -1, found_ts -1: none) */
		if (submit_scan(r->conn->srv, r, idx) < 0)
			p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
		return;
	}
	if (a->records_len && scan(p, a->records, a->records_len))
		return;
	if (p->next <= before || p->next >= a->high_watermark || ++p->rounds >= LO_MAX_ROUNDS) {
		p->off = -1; /* Kafka: no record with such a timestamp */
		p->found_ts = -1;
		return;
	}
	if (submit_scan(r->conn->srv, r, idx) < 0)
		p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
}

static void lo_fail(hw_kreq *r, int idx, int16_t err)
{
	lo_state *st = r->state;
	st->parts[idx].err = err;
}

static int submit_scan(hw_ksrv *s, hw_kreq *r, int idx)
{
	lo_state *st = r->state;
	lo_part *p = &st->parts[idx];
	hw_fetch_part fp = { .tp = p->tp, .fetch_offset = p->next, .current_leader_epoch = -1,
			     .last_fetched_epoch = -1, .log_start_offset = -1, .partition_max_bytes = LO_SCAN_BYTES };
	hw_msg m = { .type = HW_MSG_FETCH, .dst = s->cfg.node_id };
	m.u.fetch = (hw_fetch_req){ .replica_id = HW_CONSUMER_ID, .replica_epoch = -1, .max_wait_ms = 0,
				    .min_bytes = 0, .max_bytes = LO_SCAN_BYTES, .n_parts = 1, .parts = &fp };
	return ksrv_submit(s, r, &m, idx, 1, false, lo_answer, lo_fail);
}

/* Resolve one partition and answer it, or start its timestamp scan. */
static void lo_start(hw_ksrv *s, hw_kreq *r, lo_state *st, int idx, const char *topic, int16_t name_err,
		     int32_t cle, int16_t v)
{
	lo_part *p = &st->parts[idx];
	p->off = -1;
	p->found_ts = -1;
	p->epoch = -1;
	uint32_t id;
	int rc = name_err ? -EINVAL : ksrv_topic_id(s, topic, &id);
	if (name_err) {
		p->err = name_err;
		return;
	}
	if (rc != 0 || p->partition < 0) {
		p->err = rc < 0 ? HW_ERR_UNKNOWN_TOPIC_OR_PARTITION : HW_ERR_NOT_LEADER_OR_FOLLOWER;
		return;
	}
	p->tp = (hw_tp){ id, (uint32_t)p->partition };
	hw_rm_part_info info;
	if (s->ops.part_info(s->ctx, p->tp, &info) < 0) {
		p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
		return;
	}
	if (info.role != HW_PART_LEADER) {
		p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
		return;
	}
	if (cle >= 0 && cle != info.leader_epoch) {
		p->err = cle < info.leader_epoch ? HW_ERR_FENCED_LEADER_EPOCH : HW_ERR_UNKNOWN_LEADER_EPOCH;
		return;
	}
	p->epoch = info.leader_epoch;
	if (p->ts == LO_LATEST) {
		p->off = info.hw;
	} else if (p->ts == LO_EARLIEST || (p->ts == LO_EARLIEST_LOCAL && v >= 8)) {
		p->off = info.log_start;
	} else if (p->ts == LO_MAX_TS && v >= 7) {
		p->max_ts = true;
		if (info.log_start < info.hw) {
			p->next = info.log_start;
			if (submit_scan(s, r, idx) < 0)
				p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
		}
	} else if (p->ts < 0) {
		/* Kafka: -3 needs v7, -4 v8 (the client falls back), others are invalid */
		p->err = p->ts == LO_MAX_TS || p->ts == LO_EARLIEST_LOCAL ? HW_ERR_UNSUPPORTED_VERSION
									  : HW_ERR_INVALID_REQUEST;
	} else if (info.log_start >= info.hw) {
		p->off = -1; /* nothing readable */
	} else {
		p->next = info.log_start;
		if (submit_scan(s, r, idx) < 0)
			p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
	}
}

int hw_kapi_list_offsets(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	(void)hw_kr_i32(rd); /* replica_id */
	if (v >= 2)
		(void)hw_kr_i8(rd); /* isolation_level: LSO = HW */
	int32_t nt = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	lo_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r->state = st;
	r->free_state = lo_free;
	r->finish = lo_finish;
	st->topics = calloc(nt > 0 ? (size_t)nt : 1, sizeof(*st->topics));
	if (!st->topics)
		return -ENOMEM;
	int cap = 0;
	for (int t = 0; t < nt && !rd->err; t++) {
		hw_kstr name = hw_kr_str_v(rd, fx);
		int32_t np = hw_kr_array_v(rd, fx);
		if (rd->err)
			break;
		lo_topic *tp = &st->topics[st->n_topics++];
		tp->name = malloc((size_t)name.len + 1);
		if (!tp->name)
			return -ENOMEM;
		memcpy(tp->name, name.p, (size_t)name.len);
		tp->name[name.len] = 0;
		tp->first = st->n_parts;
		for (int k = 0; k < np && !rd->err; k++) {
			int32_t part = hw_kr_i32(rd);
			int32_t cle = v >= 4 ? hw_kr_i32(rd) : -1;
			int64_t ts = hw_kr_i64(rd);
			hw_kr_tags_v(rd, fx);
			if (rd->err)
				break;
			if (st->n_parts == cap) {
				int nc = cap ? cap * 2 : 8;
				lo_part *np2 = realloc(st->parts, (size_t)nc * sizeof(*np2));
				if (!np2)
					return -ENOMEM;
				st->parts = np2;
				cap = nc;
			}
			lo_part *p = &st->parts[st->n_parts++];
			memset(p, 0, sizeof(*p));
			p->partition = part;
			p->ts = ts;
			p->cle = cle;
			tp->n++;
		}
		hw_kr_tags_v(rd, fx);
	}
	hw_kr_tags_v(rd, fx);
	if (rd->err)
		return rd->err;
	/* start after parsing: the parts array no longer moves */
	for (int t = 0; t < st->n_topics; t++) {
		char tn[HW_TOPIC_NAME_MAX];
		const lo_topic *tp = &st->topics[t];
		hw_kstr name = { tp->name, (int32_t)strlen(tp->name) };
		int16_t name_err = ksrv_topic_name(name, tn);
		for (int i = tp->first; i < tp->first + tp->n; i++)
			lo_start(s, r, st, i, tn, name_err, st->parts[i].cle, r->hdr.api_version);
	}
	return 0;
}
