/* SPDX-License-Identifier: MIT */
/* On-disk symbol index per build id (see symcache.h). */
#include "symcache.h"
#include "search.h"
#include "grow.h"
#include "hash.h"

#include <dirent.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "PALLOCX1"
#define FORMAT_VERSION 1
/* Bounds that no real module reaches and that keep ids below NONE. */
#define MAX_PROBES 64
#define MAX_RECORDS (1u << 28)
#define MAX_STRINGS (1u << 31)
#define MAX_FILE ((uint64_t)1 << 32)
/* Default bound of the directory (PALLOC_CACHE_MAX, MiB). */
#define DEFAULT_MAX_MIB 256
/* A file used is marked recently used at most this often (seconds). */
#define TOUCH_EVERY 3600

struct hdr {
	char magic[8];
	uint32_t version, flags; /* flags: 1 = DWARF answers */
	uint32_t build_id_len, n_probes;
	unsigned char build_id[64];
	uint64_t size;
	int64_t mtime_sec, mtime_nsec;
	uint64_t n_intervals, n_nodes, strings_size;
	uint64_t sum; /* hash of every byte after the header */
};

struct rec_probe {
	uint32_t path, exists;
	uint64_t size;
	int64_t mtime_sec, mtime_nsec;
};

struct rec_interval {
	uint64_t start;
	uint32_t sym, file;
	int32_t line;
	uint32_t node;
};

struct rec_node {
	uint32_t name, linkage, decl_file, call_file;
	int32_t decl_line, call_line;
	uint32_t parent, flags; /* flags: 1 = subprogram */
};

/*
 * The checksum: a stream of 32-byte blocks (the tail zero-padded) hashed
 * in four lanes of 64-bit words, then folded with the length. It finds a
 * file damaged or cut anywhere (the lookups check only what they read).
 */
struct hasher {
	uint64_t lane[4];
	uint64_t len;
	unsigned char carry[32];
	size_t n_carry;
};

#define MIX 0x9e3779b97f4a7c15ULL

static void hash_block(struct hasher *hs, const unsigned char *b)
{
	for (int i = 0; i < 4; i++) {
		uint64_t w;

		memcpy(&w, b + 8 * i, 8);
		hs->lane[i] = (hs->lane[i] ^ w) * MIX;
		hs->lane[i] ^= hs->lane[i] >> 29;
	}
}

static void hash_update(struct hasher *hs, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	hs->len += len;
	if (hs->n_carry) {
		size_t n = 32 - hs->n_carry < len ? 32 - hs->n_carry : len;

		memcpy(hs->carry + hs->n_carry, p, n);
		hs->n_carry += n;
		p += n;
		len -= n;
		if (hs->n_carry < 32)
			return;
		hash_block(hs, hs->carry);
		hs->n_carry = 0;
	}
	for (; len >= 32; p += 32, len -= 32)
		hash_block(hs, p);
	if (len) /* p may be NULL with len 0: memcpy's arguments are nonnull */
		memcpy(hs->carry, p, len);
	hs->n_carry = len;
}

static uint64_t hash_final(struct hasher *hs)
{
	uint64_t h = hs->len * MIX;

	if (hs->n_carry) {
		memset(hs->carry + hs->n_carry, 0, 32 - hs->n_carry);
		hash_block(hs, hs->carry);
	}
	for (int i = 0; i < 4; i++)
		h = (h ^ hs->lane[i]) * MIX + (uint64_t)i;
	return h ^ (h >> 31);
}

/* The checksum of fd's bytes from off to its end (len), read in chunks so
 * that they do not stay mapped. */
static bool sum_ok(int fd, uint64_t off, uint64_t len, uint64_t want)
{
	static __thread unsigned char buf[1 << 16];
	struct hasher hs = {{1, 2, 3, 4}, 0, {0}, 0};

	while (len) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		ssize_t got = pread(fd, buf, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)n)
			return false;
		hash_update(&hs, buf, n);
		off += n;
		len -= n;
	}
	return hash_final(&hs) == want;
}

int symcache_seal(unsigned char *buf, size_t len, struct symcache_key *key)
{
	struct hasher hs = {{1, 2, 3, 4}, 0, {0}, 0};
	struct hdr h;

	if (len < sizeof(h))
		return -1;
	hash_update(&hs, buf + sizeof(h), len - sizeof(h));
	memcpy(&h, buf, sizeof(h));
	h.sum = hash_final(&hs);
	memcpy(buf, &h, sizeof(h));
	key->build_id = buf + offsetof(struct hdr, build_id);
	key->build_id_len = h.build_id_len;
	key->size = h.size;
	key->mtime_sec = h.mtime_sec;
	key->mtime_nsec = h.mtime_nsec;
	return 0;
}

struct symcache {
	const unsigned char *map;
	size_t len;
	const struct hdr *h;
	const struct rec_interval *iv;
	const struct rec_node *nodes;
	const char *str;
	char name[200]; /* in the cache dir; "" when not from there */
};

static struct {
	pthread_once_t once;
	bool off; /* disabled, or no usable directory */
	int dirfd;
	uint64_t max_bytes;
} cfg = {.once = PTHREAD_ONCE_INIT, .dirfd = -1};

static bool disabled_by_call;

void symcache_disable(void)
{
	disabled_by_call = true;
}

/* A directory of ours, not a symlink, mode 0700; its fd or -1. */
static int open_own_dir(int at, const char *name, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void init(void)
{
	const char *env = getenv("PALLOC_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *max = getenv("PALLOC_CACHE_MAX");
	char base[4096];
	int bfd;

	cfg.off = true;
	cfg.max_bytes = (uint64_t)DEFAULT_MAX_MIB << 20;
	if (max && *max) {
		char *end;
		unsigned long long v = strtoull(max, &end, 10);

		if (!*end && v > 0 && v < (1ULL << 20))
			cfg.max_bytes = (uint64_t)v << 20;
	}
	if (env && strcmp(env, "0") == 0)
		return;
	if (xdg && xdg[0] == '/') {
		if ((size_t)snprintf(base, sizeof(base), "%s", xdg) >=
		    sizeof(base))
			return;
	} else {
		const char *home = getenv("HOME");

		if (!home || home[0] != '/' ||
		    (size_t)snprintf(base, sizeof(base), "%s/.cache", home) >=
			    sizeof(base))
			return;
	}
	/* the base directory itself: created private if missing */
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		return;
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return;
	cfg.dirfd = open_own_dir(bfd, "palloc", true);
	close(bfd);
	cfg.off = cfg.dirfd < 0;
}

bool symcache_enabled(void)
{
	if (disabled_by_call)
		return false;
	pthread_once(&cfg.once, init);
	return !cfg.off;
}

static void file_name(const struct symcache_key *k, char *out, size_t size)
{
	size_t i, n = 0;

	for (i = 0; i < k->build_id_len && n + 3 < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%02x",
				      k->build_id[i]);
	snprintf(out + n, size - n, "-%llu-%lld.%09lld.idx",
		 (unsigned long long)k->size, (long long)k->mtime_sec,
		 (long long)k->mtime_nsec);
}

static bool str_ok(const struct symcache *c, uint32_t off)
{
	return off == SYMCACHE_NONE || off < c->h->strings_size;
}

static const char *str_at(const struct symcache *c, uint32_t off)
{
	return off == SYMCACHE_NONE ? NULL : c->str + off;
}

/* Every debug file probed is as it was when the index was written. */
static bool probes_current(const struct symcache *c)
{
	const struct rec_probe *p =
		(const struct rec_probe *)(c->map + sizeof(struct hdr));

	for (uint32_t i = 0; i < c->h->n_probes; i++) {
		struct stat st;
		bool exists;

		if (p[i].path >= c->h->strings_size || p[i].exists > 1)
			return false;
		exists = stat(c->str + p[i].path, &st) == 0;
		if (exists != (p[i].exists == 1))
			return false;
		if (exists && ((uint64_t)st.st_size != p[i].size ||
			       st.st_mtim.tv_sec != p[i].mtime_sec ||
			       st.st_mtim.tv_nsec != p[i].mtime_nsec))
			return false;
	}
	return true;
}

/* The header and the section sizes against the file and the key. */
static bool layout_ok(struct symcache *c, const struct symcache_key *k)
{
	const struct hdr *h = (const struct hdr *)c->map;
	uint64_t off = sizeof(*h);

	if (c->len < sizeof(*h) || memcmp(h->magic, MAGIC, 8) != 0 ||
	    h->version != FORMAT_VERSION || h->flags > 1 ||
	    h->build_id_len < 1 || h->build_id_len > sizeof(h->build_id) ||
	    h->build_id_len != k->build_id_len ||
	    memcmp(h->build_id, k->build_id, k->build_id_len) != 0 ||
	    h->size != k->size || h->mtime_sec != k->mtime_sec ||
	    h->mtime_nsec != k->mtime_nsec || h->n_probes > MAX_PROBES ||
	    h->n_intervals > MAX_RECORDS || h->n_nodes > MAX_RECORDS ||
	    h->strings_size < 1 || h->strings_size > MAX_STRINGS)
		return false;
	off += (uint64_t)h->n_probes * sizeof(struct rec_probe);
	c->iv = (const struct rec_interval *)(c->map + off);
	off += h->n_intervals * sizeof(struct rec_interval);
	c->nodes = (const struct rec_node *)(c->map + off);
	off += h->n_nodes * sizeof(struct rec_node);
	c->str = (const char *)(c->map + off);
	off += h->strings_size;
	if (off != c->len || c->str[h->strings_size - 1] != '\0')
		return false;
	c->h = h;
	return true;
}

struct symcache *symcache_open_fd(int fd, const struct symcache_key *k,
				  bool *dwarf)
{
	struct symcache *c;
	struct stat st;
	void *m;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
	    (uint64_t)st.st_size < sizeof(struct hdr) ||
	    (uint64_t)st.st_size > MAX_FILE)
		return NULL;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		munmap(m, (size_t)st.st_size);
		return NULL;
	}
	c->map = m;
	c->len = (size_t)st.st_size;
	if (!layout_ok(c, k) || !probes_current(c) ||
	    !sum_ok(fd, sizeof(struct hdr), c->len - sizeof(struct hdr),
		    c->h->sum)) {
		symcache_close(c);
		return NULL;
	}
	*dwarf = c->h->flags & 1;
	return c;
}

struct symcache *symcache_open(const struct symcache_key *k, bool *dwarf)
{
	struct symcache *c;
	struct timespec now;
	struct stat st;
	char name[200];
	int fd;

	if (!symcache_enabled() || k->build_id_len < 1 || k->build_id_len > 64)
		return NULL;
	file_name(k, name, sizeof(name));
	fd = openat(cfg.dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	c = symcache_open_fd(fd, k, dwarf);
	if (!c) {
		/* refused or stale: written again on this run */
		unlinkat(cfg.dirfd, name, 0);
	} else {
		snprintf(c->name, sizeof(c->name), "%s", name);
		/* least recently used goes first: mark it used */
		if (fstat(fd, &st) == 0 &&
		    clock_gettime(CLOCK_REALTIME, &now) == 0 &&
		    st.st_mtim.tv_sec < now.tv_sec - TOUCH_EVERY)
			futimens(fd, NULL);
	}
	close(fd);
	return c;
}

int symcache_lookup(struct symcache *c, uint64_t addr, struct symcache_hit *h)
{
	const struct rec_interval *r;
	size_t lo = SEARCH_AFTER(c->iv, c->h->n_intervals, start, addr);

	h->sym = h->file = NULL;
	h->line = 0;
	h->node = SYMCACHE_NONE;
	/* the search's answer must be consistent around it */
	if (lo < c->h->n_intervals && c->iv[lo].start <= addr)
		return -1;
	if (lo == 0)
		return 0;
	r = &c->iv[lo - 1];
	if (r->start > addr || (lo >= 2 && c->iv[lo - 2].start >= r->start) ||
	    !str_ok(c, r->sym) || !str_ok(c, r->file) ||
	    (r->node != SYMCACHE_NONE && r->node >= c->h->n_nodes))
		return -1;
	h->sym = str_at(c, r->sym);
	h->file = str_at(c, r->file);
	h->line = r->line;
	h->node = r->node;
	return 0;
}

int symcache_node(struct symcache *c, uint32_t i, struct symcache_node *n)
{
	const struct rec_node *r;

	if (i >= c->h->n_nodes)
		return -1;
	r = &c->nodes[i];
	/* parents come first: no cycle */
	if (!str_ok(c, r->name) || !str_ok(c, r->linkage) ||
	    !str_ok(c, r->decl_file) || !str_ok(c, r->call_file) ||
	    r->flags > 1 || (r->parent != SYMCACHE_NONE && r->parent >= i))
		return -1;
	n->name = str_at(c, r->name);
	n->linkage = str_at(c, r->linkage);
	n->decl_file = str_at(c, r->decl_file);
	n->call_file = str_at(c, r->call_file);
	n->decl_line = r->decl_line;
	n->call_line = r->call_line;
	n->parent = r->parent;
	n->subprogram = r->flags & 1;
	return 0;
}

void symcache_refuse(struct symcache *c)
{
	if (c->name[0] && cfg.dirfd >= 0)
		unlinkat(cfg.dirfd, c->name, 0);
	c->name[0] = '\0';
}

void symcache_close(struct symcache *c)
{
	if (!c)
		return;
	munmap((void *)c->map, c->len);
	free(c);
}

/* Writing. */

struct symcache_writer {
	struct hdr h;
	struct rec_probe *probes;
	struct rec_interval *iv;
	struct rec_node *nodes;
	char *str;
	size_t n_iv, cap_iv, n_nodes, cap_nodes, str_len, str_cap;
	uint32_t *slots; /* string hash set: offset + 1, 0 empty */
	size_t n_slots, n_strings;
	bool failed;
};

static bool grow(void *pv, size_t *cap, size_t need, size_t elem)
{
	return grow_array(pv, cap, need, elem) == 0;
}

struct symcache_writer *symcache_writer_new(const struct symcache_key *k,
					    bool dwarf)
{
	struct symcache_writer *w;

	if (k->build_id_len < 1 || k->build_id_len > 64)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	memcpy(w->h.magic, MAGIC, 8);
	w->h.version = FORMAT_VERSION;
	w->h.flags = dwarf ? 1 : 0;
	w->h.build_id_len = (uint32_t)k->build_id_len;
	memcpy(w->h.build_id, k->build_id, k->build_id_len);
	w->h.size = k->size;
	w->h.mtime_sec = k->mtime_sec;
	w->h.mtime_nsec = k->mtime_nsec;
	w->probes = calloc(MAX_PROBES, sizeof(*w->probes));
	if (!w->probes) {
		free(w);
		return NULL;
	}
	return w;
}

static uint64_t hash_str(const char *s)
{
	return hash_mix(hash_fnv1a(HASH_FNV1A_INIT, s, strlen(s)));
}

static bool rehash(struct symcache_writer *w)
{
	size_t n = w->n_slots ? 2 * w->n_slots : 4096;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return false;
	for (size_t i = 0; i < w->n_slots; i++) {
		size_t j;

		if (!w->slots[i])
			continue;
		j = hash_str(w->str + w->slots[i] - 1) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = w->slots[i];
	}
	free(w->slots);
	w->slots = s;
	w->n_slots = n;
	return true;
}

uint32_t symcache_writer_string(struct symcache_writer *w, const char *s)
{
	size_t len, j;

	if (!s)
		return SYMCACHE_NONE;
	if (2 * (w->n_strings + 1) > w->n_slots && !rehash(w))
		goto fail;
	j = hash_str(s) & (w->n_slots - 1);
	while (w->slots[j]) {
		if (strcmp(w->str + w->slots[j] - 1, s) == 0)
			return w->slots[j] - 1;
		j = (j + 1) & (w->n_slots - 1);
	}
	len = strlen(s) + 1;
	if (w->str_len + len >= MAX_STRINGS - 1 ||
	    !grow(&w->str, &w->str_cap, w->str_len + len, 1))
		goto fail;
	memcpy(w->str + w->str_len, s, len);
	w->slots[j] = (uint32_t)w->str_len + 1;
	w->n_strings++;
	w->str_len += len;
	return w->slots[j] - 1;
fail:
	w->failed = true;
	return SYMCACHE_NONE - 1;
}

int symcache_writer_probe(struct symcache_writer *w, const char *path,
			  const struct stat *st)
{
	struct rec_probe *p;

	if (w->h.n_probes >= MAX_PROBES) {
		w->failed = true;
		return -1;
	}
	p = &w->probes[w->h.n_probes++];
	p->path = symcache_writer_string(w, path);
	p->exists = st != NULL;
	if (st) {
		p->size = (uint64_t)st->st_size;
		p->mtime_sec = st->st_mtim.tv_sec;
		p->mtime_nsec = st->st_mtim.tv_nsec;
	}
	return w->failed ? -1 : 0;
}

uint32_t symcache_writer_node(struct symcache_writer *w, uint32_t name,
			      uint32_t linkage, uint32_t decl_file,
			      uint32_t call_file, int decl_line, int call_line,
			      uint32_t parent, bool subprogram)
{
	struct rec_node *n;

	if (w->n_nodes >= MAX_RECORDS ||
	    !grow(&w->nodes, &w->cap_nodes, w->n_nodes + 1, sizeof(*n))) {
		w->failed = true;
		return SYMCACHE_NONE;
	}
	n = &w->nodes[w->n_nodes];
	*n = (struct rec_node){.name = name,
			       .linkage = linkage,
			       .decl_file = decl_file,
			       .call_file = call_file,
			       .decl_line = decl_line,
			       .call_line = call_line,
			       .parent = parent,
			       .flags = subprogram ? 1 : 0};
	return (uint32_t)w->n_nodes++;
}

int symcache_writer_interval(struct symcache_writer *w, uint64_t start,
			     uint32_t sym, uint32_t file, int line,
			     uint32_t node)
{
	struct rec_interval *r;

	if (w->n_iv) {
		r = &w->iv[w->n_iv - 1];
		if (start <= r->start) {
			w->failed = true;
			return -1;
		}
		/* the same answer goes on */
		if (r->sym == sym && r->file == file && r->line == line &&
		    r->node == node)
			return 0;
	}
	if (w->n_iv >= MAX_RECORDS ||
	    !grow(&w->iv, &w->cap_iv, w->n_iv + 1, sizeof(*r))) {
		w->failed = true;
		return -1;
	}
	r = &w->iv[w->n_iv++];
	r->start = start;
	r->sym = sym;
	r->file = file;
	r->line = line;
	r->node = node;
	return 0;
}

void symcache_writer_free(struct symcache_writer *w)
{
	if (!w)
		return;
	free(w->probes);
	free(w->iv);
	free(w->nodes);
	free(w->str);
	free(w->slots);
	free(w);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int symcache_writer_write_fd(struct symcache_writer *w, int fd)
{
	static const char nul;
	struct hasher hs = {{1, 2, 3, 4}, 0, {0}, 0};
	int ret = -1;

	if (w->failed)
		goto out;
	w->h.n_intervals = w->n_iv;
	w->h.n_nodes = w->n_nodes;
	w->h.strings_size = w->str_len + 1;
	hash_update(&hs, w->probes, w->h.n_probes * sizeof(*w->probes));
	hash_update(&hs, w->iv, w->n_iv * sizeof(*w->iv));
	hash_update(&hs, w->nodes, w->n_nodes * sizeof(*w->nodes));
	hash_update(&hs, w->str, w->str_len);
	hash_update(&hs, &nul, 1);
	w->h.sum = hash_final(&hs);
	if (write_all(fd, &w->h, sizeof(w->h)) < 0 ||
	    write_all(fd, w->probes, w->h.n_probes * sizeof(*w->probes)) < 0 ||
	    write_all(fd, w->iv, w->n_iv * sizeof(*w->iv)) < 0 ||
	    write_all(fd, w->nodes, w->n_nodes * sizeof(*w->nodes)) < 0 ||
	    write_all(fd, w->str, w->str_len) < 0 || write_all(fd, &nul, 1) < 0)
		goto out;
	ret = 0;
out:
	symcache_writer_free(w);
	return ret;
}

struct entry {
	char name[256];
	off_t size;
	time_t mtime;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/*
 * Keep the directory under its bound: remove the least recently used
 * indexes, and temporary files left by a run that died an hour ago.
 */
static void evict(void)
{
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	time_t now = time(NULL);
	int fd = dup(cfg.dirfd);
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (len >= sizeof(v->name) ||
		    fstatat(cfg.dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (strncmp(de->d_name, ".tmp-", 5) == 0) {
			if (st.st_mtim.tv_sec < now - 3600)
				unlinkat(cfg.dirfd, de->d_name, 0);
			continue;
		}
		if (len < 4 || strcmp(de->d_name + len - 4, ".idx") != 0 ||
		    !grow(&v, &cap, n + 1, sizeof(*v)))
			continue;
		memcpy(v[n].name, de->d_name, len + 1);
		v[n].size = st.st_size;
		v[n].mtime = st.st_mtim.tv_sec;
		total += (uint64_t)st.st_size;
		n++;
	}
	closedir(d);
	if (total > cfg.max_bytes) {
		qsort(v, n, sizeof(*v), entry_cmp);
		for (size_t i = 0; i < n && total > cfg.max_bytes; i++)
			if (unlinkat(cfg.dirfd, v[i].name, 0) == 0)
				total -= (uint64_t)v[i].size;
	}
	free(v);
}

int symcache_writer_commit(struct symcache_writer *w)
{
	static unsigned counter;
	struct symcache_key k;
	char name[200], tmp[64];
	struct timespec ts;
	int fd, ret;

	if (!symcache_enabled()) {
		symcache_writer_free(w);
		return -1;
	}
	k.build_id = w->h.build_id;
	k.build_id_len = w->h.build_id_len;
	k.size = w->h.size;
	k.mtime_sec = w->h.mtime_sec;
	k.mtime_nsec = w->h.mtime_nsec;
	file_name(&k, name, sizeof(name));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(tmp, sizeof(tmp), ".tmp-%ld-%u-%ld", (long)getpid(),
		 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED),
		 (long)ts.tv_nsec);
	fd = openat(cfg.dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		symcache_writer_free(w);
		return -1;
	}
	ret = symcache_writer_write_fd(w, fd);
	if (close(fd) < 0)
		ret = -1;
	if (ret < 0 || renameat(cfg.dirfd, tmp, cfg.dirfd, name) < 0) {
		unlinkat(cfg.dirfd, tmp, 0);
		return -1;
	}
	evict();
	return 0;
}
