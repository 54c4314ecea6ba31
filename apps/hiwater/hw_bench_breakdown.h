/* hw_bench_breakdown.h — `hiwater bench --breakdown` (docs/breakdown.md).
 *
 * Design note. Collection: every PRODUCE of the run asks the leader for its
 * stage timing (tag 8) and every answer carries it (hw_produce_timing,
 * engine/repl/hw_ptiming.h), so the bench aggregates per-record stages as
 * the answers arrive; there is no collection step after the run and no
 * broker state to reset before it, and each record's stages come from the
 * same request as its latency. The brokers' Prometheus histograms are too
 * coarse (and per request kind, not per stage) for this.
 *
 * Per record, on the client's clock: latency = (send - intended) + rtt with
 * rtt = answer received - request sent. The leader's stages sum to its
 * residence time L (rx .. response sent, its clock). What remains of the rtt,
 * rtt - L, is both transports and the network between client and leader;
 * without one clock for both processes its two directions cannot be told
 * apart, so each of "client to leader" and "response to client" is half of
 * it (documented as such). Every record's rows therefore add up exactly to
 * its latency (when rtt >= L; an rtt below L, impossible on sane clocks, is
 * counted and its network rows are 0), so the stage means add up to the mean
 * latency. Each stage's own p50 and p99 (marginal: different records) do
 * not add up to the latency's when stages are skewed or correlated, so the
 * table also has "at p50" / "at p99" columns: the stages of the records
 * whose latency is at the median (45..55th percentile) or the 99th
 * (98.5..99.5th), which do add up to it (hw_bd_band).
 */
#ifndef HW_BENCH_BREAKDOWN_H
#define HW_BENCH_BREAKDOWN_H
#include <stdint.h>
#include <stdio.h>
#include "hw_bench.h"

/* Rows of the table: client-side rows around the leader's stages. */
#define HW_BD_CLIENT_QUEUE      0            /* intended -> sent (open loop backlog) */
#define HW_BD_CLIENT_TO_LEADER  1
#define HW_BD_LEADER0           2            /* + hw_pt_stage */
#define HW_BD_LEADER_TO_CLIENT  (HW_BD_LEADER0 + HW_PT__COUNT)
#define HW_BD__COUNT            (HW_BD_LEADER_TO_CLIENT + 1)
#define HW_BD_MAX_CRITICAL      8

typedef struct hw_bench_breakdown {
	hw_hist *stage[HW_BD__COUNT];
	uint64_t records;          /* records with a timing answer (measured window) */
	uint64_t untimed;          /* acknowledged in the window without one */
	uint64_t rtt_below_leader; /* rtt < the leader's total (clamped) */
	/* which replica was last on the critical path: id (-1: the leader's
	 * own write) and how many records */
	int n_critical;
	int32_t critical_id[HW_BD_MAX_CRITICAL];
	uint64_t critical_n[HW_BD_MAX_CRITICAL];
	uint64_t critical_other;
	/* every record's rows (ns, saturated at UINT32_MAX), for the "at p50" and
	 * "at p99" columns: at most HW_BD_MAX_KEPT, later records only go into
	 * the histograms (not_kept) */
	/* each follower's acknowledgement (append -> its acking fetch
	 * received, the write it reported), by follower id: informational
	 * rows, not part of the sum (only the critical one is on the path) */
	int n_fol;
	int32_t fol_id[HW_BD_MAX_CRITICAL];
	uint64_t fol_n[HW_BD_MAX_CRITICAL];
	hw_hist *fol_ack[HW_BD_MAX_CRITICAL], *fol_write[HW_BD_MAX_CRITICAL];
	uint32_t (*rows)[HW_BD__COUNT];
	size_t n_rows, cap_rows;
	uint64_t not_kept;
} hw_bench_breakdown;
#define HW_BD_MAX_KEPT ((size_t)4 << 20)

/* The "at pN" column: each row's mean over the records whose latency (the
 * sum of their rows) ranks in [lo, hi) percent, and that band's mean
 * latency (*lat_ns). Those rows add up to *lat_ns exactly, and the 45..55%
 * band's latency is within the band of the p50 (what the perf check and
 * the test compare). Returns the records in the band (0: out zeroed). */
size_t hw_bd_band(const hw_bench_breakdown *bd, double lo, double hi, double *out, double *lat_ns);

/* Split one record's latency into rows: client queue = sent - intended,
 * then the leader's stages, and rtt - leader total halved into the two
 * network rows. out[HW_BD__COUNT] in ns, all >= 0; returns 1 when rtt was
 * below the leader's total (network rows 0), else 0. */
int hw_bd_split(int64_t intended_ns, int64_t sent_ns, int64_t acked_ns, const hw_produce_timing *t,
		int64_t *out);
const char *hw_bd_row_label(int row);
const char *hw_bd_row_key(int row);   /* JSON key: "client_to_leader", "queue", ... */

/* NULL on allocation failure. */
hw_bench_breakdown *hw_bd_create(void);
void hw_bd_destroy(hw_bench_breakdown *bd);
/* Record n records (intended[i]) answered with timing t and the
 * followers' acknowledgements acks[0..n_acks). */
void hw_bd_record(hw_bench_breakdown *bd, const int64_t *intended, int n, int64_t sent_ns, int64_t acked_ns,
		  const hw_produce_timing *t, const hw_follower_ack *acks, int n_acks);
/* The sum of the rows' own p50s (ns): not the p50 of the sums; with
 * skewed stages it is well below the measured p50 (docs/breakdown.md). */
int64_t hw_bd_sum_p50(const hw_bench_breakdown *bd);
double hw_bd_sum_mean(const hw_bench_breakdown *bd);
/* The table (lat: the run's measured latency, for the comparison rows). */
void hw_bd_print(const hw_bench_breakdown *bd, const hw_hist *lat, FILE *f);
/* ",\n    \"breakdown\": {...}" for the bench JSON. */
void hw_bd_write_json(const hw_bench_breakdown *bd, const hw_hist *lat, FILE *f);

#endif
