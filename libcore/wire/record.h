/* SPDX-License-Identifier: MIT */
/* The record: what a profile is made of, kept by the agent in a shared file
 * that the commands read from outside (format version 1). */
#ifndef PALLOC_RECORD_H
#define PALLOC_RECORD_H

#include "common.h"

/*
 * The agent (agent/record.c) keeps each process's stacks, weights,
 * counters, loaded objects and allocator state in one file mapped
 * MAP_SHARED into the process, so that a command reads them without
 * running any code in the target: an idle, stopped or killed process is
 * seen as exactly as a busy one, and the file outlives the process.
 *
 * Where: "PID.START.rec", START the agent's CLOCK_REALTIME at start in
 * nanoseconds (a pid has one record per image: exec starts a new one),
 * in PALLOC_RECORD_DIR when palloc-run sets it, else in the user's
 * directory of rundir.h ($XDG_RUNTIME_DIR/palloc, /tmp/palloc-UID;
 * 0700). The file is 0600, created O_EXCL|O_NOFOLLOW, never through a
 * symbolic link. A live process maps it: /proc/PID/maps names it (the
 * commands find a live record there, and tell it live by that mapping).
 *
 * Layout, native byte order (the reader refuses another: magic), all
 * offsets from the start of the file:
 *
 *	[0, RECORD_DATA)	struct record_header
 *	[RECORD_DATA, size)	entries, each a struct record_entry then
 *				its body, size a multiple of 16
 *
 * Entries are appended and never moved; the agent publishes an entry by
 * storing the new header.size with release order after the entry is
 * complete, so a reader that loads size with acquire order (or copies
 * the file and takes size from the copy) sees whole entries below it.
 * The body of a STACK entry is the agent's struct record_stack itself:
 * the agent updates its weights in place.
 *
 * Consistency. A sample's values change one field at a time; a reader
 * copying a live record may see alloc updated and inuse not yet: it
 * keeps inuse <= alloc by clamping. Changes that move values between
 * places (a thread's records folded into the stacks at its exit, the
 * counts zeroed in a fork child) are made inside header.seq, a
 * seqcount (odd while such a change is under way): a reader copies the
 * whole file, and retries when seq was odd or changed during the copy
 * (RECORD_READ_TRIES), then uses the last copy and says it may be
 * inconsistent.
 *
 * Trust. The target (a bug, or an attacker running as its user) can
 * write anything into its record. A reader checks everything: magic,
 * version, sizes, each entry's type and size within the file, every
 * offset, depth, count and string (NUL-terminated within its field),
 * and gives one error or a profile; it never reads outside the copy.
 */

#define RECORD_MAGIC "PALLOCR\0"
#define RECORD_VERSION 1
#define RECORD_DATA 16384		    /* the first entry's offset */
#define RECORD_MAX_SIZE ((uint64_t)1 << 30) /* bigger files are refused */
#define RECORD_READ_TRIES 8
#define RECORD_THREAD_NAME 16 /* as prctl(PR_GET_NAME), NUL included */
#define RECORD_BUILD_ID_HEX 129
#define RECORD_TEXT_MAX 65536 /* the allocator's text (malloc_info) */
#define RECORD_STR 256	      /* exe */
#define RECORD_LONG_STR 2048  /* cmdline, title, output pattern */
#define RECORD_MAX_DEPTH 256
#define RECORD_MAX_STACKS 1048576

enum record_entry_type {
	RECORD_PAD = 0,	   /* nothing (an abandoned entry) */
	RECORD_STACK = 1,  /* struct record_stack */
	RECORD_MODULE = 2, /* struct record_module */
	RECORD_THREAD = 3, /* struct record_thread */
	RECORD_RECS = 4,   /* struct record_rec[cap], a thread's table */
	RECORD_TEXT = 5,   /* bytes: the allocator's text, header.text_* */
};

struct record_entry {
	uint32_t type; /* enum record_entry_type */
	uint32_t size; /* of the entry, this header included; 16 | size */
	uint64_t reserved;
};

/*
 * One distinct (call stack, thread name) and the summed weights of the
 * allocations sampled there (the agent's stack table, stacktab.h: "Error
 * bars", "The peak"). id is 1 + its index in the order of creation: the
 * n-th STACK entry has id n. Sums are doubles; a profile rounds them.
 * gen: the table's gen when last valid (record_module's gens).
 */
struct record_stack {
	uint64_t hash;
	uint32_t id;
	uint32_t depth; /* pcs[] entries, leaf first, <= RECORD_MAX_DEPTH */
	uint32_t gen;
	uint32_t pad;
	char thread[RECORD_THREAD_NAME];
	double alloc_objects, alloc_bytes;
	double inuse_objects, inuse_bytes;
	double peak_objects, peak_bytes;
	double alloc_var_objects, alloc_var_bytes;
	double inuse_var_objects, inuse_var_bytes;
	double peak_var_objects, peak_var_bytes;
	uint64_t last_ev; /* the stack's value at the peak: inuse_* when
			   * last_ev <= header.peak_ev, else peak_* */
	uint64_t pcs[];	  /* return addresses, the leaf's its own pc */
};

/*
 * An executable segment of a loaded ELF object (phdr.h), as a pprof
 * mapping. Loaded at table gen load_gen; unload_gen 0 while loaded,
 * else the gen its dlclose started. A frame of a stack of gen g is in
 * the module covering it with load_gen <= g and (unload_gen == 0 or
 * g < unload_gen), the last such entry when several match. The first
 * MODULE entry is the main executable's.
 */
struct record_module {
	uint64_t start, limit, offset;
	uint32_t load_gen, unload_gen;
	char build_id[RECORD_BUILD_ID_HEX + 7]; /* lower-case hex or "" */
	char path[];				/* NUL within the entry */
};

enum record_thread_state {
	RECORD_THREAD_FREE = 0, /* reusable; its counts are in the header */
	RECORD_THREAD_LIVE = 1,
};

/*
 * A thread's exact counters, copied from its thread-local ones at each of
 * its slow paths (every sampled allocation, every free of a sampled
 * block; at rate 1 every call) and at its exit, when they are added to
 * the header's exited_* and the slot is freed. Weights per thread (rate 1
 * without PALLOC_PEAK): recs is the offset of its RECS entry's body (0:
 * none), recs_cap records; a stack's values are its own plus every live
 * thread's record for it.
 */
struct record_thread {
	uint32_t state; /* enum record_thread_state */
	int32_t tid;
	uint64_t alloc_count, free_count, alloc_bytes, samples, reentries;
	uint64_t recs;
	uint32_t recs_cap, pad;
};

/* A weight record of a thread (stacktab.h "Weights per thread"): whole
 * numbers at rate 1, variances 0. id 0: an empty slot. */
struct record_rec {
	uint32_t id;
	uint32_t pad;
	int64_t alloc_objects, alloc_bytes;
	int64_t inuse_objects, inuse_bytes;
};

enum record_state {
	RECORD_RUNNING = 0, /* or killed: the process does not map it */
	RECORD_EXITED = 1,  /* exit()/_exit() ran: exit_status is set */
};

enum record_flag {
	RECORD_F_PEAK = 1,	 /* PALLOC_PEAK: peak_* kept */
	RECORD_F_EXACT = 2,	 /* PALLOC_EXACT: exact_* kept */
	RECORD_F_PER_THREAD = 4, /* weights per thread, pt_* totals */
	RECORD_F_FORKED = 8,	 /* a fork child: parent_pid set */
	RECORD_F_ATTACHED = 16,	 /* palloc-run -p: started in a running
				  * process; its earlier blocks unknown */
};

/* The allocator's figures (allocstats.h), -1 where it cannot say. */
struct record_allocator {
	uint32_t seq;	      /* seqcount of this struct and the text */
	uint32_t kind;	      /* enum allocstats_kind */
	int64_t time_unix_ns; /* when taken; 0: never */
	int64_t allocated_bytes, active_bytes, resident_bytes, mapped_bytes;
	int64_t retained_bytes, free_bytes, metadata_bytes, arena_count;
	/* glibc's mallinfo2(3), or -1 */
	int64_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks;
	int64_t uordblks, fordblks, keepcost;
	uint64_t text;	   /* offset of the TEXT entry's body, or 0 */
	uint32_t text_len; /* bytes of text used (malloc_info's XML) */
	uint32_t text_cap;
};

struct record_header {
	char magic[8]; /* RECORD_MAGIC */
	uint32_t version;
	uint32_t header_size;	 /* sizeof(struct record_header) */
	uint64_t size;		 /* bytes in use: entries end here */
	uint32_t seq;		 /* seqcount, see above */
	uint32_t state;		 /* enum record_state */
	int32_t exit_status;	 /* exit()'s status when EXITED */
	uint32_t flags;		 /* enum record_flag */
	int32_t pid, parent_pid; /* parent_pid: a fork child's parent */
	uint32_t uid, pad0;	 /* the effective uid at start */
	int64_t start_unix_ns;	 /* CLOCK_REALTIME at the agent's start */
	int64_t end_unix_ns;	 /* at exit, else 0 */
	int64_t update_unix_ns;	 /* the last slow path's coarse time */
	uint64_t start_ticks;	 /* /proc/PID/stat starttime (a pid's
				  * identity: a reused pid differs) */
	uint8_t token[16];	 /* PALLOC_RUN_TOKEN: palloc-run's */
	/* configuration */
	uint64_t rate, seed;
	uint32_t max_depth, unwind; /* enum unwind_mode */
	uint32_t max_stacks, pad1;
	char exe[RECORD_STR];	       /* %e: the executable's name */
	char cmdline[RECORD_LONG_STR]; /* printable, spaces between args */
	char output[RECORD_LONG_STR];  /* PALLOC_OUTPUT, absolute */
	/* counters of threads that exited (and of the agent's start) */
	uint64_t exited_alloc_count, exited_free_count, exited_alloc_bytes;
	uint64_t exited_samples, exited_reentries;
	uint64_t alloc_at_init; /* alloc_count when the agent started */
	uint64_t dropped;	/* samples dropped: table full, ENOMEM */
	double dropped_bytes;	/* the alloc_space they stand for */
	/* the stack table (stacktab.h): gen, inuse totals, "The peak" */
	uint32_t gen, n_stacks;
	double inuse_bytes, max_inuse_bytes;
	uint64_t ev, peak_ev;
	/* weights per thread: the totals kept with atomics instead */
	int64_t pt_inuse_bytes, pt_inuse_objects, pt_max_bytes, pt_max_objects;
	/* PALLOC_EXACT: live usable bytes and their peak */
	int64_t exact_inuse, exact_peak;
	/* at exit (unseen.h), -1 when not measured */
	int64_t anon_bytes, anon_peak_bytes, heap_bytes, unseen_bytes;
	char title[RECORD_LONG_STR]; /* the process title at exit, or "" */
	struct record_allocator allocator;
};

_Static_assert(sizeof(struct record_header) <= RECORD_DATA,
	       "the header fits before the first entry");
_Static_assert(sizeof(struct record_entry) == 16, "entries stay aligned");
_Static_assert(sizeof(struct record_stack) % 8 == 0, "pcs aligned");

#endif /* PALLOC_RECORD_H */
