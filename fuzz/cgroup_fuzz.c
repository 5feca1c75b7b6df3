/* SPDX-License-Identifier: MIT */
/* libFuzzer target: cgroup readers (v2, v1, /proc/PID/cgroup, mountinfo). */
#include "common.h"
#include "cgroup.h"
#include "fuzz_util.h"
#include "msg.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define V2 "sys/fs/cgroup/fz/"
#define V1 "sys/fs/cgroup/memory/fz/"

/* Where each "%%"-separated part of the input goes; an empty part is an
 * absent file (empty files are refused by every reader anyway, and an
 * absent one is what older kernels give). */
static const char *const files[] = {
	"proc/1/cgroup",
	"proc/self/mountinfo",
	V2 "memory.stat",
	V2 "memory.events",
	V2 "memory.pressure",
	V2 "memory.current",
	V2 "memory.max",
	V2 "memory.high",
	V2 "memory.peak",
	V2 "memory.swap.current",
	V1 "memory.usage_in_bytes",
	V1 "memory.limit_in_bytes",
	V1 "memory.max_usage_in_bytes",
	V1 "memory.memsw.usage_in_bytes",
	V1 "memory.stat",
	V1 "memory.oom_control",
};

static FILE *devnull;

static void check(const struct cgroup_mem *m)
{
	json_t *obj = json_object();
	uint64_t ws, inactive;
	size_t i;

	if (m->version != 1 && m->version != 2)
		abort();
	for (i = 0; i < m->nstat; i++)
		if (!m->stat[i].key || !*m->stat[i].key)
			abort();
	for (i = 0; i < m->nevents; i++)
		if (!m->events[i].key || !*m->events[i].key)
			abort();
	if (cgroup_working_set(m, &ws, &inactive) && ws > m->usage.bytes)
		abort();
	if (!obj)
		abort();
	cgroup_json(obj, m);
	json_decref(obj);
	if (cgroup_prom(devnull, m) != 0)
		abort();
}

/* Check what a reader answered (RC) and free M: accepted, or refused with
 * a message. */
static void outcome(const char *what, int rc, struct cgroup_mem *m)
{
	fuzz_note(what, rc);
	if (rc != 0) {
		if (!*msg_last())
			abort();
		return;
	}
	check(m);
	cgroup_mem_free(m);
}

/*
 * The cgroup, mountinfo and memory files of a v2 and a v1 cgroup come from
 * the input; the directories are read directly and through
 * cgroup_read_pid() (which finds its directory from the fuzzed
 * /proc/1/cgroup and mountinfo). A reader must accept or refuse with a
 * message, never crash.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char status[] = "Name:\tfz\nState:\tS (sleeping)\n"
				     "VmSize:\t  4 kB\n";
	const uint8_t *part[ARRAY_SIZE(files)];
	size_t len[ARRAY_SIZE(files)], i;
	const char *root = fuzz_root();
	struct cgroup_mem m;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	fuzz_write("proc/1/status", status, sizeof(status) - 1);
	fuzz_split(data, size, part, len, ARRAY_SIZE(files));
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		if (len[i])
			fuzz_write(files[i], part[i], len[i]);
		else
			fuzz_unlink(files[i]);
	}
	/* the directories must exist even when every file is absent */
	fuzz_write(V2 ".keep", "", 0);
	fuzz_write(V1 ".keep", "", 0);

	outcome("v2 dir", cgroup_read_dir(root, "/" V2, &m), &m);
	outcome("v1 dir", cgroup_read_dir(root, "/" V1, &m), &m);
	outcome("pid", cgroup_read_pid(root, 1, &m), &m);
	return 0;
}
