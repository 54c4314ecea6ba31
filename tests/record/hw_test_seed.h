/* hw_test_seed.h — seed handling shared by the record tests.
 * Seed from env HW_TEST_SEED (default: time), printed with a repro line.
 * xorshift64* keeps the sequence identical across libcs. */
#ifndef HW_TEST_SEED_H
#define HW_TEST_SEED_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t hw_test_rng_state;

static inline uint64_t hw_test_seed_init(const char *test_name)
{
	const char *env = getenv("HW_TEST_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	printf("# %s: HW_TEST_SEED=%llu (reproduce: HW_TEST_SEED=%llu meson test -C build %s)\n",
	       test_name, (unsigned long long)seed, (unsigned long long)seed, test_name);
	fflush(stdout);
	hw_test_rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
	return seed;
}

static inline uint64_t hw_test_rand(void)
{
	uint64_t x = hw_test_rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	hw_test_rng_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform-ish in [0, n) for n > 0. */
static inline uint64_t hw_test_below(uint64_t n) { return hw_test_rand() % n; }

#endif
