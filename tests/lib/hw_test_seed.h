/* hw_test_seed.h — seed and PRNG for the lib tests.
 *
 * The seed comes from HW_TEST_SEED (default: the time); each test prints it
 * with a one-line repro command so a failure is reproducible. The PRNG is
 * splitmix64: tiny, fast and good enough for test inputs.
 */
#ifndef HW_TEST_SEED_H
#define HW_TEST_SEED_H
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t hw_test_seed(const char *test_name)
{
	const char *e = getenv("HW_TEST_SEED");
	uint64_t seed = e && *e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
	printf("# %s: HW_TEST_SEED=%" PRIu64 " (repro: HW_TEST_SEED=%" PRIu64
	       " meson test -C build %s)\n",
	       test_name, seed, seed, test_name);
	fflush(stdout);
	return seed;
}

typedef struct hw_rng { uint64_t s; } hw_rng;

static inline uint64_t hw_rng_next(hw_rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the modulo bias is irrelevant for tests). */
static inline uint64_t hw_rng_below(hw_rng *r, uint64_t n)
{
	return hw_rng_next(r) % n;
}

/* Uniform double in [0, 1). */
static inline double hw_rng_unit(hw_rng *r)
{
	return (double)(hw_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
