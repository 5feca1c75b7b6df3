/* SPDX-License-Identifier: MIT */
/* The protobuf wire format written by hand (pbwire.h). */
#include "common.h"
#include "pbwire.h"

size_t pbw_varint_size(uint64_t v)
{
	/* 7 bits a byte: 1 for 0..127, 10 for the top bit set */
	return (size_t)(64 - __builtin_clzll(v | 1) + 6) / 7;
}

void pbw_raw(struct pbw_writer *w, const void *data, size_t len)
{
	if (w->out) {
		if (w->failed || len > w->cap - w->n) {
			w->failed = true;
			return;
		}
		if (len)
			memcpy(w->out + w->n, data, len);
	}
	w->n += len;
}

void pbw_varint(struct pbw_writer *w, uint64_t v)
{
	unsigned char *o;

	if (!w->out) {
		w->n += pbw_varint_size(v);
		return;
	}
	if (w->failed || pbw_varint_size(v) > w->cap - w->n) {
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

void pbw_key(struct pbw_writer *w, unsigned int field, unsigned int wt)
{
	pbw_varint(w, (uint64_t)field << 3 | wt);
}

void pbw_scalar(struct pbw_writer *w, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pbw_key(w, field, PBW_VARINT);
	pbw_varint(w, v);
}

void pbw_fixed64(struct pbw_writer *w, unsigned int field, uint64_t v)
{
	unsigned char b[8];
	int i;

	if (!v)
		return;
	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	pbw_key(w, field, PBW_I64);
	pbw_raw(w, b, sizeof(b));
}

void pbw_bytes(struct pbw_writer *w, unsigned int field, const void *data,
	       size_t len)
{
	pbw_key(w, field, PBW_LEN);
	pbw_varint(w, len);
	pbw_raw(w, data, len);
}

void pbw_packed(struct pbw_writer *w, unsigned int field, const uint64_t *v,
		size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += pbw_varint_size(v[i]);
	pbw_key(w, field, PBW_LEN);
	pbw_varint(w, len);
	for (i = 0; i < n; i++)
		pbw_varint(w, v[i]);
}

void pbw_msg(struct pbw_writer *w, unsigned int field, pbw_emit_fn *emit,
	     const void *obj)
{
	struct pbw_writer c = {.ctx = w->ctx};
	size_t start;

	pbw_key(w, field, PBW_LEN);
	emit(&c, obj);
	pbw_varint(w, c.n);
	if (!w->out) {
		/* While only counting, the one emission did both. */
		w->n += c.n;
		return;
	}
	start = w->n;
	emit(w, obj);
	if (w->n - start != c.n)
		w->failed = true;
}
