/* hw_assert.h — invariant checks that stay on in release builds.
 *
 * HW_ASSERT is for invariants whose violation means replicated data may be
 * wrong (HW <= LEO, leader in ISR, epochs only grow): it logs the expression,
 * file and line, and aborts — in every build type. Do not use it to validate
 * input from the network or disk; decoders return errors instead.
 *
 * Reactor ownership (librdkafka's "which thread owns this"): objects owned by
 * one reactor (replica manager, partition log, transport instance) carry its
 * id, given at creation; HW_ASSERT_OWNER(owner) at each of their entry
 * points checks that the calling thread is not another reactor
 * (lib/reactor/hw_owner.h). Also on in release builds: one thread-local load
 * and a compare.
 */
#ifndef HW_ASSERT_H
#define HW_ASSERT_H
#include <stdio.h>
#include <stdlib.h>
#include "hw_owner.h"

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

__attribute__((noreturn, cold)) static inline void
hw_owner_fail(int owner, const char *file, int line, const char *func)
{
	fprintf(stderr, "hiwater: invariant violated: %s called on reactor %d, owner is reactor %d "
		"(HW_ASSERT_OWNER, %s:%d)\n", func, hw_reactor_current_id, owner, file, line);
	fflush(stderr);
	abort();
}

/* The caller runs on the reactor `owner` (an int; HW_OWNER_ANY: any
 * thread), or on a thread that runs no reactor (start-up, shutdown,
 * single-threaded tests). Aborts naming the function otherwise. */
#define HW_ASSERT_OWNER(owner)                                                   \
	do {                                                                     \
		int hw_owner_ = (owner), hw_cur_ = hw_reactor_current_id;        \
		if (HW_UNLIKELY(hw_cur_ != hw_owner_ && hw_cur_ >= 0 && hw_owner_ >= 0)) \
			hw_owner_fail(hw_owner_, __FILE__, __LINE__, __func__);  \
	} while (0)

#endif
