/* hw_cmd_fuzz.c — `hiwater fuzz-send`: hostile datagrams at a node.
 *
 * For the robustness test tests/integration/it_fuzz_broker.sh: a broker that receives 100,000 random
 * and mutated datagrams keeps serving, and its drop counters account for
 * them. Every datagram sent here is built so the wire decoder MUST reject
 * it, each for a known reason, so the broker's drop total has to grow by
 * exactly the number sent:
 *
 *   random      random bytes whose first two are never the magic (BAD_MAGIC)
 *   truncated   a valid frame cut short by 1..len-1 bytes (TRUNCATED or
 *               LEN_MISMATCH — payload_len no longer matches)
 *   foreign     a valid frame stamped with another cluster id
 *   version     a valid frame with an unknown version
 *   flags       a valid frame with reserved flag bits set
 *   length      a valid frame with payload_len off by a random amount
 *   trailing    a valid frame with extra bytes appended (payload_len kept:
 *               LEN_MISMATCH)
 *   flipped     a valid frame with random byte flips in its body AND
 *               payload_len made inconsistent (flips alone might decode)
 * Valid frames are a Produce (a real RecordBatch v2), a Fetch, a Metadata
 * and a DescribeTopic from client node 1000 + slot, sent to `--node`.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw_batch.h"
#include "hw_cluster.h"
#include "hw_wire.h"

#define FUZZ_KINDS(X) X(random) X(truncated) X(foreign) X(version) X(flags) X(length) \
	X(trailing) X(flipped)
enum fuzz_kind {
#define FUZZ_ENUM(n) FUZZ_##n,
	FUZZ_KINDS(FUZZ_ENUM)
#undef FUZZ_ENUM
	FUZZ__COUNT
};
static const char *const fuzz_kind_name[] = {
#define FUZZ_NAME(n) #n,
	FUZZ_KINDS(FUZZ_NAME)
#undef FUZZ_NAME
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const char fuzz_usage[] =
	"Usage: hiwater fuzz-send --node N [--count 100000] [--seed S] [--plane control|data]\n"
	"                         [--mode garbage|hostile] [--topic-id ID] [--partition P] [--dir D]\n"
	"\n"
	"Send datagrams that the wire decoder must drop (random bytes and mutated\n"
	"valid frames) to node N's control endpoint, or its udp data endpoint.\n"
	"--mode hostile sends decodable frames with forged senders and absurd values\n"
	"instead (PARTITION_STATE and follower FETCH of --topic-id/--partition,\n"
	"docs/security.md), each kind refused for one known reason.\n"
	"Prints per-kind counts and a final line \"fuzz_sent=<n>\".\n";

int hw_fuzz_hostile(const hw_cluster *c, int node, int fd, const struct sockaddr_in *to, int64_t count,
		    uint32_t topic_id, uint32_t partition);

/* Valid frames to mutate; returns how many were built into frames[]. */
static int build_valid(const hw_cluster *c, int32_t src, int32_t dst, uint8_t frames[4][2048],
		       int lens[4])
{
	hw_wire_tx tx = {.cluster_id = c->cluster_id, .incarnation = hw_wire_new_incarnation()};
	uint8_t batch[512];
	hw_batch_spec spec;
	hw_batch_spec_init(&spec);
	const char *val = "fuzz";
	hw_record_in rec = {.timestamp = 0, .value = val, .value_len = 4};
	ssize_t bl = hw_batch_build(batch, sizeof(batch), &spec, &rec, 1);
	if (bl < 0)
		return -EINVAL;
	hw_msg m[4];
	memset(m, 0, sizeof(m));
	m[0].type = HW_MSG_PRODUCE;
	m[0].u.produce = (hw_produce_req){.acks = 1, .timeout_ms = 1000, .tp = {1, 0},
					  .records = batch, .records_len = (uint32_t)bl};
	static hw_fetch_part fp = {.tp = {1, 0}, .fetch_offset = 0, .current_leader_epoch = -1,
				   .last_fetched_epoch = -1, .log_start_offset = -1,
				   .partition_max_bytes = 1024};
	m[1].type = HW_MSG_FETCH;
	m[1].u.fetch = (hw_fetch_req){.replica_id = -1, .replica_epoch = -1, .min_bytes = 1,
				      .max_bytes = 1024, .n_parts = 1, .parts = &fp};
	static hw_metadata_req mr = {0};
	m[2].type = HW_MSG_METADATA;
	m[2].u.other = &mr;
	static hw_describe_topic_req dr = {0};
	m[3].type = HW_MSG_DESCRIBE_TOPIC;
	m[3].u.other = &dr;
	for (int i = 0; i < 4; i++) {
		m[i].src = src;
		m[i].dst = dst;
		m[i].correlation_id = 0xf022u + (uint32_t)i;
		int n = hw_wire_encode(&tx, &m[i], NULL, frames[i], 2048);
		if (n < 0)
			return n;
		lens[i] = n;
	}
	return 4;
}

/* What `fuzz-send` was asked to do. */
typedef struct fuzz_opts {
	char dir[512];
	int64_t node, count, topic_id, partition;
	uint64_t seed;
	int data_plane, hostile;
} fuzz_opts;

/* Parse the command line. 0, 1 for --help (printed), -1 on a usage error. */
static int parse_opts(int argc, char **argv, fuzz_opts *f)
{
	static const struct option opts[] = {
		{"help", no_argument, 0, 'h'},     {"dir", required_argument, 0, 'd'},
		{"node", required_argument, 0, 'n'}, {"count", required_argument, 0, 'c'},
		{"seed", required_argument, 0, 's'}, {"plane", required_argument, 0, 'p'},
		{"mode", required_argument, 0, 'm'}, {"topic-id", required_argument, 0, 't'},
		{"partition", required_argument, 0, 'P'}, {0, 0, 0, 0},
	};
	*f = (fuzz_opts){ .node = -1, .count = 100000, .topic_id = 1, .seed = (uint64_t)time(NULL) };
	hw_cluster_default_dir(f->dir, sizeof(f->dir));
	int64_t v;
	int o;
	optind = 1;
	while ((o = getopt_long(argc, argv, "hd:n:c:s:p:m:t:P:", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(fuzz_usage, stdout);
			hw_cli_print_exit_codes(stdout);
			return 1;
		case 'd': snprintf(f->dir, sizeof(f->dir), "%s", optarg); break;
		case 'n':
			if (hw_cli_parse_i64(optarg, 0, HW_CLUSTER_MAX_BROKERS, &f->node))
				return -1;
			break;
		case 'c':
			if (hw_cli_parse_i64(optarg, 1, 100000000, &f->count))
				return -1;
			break;
		case 's':
			if (hw_cli_parse_i64(optarg, 0, INT64_MAX, &v))
				return -1;
			f->seed = (uint64_t)v;
			break;
		case 'm':
			if (!strcmp(optarg, "hostile"))
				f->hostile = 1;
			else if (strcmp(optarg, "garbage"))
				return -1;
			break;
		case 't':
			if (hw_cli_parse_i64(optarg, 0, UINT32_MAX, &f->topic_id))
				return -1;
			break;
		case 'P':
			if (hw_cli_parse_i64(optarg, 0, UINT32_MAX, &f->partition))
				return -1;
			break;
		case 'p':
			if (!strcmp(optarg, "data"))
				f->data_plane = 1;
			else if (strcmp(optarg, "control"))
				return -1;
			break;
		default: return -1;
		}
	}
	return f->node < 0 || optind != argc ? -1 : 0;
}

/* Damage frame buf (len bytes, a valid frame) in the way `kind` names,
 * drawing from *seed. Returns the new length (buf has room for 64 more). */
static int mutate(int kind, const hw_cluster *c, uint8_t *buf, int len, uint64_t *seed)
{
	switch (kind) {
	case FUZZ_random:
		len = 1 + (int)(rng_next(seed) % 1500);
		for (int k = 0; k < len; k++)
			buf[k] = (uint8_t)rng_next(seed);
		if (buf[0] == 0x48)
			buf[0] = 0x00; /* never the magic's first byte */
		break;
	case FUZZ_truncated:
		len = 1 + (int)(rng_next(seed) % (uint64_t)(len - 1));
		break;
	case FUZZ_foreign:
		hw_be32_put(buf + 4, c->cluster_id ^ (1u + (uint32_t)(rng_next(seed) % 0xfffffffeu)));
		break;
	case FUZZ_version:
		/* past the newest version the decoder knows */
		buf[2] = (uint8_t)(HW_WIRE_VERSION + 1 + rng_next(seed) % (255 - HW_WIRE_VERSION));
		break;
	case FUZZ_flags:
		/* bits 1..3 are reserved in every version (4..7 carry the
		 * stream in versions 2 and 3) */
		buf[3] |= (uint8_t)(2u << (rng_next(seed) % 3));
		break;
	case FUZZ_length:
		hw_be32_put(buf + 32, hw_be32_get(buf + 32) + 1u + (uint32_t)(rng_next(seed) % 60000));
		break;
	case FUZZ_trailing: {
		int extra = 1 + (int)(rng_next(seed) % 64);
		for (int k = 0; k < extra; k++)
			buf[len + k] = (uint8_t)rng_next(seed);
		len += extra;
		break;
	}
	case FUZZ_flipped: {
		int flips = 1 + (int)(rng_next(seed) % 8);
		for (int k = 0; k < flips; k++) {
			int at = HW_WIRE_HDR_LEN + (int)(rng_next(seed) % (uint64_t)(len - HW_WIRE_HDR_LEN));
			buf[at] ^= (uint8_t)(1u + rng_next(seed) % 255);
		}
		hw_be32_put(buf + 32, hw_be32_get(buf + 32) ^ (1u + (uint32_t)(rng_next(seed) % 0xffff)));
		break;
	}
	}
	return len;
}

/* The garbage mode: f->count mutated copies of four valid frames, paced so
 * the receiver's socket buffer never drops one uncounted, then the counts
 * per kind. Exit code. */
static int send_garbage(const hw_cluster *c, const fuzz_opts *f, int fd, const struct sockaddr_in *to)
{
	uint8_t valid[4][2048];
	int vlen[4];
	if (build_valid(c, HW_CLIENT_NODE_BASE + 63, (int32_t)f->node, valid, vlen) != 4) {
		hw_cli_err("cannot build frames");
		return HW_CLI_EXIT_ERROR;
	}
	uint64_t sent[FUZZ__COUNT] = {0}, total = 0, seed = f->seed;
	uint8_t buf[4096];
	for (int64_t i = 0; i < f->count; i++) {
		int kind = (int)(rng_next(&seed) % FUZZ__COUNT);
		int vi = (int)(rng_next(&seed) % 4);
		memcpy(buf, valid[vi], (size_t)vlen[vi]);
		int len = mutate(kind, c, buf, vlen[vi], &seed);
		if (sendto(fd, buf, (size_t)len, 0, (const struct sockaddr *)to, sizeof(*to)) == len) {
			sent[kind]++;
			total++;
		}
		/* Pace: the receiver must see them all for the counts to match
		 * (a full socket buffer would drop in the kernel, uncounted). */
		if (i % 256 == 255) {
			struct timespec d = {0, 1000000};
			nanosleep(&d, NULL);
		}
	}
	for (int k = 0; k < FUZZ__COUNT; k++)
		printf("%-10s %" PRIu64 "\n", fuzz_kind_name[k], sent[k]);
	printf("fuzz_sent=%" PRIu64 "\n", total);
	return HW_CLI_EXIT_OK;
}

int hw_cmd_fuzz(int argc, char **argv)
{
	fuzz_opts f;
	int prc = parse_opts(argc, argv, &f);
	if (prc > 0)
		return HW_CLI_EXIT_OK;
	if (prc < 0)
		goto bad;
	hw_cluster c;
	if (hw_cluster_load(&c, f.dir)) {
		hw_cli_err("no cluster in %s", f.dir);
		return HW_CLI_EXIT_NO_CLUSTER;
	}
	if (!hw_cluster_node_valid(&c, (int)f.node))
		goto bad;
	/* the valid frames mutated below carry the cluster's MAC (version 3),
	 * so each mutation is still caught for its own reason */
	if (hw_cluster_auth_install(&c))
		return HW_CLI_EXIT_ERROR;
	if (f.data_plane && strcmp(c.transport, "udp")) {
		hw_cli_err("--plane data needs a udp cluster (this one is %s)", c.transport);
		return HW_CLI_EXIT_USAGE;
	}
	int port = f.data_plane ? c.base_port + 100 + (int)f.node : hw_cluster_control_port(&c, (int)f.node);
	printf("# fuzz-send: seed %" PRIu64 " (repro: hiwater fuzz-send --seed %" PRIu64 " ...)\n", f.seed,
	       f.seed);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return HW_CLI_EXIT_ERROR;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int rc = f.hostile ? hw_fuzz_hostile(&c, (int)f.node, fd, &to, f.count, (uint32_t)f.topic_id,
					     (uint32_t)f.partition)
			   : send_garbage(&c, &f, fd, &to);
	close(fd);
	return rc;
bad:
	hw_cli_err("usage: hiwater fuzz-send --node N [--count C] [--seed S] (see --help)");
	return HW_CLI_EXIT_USAGE;
}
