/* hw_log_fs.c — what the file system under a log directory can do, probed
 * once per device (hw_log_int.h): whether buffered writes would block (so
 * io_uring punts them to a worker) and whether O_DIRECT is worth using.
 * Split out of hw_log_io.c, which uses the answers. */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>
#include "hw_log_int.h"

/* 1 if buffered writes in `dir`'s file system may block (RWF_NOWAIT is
 * refused or would block), so io_uring would punt them to a worker; 0 if
 * the file system completed a non-blocking buffered write. A probe file
 * that cannot be created counts as "may block" (the common case). */
static int fs_punts_buffered_writes(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/.hw-nowait-probe", dir) >= (int)sizeof path)
		return 1;
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return 1;
	char b = 0;
	struct iovec v = { .iov_base = &b, .iov_len = 1 };
	ssize_t n = pwritev2(fd, &v, 1, 0, RWF_NOWAIT);
	close(fd);
	unlink(path);
	return n != 1;
}

/* Whether `dir`'s file system is worth direct writes: HW_LOG_DIO_YES if a file
 * there can be opened with O_DIRECT; HW_LOG_DIO_REFUSED if not (tmpfs before
 * 6.6, some FUSE file systems: EINVAL); HW_LOG_DIO_MEMORY on tmpfs and ramfs,
 * which accept O_DIRECT since 6.6 but only copy into the page cache they
 * live in (no device to bypass the cache for), so there buffered writes
 * cost less and preallocation would take memory. */
static int fs_takes_direct_io(const char *dir)
{
	struct statfs sf;
	if (statfs(dir, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC))
		return HW_LOG_DIO_MEMORY;
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/.hw-direct-probe", dir) >= (int)sizeof path)
		return HW_LOG_DIO_REFUSED;
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	unlink(path);
	return fd >= 0 ? HW_LOG_DIO_YES : HW_LOG_DIO_REFUSED;
}

/* The probes' answers per file system (st_dev). A broker opens every
 * partition's log in the same few directories, and each probe creates,
 * writes and unlinks a file: with thousands of partitions that was most of
 * the start-up. Logs may be opened on several reactor threads at once. */
enum { PROBE_PUNTS, PROBE_DIRECT, PROBE__COUNT };
#define PROBE_CACHE_DEVS 16
static struct {
	dev_t dev;
	signed char v[PROBE__COUNT]; /* -1: not probed yet */
} probe_cache[PROBE_CACHE_DEVS];
static int probe_cache_n;
static uint64_t probes_run;
static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;

static int fs_probe(const char *dir, int which, int (*probe)(const char *))
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return probe(dir);
	int r = -1;
	pthread_mutex_lock(&probe_mu);
	for (int i = 0; i < probe_cache_n; i++)
		if (probe_cache[i].dev == st.st_dev)
			r = probe_cache[i].v[which];
	pthread_mutex_unlock(&probe_mu);
	if (r >= 0)
		return r;
	r = probe(dir);
	pthread_mutex_lock(&probe_mu);
	probes_run++;
	int i = 0;
	while (i < probe_cache_n && probe_cache[i].dev != st.st_dev)
		i++;
	if (i == probe_cache_n && i < PROBE_CACHE_DEVS) {
		probe_cache[i].dev = st.st_dev;
		memset(probe_cache[i].v, -1, sizeof probe_cache[i].v);
		probe_cache_n++;
	}
	if (i < probe_cache_n)
		probe_cache[i].v[which] = (signed char)r;
	pthread_mutex_unlock(&probe_mu);
	return r;
}

uint64_t hw_log_fs_probes_run(void)
{
	pthread_mutex_lock(&probe_mu);
	uint64_t n = probes_run;
	pthread_mutex_unlock(&probe_mu);
	return n;
}

int hw_log_fs_direct_io(const char *dir) { return fs_probe(dir, PROBE_DIRECT, fs_takes_direct_io); }

int hw_log_fs_punts_buffered(const char *dir) { return fs_probe(dir, PROBE_PUNTS, fs_punts_buffered_writes); }
