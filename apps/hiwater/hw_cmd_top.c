/* hw_cmd_top.c — `hiwater top`: a refreshing terminal view of a cluster.
 *
 * Every interval it takes a sample (hw_top.h: the controller's Metadata and
 * every node's /metrics) and draws one frame from it and the previous
 * sample: the brokers (up, partitions led, under-replicated, produce rate,
 * acks=all p99) and one line per partition (leader, replicas, ISR, HW, LEO,
 * max follower lag, produce rate, the leader's acks=all p99). On a
 * terminal it redraws in place (ANSI home + clear) and quits on 'q' or ^C;
 * --once prints a single frame (after one interval, for the rates) without
 * escape codes, for scripts.
 */
#include "hw_client.h"
#include "hw_cluster.h"
#include "hw_http.h"
#include "hw_rig.h"
#include "hw_top.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char top_usage[] =
	"Usage: hiwater top [--interval T] [--once] [--iterations N] [--dir D] [--timeout MS]\n"
	"\n"
	"A refreshing view of the cluster, like top: per broker whether its /metrics\n"
	"answers, partitions led, under-replicated partitions, produce requests per\n"
	"second and the acks=all produce p99; per partition the leader, replicas, ISR,\n"
	"HW, LEO, the largest follower lag (offsets), produce requests and bytes per\n"
	"second and its leader's acks=all p99. Leader, replicas and ISR come from the\n"
	"controller (Metadata), the rest from the nodes' /metrics; rates and the p99\n"
	"are over the last interval. Partitions with an ISR smaller than the replica\n"
	"set are flagged UNDER-REPLICATED. Keys: q quits.\n"
	"\n"
	"  --interval T    refresh period (default 1s; 500ms, 2s, ...)\n"
	"  --once          one frame (after one interval), no escape codes, then exit\n"
	"  --iterations N  exit after N frames\n"
	"  --dir D         cluster directory (as for `hiwater cluster`)\n"
	"  --timeout MS    per request to the controller and each node (default 1000)\n";

/* ---- taking a sample -------------------------------------------------------- */

typedef struct meta_ctx {
	hw_top_sample *s;
} meta_ctx;

static void on_metadata(void *arg, const hw_msg *msg)
{
	meta_ctx *x = arg;
	const hw_metadata_resp *r = msg->u.other;
	x->s->n_parts = 0;
	for (int i = 0; i < r->n_topics; i++) {
		const hw_topic_meta *tm = &r->topics[i];
		for (uint32_t p = 0; p < tm->n_parts && x->s->n_parts < HW_TOP_MAX_PARTS; p++) {
			hw_top_part *tp = &x->s->parts[x->s->n_parts++];
			snprintf(tp->topic, sizeof(tp->topic), "%s", tm->name);
			tp->partition = (int)tm->parts[p].partition;
			tp->leader = tm->parts[p].leader;
			tp->replicas = tm->parts[p].replicas;
			tp->isr = tm->parts[p].isr;
		}
	}
	x->s->meta_ok = 1;
}

static void scrape(const hw_cluster *c, int node, int timeout_ms, hw_top_node *n)
{
	memset(n, 0, sizeof(*n));
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_port = htons((uint16_t)hw_cluster_metrics_port(c, node));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* a rig node serves on 127.0.0.1 of its own namespace (hw_rig.h) */
	if (c->rig[0] && hw_rig_enter(c, node))
		return;
	int status = 0;
	char *body = NULL;
	if (!hw_http_get(a, "/metrics", timeout_ms, &status, &body) && status == 200) {
		hw_top_parse_metrics(body, n);
		n->up = 1;
	}
	free(body);
}

/* Take a sample: Metadata from the controller through cl (timeout_ms;
 * meta_ok = 0 when it does not answer) and /metrics of every node of c
 * (up = 0 for a node that does not answer). Never fails: what does not
 * answer is marked so. */
static void sample_take(hw_client *cl, const hw_cluster *c, int timeout_ms, hw_top_sample *s)
{
	s->meta_ok = 0;
	s->n_parts = 0;
	hw_metadata_req mr = {0};
	hw_msg m = {.type = HW_MSG_METADATA, .u.other = &mr};
	meta_ctx x = {.s = s};
	hw_client_call(cl, hw_client_controller_id(cl), &m, HW_MSG_METADATA_RESP, timeout_ms, on_metadata, &x);
	s->n_nodes = c->brokers + 1;
	for (int node = 0; node <= c->brokers; node++)
		scrape(c, node, timeout_ms, &s->node[node]);
	s->t_ns = hw_cli_now_ns();
}

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static struct termios saved_tio;
static int tio_saved;

/* Keys without Enter and without echo while top runs on a terminal. */
static void term_raw(void)
{
	struct termios t;
	if (!isatty(0) || tcgetattr(0, &saved_tio))
		return;
	t = saved_tio;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (!tcsetattr(0, TCSANOW, &t))
		tio_saved = 1;
}

static void term_restore(void)
{
	if (tio_saved)
		tcsetattr(0, TCSANOW, &saved_tio);
	tio_saved = 0;
}

static void fmt_ids(const hw_idset *s, char *buf, size_t cap)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < s->n && off < cap; i++) {
		int w = snprintf(buf + off, cap - off, "%s%d", i ? "," : "", s->id[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

static void fmt_num(double v, char *buf, size_t cap)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.0f", v);
}

/* A rate per second of counter values a (now) and b (before) over dt_s. */
static double rate(double a, double b, double dt_s)
{
	if (isnan(a) || isnan(b) || dt_s <= 0 || a < b)
		return NAN; /* a reset (restart) is no rate */
	return (a - b) / dt_s;
}

static void fmt_rate(double r, char *buf, size_t cap)
{
	if (isnan(r))
		snprintf(buf, cap, "-");
	else if (r >= 1e6)
		snprintf(buf, cap, "%.1fM", r / 1e6);
	else if (r >= 1e4)
		snprintf(buf, cap, "%.1fk", r / 1e3);
	else
		snprintf(buf, cap, "%.0f", r);
}

static void fmt_lat(double s, char *buf, size_t cap)
{
	if (isnan(s))
		snprintf(buf, cap, "-");
	else if (s < 1e-3)
		snprintf(buf, cap, "%.0fus", s * 1e6);
	else if (s < 1)
		snprintf(buf, cap, "%.2fms", s * 1e3);
	else
		snprintf(buf, cap, "%.2fs", s);
}

static void render_brokers(FILE *f, const hw_cluster *c, const hw_top_sample *cur,
			   const hw_top_sample *prev, double dt)
{
	fprintf(f, "%-5s %-10s %-4s %6s %6s %8s %11s %12s\n", "NODE", "ROLE", "UP", "LEADS", "URP",
		"UNDERMIN", "PRODUCE/s", "ACKS=ALL P99");
	for (int n = 0; n <= c->brokers; n++) {
		const hw_top_node *a = &cur->node[n], *b = &prev->node[n];
		char leads[16], urp[16], umi[16], rq[16], p99[16];
		fmt_num(a->up && n ? a->leaders : NAN, leads, sizeof(leads));
		fmt_num(a->up && n ? a->under_replicated : NAN, urp, sizeof(urp));
		fmt_num(a->up && n ? a->under_min_isr : NAN, umi, sizeof(umi));
		fmt_rate(a->up && b->up && n ? rate(a->produce_requests, b->produce_requests, dt) : NAN, rq,
			 sizeof(rq));
		fmt_lat(a->up && b->up && n ? hw_top_quantile(0.99, a, b) : NAN, p99, sizeof(p99));
		fprintf(f, "%-5d %-10s %-4s %6s %6s %8s %11s %12s\n", n, n ? "broker" : "controller",
			a->up ? "yes" : "NO", leads, urp, umi, rq, p99);
	}
}

static void render_parts(FILE *f, const hw_top_sample *cur, const hw_top_sample *prev, double dt)
{
	fprintf(f, "%-16s %4s %6s %-10s %-10s %10s %10s %8s %9s %10s %10s  %s\n", "TOPIC", "PART", "LEADER",
		"REPLICAS", "ISR", "HW", "LEO", "LAG", "REQ/s", "BYTES/s", "P99", "STATUS");
	for (int i = 0; i < cur->n_parts; i++) {
		const hw_top_part *p = &cur->parts[i];
		char rep[48], isr[48], hw[24], leo[24], lag[24], rq[16], by[16], p99[16], lead[16];
		fmt_ids(&p->replicas, rep, sizeof(rep));
		fmt_ids(&p->isr, isr, sizeof(isr));
		const hw_top_pmetrics *a = NULL, *b = NULL;
		const hw_top_node *na = NULL, *nb = NULL;
		if (p->leader > 0 && p->leader < cur->n_nodes) {
			na = &cur->node[p->leader];
			nb = &prev->node[p->leader];
			a = hw_top_find(na, p->topic, p->partition);
			b = hw_top_find(nb, p->topic, p->partition);
		}
		fmt_num(a ? a->hw : NAN, hw, sizeof(hw));
		fmt_num(a ? a->leo : NAN, leo, sizeof(leo));
		fmt_num(a ? a->max_lag : NAN, lag, sizeof(lag));
		fmt_rate(a && b ? rate(a->produce_requests, b->produce_requests, dt) : NAN, rq, sizeof(rq));
		fmt_rate(a && b ? rate(a->produce_bytes, b->produce_bytes, dt) : NAN, by, sizeof(by));
		fmt_lat(na && na->up && nb->up ? hw_top_quantile(0.99, na, nb) : NAN, p99, sizeof(p99));
		snprintf(lead, sizeof(lead), p->leader < 0 ? "none" : "%d", p->leader);
		const char *st = p->leader < 0 ? "OFFLINE"
				 : p->isr.n < p->replicas.n ? "UNDER-REPLICATED"
				 : "ok";
		fprintf(f, "%-16.16s %4d %6s %-10s %-10s %10s %10s %8s %9s %10s %10s  %s\n", p->topic,
			p->partition, lead, rep, isr, hw, leo, lag, rq, by, p99, st);
	}
}

/* One frame into a memory buffer, then one write: no half-drawn screens. */
static void render(const hw_cluster *c, const hw_top_sample *cur, const hw_top_sample *prev, int ansi,
		   double interval_s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	double dt = (double)(cur->t_ns - prev->t_ns) / 1e9;
	int up = 0, urp = 0, ur_parts = 0;
	for (int n = 0; n <= c->brokers; n++) {
		up += cur->node[n].up;
		if (n && cur->node[n].up && !isnan(cur->node[n].under_replicated))
			urp += (int)cur->node[n].under_replicated;
	}
	for (int i = 0; i < cur->n_parts; i++)
		ur_parts += cur->parts[i].isr.n < cur->parts[i].replicas.n;
	time_t now = time(NULL);
	struct tm tm;
	char ts[16];
	strftime(ts, sizeof(ts), "%H:%M:%S", localtime_r(&now, &tm));
	if (ansi)
		fputs("\033[H\033[J", f);
	fprintf(f, "hiwater top - %s - %s - every %.1fs - nodes up %d/%d - partitions %d, "
		"under-replicated %d (metrics: %d)%s\n\n",
		ts, c->dir, interval_s, up, c->brokers + 1, cur->n_parts, ur_parts, urp,
		cur->meta_ok ? "" : " - CONTROLLER NOT ANSWERING (partitions from the last answer)");
	render_brokers(f, c, cur, prev, dt);
	fputc('\n', f);
	render_parts(f, cur, prev, dt);
	if (ansi)
		fputs("\nq: quit\n", f);
	fclose(f);
	fwrite(buf, 1, len, stdout);
	fflush(stdout);
	free(buf);
}

/* Wait interval_ns or until 'q' / a signal: 1 to go on, 0 to quit. */
static int wait_interval(int64_t interval_ns, int keys)
{
	int64_t deadline = hw_cli_now_ns() + interval_ns;
	while (!stop_flag) {
		int64_t left = deadline - hw_cli_now_ns();
		if (left <= 0)
			return 1;
		struct pollfd p = {.fd = 0, .events = POLLIN};
		int r = poll(&p, keys ? 1 : 0, (int)(left / 1000000) + 1);
		if (r > 0 && (p.revents & POLLIN)) {
			char ch;
			if (read(0, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
				return 0;
			if (p.revents & POLLHUP)
				keys = 0;
		}
	}
	return 0;
}

int hw_cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, 0, 'h'},
		{"dir", required_argument, 0, 'd'},
		{"interval", required_argument, 0, 'i'},
		{"once", no_argument, 0, 'o'},
		{"iterations", required_argument, 0, 'n'},
		{"timeout", required_argument, 0, 'T'},
		{0, 0, 0, 0},
	};
	char dir[512];
	hw_cluster_default_dir(dir, sizeof(dir));
	int64_t interval_ns = 1000000000, v;
	int once = 0, iterations = 0, timeout_ms = 1000;
	optind = 1;
	int o;
	while ((o = getopt_long(argc, argv, "hd:i:on:T:", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(top_usage, stdout);
			hw_cli_print_exit_codes(stdout);
			return HW_CLI_EXIT_OK;
		case 'd':
			snprintf(dir, sizeof(dir), "%s", optarg);
			break;
		case 'i':
			if (hw_cli_parse_duration_ns(optarg, &interval_ns) || interval_ns < 100000000 ||
			    interval_ns > 3600000000000LL) {
				hw_cli_err("--interval wants 100ms..1h");
				return HW_CLI_EXIT_USAGE;
			}
			break;
		case 'o':
			once = 1;
			break;
		case 'n':
			if (hw_cli_parse_i64(optarg, 1, 1000000000, &v)) {
				hw_cli_err("--iterations wants a positive count");
				return HW_CLI_EXIT_USAGE;
			}
			iterations = (int)v;
			break;
		case 'T':
			if (hw_cli_parse_i64(optarg, 1, 600000, &v)) {
				hw_cli_err("--timeout wants 1..600000 ms");
				return HW_CLI_EXIT_USAGE;
			}
			timeout_ms = (int)v;
			break;
		default:
			hw_cli_err("see `hiwater top --help`");
			return HW_CLI_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		hw_cli_err("unexpected argument '%s'", argv[optind]);
		return HW_CLI_EXIT_USAGE;
	}
	if (once)
		iterations = 1;
	hw_cluster c;
	if (hw_cluster_load(&c, dir)) {
		hw_cli_err("no cluster in %s", dir);
		return HW_CLI_EXIT_NO_CLUSTER;
	}
	hw_client *cl;
	int ex = hw_client_open_cli(&cl, dir, NULL, NULL, 0, 1);
	if (ex)
		return ex;
	hw_top_sample *s[2] = {calloc(1, sizeof(hw_top_sample)), calloc(1, sizeof(hw_top_sample))};
	if (!s[0] || !s[1]) {
		free(s[0]);
		free(s[1]);
		hw_client_close(cl);
		return HW_CLI_EXIT_ERROR;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	int ansi = !once && isatty(1);
	int keys = !once && isatty(0);
	if (keys)
		term_raw();
	sample_take(cl, &c, timeout_ms, s[0]);
	int cur = 0;
	for (int frame = 0; !iterations || frame < iterations; frame++) {
		if (!wait_interval(interval_ns, keys))
			break;
		int next = !cur;
		sample_take(cl, &c, timeout_ms, s[next]);
		if (!s[next]->meta_ok) { /* keep the last partitions we were told */
			s[next]->n_parts = s[cur]->n_parts;
			memcpy(s[next]->parts, s[cur]->parts, sizeof(s[cur]->parts));
		}
		render(&c, s[next], s[cur], ansi, (double)interval_ns / 1e9);
		cur = next;
	}
	term_restore();
	hw_client_close(cl);
	free(s[0]);
	free(s[1]);
	return HW_CLI_EXIT_OK;
}
