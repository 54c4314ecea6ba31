/* hw_frag.h — hiwater fragments: one hiwater frame (hw_wire.h, up to
 * 65507 bytes) carried in several Ethernet/IPv4/UDP packets when it does
 * not fit one packet of the port's MTU, and its reassembly.
 *
 * Design note. hiwater frames are up to HW_WIRE_MAX_FRAME bytes; most
 * Ethernet ports carry 1500 (or 9000) bytes per packet. IP fragmentation is
 * not used (hiwater sets DF and its receivers drop IP fragments: a DPDK
 * port has no kernel to reassemble them). Instead the DPDK transport cuts a
 * frame that does not fit into fragments, each a UDP datagram whose payload
 * is this header plus a slice of the frame, and the receiver reassembles the
 * frame before decoding it. There is no retransmission: the loss of any
 * fragment is the loss of the whole frame, which Kafka's semantics already
 * tolerate (a follower's next fetch asks again from its LEO; a producer
 * retries and the idempotent producer deduplicates). Frames that fit one
 * packet are sent as before, without this header (memif always does).
 *
 * The codec and the reassembler are pure (bytes in, bytes out; no DPDK, no
 * I/O, no clock: the caller passes the time) so they are unit tested and
 * fuzzed alone (tests/drivers/net/dpdk/test_frag.c, fuzz_frag.c).
 *
 * ---- Fragment (the UDP payload; integers big-endian, no padding) -------
 *
 *  off len field
 *   0   4  magic      0x48465247 ("HFRG"; a hiwater frame starts with
 *                     0x4857 "HW", so the two never look alike)
 *   4   1  version    1 (HW_FRAG_VERSION_MIN..HW_FRAG_VERSION);
 *                     others are dropped (BAD_VERSION)
 *   5   1  reserved   0 (BAD_RESERVED)
 *   6   2  index      this fragment's place, 0..count-1 (BAD_INDEX)
 *   8   2  count      fragments of the frame, 2..HW_FRAG_MAX_COUNT, and
 *                     exactly ceil(total / frag_size) (BAD_COUNT)
 *  10   2  frag_size  bytes of every fragment but the last,
 *                     HW_FRAG_MIN_SIZE..total-1 (BAD_SIZE)
 *  12   4  msg_id     u32 the sender's message number (per sender UDP
 *                     port; starts at a random value, +1 per frame)
 *  16   4  total_len  bytes of the whole frame, 1..HW_FRAG_MAX_TOTAL
 *                     (BAD_TOTAL)
 *  20   4  offset     where this fragment's bytes go: index x frag_size
 *                     (BAD_OFFSET)
 *  24   ..  bytes     min(frag_size, total_len - offset) bytes, i.e. the
 *                     rest of the datagram (BAD_LENGTH otherwise)
 *
 * Every field is checked against the others in the one fragment (the
 * offset and the length are implied by index, frag_size and total_len, so
 * fragments can neither overlap nor leave holes), and every fragment of a
 * message must carry the total_len, count and frag_size of the first one
 * received (INCONSISTENT).
 *
 * Reassembly is keyed by (sender IPv4, sender UDP port, msg_id): each
 * reactor of a node sends from its own UDP port with its own counter. Memory
 * is bounded: a fixed number of slots, each holding one frame of up to
 * HW_FRAG_MAX_TOTAL bytes, allocated once at create. A message that has
 * received no fragment for the timeout is dropped (TIMEOUT) when the owner
 * calls hw_frag_reasm_expire — never inside push: a receiver descheduled
 * for longer than the timeout must first read the fragments waiting in its
 * RX queue, or it would drop messages that are in fact complete (seen on a
 * loaded 2-core machine: every fragment received, the message given up, its
 * last fragments counted LATE). When every slot is busy, the
 * oldest incomplete message is dropped for the new one (EVICTED). The keys
 * of the last HW_FRAG_RECENT messages completed or given up are remembered,
 * so a late or duplicated fragment of one is counted (DUPLICATE, LATE)
 * instead of opening a slot that could only time out. Every drop is counted
 * under its reason in HW_FRAG_DROP_TABLE.
 *
 * Versions and compatibility: as hw_qhello.h. A receiver drops every
 * version it does not know (BAD_VERSION, so that frame is lost and healed
 * like any lost frame); a later version keeps magic and version at offsets
 * 0..4. A receiver of a build without fragments sees the magic as a
 * malformed hiwater frame and drops it (BAD_MAGIC in its wire counters).
 */
#ifndef HW_FRAG_H
#define HW_FRAG_H
#include <stddef.h>
#include <stdint.h>

#define HW_FRAG_MAGIC       0x48465247u  /* "HFRG" */
#define HW_FRAG_VERSION     1            /* newest understood and sent */
#define HW_FRAG_VERSION_MIN 1            /* oldest understood */
#define HW_FRAG_HDR_LEN     24
#define HW_FRAG_MAX_TOTAL   65507u       /* = HW_WIRE_MAX_FRAME */
#define HW_FRAG_MIN_SIZE    256u         /* smallest frag_size (an MTU of 308) */
#define HW_FRAG_MAX_COUNT   256u         /* ceil(HW_FRAG_MAX_TOTAL / HW_FRAG_MIN_SIZE) */
#define HW_FRAG_RECENT      64           /* keys of finished messages remembered */
#define HW_FRAG_MAX_SLOTS   1024u

/* Why a fragment (or, for the last two, a whole message) was dropped.
 * X(NAME, errno it is reported as, description). Header checks run in the
 * table's order, so a fragment with several faults reports the first. */
#define HW_FRAG_DROP_TABLE(X)                                                                  \
	X(TRUNCATED,    EBADMSG,         "shorter than the 24-byte fragment header")           \
	X(BAD_MAGIC,    EBADMSG,         "magic is not 0x48465247 (HFRG)")                     \
	X(BAD_VERSION,  EPROTONOSUPPORT, "version not understood")                             \
	X(BAD_RESERVED, EBADMSG,         "reserved byte is not 0")                             \
	X(BAD_TOTAL,    ERANGE,          "total length 0 or above 65507")                      \
	X(BAD_SIZE,     ERANGE,          "fragment size below 256 or not below the total")     \
	X(BAD_COUNT,    ERANGE,          "count is not ceil(total / fragment size)")           \
	X(BAD_INDEX,    ERANGE,          "index not below count")                              \
	X(BAD_OFFSET,   ERANGE,          "offset is not index x fragment size")                \
	X(BAD_LENGTH,   EBADMSG,         "payload length not what offset and total imply")     \
	X(INCONSISTENT, EBADMSG,         "total, size or count differ from the message's")     \
	X(DUPLICATE,    EALREADY,        "fragment already received, or its message complete") \
	X(LATE,         ETIMEDOUT,       "fragment of a message already given up")             \
	X(TIMEOUT,      ETIMEDOUT,       "message incomplete when its time ran out")           \
	X(EVICTED,      ENOSPC,          "message incomplete, its slot taken by a newer one")

typedef enum hw_frag_drop {
#define HW_FRAG_DROP_ENUM(n, e, d) HW_FRAG_DROP_##n,
	HW_FRAG_DROP_TABLE(HW_FRAG_DROP_ENUM)
#undef HW_FRAG_DROP_ENUM
	HW_FRAG_DROP__COUNT
} hw_frag_drop;

const char *hw_frag_drop_name(int reason);   /* "BAD_INDEX"; never NULL */
const char *hw_frag_drop_desc(int reason);   /* never NULL */
int hw_frag_drop_errno(int reason);          /* positive errno; EINVAL if out of range */

/* One fragment's header. */
typedef struct hw_frag_hdr {
	uint8_t version;       /* decode: the fragment's; encode: ignored (sends HW_FRAG_VERSION) */
	uint16_t index;
	uint16_t count;
	uint16_t frag_size;
	uint32_t msg_id;
	uint32_t total_len;
	uint32_t offset;
	uint32_t payload_len;  /* decode: bytes after the header; encode: ignored */
} hw_frag_hdr;

/* How to cut a frame of total bytes into datagrams of at most max_payload
 * bytes (the UDP payload one packet carries). Returns the fragment count
 * (>= 2) and *frag_size, 1 if it fits one datagram unfragmented (*frag_size
 * untouched), or -EMSGSIZE (fragments would be smaller than
 * HW_FRAG_MIN_SIZE or more than HW_FRAG_MAX_COUNT), -EINVAL (total 0 or
 * above HW_FRAG_MAX_TOTAL, frag_size NULL). */
int hw_frag_plan(size_t total, size_t max_payload, uint16_t *frag_size);

/* Write the header of fragment h->index into buf (the bytes follow it).
 * h->offset must be index x frag_size and the other fields consistent as
 * decode checks them. Returns HW_FRAG_HDR_LEN, -EINVAL (h or buf NULL, or
 * a field decode would reject), -ENOSPC (cap < HW_FRAG_HDR_LEN). Writes
 * nothing on error. */
int hw_frag_encode(const hw_frag_hdr *h, uint8_t *buf, size_t cap);

/* Check one fragment of len bytes (header and payload) alone. 0 with *out
 * filled, or a negative errno with *why (the reason's errno column; only
 * TRUNCATED..BAD_LENGTH here); -EINVAL (out or why NULL, or buf NULL with
 * len > 0: *why untouched). *out is only written on success. */
int hw_frag_decode(const uint8_t *buf, size_t len, hw_frag_hdr *out, hw_frag_drop *why);

/* True when a datagram payload starts with the fragment magic (so the
 * caller hands it to the reassembler rather than the wire decoder). */
int hw_frag_is_fragment(const uint8_t *buf, size_t len);

typedef struct hw_frag_stats {
	uint64_t fragments;            /* pushed, whatever became of them */
	uint64_t fragments_accepted;   /* stored in a message */
	uint64_t fragments_discarded;  /* accepted, then lost with a TIMEOUT/EVICTED message */
	uint64_t messages_started;
	uint64_t messages_completed;
	uint64_t bytes_completed;      /* frame bytes of completed messages */
	uint64_t drops[HW_FRAG_DROP__COUNT]; /* fragments; TIMEOUT and EVICTED count messages */
} hw_frag_stats;

typedef struct hw_frag_reasm hw_frag_reasm;

/* A reassembler with n_slots messages in flight (1..HW_FRAG_MAX_SLOTS) and
 * an incomplete message lifetime of timeout_ns (> 0). All memory is
 * allocated here (hw_frag_reasm_mem), none later. NULL with *err -EINVAL or
 * -ENOMEM. */
hw_frag_reasm *hw_frag_reasm_create(unsigned n_slots, int64_t timeout_ns, int *err);
void hw_frag_reasm_destroy(hw_frag_reasm *r);

/* Feed one fragment (the whole UDP payload) from (src_ip, src_port), both
 * as the caller likes them (opaque key parts), at time now_ns (monotonic).
 * Nothing is expired here (hw_frag_reasm_expire does that).
 * Returns 1 when this fragment completes its message: *frame / *frame_len
 * are the reassembled frame, valid until the next push, expire or destroy
 * call on r; 0 when it was stored and the message waits for more; or a
 * negative errno (the reason's errno column) with *why when the fragment is
 * dropped (counted). -EINVAL (r, frame, frame_len or why NULL; buf NULL
 * with len > 0) counts nothing. */
int hw_frag_reasm_push(hw_frag_reasm *r, uint32_t src_ip, uint16_t src_port, const uint8_t *buf, size_t len,
		       int64_t now_ns, const uint8_t **frame, size_t *frame_len, hw_frag_drop *why);

/* Drop (TIMEOUT) every message whose newest fragment was stored more than
 * the timeout before now_ns. Call it when the fragments that have arrived
 * are all pushed (the driver: after an RX pass that drained its queues).
 * Returns how many. */
unsigned hw_frag_reasm_expire(hw_frag_reasm *r, int64_t now_ns);

const hw_frag_stats *hw_frag_reasm_stats(const hw_frag_reasm *r);
/* Bytes allocated by create (constant for the reassembler's life). */
size_t hw_frag_reasm_mem(const hw_frag_reasm *r);
/* Messages in flight now (<= n_slots). */
unsigned hw_frag_reasm_in_use(const hw_frag_reasm *r);

#endif
