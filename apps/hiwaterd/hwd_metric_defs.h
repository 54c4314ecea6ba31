/* hwd_metric_defs.h — every metric family hiwaterd's /metrics serves.
 *
 * Design note. One X-macro table names each family once: its Prometheus
 * name, type, labels, the node that exports it, the Kafka metric it
 * corresponds to, and its HELP text. The renderers (hwd_metrics_render.c,
 * hwd_metrics.c) write families only through these ids, so a family cannot
 * be served without a HELP and a TYPE, and `hiwaterd --print-metrics-table`
 * prints docs/metrics.md from the same rows (plus the per-partition rows of
 * engine/repl/hw_rm.h HW_PART_METRIC_TABLE and the label values of the
 * tables that name them); a test fails when the committed file is stale.
 * Names follow Prometheus's conventions (promtool check metrics): base units
 * (seconds, bytes) in the name, counters end in _total, no _count / _sum /
 * _bucket suffix outside histograms and summaries.
 *
 * X(ID, "name", TYPE, "labels", WHERE, "Kafka metric", "help")
 * TYPE: GAUGE, COUNTER, HISTOGRAM, SUMMARY. WHERE: hwd_mwhere. "-": no
 * Kafka counterpart. Help text: no newline, backslash or '|'.
 */
#ifndef HWD_METRIC_DEFS_H
#define HWD_METRIC_DEFS_H
#include <stdint.h>
#include <stdio.h>

#define HWD_METRIC_TABLE(X)                                                                                   \
	/* ---- broker: ReplicaManager ---- */                                                                \
	X(UNDER_REPLICATED, "hiwater_under_replicated_partitions", GAUGE, "", BROKER,                          \
	  "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",                                  \
	  "partitions this broker leads whose ISR is smaller than their replica set")                         \
	X(UNDER_MIN_ISR, "hiwater_under_min_isr_partitions", GAUGE, "", BROKER,                                \
	  "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount",                                  \
	  "partitions this broker leads whose ISR is smaller than min.insync.replicas")                       \
	X(OFFLINE_REPLICAS, "hiwater_offline_replicas", GAUGE, "", BROKER,                                     \
	  "kafka.server:type=ReplicaManager,name=OfflineReplicaCount",                                        \
	  "replicas on this broker with no leader, no or a failed store, or on an offline log dir, each counted once (docs/logdirs.md)")\
	X(OFFLINE_LOG_DIRS, "hiwater_offline_log_directories", GAUGE, "", BROKER,                             \
	  "kafka.log:type=LogManager,name=OfflineLogDirectoryCount",                                          \
	  "log directories with a failed log (I/O error, full disk): their replicas leave the ISRs")         \
	X(LEADER_PARTITIONS, "hiwater_leader_partitions", GAUGE, "", BROKER,                                   \
	  "kafka.server:type=ReplicaManager,name=LeaderCount", "partitions this broker leads")                \
	X(PARTITIONS, "hiwater_partitions", GAUGE, "", BROKER, "kafka.server:type=ReplicaManager,name=PartitionCount", \
	  "partitions with a replica on this broker")                                                         \
	X(DELAYED_PRODUCE, "hiwater_delayed_produce", GAUGE, "", BROKER,                                       \
	  "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Produce",          \
	  "produce requests waiting in purgatory now (acks=all until the ISR has the records)")               \
	X(DELAYED_FETCH, "hiwater_delayed_fetch", GAUGE, "", BROKER,                                           \
	  "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Fetch",            \
	  "fetch requests waiting in purgatory now (fetch.min.bytes not yet available)")                      \
	X(MESSAGES_DROPPED_MALFORMED, "hiwater_messages_dropped_malformed_total", COUNTER, "", BROKER, "-",     \
	  "engine messages the replica manager dropped as malformed")                                         \
	X(MESSAGES_REJECTED, "hiwater_messages_rejected_total", COUNTER, "reason", BROKER, "-",                \
	  "authenticated messages refused for their sender: not the controller, not the replica, stale broker epoch, bad topic name (docs/security.md)") \
	X(BROKER_STATE, "hiwater_broker_state", GAUGE, "", BROKER, "kafka.server:type=KafkaServer,name=BrokerState", \
	  "0 STARTING, 1 REGISTERING, 2 FENCED, 3 RUNNING, 4 CONTROLLED_SHUTDOWN")                           \
	/* ---- broker: replication throttle (hw_rm.h) ---- */                                              \
	X(LEADER_THROTTLE_RATE, "hiwater_leader_replication_throttled_rate_bytes_per_second", GAUGE, "", BROKER, \
	  "leader.replication.throttled.rate (dynamic config)",                                               \
	  "leader replication quota in bytes per second (9223372036854775807, Kafka's Long.MAX_VALUE default: unthrottled)")                                    \
	X(FOLLOWER_THROTTLE_RATE, "hiwater_follower_replication_throttled_rate_bytes_per_second", GAUGE, "",   \
	  BROKER, "follower.replication.throttled.rate (dynamic config)",                                     \
	  "follower replication quota in bytes per second (9223372036854775807: unthrottled)")                                  \
	X(LEADER_REPLICATION_RATE, "hiwater_leader_replication_bytes_per_second", GAUGE, "", BROKER,           \
	  "kafka.server:type=LeaderReplication,name=byte-rate",                                               \
	  "measured rate of throttled leader replication, bytes per second")                                  \
	X(FOLLOWER_REPLICATION_RATE, "hiwater_follower_replication_bytes_per_second", GAUGE, "", BROKER,       \
	  "kafka.server:type=FollowerReplication,name=byte-rate",                                             \
	  "measured rate of throttled follower replication, bytes per second")                                \
	X(LEADER_THROTTLED_BYTES, "hiwater_leader_replication_throttled_bytes_total", COUNTER, "", BROKER, "-", \
	  "replication bytes of leader-throttled partitions sent")                                            \
	X(FOLLOWER_THROTTLED_BYTES, "hiwater_follower_replication_throttled_bytes_total", COUNTER, "", BROKER, \
	  "-", "replication bytes of follower-throttled partitions fetched")                                  \
	X(LEADER_THROTTLED_FETCHES, "hiwater_leader_replication_throttled_fetches_total", COUNTER, "", BROKER, \
	  "-", "partition answers to out-of-ISR followers sent without records (quota exceeded)")             \
	X(FOLLOWER_THROTTLED_FETCHES, "hiwater_follower_replication_throttled_fetches_total", COUNTER, "",     \
	  BROKER, "-", "fetches that left an out-of-sync partition out (quota exceeded)")                     \
	/* ---- broker: per partition (besides HW_PART_METRIC_TABLE) ---- */                                \
	X(PART_HW, "hiwater_partition_high_watermark", GAUGE, "topic, partition", BROKER, "-",                 \
	  "the partition's high watermark on this broker")                                                    \
	X(PART_LEO, "hiwater_partition_log_end_offset", GAUGE, "topic, partition", BROKER,                     \
	  "kafka.log:type=Log,name=LogEndOffset", "the log end offset of this broker's replica")              \
	X(PART_IS_LEADER, "hiwater_partition_is_leader", GAUGE, "topic, partition", BROKER, "-",               \
	  "1 if this broker leads the partition")                                                             \
	X(FOLLOWER_LAG_OFFSETS, "hiwater_follower_lag_offsets", GAUGE, "topic, partition, follower", BROKER,   \
	  "kafka.server:type=FetcherLagMetrics,name=ConsumerLag (seen from the leader)",                      \
	  "leader LEO - the follower's LEO, per follower of a partition this broker leads")                   \
	X(FOLLOWER_LAG_SECONDS, "hiwater_follower_lag_seconds", GAUGE, "topic, partition, follower", BROKER, "-", \
	  "time since the follower was last caught up (compared with replica.lag.time.max.ms)")               \
	/* ---- broker: totals over partitions (BrokerTopicMetrics) ---- */                                 \
	X(ISR_SHRINKS, "hiwater_isr_shrinks_total", COUNTER, "", BROKER,                                       \
	  "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec", "ISR shrinks of partitions this broker led") \
	X(ISR_EXPANDS, "hiwater_isr_expands_total", COUNTER, "", BROKER,                                       \
	  "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec", "ISR expansions of partitions this broker led") \
	X(PRODUCE_REQUESTS, "hiwater_produce_requests_total", COUNTER, "", BROKER,                             \
	  "kafka.server:type=BrokerTopicMetrics,name=TotalProduceRequestsPerSec", "produce requests (per partition)") \
	X(CONSUMER_FETCH_REQUESTS, "hiwater_consumer_fetch_requests_total", COUNTER, "", BROKER,               \
	  "kafka.server:type=BrokerTopicMetrics,name=TotalFetchRequestsPerSec", "fetches from consumers (per partition)") \
	X(FOLLOWER_FETCH_REQUESTS, "hiwater_follower_fetch_requests_total", COUNTER, "", BROKER,               \
	  "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=FetchFollower",                      \
	  "fetches from follower replicas (per partition)")                                                   \
	X(FAILED_PRODUCE_REQUESTS, "hiwater_failed_produce_requests_total", COUNTER, "", BROKER,               \
	  "kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec",                            \
	  "produce requests answered with an error (per partition)")                                          \
	X(FAILED_FETCH_REQUESTS, "hiwater_failed_fetch_requests_total", COUNTER, "", BROKER,                   \
	  "kafka.server:type=BrokerTopicMetrics,name=FailedFetchRequestsPerSec",                              \
	  "fetches answered with an error (per partition)")                                                   \
	X(BYTES_IN, "hiwater_bytes_in_total", COUNTER, "", BROKER, "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec", \
	  "record bytes appended by produce requests")                                                        \
	X(REPLICATION_BYTES_IN, "hiwater_replication_bytes_in_total", COUNTER, "", BROKER,                     \
	  "kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesInPerSec",                               \
	  "record bytes this broker appended as a follower")                                                  \
	/* ---- broker: request latency (Kafka RequestMetrics, hwd_metrics.c) ---- */                       \
	X(REQ_TOTAL_TIME, "hiwater_request_total_time_seconds", HISTOGRAM, "request, acks", BROKER,            \
	  "kafka.network:type=RequestMetrics,name=TotalTimeMs",                                               \
	  "time from receiving a request to sending its answer")                                              \
	X(REQ_QUEUE_TIME, "hiwater_request_queue_time_seconds", HISTOGRAM, "request, acks", BROKER,            \
	  "kafka.network:type=RequestMetrics,name=RequestQueueTimeMs",                                        \
	  "time from receiving a request to the replica manager starting it")                                 \
	X(REQ_LOCAL_TIME, "hiwater_request_local_time_seconds", HISTOGRAM, "request, acks", BROKER,            \
	  "kafka.network:type=RequestMetrics,name=LocalTimeMs",                                               \
	  "time the replica manager worked on the request (log append, read)")                                \
	X(REQ_REMOTE_TIME, "hiwater_request_remote_time_seconds", HISTOGRAM, "request, acks", BROKER,          \
	  "kafka.network:type=RequestMetrics,name=RemoteTimeMs",                                              \
	  "time parked in purgatory (acks=all waiting for followers, fetch waiting for data)")                \
	X(REQ_SEND_TIME, "hiwater_request_response_send_time_seconds", HISTOGRAM, "request, acks", BROKER,     \
	  "kafka.network:type=RequestMetrics,name=ResponseSendTimeMs", "time from answer ready to sent")      \
	X(PRODUCE_STAGE_TIME, "hiwater_produce_stage_time_seconds", HISTOGRAM, "stage", BROKER, "-",           \
	  "acks=all produces that asked for stage timing (bench --breakdown, docs/breakdown.md): time in each leader stage") \
	X(REQ_TOTAL_QUANTILES, "hiwater_request_total_time_quantile_seconds", SUMMARY, "request, acks, quantile", \
	  BROKER, "kafka.network:type=RequestMetrics,name=TotalTimeMs (50thPercentile, 99thPercentile, 999thPercentile, Max)", \
	  "total request time since start at quantiles 0.5, 0.99, 0.999 and 1 (the max), full resolution")  \
	/* ---- broker: the Kafka listener (docs/kafka.md, hwd_kafka.c) ---- */                            \
	X(KAFKA_REQUESTS, "hiwater_kafka_requests_total", COUNTER, "api", BROKER,                              \
	  "kafka.network:type=RequestMetrics,name=RequestsPerSec,request",                                    \
	  "Kafka protocol requests answered (or, acks=0, handled) by the listener")                           \
	X(KAFKA_REQUEST_ERRORS, "hiwater_kafka_request_errors_total", COUNTER, "api", BROKER,                  \
	  "kafka.network:type=RequestMetrics,name=ErrorsPerSec,request",                                      \
	  "Kafka protocol responses that carried a non-zero error code")                                      \
	X(KAFKA_REQUEST_TIME, "hiwater_kafka_request_time_seconds", HISTOGRAM, "api", BROKER,                  \
	  "kafka.network:type=RequestMetrics,name=TotalTimeMs,request",                                       \
	  "Kafka request time from decoding to the response being queued (buckets 100 us .. 1.6 s)")          \
	X(KAFKA_CONNECTIONS, "hiwater_kafka_connections", GAUGE, "", BROKER,                                   \
	  "kafka.server:type=socket-server-metrics,name=connection-count", "open Kafka client connections")   \
	X(KAFKA_CONNECTIONS_OPENED, "hiwater_kafka_connections_opened_total", COUNTER, "", BROKER,             \
	  "kafka.server:type=socket-server-metrics,name=connection-creation-total",                           \
	  "Kafka client connections accepted")                                                                \
	X(KAFKA_CONNECTIONS_CLOSED, "hiwater_kafka_connections_closed_total", COUNTER, "reason", BROKER,       \
	  "kafka.server:type=socket-server-metrics,name=connection-close-total",                              \
	  "Kafka client connections closed (or refused at max.connections), by reason")                       \
	/* ---- broker: the group coordinator (docs/groups.md, hwd_group.c) ---- */                       \
	X(GROUPS, "hiwater_groups", GAUGE, "", BROKER,                                                         \
	  "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroups",                                 \
	  "consumer groups of the __consumer_offsets partitions this broker leads")                           \
	X(GROUP_MEMBERS, "hiwater_group_members", GAUGE, "", BROKER, "-",                                       \
	  "members of those groups")                                                                          \
	X(GROUP_OFFSETS_PARTITIONS, "hiwater_group_offsets_partitions_loaded", GAUGE, "", BROKER, "-",          \
	  "__consumer_offsets partitions this broker coordinates (loaded from their log)")                    \
	X(GROUP_REBALANCES, "hiwater_group_rebalances_total", COUNTER, "reason", BROKER,                        \
	  "kafka.coordinator.group:type=group-coordinator-metrics,name=rebalance-total",                      \
	  "rebalances started, by reason")                                                                    \
	X(GROUP_MEMBERS_REMOVED, "hiwater_group_members_removed_total", COUNTER, "reason", BROKER, "-",         \
	  "members removed from groups, by reason")                                                           \
	X(GROUP_OFFSET_COMMITS, "hiwater_group_offset_commits_total", COUNTER, "", BROKER,                      \
	  "kafka.coordinator.group:type=group-coordinator-metrics,name=offset-commit-count",                  \
	  "OffsetCommit requests whose acks=all append succeeded")                                            \
	X(GROUP_OFFSET_COMMIT_ERRORS, "hiwater_group_offset_commit_errors_total", COUNTER, "", BROKER, "-",     \
	  "OffsetCommit appends that failed (the client got the mapped error)")                               \
	X(GROUP_REPLAY_DROPS, "hiwater_group_replay_drops_total", COUNTER, "reason", BROKER, "-",               \
	  "__consumer_offsets records skipped while rebuilding groups, by reason")                            \
	/* ---- broker: per reactor (hiwater.reactor.lcores) ---- */                                        \
	X(SHARD_ITERATIONS, "hiwater_reactor_shard_iterations_total", COUNTER, "reactor", BROKER, "-",         \
	  "loop turns of the reactor")                                                                        \
	X(SHARD_BUSY_ITERATIONS, "hiwater_reactor_shard_busy_iterations_total", COUNTER, "reactor", BROKER,    \
	  "kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent (its complement)",             \
	  "loop turns of the reactor in which some poller did work")                                          \
	X(SHARD_PARTITIONS, "hiwater_reactor_shard_partitions", GAUGE, "reactor", BROKER, "-",                 \
	  "partitions owned by the reactor")                                                                  \
	X(SHARD_PRODUCE_REQUESTS, "hiwater_reactor_shard_produce_requests_total", COUNTER, "reactor", BROKER,  \
	  "-", "produce requests of the reactor's partitions")                                                \
	X(SHARD_CONSUMER_FETCHES, "hiwater_reactor_shard_consumer_fetch_requests_total", COUNTER, "reactor",   \
	  BROKER, "-", "consumer fetches of the reactor's partitions (per partition)")                        \
	X(SHARD_FOLLOWER_FETCHES, "hiwater_reactor_shard_follower_fetch_requests_total", COUNTER, "reactor",   \
	  BROKER, "-", "follower fetches of the reactor's partitions (per partition)")                        \
	X(SHARD_FRAMES, "hiwater_reactor_shard_frames_total", COUNTER, "reactor, what", BROKER, "-",           \
	  "frames by what the reactor did with them (hwd_shard.h HWD_SHARD_COUNTER_TABLE)")                   \
	X(SHARD_DPDK_RX_PACKETS, "hiwater_reactor_shard_dpdk_rx_packets_total", COUNTER, "reactor, queue",     \
	  DPDK, "-", "packets the reactor received, per RX queue it polls")                                   \
	X(SHARD_DPDK_TX_PACKETS, "hiwater_reactor_shard_dpdk_tx_packets_total", COUNTER, "reactor, queue",     \
	  DPDK, "-", "packets the reactor sent on its own TX queue")                                          \
	X(SHARD_DPDK_TX_UNCONNECTED, "hiwater_reactor_shard_dpdk_tx_unconnected_total", COUNTER, "reactor",    \
	  DPDK, "-", "sends refused: the peer did not connect this reactor's queue")                          \
	X(SHARD_DPDK_RX_STEERED, "hiwater_reactor_shard_dpdk_rx_steered_total", COUNTER, "reactor, what", DPDK, \
	  "-", "frames steered in software (hw_dpdk.h Steering): what=out received on the reactor's queue for " \
	  "another reactor's UDP port and handed to it, what=in handed to this reactor")                      \
	X(SHARD_DPDK_RX_STEER_DROPPED, "hiwater_reactor_shard_dpdk_rx_steer_dropped_total", COUNTER, "reactor", \
	  DPDK, "-", "frames the reactor could not hand to their owner: the target reactor's ring was full")  \
	/* ---- transports (every node) ---- */                                                             \
	X(TRANSPORT_RX_FRAMES, "hiwater_transport_rx_frames_total", COUNTER, "plane", ALL,                     \
	  "kafka.server:type=socket-server-metrics,name=request-total", "frames received and decoded")        \
	X(TRANSPORT_TX_FRAMES, "hiwater_transport_tx_frames_total", COUNTER, "plane", ALL,                     \
	  "kafka.server:type=socket-server-metrics,name=response-total", "frames sent")                       \
	X(TRANSPORT_RX_BYTES, "hiwater_transport_rx_bytes_total", COUNTER, "plane", ALL,                       \
	  "kafka.server:type=socket-server-metrics,name=incoming-byte-total", "bytes received")               \
	X(TRANSPORT_TX_BYTES, "hiwater_transport_tx_bytes_total", COUNTER, "plane", ALL,                       \
	  "kafka.server:type=socket-server-metrics,name=outgoing-byte-total", "bytes sent")                   \
	X(TRANSPORT_DROPS, "hiwater_transport_drops_total", COUNTER, "plane, reason", ALL, "-",                \
	  "received datagrams dropped, by reason (engine/proto/hw_wire.h drop reasons)")                      \
	X(TRANSPORT_RX_UNKNOWN_TAGS, "hiwater_transport_rx_unknown_tags_total", COUNTER, "plane", ALL, "-",    \
	  "frames delivered with a tagged field this build does not know (skipped, docs/wire.md)")            \
	X(TRANSPORT_NEIGHBOURS_FORGOTTEN, "hiwater_transport_neighbours_forgotten_total", COUNTER, "plane", ALL, \
	  "-", "learned sender addresses dropped because the table was full (relearned on their next frame)")  \
	/* ---- DPDK (broker on hiwater.transport=dpdk) ---- */                                             \
	X(DPDK_TX_BYTES_ZERO_COPY, "hiwater_dpdk_tx_bytes_zero_copy_total", COUNTER, "", DPDK, "-",            \
	  "record bytes sent as external mbufs (not copied)")                                                 \
	X(DPDK_TX_BYTES_COPIED, "hiwater_dpdk_tx_bytes_copied_total", COUNTER, "", DPDK, "-",                  \
	  "frame bytes copied into mbufs")                                                                    \
	X(DPDK_RX_LINEARIZED_BYTES, "hiwater_dpdk_rx_linearized_bytes_total", COUNTER, "", DPDK, "-",          \
	  "bytes of multi-segment received frames copied to decode them")                                     \
	X(DPDK_TX_DROPPED, "hiwater_dpdk_tx_dropped_total", COUNTER, "", DPDK, "-",                            \
	  "packets not sent: TX ring full or link down")                                                      \
	X(DPDK_RX_MBUFS_HELD, "hiwater_dpdk_rx_mbufs_held", GAUGE, "", DPDK, "-",                              \
	  "received mbufs kept by follower logs (records written from them)")                                 \
	X(DPDK_RX_MBUF_HOLDS, "hiwater_dpdk_rx_mbuf_holds_total", COUNTER, "", DPDK, "-",                      \
	  "holds granted on received mbufs")                                                                  \
	X(DPDK_RX_MBUF_HOLDS_REFUSED, "hiwater_dpdk_rx_mbuf_holds_refused_total", COUNTER, "", DPDK, "-",      \
	  "holds refused: budget spent (the follower copied)")                                                \
	X(DPDK_PORT_MTU, "hiwater_dpdk_port_mtu_bytes", GAUGE, "port", DPDK, "-",                              \
	  "IPv4 MTU hiwater uses on the port (0: no limit, memif and ring)")                                  \
	X(DPDK_PORT_LINK_UP, "hiwater_dpdk_port_link_up", GAUGE, "port", DPDK, "-", "1 if the port has link")  \
	X(DPDK_PORT_RX_PACKETS, "hiwater_dpdk_port_rx_packets_total", COUNTER, "port", DPDK, "-",              \
	  "packets received (rte_eth_stats ipackets)")                                                        \
	X(DPDK_PORT_TX_PACKETS, "hiwater_dpdk_port_tx_packets_total", COUNTER, "port", DPDK, "-",              \
	  "packets sent (rte_eth_stats opackets)")                                                            \
	X(DPDK_PORT_RX_BYTES, "hiwater_dpdk_port_rx_bytes_total", COUNTER, "port", DPDK, "-",                  \
	  "bytes received (rte_eth_stats ibytes)")                                                            \
	X(DPDK_PORT_TX_BYTES, "hiwater_dpdk_port_tx_bytes_total", COUNTER, "port", DPDK, "-",                  \
	  "bytes sent (rte_eth_stats obytes)")                                                                \
	X(DPDK_PORT_RX_MISSED, "hiwater_dpdk_port_rx_missed_total", COUNTER, "port", DPDK, "-",                \
	  "packets the port dropped, RX queues full (rte_eth_stats imissed)")                                 \
	X(DPDK_PORT_RX_ERRORS, "hiwater_dpdk_port_rx_errors_total", COUNTER, "port", DPDK, "-",                \
	  "erroneous packets received (rte_eth_stats ierrors)")                                               \
	X(DPDK_PORT_TX_ERRORS, "hiwater_dpdk_port_tx_errors_total", COUNTER, "port", DPDK, "-",                \
	  "packets the port failed to send (rte_eth_stats oerrors)")                                          \
	X(DPDK_PORT_RX_NOMBUF, "hiwater_dpdk_port_rx_nombuf_total", COUNTER, "port", DPDK, "-",                \
	  "RX mbuf allocation failures (rte_eth_stats rx_nombuf)")                                            \
	X(DPDK_PORT_Q_RX_PACKETS, "hiwater_dpdk_port_queue_rx_packets_total", COUNTER, "port, queue", DPDK, "-", \
	  "packets received per RX queue (rte_eth_stats q_ipackets)")                                         \
	X(DPDK_PORT_Q_TX_PACKETS, "hiwater_dpdk_port_queue_tx_packets_total", COUNTER, "port, queue", DPDK, "-", \
	  "packets sent per TX queue (rte_eth_stats q_opackets)")                                             \
	X(DPDK_PORT_Q_RX_BYTES, "hiwater_dpdk_port_queue_rx_bytes_total", COUNTER, "port, queue", DPDK, "-",   \
	  "bytes received per RX queue (rte_eth_stats q_ibytes)")                                             \
	X(DPDK_PORT_Q_TX_BYTES, "hiwater_dpdk_port_queue_tx_bytes_total", COUNTER, "port, queue", DPDK, "-",   \
	  "bytes sent per TX queue (rte_eth_stats q_obytes)")                                                 \
	X(DPDK_PORT_Q_RX_ERRORS, "hiwater_dpdk_port_queue_rx_errors_total", COUNTER, "port, queue", DPDK, "-", \
	  "packets dropped per RX queue (rte_eth_stats q_errors)")                                            \
	X(DPDK_TX_FRAGMENTED_FRAMES, "hiwater_dpdk_tx_fragmented_frames_total", COUNTER, "", DPDK, "-",        \
	  "frames larger than a packet of their port, sent as fragments")                                     \
	X(DPDK_TX_FRAGMENTS, "hiwater_dpdk_tx_fragments_total", COUNTER, "", DPDK, "-", "fragment packets sent") \
	X(DPDK_TX_REFUSED_SIZE, "hiwater_dpdk_tx_refused_size_total", COUNTER, "", DPDK, "-",                  \
	  "frames refused (EMSGSIZE): no way to fit the port")                                                \
	X(DPDK_TX_LINEARIZED_PACKETS, "hiwater_dpdk_tx_linearized_packets_total", COUNTER, "", DPDK, "-",      \
	  "packets built as one mbuf because the port has no TX MULTI_SEGS (records copied, not lent)")       \
	X(DPDK_TX_LINEARIZED_BYTES, "hiwater_dpdk_tx_linearized_bytes_total", COUNTER, "", DPDK, "-",          \
	  "frame bytes of those packets")                                                                     \
	X(DPDK_RX_FRAGMENTS, "hiwater_dpdk_rx_fragments_total", COUNTER, "", DPDK, "-", "fragments received")  \
	X(DPDK_RX_REASSEMBLED_FRAMES, "hiwater_dpdk_rx_reassembled_frames_total", COUNTER, "", DPDK, "-",      \
	  "frames reassembled from fragments")                                                                \
	X(DPDK_RX_FRAGMENTS_DISCARDED, "hiwater_dpdk_rx_fragments_discarded_total", COUNTER, "", DPDK, "-",    \
	  "fragments stored, then lost with a message that timed out or was evicted")                         \
	X(DPDK_RX_FRAGMENT_DROPS, "hiwater_dpdk_rx_fragment_drops_total", COUNTER, "reason", DPDK, "-",        \
	  "fragments dropped by reason (drivers/net/dpdk/hw_frag.h; TIMEOUT and EVICTED count messages)")     \
	X(DOORBELL_RINGS, "hiwater_doorbell_rings_total", COUNTER, "", MEMIF, "-",                             \
	  "memif doorbells rung (the peer was asleep)")                                                       \
	X(DOORBELL_SKIPPED, "hiwater_doorbell_skipped_total", COUNTER, "", MEMIF, "-",                         \
	  "bursts sent to an awake peer without a doorbell")                                                  \
	X(DOORBELL_RECEIVED, "hiwater_doorbell_received_total", COUNTER, "", MEMIF, "-", "our doorbell rung")  \
	X(DOORBELL_REMAPS, "hiwater_doorbell_remaps_total", COUNTER, "", MEMIF, "-",                           \
	  "a peer restarted under the same node id: its new flag file mapped")                                \
	/* ---- the node's reactor (every node) ---- */                                                     \
	X(REACTOR_ITERATIONS, "hiwater_reactor_iterations_total", COUNTER, "", ALL, "-", "reactor loop turns") \
	X(REACTOR_BUSY_ITERATIONS, "hiwater_reactor_busy_iterations_total", COUNTER, "", ALL, "-",             \
	  "turns in which some poller did work")                                                              \
	X(REACTOR_IDLE_ITERATIONS, "hiwater_reactor_idle_iterations_total", COUNTER, "", ALL,                  \
	  "kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent", "turns with no work")        \
	X(REACTOR_SLEEPS, "hiwater_reactor_sleeps_total", COUNTER, "", ALL, "-", "epoll sleeps")               \
	X(REACTOR_SLEPT_SECONDS, "hiwater_reactor_slept_seconds_total", COUNTER, "", ALL, "-", "time asleep")  \
	X(REACTOR_WAKEUPS, "hiwater_reactor_wakeups_total", COUNTER, "", ALL, "-", "sleeps ended by a wait source") \
	X(REACTOR_YIELDS, "hiwater_reactor_yields_total", COUNTER, "", ALL, "-", "sched_yield calls in spin windows") \
	X(REACTOR_SPINS_TO_WORK, "hiwater_reactor_idle_spins_to_work_total", COUNTER, "", ALL, "-",             \
	  "adaptive idle: idle periods whose next work came inside the spin window (docs/idle.md)")           \
	X(REACTOR_SPINS_TO_SLEEP, "hiwater_reactor_idle_spins_to_sleep_total", COUNTER, "", ALL, "-",           \
	  "adaptive idle: spin windows that ran out, so the reactor slept")                                   \
	X(REACTOR_CONTENDED_YIELDS, "hiwater_reactor_idle_contended_yields_total", COUNTER, "", ALL, "-",       \
	  "adaptive idle: yields that did not come back within 50 us (cores oversubscribed)")                 \
	X(REACTOR_STALLED_YIELDS, "hiwater_reactor_idle_stalled_yields_total", COUNTER, "", ALL, "-",           \
	  "adaptive idle: yields that came back 1 ms or more later (queued behind another thread)")           \
	X(REACTOR_DEMOTIONS, "hiwater_reactor_idle_demotions_total", COUNTER, "", ALL, "-",                   \
	  "adaptive idle: idle periods in which the reactor spun long enough to run as SCHED_IDLE")           \
	X(REACTOR_CONTENTION_PROBES, "hiwater_reactor_idle_contention_probes_total", COUNTER, "", ALL, "-",    \
	  "adaptive idle: probe yields while spinning was off for contention (one per 20 ms)")                \
	X(REACTOR_SPIN_WINDOW, "hiwater_reactor_idle_spin_window_seconds", GAUGE, "", ALL, "-",                 \
	  "adaptive idle: the learnt spin window (0 while spinning is off for contention)")                   \
	X(REACTOR_EARLY_WAKES, "hiwater_reactor_idle_early_wakes_total", COUNTER, "", ALL, "-",                 \
	  "adaptive idle: sleeps cut short to spin across a predicted periodic arrival")                      \
	X(REACTOR_EARLY_WAKES_TO_WORK, "hiwater_reactor_idle_early_wakes_to_work_total", COUNTER, "", ALL, "-", \
	  "adaptive idle: early wakes whose arrival came inside the predicted spin")                          \
	X(REACTOR_ARRIVAL_PERIOD, "hiwater_reactor_idle_arrival_period_seconds", GAUGE, "", ALL, "-",           \
	  "adaptive idle: the learnt period of arrivals the window misses (0 when not regular)")              \
	X(REACTOR_POLLER_ERRORS, "hiwater_reactor_poller_errors_total", COUNTER, "", ALL, "-",                 \
	  "pollers that returned an error")                                                                   \
	/* ---- controller ---- */                                                                          \
	X(CTRL_EVENTS, "hiwater_controller_events_total", COUNTER, "event", CONTROLLER,                        \
	  "kafka.controller:type=ControllerStats (e.g. UncleanLeaderElectionsPerSec)",                        \
	  "controller events by kind (engine/controller/hw_ctrl.h counters but the torn bytes)")              \
	X(CTRL_MLOG_TRUNCATED_BYTES, "hiwater_controller_metadata_log_truncated_bytes_total", COUNTER, "",     \
	  CONTROLLER, "-", "bytes of a torn metadata log tail truncated when the controller started")         \
	X(CTRL_BROKERS, "hiwater_controller_brokers", GAUGE, "state", CONTROLLER,                              \
	  "kafka.controller:type=KafkaController,name=ActiveBrokerCount / FencedBrokerCount",                 \
	  "registered brokers by state")                                                                      \
	X(OFFLINE_PARTITIONS, "hiwater_offline_partitions", GAUGE, "", CONTROLLER,                             \
	  "kafka.controller:type=KafkaController,name=OfflinePartitionsCount", "partitions with no leader")   \
	X(GLOBAL_PARTITIONS, "hiwater_global_partitions", GAUGE, "", CONTROLLER,                               \
	  "kafka.controller:type=KafkaController,name=GlobalPartitionCount", "partitions in the cluster")     \
	/* ---- controller high availability (ZooKeeper mode, docs/controller-ha.md) ---- */              \
	X(CTRL_ACTIVE, "hiwater_controller_active", GAUGE, "", CONTROLLER,                                     \
	  "kafka.controller:type=KafkaController,name=ActiveControllerCount",                                 \
	  "1 while this process is the active controller (always 1 for the embedded controller)")            \
	X(CTRL_EPOCH, "hiwater_controller_epoch", GAUGE, "", CONTROLLER, "-",                                  \
	  "controller epoch this process holds while active, else the last it saw (0: embedded controller)") \
	X(ZK_SESSION_STATE, "hiwater_controller_zookeeper_session_state", GAUGE, "", ZOOKEEPER,                \
	  "kafka.server:type=SessionExpireListener,name=SessionState",                                        \
	  "ZooKeeper session: 0 CONNECTING, 1 CONNECTED, 2 EXPIRED, 3 CLOSED")                                \
	X(ZK_EVENTS, "hiwater_controller_zookeeper_events_total", COUNTER, "event", ZOOKEEPER,                 \
	  "kafka.server:type=SessionExpireListener (ZooKeeperExpiresPerSec, ...)",                            \
	  "session, election and metadata write events, failed writes by reason (engine/controller/hw_ctrl_zk.h)") \
	X(ZK_REQUEST_LATENCY, "hiwater_controller_zookeeper_request_latency_seconds", HISTOGRAM, "", ZOOKEEPER, \
	  "kafka.server:type=ZooKeeperClientMetrics,name=ZooKeeperRequestLatencyMs",                          \
	  "latency of every ZooKeeper request of the controller (synchronous calls)")                         \
	X(BROKER_CONTROLLER_EPOCH, "hiwater_broker_controller_epoch", GAUGE, "", BROKER, "-",                  \
	  "highest controller epoch this broker has seen (0: embedded controller)")                          \
	X(BROKER_STALE_CONTROLLER, "hiwater_broker_stale_controller_messages_total", COUNTER, "message", BROKER, "-", \
	  "controller messages dropped because they carried a controller epoch lower than the highest seen")  \
	X(BROKER_CONTROLLER_SWITCHES, "hiwater_broker_controller_switches_total", COUNTER, "", BROKER, "-",    \
	  "times this broker moved to another controller (higher epoch push, NOT_CONTROLLER redirect, silence)") \
	/* ---- process ---- */                                                                             \
	X(JEMALLOC_ALLOCATED, "hiwater_jemalloc_allocated_bytes", GAUGE, "", JEMALLOC, "-",                    \
	  "bytes allocated by the application (jemalloc stats.allocated)")                                    \
	X(JEMALLOC_ACTIVE, "hiwater_jemalloc_active_bytes", GAUGE, "", JEMALLOC, "-",                          \
	  "bytes in active pages (jemalloc stats.active)")                                                    \
	X(JEMALLOC_RESIDENT, "hiwater_jemalloc_resident_bytes", GAUGE, "", JEMALLOC, "-",                      \
	  "bytes in physically resident pages mapped by the allocator (jemalloc stats.resident)")            \
	X(METRICS_SCRAPES, "hiwater_metrics_scrapes_total", COUNTER, "", ALL, "-", "HTTP scrapes served")

typedef enum hwd_metric {
#define HWD_METRIC_ENUM(id, name, type, labels, where, kafka, help) HWD_M_##id,
	HWD_METRIC_TABLE(HWD_METRIC_ENUM)
#undef HWD_METRIC_ENUM
	HWD_M_COUNT
} hwd_metric;

typedef enum hwd_mtype { HWD_MT_GAUGE, HWD_MT_COUNTER, HWD_MT_HISTOGRAM, HWD_MT_SUMMARY } hwd_mtype;

/* Which nodes serve a family. X(NAME, "description in docs/metrics.md") */
#define HWD_MWHERE_TABLE(X)                                  \
	X(ALL, "every node")                                 \
	X(BROKER, "broker")                                  \
	X(CONTROLLER, "controller")                          \
	X(ZOOKEEPER, "controller with zookeeper.connect")    \
	X(DPDK, "broker, dpdk transport")                    \
	X(MEMIF, "broker, dpdk transport with memif ports")  \
	X(JEMALLOC, "builds linking jemalloc")
typedef enum hwd_mwhere {
#define HWD_MWHERE_ENUM(n, d) HWD_MW_##n,
	HWD_MWHERE_TABLE(HWD_MWHERE_ENUM)
#undef HWD_MWHERE_ENUM
	HWD_MW_COUNT
} hwd_mwhere;

/* The table's columns for m; never NULL ("" for m out of range). */
const char *hwd_metric_name(hwd_metric m);
const char *hwd_metric_help(hwd_metric m);
hwd_mtype hwd_metric_type(hwd_metric m);
const char *hwd_mtype_name(hwd_mtype t); /* "gauge", ...; never NULL */

/* ---- rendering: a growing text buffer ---- */
typedef struct hwd_tbuf {
	char *b;
	size_t n, cap;
	int oom; /* an allocation failed: the text is cut short */
} hwd_tbuf;

/* Append printf output; on allocation failure sets t->oom and drops it. */
__attribute__((format(printf, 2, 3))) void hwd_tb(hwd_tbuf *t, const char *fmt, ...);
/* "# HELP name help\n# TYPE name type\n" of family m. */
void hwd_mhead(hwd_tbuf *t, hwd_metric m);
/* One sample "name{labels} v\n" of family m: labels is printf-formatted
 * (the inside of the braces), NULL for none. u64: exact integer; dbl: the
 * shortest of %.15g / %.17g that reads back as v. */
__attribute__((format(printf, 4, 5))) void hwd_mu64(hwd_tbuf *t, hwd_metric m, uint64_t v, const char *lfmt, ...);
__attribute__((format(printf, 4, 5))) void hwd_mdbl(hwd_tbuf *t, hwd_metric m, double v, const char *lfmt, ...);
/* Header and one unlabelled sample. */
void hwd_mone(hwd_tbuf *t, hwd_metric m, double v);

/* Per-partition families (HW_PART_METRIC_TABLE): "hiwater_partition_<name>"
 * plus "_total" for counters, into buf. 0, or -ENOSPC (cut short). */
int hwd_part_family(int pm, char *buf, size_t cap);

/* docs/metrics.md: every family of both tables and the label values of the
 * tables that name them, as Markdown. 0 or -EIO. */
int hwd_metrics_print_table(FILE *out);

#endif
