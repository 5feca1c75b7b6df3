/* SPDX-License-Identifier: MIT */
/* Can LD_PRELOAD reach this program? Static, setuid and foreign binaries. */
#ifndef PALLOC_ELFCHECK_H
#define PALLOC_ELFCHECK_H

#include "common.h"

#include <limits.h>

/*
 * palloc-run preloads its agent through the dynamic loader, which only
 * works for a dynamically linked program of the agent's own architecture
 * that the loader does not run in secure-execution mode (ld.so(8):
 * "In secure-execution mode, preload pathnames containing slashes are
 * ignored"). elfcheck looks at the file the kernel will really load: the
 * program itself, or for a "#!" script its interpreter (following up to
 * ELFCHECK_MAX_SCRIPTS levels, as the kernel does), or /bin/sh for a file
 * with no known format (execvp(3) hands those to the shell).
 *
 * The ELF header and program headers are read directly (<elf.h>), 32 or
 * 64 bit, either byte order; nothing else in the file is trusted.
 * elfcheck_hidden_malloc() reads the symbol tables with libelf.
 */

#define ELFCHECK_MAX_SCRIPTS 4

enum elfcheck_verdict {
	ELFCHECK_OK,	  /* dynamically linked: the loader will preload */
	ELFCHECK_STATIC,  /* no PT_INTERP: no loader, LD_PRELOAD never read */
	ELFCHECK_SETUID,  /* set-user-ID: the loader's secure-execution mode */
	ELFCHECK_SETGID,  /* set-group-ID (with group execute): same */
	ELFCHECK_CAPS,	  /* file capabilities: same */
	ELFCHECK_FOREIGN, /* ELF class or machine differs from ours */
	ELFCHECK_BAD_ELF, /* truncated or inconsistent ELF headers */
	ELFCHECK_NESTED,  /* more "#!" levels than the kernel follows */
};

struct elfcheck_result {
	enum elfcheck_verdict verdict;
	/* The file the verdict is about: the program or an interpreter. */
	char target[PATH_MAX];
	/* Number of "#!" (or shell fallback) levels followed to reach it. */
	int scripts;
	/* The program has no known format: execvp(3) runs it with /bin/sh. */
	bool via_shell;
	/* From the ELF header of target, when it is ELF. */
	int elf_class;	 /* ELFCLASS32 or ELFCLASS64 */
	int elf_machine; /* EM_* */
};

/*
 * Examine the executable file at path (already resolved through PATH).
 * Returns 0 with *r filled (r->verdict says whether preloading can work),
 * or -1 with errno set and msg_set() naming the file when a file in the
 * chain cannot be opened or read (ENOENT for a missing "#!" interpreter,
 * EACCES, ...). Does not allocate; thread-safe.
 */
int elfcheck_program(const char *path, struct elfcheck_result *r);

/*
 * One line (no newline) explaining why preloading cannot work for a
 * verdict other than ELFCHECK_OK, e.g. "statically linked: there is no
 * dynamic loader to read LD_PRELOAD". Static storage; never NULL.
 */
const char *elfcheck_reason(enum elfcheck_verdict v);

/*
 * Does the ELF file at path define malloc in its symbol table but not
 * export it (an allocator linked in with hidden visibility)? The agent
 * cannot see such a program's own allocations. False when it cannot tell
 * (a stripped program has no .symtab, an unreadable file). Read with
 * libelf; no message recorded.
 */
bool elfcheck_hidden_malloc(const char *path);

/*
 * Is the regular file at path a Go program: has it a section the Go
 * linker writes (.go.buildinfo, .gopclntab or .note.go.buildid)? False
 * when it cannot tell (not a regular ELF file, unreadable). Never blocks
 * on a FIFO or device; no message recorded. Thread-safe.
 */
bool elfcheck_is_go(const char *path);

/*
 * Does the regular ELF file at path export a function named name (a
 * defined entry of its dynamic symbol table: an allocator such as
 * jemalloc, tcmalloc or mimalloc exports malloc)? False when it cannot
 * tell. Never blocks; no message recorded. Thread-safe.
 */
bool elfcheck_exports(const char *path, const char *name);

#endif /* PALLOC_ELFCHECK_H */
