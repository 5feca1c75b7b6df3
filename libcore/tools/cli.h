/* SPDX-License-Identifier: MIT */
/* What the commands share: options, PIDs, sizes for people, --watch. */
#ifndef PALLOC_CLI_H
#define PALLOC_CLI_H

#include "common.h"
#include "exitcode.h"
#include "table.h"

#include <jansson.h>

#include <getopt.h>

/*
 * For commands only (these print and exit, unlike the rest of libcore):
 * palloc-smaps and palloc-cgroup use most of them, the other commands the
 * option parsing and usage helpers. Not thread-safe where they call
 * msg_usage().
 */

/*
 * The options every data command shares (palloc-smaps, palloc-cgroup,
 * palloc-mallinfo, palloc-explain): -j/--json, --prom, -w/--watch,
 * -c/--count, --sysroot, --output-file, and the table's -o/--output
 * COLUMNS, -n/--noheadings, -r/--raw, -b/--bytes (table.h). Put
 * CLI_DATA_LONGOPTS in the getopt_long table, read the options with
 * cli_data_getopt() (or hand each to cli_data_opt(), with
 * CLI_DATA_SHORTOPTS among the short ones), then call cli_data_check().
 * A command's own long-only options are numbered from CLI_OPT_NEXT, in
 * every command.
 */
enum {
	CLI_OPT_PROM = 0x100, /* above CHAR_MAX: long-only (HACKING.md) */
	CLI_OPT_SYSROOT,
	CLI_OPT_OUTPUT_FILE,
	CLI_OPT_COLUMNS, /* palloc-dump's and palloc-diff's --columns */
	CLI_OPT_NEXT,
};

/* A table, which clang-format would indent as code. */
/* clang-format off */
#define CLI_DATA_LONGOPTS                                                      \
	{ "json", no_argument, NULL, 'j' },                                    \
	{ "prom", no_argument, NULL, CLI_OPT_PROM },                           \
	{ "watch", required_argument, NULL, 'w' },                             \
	{ "count", required_argument, NULL, 'c' },                             \
	{ "sysroot", required_argument, NULL, CLI_OPT_SYSROOT },               \
	{ "output-file", required_argument, NULL, CLI_OPT_OUTPUT_FILE },       \
	{ "bytes", no_argument, NULL, 'b' },                                   \
	CLI_TABLE_LONGOPTS("output", 'o')
/*
 * The table's options: NAME (-o/--output in the data commands,
 * --columns in palloc-dump and palloc-diff, whose -o is a file) with VAL,
 * -n/--noheadings and -r/--raw, for cli_table_opt().
 */
#define CLI_TABLE_LONGOPTS(name, val)                                          \
	{ name, required_argument, NULL, val },                                \
	{ "noheadings", no_argument, NULL, 'n' },                              \
	{ "raw", no_argument, NULL, 'r' }
/* clang-format on */
#define CLI_DATA_SHORTOPTS "jw:c:o:nrb"
#define CLI_TABLE_SHORTOPTS "nr"

/*
 * The end of every command's getopt_long table but palloc-run's: --help
 * and --version, which cli_default_option() answers, then the terminator.
 */
/* clang-format off */
#define CLI_END_LONGOPTS                                                       \
	{ "help", no_argument, NULL, 'h' },                                    \
	{ "version", no_argument, NULL, 'V' },                                 \
	{ NULL, 0, NULL, 0 }
/* clang-format on */

struct cli_data {
	bool json, prom;
	uint64_t watch_ns; /* 0: no --watch */
	uint64_t count;	   /* --count; 0: no limit */
	bool have_count;
	const char *root;	 /* --sysroot, "" by default */
	const char *output;	 /* --output-file, NULL: stdout */
	struct table_opts table; /* -o COLUMNS, -n, -r */
};

/* Initialise D to the defaults. */
void cli_data_init(struct cli_data *d);

/* Take option C (ARG its argument) into D when it is one of the shared
 * ones; exits with a usage error on a bad value. Returns true when C was
 * a shared option. */
bool cli_data_opt(struct cli_data *d, int c, const char *arg);

/*
 * getopt_long(3) for a data command, the shared options taken in: OWN is
 * the command's own short options (getopt's syntax, no leading ':'),
 * LONGOPTS its whole table (CLI_DATA_LONGOPTS, CLI_END_LONGOPTS). Takes
 * each shared option into D (cli_data_opt), answers -h/--help (USAGE),
 * -V/--version and every unknown option or missing argument
 * (cli_default_option: these exit), and returns the next of the
 * command's own options, optarg its argument, or -1 at the end.
 */
int cli_data_getopt(struct cli_data *d, int argc, char **argv, const char *own,
		    const struct option *longopts, void (*usage)(void));

/* The rules between them (--json xor --prom; --watch prints NDJSON to
 * stdout only; --count needs --watch; the table's options only for the
 * table); exits with a usage error. */
void cli_data_check(const struct cli_data *d);

/*
 * Take option C of the table (VAL, the value given to CLI_TABLE_LONGOPTS
 * for the columns, 'n' or 'r'; ARG its argument) into T. Returns true
 * when C was one of them.
 */
bool cli_table_opt(struct table_opts *t, int val, int c, const char *arg);

/*
 * Check T's column list against SPEC: on an unknown column, one line
 * ("palloc-X: unknown column 'x'") and exit 2.
 */
void cli_table_check(const struct table_opts *t, const struct table_spec *spec);

/* Whether T asks for anything but the default table. */
bool cli_table_given(const struct table_opts *t);

/*
 * Print T (table_print) to its stream FP and report a failure other than
 * a write error on FP (which the caller's cli_output or msg_init's check
 * at exit reports). Returns 0, or 2 after a message.
 */
int cli_table_print(struct table *t, FILE *fp);

/*
 * table_rows() to FP, and its failure reported as cli_table_print()
 * does. Returns 0, or 2 after a message.
 */
int cli_table_rows(const struct table_spec *spec, const struct table_opts *o,
		   FILE *fp, size_t n, table_row_fn *row, void *ctx);

/* The lines of usage() for -j, --prom, -w and -c of the data commands. */
#define CLI_DATA_USAGE                                                         \
	" -j, --json               print JSON\n"                               \
	"     --prom               print Prometheus text format\n"             \
	" -w, --watch <seconds>    a JSON line every SECONDS\n"                \
	" -c, --count <n>          with --watch: stop after N samples\n"

/*
 * The JSON document TOP to standard output (indented), a cli_sample_fn's
 * way: a failure other than a write error (reported at exit) is one line
 * "cannot print WHAT: why". Returns 0 or 2.
 */
int cli_json_stdout(json_t *top, const char *what);

/* The table options' lines of a usage(), util-linux's words; with
 * CLI_BYTES_USAGE where sizes are printed for people, and
 * CLI_OUTPUT_FILE_USAGE where -o is the columns. */
#define CLI_TABLE_USAGE                                                                 \
	" -o, --output <list>      the table's columns ('+list' adds to the default)\n" \
	" -n, --noheadings         no column headings\n"                                \
	" -r, --raw                raw table: no alignment, one space between\n"
#define CLI_BYTES_USAGE                                                        \
	" -b, --bytes              sizes in bytes, not 1.5 MiB\n"
#define CLI_OUTPUT_FILE_USAGE                                                  \
	"     --output-file <file> write to FILE ('-': standard output)\n"

/*
 * The option lines of usage() that the data commands share, to standard
 * output in this order: CLI_DATA_USAGE, CLI_TABLE_USAGE, CLI_BYTES_USAGE
 * when BYTES (sizes printed for people), then EXTRA (a command's own
 * lines, or NULL), then CLI_OUTPUT_FILE_USAGE.
 */
void cli_data_usage(bool bytes, const char *extra);

/*
 * The three forms of a data command's report of one model (its own
 * struct). json returns a new reference, or NULL after msg_set() (a tree
 * whose building failed, json_failed(), is not printed either); prom
 * and table return 0, or -1 after msg_set() or a write error on FP.
 */
struct cli_forms {
	json_t *(*json)(const void *model);
	int (*prom)(FILE *fp, const void *model);
	int (*table)(FILE *fp, const void *model);
};

/*
 * Print MODEL to FP in the form D asks for: JSON with --json or --watch
 * (indented; one compact line a sample when watching), Prometheus text
 * with --prom, else the table. A write error on FP is left to whoever
 * closes it (cli_output, or msg_init's check at exit); any other failure
 * is printed as one line. Returns 0, or PALLOC_EXIT_TROUBLE after that
 * line. Not thread-safe (msg_last).
 */
int cli_render(FILE *fp, const struct cli_data *d, const struct cli_forms *f,
	       const void *model);

/* Parse a PID: decimal in 1..INT_MAX. Returns 0, or -1 (no message). */
int cli_parse_pid(const char *s, pid_t *pid);

/* ARG as a PID, or the usage error every command words the same way. */
pid_t cli_pid(const char *arg);

/* Whether S is a non-empty string of decimal digits. */
bool cli_digits(const char *s);

/*
 * The one operand left at argv[optind] (optind moves past it), or PID_ARG
 * (the value of -p/--pid) when there is none; NULL when neither. Exits
 * with a usage error when both are given or more than one operand is.
 */
const char *cli_pid_operand(int argc, char **argv, const char *pid_arg);

/*
 * -t, --top[=<n>] of palloc-smaps, -dump, -diff and -explain: ARG (getopt's
 * optarg, NULL when --top came alone) into *TOP, unless NULL. With TAKE
 * set and no ARG, a following all-digit word is the count ("--top 5").
 * Exits with a usage error on a bad count or one above MAX.
 */
void cli_top(int argc, char **argv, const char *arg, bool take, uint64_t max,
	     uint64_t *top);

/*
 * "--top 5" or a file named 5, the rule of palloc-dump and palloc-diff
 * (getopt_long gives an optional argument only as "--top=5"): in the case
 * for -t with no optarg, keep WORD = cli_top_word(argc, argv), the word
 * after it; once getopt_long is done, cli_top_operand(argc, argv, WORD,
 * NEED, MAX, TOP) makes WORD the count when the command was given more
 * than its NEED operands, WORD is among them, is all digits and names no
 * file; WORD then leaves the operands (optind moves). Anything else is left
 * for the command's "too many operands".
 */
const char *cli_top_word(int argc, char **argv);
void cli_top_operand(int argc, char **argv, const char *word, int need,
		     uint64_t max, uint64_t *top);

/*
 * The one operand of palloc-cgroup and palloc-explain, argv[optind] if
 * any: all digits is a PID (into *pid), anything else a cgroup directory
 * (into *dir). Exits with a usage error on a bad PID, an operand beside
 * --pid (*pid already set), or more than one operand. Returns true when
 * the operand was a directory.
 */
bool cli_pid_or_dir(int argc, char **argv, pid_t *pid, const char **dir);

/*
 * The --timeout SECONDS of the commands that ask an agent (palloc-dump,
 * palloc-mallinfo): ARG as milliseconds, at least 1. Exits with a usage
 * error when ARG is not seconds above 0 or is above a day.
 */
int cli_parse_timeout(const char *arg);

/* "palloc-X: warning: LINE": a warning callback for library code. */
void cli_warn_line(const char *line);

/* Wall-clock time in nanoseconds since the epoch (CLOCK_REALTIME). */
uint64_t cli_now_ns(void);

/*
 * A size for people, the one format every command prints ("512 B",
 * "1.5 MiB": one decimal and KiB, MiB, GiB, TiB or PiB), in BUF; at most
 * CLI_HUMAN_MAX bytes with the NUL. Returns BUF. JSON never uses this:
 * sizes there are integers of bytes. (The --top tables of palloc-dump and
 * palloc-diff print pprof's own units, as `go tool pprof -top` does.)
 */
#define CLI_HUMAN_MAX 24
const char *cli_human(char *buf, size_t size, uint64_t bytes);

/* The same for a signed size ("-1.5 MiB"). */
const char *cli_human_signed(char *buf, size_t size, int64_t v);

/*
 * A command's sampler: read what CTX names and print it to FP. FIRST is
 * true for the first sample of a run. Returns 0, CLI_GONE when what it watches
 * is gone (only after the first sample: then nothing is printed), or 2
 * after printing an error. A failed write to FP is not its business:
 * cli_watch(), cli_output() and msg_init()'s check at exit report it.
 */
typedef int cli_sample_fn(void *ctx, bool first, FILE *fp);
#define CLI_GONE 1 /* a cli_sample_fn's "what it watches is gone" */

/*
 * A cli_sample_fn's answer when reading what it watches failed with errno
 * and msg_set(): CLI_GONE after the FIRST sample when the process or
 * cgroup is gone (ENOENT, ESRCH), else PALLOC_EXIT_TROUBLE after printing
 * msg_last(). Not thread-safe (msg_last).
 */
int cli_sample_failed(bool first);

/*
 * The --watch loop: SAMPLE(CTX, FIRST, stdout) now and then every
 * INTERVAL_NS until COUNT samples were taken (0: no limit) or SAMPLE
 * returns non-zero; 1 (the watched process or cgroup is gone) is the
 * normal end, exit code 0. A failed write to stdout ends it too. Returns
 * the exit code: PALLOC_EXIT_OK or PALLOC_EXIT_TROUBLE.
 */
int cli_watch(cli_sample_fn *sample, void *ctx, uint64_t interval_ns,
	      uint64_t count);

/*
 * One SAMPLE(CTX, true, FP) into PATH (outfile.h: "-" or NULL is stdout; a
 * file appears whole or not at all). Returns the exit code: 0, SAMPLE's
 * when not 0 (the output is dropped), or 2 when PATH cannot be written
 * (reported here; for stdout, by the check at exit).
 */
int cli_output(const char *path, cli_sample_fn *sample, void *ctx);

/*
 * A data command's run as D asks: cli_watch() with --watch, else one
 * sample through cli_output() (--output-file or standard output).
 * Returns their exit code.
 */
int cli_data_run(const struct cli_data *d, cli_sample_fn *sample, void *ctx);

/*
 * Every command's usage error for getopt_long's answer C ('?' or ':'; call
 * getopt_long with opterr = 0 and an optstring starting with ':', since
 * getopt would name the program after argv[0], which may be libtool's
 * path). LONGOPTS is the table given to getopt_long. Prints glibc's
 * wording as "palloc-X: ..." with the hint line and exits with CODE (2;
 * palloc-run's 125).
 */
PALLOC_NORETURN void cli_bad_option(int code, int c, char **argv,
				    const struct option *longopts);

/*
 * The default: of every command's getopt switch but palloc-run's, for
 * what the command does not handle itself: 'h' calls USAGE (which exits
 * 0), 'V' prints the version (msg_version), anything else is a usage error
 * with exit code 2 (cli_bad_option with ARGV and LONGOPTS).
 */
PALLOC_NORETURN void cli_default_option(int c, char **argv,
					const struct option *longopts,
					void (*usage)(void));

/*
 * The end of every command's usage() (util-linux's layout): the -h and -V
 * lines with their descriptions at column COLUMN, then NOTES (a paragraph
 * ending in a newline) unless NULL, then "For more details see
 * palloc-X(1)." on stdout, and exit 0.
 */
PALLOC_NORETURN void cli_usage_end(int column, const char *notes);

#endif /* PALLOC_CLI_H */
