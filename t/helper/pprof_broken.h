/* SPDX-License-Identifier: MIT */
/* A corpus of broken profiles, each with the error it must produce. */
#ifndef PALLOC_T_PPROF_BROKEN_H
#define PALLOC_T_PPROF_BROKEN_H

#include <stddef.h>

struct pprof_broken {
	const char *name;    /* a file name: "truncated.pb.gz" */
	const char *expect;  /* a substring of the decoder's message */
	unsigned char *data; /* malloc'd */
	size_t len;
};

#define PPROF_BROKEN_MAX 32

/* Build the corpus into out[PPROF_BROKEN_MAX]; returns how many, or 0 on
 * ENOMEM. Deterministic: the same bytes every run. */
size_t pprof_broken_make(struct pprof_broken *out);
void pprof_broken_free(struct pprof_broken *b, size_t n);

/* A valid profile (plain protobuf, two samples), malloc'd; 0 on error.
 * gzip: gzip it. */
size_t pprof_broken_valid(unsigned char **out, int gzip);

#endif /* PALLOC_T_PPROF_BROKEN_H */
