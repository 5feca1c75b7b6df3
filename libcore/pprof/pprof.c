/* SPDX-License-Identifier: MIT */
/* The pprof profile model: dense ids, interned strings, allocator hooks. */
#include "pprof_int.h"
#include "hash.h"
#include "msg.h"

/* The one "" every unset string points to; it needs no storage. */
static const char empty_string[] = "";

#define CHUNK_SIZE ((size_t)64 * 1024)
#define CHUNK_HDR ((sizeof(struct pprof_chunk) + 7) & ~(size_t)7)

static void *default_alloc(void *ctx PALLOC_UNUSED, size_t size)
{
	return malloc(size);
}

static void default_free(void *ctx PALLOC_UNUSED, void *ptr)
{
	free(ptr);
}

const struct pprof_allocator pprof_int_default_allocator = {
	.alloc = default_alloc,
	.free = default_free,
};

void *pprof_int_alloc(const struct pprof_allocator *a, size_t n, size_t size)
{
	void *ptr;

	if (size && n > SIZE_MAX / size) {
		msg_set("cannot allocate %zu elements of %zu bytes: too large",
			n, size);
		return NULL;
	}
	ptr = a->alloc(a->ctx, n * size > 0 ? n * size : 1);
	if (!ptr)
		msg_set_errno(ENOMEM, "cannot allocate %zu bytes", n * size);
	return ptr;
}

void pprof_int_free(const struct pprof_allocator *a, void *ptr)
{
	if (ptr)
		a->free(a->ctx, ptr);
}

void *pprof_int_bump(struct pprof_profile *p, size_t n, size_t size)
{
	struct pprof_internal *in = p->internal;
	struct pprof_chunk *c;
	size_t bytes, csize;
	void *ret;

	if (size && n > (SIZE_MAX - CHUNK_SIZE) / size) {
		msg_set("cannot allocate %zu elements of %zu bytes: too large",
			n, size);
		return NULL;
	}
	bytes = (n * size + 7) & ~(size_t)7;
	if (bytes == 0)
		bytes = 8;
	if (bytes <= in->bump_left) {
		ret = in->bump;
		in->bump += bytes;
		in->bump_left -= bytes;
		return ret;
	}
	/*
	 * Big pieces get a chunk of their own, linked behind the current one
	 * so that the rest of the current chunk stays usable.
	 */
	csize = bytes > CHUNK_SIZE / 4 ? bytes : CHUNK_SIZE - CHUNK_HDR;
	c = pprof_int_alloc(&in->a, 1, CHUNK_HDR + csize);
	if (!c)
		return NULL;
	c->size = csize;
	ret = (char *)c + CHUNK_HDR;
	if (csize == bytes && in->chunks) {
		c->next = in->chunks->next;
		in->chunks->next = c;
		return ret;
	}
	c->next = in->chunks;
	in->chunks = c;
	in->bump = (char *)ret + bytes;
	in->bump_left = csize - bytes;
	return ret;
}

int pprof_int_grow(struct pprof_profile *p, void **arr, size_t *cap, size_t n,
		   size_t size)
{
	size_t ncap;
	void *narr;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap <= n)
		ncap = n + 1;
	narr = pprof_int_alloc(&p->internal->a, ncap, size);
	if (!narr)
		return -1;
	if (n)
		memcpy(narr, *arr, n * size);
	pprof_int_free(&p->internal->a, *arr);
	*arr = narr;
	*cap = ncap;
	return 0;
}

/*
 * Hash tables: open addressing with linear probing over slots allocated
 * through the profile's hooks, at most half full. eq() says whether the
 * value in a slot matches the key being looked up.
 */
typedef bool (*table_eq_fn)(const struct pprof_profile *p, uint64_t val,
			    const void *key);

static struct pprof_slot *table_find(const struct pprof_profile *p,
				     const struct pprof_table *t, uint64_t hash,
				     table_eq_fn eq, const void *key)
{
	size_t mask = t->cap - 1;
	size_t i = hash & mask;

	for (;;) {
		struct pprof_slot *s = &t->slots[i];

		if (!s->val || (s->hash == hash && eq(p, s->val, key)))
			return s;
		i = (i + 1) & mask;
	}
}

static int table_reserve(struct pprof_profile *p, struct pprof_table *t)
{
	struct pprof_slot *old = t->slots, *ns;
	size_t ncap, i, mask;

	if (t->cap && (t->count + 1) * 2 <= t->cap)
		return 0;
	ncap = t->cap ? t->cap * 2 : 64;
	ns = pprof_int_alloc(&p->internal->a, ncap, sizeof(*ns));
	if (!ns)
		return -1;
	memset(ns, 0, ncap * sizeof(*ns));
	mask = ncap - 1;
	for (i = 0; i < t->cap; i++) {
		size_t j;

		if (!old[i].val)
			continue;
		j = old[i].hash & mask;
		while (ns[j].val)
			j = (j + 1) & mask;
		ns[j] = old[i];
	}
	pprof_int_free(&p->internal->a, old);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const struct pprof_profile *p PALLOC_UNUSED, uint64_t val,
		   const void *key)
{
	const struct str_key *k = key;
	const char *s = (const char *)(uintptr_t)val;

	return strncmp(s, k->s, k->len) == 0 && s[k->len] == '\0';
}

/* FNV-1a, then mixed: strings are short and this is not on a hot path. */
static uint64_t str_hash(const char *s, size_t len)
{
	return hash_mix(hash_fnv1a(HASH_FNV1A_INIT, s, len)) | 1;
}

const char *pprof_int_intern_len(struct pprof_profile *p, const char *s,
				 size_t len)
{
	struct pprof_internal *in = p->internal;
	struct str_key key = {s, len};
	struct pprof_slot *slot;
	uint64_t hash;
	char *copy;

	if (len == 0)
		return empty_string;
	if (table_reserve(p, &in->strs) < 0)
		return NULL;
	hash = str_hash(s, len);
	slot = table_find(p, &in->strs, hash, str_eq, &key);
	if (slot->val)
		return (const char *)(uintptr_t)slot->val;
	copy = pprof_int_bump(p, len + 1, 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	slot->hash = hash;
	slot->val = (uintptr_t)copy;
	in->strs.count++;
	return copy;
}

const char *pprof_intern(struct pprof_profile *p, const char *s)
{
	if (!s)
		return empty_string;
	return pprof_int_intern_len(p, s, strlen(s));
}

struct pprof_profile *pprof_new(const struct pprof_allocator *alloc)
{
	struct pprof_profile *p;
	struct pprof_internal *in;

	if (!alloc)
		alloc = &pprof_int_default_allocator;
	p = pprof_int_alloc(alloc, 1, sizeof(*p));
	if (!p)
		return NULL;
	in = pprof_int_alloc(alloc, 1, sizeof(*in));
	if (!in) {
		pprof_int_free(alloc, p);
		return NULL;
	}
	memset(p, 0, sizeof(*p));
	memset(in, 0, sizeof(*in));
	in->a = *alloc;
	p->internal = in;
	p->drop_frames = empty_string;
	p->keep_frames = empty_string;
	p->period_type.type = empty_string;
	p->period_type.unit = empty_string;
	p->default_sample_type = empty_string;
	return p;
}

void pprof_free(struct pprof_profile *p)
{
	struct pprof_internal *in;
	struct pprof_allocator a;
	struct pprof_chunk *c, *next;

	if (!p)
		return;
	in = p->internal;
	a = in->a;
	for (c = in->chunks; c; c = next) {
		next = c->next;
		pprof_int_free(&a, c);
	}
	pprof_int_free(&a, in->strs.slots);
	pprof_int_free(&a, in->funcs.slots);
	pprof_int_free(&a, in->locs.slots);
	pprof_int_free(&a, p->sample_types);
	pprof_int_free(&a, p->samples);
	pprof_int_free(&a, p->mappings);
	pprof_int_free(&a, p->locations);
	pprof_int_free(&a, p->functions);
	pprof_int_free(&a, p->comments);
	pprof_int_free(&a, in);
	pprof_int_free(&a, p);
}

int pprof_set_sample_types(struct pprof_profile *p,
			   const struct pprof_value_type *types, size_t n)
{
	struct pprof_internal *in = p->internal;
	struct pprof_value_type *nt;
	size_t i;

	if (p->n_samples)
		return msg_set("cannot set the sample types of a profile: "
			       "it already has samples");
	nt = pprof_int_alloc(&in->a, n, sizeof(*nt));
	if (!nt)
		return -1;
	for (i = 0; i < n; i++) {
		nt[i].type = pprof_intern(p, types[i].type);
		nt[i].unit = pprof_intern(p, types[i].unit);
		if (!nt[i].type || !nt[i].unit) {
			pprof_int_free(&in->a, nt);
			return -1;
		}
	}
	pprof_int_free(&in->a, p->sample_types);
	p->sample_types = nt;
	p->n_sample_types = n;
	in->cap_sample_types = n;
	return 0;
}

int pprof_set_period(struct pprof_profile *p, const char *type,
		     const char *unit, int64_t period)
{
	const char *t = pprof_intern(p, type), *u = pprof_intern(p, unit);

	if (!t || !u)
		return -1;
	p->period_type.type = t;
	p->period_type.unit = u;
	p->period = period;
	return 0;
}

int pprof_set_default_sample_type(struct pprof_profile *p, const char *type)
{
	const char *t = pprof_intern(p, type);

	if (!t)
		return -1;
	p->default_sample_type = t;
	return 0;
}

int pprof_add_comment(struct pprof_profile *p, const char *comment)
{
	const char *c = pprof_intern(p, comment);

	if (!c)
		return -1;
	if (pprof_int_grow(p, (void **)&p->comments, &p->internal->cap_comments,
			   p->n_comments, sizeof(*p->comments)) < 0)
		return -1;
	p->comments[p->n_comments++] = c;
	return 0;
}

uint64_t pprof_add_mapping(struct pprof_profile *p,
			   const struct pprof_mapping *m)
{
	struct pprof_mapping nm = *m;

	nm.file = pprof_intern(p, m->file);
	nm.build_id = pprof_intern(p, m->build_id);
	if (!nm.file || !nm.build_id)
		return 0;
	if (pprof_int_grow(p, (void **)&p->mappings, &p->internal->cap_mappings,
			   p->n_mappings, sizeof(*p->mappings)) < 0)
		return 0;
	nm.id = p->n_mappings + 1;
	p->mappings[p->n_mappings++] = nm;
	return nm.id;
}

uint64_t pprof_region_mapping(struct pprof_profile *p, uint64_t *id,
			      uint64_t start, uint64_t limit, uint64_t offset,
			      const char *file)
{
	if (!*id) {
		struct pprof_mapping pm = {.start = start,
					   .limit = limit,
					   .offset = offset,
					   .file = file,
					   .build_id = ""};

		*id = pprof_add_mapping(p, &pm);
	}
	return *id;
}

struct func_key {
	const char *name, *system_name, *file;
	int64_t start_line;
};

static bool func_eq(const struct pprof_profile *p, uint64_t val,
		    const void *key)
{
	const struct func_key *k = key;
	const struct pprof_function *f = &p->functions[val - 1];

	return f->name == k->name && f->system_name == k->system_name &&
	       f->file == k->file && f->start_line == k->start_line;
}

static uint64_t func_hash(const struct func_key *k)
{
	uint64_t h = hash_mix((uintptr_t)k->name);

	h = hash_mix(h ^ (uintptr_t)k->system_name);
	h = hash_mix(h ^ (uintptr_t)k->file);
	return hash_mix(h ^ (uint64_t)k->start_line) | 1;
}

/* Intern the strings of a function key; -1 on ENOMEM. */
static int func_key_init(struct pprof_profile *p, struct func_key *k,
			 const char *name, const char *system_name,
			 const char *file, int64_t start_line)
{
	k->name = pprof_intern(p, name);
	k->system_name = pprof_intern(p, system_name);
	k->file = pprof_intern(p, file);
	k->start_line = start_line;
	return k->name && k->system_name && k->file ? 0 : -1;
}

static uint64_t func_append(struct pprof_profile *p, const struct func_key *k,
			    struct pprof_slot *slot, uint64_t hash)
{
	struct pprof_function *f;

	if (pprof_int_grow(p, (void **)&p->functions,
			   &p->internal->cap_functions, p->n_functions,
			   sizeof(*p->functions)) < 0)
		return 0;
	f = &p->functions[p->n_functions++];
	f->id = p->n_functions;
	f->name = k->name;
	f->system_name = k->system_name;
	f->file = k->file;
	f->start_line = k->start_line;
	if (slot && !slot->val) {
		slot->hash = hash;
		slot->val = f->id;
		p->internal->funcs.count++;
	}
	return f->id;
}

/* The function with this key: found (when dedup) or appended. */
static uint64_t func_get(struct pprof_profile *p, const char *name,
			 const char *system_name, const char *file,
			 int64_t start_line, bool dedup)
{
	struct pprof_slot *slot;
	struct func_key k;
	uint64_t hash;

	if (func_key_init(p, &k, name, system_name, file, start_line) < 0)
		return 0;
	if (table_reserve(p, &p->internal->funcs) < 0)
		return 0;
	hash = func_hash(&k);
	slot = table_find(p, &p->internal->funcs, hash, func_eq, &k);
	if (dedup && slot->val)
		return slot->val;
	return func_append(p, &k, slot, hash);
}

uint64_t pprof_add_function(struct pprof_profile *p, const char *name,
			    const char *system_name, const char *file,
			    int64_t start_line)
{
	return func_get(p, name, system_name, file, start_line, true);
}

uint64_t pprof_int_append_function(struct pprof_profile *p, const char *name,
				   const char *system_name, const char *file,
				   int64_t start_line)
{
	return func_get(p, name, system_name, file, start_line, false);
}

struct loc_key {
	uint64_t mapping_id, address;
};

static bool loc_eq(const struct pprof_profile *p, uint64_t val, const void *key)
{
	const struct loc_key *k = key;
	const struct pprof_location *l = &p->locations[val - 1];

	return l->mapping_id == k->mapping_id && l->address == k->address;
}

static uint64_t loc_hash(const struct loc_key *k)
{
	return hash_mix(hash_mix(k->mapping_id) ^ k->address) | 1;
}

static int check_lines(const struct pprof_profile *p,
		       const struct pprof_line *lines, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lines[i].function_id == 0 ||
		    lines[i].function_id > p->n_functions)
			return msg_set(
				"cannot add a location: line %zu "
				"refers to missing function %llu",
				i, (unsigned long long)lines[i].function_id);
	return 0;
}

static uint64_t loc_append(struct pprof_profile *p, uint64_t mapping_id,
			   uint64_t address, const struct pprof_line *lines,
			   size_t n_lines, bool is_folded,
			   struct pprof_slot *slot, uint64_t hash)
{
	struct pprof_location *l;
	struct pprof_line *copy = NULL;

	if (n_lines) {
		copy = pprof_int_bump(p, n_lines, sizeof(*copy));
		if (!copy)
			return 0;
		memcpy(copy, lines, n_lines * sizeof(*copy));
	}
	if (pprof_int_grow(p, (void **)&p->locations,
			   &p->internal->cap_locations, p->n_locations,
			   sizeof(*p->locations)) < 0)
		return 0;
	l = &p->locations[p->n_locations++];
	l->id = p->n_locations;
	l->mapping_id = mapping_id;
	l->address = address;
	l->n_lines = n_lines;
	l->lines = copy;
	l->is_folded = is_folded;
	if (slot && !slot->val) {
		slot->hash = hash;
		slot->val = l->id;
		p->internal->locs.count++;
	}
	return l->id;
}

/* Common checks and the dedup slot of a location; -1 on error. */
static int loc_prepare(struct pprof_profile *p, uint64_t mapping_id,
		       uint64_t address, const struct pprof_line *lines,
		       size_t n_lines, struct pprof_slot **slot, uint64_t *hash)
{
	struct loc_key k = {mapping_id, address};

	if (mapping_id > p->n_mappings)
		return msg_set("cannot add a location: missing mapping %llu",
			       (unsigned long long)mapping_id);
	if (check_lines(p, lines, n_lines) < 0)
		return -1;
	*slot = NULL;
	if (n_lines || !address)
		return 0;
	if (table_reserve(p, &p->internal->locs) < 0)
		return -1;
	*hash = loc_hash(&k);
	*slot = table_find(p, &p->internal->locs, *hash, loc_eq, &k);
	return 0;
}

uint64_t pprof_add_location(struct pprof_profile *p, uint64_t mapping_id,
			    uint64_t address, const struct pprof_line *lines,
			    size_t n_lines)
{
	struct pprof_slot *slot;
	uint64_t hash = 0;

	if (loc_prepare(p, mapping_id, address, lines, n_lines, &slot, &hash) <
	    0)
		return 0;
	if (slot && slot->val)
		return slot->val;
	return loc_append(p, mapping_id, address, lines, n_lines, false, slot,
			  hash);
}

uint64_t pprof_int_append_location(struct pprof_profile *p, uint64_t mapping_id,
				   uint64_t address,
				   const struct pprof_line *lines,
				   size_t n_lines, bool is_folded)
{
	struct pprof_slot *slot;
	uint64_t hash = 0;

	if (loc_prepare(p, mapping_id, address, lines, n_lines, &slot, &hash) <
	    0)
		return 0;
	return loc_append(p, mapping_id, address, lines, n_lines, is_folded,
			  slot, hash);
}

int pprof_set_location_lines(struct pprof_profile *p, uint64_t id,
			     const struct pprof_line *lines, size_t n_lines)
{
	struct pprof_line *copy = NULL;
	struct pprof_location *l;

	if (id == 0 || id > p->n_locations)
		return msg_set("cannot set the lines of location %llu: "
			       "no such location",
			       (unsigned long long)id);
	if (check_lines(p, lines, n_lines) < 0)
		return -1;
	if (n_lines) {
		copy = pprof_int_bump(p, n_lines, sizeof(*copy));
		if (!copy)
			return -1;
		memcpy(copy, lines, n_lines * sizeof(*copy));
	}
	/* The old lines stay in the bump storage until pprof_free(). */
	l = &p->locations[id - 1];
	l->lines = copy;
	l->n_lines = n_lines;
	return 0;
}

int pprof_add_sample(struct pprof_profile *p, const uint64_t *location_ids,
		     size_t n, const int64_t *values,
		     const struct pprof_label *labels, size_t n_labels)
{
	struct pprof_sample s = {0};
	size_t i;

	for (i = 0; i < n; i++)
		if (location_ids[i] == 0 || location_ids[i] > p->n_locations)
			return msg_set("cannot add a sample: frame %zu refers "
				       "to missing location %llu",
				       i, (unsigned long long)location_ids[i]);
	s.n_locations = n;
	s.location_ids = pprof_int_bump(p, n, sizeof(*s.location_ids));
	s.values = pprof_int_bump(p, p->n_sample_types, sizeof(*s.values));
	if (!s.location_ids || !s.values)
		return -1;
	if (n)
		memcpy(s.location_ids, location_ids, n * sizeof(*location_ids));
	if (p->n_sample_types)
		memcpy(s.values, values, p->n_sample_types * sizeof(*values));
	if (n_labels) {
		s.labels = pprof_int_bump(p, n_labels, sizeof(*s.labels));
		if (!s.labels)
			return -1;
		for (i = 0; i < n_labels; i++) {
			struct pprof_label *l = &s.labels[i];

			l->key = pprof_intern(p, labels[i].key);
			l->str = pprof_intern(p, labels[i].str);
			l->num = labels[i].num;
			l->num_unit = pprof_intern(p, labels[i].num_unit);
			if (!l->key || !l->str || !l->num_unit)
				return -1;
		}
		s.n_labels = n_labels;
	}
	if (pprof_int_grow(p, (void **)&p->samples, &p->internal->cap_samples,
			   p->n_samples, sizeof(*p->samples)) < 0)
		return -1;
	p->samples[p->n_samples++] = s;
	return 0;
}

int pprof_sample_type_index(const struct pprof_profile *p, const char *type)
{
	size_t i;

	for (i = 0; i < p->n_sample_types; i++)
		if (strcmp(p->sample_types[i].type, type) == 0)
			return (int)i;
	return -1;
}
