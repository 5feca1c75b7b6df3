/* SPDX-License-Identifier: MIT */
/* Internals shared by the pprof model (pprof.c), its codec (pprof_encode.c,
 * pprof_decode.c) and the agent's encoder (pprof_pack.c). */
#ifndef PALLOC_PPROF_INT_H
#define PALLOC_PPROF_INT_H

#include "pprof.h"

/*
 * Small immutable pieces (strings, a sample's ids and values, a location's
 * lines) live in bump chunks that are only freed with the profile: one
 * allocator call per 64 KiB instead of one per sample, which matters in the
 * agent's arena and for decoding files with millions of samples.
 */
struct pprof_chunk {
	struct pprof_chunk *next;
	size_t size;
};

/* Open-addressing hash slot: key hash and the value (0: empty). */
struct pprof_slot {
	uint64_t hash;
	uint64_t val;
};

struct pprof_table {
	struct pprof_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t count;
};

struct pprof_internal {
	struct pprof_allocator a;
	struct pprof_chunk *chunks;
	char *bump;
	size_t bump_left;
	/* interned strings: val is the char pointer */
	struct pprof_table strs;
	/* functions: val is the id; locations without lines: val is the id */
	struct pprof_table funcs, locs;
	size_t cap_sample_types, cap_samples, cap_mappings, cap_locations,
		cap_functions, cap_comments;
};

/* malloc and free, for a NULL allocator argument. */
extern const struct pprof_allocator pprof_int_default_allocator;

/* Allocation through the profile's hooks; NULL (with msg_set) on ENOMEM or
 * on a size overflow of n * size. */
void *pprof_int_alloc(const struct pprof_allocator *a, size_t n, size_t size);
void pprof_int_free(const struct pprof_allocator *a, void *ptr);

/* Bump storage owned by p, aligned to 8 bytes, freed by pprof_free(). */
void *pprof_int_bump(struct pprof_profile *p, size_t n, size_t size);

/* Grow *arr (n used, *cap allocated, elements of size) to hold n + 1. */
int pprof_int_grow(struct pprof_profile *p, void **arr, size_t *cap, size_t n,
		   size_t size);

/* Append a location without consulting the (mapping, address) dedup table,
 * but register it there when it is dedupable and the key is new. The
 * decoder uses it so that every location of a file keeps its own id. */
uint64_t pprof_int_append_location(struct pprof_profile *p, uint64_t mapping_id,
				   uint64_t address,
				   const struct pprof_line *lines,
				   size_t n_lines, bool is_folded);

/* Same for functions (no dedup lookup, registered when new). */
uint64_t pprof_int_append_function(struct pprof_profile *p, const char *name,
				   const char *system_name, const char *file,
				   int64_t start_line);

/* Intern a string of len bytes (may contain no NUL within len). */
const char *pprof_int_intern_len(struct pprof_profile *p, const char *s,
				 size_t len);

#endif /* PALLOC_PPROF_INT_H */
