/* hw_crc32c.c — CRC-32C, slicing-by-8 software path and SSE4.2 path.
 * See hw_crc32c.h for the design note. */
#include "hw_crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define HW_CRC32C_X86 1
#endif

#define HW_CRC32C_POLY 0x82F63B78u /* 0x1EDC6F41 bit-reversed */

/* tab[0] is the classic byte table; tab[k][b] is the CRC of byte b followed
 * by k zero bytes, which lets one step fold 8 input bytes with 8 lookups. */
static uint32_t hw_crc32c_tab[8][256];
static void hw_crc32c_shift_init(void); /* the stream-combine tables, below */
static int hw_crc32c_have_sse42;
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
#endif
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
	return hw_crc32c_hw(crc, buf, len);
}
