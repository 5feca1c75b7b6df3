/* SPDX-License-Identifier: MIT */
/* profile.proto decoding of hostile input (pprof.h: pprof_decode). */
#include "hash.h"
#include "pprof_proto.h"
#include "msg.h"

#include "profile.pb-c.h"

/*
 * Decoding. The input is hostile: the gzip layer is inflated with a cap,
 * the top level of the protobuf is walked first so that a bad length is
 * reported with its byte offset, protobuf-c unpacks (it bounds every
 * length by the input), and then every reference is checked while the
 * message is converted into the dense model.
 */

#define MAX_SAMPLE_TYPES 1024
#define INFLATE_SCRATCH (64 * 1024)

static void *pb_alloc(void *ctx, size_t size)
{
	const struct pprof_allocator *a = ctx;

	return a->alloc(a->ctx, size ? size : 1);
}

static void pb_free(void *ctx, void *ptr)
{
	const struct pprof_allocator *a = ctx;

	if (ptr)
		a->free(a->ctx, ptr);
}

/*
 * One pass of inflating the gzip members in in[0, len). With out NULL it
 * only counts: the output goes to a small scratch buffer, and the pass
 * stops as soon as more than max_size bytes came out, so a gzip bomb is
 * refused without ever holding its output. With out (cap bytes, one more
 * than the count) it fills. *total is the size inflated. 0 or -1.
 */
static int inflate_pass(const unsigned char *in, size_t len, size_t max_size,
			const struct pprof_allocator *a, unsigned char *out,
			size_t cap, size_t *total)
{
	z_stream z = {0};
	unsigned char *scratch = NULL;
	size_t used = 0;
	int ret, rc = -1;

	if (!out) {
		scratch = pprof_int_alloc(a, 1, INFLATE_SCRATCH);
		if (!scratch)
			return -1;
	}
	z.zalloc = z_alloc;
	z.zfree = z_free;
	z.opaque = (voidpf)a;
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		pprof_int_free(a, scratch);
		return msg_set("cannot decompress profile: zlib initialisation "
			       "failed");
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	for (;;) {
		size_t chunk_in = len - (size_t)(z.next_in - in);
		unsigned char *start = out ? out + used : scratch;
		size_t room = out ? cap - used : INFLATE_SCRATCH;

		z.avail_in = chunk_in > UINT_MAX ? UINT_MAX : (uInt)chunk_in;
		z.next_out = start;
		z.avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
		ret = inflate(&z, Z_NO_FLUSH);
		used += (size_t)(z.next_out - start);
		if (used > max_size) {
			msg_set("profile is larger than %zu bytes "
				"uncompressed",
				max_size);
			goto out;
		}
		if (out && used == cap) {
			msg_set("cannot decompress profile: the data changed");
			goto out;
		}
		if (ret == Z_STREAM_END) {
			size_t left = len - (size_t)(z.next_in - in);

			if (left == 0)
				break;
			/* gzip allows several members one after another */
			if (left >= 2 && z.next_in[0] == 0x1f &&
			    z.next_in[1] == 0x8b && inflateReset(&z) == Z_OK)
				continue;
			msg_set("invalid gzip data: %zu bytes of trailing "
				"garbage",
				left);
			goto out;
		}
		if (ret == Z_BUF_ERROR && z.avail_in == 0) {
			msg_set("truncated gzip data after %zu bytes", used);
			goto out;
		}
		if (ret == Z_MEM_ERROR) {
			msg_set_errno(ENOMEM, "cannot decompress profile");
			goto out;
		}
		if (ret != Z_OK) {
			msg_set("invalid gzip data: %s",
				z.msg ? z.msg : "zlib error");
			goto out;
		}
	}
	*total = used;
	rc = 0;
out:
	inflateEnd(&z);
	pprof_int_free(a, scratch);
	return rc;
}

/*
 * Inflate in[0, len) into a new buffer of exactly its size: counted
 * first, then filled. Inflating twice costs little next to decoding, and
 * the memory held is the profile's size, whatever the gzip trailer says.
 */
static int inflate_all(const unsigned char *in, size_t len, size_t max_size,
		       const struct pprof_allocator *a, unsigned char **out,
		       size_t *out_len)
{
	unsigned char *buf;
	size_t total, filled;

	if (inflate_pass(in, len, max_size, a, NULL, 0, &total) < 0)
		return -1;
	buf = pprof_int_alloc(a, 1, total + 1);
	if (!buf)
		return -1;
	if (inflate_pass(in, len, max_size, a, buf, total + 1, &filled) < 0) {
		pprof_int_free(a, buf);
		return -1;
	}
	if (filled != total) {
		pprof_int_free(a, buf);
		return msg_set("cannot decompress profile: the data changed");
	}
	*out = buf;
	*out_len = total;
	return 0;
}

static int varint_decode(const unsigned char *b, size_t len, size_t *pos,
			 uint64_t *v)
{
	uint64_t r = 0;
	unsigned int shift;

	for (shift = 0; shift < 64 && *pos < len; shift += 7) {
		unsigned char c = b[(*pos)++];

		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* File id -> dense id, for one kind of object. */
struct idmap {
	const struct pprof_allocator *a;
	uint64_t *keys, *vals;
	size_t cap;
};

static int idmap_init(struct idmap *m, const struct pprof_allocator *a,
		      size_t n)
{
	m->a = a;
	m->cap = 16;
	while (m->cap < n * 2)
		m->cap *= 2;
	m->keys = pprof_int_alloc(a, m->cap, sizeof(*m->keys));
	m->vals = pprof_int_alloc(a, m->cap, sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -1;
	memset(m->vals, 0, m->cap * sizeof(*m->vals));
	return 0;
}

static void idmap_fini(struct idmap *m)
{
	pprof_int_free(m->a, m->keys);
	pprof_int_free(m->a, m->vals);
}

/* The slot for key: vals[slot] is 0 when the key is absent. */
static size_t idmap_slot(const struct idmap *m, uint64_t key)
{
	size_t i = hash_mix(key) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static uint64_t idmap_get(const struct idmap *m, uint64_t key)
{
	return m->vals[idmap_slot(m, key)];
}

/*
 * The decoder walks the top-level fields of the message several times
 * instead of unpacking it whole: first to check the wire structure and
 * count, then the string table, then the header, mappings and functions,
 * then the locations, then the samples (references point backwards in
 * that order, whatever order the file uses). Each sub-message is unpacked
 * by protobuf-c on its own, converted and freed at once, so the memory is
 * the input plus the model, not the input plus a second copy of every
 * sample as C structs.
 */
struct decoder {
	const unsigned char *buf;
	size_t len;
	ProtobufCAllocator pa;
	struct pprof_profile *p;
	const struct pprof_allocator *a;
	const char **strs; /* the string table, interned into p */
	size_t n_strs, cap_strs;
	size_t count[F_DEFAULT_SAMPLE_TYPE + 1]; /* fields seen, by number */
	size_t seen[F_DEFAULT_SAMPLE_TYPE + 1];	 /* converted so far */
	struct pprof_value_type *types;
	struct idmap mappings, functions, locations;
	void *tmp; /* scratch for one location's lines or one sample */
	size_t tmp_cap;
	struct pprof_label *labels;
	size_t labels_cap;
};

typedef int (*field_fn)(struct decoder *d, size_t at, unsigned int field,
			unsigned int wt, uint64_t v, const unsigned char *data,
			size_t len);

/*
 * Call fn for every top-level field: v is a varint's value, data/len a
 * length-delimited field's bytes (or a fixed field's). The first walk
 * (check) is the one that can meet malformed data: it names the field
 * and its byte offset.
 */
static int walk(struct decoder *d, field_fn fn)
{
	const unsigned char *b = d->buf;
	size_t pos = 0, len = d->len;

	while (pos < len) {
		size_t start = pos, dlen = 0;
		const unsigned char *data = NULL;
		uint64_t key, v = 0;
		unsigned int wt, field;

		if (varint_decode(b, len, &pos, &key) < 0)
			return msg_set("malformed protobuf at byte %zu: "
				       "truncated field key",
				       start);
		wt = key & 7;
		if ((key >> 3) == 0 || (key >> 3) > 536870911)
			return msg_set("malformed protobuf at byte %zu: "
				       "invalid field number %llu",
				       start, (unsigned long long)(key >> 3));
		field = (unsigned int)(key >> 3);
		switch (wt) {
		case WT_VARINT:
			if (varint_decode(b, len, &pos, &v) < 0)
				return msg_set("malformed protobuf at byte "
					       "%zu: truncated varint of "
					       "field %u",
					       start, field);
			break;
		case WT_I64:
		case WT_I32:
			dlen = wt == WT_I64 ? 8 : 4;
			if (len - pos < dlen)
				return msg_set("malformed protobuf at byte "
					       "%zu: truncated field %u",
					       start, field);
			data = b + pos;
			pos += dlen;
			break;
		case WT_LEN:
			if (varint_decode(b, len, &pos, &v) < 0)
				return msg_set("malformed protobuf at byte "
					       "%zu: truncated length of "
					       "field %u",
					       start, field);
			if (v > len - pos)
				return msg_set("malformed protobuf at byte "
					       "%zu: field %u declares %llu "
					       "bytes but only %zu remain",
					       start, field,
					       (unsigned long long)v,
					       len - pos);
			data = b + pos;
			dlen = (size_t)v;
			pos += dlen;
			break;
		default:
			return msg_set("malformed protobuf at byte %zu: "
				       "unsupported wire type %u of field %u",
				       start, wt, field);
		}
		if (fn(d, start, field, wt, v, data, dlen) < 0)
			return -1;
	}
	return 0;
}

/* Pass 0: wire types of the known fields, and how many of each. */
static int check_field(struct decoder *d, size_t at, unsigned int field,
		       unsigned int wt, uint64_t v PALLOC_UNUSED,
		       const unsigned char *data PALLOC_UNUSED,
		       size_t len PALLOC_UNUSED)
{
	unsigned int want;

	if (field > F_DEFAULT_SAMPLE_TYPE)
		return 0; /* unknown fields are skipped, as protobuf says */
	d->count[field]++;
	if (field <= F_STRING_TABLE || field == F_PERIOD_TYPE)
		want = WT_LEN;
	else if (field == F_COMMENT && wt == WT_LEN)
		want = WT_LEN; /* packed */
	else
		want = WT_VARINT;
	if (wt != want)
		return msg_set("malformed protobuf at byte %zu: field %u has "
			       "wire type %u, not %u",
			       at, field, wt, want);
	return 0;
}

/* Pass 1: the string table. */
static int string_field(struct decoder *d, size_t at PALLOC_UNUSED,
			unsigned int field, unsigned int wt PALLOC_UNUSED,
			uint64_t v PALLOC_UNUSED, const unsigned char *data,
			size_t len)
{
	const char *s;

	if (field != F_STRING_TABLE)
		return 0;
	if (d->n_strs == 0 && len != 0)
		return msg_set("invalid profile: string_table[0] is not "
			       "empty");
	/* a C string ends at the first NUL */
	s = pprof_int_intern_len(d->p, (const char *)data,
				 len ? strnlen((const char *)data, len) : 0);
	if (!s)
		return -1;
	d->strs[d->n_strs++] = s;
	return 0;
}

/* String index idx of field "what" of object "obj" (id: its file id). */
static int get_str(struct decoder *d, int64_t idx, const char *obj, uint64_t id,
		   const char *what, const char **out)
{
	if (idx < 0 || (uint64_t)idx >= d->n_strs) {
		if (id)
			return msg_set("invalid profile: %s %llu: %s has "
				       "string index %lld, "
				       "out of range (%zu strings)",
				       obj, (unsigned long long)id, what,
				       (long long)idx, d->n_strs);
		return msg_set("invalid profile: %s: %s has string "
			       "index %lld, out of range "
			       "(%zu strings)",
			       obj, what, (long long)idx, d->n_strs);
	}
	*out = d->strs[idx];
	return 0;
}

/* Unpack one sub-message; NULL with a message naming it on failure. */
static ProtobufCMessage *unpack(struct decoder *d,
				const ProtobufCMessageDescriptor *desc,
				const unsigned char *data, size_t len,
				const char *what, size_t ordinal)
{
	ProtobufCMessage *m =
		protobuf_c_message_unpack(desc, &d->pa, len, data);

	if (!m)
		msg_set("malformed protobuf: %s %zu is not a valid %s message",
			what, ordinal, desc->short_name);
	return m;
}

/* Scratch space for n elements of size; its old contents are dropped. */
static int reserve(struct decoder *d, void **buf, size_t *cap, size_t n,
		   size_t size)
{
	if (n <= *cap && *buf)
		return 0;
	pprof_int_free(d->a, *buf);
	*cap = n > 2 * *cap ? n : 2 * *cap;
	*buf = pprof_int_alloc(d->a, *cap, size);
	if (!*buf)
		*cap = 0;
	return *buf ? 0 : -1;
}

static int decode_value_type(struct decoder *d, const unsigned char *data,
			     size_t len, const char *obj, size_t i,
			     struct pprof_value_type *out)
{
	Perftools__Profiles__ValueType *vt;
	int ret = -1;

	vt = (Perftools__Profiles__ValueType *)unpack(
		d, &perftools__profiles__value_type__descriptor, data, len, obj,
		i);
	if (!vt)
		return -1;
	if (get_str(d, vt->type, obj, i, "type", &out->type) == 0 &&
	    get_str(d, vt->unit, obj, i, "unit", &out->unit) == 0)
		ret = 0;
	protobuf_c_message_free_unpacked(&vt->base, &d->pa);
	return ret;
}

static int decode_comments(struct decoder *d, unsigned int wt, uint64_t v,
			   const unsigned char *data, size_t len)
{
	size_t pos = 0;
	const char *s;

	if (wt == WT_VARINT) {
		if (get_str(d, (int64_t)v, "comment", d->p->n_comments + 1,
			    "text", &s) < 0)
			return -1;
		return pprof_add_comment(d->p, s);
	}
	while (pos < len) {
		if (varint_decode(data, len, &pos, &v) < 0)
			return msg_set("malformed protobuf: truncated varint "
				       "in the packed comment list");
		if (get_str(d, (int64_t)v, "comment", d->p->n_comments + 1,
			    "text", &s) < 0 ||
		    pprof_add_comment(d->p, s) < 0)
			return -1;
	}
	return 0;
}

/* Register file id (of kind obj, at index i) as dense id; -1 if invalid. */
static int idmap_add(struct idmap *map, const char *obj, size_t i, uint64_t id,
		     uint64_t dense)
{
	size_t slot;

	if (id == 0)
		return msg_set("invalid profile: %s at index %zu has id 0", obj,
			       i);
	slot = idmap_slot(map, id);
	if (map->vals[slot])
		return msg_set("invalid profile: duplicate %s id %llu", obj,
			       (unsigned long long)id);
	map->keys[slot] = id;
	map->vals[slot] = dense;
	return 0;
}

static int decode_mapping(struct decoder *d, const unsigned char *data,
			  size_t len)
{
	Perftools__Profiles__Mapping *fm;
	struct pprof_mapping pm = {0};
	size_t i = d->seen[F_MAPPING]++;
	int ret = -1;

	fm = (Perftools__Profiles__Mapping *)unpack(
		d, &perftools__profiles__mapping__descriptor, data, len,
		"mapping", i + 1);
	if (!fm)
		return -1;
	if (idmap_add(&d->mappings, "mapping", i, fm->id, i + 1) < 0 ||
	    get_str(d, fm->filename, "mapping", fm->id, "filename", &pm.file) <
		    0 ||
	    get_str(d, fm->build_id, "mapping", fm->id, "build_id",
		    &pm.build_id) < 0)
		goto out;
	pm.start = fm->memory_start;
	pm.limit = fm->memory_limit;
	pm.offset = fm->file_offset;
	pm.has_functions = fm->has_functions;
	pm.has_filenames = fm->has_filenames;
	pm.has_line_numbers = fm->has_line_numbers;
	pm.has_inline_frames = fm->has_inline_frames;
	if (pprof_add_mapping(d->p, &pm))
		ret = 0;
out:
	protobuf_c_message_free_unpacked(&fm->base, &d->pa);
	return ret;
}

static int decode_function(struct decoder *d, const unsigned char *data,
			   size_t len)
{
	Perftools__Profiles__Function *f;
	const char *name, *sys, *file;
	size_t i = d->seen[F_FUNCTION]++;
	uint64_t id;
	int ret = -1;

	f = (Perftools__Profiles__Function *)unpack(
		d, &perftools__profiles__function__descriptor, data, len,
		"function", i + 1);
	if (!f)
		return -1;
	if (get_str(d, f->name, "function", f->id, "name", &name) < 0 ||
	    get_str(d, f->system_name, "function", f->id, "system_name", &sys) <
		    0 ||
	    get_str(d, f->filename, "function", f->id, "filename", &file) < 0)
		goto out;
	id = pprof_int_append_function(d->p, name, sys, file, f->start_line);
	if (id && idmap_add(&d->functions, "function", i, f->id, id) == 0)
		ret = 0;
out:
	protobuf_c_message_free_unpacked(&f->base, &d->pa);
	return ret;
}

/* Pass 2: everything that refers to nothing but strings. */
static int header_field(struct decoder *d, size_t at PALLOC_UNUSED,
			unsigned int field, unsigned int wt, uint64_t v,
			const unsigned char *data, size_t len)
{
	struct pprof_profile *p = d->p;
	size_t i;

	switch (field) {
	case F_SAMPLE_TYPE:
		i = d->seen[F_SAMPLE_TYPE]++;
		return decode_value_type(d, data, len, "sample type", i + 1,
					 &d->types[i]);
	case F_PERIOD_TYPE:
		return decode_value_type(d, data, len, "period type", 0,
					 &p->period_type);
	case F_MAPPING:
		return decode_mapping(d, data, len);
	case F_FUNCTION:
		return decode_function(d, data, len);
	case F_DROP_FRAMES:
		return get_str(d, (int64_t)v, "profile", 0, "drop_frames",
			       &p->drop_frames);
	case F_KEEP_FRAMES:
		return get_str(d, (int64_t)v, "profile", 0, "keep_frames",
			       &p->keep_frames);
	case F_DEFAULT_SAMPLE_TYPE:
		return get_str(d, (int64_t)v, "profile", 0,
			       "default_sample_type", &p->default_sample_type);
	case F_TIME_NANOS:
		p->time_nanos = (int64_t)v;
		return 0;
	case F_DURATION_NANOS:
		p->duration_nanos = (int64_t)v;
		return 0;
	case F_PERIOD:
		p->period = (int64_t)v;
		return 0;
	case F_COMMENT:
		return decode_comments(d, wt, v, data, len);
	}
	return 0;
}

/* Pass 3: locations, which refer to mappings and functions. */
static int location_field(struct decoder *d, size_t at PALLOC_UNUSED,
			  unsigned int field, unsigned int wt PALLOC_UNUSED,
			  uint64_t v PALLOC_UNUSED, const unsigned char *data,
			  size_t len)
{
	Perftools__Profiles__Location *l;
	struct pprof_line *lines;
	size_t i, j, n;
	uint64_t mid = 0, id;
	int ret = -1;

	if (field != F_LOCATION)
		return 0;
	i = d->seen[F_LOCATION]++;
	l = (Perftools__Profiles__Location *)unpack(
		d, &perftools__profiles__location__descriptor, data, len,
		"location", i + 1);
	if (!l)
		return -1;
	if (reserve(d, &d->tmp, &d->tmp_cap,
		    l->n_line * sizeof(struct pprof_line), 1) < 0)
		goto out;
	lines = d->tmp;
	if (l->mapping_id) {
		mid = idmap_get(&d->mappings, l->mapping_id);
		if (!mid) {
			msg_set("invalid profile: location %llu refers to "
				"missing mapping %llu",
				(unsigned long long)l->id,
				(unsigned long long)l->mapping_id);
			goto out;
		}
	}
	for (j = n = 0; j < l->n_line; j++) {
		const Perftools__Profiles__Line *fl = l->line[j];

		/* pprof allows a line without a function: drop it */
		if (!fl->function_id)
			continue;
		lines[n].function_id =
			idmap_get(&d->functions, fl->function_id);
		lines[n].line = fl->line;
		if (!lines[n].function_id) {
			msg_set("invalid profile: location %llu line %zu "
				"refers to missing function %llu",
				(unsigned long long)l->id, j + 1,
				(unsigned long long)fl->function_id);
			goto out;
		}
		n++;
	}
	id = pprof_int_append_location(d->p, mid, l->address, lines, n,
				       l->is_folded);
	if (id && idmap_add(&d->locations, "location", i, l->id, id) == 0)
		ret = 0;
out:
	protobuf_c_message_free_unpacked(&l->base, &d->pa);
	return ret;
}

/* Pass 4: samples, which refer to locations. */
static int sample_field(struct decoder *d, size_t at PALLOC_UNUSED,
			unsigned int field, unsigned int wt PALLOC_UNUSED,
			uint64_t v PALLOC_UNUSED, const unsigned char *data,
			size_t len)
{
	Perftools__Profiles__Sample *s;
	uint64_t *locs;
	size_t i, j;
	int ret = -1;

	if (field != F_SAMPLE)
		return 0;
	i = d->seen[F_SAMPLE]++ + 1;
	s = (Perftools__Profiles__Sample *)unpack(
		d, &perftools__profiles__sample__descriptor, data, len,
		"sample", i);
	if (!s)
		return -1;
	if (s->n_value != d->p->n_sample_types) {
		msg_set("invalid profile: sample %zu has %zu values for %zu "
			"sample types",
			i, s->n_value, d->p->n_sample_types);
		goto out;
	}
	if (reserve(d, &d->tmp, &d->tmp_cap,
		    s->n_location_id * sizeof(uint64_t), 1) < 0 ||
	    reserve(d, (void **)&d->labels, &d->labels_cap, s->n_label,
		    sizeof(*d->labels)) < 0)
		goto out;
	locs = d->tmp;
	for (j = 0; j < s->n_location_id; j++) {
		locs[j] = idmap_get(&d->locations, s->location_id[j]);
		if (!locs[j]) {
			msg_set("invalid profile: sample %zu refers to missing "
				"location %llu",
				i, (unsigned long long)s->location_id[j]);
			goto out;
		}
	}
	for (j = 0; j < s->n_label; j++) {
		const Perftools__Profiles__Label *l = s->label[j];
		struct pprof_label *pl = &d->labels[j];

		pl->num = l->num;
		if (get_str(d, l->key, "sample", i, "label key", &pl->key) <
			    0 ||
		    get_str(d, l->str, "sample", i, "label str", &pl->str) <
			    0 ||
		    get_str(d, l->num_unit, "sample", i, "label num_unit",
			    &pl->num_unit) < 0)
			goto out;
	}
	if (pprof_add_sample(d->p, locs, s->n_location_id, s->value, d->labels,
			     s->n_label) == 0)
		ret = 0;
out:
	protobuf_c_message_free_unpacked(&s->base, &d->pa);
	return ret;
}

static int decode_passes(struct decoder *d)
{
	const struct pprof_allocator *a = d->a;

	if (walk(d, check_field) < 0)
		return -1;
	if (d->count[F_SAMPLE_TYPE] > MAX_SAMPLE_TYPES)
		return msg_set("invalid profile: %zu sample types, more than "
			       "%d",
			       d->count[F_SAMPLE_TYPE], MAX_SAMPLE_TYPES);
	if (d->count[F_STRING_TABLE] == 0)
		return msg_set("invalid profile: no string table");
	d->strs =
		pprof_int_alloc(a, d->count[F_STRING_TABLE], sizeof(*d->strs));
	d->types =
		pprof_int_alloc(a, d->count[F_SAMPLE_TYPE], sizeof(*d->types));
	if (!d->strs || !d->types ||
	    idmap_init(&d->mappings, a, d->count[F_MAPPING]) < 0 ||
	    idmap_init(&d->functions, a, d->count[F_FUNCTION]) < 0 ||
	    idmap_init(&d->locations, a, d->count[F_LOCATION]) < 0)
		return -1;
	if (walk(d, string_field) < 0 || walk(d, header_field) < 0 ||
	    pprof_set_sample_types(d->p, d->types, d->count[F_SAMPLE_TYPE]) <
		    0 ||
	    walk(d, location_field) < 0 || walk(d, sample_field) < 0)
		return -1;
	return 0;
}

struct pprof_profile *pprof_decode(const void *buf, size_t len, size_t max_size,
				   const struct pprof_allocator *alloc)
{
	struct decoder d = {0};
	unsigned char *plain = NULL;
	size_t plain_len = len;
	int ret;

	if (!alloc)
		alloc = &pprof_int_default_allocator;
	if (!max_size)
		max_size = PPROF_MAX_SIZE;
	d.buf = buf;
	if (len == 0) {
		msg_set("invalid profile: empty input");
		return NULL;
	}
	if (len >= 2 && d.buf[0] == 0x1f && d.buf[1] == 0x8b) {
		if (len < 18) {
			msg_set("truncated gzip data: %zu bytes", len);
			return NULL;
		}
		if (inflate_all(buf, len, max_size, alloc, &plain, &plain_len) <
		    0)
			return NULL;
		d.buf = plain;
	} else if (len > max_size) {
		msg_set("profile is larger than %zu bytes", max_size);
		return NULL;
	}
	d.len = plain_len;
	d.a = alloc;
	d.pa.alloc = pb_alloc;
	d.pa.free = pb_free;
	d.pa.allocator_data = (void *)alloc;
	d.p = pprof_new(alloc);
	ret = d.p ? decode_passes(&d) : -1;
	pprof_int_free(alloc, plain);
	pprof_int_free(alloc, d.strs);
	pprof_int_free(alloc, d.types);
	pprof_int_free(alloc, d.tmp);
	pprof_int_free(alloc, d.labels);
	idmap_fini(&d.mappings);
	idmap_fini(&d.functions);
	idmap_fini(&d.locations);
	if (ret < 0) {
		pprof_free(d.p);
		return NULL;
	}
	return d.p;
}
