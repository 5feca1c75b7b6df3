/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the ELF checks of palloc-run and palloc-run -p
 * (libcore/tools/elfcheck.c). */
#include "common.h"
#include "elfcheck.h"
#include "fuzz_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The program palloc-run is asked to run, and the files of a process
 * palloc-run -p reads through /proc/PID/root (another container's), are
 * data from outside: the input is written as an executable file and
 * checked as a program (elfcheck_program: the ELF header and program
 * headers with libelf, or a "#!" line), as a Go program, and for a malloc
 * it exports or hides. Every check must answer: a verdict of the enum
 * with a reason, and the same answer twice.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfcheck_result r, again;
	char path[4096];
	bool go, exports, hidden;
	int rc;

	fuzz_write("prog", data, size);
	snprintf(path, sizeof(path), "%s/prog", fuzz_root());
	if (chmod(path, 0755) < 0)
		abort();
	rc = elfcheck_program(path, &r);
	fuzz_note("program", rc);
	if (rc == 0) {
		if (r.verdict < ELFCHECK_OK || r.verdict > ELFCHECK_NESTED ||
		    !elfcheck_reason(r.verdict))
			abort();
		if (elfcheck_program(path, &again) != 0 ||
		    again.verdict != r.verdict)
			abort();
	}
	go = elfcheck_is_go(path);
	exports = elfcheck_exports(path, "malloc");
	hidden = elfcheck_hidden_malloc(path);
	fuzz_note("go", go ? 0 : -1);
	fuzz_note("exports", exports ? 0 : -1);
	if (go != elfcheck_is_go(path) ||
	    exports != elfcheck_exports(path, "malloc") ||
	    hidden != elfcheck_hidden_malloc(path) || (hidden && exports))
		abort();
	return 0;
}
