/* hw_qhello.h — the memif "queue hello" frame: how a memif client tells its
 * server how many ring pairs it connected.
 *
 * Design note. DPDK's memif PMD has no API that tells a server how many
 * rings a client connected, and a server queue beyond the client's count is
 * not dead but aliases ring 0 (hw_dpdk.h "memif queues"). So the client's
 * queue-0 instance announces its count in this frame on queue 0 when its
 * link comes up and every second while up, and the server uses only queue 0
 * until it hears one. The frame never leaves the memif link between two
 * hiwater processes on one host; it is not IP, so it is not routed.
 *
 * The codec is pure (bytes in, struct out, no DPDK, no I/O) so it can be
 * unit tested and fuzzed alone (tests/drivers/net/dpdk/test_qhello.c, fuzz_qhello.c);
 * hw_dpdk_ctl.c builds the Ethernet header around it and calls it. Decoding
 * trusts nothing: the length, magic, version, reserved byte, cluster id,
 * queue count and node id are all checked, and a frame that fails a check
 * is rejected with a reason from HW_QHELLO_DROP_TABLE (the driver counts it
 * per reason and logs it, rate-limited) — never a crash, never a partial
 * result the driver acts on.
 *
 * ---- Frame (after a 14-byte Ethernet II header whose EtherType is
 *      HW_QHELLO_ETHER_TYPE 0x88B5, IEEE 802 local experimental 1;
 *      integers big-endian, no padding) --------------------------------
 *
 *  off len field
 *   0   4  magic        0x48575148 ("HWQH")
 *   4   1  version      1 (HW_QHELLO_VERSION_MIN..HW_QHELLO_VERSION);
 *                       others are dropped (BAD_VERSION)
 *   5   1  reserved     0; anything else is dropped (BAD_RESERVED)
 *   6   2  queue_count  ring pairs the client connected,
 *                       1..HW_QHELLO_MAX_QUEUES (BAD_COUNT otherwise)
 *   8   4  cluster_id   u32; another cluster's hello is dropped
 *                       (FOREIGN_CLUSTER)
 *  12   4  node_id      i32 sender node id, >= -1 (-1: an anonymous
 *                       instance; BAD_NODE otherwise); for logs only
 *  16      (end: HW_QHELLO_LEN bytes)
 *
 * Bytes after offset 16 are ignored: Ethernet pads frames shorter than 60
 * bytes (a 46-byte payload) and a port may or may not strip the padding.
 *
 * Versions and compatibility. 1 is the first versioned format. A receiver
 * drops every version it does not know, counted under BAD_VERSION and
 * logged with the version and length it saw; a server that drops every
 * hello of a peer keeps using queue 0 only for that peer, which is slower
 * but correct (hw_dpdk.h): a version mismatch degrades, it never misroutes.
 * A later version must keep offsets 0..4 (magic, version) where they are so
 * an older receiver can tell it apart, and a sender must only send a
 * version its peers know (all nodes of a local cluster run one build).
 * Adding an optional field at the end does NOT need a new version (v1
 * receivers ignore trailing bytes); changing or removing one does.
 * The unversioned hello of earlier builds (magic, cluster id, node id,
 * count: 14 bytes) is not decoded: on memif (no padding) it is 14 bytes
 * long and is dropped as TRUNCATED; padded, its byte 4 (the cluster id's
 * top byte) is read as the version; even when that byte is 1 the v1
 * cluster id field holds the old sender's node id, which would have to
 * equal the cluster id (then >= 2^24), so it is dropped, never misread.
 */
#ifndef HW_QHELLO_H
#define HW_QHELLO_H
#include <stddef.h>
#include <stdint.h>

#define HW_QHELLO_ETHER_TYPE  0x88B5u      /* IEEE 802 local experimental 1 */
#define HW_QHELLO_MAGIC       0x48575148u  /* "HWQH" */
#define HW_QHELLO_VERSION     1            /* newest understood and sent */
#define HW_QHELLO_VERSION_MIN 1            /* oldest understood */
#define HW_QHELLO_LEN         16           /* bytes of a version-1 hello */
/* Largest queue count: memif's ring index is below 256 (its HELLO
 * advertises at most 255 rings). The driver further clamps to the queue
 * pairs it configured. */
#define HW_QHELLO_MAX_QUEUES  255u

/* Why a hello was rejected. X(NAME, errno it is reported as, description). */
#define HW_QHELLO_DROP_TABLE(X)                                                     \
	X(TRUNCATED,       EBADMSG,         "shorter than the 16-byte hello")        \
	X(BAD_MAGIC,       EBADMSG,         "magic is not 0x48575148 (HWQH)")        \
	X(BAD_VERSION,     EPROTONOSUPPORT, "version not understood")                \
	X(BAD_RESERVED,    EBADMSG,         "reserved byte is not 0")                \
	X(BAD_COUNT,       ERANGE,          "queue count 0 or above 255")            \
	X(FOREIGN_CLUSTER, EACCES,          "cluster id of another cluster")         \
	X(BAD_NODE,        ERANGE,          "node id below -1")

typedef enum hw_qhello_drop {
#define HW_QHELLO_DROP_ENUM(n, e, d) HW_QHELLO_DROP_##n,
	HW_QHELLO_DROP_TABLE(HW_QHELLO_DROP_ENUM)
#undef HW_QHELLO_DROP_ENUM
	HW_QHELLO_DROP__COUNT
} hw_qhello_drop;

const char *hw_qhello_drop_name(int reason);   /* "BAD_VERSION"; never NULL */
const char *hw_qhello_drop_desc(int reason);   /* never NULL */

/* A decoded (or to be encoded) hello. */
typedef struct hw_qhello {
	uint8_t version;         /* decode: the frame's; encode: ignored (sends HW_QHELLO_VERSION) */
	uint16_t queue_count;    /* 1..HW_QHELLO_MAX_QUEUES */
	uint32_t cluster_id;
	int32_t node_id;         /* >= -1 */
} hw_qhello;

/* Write a version-HW_QHELLO_VERSION hello (without the Ethernet header)
 * into buf. Returns HW_QHELLO_LEN, or -EINVAL (h or buf NULL, queue_count
 * out of 1..HW_QHELLO_MAX_QUEUES, node_id < -1), -ENOSPC (cap <
 * HW_QHELLO_LEN). Writes nothing on error. */
int hw_qhello_encode(const hw_qhello *h, uint8_t *buf, size_t cap);

/* Decode the len bytes after the Ethernet header, expecting cluster_id.
 * Returns 0 with *out filled, or a negative errno with *why set to the
 * reason (the errno is the reason's column in HW_QHELLO_DROP_TABLE:
 * -EBADMSG malformed, -EPROTONOSUPPORT unknown version, -ERANGE count or
 * node out of range, -EACCES another cluster); -EINVAL (out or why NULL,
 * or buf NULL with len > 0 — *why untouched). The checks run in the order
 * of the table, so a frame with several faults reports the first. *out is
 * only written on success. Reads at most HW_QHELLO_LEN bytes of buf. */
int hw_qhello_decode(const uint8_t *buf, size_t len, uint32_t cluster_id, hw_qhello *out,
		     hw_qhello_drop *why);

#endif
