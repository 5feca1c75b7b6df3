/* SPDX-License-Identifier: MIT */
/* The commands' exit codes, named once (palloc(7) and each page's EXIT STATUS).
 */
#ifndef PALLOC_EXITCODE_H
#define PALLOC_EXITCODE_H

/*
 * As diff(1) and grep(1): 0 success, 1 only the condition the user asked
 * about (palloc-diff --fail-on-growth exceeded), 2 trouble of any kind
 * (usage, unreadable input, a write error on standard output). palloc-run
 * passes its program's status through and, like env(1), uses 125 to 127
 * for its own failures.
 */
enum {
	PALLOC_EXIT_OK = 0,
	PALLOC_EXIT_MET = 1,
	PALLOC_EXIT_TROUBLE = 2,
	PALLOC_EXIT_RUN_FAILED = 125, /* palloc-run itself failed or refused */
	PALLOC_EXIT_CANNOT_RUN = 126, /* the program cannot be executed */
	PALLOC_EXIT_NOT_FOUND = 127,  /* the program was not found */
};

#endif /* PALLOC_EXITCODE_H */
