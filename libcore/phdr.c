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
