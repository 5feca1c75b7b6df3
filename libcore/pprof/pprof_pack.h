/* SPDX-License-Identifier: MIT */
/* profile.proto in a gzip container, written without protobuf-c or zlib. */
#ifndef PALLOC_PPROF_PACK_H
#define PALLOC_PPROF_PACK_H

#include "pprof.h"

/*
 * The agent's encoder: what pprof_encode() (pprof_encode.c) writes, by
 * hand, so that the target links neither protobuf-c nor zlib. The
 * protobuf is the proto3 wire form of proto/profile.proto: fields in
 * number order, zero scalars and false bools left out, repeated scalars
 * packed, ids dense (index + 1), string_table[0] "" and every other
 * string once, in the order of first use. The gzip file (RFC 1952) holds
 * one DEFLATE stream (RFC 1951) of stored blocks (BTYPE 00: no
 * compression, at most 65535 bytes each), mtime 0, OS 3 (Unix), then the
 * CRC-32 and the size mod 2^32. Any gzip reader (zlib, Go's
 * compress/gzip, gunzip) reads it; it is the size of the protobuf plus
 * 18 bytes and 5 per 65535.
 *
 * Memory comes from p's allocator only (the agent's arena inside the
 * target; no malloc, no stdio, no lock but the allocator's): the string
 * index while encoding, and one buffer of the exact size, written in
 * place. p is only read; encoding distinct profiles from several threads
 * at once is safe. Not async-signal-safe (the allocator).
 */

/*
 * Encode p, gzipped when gzip is true (else the bare protobuf), into a
 * new buffer from p's allocator: *buf and *len (bytes), freed with
 * pprof_pack_free(). 0, or -1 with msg_set() (ENOMEM; a profile whose
 * encoding would exceed SIZE_MAX) and *buf untouched.
 */
int pprof_pack(const struct pprof_profile *p, bool gzip, void **buf,
	       size_t *len);

/* Free a buffer of pprof_pack(p, ...). NULL is allowed. */
void pprof_pack_free(const struct pprof_profile *p, void *buf);

/*
 * CRC-32 of ISO 3309 / ITU-T V.42 (gzip's and zlib's crc32(): reflected,
 * polynomial 0xedb88320, initial and final complement), continued from
 * crc (0 to start) over the len bytes at data. A table built at compile
 * time; pure, any thread or signal handler.
 */
uint32_t pprof_pack_crc32(uint32_t crc, const void *data, size_t len);

#endif /* PALLOC_PPROF_PACK_H */
