/* hw_ghash.h — GHASH, GCM's universal hash (NIST SP 800-38D, section 6.4),
 * with 512-bit carry-less multiplies, for the frame MAC (hw_wire_auth.c).
 *
 * Design note. The frame MAC is AES-256-GCM used as GMAC: every byte of a
 * frame is GCM's additional data, so its cost per byte is GHASH's alone
 * (one AES block per frame, for the tag's mask). OpenSSL 3.0's GHASH
 * multiplies one 128-bit block per PCLMULQDQ (8.5 GB/s here, 16 KiB
 * frames; a replicated byte is MACed six times). Where the CPU has
 * VPCLMULQDQ with AVX-512 (checked at run time), this one multiplies four
 * blocks per instruction, 32 blocks per reduction: the same function,
 * the same tags (the unit test compares it with OpenSSL over random
 * lengths and splits), a few times fewer instructions per byte
 * (perf/perf_mac). Elsewhere hw_wire_auth.c keeps OpenSSL's GCM.
 *
 * Representation: each 16-byte block is byte-reversed into a register;
 * the product of two such elements is the 256-bit carry-less product,
 * shifted left by one bit and reduced modulo x^128 + x^7 + x^2 + x + 1
 * (Gueron and Kounavis, "Intel Carry-Less Multiplication Instruction and
 * its Usage for Computing the GCM Mode", algorithm 5). Sums of unreduced
 * products reduce to the sum of the reduced ones, so 32 blocks are
 * multiplied by H^32 .. H^1 and reduced once. Constant time: no branch or
 * table index depends on the key or the data. */
#ifndef HW_GHASH_H
#define HW_GHASH_H
#include <stddef.h>
#include <stdint.h>

#define HW_GHASH_POWERS 32

/* The hash key's powers H^32 .. H^1 (pw[i] = H^(32 - i)), byte-reversed. */
typedef struct hw_ghash_key {
	_Alignas(64) uint8_t pw[HW_GHASH_POWERS][16];
} hw_ghash_key;

/* A running hash: y (byte-reversed), a partial block of npart bytes. */
typedef struct hw_ghash {
	_Alignas(16) uint8_t y[16];
	uint8_t part[16];
	unsigned npart;
	const hw_ghash_key *k;
} hw_ghash;

/* 1 when this CPU runs the fast path (AVX-512F/BW, VPCLMULQDQ, PCLMULQDQ,
 * SSSE3 and the OS saving ZMM state); 0 otherwise, and then none of the
 * functions below may be called. */
int hw_ghash_available(void);

/* Precompute k from the hash key h = AES_K(0^128) (GCM's H). */
void hw_ghash_key_init(hw_ghash_key *k, const uint8_t h[16]);

void hw_ghash_init(hw_ghash *g, const hw_ghash_key *k);

/* Hash len more bytes of the stream: consecutive updates concatenate (a
 * block may span two of them). */
void hw_ghash_update(hw_ghash *g, const void *p, size_t len);

/* Zero-pad the stream to the next block boundary (GCM pads its
 * additional data and its IV that way). */
void hw_ghash_pad(hw_ghash *g);

/* Pad, then write the hash in GCM's byte order. */
void hw_ghash_final(hw_ghash *g, uint8_t out[16]);

#endif
