/* hw_ksrv.h — the Kafka protocol server: Kafka requests in, engine messages
 * out (docs/kafka.md).
 *
 * Design note
 * -----------
 * The server knows the Kafka protocol and the engine's messages, nothing of
 * sockets: the broker process owns the TCP connections (io_uring) and hands
 * each connection's bytes to hw_kconn_input; the server cuts them into
 * frames (int32 size + request), decodes each request (lib/kafka), and
 * answers it either at once (ApiVersions, DescribeConfigs, InitProducerId,
 * ListOffsets) or after engine operations complete:
 *
 *   Produce   one PRODUCE per partition (the same message the native data
 *             plane sends; acks, timeout, min ISR, idempotence and the HW are
 *             the replica manager's), joined into one response;
 *   Fetch     one FETCH (replica_id -1: a consumer, reads below the HW,
 *             whole batches, long polling in the rm's purgatory) naming every
 *             partition; the broker may split it per owning reactor, each
 *             FETCH_RESP fills its partitions, the response goes out when all
 *             partitions are answered;
 *   Metadata  a METADATA to the controller (brokers with their Kafka
 *             listeners, partitions with leader epochs); with auto topic
 *             creation a CREATE_TOPIC per missing topic first;
 *   CreateTopics  a CREATE_TOPIC per topic.
 *
 * Every engine message the server submits carries a correlation id with the
 * top bit set (HW_KSRV_CORR_BIT) and, for data-plane messages, src =
 * HW_KSRV_NODE: the broker routes the answers (dst HW_KSRV_NODE, or a control
 * answer whose correlation id has the bit) back with hw_ksrv_on_msg.
 *
 * Order. Responses leave a connection in request order (Kafka's guarantee):
 * each request has a slot in its connection's FIFO; a slot completed out of
 * order waits for the slots before it. acks=0 produce requests have a slot
 * with no response (they never block the ones behind them once submitted).
 * A handler answering later (the group coordinator's JoinGroup) keeps its
 * slot pending and completes it with hw_ksrv_complete.
 *
 * Errors. A frame over socket.request.max.bytes, a request that does not
 * decode, an unsupported API key or (except ApiVersions) version closes the
 * connection: hw_kconn_input returns a negative errno and the reason is
 * counted (HW_KSRV_CLOSE_TABLE). Engine sends that fail and control answers
 * that do not come within HW_KSRV_CTRL_TIMEOUT_MS answer the affected
 * partitions/topics with a retriable Kafka error.
 *
 * Threading: one server per reactor; every function on that reactor.
 */
#ifndef HW_KSRV_H
#define HW_KSRV_H
#include <stddef.h>
#include <stdint.h>
#include "hw_admin_msg.h"
#include "hw_kafka_api.h"
#include "hw_msg.h"
#include "hw_rm.h"

#define HW_KSRV_NODE            999999       /* src of the server's data-plane requests */
#define HW_KSRV_CORR_BIT        0x80000000u
#define HW_KSRV_CTRL_TIMEOUT_MS 5000
#define HW_KSRV_DATA_TIMEOUT_MS 120000       /* > any produce timeout / fetch max wait clients use */
#define HW_KSRV_MAX_INFLIGHT    128          /* requests queued per connection before reading pauses */

/* Why a connection was closed. X(NAME, "label") */
#define HW_KSRV_CLOSE_TABLE(X)                                         \
	X(PEER,          "peer")            /* orderly EOF / reset */   \
	X(TOO_LARGE,     "request_too_large")                          \
	X(BAD_SIZE,      "bad_frame_size")                             \
	X(BAD_HEADER,    "bad_header")                                 \
	X(UNKNOWN_API,   "unknown_api")                                \
	X(BAD_VERSION,   "unsupported_version")                        \
	X(BAD_REQUEST,   "bad_request")                                \
	X(ACKS0_ERROR,   "acks0_error")                                \
	X(NO_MEMORY,     "no_memory")                                  \
	X(IO_ERROR,      "io_error")                                   \
	X(LIMIT,         "max_connections")                            \
	X(SHUTDOWN,      "shutdown")
typedef enum hw_ksrv_close {
#define HW_KSRV_CLOSE_ENUM(n, s) HW_KSRV_CLOSE_##n,
	HW_KSRV_CLOSE_TABLE(HW_KSRV_CLOSE_ENUM)
#undef HW_KSRV_CLOSE_ENUM
	HW_KSRV_CLOSE__COUNT
} hw_ksrv_close;
const char *hw_ksrv_close_name(int r); /* never NULL */

typedef struct hw_ksrv hw_ksrv;
typedef struct hw_kconn hw_kconn;
typedef struct hw_kreq hw_kreq;

/* One broker-level config reported by DescribeConfigs. */
typedef struct hw_ksrv_kv {
	const char *name;
	const char *value;   /* NULL: null (sensitive / unset) */
	uint8_t is_default;  /* source DEFAULT_CONFIG (5) vs STATIC_BROKER_CONFIG (4) */
	const char *synonym; /* topic configs: the broker key the value comes from (NULL none) */
} hw_ksrv_kv;

typedef struct hw_ksrv_ops {
	/* Send an engine request. PRODUCE / FETCH: to the reactor(s) owning
	 * the partitions (m->src is HW_KSRV_NODE); METADATA / CREATE_TOPIC /
	 * DELETE_TOPIC:
	 * to the controller (the broker sets src to its node id). 0, or a
	 * negative errno: nothing was sent, the server answers with an error. */
	int (*submit)(void *ctx, const hw_msg *m);
	/* The topic id of `topic` if this broker hosts a replica of it. 0 and
	 * *id, or -ENOENT. */
	int (*topic_id)(void *ctx, const char *topic, uint32_t *id);
	/* Partition state on this broker (ListOffsets): 0 or -ENOENT. */
	int (*part_info)(void *ctx, hw_tp tp, hw_rm_part_info *out);
	/* A producer id unique in the cluster (>= 0), or a negative errno. */
	int64_t (*alloc_producer_id)(void *ctx);
	/* Group API keys (owner GROUP in the API table): handle the request
	 * (body after the header in r) and either write the response body to w
	 * and return 0, or return 1 and later call hw_ksrv_complete(req). A
	 * negative errno closes the connection. h->client_id points into the
	 * request frame: valid during this call only. NULL: the server answers
	 * FindCoordinator with COORDINATOR_NOT_AVAILABLE and closes on the
	 * other group keys. */
	int (*group_request)(void *ctx, hw_kreq *req, const hw_kafka_req_hdr *h, hw_kr *r, hw_kw *w);
	/* Output became available on c (the broker should send). */
	void (*conn_ready)(void *ctx, hw_kconn *c);
	/* Monotonic clock, ns. */
	int64_t (*now_ns)(void *ctx);
} hw_ksrv_ops;

typedef struct hw_ksrv_config {
	int32_t node_id;
	char cluster_id[64];              /* Metadata cluster_id */
	int auto_create_topics;           /* auto.create.topics.enable */
	int32_t num_partitions;           /* num.partitions of auto-created topics (<= 0: the controller's) */
	int16_t default_replication_factor; /* default.replication.factor of auto-created topics (<= 0: the controller's) */
	int64_t socket_request_max_bytes; /* socket.request.max.bytes */
	int32_t fetch_max_wait_cap_ms;    /* caps a client's max_wait (0: none) */
	const hw_ksrv_kv *broker_configs; /* DescribeConfigs BROKER resources */
	size_t n_broker_configs;
	const hw_ksrv_kv *topic_configs;  /* DescribeConfigs TOPIC: Kafka's topic-level
					   * names with the broker's defaults; a topic's
					   * overrides replace them */
	size_t n_topic_configs;
} hw_ksrv_config;

/* Per-API statistics (dense index of the API table) and connection counts. */
typedef struct hw_ksrv_api_stats {
	uint64_t requests;
	uint64_t errors;        /* responses carrying a non-zero error code */
	uint64_t latency_sum_ns;
	uint64_t latency_bucket[16]; /* <= 2^(i) * 100 us, last = +Inf */
} hw_ksrv_api_stats;

typedef struct hw_ksrv_stats {
	hw_ksrv_api_stats api[HW_KAPI__COUNT];
	uint64_t closes[HW_KSRV_CLOSE__COUNT];
	uint64_t connections_opened;
	uint64_t connections_open;
	uint64_t unsupported_api;   /* requests of unknown keys (closed) */
	uint64_t engine_send_failed;
	uint64_t ctrl_timeouts;
	uint64_t late_answers;      /* engine answers for no pending operation */
} hw_ksrv_stats;
#define HW_KSRV_LAT_BUCKETS 16
/* Upper bound (seconds) of latency bucket i (< HW_KSRV_LAT_BUCKETS-1). */
double hw_ksrv_lat_bound_s(int i);

/* Create a server. cfg is copied (broker_configs are borrowed and must
 * outlive it). 0 and *out, -EINVAL, -ENOMEM. */
int hw_ksrv_create(const hw_ksrv_config *cfg, const hw_ksrv_ops *ops, void *ctx, hw_ksrv **out);
/* Free everything (connections must be closed first). */
void hw_ksrv_destroy(hw_ksrv *s);
const hw_ksrv_stats *hw_ksrv_get_stats(const hw_ksrv *s);

/* An engine answer for the server (dst HW_KSRV_NODE, or a correlation id
 * with HW_KSRV_CORR_BIT). Answers nobody waits for are counted and ignored.
 * Returns 1 if consumed, 0 if the message is not the server's. */
int hw_ksrv_on_msg(hw_ksrv *s, const hw_msg *m);
/* Timers (control-plane answers that did not come). Returns work done. */
int hw_ksrv_poll(hw_ksrv *s);
/* Next deadline (ns) or INT64_MAX. */
int64_t hw_ksrv_next_deadline_ns(hw_ksrv *s);

/* ---- connections ---------------------------------------------------------- */
/* Open a connection (conn_ctx is the broker's, returned by hw_kconn_ctx).
 * NULL on -ENOMEM. */
hw_kconn *hw_kconn_open(hw_ksrv *s, void *conn_ctx);
void *hw_kconn_ctx(const hw_kconn *c);
/* The peer's address as Kafka shows it ("/127.0.0.1"), kept for the group
 * coordinator (DescribeGroups client_host); longer than 63 bytes is cut. */
void hw_kconn_set_peer(hw_kconn *c, const char *peer);
/* Bytes received. The server keeps what it cannot parse yet (a partial
 * frame, or frames behind HW_KSRV_MAX_INFLIGHT queued requests; call again
 * with len 0 after output drained to resume). 0, or a negative errno: close
 * the connection (the reason is counted; hw_kconn_close must follow). */
int hw_kconn_input(hw_kconn *c, const uint8_t *buf, size_t len);
/* Bytes ready to send: *p, returns their count (0: nothing). */
size_t hw_kconn_output(hw_kconn *c, const uint8_t **p);
/* n bytes of hw_kconn_output were sent. */
void hw_kconn_output_done(hw_kconn *c, size_t n);
/* 1 if the connection has parked input it could now process. */
int hw_kconn_has_parked_input(const hw_kconn *c);
/* 0 while the broker should stop reading the socket: HW_KSRV_MAX_INFLIGHT
 * requests are queued, or more than HW_KSRV_MAX_OUTPUT response bytes wait
 * for the client to read them (a client that sends without reading cannot
 * grow the broker's buffers without bound). 1 otherwise. */
int hw_kconn_wants_input(const hw_kconn *c);
/* 1 once an acks=0 produce of this connection failed in the engine (Kafka
 * closes such a connection: the client has no other way to learn of it).
 * The server answers nothing more on it and reads no more input; the broker
 * sends the output already there, then closes (counted ACKS0_ERROR). */
int hw_kconn_close_wanted(const hw_kconn *c);
#define HW_KSRV_MAX_OUTPUT (64u << 20)
/* Close: pending engine answers for it are discarded when they arrive;
 * the reason is counted. Frees c (at once, or when its last pending
 * operation completes). */
void hw_kconn_close(hw_kconn *c, hw_ksrv_close why);

/* ---- delayed answers (group coordinator) --------------------------------- */
/* The writer of a pending request's response body. */
hw_kw *hw_kreq_writer(hw_kreq *r);
const hw_kafka_req_hdr *hw_kreq_hdr(const hw_kreq *r);
/* Complete a request a group handler left pending (its body is in
 * hw_kreq_writer). Safe after the connection closed (then just freed). */
void hw_ksrv_complete(hw_ksrv *s, hw_kreq *r);

#endif
