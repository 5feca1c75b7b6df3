/* SPDX-License-Identifier: MIT */
/* bench/run: a malloc-heavy loop (mixed sizes, a window of live blocks). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * churn [MILLIONS]: MILLIONS (default 10) million malloc/free pairs of
 * sizes 16 to 4111 bytes from a fixed LCG, each block living while the
 * next 1023 are allocated: the allocator's fast paths, the interposer's
 * hot path. Prints a checksum so the work cannot be optimized away.
 */
#define WINDOW 1024

int main(int argc, char **argv)
{
	static void *live[WINDOW];
	unsigned long n =
		(argc > 1 ? strtoul(argv[1], NULL, 10) : 10) * 1000000UL;
	uint64_t x = 42, sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		size_t slot = i % WINDOW, size;
		char *p;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size = 16 + (size_t)((x >> 33) % 4096);
		free(live[slot]);
		p = malloc(size);
		if (!p)
			return 1;
		p[0] = (char)i;
		sum += (uintptr_t)p[0] + size;
		live[slot] = p;
	}
	for (size_t i = 0; i < WINDOW; i++)
		free(live[i]);
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
