/* SPDX-License-Identifier: MIT */
/* The ELF symbol index of a loaded file: the symbol at an address as
 * dwfl_module_addrinfo() chooses it, by binary search (symbols_int.h). */
#include "symbols_int.h"
#include "search.h"

/* libdwfl's preference at one address: global, then weak, then local. */
static int binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* Sort key: address, then best first (rank, smaller size, table order). */
struct fsym_sort {
	struct fsym f;
	size_t order;
};

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym_sort *x = a, *y = b;

	if (x->f.lo != y->f.lo)
		return x->f.lo < y->f.lo ? -1 : 1;
	if (x->f.rank != y->f.rank)
		return x->f.rank > y->f.rank ? -1 : 1;
	if (x->f.size != y->f.size)
		return x->f.size < y->f.size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void sym_build_sym_index(struct modfile *md)
{
	struct sym_index *ix = &md->syms;
	struct fsym_sort *t;
	int i, n = dwfl_module_getsymtab(md->mod);
	size_t k, cnt = 0, label = SIZE_MAX;
	GElf_Addr max_end = 0;

	ix->built = true;
	if (n <= 1)
		return;
	t = malloc((size_t)n * sizeof(*t));
	if (!t)
		return;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		int type;
		const char *name = dwfl_module_getsym_info(
			md->mod, i, &sym, &addr, &shndx, NULL, NULL);

		type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		t[cnt].f.lo = addr;
		t[cnt].f.size = sym.st_size;
		t[cnt].f.name = name;
		t[cnt].f.rank = binding_rank(&sym);
		/* libdwfl searches the global symbols before the local */
		t[cnt].order =
			(GELF_ST_BIND(sym.st_info) == STB_LOCAL ? (size_t)n
								: 0) +
			(size_t)i;
		cnt++;
	}
	qsort(t, cnt, sizeof(*t), fsym_cmp);
	ix->s = malloc((cnt ? cnt : 1) * sizeof(*ix->s));
	if (!ix->s) {
		free(t);
		return;
	}
	for (k = 0; k < cnt; k++) {
		struct fsym *f = &ix->s[k];

		*f = t[k].f;
		if (f->size && f->lo + f->size > max_end)
			max_end = f->lo + f->size;
		/* the best of the last address with labels: its first */
		if (!f->size && (label == SIZE_MAX || ix->s[label].lo != f->lo))
			label = k;
		f->max_end = max_end;
		f->label = label;
	}
	ix->n = cnt;
	free(t);
}

const char *sym_symbol_at(struct modfile *md, uint64_t addr)
{
	struct sym_index *ix = &md->syms;
	const struct fsym *best = NULL;
	size_t lo, k;
	GElf_Off off;
	GElf_Sym esym;

	if (!ix->built)
		sym_build_sym_index(md);
	if (!ix->s)
		return dwfl_module_addrinfo(md->mod, addr, &off, &esym, NULL,
					    NULL, NULL);
	lo = SEARCH_AFTER(ix->s, ix->n, lo, addr);
	if (lo == 0)
		return NULL;
	/* walk down while some symbol at or below still reaches addr;
	 * at one address the best comes first, so is met last */
	for (k = lo; k > 0 && ix->s[k - 1].max_end > addr; k--) {
		const struct fsym *f = &ix->s[k - 1];

		if (best && f->lo != best->lo)
			break;
		if (f->size && addr - f->lo < f->size)
			best = f;
	}
	if (best)
		return best->name;
	k = ix->s[lo - 1].label;
	if (k == SIZE_MAX || ix->s[k].lo < ix->s[lo - 1].max_end)
		return NULL;
	return ix->s[k].name;
}
