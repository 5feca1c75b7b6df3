/* SPDX-License-Identifier: MIT */
/* Binary search of an array sorted by one member (address ranges). */
#ifndef PALLOC_SEARCH_H
#define PALLOC_SEARCH_H

#include "common.h"

/*
 * How many of the first n elements of arr, sorted by their member field
 * in ascending order, have field <= key: the index just after the last
 * such element, 0 when none (so arr[result - 1] is the range that may
 * hold an address key). O(log n), no call, no allocation: usable in the
 * agent and the commands. arr and key are evaluated more than once.
 */
#define SEARCH_AFTER(arr, n, field, key)                                       \
	__extension__({                                                        \
		size_t lo_ = 0, hi_ = (n);                                     \
		while (lo_ < hi_) {                                            \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                   \
			if ((arr)[mid_].field <= (key))                        \
				lo_ = mid_ + 1;                                \
			else                                                   \
				hi_ = mid_;                                    \
		}                                                              \
		lo_;                                                           \
	})

#endif /* PALLOC_SEARCH_H */
