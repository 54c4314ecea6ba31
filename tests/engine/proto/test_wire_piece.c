/* test_wire_piece.c — record batches larger than a frame (docs/wire.md
 * "Batch pieces"): a fetch response with a 1 MiB batch between small ones
 * is cut into frames of several sizes, every frame decodes and re-encodes
 * byte-identically, a relay cuts decoded pieces again for a smaller frame,
 * the assembler gives back exactly the bytes sent, in any order; a lost
 * piece never yields a batch until the refetch fills it; hostile
 * BATCH_PIECE tags are drops. Seed from HW_TEST_SEED. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "hw_wire.h"
#include "hw_wire_piece.h"
#include "../../support/hw_test.h"

#define CLUSTER 0xC0FFEEu
#define NPART 3

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint8_t arena_buf[2][HW_WIRE_ARENA_SIZE]; /* a relay's decoded message lives on while it cuts again */

/* A syntactically valid RecordBatch v2 of `len` bytes at p. */
static void make_batch(uint8_t *p, size_t len, int64_t base)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)((uint64_t)base >> (56 - 8 * i));
	uint32_t bl = (uint32_t)(len - 12);
	p[8] = (uint8_t)(bl >> 24);
	p[9] = (uint8_t)(bl >> 16);
	p[10] = (uint8_t)(bl >> 8);
	p[11] = (uint8_t)bl;
	memset(p + 12, 0, HW_WIRE_BATCH_HDR - 12);
	p[16] = 2;
	for (size_t i = HW_WIRE_BATCH_HDR; i < len; i++)
		p[i] = (uint8_t)rnd();
}

/* The receiver's view of one partition: bytes of whole batches so far. */
typedef struct rx {
	uint8_t *got;
	size_t n;
	hw_piece_asm a;
	int drops;
	int64_t next;      /* base offsets below this are there already */
} rx;

static int64_t base_of(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return (int64_t)v;
}

static void take_part(rx *r, const hw_fetch_resp_part *p)
{
	if (!p->piece_batch_len) {
		assert_int_equal(hw_wire_check_batches(p->records, p->records_len, NULL), 0);
		if (r->a.buf)
			return;    /* a follower waiting for a piece: these are not at its LEO */
		for (uint32_t o = 0; o < p->records_len;) {   /* those it has are skipped */
			uint32_t sz = 12u + ((uint32_t)p->records[o + 8] << 24 | (uint32_t)p->records[o + 9] << 16 |
					     (uint32_t)p->records[o + 10] << 8 | p->records[o + 11]);
			if (base_of(p->records + o) >= r->next) {
				memcpy(r->got + r->n, p->records + o, sz);
				r->n += sz;
				r->next = base_of(p->records + o) + 1;
			}
			o += sz;
		}
		return;
	}
	if (p->piece_base < r->next) {
		r->drops++;        /* a batch it has: a follower skips it (NOT_NEXT) */
		return;
	}
	const uint8_t *whole;
	hw_piece_drop why;
	int rc = hw_piece_feed(&r->a, 2u << 20, p->piece_base, p->piece_batch_len, p->piece_off, p->records, p->records_len,
			       &whole, &why);
	if (rc < 0) {
		assert_int_equal(rc, -EALREADY);   /* only repeats here */
		assert_int_equal(why, HW_PIECE_DROP_DUPLICATE);
		r->drops++;
		return;
	}
	if (rc == 1) {
		assert_int_equal(hw_wire_check_batches(whole, p->piece_batch_len, NULL), 0);
		memcpy(r->got + r->n, whole, p->piece_batch_len);
		r->n += p->piece_batch_len;
		r->next = p->piece_base + 1;
		hw_piece_reset(&r->a);
	}
}

/* Decode frame f (n bytes), check it re-encodes to the same body, and
 * hand its parts to rx[] (or, relay_max > 0, re-encode the decoded message
 * in frames of relay_max bytes and hand those on). Returns frames handed. */
static int receive(const uint8_t *f, int n, rx *r, size_t relay_max, int drop_every)
{
	static uint8_t again[HW_WIRE_MAX_FRAME];
	hw_wire_arena ar;
	hw_wire_hdr h;
	hw_msg d;
	hw_wire_drop why;
	hw_wire_arena_init(&ar, arena_buf[relay_max > 0], sizeof arena_buf[0]);
	int rc = hw_wire_decode(f, (size_t)n, CLUSTER, &ar, &h, &d, &why, NULL);
	if (rc)
		fprintf(stderr, "frame of %d bytes: %s\n", n, hw_wire_drop_name(why));
	assert_int_equal(rc, 0);
	assert_int_equal(d.type, HW_MSG_FETCH_RESP);
	/* canonical: the decoded frame re-encodes to the same payload */
	hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
	hw_wire_split sp = { 0 };
	int n2 = hw_wire_encode(&tx, &d, &sp, again, sizeof again);
	assert_int_equal(n2, n);
	assert_true(sp.done);
	assert_memory_equal(again + HW_WIRE_HDR_LEN, f + HW_WIRE_HDR_LEN, (size_t)n - HW_WIRE_HDR_LEN);
	if (!relay_max) {
		for (int i = 0; i < d.u.fetch_resp.n_parts; i++) {
			const hw_fetch_resp_part *p = &d.u.fetch_resp.parts[i];
			if (p->piece_batch_len)
				assert_int_equal(i, d.u.fetch_resp.n_parts - 1); /* a piece ends its frame */
			take_part(&r[p->tp.partition], p);
		}
		return 1;
	}
	/* a relay (another reactor, a smaller transport frame) cuts again */
	static uint8_t small[HW_WIRE_MAX_FRAME];
	static int k;
	hw_wire_split rs = { 0 };
	int frames = 0;
	while (!rs.done) {
		int m = hw_wire_encode(&tx, &d, &rs, small, relay_max);
		assert_true(m > 0 && (size_t)m <= relay_max);
		if (drop_every && ++k % drop_every == 0)
			continue;
		frames += receive(small, m, r, 0, 0);
	}
	return frames;
}

typedef struct src {
	uint8_t *rec[NPART];
	size_t len[NPART];
	hw_fetch_resp_part parts[NPART];
	hw_msg m;
} src;

/* Partition 0: small batches, a 1 MiB batch, small batches; 1: one batch
 * of 70,000 bytes (just over a frame); 2: empty. */
static void make_src(src *s)
{
	memset(s, 0, sizeof *s);
	size_t sizes0[] = { 300, 5000, 1048588 - 12, 61, 900, 64000 };
	size_t sizes1[] = { 70000 };
	size_t *sz[NPART] = { sizes0, sizes1, NULL };
	int cnt[NPART] = { 6, 1, 0 };
	for (int i = 0; i < NPART; i++) {
		size_t tot = 0;
		for (int j = 0; j < cnt[i]; j++)
			tot += sz[i][j];
		s->rec[i] = malloc(tot ? tot : 1);
		assert_non_null(s->rec[i]);
		for (int j = 0; j < cnt[i]; j++) {
			make_batch(s->rec[i] + s->len[i], sz[i][j], (int64_t)j * 100);
			s->len[i] += sz[i][j];
		}
		s->parts[i] = (hw_fetch_resp_part){ .tp = { 7, (uint32_t)i }, .high_watermark = 50 + i,
			.log_start_offset = 0, .diverging_epoch = -1, .diverging_end_offset = -1,
			.leader_id = 1, .leader_epoch = 3, .records = s->len[i] ? s->rec[i] : NULL,
			.records_len = (uint32_t)s->len[i] };
	}
	s->m = (hw_msg){ .type = HW_MSG_FETCH_RESP, .src = 1, .dst = 2, .correlation_id = 9 };
	s->m.u.fetch_resp = (hw_fetch_resp){ .n_parts = NPART, .parts = s->parts };
}

static void free_src(src *s, rx *r)
{
	for (int i = 0; i < NPART; i++) {
		free(s->rec[i]);
		free(r[i].got);
		hw_piece_reset(&r[i].a);
	}
}

static void rx_init(rx *r, const src *s)
{
	for (int i = 0; i < NPART; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].got = malloc(s->len[i] + 1);
		assert_non_null(r[i].got);
	}
}

static void test_pieces_round_trip(void **st)
{
	(void)st;
	size_t maxes[] = { 1500, 9000 + 200, HW_WIRE_MAX_FRAME };
	for (int relay = 0; relay < 2; relay++)
		for (unsigned k = 0; k < sizeof maxes / sizeof maxes[0]; k++) {
			src s;
			rx r[NPART];
			make_src(&s);
			rx_init(r, &s);
			static uint8_t f[HW_WIRE_MAX_FRAME];
			hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
			hw_wire_split sp = { 0 };
			int frames = 0;
			size_t max = relay ? HW_WIRE_MAX_FRAME : maxes[k];
			while (!sp.done) {
				int n = hw_wire_encode(&tx, &s.m, &sp, f, max);
				assert_true(n > 0 && (size_t)n <= max);
				frames += receive(f, n, r, relay ? maxes[k] : 0, 0);
				assert_true(frames < 5000);
			}
			for (int i = 0; i < NPART; i++) {
				assert_int_equal(r[i].n, s.len[i]);
				if (s.len[i])
					assert_memory_equal(r[i].got, s.rec[i], s.len[i]);
				assert_int_equal(r[i].drops, 0);
			}
			printf("# max %zu relay %d: %d frames\n", maxes[k], relay, frames);
			/* about as many frames as bytes need: pieces fill their frames */
			assert_true((size_t)frames <= (s.len[0] + s.len[1]) / (maxes[k] - 200) * 11 / 10 + 30);
			free_src(&s, r);
		}
}

/* A lost frame: the batch it was a piece of is not handed out, nor the
 * batches after it (not at the LEO); the same response again (the next
 * fetch) fills the gap — its other pieces are repeats — and everything is
 * there, in order. Frames delivered in reverse order assemble too. */
static void test_pieces_lost(void **st)
{
	(void)st;
	src s;
	rx r[NPART];
	make_src(&s);
	rx_init(r, &s);
	static uint8_t f[HW_WIRE_MAX_FRAME];
	for (int round = 0; round < 2; round++) {
		hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
		hw_wire_split sp = { 0 };
		int i = 0;
		while (!sp.done) {
			int n = hw_wire_encode(&tx, &s.m, &sp, f, HW_WIRE_MAX_FRAME);
			assert_true(n > 0);
			if (round == 0 && i++ == 4)
				continue;          /* a middle piece of the 1 MiB batch */
			if (round == 1 && r[0].n == s.len[0])
				break;
			receive(f, n, r, 0, 0);
		}
		if (round == 0) {
			/* what arrived is a prefix: the batches before the big one */
			assert_int_equal(r[0].n, 300 + 5000);
			assert_memory_equal(r[0].got, s.rec[0], r[0].n);
			assert_non_null(r[0].a.buf);
			assert_true(r[0].a.have < r[0].a.batch_len);
			assert_int_equal(r[0].a.n_ranges, 2);          /* the hole */
			assert_int_equal(r[1].n, s.len[1]);
			r[1].n = 0;
		}
	}
	assert_true(r[0].drops > 0);                           /* the repeats */
	assert_int_equal(r[0].n, s.len[0]);
	assert_memory_equal(r[0].got, s.rec[0], s.len[0]);
	free_src(&s, r);

	/* reversed: the 70,000-byte batch of partition 1 cut at 9200-byte frames */
	src s2;
	rx r2[NPART];
	make_src(&s2);
	rx_init(r2, &s2);
	s2.m.u.fetch_resp.parts = &s2.parts[1];
	s2.m.u.fetch_resp.n_parts = 1;
	static uint8_t fr[16][9200];
	int len[16], nf = 0;
	hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
	hw_wire_split sp = { 0 };
	while (!sp.done) {
		assert_true(nf < 16);
		len[nf] = hw_wire_encode(&tx, &s2.m, &sp, fr[nf], sizeof fr[nf]);
		assert_true(len[nf] > 0);
		nf++;
	}
	assert_true(nf >= 8);
	for (int k = nf - 1; k >= 0; k--)
		receive(fr[k], len[k], r2, 0, 0);
	assert_int_equal(r2[1].n, s2.len[1]);
	assert_memory_equal(r2[1].got, s2.rec[1], s2.len[1]);
	free_src(&s2, r2);
}

/* The assembler alone: bounds, order, repeats, another batch, scatter. */
static void test_asm(void **st)
{
	(void)st;
	hw_piece_asm a = { 0 };
	static uint8_t b[100000];
	make_batch(b, 1000, 5);
	const uint8_t *out;
	hw_piece_drop why;
	assert_int_equal(hw_piece_feed(&a, 999, 5, 1000, 0, b, 400, &out, &why), -EMSGSIZE);
	assert_int_equal(why, HW_PIECE_DROP_TOO_LARGE);
	assert_null(a.buf);
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 1000, 0, b, 0, &out, &why), -EINVAL);
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 1000, 900, b, 101, &out, &why), -EINVAL);
	/* out of order: the end first, then the start, then the middle */
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 1000, 600, b + 600, 400, &out, &why), 0);
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 1000, 0, b, 300, &out, &why), 0);
	assert_int_equal(a.n_ranges, 2);
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 1000, 100, b + 100, 150, &out, &why), -EALREADY);
	assert_int_equal(why, HW_PIECE_DROP_DUPLICATE);
	assert_int_equal(a.have, 700);
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 1000, 200, b + 200, 500, &out, &why), 1); /* overlaps both */
	assert_memory_equal(out, b, 1000);
	hw_piece_reset(&a);
	/* a piece of another batch (length) starts afresh */
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 1000, 0, b, 300, &out, &why), 0);
	assert_int_equal(hw_piece_feed(&a, 1000, 5, 999, 300, b + 300, 300, &out, &why), 0);
	assert_int_equal(a.batch_len, 999);
	assert_int_equal(a.have, 300);
	assert_int_equal(hw_piece_feed(&a, 1000, 6, 999, 300, b + 300, 300, &out, &why), 0); /* another base */
	assert_int_equal(a.base, 6);
	assert_int_equal(a.have, 300);
	hw_piece_reset(&a);
	/* more than HW_PIECE_MAX_RANGES holes: dropped */
	int rc = 0;
	for (int i = 0; i < HW_PIECE_MAX_RANGES + 1 && rc >= 0; i++)
		rc = hw_piece_feed(&a, sizeof b, 5, sizeof b, (uint32_t)i * 1000, b, 10, &out, &why);
	assert_int_equal(rc, -EPROTO);
	assert_int_equal(why, HW_PIECE_DROP_TOO_SCATTERED);
	assert_null(a.buf);
	hw_piece_reset(&a);
	hw_piece_reset(&a);
	assert_string_equal(hw_piece_drop_name(HW_PIECE_DROP_DUPLICATE), "DUPLICATE");
}

/* Hostile tags: a piece covering the whole batch, one past its end, a
 * first piece whose header disagrees, an empty tagged section, a tag out
 * of order — each a counted drop. */
static void test_hostile_tags(void **st)
{
	(void)st;
	src s;
	make_src(&s);
	static uint8_t f[HW_WIRE_MAX_FRAME];
	hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
	hw_wire_split sp = { 0 };
	int n;
	do /* the frame that starts the 1 MiB batch */
		n = hw_wire_encode(&tx, &s.m, &sp, f, HW_WIRE_MAX_FRAME);
	while (n > 0 && sp.piece_len == 0);
	assert_true(n > 0);
	hw_wire_arena ar;
	hw_wire_hdr h;
	hw_msg d;
	hw_wire_drop why;
	hw_wire_stats stats = { 0 };
	hw_wire_arena_init(&ar, arena_buf[0], sizeof arena_buf[0]);
	assert_int_equal(hw_wire_decode(f, (size_t)n, CLUSTER, &ar, &h, &d, &why, NULL), 0);
	assert_int_equal(d.u.fetch_resp.parts[d.u.fetch_resp.n_parts - 1].piece_off, 0);
	/* the tag sits in the last 20 bytes: n, tag, len(2), batch_len(4), off(4), base(8) */
	uint8_t *t = f + n - 20;
	assert_int_equal(t[0], 1);
	assert_int_equal(t[1], HW_WIRE_TAG_BATCH_PIECE);
	struct { int at; uint8_t v; hw_wire_drop want; } cases[] = {
		{ 0, 0, HW_WIRE_DROP_BAD_FIELD },         /* n = 0: not canonical */
		{ 0, 2, HW_WIRE_DROP_TRUNCATED },         /* a second tag that is not there */
		{ 1, 17, HW_WIRE_DROP_BAD_RECORDS },      /* unknown tag: skipped, and the piece is no batch */
		{ 3, 15, HW_WIRE_DROP_TRUNCATED },        /* value of 15 bytes */
		{ 4, 0x7f, HW_WIRE_DROP_BAD_FIELD },      /* batch_len beyond any limit */
		{ 7, 0x01, HW_WIRE_DROP_BAD_RECORDS },    /* batch_len disagrees with the header */
		{ 8, 0x7f, HW_WIRE_DROP_BAD_FIELD },      /* offset past the batch */
		{ 19, 201, HW_WIRE_DROP_BAD_RECORDS },    /* base offset other than the batch's (200) */
	};
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t save = t[cases[i].at];
		t[cases[i].at] = cases[i].v;
		hw_wire_arena_init(&ar, arena_buf[0], sizeof arena_buf[0]);
		assert_int_equal(hw_wire_decode(f, (size_t)n, CLUSTER, &ar, &h, &d, &why, &stats), -EBADMSG);
		assert_int_equal(why, cases[i].want);
		t[cases[i].at] = save;
	}
	assert_int_equal(hw_wire_stats_total_drops(&stats), sizeof cases / sizeof cases[0]);
	for (int i = 0; i < NPART; i++)
		free(s.rec[i]);
}

/* With HW_PIECE_SEED_DIR set: write the first, a middle and the last
 * piece frame of a 2,000-byte batch cut at 600-byte frames, as seeds for
 * fuzz_wire (tests/engine/proto/fuzz_wire_corpus/fetch_resp_piece_*). */
static void write_seeds(const char *dir)
{
	static uint8_t b[2000], f[600];
	make_batch(b, sizeof b, 42);
	hw_fetch_resp_part p = { .tp = { 7, 0 }, .high_watermark = 43, .diverging_epoch = -1,
				 .diverging_end_offset = -1, .leader_id = 1, .leader_epoch = 3,
				 .records = b, .records_len = sizeof b };
	hw_msg m = { .type = HW_MSG_FETCH_RESP, .src = 1, .dst = 2, .correlation_id = 9 };
	m.u.fetch_resp = (hw_fetch_resp){ .n_parts = 1, .parts = &p };
	hw_wire_tx tx = { CLUSTER, 1, 0, 0 };
	hw_wire_split sp = { 0 };
	for (int i = 0; !sp.done; i++) {
		int n = hw_wire_encode(&tx, &m, &sp, f, sizeof f);
		assert_true(n > 0);
		const char *name = i == 0 ? "first" : i == 1 ? "middle" : sp.done ? "last" : NULL;
		if (!name)
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/fetch_resp_piece_%s", dir, name);
		FILE *o = fopen(path, "wb");
		assert_non_null(o);
		assert_int_equal(fwrite(f, 1, (size_t)n, o), (size_t)n);
		fclose(o);
	}
}

int main(void)
{
	if (getenv("HW_PIECE_SEED_DIR")) {
		write_seeds(getenv("HW_PIECE_SEED_DIR"));
		return 0;
	}
	rng = hw_test_seed("test_wire_piece") | 1;
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_asm),
		cmocka_unit_test(test_pieces_round_trip),
		cmocka_unit_test(test_pieces_lost),
		cmocka_unit_test(test_hostile_tags),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
