/* SPDX-License-Identifier: MIT */
/* profile.proto encoding: streamed, no malloc (pprof.h: pprof_encode). */
#include "hash.h"
#include "pprof_proto.h"
#include "msg.h"

#include <unistd.h>

#include "profile.pb-c.h"

/*
 * Encoding streams the profile field by field instead of building one
 * Perftools__Profiles__Profile: each sample, mapping, location and
 * function is packed by protobuf-c on its own (protobuf_c_message_pack()
 * into a scratch buffer from the profile's allocator; it never allocates
 * itself) and written with its tag and length. The string table goes last:
 * protobuf fields may come in any order and repeated fields concatenate,
 * so indices can be handed out while the rest is written. Memory stays at
 * a few fixed buffers plus the string index, whatever the profile's size,
 * and nothing calls malloc: the agent encodes inside its arena.
 */

#define STAGE_SIZE ((size_t)64 * 1024)
#define ZOUT_SIZE ((size_t)64 * 1024)

/* Where encoded bytes go: a file descriptor, or a growing memory buffer. */
struct sink {
	const struct pprof_allocator *a;
	int fd; /* -1: memory */
	bool gzip, z_live;
	z_stream z;
	unsigned char *stage, *zout;
	size_t stage_len;
	unsigned char *mem;
	size_t mem_len, mem_cap;
	unsigned char *scratch; /* for protobuf_c_message_pack() */
	size_t scratch_cap;
	int failed;
};

static int emit(struct sink *s, const unsigned char *data, size_t len)
{
	if (s->fd >= 0) {
		while (len) {
			ssize_t n = write(s->fd, data, len);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return msg_set_errno(errno, "cannot write "
							    "profile");
			data += n;
			len -= (size_t)n;
		}
		return 0;
	}
	if (s->mem_cap - s->mem_len < len) {
		size_t ncap = s->mem_cap ? s->mem_cap : 64 * 1024;
		unsigned char *nm;

		while (ncap - s->mem_len < len) {
			if (ncap > SIZE_MAX / 2)
				return msg_set("cannot encode profile: too "
					       "large");
			ncap *= 2;
		}
		nm = pprof_int_alloc(s->a, 1, ncap);
		if (!nm)
			return -1;
		if (s->mem_len)
			memcpy(nm, s->mem, s->mem_len);
		pprof_int_free(s->a, s->mem);
		s->mem = nm;
		s->mem_cap = ncap;
	}
	memcpy(s->mem + s->mem_len, data, len);
	s->mem_len += len;
	return 0;
}

/*
 * Start compressing: deflate's fastest level (a third of the default
 * level's time on large profiles, 2-12 % more bytes), and when the whole
 * profile is staged already (final is true; most profiles of short
 * processes are a few KiB), a window and hash table no larger than it:
 * the default ones cost 256 KiB to allocate and 64 KiB to clear, more than
 * compressing 2 KiB takes.
 */
static int z_start(struct sink *s, bool final)
{
	int bits = 15;

	/* windowBits 9 is zlib's smallest; 262 bytes of lookahead */
	if (final) {
		bits = 9;
		while (bits < 15 && s->stage_len + 262 > (size_t)1 << bits)
			bits++;
	}
	/* windowBits + 16: a gzip header and trailer; hash bits = bits */
	if (deflateInit2(&s->z, Z_BEST_SPEED, Z_DEFLATED, bits + 16, bits - 7,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return msg_set("cannot compress profile: zlib initialisation "
			       "failed");
	s->z_live = true;
	return 0;
}

/* Push the staged bytes out, compressing them when gzip is on. */
static int flush_stage(struct sink *s, int zflush)
{
	int ret;

	if (!s->gzip) {
		ret = emit(s, s->stage, s->stage_len);
		s->stage_len = 0;
		return ret;
	}
	if (!s->z_live && z_start(s, zflush == Z_FINISH) < 0)
		return -1;
	s->z.next_in = s->stage;
	s->z.avail_in = (uInt)s->stage_len;
	do {
		s->z.next_out = s->zout;
		s->z.avail_out = (uInt)ZOUT_SIZE;
		ret = deflate(&s->z, zflush);
		if (ret == Z_STREAM_ERROR)
			return msg_set("cannot compress profile: zlib stream "
				       "error");
		if (emit(s, s->zout, ZOUT_SIZE - s->z.avail_out) < 0)
			return -1;
	} while (s->z.avail_out == 0 ||
		 (zflush == Z_FINISH && ret != Z_STREAM_END));
	s->stage_len = 0;
	return 0;
}

static void put(struct sink *s, const void *data, size_t len)
{
	const unsigned char *d = data;

	while (len && !s->failed) {
		size_t n = STAGE_SIZE - s->stage_len;

		if (n > len)
			n = len;
		memcpy(s->stage + s->stage_len, d, n);
		s->stage_len += n;
		d += n;
		len -= n;
		if (s->stage_len == STAGE_SIZE && flush_stage(s, Z_NO_FLUSH))
			s->failed = -1;
	}
}

static size_t varint_encode(unsigned char *b, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (unsigned char)v;
	return n;
}

static void put_varint(struct sink *s, uint64_t v)
{
	unsigned char b[10];

	put(s, b, varint_encode(b, v));
}

static void put_key(struct sink *s, unsigned int field, unsigned int wt)
{
	put_varint(s, (uint64_t)field << 3 | wt);
}

/* A proto3 int64 scalar: omitted when zero, like protobuf-c does. */
static void put_int64_field(struct sink *s, unsigned int field, int64_t v)
{
	if (!v)
		return;
	put_key(s, field, WT_VARINT);
	put_varint(s, (uint64_t)v);
}

static void put_message(struct sink *s, unsigned int field,
			const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);

	if (s->failed)
		return;
	if (len > s->scratch_cap) {
		size_t ncap = len < 4096 ? 4096 : len * 2;

		pprof_int_free(s->a, s->scratch);
		s->scratch = pprof_int_alloc(s->a, 1, ncap);
		s->scratch_cap = s->scratch ? ncap : 0;
		if (!s->scratch) {
			s->failed = -1;
			return;
		}
	}
	protobuf_c_message_pack(m, s->scratch);
	put_key(s, field, WT_LEN);
	put_varint(s, len);
	put(s, s->scratch, len);
}

/* The string table being built: pointer -> index, and the order. */
struct strtab {
	const struct pprof_allocator *a;
	struct pprof_slot *slots; /* hash: the pointer; val: index + 1 */
	size_t cap, count;
	const char **order;
	size_t order_cap;
	int failed;
};

/*
 * The index of s in the string table, added if new. Interned strings are
 * unique, so the pointer is the key; a string that was not interned still
 * works, at worst duplicated in the table. 0 on ENOMEM (failed is set).
 */
static int64_t str_index(struct strtab *t, const char *s)
{
	uint64_t key = (uintptr_t)s;
	size_t i, mask;

	if (!s || !*s || t->failed)
		return 0;
	if ((t->count + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024, j;
		struct pprof_slot *ns =
			pprof_int_alloc(t->a, ncap, sizeof(*ns));

		if (!ns) {
			t->failed = -1;
			return 0;
		}
		memset(ns, 0, ncap * sizeof(*ns));
		for (j = 0; j < t->cap; j++) {
			size_t k;

			if (!t->slots[j].val)
				continue;
			k = hash_mix(t->slots[j].hash) & (ncap - 1);
			while (ns[k].val)
				k = (k + 1) & (ncap - 1);
			ns[k] = t->slots[j];
		}
		pprof_int_free(t->a, t->slots);
		t->slots = ns;
		t->cap = ncap;
	}
	mask = t->cap - 1;
	for (i = hash_mix(key) & mask; t->slots[i].val; i = (i + 1) & mask)
		if (t->slots[i].hash == key)
			return (int64_t)(t->slots[i].val - 1);
	if (t->count + 1 >= t->order_cap) {
		size_t ncap = t->order_cap ? t->order_cap * 2 : 1024;
		const char **no = pprof_int_alloc(t->a, ncap, sizeof(*no));

		if (!no) {
			t->failed = -1;
			return 0;
		}
		if (t->count + 1 > 1)
			memcpy(no, t->order, (t->count + 1) * sizeof(*no));
		pprof_int_free(t->a, t->order);
		t->order = no;
		t->order_cap = ncap;
	}
	/* order[0] is "", so the string with index n is order[n]. */
	t->order[0] = "";
	t->order[++t->count] = s;
	t->slots[i].hash = key;
	t->slots[i].val = t->count + 1;
	return (int64_t)t->count;
}

static void encode_value_type(struct sink *s, struct strtab *t,
			      unsigned int field,
			      const struct pprof_value_type *vt)
{
	Perftools__Profiles__ValueType m =
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

	m.type = str_index(t, vt->type);
	m.unit = str_index(t, vt->unit);
	put_message(s, field, &m.base);
}

/* The largest n_labels and n_lines, to size the temporary arrays. */
static void encode_maxima(const struct pprof_profile *p, size_t *labels,
			  size_t *lines)
{
	size_t i;

	*labels = *lines = 0;
	for (i = 0; i < p->n_samples; i++)
		if (p->samples[i].n_labels > *labels)
			*labels = p->samples[i].n_labels;
	for (i = 0; i < p->n_locations; i++)
		if (p->locations[i].n_lines > *lines)
			*lines = p->locations[i].n_lines;
}

static int encode_samples(const struct pprof_profile *p, struct sink *s,
			  struct strtab *t, size_t max_labels)
{
	Perftools__Profiles__Label *lab = NULL, **labp = NULL;
	size_t i, j;

	if (max_labels) {
		lab = pprof_int_alloc(s->a, max_labels, sizeof(*lab));
		labp = pprof_int_alloc(s->a, max_labels, sizeof(*labp));
		if (!lab || !labp) {
			pprof_int_free(s->a, lab);
			pprof_int_free(s->a, labp);
			return -1;
		}
	}
	for (i = 0; i < p->n_samples && !s->failed && !t->failed; i++) {
		const struct pprof_sample *ps = &p->samples[i];
		Perftools__Profiles__Sample m =
			PERFTOOLS__PROFILES__SAMPLE__INIT;

		m.n_location_id = ps->n_locations;
		m.location_id = ps->location_ids;
		m.n_value = p->n_sample_types;
		m.value = ps->values;
		for (j = 0; j < ps->n_labels; j++) {
			const struct pprof_label *l = &ps->labels[j];

			perftools__profiles__label__init(&lab[j]);
			lab[j].key = str_index(t, l->key);
			lab[j].str = str_index(t, l->str);
			lab[j].num = l->num;
			lab[j].num_unit = str_index(t, l->num_unit);
			labp[j] = &lab[j];
		}
		m.n_label = ps->n_labels;
		m.label = labp;
		put_message(s, F_SAMPLE, &m.base);
	}
	pprof_int_free(s->a, lab);
	pprof_int_free(s->a, labp);
	return 0;
}

static void encode_mappings(const struct pprof_profile *p, struct sink *s,
			    struct strtab *t)
{
	size_t i;

	for (i = 0; i < p->n_mappings && !s->failed; i++) {
		const struct pprof_mapping *pm = &p->mappings[i];
		Perftools__Profiles__Mapping m =
			PERFTOOLS__PROFILES__MAPPING__INIT;

		m.id = i + 1;
		m.memory_start = pm->start;
		m.memory_limit = pm->limit;
		m.file_offset = pm->offset;
		m.filename = str_index(t, pm->file);
		m.build_id = str_index(t, pm->build_id);
		m.has_functions = pm->has_functions;
		m.has_filenames = pm->has_filenames;
		m.has_line_numbers = pm->has_line_numbers;
		m.has_inline_frames = pm->has_inline_frames;
		put_message(s, F_MAPPING, &m.base);
	}
}

static int encode_locations(const struct pprof_profile *p, struct sink *s,
			    size_t max_lines)
{
	Perftools__Profiles__Line *ln = NULL, **lnp = NULL;
	size_t i, j;

	if (max_lines) {
		ln = pprof_int_alloc(s->a, max_lines, sizeof(*ln));
		lnp = pprof_int_alloc(s->a, max_lines, sizeof(*lnp));
		if (!ln || !lnp) {
			pprof_int_free(s->a, ln);
			pprof_int_free(s->a, lnp);
			return -1;
		}
	}
	for (i = 0; i < p->n_locations && !s->failed; i++) {
		const struct pprof_location *pl = &p->locations[i];
		Perftools__Profiles__Location m =
			PERFTOOLS__PROFILES__LOCATION__INIT;

		m.id = i + 1;
		m.mapping_id = pl->mapping_id;
		m.address = pl->address;
		m.is_folded = pl->is_folded;
		for (j = 0; j < pl->n_lines; j++) {
			perftools__profiles__line__init(&ln[j]);
			ln[j].function_id = pl->lines[j].function_id;
			ln[j].line = pl->lines[j].line;
			lnp[j] = &ln[j];
		}
		m.n_line = pl->n_lines;
		m.line = lnp;
		put_message(s, F_LOCATION, &m.base);
	}
	pprof_int_free(s->a, ln);
	pprof_int_free(s->a, lnp);
	return 0;
}

static void encode_functions(const struct pprof_profile *p, struct sink *s,
			     struct strtab *t)
{
	size_t i;

	for (i = 0; i < p->n_functions && !s->failed; i++) {
		const struct pprof_function *pf = &p->functions[i];
		Perftools__Profiles__Function m =
			PERFTOOLS__PROFILES__FUNCTION__INIT;

		m.id = i + 1;
		m.name = str_index(t, pf->name);
		m.system_name = str_index(t, pf->system_name);
		m.filename = str_index(t, pf->file);
		m.start_line = pf->start_line;
		put_message(s, F_FUNCTION, &m.base);
	}
}

static void encode_scalars(const struct pprof_profile *p, struct sink *s,
			   struct strtab *t)
{
	unsigned char b[10];
	size_t i, len = 0;
	int64_t idx;

	put_int64_field(s, F_DROP_FRAMES, str_index(t, p->drop_frames));
	put_int64_field(s, F_KEEP_FRAMES, str_index(t, p->keep_frames));
	put_int64_field(s, F_TIME_NANOS, p->time_nanos);
	put_int64_field(s, F_DURATION_NANOS, p->duration_nanos);
	if (*p->period_type.type || *p->period_type.unit)
		encode_value_type(s, t, F_PERIOD_TYPE, &p->period_type);
	put_int64_field(s, F_PERIOD, p->period);
	/* comment: packed repeated int64, the proto3 default */
	for (i = 0; i < p->n_comments; i++)
		len += varint_encode(b, (uint64_t)str_index(t, p->comments[i]));
	if (p->n_comments) {
		put_key(s, F_COMMENT, WT_LEN);
		put_varint(s, len);
		for (i = 0; i < p->n_comments; i++) {
			idx = str_index(t, p->comments[i]);
			put_varint(s, (uint64_t)idx);
		}
	}
	put_int64_field(s, F_DEFAULT_SAMPLE_TYPE,
			str_index(t, p->default_sample_type));
}

static void encode_strings(struct sink *s, const struct strtab *t)
{
	size_t i, len;

	/* string_table[0] must be "", even for a profile without strings */
	put_key(s, F_STRING_TABLE, WT_LEN);
	put_varint(s, 0);
	for (i = 1; i <= t->count && !s->failed; i++) {
		len = strlen(t->order[i]);
		put_key(s, F_STRING_TABLE, WT_LEN);
		put_varint(s, len);
		put(s, t->order[i], len);
	}
}

static int encode(const struct pprof_profile *p, struct sink *s)
{
	struct strtab t = {.a = s->a};
	size_t i, max_labels, max_lines;
	int ret = -1;

	s->stage = pprof_int_alloc(s->a, 1, STAGE_SIZE);
	if (!s->stage)
		return -1;
	if (s->gzip) {
		s->zout = pprof_int_alloc(s->a, 1, ZOUT_SIZE);
		if (!s->zout)
			goto out;
		s->z.zalloc = z_alloc;
		s->z.zfree = z_free;
		s->z.opaque = (voidpf)s->a;
		/* deflateInit2() at the first flush: z_start() */
	}
	encode_maxima(p, &max_labels, &max_lines);
	for (i = 0; i < p->n_sample_types; i++)
		encode_value_type(s, &t, F_SAMPLE_TYPE, &p->sample_types[i]);
	if (encode_samples(p, s, &t, max_labels) < 0)
		goto out;
	encode_mappings(p, s, &t);
	if (encode_locations(p, s, max_lines) < 0)
		goto out;
	encode_functions(p, s, &t);
	encode_scalars(p, s, &t);
	if (t.failed) {
		msg_set_errno(ENOMEM, "cannot encode profile");
		goto out;
	}
	encode_strings(s, &t);
	if (!s->failed && flush_stage(s, Z_FINISH) == 0)
		ret = 0;
out:
	if (s->z_live)
		deflateEnd(&s->z);
	pprof_int_free(s->a, s->stage);
	pprof_int_free(s->a, s->zout);
	pprof_int_free(s->a, s->scratch);
	pprof_int_free(s->a, t.slots);
	pprof_int_free(s->a, t.order);
	return ret;
}

int pprof_encode(const struct pprof_profile *p, bool gzip, void **buf,
		 size_t *len)
{
	struct sink s = {.a = &p->internal->a, .fd = -1, .gzip = gzip};

	if (encode(p, &s) < 0) {
		pprof_int_free(s.a, s.mem);
		return -1;
	}
	if (!s.mem) {
		/* an empty plain profile still needs a buffer to free */
		s.mem = pprof_int_alloc(s.a, 1, 1);
		if (!s.mem)
			return -1;
	}
	*buf = s.mem;
	*len = s.mem_len;
	return 0;
}

void pprof_free_buffer(const struct pprof_profile *p, void *buf)
{
	pprof_int_free(&p->internal->a, buf);
}

int pprof_write_fd(const struct pprof_profile *p, int fd)
{
	struct sink s = {.a = &p->internal->a, .fd = fd, .gzip = true};

	return encode(p, &s);
}
