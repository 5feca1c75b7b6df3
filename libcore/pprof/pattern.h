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
 * before its final ".pb.gz" (or ".peak.pb.gz" appended). Any other "%c",
 * and a '%' at the end, stand for themselves.
 */

/* The pattern when none is given, relative to the working directory. */
#define PATTERN_DEFAULT "palloc.%e.%p.pb.gz"

/* The longest pattern the agent takes (PALLOC_OUTPUT), in bytes: room is
 * left for what the conversions add. */
#define PATTERN_MAX (PATH_MAX / 2)

/*
 * Why pattern cannot name profiles ("empty", "too long": longer than
 * PATTERN_MAX), or NULL when it can. The agent and palloc-run refuse the
 * same patterns.
 */
const char *pattern_invalid(const char *pattern);

/*
 * The absolute form of pattern into out[cap]: as it is when it starts
 * with '/' or when cwd is NULL or "", else "cwd/pattern" (a program that
 * chdir()s still writes where it was started). Returns 0, or -1 with
 * ENAMETOOLONG when it does not fit (out then holds what did).
 */
int pattern_absolute(char *out, size_t cap, const char *pattern,
		     const char *cwd);

/*
 * Pattern as a fnmatch(3) pattern into out[cap], which needs
 * 2 * strlen(pattern) + 1 bytes at most: each conversion as one '*',
 * "%%" as '%', and '*', '?', '[' and backslash escaped. The names
 * pattern_expand() gives match it with FNM_PATHNAME | FNM_PERIOD (%e has
 * no '/' and no leading '.'); the ".peak" and ".atN" names of a pattern
 * without %n only when a conversion comes before them. Returns 0, or -1
 * with ENAMETOOLONG.
 */
int pattern_glob(char *out, size_t cap, const char *pattern);

/*
 * The executable's file-name-safe name (see above) into out[cap], from
 * getauxval(AT_EXECFN), or /proc/self/exe when the process was exec'd
 * through an fd (/dev/fd/N); "unknown" when neither says.
 */
void pattern_exe_name(char *out, size_t cap);

/*
 * Copy the n bytes of in to out[cap] (cap >= 2) file-name safe: only
 * [A-Za-z0-9._+-] kept, anything else as '_', no leading '.', at most 63
 * bytes; "unknown" for nothing.
 */
void pattern_sanitize(char *out, size_t cap, const char *in, size_t n);

/* Is seq a sequence palloc-run accepts for %n: 1 to 20 digits, "peak",
 * or "at" and 1 to 3 digits? */
bool pattern_seq_valid(const char *seq);

/*
 * Expand pattern into out[cap] for a profile of process pid named exe,
 * sequence seq, at unix time t. Returns 0, or -1 with ENAMETOOLONG when
 * it does not fit.
 */
int pattern_expand(char *out, size_t cap, const char *pattern, long pid,
		   const char *exe, const char *seq, long long t);

#endif /* PALLOC_PATTERN_H */
