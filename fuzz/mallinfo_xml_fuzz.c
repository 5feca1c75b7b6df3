/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the agent's reading of glibc's malloc_info(3) XML. */
/*
 * The parser is file-local to the agent (it only ever reads glibc's own
 * output in the same process), so the target compiles that file in.
 */
#include "../libcore/agent/allocstats.c"

#include <jansson.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * glibc_arenas_json() must survive any text (a malloc_info from another
 * glibc version, a truncated stream) and, because its output is spliced
 * into the /debug/palloc/mallinfo JSON document, always write valid JSON
 * with one "arenas" element per <heap> it counted.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct abuf b = {0};
	char *xml = malloc(size + 1);
	json_t *doc, *arenas;
	json_error_t err;
	int heaps;

	if (!xml)
		abort();
	memcpy(xml, data, size);
	xml[size] = '\0';
	abuf_printf(&b, "{\"format\":\"fuzz\"");
	heaps = glibc_arenas_json(&b, xml);
	abuf_printf(&b, "}");
	if (b.oom)
		abort();
	doc = json_loadb(b.p, b.len, 0, &err);
	if (!doc) {
		fprintf(stderr, "invalid JSON: %s\n%.*s\n", err.text,
			(int)b.len, b.p);
		abort();
	}
	arenas = json_object_get(doc, "arenas");
	if (!json_is_array(arenas) || json_array_size(arenas) != (size_t)heaps)
		abort();
	json_decref(doc);
	abuf_free(&b);
	free(xml);
	return 0;
}
