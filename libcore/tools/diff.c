/* SPDX-License-Identifier: MIT */
/* Profile difference: NEW minus BASE, stacks matched by symbolized frames. */
#include "diff.h"
#include "grow.h"
#include "hash.h"
#include "idxtab.h"

#include <math.h>

#include "msg.h"
#include "report.h"

/*
 * Data layout. Both profiles' locations are first turned into frame ids
 * (one per line, or one per unsymbolized location), interned by content in
 * one table shared by the two profiles, so equal frames of BASE and NEW get
 * the same id whatever their addresses. A stack is then a sequence of
 * frame ids, interned in a second table; each stack holds
 * its NEW - BASE values. Memory is a few words per location, per frame of
 * each distinct stack and per stack value: of the order of the inputs.
 */

struct frame {
	const char *name; /* function name, or mapping basename */
	const char *file; /* "" when lines are not used */
	int64_t line;	  /* 0 when lines are not used */
	uint64_t addr;	  /* file-relative address of unsymbolized frames */
	bool symbolized;
	uint64_t hash;
};

struct stack {
	uint32_t len;
	bool in_new, in_base;
	uint8_t which; /* the profile of sample: 0 NEW, 1 BASE */
	uint64_t hash;
	size_t sample; /* first sample with this stack, in its profile */
};

struct diff_state {
	bool use_lines;
	struct frame *frames;
	size_t n_frames, cap_frames;
	struct idxtab frame_tab;

	const struct pprof_profile *prof[2]; /* NEW, BASE */
	struct stack *stacks;
	size_t n_stacks, cap_stacks;
	struct idxtab stack_tab;
	int64_t *values; /* n_stacks * n_types, NEW - BASE */
	size_t cap_values, n_types;

	/* Sampling variance, only when an input has TYPE_stddev labels. */
	char **sd_keys; /* per type: "TYPE_stddev" */
	bool *has_var;	/* per type: some sample carries its label */
	double *vars;	/* n_stacks * n_types, var(BASE) + var(NEW) */
	size_t cap_vars;

	/* per input profile: location index -> frames in loc_pool */
	uint32_t *loc_off[2], *loc_n[2];
	uint32_t *loc_pool[2];

	uint32_t *tmp; /* a sample's frames */
	size_t cap_tmp;
	struct pprof_label *labels; /* a result sample's, n_types */
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	return hash_fnv1a(h, s, strlen(s) + 1);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (grow_array(arr, cap, need, elem) < 0)
		return msg_set_errno(ENOMEM, "diff: out of memory");
	return 0;
}

/* Room in *arr (of n entries) for entry n, whose index is a uint32_t id
 * in an idxtab (slot id + 1): refused past UINT32_MAX - 2 ("diff: too many
 * distinct WHAT"). Returns 0 or -1 with msg_set(). */
static int grow_id(void **arr, size_t *cap, size_t n, size_t elem,
		   const char *what)
{
	if (n >= UINT32_MAX - 1)
		return msg_set("diff: too many distinct %s", what);
	return grow(arr, cap, n + 1, elem);
}

static uint64_t frame_hash(const void *ctx, uint32_t i)
{
	return ((const struct diff_state *)ctx)->frames[i].hash;
}

static uint64_t stack_hash(const void *ctx, uint32_t i)
{
	return ((const struct diff_state *)ctx)->stacks[i].hash;
}

static bool frame_eq(const struct frame *a, const struct frame *b)
{
	return a->hash == b->hash && a->symbolized == b->symbolized &&
	       a->line == b->line && a->addr == b->addr &&
	       strcmp(a->name, b->name) == 0 && strcmp(a->file, b->file) == 0;
}

/* The id of frame f, added if new. Returns 0 or -1. */
static int intern_frame(struct diff_state *st, struct frame *f, uint32_t *id)
{
	struct idxtab *t = &st->frame_tab;
	size_t i;

	f->hash = hash_fnv1a(HASH_FNV1A_INIT, &f->line, sizeof(f->line));
	f->hash = hash_fnv1a(f->hash, &f->addr, sizeof(f->addr));
	f->hash = hash_str(hash_str(f->hash, f->name), f->file);
	f->hash = hash_mix(f->hash ^ f->symbolized);
	for (i = idxtab_first(t, f->hash); t->slots[i]; i = idxtab_next(t, i)) {
		if (frame_eq(&st->frames[t->slots[i] - 1], f)) {
			*id = t->slots[i] - 1;
			return 0;
		}
	}
	if (grow_id((void **)&st->frames, &st->cap_frames, st->n_frames,
		    sizeof(*st->frames), "frames") < 0)
		return -1;
	st->frames[st->n_frames] = *f;
	*id = (uint32_t)st->n_frames++;
	return idxtab_put(t, i, *id, frame_hash, st);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Whether any location of p has a function (is symbolized). */
static bool profile_symbolized(const struct pprof_profile *p)
{
	for (size_t i = 0; i < p->n_locations; i++)
		if (p->locations[i].n_lines)
			return true;
	return false;
}

static bool profile_has_lines(const struct pprof_profile *p)
{
	for (size_t i = 0; i < p->n_locations; i++)
		for (size_t j = 0; j < p->locations[i].n_lines; j++)
			if (p->locations[i].lines[j].line != 0)
				return true;
	return false;
}

/* Turn every location of p into its frame ids (st->loc_*[which]). */
static int map_locations(struct diff_state *st, const struct pprof_profile *p,
			 int which)
{
	size_t n_pool = 0, k = 0;

	for (size_t i = 0; i < p->n_locations; i++)
		n_pool += p->locations[i].n_lines ? p->locations[i].n_lines : 1;
	if (n_pool >= UINT32_MAX)
		return msg_set("diff: too many location lines");
	st->loc_off[which] = malloc((p->n_locations + 1) * sizeof(uint32_t));
	st->loc_n[which] = malloc((p->n_locations + 1) * sizeof(uint32_t));
	st->loc_pool[which] = malloc((n_pool + 1) * sizeof(uint32_t));
	if (!st->loc_off[which] || !st->loc_n[which] || !st->loc_pool[which])
		return msg_set_errno(ENOMEM, "diff: out of memory");

	for (size_t i = 0; i < p->n_locations; i++) {
		const struct pprof_location *l = &p->locations[i];
		struct frame f;
		uint32_t id;

		st->loc_off[which][i] = (uint32_t)k;
		st->loc_n[which][i] = l->n_lines ? (uint32_t)l->n_lines : 1;
		if (!l->n_lines) {
			const struct pprof_mapping *m = NULL;

			memset(&f, 0, sizeof(f));
			if (l->mapping_id && l->mapping_id <= p->n_mappings)
				m = &p->mappings[l->mapping_id - 1];
			f.name = m ? base_name(m->file) : "";
			f.file = "";
			f.addr = m ? l->address - m->start + m->offset
				   : l->address;
			if (intern_frame(st, &f, &id) < 0)
				return -1;
			st->loc_pool[which][k++] = id;
			continue;
		}
		for (size_t j = 0; j < l->n_lines; j++) {
			const struct pprof_line *ln = &l->lines[j];
			const struct pprof_function *fn = NULL;

			if (ln->function_id &&
			    ln->function_id <= p->n_functions)
				fn = &p->functions[ln->function_id - 1];
			memset(&f, 0, sizeof(f));
			f.symbolized = true;
			f.name = fn ? fn->name : "";
			f.file = st->use_lines && fn ? fn->file : "";
			f.line = st->use_lines ? ln->line : 0;
			if (intern_frame(st, &f, &id) < 0)
				return -1;
			st->loc_pool[which][k++] = id;
		}
	}
	return 0;
}

static int64_t sat_neg(int64_t a)
{
	return a == INT64_MIN ? INT64_MAX : -a;
}

static uint64_t sat_uadd(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * Whether stack s has the frames tmp[0..len). The frames of a stack are not
 * stored: they are recomputed from the sample it was first seen in, which
 * saves 4 bytes per frame of every distinct stack (a third of the memory
 * diffing needs on big profiles) for a little time on hash matches.
 */
static bool stack_eq(const struct diff_state *st, const struct stack *s,
		     size_t len)
{
	const struct pprof_sample *smp =
		&st->prof[s->which]->samples[s->sample];
	const uint32_t *off = st->loc_off[s->which], *n = st->loc_n[s->which];
	const uint32_t *pool = st->loc_pool[s->which];
	size_t k = 0;

	if (s->len != len)
		return false;
	for (size_t j = 0; j < smp->n_locations; j++) {
		uint64_t id = smp->location_ids[j];

		if (k + n[id - 1] > len ||
		    memcmp(pool + off[id - 1], st->tmp + k,
			   n[id - 1] * sizeof(uint32_t)) != 0)
			return false;
		k += n[id - 1];
	}
	return k == len;
}

/* Find or add the stack of tmp[0..len), returning its index. */
static int intern_stack(struct diff_state *st, size_t len, int which,
			size_t sample, size_t *out)
{
	struct idxtab *t = &st->stack_tab;
	uint64_t h = hash_mix(
		hash_fnv1a(HASH_FNV1A_INIT, st->tmp, len * sizeof(uint32_t)));
	struct stack *s;
	size_t i;

	for (i = idxtab_first(t, h); t->slots[i]; i = idxtab_next(t, i)) {
		s = &st->stacks[t->slots[i] - 1];
		if (s->hash == h && stack_eq(st, s, len)) {
			*out = t->slots[i] - 1;
			return 0;
		}
	}
	if (grow_id((void **)&st->stacks, &st->cap_stacks, st->n_stacks,
		    sizeof(*st->stacks), "stacks") < 0)
		return -1;
	if (grow((void **)&st->values, &st->cap_values,
		 (st->n_stacks + 1) * st->n_types, sizeof(*st->values)) < 0)
		return -1;
	if (st->sd_keys &&
	    grow((void **)&st->vars, &st->cap_vars,
		 (st->n_stacks + 1) * st->n_types, sizeof(*st->vars)) < 0)
		return -1;
	if (len > UINT32_MAX)
		return msg_set("diff: stack of %zu frames", len);
	s = &st->stacks[st->n_stacks];
	s->len = (uint32_t)len;
	s->which = (uint8_t)which;
	s->hash = h;
	s->in_new = s->in_base = false;
	s->sample = sample;
	memset(st->values + st->n_stacks * st->n_types, 0,
	       st->n_types * sizeof(*st->values));
	for (size_t j = 0; st->vars && j < st->n_types; j++)
		st->vars[st->n_stacks * st->n_types + j] = 0;
	*out = st->n_stacks++;
	return idxtab_put(t, i, (uint32_t)*out, stack_hash, st);
	return 0;
}

/* Add (sign +1, NEW) or subtract (BASE) every sample of p. */
static int add_samples(struct diff_state *st, const struct pprof_profile *p,
		       int which, const int *idx, struct diff_totals *totals)
{
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct pprof_sample *s = &p->samples[i];
		size_t len = 0, k = 0;
		int64_t *v;

		for (size_t j = 0; j < s->n_locations; j++) {
			uint64_t id = s->location_ids[j];

			if (id == 0 || id > p->n_locations)
				return msg_set("diff: sample %zu refers to "
					       "missing location %llu",
					       i, (unsigned long long)id);
			len += st->loc_n[which][id - 1];
		}
		if (grow((void **)&st->tmp, &st->cap_tmp, len + 1,
			 sizeof(*st->tmp)) < 0)
			return -1;
		len = 0;
		for (size_t j = 0; j < s->n_locations; j++) {
			uint64_t id = s->location_ids[j];

			memcpy(st->tmp + len,
			       st->loc_pool[which] + st->loc_off[which][id - 1],
			       st->loc_n[which][id - 1] * sizeof(uint32_t));
			len += st->loc_n[which][id - 1];
		}
		if (intern_stack(st, len, which, i, &k) < 0)
			return -1;
		if (which == 0)
			st->stacks[k].in_new = true;
		else
			st->stacks[k].in_base = true;
		v = st->values + k * st->n_types;
		for (size_t t = 0; st->vars && t < st->n_types; t++) {
			double sd = st->has_var[t] ? report_sample_stddev(
							     s, st->sd_keys[t])
						   : NAN;

			/* Variances add; a sample without the label has none
			 * (an exact value, or another tool's profile). */
			if (!isnan(sd)) {
				st->vars[k * st->n_types + t] += sd * sd;
				totals[t].var += sd * sd;
			}
		}
		for (size_t t = 0; t < st->n_types; t++) {
			int64_t x = s->values[idx[t]];
			uint64_t ax =
				x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;

			if (which == 0) {
				v[t] = report_add_sat(v[t], x);
				totals[t].new_sum =
					report_add_sat(totals[t].new_sum, x);
				totals[t].new_abs =
					sat_uadd(totals[t].new_abs, ax);
			} else {
				v[t] = report_add_sat(v[t], sat_neg(x));
				totals[t].base_sum =
					report_add_sat(totals[t].base_sum, x);
				totals[t].base_abs =
					sat_uadd(totals[t].base_abs, ax);
			}
		}
	}
	return 0;
}

/* Copying locations of one input into the result, each at most once. */
struct copier {
	const struct pprof_profile *src;
	struct pprof_profile *dst;
	const struct pprof_profile *other; /* NEW, when src is BASE */
	const uint64_t *other_map;	   /* NEW's mapping ids in dst */
	uint64_t *map_ids, *fn_ids, *loc_ids;
	struct pprof_line *lines;
	size_t cap_lines;
};

static bool same_mapping(const struct pprof_mapping *a,
			 const struct pprof_mapping *b)
{
	return a->start == b->start && a->limit == b->limit &&
	       a->offset == b->offset && strcmp(a->file, b->file) == 0 &&
	       strcmp(a->build_id, b->build_id) == 0;
}

static uint64_t copy_mapping(struct copier *c, uint64_t id)
{
	const struct pprof_mapping *m;

	if (id == 0 || id > c->src->n_mappings)
		return 0;
	if (c->map_ids[id - 1])
		return c->map_ids[id - 1];
	m = &c->src->mappings[id - 1];
	if (c->other) {
		for (size_t i = 0; i < c->other->n_mappings; i++) {
			if (same_mapping(m, &c->other->mappings[i])) {
				c->map_ids[id - 1] = c->other_map[i];
				return c->other_map[i];
			}
		}
	}
	c->map_ids[id - 1] = pprof_add_mapping(c->dst, m);
	return c->map_ids[id - 1];
}

static int copy_location(struct copier *c, uint64_t id, uint64_t *out)
{
	const struct pprof_location *l = &c->src->locations[id - 1];
	uint64_t mid = 0;

	if (c->loc_ids[id - 1]) {
		*out = c->loc_ids[id - 1];
		return 0;
	}
	if (l->mapping_id) {
		mid = copy_mapping(c, l->mapping_id);
		if (!mid)
			return -1;
	}
	if (grow((void **)&c->lines, &c->cap_lines, l->n_lines + 1,
		 sizeof(*c->lines)) < 0)
		return -1;
	for (size_t j = 0; j < l->n_lines; j++) {
		uint64_t fid = l->lines[j].function_id;
		const struct pprof_function *f;

		if (fid == 0 || fid > c->src->n_functions)
			return msg_set("diff: location %llu refers to "
				       "missing function %llu",
				       (unsigned long long)id,
				       (unsigned long long)fid);
		if (!c->fn_ids[fid - 1]) {
			f = &c->src->functions[fid - 1];
			c->fn_ids[fid - 1] = pprof_add_function(
				c->dst, f->name, f->system_name, f->file,
				f->start_line);
			if (!c->fn_ids[fid - 1])
				return -1;
		}
		c->lines[j].function_id = c->fn_ids[fid - 1];
		c->lines[j].line = l->lines[j].line;
	}
	*out = pprof_add_location(c->dst, mid, l->address, c->lines,
				  l->n_lines);
	if (!*out)
		return -1;
	c->loc_ids[id - 1] = *out;
	return 0;
}

static int copier_init(struct copier *c, const struct pprof_profile *src,
		       struct pprof_profile *dst)
{
	memset(c, 0, sizeof(*c));
	c->src = src;
	c->dst = dst;
	c->map_ids = calloc(src->n_mappings + 1, sizeof(uint64_t));
	c->fn_ids = calloc(src->n_functions + 1, sizeof(uint64_t));
	c->loc_ids = calloc(src->n_locations + 1, sizeof(uint64_t));
	if (!c->map_ids || !c->fn_ids || !c->loc_ids)
		return msg_set_errno(ENOMEM, "diff: out of memory");
	return 0;
}

static void copier_free(struct copier *c)
{
	free(c->map_ids);
	free(c->fn_ids);
	free(c->loc_ids);
	free(c->lines);
}

static void state_free(struct diff_state *st)
{
	free(st->frames);
	idxtab_free(&st->frame_tab);
	free(st->stacks);
	idxtab_free(&st->stack_tab);
	free(st->values);
	for (int i = 0; i < 2; i++) {
		free(st->loc_off[i]);
		free(st->loc_n[i]);
		free(st->loc_pool[i]);
	}
	free(st->tmp);
	for (size_t t = 0; st->sd_keys && t < st->n_types; t++)
		free(st->sd_keys[t]);
	free(st->sd_keys);
	free(st->has_var);
	free(st->vars);
	free(st->labels);
}

/*
 * Which common types carry TYPE_stddev labels (the agent's error bars,
 * palloc(7)) in either input. Without any, no variance is kept and the
 * result has no such labels: nothing changes for exact profiles.
 */
static int setup_stddev(struct diff_state *st, const struct pprof_profile *dst,
			struct diff_totals *totals)
{
	bool any = false;

	st->sd_keys = calloc(st->n_types, sizeof(*st->sd_keys));
	st->has_var = calloc(st->n_types, sizeof(*st->has_var));
	st->labels = calloc(st->n_types, sizeof(*st->labels));
	if (!st->sd_keys || !st->has_var || !st->labels)
		return msg_set_errno(ENOMEM, "diff: out of memory");
	for (size_t t = 0; t < st->n_types; t++) {
		size_t len = strlen(dst->sample_types[t].type) + 8;

		st->sd_keys[t] = malloc(len);
		if (!st->sd_keys[t])
			return msg_set_errno(ENOMEM, "diff: out of memory");
		snprintf(st->sd_keys[t], len, "%s_stddev",
			 dst->sample_types[t].type);
	}
	for (int w = 0; w < 2; w++) {
		const struct pprof_profile *p = st->prof[w];

		for (size_t i = 0; i < p->n_samples; i++)
			for (size_t t = 0; t < st->n_types; t++)
				if (!st->has_var[t] &&
				    !isnan(report_sample_stddev(
					    &p->samples[i], st->sd_keys[t])))
					st->has_var[t] = any = true;
	}
	for (size_t t = 0; t < st->n_types; t++)
		totals[t].has_stddev = st->has_var[t];
	if (!any) {
		for (size_t t = 0; t < st->n_types; t++)
			free(st->sd_keys[t]);
		free(st->sd_keys);
		st->sd_keys = NULL;
	}
	return 0;
}

/* The TYPE_stddev labels of stack k of the result into st->labels. */
static size_t stack_labels(struct diff_state *st,
			   const struct pprof_profile *dst, size_t k)
{
	size_t n = 0;

	for (size_t t = 0; st->vars && t < st->n_types; t++) {
		double sd = sqrt(st->vars[k * st->n_types + t]);

		if (!st->has_var[t])
			continue;
		st->labels[n++] = (struct pprof_label){
			.key = st->sd_keys[t],
			.str = "",
			.num = sd > 9.2e18 ? INT64_MAX : llround(sd),
			.num_unit = dst->sample_types[t].unit,
		};
	}
	return n;
}

/* Match sample types by name; warn about units and periods. */
static int match_types(const struct pprof_profile *base,
		       const struct pprof_profile *new_p, int *new_idx,
		       int *base_idx, size_t *n, diff_warn_fn warn, void *ctx)
{
	char buf[MSG_MAX];

	*n = 0;
	for (size_t i = 0; i < new_p->n_sample_types; i++) {
		const struct pprof_value_type *t = &new_p->sample_types[i];
		int b = pprof_sample_type_index(base, t->type);

		if (b < 0)
			continue;
		if (warn && strcmp(t->unit, base->sample_types[b].unit) != 0) {
			snprintf(buf, sizeof(buf),
				 "unit of '%s' differs: '%s' in BASE, '%s' in "
				 "NEW",
				 t->type, base->sample_types[b].unit, t->unit);
			warn(ctx, buf);
		}
		new_idx[*n] = (int)i;
		base_idx[*n] = b;
		(*n)++;
	}
	if (*n == 0) {
		char have[2][MSG_MAX / 2];

		for (int k = 0; k < 2; k++) {
			const struct pprof_profile *p = k ? new_p : base;
			size_t off = 0;

			have[k][0] = '\0';
			for (size_t i = 0;
			     i < p->n_sample_types && off < sizeof(have[k]);
			     i++) {
				int w = snprintf(have[k] + off,
						 sizeof(have[k]) - off, "%s%s",
						 i ? ", " : "",
						 p->sample_types[i].type);

				if (w > 0)
					off += (size_t)w;
			}
			if (p->n_sample_types == 0)
				snprintf(have[k], sizeof(have[k]), "none");
		}
		return msg_set("no common sample type: BASE has %s; NEW has %s",
			       have[0], have[1]);
	}
	if (warn && (strcmp(base->period_type.type, new_p->period_type.type) ||
		     strcmp(base->period_type.unit, new_p->period_type.unit))) {
		snprintf(buf, sizeof(buf),
			 "period type differs: '%s/%s' in BASE, '%s/%s' in NEW",
			 base->period_type.type, base->period_type.unit,
			 new_p->period_type.type, new_p->period_type.unit);
		warn(ctx, buf);
	} else if (warn && base->period != new_p->period) {
		snprintf(buf, sizeof(buf),
			 "period differs: %lld in BASE, %lld in NEW",
			 (long long)base->period, (long long)new_p->period);
		warn(ctx, buf);
	}
	return 0;
}

/* Set up the result profile's header from NEW. */
static int result_header(struct pprof_profile *dst,
			 const struct pprof_profile *new_p, const int *new_idx,
			 size_t n)
{
	struct pprof_value_type *types = calloc(n, sizeof(*types));
	int rc;

	if (!types)
		return msg_set_errno(ENOMEM, "diff: out of memory");
	for (size_t i = 0; i < n; i++)
		types[i] = new_p->sample_types[new_idx[i]];
	rc = pprof_set_sample_types(dst, types, n);
	free(types);
	if (rc < 0)
		return -1;
	if (pprof_set_period(dst, new_p->period_type.type,
			     new_p->period_type.unit, new_p->period) < 0)
		return -1;
	if (new_p->default_sample_type[0] &&
	    pprof_sample_type_index(dst, new_p->default_sample_type) >= 0 &&
	    pprof_set_default_sample_type(dst, new_p->default_sample_type) < 0)
		return -1;
	dst->time_nanos = new_p->time_nanos;
	dst->duration_nanos = new_p->duration_nanos;
	for (size_t i = 0; i < new_p->n_comments; i++)
		if (pprof_add_comment(dst, new_p->comments[i]) < 0)
			return -1;
	return pprof_add_comment(dst, "palloc-diff: NEW minus BASE");
}

/* Emit every stack with a non-zero difference as a result sample. */
static int emit(struct diff_state *st, const struct pprof_profile *base,
		const struct pprof_profile *new_p, struct pprof_profile *dst)
{
	struct copier cn, cb;
	uint64_t *ids = NULL;
	size_t cap_ids = 0;
	int rc = -1;

	if (copier_init(&cn, new_p, dst) < 0 || copier_init(&cb, base, dst) < 0)
		goto out;
	/* NEW's mappings first and in order: the main executable stays 1. */
	for (size_t i = 0; i < new_p->n_mappings; i++)
		if (!copy_mapping(&cn, i + 1))
			goto out;
	cb.other = new_p;
	cb.other_map = cn.map_ids;

	for (size_t k = 0; k < st->n_stacks; k++) {
		const struct stack *s = &st->stacks[k];
		const int64_t *v = st->values + k * st->n_types;
		/* NEW is added first: a stack NEW has was first seen there,
		 * so its locations are NEW's. */
		struct copier *c = s->which == 0 ? &cn : &cb;
		const struct pprof_sample *smp = &c->src->samples[s->sample];
		bool zero = true;

		for (size_t t = 0; t < st->n_types; t++)
			if (v[t])
				zero = false;
		if (zero)
			continue;
		if (grow((void **)&ids, &cap_ids, smp->n_locations + 1,
			 sizeof(*ids)) < 0)
			goto out;
		for (size_t j = 0; j < smp->n_locations; j++)
			if (copy_location(c, smp->location_ids[j], &ids[j]) < 0)
				goto out;
		if (pprof_add_sample(dst, ids, smp->n_locations, v, st->labels,
				     stack_labels(st, dst, k)) < 0)
			goto out;
	}
	rc = 0;
out:
	copier_free(&cn);
	copier_free(&cb);
	free(ids);
	return rc;
}

int diff_profiles(const struct pprof_profile *base,
		  const struct pprof_profile *new_p, struct diff_result *out,
		  diff_warn_fn warn, void *warn_ctx)
{
	struct diff_state st;
	int *new_idx = NULL, *base_idx = NULL;
	size_t n = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	new_idx = calloc(new_p->n_sample_types + 1, sizeof(int));
	base_idx = calloc(new_p->n_sample_types + 1, sizeof(int));
	if (!new_idx || !base_idx) {
		msg_set_errno(ENOMEM, "diff: out of memory");
		goto out;
	}
	if (match_types(base, new_p, new_idx, base_idx, &n, warn, warn_ctx) < 0)
		goto out;
	out->n_types = n;
	out->totals = calloc(n, sizeof(*out->totals));
	out->profile = pprof_new(NULL);
	if (!out->totals || !out->profile) {
		msg_set_errno(ENOMEM, "diff: out of memory");
		goto out;
	}
	if (result_header(out->profile, new_p, new_idx, n) < 0)
		goto out;

	st.n_types = n;
	/* Names never match addresses: say so rather than show everything
	 * as changed without a reason. */
	if (warn && base->n_locations && new_p->n_locations &&
	    profile_symbolized(base) != profile_symbolized(new_p))
		warn(warn_ctx, profile_symbolized(base)
				       ? "NEW is not symbolized and BASE is: "
					 "stacks will not match (symbolize "
					 "it with palloc-dump --symbolize)"
				       : "BASE is not symbolized and NEW is: "
					 "stacks will not match (symbolize "
					 "it with palloc-dump --symbolize)");
	st.use_lines = profile_has_lines(base) && profile_has_lines(new_p);
	out->used_lines = st.use_lines;
	st.prof[0] = new_p;
	st.prof[1] = base;
	if (idxtab_init(&st.frame_tab, new_p->n_locations + base->n_locations) <
		    0 ||
	    idxtab_init(&st.stack_tab, new_p->n_samples + base->n_samples) <
		    0 ||
	    setup_stddev(&st, out->profile, out->totals) < 0 ||
	    map_locations(&st, new_p, 0) < 0 ||
	    map_locations(&st, base, 1) < 0 ||
	    add_samples(&st, new_p, 0, new_idx, out->totals) < 0 ||
	    add_samples(&st, base, 1, base_idx, out->totals) < 0)
		goto out;
	for (size_t k = 0; k < st.n_stacks; k++) {
		out->new_stacks += st.stacks[k].in_new;
		out->base_stacks += st.stacks[k].in_base;
		out->matched_stacks +=
			st.stacks[k].in_new && st.stacks[k].in_base;
	}
	if (emit(&st, base, new_p, out->profile) < 0)
		goto out;
	rc = 0;
out:
	state_free(&st);
	free(new_idx);
	free(base_idx);
	return rc;
}

void diff_result_free(struct diff_result *r)
{
	if (!r)
		return;
	pprof_free(r->profile);
	free(r->totals);
	memset(r, 0, sizeof(*r));
}

int64_t diff_pprof_total(const struct diff_result *r, size_t i)
{
	uint64_t t;

	if (i >= r->n_types)
		return 0;
	t = r->totals[i].base_abs ? r->totals[i].base_abs
				  : r->totals[i].new_abs;
	return t > INT64_MAX ? INT64_MAX : (int64_t)t;
}

double diff_sample_stddev(const struct diff_result *r, size_t i,
			  const struct pprof_sample *s)
{
	char key[256];
	double sd;

	if (i >= r->n_types || !r->totals[i].has_stddev)
		return 0;
	snprintf(key, sizeof(key), "%s_stddev",
		 r->profile->sample_types[i].type);
	sd = report_sample_stddev(s, key);
	return isnan(sd) ? 0 : sd;
}

/* z sd rounded to an integer margin, saturated. */
static int64_t margin(double z, double sd)
{
	double m = z * sd;

	return m > 9.2e18 ? INT64_MAX : llround(m);
}

/* v moved toward 0 by m >= 0, and 0 when |v| <= m. */
static int64_t shrink(int64_t v, int64_t m)
{
	if (v > m)
		return v - m;
	if (v < 0 && (v == INT64_MIN || -v > m))
		return report_add_sat(v, m);
	return 0;
}

void diff_noise(const struct diff_result *r, size_t i, double z,
		struct diff_noise *out)
{
	const struct pprof_profile *p = r->profile;
	int64_t m;

	memset(out, 0, sizeof(*out));
	if (i >= r->n_types)
		return;
	for (size_t k = 0; k < p->n_samples; k++) {
		const struct pprof_sample *s = &p->samples[k];
		int64_t v = s->values[i];

		out->growth = report_add_sat(out->growth, v);
		m = margin(z, diff_sample_stddev(r, i, s));
		out->stack_excess =
			report_add_sat(out->stack_excess, shrink(v, m));
	}
	out->stddev = sqrt(r->totals[i].var);
	m = margin(z, out->stddev);
	out->within = out->growth >= -m && out->growth <= m;
	out->total_excess = report_add_sat(out->growth, sat_neg(m));
	out->significant = out->total_excess > out->stack_excess
				   ? out->total_excess
				   : out->stack_excess;
}

/* Append s to buf at *off, truncating; false once buf is full. */
static bool append(char *buf, size_t len, size_t *off, const char *s)
{
	size_t n = strlen(s);

	if (*off + n + 1 > len) {
		if (len >= 4 && *off < len) {
			size_t keep = len - 4 > *off ? len - 4 - *off : 0;

			memcpy(buf + *off, s, keep);
			memcpy(buf + *off + keep, "...", 4);
		}
		*off = len;
		return false;
	}
	memcpy(buf + *off, s, n + 1);
	*off += n;
	return true;
}

char *diff_format_stack(const struct pprof_profile *p,
			const struct pprof_sample *s, size_t max_frames,
			char *buf, size_t len)
{
	size_t off = 0, frames = 0;
	char tmp[128];

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t j = 0; j < s->n_locations; j++) {
		const struct pprof_location *l;
		size_t n;

		if (s->location_ids[j] == 0 ||
		    s->location_ids[j] > p->n_locations)
			continue;
		l = &p->locations[s->location_ids[j] - 1];
		n = l->n_lines ? l->n_lines : 1;
		for (size_t k = 0; k < n; k++) {
			const char *name;

			if (max_frames && frames == max_frames) {
				append(buf, len, &off, " < ...");
				return buf;
			}
			if (frames && !append(buf, len, &off, " < "))
				return buf;
			name = report_frame_name(p, l, k, tmp, sizeof(tmp));
			if (!append(buf, len, &off, name))
				return buf;
			frames++;
		}
	}
	return buf;
}
