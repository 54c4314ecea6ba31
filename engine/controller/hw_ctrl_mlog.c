/* hw_ctrl_mlog.c — see hw_ctrl_mlog.h for the format and the design note. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hw_file.h"
#include "hw_bytes.h"
#include "hw_crc32c.h"
#include "hw_ctrl_mlog.h"
#include "hw_logging.h"

static const char MAGIC[8] = { 'H', 'W', 'M', 'L', 'O', 'G', '0', '1' };

struct hw_mlog {
	int fd;
	int fsync_each;
	uint64_t size;
};

static int read_file(int fd, uint8_t **buf, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return -ENOMEM;
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, b + got, n - got, (off_t)got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(b);
			return e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	*buf = b;
	*len = got;
	return 0;
}

/* Offset of the first whole, checksummed record starting after `from`, or
 * 0 when none does: a bad record followed by a good one is corruption in the
 * middle of the file, not a torn tail (a crash tears only the last append). */
static size_t next_good_record(const uint8_t *buf, size_t len, size_t from)
{
	for (size_t p = from + 1; p + 8 < len; p++) {
		uint32_t rlen = hw_le32_get(buf + p);
		if (rlen == 0 || rlen > HW_MLOG_MAX_RECORD || rlen > len - p - 8)
			continue;
		if (hw_crc32c(0, buf + p + 8, rlen) == hw_le32_get(buf + p + 4))
			return p;
	}
	return 0;
}

int hw_mlog_open(const char *path, int fsync_each, hw_mlog_replay_fn fn, void *arg,
		 hw_mlog **out, uint64_t *records, uint64_t *torn_bytes)
{
	*out = NULL;
	*records = 0;
	*torn_bytes = 0;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = read_file(fd, &buf, &len);
	if (rc < 0)
		goto fail;
	size_t good = 0;
	if (len < sizeof(MAGIC)) {
		/* Empty, or a header torn during creation: start afresh. */
		if (len && memcmp(buf, MAGIC, len) != 0) {
			rc = -EBADMSG;
			goto fail;
		}
		if (ftruncate(fd, 0) < 0 || pwrite(fd, MAGIC, sizeof(MAGIC), 0) != (ssize_t)sizeof(MAGIC)) {
			rc = -errno;
			goto fail;
		}
		if (fsync_each && fdatasync(fd) < 0) {
			rc = -errno;
			goto fail;
		}
		good = sizeof(MAGIC);
		len = good;
	} else {
		if (memcmp(buf, MAGIC, sizeof(MAGIC)) != 0) {
			rc = -EBADMSG;
			goto fail;
		}
		good = sizeof(MAGIC);
		while (len - good >= 8) {
			uint32_t rlen = hw_le32_get(buf + good);
			uint32_t crc = hw_le32_get(buf + good + 4);
			if (rlen == 0 || rlen > HW_MLOG_MAX_RECORD || rlen > len - good - 8)
				break;
			const uint8_t *rec = buf + good + 8;
			if (hw_crc32c(0, rec, rlen) != crc)
				break;
			rc = fn(arg, rec[0], rec + 1, rlen - 1);
			if (rc)
				goto fail;
			(*records)++;
			good += 8 + rlen;
		}
	}
	size_t after = good < len ? next_good_record(buf, len, good) : 0;
	if (after) {
		/* never truncate records that took effect: refuse to start */
		HW_LOG(ERROR, "ctrl", "metadata log %s: corrupt record at offset %zu followed by valid "
		       "records (the next at offset %zu): refusing to start; this is not a torn tail. "
		       "Restore the file from a copy, or move it away to start with no metadata",
		       path, good, after);
		rc = -EUCLEAN;
		goto fail;
	}
	if (good < len) {
		*torn_bytes = len - good;
		HW_LOG(WARN, "ctrl", "metadata log %s: truncating %zu torn tail bytes at %zu",
		       path, len - good, good);
		if (ftruncate(fd, (off_t)good) < 0 || (fsync_each && fdatasync(fd) < 0)) {
			rc = -errno;
			goto fail;
		}
	}
	free(buf);
	buf = NULL;
	if (lseek(fd, (off_t)good, SEEK_SET) < 0) {
		rc = -errno;
		goto fail;
	}
	hw_mlog *l = calloc(1, sizeof(*l));
	if (!l) {
		rc = -ENOMEM;
		goto fail;
	}
	l->fd = fd;
	l->fsync_each = fsync_each;
	l->size = good;
	*out = l;
	return 0;
fail:
	free(buf);
	close(fd);
	return rc;
}

int hw_mlog_append(hw_mlog *l, uint8_t type, const void *payload, size_t len)
{
	if (len + 1 > HW_MLOG_MAX_RECORD)
		return -EMSGSIZE;
	uint8_t *rec = malloc(8 + 1 + len);
	if (!rec)
		return -ENOMEM;
	rec[8] = type;
	if (len)
		memcpy(rec + 9, payload, len);
	hw_le32_put(rec, (uint32_t)(len + 1));
	hw_le32_put(rec + 4, hw_crc32c(0, rec + 8, len + 1));
	int rc = hw_file_write_all(l->fd, rec, 9 + len);
	free(rec);
	if (rc == 0 && l->fsync_each && fdatasync(l->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		/* Undo a partial write so the next append starts on a boundary. */
		if (ftruncate(l->fd, (off_t)l->size) == 0)
			(void)lseek(l->fd, (off_t)l->size, SEEK_SET);
		return rc;
	}
	l->size += 9 + len;
	return 0;
}

uint64_t hw_mlog_size(const hw_mlog *l) { return l->size; }

int hw_mlog_sync(hw_mlog *l) { return fdatasync(l->fd) < 0 ? -errno : 0; }

int hw_mlog_install(const char *tmp_path, const char *path)
{
	if (rename(tmp_path, path) < 0)
		return -errno;
	return hw_file_fsync_parent(path);
}

void hw_mlog_close(hw_mlog *l)
{
	if (!l)
		return;
	if (l->fsync_each)
		(void)fdatasync(l->fd);
	close(l->fd);
	free(l);
}
