/* SPDX-License-Identifier: MIT */
/* palloc-run --timeline's NDJSON read back: samples and events, bounded. */
#ifndef PALLOC_TIMELINE_READ_H
#define PALLOC_TIMELINE_READ_H

#include "common.h"

#include <jansson.h>

/*
 * A timeline (palloc(7) "Timeline") is NDJSON: one object a line, "type"
 * "sample" or "event", each with "time_ns" (CLOCK_REALTIME) and "pid".
 * The file is outside input: a line longer than TIMELINE_MAX_LINE, a file
 * larger than TIMELINE_MAX_BYTES or more than TIMELINE_MAX_RECORDS lines
 * is refused; a line that is not a JSON object with an integer time_ns
 * and pid is refused, except a last line without its newline (the writer
 * was killed while writing it), which is dropped and counted. Objects of
 * another "type" are skipped (a later writer's additions). Library code:
 * errors are -1 with msg_set(); nothing is printed.
 */
#define TIMELINE_MAX_LINE (64 * 1024)
#define TIMELINE_MAX_BYTES ((size_t)512 << 20)
#define TIMELINE_MAX_RECORDS ((size_t)8 << 20)

/* The byte figures of a sample line, in the order of timeline_fields[]. */
enum {
	TL_HEAP_INUSE,
	TL_HEAP_ALLOC,
	TL_ALLOC_RESIDENT,
	TL_ALLOC_FREE,
	TL_RSS,
	TL_ANON,
	TL_FILE,
	TL_SHMEM,
	TL_SWAP,
	TL_CG_USAGE,
	TL_CG_LIMIT,
	TL_NFIELDS
};

/* The sample lines' keys ("heap_inuse_bytes"...), TL_NFIELDS of them. */
extern const char *const timeline_fields[TL_NFIELDS];

struct timeline_sample {
	int64_t time_ns;
	int64_t pid;
	int64_t v[TL_NFIELDS]; /* bytes; -1: null, absent or not a count */
};

struct timeline_event {
	int64_t time_ns;
	int64_t pid;
	json_t *obj;	   /* the whole line (owned reference) */
	const char *event; /* its "event" string ("" when none); owned by obj */
	const char *path;  /* profile events: "path", else NULL; owned by obj */
	const char *kind;  /* profile events: "kind", else NULL; owned by obj */
};

struct timeline_doc {
	struct timeline_sample *samples; /* in file order */
	size_t n_samples;
	struct timeline_event *events; /* in file order */
	size_t n_events;
	size_t skipped; /* lines of another type */
	bool truncated; /* a last partial line was dropped */
};

/*
 * Parse LEN bytes of NDJSON at BUF into *t (zeroed first). Returns 0, or
 * -1 with msg_set() naming the line ("line 3: ...") or ENOMEM; *t is
 * released with timeline_doc_free() either way.
 */
int timeline_doc_parse(const char *buf, size_t len, struct timeline_doc *t);

/*
 * Read the file PATH (a regular file, infile.h) and parse it. Returns 0, or
 * -1 with msg_set() naming PATH and nothing left in *t to free.
 */
int timeline_doc_read(const char *path, struct timeline_doc *t);

/* Free what *t holds (not t itself). */
void timeline_doc_free(struct timeline_doc *t);

#endif /* PALLOC_TIMELINE_READ_H */
