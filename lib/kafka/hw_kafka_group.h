/* hw_kafka_group.h — request decoders and response encoders of the Kafka
 * group APIs (docs/groups.md "Wire", docs/kafka.md "Versions"):
 * FindCoordinator 0-4, JoinGroup 0-9, SyncGroup 0-5, Heartbeat 0-4,
 * LeaveGroup 0-5, OffsetCommit 0-8, OffsetFetch 0-8, DescribeGroups 0-5,
 * ListGroups 0-4 (Kafka's schemas in clients/src/main/resources/common/
 * message/ JSON files). The flexible versions (KIP-482: FindCoordinator 3+,
 * JoinGroup 6+, SyncGroup/Heartbeat/LeaveGroup 4+, OffsetCommit 8+,
 * OffsetFetch 6+, DescribeGroups 5+, ListGroups 3+) use compact strings,
 * arrays and bytes and end every structure with a tagged-field section:
 * decoders skip unknown tags, encoders write empty sections. Versions above
 * the maxima below decode to -EPROTONOSUPPORT. Each codec derives
 * `flexible` from (API, version) itself.
 *
 * Decoders take a reader positioned at the request body (after the header)
 * and must consume it exactly: a short body, a bad length, a count larger
 * than the bytes left, or trailing bytes fail with a negative errno
 * (-EMSGSIZE, -EINVAL, -EOVERFLOW from hw_kafka_io.h, -EBADMSG for trailing
 * bytes) and the connection is closed by the caller. Strings and bytes in
 * the decoded structs point into the request; the arrays a decoder allocates
 * are freed by the matching *_free (also after a failed decode); -ENOMEM if
 * allocation fails. Arrays are bounded by the request size (hw_kr_array).
 *
 * Encoders append a response body (after the response header) to w for the
 * given version; errors are the writer's sticky error.
 */
#ifndef HW_KAFKA_GROUP_H
#define HW_KAFKA_GROUP_H
#include <stdint.h>
#include "hw_kafka_io.h"

/* Highest version of each group API the codecs handle. */
#define HW_KG_FIND_COORDINATOR_MAX 4
#define HW_KG_JOIN_GROUP_MAX       9
#define HW_KG_SYNC_GROUP_MAX       5
#define HW_KG_HEARTBEAT_MAX        4
#define HW_KG_LEAVE_GROUP_MAX      5
#define HW_KG_OFFSET_COMMIT_MAX    8
#define HW_KG_OFFSET_FETCH_MAX     8
#define HW_KG_DESCRIBE_GROUPS_MAX  5
#define HW_KG_LIST_GROUPS_MAX      4

/* ---- FindCoordinator (10) ---------------------------------------------------- */
typedef struct hw_kg_find_req {
	hw_kstr key;        /* the (first) group id (or transactional id) */
	int8_t key_type;    /* 0 group, 1 transaction (v1+; v0: 0) */
	int32_t n_keys;     /* v4+: coordinator_keys (batched); v0-3: 1 (= key) */
	hw_kstr *keys;      /* n_keys entries, freed by hw_kg_find_free */
} hw_kg_find_req;
int hw_kg_find_decode(hw_kr *r, int16_t v, hw_kg_find_req *q);
void hw_kg_find_free(hw_kg_find_req *q);

typedef struct hw_kg_find_resp {
	int16_t error;
	const char *error_message; /* NULL = null (v1+) */
	int32_t node_id;
	const char *host;
	int32_t port;
	hw_kstr key;               /* v4+: the coordinator key answered */
} hw_kg_find_resp;
/* One answer: v0-3 the whole body, v4 a coordinators array of one. */
void hw_kg_find_encode(hw_kw *w, int16_t v, const hw_kg_find_resp *a);
/* n answers (v4+: one per coordinator key; v0-3: a[0] only). */
void hw_kg_find_encode_n(hw_kw *w, int16_t v, int32_t n, const hw_kg_find_resp *a);

/* ---- JoinGroup (11) ------------------------------------------------------------ */
typedef struct hw_kg_proto {
	hw_kstr name;
	hw_kbytes metadata;
} hw_kg_proto;

typedef struct hw_kg_join_req {
	hw_kstr group_id;
	int32_t session_timeout_ms;
	int32_t rebalance_timeout_ms; /* v1+; v0: = session timeout */
	hw_kstr member_id;
	hw_kstr group_instance_id;    /* v5+; else null */
	hw_kstr protocol_type;
	int32_t n_protocols;
	hw_kg_proto *protocols;
	hw_kstr reason;               /* v8+; else null (logged by Kafka, unused here) */
} hw_kg_join_req;
int hw_kg_join_decode(hw_kr *r, int16_t v, hw_kg_join_req *q);
void hw_kg_join_free(hw_kg_join_req *q);

typedef struct hw_kg_join_member {
	const char *member_id;
	const char *group_instance_id; /* NULL = null (v5+) */
	const uint8_t *metadata;
	int32_t metadata_len;
} hw_kg_join_member;

typedef struct hw_kg_join_resp {
	int16_t error;
	int32_t generation;
	const char *protocol_name, *leader, *member_id;
	int32_t n_members;
	const hw_kg_join_member *members;
	const char *protocol_type;    /* v7+; NULL or "" = null */
} hw_kg_join_resp;
void hw_kg_join_encode(hw_kw *w, int16_t v, const hw_kg_join_resp *a);

/* ---- SyncGroup (14) ----------------------------------------------------------- */
typedef struct hw_kg_assign {
	hw_kstr member_id;
	hw_kbytes assignment;
} hw_kg_assign;

typedef struct hw_kg_sync_req {
	hw_kstr group_id;
	int32_t generation;
	hw_kstr member_id;
	hw_kstr group_instance_id; /* v3+ */
	int32_t n_assign;
	hw_kg_assign *assign;
	hw_kstr protocol_type, protocol_name; /* v5+; else null */
} hw_kg_sync_req;
int hw_kg_sync_decode(hw_kr *r, int16_t v, hw_kg_sync_req *q);
void hw_kg_sync_free(hw_kg_sync_req *q);
void hw_kg_sync_encode(hw_kw *w, int16_t v, int16_t error, const uint8_t *assignment, int32_t len);
/* v5+ also carries the group's protocol type and name (NULL or "" = null). */
void hw_kg_sync_encode5(hw_kw *w, int16_t v, int16_t error, const char *protocol_type, const char *protocol_name,
			const uint8_t *assignment, int32_t len);

/* ---- Heartbeat (12) ------------------------------------------------------------ */
typedef struct hw_kg_hb_req {
	hw_kstr group_id;
	int32_t generation;
	hw_kstr member_id;
	hw_kstr group_instance_id; /* v3+ */
} hw_kg_hb_req;
int hw_kg_hb_decode(hw_kr *r, int16_t v, hw_kg_hb_req *q);
void hw_kg_hb_encode(hw_kw *w, int16_t v, int16_t error);

/* ---- LeaveGroup (13) ----------------------------------------------------------- */
typedef struct hw_kg_leave_member {
	hw_kstr member_id;
	hw_kstr group_instance_id;
	hw_kstr reason;            /* v5+; else null */
} hw_kg_leave_member;

typedef struct hw_kg_leave_req {
	hw_kstr group_id;
	int32_t n;                 /* v0-2: 1 (the member_id field) */
	hw_kg_leave_member *members;
} hw_kg_leave_req;
int hw_kg_leave_decode(hw_kr *r, int16_t v, hw_kg_leave_req *q);
void hw_kg_leave_free(hw_kg_leave_req *q);
/* errs[i] per member (v3+). */
void hw_kg_leave_encode(hw_kw *w, int16_t v, int16_t error, const hw_kg_leave_req *q, const int16_t *errs);

/* ---- OffsetCommit (8) ----------------------------------------------------------- */
typedef struct hw_kg_commit_part {
	hw_kstr topic;
	int32_t partition;
	int64_t offset;
	int32_t leader_epoch;  /* v6+; else -1 */
	int64_t timestamp;     /* v1 only; else -1 */
	hw_kstr metadata;      /* nullable */
} hw_kg_commit_part;

typedef struct hw_kg_commit_req {
	hw_kstr group_id;
	int32_t generation;        /* v1+; v0: -1 */
	hw_kstr member_id;         /* v1+; v0: "" */
	hw_kstr group_instance_id; /* v7+ */
	int64_t retention_ms;      /* v2-4; else -1 */
	int32_t n;                 /* partitions over all topics, request order */
	hw_kg_commit_part *parts;
} hw_kg_commit_req;
int hw_kg_commit_decode(hw_kr *r, int16_t v, hw_kg_commit_req *q);
void hw_kg_commit_free(hw_kg_commit_req *q);
/* errs[i] for q->parts[i]; partitions of consecutive parts with the same
 * topic are one topic entry, as the request had them. */
void hw_kg_commit_encode(hw_kw *w, int16_t v, const hw_kg_commit_req *q, const int16_t *errs);

/* ---- OffsetFetch (9) ------------------------------------------------------------- */
typedef struct hw_kg_fetch_part {
	hw_kstr topic;
	int32_t partition;
} hw_kg_fetch_part;

typedef struct hw_kg_fetch_group {
	hw_kstr group_id;
	int all;                   /* topics null (v2+): every committed offset */
	int32_t n;
	hw_kg_fetch_part *parts;
} hw_kg_fetch_group;

typedef struct hw_kg_fetch_req {
	int32_t n_groups;          /* v8+: the groups array; v0-7: 1 */
	hw_kg_fetch_group *groups;
	int require_stable;        /* v7+ (no transactions: nothing is unstable) */
} hw_kg_fetch_req;
int hw_kg_fetch_decode(hw_kr *r, int16_t v, hw_kg_fetch_req *q);
void hw_kg_fetch_free(hw_kg_fetch_req *q);

typedef struct hw_kg_fetch_out {
	const char *topic;         /* NUL-terminated */
	int32_t partition;
	int64_t offset;
	int32_t leader_epoch;
	const char *metadata;      /* NULL = null */
	int32_t metadata_len;      /* bytes of metadata */
	int16_t error;
} hw_kg_fetch_out;
/* n partitions (consecutive equal topics grouped), then the group error
 * (v2+; v0-1 carry it in every partition instead): a whole v0-7 body. */
void hw_kg_fetch_encode(hw_kw *w, int16_t v, int32_t n, const hw_kg_fetch_out *parts, int16_t error);
/* Any version: begin (throttle time, v8+ the groups count), one
 * group_encode per group (v0-7: exactly one; group_id is written v8+ only),
 * end (the body's tagged fields). */
void hw_kg_fetch_begin(hw_kw *w, int16_t v, int32_t n_groups);
void hw_kg_fetch_group_encode(hw_kw *w, int16_t v, const char *group_id, int32_t n, const hw_kg_fetch_out *parts,
			      int16_t error);
void hw_kg_fetch_end(hw_kw *w, int16_t v);

/* ---- DescribeGroups (15) ------------------------------------------------------ */
typedef struct hw_kg_describe_req {
	int32_t n;
	hw_kstr *groups;
	int include_authorized_operations;   /* v3+ */
} hw_kg_describe_req;
int hw_kg_describe_decode(hw_kr *r, int16_t v, hw_kg_describe_req *q);
void hw_kg_describe_free(hw_kg_describe_req *q);

typedef struct hw_kg_describe_member {
	const char *member_id;
	const char *group_instance_id;       /* NULL = null (v4+) */
	const char *client_id, *client_host;
	const uint8_t *metadata;
	int32_t metadata_len;
	const uint8_t *assignment;
	int32_t assignment_len;
} hw_kg_describe_member;

typedef struct hw_kg_describe_group {
	int16_t error;
	const char *group_id, *state, *protocol_type, *protocol;
	int32_t n_members;
	const hw_kg_describe_member *members;
} hw_kg_describe_group;
/* The response head (throttle time, v1+) and the groups array count; then
 * one hw_kg_describe_group_encode per group, then hw_kg_describe_end. */
void hw_kg_describe_begin(hw_kw *w, int16_t v, int32_t n_groups);
void hw_kg_describe_group_encode(hw_kw *w, int16_t v, const hw_kg_describe_group *g);
void hw_kg_describe_end(hw_kw *w, int16_t v);

/* ---- ListGroups (16) ----------------------------------------------------------- */
/* v0-2 have an empty body, v3 only tagged fields, v4 a states filter. */
#define HW_KG_LIST_MAX_STATES 16 /* Kafka has 7 state names (classic and KIP-848 groups) */
typedef struct hw_kg_list_req {
	int32_t n_states;          /* 0: every state */
	hw_kstr states[HW_KG_LIST_MAX_STATES];
} hw_kg_list_req;
int hw_kg_list_decode(hw_kr *r, int16_t v);
/* The same with the v4 filter kept (more than HW_KG_LIST_MAX_STATES: -EINVAL). */
int hw_kg_list_decode_q(hw_kr *r, int16_t v, hw_kg_list_req *q);
/* 1 if state (Kafka's name, e.g. "Stable") passes q's filter (case-insensitive, as Kafka). */
int hw_kg_list_wants(const hw_kg_list_req *q, const char *state);
/* The response head (throttle time v1+, error, the array count), then
 * hw_kg_list_group_encode per group, then hw_kg_list_end. */
void hw_kg_list_begin(hw_kw *w, int16_t v, int16_t error, int32_t n_groups);
void hw_kg_list_group_encode(hw_kw *w, int16_t v, const char *group_id, const char *protocol_type);
/* v4+: with the group's state. */
void hw_kg_list_group_encode4(hw_kw *w, int16_t v, const char *group_id, const char *protocol_type,
			      const char *state);
void hw_kg_list_end(hw_kw *w, int16_t v);

#endif
