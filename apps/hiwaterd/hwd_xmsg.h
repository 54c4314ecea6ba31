/* hwd_xmsg.h — what one reactor hands another over the mailbox
 * (hwd_shard.h "Hand-offs").
 *
 * A message crosses reactors decoded: hwd_xmsg_copy puts the hw_msg and
 * everything it points to (part arrays, record bytes, preferred replicas)
 * into ONE allocation, so the receiving reactor handles `m` as the sender
 * had it, with no wire encoding in between. Record bytes held by reference
 * (a fetch response part's records_ref: the log's refcounted chunks, whose
 * holds are safe from any thread) are not copied: the copy takes one more
 * hold per part, released by hwd_xmsg_free. Admin messages (bodies in
 * hw_msg.u.other, engine/proto/hw_admin_msg.h; they reach a data reactor
 * only when a peer sends control-plane messages to a data endpoint) travel
 * as a local wire frame in the same allocation (`framed`): the codec is the
 * one deep copy of those bodies.
 *
 * Memory: every hand-off is one malloc'd block, posted into a mailbox slot
 * (bounded: slots per ordered pair of reactors, hw_mailbox.h); a post that
 * finds no slot or no memory is a counted drop (FORWARD_LOST).
 */
#ifndef HWD_XMSG_H
#define HWD_XMSG_H
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include "hw_msg.h"
#include "hw_wire.h"
#include "hwd.h"

/* Cross-reactor message kinds. X(NAME) */
#define HWD_XMSG_TABLE(X)                                                    \
	X(MSG)           /* a message for the owner to handle */              \
	X(BROKER_EPOCH)  /* hw_rm_set_broker_epoch(value) */                  \
	X(ROUTE)         /* data route: node -> endpoint */                   \
	X(SEND)          /* DPDK: a message for reactor 0 to send on its queue */ \
	X(RACK)          /* hw_rm_set_broker_rack(node, ep) (docs/racks.md) */
typedef enum hwd_xmsg_kind {
#define HWD_XK_ENUM(n) HWD_XMSG_##n,
	HWD_XMSG_TABLE(HWD_XK_ENUM)
#undef HWD_XK_ENUM
	HWD_XMSG_KIND_COUNT
} hwd_xmsg_kind;
const char *hwd_xmsg_kind_name(int k); /* never NULL */

typedef struct hwd_xmsg {
	uint16_t kind;
	uint8_t has_from;
	uint8_t framed;                 /* MSG/SEND: body[] is a local wire frame of len bytes */
	struct sockaddr_in from;        /* MSG: where the sender is (the owner learns it) */
	int32_t node;                   /* ROUTE, RACK */
	int64_t value;                  /* BROKER_EPOCH */
	char ep[HWD_EP_MAX];            /* ROUTE, RACK */
	hw_msg m;                       /* MSG/SEND (not framed): pointers into body[] or held refs */
	uint32_t len;                   /* framed: bytes in body[] */
	max_align_t body[];
} hwd_xmsg;

/* A typed message (BROKER_EPOCH, ROUTE, RACK) with no body: zeroed, `kind`
 * set. NULL on -ENOMEM. */
hwd_xmsg *hwd_xmsg_new(int kind);
/* m copied for another reactor as `kind` (MSG or SEND), decoded; admin
 * messages framed with `tx`. NULL and *err: -ENOMEM, or the encoder's
 * -EMSGSIZE / -EINVAL for an admin message it cannot frame. */
hwd_xmsg *hwd_xmsg_copy(const hw_msg *m, int kind, hw_wire_tx *tx, int *err);
/* The message of x: x->m, or a framed one decoded into `arena` (reset
 * here) as *out. 0, or -EBADMSG (*why set) for a frame that does not
 * decode. */
int hwd_xmsg_msg(hwd_xmsg *x, uint32_t cluster_id, hw_wire_arena *arena, hw_msg *out, hw_wire_drop *why);
/* Release x's record holds and free it. NULL: nothing. */
void hwd_xmsg_free(hwd_xmsg *x);

#endif
