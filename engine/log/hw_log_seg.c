/* hw_log_seg.c — one segment on disk: its file (create, free, unlink,
 * trim, preallocate, read), its offset index (add, write, locate) and the
 * padding test recovery uses. Recovery and checkpoints are in
 * hw_log_recover.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_file.h"
#include "hw_logging.h"
#include "hw_log_int.h"

int hw_log_path(const hw_log *log, int64_t base, const char *ext, char *out, size_t cap)
{
	int n = base >= 0 ? snprintf(out, cap, "%s/%020" PRId64 "%s", log->dir, base, ext)
			  : snprintf(out, cap, "%s/%s", log->dir, ext);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

#define HW_LOG_PREALLOC_MIN_STEP (1LL << 20)

/* Step-wise preallocation (hw_log_int.h). Why steps, not the whole segment:
 * a 1 GiB segment per partition reserves gigabytes on a shared disk for a
 * handful of partitions, most of which never fill one (Redpanda allocates
 * 32 MiB at a time for the same reason). Why at all: a direct write into
 * the file's size and onto allocated blocks is issued by io_uring_enter
 * itself; one that extends the file needs ext4's exclusive inode lock, so
 * io_uring hands it to an io-wq worker (measured: every write, two thread
 * switches each). mode 0 (not KEEP_SIZE): the size must cover the write
 * too, or it still counts as extending. The call is synchronous on the
 * owner's thread: one per half step of appends, and with direct writes it
 * is made when none of this log's writes is in flight (one at a time, see
 * submit_pending), so ext4's wait for in-flight direct I/O returns at once. */
void hw_log_seg_preallocate(hw_log *log, hw_log_seg *s, int64_t need)
{
	int64_t cap = log->cfg.segment_bytes;
	int64_t step = (int64_t)log->cfg.preallocate_step_bytes;
	if ((!log->cfg.preallocate && !log->dio_align) || s->prealloc_end >= cap)
		return;
	if (need < s->size)
		need = s->size;
	/* the step grows with the segment: 1 MiB for a new one, then as much
	 * as it already holds, up to the configured step — a quiet partition
	 * reserves ~1-2 MiB, not a full step (thousands of partitions per
	 * broker would otherwise reserve tens of GB) */
	if (step && step > HW_LOG_PREALLOC_MIN_STEP)
		step = need < HW_LOG_PREALLOC_MIN_STEP ? HW_LOG_PREALLOC_MIN_STEP : need < step ? need : step;
	if (s->prealloc_end && step && s->prealloc_end - need >= step / 2)
		return;
	int64_t from = s->prealloc_end, to = step ? need + step : cap;
	if (to > cap)
		to = cap;
	if (to <= from)
		return;
	if (fallocate(s->fd, 0, (off_t)from, (off_t)(to - from)) == 0) {
		s->prealloc_end = to;
		s->padded = 1;
		HW_LOG_CTR_INC(log, PREALLOCATIONS, 1);
		return;
	}
	int e = errno;
	s->prealloc_end = cap; /* do not try again for this segment */
	if (!log->prealloc_warned++)
		HW_LOG(WARN, HW_LOG_MOD, "%s: preallocation: fallocate: %s (segments grow as written%s)",
		       log->dir, strerror(e), log->dio_align ? "; every direct write then goes to an io_uring worker" : "");
}

hw_log_seg *hw_log_seg_alloc(hw_log *log, int64_t base)
{
	hw_log_seg *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->base = s->next_offset = base;
	s->max_ts = s->first_ts = -1;
	s->hint_offset = -1;
	s->created_ms = hw_log_wall_ms();
	s->idx_max = (uint32_t)(log->cfg.index_size_max_bytes / 8);
	s->fd = s->dfd = -1;
	return s;
}

hw_log_seg *hw_log_seg_create(hw_log *log, int64_t base, int *err)
{
	char p[4096];
	hw_log_seg *s = hw_log_seg_alloc(log, base);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = hw_log_path(log, base, ".log", p, sizeof(p));
	if (*err) {
		free(s);
		return NULL;
	}
	s->fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (s->fd < 0 || (log->dio_align && (s->dfd = open(p, O_WRONLY | O_DIRECT | O_CLOEXEC)) < 0)) {
		*err = -errno;
		hw_log_seg_free(s);
		return NULL;
	}
	hw_log_seg_preallocate(log, s, 0);
	/* stale index files of an earlier segment with this base */
	if (hw_log_path(log, base, ".index", p, sizeof(p)) == 0)
		unlink(p);
	if (hw_log_path(log, base, ".timeindex", p, sizeof(p)) == 0)
		unlink(p);
	return s;
}

void hw_log_seg_free(hw_log_seg *seg)
{
	if (!seg)
		return;
	if (seg->fd >= 0)
		close(seg->fd);
	if (seg->dfd >= 0)
		close(seg->dfd);
	free(seg->idx);
	free(seg);
}

int hw_log_seg_unlink(hw_log *log, hw_log_seg *seg)
{
	char p[4096];
	int rc = 0;
	static const char *const ext[] = { ".log", ".index", ".timeindex" };
	for (int i = 0; i < 3; i++)
		if (hw_log_path(log, seg->base, ext[i], p, sizeof(p)) == 0 && unlink(p) != 0 &&
		    errno != ENOENT && !rc)
			rc = -errno;
	return rc;
}

int hw_log_seg_trim(hw_log *log, hw_log_seg *seg)
{
	if (!seg->padded)
		return 0;
	HW_ASSERT(seg->written == seg->size);
	if (ftruncate(seg->fd, seg->size) != 0) {
		int rc = -errno;
		HW_LOG(ERROR, HW_LOG_MOD, "%s: segment %" PRId64 ": ftruncate to %" PRId64 ": %s",
		       log->dir, seg->base, seg->size, strerror(-rc));
		return rc;
	}
	seg->padded = 0;
	seg->prealloc_end = 0;
	return 0;
}

/* 1 if the file's bytes [from, to) are what an untrimmed segment ends in,
 * not a torn or corrupt batch: zeros up to the end of from's block (direct_io
 * padding, or the unwritten rest of a page), then no data at all up to `to`
 * (preallocated, unwritten extents, which SEEK_DATA skips as holes on ext4,
 * XFS and tmpfs). Anything written past from's block is not padding. */
int hw_log_seg_tail_is_padding(const hw_log_seg *s, int64_t from, int64_t to)
{
	uint8_t buf[HW_LOG_DIO_ALIGN];
	if (to <= from)
		return 0;
	int64_t z = (from / HW_LOG_DIO_ALIGN + 1) * HW_LOG_DIO_ALIGN;
	if (z > to)
		z = to;
	size_t n = (size_t)(z - from);
	if (pread(s->fd, buf, n, from) != (ssize_t)n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (buf[i])
			return 0;
	if (z == to)
		return 1;
	off_t d = lseek(s->fd, (off_t)z, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO; /* no data after z */
	return d >= to;
}

int hw_log_seg_index_add(hw_log *log, hw_log_seg *seg, int64_t last_offset, int64_t pos)
{
	(void)log;
	if (seg->idx_n) {
		const hw_log_idx *l = &seg->idx[seg->idx_n - 1];
		if (last_offset - seg->base <= l->rel || pos <= l->pos)
			return 0;
	}
	if (seg->idx_n == seg->idx_cap) {
		uint32_t cap = seg->idx_cap ? seg->idx_cap * 2 : 64;
		hw_log_idx *v = realloc(seg->idx, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		seg->idx = v;
		seg->idx_cap = cap;
	}
	seg->idx[seg->idx_n].rel = (uint32_t)(last_offset - seg->base);
	seg->idx[seg->idx_n].pos = (uint32_t)pos;
	seg->idx_n++;
	seg->bytes_since_index = 0;
	return 0;
}

int hw_log_seg_write_indexes(hw_log *log, hw_log_seg *seg)
{
	char p[4096];
	int rc = hw_log_path(log, seg->base, ".index", p, sizeof(p));
	if (rc)
		return rc;
	uint8_t *buf = malloc((size_t)seg->idx_n * 8 + 12);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < seg->idx_n; i++) {
		hw_be32_put(buf + 8 * i, seg->idx[i].rel);
		hw_be32_put(buf + 8 * i + 4, seg->idx[i].pos);
	}
	rc = hw_file_write(p, buf, (size_t)seg->idx_n * 8);
	if (!rc)
		rc = hw_log_path(log, seg->base, ".timeindex", p, sizeof(p));
	if (!rc) {
		size_t n = 0;
		if (seg->max_ts >= 0) {
			hw_be64_put(buf, (uint64_t)seg->max_ts);
			hw_be32_put(buf + 8, (uint32_t)seg->max_ts_rel);
			n = 12;
		}
		rc = hw_file_write(p, buf, n);
	}
	free(buf);
	return rc;
}

int hw_log_seg_pread(hw_log *log, const hw_log_seg *seg, int64_t pos, void *buf, size_t n)
{
	uint8_t *out = buf;
	if (pos < 0 || pos + (int64_t)n > seg->size)
		return -EIO;
	int64_t mem = hw_log_mem_start(log, seg);
	while (n) {
		if (pos >= mem) {
			hw_log_chunk *c = hw_log_chunk_at(log, seg, pos);
			if (!c)
				return -EIO;
			size_t k = (size_t)(c->file_pos + c->len - pos);
			if (k > n)
				k = n;
			memcpy(out, c->data + (pos - c->file_pos), k);
			out += k;
			pos += (int64_t)k;
			n -= k;
			continue;
		}
		size_t k = (size_t)(mem - pos) < n ? (size_t)(mem - pos) : n;
		ssize_t r = pread(seg->fd, out, k, pos);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		out += r;
		pos += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Rebuild seg's index by walking its batch headers (no CRC: the bytes were
 * checked when appended or recovered). Used when an entry turns out not to
 * point at the batch it names. Stops at the first unreadable header. */
static void index_rebuild_walk(hw_log *log, hw_log_seg *seg)
{
	seg->idx_n = 0;
	seg->bytes_since_index = 0;
	uint8_t b[HW_LB_PROBE];
	for (int64_t pos = 0; pos + HW_LB_PROBE <= seg->size;) {
		hw_lb_hdr h;
		if (hw_log_seg_pread(log, seg, pos, b, sizeof(b)) < 0 || hw_lb_probe(b, &h) < 0)
			break;
		if (seg->bytes_since_index > log->cfg.index_interval_bytes && seg->idx_n < seg->idx_max &&
		    hw_log_seg_index_add(log, seg, h.last, pos) < 0)
			break;
		seg->bytes_since_index += h.size;
		pos += h.size;
	}
	HW_LOG_CTR_INC(log, INDEX_REBUILDS, 1);
	if (seg->sealed)
		hw_log_seg_write_indexes(log, seg);
}

int hw_log_seg_locate(hw_log *log, hw_log_seg *seg, int64_t offset, int64_t *pos_out,
		      hw_lb_hdr *hdr_out)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int64_t pos = 0, want_last = -1, want_base = -1;
		/* greatest index entry <= offset; its batch must end at that offset */
		uint32_t lo = 0, hi = seg->idx_n;
		int64_t rel = offset - seg->base;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if ((int64_t)seg->idx[mid].rel <= rel)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0) {
			pos = seg->idx[lo - 1].pos;
			want_last = seg->base + seg->idx[lo - 1].rel;
		}
		/* the previous read's end: a batch starting at hint_offset */
		if (seg->hint_offset >= 0 && seg->hint_offset <= offset && seg->hint_pos >= pos &&
		    seg->hint_pos < seg->size) {
			pos = seg->hint_pos;
			want_last = -1;
			want_base = seg->hint_offset;
		}
		int64_t first = pos;
		int bad = 0;
		uint8_t h[HW_LB_PROBE];
		while (pos + HW_LB_PROBE <= seg->size) {
			hw_lb_hdr bh;
			if (hw_log_seg_pread(log, seg, pos, h, sizeof(h)) < 0 || hw_lb_probe(h, &bh) < 0 ||
			    pos + bh.size > seg->size ||
			    (pos == first && ((want_last >= 0 && bh.last != want_last) ||
					      (want_base >= 0 && bh.base != want_base)))) {
				bad = 1;
				break;
			}
			if (bh.last >= offset) {
				*pos_out = pos;
				if (hdr_out)
					*hdr_out = bh;
				return 0;
			}
			pos += bh.size;
		}
		if (!bad) {
			*pos_out = seg->size;
			return 0;
		}
		if (first == 0 || attempt == 1) {
			HW_LOG(ERROR, HW_LOG_MOD, "%s: segment %" PRId64 ": bad batch header at %" PRId64,
			       log->dir, seg->base, pos);
			return -EIO;
		}
		/* An index entry or hint that does not name the batch at its
		 * position: distrust both, rebuild the index, walk again. */
		HW_LOG(WARN, HW_LOG_MOD, "%s: segment %" PRId64 ": index/hint at %" PRId64
		       " does not match the batch there: rebuilding the index",
		       log->dir, seg->base, first);
		seg->hint_offset = -1;
		index_rebuild_walk(log, seg);
	}
	return -EIO;
}
