/* SPDX-License-Identifier: MIT */
/* The commands' growing arrays. */
#ifndef PALLOC_GROW_H
#define PALLOC_GROW_H

#include "common.h"

/*
 * An array the caller keeps as a pointer, a count and a capacity (both in
 * elements), e.g. `struct item *v; size_t n, cap;`, grown by doubling
 * (from 16 elements) with realloc(3). In libpalloc-core only (the agent's
 * arrays are in its arena). Not thread-safe: the caller's array is its
 * own. No message is set: the caller says what could not be held.
 */

/*
 * Room for need elements of size bytes in *(void **)arrp (capacity *cap):
 * reallocated when need > *cap. Returns 0, or -1 with errno ENOMEM (also
 * when the size would overflow), *arrp and *cap unchanged.
 */
int grow_array(void *arrp, size_t *cap, size_t need, size_t size);

/*
 * Append one element to the array *(void **)arrp of *n elements: room
 * made (grow_array), the element zeroed and counted. Returns it, or NULL
 * with errno ENOMEM (the array unchanged).
 */
void *grow_push(void *arrp, size_t *n, size_t *cap, size_t size);

#endif /* PALLOC_GROW_H */
