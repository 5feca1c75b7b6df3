/* SPDX-License-Identifier: MIT */
/* Prometheus text exposition (format 0.0.4) helpers for --prom and /metrics. */
#ifndef PALLOC_PROM_H
#define PALLOC_PROM_H

#include "common.h"

/*
 * Writing a metric family:
 *
 *	char name[PROM_NAME_MAX];
 *	struct prom_label l[] = { { "pid", "42" }, { "command", comm } };
 *
 *	prom_name(name, sizeof(name), "smaps_pss_bytes");
 *	prom_family(fp, name, PROM_GAUGE, "Proportional set size.");
 *	prom_sample_u64(fp, name, l, ARRAY_SIZE(l), pss);
 *
 * Rules the callers keep (and promtool check metrics enforces): every
 * family has HELP and TYPE once, before all its samples, and its samples
 * are contiguous; counters end in "_total", other types never do; units
 * are base units named at the end (_bytes, _seconds); ratios are 0..1
 * and end in _ratio. Names are "palloc_" + snake_case (prom_name() adds
 * the prefix and maps any other character to '_').
 *
 * The functions write with stdio to FP and return 0, or -1 with msg_set()
 * when FP reports an error. They never allocate. Thread-safety: as stdio.
 */

#define PROM_NAME_MAX 128

#define PROM_GAUGE "gauge"
#define PROM_COUNTER "counter"
#define PROM_UNTYPED "untyped"

struct prom_label {
	const char *name;  /* [a-zA-Z_][a-zA-Z0-9_]*, not starting "__" */
	const char *value; /* any bytes; escaped on output */
};

/*
 * Put "palloc_" + NAME in BUF (SIZE bytes), lower-casing letters and
 * turning every character outside [a-z0-9_] into '_'. Returns 0, or -1
 * with msg_set() when BUF is too small.
 */
int prom_name(char *buf, size_t size, const char *name);

/*
 * "# HELP NAME HELP\n# TYPE NAME TYPE\n". HELP is escaped as the format
 * wants (backslash and newline). TYPE is one of the PROM_* strings.
 */
int prom_family(FILE *fp, const char *name, const char *type, const char *help);

/*
 * One sample line: NAME{l1="v1",...} VALUE. Label values are escaped
 * (backslash, double quote, newline); N may be 0 (no braces). The _u64
 * form prints the exact integer, the _double form uses the shortest
 * round-tripping text and "+Inf", "-Inf", "NaN" for the specials.
 */
int prom_sample_u64(FILE *fp, const char *name, const struct prom_label *l,
		    size_t n, uint64_t value);
int prom_sample_double(FILE *fp, const char *name, const struct prom_label *l,
		       size_t n, double value);

/*
 * Write S to FP escaped for a label value (LABEL true: \\ \" \n) or for
 * HELP text (\\ \n). Exposed for the /metrics endpoint, which builds
 * its own lines. Returns 0 or -1 as above.
 */
int prom_escape(FILE *fp, const char *s, bool label);

#endif /* PALLOC_PROM_H */
