/* hw_broker_posixfs.c — hw_broker_fs over the file system (hw_broker_disk.h):
 * what the daemon gives engine/broker. The durable steps are engine/log's
 * (hw_file.h): atomic replace, directory fsync, mkdir -p. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hw_broker_disk.h"
#include "hw_file.h"

static int px_read(void *ctx, const char *path, char *buf, size_t cap)
{
	(void)ctx;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, cap - 1);
	int rc = n < 0 ? -errno : (int)n;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return rc;
}

static int px_replace(void *ctx, const char *path, const void *buf, size_t len)
{
	(void)ctx;
	int rc = hw_file_replace(path, buf, len, 1);
	(void)hw_file_fsync_parent(path);
	return rc;
}

static int px_remove(void *ctx, const char *path)
{
	(void)ctx;
	int rc = unlink(path) < 0 ? -errno : 0;
	(void)hw_file_fsync_parent(path);
	return rc;
}

static int px_list(void *ctx, const char *path, int (*fn)(void *arg, const char *name), void *arg)
{
	(void)ctx;
	DIR *dir = opendir(path);
	if (!dir)
		return -errno;
	int rc = 0;
	struct dirent *de;
	while (!rc && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = fn(arg, de->d_name);
	closedir(dir);
	return rc;
}

static int px_mkdirs(void *ctx, const char *path)
{
	(void)ctx;
	return hw_file_mkdirs(path, 0755);
}

static int px_rename(void *ctx, const char *from, const char *to)
{
	(void)ctx;
	if (rename(from, to) < 0)
		return -errno;
	(void)hw_file_fsync_parent(to);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -errno : 0;
}

static int px_remove_tree(void *ctx, const char *path)
{
	(void)ctx;
	int rc = nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (rc == 0)
		return 0;
	return rc < 0 && rc != -1 ? rc : (errno ? -errno : -EIO);
}

const hw_broker_fs hw_broker_posix_fs = { .read = px_read, .replace = px_replace, .remove = px_remove,
					  .list = px_list, .mkdirs = px_mkdirs, .rename = px_rename,
					  .remove_tree = px_remove_tree };
