/* dpdk_test_common.h — deterministic record batches both sides of the DPDK
 * tests can generate and check without agreeing on sizes: batch i's base
 * offset is i and its body byte k is a hash of (seed, i, k). */
#ifndef DPDK_TEST_COMMON_H
#define DPDK_TEST_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hw_wire.h"
#include "../../../support/hw_test.h"

/* The next value of stream *s (hw_test.h's generator). */
static inline uint64_t dt_next(uint64_t *s)
{
	hw_rng r = { *s };
	uint64_t v = hw_rng_next(&r);
	*s = r.s;
	return v;
}

static inline uint8_t dt_byte(uint64_t seed, uint64_t i, uint64_t k)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (i << 32) ^ k;
	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 29;
	return (uint8_t)x;
}

/* Fill buf with whole RecordBatch v2 frames (random sizes 61..min(cap,
 * 9000)) up to cap bytes; returns bytes used. */
static inline size_t dt_make_batches(uint8_t *buf, size_t cap, uint64_t seed)
{
	uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
	size_t span = cap < 9000 ? cap : 9000;
	size_t off = 0;
	if (span <= HW_WIRE_BATCH_HDR)
		return 0;
	for (uint64_t i = 0;; i++) {
		size_t sz = HW_WIRE_BATCH_HDR + (size_t)(dt_next(&s) % (span - HW_WIRE_BATCH_HDR + 1));
		if (off + sz > cap)
			break;
		uint8_t *p = buf + off;
		memset(p, 0, HW_WIRE_BATCH_HDR);
		for (int k = 0; k < 8; k++)
			p[k] = (uint8_t)(i >> (56 - 8 * k));
		uint32_t bl = (uint32_t)(sz - 12);
		p[8] = (uint8_t)(bl >> 24);
		p[9] = (uint8_t)(bl >> 16);
		p[10] = (uint8_t)(bl >> 8);
		p[11] = (uint8_t)bl;
		p[16] = 2;
		for (size_t k = HW_WIRE_BATCH_HDR; k < sz; k++)
			p[k] = dt_byte(seed, i, k);
		off += sz;
	}
	return off;
}

/* 0 if buf is a sequence of batches as dt_make_batches(.., seed) makes them
 * (any sizes), -1 otherwise. */
static inline int dt_check_batches(const uint8_t *buf, size_t len, uint64_t seed)
{
	size_t off = 0;
	if (hw_wire_check_batches(buf, len, NULL))
		return -1;
	for (uint64_t i = 0; off < len; i++) {
		const uint8_t *p = buf + off;
		uint64_t base = 0;
		for (int k = 0; k < 8; k++)
			base = (base << 8) | p[k];
		size_t sz = 12 + (((size_t)p[8] << 24) | ((size_t)p[9] << 16) | ((size_t)p[10] << 8) | p[11]);
		if (base != i)
			return -1;
		for (size_t k = HW_WIRE_BATCH_HDR; k < sz; k++)
			if (p[k] != dt_byte(seed, i, k))
				return -1;
		off += sz;
	}
	return 0;
}

#endif
