/* perf_record.c — CRC-32C and RecordBatch v2 throughput.
 *
 * Prints, each measured in this run:
 *   - CRC-32C GB/s of the SSE4.2 path against the slicing-by-8 path (ratio);
 *   - hw_batch_validate(FULL) MB/s on 1 KiB and 16 KiB batches against a bare
 *     CRC over the same bytes (ratio: how much record walking costs);
 *   - hw_batch_build MB/s for the same batches against memcpy of their bytes;
 *   - hw_batch_validate(FULL) of the 16 KiB batch compressed with each codec
 *     (the leader decompresses to validate, docs/compression.md), in MB/s of
 *     uncompressed batch bytes, against the uncompressed batch's validate
 *     measured in the same run (ratio: what decompression costs a produce).
 * Usage: perf_record [seconds-per-measurement, default 0.5]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_batch.h"
#include "hw_crc32c.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile uint32_t sink;

/* Run fn over `bytes` per call for about `secs`; return bytes/second. */
#define MEASURE(secs, bytes, stmt)                                      \
	({                                                              \
		double t0_ = now_s(), t_;                               \
		uint64_t n_ = 0;                                        \
		do {                                                    \
			for (int i_ = 0; i_ < 64; i_++) {               \
				stmt;                                   \
			}                                               \
			n_ += 64;                                       \
		} while ((t_ = now_s() - t0_) < (secs));                \
		(double)n_ * (double)(bytes) / t_;                      \
	})

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	if (secs <= 0)
		secs = 0.5;
	static uint8_t buf[1 << 16];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 131 + 7);

	printf("perf_record: CRC-32C, SSE4.2 available: %d, VPCLMULQDQ folding available: %d\n",
	       hw_crc32c_hw_available(), hw_crc32c_fold_available());
	size_t lens[] = { 64, 1024, 16384, 65536 };
	for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
		size_t len = lens[k];
		double sw = MEASURE(secs, len, sink += hw_crc32c_sw(0, buf, len));
		double hw = MEASURE(secs, len, sink += hw_crc32c_hw(0, buf, len));
		double fo = MEASURE(secs, len, sink += hw_crc32c_fold(0, buf, len));
		printf("  crc32c %6zu B: sw %7.2f GB/s  hw %7.2f GB/s  fold %7.2f GB/s  hw/sw %.2fx  fold/hw %.2fx\n",
		       len, sw / 1e9, hw / 1e9, fo / 1e9, hw / sw, fo / hw);
	}

	size_t batch_sizes[] = { 1024, 16384 };
	for (size_t k = 0; k < 2; k++) {
		/* records of ~100 bytes value, like a typical small-message producer */
		static hw_record_in recs[256];
		size_t nrec = batch_sizes[k] / 128;
		for (size_t i = 0; i < nrec; i++) {
			recs[i] = (hw_record_in){ 1700000000000LL + (int64_t)i, "key-0001", 8,
						  buf + i, 100, NULL, 0 };
		}
		hw_batch_spec s;
		hw_batch_spec_init(&s);
		static uint8_t batch[1 << 16], copy[1 << 16];
		ssize_t sz = hw_batch_build(batch, sizeof batch, &s, recs, nrec);
		if (sz < 0) {
			fprintf(stderr, "perf_record: build failed %zd\n", sz);
			return 1;
		}
		double crc = MEASURE(secs, (size_t)sz, sink += hw_batch_compute_crc(batch, (size_t)sz));
		double val = MEASURE(secs, (size_t)sz,
				     sink += (uint32_t)hw_batch_validate(batch, (size_t)sz, NULL,
									 HW_BATCH_V_FULL));
		double bld = MEASURE(secs, (size_t)sz,
				     sink += (uint32_t)hw_batch_build(copy, sizeof copy, &s, recs, nrec));
		double cpy = MEASURE(secs, (size_t)sz, (memcpy(copy, batch, (size_t)sz), sink += copy[7]));
		printf("  batch %5zd B (%3zu records): validate %7.0f MB/s vs crc-only %7.0f MB/s "
		       "(%.2fx); build %7.0f MB/s vs memcpy %7.0f MB/s (%.2fx)\n",
		       sz, nrec, val / 1e6, crc / 1e6, val / crc, bld / 1e6, cpy / 1e6, bld / cpy);
	}

	/* compressed 16 KiB batches: validate = decompress + record walk */
	static hw_record_in zr[128];
	for (size_t i = 0; i < 128; i++)
		zr[i] = (hw_record_in){ 1700000000000LL + (int64_t)i, "key-0001", 8, buf + i, 100, NULL, 0 };
	hw_batch_spec zs;
	hw_batch_spec_init(&zs);
	static uint8_t plain[1 << 16], zb[1 << 17], copy2[1 << 16];
	ssize_t psz = hw_batch_build(plain, sizeof plain, &zs, zr, 128);
	double base = MEASURE(secs, (size_t)psz,
			      sink += (uint32_t)hw_batch_validate(plain, (size_t)psz, NULL, HW_BATCH_V_FULL));
	printf("  compressed %zd B batch (128 records), validate FULL in MB/s of uncompressed bytes:\n", psz);
	for (int codec = HW_CODEC_GZIP; codec <= HW_CODEC_ZSTD; codec++) {
		ssize_t zsz = hw_batch_build_compressed(zb, sizeof zb, &zs, zr, 128, codec, NULL);
		if (zsz < 0 || hw_batch_validate(zb, (size_t)zsz, NULL, HW_BATCH_V_FULL) != 0) {
			fprintf(stderr, "perf_record: %s batch failed\n", hw_codec_name(codec));
			return 1;
		}
		double v = MEASURE(secs, (size_t)psz,
				   sink += (uint32_t)hw_batch_validate(zb, (size_t)zsz, NULL, HW_BATCH_V_FULL));
		/* the decompression alone, into a fixed buffer */
		double d = MEASURE(secs, (size_t)psz,
				   sink += (uint32_t)hw_decompress(NULL, codec, zb + HW_BATCH_HEADER_SIZE,
								   (size_t)zsz - HW_BATCH_HEADER_SIZE, copy2,
								   sizeof copy2));
		printf("    %-7s %6zd B: %7.0f MB/s vs uncompressed %7.0f MB/s (%.2fx slower); "
		       "decompress alone %7.0f MB/s\n",
		       hw_codec_name(codec), zsz, v / 1e6, base / 1e6, base / v, d / 1e6);
	}
	return 0;
}
