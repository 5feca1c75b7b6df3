/* SPDX-License-Identifier: MIT */
/* Load a plugin, let it allocate, unload it, load another one at the same
 * address, let it allocate too (t/3018). */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * plugin-host LIB_A LIB_B [close]: 6 blocks from LIB_A (plugin_a_run),
 * which is then unloaded (with LIB_B "-": kept loaded, and that is all); LIB_B
 * loaded where LIB_A was (exit 3 if the loader put it elsewhere every time) and
 * 8 blocks from it; with close, LIB_B is unloaded too. The blocks stay
 * allocated until exit. Prints the load addresses.
 */

typedef int (*run_fn)(void **out, int n);

static void *blocks[64];

static void *load(const char *lib, const char *sym, run_fn *fn, uintptr_t *base)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	struct link_map *lm = NULL;

	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
		fprintf(stderr, "plugin-host: cannot load '%s': %s\n", lib,
			dlerror());
		exit(2);
	}
	*fn = (run_fn)dlsym(h, sym);
	if (!*fn) {
		fprintf(stderr, "plugin-host: no '%s' in '%s'\n", sym, lib);
		exit(2);
	}
	*base = lm->l_addr;
	return h;
}

static void unload(void *h, const char *lib)
{
	if (dlclose(h) != 0 ||
	    dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) != NULL) {
		fprintf(stderr, "plugin-host: '%s' was not unloaded\n", lib);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	uintptr_t base_a, base_b = 0;
	run_fn fn;
	void *h;
	int tries;

	if (argc < 3) {
		fprintf(stderr, "usage: plugin-host LIB_A LIB_B [close]\n");
		return 2;
	}
	h = load(argv[1], "plugin_a_run", &fn, &base_a);
	fn(blocks, 3);
	if (strcmp(argv[2], "-") == 0)
		return 0;
	unload(h, argv[1]);
	for (tries = 0; tries < 20; tries++) {
		h = load(argv[2], "plugin_b_run", &fn, &base_b);
		if (base_b == base_a)
			break;
		unload(h, argv[2]);
	}
	printf("a 0x%lx b 0x%lx\n", (unsigned long)base_a,
	       (unsigned long)base_b);
	if (base_b != base_a)
		return 3;
	fn(blocks + 6, 4);
	if (argc > 3 && strcmp(argv[3], "close") == 0)
		unload(h, argv[2]);
	return 0;
}
