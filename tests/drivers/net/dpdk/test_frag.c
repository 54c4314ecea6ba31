/* test_frag.c — hiwater fragments (drivers/net/dpdk/hw_frag.h): the plan,
 * the documented byte layout, every bad header field reported with its
 * reason and errno (in exact-size heap buffers, so ASan catches overreads),
 * reassembly in order, in random order, with duplicates, with interleaved
 * messages of several senders, inconsistent fragments, a late fragment of a
 * timed-out message, timeouts, slot exhaustion (eviction) and the memory
 * bound. Every reassembled frame is compared byte for byte with what was
 * cut. Seeded by HW_TEST_SEED. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "hw_frag.h"
#include "../../../support/hw_test.h"

#define MS 1000000LL

static uint64_t seed;

static uint64_t rnd(void) { return hw_test_rand(); }

/* A message cut into fragments as the driver cuts it. */
typedef struct cut {
	int n;
	uint8_t *frag[HW_FRAG_MAX_COUNT];
	size_t len[HW_FRAG_MAX_COUNT];
	uint8_t *frame;
	size_t total;
} cut;

static void cut_frame(cut *c, const uint8_t *frame, size_t total, size_t max_payload, uint32_t msg_id)
{
	uint16_t fs = 0;
	int n = hw_frag_plan(total, max_payload, &fs);
	assert_true(n >= 2);
	c->n = n;
	c->total = total;
	c->frame = malloc(total);
	memcpy(c->frame, frame, total);
	for (int i = 0; i < n; i++) {
		size_t off = (size_t)i * fs, pl = total - off < fs ? total - off : fs;
		hw_frag_hdr h = { .index = (uint16_t)i, .count = (uint16_t)n, .frag_size = fs, .msg_id = msg_id,
				  .total_len = (uint32_t)total, .offset = (uint32_t)off };
		c->len[i] = HW_FRAG_HDR_LEN + pl;
		assert_true(c->len[i] <= max_payload);
		c->frag[i] = malloc(c->len[i]);
		assert_int_equal(hw_frag_encode(&h, c->frag[i], c->len[i]), HW_FRAG_HDR_LEN);
		memcpy(c->frag[i] + HW_FRAG_HDR_LEN, frame + off, pl);
	}
}

static void cut_random(cut *c, size_t total, size_t max_payload, uint32_t msg_id)
{
	uint8_t *f = malloc(total);
	for (size_t i = 0; i < total; i++)
		f[i] = (uint8_t)rnd();
	cut_frame(c, f, total, max_payload, msg_id);
	free(f);
}

static void cut_free(cut *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->frag[i]);
	free(c->frame);
	memset(c, 0, sizeof *c);
}

static int push(hw_frag_reasm *r, uint32_t ip, uint16_t port, const uint8_t *b, size_t len, int64_t t,
		const uint8_t **out, size_t *olen, hw_frag_drop *why)
{
	/* an exact-size copy: ASan reports any read past the fragment */
	uint8_t *copy = malloc(len ? len : 1);
	memcpy(copy, b, len);
	int rc = hw_frag_reasm_push(r, ip, port, len ? copy : NULL, len, t, out, olen, why);
	free(copy);
	return rc;
}

static void shuffle(int *v, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rnd() % (uint64_t)(i + 1)), t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

static void test_plan(void **st)
{
	(void)st;
	uint16_t fs = 7;
	assert_int_equal(hw_frag_plan(1472, 1472, &fs), 1);
	assert_int_equal(fs, 7);
	assert_int_equal(hw_frag_plan(1473, 1472, &fs), 2);
	assert_int_equal(fs, 1472 - HW_FRAG_HDR_LEN);
	assert_int_equal(hw_frag_plan(65507, 1472, &fs), (65507 + 1447) / 1448);
	assert_int_equal(hw_frag_plan(65507, 8972, &fs), 8);
	/* the smallest payload that still works, and one below */
	assert_int_equal(hw_frag_plan(65507, HW_FRAG_HDR_LEN + HW_FRAG_MIN_SIZE, &fs), (int)HW_FRAG_MAX_COUNT);
	assert_int_equal(hw_frag_plan(65507, HW_FRAG_HDR_LEN + HW_FRAG_MIN_SIZE - 1, &fs), -EMSGSIZE);
	assert_int_equal(hw_frag_plan(0, 1472, &fs), -EINVAL);
	assert_int_equal(hw_frag_plan(65508, 1472, &fs), -EINVAL);
	assert_int_equal(hw_frag_plan(100, 1472, NULL), -EINVAL);
}

static void test_layout(void **st)
{
	(void)st;
	hw_frag_hdr h = { .index = 2, .count = 3, .frag_size = 1000, .msg_id = 0xA1B2C3D4u, .total_len = 2500,
			  .offset = 2000 };
	uint8_t b[HW_FRAG_HDR_LEN + 500];
	memset(b, 0xEE, sizeof b);
	assert_int_equal(hw_frag_encode(&h, b, HW_FRAG_HDR_LEN), HW_FRAG_HDR_LEN);
	const uint8_t want[HW_FRAG_HDR_LEN] = { 0x48, 0x46, 0x52, 0x47, 1, 0, 0, 2, 0, 3, 0x03, 0xE8,
						0xA1, 0xB2, 0xC3, 0xD4, 0, 0, 0x09, 0xC4, 0, 0, 0x07, 0xD0 };
	assert_memory_equal(b, want, HW_FRAG_HDR_LEN);
	assert_int_equal(b[HW_FRAG_HDR_LEN], 0xEE);   /* nothing written past the header */
	hw_frag_hdr d;
	hw_frag_drop why;
	assert_int_equal(hw_frag_decode(b, sizeof b, &d, &why), 0);
	assert_int_equal(d.version, 1);
	assert_int_equal(d.index, 2);
	assert_int_equal(d.count, 3);
	assert_int_equal(d.frag_size, 1000);
	assert_int_equal(d.msg_id, 0xA1B2C3D4u);
	assert_int_equal(d.total_len, 2500);
	assert_int_equal(d.offset, 2000);
	assert_int_equal(d.payload_len, 500);
	assert_true(hw_frag_is_fragment(b, 4));
	assert_false(hw_frag_is_fragment(b, 3));
	const uint8_t wire[4] = { 0x48, 0x57, 1, 0 };   /* a hiwater frame's first bytes */
	assert_false(hw_frag_is_fragment(wire, sizeof wire));
	assert_false(hw_frag_is_fragment(NULL, 24));
}

/* Decode b (len bytes, exact-size copy) and expect reason r. */
static void expect_bad(const uint8_t *b, size_t len, hw_frag_drop r)
{
	uint8_t *c = malloc(len ? len : 1);
	memcpy(c, b, len);
	hw_frag_hdr out;
	memset(&out, 0x5A, sizeof out);
	hw_frag_hdr before = out;
	hw_frag_drop why = HW_FRAG_DROP__COUNT;
	int rc = hw_frag_decode(len ? c : NULL, len, &out, &why);
	free(c);
	if (why != r)
		fail_msg("len %zu: got %s, want %s", len, hw_frag_drop_name(why), hw_frag_drop_name(r));
	assert_int_equal(rc, -hw_frag_drop_errno(r));
	assert_memory_equal(&out, &before, sizeof out);
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xFFFF);
}

static void test_bad_fields(void **st)
{
	(void)st;
	cut c;
	cut_random(&c, 2500, 1024, 7);   /* fs 1000, count 3 */
	assert_int_equal(c.n, 3);
	uint8_t b[HW_FRAG_HDR_LEN + 1000];
	for (size_t l = 0; l < HW_FRAG_HDR_LEN; l++)
		expect_bad(c.frag[0], l, HW_FRAG_DROP_TRUNCATED);
#define MUT(stmt, reason)                                   \
	do {                                                \
		memcpy(b, c.frag[0], c.len[0]);             \
		stmt;                                       \
		expect_bad(b, c.len[0], reason);            \
	} while (0)
	for (int bit = 0; bit < 32; bit++)
		MUT(b[bit / 8] ^= (uint8_t)(1u << (bit % 8)), HW_FRAG_DROP_BAD_MAGIC);
	MUT(b[4] = 0, HW_FRAG_DROP_BAD_VERSION);
	MUT(b[4] = 2, HW_FRAG_DROP_BAD_VERSION);
	MUT(b[4] = 255, HW_FRAG_DROP_BAD_VERSION);
	MUT(b[5] = 1, HW_FRAG_DROP_BAD_RESERVED);
	MUT(put32(b + 16, 0), HW_FRAG_DROP_BAD_TOTAL);
	MUT(put32(b + 16, HW_FRAG_MAX_TOTAL + 1), HW_FRAG_DROP_BAD_TOTAL);
	MUT(put32(b + 16, 0xFFFFFFFFu), HW_FRAG_DROP_BAD_TOTAL);
	MUT(put16(b + 10, HW_FRAG_MIN_SIZE - 1), HW_FRAG_DROP_BAD_SIZE);
	MUT(put16(b + 10, 0), HW_FRAG_DROP_BAD_SIZE);
	MUT(put16(b + 10, 2500), HW_FRAG_DROP_BAD_SIZE);   /* not below the total */
	MUT(put16(b + 8, 2), HW_FRAG_DROP_BAD_COUNT);
	MUT(put16(b + 8, 4), HW_FRAG_DROP_BAD_COUNT);
	MUT(put16(b + 8, 1), HW_FRAG_DROP_BAD_COUNT);
	MUT(put16(b + 8, 0xFFFF), HW_FRAG_DROP_BAD_COUNT);
	MUT(put16(b + 6, 3), HW_FRAG_DROP_BAD_INDEX);
	MUT(put16(b + 6, 0xFFFF), HW_FRAG_DROP_BAD_INDEX);
	MUT(put32(b + 20, 1), HW_FRAG_DROP_BAD_OFFSET);
	MUT(put32(b + 20, 1000), HW_FRAG_DROP_BAD_OFFSET);
	MUT(put32(b + 20, 0xFFFFFFFFu), HW_FRAG_DROP_BAD_OFFSET);
	/* index 1 with index 0's offset */
	MUT(put16(b + 6, 1), HW_FRAG_DROP_BAD_OFFSET);
#undef MUT
	/* payload one short, one long, the last fragment with a full-size payload */
	expect_bad(c.frag[0], c.len[0] - 1, HW_FRAG_DROP_BAD_LENGTH);
	expect_bad(c.frag[0], HW_FRAG_HDR_LEN, HW_FRAG_DROP_BAD_LENGTH);
	memcpy(b, c.frag[0], c.len[0]);
	uint8_t *big = malloc(c.len[0] + 1);
	memcpy(big, c.frag[0], c.len[0]);
	big[c.len[0]] = 0;
	expect_bad(big, c.len[0] + 1, HW_FRAG_DROP_BAD_LENGTH);
	free(big);
	assert_int_equal(c.len[2], HW_FRAG_HDR_LEN + 500);
	memcpy(b, c.frag[2], HW_FRAG_HDR_LEN);
	expect_bad(b, sizeof b, HW_FRAG_DROP_BAD_LENGTH);
	/* the valid ones decode */
	for (int i = 0; i < c.n; i++) {
		hw_frag_hdr h;
		hw_frag_drop why;
		assert_int_equal(hw_frag_decode(c.frag[i], c.len[i], &h, &why), 0);
	}
	/* the encoder refuses what the decoder would */
	hw_frag_hdr h = { .index = 0, .count = 3, .frag_size = 1000, .total_len = 2500, .offset = 0 };
	uint8_t e[HW_FRAG_HDR_LEN];
	assert_int_equal(hw_frag_encode(&h, e, sizeof e), HW_FRAG_HDR_LEN);
	assert_int_equal(hw_frag_encode(&h, e, sizeof e - 1), -ENOSPC);
	assert_int_equal(hw_frag_encode(NULL, e, sizeof e), -EINVAL);
	assert_int_equal(hw_frag_encode(&h, NULL, sizeof e), -EINVAL);
	hw_frag_hdr x = h;
	x.count = 2;
	assert_int_equal(hw_frag_encode(&x, e, sizeof e), -EINVAL);
	x = h;
	x.offset = 5;
	assert_int_equal(hw_frag_encode(&x, e, sizeof e), -EINVAL);
	x = h;
	x.index = 3;
	x.offset = 3000;
	assert_int_equal(hw_frag_encode(&x, e, sizeof e), -EINVAL);
	x = h;
	x.frag_size = 100;
	assert_int_equal(hw_frag_encode(&x, e, sizeof e), -EINVAL);
	x = h;
	x.total_len = 0;
	assert_int_equal(hw_frag_encode(&x, e, sizeof e), -EINVAL);
	hw_frag_drop why;
	hw_frag_hdr out;
	assert_int_equal(hw_frag_decode(NULL, 5, &out, &why), -EINVAL);
	assert_int_equal(hw_frag_decode(c.frag[0], c.len[0], NULL, &why), -EINVAL);
	assert_int_equal(hw_frag_decode(c.frag[0], c.len[0], &out, NULL), -EINVAL);
	cut_free(&c);
}

/* Push the fragments of c in the given order; the last push completes. */
static void deliver(hw_frag_reasm *r, const cut *c, const int *order, uint32_t ip, uint16_t port, int64_t t)
{
	for (int k = 0; k < c->n; k++) {
		const uint8_t *out = NULL;
		size_t olen = 0;
		hw_frag_drop why;
		int rc = push(r, ip, port, c->frag[order[k]], c->len[order[k]], t, &out, &olen, &why);
		if (k + 1 < c->n) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, 1);
			assert_int_equal(olen, c->total);
			assert_memory_equal(out, c->frame, c->total);
		}
	}
}

static void test_in_and_out_of_order(void **st)
{
	(void)st;
	hw_frag_reasm *r = hw_frag_reasm_create(4, 100 * MS, NULL);
	assert_non_null(r);
	uint64_t done_bytes = 0;
	for (int it = 0; it < 300; it++) {
		cut c;
		size_t total = 1 + HW_FRAG_MIN_SIZE + rnd() % (HW_FRAG_MAX_TOTAL - HW_FRAG_MIN_SIZE);
		size_t mp = HW_FRAG_HDR_LEN + HW_FRAG_MIN_SIZE + rnd() % 9000;
		if (total <= mp)
			total = mp + 1 + rnd() % 100;
		if (total > HW_FRAG_MAX_TOTAL)
			continue;
		cut_random(&c, total, mp, (uint32_t)it);
		int order[HW_FRAG_MAX_COUNT];
		for (int i = 0; i < c.n; i++)
			order[i] = i;
		if (it % 2)
			shuffle(order, c.n);
		deliver(r, &c, order, 0x0A000001u, 9092, it * MS);
		done_bytes += total;
		cut_free(&c);
		assert_int_equal(hw_frag_reasm_in_use(r), 0);
	}
	const hw_frag_stats *s = hw_frag_reasm_stats(r);
	assert_int_equal(s->bytes_completed, done_bytes);
	assert_int_equal(s->messages_completed, s->messages_started);
	assert_int_equal(s->fragments, s->fragments_accepted);
	for (int i = 0; i < HW_FRAG_DROP__COUNT; i++)
		assert_int_equal(s->drops[i], 0);
	hw_frag_reasm_destroy(r);
}

static void test_duplicates(void **st)
{
	(void)st;
	hw_frag_reasm *r = hw_frag_reasm_create(4, 100 * MS, NULL);
	cut c;
	cut_random(&c, 5000, 1500, 42);   /* 4 fragments */
	assert_int_equal(c.n, 4);
	const uint8_t *out;
	size_t olen;
	hw_frag_drop why;
	assert_int_equal(push(r, 1, 2, c.frag[1], c.len[1], 0, &out, &olen, &why), 0);
	assert_int_equal(push(r, 1, 2, c.frag[1], c.len[1], 0, &out, &olen, &why), -EALREADY);
	assert_int_equal(why, HW_FRAG_DROP_DUPLICATE);
	assert_int_equal(push(r, 1, 2, c.frag[0], c.len[0], 0, &out, &olen, &why), 0);
	assert_int_equal(push(r, 1, 2, c.frag[3], c.len[3], 0, &out, &olen, &why), 0);
	assert_int_equal(push(r, 1, 2, c.frag[0], c.len[0], 0, &out, &olen, &why), -EALREADY);
	assert_int_equal(push(r, 1, 2, c.frag[2], c.len[2], 0, &out, &olen, &why), 1);
	assert_memory_equal(out, c.frame, c.total);
	/* a duplicate after completion is a duplicate, not a new message */
	for (int i = 0; i < c.n; i++) {
		assert_int_equal(push(r, 1, 2, c.frag[i], c.len[i], 1, &out, &olen, &why), -EALREADY);
		assert_int_equal(why, HW_FRAG_DROP_DUPLICATE);
	}
	assert_int_equal(hw_frag_reasm_in_use(r), 0);
	const hw_frag_stats *s = hw_frag_reasm_stats(r);
	assert_int_equal(s->drops[HW_FRAG_DROP_DUPLICATE], 2 + 4);
	assert_int_equal(s->messages_completed, 1);
	assert_int_equal(s->messages_started, 1);
	/* the same msg_id from another port or another IP is another message */
	assert_int_equal(push(r, 1, 3, c.frag[0], c.len[0], 2, &out, &olen, &why), 0);
	assert_int_equal(push(r, 9, 2, c.frag[0], c.len[0], 2, &out, &olen, &why), 0);
	assert_int_equal(hw_frag_reasm_in_use(r), 2);
	cut_free(&c);
	hw_frag_reasm_destroy(r);
}

static void test_interleaved(void **st)
{
	(void)st;
	enum { M = 8 };
	hw_frag_reasm *r = hw_frag_reasm_create(M, 100 * MS, NULL);
	cut c[M];
	int next[M];
	for (int m = 0; m < M; m++) {
		cut_random(&c[m], 2000 + rnd() % 60000, 1472, 1000u + (uint32_t)(m % 2)); /* ids collide across senders */
		next[m] = 0;
	}
	int left = M, completed = 0;
	while (left) {
		int m = (int)(rnd() % M);
		if (next[m] == c[m].n)
			continue;
		const uint8_t *out;
		size_t olen;
		hw_frag_drop why;
		int k = next[m]++;
		/* sender m: IP 10.0.0.(m/2), port 9092 + m: a distinct key per m */
		int rc = push(r, 0x0A000000u + (uint32_t)(m / 2), (uint16_t)(9092 + m), c[m].frag[k], c[m].len[k],
			      0, &out, &olen, &why);
		if (next[m] < c[m].n) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, 1);
			assert_int_equal(olen, c[m].total);
			assert_memory_equal(out, c[m].frame, c[m].total);
			left--;
			completed++;
		}
	}
	assert_int_equal(completed, M);
	const hw_frag_stats *s = hw_frag_reasm_stats(r);
	for (int i = 0; i < HW_FRAG_DROP__COUNT; i++)
		assert_int_equal(s->drops[i], 0);
	for (int m = 0; m < M; m++)
		cut_free(&c[m]);
	hw_frag_reasm_destroy(r);
}

static void test_inconsistent(void **st)
{
	(void)st;
	hw_frag_reasm *r = hw_frag_reasm_create(2, 100 * MS, NULL);
	cut a, b, d;
	cut_random(&a, 3000, 1024, 5);   /* fs 1000, 3 fragments */
	cut_random(&b, 2900, 1024, 5);   /* same id, other total: still 3 fragments of 1000 */
	cut_random(&d, 3000, 1524, 5);   /* same id, other frag size */
	const uint8_t *out;
	size_t olen;
	hw_frag_drop why;
	assert_int_equal(push(r, 1, 1, a.frag[0], a.len[0], 0, &out, &olen, &why), 0);
	assert_int_equal(push(r, 1, 1, b.frag[1], b.len[1], 0, &out, &olen, &why), -EBADMSG);
	assert_int_equal(why, HW_FRAG_DROP_INCONSISTENT);
	assert_int_equal(push(r, 1, 1, d.frag[1], d.len[1], 0, &out, &olen, &why), -EBADMSG);
	assert_int_equal(why, HW_FRAG_DROP_INCONSISTENT);
	/* the message itself is intact */
	assert_int_equal(push(r, 1, 1, a.frag[2], a.len[2], 0, &out, &olen, &why), 0);
	assert_int_equal(push(r, 1, 1, a.frag[1], a.len[1], 0, &out, &olen, &why), 1);
	assert_memory_equal(out, a.frame, a.total);
	assert_int_equal(hw_frag_reasm_stats(r)->drops[HW_FRAG_DROP_INCONSISTENT], 2);
	cut_free(&a);
	cut_free(&b);
	cut_free(&d);
	hw_frag_reasm_destroy(r);
}

static void test_timeout(void **st)
{
	(void)st;
	hw_frag_reasm *r = hw_frag_reasm_create(4, 100 * MS, NULL);
	cut c;
	cut_random(&c, 10000, 1500, 77);
	const uint8_t *out;
	size_t olen;
	hw_frag_drop why;
	/* all but fragment 3, then it arrives too late */
	for (int i = 0; i < c.n; i++)
		if (i != 3)
			assert_int_equal(push(r, 1, 1, c.frag[i], c.len[i], 0, &out, &olen, &why), 0);
	assert_int_equal(hw_frag_reasm_expire(r, 100 * MS), 0);   /* not more than the timeout yet */
	assert_int_equal(hw_frag_reasm_in_use(r), 1);
	assert_int_equal(hw_frag_reasm_expire(r, 100 * MS + 1), 1);
	assert_int_equal(hw_frag_reasm_in_use(r), 0);
	assert_int_equal(push(r, 1, 1, c.frag[3], c.len[3], 101 * MS, &out, &olen, &why), -ETIMEDOUT);
	assert_int_equal(why, HW_FRAG_DROP_LATE);
	const hw_frag_stats *s = hw_frag_reasm_stats(r);
	assert_int_equal(s->drops[HW_FRAG_DROP_TIMEOUT], 1);
	assert_int_equal(s->fragments_discarded, (uint64_t)c.n - 1);
	assert_int_equal(s->messages_completed, 0);
	/* push never expires, and the timeout runs from a message's newest
	 * fragment: a receiver that was descheduled past the timeout still
	 * completes the messages whose fragments waited in its queue, and one
	 * that keeps receiving fragments is not given up */
	cut d;
	cut_random(&d, 10000, 1500, 78);
	assert_int_equal(push(r, 1, 1, d.frag[0], d.len[0], 200 * MS, &out, &olen, &why), 0);
	for (int i = 1; i < d.n - 1; i++)
		assert_int_equal(push(r, 1, 1, d.frag[i], d.len[i], 250 * MS, &out, &olen, &why), 0);
	assert_int_equal(hw_frag_reasm_expire(r, 350 * MS), 0);   /* newest fragment at 250 ms */
	assert_int_equal(push(r, 1, 1, d.frag[d.n - 1], d.len[d.n - 1], 500 * MS, &out, &olen, &why), 1);
	assert_int_equal(olen, d.total);
	assert_memory_equal(out, d.frame, d.total);
	assert_int_equal(s->drops[HW_FRAG_DROP_TIMEOUT], 1);
	/* idle past the timeout since its newest fragment: given up, and a
	 * straggler of it is LATE */
	cut d2;
	cut_random(&d2, 10000, 1500, 80);
	for (int i = 0; i < d2.n - 1; i++)
		assert_int_equal(push(r, 1, 1, d2.frag[i], d2.len[i], 600 * MS, &out, &olen, &why), 0);
	assert_int_equal(hw_frag_reasm_expire(r, 700 * MS + 1), 1);
	assert_int_equal(push(r, 1, 1, d2.frag[d2.n - 1], d2.len[d2.n - 1], 701 * MS, &out, &olen, &why), -ETIMEDOUT);
	assert_int_equal(why, HW_FRAG_DROP_LATE);
	assert_int_equal(s->drops[HW_FRAG_DROP_TIMEOUT], 2);
	cut_free(&d2);
	/* within the timeout it completes */
	cut e;
	cut_random(&e, 10000, 1500, 79);
	int order[HW_FRAG_MAX_COUNT];
	for (int i = 0; i < e.n; i++)
		order[i] = e.n - 1 - i;
	deliver(r, &e, order, 1, 1, 800 * MS);
	cut_free(&c);
	cut_free(&d);
	cut_free(&e);
	hw_frag_reasm_destroy(r);
}

static void test_slot_exhaustion(void **st)
{
	(void)st;
	enum { SLOTS = 3 };
	hw_frag_reasm *r = hw_frag_reasm_create(SLOTS, 100 * MS, NULL);
	cut c[SLOTS + 2];
	const uint8_t *out;
	size_t olen;
	hw_frag_drop why;
	for (int m = 0; m < SLOTS + 2; m++) {
		cut_random(&c[m], 4000, 1500, (uint32_t)m);
		/* first fragment of each, 1 ms apart: message 0 is the oldest */
		assert_int_equal(push(r, 1, 1, c[m].frag[0], c[m].len[0], m * MS, &out, &olen, &why), 0);
		assert_true(hw_frag_reasm_in_use(r) <= SLOTS);
	}
	const hw_frag_stats *s = hw_frag_reasm_stats(r);
	assert_int_equal(s->drops[HW_FRAG_DROP_EVICTED], 2);   /* messages 0 and 1 */
	assert_int_equal(hw_frag_reasm_in_use(r), SLOTS);
	/* the evicted messages' further fragments are late; the others complete */
	assert_int_equal(push(r, 1, 1, c[0].frag[1], c[0].len[1], 10 * MS, &out, &olen, &why), -ETIMEDOUT);
	assert_int_equal(why, HW_FRAG_DROP_LATE);
	for (int m = 2; m < SLOTS + 2; m++) {
		for (int i = 1; i < c[m].n; i++) {
			int rc = push(r, 1, 1, c[m].frag[i], c[m].len[i], 10 * MS, &out, &olen, &why);
			assert_int_equal(rc, i + 1 == c[m].n);
		}
		assert_memory_equal(out, c[m].frame, c[m].total);
	}
	assert_int_equal(s->messages_completed, SLOTS);
	for (int m = 0; m < SLOTS + 2; m++)
		cut_free(&c[m]);
	hw_frag_reasm_destroy(r);
}

/* Memory is fixed at create: many senders opening messages never make the
 * reassembler hold more than n_slots, and what it allocated is n_slots
 * frames plus bookkeeping. */
static void test_memory_bound(void **st)
{
	(void)st;
	enum { SLOTS = 16 };
	hw_frag_reasm *r = hw_frag_reasm_create(SLOTS, 100 * MS, NULL);
	size_t mem = hw_frag_reasm_mem(r);
	assert_true(mem >= (size_t)SLOTS * HW_FRAG_MAX_TOTAL);
	assert_true(mem <= (size_t)SLOTS * (HW_FRAG_MAX_TOTAL + 4096) + 65536);
	cut c;
	cut_random(&c, HW_FRAG_MAX_TOTAL, 1472, 0);
	const uint8_t *out;
	size_t olen;
	hw_frag_drop why;
	for (uint32_t i = 0; i < 20000; i++) {
		/* a different sender port each time: 20000 would-be messages */
		int rc = push(r, 0x0A000001u, (uint16_t)(i + 1), c.frag[i % (unsigned)c.n], c.len[i % (unsigned)c.n],
			      (int64_t)i * 1000, &out, &olen, &why);
		assert_int_equal(rc, 0);
		assert_true(hw_frag_reasm_in_use(r) <= SLOTS);
	}
	assert_int_equal(hw_frag_reasm_mem(r), mem);
	const hw_frag_stats *s = hw_frag_reasm_stats(r);
	assert_int_equal(s->drops[HW_FRAG_DROP_EVICTED] + s->drops[HW_FRAG_DROP_TIMEOUT] + hw_frag_reasm_in_use(r),
			 20000);
	cut_free(&c);
	hw_frag_reasm_destroy(r);
}

static void test_args_and_names(void **st)
{
	(void)st;
	int err = 0;
	assert_null(hw_frag_reasm_create(0, 1, &err));
	assert_int_equal(err, -EINVAL);
	assert_null(hw_frag_reasm_create(HW_FRAG_MAX_SLOTS + 1, 1, &err));
	assert_null(hw_frag_reasm_create(1, 0, &err));
	hw_frag_reasm *r = hw_frag_reasm_create(1, 1, &err);
	const uint8_t *out;
	size_t olen;
	hw_frag_drop why = HW_FRAG_DROP__COUNT;
	uint8_t b[HW_FRAG_HDR_LEN] = { 0 };
	assert_int_equal(hw_frag_reasm_push(NULL, 0, 0, b, sizeof b, 0, &out, &olen, &why), -EINVAL);
	assert_int_equal(hw_frag_reasm_push(r, 0, 0, NULL, 3, 0, &out, &olen, &why), -EINVAL);
	assert_int_equal(hw_frag_reasm_push(r, 0, 0, b, sizeof b, 0, NULL, &olen, &why), -EINVAL);
	assert_int_equal(hw_frag_reasm_push(r, 0, 0, b, sizeof b, 0, &out, &olen, NULL), -EINVAL);
	assert_int_equal(why, HW_FRAG_DROP__COUNT);
	assert_int_equal(hw_frag_reasm_stats(r)->fragments, 0);
	assert_int_equal(hw_frag_reasm_push(r, 0, 0, b, sizeof b, 0, &out, &olen, &why), -EBADMSG);
	assert_int_equal(why, HW_FRAG_DROP_BAD_MAGIC);
	assert_int_equal(hw_frag_reasm_stats(r)->drops[HW_FRAG_DROP_BAD_MAGIC], 1);
	assert_int_equal(hw_frag_reasm_expire(NULL, 0), 0);
	hw_frag_reasm_destroy(r);
	hw_frag_reasm_destroy(NULL);
	for (int i = 0; i < HW_FRAG_DROP__COUNT; i++) {
		assert_string_not_equal(hw_frag_drop_name(i), "UNKNOWN_DROP");
		assert_true(strlen(hw_frag_drop_desc(i)) > 0);
		assert_true(hw_frag_drop_errno(i) > 0);
		for (int o = 0; o < i; o++)
			assert_string_not_equal(hw_frag_drop_name(i), hw_frag_drop_name(o));
	}
	assert_string_equal(hw_frag_drop_name(-1), "UNKNOWN_DROP");
	assert_string_equal(hw_frag_drop_name(HW_FRAG_DROP__COUNT), "UNKNOWN_DROP");
	assert_int_equal(hw_frag_drop_errno(HW_FRAG_DROP__COUNT), EINVAL);
}

int main(void)
{
	seed = hw_test_seed_init("test_frag");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_in_and_out_of_order),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_inconsistent),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_slot_exhaustion),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_args_and_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
