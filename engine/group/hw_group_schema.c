/* hw_group_schema.c — `__consumer_offsets` key/value codecs and the
 * group -> partition hash (see hw_group_schema.h for the layouts). */
#include <errno.h>
#include <string.h>
#include "hw_group_schema.h"

const char *hw_gschema_rc_name(int rc)
{
	switch (rc) {
#define X(n, v, d) case (v): return #n;
		HW_GSCHEMA_RC_TABLE(X)
#undef X
	}
	return "?";
}

/* ---- java String.hashCode over UTF-8 ------------------------------------ */
/* Decode one code point at s[0..n) with Unicode's "maximal subpart"
 * replacement (what Java's UTF-8 decoder does): returns bytes consumed
 * (>= 1) and *cp (U+FFFD for malformed input). */
static size_t utf8_next(const uint8_t *s, size_t n, uint32_t *cp)
{
	uint8_t b = s[0];
	if (b < 0x80) { *cp = b; return 1; }
	size_t need; uint32_t v; uint8_t lo = 0x80, hi = 0xBF;
	if (b >= 0xC2 && b <= 0xDF) { need = 1; v = b & 0x1Fu; }
	else if (b >= 0xE0 && b <= 0xEF) {
		need = 2; v = b & 0x0Fu;
		if (b == 0xE0) lo = 0xA0;
		if (b == 0xED) hi = 0x9F; /* no UTF-8-encoded surrogates */
	} else if (b >= 0xF0 && b <= 0xF4) {
		need = 3; v = b & 0x07u;
		if (b == 0xF0) lo = 0x90;
		if (b == 0xF4) hi = 0x8F;
	} else { *cp = 0xFFFD; return 1; }
	size_t i = 1;
	for (; i <= need; i++) {
		if (i >= n) { *cp = 0xFFFD; return i; }
		uint8_t c = s[i];
		if (c < lo || c > hi) { *cp = 0xFFFD; return i; }
		lo = 0x80; hi = 0xBF;
		v = (v << 6) | (c & 0x3Fu);
	}
	*cp = v;
	return i;
}

int32_t hw_gschema_java_hash(const void *utf8, size_t len)
{
	const uint8_t *s = utf8;
	uint32_t h = 0; /* unsigned: Java's int overflow wraps, C's would be UB */
	size_t i = 0;
	while (i < len) {
		uint32_t cp;
		i += utf8_next(s + i, len - i, &cp);
		if (cp >= 0x10000) {
			uint32_t u = cp - 0x10000;
			h = 31u * h + (0xD800u + (u >> 10));
			h = 31u * h + (0xDC00u + (u & 0x3FFu));
		} else {
			h = 31u * h + cp;
		}
	}
	return (int32_t)h;
}

int32_t hw_gschema_partition_for(const void *group, size_t len, int32_t partitions)
{
	if (partitions < 1)
		return -EINVAL;
	int32_t h = hw_gschema_java_hash(group, len);
	int32_t a = h == INT32_MIN ? 0 : (h < 0 ? -h : h); /* Kafka's Utils.abs */
	return a % partitions;
}

/* ---- bounded reader ------------------------------------------------------- */
typedef struct rd {
	const uint8_t *p, *end;
	int rc;
} rd;

static int rd_need(rd *r, size_t n)
{
	if (r->rc)
		return 0;
	if ((size_t)(r->end - r->p) < n) {
		r->rc = HW_GSCHEMA_ETRUNC;
		return 0;
	}
	return 1;
}

static int16_t rd_i16(rd *r)
{
	if (!rd_need(r, 2)) return 0;
	int16_t v = (int16_t)((uint16_t)r->p[0] << 8 | r->p[1]);
	r->p += 2;
	return v;
}

static int32_t rd_i32(rd *r)
{
	if (!rd_need(r, 4)) return 0;
	uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return (int32_t)v;
}

static int64_t rd_i64(rd *r)
{
	uint64_t hi = (uint32_t)rd_i32(r), lo = (uint32_t)rd_i32(r);
	return (int64_t)(hi << 32 | lo);
}

/* STRING (nullable = 0) or NULLABLE_STRING (nullable = 1). */
static hw_gslice rd_str(rd *r, int nullable)
{
	hw_gslice s = { NULL, -1 };
	int16_t n = rd_i16(r);
	if (r->rc) return s;
	if (n < 0) {
		if (!nullable || n != -1) r->rc = HW_GSCHEMA_ELENGTH;
		return s;
	}
	if (!rd_need(r, (size_t)n)) return s;
	s.p = r->p; s.len = n;
	r->p += n;
	return s;
}

static hw_gslice rd_bytes(rd *r)
{
	hw_gslice s = { NULL, -1 };
	int32_t n = rd_i32(r);
	if (r->rc) return s;
	if (n < 0) { r->rc = HW_GSCHEMA_ELENGTH; return s; }
	if (!rd_need(r, (size_t)n)) return s;
	s.p = r->p; s.len = n;
	r->p += n;
	return s;
}

static int rd_done(rd *r)
{
	if (r->rc) return r->rc;
	return r->p == r->end ? 0 : HW_GSCHEMA_ETRAILING;
}

/* ---- bounded writer (size-only when buf == NULL) ------------------------- */
typedef struct wr {
	uint8_t *buf;
	size_t cap, pos;
	int bad;
} wr;

static void wr_raw(wr *w, const void *p, size_t n)
{
	if (w->buf && w->pos + n <= w->cap && n)
		memcpy(w->buf + w->pos, p, n);
	else if (w->buf && w->pos + n > w->cap)
		w->bad = 1;
	w->pos += n;
}

static void wr_i16(wr *w, int16_t v) { uint8_t b[2] = { (uint8_t)((uint16_t)v >> 8), (uint8_t)v }; wr_raw(w, b, 2); }
static void wr_i32(wr *w, int32_t v)
{
	uint32_t u = (uint32_t)v;
	uint8_t b[4] = { (uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u };
	wr_raw(w, b, 4);
}
static void wr_i64(wr *w, int64_t v) { wr_i32(w, (int32_t)((uint64_t)v >> 32)); wr_i32(w, (int32_t)(uint64_t)v); }

static void wr_str(wr *w, const void *s, size_t n, int null)
{
	if (null) { wr_i16(w, -1); return; }
	if (n > INT16_MAX) { w->bad = 1; return; }
	wr_i16(w, (int16_t)n);
	wr_raw(w, s, n);
}
static void wr_cstr(wr *w, const char *s) { wr_str(w, s, s ? strlen(s) : 0, s == NULL); }
static void wr_bytes(wr *w, const void *p, int32_t n)
{
	if (n < 0) n = 0;
	wr_i32(w, n);
	wr_raw(w, p, (size_t)n);
}

static int wr_end(wr *w)
{
	if (w->bad || w->pos > INT32_MAX) return -EMSGSIZE;
	return (int)w->pos;
}

/* ---- keys ---------------------------------------------------------------- */
int hw_gschema_key_decode(const void *buf, size_t len, hw_gschema_key *k)
{
	rd r = { buf, (const uint8_t *)buf + len, 0 };
	memset(k, 0, sizeof *k);
	k->topic.len = -1;
	k->version = rd_i16(&r);
	if (r.rc) return r.rc;
	switch (k->version) {
	case HW_GSCHEMA_KEY_OFFSET_V0:
	case HW_GSCHEMA_KEY_OFFSET_V1:
		k->group = rd_str(&r, 0);
		k->topic = rd_str(&r, 0);
		k->partition = rd_i32(&r);
		break;
	case HW_GSCHEMA_KEY_GROUP_V2:
		k->group = rd_str(&r, 0);
		break;
	default:
		return HW_GSCHEMA_EVERSION;
	}
	return rd_done(&r);
}

int hw_gschema_offset_key_encode(void *buf, size_t cap, const char *group, size_t glen,
				 const char *topic, size_t tlen, int32_t partition)
{
	wr w = { buf, cap, 0, 0 };
	wr_i16(&w, HW_GSCHEMA_KEY_OFFSET_V1);
	wr_str(&w, group, glen, 0);
	wr_str(&w, topic, tlen, 0);
	wr_i32(&w, partition);
	return wr_end(&w);
}

int hw_gschema_group_key_encode(void *buf, size_t cap, const char *group, size_t glen)
{
	wr w = { buf, cap, 0, 0 };
	wr_i16(&w, HW_GSCHEMA_KEY_GROUP_V2);
	wr_str(&w, group, glen, 0);
	return wr_end(&w);
}

/* ---- offset values --------------------------------------------------------- */
int hw_gschema_offset_value_decode(const void *buf, size_t len, hw_gschema_offset *v)
{
	rd r = { buf, (const uint8_t *)buf + len, 0 };
	memset(v, 0, sizeof *v);
	v->leader_epoch = -1;
	v->expire_timestamp = -1;
	v->version = rd_i16(&r);
	if (r.rc) return r.rc;
	if (v->version < 0 || v->version > 3) return HW_GSCHEMA_EVERSION;
	v->offset = rd_i64(&r);
	if (v->version == 3) v->leader_epoch = rd_i32(&r);
	v->metadata = rd_str(&r, 0);
	v->commit_timestamp = rd_i64(&r);
	if (v->version == 1) v->expire_timestamp = rd_i64(&r);
	return rd_done(&r);
}

int hw_gschema_offset_value_encode(void *buf, size_t cap, int64_t offset, int32_t leader_epoch,
				   const void *metadata, size_t mlen, int64_t commit_ts)
{
	wr w = { buf, cap, 0, 0 };
	wr_i16(&w, HW_GSCHEMA_OFFSET_VALUE_VERSION);
	wr_i64(&w, offset);
	wr_i32(&w, leader_epoch);
	wr_str(&w, metadata ? metadata : "", metadata ? mlen : 0, 0);
	wr_i64(&w, commit_ts);
	return wr_end(&w);
}

/* ---- group values ------------------------------------------------------------ */
static void rd_member(rd *r, int16_t version, hw_gschema_member *m)
{
	memset(m, 0, sizeof *m);
	m->group_instance_id.len = -1;
	m->member_id = rd_str(r, 0);
	if (version >= 3) m->group_instance_id = rd_str(r, 1);
	m->client_id = rd_str(r, 0);
	m->client_host = rd_str(r, 0);
	m->rebalance_timeout = -1;
	if (version >= 1) m->rebalance_timeout = rd_i32(r);
	m->session_timeout = rd_i32(r);
	if (version == 0) m->rebalance_timeout = m->session_timeout;
	m->subscription = rd_bytes(r);
	m->assignment = rd_bytes(r);
}

int hw_gschema_group_value_decode(const void *buf, size_t len, hw_gschema_group *g)
{
	rd r = { buf, (const uint8_t *)buf + len, 0 };
	memset(g, 0, sizeof *g);
	g->current_state_timestamp = -1;
	g->version = rd_i16(&r);
	if (r.rc) return r.rc;
	if (g->version < 0 || g->version > 3) return HW_GSCHEMA_EVERSION;
	g->protocol_type = rd_str(&r, 0);
	g->generation = rd_i32(&r);
	g->protocol = rd_str(&r, 1);
	g->leader = rd_str(&r, 1);
	if (g->version >= 2) g->current_state_timestamp = rd_i64(&r);
	g->n_members = rd_i32(&r);
	if (r.rc) return r.rc;
	/* a member takes at least 18 bytes (v0): no count the bytes cannot hold */
	if (g->n_members < 0 || (size_t)g->n_members > (size_t)(r.end - r.p) / 18)
		return HW_GSCHEMA_ECOUNT;
	g->members = r.p;
	g->end = r.end;
	for (int32_t i = 0; i < g->n_members; i++) {
		hw_gschema_member m;
		rd_member(&r, g->version, &m);
		if (r.rc) return r.rc;
	}
	return rd_done(&r);
}

int hw_gschema_member_next(const hw_gschema_group *g, const uint8_t **p, int32_t *index,
			   hw_gschema_member *m)
{
	if (*index >= g->n_members) return 0;
	rd r = { *p, g->end, 0 };
	rd_member(&r, g->version, m);
	if (r.rc) return r.rc;
	*p = r.p;
	(*index)++;
	return 1;
}

int hw_gschema_group_value_encode(void *buf, size_t cap, const char *protocol_type, int32_t generation,
				  const char *protocol, const char *leader, int64_t state_ts,
				  const hw_gschema_member_in *members, int32_t n)
{
	wr w = { buf, cap, 0, 0 };
	wr_i16(&w, HW_GSCHEMA_GROUP_VALUE_VERSION);
	wr_cstr(&w, protocol_type ? protocol_type : "");
	wr_i32(&w, generation);
	wr_cstr(&w, protocol);
	wr_cstr(&w, leader);
	wr_i64(&w, state_ts);
	wr_i32(&w, n);
	for (int32_t i = 0; i < n; i++) {
		const hw_gschema_member_in *m = &members[i];
		wr_cstr(&w, m->member_id ? m->member_id : "");
		wr_cstr(&w, m->group_instance_id);
		wr_cstr(&w, m->client_id ? m->client_id : "");
		wr_cstr(&w, m->client_host ? m->client_host : "");
		wr_i32(&w, m->rebalance_timeout);
		wr_i32(&w, m->session_timeout);
		wr_bytes(&w, m->subscription, m->subscription_len);
		wr_bytes(&w, m->assignment, m->assignment_len);
	}
	return wr_end(&w);
}
