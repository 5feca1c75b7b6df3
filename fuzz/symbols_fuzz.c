/* SPDX-License-Identifier: MIT */
/* libFuzzer target: symbolization (libelf, libdw) of a hostile ELF file. */
#include "common.h"
#include "fuzz_util.h"
#include "msg.h"
#include "pprof.h"
#include "symbols.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define START 0x7f0000000000ULL

static void no_warn(void *ctx PALLOC_UNUSED, const char *m PALLOC_UNUSED)
{
}

/* Little-endian 64-bit value at data[off], or 0 past the end. */
static uint64_t le64(const uint8_t *data, size_t size, size_t off)
{
	uint64_t v = 0;
	size_t i;

	if (off + 8 > size)
		return 0;
	for (i = 0; i < 8; i++)
		v |= (uint64_t)data[off + i] << (8 * i);
	return v;
}

/*
 * palloc-run, palloc-dump and palloc-diff symbolize against whatever file
 * is at a mapping's path: a library replaced since, a corrupt debug file.
 * The input is written as ROOT/lib/fuzz.so, mapped by a one-mapping
 * profile at START with no build id (so it is not refused), with
 * locations at the ELF's entry point (e_entry, bytes 24-31 of an ELF64
 * header) and beside it, and in the first bytes of the second page (where
 * a small library's .text starts). symbols_symbolize()
 * must finish with 0 and leave a profile that encodes.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_value_type vt = {"space", "bytes"};
	struct pprof_mapping m = {
		.start = START,
		.limit = START + 0x10000000,
		.file = "/lib/fuzz.so",
		.build_id = "",
	};
	struct symbols_stats st = {.warn = no_warn};
	uint64_t entry = le64(data, size, 24) & 0xfffffff;
	uint64_t offs[] = {entry,  entry + 4, 0x1000, 0x1008,
			   0x1020, 0x1024,    0x1028, 0x102c};
	uint64_t mid, loc[ARRAY_SIZE(offs)];
	int64_t one = 1;
	struct pprof_profile *p = pprof_new(NULL);
	void *buf;
	size_t len, i, n = 0;
	int rc;

	if (!p)
		abort();
	fuzz_write("lib/fuzz.so", data, size);
	mid = pprof_add_mapping(p, &m);
	if (!mid || pprof_set_sample_types(p, &vt, 1) < 0)
		abort();
	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		loc[n] = pprof_add_location(p, mid, START + offs[i], NULL, 0);
		if (!loc[n])
			abort();
		n++;
	}
	if (pprof_add_sample(p, loc, n, &one, NULL, 0) < 0)
		abort();
	rc = symbols_symbolize(p, fuzz_root(), &st);
	fuzz_note("symbolize", rc);
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr,
			"%zu of %zu locations symbolized, %zu without "
			"DWARF, %zu missing\n",
			st.locations_symbolized, st.locations,
			st.mappings_no_dwarf, st.mappings_missing);
	if (rc != 0) {
		if (!*msg_last())
			abort();
	} else if (st.locations_symbolized > st.locations) {
		abort();
	}
	if (pprof_encode(p, false, &buf, &len) != 0)
		abort();
	pprof_free_buffer(p, buf);
	pprof_free(p);
	return 0;
}
