/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer's internals (symbols.h is its interface), one job a file:
 * symbols.c drives a call (a mapping's file opened and checked, each
 * location named, JIT frames, the mapping flags); symbols_debug.c finds
 * separate debug files for libdwfl; symbols_cache.c keeps the loaded
 * files between calls (LRU); symbols_elf.c is the ELF symbol index;
 * symbols_dwarf.c walks DWARF scopes and inlined calls; symcache_index.c
 * writes a file's on-disk index (symcache.h). All of it runs with the
 * cache's lock held (sym_cache_begin()), one call at a time.
 */
#ifndef PALLOC_SYMBOLS_INT_H
#define PALLOC_SYMBOLS_INT_H

#include "symbols.h"
#include "symcache.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <sys/stat.h>

/* Inlined frames kept per location; deeper chains keep the innermost. */
#define MAX_FRAMES 64

/* Debug file paths remembered per loaded file (find_debuginfo tries 4). */
#define MAX_PROBES 8

/* Address ranges of a module's CUs, for objects without .debug_aranges. */
struct cu_range {
	Dwarf_Addr lo, hi; /* [lo, hi) in DWARF addresses */
	Dwarf_Off off;	   /* the CU DIE's offset */
};

struct cu_index {
	bool built;
	size_t n;
	struct cu_range *r; /* sorted by lo */
};

/*
 * One ELF symbol that may name code. Names point into the module's string
 * tables, alive as long as its Dwfl.
 */
struct fsym {
	GElf_Addr lo;	 /* ELF address (the module is at bias 0) */
	GElf_Xword size; /* 0: a sizeless label */
	const char *name;
	int rank; /* binding_rank(); higher wins at one address */
	/* highest lo + size over the sized symbols at or before this one */
	GElf_Addr max_end;
	/* the best sizeless symbol at the highest address at or below
	 * this one that has any, or SIZE_MAX */
	size_t label;
};

/*
 * A module's symbols sorted by address, built on first use: the symbol of
 * an address by binary search instead of dwfl_module_addrinfo(), which
 * walks the whole table for every address (cc1 has 28k symbols).
 */
struct sym_index {
	bool built;
	size_t n;
	struct fsym *s;
};

/*
 * One loaded ELF file, kept across symbols_symbolize() calls: palloc-run
 * symbolizes a profile per process, and a build runs cc1, as and libc
 * dozens of times; loading them (inflating compressed DWARF, sorting the
 * symbols) once instead of per profile is most of the time saved. The
 * module is reported at bias 0: callers subtract each mapping's bias.
 */
struct modfile {
	char *path; /* root + file name, as opened */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool dwarf;
	struct cu_index cus;
	struct sym_index syms;
	unsigned long used; /* the cache's call count at the last use */
	bool transient;	    /* dropped at the end of the call */
	/* the answers from the on-disk index (symcache.h), without libdw */
	struct symcache *idx;
	/* the debug files libdwfl looked for while loading it */
	struct probe {
		char *path;
		bool exists;
		struct stat st;
	} probes[MAX_PROBES];
	size_t n_probes;
	bool probes_lost; /* more than MAX_PROBES, or ENOMEM */
};

/* What a profile's mapping uses. */
struct mod {
	struct modfile *f; /* NULL: not usable */
	uint64_t bias;	   /* runtime address minus ELF address */
	bool needed;	   /* some location here needs symbols */
	bool any_line;
	bool used, any_unnamed; /* by some location; one has no lines */
};

/* Depth of the DIE chain kept: CU children down to the innermost scope. */
#define MAX_SCOPES 128

struct symbolizer {
	struct pprof_profile *p;
	const char *root;
	struct symbols_stats *st;
	struct mod *mods; /* one per mapping */
};

/* symbols.c */

/* Pass the formatted warning to s->st->warn, if set (MSG_MAX bytes at
 * most, truncated). */
void sym_warn(struct symbolizer *s, const char *fmt, ...) PALLOC_PRINTF(2, 3);

/*
 * symbols_debug.c: libdwfl's callbacks, whose find_debuginfo looks for
 * separate debug files under sym_debug_root (the call's root; "" when
 * NULL) and remembers each path it tried in sym_loading's probes (when
 * set: the file being loaded or indexed). find_debuginfo has no context
 * argument, hence the two thread-local variables; symbolization is per
 * thread.
 */
extern const Dwfl_Callbacks sym_dwfl_callbacks;
extern __thread const char *sym_debug_root;
extern __thread struct modfile *sym_loading;

/* symbols_cache.c */

/* Take the cache's lock for one symbols_symbolize() call under root
 * (count the call for the LRU, set sym_debug_root). */
void sym_cache_begin(const char *root);

/* End the call: drop the files loaded for it only and the least recently
 * used beyond 32, clear sym_debug_root, release the lock. */
void sym_cache_end(void);

/* Forget what libdwfl loaded (the symbol index points into it). */
void sym_modfile_unload(struct modfile *f);

/* Load f again from its path after its index was refused: the same file
 * (device and inode) opened as a regular file, or -1. */
int sym_modfile_reload(struct modfile *f);

/*
 * The loaded file at path (opened as fd) from the cache, or loaded now
 * and cached. The same name, inode, size and modification time is taken
 * as the same file. A file modified in the last seconds is loaded for
 * this call only: rewritten in place within one tick of the clock (a
 * fuzzer, cp over a library) it would look unchanged, so only files whose
 * time is well past are trusted (git's "racy clean" rule). NULL with a
 * warning when libdwfl cannot load it. Lock held. With a key (the file's
 * build id), the answers come from the on-disk index when there is one,
 * which is written otherwise (symcache.h); the key's size and time are
 * filled in here.
 */
struct modfile *sym_modfile_get(struct symbolizer *s, const char *path,
				const char *file, int fd,
				struct symcache_key *key);

/* symbols_elf.c */

/*
 * Index the module's symbols (once), the ones dwfl_module_addrinfo()
 * considers: named, defined, not section, file or TLS symbols. On ENOMEM
 * the index stays empty and lookups fall back to dwfl_module_addrinfo().
 */
void sym_build_sym_index(struct modfile *md);

/*
 * The symbol name at addr, as dwfl_module_addrinfo() would choose it: the
 * closest sized symbol that contains addr (at one address the best
 * binding, then the smallest), else the closest sizeless label if no sized
 * symbol at or below it reaches it.
 */
const char *sym_symbol_at(struct modfile *md, uint64_t addr);

/* symbols_dwarf.c */

/* The string attribute name of die (DW_AT_name, ...), following
 * DW_AT_abstract_origin and DW_AT_specification, or NULL. */
const char *sym_die_string(Dwarf_Die *die, unsigned int name);

/* The linkage name of a DIE, or NULL. */
const char *sym_die_linkage(Dwarf_Die *die);

/* The declaration line of a DIE, or 0. */
int sym_die_decl_line(Dwarf_Die *die);

/* The function of a DWARF subprogram or inlined subroutine DIE. */
uint64_t sym_die_function(struct symbolizer *s, Dwarf_Die *die,
			  const char *file, const char *fallback);

/* The line of an inlined call (DW_AT_call_line), or 0. */
int sym_call_line(Dwarf_Die *die);

/* The file that a DW_AT_call_file index names, in the DIE's own unit. */
const char *sym_call_file(Dwarf_Die *die);

/* Index every CU's address ranges (once per module). */
void sym_build_cu_index(struct modfile *md);

/*
 * The CU holding addr. dwfl_module_addrdie() relies on .debug_aranges,
 * which clang does not emit by default (and libdw 0.188 does not rebuild);
 * without it, the CUs' own ranges are indexed and searched.
 */
Dwarf_Die *sym_find_cu(struct modfile *md, uint64_t addr, Dwarf_Addr *bias,
		       Dwarf_Die *mem);

/*
 * The chain of scope DIEs that contain pc, outermost first, from die's
 * children down (only DIEs whose ranges hold pc are entered, and
 * namespaces, which have no ranges). This is a concrete-tree walk, not
 * dwarf_getscopes(): that one follows inlined functions to their abstract
 * definitions and finds nothing at all in some LTO units (Debian's
 * python3.11 debug info), where this walk still finds the instances.
 */
int sym_scope_chain(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *chain, int depth);

/*
 * Lines from DWARF: the inline chain at addr, innermost first. *lt_file
 * and *lt_line get the line table's answer, for a caller that finds no
 * function DIE but still wants a file and line.
 */
size_t sym_dwarf_lines(struct symbolizer *s, struct modfile *md, uint64_t addr,
		       const char *sym, struct pprof_line *lines,
		       const char **lt_file, int *lt_line);

/*
 * The same from the on-disk index: the chain of functions from the
 * innermost node h->node up, as sym_dwarf_lines() builds it. -1 when the
 * index proves inconsistent.
 */
int sym_index_lines(struct symbolizer *s, struct modfile *md,
		    const struct symcache_hit *h, struct pprof_line *lines,
		    size_t *np);

/* symcache_index.c */

/*
 * Write f's index, then answer from it (so that the first run answers as
 * the next ones will) and drop what libdwfl loaded. On any failure f
 * stays as it was, answered by libdw.
 */
void symcache_index_module(struct modfile *f, const struct symcache_key *key);

#endif /* PALLOC_SYMBOLS_INT_H */
