/* SPDX-License-Identifier: MIT */
/* glibc's malloc_info(3) XML as the "arenas" and "total" of palloc-mallinfo.
 */
#ifndef PALLOC_MALLINFO_XML_H
#define PALLOC_MALLINFO_XML_H

#include "common.h"

#include <jansson.h>

/*
 * A pure function of the text: the commands call it on the XML an agent
 * left in its record (wire/record.h, header.allocator.text), which the
 * target may have written anything into. xml[0, len) need not be
 * NUL-terminated; it may be cut anywhere (a text cut at its capacity).
 *
 * Into the object specific, as palloc-mallinfo(1) documents them:
 * "arenas": [{"index", "free_chunks": [{"kind": "bin"|"unsorted",
 * "from_bytes", "to_bytes", "total_bytes", "count"}], "fast_count",
 * "fast_bytes", "rest_count", "rest_bytes", "system_current_bytes",
 * "system_max_bytes", "aspace_total_bytes", "aspace_mprotect_bytes"}],
 * in the XML's order (<heap nr="N">), and "total": the same totals with
 * "mmap_count" and "mmap_bytes", from the tags after the last </heap>;
 * null where the XML does not say. Returns the number of heaps (0 for an
 * empty or unreadable text), or -1 on ENOMEM (json_failed() then says
 * so). Thread-safe.
 */
int mallinfo_xml_json(json_t *specific, const char *xml, size_t len);

#endif /* PALLOC_MALLINFO_XML_H */
