/* SPDX-License-Identifier: MIT */
/* Allocate through code generated at run time, named in a perf map
 * (t/3019), as a JIT compiler does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * jit-alloc [N]: copy a trampoline that calls malloc into anonymous
 * executable memory, describe it in /tmp/perf-PID.map (an older, longer
 * entry first, then the current one, which wins), and allocate N (5)
 * blocks of 3333 bytes through it, kept until exit. Prints "pid PID code
 * ADDR". Exit 77 where the trampoline is not written (not x86_64).
 */

typedef void *(*alloc_fn)(size_t);

/* The blocks, live until exit (inuse in the profile). */
void *jit_blocks[64];

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* push %rbp; mov %rsp,%rbp; movabs $malloc,%rax; call *%rax;
	 * pop %rbp; ret: a frame pointer, as JIT code keeps one */
	unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8,
				0,    0,    0,	  0,	0,    0,
				0,    0,    0xff, 0xd0, 0x5d, 0xc3};
	void *(*target)(size_t) = malloc;
	int n = argc > 1 ? atoi(argv[1]) : 5;
	alloc_fn fn;
	unsigned char *mem;
	char path[64];
	FILE *f;

	memcpy(code + 6, &target, sizeof(target));
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 2;
	memcpy(mem, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
		return 2;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 2;
	fprintf(f, "%lx 40 jit_old_code\n", (unsigned long)(uintptr_t)mem);
	fprintf(f, "%lx %zx jit_alloc_trampoline\n",
		(unsigned long)(uintptr_t)mem, sizeof(code));
	if (fclose(f) != 0)
		return 2;
	printf("pid %d code %p\n", (int)getpid(), (void *)mem);
	fflush(stdout);
	fn = (alloc_fn)(void *)mem;
	for (int i = 0; i < n && i < 64; i++)
		jit_blocks[i] = fn(3333);
	return 0;
#else
	(void)argc;
	(void)argv;
	return 77;
#endif
}
