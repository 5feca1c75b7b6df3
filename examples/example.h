/* SPDX-License-Identifier: MIT */
/* Truth bookkeeping shared by the examples: what each site allocated. */
#ifndef PALLOC_EXAMPLE_H
#define PALLOC_EXAMPLE_H

#include "common.h"

#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

/*
 * Each example counts, beside every allocation it makes, what a heap
 * profiler must report for the function that made it, with palloc's
 * conventions (palloc(7)): requested bytes; calloc(n, s) is one object of
 * n*s bytes; realloc(p, n) is a free of p's block and a new allocation of
 * n bytes at the realloc call site; a block freed elsewhere still belongs
 * to the function that allocated it.
 *
 * The truth is written as text lines, one per site, after a '#' header:
 *
 *   # pid site alloc_objects alloc_space inuse_objects inuse_space
 *   1234 keep_medium 4000 16384000 4000 16384000
 *
 * site is a function name, or thread=NAME for per-thread totals. The file
 * (not stderr) also has, per site and distinct size, a comment line
 *
 *   #size 1234 keep_medium 4096 4000 4000
 *
 * (pid, site, size, allocations of that size, of which live at the end),
 * from which a test derives the variance of the sampled estimates. Output
 * goes through snprintf and write(2) only: stdio's buffers would be heap
 * allocations of their own (libc's, which the tests ignore, but they
 * should not change the numbers being printed).
 */
#define EX_SIZES 24

struct ex_size {
	uint64_t size;
	uint64_t allocs; /* allocations of this size */
	uint64_t live;	 /* of which still live */
};

struct ex_site {
	const char *name;
	uint64_t alloc_objects;
	uint64_t alloc_space;
	uint64_t inuse_objects;
	uint64_t inuse_space;
	/* the distinct sizes, for the sampling variance (t/3051) */
	struct ex_size sizes[EX_SIZES];
	unsigned n_sizes;
};

/*
 * A site function: never inlined, never cloned (a GCC clone is named
 * f.constprop.0 or f.isra.0 in the symbol table, which would not match
 * the truth's name).
 */
#if defined(__clang__)
#define EX_SITE __attribute__((noinline))
#else
#define EX_SITE __attribute__((noipa))
#endif

static const char ex_header[] =
	"# pid site alloc_objects alloc_space inuse_objects inuse_space\n";

/* Every pointer an example keeps goes here, so the compiler cannot prove
 * an allocation unused and drop it (GCC removes malloc/free pairs). */
static void *volatile ex_sink;

static inline void *ex_keep(void *p)
{
	ex_sink = p;
	if (p != NULL)
		*(volatile char *)p = 1;
	return p;
}

static inline struct ex_size *ex_size_of(struct ex_site *s, size_t size)
{
	for (unsigned i = 0; i < s->n_sizes; i++)
		if (s->sizes[i].size == size)
			return &s->sizes[i];
	if (s->n_sizes == EX_SIZES)
		abort(); /* a bug in the example: raise EX_SIZES */
	s->sizes[s->n_sizes].size = size;
	return &s->sizes[s->n_sizes++];
}

/* Record an allocation of size bytes by site s. */
static inline void ex_alloc(struct ex_site *s, size_t size)
{
	struct ex_size *z = ex_size_of(s, size);

	s->alloc_objects++;
	s->alloc_space += size;
	s->inuse_objects++;
	s->inuse_space += size;
	z->allocs++;
	z->live++;
}

/* Record the free of a block of size bytes that site s allocated. */
static inline void ex_free(struct ex_site *s, size_t size)
{
	s->inuse_objects--;
	s->inuse_space -= size;
	ex_size_of(s, size)->live--;
}

/* Exit with a message when an allocation fails: the truth would be off. */
static inline void ex_check(const void *p, const char *what)
{
	char line[160];
	int n;

	if (p != NULL)
		return;
	n = snprintf(line, sizeof(line), "example: %s failed\n", what);
	if (n > 0 && write(2, line, (size_t)n) < 0)
		_exit(3);
	_exit(3);
}

/* write(2) the whole buffer; -1 on error. */
static inline int ex_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Write one line per site to fd, and the "#size" lines when with_sizes,
 * each line with a single write(2), so that processes appending to one
 * file (O_APPEND) never interleave inside a line.
 */
static inline int ex_print_sites(int fd, const struct ex_site *sites, size_t n,
				 bool with_sizes)
{
	char line[256];
	int len;
	for (size_t i = 0; i < n; i++) {
		len = snprintf(line, sizeof(line),
			       "%ld %s %" PRIu64 " %" PRIu64 " %" PRIu64
			       " %" PRIu64 "\n",
			       (long)getpid(), sites[i].name,
			       sites[i].alloc_objects, sites[i].alloc_space,
			       sites[i].inuse_objects, sites[i].inuse_space);
		if (len < 0 || (size_t)len >= sizeof(line) ||
		    ex_write_all(fd, line, (size_t)len) < 0)
			return -1;
	}
	for (size_t i = 0; i < n && with_sizes; i++) {
		for (unsigned j = 0; j < sites[i].n_sizes; j++) {
			const struct ex_size *z = &sites[i].sizes[j];

			len = snprintf(line, sizeof(line),
				       "#size %ld %s %" PRIu64 " %" PRIu64
				       " %" PRIu64 "\n",
				       (long)getpid(), sites[i].name, z->size,
				       z->allocs, z->live);
			if (len < 0 || (size_t)len >= sizeof(line) ||
			    ex_write_all(fd, line, (size_t)len) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * Append the truth lines (with the #size lines) to path. Returns 0, or 2
 * when path cannot be written (a message is printed on stderr).
 */
static inline int ex_report_quiet(const char *path, const struct ex_site *sites,
				  size_t n)
{
	int fd, rc = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || ex_print_sites(fd, sites, n, true) < 0) {
		char line[512];
		int len = snprintf(line, sizeof(line),
				   "example: cannot write '%s': %s\n", path,
				   strerror(errno));

		if (len > 0)
			ex_write_all(2, line, (size_t)len);
		rc = 2;
	}
	if (fd >= 0 && close(fd) < 0)
		rc = 2;
	return rc;
}

/*
 * The end of every example: the truth table on stderr, and appended to
 * path when not NULL (the examples truncate it at start; a forked or
 * exec'd child appends its own lines). Returns 0, or 2 when path cannot
 * be written.
 */
static inline int ex_report(const char *prog, const char *path,
			    const struct ex_site *sites, size_t n)
{
	char line[128];
	int len;

	len = snprintf(line, sizeof(line), "%s: truth\n", prog);
	if (len > 0)
		ex_write_all(2, line, (size_t)len);
	ex_write_all(2, ex_header, strlen(ex_header));
	ex_print_sites(2, sites, n, false);
	if (path == NULL)
		return 0;
	return ex_report_quiet(path, sites, n);
}

/* Truncate (create) the truth file once, at the start of the first process. */
static inline int ex_truth_start(const char *prog, const char *path)
{
	int fd;

	if (path == NULL)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		char line[512];
		int len = snprintf(line, sizeof(line),
				   "%s: cannot create '%s': %s\n", prog, path,
				   strerror(errno));

		if (len > 0)
			ex_write_all(2, line, (size_t)len);
		return 2;
	}
	ex_write_all(fd, ex_header, strlen(ex_header));
	close(fd);
	return 0;
}

/* A usage error: the hint line on stderr, exit status 2. */
static inline PALLOC_NORETURN void ex_try_help(const char *prog)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	exit(2);
}

/* The examples take options only: an operand is a usage error. */
static inline void ex_no_operands(const char *prog, int argc, char **argv)
{
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
			argv[optind]);
		ex_try_help(prog);
	}
}

/* Strict unsigned parse of an option value; exits 2 on a bad value. */
static inline unsigned long ex_parse_ulong(const char *prog, const char *opt,
					   const char *s, unsigned long min,
					   unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || *s == '-' || v < min ||
	    v > max) {
		fprintf(stderr, "%s: invalid %s '%s': expected %lu to %lu\n",
			prog, opt, s, min, max);
		ex_try_help(prog);
	}
	return v;
}

/*
 * Text for an example's HELP: EX_HELP_TRUTH_LINES describes the lines
 * ex_truth_start() and its siblings write (for examples whose truth is
 * per function), EX_HELP_OPTIONS the options every example has
 * (ex_options()) and the blank line after them.
 */
#define EX_HELP_TRUTH_LINES                                                    \
	"  pid function alloc_objects alloc_space inuse_objects "              \
	"inuse_space\n"                                                        \
	"plus '#size pid function size allocations live' lines in "            \
	"<file>.\n"
#define EX_HELP_OPTIONS                                                        \
	"     --truth <file>   also write the truth to <file>\n"               \
	" -h, --help           display this help\n"                            \
	"\n"

/*
 * One option of an example besides --truth and -h/--help: --NAME, and
 * -LETTER unless LETTER is 0. With ULONG set it takes a whole number from
 * MIN to MAX, stored there (WHAT names it in the message about a bad
 * value); with FLAG set it takes no argument and sets *FLAG to true.
 */
struct ex_opt {
	const char *name;
	char letter;
	const char *what;
	unsigned long min, max;
	unsigned long *ulong;
	bool *flag;
};

#define EX_MAX_OPTS 4

/*
 * Every example's command line: OPTS (N of them, at most EX_MAX_OPTS),
 * --truth <file> and -h/--help, which prints HELP on stdout and exits 0.
 * A bad option or value, or any operand, is a usage error (getopt's
 * message or ours, then the hint line; exit 2). Returns the --truth path,
 * NULL when not given.
 */
static inline const char *ex_options(const char *prog, const char *help,
				     int argc, char **argv,
				     const struct ex_opt *opts, size_t n)
{
	/* Values of the long-only options: past any letter. */
	enum { EX_OPT_LONG = CHAR_MAX + 1, EX_OPT_TRUTH = EX_OPT_LONG + 64 };
	struct option longopts[EX_MAX_OPTS + 3];
	char shortopts[2 * EX_MAX_OPTS + 2];
	const char *truth = NULL;
	size_t i, k = 0;
	int c;

	if (n > EX_MAX_OPTS)
		abort(); /* a bug in the example: raise EX_MAX_OPTS */
	for (i = 0; i < n; i++) {
		longopts[i].name = opts[i].name;
		longopts[i].has_arg =
			opts[i].flag ? no_argument : required_argument;
		longopts[i].flag = NULL;
		longopts[i].val =
			opts[i].letter ? opts[i].letter : EX_OPT_LONG + (int)i;
		if (opts[i].letter) {
			shortopts[k++] = opts[i].letter;
			if (!opts[i].flag)
				shortopts[k++] = ':';
		}
	}
	longopts[n] =
		(struct option){"truth", required_argument, NULL, EX_OPT_TRUTH};
	longopts[n + 1] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[n + 2] = (struct option){NULL, 0, NULL, 0};
	shortopts[k++] = 'h';
	shortopts[k] = '\0';

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, stdout);
			exit(0);
		}
		if (c == EX_OPT_TRUTH) {
			truth = optarg;
			continue;
		}
		for (i = 0; i < n && longopts[i].val != c; i++)
			;
		if (i == n)
			ex_try_help(prog);
		if (opts[i].flag)
			*opts[i].flag = true;
		else
			*opts[i].ulong =
				ex_parse_ulong(prog, opts[i].what, optarg,
					       opts[i].min, opts[i].max);
	}
	ex_no_operands(prog, argc, argv);
	return truth;
}

#endif /* PALLOC_EXAMPLE_H */
