/* SPDX-License-Identifier: MIT */
/* Tests: find this process's mapping and build id for an address. */
#include "common.h"
#include "selfmap.h"

#include <elf.h>
#include <inttypes.h>
#include <link.h>

struct note_search {
	uintptr_t addr;
	char *out;
	size_t size;
	bool found;
};

static void note_build_id(const unsigned char *p, size_t len,
			  struct note_search *ns)
{
	size_t off = 0, i;

	while (off + sizeof(ElfW(Nhdr)) <= len) {
		const ElfW(Nhdr) *nh = (const void *)(p + off);
		size_t name = (nh->n_namesz + 3) & ~(size_t)3;
		size_t desc = (nh->n_descsz + 3) & ~(size_t)3;
		const unsigned char *d = p + off + sizeof(*nh) + name;

		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(p + off + sizeof(*nh), "GNU", 4) == 0) {
			for (i = 0; i < nh->n_descsz && 2 * i + 2 < ns->size;
			     i++)
				snprintf(ns->out + 2 * i, 3, "%02x", d[i]);
			return;
		}
		off += sizeof(*nh) + name + desc;
	}
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct note_search *ns = data;
	bool mine = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && ns->addr >= lo &&
		    ns->addr < lo + ph->p_memsz)
			mine = true;
	}
	if (!mine)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE)
			note_build_id(
				(const void *)(info->dlpi_addr + ph->p_vaddr),
				ph->p_memsz, ns);
	}
	ns->found = true;
	return 1;
}

int selfmap_find(const void *addr, struct pprof_mapping *m, char *file,
		 size_t filesz, char *build_id, size_t idsz)
{
	struct note_search ns = {(uintptr_t)addr, build_id, idsz, false};
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int ret = -1;

	build_id[0] = '\0';
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi,
			   &off, &pos) < 3 ||
		    pos == 0 || (uintptr_t)addr < lo || (uintptr_t)addr >= hi)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (line[pos] != '/')
			break;
		snprintf(file, filesz, "%s", line + pos);
		memset(m, 0, sizeof(*m));
		m->start = lo;
		m->limit = hi;
		m->offset = off;
		m->file = file;
		m->build_id = build_id;
		ret = 0;
		break;
	}
	fclose(f);
	if (ret == 0)
		dl_iterate_phdr(phdr_cb, &ns);
	return ret;
}
