/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the /proc/PID readers (smaps_rollup, smaps, status...). */
#include "common.h"
#include "fuzz_util.h"
#include "json.h"
#include "msg.h"
#include "procfs.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

/*
 * Whether a reader accepted (RC 0); a refusal must say why and use one of
 * the documented error classes.
 */
static bool accepted(const char *what, int rc)
{
	fuzz_note(what, rc);
	if (rc == 0)
		return true;
	if (!*msg_last())
		abort();
	if (errno != EINVAL && errno != ESRCH && errno != ENOMEM)
		abort();
	return false;
}

static void check_usage(const struct procfs_usage *u)
{
	json_t *obj = json_object();
	struct procfs_prom_proc pp = {1, "fuzz", u};
	size_t i;

	for (i = 0; i < u->nraw; i++)
		if (strlen(u->raw[i].name) >= sizeof(u->raw[i].name))
			abort();
	if (!obj || procfs_usage_json(obj, u) != 0)
		abort();
	json_decref(obj);
	if (procfs_prom(devnull, &pp, 1) != 0)
		abort();
}

/* smaps_rollup as written, or summed from smaps when WANT_SUMMED (the
 * file is then absent): Rss and Pss are there whenever it is accepted. */
static void rollup(const char *root, bool want_summed)
{
	struct procfs_usage u;
	bool summed;

	if (!accepted(want_summed ? "summed smaps" : "smaps_rollup",
		      procfs_read_rollup(root, 1, &u, &summed)))
		return;
	if (summed != want_summed || !procfs_has(&u, PROCFS_RSS) ||
	    !procfs_has(&u, PROCFS_PSS))
		abort();
	check_usage(&u);
	procfs_usage_free(&u);
}

/*
 * The input is split at "%%" lines into smaps_rollup, smaps, status, comm
 * and cmdline of ROOT/proc/1; each reader must parse its file or refuse it
 * with a message, never crash or read out of bounds. smaps_rollup is read
 * twice: as written, then removed so the reader falls back to summing
 * smaps (kernels before 4.14).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = {
		"proc/1/smaps_rollup", "proc/1/smaps",	 "proc/1/status",
		"proc/1/comm",	       "proc/1/cmdline",
	};
	const uint8_t *part[ARRAY_SIZE(files)];
	size_t len[ARRAY_SIZE(files)], i;
	struct procfs_smaps s;
	struct procfs_status st;
	const char *root = fuzz_root();
	char comm[32], *cmdline;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	fuzz_split(data, size, part, len, ARRAY_SIZE(files));
	for (i = 0; i < ARRAY_SIZE(files); i++)
		fuzz_write(files[i], part[i], len[i]);

	rollup(root, false);
	if (accepted("smaps", procfs_read_smaps(root, 1, &s))) {
		if (s.n == 0)
			abort();
		for (i = 0; i < s.n; i++) {
			if (s.maps[i].end < s.maps[i].start ||
			    strlen(s.maps[i].perms) != 4 ||
			    !procfs_kind_name(s.maps[i].kind))
				abort();
			check_usage(&s.maps[i].usage);
		}
		procfs_smaps_free(&s);
	}
	fuzz_unlink("proc/1/smaps_rollup");
	rollup(root, true);
	if (accepted("status", procfs_read_status(root, 1, &st)) &&
	    memchr(st.name, '\0', sizeof(st.name)) == NULL)
		abort();
	if (procfs_read_comm(root, 1, comm, sizeof(comm)) != 0)
		abort();
	if (procfs_read_cmdline(root, 1, &cmdline) != 0)
		abort();
	free(cmdline);
	return 0;
}
