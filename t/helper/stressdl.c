/* SPDX-License-Identifier: MIT */
/* A library that allocates in its constructor and frees in its destructor,
 * dlopen'd and dlclose'd in a loop by t/helper/stress (t/3017). */
#include <stdlib.h>

void *stressdl_block(void);

static void *ctor_blocks[7];

__attribute__((constructor)) static void stressdl_init(void)
{
	for (int i = 0; i < 7; i++)
		ctor_blocks[i] = malloc(1000 + (size_t)i);
}

__attribute__((destructor)) static void stressdl_fini(void)
{
	for (int i = 0; i < 7; i++)
		free(ctor_blocks[i]);
}

/* A block the caller frees after the library is closed. */
__attribute__((noinline)) void *stressdl_block(void)
{
	return malloc(333);
}
