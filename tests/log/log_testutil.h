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

static inline uint32_t tu_crc32c(const uint8_t *p, size_t n)
{
	static uint32_t tab[256];
	if (!tab[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
			tab[i] = c;
		}
	uint32_t c = 0xFFFFFFFFu;
	while (n--)
		c = tab[(c ^ *p++) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

static inline void tu_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void tu_put64(uint8_t *p, uint64_t v) { tu_put32(p, (uint32_t)(v >> 32)); tu_put32(p + 4, (uint32_t)v); }
static inline uint32_t tu_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t tu_get64(const uint8_t *p) { return (uint64_t)tu_get32(p) << 32 | tu_get32(p + 4); }

static inline size_t tu_varint(uint8_t *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;
	while (z >= 0x80) {
		p[n++] = (uint8_t)(z | 0x80);
		z >>= 7;
	}
	p[n++] = (uint8_t)z;
	return n;
}

/* Build a batch of `count` records with `value_len`-byte values into buf
 * (capacity cap). Value bytes derive from (base, i) so content is checkable.
 * Returns the batch size, 0 if it does not fit. */
static inline size_t tu_batch(uint8_t *buf, size_t cap, int64_t base, int32_t epoch, int count,
		       size_t value_len, int64_t ts)
{
	if (cap < 61)
		return 0;
	size_t n = 61;
	for (int i = 0; i < count; i++) {
		uint8_t body[64];
		size_t b = 0;
		body[b++] = 0;                        /* attributes */
		b += tu_varint(body + b, 0);          /* timestampDelta */
		b += tu_varint(body + b, i);          /* offsetDelta */
		b += tu_varint(body + b, -1);         /* key: null */
		b += tu_varint(body + b, (int64_t)value_len);
		size_t tail = 1;                      /* headerCount varint 0 */
		size_t rec_len = b + value_len + tail;
		uint8_t lenb[10];
		size_t lb = tu_varint(lenb, (int64_t)rec_len);
		if (n + lb + rec_len > cap)
			return 0;
		memcpy(buf + n, lenb, lb);
		n += lb;
		memcpy(buf + n, body, b);
		n += b;
		for (size_t k = 0; k < value_len; k++)
			buf[n + k] = (uint8_t)(base * 131 + i * 7 + (int64_t)k);
		n += value_len;
		n += tu_varint(buf + n, 0);
	}
	tu_put64(buf, (uint64_t)base);
	tu_put32(buf + 8, (uint32_t)(n - 12));
	tu_put32(buf + 12, (uint32_t)epoch);
	buf[16] = 2;
	buf[21] = 0; buf[22] = 0;                          /* attributes */
	tu_put32(buf + 23, (uint32_t)(count - 1));         /* lastOffsetDelta */
	tu_put64(buf + 27, (uint64_t)ts);                  /* baseTimestamp */
	tu_put64(buf + 35, (uint64_t)ts);                  /* maxTimestamp */
	tu_put64(buf + 43, (uint64_t)-1);                  /* producerId */
	buf[51] = 0xff; buf[52] = 0xff;                    /* producerEpoch */
	tu_put32(buf + 53, (uint32_t)-1);                  /* baseSequence */
	tu_put32(buf + 57, (uint32_t)count);
	tu_put32(buf + 17, tu_crc32c(buf + 21, n - 21));
	return n;
}

/* Size tu_batch would produce. */
static inline size_t tu_batch_size(int count, size_t value_len)
{
	uint8_t tmp[16];
	size_t n = 61;
	for (int i = 0; i < count; i++) {
		size_t b = 1 + 1 + tu_varint(tmp, i) + 1 + tu_varint(tmp, (int64_t)value_len);
		size_t rec = b + value_len + 1;
		n += tu_varint(tmp, (int64_t)rec) + rec;
	}
	return n;
}

static inline unsigned tu_seed(const char *test_name)
{
	const char *e = getenv("HW_TEST_SEED");
	unsigned s = e ? (unsigned)strtoul(e, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)getpid();
	printf("# seed %u — repro: HW_TEST_SEED=%u meson test -C build %s\n", s, s, test_name);
	fflush(stdout);
	return s;
}

static inline void tu_tmpdir(char *out, size_t cap, const char *tag)
{
	snprintf(out, cap, "/tmp/hwlogtest-%s-XXXXXX", tag);
	if (!mkdtemp(out)) {
		perror("mkdtemp");
		abort();
	}
}

static inline int tu_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static inline void tu_rmrf(const char *dir) { nftw(dir, tu_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

#endif
