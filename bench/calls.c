/* SPDX-License-Identifier: MIT */
/* bench/calls: one allocation call kind in a churn loop (bench/calls.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * calls KIND PAIRS: PAIRS iterations of the churn loop of bench/agent's
 * work (sizes 8 to 519 bytes from an LCG, each block living while the next
 * 4095 are made), with KIND
 *	malloc	free(old); malloc(size)
 *	calloc	free(old); calloc(1, size)
 *	realloc	realloc(old, size) (the first 4096: of NULL)
 *	new	operator delete(old); operator new(size) (libstdc++'s, called by
 *		their mangled names so that no C++ compiler is needed)
 * and prints a checksum. PAIRS 0 does only the start and exit, which
 * calls.sh subtracts.
 */
#define WINDOW 4096

void *_Znwm(size_t n);
void _ZdlPv(void *p);

int main(int argc, char **argv)
{
	static void *live[WINDOW];
	uint64_t x = 42, sum = 0;
	unsigned long pairs;
	int kind;

	if (argc != 3)
		return 2;
	switch (argv[1][0]) {
	case 'm':
	case 'c':
	case 'r':
	case 'n':
		kind = argv[1][0];
		break;
	default:
		return 2;
	}
	pairs = strtoul(argv[2], NULL, 10);
	for (unsigned long i = 0; i < pairs; i++) {
		size_t slot = i % WINDOW, size;
		char *p;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size = 8 + (size_t)((x >> 33) % 512);
		switch (kind) {
		case 'm':
			free(live[slot]);
			p = malloc(size);
			break;
		case 'c':
			free(live[slot]);
			p = calloc(1, size);
			break;
		case 'r':
			p = realloc(live[slot], size);
			break;
		default:
			if (live[slot])
				_ZdlPv(live[slot]);
			p = _Znwm(size);
			break;
		}
		if (!p)
			return 1;
		p[0] = (char)i;
		sum += (uintptr_t)p[0] + size;
		live[slot] = p;
	}
	for (size_t i = 0; i < WINDOW; i++) {
		if (kind == 'n' && live[i])
			_ZdlPv(live[i]);
		else
			free(live[i]);
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
