/* SPDX-License-Identifier: MIT */
/* Test helper: build a record (wire/record.h) in memory, entry by entry. */
#ifndef PALLOC_RECORD_BUILD_H
#define PALLOC_RECORD_BUILD_H

#include "common.h"
#include "record.h"

/*
 * A record as the agent lays it out: the header (magic, version,
 * header_size, size; the rest zero, anon_* and heap/unseen -1) then
 * entries appended, each zeroed and its header.size published. The
 * buffer moves as it grows (malloc; aborts on ENOMEM): keep offsets, and
 * reach the bodies with RB_AT() after the last append.
 */
struct rb {
	unsigned char *buf;
	size_t size, cap;
};

#define RB_AT(b, off, type) ((type *)(void *)((b)->buf + (off)))
#define RB_HDR(b) RB_AT(b, 0, struct record_header)

void rb_init(struct rb *b);
void rb_free(struct rb *b);
/* Append an entry of type with body_len bytes (rounded up to 16). The
 * body's offset. */
size_t rb_entry(struct rb *b, uint32_t type, size_t body_len);
/* The next stack (id n_stacks + 1): its body's offset. */
size_t rb_stack(struct rb *b, const char *thread, const uint64_t *pcs,
		uint32_t depth);
size_t rb_module(struct rb *b, uint64_t start, uint64_t limit, uint64_t offset,
		 const char *build_id, const char *path);
size_t rb_thread(struct rb *b, int32_t tid);
/* A RECS entry of cap records, set as thread t's table. */
size_t rb_recs(struct rb *b, size_t thread, uint32_t cap);
/* The allocator's text, in a TEXT entry. */
size_t rb_text(struct rb *b, const char *text);

/* The record of t/unit/record.c's first profile and of t/4008: see
 * record_build.c. rate 1 or 4096. */
void rb_known(struct rb *b, uint64_t rate);

#endif /* PALLOC_RECORD_BUILD_H */

/*
 * The compact form of a record, for the fuzz target (fuzz/record_fuzz.c)
 * and its seeds: the 16 KiB header region is mostly zeros and strings, so
 * the input holds only
 *
 *	a control byte (RB_RAW_*: what the expansion leaves as input gave)
 *	the header's bytes [0, offsetof(exe))
 *	the header's bytes [offsetof(exited_alloc_count), offsetof(title))
 *	the header's bytes [offsetof(allocator), sizeof(header))
 *	the entries, placed at RECORD_DATA
 *
 * and the expansion writes the strings ("fuzz", NUL-terminated) and, by
 * default, the magic, version, header_size and size (that of the
 * entries), so that mutations reach the entries.
 */
#define RB_RAW_MAGIC 1	 /* magic, version, header_size as input */
#define RB_RAW_SIZE 2	 /* header.size as input */
#define RB_RAW_STRINGS 4 /* the strings all 'x', no NUL */
#define RB_SLACK 8	 /* 64 bytes past size in the image */

/* Expand data[0, size) into a new image *img (16-byte aligned, malloc)
 * of *len bytes; false when data is shorter than the header parts. */
bool rb_expand(const uint8_t *data, size_t size, unsigned char **img,
	       size_t *len);
/* The compact form of b (control byte 0) into a new buffer *out. */
void rb_compact(const struct rb *b, unsigned char **out, size_t *len);
