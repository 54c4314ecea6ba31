/* perf_limits — the machine's own limits under perf/throughput, measured in
 * the same run as the cluster rows (perf/README.md "How to read them"):
 *
 *   memcpy        64 MiB -> 64 MiB, hot (both buffers already touched):
 *                 the bandwidth of a copy that allocates nothing
 *   first-touch   memset of freshly mmap'd anonymous memory: the price of
 *                 a page the kernel has to find, zero and (in a VM whose
 *                 free pages are reported to the host) the host has to
 *                 back again — what every new page-cache page pays
 *   fs-buffered   sequential 64 KiB pwrite(2) appends to new files (the
 *                 page cache; Kafka's way), 1 writer, then N
 *   fs-overwrite  the same, rewriting the first 64 MiB of each file again
 *                 and again: page-cache copies without new pages
 *   fs-direct     64 KiB O_DIRECT pwrite(2) appends into fallocate'd files
 *                 (hiwater.log.direct.io + log.preallocate), 1, then N
 *   fs-buffered-win  fs-buffered with the log's writeback window (16 MiB):
 *                 sync_file_range WRITE of each window filled, the one three
 *                 behind waited for and dropped (POSIX_FADV_DONTNEED)
 *   fs-buffered-win-56000  the same with 56000-byte appends at arbitrary
 *                 offsets, the size perf/throughput's batches are written in
 *                 (a leader's produce batch, a follower's fetch response):
 *                 ext4 gives an append page-cache folios only as large as
 *                 its alignment allows, so this is the kernel's price for the
 *                 cluster's own write pattern (perf/README.md "Where each
 *                 throughput goal stands")
 *   --cold-gib N  (opt-in) first touch of N GiB, 1 GiB at a time: on a VM
 *                 whose free memory is reported to the host, the GiBs past
 *                 what was recently freed cost a host fault per page
 *
 *   perf_limits DIR [--mib N (per writer, 256)] [--writers N (3)] [--json]
 *               [--cold-gib N]
 *
 * Per line: MB/s (wall) and CPU seconds per GB: this process's user+system
 * time, and the whole machine's busy time (/proc/stat) per GB, which adds
 * what the kernel does for it elsewhere (writeback, completion workers) —
 * and on a shared machine everyone else's load. Files are removed after
 * each line. Errors: exits 1 with a message naming the failed call.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define WSZ (64u << 10)
#define OVERWRITE_SPAN (64ull << 20)

enum mode { M_BUFFERED, M_OVERWRITE, M_DIRECT, M_WINDOW, M_WINDOW_56K };
static const char *mode_name[] = { "fs-buffered", "fs-overwrite", "fs-direct", "fs-buffered-win",
				   "fs-buffered-win-56000" };
#define WSZ_56K 56000u
#define WINDOW (16ull << 20) /* hiwater.log.writeback.window.bytes' default */

typedef struct {
	const char *dir;
	enum mode mode;
	int idx;
	uint64_t bytes;
	int err;
	pthread_barrier_t *go; /* n writers + main: around the timed loop */
} writer;

typedef struct {
	double wall, cpu, machine;
} sample;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* Busy seconds of the whole machine (user nice system irq softirq steal). */
static double cpu_machine(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = { 0 };
	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7]) != 8)
		v[0] = v[1] = v[2] = v[5] = v[6] = v[7] = 0;
	fclose(f);
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

static sample mark(void)
{
	return (sample){ now(), cpu_self(), cpu_machine() };
}

static int json;
static int first_json = 1;

static void report(const char *what, int n, uint64_t bytes, sample a, sample b)
{
	double gb = (double)bytes / 1e9, w = b.wall - a.wall;
	double mbps = w > 0 ? (double)bytes / w / 1e6 : 0;
	double cpu = (b.cpu - a.cpu) / gb, mach = (b.machine - a.machine) / gb;
	if (json) {
		printf("%s    {\"what\": \"%s\", \"writers\": %d, \"mbps\": %.1f, \"cpu_s_per_gb\": %.3f, "
		       "\"machine_s_per_gb\": %.3f}",
		       first_json ? "" : ",\n", what, n, mbps, cpu, mach);
		first_json = 0;
	} else {
		printf("%-21s %7d %10.1f %10.3f %10.3f\n", what, n, mbps, cpu, mach);
	}
	fflush(stdout);
}

static void die(const char *what)
{
	fprintf(stderr, "perf_limits: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void run_memcpy(uint64_t total)
{
	size_t n = 64u << 20;
	uint8_t *s = malloc(n), *d = malloc(n);
	if (!s || !d)
		die("malloc");
	memset(s, 1, n);
	memset(d, 2, n);
	sample a = mark();
	uint64_t done = 0;
	for (; done < total; done += n) {
		memcpy(d, s, n);
		__asm__ volatile("" : : "r"(d) : "memory"); /* keep the copy */
	}
	report("memcpy", 1, done, a, mark());
	free(s);
	free(d);
}

static void run_first_touch(uint64_t total)
{
	uint8_t *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	sample a = mark();
	memset(p, 3, total);
	report("first-touch", 1, total, a, mark());
	munmap(p, total);
}

static int write_span(int fd, const void *buf, uint64_t from, uint64_t bytes, uint64_t wrap)
{
	for (uint64_t off = 0; off < bytes; off += WSZ)
		if (pwrite(fd, buf, WSZ, (off_t)(from + (wrap ? off % wrap : off))) != (ssize_t)WSZ)
			return errno ? errno : EIO;
	return 0;
}

/* fs-buffered-win: what engine/log/hw_log_io.c "Writeback window" does,
 * synchronously here (the log queues the same calls on io_uring), with
 * appends of wsz bytes: each window filled is started, the one three behind
 * it waited for and dropped. */
static int write_windowed(int fd, const void *buf, uint64_t bytes, uint32_t wsz)
{
	const unsigned wait = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	uint64_t kicked = 0;
	for (uint64_t off = 0; off < bytes; off += wsz) {
		size_t n = bytes - off < wsz ? (size_t)(bytes - off) : wsz;
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			return errno ? errno : EIO;
		for (; off + n - kicked >= WINDOW; kicked += WINDOW) {
			if (sync_file_range(fd, (off_t)kicked, WINDOW, SYNC_FILE_RANGE_WRITE) != 0)
				return errno;
			if (kicked >= 3 * WINDOW) {
				off_t old = (off_t)(kicked - 3 * WINDOW);
				if (sync_file_range(fd, old, WINDOW, wait) != 0 ||
				    posix_fadvise(fd, old, WINDOW, POSIX_FADV_DONTNEED) != 0)
					return errno ? errno : EIO;
			}
		}
	}
	return 0;
}

/* --cold-gib: the per-GiB price of first touch, in order. */
static void run_cold(int gib)
{
	size_t g = 1ull << 30;
	uint8_t *p = mmap(NULL, (size_t)gib * g, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, (size_t)gib * g, MADV_NOHUGEPAGE);
	fprintf(stderr, "first touch, CPU s per GiB, in order:");
	for (int i = 0; i < gib; i++) {
		double c0 = cpu_self();
		memset(p + (size_t)i * g, 1, g);
		fprintf(stderr, " %.2f", cpu_self() - c0);
	}
	fprintf(stderr, "\n");
	munmap(p, (size_t)gib * g);
}

/* One writer: set up (open, fallocate or prefill), wait for the start,
 * write, wait for the others; close and unlink outside the timed part. */
static void *writer_main(void *arg)
{
	writer *w = arg;
	char path[4096];
	snprintf(path, sizeof path, "%s/.perf-limits-%d-%d", w->dir, (int)getpid(), w->idx);
	int fl = O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | (w->mode == M_DIRECT ? O_DIRECT : 0);
	int fd = open(path, fl, 0600);
	void *buf = NULL;
	if (fd < 0)
		w->err = errno;
	else if (posix_memalign(&buf, 4096, WSZ))
		w->err = ENOMEM;
	else
		memset(buf, 0x5a, WSZ);
	if (!w->err && w->mode == M_DIRECT && fallocate(fd, 0, 0, (off_t)w->bytes) != 0)
		w->err = errno;
	if (!w->err && w->mode == M_OVERWRITE)
		w->err = write_span(fd, buf, 0, OVERWRITE_SPAN, 0);
	pthread_barrier_wait(w->go);
	if (!w->err)
		w->err = w->mode == M_WINDOW	   ? write_windowed(fd, buf, w->bytes, WSZ)
			 : w->mode == M_WINDOW_56K ? write_windowed(fd, buf, w->bytes, WSZ_56K)
						   : write_span(fd, buf, 0, w->bytes, w->mode == M_OVERWRITE ? OVERWRITE_SPAN : 0);
	pthread_barrier_wait(w->go);
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(buf);
	return NULL;
}

static void run_fs(const char *dir, enum mode m, int n, uint64_t per)
{
	writer w[16];
	pthread_t t[16];
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		w[i] = (writer){ dir, m, i, per, 0, &go };
		if (pthread_create(&t[i], NULL, writer_main, &w[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&go);
	sample a = mark();
	pthread_barrier_wait(&go);
	sample b = mark();
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < n; i++)
		if (w[i].err) {
			errno = w[i].err;
			die(mode_name[m]);
		}
	report(mode_name[m], n, per * (uint64_t)n, a, b);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: perf_limits DIR [--mib N] [--writers N] [--json]\n");
		return 2;
	}
	const char *dir = argv[1];
	uint64_t mib = 256;
	int writers = 3, cold = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--writers") && i + 1 < argc)
			writers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cold-gib") && i + 1 < argc)
			cold = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else {
			fprintf(stderr, "perf_limits: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (writers < 1 || writers > 16 || mib < 64) {
		fprintf(stderr, "perf_limits: --writers 1..16, --mib >= 64\n");
		return 2;
	}
	uint64_t per = mib << 20;
	if (json)
		printf("{\"limits\": [\n");
	else
		printf("%-21s %7s %10s %10s %10s\n", "limit", "writers", "MB/s", "CPU s/GB", "mach s/GB");
	run_memcpy(4 * per);
	run_first_touch(per);
	static const enum mode modes[] = { M_DIRECT, M_BUFFERED, M_WINDOW, M_WINDOW_56K, M_OVERWRITE };
	for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
		run_fs(dir, modes[k], 1, per);
		if (writers > 1)
			run_fs(dir, modes[k], writers, per);
	}
	if (json)
		printf("\n]}\n");
	if (cold > 0)
		run_cold(cold);
	return 0;
}
