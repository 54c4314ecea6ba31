/* hw_bench_breakdown.c — per-stage histograms of `bench --breakdown`
 * (hw_bench_breakdown.h, docs/breakdown.md). */
#include <inttypes.h>
#include <stdlib.h>
#include "hw_bench_breakdown.h"
#include "hw_ptiming.h"

const char *hw_bd_row_label(int row)
{
	if (row == HW_BD_CLIENT_QUEUE)
		return "client queue (open loop)";
	if (row == HW_BD_CLIENT_TO_LEADER)
		return "client to leader (half)";
	if (row == HW_BD_LEADER_TO_CLIENT)
		return "response to client (half)";
	return hw_pt_stage_label(row - HW_BD_LEADER0);
}

const char *hw_bd_row_key(int row)
{
	if (row == HW_BD_CLIENT_QUEUE)
		return "client_queue";
	if (row == HW_BD_CLIENT_TO_LEADER)
		return "client_to_leader";
	if (row == HW_BD_LEADER_TO_CLIENT)
		return "leader_to_client";
	return hw_pt_stage_key(row - HW_BD_LEADER0);
}

int hw_bd_split(int64_t intended_ns, int64_t sent_ns, int64_t acked_ns, const hw_produce_timing *t,
		int64_t *out)
{
	int64_t q = sent_ns - intended_ns;
	out[HW_BD_CLIENT_QUEUE] = q > 0 ? q : 0;
	for (int i = 0; i < HW_PT__COUNT; i++)
		out[HW_BD_LEADER0 + i] = t->stage_ns[i];
	int64_t rtt = acked_ns - sent_ns;
	int64_t net = rtt - (int64_t)hw_pt_total_ns(t);
	int below = net < 0;
	if (below)
		net = 0;
	out[HW_BD_CLIENT_TO_LEADER] = net / 2;
	out[HW_BD_LEADER_TO_CLIENT] = net - net / 2;
	return below;
}

hw_bench_breakdown *hw_bd_create(void)
{
	hw_bench_breakdown *bd = calloc(1, sizeof(*bd));
	if (!bd)
		return NULL;
	for (int i = 0; i < HW_BD__COUNT; i++)
		if (!(bd->stage[i] = hw_hist_create_latency())) {
			hw_bd_destroy(bd);
			return NULL;
		}
	return bd;
}

void hw_bd_destroy(hw_bench_breakdown *bd)
{
	if (!bd)
		return;
	free(bd->rows);
	for (int i = 0; i < bd->n_fol; i++) {
		hw_hist_destroy(bd->fol_ack[i]);
		hw_hist_destroy(bd->fol_write[i]);
	}
	for (int i = 0; i < HW_BD__COUNT; i++)
		hw_hist_destroy(bd->stage[i]);
	free(bd);
}

static void keep_row(hw_bench_breakdown *bd, const int64_t *row)
{
	if (bd->n_rows == bd->cap_rows) {
		size_t cap = bd->cap_rows ? bd->cap_rows * 2 : 4096;
		void *p = cap <= HW_BD_MAX_KEPT ? realloc(bd->rows, cap * sizeof(*bd->rows)) : NULL;
		if (!p) {
			bd->not_kept++;
			return;
		}
		bd->rows = p;
		bd->cap_rows = cap;
	}
	uint32_t *r = bd->rows[bd->n_rows++];
	for (int k = 0; k < HW_BD__COUNT; k++)
		r[k] = row[k] >= (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)row[k];
}

static uint64_t row_sum(const uint32_t *r)
{
	uint64_t s = 0;
	for (int k = 0; k < HW_BD__COUNT; k++)
		s += r[k];
	return s;
}

typedef struct ranked {
	uint64_t lat;
	size_t i;
} ranked;

static int by_lat(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	return x->lat < y->lat ? -1 : x->lat > y->lat;
}

size_t hw_bd_band(const hw_bench_breakdown *bd, double lo, double hi, double *out, double *lat_ns)
{
	for (int k = 0; k < HW_BD__COUNT; k++)
		out[k] = 0;
	*lat_ns = 0;
	size_t n = bd->n_rows;
	if (n == 0)
		return 0;
	ranked *rk = malloc(n * sizeof(*rk));
	if (!rk)
		return 0;
	for (size_t i = 0; i < n; i++)
		rk[i] = (ranked){ row_sum(bd->rows[i]), i };
	qsort(rk, n, sizeof(*rk), by_lat);
	size_t a = (size_t)(lo / 100.0 * (double)n), b = (size_t)(hi / 100.0 * (double)n);
	if (b > n)
		b = n;
	if (a >= b) /* a band narrower than one record: the record at lo */
		b = (a = a < n ? a : n - 1) + 1;
	double sum = 0;
	for (size_t j = a; j < b; j++) {
		const uint32_t *r = bd->rows[rk[j].i];
		for (int k = 0; k < HW_BD__COUNT; k++)
			out[k] += r[k];
		sum += (double)rk[j].lat;
	}
	free(rk);
	for (int k = 0; k < HW_BD__COUNT; k++)
		out[k] /= (double)(b - a);
	*lat_ns = sum / (double)(b - a);
	return b - a;
}

static void count_critical(hw_bench_breakdown *bd, int32_t id, int n)
{
	for (int i = 0; i < bd->n_critical; i++)
		if (bd->critical_id[i] == id) {
			bd->critical_n[i] += (uint64_t)n;
			return;
		}
	if (bd->n_critical < HW_BD_MAX_CRITICAL) {
		bd->critical_id[bd->n_critical] = id;
		bd->critical_n[bd->n_critical++] = (uint64_t)n;
	} else {
		bd->critical_other += (uint64_t)n;
	}
}

/* Follower id's slot, created on first sight; -1 when full or out of memory. */
static int fol_slot(hw_bench_breakdown *bd, int32_t id)
{
	for (int i = 0; i < bd->n_fol; i++)
		if (bd->fol_id[i] == id)
			return i;
	if (bd->n_fol == HW_BD_MAX_CRITICAL)
		return -1;
	int i = bd->n_fol;
	bd->fol_ack[i] = hw_hist_create_latency();
	bd->fol_write[i] = hw_hist_create_latency();
	if (!bd->fol_ack[i] || !bd->fol_write[i]) {
		hw_hist_destroy(bd->fol_ack[i]);
		hw_hist_destroy(bd->fol_write[i]);
		return -1;
	}
	bd->fol_id[i] = id;
	bd->fol_n[i] = 0;
	bd->n_fol++;
	return i;
}

void hw_bd_record(hw_bench_breakdown *bd, const int64_t *intended, int n, int64_t sent_ns, int64_t acked_ns,
		  const hw_produce_timing *t, const hw_follower_ack *acks, int n_acks)
{
	for (int a = 0; a < n_acks; a++) {
		int k = fol_slot(bd, acks[a].id);
		if (k < 0)
			continue;
		hw_hist_record_n(bd->fol_ack[k], acks[a].ack_ns, n);
		hw_hist_record_n(bd->fol_write[k], acks[a].write_ns, n);
		bd->fol_n[k] += (uint64_t)n;
	}
	int64_t row[HW_BD__COUNT];
	for (int i = 0; i < n; i++) {
		bd->rtt_below_leader += (uint64_t)hw_bd_split(intended[i], sent_ns, acked_ns, t, row);
		for (int k = 0; k < HW_BD__COUNT; k++)
			hw_hist_record(bd->stage[k], row[k]);
		keep_row(bd, row);
	}
	bd->records += (uint64_t)n;
	count_critical(bd, t->critical, n);
}

int64_t hw_bd_sum_p50(const hw_bench_breakdown *bd)
{
	int64_t s = 0;
	for (int i = 0; i < HW_BD__COUNT; i++)
		s += hw_hist_value_at_percentile(bd->stage[i], 50);
	return s;
}

double hw_bd_sum_mean(const hw_bench_breakdown *bd)
{
	double s = 0;
	for (int i = 0; i < HW_BD__COUNT; i++)
		s += hw_hist_mean(bd->stage[i]);
	return s;
}

static double us(int64_t ns) { return (double)ns / 1e3; }

void hw_bd_print(const hw_bench_breakdown *bd, const hw_hist *lat, FILE *f)
{
	double at50[HW_BD__COUNT], at99[HW_BD__COUNT], l50, l99;
	hw_bd_band(bd, 45, 55, at50, &l50);
	hw_bd_band(bd, 98.5, 99.5, at99, &l99);
	fprintf(f, "breakdown (us, %" PRIu64 " records with leader timing; %" PRIu64
		   " without; docs/breakdown.md)\n", bd->records, bd->untimed);
	fprintf(f, "  %-30s %9s %9s %9s %9s %9s\n", "stage", "at p50", "at p99", "p50", "p99", "mean");
	for (int i = 0; i < HW_BD__COUNT; i++)
		fprintf(f, "  %-30s %9.1f %9.1f %9.1f %9.1f %9.1f\n", hw_bd_row_label(i), at50[i] / 1e3,
			at99[i] / 1e3, us(hw_hist_value_at_percentile(bd->stage[i], 50)),
			us(hw_hist_value_at_percentile(bd->stage[i], 99)), hw_hist_mean(bd->stage[i]) / 1e3);
	int64_t m50 = hw_hist_value_at_percentile(lat, 50);
	fprintf(f, "  %-30s %9.1f %9.1f %9.1f %9s %9.1f\n", "sum of stages", l50 / 1e3, l99 / 1e3,
		us(hw_bd_sum_p50(bd)), "", hw_bd_sum_mean(bd) / 1e3);
	fprintf(f, "  %-30s %9.1f %9.1f %9s %9s %9.1f\n", "measured latency", us(m50),
		us(hw_hist_value_at_percentile(lat, 99)), "", "", hw_hist_mean(lat) / 1e3);
	for (int k = 0; k < bd->n_fol; k++)
		fprintf(f, "  follower %-3d ack (append -> its fetch) %9.1f p50 %9.1f p99, its write %.1f p50 %.1f p99 (%" PRIu64 " records)\n",
			bd->fol_id[k], us(hw_hist_value_at_percentile(bd->fol_ack[k], 50)),
			us(hw_hist_value_at_percentile(bd->fol_ack[k], 99)),
			us(hw_hist_value_at_percentile(bd->fol_write[k], 50)),
			us(hw_hist_value_at_percentile(bd->fol_write[k], 99)), bd->fol_n[k]);
	fprintf(f, "  stages at p50 / measured p50: %.1f%% (at p50: the records ranked 45..55%%; p50/p99: each stage's own)\n",
		m50 > 0 ? 100.0 * l50 / (double)m50 : 0.0);
	fprintf(f, "  critical path:");
	for (int i = 0; i < bd->n_critical; i++) {
		if (bd->critical_id[i] < 0)
			fprintf(f, " leader write %" PRIu64, bd->critical_n[i]);
		else
			fprintf(f, " follower %d %" PRIu64, bd->critical_id[i], bd->critical_n[i]);
	}
	if (bd->critical_other)
		fprintf(f, " other %" PRIu64, bd->critical_other);
	fprintf(f, " records\n");
	if (bd->rtt_below_leader)
		fprintf(f, "  %" PRIu64 " records had a round trip below the leader's own time (network rows 0)\n",
			bd->rtt_below_leader);
	if (bd->not_kept)
		fprintf(f, "  %" PRIu64 " records beyond the first %zu are in p50/p99/mean only\n", bd->not_kept,
			bd->n_rows);
}

void hw_bd_write_json(const hw_bench_breakdown *bd, const hw_hist *lat, FILE *f)
{
	double at50[HW_BD__COUNT], at99[HW_BD__COUNT], l50, l99;
	hw_bd_band(bd, 45, 55, at50, &l50);
	hw_bd_band(bd, 98.5, 99.5, at99, &l99);
	fprintf(f, ",\n    \"breakdown\": {\"records\": %" PRIu64 ", \"untimed\": %" PRIu64
		   ", \"rttBelowLeader\": %" PRIu64 ", \"notKept\": %" PRIu64 ",\n      \"stages\": [",
		bd->records, bd->untimed, bd->rtt_below_leader, bd->not_kept);
	for (int i = 0; i < HW_BD__COUNT; i++)
		fprintf(f, "%s\n        {\"stage\": \"%s\", \"label\": \"%s\", \"atP50Us\": %.3f, "
			   "\"atP99Us\": %.3f, \"p50Us\": %.3f, \"p99Us\": %.3f, \"meanUs\": %.3f}",
			i ? "," : "", hw_bd_row_key(i), hw_bd_row_label(i), at50[i] / 1e3, at99[i] / 1e3,
			us(hw_hist_value_at_percentile(bd->stage[i], 50)),
			us(hw_hist_value_at_percentile(bd->stage[i], 99)), hw_hist_mean(bd->stage[i]) / 1e3);
	fprintf(f, "],\n      \"sumAtP50Us\": %.3f, \"sumAtP99Us\": %.3f, \"sumP50Us\": %.3f, "
		   "\"sumMeanUs\": %.3f,\n      \"measuredP50Us\": %.3f, \"measuredP99Us\": %.3f, "
		   "\"measuredMeanUs\": %.3f,\n      \"critical\": {",
		l50 / 1e3, l99 / 1e3, us(hw_bd_sum_p50(bd)), hw_bd_sum_mean(bd) / 1e3,
		us(hw_hist_value_at_percentile(lat, 50)), us(hw_hist_value_at_percentile(lat, 99)),
		hw_hist_mean(lat) / 1e3);
	for (int i = 0; i < bd->n_critical; i++) {
		fprintf(f, "%s", i ? ", " : "");
		if (bd->critical_id[i] < 0)
			fprintf(f, "\"leader\": %" PRIu64, bd->critical_n[i]);
		else
			fprintf(f, "\"%d\": %" PRIu64, bd->critical_id[i], bd->critical_n[i]);
	}
	fprintf(f, "},\n      \"followers\": [");
	for (int k = 0; k < bd->n_fol; k++)
		fprintf(f, "%s{\"id\": %d, \"records\": %" PRIu64 ", \"ackP50Us\": %.3f, \"ackP99Us\": %.3f, "
			   "\"writeP50Us\": %.3f, \"writeP99Us\": %.3f}",
			k ? ", " : "", bd->fol_id[k], bd->fol_n[k], us(hw_hist_value_at_percentile(bd->fol_ack[k], 50)),
			us(hw_hist_value_at_percentile(bd->fol_ack[k], 99)),
			us(hw_hist_value_at_percentile(bd->fol_write[k], 50)),
			us(hw_hist_value_at_percentile(bd->fol_write[k], 99)));
	fprintf(f, "]}");
}
