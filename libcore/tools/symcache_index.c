/* SPDX-License-Identifier: MIT */
/* Writing a loaded file's on-disk symbol index (symcache.h) from the
 * same lookups the symbolizer makes (symbols_int.h). */
#include "symbols_int.h"
#include "search.h"
#include <dwarf.h>

/*
 * Writing a module's index (symcache.h): the address space is cut at
 * every address where some answer may change (a symbol's start or end,
 * an address range of .debug_aranges or of a CU, a line-table row, a
 * scope's range), and each piece gets what sym_symbol_at(), sym_find_cu(),
 * dwarf_getsrc_die() and sym_scope_chain() answer at its start: the same
 * functions, so the same answers. sym_scope_chain() walks a CU's tree for
 * one pc; for all of them at once each CU is painted: the first scope
 * among siblings that holds a pc owns it (namespaces are looked through),
 * then its children paint inside what it owns.
 */
struct seg {
	Dwarf_Addr lo, hi;
	uint32_t node; /* innermost function or inlined call */
};

struct segv {
	struct seg *v;
	size_t n, cap;
};

struct addrv {
	uint64_t *v;
	size_t n, cap;
};

/* A painted CU. */
struct cu_paint {
	Dwarf_Off off;
	struct segv segs; /* sorted by lo */
};

struct indexer {
	struct modfile *f;
	struct symcache_writer *w;
	struct addrv cuts;
	struct cu_paint *cus;
	size_t n_cus, cap_cus;
	bool failed;
	const char *last_str[2]; /* the last strings added, and their ids */
	uint32_t last_id[2];
};

static bool segv_push(struct segv *sv, Dwarf_Addr lo, Dwarf_Addr hi,
		      uint32_t node)
{
	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? 2 * sv->cap : 16;
		struct seg *nv = realloc(sv->v, cap * sizeof(*nv));

		if (!nv)
			return false;
		sv->v = nv;
		sv->cap = cap;
	}
	sv->v[sv->n].lo = lo;
	sv->v[sv->n].hi = hi;
	sv->v[sv->n].node = node;
	sv->n++;
	return true;
}

static bool cut(struct indexer *ix, uint64_t a)
{
	struct addrv *c = &ix->cuts;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		uint64_t *nv = realloc(c->v, cap * sizeof(*nv));

		if (!nv)
			return ix->failed = true, false;
		c->v = nv;
		c->cap = cap;
	}
	c->v[c->n++] = a;
	return true;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int addr_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/*
 * Move the parts of die's ranges (as dwarf_haspc() reads them) that are
 * in avail to take (sorted). false on ENOMEM.
 */
static bool claim(Dwarf_Die *die, struct segv *avail, struct segv *take)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		size_t a, j, k, nr = 0;
		struct seg rem[2], first, last;

		if (lo >= hi)
			continue;
		/* the first segment that ends above lo */
		a = SEARCH_AFTER(avail->v, avail->n, hi, lo);
		for (j = a; j < avail->n && avail->v[j].lo < hi; j++)
			if (!segv_push(
				    take,
				    avail->v[j].lo > lo ? avail->v[j].lo : lo,
				    avail->v[j].hi < hi ? avail->v[j].hi : hi,
				    SYMCACHE_NONE))
				return false;
		if (j == a)
			continue;
		first = avail->v[a];
		last = avail->v[j - 1];
		if (first.lo < lo)
			rem[nr++] = (struct seg){first.lo, lo, SYMCACHE_NONE};
		if (last.hi > hi)
			rem[nr++] = (struct seg){hi, last.hi, SYMCACHE_NONE};
		/* at most one more than before */
		if (!segv_push(avail, 0, 0, SYMCACHE_NONE))
			return false;
		avail->n--;
		memmove(&avail->v[a + nr], &avail->v[j],
			(avail->n - j) * sizeof(*avail->v));
		for (k = 0; k < nr; k++)
			avail->v[a + k] = rem[k];
		avail->n = avail->n - (j - a) + nr;
	}
	if (take->n > 1)
		qsort(take->v, take->n, sizeof(*take->v), seg_cmp);
	return true;
}

static uint32_t index_string(struct indexer *ix, const char *str)
{
	uint32_t id;

	if (!str)
		return SYMCACHE_NONE;
	for (int i = 0; i < 2; i++)
		if (ix->last_str[i] == str)
			return ix->last_id[i];
	id = symcache_writer_string(ix->w, str);
	if (id == SYMCACHE_NONE - 1)
		ix->failed = true;
	ix->last_str[1] = ix->last_str[0];
	ix->last_id[1] = ix->last_id[0];
	ix->last_str[0] = str;
	ix->last_id[0] = id;
	return id;
}

/* The node of a subprogram or inlined subroutine DIE, as sym_die_function()
 * and sym_dwarf_lines() read it. */
static uint32_t index_node(struct indexer *ix, Dwarf_Die *die, int tag,
			   uint32_t parent)
{
	uint32_t id = symcache_writer_node(
		ix->w, index_string(ix, sym_die_string(die, DW_AT_name)),
		index_string(ix, sym_die_linkage(die)),
		index_string(ix, dwarf_decl_file(die)),
		index_string(ix, sym_call_file(die)), sym_die_decl_line(die),
		sym_call_line(die), parent, tag == DW_TAG_subprogram);

	if (id == SYMCACHE_NONE)
		ix->failed = true;
	return id;
}

static void paint_children(struct indexer *ix, Dwarf_Die *die,
			   struct segv *avail, int depth, uint32_t fnode,
			   struct segv *out);

/* A scope child at chain depth depth: what it owns, then its children. */
static void paint_scope(struct indexer *ix, Dwarf_Die *die, int tag,
			struct segv *avail, int depth, uint32_t fnode,
			struct segv *out)
{
	struct segv take = {0}, sub = {0}, mine = {0};
	uint32_t node = fnode;
	size_t i, k = 0;

	if (!claim(die, avail, &take)) {
		ix->failed = true;
		goto out;
	}
	if (!take.n)
		goto out;
	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
		node = index_node(ix, die, tag, fnode);
	if (depth + 1 < MAX_SCOPES) {
		for (i = 0; i < take.n; i++)
			if (!segv_push(&mine, take.v[i].lo, take.v[i].hi,
				       SYMCACHE_NONE))
				ix->failed = true;
		paint_children(ix, die, &mine, depth + 1, node, &sub);
		if (sub.n > 1)
			qsort(sub.v, sub.n, sizeof(*sub.v), seg_cmp);
	}
	/* what the children own, and the rest this scope's */
	for (i = 0; i < take.n && !ix->failed; i++) {
		Dwarf_Addr at = take.v[i].lo;

		for (; k < sub.n && sub.v[k].lo < take.v[i].hi; k++) {
			if (sub.v[k].lo > at && node != SYMCACHE_NONE &&
			    !segv_push(out, at, sub.v[k].lo, node))
				ix->failed = true;
			if (!segv_push(out, sub.v[k].lo, sub.v[k].hi,
				       sub.v[k].node))
				ix->failed = true;
			at = sub.v[k].hi;
		}
		if (at < take.v[i].hi && node != SYMCACHE_NONE &&
		    !segv_push(out, at, take.v[i].hi, node))
			ix->failed = true;
	}
out:
	free(take.v);
	free(sub.v);
	free(mine.v);
}

/* The children of die, as sym_scope_chain() visits them. */
static void paint_children(struct indexer *ix, Dwarf_Die *die,
			   struct segv *avail, int depth, uint32_t fnode,
			   struct segv *out)
{
	Dwarf_Die child;

	if (depth >= MAX_SCOPES || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (ix->failed || !avail->n)
			return;
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_entry_point:
			paint_scope(ix, &child, tag, avail, depth, fnode, out);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			paint_children(ix, &child, avail, depth, fnode, out);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* Paint a CU and cut at its scopes' and line rows' addresses. */
static void index_cu(struct indexer *ix, Dwarf_Die *cu, Dwarf_Addr bias)
{
	struct segv avail = {0};
	struct cu_paint *cp;
	Dwarf_Lines *lines;
	size_t i, n;

	if (dwarf_getsrclines(cu, &lines, &n) == 0)
		for (i = 0; i < n; i++) {
			Dwarf_Addr a;

			if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) ==
				    0 &&
			    !cut(ix, a + bias))
				return;
		}
	if (ix->n_cus == ix->cap_cus) {
		size_t cap = ix->cap_cus ? 2 * ix->cap_cus : 64;
		struct cu_paint *nv = realloc(ix->cus, cap * sizeof(*nv));

		if (!nv) {
			ix->failed = true;
			return;
		}
		ix->cus = nv;
		ix->cap_cus = cap;
	}
	cp = &ix->cus[ix->n_cus++];
	cp->off = dwarf_dieoffset(cu);
	memset(&cp->segs, 0, sizeof(cp->segs));
	if (!segv_push(&avail, 0, UINT64_MAX, SYMCACHE_NONE)) {
		ix->failed = true;
		return;
	}
	paint_children(ix, cu, &avail, 0, SYMCACHE_NONE, &cp->segs);
	free(avail.v);
	if (cp->segs.n > 1)
		qsort(cp->segs.v, cp->segs.n, sizeof(*cp->segs.v), seg_cmp);
	for (i = 0; i < cp->segs.n; i++)
		if (!cut(ix, cp->segs.v[i].lo + bias) ||
		    !cut(ix, cp->segs.v[i].hi + bias))
			return;
}

static int cu_paint_cmp(const void *a, const void *b)
{
	const struct cu_paint *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The innermost function node at DWARF address pc in the CU at off. */
static bool painted_node(struct indexer *ix, Dwarf_Off off, Dwarf_Addr pc,
			 uint32_t *node)
{
	struct cu_paint key = {.off = off}, *cp;
	size_t lo;

	cp = bsearch(&key, ix->cus, ix->n_cus, sizeof(*ix->cus), cu_paint_cmp);
	if (!cp)
		return false;
	*node = SYMCACHE_NONE;
	lo = SEARCH_AFTER(cp->segs.v, cp->segs.n, lo, pc);
	if (lo && pc < cp->segs.v[lo - 1].hi)
		*node = cp->segs.v[lo - 1].node;
	return true;
}

/* The cuts: symbols, aranges, CU ranges, then every CU. */
static void index_cuts(struct indexer *ix)
{
	struct modfile *f = ix->f;
	Dwarf_Aranges *ar;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias, cbias;
	size_t i, n;
	Dwarf *dw;

	if (!f->syms.built)
		sym_build_sym_index(f);
	if (!f->syms.s && dwfl_module_getsymtab(f->mod) > 1)
		ix->failed = true;
	for (i = 0; i < f->syms.n; i++)
		if (!cut(ix, f->syms.s[i].lo) ||
		    (f->syms.s[i].size &&
		     !cut(ix, f->syms.s[i].lo + f->syms.s[i].size)))
			return;
	if (!f->dwarf)
		return;
	dw = dwfl_module_getdwarf(f->mod, &bias);
	if (!dw) {
		ix->failed = true;
		return;
	}
	if (dwarf_getaranges(dw, &ar, &n) == 0)
		for (i = 0; i < n; i++) {
			Dwarf_Addr a;
			Dwarf_Word len;

			if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &a,
						&len, NULL) == 0 &&
			    (!cut(ix, a + bias) || !cut(ix, a + len + bias) ||
			     !cut(ix, a + len + bias + 1)))
				return;
		}
	if (!f->cus.built)
		sym_build_cu_index(f);
	for (i = 0; i < f->cus.n; i++)
		if (!cut(ix, f->cus.r[i].lo + bias) ||
		    !cut(ix, f->cus.r[i].hi + bias))
			return;
	while (!ix->failed && (cu = dwfl_module_nextcu(f->mod, cu, &cbias)))
		index_cu(ix, cu, cbias);
	if (ix->n_cus > 1)
		qsort(ix->cus, ix->n_cus, sizeof(*ix->cus), cu_paint_cmp);
}

/* Each piece's answers. */
static void index_answers(struct indexer *ix)
{
	struct modfile *f = ix->f;
	size_t i;

	for (i = 0; i < ix->cuts.n && !ix->failed; i++) {
		uint64_t a = ix->cuts.v[i];
		const char *file = NULL;
		int line = 0;
		uint32_t node = SYMCACHE_NONE;
		uint32_t sym;

		if (i && a == ix->cuts.v[i - 1])
			continue;
		sym = index_string(ix, sym_symbol_at(f, a));
		if (f->dwarf) {
			Dwarf_Die cu_mem, *cu;
			Dwarf_Addr bias;
			Dwarf_Line *dl;

			cu = sym_find_cu(f, a, &bias, &cu_mem);
			if (cu) {
				dl = dwarf_getsrc_die(cu, a - bias);
				if (dl) {
					file = dwarf_linesrc(dl, NULL, NULL);
					dwarf_lineno(dl, &line);
				}
				/* a CU that was not painted: give up */
				if (!painted_node(ix, dwarf_dieoffset(cu),
						  a - bias, &node))
					ix->failed = true;
			}
		}
		if (symcache_writer_interval(ix->w, a, sym,
					     index_string(ix, file), line,
					     node) < 0)
			ix->failed = true;
	}
}

void symcache_index_module(struct modfile *f, const struct symcache_key *key)
{
	struct indexer ix = {.f = f};
	size_t i;
	bool dwarf;

	if (f->probes_lost)
		return;
	ix.w = symcache_writer_new(key, f->dwarf);
	if (!ix.w)
		return;
	for (i = 0; i < f->n_probes; i++)
		if (symcache_writer_probe(ix.w, f->probes[i].path,
					  f->probes[i].exists ? &f->probes[i].st
							      : NULL) < 0)
			ix.failed = true;
	sym_loading = f;
	if (!ix.failed)
		index_cuts(&ix);
	if (!ix.failed && ix.cuts.n > 1)
		qsort(ix.cuts.v, ix.cuts.n, sizeof(*ix.cuts.v), addr_cmp);
	index_answers(&ix);
	sym_loading = NULL;
	for (i = 0; i < ix.n_cus; i++)
		free(ix.cus[i].segs.v);
	free(ix.cus);
	free(ix.cuts.v);
	if (ix.failed) {
		symcache_writer_free(ix.w);
		return;
	}
	if (symcache_writer_commit(ix.w) < 0)
		return;
	f->idx = symcache_open(key, &dwarf);
	if (f->idx && dwarf == f->dwarf) {
		sym_modfile_unload(f);
	} else {
		symcache_close(f->idx);
		f->idx = NULL;
	}
}
