/* hw_wire_tags.c — the tagged section of PRODUCE, PRODUCE_RESP, FETCH and
 * FETCH_RESP (format and rules: hw_wire_tags.h, docs/wire.md "Tagged
 * fields"). One encode and one decode function per message type; each tag is
 * one `if` (encode, ascending tag order) and one `case` (decode).
 */
#include <errno.h>
#include <stdint.h>
#include "hw_wire_tags.h"

/* ---- writer: the section is built in a scratch buffer */
typedef struct tag_wr {
	hw_wr *w;
	unsigned n;            /* tags written */
	int last;              /* previous tag, -1 before the first */
} tag_wr;

/* Open tag `tag` (must be above the previous one). Returns where its u16
 * length goes, for tag_close. Errors latch in t->w. (Marked unused: a
 * message type may define no tag.) */
__attribute__((unused)) static size_t tag_open(tag_wr *t, uint8_t tag)
{
	if ((int)tag <= t->last) {
		hw_wr_einval(t->w);  /* encoder bug: tags out of order */
		return 0;
	}
	t->last = tag;
	t->n++;
	hw_wr_u8(t->w, tag);
	size_t at = t->w->pos;
	hw_wr_u16(t->w, 0);
	return at;
}

__attribute__((unused)) static void tag_close(tag_wr *t, size_t at)
{
	hw_wr *w = t->w;
	if (w->err)
		return;
	size_t len = w->pos - at - 2;
	w->buf[at] = (uint8_t)(len >> 8);  /* len <= HW_WIRE_TAGS_MAX < 65536 */
	w->buf[at + 1] = (uint8_t)len;
}

/* ---- per message type (the table in docs/wire.md "Tagged fields" lists
 * the tags) */
/* Tag 8 (PRODUCE, FETCH_RESP): a flag, present = set, empty value. */
static void enc_flag(tag_wr *t, uint8_t tag)
{
	tag_close(t, tag_open(t, tag));
}

static void enc_produce(tag_wr *t, const hw_produce_req *p)
{
	if (p->want_timing)
		enc_flag(t, 8); /* stage timing wanted (docs/breakdown.md) */
}

static void enc_produce_resp(tag_wr *t, const hw_produce_resp *p)
{
	if (p->has_timing) {
		/* tag 8: HW_PT__COUNT x u32 stage ns, i32 critical replica */
		size_t at = tag_open(t, 8);
		if (p->timing.critical < -1)
			hw_wr_einval(t->w);
		for (int i = 0; i < HW_PT__COUNT; i++)
			hw_wr_u32(t->w, p->timing.stage_ns[i]);
		hw_wr_u32(t->w, (uint32_t)p->timing.critical);
		tag_close(t, at);
	}
	if (p->n_acks) {
		/* tag 9: u8 n (1..HW_MAX_RF-1), n x {i32 id >= 0, u32 ack ns, u32 write ns} */
		size_t at = tag_open(t, 9);
		if (p->n_acks > HW_MAX_RF - 1)
			hw_wr_einval(t->w);
		hw_wr_u8(t->w, p->n_acks);
		for (unsigned i = 0; i < p->n_acks && i < HW_MAX_RF - 1; i++) {
			if (p->acks[i].id < 0)
				hw_wr_einval(t->w);
			hw_wr_u32(t->w, (uint32_t)p->acks[i].id);
			hw_wr_u32(t->w, p->acks[i].ack_ns);
			hw_wr_u32(t->w, p->acks[i].write_ns);
		}
		tag_close(t, at);
	}
}

static void enc_fetch(tag_wr *t, const hw_fetch_req *f)
{
	if (f->has_turnaround) {
		/* tag 8: the follower's turnaround, u32 write ns, u32 send ns */
		size_t at = tag_open(t, 8);
		hw_wr_u32(t->w, f->turn_write_ns);
		hw_wr_u32(t->w, f->turn_send_ns);
		tag_close(t, at);
	}
}

static void enc_fetch_resp(tag_wr *t, const hw_fetch_resp *f)
{
	if (f->want_turnaround)
		enc_flag(t, 8); /* report the turnaround in the next FETCH */
}

/* Returns 1 if the tag is known (its value decoded from v), 0 if not. */
static int dec_produce(hw_rd *v, hw_produce_req *p, uint8_t tag)
{
	(void)v;
	switch (tag) {
	case 8:
		p->want_timing = 1; /* empty value: anything in it is TRAILING */
		return 1;
	default:
		return 0;
	}
}

static int dec_produce_resp(hw_rd *v, hw_produce_resp *p, uint8_t tag)
{
	switch (tag) {
	case 8:
		p->has_timing = 1;
		for (int i = 0; i < HW_PT__COUNT; i++)
			p->timing.stage_ns[i] = hw_rd_u32(v);
		p->timing.critical = (int32_t)hw_rd_u32(v);
		if (!v->bad && p->timing.critical < -1)
			hw_rd_fail(v, HW_WIRE_DROP_BAD_FIELD);
		return 1;
	case 9: {
		unsigned n = hw_rd_u8(v);
		if (!v->bad && (n == 0 || n > HW_MAX_RF - 1)) {
			hw_rd_fail(v, HW_WIRE_DROP_BAD_COUNT); /* 0: the tag is absent instead */
			return 1;
		}
		for (unsigned i = 0; i < n && !v->bad; i++) {
			p->acks[i].id = (int32_t)hw_rd_u32(v);
			p->acks[i].ack_ns = hw_rd_u32(v);
			p->acks[i].write_ns = hw_rd_u32(v);
			if (!v->bad && p->acks[i].id < 0)
				hw_rd_fail(v, HW_WIRE_DROP_BAD_FIELD);
		}
		if (!v->bad)
			p->n_acks = (uint8_t)n;
		return 1;
	}
	default:
		return 0;
	}
}

static int dec_fetch(hw_rd *v, hw_fetch_req *f, uint8_t tag)
{
	switch (tag) {
	case 8:
		f->has_turnaround = 1;
		f->turn_write_ns = hw_rd_u32(v);
		f->turn_send_ns = hw_rd_u32(v);
		return 1;
	default:
		return 0;
	}
}

static int dec_fetch_resp(hw_rd *v, hw_fetch_resp *f, uint8_t tag)
{
	(void)v;
	switch (tag) {
	case 8:
		f->want_turnaround = 1;
		return 1;
	default:
		return 0;
	}
}

/* ---- dispatch */
static void enc_fields(tag_wr *t, const hw_msg *m)
{
	switch (m->type) {
	case HW_MSG_PRODUCE:      enc_produce(t, &m->u.produce); return;
	case HW_MSG_PRODUCE_RESP: enc_produce_resp(t, &m->u.produce_resp); return;
	case HW_MSG_FETCH:        enc_fetch(t, &m->u.fetch); return;
	case HW_MSG_FETCH_RESP:   enc_fetch_resp(t, &m->u.fetch_resp); return;
	default:                  return;
	}
}

static int dec_field(hw_rd *v, hw_msg *m, uint8_t tag)
{
	switch (m->type) {
	case HW_MSG_PRODUCE:      return dec_produce(v, &m->u.produce, tag);
	case HW_MSG_PRODUCE_RESP: return dec_produce_resp(v, &m->u.produce_resp, tag);
	case HW_MSG_FETCH:        return dec_fetch(v, &m->u.fetch, tag);
	case HW_MSG_FETCH_RESP:   return dec_fetch_resp(v, &m->u.fetch_resp, tag);
	default:                  return 0;
	}
}

/* Build m's section into buf; *len = 0 when m sets no tag. */
static int build(const hw_msg *m, uint8_t *buf, size_t cap, size_t *len)
{
	hw_wr w = { .buf = buf, .cap = cap, .max = cap };
	tag_wr t = { .w = &w, .last = -1 };
	hw_wr_u8(&w, 0);             /* n, patched below */
	enc_fields(&t, m);
	if (w.err)
		return w.err;
	if (t.n > UINT8_MAX)
		return -EMSGSIZE;
	buf[0] = (uint8_t)t.n;
	*len = t.n ? w.pos : 0;
	return 0;
}

int hw_wire_tags_len(const hw_msg *m)
{
	uint8_t buf[HW_WIRE_TAGS_MAX];
	size_t len = 0;
	int rc = build(m, buf, sizeof buf, &len);
	return rc ? rc : (int)len;
}

void hw_wire_enc_tags(hw_wr *w, const hw_msg *m)
{
	uint8_t buf[HW_WIRE_TAGS_MAX];
	size_t len = 0;
	if (w->err)
		return;
	int rc = build(m, buf, sizeof buf, &len);
	if (rc) {
		w->err = rc;
		return;
	}
	if (len)
		hw_wr_bytes(w, buf, len);
}

void hw_wire_dec_tags(hw_rd *r, hw_msg *m)
{
	if (r->bad || r->pos == r->len)
		return;                  /* no tagged section */
	unsigned n = hw_rd_u8(r);
	if (!r->bad && n == 0) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);   /* not canonical */
		return;
	}
	int last = -1;
	for (unsigned i = 0; i < n && !r->bad; i++) {
		uint8_t tag = hw_rd_u8(r);
		uint16_t len = hw_rd_u16(r);
		const uint8_t *val = hw_rd_take(r, len);
		if (r->bad)
			return;
		if ((int)tag <= last) {
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);   /* out of order or repeated */
			return;
		}
		last = tag;
		hw_rd v = { .p = val, .len = len, .pos = 0, .arena = r->arena };
		if (!dec_field(&v, m, tag)) {
			if (m->n_unknown_tags < UINT8_MAX)
				m->n_unknown_tags++;
			continue;
		}
		if (v.bad)
			hw_rd_fail(r, v.why);
		else if (v.pos != v.len)
			hw_rd_fail(r, HW_WIRE_DROP_TRAILING);
	}
}
