/* hw_cmd_bench.c — `hiwater bench`: options, rate sweep, outputs. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "hw_bench.h"
#include "hw_bench_kafka.h"
#include "hw_client.h"
#include "hw_dpdk.h"
#include "hw_reactor.h"

static const char bench_usage[] =
	"Usage: hiwater bench --topic T [options]\n"
	"\n"
	"Produce against a cluster and report publish latency and throughput.\n"
	"\n"
	"Workload:\n"
	"  --acks 0|1|all          (default all)\n"
	"  --record-size B         value bytes per record, >= 32 (default 1024)\n"
	"  --batch-size N          records per batch (default 16)\n"
	"  --partitions P          partitions to use, 0..P-1 (default: all of the topic)\n"
	"  --producers N           producers, one client thread each (default 1): each an\n"
	"                          idempotent producer with its own producer id, its own\n"
	"                          endpoint (dpdk: a memif queue of its own, at most 8;\n"
	"                          udp: a socket of its own), --rate/N records/s and its\n"
	"                          own --inflight window\n"
	"  --pin-cpus a,b,...      pin producer p to CPU list[p mod length] for the run\n"
	"                          (default: not pinned)\n"
	"  --no-idempotence        plain producer (no producer id / sequences)\n"
	"Load:\n"
	"  --rate R                open loop: R records/s; latency is measured from each\n"
	"                          record's INTENDED send time (default 10000)\n"
	"  --rate-sweep a,b,c      one run per rate; prints latency against offered load\n"
	"  --closed-loop           closed loop: keep --inflight batches outstanding\n"
	"  --inflight K            batches in flight per producer and partition (default 5,\n"
	"                          at most 5 with idempotence, as Kafka)\n"
	"  --duration D            measured time, e.g. 10s (default 10s)\n"
	"  --warmup D              unmeasured time before it (default 1s)\n"
	"  --timeout D             resend a batch unanswered for D (default 500ms)\n"
	"Checks and outputs:\n"
	"  --verify                afterwards read everything back: every acknowledged\n"
	"                          record present exactly once at its acknowledged offset\n"
	"  --end-to-end            also consume while producing: produce-to-consume latency\n"
	"  --client-rack R         the consumer's rack (Kafka client.rack): a rack-aware\n"
	"                          leader sends its fetches to a replica in R (docs/racks.md)\n"
	"  --hgrm FILE             HdrHistogram percentile distribution (microseconds)\n"
	"  --json FILE             OpenMessaging-Benchmark-style result (latencies in ms)\n"
	"  --plot FILE.png         latency-by-percentile chart (needs gnuplot)\n"
	"  --breakdown             acks=all: where a record's time goes, per stage (p50/p99,\n"
	"                          from the leader's timing in each answer; docs/breakdown.md)\n"
	"  --no-progress           no per-second progress lines\n"
	"  --busy-poll             poll for responses without ever yielding or sleeping\n"
	"                          (a core for the client; pair with hiwater.idle.strategy=busy)\n"
	"  --spin-us N             otherwise poll (yielding) N us after the last response\n"
	"                          before sleeping (default: adaptive, as the brokers'\n"
	"                          hiwater.idle.strategy; docs/idle.md)\n"
	"  --dir D                 cluster directory\n"
	"  --bootstrap-server H:P  any node's control endpoint (instead of --dir)\n"
	"  --command-config FILE   client properties: transport, DPDK EAL args, port, IP\n"
	"Through a Kafka client (librdkafka) instead of hiwater's own:\n"
	"  --kafka                 drive the same workload through librdkafka against any\n"
	"                          Kafka-protocol cluster; --bootstrap-server is then the\n"
	"                          Kafka bootstrap.servers list (e.g. hiwater's listeners,\n"
	"                          `cluster status` prints them); --batch-size is\n"
	"                          batch.num.messages (linger.ms=0), --inflight\n"
	"                          max.in.flight.requests.per.connection\n"
	"  --compression C         none|gzip|snappy|lz4|zstd (librdkafka's compression.codec)\n"
	"  --kafka-debug           librdkafka debug=msg,protocol,broker on stderr\n"
	"\n"
	"Exit status 6 when --verify finds lost, duplicated, misplaced or corrupt records,\n"
	"1 when records failed (never acknowledged).\n";

static int usage_err(const char *msg)
{
	hw_cli_err("%s (see `hiwater bench --help`)", msg);
	return HW_CLI_EXIT_USAGE;
}

/* A comma-separated list of 1..max integers in [lo, hi] into out[]:
 * the count, or -EINVAL (empty, too long, or a bad item). */
static int parse_i64_list(const char *s, int64_t lo, int64_t hi, int64_t *out, int max)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", s);
	int n = 0;
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (n == max || hw_cli_parse_i64(t, lo, hi, &out[n++]))
			return -EINVAL;
	return n ? n : -EINVAL;
}

static int parse_sweep(const char *s, hw_bench_cfg *c)
{
	int n = parse_i64_list(s, 1, 100000000, c->rate_sweep, HW_BENCH_MAX_SWEEP);
	c->n_sweep = n > 0 ? n : 0;
	return n > 0 ? 0 : -EINVAL;
}

static int parse_cpus(const char *s, hw_bench_cfg *c)
{
	int64_t v[HW_BENCH_MAX_PRODUCER_IDS];
	int n = parse_i64_list(s, 0, CPU_SETSIZE - 1, v, HW_BENCH_MAX_PRODUCER_IDS);
	c->n_pin = n > 0 ? n : 0;
	for (int i = 0; i < c->n_pin; i++)
		c->pin_cpu[i] = (int)v[i];
	return n > 0 ? 0 : -EINVAL;
}

/* The sweep table, .hgrm, JSON and plot of done runs; returns ex, or
 * HW_CLI_EXIT_ERROR if ex was OK and an output failed. */
static int bench_outputs(const hw_bench_cfg *c, const hw_bench_result *res, int done,
			 const char *hgrm, const char *json, const char *plot, int ex)
{
	int rc;
	const hw_bench_cfg cfg = *c;
	if (done > 1)
		hw_bench_print_sweep(res, done, stdout);
	if (done && hgrm && (rc = hw_bench_write_hgrm(&res[0], hgrm))) {
		hw_cli_err("writing %s: %s", hgrm, strerror(-rc));
		ex = ex ? ex : HW_CLI_EXIT_ERROR;
	}
	if (done && json && (rc = hw_bench_write_json(&cfg, res, done, json))) {
		hw_cli_err("writing %s: %s", json, strerror(-rc));
		ex = ex ? ex : HW_CLI_EXIT_ERROR;
	}
	if (done && plot) {
		rc = hw_bench_write_plot(&cfg, res, done, plot);
		if (rc == -ENOENT)
			hw_cli_err("--plot needs gnuplot (apt-get install gnuplot-nox, or run ci/bootstrap)");
		else if (rc)
			hw_cli_err("gnuplot failed to write %s", plot);
		if (rc)
			ex = ex ? ex : HW_CLI_EXIT_ERROR;
	}
	return ex;
}

/* Exit status of a finished run: failed records, --verify findings. */
static int bench_run_exit(const hw_bench_result *r, int ex)
{
	if (r->failed_records && ex == HW_CLI_EXIT_OK)
		ex = HW_CLI_EXIT_ERROR;
	if (r->verified && (r->verify_lost || r->verify_dup || r->verify_misplaced || r->verify_corrupt))
		ex = HW_CLI_EXIT_VERIFY_FAILED;
	return ex;
}

/* `bench --kafka`: the runs through librdkafka (hw_bench_kafka.c), then the
 * same outputs. */
static int bench_kafka(hw_bench_cfg *cfg, hw_bench_kafka_opts *kopt, const char *topic,
		       const char *bootstrap, const char *hgrm, const char *json, const char *plot)
{
	if (!bootstrap)
		return usage_err("--kafka needs --bootstrap-server HOST:PORT[,HOST:PORT...]");
	if (cfg->end_to_end)
		return usage_err("--end-to-end is not implemented with --kafka");
	kopt->bootstrap = bootstrap;
	kopt->topic = topic;
	if (cfg->idempotent && cfg->acks != -1) {
		hw_cli_info("bench --kafka: librdkafka's idempotent producer needs acks=all: "
			    "running without idempotence");
		cfg->idempotent = 0;
	}
	int32_t parts = 0;
	int rc = hw_bench_kafka_partitions(kopt, &parts);
	if (rc) {
		hw_cli_err("bench --kafka: topic '%s' at %s: %s", topic, bootstrap,
			   rc == -ENOENT ? "no such topic" : "no metadata (is a Kafka listener there?)");
		return rc == -ENOENT ? HW_CLI_EXIT_BROKER_ERROR : HW_CLI_EXIT_NO_CLUSTER;
	}
	if (cfg->partitions == 0)
		cfg->partitions = parts;
	if (cfg->partitions > parts) {
		hw_cli_err("topic '%s' has only %d partitions", topic, parts);
		return HW_CLI_EXIT_USAGE;
	}
	int n_runs = cfg->n_sweep ? cfg->n_sweep : 1;
	hw_bench_result *res = calloc((size_t)n_runs, sizeof(*res));
	if (!res)
		return HW_CLI_EXIT_ERROR;
	int ex = HW_CLI_EXIT_OK, done = 0;
	for (int i = 0; i < n_runs; i++) {
		if (cfg->n_sweep)
			cfg->rate = cfg->rate_sweep[i];
		hw_cli_info("bench --kafka: %s at %s, compression %s, %s", topic, bootstrap,
			    kopt->compression ? kopt->compression : "none",
			    cfg->closed_loop ? "closed loop" : "open loop");
		rc = hw_bench_kafka_run(cfg, kopt, hw_cli_quiet ? NULL : stderr, &res[i]);
		if (rc) {
			hw_cli_err("bench --kafka run failed: %s", strerror(-rc));
			ex = rc == -ETIMEDOUT ? HW_CLI_EXIT_TIMEOUT : HW_CLI_EXIT_ERROR;
			break;
		}
		done++;
		printf("\n(bench --kafka: through librdkafka %s, compression %s)", hw_bench_kafka_version(),
		       kopt->compression ? kopt->compression : "none");
		hw_bench_print_report(cfg, &res[i], stdout);
		fflush(stdout);
		ex = bench_run_exit(&res[i], ex);
	}
	ex = bench_outputs(cfg, res, done, hgrm, json, plot, ex);
	for (int i = 0; i < done; i++)
		hw_bench_result_free(&res[i]);
	free(res);
	return ex;
}

/* Everything `hiwater bench` is told on its command line. */
typedef struct bench_opts {
	hw_bench_cfg cfg;
	hw_bench_kafka_opts kopt;
	char dir[512];
	const char *topic, *hgrm, *json, *plot, *client_rack;
	const char *bootstrap, *command_config;
	int busy_poll, kafka;
	int32_t spin_us;
} bench_opts;

/* bench_opt_one()'s "option taken, go on". */
#define BENCH_GO_ON (-1)

enum {
	O_RSIZE = 256, O_BSIZE, O_PARTS, O_PRODS, O_NOIDEM, O_RATE, O_SWEEP, O_CLOSED,
	O_INFL, O_DUR, O_WARM, O_TMO, O_VERIFY, O_E2E, O_RACK, O_HGRM, O_JSON, O_PLOT, O_NOPROG, O_BUSY, O_SPIN,
	O_PIN, O_BOOT, O_CCFG, O_KAFKA, O_COMPR, O_KDEBUG, O_BREAKDOWN,
};
static const struct option bench_opts_table[] = {
	{"help", no_argument, 0, 'h'},
	{"dir", required_argument, 0, 'd'},
	{"topic", required_argument, 0, 't'},
	{"acks", required_argument, 0, 'a'},
	{"record-size", required_argument, 0, O_RSIZE},
	{"batch-size", required_argument, 0, O_BSIZE},
	{"partitions", required_argument, 0, O_PARTS},
	{"producers", required_argument, 0, O_PRODS},
	{"no-idempotence", no_argument, 0, O_NOIDEM},
	{"rate", required_argument, 0, O_RATE},
	{"rate-sweep", required_argument, 0, O_SWEEP},
	{"closed-loop", no_argument, 0, O_CLOSED},
	{"inflight", required_argument, 0, O_INFL},
	{"duration", required_argument, 0, O_DUR},
	{"warmup", required_argument, 0, O_WARM},
	{"timeout", required_argument, 0, O_TMO},
	{"verify", no_argument, 0, O_VERIFY},
	{"end-to-end", no_argument, 0, O_E2E},
	{"client-rack", required_argument, 0, O_RACK},
	{"hgrm", required_argument, 0, O_HGRM},
	{"json", required_argument, 0, O_JSON},
	{"plot", required_argument, 0, O_PLOT},
	{"breakdown", no_argument, 0, O_BREAKDOWN},
	{"no-progress", no_argument, 0, O_NOPROG},
	{"busy-poll", no_argument, 0, O_BUSY},
	{"spin-us", required_argument, 0, O_SPIN},
	{"pin-cpus", required_argument, 0, O_PIN},
	{"bootstrap-server", required_argument, 0, O_BOOT},
	{"command-config", required_argument, 0, O_CCFG},
	{"kafka", no_argument, 0, O_KAFKA},
	{"compression", required_argument, 0, O_COMPR},
	{"kafka-debug", no_argument, 0, O_KDEBUG},
	{"quiet", no_argument, 0, 'q'},
	{0, 0, 0, 0},
};

/* One getopt_long() result c into o: BENCH_GO_ON, or the exit status to
 * return now (HW_CLI_EXIT_OK after --help, HW_CLI_EXIT_USAGE on a bad value). */
static int bench_opt_one(bench_opts *o, int c)
{
	int64_t v;
	switch (c) {
	case 'h':
		fputs(bench_usage, stdout);
		hw_cli_print_exit_codes(stdout);
		return HW_CLI_EXIT_OK;
	case 'q': hw_cli_quiet = 1; break;
	case 'd': snprintf(o->dir, sizeof(o->dir), "%s", optarg); break;
	case 't': o->topic = optarg; break;
	case 'a':
		if (hw_cli_parse_acks(optarg, &o->cfg.acks))
			return usage_err("--acks wants 0, 1 or all");
		break;
	case O_RSIZE:
		if (hw_cli_parse_size(optarg, &v) || v < HW_BENCH_REC_HDR || v > 1 << 20)
			return usage_err("--record-size wants 32 B .. 1 MiB");
		o->cfg.record_size = (int32_t)v;
		break;
	case O_BSIZE:
		if (hw_cli_parse_i64(optarg, 1, 10000, &v))
			return usage_err("--batch-size wants 1..10000 records");
		o->cfg.batch_size = (int32_t)v;
		break;
	case O_PARTS:
		if (hw_cli_parse_i64(optarg, 1, HW_CLIENT_MAX_PARTS, &v))
			return usage_err("--partitions wants 1..256");
		o->cfg.partitions = (int32_t)v;
		break;
	case O_PRODS:
		if (hw_cli_parse_i64(optarg, 1, 64, &v))
			return usage_err("--producers wants 1..64");
		o->cfg.producers = (int32_t)v;
		break;
	case O_NOIDEM: o->cfg.idempotent = 0; break;
	case O_RATE:
		if (hw_cli_parse_i64(optarg, 1, 100000000, &v))
			return usage_err("--rate wants records/s (1..1e8)");
		o->cfg.rate = v;
		break;
	case O_SWEEP:
		if (parse_sweep(optarg, &o->cfg))
			return usage_err("--rate-sweep wants a comma list of up to 16 rates");
		break;
	case O_CLOSED: o->cfg.closed_loop = 1; break;
	case O_INFL:
		if (hw_cli_parse_i64(optarg, 1, 64, &v))
			return usage_err("--inflight wants 1..64");
		o->cfg.inflight = (int32_t)v;
		break;
	case O_DUR:
		if (hw_cli_parse_duration_ns(optarg, &o->cfg.duration_ns) || o->cfg.duration_ns < 1000000)
			return usage_err("--duration wants a time like 10s or 500ms");
		break;
	case O_WARM:
		if (hw_cli_parse_duration_ns(optarg, &o->cfg.warmup_ns))
			return usage_err("--warmup wants a time like 1s");
		break;
	case O_TMO:
		if (hw_cli_parse_duration_ns(optarg, &o->cfg.request_timeout_ns) ||
		    o->cfg.request_timeout_ns < 1000000)
			return usage_err("--timeout wants a time like 500ms");
		break;
	case O_VERIFY: o->cfg.verify = 1; break;
	case O_E2E: o->cfg.end_to_end = 1; break;
	case O_RACK:
		if (strlen(optarg) >= HW_RACK_MAX)
			return usage_err("--client-rack: at most 63 bytes");
		o->client_rack = optarg;
		break;
	case O_HGRM: o->hgrm = optarg; break;
	case O_JSON: o->json = optarg; break;
	case O_PLOT: o->plot = optarg; break;
	case O_BREAKDOWN: o->cfg.breakdown = 1; break;
	case O_NOPROG: o->cfg.progress = 0; break;
	case O_BUSY: o->busy_poll = 1; break;
	case O_BOOT: o->bootstrap = optarg; break;
	case O_CCFG: o->command_config = optarg; break;
	case O_KAFKA: o->kafka = 1; break;
	case O_KDEBUG: o->kopt.debug = 1; break;
	case O_COMPR:
		if (strcmp(optarg, "none") && strcmp(optarg, "gzip") && strcmp(optarg, "snappy") &&
		    strcmp(optarg, "lz4") && strcmp(optarg, "zstd"))
			return usage_err("--compression wants none, gzip, snappy, lz4 or zstd");
		o->kopt.compression = optarg;
		break;
	case O_PIN:
		if (parse_cpus(optarg, &o->cfg))
			return usage_err("--pin-cpus wants a comma list of CPU numbers");
		break;
	case O_SPIN:
		if (hw_cli_parse_i64(optarg, 0, 10000000, &v))
			return usage_err("--spin-us: expected 0..10000000");
		o->spin_us = (int32_t)v;
		break;
	default: return usage_err("bad option");
	}
	return BENCH_GO_ON;
}

/* Options that are fine alone but not together: BENCH_GO_ON, or
 * HW_CLI_EXIT_USAGE (message printed). */
static int bench_validate(bench_opts *o, int argc)
{
	if (!o->topic)
		return usage_err("--topic is required");
	if (optind != argc)
		return usage_err("unexpected argument");
	if (o->cfg.idempotent && o->cfg.inflight > 5)
		return usage_err("idempotent producers allow at most 5 batches in flight "
				 "(Kafka's rule); use --no-idempotence for more");
	if (o->cfg.closed_loop && o->cfg.n_sweep)
		return usage_err("--rate-sweep is for the open loop");
	if ((int64_t)o->cfg.batch_size * (o->cfg.record_size + 24) + 128 > 60000)
		return usage_err("a batch must fit one 64 KB frame: lower --batch-size or --record-size");
	if (o->cfg.verify && o->cfg.acks == 0)
		hw_cli_info("--verify with acks=0: no offsets are acknowledged, nothing to check");
	if (o->kafka && (o->busy_poll || o->spin_us >= 0 || o->cfg.n_pin || o->command_config))
		return usage_err("--busy-poll, --spin-us, --pin-cpus and --command-config are "
				 "hiwater-client options: not with --kafka");
	if (o->cfg.breakdown && (o->cfg.acks != -1 || o->cfg.producers > 1 || o->kafka))
		return usage_err("--breakdown is for --acks all with one producer over hiwater's client");
	if (!o->kafka && (o->kopt.compression || o->kopt.debug))
		return usage_err("--compression and --kafka-debug need --kafka");
	return BENCH_GO_ON;
}

/* Defaults, then argv, then the cross-option checks: BENCH_GO_ON, or the
 * exit status to return now. */
static int bench_parse_args(bench_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	hw_bench_cfg_defaults(&o->cfg);
	o->cfg.partitions = 0; /* all of the topic unless given */
	hw_cluster_default_dir(o->dir, sizeof(o->dir));
	o->spin_us = -1;
	int c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hqd:t:a:", bench_opts_table, NULL)) != -1)
		if ((rc = bench_opt_one(o, c)) != BENCH_GO_ON)
			return rc;
	return bench_validate(o, argc);
}

/* Opens the hiwater client for o and looks its topic up: 0 with *out set,
 * or the exit status (client closed, message printed). */
static int bench_client_setup(bench_opts *o, hw_client **out)
{
	hw_bench_cfg *cfg = &o->cfg;
	hw_client *cl;
	int rc = hw_client_open_cli(&cl, o->dir, o->bootstrap, o->command_config, 1, cfg->producers);
	if (rc == HW_CLI_EXIT_USAGE && cfg->producers > HW_DPDK_MAX_QUEUES)
		hw_cli_err("--producers over dpdk: at most %d (one queue pair each)", HW_DPDK_MAX_QUEUES);
	if (rc)
		return rc;
	hw_client_set_busy_poll(cl, o->busy_poll);
	hw_client_set_spin_us(cl, o->spin_us);
	hw_client_set_produce_timing(cl, cfg->breakdown);
	if (o->client_rack)
		hw_client_set_rack(cl, o->client_rack); /* length checked in bench_opt_one() */
	rc = hw_client_use_topic(cl, o->topic, 10000);
	if (rc) {
		hw_client_close(cl);
		if (rc == -ETIMEDOUT)
			hw_cli_err("the controller did not answer in 10 s");
		return rc == -ENOENT ? HW_CLI_EXIT_BROKER_ERROR : HW_CLI_EXIT_NO_CLUSTER;
	}
	const hw_client_topic *ti = hw_client_topic_info(cl);
	if (cfg->partitions == 0)
		cfg->partitions = (int32_t)ti->n_parts;
	if ((uint32_t)cfg->partitions > ti->n_parts) {
		hw_cli_err("topic '%s' has only %u partitions", o->topic, ti->n_parts);
		hw_client_close(cl);
		return HW_CLI_EXIT_USAGE;
	}
	*out = cl;
	return 0;
}

/* The runs (one, or one per --rate-sweep rate) over cl, each reported as it
 * ends, then the outputs: the exit status. res[] gets the done runs. */
static int bench_runs(bench_opts *o, hw_client *cl, hw_bench_result *res, int n_runs, int *done)
{
	hw_bench_cfg *cfg = &o->cfg;
	int ex = HW_CLI_EXIT_OK;
	for (int i = 0; i < n_runs; i++) {
		if (cfg->n_sweep)
			cfg->rate = cfg->rate_sweep[i];
		if (!cfg->closed_loop)
			hw_cli_info("bench: %" PRId64 " records/s for %.1f s (+%.1f s warmup) on %s", cfg->rate,
				    (double)cfg->duration_ns / 1e9, (double)cfg->warmup_ns / 1e9, o->topic);
		hw_bench_io *pio[HW_CLIENT_MAX_PRODUCERS];
		for (int p = 0; p < cfg->producers; p++)
			pio[p] = hw_client_producer_io(cl, p);
		hw_client_idle i0, i1;
		hw_client_idle_stats(cl, &i0);
		int rc = hw_bench_run_multi(cfg, pio, hw_client_all_io(cl), hw_cli_quiet ? NULL : stderr,
					    &res[i]);
		hw_client_idle_stats(cl, &i1);
		res[i].client_idle_valid = 1;
		res[i].client_spins_to_work = i1.spins_to_work - i0.spins_to_work;
		res[i].client_spins_to_sleep = i1.spins_to_sleep - i0.spins_to_sleep;
		res[i].client_contended_yields = i1.contended_yields - i0.contended_yields;
		res[i].client_stalled_yields = i1.stalled_yields - i0.stalled_yields;
		res[i].client_probes = i1.probes - i0.probes;
		res[i].client_sleeps = i1.sleeps - i0.sleeps;
		res[i].client_wakeups = i1.wakeups - i0.wakeups;
		res[i].client_yields = i1.yields - i0.yields;
		if (rc) {
			hw_cli_err("bench run failed: %s", strerror(-rc));
			ex = rc == -ETIMEDOUT ? HW_CLI_EXIT_TIMEOUT : HW_CLI_EXIT_ERROR;
			break;
		}
		(*done)++;
		hw_bench_print_report(cfg, &res[i], stdout);
		fflush(stdout);
		ex = bench_run_exit(&res[i], ex);
	}
	return bench_outputs(cfg, res, *done, o->hgrm, o->json, o->plot, ex);
}

/* With several producers, responses one endpoint read for another. */
static void bench_report_forwarding(const bench_opts *o, hw_client *cl)
{
	if (o->cfg.producers <= 1)
		return;
	uint64_t fwd, fdrop;
	hw_client_forward_stats(cl, &fwd, &fdrop);
	if (fwd || fdrop)
		hw_cli_info("bench: %" PRIu64 " responses handed between producer endpoints, %" PRIu64
			    " dropped (ring full)", fwd, fdrop);
}

int hw_cmd_bench(int argc, char **argv)
{
	bench_opts o;
	int rc = bench_parse_args(&o, argc, argv);
	if (rc != BENCH_GO_ON)
		return rc;
	if (o.kafka)
		return bench_kafka(&o.cfg, &o.kopt, o.topic, o.bootstrap, o.hgrm, o.json, o.plot);
	hw_client *cl;
	if ((rc = bench_client_setup(&o, &cl)))
		return rc;
	/* The open loop sleeps until each record's intended send time and the
	 * client sleeps on its doorbell with a timeout: with Linux's default
	 * 50 us timer slack each of those wake-ups may come up to 50 us late,
	 * which would be charged to the cluster's latency (the reactors set
	 * the same slack). */
	if (prctl(PR_SET_TIMERSLACK, HW_REACTOR_TIMER_SLACK_NS, 0, 0, 0) != 0)
		hw_cli_info("bench: PR_SET_TIMERSLACK failed: %s", strerror(errno));
	int n_runs = o.cfg.n_sweep ? o.cfg.n_sweep : 1, done = 0;
	hw_bench_result *res = calloc((size_t)n_runs, sizeof(*res));
	if (!res) {
		hw_client_close(cl);
		return HW_CLI_EXIT_ERROR;
	}
	int ex = bench_runs(&o, cl, res, n_runs, &done);
	bench_report_forwarding(&o, cl);
	for (int i = 0; i < done; i++)
		hw_bench_result_free(&res[i]);
	free(res);
	hw_client_close(cl);
	return ex;
}
