/* SPDX-License-Identifier: MIT */
/* Unit tests of the folded (collapsed stacks) writer and the Prometheus
 * rendering of the agents' documents. */
#include "common.h"
#include "allocinfo.h"
#include "folded.h"
#include "msg.h"
#include "pprof.h"
#include "tap.h"

static const struct pprof_value_type types[2] = {
	{"inuse_objects", "count"},
	{"inuse_space", "bytes"},
};

/*
 * main -> f -> g with g inlined into f (one location, two lines), twice
 * with the same stack (merged), once raw (an address in libc), once with
 * a zero value (left out), and a name with a ';' in it.
 */
static struct pprof_profile *build(void)
{
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_mapping exe = {
		.start = 0x400000, .limit = 0x500000, .file = "/usr/bin/prog"};
	struct pprof_mapping libc = {.start = 0x7f0000000000,
				     .limit = 0x7f0000100000,
				     .offset = 0x28000,
				     .file = "/lib/libc.so.6"};
	struct pprof_line lines[2];
	uint64_t mexe, mlibc, fmain, ff, fg, fodd, lmain, lfg, lraw, lodd;
	uint64_t s1[2], s2[3], s3[2];
	int64_t v1[2] = {1, 100}, v2[2] = {2, 50}, v0[2] = {0, 0};

	if (!p || pprof_set_sample_types(p, types, 2) < 0)
		return NULL;
	mexe = pprof_add_mapping(p, &exe);
	mlibc = pprof_add_mapping(p, &libc);
	fmain = pprof_add_function(p, "main", "main", "prog.c", 1);
	ff = pprof_add_function(p, "f", "f", "prog.c", 10);
	fg = pprof_add_function(p, "g", "g", "prog.c", 20);
	fodd = pprof_add_function(p, "odd;name", "odd", "prog.c", 30);
	lines[0] = (struct pprof_line){fmain, 5};
	lmain = pprof_add_location(p, mexe, 0x401000, lines, 1);
	lines[0] = (struct pprof_line){fg, 21}; /* innermost first */
	lines[1] = (struct pprof_line){ff, 11};
	lfg = pprof_add_location(p, mexe, 0x402000, lines, 2);
	lines[0] = (struct pprof_line){fodd, 31};
	lodd = pprof_add_location(p, mexe, 0x403000, lines, 1);
	lraw = pprof_add_location(p, mlibc, 0x7f0000001234, NULL, 0);
	s1[0] = lfg;
	s1[1] = lmain;
	s2[0] = lraw;
	s2[1] = lfg;
	s2[2] = lmain;
	s3[0] = lodd;
	s3[1] = lmain;
	if (pprof_add_sample(p, s1, 2, v1, NULL, 0) < 0 ||
	    pprof_add_sample(p, s1, 2, v2, NULL, 0) < 0 ||
	    pprof_add_sample(p, s2, 3, v1, NULL, 0) < 0 ||
	    pprof_add_sample(p, s3, 2, v0, NULL, 0) < 0 ||
	    pprof_add_sample(p, s3, 2, v2, NULL, 0) < 0) {
		pprof_free(p);
		return NULL;
	}
	return p;
}

struct folded_args {
	const struct pprof_profile *p;
	int idx;
};

static int write_folded(FILE *fp, void *ctx)
{
	const struct folded_args *a = ctx;

	return folded_write(fp, a->p, a->idx);
}

/* The folded text of sample type idx of p; folded_write's return in *rc. */
static char *capture(const struct pprof_profile *p, int idx, int *rc)
{
	struct folded_args a = {p, idx};

	return tap_capture(write_folded, &a, rc);
}
static void test_folded(void)
{
	struct pprof_profile *p = build();
	char *out;
	int rc = -1;

	if (!tap_ok(p != NULL, "build the profile"))
		return;
	out = capture(p, 1, &rc);
	tap_ok(rc == 0 && out &&
		       strcmp(out, "main;f;g 150\n"
				   "main;f;g;libc.so.6+0x29234 100\n"
				   "main;odd_name 50\n") == 0,
	       "folded inuse_space: merged, caller first, inlined frames, "
	       "raw address, ';' replaced, zero left out");
	if (out && rc == 0 &&
	    strcmp(out, "main;f;g 150\n"
			"main;f;g;libc.so.6+0x29234 100\n"
			"main;odd_name 50\n") != 0)
		printf("# got:\n%s", out);
	free(out);
	out = capture(p, 0, &rc);
	tap_ok(rc == 0 && out &&
		       strcmp(out, "main;f;g 3\n"
				   "main;f;g;libc.so.6+0x29234 1\n"
				   "main;odd_name 2\n") == 0,
	       "folded inuse_objects");
	free(out);
	out = capture(p, 2, &rc);
	tap_ok(rc == -1, "an index out of range is an error");
	free(out);
	pprof_free(p);
}

static int write_prom(FILE *fp, void *ctx)
{
	return allocinfo_prom(fp, ctx, 1);
}

static void test_prom(void)
{
	const char *stats_text =
		"{\"pid\":42,\"program\":\"x\",\"alloc_count\":10,"
		"\"inuse_bytes\":null,\"uptime_seconds\":1.5,"
		"\"allocator\":\"glibc\"}";
	const char *mi_text =
		"{\"allocator\":\"glibc\",\"comparable\":{"
		"\"allocated_bytes\":1000,\"active_bytes\":null}}";
	json_error_t err;
	struct allocinfo_proc v = {.pid = 42, .program = "x\"y"};
	char *buf;
	int rc = -1;

	v.stats = json_loads(stats_text, 0, &err);
	v.mallinfo = json_loads(mi_text, 0, &err);
	buf = tap_capture(write_prom, &v, &rc);
	tap_ok(rc == 0 && buf &&
		       strstr(buf, "# TYPE palloc_alloc_total counter\n"
				   "palloc_alloc_total{pid=\"42\","
				   "program=\"x\\\"y\"} 10\n"),
	       "a counter with escaped labels");
	tap_ok(buf && strstr(buf, "# TYPE palloc_inuse_bytes gauge\n# HELP") &&
		       strstr(buf, "palloc_inuse_bytes{") == NULL,
	       "a null value gives no sample (the family is still declared)");
	tap_ok(buf &&
		       strstr(buf,
			      "palloc_allocator_allocated_bytes{pid=\"42\","
			      "program=\"x\\\"y\"} 1000\n") &&
		       strstr(buf, "palloc_allocator_active_bytes{") == NULL,
	       "allocator comparable fields, null left out");
	tap_ok(buf && strstr(buf,
			     "palloc_allocator_info{pid=\"42\","
			     "program=\"x\\\"y\",allocator=\"glibc\"} 1\n"),
	       "allocator_info");
	tap_ok(buf && strstr(buf, "palloc_uptime_seconds{pid=\"42\","
				  "program=\"x\\\"y\"} 1.5\n"),
	       "uptime as a real");
	json_decref(v.stats);
	json_decref(v.mallinfo);
	free(buf);
}

int main(void)
{
	test_folded();
	test_prom();
	return tap_done();
}
