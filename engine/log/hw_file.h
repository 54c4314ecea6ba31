/* hw_file.h — whole small files (indexes, checkpoints) written in one go.
 *
 * Checkpoint files (recovery point, HW, leader epochs) are replaced
 * atomically: the new contents go to "<path>.tmp", which is renamed over
 * <path>, so a reader (or a restart after a crash) sees the old file or the
 * new one, never a torn mix. Recovery deletes stray "*.tmp" files.
 */
#ifndef HW_FILE_H
#define HW_FILE_H

#include <stddef.h>

/* Write all of buf[0..n) to fd at its file position, retrying short
 * writes and EINTR. 0, or -errno of the failing write(2). */
int hw_file_write_all(int fd, const void *buf, size_t n);

/* Create or truncate `path` and write buf[0..n). 0, or -errno of the
 * failing open/write/close (the file may then be partly written). */
int hw_file_write(const char *path, const void *buf, size_t n);

/* Replace `path` atomically with buf[0..n) (write "<path>.tmp", fdatasync
 * it when `sync`, rename). 0, or -ENAMETOOLONG, or -errno of the failing
 * step; on failure <path> is unchanged and the temporary file removed. */
int hw_file_replace(const char *path, const void *buf, size_t n, int sync);

/* fsync directory `dir`, so a file created, renamed or removed in it
 * survives a crash. 0, or -errno of the failing open/fsync. */
int hw_file_fsync_dir(const char *dir);
/* fsync the directory holding `path` ("/" for "/x", "." for a bare name).
 * 0, -ENAMETOOLONG, or hw_file_fsync_dir's -errno. */
int hw_file_fsync_parent(const char *path);
/* mkdir -p `path`, with `mode` for what it creates. 0, -ENAMETOOLONG, or
 * -errno of the failing mkdir (an existing directory is fine). */
int hw_file_mkdirs(const char *path, int mode);

#endif
