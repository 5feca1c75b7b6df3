/* SPDX-License-Identifier: MIT */
/* The profile model: build, encode, decode and validate pprof profiles. */
#ifndef PALLOC_PPROF_H
#define PALLOC_PPROF_H

#include "common.h"

/*
 * A struct pprof_profile is palloc's in-memory form of pprof's profile.proto
 * (github.com/google/pprof proto/profile.proto, as Debian ships it in
 * golang-github-google-pprof-dev). It differs from the wire form in two
 * ways that make it easy to use:
 *
 *  - strings are C strings owned by the profile (interned, so equal strings
 *    share one pointer), never string-table indices; "" stands for unset;
 *  - ids are dense: mapping, function and location ids are their index + 1
 *    in their arrays, so p->locations[id - 1] is location id. The decoder
 *    renumbers whatever ids a file uses and rewrites every reference.
 *
 * Every array is owned by the profile and allocated through its allocator,
 * so the agent can build profiles in its private arena while commands use
 * malloc. A profile is not thread-safe; use one per thread or lock.
 *
 * Errors: functions returning int give 0 or -1, functions returning a
 * pointer give NULL, functions returning an id give 0; each records the
 * reason with msg_set() (ENOMEM from the allocator, or what was invalid).
 */

/* Allocator hooks, shaped like protobuf-c's ProtobufCAllocator. */
struct pprof_allocator {
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *ptr);
	void *ctx;
};

struct pprof_value_type {
	const char *type; /* e.g. "inuse_space" */
	const char *unit; /* e.g. "bytes" */
};

struct pprof_mapping {
	uint64_t id;	      /* index + 1 */
	uint64_t start;	      /* memory_start */
	uint64_t limit;	      /* memory_limit (exclusive) */
	uint64_t offset;      /* file_offset of start */
	const char *file;     /* path, or "[vdso]" and the like */
	const char *build_id; /* lower-case hex of the GNU build id, or "" */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct pprof_function {
	uint64_t id;		 /* index + 1 */
	const char *name;	 /* demangled */
	const char *system_name; /* as in the symbol table (mangled) */
	const char *file;
	int64_t start_line;
};

struct pprof_line {
	uint64_t function_id;
	int64_t line;
};

struct pprof_location {
	uint64_t id;	     /* index + 1 */
	uint64_t mapping_id; /* 0: none */
	uint64_t address;    /* absolute address in the profiled process */
	size_t n_lines;	     /* innermost inlined frame first, caller last */
	struct pprof_line *lines;
	bool is_folded;
};

struct pprof_label {
	const char *key;
	const char *str; /* "" when the label is numeric */
	int64_t num;
	const char *num_unit; /* "" when none */
};

struct pprof_sample {
	size_t n_locations;
	uint64_t *location_ids; /* leaf first */
	int64_t *values;	/* p->n_sample_types of them */
	size_t n_labels;
	struct pprof_label *labels;
};

struct pprof_profile {
	size_t n_sample_types;
	struct pprof_value_type *sample_types;
	size_t n_samples;
	struct pprof_sample *samples;
	size_t n_mappings;
	struct pprof_mapping *mappings; /* mappings[0]: the main executable */
	size_t n_locations;
	struct pprof_location *locations;
	size_t n_functions;
	struct pprof_function *functions;
	size_t n_comments;
	const char **comments;
	const char *drop_frames, *keep_frames;
	int64_t time_nanos, duration_nanos;
	struct pprof_value_type period_type;
	int64_t period;
	const char *default_sample_type; /* "" = unset (pprof: the last type) */
	struct pprof_internal *internal; /* allocator, string and id tables */
};

/* A new empty profile. alloc NULL means malloc/free. NULL on ENOMEM. */
struct pprof_profile *pprof_new(const struct pprof_allocator *alloc);

/* Free the profile and everything it owns. NULL is allowed. */
void pprof_free(struct pprof_profile *p);

/* Copy s into the profile's string storage (deduplicated) and return the
 * owned copy, valid until pprof_free(). NULL s gives "". NULL on ENOMEM. */
const char *pprof_intern(struct pprof_profile *p, const char *s);

/* Set the sample types (strings are interned). Only before any sample is
 * added. Returns 0 or -1. */
int pprof_set_sample_types(struct pprof_profile *p,
			   const struct pprof_value_type *types, size_t n);

/* Set period_type and period, and default_sample_type (NULL: unset). */
int pprof_set_period(struct pprof_profile *p, const char *type,
		     const char *unit, int64_t period);
int pprof_set_default_sample_type(struct pprof_profile *p, const char *type);

/* Append a comment (interned). Returns 0 or -1. */
int pprof_add_comment(struct pprof_profile *p, const char *comment);

/* Append a mapping (its id field is ignored; strings are interned).
 * Returns the new id, or 0. */
uint64_t pprof_add_mapping(struct pprof_profile *p,
			   const struct pprof_mapping *m);

/*
 * The mapping of a region of memory [start, limit) at offset in file (no
 * build id, no symbol flags), added at its first use: *id is the region's
 * mapping id in p, 0 until then, and is set here. For the callbacks that
 * give an address no module covers a mapping from /proc/PID/maps (the
 * agent's and palloc-run's). Returns *id, or 0 when the mapping cannot be
 * added (then *id stays 0). No allocation but p's own; one profile per
 * *id: a caller moving to another profile clears its ids first.
 */
uint64_t pprof_region_mapping(struct pprof_profile *p, uint64_t *id,
			      uint64_t start, uint64_t limit, uint64_t offset,
			      const char *file);

/* The function with these strings and start line, added if new (dedup on
 * all four). Returns its id, or 0. */
uint64_t pprof_add_function(struct pprof_profile *p, const char *name,
			    const char *system_name, const char *file,
			    int64_t start_line);

/* A location. With n_lines == 0 and address != 0 it is deduplicated on
 * (mapping_id, address); otherwise always new. lines are copied.
 * Returns its id, or 0 (bad mapping or function id, ENOMEM). */
uint64_t pprof_add_location(struct pprof_profile *p, uint64_t mapping_id,
			    uint64_t address, const struct pprof_line *lines,
			    size_t n_lines);

/* Replace location id's lines (used by symbolization). Returns 0 or -1. */
int pprof_set_location_lines(struct pprof_profile *p, uint64_t id,
			     const struct pprof_line *lines, size_t n_lines);

/* Append a sample: n location ids leaf first, p->n_sample_types values,
 * labels (strings interned). Not merged with equal stacks. Returns 0/-1. */
int pprof_add_sample(struct pprof_profile *p, const uint64_t *location_ids,
		     size_t n, const int64_t *values,
		     const struct pprof_label *labels, size_t n_labels);

/* Index of the sample type named type, or -1 (no msg_set). */
int pprof_sample_type_index(const struct pprof_profile *p, const char *type);

/*
 * The codec (protobuf-c and zlib; pprof_encode.c, pprof_decode.c):
 * pprof_encode,
 * pprof_free_buffer, pprof_write_fd and pprof_decode are in
 * libpalloc-core only; the agent encodes with pprof_pack.h.
 *
 * Encode to profile.proto, gzipped when gzip is true, into a buffer from
 * the profile's allocator (*buf, *len; the caller frees it with
 * pprof_free_buffer). Returns 0 or -1.
 */
int pprof_encode(const struct pprof_profile *p, bool gzip, void **buf,
		 size_t *len);
void pprof_free_buffer(const struct pprof_profile *p, void *buf);

/* Encode gzipped and write all of it to fd (no temporary file: callers
 * that need atomicity write to a temporary name and rename). 0 or -1. */
int pprof_write_fd(const struct pprof_profile *p, int fd);

/*
 * The largest profile decoded, in bytes uncompressed (files are refused
 * beyond it too, compressed or not, before they are read). The agent's
 * profiles stay well below: at most 65536 stacks (its stack table's cap)
 * of at most 256 frames (PALLOC_MAX_DEPTH's limit) give at most 16.8 M
 * locations of about 18 bytes (302 MB) and 65536 samples of about 1.2 KiB
 * (location ids, values, labels: 80 MB); symbolized, each location gains
 * a line of about 14 bytes (235 MB): about 620 MB in all. palloc(7)
 * SECURITY documents this limit.
 */
#define PPROF_MAX_SIZE ((size_t)1 << 30)

/*
 * Decode a profile, gzipped (detected by its magic bytes) or plain. The
 * input is untrusted: every index and reference is checked (string indices,
 * mapping/function/location ids, value counts), the inflated size is capped
 * at max_size bytes (0: PPROF_MAX_SIZE) and counted before it is kept (a
 * gzip bomb is refused holding 64 KiB of output), and a bad file gives
 * NULL with msg_set() naming what is wrong, never a crash. alloc NULL
 * means malloc.
 */
struct pprof_profile *pprof_decode(const void *buf, size_t len, size_t max_size,
				   const struct pprof_allocator *alloc);

/*
 * p1 minus p0, as net/http/pprof serves /debug/pprof/heap?seconds=N (p0
 * scaled by -1, merged with p1): samples matched on their stacks of
 * addresses and on their labels except the *_stddev ones (which have no
 * meaning in a difference and are left out), samples whose values are all
 * 0 dropped, time_nanos from p1 and duration p1 - p0. The result comes
 * from alloc (NULL: malloc); its scratch memory from malloc. NULL with
 * msg_set() on ENOMEM or when the sample types differ.
 */
struct pprof_profile *pprof_delta(const struct pprof_allocator *alloc,
				  const struct pprof_profile *p0,
				  const struct pprof_profile *p1);

/*
 * The commands' one way to read a profile (tools/pprof_file.c; commands
 * only). The file is read and inflated in 64 KiB pieces, and its
 * top-level fields are checked as they arrive (a field key of
 * profile.proto's Profile with its wire type, a length within the
 * limit): bytes that stop being a profile (a gzip bomb of zeros, a sparse
 * file) are refused at once, holding at most a few pieces. A stream that
 * passes the limit, uncompressed, is refused as soon as it does (a
 * regular file larger than the limit, unread). Memory: the profile's
 * uncompressed bytes (grown by doubling) and then its decoded form, plus
 * 64 KiB of input and zlib's 44 KiB.
 *
 * The limit: PPROF_READ_MAX, or the environment's PALLOC_PROFILE_MAX in
 * bytes (suffixes K, M, G as num_parse_u64(); 0 or a bad value: the
 * default) for the rare larger profile. palloc(7) SECURITY documents it.
 */
#define PPROF_READ_MAX ((size_t)256 << 20)

/* The limit in force: PALLOC_PROFILE_MAX or PPROF_READ_MAX. */
size_t pprof_read_limit(void);

/*
 * Read fd to its end (a pipe too) and decode it, at most max bytes
 * uncompressed (0: pprof_read_limit()). NULL with msg_set() saying why,
 * without a name: "larger than the limit of N bytes uncompressed
 * (PALLOC_PROFILE_MAX)", "not a profile: ...". fd is not closed.
 */
struct pprof_profile *pprof_read_fd(int fd, size_t max);

/*
 * Read and decode a file with pprof_read_fd(): "-" is stdin, "/dev/fd/N"
 * an open descriptor (both may be pipes); any other path must be a
 * regular file (infile.h: a FIFO or a device is refused, never opened).
 * NULL with msg_set() on error, naming the path: "cannot read profile
 * 'PATH': not a regular file (a FIFO)".
 */
struct pprof_profile *pprof_read_file(const char *path);

/* Write gzipped to path with outfile.h's rules (an exclusive temporary
 * renamed into place; never through a symlink, into a FIFO, a socket or a
 * device; "-": stdout). 0, or -1 with msg_set() "cannot write 'PATH': why"
 * (the path named once). */
int pprof_write_file(const struct pprof_profile *p, const char *path);

#endif /* PALLOC_PPROF_H */
