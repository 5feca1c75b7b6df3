/* SPDX-License-Identifier: MIT */
/* Shared by the profile unit tests: an allocator that counts, a deep compare.
 */
#ifndef PALLOC_PPROF_TEST_H
#define PALLOC_PPROF_TEST_H

#include "pprof.h"

#include <stdio.h>

/* pprof's and Go's heap sample types, in their order. */
static const struct pprof_value_type types[4] = {
	{"alloc_objects", "count"},
	{"alloc_space", "bytes"},
	{"inuse_objects", "count"},
	{"inuse_space", "bytes"},
};

/* An allocator that counts, and fails the Nth call when asked to. */
struct counting {
	size_t allocs, frees, fail_at;
};

static inline void *counting_alloc(void *ctx, size_t size)
{
	struct counting *c = ctx;

	if (c->fail_at && c->allocs + 1 == c->fail_at) {
		c->fail_at = 0;
		return NULL;
	}
	c->allocs++;
	return malloc(size);
}

static inline void counting_free(void *ctx, void *ptr)
{
	struct counting *c = ctx;

	c->frees++;
	free(ptr);
}

/* NULL and "" are the same (both mean unset). */
static inline bool same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static inline bool same_value_type(const struct pprof_value_type *a,
				   const struct pprof_value_type *b)
{
	return same_str(a->type, b->type) && same_str(a->unit, b->unit);
}

static inline bool same_sample(size_t n_values, const struct pprof_sample *x,
			       const struct pprof_sample *y)
{
	size_t j;

	if (x->n_locations != y->n_locations || x->n_labels != y->n_labels ||
	    (x->n_locations && memcmp(x->location_ids, y->location_ids,
				      x->n_locations * sizeof(uint64_t))) ||
	    (n_values &&
	     memcmp(x->values, y->values, n_values * sizeof(int64_t))))
		return false;
	for (j = 0; j < x->n_labels; j++)
		if (!same_str(x->labels[j].key, y->labels[j].key) ||
		    !same_str(x->labels[j].str, y->labels[j].str) ||
		    x->labels[j].num != y->labels[j].num ||
		    !same_str(x->labels[j].num_unit, y->labels[j].num_unit))
			return false;
	return true;
}

static inline bool same_mapping(const struct pprof_mapping *x,
				const struct pprof_mapping *y)
{
	return x->id == y->id && x->start == y->start && x->limit == y->limit &&
	       x->offset == y->offset && same_str(x->file, y->file) &&
	       same_str(x->build_id, y->build_id) &&
	       x->has_functions == y->has_functions &&
	       x->has_filenames == y->has_filenames &&
	       x->has_line_numbers == y->has_line_numbers &&
	       x->has_inline_frames == y->has_inline_frames;
}

static inline bool same_location(const struct pprof_location *x,
				 const struct pprof_location *y)
{
	return x->id == y->id && x->mapping_id == y->mapping_id &&
	       x->address == y->address && x->is_folded == y->is_folded &&
	       x->n_lines == y->n_lines &&
	       (!x->n_lines ||
		!memcmp(x->lines, y->lines, x->n_lines * sizeof(*x->lines)));
}

static inline bool same_function(const struct pprof_function *x,
				 const struct pprof_function *y)
{
	return x->id == y->id && same_str(x->name, y->name) &&
	       same_str(x->system_name, y->system_name) &&
	       same_str(x->file, y->file) && x->start_line == y->start_line;
}

static inline bool same_comment(const char *const *x, const char *const *y)
{
	return same_str(*x, *y);
}

/* In same_profile: what = "N" when a's and b's arrays ARR differ in their
 * length N, else NAME at the first element SAME says differs. */
#define SAME_ARRAY(n, arr, same, name)                                         \
	do {                                                                   \
		if (!what && a->n != b->n)                                     \
			what = #n;                                             \
		for (size_t k_ = 0; !what && k_ < a->n; k_++)                  \
			if (!same(&a->arr[k_], &b->arr[k_]))                   \
				what = name;                                   \
	} while (0)

/* Every field of a and b; prints the first difference as a TAP comment. */
static inline bool same_profile(const struct pprof_profile *a,
				const struct pprof_profile *b)
{
	const char *what = NULL;

	SAME_ARRAY(n_sample_types, sample_types, same_value_type,
		   "sample type");
	if (!what && a->n_samples != b->n_samples)
		what = "n_samples";
	for (size_t i = 0; !what && i < a->n_samples; i++)
		if (!same_sample(a->n_sample_types, &a->samples[i],
				 &b->samples[i]))
			what = "sample";
	SAME_ARRAY(n_mappings, mappings, same_mapping, "mapping");
	SAME_ARRAY(n_locations, locations, same_location, "location");
	SAME_ARRAY(n_functions, functions, same_function, "function");
	SAME_ARRAY(n_comments, comments, same_comment, "comment");
	if (!what &&
	    (a->period != b->period || a->time_nanos != b->time_nanos ||
	     a->duration_nanos != b->duration_nanos ||
	     !same_value_type(&a->period_type, &b->period_type) ||
	     !same_str(a->default_sample_type, b->default_sample_type) ||
	     !same_str(a->drop_frames, b->drop_frames) ||
	     !same_str(a->keep_frames, b->keep_frames)))
		what = "header";
	if (what)
		printf("# profiles differ: %s\n", what);
	return !what;
}

#endif /* PALLOC_PPROF_TEST_H */
