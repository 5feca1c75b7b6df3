/* SPDX-License-Identifier: MIT */
/* Unit tests of the symbolizer on this very program's own addresses. */
#include "common.h"
#include "msg.h"
#include "pprof.h"
#include "selfmap.h"
#include "symbols.h"
#include "tap.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

/*
 * The functions whose addresses get symbolized. The line numbers are
 * recorded with __LINE__ on the line of the call they describe.
 */
static void *volatile ret_addr;
static volatile int line_inl, line_outer;

static __attribute__((noinline)) void sym_record(void)
{
	ret_addr = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void sym_inlined(void)
{
	sym_record();
	line_inl = __LINE__ - 1; /* the call above */
}

static __attribute__((noinline)) void sym_outer(void)
{
	sym_inlined();
	line_outer = __LINE__ - 1; /* the call above */
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) int sym_leaf(int x)
{
	return x * 3 + 1;
}

/* Like glibc's hidden aliases (__GI_setlocale): DWARF has the asm label as
 * its linkage name. */
int sym_labeled(int x) __asm__("sym_label_asm");
__attribute__((noinline, visibility("hidden"))) int sym_labeled(int x)
{
	return x * 5 + 2;
}

struct mapbuf {
	struct pprof_mapping m;
	char file[4096], id[256];
};

static uint64_t add_mapping_of(struct pprof_profile *p, const void *addr,
			       struct mapbuf *mb)
{
	if (selfmap_find(addr, &mb->m, mb->file, sizeof(mb->file), mb->id,
			 sizeof(mb->id)) < 0)
		return 0;
	return pprof_add_mapping(p, &mb->m);
}

static char warnings[4096];

static void collect(void *ctx, const char *msg)
{
	size_t n = strlen(warnings);

	(void)ctx;
	snprintf(warnings + n, sizeof(warnings) - n, "# %s\n", msg);
}

static const struct pprof_function *fn(const struct pprof_profile *p,
				       const struct pprof_location *l, size_t i)
{
	return &p->functions[l->lines[i].function_id - 1];
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

int main(void)
{
	struct symbols_stats st = {.warn = collect};
	struct pprof_profile *p = pprof_new(NULL);
	struct mapbuf self, cxx, bad, gone;
	uint64_t mself, mcxx, mbad, mgone, lleaf, linl, lnew, lbad, lgone;
	const struct pprof_location *l;
	void *new_addr = dlsym(RTLD_DEFAULT, "_Znwm");
	const char *s;

	sym_outer();
	tap_ok(sym_leaf(1) == 4 && ret_addr && line_inl && line_outer,
	       "the test functions ran");
	mself = add_mapping_of(p, (const void *)sym_leaf, &self);
	tap_ok(mself && *self.id, "own mapping %s with build id %s", self.file,
	       self.id);
	mcxx = new_addr ? add_mapping_of(p, new_addr, &cxx) : 0;
	tap_ok(mcxx != 0, "mapping of operator new: %s",
	       mcxx ? cxx.file : "none");
	bad = self;
	bad.m.file = bad.file;
	bad.m.build_id = "deadbeef";
	mbad = pprof_add_mapping(p, &bad.m);
	gone = self;
	gone.m.file = "/nonexistent/libgone.so";
	gone.m.build_id = "";
	mgone = pprof_add_mapping(p, &gone.m);

	lleaf = pprof_add_location(p, mself, (uintptr_t)sym_leaf + 1, NULL, 0);
	linl = pprof_add_location(p, mself, (uintptr_t)ret_addr - 1, NULL, 0);
	lnew = mcxx ? pprof_add_location(p, mcxx, (uintptr_t)new_addr, NULL, 0)
		    : 0;
	lbad = pprof_add_location(p, mbad, (uintptr_t)sym_leaf + 1, NULL, 0);
	lgone = pprof_add_location(p, mgone, (uintptr_t)sym_leaf + 1, NULL, 0);

	tap_ok(symbols_symbolize(p, "", &st) == 0, "symbols_symbolize");
	printf("# locations %zu symbolized %zu mappings %zu missing %zu "
	       "mismatched %zu no_dwarf %zu\n",
	       st.locations, st.locations_symbolized, st.mappings,
	       st.mappings_missing, st.mappings_mismatched,
	       st.mappings_no_dwarf);
	printf("%s", warnings);

	l = &p->locations[lleaf - 1];
	tap_ok(l->n_lines == 1 && strcmp(fn(p, l, 0)->name, "sym_leaf") == 0 &&
		       ends_with(fn(p, l, 0)->file, "t/unit/symbols.c") &&
		       fn(p, l, 0)->start_line > 0 &&
		       l->lines[0].line >= fn(p, l, 0)->start_line,
	       "a function: name, file and line (%s %s:%lld)",
	       l->n_lines ? fn(p, l, 0)->name : "-",
	       l->n_lines ? fn(p, l, 0)->file : "-",
	       l->n_lines ? (long long)l->lines[0].line : 0LL);

	l = &p->locations[linl - 1];
	tap_ok(l->n_lines == 2, "an inlined call gives two lines (%zu)",
	       l->n_lines);
	tap_ok(l->n_lines == 2 &&
		       strcmp(fn(p, l, 0)->name, "sym_inlined") == 0 &&
		       l->lines[0].line == line_inl &&
		       ends_with(fn(p, l, 0)->file, "t/unit/symbols.c"),
	       "innermost first: sym_inlined at line %d (got %lld)", line_inl,
	       l->n_lines ? (long long)l->lines[0].line : 0LL);
	tap_ok(l->n_lines == 2 && strcmp(fn(p, l, 1)->name, "sym_outer") == 0 &&
		       l->lines[1].line == line_outer,
	       "the caller last: sym_outer at line %d (got %lld)", line_outer,
	       l->n_lines == 2 ? (long long)l->lines[1].line : 0LL);

	l = lnew ? &p->locations[lnew - 1] : NULL;
	tap_ok(l && l->n_lines >= 1 &&
		       strcmp(fn(p, l, l->n_lines - 1)->name,
			      "operator new(unsigned long)") == 0 &&
		       strcmp(fn(p, l, l->n_lines - 1)->system_name, "_Znwm") ==
			       0,
	       "C++ names are demangled, system_name keeps the symbol (%s)",
	       l && l->n_lines ? fn(p, l, l->n_lines - 1)->name : "-");

	tap_ok(p->locations[lbad - 1].n_lines == 0 &&
		       st.mappings_mismatched == 1 &&
		       strstr(warnings, "build id mismatch for '") &&
		       strstr(warnings, "the profile has deadbeef, the file "
					"has "),
	       "a file with another build id is refused and reported");
	tap_ok(p->locations[lgone - 1].n_lines == 0 &&
		       st.mappings_missing == 1 &&
		       strstr(warnings,
			      "cannot open '/nonexistent/libgone.so'"),
	       "a missing file is counted and reported");
	tap_ok(st.locations == 5 && st.locations_symbolized == 3 &&
		       st.mappings == 4,
	       "stats: 5 locations, 3 symbolized, 4 mappings");
	tap_ok(p->mappings[mself - 1].has_functions &&
		       p->mappings[mself - 1].has_line_numbers &&
		       p->mappings[mself - 1].has_inline_frames &&
		       !p->mappings[mbad - 1].has_functions,
	       "mapping flags");

	s = symbols_demangle(p, "_ZN2ns5Cache4growEm");
	tap_ok(s && strcmp(s, "ns::Cache::grow(unsigned long)") == 0,
	       "demangle: %s", s);
	s = symbols_demangle(p, "_Znot_really");
	tap_ok(s && strcmp(s, "_Znot_really") == 0 &&
		       strcmp(symbols_demangle(p, "main"), "main") == 0,
	       "names that do not demangle stay as they are");

	/* the same through a root prefix */
	{
		struct pprof_profile *q = pprof_new(NULL);
		uint64_t m = pprof_add_mapping(q, &self.m);
		uint64_t id = pprof_add_location(q, m, (uintptr_t)sym_leaf + 1,
						 NULL, 0);

		tap_ok(symbols_symbolize(q, "/proc/self/root", NULL) == 0 &&
			       q->locations[id - 1].n_lines == 1,
		       "a root prefix (/proc/self/root) works");
		pprof_free(q);
	}

	/* a file deleted since it was mapped, in a live process (opening
	 * map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE) */
	{
		struct pprof_profile *q = pprof_new(NULL);
		struct mapbuf del = self;
		char mf[128];
		uint64_t m, id;
		int fd;

		snprintf(mf, sizeof(mf), "/proc/self/map_files/%llx-%llx",
			 (unsigned long long)self.m.start,
			 (unsigned long long)self.m.limit);
		fd = open(mf, O_RDONLY);
		del.m.file = "/deleted/by/an/upgrade (deleted)";
		del.m.build_id = self.id;
		m = pprof_add_mapping(q, &del.m);
		id = pprof_add_location(q, m, (uintptr_t)sym_leaf + 1, NULL, 0);
		if (fd < 0)
			printf("ok %d # SKIP cannot open %s: %s\n", ++tap_n, mf,
			       strerror(errno));
		else
			tap_ok(symbols_symbolize(q, "/proc/self/root", NULL) ==
					       0 &&
				       q->locations[id - 1].n_lines == 1,
			       "a deleted file is read through "
			       "/proc/PID/map_files");
		if (fd >= 0)
			close(fd);
		pprof_free(q);
	}

	/* an asm label shows the source name, the label as system name */
	{
		struct pprof_profile *q = pprof_new(NULL);
		uint64_t m = pprof_add_mapping(q, &self.m);
		uint64_t id = pprof_add_location(
			q, m, (uintptr_t)sym_labeled + 1, NULL, 0);

		int r = symbols_symbolize(q, "", NULL);

		l = &q->locations[id - 1];
		tap_ok(sym_labeled(1) == 7 && r == 0 && l->n_lines == 1 &&
			       strcmp(fn(q, l, 0)->name, "sym_labeled") == 0 &&
			       strcmp(fn(q, l, 0)->system_name,
				      "sym_label_asm") == 0,
		       "an asm label: name %s, system name %s",
		       l->n_lines ? fn(q, l, 0)->name : "-",
		       l->n_lines ? fn(q, l, 0)->system_name : "-");
		pprof_free(q);
	}

	/* the file stays loaded between calls, for other processes too:
	 * the same file mapped elsewhere (another load bias) */
	{
		struct pprof_profile *q = pprof_new(NULL);
		struct pprof_mapping moved = self.m;
		uint64_t shift = 0x10000000, m, id, id2;

		moved.start += shift;
		moved.limit += shift;
		m = pprof_add_mapping(q, &moved);
		id = pprof_add_location(q, m, (uintptr_t)sym_leaf + 1 + shift,
					NULL, 0);
		id2 = pprof_add_location(q, m, (uintptr_t)ret_addr - 1 + shift,
					 NULL, 0);
		tap_ok(symbols_symbolize(q, "", NULL) == 0 &&
			       q->locations[id - 1].n_lines == 1 &&
			       strcmp(fn(q, &q->locations[id - 1], 0)->name,
				      "sym_leaf") == 0 &&
			       q->locations[id2 - 1].n_lines == 2 &&
			       q->locations[id2 - 1].lines[0].line == line_inl,
		       "another load bias of a loaded file: same names, lines");
		symbols_cache_clear();
		symbols_cache_clear();
		pprof_free(q);
	}

	tap_ok(symbols_strip(p) == 0 && p->n_functions == 0 &&
		       p->locations[linl - 1].n_lines == 0 &&
		       !p->mappings[mself - 1].has_functions,
	       "symbols_strip removes functions and lines");
	tap_ok(symbols_symbolize(p, "", &st) == 0 &&
		       p->locations[linl - 1].n_lines == 2,
	       "and symbolizing again restores them");
	pprof_free(p);
	return tap_done();
}
