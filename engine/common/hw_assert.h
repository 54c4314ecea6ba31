/* hw_assert.h — invariant checks that stay on in release builds.
 *
 * HW_ASSERT is for invariants whose violation means replicated data may be
 * wrong (HW <= LEO, leader in ISR, epochs only grow): it logs the expression,
 * file and line, and aborts — in every build type. Do not use it to validate
 * input from the network or disk; decoders return errors instead.
 *
 * Reactor ownership (librdkafka's "which thread owns this"): objects owned by
 * one reactor carry its id; HW_ASSERT_OWNER(obj) checks the caller runs on it.
 */
#ifndef HW_ASSERT_H
#define HW_ASSERT_H
#include <stdio.h>
#include <stdlib.h>

#define HW_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HW_UNLIKELY(x) __builtin_expect(!!(x), 0)

__attribute__((noreturn, cold)) static inline void
hw_assert_fail(const char *expr, const char *file, int line, const char *func)
{
	fprintf(stderr, "hiwater: invariant violated: %s (%s:%d %s)\n", expr, file, line, func);
	fflush(stderr);
	abort();
}

#define HW_ASSERT(e) \
	(HW_LIKELY(e) ? (void)0 : hw_assert_fail(#e, __FILE__, __LINE__, __func__))

/* The reactor the calling thread runs (set by the reactor at start; -1 = none,
 * e.g. single-threaded tests, where every owner check passes). */
extern __thread int hw_current_reactor;
#define HW_ASSERT_OWNER(owner_reactor_id)                                      \
	HW_ASSERT(hw_current_reactor < 0 || (owner_reactor_id) < 0 ||          \
		  (owner_reactor_id) == hw_current_reactor)

#endif
