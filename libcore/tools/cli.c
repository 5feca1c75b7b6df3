/* SPDX-License-Identifier: MIT */
/* Shared command-side helpers for palloc-smaps, palloc-cgroup and kin. */
#include "cli.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "outfile.h"

#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int cli_parse_pid(const char *s, pid_t *pid)
{
	uint64_t v;

	if (num_parse_u64(s, false, &v) < 0 || v == 0 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

pid_t cli_pid(const char *arg)
{
	pid_t pid;

	if (cli_parse_pid(arg, &pid) < 0)
		msg_usage(PALLOC_EXIT_TROUBLE, "invalid PID '%s'", arg);
	return pid;
}

bool cli_digits(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s);
}

const char *cli_pid_operand(int argc, char **argv, const char *pid_arg)
{
	if (optind >= argc)
		return pid_arg;
	if (pid_arg)
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--pid and an operand exclude each other");
	if (argc - optind > 1)
		msg_usage(PALLOC_EXIT_TROUBLE, "too many operands");
	return argv[optind++];
}

bool cli_pid_or_dir(int argc, char **argv, pid_t *pid, const char **dir)
{
	static const char given[] = "--pid";
	const char *arg = cli_pid_operand(argc, argv, *pid ? given : NULL);

	if (!arg || arg == given)
		return false;
	if (cli_digits(arg))
		*pid = cli_pid(arg);
	else
		*dir = arg;
	return *dir == arg;
}

void cli_top(int argc, char **argv, const char *arg, bool take, uint64_t max,
	     uint64_t *top)
{
	uint64_t v;

	if (!arg && take && optind < argc && cli_digits(argv[optind]))
		arg = argv[optind++];
	if (!arg)
		return;
	if (num_parse_u64(arg, false, &v) < 0 || v > max)
		msg_usage(PALLOC_EXIT_TROUBLE, "invalid --top '%s'", arg);
	*top = v;
}

int cli_parse_timeout(const char *arg)
{
	uint64_t ns;

	if (num_parse_seconds(arg, &ns) < 0 || ns == 0 ||
	    ns / 1000000 > 86400000)
		msg_usage(PALLOC_EXIT_TROUBLE, "invalid --timeout '%s'", arg);
	return ns / 1000000 ? (int)(ns / 1000000) : 1;
}

void cli_data_init(struct cli_data *d)
{
	memset(d, 0, sizeof(*d));
	d->root = "";
}

bool cli_data_opt(struct cli_data *d, int c, const char *arg)
{
	switch (c) {
	case 'j':
		d->json = true;
		return true;
	case CLI_OPT_PROM:
		d->prom = true;
		return true;
	case 'w':
		if (num_parse_seconds(arg, &d->watch_ns) < 0 ||
		    d->watch_ns == 0)
			msg_usage(PALLOC_EXIT_TROUBLE,
				  "invalid --watch '%s': want seconds above 0",
				  arg);
		return true;
	case 'c':
		if (num_parse_u64(arg, false, &d->count) < 0 || d->count == 0)
			msg_usage(PALLOC_EXIT_TROUBLE,
				  "invalid --count '%s': want a number above 0",
				  arg);
		d->have_count = true;
		return true;
	case CLI_OPT_SYSROOT:
		d->root = arg;
		return true;
	case CLI_OPT_OUTPUT_FILE:
		d->output = arg;
		return true;
	case 'b':
		d->table.bytes = true;
		return true;
	default:
		return cli_table_opt(&d->table, 'o', c, arg);
	}
}

int cli_data_getopt(struct cli_data *d, int argc, char **argv, const char *own,
		    const struct option *longopts, void (*usage)(void))
{
	char shortopts[64];
	int c;

	/* ':' first and opterr 0: the errors are cli_default_option's */
	snprintf(shortopts, sizeof(shortopts), ":%s" CLI_DATA_SHORTOPTS "hV",
		 own);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (cli_data_opt(d, c, optarg))
			continue;
		if (c == 'h' || c == 'V' || c == '?' || c == ':')
			cli_default_option(c, argv, longopts, usage);
		return c;
	}
	return -1;
}

bool cli_table_opt(struct table_opts *t, int val, int c, const char *arg)
{
	if (c == val)
		t->columns = arg;
	else if (c == 'n')
		t->noheadings = true;
	else if (c == 'r')
		t->raw = true;
	else
		return false;
	return true;
}

bool cli_table_given(const struct table_opts *t)
{
	return t->columns || t->noheadings || t->raw || t->bytes;
}

void cli_table_check(const struct table_opts *t, const struct table_spec *spec)
{
	int ids[TABLE_MAX_COLS];
	size_t n;

	if (table_columns(spec, t->columns, ids, &n) < 0) {
		msg_error("%s", msg_last());
		exit(PALLOC_EXIT_TROUBLE);
	}
}

int cli_table_print(struct table *t, FILE *fp)
{
	if (table_print(t) < 0 && !ferror(fp)) {
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	return PALLOC_EXIT_OK;
}

int cli_table_rows(const struct table_spec *spec, const struct table_opts *o,
		   FILE *fp, size_t n, table_row_fn *row, void *ctx)
{
	if (table_rows(spec, o, fp, n, row, ctx) < 0 && !ferror(fp)) {
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	return PALLOC_EXIT_OK;
}

int cli_json_stdout(json_t *top, const char *what)
{
	/* A write error is reported at exit (msg_init). */
	if ((json_failed() || json_print(stdout, top, JSON_INDENT(2)) < 0) &&
	    !ferror(stdout)) {
		msg_error("cannot print %s: %s", what, msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	return PALLOC_EXIT_OK;
}

int cli_sample_failed(bool first)
{
	if (!first && (errno == ENOENT || errno == ESRCH))
		return CLI_GONE;
	msg_error("%s", msg_last());
	return PALLOC_EXIT_TROUBLE;
}

void cli_data_usage(bool bytes, const char *extra)
{
	fputs(CLI_DATA_USAGE CLI_TABLE_USAGE, stdout);
	if (bytes)
		fputs(CLI_BYTES_USAGE, stdout);
	if (extra)
		fputs(extra, stdout);
	fputs(CLI_OUTPUT_FILE_USAGE, stdout);
}

int cli_render(FILE *fp, const struct cli_data *d, const struct cli_forms *f,
	       const void *model)
{
	int rc = 0;

	if (d->json || d->watch_ns) {
		json_t *j = f->json(model);

		if (j && json_failed()) { /* msg_last(): out of memory */
			json_decref(j);
			j = NULL;
		}
		rc = j ? json_print(fp, j,
				    d->watch_ns ? JSON_COMPACT : JSON_INDENT(2))
		       : -1;
		json_decref(j);
	} else if (d->prom) {
		rc = f->prom(fp, model);
	} else {
		rc = f->table(fp, model);
	}
	if (rc < 0 && !ferror(fp)) {
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	return PALLOC_EXIT_OK;
}

const char *cli_top_word(int argc, char **argv)
{
	return optind < argc ? argv[optind] : NULL;
}

void cli_top_operand(int argc, char **argv, const char *word, int need,
		     uint64_t max, uint64_t *top)
{
	struct stat st;
	int i;

	if (!word || argc - optind <= need || !cli_digits(word) ||
	    stat(word, &st) == 0)
		return;
	/* getopt_long moved the words, not the strings: find WORD again. */
	for (i = optind; i < argc && argv[i] != word; i++)
		;
	if (i == argc)
		return;
	cli_top(argc, argv, word, false, max, top);
	for (; i > optind; i--)
		argv[i] = argv[i - 1];
	optind++;
}

void cli_data_check(const struct cli_data *d)
{
	if (d->json && d->prom)
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--json and --prom exclude each other");
	if (d->watch_ns && (d->prom || d->output))
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--watch prints NDJSON to standard output only");
	if (d->have_count && !d->watch_ns)
		msg_usage(PALLOC_EXIT_TROUBLE, "--count needs --watch");
	if (cli_table_given(&d->table) && (d->json || d->prom || d->watch_ns))
		msg_usage(
			PALLOC_EXIT_TROUBLE,
			"--output, --noheadings, --raw and --bytes are for the table");
}

void cli_warn_line(const char *line)
{
	msg_warn("%s", line);
}

uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *cli_human(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	double x = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	x /= 1024;
	while (x >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		x /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", x, units[u]);
	return buf;
}

const char *cli_human_signed(char *buf, size_t size, int64_t v)
{
	char tmp[CLI_HUMAN_MAX];

	/* -(v + 1) + 1: INT64_MIN has no positive twin. */
	cli_human(tmp, sizeof(tmp),
		  v < 0 ? (uint64_t) - (v + 1) + 1 : (uint64_t)v);
	snprintf(buf, size, "%s%s", v < 0 ? "-" : "", tmp);
	return buf;
}

int cli_watch(cli_sample_fn *sample, void *ctx, uint64_t interval_ns,
	      uint64_t count)
{
	struct timespec ts = {(time_t)(interval_ns / 1000000000u),
			      (long)(interval_ns % 1000000000u)};
	uint64_t done = 0;
	int rc;

	for (;;) {
		rc = sample(ctx, done == 0, stdout);
		if (rc == CLI_GONE)
			return PALLOC_EXIT_OK;
		if (fflush(stdout) != 0) {
			/* Reported at exit (msg_init). */
			msg_stdout_failed(errno);
			return PALLOC_EXIT_TROUBLE;
		}
		if (rc || ++done == count)
			return rc;
		/* EINTR: a signal we do not handle ends us anyway. */
		nanosleep(&ts, NULL);
	}
}

int cli_output(const char *path, cli_sample_fn *sample, void *ctx)
{
	struct outfile out;
	int rc;

	bool to_stdout = !path || strcmp(path, "-") == 0;

	if (outfile_open(&out, path) < 0) {
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	rc = sample(ctx, true, out.fp);
	if (rc) {
		outfile_abort(&out);
		return rc;
	}
	if (outfile_commit(&out) < 0) {
		/* stdout's write error is reported at exit (msg_init). */
		if (!to_stdout)
			msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	return PALLOC_EXIT_OK;
}

/*
 * Whether "--NAME=..." (LEN bytes of NAME, maybe abbreviated) is the long
 * option of value VAL that takes no argument: getopt_long answers '?' with
 * optopt = VAL then, as it does with optopt = the letter for an unknown
 * short option.
 */
static const char *no_argument_name(const struct option *longopts,
				    const char *name, size_t len, int val)
{
	for (; longopts && longopts->name; longopts++)
		if (longopts->has_arg == no_argument && longopts->val == val &&
		    strncmp(longopts->name, name, len) == 0)
			return longopts->name;
	return NULL;
}

void cli_bad_option(int code, int c, char **argv, const struct option *longopts)
{
	/*
	 * The element getopt was reading, except after an unknown letter
	 * inside a cluster ("-Zq"), which does not advance optind: optopt
	 * names that one.
	 */
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	bool is_long = strncmp(arg, "--", 2) == 0;
	size_t len = strcspn(arg, "=");
	const char *name;

	if (c == ':' && is_long)
		msg_usage(code, "option '%s' requires an argument", arg);
	if (c == ':')
		msg_usage(code, "option requires an argument -- '%c'", optopt);
	name = is_long && arg[len] == '='
		       ? no_argument_name(longopts, arg + 2, len - 2, optopt)
		       : NULL;
	if (name)
		msg_usage(code, "option '--%s' doesn't allow an argument",
			  name);
	/* Only a long option fails without a letter in optopt. */
	if (optopt <= 0 || optopt > CHAR_MAX)
		msg_usage(code, "unrecognized option '%s'", arg);
	msg_usage(code, "invalid option -- '%c'", optopt);
}

void cli_default_option(int c, char **argv, const struct option *longopts,
			void (*usage)(void))
{
	if (c == 'h')
		usage();
	if (c == 'V')
		msg_version();
	cli_bad_option(PALLOC_EXIT_TROUBLE, c, argv, longopts);
}

void cli_usage_end(int column, const char *notes)
{
	int width = column > 1 ? column - 1 : 0;

	printf("\n %-*sdisplay this help\n", width, "-h, --help");
	printf(" %-*sdisplay version\n", width, "-V, --version");
	if (notes)
		printf("\n%s", notes);
	printf("\nFor more details see %s(1).\n", msg_prog());
	exit(PALLOC_EXIT_OK);
}

int cli_data_run(const struct cli_data *d, cli_sample_fn *sample, void *ctx)
{
	if (d->watch_ns)
		return cli_watch(sample, ctx, d->watch_ns, d->count);
	return cli_output(d->output, sample, ctx);
}
