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
 *     p50/p99/p99.9/max of the total time as gauges;
 *   - transports: frames, bytes and drops by reason;
 *   - reactor: iterations, busy/idle, sleeps;
 *   - controller: its counters, brokers by state, offline partitions;
 *   - jemalloc: allocated/active/resident bytes (when linked).
 * Names follow Prometheus conventions with a hiwater_ prefix; the Kafka MBean
 * name each mirrors is in the HELP text.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_doorbell.h"
#include "hw_dpdk_rxhold.h"
#include "hw_logging.h"
#include "hwd_node.h"
#include "hwd_prom.h"
#include "hwd_shard.h"
#ifdef HW_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define MAX_CONNS 8
#define REQ_MAX 8192

/* Kafka RequestMetrics phases (hw_rm.h "Request timing").
 * X(NAME, metric family, Kafka MBean name) */
#define HWD_REQ_PHASE_TABLE(X)                                                     \
	X(TOTAL,  "hiwater_request_total_time_seconds",         "TotalTimeMs")         \
	X(QUEUE,  "hiwater_request_queue_time_seconds",         "RequestQueueTimeMs")  \
	X(LOCAL,  "hiwater_request_local_time_seconds",         "LocalTimeMs")         \
	X(REMOTE, "hiwater_request_remote_time_seconds",        "RemoteTimeMs")        \
	X(SEND,   "hiwater_request_response_send_time_seconds", "ResponseSendTimeMs")

typedef enum hwd_req_phase {
#define HWD_REQ_PHASE_ENUM(n, name, mbean) HWD_REQ_##n,
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
 * broker's cycles (perf record). A scrape can wait a millisecond. */
#define ACCEPT_EVERY_NS 1000000LL

/* ---- a growing text buffer ---- */
typedef struct tbuf {
	char *b;
	size_t n, cap;
} tbuf;

__attribute__((format(printf, 2, 3))) static void tb(tbuf *t, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int w = vsnprintf(t->b ? t->b + t->n : NULL, t->b ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (w < 0)
			return;
		if (t->b && (size_t)w < t->cap - t->n) {
			t->n += (size_t)w;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 16384;
		while (cap < t->n + (size_t)w + 1)
			cap *= 2;
		char *nb = realloc(t->b, cap);
		if (!nb)
			return;
		t->b = nb;
		t->cap = cap;
	}
}

static void gauge(tbuf *t, const char *name, const char *help, double v)
{
	tb(t, "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name, name, v);
}

static void counter(tbuf *t, const char *name, const char *help, double v)
{
	tb(t, "# HELP %s %s\n# TYPE %s counter\n%s %.17g\n", name, help, name, name, v);
}

/* Per reactor of a broker (hiwater.reactor.lcores): its loop statistics,
 * its partitions and their request counts, and the frames it handed to /
 * received from other reactors. */
static void render_reactors(hwd_node *n, tbuf *t, const int *parts, uint64_t (*req)[3])
{
	if (!n->shards)
		return;
	tb(t, "# HELP hiwater_reactor_shard_busy_iterations_total loop turns with work, per reactor\n"
	      "# TYPE hiwater_reactor_shard_busy_iterations_total counter\n"
	      "# TYPE hiwater_reactor_shard_iterations_total counter\n"
	      "# TYPE hiwater_reactor_shard_partitions gauge\n"
	      "# TYPE hiwater_reactor_shard_produce_requests_total counter\n"
	      "# TYPE hiwater_reactor_shard_consumer_fetch_requests_total counter\n"
	      "# TYPE hiwater_reactor_shard_follower_fetch_requests_total counter\n"
	      "# TYPE hiwater_reactor_shard_frames_total counter\n");
	for (int k = 0; k < n->n_reactors && k < HWD_MAX_REACTORS; k++) {
		hwd_shard *s = &n->shards[k];
		hw_reactor_stats rs;
		hw_reactor_get_stats(s->reactor ? s->reactor : n->reactor, &rs);
		tb(t, "hiwater_reactor_shard_iterations_total{reactor=\"%d\"} %llu\n", k,
		   (unsigned long long)rs.iterations);
		tb(t, "hiwater_reactor_shard_busy_iterations_total{reactor=\"%d\"} %llu\n", k,
		   (unsigned long long)rs.busy_iterations);
		tb(t, "hiwater_reactor_shard_partitions{reactor=\"%d\"} %d\n", k, parts[k]);
		tb(t, "hiwater_reactor_shard_produce_requests_total{reactor=\"%d\"} %llu\n", k,
		   (unsigned long long)req[k][0]);
		tb(t, "hiwater_reactor_shard_consumer_fetch_requests_total{reactor=\"%d\"} %llu\n", k,
		   (unsigned long long)req[k][1]);
		tb(t, "hiwater_reactor_shard_follower_fetch_requests_total{reactor=\"%d\"} %llu\n", k,
		   (unsigned long long)req[k][2]);
		for (int c = 0; c < HWD_SC_COUNT; c++)
			tb(t, "hiwater_reactor_shard_frames_total{reactor=\"%d\",what=\"%s\"} %llu\n", k,
			   hwd_shard_counter_name(c), (unsigned long long)hwd_shard_counter_get(s, (hwd_shard_counter)c));
	}
	if (!n->dpdk)
		return;
	/* DPDK: each reactor's own queue (hw_dpdk.h): packets it received per
	 * RX queue it polls, packets it sent on its TX queue, and sends its
	 * queue could not carry (peer with fewer rings: sent via reactor 0) */
	tb(t, "# HELP hiwater_reactor_shard_dpdk_rx_packets_total packets received by the reactor, per RX queue\n"
	      "# TYPE hiwater_reactor_shard_dpdk_rx_packets_total counter\n"
	      "# HELP hiwater_reactor_shard_dpdk_tx_packets_total packets the reactor sent on its own TX queue\n"
	      "# TYPE hiwater_reactor_shard_dpdk_tx_packets_total counter\n"
	      "# HELP hiwater_reactor_shard_dpdk_tx_unconnected_total sends refused: the peer did not connect "
	      "this reactor's queue\n"
	      "# TYPE hiwater_reactor_shard_dpdk_tx_unconnected_total counter\n"
	      "# HELP hiwater_reactor_shard_dpdk_rx_steered_total frames steered in software (hw_dpdk.h "
	      "\"Steering\"): out = received on the reactor's queue for another reactor's UDP port and handed "
	      "to it, in = handed to this reactor, dropped = the target's ring was full\n"
	      "# TYPE hiwater_reactor_shard_dpdk_rx_steered_total counter\n");
	for (int k = 0; k < n->n_reactors && k < HWD_MAX_REACTORS; k++) {
		hw_dpdk_stats ds;
		hwd_shard_dpdk_stats(&n->shards[k], &ds);
		for (int q = 0; q < HW_DPDK_MAX_QUEUES; q++)
			if (q == k || ds.rx_queue_packets[q])
				tb(t, "hiwater_reactor_shard_dpdk_rx_packets_total{reactor=\"%d\",queue=\"%d\"} %llu\n",
				   k, q, (unsigned long long)ds.rx_queue_packets[q]);
		tb(t, "hiwater_reactor_shard_dpdk_tx_packets_total{reactor=\"%d\",queue=\"%d\"} %llu\n", k, k,
		   (unsigned long long)ds.tx_packets);
		tb(t, "hiwater_reactor_shard_dpdk_tx_unconnected_total{reactor=\"%d\"} %llu\n", k,
		   (unsigned long long)ds.tx_queue_unconnected);
		tb(t, "hiwater_reactor_shard_dpdk_rx_steered_total{reactor=\"%d\",what=\"out\"} %llu\n"
		      "hiwater_reactor_shard_dpdk_rx_steered_total{reactor=\"%d\",what=\"in\"} %llu\n"
		      "hiwater_reactor_shard_dpdk_rx_steered_total{reactor=\"%d\",what=\"dropped\"} %llu\n",
		   k, (unsigned long long)ds.rx_steered_out, k, (unsigned long long)ds.rx_steered_in, k,
		   (unsigned long long)ds.rx_steer_dropped);
	}
}

/* DPDK ports (hw_dpdk_port_stats: rte_eth_stats, every queue) and the
 * frame-size counters of every reactor's instance, summed: fragments sent
 * and reassembled, reassembly drops by reason, frames refused for size,
 * packets linearised for ports without TX MULTI_SEGS. */
static void render_dpdk_ports(hwd_node *n, tbuf *t)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "mtu", "gauge", "IPv4 MTU hiwater uses on the port (0: no limit, memif/ring)" },
		{ "link_up", "gauge", "1 if the port has link" },
		{ "rx_packets_total", "counter", "packets received (rte_eth_stats ipackets)" },
		{ "tx_packets_total", "counter", "packets sent (opackets)" },
		{ "rx_bytes_total", "counter", "bytes received (ibytes)" },
		{ "tx_bytes_total", "counter", "bytes sent (obytes)" },
		{ "rx_missed_total", "counter", "packets the port dropped, RX queues full (imissed)" },
		{ "rx_errors_total", "counter", "erroneous packets received (ierrors)" },
		{ "tx_errors_total", "counter", "packets the port failed to send (oerrors)" },
		{ "rx_nombuf_total", "counter", "RX mbuf allocation failures (rx_nombuf)" },
		{ "queue_rx_packets_total", "counter", "packets received per RX queue (q_ipackets)" },
		{ "queue_tx_packets_total", "counter", "packets sent per TX queue (q_opackets)" },
		{ "queue_rx_bytes_total", "counter", "bytes received per RX queue (q_ibytes)" },
		{ "queue_tx_bytes_total", "counter", "bytes sent per TX queue (q_obytes)" },
		{ "queue_rx_errors_total", "counter", "packets dropped per RX queue (q_errors)" },
	};
	for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++)
		tb(t, "# HELP hiwater_dpdk_port_%s %s\n# TYPE hiwater_dpdk_port_%s %s\n", fam[f].name, fam[f].help,
		   fam[f].name, fam[f].type);
	for (int i = 0; i < hw_dpdk_port_count(n->dpdk); i++) {
		hw_dpdk_port_stats ps;
		if (hw_dpdk_port_stats_get(n->dpdk, i, &ps))
			continue;
		const char *pn = ps.name;
		tb(t, "hiwater_dpdk_port_mtu{port=\"%s\"} %u\n", pn, ps.mtu);
		tb(t, "hiwater_dpdk_port_link_up{port=\"%s\"} %d\n", pn, ps.link_up);
		const uint64_t v[] = { ps.ipackets, ps.opackets, ps.ibytes, ps.obytes, ps.imissed, ps.ierrors,
				       ps.oerrors, ps.rx_nombuf };
		for (size_t f = 0; f < sizeof v / sizeof v[0]; f++)
			tb(t, "hiwater_dpdk_port_%s{port=\"%s\"} %llu\n", fam[2 + f].name, pn,
			   (unsigned long long)v[f]);
		for (unsigned q = 0; q < ps.n_queues; q++) {
			const uint64_t qv[] = { ps.q_ipackets[q], ps.q_opackets[q], ps.q_ibytes[q], ps.q_obytes[q],
						ps.q_errors[q] };
			for (size_t f = 0; f < sizeof qv / sizeof qv[0]; f++)
				tb(t, "hiwater_dpdk_port_%s{port=\"%s\",queue=\"%u\"} %llu\n", fam[10 + f].name, pn, q,
				   (unsigned long long)qv[f]);
		}
	}
	/* every reactor's instance: reactor 0's directly, the others' snapshots */
	hw_dpdk_stats sum, ds;
	memset(&sum, 0, sizeof sum);
	int nr = n->shards ? n->n_reactors : 1;
	for (int k = 0; k < nr && k < HWD_MAX_REACTORS; k++) {
		if (n->shards)
			hwd_shard_dpdk_stats(&n->shards[k], &ds);
		else
			ds = *hw_dpdk_get_stats(n->dpdk);
		sum.tx_fragmented_frames += ds.tx_fragmented_frames;
		sum.tx_fragments += ds.tx_fragments;
		sum.tx_refused_size += ds.tx_refused_size;
		sum.tx_linearized_packets += ds.tx_linearized_packets;
		sum.tx_linearized_bytes += ds.tx_linearized_bytes;
		sum.frag.fragments += ds.frag.fragments;
		sum.frag.messages_completed += ds.frag.messages_completed;
		sum.frag.fragments_discarded += ds.frag.fragments_discarded;
		for (int r = 0; r < HW_FRAG_DROP__COUNT; r++)
			sum.frag.drops[r] += ds.frag.drops[r];
	}
	counter(t, "hiwater_dpdk_tx_fragmented_frames_total", "frames larger than a packet of their port, sent as fragments",
		(double)sum.tx_fragmented_frames);
	counter(t, "hiwater_dpdk_tx_fragments_total", "fragment packets sent", (double)sum.tx_fragments);
	counter(t, "hiwater_dpdk_tx_refused_size_total", "frames refused (EMSGSIZE): no way to fit the port",
		(double)sum.tx_refused_size);
	counter(t, "hiwater_dpdk_tx_linearized_packets_total",
		"packets built as one mbuf because the port has no TX MULTI_SEGS (records copied, not lent)",
		(double)sum.tx_linearized_packets);
	counter(t, "hiwater_dpdk_tx_linearized_bytes_total", "frame bytes of those packets",
		(double)sum.tx_linearized_bytes);
	counter(t, "hiwater_dpdk_rx_fragments_total", "fragments received", (double)sum.frag.fragments);
	counter(t, "hiwater_dpdk_rx_reassembled_frames_total", "frames reassembled from fragments",
		(double)sum.frag.messages_completed);
	counter(t, "hiwater_dpdk_rx_fragments_discarded_total",
		"fragments stored, then lost with a message that timed out or was evicted",
		(double)sum.frag.fragments_discarded);
	tb(t, "# HELP hiwater_dpdk_rx_fragment_drops_total fragments (TIMEOUT, EVICTED: messages) dropped, by reason\n"
	      "# TYPE hiwater_dpdk_rx_fragment_drops_total counter\n");
	for (int r = 0; r < HW_FRAG_DROP__COUNT; r++)
		tb(t, "hiwater_dpdk_rx_fragment_drops_total{reason=\"%s\"} %llu\n", hw_frag_drop_name(r),
		   (unsigned long long)sum.frag.drops[r]);
}

static void render_broker(hwd_node *n, tbuf *t)
{
	hw_rm_stats st;
	hw_rm_part_info *parts = NULL;
	size_t np = 0;
	int *shard_of = NULL;
	/* every reactor's partitions: reactor 0's read directly, the others'
	 * from their published snapshots (hwd_shard.h) */
	if (hwd_node_partitions(n, &parts, &np, &shard_of, &st) < 0)
		return;
	gauge(t, "hiwater_under_replicated_partitions",
	      "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", st.under_replicated);
	gauge(t, "hiwater_under_min_isr_partitions",
	      "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount", st.under_min_isr);
	gauge(t, "hiwater_offline_replicas", "replicas of this broker with no leader or a failed store",
	      st.offline);
	gauge(t, "hiwater_leader_count", "kafka.server:type=ReplicaManager,name=LeaderCount", st.leaders);
	gauge(t, "hiwater_partition_count", "kafka.server:type=ReplicaManager,name=PartitionCount",
	      st.partitions);
	gauge(t, "hiwater_delayed_produce", "kafka.server:type=DelayedOperationPurgatory,delayedOperation=Produce",
	      (double)st.delayed_produce);
	gauge(t, "hiwater_delayed_fetch", "kafka.server:type=DelayedOperationPurgatory,delayedOperation=Fetch",
	      (double)st.delayed_fetch);
	counter(t, "hiwater_messages_dropped_malformed_total", "engine messages dropped as malformed",
		(double)st.dropped_malformed);
	/* replication throttle (hw_rm.h): quota bounds, measured byte rates,
	 * bytes recorded against each quota, fetches held back */
	gauge(t, "hiwater_leader_replication_throttled_rate", "leader.replication.throttled.rate (bytes/s)",
	      (double)st.leader_throttle_bound);
	gauge(t, "hiwater_follower_replication_throttled_rate", "follower.replication.throttled.rate (bytes/s)",
	      (double)st.follower_throttle_bound);
	gauge(t, "hiwater_leader_replication_byte_rate", "kafka.server:type=LeaderReplication,name=byte-rate",
	      st.leader_throttle_rate);
	gauge(t, "hiwater_follower_replication_byte_rate", "kafka.server:type=FollowerReplication,name=byte-rate",
	      st.follower_throttle_rate);
	counter(t, "hiwater_leader_replication_throttled_bytes_total",
		"replication bytes of leader-throttled partitions sent", (double)st.leader_throttled_bytes);
	counter(t, "hiwater_follower_replication_throttled_bytes_total",
		"replication bytes of follower-throttled partitions fetched", (double)st.follower_throttled_bytes);
	counter(t, "hiwater_leader_replication_throttled_fetches_total",
		"partition answers to out-of-ISR followers sent without records (quota exceeded)",
		(double)st.leader_throttled_fetches);
	counter(t, "hiwater_follower_replication_throttled_fetches_total",
		"fetches that left an out-of-sync partition out (quota exceeded)",
		(double)st.follower_throttled_fetches);
	gauge(t, "hiwater_broker_state", "0 STARTING 1 REGISTERING 2 FENCED 3 RUNNING 4 CONTROLLED_SHUTDOWN",
	      n->bstate);

	uint64_t totals[HW_PM_MAX];
	uint64_t by_reactor[HWD_MAX_REACTORS][3];  /* produce, consumer fetch, follower fetch */
	int parts_of_reactor[HWD_MAX_REACTORS];
	memset(by_reactor, 0, sizeof(by_reactor));
	memset(parts_of_reactor, 0, sizeof(parts_of_reactor));
	memset(totals, 0, sizeof(totals));
	tb(t, "# HELP hiwater_partition per-partition metrics (hw_rm.h HW_PART_METRIC_TABLE; "
	      "IsrShrinksPerSec/IsrExpandsPerSec as counters)\n");
	for (int m = 0; m < HW_PM_MAX; m++)
		tb(t, "# TYPE hiwater_partition_%s %s\n", hw_part_metric_name(m),
		   hw_part_metric_is_gauge(m) ? "gauge" : "counter");
	tb(t, "# TYPE hiwater_partition_high_watermark gauge\n# TYPE hiwater_partition_log_end_offset gauge\n"
	      "# TYPE hiwater_partition_is_leader gauge\n# TYPE hiwater_follower_lag_offsets gauge\n"
	      "# TYPE hiwater_follower_lag_seconds gauge\n");
	for (size_t i = 0; i < np; i++) {
		const hw_rm_part_info *pp = &parts[i];
		hw_rm_part_info pi = *pp;
		hw_tp tp = pi.tp;
		int r = shard_of[i];
		if (r >= 0 && r < HWD_MAX_REACTORS) {
			parts_of_reactor[r]++;
			by_reactor[r][0] += pi.metrics[HW_PM_PRODUCE_REQUESTS];
			by_reactor[r][1] += pi.metrics[HW_PM_CONSUMER_FETCHES];
			by_reactor[r][2] += pi.metrics[HW_PM_FOLLOWER_FETCHES];
		}
		const char *lbl = "topic=\"%s\",partition=\"%u\"";
		char l[160];
		snprintf(l, sizeof(l), lbl, pi.topic, tp.partition);
		for (int m = 0; m < HW_PM_MAX; m++) {
			tb(t, "hiwater_partition_%s%s{%s} %llu\n", hw_part_metric_name(m),
			   hw_part_metric_is_gauge(m) ? "" : "_total", l, (unsigned long long)pi.metrics[m]);
			totals[m] += pi.metrics[m];
		}
		tb(t, "hiwater_partition_high_watermark{%s} %lld\n", l, (long long)pi.hw);
		tb(t, "hiwater_partition_log_end_offset{%s} %lld\n", l, (long long)pi.leo);
		tb(t, "hiwater_partition_is_leader{%s} %d\n", l, pi.role == HW_PART_LEADER);
		for (int f = 0; f < pi.n_followers; f++)
			tb(t, "hiwater_follower_lag_offsets{%s,follower=\"%d\"} %lld\n", l, pi.followers[f].id,
			   (long long)pi.followers[f].lag_offsets);
		for (int f = 0; f < pi.n_followers; f++) /* time since it was last caught up */
			tb(t, "hiwater_follower_lag_seconds{%s,follower=\"%d\"} %.3f\n", l, pi.followers[f].id,
			   pi.followers[f].lag_ms < 0 ? 0.0 : (double)pi.followers[f].lag_ms / 1e3);
	}
	counter(t, "hiwater_isr_shrinks_total", "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec",
		(double)totals[HW_PM_ISR_SHRINKS]);
	counter(t, "hiwater_isr_expands_total", "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec",
		(double)totals[HW_PM_ISR_EXPANDS]);
	counter(t, "hiwater_produce_requests_total",
		"kafka.server:type=BrokerTopicMetrics,name=TotalProduceRequestsPerSec",
		(double)totals[HW_PM_PRODUCE_REQUESTS]);
	counter(t, "hiwater_consumer_fetch_requests_total",
		"kafka.server:type=BrokerTopicMetrics,name=TotalFetchRequestsPerSec (consumers)",
		(double)totals[HW_PM_CONSUMER_FETCHES]);
	counter(t, "hiwater_follower_fetch_requests_total", "fetches from follower replicas",
		(double)totals[HW_PM_FOLLOWER_FETCHES]);
	counter(t, "hiwater_failed_produce_requests_total",
		"kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec",
		(double)totals[HW_PM_PRODUCE_ERRORS]);
	counter(t, "hiwater_failed_fetch_requests_total",
		"kafka.server:type=BrokerTopicMetrics,name=FailedFetchRequestsPerSec (per partition)",
		(double)totals[HW_PM_FETCH_ERRORS]);
	counter(t, "hiwater_bytes_in_total", "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec",
		(double)totals[HW_PM_PRODUCE_BYTES]);
	counter(t, "hiwater_replication_bytes_in_total",
		"kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesInPerSec",
		(double)totals[HW_PM_REPLICA_BYTES_APPENDED]);
	render_reactors(n, t, parts_of_reactor, by_reactor);
	free(parts);
	free(shard_of);
}

static void render_wire(tbuf *t, const char *plane, const hw_wire_stats *w)
{
	tb(t, "hiwater_transport_rx_frames_total{plane=\"%s\"} %llu\n", plane, (unsigned long long)w->rx_frames);
	tb(t, "hiwater_transport_tx_frames_total{plane=\"%s\"} %llu\n", plane, (unsigned long long)w->tx_frames);
	tb(t, "hiwater_transport_rx_bytes_total{plane=\"%s\"} %llu\n", plane, (unsigned long long)w->rx_bytes);
	tb(t, "hiwater_transport_tx_bytes_total{plane=\"%s\"} %llu\n", plane, (unsigned long long)w->tx_bytes);
	for (int r = 0; r < HW_WIRE_DROP__COUNT; r++)
		tb(t, "hiwater_transport_drops_total{plane=\"%s\",reason=\"%s\"} %llu\n", plane,
		   hw_wire_drop_name(r), (unsigned long long)w->drops[r]);
}

/* ---- request latency (Kafka RequestMetrics) ---- */

static const char *const req_phase_family[] = {
#define HWD_REQ_PHASE_FAMILY(n, name, mbean) name,
	HWD_REQ_PHASE_TABLE(HWD_REQ_PHASE_FAMILY)
#undef HWD_REQ_PHASE_FAMILY
};
static const char *const req_phase_mbean[] = {
#define HWD_REQ_PHASE_MBEAN(n, name, mbean) mbean,
	HWD_REQ_PHASE_TABLE(HWD_REQ_PHASE_MBEAN)
#undef HWD_REQ_PHASE_MBEAN
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

static void render_requests(hwd_metrics *x, tbuf *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	char lbl[96], help[160];
	for (int ph = 0; ph < HWD_REQ_PHASE_COUNT; ph++) {
		snprintf(help, sizeof(help), "kafka.network:type=RequestMetrics,name=%s,request={Produce,Fetch,"
			 "FetchFollower} (seconds)", req_phase_mbean[ph]);
		hwd_prom_write_header(f, req_phase_family[ph], help);
		for (int k = 0; k < HW_RM_REQ_KIND_MAX; k++) {
			req_labels(k, lbl, sizeof(lbl));
			hwd_prom_write_series(f, req_phase_family[ph], lbl, req_sum(x, k, ph));
		}
	}
	/* Kafka's TotalTimeMs also reports percentiles: since start, from the
	 * full-resolution histogram */
	static const double q[] = { 50, 99, 99.9 };
	fprintf(f, "# HELP hiwater_request_total_time_quantile_seconds kafka.network:type=RequestMetrics,"
		   "name=TotalTimeMs {50th,99th,999th}Percentile and Max, since start\n"
		   "# TYPE hiwater_request_total_time_quantile_seconds gauge\n");
	for (int k = 0; k < HW_RM_REQ_KIND_MAX; k++) {
		const hw_hist *h = req_sum(x, k, HWD_REQ_TOTAL)->h;
		req_labels(k, lbl, sizeof(lbl));
		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
			/* the slot's highest equivalent may pass the exact max */
			int64_t v = hw_hist_value_at_percentile(h, q[i]);
			if (v > hw_hist_max(h))
				v = hw_hist_max(h);
			fprintf(f, "hiwater_request_total_time_quantile_seconds{%s,quantile=\"%g\"} %.9f\n", lbl,
				q[i] / 100, (double)v / 1e9);
		}
		fprintf(f, "hiwater_request_total_time_quantile_seconds{%s,quantile=\"1\"} %.9f\n", lbl,
			(double)hw_hist_max(h) / 1e9);
	}
	if (fclose(f) == 0 && buf)
		tb(t, "%s", buf);
	free(buf);
}

static void render(hwd_metrics *x, tbuf *t)
{
	hwd_node *n = x->n;
	tb(t, "# hiwaterd node %d (roles %s)\n", n->cfg->node_id, n->cfg->roles);
	if (n->rm)
		render_broker(n, t);
	if (x->req_on)
		render_requests(x, t);
	tb(t, "# TYPE hiwater_transport_rx_frames_total counter\n# TYPE hiwater_transport_tx_frames_total counter\n"
	      "# TYPE hiwater_transport_rx_bytes_total counter\n# TYPE hiwater_transport_tx_bytes_total counter\n"
	      "# TYPE hiwater_transport_drops_total counter\n");
	render_wire(t, "control", &hw_udp_get_stats(n->ctl)->wire);
	if (n->data)
		render_wire(t, "data", &hw_udp_get_stats(n->data)->wire);
	for (int k = 1; n->shards && k < n->n_reactors; k++) {
		char plane[32];
		hw_wire_stats w;
		hwd_shard_wire_stats(&n->shards[k], &w);
		snprintf(plane, sizeof(plane), "data-r%d", k);
		render_wire(t, plane, &w);
	}
	if (n->dpdk) {
		const hw_dpdk_stats *d = hw_dpdk_get_stats(n->dpdk);
		render_wire(t, "data", &d->wire);
		counter(t, "hiwater_dpdk_tx_bytes_zero_copy_total", "record bytes sent as external mbufs",
			(double)d->tx_bytes_zero_copy);
		counter(t, "hiwater_dpdk_tx_bytes_copied_total", "frame bytes copied into mbufs",
			(double)d->tx_bytes_copied);
		counter(t, "hiwater_dpdk_rx_linearized_bytes_total",
			"bytes of multi-segment received frames copied to decode them", (double)d->rx_linearized_bytes);
		counter(t, "hiwater_dpdk_tx_dropped_total", "TX ring full or link down", (double)d->tx_dropped);
		hw_dpdk_rxhold_stats hs;
		hw_dpdk_rx_hold_stats(&hs);
		gauge(t, "hiwater_dpdk_rx_mbufs_held", "received mbufs kept by follower logs (records written from them)",
		      (double)hs.held);
		counter(t, "hiwater_dpdk_rx_mbuf_holds_total", "holds granted on received mbufs", (double)hs.granted);
		counter(t, "hiwater_dpdk_rx_mbuf_holds_refused_total", "holds refused: budget spent (the follower copied)",
			(double)hs.refused);
		render_dpdk_ports(n, t);
		const hw_doorbell_stats *b = hw_dpdk_doorbell_stats(n->dpdk);
		if (b) {
			counter(t, "hiwater_doorbell_rings_total", "memif doorbells rung (peer asleep)",
				(double)b->rings);
			counter(t, "hiwater_doorbell_skipped_total", "bursts to an awake peer", (double)b->skipped);
			counter(t, "hiwater_doorbell_received_total", "our doorbell rung", (double)b->received);
			counter(t, "hiwater_doorbell_remaps_total",
				"a peer restarted under the same node id: its new flag file mapped", (double)b->remaps);
		}
	}
	hw_reactor_stats rs;
	hw_reactor_get_stats(n->reactor, &rs);
	counter(t, "hiwater_reactor_iterations_total", "reactor loop turns", (double)rs.iterations);
	counter(t, "hiwater_reactor_busy_iterations_total", "turns in which some poller did work",
		(double)rs.busy_iterations);
	counter(t, "hiwater_reactor_idle_iterations_total", "turns with no work", (double)rs.idle_iterations);
	counter(t, "hiwater_reactor_sleeps_total", "epoll sleeps", (double)rs.sleeps);
	counter(t, "hiwater_reactor_slept_seconds_total", "time asleep", (double)rs.slept_ns / 1e9);
	counter(t, "hiwater_reactor_wakeups_total", "sleeps ended by a wait source", (double)rs.wakeups);
	counter(t, "hiwater_reactor_yields_total", "sched_yield calls in spin windows", (double)rs.yields);
	counter(t, "hiwater_reactor_poller_errors_total", "pollers that returned an error", (double)rs.poller_errors);
	if (n->ctrl) {
		tb(t, "# TYPE hiwater_controller_events_total counter\n");
		for (int i = 0; i < HW_CTRL_COUNTER_COUNT; i++)
			tb(t, "hiwater_controller_events_total{event=\"%s\"} %llu\n", hw_ctrl_counter_name(i),
			   (unsigned long long)hw_ctrl_counter_get(n->ctrl, (hw_ctrl_counter)i));
		int by_state[HW_CTRL_BROKER_STATE_COUNT] = { 0 };
		hw_ctrl_broker_info bi;
		for (int i = 0; hw_ctrl_broker_at(n->ctrl, i, &bi) == 0; i++)
			if (bi.state < HW_CTRL_BROKER_STATE_COUNT)
				by_state[bi.state]++;
		tb(t, "# TYPE hiwater_controller_brokers gauge\n");
		for (int s = 0; s < HW_CTRL_BROKER_STATE_COUNT; s++)
			tb(t, "hiwater_controller_brokers{state=\"%s\"} %d\n", hw_ctrl_broker_state_name(s),
			   by_state[s]);
		int offline = 0, parts = 0;
		hw_ctrl_topic_info ti;
		for (int i = 0; hw_ctrl_topic_at(n->ctrl, i, &ti) == 0; i++)
			for (int p = 0; p < ti.partitions; p++) {
				hw_partition_state s;
				if (hw_ctrl_partition(n->ctrl, (hw_tp){ ti.id, (uint32_t)p }, &s) == 0) {
					parts++;
					offline += s.leader < 0;
				}
			}
		gauge(t, "hiwater_offline_partitions",
		      "kafka.controller:type=KafkaController,name=OfflinePartitionsCount", offline);
		gauge(t, "hiwater_global_partition_count",
		      "kafka.controller:type=KafkaController,name=GlobalPartitionCount", parts);
	}
#ifdef HW_HAVE_JEMALLOC
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);
	mallctl("epoch", &epoch, &sz, &epoch, sz);
	const char *names[] = { "stats.allocated", "stats.active", "stats.resident" };
	for (int i = 0; i < 3; i++) {
		size_t v = 0;
		sz = sizeof(v);
		if (mallctl(names[i], &v, &sz, NULL, 0) == 0)
			tb(t, "# TYPE hiwater_jemalloc_%s_bytes gauge\nhiwater_jemalloc_%s_bytes %zu\n", names[i] + 6,
			   names[i] + 6, v);
	}
#endif
	counter(t, "hiwater_metrics_scrapes_total", "HTTP scrapes served", (double)x->served);
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
	tbuf body = { 0 };
	if (ok)
		render(x, &body);
	else
		tb(&body, "only GET is served\n");
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
	for (;;) {
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

/* Reactor r's replica manager (shard 0's is the node's). */
static hw_rm *reactor_rm(hwd_node *n, int r)
{
	return r == 0 ? n->rm : n->shards[r].rm;
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
	if (bind(x->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(x->lfd, 16) < 0) {
		int e = -errno;
		close(x->lfd);
		free(x);
		return e;
	}
	int rc = hw_reactor_add_poller(n->reactor, "metrics-http", poll_metrics, NULL, x);
	if (rc == 0)
		rc = hw_reactor_add_wait_fd(n->reactor, x->lfd, 0, NULL, NULL, NULL);
	if (rc < 0) {
		close(x->lfd);
		free(x);
		return rc;
	}
	if (n->rm) {
		/* Before the data reactors start (hwd_node_run): their threads
		 * are created after these observers are set, which orders the
		 * setting before every call. */
		HW_ASSERT(n->n_started == 0);
		int nr = n->shards ? n->n_reactors : 1;
		int ok = (x->req = calloc((size_t)nr, sizeof(*x->req))) != NULL;
		if (ok)
			x->n_req = nr;
		ok = ok && hwd_prom_series_init(&x->agg) == 0;
		for (int r = 0; r < x->n_req && ok; r++) {
			x->req[r].reactor = r;
			for (int k = 0; k < HW_RM_REQ_KIND_MAX && ok; k++)
				for (int ph = 0; ph < HWD_REQ_PHASE_COUNT && ok; ph++)
					ok = hwd_prom_series_init(&x->req[r].s[k][ph]) == 0;
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
	hwd_prom_series_fini(&x->agg);
	free(x->req);
	free(x);
}
