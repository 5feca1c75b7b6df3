/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the symbol cache's index reader (libcore/tools/symcache.c).
 */
#include "common.h"
#include "fuzz_util.h"
#include "symcache.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lookups per input: fixed addresses and words of the input itself. */
#define LOOKUPS 48
#define MAX_CHAIN 64

/* A string the reader gave must be readable to its NUL. */
static size_t touch(const char *s)
{
	return s ? strlen(s) : 0;
}

/*
 * A cache file is data from outside (a damaged disk, another version, a
 * hand-made file): the input is sealed (its key taken from its own
 * header, its checksum set, symcache_seal()) so that the mutations reach
 * the layout and record checks, written as a mode 0600 file and opened.
 * Every lookup must answer or say the file is inconsistent, each string
 * must end within the file, every chain of nodes must end within 64 steps
 * (parents come first), and a lookup asked twice answers the same.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symcache_key key;
	struct symcache *c;
	unsigned char *buf;
	char path[4096];
	bool dwarf;
	size_t i, sum = 0;
	int fd;

	buf = malloc(size ? size : 1);
	if (!buf)
		abort();
	if (size)
		memcpy(buf, data, size);
	if (symcache_seal(buf, size, &key) < 0) {
		fuzz_note("short", -1);
		free(buf);
		return 0;
	}
	fuzz_write("idx", buf, size);
	snprintf(path, sizeof(path), "%s/idx", fuzz_root());
	if (chmod(path, 0600) < 0)
		abort();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		abort();
	c = symcache_open_fd(fd, &key, &dwarf);
	close(fd);
	fuzz_note("open", c ? 0 : -1);
	for (i = 0; c && i < LOOKUPS; i++) {
		struct symcache_hit h, again;
		uint64_t addr = 0;
		uint32_t node;
		int n = 0, rc;

		if (i == 1)
			addr = UINT64_MAX;
		else if (i > 1 && 8 * i + 8 <= size)
			memcpy(&addr, buf + 8 * i, 8);
		else if (i > 1)
			addr = 0x1000 * i;
		rc = symcache_lookup(c, addr, &h);
		if (rc < 0)
			break;
		if (symcache_lookup(c, addr, &again) != 0 ||
		    again.sym != h.sym || again.file != h.file ||
		    again.line != h.line || again.node != h.node)
			abort();
		sum += touch(h.sym) + touch(h.file);
		for (node = h.node; node != SYMCACHE_NONE; n++) {
			struct symcache_node nd;

			if (n >= MAX_CHAIN || symcache_node(c, node, &nd) < 0)
				break;
			sum += touch(nd.name) + touch(nd.linkage) +
			       touch(nd.decl_file) + touch(nd.call_file);
			if (nd.subprogram)
				break;
			/* parents come first, so a chain ends */
			if (nd.parent != SYMCACHE_NONE && nd.parent >= node)
				abort();
			node = nd.parent;
		}
	}
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%zu string bytes read\n", sum);
	symcache_close(c);
	free(buf);
	return 0;
}
