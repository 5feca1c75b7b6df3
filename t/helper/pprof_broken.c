/* SPDX-License-Identifier: MIT */
/* Builds broken profiles with protobuf-c and zlib, for tests and fuzzing. */
#include "pprof_broken.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"

/* Every piece of one small valid profile; a variant breaks one thing. */
struct base {
	Perftools__Profiles__Profile p;
	Perftools__Profiles__ValueType st[2], *stp[2];
	Perftools__Profiles__Mapping map, *mapp[1];
	Perftools__Profiles__Function fn, *fnp[1];
	Perftools__Profiles__Line line, *linep[1];
	Perftools__Profiles__Location loc[2], *locp[2];
	Perftools__Profiles__Label lab, *labp[1];
	Perftools__Profiles__Sample smp[2], *smpp[2];
	uint64_t ids0[2], ids1[1];
	int64_t vals0[2], vals1[2];
	char *strs[9];
};

static const char *const base_strings[9] = {
	"",	  "alloc_space", "bytes",  "inuse_space", "main",
	"/bin/x", "x.c",	 "thread", "t1",
};

static void base_init(struct base *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	perftools__profiles__profile__init(&b->p);
	for (i = 0; i < 9; i++)
		b->strs[i] = (char *)base_strings[i];
	b->p.n_string_table = 9;
	b->p.string_table = b->strs;
	for (i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&b->st[i]);
		b->st[i].type = i ? 3 : 1;
		b->st[i].unit = 2;
		b->stp[i] = &b->st[i];
	}
	b->p.n_sample_type = 2;
	b->p.sample_type = b->stp;
	perftools__profiles__mapping__init(&b->map);
	b->map.id = 1;
	b->map.memory_start = 0x1000;
	b->map.memory_limit = 0x9000;
	b->map.filename = 5;
	b->mapp[0] = &b->map;
	b->p.n_mapping = 1;
	b->p.mapping = b->mapp;
	perftools__profiles__function__init(&b->fn);
	b->fn.id = 1;
	b->fn.name = 4;
	b->fn.system_name = 4;
	b->fn.filename = 6;
	b->fnp[0] = &b->fn;
	b->p.n_function = 1;
	b->p.function = b->fnp;
	perftools__profiles__line__init(&b->line);
	b->line.function_id = 1;
	b->line.line = 10;
	b->linep[0] = &b->line;
	for (i = 0; i < 2; i++) {
		perftools__profiles__location__init(&b->loc[i]);
		b->loc[i].id = i + 1;
		b->loc[i].mapping_id = 1;
		b->loc[i].address = 0x1000 * (i + 2);
		b->locp[i] = &b->loc[i];
	}
	b->loc[0].n_line = 1;
	b->loc[0].line = b->linep;
	b->p.n_location = 2;
	b->p.location = b->locp;
	perftools__profiles__label__init(&b->lab);
	b->lab.key = 7;
	b->lab.str = 8;
	b->labp[0] = &b->lab;
	b->ids0[0] = 1;
	b->ids0[1] = 2;
	b->ids1[0] = 2;
	b->vals0[0] = 100;
	b->vals0[1] = 50;
	b->vals1[0] = 10;
	for (i = 0; i < 2; i++) {
		perftools__profiles__sample__init(&b->smp[i]);
		b->smp[i].n_value = 2;
		b->smpp[i] = &b->smp[i];
	}
	b->smp[0].n_location_id = 2;
	b->smp[0].location_id = b->ids0;
	b->smp[0].value = b->vals0;
	b->smp[0].n_label = 1;
	b->smp[0].label = b->labp;
	b->smp[1].n_location_id = 1;
	b->smp[1].location_id = b->ids1;
	b->smp[1].value = b->vals1;
	b->p.n_sample = 2;
	b->p.sample = b->smpp;
}

static size_t pack(const struct base *b, unsigned char **out)
{
	size_t len = perftools__profiles__profile__get_packed_size(&b->p);

	*out = malloc(len ? len : 1);
	if (!*out)
		return 0;
	return perftools__profiles__profile__pack(&b->p, *out);
}

static size_t gzip_bytes(const unsigned char *in, size_t len,
			 unsigned char **out)
{
	z_stream z = {0};
	size_t cap = len + len / 100 + 64;

	*out = malloc(cap);
	if (!*out || deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8,
				  Z_DEFAULT_STRATEGY) != Z_OK) {
		free(*out);
		return 0;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(*out);
		return 0;
	}
	deflateEnd(&z);
	return cap - z.avail_out;
}

size_t pprof_broken_valid(unsigned char **out, int gzip)
{
	struct base b;
	unsigned char *plain;
	size_t len;

	base_init(&b);
	len = pack(&b, &plain);
	if (!len || !gzip) {
		*out = plain;
		return len;
	}
	len = gzip_bytes(plain, len, out);
	free(plain);
	return len;
}

/* A fixed xorshift stream: "random" bytes that are the same every run. */
static void fill_random(unsigned char *b, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		b[i] = (unsigned char)seed;
	}
}

static int add(struct pprof_broken *out, size_t *n, const char *name,
	       const char *expect, unsigned char *data, size_t len)
{
	if (!data)
		return -1;
	out[*n].name = name;
	out[*n].expect = expect;
	out[*n].data = data;
	out[*n].len = len;
	(*n)++;
	return 0;
}

/* A valid base with one field broken by variant v. */
static size_t broken_message(int v, unsigned char **out)
{
	struct base b;
	char x[] = "x", *bad0[1] = {x};

	base_init(&b);
	switch (v) {
	case 0:
		b.fn.name = 999;
		break;
	case 1:
		b.loc[0].mapping_id = 3;
		break;
	case 2:
		b.ids1[0] = 42;
		break;
	case 3:
		b.line.function_id = 9;
		break;
	case 4:
		b.loc[1].id = 1;
		break;
	case 5:
		b.map.id = 0;
		break;
	case 6:
		b.smp[1].n_value = 1;
		break;
	case 7:
		b.p.n_string_table = 1;
		b.p.string_table = bad0;
		break;
	case 8:
		b.lab.key = -1;
		break;
	case 9:
		b.p.n_string_table = 0;
		break;
	}
	return pack(&b, out);
}

size_t pprof_broken_make(struct pprof_broken *out)
{
	static const struct {
		const char *name, *expect;
	} variants[] = {
		{"string-index.pb", "has string index 999, out of range"},
		{"missing-mapping.pb",
		 "location 1 refers to missing mapping 3"},
		{"missing-location.pb",
		 "sample 2 refers to missing location 42"},
		{"missing-function.pb",
		 "location 1 line 1 refers to missing function 9"},
		{"duplicate-location.pb", "duplicate location id 1"},
		{"zero-mapping-id.pb", "mapping at index 0 has id 0"},
		{"value-count.pb", "sample 2 has 1 values for 2 sample types"},
		{"string-table-0.pb", "string_table[0] is not empty"},
		{"negative-string-index.pb", "label key has string index -1"},
		{"no-string-table.pb", "no string table"},
	};
	/* field 2 (sample), wire type 2, length 2^35: far past the end */
	static const unsigned char huge[] = {0x12, 0x80, 0x80, 0x80, 0x80,
					     0x80, 0x01, 0x08, 0x01};
	/* field 1 (sample_type, a message) sent as a varint */
	static const unsigned char wrong_type[] = {0x08, 0x01};
	unsigned char *valid, *gz, *buf, *garbage;
	size_t n = 0, vlen, gzlen, len, i;

	vlen = pprof_broken_valid(&valid, 0);
	gzlen = pprof_broken_valid(&gz, 1);
	if (!vlen || !gzlen)
		goto fail;

	if (add(out, &n, "empty.pb", "empty input", malloc(1), 0) < 0)
		goto fail;

	buf = malloc(512);
	if (buf) {
		fill_random(buf, 512, 0x9e3779b97f4a7c15ULL);
		buf[0] = 0x0a; /* not the gzip magic */
	}
	if (add(out, &n, "random.pb", "malformed protobuf", buf, 512) < 0)
		goto fail;

	buf = malloc(gzlen / 2);
	if (buf)
		memcpy(buf, gz, gzlen / 2);
	if (add(out, &n, "truncated.pb.gz", "truncated gzip data", buf,
		gzlen / 2) < 0)
		goto fail;

	buf = malloc(4096);
	if (buf)
		fill_random(buf, 4096, 12345);
	len = buf ? gzip_bytes(buf, 4096, &garbage) : 0;
	free(buf);
	if (add(out, &n, "gzip-garbage.pb.gz", "malformed protobuf",
		len ? garbage : NULL, len) < 0)
		goto fail;

	buf = malloc(gzlen);
	if (buf) {
		memcpy(buf, gz, gzlen);
		for (i = 12; i < gzlen - 8; i += 3)
			buf[i] ^= 0x5a;
	}
	if (add(out, &n, "corrupt.pb.gz", "invalid gzip data", buf, gzlen) < 0)
		goto fail;

	buf = malloc(gzlen + 5);
	if (buf) {
		memcpy(buf, gz, gzlen);
		memcpy(buf + gzlen, "junk!", 5);
	}
	if (add(out, &n, "trailing.pb.gz", "trailing garbage", buf, gzlen + 5) <
	    0)
		goto fail;

	buf = malloc(sizeof(huge));
	if (buf)
		memcpy(buf, huge, sizeof(huge));
	if (add(out, &n, "huge-length.pb", "declares 34359738368 bytes", buf,
		sizeof(huge)) < 0)
		goto fail;

	buf = malloc(sizeof(wrong_type));
	if (buf)
		memcpy(buf, wrong_type, sizeof(wrong_type));
	if (add(out, &n, "wrong-wire-type.pb", "malformed protobuf", buf,
		sizeof(wrong_type)) < 0)
		goto fail;

	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		len = broken_message((int)i, &buf);
		if (add(out, &n, variants[i].name, variants[i].expect,
			len ? buf : NULL, len) < 0)
			goto fail;
	}
	free(valid);
	free(gz);
	return n;
fail:
	free(valid);
	free(gz);
	pprof_broken_free(out, n);
	return 0;
}

void pprof_broken_free(struct pprof_broken *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(b[i].data);
}
