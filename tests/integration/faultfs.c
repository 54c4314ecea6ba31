/* faultfs — a FUSE pass-through file system whose I/O can be made to fail
 * with EIO, for the tests of failed log directories (docs/logdirs.md).
 *
 *   faultfs BACKING_DIR MOUNTPOINT [fuse options]
 *
 * Every operation is passed to the same path under BACKING_DIR. After
 * SIGUSR1 every data operation (open, create, read, write, fsync,
 * fallocate, truncate, mkdir, unlink, rename) fails with EIO, as a disk
 * whose sectors stopped answering does; metadata (getattr, readdir,
 * statfs) and close keep working, so the file system still unmounts.
 * SIGUSR2 heals it. Runs in the foreground, single-threaded; the kernel
 * side is the real FUSE driver, so the broker sees the EIO from its own
 * read/write/fdatasync/io_uring calls exactly as from a failing disk. */
#define FUSE_USE_VERSION 31
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char backing[PATH_MAX];
static volatile sig_atomic_t failing;
static unsigned long eio_answers;

static void on_sig(int sig) { failing = sig == SIGUSR1; }

/* The backing path of p, or -ENAMETOOLONG. */
static int bpath(const char *p, char *out)
{
	int n = snprintf(out, PATH_MAX, "%s%s", backing, p);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* 1 (and counted) when the disk is failing: the caller answers -EIO. */
static int fail_now(void)
{
	if (!failing)
		return 0;
	eio_answers++;
	return 1;
}

#define BP(p, b)                                                                                        \
	char b[PATH_MAX];                                                                               \
	do {                                                                                            \
		int rc_ = bpath(p, b);                                                                  \
		if (rc_ < 0)                                                                            \
			return rc_;                                                                     \
	} while (0)
#define RET(x) return (x) < 0 ? -errno : 0

static int f_getattr(const char *p, struct stat *st, struct fuse_file_info *fi)
{
	if (fi)
		RET(fstat((int)fi->fh, st));
	BP(p, b);
	RET(lstat(b, st));
}

static int f_readdir(const char *p, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		     enum fuse_readdir_flags fl)
{
	(void)off, (void)fi, (void)fl;
	BP(p, b);
	DIR *d = opendir(b);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)))
		if (fill(buf, de->d_name, NULL, 0, 0))
			break;
	closedir(d);
	return 0;
}

static int f_mkdir(const char *p, mode_t m)
{
	BP(p, b);
	if (fail_now())
		return -EIO;
	RET(mkdir(b, m));
}

static int f_unlink(const char *p)
{
	BP(p, b);
	if (fail_now())
		return -EIO;
	RET(unlink(b));
}

static int f_rmdir(const char *p)
{
	BP(p, b);
	if (fail_now())
		return -EIO;
	RET(rmdir(b));
}

static int f_rename(const char *from, const char *to, unsigned int flags)
{
	BP(from, a);
	BP(to, b);
	if (fail_now())
		return -EIO;
	RET(renameat2(AT_FDCWD, a, AT_FDCWD, b, flags));
}

static int f_chmod(const char *p, mode_t m, struct fuse_file_info *fi)
{
	if (fi)
		RET(fchmod((int)fi->fh, m));
	BP(p, b);
	RET(chmod(b, m));
}

static int f_truncate(const char *p, off_t size, struct fuse_file_info *fi)
{
	if (fail_now())
		return -EIO;
	if (fi)
		RET(ftruncate((int)fi->fh, size));
	BP(p, b);
	RET(truncate(b, size));
}

static int f_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi)
{
	if (fi)
		RET(futimens((int)fi->fh, tv));
	BP(p, b);
	RET(utimensat(AT_FDCWD, b, tv, AT_SYMLINK_NOFOLLOW));
}

/* O_DIRECT is the kernel's business (FUSE passes the writes through
 * uncached either way): the backing file is opened without it. */
static int f_open(const char *p, struct fuse_file_info *fi)
{
	BP(p, b);
	if (fail_now())
		return -EIO;
	int fd = open(b, fi->flags & ~O_DIRECT);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int f_create(const char *p, mode_t m, struct fuse_file_info *fi)
{
	BP(p, b);
	if (fail_now())
		return -EIO;
	int fd = open(b, (fi->flags & ~O_DIRECT) | O_CREAT, m);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int f_read(const char *p, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	(void)p;
	if (fail_now())
		return -EIO;
	ssize_t r = pread((int)fi->fh, buf, n, off);
	return r < 0 ? -errno : (int)r;
}

static int f_write(const char *p, const char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	(void)p;
	if (fail_now())
		return -EIO;
	ssize_t r = pwrite((int)fi->fh, buf, n, off);
	return r < 0 ? -errno : (int)r;
}

static int f_statfs(const char *p, struct statvfs *st)
{
	BP(p, b);
	RET(statvfs(b, st));
}

static int f_release(const char *p, struct fuse_file_info *fi)
{
	(void)p;
	close((int)fi->fh);
	return 0;
}

static int f_fsync(const char *p, int datasync, struct fuse_file_info *fi)
{
	(void)p;
	if (fail_now())
		return -EIO;
	RET(datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh));
}

static int f_fallocate(const char *p, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)p;
	if (fail_now())
		return -EIO;
	RET(fallocate((int)fi->fh, mode, off, len));
}

static void f_destroy(void *priv)
{
	(void)priv;
	fprintf(stderr, "faultfs: %lu operations answered EIO\n", eio_answers);
}

static const struct fuse_operations ops = {
	.getattr = f_getattr,
	.readdir = f_readdir,
	.mkdir = f_mkdir,
	.unlink = f_unlink,
	.rmdir = f_rmdir,
	.rename = f_rename,
	.chmod = f_chmod,
	.truncate = f_truncate,
	.utimens = f_utimens,
	.open = f_open,
	.create = f_create,
	.read = f_read,
	.write = f_write,
	.statfs = f_statfs,
	.release = f_release,
	.fsync = f_fsync,
	.fallocate = f_fallocate,
	.destroy = f_destroy,
};

int main(int argc, char **argv)
{
	if (argc < 3 || !realpath(argv[1], backing)) {
		fprintf(stderr, "usage: faultfs BACKING_DIR MOUNTPOINT [fuse options]\n");
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_sig };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	/* fuse_main's own arguments: the mount point, foreground, one thread */
	char *fargv[16] = { argv[0], argv[2], "-f", "-s" };
	int fargc = 4;
	for (int i = 3; i < argc && fargc < 15; i++)
		fargv[fargc++] = argv[i];
	return fuse_main(fargc, fargv, &ops, NULL);
}
