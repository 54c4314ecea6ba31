/* hwd_metrics.c — the daemon's Prometheus endpoint (hiwater.metrics.port).
 *
 * Design note. A real HTTP/1.0 listener on hiwater.metrics.listen (default
 * 127.0.0.1), served by the
 * daemon's own reactor: the listening socket and every accepted connection
 * are non-blocking; a poller accepts, reads until the end of the request
 * headers (or gives up after 2 s or 8 KiB), writes one text/plain response in
 * Prometheus exposition format and closes. Metrics are read directly from
 * the owners on the reactor thread (no locks, no copies kept):
 *   - broker: Kafka's ReplicaManager gauges (UnderReplicatedPartitions,
 *     UnderMinIsrPartitionCount, OfflinePartitionsCount, LeaderCount,
 *     PartitionCount), per-partition ISR shrinks/expands, follower lag,
 *     produce/fetch counters, HW and LEO;
 *   - requests: Kafka's RequestMetrics as Prometheus histograms (total,
 *     queue, local, remote, response-send time) per request type
 *     (Produce by acks, Fetch, FetchFollower), recorded from every
 *     reactor's replica manager (hw_rm_set_req_observer) into hw_hist
 *     latency histograms of that reactor's own (single writer: its
 *     thread), summed over the reactors at scrape time (relaxed atomic
 *     reads, hwd_prom.h "Threads") and exported at fixed bounds, plus
 *     p50/p99/p99.9/max of the total time as a summary;
 *   - transports: frames, bytes and drops by reason;
 *   - reactor: iterations, busy/idle, sleeps;
 *   - controller: its counters, brokers by state, offline partitions;
 *   - jemalloc: allocated/active/resident bytes (when linked).
 * Every family is defined once in hwd_metric_defs.h (name, type, labels,
 * the Kafka metric it mirrors, HELP), which docs/metrics.md is printed
 * from; all but the request families are rendered by hwd_metrics_render.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_ptiming.h"
#include "hw_logging.h"
#include "hw_netaddr.h"
#include "hwd_metrics_render.h"
#include "hwd_node.h"
#include "hwd_prom.h"
#include "hwd_shard.h"

#define MAX_CONNS 8
#define REQ_MAX 8192

/* Kafka RequestMetrics phases (hw_rm.h "Request timing"), each a histogram
 * family of hwd_metric_defs.h. X(NAME, family) */
#define HWD_REQ_PHASE_TABLE(X)          \
	X(TOTAL, HWD_M_REQ_TOTAL_TIME)  \
	X(QUEUE, HWD_M_REQ_QUEUE_TIME)  \
	X(LOCAL, HWD_M_REQ_LOCAL_TIME)  \
	X(REMOTE, HWD_M_REQ_REMOTE_TIME) \
	X(SEND, HWD_M_REQ_SEND_TIME)

typedef enum hwd_req_phase {
#define HWD_REQ_PHASE_ENUM(n, fam) HWD_REQ_##n,
	HWD_REQ_PHASE_TABLE(HWD_REQ_PHASE_ENUM)
#undef HWD_REQ_PHASE_ENUM
	HWD_REQ_PHASE_COUNT
} hwd_req_phase;

/* One reactor's request histograms. Written only by that reactor's thread
 * (its replica manager's request observer); the metrics reactor reads them
 * with hwd_prom_series_merge_shared (hwd_prom.h "Threads"). */
typedef struct hwd_req_series {
	int reactor;
	hwd_prom_series s[HW_RM_REQ_KIND_MAX][HWD_REQ_PHASE_COUNT];
	/* acks=all stages of the produces that asked (docs/breakdown.md) */
	hwd_prom_series stage[HW_PT__COUNT];
} hwd_req_series;

typedef struct mconn {
	int fd;
	size_t got;
	int64_t deadline_ns;
	char req[REQ_MAX];
} mconn;

struct hwd_metrics {
	hwd_node *n;
	int lfd;
	mconn conns[MAX_CONNS];
	uint64_t served, errors;
	int64_t next_accept_ns;  /* accept4 at most every ACCEPT_EVERY_NS */
	int req_on;              /* req[] created and every rm's observer set */
	int n_req;               /* reactors with a replica manager */
	hwd_req_series *req;     /* [n_req] */
	hwd_prom_series agg;     /* scrape scratch: the sum over reactors */
};

/* accept4 on a non-blocking listener costs a socket + inode allocation
 * even when it fails with EAGAIN (the kernel allocates before it looks at
 * the queue): polled every reactor turn it was 58% of a busy-polling
 * broker's cycles (perf record). A scrape can wait a millisecond. Even
 * once a millisecond the failed accept4 was ~1% of a perf/throughput
 * row's CPU (perf/README.md "A page-cache row's CPU on a fresh machine"), so
 * the listener is asked with poll(2), which allocates nothing, and
 * accept4 runs only when a connection is queued. */
#define ACCEPT_EVERY_NS 1000000LL

/* ---- request latency (Kafka RequestMetrics) ---- */

static const hwd_metric req_phase_family[] = {
#define HWD_REQ_PHASE_FAMILY(n, fam) fam,
	HWD_REQ_PHASE_TABLE(HWD_REQ_PHASE_FAMILY)
#undef HWD_REQ_PHASE_FAMILY
};

/* hw_rm_req_observer_fn: on the reactor, once per answered request. */
static void on_request(void *ctx, const hw_rm_req_timing *r)
{
	hwd_req_series *x = ctx; /* this reactor's own */
	if (r->kind < 0 || r->kind >= HW_RM_REQ_KIND_MAX)
		return;
	int64_t v[HWD_REQ_PHASE_COUNT];
	v[HWD_REQ_TOTAL] = r->sent_ns - r->rx_ns;
	v[HWD_REQ_QUEUE] = r->start_ns - r->rx_ns;
	v[HWD_REQ_LOCAL] = r->parked_ns - r->start_ns; /* parked = ready when not delayed */
	v[HWD_REQ_REMOTE] = r->ready_ns - r->parked_ns;
	v[HWD_REQ_SEND] = r->sent_ns - r->ready_ns;
	for (int ph = 0; ph < HWD_REQ_PHASE_COUNT; ph++)
		(void)hwd_prom_series_record(&x->s[r->kind][ph], v[ph]); /* > 1 h: not recorded */
	for (int st = 0; r->stages && st < HW_PT__COUNT; st++)
		(void)hwd_prom_series_record(&x->stage[st], r->stages->stage_ns[st]);
}

static void req_labels(int kind, char *buf, size_t cap)
{
	const char *acks = hw_rm_req_kind_acks(kind);
	if (acks[0])
		snprintf(buf, cap, "request=\"%s\",acks=\"%s\"", hw_rm_req_kind_request(kind), acks);
	else
		snprintf(buf, cap, "request=\"%s\"", hw_rm_req_kind_request(kind));
}

/* x->agg = the sum of every reactor's series (kind, phase). */
static const hwd_prom_series *req_sum(hwd_metrics *x, int kind, int phase)
{
	hwd_prom_series_reset(&x->agg);
	for (int r = 0; r < x->n_req; r++)
		(void)hwd_prom_series_merge_shared(&x->agg, &x->req[r].s[kind][phase]); /* same layout */
	return &x->agg;
}

/* x->agg = the sum of every reactor's series of produce stage st. */
static const hwd_prom_series *stage_sum(hwd_metrics *x, int st)
{
	hwd_prom_series_reset(&x->agg);
	for (int r = 0; r < x->n_req; r++)
		(void)hwd_prom_series_merge_shared(&x->agg, &x->req[r].stage[st]); /* same layout */
	return &x->agg;
}

/* The request histograms (one family per phase, a series per request
 * kind), then the total time's quantiles since start as a summary. */
static void render_requests(hwd_metrics *x, hwd_tbuf *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	char lbl[96];
	for (int ph = 0; ph < HWD_REQ_PHASE_COUNT; ph++) {
		hwd_metric m = req_phase_family[ph];
		hwd_prom_write_header(f, hwd_metric_name(m), hwd_metric_help(m));
		for (int k = 0; k < HW_RM_REQ_KIND_MAX; k++) {
			req_labels(k, lbl, sizeof(lbl));
			hwd_prom_write_series(f, hwd_metric_name(m), lbl, req_sum(x, k, ph));
		}
	}
	hwd_prom_write_header(f, hwd_metric_name(HWD_M_PRODUCE_STAGE_TIME), hwd_metric_help(HWD_M_PRODUCE_STAGE_TIME));
	for (int st = 0; st < HW_PT__COUNT; st++) {
		snprintf(lbl, sizeof(lbl), "stage=\"%s\"", hw_pt_stage_key(st));
		hwd_prom_write_series(f, hwd_metric_name(HWD_M_PRODUCE_STAGE_TIME), lbl, stage_sum(x, st));
	}
	if (fclose(f) == 0 && buf)
		hwd_tb(t, "%s", buf);
	free(buf);
	/* Kafka's TotalTimeMs also reports percentiles: since start, from the
	 * full-resolution histogram; quantile 1 is the max */
	static const double q[] = { 50, 99, 99.9 };
	hwd_mhead(t, HWD_M_REQ_TOTAL_QUANTILES);
	for (int k = 0; k < HW_RM_REQ_KIND_MAX; k++) {
		const hwd_prom_series *s = req_sum(x, k, HWD_REQ_TOTAL);
		const hw_hist *h = s->h;
		req_labels(k, lbl, sizeof(lbl));
		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
			/* the slot's highest equivalent may pass the exact max */
			int64_t v = hw_hist_value_at_percentile(h, q[i]);
			if (v > hw_hist_max(h))
				v = hw_hist_max(h);
			hwd_mdbl(t, HWD_M_REQ_TOTAL_QUANTILES, (double)v / 1e9, "%s,quantile=\"%g\"", lbl, q[i] / 100);
		}
		hwd_mdbl(t, HWD_M_REQ_TOTAL_QUANTILES, (double)hw_hist_max(h) / 1e9, "%s,quantile=\"1\"", lbl);
		hwd_tb(t, "%s_sum{%s} %.9f\n%s_count{%s} %llu\n", hwd_metric_name(HWD_M_REQ_TOTAL_QUANTILES), lbl,
		       (double)s->sum_ns / 1e9, hwd_metric_name(HWD_M_REQ_TOTAL_QUANTILES), lbl,
		       (unsigned long long)hw_hist_count(h));
	}
}

static void render(hwd_metrics *x, hwd_tbuf *t)
{
	hwd_node *n = x->n;
	hwd_tb(t, "# hiwaterd node %d (roles %s)\n", n->cfg->node_id, n->cfg->roles);
	if (n->shards[0].rm)
		hwd_metrics_render_broker(n, t);
	if (x->req_on)
		render_requests(x, t);
	hwd_metrics_render_node(n, t);
	hwd_mone(t, HWD_M_METRICS_SCRAPES, (double)x->served);
}

/* ---- the listener ---- */

static void conn_close(mconn *c)
{
	close(c->fd);
	c->fd = -1;
}

static void respond(hwd_metrics *x, mconn *c)
{
	int ok = !strncmp(c->req, "GET ", 4);
	hwd_tbuf body = { 0 };
	if (ok)
		render(x, &body);
	else
		hwd_tb(&body, "only GET is served\n");
	char hdr[256];
	int hl = snprintf(hdr, sizeof(hdr),
			  "HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n",
			  ok ? "200 OK" : "405 Method Not Allowed", body.n);
	/* Small responses: the socket buffer takes them whole; a short write
	 * (a client that does not read) just truncates that client's answer. */
	int fl = fcntl(c->fd, F_GETFL);
	fcntl(c->fd, F_SETFL, fl & ~O_NONBLOCK);
	struct timeval tv = { .tv_sec = 1 };
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (write(c->fd, hdr, (size_t)hl) != hl || (body.n && write(c->fd, body.b, body.n) != (ssize_t)body.n))
		x->errors++;
	else
		x->served++;
	free(body.b);
	conn_close(c);
}

static int poll_metrics(void *arg)
{
	hwd_metrics *x = arg;
	int work = 0;
	int64_t now = hw_clock_ns(x->n->clock);
	int open = 0;
	for (int i = 0; i < MAX_CONNS; i++)
		open += x->conns[i].fd >= 0;
	if (!open && now < x->next_accept_ns)
		return 0;
	x->next_accept_ns = now + ACCEPT_EVERY_NS;
	struct pollfd pl = { .fd = x->lfd, .events = POLLIN };
	int queued = poll(&pl, 1, 0) > 0 && (pl.revents & POLLIN);
	if (!open && !queued)
		return 0;
	while (queued) {
		int fd = accept4(x->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;
		work++;
		mconn *c = NULL;
		for (int i = 0; i < MAX_CONNS && !c; i++)
			if (x->conns[i].fd < 0)
				c = &x->conns[i];
		if (!c) {
			close(fd);
			x->errors++;
			continue;
		}
		c->fd = fd;
		c->got = 0;
		c->deadline_ns = now + 2000000000LL;
	}
	for (int i = 0; i < MAX_CONNS; i++) {
		mconn *c = &x->conns[i];
		if (c->fd < 0)
			continue;
		ssize_t r = read(c->fd, c->req + c->got, REQ_MAX - 1 - c->got);
		if (r > 0) {
			work++;
			c->got += (size_t)r;
			c->req[c->got] = 0;
			if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n") || c->got == REQ_MAX - 1)
				respond(x, c);
		} else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || now > c->deadline_ns) {
			conn_close(c);
		}
	}
	return work;
}

/* Reactor r's replica manager. */
static hw_rm *reactor_rm(hwd_node *n, int r)
{
	return n->shards[r].rm;
}

int hwd_metrics_start(hwd_node *n, hwd_metrics **out)
{
	*out = NULL;
	hwd_metrics *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->n = n;
	for (int i = 0; i < MAX_CONNS; i++)
		x->conns[i].fd = -1;
	x->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (x->lfd < 0) {
		free(x);
		return -errno;
	}
	int one = 1;
	setsockopt(x->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)n->cfg->metrics_port) };
	/* hiwater.metrics.listen, an IPv4 literal (checked by hwd_config) */
	if (inet_pton(AF_INET, n->cfg->metrics_listen, &a.sin_addr) != 1)
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int e = hw_netaddr_bind_wait(x->lfd, &a, sizeof(a), HW_NETADDR_BIND_WAIT_MS, "metrics listener");
	if (e == 0 && listen(x->lfd, 16) < 0)
		e = -errno;
	if (e < 0) {
		close(x->lfd);
		free(x);
		return e;
	}
	int rc = hw_reactor_add_poller(n->shards[0].reactor, "metrics-http", poll_metrics, NULL, x);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->shards[0].reactor, x->lfd, 0, NULL, NULL, NULL);
	if (rc < 0) {
		close(x->lfd);
		free(x);
		return rc;
	}
	if (n->shards[0].rm) {
		/* Before the data reactors start (hwd_node_run): their threads
		 * are created after these observers are set, which orders the
		 * setting before every call. */
		HW_ASSERT(n->n_started == 0);
		int nr = n->n_reactors;
		int ok = (x->req = calloc((size_t)nr, sizeof(*x->req))) != NULL;
		if (ok)
			x->n_req = nr;
		ok = ok && hwd_prom_series_init(&x->agg) == 0;
		for (int r = 0; r < x->n_req && ok; r++) {
			x->req[r].reactor = r;
			for (int k = 0; k < HW_RM_REQ_KIND_MAX && ok; k++)
				for (int ph = 0; ph < HWD_REQ_PHASE_COUNT && ok; ph++)
					ok = hwd_prom_series_init(&x->req[r].s[k][ph]) == 0;
			for (int st = 0; st < HW_PT__COUNT && ok; st++)
				ok = hwd_prom_series_init(&x->req[r].stage[st]) == 0;
		}
		if (ok) {
			x->req_on = 1;
			for (int r = 0; r < x->n_req; r++)
				hw_rm_set_req_observer(reactor_rm(n, r), on_request, &x->req[r]);
		} else {
			HW_LOG(WARN, "hiwaterd", "out of memory for request histograms: not exported");
		}
	}
	HW_LOG(INFO, "hiwaterd", "metrics on http://%s:%d/metrics", n->cfg->metrics_listen, n->cfg->metrics_port);
	*out = x;
	return 0;
}

void hwd_metrics_stop(hwd_metrics *x)
{
	if (!x)
		return;
	for (int i = 0; i < MAX_CONNS; i++)
		if (x->conns[i].fd >= 0)
			close(x->conns[i].fd);
	close(x->lfd);
	/* Every observer goes before the series it writes into: after
	 * hwd_shards_stop joined the data reactors (hwd_node_fini), so no
	 * reactor is inside an observer; a replica manager never reports once
	 * its observer is cleared. */
	HW_ASSERT(x->n->n_started == 0);
	for (int r = 0; x->req_on && r < x->n_req; r++)
		hw_rm_set_req_observer(reactor_rm(x->n, r), NULL, NULL);
	for (int r = 0; r < x->n_req; r++)
		for (int k = 0; k < HW_RM_REQ_KIND_MAX; k++)
			for (int ph = 0; ph < HWD_REQ_PHASE_COUNT; ph++)
				hwd_prom_series_fini(&x->req[r].s[k][ph]);
	for (int r = 0; r < x->n_req; r++)
		for (int st = 0; st < HW_PT__COUNT; st++)
			hwd_prom_series_fini(&x->req[r].stage[st]);
	hwd_prom_series_fini(&x->agg);
	free(x->req);
	free(x);
}
