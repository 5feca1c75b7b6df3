#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID and objects loaded after the attach: the
# agent hooks dlopen, so a library dlopened while attached is patched
# before dlopen returns (its allocations exact at rate 1, none lost to
# the lazy patching), and dlsym, so malloc fetched by dlsym(RTLD_DEFAULT)
# or dlsym(handle) (the library needs the C library: it answers for
# malloc) after the attach is the agent's and records too; so are
# dlvsym(RTLD_DEFAULT, "malloc", "GLIBC_2.2.5") and a library loaded by
# dlmopen(LM_ID_BASE) (patched before dlmopen returns). The pointers
# dlsym and dlvsym handed out while attached still work after the detach
# (they forward to the C library's malloc).
# While attached the program finds entries of its GOTs leading into the
# agent; after the detach none.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-attach.sh"
command -v cc >/dev/null 2>&1 || skip_all "no C compiler (cc)"

plan 14

cat >lib.c <<'CEOF'
#include <stdlib.h>

/* exported: the compiler may not drop the blocks as never read */
void *lib_keep[64];
int lib_n;

/* k blocks of size bytes, kept */
__attribute__((noinline)) void lib_site(int k, size_t size)
{
	for (int i = 0; i < k && lib_n < 64; i++)
		lib_keep[lib_n++] = malloc(size);
}
CEOF
cat >host.c <<'CEOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[64];
static int n;
static void *(*saved[2])(size_t);

/* GOT entries (JUMP_SLOT, GLOB_DAT) of every object but the agent
 * leading into the agent */
static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Rela) *rel[2] = {0};
	size_t relsz[2] = {0};
	int *ours = arg;

	(void)size;
	if (strstr(info->dlpi_name, "libpalloc"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr +
					     info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn->d_un.d_ptr;

		p = p < info->dlpi_addr ? p + info->dlpi_addr : p;
		if (dyn->d_tag == DT_JMPREL)
			rel[0] = (const void *)p;
		else if (dyn->d_tag == DT_PLTRELSZ)
			relsz[0] = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_RELA)
			rel[1] = (const void *)p;
		else if (dyn->d_tag == DT_RELASZ)
			relsz[1] = dyn->d_un.d_val;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; rel[k] && i < relsz[k] / sizeof(ElfW(Rela)); i++) {
			unsigned t = ELF64_R_TYPE(rel[k][i].r_info);
			Dl_info di;
			void *v;

			if (t != R_X86_64_JUMP_SLOT && t != R_X86_64_GLOB_DAT)
				continue;
			v = *(void **)(info->dlpi_addr + rel[k][i].r_offset);
			if (dladdr(v, &di) && di.dli_fname &&
			    strstr(di.dli_fname, "libpalloc"))
				(*ours)++;
		}
	return 0;
}

/* lib_site(k, size) of the library h (NULL: its loading failed) */
static int call_site(void *h, int k, size_t size)
{
	void (*site)(int, size_t);

	site = h ? (void (*)(int, size_t))dlsym(h, "lib_site") : NULL;
	if (!site) {
		printf("loading failed: %s\n", dlerror());
		return 0;
	}
	site(k, size);
	return 1;
}

int main(int argc, char **argv)
{
	char buf[64];
	void *h = NULL;

	(void)argc;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		ssize_t r = read(0, buf, sizeof(buf) - 1);

		if (r < 0) {
			printf("read failed: %s\n", strerror(errno));
			return 3;
		}
		if (r == 0 || strncmp(buf, "quit", 4) == 0)
			break;
		if (strncmp(buf, "open", 4) == 0) {
			h = dlopen(argv[1], RTLD_NOW);
			if (!call_site(h, 6, 300))
				return 4;
			printf("opened\n");
		} else if (strncmp(buf, "sym", 3) == 0) {
			void *(*m1)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
			void *(*m2)(size_t) = (void *(*)(size_t))dlsym(h, "malloc");

			for (int i = 0; i < 4; i++)
				keep[n++] = m1(500);
			for (int i = 0; i < 2; i++)
				keep[n++] = m2(700);
			saved[0] = m1;
			printf("sym\n");
		} else if (strncmp(buf, "vsym", 4) == 0) {
			void *(*m3)(size_t) = (void *(*)(size_t))dlvsym(RTLD_DEFAULT, "malloc", "GLIBC_2.2.5");

			if (!m3) {
				printf("dlvsym failed: %s\n", dlerror());
				return 5;
			}
			for (int i = 0; i < 3; i++)
				keep[n++] = m3(900);
			saved[1] = m3;
			printf("vsym\n");
		} else if (strncmp(buf, "mopen", 5) == 0) {
			if (!call_site(dlmopen(LM_ID_BASE, argv[2], RTLD_NOW), 2, 1100))
				return 6;
			printf("mopened\n");
		} else if (strncmp(buf, "late", 4) == 0) {
			/* the pointers fetched while attached, after the detach */
			for (int k = 0; k < 2; k++) {
				char *p = saved[k](64);

				memset(p, k, 64);
				free(p);
			}
			printf("late ok\n");
		} else if (strncmp(buf, "got", 3) == 0) {
			int ours = 0;

			dl_iterate_phdr(visit, &ours);
			printf("ours %d\n", ours);
		} else if (strncmp(buf, "close", 5) == 0) {
			printf("closed %d\n", dlclose(h));
			h = NULL;
		}
		fflush(stdout);
	}
	printf("bye\n");
	return 0;
}
CEOF
cc -O1 -g -fPIC -shared -o "$T/liballoc.so" lib.c -Wl,--no-as-needed -lc &&
	cp "$T/liballoc.so" "$T/liballoc2.so" &&
	cc -O1 -g -o host host.c -ldl ||
	{ echo "Bail out! cc failed"; exit 1; }

start_target ./host "$T/liballoc.so" "$T/liballoc2.so"

check "attached at rate 1" attach_start "$tp" run.err -r 1 -o dl.pb.gz
check "dlopen while attached, its site called at once" say open opened
check "malloc from dlsym(RTLD_DEFAULT) and dlsym(handle) called" say sym sym
check "malloc from dlvsym(RTLD_DEFAULT) called" say vsym vsym
check "dlmopen(LM_ID_BASE) while attached, its site called at once" \
	say mopen mopened
printf 'got\n' >&3
check "attached: GOT entries lead into the agent" \
	retry 300 0.1 grep -Eq '^ours [1-9]' out.txt
attach_stop
check "detached: status 0" test "$rc" -eq 0
sed 's/^/# /' run.err
# 6 x 300 from the library, 4 x 500 and 2 x 700 from dlsym's malloc,
# 3 x 900 from dlvsym's, 2 x 1100 from the library dlmopen loaded
check "exact at rate 1: 17 objects, 9.9 KiB, all in use" \
	grep -Eq '^palloc-run: wrote dl\.pb\.gz: alloc 9\.9 KiB in 17 objects, inuse 9\.9 KiB in 17 objects, ' run.err
palloc-dump -t 0 --sample-index alloc_space dl.pb.gz >top.txt 2>&1
sed 's/^/# /' top.txt | head -12
check "the library's site is in the profile" grep -q lib_site top.txt
printf 'got\n' >&3
retry 300 0.1 sh -c "[ \$(grep -c '^ours ' out.txt) -eq 2 ]"
check "detached: no GOT entry leads into the agent" \
	sh -c "grep '^ours ' out.txt | tail -1 | grep -qx 'ours 0'"
check "dlclose after the detach" say close 'closed 0'
check "dlsym's and dlvsym's pointers work after the detach" say late 'late ok'
quit_target

done_testing
