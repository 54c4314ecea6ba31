/* gen_fuzz_batch_z_corpus.c — writes fuzz_batch_z's seed corpus into DIR: for each
 * codec, a valid compressed records section (mode 0) and the same section
 * uncompressed (mode 1), for batches of 1, 3 and 40 records; the inputs
 * are laid out as fuzz_batch_z.c reads them. With a second directory, also
 * whole compressed batches (3 records, each codec) for tests/engine/record's
 * fuzz_batch. Built with -Dfuzz=true:
 *   build-asan/tests/engine/record/gen_fuzz_batch_z_corpus tests/engine/record/fuzz_batch_z_corpus tests/engine/record/fuzz_batch_corpus */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_batch.h"
#include "hw_compress.h"

static void put(const char *dir, const char *name, uint8_t b0, int32_t count,
		const uint8_t *sec, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	uint8_t hdr[3] = { b0, (uint8_t)((count - 1) >> 8), (uint8_t)(count - 1) };
	if (fwrite(hdr, 1, 3, f) != 3 || fwrite(sec, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s DIR [BATCH_DIR]\n", argv[0]);
		return 2;
	}
	static const int counts[] = { 1, 3, 40 };
	static uint8_t plain[1 << 16], z[1 << 17];
	hw_record_header hh = { (const uint8_t *)"h", 1, (const uint8_t *)"v", 1 };
	hw_record_in recs[40];
	for (int i = 0; i < 40; i++) {
		static char vals[40][32];
		snprintf(vals[i], sizeof vals[i], "value-%d-%s", i, i % 3 ? "abcabc" : "x");
		recs[i] = (hw_record_in){ 1700000000000LL + i, i % 2 ? "key" : NULL, 3,
					  vals[i], (int32_t)strlen(vals[i]), &hh, i % 4 == 0 };
	}
	hw_batch_spec s;
	hw_batch_spec_init(&s);
	for (size_t ci = 0; ci < 3; ci++) {
		int count = counts[ci];
		ssize_t psize = hw_batch_build(plain, sizeof plain, &s, recs, (size_t)count);
		if (psize < 0)
			return 1;
		const uint8_t *sec = plain + HW_BATCH_HEADER_SIZE;
		size_t n = (size_t)psize - HW_BATCH_HEADER_SIZE;
		for (int codec = 1; codec <= 4; codec++) {
			for (int xerial = 0; xerial <= (codec == HW_CODEC_SNAPPY); xerial++) {
				hw_zopts o = { 0, xerial };
				ssize_t k = hw_compress(codec, &o, sec, n, z, sizeof z);
				if (k < 0)
					return 1;
				char name[64];
				snprintf(name, sizeof name, "%s%s_%d_stream", hw_codec_name(codec),
					 xerial ? "_xerial" : "", count);
				put(argv[1], name, (uint8_t)(codec - 1), count, z, (size_t)k);
				snprintf(name, sizeof name, "%s%s_%d_plain", hw_codec_name(codec),
					 xerial ? "_xerial" : "", count);
				put(argv[1], name, (uint8_t)((codec - 1) | 4 | xerial << 3), count, sec, n);
			}
		}
	}
	for (int codec = 1; argc == 3 && codec <= 4; codec++) {
		ssize_t k = hw_batch_build_compressed(z, sizeof z, &s, recs, 3, codec, NULL);
		char path[512];
		snprintf(path, sizeof path, "%s/compressed_%s", argv[2], hw_codec_name(codec));
		FILE *f = fopen(path, "wb");
		if (k < 0 || !f || fwrite(z, 1, (size_t)k, f) != (size_t)k || fclose(f) != 0) {
			perror(path);
			return 1;
		}
	}
	return 0;
}
