/* SPDX-License-Identifier: MIT */
/* DWARF: the CU and the chain of scopes at an address, the inlined
 * calls as a location's lines (symbols_int.h). */
#include "symbols_int.h"
#include "search.h"
#include <dwarf.h>

const char *sym_die_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr_integrate(die, name, &attr))
		return NULL;
	return dwarf_formstring(&attr);
}

const char *sym_die_linkage(Dwarf_Die *die)
{
	const char *linkage = sym_die_string(die, DW_AT_linkage_name);

	return linkage ? linkage : sym_die_string(die, DW_AT_MIPS_linkage_name);
}

int sym_die_decl_line(Dwarf_Die *die)
{
	int line = 0;

	dwarf_decl_line(die, &line);
	return line;
}

/*
 * The function named name / linkage (fallback when both are NULL),
 * declared in file (decl_file when NULL) at line.
 */
static uint64_t add_function(struct symbolizer *s, const char *name,
			     const char *linkage, const char *file,
			     const char *decl_file, int line,
			     const char *fallback)
{
	const char *shown;

	if (!name && !linkage)
		name = linkage = fallback;
	if (!name && !linkage)
		return 0;
	if (!file)
		file = decl_file;
	/* a C function behind an asm label (glibc's hidden aliases, such
	 * as __GI_setlocale) shows its source name; the label stays the
	 * system name */
	if (linkage && name && strncmp(linkage, "_Z", 2) != 0 &&
	    strncmp(linkage, "_R", 2) != 0)
		shown = pprof_intern(s->p, name);
	else
		shown = linkage ? symbols_demangle(s->p, linkage) : name;
	if (!shown)
		return 0;
	return pprof_add_function(s->p, shown, linkage ? linkage : name, file,
				  line);
}

uint64_t sym_die_function(struct symbolizer *s, Dwarf_Die *die,
			  const char *file, const char *fallback)
{
	return add_function(s, sym_die_string(die, DW_AT_name),
			    sym_die_linkage(die), file,
			    file ? NULL : dwarf_decl_file(die),
			    sym_die_decl_line(die), fallback);
}

int sym_call_line(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;

	if (dwarf_attr(die, DW_AT_call_line, &attr) &&
	    dwarf_formudata(&attr, &w) == 0)
		return (int)w;
	return 0;
}

const char *sym_call_file(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t n;

	if (!dwarf_attr(die, DW_AT_call_file, &attr) ||
	    dwarf_formudata(&attr, &idx) != 0 ||
	    !dwarf_diecu(die, &cu, NULL, NULL) ||
	    dwarf_getsrcfiles(&cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void sym_build_cu_index(struct modfile *md)
{
	struct cu_index *ix = &md->cus;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t cap = 0;

	ix->built = true;
	while ((cu = dwfl_module_nextcu(md->mod, cu, &bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (ix->n == cap) {
				struct cu_range *nr;

				cap = cap ? cap * 2 : 64;
				nr = realloc(ix->r, cap * sizeof(*nr));
				if (!nr)
					return;
				ix->r = nr;
			}
			ix->r[ix->n].lo = lo;
			ix->r[ix->n].hi = hi;
			ix->r[ix->n].off = dwarf_dieoffset(cu);
			ix->n++;
		}
	}
	if (ix->n)
		qsort(ix->r, ix->n, sizeof(*ix->r), cu_range_cmp);
}

Dwarf_Die *sym_find_cu(struct modfile *md, uint64_t addr, Dwarf_Addr *bias,
		       Dwarf_Die *mem)
{
	Dwarf_Die *cu = dwfl_module_addrdie(md->mod, addr, bias);
	struct cu_index *ix = &md->cus;
	Dwarf *dw;
	size_t lo, hi;

	if (cu)
		return cu;
	dw = dwfl_module_getdwarf(md->mod, bias);
	if (!dw)
		return NULL;
	if (!ix->built)
		sym_build_cu_index(md);
	/* lo: the first range starting above addr; CU ranges do not
	 * overlap in practice, but look a few back in case they do */
	lo = SEARCH_AFTER(ix->r, ix->n, lo, addr - *bias);
	for (hi = lo; hi > 0 && lo - hi < 8; hi--)
		if (addr - *bias < ix->r[hi - 1].hi)
			return dwarf_offdie(dw, ix->r[hi - 1].off, mem);
	return NULL;
}

int sym_scope_chain(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *chain, int depth)
{
	Dwarf_Die child;

	if (depth >= MAX_SCOPES || dwarf_child(die, &child) != 0)
		return depth;
	do {
		int tag = dwarf_tag(&child);

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_entry_point:
			if (dwarf_haspc(&child, pc) <= 0)
				break;
			chain[depth] = child;
			return sym_scope_chain(&chain[depth], pc, chain,
					       depth + 1);
		case DW_TAG_namespace:
		case DW_TAG_module: {
			int d = sym_scope_chain(&child, pc, chain, depth);

			if (d > depth)
				return d;
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return depth;
}

size_t sym_dwarf_lines(struct symbolizer *s, struct modfile *md, uint64_t addr,
		       const char *sym, struct pprof_line *lines,
		       const char **lt_file, int *lt_line)
{
	Dwarf_Die chain[MAX_SCOPES], cu_mem;
	Dwarf_Addr bias;
	Dwarf_Die *cu;
	Dwarf_Line *dl;
	const char *file = NULL;
	int line = 0, depth, i;
	size_t n = 0;

	cu = sym_find_cu(md, addr, &bias, &cu_mem);
	if (!cu)
		return 0;
	dl = dwarf_getsrc_die(cu, addr - bias);
	if (dl) {
		file = dwarf_linesrc(dl, NULL, NULL);
		dwarf_lineno(dl, &line);
	}
	*lt_file = file;
	*lt_line = line;
	depth = sym_scope_chain(cu, addr - bias, chain, 0);
	for (i = depth - 1; i >= 0 && n < MAX_FRAMES; i--) {
		Dwarf_Die *d = &chain[i];
		int tag = dwarf_tag(d);

		if (tag != DW_TAG_subprogram &&
		    tag != DW_TAG_inlined_subroutine)
			continue;
		lines[n].function_id = sym_die_function(
			s, d, file, tag == DW_TAG_subprogram ? sym : NULL);
		lines[n].line = line;
		if (!lines[n].function_id)
			break;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's position is this inlined call's site */
		file = sym_call_file(d);
		line = sym_call_line(d);
	}
	return n;
}

int sym_index_lines(struct symbolizer *s, struct modfile *md,
		    const struct symcache_hit *h, struct pprof_line *lines,
		    size_t *np)
{
	const char *file = h->file;
	int line = h->line;
	uint32_t i = h->node;
	size_t n = 0;

	while (i != SYMCACHE_NONE && n < MAX_FRAMES) {
		struct symcache_node nd;

		if (symcache_node(md->idx, i, &nd) < 0)
			return -1;
		lines[n].function_id = add_function(
			s, nd.name, nd.linkage, file, nd.decl_file,
			nd.decl_line, nd.subprogram ? h->sym : NULL);
		lines[n].line = line;
		if (!lines[n].function_id)
			break;
		n++;
		if (nd.subprogram)
			break;
		file = nd.call_file;
		line = nd.call_line;
		i = nd.parent;
	}
	*np = n;
	return 0;
}
