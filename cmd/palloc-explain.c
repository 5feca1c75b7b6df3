/* SPDX-License-Identifier: MIT */
/* palloc-explain: a process's Rss, or a cgroup's usage, as parts that add up.
 */
#include "common.h"
#include "allocinfo.h"
#include "cli.h"
#include "explain.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>

#include <getopt.h>
#include <limits.h>

/* The columns of the parts. */
enum {
	PCOL_LAYER,
	PCOL_PART,
	PCOL_BYTES,
	PCOL_PERCENT,
	PCOL_CI95,
	PCOL_BASIS,
	PCOL_WHAT,
};

static const struct table_col part_cols[] = {
	{"LAYER", 1, 0, "profile, allocator or kernel"},
	{"PART", 1, 0, "the part's name (JSON: name)"},
	TABLE_NUMBER("BYTES", "its size; - unknown"),
	TABLE_NUMBER("PERCENT", "percent of the total"),
	{"CI95", 1, 0, "95 % interval of a sampled estimate"},
	{"BASIS", 1, 0, "kernel, agent, profile, allocator, reconciled..."},
	{"WHAT", 0.4, SCOLS_FL_TRUNC, "what it is"},
};

static const struct table_spec part_spec = {
	part_cols,
	ARRAY_SIZE(part_cols),
	"LAYER,PART,BYTES,PERCENT,BASIS,WHAT",
};

/* The columns of the allocation sites (--top). */
enum { SCOL_BYTES, SCOL_CI95, SCOL_FUNCTION };

static const struct table_col site_cols[] = {
	TABLE_NUMBER("INUSE", "bytes in use, sampled"),
	{"CI95", 1, 0, "its 95 % interval"},
	{"FUNCTION", 0.5, SCOLS_FL_TRUNC, "the allocating function"},
};

static const struct table_spec site_spec = {
	site_cols,
	ARRAY_SIZE(site_cols),
	"INUSE,FUNCTION",
};

/* The columns of the thread stacks. */
enum { KCOL_START, KCOL_RSS, KCOL_TID, KCOL_THREAD, KCOL_FOUND_BY };

static const struct table_col stack_cols[] = {
	{"START", 1, 0, ""},  TABLE_NUMBER("RSS", ""), TABLE_NUMBER("TID", ""),
	{"THREAD", 1, 0, ""}, {"FOUND_BY", 1, 0, ""},
};

static const struct table_spec stack_spec = {
	stack_cols,
	ARRAY_SIZE(stack_cols),
	"START,RSS,TID,THREAD,FOUND_BY",
};

struct opts {
	struct cli_data d;
	struct explain_opts e;
	pid_t pid;	 /* the process, or with cgroup its cgroup */
	bool cgroup;	 /* explain a cgroup */
	const char *dir; /* a cgroup directory */
	bool have_top;	 /* --top given: with a table option, the sites */
	bool only_table; /* -o, -n or -r: only the table they choose */
};

/* The table the table options apply to. */
static const struct table_spec *chosen_spec(const struct opts *o)
{
	return o->have_top ? &site_spec : &part_spec;
}

/* A size in column ID (-b: bytes), "-" when unknown; may be negative. */
static int size_cell(struct table *t, const struct table_opts *to, int id,
		     bool have, int64_t v)
{
	char buf[CLI_HUMAN_MAX];

	if (!have)
		return table_set(t, id, "-");
	if (to->bytes)
		return table_setf(t, id, "%lld", (long long)v);
	return table_set(t, id, cli_human_signed(buf, sizeof(buf), v));
}

/* An interval "LOW..HIGH" in column ID, empty when there is none. */
static int ci_cell(struct table *t, int id, const struct table_opts *to,
		   bool have, int64_t lo, int64_t hi)
{
	char a[CLI_HUMAN_MAX], b[CLI_HUMAN_MAX];

	if (!have)
		return 0;
	if (to->bytes)
		return table_setf(t, id, "%lld..%lld", (long long)lo,
				  (long long)hi);
	return table_setf(t, id, "%s..%s", cli_human_signed(a, sizeof(a), lo),
			  cli_human_signed(b, sizeof(b), hi));
}

/* What the row functions of the tables read. */
struct rows {
	const struct table_opts *to;
	const struct explain_doc *d;
};

/* Row I of the parts; the one after the last is what is unexplained. */
static int part_row(struct table *t, size_t i, void *ctx)
{
	const struct rows *r = ctx;
	const struct explain_doc *d = r->d;
	const struct explain_part *p;
	int rc = 0;

	if (i == d->nparts) {
		rc |= table_set(t, PCOL_PART, "unexplained");
		rc |= size_cell(t, r->to, PCOL_BYTES, true, d->unexplained);
		rc |= table_setf(t, PCOL_PERCENT, "%.1f%%",
				 d->total ? 100.0 * (double)d->unexplained /
						    (double)d->total
					  : 0.0);
		return rc;
	}
	p = &d->parts[i];
	rc |= table_set(t, PCOL_LAYER, p->layer);
	rc |= table_set(t, PCOL_PART, p->name);
	rc |= size_cell(t, r->to, PCOL_BYTES, p->have, p->bytes);
	if (p->have && d->total)
		rc |= table_setf(t, PCOL_PERCENT, "%.1f%%",
				 100.0 * (double)p->bytes / (double)d->total);
	else
		rc |= table_set(t, PCOL_PERCENT, "-");
	rc |= ci_cell(t, PCOL_CI95, r->to, p->have_ci, p->ci_low, p->ci_high);
	rc |= table_set(t, PCOL_BASIS, p->basis);
	rc |= table_set(t, PCOL_WHAT, p->description);
	return rc;
}

static int print_parts(FILE *fp, const struct table_opts *to,
		       const struct explain_doc *d)
{
	struct table_spec spec = part_spec;

	/* A sampled estimate shows its interval by default. */
	for (size_t i = 0; i < d->nparts; i++)
		if (d->parts[i].have_ci)
			spec.defaults =
				"LAYER,PART,BYTES,PERCENT,CI95,BASIS,WHAT";
	return table_rows(&spec, to, fp, d->nparts + 1, part_row,
			  &(struct rows){to, d});
}

static int site_row(struct table *t, size_t i, void *ctx)
{
	const struct rows *r = ctx;
	const struct explain_site *x = &r->d->sites[i];
	int rc = 0;

	rc |= size_cell(t, r->to, SCOL_BYTES, true, x->inuse);
	rc |= ci_cell(t, SCOL_CI95, r->to, x->have_ci, x->ci_low, x->ci_high);
	rc |= table_set(t, SCOL_FUNCTION, x->function ? x->function : "?");
	return rc;
}

static int print_sites(FILE *fp, const struct table_opts *to,
		       const struct explain_doc *d)
{
	struct table_spec spec = site_spec;

	for (size_t i = 0; i < d->nsites; i++)
		if (d->sites[i].have_ci)
			spec.defaults = "INUSE,CI95,FUNCTION";
	return table_rows(&spec, to, fp, d->nsites, site_row,
			  &(struct rows){to, d});
}

static int stack_row(struct table *t, size_t i, void *ctx)
{
	const struct explain_stack *x =
		&((const struct rows *)ctx)->d->stacks[i];
	int rc = 0;

	rc |= table_setf(t, KCOL_START, "0x%llx", (unsigned long long)x->start);
	rc |= table_size(t, KCOL_RSS, x->rss);
	if (x->have_tid)
		rc |= table_setf(t, KCOL_TID, "%d", (int)x->tid);
	else
		rc |= table_set(t, KCOL_TID, "-");
	rc |= table_set(t, KCOL_THREAD, x->thread);
	rc |= table_set(t, KCOL_FOUND_BY, x->found_by);
	return rc;
}

static int print_stacks(FILE *fp, const struct table_opts *to,
			const struct explain_doc *d)
{
	return table_rows(&stack_spec, to, fp, d->nstacks, stack_row,
			  &(struct rows){to, d});
}

/* The line above the parts: what is explained. */
static void print_head(FILE *fp, const struct table_opts *to,
		       const struct explain_doc *d)
{
	char a[CLI_HUMAN_MAX], b[CLI_HUMAN_MAX];
	bool by = to->bytes;

#define SIZE(buf, v)                                                           \
	(by ? (snprintf(buf, sizeof(buf), "%lld", (long long)(v)), buf)        \
	    : cli_human_signed(buf, sizeof(buf), (int64_t)(v)))
	if (d->process) {
		fprintf(fp, "process %d (%s): Rss %s from %s; ", (int)d->pid,
			d->program[0] ? d->program : "?", SIZE(a, d->total),
			d->rss_source);
		if (d->allocator[0])
			fprintf(fp, "allocator %s, heap in use %s\n",
				d->allocator,
				d->heap_inuse_source ? d->heap_inuse_source
						     : "unknown");
		else
			fprintf(fp, "no agent: heap unknown\n");
		return;
	}
	fprintf(fp, "cgroup %s (v%d): usage %s",
		d->cgroup_path ? d->cgroup_path
		: d->directory ? d->directory
			       : "?",
		d->cgroup_version, d->have_total ? SIZE(a, d->total) : "-");
	fprintf(fp, ", working set %s", d->have_ws ? SIZE(a, d->ws) : "-");
	fprintf(fp, ", limit %s", d->have_limit ? SIZE(a, d->limit) : "max");
	if (d->have_headroom)
		fprintf(fp, " (headroom %s)", SIZE(a, d->headroom));
	if (d->have_high)
		fprintf(fp, ", high %s (headroom %s)", SIZE(a, d->high),
			d->have_high_headroom ? SIZE(b, d->high_headroom)
					      : "-");
#undef SIZE
	fputc('\n', fp);
}

/*
 * The tables for people. With a table option (-o, -n, -r): the one table
 * they choose (chosen_spec). Else a line saying what is explained, the
 * parts, the top allocation sites, the thread stacks and the notes.
 */
static int print_doc(FILE *fp, const struct opts *o,
		     const struct explain_doc *d)
{
	const struct table_opts *to = &o->d.table;

	if (o->only_table)
		return o->have_top ? print_sites(fp, to, d)
				   : print_parts(fp, to, d);
	print_head(fp, to, d);
	if (print_parts(fp, to, d) < 0)
		return -1;
	if (d->nsites) {
		fprintf(fp, "\ntop allocation sites (inuse, sampled):\n");
		if (print_sites(fp, to, d) < 0)
			return -1;
	}
	if (d->nstacks) {
		fprintf(fp, "\nthread stacks:\n");
		if (print_stacks(fp, to, d) < 0)
			return -1;
	}
	if (d->nnotes)
		fputc('\n', fp);
	for (size_t i = 0; i < d->nnotes; i++)
		fprintf(fp, "note: %s\n", d->notes[i]);
	return 0;
}

/* What run_once renders: the options and the document. */
struct model {
	const struct opts *o;
	const struct explain_doc *doc;
};

static json_t *model_json(const void *model)
{
	return explain_json(((const struct model *)model)->doc);
}

static int model_prom(FILE *fp, const void *model)
{
	return explain_prom(fp, ((const struct model *)model)->doc);
}

static int model_table(FILE *fp, const void *model)
{
	const struct model *v = model;

	return print_doc(fp, v->o, v->doc);
}

/*
 * Explain and print to FP. Returns 0, 1 when --watch should stop (the
 * process or cgroup is gone, not FIRST), or 2 after an error message.
 */
static int run_once(void *ctx, bool first, FILE *fp)
{
	static const struct cli_forms forms = {model_json, model_prom,
					       model_table};
	const struct opts *o = ctx;
	struct explain_doc doc;
	int rc;

	if ((o->cgroup ? explain_cgroup(o->pid, o->dir, &o->e, &doc)
		       : explain_process(o->pid, &o->e, &doc)) < 0)
		return cli_sample_failed(first);
	rc = cli_render(fp, &o->d, &forms, &(struct model){o, &doc});
	explain_doc_free(&doc);
	return rc;
}

static PALLOC_NORETURN void usage(void)
{
	fputs("Usage:\n"
	      " palloc-explain [options] [<pid>|<cgroup-dir>]\n"
	      "\n"
	      "Account for a process's resident memory (smaps_rollup Rss) as\n"
	      "heap in use, allocator overhead and free memory, stacks, other\n"
	      "anonymous memory and files, plus what is unexplained; or for a\n"
	      "cgroup's usage. Default: the caller's cgroup.\n"
	      "\n"
	      "Options:\n"
	      " -p, --pid <pid>          explain this process\n"
	      " -C, --cgroup             the cgroup of <pid> (or of the caller)\n"
	      " -t, --top[=<n>]          allocation sites listed (default 5; 0: none)\n"
	      "     --no-agent           do not ask the process's agent\n"
	      "     --timeout <seconds>  accepted, no effect (nothing waits on the\n"
	      "                            process)\n"
	      "     --sysroot <dir>      read DIR/proc and DIR/sys instead\n",
	      stdout);
	cli_data_usage(true, NULL);
	table_help(stdout, "Columns of the parts", &part_spec);
	table_help(stdout, "Columns of the allocation sites", &site_spec);
	cli_usage_end(
		26,
		"With -o, -n or -r only that table prints: the parts, or with --top\n"
		"the allocation sites.\n");
}

int main(int argc, char **argv)
{
	enum { OPT_NO_AGENT = CLI_OPT_NEXT, OPT_TIMEOUT };
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"cgroup", no_argument, NULL, 'C'},
		{"top", optional_argument, NULL, 't'},
		{"no-agent", no_argument, NULL, OPT_NO_AGENT},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		CLI_DATA_LONGOPTS,
		CLI_END_LONGOPTS,
	};
	struct opts o = {
		.e = {.timeout_ms = ALLOCINFO_TIMEOUT_MS, .top = 5},
	};
	uint64_t top = 5;
	int c;

	msg_init(argv[0]);
	cli_data_init(&o.d);
	while ((c = cli_data_getopt(&o.d, argc, argv, "p:Ct::", longopts,
				    usage)) != -1) {
		switch (c) {
		case 'p':
			o.pid = cli_pid(optarg);
			break;
		case 'C':
			o.cgroup = true;
			break;
		case 't':
			cli_top(argc, argv, optarg, true, 1000, &top);
			o.e.top = (size_t)top;
			o.have_top = true;
			break;
		case OPT_NO_AGENT:
			o.e.no_agent = true;
			break;
		case OPT_TIMEOUT:
			o.e.timeout_ms = cli_parse_timeout(optarg);
			break;
		}
	}
	if (cli_pid_or_dir(argc, argv, &o.pid, &o.dir))
		o.cgroup = true;
	cli_data_check(&o.d);
	cli_table_check(&o.d.table, chosen_spec(&o));
	o.only_table =
		o.d.table.columns || o.d.table.noheadings || o.d.table.raw;
	if (!o.pid)
		o.cgroup = true;
	o.e.root = o.d.root;

	return cli_data_run(&o.d, run_once, &o);
}
