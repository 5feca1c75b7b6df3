/* SPDX-License-Identifier: MIT */
/* diff-mkprof: write pprof profiles from a text description, or big random
 * ones. */
#include "common.h"

#include "msg.h"
#include "num.h"
#include "pprof.h"

/*
 * Usage:
 *   diff-mkprof OUT < DESCRIPTION
 *   diff-mkprof --big SAMPLES SEED VARIANT OUT
 *
 * DESCRIPTION, one directive per line ('#' starts a comment):
 *   types TYPE/UNIT...             sample types (default: Go's heap four)
 *   period TYPE/UNIT N             period type and period
 *   default TYPE                   default sample type
 *   mapping FILE START LIMIT OFFSET [BUILD_ID]
 *   sample V... ; FRAME...         values, then frames leaf first
 *   comment TEXT                   a profile comment, TEXT verbatim to the
 *                                  end of the line ('#' included)
 * A FRAME is ADDR (an unsymbolized address, 0x hex, in the mapping that
 * contains it) or [ADDR=]LINE[|LINE...] (one location, innermost inlined
 * line first), a LINE being FUNC or FUNC@FILE:LINENO. Equal frame words
 * share one location.
 *
 * --big writes SAMPLES random stacks (depth 8..40 over 20000 locations of
 * 5000 functions), the same for a given SEED; VARIANT 1 adds 4096 bytes
 * to the inuse values of every 10th sample and a new stack, like growth
 * between two dumps. Prints the uncompressed size in bytes on stdout.
 */

struct cached {
	char *word;
	uint64_t id;
};

static struct cached *cache;
static size_t n_cache, cap_cache;

static PALLOC_NORETURN void die(const char *what)
{
	fprintf(stderr, "diff-mkprof: %s: %s\n", what, msg_last());
	exit(2);
}

static PALLOC_NORETURN void bad(int lineno, const char *why)
{
	fprintf(stderr, "diff-mkprof: line %d: %s\n", lineno, why);
	exit(2);
}

static uint64_t hex(const char *s, int lineno)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		bad(lineno, "bad number");
	return v;
}

static uint64_t mapping_of(struct pprof_profile *p, uint64_t addr)
{
	for (size_t i = 0; i < p->n_mappings; i++)
		if (addr >= p->mappings[i].start && addr < p->mappings[i].limit)
			return i + 1;
	return 0;
}

static uint64_t frame(struct pprof_profile *p, const char *word, int lineno)
{
	struct pprof_line lines[16];
	char buf[512], *s, *eq, *save = NULL, *tok;
	uint64_t addr = 0, id;
	size_t n = 0;

	for (size_t i = 0; i < n_cache; i++)
		if (strcmp(cache[i].word, word) == 0)
			return cache[i].id;
	snprintf(buf, sizeof(buf), "%s", word);
	s = buf;
	eq = strchr(s, '=');
	if (eq) {
		*eq = '\0';
		addr = hex(s, lineno);
		s = eq + 1;
	} else if (strncmp(s, "0x", 2) == 0) {
		addr = hex(s, lineno);
		s = NULL;
	}
	for (tok = s ? strtok_r(s, "|", &save) : NULL; tok;
	     tok = strtok_r(NULL, "|", &save)) {
		char *at = strchr(tok, '@'), *colon;
		const char *file = "";
		int64_t line = 0;

		if (n == ARRAY_SIZE(lines))
			bad(lineno, "too many inlined lines");
		if (at) {
			*at = '\0';
			file = at + 1;
			colon = strrchr(at + 1, ':');
			if (!colon)
				bad(lineno, "want FUNC@FILE:LINE");
			*colon = '\0';
			line = (int64_t)hex(colon + 1, lineno);
		}
		lines[n].function_id = pprof_add_function(p, tok, tok, file, 0);
		if (!lines[n].function_id)
			die("add function");
		lines[n++].line = line;
	}
	id = pprof_add_location(p, addr ? mapping_of(p, addr) : 0, addr, lines,
				n);
	if (!id)
		die("add location");
	if (n_cache == cap_cache) {
		cap_cache = cap_cache ? cap_cache * 2 : 64;
		cache = realloc(cache, cap_cache * sizeof(*cache));
		if (!cache)
			exit(2);
	}
	cache[n_cache].word = strdup(word);
	cache[n_cache++].id = id;
	return id;
}

static void set_types(struct pprof_profile *p, char **words, size_t n,
		      int lineno)
{
	struct pprof_value_type t[16];

	if (n > ARRAY_SIZE(t))
		bad(lineno, "too many types");
	for (size_t i = 0; i < n; i++) {
		char *slash = strchr(words[i], '/');

		if (!slash)
			bad(lineno, "want TYPE/UNIT");
		*slash = '\0';
		t[i].type = words[i];
		t[i].unit = slash + 1;
	}
	if (pprof_set_sample_types(p, t, n) < 0)
		die("set types");
}

static void heap_types(struct pprof_profile *p)
{
	static const struct pprof_value_type t[] = {
		{"alloc_objects", "count"},
		{"alloc_space", "bytes"},
		{"inuse_objects", "count"},
		{"inuse_space", "bytes"},
	};

	if (pprof_set_sample_types(p, t, ARRAY_SIZE(t)) < 0)
		die("set types");
	/* Go's period type; rate 1 unless a period line came first. */
	if (!p->period && pprof_set_period(p, "space", "bytes", 1) < 0)
		die("set period");
}

static int from_text(const char *out)
{
	struct pprof_profile *p = pprof_new(NULL);
	char line[8192];
	int lineno = 0;
	bool typed = false;

	if (!p)
		die("new");
	while (fgets(line, sizeof(line), stdin)) {
		char *words[512], *save = NULL, *w, *hash = strchr(line, '#');
		size_t n = 0;

		lineno++;
		if (strncmp(line, "comment ", 8) == 0) {
			line[strcspn(line, "\n")] = '\0';
			if (pprof_add_comment(p, line + 8) < 0)
				die("comment");
			continue;
		}
		if (hash)
			*hash = '\0';
		for (w = strtok_r(line, " \t\n", &save); w && n < 512;
		     w = strtok_r(NULL, " \t\n", &save))
			words[n++] = w;
		if (n == 0)
			continue;
		if (strcmp(words[0], "types") == 0) {
			set_types(p, words + 1, n - 1, lineno);
			typed = true;
		} else if (strcmp(words[0], "period") == 0 && n == 3) {
			char *slash = strchr(words[1], '/');

			if (!slash)
				bad(lineno, "want TYPE/UNIT");
			*slash = '\0';
			if (pprof_set_period(p, words[1], slash + 1,
					     (int64_t)hex(words[2], lineno)) <
			    0)
				die("period");
		} else if (strcmp(words[0], "default") == 0 && n == 2) {
			if (pprof_set_default_sample_type(p, words[1]) < 0)
				die("default");
		} else if (strcmp(words[0], "mapping") == 0 && n >= 5) {
			struct pprof_mapping m = {0};

			m.file = words[1];
			m.start = hex(words[2], lineno);
			m.limit = hex(words[3], lineno);
			m.offset = hex(words[4], lineno);
			m.build_id = n > 5 ? words[5] : "";
			if (!pprof_add_mapping(p, &m))
				die("mapping");
		} else if (strcmp(words[0], "sample") == 0) {
			int64_t vals[16];
			uint64_t locs[256];
			size_t nv = 0, nl = 0, i = 1;

			if (!typed) {
				heap_types(p);
				typed = true;
			}
			for (; i < n && strcmp(words[i], ";") != 0; i++) {
				if (nv == ARRAY_SIZE(vals) ||
				    num_parse_i64(words[i], &vals[nv++]) < 0)
					bad(lineno, "bad value");
			}
			if (nv != p->n_sample_types)
				bad(lineno, "value count differs from types");
			for (i++; i < n && nl < ARRAY_SIZE(locs); i++)
				locs[nl++] = frame(p, words[i], lineno);
			if (pprof_add_sample(p, locs, nl, vals, NULL, 0) < 0)
				die("sample");
		} else {
			bad(lineno, "unknown directive");
		}
	}
	if (!typed)
		heap_types(p);
	if (pprof_write_file(p, out) < 0)
		die(out);
	pprof_free(p);
	return 0;
}

/* xorshift64*: reproducible across machines, unlike rand(). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static int big(uint64_t n_samples, uint64_t seed, uint64_t variant,
	       const char *out)
{
	enum { N_FUNCS = 5000, N_LOCS = 20000 };
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_mapping m = {.file = "/usr/bin/bigprog",
				  .start = 0x400000,
				  .limit = 0x400000 + 16 * N_LOCS + 4096,
				  .build_id = "00112233445566778899"};
	uint64_t s = seed * 2654435761u + 1, locs[48], extra;
	char name[64], file[64];
	void *buf;
	size_t len;

	if (!p)
		die("new");
	heap_types(p);
	if (!pprof_add_mapping(p, &m))
		die("mapping");
	for (unsigned i = 0; i < N_LOCS; i++) {
		struct pprof_line ln;
		unsigned f = i % N_FUNCS;

		snprintf(name, sizeof(name), "ns%u::Class%u::method_%u", f % 17,
			 f % 251, f);
		snprintf(file, sizeof(file), "src/module%u/file%u.cc", f % 17,
			 f % 251);
		ln.function_id = pprof_add_function(p, name, name, file, 0);
		ln.line = 10 + i / N_FUNCS;
		if (!ln.function_id ||
		    !pprof_add_location(p, 1, 0x400000 + 16 * i + 8, &ln, 1))
			die("location");
	}
	for (uint64_t k = 0; k < n_samples; k++) {
		size_t depth = 8 + rnd(&s) % 33;
		int64_t size = 16 + (int64_t)(rnd(&s) % 4096), v[4];

		for (size_t j = 0; j < depth; j++)
			locs[j] = 1 + rnd(&s) % N_LOCS;
		v[0] = 1 + (int64_t)(rnd(&s) % 8);
		v[1] = v[0] * size;
		v[2] = v[0] / 2;
		v[3] = v[2] * size;
		if (variant && k % 10 == 0) {
			v[2] += 1;
			v[3] += 4096;
		}
		if (pprof_add_sample(p, locs, depth, v, NULL, 0) < 0)
			die("sample");
	}
	if (variant) {
		int64_t v[4] = {1024, 1 << 24, 1024, 1 << 24};

		extra = 1;
		if (pprof_add_sample(p, &extra, 1, v, NULL, 0) < 0)
			die("sample");
	}
	if (pprof_encode(p, false, &buf, &len) < 0)
		die("encode");
	pprof_free_buffer(p, buf);
	if (pprof_write_file(p, out) < 0)
		die(out);
	printf("%zu\n", len);
	pprof_free(p);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n, seed, variant;

	if (argc == 2)
		return from_text(argv[1]);
	if (argc == 6 && strcmp(argv[1], "--big") == 0) {
		if (num_parse_u64(argv[2], false, &n) < 0 ||
		    num_parse_u64(argv[3], false, &seed) < 0 ||
		    num_parse_u64(argv[4], false, &variant) < 0)
			die("arguments");
		return big(n, seed, variant, argv[5]);
	}
	fprintf(stderr, "usage: diff-mkprof OUT < DESCRIPTION\n"
			"       diff-mkprof --big SAMPLES SEED VARIANT OUT\n");
	return 2;
}
