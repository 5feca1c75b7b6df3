/* SPDX-License-Identifier: MIT */
/* Tables for people through libsmartcols: columns chosen by name. */
#ifndef PALLOC_TABLE_H
#define PALLOC_TABLE_H

#include "common.h"

#include <stdio.h>

/*
 * Every table a command prints for people goes through here, with
 * util-linux's habits (lsblk, findmnt): the columns are chosen by name
 * (-o/--output COLUMNS; "+COLS" adds to the default set), -n/--noheadings,
 * -r/--raw, and the widths fit the terminal when standard output is one.
 * JSON and Prometheus text never come here. Not thread-safe (one table at a
 * time per thread; libsmartcols itself keeps no global state). Errors are
 * returned with msg_set(), never printed.
 */

/* One column a table may show. */
struct table_col {
	const char
		*name; /* as -o takes it (any case) and as the header shows */
	double whint;  /* libsmartcols' width hint: below 1 a fraction of
			* the terminal, else characters (1: as wide as
			* the data) */
	int flags;     /* SCOLS_FL_RIGHT, SCOLS_FL_TRUNC... */
	const char *help; /* one line for --help */
};

/* A column of numbers: right-aligned, as wide as its data (the user of
 * the macro includes libsmartcols.h). */
#define TABLE_NUMBER(name, help)                                               \
	{                                                                      \
		(name), 1, SCOLS_FL_RIGHT, (help)                              \
	}

/* The columns of one kind of table and the default selection. */
struct table_spec {
	const struct table_col *cols;
	size_t ncols;
	const char *defaults; /* comma list of names */
};

#define TABLE_MAX_COLS 64

/* What the options asked for: -o's list (NULL: the defaults), -n, -r, and
 * -b/--bytes (sizes in bytes, not "1.5 MiB"). */
struct table_opts {
	const char *columns;
	bool noheadings, raw, bytes;
};

/*
 * Parse LIST (a comma list of SPEC's names, any case; a leading '+' adds
 * to SPEC's defaults; NULL is the defaults) into IDS (indexes into
 * SPEC->cols, TABLE_MAX_COLS at most) and *N. Returns 0, or -1 with
 * msg_set() naming the unknown column ("unknown column 'x'") or saying
 * the list is empty or too long.
 */
int table_columns(const struct table_spec *spec, const char *list, int *ids,
		  size_t *n);

struct table;

/*
 * A new table of SPEC's columns chosen by O (its list must have passed
 * table_columns), printed to FP by table_print(). Widths fit the terminal
 * only when FP is standard output and a terminal. Returns NULL with
 * msg_set() when out of memory.
 */
struct table *table_new(const struct table_spec *spec,
			const struct table_opts *o, FILE *fp);

/* The title of column ID, instead of its name (a column not chosen is
 * ignored). Returns 0, or -1 (out of memory). */
int table_title(struct table *t, int id, const char *title);

/* Start a new row. Returns 0, or -1 (out of memory). */
int table_row(struct table *t);

/*
 * The cell of column ID (an index into the spec's cols) of the current
 * row: TEXT copied, NULL as empty. A column not chosen is ignored. Returns
 * 0, or -1 (out of memory).
 */
int table_set(struct table *t, int id, const char *text);

/* The same with printf's FMT. */
int table_setf(struct table *t, int id, const char *fmt, ...)
	PALLOC_PRINTF(3, 4);

/* A size in column ID: "1.5 MiB" (cli_human), or bytes with -b. */
int table_size(struct table *t, int id, uint64_t bytes);

/* Whether the table shows column ID. */
bool table_has(const struct table *t, int id);

/*
 * Print T to its stream (without rows: the headings alone, or nothing
 * with noheadings or raw), then free it. NULL is a no-op. Returns 0, or -1 with
 * msg_set() on a write error (errno set).
 */
int table_print(struct table *t);

/* Fill row I of T (table_row done) from CTX. Returns 0, or -1 with
 * msg_set(). */
typedef int table_row_fn(struct table *t, size_t i, void *ctx);

/*
 * A table of SPEC's columns chosen by O, its N rows filled by ROW(t, i,
 * CTX), printed to FP and freed. Returns 0, or -1 with msg_set().
 */
int table_rows(const struct table_spec *spec, const struct table_opts *o,
	       FILE *fp, size_t n, table_row_fn *row, void *ctx);

/* Free T without printing it. NULL is a no-op. */
void table_free(struct table *t);

/*
 * For usage(): "TITLE:" then one line per column of SPEC, its name and
 * help, to FP.
 */
void table_help(FILE *fp, const char *title, const struct table_spec *spec);

#endif /* PALLOC_TABLE_H */
