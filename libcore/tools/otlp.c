/* SPDX-License-Identifier: MIT */
/* OTLP profiles request encoder: one window of one process, by hand. */
#include "common.h"
#include "hash.h"
#include "msg.h"
#include "otlp.h"
#include "pbwire.h"

/*
 * The request is written with pprof/pbwire.h, the agent's protobuf
 * writer, in the proto3 wire form of the subset of opentelemetry-proto in
 * proto/opentelemetry/ (field numbers as upstream; proto3's zero scalars
 * left out). The shared ProfilesDictionary is built first: each of its
 * tables holds its items as their encoded bytes, one copy each (items are
 * equal when their bytes are: the indices inside them are the
 * dictionary's own, so equality is recursive, as the schema defines it),
 * item 0 the zero value (no bytes). Then the Profiles are written around
 * it, counting their size first (pbwire's two passes).
 */

/* Field numbers of the messages written (proto/opentelemetry/...). */
enum {
	REQ_RESOURCE_PROFILES = 1, /* ExportProfilesServiceRequest */
	REQ_DICTIONARY = 2,
	RP_RESOURCE = 1, /* ResourceProfiles */
	RP_SCOPE_PROFILES = 2,
	RES_ATTRIBUTES = 1, /* Resource */
	KV_KEY = 1,	    /* KeyValue */
	KV_VALUE = 2,
	ANY_STRING = 1, /* AnyValue */
	ANY_INT = 3,
	SCOPE_NAME = 1, /* InstrumentationScope */
	SCOPE_VERSION = 2,
	SP_SCOPE = 1, /* ScopeProfiles */
	SP_PROFILES = 2,
	PROF_SAMPLE_TYPE = 1, /* Profile */
	PROF_SAMPLES = 2,
	PROF_TIME_UNIX_NANO = 3,
	PROF_DURATION_NANO = 4,
	PROF_PERIOD_TYPE = 5,
	PROF_PERIOD = 6,
	VT_TYPE = 1, /* ValueType */
	VT_UNIT = 2,
	SAMPLE_STACK = 1, /* Sample */
	SAMPLE_ATTRS = 2,
	SAMPLE_VALUES = 4,
	DICT_MAPPING = 1, /* ProfilesDictionary */
	DICT_LOCATION = 2,
	DICT_FUNCTION = 3,
	DICT_LINK = 4,
	DICT_STRING = 5,
	DICT_ATTRIBUTE = 6,
	DICT_STACK = 7,
	MAP_START = 1, /* Mapping */
	MAP_LIMIT = 2,
	MAP_OFFSET = 3,
	MAP_FILENAME = 4,
	MAP_ATTRS = 5,
	STACK_LOCATIONS = 1, /* Stack */
	LOC_MAPPING = 1,     /* Location */
	LOC_ADDRESS = 2,
	LOC_LINES = 3,
	LINE_FUNCTION = 1, /* Line */
	LINE_LINE = 2,
	FN_NAME = 1, /* Function */
	FN_SYSTEM_NAME = 2,
	FN_FILENAME = 3,
	FN_START_LINE = 4,
	KVU_KEY = 1, /* KeyValueAndUnit */
	KVU_VALUE = 2,
	KVU_UNIT = 3,
	LINK_TRACE_ID = 1, /* Link */
	LINK_SPAN_ID = 2,
};

/* The dictionary's tables, in the order of their fields. */
enum {
	T_MAPPING,
	T_LOCATION,
	T_FUNCTION,
	T_STRING,
	T_ATTRIBUTE,
	T_STACK,
	N_TABLES,
};

struct item {
	unsigned char *data; /* malloc'd; NULL when len is 0 */
	size_t len;
	uint64_t hash;
};

/* One table: items in index order, and an open-addressing index of them
 * by content (slot: item index + 1, 0 empty). */
struct table {
	struct item *items;
	size_t n, cap;
	uint32_t *slots;
	size_t n_slots; /* a power of two */
};

/* A profile's mappings, functions, locations and samples as dictionary
 * indices (uint64_t: what pbw_packed() takes). */
struct indexed {
	uint64_t *mapping, *function, *location; /* per pprof id - 1 */
	uint64_t *stack;			 /* per sample */
	uint64_t *attrs;			 /* all samples' labels */
	size_t *attr_off;			 /* per sample, + 1 */
};

/* One of the four Profiles: which profile, which of its values. */
struct part {
	const struct pprof_profile *p;
	const struct indexed *ix;
	size_t value;  /* index in p's sample types */
	uint64_t type; /* sample_type, as string indices */
	uint64_t unit;
	uint64_t period_type, period_unit;
	uint64_t time_ns;  /* time_unix_nano */
	uint64_t duration; /* duration_nano */
};

struct enc {
	struct table t[N_TABLES];
	unsigned char *scratch; /* one item being encoded */
	size_t scratch_cap;
	uint64_t *ids; /* one stack's location indices */
	size_t ids_cap;
	bool failed; /* msg_set() done */
	const struct otlp_resource *res;
	struct indexed ix[2];
	struct part parts[4];
	size_t n_parts;
};

/* What the emitters get as obj: every index inside is computed before,
 * so that emitting interns nothing (item_idx()'s scratch is in use). */
struct map_src {
	const struct pprof_mapping *m;
	uint64_t file, attr;
};

struct fn_src {
	uint64_t name, system_name, file;
	int64_t start_line;
};

struct loc_src {
	const struct pprof_location *l;
	uint64_t mapping;
	const uint64_t *fn; /* function index per pprof function id - 1 */
};

struct line_src {
	uint64_t fn;
	int64_t line;
};

struct ids_src {
	const uint64_t *v;
	size_t n;
};

struct kv_src {
	uint64_t key, unit;  /* string indices (KeyValueAndUnit) */
	const char *key_str; /* KeyValue's key */
	const char *str;     /* NULL: num */
	int64_t num;
};

struct sample_src {
	const struct part *pt;
	size_t i; /* sample index */
};

static void fail_nomem(struct enc *e)
{
	if (!e->failed)
		msg_set_errno(ENOMEM, "cannot encode OTLP profiles");
	e->failed = true;
}

static int table_grow_slots(struct table *t)
{
	size_t cap = t->n_slots ? t->n_slots * 2 : 64, i, k;
	uint32_t *slots;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -1;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 1; i < t->n; i++) {
		k = hash_mix(t->items[i].hash) & (cap - 1);
		while (slots[k])
			k = (k + 1) & (cap - 1);
		slots[k] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->n_slots = cap;
	return 0;
}

/*
 * The index of the len bytes at data in t, copied in if new; 0 for no
 * bytes (the zero value, item 0). 0 with e->failed set on ENOMEM or
 * when t would pass INT32_MAX entries (indices are int32 on the wire).
 */
static uint64_t intern(struct enc *e, struct table *t, const void *data,
		       size_t len)
{
	struct item *it;
	uint64_t h;
	size_t k;

	if (e->failed || !len)
		return 0;
	h = hash_fnv1a(HASH_FNV1A_INIT, data, len);
	if (t->n + 1 > t->n_slots / 2 && table_grow_slots(t) < 0) {
		fail_nomem(e);
		return 0;
	}
	k = hash_mix(h) & (t->n_slots - 1);
	for (; t->slots[k]; k = (k + 1) & (t->n_slots - 1)) {
		it = &t->items[t->slots[k] - 1];
		if (it->hash == h && it->len == len &&
		    !memcmp(it->data, data, len))
			return t->slots[k] - 1;
	}
	if (t->n >= (size_t)INT32_MAX) {
		msg_set("cannot encode OTLP profiles: a dictionary table "
			"would have more than %d entries",
			INT32_MAX);
		e->failed = true;
		return 0;
	}
	if (t->n == t->cap) {
		struct item *items =
			reallocarray(t->items, t->cap * 2, sizeof(*items));

		if (!items) {
			fail_nomem(e);
			return 0;
		}
		t->items = items;
		t->cap *= 2;
	}
	it = &t->items[t->n];
	it->data = malloc(len);
	if (!it->data) {
		fail_nomem(e);
		return 0;
	}
	memcpy(it->data, data, len);
	it->len = len;
	it->hash = h;
	t->slots[k] = (uint32_t)(t->n + 1);
	return t->n++;
}

static int table_init(struct table *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 64;
	t->items = calloc(t->cap, sizeof(*t->items));
	if (!t->items)
		return -1;
	t->n = 1; /* the zero value: no bytes, never in the index */
	return table_grow_slots(t);
}

static void table_fini(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n && t->items; i++)
		free(t->items[i].data);
	free(t->items);
	free(t->slots);
}

/* A string's index in string_table; 0 for NULL and "". */
static uint64_t str_idx(struct enc *e, const char *s)
{
	return s ? intern(e, &e->t[T_STRING], s, strlen(s)) : 0;
}

/* Encode one item with emit into e's scratch, then intern it in t. */
static uint64_t item_idx(struct enc *e, struct table *t, pbw_emit_fn *emit,
			 const void *obj)
{
	struct pbw_writer w = {.ctx = e};

	if (e->failed)
		return 0;
	emit(&w, obj);
	if (w.n > e->scratch_cap) {
		unsigned char *b = realloc(e->scratch, w.n);

		if (!b) {
			fail_nomem(e);
			return 0;
		}
		e->scratch = b;
		e->scratch_cap = w.n;
	}
	w = (struct pbw_writer){
		.out = e->scratch, .cap = e->scratch_cap, .ctx = e};
	emit(&w, obj);
	if (w.failed) {
		msg_set("cannot encode OTLP profiles: internal error");
		e->failed = true;
		return 0;
	}
	return intern(e, t, e->scratch, w.n);
}

static void emit_any(struct pbw_writer *w, const void *obj)
{
	const struct kv_src *a = obj;

	if (a->str)
		pbw_bytes(w, ANY_STRING, a->str, strlen(a->str));
	else
		pbw_scalar(w, ANY_INT, (uint64_t)a->num);
}

/* KeyValueAndUnit (the attribute_table's) */
static void emit_kvu(struct pbw_writer *w, const void *obj)
{
	const struct kv_src *a = obj;

	pbw_scalar(w, KVU_KEY, a->key);
	pbw_msg(w, KVU_VALUE, emit_any, a);
	pbw_scalar(w, KVU_UNIT, a->unit);
}

/* KeyValue (the Resource's) */
static void emit_kv(struct pbw_writer *w, const void *obj)
{
	const struct kv_src *a = obj;

	pbw_bytes(w, KV_KEY, a->key_str, strlen(a->key_str));
	pbw_msg(w, KV_VALUE, emit_any, a);
}

static void emit_mapping(struct pbw_writer *w, const void *obj)
{
	const struct map_src *s = obj;

	pbw_scalar(w, MAP_START, s->m->start);
	pbw_scalar(w, MAP_LIMIT, s->m->limit);
	pbw_scalar(w, MAP_OFFSET, s->m->offset);
	pbw_scalar(w, MAP_FILENAME, s->file);
	if (s->attr)
		pbw_packed(w, MAP_ATTRS, &s->attr, 1);
}

static void emit_function(struct pbw_writer *w, const void *obj)
{
	const struct fn_src *f = obj;

	pbw_scalar(w, FN_NAME, f->name);
	pbw_scalar(w, FN_SYSTEM_NAME, f->system_name);
	pbw_scalar(w, FN_FILENAME, f->file);
	pbw_scalar(w, FN_START_LINE, (uint64_t)f->start_line);
}

static void emit_line(struct pbw_writer *w, const void *obj)
{
	const struct line_src *l = obj;

	pbw_scalar(w, LINE_FUNCTION, l->fn);
	pbw_scalar(w, LINE_LINE, (uint64_t)l->line);
}

static void emit_location(struct pbw_writer *w, const void *obj)
{
	const struct loc_src *s = obj;
	size_t i;

	pbw_scalar(w, LOC_MAPPING, s->mapping);
	pbw_scalar(w, LOC_ADDRESS, s->l->address);
	for (i = 0; i < s->l->n_lines; i++) {
		const struct pprof_line *pl = &s->l->lines[i];
		struct line_src ls = {
			.fn = pl->function_id ? s->fn[pl->function_id - 1] : 0,
			.line = pl->line,
		};

		pbw_msg(w, LOC_LINES, emit_line, &ls);
	}
}

static void emit_stack(struct pbw_writer *w, const void *obj)
{
	const struct ids_src *s = obj;

	pbw_packed(w, STACK_LOCATIONS, s->v, s->n);
}

/* A label of a sample as an attribute: string, or number with its unit. */
static uint64_t label_idx(struct enc *e, const struct pprof_label *l)
{
	struct kv_src a = {.key = str_idx(e, l->key)};

	if (l->str && *l->str) {
		a.str = l->str;
	} else {
		a.num = l->num;
		a.unit = str_idx(e, l->num_unit);
	}
	return item_idx(e, &e->t[T_ATTRIBUTE], emit_kvu, &a);
}

/* Put p's mappings, functions, locations, stacks and labels into the
 * dictionary, their indices into ix. */
static void index_profile(struct enc *e, const struct pprof_profile *p,
			  struct indexed *ix)
{
	size_t i, j, n_attrs = 0;

	for (i = 0; i < p->n_samples; i++)
		n_attrs += p->samples[i].n_labels;
	ix->mapping = calloc(p->n_mappings + 1, sizeof(uint64_t));
	ix->function = calloc(p->n_functions + 1, sizeof(uint64_t));
	ix->location = calloc(p->n_locations + 1, sizeof(uint64_t));
	ix->stack = calloc(p->n_samples + 1, sizeof(uint64_t));
	ix->attrs = calloc(n_attrs + 1, sizeof(uint64_t));
	ix->attr_off = calloc(p->n_samples + 1, sizeof(size_t));
	if (!ix->mapping || !ix->function || !ix->location || !ix->stack ||
	    !ix->attrs || !ix->attr_off) {
		fail_nomem(e);
		return;
	}
	for (i = 0; i < p->n_mappings && !e->failed; i++) {
		const struct pprof_mapping *m = &p->mappings[i];
		struct map_src s = {.m = m, .file = str_idx(e, m->file)};

		if (m->build_id && *m->build_id) {
			/* The semantic conventions' name of a GNU build id. */
			struct kv_src a = {
				.key = str_idx(
					e, "process.executable.build_id.gnu"),
				.str = m->build_id,
			};

			s.attr = item_idx(e, &e->t[T_ATTRIBUTE], emit_kvu, &a);
		}
		ix->mapping[i] =
			item_idx(e, &e->t[T_MAPPING], emit_mapping, &s);
	}
	for (i = 0; i < p->n_functions && !e->failed; i++) {
		const struct pprof_function *f = &p->functions[i];
		struct fn_src s = {
			.name = str_idx(e, f->name),
			.system_name = str_idx(e, f->system_name),
			.file = str_idx(e, f->file),
			.start_line = f->start_line,
		};

		ix->function[i] =
			item_idx(e, &e->t[T_FUNCTION], emit_function, &s);
	}
	for (i = 0; i < p->n_locations && !e->failed; i++) {
		const struct pprof_location *l = &p->locations[i];
		struct loc_src s = {
			.l = l,
			.mapping = l->mapping_id
					   ? ix->mapping[l->mapping_id - 1]
					   : 0,
			.fn = ix->function,
		};

		ix->location[i] =
			item_idx(e, &e->t[T_LOCATION], emit_location, &s);
	}
	for (i = 0; i < p->n_samples && !e->failed; i++) {
		const struct pprof_sample *smp = &p->samples[i];
		struct ids_src s = {.v = e->ids, .n = smp->n_locations};

		if (smp->n_locations > e->ids_cap) {
			uint64_t *ids = reallocarray(e->ids, smp->n_locations,
						     sizeof(*ids));

			if (!ids) {
				fail_nomem(e);
				return;
			}
			e->ids = ids;
			e->ids_cap = smp->n_locations;
			s.v = ids;
		}
		for (j = 0; j < smp->n_locations; j++)
			e->ids[j] = ix->location[smp->location_ids[j] - 1];
		ix->stack[i] = item_idx(e, &e->t[T_STACK], emit_stack, &s);
		ix->attr_off[i + 1] = ix->attr_off[i];
		for (j = 0; j < smp->n_labels; j++)
			ix->attrs[ix->attr_off[i + 1]++] =
				label_idx(e, &smp->labels[j]);
	}
}

static void indexed_fini(struct indexed *ix)
{
	free(ix->mapping);
	free(ix->function);
	free(ix->location);
	free(ix->stack);
	free(ix->attrs);
	free(ix->attr_off);
}

static void emit_value_type(struct pbw_writer *w, const void *obj)
{
	const uint64_t *tu = obj; /* type, unit */

	pbw_scalar(w, VT_TYPE, tu[0]);
	pbw_scalar(w, VT_UNIT, tu[1]);
}

static void emit_sample(struct pbw_writer *w, const void *obj)
{
	const struct sample_src *s = obj;
	const struct part *pt = s->pt;
	const struct indexed *ix = pt->ix;
	const size_t off = ix->attr_off[s->i];
	uint64_t v = (uint64_t)pt->p->samples[s->i].values[pt->value];

	pbw_scalar(w, SAMPLE_STACK, ix->stack[s->i]);
	pbw_packed(w, SAMPLE_ATTRS, ix->attrs + off,
		   ix->attr_off[s->i + 1] - off);
	pbw_packed(w, SAMPLE_VALUES, &v, 1);
}

static void emit_profile(struct pbw_writer *w, const void *obj)
{
	const struct part *pt = obj;
	const uint64_t st[2] = {pt->type, pt->unit};
	const uint64_t per[2] = {pt->period_type, pt->period_unit};
	size_t i;

	pbw_msg(w, PROF_SAMPLE_TYPE, emit_value_type, st);
	for (i = 0; i < pt->p->n_samples; i++) {
		struct sample_src s = {.pt = pt, .i = i};

		/* A stack with nothing of this type in this window. */
		if (!pt->p->samples[i].values[pt->value])
			continue;
		pbw_msg(w, PROF_SAMPLES, emit_sample, &s);
	}
	pbw_fixed64(w, PROF_TIME_UNIX_NANO, pt->time_ns);
	pbw_scalar(w, PROF_DURATION_NANO, pt->duration);
	if (per[0] || per[1])
		pbw_msg(w, PROF_PERIOD_TYPE, emit_value_type, per);
	pbw_scalar(w, PROF_PERIOD, (uint64_t)pt->p->period);
}

static void emit_scope(struct pbw_writer *w, const void *obj)
{
	(void)obj;
	pbw_bytes(w, SCOPE_NAME, "palloc", strlen("palloc"));
	pbw_bytes(w, SCOPE_VERSION, PACKAGE_VERSION, strlen(PACKAGE_VERSION));
}

static void emit_scope_profiles(struct pbw_writer *w, const void *obj)
{
	const struct enc *e = w->ctx;
	size_t i;

	(void)obj;
	pbw_msg(w, SP_SCOPE, emit_scope, NULL);
	for (i = 0; i < e->n_parts; i++)
		pbw_msg(w, SP_PROFILES, emit_profile, &e->parts[i]);
}

static void emit_resource(struct pbw_writer *w, const void *obj)
{
	const struct otlp_resource *r = obj;
	struct kv_src a;
	size_t i;

	if (r->service_name && *r->service_name) {
		a = (struct kv_src){.key_str = "service.name",
				    .str = r->service_name};
		pbw_msg(w, RES_ATTRIBUTES, emit_kv, &a);
	}
	if (r->pid) {
		a = (struct kv_src){.key_str = "process.pid", .num = r->pid};
		pbw_msg(w, RES_ATTRIBUTES, emit_kv, &a);
	}
	if (r->host_name && *r->host_name) {
		a = (struct kv_src){.key_str = "host.name",
				    .str = r->host_name};
		pbw_msg(w, RES_ATTRIBUTES, emit_kv, &a);
	}
	for (i = 0; i < r->n_labels; i++) {
		if (!r->label_keys[i])
			continue;
		a = (struct kv_src){
			.key_str = r->label_keys[i],
			.str = r->label_values[i] ? r->label_values[i] : ""};
		pbw_msg(w, RES_ATTRIBUTES, emit_kv, &a);
	}
}

static void emit_resource_profiles(struct pbw_writer *w, const void *obj)
{
	const struct enc *e = w->ctx;

	(void)obj;
	pbw_msg(w, RP_RESOURCE, emit_resource, e->res);
	pbw_msg(w, RP_SCOPE_PROFILES, emit_scope_profiles, NULL);
}

/* link_table[0]: the zero Link, as the schema advises for codecs (a
 * trace id and a span id of zero bytes, their sizes). */
static void emit_link0(struct pbw_writer *w, const void *obj)
{
	static const unsigned char zero[16];

	(void)obj;
	pbw_bytes(w, LINK_TRACE_ID, zero, 16);
	pbw_bytes(w, LINK_SPAN_ID, zero, 8);
}

static void emit_table(struct pbw_writer *w, const struct table *t,
		       unsigned int field)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		pbw_bytes(w, field, t->items[i].data, t->items[i].len);
}

static void emit_dictionary(struct pbw_writer *w, const void *obj)
{
	const struct enc *e = w->ctx;

	(void)obj;
	emit_table(w, &e->t[T_MAPPING], DICT_MAPPING);
	emit_table(w, &e->t[T_LOCATION], DICT_LOCATION);
	emit_table(w, &e->t[T_FUNCTION], DICT_FUNCTION);
	pbw_msg(w, DICT_LINK, emit_link0, NULL);
	emit_table(w, &e->t[T_STRING], DICT_STRING);
	emit_table(w, &e->t[T_ATTRIBUTE], DICT_ATTRIBUTE);
	emit_table(w, &e->t[T_STACK], DICT_STACK);
}

static void emit_request(struct pbw_writer *w)
{
	pbw_msg(w, REQ_RESOURCE_PROFILES, emit_resource_profiles, NULL);
	pbw_msg(w, REQ_DICTIONARY, emit_dictionary, NULL);
}

/* Add the Profiles of p's sample types named t0 and t1. */
static int add_parts(struct enc *e, const struct pprof_profile *p,
		     const struct indexed *ix, const char *const t[2],
		     uint64_t time_ns, uint64_t duration)
{
	int k, v;

	for (k = 0; k < 2; k++) {
		struct part *pt = &e->parts[e->n_parts];

		v = pprof_sample_type_index(p, t[k]);
		if (v < 0)
			return msg_set("cannot encode OTLP profiles: the "
				       "profile has no sample type '%s'",
				       t[k]);
		*pt = (struct part){
			.p = p,
			.ix = ix,
			.value = (size_t)v,
			.type = str_idx(e, p->sample_types[v].type),
			.unit = str_idx(e, p->sample_types[v].unit),
			.period_type = str_idx(e, p->period_type.type),
			.period_unit = str_idx(e, p->period_type.unit),
			.time_ns = time_ns,
			.duration = duration,
		};
		e->n_parts++;
	}
	return 0;
}

static void enc_fini(struct enc *e)
{
	int i;

	for (i = 0; i < N_TABLES; i++)
		table_fini(&e->t[i]);
	indexed_fini(&e->ix[0]);
	indexed_fini(&e->ix[1]);
	free(e->scratch);
	free(e->ids);
}

int otlp_encode_request(const struct pprof_profile *alloc_delta,
			const struct pprof_profile *inuse,
			const struct otlp_resource *res, uint64_t start_ns,
			uint64_t end_ns, void **buf, size_t *len)
{
	static const char *const alloc_types[2] = {"alloc_objects",
						   "alloc_space"};
	static const char *const inuse_types[2] = {"inuse_objects",
						   "inuse_space"};
	struct enc e = {.res = res};
	struct pbw_writer w = {.ctx = &e};
	unsigned char *out;
	int i;

	*buf = NULL;
	*len = 0;
	if (!res) {
		errno = EINVAL;
		return msg_set("cannot encode OTLP profiles: no resource");
	}
	for (i = 0; i < N_TABLES; i++) {
		if (table_init(&e.t[i]) < 0) {
			enc_fini(&e);
			return msg_set_errno(ENOMEM,
					     "cannot encode OTLP profiles");
		}
	}
	if (alloc_delta) {
		index_profile(&e, alloc_delta, &e.ix[0]);
		if (!e.failed &&
		    add_parts(&e, alloc_delta, &e.ix[0], alloc_types, start_ns,
			      end_ns > start_ns ? end_ns - start_ns : 0) < 0)
			e.failed = true;
	}
	if (inuse && !e.failed) {
		/* A snapshot: at the window's end, no duration. */
		index_profile(&e, inuse, &e.ix[1]);
		if (!e.failed &&
		    add_parts(&e, inuse, &e.ix[1], inuse_types, end_ns, 0) < 0)
			e.failed = true;
	}
	if (e.failed) {
		enc_fini(&e);
		return -1;
	}
	emit_request(&w);
	out = malloc(w.n ? w.n : 1);
	if (!out) {
		enc_fini(&e);
		return msg_set_errno(ENOMEM, "cannot encode OTLP profiles");
	}
	w = (struct pbw_writer){.out = out, .cap = w.n, .ctx = &e};
	emit_request(&w);
	enc_fini(&e);
	if (w.failed || w.n != w.cap) {
		free(out);
		return msg_set("cannot encode OTLP profiles: internal error "
			       "(%zu bytes counted, %zu written)",
			       w.cap, w.n);
	}
	*buf = out;
	*len = w.n;
	return 0;
}
