/* SPDX-License-Identifier: MIT */
/* palloc-diff: what grew between two heap profiles, for people and CI gates. */
#include "common.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <unistd.h>

#include "cli.h"
#include "diff.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "outfile.h"
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
	       " -o, --output <file>         write NEW - BASE as a pprof profile\n"
	       " -t, --top[=<n>]             print the top <n> functions by growth\n"
	       "                               (default %d; 0: all)\n"
	       " -j, --json                  print the top functions and totals as JSON\n"
	       " -s, --sample-index <type>   sample type by name or index\n"
	       "                               (default inuse_space)\n"
	       " -f, --fail-on-growth <limit>\n"
	       "                             exit 1 when the total grew by more than\n"
	       "                               <limit> bytes (k, M, G, KiB... suffixes)\n"
	       "                               or <limit>%% of BASE's total,\n"
	       "                               counting only growth beyond sampling noise\n"
	       "     --noise-z <z>           changes within <z> standard deviations\n"
	       "                               are sampling noise (default %g)\n"
	       "     --raw-gate              --fail-on-growth compares the growth\n"
	       "                               as it is, noise included\n"
	       " -q, --quiet                 no warnings\n"
	       "     --columns <list>        --top's columns ('+list' adds to the\n"
	       "                               default)\n"
	       " -n, --noheadings            --top without headings\n"
	       " -r, --raw                   --top raw: no alignment\n",
	       msg_prog(), DEFAULT_TOP, DIFF_NOISE_Z);
	table_help(stdout, "Columns of --top", &report_top_spec);
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
	double key;   /* v - z sigma: how far beyond its noise */
	double noise; /* z sigma */
};

static int growth_cmp(const void *a, const void *b)
{
	const struct by_growth *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

/*
 * Name the largest growing stacks on stderr: by growth, or with noise
 * (z sigma given, sigma from the result's labels) by growth beyond it.
 */
static void print_growing(const struct diff_result *d, int idx,
			  const char *unit, double z, bool noise)
{
	const struct pprof_profile *p = d->profile;
	struct by_growth *g = calloc(p->n_samples + 1, sizeof(*g));
	size_t n = 0;
	char buf[1024];

	if (!g)
		return;
	for (size_t i = 0; i < p->n_samples; i++) {
		int64_t v = p->samples[i].values[idx];
		double m = noise ? z * diff_sample_stddev(d, (size_t)idx,
							  &p->samples[i])
				 : 0;

		if (v > 0)
			g[n++] = (struct by_growth){i, v, (double)v - m, m};
	}
	qsort(g, n, sizeof(*g), growth_cmp);
	for (size_t i = 0; i < n && i < GROWTH_STACKS; i++) {
		diff_format_stack(p, &p->samples[g[i].sample], 12, buf,
				  sizeof(buf));
		if (noise)
			msg_error("  +%lld %s (noise +-%.0f): %s",
				  (long long)g[i].v, unit, g[i].noise, buf);
		else
			msg_error("  +%lld %s: %s", (long long)g[i].v, unit,
				  buf);
	}
	free(g);
}

/* What the gate compares and how, for the JSON and the message. */
struct gate_result {
	struct diff_noise noise;
	double z;
	bool raw;
	bool exceeded;
};

static json_t *build_json(const char *base_path, const char *new_path,
			  const struct diff_result *d, int idx,
			  const struct report *r, size_t top, bool checked,
			  const struct gate_result *g)
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
	snprintf(key, sizeof(key), "growth_stddev_%s", u);
	json_set(o, key,
		 json_integer(g->noise.stddev > 9.2e18
				      ? INT64_MAX
				      : llround(g->noise.stddev)));
	json_set(o, "growth_within_noise", json_boolean(g->noise.within));
	snprintf(key, sizeof(key), "significant_growth_%s", u);
	json_set(o, key, json_integer(g->noise.significant));
	json_set(o, "noise_z", json_real(g->z));
	snprintf(key, sizeof(key), "pprof_total_%s", u);
	json_set(o, key, json_integer(r->total));
	json_set(o, "base_stack_count", json_u64(d->base_stacks));
	json_set(o, "new_stack_count", json_u64(d->new_stacks));
	json_set(o, "matched_stack_count", json_u64(d->matched_stacks));
	json_set(o, "changed_stack_count", json_u64(d->profile->n_samples));
	json_set(o, "matched_by_line", json_boolean(d->used_lines));
	json_set(o, "growth_limit_exceeded",
		 checked ? json_boolean(g->exceeded) : json_null());
	json_set(o, "raw_gate", json_boolean(g->raw));
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

/* --noise-z: a finite number >= 0. */
static int parse_z(const char *arg, double *z)
{
	char *end;

	if (!(arg[0] >= '0' && arg[0] <= '9') && arg[0] != '.')
		return -1;
	errno = 0;
	*z = strtod(arg, &end);
	return errno || *end || !isfinite(*z) ? -1 : 0;
}

/* The gate: significant growth, or the raw growth with --raw-gate. */
static void check_gate(const struct gate *gate, int64_t base_sum,
		       struct gate_result *g)
{
	int64_t grow = g->raw ? g->noise.growth : g->noise.significant;

	if (gate->percent)
		g->exceeded =
			grow > 0 &&
			(base_sum <= 0 ||
			 (double)grow * 100.0 > gate->pct * (double)base_sum);
	else
		g->exceeded = grow > 0 && (uint64_t)grow > gate->bytes;
}

/* Say on stderr by how much the gate was exceeded, and where. */
static void report_exceeded(const struct gate *gate, const struct report *r,
			    const struct diff_result *d, int idx,
			    const struct gate_result *g)
{
	const char *u = report_unit_suffix(r->unit);
	int64_t base_sum = d->totals[idx].base_sum;
	bool noise = !g->raw && d->totals[idx].has_stddev;
	double pct = base_sum > 0 ? 100.0 * (double)r->sum / (double)base_sum
				  : INFINITY;
	char limit[64], beyond[160] = "";

	if (gate->percent)
		snprintf(limit, sizeof(limit), "%g%%", gate->pct);
	else
		snprintf(limit, sizeof(limit), "%llu %s",
			 (unsigned long long)gate->bytes, u);
	if (noise)
		snprintf(
			beyond, sizeof(beyond),
			"; beyond sampling noise (%g sigma, %.0f %s for the total) %lld %s",
			g->z, g->z * g->noise.stddev, u,
			(long long)g->noise.significant, u);
	msg_error(
		"%s grew by %lld %s (%+.2f%% of BASE)%s, over the limit of %s; top growing stacks:",
		r->sample_type, (long long)r->sum, u, pct, beyond, limit);
	print_growing(d, idx, u, g->z, noise);
}

int main(int argc, char **argv)
{
	enum { OPT_NOISE_Z = CLI_OPT_NEXT, OPT_RAW_GATE };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"top", optional_argument, NULL, 't'},
		CLI_TABLE_LONGOPTS("columns", CLI_OPT_COLUMNS),
		{"json", no_argument, NULL, 'j'},
		{"sample-index", required_argument, NULL, 's'},
		{"fail-on-growth", required_argument, NULL, 'f'},
		{"noise-z", required_argument, NULL, OPT_NOISE_Z},
		{"raw-gate", no_argument, NULL, OPT_RAW_GATE},
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
	struct gate_result gr = {.z = DIFF_NOISE_Z};
	uint64_t top = DEFAULT_TOP;
	const char *top_word = NULL; /* the word after a bare --top */
	struct table_opts table = {0};
	json_t *json = NULL;
	int c, idx, rc = PALLOC_EXIT_TROUBLE;

	msg_init(argv[0]);
	/* getopt's own messages would make three lines of a usage error. */
	opterr = 0;
	while ((c = getopt_long(argc, argv,
				":o:t::js:f:q" CLI_TABLE_SHORTOPTS "hV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 't':
			want_top = true;
			/* "--top 5" as well as "--top=5" (palloc-diff(1)). */
			if (!optarg)
				top_word = cli_top_word(argc, argv);
			cli_top(argc, argv, optarg, false, UINT64_MAX, &top);
			break;
		case 'j':
			want_json = true;
			break;
		case 's':
			sample_arg = optarg;
			break;
		case 'f':
			if (parse_gate(optarg, &gate) < 0)
				msg_usage(
					PALLOC_EXIT_TROUBLE,
					"invalid --fail-on-growth '%s': want bytes (1MiB) or a percentage (10%%)",
					optarg);
			break;
		case OPT_NOISE_Z:
			if (parse_z(optarg, &gr.z) < 0)
				msg_usage(
					PALLOC_EXIT_TROUBLE,
					"invalid --noise-z '%s': want a number of standard deviations, 0 or more",
					optarg);
			break;
		case OPT_RAW_GATE:
			gr.raw = true;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			if (!cli_table_opt(&table, CLI_OPT_COLUMNS, c, optarg))
				cli_default_option(c, argv, longopts, usage);
		}
	}
	cli_top_operand(argc, argv, top_word, 2, UINT64_MAX, &top);
	cli_table_check(&table, &report_top_spec);
	if (argc - optind != 2)
		msg_usage(PALLOC_EXIT_TROUBLE,
			  argc - optind < 2 ? "missing profile operand"
					    : "too many operands");
	base_path = argv[optind];
	new_path = argv[optind + 1];
	if (output && strcmp(output, "-") == 0 && (want_top || want_json))
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "-o - and --%s both write to stdout",
			  want_json ? "json" : "top");
	if (!output && !want_json && !gate.on)
		want_top = true;
	if (cli_table_given(&table) && (want_json || !want_top))
		msg_usage(PALLOC_EXIT_TROUBLE,
			  "--columns, --noheadings and --raw are for --top");
	/* A FIFO, symlink or device at -o: refused now, before the reading. */
	if (output && outfile_check(output) < 0) {
		msg_error("%s", msg_last());
		goto out;
	}

	base = read_profile(base_path);
	if (!base)
		goto out;
	new_p = read_profile(new_path);
	if (!new_p)
		goto out;
	/* As palloc-run: the values leave out what the agent dropped. */
	if (!quiet) {
		report_warn_dropped(base, base_path);
		report_warn_dropped(new_p, new_path);
	}
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
	/* Sampling noise of the difference: unchanged stacks count too, and
	 * a difference can be negative (no interval clamped at 0). */
	diff_noise(&d, (size_t)idx, gr.z, &gr.noise);
	r->sum_stddev = gr.noise.stddev;
	r->nonnegative = false;
	r->mark_noise = true;
	r->noise_z = gr.z;

	if (gate.on)
		check_gate(&gate, d.totals[idx].base_sum, &gr);
	if (want_json) {
		json = build_json(base_path, new_path, &d, idx, r,
				  want_top ? top : 0, gate.on, &gr);
		if (!json) {
			msg_error("cannot build JSON: out of memory");
			goto out;
		}
	}
	if (output && pprof_write_file(d.profile, output) < 0) {
		msg_error("%s", msg_last()); /* "cannot write 'PATH': why" */
		goto out;
	}
	/* A write error on stdout is reported at exit (msg_init). */
	if (json ? json_print(stdout, json,
			      JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0
		 : want_top && report_print_top(stdout, r, top, false, &table) <
				       0) {
		if (ferror(stdout))
			msg_stdout_failed(errno);
		else
			msg_error("%s", msg_last());
		goto out;
	}
	/* Exit 1 is the growth alone: a failed write is 2 before the gate. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg_stdout_failed(errno);
		goto out;
	}
	rc = PALLOC_EXIT_OK;
	if (gr.exceeded) {
		report_exceeded(&gate, r, &d, idx, &gr);
		rc = PALLOC_EXIT_MET;
	}
out:
	json_decref(json);
	report_free(r);
	diff_result_free(&d);
	pprof_free(base);
	pprof_free(new_p);
	return rc;
}
