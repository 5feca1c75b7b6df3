/* SPDX-License-Identifier: MIT */
/* Test helper: write profiles with known contents, good and broken. */
#include "common.h"
#include "msg_cli.h"
#include "pprof.h"
#include "pprof_broken.h"

/*
 * pprof-gen known FILE   a profile of three sites with fixed values
 *                        (see t/4000-pprof-roundtrip.sh for the numbers)
 * pprof-gen broken DIR   the broken corpus: DIR/NAME and DIR/NAME.expect
 *                        (a substring of the error each must produce)
 * pprof-gen valid FILE   a small valid profile built with protobuf-c
 * pprof-gen raw FILE MAPPED   a raw profile of one sample in a mapping of
 *                        the file MAPPED (symbolizing it opens MAPPED)
 */
static int write_known(const char *path)
{
	static const struct pprof_value_type types[4] = {
		{"alloc_objects", "count"},
		{"alloc_space", "bytes"},
		{"inuse_objects", "count"},
		{"inuse_space", "bytes"},
	};
	static const struct {
		const char *name, *sys;
		int64_t line;
		int64_t v[4];
	} sites[3] = {
		{"make_buffers", "make_buffers", 11, {10, 40960, 4, 16384}},
		{"ns::Cache::grow(unsigned long)",
		 "_ZN2ns5Cache4growEm",
		 22,
		 {3, 3000000, 3, 3000000}},
		{"leak_strings", "leak_strings", 33, {100, 6400, 0, 0}},
	};
	struct pprof_mapping m = {.start = 0x555555554000,
				  .limit = 0x555555559000,
				  .file = "/usr/bin/known",
				  .build_id = "abcdef0123456789",
				  .has_functions = true,
				  .has_filenames = true,
				  .has_line_numbers = true};
	struct pprof_label thread = {"thread", "main", 0, ""};
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_line line;
	uint64_t mid, fmain, lmain, loc, stack[2];
	size_t i;

	if (!p || pprof_set_sample_types(p, types, 4) < 0 ||
	    pprof_set_period(p, "space", "bytes", 1) < 0 ||
	    pprof_set_default_sample_type(p, "inuse_space") < 0 ||
	    pprof_add_comment(p, "pprof-gen known") < 0)
		return -1;
	mid = pprof_add_mapping(p, &m);
	fmain = pprof_add_function(p, "main", "main", "known.c", 1);
	line = (struct pprof_line){fmain, 5};
	lmain = pprof_add_location(p, mid, 0x555555555100, &line, 1);
	if (!mid || !fmain || !lmain)
		return -1;
	for (i = 0; i < 3; i++) {
		line.function_id =
			pprof_add_function(p, sites[i].name, sites[i].sys,
					   "known.c", sites[i].line);
		line.line = sites[i].line + 2;
		loc = pprof_add_location(p, mid, 0x555555555200 + 0x100 * i,
					 &line, 1);
		stack[0] = loc;
		stack[1] = lmain;
		if (!line.function_id || !loc ||
		    pprof_add_sample(p, stack, 2, sites[i].v, &thread, 1) < 0)
			return -1;
	}
	i = (size_t)pprof_write_file(p, path);
	pprof_free(p);
	return (int)i;
}

static int write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return msg_set_errno(errno, "cannot open '%s'", path);
	bool failed = len && fwrite(data, len, 1, f) != 1;

	if (fclose(f) != 0 || failed)
		return msg_set_errno(errno, "cannot write '%s'", path);
	return 0;
}

static int write_broken(const char *dir)
{
	struct pprof_broken b[PPROF_BROKEN_MAX];
	size_t n = pprof_broken_make(b), i;
	char path[4096];
	int ret = 0;

	if (!n)
		return msg_set("cannot build the broken corpus");
	for (i = 0; i < n && ret == 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, b[i].name);
		ret = write_bytes(path, b[i].data, b[i].len);
		snprintf(path, sizeof(path), "%s/%s.expect", dir, b[i].name);
		if (ret == 0)
			ret = write_bytes(path, b[i].expect,
					  strlen(b[i].expect));
	}
	pprof_broken_free(b, n);
	return ret;
}

/* A raw profile (addresses only) of one sample in a mapping of file:
 * symbolizing it opens file. */
static int write_raw(const char *path, const char *file)
{
	static const struct pprof_value_type types[2] = {
		{"alloc_space", "bytes"},
		{"inuse_space", "bytes"},
	};
	struct pprof_mapping m = {
		.start = 0x400000, .limit = 0x500000, .file = file};
	struct pprof_profile *p = pprof_new(NULL);
	int64_t v[2] = {4096, 4096};
	uint64_t mid, loc;
	int ret;

	if (!p || pprof_set_sample_types(p, types, 2) < 0 ||
	    pprof_set_period(p, "space", "bytes", 1) < 0)
		return -1;
	mid = pprof_add_mapping(p, &m);
	loc = mid ? pprof_add_location(p, mid, 0x401000, NULL, 0) : 0;
	if (!loc || pprof_add_sample(p, &loc, 1, v, NULL, 0) < 0) {
		pprof_free(p);
		return -1;
	}
	ret = pprof_write_file(p, path);
	pprof_free(p);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned char *buf;
	size_t len;
	int ret = -1;

	msg_init(argv[0]);
	if (argc == 4 && strcmp(argv[1], "raw") == 0) {
		ret = write_raw(argv[2], argv[3]);
	} else if (argc != 3) {
		fprintf(stderr, "usage: pprof-gen known|broken|valid PATH\n"
				"       pprof-gen raw PATH MAPPED_FILE\n");
		return 2;
	} else if (strcmp(argv[1], "known") == 0) {
		ret = write_known(argv[2]);
	} else if (strcmp(argv[1], "broken") == 0) {
		ret = write_broken(argv[2]);
	} else if (strcmp(argv[1], "valid") == 0) {
		len = pprof_broken_valid(&buf, 1);
		ret = len ? write_bytes(argv[2], buf, len) : -1;
		if (len)
			free(buf);
	}
	if (ret < 0) {
		msg_error("%s", msg_last());
		return 2;
	}
	return 0;
}
