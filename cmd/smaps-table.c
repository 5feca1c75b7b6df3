/* SPDX-License-Identifier: MIT */
/* palloc-smaps's tables for people: the process list, one process's
 * rollup, its mappings by kind and file, its largest mappings. */
#include "common.h"
#include "msg.h"
#include "smaps.h"

#include <libsmartcols/libsmartcols.h>

static int cmp_map_pss(const void *a, const void *b)
{
	const struct procfs_mapping *x =
		*(const struct procfs_mapping *const *)a;
	const struct procfs_mapping *y =
		*(const struct procfs_mapping *const *)b;
	uint64_t px = x->usage.v[PROCFS_PSS], py = y->usage.v[PROCFS_PSS];

	if (px != py)
		return px < py ? 1 : -1;
	return (x->start > y->start) - (x->start < y->start);
}

/* The N largest mappings of P by PSS (all when TOP is 0), as pointers. */
const struct procfs_mapping **smaps_top_maps(const struct proc *p, uint64_t top,
					     size_t *n)
{
	const struct procfs_mapping **v;
	size_t i;

	v = calloc(p->smaps.n ? p->smaps.n : 1, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < p->smaps.n; i++)
		v[i] = &p->smaps.maps[i];
	qsort(v, p->smaps.n, sizeof(*v), cmp_map_pss);
	*n = top && top < p->smaps.n ? top : p->smaps.n;
	return v;
}

/* The columns of the process list: the first ones, then every smaps
 * field in procfs.h's order (COL_FIELD + field). */
enum {
	COL_PID,
	COL_USS,
	COL_COMMAND,
	COL_NAME,
	COL_SOURCE,
	COL_HWM,
	COL_FIELD,
};

static const struct table_col proc_cols[] = {
	TABLE_NUMBER("PID", "process ID"),
	TABLE_NUMBER("USS",
		     "memory only this process maps (Private_Clean + _Dirty)"),
	{"COMMAND", 0.3, SCOLS_FL_TRUNC, "command line (or name)"},
	{"NAME", 1, SCOLS_FL_TRUNC, "command name (comm)"},
	{"SOURCE", 1, 0, "smaps_rollup, or smaps summed on old kernels"},
	TABLE_NUMBER("HWM", "peak resident set size (VmHWM)"),
	/* smaps_rollup's fields, in procfs.h's order */
	TABLE_NUMBER("RSS", "resident set size (Rss)"),
	TABLE_NUMBER("PSS", "proportional set size (Pss)"),
	TABLE_NUMBER("PSS-DIRTY", "Pss_Dirty"),
	TABLE_NUMBER("PSS-ANON", "Pss_Anon"),
	TABLE_NUMBER("PSS-FILE", "Pss_File"),
	TABLE_NUMBER("PSS-SHMEM", "Pss_Shmem"),
	TABLE_NUMBER("SHARED-CLEAN", "Shared_Clean"),
	TABLE_NUMBER("SHARED-DIRTY", "Shared_Dirty"),
	TABLE_NUMBER("PRIVATE-CLEAN", "Private_Clean"),
	TABLE_NUMBER("PRIVATE-DIRTY", "Private_Dirty"),
	TABLE_NUMBER("REFERENCED", "Referenced"),
	TABLE_NUMBER("ANON", "Anonymous"),
	TABLE_NUMBER("KSM", "KSM"),
	TABLE_NUMBER("LAZYFREE", "LazyFree"),
	TABLE_NUMBER("ANON-HUGE", "AnonHugePages"),
	TABLE_NUMBER("SHMEM-PMD", "ShmemPmdMapped"),
	TABLE_NUMBER("FILE-PMD", "FilePmdMapped"),
	TABLE_NUMBER("SHARED-HUGETLB", "Shared_Hugetlb"),
	TABLE_NUMBER("PRIVATE-HUGETLB", "Private_Hugetlb"),
	TABLE_NUMBER("SWAP", "swapped out (Swap)"),
	TABLE_NUMBER("SWAP-PSS", "SwapPss"),
	TABLE_NUMBER("LOCKED", "Locked"),
};
_Static_assert(ARRAY_SIZE(proc_cols) == COL_FIELD + PROCFS_NFIELDS,
	       "a column for every smaps field");

const struct table_spec smaps_proc_spec = {
	proc_cols,
	ARRAY_SIZE(proc_cols),
	"PID,USS,PSS,RSS,SWAP,COMMAND",
};

/* The columns of --maps: a group of mappings (by kind and file) or, with
 * --top, one mapping. */
enum {
	MCOL_PID,
	MCOL_KIND,
	MCOL_MAPS,
	MCOL_ADDRESS,
	MCOL_PERMS,
	MCOL_OFFSET,
	MCOL_SIZE,
	MCOL_RSS,
	MCOL_PSS,
	MCOL_USS,
	MCOL_SWAP,
	MCOL_ANON,
	MCOL_PATH,
};

static const struct table_col map_cols[] = {
	TABLE_NUMBER("PID", "process ID"),
	{"KIND", 1, 0, "heap, stack, anon, shmem, file or special"},
	TABLE_NUMBER("MAPS", "number of mappings (1 with --top)"),
	{"ADDRESS", 1, 0, "start-end (with --top)"},
	{"PERMS", 1, 0, "permissions (with --top)"},
	TABLE_NUMBER("OFFSET", "offset in the file (with --top)"),
	TABLE_NUMBER("SIZE", "virtual size"),
	TABLE_NUMBER("RSS", "resident set size"),
	TABLE_NUMBER("PSS", "proportional set size"),
	TABLE_NUMBER("USS", "Private_Clean + Private_Dirty"),
	TABLE_NUMBER("SWAP", "swapped out"),
	TABLE_NUMBER("ANON", "Anonymous"),
	{"PATH", 0.3, SCOLS_FL_TRUNC, "file, or [heap], [stack]..."},
};

const struct table_spec smaps_group_spec = {
	map_cols,
	ARRAY_SIZE(map_cols),
	"KIND,MAPS,SIZE,RSS,PSS,SWAP,PATH",
};

static const struct table_spec top_spec = {
	map_cols,
	ARRAY_SIZE(map_cols),
	"ADDRESS,PERMS,KIND,RSS,PSS,SWAP,PATH",
};

/* The table the table options (-o, -n, -r) apply to. */
const struct table_spec *smaps_chosen_spec(const struct opts *o)
{
	if (!o->maps)
		return &smaps_proc_spec;
	return o->have_top ? &top_spec : &smaps_group_spec;
}

/* One row of the process list. */
static int proc_row(struct table *t, const struct proc *p)
{
	size_t f;

	if (table_row(t) < 0 || table_setf(t, COL_PID, "%d", (int)p->pid) < 0 ||
	    table_size(t, COL_USS, procfs_uss(&p->u)) < 0 ||
	    table_set(t, COL_COMMAND, p->cmdline ? p->cmdline : p->comm) < 0 ||
	    table_set(t, COL_NAME, p->comm) < 0 ||
	    table_set(t, COL_SOURCE, p->summed ? "smaps" : "smaps_rollup") < 0)
		return -1;
	if (p->st.have & (1u << PROCFS_ST_VM_HWM) &&
	    table_size(t, COL_HWM, p->st.v[PROCFS_ST_VM_HWM]) < 0)
		return -1;
	for (f = 0; f < PROCFS_NFIELDS; f++)
		if ((procfs_has(&p->u, f) || f == PROCFS_SWAP) &&
		    table_size(t, COL_FIELD + (int)f, p->u.v[f]) < 0)
			return -1;
	return 0;
}

/* One row of --maps: the cells a group and a mapping share. */
static int map_row(struct table *t, const struct proc *p, enum procfs_kind kind,
		   const char *path, uint64_t count, uint64_t size,
		   const struct procfs_usage *u)
{
	if (table_row(t) < 0 ||
	    table_setf(t, MCOL_PID, "%d", (int)p->pid) < 0 ||
	    table_set(t, MCOL_KIND, procfs_kind_name(kind)) < 0 ||
	    table_setf(t, MCOL_MAPS, "%llu", (unsigned long long)count) < 0 ||
	    table_size(t, MCOL_SIZE, size) < 0 ||
	    table_size(t, MCOL_RSS, u->v[PROCFS_RSS]) < 0 ||
	    table_size(t, MCOL_PSS, u->v[PROCFS_PSS]) < 0 ||
	    table_size(t, MCOL_USS, procfs_uss(u)) < 0 ||
	    table_size(t, MCOL_SWAP, u->v[PROCFS_SWAP]) < 0 ||
	    table_size(t, MCOL_ANON, u->v[PROCFS_ANONYMOUS]) < 0 ||
	    table_set(t, MCOL_PATH, path) < 0)
		return -1;
	return 0;
}

/* A row of the mapping M, with its address, permissions and offset. */
static int mapping_row(struct table *t, const struct proc *p,
		       const struct procfs_mapping *m)
{
	if (map_row(t, p, m->kind, m->path, 1, m->end - m->start, &m->usage) <
		    0 ||
	    table_setf(t, MCOL_ADDRESS, "%llx-%llx",
		       (unsigned long long)m->start,
		       (unsigned long long)m->end) < 0 ||
	    table_set(t, MCOL_PERMS, m->perms) < 0 ||
	    table_setf(t, MCOL_OFFSET, "%llx", (unsigned long long)m->offset) <
		    0)
		return -1;
	return 0;
}

/* --maps of the processes V[0..N) as one table of SPEC, with O's table
 * options: the groups, or with TOP the largest mappings of each. */
static int print_maps(FILE *fp, const struct table_spec *spec,
		      const struct table_opts *to, uint64_t top,
		      const struct proc *v, size_t n, bool tops)
{
	struct table *t = table_new(spec, to, fp);
	size_t i, j;

	if (!t)
		return -1;
	for (i = 0; i < n; i++) {
		const struct procfs_mapping **m;
		size_t nm = 0;

		for (j = 0; !tops && j < v[i].ngroups; j++)
			if (map_row(t, &v[i], v[i].groups[j].kind,
				    v[i].groups[j].path, v[i].groups[j].count,
				    v[i].groups[j].size, &v[i].groups[j].u) < 0)
				goto fail;
		if (!tops)
			continue;
		m = smaps_top_maps(&v[i], top, &nm);
		if (!m) {
			msg_set("out of memory");
			goto fail;
		}
		for (j = 0; j < nm; j++)
			if (mapping_row(t, &v[i], m[j]) < 0) {
				free(m);
				goto fail;
			}
		free(m);
	}
	return table_print(t);
fail:
	table_free(t);
	return -1;
}

/* With PIDs and no table option: every rollup field the kernel printed,
 * three to a line, then the peak RSS from status. */
static int print_rollup(FILE *fp, const struct table_opts *to,
			const struct proc *p)
{
	static const struct table_col cols[] = {
		{"F1", 1, 0, ""}, TABLE_NUMBER("V1", ""),
		{"F2", 1, 0, ""}, TABLE_NUMBER("V2", ""),
		{"F3", 1, 0, ""}, TABLE_NUMBER("V3", ""),
	};
	static const struct table_spec spec = {cols, ARRAY_SIZE(cols),
					       "F1,V1,F2,V2,F3,V3"};
	struct table_opts ro = {.noheadings = true, .bytes = to->bytes};
	struct table *t;
	size_t f, col = 0;

	fprintf(fp, "\nPID %d (%s) from %s:\n", (int)p->pid, p->comm,
		p->summed ? "smaps" : "smaps_rollup");
	t = table_new(&spec, &ro, fp);
	if (!t)
		return -1;
	for (f = 0; f < PROCFS_NFIELDS; f++) {
		if (!procfs_has(&p->u, f))
			continue;
		if ((col == 0 && table_row(t) < 0) ||
		    table_set(t, (int)col, procfs_field_kernel_name(f)) < 0 ||
		    table_size(t, (int)col + 1, p->u.v[f]) < 0)
			goto fail;
		col = (col + 2) % 6;
	}
	if (p->st.have & (1u << PROCFS_ST_VM_HWM) &&
	    (table_row(t) < 0 || table_set(t, 0, "VmHWM (peak)") < 0 ||
	     table_size(t, 1, p->st.v[PROCFS_ST_VM_HWM]) < 0))
		goto fail;
	return table_print(t);
fail:
	table_free(t);
	return -1;
}

/*
 * The tables for people. With a table option (-o, -n, -r): the one table
 * they choose (chosen_spec), else the process list, each process's rollup
 * when PIDs were given, and with --maps each one's groups and largest
 * mappings, titled.
 */
int smaps_print_table(FILE *fp, const struct opts *o, const struct proc *v,
		      size_t n)
{
	const struct table_opts *to = &o->d.table;
	struct table *t;
	size_t i;

	if (o->only_table && o->maps)
		return print_maps(fp, smaps_chosen_spec(o), to, o->top, v, n,
				  o->have_top);
	t = table_new(&smaps_proc_spec, to, fp);
	if (!t)
		return -1;
	for (i = 0; i < n; i++)
		if (proc_row(t, &v[i]) < 0) {
			table_free(t);
			return -1;
		}
	if (table_print(t) < 0)
		return -1;
	if (o->only_table)
		return 0;
	for (i = 0; i < n && !o->listing; i++)
		if (print_rollup(fp, to, &v[i]) < 0)
			return -1;
	for (i = 0; o->maps && i < n; i++) {
		fprintf(fp, "\nPID %d (%s) by kind and file:\n", (int)v[i].pid,
			v[i].comm);
		if (print_maps(fp, &smaps_group_spec, to, o->top, &v[i], 1,
			       false) < 0)
			return -1;
		fprintf(fp, "\nPID %d (%s) largest mappings:\n", (int)v[i].pid,
			v[i].comm);
		if (print_maps(fp, &top_spec, to, o->top, &v[i], 1, true) < 0)
			return -1;
	}
	return 0;
}
