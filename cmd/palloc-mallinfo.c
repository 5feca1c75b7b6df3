/* SPDX-License-Identifier: MIT */
/* palloc-mallinfo: the allocator's own view of a live process, through its
 * agent. */
#include "common.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>

struct opts {
	struct cli_data d;
	int timeout_ms;
	pid_t pid;
	bool only_table; /* -o, -n or -r: the one table they choose */
};

/* The columns of the list of processes (no <pid>). */
enum {
	LCOL_PID,
	LCOL_PROGRAM,
	LCOL_STATE,
	LCOL_ALLOCATOR,
	LCOL_BYTES,
	LCOL_RECORD
};

static const struct table_col list_cols[] = {
	TABLE_NUMBER("PID", "process ID"),
	{"PROGRAM", 1, SCOLS_FL_TRUNC, "program name"},
	{"STATE", 1, 0, "live, exited N or killed"},
	{"ALLOCATOR", 1, 0, "glibc, jemalloc, mimalloc, tcmalloc"},
	TABLE_NUMBER("ALLOCATED_BYTES", "bytes the allocator has handed out"),
	{"RECORD", 0.3, SCOLS_FL_TRUNC, "the process's record file"},
};

static const struct table_spec list_spec = {
	list_cols,
	ARRAY_SIZE(list_cols),
	"PID,PROGRAM,STATE,ALLOCATOR,ALLOCATED_BYTES",
};

/* The columns of the arenas of one process (glibc's or jemalloc's). */
enum {
	ACOL_ARENA,
	ACOL_SYSTEM,
	ACOL_FAST,
	ACOL_REST,
	ACOL_FREE_CHUNKS,
	ACOL_THREADS,
	ACOL_ACTIVE,
	ACOL_DIRTY,
	ACOL_MUZZY,
};

static const struct table_col arena_cols[] = {
	TABLE_NUMBER("ARENA", "arena index"),
	TABLE_NUMBER("SYSTEM_BYTES", "glibc: bytes from the system"),
	TABLE_NUMBER("FAST_BYTES", "glibc: free bytes in fastbins"),
	TABLE_NUMBER("REST_BYTES", "glibc: other free bytes"),
	TABLE_NUMBER("FREE_CHUNKS", "glibc: free chunks"),
	TABLE_NUMBER("THREADS", "jemalloc: threads on the arena"),
	TABLE_NUMBER("ACTIVE_BYTES", "jemalloc: active pages' bytes"),
	TABLE_NUMBER("DIRTY_BYTES", "jemalloc: dirty pages' bytes"),
	TABLE_NUMBER("MUZZY_BYTES", "jemalloc: muzzy pages' bytes"),
};

static const struct table_spec glibc_spec = {
	arena_cols,
	ARRAY_SIZE(arena_cols),
	"ARENA,SYSTEM_BYTES,FAST_BYTES,REST_BYTES,FREE_CHUNKS",
};

static const struct table_spec jemalloc_spec = {
	arena_cols,
	ARRAY_SIZE(arena_cols),
	"ARENA,THREADS,ACTIVE_BYTES,DIRTY_BYTES,MUZZY_BYTES",
};

/* One "key value" row of the field list; a null value is "-". */
static int print_value(struct table *t, const char *key, const json_t *v)
{
	if (!json_is_integer(v) && !json_is_string(v) && !json_is_null(v) &&
	    !json_is_real(v))
		return 0;
	if (table_row(t) < 0 || table_set(t, 0, key) < 0)
		return -1;
	if (json_is_integer(v))
		return table_setf(t, 1, "%lld",
				  (long long)json_integer_value(v));
	if (json_is_string(v))
		return table_set(t, 1, json_string_value(v));
	if (json_is_null(v))
		return table_set(t, 1, "-");
	return table_setf(t, 1, "%g", json_real_value(v));
}

/* The scalars of object obj as "prefix.key value" rows. */
static int print_object(struct table *t, const char *prefix, json_t *obj)
{
	for (void *it = json_object_iter(obj); it;
	     it = json_object_iter_next(obj, it)) {
		const char *key = json_object_iter_key(it);
		json_t *v = json_object_iter_value(it);
		char full[128];

		if (prefix)
			snprintf(full, sizeof(full), "%s.%s", prefix, key);
		else
			snprintf(full, sizeof(full), "%s", key);
		if ((json_is_object(v) ? print_object(t, full, v)
				       : print_value(t, full, v)) < 0)
			return -1;
	}
	return 0;
}

/* An integer member in column ID, "-" when null or absent. */
static int num_or_dash(struct table *t, int id, const json_t *obj,
		       const char *key)
{
	int64_t v = allocinfo_int(obj, key);

	if (v < 0)
		return table_set(t, id, "-");
	return table_setf(t, id, "%lld", (long long)v);
}

/* The free chunks counted over the size classes of one glibc arena. */
static long long free_chunks(const json_t *arena)
{
	const json_t *fc = json_object_get(arena, "free_chunks");
	long long n = 0;

	for (size_t k = 0; k < json_array_size(fc); k++) {
		int64_t c = allocinfo_int(json_array_get(fc, k), "count");

		n += c > 0 ? c : 0;
	}
	return n;
}

/* The arena table of the mallinfo document J, when it has arenas (glibc's
 * or jemalloc's), with TO's columns. */
static int print_arenas(FILE *fp, const struct table_opts *to, json_t *j)
{
	json_t *spec = json_object_get(j, "specific");
	const json_t *arenas = json_object_get(spec, "arenas"), *v;
	const json_t *a0 = json_array_get(arenas, 0);
	struct table *t;
	bool glibc;

	if (!json_is_array(arenas) || json_array_size(arenas) == 0)
		return 0;
	if (!json_object_get(a0, "rest_bytes") &&
	    !json_object_get(a0, "dirty_bytes"))
		return 0;
	glibc = json_object_get(a0, "rest_bytes") != NULL;
	t = table_new(glibc ? &glibc_spec : &jemalloc_spec, to, fp);
	if (!t)
		return -1;
	for (size_t i = 0; i < json_array_size(arenas); i++) {
		v = json_array_get(arenas, i);
		if (table_row(t) < 0 ||
		    num_or_dash(t, ACOL_ARENA, v, "index") < 0 ||
		    num_or_dash(t, ACOL_SYSTEM, v, "system_current_bytes") <
			    0 ||
		    num_or_dash(t, ACOL_FAST, v, "fast_bytes") < 0 ||
		    num_or_dash(t, ACOL_REST, v, "rest_bytes") < 0 ||
		    (glibc ? table_setf(t, ACOL_FREE_CHUNKS, "%lld",
					free_chunks(v))
			   : table_set(t, ACOL_FREE_CHUNKS, "-")) < 0 ||
		    num_or_dash(t, ACOL_THREADS, v, "thread_count") < 0 ||
		    num_or_dash(t, ACOL_ACTIVE, v, "active_bytes") < 0 ||
		    num_or_dash(t, ACOL_DIRTY, v, "dirty_bytes") < 0 ||
		    num_or_dash(t, ACOL_MUZZY, v, "muzzy_bytes") < 0) {
			table_free(t);
			return -1;
		}
	}
	return table_print(t);
}

/*
 * The report for people: comparable fields, then the specific scalars
 * and, for glibc and jemalloc, one row per arena. With a table option
 * (-o, -n, -r): the arenas alone.
 */
static int print_table(FILE *fp, const struct opts *o, json_t *j)
{
	static const struct table_col kv_cols[] = {
		{"FIELD", 1, 0, ""},
		{"VALUE", 0.3, 0, ""},
	};
	static const struct table_spec kv = {kv_cols, 2, "FIELD,VALUE"};
	struct table_opts bare = {.noheadings = true};
	json_t *spec = json_object_get(j, "specific");
	struct table *t;

	if (o->only_table)
		return print_arenas(fp, &o->d.table, j);
	t = table_new(&kv, &bare, fp);
	if (!t)
		return -1;
	if (table_row(t) < 0 || table_set(t, 0, "pid") < 0 ||
	    table_setf(t, 1, "%d", (int)allocinfo_int(j, "pid")) < 0 ||
	    print_value(t, "program", json_object_get(j, "program")) < 0 ||
	    print_value(t, "allocator", json_object_get(j, "allocator")) < 0 ||
	    print_value(t, "allocator_object",
			json_object_get(j, "allocator_object")) < 0 ||
	    print_object(t, NULL, json_object_get(j, "comparable")) < 0 ||
	    /* What only this allocator has, named after it: "glibc.total..." */
	    print_object(t,
			 json_string_value(json_object_get(j, "allocator"))
				 ?: "?",
			 spec) < 0) {
		table_free(t);
		return -1;
	}
	if (table_print(t) < 0)
		return -1;
	fputc('\n', fp);
	return print_arenas(fp, &o->d.table, j);
}

static void list_warn(void *ctx, const char *msg)
{
	(void)ctx;
	msg_warn("%s", msg);
}

/* Row I of the list: agent I of the array CTX, with its stats. */
static int list_row(struct table *t, size_t i, void *ctx)
{
	const struct allocinfo_agent *a =
		(const struct allocinfo_agent *)ctx + i;
	const json_t *s = a->stats;
	const char *prog = a->program[0] ? a->program : NULL;
	const char *alloc = json_string_value(json_object_get(s, "allocator"));
	int64_t bytes = allocinfo_int(s, "allocator_allocated_bytes");

	if (table_setf(t, LCOL_PID, "%d", (int)a->pid) < 0 ||
	    table_set(t, LCOL_PROGRAM, prog ? prog : "?") < 0 ||
	    (a->exited ? table_setf(t, LCOL_STATE, "exited %d",
				    (int)a->exit_status)
		       : table_set(t, LCOL_STATE, a->state)) < 0 ||
	    table_set(t, LCOL_ALLOCATOR,
		      !s      ? "-"
		      : alloc ? alloc
			      : "?") < 0 ||
	    (bytes >= 0 ? table_setf(t, LCOL_BYTES, "%lld", (long long)bytes)
			: table_set(t, LCOL_BYTES, "-")) < 0 ||
	    table_set(t, LCOL_RECORD, a->path[0] ? a->path : "-") < 0)
		return -1;
	return 0;
}

/* The list as palloc-mallinfo --json prints it. */
static json_t *list_json(const struct allocinfo_agent *a, size_t n)
{
	json_t *top = json_top_new("palloc-mallinfo-list"), *arr = json_array();

	json_set(top, "processes", arr);
	for (size_t i = 0; i < n; i++) {
		const json_t *s = a[i].stats;
		const char *prog = a[i].program[0] ? a[i].program : NULL;
		const char *alloc =
			json_string_value(json_object_get(s, "allocator"));
		int64_t bytes = allocinfo_int(s, "allocator_allocated_bytes");
		json_t *e = json_object();

		json_set(e, "pid", json_integer(a[i].pid));
		json_set(e, "program", json_str_or_null(prog));
		json_set(e, "allocator", json_str_or_null(alloc));
		json_set(e, "allocated_bytes",
			 json_i64_or_null(bytes >= 0, bytes));
		json_set(e, "state", json_string(a[i].state));
		json_set(e, "exit_status",
			 json_i64_or_null(a[i].exited, a[i].exit_status));
		json_set(e, "record",
			 json_str_or_null(a[i].path[0] ? a[i].path : NULL));
		json_push(arr, e);
	}
	return top;
}

static int list_agents(const struct opts *o)
{
	struct allocinfo_agent *a;
	size_t n;
	json_t *top;
	int rc = 0;

	if (allocinfo_list(&a, &n, o->timeout_ms, true, list_warn, NULL) < 0) {
		msg_error_last("cannot list agents");
		return PALLOC_EXIT_TROUBLE;
	}
	if (o->d.json) {
		top = list_json(a, n);
		rc = cli_json_stdout(top, "the list");
		json_decref(top);
		allocinfo_agents_free(a, n);
		return rc;
	}
	rc = cli_table_rows(&list_spec, &o->d.table, stdout, n, list_row, a);
	allocinfo_agents_free(a, n);
	return rc;
}

/* What report_once renders: the options and the agent's mallinfo. */
struct model {
	const struct opts *o;
	json_t *mallinfo;
};

static json_t *model_json(const void *model)
{
	return json_incref(((const struct model *)model)->mallinfo);
}

/* The Prometheus text of the mallinfo and the agent's stats beside it. */
static int model_prom(FILE *fp, const void *model)
{
	const struct model *m = model;
	struct allocinfo_proc v = {.pid = m->o->pid, .mallinfo = m->mallinfo};
	int rc;

	v.stats = allocinfo_get_json(v.pid, "/debug/palloc/stats",
				     m->o->timeout_ms);
	v.program = json_string_value(json_object_get(v.mallinfo, "program"));
	if (!v.program)
		v.program = "";
	rc = allocinfo_prom(fp, &v, 1);
	json_decref(v.stats);
	return rc;
}

static int model_table(FILE *fp, const void *model)
{
	const struct model *m = model;

	return print_table(fp, m->o, m->mallinfo);
}

/*
 * One report of the process of CTX (struct opts) into FP, a cli_sample_fn.
 * Returns 0, 1 when the process ended (not FIRST: --watch is over), or 2
 * after printing why (no agent). A write error is cli_output's and
 * cli_watch's to report.
 */
static int report_once(void *ctx, bool first, FILE *fp)
{
	static const struct cli_forms forms = {model_json, model_prom,
					       model_table};
	const struct opts *o = ctx;
	int rc;
	pid_t pid = o->pid;
	json_t *j = allocinfo_get_json(pid, "/debug/palloc/mallinfo",
				       o->timeout_ms);
	if (!j) {
		if (!first && kill(pid, 0) < 0 && errno == ESRCH)
			return CLI_GONE;
		msg_error("cannot reach agent of process '%d': %s", (int)pid,
			  msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	rc = cli_render(fp, &o->d, &forms, &(struct model){o, j});
	json_decref(j);
	return rc;
}

static PALLOC_NORETURN void usage(void)
{
	fputs("Usage:\n"
	      " palloc-mallinfo [options] [<pid>]\n"
	      "\n"
	      "Show the allocator's state (glibc, jemalloc, mimalloc, tcmalloc) of a\n"
	      "process running the palloc agent; without <pid>, list those processes\n"
	      "with their allocator.\n"
	      "\n"
	      "Options:\n"
	      " -p, --pid <pid>          the process\n"
	      "     --timeout <seconds>  accepted, no effect (nothing waits on the\n"
	      "                            process)\n",
	      stdout);
	cli_data_usage(false, NULL);
	table_help(stdout, "Columns of the list (no <pid>)", &list_spec);
	table_help(stdout, "Columns of a <pid>'s arenas", &glibc_spec);
	cli_usage_end(
		26,
		"With <pid>, -o, -n or -r print the arenas' table alone.\n");
}

int main(int argc, char **argv)
{
	enum { OPT_TIMEOUT = CLI_OPT_NEXT };
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		CLI_DATA_LONGOPTS,
		CLI_END_LONGOPTS,
	};
	struct opts o = {.timeout_ms = ALLOCINFO_TIMEOUT_MS};
	const char *pid_arg = NULL;
	int c;

	msg_init(argv[0]);
	cli_data_init(&o.d);
	signal(SIGPIPE, SIG_IGN);
	while ((c = cli_data_getopt(&o.d, argc, argv, "p:", longopts, usage)) !=
	       -1) {
		switch (c) {
		case 'p':
			pid_arg = optarg;
			break;
		case OPT_TIMEOUT:
			o.timeout_ms = cli_parse_timeout(optarg);
			break;
		}
	}
	pid_arg = cli_pid_operand(argc, argv, pid_arg);
	if (pid_arg)
		o.pid = cli_pid(pid_arg);
	cli_data_check(&o.d);
	/* Everything comes from the agent: there is no tree to read. */
	if (o.d.root[0])
		msg_usage(
			PALLOC_EXIT_TROUBLE,
			"--sysroot: palloc-mallinfo asks the agent, it reads no /proc");
	if (o.d.table.bytes)
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--bytes: palloc-mallinfo prints bytes already");
	o.only_table =
		o.d.table.columns || o.d.table.noheadings || o.d.table.raw;
	/* The arenas' columns are glibc's and jemalloc's together. */
	cli_table_check(&o.d.table, o.pid ? &glibc_spec : &list_spec);
	if (!o.pid) {
		if (o.d.prom || o.d.watch_ns || o.d.output)
			msg_usage(PALLOC_EXIT_TROUBLE, "missing pid operand");
		return list_agents(&o);
	}
	return cli_data_run(&o.d, report_once, &o);
}
