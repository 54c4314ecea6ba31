/* hw_ksrv_data.c — the Kafka server's data APIs: Produce, Fetch and
 * ListOffsets, mapped onto the replica manager's PRODUCE and FETCH
 * (docs/kafka.md "Produce", "Fetch"). Record batches pass through
 * unchanged: the rm validates them and assigns offsets exactly as for the
 * native data plane. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_ksrv_int.h"
#include "hw_wire.h"

/* A partition of a Produce or Fetch request, flattened over topics. */
typedef struct dpart {
	int topic;                /* index into the topic array */
	int32_t partition;
	hw_tp tp;
	bool local;               /* sent to the engine */
	int16_t err;
	int64_t base_offset;      /* produce */
	int64_t log_start;
	int64_t hw;               /* fetch */
	uint8_t *records;         /* fetch: a copy of the answer's batches */
	uint32_t records_len;
	bool answered;
	int32_t preferred;        /* fetch v11: preferred_read_replica, -1 none */
} dpart;

typedef struct dtopic {
	char name[HW_TOPIC_NAME_MAX];
	int first, n;             /* its partitions in the flat array */
} dtopic;

typedef struct dstate {
	int n_topics, n_parts;
	dtopic *topics;
	dpart *parts;
} dstate;

static void dstate_free(void *p)
{
	dstate *st = p;
	for (int i = 0; i < st->n_parts; i++)
		free(st->parts[i].records);
	free(st->parts);
	free(st->topics);
	free(st);
}

/* Grow the flat partition array by one; NULL on -ENOMEM. */
static dpart *dpart_add(dstate *st, int *cap)
{
	if (st->n_parts == *cap) {
		int nc = *cap ? *cap * 2 : 8;
		dpart *np = realloc(st->parts, (size_t)nc * sizeof(*np));
		if (!np)
			return NULL;
		st->parts = np;
		*cap = nc;
	}
	dpart *p = &st->parts[st->n_parts++];
	memset(p, 0, sizeof(*p));
	p->base_offset = -1;
	p->log_start = -1;
	p->hw = -1;
	p->preferred = -1;
	return p;
}

static dstate *dstate_new(hw_kreq *r, int32_t n_topics)
{
	dstate *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	r->state = st;
	r->free_state = dstate_free;
	st->topics = calloc(n_topics > 0 ? (size_t)n_topics : 1, sizeof(*st->topics));
	return st->topics ? st : NULL;
}

/* Resolve a partition's topic: local -> tp set, 0; else the Kafka error. */
static int16_t resolve(hw_ksrv *s, const dtopic *t, int16_t name_err, dpart *p)
{
	if (name_err)
		return name_err;
	uint32_t id;
	int rc = ksrv_topic_id(s, t->name, &id);
	if (rc < 0)
		return HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
	if (rc > 0 || p->partition < 0)
		return HW_ERR_NOT_LEADER_OR_FOLLOWER; /* a topic of the cluster we hold no replica of */
	p->tp.topic_id = id;
	p->tp.partition = (uint32_t)p->partition;
	return 0;
}

static int find_part(const dstate *st, hw_tp tp, int from)
{
	for (int i = from; i < st->n_parts; i++)
		if (st->parts[i].local && st->parts[i].tp.topic_id == tp.topic_id &&
		    st->parts[i].tp.partition == tp.partition && !st->parts[i].answered)
			return i;
	return -1;
}

/* ---- Produce ----------------------------------------------------------------- */
/* The per-partition checks of a Produce request's records that need its
 * version (docs/kafka.md "Versions"), over every entry of the set: a
 * MessageSet entry (magic 0/1) and a RecordBatch (magic 2) share the
 * framing `int64 offset, int32 size` and the magic byte at 16.
 *   magic 0 or 1   Produce v0-2: UNSUPPORTED_FOR_MESSAGE_FORMAT (hiwater
 *                  stores RecordBatch v2 only and never converts); v3+:
 *                  INVALID_RECORD, as Kafka's ProduceRequest.validateRecords;
 *   zstd below v7  UNSUPPORTED_COMPRESSION_TYPE (KIP-110).
 * Returns 0 or that error. The size limit is the replica manager's
 * (message.max.bytes, MESSAGE_TOO_LARGE): batches larger than a frame
 * replicate as batch pieces (docs/wire.md#batch-pieces). Framing damage (a short or cut entry, a magic
 * above 2) is left to the replica manager's validation. */
static int16_t check_records(const uint8_t *p, size_t len, int16_t version)
{
	size_t off = 0;
	while (len - off >= 12) {
		uint32_t bl = (uint32_t)p[off + 8] << 24 | (uint32_t)p[off + 9] << 16 | (uint32_t)p[off + 10] << 8 |
			      p[off + 11];
		uint8_t magic = len - off > HW_BATCH_OFF_MAGIC ? p[off + HW_BATCH_OFF_MAGIC] : HW_BATCH_MAGIC;
		if (magic < HW_BATCH_MAGIC)
			return version < 3 ? HW_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT : HW_ERR_INVALID_RECORD;
		/* attributes: int16, the codec in the low byte's bits 0-2 */
		if (len - off > HW_BATCH_OFF_ATTRIBUTES + 1 && magic == HW_BATCH_MAGIC && version < 7 &&
		    (p[off + HW_BATCH_OFF_ATTRIBUTES + 1] & HW_BATCH_ATTR_CODEC_MASK) == HW_BATCH_CODEC_ZSTD)
			return HW_ERR_UNSUPPORTED_COMPRESSION_TYPE;
		if ((uint64_t)bl + 12 > len - off)
			break;
		off += 12 + (size_t)bl;
	}
	return 0;
}

static void pr_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	dstate *st = r->state;
	dpart *p = &st->parts[idx];
	if (m->type != HW_MSG_PRODUCE_RESP) {
		p->err = HW_ERR_UNKNOWN_SERVER_ERROR;
		return;
	}
	p->err = m->u.produce_resp.error;
	if (p->err == HW_ERR_UNKNOWN_TOPIC_OR_PARTITION)
		p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER; /* the topic exists: not ours */
	p->base_offset = m->u.produce_resp.base_offset;
	p->log_start = m->u.produce_resp.log_start_offset;
}

static void pr_fail(hw_kreq *r, int idx, int16_t err)
{
	dstate *st = r->state;
	st->parts[idx].err = err;
}

static void pr_finish(hw_kreq *r)
{
	dstate *st = r->state;
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	hw_kw_array_v(w, fx, st->n_topics);
	for (int t = 0; t < st->n_topics; t++) {
		const dtopic *tp = &st->topics[t];
		hw_kw_strz_v(w, fx, tp->name);
		hw_kw_array_v(w, fx, tp->n);
		for (int i = tp->first; i < tp->first + tp->n; i++) {
			const dpart *p = &st->parts[i];
			hw_kw_i32(w, p->partition);
			hw_kw_i16(w, p->err);
			ksrv_err(r, p->err);
			hw_kw_i64(w, p->err ? -1 : p->base_offset);
			if (v >= 2)
				hw_kw_i64(w, -1); /* log_append_time: CreateTime topics */
			if (v >= 5)
				hw_kw_i64(w, p->err ? -1 : p->log_start);
			if (v >= 8) {
				hw_kw_array_v(w, fx, 0);     /* record_errors */
				hw_kw_nstr_v(w, fx, NULL, 0); /* error_message */
			}
			hw_kw_tags_v(w, fx); /* v10's current_leader tag is not in the versions served */
		}
		hw_kw_tags_v(w, fx);
	}
	if (v >= 1)
		hw_kw_i32(w, 0); /* throttle_time_ms */
	hw_kw_tags_v(w, fx);
}

/* acks=0: no response; an error of any partition closes the connection
 * (hw_kconn_close_wanted), counted in the request metrics as any error. */
static void pr_finish_acks0(hw_kreq *r)
{
	dstate *st = r->state;
	for (int i = 0; i < st->n_parts; i++)
		if (st->parts[i].err) {
			ksrv_err(r, st->parts[i].err);
			r->close_conn = true;
		}
}

int hw_kapi_produce(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	hw_kstr txn = v >= 3 ? hw_kr_nstr_v(rd, fx) : (hw_kstr){ NULL, -1 }; /* v0-2 have no transactional_id */
	int16_t acks = hw_kr_i16(rd);
	int32_t timeout = hw_kr_i32(rd);
	int32_t nt = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	dstate *st = dstate_new(r, nt);
	if (!st)
		return -ENOMEM;
	int cap = 0;
	int16_t req_err = 0;
	if (txn.len >= 0)
		req_err = HW_KERR_TRANSACTIONAL_ID_AUTH; /* transactions are not supported */
	else if (acks != 0 && acks != 1 && acks != -1)
		req_err = HW_ERR_INVALID_REQUIRED_ACKS;
	for (int t = 0; t < nt && !rd->err; t++) {
		dtopic *tp = &st->topics[st->n_topics++];
		int16_t name_err = ksrv_topic_name(hw_kr_str_v(rd, fx), tp->name);
		int32_t np = hw_kr_array_v(rd, fx);
		tp->first = st->n_parts;
		for (int i = 0; i < np && !rd->err; i++) {
			dpart *p = dpart_add(st, &cap);
			if (!p)
				return -ENOMEM;
			p->topic = t;
			p->partition = hw_kr_i32(rd);
			hw_kbytes rec = hw_kr_nbytes_v(rd, fx);
			hw_kr_tags_v(rd, fx);
			if (rd->err)
				break;
			tp->n++;
			p->err = req_err ? req_err : resolve(s, tp, name_err, p);
			if (!p->err && rec.len <= 0)
				p->err = HW_ERR_CORRUPT_MESSAGE;
			if (!p->err)
				p->err = check_records(rec.p, (size_t)rec.len, v);
			if (p->err)
				continue;
			hw_msg m = { .type = HW_MSG_PRODUCE, .dst = s->cfg.node_id };
			m.u.produce = (hw_produce_req){ .acks = acks, .timeout_ms = timeout, .tp = p->tp,
							.records = rec.p, .records_len = (uint32_t)rec.len };
			p->local = true;
			/* acks=0: the engine appends as for acks=1 and answers us
			 * (the client gets nothing), so an error the replica
			 * manager finds closes the connection, as Kafka's
			 * KafkaApis does; requests behind it wait for the append,
			 * as Kafka's muted channel does */
			if (acks == 0)
				m.u.produce.acks = HW_ACKS_LEADER;
			int rc = ksrv_submit(s, r, &m, st->n_parts - 1, 1, false, pr_answer, pr_fail);
			if (rc < 0)
				p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER;
		}
		hw_kr_tags_v(rd, fx);
	}
	hw_kr_tags_v(rd, fx);
	if (rd->err)
		return rd->err;
	if (acks == 0) {
		r->no_response = true;
		/* Kafka closes an acks=0 connection on an error it cannot report */
		for (int i = 0; i < st->n_parts; i++)
			if (st->parts[i].err)
				return -EPIPE;
		r->finish = pr_finish_acks0;
		return 0;
	}
	r->finish = pr_finish;
	return 0;
}

/* ---- Fetch -------------------------------------------------------------------- */
/* Fetch v0-3 promise MessageSets of magic 0 (v0-1) or 1 (v2-3); the log holds
 * RecordBatch v2, which hiwater never rewrites. Kafka down-converts, or, with
 * the topic config message.downconversion.enable=false, answers each
 * partition it hosts UNSUPPORTED_VERSION without records (KafkaApis
 * maybeConvertFetchedData) — hiwater answers that way, at once, without an
 * engine fetch; partitions it does not host keep their own error
 * (docs/kafka.md "Versions"). */
static void fe_answer(hw_kreq *r, int idx, const hw_msg *m)
{
	(void)idx;
	dstate *st = r->state;
	if (m->type != HW_MSG_FETCH_RESP)
		return;
	const hw_fetch_resp *q = &m->u.fetch_resp;
	for (uint16_t k = 0; k < q->n_parts; k++) {
		const hw_fetch_resp_part *a = &q->parts[k];
		int i = find_part(st, a->tp, 0);
		if (i < 0)
			continue;
		dpart *p = &st->parts[i];
		p->answered = true;
		p->err = a->error ? a->error : q->error;
		if (p->err == HW_ERR_UNKNOWN_TOPIC_OR_PARTITION)
			p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER; /* the topic exists: not ours */
		p->hw = a->high_watermark;
		p->log_start = a->log_start_offset;
		for (uint16_t j = 0; j < q->n_preferred; j++) /* docs/racks.md */
			if (q->preferred[j].tp.topic_id == a->tp.topic_id &&
			    q->preferred[j].tp.partition == a->tp.partition)
				p->preferred = q->preferred[j].replica;
		if (a->records_len && a->records) {
			p->records = malloc(a->records_len);
			if (!p->records) {
				p->err = HW_ERR_UNKNOWN_SERVER_ERROR;
				continue;
			}
			memcpy(p->records, a->records, a->records_len);
			p->records_len = a->records_len;
		}
	}
}

static void fe_fail(hw_kreq *r, int idx, int16_t err)
{
	(void)idx;
	dstate *st = r->state;
	for (int i = 0; i < st->n_parts; i++)
		if (st->parts[i].local && !st->parts[i].answered)
			st->parts[i].err = err;
}

static void fe_finish(hw_kreq *r)
{
	dstate *st = r->state;
	hw_kw *w = &r->body;
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	if (v >= 1)
		hw_kw_i32(w, 0); /* throttle_time_ms */
	if (v >= 7) {
		hw_kw_i16(w, 0); /* error_code */
		hw_kw_i32(w, 0); /* session_id: no fetch sessions (full fetches) */
	}
	hw_kw_array_v(w, fx, st->n_topics);
	for (int t = 0; t < st->n_topics; t++) {
		const dtopic *tp = &st->topics[t];
		hw_kw_strz_v(w, fx, tp->name);
		hw_kw_array_v(w, fx, tp->n);
		for (int i = tp->first; i < tp->first + tp->n; i++) {
			dpart *p = &st->parts[i];
			if (p->local && !p->answered && !p->err)
				p->err = HW_ERR_NOT_LEADER_OR_FOLLOWER; /* the owner never answered */
			hw_kw_i32(w, p->partition);
			hw_kw_i16(w, p->err);
			ksrv_err(r, p->err);
			hw_kw_i64(w, p->hw);
			if (v >= 4) {
				hw_kw_i64(w, p->hw);         /* last_stable_offset = HW (no transactions) */
				if (v >= 5)
					hw_kw_i64(w, p->log_start);
				hw_kw_array_v(w, fx, 0);     /* aborted_transactions */
			}
			if (v >= 11)
				hw_kw_i32(w, p->preferred);  /* preferred_read_replica (docs/racks.md) */
			hw_kw_nbytes_v(w, fx, p->records ? p->records : (const uint8_t *)"", p->records_len);
			/* v12+ tags diverging_epoch / current_leader / snapshot_id:
			 * a consumer fetch (last_fetched_epoch -1) has none */
			hw_kw_tags_v(w, fx);
		}
		hw_kw_tags_v(w, fx);
	}
	hw_kw_tags_v(w, fx);
}

int hw_kapi_fetch(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	int16_t v = r->hdr.api_version;
	bool fx = r->hdr.flexible;
	(void)hw_kr_i32(rd); /* replica_id: served as a consumer */
	int32_t max_wait = hw_kr_i32(rd);
	int32_t min_bytes = hw_kr_i32(rd);
	int32_t max_bytes = v >= 3 ? hw_kr_i32(rd) : INT32_MAX; /* v0-2: only the per-partition limits */
	uint8_t isolation = v >= 4 ? (uint8_t)hw_kr_i8(rd) : 0;  /* v0-3: READ_UNCOMMITTED */
	if (v >= 7) {
		(void)hw_kr_i32(rd); /* session_id */
		(void)hw_kr_i32(rd); /* session_epoch */
	}
	int32_t nt = hw_kr_array_v(rd, fx);
	if (rd->err)
		return rd->err;
	dstate *st = dstate_new(r, nt);
	if (!st)
		return -ENOMEM;
	int cap = 0;
	hw_fetch_part *fp = NULL;
	int n_fp = 0;
	for (int t = 0; t < nt && !rd->err; t++) {
		dtopic *tp = &st->topics[st->n_topics++];
		int16_t name_err = ksrv_topic_name(hw_kr_str_v(rd, fx), tp->name);
		int32_t np = hw_kr_array_v(rd, fx);
		tp->first = st->n_parts;
		for (int i = 0; i < np && !rd->err; i++) {
			dpart *p = dpart_add(st, &cap);
			if (!p) {
				free(fp);
				return -ENOMEM;
			}
			p->topic = t;
			p->partition = hw_kr_i32(rd);
			int32_t cle = v >= 9 ? hw_kr_i32(rd) : -1;
			int64_t off = hw_kr_i64(rd);
			if (v >= 12)
				(void)hw_kr_i32(rd); /* last_fetched_epoch: followers' divergence check, consumers send -1 */
			if (v >= 5)
				(void)hw_kr_i64(rd); /* log_start_offset: followers only */
			int32_t pmax = hw_kr_i32(rd);
			hw_kr_tags_v(rd, fx);
			if (rd->err)
				break;
			tp->n++;
			p->err = resolve(s, tp, name_err, p);
			if (!p->err && v < 4)
				p->err = HW_ERR_UNSUPPORTED_VERSION; /* no down-conversion (the note above fe_answer) */
			if (p->err)
				continue;
			hw_fetch_part *f = realloc(fp, (size_t)(n_fp + 1) * sizeof(*fp));
			if (!f) {
				free(fp);
				return -ENOMEM;
			}
			fp = f;
			fp[n_fp++] = (hw_fetch_part){ .tp = p->tp, .fetch_offset = off, .current_leader_epoch = cle,
						      .last_fetched_epoch = -1, .log_start_offset = -1,
						      .partition_max_bytes = pmax };
			p->local = true;
		}
		hw_kr_tags_v(rd, fx);
	}
	if (v >= 7 && !rd->err) {
		int32_t nf = hw_kr_array_v(rd, fx); /* forgotten_topics_data: no sessions, nothing to forget */
		for (int i = 0; i < nf && !rd->err; i++) {
			(void)hw_kr_str_v(rd, fx);
			int32_t k = hw_kr_array_v(rd, fx);
			for (int j = 0; j < k && !rd->err; j++)
				(void)hw_kr_i32(rd);
			hw_kr_tags_v(rd, fx);
		}
	}
	char rack[HW_RACK_MAX] = "";
	if (v >= 11 && !rd->err) {
		/* rack_id (client.rack): follower reads and the preferred read
		 * replica (docs/racks.md); a longer one than broker.rack allows
		 * matches no broker and is dropped */
		hw_kstr k = hw_kr_str_v(rd, fx);
		if (!rd->err && k.p && k.len > 0 && (size_t)k.len < sizeof(rack) && !memchr(k.p, 0, (size_t)k.len)) {
			memcpy(rack, k.p, (size_t)k.len);
			rack[k.len] = 0;
		}
	}
	hw_kr_tags_v(rd, fx); /* v12+: cluster_id (tag 0) is not checked, as Kafka's consumers send none */
	if (rd->err || n_fp > UINT16_MAX) {
		free(fp);
		return rd->err ? rd->err : -E2BIG;
	}
	r->finish = fe_finish;
	if (n_fp) {
		if (s->cfg.fetch_max_wait_cap_ms > 0 && max_wait > s->cfg.fetch_max_wait_cap_ms)
			max_wait = s->cfg.fetch_max_wait_cap_ms;
		hw_msg m = { .type = HW_MSG_FETCH, .dst = s->cfg.node_id };
		m.u.fetch = (hw_fetch_req){ .replica_id = HW_CONSUMER_ID, .replica_epoch = -1, .max_wait_ms = max_wait,
					    .min_bytes = min_bytes, .max_bytes = max_bytes,
					    .isolation_level = isolation, .n_parts = (uint16_t)n_fp, .parts = fp };
		memcpy(m.u.fetch.rack_id, rack, sizeof(rack));
		if (ksrv_submit(s, r, &m, 0, n_fp, false, fe_answer, fe_fail) < 0)
			fe_fail(r, 0, HW_ERR_NOT_LEADER_OR_FOLLOWER);
	}
	free(fp);
	return 0;
}
