/* perf_log_append — segmented-log append throughput against raw io_uring.
 *
 * For 1 KiB and 16 KiB RecordBatches, measured in the same run on the same
 * file system:
 *   log  hw_log_append of one batch per call (CRC-checked, copied into the
 *        tail buffer, indexed, epoch-tracked), hw_log_poll after every
 *        `round` bytes (one io_uring_submit), until every write completed;
 *        also without the append-time CRC check (verify_crc_on_append = 0:
 *        the leader's produce path has already validated every batch);
 *   raw  the same bytes written with io_uring to a fresh file: one write SQE
 *        per round from a prebuilt buffer, one submit per round, the same
 *        ring size, reaping as it goes, until every write completed.
 * Both use the page cache (Kafka's default flush policy); both files are new
 * and unlinked after each run. Runs alternate raw/log, and the median of
 * `reps` runs is reported. Prints MB/s and log/raw (target >= 0.8), by wall
 * clock and by process CPU time (MB per CPU-second, counting the io-wq
 * workers that copy into the page cache): the wall ratio on a shared,
 * loaded machine is skewed against whichever side needs more CPU, the CPU
 * ratio says how much work the log adds to the bare write.
 *
 * usage: perf_log_append [dir=/tmp] [MiB per run=256] [reps=5] [round KiB=128]
 * (a round equals the log's default tail-buffer chunk, so both sides issue
 * one write SQE per round)
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hw_batch.h"
#include "hw_log.h"

#define RING 256

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds the last run cost the process: its thread plus the io_uring
 * io-wq workers (iou-wrk-*, threads of this process) that do buffered
 * writes which cannot complete inline. */
static double g_cpu;

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

/* One batch of exactly `size` bytes (one record, value padded to fit). */
static size_t make_batch(uint8_t *buf, size_t size)
{
	static uint8_t val[1 << 20];
	memset(val, 'v', sizeof(val));
	hw_batch_spec sp;
	hw_batch_spec_init(&sp);
	for (int32_t vlen = (int32_t)size; vlen > 0; vlen--) {
		hw_record_in r = { .timestamp = 1, .value = val, .value_len = vlen };
		ssize_t n = hw_batch_build_size(&sp, &r, 1);
		if (n > 0 && (size_t)n <= size) {
			n = hw_batch_build(buf, size, &sp, &r, 1);
			return n > 0 ? (size_t)n : 0;
		}
	}
	return 0;
}

static double run_raw(const char *dir, const uint8_t *round_buf, size_t round, size_t total)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/raw-io_uring.dat", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	struct io_uring ring;
	if (io_uring_queue_init(RING, &ring, 0) < 0) {
		fprintf(stderr, "io_uring_queue_init failed\n");
		exit(1);
	}
	unsigned inflight = 0;
	struct io_uring_cqe *cqe;
	double c0 = cpu_s();
	double t0 = now_s();
	for (size_t off = 0; off < total; off += round) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		while (!sqe || inflight >= RING) {
			io_uring_submit_and_wait(&ring, 1);
			while (io_uring_peek_cqe(&ring, &cqe) == 0) {
				if (cqe->res != (int)round) {
					fprintf(stderr, "raw write: %d\n", cqe->res);
					exit(1);
				}
				io_uring_cqe_seen(&ring, cqe);
				inflight--;
			}
			if (!sqe)
				sqe = io_uring_get_sqe(&ring);
		}
		io_uring_prep_write(sqe, fd, round_buf, (unsigned)round, off);
		inflight++;
		io_uring_submit(&ring);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res != (int)round) {
				fprintf(stderr, "raw write: %d\n", cqe->res);
				exit(1);
			}
			io_uring_cqe_seen(&ring, cqe);
			inflight--;
		}
	}
	while (inflight) {
		if (io_uring_wait_cqe(&ring, &cqe) < 0)
			exit(1);
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	double t = now_s() - t0;
	g_cpu = cpu_s() - c0;
	io_uring_queue_exit(&ring);
	close(fd);
	unlink(path);
	return (double)total / t / 1e6;
}

static double run_log(const char *dir, uint8_t *batch, size_t bsize, size_t round, size_t total,
		      int crc, uint64_t *sqes, uint64_t *submits)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/log-perf", dir);
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	hw_log_config c;
	hw_log_config_default(&c);
	c.ring_entries = RING;
	c.verify_crc_on_append = crc;
	if (getenv("PERF_LOG_ASYNC_WRITES"))
		c.async_writes = 1;
	hw_log *log;
	int rc = hw_log_open(path, &c, &log);
	if (rc) {
		fprintf(stderr, "hw_log_open: %s\n", strerror(-rc));
		exit(1);
	}
	size_t per_round = round / bsize;
	int64_t off = 0;
	double c0 = cpu_s();
	double t0 = now_s();
	for (size_t done = 0; done < total; done += per_round * bsize) {
		for (size_t k = 0; k < per_round; k++) {
			hw_be64_put(batch, (uint64_t)off); /* baseOffset: not CRC-covered */
			if ((rc = hw_log_append(log, batch, bsize)) != 0) {
				fprintf(stderr, "append: %s\n", strerror(-rc));
				exit(1);
			}
			off++;
		}
		if (hw_log_poll(log) < 0) {
			fprintf(stderr, "poll failed\n");
			exit(1);
		}
	}
	while ((rc = hw_log_wait(log)) > 0)
		;
	double t = now_s() - t0;
	g_cpu = cpu_s() - c0;
	if (rc < 0) {
		fprintf(stderr, "wait failed\n");
		exit(1);
	}
	*sqes = hw_log_counter_get(log, HW_LOG_CTR_WRITE_SQES);
	*submits = hw_log_counter_get(log, HW_LOG_CTR_SUBMITS);
	hw_log_close(log);
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return (double)total / t / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
	int reps = argc > 3 ? atoi(argv[3]) : 5;
	size_t round = (argc > 4 ? (size_t)atol(argv[4]) : 128) * 1024;
	if (reps < 1 || reps > 50 || mib < 1 || round < 16384) {
		fprintf(stderr, "usage: %s [dir] [MiB per run] [reps] [round KiB >= 16]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	char wdir[4096];
	snprintf(wdir, sizeof(wdir), "%s/perf_log_append-XXXXXX", dir);
	if (!mkdtemp(wdir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("perf_log_append: %zu MiB per run, %d runs each (median), %zu KiB per submit, ring %d, dir %s\n",
	       mib, reps, round / 1024, RING, wdir);
	static const size_t sizes[] = { 1024, 16384 };
	for (size_t si = 0; si < 2; si++) {
		size_t bsize = sizes[si];
		uint8_t *batch = malloc(bsize);
		uint8_t *round_buf = malloc(round);
		if (!batch || !round_buf || make_batch(batch, bsize) != bsize) {
			fprintf(stderr, "cannot build a %zu-byte batch\n", bsize);
			return 1;
		}
		size_t per_round = round / bsize;
		size_t rbytes = per_round * bsize;
		for (size_t k = 0; k < per_round; k++)
			memcpy(round_buf + k * bsize, batch, bsize);
		size_t total = (mib << 20) / rbytes * rbytes;
		double raw[50], lg[50], lnc[50], craw[50], clg[50], clnc[50];
		uint64_t sqes = 0, subs = 0;
		double mb = (double)total / 1e6;
		for (int r = 0; r < reps; r++) {
			raw[r] = run_raw(wdir, round_buf, rbytes, total);
			craw[r] = mb / g_cpu;
			lg[r] = run_log(wdir, batch, bsize, rbytes, total, 1, &sqes, &subs);
			clg[r] = mb / g_cpu;
			lnc[r] = run_log(wdir, batch, bsize, rbytes, total, 0, &sqes, &subs);
			clnc[r] = mb / g_cpu;
		}
		double *all[] = { raw, lg, lnc, craw, clg, clnc };
		for (int k = 0; k < 6; k++)
			qsort(all[k], (size_t)reps, sizeof(double), cmp_d);
		double rm = raw[reps / 2], lm = lg[reps / 2], nm = lnc[reps / 2];
		double rc = craw[reps / 2], lc = clg[reps / 2], nc = clnc[reps / 2];
		printf("%5zu B batches, wall: raw io_uring %7.1f MB/s | log %7.1f MB/s, ratio %.2f | "
		       "log without append CRC %7.1f MB/s, ratio %.2f  (target >= 0.8)\n"
		       "%5zu B batches, CPU:  raw io_uring %7.1f MB/cpu-s | log %7.1f MB/cpu-s, ratio %.2f | "
		       "log without append CRC %7.1f MB/cpu-s, ratio %.2f\n"
		       "                [log: %llu appends -> %llu write SQEs, %llu submits per run]\n",
		       bsize, rm, lm, lm / rm, nm, nm / rm, bsize, rc, lc, lc / rc, nc, nc / rc,
		       (unsigned long long)(total / bsize), (unsigned long long)sqes,
		       (unsigned long long)subs);
		free(batch);
		free(round_buf);
	}
	rmdir(wdir);
	return 0;
}
