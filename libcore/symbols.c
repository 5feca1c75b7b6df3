/* SPDX-License-Identifier: MIT */
/* Symbolize raw profiles: ELF symbols and DWARF lines via libdwfl/libdw. */
#include "symbols.h"
#include "pprof_int.h"
#include "msg.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <strings.h>
#include <unistd.h>

/* libstdc++'s demangler (cxxabi.h is C++ only, so declared here). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

/* Inlined frames kept per location; deeper chains keep the innermost. */
#define MAX_FRAMES 64

/* What we know about one mapping's file. */
/* Address ranges of a module's CUs, for objects without .debug_aranges. */
struct cu_range {
	Dwarf_Addr lo, hi; /* [lo, hi) in DWARF addresses */
	Dwarf_Off off;	   /* the CU DIE's offset */
};

struct cu_index {
	bool built;
	size_t n;
	struct cu_range *r; /* sorted by lo */
};

struct mod {
	Dwfl *dwfl; /* NULL: not usable */
	Dwfl_Module *mod;
	bool owner; /* another mapping may share the same Dwfl */
	bool dwarf;
	bool any_function, any_line;
	struct cu_index *cus; /* owned with the Dwfl */
};

struct symbolizer {
	struct pprof_profile *p;
	const char *root;
	struct symbols_stats *st;
	struct mod *mods; /* one per mapping */
};

/* find_debuginfo has no context argument; symbolization is per thread. */
static __thread const char *debug_root;

const char *symbols_demangle(struct pprof_profile *p, const char *sym)
{
	const char *ret;
	char *d;
	int status = -1;

	if (!sym || strncmp(sym, "_Z", 2) != 0)
		return pprof_intern(p, sym);
	d = __cxa_demangle(sym, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return pprof_intern(p, sym);
	}
	ret = pprof_intern(p, d);
	free(d);
	return ret;
}

static void warn(struct symbolizer *s, const char *fmt, ...)
	PALLOC_PRINTF(2, 3);
static void warn(struct symbolizer *s, const char *fmt, ...)
{
	char buf[MSG_MAX];
	va_list ap;

	if (!s->st->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s->st->warn(s->st->warn_ctx, buf);
}

/* Open root + path; -1 with errno. */
static int open_under(const char *root, const char *path, char *full,
		      size_t size)
{
	if ((size_t)snprintf(full, size, "%s%s", root, path) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(full, O_RDONLY | O_CLOEXEC);
}

/* Open the debug file whose path fmt builds; -1 if absent or too long. */
static int try_debug_file(char **name, const char *fmt, ...)
	PALLOC_PRINTF(2, 3);
static int try_debug_file(char **name, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	int n, fd;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	*name = strdup(path);
	if (!*name) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Called by libdwfl when the file itself has no DWARF. Like
 * dwfl_standard_find_debuginfo, without debuginfod (no network from a
 * profiler) and under the root prefix: the build-id path first, then the
 * .gnu_debuglink name next to the file, in .debug/ and in /usr/lib/debug.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata PALLOC_UNUSED,
			  const char *modname PALLOC_UNUSED,
			  Dwarf_Addr base PALLOC_UNUSED, const char *file_name,
			  const char *debuglink, GElf_Word crc PALLOC_UNUSED,
			  char **debuginfo_file_name)
{
	const char *root = debug_root ? debug_root : "";
	const unsigned char *id;
	GElf_Addr vaddr;
	char hexid[256];
	const char *slash;
	size_t rootlen = strlen(root);
	int len, dirlen, fd, i;

	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len > 1 && len < 100) {
		for (i = 1; i < len; i++)
			snprintf(hexid + 2 * (i - 1), 3, "%02x", id[i]);
		fd = try_debug_file(debuginfo_file_name,
				    "%s/usr/lib/debug/.build-id/%02x/%s.debug",
				    root, id[0], hexid);
		if (fd >= 0)
			return fd;
	}
	if (!debuglink || !file_name || !(slash = strrchr(file_name, '/')))
		return -1;
	dirlen = (int)(slash - file_name);
	/* the debuglink may name the file itself: that one has no DWARF */
	if (strcmp(slash + 1, debuglink) != 0) {
		fd = try_debug_file(debuginfo_file_name, "%.*s/%s", dirlen,
				    file_name, debuglink);
		if (fd >= 0)
			return fd;
	}
	fd = try_debug_file(debuginfo_file_name, "%.*s/.debug/%s", dirlen,
			    file_name, debuglink);
	if (fd >= 0)
		return fd;
	/* file_name carries the root prefix; /usr/lib/debug goes under it */
	if (strncmp(file_name, root, rootlen) != 0 || (size_t)dirlen < rootlen)
		return -1;
	return try_debug_file(debuginfo_file_name, "%s/usr/lib/debug%.*s/%s",
			      root, dirlen - (int)rootlen, file_name + rootlen,
			      debuglink);
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void hex(const unsigned char *b, size_t n, char *out, size_t size)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < n && 2 * i + 2 < size; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/*
 * The load bias of a mapping of elf: runtime address minus ELF virtual
 * address. The mapping puts file offset m->offset at m->start; the PT_LOAD
 * containing that offset maps p_offset at p_vaddr, so
 * bias = start - (p_vaddr + offset - p_offset). -1 if no PT_LOAD fits.
 */
static int load_bias(Elf *elf, const struct pprof_mapping *m, uint64_t *bias)
{
	size_t i, n;
	GElf_Ehdr eh;
	bool found = false;
	GElf_Phdr best = {0};

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n) != 0)
		return -1;
	if (eh.e_type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* the kernel maps from the page below p_offset */
		if ((ph.p_offset & ~(GElf_Off)4095) <= m->offset &&
		    (!found || ph.p_offset > best.p_offset)) {
			best = ph;
			found = true;
		}
	}
	if (!found)
		return -1;
	*bias = m->start - (best.p_vaddr + m->offset - best.p_offset);
	return 0;
}

/*
 * For a live process (root "/proc/PID/root"), a file that was deleted or
 * replaced since it was mapped (a package upgrade) is still reachable as
 * /proc/PID/map_files/START-END. On success path is that name; on failure
 * errno is the first open's.
 */
static int open_map_file(const char *root, const struct pprof_mapping *m,
			 char *path, size_t size)
{
	size_t len = strlen(root);
	char alt[256];
	int err = errno, fd;

	if (strncmp(root, "/proc/", 6) != 0 || len < 5 ||
	    strcmp(root + len - 5, "/root") != 0 ||
	    (size_t)snprintf(alt, sizeof(alt), "%.*s/map_files/%llx-%llx",
			     (int)(len - 5), root, (unsigned long long)m->start,
			     (unsigned long long)m->limit) >= sizeof(alt))
		goto fail;
	fd = open(alt, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	snprintf(path, size, "%s", alt);
	return fd;
fail:
	errno = err;
	return -1;
}

/* Check the file behind mapping i and load it into libdwfl. */
static void open_mapping(struct symbolizer *s, size_t i)
{
	const struct pprof_mapping *m = &s->p->mappings[i];
	struct mod *md = &s->mods[i];
	char path[4096], have[256];
	const void *id;
	ssize_t idlen;
	uint64_t bias = 0;
	const char *base;
	Dwarf_Addr dbias;
	Elf *elf;
	size_t j;
	int fd;

	fd = open_under(s->root, m->file, path, sizeof(path));
	if (fd < 0)
		fd = open_map_file(s->root, m, path, sizeof(path));
	if (fd < 0) {
		s->st->mappings_missing++;
		warn(s, "cannot open '%s': %s; not symbolized", path,
		     strerror(errno));
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		s->st->mappings_missing++;
		warn(s, "cannot read '%s': not an ELF file; not symbolized",
		     path);
		goto out;
	}
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	hex(id, idlen > 0 ? (size_t)idlen : 0, have, sizeof(have));
	if (*m->build_id && strcasecmp(m->build_id, have) != 0) {
		s->st->mappings_mismatched++;
		warn(s,
		     "build id mismatch for '%s': the profile has %s, the "
		     "file has %s; not symbolized",
		     path, m->build_id, *have ? have : "none");
		goto out;
	}
	if (load_bias(elf, m, &bias) < 0) {
		s->st->mappings_missing++;
		warn(s,
		     "cannot place '%s': no loadable segment at offset "
		     "0x%llx; not symbolized",
		     path, (unsigned long long)m->offset);
		goto out;
	}
	/* mappings of the same file at the same bias share one module */
	for (j = 0; j < i; j++) {
		const struct pprof_mapping *o = &s->p->mappings[j];
		uint64_t obias;

		if (s->mods[j].dwfl && o->file == m->file &&
		    load_bias(elf, o, &obias) == 0 && obias == bias) {
			*md = s->mods[j];
			md->owner = false;
			goto out;
		}
	}
	md->dwfl = dwfl_begin(&callbacks);
	if (!md->dwfl)
		goto fail;
	base = strrchr(m->file, '/');
	dwfl_report_begin(md->dwfl);
	md->mod = dwfl_report_elf(md->dwfl, base ? base + 1 : m->file, path, -1,
				  bias, true);
	dwfl_report_end(md->dwfl, NULL, NULL);
	if (!md->mod)
		goto fail;
	md->owner = true;
	md->cus = calloc(1, sizeof(*md->cus));
	md->dwarf = dwfl_module_getdwarf(md->mod, &dbias) != NULL;
	if (!md->dwarf)
		s->st->mappings_no_dwarf++;
	goto out;
fail:
	s->st->mappings_missing++;
	warn(s, "cannot load '%s': %s; not symbolized", path, dwfl_errmsg(-1));
	if (md->dwfl)
		dwfl_end(md->dwfl);
	md->dwfl = NULL;
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

static const char *die_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr_integrate(die, name, &attr))
		return NULL;
	return dwarf_formstring(&attr);
}

/* The function of a DWARF subprogram or inlined subroutine DIE. */
static uint64_t die_function(struct symbolizer *s, Dwarf_Die *die,
			     const char *file, const char *fallback)
{
	const char *name = die_string(die, DW_AT_name);
	const char *linkage = die_string(die, DW_AT_linkage_name);
	const char *shown;
	int line = 0;

	if (!linkage)
		linkage = die_string(die, DW_AT_MIPS_linkage_name);
	if (!name && !linkage)
		name = linkage = fallback;
	if (!name && !linkage)
		return 0;
	if (!file)
		file = dwarf_decl_file(die);
	dwarf_decl_line(die, &line);
	shown = linkage ? symbols_demangle(s->p, linkage) : name;
	if (!shown)
		return 0;
	return pprof_add_function(s->p, shown, linkage ? linkage : name, file,
				  line);
}

/* The file that a DW_AT_call_file index names, in the DIE's own unit. */
static const char *call_file(Dwarf_Die *die)
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

/* Index every CU's address ranges (once per module). */
static void build_cu_index(struct mod *md)
{
	struct cu_index *ix = md->cus;
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

/*
 * The CU holding addr. dwfl_module_addrdie() relies on .debug_aranges,
 * which clang does not emit by default (and libdw 0.188 does not rebuild);
 * without it, the CUs' own ranges are indexed and searched.
 */
static Dwarf_Die *find_cu(struct mod *md, uint64_t addr, Dwarf_Addr *bias,
			  Dwarf_Die *mem)
{
	Dwarf_Die *cu = dwfl_module_addrdie(md->mod, addr, bias);
	struct cu_index *ix = md->cus;
	Dwarf *dw;
	size_t lo = 0, hi;

	if (cu || !ix)
		return cu;
	dw = dwfl_module_getdwarf(md->mod, bias);
	if (!dw)
		return NULL;
	if (!ix->built)
		build_cu_index(md);
	hi = ix->n;
	/* lo: the first range starting above addr; CU ranges do not
	 * overlap in practice, but look a few back in case they do */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->r[mid].lo <= addr - *bias)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi > 0 && lo - hi < 8; hi--)
		if (addr - *bias < ix->r[hi - 1].hi)
			return dwarf_offdie(dw, ix->r[hi - 1].off, mem);
	return NULL;
}

/* Depth of the DIE chain kept: CU children down to the innermost scope. */
#define MAX_SCOPES 128

/*
 * The chain of scope DIEs that contain pc, outermost first, from die's
 * children down (only DIEs whose ranges hold pc are entered, and
 * namespaces, which have no ranges). This is a concrete-tree walk, not
 * dwarf_getscopes(): that one follows inlined functions to their abstract
 * definitions and finds nothing at all in some LTO units (Debian's
 * python3.11 debug info), where this walk still finds the instances.
 */
static int scope_chain(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *chain,
		       int depth)
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
			return scope_chain(&chain[depth], pc, chain, depth + 1);
		case DW_TAG_namespace:
		case DW_TAG_module: {
			int d = scope_chain(&child, pc, chain, depth);

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

/*
 * Lines from DWARF: the inline chain at addr, innermost first. *lt_file
 * and *lt_line get the line table's answer, for a caller that finds no
 * function DIE but still wants a file and line.
 */
static size_t dwarf_lines(struct symbolizer *s, struct mod *md, uint64_t addr,
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

	cu = find_cu(md, addr, &bias, &cu_mem);
	if (!cu)
		return 0;
	dl = dwarf_getsrc_die(cu, addr - bias);
	if (dl) {
		file = dwarf_linesrc(dl, NULL, NULL);
		dwarf_lineno(dl, &line);
	}
	*lt_file = file;
	*lt_line = line;
	depth = scope_chain(cu, addr - bias, chain, 0);
	for (i = depth - 1; i >= 0 && n < MAX_FRAMES; i--) {
		Dwarf_Die *d = &chain[i];
		int tag = dwarf_tag(d);
		Dwarf_Attribute attr;
		Dwarf_Word w;

		if (tag != DW_TAG_subprogram &&
		    tag != DW_TAG_inlined_subroutine)
			continue;
		lines[n].function_id = die_function(
			s, d, file, tag == DW_TAG_subprogram ? sym : NULL);
		lines[n].line = line;
		if (!lines[n].function_id)
			break;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's position is this inlined call's site */
		file = call_file(d);
		line = 0;
		if (dwarf_attr(d, DW_AT_call_line, &attr) &&
		    dwarf_formudata(&attr, &w) == 0)
			line = (int)w;
	}
	return n;
}

static void symbolize_location(struct symbolizer *s, struct pprof_location *l)
{
	struct mod *md = &s->mods[l->mapping_id - 1];
	struct pprof_line lines[MAX_FRAMES];
	const char *sym;
	GElf_Off off;
	GElf_Sym esym;
	size_t n = 0;
	uint64_t id = l->id;
	const char *file = NULL;
	int line = 0;

	sym = dwfl_module_addrinfo(md->mod, l->address, &off, &esym, NULL, NULL,
				   NULL);
	if (md->dwarf)
		n = dwarf_lines(s, md, l->address, sym, lines, &file, &line);
	if (n == 0 && sym) {
		/* the symbol, with the line table's file and line if any */
		const char *name = symbols_demangle(s->p, sym);

		lines[0].function_id =
			name ? pprof_add_function(s->p, name, sym,
						  file ? file : "", 0)
			     : 0;
		lines[0].line = line;
		n = lines[0].function_id ? 1 : 0;
	}
	if (n == 0)
		return;
	if (pprof_set_location_lines(s->p, id, lines, n) < 0)
		return;
	s->st->locations_symbolized++;
	md->any_function = true;
	if (lines[0].line)
		md->any_line = true;
}

int symbols_symbolize(struct pprof_profile *p, const char *root,
		      struct symbols_stats *st)
{
	struct symbols_stats local = {0};
	struct symbolizer s = {.p = p, .root = root ? root : ""};
	size_t i;

	if (!st)
		st = &local;
	st->locations = st->locations_symbolized = 0;
	st->mappings = st->mappings_missing = st->mappings_mismatched = 0;
	st->mappings_no_dwarf = 0;
	s.st = st;
	if (!p->n_mappings)
		return 0;
	s.mods = calloc(p->n_mappings, sizeof(*s.mods));
	if (!s.mods)
		return msg_set_errno(ENOMEM, "cannot symbolize profile");
	elf_version(EV_CURRENT);
	debug_root = s.root;
	for (i = 0; i < p->n_mappings; i++) {
		if (p->mappings[i].file[0] != '/')
			continue;
		st->mappings++;
		open_mapping(&s, i);
	}
	for (i = 0; i < p->n_locations; i++) {
		struct pprof_location *l = &p->locations[i];

		if (!l->mapping_id || l->n_lines)
			continue;
		st->locations++;
		if (s.mods[l->mapping_id - 1].dwfl)
			symbolize_location(&s, l);
	}
	for (i = 0; i < p->n_mappings; i++) {
		struct pprof_mapping *m = &p->mappings[i];
		struct mod *md = &s.mods[i];

		if (!md->dwfl)
			continue;
		if (md->any_function)
			m->has_functions = true;
		if (md->dwarf && md->any_line) {
			m->has_filenames = true;
			m->has_line_numbers = true;
			m->has_inline_frames = true;
		}
		if (md->owner) {
			dwfl_end(md->dwfl);
			if (md->cus)
				free(md->cus->r);
			free(md->cus);
		}
	}
	debug_root = NULL;
	free(s.mods);
	return 0;
}

int symbols_strip(struct pprof_profile *p)
{
	struct pprof_internal *in = p->internal;
	size_t i;

	for (i = 0; i < p->n_locations; i++) {
		p->locations[i].lines = NULL;
		p->locations[i].n_lines = 0;
	}
	for (i = 0; i < p->n_mappings; i++) {
		p->mappings[i].has_functions = false;
		p->mappings[i].has_filenames = false;
		p->mappings[i].has_line_numbers = false;
		p->mappings[i].has_inline_frames = false;
	}
	p->n_functions = 0;
	if (in->funcs.slots)
		memset(in->funcs.slots, 0,
		       in->funcs.cap * sizeof(*in->funcs.slots));
	in->funcs.count = 0;
	return 0;
}
