/* test_kafka_group.c — the group APIs' codecs (lib/kafka/hw_kafka_group.h):
 * requests laid out by hand per Kafka's schema for each version decode to
 * the right fields; every truncation and trailing bytes are refused; the
 * responses' bytes for the versions clients use; the flexible versions'
 * compact forms and tagged sections (unknown tags skipped, hostile compact
 * lengths and tag orders refused). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "hw_kafka_group.h"

/* Hand encoders, independent of the codec under test. */
typedef struct buf { uint8_t b[2048]; size_t n; } buf;
static void p8(buf *x, int v) { x->b[x->n++] = (uint8_t)v; }
static void p16(buf *x, int v) { p8(x, (v >> 8) & 0xff); p8(x, v & 0xff); }
static void p32(buf *x, int32_t v) { for (int s = 24; s >= 0; s -= 8) p8(x, (int)(((uint32_t)v >> s) & 0xff)); }
static void p64(buf *x, int64_t v) { p32(x, (int32_t)((uint64_t)v >> 32)); p32(x, (int32_t)(uint64_t)v); }
static void pstr(buf *x, const char *s) { p16(x, (int)strlen(s)); memcpy(x->b + x->n, s, strlen(s)); x->n += strlen(s); }
static void pbytes(buf *x, const char *s) { p32(x, (int32_t)strlen(s)); memcpy(x->b + x->n, s, strlen(s)); x->n += strlen(s); }

typedef int (*decode_fn)(hw_kr *r, int16_t v, void *q);
typedef void (*free_fn)(void *q);

/* Decode must succeed on the whole body and fail on every prefix and on
 * one extra byte. */
static void check_framing(const buf *x, int16_t v, decode_fn dec, free_fn fr, void *q)
{
	hw_kr r;
	for (size_t l = 0; l < x->n; l++) {
		hw_kr_init(&r, x->b, l);
		assert_true(dec(&r, v, q) < 0);
		if (fr) fr(q);
	}
	uint8_t more[2048];
	memcpy(more, x->b, x->n);
	more[x->n] = 0;
	hw_kr_init(&r, more, x->n + 1);
	assert_int_equal(dec(&r, v, q), -EBADMSG);
	if (fr) fr(q);
	hw_kr_init(&r, x->b, x->n);
	assert_int_equal(dec(&r, v, q), 0);
}

static int d_join(hw_kr *r, int16_t v, void *q) { return hw_kg_join_decode(r, v, q); }
static void f_join(void *q) { hw_kg_join_free(q); }
static int d_sync(hw_kr *r, int16_t v, void *q) { return hw_kg_sync_decode(r, v, q); }
static void f_sync(void *q) { hw_kg_sync_free(q); }
static int d_commit(hw_kr *r, int16_t v, void *q) { return hw_kg_commit_decode(r, v, q); }
static void f_commit(void *q) { hw_kg_commit_free(q); }
static int d_fetch(hw_kr *r, int16_t v, void *q) { return hw_kg_fetch_decode(r, v, q); }
static void f_fetch(void *q) { hw_kg_fetch_free(q); }
static int d_leave(hw_kr *r, int16_t v, void *q) { return hw_kg_leave_decode(r, v, q); }
static void f_leave(void *q) { hw_kg_leave_free(q); }
static int d_hb(hw_kr *r, int16_t v, void *q) { return hw_kg_hb_decode(r, v, q); }
static int d_find(hw_kr *r, int16_t v, void *q) { return hw_kg_find_decode(r, v, q); }
static void f_find(void *q) { hw_kg_find_free(q); }

static int streq(hw_kstr s, const char *z) { return hw_kstr_eq(s, z); }

static void test_join_versions(void **state)
{
	(void)state;
	for (int16_t v = 0; v <= 5; v++) {
		buf x = { .n = 0 };
		pstr(&x, "grp");
		p32(&x, 10000);
		if (v >= 1) p32(&x, 300000);
		pstr(&x, v == 5 ? "m-1" : "");
		if (v >= 5) p16(&x, -1);
		pstr(&x, "consumer");
		p32(&x, 2);
		pstr(&x, "range"); pbytes(&x, "\x01\x02" "ab");
		pstr(&x, "roundrobin"); pbytes(&x, "");
		hw_kg_join_req q;
		check_framing(&x, v, d_join, f_join, &q);
		assert_true(streq(q.group_id, "grp"));
		assert_int_equal(q.session_timeout_ms, 10000);
		assert_int_equal(q.rebalance_timeout_ms, v >= 1 ? 300000 : 10000);
		assert_true(streq(q.member_id, v == 5 ? "m-1" : ""));
		assert_int_equal(q.group_instance_id.len, -1);
		assert_true(streq(q.protocol_type, "consumer"));
		assert_int_equal(q.n_protocols, 2);
		assert_true(streq(q.protocols[1].name, "roundrobin"));
		assert_int_equal(q.protocols[0].metadata.len, 4);
		assert_int_equal(q.protocols[1].metadata.len, 0);
		hw_kg_join_free(&q);
	}
	hw_kg_join_req q;
	hw_kr r;
	hw_kr_init(&r, "", 0);
	assert_int_equal(hw_kg_join_decode(&r, HW_KG_JOIN_GROUP_MAX + 1, &q), -EPROTONOSUPPORT);
}

static void test_join_hostile_counts(void **state)
{
	(void)state;
	buf x = { .n = 0 };
	pstr(&x, "g"); p32(&x, 1); p32(&x, 1); pstr(&x, ""); pstr(&x, "consumer");
	p32(&x, 0x7fffffff); /* more protocols than bytes */
	hw_kg_join_req q;
	hw_kr r;
	hw_kr_init(&r, x.b, x.n);
	assert_true(hw_kg_join_decode(&r, 2, &q) < 0);
	hw_kg_join_free(&q);
	x.n -= 4;
	p32(&x, 1); pstr(&x, "range"); p32(&x, -1); /* null metadata */
	hw_kr_init(&r, x.b, x.n);
	assert_int_equal(hw_kg_join_decode(&r, 2, &q), -EINVAL);
	hw_kg_join_free(&q);
}

static void test_sync_hb_leave_find(void **state)
{
	(void)state;
	buf x = { .n = 0 };
	pstr(&x, "grp"); p32(&x, 4); pstr(&x, "m-1"); p16(&x, -1);
	p32(&x, 2); pstr(&x, "m-1"); pbytes(&x, "A1"); pstr(&x, "m-2"); pbytes(&x, "B22");
	hw_kg_sync_req s;
	check_framing(&x, 3, d_sync, f_sync, &s);
	assert_int_equal(s.generation, 4);
	assert_int_equal(s.n_assign, 2);
	assert_true(streq(s.assign[1].member_id, "m-2"));
	assert_int_equal(s.assign[1].assignment.len, 3);
	hw_kg_sync_free(&s);

	x.n = 0;
	pstr(&x, "grp"); p32(&x, 4); pstr(&x, "m-1");
	hw_kg_hb_req h;
	check_framing(&x, 2, d_hb, NULL, &h);
	assert_true(streq(h.member_id, "m-1"));
	assert_int_equal(h.group_instance_id.len, -1);

	x.n = 0;
	pstr(&x, "grp"); pstr(&x, "m-1");
	hw_kg_leave_req l;
	check_framing(&x, 1, d_leave, f_leave, &l);
	assert_int_equal(l.n, 1);
	assert_true(streq(l.members[0].member_id, "m-1"));
	hw_kg_leave_free(&l);
	x.n = 0;
	pstr(&x, "grp"); p32(&x, 2); pstr(&x, "m-1"); p16(&x, -1); pstr(&x, "m-2"); pstr(&x, "i-2");
	check_framing(&x, 3, d_leave, f_leave, &l);
	assert_int_equal(l.n, 2);
	assert_true(streq(l.members[1].group_instance_id, "i-2"));
	hw_kw w;
	hw_kw_init(&w, 0);
	int16_t errs[2] = { 0, 25 };
	hw_kg_leave_encode(&w, 3, 0, &l, errs);
	buf want = { .n = 0 };
	p32(&want, 0); p16(&want, 0); p32(&want, 2); pstr(&want, "m-1"); p16(&want, -1); p16(&want, 0);
	pstr(&want, "m-2"); pstr(&want, "i-2"); p16(&want, 25);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);
	hw_kg_leave_free(&l);

	x.n = 0;
	pstr(&x, "grp"); p8(&x, 0);
	hw_kg_find_req f;
	check_framing(&x, 1, d_find, f_find, &f);
	assert_true(streq(f.key, "grp"));
	assert_int_equal(f.n_keys, 1);
	hw_kg_find_free(&f);
	x.n = 0;
	pstr(&x, "grp");
	check_framing(&x, 0, d_find, f_find, &f);
	assert_int_equal(f.key_type, 0);
	hw_kg_find_free(&f);
}

static void test_commit_versions(void **state)
{
	(void)state;
	for (int16_t v = 0; v <= 7; v++) {
		buf x = { .n = 0 };
		pstr(&x, "grp");
		if (v >= 1) { p32(&x, 3); pstr(&x, "m-1"); }
		if (v >= 7) p16(&x, -1);
		if (v >= 2 && v <= 4) p64(&x, -1);
		p32(&x, 2);
		pstr(&x, "t1"); p32(&x, 2);
		for (int p = 0; p < 2; p++) {
			p32(&x, p); p64(&x, 100 + p);
			if (v >= 6) p32(&x, 5);
			if (v == 1) p64(&x, 1234);
			if (p == 0) pstr(&x, "meta"); else p16(&x, -1);
		}
		pstr(&x, "t2"); p32(&x, 1);
		p32(&x, 9); p64(&x, 900);
		if (v >= 6) p32(&x, -1);
		if (v == 1) p64(&x, 1234);
		pstr(&x, "");
		hw_kg_commit_req q;
		check_framing(&x, v, d_commit, f_commit, &q);
		assert_int_equal(q.generation, v >= 1 ? 3 : -1);
		assert_int_equal(q.n, 3);
		assert_true(streq(q.parts[1].topic, "t1"));
		assert_int_equal(q.parts[1].offset, 101);
		assert_int_equal(q.parts[1].metadata.len, -1);
		assert_true(streq(q.parts[0].metadata, "meta"));
		assert_int_equal(q.parts[0].leader_epoch, v >= 6 ? 5 : -1);
		assert_true(streq(q.parts[2].topic, "t2"));
		assert_int_equal(q.parts[2].partition, 9);
		int16_t errs[3] = { 0, 22, 0 };
		hw_kw w;
		hw_kw_init(&w, 0);
		hw_kg_commit_encode(&w, v, &q, errs);
		buf want = { .n = 0 };
		if (v >= 3) p32(&want, 0);
		p32(&want, 2);
		pstr(&want, "t1"); p32(&want, 2); p32(&want, 0); p16(&want, 0); p32(&want, 1); p16(&want, 22);
		pstr(&want, "t2"); p32(&want, 1); p32(&want, 9); p16(&want, 0);
		assert_int_equal(w.len, want.n);
		assert_memory_equal(w.buf, want.b, want.n);
		hw_kw_free(&w);
		hw_kg_commit_free(&q);
	}
}

static void test_fetch_versions(void **state)
{
	(void)state;
	for (int16_t v = 0; v <= 5; v++) {
		buf x = { .n = 0 };
		pstr(&x, "grp");
		p32(&x, 1); pstr(&x, "t1"); p32(&x, 2); p32(&x, 0); p32(&x, 3);
		hw_kg_fetch_req q;
		check_framing(&x, v, d_fetch, f_fetch, &q);
		assert_int_equal(q.groups[0].all, 0);
		assert_int_equal(q.groups[0].n, 2);
		assert_int_equal(q.groups[0].parts[1].partition, 3);
		hw_kg_fetch_free(&q);
		x.n = 0;
		pstr(&x, "grp"); p32(&x, -1);
		hw_kr r;
		hw_kr_init(&r, x.b, x.n);
		assert_int_equal(hw_kg_fetch_decode(&r, v, &q), v >= 2 ? 0 : -EINVAL);
		if (v >= 2) assert_int_equal(q.groups[0].all, 1);
		hw_kg_fetch_free(&q);
	}
	hw_kg_fetch_out o[2] = { { "t1", 0, 42, 7, "md", 2, 0 }, { "t1", 3, -1, -1, "", 0, 0 } };
	hw_kw w;
	hw_kw_init(&w, 0);
	hw_kg_fetch_encode(&w, 5, 2, o, 0);
	buf want = { .n = 0 };
	p32(&want, 0); p32(&want, 1); pstr(&want, "t1"); p32(&want, 2);
	p32(&want, 0); p64(&want, 42); p32(&want, 7); pstr(&want, "md"); p16(&want, 0);
	p32(&want, 3); p64(&want, -1); p32(&want, -1); pstr(&want, ""); p16(&want, 0);
	p16(&want, 0);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);
	/* v1: no throttle, no leader epoch, no group error; a group error goes
	 * into each partition */
	hw_kw_init(&w, 0);
	hw_kg_fetch_encode(&w, 1, 1, o, 16);
	want.n = 0;
	p32(&want, 1); pstr(&want, "t1"); p32(&want, 1);
	p32(&want, 0); p64(&want, 42); pstr(&want, "md"); p16(&want, 16);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);
}

static void test_join_sync_find_responses(void **state)
{
	(void)state;
	hw_kg_join_member m[2] = { { "m-1", NULL, (const uint8_t *)"x", 1 }, { "m-2", NULL, NULL, 0 } };
	hw_kg_join_resp a = { 0, 3, "range", "m-1", "m-1", 2, m, NULL };
	hw_kw w;
	hw_kw_init(&w, 0);
	hw_kg_join_encode(&w, 5, &a);
	buf want = { .n = 0 };
	p32(&want, 0); p16(&want, 0); p32(&want, 3); pstr(&want, "range"); pstr(&want, "m-1"); pstr(&want, "m-1");
	p32(&want, 2); pstr(&want, "m-1"); p16(&want, -1); pbytes(&want, "x"); pstr(&want, "m-2"); p16(&want, -1); pbytes(&want, "");
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);

	hw_kw_init(&w, 0);
	hw_kg_sync_encode(&w, 0, 27, NULL, 0);
	want.n = 0;
	p16(&want, 27); pbytes(&want, "");
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);

	hw_kg_find_resp f = { 0, NULL, 2, "127.0.0.1", 19592, { NULL, -1 } };
	hw_kw_init(&w, 0);
	hw_kg_find_encode(&w, 2, &f);
	want.n = 0;
	p32(&want, 0); p16(&want, 0); p16(&want, -1); p32(&want, 2); pstr(&want, "127.0.0.1"); p32(&want, 19592);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);
	hw_kw_init(&w, 0);
	hw_kg_find_encode(&w, 0, &f);
	assert_int_equal(w.len, 2 + 4 + 2 + 9 + 4);
	hw_kw_free(&w);
}

static int d_describe(hw_kr *r, int16_t v, void *q) { return hw_kg_describe_decode(r, v, q); }
static void f_describe(void *q) { hw_kg_describe_free(q); }

/* DescribeGroups 0-4 and ListGroups 0-2: framing of every version, the
 * response layouts byte by byte (Kafka's DescribeGroupsResponse.json and
 * ListGroupsResponse.json), versions outside the ranges refused. */
static void test_describe_list(void **state)
{
	(void)state;
	for (int16_t v = 0; v <= 4; v++) {
		buf x = { .n = 0 };
		p32(&x, 2); pstr(&x, "billing"); pstr(&x, "other");
		if (v >= 3) p8(&x, 1);
		hw_kg_describe_req q;
		check_framing(&x, v, d_describe, f_describe, &q);
		assert_int_equal(q.n, 2);
		assert_true(streq(q.groups[0], "billing") && streq(q.groups[1], "other"));
		assert_int_equal(q.include_authorized_operations, v >= 3);
		hw_kg_describe_free(&q);
	}
	hw_kr r;
	hw_kg_describe_req q;
	hw_kr_init(&r, "", 0);
	assert_int_equal(hw_kg_describe_decode(&r, HW_KG_DESCRIBE_GROUPS_MAX + 1, &q), -EPROTONOSUPPORT);
	hw_kg_describe_free(&q);
	uint8_t neg[4] = { 0xff, 0xff, 0xff, 0xff };      /* a null array */
	hw_kr_init(&r, neg, 4);
	assert_true(hw_kg_describe_decode(&r, 0, &q) < 0);
	hw_kg_describe_free(&q);

	hw_kg_describe_member m[1] = { { "c1-x", NULL, "c1", "", (const uint8_t *)"md", 2, (const uint8_t *)"as", 2 } };
	hw_kg_describe_group g = { 0, "billing", "Stable", "consumer", "range", 1, m };
	for (int16_t v = 0; v <= 4; v++) {
		hw_kw w;
		hw_kw_init(&w, 0);
		hw_kg_describe_begin(&w, v, 1);
		hw_kg_describe_group_encode(&w, v, &g);
		buf want = { .n = 0 };
		if (v >= 1) p32(&want, 0);
		p32(&want, 1); p16(&want, 0); pstr(&want, "billing"); pstr(&want, "Stable"); pstr(&want, "consumer");
		pstr(&want, "range"); p32(&want, 1); pstr(&want, "c1-x");
		if (v >= 4) p16(&want, -1);
		pstr(&want, "c1"); pstr(&want, ""); pbytes(&want, "md"); pbytes(&want, "as");
		if (v >= 3) p32(&want, INT32_MIN);
		assert_int_equal(w.len, want.n);
		assert_memory_equal(w.buf, want.b, want.n);
		hw_kw_free(&w);
	}

	for (int16_t v = 0; v <= 2; v++) {
		hw_kr_init(&r, "", 0);
		assert_int_equal(hw_kg_list_decode(&r, v), 0);
		hw_kr_init(&r, "x", 1);
		assert_int_equal(hw_kg_list_decode(&r, v), -EBADMSG);
		hw_kw w;
		hw_kw_init(&w, 0);
		hw_kg_list_begin(&w, v, 14, 1);
		hw_kg_list_group_encode(&w, v, "billing", "consumer");
		buf want = { .n = 0 };
		if (v >= 1) p32(&want, 0);
		p16(&want, 14); p32(&want, 1); pstr(&want, "billing"); pstr(&want, "consumer");
		assert_int_equal(w.len, want.n);
		assert_memory_equal(w.buf, want.b, want.n);
		hw_kw_free(&w);
	}
	hw_kr_init(&r, "", 0);
	assert_int_equal(hw_kg_list_decode(&r, HW_KG_LIST_GROUPS_MAX + 1), -EPROTONOSUPPORT);
}

/* ---- flexible versions (KIP-482) ------------------------------------------------ */
/* compact string (short: one-byte length), a null one, and a tagged section
 * with one unknown field (tag 9, 2 bytes) that decoders must skip */
static void pcs(buf *x, const char *s) { p8(x, (int)strlen(s) + 1); memcpy(x->b + x->n, s, strlen(s)); x->n += strlen(s); }
static void pcnull(buf *x) { p8(x, 0); }
static void ptags(buf *x) { p8(x, 1); p8(x, 9); p8(x, 2); p8(x, 'z'); p8(x, 'z'); }
static void pnotags(buf *x) { p8(x, 0); }

static int d_desc(hw_kr *r, int16_t v, void *q) { return hw_kg_describe_decode(r, v, q); }
static void f_desc(void *q) { hw_kg_describe_free(q); }

static void test_flexible_requests(void **state)
{
	(void)state;
	/* JoinGroup v9: compact fields, a tag inside the protocol and after the body, reason (v8+) */
	buf x = { .n = 0 };
	pcs(&x, "grp"); p32(&x, 10000); p32(&x, 30000); pcs(&x, ""); pcnull(&x); pcs(&x, "consumer");
	p8(&x, 2); pcs(&x, "range"); p8(&x, 4); p8(&x, 1); p8(&x, 2); p8(&x, 3); ptags(&x);
	pcs(&x, "why"); ptags(&x);
	hw_kg_join_req j;
	check_framing(&x, 9, d_join, f_join, &j);
	assert_true(streq(j.group_id, "grp") && streq(j.protocol_type, "consumer") && streq(j.reason, "why"));
	assert_int_equal(j.group_instance_id.len, -1);
	assert_int_equal(j.n_protocols, 1);
	assert_int_equal(j.protocols[0].metadata.len, 3);
	hw_kg_join_free(&j);

	/* OffsetFetch v8: two groups, the second with null topics (all), require_stable */
	x.n = 0;
	p8(&x, 3);
	pcs(&x, "g1"); p8(&x, 2); pcs(&x, "t"); p8(&x, 3); p32(&x, 0); p32(&x, 4); pnotags(&x); ptags(&x);
	pcs(&x, "g2"); pcnull(&x); pnotags(&x);
	p8(&x, 1); ptags(&x);
	hw_kg_fetch_req f;
	check_framing(&x, 8, d_fetch, f_fetch, &f);
	assert_int_equal(f.n_groups, 2);
	assert_int_equal(f.require_stable, 1);
	assert_true(streq(f.groups[0].group_id, "g1") && streq(f.groups[1].group_id, "g2"));
	assert_int_equal(f.groups[0].n, 2);
	assert_int_equal(f.groups[0].parts[1].partition, 4);
	assert_int_equal(f.groups[1].all, 1);
	hw_kg_fetch_free(&f);

	/* FindCoordinator v4: batched keys, no single key */
	x.n = 0;
	p8(&x, 0); p8(&x, 3); pcs(&x, "a"); pcs(&x, "bb"); ptags(&x);
	hw_kg_find_req fr;
	check_framing(&x, 4, d_find, f_find, &fr);
	assert_int_equal(fr.n_keys, 2);
	assert_true(streq(fr.keys[1], "bb") && streq(fr.key, "a"));
	hw_kg_find_free(&fr);

	/* DescribeGroups v5 */
	x.n = 0;
	p8(&x, 2); pcs(&x, "billing"); p8(&x, 1); ptags(&x);
	hw_kg_describe_req dq;
	check_framing(&x, 5, d_desc, f_desc, &dq);
	assert_int_equal(dq.n, 1);
	assert_int_equal(dq.include_authorized_operations, 1);
	hw_kg_describe_free(&dq);

	/* ListGroups v4: a states filter, case-insensitive as Kafka */
	x.n = 0;
	p8(&x, 3); pcs(&x, "stable"); pcs(&x, "Empty"); pnotags(&x);
	hw_kg_list_req lq;
	hw_kr r;
	hw_kr_init(&r, x.b, x.n);
	assert_int_equal(hw_kg_list_decode_q(&r, 4, &lq), 0);
	assert_true(hw_kg_list_wants(&lq, "Stable") && hw_kg_list_wants(&lq, "Empty"));
	assert_false(hw_kg_list_wants(&lq, "Dead"));

	/* hostile compact forms: a string length past the end, a tag past the
	 * end, tags out of order, a count larger than the bytes left */
	uint8_t bad1[] = { 0x7f, 'g' };                       /* Heartbeat v4 group id of 126 bytes */
	uint8_t bad2[] = { 2, 'g', 0, 0, 0, 1, 2, 'm', 0, 1, 7, 50 };    /* a tag of 50 bytes, 0 there */
	uint8_t bad3[] = { 2, 'g', 0, 0, 0, 1, 2, 'm', 0, 2, 5, 0, 4, 0 }; /* tags 5 then 4 */
	uint8_t bad4[] = { 0xff, 0xff, 0xff, 0x0f };          /* DescribeGroups v5: 2^28 groups */
	hw_kg_hb_req h;
	hw_kr_init(&r, bad1, sizeof bad1);
	assert_int_equal(hw_kg_hb_decode(&r, 4, &h), -EMSGSIZE);
	hw_kr_init(&r, bad2, sizeof bad2);
	assert_int_equal(hw_kg_hb_decode(&r, 4, &h), -EMSGSIZE);
	hw_kr_init(&r, bad3, sizeof bad3);
	assert_int_equal(hw_kg_hb_decode(&r, 4, &h), -EINVAL);
	hw_kr_init(&r, bad4, sizeof bad4);
	assert_int_equal(hw_kg_describe_decode(&r, 5, &dq), -EINVAL);
	hw_kg_describe_free(&dq);
}

static void test_flexible_responses(void **state)
{
	(void)state;
	/* JoinGroup v9: protocol type (v7+), null protocol name while none,
	 * skip_assignment (v9), compact members, empty tagged sections */
	hw_kg_join_member m[1] = { { "m-1", NULL, (const uint8_t *)"x", 1 } };
	hw_kg_join_resp a = { 0, 3, "", "m-1", "m-1", 1, m, "consumer" };
	hw_kw w;
	hw_kw_init(&w, 0);
	hw_kg_join_encode(&w, 9, &a);
	buf want = { .n = 0 };
	p32(&want, 0); p16(&want, 0); p32(&want, 3); pcs(&want, "consumer"); pcnull(&want); pcs(&want, "m-1");
	p8(&want, 0); pcs(&want, "m-1"); p8(&want, 2); pcs(&want, "m-1"); pcnull(&want); p8(&want, 2); p8(&want, 'x');
	pnotags(&want); pnotags(&want);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);

	/* OffsetFetch v8: one group */
	hw_kg_fetch_out o[1] = { { "t1", 0, 42, 7, NULL, 0, 0 } };
	hw_kw_init(&w, 0);
	hw_kg_fetch_begin(&w, 8, 1);
	hw_kg_fetch_group_encode(&w, 8, "g", 1, o, 0);
	hw_kg_fetch_end(&w, 8);
	want.n = 0;
	p32(&want, 0); p8(&want, 2); pcs(&want, "g"); p8(&want, 2); pcs(&want, "t1"); p8(&want, 2);
	p32(&want, 0); p64(&want, 42); p32(&want, 7); pcnull(&want); p16(&want, 0); pnotags(&want); pnotags(&want);
	p16(&want, 0); pnotags(&want); pnotags(&want);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);

	/* FindCoordinator v4: one entry per key */
	hw_kg_find_resp fa[2] = { { 0, NULL, 2, "h", 9092, { "a", 1 } }, { 15, "no", -1, "", -1, { "b", 1 } } };
	hw_kw_init(&w, 0);
	hw_kg_find_encode_n(&w, 4, 2, fa);
	want.n = 0;
	p32(&want, 0); p8(&want, 3);
	pcs(&want, "a"); p32(&want, 2); pcs(&want, "h"); p32(&want, 9092); p16(&want, 0); pcnull(&want); pnotags(&want);
	pcs(&want, "b"); p32(&want, -1); pcs(&want, ""); p32(&want, -1); p16(&want, 15); pcs(&want, "no"); pnotags(&want);
	pnotags(&want);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);

	/* ListGroups v4 with the state; DescribeGroups v5 with the client host */
	hw_kw_init(&w, 0);
	hw_kg_list_begin(&w, 4, 0, 1);
	hw_kg_list_group_encode4(&w, 4, "g", "consumer", "Stable");
	hw_kg_list_end(&w, 4);
	want.n = 0;
	p32(&want, 0); p16(&want, 0); p8(&want, 2); pcs(&want, "g"); pcs(&want, "consumer"); pcs(&want, "Stable");
	pnotags(&want); pnotags(&want);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);
	hw_kg_describe_member dm[1] = { { "c1-x", NULL, "c1", "/127.0.0.1", NULL, 0, NULL, 0 } };
	hw_kg_describe_group g = { 0, "g", "Empty", "consumer", "", 1, dm };
	hw_kw_init(&w, 0);
	hw_kg_describe_begin(&w, 5, 1);
	hw_kg_describe_group_encode(&w, 5, &g);
	hw_kg_describe_end(&w, 5);
	want.n = 0;
	p32(&want, 0); p8(&want, 2); p16(&want, 0); pcs(&want, "g"); pcs(&want, "Empty"); pcs(&want, "consumer");
	pcs(&want, ""); p8(&want, 2); pcs(&want, "c1-x"); pcnull(&want); pcs(&want, "c1"); pcs(&want, "/127.0.0.1");
	p8(&want, 1); p8(&want, 1); pnotags(&want); p32(&want, INT32_MIN); pnotags(&want); pnotags(&want);
	assert_int_equal(w.len, want.n);
	assert_memory_equal(w.buf, want.b, want.n);
	hw_kw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_versions),
		cmocka_unit_test(test_join_hostile_counts),
		cmocka_unit_test(test_sync_hb_leave_find),
		cmocka_unit_test(test_commit_versions),
		cmocka_unit_test(test_fetch_versions),
		cmocka_unit_test(test_join_sync_find_responses),
		cmocka_unit_test(test_describe_list),
		cmocka_unit_test(test_flexible_requests),
		cmocka_unit_test(test_flexible_responses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
