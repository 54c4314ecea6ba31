/* hw_cmd_produce.c — `hiwater produce` and `hiwater consume`.
 *
 * produce reads lines from stdin and sends them as records with an
 * idempotent producer (random producer id, epoch 0, a sequence per
 * partition), one batch in flight at a time: a batch is resent unchanged
 * until the leader answers, and the broker's producer state turns a resend
 * of something already appended into the original offset. So each line is
 * written exactly once, in order, even when datagrams are lost.
 *
 * consume fetches as a consumer (replica id -1): the broker only serves
 * records below the high watermark, so what it prints is committed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw_batch.h"
#include "hw_client.h"
#include "hw_err.h"

#define PRODUCE_MAX_BATCH_BYTES (48 * 1024)

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct wait_ctx {
	uint32_t corr;
	int done;
	hw_bench_resp resp;
	/* consume: records copied out of the borrowed frame */
	uint8_t *rec;
	uint32_t rec_len, rec_cap;
	int frames_left;
} wait_ctx;

static void on_resp(void *arg, const hw_bench_resp *r)
{
	wait_ctx *w = arg;
	if (r->correlation_id != w->corr || w->done)
		return;
	w->resp = *r;
	if (r->kind == HW_BENCH_FETCH && r->records_len) {
		if (w->rec_len + r->records_len > w->rec_cap) {
			uint32_t ncap = (w->rec_len + r->records_len) * 2;
			uint8_t *nb = realloc(w->rec, ncap);
			if (!nb)
				return;
			w->rec = nb;
			w->rec_cap = ncap;
		}
		memcpy(w->rec + w->rec_len, r->records, r->records_len);
		w->rec_len += r->records_len;
	}
	if (r->kind != HW_BENCH_FETCH || !r->more)
		w->done = 1;
}

/* Where the cluster is: --dir, or --bootstrap-server [--command-config]. */
typedef struct conn_opts {
	char dir[512];
	const char *bootstrap, *command_config;
} conn_opts;

static int open_cluster(const conn_opts *co, const char *topic, hw_client **cl, int timeout_ms)
{
	int ex = hw_client_open_cli(cl, co->dir, co->bootstrap, co->command_config, 1, 1);
	if (ex)
		return ex;
	int rc = hw_client_use_topic(*cl, topic, timeout_ms);
	if (rc) {
		if (rc == -ETIMEDOUT)
			hw_cli_err("the controller did not answer (or topic '%s' has no leaders) in %d ms",
				   topic, timeout_ms);
		hw_client_close(*cl);
		return rc == -ENOENT ? HW_CLI_EXIT_BROKER_ERROR : HW_CLI_EXIT_NO_CLUSTER;
	}
	return HW_CLI_EXIT_OK;
}

/* ---- produce ----------------------------------------------------------- */

static const char produce_usage[] =
	"Usage: hiwater produce --topic T [--acks 0|1|all] [--partition P] [--batch-size N]\n"
	"                       [--verbose] [--dir D | --bootstrap-server HOST:PORT\n"
	"                       [--command-config FILE]] [--timeout MS]\n"
	"\n"
	"Each line of stdin becomes one record (value = the line without its newline).\n"
	"Records go to --partition P, or round-robin by batch over the partitions.\n"
	"Idempotent producer; --acks defaults to all. --verbose prints\n"
	"\"<partition> <offset>\" for every acknowledged record on stdout.\n"
	"--timeout MS: give up on a batch the cluster has not acknowledged in MS (30000).\n"
	"--bootstrap-server: any node's control endpoint; --command-config: client\n"
	"properties (transport, DPDK EAL args, port, IP; apps/hiwater/README.md).\n";

typedef struct producer {
	hw_client *cl;
	hw_bench_io *io;
	int16_t acks;
	int64_t pid;
	int32_t seq[HW_CLIENT_MAX_PARTS];
	int verbose;
	int timeout_ms;
	uint8_t *buf;
	hw_record_in *recs;
	uint64_t sent, failed;
} producer;

static int send_batch_sync(producer *pr, uint32_t part, char **lines, int32_t *lens, int n)
{
	hw_batch_spec spec;
	hw_batch_spec_init(&spec);
	spec.producer_id = pr->pid;
	spec.producer_epoch = 0;
	spec.base_sequence = pr->seq[part];
	int64_t ts = real_ms();
	for (int i = 0; i < n; i++)
		pr->recs[i] = (hw_record_in){.timestamp = ts, .value = lines[i], .value_len = lens[i]};
	ssize_t len = hw_batch_build(pr->buf, PRODUCE_MAX_BATCH_BYTES + 4096, &spec, pr->recs, (size_t)n);
	if (len < 0) {
		hw_cli_err("building a batch: %s", hw_batch_rc_name((int)len));
		return HW_CLI_EXIT_ERROR;
	}
	wait_ctx w = {0};
	int64_t deadline = mono_ns() + (int64_t)pr->timeout_ms * 1000000;
	int64_t resend_ns = 200000000;
	int16_t last_err = HW_ERR_REQUEST_TIMED_OUT;
	while (mono_ns() < deadline) {
		static uint32_t corr;
		w.corr = ++corr;
		w.done = 0;
		int64_t sent_at = mono_ns();
		if (pr->io->send_produce(pr->io->ctx, part, pr->acks, 10000, pr->buf, (uint32_t)len, w.corr)) {
			struct timespec d = {0, 20000000};
			nanosleep(&d, NULL);
			continue;
		}
		if (pr->acks == 0) {
			w.done = 1;
			w.resp.error = HW_ERR_NONE;
			w.resp.base_offset = -1;
			break;
		}
		while (!w.done && mono_ns() - sent_at < resend_ns)
			pr->io->poll(pr->io->ctx, 10000000, on_resp, &w);
		if (!w.done)
			continue; /* lost request or answer: resend the same batch */
		if (w.resp.error == HW_ERR_NONE)
			break;
		last_err = w.resp.error;
		if (!hw_err_retriable(w.resp.error))
			break;
		struct timespec d = {0, 20000000}; /* retriable: back off, resend */
		nanosleep(&d, NULL);
		w.done = 0;
	}
	if (!w.done || w.resp.error != HW_ERR_NONE) {
		int16_t e = w.done ? w.resp.error : last_err;
		hw_cli_err("partition %u: batch of %d records failed: %s", part, n, hw_err_name(e));
		pr->failed += (uint64_t)n;
		return HW_CLI_EXIT_BROKER_ERROR;
	}
	pr->seq[part] += n;
	pr->sent += (uint64_t)n;
	if (pr->verbose)
		for (int i = 0; i < n; i++)
			printf("%u %" PRId64 "\n", part,
			       w.resp.base_offset >= 0 ? w.resp.base_offset + i : (int64_t)-1);
	return HW_CLI_EXIT_OK;
}

int hw_cmd_produce(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, 0, 'h'},           {"dir", required_argument, 0, 'd'},
		{"topic", required_argument, 0, 't'},    {"acks", required_argument, 0, 'a'},
		{"partition", required_argument, 0, 'p'}, {"batch-size", required_argument, 0, 'b'},
		{"verbose", no_argument, 0, 'v'},        {"timeout", required_argument, 0, 'T'},
		{"quiet", no_argument, 0, 'q'},
		{"bootstrap-server", required_argument, 0, 'S'},
		{"command-config", required_argument, 0, 'C'}, {0, 0, 0, 0},
	};
	conn_opts co = {0};
	hw_cluster_default_dir(co.dir, sizeof(co.dir));
	const char *topic = NULL;
	int16_t acks = -1;
	int64_t partition = -1, batch = 500, v;
	int verbose = 0, timeout_ms = 30000, o;
	optind = 1;
	while ((o = getopt_long(argc, argv, "hqvd:t:a:p:b:T:S:C:", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(produce_usage, stdout);
			hw_cli_print_exit_codes(stdout);
			return HW_CLI_EXIT_OK;
		case 'q': hw_cli_quiet = 1; break;
		case 'v': verbose = 1; break;
		case 'd': snprintf(co.dir, sizeof(co.dir), "%s", optarg); break;
		case 'S': co.bootstrap = optarg; break;
		case 'C': co.command_config = optarg; break;
		case 't': topic = optarg; break;
		case 'a':
			if (hw_cli_parse_acks(optarg, &acks))
				goto bad;
			break;
		case 'p':
			if (hw_cli_parse_i64(optarg, 0, HW_CLIENT_MAX_PARTS - 1, &partition))
				goto bad;
			break;
		case 'b':
			if (hw_cli_parse_i64(optarg, 1, 10000, &batch))
				goto bad;
			break;
		case 'T':
			if (hw_cli_parse_i64(optarg, 1, 3600000, &v))
				goto bad;
			timeout_ms = (int)v;
			break;
		default: goto bad;
		}
	}
	if (!topic || optind != argc)
		goto bad;
	hw_client *cl;
	int ex = open_cluster(&co, topic, &cl, 10000);
	if (ex)
		return ex;
	const hw_client_topic *ti = hw_client_topic_info(cl);
	if (partition >= (int64_t)ti->n_parts) {
		hw_cli_err("topic '%s' has %u partitions; no partition %" PRId64, topic, ti->n_parts, partition);
		hw_client_close(cl);
		return HW_CLI_EXIT_USAGE;
	}
	producer pr = {.cl = cl, .io = hw_client_io(cl), .acks = acks, .verbose = verbose,
		       .timeout_ms = timeout_ms};
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	pr.pid = (int64_t)(((uint64_t)ts.tv_nsec << 20 ^ (uint64_t)ts.tv_sec << 40 ^
			    (uint64_t)getpid()) & INT64_MAX);
	pr.buf = malloc(PRODUCE_MAX_BATCH_BYTES + 4096);
	pr.recs = calloc((size_t)batch, sizeof(hw_record_in));
	char **lines = calloc((size_t)batch, sizeof(char *));
	int32_t *lens = calloc((size_t)batch, sizeof(int32_t));
	if (!pr.buf || !pr.recs || !lines || !lens) {
		ex = HW_CLI_EXIT_ERROR;
		goto out;
	}
	uint32_t next_part = 0;
	int n = 0;
	size_t bytes = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int eof = 0;
	while (!eof) {
		len = getline(&line, &cap, stdin);
		if (len < 0) {
			eof = 1;
		} else {
			if (len && line[len - 1] == '\n')
				line[--len] = 0;
			if (len > PRODUCE_MAX_BATCH_BYTES - 64) {
				hw_cli_err("a line of %zd bytes is larger than the %d-byte record limit", len,
					   PRODUCE_MAX_BATCH_BYTES - 64);
				ex = HW_CLI_EXIT_USAGE;
				break;
			}
			lines[n] = strdup(line);
			lens[n] = (int32_t)len;
			n++;
			bytes += (size_t)len + 24;
		}
		int full = n == batch || bytes > PRODUCE_MAX_BATCH_BYTES - 8192;
		if (n && (full || eof)) {
			uint32_t part = partition >= 0 ? (uint32_t)partition : next_part++ % ti->n_parts;
			ex = send_batch_sync(&pr, part, lines, lens, n);
			for (int i = 0; i < n; i++)
				free(lines[i]);
			n = 0;
			bytes = 0;
			if (ex)
				break;
		}
	}
	free(line);
	for (int i = 0; i < n; i++)
		free(lines[i]);
	fflush(stdout);
	hw_cli_info("produced %" PRIu64 " records to %s (acks=%s)%s", pr.sent, topic,
		    acks == -1 ? "all" : acks == 0 ? "0" : "1", pr.failed ? ", some FAILED" : "");
out:
	free(lines);
	free(lens);
	free(pr.buf);
	free(pr.recs);
	hw_client_close(cl);
	return ex;
bad:
	hw_cli_err("usage: hiwater produce --topic T [--acks 0|1|all] ... (see --help)");
	return HW_CLI_EXIT_USAGE;
}

/* ---- consume ----------------------------------------------------------- */

static const char consume_usage[] =
	"Usage: hiwater consume --topic T [--partition P] [--offset O | --from-beginning]\n"
	"                       [--max-messages N] [--print-offsets] [--timeout MS] [--dir D]\n"
	"                       [--client-rack R]\n"
	"\n"
	"Reads --partition P, or every partition of the topic (each in order, as\n"
	"kcat does). Prints each record's value on its own line (with --print-offsets:\n"
	"\"<offset>\\t<value>\", and \"<partition>\\t<offset>\\t<value>\" when reading\n"
	"several partitions). Reads only below the high watermark. Starts at\n"
	"--offset O, at 0 with --from-beginning, else at the current high watermark;\n"
	"an offset below the log start (deleted by retention) continues from the log\n"
	"start, as Kafka's auto.offset.reset=earliest.\n"
	"Stops after N records (over all partitions read), or after MS milliseconds\n"
	"without a new record\n"
	"(default 5000); exits 5 if it stopped before N records.\n"
	"--client-rack R: Kafka's client.rack; a leader with the rack-aware\n"
	"replica.selector.class sends the fetches to an in-sync replica in rack R\n"
	"(docs/racks.md), which serves them below its own high watermark.\n";

static int fetch_sync(hw_bench_io *io, uint32_t part, int64_t offset, wait_ctx *w)
{
	static uint32_t corr = 0x40000000u;
	for (int attempt = 0; attempt < 50; attempt++) {
		w->corr = ++corr;
		w->done = 0;
		w->rec_len = 0;
		if (io->send_fetch(io->ctx, part, offset, 256 * 1024, w->corr)) {
			struct timespec d = {0, 20000000};
			nanosleep(&d, NULL);
			continue;
		}
		int64_t t0 = mono_ns();
		while (!w->done && mono_ns() - t0 < 200000000)
			io->poll(io->ctx, 10000000, on_resp, w);
		if (w->done)
			return 0;
	}
	return -ETIMEDOUT;
}

/* One fetch of partition part from *offset: print what came (records at
 * or above *offset, up to max in total), advance *offset and *got.
 * Returns 0 or an exit code (TIMEOUT: the leader does not answer,
 * BROKER_ERROR: a non-retriable error). */
static int consume_one(hw_bench_io *io, uint32_t part, int64_t *offset, int64_t max, int64_t *got,
		       int print_offsets, int tag, wait_ctx *w)
{
	if (fetch_sync(io, part, *offset, w)) {
		hw_cli_err("partition %u: the leader does not answer", part);
		return HW_CLI_EXIT_TIMEOUT;
	}
	if (w->resp.error == HW_ERR_OFFSET_OUT_OF_RANGE && w->resp.log_start_offset > *offset) {
		/* retention deleted what we asked for: start at the log start,
		 * as Kafka's consumer with auto.offset.reset=earliest */
		hw_cli_info("partition %u: offset %" PRId64 " is below the log start %" PRId64
			    " (retention): continuing from there", part, *offset, w->resp.log_start_offset);
		*offset = w->resp.log_start_offset;
		return 0;
	}
	if (w->resp.error != HW_ERR_NONE && !hw_err_retriable(w->resp.error)) {
		hw_cli_err("partition %u offset %" PRId64 ": %s", part, *offset, hw_err_name(w->resp.error));
		return HW_CLI_EXIT_BROKER_ERROR;
	}
	hw_batch_iter it;
	hw_batch_hdr h;
	const uint8_t *b;
	hw_batch_iter_init(&it, w->rec, w->rec_len, HW_BATCH_V_CRC | HW_BATCH_V_COMPACTED);
	while ((max < 0 || *got < max) && hw_batch_iter_next(&it, &h, &b) == 1) {
		if (hw_batch_next_offset(&h) <= *offset)
			continue;
		if (h.base_offset > *offset)
			break; /* gap: a frame was lost; fetch again from offset */
		hw_record_iter ri;
		hw_record r;
		/* a compacted log's batches may hold fewer records than offsets,
		 * or none (docs/compaction.md) */
		if (hw_record_iter_init(&ri, b, h.size, HW_BATCH_V_COMPACTED))
			break;
		int more = 1;
		while ((max < 0 || *got < max) && (more = hw_record_iter_next(&ri, &r)) == 1) {
			if (r.offset < *offset)
				continue;
			if (print_offsets && tag)
				printf("%u\t", part);
			if (print_offsets)
				printf("%" PRId64 "\t", r.offset);
			if (r.value_len > 0)
				fwrite(r.value, 1, (size_t)r.value_len, stdout);
			fputc('\n', stdout);
			*offset = r.offset + 1;
			(*got)++;
		}
		if (more == 0)
			*offset = hw_batch_next_offset(&h); /* past offsets compaction emptied */
	}
	return 0;
}

int hw_cmd_consume(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, 0, 'h'},           {"dir", required_argument, 0, 'd'},
		{"topic", required_argument, 0, 't'},    {"partition", required_argument, 0, 'p'},
		{"offset", required_argument, 0, 'o'},   {"from-beginning", no_argument, 0, 'B'},
		{"max-messages", required_argument, 0, 'n'}, {"print-offsets", no_argument, 0, 'P'},
		{"timeout", required_argument, 0, 'T'},  {"quiet", no_argument, 0, 'q'},
		{"bootstrap-server", required_argument, 0, 'S'},
		{"command-config", required_argument, 0, 'C'}, {"client-rack", required_argument, 0, 'R'},
		{0, 0, 0, 0},
	};
	conn_opts co = {0};
	hw_cluster_default_dir(co.dir, sizeof(co.dir));
	const char *topic = NULL, *client_rack = NULL;
	int64_t partition = -1, offset = -1, max = -1, v;
	int print_offsets = 0, timeout_ms = 5000, o;
	optind = 1;
	while ((o = getopt_long(argc, argv, "hqBPd:t:p:o:n:T:S:C:R:", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(consume_usage, stdout);
			hw_cli_print_exit_codes(stdout);
			return HW_CLI_EXIT_OK;
		case 'q': hw_cli_quiet = 1; break;
		case 'd': snprintf(co.dir, sizeof(co.dir), "%s", optarg); break;
		case 'S': co.bootstrap = optarg; break;
		case 'C': co.command_config = optarg; break;
		case 't': topic = optarg; break;
		case 'p':
			if (hw_cli_parse_i64(optarg, 0, HW_CLIENT_MAX_PARTS - 1, &partition))
				goto bad;
			break;
		case 'o':
			if (hw_cli_parse_i64(optarg, 0, INT64_MAX, &offset))
				goto bad;
			break;
		case 'B': offset = 0; break;
		case 'R':
			if (strlen(optarg) >= HW_RACK_MAX) {
				hw_cli_err("--client-rack: at most %d bytes", HW_RACK_MAX - 1);
				return HW_CLI_EXIT_USAGE;
			}
			client_rack = optarg;
			break;
		case 'n':
			if (hw_cli_parse_i64(optarg, 1, INT64_MAX, &max))
				goto bad;
			break;
		case 'P': print_offsets = 1; break;
		case 'T':
			if (hw_cli_parse_i64(optarg, 1, 3600000, &v))
				goto bad;
			timeout_ms = (int)v;
			break;
		default: goto bad;
		}
	}
	if (!topic || optind != argc)
		goto bad;
	hw_client *cl;
	int ex = open_cluster(&co, topic, &cl, 10000);
	if (!ex && client_rack)
		hw_client_set_rack(cl, client_rack); /* checked above */
	if (ex)
		return ex;
	const hw_client_topic *ti = hw_client_topic_info(cl);
	if (partition >= (int64_t)ti->n_parts) {
		hw_cli_err("topic '%s' has %u partitions; no partition %" PRId64, topic, ti->n_parts, partition);
		hw_client_close(cl);
		return HW_CLI_EXIT_USAGE;
	}
	hw_bench_io *io = hw_client_io(cl);
	wait_ctx w = {0};
	/* --partition P, or every partition of the topic (as kcat): each read
	 * in order from its own position, round-robin */
	uint32_t first = partition >= 0 ? (uint32_t)partition : 0;
	uint32_t n_read = partition >= 0 ? 1 : ti->n_parts;
	int tag = partition < 0 && ti->n_parts > 1; /* print the partition too */
	int64_t *pos = calloc(n_read ? n_read : 1, sizeof(*pos));
	if (!pos) {
		ex = HW_CLI_EXIT_ERROR;
		goto out;
	}
	for (uint32_t k = 0; k < n_read; k++) {
		pos[k] = offset;
		if (offset >= 0)
			continue;
		/* Latest: start at the current high watermark. */
		if (fetch_sync(io, first + k, 0, &w)) {
			hw_cli_err("partition %u: the leader does not answer", first + k);
			ex = HW_CLI_EXIT_TIMEOUT;
			goto out_pos;
		}
		pos[k] = w.resp.high_watermark;
	}
	int64_t got = 0, last_new = mono_ns();
	while (max < 0 || got < max) {
		int progressed = 0;
		for (uint32_t k = 0; k < n_read && (max < 0 || got < max) && !ex; k++) {
			uint32_t part = first + k;
			int64_t before = pos[k];
			ex = consume_one(io, part, &pos[k], max, &got, print_offsets, tag, &w);
			progressed |= pos[k] != before;
		}
		if (ex)
			break;
		if (progressed) {
			last_new = mono_ns();
		} else {
			if (mono_ns() - last_new > (int64_t)timeout_ms * 1000000) {
				if (max >= 0) {
					hw_cli_err("only %" PRId64 " of %" PRId64 " records after %d ms idle "
						   "(high watermark %" PRId64 "%s)",
						   got, max, timeout_ms, w.resp.high_watermark,
						   n_read > 1 ? " of the last partition read" : "");
					ex = HW_CLI_EXIT_TIMEOUT;
				}
				break;
			}
			struct timespec d = {0, 2000000};
			nanosleep(&d, NULL);
		}
	}
out_pos:
	free(pos);
	fflush(stdout);
out:
	free(w.rec);
	hw_client_close(cl);
	return ex;
bad:
	hw_cli_err("usage: hiwater consume --topic T [--from-beginning] ... (see --help)");
	return HW_CLI_EXIT_USAGE;
}
