/* hw_batch.h — Kafka RecordBatch v2 (magic 2): parse, validate, iterate,
 * stamp, build. Byte-compatible with Kafka's DefaultRecordBatch/DefaultRecord.
 * Compressed batches (gzip, snappy, lz4, zstd) are validated and read by
 * decompressing their records section (lib/compress); their bytes are never
 * rewritten (docs/compression.md).
 *
 * Design note
 * -----------
 * hiwater stores, replicates and serves Kafka record batches exactly as a
 * producer wrote them: the leader only rewrites baseOffset and
 * partitionLeaderEpoch in place (both outside the CRC, so no re-CRC), and
 * optionally LogAppendTime (which does re-CRC). Followers and consumers get
 * the same bytes. So the unit of everything below is one contiguous batch in
 * a caller's buffer; nothing here allocates or copies record payloads.
 *
 * Layout (big-endian; docs/replication.md#record-batches):
 *
 *   0 baseOffset int64 | 8 batchLength int32 (= total - 12)
 *  12 partitionLeaderEpoch int32 | 16 magic int8 (= 2) | 17 crc uint32
 *  21 attributes int16 | 23 lastOffsetDelta int32 | 27 baseTimestamp int64
 *  35 maxTimestamp int64 | 43 producerId int64 | 51 producerEpoch int16
 *  53 baseSequence int32 | 57 recordsCount int32 | 61 records...
 *
 *  CRC-32C covers bytes 21..end. Each record: length varint (zigzag), then
 *  attributes int8, timestampDelta varlong, offsetDelta varint, keyLength
 *  varint (-1 = null) + key, valueLength varint (-1 = null) + value,
 *  headerCount varint, headers (keyLength varint >= 0 + key, valueLength
 *  varint (-1 = null) + value).
 *
 * Levels of checking, cheapest first:
 *   hw_batch_parse_header: sizes and header fields only (no CRC, no records):
 *       enough to frame a stream of batches or to read offsets.
 *   hw_batch_validate(flags): + magic, CRC, codec, counts, every record's
 *       varints and lengths bounds-checked, offsetDelta == index, no bytes
 *       left over. What the leader runs on a produce request (V_FULL),
 *       what log recovery runs on every batch after the recovery point
 *       (V_CRC: no records walk, so no decompression).
 *   hw_record_iter: what a consumer/test uses to read records; it checks the
 *       same record-level rules as validate while walking.
 *
 * Compressed batches: the 61-byte header is never compressed; the records
 * section (bytes 61..end) is one compressed stream of the records exactly
 * as an uncompressed batch lays them out. Validation with V_RECORDS
 * decompresses that stream into a per-thread scratch buffer, bounded by
 * HW_BATCH_MAX_DECOMPRESSED (a stream that inflates further is refused,
 * DECOMPRESSED_TOO_LARGE), and runs the same record checks on it; the
 * record iterator hands out records whose pointers point into such a
 * buffer. The batch's own bytes are only read. Kafka's LogValidator
 * rewrites (recompresses) a compressed batch whose inner offsets are not
 * 0..n-1; hiwater refuses it (OFFSET_DELTA) instead, as it refuses any batch
 * it would have to rewrite under the CRC.
 *
 * Errors: decoders return 0/positive on success or a negative hw_batch_rc
 * (values -1000 and below, so they can never be confused with -errno). Each
 * rc maps to exactly one Kafka error code (hw_batch_rc_kafka) — the code a
 * produce response carries — and has a name and a one-line description.
 * Batch-level damage (short buffer, bad batchLength, magic, CRC) is
 * CORRUPT_MESSAGE as in Kafka's CorruptRecordException; record-level
 * structure problems are INVALID_RECORD as in Kafka's InvalidRecordException;
 * a codec id 5..7 is UNSUPPORTED_COMPRESSION_TYPE; a records section that
 * does not decompress is CORRUPT_MESSAGE; size limits are MESSAGE_TOO_LARGE
 * (one batch over max.message.bytes, or a records section decompressing
 * past HW_BATCH_MAX_DECOMPRESSED — Java producers split such a batch and
 * retry) and RECORD_LIST_TOO_LARGE (a produce record set larger than a
 * segment). Encoders return negative errno (-EMSGSIZE, -EINVAL, -ENOMEM).
 *
 * Thread-safety: all functions are reentrant; besides their arguments they
 * touch only the calling thread's scratch buffers (lib/compress slots
 * HW_BATCH_ZSLOT_*).
 */
#ifndef HW_BATCH_H
#define HW_BATCH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "hw_bytes.h"
#include "hw_compress.h"

/* ---- layout ---------------------------------------------------------- */
#define HW_BATCH_MAGIC              2
#define HW_BATCH_LOG_OVERHEAD       12  /* baseOffset + batchLength */
#define HW_BATCH_HEADER_SIZE        61  /* RECORD_BATCH_OVERHEAD */
#define HW_BATCH_MIN_BATCH_LENGTH   (HW_BATCH_HEADER_SIZE - HW_BATCH_LOG_OVERHEAD) /* 49 */
#define HW_BATCH_MIN_RECORD_SIZE    7   /* length + 6 one-byte fields */

#define HW_BATCH_OFF_BASE_OFFSET    0
#define HW_BATCH_OFF_LENGTH         8
#define HW_BATCH_OFF_LEADER_EPOCH   12
#define HW_BATCH_OFF_MAGIC          16
#define HW_BATCH_OFF_CRC            17
#define HW_BATCH_OFF_ATTRIBUTES     21  /* CRC covers from here to the end */
#define HW_BATCH_OFF_LAST_DELTA     23
#define HW_BATCH_OFF_BASE_TS        27
#define HW_BATCH_OFF_MAX_TS         35
#define HW_BATCH_OFF_PRODUCER_ID    43
#define HW_BATCH_OFF_PRODUCER_EPOCH 51
#define HW_BATCH_OFF_BASE_SEQ       53
#define HW_BATCH_OFF_COUNT          57
#define HW_BATCH_OFF_RECORDS        61

/* attributes */
#define HW_BATCH_ATTR_CODEC_MASK      0x0007 /* 0 none 1 gzip 2 snappy 3 lz4 4 zstd */
#define HW_BATCH_ATTR_LOG_APPEND_TIME 0x0008
#define HW_BATCH_ATTR_TRANSACTIONAL   0x0010
#define HW_BATCH_ATTR_CONTROL         0x0020
#define HW_BATCH_ATTR_DELETE_HORIZON  0x0040

#define HW_BATCH_CODEC_TABLE(X) X(NONE, 0) X(GZIP, 1) X(SNAPPY, 2) X(LZ4, 3) X(ZSTD, 4)
enum hw_batch_codec {
#define HW_BATCH_CODEC_ENUM(n, v) HW_BATCH_CODEC_##n = (v),
	HW_BATCH_CODEC_TABLE(HW_BATCH_CODEC_ENUM)
#undef HW_BATCH_CODEC_ENUM
};
/* "none", "gzip"...; "unknown" for 5..7. Never NULL. */
const char *hw_batch_codec_name(int codec);

/* Kafka's compression.type values (topic and broker config; Kafka's
 * default "producer": keep the producer's codec). hiwater implements only
 * "producer": it stores batches exactly as sent, so any other value, which
 * would make the broker recompress, is refused (docs/compression.md). */
#define HW_COMPRESSION_TYPE_TABLE(X)                                          \
	X(UNCOMPRESSED, "uncompressed") X(ZSTD, "zstd") X(LZ4, "lz4")       \
	X(SNAPPY, "snappy") X(GZIP, "gzip") X(PRODUCER, "producer")
#define HW_COMPRESSION_TYPE_DEFAULT "producer"
/* The values above, NULL-terminated (a config schema's choices). */
extern const char *const hw_compression_types[];
/* 0 for "producer"; -ENOTSUP for Kafka's other values (recompression is not
 * implemented); -EINVAL for anything else (or NULL). */
int hw_compression_type_check(const char *value);
/* The one-line reason for a non-zero hw_compression_type_check rc. */
const char *hw_compression_type_error(int rc);

/* Largest records section a compressed batch may decompress to (64 MiB;
 * Kafka has no such bound, it streams). A hiwater limit against
 * decompression bombs: a 1 MiB batch (max.message.bytes) that inflates
 * past 64x is refused with DECOMPRESSED_TOO_LARGE. */
#define HW_BATCH_MAX_DECOMPRESSED (64u << 20)
/* The per-thread scratch buffers (hw_zbuf_thread slots) this module uses:
 * one for validation (contents dead when hw_batch_validate returns), one
 * for the record iterator (valid until the next hw_record_iter_init of a
 * compressed batch on the same thread). A validation scratch above
 * HW_BATCH_ZSCRATCH_KEEP bytes is released after use. */
#define HW_BATCH_ZSLOT_VALIDATE 0
#define HW_BATCH_ZSLOT_ITER     1
#define HW_BATCH_ZSCRATCH_KEEP  (8u << 20)

/* Kafka's "none" values (RecordBatch.NO_*) */
#define HW_NO_PRODUCER_ID     (-1LL)
#define HW_NO_PRODUCER_EPOCH  (-1)
#define HW_NO_SEQUENCE        (-1)
#define HW_NO_TIMESTAMP       (-1LL)
#define HW_NO_PARTITION_LEADER_EPOCH (-1)

/* ---- result codes ---------------------------------------------------- */
/* X(NAME, number, kafka error (hw_err.h name), description) */
#define HW_BATCH_RC_TABLE(X)                                                                  \
	X(OK,                  0,    NONE,            "valid")                                      \
	X(SHORT_HEADER,     1001, CORRUPT_MESSAGE, "buffer shorter than the 61-byte batch header")   \
	X(TRUNCATED,        1002, CORRUPT_MESSAGE, "buffer shorter than batchLength + 12")           \
	X(BAD_BATCH_LENGTH, 1003, CORRUPT_MESSAGE, "batchLength below 49 or above INT32_MAX - 12")   \
	X(BAD_MAGIC,        1004, CORRUPT_MESSAGE, "magic is not 2")                                 \
	X(BAD_CRC,          1005, CORRUPT_MESSAGE, "CRC-32C over attributes..end does not match")   \
	X(UNKNOWN_CODEC,    1006, UNSUPPORTED_COMPRESSION_TYPE, "compression codec id 5..7 does not exist") \
	X(BAD_RECORD_COUNT, 1008, INVALID_RECORD,  "recordsCount < 1, != lastOffsetDelta + 1, or "    \
	  "more records than bytes")                                                                 \
	X(RECORD_TRUNCATED, 1009, INVALID_RECORD,  "a record field runs past its record or the batch") \
	X(RECORD_VARINT,    1010, INVALID_RECORD,  "a record varint is too long or overflows")       \
	X(RECORD_LENGTH,    1011, INVALID_RECORD,  "record length negative or != bytes of its fields") \
	X(OFFSET_DELTA,     1012, INVALID_RECORD,  "record offsetDelta != its index in the batch")   \
	X(FIELD_LENGTH,     1013, INVALID_RECORD,  "key/value length < -1 or header key length < 0") \
	X(HEADER_COUNT,     1014, INVALID_RECORD,  "record header count negative or too large")      \
	X(RECORD_COUNT,     1015, INVALID_RECORD,  "fewer records than recordsCount, or bytes after the last") \
	X(CONTROL_FROM_CLIENT, 1016, INVALID_RECORD, "clients may not write control batches")       \
	X(BAD_CONTROL,      1017, INVALID_RECORD,  "control batch not transactional or not exactly one record") \
	X(BAD_PRODUCER,     1018, INVALID_RECORD,  "transactional without producerId, or producerId " \
	  "with baseSequence < 0 / producerEpoch < 0")                                               \
	X(TOO_LARGE,        1019, MESSAGE_TOO_LARGE, "batch larger than max.message.bytes")         \
	X(LIST_TOO_LARGE,   1020, RECORD_LIST_TOO_LARGE, "record set larger than a log segment") \
	X(DECOMPRESS,       1021, CORRUPT_MESSAGE, "compressed records section does not decompress " \
	  "(corrupt, truncated, trailing bytes, or a zstd window over 16 MiB)")                      \
	X(DECOMPRESSED_TOO_LARGE, 1022, MESSAGE_TOO_LARGE,                                            \
	  "records section decompresses to more than 64 MiB (HW_BATCH_MAX_DECOMPRESSED)")            \
	X(DECOMPRESS_NOMEM, 1023, UNKNOWN_SERVER_ERROR, "out of memory decompressing the records section")
/* (1007 was COMPRESSED, "hiwater stores uncompressed batches only": retired
 * when compressed batches became valid.) */

typedef enum hw_batch_rc {
#define HW_BATCH_RC_ENUM(name, num, kerr, desc) HW_BATCH_##name = -(num),
	HW_BATCH_RC_TABLE(HW_BATCH_RC_ENUM)
#undef HW_BATCH_RC_ENUM
} hw_batch_rc;

/* "BAD_CRC"...; "UNKNOWN" for anything not in the table. Never NULL. */
const char *hw_batch_rc_name(int rc);
/* One-line description; never NULL. */
const char *hw_batch_rc_desc(int rc);
/* The Kafka error code (hw_err) to report for rc: HW_ERR_NONE for rc >= 0,
 * HW_ERR_UNKNOWN_SERVER_ERROR for a value not in the table (e.g. -errno). */
int hw_batch_rc_kafka(int rc);

/* ---- parsed header --------------------------------------------------- */
typedef struct hw_batch_hdr {
	int64_t  base_offset;
	int32_t  batch_length;          /* bytes after the batchLength field */
	int32_t  partition_leader_epoch;
	int8_t   magic;
	uint32_t crc;                   /* as stored */
	int16_t  attributes;
	int32_t  last_offset_delta;
	int64_t  base_timestamp;
	int64_t  max_timestamp;
	int64_t  producer_id;
	int16_t  producer_epoch;
	int32_t  base_sequence;
	int32_t  record_count;
	uint32_t size;                  /* whole batch: batch_length + 12 */
} hw_batch_hdr;

static inline int hw_batch_codec(const hw_batch_hdr *h) { return h->attributes & HW_BATCH_ATTR_CODEC_MASK; }
static inline int hw_batch_is_transactional(const hw_batch_hdr *h) { return !!(h->attributes & HW_BATCH_ATTR_TRANSACTIONAL); }
static inline int hw_batch_is_control(const hw_batch_hdr *h) { return !!(h->attributes & HW_BATCH_ATTR_CONTROL); }
static inline int hw_batch_is_log_append_time(const hw_batch_hdr *h) { return !!(h->attributes & HW_BATCH_ATTR_LOG_APPEND_TIME); }
static inline int hw_batch_has_producer_id(const hw_batch_hdr *h) { return h->producer_id >= 0; }
/* baseOffset + lastOffsetDelta (wrapping arithmetic: no UB on hostile input). */
static inline int64_t hw_batch_last_offset(const hw_batch_hdr *h)
{
	return (int64_t)((uint64_t)h->base_offset + (uint64_t)(int64_t)h->last_offset_delta);
}
static inline int64_t hw_batch_next_offset(const hw_batch_hdr *h)
{
	return (int64_t)((uint64_t)hw_batch_last_offset(h) + 1u);
}
/* Kafka's DefaultRecordBatch.lastSequence: -1 if no sequence, else
 * baseSequence + lastOffsetDelta wrapping past INT32_MAX to 0. */
int32_t hw_batch_last_sequence(const hw_batch_hdr *h);
/* Kafka's DefaultRecordBatch.incrementSequence(seq, inc). */
int32_t hw_batch_seq_add(int32_t seq, int32_t inc);

/* Big-endian field access (hw_be16_get .. hw_be64_put): lib/bytes/hw_bytes.h. */

/* Raw readers on a batch known to have >= 61 bytes (e.g. after
 * hw_batch_parse_header succeeded on it). */
static inline int64_t hw_batch_raw_base_offset(const void *b) { return (int64_t)hw_be64_get((const uint8_t *)b + HW_BATCH_OFF_BASE_OFFSET); }
static inline int32_t hw_batch_raw_length(const void *b) { return (int32_t)hw_be32_get((const uint8_t *)b + HW_BATCH_OFF_LENGTH); }
static inline int32_t hw_batch_raw_leader_epoch(const void *b) { return (int32_t)hw_be32_get((const uint8_t *)b + HW_BATCH_OFF_LEADER_EPOCH); }
static inline int32_t hw_batch_raw_last_offset_delta(const void *b) { return (int32_t)hw_be32_get((const uint8_t *)b + HW_BATCH_OFF_LAST_DELTA); }
static inline int32_t hw_batch_raw_record_count(const void *b) { return (int32_t)hw_be32_get((const uint8_t *)b + HW_BATCH_OFF_COUNT); }
static inline int64_t hw_batch_raw_max_timestamp(const void *b) { return (int64_t)hw_be64_get((const uint8_t *)b + HW_BATCH_OFF_MAX_TS); }

/* ---- parse / validate ------------------------------------------------- */

/* Read the 61-byte header of the batch at buf[0..len) into *hdr (may be
 * NULL). Checks only framing: len >= 61 (else HW_BATCH_SHORT_HEADER),
 * 49 <= batchLength <= INT32_MAX - 12 (else HW_BATCH_BAD_BATCH_LENGTH) and
 * len >= batchLength + 12 (else HW_BATCH_TRUNCATED; *hdr is still filled, so
 * hdr->size says how many bytes the whole batch needs). No magic/CRC check.
 * Returns 0 or one of those three rcs. Bytes past hdr->size are ignored. */
int hw_batch_parse_header(const void *buf, size_t len, hw_batch_hdr *hdr);

/* Validation flags. */
#define HW_BATCH_V_CRC         0x01u /* check the CRC-32C */
#define HW_BATCH_V_RECORDS     0x02u /* walk and check every record */
#define HW_BATCH_V_FROM_CLIENT 0x04u /* produce-path rules (Kafka LogValidator, origin CLIENT):
				      * no control batches; a producerId needs baseSequence >= 0
				      * and producerEpoch >= 0 */
#define HW_BATCH_V_COMPACTED   0x08u /* also accept a batch log compaction rewrote (Kafka's
				      * MemoryRecords.filterTo keeps baseOffset and lastOffsetDelta
				      * of the original): 0 <= recordsCount <= lastOffsetDelta + 1,
				      * record offsetDeltas strictly increasing and <=
				      * lastOffsetDelta (not == their index). What readers of a
				      * stored log pass (recovery, followers, consumers); never the
				      * produce path. docs/compaction.md */
#define HW_BATCH_V_FULL        (HW_BATCH_V_CRC | HW_BATCH_V_RECORDS)

/* Fully check the first batch in buf[0..len); fills *hdr (may be NULL).
 * Order of checks (first failure is returned):
 *   framing as hw_batch_parse_header; magic == 2 (BAD_MAGIC); CRC if
 *   HW_BATCH_V_CRC (BAD_CRC); codec 5..7 UNKNOWN_CODEC;
 *   recordsCount >= 1 and == lastOffsetDelta + 1 and, uncompressed, <=
 *   (bytes after the header) / 7 (BAD_RECORD_COUNT); control batches: transactional with one
 *   record (BAD_CONTROL), rejected outright with HW_BATCH_V_FROM_CLIENT
 *   (CONTROL_FROM_CLIENT); transactional needs producerId >= 0, and with
 *   HW_BATCH_V_FROM_CLIENT a producerId needs baseSequence >= 0 and
 *   producerEpoch >= 0 (BAD_PRODUCER); then, if HW_BATCH_V_RECORDS: a
 *   compressed records section is decompressed (DECOMPRESS,
 *   DECOMPRESSED_TOO_LARGE, DECOMPRESS_NOMEM) and recordsCount <= its
 *   length / 7 (BAD_RECORD_COUNT); each record as hw_record_iter_next
 *   checks it, and exactly recordsCount records filling the (decompressed)
 *   records section to its last byte (RECORD_COUNT).
 * Returns 0 or a negative hw_batch_rc. Reads only buf[0..hdr.size). */
int hw_batch_validate(const void *buf, size_t len, hw_batch_hdr *hdr, unsigned flags);

/* Size limits (Kafka: max.message.bytes per batch -> MESSAGE_TOO_LARGE;
 * a whole produce record set larger than log.segment.bytes ->
 * RECORD_LIST_TOO_LARGE). Return 0, HW_BATCH_TOO_LARGE or
 * HW_BATCH_LIST_TOO_LARGE. */
static inline int hw_batch_check_size(const hw_batch_hdr *h, uint64_t max_message_bytes)
{
	return (uint64_t)h->size > max_message_bytes ? HW_BATCH_TOO_LARGE : 0;
}
static inline int hw_batch_check_set_size(uint64_t set_bytes, uint64_t segment_bytes)
{
	return set_bytes > segment_bytes ? HW_BATCH_LIST_TOO_LARGE : 0;
}

/* ---- iteration over concatenated batches ------------------------------ */
/* Walks buf[0..len) batch by batch (a produce record set, a fetch response,
 * a log segment read). A trailing partial batch (fewer bytes than its header
 * or its batchLength announces) ends the walk cleanly: it is not an error,
 * and hw_batch_iter_whole_bytes() reports the bytes of whole batches. A
 * batch that fails the checks selected by flags (0 = framing only, see
 * hw_batch_validate) stops the walk with that rc; whole_bytes then covers the
 * valid batches before it (what log recovery truncates to). */
typedef struct hw_batch_iter {
	const uint8_t *buf;
	size_t len;
	size_t pos;      /* start of the next batch == bytes of whole valid batches */
	unsigned flags;
	int rc;          /* 0 while walking; the failing rc once stopped on error */
	int partial;     /* 1 if stopped at a trailing partial batch */
} hw_batch_iter;

void hw_batch_iter_init(hw_batch_iter *it, const void *buf, size_t len, unsigned flags);
/* Returns 1 and sets *hdr (may be NULL) and *batch (start of the batch's
 * bytes, may be NULL) for the next batch; 0 at the end (buffer exhausted or
 * a partial trailing batch); or a negative hw_batch_rc (sticky: later calls
 * return it again). */
int hw_batch_iter_next(hw_batch_iter *it, hw_batch_hdr *hdr, const uint8_t **batch);
/* Bytes of whole, valid batches returned so far (== offset of the next one). */
static inline size_t hw_batch_iter_whole_bytes(const hw_batch_iter *it) { return it->pos; }
/* Bytes after the whole batches (a partial tail or the failing batch on). */
static inline size_t hw_batch_iter_rest_bytes(const hw_batch_iter *it) { return it->len - it->pos; }

/* ---- in-place stamping (leader append path) ------------------------- */
/* Set baseOffset / partitionLeaderEpoch of the batch at buf (>= 61 bytes).
 * Both are outside the CRC: no re-CRC. Never fail. */
void hw_batch_set_base_offset(void *buf, int64_t base_offset);
void hw_batch_set_leader_epoch(void *buf, int32_t epoch);
/* LogAppendTime (message.timestamp.type=LogAppendTime): set the attribute
 * bit, maxTimestamp = ts, and recompute the CRC, as Kafka's
 * DefaultRecordBatch.setMaxTimestamp. buf must hold the whole batch (len >=
 * its size). Returns 0 or a parse_header rc (nothing written then). */
int hw_batch_set_log_append_time(void *buf, size_t len, int64_t ts);
/* Recompute and store the CRC of a whole batch. Returns 0 or a parse rc. */
int hw_batch_update_crc(void *buf, size_t len);
/* CRC-32C the batch should carry (bytes 21..size). Caller guarantees size >= 61. */
uint32_t hw_batch_compute_crc(const void *buf, size_t size);

/* ---- records ---------------------------------------------------------- */
typedef struct hw_record_header {
	const uint8_t *key;   /* UTF-8, not NUL-terminated; never NULL for a parsed header */
	int32_t key_len;      /* >= 0 */
	const uint8_t *value; /* NULL iff value_len == -1 */
	int32_t value_len;    /* -1 = null */
} hw_record_header;

typedef struct hw_record {
	int64_t offset;          /* baseOffset + offsetDelta */
	int64_t timestamp;       /* baseTimestamp + delta, or maxTimestamp for LogAppendTime batches */
	int64_t timestamp_delta;
	int32_t offset_delta;
	int8_t attributes;       /* unused by Kafka v2, carried as is */
	const uint8_t *key;      /* NULL iff key_len == -1 */
	int32_t key_len;
	const uint8_t *value;    /* NULL iff value_len == -1 */
	int32_t value_len;
	int32_t header_count;
	const uint8_t *headers;  /* raw header bytes, already checked; walk with hw_record_header_next */
	size_t headers_len;
	const uint8_t *raw;      /* the record's bytes including its length varint */
	size_t raw_len;
} hw_record;

typedef struct hw_record_iter {
	hw_batch_hdr hdr;
	const uint8_t *p;    /* next record */
	const uint8_t *end;  /* end of the batch */
	int32_t index;       /* records returned so far */
	int rc;              /* sticky error */
	int compacted;       /* HW_BATCH_V_COMPACTED was passed: offsetDeltas only increase */
	int32_t prev_delta;  /* offsetDelta of the previous record (-1 before the first) */
} hw_record_iter;

/* Start iterating the records of the batch at buf[0..len). Runs
 * hw_batch_validate(buf, len, NULL, flags & ~HW_BATCH_V_RECORDS) first
 * (pass HW_BATCH_V_CRC to also check the CRC); returns 0 or its rc. A
 * compressed batch is decompressed here (the rcs of hw_batch_records) into
 * the thread's HW_BATCH_ZSLOT_ITER scratch: its records' pointers stay
 * valid until the next hw_record_iter_init of a compressed batch on this
 * thread (uncompressed: as long as buf). */
int hw_record_iter_init(hw_record_iter *it, const void *buf, size_t len, unsigned flags);
/* The same with the caller's scratch buffer for a compressed batch (the
 * records point into it until it is reused or freed). */
int hw_record_iter_init_buf(hw_record_iter *it, const void *buf, size_t len, unsigned flags,
			    hw_zbuf *scratch);

/* The records section of the batch at b, whose header h a successful
 * hw_batch_parse_header (or validate) filled: [*p, *end) is b+61..b+size
 * for an uncompressed batch; a compressed one is decompressed into
 * *scratch (at most HW_BATCH_MAX_DECOMPRESSED bytes) and [*p, *end) points
 * there. Returns 0, or UNKNOWN_CODEC, DECOMPRESS, DECOMPRESSED_TOO_LARGE,
 * DECOMPRESS_NOMEM, or BAD_RECORD_COUNT (recordsCount above the
 * decompressed length / 7). */
int hw_batch_records(const void *b, const hw_batch_hdr *h, hw_zbuf *scratch,
		     const uint8_t **p, const uint8_t **end);
/* Next record: 1 and *rec filled; 0 after exactly recordsCount records that
 * end exactly at the batch end; or a negative rc (RECORD_TRUNCATED,
 * RECORD_VARINT, RECORD_LENGTH, OFFSET_DELTA, FIELD_LENGTH, HEADER_COUNT,
 * RECORD_COUNT), sticky. All pointers in *rec point into the batch. */
int hw_record_iter_next(hw_record_iter *it, hw_record *rec);

/* Walk a record's headers: *p starts at rec->headers, end = rec->headers +
 * rec->headers_len. Returns 1 with *h filled, 0 at end, or a negative rc
 * (cannot fail on headers of a record hw_record_iter_next returned). */
int hw_record_header_next(const uint8_t **p, const uint8_t *end, hw_record_header *h);

/* ---- builder ---------------------------------------------------------- */
typedef struct hw_record_in {
	int64_t timestamp;              /* CreateTime, ms */
	const void *key;                /* NULL => null key (key_len ignored) */
	int32_t key_len;
	const void *value;              /* NULL => null value */
	int32_t value_len;
	const hw_record_header *headers;/* header keys must be non-NULL (key_len >= 0) */
	int32_t header_count;
} hw_record_in;

typedef struct hw_batch_spec {
	int64_t base_offset;            /* usually 0 from producers; the leader stamps it */
	int32_t partition_leader_epoch; /* HW_NO_PARTITION_LEADER_EPOCH from producers */
	int16_t attributes;             /* codec bits must be 0 (NONE) */
	int64_t producer_id;            /* HW_NO_PRODUCER_ID if not idempotent */
	int16_t producer_epoch;
	int32_t base_sequence;          /* HW_NO_SEQUENCE if not idempotent */
	int64_t log_append_time;        /* used as maxTimestamp iff attributes has LOG_APPEND_TIME */
} hw_batch_spec;

/* Initialise *s to a non-idempotent, non-transactional, uncompressed spec. */
void hw_batch_spec_init(hw_batch_spec *s);

/* Exact size in bytes of the batch hw_batch_build would write, or -EINVAL
 * (n < 1, n > INT32_MAX, a negative length other than via NULL, a header
 * with NULL key, or a batch over INT32_MAX bytes). */
ssize_t hw_batch_build_size(const hw_batch_spec *s, const hw_record_in *recs, size_t n);

/* Encode n records as one batch into buf[0..cap), exactly as Kafka's
 * MemoryRecordsBuilder (magic 2, no compression) lays it out:
 * baseTimestamp = first record's timestamp, maxTimestamp = largest record
 * timestamp (or log_append_time), offsetDelta = index, lastOffsetDelta =
 * n - 1, CRC computed. Returns bytes written, -EINVAL (see
 * hw_batch_build_size, or codec bits set), or -EMSGSIZE if cap is too small
 * (nothing useful written). */
ssize_t hw_batch_build(void *buf, size_t cap, const hw_batch_spec *s,
		       const hw_record_in *recs, size_t n);

/* The same batch with its records section compressed with codec (1..4;
 * o may be NULL for the codec's defaults), as a Kafka producer sends it:
 * the header uncompressed, attributes' codec bits set, batchLength and CRC
 * over the compressed bytes. Returns bytes written, -EINVAL (as
 * hw_batch_build, s->attributes with codec bits, or codec not 1..4),
 * -EMSGSIZE (cap too small) or -ENOMEM. */
ssize_t hw_batch_build_compressed(void *buf, size_t cap, const hw_batch_spec *s,
				  const hw_record_in *recs, size_t n, int codec,
				  const hw_zopts *o);

#endif
