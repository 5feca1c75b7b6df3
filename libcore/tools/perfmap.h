/* SPDX-License-Identifier: MIT */
/* Names of JIT code from the /tmp/perf-PID.map files runtimes write. */
#ifndef PALLOC_PERFMAP_H
#define PALLOC_PERFMAP_H

#include "common.h"

#include <sys/types.h>

/*
 * Runtimes that generate code (node --perf-basic-prof, java with
 * perf-map-agent, LuaJIT, .NET with DOTNET_PerfMapEnabled, Python 3.12's
 * -X perf) write what they generated to /tmp/perf-PID.map for perf(1),
 * one line per piece of code: "START SIZE NAME", START and SIZE in hex
 * (an "0x" prefix allowed), NAME the rest of the line. A later line over
 * the same address wins (the runtime reused the memory).
 *
 * The file sits in a directory everyone can write, so it is read with
 * care: opened with O_NOFOLLOW|O_NONBLOCK (no symlink followed, a FIFO
 * never blocks), a regular file only, owned by root or by one of the uids
 * the caller trusts (the profiled process's), and its first
 * PERFMAP_MAX_BYTES only. Library code: no output.
 */

#define PERFMAP_MAX_BYTES (64u << 20)

struct perfmap;

/*
 * Load path if it is safe to read (see above): uids[0..n_uids) are the
 * owners accepted besides root. NULL with errno ENOENT when there is no
 * such file, and with msg_set() saying why otherwise (ELOOP: a symlink;
 * EPERM: not a regular file or not owned by an accepted uid; ENOMEM).
 * Lines that do not parse are skipped.
 */
struct perfmap *perfmap_load(const char *path, const uid_t *uids,
			     size_t n_uids);

/* Parse a perf map from memory (the file's text, len bytes, no NUL
 * needed). NULL on ENOMEM. Exposed for the unit test. */
struct perfmap *perfmap_parse(const char *text, size_t len);

/* The name of the code at addr (the latest line that covers it), or NULL.
 * Valid until perfmap_free(). */
const char *perfmap_lookup(const struct perfmap *m, uint64_t addr);

/* Number of entries parsed. */
size_t perfmap_count(const struct perfmap *m);

void perfmap_free(struct perfmap *m);

#endif /* PALLOC_PERFMAP_H */
