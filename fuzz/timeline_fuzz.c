/* SPDX-License-Identifier: MIT */
/* libFuzzer target: palloc-report's timeline reader and the page's data. */
#include "common.h"
#include "htmlreport_model.h"
#include "htmlreport_page.h"
#include "msg.h"
#include "timeline_read.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

/*
 * The input is a timeline. The reader accepts it or refuses it with a
 * message; what it accepts has integer times and pids >= 0, byte figures
 * >= 0 or -1, profile events' paths non-empty; the page's data made from
 * it (no profiles) is a document, and written as the page's JSON it has
 * no '<' (nothing can end the script element).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct timeline_doc t;
	json_t *doc;
	char *text, *esc = NULL;
	size_t len = 0;
	FILE *mem;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	if (timeline_doc_parse((const char *)data, size, &t) < 0) {
		if (!*msg_last())
			abort();
		timeline_doc_free(&t);
		return 0;
	}
	for (size_t i = 0; i < t.n_samples; i++) {
		if (t.samples[i].time_ns < 0 || t.samples[i].pid < 0)
			abort();
		for (int k = 0; k < TL_NFIELDS; k++)
			if (t.samples[i].v[k] < -1)
				abort();
	}
	for (size_t i = 0; i < t.n_events; i++)
		if (!t.events[i].obj || !t.events[i].event ||
		    (t.events[i].path && !*t.events[i].path))
			abort();
	doc = htmlreport_model("fuzz", &t, NULL, 0);
	if (!doc)
		abort();
	text = json_dumps(doc, JSON_COMPACT);
	mem = open_memstream(&esc, &len);
	if (!text || !mem || htmlreport_put_json(mem, text) < 0)
		abort();
	fclose(mem);
	if (memchr(esc, '<', len) || memchr(esc, '>', len))
		abort();
	free(esc);
	free(text);
	json_decref(doc);
	timeline_doc_free(&t);
	return 0;
}
