/* SPDX-License-Identifier: MIT */
/* Known live bytes per site, block sizes from 8 B to 8 MiB: error bar input. */
#include "common.h"

#include "example.h"

/*
 * Each site function allocates 2 N blocks of one size with malloc, then
 * frees every second one, so N stay live at exit. Its truth is printed
 * (with the '#size' lines the sampling variance is computed from):
 *
 * site      size     allocated   live at exit    live / 512 KiB rate
 * size_8    8 B      2 x 131072  1 MiB           2
 * size_64   64 B     2 x 262144  16 MiB          32
 * size_1k   1 KiB    2 x 16384   16 MiB          32
 * size_64k  64 KiB   2 x 2048    128 MiB         256
 * size_512k 512 KiB  2 x 256     128 MiB         256
 * size_8m   8 MiB    2 x 64      512 MiB         1024
 *
 * Only the first byte of each block is written (ex_keep), so the 800 MiB
 * live are address space, not resident memory: a run takes a few tens of
 * milliseconds and about 20 MB of RSS. With the agent at the default rate
 * the expected number of samples per site is 2, 32, 32, 240, 162 and 64:
 * from a site too small to estimate (size_8) to ones sampled exactly
 * (size_8m), which is what t/3020-fidelity-seeds.sh needs.
 */

enum { S_8, S_64, S_1K, S_64K, S_512K, S_8M, S_COUNT };

static struct ex_site sites[S_COUNT] = {
	[S_8] = {.name = "size_8"},	  [S_64] = {.name = "size_64"},
	[S_1K] = {.name = "size_1k"},	  [S_64K] = {.name = "size_64k"},
	[S_512K] = {.name = "size_512k"}, [S_8M] = {.name = "size_8m"},
};

#define MAX_BLOCKS (2 * 262144)
static void *blocks[MAX_BLOCKS];

/*
 * One function per site, so each is the leaf (the caller of malloc) of its
 * own stacks: allocate 2 n blocks of size bytes, free the odd ones.
 */
#define SITE(fn, idx, size, n)                                                 \
	EX_SITE void fn(void);                                                 \
	EX_SITE void fn(void)                                                  \
	{                                                                      \
		for (size_t i = 0; i < 2 * (size_t)(n); i++) {                 \
			blocks[i] = ex_keep(malloc(size));                     \
			ex_check(blocks[i], "malloc");                         \
			ex_alloc(&sites[idx], size);                           \
		}                                                              \
		for (size_t i = 1; i < 2 * (size_t)(n); i += 2) {              \
			free(blocks[i]);                                       \
			ex_free(&sites[idx], size);                            \
		}                                                              \
	}

/* The live halves are left in blocks[] until the next site overwrites the
 * pointers: live blocks need no pointer to stay allocated. */
SITE(size_8, S_8, 8, 131072)
SITE(size_64, S_64, 64, 262144)
SITE(size_1k, S_1K, 1024, 16384)
SITE(size_64k, S_64K, 65536, 2048)
SITE(size_512k, S_512K, 524288, 256)
SITE(size_8m, S_8M, 8 << 20, 64)

static const char help[] =
	"Usage: sizes [--truth <file>]\n"
	"\n"
	"Allocate blocks of 8 B, 64 B, 1 KiB, 64 KiB, 512 KiB and 8 MiB "
	"from\n"
	"one function each, free half of them, and print what a heap "
	"profile\n"
	"must show per function, on stderr and (with --truth) in "
	"<file>:\n" EX_HELP_TRUTH_LINES "\n"
	"Options:\n" EX_HELP_OPTIONS
	"t/3020-fidelity-seeds.sh runs it under 100 seeds.\n";

int main(int argc, char **argv)
{
	const char *truth = ex_options("sizes", help, argc, argv, NULL, 0);

	if (ex_truth_start("sizes", truth) != 0)
		return 2;

	size_8();
	size_64();
	size_1k();
	size_64k();
	size_512k();
	size_8m();

	return ex_report("sizes", truth, sites, S_COUNT);
}
