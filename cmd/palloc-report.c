/* SPDX-License-Identifier: MIT */
/* palloc-report: a timeline and its profiles as one self-contained page. */
#include "common.h"
#include "cli.h"
#include "htmlreport_model.h"
#include "htmlreport_page.h"
#include "msg_cli.h"
#include "outfile.h"
#include "symbols.h"
#include "timeline_read.h"

#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>

static PALLOC_NORETURN void usage(void)
{
	fputs("Usage:\n"
	      " palloc-report [options] <timeline> [<profile>...]\n"
	      "\n"
	      "Make one HTML page of a timeline that palloc-run wrote: the memory's\n"
	      "layers over time, the flame graphs at the peak and at the end,\n"
	      "what grew between two moments, the resident memory explained.\n"
	      "Without <profile>s, those the timeline's profile events name.\n"
	      "The page needs no network: everything is inlined.\n"
	      "\n"
	      "Options:\n"
	      " -o, --output <file>      write the page to FILE ('-': standard\n"
	      "                            output; default: the timeline's name\n"
	      "                            with .html)\n"
	      " -q, --quiet              no warnings\n",
	      stdout);
	cli_usage_end(26, NULL);
}

struct opts {
	const char *output; /* NULL: the default name */
	bool quiet;
	const char *timeline;
	char **profiles; /* operands after the timeline */
	int n_profiles;
};

/* TIMELINE less a .ndjson, .jsonl or .json suffix, plus .html. */
static char *default_output(const char *timeline)
{
	static const char *const sfx[] = {".ndjson", ".jsonl", ".json"};
	size_t n = strlen(timeline);
	char *s;

	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		size_t k = strlen(sfx[i]);

		if (n > k && strcmp(timeline + n - k, sfx[i]) == 0) {
			n -= k;
			break;
		}
	}
	s = malloc(n + 6);
	if (!s)
		return NULL;
	memcpy(s, timeline, n);
	memcpy(s + n, ".html", 6);
	return s;
}

static void symbols_warning(void *ctx, const char *msg)
{
	if (!*(const bool *)ctx)
		msg_warn("%s", msg);
}

/*
 * Read and symbolize the n profiles of a; one that cannot be read is an
 * error when NAMED (given by the user), else a warning and left out.
 * Returns 0, or -1 after an error message.
 */
static int read_profiles(struct htmlreport_profile *a, size_t n, bool named,
			 const struct opts *o)
{
	for (size_t i = 0; i < n; i++) {
		struct symbols_stats st = {0};

		a[i].p = pprof_read_file(a[i].path);
		if (!a[i].p) {
			if (named) {
				msg_error("%s", msg_last());
				return -1;
			}
			if (!o->quiet)
				msg_warn("%s", msg_last());
			continue;
		}
		st.warn = symbols_warning;
		st.warn_ctx = (void *)&o->quiet;
		if (symbols_symbolize(a[i].p, "", &st) < 0 && !o->quiet)
			msg_warn("cannot symbolize '%s': %s", a[i].path,
				 msg_last());
	}
	return 0;
}

static int run(const struct opts *o)
{
	struct htmlreport_profile *profs = NULL;
	struct timeline_doc t;
	struct outfile out;
	char *path = NULL;
	json_t *doc = NULL;
	size_t n = 0;
	int rc = PALLOC_EXIT_TROUBLE;
	bool to_stdout;

	if (timeline_doc_read(o->timeline, &t) < 0) {
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	if (t.truncated && !o->quiet)
		msg_warn("'%s': its last line is incomplete, left out",
			 o->timeline);
	if (o->n_profiles) {
		n = (size_t)o->n_profiles;
		profs = calloc(n, sizeof(*profs));
		for (size_t i = 0; profs && i < n; i++)
			profs[i].path = strdup(o->profiles[i]);
		for (size_t i = 0; profs && i < n; i++)
			if (!profs[i].path)
				goto oom;
		if (!profs)
			goto oom;
		if (read_profiles(profs, n, true, o) < 0)
			goto out;
		for (size_t i = 0; i < n; i++)
			htmlreport_profile_place(&t, o->timeline, &profs[i]);
	} else {
		n = htmlreport_profiles_from_events(&t, o->timeline, &profs);
		if (n == (size_t)-1) {
			n = 0;
			goto oom;
		}
		if (read_profiles(profs, n, false, o) < 0)
			goto out;
	}
	doc = htmlreport_model(o->timeline, &t, profs, n);
	if (!doc)
		goto oom;
	path = o->output ? strdup(o->output) : default_output(o->timeline);
	if (!path)
		goto oom;
	to_stdout = strcmp(path, "-") == 0;
	if (outfile_open(&out, path) < 0) {
		msg_error("%s", msg_last());
		goto out;
	}
	if (htmlreport_write(out.fp, doc, "palloc-report") < 0) {
		msg_error("cannot write '%s': %s", path, msg_last());
		outfile_abort(&out);
		goto out;
	}
	if (outfile_commit(&out) < 0) {
		msg_error("%s", msg_last());
		goto out;
	}
	if (!to_stdout)
		msg_error("wrote '%s'", path);
	rc = PALLOC_EXIT_OK;
	goto out;
oom:
	if (!*msg_last() || errno == ENOMEM)
		msg_error("out of memory");
	else
		msg_error("%s", msg_last());
out:
	free(path);
	json_decref(doc);
	htmlreport_profiles_free(profs, n);
	timeline_doc_free(&t);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		CLI_END_LONGOPTS,
	};
	struct opts o = {0};
	int c;

	msg_init(argv[0]);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		default:
			cli_default_option(c, argv, longopts, usage);
		}
	}
	if (optind >= argc)
		msg_usage(PALLOC_EXIT_TROUBLE, "no timeline given");
	o.timeline = argv[optind];
	o.profiles = argv + optind + 1;
	o.n_profiles = argc - optind - 1;
	return run(&o);
}
