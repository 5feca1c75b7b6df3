/* SPDX-License-Identifier: MIT */
/* A plugin that allocates, built twice (PLUGIN_B: other names and sizes)
 * for the unloaded-library test (t/3018). */
#include <stdlib.h>

#ifdef PLUGIN_B
#define PLUGIN_RUN plugin_b_run
#define PLUGIN_FILL plugin_b_fill
#define PLUGIN_SIZE 2222
#else
#define PLUGIN_RUN plugin_a_run
#define PLUGIN_FILL plugin_a_fill
#define PLUGIN_SIZE 1111
#endif

int PLUGIN_RUN(void **out, int n);

static volatile int sink;

/* Not exported: a stripped copy of the plugin cannot name it. */
static __attribute__((noinline)) int PLUGIN_FILL(void **out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = malloc(PLUGIN_SIZE);
	return sink;
}

/* n blocks from the exported function, n from the static one. */
__attribute__((noinline)) int PLUGIN_RUN(void **out, int n)
{
	int r;

	for (int i = 0; i < n; i++)
		out[i] = malloc(PLUGIN_SIZE + 1);
	r = PLUGIN_FILL(out + n, n);
	sink = r + 1; /* no tail call: this frame stays on the stack */
	return r;
}
