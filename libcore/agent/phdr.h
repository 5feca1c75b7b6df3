/* SPDX-License-Identifier: MIT */
/* The ELF objects loaded in this process, from the loader's program headers. */
#ifndef PALLOC_PHDR_H
#define PALLOC_PHDR_H

#include "common.h"

#include <link.h>

/*
 * The agent writes one pprof mapping per executable segment of every
 * loaded ELF object, with its GNU build id, so that the commands can
 * symbolize the addresses later from files matching the build id. It reads
 * all of it from memory through dl_iterate_phdr(3) (program headers and
 * the PT_NOTE segments), never from files: no allocation, no file I/O
 * except readlink("/proc/self/exe") for the main program's path.
 *
 * The main executable comes first; the vdso is reported as "[vdso]".
 * Thread-safe (dl_iterate_phdr holds the loader lock during the walk, so
 * the callback must not dlopen, dlclose or call back into the loader).
 */

#define PHDR_BUILD_ID_HEX 129 /* up to 64 id bytes as hex, and the NUL */

struct phdr_segment {
	uintptr_t start;      /* page-aligned load address of the segment */
	uintptr_t limit;      /* end, page-aligned up, exclusive */
	uint64_t offset;      /* file offset of start */
	const char *path;     /* valid during the callback only */
	const char *build_id; /* lower-case hex, "" when the object has none */
};

/*
 * Call fn for every executable PT_LOAD segment of every loaded object,
 * main executable first. fn returns 0 to go on, non-zero to stop (that
 * value is returned). Returns 0 when all were visited.
 */
int phdr_foreach(int (*fn)(const struct phdr_segment *seg, void *arg),
		 void *arg);

/*
 * Store in *start, *limit the bounds of the executable segments of the
 * object containing addr (e.g. the agent's own code, to strip its frames
 * from stacks). Returns 0, or -1 when no object contains addr.
 */
int phdr_object_text(uintptr_t addr, uintptr_t *start, uintptr_t *limit);

/*
 * The name the loader knows the object containing the code at addr by
 * (dladdr(3)'s dli_fname: "" for the main executable) into path[cap], cut
 * to cap - 1 bytes. Returns 0, or -1 when no executable segment of a
 * loaded object contains addr. No allocation, no symbol table scanned
 * (dladdr's cost); thread-safe, as phdr_object_text().
 */
int phdr_object_path(uintptr_t addr, char *path, size_t cap);

/*
 * Where the loader resolves a symbol: the first loaded object, in the
 * order of dl_iterate_phdr(3) (glibc: the main executable, then the
 * LD_PRELOAD entries, then the dependencies breadth first, then objects
 * dlopened later; for the objects loaded at start this is the global
 * symbol search order), whose dynamic symbol table DEFINES name: an
 * entry with st_shndx != SHN_UNDEF, a function or ifunc, global or weak,
 * not a hidden version. An undefined entry with a non-zero value, as a
 * non-PIE executable carries for a function whose address it takes (the
 * "canonical PLT entry", which dlsym(RTLD_DEFAULT, name) returns), does
 * not count. The symbol tables are read from memory through each
 * object's PT_DYNAMIC (DT_SYMTAB, DT_STRTAB, DT_GNU_HASH or DT_HASH).
 * A definition only in an executable's .symtab (not exported) is not
 * visible there and is not found.
 */
struct phdr_definition {
	uintptr_t addr; /* address of the definition */
	bool is_main;	/* defined by the main executable */
	/* the object's path, "" for the main executable; truncated */
	char path[256];
};

/*
 * Fill *def with the first definition of name (see above). Returns 0,
 * or -1 when no loaded object defines it. No allocation; thread-safe
 * (the loader lock is held during the walk).
 */
int phdr_first_definition(const char *name, struct phdr_definition *def);

/*
 * As phdr_first_definition(), skipping the object loaded at skip (its
 * dl_phdr_info's dlpi_addr; 0: none). Objects dlopened RTLD_LOCAL count
 * too (dlsym(RTLD_DEFAULT) does not see them). Same returns and safety.
 */
int phdr_first_definition_outside(const char *name, uintptr_t skip,
				  struct phdr_definition *def);

/*
 * What the agent reads of a loaded object's dynamic section (elf(5)):
 * addresses, absolute, NULL where the section has no such entry, and
 * sizes in bytes (0: none).
 */
struct phdr_dynamic {
	const ElfW(Sym) *sym;	  /* DT_SYMTAB */
	const char *str;	  /* DT_STRTAB, of strsz bytes (DT_STRSZ) */
	const uint32_t *gnu_hash; /* DT_GNU_HASH */
	const uint32_t *hash;	  /* DT_HASH (SysV) */
	const ElfW(Half) *versym; /* DT_VERSYM */
	const ElfW(Rela) *jmprel, *rela; /* DT_JMPREL, DT_RELA */
	size_t strsz;
	size_t jmprelsz, relasz; /* DT_PLTRELSZ, DT_RELASZ */
	uintptr_t pltrel;	 /* DT_PLTREL: DT_RELA or DT_REL */
};

/*
 * Fill *d from the PT_DYNAMIC segment of the loaded object info describes
 * (dl_iterate_phdr(3)). glibc relocates the addresses of a writable
 * dynamic section in place (elf_get_dynamic_info), but not those of a
 * read-only one (the vdso), and other loaders never do: an address below
 * the load base is taken as relative to it. Returns false (*d all 0)
 * when the object has no dynamic section. Reads the object's memory
 * only: no allocation, async-signal-safe.
 */
bool phdr_dynamic(const struct dl_phdr_info *info, struct phdr_dynamic *d);

/* Hex-encode the GNU build id found in a PT_NOTE segment's bytes
 * (note[0..len)) into hex[PHDR_BUILD_ID_HEX]; "" when there is none.
 * Returns true when one was found. Exposed for the unit test. */
bool phdr_note_build_id(const void *note, size_t len, char *hex);

#endif /* PALLOC_PHDR_H */
