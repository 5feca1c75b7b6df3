/* SPDX-License-Identifier: MIT */
/* The protobuf wire format written by hand: varints, keys, sub-messages. */
#ifndef PALLOC_PBWIRE_H
#define PALLOC_PBWIRE_H

#include "common.h"

/*
 * A small writer for the protobuf wire format (protobuf.dev,
 * "Encoding"), shared by the agent's profile.proto encoder
 * (pprof_pack.c) and the commands' OTLP encoder (tools/otlp.c), so that
 * neither needs protobuf-c for what it writes.
 *
 * It works in two passes with the same code: a writer whose out is NULL
 * only counts bytes in n; one whose out points to cap bytes writes them
 * at out + n. A sub-message (pbw_msg()) is emitted once counting to get
 * its length prefix and once writing, so nothing is staged: memory is the
 * caller's buffer of the size the first pass counted. Writing more than
 * cap sets failed and writes nothing more (the caller's second pass then
 * disagrees with its first: an internal error, never an overflow).
 *
 * Pure functions of their arguments: no allocation, no lock, no errno;
 * any thread, and inside the target (the agent links pprof/).
 */

enum {
	PBW_VARINT = 0, /* int32, int64, uint64, bool, enum */
	PBW_I64 = 1,	/* fixed64 */
	PBW_LEN = 2,	/* bytes, string, sub-message, packed repeated */
};

struct pbw_writer {
	unsigned char *out; /* NULL: count only */
	size_t n;	    /* bytes counted or written */
	size_t cap;	    /* bytes at out */
	bool failed;	    /* a write past cap was refused */
	void *ctx;	    /* the emitters' own state, copied into
			     * the counting writer of pbw_msg() */
};

/* Emit obj's fields into w (counting or writing). */
typedef void pbw_emit_fn(struct pbw_writer *w, const void *obj);

/* Bytes of v as a varint: 1 to 10. */
size_t pbw_varint_size(uint64_t v);

/* len raw bytes (no key, no length). */
void pbw_raw(struct pbw_writer *w, const void *data, size_t len);

/* A varint (no key); an int64 or int32 is passed as its two's complement
 * uint64 (10 bytes when negative, as protobuf does). */
void pbw_varint(struct pbw_writer *w, uint64_t v);

/* A field key: (field << 3) | wire type. */
void pbw_key(struct pbw_writer *w, unsigned int field, unsigned int wt);

/* A proto3 varint scalar field; left out when zero (proto3's default). */
void pbw_scalar(struct pbw_writer *w, unsigned int field, uint64_t v);

/* A proto3 fixed64 field (8 bytes, little end); left out when zero. */
void pbw_fixed64(struct pbw_writer *w, unsigned int field, uint64_t v);

/* A length-delimited field of len bytes at data (a string, bytes, or a
 * sub-message encoded beforehand). Written even when len is 0: a
 * repeated string's "" is an element. */
void pbw_bytes(struct pbw_writer *w, unsigned int field, const void *data,
	       size_t len);

/* A packed repeated varint field of n values; left out when n is 0. */
void pbw_packed(struct pbw_writer *w, unsigned int field, const uint64_t *v,
		size_t n);

/* A sub-message: emit(w, obj) counted, its length, then its bytes. Written
 * even when empty (a repeated message's zero value is an element). */
void pbw_msg(struct pbw_writer *w, unsigned int field, pbw_emit_fn *emit,
	     const void *obj);

#endif /* PALLOC_PBWIRE_H */
