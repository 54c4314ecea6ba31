/* hw_kafka_api.h — Kafka API keys, the version ranges hiwater advertises, and
 * the request/response headers (docs/kafka.md "Versions").
 *
 * Design note
 * -----------
 * The Kafka protocol has no magic number: a connection carries frames of
 * `int32 size` + `size` bytes; a request starts with a request header whose
 * version follows from (api_key, api_version):
 *   header v0  api_key i16, api_version i16, correlation_id i32
 *              (only ControlledShutdown v0; never produced by current clients)
 *   header v1  v0 + client_id NULLABLE_STRING (classic, int16 length)
 *   header v2  v1 + tagged fields (the request version is "flexible", KIP-482;
 *              client_id stays a classic nullable string)
 * A response header is v0 (correlation_id) or, for flexible versions, v1
 * (correlation_id + tagged fields) — except ApiVersions, whose response
 * header is always v0 so a client can parse the answer before it knows the
 * broker's versions.
 *
 * The table, one row per API key Kafka defines that hiwater knows:
 *   X(NAME, key, min, max, flex, owner)
 *     min..max  the versions hiwater advertises in ApiVersions (-1 -1: known
 *               but not supported — not advertised, answered by closing);
 *     flex      Kafka's first flexible version of that API (INT16_MAX: none)
 *               — a property of the protocol, independent of what we support;
 *     owner     CORE (the listener's handlers), GROUP (the group coordinator's
 *               entry point), NONE (not supported).
 * The ranges contain every version the clients the tests use ask for
 * (librdkafka 2.0.2 / kcat 1.7.1, confluent-kafka-python 1.7.0, kafka-python
 * 2.0.2, kafkajs 2.2.4, @platformatic/kafka); the maxima include the
 * flexible versions Kafka 3.x brokers serve, up to where a version needs
 * something hiwater does not have (Fetch v13 and Metadata v10 topic ids,
 * docs/kafka.md "Versions"). Produce and Fetch
 * start at 0, Kafka's minimum: librdkafka turns features on only when one
 * exact version is inside the range (gzip, snappy and lz4 need Produce v0,
 * MsgVer1 and ThrottleTime Produce and Fetch v1-2), though it then sends
 * the highest common version. Requests of those old versions are decoded
 * and answered in their layouts; their record formats (magic 0/1) are
 * refused per partition (docs/kafka.md "Versions").
 */
#ifndef HW_KAFKA_API_H
#define HW_KAFKA_API_H
#include <stdbool.h>
#include <stdint.h>

#include "hw_kafka_io.h"

#define HW_KAFKA_NOFLEX INT16_MAX

/* X(NAME, key, min, max, flex, owner) */
#define HW_KAFKA_API_TABLE(X)                                        \
	X(PRODUCE,              0,  0,  9,  9, CORE)                 \
	X(FETCH,                1,  0, 12, 12, CORE)                 \
	X(LIST_OFFSETS,         2,  1,  8,  6, CORE)                 \
	X(METADATA,             3,  0,  9,  9, CORE)                 \
	X(OFFSET_COMMIT,        8,  2,  8,  8, GROUP)                \
	X(OFFSET_FETCH,         9,  1,  8,  6, GROUP)                \
	X(FIND_COORDINATOR,    10,  0,  4,  3, GROUP)                \
	X(JOIN_GROUP,          11,  2,  9,  6, GROUP)                \
	X(HEARTBEAT,           12,  1,  4,  4, GROUP)                \
	X(LEAVE_GROUP,         13,  1,  5,  4, GROUP)                \
	X(SYNC_GROUP,          14,  1,  5,  4, GROUP)                \
	X(DESCRIBE_GROUPS,     15,  0,  5,  5, GROUP)                \
	X(LIST_GROUPS,         16,  0,  4,  3, GROUP)                \
	X(SASL_HANDSHAKE,      17, -1, -1, HW_KAFKA_NOFLEX, NONE)    \
	X(API_VERSIONS,        18,  0,  3,  3, CORE)                 \
	X(CREATE_TOPICS,       19,  0,  7,  5, CORE)                 \
	X(DELETE_TOPICS,       20,  0,  6,  4, CORE)                 \
	X(DELETE_RECORDS,      21, -1, -1,  2, NONE)                 \
	X(INIT_PRODUCER_ID,    22,  0,  4,  2, CORE)                 \
	X(OFFSET_FOR_LEADER_EPOCH, 23, -1, -1, 4, NONE)              \
	X(ADD_PARTITIONS_TO_TXN, 24, -1, -1, 3, NONE)                \
	X(ADD_OFFSETS_TO_TXN,  25, -1, -1,  3, NONE)                 \
	X(END_TXN,             26, -1, -1,  3, NONE)                 \
	X(TXN_OFFSET_COMMIT,   28, -1, -1,  3, NONE)                 \
	X(DESCRIBE_ACLS,       29, -1, -1,  2, NONE)                 \
	X(DESCRIBE_CONFIGS,    32,  0,  4,  4, CORE)                 \
	X(ALTER_CONFIGS,       33,  0,  2,  2, CORE)                 \
	X(SASL_AUTHENTICATE,   36, -1, -1,  2, NONE)                 \
	X(CREATE_PARTITIONS,   37, -1, -1,  2, NONE)                 \
	X(DELETE_GROUPS,       42, -1, -1,  2, NONE)                 \
	X(INCREMENTAL_ALTER_CONFIGS, 44, 0, 1, 1, CORE)              \
	X(DESCRIBE_CLUSTER,    60, -1, -1,  0, NONE)

typedef enum hw_kafka_api {
#define HW_KAFKA_API_ENUM(name, key, mn, mx, fl, own) HW_KAPI_##name = (key),
	HW_KAFKA_API_TABLE(HW_KAFKA_API_ENUM)
#undef HW_KAFKA_API_ENUM
} hw_kafka_api;

/* Dense index of a table row (0..HW_KAPI__COUNT-1), for per-API counters. */
typedef enum hw_kafka_api_idx {
#define HW_KAFKA_API_IDX(name, key, mn, mx, fl, own) HW_KAPI_IDX_##name,
	HW_KAFKA_API_TABLE(HW_KAFKA_API_IDX)
#undef HW_KAFKA_API_IDX
	HW_KAPI__COUNT
} hw_kafka_api_idx;

typedef enum hw_kafka_owner { HW_KAPI_OWNER_NONE, HW_KAPI_OWNER_CORE, HW_KAPI_OWNER_GROUP } hw_kafka_owner;

typedef struct hw_kafka_api_info {
	const char *name; /* "PRODUCE" */
	int16_t key, min, max, flex;
	hw_kafka_owner owner;
} hw_kafka_api_info;

/* The row of api_key, or NULL if hiwater does not know the key. */
const hw_kafka_api_info *hw_kafka_api_find(int16_t api_key);
/* Row by dense index (idx < HW_KAPI__COUNT), never NULL. */
const hw_kafka_api_info *hw_kafka_api_at(int idx);
/* Dense index of api_key, or -1. */
int hw_kafka_api_index(int16_t api_key);
/* 1 if the version is inside the advertised range. */
int hw_kafka_api_supported(int16_t api_key, int16_t version);
/* 1 if (api_key, version) is a flexible version per Kafka (unknown key: 0). */
int hw_kafka_api_flexible(int16_t api_key, int16_t version);

/* ---- request header ------------------------------------------------------ */
typedef struct hw_kafka_req_hdr {
	int16_t api_key;
	int16_t api_version;
	int32_t correlation_id;
	hw_kstr client_id; /* view into the frame; len -1 = null */
	uint8_t hdr_version; /* 1 or 2 */
	bool flexible; /* the request body is flexible (header v2) */
	/* Not on the wire: the connection's peer as Kafka's DescribeGroups
	 * shows a member's client_host ("/127.0.0.1"), filled by the listener
	 * for the group APIs (len -1: unknown). */
	hw_kstr client_host;
} hw_kafka_req_hdr;

/* Decode a request header from r (positioned at a frame's first byte; the
 * frame excludes the int32 size). On success r is positioned at the body.
 * The header version is chosen from the api key and version read: flexible
 * versions (per the table's flex column) read header v2, everything else v1.
 * An unknown api key still decodes as v1 so the caller can answer or close.
 * Returns 0, or the reader's error (-EMSGSIZE / -EINVAL / -EOVERFLOW) with
 * *h partly filled (api_key/version/correlation_id are valid if the first 8
 * bytes were). */
int hw_kafka_req_hdr_decode(hw_kr *r, hw_kafka_req_hdr *h);

/* Kafka's 16-byte topic id (a UUID) for hiwater's 32-bit topic id, and
 * back: a fixed 12-byte prefix then the id big-endian, so the id is never
 * Kafka's zero UUID nor its metadata-topic id (docs/kafka.md "Versions").
 * hw_kafka_topic_uuid_id returns 0, or -ENOENT for a UUID hiwater never
 * hands out. */
void hw_kafka_topic_uuid(uint32_t id, uint8_t out[16]);
int hw_kafka_topic_uuid_id(const uint8_t uuid[16], uint32_t *id);

/* Encode a request header (for tests, the fuzzer and clients). */
void hw_kafka_req_hdr_encode(hw_kw *w, const hw_kafka_req_hdr *h);

/* 1 if the response to (api_key, version) uses header v1 (tagged fields):
 * flexible versions except ApiVersions. */
int hw_kafka_resp_hdr_flexible(int16_t api_key, int16_t version);

/* Start a response frame: int32 size placeholder + the response header.
 * Returns the offset of the size field (for hw_kafka_resp_end), or SIZE_MAX
 * on writer error. */
size_t hw_kafka_resp_begin(hw_kw *w, int32_t correlation_id, bool flexible_hdr);
/* Patch the size of the frame started at `at`. Returns 0 or the writer error. */
int hw_kafka_resp_end(hw_kw *w, size_t at);

#endif
