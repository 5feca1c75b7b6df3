/* SPDX-License-Identifier: MIT */
/* Test helper: decode a profile file and summarise it, or say why not. */
#include "common.h"
#include "msg_cli.h"
#include "pprof.h"

/*
 * pprof-check FILE: exit 0 with one summary line and the totals per sample
 * type; exit 2 with one "pprof-check: ..." line on stderr when the decoder
 * refuses the file. pprof-check --dump FILE also lists every location as
 * "address mapping-basename func file:line[; inlined caller ...]".
 */
static void dump(const struct pprof_profile *p)
{
	size_t i, j;

	for (i = 0; i < p->n_locations; i++) {
		const struct pprof_location *l = &p->locations[i];
		const char *file = "-";

		if (l->mapping_id) {
			file = strrchr(p->mappings[l->mapping_id - 1].file,
				       '/');
			file = file ? file + 1
				    : p->mappings[l->mapping_id - 1].file;
		}
		printf("0x%llx %s", (unsigned long long)l->address, file);
		for (j = 0; j < l->n_lines; j++) {
			const struct pprof_function *f =
				&p->functions[l->lines[j].function_id - 1];

			printf("%s %s %s:%lld", j ? ";" : "", f->name, f->file,
			       (long long)l->lines[j].line);
		}
		putchar('\n');
	}
	for (i = 0; i < p->n_mappings; i++) {
		const struct pprof_mapping *m = &p->mappings[i];

		printf("mapping %zu %s build_id=%s functions=%d "
		       "filenames=%d lines=%d inline=%d\n",
		       i + 1, m->file, m->build_id, m->has_functions,
		       m->has_filenames, m->has_line_numbers,
		       m->has_inline_frames);
	}
}

int main(int argc, char **argv)
{
	struct pprof_profile *p;
	bool want_dump = argc == 3 && strcmp(argv[1], "--dump") == 0;
	size_t i, j;

	msg_init(argv[0]);
	if (argc != 2 && !want_dump) {
		fprintf(stderr, "usage: pprof-check [--dump] FILE\n");
		return 2;
	}
	p = pprof_read_file(argv[argc - 1]);
	if (!p) {
		msg_error("%s", msg_last());
		return 2;
	}
	printf("samples %zu locations %zu functions %zu mappings %zu\n",
	       p->n_samples, p->n_locations, p->n_functions, p->n_mappings);
	for (i = 0; i < p->n_sample_types; i++) {
		int64_t total = 0;

		for (j = 0; j < p->n_samples; j++)
			total += p->samples[j].values[i];
		printf("%s/%s %lld\n", p->sample_types[i].type,
		       p->sample_types[i].unit, (long long)total);
	}
	if (want_dump)
		dump(p);
	pprof_free(p);
	return 0;
}
