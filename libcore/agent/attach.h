/* SPDX-License-Identifier: MIT */
/* The agent attached to a running process (palloc-run -p): GOT hooks. */
#ifndef PALLOC_ATTACH_H
#define PALLOC_ATTACH_H

#include "common.h"

/*
 * palloc-run -p PID loads the agent into a running process by a remote
 * call of dlopen, then calls palloc_attach(config) in it (cmd/palloc-run.c,
 * tools/inject.h). Loaded so, the agent is not in the program's symbol
 * search order: its malloc is nobody's. palloc_attach() starts it (as the
 * constructor does under LD_PRELOAD, with the configuration from config
 * instead of the environment, and without any thread, socket or file
 * but its record) and rewrites the GOT entries (JUMP_SLOT and GLOB_DAT
 * relocations) of every loaded object but its own, the loader's and the
 * vdso's that lead to the malloc family or C++'s operators new and
 * delete, dlopen, dlsym and dlclose, so that they lead to its hooks.
 * Objects dlopened later are patched before dlopen returns when calling
 * dlopen from the agent changes nothing for the program (attach.c: a
 * path, or an object without RPATH/RUNPATH, in the base namespace),
 * else at the next slow path of a hooked call (at most every 100 ms);
 * dlsym of a malloc family name answers the agent's hook where it would
 * answer the function the loader binds. palloc_detach() writes every
 * entry back (pointers dlsym gave meanwhile stay the agent's: its hooks
 * forward); the library stays
 * loaded, idle; a later palloc_attach() hooks again, into the same
 * record.
 *
 * An entry is rewritten only when it leads where the loader would bind
 * it (the first definition in the search order, the main executable's
 * canonical PLT entry, or its own lazy PLT stub): an object bound to its
 * own allocator (-Bsymbolic, RTLD_DEEPBIND, a private copy) keeps it.
 */

/* The agent was dlopened, not preloaded: palloc_attach() starts it.
 * Called by the constructor, guard held. */
bool attach_dlopened(void);

/* agent.c: the constructor's start, configured by palloc_attach()
 * (agent_cfg) instead of the environment. Guard held. */
void agent_start_attached(void);

/* Set while the agent runs attached (hooks set or not). */
extern bool agent_attached;

/* Are the hooks set (palloc-run attached, not detached)? */
bool attach_hooked(void);

/* From a slow path of an attached agent (guard held): hook the objects
 * loaded since the last look, at most every 100 ms. */
void attach_safe_point(void);

/*
 * The entry points palloc-run calls remotely. config: lines "key=value":
 * rate, max_depth, unwind (fp, dwarf, auto), dir (the record's
 * directory), token (32 hex digits). 0 when the hooks are set (the
 * number of entries rewritten in *config's place is not said), -1 when
 * the agent cannot run (its reason written to stderr of the process,
 * as a preloaded agent's warnings are), 1 when it was preloaded, 2 when
 * a second attach asks for another rate and either is 1 (or 0): set up
 * at the start only (then nothing is hooked). A second attach applies
 * its rate (otherwise) and max_depth; its unwind and dir are ignored.
 * palloc_detach() returns how many entries it wrote back.
 */
int palloc_attach(const char *config);
int palloc_detach(void);

#endif /* PALLOC_ATTACH_H */
