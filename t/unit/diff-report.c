/* SPDX-License-Identifier: MIT */
/* Unit tests of diff (stack matching) and report (the top table). */
#include "common.h"

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

int main(void)
{
	test_inlining();
	test_lines();
	test_unsymbolized();
	test_types();
	test_report();
	test_json();
	test_format();
	return tap_done();
}
