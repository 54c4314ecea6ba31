/* hw_log_recover.c — checkpoints and the recovery that runs when a log is
 * opened. The segment files and their indexes are in hw_log_seg.c.
 *
 * Design note (recovery, as Kafka's LogLoader). `recovery-point-checkpoint`
 * holds an offset below which every byte was fdatasync'ed. Segments wholly
 * below the segment holding it are trusted: their `.index` is only sanity-
 * checked (entries strictly increasing, inside the file, the first and last
 * entry pointing at a batch whose last offset they name) and rebuilt by a
 * full scan if it fails. From the recovery point on, every batch is read
 * back and checked — framing, magic, offsets increasing, CRC32C — while the
 * index is rebuilt. The first batch that fails (a torn write at the tail, or
 * corrupt bytes) ends the log: the file is truncated there and every later
 * segment is deleted, each counted. The epoch cache comes from its
 * checkpoint, then is re-fed every recovered batch's partitionLeaderEpoch;
 * if the checkpoint is missing or malformed it is rebuilt from all batches.
 */
#include <dirent.h>
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

#define RP_FILE "recovery-point-checkpoint"
#define HWC_FILE "high-watermark-checkpoint"
#define EPOCH_FILE "leader-epoch-checkpoint"

/* ---- checkpoints ---------------------------------------------------------- */

int hw_log_write_recovery_point(hw_log *log)
{
	char p[4096], buf[64];
	int rc = hw_log_path(log, -1, RP_FILE, p, sizeof(p));
	if (rc)
		return rc;
	int n = snprintf(buf, sizeof(buf), "0\n%" PRId64 "\n", log->recovery_point);
	rc = hw_file_replace(p, buf, (size_t)n, 0);
	if (!rc)
		log->rp_persisted = log->recovery_point;
	return rc;
}

static int64_t read_recovery_point(hw_log *log)
{
	char p[4096];
	if (hw_log_path(log, -1, RP_FILE, p, sizeof(p)))
		return 0;
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	int v;
	long long rp;
	int ok = fscanf(f, "%d %lld", &v, &rp) == 2 && v == 0 && rp >= 0;
	fclose(f);
	if (!ok) {
		HW_LOG(WARN, HW_LOG_MOD, "%s: malformed %s: recovering every segment", log->dir,
		       RP_FILE);
		return 0;
	}
	return rp;
}

/* The partition's high watermark, as Kafka's replication-offset-checkpoint
 * (one file per partition here, same "version, count, value" shape). Not
 * fsync'ed, like Kafka's periodic checkpoint it may be older than the HW;
 * after an OS crash it may be missing (the HW then starts at the log
 * start) or ahead of a log that lost its unflushed tail (the reader clamps
 * it to the LEO). Either only delays or bounds visibility; it never makes
 * an unreplicated record readable beyond what the log holds. */
int hw_log_write_hw_checkpoint(hw_log *log, int64_t hw)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	char p[4096], buf[64];
	if (hw < 0)
		return -EINVAL;
	int rc = hw_log_path(log, -1, HWC_FILE, p, sizeof(p));
	if (rc)
		return rc;
	int n = snprintf(buf, sizeof(buf), "0\n1\n%" PRId64 "\n", hw);
	return hw_file_replace(p, buf, (size_t)n, 0);
}

int64_t hw_log_read_hw_checkpoint(hw_log *log)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	char p[4096];
	if (hw_log_path(log, -1, HWC_FILE, p, sizeof(p)))
		return -1;
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int v, cnt;
	long long hw;
	int ok = fscanf(f, "%d %d %lld", &v, &cnt, &hw) == 3 && v == 0 && cnt == 1 && hw >= 0;
	fclose(f);
	if (!ok) {
		HW_LOG(WARN, HW_LOG_MOD, "%s: malformed %s: the HW starts at the log start", log->dir, HWC_FILE);
		return -1;
	}
	if (hw > log->leo)
		hw = log->leo;
	if (hw < hw_log_start_offset(log))
		hw = hw_log_start_offset(log);
	return hw;
}

int hw_log_write_epochs(hw_log *log)
{
	char p[4096];
	int rc = hw_log_path(log, -1, EPOCH_FILE, p, sizeof(p));
	return rc ? rc : hw_epoch_write_checkpoint(&log->epochs, p);
}

/* ---- per-segment loading -------------------------------------------------- */

static int batch_at(hw_log *log, hw_log_seg *seg, int64_t pos, hw_lb_hdr *h)
{
	uint8_t b[HW_LB_PROBE];
	if (pos + HW_LB_PROBE > seg->size || hw_log_seg_pread(log, seg, pos, b, sizeof(b)) < 0)
		return -EIO;
	return hw_lb_probe(b, h);
}

/* Load and sanity-check `.index`; 0 if usable, <0 if it must be rebuilt. */
static int load_index(hw_log *log, hw_log_seg *seg, int64_t next_base)
{
	char p[4096];
	int rc = hw_log_path(log, seg->base, ".index", p, sizeof(p));
	if (rc)
		return rc;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	rc = fstat(fd, &st) == 0 ? 0 : -errno;
	uint8_t *buf = NULL;
	if (!rc && (st.st_size % 8 || st.st_size / 8 > seg->idx_max))
		rc = -EBADMSG;
	if (!rc && st.st_size) {
		buf = malloc((size_t)st.st_size);
		if (!buf)
			rc = -ENOMEM;
		else if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
			rc = -EIO;
	}
	close(fd);
	uint32_t n = rc ? 0 : (uint32_t)(st.st_size / 8);
	seg->idx_n = 0;
	for (uint32_t i = 0; !rc && i < n; i++) {
		uint32_t rel = hw_be32_get(buf + 8 * i), pos = hw_be32_get(buf + 8 * i + 4);
		if (rel > INT32_MAX || pos >= seg->size || (next_base >= 0 && seg->base + rel >= next_base) ||
		    (seg->idx_n && (rel <= seg->idx[seg->idx_n - 1].rel || pos <= seg->idx[seg->idx_n - 1].pos))) {
			rc = -EBADMSG;
			break;
		}
		if (seg->idx_n == seg->idx_cap) {
			uint32_t cap = seg->idx_cap ? seg->idx_cap * 2 : 64;
			while (cap < n)
				cap *= 2;
			hw_log_idx *v = realloc(seg->idx, cap * sizeof(*v));
			if (!v) {
				rc = -ENOMEM;
				break;
			}
			seg->idx = v;
			seg->idx_cap = cap;
		}
		seg->idx[seg->idx_n].rel = rel;
		seg->idx[seg->idx_n].pos = pos;
		seg->idx_n++;
	}
	free(buf);
	/* spot-check: first and last entries name the batch at their position */
	for (int k = 0; !rc && seg->idx_n && k < 2; k++) {
		const hw_log_idx *e = &seg->idx[k ? seg->idx_n - 1 : 0];
		hw_lb_hdr h;
		if (batch_at(log, seg, e->pos, &h) < 0 || h.last != seg->base + e->rel)
			rc = -EBADMSG;
	}
	if (rc)
		seg->idx_n = 0;
	return rc;
}

static void load_timeindex(hw_log *log, hw_log_seg *seg)
{
	char p[4096];
	uint8_t b[12];
	if (hw_log_path(log, seg->base, ".timeindex", p, sizeof(p)))
		return;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, b, 12, 0) == 12) {
		seg->max_ts = (int64_t)hw_be64_get(b);
		seg->max_ts_rel = (int32_t)hw_be32_get(b + 8);
	}
	close(fd);
}

/* The first batch's maxTimestamp: the roll basis (Kafka's rollingBasedTimestamp). */
static void load_first_ts(hw_log *log, hw_log_seg *seg)
{
	hw_lb_hdr h;
	if (batch_at(log, seg, 0, &h) == 0)
		seg->first_ts = h.max_ts;
}

/* Walk headers of [from, to) without CRC, feeding the epoch cache. */
static int walk_epochs(hw_log *log, hw_log_seg *seg, int64_t from, int64_t to)
{
	while (from < to) {
		hw_lb_hdr h;
		if (batch_at(log, seg, from, &h) < 0)
			return -EIO;
		if (h.epoch > hw_epoch_latest(&log->epochs) &&
		    hw_epoch_assign(&log->epochs, h.epoch, h.base) < 0)
			return -ENOMEM;
		from += h.size;
	}
	return 0;
}

/* CRC-check every batch of seg from `pos`, rebuilding index entries and
 * timestamps. *cut_at = position of the first torn/corrupt batch, or -1.
 * 0, or <0 on I/O error / ENOMEM. */
static int scan_segment(hw_log *log, hw_log_seg *seg, int64_t pos, int64_t *cut_at)
{
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	int rc = 0;
	*cut_at = -1;
	if (!buf)
		return -ENOMEM;
	while (pos < seg->size && *cut_at < 0) {
		size_t want = (size_t)(seg->size - pos) < cap ? (size_t)(seg->size - pos) : cap;
		size_t got = 0;
		while (got < want) {
			ssize_t r = pread(seg->fd, buf + got, want - got, pos + (int64_t)got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = r < 0 ? -errno : -EIO;
				goto out;
			}
			got += (size_t)r;
		}
		size_t off = 0;
		while (off < want) {
			size_t avail = want - off;
			int64_t at = pos + (int64_t)off;
			hw_lb_hdr h;
			if (avail < HW_LB_PROBE) {
				if (at + (int64_t)avail < seg->size)
					break; /* header continues in the next read */
				*cut_at = at; /* torn header at the end */
				break;
			}
			if (hw_lb_probe(buf + off, &h) < 0 || at + (int64_t)h.size > seg->size) {
				*cut_at = at;
				break;
			}
			if (h.size > avail) {
				if (off == 0) { /* bigger than the buffer: grow, reread */
					uint8_t *nb = realloc(buf, h.size);
					if (!nb) {
						rc = -ENOMEM;
						goto out;
					}
					buf = nb;
					cap = h.size;
				}
				break;
			}
			/* Offsets are contiguous in a hiwater log (append takes only
			 * base == LEO), and baseOffset is not CRC-covered: check it. */
			if (hw_lb_check(buf + off, h.size, &h) < 0 ||
			    h.base != (at == 0 ? seg->base : seg->next_offset) ||
			    h.last - seg->base > INT32_MAX) {
				*cut_at = at;
				break;
			}
			if (seg->bytes_since_index > log->cfg.index_interval_bytes &&
			    seg->idx_n < seg->idx_max &&
			    (rc = hw_log_seg_index_add(log, seg, h.last, at)) < 0)
				goto out;
			seg->bytes_since_index += h.size;
			if (h.max_ts > seg->max_ts) {
				seg->max_ts = h.max_ts;
				seg->max_ts_rel = (int32_t)(h.last - seg->base);
			}
			if (at == 0)
				seg->first_ts = h.max_ts;
			/* Kafka's LogSegment.recover: only a newer epoch starts an
			 * entry; batches the checkpoint already covers are not
			 * re-assigned (that would look like a truncation). */
			if (h.epoch > hw_epoch_latest(&log->epochs) &&
			    hw_epoch_assign(&log->epochs, h.epoch, h.base) < 0) {
				rc = -ENOMEM;
				goto out;
			}
			seg->next_offset = h.last + 1;
			HW_LOG_CTR_INC(log, RECOVERED_BATCHES, 1);
			off += h.size;
		}
		pos += (int64_t)off;
	}
out:
	free(buf);
	return rc;
}

/* ---- open-time recovery ---------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int list_segments(hw_log *log, int64_t **out, size_t *nout)
{
	DIR *d = opendir(log->dir);
	if (!d)
		return -errno;
	int64_t *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0) {
			unlinkat(dirfd(d), e->d_name, 0); /* a checkpoint write that never finished */
			continue;
		}
		if (len != 24 || strcmp(e->d_name + 20, ".log") != 0)
			continue;
		int digits = 1;
		for (int i = 0; i < 20; i++)
			digits &= e->d_name[i] >= '0' && e->d_name[i] <= '9';
		if (!digits)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			int64_t *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[n++] = strtoll(e->d_name, NULL, 10);
	}
	closedir(d);
	if (rc) {
		free(v);
		return rc;
	}
	if (n > 1) /* qsort(NULL, 0, ...) is undefined: empty directory */
		qsort(v, n, sizeof(*v), cmp_i64);
	*out = v;
	*nout = n;
	return 0;
}

static int seg_load(hw_log *log, int64_t base, hw_log_seg **out)
{
	char p[4096];
	int rc = hw_log_path(log, base, ".log", p, sizeof(p));
	if (rc)
		return rc;
	hw_log_seg *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base = s->next_offset = base;
	s->max_ts = s->first_ts = -1;
	s->hint_offset = -1;
	s->created_ms = hw_log_wall_ms();
	s->idx_max = (uint32_t)(log->cfg.index_size_max_bytes / 8);
	s->dfd = -1;
	s->fd = open(p, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (s->fd < 0 || fstat(s->fd, &st) != 0 ||
	    (log->dio_align && (s->dfd = open(p, O_WRONLY | O_DIRECT | O_CLOEXEC)) < 0)) {
		rc = -errno;
		hw_log_seg_free(s);
		return rc;
	}
	s->size = s->written = s->synced = st.st_size;
	*out = s;
	return 0;
}

/* Recovery phase 1: loads every segment file of log->dir, in base order
 * (one empty segment at 0 for a new log): 0, or negative errno. */
static int recover_load_segments(hw_log *log)
{
	int rc;
	int64_t *bases = NULL;
	size_t n = 0;
	if ((rc = list_segments(log, &bases, &n)) < 0)
		return rc;
	log->segs_cap = n + 8;
	log->segs = calloc(log->segs_cap, sizeof(*log->segs));
	if (!log->segs) {
		free(bases);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if ((rc = seg_load(log, bases[i], &log->segs[i])) < 0) {
			free(bases);
			return rc;
		}
		log->nsegs++;
	}
	free(bases);
	if (n == 0) {
		hw_log_seg *s = hw_log_seg_create(log, 0, &rc);
		if (!s)
			return rc;
		log->segs[log->nsegs++] = s;
	}
	return 0;
}

/* Recovery phase 2a, for segment i at or before r (the one holding the
 * recovery point rp): what its saved index lets us trust. Returns 1 when
 * the whole segment is trusted (it lies before r and its index loaded),
 * else 0 with *from the position scanning starts at (0, or the last index
 * entry at or below rp); negative errno on a failed epoch walk. */
static int recover_trusted_prefix(hw_log *log, size_t i, size_t r, int64_t rp, int rebuild_epochs,
				  int64_t *from)
{
	hw_log_seg *s = log->segs[i];
	int64_t next_base = i + 1 < log->nsegs ? log->segs[i + 1]->base : -1;
	int rc;
	int irc = load_index(log, s, next_base);
	if (irc == 0 && i < r) {
		load_timeindex(log, s);
		load_first_ts(log, s);
		s->next_offset = next_base;
		if (rebuild_epochs && (rc = walk_epochs(log, s, 0, s->size)) < 0)
			return rc;
		return 1;
	}
	if (irc == 0 && rp > s->base && s->idx_n) {
		/* scan from the last index entry at or below rp */
		uint32_t k = s->idx_n;
		while (k > 0 && (int64_t)s->idx[k - 1].rel > rp - s->base)
			k--;
		hw_lb_hdr fh;
		if (k > 0 && batch_at(log, s, s->idx[k - 1].pos, &fh) == 0 &&
		    fh.last == s->base + s->idx[k - 1].rel) {
			*from = s->idx[k - 1].pos;
			s->next_offset = fh.base; /* batches before it are trusted */
			s->idx_n = k - 1;
			s->bytes_since_index = log->cfg.index_interval_bytes + 1;
			load_timeindex(log, s);
			load_first_ts(log, s);
		}
	}
	if (irc != 0) {
		HW_LOG_CTR_INC(log, INDEX_REBUILDS, 1);
		HW_LOG(INFO, HW_LOG_MOD, "%s: segment %" PRId64 ": index %s, rebuilding", log->dir, s->base,
		       irc == -ENOENT ? "missing" : "corrupt");
	}
	return 0;
}

/* Recovery phase 2b: segment i was scanned and ends in a bad batch at cut
 * (cut >= 0). Trailing zero padding is trimmed (returns 0: go on with the
 * next segment); anything else truncates the log at cut and deletes the
 * later segments (returns 1: the log ends here). Negative errno when a
 * truncate fails. */
static int recover_cut(hw_log *log, size_t i, int64_t cut)
{
	hw_log_seg *s = log->segs[i];
	if (cut < s->size && hw_log_seg_tail_is_padding(s, cut, s->size) &&
	    (i + 1 == log->nsegs || log->segs[i + 1]->base == s->next_offset)) {
		/* direct_io padding: a crash before the trim. The
		 * batches are whole, the next segment continues. */
		HW_LOG_CTR_INC(log, RECOVERY_PADDING_BYTES, s->size - cut);
		HW_LOG(INFO, HW_LOG_MOD,
		       "%s: segment %" PRId64 ": %" PRId64 " zero bytes (block padding or "
		       "preallocation) after the last batch at position %" PRId64 ": trimmed",
		       log->dir, s->base, s->size - cut, cut);
		if (ftruncate(s->fd, cut) != 0)
			return -errno;
		s->size = s->written = s->synced = cut;
		return 0;
	}
	if (cut < s->size)
		HW_LOG_CTR_INC(log, CORRUPT_BATCHES, 1);
	HW_LOG_CTR_INC(log, RECOVERY_TRUNCATED_BYTES, s->size - cut);
	if (cut < s->size)
		HW_LOG(WARN, HW_LOG_MOD,
		       "%s: segment %" PRId64 ": torn or corrupt batch at position %" PRId64
		       " (file size %" PRId64 "): truncating, %zu later segment(s) deleted",
		       log->dir, s->base, cut, s->size, log->nsegs - i - 1);
	if (cut < s->size && ftruncate(s->fd, cut) != 0)
		return -errno;
	s->size = s->written = s->synced = cut;
	for (size_t j = i + 1; j < log->nsegs; j++) {
		hw_log_seg_unlink(log, log->segs[j]);
		hw_log_seg_free(log->segs[j]);
		log->segs[j] = NULL;
		HW_LOG_CTR_INC(log, RECOVERY_DELETED_SEGMENTS, 1);
	}
	log->nsegs = i + 1;
	return 1;
}

/* Recovery phase 2: segment i, r being the segment holding the recovery
 * point rp. Sets *first_scanned to i if this is the first segment scanned.
 * Returns 0 to go on with the next segment, 1 when the log ends at this
 * segment, negative errno on an I/O failure. */
static int recover_segment(hw_log *log, size_t i, size_t r, int64_t rp, int rebuild_epochs,
			   size_t *first_scanned)
{
	hw_log_seg *s = log->segs[i];
	int64_t from = 0;
	int rc;
	if (i <= r && s->size > 0) {
		rc = recover_trusted_prefix(log, i, r, rp, rebuild_epochs, &from);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
	if (from == 0) {
		s->idx_n = 0;
		s->bytes_since_index = 0;
	}
	if (rebuild_epochs && from > 0 && (rc = walk_epochs(log, s, 0, from)) < 0)
		return rc;
	if (*first_scanned == log->nsegs)
		*first_scanned = i;
	int64_t cut;
	if ((rc = scan_segment(log, s, from, &cut)) < 0)
		return rc;
	if (cut < 0 && i + 1 < log->nsegs && log->segs[i + 1]->base != s->next_offset) {
		/* The next segment does not continue this one: bytes at the
		 * end of this one never reached the file (a roll happened
		 * before their write completed). Offsets must stay
		 * contiguous, so the log ends here. */
		HW_LOG(WARN, HW_LOG_MOD,
		       "%s: segment %" PRId64 " ends at offset %" PRId64 " but the next starts at "
		       "%" PRId64 ": %zu later segment(s) deleted",
		       log->dir, s->base, s->next_offset, log->segs[i + 1]->base, log->nsegs - i - 1);
		cut = s->size;
	}
	return cut >= 0 ? recover_cut(log, i, cut) : 0;
}

/* Recovery phase 3: the LEO from the last segment, the epoch cache cut to
 * [log start, LEO) and written, the scanned segments made stable (rebuilt
 * indexes of sealed ones saved), the recovery point at the LEO: 0, or
 * negative errno. erc is how reading the epoch checkpoint went. */
static int recover_finish(hw_log *log, size_t first_scanned, int rebuild_epochs, int erc)
{
	int rc;
	for (size_t i = 0; i < log->nsegs; i++)
		log->segs[i]->sealed = i + 1 < log->nsegs;
	hw_log_seg *last = log->segs[log->nsegs - 1];
	log->leo = last->next_offset;
	log->written_offset = log->durable = log->leo;
	int64_t start = log->segs[0]->base;

	hw_epoch_truncate_from_end(&log->epochs, log->leo);
	if (log->epochs.n && log->epochs.v[0].start_offset < start)
		hw_epoch_truncate_from_start(&log->epochs, start);
	if (rebuild_epochs && (erc == -EBADMSG || log->leo > start))
		HW_LOG_CTR_INC(log, EPOCH_REBUILDS, 1);
	if ((rc = hw_log_write_epochs(log)) < 0)
		return rc;

	/* Everything recovered is made stable now, so the next open starts
	 * scanning at the LEO; rebuilt indexes of sealed segments are saved. */
	for (size_t i = first_scanned; i < log->nsegs; i++) {
		hw_log_seg *s = log->segs[i];
		if (fdatasync(s->fd) != 0)
			return -errno;
		s->synced = s->size;
		if (s->sealed && (rc = hw_log_seg_write_indexes(log, s)) < 0)
			return rc;
	}
	log->recovery_point = log->leo;
	/* the active segment grows into preallocated space again (a trim
	 * at close or by recovery took it away) */
	hw_log_seg_preallocate(log, log->segs[log->nsegs - 1], 0);
	return hw_log_write_recovery_point(log);
}

int hw_log_recover(hw_log *log)
{
	char p[4096];
	int rc = hw_log_path(log, -1, EPOCH_FILE, p, sizeof(p));
	if (rc)
		return rc;
	int erc = hw_epoch_read_checkpoint(&log->epochs, p);
	int rebuild_epochs = erc != 0;
	if (erc == -EBADMSG)
		HW_LOG(WARN, HW_LOG_MOD, "%s: malformed %s: rebuilding from batches", log->dir, EPOCH_FILE);
	int64_t rp = read_recovery_point(log);
	if ((rc = recover_load_segments(log)) < 0)
		return rc;
	size_t r = 0; /* the segment holding the recovery point */
	for (size_t i = 0; i < log->nsegs; i++)
		if (log->segs[i]->base <= rp)
			r = i;
	size_t first_scanned = log->nsegs;
	for (size_t i = 0; i < log->nsegs; i++) {
		rc = recover_segment(log, i, r, rp, rebuild_epochs, &first_scanned);
		if (rc < 0)
			return rc;
		if (rc == 1)
			break;
	}
	return recover_finish(log, first_scanned, rebuild_epochs, erc);
}
