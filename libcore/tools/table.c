/* SPDX-License-Identifier: MIT */
/* Tables for people through libsmartcols: columns chosen by name. */
#include "common.h"
#include "table.h"
#include "cli.h"
#include "msg.h"

#include <libsmartcols/libsmartcols.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct table {
	struct libscols_table *tb;
	struct libscols_line *ln;
	/* The libsmartcols column of each of the spec's, NULL if not shown. */
	struct libscols_column *col[TABLE_MAX_COLS];
	size_t ncols, nrows;
	bool bare;  /* -n or -r: an empty table prints nothing */
	bool bytes; /* -b */
};

/* Add the names of the comma list S to IDS. */
static int add_names(const struct table_spec *spec, const char *s, int *ids,
		     size_t *n)
{
	if (!s)
		return 0;
	while (*s) {
		size_t len = strcspn(s, ","), i;

		for (i = 0; i < spec->ncols; i++)
			if (strlen(spec->cols[i].name) == len &&
			    strncasecmp(spec->cols[i].name, s, len) == 0)
				break;
		if (i == spec->ncols)
			return msg_set("unknown column '%.*s'",
				       (int)(len > 64 ? 64 : len), s);
		if (*n == TABLE_MAX_COLS)
			return msg_set("too many columns");
		ids[(*n)++] = (int)i;
		s += len;
		if (*s == ',' && !*++s)
			return msg_set("unknown column ''");
	}
	return 0;
}

int table_columns(const struct table_spec *spec, const char *list, int *ids,
		  size_t *n)
{
	*n = 0;
	if (!list || *list == '+') {
		if (add_names(spec, spec->defaults, ids, n) < 0)
			return -1;
		if (!list)
			return 0;
		list++;
	}
	if (add_names(spec, list, ids, n) < 0)
		return -1;
	if (*n == 0)
		return msg_set("no column chosen");
	return 0;
}

struct table *table_new(const struct table_spec *spec,
			const struct table_opts *o, FILE *fp)
{
	struct table *t = calloc(1, sizeof(*t));
	int ids[TABLE_MAX_COLS];
	size_t n, i;

	if (!t)
		goto oom;
	if (table_columns(spec, o->columns, ids, &n) < 0) {
		free(t);
		return NULL;
	}
	t->tb = scols_new_table();
	if (!t->tb)
		goto oom;
	t->ncols = spec->ncols < TABLE_MAX_COLS ? spec->ncols : TABLE_MAX_COLS;
	t->bare = o->noheadings || o->raw;
	t->bytes = o->bytes;
	scols_table_set_stream(t->tb, fp);
	scols_table_enable_noheadings(t->tb, o->noheadings);
	scols_table_enable_raw(t->tb, o->raw);
	/* No padding after a row's last cell with data. */
	scols_table_enable_minout(t->tb, 1);
	/* A file, or a stream other than stdout, is never a terminal. */
	if (fp != stdout || !isatty(STDOUT_FILENO))
		scols_table_set_termforce(t->tb, SCOLS_TERMFORCE_NEVER);
	for (i = 0; i < n; i++) {
		const struct table_col *c = &spec->cols[ids[i]];
		struct libscols_column *cl;

		/* Chosen twice ("+PID" on a default PID): shown once. */
		if (t->col[ids[i]])
			continue;
		cl = scols_table_new_column(t->tb, c->name, c->whint, c->flags);
		if (!cl)
			goto oom;
		t->col[ids[i]] = cl;
	}
	return t;
oom:
	table_free(t);
	msg_set("out of memory");
	return NULL;
}

int table_title(struct table *t, int id, const char *title)
{
	if (!table_has(t, id))
		return 0;
	if (scols_column_set_name(t->col[id], title) < 0)
		return msg_set("out of memory");
	return 0;
}

int table_row(struct table *t)
{
	t->ln = scols_table_new_line(t->tb, NULL);
	if (!t->ln)
		return msg_set("out of memory");
	t->nrows++;
	return 0;
}

bool table_has(const struct table *t, int id)
{
	return id >= 0 && (size_t)id < t->ncols && t->col[id];
}

int table_set(struct table *t, int id, const char *text)
{
	if (!table_has(t, id) || !t->ln)
		return 0;
	if (scols_line_set_column_data(t->ln, t->col[id], text ? text : "") < 0)
		return msg_set("out of memory");
	return 0;
}

int table_setf(struct table *t, int id, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!table_has(t, id))
		return 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return table_set(t, id, buf);
}

int table_size(struct table *t, int id, uint64_t bytes)
{
	char buf[CLI_HUMAN_MAX];

	if (t->bytes)
		return table_setf(t, id, "%llu", (unsigned long long)bytes);
	return table_set(t, id, cli_human(buf, sizeof(buf), bytes));
}

/*
 * The headings of a table without rows, which libsmartcols leaves out
 * (util-linux prints nothing then): a list with no process still says
 * what its columns are. Without data every column is as wide as its
 * title.
 */
static void print_titles(struct libscols_table *tb, FILE *fp)
{
	size_t i, n = scols_table_get_ncols(tb);

	for (i = 0; i < n; i++) {
		struct libscols_column *cl = scols_table_get_column(tb, i);
		const char *title =
			scols_cell_get_data(scols_column_get_header(cl));

		fprintf(fp, "%s%s", i ? " " : "", title ? title : "");
	}
	fputc('\n', fp);
}

int table_print(struct table *t)
{
	FILE *fp;
	int rc = 0;

	if (!t)
		return 0;
	fp = scols_table_get_stream(t->tb);
	if (t->nrows && scols_print_table(t->tb) < 0)
		rc = msg_set_errno(errno ? errno : EIO, "write error");
	if (!t->nrows && !t->bare)
		print_titles(t->tb, fp);
	if (!rc && ferror(fp))
		rc = msg_set_errno(errno ? errno : EIO, "write error");
	table_free(t);
	return rc;
}

int table_rows(const struct table_spec *spec, const struct table_opts *o,
	       FILE *fp, size_t n, table_row_fn *row, void *ctx)
{
	struct table *t = table_new(spec, o, fp);

	if (!t)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (table_row(t) < 0 || row(t, i, ctx) < 0) {
			table_free(t);
			return -1;
		}
	return table_print(t);
}

void table_free(struct table *t)
{
	if (!t)
		return;
	scols_unref_table(t->tb);
	free(t);
}

void table_help(FILE *fp, const char *title, const struct table_spec *spec)
{
	size_t i, w = 0;

	for (i = 0; i < spec->ncols; i++)
		if (strlen(spec->cols[i].name) > w)
			w = strlen(spec->cols[i].name);
	fprintf(fp, "\n%s:\n", title);
	for (i = 0; i < spec->ncols; i++)
		fprintf(fp, " %*s  %s\n", (int)w, spec->cols[i].name,
			spec->cols[i].help);
}
