/* hw_file.c — see hw_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "hw_file.h"

int hw_file_write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_fd(int fd, const void *buf, size_t n, int sync)
{
	int rc = hw_file_write_all(fd, buf, n);
	if (!rc && sync && fdatasync(fd) != 0)
		rc = -errno;
	return rc;
}

static int write_path(const char *path, const void *buf, size_t n, int sync)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int rc = write_fd(fd, buf, n, sync);
	if (close(fd) != 0 && !rc)
		rc = -errno;
	return rc;
}

int hw_file_write(const char *path, const void *buf, size_t n)
{
	return write_path(path, buf, n, 0);
}

int hw_file_replace(const char *path, const void *buf, size_t n, int sync)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int rc = write_path(tmp, buf, n, sync);
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int hw_file_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) != 0 ? -errno : 0;
	close(fd);
	return rc;
}

int hw_file_fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return hw_file_fsync_dir(".");
	*slash = 0;
	return hw_file_fsync_dir(dir[0] ? dir : "/");
}

int hw_file_mkdirs(const char *path, int mode)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, (mode_t)mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, (mode_t)mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}
