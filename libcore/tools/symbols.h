/* SPDX-License-Identifier: MIT */
/* Symbolization of raw profiles from ELF symbol tables and DWARF (libdw). */
#ifndef PALLOC_SYMBOLS_H
#define PALLOC_SYMBOLS_H

#include "pprof.h"

/*
 * The commands symbolize profiles after the target has exited (or from
 * outside a live one); the agent never does, so libelf and libdw stay out
 * of the target. For every location that has a mapping and no lines, the
 * mapping's file is opened (under a root prefix), its GNU build id checked
 * against the mapping's, and the address resolved to a function (demangled
 * name and raw system_name), file and line, with inlined frames as extra
 * lines of the location (innermost first, the caller last). Separate debug
 * info is looked up by build id in ROOT/usr/lib/debug/.build-id/ and by
 * .gnu_debuglink next to the file and under ROOT/usr/lib/debug; debuginfod
 * is never asked (no network).
 *
 * Addresses are absolute runtime addresses (for caller frames already the
 * return address - 1); each module's load bias comes from its mapping
 * (start, offset) and the ELF's PT_LOAD headers.
 *
 * Locations in memory that no ELF file describes (anonymous executable
 * memory: "[anon:jit]", "[unmapped]" and other names not of a file) are
 * named from ROOT/tmp/perf-PID.map (perfmap.h), PID from the profile's
 * "pid: N" comment, when such a file is there, regular, and owned by
 * root, the caller or the live process's owner.
 *
 * Afterwards a mapping used by some location has has_functions (and,
 * with DWARF lines, has_filenames, has_line_numbers, has_inline_frames)
 * set only when every one of its locations is named; otherwise all four
 * are cleared, so that pprof, which re-symbolizes only mappings with none
 * of them, tries again (debug symbols installed since).
 *
 * The files loaded stay loaded for the next call (a build symbolizes one
 * profile per process, most of them of the same cc1, as and libc): up to
 * 32 files, the least recently used dropped first, all freed at exit or by
 * symbols_cache_clear(). A file is reused when its path (under root),
 * inode, size and modification time are the same. Calls from several
 * threads are serialized on that cache. Library code: no output; warnings
 * go through the optional callback in symbols_stats.
 */

struct symbols_stats {
	size_t locations; /* locations needing symbols (mapped, no lines) */
	size_t locations_symbolized; /* of those, given at least a function */
	size_t mappings;	     /* mappings with a file name */
	size_t mappings_missing;     /* file not found or not ELF */
	size_t mappings_mismatched;  /* build id differs: file refused */
	size_t mappings_no_dwarf;    /* symbol tables only: no file/line */
	size_t locations_jit;	     /* of the symbolized, from the perf map */
	/* Optional: called once per missing or refused mapping with a line
	 * such as "build id mismatch for '/usr/lib/x.so': profile has ab12,
	 * file has cd34; not symbolized". */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

/*
 * Symbolize p in place. root is prepended to mapping paths: "" (or NULL)
 * for the local filesystem, "/proc/PID/root" for a live process in another
 * mount namespace. st may be NULL; its counters are reset first (warn and
 * warn_ctx are kept). Returns 0 even when some mappings could not be used
 * (that is what st counts); -1 with msg_set() on ENOMEM or a libdw failure
 * that stops everything.
 */
int symbols_symbolize(struct pprof_profile *p, const char *root,
		      struct symbols_stats *st);

/*
 * Free the files symbols_symbolize() keeps loaded between calls (also done
 * at exit). Optional: for a caller that wants the memory back now.
 */
void symbols_cache_clear(void);

/*
 * Remove all symbol information (--no-symbolize): every location loses its
 * lines, the functions are dropped and the mapping has_* flags cleared.
 * Returns 0 or -1.
 */
int symbols_strip(struct pprof_profile *p);

/*
 * The demangled form of an Itanium C++ ABI symbol ("_ZN2ns1fEi" gives
 * "ns::f(int)") interned in p, or sym itself (interned) when it is not
 * mangled or cannot be demangled. NULL on ENOMEM.
 */
const char *symbols_demangle(struct pprof_profile *p, const char *sym);

#endif /* PALLOC_SYMBOLS_H */
