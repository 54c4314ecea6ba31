/* log_testutil.h — helpers for the log tests: RecordBatch v2 builder (real
 * records, real CRC32C), temp directories, the HW_TEST_SEED convention. */
#ifndef LOG_TESTUTIL_H
#define LOG_TESTUTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ftw.h>

#include "hw_batch.h"
#include "hw_crc32c.h"
#include "hw_log.h"
#include "../../support/hw_test.h"

/* Fill a record spec array for tu_batch: `count` records, `value_len`-byte
 * values whose bytes derive from (base, i) so content is checkable. */
static inline hw_record_in *tu_recs(int64_t base, int count, size_t value_len, int64_t ts,
				    uint8_t **vals_out)
{
	hw_record_in *r = calloc((size_t)count, sizeof(*r));
	uint8_t *v = malloc((size_t)count * value_len + 1);
	if (!r || !v)
		abort();
	for (int i = 0; i < count; i++) {
		uint8_t *vi = v + (size_t)i * value_len;
		for (size_t k = 0; k < value_len; k++)
			vi[k] = (uint8_t)(base * 131 + i * 7 + (int64_t)k);
		r[i].timestamp = ts;
		r[i].key = NULL;
		r[i].value = vi;
		r[i].value_len = (int32_t)value_len;
	}
	*vals_out = v;
	return r;
}

/* Build a batch (engine/record's builder) into buf. Returns its size, 0 if
 * it does not fit. */
static inline size_t tu_batch(uint8_t *buf, size_t cap, int64_t base, int32_t epoch, int count,
			      size_t value_len, int64_t ts)
{
	uint8_t *vals;
	hw_record_in *r = tu_recs(base, count, value_len, ts, &vals);
	hw_batch_spec sp;
	hw_batch_spec_init(&sp);
	sp.base_offset = base;
	sp.partition_leader_epoch = epoch;
	ssize_t n = hw_batch_build(buf, cap, &sp, r, (size_t)count);
	free(r);
	free(vals);
	return n > 0 ? (size_t)n : 0;
}

/* Size tu_batch would produce. */
static inline size_t tu_batch_size(int count, size_t value_len)
{
	uint8_t *vals;
	hw_record_in *r = tu_recs(0, count, value_len, 0, &vals);
	hw_batch_spec sp;
	hw_batch_spec_init(&sp);
	ssize_t n = hw_batch_build_size(&sp, r, (size_t)count);
	free(r);
	free(vals);
	return n > 0 ? (size_t)n : 0;
}

static inline unsigned tu_seed(const char *test_name) { return (unsigned)hw_test_seed(test_name); }

static inline void tu_tmpdir(char *out, size_t cap, const char *tag)
{
	int rc = hw_test_tmpdir(out, cap, tag);
	if (rc < 0) {
		fprintf(stderr, "temp dir for %s: %s\n", tag, strerror(-rc));
		abort();
	}
}

static inline void tu_rmrf(const char *dir) { hw_test_rmtree(dir); }

/* The write mode a log test's argv[1] names: "direct" (HW_LOG_DIRECT_ON),
 * "auto" (HW_LOG_DIRECT_AUTO), anything else or nothing buffered. */
static inline int tu_direct_mode(int argc, char **argv)
{
	if (argc < 2)
		return HW_LOG_DIRECT_OFF;
	if (strcmp(argv[1], "direct") == 0)
		return HW_LOG_DIRECT_ON;
	return strcmp(argv[1], "auto") == 0 ? HW_LOG_DIRECT_AUTO : HW_LOG_DIRECT_OFF;
}

#endif
