/* hw_wire_tags.h — internal to engine/proto: the optional tagged section at
 * the end of the PRODUCE, PRODUCE_RESP, FETCH and FETCH_RESP bodies
 * (docs/wire.md "Tagged fields"; the idea is Kafka's tagged fields, KIP-482).
 *
 *   tagged section = u8 n (1..255), n x { u8 tag, u16 len, len bytes }
 *
 * Absent (no bytes at all) when the message sets no tag; n = 0 is not
 * canonical and is a drop. Tags are strictly ascending. A tag the decoder
 * does not know is skipped and counted in hw_msg.n_unknown_tags (so a newer
 * sender's fields do not make an older receiver drop the frame); a known
 * tag's value must be consumed exactly (else TRAILING), its own checks use
 * the usual drop reasons.
 *
 * Adding a tag: a field in the message struct (engine/iface/hw_msg.h), one
 * `if` in the type's enc_* function and one `case` in its dec_* function of
 * hw_wire_tags.c, a row in docs/wire.md's table, a fuzz seed and a roundtrip
 * test. Tag numbers are stable; never reuse one.
 */
#ifndef HW_WIRE_TAGS_H
#define HW_WIRE_TAGS_H
#include "hw_wire_io.h"

/* The whole tagged section of one message is at most this many bytes: it is
 * built in a scratch buffer first, so a split FETCH_RESP can reserve room for
 * it in every frame. */
#define HW_WIRE_TAGS_MAX 4096u

/* Encode the tagged section of m (nothing if m sets no tag) into w.
 * Errors latch in w->err: -EMSGSIZE if the section exceeds HW_WIRE_TAGS_MAX
 * or the frame, -EINVAL for a field value a tag cannot carry. */
void hw_wire_enc_tags(hw_wr *w, const hw_msg *m);

/* Bytes hw_wire_enc_tags would write for m (0: no tagged section), or
 * -EMSGSIZE / -EINVAL as above. */
int hw_wire_tags_len(const hw_msg *m);

/* Decode the tagged section, if any bytes remain in r, into m. Failures
 * latch in r (BAD_FIELD for n = 0 or tags out of order, TRUNCATED, TRAILING
 * for a known tag's value not consumed exactly). */
void hw_wire_dec_tags(hw_rd *r, hw_msg *m);

#endif
