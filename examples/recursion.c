/* SPDX-License-Identifier: MIT */
/* Deep recursion without frame pointers, allocating at the leaf. */
#include "common.h"

#include "example.h"

/*
 * Built -O2 -fomit-frame-pointer (mk/examples.am appends both after the
 * project's CFLAGS), like Debian's own binaries: rbp is a general register
 * here, so a frame-pointer unwinder cannot follow these frames; only the
 * .eh_frame tables (libunwind: dwarf, auto) can.
 *
 * main calls descend(depth); descend(k) calls descend(k - 1) down to
 * descend(1), which calls leaf_alloc: depth descend frames between
 * leaf_alloc and main (default 60). leaf_alloc makes --count allocations of
 * --size bytes (default 1000 of 4096), all live at exit. The asm barrier
 * after each recursive call keeps GCC from turning the recursion into a
 * loop (tail-call and tail-recursion elimination), EX_SITE from inlining or
 * cloning it. Truth lines: leaf_alloc, and descend with the same values
 * (every sample's stack holds depth descend frames; pprof's cum column).
 */

/*
 * The same, whatever CFLAGS the project is configured with (a user's
 * -fno-omit-frame-pointer comes after the per-program flags): GCC's
 * optimize attribute wins over the command line for these functions.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_FRAME_POINTER __attribute__((optimize("omit-frame-pointer")))
#else
#define NO_FRAME_POINTER
#endif

static struct ex_site sites[2] = {
	{.name = "leaf_alloc"},
	{.name = "descend"},
};

static void **blocks;
static void *blocks_static[100000];
static unsigned long count = 1000, size = 4096;

EX_SITE NO_FRAME_POINTER void leaf_alloc(void);
EX_SITE NO_FRAME_POINTER int descend(unsigned long depth);

EX_SITE NO_FRAME_POINTER void leaf_alloc(void)
{
	for (unsigned long i = 0; i < count; i++) {
		blocks[i] = ex_keep(malloc(size));
		ex_check(blocks[i], "malloc");
		ex_alloc(&sites[0], size);
		ex_alloc(&sites[1], size);
	}
}

EX_SITE NO_FRAME_POINTER int descend(unsigned long depth)
{
	int r = 0;

	if (depth <= 1)
		leaf_alloc();
	else
		r = descend(depth - 1);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static const char help[] =
	"Usage: recursion [--depth <n>] [--count <n>] [--size <bytes>]\n"
	"                 [--truth <file>]\n"
	"\n"
	"Recurse <depth> frames deep in descend() (default 60), in code\n"
	"built -O2 -fomit-frame-pointer, then allocate <count> blocks "
	"of\n"
	"<size> bytes in leaf_alloc() (default 1000 of 4096), live at\n"
	"exit. Prints the truth (pid site alloc_objects alloc_space\n"
	"inuse_objects inuse_space) for leaf_alloc and descend on "
	"stderr\n"
	"and, with --truth, in <file>.\n"
	"\n"
	"Options:\n"
	" -d, --depth <n>      recursion depth, 1 to 10000 (default 60)\n"
	" -c, --count <n>      allocations, 1 to 100000 (default 1000)\n"
	" -s, --size <bytes>   bytes each, 1 to 1048576 (default 4096)\n" EX_HELP_OPTIONS
	"See examples/README.md.\n";

int main(int argc, char **argv)
{
	unsigned long depth = 60;
	const struct ex_opt opts[] = {
		{"depth", 'd', "depth", 1, 10000, &depth, NULL},
		{"count", 'c', "count", 1, ARRAY_SIZE(blocks_static), &count,
		 NULL},
		{"size", 's', "size", 1, 1 << 20, &size, NULL},
	};
	const char *truth = ex_options("recursion", help, argc, argv, opts,
				       ARRAY_SIZE(opts));

	if (ex_truth_start("recursion", truth) != 0)
		return 2;
	blocks = blocks_static;
	if (descend(depth) != (int)depth)
		return 3;
	return ex_report("recursion", truth, sites, ARRAY_SIZE(sites));
}
