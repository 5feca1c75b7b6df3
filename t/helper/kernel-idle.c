/* SPDX-License-Identifier: MIT */
/* A statically linked process that holds known memory and waits, for t/1000. */
#include "common.h"

#include <signal.h>
#include <unistd.h>

/*
 * Linked statically so that it shares no file pages with the processes
 * that read its smaps (cat, palloc-smaps): their libc would otherwise
 * change its Pss while they run. argv[1]: MiB of heap to touch (default
 * 1). Prints "ready" on stdout once the memory is in place, then waits
 * for a signal.
 */
int main(int argc, char **argv)
{
	size_t mib = 1, i;
	volatile char *p;

	if (argc > 1)
		mib = strtoul(argv[1], NULL, 10);
	p = malloc(mib << 20);
	if (!p)
		return 1;
	/* volatile: the stores must happen even though nothing reads them. */
	for (i = 0; i < mib << 20; i += 4096)
		p[i] = 0x5a;
	fputs("ready\n", stdout);
	fflush(stdout);
	for (;;)
		pause();
}
