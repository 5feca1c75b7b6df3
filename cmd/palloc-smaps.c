/* SPDX-License-Identifier: MIT */
/* palloc-smaps: the memory the kernel charges to processes, from smaps. */
#include "common.h"
#include "cli.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "procfs.h"
#include "prom.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>

#include <getopt.h>
#include <limits.h>

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

static void proc_free(struct proc *p)
{
	free(p->cmdline);
	procfs_usage_free(&p->u);
	procfs_smaps_free(&p->smaps);
	free(p->groups);
	memset(p, 0, sizeof(*p));
}

static int cmp_group(const void *a, const void *b)
{
	const struct mapping_group *x = a, *y = b;
	uint64_t px = x->u.v[PROCFS_PSS], py = y->u.v[PROCFS_PSS];

	if (px != py)
		return px < py ? 1 : -1;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return strcmp(x->path ? x->path : "", y->path ? y->path : "");
}

/* Group P's mappings by kind, and by path for files, shmem and specials. */
static int group_maps(struct proc *p)
{
	size_t i, j, f;

	p->groups = calloc(p->smaps.n ? p->smaps.n : 1, sizeof(*p->groups));
	if (!p->groups)
		return msg_set("out of memory");
	for (i = 0; i < p->smaps.n; i++) {
		const struct procfs_mapping *m = &p->smaps.maps[i];
		const char *path = NULL;
		struct mapping_group *g = NULL;

		if (m->kind == PROCFS_KIND_FILE ||
		    m->kind == PROCFS_KIND_SHMEM ||
		    m->kind == PROCFS_KIND_SPECIAL)
			path = m->path;
		for (j = 0; j < p->ngroups && !g; j++)
			if (p->groups[j].kind == m->kind &&
			    strcmp(p->groups[j].path ? p->groups[j].path : "",
				   path ? path : "") == 0)
				g = &p->groups[j];
		if (!g) {
			g = &p->groups[p->ngroups++];
			g->kind = m->kind;
			g->path = path;
		}
		g->count++;
		g->size += m->end - m->start;
		for (f = 0; f < PROCFS_NFIELDS; f++)
			g->u.v[f] += m->usage.v[f];
		g->u.have |= m->usage.have;
	}
	qsort(p->groups, p->ngroups, sizeof(*p->groups), cmp_group);
	return 0;
}

/*
 * Read one process. Returns 0, or -1 with msg_last() and errno as
 * procfs.h classifies them.
 */
static int read_proc(const struct opts *o, pid_t pid, struct proc *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	if (procfs_read_rollup(o->d.root, pid, &p->u, &p->summed) < 0 ||
	    procfs_read_status(o->d.root, pid, &p->st) < 0 ||
	    procfs_read_comm(o->d.root, pid, p->comm, sizeof(p->comm)) < 0 ||
	    procfs_read_cmdline(o->d.root, pid, &p->cmdline) < 0 ||
	    (o->maps && (procfs_read_smaps(o->d.root, pid, &p->smaps) < 0 ||
			 group_maps(p) < 0))) {
		int e = errno;

		proc_free(p);
		errno = e;
		return -1;
	}
	return 0;
}

static int cmp_pss(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;
	uint64_t px = x->u.v[PROCFS_PSS], py = y->u.v[PROCFS_PSS];

	if (px != py)
		return px < py ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * Every process under ROOT that we may read, largest PSS first. Processes
 * that vanish, are kernel threads or are another user's are skipped
 * (*DENIED counts the last); a file that does not parse is an error.
 */
static int read_all(const struct opts *o, struct proc **out, size_t *n,
		    uint64_t *denied)
{
	struct proc *v;
	pid_t *pids;
	size_t np, i, cnt = 0;

	*denied = 0;
	if (procfs_list_pids(o->d.root, &pids, &np) < 0)
		return -1;
	v = calloc(np ? np : 1, sizeof(*v));
	if (!v) {
		free(pids);
		return msg_set("out of memory");
	}
	for (i = 0; i < np; i++) {
		if (read_proc(o, pids[i], &v[cnt]) == 0) {
			cnt++;
			continue;
		}
		if (errno == EACCES || errno == EPERM)
			(*denied)++;
		else if (errno != ENOENT && errno != ESRCH)
			goto fail;
	}
	free(pids);
	qsort(v, cnt, sizeof(*v), cmp_pss);
	*out = v;
	*n = cnt;
	return 0;
fail:
	free(pids);
	for (i = 0; i < cnt; i++)
		proc_free(&v[i]);
	free(v);
	return -1;
}

static json_t *usage_fields(json_t *o, const struct procfs_usage *u,
			    uint64_t size)
{
	json_set(o, "size_bytes", json_u64(size));
	json_set(o, "rss_bytes", json_u64(u->v[PROCFS_RSS]));
	json_set(o, "pss_bytes", json_u64(u->v[PROCFS_PSS]));
	json_set(o, "uss_bytes", json_u64(procfs_uss(u)));
	json_set(o, "swap_bytes", json_u64(u->v[PROCFS_SWAP]));
	json_set(o, "anonymous_bytes", json_u64(u->v[PROCFS_ANONYMOUS]));
	return o;
}

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
static const struct procfs_mapping **top_maps(const struct proc *p,
					      uint64_t top, size_t *n)
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

static json_t *proc_json(const struct opts *o, const struct proc *p)
{
	json_t *obj = json_object(), *st = json_object();
	size_t i;

	json_set(obj, "pid", json_integer(p->pid));
	json_set(obj, "command", json_str_or_null(p->comm));
	json_set(obj, "cmdline", json_str_or_null(p->cmdline));
	json_set(obj, "source",
		 json_string(p->summed ? "smaps" : "smaps_rollup"));
	procfs_usage_json(obj, &p->u);
	for (i = 0; i < PROCFS_ST_NFIELDS; i++)
		json_set(st, procfs_status_json_name(i),
			 json_u64_or_null(p->st.have & (1u << i), p->st.v[i]));
	json_set(obj, "status", st);
	if (o->maps) {
		json_t *groups = json_array(), *tops = json_array();
		const struct procfs_mapping **v;
		size_t n = 0;

		for (i = 0; i < p->ngroups; i++) {
			const struct mapping_group *g = &p->groups[i];
			json_t *go = json_object();

			json_set(go, "kind",
				 json_string(procfs_kind_name(g->kind)));
			json_set(go, "path", json_str_or_null(g->path));
			json_set(go, "mapping_count", json_u64(g->count));
			json_push(groups, usage_fields(go, &g->u, g->size));
		}
		json_set(obj, "groups", groups);
		v = top_maps(p, o->top, &n);
		if (!v)
			json_set(obj, "top_mappings", NULL);
		for (i = 0; v && i < n; i++) {
			json_t *mo = json_object();

			json_set(mo, "start", json_hex(v[i]->start));
			json_set(mo, "end", json_hex(v[i]->end));
			json_set(mo, "perms", json_string(v[i]->perms));
			json_set(mo, "offset_bytes", json_u64(v[i]->offset));
			json_set(mo, "kind",
				 json_string(procfs_kind_name(v[i]->kind)));
			json_set(mo, "path", json_str_or_null(v[i]->path));
			json_push(tops, usage_fields(mo, &v[i]->usage,
						     v[i]->end - v[i]->start));
		}
		free(v);
		json_set(obj, "top_mappings", tops);
	}
	return obj;
}

static json_t *build_json(const struct opts *o, const struct proc *v, size_t n,
			  bool listing, uint64_t denied)
{
	json_t *top = json_top_new("palloc-smaps"), *arr = json_array();
	size_t i;

	json_set(top, "time_ns", json_u64(cli_now_ns()));
	for (i = 0; i < n; i++)
		json_push(arr, proc_json(o, &v[i]));
	json_set(top, "processes", arr);
	json_set(top, "denied_count", json_u64_or_null(listing, denied));
	if (json_failed()) {
		json_decref(top);
		return NULL;
	}
	return top;
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

#define SZ(name, help)                                                         \
	{                                                                      \
		name, 1, SCOLS_FL_RIGHT, help                                  \
	}
static const struct table_col proc_cols[] = {
	{"PID", 1, SCOLS_FL_RIGHT, "process ID"},
	SZ("USS", "memory only this process maps (Private_Clean + _Dirty)"),
	{"COMMAND", 0.3, SCOLS_FL_TRUNC, "command line (or name)"},
	{"NAME", 1, SCOLS_FL_TRUNC, "command name (comm)"},
	{"SOURCE", 1, 0, "smaps_rollup, or smaps summed on old kernels"},
	SZ("HWM", "peak resident set size (VmHWM)"),
	/* smaps_rollup's fields, in procfs.h's order */
	SZ("RSS", "resident set size (Rss)"),
	SZ("PSS", "proportional set size (Pss)"),
	SZ("PSS-DIRTY", "Pss_Dirty"),
	SZ("PSS-ANON", "Pss_Anon"),
	SZ("PSS-FILE", "Pss_File"),
	SZ("PSS-SHMEM", "Pss_Shmem"),
	SZ("SHARED-CLEAN", "Shared_Clean"),
	SZ("SHARED-DIRTY", "Shared_Dirty"),
	SZ("PRIVATE-CLEAN", "Private_Clean"),
	SZ("PRIVATE-DIRTY", "Private_Dirty"),
	SZ("REFERENCED", "Referenced"),
	SZ("ANON", "Anonymous"),
	SZ("KSM", "KSM"),
	SZ("LAZYFREE", "LazyFree"),
	SZ("ANON-HUGE", "AnonHugePages"),
	SZ("SHMEM-PMD", "ShmemPmdMapped"),
	SZ("FILE-PMD", "FilePmdMapped"),
	SZ("SHARED-HUGETLB", "Shared_Hugetlb"),
	SZ("PRIVATE-HUGETLB", "Private_Hugetlb"),
	SZ("SWAP", "swapped out (Swap)"),
	SZ("SWAP-PSS", "SwapPss"),
	SZ("LOCKED", "Locked"),
};
_Static_assert(ARRAY_SIZE(proc_cols) == COL_FIELD + PROCFS_NFIELDS,
	       "a column for every smaps field");

static const struct table_spec proc_spec = {
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
	{"PID", 1, SCOLS_FL_RIGHT, "process ID"},
	{"KIND", 1, 0, "heap, stack, anon, shmem, file or special"},
	{"MAPS", 1, SCOLS_FL_RIGHT, "number of mappings (1 with --top)"},
	{"ADDRESS", 1, 0, "start-end (with --top)"},
	{"PERMS", 1, 0, "permissions (with --top)"},
	{"OFFSET", 1, SCOLS_FL_RIGHT, "offset in the file (with --top)"},
	SZ("SIZE", "virtual size"),
	SZ("RSS", "resident set size"),
	SZ("PSS", "proportional set size"),
	SZ("USS", "Private_Clean + Private_Dirty"),
	SZ("SWAP", "swapped out"),
	SZ("ANON", "Anonymous"),
	{"PATH", 0.3, SCOLS_FL_TRUNC, "file, or [heap], [stack]..."},
};

static const struct table_spec group_spec = {
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
static const struct table_spec *chosen_spec(const struct opts *o)
{
	if (!o->maps)
		return &proc_spec;
	return o->have_top ? &top_spec : &group_spec;
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
		m = top_maps(&v[i], top, &nm);
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
		{"F1", 1, 0, ""}, {"V1", 1, SCOLS_FL_RIGHT, ""},
		{"F2", 1, 0, ""}, {"V2", 1, SCOLS_FL_RIGHT, ""},
		{"F3", 1, 0, ""}, {"V3", 1, SCOLS_FL_RIGHT, ""},
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
static int print_table(FILE *fp, const struct opts *o, const struct proc *v,
		       size_t n)
{
	const struct table_opts *to = &o->d.table;
	struct table *t;
	size_t i;

	if (o->only_table && o->maps)
		return print_maps(fp, chosen_spec(o), to, o->top, v, n,
				  o->have_top);
	t = table_new(&proc_spec, to, fp);
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
		if (print_maps(fp, &group_spec, to, o->top, &v[i], 1, false) <
		    0)
			return -1;
		fprintf(fp, "\nPID %d (%s) largest mappings:\n", (int)v[i].pid,
			v[i].comm);
		if (print_maps(fp, &top_spec, to, o->top, &v[i], 1, true) < 0)
			return -1;
	}
	return 0;
}

static int print_prom(FILE *fp, const struct opts *o, const struct proc *v,
		      size_t n)
{
	char name[PROM_NAME_MAX], metric[96], pid[16];
	struct procfs_prom_proc *pv;
	size_t f, i, j;
	int rc;

	pv = calloc(n ? n : 1, sizeof(*pv));
	if (!pv)
		return msg_set("out of memory");
	for (i = 0; i < n; i++) {
		pv[i].pid = v[i].pid;
		pv[i].command = v[i].comm;
		pv[i].u = &v[i].u;
	}
	rc = procfs_prom(fp, pv, n);
	free(pv);
	if (rc < 0)
		return -1;
	if (!o->maps)
		return 0;
	for (f = 0; f < 3; f++) {
		static const enum procfs_field fld[3] = {PROCFS_RSS, PROCFS_PSS,
							 PROCFS_SWAP};
		static const char *const nm[3] = {"rss", "pss", "swap"};

		snprintf(metric, sizeof(metric), "smaps_group_%s_bytes", nm[f]);
		prom_name(name, sizeof(name), metric);
		snprintf(metric, sizeof(metric),
			 "%s of the mappings of one kind (and path), bytes.",
			 procfs_field_kernel_name(fld[f]));
		if (prom_family(fp, name, PROM_GAUGE, metric) < 0)
			return -1;
		for (i = 0; i < n; i++) {
			snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
			for (j = 0; j < v[i].ngroups; j++) {
				const struct mapping_group *g = &v[i].groups[j];
				struct prom_label l[4] = {
					{"pid", pid},
					{"command", v[i].comm},
					{"kind", procfs_kind_name(g->kind)},
					{"path", g->path ? g->path : ""},
				};

				if (prom_sample_u64(fp, name, l, 4,
						    g->u.v[fld[f]]) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/*
 * One sample of O's PIDs (or of every process), printed to FP. After the
 * FIRST sample, PIDs that ended are dropped from O->pids. Returns 0, 1
 * when none of the PIDs is left (nothing printed), or 2 after an error
 * message.
 */
static int run_once(void *ctx, bool first, FILE *fp)
{
	struct opts *o = ctx;
	bool listing = o->listing;
	pid_t *pids = o->pids;
	size_t *npids = &o->npids;
	struct proc *v = NULL;
	uint64_t denied = 0;
	size_t n = 0, i, keep = 0;
	int rc = 0;

	if (listing) {
		if (read_all(o, &v, &n, &denied) < 0) {
			msg_error("%s", msg_last());
			return PALLOC_EXIT_TROUBLE;
		}
	} else {
		v = calloc(*npids ? *npids : 1, sizeof(*v));
		if (!v) {
			msg_error("out of memory");
			return PALLOC_EXIT_TROUBLE;
		}
		for (i = 0; i < *npids; i++) {
			if (read_proc(o, pids[i], &v[n]) == 0) {
				pids[keep++] = pids[i];
				n++;
				continue;
			}
			/* --watch: a watched process that ends is dropped. */
			if (!first && (errno == ENOENT || errno == ESRCH))
				continue;
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
			goto out;
		}
		*npids = keep;
		if (n == 0) {
			rc = CLI_GONE;
			goto out;
		}
	}
	if (o->d.json || o->d.watch_ns) {
		json_t *top = build_json(o, v, n, listing, denied);

		if (!top) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
			goto out;
		}
		/* A write error is reported by cli_output or at exit. */
		if (json_print(fp, top,
			       o->d.watch_ns ? JSON_COMPACT : JSON_INDENT(2)) <
			    0 &&
		    !ferror(fp)) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
		}
		json_decref(top);
	} else if (o->d.prom) {
		if (print_prom(fp, o, v, n) < 0 && !ferror(fp)) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
		}
	} else if (print_table(fp, o, v, n) < 0 && !ferror(fp)) {
		msg_error("%s", msg_last());
		rc = PALLOC_EXIT_TROUBLE;
	}
out:
	for (i = 0; i < n; i++)
		proc_free(&v[i]);
	free(v);
	return rc;
}

static PALLOC_NORETURN void usage(void)
{
	fputs("Usage:\n"
	      " palloc-smaps [options] [<pid>...]\n"
	      "\n"
	      "Show the memory the kernel charges to processes.\n"
	      "Without a PID: every readable process, largest PSS first.\n"
	      "\n"
	      "Options:\n"
	      " -p, --pid <pid>          show this process (may repeat)\n"
	      " -m, --maps               mappings by kind and file\n"
	      " -t, --top[=<n>]          with --maps: the N largest mappings (default 10)\n",
	      stdout);
	fputs(CLI_TABLE_USAGE, stdout);
	fputs(CLI_BYTES_USAGE, stdout);
	fputs(CLI_DATA_USAGE, stdout);
	fputs("     --sysroot <dir>      read DIR/proc instead of /proc\n",
	      stdout);
	fputs(CLI_OUTPUT_FILE_USAGE, stdout);
	table_help(stdout, "Columns of the process list", &proc_spec);
	table_help(stdout, "Columns of --maps (groups; with --top, mappings)",
		   &group_spec);
	cli_usage_end(
		26,
		"With -o, -n or -r only that table prints: the process list, or with\n"
		"--maps the groups by kind and file, or with --maps --top the mappings.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"maps", no_argument, NULL, 'm'},
		{"top", optional_argument, NULL, 't'},
		CLI_DATA_LONGOPTS,
		CLI_END_LONGOPTS,
	};
	struct opts o = {.top = 10};
	pid_t *pids;
	size_t npids = 0;
	int c, rc;

	msg_init(argv[0]);
	cli_data_init(&o.d);
	pids = calloc((size_t)argc + 1, sizeof(*pids));
	if (!pids) {
		msg_error("out of memory");
		return PALLOC_EXIT_TROUBLE;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:mt::" CLI_DATA_SHORTOPTS "hV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pids[npids++] = cli_pid(optarg);
			break;
		case 'm':
			o.maps = true;
			break;
		case 't':
			cli_top(argc, argv, optarg, true, UINT64_MAX, &o.top);
			o.have_top = true;
			break;
		default:
			if (!cli_data_opt(&o.d, c, optarg))
				cli_default_option(c, argv, longopts, usage);
		}
	}
	for (; optind < argc; optind++)
		pids[npids++] = cli_pid(argv[optind]);
	cli_data_check(&o.d);
	if (o.have_top && !o.maps)
		msg_usage(PALLOC_EXIT_TROUBLE, "--top needs --maps");
	cli_table_check(&o.d.table, chosen_spec(&o));
	o.only_table =
		o.d.table.columns || o.d.table.noheadings || o.d.table.raw;

	o.listing = npids == 0;
	o.pids = pids;
	o.npids = npids;
	if (o.d.watch_ns)
		rc = cli_watch(run_once, &o, o.d.watch_ns, o.d.count);
	else
		rc = cli_output(o.d.output, run_once, &o);
	free(pids);
	return rc;
}
