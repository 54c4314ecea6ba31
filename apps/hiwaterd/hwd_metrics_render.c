/* hwd_metrics_render.c — a node's metric families as Prometheus text
 * (everything but the request histograms, which hwd_metrics.c owns).
 *
 * Every family is written through its hwd_metric_defs.h id: one HELP and
 * TYPE, then all its samples together (a family's samples are never split
 * by another family's), values read directly from their owners on the
 * metrics reactor (reactor 0): reactor 0's structures directly, the other
 * reactors' through their published snapshots and relaxed counters
 * (hwd_shard.h). */
#include <stdlib.h>
#include <string.h>
#include "hw_doorbell.h"
#include "hw_dpdk_rxhold.h"
#include "hw_ctrl_zk.h"
#include "hwd_group.h"
#include "hwd_kafka.h"
#include "hwd_metrics_render.h"
#include "hwd_prom.h"
#include "hwd_shard.h"
#ifdef HW_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

/* ---- broker ---- */

static void render_rm(hwd_node *n, hwd_tbuf *t, const hw_rm_stats *st, const hw_rm_part_info *parts, size_t np)
{
	hwd_mone(t, HWD_M_UNDER_REPLICATED, st->under_replicated);
	hwd_mone(t, HWD_M_UNDER_MIN_ISR, st->under_min_isr);
	/* each partition once: one refused a log is also OFFLINE in its rm */
	hwd_mone(t, HWD_M_OFFLINE_REPLICAS, hwd_broker_offline_replica_count(n, parts, np));
	hwd_mone(t, HWD_M_OFFLINE_LOG_DIRS, hwd_broker_offline_log_dirs(n));
	hwd_mone(t, HWD_M_LEADER_PARTITIONS, st->leaders);
	hwd_mone(t, HWD_M_PARTITIONS, st->partitions);
	hwd_mone(t, HWD_M_DELAYED_PRODUCE, (double)st->delayed_produce);
	hwd_mone(t, HWD_M_DELAYED_FETCH, (double)st->delayed_fetch);
	hwd_mone(t, HWD_M_MESSAGES_DROPPED_MALFORMED, (double)st->dropped_malformed);
	hw_broker_stats bs = { 0 };
	if (n->broker)
		hw_broker_get_stats(n->broker, &bs);
	hwd_mone(t, HWD_M_BROKER_CONTROLLER_EPOCH,
		 (double)(st->controller_epoch > bs.controller_epoch ? st->controller_epoch : bs.controller_epoch));
	hwd_mhead(t, HWD_M_BROKER_STALE_CONTROLLER);
	hwd_mu64(t, HWD_M_BROKER_STALE_CONTROLLER, st->stale_controller_pushes, "message=\"PartitionState\"");
	hwd_mu64(t, HWD_M_BROKER_STALE_CONTROLLER, st->stale_controller_alter_resps, "message=\"AlterPartitionResponse\"");
	hwd_mu64(t, HWD_M_BROKER_STALE_CONTROLLER, bs.stale_controller_heartbeat_resps,
		 "message=\"BrokerHeartbeatResponse\"");
	hwd_mone(t, HWD_M_BROKER_CONTROLLER_SWITCHES, (double)bs.controller_switches);
	hwd_mhead(t, HWD_M_MESSAGES_REJECTED);
	for (int r = 0; r < HW_RM_REJECT__COUNT; r++)
		hwd_mu64(t, HWD_M_MESSAGES_REJECTED, st->rejected[r], "reason=\"%s\"", hw_rm_reject_name(r));
	hwd_mone(t, HWD_M_BROKER_STATE, n->broker ? hw_broker_get_state(n->broker) : HW_BROLE_STARTING);
	/* replication throttle (hw_rm.h): quota bounds, measured byte rates,
	 * bytes recorded against each quota, fetches held back */
	hwd_mone(t, HWD_M_LEADER_THROTTLE_RATE, (double)st->leader_throttle_bound);
	hwd_mone(t, HWD_M_FOLLOWER_THROTTLE_RATE, (double)st->follower_throttle_bound);
	hwd_mone(t, HWD_M_LEADER_REPLICATION_RATE, st->leader_throttle_rate);
	hwd_mone(t, HWD_M_FOLLOWER_REPLICATION_RATE, st->follower_throttle_rate);
	hwd_mone(t, HWD_M_LEADER_THROTTLED_BYTES, (double)st->leader_throttled_bytes);
	hwd_mone(t, HWD_M_FOLLOWER_THROTTLED_BYTES, (double)st->follower_throttled_bytes);
	hwd_mone(t, HWD_M_LEADER_THROTTLED_FETCHES, (double)st->leader_throttled_fetches);
	hwd_mone(t, HWD_M_FOLLOWER_THROTTLED_FETCHES, (double)st->follower_throttled_fetches);
}

#define PART_LBL "topic=\"%s\",partition=\"%u\""

/* Per partition: the engine's table (HW_PART_METRIC_TABLE), then HW, LEO,
 * role and every follower's lag, one family at a time. */
static void render_partitions(hwd_tbuf *t, const hw_rm_part_info *parts, size_t np)
{
	for (int m = 0; m < HW_PM_MAX; m++) {
		char nm[128];
		hwd_part_family(m, nm, sizeof nm);
		hwd_tb(t, "# HELP %s %s\n# TYPE %s %s\n", nm, hw_part_metric_help(m), nm,
		       hw_part_metric_is_gauge(m) ? "gauge" : "counter");
		int per = hw_part_metric_per_unit(m);
		for (size_t i = 0; i < np; i++) {
			uint64_t v = parts[i].metrics[m];
			if (per == 1)
				hwd_tb(t, "%s{" PART_LBL "} %llu\n", nm, parts[i].topic, parts[i].tp.partition,
				       (unsigned long long)v);
			else
				hwd_tb(t, "%s{" PART_LBL "} %.17g\n", nm, parts[i].topic, parts[i].tp.partition,
				       (double)v / per);
		}
	}
	hwd_mhead(t, HWD_M_PART_HW);
	for (size_t i = 0; i < np; i++)
		hwd_mdbl(t, HWD_M_PART_HW, (double)parts[i].hw, PART_LBL, parts[i].topic, parts[i].tp.partition);
	hwd_mhead(t, HWD_M_PART_LEO);
	for (size_t i = 0; i < np; i++)
		hwd_mdbl(t, HWD_M_PART_LEO, (double)parts[i].leo, PART_LBL, parts[i].topic, parts[i].tp.partition);
	hwd_mhead(t, HWD_M_PART_IS_LEADER);
	for (size_t i = 0; i < np; i++)
		hwd_mu64(t, HWD_M_PART_IS_LEADER, parts[i].role == HW_PART_LEADER, PART_LBL, parts[i].topic,
			 parts[i].tp.partition);
	hwd_mhead(t, HWD_M_FOLLOWER_LAG_OFFSETS);
	for (size_t i = 0; i < np; i++)
		for (int f = 0; f < parts[i].n_followers; f++)
			hwd_mdbl(t, HWD_M_FOLLOWER_LAG_OFFSETS, (double)parts[i].followers[f].lag_offsets,
				 PART_LBL ",follower=\"%d\"", parts[i].topic, parts[i].tp.partition,
				 parts[i].followers[f].id);
	hwd_mhead(t, HWD_M_FOLLOWER_LAG_SECONDS);
	for (size_t i = 0; i < np; i++)
		for (int f = 0; f < parts[i].n_followers; f++) /* time since it was last caught up */
			hwd_mdbl(t, HWD_M_FOLLOWER_LAG_SECONDS,
				 parts[i].followers[f].lag_ms < 0 ? 0.0 : (double)parts[i].followers[f].lag_ms / 1e3,
				 PART_LBL ",follower=\"%d\"", parts[i].topic, parts[i].tp.partition,
				 parts[i].followers[f].id);
}

/* The broker's totals over its partitions (Kafka's BrokerTopicMetrics). */
static void render_totals(hwd_tbuf *t, const uint64_t *totals)
{
	static const struct {
		hwd_metric m;
		int pm;
	} tot[] = {
		{ HWD_M_ISR_SHRINKS, HW_PM_ISR_SHRINKS },
		{ HWD_M_ISR_EXPANDS, HW_PM_ISR_EXPANDS },
		{ HWD_M_PRODUCE_REQUESTS, HW_PM_PRODUCE_REQUESTS },
		{ HWD_M_CONSUMER_FETCH_REQUESTS, HW_PM_CONSUMER_FETCHES },
		{ HWD_M_FOLLOWER_FETCH_REQUESTS, HW_PM_FOLLOWER_FETCHES },
		{ HWD_M_FAILED_PRODUCE_REQUESTS, HW_PM_PRODUCE_ERRORS },
		{ HWD_M_FAILED_FETCH_REQUESTS, HW_PM_FETCH_ERRORS },
		{ HWD_M_BYTES_IN, HW_PM_PRODUCE_BYTES },
		{ HWD_M_REPLICATION_BYTES_IN, HW_PM_REPLICA_BYTES_APPENDED },
	};
	for (size_t i = 0; i < sizeof tot / sizeof tot[0]; i++) {
		hwd_mhead(t, tot[i].m);
		hwd_mu64(t, tot[i].m, totals[tot[i].pm], NULL);
	}
}

/* Per reactor of a broker (hiwater.reactor.lcores): its loop statistics,
 * its partitions and their request counts, and the frames it handed to /
 * received from other reactors. req[k]: produce, consumer fetch, follower
 * fetch requests of reactor k's partitions. */
static void render_reactors(hwd_node *n, hwd_tbuf *t, const int *parts, uint64_t (*req)[3])
{
	if (!n->cfg->is_broker)
		return;
	int nr = n->n_reactors < HWD_MAX_REACTORS ? n->n_reactors : HWD_MAX_REACTORS;
	hw_reactor_stats rs[HWD_MAX_REACTORS];
	for (int k = 0; k < nr; k++)
		hw_reactor_get_stats(n->shards[k].reactor, &rs[k]);
	hwd_mhead(t, HWD_M_SHARD_ITERATIONS);
	for (int k = 0; k < nr; k++)
		hwd_mu64(t, HWD_M_SHARD_ITERATIONS, rs[k].iterations, "reactor=\"%d\"", k);
	hwd_mhead(t, HWD_M_SHARD_BUSY_ITERATIONS);
	for (int k = 0; k < nr; k++)
		hwd_mu64(t, HWD_M_SHARD_BUSY_ITERATIONS, rs[k].busy_iterations, "reactor=\"%d\"", k);
	hwd_mhead(t, HWD_M_SHARD_PARTITIONS);
	for (int k = 0; k < nr; k++)
		hwd_mu64(t, HWD_M_SHARD_PARTITIONS, (uint64_t)parts[k], "reactor=\"%d\"", k);
	static const hwd_metric reqm[3] = { HWD_M_SHARD_PRODUCE_REQUESTS, HWD_M_SHARD_CONSUMER_FETCHES,
					    HWD_M_SHARD_FOLLOWER_FETCHES };
	for (int i = 0; i < 3; i++) {
		hwd_mhead(t, reqm[i]);
		for (int k = 0; k < nr; k++)
			hwd_mu64(t, reqm[i], req[k][i], "reactor=\"%d\"", k);
	}
	hwd_mhead(t, HWD_M_SHARD_FRAMES);
	for (int k = 0; k < nr; k++)
		for (int c = 0; c < HWD_SC_COUNT; c++)
			hwd_mu64(t, HWD_M_SHARD_FRAMES, hwd_shard_counter_get(&n->shards[k], (hwd_shard_counter)c),
				 "reactor=\"%d\",what=\"%s\"", k, hwd_shard_counter_name(c));
	if (!n->shards[0].dpdk)
		return;
	/* DPDK: each reactor's own queue (hw_dpdk.h): packets it received per
	 * RX queue it polls, packets it sent on its TX queue, and sends its
	 * queue could not carry (peer with fewer rings: sent via reactor 0) */
	hw_dpdk_stats ds[HWD_MAX_REACTORS];
	for (int k = 0; k < nr; k++)
		hwd_shard_dpdk_stats(&n->shards[k], &ds[k]);
	hwd_mhead(t, HWD_M_SHARD_DPDK_RX_PACKETS);
	for (int k = 0; k < nr; k++)
		for (int q = 0; q < HW_DPDK_MAX_QUEUES; q++)
			if (q == k || ds[k].rx_queue_packets[q])
				hwd_mu64(t, HWD_M_SHARD_DPDK_RX_PACKETS, ds[k].rx_queue_packets[q],
					 "reactor=\"%d\",queue=\"%d\"", k, q);
	hwd_mhead(t, HWD_M_SHARD_DPDK_TX_PACKETS);
	for (int k = 0; k < nr; k++)
		hwd_mu64(t, HWD_M_SHARD_DPDK_TX_PACKETS, ds[k].tx_packets, "reactor=\"%d\",queue=\"%d\"", k, k);
	hwd_mhead(t, HWD_M_SHARD_DPDK_TX_UNCONNECTED);
	for (int k = 0; k < nr; k++)
		hwd_mu64(t, HWD_M_SHARD_DPDK_TX_UNCONNECTED, ds[k].tx_queue_unconnected, "reactor=\"%d\"", k);
	/* software steering (hw_dpdk.h "Steering"): hand-offs out and in, and
	 * those lost to a full ring, a family of their own (not steered) */
	hwd_mhead(t, HWD_M_SHARD_DPDK_RX_STEERED);
	for (int k = 0; k < nr; k++) {
		hwd_mu64(t, HWD_M_SHARD_DPDK_RX_STEERED, ds[k].rx_steered_out, "reactor=\"%d\",what=\"out\"", k);
		hwd_mu64(t, HWD_M_SHARD_DPDK_RX_STEERED, ds[k].rx_steered_in, "reactor=\"%d\",what=\"in\"", k);
	}
	hwd_mhead(t, HWD_M_SHARD_DPDK_RX_STEER_DROPPED);
	for (int k = 0; k < nr; k++)
		hwd_mu64(t, HWD_M_SHARD_DPDK_RX_STEER_DROPPED, ds[k].rx_steer_dropped, "reactor=\"%d\"", k);
}

/* "LIST_OFFSETS" -> "ListOffsets" (Kafka's request names). */
static void kafka_request_name(const char *table_name, char *out, size_t cap)
{
	size_t o = 0;
	int up = 1;
	for (const char *p = table_name; *p && o + 1 < cap; p++) {
		if (*p == '_') {
			up = 1;
			continue;
		}
		out[o++] = up ? *p : (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		up = 0;
	}
	out[o] = 0;
}

/* The Kafka listener's request and connection counters (reactor 0). */
static void render_kafka(hwd_node *n, hwd_tbuf *t)
{
	const hw_ksrv_stats *ks = hwd_kafka_stats(n);
	if (!ks)
		return;
	char api[64];
	hwd_mhead(t, HWD_M_KAFKA_REQUESTS);
	for (int i = 0; i < HW_KAPI__COUNT; i++)
		if (hw_kafka_api_at(i)->min >= 0) {
			kafka_request_name(hw_kafka_api_at(i)->name, api, sizeof api);
			hwd_mu64(t, HWD_M_KAFKA_REQUESTS, ks->api[i].requests, "api=\"%s\"", api);
		}
	hwd_mhead(t, HWD_M_KAFKA_REQUEST_ERRORS);
	for (int i = 0; i < HW_KAPI__COUNT; i++)
		if (hw_kafka_api_at(i)->min >= 0) {
			kafka_request_name(hw_kafka_api_at(i)->name, api, sizeof api);
			hwd_mu64(t, HWD_M_KAFKA_REQUEST_ERRORS, ks->api[i].errors, "api=\"%s\"", api);
		}
	const char *hn = hwd_metric_name(HWD_M_KAFKA_REQUEST_TIME);
	hwd_mhead(t, HWD_M_KAFKA_REQUEST_TIME);
	for (int i = 0; i < HW_KAPI__COUNT; i++) {
		if (hw_kafka_api_at(i)->min < 0)
			continue;
		const hw_ksrv_api_stats *a = &ks->api[i];
		kafka_request_name(hw_kafka_api_at(i)->name, api, sizeof api);
		uint64_t cum = 0;
		for (int b = 0; b < HW_KSRV_LAT_BUCKETS - 1; b++) {
			cum += a->latency_bucket[b];
			hwd_tb(t, "%s_bucket{api=\"%s\",le=\"%g\"} %llu\n", hn, api, hw_ksrv_lat_bound_s(b),
			       (unsigned long long)cum);
		}
		cum += a->latency_bucket[HW_KSRV_LAT_BUCKETS - 1];
		hwd_tb(t, "%s_bucket{api=\"%s\",le=\"+Inf\"} %llu\n", hn, api, (unsigned long long)cum);
		hwd_tb(t, "%s_sum{api=\"%s\"} %.9f\n", hn, api, (double)a->latency_sum_ns / 1e9);
		hwd_tb(t, "%s_count{api=\"%s\"} %llu\n", hn, api, (unsigned long long)cum);
	}
	hwd_mone(t, HWD_M_KAFKA_CONNECTIONS, (double)ks->connections_open);
	hwd_mone(t, HWD_M_KAFKA_CONNECTIONS_OPENED, (double)ks->connections_opened);
	hwd_mhead(t, HWD_M_KAFKA_CONNECTIONS_CLOSED);
	for (int r = 0; r < HW_KSRV_CLOSE__COUNT; r++)
		hwd_mu64(t, HWD_M_KAFKA_CONNECTIONS_CLOSED, ks->closes[r], "reason=\"%s\"", hw_ksrv_close_name(r));
}

/* The group coordinator's gauges and counters (reactor 0). */
static void render_group(hwd_node *n, hwd_tbuf *t)
{
	int32_t loaded = 0;
	const hw_gstats *gs = hwd_group_stats(n, &loaded);
	if (!gs)
		return;
	hwd_mone(t, HWD_M_GROUPS, (double)gs->groups);
	hwd_mone(t, HWD_M_GROUP_MEMBERS, (double)gs->members);
	hwd_mone(t, HWD_M_GROUP_OFFSETS_PARTITIONS, (double)loaded);
	hwd_mhead(t, HWD_M_GROUP_REBALANCES);
	for (int r = 0; r < HW_GR__COUNT; r++)
		hwd_mu64(t, HWD_M_GROUP_REBALANCES, gs->rebalances[r], "reason=\"%s\"", hw_group_reason_name(r));
	hwd_mhead(t, HWD_M_GROUP_MEMBERS_REMOVED);
	for (int r = 0; r < HW_GR__COUNT; r++)
		hwd_mu64(t, HWD_M_GROUP_MEMBERS_REMOVED, gs->removed[r], "reason=\"%s\"", hw_group_reason_name(r));
	hwd_mone(t, HWD_M_GROUP_OFFSET_COMMITS, (double)gs->commits);
	hwd_mone(t, HWD_M_GROUP_OFFSET_COMMIT_ERRORS, (double)gs->commit_errors);
	hwd_mhead(t, HWD_M_GROUP_REPLAY_DROPS);
	for (int d = 0; d < HW_GD__COUNT; d++)
		hwd_mu64(t, HWD_M_GROUP_REPLAY_DROPS, gs->drops[d], "reason=\"%s\"", hw_group_drop_name(d));
}

void hwd_metrics_render_broker(hwd_node *n, hwd_tbuf *t)
{
	hw_rm_stats st;
	hw_rm_part_info *parts = NULL;
	size_t np = 0;
	int *shard_of = NULL;
	/* every reactor's partitions: reactor 0's read directly, the others'
	 * from their published snapshots (hwd_shard.h) */
	if (hwd_node_partitions(n, &parts, &np, &shard_of, &st) < 0)
		return;
	render_rm(n, t, &st, parts, np);
	render_kafka(n, t);
	render_group(n, t);
	uint64_t totals[HW_PM_MAX];
	uint64_t by_reactor[HWD_MAX_REACTORS][3]; /* produce, consumer fetch, follower fetch */
	int parts_of_reactor[HWD_MAX_REACTORS];
	memset(by_reactor, 0, sizeof(by_reactor));
	memset(parts_of_reactor, 0, sizeof(parts_of_reactor));
	memset(totals, 0, sizeof(totals));
	for (size_t i = 0; i < np; i++) {
		int r = shard_of[i];
		if (r >= 0 && r < HWD_MAX_REACTORS) {
			parts_of_reactor[r]++;
			by_reactor[r][0] += parts[i].metrics[HW_PM_PRODUCE_REQUESTS];
			by_reactor[r][1] += parts[i].metrics[HW_PM_CONSUMER_FETCHES];
			by_reactor[r][2] += parts[i].metrics[HW_PM_FOLLOWER_FETCHES];
		}
		for (int m = 0; m < HW_PM_MAX; m++)
			totals[m] += parts[i].metrics[m];
	}
	render_partitions(t, parts, np);
	render_totals(t, totals);
	render_reactors(n, t, parts_of_reactor, by_reactor);
	free(parts);
	free(shard_of);
}

/* ---- transports ---- */

/* Every plane's wire counters, family by family: control, the data plane
 * of reactor 0 (kernel UDP or DPDK) and the other reactors' own. */
static void render_transport(hwd_node *n, hwd_tbuf *t)
{
	struct {
		char name[16];
		hw_wire_stats w;
		uint64_t forgotten;
	} pl[2 + HWD_MAX_REACTORS];
	int np = 0;
	snprintf(pl[np].name, sizeof pl[np].name, "control");
	pl[np].forgotten = hw_udp_get_stats(n->ctl)->forgotten;
	pl[np++].w = hw_udp_get_stats(n->ctl)->wire;
	const hwd_shard *s0 = &n->shards[0];
	if (s0->data) {
		snprintf(pl[np].name, sizeof pl[np].name, "data");
		pl[np].forgotten = hw_udp_get_stats(s0->data)->forgotten;
		pl[np++].w = hw_udp_get_stats(s0->data)->wire;
	} else if (s0->dpdk) {
		snprintf(pl[np].name, sizeof pl[np].name, "data");
		pl[np].forgotten = hw_dpdk_get_stats(s0->dpdk)->forgotten;
		pl[np++].w = hw_dpdk_get_stats(s0->dpdk)->wire;
	}
	for (int k = 1; n->shards && k < n->n_reactors && k < HWD_MAX_REACTORS; k++) {
		snprintf(pl[np].name, sizeof pl[np].name, "data-r%d", k);
		pl[np].forgotten = hwd_shard_neigh_forgotten(&n->shards[k]);
		hwd_shard_wire_stats(&n->shards[k], &pl[np++].w);
	}
	hwd_mhead(t, HWD_M_TRANSPORT_RX_FRAMES);
	for (int i = 0; i < np; i++)
		hwd_mu64(t, HWD_M_TRANSPORT_RX_FRAMES, pl[i].w.rx_frames, "plane=\"%s\"", pl[i].name);
	hwd_mhead(t, HWD_M_TRANSPORT_TX_FRAMES);
	for (int i = 0; i < np; i++)
		hwd_mu64(t, HWD_M_TRANSPORT_TX_FRAMES, pl[i].w.tx_frames, "plane=\"%s\"", pl[i].name);
	hwd_mhead(t, HWD_M_TRANSPORT_RX_BYTES);
	for (int i = 0; i < np; i++)
		hwd_mu64(t, HWD_M_TRANSPORT_RX_BYTES, pl[i].w.rx_bytes, "plane=\"%s\"", pl[i].name);
	hwd_mhead(t, HWD_M_TRANSPORT_TX_BYTES);
	for (int i = 0; i < np; i++)
		hwd_mu64(t, HWD_M_TRANSPORT_TX_BYTES, pl[i].w.tx_bytes, "plane=\"%s\"", pl[i].name);
	hwd_mhead(t, HWD_M_TRANSPORT_DROPS);
	for (int i = 0; i < np; i++)
		for (int r = 0; r < HW_WIRE_DROP__COUNT; r++)
			hwd_mu64(t, HWD_M_TRANSPORT_DROPS, pl[i].w.drops[r], "plane=\"%s\",reason=\"%s\"", pl[i].name,
				 hw_wire_drop_name(r));
	hwd_mhead(t, HWD_M_TRANSPORT_RX_UNKNOWN_TAGS);
	for (int i = 0; i < np; i++)
		hwd_mu64(t, HWD_M_TRANSPORT_RX_UNKNOWN_TAGS, pl[i].w.rx_unknown_tags, "plane=\"%s\"", pl[i].name);
	hwd_mhead(t, HWD_M_TRANSPORT_NEIGHBOURS_FORGOTTEN);
	for (int i = 0; i < np; i++)
		hwd_mu64(t, HWD_M_TRANSPORT_NEIGHBOURS_FORGOTTEN, pl[i].forgotten, "plane=\"%s\"", pl[i].name);
}

/* DPDK ports (hw_dpdk_port_stats: rte_eth_stats, every queue). */
static void render_dpdk_ports(hwd_node *n, hwd_tbuf *t)
{
	int nports = hw_dpdk_port_count(n->shards[0].dpdk);
	hw_dpdk_port_stats *ps = calloc(nports > 0 ? (size_t)nports : 1, sizeof(*ps));
	if (!ps)
		return;
	int *ok = calloc(nports > 0 ? (size_t)nports : 1, sizeof(*ok));
	for (int i = 0; ok && i < nports; i++)
		ok[i] = hw_dpdk_port_stats_get(n->shards[0].dpdk, i, &ps[i]) == 0;
	hwd_mhead(t, HWD_M_DPDK_PORT_MTU);
	for (int i = 0; ok && i < nports; i++)
		if (ok[i])
			hwd_mu64(t, HWD_M_DPDK_PORT_MTU, ps[i].mtu, "port=\"%s\"", ps[i].name);
	hwd_mhead(t, HWD_M_DPDK_PORT_LINK_UP);
	for (int i = 0; ok && i < nports; i++)
		if (ok[i])
			hwd_mu64(t, HWD_M_DPDK_PORT_LINK_UP, (uint64_t)ps[i].link_up, "port=\"%s\"", ps[i].name);
	static const hwd_metric pm[] = { HWD_M_DPDK_PORT_RX_PACKETS, HWD_M_DPDK_PORT_TX_PACKETS,
					 HWD_M_DPDK_PORT_RX_BYTES,   HWD_M_DPDK_PORT_TX_BYTES,
					 HWD_M_DPDK_PORT_RX_MISSED,  HWD_M_DPDK_PORT_RX_ERRORS,
					 HWD_M_DPDK_PORT_TX_ERRORS,  HWD_M_DPDK_PORT_RX_NOMBUF };
	for (size_t f = 0; f < sizeof pm / sizeof pm[0]; f++) {
		hwd_mhead(t, pm[f]);
		for (int i = 0; ok && i < nports; i++) {
			if (!ok[i])
				continue;
			const uint64_t v[] = { ps[i].ipackets, ps[i].opackets, ps[i].ibytes,  ps[i].obytes,
					       ps[i].imissed,  ps[i].ierrors,  ps[i].oerrors, ps[i].rx_nombuf };
			hwd_mu64(t, pm[f], v[f], "port=\"%s\"", ps[i].name);
		}
	}
	static const hwd_metric qm[] = { HWD_M_DPDK_PORT_Q_RX_PACKETS, HWD_M_DPDK_PORT_Q_TX_PACKETS,
					 HWD_M_DPDK_PORT_Q_RX_BYTES, HWD_M_DPDK_PORT_Q_TX_BYTES,
					 HWD_M_DPDK_PORT_Q_RX_ERRORS };
	for (size_t f = 0; f < sizeof qm / sizeof qm[0]; f++) {
		hwd_mhead(t, qm[f]);
		for (int i = 0; ok && i < nports; i++)
			for (unsigned q = 0; ok[i] && q < ps[i].n_queues; q++) {
				const uint64_t qv[] = { ps[i].q_ipackets[q], ps[i].q_opackets[q], ps[i].q_ibytes[q],
							ps[i].q_obytes[q], ps[i].q_errors[q] };
				hwd_mu64(t, qm[f], qv[f], "port=\"%s\",queue=\"%u\"", ps[i].name, q);
			}
	}
	free(ok);
	free(ps);
}

/* The frame-size counters of every reactor's DPDK instance, summed:
 * fragments sent and reassembled, reassembly drops by reason, frames
 * refused for size, packets linearised for ports without TX MULTI_SEGS. */
static void render_dpdk_frames(hwd_node *n, hwd_tbuf *t)
{
	hw_dpdk_stats sum, ds;
	memset(&sum, 0, sizeof sum);
	for (int k = 0; k < n->n_reactors && k < HWD_MAX_REACTORS; k++) {
		hwd_shard_dpdk_stats(&n->shards[k], &ds);
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
	hwd_mone(t, HWD_M_DPDK_TX_FRAGMENTED_FRAMES, (double)sum.tx_fragmented_frames);
	hwd_mone(t, HWD_M_DPDK_TX_FRAGMENTS, (double)sum.tx_fragments);
	hwd_mone(t, HWD_M_DPDK_TX_REFUSED_SIZE, (double)sum.tx_refused_size);
	hwd_mone(t, HWD_M_DPDK_TX_LINEARIZED_PACKETS, (double)sum.tx_linearized_packets);
	hwd_mone(t, HWD_M_DPDK_TX_LINEARIZED_BYTES, (double)sum.tx_linearized_bytes);
	hwd_mone(t, HWD_M_DPDK_RX_FRAGMENTS, (double)sum.frag.fragments);
	hwd_mone(t, HWD_M_DPDK_RX_REASSEMBLED_FRAMES, (double)sum.frag.messages_completed);
	hwd_mone(t, HWD_M_DPDK_RX_FRAGMENTS_DISCARDED, (double)sum.frag.fragments_discarded);
	hwd_mhead(t, HWD_M_DPDK_RX_FRAGMENT_DROPS);
	for (int r = 0; r < HW_FRAG_DROP__COUNT; r++)
		hwd_mu64(t, HWD_M_DPDK_RX_FRAGMENT_DROPS, sum.frag.drops[r], "reason=\"%s\"", hw_frag_drop_name(r));
}

static void render_dpdk(hwd_node *n, hwd_tbuf *t)
{
	const hw_dpdk_stats *d = hw_dpdk_get_stats(n->shards[0].dpdk);
	hwd_mone(t, HWD_M_DPDK_TX_BYTES_ZERO_COPY, (double)d->tx_bytes_zero_copy);
	hwd_mone(t, HWD_M_DPDK_TX_BYTES_COPIED, (double)d->tx_bytes_copied);
	hwd_mone(t, HWD_M_DPDK_RX_LINEARIZED_BYTES, (double)d->rx_linearized_bytes);
	hwd_mone(t, HWD_M_DPDK_TX_DROPPED, (double)d->tx_dropped);
	hw_dpdk_rxhold_stats hs;
	hw_dpdk_rx_hold_stats(&hs);
	hwd_mone(t, HWD_M_DPDK_RX_MBUFS_HELD, (double)hs.held);
	hwd_mone(t, HWD_M_DPDK_RX_MBUF_HOLDS, (double)hs.granted);
	hwd_mone(t, HWD_M_DPDK_RX_MBUF_HOLDS_REFUSED, (double)hs.refused);
	render_dpdk_ports(n, t);
	render_dpdk_frames(n, t);
	const hw_doorbell_stats *b = hw_dpdk_doorbell_stats(n->shards[0].dpdk);
	if (b) {
		hwd_mone(t, HWD_M_DOORBELL_RINGS, (double)b->rings);
		hwd_mone(t, HWD_M_DOORBELL_SKIPPED, (double)b->skipped);
		hwd_mone(t, HWD_M_DOORBELL_RECEIVED, (double)b->received);
		hwd_mone(t, HWD_M_DOORBELL_REMAPS, (double)b->remaps);
	}
}

/* ---- the node's reactor, controller, allocator ---- */

static void render_reactor(hwd_node *n, hwd_tbuf *t)
{
	hw_reactor_stats rs;
	hw_reactor_get_stats(n->shards[0].reactor, &rs);
	hwd_mone(t, HWD_M_REACTOR_ITERATIONS, (double)rs.iterations);
	hwd_mone(t, HWD_M_REACTOR_BUSY_ITERATIONS, (double)rs.busy_iterations);
	hwd_mone(t, HWD_M_REACTOR_IDLE_ITERATIONS, (double)rs.idle_iterations);
	hwd_mone(t, HWD_M_REACTOR_SLEEPS, (double)rs.sleeps);
	hwd_mone(t, HWD_M_REACTOR_SLEPT_SECONDS, (double)rs.slept_ns / 1e9);
	hwd_mone(t, HWD_M_REACTOR_WAKEUPS, (double)rs.wakeups);
	hwd_mone(t, HWD_M_REACTOR_YIELDS, (double)rs.yields);
	hwd_mone(t, HWD_M_REACTOR_SPINS_TO_WORK, (double)rs.adaptive.spins_to_work);
	hwd_mone(t, HWD_M_REACTOR_SPINS_TO_SLEEP, (double)rs.adaptive.spins_to_sleep);
	hwd_mone(t, HWD_M_REACTOR_CONTENDED_YIELDS, (double)rs.adaptive.contended_yields);
	hwd_mone(t, HWD_M_REACTOR_STALLED_YIELDS, (double)rs.adaptive.stalled_yields);
	hwd_mone(t, HWD_M_REACTOR_DEMOTIONS, (double)rs.adaptive.demotions);
	hwd_mone(t, HWD_M_REACTOR_CONTENTION_PROBES, (double)rs.adaptive.probes);
	hwd_mone(t, HWD_M_REACTOR_SPIN_WINDOW, (double)rs.adaptive.window_ns / 1e9);
	hwd_mone(t, HWD_M_REACTOR_EARLY_WAKES, (double)rs.adaptive.early_wakes);
	hwd_mone(t, HWD_M_REACTOR_EARLY_WAKES_TO_WORK, (double)rs.adaptive.early_wakes_to_work);
	hwd_mone(t, HWD_M_REACTOR_ARRIVAL_PERIOD, (double)rs.adaptive.period_ns / 1e9);
	hwd_mone(t, HWD_M_REACTOR_POLLER_ERRORS, (double)rs.poller_errors);
}

static void render_controller(hwd_node *n, hwd_tbuf *t)
{
	/* events, and apart from them the one counter of bytes */
	hwd_mhead(t, HWD_M_CTRL_EVENTS);
	for (int i = 0; i < HW_CTRL_COUNTER_COUNT; i++)
		if (i != HW_CTRL_C_MLOG_TORN_BYTES_TRUNCATED)
			hwd_mu64(t, HWD_M_CTRL_EVENTS, hw_ctrl_counter_get(n->ctrl, (hw_ctrl_counter)i),
				 "event=\"%s\"", hw_ctrl_counter_name(i));
	hwd_mone(t, HWD_M_CTRL_MLOG_TRUNCATED_BYTES,
		 (double)hw_ctrl_counter_get(n->ctrl, HW_CTRL_C_MLOG_TORN_BYTES_TRUNCATED));
	int by_state[HW_CTRL_BROKER_STATE_COUNT] = { 0 };
	hw_ctrl_broker_info bi;
	for (int i = 0; hw_ctrl_broker_at(n->ctrl, i, &bi) == 0; i++)
		if (bi.state < HW_CTRL_BROKER_STATE_COUNT)
			by_state[bi.state]++;
	hwd_mhead(t, HWD_M_CTRL_BROKERS);
	for (int s = 0; s < HW_CTRL_BROKER_STATE_COUNT; s++)
		hwd_mu64(t, HWD_M_CTRL_BROKERS, (uint64_t)by_state[s], "state=\"%s\"", hw_ctrl_broker_state_name(s));
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
	hwd_mone(t, HWD_M_OFFLINE_PARTITIONS, offline);
	hwd_mone(t, HWD_M_GLOBAL_PARTITIONS, parts);
}

static void render_jemalloc(hwd_tbuf *t)
{
#ifdef HW_HAVE_JEMALLOC
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);
	mallctl("epoch", &epoch, &sz, &epoch, sz); /* refresh the statistics */
	static const struct {
		const char *ctl;
		hwd_metric m;
	} js[] = {
		{ "stats.allocated", HWD_M_JEMALLOC_ALLOCATED },
		{ "stats.active", HWD_M_JEMALLOC_ACTIVE },
		{ "stats.resident", HWD_M_JEMALLOC_RESIDENT },
	};
	for (size_t i = 0; i < sizeof js / sizeof js[0]; i++) {
		size_t v = 0;
		sz = sizeof(v);
		if (mallctl(js[i].ctl, &v, &sz, NULL, 0) == 0)
			hwd_mone(t, js[i].m, (double)v);
	}
#else
	(void)t;
#endif
}

/* ZooKeeper mode: session, events, request latency (hw_ctrl_zk.h). */
static void render_zk(hwd_node *n, hwd_tbuf *t)
{
	hwd_mone(t, HWD_M_ZK_SESSION_STATE, hw_zk_session(n->zk));
	hwd_mhead(t, HWD_M_ZK_EVENTS);
	for (int i = 0; i < HW_ZK_COUNTER_COUNT; i++)
		hwd_mu64(t, HWD_M_ZK_EVENTS, hw_zk_counter_get(n->zk, (hw_zk_counter)i), "event=\"%s\"",
			 hw_zk_counter_name(i));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	/* the histogram is the zk module's, read on its own (this) thread */
	hwd_prom_series s = { .h = (hw_hist *)hw_zk_latency(n->zk), .sum_ns = hw_zk_latency_sum_ns(n->zk) };
	hwd_prom_write_header(f, hwd_metric_name(HWD_M_ZK_REQUEST_LATENCY), hwd_metric_help(HWD_M_ZK_REQUEST_LATENCY));
	hwd_prom_write_series(f, hwd_metric_name(HWD_M_ZK_REQUEST_LATENCY), "", &s);
	if (fclose(f) == 0 && buf)
		hwd_tb(t, "%s", buf);
	free(buf);
}

void hwd_metrics_render_node(hwd_node *n, hwd_tbuf *t)
{
	render_transport(n, t);
	if (n->shards[0].dpdk)
		render_dpdk(n, t);
	render_reactor(n, t);
	if (n->cfg->is_controller) {
		hwd_mone(t, HWD_M_CTRL_ACTIVE, n->ctrl ? 1 : 0);
		hwd_mone(t, HWD_M_CTRL_EPOCH, n->ctrl ? hw_ctrl_epoch(n->ctrl) : n->zk ? hw_zk_epoch(n->zk) : 0);
	}
	if (n->ctrl)
		render_controller(n, t);
	if (n->zk)
		render_zk(n, t);
	render_jemalloc(t);
}
