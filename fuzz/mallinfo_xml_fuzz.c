/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the commands' reading of glibc's malloc_info(3) XML. */
#include "common.h"
#include "mallinfo_xml.h"
#include "json.h"

#include <jansson.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * mallinfo_xml_json() reads the text an agent left in its record, which
 * the target may have written anything into (a malloc_info from another
 * glibc version, a text cut at its capacity): it must survive any bytes,
 * unterminated, and give one "arenas" element per <heap> it counted and a
 * "total" object.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = json_object(), *arenas;
	char *xml = malloc(size ? size : 1);
	int heaps;

	if (!doc || !xml)
		abort();
	memcpy(xml, data, size); /* exactly size bytes: ASan sees overreads */
	heaps = mallinfo_xml_json(doc, xml, size);
	if (heaps < 0)
		abort();
	arenas = json_object_get(doc, "arenas");
	if (!json_is_array(arenas) ||
	    json_array_size(arenas) != (size_t)heaps ||
	    !json_is_object(json_object_get(doc, "total")))
		abort();
	json_decref(doc);
	free(xml);
	return 0;
}
