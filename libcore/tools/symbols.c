/* SPDX-License-Identifier: MIT */
/* Symbolize raw profiles: ELF symbols and DWARF lines via libdwfl/libdw. */
#include "symbols.h"
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

/* Inlined frames kept per location; deeper chains keep the innermost. */
#define MAX_FRAMES 64

/* Debug file paths remembered per loaded file (find_debuginfo tries 4). */
#define MAX_PROBES 8

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

/*
 * One ELF symbol that may name code. Names point into the module's string
 * tables, alive as long as its Dwfl.
 */
struct fsym {
	GElf_Addr lo;	 /* ELF address (the module is at bias 0) */
	GElf_Xword size; /* 0: a sizeless label */
	const char *name;
	int rank; /* binding_rank(); higher wins at one address */
	/* highest lo + size over the sized symbols at or before this one */
	GElf_Addr max_end;
	/* the best sizeless symbol at the highest address at or below
	 * this one that has any, or SIZE_MAX */
	size_t label;
};

/*
 * A module's symbols sorted by address, built on first use: the symbol of
 * an address by binary search instead of dwfl_module_addrinfo(), which
 * walks the whole table for every address (cc1 has 28k symbols).
 */
struct sym_index {
	bool built;
	size_t n;
	struct fsym *s;
};

/*
 * One loaded ELF file, kept across symbols_symbolize() calls: palloc-run
 * symbolizes a profile per process, and a build runs cc1, as and libc
 * dozens of times; loading them (inflating compressed DWARF, sorting the
 * symbols) once instead of per profile is most of the time saved. The
 * module is reported at bias 0: callers subtract each mapping's bias.
 */
struct modfile {
	char *path; /* root + file name, as opened */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool dwarf;
	struct cu_index cus;
	struct sym_index syms;
	unsigned long used; /* the cache's call count at the last use */
	bool transient;	    /* dropped at the end of the call */
	/* the answers from the on-disk index (symcache.h), without libdw */
	struct symcache *idx;
	/* the debug files libdwfl looked for while loading it */
	struct probe {
		char *path;
		bool exists;
		struct stat st;
	} probes[MAX_PROBES];
	size_t n_probes;
	bool probes_lost; /* more than MAX_PROBES, or ENOMEM */
};

/* What a profile's mapping uses. */
struct mod {
	struct modfile *f; /* NULL: not usable */
	uint64_t bias;	   /* runtime address minus ELF address */
	bool needed;	   /* some location here needs symbols */
	bool any_line;
	bool used, any_unnamed; /* by some location; one has no lines */
};

/* Files kept loaded between calls; the least recently used beyond this
 * are dropped after each call. */
#define CACHE_FILES 32

static struct {
	pthread_mutex_t lock; /* held through a whole symbols_symbolize() */
	struct modfile **v;
	size_t n, cap;
	unsigned long calls;
	bool atexit_done;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct symbolizer {
	struct pprof_profile *p;
	const char *root;
	struct symbols_stats *st;
	struct mod *mods; /* one per mapping */
};

/* find_debuginfo has no context argument; symbolization is per thread. */
static __thread const char *debug_root;
/* the file being loaded, whose debug file probes are remembered */
static __thread struct modfile *loading;

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
	return infile_open(full, NULL);
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
	fd = infile_open(path, NULL);
	if (loading && loading->n_probes < MAX_PROBES) {
		struct probe *pr = &loading->probes[loading->n_probes];

		pr->exists = fd >= 0 && fstat(fd, &pr->st) == 0;
		pr->path = strdup(path);
		if (pr->path)
			loading->n_probes++;
		else
			loading->probes_lost = true;
	} else if (loading) {
		loading->probes_lost = true;
	}
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
	fd = infile_open(alt, NULL);
	if (fd < 0)
		goto fail;
	snprintf(path, size, "%s", alt);
	return fd;
fail:
	errno = err;
	return -1;
}

/* Forget what libdwfl loaded (the symbol index points into it). */
static void modfile_unload(struct modfile *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
	free(f->cus.r);
	free(f->syms.s);
	memset(&f->cus, 0, sizeof(f->cus));
	memset(&f->syms, 0, sizeof(f->syms));
}

static void modfile_free(struct modfile *f)
{
	if (!f)
		return;
	modfile_unload(f);
	symcache_close(f->idx);
	for (size_t i = 0; i < f->n_probes; i++)
		free(f->probes[i].path);
	free(f->path);
	free(f);
}

/* Free the files kept loaded between calls. Not while symbolizing. */
void symbols_cache_clear(void)
{
	size_t i;

	pthread_mutex_lock(&cache.lock);
	for (i = 0; i < cache.n; i++)
		modfile_free(cache.v[i]);
	free(cache.v);
	cache.v = NULL;
	cache.n = cache.cap = 0;
	pthread_mutex_unlock(&cache.lock);
}

static void cache_clear_at_exit(void)
{
	symbols_cache_clear();
}

static int modfile_used_cmp(const void *a, const void *b)
{
	const struct modfile *x = *(struct modfile *const *)a;
	const struct modfile *y = *(struct modfile *const *)b;

	return x->used > y->used ? -1 : x->used < y->used;
}

/*
 * Drop the files loaded for this call only, then the least recently used
 * beyond CACHE_FILES. Lock held.
 */
static void cache_trim(void)
{
	size_t i, n = 0;

	for (i = 0; i < cache.n; i++) {
		if (cache.v[i]->transient)
			modfile_free(cache.v[i]);
		else
			cache.v[n++] = cache.v[i];
	}
	cache.n = n;
	if (cache.n <= CACHE_FILES)
		return;
	qsort(cache.v, cache.n, sizeof(*cache.v), modfile_used_cmp);
	for (i = CACHE_FILES; i < cache.n; i++)
		modfile_free(cache.v[i]);
	cache.n = CACHE_FILES;
}

/* Load f->path into libdwfl (module name: the file's base name). */
static int modfile_load(struct modfile *f, const char *file, int fd)
{
	const char *base = strrchr(file, '/');
	Dwarf_Addr dbias;
	int dfd;

	f->dwfl = dwfl_begin(&callbacks);
	if (!f->dwfl)
		return -1;
	/* The file checked (a regular file), not path opened again: what is
	 * at path may have become a FIFO since. libdwfl keeps the fd on
	 * success and leaves it to us on failure. */
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -1;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, base ? base + 1 : file, f->path, dfd,
				 0, true);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		close(dfd);
		return -1;
	}
	loading = f;
	f->dwarf = dwfl_module_getdwarf(f->mod, &dbias) != NULL;
	loading = NULL;
	return 0;
}

/* Load f again from its path after its index was refused: the same file
 * (device and inode) opened as a regular file, or -1. */
static int modfile_reload(struct modfile *f)
{
	struct stat sb;
	int fd = infile_open(f->path, &sb), r = -1;

	if (fd < 0)
		return -1;
	if (sb.st_dev == f->dev && sb.st_ino == f->ino)
		r = modfile_load(f, f->path, fd);
	close(fd);
	return r;
}

static void index_module(struct modfile *f, const struct symcache_key *key);

/*
 * The loaded file at path (opened as fd) from the cache, or loaded now
 * and cached. The same name, inode, size and modification time is taken
 * as the same file. A file modified in the last seconds is loaded for
 * this call only: rewritten in place within one tick of the clock (a
 * fuzzer, cp over a library) it would look unchanged, so only files whose
 * time is well past are trusted (git's "racy clean" rule). NULL with a
 * warning when libdwfl cannot load it. Lock held. With a key (the file's
 * build id), the answers come from the on-disk index when there is one,
 * which is written otherwise (symcache.h); the key's size and time are
 * filled in here.
 */
static struct modfile *modfile_get(struct symbolizer *s, const char *path,
				   const char *file, int fd,
				   struct symcache_key *key)
{
	struct modfile *f;
	struct timespec now;
	struct stat sb;
	size_t i;

	if (fstat(fd, &sb) < 0) {
		/* not comparable: loaded for this call only */
		memset(&sb, 0, sizeof(sb));
		i = cache.n;
	} else {
		i = 0;
	}
	for (; i < cache.n; i++) {
		f = cache.v[i];
		if (f->dev == sb.st_dev && f->ino == sb.st_ino &&
		    f->size == sb.st_size &&
		    f->mtime.tv_sec == sb.st_mtim.tv_sec &&
		    f->mtime.tv_nsec == sb.st_mtim.tv_nsec &&
		    strcmp(f->path, path) == 0)
			goto found;
	}
	if (cache.n == cache.cap) {
		size_t cap = cache.cap ? 2 * cache.cap : 16;
		struct modfile **nv = realloc(cache.v, cap * sizeof(*nv));

		if (!nv)
			goto nomem;
		cache.v = nv;
		cache.cap = cap;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		goto nomem;
	}
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	f->size = sb.st_size;
	f->mtime = sb.st_mtim;
	f->transient = !sb.st_ino || clock_gettime(CLOCK_REALTIME, &now) < 0 ||
		       sb.st_mtim.tv_sec >= now.tv_sec - 2;
	if (f->transient || !key || !symcache_enabled())
		key = NULL;
	if (key) {
		key->size = (uint64_t)sb.st_size;
		key->mtime_sec = sb.st_mtim.tv_sec;
		key->mtime_nsec = sb.st_mtim.tv_nsec;
		f->idx = symcache_open(key, &f->dwarf);
	}
	if (!f->idx) {
		if (modfile_load(f, file, fd) < 0)
			goto fail;
		if (key)
			index_module(f, key);
	}
	if (!cache.atexit_done)
		cache.atexit_done = atexit(cache_clear_at_exit) == 0;
	cache.v[cache.n++] = f;
found:
	f->used = cache.calls;
	return f;
fail:
	warn(s, "cannot load '%s': %s; not symbolized", path, dwfl_errmsg(-1));
	modfile_free(f);
	return NULL;
nomem:
	warn(s, "cannot load '%s': %s; not symbolized", path, strerror(ENOMEM));
	return NULL;
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
		warn(s, "cannot open '%s': %s; not symbolized", path, why);
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
	key.build_id = id;
	key.build_id_len = idlen > 0 ? (size_t)idlen : 0;
	md->f = modfile_get(s, path, m->file, fd,
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

/*
 * Index the module's symbols (once), the ones dwfl_module_addrinfo()
 * considers: named, defined, not section, file or TLS symbols. On ENOMEM
 * the index stays empty and lookups fall back to dwfl_module_addrinfo().
 */
static void build_sym_index(struct modfile *md)
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

/*
 * The symbol name at addr, as dwfl_module_addrinfo() would choose it: the
 * closest sized symbol that contains addr (at one address the best
 * binding, then the smallest), else the closest sizeless label if no sized
 * symbol at or below it reaches it.
 */
static const char *symbol_at(struct modfile *md, uint64_t addr)
{
	struct sym_index *ix = &md->syms;
	const struct fsym *best = NULL;
	size_t lo = 0, hi, k;
	GElf_Off off;
	GElf_Sym esym;

	if (!ix->built)
		build_sym_index(md);
	if (!ix->s)
		return dwfl_module_addrinfo(md->mod, addr, &off, &esym, NULL,
					    NULL, NULL);
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->s[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
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

static const char *die_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr_integrate(die, name, &attr))
		return NULL;
	return dwarf_formstring(&attr);
}

/* The linkage name of a DIE, or NULL. */
static const char *die_linkage(Dwarf_Die *die)
{
	const char *linkage = die_string(die, DW_AT_linkage_name);

	return linkage ? linkage : die_string(die, DW_AT_MIPS_linkage_name);
}

/* The declaration line of a DIE, or 0. */
static int die_decl_line(Dwarf_Die *die)
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

/* The function of a DWARF subprogram or inlined subroutine DIE. */
static uint64_t die_function(struct symbolizer *s, Dwarf_Die *die,
			     const char *file, const char *fallback)
{
	return add_function(s, die_string(die, DW_AT_name), die_linkage(die),
			    file, file ? NULL : dwarf_decl_file(die),
			    die_decl_line(die), fallback);
}

/* The line of an inlined call (DW_AT_call_line), or 0. */
static int call_line(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;

	if (dwarf_attr(die, DW_AT_call_line, &attr) &&
	    dwarf_formudata(&attr, &w) == 0)
		return (int)w;
	return 0;
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
static void build_cu_index(struct modfile *md)
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

/*
 * The CU holding addr. dwfl_module_addrdie() relies on .debug_aranges,
 * which clang does not emit by default (and libdw 0.188 does not rebuild);
 * without it, the CUs' own ranges are indexed and searched.
 */
static Dwarf_Die *find_cu(struct modfile *md, uint64_t addr, Dwarf_Addr *bias,
			  Dwarf_Die *mem)
{
	Dwarf_Die *cu = dwfl_module_addrdie(md->mod, addr, bias);
	struct cu_index *ix = &md->cus;
	Dwarf *dw;
	size_t lo = 0, hi;

	if (cu)
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
static size_t dwarf_lines(struct symbolizer *s, struct modfile *md,
			  uint64_t addr, const char *sym,
			  struct pprof_line *lines, const char **lt_file,
			  int *lt_line)
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
		line = call_line(d);
	}
	return n;
}

/*
 * The same from the on-disk index: the chain of functions from the
 * innermost node h->node up, as dwarf_lines() builds it. -1 when the
 * index proves inconsistent.
 */
static int index_lines(struct symbolizer *s, struct modfile *md,
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

/*
 * Writing a module's index (symcache.h): the address space is cut at
 * every address where some answer may change (a symbol's start or end,
 * an address range of .debug_aranges or of a CU, a line-table row, a
 * scope's range), and each piece gets what symbol_at(), find_cu(),
 * dwarf_getsrc_die() and scope_chain() answer at its start: the same
 * functions, so the same answers. scope_chain() walks a CU's tree for
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
		size_t a = 0, b = avail->n, j, k, nr = 0;
		struct seg rem[2], first, last;

		if (lo >= hi)
			continue;
		while (a < b) {
			size_t mid = a + (b - a) / 2;

			if (avail->v[mid].hi <= lo)
				a = mid + 1;
			else
				b = mid;
		}
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

/* The node of a subprogram or inlined subroutine DIE, as die_function()
 * and dwarf_lines() read it. */
static uint32_t index_node(struct indexer *ix, Dwarf_Die *die, int tag,
			   uint32_t parent)
{
	uint32_t id = symcache_writer_node(
		ix->w, index_string(ix, die_string(die, DW_AT_name)),
		index_string(ix, die_linkage(die)),
		index_string(ix, dwarf_decl_file(die)),
		index_string(ix, call_file(die)), die_decl_line(die),
		call_line(die), parent, tag == DW_TAG_subprogram);

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

/* The children of die, as scope_chain() visits them. */
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
	size_t lo = 0, hi;

	cp = bsearch(&key, ix->cus, ix->n_cus, sizeof(*ix->cus), cu_paint_cmp);
	if (!cp)
		return false;
	*node = SYMCACHE_NONE;
	hi = cp->segs.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp->segs.v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
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
		build_sym_index(f);
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
		build_cu_index(f);
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
		sym = index_string(ix, symbol_at(f, a));
		if (f->dwarf) {
			Dwarf_Die cu_mem, *cu;
			Dwarf_Addr bias;
			Dwarf_Line *dl;

			cu = find_cu(f, a, &bias, &cu_mem);
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

/*
 * Write f's index, then answer from it (so that the first run answers as
 * the next ones will) and drop what libdwfl loaded. On any failure f
 * stays as it was, answered by libdw.
 */
static void index_module(struct modfile *f, const struct symcache_key *key)
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
	loading = f;
	if (!ix.failed)
		index_cuts(&ix);
	if (!ix.failed && ix.cuts.n > 1)
		qsort(ix.cuts.v, ix.cuts.n, sizeof(*ix.cuts.v), addr_cmp);
	index_answers(&ix);
	loading = NULL;
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
		modfile_unload(f);
	} else {
		symcache_close(f->idx);
		f->idx = NULL;
	}
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
		    (!f->dwarf || index_lines(s, f, &h, lines, &n) == 0)) {
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
		if (modfile_reload(f) < 0)
			modfile_unload(f);
	}
	if (!f->mod)
		return;
	sym = symbol_at(md->f, addr);
	if (md->f->dwarf)
		n = dwarf_lines(s, md->f, addr, sym, lines, &file, &line);
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
		warn(s, "%s; JIT frames not named", msg_last());
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
	pthread_mutex_lock(&cache.lock);
	cache.calls++;
	debug_root = s.root;
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
	debug_root = NULL;
	cache_trim();
	pthread_mutex_unlock(&cache.lock);
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
