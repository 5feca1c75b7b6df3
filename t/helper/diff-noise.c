/* SPDX-License-Identifier: MIT */
/* diff-noise: one short workload, run again and again under other seeds. */
#include "common.h"

/*
 * diff-noise HOLD_MIB [LEAK_MIB]
 *
 * hold_blocks() allocates blocks of 64 KiB to 1 MiB until HOLD_MIB MiB are
 * held, then leak_more() allocates LEAK_MIB MiB more in the same way (a
 * function the runs without it do not have: a leak in new code). The sizes
 * are one fixed pseudo-random sequence per function, so every run makes
 * the same allocations and two sampled profiles differ only by the
 * sampler's seed (PALLOC_SEED). Everything is held until exit and never
 * touched, so a run of a few hundred MB takes milliseconds: t/5005 and
 * bench/diff/noise.sh run it hundreds of times under the agent.
 */

#define MIN_BLOCK (64u << 10)
#define MAX_BLOCK (1u << 20)

static void *held[8192];
static size_t n_held;

/* xorshift64*: the same sizes on every machine. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Allocate blocks of MIN_BLOCK..MAX_BLOCK bytes until mib MiB, inlined:
 * the caller of malloc is the function named in the profile. */
static inline __attribute__((always_inline)) void allocate(uint64_t mib,
							   uint64_t seed)
{
	uint64_t want = mib << 20, got = 0;

	while (got < want && n_held < ARRAY_SIZE(held)) {
		size_t size =
			MIN_BLOCK + next(&seed) % (MAX_BLOCK - MIN_BLOCK + 1);

		held[n_held] = malloc(size);
		if (!held[n_held++])
			exit(99);
		got += size;
	}
}

__attribute__((noinline)) void hold_blocks(uint64_t mib);
__attribute__((noinline)) void leak_more(uint64_t mib);

__attribute__((noinline)) void hold_blocks(uint64_t mib)
{
	allocate(mib, 0x9e3779b97f4a7c15ULL);
}

__attribute__((noinline)) void leak_more(uint64_t mib)
{
	allocate(mib, 0xd1b54a32d192ed03ULL);
}

int main(int argc, char **argv)
{
	char *end;
	uint64_t hold, leak = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: diff-noise HOLD_MIB [LEAK_MIB]\n");
		return 2;
	}
	hold = strtoull(argv[1], &end, 10);
	if (*end || (argc == 3 && (leak = strtoull(argv[2], &end, 10), *end)))
		return 2;
	/* Both calls in every run: the stack of hold_blocks is the same
	 * with and without the leak (no branch for the compiler to split). */
	hold_blocks(hold);
	leak_more(leak);
	return 0;
}
