/* SPDX-License-Identifier: MIT */
/* Unit tests of the malloc_info XML reader (tools/mallinfo_xml.c) and the
 * unseen-memory figures of tools/record_docs.c. */
#include "common.h"
#include "json.h"
#include "mallinfo_xml.h"
#include "record_docs.h"
#include "tap.h"

/* glibc 2.36's malloc_info of a process with two arenas. */
static const char xml[] =
	"<malloc version=\"1\">\n"
	"<heap nr=\"0\">\n<sizes>\n"
	"  <size from=\"33\" to=\"48\" total=\"96\" count=\"2\"/>\n"
	"  <unsorted from=\"4113\" to=\"4113\" total=\"4113\" count=\"1\"/>\n"
	"</sizes>\n"
	"<total type=\"fast\" count=\"2\" size=\"96\"/>\n"
	"<total type=\"rest\" count=\"1\" size=\"4113\"/>\n"
	"<system type=\"current\" size=\"135168\"/>\n"
	"<system type=\"max\" size=\"135168\"/>\n"
	"<aspace type=\"total\" size=\"135168\"/>\n"
	"<aspace type=\"mprotect\" size=\"135168\"/>\n"
	"</heap>\n"
	"<heap nr=\"1\">\n<sizes>\n</sizes>\n"
	"<total type=\"fast\" count=\"0\" size=\"0\"/>\n"
	"<total type=\"rest\" count=\"0\" size=\"0\"/>\n"
	"<system type=\"current\" size=\"132 000\"/>\n"
	"</heap>\n"
	"<total type=\"fast\" count=\"2\" size=\"96\"/>\n"
	"<total type=\"rest\" count=\"1\" size=\"4113\"/>\n"
	"<total type=\"mmap\" count=\"3\" size=\"3000000\"/>\n"
	"<system type=\"current\" size=\"267168\"/>\n"
	"<system type=\"max\" size=\"267168\"/>\n"
	"<aspace type=\"total\" size=\"267168\"/>\n"
	"<aspace type=\"mprotect\" size=\"267168\"/>\n"
	"</malloc>\n";

static json_int_t at(json_t *s, const char *path)
{
	char *dup = strdup(path), *save = NULL;
	json_t *v = s;

	for (char *k = strtok_r(dup, ".", &save); k && v;
	     k = strtok_r(NULL, ".", &save)) {
		if (*k >= '0' && *k <= '9')
			v = json_array_get(v, (size_t)strtoul(k, NULL, 10));
		else
			v = json_object_get(v, k);
	}
	free(dup);
	return json_is_integer(v) ? json_integer_value(v) : -1;
}

static void whole(void)
{
	json_t *s = json_object(), *arena, *chunk;
	int heaps = mallinfo_xml_json(s, xml, strlen(xml));
	const char *kind;

	tap_ok(heaps == 2, "two heaps (%d)", heaps);
	tap_ok(at(s, "arenas.0.index") == 0 && at(s, "arenas.1.index") == 1,
	       "indexes from nr");
	arena = json_array_get(json_object_get(s, "arenas"), 0);
	chunk = json_array_get(json_object_get(arena, "free_chunks"), 1);
	kind = json_string_value(json_object_get(chunk, "kind"));
	tap_ok(at(s, "arenas.0.free_chunks.0.total_bytes") == 96 &&
		       at(s, "arenas.0.free_chunks.1.count") == 1 && kind &&
		       !strcmp(kind, "unsorted"),
	       "free chunks by size class");
	tap_ok(at(s, "arenas.0.system_current_bytes") == 135168 &&
		       at(s, "arenas.0.rest_bytes") == 4113,
	       "a heap's totals");
	tap_ok(at(s, "arenas.1.system_current_bytes") == -1,
	       "a malformed number is null");
	tap_ok(at(s, "total.mmap_bytes") == 3000000 &&
		       at(s, "total.system_current_bytes") == 267168,
	       "the process's totals after the last heap");
	json_decref(s);
}

/* Every prefix of the text reads (a text cut at its capacity), and a
 * text without a NUL past its end is not read past it. */
static void cut(void)
{
	size_t n = strlen(xml);
	bool fine = true;

	for (size_t len = 0; len <= n; len++) {
		char *copy = malloc(len ? len : 1);
		json_t *s = json_object();
		int heaps;

		memcpy(copy, xml, len);
		heaps = mallinfo_xml_json(s, copy, len);
		fine &= heaps >= 0 && heaps <= 2 &&
			json_is_array(json_object_get(s, "arenas")) &&
			json_is_object(json_object_get(s, "total"));
		json_decref(s);
		free(copy);
	}
	tap_ok(fine, "every prefix of the text reads");
}

static void unseen(void)
{
	struct unseen u;
	const char status[] = "Name:\tx\nVmHWM:\t  204800 kB\n"
			      "RssAnon:\t  102400 kB\nRssFile:\t    2048 kB\n"
			      "RssShmem:\t       0 kB\n";
	const char maps[] = "7f00-7f01 r-xp 0 08:01 1 /usr/lib/jvm/lib/"
			    "server/libjvm.so\n";

	record_unseen_compute(&u, status, 10 << 20, 20 << 20, 0);
	tap_ok(u.anon_bytes == (int64_t)102400 << 10 &&
		       u.anon_peak_bytes == (int64_t)(204800 - 2048) << 10,
	       "anon now and at the peak");
	tap_ok(u.at_peak && u.heap_bytes == 20 << 20 &&
		       u.unseen_bytes == u.anon_peak_bytes - (20 << 20) &&
		       u.most,
	       "most of it unseen");
	record_unseen_owner(&u, maps, "java", NULL, 0);
	tap_ok(u.owner && !strcmp(u.owner, "the JVM"), "the JVM's libjvm.so");
	record_unseen_compute(&u, NULL, 100, -1, 0);
	tap_ok(u.anon_bytes == -1 && u.unseen_bytes == -1 && !u.most,
	       "no status: unknown");
}

int main(void)
{
	whole();
	cut();
	unseen();
	return tap_done();
}
