/* SPDX-License-Identifier: MIT */
/* A library that allocates, for the agent's dlopen test (t/3005). */
#include <stdlib.h>

void dlalloc_run(void);

static void *kept[13];

__attribute__((noinline)) void dlalloc_run(void)
{
	for (int i = 0; i < 13; i++)
		kept[i] = malloc(8009);
}
