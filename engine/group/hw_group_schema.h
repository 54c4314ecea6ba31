/* hw_group_schema.h — the records of `__consumer_offsets`, byte for byte as
 * Kafka writes them (core/src/main/scala/kafka/coordinator/group/
 * GroupMetadataManager.scala and the generated OffsetCommitKey /
 * OffsetCommitValue / GroupMetadataKey / GroupMetadataValue schemas), and the
 * group -> partition function. docs/groups.md "__consumer_offsets" is the
 * user-facing description.
 *
 * Wire format (all big-endian, non-flexible Kafka encoding: STRING = int16
 * length + bytes, NULLABLE_STRING = int16 length or -1, BYTES = int32 length
 * + bytes, ARRAY = int32 count):
 *
 *   key   = int16 key_version, then
 *     version 0/1 OffsetCommitKey:  STRING group, STRING topic, int32 partition
 *     version 2   GroupMetadataKey: STRING group
 *   value (null value = tombstone: the offset or the group is deleted)
 *     OffsetCommitValue  = int16 version (0..3 read, 3 written), then
 *       v0: int64 offset, STRING metadata, int64 commit_timestamp
 *       v1: int64 offset, STRING metadata, int64 commit_ts, int64 expire_ts
 *       v2: int64 offset, STRING metadata, int64 commit_timestamp
 *       v3: int64 offset, int32 leader_epoch, STRING metadata, int64 commit_ts
 *     GroupMetadataValue = int16 version (0..3 read, 3 written), then
 *       STRING protocol_type, int32 generation, NULLABLE_STRING protocol,
 *       NULLABLE_STRING leader, [v2+] int64 current_state_timestamp,
 *       ARRAY members of { STRING member_id, [v3+] NULLABLE_STRING
 *       group_instance_id, STRING client_id, STRING client_host,
 *       [v1+] int32 rebalance_timeout, int32 session_timeout,
 *       BYTES subscription, BYTES assignment }
 *
 * The version numbers are the magic: a key or value of a version outside the
 * ranges above is rejected (HW_GSCHEMA_EVERSION), as Kafka's readMessageKey
 * throws on an unknown key version.
 *
 * Every decoder is bounds-checked and returns a negative hw_gschema_rc on
 * hostile bytes; pointers in decoded structs point into the input.
 */
#ifndef HW_GROUP_SCHEMA_H
#define HW_GROUP_SCHEMA_H
#include <stddef.h>
#include <stdint.h>

#define HW_GSCHEMA_KEY_OFFSET_V0 0
#define HW_GSCHEMA_KEY_OFFSET_V1 1
#define HW_GSCHEMA_KEY_GROUP_V2  2
#define HW_GSCHEMA_OFFSET_VALUE_VERSION 3 /* written */
#define HW_GSCHEMA_GROUP_VALUE_VERSION  3 /* written */

/* X(name, value, description) — decoder results (negative) */
#define HW_GSCHEMA_RC_TABLE(X)                                           \
	X(OK,        0, "decoded")                                      \
	X(ETRUNC,   -1, "record field runs past the end of the bytes")   \
	X(EVERSION, -2, "unknown key or value schema version")          \
	X(ELENGTH,  -3, "negative length where null is not allowed")    \
	X(ETRAILING,-4, "bytes left after the last field")              \
	X(ECOUNT,   -5, "member count negative or larger than the bytes")

enum {
#define HW_GSCHEMA_RC_ENUM(n, v, d) HW_GSCHEMA_##n = (v),
	HW_GSCHEMA_RC_TABLE(HW_GSCHEMA_RC_ENUM)
#undef HW_GSCHEMA_RC_ENUM
};
/* Name of a decoder result ("ETRUNC"); "?" for values not in the table. */
const char *hw_gschema_rc_name(int rc);

/* A string or byte run inside a decoded buffer; p == NULL && len == -1 is
 * null. */
typedef struct hw_gslice {
	const uint8_t *p;
	int32_t len;
} hw_gslice;

/* ---- group -> partition ----------------------------------------------- */
/* java.lang.String.hashCode() of the group id given as UTF-8: the UTF-16
 * code units of the decoded string (supplementary characters as surrogate
 * pairs, each malformed byte as U+FFFD, as Java's UTF-8 decoder with
 * REPLACE does for the common cases), h = 31*h + unit with int32
 * wrap-around. Never fails. */
int32_t hw_gschema_java_hash(const void *utf8, size_t len);
/* Kafka's Utils.abs(groupId.hashCode) % partitions: 0 for INT32_MIN.
 * partitions must be >= 1 (returns -EINVAL otherwise). */
int32_t hw_gschema_partition_for(const void *group, size_t len, int32_t partitions);

/* ---- keys --------------------------------------------------------------- */
typedef struct hw_gschema_key {
	int16_t version;          /* 0/1 offset commit, 2 group metadata */
	hw_gslice group;
	hw_gslice topic;          /* offset keys only */
	int32_t partition;        /* offset keys only */
} hw_gschema_key;

/* Decode a record key. 0 and *k, or a negative HW_GSCHEMA_* rc. */
int hw_gschema_key_decode(const void *buf, size_t len, hw_gschema_key *k);
/* Encoders return bytes written, or -EMSGSIZE when cap is too small or a
 * string is longer than INT16_MAX (nothing useful written). With buf ==
 * NULL and cap == 0 they return the size needed. */
int hw_gschema_offset_key_encode(void *buf, size_t cap, const char *group, size_t glen,
				 const char *topic, size_t tlen, int32_t partition);
int hw_gschema_group_key_encode(void *buf, size_t cap, const char *group, size_t glen);

/* ---- offset values ------------------------------------------------------ */
typedef struct hw_gschema_offset {
	int16_t version;
	int64_t offset;
	int32_t leader_epoch;     /* -1 when absent (v0..v2) or unknown */
	hw_gslice metadata;       /* never null (Kafka writes "" for null) */
	int64_t commit_timestamp;
	int64_t expire_timestamp; /* v1 only, else -1 */
} hw_gschema_offset;

int hw_gschema_offset_value_decode(const void *buf, size_t len, hw_gschema_offset *v);
/* Writes version 3. metadata may be NULL (written as ""). */
int hw_gschema_offset_value_encode(void *buf, size_t cap, int64_t offset, int32_t leader_epoch,
				   const void *metadata, size_t mlen, int64_t commit_ts);

/* ---- group metadata values ---------------------------------------------- */
typedef struct hw_gschema_member {
	hw_gslice member_id, group_instance_id, client_id, client_host;
	int32_t rebalance_timeout, session_timeout;
	hw_gslice subscription, assignment;
} hw_gschema_member;

typedef struct hw_gschema_group {
	int16_t version;
	hw_gslice protocol_type;
	int32_t generation;
	hw_gslice protocol;       /* nullable */
	hw_gslice leader;         /* nullable */
	int64_t current_state_timestamp; /* -1 before v2 */
	int32_t n_members;
	const uint8_t *members;   /* raw member array; walk with hw_gschema_member_next */
	const uint8_t *end;
} hw_gschema_group;

/* Decode a group value; every member is checked before it returns 0. */
int hw_gschema_group_value_decode(const void *buf, size_t len, hw_gschema_group *g);
/* Next member: *p starts at g->members. 1 and *m, 0 at the end, or < 0
 * (cannot fail on a value hw_gschema_group_value_decode accepted). */
int hw_gschema_member_next(const hw_gschema_group *g, const uint8_t **p, int32_t *index,
			   hw_gschema_member *m);

/* Encoder input for one member (strings NUL-terminated, bytes with len). */
typedef struct hw_gschema_member_in {
	const char *member_id, *group_instance_id /* NULL = null */, *client_id, *client_host;
	int32_t rebalance_timeout, session_timeout;
	const void *subscription; int32_t subscription_len;
	const void *assignment;   int32_t assignment_len;
} hw_gschema_member_in;

/* Writes version 3. protocol/leader NULL = null. Returns bytes, -EMSGSIZE. */
int hw_gschema_group_value_encode(void *buf, size_t cap, const char *protocol_type, int32_t generation,
				  const char *protocol, const char *leader, int64_t state_ts,
				  const hw_gschema_member_in *members, int32_t n);

#endif
