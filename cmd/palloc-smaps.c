/* SPDX-License-Identifier: MIT */
/* palloc-smaps: the memory the kernel charges to processes, from smaps. */
#include "common.h"
#include "cli.h"
#include "smaps.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "procfs.h"
#include "prom.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>

#include <getopt.h>
#include <limits.h>

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
		v = smaps_top_maps(p, o->top, &n);
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

/* What run_once renders: one sample of N processes V. */
struct model {
	const struct opts *o;
	const struct proc *v;
	size_t n;
	bool listing;	 /* every process: DENIED counts */
	uint64_t denied; /* processes not readable */
};

static json_t *model_json(const void *model)
{
	const struct model *m = model;
	json_t *top = json_top_new("palloc-smaps"), *arr = json_array();
	size_t i;

	json_set(top, "time_ns", json_u64(cli_now_ns()));
	for (i = 0; i < m->n; i++)
		json_push(arr, proc_json(m->o, &m->v[i]));
	json_set(top, "processes", arr);
	json_set(top, "denied_count", json_u64_or_null(m->listing, m->denied));
	return top;
}

static int model_table(FILE *fp, const void *model)
{
	const struct model *m = model;

	return smaps_print_table(fp, m->o, m->v, m->n);
}

static int model_prom(FILE *fp, const void *model)
{
	const struct model *m = model;
	const struct opts *o = m->o;
	const struct proc *v = m->v;
	size_t n = m->n;
	char name[PROM_NAME_MAX], pid[16];
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

		if (procfs_prom_family(
			    fp, name, "smaps_group_", fld[f],
			    "of the mappings of one kind (and path)") < 0)
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
	static const struct cli_forms forms = {model_json, model_prom,
					       model_table};
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
	rc = cli_render(fp, &o->d, &forms,
			&(struct model){o, v, n, listing, denied});
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
	cli_data_usage(
		true,
		"     --sysroot <dir>      read DIR/proc instead of /proc\n");
	table_help(stdout, "Columns of the process list", &smaps_proc_spec);
	table_help(stdout, "Columns of --maps (groups; with --top, mappings)",
		   &smaps_group_spec);
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
	while ((c = cli_data_getopt(&o.d, argc, argv, "p:mt::", longopts,
				    usage)) != -1) {
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
		}
	}
	for (; optind < argc; optind++)
		pids[npids++] = cli_pid(argv[optind]);
	cli_data_check(&o.d);
	if (o.have_top && !o.maps)
		msg_usage(PALLOC_EXIT_TROUBLE, "--top needs --maps");
	cli_table_check(&o.d.table, smaps_chosen_spec(&o));
	o.only_table =
		o.d.table.columns || o.d.table.noheadings || o.d.table.raw;

	o.listing = npids == 0;
	o.pids = pids;
	o.npids = npids;
	rc = cli_data_run(&o.d, run_once, &o);
	free(pids);
	return rc;
}
