/* SPDX-License-Identifier: MIT */
/* Empty profiles of Go's heap shape, for the unit tests that build them. */
#ifndef PALLOC_UNIT_HEAP_H
#define PALLOC_UNIT_HEAP_H

#include <stdlib.h>

#include "pprof.h"

/*
 * A new profile without samples, with Go's heap sample types
 * (alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes) and a period of PERIOD space/bytes. The caller owns it
 * (pprof_free). Exits 99, a hard error to the TAP driver, when it cannot be
 * made.
 */
static inline struct pprof_profile *heap_profile(int64_t period)
{
	static const struct pprof_value_type t[] = {
		{"alloc_objects", "count"},
		{"alloc_space", "bytes"},
		{"inuse_objects", "count"},
		{"inuse_space", "bytes"},
	};
	struct pprof_profile *p = pprof_new(NULL);

	if (!p || pprof_set_sample_types(p, t, 4) < 0 ||
	    pprof_set_period(p, "space", "bytes", period) < 0)
		exit(99);
	return p;
}

#endif /* PALLOC_UNIT_HEAP_H */
