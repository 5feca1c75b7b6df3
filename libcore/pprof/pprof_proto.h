/* SPDX-License-Identifier: MIT */
/*
 * What the profile.proto encoder (pprof_encode.c) and decoder
 * (pprof_decode.c) share: the wire types and field numbers of
 * profile.proto, and zlib's allocation hooks over the profile's allocator.
 * libpalloc-core only (libcore/pprof/Makemodule.am: LIBCORE_PPROF_CORE).
 */
#ifndef PALLOC_PPROF_PROTO_H
#define PALLOC_PPROF_PROTO_H

#include "pprof_int.h"

#include <zlib.h>

/* Wire types and field numbers of profile.proto. */
enum {
	WT_VARINT = 0,
	WT_I64 = 1,
	WT_LEN = 2,
	WT_I32 = 5,
};

enum {
	F_SAMPLE_TYPE = 1,
	F_SAMPLE = 2,
	F_MAPPING = 3,
	F_LOCATION = 4,
	F_FUNCTION = 5,
	F_STRING_TABLE = 6,
	F_DROP_FRAMES = 7,
	F_KEEP_FRAMES = 8,
	F_TIME_NANOS = 9,
	F_DURATION_NANOS = 10,
	F_PERIOD_TYPE = 11,
	F_PERIOD = 12,
	F_COMMENT = 13,
	F_DEFAULT_SAMPLE_TYPE = 14,
};

/*
 * zlib's zalloc and zfree with opaque a const struct pprof_allocator *:
 * z_alloc returns Z_NULL when items * size overflows or the allocator
 * fails; z_free ignores NULL. Thread-safe as the allocator is.
 */
static inline voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
	const struct pprof_allocator *a = opaque;

	if (size && items > SIZE_MAX / size)
		return Z_NULL;
	return a->alloc(a->ctx, (size_t)items * size);
}

static inline void z_free(voidpf opaque, voidpf ptr)
{
	const struct pprof_allocator *a = opaque;

	if (ptr)
		a->free(a->ctx, ptr);
}

#endif /* PALLOC_PPROF_PROTO_H */
