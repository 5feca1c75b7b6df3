/* SPDX-License-Identifier: MIT */
/* palloc-smaps's model (the processes read) and its tables. */
#ifndef PALLOC_SMAPS_H
#define PALLOC_SMAPS_H

#include "common.h"
#include "cli.h"
#include "procfs.h"
#include "table.h"

struct mapping_group {
	enum procfs_kind kind;
	const char *path; /* borrowed from the smaps; NULL if none */
	uint64_t count, size;
	struct procfs_usage u; /* summed; raw unused */
};

struct proc {
	pid_t pid;
	char comm[64];
	char *cmdline;
	bool summed; /* no smaps_rollup: smaps summed */
	struct procfs_usage u;
	struct procfs_status st;
	struct procfs_smaps smaps; /* with --maps */
	struct mapping_group *groups;
	size_t ngroups;
};

struct opts {
	struct cli_data d;
	bool maps;
	bool have_top;	 /* --top given: --maps's table is the mappings' */
	bool only_table; /* -o, -n or -r: only the table they choose */
	uint64_t top;
	bool listing; /* no PID given: every process */
	pid_t *pids;  /* the PIDs given, minus those that ended (--watch) */
	size_t npids;
};

/* The columns of the process list and of --maps's groups, for --help. */
extern const struct table_spec smaps_proc_spec, smaps_group_spec;

/* The table -o, -n and -r choose: the process list, or with --maps the
 * groups, or with --maps --top the mappings. */
const struct table_spec *smaps_chosen_spec(const struct opts *o);

/* The N largest mappings of P by PSS (all when TOP is 0) as pointers into
 * P's smaps, *n of them; free(3) the array. NULL on ENOMEM. */
const struct procfs_mapping **smaps_top_maps(const struct proc *p, uint64_t top,
					     size_t *n);

/* The tables of the N processes of V on FP: with -o, -n or -r only the one
 * smaps_chosen_spec() names, else the process list, each process's rollup
 * and, with --maps, its groups and largest mappings. 0, or -1 with
 * msg_set() (ENOMEM, write error). */
int smaps_print_table(FILE *fp, const struct opts *o, const struct proc *v,
		      size_t n);

#endif /* PALLOC_SMAPS_H */
