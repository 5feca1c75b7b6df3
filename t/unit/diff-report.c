/* SPDX-License-Identifier: MIT */
/* Unit tests of diff (stack matching) and report (the top table). */
#include "common.h"

#include <math.h>

#include "diff.h"
#include "msg.h"
#include "pprof.h"
#include "report.h"
#include "heap.h"
#include "tap.h"

/* A symbolized location: n lines "f@file:line", innermost first. */
static uint64_t loc(struct pprof_profile *p, uint64_t addr, size_t n,
		    const char *const *names, const int64_t *lines,
		    const char *file)
{
	struct pprof_line l[8];

	for (size_t i = 0; i < n; i++) {
		l[i].function_id =
			pprof_add_function(p, names[i], names[i], file, 0);
		l[i].line = lines ? lines[i] : 0;
	}
	return pprof_add_location(p, 0, addr, l, n);
}

static void sample(struct pprof_profile *p, const uint64_t *ids, size_t n,
		   int64_t inuse)
{
	int64_t v[4] = {1, inuse, 1, inuse};

	if (pprof_add_sample(p, ids, n, v, NULL, 0) < 0)
		exit(99);
}

static int64_t flat_of(const struct report *r, const char *name)
{
	const struct report_row *row = report_find(r, name);

	return row ? row->flat : INT64_MIN;
}

static int64_t cum_of(const struct report *r, const char *name)
{
	const struct report_row *row = report_find(r, name);

	return row ? row->cum : INT64_MIN;
}

/* -O0 calls helper(); -O2 inlined it into work(): the stacks still match. */
static void test_inlining(void)
{
	static const char *const o0_leaf[] = {"helper"};
	static const char *const o0_mid[] = {"work"};
	static const char *const o0_main[] = {"main"};
	static const char *const o2_leaf[] = {"helper", "work"};
	static const int64_t o0_l1[] = {7}, o0_l2[] = {20}, o0_l3[] = {30},
			     o2_l[] = {7, 20};
	struct pprof_profile *b = heap_profile(1), *n = heap_profile(1);
	struct diff_result d;
	struct report *r;
	uint64_t s[3];

	s[0] = loc(b, 0x1000, 1, o0_leaf, o0_l1, "a.c");
	s[1] = loc(b, 0x1100, 1, o0_mid, o0_l2, "a.c");
	s[2] = loc(b, 0x1200, 1, o0_main, o0_l3, "a.c");
	sample(b, s, 3, 1000);
	s[0] = loc(n, 0x2000, 2, o2_leaf, o2_l, "a.c");
	s[1] = loc(n, 0x2200, 1, o0_main, o0_l3, "a.c");
	sample(n, s, 2, 1500);

	tap_ok(diff_profiles(b, n, &d, NULL, NULL) == 0, "inlining: diff ok");
	tap_ok(d.matched_stacks == 1 && d.profile->n_samples == 1 &&
		       d.profile->samples[0].values[3] == 500,
	       "inlining: inlined and called frames match, +500");
	tap_ok(d.used_lines, "inlining: lines took part");
	r = report_by_function(d.profile, 3);
	tap_ok(r && r->n_rows == 3 && flat_of(r, "helper") == 500 &&
		       cum_of(r, "work") == 500 && cum_of(r, "main") == 500 &&
		       flat_of(r, "work") == 0,
	       "inlining: helper +500 flat, work and main +500 cum");
	report_free(r);
	diff_result_free(&d);
	pprof_free(b);
	pprof_free(n);
}

/* Lines count only when both profiles have them. */
static void test_lines(void)
{
	static const char *const f[] = {"f"}, *const m[] = {"main"};
	static const int64_t l10[] = {10}, l11[] = {11}, l40[] = {40};
	struct pprof_profile *b = heap_profile(1), *n = heap_profile(1),
			     *u = heap_profile(1);
	struct diff_result d;
	uint64_t s[2];

	s[0] = loc(b, 0x1000, 1, f, l10, "a.c");
	s[1] = loc(b, 0x1100, 1, m, l40, "a.c");
	sample(b, s, 2, 100);
	s[0] = loc(n, 0x1000, 1, f, l11, "a.c");
	s[1] = loc(n, 0x1100, 1, m, l40, "a.c");
	sample(n, s, 2, 100);
	s[0] = loc(u, 0x1000, 1, f, NULL, "");
	s[1] = loc(u, 0x1100, 1, m, NULL, "");
	sample(u, s, 2, 100);

	tap_ok(diff_profiles(b, n, &d, NULL, NULL) == 0 &&
		       d.matched_stacks == 0 && d.profile->n_samples == 2,
	       "lines: another call line is another stack");
	diff_result_free(&d);
	tap_ok(diff_profiles(b, u, &d, NULL, NULL) == 0 && !d.used_lines &&
		       d.matched_stacks == 1 && d.profile->n_samples == 0,
	       "lines: ignored when one profile has none");
	diff_result_free(&d);
	pprof_free(b);
	pprof_free(n);
	pprof_free(u);
}

/* Unsymbolized frames match by basename and file offset, not address. */
static void test_unsymbolized(void)
{
	struct pprof_mapping mb = {.file = "/lib/libx.so.1",
				   .start = 0x7f0000000000,
				   .limit = 0x7f0000100000,
				   .offset = 0x1000,
				   .build_id = ""};
	struct pprof_mapping mn = mb;
	struct pprof_profile *b = heap_profile(1), *n = heap_profile(1);
	struct diff_result d;
	uint64_t s[1], id;
	char buf[64];

	mn.start = 0x7fff00000000;
	mn.limit = 0x7fff00100000;
	mn.file = "/usr/lib/libx.so.1";
	id = pprof_add_mapping(b, &mb);
	s[0] = pprof_add_location(b, id, 0x7f0000000500, NULL, 0);
	sample(b, s, 1, 64);
	id = pprof_add_mapping(n, &mn);
	s[0] = pprof_add_location(n, id, 0x7fff00000500, NULL, 0);
	sample(n, s, 1, 64);
	s[0] = pprof_add_location(n, id, 0x7fff00000600, NULL, 0);
	sample(n, s, 1, 32);

	tap_ok(diff_profiles(b, n, &d, NULL, NULL) == 0 &&
		       d.matched_stacks == 1 && d.profile->n_samples == 1 &&
		       d.profile->samples[0].values[3] == 32,
	       "unsymbolized: matched across load addresses");
	tap_ok(strcmp(diff_format_stack(d.profile, &d.profile->samples[0], 0,
					buf, sizeof(buf)),
		      "libx.so.1+0x1600") == 0,
	       "unsymbolized: named basename+file offset (%s)", buf);
	diff_result_free(&d);
	pprof_free(b);
	pprof_free(n);
}

static int64_t g_warned;

static void count_warning(void *ctx, const char *message)
{
	(void)ctx;
	(void)message;
	g_warned++;
}

static void test_types(void)
{
	static const struct pprof_value_type cpu[] = {{"samples", "count"},
						      {"cpu", "nanoseconds"}};
	struct pprof_profile *b = heap_profile(1), *n = pprof_new(NULL);
	struct diff_result d;

	pprof_set_sample_types(n, cpu, 2);
	pprof_set_period(n, "cpu", "nanoseconds", 10000000);
	tap_ok(diff_profiles(b, n, &d, count_warning, NULL) < 0 &&
		       strstr(msg_last(), "no common sample type"),
	       "types: none in common is an error (%s)", msg_last());
	diff_result_free(&d);
	pprof_free(n);
	n = heap_profile(1);
	pprof_set_period(n, "space", "bytes", 524288);
	g_warned = 0;
	tap_ok(diff_profiles(b, n, &d, count_warning, NULL) == 0 &&
		       g_warned == 1,
	       "types: another period is one warning");
	diff_result_free(&d);
	pprof_free(b);
	pprof_free(n);
}

/* Recursion counts once in cum; flat goes to the leaf. */
static void test_report(void)
{
	static const char *const a[] = {"a"}, *const bb[] = {"b"};
	struct pprof_profile *p = heap_profile(1);
	struct report *r;
	uint64_t s[4];

	s[0] = loc(p, 0x10, 1, a, NULL, "");
	s[1] = loc(p, 0x20, 1, bb, NULL, "");
	s[2] = loc(p, 0x30, 1, a, NULL, "");
	s[3] = loc(p, 0x40, 1, bb, NULL, "");
	sample(p, s, 4, 100);
	sample(p, s + 1, 3, -30);
	r = report_by_function(p, 3);
	tap_ok(r && flat_of(r, "a") == 100 && cum_of(r, "a") == 70 &&
		       flat_of(r, "b") == -30 && cum_of(r, "b") == 70 &&
		       r->total == 130 && r->sum == 70,
	       "report: flat at the leaf, cum once per sample, total |v|");
	tap_ok(r && strcmp(r->rows[0].name, "a") == 0,
	       "report: sorted by |flat|");
	report_free(r);
	tap_ok(report_sample_index(p, NULL) == 3 &&
		       report_sample_index(p, "alloc_space") == 1 &&
		       report_sample_index(p, "2") == 2 &&
		       report_sample_index(p, "4") == -1 &&
		       report_sample_index(p, "bogus") == -1,
	       "report: sample index by name, number, default");
	pprof_free(p);
}

/* The JSON keys, their order and units; a non-UTF-8 name stays printable. */
static void test_json(void)
{
	static const char *const bad[] = {"bad\xff\xfename"};
	struct pprof_profile *p = heap_profile(1);
	struct report *r;
	json_t *j;
	char *text;
	uint64_t s[1];

	s[0] = loc(p, 0x10, 1, bad, NULL, "");
	sample(p, s, 1, 1536);
	r = report_by_function(p, 3);
	j = r ? report_to_json(r, 0) : NULL;
	text = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	tap_ok(text && strcmp(text,
			      "{\"sample_type\":\"inuse_space\",\"unit\":"
			      "\"bytes\",\"total_bytes\":1536,\"net_bytes\":"
			      "1536,\"function_count\":1,\"functions\":[{"
			      "\"function\":\"bad??name\",\"flat_bytes\":"
			      "1536,\"flat_ratio\":1.0,\"sum_ratio\":1.0,"
			      "\"cum_bytes\":1536,\"cum_ratio\":1.0}]}") == 0,
	       "json: keys in order, units in names, UTF-8 safe: %s",
	       text ? text : "(null)");
	free(text);
	json_decref(j);
	report_free(r);
	pprof_free(p);
	tap_ok(strcmp(report_unit_suffix("count"), "count") == 0 &&
		       strcmp(report_unit_suffix("nanoseconds"), "ns") == 0 &&
		       strcmp(report_unit_suffix("widgets"), "value") == 0,
	       "json: unit suffixes");
}

static void test_format(void)
{
	static const struct {
		int64_t v;
		const char *unit, *want;
	} cases[] = {
		{0, "bytes", "0"},
		{-512, "bytes", "-512B"},
		{1536, "bytes", "1.50kB"},
		{1048576, "bytes", "1MB"},
		{2093056, "bytes", "2MB"},
		{3 * 1073741824LL + 1, "bytes", "3GB"},
		{-4096, "bytes", "-4kB"},
		{12345, "count", "12345"},
	};
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		report_format_value(cases[i].v, cases[i].unit, buf,
				    sizeof(buf));
		tap_ok(strcmp(buf, cases[i].want) == 0,
		       "format %lld %s: '%s' (want '%s')",
		       (long long)cases[i].v, cases[i].unit, buf,
		       cases[i].want);
	}
}

/* A sample of inuse v at location id with label inuse_space_stddev sd. */
static void noisy(struct pprof_profile *p, uint64_t id, int64_t v, int64_t sd)
{
	int64_t vals[4] = {1, v, 1, v};
	struct pprof_label l = {.key = "inuse_space_stddev",
				.str = "",
				.num = sd,
				.num_unit = "bytes"};

	if (pprof_add_sample(p, &id, 1, vals, &l, 1) < 0)
		exit(99);
}

/* The inuse_space_stddev label of the result's sample of function name. */
static int64_t label_of(const struct diff_result *d, const char *name)
{
	const struct pprof_profile *p = d->profile;
	char buf[64];

	for (size_t i = 0; i < p->n_samples; i++)
		if (strcmp(diff_format_stack(p, &p->samples[i], 1, buf,
					     sizeof(buf)),
			   name) == 0)
			return (int64_t)report_sample_stddev(
				&p->samples[i], "inuse_space_stddev");
	return -1;
}

/*
 * Sampling noise: work() changed by 200 within its noise (sigma 300 and
 * 400: 500), steady() did not change (sigma 40 and 30, not in the result
 * but in the total's sigma), leak() is new with 5000, sigma 100.
 */
static void test_noise(void)
{
	struct pprof_profile *b = heap_profile(524288),
			     *n = heap_profile(524288);
	struct diff_result d;
	struct diff_noise z3, z0;
	struct report *r = NULL;
	const struct report_row *w = NULL, *l = NULL;
	uint64_t bw = loc(b, 0x10, 1, (const char *const[]){"work"}, NULL, "");
	uint64_t bs =
		loc(b, 0x20, 1, (const char *const[]){"steady"}, NULL, "");
	uint64_t nw = loc(n, 0x10, 1, (const char *const[]){"work"}, NULL, "");
	uint64_t ns =
		loc(n, 0x20, 1, (const char *const[]){"steady"}, NULL, "");
	uint64_t nl = loc(n, 0x30, 1, (const char *const[]){"leak"}, NULL, "");
	int rc;

	noisy(b, bw, 1000, 300);
	noisy(b, bs, 500, 40);
	noisy(n, nw, 1200, 400);
	noisy(n, ns, 500, 30);
	noisy(n, nl, 5000, 100);
	rc = diff_profiles(b, n, &d, NULL, NULL);
	tap_ok(rc == 0 && d.totals[3].has_stddev &&
		       fabs(d.totals[3].var - 262500) < 1e-6,
	       "noise: the total's variance sums both inputs' labels, "
	       "unchanged stacks too (%g)",
	       rc == 0 ? d.totals[3].var : -1);
	tap_ok(rc == 0 && d.profile->n_samples == 2 &&
		       label_of(&d, "work") == 500 &&
		       label_of(&d, "leak") == 100,
	       "noise: result samples carry sqrt(sigma_base^2 + sigma_new^2)");
	if (rc == 0) {
		diff_noise(&d, 3, 3, &z3);
		diff_noise(&d, 3, 0, &z0);
		r = report_by_function(d.profile, 3);
	}
	tap_ok(rc == 0 && z3.growth == 5200 && llround(z3.stddev) == 512 &&
		       !z3.within && z3.total_excess == 5200 - 1537 &&
		       z3.stack_excess == 4700 && z3.significant == 4700,
	       "noise: z 3: growth 5200, sigma 512, stack excess 4700 "
	       "(work within noise, leak 5000 - 300)");
	tap_ok(rc == 0 && z0.significant == 5200 && z0.stack_excess == 5200 &&
		       z0.total_excess == 5200,
	       "noise: z 0 is the raw growth");
	if (r) {
		r->mark_noise = true;
		r->noise_z = 3;
		w = report_find(r, "work");
		l = report_find(r, "leak");
	}
	tap_ok(w && l && report_row_noise(r, w) == 1 &&
		       report_row_noise(r, l) == 0,
	       "noise: work's row is within noise, leak's is not");
	report_free(r);
	diff_result_free(&d);
	pprof_free(b);
	pprof_free(n);
}

/* Without labels: sigma 0, no labels, significant growth is the growth. */
static void test_no_noise(void)
{
	struct pprof_profile *b = heap_profile(1), *n = heap_profile(1);
	struct diff_result d;
	struct diff_noise z;
	uint64_t bw = loc(b, 0x10, 1, (const char *const[]){"work"}, NULL, "");
	uint64_t nw = loc(n, 0x10, 1, (const char *const[]){"work"}, NULL, "");
	uint64_t nl = loc(n, 0x30, 1, (const char *const[]){"gone"}, NULL, "");
	int rc;

	sample(b, &bw, 1, 1000);
	sample(n, &nw, 1, 900);
	sample(n, &nl, 1, 300);
	rc = diff_profiles(b, n, &d, NULL, NULL);
	if (rc == 0)
		diff_noise(&d, 3, 3, &z);
	tap_ok(rc == 0 && !d.totals[3].has_stddev && d.totals[3].var == 0 &&
		       d.profile->samples[0].n_labels == 0 &&
		       d.profile->samples[1].n_labels == 0 && z.growth == 200 &&
		       z.stddev == 0 && z.significant == 200 && !z.within,
	       "no labels: sigma 0, none written, the raw growth");
	diff_result_free(&d);
	pprof_free(b);
	pprof_free(n);
}

/* A significant release offsets a leak; one within noise does not. */
static void test_noise_release(void)
{
	struct pprof_profile *b = heap_profile(524288),
			     *n = heap_profile(524288);
	struct diff_result d;
	struct diff_noise z;
	uint64_t bw = loc(b, 0x10, 1, (const char *const[]){"work"}, NULL, "");
	uint64_t nw = loc(n, 0x10, 1, (const char *const[]){"work"}, NULL, "");
	uint64_t nl = loc(n, 0x30, 1, (const char *const[]){"leak"}, NULL, "");
	int rc;

	noisy(b, bw, 100000, 0);
	noisy(n, nw, 90000, 1000); /* -10000, sigma 1000: beyond */
	noisy(n, nl, 8000, 0);	   /* +8000 */
	rc = diff_profiles(b, n, &d, NULL, NULL);
	if (rc == 0)
		diff_noise(&d, 3, 3, &z);
	tap_ok(rc == 0 && z.stack_excess == -7000 + 8000 &&
		       z.significant == 1000,
	       "noise: a release beyond its noise nets against a leak (%lld)",
	       rc == 0 ? (long long)z.stack_excess : -1LL);
	diff_result_free(&d);
	pprof_free(b);
	pprof_free(n);
}

int main(void)
{
	test_inlining();
	test_lines();
	test_unsymbolized();
	test_types();
	test_report();
	test_json();
	test_format();
	test_noise();
	test_no_noise();
	test_noise_release();
	return tap_done();
}
