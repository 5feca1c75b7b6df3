/* SPDX-License-Identifier: MIT */
/* Symbolize raw profiles: ELF symbols and DWARF lines via libdwfl/libdw. */
#include "symbols_int.h"
#include "perfmap.h"
#include "symcache.h"
#include "pprof_int.h"
#include "pprof_comments.h"
#include "msg.h"
#include "infile.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <sys/stat.h>
#include <libelf.h>
#include <stdarg.h>
#include <strings.h>
#include <unistd.h>

/* libstdc++'s demangler (cxxabi.h is C++ only, so declared here). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

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

void sym_warn(struct symbolizer *s, const char *fmt, ...)
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
	return infile_open(full, NULL);
}

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
	fd = infile_open(alt, NULL);
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
	struct symcache_key key;
	char path[4096], have[256];
	const void *id;
	char why[MSG_MAX];
	ssize_t idlen;
	uint64_t bias = 0;
	Elf *elf;
	size_t j;
	int fd;

	fd = open_under(s->root, m->file, path, sizeof(path));
	if (fd < 0) {
		/* why the file itself failed ("not a regular file (a FIFO)") */
		snprintf(why, sizeof(why), "%s",
			 errno == ENAMETOOLONG ? strerror(errno) : msg_last());
		fd = open_map_file(s->root, m, path, sizeof(path));
	}
	if (fd < 0) {
		s->st->mappings_missing++;
		sym_warn(s, "cannot open '%s': %s; not symbolized", path, why);
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		s->st->mappings_missing++;
		sym_warn(s, "cannot read '%s': not an ELF file; not symbolized",
			 path);
		goto out;
	}
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	hex(id, idlen > 0 ? (size_t)idlen : 0, have, sizeof(have));
	if (*m->build_id && strcasecmp(m->build_id, have) != 0) {
		s->st->mappings_mismatched++;
		sym_warn(s,
			 "build id mismatch for '%s': the profile has %s, the "
			 "file has %s; not symbolized",
			 path, m->build_id, *have ? have : "none");
		goto out;
	}
	if (load_bias(elf, m, &bias) < 0) {
		s->st->mappings_missing++;
		sym_warn(s,
			 "cannot place '%s': no loadable segment at offset "
			 "0x%llx; not symbolized",
			 path, (unsigned long long)m->offset);
		goto out;
	}
	key.build_id = id;
	key.build_id_len = idlen > 0 ? (size_t)idlen : 0;
	md->f = sym_modfile_get(s, path, m->file, fd,
				idlen > 0 && idlen <= 64 && !*s->root ? &key
								      : NULL);
	md->bias = bias;
	if (!md->f) {
		s->st->mappings_missing++;
		goto out;
	}
	/* counted once per file and bias, as it was loaded before */
	for (j = 0; j < i; j++)
		if (s->mods[j].f == md->f && s->mods[j].bias == bias)
			goto out;
	if (!md->f->dwarf)
		s->st->mappings_no_dwarf++;
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

static void symbolize_location(struct symbolizer *s, struct pprof_location *l)
{
	struct mod *md = &s->mods[l->mapping_id - 1];
	struct pprof_line lines[MAX_FRAMES];
	const char *sym;
	size_t n = 0;
	uint64_t id = l->id;
	/* the file's module is loaded at bias 0 */
	uint64_t addr = l->address - md->bias;
	const char *file = NULL;
	int line = 0;
	struct modfile *f = md->f;
	struct symcache_hit h;

	if (f->idx) {
		if (symcache_lookup(f->idx, addr, &h) == 0 &&
		    (!f->dwarf || sym_index_lines(s, f, &h, lines, &n) == 0)) {
			sym = h.sym;
			file = h.file;
			line = h.line;
			goto named;
		}
		/* an inconsistent index: refused, libdw from now on */
		symcache_refuse(f->idx);
		symcache_close(f->idx);
		f->idx = NULL;
		n = 0;
		if (sym_modfile_reload(f) < 0)
			sym_modfile_unload(f);
	}
	if (!f->mod)
		return;
	sym = sym_symbol_at(md->f, addr);
	if (md->f->dwarf)
		n = sym_dwarf_lines(s, md->f, addr, sym, lines, &file, &line);
named:
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
	if (lines[0].line)
		md->any_line = true;
}

/*
 * The perf map of the profiled process: root/tmp/perf-PID.map with the
 * pid the process knew itself by (the agent's comment), owned by root,
 * by the caller, or by the owner of /proc/PID when root is a live
 * process's /proc/PID/root. NULL when there is none or it is refused
 * (warned).
 */
static struct perfmap *open_perfmap(struct symbolizer *s)
{
	long pid = pprof_comment_pid(s->p);
	size_t len = strlen(s->root), n_uids = 0;
	char path[4096], proc[4096];
	struct perfmap *pm;
	struct stat st;
	uid_t uids[2];

	if (pid <= 0 ||
	    (size_t)snprintf(path, sizeof(path), "%s/tmp/perf-%ld.map", s->root,
			     pid) >= sizeof(path))
		return NULL;
	uids[n_uids++] = geteuid();
	if (strncmp(s->root, "/proc/", 6) == 0 && len > 5 &&
	    strcmp(s->root + len - 5, "/root") == 0 &&
	    (size_t)snprintf(proc, sizeof(proc), "%.*s", (int)(len - 5),
			     s->root) < sizeof(proc) &&
	    stat(proc, &st) == 0)
		uids[n_uids++] = st.st_uid;
	pm = perfmap_load(path, uids, n_uids);
	if (!pm && errno != ENOENT)
		sym_warn(s, "%s; JIT frames not named", msg_last());
	return pm;
}

/*
 * Locations in memory no ELF file describes (anonymous executable
 * memory, "[anon:jit]" and the like: code a runtime generated) named
 * from the process's perf map, as perf(1) does.
 */
static void symbolize_jit(struct symbolizer *s)
{
	struct pprof_profile *p = s->p;
	struct perfmap *pm = NULL;
	bool tried = false;

	for (size_t i = 0; i < p->n_locations; i++) {
		struct pprof_location *l = &p->locations[i];
		struct pprof_line line = {0};
		const char *name;

		if (!l->mapping_id || l->n_lines ||
		    s->mods[l->mapping_id - 1].f)
			continue;
		if (!tried) {
			pm = open_perfmap(s);
			tried = true;
		}
		if (!pm)
			return;
		name = perfmap_lookup(pm, l->address);
		if (!name)
			continue;
		name = pprof_intern(p, name);
		line.function_id =
			name ? pprof_add_function(p, name, name, "", 0) : 0;
		if (!line.function_id ||
		    pprof_set_location_lines(p, l->id, &line, 1) < 0)
			continue;
		s->st->locations_jit++;
		s->st->locations_symbolized++;
	}
	perfmap_free(pm);
}

/*
 * pprof re-symbolizes a mapping (internal/symbolizer newMapping) only when
 * none of has_functions, has_filenames, has_line_numbers is set: so they
 * are set only on a mapping whose every location is named now, and
 * cleared on the others, which a later run with the debug symbols
 * installed can still complete. A mapping no location uses keeps its
 * flags.
 */
static void set_mapping_flags(struct symbolizer *s)
{
	struct pprof_profile *p = s->p;
	size_t i;

	for (i = 0; i < p->n_locations; i++) {
		const struct pprof_location *l = &p->locations[i];

		if (!l->mapping_id)
			continue;
		s->mods[l->mapping_id - 1].used = true;
		if (!l->n_lines)
			s->mods[l->mapping_id - 1].any_unnamed = true;
	}
	for (i = 0; i < p->n_mappings; i++) {
		struct pprof_mapping *m = &p->mappings[i];
		const struct mod *md = &s->mods[i];

		if (!md->used)
			continue;
		if (md->any_unnamed) {
			m->has_functions = m->has_filenames = false;
			m->has_line_numbers = m->has_inline_frames = false;
			continue;
		}
		m->has_functions = true;
		if (md->f && md->f->dwarf && md->any_line) {
			m->has_filenames = true;
			m->has_line_numbers = true;
			m->has_inline_frames = true;
		}
	}
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
	st->mappings_no_dwarf = st->locations_jit = 0;
	s.st = st;
	if (!p->n_mappings)
		return 0;
	s.mods = calloc(p->n_mappings, sizeof(*s.mods));
	if (!s.mods)
		return msg_set_errno(ENOMEM, "cannot symbolize profile");
	elf_version(EV_CURRENT);
	/* the cached Dwfl handles are not for two threads at once */
	sym_cache_begin(s.root);
	/* only the files that some location needs are opened */
	for (i = 0; i < p->n_locations; i++)
		if (p->locations[i].mapping_id && !p->locations[i].n_lines)
			s.mods[p->locations[i].mapping_id - 1].needed = true;
	for (i = 0; i < p->n_mappings; i++) {
		if (p->mappings[i].file[0] != '/')
			continue;
		st->mappings++;
		if (s.mods[i].needed)
			open_mapping(&s, i);
	}
	for (i = 0; i < p->n_locations; i++) {
		struct pprof_location *l = &p->locations[i];

		if (!l->mapping_id || l->n_lines)
			continue;
		st->locations++;
		if (s.mods[l->mapping_id - 1].f)
			symbolize_location(&s, l);
	}
	symbolize_jit(&s);
	set_mapping_flags(&s);
	sym_cache_end();
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
