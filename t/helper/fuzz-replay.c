/* SPDX-License-Identifier: MIT */
/* Run a fuzz target's LLVMFuzzerTestOneInput on files, without libFuzzer. */
#include "common.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* All of PATH in a malloc'd block of exactly its size (as libFuzzer passes
 * its inputs, so that a sanitized build sees overruns); NULL on error. */
static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;

	if (!f)
		return NULL;
	size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return NULL;
	}
	buf = malloc(size ? (size_t)size : 1);
	if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)size;
	return buf;
}

/*
 * Linked with one fuzz/X_fuzz.c, this runs the target on each FILE given,
 * so that make check replays the inputs that once crashed (t/fixtures/fuzz)
 * with gcc and no libFuzzer. A target reports a violated property by
 * aborting: the exit status (or the signal) is the test's answer. Prints
 * "FILE: ok" per file. Exit 0, or 2 when a file cannot be read.
 */
int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		size_t len;
		uint8_t *buf = read_all(argv[i], &len);

		if (!buf) {
			fprintf(stderr, "fuzz-replay: cannot read '%s'\n",
				argv[i]);
			return 2;
		}
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		printf("%s: ok\n", argv[i]);
		fflush(stdout);
	}
	return 0;
}
