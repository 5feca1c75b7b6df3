/* SPDX-License-Identifier: MIT */
/* palloc-run: symbolize the profiles it wrote and print a line for each. */
#include "common.h"
#include "run-summary.h"

#include "cli.h"
#include "msg_cli.h"
#include "pprof.h"
#include "pprof_comments.h"
#include "report.h"
#include "symbols.h"

/* The path as the user would write it: relative to cwd when inside it. */
static const char *display_path(const char *path, const char *cwd)
{
	size_t n = strlen(cwd);

	if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/*
 * The sum of sample type type over p (through the by-function report, as
 * pprof totals it), and with top non-NULL the leaf function holding the
 * most of it (a malloc'd copy, "" when no sample has a value). Returns 0,
 * or -1 with msg_set() when the type is missing or on ENOMEM.
 */
static int profile_total(const struct pprof_profile *p, const char *type,
			 int64_t *sum, char **top)
{
	int idx = pprof_sample_type_index(p, type);
	struct report *r;

	if (idx < 0)
		return msg_set("no sample type '%s'", type);
	r = report_by_function(p, idx);
	if (!r)
		return -1;
	*sum = r->sum;
	if (top) {
		*top = strdup(r->n_rows > 0 && r->rows[0].flat != 0
				      ? r->rows[0].name
				      : "");
		if (!*top) {
			report_free(r);
			return msg_set_errno(ENOMEM, "cannot summarize");
		}
	}
	report_free(r);
	return 0;
}

/*
 * A run may write many profiles (a build, git, a shell script: one per
 * process). Up to SUMMARY_MAX get a line each; beyond that the lines of
 * the SUMMARY_MAX with the most bytes allocated are printed (in path
 * order, like the others) and one line totals the rest. Every profile is
 * symbolized either way.
 */
#define SUMMARY_MAX 10

/* One profile's summary, kept until all are read. */
struct summary {
	const char *shown; /* the path as shown */
	int64_t alloc_objects, alloc_space, inuse_objects, inuse_space;
	char *top;	  /* function holding the most, "" for none */
	const char *kind; /* "inuse", or "alloc" when little is in use */
	size_t order;	  /* rank in path order */
	/* samples the agent could not record, from the profile's comment */
	uint64_t dropped_count, dropped_bytes;
	bool dropped_bytes_known;
	/* the agent's "warning: " comment (memory it could not see), or
	 * NULL */
	char *warning;
};

/* The agent's count of dropped samples (pprof_comments.h): a comment
 * that does not read so counts as nothing dropped. */
static void find_dropped(const struct pprof_profile *p, struct summary *sm)
{
	struct pprof_comment_samples s;

	if (!pprof_comment_samples(p, &s))
		return;
	sm->dropped_count = s.dropped;
	sm->dropped_bytes = s.dropped_bytes;
	sm->dropped_bytes_known = s.dropped_bytes_known;
}

/*
 * The agent's warning about the profile, a comment "warning: TEXT" (most
 * of the process's memory did not come through malloc, palloc(7)): TEXT,
 * printable, into sm->warning. The profile is outside input: control
 * characters become '?'.
 */
static void find_warning(const struct pprof_profile *p, struct summary *sm)
{
	const char *w = pprof_comment_warning(p);

	if (!w)
		return;
	sm->warning = strdup(w);
	for (char *q = sm->warning; q && *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
}

/*
 * Fill sm from p: totals, and the top function of what matters at the end:
 * inuse when what is still in use is at least a tenth of what was
 * allocated (memory held: a leak, a cache), else alloc (the churn that
 * cost the time; a 0.6 MiB live site beside 73 MiB allocated says little).
 * Returns 0, or -1 with msg_set().
 */
static int summarize(const struct pprof_profile *p, struct summary *sm)
{
	bool held;
	int64_t by_sum;

	if (profile_total(p, "alloc_objects", &sm->alloc_objects, NULL) < 0 ||
	    profile_total(p, "alloc_space", &sm->alloc_space, NULL) < 0 ||
	    profile_total(p, "inuse_objects", &sm->inuse_objects, NULL) < 0 ||
	    profile_total(p, "inuse_space", &sm->inuse_space, NULL) < 0)
		return -1;
	held = sm->inuse_space > 0 && sm->inuse_space >= sm->alloc_space / 10;
	sm->kind = held ? "inuse" : "alloc";
	if (profile_total(p, held ? "inuse_space" : "alloc_space", &by_sum,
			  &sm->top) < 0)
		return -1;
	find_dropped(p, sm);
	find_warning(p, sm);
	return 0;
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/*
 * The function's name as the summary line shows it: a demangled C++ name
 * without its template arguments, parameter list, qualifiers and return
 * type ("void std::vector<int, std::allocator<int> >::_M_realloc_insert<
 * int const&>(...)" is "std::vector::_M_realloc_insert"), so that a line
 * stays one line; C names are unchanged. The profile keeps the full name.
 * Writes into out[size]; returns out, or name when nothing is left.
 */
static const char *short_name(const char *name, char *out, size_t size)
{
	size_t n = 0, start = 0;
	int depth = 0;
	const char *p = name;

	if (!strpbrk(name, "<( "))
		return name;
#define PUT(c)                                                                 \
	do {                                                                   \
		if (n + 1 < size)                                              \
			out[n++] = (c);                                        \
	} while (0)
	while (*p) {
		if (depth == 0 &&
		    strncmp(p, "(anonymous namespace)", 21) == 0) {
			for (int i = 0; i < 21; i++)
				PUT(p[i]);
			p += 21;
			continue;
		}
		if (depth == 0 && strncmp(p, "operator", 8) == 0 &&
		    (p == name || !is_ident(p[-1])) && !is_ident(p[8])) {
			for (int i = 0; i < 8; i++)
				PUT(p[i]);
			p += 8;
			if (*p == ' ') { /* operator new, delete, conversions */
				PUT(*p++);
				while (is_ident(*p))
					PUT(*p++);
			} else if (strncmp(p, "()", 2) == 0) {
				PUT('(');
				PUT(')');
				p += 2;
			} else {
				while (*p && strchr("<>=!+-*/%^&|~,[]", *p))
					PUT(*p++);
			}
			continue;
		}
		if (*p == '<') {
			depth++;
		} else if (*p == '>' && depth > 0) {
			depth--;
		} else if (depth == 0) {
			if (*p == '(' || strncmp(p, " [clone ", 8) == 0)
				break; /* the parameter list: the end */
			if (*p == ' ' && (p[1] == '<' || p[1] == '(')) {
				p++; /* "operator< <T>(...)" */
				continue;
			}
			if (*p == ' ')
				start = n + 1; /* what came before: a type */
			PUT(*p);
		}
		p++;
	}
#undef PUT
	out[n] = '\0';
	return start < n ? out + start : name;
}

/*
 * The end of a summary line when samples were dropped ("" when none):
 * "; 65540 samples dropped, about 4.0 MiB (stack table full or out of
 * memory)". Those samples are in none of the line's totals.
 */
static const char *dropped_text(const struct summary *sm, char *buf, size_t len)
{
	if (sm->dropped_count == 0)
		return "";
	buf[0] = ';';
	buf[1] = ' ';
	report_dropped_text(sm->dropped_count, sm->dropped_bytes,
			    sm->dropped_bytes_known, buf + 2, len - 2);
	return buf;
}

/*
 * "wrote PATH: alloc 1.2 MiB in 345 objects, inuse ..., top inuse: FN",
 * then "; N samples dropped ..." when the agent dropped some.
 */
static void print_summary(const struct summary *sm)
{
	char a[32], b[32], top[256], d[128];

	fprintf(stderr,
		"%s: wrote %s: alloc %s in %lld objects, inuse %s in %lld objects, top %s: %s%s\n",
		msg_prog(), sm->shown,
		cli_human_signed(a, sizeof(a), sm->alloc_space),
		(long long)sm->alloc_objects,
		cli_human_signed(b, sizeof(b), sm->inuse_space),
		(long long)sm->inuse_objects, sm->kind,
		*sm->top ? short_name(sm->top, top, sizeof(top))
			 : "(no samples)",
		dropped_text(sm, d, sizeof(d)));
	if (sm->warning)
		msg_warn("%s: %s", sm->shown, sm->warning);
}

/* A mapping the symbolizer could not use (missing file, other build id). */
static void symbols_warning(void *ctx, const char *msg)
{
	(void)ctx;
	msg_warn("%s", msg);
}

/*
 * Symbolize (unless raw) one profile palloc-run wrote from a record, in
 * place and keeping its mode, and, unless quiet, fill *sm
 * (sm->shown is the caller's). Problems are warnings: the program has
 * run, its status stands. Returns 0 when *sm was filled.
 */
static int process_profile(const struct collect_item *it, struct summary *sm,
			   bool raw, bool quiet)
{
	mode_t mode = 0600;
	struct pprof_profile *p = collect_read(it, &mode);
	int ret = -1;

	if (!p) {
		msg_error_last("warning: cannot read profile '%s'", sm->shown);
		return -1;
	}
	if (!raw) {
		struct symbols_stats stats;

		memset(&stats, 0, sizeof(stats));
		stats.warn = quiet ? NULL : symbols_warning;
		if (symbols_symbolize(p, "", &stats) < 0)
			msg_error_last("warning: cannot symbolize '%s'",
				       sm->shown);
		else if (collect_rewrite(it, p, mode) < 0)
			msg_error_last("warning: cannot write '%s'", sm->shown);
	}
	if (!quiet) {
		ret = summarize(p, sm);
		if (ret < 0) {
			free(sm->top);
			free(sm->warning);
			sm->top = NULL;
			sm->warning = NULL;
			msg_error_last("warning: cannot summarize '%s'",
				       sm->shown);
		}
	}
	pprof_free(p);
	return ret;
}

/* Most bytes allocated first; the earlier path among equals. */
static int by_alloc_desc(const void *a, const void *b)
{
	const struct summary *x = a, *y = b;

	if (x->alloc_space != y->alloc_space)
		return x->alloc_space > y->alloc_space ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b)
{
	const struct summary *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* a + b, or UINT64_MAX when that overflows (counts read from files). */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Print the summaries (see SUMMARY_MAX); sms is reordered. */
static void print_summaries(struct summary *sms, size_t n)
{
	struct summary rest = {.kind = "alloc", .dropped_bytes_known = true};
	size_t shown = n, warned = 0;
	char a[32], b[32], d[128];

	if (n > SUMMARY_MAX) {
		qsort(sms, n, sizeof(*sms), by_alloc_desc);
		shown = SUMMARY_MAX;
		qsort(sms, shown, sizeof(*sms), by_order);
	}
	for (size_t i = 0; i < shown; i++)
		print_summary(&sms[i]);
	if (shown == n)
		return;
	for (size_t i = shown; i < n; i++) {
		rest.alloc_objects += sms[i].alloc_objects;
		rest.alloc_space += sms[i].alloc_space;
		rest.inuse_objects += sms[i].inuse_objects;
		rest.inuse_space += sms[i].inuse_space;
		rest.dropped_count =
			add_sat(rest.dropped_count, sms[i].dropped_count);
		rest.dropped_bytes =
			add_sat(rest.dropped_bytes, sms[i].dropped_bytes);
		/* "about B" only when every profile that dropped said B */
		if (sms[i].dropped_count && !sms[i].dropped_bytes_known)
			rest.dropped_bytes_known = false;
		warned += sms[i].warning != NULL;
	}
	fprintf(stderr,
		"%s: and %zu more profiles with less allocated: alloc %s in %lld objects, inuse %s in %lld objects%s\n",
		msg_prog(), n - shown,
		cli_human_signed(a, sizeof(a), rest.alloc_space),
		(long long)rest.alloc_objects,
		cli_human_signed(b, sizeof(b), rest.inuse_space),
		(long long)rest.inuse_objects,
		dropped_text(&rest, d, sizeof(d)));
	if (warned)
		msg_warn(
			"%zu of those profiles say%s that most of their process's memory did not come through malloc (see their \"warning:\" comments)",
			warned, warned == 1 ? "s" : "");
}

size_t run_summary(struct collect *col, const char *cwd, bool raw, bool quiet)
{
	size_t n, ns = 0;
	const struct collect_item *items = collect_items(col, &n);
	struct summary *sms = calloc(n ? n : 1, sizeof(*sms));

	if (!sms) {
		msg_warn("cannot summarize: %s", strerror(ENOMEM));
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		struct summary sm = {.order = i};

		sm.shown = display_path(items[i].path, cwd);
		if (process_profile(&items[i], &sm, raw, quiet) == 0)
			sms[ns++] = sm;
	}
	print_summaries(sms, ns);
	for (size_t i = 0; i < ns; i++) {
		free(sms[i].top);
		free(sms[i].warning);
	}
	free(sms);
	return n;
}
