/* hw_log.c — the segmented log's operations: open/close, append, read,
 * truncation, retention, and the hw_store view the engine uses.
 *
 * Design note. The log is a sorted array of segments; the last is active.
 * Append validates the whole call first (framing, CRC, offsets contiguous
 * from the LEO) so a rejected call changes nothing, then per batch: roll if
 * the batch would not fit (log.segment.bytes), is too old for the segment
 * (log.roll.ms, measured between batch timestamps as Kafka does), or the
 * index is full; add a sparse index entry when more than
 * log.index.interval.bytes were appended since the last; copy into the tail
 * buffer; feed the epoch cache. The I/O itself happens in poll (hw_log_io.c).
 *
 * Reads locate the batch holding the start offset (index, then header walk,
 * short-cut by a per-segment hint left by the previous read, which is where
 * a follower's next fetch starts) and return whole batches from one place:
 * a tail-buffer chunk (zero-copy) or one pread into a fresh buffer.
 *
 * Truncation and retention first drain in-flight I/O (they are rare, and a
 * write must never land after the ftruncate/unlink that undoes it).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_file.h"
#include "hw_logging.h"
#include "hw_log_clean.h"
#include "hw_log_clean_int.h"
#include "hw_log_int.h"

/* ---- names tables ---------------------------------------------------------- */

static const char *const flush_names[] = {
#define X(n) #n,
	HW_LOG_FLUSH_POLICY_TABLE(X)
#undef X
};
static const char *const state_names[] = {
#define X(n) #n,
	HW_LOG_STATE_TABLE(X)
#undef X
};
static const char *const counter_names[] = {
#define X(n, ...) #n,
	HW_LOG_COUNTER_TABLE(X)
#undef X
};

const char *hw_log_flush_policy_name(int p)
{
	return p >= 0 && p < HW_LOG_FLUSH__COUNT ? flush_names[p] : "UNKNOWN";
}

int hw_log_flush_policy_parse(const char *name)
{
	for (int i = 0; name && i < HW_LOG_FLUSH__COUNT; i++)
		if (strcasecmp(name, flush_names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *hw_log_state_name(int s)
{
	return s >= 0 && s < (int)(sizeof(state_names) / sizeof(*state_names)) ? state_names[s]
										   : "UNKNOWN";
}

const char *hw_log_counter_name(int c)
{
	return c >= 0 && c < HW_LOG_CTR__COUNT ? counter_names[c] : "UNKNOWN";
}

int64_t hw_log_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void hw_log_set_state(hw_log *log, hw_log_state st, const char *why)
{
	if (log->state == st)
		return;
	HW_LOG(INFO, HW_LOG_MOD, "%s: state %s -> %s (%s)", log->dir, hw_log_state_name(log->state),
	       hw_log_state_name(st), why);
	log->state = st;
}

void hw_log_config_default(hw_log_config *c)
{
	memset(c, 0, sizeof(*c));
	c->segment_bytes = 1LL << 30;
	c->roll_ms = 7LL * 24 * 3600 * 1000;
	c->index_interval_bytes = 4096;
	c->index_size_max_bytes = 10 * 1024 * 1024;
	c->retention_bytes = -1;
	c->retention_ms = 7LL * 24 * 3600 * 1000;
	c->flush_messages = INT64_MAX;
	c->flush_ms = INT64_MAX;
	c->flush_policy = HW_LOG_FLUSH_PAGE_CACHE;
	c->chunk_bytes = 128u << 10;
	c->tail_buffer_bytes = 512u << 10;
	c->ring_entries = 256;
	c->verify_crc_on_append = 1;
	c->owner_reactor = HW_OWNER_ANY;
	c->async_writes = 0;
	c->inline_write_max_bytes = 64u << 10;
	c->writeback_window_bytes = 16u << 20;
	c->direct_io = HW_LOG_DIRECT_AUTO;
	c->direct_auto_batch_bytes = 32u << 10;
	c->preallocate_step_bytes = 32u << 20;
	c->cleanup_policy = HW_LOG_CLEANUP_DELETE;
	c->min_cleanable_dirty_ratio = 0.5;
	c->delete_retention_ms = 86400000;
	c->min_compaction_lag_ms = 0;
	c->max_compaction_lag_ms = INT64_MAX;
	c->cleaner_dedupe_bytes = 64LL << 20;
}

static int config_ok(const hw_log_config *c)
{
	/* Kafka's bounds: log.segment.bytes >= 14 (LegacyRecord.RECORD_OVERHEAD_V0;
	 * no batch fits, every append is EMSGSIZE, as Kafka's), and
	 * log.index.size.max.bytes >= 4 (no 8-byte entry fits: one batch per
	 * segment, as Kafka rolls on a full index) */
	return c->segment_bytes >= 14 && c->segment_bytes <= INT32_MAX && c->roll_ms > 0 &&
	       c->index_interval_bytes >= 0 && c->index_size_max_bytes >= 4 &&
	       c->flush_messages >= 1 && c->flush_ms >= 0 && c->flush_policy >= 0 &&
	       c->flush_policy < HW_LOG_FLUSH__COUNT && c->chunk_bytes >= 4096 &&
	       c->chunk_bytes <= (1u << 30) && c->direct_io >= 0 && c->direct_io < HW_LOG_DIRECT__COUNT &&
	       c->direct_auto_batch_bytes >= 1 && c->ring_entries >= 4 && c->ring_entries <= 4096 &&
	       (c->writeback_window_bytes == 0 || (c->writeback_window_bytes >= 65536 &&
					       c->writeback_window_bytes <= (1u << 30))) &&
	       c->cleanup_policy >= 1 && c->cleanup_policy <= 3 &&
	       c->min_cleanable_dirty_ratio >= 0 && c->min_cleanable_dirty_ratio <= 1 &&
	       c->delete_retention_ms >= 0 && c->min_compaction_lag_ms >= 0 &&
	       c->max_compaction_lag_ms >= 1 && c->cleaner_dedupe_bytes >= 4096;
}

/* ---- accessors ---------------------------------------------------------------- */

int64_t hw_log_end_offset(const hw_log *log) { return log->leo; }
int64_t hw_log_start_offset(const hw_log *log) { return log->segs[0]->base; }
int64_t hw_log_durable_end_offset(const hw_log *log) { return log->durable; }
int64_t hw_log_recovery_point(const hw_log *log) { return log->recovery_point; }
int hw_log_writes_inline(const hw_log *log) { return log->inline_max > 0; }
uint32_t hw_log_direct_align(const hw_log *log) { return log->dio_align; }
int hw_log_writes_direct(const hw_log *log) { return log->dio_want; }
size_t hw_log_segment_count(const hw_log *log) { return log->nsegs; }
hw_log_state hw_log_get_state(const hw_log *log) { return log->state; }
const hw_epoch_cache *hw_log_epochs(const hw_log *log) { return &log->epochs; }

int64_t hw_log_segment_base(const hw_log *log, size_t i)
{
	return i < log->nsegs ? log->segs[i]->base : -1;
}

int64_t hw_log_size_bytes(const hw_log *log)
{
	int64_t n = 0;
	for (size_t i = 0; i < log->nsegs; i++)
		n += log->segs[i]->size;
	return n;
}

uint64_t hw_log_counter_get(const hw_log *log, hw_log_counter c)
{
	return c >= 0 && c < HW_LOG_CTR__COUNT ? log->ctr[c] : 0;
}

int hw_log_assign_epoch(hw_log *log, int32_t epoch, int64_t start_offset)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	int32_t before = hw_epoch_latest(&log->epochs);
	int rc = hw_epoch_assign(&log->epochs, epoch, start_offset);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		HW_ASSERT(hw_epoch_latest(&log->epochs) == epoch);
		HW_LOG(INFO, HW_LOG_MOD, "%s: leader epoch %d -> %d at offset %" PRId64, log->dir,
		       before, epoch, start_offset);
		return hw_log_write_epochs(log);
	}
	return 0;
}

/* ---- roll ------------------------------------------------------------------ */

static int segs_push(hw_log *log, hw_log_seg *s)
{
	if (log->nsegs == log->segs_cap) {
		size_t cap = log->segs_cap ? log->segs_cap * 2 : 8;
		hw_log_seg **v = realloc(log->segs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		log->segs = v;
		log->segs_cap = cap;
	}
	log->segs[log->nsegs++] = s;
	return 0;
}

void hw_log_fsync_dir(hw_log *log) { (void)hw_file_fsync_dir(log->dir); }

static int roll(hw_log *log)
{
	hw_log_seg *old = hw_log_active(log);
	int rc;
	hw_log_seg *s = hw_log_seg_create(log, log->leo, &rc);
	if (!s)
		return rc;
	if ((rc = segs_push(log, s)) < 0) {
		hw_log_seg_unlink(log, s);
		hw_log_seg_free(s);
		return rc;
	}
	old->sealed = 1;
	hw_log_seg_write_indexes(log, old); /* final now; checked on open anyway */
	if (log->cfg.flush_policy == HW_LOG_FLUSH_FSYNC_BEFORE_ACK)
		hw_log_fsync_dir(log); /* the new file's name must survive a crash too */
	HW_LOG_CTR_INC(log, ROLLS, 1);
	HW_LOG(DEBUG, HW_LOG_MOD, "%s: rolled segment %" PRId64 " (%" PRId64 " bytes) -> %" PRId64,
	       log->dir, old->base, old->size, s->base);
	return 0;
}

static int should_roll(hw_log *log, const hw_log_seg *seg, const hw_lb_hdr *h, int64_t max_ts)
{
	if (seg->size == 0)
		return 0;
	if (seg->size + h->size > log->cfg.segment_bytes || seg->idx_n >= seg->idx_max ||
	    h->last - seg->base > INT32_MAX)
		return 1;
	/* Kafka's timeWaitedForRoll: batch timestamps if the segment has
	 * them, else wall time since the segment was created. */
	int64_t waited = seg->first_ts >= 0 ? max_ts - seg->first_ts : hw_log_wall_ms() - seg->created_ms;
	return waited > log->cfg.roll_ms;
}

/* ---- append ----------------------------------------------------------------- */

/* Place one validated batch p (header h) at the LEO: roll if due, index,
 * tail buffer (by reference into the caller's buffer when ref is set),
 * segment and epoch bookkeeping. 0 or -errno. */
static int apply_batch(hw_log *log, const uint8_t *p, const hw_lb_hdr *hp, void *ref, void (*release)(void *),
		       int *ref_taken)
{
	const hw_lb_hdr h = *hp;
	int64_t max_ts = h.max_ts;
	int32_t count = h.count;
	hw_log_seg *seg = hw_log_active(log);
	int rc;
	if (should_roll(log, seg, &h, max_ts)) {
		if ((rc = roll(log)) < 0)
			return rc;
		seg = hw_log_active(log);
	}
	int64_t pos = seg->size;
	if (seg->bytes_since_index > log->cfg.index_interval_bytes &&
	    (rc = hw_log_seg_index_add(log, seg, h.last, pos)) < 0)
		return rc;
	/* by reference into the caller's held buffer (never written
	 * direct: O_DIRECT needs the bytes block-aligned at their file
	 * position), else copied into the tail buffer */
	hw_log_io_note_batch(log, h.size);
	rc = ref && !log->dio_want
		     ? hw_log_tail_put_ref(log, seg, p, h.size, h.last + 1, ref, release, ref_taken)
		     : 1;
	if (rc == 0)
		HW_LOG_CTR_INC(log, APPEND_REF_BYTES, h.size);
	else if (rc < 0 || (rc = hw_log_tail_put(log, seg, p, h.size, h.last + 1)) < 0)
		return rc;
	seg->bytes_since_index += h.size;
	seg->size += h.size;
	seg->next_offset = h.last + 1;
	if (max_ts > seg->max_ts) {
		seg->max_ts = max_ts;
		seg->max_ts_rel = (int32_t)(h.last - seg->base);
	}
	if (pos == 0)
		seg->first_ts = max_ts;
	log->leo = h.last + 1;
	if (h.epoch >= 0 && h.epoch != hw_epoch_latest(&log->epochs) &&
	    (rc = hw_log_assign_epoch(log, h.epoch, h.base)) < 0)
		return rc;
	log->records_since_flush += count > 0 ? count : 0;
	HW_LOG_CTR_INC(log, APPEND_BATCHES, 1);
	HW_LOG_CTR_INC(log, APPEND_BYTES, h.size);
	return 0;
}

/* verify: CRC-check every batch (hw_log_append with verify_crc_on_append);
 * 0: framing only (hw_log_append_validated, the caller checked the CRC).
 * gap_ok: a batch may start beyond the previous one's end (a follower
 * copying a compacted leader log, hw_log_append_replica). */
static int log_append(hw_log *log, const uint8_t *b, size_t len, int verify, int gap_ok, void *ref,
		      void (*release)(void *), int *ref_taken)
{
	if (log->state == HW_LOG_STATE_FAILED)
		return -EIO;
	size_t off = 0, nb = 0;
	int64_t expect = log->leo;
	/* Headers of the first batches, decoded in place (not copied: a struct
	 * copy right after the decoder's narrower stores stalls on store
	 * forwarding, once per batch) and reused by the apply loop. */
	hw_lb_hdr hs[16], spill;
	while (off < len) {
		hw_lb_hdr *hp = nb < 16 ? &hs[nb] : &spill;
		size_t avail = len - off;
		int rc = avail < HW_LB_HEADER ? -EBADMSG
			 : verify ? hw_lb_check(b + off, avail, hp) : hw_lb_probe(b + off, hp);
		const hw_lb_hdr h = *hp;
		/* offsets follow on from the LEO; a replica's append may skip a
		 * gap a compacted leader log has (docs/compaction.md) */
		if (!rc && (h.size > avail || (gap_ok ? h.base < expect || h.base - expect > INT32_MAX
						      : h.base != expect)))
			rc = -EINVAL;
		if (!rc && h.size > log->cfg.segment_bytes)
			rc = -EMSGSIZE;
		if (rc) {
			HW_LOG_CTR_INC(log, APPEND_REJECTED, 1);
			HW_LOG(DEBUG, HW_LOG_MOD, "%s: append rejected at byte %zu (LEO %" PRId64 ")%s",
			       log->dir, off, log->leo, rc == -EMSGSIZE ? ": batch larger than a segment" : "");
			return rc == -EMSGSIZE ? -EMSGSIZE : -EINVAL;
		}
		expect = h.last + 1;
		off += h.size;
		nb++;
	}
	nb = 0;
	for (off = 0; off < len; nb++) {
		/* &hs[nb] past the array's end is undefined even unread (UBSan) */
		const hw_lb_hdr *hp = nb < 16 ? &hs[nb] : &spill;
		if (nb >= 16)
			hw_lb_probe(b + off, &spill);
		const hw_lb_hdr h = *hp;
		int rc;
		if (h.base > log->leo) {
			/* a gap (gap_ok): covered by a filler batch, so this log
			 * stays contiguous as recovery checks (docs/compaction.md
			 * "Fillers"); the epoch is the current one's */
			uint8_t f[HW_BATCH_HEADER_SIZE];
			hw_lb_hdr fh;
			hw_clean_filler(f, log->leo, h.base - 1, hw_epoch_latest(&log->epochs), h.max_ts);
			if (hw_lb_probe(f, &fh) < 0)
				return -EINVAL;
			if ((rc = apply_batch(log, f, &fh, NULL, NULL, NULL)) < 0)
				return rc;
		}
		if ((rc = apply_batch(log, b + off, &h, ref, release, ref_taken)) < 0)
			return rc;
		off += h.size;
	}
	/* the durable end moves when the write completes (hw_log_io.c) */
	HW_LOG_CTR_INC(log, APPEND_CALLS, 1);
	return 0;
}

int hw_log_append(hw_log *log, const uint8_t *b, size_t len)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	return log_append(log, b, len, log->cfg.verify_crc_on_append, 0, NULL, NULL, NULL);
}

int hw_log_append_validated(hw_log *log, const uint8_t *b, size_t len)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	return log_append(log, b, len, 0, 0, NULL, NULL, NULL);
}

int hw_log_append_validated_ref(hw_log *log, const uint8_t *b, size_t len, void *ref,
				void (*release)(void *))
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	int taken = 0;
	int rc = log_append(log, b, len, 0, 0, ref, release, &taken);
	if (!taken)
		release(ref); /* copied (or failed before placing anything) */
	return rc;
}
int hw_log_append_replica(hw_log *log, const uint8_t *b, size_t len, void *ref, void (*release)(void *))
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (!ref)
		return log_append(log, b, len, 0, 1, NULL, NULL, NULL);
	int taken = 0;
	int rc = log_append(log, b, len, 0, 1, ref, release, &taken);
	if (!taken)
		release(ref);
	return rc;
}

/* ---- read ------------------------------------------------------------------- */

static size_t seg_find(const hw_log *log, int64_t offset)
{
	size_t lo = 0, hi = log->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (log->segs[mid]->base <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : 0;
}

/* Whole batches from p: at least one, then while within max_bytes, none at
 * or beyond max_offset. Returns the byte count; *next = last offset + 1. */
static size_t take_batches(const uint8_t *p, size_t avail, size_t max_bytes, int64_t max_offset,
			   int64_t *next)
{
	size_t n = 0;
	while (n + HW_LB_PROBE <= avail) {
		hw_lb_hdr h;
		if (hw_lb_probe(p + n, &h) < 0 || h.size > avail - n || h.last >= max_offset ||
		    (n > 0 && n + h.size > max_bytes))
			break;
		n += h.size;
		*next = h.last + 1;
	}
	return n;
}

/* 1 if the framed batches p[0, n) include one with records (or cannot be
 * told apart: then the read stays as it is). */
static int holds_records(const uint8_t *p, size_t n)
{
	for (size_t k = 0; k + HW_LB_PROBE <= n;) {
		hw_lb_hdr h;
		if (hw_lb_probe(p + k, &h) < 0 || h.count > 0)
			return 1;
		k += h.size;
	}
	return 0;
}

/* Segments a read goes on into past record-less ones, at most, and the
 * bytes of record-less batches it may take beyond max_bytes (a filler is
 * 61 bytes; with the first batch holding records they are, as Kafka's
 * first batch, the answer's progress guarantee). */
#define HW_LOG_READ_ON_SEGS 64
#define HW_LOG_READ_ON_SLACK (64u << 10)

typedef struct read_piece {
	hw_log_seg *seg;
	int64_t pos;
	size_t len;
} read_piece;

/* Plan the batches after out (a part of segs[i]) from there on:
 * record-less ones while within max_bytes + HW_LOG_READ_ON_SLACK, the
 * first with records even past max_bytes, then the rest of that segment
 * within max_bytes. Fills pc,
 * returns the piece count; *total, *next grow with what is taken. */
static size_t read_on_plan(hw_log *log, size_t i, size_t max_bytes, int64_t max_offset, read_piece *pc,
			   size_t *total, int64_t *next)
{
	size_t np = 0;
	int found = 0;
	for (size_t j = i; j < log->nsegs && np < HW_LOG_READ_ON_SEGS && !found; j++) {
		hw_log_seg *seg = log->segs[j];
		int64_t pos;
		hw_lb_hdr h;
		/* segs[i] from where out ended (max_bytes may have cut it), then
		 * each next segment from its base */
		if ((j > i && seg->base != *next) || hw_log_seg_locate(log, seg, *next, &pos, &h) < 0)
			break;
		read_piece *r = &pc[np];
		r->seg = seg;
		r->pos = pos;
		r->len = 0;
		int stop = 0;
		while (pos + HW_LB_PROBE <= seg->size) {
			uint8_t b[HW_LB_PROBE];
			if (hw_log_seg_pread(log, seg, pos, b, sizeof(b)) < 0 || hw_lb_probe(b, &h) < 0 ||
			    pos + h.size > seg->size || h.last >= max_offset ||
			    (found && *total + h.size > max_bytes) ||
			    (h.count == 0 && *total + h.size > max_bytes + HW_LOG_READ_ON_SLACK)) {
				stop = 1;
				break;
			}
			found |= h.count > 0;
			r->len += h.size;
			*total += h.size;
			*next = h.last + 1;
			pos += h.size;
		}
		np += r->len > 0;
		if (stop)
			break;
	}
	return found ? np : 0; /* only fillers up to a limit: as it was */
}

/* out holds only record-less batches of segs[i] (a cleaned segment that
 * is one filler): the answer would carry no records, which librdkafka
 * takes for a batch too large for its buffer (after ten of them it fails
 * the partition with MSG_SIZE_TOO_LARGE). Replace out by a copy that goes
 * on, in segs[i] and the segments after it, up to the first batch with records
 * (docs/compaction.md "Fillers"). On any failure out stays as it is (whole
 * batches either way). */
static void read_on(hw_log *log, size_t i, size_t max_bytes, int64_t max_offset, hw_store_read *out)
{
	read_piece pc[HW_LOG_READ_ON_SEGS];
	size_t total = out->len;
	int64_t next = out->next_offset;
	size_t np = read_on_plan(log, i, max_bytes, max_offset, pc, &total, &next);
	if (np == 0 || total > UINT32_MAX)
		return;
	hw_log_chunk *c = hw_log_chunk_new((uint32_t)total, 0);
	if (!c)
		return;
	memcpy(c->data, out->data, out->len);
	size_t at = out->len;
	for (size_t k = 0; k < np; k++) {
		if (hw_log_seg_pread(log, pc[k].seg, pc[k].pos, c->data + at, pc[k].len) < 0) {
			hw_log_ref_release(c);
			return;
		}
		at += pc[k].len;
	}
	hw_log_ref_release(out->ref);
	out->data = c->data;
	out->len = total;
	out->ref = c;
	out->next_offset = next;
	HW_LOG_CTR_INC(log, READS_PAST_EMPTY, 1);
}

int hw_log_read(hw_log *log, int64_t start, size_t max_bytes, int64_t max_offset,
		hw_store_read *out)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	memset(out, 0, sizeof(*out));
	out->first_offset = -1;
	out->next_offset = start;
	if (start < hw_log_start_offset(log) || start > log->leo)
		return -ERANGE;
	if (start == log->leo || start >= max_offset)
		return 0;
	size_t i = seg_find(log, start);
	while (i + 1 < log->nsegs && log->segs[i]->next_offset <= start)
		i++;
	hw_log_seg *seg = log->segs[i];
	int64_t pos;
	hw_lb_hdr h;
	int rc = hw_log_seg_locate(log, seg, start, &pos, &h);
	if (rc < 0)
		return rc;
	if (pos >= seg->size || h.last >= max_offset)
		return 0;
	int64_t next = start;
	size_t n;
	hw_log_chunk *c = hw_log_chunk_at(log, seg, pos);
	if (c) {
		const uint8_t *p = c->data + (pos - c->file_pos);
		n = take_batches(p, (size_t)(c->file_pos + c->len - pos), max_bytes, max_offset, &next);
		if (n == 0)
			return -EIO;
		hw_log_chunk_hold(c);
		out->data = p;
		HW_LOG_CTR_INC(log, READS_MEMORY, 1);
	} else {
		int64_t disk_avail = hw_log_mem_start(log, seg) - pos;
		size_t want = max_bytes < (size_t)disk_avail ? max_bytes : (size_t)disk_avail;
		if (want < h.size)
			want = h.size;
		if ((int64_t)want > disk_avail)
			return -EIO;
		c = hw_log_chunk_new((uint32_t)want, 0);
		if (!c)
			return -ENOMEM;
		size_t got = 0;
		while (got < want) {
			ssize_t r = pread(seg->fd, c->data + got, want - got, pos + (int64_t)got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				hw_log_ref_release(c);
				return -EIO;
			}
			got += (size_t)r;
		}
		n = take_batches(c->data, want, max_bytes, max_offset, &next);
		if (n == 0) {
			hw_log_ref_release(c);
			return -EIO;
		}
		out->data = c->data;
		HW_LOG_CTR_INC(log, READS_DISK, 1);
	}
	out->len = n;
	out->ref = c;
	out->first_offset = h.base;
	out->next_offset = next;
	seg->hint_offset = next;
	seg->hint_pos = pos + (int64_t)n;
	if (next < max_offset && next < log->leo && !holds_records(out->data, n))
		read_on(log, i, max_bytes, max_offset, out);
	return 0;
}

/* ---- truncation ---------------------------------------------------------------- */

static void persist_rp_after_cut(hw_log *log)
{
	if (log->recovery_point > log->leo)
		log->recovery_point = log->leo;
	if (log->rp_persisted > log->recovery_point)
		hw_log_write_recovery_point(log);
}

static void seg_drop(hw_log *log, hw_log_seg *s)
{
	hw_log_chunks_cut(log, s, 0);
	hw_log_seg_unlink(log, s);
	hw_log_seg_free(s);
}

int hw_log_truncate_fully_and_start_at(hw_log *log, int64_t offset)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (offset < 0)
		return -EINVAL;
	if (log->state == HW_LOG_STATE_FAILED || hw_log_drain(log) < 0)
		return -EIO;
	for (size_t i = 0; i < log->nsegs; i++)
		seg_drop(log, log->segs[i]);
	log->nsegs = 0;
	int rc;
	hw_log_seg *s = hw_log_seg_create(log, offset, &rc);
	if (!s || (rc = segs_push(log, s)) < 0) {
		hw_log_seg_free(s);
		HW_LOG(ERROR, HW_LOG_MOD, "%s: cannot create segment %" PRId64 ": %s", log->dir, offset,
		       strerror(-rc));
		hw_log_set_state(log, HW_LOG_STATE_FAILED, "truncate_fully: segment create failed");
		return rc;
	}
	HW_LOG(INFO, HW_LOG_MOD, "%s: truncated fully (LEO was %" PRId64 "), restarting at %" PRId64,
	       log->dir, log->leo, offset);
	log->leo = log->durable = log->written_offset = offset;
	log->recovery_point = offset;
	log->records_since_flush = 0;
	hw_log_write_recovery_point(log);
	log->epochs.n = 0;
	HW_LOG_CTR_INC(log, TRUNCATIONS, 1);
	return hw_log_write_epochs(log);
}

int hw_log_truncate_to(hw_log *log, int64_t offset)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (log->state == HW_LOG_STATE_FAILED)
		return -EIO;
	if (offset >= log->leo)
		return 0;
	if (offset < hw_log_start_offset(log))
		return hw_log_truncate_fully_and_start_at(log, offset);
	if (hw_log_drain(log) < 0)
		return -EIO;
	size_t i = seg_find(log, offset);
	hw_log_seg *seg = log->segs[i];
	int64_t pos;
	hw_lb_hdr h;
	int rc = hw_log_seg_locate(log, seg, offset, &pos, &h);
	if (rc < 0)
		return rc;
	int64_t new_leo = pos < seg->size ? h.base : seg->next_offset;
	if (pos < seg->size && ftruncate(seg->fd, pos) != 0)
		return -errno;
	if (seg->prealloc_end > pos) /* the cut took the preallocation with it */
		seg->prealloc_end = pos;
	for (size_t j = i + 1; j < log->nsegs; j++)
		seg_drop(log, log->segs[j]);
	log->nsegs = i + 1;
	hw_log_chunks_cut(log, seg, pos);
	seg->size = pos;
	if (seg->written > pos)
		seg->written = pos;
	if (seg->synced > pos)
		seg->synced = pos;
	seg->next_offset = pos ? new_leo : seg->base;
	while (seg->idx_n && seg->idx[seg->idx_n - 1].pos >= pos)
		seg->idx_n--;
	seg->bytes_since_index = pos - (seg->idx_n ? seg->idx[seg->idx_n - 1].pos : 0);
	if (pos == 0)
		seg->first_ts = seg->max_ts = -1;
	seg->sealed = 0;
	seg->hint_offset = -1;
	HW_LOG(INFO, HW_LOG_MOD, "%s: truncated to %" PRId64 " (LEO %" PRId64 " -> %" PRId64 ")",
	       log->dir, offset, log->leo, new_leo);
	log->leo = new_leo;
	if (log->durable > new_leo)
		log->durable = new_leo;
	if (log->written_offset > new_leo)
		log->written_offset = new_leo;
	persist_rp_after_cut(log);
	HW_LOG_CTR_INC(log, TRUNCATIONS, 1);
	size_t before = log->epochs.n;
	hw_epoch_truncate_from_end(&log->epochs, new_leo);
	return log->epochs.n != before ? hw_log_write_epochs(log) : 0;
}

/* ---- retention ------------------------------------------------------------- */

int hw_log_apply_retention(hw_log *log, int64_t now_ms)
{
	return hw_log_apply_retention_below(log, now_ms, INT64_MAX);
}

int hw_log_apply_retention_below(hw_log *log, int64_t now_ms, int64_t max_offset)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (log->state == HW_LOG_STATE_FAILED)
		return -EIO;
	if (!(log->cfg.cleanup_policy & HW_LOG_CLEANUP_DELETE))
		return 0; /* cleanup.policy=compact: only the cleaner removes data */
	size_t k = 0;
	if (log->cfg.retention_ms >= 0)
		while (k < log->nsegs && log->segs[k]->size > 0 && log->segs[k]->max_ts >= 0 &&
		       now_ms - log->segs[k]->max_ts > log->cfg.retention_ms)
			k++;
	if (log->cfg.retention_bytes >= 0) {
		int64_t diff = hw_log_size_bytes(log) - log->cfg.retention_bytes;
		for (size_t j = 0; j < k; j++)
			diff -= log->segs[j]->size;
		while (k < log->nsegs && log->segs[k]->size > 0 && diff - log->segs[k]->size >= 0) {
			diff -= log->segs[k]->size;
			k++;
		}
	}
	/* a segment goes only if everything in it is below max_offset: its
	 * end is the next segment's base (or the LEO for the last one) */
	while (k > 0 && (k < log->nsegs ? log->segs[k]->base : log->leo) > max_offset)
		k--;
	if (k == 0)
		return 0;
	int rc;
	if (k == log->nsegs && (rc = roll(log)) < 0)
		return rc;
	if (hw_log_drain(log) < 0)
		return -EIO;
	for (size_t j = 0; j < k; j++) {
		HW_LOG(INFO, HW_LOG_MOD, "%s: retention deletes segment %" PRId64 " (%" PRId64 " bytes)",
		       log->dir, log->segs[j]->base, log->segs[j]->size);
		seg_drop(log, log->segs[j]);
	}
	memmove(log->segs, log->segs + k, (log->nsegs - k) * sizeof(*log->segs));
	log->nsegs -= k;
	HW_LOG_CTR_INC(log, RETENTION_DELETED, k);
	int64_t start = hw_log_start_offset(log);
	if (log->epochs.n && log->epochs.v[0].start_offset < start) {
		hw_epoch_truncate_from_start(&log->epochs, start);
		if ((rc = hw_log_write_epochs(log)) < 0)
			return rc;
	}
	return (int)k;
}

/* ---- poll / flush ------------------------------------------------------------ */

int hw_log_poll(hw_log *log)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (hw_log_submit(log) < 0)
		return -EIO;
	return hw_log_reap(log, 0);
}

int hw_log_wait(hw_log *log)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (hw_log_submit(log) < 0)
		return -EIO;
	return hw_log_reap(log, log->inflight ? 1 : 0);
}

uint32_t hw_log_io_inflight(const hw_log *log)
{
	return log->inflight + log->unsubmitted;
}

int hw_log_set_wake_fd(hw_log *log, int efd)
{
	if (!log || !log->ring_ok || efd < 0)
		return -EINVAL;
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	return io_uring_register_eventfd(&log->ring, efd);
}

int hw_log_flush(hw_log *log)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (hw_log_drain(log) < 0)
		return -EIO;
	if (hw_log_sync_issue(log) < 0 || hw_log_drain(log) < 0)
		return -EIO;
	HW_ASSERT(log->written_offset == log->leo);
	log->durable = log->leo;
	return 0;
}

/* ---- open / close ------------------------------------------------------------- */

static void log_free(hw_log *log)
{
	hw_log_io_fini(log);
	for (size_t i = 0; i < log->nsegs; i++)
		hw_log_seg_free(log->segs[i]);
	free(log->segs);
	hw_epoch_free(&log->epochs);
	free(log->dir);
	free(log);
}

static const hw_store_ops log_store_ops;

int hw_log_open(const char *dir, const hw_log_config *cfg, hw_log **out)
{
	hw_log_config c;
	if (cfg)
		c = *cfg;
	else
		hw_log_config_default(&c);
	if (!dir || !config_ok(&c))
		return -EINVAL;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -errno;
	hw_log *log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	log->store.ops = &log_store_ops;
	log->cfg = c;
	log->base_cfg = c;
	log->state = HW_LOG_STATE_RECOVERING;
	hw_epoch_init(&log->epochs);
	log->clean_first_dirty = -1;
	log->clean_horizon = INT64_MAX;
	log->dir = strdup(dir);
	int rc = log->dir ? hw_log_io_init(log) : -ENOMEM;
	if (!rc)
		rc = hw_log_recover(log);
	if (rc) {
		HW_LOG(ERROR, HW_LOG_MOD, "%s: open failed: %s", dir, strerror(-rc));
		log_free(log);
		return rc;
	}
	log->last_flush_ms = hw_log_wall_ms();
	HW_LOG(INFO, HW_LOG_MOD,
	       "%s: opened: %zu segment(s), start %" PRId64 ", LEO %" PRId64 ", flush %s, "
	       "%" PRIu64 " batch(es) recovered, %" PRIu64 " corrupt, writes <= %u B inline, "
	       "O_DIRECT %s",
	       dir, log->nsegs, hw_log_start_offset(log), log->leo,
	       hw_log_flush_policy_name(c.flush_policy), log->ctr[HW_LOG_CTR_RECOVERED_BATCHES],
	       log->ctr[HW_LOG_CTR_CORRUPT_BATCHES], log->inline_max,
	       !log->dio_align ? "off" : log->dio_auto ? "auto" : "on");
	hw_log_set_state(log, HW_LOG_STATE_ONLINE, "recovered");
	*out = log;
	return 0;
}

void hw_log_close(hw_log *log)
{
	if (!log)
		return;
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	if (log->state != HW_LOG_STATE_FAILED && hw_log_flush(log) == 0) {
		/* direct_io: the active segment's padding too (the next open
		 * scans it anyway; a clean file is simply nicer to read) */
		hw_log_seg_trim(log, hw_log_active(log));
		hw_log_seg_write_indexes(log, hw_log_active(log));
		hw_log_write_recovery_point(log);
	} else {
		hw_log_drain(log);
	}
	log_free(log);
}

/* ---- hw_store view ------------------------------------------------------------ */

static hw_log *L(hw_store *s) { return (hw_log *)s; }
static int st_append(hw_store *s, const uint8_t *b, size_t n) { return hw_log_append(L(s), b, n); }
/* retention.ms compares batch timestamps (wall clock) with the wall clock */
static int st_apply_retention(hw_store *s, int64_t max_offset)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return hw_log_apply_retention_below(L(s), (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, max_offset);
}

static int st_clean(hw_store *s, int64_t max_offset)
{
	return hw_log_clean(L(s), hw_log_wall_ms(), max_offset, 0, NULL);
}

static int st_compacted(hw_store *s) { return !!(L(s)->cfg.cleanup_policy & HW_LOG_CLEANUP_COMPACT); }

static int st_write_hw(hw_store *s, int64_t hw) { return hw_log_write_hw_checkpoint(L(s), hw); }
static int64_t st_read_hw(hw_store *s) { return hw_log_read_hw_checkpoint(L(s)); }

static int st_append_validated(hw_store *s, const uint8_t *b, size_t n)
{
	return hw_log_append_validated(L(s), b, n);
}
static int st_append_validated_ref(hw_store *s, const uint8_t *b, size_t n, void *ref,
				   void (*release)(void *))
{
	return hw_log_append_validated_ref(L(s), b, n, ref, release);
}
static int st_append_replica(hw_store *s, const uint8_t *b, size_t n, void *ref, void (*release)(void *))
{
	return hw_log_append_replica(L(s), b, n, ref, release);
}
static int st_read(hw_store *s, int64_t start, size_t max_bytes, int64_t max_offset,
		   hw_store_read *out)
{
	return hw_log_read(L(s), start, max_bytes, max_offset, out);
}
static void st_release(hw_store *s, void *ref)
{
	(void)s;
	hw_log_ref_release(ref);
}
static int st_truncate_to(hw_store *s, int64_t o) { return hw_log_truncate_to(L(s), o); }
static int st_truncate_fully(hw_store *s, int64_t o)
{
	return hw_log_truncate_fully_and_start_at(L(s), o);
}
static int64_t st_leo(hw_store *s) { return hw_log_end_offset(L(s)); }
static int64_t st_start(hw_store *s) { return hw_log_start_offset(L(s)); }
static int64_t st_durable(hw_store *s) { return hw_log_durable_end_offset(L(s)); }
static const hw_epoch_cache *st_epochs(hw_store *s) { return hw_log_epochs(L(s)); }
static int st_assign(hw_store *s, int32_t e, int64_t o) { return hw_log_assign_epoch(L(s), e, o); }
static int st_poll(hw_store *s) { return hw_log_poll(L(s)); }
static void st_close(hw_store *s) { hw_log_close(L(s)); }

static const hw_store_ops log_store_ops = {
	.append = st_append,
	.read = st_read,
	.release = st_release,
	.truncate_to = st_truncate_to,
	.truncate_fully_and_start_at = st_truncate_fully,
	.log_end_offset = st_leo,
	.log_start_offset = st_start,
	.durable_end_offset = st_durable,
	.epochs = st_epochs,
	.assign_epoch = st_assign,
	.poll = st_poll,
	.close = st_close,
	.append_validated = st_append_validated,
	.append_validated_ref = st_append_validated_ref,
	.append_replica = st_append_replica,
	.clean = st_clean,
	.compacted = st_compacted,
	.apply_retention = st_apply_retention,
	.write_hw_checkpoint = st_write_hw,
	.read_hw_checkpoint = st_read_hw,
	.set_topic_config = hw_log_st_set_topic_config,
};

hw_store *hw_log_store(hw_log *log) { return &log->store; }

void hw_log_set_owner(hw_log *log, int owner_reactor)
{
	HW_ASSERT_OWNER(log->cfg.owner_reactor);
	log->cfg.owner_reactor = owner_reactor;
}

hw_log *hw_log_from_store(hw_store *s)
{
	return s && s->ops == &log_store_ops ? (hw_log *)s : NULL;
}
