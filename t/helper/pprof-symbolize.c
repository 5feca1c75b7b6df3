/* SPDX-License-Identifier: MIT */
/* Test helper: symbolize (or strip) a profile file with libcore/symbols. */
#include "common.h"
#include "msg_cli.h"
#include "pprof.h"
#include "symbols.h"

/*
 * pprof-symbolize [-r ROOT] [--strip] IN OUT: prints one line of figures,
 * "locations N symbolized N mappings N missing N mismatched N no_dwarf N",
 * and a warning per refused mapping on stderr. Exit 2 on error.
 */
static void warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	msg_warn("%s", msg);
}

int main(int argc, char **argv)
{
	struct symbols_stats st = {.warn = warn_cb};
	struct pprof_profile *p;
	const char *root = "";
	bool strip = false;
	int i = 1;

	msg_init(argv[0]);
	for (; i < argc - 2; i++) {
		if (strcmp(argv[i], "-r") == 0 && i + 1 < argc - 2)
			root = argv[++i];
		else if (strcmp(argv[i], "--strip") == 0)
			strip = true;
		else
			break;
	}
	if (argc - i != 2) {
		fprintf(stderr,
			"usage: pprof-symbolize [-r ROOT] [--strip] IN OUT\n");
		return 2;
	}
	p = pprof_read_file(argv[i]);
	if (!p ||
	    (strip ? symbols_strip(p) : symbols_symbolize(p, root, &st)) < 0 ||
	    pprof_write_file(p, argv[i + 1]) < 0) {
		msg_error("%s", msg_last());
		pprof_free(p);
		return 2;
	}
	if (!strip)
		printf("locations %zu symbolized %zu mappings %zu missing %zu "
		       "mismatched %zu no_dwarf %zu\n",
		       st.locations, st.locations_symbolized, st.mappings,
		       st.mappings_missing, st.mappings_mismatched,
		       st.mappings_no_dwarf);
	pprof_free(p);
	return 0;
}
