/* SPDX-License-Identifier: MIT */
/* The agent's half of the record (wire/record.h): the file, its entries. */
#ifndef PALLOC_AGENT_RECORD_H
#define PALLOC_AGENT_RECORD_H

/*
 * Named agent_record.h, not record.h: the commands' include path has
 * libcore/agent before libcore/wire, and "record.h" must stay the format.
 */
#include "common.h"
#include "wire/record.h"

/*
 * agent/record.c keeps the process's record (wire/record.h) in a file
 * mapped MAP_SHARED at a fixed range: 1 GiB of address space reserved
 * once (PROT_NONE), the file mapped into it in growing steps, each step
 * reserved on disk first (fallocate) so that a full file system gives an
 * error here and never a SIGBUS later. The descriptor is closed after
 * each step (reopened by path, checked to be the same file, for the
 * next): the program sees no descriptor of the agent's.
 *
 * Without a file (no writable directory, a full file system) the agent
 * warns once and keeps the same layout in private anonymous memory over
 * the same range: one code path, the commands only cannot read it from
 * outside. Profiles are made from the record either way
 * (record_view(), pprof/record_profile.h). Only when the address range
 * cannot be reserved is there no record at all: agent_hdr points to a
 * private header (so that the code that keeps the totals does not test
 * for a record), stacks live in the arena, and no profile can be made.
 * When the record cannot grow (its file system full, the 1 GiB used up)
 * it stops there: samples of new stacks are dropped (counted), a thread
 * without a table keeps its weights in the stacks' own values.
 *
 * Lifetime: with LD_PRELOAD alone (no PALLOC_RUN_TOKEN) the agent
 * removes its file once the exit profile is written (record_remove());
 * under palloc-run it leaves it, state RECORD_EXITED, for palloc-run to
 * convert and remove. A killed process's record stays: at start the agent
 * removes the dead records of its directory beyond the newest 32, and
 * (without a token) those of the images its process exec'd from.
 *
 * Locks (agent_int.h's order): record_append() takes agent_rec_lock, a
 * leaf (after agent_reg_lock, before the arena's); the list of modules
 * is under agent_mod_lock (before agent_rec_lock), never held across a
 * call into the loader; header.seq is written under agent_reg_lock (or
 * in a fork child, alone).
 */

/* The header: the record's, or a private one when there is none. Never
 * NULL; its totals are the agent's own variables (agent_int.h). */
extern struct record_header *agent_hdr;
extern struct agent_lock agent_rec_lock, agent_mod_lock;

/* While the configuration is read (before PALLOC_FOLLOW_CHILDREN=0
 * drops the variables): PALLOC_RECORD_DIR and PALLOC_RUN_TOKEN (32 hex
 * digits; warns and ignores another value). */
void record_read_env(void);

/* The same from values (NULL: unchanged): palloc_attach()'s (attach.h). */
void record_set_place(const char *dir, const char *token);

/*
 * At agent init, after the configuration, the command line and the
 * unwinder: create and map the record (in private memory when no file
 * can be made: warns once), fill its header (cmdline: the printable
 * command line; start_unix_ns: the agent's start, which names the file),
 * record the loaded objects, and point agent_tab's new stacks at it
 * (ext_only: no stack outside it). Removes the directory's dead records
 * beyond the newest 32 (kill(pid, 0) fails with ESRCH, or state
 * RECORD_EXITED). Leaves agent_hdr private when even the address range
 * cannot be had. Guard held.
 */
void record_init(const char *cmdline, int64_t start_unix_ns);

/*
 * Append an entry of type with a body of size bytes, copied from body
 * (NULL: zeros), and publish it (header.size, release). Returns the
 * body in the record, 16-aligned; NULL when there is no record or it
 * cannot grow (then no later append succeeds: the entries stay a
 * prefix). Takes agent_rec_lock. Guard held.
 */
void *record_append(uint32_t type, size_t size, const void *body);

/* Is p inside the record's range? */
bool record_owns(const void *p);

/* The offset of p (inside the record) from its start. */
uint64_t record_offset(const void *p);

/* The body at offset off (from record_offset). */
void *record_at(uint64_t off);

/* header.seq: odd while values move between places (wire/record.h).
 * Under agent_reg_lock. */
void record_seq_begin(void);
void record_seq_end(void);

/*
 * A slot for a thread being registered (under agent_reg_lock): a free
 * one, else a new THREAD entry; LIVE with tid. NULL without a record.
 */
struct record_thread *record_thread_slot(int tid);

/* Free slot s (its counts are in the header's exited_*: the caller's).
 * Under agent_reg_lock, inside record_seq_begin/end. */
void record_thread_free(struct record_thread *s);

/*
 * In a fork child, first thing: the child's own file, a copy of the
 * parent's used bytes, mapped over the same range (every pointer into
 * the record stays valid), the header's identity fields the child's
 * (pid, parent_pid, RECORD_F_FORKED, start times). A child that does
 * not profile (agent_mode not AGENT_ON), or whose file cannot be made,
 * gets a private copy at the same place instead: the parent's file is
 * never written by a child. No lock taken.
 */
void record_after_fork_child(void);

/* In a fork child, while its threads are put back to the forking one
 * alone: every slot but keep is freed, without its table (the parent
 * may have moved it after the fork); keep's table is set to recs (cap
 * records; none unless recs lies in the record). Inside
 * record_seq_begin/end. */
void record_slots_after_fork(const struct record_thread *keep,
			     const struct record_rec *recs, uint32_t cap);

/*
 * Objects loaded since the last look (dl_iterate_phdr's dlpi_adds) get
 * their MODULE entries, at load_gen agent_hdr->gen. Not while holding
 * any agent lock (it calls into the loader).
 */
void record_modules_check(void);

/*
 * An executable region no loaded object covers (JIT code), named path
 * ("[anon:jit]" or the kernel's name): a MODULE entry of load_gen 0, so
 * that a reader from outside names the frames in it after the process is
 * gone (the exit under palloc-run). Takes agent_mod_lock.
 */
void record_module_region(uintptr_t start, uintptr_t limit, uint64_t offset,
			  const char *path);

/* Segments [start, limit) at offset of path were unloaded (a dlclose):
 * their live MODULE entries get unload_gen gen. Takes agent_mod_lock
 * (the caller may hold the locks above it). */
void record_module_unloaded(uintptr_t start, uintptr_t limit, uint64_t offset,
			    const char *path, uint32_t gen);

/*
 * From a sampled allocation's slow path (guard set, the real allocator's
 * call returned; samples: the thread's count): header.update_unix_ns,
 * and the allocator's figures when a second has passed since the last
 * ones. Below a rate of 4 KiB, at every 16th sample of a thread only.
 */
void record_slow_point(uint64_t samples);

/* The allocator's figures now (header.allocator; guard set), unless
 * another thread is taking them. */
void record_allocator_snapshot(void);

/* From an idle point (idle.c: a thread about to wait, having allocated
 * or freed since its last wait): the allocator's figures now, within a
 * budget of the process's time (record.c). Not from a signal handler
 * that may have interrupted the allocator. */
void record_idle_point(void);

/*
 * At exit, after the exit profile's measurement: end time, title, what
 * unseen measured (anon_bytes .. unseen_bytes), exit_status, then state
 * RECORD_EXITED. The file is kept.
 */
void record_exit(int status, int64_t anon_bytes, int64_t anon_peak_bytes,
		 int64_t heap_bytes, int64_t unseen_bytes);

/*
 * Check the agent's own record (record_check, with agent_rec_lock held so
 * that no entry is appended meanwhile) into *v, arrays from the arena.
 * Again before each profile: a thread's table may have moved since. 0, or
 * -1 with msg_set() (no record, or the record refused). Free v with
 * record_view_free(). Guard held.
 */
struct record_view;
int record_view(struct record_view *v);

/* PALLOC_RUN_TOKEN was given: palloc-run converts and removes the file. */
bool record_kept_for_run(void);

/* /proc/self/stat's starttime (field 22), or 0 (record.c). The same
 * across exec: an earlier image of this process has the same. */
uint64_t record_start_ticks(void);

/*
 * Remove the dead records of directory dfd ("PID.START.rec" whose process
 * is gone or whose state is RECORD_EXITED) beyond the newest 32 by their
 * START: records of killed processes stay for the commands to read
 * (palloc-dump), but not without bound. Not own, the record just created.
 * The records of the images this process exec'd from go too, unless
 * palloc-run collects them (a token). Reads the directory with
 * getdents64 into a stack buffer (no allocation); a failure leaves the
 * files as they are. errno is preserved. At start only, by
 * record_init() (record_prune.c).
 */
void record_prune_dead(int dfd, const char *own);

/* palloc-run makes this process's profiles from its record (a token was
 * given and the record is a file): the agent writes none of its own. */
bool record_run_writes(void);

/* With LD_PRELOAD alone (no token), after the exit profile is written:
 * remove the record's file (if it is still the one created). The
 * mapping stays until the process ends. */
void record_remove(void);

/* The stack table's totals into the header (under agent_tab_lock, after
 * they changed). */
void record_tab_totals(void);

#endif /* PALLOC_AGENT_RECORD_H */
