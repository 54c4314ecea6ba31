/* hw_bench_verify.c — the bench's consumer side: where our records start
 * (probe), produce-to-consume latency (--end-to-end) and the exactly-once
 * check (--verify).
 *
 * --verify reads every partition back from the high watermark it had before
 * the run up to past the last acknowledged offset, through the ordinary
 * consumer fetch (replica id -1: the broker serves only below the HW). Each
 * record of this run (its value names our producer id) is matched with the
 * offset the broker acknowledged for its (producer, sequence):
 *   lost        acknowledged, but no copy at the acknowledged offset
 *   duplicated  more than one copy in the log
 *   misplaced   a copy at another offset than the acknowledged one
 *   corrupt     the value's pattern is damaged
 * Records that were never acknowledged but are present are reported too
 * (legal: an answer may be lost after the append).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw_bench_int.h"
#include "hw_err.h"

static bench_stream *find_stream(bench_run *br, uint64_t pid, uint32_t partition)
{
	if (partition >= (uint32_t)br->cfg->partitions)
		return NULL;
	for (int p = 0; p < br->n_prod; p++) {
		bench_stream *s = &br->streams[p * br->cfg->partitions + (int)partition];
		if (s->pid == pid)
			return s;
	}
	return NULL;
}

/* One of this benchmark's producers (any thread's), for --end-to-end. */
static int our_pid(const bench_run *br, uint64_t pid)
{
	for (int p = 0; p < br->cfg->producers; p++)
		if (br->pids[p] == pid)
			return 1;
	return 0;
}

static void verify_record(bench_run *br, bench_stream *s, uint32_t seq, int64_t offset)
{
	hw_bench_result *r = br->res;
	if (seq >= (uint32_t)s->next_seq) {
		r->verify_corrupt++; /* a sequence we never sent */
		return;
	}
	if (s->seen[seq] < 255)
		s->seen[seq]++;
	int64_t acked = seq < s->ack_cap ? s->ack_off[seq] : HW_BENCH_UNACKED;
	if (acked == HW_BENCH_UNACKED)
		return;
	if (acked == offset)
		s->at_ack[seq] = 1;
	else
		r->verify_misplaced++;
}

void hw_bench_consume_records(bench_run *br, bench_consumer *cs, const uint8_t *rec,
			      uint32_t len, int64_t now)
{
	hw_batch_iter it;
	hw_batch_hdr h;
	const uint8_t *b;
	hw_batch_iter_init(&it, rec, len, HW_BATCH_V_CRC);
	while (hw_batch_iter_next(&it, &h, &b) == 1) {
		int64_t next = hw_batch_next_offset(&h);
		if (next <= cs->offset)
			continue;           /* already read */
		if (h.base_offset > cs->offset)
			break;              /* a gap (lost frame): the next fetch heals it */
		hw_record_iter ri;
		hw_record rc;
		if (hw_record_iter_init(&ri, b, h.size, 0))
			break;
		int r;
		while ((r = hw_record_iter_next(&ri, &rc)) == 1) {
			if (rc.offset < cs->offset)
				continue;
			uint64_t pid;
			uint32_t part, seq;
			int64_t intended;
			int pr = hw_bench_parse_value(rc.value, rc.value_len, &pid, &part, &seq, &intended);
			bench_stream *s = NULL;
			if (pr != -EINVAL && !cs->verifying) {
				/* end to end: the producer may be another thread's */
				if (pr == -EBADMSG)
					br->res->verify_corrupt++;
				else if (our_pid(br, pid) && part < (uint32_t)br->cfg->partitions &&
					 intended >= br->measure_start && intended < br->gen_end)
					hw_hist_record(br->res->e2e, now - intended);
				continue;
			}
			if (pr != -EINVAL)
				s = find_stream(br, pid, part);
			if (!s) {
				if (pr == -EBADMSG)
					br->res->verify_corrupt++;
				continue;   /* another run's record */
			}
			if (pr == -EBADMSG) {
				br->res->verify_corrupt++;
				continue;
			}
			verify_record(br, s, seq, rc.offset);
		}
		if (r < 0)
			break;
		cs->offset = next;
	}
}

/* Run the consumers until every partition reached target[p] (or deadline). */
static int consume_until(bench_run *br, const int64_t *target, int64_t deadline)
{
	for (;;) {
		int64_t now = hw_bench_now_ns();
		int left = 0;
		for (int p = 0; p < br->cfg->partitions; p++) {
			if (br->cons[p].offset >= target[p])
				continue;
			left++;
			hw_bench_consumer_tick(br, &br->cons[p], (uint32_t)p, now);
		}
		if (!left)
			return 0;
		if (now > deadline)
			return -ETIMEDOUT;
		int rc = hw_bench_poll(br, 200000);
		if (rc < 0)
			return rc;
	}
}

int hw_bench_probe_hw(bench_run *br)
{
	int np = br->cfg->partitions;
	int64_t deadline = hw_bench_now_ns() + 10000000000LL;
	/* A fetch at offset 0 answers with the HW; records in it are skipped
	 * because the consumer's offset is parked far ahead while probing. */
	for (int p = 0; p < np; p++) {
		br->cons[p].offset = INT64_MAX;
		br->cons[p].hw = -1;
	}
	for (;;) {
		int64_t now = hw_bench_now_ns();
		int left = 0;
		for (int p = 0; p < np; p++) {
			bench_consumer *cs = &br->cons[p];
			if (cs->hw >= 0)
				continue;
			left++;
			if (cs->inflight && now - cs->sent_ns < br->cfg->request_timeout_ns)
				continue;
			cs->corr = ++br->fetch_corr & CORR_FETCH_MASK;
			cs->sent_ns = now;
			cs->inflight = 1;
			if (br->io->send_fetch(br->io->ctx, (uint32_t)p, 0, 1, cs->corr))
				cs->inflight = 0;
		}
		if (!left)
			break;
		if (now > deadline)
			return -ETIMEDOUT;
		int rc = hw_bench_poll(br, 1000000);
		if (rc < 0)
			return rc;
	}
	for (int p = 0; p < np; p++) {
		bench_consumer *cs = &br->cons[p];
		cs->start = cs->offset = cs->hw;
		cs->inflight = 0;
		cs->next_at = 0;
		cs->corr = 0;
	}
	return 0;
}

/* The offset after the last acknowledged record, per partition. */
static void acked_end(bench_run *br, int64_t *target)
{
	for (int p = 0; p < br->cfg->partitions; p++)
		target[p] = br->cons[p].start;
	for (int i = 0; i < br->n_streams; i++) {
		bench_stream *s = &br->streams[i];
		for (size_t q = 0; q < s->ack_cap && q < (size_t)s->next_seq; q++)
			if (s->ack_off[q] != HW_BENCH_UNACKED && s->ack_off[q] + 1 > target[s->partition])
				target[s->partition] = s->ack_off[q] + 1;
	}
}

void hw_bench_e2e_drain(bench_run *br)
{
	int64_t *target = calloc((size_t)br->cfg->partitions, sizeof(int64_t));
	if (!target)
		return;
	if (br->cfg->verify) {
		acked_end(br, target);
	} else {
		/* Without the ack map: read up to each partition's HW now. */
		for (int p = 0; p < br->cfg->partitions; p++)
			target[p] = br->cons[p].hw;
	}
	consume_until(br, target, hw_bench_now_ns() + 5000000000LL);
	free(target);
}

int hw_bench_verify(bench_run *br)
{
	hw_bench_result *r = br->res;
	int np = br->cfg->partitions;
	for (int i = 0; i < br->n_streams; i++) {
		bench_stream *s = &br->streams[i];
		size_t n = (size_t)s->next_seq + 1;
		s->seen = calloc(n, 1);
		s->at_ack = calloc(n, 1);
		if (!s->seen || !s->at_ack)
			return -ENOMEM;
		if (hw_bench_ackmap_reserve(s, (size_t)s->next_seq))
			return -ENOMEM;
	}
	int64_t *target = calloc((size_t)np, sizeof(int64_t));
	if (!target)
		return -ENOMEM;
	acked_end(br, target);
	for (int p = 0; p < np; p++) {
		bench_consumer *cs = &br->cons[p];
		cs->offset = cs->start;
		cs->inflight = 0;
		cs->next_at = 0;
		cs->verifying = 1;
	}
	/* Generous: reading back is bounded by bytes, not by the run time. */
	int64_t deadline = hw_bench_now_ns() + 30000000000LL;
	consume_until(br, target, deadline);
	free(target);
	for (int i = 0; i < br->n_streams; i++) {
		bench_stream *s = &br->streams[i];
		for (int32_t q = 0; q < s->next_seq; q++) {
			int acked = s->ack_off[q] != HW_BENCH_UNACKED;
			if (acked) {
				r->verify_checked++;
				if (!s->at_ack[q])
					r->verify_lost++;
			} else if (s->seen[q]) {
				r->verify_unacked_present++;
			}
			if (s->seen[q] > 1)
				r->verify_dup += (uint64_t)(s->seen[q] - 1);
		}
		free(s->seen);
		free(s->at_ack);
		s->seen = s->at_ack = NULL;
	}
	r->verified = 1;
	return 0;
}
