/* test_wire_auth.c — frame version 3 (docs/wire.md "Version 3",
 * docs/security.md): every frame MACed under the cluster key, flat and
 * gather encodings (record bytes MACed where they are), every single-byte
 * mutation and truncation refused, versions 1/2 refused with a key and
 * version 3 without one, a forged frame never moves the replay window,
 * nonce inputs never repeat, the secret file's mode checks, and the
 * VPCLMULQDQ GHASH's tags equal OpenSSL's GCM's for random lengths and
 * iovec splits.
 * Randomised parts take their seed from HW_TEST_SEED. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "hw_wire.h"
#include "hw_ghash.h"
#include "hw_wire_auth.h"
#include "../../support/hw_test.h"

#define CLUSTER 0xC0FFEEu

static uint32_t rnd(void) { return (uint32_t)(hw_test_rand() >> 11); }

static const uint8_t key_a[HW_WIRE_AUTH_KEY_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
						     17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };
static uint8_t key_b[HW_WIRE_AUTH_KEY_LEN];
static uint8_t arena_buf[HW_WIRE_ARENA_SIZE];
static uint8_t frame[HW_WIRE_MAX_FRAME], work[HW_WIRE_MAX_FRAME];

static void make_batch(uint8_t *p, size_t len, int64_t base)
{
	memset(p, 0, len);
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)((uint64_t)base >> (56 - 8 * i));
	uint32_t bl = (uint32_t)(len - 12);
	p[8] = (uint8_t)(bl >> 24);
	p[9] = (uint8_t)(bl >> 16);
	p[10] = (uint8_t)(bl >> 8);
	p[11] = (uint8_t)bl;
	p[16] = 2;
	for (size_t i = HW_WIRE_BATCH_HDR; i < len; i++)
		p[i] = (uint8_t)rnd();
}

static void pstate_msg(hw_msg *m)
{
	memset(m, 0, sizeof *m);
	m->type = HW_MSG_PARTITION_STATE;
	m->src = 0;
	m->dst = 2;
	m->correlation_id = 77;
	hw_partition_state *s = &m->u.pstate;
	s->tp = (hw_tp){ 5, 0 };
	s->leader = 1;
	s->leader_epoch = 3;
	s->partition_epoch = 4;
	s->replicas = (hw_idset){ 3, { 1, 2, 3 } };
	s->isr = (hw_idset){ 3, { 1, 2, 3 } };
	s->min_insync_replicas = 2;
	snprintf(s->topic, sizeof s->topic, "payments");
}

static int decode(const uint8_t *buf, size_t len, hw_msg *m, hw_wire_hdr *h, hw_wire_drop *why)
{
	hw_wire_arena a;
	hw_wire_arena_init(&a, arena_buf, sizeof arena_buf);
	return hw_wire_decode(buf, len, CLUSTER, &a, h, m, why, NULL);
}

static int setup(void **st)
{
	(void)st;
	hw_test_seed_init("test_wire_auth");
	for (int i = 0; i < HW_WIRE_AUTH_KEY_LEN; i++)
		key_b[i] = key_a[i] ^ 0x80;
	return 0;
}

static void test_flat_and_mutations(void **st)
{
	(void)st;
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	hw_msg m, d;
	hw_wire_hdr h;
	hw_wire_drop why;
	pstate_msg(&m);
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 9, .seq = 0 };
	int n = hw_wire_encode(&tx, &m, NULL, frame, sizeof frame);
	assert_true(n > HW_WIRE_HDR_LEN + HW_WIRE_AUTH_TRAILER);
	assert_int_equal(frame[2], HW_WIRE_VERSION_AUTH);
	assert_int_equal(decode(frame, (size_t)n, &d, &h, &why), 0);
	assert_int_equal(h.payload_len, (uint32_t)n - HW_WIRE_HDR_LEN - HW_WIRE_AUTH_TRAILER);
	assert_string_equal(d.u.pstate.topic, "payments");
	assert_int_equal(d.u.pstate.leader, 1);
	/* every single-byte change of header, body, salt or tag is refused */
	for (int i = 0; i < n; i++) {
		memcpy(work, frame, (size_t)n);
		work[i] ^= (uint8_t)(1u << (rnd() % 8));
		assert_int_not_equal(decode(work, (size_t)n, &d, &h, &why), 0);
	}
	/* an attacker without the key: same fields, any other length */
	for (int len = 0; len < n; len++)
		assert_int_not_equal(decode(frame, (size_t)len, &d, &h, &why), 0);
	/* a forged leader with a recomputed tag under another key */
	assert_int_equal(hw_wire_auth_set_key(key_b, sizeof key_b), 0);
	m.u.pstate.leader = 3;
	int nf = hw_wire_encode(&tx, &m, NULL, work, sizeof work);
	assert_true(nf > 0);
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	assert_int_equal(decode(work, (size_t)nf, &d, &h, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_MAC);
	hw_wire_auth_set_key(NULL, 0);
}

static void test_versions_need_the_mode(void **st)
{
	(void)st;
	hw_msg m, d;
	hw_wire_hdr h;
	hw_wire_drop why;
	pstate_msg(&m);
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 9, .seq = 0 };
	hw_wire_auth_set_key(NULL, 0);
	int n1 = hw_wire_encode(&tx, &m, NULL, work, sizeof work);   /* version 1 */
	assert_int_equal(work[2], 1);
	assert_int_equal(decode(work, (size_t)n1, &d, &h, &why), 0);
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	assert_int_equal(decode(work, (size_t)n1, &d, &h, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_NO_MAC);
	tx.stream = 3;                                                  /* version 2 frames too */
	hw_wire_auth_set_key(NULL, 0);
	int n2 = hw_wire_encode(&tx, &m, NULL, work, sizeof work);
	assert_int_equal(work[2], 2);
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	assert_int_equal(decode(work, (size_t)n2, &d, &h, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_NO_MAC);
	/* version 3 with its stream; refused once the key is gone */
	int n3 = hw_wire_encode(&tx, &m, NULL, work, sizeof work);
	assert_int_equal(work[2], 3);
	assert_int_equal(decode(work, (size_t)n3, &d, &h, &why), 0);
	assert_int_equal(h.stream, 3);
	hw_wire_auth_set_key(NULL, 0);
	assert_int_equal(decode(work, (size_t)n3, &d, &h, &why), -EBADMSG);
	assert_int_equal(why, HW_WIRE_DROP_BAD_MAC);
}

/* A split fetch response with record bytes referenced by the iovec: the
 * tag covers them in place; a flipped record byte fails the frame. */
static void test_gather_fetch_resp(void **st)
{
	(void)st;
	static uint8_t recs[200000];
	size_t off = 0;
	for (int i = 0; off + 17000 < sizeof recs; i++) {
		size_t sz = HW_WIRE_BATCH_HDR + rnd() % 8000;
		make_batch(recs + off, sz, i);
		off += sz;
	}
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	hw_fetch_resp_part part;
	memset(&part, 0, sizeof part);
	part.tp = (hw_tp){ 1, 0 };
	part.records = recs;
	part.records_len = (uint32_t)off;
	part.high_watermark = 5;
	hw_msg m, d;
	memset(&m, 0, sizeof m);
	m.type = HW_MSG_FETCH_RESP;
	m.src = 1;
	m.dst = 2;
	m.u.fetch_resp.n_parts = 1;
	m.u.fetch_resp.parts = &part;
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = 11, .seq = 0 };
	hw_wire_split sp = { 0 };
	size_t got = 0;
	int frames = 0;
	while (!sp.done) {
		static uint8_t hdr[HW_WIRE_MAX_FRAME];
		struct iovec iov[64];
		uint8_t isrec[64];
		int niov;
		int n = hw_wire_encode_iov(&tx, &m, &sp, 16384, hdr, sizeof hdr, iov, 64, &niov, isrec);
		assert_true(n > 0 && n <= 16384);
		size_t o = 0;
		int refs = 0;
		for (int i = 0; i < niov; i++) {
			memcpy(frame + o, iov[i].iov_base, iov[i].iov_len);
			o += iov[i].iov_len;
			refs += isrec[i];
		}
		assert_int_equal(o, (size_t)n);
		assert_true(refs >= 1);                    /* records went by reference */
		hw_wire_hdr h;
		hw_wire_drop why;
		assert_int_equal(decode(frame, (size_t)n, &d, &h, &why), 0);
		assert_int_equal(d.u.fetch_resp.n_parts, 1);
		const hw_fetch_resp_part *p = &d.u.fetch_resp.parts[0];
		assert_memory_equal(p->records, recs + got, p->records_len);
		got += p->records_len;
		/* one record byte changed after the tag was computed */
		size_t at = (size_t)(p->records - frame) + rnd() % p->records_len;
		frame[at] ^= 0x01;
		assert_int_equal(decode(frame, (size_t)n, &d, &h, &why), -EBADMSG);
		assert_int_equal(why, HW_WIRE_DROP_BAD_MAC);
		frames++;
	}
	assert_int_equal(got, off);
	assert_true(frames > 5);
	hw_wire_auth_set_key(NULL, 0);
}

/* The replay window moves only on authenticated frames: a forged frame
 * with a future incarnation (the mute-the-controller attack) is dropped at
 * decode, and the real sender's next frames are still accepted. */
static void test_forged_incarnation(void **st)
{
	(void)st;
	hw_wire_replay r;
	hw_wire_replay_init(&r);
	hw_msg m, d;
	hw_wire_hdr h;
	hw_wire_drop why;
	pstate_msg(&m);
	hw_wire_tx real = { .cluster_id = CLUSTER, .incarnation = 1000, .seq = 0 };
	hw_wire_tx forged = { .cluster_id = CLUSTER, .incarnation = 0x7fffffff, .seq = 0 };
	int accepted = 0;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(hw_wire_auth_set_key(key_b, sizeof key_b), 0);    /* the attacker's key */
		int nf = hw_wire_encode(&forged, &m, NULL, work, sizeof work);
		assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
		if (decode(work, (size_t)nf, &d, &h, &why) == 0 && hw_wire_replay_check(&r, &h, &why) == 0)
			fail_msg("forged frame accepted");
		assert_int_equal(why, HW_WIRE_DROP_BAD_MAC);
		int n = hw_wire_encode(&real, &m, NULL, frame, sizeof frame);
		accepted += decode(frame, (size_t)n, &d, &h, &why) == 0 && hw_wire_replay_check(&r, &h, &why) == 0;
		/* and the genuine frame replayed is a replay */
		assert_int_equal(decode(frame, (size_t)n, &d, &h, &why), 0);
		assert_int_equal(hw_wire_replay_check(&r, &h, &why), -EBADMSG);
	}
	assert_int_equal(accepted, 20);
	hw_wire_auth_set_key(NULL, 0);
}

static void test_nonce_inputs(void **st)
{
	(void)st;
	uint32_t prev = hw_wire_new_incarnation();
	for (int i = 0; i < 10000; i++) {
		uint32_t x = hw_wire_new_incarnation();
		assert_true((int32_t)(x - prev) > 0);
		prev = x;
	}
	/* a wrapping seq renews the incarnation */
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	hw_msg m;
	pstate_msg(&m);
	hw_wire_tx tx = { .cluster_id = CLUSTER, .incarnation = hw_wire_new_incarnation(), .seq = UINT32_MAX };
	uint32_t inc = tx.incarnation;
	assert_true(hw_wire_encode(&tx, &m, NULL, frame, sizeof frame) > 0);
	assert_int_equal(tx.seq, 0);
	assert_true((int32_t)(tx.incarnation - inc) > 0);
	hw_wire_auth_set_key(NULL, 0);
}

static void test_secret_file(void **st)
{
	(void)st;
	char dir[] = "/tmp/hw-secret-XXXXXX", path[64], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/cluster.secret", dir);
	uint8_t k1[HW_WIRE_AUTH_KEY_LEN], k2[HW_WIRE_AUTH_KEY_LEN];
	assert_int_equal(hw_wire_auth_secret_create(path), 0);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(hw_wire_auth_secret_create(path), -EEXIST);     /* never overwritten */
	assert_int_equal(hw_wire_auth_secret_load(path, k1, err, sizeof err), 0);
	assert_int_equal(hw_wire_auth_secret_load(path, k2, err, sizeof err), 0);
	assert_memory_equal(k1, k2, sizeof k1);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(hw_wire_auth_secret_load(path, k1, err, sizeof err), -EPERM);
	assert_non_null(strstr(err, "0600"));
	assert_int_equal(unlink(path), 0);
	FILE *f = fopen(path, "w");
	fputs("not a key\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(hw_wire_auth_secret_load(path, k1, err, sizeof err), -EINVAL);
	unlink(path);
	assert_int_equal(hw_wire_auth_secret_load(path, k1, err, sizeof err), -ENOENT);
	rmdir(dir);
}

/* One tag under the implementation impl (key_a). */
static void tag_with(int impl, const struct iovec *iov, int n, uint32_t salt, uint8_t tag[HW_WIRE_AUTH_TAG_LEN])
{
	hw_wire_auth_set_impl(impl);
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	assert_int_equal(hw_wire_auth_tag(iov, n, salt, tag), 0);
}

static void test_ghash_matches_openssl(void **st)
{
	(void)st;
	static uint8_t big[70000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (uint8_t)rnd();
	hw_wire_auth_set_impl(HW_WIRE_AUTH_IMPL_AUTO);
	assert_int_equal(hw_wire_auth_set_key(key_a, sizeof key_a), 0);
	assert_string_equal(hw_wire_auth_impl_name(), hw_ghash_available() ? "ghash-vpclmulqdq" : "openssl-gcm");
	if (!hw_ghash_available())
		print_message("this CPU has no VPCLMULQDQ/AVX-512: both sides are OpenSSL's GCM\n");
	for (int t = 0; t < 600; t++) {
		/* lengths: every one from the bare header up to 600 bytes
		 * (all tail sizes and the 16-block loop's edges), then large */
		size_t len = t < 564 ? HW_WIRE_HDR_LEN + (size_t)t : HW_WIRE_HDR_LEN + rnd() % (sizeof big - HW_WIRE_HDR_LEN);
		struct iovec iov[8];
		int n = 1 + (int)(rnd() % 8);
		size_t at = 0;
		for (int i = 0; i < n; i++) {
			size_t left = len - at;
			size_t piece = i == n - 1 ? left : i == 0 ? HW_WIRE_HDR_LEN + rnd() % (left - HW_WIRE_HDR_LEN + 1)
								   : rnd() % (left + 1);
			iov[i] = (struct iovec){ .iov_base = big + at, .iov_len = piece };
			at += piece;
		}
		uint32_t salt = rnd();
		uint8_t ref[HW_WIRE_AUTH_TAG_LEN], got[HW_WIRE_AUTH_TAG_LEN];
		tag_with(HW_WIRE_AUTH_IMPL_OPENSSL, iov, n, salt, ref);
		tag_with(HW_WIRE_AUTH_IMPL_AUTO, iov, n, salt, got);
		assert_memory_equal(ref, got, sizeof ref);
		/* and a different tag for one flipped bit anywhere */
		size_t flip = rnd() % len;
		big[flip] ^= 1;
		tag_with(HW_WIRE_AUTH_IMPL_AUTO, iov, n, salt, got);
		big[flip] ^= 1;
		assert_memory_not_equal(ref, got, sizeof ref);
	}
	hw_wire_auth_set_impl(HW_WIRE_AUTH_IMPL_AUTO);
	hw_wire_auth_set_key(NULL, 0);
	assert_string_equal(hw_wire_auth_impl_name(), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat_and_mutations),
		cmocka_unit_test(test_versions_need_the_mode),
		cmocka_unit_test(test_gather_fetch_resp),
		cmocka_unit_test(test_forged_incarnation),
		cmocka_unit_test(test_nonce_inputs),
		cmocka_unit_test(test_secret_file),
		cmocka_unit_test(test_ghash_matches_openssl),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
