/* hw_crc32c.c — CRC-32C, slicing-by-8 software path, SSE4.2 path and
 * VPCLMULQDQ folding path. See hw_crc32c.h for the design note. */
#include "hw_crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define HW_CRC32C_X86 1
#endif

#define HW_CRC32C_POLY 0x82F63B78u /* 0x1EDC6F41 bit-reversed */

/* tab[0] is the classic byte table; tab[k][b] is the CRC of byte b followed
 * by k zero bytes, which lets one step fold 8 input bytes with 8 lookups. */
static uint32_t hw_crc32c_tab[8][256];
static void hw_crc32c_shift_init(void); /* the stream-combine tables, below */
static int hw_crc32c_have_sse42;
static int hw_crc32c_have_fold;
static void hw_crc32c_fold_init(void); /* the folding constants, below */
static pthread_once_t hw_crc32c_once = PTHREAD_ONCE_INIT;

static void hw_crc32c_init(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (HW_CRC32C_POLY & (0u - (c & 1u)));
		hw_crc32c_tab[0][b] = c;
	}
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = hw_crc32c_tab[0][b];
		for (int t = 1; t < 8; t++) {
			c = (c >> 8) ^ hw_crc32c_tab[0][c & 0xFF];
			hw_crc32c_tab[t][b] = c;
		}
	}
	hw_crc32c_shift_init();
#ifdef HW_CRC32C_X86
	__builtin_cpu_init();
	hw_crc32c_have_sse42 = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	hw_crc32c_have_fold = hw_crc32c_have_sse42 && __builtin_cpu_supports("pclmul") &&
			      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
#endif
	hw_crc32c_fold_init();
}

/* Build the tables before main so the hot path needs no once-check; the
 * pthread_once in the entry points covers use from other constructors. */
__attribute__((constructor)) static void hw_crc32c_ctor(void)
{
	pthread_once(&hw_crc32c_once, hw_crc32c_init);
}

static inline void hw_crc32c_ensure(void)
{
	pthread_once(&hw_crc32c_once, hw_crc32c_init);
}

/* Raw (not inverted) slicing-by-8 update. */
static uint32_t hw_crc32c_sw_raw(uint32_t c, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		c = (c >> 8) ^ hw_crc32c_tab[0][(c ^ *p++) & 0xFF];
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8); /* aligned here, memcpy keeps it strict-aliasing clean */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		uint32_t lo = (uint32_t)w ^ c;
		uint32_t hi = (uint32_t)(w >> 32);
		c = hw_crc32c_tab[7][lo & 0xFF] ^ hw_crc32c_tab[6][(lo >> 8) & 0xFF] ^
		    hw_crc32c_tab[5][(lo >> 16) & 0xFF] ^ hw_crc32c_tab[4][lo >> 24] ^
		    hw_crc32c_tab[3][hi & 0xFF] ^ hw_crc32c_tab[2][(hi >> 8) & 0xFF] ^
		    hw_crc32c_tab[1][(hi >> 16) & 0xFF] ^ hw_crc32c_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = (c >> 8) ^ hw_crc32c_tab[0][(c ^ *p++) & 0xFF];
	return c;
}

uint32_t hw_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	hw_crc32c_ensure();
	return ~hw_crc32c_sw_raw(~crc, (const uint8_t *)buf, len);
}

/* ---- combining independent streams -------------------------------------
 * The raw CRC register is linear over GF(2) in (state, data), so for A||B:
 *   R(s, A||B) = shift_|B|(R(s, A)) ^ R(0, B)
 * where shift_n(v) = R(v, n zero bytes) = v * x^(8n) mod P. shift_n is itself
 * linear in v, so it is four 256-entry tables indexed by the bytes of v
 * (table[k][b] = shift_n(b << 8k)). Only the 32 basis images shift_n(1 << i)
 * are computed by feeding zeros (32 * n byte steps at load time); the tables
 * follow by XOR. One table set per fixed block length below. */
#define HW_CRC32C_LONG 2048u /* bytes per stream, long blocks (3 * 2 KiB) */
#define HW_CRC32C_SHORT 256u /* bytes per stream, short blocks (3 * 256 B) */
static uint32_t hw_crc32c_shift_long[4][256];
static uint32_t hw_crc32c_shift_short[4][256];

static void hw_crc32c_shift_tab(uint32_t tab[4][256], size_t n)
{
	uint32_t basis[32];
	for (int i = 0; i < 32; i++) {
		uint32_t c = 1u << i;
		for (size_t k = 0; k < n; k++)
			c = (c >> 8) ^ hw_crc32c_tab[0][c & 0xFF];
		basis[i] = c;
	}
	for (int k = 0; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t v = 0;
			for (int bit = 0; bit < 8; bit++)
				if (b & (1u << bit))
					v ^= basis[8 * k + bit];
			tab[k][b] = v;
		}
}

static void hw_crc32c_shift_init(void)
{
	hw_crc32c_shift_tab(hw_crc32c_shift_long, HW_CRC32C_LONG);
	hw_crc32c_shift_tab(hw_crc32c_shift_short, HW_CRC32C_SHORT);
}

static inline uint32_t hw_crc32c_shift(const uint32_t tab[4][256], uint32_t v)
{
	return tab[0][v & 0xFF] ^ tab[1][(v >> 8) & 0xFF] ^ tab[2][(v >> 16) & 0xFF] ^
	       tab[3][v >> 24];
}

#ifdef HW_CRC32C_X86
/* Three crc32q chains over consecutive blocks of `blk` bytes each: the
 * instruction has 3-cycle latency and 1/cycle throughput, so one chain uses a
 * third of the unit; three independent chains keep it busy. The three partial
 * CRCs are merged with the shift tables for `blk`. Returns the raw register
 * after 3 * blk bytes. */
__attribute__((target("sse4.2"))) static inline uint64_t
hw_crc32c_sse42_3way(uint64_t c0, const uint8_t *p, size_t blk, const uint32_t tab[4][256])
{
	uint64_t c1 = 0, c2 = 0;
	const uint8_t *end = p + blk;
	while (p < end) {
		uint64_t w0, w1, w2;
		memcpy(&w0, p, 8);
		memcpy(&w1, p + blk, 8);
		memcpy(&w2, p + 2 * blk, 8);
		c0 = _mm_crc32_u64(c0, w0);
		c1 = _mm_crc32_u64(c1, w1);
		c2 = _mm_crc32_u64(c2, w2);
		p += 8;
	}
	c0 = hw_crc32c_shift(tab, (uint32_t)c0) ^ (uint32_t)c1;
	c0 = hw_crc32c_shift(tab, (uint32_t)c0) ^ (uint32_t)c2;
	return c0;
}

__attribute__((target("sse4.2"))) static uint32_t
hw_crc32c_sse42_raw(uint32_t c, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8(c, *p++);
		len--;
	}
	uint64_t c64 = c;
	while (len >= 3 * HW_CRC32C_LONG) {
		c64 = hw_crc32c_sse42_3way(c64, p, HW_CRC32C_LONG, hw_crc32c_shift_long);
		p += 3 * HW_CRC32C_LONG;
		len -= 3 * HW_CRC32C_LONG;
	}
	while (len >= 3 * HW_CRC32C_SHORT) {
		c64 = hw_crc32c_sse42_3way(c64, p, HW_CRC32C_SHORT, hw_crc32c_shift_short);
		p += 3 * HW_CRC32C_SHORT;
		len -= 3 * HW_CRC32C_SHORT;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c64 = _mm_crc32_u64(c64, w);
		p += 8;
		len -= 8;
	}
	c = (uint32_t)c64;
	while (len--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}
#endif

/* ---- folding with VPCLMULQDQ --------------------------------------------
 * (The method of Intel's "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ", on 512-bit registers.) A 128-bit chunk A of the stream
 * (loaded little-endian: bit i is the stream's i-th bit, the first bytes
 * the highest powers) followed by F more bits contributes A(x) x^F to the
 * remainder. With A = q0 x^64 + q1 (q0 its first 8 bytes), A x^F ==
 * q0 (x^(64+F) mod P) + q1 (x^F mod P) (mod P): two 64 x 32-bit carry-less
 * products, < 96 bits, that replace A in the chunk F bits later (XORed
 * into it). In the reflected order the products land one bit low, so the
 * constants are x^(63+F) and x^(F-1) mod P, reflected into bits 32..63.
 * Four registers of four chunks each fold by 2048 bits (256 bytes) per
 * step; at the end they fold onto the last chunk, whose 16 bytes, run
 * through crc32q from zero, are the register (the initial register is
 * XORed into the first 4 bytes, which is what starting from it means). */
enum { FOLD_2048, FOLD_1536, FOLD_1024, FOLD_512, FOLD_384, FOLD_256, FOLD_128, FOLD_N };
static const unsigned hw_crc32c_fold_bits[FOLD_N] = { 2048, 1536, 1024, 512, 384, 256, 128 };
static uint64_t hw_crc32c_fold_k[FOLD_N][2];
#define HW_CRC32C_FOLD_MIN 512u /* below, the setup and the final folds cost more than they save */

/* x^n mod P, P = x^32 + 0x1EDC6F41 (bit d = the coefficient of x^d),
 * reflected into bits 32..63 (x^d at bit 63 - d). */
static uint64_t hw_crc32c_xpow(unsigned n)
{
	uint64_t r = 1, s = 0;
	for (unsigned i = 0; i < n; i++) {
		r <<= 1;
		if (r >> 32)
			r ^= 0x11EDC6F41ull;
	}
	for (int d = 0; d < 32; d++)
		if (r >> d & 1)
			s |= 1ull << (63 - d);
	return s;
}

static void hw_crc32c_fold_init(void)
{
	for (int i = 0; i < FOLD_N; i++) {
		hw_crc32c_fold_k[i][0] = hw_crc32c_xpow(63 + hw_crc32c_fold_bits[i]);
		hw_crc32c_fold_k[i][1] = hw_crc32c_xpow(hw_crc32c_fold_bits[i] - 1);
	}
}

#ifdef HW_CRC32C_X86
#define FOLD_TGT __attribute__((target("sse4.2,pclmul,avx2,avx512f,vpclmulqdq")))

FOLD_TGT static inline __m128i hw_crc32c_k128(int i)
{
	return _mm_set_epi64x((long long)hw_crc32c_fold_k[i][1], (long long)hw_crc32c_fold_k[i][0]);
}

FOLD_TGT static inline __m512i hw_crc32c_fold512(__m512i x, __m512i k)
{
	return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11));
}

FOLD_TGT static inline __m128i hw_crc32c_fold128(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* Raw register c after p[0..len), len >= 256. */
FOLD_TGT static uint32_t hw_crc32c_fold_raw(uint32_t c, const uint8_t *p, size_t len)
{
	__m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64);
	__m512i x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
	x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)c)));
	p += 256;
	len -= 256;
	const __m512i k = _mm512_broadcast_i32x4(hw_crc32c_k128(FOLD_2048));
	for (; len >= 256; p += 256, len -= 256) {
		x0 = _mm512_xor_si512(hw_crc32c_fold512(x0, k), _mm512_loadu_si512(p));
		x1 = _mm512_xor_si512(hw_crc32c_fold512(x1, k), _mm512_loadu_si512(p + 64));
		x2 = _mm512_xor_si512(hw_crc32c_fold512(x2, k), _mm512_loadu_si512(p + 128));
		x3 = _mm512_xor_si512(hw_crc32c_fold512(x3, k), _mm512_loadu_si512(p + 192));
	}
	__m512i x = _mm512_xor_si512(
		_mm512_xor_si512(hw_crc32c_fold512(x0, _mm512_broadcast_i32x4(hw_crc32c_k128(FOLD_1536))),
				 hw_crc32c_fold512(x1, _mm512_broadcast_i32x4(hw_crc32c_k128(FOLD_1024)))),
		_mm512_xor_si512(hw_crc32c_fold512(x2, _mm512_broadcast_i32x4(hw_crc32c_k128(FOLD_512))), x3));
	__m128i a = _mm_xor_si128(
		_mm_xor_si128(hw_crc32c_fold128(_mm512_extracti32x4_epi32(x, 0), hw_crc32c_k128(FOLD_384)),
			      hw_crc32c_fold128(_mm512_extracti32x4_epi32(x, 1), hw_crc32c_k128(FOLD_256))),
		_mm_xor_si128(hw_crc32c_fold128(_mm512_extracti32x4_epi32(x, 2), hw_crc32c_k128(FOLD_128)),
			      _mm512_extracti32x4_epi32(x, 3)));
	uint64_t c64 = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(a));
	c64 = _mm_crc32_u64(c64, (uint64_t)_mm_extract_epi64(a, 1));
	return hw_crc32c_sse42_raw((uint32_t)c64, p, len);
}
#endif

uint32_t hw_crc32c_fold(uint32_t crc, const void *buf, size_t len)
{
	hw_crc32c_ensure();
#ifdef HW_CRC32C_X86
	if (hw_crc32c_have_fold && len >= 256)
		return ~hw_crc32c_fold_raw(~crc, (const uint8_t *)buf, len);
#endif
	return hw_crc32c_hw(crc, buf, len);
}

int hw_crc32c_fold_available(void)
{
	hw_crc32c_ensure();
	return hw_crc32c_have_fold;
}

uint32_t hw_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	hw_crc32c_ensure();
#ifdef HW_CRC32C_X86
	if (hw_crc32c_have_sse42)
		return ~hw_crc32c_sse42_raw(~crc, (const uint8_t *)buf, len);
#endif
	return ~hw_crc32c_sw_raw(~crc, (const uint8_t *)buf, len);
}

int hw_crc32c_hw_available(void)
{
	hw_crc32c_ensure();
	return hw_crc32c_have_sse42;
}

uint32_t hw_crc32c(uint32_t crc, const void *buf, size_t len)
{
#ifdef HW_CRC32C_X86
	if (len >= HW_CRC32C_FOLD_MIN && hw_crc32c_have_fold) {
		hw_crc32c_ensure();
		return ~hw_crc32c_fold_raw(~crc, (const uint8_t *)buf, len);
	}
#endif
	return hw_crc32c_hw(crc, buf, len);
}
