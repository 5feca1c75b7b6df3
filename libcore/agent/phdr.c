/* SPDX-License-Identifier: MIT */
/* Loaded ELF objects and their build ids, read from memory. */
#include "phdr.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#define PHDR_PAGE 4096

bool phdr_note_build_id(const void *note, size_t len, char *hex)
{
	const unsigned char *p = note;
	size_t off = 0;

	hex[0] = '\0';
	/* Elf64_Nhdr: namesz, descsz, type; name and desc padded to 4. */
	while (off + sizeof(ElfW(Nhdr)) <= len) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(p + off);
		size_t name_off = off + sizeof(*nh);
		size_t desc_off = name_off + ((nh->n_namesz + 3u) & ~3u);
		size_t next = desc_off + ((nh->n_descsz + 3u) & ~3u);

		if (desc_off > len || next > len || next <= off)
			break;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && nh->n_descsz > 0 &&
		    nh->n_descsz <= (PHDR_BUILD_ID_HEX - 1) / 2) {
			for (size_t i = 0; i < nh->n_descsz; i++) {
				unsigned char c = p[desc_off + i];

				hex[2 * i] = "0123456789abcdef"[c >> 4];
				hex[2 * i + 1] = "0123456789abcdef"[c & 15];
			}
			hex[2 * nh->n_descsz] = '\0';
			return true;
		}
		off = next;
	}
	return false;
}

struct walk {
	int (*fn)(const struct phdr_segment *seg, void *arg);
	void *arg;
	bool main_pass; /* first pass: the main program only */
	int ret;
	char exe[4096];
};

static int visit(struct dl_phdr_info *info, size_t size PALLOC_UNUSED,
		 void *data)
{
	struct walk *w = data;
	bool is_main = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
	char id[PHDR_BUILD_ID_HEX] = "";
	struct phdr_segment seg;

	/* The main program is the first object with an empty name; other
	 * nameless objects (none on glibc, but be careful) are skipped. */
	if (w->main_pass != is_main)
		return 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE &&
		    phdr_note_build_id(
			    (const void *)(info->dlpi_addr + ph->p_vaddr),
			    ph->p_memsz, id))
			break;
	}
	if (is_main) {
		seg.path = w->exe;
	} else if (strncmp(info->dlpi_name, "linux-vdso", 10) == 0 ||
		   strncmp(info->dlpi_name, "linux-gate", 10) == 0) {
		seg.path = "[vdso]";
	} else {
		seg.path = info->dlpi_name;
	}
	seg.build_id = id;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start, end;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		start = info->dlpi_addr + ph->p_vaddr;
		end = start + ph->p_memsz;
		seg.start = start & ~(uintptr_t)(PHDR_PAGE - 1);
		seg.limit = (end + PHDR_PAGE - 1) & ~(uintptr_t)(PHDR_PAGE - 1);
		seg.offset = ph->p_offset - (start - seg.start);
		w->ret = w->fn(&seg, w->arg);
		if (w->ret)
			return 1;
	}
	/* Only one main program. */
	return is_main ? 1 : 0;
}

int phdr_foreach(int (*fn)(const struct phdr_segment *seg, void *arg),
		 void *arg)
{
	struct walk w = {.fn = fn, .arg = arg, .main_pass = true};
	ssize_t n = readlink("/proc/self/exe", w.exe, sizeof(w.exe) - 1);
	int saved = errno;

	w.exe[n > 0 ? n : 0] = '\0';
	errno = saved;
	dl_iterate_phdr(visit, &w);
	if (w.ret)
		return w.ret;
	w.main_pass = false;
	dl_iterate_phdr(visit, &w);
	return w.ret;
}

struct find {
	uintptr_t addr, start, limit;
	bool found;
	char *path; /* phdr_object_path: the object's name, or NULL */
	size_t cap;
};

static int find_visit(struct dl_phdr_info *info, size_t size PALLOC_UNUSED,
		      void *data)
{
	struct find *f = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	bool inside = false;

	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		uintptr_t e = s + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (s < lo)
			lo = s;
		if (e > hi)
			hi = e;
		if (f->addr >= s && f->addr < e)
			inside = true;
	}
	if (!inside)
		return 0;
	if (f->path) {
		const char *name = info->dlpi_name ? info->dlpi_name : "";
		size_t n = strnlen(name, f->cap - 1);

		memcpy(f->path, name, n);
		f->path[n] = '\0';
	}
	f->start = lo;
	f->limit = hi;
	f->found = true;
	return 1;
}

int phdr_object_text(uintptr_t addr, uintptr_t *start, uintptr_t *limit)
{
	struct find f = {.addr = addr};

	dl_iterate_phdr(find_visit, &f);
	if (!f.found)
		return -1;
	*start = f.start;
	*limit = f.limit;
	return 0;
}

int phdr_object_path(uintptr_t addr, char *path, size_t cap)
{
	struct find f = {.addr = addr, .path = path, .cap = cap};

	if (!cap)
		return -1;
	dl_iterate_phdr(find_visit, &f);
	return f.found ? 0 : -1;
}

/* ---- where the loader resolves a symbol ---- */

/*
 * The entries phdr_dynamic reads, each at the slot of its tag's low five
 * bits: distinct for these eleven (two alike would be a -Woverride-init
 * error), so an entry is looked up in one step, not compared with each.
 */
struct dt_read {
	ElfW(Sxword) tag; /* 0 in an unused slot */
	unsigned char at; /* offset in struct phdr_dynamic */
	bool address;	  /* d_ptr, else d_val */
};
#define R(tag, field, address)                                                 \
	[(tag)&31] = {(tag), offsetof(struct phdr_dynamic, field), (address)}
static const struct dt_read dt_read[32] = {
	R(DT_SYMTAB, sym, true),	 R(DT_STRTAB, str, true),
	R(DT_GNU_HASH, gnu_hash, true),	 R(DT_HASH, hash, true),
	R(DT_VERSYM, versym, true),	 R(DT_JMPREL, jmprel, true),
	R(DT_RELA, rela, true),		 R(DT_STRSZ, strsz, false),
	R(DT_PLTRELSZ, jmprelsz, false), R(DT_PLTREL, pltrel, false),
	R(DT_RELASZ, relasz, false)};
#undef R
_Static_assert(sizeof(struct phdr_dynamic) == 11 * sizeof(uintptr_t),
	       "every field of struct phdr_dynamic a word");

bool phdr_dynamic(const struct dl_phdr_info *info, struct phdr_dynamic *d)
{
	const ElfW(Dyn) *dyn = NULL;

	memset(d, 0, sizeof(*d));
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
						  info->dlpi_phdr[i].p_vaddr);
	for (const ElfW(Dyn) *e = dyn; e && e->d_tag != DT_NULL; e++) {
		const struct dt_read *r = &dt_read[e->d_tag & 31];
		uintptr_t v = e->d_un.d_val;

		if (r->tag != e->d_tag)
			continue;
		if (r->address && v < info->dlpi_addr)
			v += info->dlpi_addr;
		/* every field is a word (struct phdr_dynamic) */
		memcpy((char *)d + r->at, &v, sizeof(v));
	}
	return dyn != NULL;
}

/* Does symbol index i of d define name (see phdr_first_definition)? */
static bool defines(const struct phdr_dynamic *d, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &d->sym[i];
	unsigned type = ELF64_ST_TYPE(s->st_info);
	unsigned bind = ELF64_ST_BIND(s->st_info);

	if (s->st_shndx == SHN_UNDEF || s->st_name >= d->strsz ||
	    strcmp(d->str + s->st_name, name) != 0)
		return false;
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return false;
	if (bind != STB_GLOBAL && bind != STB_WEAK)
		return false;
	/* a hidden version (foo@OLD) serves old binaries only */
	return !(d->versym && (d->versym[i] & 0x8000));
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* The index of name's definition in d, or 0 (STN_UNDEF) for none. */
static uint32_t dynsyms_lookup(const struct phdr_dynamic *d, const char *name)
{
	if (d->gnu_hash) {
		/* nbuckets, symoffset, bloom words, bloom shift, then the
		 * bloom filter (address-sized words), buckets and chains */
		uint32_t nbuckets = d->gnu_hash[0], symoffset = d->gnu_hash[1];
		uint32_t nbloom = d->gnu_hash[2];
		const uint32_t *buckets =
			(const uint32_t *)((const ElfW(Addr) *)(d->gnu_hash +
								4) +
					   nbloom);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = gnu_hash(name), i;

		if (nbuckets == 0)
			return 0;
		i = buckets[h % nbuckets];
		if (i < symoffset)
			return 0;
		for (;; i++) {
			uint32_t h2 = chain[i - symoffset];

			if ((h | 1) == (h2 | 1) && defines(d, i, name))
				return i;
			if (h2 & 1)
				return 0;
		}
	}
	/* SysV: nbucket, nchain, buckets, chains */
	uint32_t nbucket = d->hash[0], nchain = d->hash[1];
	const uint32_t *bucket = d->hash + 2, *chain = bucket + nbucket;

	if (nbucket == 0)
		return 0;
	for (uint32_t i = bucket[sysv_hash(name) % nbucket], n = 0;
	     i && i < nchain && n < nchain; i = chain[i], n++)
		if (defines(d, i, name))
			return i;
	return 0;
}

struct first_def {
	const char *name;
	struct phdr_definition *def;
	uintptr_t skip; /* the load base of an object skipped (0: none) */
	bool found;
};

static int first_def_visit(struct dl_phdr_info *info, size_t size PALLOC_UNUSED,
			   void *data)
{
	struct first_def *f = data;
	struct phdr_dynamic d;
	uint32_t i;
	size_t n;

	if (f->skip && info->dlpi_addr == f->skip)
		return 0;
	if (!phdr_dynamic(info, &d) || !d.sym || !d.str ||
	    !(d.gnu_hash || d.hash))
		return 0;
	i = dynsyms_lookup(&d, f->name);
	if (!i)
		return 0;
	f->def->addr = info->dlpi_addr + d.sym[i].st_value;
	/* the first object (empty name) is the main program */
	f->def->is_main = !info->dlpi_name || !info->dlpi_name[0];
	n = f->def->is_main ? 0 : strlen(info->dlpi_name);
	if (n >= sizeof(f->def->path))
		n = sizeof(f->def->path) - 1;
	memcpy(f->def->path, f->def->is_main ? "" : info->dlpi_name, n);
	f->def->path[n] = '\0';
	f->found = true;
	return 1;
}

int phdr_first_definition(const char *name, struct phdr_definition *def)
{
	return phdr_first_definition_outside(name, 0, def);
}

int phdr_first_definition_outside(const char *name, uintptr_t skip,
				  struct phdr_definition *def)
{
	struct first_def f = {.name = name, .def = def, .skip = skip};

	dl_iterate_phdr(first_def_visit, &f);
	return f.found ? 0 : -1;
}
