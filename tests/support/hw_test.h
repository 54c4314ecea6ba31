/* hw_test.h — what every C test shares: its seed, one PRNG, the repro line
 * and temp dirs.
 *
 * The seed comes from `--seed=N` on the command line if given, else from
 * HW_TEST_SEED (decimal or 0x hex), else the time; hw_test_seed() prints it
 * with a one-line reproduction command, so any failure can be run again
 * exactly. The PRNG is splitmix64 (tiny, fast, the same sequence on every
 * libc): hw_rng for tests that keep their own streams, hw_test_rand() for
 * tests that want one stream seeded by hw_test_seed_init().
 * Header-only, for tests; not part of any library.
 */
#ifndef HW_TEST_H
#define HW_TEST_H
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- seed --------------------------------------------------------------- */

/* The seed without printing: --seed=N in argv (argc/argv may be 0/NULL),
 * else HW_TEST_SEED, else the time. */
static inline uint64_t hw_test_seed_value(int argc, char **argv)
{
	for (int i = 1; argv && i < argc; i++)
		if (strncmp(argv[i], "--seed=", 7) == 0)
			return strtoull(argv[i] + 7, NULL, 0);
	const char *e = getenv("HW_TEST_SEED");
	return e && *e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
}

/* Print the reproduction line of a run with `seed` of meson test `test`;
 * extra_env (may be NULL or "") is put before it, e.g. "HW_PROP_SEEDS=1". */
static inline void hw_test_repro(const char *test, uint64_t seed, const char *extra_env)
{
	int extra = extra_env && *extra_env;
	printf("# %s: HW_TEST_SEED=%" PRIu64 " (repro: HW_TEST_SEED=%" PRIu64 "%s%s meson test -C build %s)\n",
	       test, seed, seed, extra ? " " : "", extra ? extra_env : "", test);
	fflush(stdout);
}

/* The seed of meson test `test` (see hw_test_seed_value), printed with its
 * reproduction line. */
static inline uint64_t hw_test_seed_argv(const char *test, int argc, char **argv)
{
	uint64_t seed = hw_test_seed_value(argc, argv);
	hw_test_repro(test, seed, NULL);
	return seed;
}

static inline uint64_t hw_test_seed(const char *test) { return hw_test_seed_argv(test, 0, NULL); }

/* ---- one generator -------------------------------------------------------- */

typedef struct hw_rng { uint64_t s; } hw_rng;

/* splitmix64 */
static inline uint64_t hw_rng_next(hw_rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the modulo bias is irrelevant for tests). */
static inline uint64_t hw_rng_below(hw_rng *r, uint64_t n) { return hw_rng_next(r) % n; }

/* Uniform double in [0, 1). */
static inline double hw_rng_unit(hw_rng *r)
{
	return (double)(hw_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* The test's one stream (per translation unit). */
static hw_rng hw_test_rng __attribute__((unused));

/* hw_test_seed(test), and the stream seeded with it. */
static inline uint64_t hw_test_seed_init(const char *test)
{
	uint64_t seed = hw_test_seed(test);
	hw_test_rng.s = seed;
	return seed;
}

static inline uint64_t hw_test_rand(void) { return hw_rng_next(&hw_test_rng); }
static inline uint64_t hw_test_below(uint64_t n) { return hw_rng_below(&hw_test_rng, n); }

/* ---- temp dirs ------------------------------------------------------------ */

/* A new empty directory $TMPDIR/hw-<tag>-XXXXXX (default /tmp) in out.
 * 0, or -errno (out too small: -ENAMETOOLONG). */
static inline int hw_test_tmpdir(char *out, size_t cap, const char *tag)
{
	const char *t = getenv("TMPDIR");
	int n = snprintf(out, cap, "%s/hw-%s-XXXXXX", t && *t ? t : "/tmp", tag);
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	return mkdtemp(out) ? 0 : -errno;
}

static inline int hw_test_rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

/* Remove a directory tree (a temp dir from hw_test_tmpdir). 0 or -1. */
static inline int hw_test_rmtree(const char *dir)
{
	return nftw(dir, hw_test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
