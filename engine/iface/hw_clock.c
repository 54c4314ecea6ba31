#include <time.h>
#include "hw_clock.h"

static int64_t mono_now_ns(hw_clock *c)
{
	(void)c;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static hw_clock mono = { .now_ns = mono_now_ns };

hw_clock *hw_clock_monotonic(void) { return &mono; }
