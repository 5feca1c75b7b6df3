/* SPDX-License-Identifier: MIT */
/* profile.proto and its gzip container, encoded by hand for the agent. */
#include "hash.h"
#include "pprof_int.h"
#include "pprof_pack.h"
#include "msg.h"

/*
 * Two passes over the profile with the same code: the first only counts
 * bytes and hands out string indices in the order of first use, the
 * second writes into a buffer of the size counted. A sub-message's
 * length prefix comes from counting it just before writing it (and a
 * sample's labels, a location's lines, inside), so nothing is staged and
 * the only memory is the string index and the output. In a gzip file the
 * protobuf is written where its last stored block ends, contiguous, its
 * CRC taken, and then each block is moved down by the block headers
 * before it (never over bytes not yet moved).
 */

enum {
	WT_VARINT = 0,
	WT_LEN = 2,
};

/* Field numbers of proto/profile.proto, per message. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_DROP_FRAMES = 7,
	PROFILE_KEEP_FRAMES = 8,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

/* A stored block holds at most this many bytes (LEN is 16 bits). */
#define STORED_MAX 65535u
#define GZIP_HEADER 10u
#define GZIP_TRAILER 8u
#define STORED_HEADER 5u

/* The string table: pointer -> index (interned strings are unique, so
 * the pointer is the key; one not interned is at worst listed twice). */
struct str_slot {
	const char *s; /* NULL: empty slot */
	size_t idx;
};

struct str_entry {
	const char *s;
	size_t len;
};

struct strtab {
	const struct pprof_allocator *a;
	struct str_slot *slots;
	size_t cap;		 /* slots, a power of two */
	struct str_entry *order; /* cap / 2 of them; order[0] is "" */
	size_t count;		 /* entries used, "" included */
	bool failed;		 /* ENOMEM (msg_set() done) */
};

/* Where the bytes go: out NULL only counts them in n. */
struct writer {
	const struct pprof_profile *p;
	struct strtab *t;
	unsigned char *out;
	size_t n, cap;
	bool failed; /* the second pass wrote more than the first counted */
};

typedef void emit_fn(struct writer *w, const void *obj);

static const uint32_t crc_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
	0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
	0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
	0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
	0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
	0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
	0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
	0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
	0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
	0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
	0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
	0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
	0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
	0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
	0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
	0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
	0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
	0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
	0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

uint32_t pprof_pack_crc32(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *d = data;

	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *d++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static int strtab_resize(struct strtab *t, size_t cap)
{
	struct str_slot *slots = pprof_int_alloc(t->a, cap, sizeof(*slots));
	struct str_entry *order =
		pprof_int_alloc(t->a, cap / 2, sizeof(*order));
	size_t i, k;

	if (!slots || !order) {
		pprof_int_free(t->a, slots);
		pprof_int_free(t->a, order);
		t->failed = true;
		return -1;
	}
	memset(slots, 0, cap * sizeof(*slots));
	for (i = 0; i < t->cap; i++) {
		if (!t->slots[i].s)
			continue;
		k = hash_mix((uintptr_t)t->slots[i].s) & (cap - 1);
		while (slots[k].s)
			k = (k + 1) & (cap - 1);
		slots[k] = t->slots[i];
	}
	if (t->count)
		memcpy(order, t->order, t->count * sizeof(*order));
	order[0] = (struct str_entry){"", 0};
	pprof_int_free(t->a, t->slots);
	pprof_int_free(t->a, t->order);
	t->slots = slots;
	t->order = order;
	t->cap = cap;
	if (!t->count)
		t->count = 1;
	return 0;
}

/* Sized for the profile's interned strings, so that it rarely grows. */
static int strtab_init(struct strtab *t, const struct pprof_profile *p)
{
	size_t want = 2 * (p->internal->strs.count + 8), cap = 64;

	memset(t, 0, sizeof(*t));
	t->a = &p->internal->a;
	while (cap < want && cap <= SIZE_MAX / 4)
		cap *= 2;
	return strtab_resize(t, cap);
}

static void strtab_fini(struct strtab *t)
{
	pprof_int_free(t->a, t->slots);
	pprof_int_free(t->a, t->order);
}

/* The index of s, added if new; 0 for NULL, "" and after ENOMEM. */
static uint64_t str_index(struct writer *w, const char *s)
{
	struct strtab *t = w->t;
	size_t k;

	if (!s || !*s || t->failed)
		return 0;
	k = hash_mix((uintptr_t)s) & (t->cap - 1);
	for (; t->slots[k].s; k = (k + 1) & (t->cap - 1))
		if (t->slots[k].s == s)
			return t->slots[k].idx;
	if (t->count >= t->cap / 2) {
		if (t->cap > SIZE_MAX / 2 / sizeof(struct str_slot) ||
		    strtab_resize(t, t->cap * 2) < 0) {
			t->failed = true;
			return 0;
		}
		return str_index(w, s);
	}
	t->slots[k].s = s;
	t->slots[k].idx = t->count;
	t->order[t->count].s = s;
	t->order[t->count].len = strlen(s);
	return t->count++;
}

static size_t varint_size(uint64_t v)
{
	/* 7 bits a byte: 1 for 0..127, 10 for the top bit set */
	return (size_t)(64 - __builtin_clzll(v | 1) + 6) / 7;
}

static void put_bytes(struct writer *w, const void *data, size_t len)
{
	if (w->out) {
		if (len > w->cap - w->n) {
			w->failed = true;
			return;
		}
		if (len)
			memcpy(w->out + w->n, data, len);
	}
	w->n += len;
}

static void put_varint(struct writer *w, uint64_t v)
{
	unsigned char *o;

	if (!w->out) {
		w->n += varint_size(v);
		return;
	}
	if (varint_size(v) > w->cap - w->n) {
		w->failed = true;
		return;
	}
	o = w->out + w->n;
	while (v >= 0x80) {
		*o++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*o++ = (unsigned char)v;
	w->n = (size_t)(o - w->out);
}

static void put_key(struct writer *w, unsigned int field, unsigned int wt)
{
	put_varint(w, (uint64_t)field << 3 | wt);
}

/* A proto3 scalar (int64, uint64, bool): left out when zero. */
static void put_scalar(struct writer *w, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	put_key(w, field, WT_VARINT);
	put_varint(w, v);
}

/* A string field: its index in the table, left out for "". */
static void put_str(struct writer *w, unsigned int field, const char *s)
{
	put_scalar(w, field, str_index(w, s));
}

/* A packed repeated (u)int64 (int64 in two's complement, 10 bytes when
 * negative, as protobuf does); left out when empty. */
static void put_packed(struct writer *w, unsigned int field, const uint64_t *v,
		       size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += varint_size(v[i]);
	put_key(w, field, WT_LEN);
	put_varint(w, len);
	for (i = 0; i < n; i++)
		put_varint(w, v[i]);
}

/* A sub-message: its length (counted by emitting it once without output),
 * then its bytes. While only counting, one emission does both. */
static void put_msg(struct writer *w, unsigned int field, emit_fn *emit,
		    const void *obj)
{
	struct writer c = {.p = w->p, .t = w->t};
	size_t start;

	put_key(w, field, WT_LEN);
	emit(&c, obj);
	put_varint(w, c.n);
	if (!w->out) {
		w->n += c.n;
		return;
	}
	start = w->n;
	emit(w, obj);
	if (w->n - start != c.n)
		w->failed = true;
}

static void emit_value_type(struct writer *w, const void *obj)
{
	const struct pprof_value_type *vt = obj;

	put_str(w, 1, vt->type);
	put_str(w, 2, vt->unit);
}

static void emit_label(struct writer *w, const void *obj)
{
	const struct pprof_label *l = obj;

	put_str(w, 1, l->key);
	put_str(w, 2, l->str);
	put_scalar(w, 3, (uint64_t)l->num);
	put_str(w, 4, l->num_unit);
}

static void emit_sample(struct writer *w, const void *obj)
{
	const struct pprof_sample *s = obj;
	size_t i;

	put_packed(w, 1, s->location_ids, s->n_locations);
	/* int64 and uint64 may alias (C11 6.5p7) */
	put_packed(w, 2, (const uint64_t *)s->values, w->p->n_sample_types);
	for (i = 0; i < s->n_labels; i++)
		put_msg(w, 3, emit_label, &s->labels[i]);
}

static void emit_mapping(struct writer *w, const void *obj)
{
	const struct pprof_mapping *m = obj;

	put_scalar(w, 1, (uint64_t)(m - w->p->mappings) + 1);
	put_scalar(w, 2, m->start);
	put_scalar(w, 3, m->limit);
	put_scalar(w, 4, m->offset);
	put_str(w, 5, m->file);
	put_str(w, 6, m->build_id);
	put_scalar(w, 7, m->has_functions);
	put_scalar(w, 8, m->has_filenames);
	put_scalar(w, 9, m->has_line_numbers);
	put_scalar(w, 10, m->has_inline_frames);
}

static void emit_line(struct writer *w, const void *obj)
{
	const struct pprof_line *l = obj;

	put_scalar(w, 1, l->function_id);
	put_scalar(w, 2, (uint64_t)l->line);
}

static void emit_location(struct writer *w, const void *obj)
{
	const struct pprof_location *l = obj;
	size_t i;

	put_scalar(w, 1, (uint64_t)(l - w->p->locations) + 1);
	put_scalar(w, 2, l->mapping_id);
	put_scalar(w, 3, l->address);
	for (i = 0; i < l->n_lines; i++)
		put_msg(w, 4, emit_line, &l->lines[i]);
	put_scalar(w, 5, l->is_folded);
}

static void emit_function(struct writer *w, const void *obj)
{
	const struct pprof_function *f = obj;

	put_scalar(w, 1, (uint64_t)(f - w->p->functions) + 1);
	put_str(w, 2, f->name);
	put_str(w, 3, f->system_name);
	put_str(w, 4, f->file);
	put_scalar(w, 5, (uint64_t)f->start_line);
}

/* string_table: "" first (always, even with no other string). */
static void emit_strings(struct writer *w)
{
	const struct strtab *t = w->t;
	size_t i;

	for (i = 0; i < t->count; i++) {
		put_key(w, PROFILE_STRING_TABLE, WT_LEN);
		put_varint(w, t->order[i].len);
		put_bytes(w, t->order[i].s, t->order[i].len);
	}
}

/* comment: a packed repeated int64 of string indices. */
static void emit_comments(struct writer *w)
{
	const struct pprof_profile *p = w->p;
	size_t i, len = 0;

	if (!p->n_comments)
		return;
	for (i = 0; i < p->n_comments; i++)
		len += varint_size(str_index(w, p->comments[i]));
	put_key(w, PROFILE_COMMENT, WT_LEN);
	put_varint(w, len);
	for (i = 0; i < p->n_comments; i++)
		put_varint(w, str_index(w, p->comments[i]));
}

/*
 * The whole profile, fields in number order. Counting, the string table
 * is not complete at field 6 (fields 7 to 14 name strings too), so its
 * size is added at the end: a size does not depend on the order.
 */
static void emit_profile(struct writer *w)
{
	const struct pprof_profile *p = w->p;
	size_t i;

	for (i = 0; i < p->n_sample_types; i++)
		put_msg(w, PROFILE_SAMPLE_TYPE, emit_value_type,
			&p->sample_types[i]);
	for (i = 0; i < p->n_samples; i++)
		put_msg(w, PROFILE_SAMPLE, emit_sample, &p->samples[i]);
	for (i = 0; i < p->n_mappings; i++)
		put_msg(w, PROFILE_MAPPING, emit_mapping, &p->mappings[i]);
	for (i = 0; i < p->n_locations; i++)
		put_msg(w, PROFILE_LOCATION, emit_location, &p->locations[i]);
	for (i = 0; i < p->n_functions; i++)
		put_msg(w, PROFILE_FUNCTION, emit_function, &p->functions[i]);
	if (w->out)
		emit_strings(w);
	put_str(w, PROFILE_DROP_FRAMES, p->drop_frames);
	put_str(w, PROFILE_KEEP_FRAMES, p->keep_frames);
	put_scalar(w, PROFILE_TIME_NANOS, (uint64_t)p->time_nanos);
	put_scalar(w, PROFILE_DURATION_NANOS, (uint64_t)p->duration_nanos);
	if ((p->period_type.type && *p->period_type.type) ||
	    (p->period_type.unit && *p->period_type.unit))
		put_msg(w, PROFILE_PERIOD_TYPE, emit_value_type,
			&p->period_type);
	put_scalar(w, PROFILE_PERIOD, (uint64_t)p->period);
	emit_comments(w);
	put_str(w, PROFILE_DEFAULT_SAMPLE_TYPE, p->default_sample_type);
	if (!w->out)
		emit_strings(w);
}

static void put_le32(unsigned char *o, uint32_t v)
{
	o[0] = (unsigned char)v;
	o[1] = (unsigned char)(v >> 8);
	o[2] = (unsigned char)(v >> 16);
	o[3] = (unsigned char)(v >> 24);
}

/*
 * Frame the n protobuf bytes at out + GZIP_HEADER + blocks * STORED_HEADER
 * as a gzip file: header, stored blocks (each moved down to follow its
 * header; the header of block i ends at or before where block i's bytes
 * still are), CRC-32 and ISIZE.
 */
static void gzip_frame(unsigned char *out, size_t n, size_t blocks)
{
	/* ID1 ID2 CM=8 (deflate) FLG=0 MTIME=0 XFL=0 OS=3 (Unix) */
	static const unsigned char header[GZIP_HEADER] = {0x1f, 0x8b, 8, 0, 0,
							  0,	0,    0, 0, 3};
	const unsigned char *src = out + GZIP_HEADER + blocks * STORED_HEADER;
	unsigned char *dst = out + GZIP_HEADER;
	uint32_t crc = pprof_pack_crc32(0, src, n);
	size_t i, left = n, b;

	memcpy(out, header, sizeof(header));
	for (i = 0; i < blocks; i++) {
		b = left < STORED_MAX ? left : STORED_MAX;
		/* BFINAL in bit 0, BTYPE 00, then LEN and NLEN, little end */
		dst[0] = i + 1 == blocks;
		dst[1] = (unsigned char)b;
		dst[2] = (unsigned char)(b >> 8);
		dst[3] = (unsigned char)~b;
		dst[4] = (unsigned char)(~b >> 8);
		dst += STORED_HEADER;
		if (dst != src)
			memmove(dst, src, b);
		dst += b;
		src += b;
		left -= b;
	}
	put_le32(dst, crc);
	put_le32(dst + 4, (uint32_t)n);
}

int pprof_pack(const struct pprof_profile *p, bool gzip, void **buf,
	       size_t *len)
{
	const struct pprof_allocator *a = &p->internal->a;
	struct strtab t;
	struct writer w = {.p = p, .t = &t};
	size_t n, blocks, head = 0, total;
	unsigned char *out;

	if (strtab_init(&t, p) < 0)
		return -1;
	emit_profile(&w);
	if (t.failed) {
		strtab_fini(&t);
		return msg_set_errno(ENOMEM, "cannot encode profile");
	}
	n = w.n;
	total = n;
	blocks = n / STORED_MAX + (n % STORED_MAX != 0);
	if (gzip) {
		head = GZIP_HEADER + blocks * STORED_HEADER;
		total = SIZE_MAX - head - GZIP_TRAILER < n
				? 0
				: head + n + GZIP_TRAILER;
	}
	if (!total) {
		strtab_fini(&t);
		return msg_set("cannot encode profile: too large");
	}
	out = pprof_int_alloc(a, 1, total);
	if (!out) {
		strtab_fini(&t);
		return -1;
	}
	w = (struct writer){.p = p, .t = &t, .out = out + head, .cap = n};
	emit_profile(&w);
	strtab_fini(&t);
	if (w.failed || w.n != n || t.failed) {
		pprof_int_free(a, out);
		return msg_set("cannot encode profile: internal error (%zu "
			       "bytes counted, %zu written)",
			       n, w.n);
	}
	if (gzip)
		gzip_frame(out, n, blocks);
	*buf = out;
	*len = total;
	return 0;
}

void pprof_pack_free(const struct pprof_profile *p, void *buf)
{
	pprof_int_free(&p->internal->a, buf);
}
