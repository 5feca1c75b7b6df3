/* SPDX-License-Identifier: MIT */
/* Unit tests of the profile model and codec: round trips, dedup, bad input. */
#include "common.h"
#include "msg.h"
#include "pprof.h"
#include "pprof_broken.h"
#include "pprof_test.h"
#include "tap.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

/* A small symbolized profile: main -> f -> g (g inlined into f). */
static int build(struct pprof_profile *p)
{
	struct pprof_mapping m = {.start = 0x400000,
				  .limit = 0x500000,
				  .offset = 0,
				  .file = "/usr/bin/prog",
				  .build_id = "0123abcd",
				  .has_functions = true};
	struct pprof_line lines[2];
	struct pprof_label labels[2] = {{"thread", "worker", 0, ""},
					{"bytes", "", 4096, "bytes"}};
	uint64_t mid, fmain, ff, fg, lmain, lfg, lraw, stack[3];
	int64_t v1[4] = {1, 4096, 1, 4096}, v2[4] = {3, 300, 0, 0};

	if (pprof_set_sample_types(p, types, 4) < 0 ||
	    pprof_set_period(p, "space", "bytes", 524288) < 0 ||
	    pprof_set_default_sample_type(p, "inuse_space") < 0 ||
	    pprof_add_comment(p, "command: prog --flag") < 0 ||
	    pprof_add_comment(p, "pid: 42") < 0)
		return -1;
	p->time_nanos = 1700000000000000000LL;
	p->duration_nanos = 5000000000LL;
	mid = pprof_add_mapping(p, &m);
	fmain = pprof_add_function(p, "main", "main", "prog.c", 10);
	ff = pprof_add_function(p, "ns::f(int)", "_ZN2ns1fEi", "prog.c", 20);
	fg = pprof_add_function(p, "g", "g", "prog.h", 3);
	if (!mid || !fmain || !ff || !fg)
		return -1;
	lines[0] = (struct pprof_line){fmain, 12};
	lmain = pprof_add_location(p, mid, 0x401000, lines, 1);
	lines[0] = (struct pprof_line){fg, 4};
	lines[1] = (struct pprof_line){ff, 25};
	lfg = pprof_add_location(p, mid, 0x402000, lines, 2);
	lraw = pprof_add_location(p, mid, 0x403000, NULL, 0);
	if (!lmain || !lfg || !lraw)
		return -1;
	stack[0] = lfg;
	stack[1] = lmain;
	if (pprof_add_sample(p, stack, 2, v1, labels, 2) < 0)
		return -1;
	stack[0] = lraw;
	stack[1] = lfg;
	stack[2] = lmain;
	return pprof_add_sample(p, stack, 3, v2, NULL, 0);
}

static void test_model(void)
{
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_mapping m = {.file = "/lib/x.so"};
	struct pprof_line bad = {99, 1};
	const char *a, *b;
	char buf[16];
	uint64_t mid, f1, f2, f3, l1, l2, l3, l4, none = 7;
	int64_t v = 1;

	tap_ok(p != NULL, "pprof_new");
	snprintf(buf, sizeof(buf), "%s", "hello");
	a = pprof_intern(p, "hello");
	b = pprof_intern(p, buf);
	tap_ok(a == b && a != buf && strcmp(a, "hello") == 0,
	       "equal strings are interned to one pointer");
	tap_ok(*pprof_intern(p, NULL) == '\0' && *pprof_intern(p, "") == '\0',
	       "NULL and \"\" intern to \"\"");
	mid = pprof_add_mapping(p, &m);
	tap_ok(mid == 1 && p->mappings[0].id == 1 &&
		       p->mappings[0].file == pprof_intern(p, "/lib/x.so"),
	       "first mapping gets id 1 and an interned file name");
	f1 = pprof_add_function(p, "f", "f", "x.c", 1);
	f2 = pprof_add_function(p, "f", "f", "x.c", 1);
	f3 = pprof_add_function(p, "f", "f", "x.c", 2);
	tap_ok(f1 == 1 && f2 == 1 && f3 == 2 && p->n_functions == 2,
	       "functions are deduplicated on all four fields");
	l1 = pprof_add_location(p, mid, 0x1234, NULL, 0);
	l2 = pprof_add_location(p, mid, 0x1234, NULL, 0);
	l3 = pprof_add_location(p, 0, 0x1234, NULL, 0);
	l4 = pprof_add_location(p, mid, 0x1234, (struct pprof_line[]){{f1, 3}},
				1);
	tap_ok(l1 == 1 && l2 == 1 && l3 == 2 && l4 == 3 && p->n_locations == 3,
	       "unsymbolized locations dedup on (mapping, address) only");
	tap_ok(pprof_add_location(p, 5, 0x1, NULL, 0) == 0 &&
		       strstr(msg_last(), "missing mapping 5"),
	       "a location with a missing mapping is refused: %s", msg_last());
	tap_ok(pprof_add_location(p, mid, 0x1, &bad, 1) == 0 &&
		       strstr(msg_last(), "missing function 99"),
	       "a location with a missing function is refused: %s", msg_last());
	tap_ok(pprof_set_location_lines(p, l1, (struct pprof_line[]){{f3, 8}},
					1) == 0 &&
		       p->locations[0].n_lines == 1 &&
		       p->locations[0].lines[0].function_id == f3,
	       "pprof_set_location_lines replaces the lines");
	tap_ok(pprof_set_sample_types(p, types, 1) == 0 &&
		       pprof_add_sample(p, &none, 1, &v, NULL, 0) < 0 &&
		       strstr(msg_last(), "missing location 7"),
	       "a sample with a missing location is refused: %s", msg_last());
	tap_ok(pprof_add_sample(p, &l1, 1, &v, NULL, 0) == 0 &&
		       pprof_set_sample_types(p, types, 2) < 0,
	       "sample types cannot change once there are samples");
	tap_ok(pprof_sample_type_index(p, "alloc_objects") == 0 &&
		       pprof_sample_type_index(p, "nope") == -1,
	       "pprof_sample_type_index");
	pprof_free(p);
	pprof_free(NULL);
}

static void test_roundtrip(void)
{
	struct counting c = {0};
	struct pprof_allocator ca = {counting_alloc, counting_free, &c};
	struct pprof_profile *p = pprof_new(&ca), *q, *r;
	char path[] = "/tmp/palloc-unit-pprof.XXXXXX";
	unsigned char *buf;
	size_t len;
	void *vbuf;
	int fd;

	tap_ok(p && build(p) == 0, "build a profile with a counting allocator");
	tap_ok(pprof_encode(p, true, &vbuf, &len) == 0 && len > 20,
	       "encode gzipped (%zu bytes)", len);
	buf = vbuf;
	tap_ok(buf[0] == 0x1f && buf[1] == 0x8b, "gzip magic");
	q = pprof_decode(buf, len, 0, &ca);
	tap_ok(q && same_profile(p, q), "gzipped round trip is lossless");
	pprof_free_buffer(p, buf);
	tap_ok(pprof_encode(p, false, &vbuf, &len) == 0, "encode plain");
	r = pprof_decode(vbuf, len, 0, NULL);
	tap_ok(r && same_profile(p, r), "plain round trip is lossless");
	tap_ok(r && r->locations[1].n_lines == 2 &&
		       strcmp(r->functions
				      [r->locations[1].lines[0].function_id - 1]
					      .name,
			      "g") == 0,
	       "inlined frames keep their order (innermost first)");
	/* the comparison itself finds a difference in any array */
	if (r && r->n_functions && r->n_comments) {
		r->functions[0].start_line++;
		tap_ok(!same_profile(p, r), "a changed function is told apart");
		r->functions[0].start_line--;
		r->n_comments--;
		tap_ok(!same_profile(p, r), "a missing comment is told apart");
		r->n_comments++;
	} else {
		tap_ok(false, "the profile has functions and comments");
	}
	pprof_free_buffer(p, vbuf);
	pprof_free(r);
	pprof_free(q);

	fd = mkstemp(path);
	tap_ok(fd >= 0 && pprof_write_fd(p, fd) == 0 && close(fd) == 0,
	       "pprof_write_fd");
	r = pprof_read_file(path);
	tap_ok(r && same_profile(p, r), "pprof_read_file reads it back");
	pprof_free(r);
	tap_ok(pprof_write_file(p, path) == 0 && (r = pprof_read_file(path)) &&
		       same_profile(p, r),
	       "pprof_write_file then pprof_read_file");
	pprof_free(r);
	unlink(path);
	tap_ok(pprof_read_file(path) == NULL &&
		       strstr(msg_last(), "cannot read profile '/tmp/palloc-"),
	       "a missing file names the path: %s", msg_last());
	pprof_free(p);
	tap_ok(c.allocs == c.frees && c.allocs > 0,
	       "every allocation went through the hooks and was freed "
	       "(%zu allocs, %zu frees)",
	       c.allocs, c.frees);
}

/* Every allocation failure is reported, not crashed on, and leaks nothing. */
static void test_alloc_failures(void)
{
	size_t n, failed = 0, total;
	bool all_clean = true;

	/* how many allocations a full build + encode + decode takes */
	{
		struct counting c = {0};
		struct pprof_allocator ca = {counting_alloc, counting_free, &c};
		struct pprof_profile *p = pprof_new(&ca), *q;
		void *buf;
		size_t len;

		build(p);
		pprof_encode(p, true, &buf, &len);
		q = pprof_decode(buf, len, 0, &ca);
		pprof_free(q);
		pprof_free_buffer(p, buf);
		pprof_free(p);
		total = c.allocs;
	}
	for (n = 1; n <= total; n++) {
		struct counting c = {.fail_at = n};
		struct pprof_allocator ca = {counting_alloc, counting_free, &c};
		struct pprof_profile *p = pprof_new(&ca), *q = NULL;
		void *buf = NULL;
		size_t len;
		int ok = p && build(p) == 0 &&
			 pprof_encode(p, true, &buf, &len) == 0 &&
			 (q = pprof_decode(buf, len, 0, &ca)) != NULL;

		if (!ok) {
			failed++;
			if (!strstr(msg_last(), "allocate") &&
			    !strstr(msg_last(), "zlib") &&
			    !strstr(msg_last(), "Cannot allocate") &&
			    !strstr(msg_last(), "malformed protobuf")) {
				printf("# failure %zu: unexpected message %s\n",
				       n, msg_last());
				all_clean = false;
			}
		}
		pprof_free(q);
		if (buf)
			pprof_free_buffer(p, buf);
		pprof_free(p);
		if (c.allocs != c.frees) {
			printf("# failure %zu: %zu allocs, %zu frees\n", n,
			       c.allocs, c.frees);
			all_clean = false;
		}
	}
	tap_ok(failed == total && all_clean,
	       "each of %zu allocation failures is reported and leaks nothing",
	       total);
}

static void test_broken(void)
{
	struct pprof_broken b[PPROF_BROKEN_MAX];
	size_t n = pprof_broken_make(b), i;

	tap_ok(n >= 15, "broken corpus built (%zu files)", n);
	for (i = 0; i < n; i++) {
		struct pprof_profile *p =
			pprof_decode(b[i].data, b[i].len, 0, NULL);

		tap_ok(!p && strstr(msg_last(), b[i].expect), "%s: %s",
		       b[i].name, p ? "accepted!" : msg_last());
		pprof_free(p);
	}
	pprof_broken_free(b, n);
}

static void test_size_cap(void)
{
	unsigned char *zeros = calloc(1, 1 << 20), *gz = malloc(1 << 16);
	uLongf gzlen = 1 << 16;
	z_stream z = {0};
	struct pprof_profile *p;

	deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = zeros;
	z.avail_in = 1 << 20;
	z.next_out = gz;
	z.avail_out = (uInt)gzlen;
	deflate(&z, Z_FINISH);
	gzlen -= z.avail_out;
	deflateEnd(&z);
	p = pprof_decode(gz, gzlen, 4096, NULL);
	tap_ok(!p && strstr(msg_last(), "larger than 4096 bytes uncompressed"),
	       "a gzip bomb stops at max_size: %s", msg_last());
	pprof_free(p);
	free(zeros);
	free(gz);
}

int main(void)
{
	test_model();
	test_roundtrip();
	test_alloc_failures();
	test_broken();
	test_size_cap();
	return tap_done();
}
