/* SPDX-License-Identifier: MIT */
/* On-disk symbol index per build id: what the symbolizer read from libdw. */
#ifndef PALLOC_SYMCACHE_H
#define PALLOC_SYMCACHE_H

#include "common.h"

#include <stdint.h>
#include <sys/stat.h>

/*
 * Reading a module's DWARF costs far more than the program it describes
 * when the program is short: libdw inflates every compressed debug
 * section and parses whole line tables. symcache_index.c therefore
 * writes, once per module, an index of everything its lookups can
 * answer (the address space cut into intervals, each with its ELF
 * symbol, its line-table row and its innermost function or inlined
 * call) to
 * $XDG_CACHE_HOME/palloc/BUILDID-SIZE-MTIME.idx (~/.cache/palloc), and
 * later runs answer from it without libdw. PALLOC_CACHE=0 in the
 * environment, or symcache_disable(), turns it off.
 *
 * A cache file is outside input: the directory must be the caller's and
 * mode 0700 (it is created so), a file a regular file of the caller's,
 * mode 0600, not a symlink; its header must match the module (build id,
 * size, modification time) and the debug files that were probed when it
 * was written must still be as they were; every section size must add up
 * to the file's, and every record used is checked (bounds, order) before
 * it is believed. A file that fails is refused (and removed, so that it
 * is written again). Files are written complete under a temporary name
 * and renamed; the directory is kept under a size bound, the least
 * recently used files removed first.
 */

#define SYMCACHE_NONE UINT32_MAX

struct symcache;
struct symcache_writer;

/* What identifies a module's file. */
struct symcache_key {
	const unsigned char *build_id;
	size_t build_id_len; /* 1..64 */
	uint64_t size;
	int64_t mtime_sec;
	int64_t mtime_nsec;
};

/* The answer at an address: strings NULL when absent. */
struct symcache_hit {
	const char *sym;  /* ELF symbol (raw), or NULL */
	const char *file; /* line table file, or NULL */
	int line;	  /* line table line, or 0 */
	uint32_t node;	  /* innermost function node, or SYMCACHE_NONE */
};

/* A function (subprogram) or inlined call in a chain. */
struct symcache_node {
	const char *name, *linkage; /* DW_AT_name, linkage name, or NULL */
	const char *decl_file;	    /* or NULL */
	const char *call_file;	    /* the inlined call's site, or NULL */
	int decl_line, call_line;
	uint32_t parent; /* the caller's node, or SYMCACHE_NONE */
	bool subprogram; /* the chain ends here */
};

/* Turn the cache off for this process (--no-cache). */
void symcache_disable(void);

/* Whether the cache is on (PALLOC_CACHE, symcache_disable, a usable dir). */
bool symcache_enabled(void);

/*
 * The index for key, or NULL when there is none, it is stale or it is
 * refused (then removed). *dwarf tells whether it has DWARF answers.
 */
struct symcache *symcache_open(const struct symcache_key *key, bool *dwarf);

/* The same from an open file (the fuzz target); fd is not kept. */
struct symcache *symcache_open_fd(int fd, const struct symcache_key *key,
				  bool *dwarf);

/*
 * The answer at addr (an ELF address). 0, or -1 when the file proves
 * inconsistent: then stop using it (symcache_refuse()).
 */
int symcache_lookup(struct symcache *c, uint64_t addr, struct symcache_hit *h);

/* Node i; 0, or -1 when inconsistent. */
int symcache_node(struct symcache *c, uint32_t i, struct symcache_node *n);

/* Remove c's file from the cache (found inconsistent). */
void symcache_refuse(struct symcache *c);

void symcache_close(struct symcache *c);

/* Writing an index: strings and nodes first, then intervals by address. */
struct symcache_writer *symcache_writer_new(const struct symcache_key *key,
					    bool dwarf);
/* A debug file path probed while loading the module (st NULL: absent). */
int symcache_writer_probe(struct symcache_writer *w, const char *path,
			  const struct stat *st);
/* The id of string s (SYMCACHE_NONE for NULL); SYMCACHE_NONE - 1 on ENOMEM. */
uint32_t symcache_writer_string(struct symcache_writer *w, const char *s);
/* Add a node (strings as from symcache_writer_string); its id or NONE. */
uint32_t symcache_writer_node(struct symcache_writer *w, uint32_t name,
			      uint32_t linkage, uint32_t decl_file,
			      uint32_t call_file, int decl_line, int call_line,
			      uint32_t parent, bool subprogram);
/* The answer from start up to the next interval's start; 0 or -1. */
int symcache_writer_interval(struct symcache_writer *w, uint64_t start,
			     uint32_t sym, uint32_t file, int line,
			     uint32_t node);
/* Write the file (atomically) into the cache dir; 0 or -1. Frees w. */
int symcache_writer_commit(struct symcache_writer *w);
/* Write to fd instead (tests, seeds); 0 or -1. Frees w. */
int symcache_writer_write_fd(struct symcache_writer *w, int fd);
void symcache_writer_free(struct symcache_writer *w);

/*
 * For the fuzz target and tests: take *key from the header of the index
 * in buf[0, len) and set its checksum to its body's, so that arbitrary
 * bytes get past those two checks to the layout and record checks.
 * -1 when buf is shorter than a header.
 */
int symcache_seal(unsigned char *buf, size_t len, struct symcache_key *key);

#endif /* PALLOC_SYMCACHE_H */
