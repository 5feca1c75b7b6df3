/* SPDX-License-Identifier: MIT */
/* The "top" table of a profile by function, as text and JSON, like pprof -top.
 */
#ifndef PALLOC_REPORT_H
#define PALLOC_REPORT_H

#include "common.h"
#include "pprof.h"
#include "table.h"

#include <jansson.h>

/*
 * A report aggregates one sample type (value index) of a profile by
 * function, the way `go tool pprof -top` does with its default
 * granularity (functions):
 *
 *  - a frame is one line of a location (inlined frames are frames of their
 *    own), named by its function's name; a location without lines (an
 *    unsymbolized address) is named "BASENAME+0xOFFSET", the mapping's file
 *    basename and the file-relative address (address - start + offset), or
 *    "0xADDRESS" without a mapping;
 *  - flat: the sum of the values of the samples whose leaf frame (the
 *    innermost line of the first location) is that function;
 *  - cum: the sum of the values of the samples in which that function
 *    appears anywhere, counted once per sample (recursion does not double
 *    count);
 *  - total: the sum of |value| over all samples (pprof's computeTotal),
 *    the denominator of every percentage. Percentages are of |value|, as
 *    pprof prints them; the signed values are in the rows.
 *
 * Rows are sorted like pprof's FlatNameOrder: |flat| descending, then name
 * ascending, then |cum| descending. Rows whose flat and cum are both 0 are
 * left out (a diff of a profile with itself has no rows).
 *
 * Values can be negative (a diff from palloc-diff). Sums saturate at
 * INT64_MIN/INT64_MAX rather than overflow.
 *
 * Memory: a struct report owns its rows and their names (copies, so the
 * profile may be freed first); report_free() releases it. Functions are
 * thread-safe on distinct reports. Errors: -1 or NULL after msg_set().
 */

/* a + b, saturating at INT64_MIN/INT64_MAX (profile sums never wrap). */
static inline int64_t report_add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/*
 * Error bars. A sampled profile from the agent carries, per sample, a
 * numeric label "TYPE_stddev" (TYPE: the sample type's name, e.g.
 * "inuse_space_stddev", unit "bytes" or "count"): the standard deviation
 * of that sample's value due to sampling. Samples are independent, so
 * variances add: a row's flat variance is the sum of stddev^2 over the
 * samples whose leaf frame is that function, its cum variance the sum over
 * the samples in which it appears (once per sample), and the 95 % interval
 * is value +- 1.96 sigma (normal approximation), its low end clamped at 0
 * when no sample of the report is negative (the quantity cannot be).
 * When no sample with a non-zero value carries the label, the report has
 * no error bars (has_stddev false); when some do and some do not, the rows
 * touched by a sample without it have unknown (NAN) deviations.
 */
struct report_row {
	const char *name;   /* function name, or "BASENAME+0xOFF" (owned) */
	int64_t flat;	    /* value with this function as the leaf frame */
	int64_t cum;	    /* value with this function anywhere in the stack */
	double flat_stddev; /* sigma of flat (unit of the value); NAN when
			     * unknown; only when the report has_stddev */
	double cum_stddev;  /* sigma of cum, likewise */
};

struct report {
	const char *sample_type; /* e.g. "inuse_space" (owned copy) */
	const char *unit;	 /* e.g. "bytes", "count" (owned copy) */
	int sample_index;	 /* index into the profile's sample types */
	int64_t total;		 /* percentage denominator, see above; a
				  * caller may replace it before printing */
	int64_t sum;		 /* signed sum of all sample values */
	size_t n_samples;	 /* samples with a non-zero value */
	size_t n_rows;
	struct report_row *rows; /* sorted, see above */
	bool has_stddev;	 /* the profile has error bars (see above) */
	double sum_stddev;	 /* sigma of sum (NAN: unknown) */
	bool nonnegative;	 /* no sample value below 0 */
	bool show_intervals;	 /* report_print_top prints the 95 %
				  * intervals (caller sets; default off) */
	bool mark_noise;	 /* rows within noise_z sigma are marked
				  * (caller sets; default off) */
	double noise_z;		 /* see "Sampling noise" below */
};

/* z of a two-sided 95 % normal interval. */
#define REPORT_Z95 1.959963984540054

/*
 * The 95 % interval of value v with standard deviation sd, as the report
 * gives it: [v - z sd, v + z sd], the low end at least 0 when nonnegative.
 * false (and nothing set) when sd is NAN.
 */
bool report_interval(int64_t v, double sd, bool nonnegative, int64_t *low,
		     int64_t *high);

/*
 * The standard deviation in the numeric label key ("inuse_space_stddev")
 * of sample s, or NAN when s has no such numeric label.
 */
double report_sample_stddev(const struct pprof_sample *s, const char *key);

/*
 * Sampling noise. When a caller sets mark_noise (palloc-diff), a row is
 * within noise when both its changes are inside noise_z standard
 * deviations: |flat| <= z flat_stddev and |cum| <= z cum_stddev, i.e. what
 * sampling explains. Returns 1 (within), 0 (outside; always so for a row
 * of a report without error bars, where sigma is 0), -1 (a sigma is
 * unknown, NAN).
 */
int report_row_noise(const struct report *r, const struct report_row *row);

/*
 * Resolve a --sample-index argument against p: a sample type name
 * ("inuse_space"), or a decimal index ("3"); NULL or "" means the
 * profile's default_sample_type, or when unset the last type (pprof's
 * rule). Returns the index, or -1 with msg_set() naming the argument and
 * listing the types the profile has.
 */
int report_sample_index(const struct pprof_profile *p, const char *arg);

/*
 * The name of frame k (a line index; 0 for a location without lines) of
 * location l of p, as report rows name it: the function's name, or for an
 * unsymbolized location "BASENAME+0xOFFSET" (mapping file basename and
 * file-relative address) or "0xADDRESS" without a mapping, formatted into
 * buf (len bytes). Returns the function's name (owned by p) or buf.
 */
const char *report_frame_name(const struct pprof_profile *p,
			      const struct pprof_location *l, size_t k,
			      char *buf, size_t len);

/*
 * Build the by-function report of sample type sample_index of p. Returns
 * a new report (free with report_free), or NULL with msg_set() (ENOMEM,
 * index out of range).
 */
struct report *report_by_function(const struct pprof_profile *p,
				  int sample_index);

/* Free a report. NULL is allowed. */
void report_free(struct report *r);

/*
 * The row of function name, or NULL when the report has no such row. For
 * one-line summaries ("top function") use r->rows[0] when r->n_rows > 0.
 */
const struct report_row *report_find(const struct report *r, const char *name);

/*
 * Format value v of unit like pprof's automatic scaling (bytes: B, kB,
 * MB, GB, TB in powers of 1024, two decimals with ".00" trimmed, e.g.
 * "1.50MB", "-512B", "0"; counts and other units: the plain integer)
 * into buf of len bytes. Returns buf. Thread-safe, does not allocate.
 */
char *report_format_value(int64_t v, const char *unit, char *buf, size_t len);

/*
 * The samples the agent dropped (its "dropped samples" comment,
 * pprof_comments.h), for people: "65540 samples dropped, about 4.0 MiB
 * (stack table full or out of memory)", "about" only when bytes_known.
 * Returns buf.
 */
const char *report_dropped_text(uint64_t count, uint64_t bytes,
				bool bytes_known, char *buf, size_t len);

/*
 * When the agent that wrote p dropped samples, warn on stderr (msg_warn):
 * "palloc-X: warning: SHOWN: <report_dropped_text>". Those samples are in
 * none of p's values.
 */
void report_warn_dropped(const struct pprof_profile *p, const char *shown);

/*
 * Print the pprof -top table through libsmartcols (table.h): "Type: TYPE",
 * "Showing nodes accounting for X, P% of TOTAL total" (X: the sum of the
 * rows shown), "Showing top N nodes out of M" when rows are cut, then the
 * table of report_top_spec's columns with pprof's titles
 * ("flat flat% sum% cum cum%", then "name") and up to max_rows rows
 * (0: all) as pprof prints them (values scaled by report_format_value, or
 * exact integers when exact is true; percentages of r->total). With
 * r->show_intervals set and r->has_stddev, two more columns before the
 * name, "flat95" and "cum95", hold the half-width of each 95 % interval,
 * 1.96 sigma ("+-1.20MB"; "?" when unknown), and a line before the table
 * says so. With r->mark_noise and r->has_stddev instead, a line "Sampling
 * noise: ..." gives the total's change and its z sigma (r->sum_stddev),
 * the two columns hold z sigma of flat and cum ("+-3.20MB", titled e.g.
 * "flat3sd", "cum3sd") and the mark column before the name has "~" for a
 * row within noise (report_row_noise; "?" when unknown). TO (NULL: the
 * defaults) chooses the columns (--columns) and -n/-r, which leave out
 * the lines before the table too. Returns 0, or -1 with msg_set() on a
 * write error.
 */
int report_print_top(FILE *fp, const struct report *r, size_t max_rows,
		     bool exact, const struct table_opts *to);

/* The columns of report_print_top, for --help and --columns. */
extern const struct table_spec report_top_spec;

/*
 * The unit suffix of JSON keys (HACKING.md "JSON") for a pprof unit:
 * "bytes" -> "bytes", "count" or "objects" -> "count", "nanoseconds" ->
 * "ns", anything else -> "value". Returns a static string.
 */
const char *report_unit_suffix(const char *unit);

/*
 * The report as a JSON object; with U = report_unit_suffix(r->unit), keys
 * in this order:
 *   "sample_type", "unit", "total_U" (sum of |value|), "net_U" (signed
 *   sum), "function_count" (all rows), and "functions": up to max_rows
 *   (0: all) objects, in row order, of
 *   {"function", "flat_U", "flat_ratio", "sum_ratio", "cum_U", "cum_ratio"}
 * with integer values and ratios |value| / total between 0 and 1 (null
 * when total is 0), rounded to 6 decimals. When r->has_stddev, the report
 * also has "net_stddev_U" after "net_U", and each function, after
 * "cum_ratio": "flat_stddev_U", "flat_ci95_low_U", "flat_ci95_high_U",
 * "cum_stddev_U", "cum_ci95_low_U", "cum_ci95_high_U" (integers, rounded;
 * null when unknown; see "Error bars" above); without error bars those
 * keys are absent, so the JSON of an unsampled profile is unchanged. With
 * r->mark_noise, each function ends with "within_noise" (true, false, or
 * null when unknown; see report_row_noise), error bars or not. The caller
 * owns the reference and adds "format" and "format_version" in front (or embeds
 * it). NULL with msg_set() on ENOMEM.
 */
json_t *report_to_json(const struct report *r, size_t max_rows);

#endif /* PALLOC_REPORT_H */
