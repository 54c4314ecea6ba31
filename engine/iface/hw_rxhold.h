/* hw_rxhold.h — keeping a received buffer past the delivery of its message.
 *
 * Design note. A transport decodes a frame into an hw_msg whose byte fields
 * (a fetch response's records) point into its receive buffer, calls the
 * engine, and reuses the buffer when the call returns. A follower that
 * appends those records to its log would have to copy them. Instead the
 * transport can announce the buffer for the duration of the delivery
 * (hw_rxhold_enter / hw_rxhold_leave around its on_msg call) in a delivery
 * context, an hw_rxhold_ctx that whoever wires the two together gives to
 * both in their configs (hw_dpdk_cfg.rxhold, hw_rm_config.rxhold: one per
 * reactor, used by that reactor's thread alone); a consumer that wants to
 * keep bytes asks that context for a hold on the buffer that contains them
 * (hw_rxhold_take) and releases it later, from any thread. A hold is
 * granted only when the bytes lie inside the buffer being delivered through
 * this context right now — so a message that was copied, forwarded to
 * another reactor or built by a test never yields a hold on something else
 * — and only while the transport's budget allows (its receive pool must not
 * run dry because logs keep buffers).
 *
 * Transports without such buffers (kernel UDP, the simulated network)
 * never call enter: every take returns NULL and the consumer copies; so
 * does a consumer given no context (NULL).
 */
#ifndef HW_RXHOLD_H
#define HW_RXHOLD_H
#include <stddef.h>

/* Below this many bytes a consumer copies rather than holds: the copy costs
 * well under a microsecond, while a hold pins a whole receive buffer (a
 * 64 KiB memif mbuf) for as long as the log keeps the bytes. */
#define HW_RXHOLD_MIN_BYTES 16384

typedef struct hw_rxhold_buf {
	const void *base;            /* the received bytes: [base, base + len) */
	size_t len;
	void *ref;                   /* transport's handle (DPDK: the mbuf) */
	/* Take one more hold on ref: 0, or -ENOBUFS (budget spent: copy). */
	int (*hold)(void *ref);
	/* Drop one hold; callable from any thread. Never fails. */
	void (*release)(void *ref);
} hw_rxhold_buf;

/* The delivery context shared by a transport and its consumer. Zero it to
 * start (nothing delivered). */
typedef struct hw_rxhold_ctx {
	const hw_rxhold_buf *cur;    /* the buffer being delivered, NULL between */
} hw_rxhold_ctx;

/* The transport: b (which must stay valid) is being delivered through c
 * until hw_rxhold_leave(c). Nesting is not supported. c NULL: no-op. Never
 * fails. */
void hw_rxhold_enter(hw_rxhold_ctx *c, const hw_rxhold_buf *b);
void hw_rxhold_leave(hw_rxhold_ctx *c);

/* A hold on the buffer being delivered through c if [p, p + n) lies inside
 * it and its transport grants one: returns the ref and sets *release (call
 * it once with the ref). NULL when c is NULL, nothing is being delivered,
 * the bytes lie elsewhere or the budget is spent (copy the bytes instead). */
void *hw_rxhold_take(hw_rxhold_ctx *c, const void *p, size_t n, void (**release)(void *ref));

#endif
