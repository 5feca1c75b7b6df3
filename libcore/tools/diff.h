/* SPDX-License-Identifier: MIT */
/* Profile difference: NEW minus BASE, stacks matched by symbolized frames. */
#ifndef PALLOC_DIFF_H
#define PALLOC_DIFF_H

#include "common.h"
#include "pprof.h"

/*
 * diff_profiles() computes NEW - BASE as a new profile, so that two
 * profiles of one program compare even when they come from two builds:
 *
 *  - Frames. Every line of a location is a frame (inlined frames count as
 *    frames of their own, so a function inlined in one build and called in
 *    the other still matches). A symbolized frame is its function name,
 *    plus the function's file and the line when both profiles have line
 *    numbers (some line != 0 in each); an unsymbolized location (no lines)
 *    is one frame: its mapping's file basename and file-relative address
 *    (address - start + offset), so ASLR and another load address do not
 *    matter. A sample's stack is its sequence of frames, leaf first.
 *  - Sample types are matched by name. The result has the types common
 *    to both, in NEW's order; a unit that differs for one name, or another
 *    period type or period, is a warning (the values are subtracted as
 *    they are). No common type is an error.
 *  - Samples with the same stack are summed (labels are dropped), and
 *    each stack's value is its NEW sum minus its BASE sum, per type.
 *    Stacks whose every difference is 0 are left out, so a profile
 *    diffed with itself has no samples. Values may be negative.
 *  - Sampling noise. A sampled profile's samples carry numeric labels
 *    "TYPE_stddev" (palloc(7)): the standard deviation of the value due
 *    to sampling. The two profiles are independent samples, so the
 *    variance of a stack's difference is the sum of the squared labels of
 *    its samples in both, and that of the total difference the sum over
 *    all stacks (unchanged ones included). When either input has such
 *    labels for a common type, every result sample carries
 *    "TYPE_stddev" = round(sqrt(that variance)) for it (unit: the type's),
 *    so the result's report has error bars of the difference; a sample
 *    without the label counts as exact (variance 0), so profiles without
 *    any (rate 1, other tools) give sigma 0 and no labels.
 *  - The result's locations and mappings are copies of NEW's for stacks
 *    present in NEW, of BASE's for stacks only in BASE (addresses stay
 *    those of the profile they came from). Its period, period type,
 *    default sample type (when common), time and duration are NEW's, plus
 *    a comment naming the operation.
 *
 * Summed per function, this equals what `go tool pprof -diff_base=BASE NEW`
 * shows (pprof keeps BASE's samples negated and labelled "pprof::base";
 * flat and cum are linear, so the sums agree).
 */

/* Per common sample type figures, in the result's type order. */
struct diff_totals {
	int64_t base_sum;  /* signed sum of BASE's values */
	int64_t new_sum;   /* signed sum of NEW's values */
	uint64_t base_abs; /* sum of |value| over BASE's samples */
	uint64_t new_abs;  /* sum of |value| over NEW's samples */
	double var;	   /* variance of new_sum - base_sum from the
			    * TYPE_stddev labels of both (0 without) */
	bool has_stddev;   /* some sample of an input has the label */
};

struct diff_result {
	struct pprof_profile *profile;	/* NEW - BASE (owned) */
	size_t n_types;			/* = profile->n_sample_types */
	struct diff_totals *totals;	/* n_types of them (owned) */
	size_t base_stacks, new_stacks; /* distinct stacks in each input */
	size_t matched_stacks;		/* stacks present in both */
	bool used_lines;		/* file:line took part in matching */
};

/*
 * Called once per warning with a message such as "period differs: 524288
 * in BASE, 1 in NEW" (no program name, no newline). Warnings: a unit or
 * the period type or period differs, or one profile is symbolized and the
 * other is not (their stacks cannot match).
 */
typedef void (*diff_warn_fn)(void *ctx, const char *message);

/*
 * Compute NEW - BASE into *out (zeroed first). warn may be NULL. Returns
 * 0, or -1 with msg_set() ("no common sample type: BASE has a, b; NEW has
 * c", ENOMEM). The inputs are not modified. *out is released with
 * diff_result_free() even after an error. Not thread-safe on shared
 * inputs; allocates memory of the order of the inputs' total size.
 */
int diff_profiles(const struct pprof_profile *base,
		  const struct pprof_profile *new_p, struct diff_result *out,
		  diff_warn_fn warn, void *warn_ctx);

/* Free what diff_profiles() put into r (not r itself). */
void diff_result_free(struct diff_result *r);

/*
 * pprof's percentage denominator for sample type i of a diff, as
 * `go tool pprof -diff_base` computes it: the sum of |value| of BASE's
 * samples, or NEW's when BASE's is 0.
 */
int64_t diff_pprof_total(const struct diff_result *r, size_t i);

/*
 * What sampling explains of the change of sample type i, at z standard
 * deviations (palloc-diff's --noise-z, default DIFF_NOISE_Z):
 *
 *  - growth: the signed sum of the result's values (NEW - BASE, saturated);
 *  - stddev: its sigma, sqrt(totals[i].var); within: |growth| <= z sigma;
 *  - total_excess: growth - z sigma, the growth of the whole profile
 *    beyond its noise;
 *  - stack_excess: the sum over the result's stacks of each change moved
 *    toward 0 by z sigma of that stack (its TYPE_stddev label), 0 when
 *    inside it: the net of the changes that are each beyond their noise;
 *  - significant: the larger of the two, the growth the gate compares.
 *    The first catches growth spread thin over many stacks, the second a
 *    leak in one place when the whole profile is noisy (a few hundred MB
 *    sampled at 512 KiB have a sigma of several MB).
 *
 * Without stddev labels, or with z = 0, sigma is 0 and all three equal
 * growth (the raw gate). The z sigma margins are rounded to integers.
 */
#define DIFF_NOISE_Z 3.0

struct diff_noise {
	int64_t growth;
	double stddev;
	bool within;
	int64_t total_excess;
	int64_t stack_excess;
	int64_t significant;
};

/* Fill *out for sample type i of r at z (>= 0, finite). */
void diff_noise(const struct diff_result *r, size_t i, double z,
		struct diff_noise *out);

/* Sigma of result sample s's value of type i: its label, else 0. */
double diff_sample_stddev(const struct diff_result *r, size_t i,
			  const struct pprof_sample *s);

/*
 * A stack of the result, printed for people: its frames' names, leaf
 * first, joined by " < " ("leak < main < __libc_start_call_main"),
 * at most max_frames (0: all; "< ..." marks the cut), into buf of len
 * bytes (truncated with "..."). Returns buf.
 */
char *diff_format_stack(const struct pprof_profile *p,
			const struct pprof_sample *s, size_t max_frames,
			char *buf, size_t len);

#endif /* PALLOC_DIFF_H */
