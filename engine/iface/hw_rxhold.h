/* hw_rxhold.h — keeping a received buffer past the delivery of its message.
 *
 * Design note. A transport decodes a frame into an hw_msg whose byte fields
 * (a fetch response's records) point into its receive buffer, calls the
 * engine, and reuses the buffer when the call returns. A follower that
 * appends those records to its log would have to copy them. Instead the
 * transport can announce the buffer for the duration of the delivery
 * (hw_rxhold_enter / hw_rxhold_leave around its on_msg call, on the same
 * thread); a consumer that wants to keep bytes asks for a hold on the
 * buffer that contains them (hw_rxhold_take) and releases it later, from
 * any thread. A hold is granted only when the bytes lie inside the buffer
 * being delivered on this very thread right now — so a message that was
 * copied, forwarded to another reactor or built by a test never yields a
 * hold on something else — and only while the transport's budget allows
 * (its receive pool must not run dry because logs keep buffers).
 *
 * Transports without such buffers (kernel UDP, the simulated network)
 * never call enter: every take returns NULL and the consumer copies.
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

/* The transport: b (which must stay valid) is being delivered on this
 * thread until hw_rxhold_leave. Nesting is not supported. Never fails. */
void hw_rxhold_enter(const hw_rxhold_buf *b);
void hw_rxhold_leave(void);

/* A hold on the buffer being delivered on this thread if [p, p + n) lies
 * inside it and its transport grants one: returns the ref and sets
 * *release (call it once with the ref). NULL when there is no such buffer
 * or the budget is spent (copy the bytes instead). */
void *hw_rxhold_take(const void *p, size_t n, void (**release)(void *ref));

#endif
