/* SPDX-License-Identifier: MIT */
/* glibc's malloc_info(3) XML as the "arenas" and "total" of palloc-mallinfo.
 */
#include "common.h"
#include "json.h"
#include "mallinfo_xml.h"
#include "msg.h"

/*
 * Tags are found by '<' and '>', a tag's
 * name ends at a space, '/' or '>', and numeric attributes are read as
 * name="digits". Nothing else of XML is needed: malloc_info writes no
 * text, comments or entities.
 */

/* The numeric attribute name="N" of the tag tag[0, n), or -1. */
static int64_t xml_attr(const char *tag, size_t n, const char *name)
{
	char pat[32];
	size_t pl;
	const char *p = tag, *end = tag + n;

	pl = (size_t)snprintf(pat, sizeof(pat), " %s=\"", name);
	while (p + pl <= end) {
		if (memcmp(p, pat, pl) == 0) {
			int64_t v = 0;

			p += pl;
			if (p >= end || *p < '0' || *p > '9')
				return -1;
			while (p < end && *p >= '0' && *p <= '9') {
				if (v > (INT64_MAX - 9) / 10)
					return -1;
				v = v * 10 + (*p++ - '0');
			}
			/* the value ends at its quote: "132 000" is not 132 */
			return p < end && *p == '"' ? v : -1;
		}
		p++;
	}
	return -1;
}

/* Whether the attribute type="val" is in tag[0, n). */
static bool xml_type_is(const char *tag, size_t n, const char *val)
{
	char pat[32];
	size_t pl = (size_t)snprintf(pat, sizeof(pat), " type=\"%s\"", val);

	for (const char *p = tag; p + pl <= tag + n; p++)
		if (memcmp(p, pat, pl) == 0)
			return true;
	return false;
}

/* The totals of one <heap> (or of the document's top level). */
struct totals {
	int64_t fast_count, fast_bytes, rest_count, rest_bytes, mmap_count,
		mmap_bytes, system_current_bytes, system_max_bytes,
		aspace_total_bytes, aspace_mprotect_bytes;
};

static void totals_init(struct totals *t)
{
	memset(t, 0xff, sizeof(*t)); /* every field -1: not reported */
}

/* In the order malloc_info writes them; the mmap ones in "total" only. */
#define FIELD(name)                                                            \
	{                                                                      \
#name, offsetof(struct totals, name)                           \
	}
static const struct json_i64_field totals_fields[] = {
	FIELD(fast_count),	     FIELD(fast_bytes),
	FIELD(rest_count),	     FIELD(rest_bytes),
	FIELD(mmap_count),	     FIELD(mmap_bytes),
	FIELD(system_current_bytes), FIELD(system_max_bytes),
	FIELD(aspace_total_bytes),   FIELD(aspace_mprotect_bytes),
};
#undef FIELD
#define N_BEFORE_MMAP 4
#define N_MMAP 2

static void totals_json(json_t *o, const struct totals *t, bool with_mmap)
{
	const size_t after = N_BEFORE_MMAP + N_MMAP;

	json_set_i64_fields(o, t, totals_fields,
			    with_mmap ? after : N_BEFORE_MMAP);
	json_set_i64_fields(o, t, totals_fields + after,
			    ARRAY_SIZE(totals_fields) - after);
}

static void total_tag(struct totals *t, const char *name, size_t nl,
		      const char *tag, size_t n)
{
	int64_t count = xml_attr(tag, n, "count");
	int64_t size = xml_attr(tag, n, "size");

	if (nl == 5 && memcmp(name, "total", 5) == 0) {
		if (xml_type_is(tag, n, "fast")) {
			t->fast_count = count;
			t->fast_bytes = size;
		} else if (xml_type_is(tag, n, "rest")) {
			t->rest_count = count;
			t->rest_bytes = size;
		} else if (xml_type_is(tag, n, "mmap")) {
			t->mmap_count = count;
			t->mmap_bytes = size;
		}
	} else if (nl == 6 && memcmp(name, "system", 6) == 0) {
		if (xml_type_is(tag, n, "current"))
			t->system_current_bytes = size;
		else if (xml_type_is(tag, n, "max"))
			t->system_max_bytes = size;
	} else if (nl == 6 && memcmp(name, "aspace", 6) == 0) {
		if (xml_type_is(tag, n, "total"))
			t->aspace_total_bytes = size;
		else if (xml_type_is(tag, n, "mprotect"))
			t->aspace_mprotect_bytes = size;
	}
}

/* Length of the name at name[0, end): a closing tag keeps its '/'. */
static size_t name_len(const char *name, const char *end)
{
	const char *p = name + (name < end && *name == '/');

	while (p < end && *p != ' ' && *p != '/' && *p != '>')
		p++;
	return (size_t)(p - name);
}

int mallinfo_xml_json(json_t *specific, const char *xml, size_t len)
{
	struct totals heap, all;
	json_t *arenas = json_array(), *cur = NULL, *chunks = NULL;
	json_t *total = json_object();
	const char *p = xml, *end = xml + len;
	int heaps = 0;

	totals_init(&all);
	totals_init(&heap);
	while (p < end && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		const char *gt = memchr(p, '>', (size_t)(end - p)),
			   *name = p + 1;
		size_t n, nl;

		if (!gt)
			break;
		n = (size_t)(gt - p);
		nl = name_len(name, gt);
		if (nl == 4 && memcmp(name, "heap", 4) == 0) {
			/* A <heap> inside a <heap> (not glibc's output):
			 * close the open one. */
			if (cur)
				totals_json(cur, &heap, false);
			totals_init(&heap);
			cur = json_object();
			chunks = json_array();
			json_set_i64(cur, "index", xml_attr(p, n, "nr"));
			json_set(cur, "free_chunks", chunks);
			json_push(arenas, cur);
			heaps++;
		} else if (nl == 5 && memcmp(name, "/heap", 5) == 0 && cur) {
			totals_json(cur, &heap, false);
			cur = chunks = NULL;
		} else if (cur && ((nl == 4 && !memcmp(name, "size", 4)) ||
				   (nl == 8 && !memcmp(name, "unsorted", 8)))) {
			json_t *c = json_object();

			json_set(c, "kind",
				 json_string(nl == 4 ? "bin" : "unsorted"));
			json_set_i64(c, "from_bytes", xml_attr(p, n, "from"));
			json_set_i64(c, "to_bytes", xml_attr(p, n, "to"));
			json_set_i64(c, "total_bytes", xml_attr(p, n, "total"));
			json_set_i64(c, "count", xml_attr(p, n, "count"));
			json_push(chunks, c);
		} else {
			total_tag(cur ? &heap : &all, name, nl, p, n);
		}
		p = gt + 1;
	}
	if (cur)
		totals_json(cur, &heap, false);
	totals_json(total, &all, true);
	json_set(specific, "arenas", arenas);
	json_set(specific, "total", total);
	if (json_failed())
		return msg_set("out of memory");
	return heaps;
}
