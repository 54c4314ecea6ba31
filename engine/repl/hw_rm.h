/* hw_rm.h — the replica manager: the one entry point of the replication core.
 *
 * Design note. A broker owns one hw_rm per reactor. The transport decodes
 * every inbound frame into an hw_msg and hands it to hw_rm_on_msg(); the rm
 * answers through hw_net (dst = request src, same correlation id). Nothing
 * here blocks: a produce with acks=all or a fetch that cannot be answered yet
 * is parked in a purgatory (timing wheel keyed by partition) and completed
 * later by hw_rm_poll(), which the reactor calls in its loop:
 *
 *   for (;;) {
 *       rx burst -> hw_rm_on_msg() for each message
 *       int work = hw_rm_poll(rm);        // timers, ISR expiry, fetchers,
 *                                         // store completions, HW advance,
 *                                         // DelayedProduce/Fetch completion
 *       if (!work) sleep until min(next packet, hw_rm_next_deadline_ns(rm));
 *   }
 *
 * Partitions come into existence with the controller's PARTITION_STATE push
 * (Kafka's PartitionRecord / PartitionChangeRecord): the rm opens the
 * partition's log through the open_store callback, becomes leader or
 * follower, and from then on follows Kafka's replication rules
 * (docs/replication.md): leader HW = min LEO over the maximal ISR and
 * caught-up replicas, blocked under min ISR; ISR shrink/expand through
 * ALTER_PARTITION to the controller (one in flight per partition); followers
 * fetch continuously from their leader, reconciling by leader epoch first.
 *
 * Threading: single-threaded. Every function taking an hw_rm must be called
 * on the reactor named by hw_rm_config.owner_reactor, or on a thread that
 * runs no reactor (start-up, shutdown); HW_ASSERT_OWNER checks it at each
 * entry point and aborts naming the function otherwise.
 */
#ifndef HW_RM_H
#define HW_RM_H
#include <stddef.h>
#include <stdint.h>
#include "hw_clock.h"
#include "hw_msg.h"
#include "hw_net.h"
#include "hw_owner.h"
#include "hw_store.h"
#include "hw_types.h"

typedef struct hw_rm hw_rm;

/* Open (create if absent) the log of partition tp of `topic`. is_new: the
 * first PARTITION_STATE seen shows the partition as the controller created
 * it (partition epoch 0: no leader or ISR change since; Kafka's
 * LeaderAndIsr isNew), so no replica can hold data the broker might have
 * lost (docs/logdirs.md "Start-up: recovery and deleted logs"). Returns 0
 * and *out, or negative errno (the partition then stays offline and
 * answers KAFKA_STORAGE_ERROR). The rm closes it with store->ops->close. */
typedef int (*hw_rm_open_store_fn)(void *ctx, hw_tp tp, const char *topic, int is_new, hw_store **out);
/* The partition's topic was deleted (PARTITION_STATE deleted): close the
 * store and delete its log (Kafka renames the directory to -delete and
 * removes it). NULL: the rm just closes the store. */
typedef void (*hw_rm_delete_store_fn)(void *ctx, hw_tp tp, const char *topic, hw_store *store);

/* Kafka broker configs, under their Kafka names, with Kafka's defaults and
 * validators (ReplicationConfigs, ServerConfigs, ServerLogConfigs,
 * QuotaConfig ConfigDefs); a bound narrower than Kafka's is what this
 * implementation needs (said in the doc). hiwaterd's configuration schema
 * (apps/hiwaterd/hwd_config_schema.c) declares these keys from this table,
 * and hw_rm_config_set enforces the same range.
 * Kafka's type follows from max: int when it fits 32 bits, else long.
 * X(field, "kafka.name", default, min, max, unit, importance, doc);
 * importance is Kafka's (HIGH, MEDIUM, LOW). */
#define HW_RM_KAFKA_CONFIG_TABLE(X)                                          \
	X(replica_lag_time_max_ms, "replica.lag.time.max.ms", 30000, 0, INT64_MAX, "ms", HIGH, \
	  "a follower that has not caught up to the leader's LEO for this long leaves the ISR") \
	X(replica_fetch_wait_max_ms, "replica.fetch.wait.max.ms", 500, 0, INT32_MAX, "ms", HIGH, \
	  "longest a follower fetch is parked at the leader waiting for replica.fetch.min.bytes") \
	X(replica_fetch_min_bytes, "replica.fetch.min.bytes", 1, 0, INT32_MAX, "bytes", HIGH, \
	  "bytes a follower fetch waits for") \
	X(replica_fetch_max_bytes, "replica.fetch.max.bytes", 1048576, 0, INT32_MAX, "bytes", MEDIUM, \
	  "bytes per partition in one follower fetch (a larger first batch still comes)") \
	X(replica_fetch_response_max_bytes, "replica.fetch.response.max.bytes", 10485760, 0, INT32_MAX, \
	  "bytes", MEDIUM, "bytes in one follower fetch response") \
	X(replica_fetch_backoff_ms, "replica.fetch.backoff.ms", 1000, 0, INT32_MAX, "ms", MEDIUM, \
	  "a follower whose fetch failed waits this long") \
	X(message_max_bytes, "message.max.bytes", 1048588, 0, INT32_MAX, "bytes", HIGH, \
	  "largest record batch a leader accepts") \
	X(min_insync_replicas, "min.insync.replicas", 1, 1, 32767, NULL, HIGH, \
	  "acks=all needs this many ISR members; broker default and default for new topics (hiwater keeps it in 16 bits)") \
	X(leader_replication_throttled_rate, "leader.replication.throttled.rate", 9223372036854775807, 0, \
	  INT64_MAX, "bytes/s", MEDIUM, "replication throttle of a leader (9223372036854775807: unthrottled); see \"Replication throttle\"") \
	X(follower_replication_throttled_rate, "follower.replication.throttled.rate", 9223372036854775807, 0, \
	  INT64_MAX, "bytes/s", MEDIUM, "replication throttle of a follower (9223372036854775807: unthrottled)") \
	X(replication_quota_window_num, "replication.quota.window.num", 11, 1, 64, NULL, LOW, \
	  "windows the throttle's rate is measured over (hiwater keeps at most 64: HW_QUOTA_MAX_SAMPLES)") \
	X(replication_quota_window_size_seconds, "replication.quota.window.size.seconds", 1, 1, 86400, "s", LOW, \
	  "length of one throttle window (hiwater: at most a day)") \
	X(log_retention_check_interval_ms, "log.retention.check.interval.ms", 300000, 1, INT64_MAX, "ms", MEDIUM, \
	  "every replica deletes its whole oldest segments past log.retention.ms / log.retention.bytes, never past its HW (Kafka's LogManager.cleanupLogs), this often") \
	X(replica_high_watermark_checkpoint_interval_ms, "replica.high.watermark.checkpoint.interval.ms", 5000, 0, \
	  INT64_MAX, "ms", HIGH, "each replica writes its HW to high-watermark-checkpoint in the partition directory this often and at shutdown; a restarted replica starts from it")

typedef struct hw_rm_config {
	int32_t node_id;            /* this broker's node.id (>= 0) */
	int64_t broker_epoch;       /* from broker registration; -1 unknown */
	int32_t controller_id;      /* where ALTER_PARTITION goes */
#define HW_RM_CFG_FIELD(field, name, def, lo, hi, unit, imp, doc) int64_t field;
	HW_RM_KAFKA_CONFIG_TABLE(HW_RM_CFG_FIELD)
#undef HW_RM_CFG_FIELD
	/* min_insync_replicas above is the broker default; a PARTITION_STATE
	 * with min_insync_replicas > 0 overrides it per topic.
	 *
	 * Replication throttle (Kafka KIP-73, ReplicationQuotaManager): the
	 * two *.replication.throttled.rate are broker-wide byte-rate quotas
	 * (bytes/s, INT64_MAX = unthrottled) measured over
	 * replication.quota.window.num windows of
	 * replication.quota.window.size.seconds (hw_quota.h). Which partitions
	 * they cover comes per topic with PARTITION_STATE
	 * (leader/follower_throttled: the topic configs
	 * {leader,follower}.replication.throttled.replicas resolved to broker
	 * ids). Only replicas outside the ISR are held back (catch-up
	 * traffic); all replication bytes of covered partitions count. Leader:
	 * a fetch from an out-of-ISR follower gets no records for a covered
	 * partition while the leader quota is exceeded (and those bytes do not
	 * satisfy a parked fetch's min bytes). Follower: while its quota is
	 * exceeded a follower that is behind the leader's HW leaves covered
	 * partitions out of its fetches (re-checking when the quota frees up,
	 * at most replica.fetch.backoff.ms later). */

	/* hiwater-specific knobs (0 = default) */
	int64_t isr_check_interval_ms;     /* default replica.lag.time.max.ms/20,
					    * min 1 (Kafka: lag/2; see hw_part.c) */
	int64_t fetch_request_timeout_ms;  /* follower re-sends a fetch whose
					    * response did not come (lost datagram);
					    * default wait.max + 2 * 100 ms */
	int64_t alter_partition_retry_ms;  /* re-send an unanswered AlterPartition;
					    * default 1000 */

	hw_rm_open_store_fn open_store;
	hw_rm_delete_store_fn delete_store;  /* NULL: close only */
	void *store_ctx;

	/* 1: a new follower first reconciles with OffsetsForLeaderEpoch round
	 * trips (KIP-101/279, fetcher state TRUNCATING) before fetching; 0
	 * (default): reconciliation on the fetch path via DivergingEpoch, as
	 * Kafka >= 2.7 (KIP-320/595). Both use the same truncation rule. */
	int32_t truncate_via_offsets_for_epoch;

	/* 1: every store wakes the caller's event loop when an I/O completes
	 * (hiwaterd registers an eventfd with each hw_log), so a partition
	 * that only waits for its writes to complete does not make
	 * hw_rm_next_deadline_ns say "now" (which would spin the loop until
	 * the completion). 0 (default, and for the in-memory store): it does. */
	int32_t stores_signal_completions;

	/* A request the transport refused (hw_net_send < 0: -EHOSTUNREACH
	 * while it has not learnt the destination's address yet, -EAGAIN TX
	 * ring full, -EMSGSIZE) never left, so no answer is waited for: a
	 * follower fetch, OffsetsForLeaderEpoch or AlterPartition is retried
	 * after this back-off (ms), doubled per consecutive refusal up to
	 * replica.fetch.backoff.ms (AlterPartition: alter_partition_retry_ms),
	 * reset by an accepted send. 0 = default 1 (a "no route yet" clears
	 * within a millisecond of learning a new leader). */
	int64_t send_retry_backoff_ms;

	/* The id of the reactor (hw_reactor_cfg.id) that runs this rm; every
	 * entry point asserts it (HW_ASSERT_OWNER). HW_OWNER_ANY (the
	 * default): not checked. */
	int32_t owner_reactor;
	/* Log compaction (docs/compaction.md): log.cleaner.enable (1) and
	 * log.cleaner.backoff.ms (15000): every replica cleans its own logs
	 * (store op clean, bounded by its HW) one at a time, checking again
	 * at once after a log was cleaned, else after the backoff (Kafka's
	 * CleanerThread). */
	int log_cleaner_enable;
	int64_t log_cleaner_backoff_ms;

	/* Where the transport that delivers to this rm announces the receive
	 * buffer of each message (hw_rxhold.h): a follower appends fetched
	 * records of HW_RXHOLD_MIN_BYTES or more from there, holding it,
	 * instead of copying. NULL (the default): always copies. */
	struct hw_rxhold_ctx *rxhold;
	/* Racks (docs/racks.md): this broker's broker.rack ("" none) and
	 * replica.selector.class — which replica a consumer fetch naming its
	 * rack is told to read from (Kafka's ReplicaSelector, KIP-392):
	 * HW_RM_SELECTOR_LEADER (default, Kafka's empty class) or
	 * HW_RM_SELECTOR_RACK_AWARE (RackAwareReplicaSelector: an in-sync
	 * replica in the consumer's rack). The other brokers' racks come from
	 * the controller's metadata (hw_rm_set_broker_rack). */
	char rack[HW_RACK_MAX];
	int32_t replica_selector;
} hw_rm_config;

#define HW_RM_SELECTOR_LEADER     0
#define HW_RM_SELECTOR_RACK_AWARE 1
#define HW_RM_RACK_AWARE_SELECTOR_CLASS "org.apache.kafka.common.replica.RackAwareReplicaSelector"

/* Fill c with the defaults above (node_id 0, broker_epoch -1,
 * controller_id -1, open_store NULL, owner_reactor HW_OWNER_ANY). */
void hw_rm_config_defaults(hw_rm_config *c);

/* Look up / set a Kafka config by its Kafka name ("replica.lag.time.max.ms").
 * 0, -ENOENT for an unknown name, -EINVAL for a value outside the
 * table's [min, max]. */
int hw_rm_config_set(hw_rm_config *c, const char *kafka_name, int64_t value);

/* Change a broker config at runtime (Kafka dynamic broker config). Only
 * leader.replication.throttled.rate and follower.replication.throttled.rate
 * are dynamic; the measured rate is kept. 0, -ENOENT for an unknown name,
 * -EINVAL for a negative value, -ENOTSUP for a config that is not dynamic. */
int hw_rm_set_dynamic_config(hw_rm *rm, const char *kafka_name, int64_t value);

/* Create a replica manager. clock and net are borrowed and must outlive it.
 * Returns 0, -EINVAL (NULL args, no open_store, node_id < 0, a config out of
 * range), -ENOMEM. */
int hw_rm_create(const hw_rm_config *cfg, hw_clock *clock, hw_net *net, hw_rm **out);

/* Close every partition's store and free everything. Parked operations are
 * completed first with NOT_LEADER_OR_FOLLOWER, sent through the net (which
 * must still be alive). NULL is a no-op. */
void hw_rm_destroy(hw_rm *rm);

/* The broker epoch changes at (re-)registration with the controller; the
 * controller may move (failover). Both take effect for the next
 * ALTER_PARTITION / FETCH the rm sends. */
void hw_rm_set_broker_epoch(hw_rm *rm, int64_t broker_epoch);

/* Broker id's rack as the controller's metadata says ("" or NULL: none),
 * for the rack-aware replica selector (docs/racks.md). 0, -EINVAL (id < 0,
 * rack too long), -ENOSPC (more than 64 brokers with racks). */
int hw_rm_set_broker_rack(hw_rm *rm, int32_t id, const char *rack);
void hw_rm_set_controller(hw_rm *rm, int32_t controller_id);

/* Controller fencing: every PARTITION_STATE and ALTER_PARTITION_RESP with
 * a controller epoch (> 0, ZooKeeper mode) lower than the highest seen is
 * dropped and counted (hw_rm_stats); a higher one is adopted and its
 * sender becomes the controller AlterPartition goes to (the controller
 * moved). Messages without an epoch (the embedded controller) pass. */

/* Deliver one inbound message (PRODUCE, FETCH, FETCH_RESP,
 * OFFSETS_FOR_EPOCH, OFFSETS_FOR_EPOCH_RESP, ALTER_PARTITION_RESP,
 * PARTITION_STATE). Everything m points to is borrowed for the call.
 * Returns 0 when handled (including when answered with a Kafka error code),
 * -EPROTO for a malformed message (counted and dropped, never a crash),
 * -ENOTSUP for a type the rm does not handle. */
int hw_rm_on_msg(hw_rm *rm, const hw_msg *m);

/* Do all due work: advance the purgatory wheel (expiries), ISR expiry
 * checks, follower fetchers (send fetches, back-offs, re-sends), store
 * polls, then HW advance and DelayedProduce/DelayedFetch completion, batched
 * once per call. Returns the amount of work done (> 0), 0 when idle, or
 * negative errno on an internal failure (already logged). */
int hw_rm_poll(hw_rm *rm);

/* Absolute clock time (ns, the rm's hw_clock) of the next timer the rm
 * needs to run at; INT64_MAX if none. An idle reactor may sleep until then
 * (or until a packet arrives). */
int64_t hw_rm_next_deadline_ns(hw_rm *rm);

/* ---- Introspection ---------------------------------------------------- */

#define HW_PART_ROLE_TABLE(X) \
	X(NONE)      /* no metadata yet / not a replica */ \
	X(LEADER)                                          \
	X(FOLLOWER)                                        \
	X(OFFLINE)   /* replica, but leader -1 or store failed */

typedef enum hw_part_role {
#define HW_PART_ROLE_ENUM(n) HW_PART_##n,
	HW_PART_ROLE_TABLE(HW_PART_ROLE_ENUM)
#undef HW_PART_ROLE_ENUM
	HW_PART_ROLE_MAX
} hw_part_role;
const char *hw_part_role_name(int role); /* never NULL */

/* Follower fetcher state (one per followed partition). */
#define HW_FETCHER_STATE_TABLE(X)                                            \
	X(IDLE)        /* not a follower */                                  \
	X(TRUNCATING)  /* waiting for OffsetsForLeaderEpoch reconciliation */ \
	X(FETCHING)    /* steady state: fetch, append, update HW */          \
	X(BACKOFF)     /* error: wait replica.fetch.backoff.ms */            \
	X(FAILED)      /* fenced with unchanged epoch: wait for new metadata */

typedef enum hw_fetcher_state {
#define HW_FETCHER_ENUM(n) HW_FETCHER_##n,
	HW_FETCHER_STATE_TABLE(HW_FETCHER_ENUM)
#undef HW_FETCHER_ENUM
	HW_FETCHER_STATE_MAX
} hw_fetcher_state;
const char *hw_fetcher_state_name(int s); /* never NULL */

/* Per-partition counters/gauges, exported by hiwaterd as
 * hiwater_partition_<metric_name> (counters with _total) with labels topic and
 * partition, and listed in docs/metrics.md from this table.
 * X(NAME, "metric_name", is_gauge, per_unit, "help", "Kafka metric")
 * per_unit: the stored value per exported unit (FOLLOWER_LAG_MS is kept in
 * ms and exported in seconds, Prometheus's base unit). "-": no Kafka
 * counterpart. */
#define HW_PART_METRIC_TABLE(X) \
	X(ISR_SHRINKS, "isr_shrinks", 0, 1, \
	  "times the ISR of the partition shrank (this broker leading)", \
	  "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec") \
	X(ISR_EXPANDS, "isr_expands", 0, 1, \
	  "times the ISR of the partition grew (this broker leading)", \
	  "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec") \
	X(UNDER_REPLICATED, "under_replicated", 1, 1, \
	  "1 if this broker leads the partition and its ISR is smaller than its replica set", \
	  "kafka.cluster:type=Partition,name=UnderReplicated") \
	X(UNDER_MIN_ISR, "under_min_isr", 1, 1, \
	  "1 if this broker leads the partition and its ISR is smaller than min.insync.replicas", \
	  "kafka.cluster:type=Partition,name=UnderMinIsr") \
	X(AT_MIN_ISR, "at_min_isr", 1, 1, \
	  "1 if this broker leads the partition and its ISR size equals min.insync.replicas", \
	  "kafka.cluster:type=Partition,name=AtMinIsr") \
	X(FOLLOWER_LAG_OFFSETS, "follower_max_lag_offsets", 1, 1, \
	  "largest follower lag in offsets (leader LEO - follower LEO) over the followers", \
	  "kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica (seen from the leader)") \
	X(FOLLOWER_LAG_MS, "follower_max_lag_seconds", 1, 1000, \
	  "longest time since a follower was last caught up, over the followers (compared with replica.lag.time.max.ms)", \
	  "-") \
	X(PRODUCE_REQUESTS, "produce_requests", 0, 1, \
	  "produce requests for the partition", \
	  "kafka.server:type=BrokerTopicMetrics,name=TotalProduceRequestsPerSec,topic") \
	X(PRODUCE_RECORDS_BATCHES, "produce_batches", 0, 1, \
	  "record batches appended by produce requests", \
	  "-") \
	X(PRODUCE_BYTES, "produce_bytes", 0, 1, \
	  "record bytes appended by produce requests", \
	  "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic") \
	X(PRODUCE_ERRORS, "produce_errors", 0, 1, \
	  "produce requests answered with an error", \
	  "kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec,topic") \
	X(PRODUCE_DUPLICATES, "produce_duplicates", 0, 1, \
	  "produce batches recognised as retries by the idempotent producer state (acknowledged, not appended again)", \
	  "-") \
	X(FOLLOWER_FETCHES, "follower_fetches", 0, 1, \
	  "fetches of the partition from follower replicas", \
	  "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=FetchFollower") \
	X(CONSUMER_FETCHES, "consumer_fetches", 0, 1, \
	  "fetches of the partition from consumers", \
	  "kafka.server:type=BrokerTopicMetrics,name=TotalFetchRequestsPerSec,topic") \
	X(CONSUMER_FETCHES_AS_FOLLOWER, "consumer_fetches_as_follower", 0, 1, \
	  "consumer fetches of the partition this broker served as a follower (fetch from the closest replica, KIP-392)", \
	  "-") \
	X(PREFERRED_READ_REPLICA, "preferred_read_replica_answers", 0, 1, \
	  "consumer fetches this leader answered with a preferred read replica instead of records", \
	  "-") \
	X(FETCH_ERRORS, "fetch_errors", 0, 1, \
	  "fetches of the partition answered with an error, and fetch responses this follower could not use", \
	  "kafka.server:type=BrokerTopicMetrics,name=FailedFetchRequestsPerSec,topic") \
	X(DELAYED_PRODUCE, "delayed_produce", 0, 1, \
	  "produce requests parked in purgatory (acks=all waiting for the ISR)", \
	  "-") \
	X(DELAYED_PRODUCE_EXPIRED, "delayed_produce_expired", 0, 1, \
	  "parked produce requests that timed out (request.timeout.ms)", \
	  "kafka.server:type=DelayedProduceMetrics,name=ExpiresPerSec") \
	X(DELAYED_FETCH, "delayed_fetch", 0, 1, \
	  "fetches of the partition parked in purgatory (fetch.min.bytes not yet available)", \
	  "-") \
	X(DELAYED_FETCH_EXPIRED, "delayed_fetch_expired", 0, 1, \
	  "parked fetches answered at their max wait", \
	  "kafka.server:type=DelayedFetchMetrics,name=ExpiresPerSec,fetcherType") \
	X(HW_ADVANCES, "hw_advances", 0, 1, \
	  "times the high watermark moved forward", \
	  "-") \
	X(TRUNCATIONS, "truncations", 0, 1, \
	  "log truncations of this follower (leader epoch reconciliation)", \
	  "-") \
	X(REPLICA_FETCH_SENT, "replica_fetch_sent", 0, 1, \
	  "follower fetch requests this broker sent that include the partition", \
	  "kafka.server:type=FetcherStats,name=RequestsPerSec") \
	X(REPLICA_FETCH_RESENT, "replica_fetch_resent", 0, 1, \
	  "follower fetches including the partition sent again after an unanswered one", \
	  "-") \
	X(REPLICA_BYTES_APPENDED, "replica_bytes_appended", 0, 1, \
	  "record bytes this follower appended from fetch responses", \
	  "kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesInPerSec,topic") \
	X(ALTER_PARTITION_SENT, "alter_partition_sent", 0, 1, \
	  "AlterPartition requests sent to the controller (ISR changes)", \
	  "-") \
	X(STORE_ERRORS, "store_errors", 0, 1, \
	  "log (store) operations of the partition that failed", \
	  "-") \
	X(CORRUPT_BATCHES, "corrupt_batches", 0, 1, \
	  "fetches that found a batch failing its CRC: served answered CORRUPT_MESSAGE (leader), or received (follower, backs off)", \
	  "-") \
	X(LEADER_THROTTLED, "leader_throttled_fetches", 0, 1, \
	  "answers to out-of-ISR followers sent without records: leader replication quota exceeded", \
	  "-") \
	X(FOLLOWER_THROTTLED, "follower_throttled_fetches", 0, 1, \
	  "follower fetches that left the partition out: follower replication quota exceeded", \
	  "-") \
	X(LEADER_THROTTLED_BYTES, "leader_throttled_bytes", 0, 1, \
	  "replication bytes of the partition recorded against the leader quota", \
	  "kafka.server:type=LeaderReplication,name=byte-rate") \
	X(FOLLOWER_THROTTLED_BYTES, "follower_throttled_bytes", 0, 1, \
	  "replication bytes of the partition recorded against the follower quota", \
	  "kafka.server:type=FollowerReplication,name=byte-rate") \
	X(REPLICA_FETCH_SEND_FAILED, "replica_fetch_send_failed", 0, 1, \
	  "follower fetches including the partition that the transport refused (retried)", \
	  "-") \
	X(OFFSETS_FOR_EPOCH_SEND_FAILED, "offsets_for_epoch_send_failed", 0, 1, \
	  "OffsetsForLeaderEpoch requests the transport refused (retried)", \
	  "-") \
	X(ALTER_PARTITION_SEND_FAILED, "alter_partition_send_failed", 0, 1, \
	  "AlterPartition requests the transport refused (retried)", \
	  "-") \
	X(REPLICA_BYTES_RX_HELD, "replica_bytes_rx_held", 0, 1, \
	  "fetched bytes handed to the log with a hold on their receive buffer (written without a copy)", \
	  "-") \
	X(BATCHES_ASSEMBLED, "batches_assembled", 0, 1, \
	  "fetched record batches larger than a frame, assembled from their pieces (docs/wire.md#batch-pieces)", \
	  "-") \
	X(BATCH_PIECES_DROPPED, "batch_pieces_dropped", 0, 1, \
	  "pieces of a fetched batch not used: repeats, pieces of a batch not at the follower's LEO, a batch over its limit", \
	  "-")
/* REPLICA_BYTES_RX_HELD: fetched bytes handed to the store together with a
 * hold on the receive buffer they arrived in (hw_rxhold.h), so the log can
 * write them from there instead of copying them (it still copies with
 * direct_io or after a segment roll).
 * LEADER_THROTTLED: answers to an out-of-ISR follower sent without records
 * because the leader quota was exceeded. FOLLOWER_THROTTLED: fetches this
 * follower sent without the partition (its quota exceeded). *_BYTES:
 * replication bytes of the partition recorded against the quota.
 * *_SEND_FAILED: requests of this partition (a follower fetch including
 * it, an OffsetsForLeaderEpoch, an AlterPartition) that the transport
 * refused (hw_net_send < 0: no route yet, TX ring full); they are retried
 * after send_retry_backoff_ms and not counted in REPLICA_FETCH_SENT /
 * ALTER_PARTITION_SENT. */

typedef enum hw_part_metric {
#define HW_PART_METRIC_ENUM(n, s, g, u, h, k) HW_PM_##n,
	HW_PART_METRIC_TABLE(HW_PART_METRIC_ENUM)
#undef HW_PART_METRIC_ENUM
	HW_PM_MAX
} hw_part_metric;
/* The table's columns for metric m; never NULL ("unknown_metric", "" or
 * "-" for m out of range); per_unit 1 out of range. */
const char *hw_part_metric_name(int m);
int hw_part_metric_is_gauge(int m);
int hw_part_metric_per_unit(int m);
const char *hw_part_metric_help(int m);
const char *hw_part_metric_kafka(int m);

typedef struct hw_rm_follower_info {
	int32_t id;
	int64_t leo;                  /* -1: not fetched yet */
	int64_t last_caught_up_ms;
	int64_t last_fetch_ms;
	int64_t lag_offsets;          /* leader LEO - follower LEO */
	int64_t lag_ms;               /* now - lastCaughtUp */
	int32_t last_fetched_epoch;
} hw_rm_follower_info;

typedef struct hw_rm_part_info {
	hw_tp tp;
	char topic[HW_TOPIC_NAME_MAX];
	int role;                     /* hw_part_role */
	int fetcher_state;            /* hw_fetcher_state */
	int32_t leader;
	int32_t leader_epoch;
	int32_t partition_epoch;
	hw_idset replicas;
	hw_idset isr;                 /* committed */
	hw_idset maximal_isr;         /* committed + pending change */
	int alter_in_flight;          /* 1 while an AlterPartition is pending */
	hw_idset elr;
	hw_idset last_known_elr;
	int16_t min_insync_replicas;  /* effective for this topic */
	int64_t leo;
	int64_t hw;
	int64_t log_start;
	int64_t leader_epoch_start_offset; /* leader: LEO when its epoch began */
	uint8_t n_followers;          /* leader only */
	hw_rm_follower_info followers[HW_MAX_RF];
	uint64_t metrics[HW_PM_MAX];
	/* Replication throttle (PARTITION_STATE leader/follower_throttled):
	 * whether this broker's leader / follower quota covers the partition,
	 * and (follower) whether it is caught up to the leader's HW (Kafka's
	 * fetcher lag == 0: never throttled then). */
	uint8_t leader_throttled;
	uint8_t follower_throttled;
	uint8_t follower_in_sync;
} hw_rm_part_info;

/* Snapshot partition tp. 0, or -ENOENT if the rm does not know it. */
int hw_rm_partition_info(hw_rm *rm, hw_tp tp, hw_rm_part_info *out);

/* Number of partitions the rm knows. */
size_t hw_rm_partition_count(hw_rm *rm);
/* The tp of the i-th partition (0 <= i < count; order stable until a
 * partition is added). 0, or -ENOENT when i is out of range. */
int hw_rm_partition_at(hw_rm *rm, size_t i, hw_tp *out);

/* Messages refused for who sent them (docs/security.md "Sender
 * identity"), counted by reason. X(NAME, description). */
#define HW_RM_REJECT_TABLE(X)                                                              \
	X(NOT_CONTROLLER, "PARTITION_STATE or ALTER_PARTITION_RESP from a node that is not the controller") \
	X(REPLICA_NOT_SENDER, "follower FETCH whose replica_id is not the node that sent it")     \
	X(STALE_BROKER_EPOCH, "follower FETCH with a broker epoch older than the replica's current one") \
	X(BAD_TOPIC_NAME, "PARTITION_STATE whose topic is not a legal Kafka topic name")
typedef enum hw_rm_reject {
#define HW_RM_REJECT_ENUM(n, d) HW_RM_REJECT_##n,
	HW_RM_REJECT_TABLE(HW_RM_REJECT_ENUM)
#undef HW_RM_REJECT_ENUM
	HW_RM_REJECT__COUNT
} hw_rm_reject;
const char *hw_rm_reject_name(int r);   /* "NOT_CONTROLLER"; never NULL */

/* 1 when s is a legal Kafka topic name (Topic.validate: 1..249 chars of
 * [a-zA-Z0-9._-], not "." or ".."), so it can become a directory name. */
int hw_topic_name_valid(const char *s);

/* Broker-wide gauges (Kafka's ReplicaManager metrics). */
typedef struct hw_rm_stats {
	uint32_t partitions;
	uint32_t leaders;
	uint32_t under_replicated;    /* UnderReplicatedPartitions */
	uint32_t under_min_isr;       /* UnderMinIsrPartitionCount */
	uint32_t offline;
	uint64_t delayed_produce;     /* currently parked */
	uint64_t delayed_fetch;
	uint64_t dropped_malformed;   /* -EPROTO messages */
	/* controller fencing (ZooKeeper mode, docs/controller-ha.md): the
	 * highest controller epoch seen, pushes and AlterPartition answers
	 * dropped because they came from a lower one */
	int32_t controller_epoch;
	uint64_t stale_controller_pushes;
	uint64_t stale_controller_alter_resps;
	uint64_t rejected[HW_RM_REJECT__COUNT];  /* sender identity (HW_RM_REJECT_TABLE) */
	/* replication throttle (Kafka LeaderReplication/FollowerReplication
	 * byte-rate): bounds in force, measured rates, bytes recorded against
	 * each quota, and throttle events summed over partitions */
	int64_t leader_throttle_bound;     /* bytes/s, INT64_MAX: unthrottled */
	int64_t follower_throttle_bound;
	double leader_throttle_rate;       /* bytes/s over the quota window */
	double follower_throttle_rate;
	uint64_t leader_throttled_bytes;
	uint64_t follower_throttled_bytes;
	uint64_t leader_throttled_fetches;   /* sum of HW_PM_LEADER_THROTTLED */
	uint64_t follower_throttled_fetches; /* sum of HW_PM_FOLLOWER_THROTTLED */
} hw_rm_stats;
void hw_rm_get_stats(hw_rm *rm, hw_rm_stats *out);

/* ---- Request timing (Kafka RequestMetrics) ---------------------------- *
 *
 * Design note. Kafka times every request in phases (RequestChannel.
 * updateRequestMetrics): RequestQueueTime (received -> a handler thread
 * takes it), LocalTime (the handler), RemoteTime (parked in a purgatory:
 * acks=all waiting for the ISR, a fetch waiting for bytes), ResponseQueue
 * and ResponseSendTime (handing the response to the network), TotalTime
 * their sum. hiwater has no threads between the transport and the rm, so
 * the phases become points on the rm's clock: the RX poll that received
 * the frame (given by the transport's owner to hw_rm_on_msg_at), the start
 * of hw_rm_on_msg, the moment the request was parked, the moment its
 * response was built, and the return of hw_net_send. The difference
 * between receipt and start is the time the message waited behind the
 * earlier messages of its RX burst (Kafka's queue time). An acks=1 produce
 * waiting for the leader's own write to complete stays in LocalTime (Kafka
 * appends synchronously in the handler); RemoteTime is the wait for other
 * replicas (acks=all) or for data (a long-polling fetch).
 *
 * The rm reports each PRODUCE and FETCH it answers (or, for acks=0,
 * handles) once, to an observer the owner sets; nothing is timed and no
 * clock is read when no observer is set. Requests dropped as malformed or
 * left unanswered (allocation failure) are not reported. */

/* X(NAME, Kafka request label, acks label) */
#define HW_RM_REQ_KIND_TABLE(X)                         \
	X(PRODUCE_ACKS0,   "Produce",       "0")       \
	X(PRODUCE_ACKS1,   "Produce",       "1")       \
	X(PRODUCE_ACKSALL, "Produce",       "all")     \
	X(FETCH_CONSUMER,  "Fetch",         "")        \
	X(FETCH_FOLLOWER,  "FetchFollower", "")

typedef enum hw_rm_req_kind {
#define HW_RM_REQ_KIND_ENUM(n, req, acks) HW_RM_REQ_##n,
	HW_RM_REQ_KIND_TABLE(HW_RM_REQ_KIND_ENUM)
#undef HW_RM_REQ_KIND_ENUM
	HW_RM_REQ_KIND_MAX
} hw_rm_req_kind;
const char *hw_rm_req_kind_name(int k);    /* "PRODUCE_ACKSALL"; never NULL */
const char *hw_rm_req_kind_request(int k); /* Kafka's label: "Produce", "Fetch", "FetchFollower" */
const char *hw_rm_req_kind_acks(int k);    /* "0", "1", "all"; "" for fetches */

/* One answered request, in ns of the rm's clock; rx <= start <= parked <=
 * ready <= sent. Kafka's phases: queue = start - rx, local = (delayed ?
 * parked : ready) - start, remote = delayed ? ready - parked : 0, response
 * send = sent - ready, total = sent - rx (their sum). */
typedef struct hw_rm_req_timing {
	int kind;                 /* hw_rm_req_kind */
	int16_t error;            /* produce: the response's Kafka error; fetch: 0 */
	uint8_t delayed;          /* waited for the ISR or for data (RemoteTime) */
	int64_t rx_ns;            /* receipt (RX poll); start_ns when not given */
	int64_t start_ns;         /* hw_rm_on_msg began */
	int64_t parked_ns;        /* parked (delayed) or = ready_ns */
	int64_t ready_ns;         /* response built (completed) */
	int64_t sent_ns;          /* hw_net_send returned; = ready_ns when no
				   * response is sent (acks=0) */
	/* an acks=all produce that asked for stage timing: the stages its
	 * answer carries (docs/breakdown.md); NULL otherwise */
	const hw_produce_timing *stages;
} hw_rm_req_timing;

/* Called on the rm's reactor, once per reported request, from inside
 * hw_rm_on_msg / hw_rm_poll. t is borrowed for the call. Must not call
 * into the rm. */
typedef void (*hw_rm_req_observer_fn)(void *ctx, const hw_rm_req_timing *t);

/* Set (fn non-NULL) or clear (fn NULL) the request observer. Requests
 * already parked when it is set are reported at completion with their
 * timestamps if they were timed, else not at all. hw_rm_destroy never
 * reports (it clears the observer first). */
void hw_rm_set_req_observer(hw_rm *rm, hw_rm_req_observer_fn fn, void *ctx);

/* hw_rm_on_msg with the message's receipt time (rm clock ns, typically
 * taken once per RX burst). rx_ns <= 0 or later than now: now. Same
 * returns as hw_rm_on_msg (which is hw_rm_on_msg_at(rm, m, 0)). */
int hw_rm_on_msg_at(hw_rm *rm, const hw_msg *m, int64_t rx_ns);

#endif
