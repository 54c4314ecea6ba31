/* hw_bench_report.c — what `hiwater bench` prints and writes: the table,
 * the rate-sweep summary, OpenMessaging-Benchmark-style JSON, HdrHistogram
 * .hgrm, and a latency-by-percentile PNG drawn by gnuplot. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw_bench.h"
#include "hw_bench_breakdown.h"
#include "hw_err.h"

static const double report_pcts[] = {50, 90, 99, 99.9, 99.99};

static double us(int64_t ns) { return (double)ns / 1e3; }

static const char *acks_name(int16_t acks)
{
	return acks == -1 ? "all" : acks == 0 ? "0" : "1";
}

void hw_bench_print_report(const hw_bench_cfg *cfg, const hw_bench_result *r, FILE *f)
{
	fprintf(f, "\n== hiwater bench: acks=%s, %d B records, %d records/batch, %d partition(s), "
		   "%d producer(s), %s ==\n",
		acks_name(cfg->acks), cfg->record_size, cfg->batch_size, cfg->partitions, cfg->producers,
		cfg->closed_loop ? "closed loop" : "open loop");
	if (cfg->closed_loop)
		fprintf(f, "load            closed loop, %d batches in flight per stream\n", cfg->inflight);
	else
		fprintf(f, "offered rate    %" PRId64 " records/s (latency from intended send time)\n",
			r->offered_rate);
	fprintf(f, "throughput      %.0f records/s, %.2f MB/s over %.1f s (after %.1f s warmup)\n",
		r->records_per_sec, r->mb_per_sec, r->measured_secs, (double)cfg->warmup_ns / 1e9);
	fprintf(f, "publish latency (us, %" PRIu64 " records measured)\n", hw_hist_count(r->lat));
	fprintf(f, "  %-8s %10s\n", "pct", "latency");
	for (size_t i = 0; i < sizeof(report_pcts) / sizeof(report_pcts[0]); i++)
		fprintf(f, "  p%-7g %10.1f\n", report_pcts[i], us(hw_hist_value_at_percentile(r->lat, report_pcts[i])));
	fprintf(f, "  %-8s %10.1f\n  %-8s %10.1f\n", "max", us(hw_hist_count(r->lat) ? hw_hist_max(r->lat) : 0), "mean",
		hw_hist_mean(r->lat) / 1e3);
	if (cfg->end_to_end) {
		fprintf(f, "end-to-end latency (us, produce to consume below the HW, %" PRIu64 " records)\n",
			hw_hist_count(r->e2e));
		for (size_t i = 0; i < sizeof(report_pcts) / sizeof(report_pcts[0]); i++)
			fprintf(f, "  p%-7g %10.1f\n", report_pcts[i],
				us(hw_hist_value_at_percentile(r->e2e, report_pcts[i])));
		fprintf(f, "  %-8s %10.1f\n", "max", us(hw_hist_count(r->e2e) ? hw_hist_max(r->e2e) : 0));
	}
	fprintf(f, "records         sent %" PRIu64 ", acked %" PRIu64 ", failed %" PRIu64
		   ", batch resends %" PRIu64 ", max backlog %" PRIu64 "\n",
		r->sent_records, r->acked_records, r->failed_records, r->retries, r->max_backlog);
	if (r->n_producers > 1) {
		fprintf(f, "acked/producer ");
		for (int p = 0; p < r->n_producers && p < HW_BENCH_MAX_PRODUCER_IDS; p++)
			fprintf(f, " %" PRIu64, r->producer_acked[p]);
		fprintf(f, "\n");
	}
	if (r->bd)
		hw_bd_print(r->bd, r->lat, f);
	if (r->n_err == 0)
		fprintf(f, "errors          none\n");
	for (int i = 0; i < r->n_err; i++)
		fprintf(f, "errors          %-34s (%4d) %" PRIu64 "\n", hw_err_name(r->err_code[i]),
			r->err_code[i], r->err_count[i]);
	if (r->verified)
		fprintf(f, "verify          %s: %" PRIu64 " acknowledged records checked, %" PRIu64
			   " lost, %" PRIu64 " duplicated, %" PRIu64 " misplaced, %" PRIu64
			   " corrupt (%" PRIu64 " unacknowledged but present)\n",
			r->verify_lost || r->verify_dup || r->verify_misplaced || r->verify_corrupt ? "FAILED"
												       : "OK",
			r->verify_checked, r->verify_lost, r->verify_dup, r->verify_misplaced,
			r->verify_corrupt, r->verify_unacked_present);
}

void hw_bench_print_sweep(const hw_bench_result *r, int n, FILE *f)
{
	fprintf(f, "\n== latency against offered load ==\n");
	fprintf(f, "%12s %12s %10s %10s %10s %10s %10s %8s\n", "offered/s", "achieved/s", "p50 us",
		"p99 us", "p99.9 us", "max us", "MB/s", "failed");
	for (int i = 0; i < n; i++)
		fprintf(f, "%12" PRId64 " %12.0f %10.1f %10.1f %10.1f %10.1f %10.2f %8" PRIu64 "\n",
			r[i].offered_rate, r[i].records_per_sec, us(hw_hist_value_at_percentile(r[i].lat, 50)),
			us(hw_hist_value_at_percentile(r[i].lat, 99)), us(hw_hist_value_at_percentile(r[i].lat, 99.9)),
			us(hw_hist_max(r[i].lat)), r[i].mb_per_sec, r[i].failed_records);
}

/* OMB reports latencies in milliseconds. */
static double ms(int64_t ns) { return (double)ns / 1e6; }

static void json_lat(FILE *f, const char *prefix, const hw_hist *h)
{
	fprintf(f, "    \"%sAvg\": %.6f,\n", prefix, hw_hist_mean(h) / 1e6);
	static const struct {
		const char *name;
		double q;
	} q[] = {{"50pct", 50},   {"75pct", 75},    {"90pct", 90},      {"95pct", 95},
		 {"99pct", 99},   {"999pct", 99.9}, {"9999pct", 99.99}};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		fprintf(f, "    \"%s%s\": %.6f,\n", prefix, q[i].name, ms(hw_hist_value_at_percentile(h, q[i].q)));
	fprintf(f, "    \"%sMax\": %.6f,\n", prefix, ms(hw_hist_max(h)));
}

int hw_bench_write_json(const hw_bench_cfg *cfg, const hw_bench_result *r, int n, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "[\n");
	for (int i = 0; i < n; i++) {
		const hw_bench_result *x = &r[i];
		fprintf(f, "  {\n");
		fprintf(f, "    \"workload\": \"acks=%s,recordSize=%d,batchSize=%d,partitions=%d,"
			   "producers=%d,%s\",\n",
			acks_name(cfg->acks), cfg->record_size, cfg->batch_size, cfg->partitions,
			cfg->producers, cfg->closed_loop ? "closedLoop" : "openLoop");
		fprintf(f, "    \"driver\": \"hiwater\",\n");
		fprintf(f, "    \"latencyUnit\": \"ms\",\n");
		fprintf(f, "    \"messageSize\": %d,\n", cfg->record_size);
		fprintf(f, "    \"topics\": 1,\n    \"partitions\": %d,\n    \"producersPerTopic\": %d,\n",
			cfg->partitions, cfg->producers);
		fprintf(f, "    \"producerRate\": %" PRId64 ",\n", x->offered_rate);
		fprintf(f, "    \"publishRate\": [");
		for (int s = 0; s < x->n_samples; s++)
			fprintf(f, "%s%.1f", s ? ", " : "", x->rate_samples[s]);
		fprintf(f, "],\n");
		fprintf(f, "    \"aggregatedPublishRate\": %.1f,\n", x->records_per_sec);
		fprintf(f, "    \"aggregatedPublishThroughputMBps\": %.3f,\n", x->mb_per_sec);
		json_lat(f, "aggregatedPublishLatency", x->lat);
		fprintf(f, "    \"aggregatedPublishLatencyQuantiles\": {");
		static const double qs[] = {50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 100};
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++)
			fprintf(f, "%s\"%g\": %.6f", k ? ", " : "", qs[k], ms(hw_hist_value_at_percentile(x->lat, qs[k])));
		fprintf(f, "},\n");
		if (cfg->end_to_end)
			json_lat(f, "aggregatedEndToEndLatency", x->e2e);
		fprintf(f, "    \"sentRecords\": %" PRIu64 ",\n    \"ackedRecords\": %" PRIu64
			   ",\n    \"failedRecords\": %" PRIu64 ",\n    \"retries\": %" PRIu64 ",\n",
			x->sent_records, x->acked_records, x->failed_records, x->retries);
		fprintf(f, "    \"ackedRecordsPerProducer\": [");
		for (int p = 0; p < x->n_producers && p < HW_BENCH_MAX_PRODUCER_IDS; p++)
			fprintf(f, "%s%" PRIu64, p ? ", " : "", x->producer_acked[p]);
		fprintf(f, "],\n");
		fprintf(f, "    \"errors\": {");
		for (int e = 0; e < x->n_err; e++)
			fprintf(f, "%s\"%s\": %" PRIu64, e ? ", " : "", hw_err_name(x->err_code[e]),
				x->err_count[e]);
		fprintf(f, "}");
		if (x->verified)
			fprintf(f, ",\n    \"verify\": {\"checked\": %" PRIu64 ", \"lost\": %" PRIu64
				   ", \"duplicated\": %" PRIu64 ", \"misplaced\": %" PRIu64
				   ", \"corrupt\": %" PRIu64 "}",
				x->verify_checked, x->verify_lost, x->verify_dup, x->verify_misplaced,
				x->verify_corrupt);
		if (x->client_idle_valid)
			fprintf(f, ",\n    \"clientIdle\": {\"spinsToWork\": %" PRIu64 ", \"spinsToSleep\": %" PRIu64
				", \"contendedYields\": %" PRIu64 ", \"stalledYields\": %" PRIu64
				", \"probes\": %" PRIu64
				", \"sleeps\": %" PRIu64 ", \"wakeups\": %" PRIu64 ", \"yields\": %" PRIu64 "}",
				x->client_spins_to_work, x->client_spins_to_sleep, x->client_contended_yields,
				x->client_stalled_yields, x->client_probes, x->client_sleeps, x->client_wakeups, x->client_yields);
		if (x->bd)
			hw_bd_write_json(x->bd, x->lat, f);
		fprintf(f, "\n  }%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "]\n");
	int bad = ferror(f);
	if (fclose(f) || bad)
		return -EIO;
	return 0;
}

int hw_bench_write_hgrm(const hw_bench_result *r, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	int rc = hw_hist_write_hgrm(r->lat, f, 5, 1000.0);
	if (fclose(f))
		rc = -EIO;
	return rc;
}

static int have_gnuplot(void)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	char *dup = strdup(path), *save = NULL;
	int found = 0;
	for (char *d = strtok_r(dup, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/gnuplot", d);
		found = access(p, X_OK) == 0;
	}
	free(dup);
	return found;
}

int hw_bench_write_plot(const hw_bench_cfg *cfg, const hw_bench_result *r, int n, const char *path)
{
	if (!have_gnuplot())
		return -ENOENT;
	char data[PATH_MAX], script[PATH_MAX];
	snprintf(data, sizeof(data), "%s.data.tmp", path);
	snprintf(script, sizeof(script), "%s.gp.tmp", path);
	FILE *d = fopen(data, "w");
	if (!d)
		return -errno;
	/* One gnuplot data block per result: x = 1/(1-p) (log axis, labelled
	 * as percentiles), y = latency in us. */
	for (int i = 0; i < n; i++) {
		for (int k = 0; k <= 250; k++) {
			double x = k * 0.02, p = 100.0 * (1.0 - pow(10.0, -x));
			int64_t v = hw_hist_value_at_percentile(r[i].lat, p < 0.0001 ? 0.0001 : p);
			fprintf(d, "%.6f %.3f\n", pow(10.0, x), us(v));
		}
		fprintf(d, "%.6f %.3f\n", 1e6, us(hw_hist_max(r[i].lat)));
		fprintf(d, "\n\n");
	}
	fclose(d);
	FILE *s = fopen(script, "w");
	if (!s) {
		unlink(data);
		return -errno;
	}
	fprintf(s, "set terminal pngcairo size 1000,620 font 'sans,11' noenhanced\n");
	fprintf(s, "set output '%s'\n", path);
	fprintf(s, "set title \"hiwater publish latency by percentile\\nacks=%s, %d B records, %d/batch, "
		   "%d partition(s), %s\"\n",
		acks_name(cfg->acks), cfg->record_size, cfg->batch_size, cfg->partitions,
		cfg->closed_loop ? "closed loop" : "open loop (latency from intended send time)");
	fprintf(s, "set logscale x\nset logscale y\nset grid xtics ytics mytics\n");
	/* gnuplot formats tic labels: a literal percent sign is '%%' there. */
	fputs("set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, "
	      "'99.999%%' 100000, 'max' 1000000)\n", s);
	fprintf(s, "set xrange [1:1000000]\n");
	fprintf(s, "set xlabel 'percentile'\nset ylabel 'latency (microseconds)'\n");
	fprintf(s, "set key bottom right box opaque\n");
	fprintf(s, "plot ");
	for (int i = 0; i < n; i++) {
		char label[128];
		if (r[i].offered_rate)
			snprintf(label, sizeof(label), "%" PRId64 " rec/s offered: p50 %.1f us, p99 %.1f us, p99.9 %.1f us",
				 r[i].offered_rate, us(hw_hist_value_at_percentile(r[i].lat, 50)),
				 us(hw_hist_value_at_percentile(r[i].lat, 99)), us(hw_hist_value_at_percentile(r[i].lat, 99.9)));
		else
			snprintf(label, sizeof(label), "closed loop: p50 %.1f us, p99 %.1f us, p99.9 %.1f us",
				 us(hw_hist_value_at_percentile(r[i].lat, 50)), us(hw_hist_value_at_percentile(r[i].lat, 99)),
				 us(hw_hist_value_at_percentile(r[i].lat, 99.9)));
		fprintf(s, "%s'%s' index %d using 1:2 with lines lw 2 title '%s'", i ? ", " : "", data, i,
			label);
	}
	fprintf(s, "\n");
	fclose(s);
	pid_t pid = fork();
	if (pid < 0) {
		unlink(data);
		unlink(script);
		return -errno;
	}
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	unlink(data);
	unlink(script);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}
