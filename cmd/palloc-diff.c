/* SPDX-License-Identifier: MIT */
/* palloc-diff: what grew between two heap profiles, for people and CI gates. */
#include "common.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>

#include "cli.h"
#include "diff.h"
#include "json.h"
#include "msg.h"
#include "num.h"
#include "pprof.h"
#include "report.h"

#define DEFAULT_TOP 20
#define GROWTH_STACKS 5

static PALLOC_NORETURN void usage(void)
{
	printf("Usage:\n"
	       " %s [options] <base> <new>\n"
	       "\n"
	       "Subtract the heap profile <base> from <new> (pprof files,\n"
	       "gzipped or not), matching stacks by symbolized frames.\n"
	       "\n"
	       "Options:\n"
	       " -o, --output <file>         write NEW - BASE as a pprof "
	       "profile\n"
	       " -t, --top[=<n>]             print the top <n> functions by "
	       "growth\n"
	       "                               (default %d; 0: all)\n"
	       " -j, --json                  print the top functions and "
	       "totals as JSON\n"
	       " -s, --sample-index <type>   sample type by name or index\n"
	       "                               (default inuse_space)\n"
	       " -f, --fail-on-growth <limit>\n"
	       "                             exit 1 when the total grew by "
	       "more than\n"
	       "                               <limit> bytes (k, M, G, KiB... "
	       "suffixes)\n"
	       "                               or <limit>%% of BASE's total\n"
	       " -q, --quiet                 no warnings\n",
	       msg_prog(), DEFAULT_TOP);
	cli_usage_end(29, NULL);
}

struct gate {
	bool on, percent;
	uint64_t bytes;
	double pct;
};

static int parse_gate(const char *arg, struct gate *g)
{
	size_t n = strlen(arg);

	g->on = true;
	if (n > 1 && arg[n - 1] == '%') {
		char *end;

		if (!(arg[0] >= '0' && arg[0] <= '9'))
			return -1;
		errno = 0;
		g->pct = strtod(arg, &end);
		if (errno || end != arg + n - 1 || !isfinite(g->pct))
			return -1;
		g->percent = true;
		return 0;
	}
	return num_parse_u64(arg, true, &g->bytes);
}

static void warn_cb(void *ctx, const char *message)
{
	if (!*(bool *)ctx)
		msg_warn("%s", message);
}

static struct pprof_profile *read_profile(const char *path)
{
	struct pprof_profile *p = pprof_read_file(path);

	char quoted[PATH_MAX + 8];
	const char *why, *q;

	if (p)
		return p;
	/* The library names the path too; say it once. */
	why = msg_last();
	snprintf(quoted, sizeof(quoted), "'%s': ", path);
	q = strstr(why, quoted);
	if (q)
		why = q + strlen(quoted);
	msg_error("cannot read '%s': %s", path, why);
	return NULL;
}

/* Values of the result's samples, for picking the top growing stacks. */
struct by_growth {
	size_t sample;
	int64_t v;
};

static int growth_cmp(const void *a, const void *b)
{
	const struct by_growth *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

/* Name the largest growing stacks on stderr. */
static void print_growing(const struct pprof_profile *p, int idx,
			  const char *unit)
{
	struct by_growth *g = calloc(p->n_samples + 1, sizeof(*g));
	size_t n = 0;
	char buf[1024];

	if (!g)
		return;
	for (size_t i = 0; i < p->n_samples; i++)
		if (p->samples[i].values[idx] > 0)
			g[n++] = (struct by_growth){i,
						    p->samples[i].values[idx]};
	qsort(g, n, sizeof(*g), growth_cmp);
	for (size_t i = 0; i < n && i < GROWTH_STACKS; i++)
		msg_error("  +%lld %s: %s", (long long)g[i].v, unit,
			  diff_format_stack(p, &p->samples[g[i].sample], 12,
					    buf, sizeof(buf)));
	free(g);
}

static json_t *build_json(const char *base_path, const char *new_path,
			  const struct diff_result *d, int idx,
			  const struct report *r, size_t top, bool checked,
			  bool exceeded)
{
	const struct diff_totals *t = &d->totals[idx];
	const char *u = report_unit_suffix(r->unit);
	json_t *o = json_top_new("palloc-diff"), *rep = report_to_json(r, top);
	char key[64];

	json_failed();
	json_set(o, "base", json_str_or_null(base_path));
	json_set(o, "new", json_str_or_null(new_path));
	json_set(o, "sample_type", json_str_or_null(r->sample_type));
	json_set(o, "unit", json_str_or_null(r->unit));
	snprintf(key, sizeof(key), "base_%s", u);
	json_set(o, key, json_integer(t->base_sum));
	snprintf(key, sizeof(key), "new_%s", u);
	json_set(o, key, json_integer(t->new_sum));
	snprintf(key, sizeof(key), "growth_%s", u);
	json_set(o, key, json_integer(r->sum));
	json_set(o, "growth_ratio",
		 json_real_or_null(t->base_sum > 0,
				   (double)r->sum / (double)t->base_sum));
	snprintf(key, sizeof(key), "pprof_total_%s", u);
	json_set(o, key, json_integer(r->total));
	json_set(o, "base_stack_count", json_u64(d->base_stacks));
	json_set(o, "new_stack_count", json_u64(d->new_stacks));
	json_set(o, "matched_stack_count", json_u64(d->matched_stacks));
	json_set(o, "changed_stack_count", json_u64(d->profile->n_samples));
	json_set(o, "matched_by_line", json_boolean(d->used_lines));
	json_set(o, "growth_limit_exceeded",
		 checked ? json_boolean(exceeded) : json_null());
	json_set(o, "function_count", json_u64(r->n_rows));
	json_set(o, "functions",
		 json_incref(rep ? json_object_get(rep, "functions") : NULL));
	json_decref(rep);
	if (json_failed()) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"top", optional_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"sample-index", required_argument, NULL, 's'},
		{"fail-on-growth", required_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},
		CLI_END_LONGOPTS,
	};
	const char *output = NULL, *sample_arg = NULL;
	const char *base_path, *new_path;
	struct pprof_profile *base = NULL, *new_p = NULL;
	struct diff_result d = {0};
	struct report *r = NULL;
	struct gate gate = {0};
	bool want_top = false, want_json = false, quiet = false;
	bool exceeded = false;
	uint64_t top = DEFAULT_TOP;
	json_t *json = NULL;
	int c, idx, rc = 2;

	msg_init(argv[0]);
	/* getopt's own messages would make three lines of a usage error. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:t::js:f:qhV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 't':
			want_top = true;
			/* "--top 5" as well as "--top=5", as DESIGN.md spells
			 * it: a following all-digit word is the count. */
			if (!optarg && optind < argc && argv[optind][0] &&
			    strspn(argv[optind], "0123456789") ==
				    strlen(argv[optind]) &&
			    argc - optind > 2)
				optarg = argv[optind++];
			if (optarg && num_parse_u64(optarg, false, &top) < 0)
				msg_usage(2, "invalid --top '%s': %s", optarg,
					  msg_last());
			break;
		case 'j':
			want_json = true;
			break;
		case 's':
			sample_arg = optarg;
			break;
		case 'f':
			if (parse_gate(optarg, &gate) < 0)
				msg_usage(2,
					  "invalid --fail-on-growth '%s': "
					  "want bytes (1MiB) or a percentage "
					  "(10%%)",
					  optarg);
			break;
		case 'q':
			quiet = true;
			break;
		default:
			cli_default_option(c, argv, longopts, usage);
		}
	}
	if (argc - optind != 2)
		msg_usage(2, argc - optind < 2 ? "missing profile operand"
					       : "too many operands");
	base_path = argv[optind];
	new_path = argv[optind + 1];
	if (output && strcmp(output, "-") == 0 && (want_top || want_json))
		msg_usage(2, "-o - and --%s both write to stdout",
			  want_json ? "json" : "top");
	if (!output && !want_json && !gate.on)
		want_top = true;

	base = read_profile(base_path);
	if (!base)
		goto out;
	new_p = read_profile(new_path);
	if (!new_p)
		goto out;
	if (diff_profiles(base, new_p, &d, warn_cb, &quiet) < 0) {
		msg_error("cannot compare '%s' and '%s': %s", base_path,
			  new_path, msg_last());
		goto out;
	}
	/* The gate's default is inuse_space, whatever the default type. */
	if (!sample_arg &&
	    pprof_sample_type_index(d.profile, "inuse_space") >= 0)
		sample_arg = "inuse_space";
	idx = report_sample_index(d.profile, sample_arg);
	if (idx < 0) {
		msg_error("invalid --sample-index: %s", msg_last());
		goto out;
	}
	r = report_by_function(d.profile, idx);
	if (!r) {
		msg_error("cannot summarize the difference: %s", msg_last());
		goto out;
	}
	/* Percentages as `go tool pprof -diff_base` prints them. */
	r->total = diff_pprof_total(&d, (size_t)idx);

	if (gate.on) {
		int64_t grow = r->sum, base_sum = d.totals[idx].base_sum;

		if (gate.percent)
			exceeded = grow > 0 &&
				   (base_sum <= 0 ||
				    (double)grow * 100.0 >
					    gate.pct * (double)base_sum);
		else
			exceeded = grow > 0 && (uint64_t)grow > gate.bytes;
	}
	if (want_json) {
		json = build_json(base_path, new_path, &d, idx, r,
				  want_top ? top : 0, gate.on, exceeded);
		if (!json) {
			msg_error("cannot build JSON: out of memory");
			goto out;
		}
	}
	if (output && pprof_write_file(d.profile, output) < 0) {
		msg_error("cannot write '%s': %s", output, msg_last());
		goto out;
	}
	if (json) {
		if (json_print(stdout, json,
			       JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0) {
			if (errno != EPIPE)
				msg_error("%s", msg_last());
			rc = 1;
			goto out;
		}
	} else if (want_top && report_print_top(stdout, r, top, false) < 0) {
		msg_error("write error: %s", msg_last());
		rc = 1;
		goto out;
	}
	rc = 0;
	if (exceeded) {
		const char *u = report_unit_suffix(r->unit);
		double pct = d.totals[idx].base_sum > 0
				     ? 100.0 * (double)r->sum /
					       (double)d.totals[idx].base_sum
				     : INFINITY;
		char limit[64];

		if (gate.percent)
			snprintf(limit, sizeof(limit), "%g%%", gate.pct);
		else
			snprintf(limit, sizeof(limit), "%llu %s",
				 (unsigned long long)gate.bytes, u);
		msg_error("%s grew by %lld %s (%+.2f%% of BASE), over the "
			  "limit of %s; top growing stacks:",
			  r->sample_type, (long long)r->sum, u, pct, limit);
		print_growing(d.profile, idx, u);
		rc = 1;
	}
out:
	json_decref(json);
	report_free(r);
	diff_result_free(&d);
	pprof_free(base);
	pprof_free(new_p);
	return rc;
}
