/* SPDX-License-Identifier: MIT */
/* Tests: the pprof mapping of this process's ELF object holding an address. */
#ifndef PALLOC_T_SELFMAP_H
#define PALLOC_T_SELFMAP_H

#include "pprof.h"

/*
 * Fill m for the object containing addr: start, limit and offset of the
 * /proc/self/maps line holding addr, its path (into file[filesz]) and the
 * GNU build id read from the object's PT_NOTE segments in memory (into
 * build_id[idsz], "" if none), independently of libcore's ELF code.
 * Returns 0, or -1 if addr is in no file mapping.
 */
int selfmap_find(const void *addr, struct pprof_mapping *m, char *file,
		 size_t filesz, char *build_id, size_t idsz);

#endif /* PALLOC_T_SELFMAP_H */
