/* SPDX-License-Identifier: MIT */
/* The loaded files kept between symbols_symbolize() calls: an LRU of
 * 32 (symbols_int.h). */
#include "symbols_int.h"
#include "infile.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

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

void sym_modfile_unload(struct modfile *f)
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
	sym_modfile_unload(f);
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

/* Drop the files loaded for this call only, then the least recently used
 * beyond CACHE_FILES. Lock held. */
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

	f->dwfl = dwfl_begin(&sym_dwfl_callbacks);
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
	sym_loading = f;
	f->dwarf = dwfl_module_getdwarf(f->mod, &dbias) != NULL;
	sym_loading = NULL;
	return 0;
}

int sym_modfile_reload(struct modfile *f)
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

struct modfile *sym_modfile_get(struct symbolizer *s, const char *path,
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
			symcache_index_module(f, key);
	}
	if (!cache.atexit_done)
		cache.atexit_done = atexit(cache_clear_at_exit) == 0;
	cache.v[cache.n++] = f;
found:
	f->used = cache.calls;
	return f;
fail:
	sym_warn(s, "cannot load '%s': %s; not symbolized", path,
		 dwfl_errmsg(-1));
	modfile_free(f);
	return NULL;
nomem:
	sym_warn(s, "cannot load '%s': %s; not symbolized", path,
		 strerror(ENOMEM));
	return NULL;
}

void sym_cache_begin(const char *root)
{
	pthread_mutex_lock(&cache.lock);
	cache.calls++;
	sym_debug_root = root;
}

void sym_cache_end(void)
{
	sym_debug_root = NULL;
	cache_trim();
	pthread_mutex_unlock(&cache.lock);
}
