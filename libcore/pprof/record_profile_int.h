/* SPDX-License-Identifier: MIT */
/* What record_check.c and record_profile.c share. Both sides. */
#ifndef PALLOC_RECORD_PROFILE_INT_H
#define PALLOC_RECORD_PROFILE_INT_H

#include "common.h"
#include "pprof_int.h"

/* A field of the image, read once: the agent's own image changes under
 * its reader. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* A, or the C library's allocator when A is NULL. Any thread. */
static inline const struct pprof_allocator *
alloc_or_default(const struct pprof_allocator *a)
{
	return a ? a : &pprof_int_default_allocator;
}

#endif /* PALLOC_RECORD_PROFILE_INT_H */
