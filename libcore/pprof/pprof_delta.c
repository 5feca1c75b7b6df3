/* SPDX-License-Identifier: MIT */
/* Go's delta profile (/debug/pprof/heap?seconds=N): the second snapshot
 * minus the first; used by the agent and by the commands' TCP server. */
#include "common.h"
#include "msg.h"
#include "pprof.h"

#include <stdlib.h>
#include <string.h>

struct delta_entry {
	uint64_t *ids; /* location ids in the delta profile */
	size_t n_ids;
	const struct pprof_sample *s;
	int sign; /* +1: second snapshot, -1: first */
};

/*
 * The agent labels each sample with the standard deviation of its
 * estimates ("inuse_space_stddev" and the like). They change with every
 * new sample, so they are not part of a sample's identity, and the
 * difference of two snapshots has no meaningful stddev of its own (the
 * later snapshot contains the earlier one's samples): the delta leaves
 * them out. Every other label, string or numeric, is part of the key.
 */
static bool is_stddev_label(const struct pprof_label *l)
{
	size_t n = strlen(l->key);

	return n > 7 && strcmp(l->key + n - 7, "_stddev") == 0;
}

/* The next label at or after *i that is part of the key, or NULL. */
static const struct pprof_label *next_key_label(const struct pprof_sample *s,
						size_t *i)
{
	for (; *i < s->n_labels; (*i)++)
		if (!is_stddev_label(&s->labels[*i]))
			return &s->labels[(*i)++];
	return NULL;
}

static int cmp_labels(const struct pprof_sample *a,
		      const struct pprof_sample *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		const struct pprof_label *x = next_key_label(a, &i);
		const struct pprof_label *y = next_key_label(b, &j);
		int c;

		if (!x || !y)
			return x ? 1 : y ? -1 : 0;
		c = strcmp(x->key, y->key);
		if (!c)
			c = strcmp(x->str, y->str);
		if (!c && x->num != y->num)
			c = x->num < y->num ? -1 : 1;
		if (!c)
			c = strcmp(x->num_unit, y->num_unit);
		if (c)
			return c;
	}
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct delta_entry *a = pa, *b = pb;

	if (a->n_ids != b->n_ids)
		return a->n_ids < b->n_ids ? -1 : 1;
	for (size_t i = 0; i < a->n_ids; i++)
		if (a->ids[i] != b->ids[i])
			return a->ids[i] < b->ids[i] ? -1 : 1;
	return cmp_labels(a->s, b->s);
}

/* The id in q of mapping m of another profile (same file and start). */
static uint64_t map_mapping(struct pprof_profile *q,
			    const struct pprof_mapping *m)
{
	for (size_t i = 0; i < q->n_mappings; i++)
		if (q->mappings[i].start == m->start &&
		    q->mappings[i].limit == m->limit &&
		    strcmp(q->mappings[i].file, m->file) == 0)
			return q->mappings[i].id;
	return pprof_add_mapping(q, m);
}

/* Translate the location ids of every sample of p into q's ids. */
static int add_entries(struct pprof_profile *q, const struct pprof_profile *p,
		       int sign, struct delta_entry *e, size_t *n)
{
	uint64_t *mapids = calloc(p->n_mappings + 1, sizeof(*mapids));
	uint64_t *locids = calloc(p->n_locations + 1, sizeof(*locids));

	if (!mapids || !locids)
		goto oom;
	for (size_t i = 0; i < p->n_mappings; i++) {
		mapids[i + 1] = map_mapping(q, &p->mappings[i]);
		if (!mapids[i + 1])
			goto oom;
	}
	for (size_t i = 0; i < p->n_locations; i++) {
		const struct pprof_location *l = &p->locations[i];

		locids[i + 1] = pprof_add_location(q, mapids[l->mapping_id],
						   l->address, NULL, 0);
		if (!locids[i + 1])
			goto oom;
	}
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct pprof_sample *s = &p->samples[i];
		struct delta_entry *d = &e[(*n)++];

		d->ids = malloc((s->n_locations + 1) * sizeof(*d->ids));
		if (!d->ids) {
			(*n)--;
			goto oom;
		}
		for (size_t j = 0; j < s->n_locations; j++)
			d->ids[j] = locids[s->location_ids[j]];
		d->n_ids = s->n_locations;
		d->s = s;
		d->sign = sign;
	}
	free(mapids);
	free(locids);
	return 0;
oom:
	free(mapids);
	free(locids);
	return msg_set_errno(ENOMEM, "delta profile");
}

static int delta_samples(struct pprof_profile *q, struct delta_entry *e,
			 size_t n, size_t nv)
{
	int64_t *v = calloc(nv ? nv : 1, sizeof(*v));
	struct pprof_label *lab = NULL;
	size_t i = 0, max_labels = 0;

	for (size_t k = 0; k < n; k++)
		if (e[k].s->n_labels > max_labels)
			max_labels = e[k].s->n_labels;
	lab = calloc(max_labels + 1, sizeof(*lab));
	if (!v || !lab) {
		free(v);
		free(lab);
		return msg_set_errno(ENOMEM, "delta profile");
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	while (i < n) {
		size_t j = i;
		bool zero = true;

		memset(v, 0, nv * sizeof(*v));
		for (; j < n && cmp_entry(&e[i], &e[j]) == 0; j++)
			for (size_t k = 0; k < nv; k++)
				v[k] += e[j].sign * e[j].s->values[k];
		for (size_t k = 0; k < nv; k++)
			zero &= v[k] == 0;
		/* Go's profile.Merge drops samples whose values are all 0. */
		if (!zero) {
			const struct pprof_label *l;
			size_t nl = 0, li = 0;

			while ((l = next_key_label(e[i].s, &li)) != NULL)
				lab[nl++] = *l;
			if (pprof_add_sample(q, e[i].ids, e[i].n_ids, v, lab,
					     nl) < 0) {
				free(v);
				free(lab);
				return -1;
			}
		}
		i = j;
	}
	free(v);
	free(lab);
	return 0;
}

struct pprof_profile *pprof_delta(const struct pprof_allocator *alloc,
				  const struct pprof_profile *p0,
				  const struct pprof_profile *p1)
{
	struct pprof_profile *q = pprof_new(alloc);
	struct delta_entry *e = NULL;
	size_t n = 0;
	int rc = -1;

	if (!q)
		return NULL;
	if (p0->n_sample_types != p1->n_sample_types) {
		msg_set("the sample types changed between the snapshots");
		goto out;
	}
	e = calloc(p0->n_samples + p1->n_samples + 1, sizeof(*e));
	if (!e) {
		msg_set_errno(ENOMEM, "delta profile");
		goto out;
	}
	if (pprof_set_sample_types(q, p1->sample_types, p1->n_sample_types) <
		    0 ||
	    pprof_set_period(q, p1->period_type.type, p1->period_type.unit,
			     p1->period) < 0 ||
	    pprof_set_default_sample_type(q, p1->default_sample_type[0]
						     ? p1->default_sample_type
						     : NULL) < 0)
		goto out;
	for (size_t i = 0; i < p1->n_comments; i++)
		if (pprof_add_comment(q, p1->comments[i]) < 0)
			goto out;
	/* p1's mappings first, in order: the main executable stays first. */
	for (size_t i = 0; i < p1->n_mappings; i++)
		if (!pprof_add_mapping(q, &p1->mappings[i]))
			goto out;
	if (add_entries(q, p1, 1, e, &n) < 0 ||
	    add_entries(q, p0, -1, e, &n) < 0 ||
	    delta_samples(q, e, n, p1->n_sample_types) < 0)
		goto out;
	q->time_nanos = p1->time_nanos;
	q->duration_nanos = p1->time_nanos - p0->time_nanos;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(e[i].ids);
	free(e);
	if (rc < 0) {
		pprof_free(q);
		return NULL;
	}
	return q;
}
