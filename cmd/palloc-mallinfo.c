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
	      " -j, --json               print JSON\n"
	      "     --prom               print Prometheus text format\n"
	      " -w, --watch <seconds>    a JSON line every SECONDS\n"
	      " -c, --count <n>          with --watch: stop after N samples\n"
	      " -o, --output <file>      write to FILE ('-': standard output)\n"
	      "     --timeout <seconds>  accepted, no effect (nothing waits on the\n"
	      "                            process)\n",
	      stdout);
	cli_usage_end(26, NULL);
}

struct opts {
	struct cli_data d;
	int timeout_ms;
	pid_t pid;
};

static void print_value(FILE *fp, const char *key, const json_t *v)
{
	if (json_is_integer(v))
		fprintf(fp, "%-36s %lld\n", key,
			(long long)json_integer_value(v));
	else if (json_is_string(v))
		fprintf(fp, "%-36s %s\n", key, json_string_value(v));
	else if (json_is_null(v))
		fprintf(fp, "%-36s -\n", key);
	else if (json_is_real(v))
		fprintf(fp, "%-36s %g\n", key, json_real_value(v));
}

/* Print the scalars of object obj as "prefix.key value" lines. */
static void print_object(FILE *fp, const char *prefix, json_t *obj)
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
		if (json_is_object(v))
			print_object(fp, full, v);
		else
			print_value(fp, full, v);
	}
}

/* An integer member as text, "-" when null or absent. */
static const char *num_or_dash(const json_t *obj, const char *key, char *buf,
			       size_t len)
{
	int64_t v = allocinfo_int(obj, key);

	if (v < 0)
		return "-";
	snprintf(buf, len, "%lld", (long long)v);
	return buf;
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

/* The human table: comparable fields, then the specific scalars and, for
 * glibc and jemalloc, one line per arena. */
static void print_table(FILE *fp, json_t *j)
{
	json_t *spec = json_object_get(j, "specific");
	const json_t *arenas, *v;

	fprintf(fp, "%-36s %d\n", "pid", (int)allocinfo_int(j, "pid"));
	print_value(fp, "program", json_object_get(j, "program"));
	print_value(fp, "allocator", json_object_get(j, "allocator"));
	print_value(fp, "allocator_object",
		    json_object_get(j, "allocator_object"));
	print_object(fp, NULL, json_object_get(j, "comparable"));
	/* What only this allocator has, named after it: "glibc.total..." */
	print_object(fp,
		     json_string_value(json_object_get(j, "allocator")) ?: "?",
		     spec);
	arenas = json_object_get(spec, "arenas");
	if (!json_is_array(arenas) || json_array_size(arenas) == 0)
		return;
	if (json_object_get(json_array_get(arenas, 0), "rest_bytes")) {
		fprintf(fp, "\n%6s %16s %12s %12s %12s\n", "ARENA",
			"SYSTEM_BYTES", "FAST_BYTES", "REST_BYTES",
			"FREE_CHUNKS");
		for (size_t i = 0; i < json_array_size(arenas); i++) {
			v = json_array_get(arenas, i);
			fprintf(fp, "%6lld %16lld %12lld %12lld %12lld\n",
				(long long)allocinfo_int(v, "index"),
				(long long)allocinfo_int(
					v, "system_current_bytes"),
				(long long)allocinfo_int(v, "fast_bytes"),
				(long long)allocinfo_int(v, "rest_bytes"),
				free_chunks(v));
		}
	} else if (json_object_get(json_array_get(arenas, 0), "dirty_bytes")) {
		fprintf(fp, "\n%6s %8s %16s %14s %14s\n", "ARENA", "THREADS",
			"ACTIVE_BYTES", "DIRTY_BYTES", "MUZZY_BYTES");
		for (size_t i = 0; i < json_array_size(arenas); i++) {
			char b1[24], b2[24], b3[24], b4[24];

			v = json_array_get(arenas, i);
			fprintf(fp, "%6lld %8s %16s %14s %14s\n",
				(long long)allocinfo_int(v, "index"),
				num_or_dash(v, "thread_count", b1, sizeof(b1)),
				num_or_dash(v, "active_bytes", b2, sizeof(b2)),
				num_or_dash(v, "dirty_bytes", b3, sizeof(b3)),
				num_or_dash(v, "muzzy_bytes", b4, sizeof(b4)));
		}
	}
}

static void list_warn(void *ctx, const char *msg)
{
	(void)ctx;
	msg_warn("%s", msg);
}

static int list_agents(const struct opts *o)
{
	struct allocinfo_agent *a;
	size_t n;
	json_t *top, *arr;
	int rc = 0;

	if (allocinfo_list(&a, &n, o->timeout_ms, true, list_warn, NULL) < 0) {
		msg_error_last("cannot list agents");
		return PALLOC_EXIT_TROUBLE;
	}
	top = json_top_new("palloc-mallinfo-list");
	arr = json_array();
	json_set(top, "processes", arr);
	if (!o->d.json)
		printf("%8s  %-20s %-10s %-10s %16s\n", "PID", "PROGRAM",
		       "STATE", "ALLOCATOR", "ALLOCATED_BYTES");
	for (size_t i = 0; i < n; i++) {
		const json_t *s = a[i].stats;
		const char *prog = a[i].program[0] ? a[i].program : NULL;
		const char *alloc =
			json_string_value(json_object_get(s, "allocator"));
		int64_t bytes = allocinfo_int(s, "allocator_allocated_bytes");
		json_t *e = json_object();
		char eprog[256], ealloc[64], state[32];

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
		if (o->d.json)
			continue;
		/* the agent's words: any bytes its process chose */
		msg_escape(prog ? prog : "?", eprog, sizeof(eprog));
		msg_escape(alloc ? alloc : "?", ealloc, sizeof(ealloc));
		if (a[i].exited)
			snprintf(state, sizeof(state), "exited %d",
				 (int)a[i].exit_status);
		else
			snprintf(state, sizeof(state), "%s", a[i].state);
		if (bytes >= 0)
			printf("%8d  %-20s %-10s %-10s %16lld\n", (int)a[i].pid,
			       eprog, state, ealloc, (long long)bytes);
		else
			printf("%8d  %-20s %-10s %-10s %16s\n", (int)a[i].pid,
			       eprog, state, s ? ealloc : "-", "-");
	}
	/* A write error is reported at exit (msg_init). */
	if (o->d.json &&
	    (json_failed() || json_print(stdout, top, JSON_INDENT(2)) < 0) &&
	    !ferror(stdout)) {
		msg_error_last("cannot print the list");
		rc = PALLOC_EXIT_TROUBLE;
	}
	json_decref(top);
	allocinfo_agents_free(a, n);
	return rc;
}

/*
 * One report of the process of CTX (struct opts) into FP, a cli_sample_fn.
 * Returns 0, 1 when the process ended (not FIRST: --watch is over), or 2
 * after printing why (no agent). A write error is cli_output's and
 * cli_watch's to report.
 */
static int report_once(void *ctx, bool first, FILE *fp)
{
	const struct opts *o = ctx;
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
	if (o->d.prom) {
		struct allocinfo_proc v = {.pid = pid, .mallinfo = j};

		v.stats = allocinfo_get_json(pid, "/debug/palloc/stats",
					     o->timeout_ms);
		v.program = json_string_value(json_object_get(j, "program"));
		if (!v.program)
			v.program = "";
		allocinfo_prom(fp, &v, 1);
		json_decref(v.stats);
	} else if (o->d.json || o->d.watch_ns) {
		json_print(fp, j, o->d.watch_ns ? 0 : JSON_INDENT(2));
	} else {
		print_table(fp, j);
	}
	json_decref(j);
	return PALLOC_EXIT_OK;
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
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:" CLI_DATA_SHORTOPTS "hV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid_arg = optarg;
			break;
		case OPT_TIMEOUT:
			o.timeout_ms = cli_parse_timeout(optarg);
			break;
		default:
			if (!cli_data_opt(&o.d, c, optarg))
				cli_default_option(c, argv, longopts, usage);
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
	if (!o.pid) {
		if (o.d.prom || o.d.watch_ns || o.d.output)
			msg_usage(PALLOC_EXIT_TROUBLE, "missing pid operand");
		return list_agents(&o);
	}
	if (o.d.watch_ns)
		return cli_watch(report_once, &o, o.d.watch_ns, o.d.count);
	return cli_output(o.d.output, report_once, &o);
}
