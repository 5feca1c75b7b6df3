/* SPDX-License-Identifier: MIT */
/* Test helper: write a raw (unsymbolized) profile of this program's stack. */
#include "common.h"
#include "msg_cli.h"
#include "pprof.h"
#include "selfmap.h"

#include <execinfo.h>

/*
 * pprof-self [--bad-build-id] FILE: one sample whose stack is
 * self_c <- self_inl (inlined into self_b) <- self_b <- self_a <- main
 * <- libc, as absolute return addresses - 1 with a mapping per object, the
 * way the agent records them. --bad-build-id writes a wrong build id for
 * the main executable. Prints the lines of the calls it made on stdout:
 * "self_inl LINE" and "self_b LINE" (the inlined call and its call site).
 */
#define MAX_FRAMES 32

static void *frames[MAX_FRAMES];
static int n_frames;
static volatile int line_inl, line_b;

static __attribute__((noinline)) void self_c(void)
{
	n_frames = backtrace(frames, MAX_FRAMES);
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void self_inl(void)
{
	self_c();
	line_inl = __LINE__ - 1; /* the call above */
}

static __attribute__((noinline)) void self_b(void)
{
	self_inl();
	line_b = __LINE__ - 1; /* the call above */
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void self_a(void)
{
	self_b();
	__asm__ volatile("" ::: "memory");
}

struct known {
	char file[4096], id[256];
	uint64_t mid;
};

static int write_profile(const char *path, bool bad_id)
{
	static const struct pprof_value_type types[4] = {
		{"alloc_objects", "count"},
		{"alloc_space", "bytes"},
		{"inuse_objects", "count"},
		{"inuse_space", "bytes"},
	};
	static struct known maps[MAX_FRAMES];
	int64_t values[4] = {1, 1024, 1, 1024};
	uint64_t locs[MAX_FRAMES];
	struct pprof_profile *p = pprof_new(NULL);
	size_t n_maps = 0, n_locs = 0, j;
	int i, ret;

	if (!p || pprof_set_sample_types(p, types, 4) < 0 ||
	    pprof_set_period(p, "space", "bytes", 1) < 0)
		return -1;
	/* the main executable's mapping first, then the frames' */
	for (i = -1; i < n_frames; i++) {
		const void *addr = i < 0 ? (const void *)self_a : frames[i];
		struct pprof_mapping m;
		struct known *k = &maps[n_maps];

		if (selfmap_find(addr, &m, k->file, sizeof(k->file), k->id,
				 sizeof(k->id)) < 0)
			continue;
		for (j = 0; j < n_maps; j++)
			if (strcmp(maps[j].file, k->file) == 0)
				break;
		if (j < n_maps) {
			k = &maps[j];
		} else {
			if (bad_id && n_maps == 0)
				m.build_id = "0123456789abcdef";
			k->mid = pprof_add_mapping(p, &m);
			n_maps++;
		}
		if (i < 0)
			continue;
		locs[n_locs] = pprof_add_location(
			p, k->mid, (uintptr_t)frames[i] - 1, NULL, 0);
		if (!k->mid || !locs[n_locs])
			return -1;
		n_locs++;
	}
	if (pprof_add_sample(p, locs, n_locs, values, NULL, 0) < 0)
		return -1;
	ret = pprof_write_file(p, path);
	pprof_free(p);
	return ret;
}

int main(int argc, char **argv)
{
	bool bad = argc == 3 && strcmp(argv[1], "--bad-build-id") == 0;

	msg_init(argv[0]);
	if (argc != 2 && !bad) {
		fprintf(stderr, "usage: pprof-self [--bad-build-id] FILE\n");
		return 2;
	}
	self_a();
	if (write_profile(argv[argc - 1], bad) < 0) {
		msg_error("%s", msg_last());
		return 2;
	}
	printf("self_inl %d\nself_b %d\n", line_inl, line_b);
	return 0;
}
