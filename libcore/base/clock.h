/* SPDX-License-Identifier: MIT */
/* The one monotonic clock in milliseconds, for deadlines and intervals. */
#ifndef PALLOC_CLOCK_H
#define PALLOC_CLOCK_H

#include "common.h"

#include <time.h>

/*
 * CLOCK_MONOTONIC in milliseconds (since an unspecified start: only
 * differences mean anything). Header-only, no state, async-signal-safe
 * (clock_gettime(2)), usable from any thread on either side.
 */
static inline int64_t clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* PALLOC_CLOCK_H */
