/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the agent's cgroup limit finder (PALLOC_DUMP_AT). */
/*
 * The readers are file-local to the agent (libcore/agent/pressure.c, no
 * malloc or stdio: the commands read the same files with cgroup.c), so
 * the target compiles that file in, with stubs for the rest of the agent.
 */
#include "../libcore/agent/pressure.c"
#include "fuzz_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__thread struct agent_thread agent_tls;

void agent_guard_enter(void)
{
}

void agent_guard_leave(void)
{
}

int agent_dump_pressure(const char *seq PALLOC_UNUSED,
			const char *comment PALLOC_UNUSED)
{
	return 0;
}

/*
 * The parts of an input (FUZZ_SEP-separated), an empty one an absent
 * file: PALLOC_DUMP_AT, /proc/self/cgroup, /proc/self/mountinfo, then
 * the memory files of a cgroup2 mount at /sys/fs/cgroup and a v1 one at
 * /sys/fs/cgroup/memory, in cgroups "/" "/a" and "/a/b".
 */
static const char *const files[] = {
	NULL,
	"proc/self/cgroup",
	"proc/self/mountinfo",
	"sys/fs/cgroup/memory.max",
	"sys/fs/cgroup/memory.current",
	"sys/fs/cgroup/a/memory.max",
	"sys/fs/cgroup/a/memory.current",
	"sys/fs/cgroup/a/b/memory.max",
	"sys/fs/cgroup/a/b/memory.current",
	"sys/fs/cgroup/memory/memory.limit_in_bytes",
	"sys/fs/cgroup/memory/a/memory.limit_in_bytes",
	"sys/fs/cgroup/memory/a/memory.usage_in_bytes",
};
#define N_PARTS (sizeof(files) / sizeof(files[0]))

/* The thresholds: ascending, from 1 to 100, each one an item of s. */
static void check_thresholds(const char *s, int rc)
{
	if (rc != 0)
		return;
	/* "" is refused, as palloc-run's --dump-at does */
	if (!*s)
		abort();
	if (strcmp(s, "0") == 0 ? pr.n != 0 : pr.n == 0 || pr.n > 8)
		abort();
	for (size_t i = 0; i < pr.n; i++) {
		char item[8];
		const char *at;
		size_t n;

		if (pr.thresholds[i] < 1 || pr.thresholds[i] > 100 ||
		    (i && pr.thresholds[i] <= pr.thresholds[i - 1]))
			abort();
		n = (size_t)snprintf(item, sizeof(item), "%u",
				     pr.thresholds[i]);
		/* the number appears in s as a whole item (maybe 0-padded) */
		for (at = strstr(s, item); at; at = strstr(at + 1, item))
			if ((at[n] == ',' || !at[n]) &&
			    (at == s || at[-1] == ',' || at[-1] == '0'))
				break;
		if (!at)
			abort();
	}
}

/*
 * Whatever the files say, the limit found is a finite one read from the
 * memory.max (v1: memory.limit_in_bytes) beside the usage file chosen,
 * and that usage file is in the scratch tree (the sysroot), with no ".."
 * component (a mount point may be anything mountinfo says).
 */
static void check_limit(void)
{
	const char *usage =
		pr.version == 2 ? "/memory.current" : "/memory.usage_in_bytes";
	const char *limit =
		pr.version == 2 ? "memory.max" : "memory.limit_in_bytes";
	char dir[PATH_MAX], root[PATH_MAX], real_dir[PATH_MAX],
		file[PATH_MAX + 32];
	size_t ml, ul = strlen(pr.usage_file), sl = strlen(usage);
	uint64_t v;

	if (!pr.version)
		return;
	if (pr.version != 1 && pr.version != 2)
		abort();
	if (!pr.limit || pr.limit >= UNLIMITED_MIN)
		abort();
	if (ul < sl || strcmp(pr.usage_file + ul - sl, usage) != 0)
		abort();
	snprintf(dir, sizeof(dir), "%.*s", (int)(ul - sl), pr.usage_file);
	/* in the tree ("//" and "/./" allowed), never through ".." */
	if (!realpath(fuzz_root(), root) || !realpath(dir, real_dir))
		abort();
	ml = strlen(root);
	if (strncmp(real_dir, root, ml) != 0 ||
	    (real_dir[ml] != '/' && real_dir[ml]) || strstr(dir, "/../") ||
	    (strlen(dir) >= 3 && strcmp(dir + strlen(dir) - 3, "/..") == 0)) {
		fprintf(stderr, "usage file '%s'\n", pr.usage_file);
		abort();
	}
	snprintf(file, sizeof(file), "%s/%s", dir, limit);
	if (smallfile_u64(file, &v) != 0 || v != pr.limit)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *parts[N_PARTS];
	size_t lens[N_PARTS], i;
	char at[64];
	int rc;

	fuzz_split(data, size, parts, lens, N_PARTS);
	for (i = 1; i < N_PARTS; i++) {
		if (lens[i])
			fuzz_write(files[i], parts[i], lens[i]);
		else
			fuzz_unlink(files[i]);
	}
	snprintf(at, sizeof(at), "%.*s", (int)lens[0], (const char *)parts[0]);
	memset(&pr, 0, sizeof(pr));
	rc = parse_thresholds(at);
	check_thresholds(at, rc);

	memset(&pr, 0, sizeof(pr));
	memcpy(pr.sysroot, fuzz_root(), strlen(fuzz_root()) + 1);
	find_cgroup();
	fuzz_note("find_cgroup", pr.version ? 0 : -1);
	check_limit();
	return 0;
}
