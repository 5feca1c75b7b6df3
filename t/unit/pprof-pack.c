/* SPDX-License-Identifier: MIT */
/* Unit tests of pprof_pack: read back by the codec (protobuf-c) and zlib. */
#include "common.h"
#include "msg.h"
#include "pprof.h"
#include "pprof_pack.h"
#include "pprof_test.h"
#include "tap.h"

#include <zlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_crc(void)
{
	static unsigned char buf[200000];
	static const size_t lens[] = {0, 1, 3, 255, 256, 4096, 65535, 200000};
	size_t i;
	uint32_t c;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)next_rand();
	tap_ok(pprof_pack_crc32(0, "123456789", 9) == 0xcbf43926,
	       "CRC-32 of \"123456789\" is the check value cbf43926");
	for (i = 0; i < ARRAY_SIZE(lens); i++)
		tap_ok(pprof_pack_crc32(0, buf, lens[i]) ==
			       (uint32_t)crc32(0, buf, (uInt)lens[i]),
		       "CRC-32 of %zu random bytes is zlib's", lens[i]);
	c = pprof_pack_crc32(0, buf, 1000);
	c = pprof_pack_crc32(c, buf + 1000, sizeof(buf) - 1000);
	tap_ok(c == (uint32_t)crc32(0, buf, sizeof(buf)),
	       "CRC-32 continued over two pieces is zlib's over the whole");
	memset(buf, 0xff, 4096);
	tap_ok(pprof_pack_crc32(0, buf, 4096) == (uint32_t)crc32(0, buf, 4096),
	       "CRC-32 of 4096 bytes 0xff is zlib's");
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * The gzip file gz[glen] holds plain[n] as stored blocks, read by hand
 * (header, every block's LEN and NLEN, BFINAL on the last only, the
 * bytes) and by zlib (inflate); CRC and ISIZE are zlib's.
 */
static bool check_gzip(const unsigned char *gz, size_t glen,
		       const unsigned char *plain, size_t n, size_t *nblocks)
{
	static const unsigned char header[10] = {0x1f, 0x8b, 8, 0, 0,
						 0,    0,    0, 0, 3};
	size_t pos = sizeof(header), total = 0, blocks = 0, b;
	unsigned char *out;
	z_stream z = {0};
	bool final = false, ok;

	*nblocks = 0;
	if (glen < 18 || memcmp(gz, header, sizeof(header)))
		return printf("# bad gzip header\n"), false;
	while (!final) {
		if (pos + 5 > glen || gz[pos] > 1)
			return printf("# bad block header at %zu\n", pos),
			       false;
		final = gz[pos] == 1;
		b = (size_t)gz[pos + 1] | (size_t)gz[pos + 2] << 8;
		if ((((size_t)gz[pos + 3] | (size_t)gz[pos + 4] << 8) ^
		     0xffff) != b ||
		    (!final && b != 65535) || pos + 5 + b > glen ||
		    total + b > n || memcmp(gz + pos + 5, plain + total, b))
			return printf("# bad block %zu\n", blocks), false;
		pos += 5 + b;
		total += b;
		blocks++;
	}
	if (pos + 8 != glen || total != n)
		return printf("# %zu bytes after the blocks, %zu in them\n",
			      glen - pos, total),
		       false;
	if (le32(gz + pos) != (uint32_t)crc32(0, plain, (uInt)n) ||
	    le32(gz + pos + 4) != (uint32_t)n)
		return printf("# bad CRC or ISIZE\n"), false;
	*nblocks = blocks;
	out = malloc(n + 1);
	if (!out || inflateInit2(&z, 15 + 16) != Z_OK)
		return free(out), false;
	z.next_in = (Bytef *)(uintptr_t)gz;
	z.avail_in = (uInt)glen;
	z.next_out = out;
	z.avail_out = (uInt)n + 1;
	ok = inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == n &&
	     z.avail_in == 0 && !memcmp(out, plain, n);
	inflateEnd(&z);
	free(out);
	if (!ok)
		printf("# zlib's inflate does not give the protobuf back\n");
	return ok;
}

static bool read_varint(const unsigned char *b, size_t n, size_t *pos,
			uint64_t *v)
{
	unsigned int shift;

	*v = 0;
	for (shift = 0; shift < 64 && *pos < n; shift += 7) {
		*v |= (uint64_t)(b[*pos] & 0x7f) << shift;
		if (!(b[(*pos)++] & 0x80))
			return true;
	}
	return false;
}

/*
 * The top level of plain[n], read without the codec: fields in number
 * order, string_table[0] "", no string twice. *strings: the table's size.
 */
static bool check_top_level(const unsigned char *plain, size_t n,
			    size_t *strings)
{
	const unsigned char *str[4096];
	size_t len[4096], pos = 0, i, count = 0;
	uint64_t key, v, last = 0;

	while (pos < n) {
		if (!read_varint(plain, n, &pos, &key) || key >> 3 < last)
			return printf("# field %llu out of order at %zu\n",
				      (unsigned long long)(key >> 3), pos),
			       false;
		last = key >> 3;
		if ((key & 7) == 0) {
			if (!read_varint(plain, n, &pos, &v))
				return false;
			continue;
		}
		if ((key & 7) != 2 || !read_varint(plain, n, &pos, &v) ||
		    v > n - pos)
			return printf("# bad field at %zu\n", pos), false;
		if (key >> 3 == 6 && count < ARRAY_SIZE(str)) {
			for (i = 0; i < count; i++)
				if (len[i] == v &&
				    !memcmp(str[i], plain + pos, v))
					return printf("# string %zu twice\n",
						      i),
					       false;
			str[count] = plain + pos;
			len[count++] = v;
		}
		pos += v;
	}
	*strings = count;
	return count > 0 && len[0] == 0;
}

/* Encode p both ways and read it back every way; name says which. */
static void roundtrip(const struct pprof_profile *p, const char *name,
		      size_t want_blocks)
{
	void *plain = NULL, *gz = NULL;
	size_t n = 0, glen = 0, blocks = 0, strings = 0;
	struct pprof_profile *q = NULL, *r = NULL;

	bool ok = pprof_pack(p, false, &plain, &n) == 0 &&
		  pprof_pack(p, true, &gz, &glen) == 0;

	tap_ok(ok, "%s: encoded (%zu bytes)", name, n);
	if (!ok)
		return;
	ok = check_gzip(gz, glen, plain, n, &blocks) &&
	     (!want_blocks || blocks == want_blocks) &&
	     glen == n + 18 + 5 * blocks;
	tap_ok(ok, "%s: gzip of %zu stored blocks, CRC and size as zlib's",
	       name, blocks);
	ok = check_top_level(plain, n, &strings);
	tap_ok(ok, "%s: fields in order, %zu strings, \"\" first, none twice",
	       name, strings);
	q = pprof_decode(gz, glen, 0, NULL);
	if (!q)
		printf("# gzip: %s\n", msg_last());
	tap_ok(q && same_profile(p, q), "%s: the codec decodes the gzip file",
	       name);
	r = pprof_decode(plain, n, 0, NULL);
	if (!r)
		printf("# plain: %s\n", msg_last());
	tap_ok(r && same_profile(p, r), "%s: the codec decodes the protobuf",
	       name);
	pprof_free(q);
	pprof_free(r);
	pprof_pack_free(p, plain);
	pprof_pack_free(p, gz);
}

static void test_empty(void)
{
	struct pprof_profile *p = pprof_new(NULL);
	void *buf = NULL;
	size_t n = 0;

	tap_ok(pprof_pack(p, false, &buf, &n) == 0 && n == 2 &&
		       !memcmp(buf, "\x32\x00", 2),
	       "empty profile: string_table [\"\"] alone (32 00)");
	pprof_pack_free(p, buf);
	roundtrip(p, "empty profile", 1);
	pprof_free(p);
}

/* Every field set, the awkward values among them. */
static int build_rich(struct pprof_profile *p)
{
	struct pprof_mapping m1 = {.start = 0x400000,
				   .limit = 0x500000,
				   .file = "/usr/bin/prog",
				   .build_id = "0123abcd",
				   .has_functions = true,
				   .has_line_numbers = true},
			     m2 = {.start = 0x7f0000000000ULL,
				   .limit = UINT64_MAX,
				   .offset = 0x3000,
				   .file = "/lib/libc.so.6",
				   .has_filenames = true,
				   .has_inline_frames = true};
	struct pprof_label labels[5] = {
		{"thread", "worker-1", 0, ""},
		{"bytes", "", 4096, "bytes"},
		{"count", "", -7, ""},
		{"big", "", INT64_MIN, "ns"},
		{"thread", "\xc3\xa9t\xc3\xa9 \xe2\x9c\x93", 0, ""},
	};
	struct pprof_line lines[3];
	uint64_t m, fmain, ff, fg, fh, lmain, linl, lraw, lnomap, lfold;
	uint64_t stack[5];
	int64_t v1[4] = {1, 4096, 1, 4096}, v2[4] = {-3, INT64_MIN, 0, 0},
		v3[4] = {0, 0, 0, INT64_MAX};

	if (pprof_set_sample_types(p, types, 4) < 0 ||
	    pprof_set_period(p, "space", "bytes", 524288) < 0 ||
	    pprof_set_default_sample_type(p, "inuse_space") < 0 ||
	    pprof_add_comment(p, "command: prog --flag") < 0 ||
	    pprof_add_comment(p, "pid: 42") < 0 ||
	    pprof_add_comment(p, "command: prog --flag") < 0 ||
	    pprof_add_comment(p, "worker-1") < 0)
		return -1;
	p->drop_frames = pprof_intern(p, "^malloc$|^operator new");
	p->keep_frames = pprof_intern(p, "main");
	p->time_nanos = 1700000000000000000LL;
	p->duration_nanos = -5;
	m = pprof_add_mapping(p, &m1);
	if (!m || !pprof_add_mapping(p, &m2))
		return -1;
	fmain = pprof_add_function(p, "main", "main", "prog.c", 10);
	ff = pprof_add_function(p, "ns::f(int)", "_ZN2ns1fEi", "prog.c", 20);
	fg = pprof_add_function(p, "g", "g", "prog.h", -3);
	fh = pprof_add_function(p, "h", "", "", 0);
	if (!fmain || !ff || !fg || !fh)
		return -1;
	lines[0] = (struct pprof_line){fmain, 12};
	lmain = pprof_add_location(p, m, 0x401000, lines, 1);
	lines[0] = (struct pprof_line){fg, 4};
	lines[1] = (struct pprof_line){fh, -1};
	lines[2] = (struct pprof_line){ff, 0};
	linl = pprof_add_location(p, m, 0x402000, lines, 3);
	lraw = pprof_add_location(p, 2, 0x7f0000001234ULL, NULL, 0);
	lnomap = pprof_add_location(p, 0, 0xffffffffff600000ULL, NULL, 0);
	lfold = pprof_add_location(p, 0, 0, lines, 1);
	if (!lmain || !linl || !lraw || !lnomap || !lfold)
		return -1;
	p->locations[lfold - 1].is_folded = true;
	memcpy(stack, (uint64_t[]){lraw, lnomap, lfold, linl, lmain},
	       sizeof(stack));
	/* leaf first: two frames, all five, none, one */
	if (pprof_add_sample(p, stack + 3, 2, v1, labels, 2) < 0 ||
	    pprof_add_sample(p, stack, 5, v2, labels + 2, 3) < 0 ||
	    pprof_add_sample(p, NULL, 0, v3, NULL, 0) < 0)
		return -1;
	return pprof_add_sample(p, stack + 4, 1, v1, labels + 4, 1);
}

static void test_rich(void)
{
	struct pprof_profile *p = pprof_new(NULL);

	tap_ok(build_rich(p) == 0, "rich profile built");
	roundtrip(p, "labels, inlined lines, comments, every field", 1);
	pprof_free(p);
}

/* Thousands of stacks: several hundred KiB, several stored blocks. */
static void test_big(void)
{
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_mapping m = {
		.start = 0x400000, .limit = 0x40000000, .file = "/usr/bin/big"};
	uint64_t mid, locs[600], stack[32];
	int64_t v[4];
	char name[64], tname[32];
	struct pprof_label l[2] = {{"thread", NULL, 0, ""},
				   {"bytes_stddev", "", 0, "bytes"}};
	struct pprof_line line;
	size_t i, j;
	int ok = pprof_set_sample_types(p, types, 4) == 0;

	mid = pprof_add_mapping(p, &m);
	for (i = 0; ok && i < ARRAY_SIZE(locs); i++) {
		snprintf(name, sizeof(name), "function_number_%zu", i);
		line.function_id =
			pprof_add_function(p, name, name, "big.c", (int64_t)i);
		line.line = (int64_t)(i * 3);
		locs[i] = pprof_add_location(p, mid, 0x400000 + i * 16, &line,
					     i % 3 ? 1 : 0);
		ok = line.function_id && locs[i];
	}
	for (i = 0; ok && i < 5000; i++) {
		for (j = 0; j < ARRAY_SIZE(stack); j++)
			stack[j] = locs[next_rand() % ARRAY_SIZE(locs)];
		for (j = 0; j < 4; j++)
			v[j] = (int64_t)(next_rand() >> (j * 16));
		snprintf(tname, sizeof(tname), "worker-%zu", i % 50);
		l[0].str = tname;
		l[1].num = (int64_t)i;
		ok = pprof_add_sample(p, stack, 1 + i % ARRAY_SIZE(stack), v, l,
				      2) == 0;
	}
	tap_ok(ok, "big profile built");
	roundtrip(p, "5000 samples, 600 locations", 0);
	pprof_free(p);
}

/*
 * A protobuf of exactly n bytes (a comment's length makes up the
 * difference), at and around the 65535-byte block boundaries.
 */
static void test_boundaries(void)
{
	static const size_t sizes[] = {65534, 65535, 65536, 131070, 131071};
	static char text[140000];
	struct pprof_profile *p;
	void *buf;
	size_t i, n, base;
	char what[64];

	memset(text, 'x', sizeof(text) - 1);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* 20000 bytes of text: its length is a 3-byte varint, as
		 * for every length used below */
		text[20000] = '\0';
		p = pprof_new(NULL);
		if (pprof_add_comment(p, text) < 0 ||
		    pprof_pack(p, false, &buf, &base) < 0) {
			tap_ok(0, "boundary profile built");
			pprof_free(p);
			continue;
		}
		pprof_pack_free(p, buf);
		pprof_free(p);
		text[20000] = 'x';
		text[20000 + sizes[i] - base] = '\0';
		p = pprof_new(NULL);
		if (pprof_add_comment(p, text) < 0 ||
		    pprof_pack(p, false, &buf, &n) < 0)
			n = 0;
		else
			pprof_pack_free(p, buf);
		text[20000 + sizes[i] - base] = 'x';
		tap_ok(n == sizes[i], "boundary: a protobuf of %zu bytes (%zu)",
		       sizes[i], n);
		snprintf(what, sizeof(what), "%zu bytes", sizes[i]);
		roundtrip(p, what, (sizes[i] + 65534) / 65535);
		pprof_free(p);
	}
}

/* Every allocation failing in turn: -1 with a message, nothing leaked. */
static void test_enomem(void)
{
	struct counting c = {0};
	struct pprof_allocator a = {counting_alloc, counting_free, &c};
	struct pprof_profile *p = pprof_new(&a);
	size_t k, before_a, before_f, calls = 0;
	void *buf = NULL;
	size_t n;
	bool failed_cleanly = true;

	if (!p || build_rich(p) < 0) {
		tap_ok(0, "rich profile built in a counting allocator");
		pprof_free(p);
		return;
	}
	before_a = c.allocs;
	before_f = c.frees;
	if (pprof_pack(p, true, &buf, &n) == 0)
		pprof_pack_free(p, buf);
	calls = c.allocs - before_a;
	/* c changes through a's hooks, which cppcheck does not follow */
	/* cppcheck-suppress incorrectLogicOperator */
	tap_ok(calls >= 2 && c.frees - before_f == calls,
	       "pprof_pack: %zu allocations, all freed with the buffer", calls);
	for (k = 1; k <= calls; k++) {
		before_a = c.allocs;
		before_f = c.frees;
		c.fail_at = c.allocs + k;
		buf = NULL;
		msg_set("none");
		if (pprof_pack(p, true, &buf, &n) == 0 || buf ||
		    c.allocs - before_a != c.frees - before_f ||
		    !strcmp(msg_last(), "none"))
			failed_cleanly = false;
		c.fail_at = 0;
	}
	tap_ok(failed_cleanly,
	       "each of its allocations failing: -1, a message, no leak");
	pprof_free(p);
}

int main(void)
{
	test_crc();
	test_empty();
	test_rich();
	test_big();
	test_boundaries();
	test_enomem();
	return tap_done();
}
