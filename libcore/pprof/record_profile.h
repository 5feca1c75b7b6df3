/* SPDX-License-Identifier: MIT */
/* The reader of the record (wire/record.h): check a copy, make its profile. */
#ifndef PALLOC_RECORD_PROFILE_H
#define PALLOC_RECORD_PROFILE_H

#include "common.h"
#include "pprof.h"
#include "wire/record.h"

/*
 * Both sides. The commands call it on a copy of another process's record
 * (tools/record_read.h finds and copies it), the agent on its own record
 * at exit; either way the record is untrusted (record.h, "Trust"). Nothing
 * here calls malloc (memory comes from the struct pprof_allocator given;
 * NULL means malloc, for the commands), stdio, qsort or a lock; text goes
 * through fmt. Errors: -1 or NULL after msg_set() with one line saying
 * what is wrong ("record: ..."). Thread-safe on distinct views; a view
 * may be read by several threads at once.
 *
 * A view must not be used once its image is freed or changed in ways a
 * record never changes (record_check() copied out of the image every
 * offset, count and depth it relies on, so an image that changes under
 * it, such as the agent's own mapped record, can change values only: a
 * profile of such an image is a profile of some mix of its states, never
 * a read outside it).
 */

/* A thread slot as checked: its table's records (NULL, cap 0: none; a
 * free slot's table is checked, then left out: cap 0). */
struct record_view_thread {
	const struct record_thread *t;
	const struct record_rec *recs;
	uint32_t recs_cap;
	bool live; /* state was RECORD_THREAD_LIVE when checked */
};

/* A stack as checked: the entry's body and the depth checked. */
struct record_view_stack {
	const struct record_stack *s;
	uint32_t depth;
};

struct record_view {
	const unsigned char *img;
	size_t len;
	const struct record_header *h;
	struct record_view_stack *stacks; /* stacks[id - 1] */
	size_t n_stacks;
	const struct record_module **modules; /* in the file's order */
	size_t n_modules;
	struct record_view_thread *threads; /* in the file's order */
	size_t n_threads;
	const char *text; /* the allocator's text (not NUL-terminated) */
	size_t text_len;  /* 0: none */
	bool text_torn;	  /* allocator.seq was odd: figures mid-change */
	struct pprof_allocator a;
};

/*
 * Check the record img[0, len) and index it into *v (arrays from a; NULL
 * means malloc): magic, version, header_size, size <= len, every entry's
 * type, size and alignment within size, each STACK's id (the n-th is n)
 * and depth (<= RECORD_MAX_DEPTH, pcs within the entry), at most
 * RECORD_MAX_STACKS stacks, each MODULE's build id and path NUL-terminated
 * within the entry, each THREAD's state and its RECS offset and capacity
 * (the body of a RECS entry, recs_cap records within it, no two live
 * slots sharing one), the
 * allocator's text (within a TEXT entry, at most RECORD_TEXT_MAX) and the
 * header's strings (NUL-terminated within their fields). img must be
 * 8-byte aligned (a malloc'd or mapped copy). Returns 0, or -1 with
 * msg_set() ("record: entry at 16400: size 8 not a multiple of 16"), *v
 * then empty. Never reads outside [img, img + len).
 */
int record_check(const void *img, size_t len, const struct pprof_allocator *a,
		 struct record_view *v);

/* Free what record_check() allocated (not the image). NULL-safe. */
void record_view_free(struct record_view *v);

/*
 * For addresses no MODULE covers (JIT code, code unmapped since): the
 * mapping id in p to give addr, from a callback the commands pass
 * (reading /proc/PID/maps of a live process), or 0 to let the reader
 * give it the "[unmapped]" mapping (one, grown to cover every such page,
 * as the agent does). A callback that fails returns 0 too.
 */
typedef uint64_t (*record_unmapped_fn)(void *ctx, struct pprof_profile *p,
				       uint64_t addr);

struct record_profile_opts {
	const char *default_sample_type; /* NULL: "inuse_space" */
	int64_t time_nanos;		 /* the profile's time_nanos */
	int64_t duration_nanos;
	/* The process title now (the commands: /proc/PID/cmdline of a live
	 * process); NULL: header.title, the title at exit. Commented when it
	 * differs from the command line. */
	const char *title;
	/* Who owns the memory malloc did not give, for the warning of
	 * "memory at exit" (unseen.h): "the Go runtime" and what to do; ""
	 * when the agent recognised none (the warning then says "mapped by
	 * other means"); NULL when not known (the agent knows, a reader from
	 * outside does not). */
	const char *unseen_owner, *unseen_hint;
	record_unmapped_fn unmapped; /* NULL: "[unmapped]" */
	void *unmapped_ctx;
	/* An earlier copy of the same record (same pid, start time and
	 * start ticks; else ignored), taken when a later attach began
	 * (palloc-run -p): each stack's values and the counters less the
	 * base's, peak = inuse, variances less the base's (never below 0),
	 * and a comment naming the window, which starts at
	 * window_start_unix_ns (CLOCK_REALTIME). NULL: the whole record. */
	const struct record_view *base;
	int64_t window_start_unix_ns;
};

/*
 * The profile the agent's encoder writes (agent/encode.c), from a view:
 * sample types alloc_objects, alloc_space, inuse_objects, inuse_space,
 * and peak_inuse_objects, peak_inuse_space with RECORD_F_PEAK; period
 * "space"/"bytes" = rate; a mapping per loaded module (the first MODULE
 * first), unloaded ones when a frame is in them; a sample per stack with
 * any value non-zero: the stack's own values plus every live thread's
 * records for it, rounded (never negative), inuse clamped to alloc,
 * peak_* = inuse_* when last_ev <= header.peak_ev, else peak_*; labels
 * "thread" and, at a rate above 1, TYPE_stddev; the agent's comments.
 * From a (NULL: malloc). NULL with msg_set() on ENOMEM.
 */
struct pprof_profile *record_profile(const struct record_view *v,
				     const struct record_profile_opts *o,
				     const struct pprof_allocator *a);

/* Figures of a record without a profile: palloc-dump --stats,
 * palloc-mallinfo, listings. */
struct record_stats {
	int32_t pid, parent_pid;
	uint32_t uid, flags;	/* enum record_flag */
	uint32_t state;		/* enum record_state */
	int32_t exit_status;	/* when state is RECORD_EXITED */
	int64_t start_unix_ns;	/* CLOCK_REALTIME */
	int64_t end_unix_ns;	/* 0 while running */
	int64_t update_unix_ns; /* last slow path */
	uint64_t start_ticks;	/* /proc/PID/stat starttime */
	const char *exe;	/* in the image, NUL-terminated */
	const char *cmdline;	/* idem */
	const char *title;	/* idem; "" while running */
	uint64_t rate, seed;
	uint32_t max_depth, unwind, max_stacks;
	/* counters: the exited threads' and every live one's */
	uint64_t alloc_count, free_count, alloc_bytes, samples, reentries;
	uint64_t alloc_at_init, dropped;
	int64_t dropped_bytes;
	size_t n_stacks, n_modules, live_threads;
	/* the samples' totals, as record_profile() adds them (rounded) */
	int64_t alloc_objects_sampled, alloc_bytes_sampled;
	int64_t inuse_objects_sampled, inuse_bytes_sampled;
	/* the highest total inuse estimate (header's max_inuse_bytes, or
	 * pt_max_bytes with weights per thread) */
	int64_t max_inuse_bytes;
	int64_t exact_inuse, exact_peak; /* RECORD_F_EXACT, else -1 */
	/* at exit (unseen.h), -1 when not measured */
	int64_t anon_bytes, anon_peak_bytes, heap_bytes, unseen_bytes;
	/* the allocator (allocstats.h, -1 where unknown) */
	const struct record_allocator *allocator;
	const char *allocator_text; /* malloc_info's XML, or NULL */
	size_t allocator_text_len;
	bool allocator_torn; /* its seq was odd when copied */
};

/* Fill *st from v (pointers into v's image). */
void record_stats(const struct record_view *v, struct record_stats *st);

#endif /* PALLOC_RECORD_PROFILE_H */
