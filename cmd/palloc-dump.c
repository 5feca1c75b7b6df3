/* SPDX-License-Identifier: MIT */
/* palloc-dump: heap profiles from live agents or files, as pprof, top, folded
 * or JSON. */
#include "common.h"

#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"
#include "dump-list.h"
#include "folded.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "outfile.h"
#include "pprof.h"
#include "push.h"
#include "report.h"
#include "serve.h"
#include "symbols.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>

#define DEFAULT_TOP 20

struct opts {
	const char *output, *sample_arg, *root, *serve_addr, *allow;
	struct serve_access access;
	struct push_config push;
	bool allocs, stats, want_top, folded, json, symbolize, no_symbolize;
	uint64_t seconds, top;
	struct table_opts table; /* --columns, -n, -r of the tables */
	int timeout_ms;
};

/* --stats: the agent's counters, as JSON or "key value" lines, of the
 * process pid or of the record file path. */
static int dump_stats(pid_t pid, const char *path, const struct opts *o)
{
	json_t *j = pid ? allocinfo_get_json(pid, "/debug/palloc/stats",
					     o->timeout_ms)
			: allocinfo_record_file_stats(path);
	struct outfile of;

	if (!j) {
		if (pid)
			msg_error("cannot reach agent of process '%d': %s",
				  (int)pid, msg_last());
		else
			msg_error("cannot read record '%s': %s", path,
				  msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	if (o->output) {
		if (outfile_open(&of, o->output) < 0) {
			msg_error("%s", msg_last());
			json_decref(j);
			return PALLOC_EXIT_TROUBLE;
		}
		if (json_print(of.fp, j, JSON_INDENT(2)) < 0) {
			outfile_abort(&of);
			msg_error("%s", msg_last());
			json_decref(j);
			return PALLOC_EXIT_TROUBLE;
		}
		if (outfile_commit(&of) < 0) {
			msg_error("%s", msg_last());
			json_decref(j);
			return PALLOC_EXIT_TROUBLE;
		}
	} else if (o->json) {
		json_print(stdout, j, JSON_INDENT(2));
	} else {
		for (void *it = json_object_iter(j); it;
		     it = json_object_iter_next(j, it)) {
			char *s = json_dumps(json_object_iter_value(it),
					     JSON_ENCODE_ANY);
			char key[256];

			/* keys and values are the agent's: escaped */
			printf("%-26s ", msg_escape(json_object_iter_key(it),
						    key, sizeof(key)));
			msg_fputs_escaped(s ? s : "?", stdout);
			putchar('\n');
			free(s);
		}
	}
	json_decref(j);
	return 0;
}

/* Sum of every sample type, for the JSON summary. */
static json_t *totals_json(const struct pprof_profile *p)
{
	json_t *t = json_object();

	for (size_t k = 0; k < p->n_sample_types; k++) {
		char key[128];
		int64_t sum = 0;

		for (size_t i = 0; i < p->n_samples; i++)
			sum += p->samples[i].values[k];
		snprintf(key, sizeof(key), "%s_%s", p->sample_types[k].type,
			 report_unit_suffix(p->sample_types[k].unit));
		json_set(t, key, json_integer(sum));
	}
	return t;
}

static json_t *profile_json(const struct pprof_profile *p, pid_t pid,
			    const char *file, const struct report *r,
			    size_t top)
{
	json_t *j = json_top_new("palloc-dump"), *types = json_array();

	json_set(j, "pid", json_i64_or_null(pid > 0, pid));
	json_set(j, "file", json_str_or_null(file));
	for (size_t k = 0; k < p->n_sample_types; k++) {
		json_t *t = json_object();

		json_set(t, "type", json_string(p->sample_types[k].type));
		json_set(t, "unit", json_string(p->sample_types[k].unit));
		json_push(types, t);
	}
	json_set(j, "sample_types", types);
	json_set(j, "default_sample_type",
		 json_str_or_null(p->default_sample_type[0]
					  ? p->default_sample_type
					  : NULL));
	json_set(j, "period_bytes", json_integer(p->period));
	json_set(j, "time_ns", json_integer(p->time_nanos));
	json_set(j, "duration_ns", json_integer(p->duration_nanos));
	json_set(j, "sample_count", json_integer((json_int_t)p->n_samples));
	json_set(j, "location_count", json_integer((json_int_t)p->n_locations));
	json_set(j, "mapping_count", json_integer((json_int_t)p->n_mappings));
	json_set(j, "totals", totals_json(p));
	json_set(j, "top", report_to_json(r, top));
	return j;
}

/* Write the profile and the requested views. Returns the exit code. */
static int output_profile(struct pprof_profile *p, pid_t pid, const char *file,
			  const struct opts *o)
{
	struct report *r = NULL;
	json_t *j = NULL;
	int idx = -1, rc = PALLOC_EXIT_TROUBLE;

	if (o->want_top || o->json || o->folded) {
		const char *arg = o->sample_arg;

		idx = report_sample_index(p, arg);
		if (idx < 0) {
			msg_error("invalid --sample-index: %s", msg_last());
			return PALLOC_EXIT_TROUBLE;
		}
	}
	if (o->want_top || o->json) {
		r = report_by_function(p, idx);
		if (!r) {
			msg_error("cannot summarize the profile: %s",
				  msg_last());
			return PALLOC_EXIT_TROUBLE;
		}
	}
	if (o->json) {
		j = profile_json(p, pid, file, r, o->want_top ? o->top : 0);
		if (json_failed() || !j) {
			msg_error("cannot build JSON: out of memory");
			goto out;
		}
	}
	/* The file first: a failure leaves nothing half-written anywhere. */
	if (o->output && pprof_write_file(p, o->output) < 0) {
		msg_error("%s", msg_last()); /* "cannot write 'PATH': why" */
		goto out;
	}
	/* A write error on stdout is reported at exit (msg_init). */
	rc = PALLOC_EXIT_OK;
	if (j) {
		if (json_print(stdout, j, JSON_INDENT(2)) < 0)
			rc = PALLOC_EXIT_TROUBLE;
	} else if (o->want_top) {
		if (report_print_top(stdout, r, o->top, false, &o->table) < 0)
			rc = PALLOC_EXIT_TROUBLE;
	}
	if (o->folded && folded_write(stdout, p, idx) < 0)
		rc = PALLOC_EXIT_TROUBLE;
	if (rc && ferror(stdout))
		msg_stdout_failed(errno);
	else if (rc)
		msg_error("%s", msg_last());
out:
	json_decref(j);
	report_free(r);
	return rc;
}

static void symbolize(struct pprof_profile *p, const char *root)
{
	struct symbols_stats st;

	memset(&st, 0, sizeof(st));
	st.warn = dump_warn;
	if (symbols_symbolize(p, root, &st) < 0)
		msg_warn("cannot symbolize: %s", msg_last());
}

static int dump_pid(pid_t pid, const struct opts *o)
{
	char target[128];
	struct pprof_profile *p;
	int timeout = o->timeout_ms;
	int rc;

	if (o->stats)
		return dump_stats(pid, NULL, o);
	snprintf(target, sizeof(target), "/debug/pprof/%s",
		 o->allocs ? "allocs" : "heap");
	if (o->seconds) {
		size_t n = strlen(target);

		snprintf(target + n, sizeof(target) - n, "?seconds=%llu",
			 (unsigned long long)o->seconds);
		/* The first byte comes after the delta's seconds. */
		if (o->seconds * 1000 + (uint64_t)timeout < INT_MAX)
			timeout += (int)(o->seconds * 1000);
	}
	p = allocinfo_get_profile(pid, target, timeout);
	if (!p) {
		msg_error("cannot reach agent of process '%d': %s", (int)pid,
			  msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	/* As for a file: the values leave out what the agent dropped. */
	snprintf(target, sizeof(target), "process %d", (int)pid);
	report_warn_dropped(p, target);
	if (!o->no_symbolize) {
		char root[64];

		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
		symbolize(p, root);
	}
	rc = output_profile(p, pid, NULL, o);
	pprof_free(p);
	return rc;
}

static int dump_file(const char *path, const struct opts *o)
{
	bool rec = allocinfo_is_record_file(path);
	struct pprof_profile *p;
	int rc;

	if (!rec && (o->allocs || o->stats))
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--allocs and --stats need a pid or a record file");
	if (o->stats)
		return dump_stats(0, path, o);
	p = rec ? allocinfo_record_file_profile(path, o->allocs)
		: pprof_read_file(path);
	if (!p && rec) {
		msg_error("cannot read record '%s': %s", path, msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	if (!p) {
		/* "cannot read profile 'PATH': why": the path is named once */
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	/* As palloc-run: the values leave out what the agent dropped. */
	report_warn_dropped(p, path);
	if (o->symbolize && !o->no_symbolize)
		symbolize(p, o->root ? o->root : "");
	rc = output_profile(p, 0, path, o);
	pprof_free(p);
	return rc;
}

/*
 * --serve: serve PIDS (N == 0: every agent of this user) until SIGINT,
 * SIGTERM or SIGHUP, saying "serving URL" on stderr once listening.
 * Returns the exit code.
 */
static int serve_until_signal(const char *addr, const pid_t *pids, size_t n,
			      const struct opts *o)
{
	struct serve_config cfg = {
		.pids = pids,
		.n_pids = n,
		.symbolize = !o->no_symbolize,
		.timeout_ms = o->timeout_ms,
		.access = o->access,
		.warn = cli_warn_line,
	};
	struct serve *s;
	sigset_t set, old;
	int sig;

	/* Block before the server's threads exist, so sigwait gets them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	s = serve_start_config(addr, &cfg);
	if (!s) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		msg_error("cannot serve on '%s': %s", addr, msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	fprintf(stderr, "%s: serving %s/\n", msg_prog(), serve_url(s));
	fflush(stderr);
	sigwait(&set, &sig);
	serve_stop(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return PALLOC_EXIT_OK;
}

static PALLOC_NORETURN void usage(void)
{
	printf("Usage:\n"
	       " %s [options]\n"
	       " %s [options] <pid>|<file>\n"
	       " %s --serve <addr> [<pid>...]\n"
	       " %s --push <kind>=<url> [--push ...] [<pid>...]\n"
	       "\n"
	       "Without an operand, list the processes under palloc you can read,\n"
	       "and the records of those that ended. With a <pid>, read a heap\n"
	       "profile from that process's record and symbolize it; with a <file>,\n"
	       "read a pprof profile or a record.\n"
	       "\n"
	       "Options:\n"
	       " -p, --pid <pid>             the process to fetch from\n"
	       " -a, --allocs                the allocs profile (default sample type\n"
	       "                               alloc_space)\n"
	       " -s, --seconds <n>           the delta over the next <n> seconds\n"
	       "     --stats                 the agent's exact counters instead (a pid\n"
	       "                               or a record file)\n"
	       " -o, --output <file>         write the profile (pprof, gzipped; - for\n"
	       "                               stdout)\n"
	       " -t, --top[=<n>]             print the top <n> functions (default %d;\n"
	       "                               0: all)\n"
	       " -f, --folded                print collapsed stacks for flame graphs\n"
	       " -j, --json                  print a summary and the top functions as JSON\n"
	       "     --sample-index <type>   sample type for --top, --folded, --json\n"
	       "     --symbolize             symbolize a raw profile <file>\n"
	       "     --no-symbolize          keep raw addresses\n"
	       "     --root <dir>            read ELF files below <dir> when symbolizing\n"
	       "                               a <file> (default /)\n"
	       "     --timeout <seconds>     accepted, no effect (nothing waits on\n"
	       "                               the process)\n"
	       "     --serve <addr>          serve the agents' endpoints and /metrics\n"
	       "                               over HTTP on <addr> ([host:]port)\n"
	       "     --allow-users <users>   who else may read there: any, or user names\n"
	       "                               and uids (default: you and root)\n"
	       "     --push <kind>=<url>     push every window to pyroscope, parca or\n"
	       "                               otlp at <url> (repeatable)\n"
	       "     --every <seconds>       the window of --push (default %d)\n"
	       "     --service <name>        --push's service name (default: each\n"
	       "                               executable's name)\n"
	       "     --label <k>=<v>         a label of every --push upload (repeatable)\n"
	       "     --header '<name>: <v>'  an HTTP header of --push (repeatable)\n"
	       "     --columns <list>        the table's columns (the list, --top;\n"
	       "                               '+list' adds to the default)\n"
	       " -n, --noheadings            the table without headings\n"
	       " -r, --raw                   the table raw: no alignment\n",
	       msg_prog(), msg_prog(), msg_prog(), msg_prog(), DEFAULT_TOP,
	       PUSH_DEFAULT_EVERY);
	table_help(stdout, "Columns of the list (no operand)", &dump_list_spec);
	table_help(stdout, "Columns of --top", &report_top_spec);
	cli_usage_end(29, NULL);
}

int main(int argc, char **argv)
{
	enum {
		OPT_STATS = CLI_OPT_NEXT,
		OPT_SAMPLE_INDEX,
		OPT_SYMBOLIZE,
		OPT_NO_SYMBOLIZE,
		OPT_ROOT,
		OPT_TIMEOUT,
		OPT_SERVE,
		OPT_ALLOW_USERS,
		OPT_PUSH,
		OPT_EVERY,
		OPT_SERVICE,
		OPT_LABEL,
		OPT_HEADER,
	};
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"allocs", no_argument, NULL, 'a'},
		{"seconds", required_argument, NULL, 's'},
		{"stats", no_argument, NULL, OPT_STATS},
		{"output", required_argument, NULL, 'o'},
		{"top", optional_argument, NULL, 't'},
		CLI_TABLE_LONGOPTS("columns", CLI_OPT_COLUMNS),
		{"folded", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"sample-index", required_argument, NULL, OPT_SAMPLE_INDEX},
		{"symbolize", no_argument, NULL, OPT_SYMBOLIZE},
		{"no-symbolize", no_argument, NULL, OPT_NO_SYMBOLIZE},
		{"root", required_argument, NULL, OPT_ROOT},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"serve", required_argument, NULL, OPT_SERVE},
		{"allow-users", required_argument, NULL, OPT_ALLOW_USERS},
		{"push", required_argument, NULL, OPT_PUSH},
		{"every", required_argument, NULL, OPT_EVERY},
		{"service", required_argument, NULL, OPT_SERVICE},
		{"label", required_argument, NULL, OPT_LABEL},
		{"header", required_argument, NULL, OPT_HEADER},
		CLI_END_LONGOPTS,
	};
	struct opts o = {.top = DEFAULT_TOP,
			 .timeout_ms = ALLOCINFO_TIMEOUT_MS};
	const char *pid_arg = NULL, *operand = NULL;
	const char *top_word = NULL; /* the word after a bare --top */
	pid_t pid = 0;
	int c, views;

	msg_init(argv[0]);
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;
	while ((c = getopt_long(argc, argv,
				":p:as:o:t::fj" CLI_TABLE_SHORTOPTS "hV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid_arg = optarg;
			break;
		case 'a':
			o.allocs = true;
			break;
		case 's':
			if (num_parse_u64(optarg, false, &o.seconds) < 0 ||
			    o.seconds == 0 || o.seconds > 3600)
				msg_usage(
					PALLOC_EXIT_TROUBLE,
					"invalid --seconds '%s': want 1 to 3600",
					optarg);
			break;
		case OPT_STATS:
			o.stats = true;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 't':
			o.want_top = true;
			/* "--top 5 PID" as well as "--top=5". */
			if (!optarg)
				top_word = cli_top_word(argc, argv);
			cli_top(argc, argv, optarg, false, UINT64_MAX, &o.top);
			break;
		case 'f':
			o.folded = true;
			break;
		case 'j':
			o.json = true;
			break;
		case OPT_SAMPLE_INDEX:
			o.sample_arg = optarg;
			break;
		case OPT_SYMBOLIZE:
			o.symbolize = true;
			break;
		case OPT_NO_SYMBOLIZE:
			o.no_symbolize = true;
			break;
		case OPT_ROOT:
			o.root = optarg;
			break;
		case OPT_TIMEOUT:
			o.timeout_ms = cli_parse_timeout(optarg);
			break;
		case OPT_SERVE:
			o.serve_addr = optarg;
			break;
		case OPT_ALLOW_USERS:
			if (serve_parse_access(optarg, &o.access) < 0)
				msg_usage(PALLOC_EXIT_TROUBLE,
					  "invalid --allow-users '%s': %s",
					  optarg, msg_last());
			o.allow = optarg;
			break;
		case OPT_PUSH:
		case OPT_EVERY:
		case OPT_SERVICE:
		case OPT_LABEL:
		case OPT_HEADER:
			push_cli_option(&o.push, c - OPT_PUSH, optarg);
			break;
		default:
			if (!cli_table_opt(&o.table, CLI_OPT_COLUMNS, c,
					   optarg))
				cli_default_option(c, argv, longopts, usage);
		}
	}
	cli_top_operand(argc, argv, top_word, 1, UINT64_MAX, &o.top);

	if (o.allow && !o.serve_addr)
		msg_usage(PALLOC_EXIT_TROUBLE, "--allow-users needs --serve");
	if (o.push.n_targets || o.push.options) {
		if (o.serve_addr || o.output || o.want_top || o.folded ||
		    o.json || o.stats || o.seconds || o.allocs)
			msg_usage(PALLOC_EXIT_TROUBLE,
				  "--push takes only pids");
		o.push.symbolize = !o.no_symbolize;
		o.push.warn = cli_warn_line;
		return push_main(&o.push, argc - optind, argv + optind);
	}
	if (o.serve_addr) {
		pid_t *pids = NULL;
		int n = argc - optind, rc;

		if (o.output || o.want_top || o.folded || o.json || o.stats)
			msg_usage(PALLOC_EXIT_TROUBLE,
				  "--serve takes only pids");
		if (serve_check_addr(o.serve_addr, &o.access) < 0)
			msg_usage(PALLOC_EXIT_TROUBLE,
				  "cannot serve on '%s': %s", o.serve_addr,
				  msg_last());
		pids = calloc((size_t)n + 1, sizeof(*pids));
		if (!pids) {
			msg_error("out of memory");
			return PALLOC_EXIT_TROUBLE;
		}
		for (int i = 0; i < n; i++)
			pids[i] = cli_pid(argv[optind + i]);
		rc = serve_until_signal(o.serve_addr, pids, (size_t)n, &o);
		free(pids);
		return rc;
	}

	operand = cli_pid_operand(argc, argv, pid_arg);
	if (operand == pid_arg) {
		operand = NULL;
		if (pid_arg)
			pid = cli_pid(pid_arg);
	} else if (cli_digits(operand)) {
		struct stat st;

		/* A number names a process unless only a file has it. */
		pid = cli_pid(operand);
		if (kill(pid, 0) < 0 && errno == ESRCH &&
		    stat(operand, &st) == 0)
			pid = 0;
		else
			operand = NULL;
	}
	cli_table_check(&o.table,
			!pid && !operand ? &dump_list_spec : &report_top_spec);
	views = o.want_top + o.folded + o.json;
	if (views > 1)
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--top, --folded and --json are exclusive");
	if (o.output && strcmp(o.output, "-") == 0 && views)
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "-o - and a text view both write to stdout");
	if (!pid && !operand) {
		if (o.allocs || o.seconds || o.stats || o.output ||
		    o.want_top || o.folded || o.symbolize)
			msg_usage(PALLOC_EXIT_TROUBLE,
				  "missing pid or file operand");
		if (o.json && cli_table_given(&o.table))
			msg_usage(
				PALLOC_EXIT_TROUBLE,
				"--columns, --noheadings and --raw are for the tables");
		return dump_list(&o.table, o.json, o.timeout_ms);
	}
	if (operand && o.seconds)
		msg_usage(PALLOC_EXIT_TROUBLE, "--seconds needs a pid");
	if (o.symbolize && o.no_symbolize)
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--symbolize and --no-symbolize are exclusive");
	if (!o.output && !views && !o.stats) {
		/* On a terminal a table; into a pipe the profile itself. */
		if (pid && !isatty(STDOUT_FILENO) && !cli_table_given(&o.table))
			o.output = "-";
		else
			o.want_top = true;
	}
	if (cli_table_given(&o.table) && !o.want_top)
		msg_usage(
			PALLOC_EXIT_TROUBLE,
			"--columns, --noheadings and --raw are for the tables");
	if (o.allocs && !o.sample_arg && (o.want_top || o.folded || o.json))
		o.sample_arg = "alloc_space";
	/* A FIFO, symlink or device at -o: refused now, not after the work. */
	if (o.output && outfile_check(o.output) < 0) {
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	return pid ? dump_pid(pid, &o) : dump_file(operand, &o);
}
