/* SPDX-License-Identifier: MIT */
/* Stack unwinders for the agent: frame pointers, libunwind, and the default. */
#ifndef PALLOC_UNWIND_H
#define PALLOC_UNWIND_H

#include "common.h"

/*
 * The agent calls unwind_backtrace() from inside its malloc hooks, under
 * its reentrancy guard, for every sampled allocation. Three unwinders:
 *
 * UNWIND_FP     Walks the chain of saved frame pointers (rbp on x86_64).
 *               Fast (a few ns per frame) and allocation-free, but correct
 *               only while every frame on the way keeps a frame pointer.
 *               On code built with -fomit-frame-pointer (the default at
 *               -O1 and above, and all of Debian's binaries and libraries)
 *               rbp is a general register: the walk skips the callers of
 *               such frames, or follows a stale rbp to an unrelated frame,
 *               or stops. Every step is checked (8-byte aligned, strictly
 *               increasing, inside the current thread's stack, non-null
 *               return address), so garbage stops the walk and never
 *               crashes it; what remains is a short or wrong stack, never
 *               a fault. On a thread running on a stack the unwinder does
 *               not know (sigaltstack, makecontext coroutines) only the
 *               first frame is returned. Every frame between the caller
 *               of malloc and unwind_backtrace() (the agent's hooks) must
 *               keep a frame pointer too, or the walk ends inside the
 *               agent: build it with -fno-omit-frame-pointer.
 * UNWIND_DWARF  libunwind's unw_getcontext/unw_init_local/unw_step loop,
 *               reading .eh_frame (the unwind tables every x86_64 ELF
 *               object carries, with or without frame pointers), with
 *               libunwind's per-thread cache of parsed frame descriptions.
 *               Correct; the slowest.
 * UNWIND_AUTO   The default: correct stacks on binaries without frame
 *               pointers at close to fp speed. libunwind's unw_backtrace()
 *               fast path, which on x86_64 caches per thread, per return
 *               address, how to find the caller's frame (CFA = rsp or rbp
 *               plus a constant), and falls back to unw_step by itself on
 *               unusual frames. When it yields no frame beyond the skipped
 *               ones, the unw_step loop is tried as well.
 *
 * Costs measured on this project's machine are in bench/unwind/README.md.
 */

/* The most frames one walk visits, skipped frames included. */
#define UNWIND_MAX_FRAMES 256

enum unwind_mode {
	UNWIND_FP,
	UNWIND_DWARF,
	UNWIND_AUTO,
};

/*
 * Parse "fp", "dwarf" or "auto" into *out. Returns 0, or -1 with msg_set()
 * ("unknown unwinder 'S': expected fp, dwarf or auto"); *out is then
 * unchanged. Thread-safe.
 */
int unwind_parse_mode(const char *s, enum unwind_mode *out);

/* "fp", "dwarf" or "auto"; "unknown" for any other value. */
const char *unwind_mode_name(enum unwind_mode m);

/*
 * Select the unwinder used by unwind_backtrace() in every thread. Nothing
 * else: libunwind is set up by the process's first walk in dwarf or auto
 * mode (initialised, made to validate memory without a descriptor, the
 * pipe it opened for that closed: it then holds no descriptor of the
 * process; per-thread caches), and each thread's caches (libunwind's, the
 * fp walk's stack bounds) by its first walk; a walk that finds libunwind
 * unusable walks frame pointers. Call it before the malloc hooks go live.
 * Calling it again switches the mode (the unit test does; the agent does
 * not). Returns 0, or -1 with msg_set() for an unknown mode. Not
 * thread-safe against concurrent unwind_backtrace() calls.
 */
int unwind_init(enum unwind_mode mode);

/*
 * Store in pcs[0..] the return addresses of the calling stack, leaf first:
 * pcs[0] is the address unwind_backtrace() returns to when skip is 0; skip
 * drops that many more innermost frames (the agent's hook frames).
 * unwind_backtrace()'s own frame is never returned. Writes at most max
 * entries, and walks at most UNWIND_MAX_FRAMES frames in all (in auto
 * mode, skipped frames included in max: a stack deeper than max returns
 * max - skip - 1 frames; callers that need depth D pass max >= D + skip +
 * 1, as the agent does with UNWIND_MAX_FRAMES). Trailing null addresses
 * are trimmed. Returns the number stored (0 when the walk found nothing
 * past the skipped frames).
 *
 * The addresses are return addresses, not call sites: subtract 1 before
 * symbolizing (pprof's convention for profile.proto, which the agent
 * follows). A frame interrupted by a signal is reported as its return
 * address too, so it is one byte off; profiles only see malloc callers.
 *
 * Stack use: about 1 KiB in fp mode; in auto and dwarf, libunwind's
 * context and cursor (2 KiB) here and as much inside unw_backtrace: some
 * 5 KiB in all below the caller.
 *
 * Safe inside malloc hooks under the agent's guard: it does not take a
 * lock the interposed functions hold and never calls malloc, except the
 * first walk in each thread (fp: the stack bounds from /proc/self/maps;
 * auto and dwarf: libunwind's per-thread cache, mmap-backed; the process's
 * first: libunwind's set-up, unwind_init()) -- that is why the guard must
 * be held. Thread-safe; not async-signal-safe on a thread's first call.
 */
size_t unwind_backtrace(uintptr_t *pcs, size_t max, unsigned skip);

/*
 * Find the mapping of /proc/self/maps that contains addr: 0 with [*lo, *hi)
 * set, or -1 (no /proc, or no mapping holds addr). Reads the file with
 * open/read into a stack buffer: no stdio, no malloc, no lock of libc's,
 * so it may run inside a malloc hook. Thread-safe. Used by the fp walk for
 * the stack bounds; exposed for the unit test.
 */
int unwind_find_vma(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

#endif /* PALLOC_UNWIND_H */
