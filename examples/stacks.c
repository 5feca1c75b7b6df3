/* SPDX-License-Identifier: MIT */
/* One allocation at the end of each of 2^BITS distinct call paths. */
#include "common.h"

#include "example.h"

/*
 * Built with the project's CFLAGS. For each path number i from 0 to
 * 2^bits - 1, main calls step_0 or step_1 (bit 0 of i), which calls
 * step_0 or step_1 (bit 1), and so on, bits functions deep; the last one
 * calls leaf_alloc, which makes one malloc of 64 + (i % 8) * 16 bytes.
 * The stacks of two paths differ in at least the frame of the level where
 * their bits differ (each step_* has one call site per callee, and its
 * return address says which function the frame is), so the program has
 * exactly 2^bits distinct allocating stacks, each used once: with the
 * default 17 bits, 131072, twice the agent's stack table cap of 65536.
 * EX_SITE keeps every step_* a separate function (no inlining, cloning or
 * identical-code folding); the store to ex_sink after each call keeps the
 * call from becoming a tail call, which would drop the frame.
 *
 * Every size is at least 64 bytes, so at PALLOC_SAMPLE_RATE=1 each sample
 * weighs exactly 1 object and its size. The blocks are freed by main right
 * away, or with --keep live until exit. Truth line: leaf_alloc. The
 * program makes no other heap allocation after start-up (the --keep array
 * comes before the first path), so at rate 1 every sample the agent drops
 * is one of leaf_alloc's.
 */

static struct ex_site sites[1] = {
	{.name = "leaf_alloc"},
};

EX_SITE void *leaf_alloc(size_t size);
EX_SITE void *step_0(unsigned long level, unsigned long path, size_t size);
EX_SITE void *step_1(unsigned long level, unsigned long path, size_t size);

EX_SITE void *leaf_alloc(size_t size)
{
	void *p = ex_keep(malloc(size));

	ex_check(p, "malloc");
	ex_alloc(&sites[0], size);
	return p;
}

/*
 * One level below step_0 or step_1: the next function by the low bit of
 * path, leaf_alloc at level 0. Inlined into both, so that each has call
 * sites of its own.
 */
static inline __attribute__((always_inline)) void *
step_next(unsigned long level, unsigned long path, size_t size)
{
	if (level == 0)
		return leaf_alloc(size);
	if (path & 1)
		return step_1(level - 1, path >> 1, size);
	return step_0(level - 1, path >> 1, size);
}

EX_SITE void *step_0(unsigned long level, unsigned long path, size_t size)
{
	void *p = step_next(level, path, size);

	ex_sink = p;
	return p;
}

EX_SITE void *step_1(unsigned long level, unsigned long path, size_t size)
{
	void *p = step_next(level, path, size);

	ex_sink = p;
	return p;
}

static const char help[] =
	"Usage: stacks [--bits <n>] [--keep] [--truth <file>]\n"
	"\n"
	"Allocate one block at the end of each of 2^<bits> distinct call\n"
	"paths (default 17: 131072 paths, beyond the agent's cap of 65536\n"
	"stacks): <bits> levels of step_0() and step_1(), chosen by the bits\n"
	"of the path number, then leaf_alloc(), which mallocs 64 to 176\n"
	"bytes. Prints the truth (pid site alloc_objects alloc_space\n"
	"inuse_objects inuse_space) for leaf_alloc on stderr and, with\n"
	"--truth, in <file>.\n"
	"\n"
	"Options:\n"
	" -b, --bits <n>       path bits, 1 to 20 (default 17)\n"
	" -k, --keep           keep every block live until exit (default:\n"
	"                        each is freed right away)\n" EX_HELP_OPTIONS
	"See examples/README.md.\n";

int main(int argc, char **argv)
{
	unsigned long bits = 17, n;
	bool keep = false;
	void **blocks = NULL;
	const struct ex_opt opts[] = {
		{"bits", 'b', "bits", 1, 20, &bits, NULL},
		{"keep", 'k', NULL, 0, 0, NULL, &keep},
	};
	const char *truth =
		ex_options("stacks", help, argc, argv, opts, ARRAY_SIZE(opts));

	if (ex_truth_start("stacks", truth) != 0)
		return 2;
	n = 1UL << bits;
	if (keep) {
		blocks = calloc(n, sizeof(*blocks));
		ex_check(blocks, "calloc");
	}
	for (unsigned long i = 0; i < n; i++) {
		size_t size = 64 + (i % 8) * 16;
		void *p = (i & 1) ? step_1(bits - 1, i >> 1, size)
				  : step_0(bits - 1, i >> 1, size);

		if (keep) {
			blocks[i] = p;
		} else {
			free(p);
			ex_free(&sites[0], size);
		}
	}
	/* --keep: the blocks stay live until exit, like the truth says */
	return ex_report("stacks", truth, sites, ARRAY_SIZE(sites));
}
