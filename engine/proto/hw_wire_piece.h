/* hw_wire_piece.h — batch pieces: record batches larger than one frame.
 *
 * Design note (docs/wire.md#batch-pieces). A frame is at most
 * HW_WIRE_MAX_FRAME bytes, Kafka's message.max.bytes is 1048588. A fetch
 * response whose next batch does not fit the room left in a frame carries
 * that batch as *pieces*: consecutive byte ranges, one per frame, each the
 * last partition of its frame, marked by the FETCH_RESP tag BATCH_PIECE
 * (u32 batch_len, u32 piece_off, i64 the batch's baseOffset) and filling
 * its frame. Nothing else
 * changes: no retransmission, no new message type — a lost piece leaves the
 * batch incomplete, the follower's LEO stays where it was, and its next
 * fetch asks again from the same offset (the whole batch comes again, and
 * fills the gap).
 *
 * The receiver assembles one batch per partition here: the first piece
 * that arrives (at any offset) allocates the whole batch (batch_len bounded
 * by the caller's limit); pieces are placed where they belong, in any order
 * (datagrams may be reordered), bytes already there are not counted again
 * (a repeated frame), and the batch is handed out only when every byte is
 * there. The bytes received are kept as at most HW_PIECE_MAX_RANGES
 * disjoint ranges; a piece that would need more drops the assembly, one of
 * another batch (the tag names the batch's baseOffset) starts a new one
 * (counted by the caller under the returned reason). A follower assembles
 * only the batch at its LEO; a piece lost for good leaves the assembly
 * incomplete until the next fetch brings the batch again, filling the
 * gap. The batch handed out has NOT
 * been CRC-checked: the caller validates it (framing, CRC-32C) before
 * appending, as for any fetched batch; a partial batch is never handed out.
 */
#ifndef HW_WIRE_PIECE_H
#define HW_WIRE_PIECE_H
#include <stdint.h>

/* Largest batch_len a decoder accepts at all (the receiver's own limit,
 * message.max.bytes or replica.fetch.max.bytes, is usually far lower). */
#define HW_WIRE_PIECE_MAX_BATCH (256u * 1024u * 1024u)
/* Smallest piece the encoder cuts (but a batch's last piece may be
 * shorter): below this the frame is closed and the piece starts the next. */
#define HW_WIRE_PIECE_MIN 256u

/* Why a piece was not used. X(NAME, description). */
#define HW_PIECE_DROP_TABLE(X)                                                         \
	X(TOO_LARGE,   "batch_len above the receiver's limit")                         \
	X(TOO_SCATTERED,"more than HW_PIECE_MAX_RANGES separate ranges: the assembly is dropped") \
	X(NOT_NEXT,    "a piece of a batch that does not start at the receiver's next offset") \
	X(DUPLICATE,   "bytes already assembled (a repeated frame): ignored, the assembly goes on") \
	X(NO_MEMORY,   "could not allocate the batch")

typedef enum hw_piece_drop {
#define HW_PIECE_DROP_ENUM(n, d) HW_PIECE_DROP_##n,
	HW_PIECE_DROP_TABLE(HW_PIECE_DROP_ENUM)
#undef HW_PIECE_DROP_ENUM
	HW_PIECE_DROP__COUNT
} hw_piece_drop;

const char *hw_piece_drop_name(int reason);   /* never NULL */

#define HW_PIECE_MAX_RANGES 32

/* One batch being assembled. Zero-initialise; owned by one thread. */
typedef struct hw_piece_asm {
	uint8_t *buf;          /* batch_len bytes, NULL when idle */
	uint32_t batch_len;
	uint32_t have;         /* bytes received (the ranges' total) */
	uint8_t n_ranges;
	struct { uint32_t lo, hi; } r[HW_PIECE_MAX_RANGES]; /* sorted, disjoint, not touching */
	int64_t base;          /* the batch's baseOffset */
} hw_piece_asm;

/* Feed one piece: bytes [off, off + len) of the batch at baseOffset base
 * of batch_len bytes (the receiver's limit `max_batch`). Returns
 *   1  the batch is complete: *out points at its batch_len bytes, valid
 *      until the next feed or hw_piece_reset (the caller resets after use);
 *   0  taken, more pieces needed;
 *  -EALREADY  its bytes were all there already (DUPLICATE): ignored;
 *  -EMSGSIZE  batch_len > max_batch (TOO_LARGE), -EPROTO too scattered
 *      (TOO_SCATTERED), -ENOMEM (NO_MEMORY): not used, the assembly
 *      dropped, *why set;
 *  -EINVAL  arguments a decoded piece cannot have (len 0, off + len >
 *      batch_len, NULL bytes).
 * A piece of another batch (base or batch_len) than the running assembly's
 * starts a new one. */
int hw_piece_feed(hw_piece_asm *a, uint32_t max_batch, int64_t base, uint32_t batch_len, uint32_t off,
		  const uint8_t *p, uint32_t len, const uint8_t **out, hw_piece_drop *why);

/* Drop any assembly and free its memory. Idempotent. */
void hw_piece_reset(hw_piece_asm *a);

#endif
