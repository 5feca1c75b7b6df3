/* SPDX-License-Identifier: MIT */
/* Collapsed stacks ("main;f;g 1234") for flamegraph.pl, speedscope, inferno. */
#ifndef PALLOC_FOLDED_H
#define PALLOC_FOLDED_H

#include "common.h"
#include "pprof.h"

/*
 * The folded format of Brendan Gregg's stackcollapse scripts: one line per
 * distinct stack, frames from the root (outermost caller) to the leaf
 * separated by ';', a space, and the summed value of one sample type.
 * Inlined frames are frames of their own (a location's lines are written
 * caller first). A location without lines is named like report.h does:
 * "BASENAME+0xOFFSET" of its mapping, or "0xADDRESS". Characters that
 * would break the format in a name (';' and control bytes) become '_'.
 * Stacks with a zero sum are left out; a negative sum (a diff) is kept, as
 * inferno's differential mode reads it. Lines are sorted by stack text,
 * so the output is stable.
 */

/*
 * Write the folded stacks of sample type sample_index of p to fp.
 * Returns 0, or -1 with msg_set() (ENOMEM, bad index, write error).
 */
int folded_write(FILE *fp, const struct pprof_profile *p, int sample_index);

#endif /* PALLOC_FOLDED_H */
