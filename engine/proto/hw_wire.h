/* hw_wire.h — hiwater's wire protocol: one frame per datagram.
 *
 * Design note. Every message the engine exchanges (hw_msg.h, and the admin
 * messages of hw_admin_msg.h) is carried in one self-describing frame that
 * fits a UDP datagram (kernel UDP) or an Ethernet/IPv4/UDP packet built by
 * the DPDK transport, possibly spread over a chain of mbufs. There is no
 * connection and no retransmission in the transport: Kafka's semantics give
 * reliability (fetch is an idempotent pull by offset, produce retries are
 * deduplicated by the idempotent producer, controller pushes carry epochs).
 * A fetch response that does not fit one frame is split into several frames,
 * each carrying WHOLE record batches — or, for a batch larger than a frame,
 * one piece of it (FETCH_RESP tag BATCH_PIECE, hw_wire_piece.h); when one of
 * them is lost the follower's LEO simply stops short and its next fetch asks
 * again from there.
 *
 * Decoding trusts nothing: every length is checked against the bytes that
 * are actually there, counts are bounded, enums validated, strings must be
 * NUL-free and short enough, record blobs must be a sequence of whole
 * RecordBatch v2 frames (baseOffset, batchLength, magic 2; the CRC is the
 * record module's job). A frame that fails any check is dropped and counted
 * under a reason from HW_WIRE_DROP_TABLE — never a crash, never a log write.
 * Replays are detected per sender by (incarnation, seq) in a sliding window
 * (hw_wire_replay); frames from another cluster are dropped.
 *
 * ---- Frame format (all integers big-endian, no padding) ----------------
 *
 *  off len field
 *   0   2  magic           0x4857 ("HW")
 *   2   1  version         1 or 2 (HW_WIRE_VERSION_MIN..HW_WIRE_VERSION);
 *                          others are dropped
 *   3   1  flags           bit0 MORE: further frames of this split fetch
 *                          response follow (FETCH_RESP only; the encoder also
 *                          sets it on the last frame of a message whose
 *                          hw_fetch_resp.more is 1, so relaying a decoded
 *                          frame — another reactor, another transport —
 *                          keeps it);
 *                          bits 1..3 reserved, must be 0;
 *                          bits 4..7 STREAM (version 2 only, must be 0 in
 *                          version 1): the sender's stream, i.e. the index
 *                          of the reactor that sent the frame
 *   4   4  cluster_id      u32; frames of another cluster are dropped
 *   8   2  type            hw_msg_type wire id (1..63)
 *  10   2  frag            index of this frame within a split response (0..)
 *  12   4  correlation_id  responses echo the request's
 *  16   4  src             i32 sender node id (clients >= 1000)
 *  20   4  dst             i32 destination node id
 *  24   4  incarnation     u32 sender's process incarnation (start time based,
 *                          grows across restarts); resets the replay window
 *  28   4  seq             u32 sequence number of the sender's stream
 *  32   4  payload_len     u32, must equal datagram length - 36 (version
 *                          3: datagram length - 36 - 20)
 *  36   .. payload         the message body, by type:
 *  (version 3 only, after the payload)
 *   .   4  salt            u32 nonce salt of the sending process
 *   .  16  tag             AES-256-GCM tag over header, payload and salt
 *                          (hw_wire_auth.h)
 *
 * Primitives: i8/u8, i16, i32, i64 big-endian; idset = u8 n (<= HW_MAX_RF)
 * then n x i32; str = u16 len (< the field's max) then bytes (no NUL);
 * records = u32 len then whole RecordBatch v2 batches; tp = u32 topic_id,
 * u32 partition.
 *
 *  PRODUCE                 i16 acks, i32 timeout_ms, tp, records
 *  PRODUCE_RESP            tp, i16 error, i64 base_offset, i64 log_start_offset
 *  FETCH                   i32 replica_id, i64 replica_epoch, i32 max_wait_ms,
 *                          i32 min_bytes, i32 max_bytes, u8 isolation_level,
 *                          u16 n, n x { tp, i64 fetch_offset,
 *                          i32 current_leader_epoch, i32 last_fetched_epoch,
 *                          i64 log_start_offset, i32 partition_max_bytes }
 *  FETCH_RESP              i16 error, u16 n, n x { tp, i16 error, i64 hw,
 *                          i64 log_start_offset, i32 diverging_epoch,
 *                          i64 diverging_end_offset, i32 leader_id,
 *                          i32 leader_epoch, records }
 *  OFFSETS_FOR_EPOCH       i32 replica_id, u16 n, n x { tp,
 *                          i32 current_leader_epoch, i32 leader_epoch }
 *  OFFSETS_FOR_EPOCH_RESP  u16 n, n x { tp, i16 error, i32 leader_epoch, i64 end_offset }
 *  ALTER_PARTITION         i32 broker_id, i64 broker_epoch, tp, i32 leader_epoch,
 *                          i32 partition_epoch, idset new_isr,
 *                          new_isr.n x i64 broker_epoch, u8 leader_recovery_state
 *  ALTER_PARTITION_RESP    i16 error, tp, i32 leader_id, i32 leader_epoch,
 *                          i32 partition_epoch, idset isr, u8 leader_recovery_state
 *                          [, i32 controller_epoch (> 0: ZooKeeper mode)]
 *  PARTITION_STATE         tp, i32 leader, i32 leader_epoch, i32 partition_epoch,
 *                          idset replicas, idset isr, idset elr,
 *                          idset last_known_elr, u8 leader_recovery_state,
 *                          i16 min_insync_replicas, u8 unclean_leader_election,
 *                          str topic [, idset leader_throttled,
 *                          idset follower_throttled] (trailer present iff
 *                          either set is non-empty or the epoch follows)
 *                          [, i32 controller_epoch (> 0: ZooKeeper mode)]
 *                          [, u8 n_replica_epochs, n x i64 epoch
 *                          [, u8 deleted (present iff 1 or configs follow)
 *                          [, u8 n, n x {u8 topic config id, i64 value}
 *                          (hw_topic_config.h LOG rows, ascending)]]]
 *  PARTITION_STATE_ACK     same body as PARTITION_STATE (echo of what was applied)
 *  METADATA, DESCRIBE_TOPIC  u16 n, n x str topic
 *  METADATA_RESP           i16 error, i32 controller_id, i64 metadata_offset,
 *                          u16 nb, nb x broker, u16 nt, nt x topic_meta
 *                          [trailer: u16 nb, nb x {i32 id, listeners}]
 *                          (present iff some broker has a listener or the
 *                          epoch below follows, in broker order; every
 *                          broker's Kafka listeners, docs/kafka.md)
 *                          [, i32 controller_epoch (> 0: ZooKeeper mode;
 *                          0 only before the racks)]
 *                          [, u16 nb, nb x {i32 id, str rack} (present iff
 *                          some broker has a rack, broker order; docs/racks.md)]
 *  DESCRIBE_TOPIC_RESP     i16 error, i32 responder_id, u16 nt, nt x topic_meta
 *    broker     = i32 id, i64 broker_epoch, u8 state, str control_ep, str data_ep
 *    topic_meta = str name, u32 topic_id, i16 error, u32 np, np x part_meta,
 *                 u16 nc, nc x { str key, str value }
 *    part_meta  = u32 partition, i16 error, i32 leader, i32 leader_epoch,
 *                 i32 partition_epoch, u8 lrs, idset replicas, idset isr,
 *                 idset elr, idset last_known_elr, i64 hw, i64 leo, i64 log_start
 *  CREATE_TOPIC            str name, i32 partitions, i16 rf, i32 timeout_ms,
 *                          u8 validate_only, u16 nc, nc x { str key, str value }
 *                          [, u32 np, np x idset (an explicit assignment,
 *                          present iff np > 0; docs/racks.md)]
 *  CREATE_TOPIC_RESP       str name, u32 topic_id, i16 error, str error_message,
 *                          i32 partitions, i16 rf
 *  BROKER_REGISTER         i32 broker_id, u64 incarnation_id,
 *                          i64 previous_broker_epoch, i64 metadata_offset,
 *                          str control_ep, str data_ep [trailer: listeners,
 *                          present iff n > 0 or the rack follows]
 *                          [, str rack (broker.rack, present iff non-empty)]
 *    listeners  = u16 n, n x {str name, str value} ("PLAINTEXT", "HOST:PORT")
 *  BROKER_HEARTBEAT        i32 broker_id, i64 broker_epoch, i64 metadata_offset,
 *                          u8 want_fence, u8 want_shutdown
 *  BROKER_HEARTBEAT_RESP   i16 error, i64 broker_epoch, u8 is_caught_up,
 *                          u8 is_fenced, u8 should_shut_down
 *                          [, i32 controller_epoch (ZooKeeper mode or
 *                          NOT_CONTROLLER) [, i32 active_controller_id
 *                          (NOT_CONTROLLER: a standby's redirect)]]
 *
 * The payload must be consumed exactly: trailing bytes are a drop
 * (TRAILING). Counts are bounded by HW_WIRE_MAX_PARTS.
 *
 * Versions. 1: the original format. 2 (added with multi-reactor brokers):
 * identical except that flags bits 4..7 carry the sender's STREAM. A node
 * running several reactors sends from each with its own incarnation and
 * sequence counter (no shared state between reactors), so one node id is
 * several independent sequence streams; receivers keep one replay window per
 * (src, stream). An encoder whose hw_wire_tx.stream is 0 emits version 1,
 * byte-identical to before, so single-reactor processes and every v1 peer
 * interoperate unchanged; stream != 0 emits version 2.
 * 3 (authentication, hw_wire_auth.h and docs/wire.md "Version 3"): the
 * header of version 2 (the stream in flags bits 4..7) and a 20-byte
 * trailer after the payload: salt and MAC tag. With a key installed
 * (hiwater.auth, the default) every encoder emits version 3 and decoders
 * drop versions 1/2 (NO_MAC) and bad tags (BAD_MAC); under hiwater.auth=none
 * versions 1/2 as above and version 3 is dropped (BAD_MAC: no key).
 */
#ifndef HW_WIRE_H
#define HW_WIRE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "hw_msg.h"
#include "hw_admin_msg.h"

#define HW_WIRE_MAGIC       0x4857u
#define HW_WIRE_VERSION     3      /* newest understood (3: authenticated, hw_wire_auth.h) */
#define HW_WIRE_VERSION_MIN 1      /* oldest understood */
#define HW_WIRE_STREAM_SHIFT 4
#define HW_WIRE_STREAM_MAX  15u    /* flags bits 4..7 */
#define HW_WIRE_HDR_LEN     36
#define HW_WIRE_F_MORE      0x01u
/* dst of a bootstrap METADATA request: a client that knows only a node's
 * address (`hiwater --bootstrap-server HOST:PORT`), not its id, asks "any
 * node"; receivers accept it for METADATA only and answer with their own id
 * as src. */
#define HW_WIRE_DST_ANY     (-1)
/* Largest frame: the largest UDP payload over IPv4 (65535 - 20 - 8). */
#define HW_WIRE_MAX_FRAME   65507u
/* FETCH_RESP tag: the frame's last partition carries a piece of one
 * record batch: u32 batch_len, u32 piece_off (hw_wire_piece.h). */
#define HW_WIRE_TAG_BATCH_PIECE 16u
/* Most parts/topics/brokers/configs in one message (bounds decoder work). */
#define HW_WIRE_MAX_PARTS   1024u
/* Smallest RecordBatch v2 (61-byte header, no records) and its batchLength. */
#define HW_WIRE_BATCH_HDR   61u

/* Why a frame was dropped. X(NAME, description). */
#define HW_WIRE_DROP_TABLE(X)                                            \
	X(TRUNCATED,       "shorter than its header or a field")         \
	X(BAD_MAGIC,       "magic is not 0x4857")                        \
	X(BAD_VERSION,     "unsupported version")                        \
	X(BAD_FLAGS,       "reserved flag bits set")                     \
	X(FOREIGN_CLUSTER, "cluster id of another cluster")              \
	X(UNKNOWN_TYPE,    "message type not known")                     \
	X(LEN_MISMATCH,    "payload_len disagrees with datagram length") \
	X(OVERSIZED,       "larger than HW_WIRE_MAX_FRAME")              \
	X(BAD_COUNT,       "array count over its bound")                 \
	X(BAD_FIELD,       "field value out of range")                   \
	X(BAD_STRING,      "string too long or contains NUL")            \
	X(BAD_RECORDS,     "records are not whole RecordBatch v2 frames")\
	X(TRAILING,        "bytes left after the body")                  \
	X(NO_SCRATCH,      "decode arena too small")                     \
	X(REPLAYED,        "sequence number already seen")               \
	X(STALE_SENDER,    "older incarnation of the sender")            \
	X(NOT_FOR_US,      "destination is another node")                \
	X(NO_MAC,          "version 1/2 frame while authentication is on") \
	X(BAD_MAC,         "MAC does not verify (or hiwater.auth=none)")   \
	X(WRONG_PEER,      "sender id whose configured address is another")

typedef enum hw_wire_drop {
#define HW_WIRE_DROP_ENUM(n, d) HW_WIRE_DROP_##n,
	HW_WIRE_DROP_TABLE(HW_WIRE_DROP_ENUM)
#undef HW_WIRE_DROP_ENUM
	HW_WIRE_DROP__COUNT
} hw_wire_drop;

const char *hw_wire_drop_name(int reason);   /* "TRUNCATED"; never NULL */
const char *hw_wire_drop_desc(int reason);   /* never NULL */

/* Per-receiver counters. Plain integers: owned by one reactor. */
typedef struct hw_wire_stats {
	uint64_t rx_frames;                   /* decoded and delivered */
	uint64_t rx_bytes;
	uint64_t tx_frames;
	uint64_t tx_bytes;
	uint64_t drops[HW_WIRE_DROP__COUNT];
	uint64_t rx_unknown_tags;             /* delivered frames that carried a tag this
					       * build does not know (skipped) */
} hw_wire_stats;

uint64_t hw_wire_stats_total_drops(const hw_wire_stats *s);

/* The decoded header. */
typedef struct hw_wire_hdr {
	uint8_t version;
	uint8_t flags;
	uint32_t cluster_id;
	uint16_t type;
	uint16_t frag;
	uint32_t correlation_id;
	int32_t src;
	int32_t dst;
	uint32_t incarnation;
	uint32_t seq;
	uint32_t payload_len;
	uint8_t stream;           /* sender stream (flags bits 4..7; 0 in version 1) */
} hw_wire_hdr;

/* What a sender stamps into every frame. `seq` is advanced by the encoder
 * (one per frame); one hw_wire_tx per (sender, destination) keeps replay
 * windows per peer dense, but one per sender also works. `stream`
 * (0..HW_WIRE_STREAM_MAX) names the sender's independent sequence stream
 * (its reactor index); 0 encodes version-1 frames, others version 2; a
 * larger value makes the encoder return -EINVAL. */
typedef struct hw_wire_tx {
	uint32_t cluster_id;
	uint32_t incarnation;
	uint32_t seq;
	uint8_t stream;
} hw_wire_tx;

/* A new incarnation for this process: CLOCK_REALTIME in milliseconds,
 * truncated to 32 bits, and strictly greater than any returned before in
 * this process (two sender contexts of one process never share one: part
 * of the version-3 nonce). Receivers compare incarnations with serial-number
 * arithmetic ((int32_t)(a - b) > 0), so it grows across restarts (wrapping
 * every 49 days is harmless). */
uint32_t hw_wire_new_incarnation(void);

/* Scratch memory the decoder places arrays and admin structs in. */
typedef struct hw_wire_arena {
	uint8_t *base;
	size_t cap;
	size_t used;
} hw_wire_arena;

static inline void hw_wire_arena_init(hw_wire_arena *a, void *buf, size_t cap)
{
	a->base = (uint8_t *)buf;
	a->cap = cap;
	a->used = 0;
}
/* Enough for any message decoded from one HW_WIRE_MAX_FRAME datagram. */
#define HW_WIRE_ARENA_SIZE (512u * 1024u)   /* 1024 topic_meta of 249-byte names */

/* Split position for messages that may need several frames (FETCH_RESP).
 * Zero-initialise before the first frame; `done` becomes 1 after the frame
 * that carries the last bytes. */
typedef struct hw_wire_split {
	uint16_t part;        /* next partition to encode */
	uint32_t rec_off;     /* bytes of its records already sent */
	uint16_t frag;        /* next frame index */
	uint8_t started;      /* the current part's metadata went out at least once */
	uint8_t done;
	uint32_t piece_start; /* a batch being cut into pieces: its offset in the part's records */
	uint32_t piece_len;   /* ... and its size (0: none; docs/wire.md#batch-pieces) */
} hw_wire_split;

/* ---- Encoding ---------------------------------------------------------
 *
 * hw_wire_encode_iov: gather form. Writes header and fixed fields into
 * `hdrbuf` and points iov[] at them, with record bytes referenced in place
 * (iov entries pointing at the caller's records: no copy — the DPDK
 * transport attaches them as external mbufs, the UDP transport hands the
 * iovec to sendmsg). `max_frame` bounds the whole frame (<=
 * HW_WIRE_MAX_FRAME). For FETCH_RESP, as many whole batches as fit are
 * encoded and `split` advances (pass a zeroed split; call again until
 * split->done); other types are encoded whole (split may be NULL for them).
 * `rec_iov` (may be NULL) receives, per iov entry, 1 if it points at records
 * of the message (so a transport can account bytes sent by reference).
 *
 * Returns the frame length (> 0), or:
 *   -EMSGSIZE  message (or a single record batch) cannot fit in max_frame,
 *              or hdrbuf/iov too small
 *   -EINVAL    bad message (unknown type, count over HW_WIRE_MAX_PARTS,
 *              string without NUL, records not whole batches, NULL `other`)
 * tx->seq is advanced only on success. */
int hw_wire_encode_iov(hw_wire_tx *tx, const hw_msg *m, hw_wire_split *split,
		       size_t max_frame, uint8_t *hdrbuf, size_t hdrcap,
		       struct iovec *iov, int iov_cap, int *n_iov, uint8_t *rec_iov);

/* Flat form: the whole frame copied into buf (cap bytes). Same contract. */
int hw_wire_encode(hw_wire_tx *tx, const hw_msg *m, hw_wire_split *split,
		   uint8_t *buf, size_t cap);

/* ---- Frames that never leave the process --------------------------------
 *
 * A broker's reactors hand messages to each other as encoded frames
 * (apps/hiwaterd/hwd_shard.c). Such a hop has no datagram limit, so a
 * PRODUCE or FETCH_RESP carrying a record batch larger than a frame goes
 * whole, in one *local frame* of up to HW_WIRE_LOCAL_MAX_FRAME bytes, and
 * is neither refused (PRODUCE) nor cut into pieces (FETCH_RESP) on the
 * way — the Kafka listener gets whole batches (docs/wire.md#batch-pieces).
 * The format is the frame format; only the size bound differs, and only
 * these two functions accept it: a local frame is never sent. */
#define HW_WIRE_LOCAL_MAX_FRAME (256u * 1024u * 1024u + HW_WIRE_MAX_FRAME)
/* A buffer size enough for m as one local frame (its record bytes plus a
 * frame), at most HW_WIRE_LOCAL_MAX_FRAME. */
size_t hw_wire_local_bound(const hw_msg *m);
/* hw_wire_encode without a split, bounded by HW_WIRE_LOCAL_MAX_FRAME
 * instead of HW_WIRE_MAX_FRAME (and by cap). Same errors. */
int hw_wire_encode_local(hw_wire_tx *tx, const hw_msg *m, uint8_t *buf, size_t cap);
/* hw_wire_decode accepting up to HW_WIRE_LOCAL_MAX_FRAME bytes. */
int hw_wire_decode_local(const uint8_t *buf, size_t len, uint32_t cluster_id,
			 hw_wire_arena *arena, hw_wire_hdr *h, hw_msg *m,
			 hw_wire_drop *why, hw_wire_stats *stats);

/* ---- Decoding ---------------------------------------------------------
 *
 * Parse only the header (36 bytes) with the cluster, magic, version, flags
 * and length checks. Returns 0 or -EBADMSG with *why set. */
int hw_wire_decode_hdr(const uint8_t *buf, size_t len, uint32_t cluster_id,
		       hw_wire_hdr *h, hw_wire_drop *why);

/* Decode a whole frame into *m (pointers borrow `buf` for records and the
 * arena for arrays/admin structs; the arena is reset by the caller). Does
 * NOT check replay (see hw_wire_replay) or dst. Returns 0, or -EBADMSG with
 * *why set and, when stats is non-NULL, stats->drops[*why] incremented. */
int hw_wire_decode(const uint8_t *buf, size_t len, uint32_t cluster_id,
		   hw_wire_arena *arena, hw_wire_hdr *h, hw_msg *m,
		   hw_wire_drop *why, hw_wire_stats *stats);

/* Walk a records blob: 0 if it is a sequence of whole RecordBatch v2
 * frames (possibly empty), -EBADMSG otherwise. *n_batches if non-NULL. */
int hw_wire_check_batches(const uint8_t *p, size_t len, uint32_t *n_batches);

/* Length of the longest prefix of whole batches of p[0..len) not exceeding
 * `room` bytes (0 if the first batch alone is larger). p must be valid
 * (hw_wire_check_batches). */
size_t hw_wire_batches_prefix(const uint8_t *p, size_t len, size_t room);

/* ---- Replay protection --------------------------------------------------
 *
 * Per sender stream (src node id, hdr.stream): the latest incarnation and a 1024-frame window of seqs
 * below the highest seen. A seq more than a window behind, or already seen,
 * is a replay; a lower incarnation is stale; a higher incarnation (the peer
 * restarted) resets the window. Fixed table of HW_WIRE_REPLAY_PEERS senders
 * (open addressing on the node id); when full, the least recently used
 * sender is evicted (its next frame starts a fresh window). */
#define HW_WIRE_REPLAY_PEERS  64
#define HW_WIRE_REPLAY_WINDOW 1024
typedef struct hw_wire_replay_peer {
	int32_t node;             /* INT32_MIN: free */
	uint32_t incarnation;
	uint32_t top;             /* highest seq seen */
	uint64_t last_use;
	uint64_t bits[HW_WIRE_REPLAY_WINDOW / 64];  /* bit (seq % W): seen */
	uint8_t stream;           /* with node: the sender stream this window tracks */
} hw_wire_replay_peer;

typedef struct hw_wire_replay {
	hw_wire_replay_peer peer[HW_WIRE_REPLAY_PEERS];
	uint64_t clock;
} hw_wire_replay;

void hw_wire_replay_init(hw_wire_replay *r);
/* 0: fresh (recorded as seen); -EBADMSG with *why = REPLAYED or STALE_SENDER. */
int hw_wire_replay_check(hw_wire_replay *r, const hw_wire_hdr *h, hw_wire_drop *why);

#endif
