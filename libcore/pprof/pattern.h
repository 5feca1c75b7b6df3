/* SPDX-License-Identifier: MIT */
/* Profile names: the output pattern's grammar (PALLOC_OUTPUT, -o). */
#ifndef PALLOC_PATTERN_H
#define PALLOC_PATTERN_H

#include "common.h"

#include <limits.h>

/*
 * Shared by the agent (no malloc, no stdio, no lock: the caller's
 * buffers) and the commands.
 *
 * A profile's name is the output pattern (PALLOC_OUTPUT) with %p
 * the pid, %n the sequence ("1", "2", ..., "peak", "at90"), %t the unix
 * time, %e the executable's name, %% a percent sign. %e is the base name
 * of the file the process exec'd (AT_EXECFN, read when the agent starts,
 * before a program can write over its argv to set a process title, as
 * PostgreSQL, nginx, redis and sshd do), made file-name safe. A peak
 * or pressure profile of a pattern without %n gets ".peak" (".at90")
 * before its final ".pb.gz" (or ".peak.pb.gz" appended).
 */

/*
 * The executable's file-name-safe name (see above) into out[cap], from
 * getauxval(AT_EXECFN), or /proc/self/exe when the process was exec'd
 * through an fd (/dev/fd/N); "unknown" when neither says.
 */
void deliver_exe_name(char *out, size_t cap);

/*
 * Copy the n bytes of in to out[cap] (cap >= 2) file-name safe: only
 * [A-Za-z0-9._+-] kept, anything else as '_', no leading '.', at most 63
 * bytes; "unknown" for nothing.
 */
void deliver_sanitize(char *out, size_t cap, const char *in, size_t n);

/* Is seq a sequence palloc-run accepts for %n: 1 to 20 digits, "peak",
 * or "at" and 1 to 3 digits? */
bool deliver_seq_valid(const char *seq);

/*
 * Expand pattern into out[cap] for a profile of process pid named exe,
 * sequence seq, at unix time t. Returns 0, or -1 with ENAMETOOLONG when
 * it does not fit.
 */
int deliver_expand(char *out, size_t cap, const char *pattern, long pid,
		   const char *exe, const char *seq, long long t);

#endif /* PALLOC_PATTERN_H */
