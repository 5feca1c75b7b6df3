/* SPDX-License-Identifier: MIT */
/* The "top" table of a profile by function, as text and JSON, like pprof -top.
 */
#include "report.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>

#include <math.h>

#include "hash.h"
#include "idxtab.h"
#include "json.h"
#include "cli.h"
#include "msg_cli.h"
#include "pprof_comments.h"

/* One function being summed; the name is not owned here. */
struct node {
	const char *name;
	int64_t flat, cum;
	double flat_var, cum_var; /* NAN once a sample without stddev adds */
	size_t stamp;		  /* last sample (+ 1) that added to cum */
};

struct builder {
	struct node *nodes;
	size_t n_nodes, cap_nodes;
	struct idxtab tab; /* of nodes, by name */
	char **owned;	   /* generated names of unsymbolized frames */
	size_t n_owned;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = hash_fnv1a(HASH_FNV1A_INIT, s, strlen(s));

	return h ^ (h >> 29);
}

static uint64_t abs64(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static uint64_t node_hash(const void *ctx, uint32_t i)
{
	const struct builder *b = ctx;

	return str_hash(b->nodes[i].name);
}

/* The node named name (added if new), or -1. */
static ssize_t node_of(struct builder *b, const char *name)
{
	struct idxtab *t = &b->tab;
	size_t j;

	for (j = idxtab_first(t, str_hash(name)); t->slots[j];
	     j = idxtab_next(t, j))
		if (strcmp(b->nodes[t->slots[j] - 1].name, name) == 0)
			return (ssize_t)t->slots[j] - 1;
	if (b->n_nodes == b->cap_nodes) {
		size_t n = b->cap_nodes ? b->cap_nodes * 2 : 256;
		struct node *p = realloc(b->nodes, n * sizeof(*p));

		if (!p)
			return msg_set_errno(ENOMEM, "report: out of memory");
		b->nodes = p;
		b->cap_nodes = n;
	}
	b->nodes[b->n_nodes] = (struct node){.name = name};
	if (idxtab_put(t, j, (uint32_t)b->n_nodes, node_hash, b) < 0)
		return -1;
	return (ssize_t)b->n_nodes++;
}

const char *report_frame_name(const struct pprof_profile *p,
			      const struct pprof_location *l, size_t k,
			      char *buf, size_t len)
{
	const char *file;
	const struct pprof_mapping *m;

	if (k < l->n_lines && l->lines[k].function_id &&
	    l->lines[k].function_id <= p->n_functions)
		return p->functions[l->lines[k].function_id - 1].name;
	if (!l->mapping_id || l->mapping_id > p->n_mappings) {
		snprintf(buf, len, "0x%llx", (unsigned long long)l->address);
		return buf;
	}
	m = &p->mappings[l->mapping_id - 1];
	file = strrchr(m->file, '/');
	file = file ? file + 1 : m->file;
	snprintf(buf, len, "%s+0x%llx", file,
		 (unsigned long long)(l->address - m->start + m->offset));
	return buf;
}

/*
 * Per location, the node index of each of its frames: computed once, as a
 * profile has far fewer locations than sample frames.
 */
static int map_locations(struct builder *b, const struct pprof_profile *p,
			 size_t **off, uint32_t **ids)
{
	size_t n = 0, k = 0;
	char buf[256];

	for (size_t i = 0; i < p->n_locations; i++)
		n += p->locations[i].n_lines ? p->locations[i].n_lines : 1;
	*off = malloc((p->n_locations + 1) * sizeof(**off));
	*ids = malloc((n + 1) * sizeof(**ids));
	b->owned = calloc(p->n_locations + 1, sizeof(*b->owned));
	if (!*off || !*ids || !b->owned)
		return msg_set_errno(ENOMEM, "report: out of memory");
	for (size_t i = 0; i < p->n_locations; i++) {
		const struct pprof_location *l = &p->locations[i];
		size_t nl = l->n_lines ? l->n_lines : 1;

		(*off)[i] = k;
		for (size_t j = 0; j < nl; j++) {
			const char *name =
				report_frame_name(p, l, j, buf, sizeof(buf));
			ssize_t id;

			if (name == buf) {
				name = strdup(buf);
				if (!name)
					return msg_set_errno(
						ENOMEM,
						"report: out of memory");
				b->owned[b->n_owned++] = (char *)name;
			}
			id = node_of(b, name);
			if (id < 0)
				return -1;
			(*ids)[k++] = (uint32_t)id;
		}
	}
	(*off)[p->n_locations] = k;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	uint64_t fx = abs64(x->flat), fy = abs64(y->flat);
	int c;

	/* pprof's FlatNameOrder. */
	if (fx != fy)
		return fx > fy ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	fx = abs64(x->cum);
	fy = abs64(y->cum);
	if (fx != fy)
		return fx > fy ? -1 : 1;
	return 0;
}

double report_sample_stddev(const struct pprof_sample *s, const char *key)
{
	for (size_t k = 0; k < s->n_labels; k++) {
		const struct pprof_label *l = &s->labels[k];

		if ((!l->str || !l->str[0]) && l->key &&
		    strcmp(l->key, key) == 0)
			return (double)l->num;
	}
	return NAN;
}

/*
 * The variance of sample s's value from its "KEY" numeric label (KEY:
 * the sample type's name + "_stddev"), or NAN when it has none.
 */
static double sample_var(const struct pprof_sample *s, const char *key)
{
	double sd = report_sample_stddev(s, key);

	return sd * sd;
}

static int fill(struct report *r, const struct pprof_profile *p,
		struct builder *b, const size_t *off, const uint32_t *ids)
{
	uint64_t total = 0;
	size_t n = 0;
	char *names;
	size_t names_len = 0;
	char key[256];
	size_t with_sd = 0;
	double sum_var = 0;

	snprintf(key, sizeof(key), "%s_stddev", r->sample_type);
	r->nonnegative = true;
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct pprof_sample *s = &p->samples[i];
		int64_t v = s->values[r->sample_index];
		double var;
		bool leaf = true;

		if (v == 0)
			continue;
		var = sample_var(s, key);
		with_sd += !isnan(var);
		sum_var += var;
		if (v < 0)
			r->nonnegative = false;
		r->n_samples++;
		r->sum = report_add_sat(r->sum, v);
		total = total > UINT64_MAX - abs64(v) ? UINT64_MAX
						      : total + abs64(v);
		for (size_t j = 0; j < s->n_locations; j++) {
			uint64_t lid = s->location_ids[j];

			if (!lid || lid > p->n_locations)
				return msg_set("report: sample %zu refers to "
					       "missing location %llu",
					       i, (unsigned long long)lid);
			for (size_t k = off[lid - 1]; k < off[lid]; k++) {
				struct node *nd = &b->nodes[ids[k]];

				if (leaf) {
					nd->flat = report_add_sat(nd->flat, v);
					nd->flat_var += var;
					leaf = false;
				}
				if (nd->stamp != i + 1) {
					nd->stamp = i + 1;
					nd->cum = report_add_sat(nd->cum, v);
					nd->cum_var += var;
				}
			}
		}
	}
	r->total = total > INT64_MAX ? INT64_MAX : (int64_t)total;
	r->has_stddev = with_sd > 0;
	r->sum_stddev = sqrt(sum_var);

	for (size_t i = 0; i < b->n_nodes; i++) {
		if (b->nodes[i].flat || b->nodes[i].cum) {
			n++;
			names_len += strlen(b->nodes[i].name) + 1;
		}
	}
	/* One block: rows, then their names, freed together. */
	r->rows = malloc(n * sizeof(*r->rows) + names_len + 1);
	if (!r->rows)
		return msg_set_errno(ENOMEM, "report: out of memory");
	names = (char *)(r->rows + n);
	for (size_t i = 0; i < b->n_nodes; i++) {
		const struct node *nd = &b->nodes[i];
		size_t len;

		if (!nd->flat && !nd->cum)
			continue;
		len = strlen(nd->name) + 1;
		memcpy(names, nd->name, len);
		r->rows[r->n_rows++] = (struct report_row){
			.name = names,
			.flat = nd->flat,
			.cum = nd->cum,
			.flat_stddev = r->has_stddev ? sqrt(nd->flat_var) : NAN,
			.cum_stddev = r->has_stddev ? sqrt(nd->cum_var) : NAN,
		};
		names += len;
	}
	qsort(r->rows, r->n_rows, sizeof(*r->rows), row_cmp);
	return 0;
}

struct report *report_by_function(const struct pprof_profile *p,
				  int sample_index)
{
	struct builder b;
	struct report *r;
	size_t *off = NULL;
	uint32_t *ids = NULL;
	int rc = -1;

	if (sample_index < 0 || (size_t)sample_index >= p->n_sample_types) {
		msg_set("report: sample index %d out of range (profile has "
			"%zu sample types)",
			sample_index, p->n_sample_types);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		msg_set_errno(ENOMEM, "report: out of memory");
		return NULL;
	}
	memset(&b, 0, sizeof(b));
	if (idxtab_init(&b.tab, 0) < 0) {
		free(r);
		return NULL;
	}
	r->sample_index = sample_index;
	r->sample_type = strdup(p->sample_types[sample_index].type);
	r->unit = strdup(p->sample_types[sample_index].unit);
	if (!r->sample_type || !r->unit) {
		msg_set_errno(ENOMEM, "report: out of memory");
		goto out;
	}
	if (map_locations(&b, p, &off, &ids) < 0 || fill(r, p, &b, off, ids))
		goto out;
	rc = 0;
out:
	for (size_t i = 0; i < b.n_owned; i++)
		free(b.owned[i]);
	free(b.owned);
	free(b.nodes);
	idxtab_free(&b.tab);
	free(off);
	free(ids);
	if (rc < 0) {
		report_free(r);
		return NULL;
	}
	return r;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	free((char *)r->sample_type);
	free((char *)r->unit);
	free(r->rows);
	free(r);
}

const struct report_row *report_find(const struct report *r, const char *name)
{
	for (size_t i = 0; i < r->n_rows; i++)
		if (strcmp(r->rows[i].name, name) == 0)
			return &r->rows[i];
	return NULL;
}

int report_sample_index(const struct pprof_profile *p, const char *arg)
{
	char list[MSG_MAX / 2];
	size_t off = 0;
	int i;

	if (p->n_sample_types == 0)
		return msg_set("profile has no sample types");
	if (!arg || !*arg) {
		if (p->default_sample_type && p->default_sample_type[0]) {
			i = pprof_sample_type_index(p, p->default_sample_type);
			if (i >= 0)
				return i;
		}
		return (int)p->n_sample_types - 1;
	}
	i = pprof_sample_type_index(p, arg);
	if (i >= 0)
		return i;
	if (arg[0] >= '0' && arg[0] <= '9') {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(arg, &end, 10);
		if (!errno && !*end && n < p->n_sample_types)
			return (int)n;
	}
	list[0] = '\0';
	for (size_t k = 0; k < p->n_sample_types && off < sizeof(list); k++) {
		int w = snprintf(list + off, sizeof(list) - off, "%s%zu=%s",
				 k ? ", " : "", k, p->sample_types[k].type);

		if (w > 0)
			off += (size_t)w;
	}
	return msg_set("no sample type '%s': the profile has %s", arg, list);
}

char *report_format_value(int64_t v, const char *unit, char *buf, size_t len)
{
	static const char *const names[] = {"B", "kB", "MB", "GB", "TB", "PB"};
	double x = (double)v, ax = fabs(x);
	size_t u = 0;
	int n;

	if (!unit || (strcmp(unit, "bytes") != 0 && strcmp(unit, "byte") != 0 &&
		      strcmp(unit, "B") != 0)) {
		snprintf(buf, len, "%lld", (long long)v);
		return buf;
	}
	/* pprof's autoScale: the largest unit the value reaches. */
	while (u + 1 < ARRAY_SIZE(names) && ax >= ldexp(1.0, 10 * (int)(u + 1)))
		u++;
	x = ldexp(x, -10 * (int)u);
	n = snprintf(buf, len, "%.2f", x);
	if (n > 3 && (size_t)n < len && strcmp(buf + n - 3, ".00") == 0)
		buf[n - 3] = '\0';
	if (strcmp(buf, "0") == 0 || strcmp(buf, "-0") == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	n = (int)strlen(buf);
	snprintf(buf + n, len - (size_t)n, "%s", names[u]);
	return buf;
}

/* pprof's measurement.Percentage: of |value|, at least two digits. */
static void format_pct(int64_t v, int64_t total, char *buf, size_t len)
{
	double ratio = total ? fabs((double)v / (double)total) * 100 : 0;

	if (ratio >= 99.95 && ratio <= 100.05)
		snprintf(buf, len, "  100%%");
	else if (ratio >= 1.0)
		snprintf(buf, len, "%5.2f%%", ratio);
	else
		snprintf(buf, len, "%5.2g%%", ratio);
}

static void format_cell(const struct report *r, int64_t v, bool exact,
			char *buf, size_t len)
{
	if (exact)
		snprintf(buf, len, "%lld", (long long)v);
	else
		report_format_value(v, r->unit, buf, len);
}

bool report_interval(int64_t v, double sd, bool nonnegative, int64_t *low,
		     int64_t *high)
{
	double lo, hi;

	if (isnan(sd))
		return false;
	lo = (double)v - REPORT_Z95 * sd;
	hi = (double)v + REPORT_Z95 * sd;
	if (nonnegative && lo < 0)
		lo = 0;
	*low = lo < -9.2e18 ? INT64_MIN : lo > 9.2e18 ? INT64_MAX : llround(lo);
	*high = hi < -9.2e18  ? INT64_MIN
		: hi > 9.2e18 ? INT64_MAX
			      : llround(hi);
	return true;
}

/* The half-width z sd of an interval as "+-VALUE", or "?" when unknown. */
static void format_halfwidth(const struct report *r, double z, double sd,
			     bool exact, char *buf, size_t len)
{
	char v[32];
	double h = z * sd;

	if (isnan(sd)) {
		snprintf(buf, len, "?");
		return;
	}
	format_cell(r, h > 9.2e18 ? INT64_MAX : llround(h), exact, v,
		    sizeof(v));
	snprintf(buf, len, "+-%s", v);
}

int report_row_noise(const struct report *r, const struct report_row *row)
{
	double fs = r->has_stddev ? row->flat_stddev : 0;
	double cs = r->has_stddev ? row->cum_stddev : 0;

	if (isnan(fs) || isnan(cs))
		return -1;
	return fabs((double)row->flat) <= r->noise_z * fs &&
	       fabs((double)row->cum) <= r->noise_z * cs;
}

/* The noise header line of report_print_top. */
static void print_noise_head(FILE *fp, const struct report *r, bool exact)
{
	char v[32], h[40];

	format_cell(r, r->sum, exact, v, sizeof(v));
	format_halfwidth(r, r->noise_z, r->sum_stddev, exact, h, sizeof(h));
	fprintf(fp,
		"Sampling noise: total change %s %s (%g sigma); rows marked ~ "
		"changed within it\n",
		v, h, r->noise_z);
}

enum {
	TOP_FLAT,
	TOP_FLAT_PCT,
	TOP_SUM_PCT,
	TOP_CUM,
	TOP_CUM_PCT,
	TOP_FLAT_SD,
	TOP_CUM_SD,
	TOP_MARK,
	TOP_NAME,
};

/* pprof's names (its name column has no title: ours has, a line ending
 * in an empty title would end in spaces). */
static const struct table_col top_cols[] = {
	TABLE_NUMBER("flat", "the function's own value"),
	TABLE_NUMBER("flat%", "flat, percent of the total"),
	TABLE_NUMBER("sum%", "flat% of this row and those above"),
	TABLE_NUMBER("cum", "with what it calls"),
	TABLE_NUMBER("cum%", "cum, percent of the total"),
	TABLE_NUMBER("flat95",
		     "flat's 95 % interval, +- (palloc-diff: flat<z>sd)"),
	TABLE_NUMBER("cum95",
		     "cum's 95 % interval, +- (palloc-diff: cum<z>sd)"),
	{"mark", 1, 0, "palloc-diff: ~ within the sampling noise, ? unknown"},
	{"name", 0.5, SCOLS_FL_TRUNC, "the function"},
};

const struct table_spec report_top_spec = {
	top_cols,
	ARRAY_SIZE(top_cols),
	"flat,flat%,sum%,cum,cum%,name",
};

int report_print_top(FILE *fp, const struct report *r, size_t max_rows,
		     bool exact, const struct table_opts *to)
{
	static const struct table_opts defaults = {0};
	size_t n = max_rows && max_rows < r->n_rows ? max_rows : r->n_rows;
	int64_t shown = 0, sum = 0;
	char a[32], b[32], c[32], ft[32], ct[32];
	bool noise = r->mark_noise && r->has_stddev;
	bool ci = !noise && r->show_intervals && r->has_stddev;
	double z = noise ? r->noise_z : REPORT_Z95;
	struct table_spec spec = report_top_spec;
	struct table_opts o = to ? *to : defaults;
	bool heads = !o.noheadings && !o.raw;
	struct table *t;

	if (noise)
		spec.defaults =
			"flat,flat%,sum%,cum,cum%,flat95,cum95,mark,name";
	else if (ci)
		spec.defaults = "flat,flat%,sum%,cum,cum%,flat95,cum95,name";
	for (size_t i = 0; i < n; i++)
		shown = report_add_sat(shown, r->rows[i].flat);
	format_cell(r, shown, exact, a, sizeof(a));
	format_pct(shown, r->total, b, sizeof(b));
	format_cell(r, r->total, exact, c, sizeof(c));
	if (heads) {
		fputs("Type: ", fp);
		msg_fputs_escaped(r->sample_type, fp);
		fputc('\n', fp);
		fprintf(fp, "Showing nodes accounting for %s, %s of %s total\n",
			a, b, c);
		if (n < r->n_rows)
			fprintf(fp, "Showing top %zu nodes out of %zu\n", n,
				r->n_rows);
		if (noise)
			print_noise_head(fp, r, exact);
		else if (ci) {
			format_halfwidth(r, z, r->sum_stddev, exact, ft,
					 sizeof(ft));
			fprintf(fp,
				"95%% intervals from the sampling: value %s "
				"(1.96 sigma) for the whole profile\n",
				ft);
		}
	}
	t = table_new(&spec, &o, fp);
	if (!t)
		return -1;
	if (noise) {
		snprintf(ft, sizeof(ft), "flat%gsd", r->noise_z);
		snprintf(ct, sizeof(ct), "cum%gsd", r->noise_z);
		table_title(t, TOP_FLAT_SD, ft);
		table_title(t, TOP_CUM_SD, ct);
	}
	table_title(t, TOP_MARK, "");
	for (size_t i = 0; i < n; i++) {
		const struct report_row *row = &r->rows[i];
		static const char *const mark[] = {"?", "", "~"};
		int rc = 0;

		sum = report_add_sat(sum, row->flat);
		rc |= table_row(t);
		format_cell(r, row->flat, exact, a, sizeof(a));
		rc |= table_set(t, TOP_FLAT, a);
		format_pct(row->flat, r->total, a, sizeof(a));
		rc |= table_set(t, TOP_FLAT_PCT, a);
		format_pct(sum, r->total, a, sizeof(a));
		rc |= table_set(t, TOP_SUM_PCT, a);
		format_cell(r, row->cum, exact, a, sizeof(a));
		rc |= table_set(t, TOP_CUM, a);
		format_pct(row->cum, r->total, a, sizeof(a));
		rc |= table_set(t, TOP_CUM_PCT, a);
		format_halfwidth(r, z, r->has_stddev ? row->flat_stddev : NAN,
				 exact, ft, sizeof(ft));
		rc |= table_set(t, TOP_FLAT_SD, ft);
		format_halfwidth(r, z, r->has_stddev ? row->cum_stddev : NAN,
				 exact, ft, sizeof(ft));
		rc |= table_set(t, TOP_CUM_SD, ft);
		rc |= table_set(t, TOP_MARK,
				noise ? mark[report_row_noise(r, row) + 1]
				      : "");
		/* names come from the profile: libsmartcols escapes them */
		rc |= table_set(t, TOP_NAME, row->name);
		if (rc) {
			table_free(t);
			return -1;
		}
	}
	return table_print(t);
}

const char *report_unit_suffix(const char *unit)
{
	if (!unit)
		return "value";
	if (strcmp(unit, "bytes") == 0 || strcmp(unit, "byte") == 0 ||
	    strcmp(unit, "B") == 0)
		return "bytes";
	if (strcmp(unit, "count") == 0 || strcmp(unit, "objects") == 0)
		return "count";
	if (strcmp(unit, "nanoseconds") == 0 || strcmp(unit, "ns") == 0)
		return "ns";
	return "value";
}

static json_t *ratio(int64_t v, int64_t total)
{
	return json_real_or_null(
		total != 0, round(fabs((double)v / (double)total) * 1e6) / 1e6);
}

/* Set key PREFIX_SUFFIX of o to value (stolen), as json_set(). */
static void set_unit(json_t *o, const char *prefix, const char *suffix,
		     json_t *value)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_%s", prefix, suffix);
	json_set(o, key, value);
}

/* A standard deviation as a rounded integer, or null when unknown. */
static json_t *stddev_json(double sd)
{
	if (isnan(sd))
		return json_null();
	return json_integer(sd > 9.2e18 ? INT64_MAX : llround(sd));
}

/* Keys PREFIX_stddev_U, PREFIX_ci95_low_U, PREFIX_ci95_high_U of x. */
static void interval_json(const struct report *r, json_t *x, const char *prefix,
			  int64_t v, double sd, const char *u)
{
	char key[32];
	int64_t lo, hi;
	bool known = report_interval(v, sd, r->nonnegative, &lo, &hi);

	snprintf(key, sizeof(key), "%s_stddev", prefix);
	set_unit(x, key, u, stddev_json(sd));
	snprintf(key, sizeof(key), "%s_ci95_low", prefix);
	set_unit(x, key, u, known ? json_integer(lo) : json_null());
	snprintf(key, sizeof(key), "%s_ci95_high", prefix);
	set_unit(x, key, u, known ? json_integer(hi) : json_null());
}

json_t *report_to_json(const struct report *r, size_t max_rows)
{
	const char *u = report_unit_suffix(r->unit);
	size_t n = max_rows && max_rows < r->n_rows ? max_rows : r->n_rows;
	json_t *o = json_object(), *rows = json_array();
	int64_t sum = 0;

	/* Names come from untrusted files: json_str_or_null makes them
	 * valid UTF-8. Failures are collected by json_set/json_push. */
	json_failed();
	json_set(o, "sample_type", json_str_or_null(r->sample_type));
	json_set(o, "unit", json_str_or_null(r->unit));
	set_unit(o, "total", u, json_integer(r->total));
	set_unit(o, "net", u, json_integer(r->sum));
	if (r->has_stddev)
		set_unit(o, "net_stddev", u, stddev_json(r->sum_stddev));
	json_set(o, "function_count", json_u64(r->n_rows));
	for (size_t i = 0; i < n && rows; i++) {
		const struct report_row *row = &r->rows[i];
		json_t *x = json_object();

		sum = report_add_sat(sum, row->flat);
		json_set(x, "function", json_str_or_null(row->name));
		set_unit(x, "flat", u, json_integer(row->flat));
		json_set(x, "flat_ratio", ratio(row->flat, r->total));
		json_set(x, "sum_ratio", ratio(sum, r->total));
		set_unit(x, "cum", u, json_integer(row->cum));
		json_set(x, "cum_ratio", ratio(row->cum, r->total));
		if (r->has_stddev) {
			interval_json(r, x, "flat", row->flat, row->flat_stddev,
				      u);
			interval_json(r, x, "cum", row->cum, row->cum_stddev,
				      u);
		}
		if (r->mark_noise) {
			int w = report_row_noise(r, row);

			json_set(x, "within_noise",
				 w < 0 ? json_null() : json_boolean(w));
		}
		json_push(rows, x);
	}
	json_set(o, "functions", rows);
	if (json_failed()) {
		json_decref(o);
		msg_set_errno(ENOMEM, "report: out of memory");
		return NULL;
	}
	return o;
}

const char *report_dropped_text(uint64_t count, uint64_t bytes,
				bool bytes_known, char *buf, size_t len)
{
	char b[32];

	snprintf(
		buf, len,
		"%llu sample%s dropped%s%s (stack table full or out of memory)",
		(unsigned long long)count, count == 1 ? "" : "s",
		bytes_known ? ", about " : "",
		bytes_known
			? cli_human_signed(b, sizeof(b),
					   bytes > INT64_MAX ? INT64_MAX
							     : (int64_t)bytes)
			: "");
	return buf;
}

void report_warn_dropped(const struct pprof_profile *p, const char *shown)
{
	struct pprof_comment_samples s;
	char d[128];

	if (!pprof_comment_samples(p, &s) || s.dropped == 0)
		return;
	msg_warn("%s: %s", shown,
		 report_dropped_text(s.dropped, s.dropped_bytes,
				     s.dropped_bytes_known, d, sizeof(d)));
}
