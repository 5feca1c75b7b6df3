/* SPDX-License-Identifier: MIT */
/* palloc-run -p: profile a running process, then leave it as it was. */
#ifndef PALLOC_RUN_ATTACH_H
#define PALLOC_RUN_ATTACH_H

#include "common.h"
#include "collect.h"
#include "timeline.h"

#include <sys/types.h>

struct run_attach_opts {
	pid_t pid;
	const char *agent;     /* absolute path */
	const char *rate;      /* bytes, or NULL: the agent's default */
	const char *unwind;    /* NULL: auto */
	const char *max_depth; /* NULL: 64 */
	uint64_t interval_ns;  /* a numbered profile every this; 0: none */
	bool quiet;
	struct timeline *timeline; /* --timeline, or NULL */
};

/*
 * Attach to o->pid (inject.h: the agent dlopened, palloc_attach() called
 * in a thread of it), then wait for SIGINT, SIGTERM or SIGHUP (then
 * detach: palloc_detach() called the same way) or for the process's end,
 * writing a profile from its record (record_read.h) through col every
 * interval and at the end. Refusals and failures to attach are printed
 * (one line) and return PALLOC_EXIT_RUN_FAILED with nothing changed in
 * the process; otherwise 0 (the detach's failure is a warning, and 125).
 */
int run_attach(const struct run_attach_opts *o, struct collect *col);

#endif /* PALLOC_RUN_ATTACH_H */
