/* hw_wire.c — frame header, data-path message codecs, fetch-response split
 * and batch framing checks. The frame format is documented field by field
 * in hw_wire.h; admin messages are in hw_wire_admin.c, the replay windows in
 * hw_wire_replay.c.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <stdatomic.h>
#include "hw_wire.h"
#include "hw_wire_auth.h"
#include "hw_wire_io.h"
#include "hw_wire_piece.h"
#include "hw_wire_tags.h"

static const char *const drop_names[] = {
#define X(n, d) #n,
	HW_WIRE_DROP_TABLE(X)
#undef X
};
static const char *const drop_descs[] = {
#define X(n, d) d,
	HW_WIRE_DROP_TABLE(X)
#undef X
};

const char *hw_wire_drop_name(int reason)
{
	if (reason < 0 || reason >= HW_WIRE_DROP__COUNT)
		return "UNKNOWN_DROP";
	return drop_names[reason];
}

const char *hw_wire_drop_desc(int reason)
{
	if (reason < 0 || reason >= HW_WIRE_DROP__COUNT)
		return "unknown drop reason";
	return drop_descs[reason];
}

uint64_t hw_wire_stats_total_drops(const hw_wire_stats *s)
{
	uint64_t t = 0;
	for (int i = 0; i < HW_WIRE_DROP__COUNT; i++)
		t += s->drops[i];
	return t;
}

uint32_t hw_wire_new_incarnation(void)
{
	static atomic_uint last;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint32_t now = (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
	/* relaxed: only the value matters (uniqueness in this process, a
	 * nonce input), it orders no other memory */
	unsigned prev = atomic_load_explicit(&last, memory_order_relaxed), next;
	do
		next = (int32_t)(now - prev) > 0 ? now : prev + 1;
	while (!atomic_compare_exchange_weak_explicit(&last, &prev, next, memory_order_relaxed,
						      memory_order_relaxed));
	return next;
}

static int type_known(unsigned t)
{
	switch (t) {
#define X(name, id, plane, owner) case (id): return 1;
		HW_MSG_TABLE(X)
#undef X
	}
	return 0;
}

/* ---- record batch framing (RecordBatch v2: i64 baseOffset, i32 batchLength
 * counting the bytes after itself, i32 partitionLeaderEpoch, i8 magic ...) */
static size_t batch_size_at(const uint8_t *p, size_t left)
{
	if (left < HW_WIRE_BATCH_HDR)
		return 0;
	uint32_t blen = hw_be32_get(p + 8);
	if (blen < HW_WIRE_BATCH_HDR - 12 || blen > left - 12 || p[16] != 2)
		return 0;
	return (size_t)blen + 12;
}

int hw_wire_check_batches(const uint8_t *p, size_t len, uint32_t *n_batches)
{
	uint32_t n = 0;
	size_t off = 0;
	while (off < len) {
		size_t sz = batch_size_at(p + off, len - off);
		if (!sz)
			return -EBADMSG;
		off += sz;
		n++;
	}
	if (n_batches)
		*n_batches = n;
	return 0;
}

size_t hw_wire_batches_prefix(const uint8_t *p, size_t len, size_t room)
{
	size_t off = 0;
	while (off < len) {
		size_t sz = batch_size_at(p + off, len - off);
		if (!sz || off + sz > room)
			break;
		off += sz;
	}
	return off;
}

/* ---- encoding */

static void enc_hdr(hw_wr *w, const hw_wire_tx *tx, const hw_msg *m, uint8_t flags, uint16_t frag)
{
	hw_wr_u16(w, HW_WIRE_MAGIC);
	/* stream 0: version-1 bytes exactly; a stream needs version 2; a key
	 * makes every frame version 3 (hw_wire_auth.h) */
	hw_wr_u8(w, hw_wire_auth_on() ? HW_WIRE_VERSION_AUTH : tx->stream ? 2 : 1);
	hw_wr_u8(w, flags);   /* with the stream, patched at the end */
	hw_wr_u32(w, tx->cluster_id);
	hw_wr_u16(w, m->type);
	hw_wr_u16(w, frag);
	hw_wr_u32(w, m->correlation_id);
	hw_wr_i32(w, m->src);
	hw_wr_i32(w, m->dst);
	hw_wr_u32(w, tx->incarnation);
	hw_wr_u32(w, tx->seq);
	hw_wr_u32(w, 0);                 /* payload_len, patched at the end */
}

static void enc_pstate(hw_wr *w, const hw_partition_state *s)
{
	hw_wr_tp(w, s->tp);
	hw_wr_i32(w, s->leader);
	hw_wr_i32(w, s->leader_epoch);
	hw_wr_i32(w, s->partition_epoch);
	hw_wr_idset(w, &s->replicas);
	hw_wr_idset(w, &s->isr);
	hw_wr_idset(w, &s->elr);
	hw_wr_idset(w, &s->last_known_elr);
	hw_wr_u8(w, s->leader_recovery_state);
	hw_wr_i16(w, s->min_insync_replicas);
	hw_wr_u8(w, s->unclean_leader_election ? 1 : 0);
	hw_wr_str(w, s->topic, sizeof s->topic);
	/* trailers: the throttle sets, present when some replica is throttled
	 * or when a later trailer follows (then possibly both empty); the
	 * controller epoch, when > 0 or when the replica epochs follow (then
	 * possibly 0); the replicas' registered broker epochs */
	int epochs = s->n_replica_epochs > 0;
	if (epochs && s->n_replica_epochs != s->replicas.n) {
		hw_wr_einval(w); /* the decoder takes one epoch per replica */
		return;
	}
	if (s->leader_throttled.n || s->follower_throttled.n || s->controller_epoch > 0 || epochs) {
		hw_wr_idset(w, &s->leader_throttled);
		hw_wr_idset(w, &s->follower_throttled);
	}
	if (s->controller_epoch > 0 || epochs)
		hw_wr_i32(w, s->controller_epoch);
	if (epochs) {
		hw_wr_u8(w, s->n_replica_epochs);
		for (int i = 0; i < s->n_replica_epochs && i < HW_MAX_RF; i++)
			hw_wr_i64(w, s->replica_epochs[i]);
	}
	/* trailer: u8 deleted (needs the epochs), present iff deleted or the
	 * topic configs follow; then the topic configs (LOG rows only):
	 * u8 n (>= 1), n x { u8 id (ascending), i64 value } */
	uint32_t tset = s->tconf.set;
	if (s->deleted || tset) {
		if (!epochs) {
			hw_wr_einval(w);
			return;
		}
		hw_wr_u8(w, s->deleted ? 1 : 0);
	}
	if (tset)
		hw_wire_enc_tconf(w, &s->tconf);
}

#define FETCH_RESP_PART_FIXED (8 + 2 + 8 + 8 + 4 + 8 + 4 + 4 + 4)
/* The tagged section when it carries only BATCH_PIECE: u8 n, u8 tag,
 * u16 len, u32 batch_len, u32 piece_off, i64 base_offset. */
#define PIECE_TAG_BYTES (1 + 1 + 2 + 4 + 4 + 8)

static int64_t be64_at(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return (int64_t)v;
}

static void enc_part_fixed(hw_wr *w, const hw_fetch_resp_part *p)
{
	hw_wr_tp(w, p->tp);
	hw_wr_i16(w, p->error);
	hw_wr_i64(w, p->high_watermark);
	hw_wr_i64(w, p->log_start_offset);
	hw_wr_i32(w, p->diverging_epoch);
	hw_wr_i64(w, p->diverging_end_offset);
	hw_wr_i32(w, p->leader_id);
	hw_wr_i32(w, p->leader_epoch);
}

/* The piece the frame can take at this split position, or 0 when it must
 * wait for the next frame (docs/wire.md#batch-pieces): `avail` bytes of the
 * batch remain, `room` fit. A piece is cut at HW_WIRE_PIECE_MIN or more,
 * unless it is the batch's last. */
static uint32_t piece_take(size_t avail, size_t room)
{
	if (avail <= room)
		return (uint32_t)avail;
	return room >= HW_WIRE_PIECE_MIN ? (uint32_t)room : 0;
}

/* Encode the parts of a fetch response that fit, from split position *sp.
 * A batch larger than the room of a frame goes as pieces: a relayed piece
 * (p->piece_batch_len set) or a batch of whole-batch records cut here; a
 * piece is the last part of its frame. *piece_len / *piece_off describe
 * the piece this frame ends with (0: none) for the tagged section. */
static void enc_fetch_resp(hw_wr *w, const hw_fetch_resp *fr, hw_wire_split *sp, size_t n_pos,
			   uint32_t *piece_len, uint32_t *piece_off, int64_t *piece_base)
{
	uint16_t in_frame = 0;
	*piece_len = 0;
	*piece_off = 0;
	*piece_base = 0;
	hw_wr_i16(w, fr->error);
	hw_wr_u16(w, 0);                 /* n, patched */
	if (fr->n_parts > HW_WIRE_MAX_PARTS || (fr->n_parts && !fr->parts)) {
		hw_wr_einval(w);
		return;
	}
	while (!w->err && sp->part < fr->n_parts) {
		const hw_fetch_resp_part *p = &fr->parts[sp->part];
		if ((p->records_len && !p->records) ||
		    (p->piece_batch_len && (!p->records_len || p->piece_off > p->piece_batch_len ||
					    p->records_len > p->piece_batch_len - p->piece_off))) {
			hw_wr_einval(w);
			return;
		}
		if (w->total + FETCH_RESP_PART_FIXED + PIECE_TAG_BYTES > w->max) {
			if (!in_frame)
				w->err = -EMSGSIZE;
			break;
		}
		uint32_t left = p->records_len - sp->rec_off;
		const uint8_t *rec = left ? p->records + sp->rec_off : NULL;
		size_t room = w->max - w->total - FETCH_RESP_PART_FIXED - PIECE_TAG_BYTES;
		uint32_t take, plen = 0, poff = 0;
		int64_t pbase = 0;
		if (p->piece_batch_len) {
			/* phase 1: a relayed piece, perhaps cut smaller */
			take = piece_take(left, room);
			plen = p->piece_batch_len;
			poff = p->piece_off + sp->rec_off;
			pbase = p->piece_base;
		} else if (sp->piece_len) {
			/* phase 2: the rest of a batch this split is cutting */
			take = piece_take(sp->piece_start + sp->piece_len - sp->rec_off, room);
			plen = sp->piece_len;
			poff = sp->rec_off - sp->piece_start;
			pbase = be64_at(p->records + sp->piece_start);
		} else {
			/* phase 3: whole batches; one too large for any frame starts pieces */
			take = (uint32_t)hw_wire_batches_prefix(rec, left, room);
			if (take < left && hw_wire_batches_prefix(rec, left, left) != left) {
				hw_wr_einval(w);       /* records are not whole batches */
				return;
			}
			if (!take && left) {
				/* whole batches were checked above: the header is there */
				uint32_t bsz = 12u + ((uint32_t)rec[8] << 24 | (uint32_t)rec[9] << 16 |
						      (uint32_t)rec[10] << 8 | rec[11]);
				size_t fresh = w->max - HW_WIRE_HDR_LEN - 4 - FETCH_RESP_PART_FIXED - PIECE_TAG_BYTES;
				if (in_frame && bsz <= fresh)
					break;         /* fits a frame of its own: the next one */
				take = piece_take(bsz, room); /* bsz > room: a first piece, or none */
				plen = bsz;
				poff = 0;
				pbase = be64_at(rec);
				if (take) {
					sp->piece_start = sp->rec_off;
					sp->piece_len = bsz;
				}
			}
		}
		if (!take && left) {
			if (!in_frame)
				w->err = -EMSGSIZE;   /* not even a piece fits */
			break;
		}
		enc_part_fixed(w, p);
		hw_wr_records(w, rec, take);
		in_frame++;
		sp->rec_off += take;
		if (plen) {
			*piece_len = plen;
			*piece_off = poff;
			*piece_base = pbase;
			if (sp->piece_len && sp->rec_off == sp->piece_start + sp->piece_len)
				sp->piece_len = 0;     /* the batch's last piece */
		}
		if (sp->rec_off == p->records_len) {
			sp->part++;
			sp->rec_off = 0;
			sp->piece_len = 0;
		}
		if (plen || sp->rec_off)
			break;                 /* a piece ends its frame; or the frame is full inside this part */
	}
	if (!w->err) {
		w->buf[n_pos] = (uint8_t)(in_frame >> 8);
		w->buf[n_pos + 1] = (uint8_t)in_frame;
	}
}

static void enc_body(hw_wr *w, const hw_msg *m)
{
	switch (m->type) {
	case HW_MSG_PRODUCE: {
		const hw_produce_req *p = &m->u.produce;
		if ((p->records_len && !p->records) || hw_wire_check_batches(p->records, p->records_len, NULL)) {
			hw_wr_einval(w);
			return;
		}
		hw_wr_i16(w, p->acks);
		hw_wr_i32(w, p->timeout_ms);
		hw_wr_tp(w, p->tp);
		hw_wr_records(w, p->records, p->records_len);
		hw_wire_enc_tags(w, m);
		return;
	}
	case HW_MSG_PRODUCE_RESP: {
		const hw_produce_resp *p = &m->u.produce_resp;
		hw_wr_tp(w, p->tp);
		hw_wr_i16(w, p->error);
		hw_wr_i64(w, p->base_offset);
		hw_wr_i64(w, p->log_start_offset);
		hw_wire_enc_tags(w, m);
		return;
	}
	case HW_MSG_FETCH: {
		const hw_fetch_req *f = &m->u.fetch;
		if (f->n_parts > HW_WIRE_MAX_PARTS || (f->n_parts && !f->parts)) {
			hw_wr_einval(w);
			return;
		}
		hw_wr_i32(w, f->replica_id);
		hw_wr_i64(w, f->replica_epoch);
		hw_wr_i32(w, f->max_wait_ms);
		hw_wr_i32(w, f->min_bytes);
		hw_wr_i32(w, f->max_bytes);
		hw_wr_u8(w, f->isolation_level);
		hw_wr_u16(w, f->n_parts);
		for (unsigned i = 0; i < f->n_parts; i++) {
			const hw_fetch_part *p = &f->parts[i];
			hw_wr_tp(w, p->tp);
			hw_wr_i64(w, p->fetch_offset);
			hw_wr_i32(w, p->current_leader_epoch);
			hw_wr_i32(w, p->last_fetched_epoch);
			hw_wr_i64(w, p->log_start_offset);
			hw_wr_i32(w, p->partition_max_bytes);
		}
		hw_wire_enc_tags(w, m);
		return;
	}
	case HW_MSG_OFFSETS_FOR_EPOCH: {
		const hw_ofe_req *o = &m->u.ofe;
		if (o->n_parts > HW_WIRE_MAX_PARTS || (o->n_parts && !o->parts)) {
			hw_wr_einval(w);
			return;
		}
		hw_wr_i32(w, o->replica_id);
		hw_wr_u16(w, o->n_parts);
		for (unsigned i = 0; i < o->n_parts; i++) {
			hw_wr_tp(w, o->parts[i].tp);
			hw_wr_i32(w, o->parts[i].current_leader_epoch);
			hw_wr_i32(w, o->parts[i].leader_epoch);
		}
		return;
	}
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP: {
		const hw_ofe_resp *o = &m->u.ofe_resp;
		if (o->n_parts > HW_WIRE_MAX_PARTS || (o->n_parts && !o->parts)) {
			hw_wr_einval(w);
			return;
		}
		hw_wr_u16(w, o->n_parts);
		for (unsigned i = 0; i < o->n_parts; i++) {
			hw_wr_tp(w, o->parts[i].tp);
			hw_wr_i16(w, o->parts[i].error);
			hw_wr_i32(w, o->parts[i].leader_epoch);
			hw_wr_i64(w, o->parts[i].end_offset);
		}
		return;
	}
	case HW_MSG_ALTER_PARTITION: {
		const hw_alter_partition_req *a = &m->u.alter;
		hw_wr_i32(w, a->broker_id);
		hw_wr_i64(w, a->broker_epoch);
		hw_wr_tp(w, a->tp);
		hw_wr_i32(w, a->leader_epoch);
		hw_wr_i32(w, a->partition_epoch);
		hw_wr_idset(w, &a->new_isr);
		for (int i = 0; i < a->new_isr.n && i < HW_MAX_RF; i++)
			hw_wr_i64(w, a->new_isr_broker_epochs[i]);
		hw_wr_u8(w, a->leader_recovery_state);
		return;
	}
	case HW_MSG_ALTER_PARTITION_RESP: {
		const hw_alter_partition_resp *a = &m->u.alter_resp;
		hw_wr_i16(w, a->error);
		hw_wr_tp(w, a->tp);
		hw_wr_i32(w, a->leader_id);
		hw_wr_i32(w, a->leader_epoch);
		hw_wr_i32(w, a->partition_epoch);
		hw_wr_idset(w, &a->isr);
		hw_wr_u8(w, a->leader_recovery_state);
		if (a->controller_epoch > 0) /* trailer (ZooKeeper mode) */
			hw_wr_i32(w, a->controller_epoch);
		return;
	}
	case HW_MSG_PARTITION_STATE:
	case HW_MSG_PARTITION_STATE_ACK:
		enc_pstate(w, &m->u.pstate);
		return;
	default:
		if (!hw_wire_admin_encode(w, m) && !hw_wire_ctrl_encode(w, m))
			hw_wr_einval(w);
		return;
	}
}

static int encode_common(hw_wire_tx *tx, const hw_msg *m, hw_wire_split *split, hw_wr *w, size_t limit)
{
	hw_wire_split local = { 0 }, sp;
	if (!tx || !m || !type_known(m->type) || tx->stream > HW_WIRE_STREAM_MAX)
		return -EINVAL;
	if (w->max > limit)
		w->max = limit;
	sp = split ? *split : local;
	if (sp.done)
		return -EINVAL;
	const int auth = hw_wire_auth_on();
	if (auth) {            /* room for the salt and tag (hw_wire_auth_seal) */
		if (w->max < HW_WIRE_HDR_LEN + HW_WIRE_AUTH_TRAILER)
			return -EMSGSIZE;
		w->max -= HW_WIRE_AUTH_TRAILER;
	}
	/* flags and frag are patched once we know whether more frames follow */
	enc_hdr(w, tx, m, 0, sp.frag);
	if (m->type == HW_MSG_FETCH_RESP) {
		/* every frame of a split response carries the whole tagged
		 * section: reserve its room before filling the frame */
		int tags = hw_wire_tags_len(m);
		if (tags < 0)
			return tags;
		if (w->max < (size_t)tags)
			return -EMSGSIZE;
		size_t n_pos = w->pos + 2;
		/* (enc_fetch_resp keeps room for a BATCH_PIECE tag on its own) */
		w->max -= (size_t)tags;
		hw_msg framed = *m;    /* the section with this frame's piece, if any */
		enc_fetch_resp(w, &m->u.fetch_resp, &sp, n_pos, &framed.u.fetch_resp.frame_piece_len,
			       &framed.u.fetch_resp.frame_piece_off, &framed.u.fetch_resp.frame_piece_base);
		w->max += (size_t)tags;
		hw_wire_enc_tags(w, &framed);
		if (!w->err && sp.part < m->u.fetch_resp.n_parts && !split)
			w->err = -EMSGSIZE;    /* caller did not ask for a split */
	} else {
		sp.part = 0;
		enc_body(w, m);
	}
	hw_wr_flush_seg(w);
	if (w->err)
		return w->err;
	int more = m->type == HW_MSG_FETCH_RESP && sp.part < m->u.fetch_resp.n_parts;
	/* a relayed frame that was not its response's last (more = 1, as the
	 * decoder set it) keeps MORE on its own last frame */
	int flag_more = more || (m->type == HW_MSG_FETCH_RESP && m->u.fetch_resp.more);
	uint32_t plen = (uint32_t)(w->total - HW_WIRE_HDR_LEN);
	w->buf[3] = (uint8_t)((flag_more ? HW_WIRE_F_MORE : 0) | (tx->stream << HW_WIRE_STREAM_SHIFT));
	hw_be32_put(w->buf + 32, plen);
	if (auth) {
		int rc = hw_wire_auth_seal(w);
		if (rc)
			return rc;
	}
	sp.frag++;
	sp.done = !more;
	if (split)
		*split = sp;
	/* a wrapped seq would repeat a nonce: a new incarnation instead
	 * (receivers take it as a restart of the sender) */
	if (++tx->seq == 0)
		tx->incarnation = hw_wire_new_incarnation();
	return (int)w->total;
}

int hw_wire_encode_iov(hw_wire_tx *tx, const hw_msg *m, hw_wire_split *split,
		       size_t max_frame, uint8_t *hdrbuf, size_t hdrcap,
		       struct iovec *iov, int iov_cap, int *n_iov, uint8_t *rec_iov)
{
	if (!hdrbuf || !iov || !n_iov || iov_cap < 1)
		return -EINVAL;
	hw_wr w = { .buf = hdrbuf, .cap = hdrcap, .max = max_frame,
		    .iov = iov, .iov_cap = iov_cap, .rec_iov = rec_iov };
	int rc = encode_common(tx, m, split, &w, HW_WIRE_MAX_FRAME);
	*n_iov = rc > 0 ? w.n_iov : 0;
	return rc;
}

int hw_wire_encode(hw_wire_tx *tx, const hw_msg *m, hw_wire_split *split, uint8_t *buf, size_t cap)
{
	if (!buf)
		return -EINVAL;
	hw_wr w = { .buf = buf, .cap = cap, .max = cap };
	return encode_common(tx, m, split, &w, HW_WIRE_MAX_FRAME);
}

size_t hw_wire_local_bound(const hw_msg *m)
{
	size_t n = HW_WIRE_MAX_FRAME;
	if (m->type == HW_MSG_PRODUCE)
		n += m->u.produce.records_len;
	else if (m->type == HW_MSG_FETCH_RESP && m->u.fetch_resp.parts)
		for (uint16_t i = 0; i < m->u.fetch_resp.n_parts; i++)
			n += m->u.fetch_resp.parts[i].records_len;
	return n < HW_WIRE_LOCAL_MAX_FRAME ? n : HW_WIRE_LOCAL_MAX_FRAME;
}

int hw_wire_encode_local(hw_wire_tx *tx, const hw_msg *m, uint8_t *buf, size_t cap)
{
	if (!buf)
		return -EINVAL;
	hw_wr w = { .buf = buf, .cap = cap, .max = cap };
	return encode_common(tx, m, NULL, &w, HW_WIRE_LOCAL_MAX_FRAME);
}

/* ---- decoding */

static int decode_hdr(const uint8_t *buf, size_t len, uint32_t cluster_id, hw_wire_hdr *h, hw_wire_drop *why,
		      size_t limit)
{
	hw_wire_drop d;
	if (!buf || len < HW_WIRE_HDR_LEN) {
		d = HW_WIRE_DROP_TRUNCATED;
		goto bad;
	}
	if (len > limit) {
		d = HW_WIRE_DROP_OVERSIZED;
		goto bad;
	}
	hw_rd r = { .p = buf, .len = len };
	if (hw_rd_u16(&r) != HW_WIRE_MAGIC) {
		d = HW_WIRE_DROP_BAD_MAGIC;
		goto bad;
	}
	h->version = hw_rd_u8(&r);
	h->flags = hw_rd_u8(&r);
	h->cluster_id = hw_rd_u32(&r);
	h->type = hw_rd_u16(&r);
	h->frag = hw_rd_u16(&r);
	h->correlation_id = hw_rd_u32(&r);
	h->src = hw_rd_i32(&r);
	h->dst = hw_rd_i32(&r);
	h->incarnation = hw_rd_u32(&r);
	h->seq = hw_rd_u32(&r);
	h->payload_len = hw_rd_u32(&r);
	if (h->version < HW_WIRE_VERSION_MIN || h->version > HW_WIRE_VERSION) {
		d = HW_WIRE_DROP_BAD_VERSION;
		goto bad;
	}
	if (hw_wire_auth_on() != (h->version == HW_WIRE_VERSION_AUTH)) {
		/* with a key only version 3; without one version 3 cannot be checked */
		d = hw_wire_auth_on() ? HW_WIRE_DROP_NO_MAC : HW_WIRE_DROP_BAD_MAC;
		goto bad;
	}
	h->stream = h->version >= 2 ? (uint8_t)(h->flags >> HW_WIRE_STREAM_SHIFT) : 0;  /* 2 and 3 */
	if (h->version >= 2)
		h->flags &= (uint8_t)((1u << HW_WIRE_STREAM_SHIFT) - 1);
	if (h->flags & ~HW_WIRE_F_MORE) {
		d = HW_WIRE_DROP_BAD_FLAGS;   /* reserved bits, or a stream in v1 */
		goto bad;
	}
	if (h->cluster_id != cluster_id) {
		d = HW_WIRE_DROP_FOREIGN_CLUSTER;
		goto bad;
	}
	if (!type_known(h->type)) {
		d = HW_WIRE_DROP_UNKNOWN_TYPE;
		goto bad;
	}
	if ((h->flags & HW_WIRE_F_MORE) && h->type != HW_MSG_FETCH_RESP) {
		d = HW_WIRE_DROP_BAD_FLAGS;   /* only fetch responses are split */
		goto bad;
	}
	size_t trailer = h->version == HW_WIRE_VERSION_AUTH ? HW_WIRE_AUTH_TRAILER : 0;
	if (len < HW_WIRE_HDR_LEN + trailer || h->payload_len != len - HW_WIRE_HDR_LEN - trailer) {
		d = HW_WIRE_DROP_LEN_MISMATCH;
		goto bad;
	}
	return 0;
bad:
	if (why)
		*why = d;
	return -EBADMSG;
}

/* A batch piece (docs/wire.md#batch-pieces) on the last of the n parts:
 * bytes [off, off + len) of one batch of blen bytes, never the whole batch,
 * and a first piece that starts with that batch's header. */
static void dec_batch_piece(hw_rd *r, hw_fetch_resp_part *parts, uint32_t n, uint32_t blen, uint32_t off,
			    int64_t base)
{
	if (!n || !parts) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return;
	}
	hw_fetch_resp_part *p = &parts[n - 1];
	uint32_t len = p->records_len;
	if (!len || blen < HW_WIRE_BATCH_HDR || blen > HW_WIRE_PIECE_MAX_BATCH || off > blen ||
	    len > blen - off || len == blen) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return;
	}
	if (off == 0) {
		const uint8_t *b = p->records;
		if (len < HW_WIRE_BATCH_HDR) {
			hw_rd_fail(r, HW_WIRE_DROP_BAD_RECORDS);
			return;
		}
		uint32_t bl = (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
		if ((uint64_t)bl + 12 != blen || b[16] != 2 || be64_at(b) != base) {
			hw_rd_fail(r, HW_WIRE_DROP_BAD_RECORDS);
			return;
		}
	}
	if (base < 0) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return;
	}
	p->piece_batch_len = blen;
	p->piece_off = off;
	p->piece_base = base;
}

static void dec_pstate(hw_rd *r, hw_partition_state *s)
{
	s->tp = hw_rd_tp(r);
	s->leader = hw_rd_i32(r);
	s->leader_epoch = hw_rd_i32(r);
	s->partition_epoch = hw_rd_i32(r);
	hw_rd_idset(r, &s->replicas);
	hw_rd_idset(r, &s->isr);
	hw_rd_idset(r, &s->elr);
	hw_rd_idset(r, &s->last_known_elr);
	s->leader_recovery_state = hw_rd_u8(r);
	if (s->leader_recovery_state > HW_LRS_RECOVERING)
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
	s->min_insync_replicas = hw_rd_i16(r);
	s->unclean_leader_election = hw_rd_bool(r);
	hw_rd_str(r, s->topic, sizeof s->topic);
	/* optional trailers: the throttle sets, present iff some replica is
	 * throttled or a later trailer follows (one encoding per message:
	 * a pair of empty sets with nothing after is refused); then i32
	 * controller_epoch (> 0, or >= 0 when the replica epochs follow); then
	 * u8 n (== replicas.n, >= 1) and n x i64 registered broker epochs
	 * (>= -1) */
	if (!r->bad && r->len - r->pos >= 2) { /* a lone extra byte is TRAILING */
		hw_rd_idset(r, &s->leader_throttled);
		hw_rd_idset(r, &s->follower_throttled);
		if (!r->bad && r->len - r->pos >= 4) {
			s->controller_epoch = hw_rd_i32(r);
			int epochs = !r->bad && r->len - r->pos >= 1 + 8;
			if (s->controller_epoch < 0 || (!epochs && s->controller_epoch == 0))
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			if (epochs && !r->bad) {
				uint8_t n = hw_rd_u8(r);
				if (n == 0 || n != s->replicas.n)
					hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
				for (int i = 0; i < n && !r->bad; i++) {
					s->replica_epochs[i] = hw_rd_i64(r);
					if (s->replica_epochs[i] < -1)
						hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
				}
				s->n_replica_epochs = r->bad ? 0 : n;
				/* then u8 deleted, present iff 1 or the topic
				 * configs follow (0 with nothing after is not
				 * canonical) */
				if (!r->bad && r->pos < r->len) {
					s->deleted = hw_rd_u8(r);
					if (s->deleted > 1 || (s->deleted == 0 && r->pos == r->len))
						hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
					/* a lone extra byte is TRAILING */
					if (!r->bad && r->len - r->pos >= 1 + 9)
						hw_wire_dec_tconf(r, &s->tconf);
					else if (!r->bad && s->deleted == 0)
						hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
				}
			}
		} else if (!r->bad && !s->leader_throttled.n && !s->follower_throttled.n) {
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		}
	}
}

static void dec_body(hw_rd *r, hw_msg *m)
{
	switch (m->type) {
	case HW_MSG_PRODUCE: {
		hw_produce_req *p = &m->u.produce;
		p->acks = hw_rd_i16(r);
		if (p->acks != HW_ACKS_NONE && p->acks != HW_ACKS_LEADER && p->acks != HW_ACKS_ALL)
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		p->timeout_ms = hw_rd_i32(r);
		p->tp = hw_rd_tp(r);
		hw_rd_records(r, &p->records, &p->records_len);
		hw_wire_dec_tags(r, m);
		return;
	}
	case HW_MSG_PRODUCE_RESP: {
		hw_produce_resp *p = &m->u.produce_resp;
		p->tp = hw_rd_tp(r);
		p->error = hw_rd_i16(r);
		p->base_offset = hw_rd_i64(r);
		p->log_start_offset = hw_rd_i64(r);
		hw_wire_dec_tags(r, m);
		return;
	}
	case HW_MSG_FETCH: {
		hw_fetch_req *f = &m->u.fetch;
		f->replica_id = hw_rd_i32(r);
		f->replica_epoch = hw_rd_i64(r);
		f->max_wait_ms = hw_rd_i32(r);
		f->min_bytes = hw_rd_i32(r);
		f->max_bytes = hw_rd_i32(r);
		f->isolation_level = hw_rd_bool(r);
		uint32_t n = hw_rd_count(r, hw_rd_u16(r), 36);
		hw_fetch_part *parts = n ? hw_rd_alloc(r, n * sizeof *parts) : NULL;
		for (uint32_t i = 0; parts && i < n; i++) {
			parts[i].tp = hw_rd_tp(r);
			parts[i].fetch_offset = hw_rd_i64(r);
			parts[i].current_leader_epoch = hw_rd_i32(r);
			parts[i].last_fetched_epoch = hw_rd_i32(r);
			parts[i].log_start_offset = hw_rd_i64(r);
			parts[i].partition_max_bytes = hw_rd_i32(r);
		}
		f->n_parts = (uint16_t)n;
		f->parts = parts;
		hw_wire_dec_tags(r, m);
		return;
	}
	case HW_MSG_FETCH_RESP: {
		hw_fetch_resp *f = &m->u.fetch_resp;
		f->error = hw_rd_i16(r);
		uint32_t n = hw_rd_count(r, hw_rd_u16(r), FETCH_RESP_PART_FIXED);
		hw_fetch_resp_part *parts = n ? hw_rd_alloc(r, n * sizeof *parts) : NULL;
		for (uint32_t i = 0; parts && i < n; i++) {
			hw_fetch_resp_part *p = &parts[i];
			p->tp = hw_rd_tp(r);
			p->error = hw_rd_i16(r);
			p->high_watermark = hw_rd_i64(r);
			p->log_start_offset = hw_rd_i64(r);
			p->diverging_epoch = hw_rd_i32(r);
			p->diverging_end_offset = hw_rd_i64(r);
			p->leader_id = hw_rd_i32(r);
			p->leader_epoch = hw_rd_i32(r);
			hw_rd_records_raw(r, &p->records, &p->records_len);
			p->records_ref = NULL;
			p->piece_batch_len = 0;
			p->piece_off = 0;
			p->piece_base = 0;
		}
		f->n_parts = (uint16_t)n;
		f->parts = parts;
		hw_wire_dec_tags(r, m);
		if (!r->bad && f->frame_piece_len)
			dec_batch_piece(r, parts, n, f->frame_piece_len, f->frame_piece_off, f->frame_piece_base);
		f->frame_piece_len = 0;   /* now on the part: the message-level fields are the codec's */
		f->frame_piece_off = 0;
		f->frame_piece_base = 0;
		for (uint32_t i = 0; !r->bad && parts && i < n; i++)
			if (!parts[i].piece_batch_len &&
			    hw_wire_check_batches(parts[i].records, parts[i].records_len, NULL) != 0)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_RECORDS);
		return;
	}
	case HW_MSG_OFFSETS_FOR_EPOCH: {
		hw_ofe_req *o = &m->u.ofe;
		o->replica_id = hw_rd_i32(r);
		uint32_t n = hw_rd_count(r, hw_rd_u16(r), 16);
		hw_ofe_part *parts = n ? hw_rd_alloc(r, n * sizeof *parts) : NULL;
		for (uint32_t i = 0; parts && i < n; i++) {
			parts[i].tp = hw_rd_tp(r);
			parts[i].current_leader_epoch = hw_rd_i32(r);
			parts[i].leader_epoch = hw_rd_i32(r);
		}
		o->n_parts = (uint16_t)n;
		o->parts = parts;
		return;
	}
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP: {
		hw_ofe_resp *o = &m->u.ofe_resp;
		uint32_t n = hw_rd_count(r, hw_rd_u16(r), 22);
		hw_ofe_resp_part *parts = n ? hw_rd_alloc(r, n * sizeof *parts) : NULL;
		for (uint32_t i = 0; parts && i < n; i++) {
			parts[i].tp = hw_rd_tp(r);
			parts[i].error = hw_rd_i16(r);
			parts[i].leader_epoch = hw_rd_i32(r);
			parts[i].end_offset = hw_rd_i64(r);
		}
		o->n_parts = (uint16_t)n;
		o->parts = parts;
		return;
	}
	case HW_MSG_ALTER_PARTITION: {
		hw_alter_partition_req *a = &m->u.alter;
		a->broker_id = hw_rd_i32(r);
		a->broker_epoch = hw_rd_i64(r);
		a->tp = hw_rd_tp(r);
		a->leader_epoch = hw_rd_i32(r);
		a->partition_epoch = hw_rd_i32(r);
		hw_rd_idset(r, &a->new_isr);
		for (int i = 0; i < HW_MAX_RF; i++)
			a->new_isr_broker_epochs[i] = i < a->new_isr.n ? hw_rd_i64(r) : -1;
		a->leader_recovery_state = hw_rd_u8(r);
		if (a->leader_recovery_state > HW_LRS_RECOVERING)
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return;
	}
	case HW_MSG_ALTER_PARTITION_RESP: {
		hw_alter_partition_resp *a = &m->u.alter_resp;
		a->error = hw_rd_i16(r);
		a->tp = hw_rd_tp(r);
		a->leader_id = hw_rd_i32(r);
		a->leader_epoch = hw_rd_i32(r);
		a->partition_epoch = hw_rd_i32(r);
		hw_rd_idset(r, &a->isr);
		a->leader_recovery_state = hw_rd_u8(r);
		if (a->leader_recovery_state > HW_LRS_RECOVERING)
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		if (!r->bad && r->len - r->pos >= 4) { /* trailer: controller epoch */
			a->controller_epoch = hw_rd_i32(r);
			if (a->controller_epoch <= 0)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		}
		return;
	}
	case HW_MSG_PARTITION_STATE:
	case HW_MSG_PARTITION_STATE_ACK:
		dec_pstate(r, &m->u.pstate);
		return;
	default:
		if (!hw_wire_admin_decode(r, m) && !hw_wire_ctrl_decode(r, m))
			hw_rd_fail(r, HW_WIRE_DROP_UNKNOWN_TYPE);
		return;
	}
}

int hw_wire_decode_hdr(const uint8_t *buf, size_t len, uint32_t cluster_id,
		       hw_wire_hdr *h, hw_wire_drop *why)
{
	return decode_hdr(buf, len, cluster_id, h, why, HW_WIRE_MAX_FRAME);
}

static int decode_common(const uint8_t *buf, size_t len, uint32_t cluster_id, hw_wire_arena *arena,
			 hw_wire_hdr *h, hw_msg *m, hw_wire_drop *why, hw_wire_stats *stats, size_t limit)
{
	hw_wire_drop d = HW_WIRE_DROP_TRUNCATED;
	hw_wire_hdr hl;
	if (!h)
		h = &hl;
	memset(m, 0, sizeof *m);
	if (decode_hdr(buf, len, cluster_id, h, &d, limit) != 0)
		goto bad;
	/* the tag before any byte of the body is trusted */
	if (h->version == HW_WIRE_VERSION_AUTH && hw_wire_auth_verify(buf, len) != 0) {
		d = HW_WIRE_DROP_BAD_MAC;
		goto bad;
	}
	m->type = h->type;
	m->src = h->src;
	m->dst = h->dst;
	m->correlation_id = h->correlation_id;
	hw_rd r = { .p = buf, .len = HW_WIRE_HDR_LEN + h->payload_len, .pos = HW_WIRE_HDR_LEN, .arena = arena };
	dec_body(&r, m);
	if (!r.bad && r.pos != r.len)
		hw_rd_fail(&r, HW_WIRE_DROP_TRAILING);
	if (!r.bad && m->type == HW_MSG_FETCH_RESP)
		m->u.fetch_resp.more = (h->flags & HW_WIRE_F_MORE) != 0;
	if (r.bad) {
		d = r.why;
		memset(m, 0, sizeof *m);
		goto bad;
	}
	if (stats) {
		stats->rx_frames++;
		stats->rx_bytes += len;
		if (m->n_unknown_tags)
			stats->rx_unknown_tags++;
	}
	return 0;
bad:
	if (why)
		*why = d;
	if (stats)
		stats->drops[d]++;
	return -EBADMSG;
}

int hw_wire_decode(const uint8_t *buf, size_t len, uint32_t cluster_id,
		   hw_wire_arena *arena, hw_wire_hdr *h, hw_msg *m,
		   hw_wire_drop *why, hw_wire_stats *stats)
{
	return decode_common(buf, len, cluster_id, arena, h, m, why, stats, HW_WIRE_MAX_FRAME);
}

int hw_wire_decode_local(const uint8_t *buf, size_t len, uint32_t cluster_id,
			 hw_wire_arena *arena, hw_wire_hdr *h, hw_msg *m,
			 hw_wire_drop *why, hw_wire_stats *stats)
{
	return decode_common(buf, len, cluster_id, arena, h, m, why, stats, HW_WIRE_LOCAL_MAX_FRAME);
}
