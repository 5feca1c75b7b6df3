/* SPDX-License-Identifier: MIT */
/* cgroup memory: find a process's memory cgroup (v2, v1, hybrid) and read it.
 */
#ifndef PALLOC_CGROUP_H
#define PALLOC_CGROUP_H

#include "common.h"

#include <jansson.h>

/*
 * Sources: Documentation/admin-guide/cgroup-v2.rst ("Memory Interface
 * Files", "PSI"), Documentation/admin-guide/cgroup-v1/memory.rst, and
 * proc(5) for /proc/PID/cgroup and /proc/PID/mountinfo.
 *
 * Finding the cgroup: /proc/PID/cgroup names the process's cgroup in each
 * hierarchy ("0::/a/b" for v2, "4:memory:/a/b" for v1), relative to the
 * reader's cgroup namespace; the reader's own /proc/self/mountinfo says
 * where each hierarchy is mounted and which part of it ("root", field 4):
 * the directory is mount point + (cgroup path minus mount root). The
 * reader's mount table is the right one because the reader opens the
 * files (the target's may be another mount namespace).
 *
 * Which hierarchy: v2 when the v2 directory has memory files (memory.stat
 * or memory.current; a v2 root has memory.stat only); otherwise the v1
 * hierarchy that has the memory controller. A hybrid host (v1 memory
 * beside an empty v2 tree at /sys/fs/cgroup/unified) therefore reads v1.
 *
 * ROOT: "" or NULL for the live system, or a directory (--sysroot) whose
 * proc/ and sys/ (and any mount point named in its proc/self/mountinfo)
 * are read instead.
 *
 * Units: bytes. v2's "max" and v1's "unlimited" sentinel (PAGE_COUNTER_MAX
 * pages, 9223372036854771712 with 4 KiB pages; anything at or above
 * 0x7fffffffffff0000 counts, for pages up to 64 KiB) are "unlimited".
 *
 * Errors: -1 with msg_set() and errno: ENOENT (no such process, no such
 * directory, no memory controller), ESRCH (the process exited), EACCES,
 * ENOTDIR/EINVAL (not a memory cgroup, a file that does not parse), ENOMEM.
 * Nothing prints or exits. Thread-safe: no shared state.
 */

/* A single-value file: memory.current, memory.max, ... */
struct cgroup_value {
	bool have;	/* the file exists and parsed */
	bool unlimited; /* "max" or v1's unlimited sentinel; bytes is 0 */
	uint64_t bytes;
};

/* A "key value" line of memory.stat or memory.events, in file order. */
struct cgroup_kv {
	char *key;
	uint64_t value;
};

/* One line of memory.pressure: "some|full avg10= avg60= avg300= total=". */
struct cgroup_psi {
	bool have;
	double avg10, avg60, avg300; /* percent, as the kernel prints */
	uint64_t total_us;	     /* stall time, microseconds */
};

struct cgroup_mem {
	int version; /* 1 or 2 */
	char *path;  /* as in /proc/PID/cgroup; NULL if a dir was
			given */
	char *dir;   /* the directory read (ROOT prefix included) */
	struct cgroup_value usage; /* v2 memory.current, v1 usage_in_bytes */
	struct cgroup_value limit; /* memory.max, limit_in_bytes */
	struct cgroup_value high;  /* memory.high (v2) */
	struct cgroup_value low;   /* memory.low (v2) */
	struct cgroup_value min;   /* memory.min (v2) */
	struct cgroup_value peak;  /* memory.peak, max_usage_in_bytes */
	struct cgroup_value
		swap_usage; /* memory.swap.current; v1 memsw - usage */
	struct cgroup_value swap_limit; /* memory.swap.max (v2) */
	struct cgroup_value failcnt;	/* v1 memory.failcnt (a count) */
	struct cgroup_kv *stat;		/* memory.stat */
	size_t nstat;
	struct cgroup_kv *events; /* v2 memory.events; v1 oom_control */
	size_t nevents;
	struct cgroup_psi psi_some, psi_full; /* memory.pressure (v2) */
};

/*
 * Find the memory cgroup directory of PID (0: the caller) under ROOT and
 * read it into OUT (zeroed first). A PID that has exited (a zombie, whose
 * cgroup file names the root) is ESRCH. Returns 0, or -1 (errors above).
 * Free with cgroup_mem_free().
 */
int cgroup_read_pid(const char *root, pid_t pid, struct cgroup_mem *out);

/*
 * Read the memory cgroup at directory DIR (under ROOT when ROOT is set
 * and DIR is absolute), telling v1 from v2 by its files
 * (memory.usage_in_bytes: v1; memory.current or memory.stat: v2). A
 * directory without them is "not a memory cgroup" (EINVAL). Returns 0
 * or -1.
 */
int cgroup_read_dir(const char *root, const char *dir, struct cgroup_mem *out);

void cgroup_mem_free(struct cgroup_mem *m);

/* The value of KEY in M's memory.stat. Returns true when present. */
bool cgroup_stat_get(const struct cgroup_mem *m, const char *key,
		     uint64_t *value);

/*
 * The working set as kubelet and cAdvisor compute it: usage minus
 * inactive file pages, floored at 0 (v2: memory.current - memory.stat
 * inactive_file; v1: usage_in_bytes - memory.stat total_inactive_file).
 * Returns true and sets *WS (and *INACTIVE, may be NULL) when both
 * inputs are known.
 */
bool cgroup_working_set(const struct cgroup_mem *m, uint64_t *ws,
			uint64_t *inactive);

/*
 * Rendering for commands and the /metrics endpoint (palloc-cgroup(1)
 * OUTPUT documents the keys and metric names).
 * cgroup_json: sets every key into OBJ in the documented order; failures
 * are left for json_failed(). cgroup_prom: writes the palloc_cgroup_*
 * families for M, labelled cgroup="PATH" (the directory when no path).
 * Returns 0, or -1 on a write error.
 */
void cgroup_json(json_t *obj, const struct cgroup_mem *m);
int cgroup_prom(FILE *fp, const struct cgroup_mem *m);

/*
 * The effective memory limit of the cgroup directory DIR (VERSION 1 or
 * 2): the smallest finite limit (memory.max, memory.limit_in_bytes;
 * bytes) from DIR up to its hierarchy's root, as a parent's limit caps
 * its children; at most 64 levels. Stores it in *LIMIT (0: none finite)
 * and, only when one is found, the path of the usage file (memory.current,
 * memory.usage_in_bytes) of the cgroup holding it, whose limit the OOM
 * killer enforces, into USAGE (SIZE bytes, truncated to fit); USAGE is
 * left alone otherwise. v1's "no limit" (PAGE_COUNTER_MAX pages and
 * above) counts as none. Returns true when a limit was found. No msg_set,
 * no allocation; thread-safe; not async-signal-safe (snprintf).
 */
bool cgroup_effective_limit(const char *dir, int version, uint64_t *limit,
			    char *usage, size_t size);

#endif /* PALLOC_CGROUP_H */
