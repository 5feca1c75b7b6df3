/* SPDX-License-Identifier: MIT */
/* Anonymous memory that did not come through malloc, and its likely owner. */
#include "agent_int.h"
#include "agent/allocstats.h"
#include "agent/lines.h"
#include "agent/unseen.h"
#include "fmt.h"
#include "smallfile.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#define NT_GO_BUILDID 4 /* Go's linker: owner "Go", type 4 */

static bool is_go, has_pymalloc;

/* Does the PT_NOTE segment at note[0..len) hold the Go build id note? */
static bool go_note(const unsigned char *note, size_t len)
{
	size_t off = 0;

	while (off + sizeof(ElfW(Nhdr)) <= len) {
		const ElfW(Nhdr) *n = (const void *)(note + off);
		size_t name = (n->n_namesz + 3) & ~(size_t)3;
		size_t desc = (n->n_descsz + 3) & ~(size_t)3;

		off += sizeof(*n);
		if (name > len - off)
			return false;
		/* Go's linker writes the name "Go\0\0" (namesz 4). */
		if (n->n_type == NT_GO_BUILDID &&
		    (n->n_namesz == 3 || n->n_namesz == 4) &&
		    memcmp(note + off, "Go", 3) == 0)
			return true;
		off += name;
		if (desc > len - off)
			return false;
		off += desc;
	}
	return false;
}

/* The main executable (the first object the loader lists). */
static int main_go_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE &&
		    go_note((const void *)(info->dlpi_addr + ph->p_vaddr),
			    ph->p_memsz)) {
			*(bool *)arg = true;
			break;
		}
	}
	return 1;
}

void unseen_init(void)
{
	struct phdr_definition def;
	const char *pm = getenv("PYTHONMALLOC");

	dl_iterate_phdr(main_go_note, &is_go);
	/*
	 * Python: the executable or libpython defines PyObject_Malloc;
	 * pymalloc serves small objects unless PYTHONMALLOC=malloc (or
	 * malloc_debug) sends them all to malloc.
	 */
	has_pymalloc = phdr_first_definition("PyObject_Malloc", &def) == 0 &&
		       !(pm && strncmp(pm, "malloc", 6) == 0);
	/* Cached for good: a fork child whose loader lock was held at the
	 * fork must not need the loader to read its allocator. */
	(void)allocstats_detect();
}

bool unseen_is_go(void)
{
	return is_go;
}

/*
 * The "Key:   123 kB" lines of /proc/self/status for keys[0, n), as bytes
 * in out[] (-1 when absent or malformed), in one pass over its lines.
 */
static void status_kb(const char *status, const char *const *keys, int64_t *out,
		      size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = -1;
	for (const char *p = status; p && *p; p = strchr(p, '\n'), p += !!p) {
		const char *c = strchr(p, ':');
		size_t i, klen;
		int64_t v = 0;

		if (!c)
			return;
		klen = (size_t)(c - p);
		for (i = 0; i < n; i++)
			if (keys[i][0] == p[0] &&
			    strncmp(keys[i], p, klen) == 0 && !keys[i][klen])
				break;
		if (i == n)
			continue;
		p = c + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		while (*p >= '0' && *p <= '9')
			v = v * 10 + (*p++ - '0');
		out[i] = v * 1024;
	}
}

/* Owners recognised by a mapped file's base name. */
enum {
	MAPPED_JVM = 1,
	MAPPED_V8 = 2,
};

/* What the mapping line line[0..n) maps, as MAPPED_* bits. */
static unsigned map_line(const char *line, size_t n)
{
	const char *base = memrchr(line, '/', n);

	if (!base)
		return 0;
	base++;
	n -= (size_t)(base - line);
	if (n >= 9 && memcmp(base, "libjvm.so", 9) == 0)
		return MAPPED_JVM;
	if ((n >= 10 && memcmp(base, "libnode.so", 10) == 0) ||
	    (n >= 5 && memcmp(base, "libv8", 5) == 0))
		return MAPPED_V8;
	return 0;
}

static void map_visit(const char *line, size_t len, void *arg)
{
	unsigned *found = arg;

	*found |= map_line(line, len);
}

/* The MAPPED_* bits of every file in /proc/self/maps (a JVM maps
 * thousands of regions: read through agent_lines' stack buffer). */
static unsigned scan_maps(void)
{
	unsigned found = 0;

	agent_lines("/proc/self/maps", map_visit, &found);
	return found;
}

/* The likely owner of anonymous memory malloc did not give out. */
static void find_owner(struct unseen *u)
{
	const char *exe = agent_program_name();
	unsigned maps;

	u->owner = u->hint = NULL;
	if (is_go) {
		u->owner = "the Go runtime";
		u->hint = "Go's heap is not malloc's; use runtime/pprof's heap "
			  "profile";
		return;
	}
	maps = scan_maps();
	if (maps & MAPPED_JVM) {
		u->owner = "the JVM";
		u->hint = "the Java heap is not malloc's; use the JVM's tools "
			  "(jcmd GC.heap_info, a heap dump)";
	} else if ((maps & MAPPED_V8) || strcmp(exe, "node") == 0 ||
		   strcmp(exe, "nodejs") == 0) {
		u->owner = "V8 (node)";
		u->hint =
			"the JavaScript heap is not malloc's; use node's heap "
			"snapshots";
	} else if (has_pymalloc) {
		u->owner = "pymalloc";
		u->hint =
			"Python keeps small objects in its own arenas; run it "
			"with PYTHONMALLOC=malloc to profile them";
	}
}

void unseen_measure(struct unseen *u, int64_t heap_peak_bytes,
		    enum unseen_owner owner)
{
	static const char *const keys[] = {"RssAnon", "VmHWM", "RssFile",
					   "RssShmem"};
	char status[4096];
	struct allocstats_comparable c;
	int64_t kb[4], heap, own;
	struct unseen_status st;
	bool have;

	allocstats_comparable(&c);
	heap = c.mapped_bytes > c.allocated_bytes ? c.mapped_bytes
						  : c.allocated_bytes;
	have = smallfile_read("/proc/self/status", status, sizeof(status)) > 0;
	if (have) {
		status_kb(status, keys, kb, 4);
		st = (struct unseen_status){kb[0], kb[1], kb[2], kb[3]};
	}
	/* The agent's own memory: its arena and its static tables. */
	own = (int64_t)__atomic_load_n(&agent_arena.mapped, __ATOMIC_RELAXED) +
	      (int64_t)sizeof(agent_tab);
	unseen_compute(u, have ? &st : NULL, heap, heap_peak_bytes, own);
	if (u->anon_bytes < 0)
		return;
	if (owner == UNSEEN_OWNER_ALWAYS ||
	    (owner == UNSEEN_OWNER_IF_MOST && u->most))
		find_owner(u);
}
