/* hw_ghash.c — GHASH with VPCLMULQDQ (design note in hw_ghash.h). */
#include "hw_ghash.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HW_GHASH_X86 1
#endif

#ifdef HW_GHASH_X86
#define TGT __attribute__((target("pclmul,ssse3,sse4.1,avx2,avx512f,avx512bw,vpclmulqdq")))

/* byte i of the result = byte 15 - i of x */
#define BSWAP_MASK _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

/* The 256-bit product hi:mid:lo (mid = the two cross terms, straddling
 * the halves) shifted left by one bit and reduced modulo the GCM
 * polynomial: Gueron and Kounavis, algorithm 5 (hw_ghash.h). */
TGT static inline __m128i reduce(__m128i lo, __m128i mid, __m128i hi)
{
	__m128i t3 = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
	__m128i t6 = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
	/* shift t6:t3 left by one bit */
	__m128i t7 = _mm_srli_epi32(t3, 31);
	__m128i t8 = _mm_srli_epi32(t6, 31);
	t3 = _mm_slli_epi32(t3, 1);
	t6 = _mm_slli_epi32(t6, 1);
	__m128i t9 = _mm_srli_si128(t7, 12);
	t8 = _mm_slli_si128(t8, 4);
	t7 = _mm_slli_si128(t7, 4);
	t3 = _mm_or_si128(t3, t7);
	t6 = _mm_or_si128(t6, t8);
	t6 = _mm_or_si128(t6, t9);
	/* first phase of the reduction */
	t7 = _mm_slli_epi32(t3, 31);
	t8 = _mm_slli_epi32(t3, 30);
	t9 = _mm_slli_epi32(t3, 25);
	t7 = _mm_xor_si128(_mm_xor_si128(t7, t8), t9);
	t8 = _mm_srli_si128(t7, 4);
	t7 = _mm_slli_si128(t7, 12);
	t3 = _mm_xor_si128(t3, t7);
	/* second phase */
	__m128i t2 = _mm_srli_epi32(t3, 1);
	__m128i t4 = _mm_srli_epi32(t3, 2);
	__m128i t5 = _mm_srli_epi32(t3, 7);
	t2 = _mm_xor_si128(_mm_xor_si128(t2, t4), _mm_xor_si128(t5, t8));
	t3 = _mm_xor_si128(t3, t2);
	return _mm_xor_si128(t6, t3);
}

TGT static inline __m128i gfmul(__m128i a, __m128i b)
{
	__m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
	__m128i hi = _mm_clmulepi64_si128(a, b, 0x11);
	__m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x10), _mm_clmulepi64_si128(a, b, 0x01));
	return reduce(lo, mid, hi);
}

TGT static inline __m128i fold4(__m512i v)
{
	__m256i h = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
	return _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* Hash nblk whole blocks at p into g->y. HW_GHASH_POWERS (32) at a time:
 * lane j of vector v holds block 4v + j + 1, multiplied by
 * H^(32 - 4v - j); y joins the first block (Horner's rule unrolled 32
 * times, one reduction per 512 bytes: the reduction is the loop's serial
 * part, so the longer the stride the less it shows). */
TGT static void ghash_blocks(hw_ghash *g, const uint8_t *p, size_t nblk)
{
	const hw_ghash_key *k = g->k;
	const __m128i bs = BSWAP_MASK;
	__m128i y = _mm_load_si128((const __m128i *)g->y);
	if (nblk >= HW_GHASH_POWERS) {
		const __m512i bs4 = _mm512_broadcast_i32x4(bs);
		__m512i h[HW_GHASH_POWERS / 4];
		for (int v = 0; v < HW_GHASH_POWERS / 4; v++)
			h[v] = _mm512_load_si512(k->pw[4 * v]);
		for (; nblk >= HW_GHASH_POWERS; nblk -= HW_GHASH_POWERS, p += 16 * HW_GHASH_POWERS) {
			__m512i lo = _mm512_setzero_si512(), hi = lo, mid = lo;
			for (int v = 0; v < HW_GHASH_POWERS / 4; v++) {
				__m512i x = _mm512_shuffle_epi8(_mm512_loadu_si512(p + 64 * v), bs4);
				if (v == 0)
					x = _mm512_xor_si512(x, _mm512_zextsi128_si512(y));
				lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x, h[v], 0x00));
				hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x, h[v], 0x11));
				mid = _mm512_ternarylogic_epi64(mid, _mm512_clmulepi64_epi128(x, h[v], 0x01),
								_mm512_clmulepi64_epi128(x, h[v], 0x10), 0x96);
			}
			y = reduce(fold4(lo), fold4(mid), fold4(hi));
		}
	}
	/* the rest, four blocks at a time with the top powers H^r4 .. H^1 */
	size_t r4 = nblk & ~(size_t)3;
	if (r4) {
		const __m512i bs4 = _mm512_broadcast_i32x4(bs);
		__m512i lo = _mm512_setzero_si512(), hi = lo, mid = lo;
		for (size_t v = 0; v < r4 / 4; v++) {
			__m512i x = _mm512_shuffle_epi8(_mm512_loadu_si512(p + 64 * v), bs4);
			__m512i hv = _mm512_loadu_si512(k->pw[HW_GHASH_POWERS - r4 + 4 * v]);
			if (v == 0)
				x = _mm512_xor_si512(x, _mm512_zextsi128_si512(y));
			lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x, hv, 0x00));
			hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x, hv, 0x11));
			mid = _mm512_ternarylogic_epi64(mid, _mm512_clmulepi64_epi128(x, hv, 0x01),
							_mm512_clmulepi64_epi128(x, hv, 0x10), 0x96);
		}
		y = reduce(fold4(lo), fold4(mid), fold4(hi));
		p += 16 * r4;
		nblk -= r4;
	}
	const __m128i h1 = _mm_load_si128((const __m128i *)k->pw[HW_GHASH_POWERS - 1]);
	for (; nblk; nblk--, p += 16)
		y = gfmul(_mm_xor_si128(y, _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), bs)), h1);
	_mm_store_si128((__m128i *)g->y, y);
}

int hw_ghash_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul") &&
	       __builtin_cpu_supports("ssse3");
}

TGT void hw_ghash_key_init(hw_ghash_key *k, const uint8_t h[16])
{
	__m128i hh = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)h), BSWAP_MASK);
	__m128i pw = hh;
	_mm_store_si128((__m128i *)k->pw[HW_GHASH_POWERS - 1], pw);
	for (int i = HW_GHASH_POWERS - 2; i >= 0; i--) {
		pw = gfmul(pw, hh);
		_mm_store_si128((__m128i *)k->pw[i], pw);
	}
}

TGT void hw_ghash_final(hw_ghash *g, uint8_t out[16])
{
	hw_ghash_pad(g);
	__m128i y = _mm_load_si128((const __m128i *)g->y);
	_mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(y, BSWAP_MASK));
}

#else /* no x86-64: hw_ghash_available() is 0 and nothing else is called */

int hw_ghash_available(void)
{
	return 0;
}

static void ghash_blocks(hw_ghash *g, const uint8_t *p, size_t nblk)
{
	(void)g, (void)p, (void)nblk;
}

void hw_ghash_key_init(hw_ghash_key *k, const uint8_t h[16])
{
	(void)h;
	memset(k, 0, sizeof *k);
}

void hw_ghash_final(hw_ghash *g, uint8_t out[16])
{
	hw_ghash_pad(g);
	memset(out, 0, 16);
}
#endif

void hw_ghash_init(hw_ghash *g, const hw_ghash_key *k)
{
	memset(g, 0, sizeof *g);
	g->k = k;
}

void hw_ghash_update(hw_ghash *g, const void *data, size_t len)
{
	const uint8_t *p = data;
	if (!len)
		return;
	if (g->npart) {
		size_t take = 16 - g->npart < len ? 16 - g->npart : len;
		memcpy(g->part + g->npart, p, take);
		g->npart += (unsigned)take;
		p += take;
		len -= take;
		if (g->npart < 16)
			return;
		ghash_blocks(g, g->part, 1);
		g->npart = 0;
	}
	if (len >= 16) {
		ghash_blocks(g, p, len / 16);
		p += len / 16 * 16;
		len %= 16;
	}
	if (len) {
		memcpy(g->part, p, len);
		g->npart = (unsigned)len;
	}
}

void hw_ghash_pad(hw_ghash *g)
{
	if (!g->npart)
		return;
	memset(g->part + g->npart, 0, 16 - g->npart);
	ghash_blocks(g, g->part, 1);
	g->npart = 0;
}
