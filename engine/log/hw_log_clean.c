/* hw_log_clean.c — the compaction pass of one log and its crash-safe
 * segment swap (design note in hw_log_clean.h; rules in
 * docs/compaction.md). Phases of a pass, as Kafka's Cleaner.clean:
 *   cleanable_range  whole closed segments below the bound (HW) and older
 *                    than min.compaction.lag.ms (LogCleanerManager's
 *                    firstUncleanableDirtyOffset)
 *   is_due           dirty ratio / max.compaction.lag.ms / delete horizon
 *   build_map        key -> latest offset over the dirty part
 *                    (Cleaner.buildOffsetMap), and each producer's last
 *                    batch (kept even if empty, as Kafka's RETAIN_EMPTY)
 *   clean_group      rewrite a group of segments (Cleaner.cleanSegments,
 *                    groupSegmentsBySize) and swap it in
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_file.h"
#include "hw_logging.h"
#include "hw_log_clean.h"
#include "hw_log_clean_int.h"
#include "hw_log_int.h"

#define CHECKPOINT "cleaner-offset-checkpoint"
#define READ_WINDOW (1u << 20)

/* ---- cleanup.policy -------------------------------------------------------- */

int hw_log_cleanup_policy_parse(const char *s)
{
	if (!s)
		return -EINVAL;
	int bits = 0;
	while (*s) {
		while (*s == ' ' || *s == ',')
			s++;
		size_t n = strcspn(s, ", ");
		if (n == 6 && strncasecmp(s, "delete", 6) == 0)
			bits |= HW_LOG_CLEANUP_DELETE;
		else if (n == 7 && strncasecmp(s, "compact", 7) == 0)
			bits |= HW_LOG_CLEANUP_COMPACT;
		else if (n)
			return -EINVAL;
		s += n;
	}
	return bits ? bits : -EINVAL;
}

const char *hw_log_cleanup_policy_name(int bits)
{
	switch (bits) {
	case HW_LOG_CLEANUP_COMPACT: return "compact";
	case HW_LOG_CLEANUP_COMPACT | HW_LOG_CLEANUP_DELETE: return "compact,delete";
	default: return "delete";
	}
}

void hw_log_clean_set_crash_step(hw_log *log, int step) { log->clean_crash_step = step; }

/* ---- cleaner-offset-checkpoint ----------------------------------------------- */

int64_t hw_log_clean_first_dirty(hw_log *log)
{
	if (log->clean_first_dirty < 0) {
		char p[4096], buf[32] = { 0 };
		log->clean_first_dirty = 0;
		if (hw_log_path(log, -1, CHECKPOINT, p, sizeof(p)) == 0) {
			int fd = open(p, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				ssize_t n = read(fd, buf, sizeof(buf) - 1);
				close(fd);
				char *e;
				long long v = n > 0 ? strtoll(buf, &e, 10) : -1;
				if (n > 0 && e != buf && v >= 0)
					log->clean_first_dirty = v;
			}
		}
	}
	/* below the log start (retention), or past the LEO (the log was
	 * truncated under it, or the checkpoint is stale): from the start, as
	 * Kafka's LogCleanerManager resets an invalid checkpoint */
	int64_t start = hw_log_start_offset(log);
	if (log->clean_first_dirty < start || log->clean_first_dirty > log->leo)
		log->clean_first_dirty = start;
	return log->clean_first_dirty;
}

static int write_first_dirty(hw_log *log, int64_t off)
{
	char p[4096], buf[32];
	log->clean_first_dirty = off;
	int rc = hw_log_path(log, -1, CHECKPOINT, p, sizeof(p));
	if (rc)
		return rc;
	int n = snprintf(buf, sizeof(buf), "%" PRId64 "\n", off);
	return hw_file_replace(p, buf, (size_t)n, 0);
}

/* ---- reading a segment batch by batch ------------------------------------------ */

typedef struct seg_rd {
	hw_log *log;
	hw_log_seg *seg;
	int64_t pos;
	uint8_t *buf;
	size_t cap, len;
	int64_t buf_pos;
} seg_rd;

static int rd_ensure(seg_rd *r, int64_t pos, size_t n)
{
	if (pos >= r->buf_pos && pos + (int64_t)n <= r->buf_pos + (int64_t)r->len)
		return 0;
	size_t want = n > READ_WINDOW ? n : READ_WINDOW;
	if ((int64_t)want > r->seg->size - pos)
		want = (size_t)(r->seg->size - pos);
	if (want < n)
		return -EIO;
	if (want > r->cap) {
		uint8_t *b = realloc(r->buf, want);
		if (!b)
			return -ENOMEM;
		r->buf = b;
		r->cap = want;
	}
	int rc = hw_log_seg_pread(r->log, r->seg, pos, r->buf, want);
	if (rc < 0)
		return rc;
	r->buf_pos = pos;
	r->len = want;
	return 0;
}

/* The next whole batch of the segment: 1 (*p, *h set), 0 at its end,
 * -EBADMSG (bad framing), -EIO, -ENOMEM. */
static int rd_next(seg_rd *r, const uint8_t **p, hw_lb_hdr *h)
{
	if (r->pos + HW_LB_PROBE > r->seg->size)
		return 0;
	int rc = rd_ensure(r, r->pos, HW_LB_PROBE);
	if (rc < 0)
		return rc;
	if (hw_lb_probe(r->buf + (r->pos - r->buf_pos), h) < 0 || r->pos + h->size > r->seg->size)
		return -EBADMSG;
	if ((rc = rd_ensure(r, r->pos, h->size)) < 0)
		return rc;
	*p = r->buf + (r->pos - r->buf_pos);
	r->pos += h->size;
	return 1;
}

static void rd_start(seg_rd *r, hw_log *log, hw_log_seg *seg)
{
	r->log = log;
	r->seg = seg;
	r->pos = 0;
	r->len = 0;
	r->buf_pos = 0;
}

/* ---- the pass ------------------------------------------------------------------ */

typedef struct pass {
	hw_log *log;
	int64_t now;
	hw_clean_map *keys;   /* key -> latest offset in the dirty part */
	hw_clean_map *pids;   /* producer id (8 bytes) -> last offset of its last batch */
	seg_rd rd;
	hw_clean_buf out;
	hw_log_clean_result *res;
	int64_t horizon;      /* earliest horizon of a kept tombstone */
} pass;

static int is_latest(void *ctx, const uint8_t *key, int32_t len, int64_t offset)
{
	pass *ps = ctx;
	return offset >= hw_clean_map_get(ps->keys, key, (size_t)len);
}

/* Number of leading closed segments that may be cleaned: each ends (the
 * next one's base) at or below max_offset and its newest batch is at
 * least min.compaction.lag.ms old. */
static size_t cleanable_range(hw_log *log, int64_t now, int64_t max_offset)
{
	size_t k = 0;
	while (k + 1 < log->nsegs) {
		const hw_log_seg *s = log->segs[k];
		if (log->segs[k + 1]->base > max_offset)
			break;
		if (log->cfg.min_compaction_lag_ms > 0 && s->max_ts >= 0 &&
		    now - s->max_ts < log->cfg.min_compaction_lag_ms)
			break;
		k++;
	}
	return k;
}

/* Index of the segment holding offset off (the first dirty one). */
static size_t seg_of(const hw_log *log, int64_t off, size_t end_k)
{
	size_t d = 0;
	while (d < end_k && log->segs[d + 1]->base <= off)
		d++;
	return d;
}

static int is_due(hw_log *log, int64_t now, size_t d, size_t end_k, int force, double *ratio)
{
	int64_t clean = 0, dirty = 0;
	for (size_t k = 0; k < end_k; k++)
		*(k < d ? &clean : &dirty) += log->segs[k]->size;
	*ratio = clean + dirty > 0 ? (double)dirty / (double)(clean + dirty) : 0;
	if (force || log->clean_horizon <= now)
		return 1;
	if (dirty == 0)
		return 0;
	if (*ratio >= log->cfg.min_cleanable_dirty_ratio)
		return 1;
	/* max.compaction.lag.ms: a dirty segment waited too long */
	const hw_log_seg *s = log->segs[d];
	return log->cfg.max_compaction_lag_ms < INT64_MAX && s->first_ts >= 0 &&
	       now - s->first_ts > log->cfg.max_compaction_lag_ms;
}

/* Producer ids' last batches over the whole log (headers only). */
static int scan_producers(pass *ps)
{
	hw_log *log = ps->log;
	for (size_t k = 0; k < log->nsegs; k++) {
		hw_log_seg *s = log->segs[k];
		uint8_t h[HW_LB_PROBE];
		for (int64_t pos = 0; pos + HW_LB_PROBE <= s->size;) {
			hw_lb_hdr bh;
			int rc = hw_log_seg_pread(log, s, pos, h, sizeof(h));
			if (rc < 0)
				return rc;
			if (hw_lb_probe(h, &bh) < 0)
				return -EBADMSG;
			int64_t pid = (int64_t)hw_be64_get(h + HW_BATCH_OFF_PRODUCER_ID);
			if (pid >= 0 && (rc = hw_clean_map_put(ps->pids, h + HW_BATCH_OFF_PRODUCER_ID, 8, bh.last)) < 0)
				return rc == -ENOSPC ? -ENOMEM : rc;
			pos += bh.size;
		}
	}
	return 0;
}

/* Map every keyed record of segments [d, *end_k) to its offset; a full
 * map ends the range early at a segment boundary (at least one segment). */
static int build_map(pass *ps, size_t d, size_t *end_k)
{
	hw_log *log = ps->log;
	for (size_t k = d; k < *end_k; k++) {
		rd_start(&ps->rd, log, log->segs[k]);
		const uint8_t *b;
		hw_lb_hdr h;
		int rc;
		while ((rc = rd_next(&ps->rd, &b, &h)) == 1) {
			hw_record_iter it;
			hw_record r;
			if (hw_record_iter_init(&it, b, h.size, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED) < 0)
				return -EBADMSG;
			if (hw_batch_is_control(&it.hdr))
				continue;
			while ((rc = hw_record_iter_next(&it, &r)) == 1) {
				if (!r.key)
					continue;
				rc = hw_clean_map_put(ps->keys, r.key, (size_t)r.key_len, r.offset);
				if (rc == -ENOSPC && k > d) {
					*end_k = k; /* this segment waits for the next pass */
					return 0;
				}
				if (rc == -ENOSPC)
					continue; /* the first segment must fit: kept as is */
				if (rc < 0)
					return rc;
			}
			if (rc < 0)
				return -EBADMSG;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- one group: write, commit, swap ------------------------------------------------ */

static int ext_path(hw_log *log, int64_t base, const char *ext, char *p)
{
	return hw_log_path(log, base, ext, p, 4096);
}

/* Add batch bytes to the new segment ns (file fd at ns->size). */
static int emit(hw_log *log, hw_log_seg *ns, int fd, const uint8_t *p, uint32_t n)
{
	hw_lb_hdr h;
	if (hw_lb_probe(p, &h) < 0)
		return -EBADMSG;
	int rc;
	if (ns->bytes_since_index > log->cfg.index_interval_bytes && ns->idx_n < ns->idx_max &&
	    (rc = hw_log_seg_index_add(log, ns, h.last, ns->size)) < 0)
		return rc;
	if ((rc = hw_file_write_all(fd, p, n)) < 0)
		return rc;
	ns->bytes_since_index += n;
	if (h.max_ts > ns->max_ts) {
		ns->max_ts = h.max_ts;
		ns->max_ts_rel = (int32_t)(h.last - ns->base);
	}
	if (ns->size == 0)
		ns->first_ts = h.max_ts;
	ns->size += n;
	ns->next_offset = h.last + 1;
	return 0;
}

/* A run of dropped batches, written as one filler when the next batch
 * that stays (or the group's end) comes. */
typedef struct run {
	int64_t base, last, ts;
	int32_t epoch;
	int open;
} run;

static void run_add(run *r, const hw_lb_hdr *h)
{
	if (!r->open) {
		r->open = 1;
		r->base = h->base;
		r->epoch = h->epoch;
		r->ts = -1;
	}
	r->last = h->last;
	if (h->max_ts > r->ts)
		r->ts = h->max_ts;
}

static int run_flush(hw_log *log, run *r, hw_log_seg *ns, int fd)
{
	if (!r->open)
		return 0;
	uint8_t f[HW_BATCH_HEADER_SIZE];
	hw_clean_filler(f, r->base, r->last, r->epoch, r->ts);
	r->open = 0;
	return emit(log, ns, fd, f, sizeof(f));
}

/* Filter every batch of segments [i, j) into the open file fd as ns.
 * *changed: some batch was not copied as it was. Dropped batches (and
 * fillers of earlier passes) become one filler per run, so the new
 * segment covers every offset of the old ones: the log stays contiguous,
 * which recovery checks (a baseOffset is outside the CRC). */
static int write_group(pass *ps, size_t i, size_t j, hw_log_seg *ns, int fd, int *changed)
{
	hw_log *log = ps->log;
	run dropped = { 0 };
	hw_log_clean_result *res = ps->res;
	for (size_t k = i; k < j; k++) {
		rd_start(&ps->rd, log, log->segs[k]);
		const uint8_t *b;
		hw_lb_hdr h;
		int rc;
		while ((rc = rd_next(&ps->rd, &b, &h)) == 1) {
			uint8_t pid[8];
			memcpy(pid, b + HW_BATCH_OFF_PRODUCER_ID, 8);
			int has_pid = (int64_t)hw_be64_get(pid) >= 0;
			hw_clean_filter f = {
				.now_ms = ps->now, .delete_retention_ms = log->cfg.delete_retention_ms,
				.latest = is_latest, .ctx = ps,
				.retain_empty = h.last + 1 == log->leo ||
						(has_pid && hw_clean_map_get(ps->pids, pid, 8) == h.last),
			};
			hw_clean_outcome o;
			if ((rc = hw_clean_batch(b, h.size, &f, &ps->out, &o)) < 0)
				return rc == -ENOMEM ? rc : -EBADMSG;
			res->records_removed += o.removed;
			res->tombstones_removed += o.tombstones_removed;
			HW_LOG_CTR_INC(log, CLEAN_RECORDS_REMOVED, o.removed);
			HW_LOG_CTR_INC(log, CLEAN_TOMBSTONES_REMOVED, o.tombstones_removed);
			HW_LOG_CTR_INC(log, CLEAN_UNKEYED_REMOVED, o.unkeyed);
			if (o.horizon >= 0 && o.horizon < ps->horizon)
				ps->horizon = o.horizon;
			int filler = h.count == 0 && !has_pid && o.action == HW_CLEAN_DROP;
			if (o.action != HW_CLEAN_DROP && (rc = run_flush(log, &dropped, ns, fd)) < 0)
				return rc;
			switch (o.action) {
			case HW_CLEAN_COPY:
				res->batches_copied++;
				rc = emit(log, ns, fd, b, h.size);
				break;
			case HW_CLEAN_REWRITE:
				res->batches_rewritten++;
				HW_LOG_CTR_INC(log, CLEAN_BATCHES_REWRITTEN, 1);
				*changed = 1;
				rc = emit(log, ns, fd, ps->out.p, (uint32_t)o.len);
				break;
			case HW_CLEAN_DROP:
				if (!filler) {
					res->batches_dropped++;
					HW_LOG_CTR_INC(log, CLEAN_BATCHES_DROPPED, 1);
				}
				/* a filler that merges with its neighbours changes the file */
				if (!filler || dropped.open)
					*changed = 1;
				run_add(&dropped, &h);
				rc = 0;
				break;
			}
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return rc;
	}
	return run_flush(log, &dropped, ns, fd);
}

/* The cleaned segment of `base`: sealed, files opened by the swap. */
static hw_log_seg *seg_new(hw_log *log, int64_t base)
{
	hw_log_seg *s = hw_log_seg_alloc(log, base);
	if (s)
		s->sealed = 1;
	return s;
}

/* A test's simulated crash after step `step` of a swap. */
static int crash_at(hw_log *log, int step)
{
	if (log->clean_crash_step != step)
		return 0;
	HW_LOG(WARN, HW_LOG_MOD, "%s: cleaner stops after swap step %d (test hook)", log->dir, step);
	return 1;
}

/* Segments [i, j) -> one cleaned segment with base segs[i]->base,
 * swapped in. 0 (done, or nothing changed), -EINTR (test crash), -errno. */
static int clean_group(pass *ps, size_t i, size_t j)
{
	hw_log *log = ps->log;
	int64_t base = log->segs[i]->base, end = log->segs[j]->base;
	char cleaned[4096], swap[4096], marker[4096], final[4096];
	int rc;
	if ((rc = ext_path(log, base, ".log.cleaned", cleaned)) || (rc = ext_path(log, base, ".log.swap", swap)) ||
	    (rc = ext_path(log, base, ".swap-end", marker)) || (rc = ext_path(log, base, ".log", final)))
		return rc;
	hw_log_seg *ns = seg_new(log, base);
	if (!ns)
		return -ENOMEM;
	ns->fd = open(cleaned, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (ns->fd < 0) {
		rc = -errno;
		free(ns);
		return rc;
	}
	int changed = j - i > 1;
	rc = write_group(ps, i, j, ns, ns->fd, &changed);
	if (!rc && !changed) {
		hw_log_seg_free(ns); /* every batch stayed: the segment stays */
		unlink(cleaned);
		return 0;
	}
	if (!rc && fdatasync(ns->fd) != 0)
		rc = -errno;
	if (rc) {
		hw_log_seg_free(ns);
		unlink(cleaned);
		return rc;
	}
	ns->written = ns->synced = ns->size;
	if (crash_at(log, 1))
		return -EINTR;
	/* the commit: the end of what the swap replaces, then the swap itself */
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRId64 "\n", end);
	if ((rc = hw_file_replace(marker, buf, (size_t)n, 1)) < 0) {
		hw_log_seg_free(ns);
		unlink(cleaned);
		return rc;
	}
	if (crash_at(log, 2))
		return -EINTR;
	if (rename(cleaned, swap) != 0) {
		rc = -errno;
		hw_log_seg_free(ns);
		unlink(cleaned);
		unlink(marker);
		return rc;
	}
	hw_log_fsync_dir(log);
	if (crash_at(log, 3))
		return -EINTR;
	/* committed: from here a crash is finished by hw_log_clean_recover */
	int64_t before = 0;
	for (size_t k = i; k < j; k++) {
		hw_log_seg *s = log->segs[k];
		before += s->size;
		hw_log_chunks_cut(log, s, 0);
		if (k > i) {
			hw_log_seg_unlink(log, s);
		} else {
			char p[4096];
			if (ext_path(log, base, ".index", p) == 0)
				unlink(p);
			if (ext_path(log, base, ".timeindex", p) == 0)
				unlink(p);
		}
	}
	if (crash_at(log, 4))
		return -EINTR;
	if (rename(swap, final) != 0) {
		rc = -errno;
		HW_LOG(ERROR, HW_LOG_MOD, "%s: cleaner: rename %s: %s", log->dir, swap, strerror(-rc));
		hw_log_seg_free(ns);
		hw_log_set_state(log, HW_LOG_STATE_FAILED, "cleaner swap failed");
		return -EIO;
	}
	hw_log_fsync_dir(log);
	unlink(marker);
	hw_log_seg_write_indexes(log, ns);
	for (size_t k = i; k < j; k++)
		hw_log_seg_free(log->segs[k]);
	log->segs[i] = ns;
	memmove(log->segs + i + 1, log->segs + j, (log->nsegs - j) * sizeof(*log->segs));
	log->nsegs -= j - i - 1;
	HW_LOG_CTR_INC(log, CLEAN_BYTES_FREED, before - ns->size);
	return 0;
}

/* Groups of consecutive segments of [0, end_k) whose sizes add up to at
 * most segment.bytes (Kafka's groupSegmentsBySize), each cleaned. */
static int clean_range(pass *ps, size_t *end_k)
{
	hw_log *log = ps->log;
	for (size_t i = 0; i < *end_k;) {
		size_t j = i + 1;
		int64_t sum = log->segs[i]->size;
		while (j < *end_k && sum + log->segs[j]->size <= log->cfg.segment_bytes &&
		       log->segs[j + 1]->base - log->segs[i]->base <= INT32_MAX) {
			sum += log->segs[j]->size;
			j++;
		}
		size_t before = log->nsegs;
		int rc = clean_group(ps, i, j);
		if (rc < 0)
			return rc;
		*end_k -= before - log->nsegs;
		i++;
	}
	return 0;
}

int hw_log_clean(hw_log *log, int64_t now, int64_t max_offset, int force, hw_log_clean_result *res)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	hw_log_clean_result local;
	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (log->state == HW_LOG_STATE_FAILED)
		return -EIO;
	if (!(log->cfg.cleanup_policy & HW_LOG_CLEANUP_COMPACT))
		return 0;
	size_t end_k = cleanable_range(log, now, max_offset);
	if (end_k == 0)
		return 0;
	int64_t first_dirty = hw_log_clean_first_dirty(log);
	size_t d = seg_of(log, first_dirty, end_k);
	if (!is_due(log, now, d, end_k, force, &res->dirty_ratio))
		return 0;
	/* no write may be in flight on a segment the swap frees */
	if (hw_log_drain(log) < 0)
		return -EIO;
	pass ps = { .log = log, .now = now, .res = res, .horizon = INT64_MAX };
	ps.keys = hw_clean_map_new((size_t)log->cfg.cleaner_dedupe_bytes);
	ps.pids = hw_clean_map_new(SIZE_MAX);
	int rc = ps.keys && ps.pids ? 0 : -ENOMEM;
	res->first_dirty = first_dirty;
	res->segments_before = (int)end_k;
	for (size_t k = 0; k < end_k; k++)
		res->bytes_before += log->segs[k]->size;
	if (!rc)
		rc = build_map(&ps, d < end_k ? d : end_k, &end_k);
	if (!rc)
		rc = scan_producers(&ps);
	int64_t end = log->segs[end_k]->base;
	if (!rc)
		rc = clean_range(&ps, &end_k);
	hw_clean_map_free(ps.keys);
	hw_clean_map_free(ps.pids);
	free(ps.rd.buf);
	free(ps.out.p);
	if (rc == -EINTR)
		return rc; /* the test hook's crash: nothing more may happen */
	if (rc < 0) {
		HW_LOG_CTR_INC(log, CLEAN_ERRORS, 1);
		HW_LOG(ERROR, HW_LOG_MOD, "%s: cleaning stopped: %s", log->dir, strerror(-rc));
		return rc == -EBADMSG || rc == -ENOMEM ? rc : -EIO;
	}
	res->end = end;
	res->segments_after = (int)end_k;
	for (size_t k = 0; k < end_k; k++)
		res->bytes_after += log->segs[k]->size;
	log->clean_horizon = ps.horizon;
	if (end > first_dirty)
		write_first_dirty(log, end); /* a lower bound (HW) this time leaves it */
	HW_LOG_CTR_INC(log, CLEAN_RUNS, 1);
	HW_LOG(INFO, HW_LOG_MOD,
	       "%s: cleaned [%" PRId64 ", %" PRId64 ") dirty from %" PRId64 " (ratio %.2f): %" PRId64
	       " -> %" PRId64 " bytes, %d -> %d segment(s), %" PRId64 " record(s) removed (%" PRId64
	       " tombstones)",
	       log->dir, hw_log_start_offset(log), end, first_dirty, res->dirty_ratio, res->bytes_before,
	       res->bytes_after, res->segments_before, res->segments_after, res->records_removed,
	       res->tombstones_removed);
	return 1;
}

/* ---- recovery of a half-done swap ----------------------------------------------------- */

static int parse_base(const char *name, size_t digits_end, int64_t *base)
{
	for (size_t i = 0; i < digits_end; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	*base = strtoll(name, NULL, 10);
	return 1;
}

/* `<base>.log.swap` with its `<base>.swap-end`: delete the segments it
 * replaces, then rename it over `<base>.log`. */
static int finish_swap(hw_log *log, int64_t base)
{
	char swap[4096], marker[4096], p[4096], buf[32] = { 0 };
	int rc;
	if ((rc = ext_path(log, base, ".log.swap", swap)) || (rc = ext_path(log, base, ".swap-end", marker)))
		return rc;
	int fd = open(marker, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	char *e;
	long long end = n > 0 ? strtoll(buf, &e, 10) : -1;
	if (n <= 0 || e == buf || end <= base) {
		/* no commit record: the old segments are whole, the swap is not */
		HW_LOG(WARN, HW_LOG_MOD, "%s: discarding %020" PRId64 ".log.swap without its end", log->dir, base);
		unlink(swap);
		unlink(marker);
		return 0;
	}
	DIR *d = opendir(log->dir);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int64_t b;
		size_t len = strlen(de->d_name);
		if (len < 21 || de->d_name[20] != '.' || !parse_base(de->d_name, 20, &b) || b <= base || b >= end)
			continue;
		const char *ext = de->d_name + 20;
		if (!strcmp(ext, ".log") || !strcmp(ext, ".index") || !strcmp(ext, ".timeindex"))
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	if (ext_path(log, base, ".index", p) == 0)
		unlink(p);
	if (ext_path(log, base, ".timeindex", p) == 0)
		unlink(p);
	if ((rc = ext_path(log, base, ".log", p)) != 0)
		return rc;
	if (rename(swap, p) != 0)
		return -errno;
	hw_log_fsync_dir(log);
	unlink(marker);
	HW_LOG(INFO, HW_LOG_MOD, "%s: finished the swap of cleaned segment %" PRId64 " (up to %lld)", log->dir,
	       base, end);
	return 0;
}

int hw_log_clean_recover(hw_log *log)
{
	DIR *d = opendir(log->dir);
	if (!d)
		return -errno;
	int64_t swaps[16];
	size_t nswaps = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int64_t b;
		size_t len = strlen(de->d_name);
		if (len < 21 || de->d_name[20] != '.' || !parse_base(de->d_name, 20, &b))
			continue;
		const char *ext = de->d_name + 20;
		if (!strcmp(ext, ".log.cleaned")) {
			/* not committed: the segments it would replace are intact */
			unlinkat(dirfd(d), de->d_name, 0);
			HW_LOG_CTR_INC(log, CLEAN_SWAPS_RECOVERED, 1);
		} else if (!strcmp(ext, ".log.swap") && nswaps < sizeof(swaps) / sizeof(*swaps)) {
			swaps[nswaps++] = b;
		}
	}
	closedir(d);
	for (size_t i = 0; i < nswaps && !rc; i++) {
		rc = finish_swap(log, swaps[i]);
		HW_LOG_CTR_INC(log, CLEAN_SWAPS_RECOVERED, 1);
	}
	/* a swap-end whose swap never happened (or was finished above) */
	if ((d = opendir(log->dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			int64_t b;
			if (strlen(de->d_name) == 29 && !strcmp(de->d_name + 20, ".swap-end") &&
			    parse_base(de->d_name, 20, &b)) {
				char p[4096];
				if (ext_path(log, b, ".log.swap", p) == 0 && access(p, F_OK) != 0)
					unlinkat(dirfd(d), de->d_name, 0);
			}
		}
		closedir(d);
	}
	return rc;
}
