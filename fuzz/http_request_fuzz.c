/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the control server's request parser and query lookup. */
#include "common.h"
#include "http.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a parsed string must be: NUL-terminated within its array and free
 * of control bytes (they end up in file names and JSON). */
static void check_str(const char *s, size_t size)
{
	const char *nul = memchr(s, '\0', size);

	if (!nul)
		abort();
	for (; s < nul; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
}

/*
 * Any local client of the user can send the agent any bytes. The parser
 * must answer complete, incomplete or malformed without reading past LEN
 * (the input is copied to an exact-size heap block so ASan sees overruns),
 * and what it accepts must be well formed. Every prefix is also offered,
 * as the server does while bytes arrive: a prefix may need more bytes or
 * be malformed, but once complete the answer must not change.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {"seconds", "gc",	      "debug",
					   "pid",     "sample_index", ""};
	struct http_request req, req2;
	char *buf = malloc(size ? size : 1), val[64];
	size_t i, cut;
	int r, r2;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	r = http_parse_request(buf, size, &req);
	if (r < -1 || r > 1)
		abort();
	if (r == 1) {
		check_str(req.method, sizeof(req.method));
		check_str(req.path, sizeof(req.path));
		if (req.path[0] != '/' || (req.minor != 0 && req.minor != 1) ||
		    !memchr(req.query, '\0', sizeof(req.query)))
			abort();
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (http_query_get(req.query, keys[i], val,
					   sizeof(val)) == 1)
				check_str(val, sizeof(val));
		/* a tiny output buffer: values must be refused, not cut */
		if (http_query_get(req.query, "seconds", val, 1) == 1 &&
		    val[0] != '\0')
			abort();
	}
	/* a prefix cut at the input's first byte value, bounded */
	cut = size ? data[0] % (size + 1) : 0;
	r2 = http_parse_request(buf, cut, &req2);
	if (r2 < -1 || r2 > 1 || (r == 0 && r2 == 1))
		abort();
	free(buf);
	return 0;
}
