/* SPDX-License-Identifier: MIT */
/* palloc-report's data: a timeline and its profiles as one JSON document. */
#include "common.h"
#include "htmlreport_model.h"
#include "json.h"
#include "msg.h"
#include "pprof_comments.h"
#include "report.h"

#include <limits.h>
#include <math.h>
#include <sys/stat.h>

/* DIR/REL when rel is relative and the timeline has a directory. */
static char *resolve(const char *timeline_path, const char *rel)
{
	const char *slash = strrchr(timeline_path, '/');
	size_t dl = slash ? (size_t)(slash - timeline_path) + 1 : 0;
	size_t n = strlen(rel);
	char *s;

	if (rel[0] == '/')
		dl = 0;
	s = malloc(dl + n + 1);
	if (!s)
		return NULL;
	memcpy(s, timeline_path, dl);
	memcpy(s + dl, rel, n + 1);
	return s;
}

void htmlreport_profiles_free(struct htmlreport_profile *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].path);
		free(a[i].kind);
		if (a[i].p)
			pprof_free(a[i].p);
	}
	free(a);
}

size_t htmlreport_profiles_from_events(const struct timeline_doc *t,
				       const char *timeline_path,
				       struct htmlreport_profile **out)
{
	struct htmlreport_profile *a = calloc(t->n_events + 1, sizeof(*a));
	size_t n = 0;

	*out = NULL;
	if (!a)
		goto oom;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct timeline_event *e = &t->events[i];

		if (!e->path)
			continue;
		a[n].pid = e->pid;
		a[n].time_ns = e->time_ns;
		a[n].path = resolve(timeline_path, e->path);
		a[n].kind = strdup(e->kind ? e->kind : "interval");
		n++;
		if (!a[n - 1].path || !a[n - 1].kind)
			goto oom;
	}
	*out = a;
	return n;
oom:
	htmlreport_profiles_free(a, n);
	msg_set_errno(ENOMEM, "profiles");
	return (size_t)-1;
}

void htmlreport_profile_place(const struct timeline_doc *t,
			      const char *timeline_path,
			      struct htmlreport_profile *hp)
{
	struct stat a, b;

	hp->pid = hp->p ? pprof_comment_pid(hp->p) : 0;
	if (hp->pid <= 0)
		hp->pid = -1;
	hp->time_ns = hp->p && hp->p->time_nanos > 0 ? hp->p->time_nanos : -1;
	hp->kind = NULL;
	if (stat(hp->path, &a) < 0)
		return;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct timeline_event *e = &t->events[i];
		char *full;
		int rc;

		if (!e->path)
			continue;
		full = resolve(timeline_path, e->path);
		rc = full ? stat(full, &b) : -1;
		free(full);
		if (rc < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
			continue;
		hp->pid = e->pid;
		hp->time_ns = e->time_ns;
		hp->kind = e->kind ? strdup(e->kind) : NULL;
		return;
	}
}

/* ---- frames and stacks, interned through jansson objects as maps ---- */

struct interner {
	json_t *frame_ids, *frames; /* key -> index; [[name, file, line]] */
	json_t *stack_ids, *stacks; /* key -> index; [[frame...]] */
	char *buf;		    /* scratch for keys */
	size_t cap;
};

static int scratch(struct interner *in, size_t need)
{
	char *p;

	if (need <= in->cap)
		return 0;
	p = realloc(in->buf, need * 2);
	if (!p)
		return -1;
	in->buf = p;
	in->cap = need * 2;
	return 0;
}

/* The index of frame (name, file, line), added when new; -1 on ENOMEM. */
static json_int_t frame_id(struct interner *in, const char *name,
			   const char *file, int64_t line)
{
	json_t *n = json_str_or_null(name), *f = json_str_or_null(file);
	const char *ns = json_string_value(n), *fs = json_string_value(f);
	json_t *id, *row;
	json_int_t k = -1;

	if (!n || !f)
		goto out;
	if (scratch(in, strlen(ns) + strlen(fs) + 32) < 0)
		goto out;
	snprintf(in->buf, in->cap, "%s\x1f%s\x1f%lld", ns, fs, (long long)line);
	id = json_object_get(in->frame_ids, in->buf);
	if (id) {
		k = json_integer_value(id);
		goto out;
	}
	k = (json_int_t)json_array_size(in->frames);
	row = json_array();
	json_push(row, json_incref(n));
	json_push(row, *fs ? json_incref(f) : json_null());
	json_push(row, json_integer(line));
	if (json_push(in->frames, row) < 0 ||
	    json_set(in->frame_ids, in->buf, json_integer(k)) < 0)
		k = -1;
out:
	json_decref(n);
	json_decref(f);
	return k;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The frames of sample s appended to arr, leaf first. 0 or -1. */
static int sample_frames(struct interner *in, const struct pprof_profile *p,
			 const struct pprof_sample *s, json_t *arr)
{
	for (size_t i = 0; i < s->n_locations; i++) {
		uint64_t lid = s->location_ids[i];
		const struct pprof_location *l;
		json_int_t k;

		if (lid == 0 || lid > p->n_locations)
			continue;
		l = &p->locations[lid - 1];
		if (l->n_lines == 0) {
			const struct pprof_mapping *m =
				l->mapping_id && l->mapping_id <= p->n_mappings
					? &p->mappings[l->mapping_id - 1]
					: NULL;
			char name[PATH_MAX + 32];
			uint64_t rel = m ? l->address - m->start + m->offset
					 : l->address;

			snprintf(name, sizeof(name), "%s+0x%llx",
				 m && m->file ? base_name(m->file) : "?",
				 (unsigned long long)rel);
			k = frame_id(in, name, "", 0);
			if (k < 0 || json_push(arr, json_integer(k)) < 0)
				return -1;
			continue;
		}
		for (size_t j = 0; j < l->n_lines; j++) {
			const struct pprof_line *ln = &l->lines[j];
			const struct pprof_function *f =
				ln->function_id && ln->function_id <=
							   p->n_functions
					? &p->functions[ln->function_id - 1]
					: NULL;

			k = frame_id(in, f && f->name ? f->name : "?",
				     f && f->file ? f->file : "", ln->line);
			if (k < 0 || json_push(arr, json_integer(k)) < 0)
				return -1;
		}
	}
	return 0;
}

/* The index of the stack of sample s; -1 on ENOMEM. */
static json_int_t stack_id(struct interner *in, const struct pprof_profile *p,
			   const struct pprof_sample *s)
{
	json_t *arr = json_array(), *id;
	json_int_t k = -1;
	size_t off = 0;

	if (!arr || sample_frames(in, p, s, arr) < 0)
		goto out;
	if (scratch(in, json_array_size(arr) * 21 + 2) < 0)
		goto out;
	in->buf[0] = 's';
	off = 1;
	for (size_t i = 0; i < json_array_size(arr); i++)
		off += (size_t)snprintf(
			in->buf + off, in->cap - off, ",%lld",
			(long long)json_integer_value(json_array_get(arr, i)));
	id = json_object_get(in->stack_ids, in->buf);
	if (id) {
		k = json_integer_value(id);
		goto out;
	}
	k = (json_int_t)json_array_size(in->stacks);
	if (json_push(in->stacks, json_incref(arr)) < 0 ||
	    json_set(in->stack_ids, in->buf, json_integer(k)) < 0)
		k = -1;
out:
	json_decref(arr);
	return k;
}

static int64_t label_or_zero(const struct pprof_sample *s, const char *key)
{
	double sd = report_sample_stddev(s, key);

	return isnan(sd) ? 0 : (int64_t)sd;
}

/* One profile's entry of "profiles". NULL on ENOMEM. */
static json_t *profile_json(struct interner *in,
			    const struct htmlreport_profile *hp, int64_t t0)
{
	const struct pprof_profile *p = hp->p;
	int sp = pprof_sample_type_index(p, "inuse_space");
	int ob = pprof_sample_type_index(p, "inuse_objects");
	json_t *o = json_object(), *samples = json_array();

	json_set(o, "pid", json_i64_or_null(hp->pid >= 0, hp->pid));
	json_set(o, "t_ms",
		 json_i64_or_null(hp->time_ns >= 0,
				  (hp->time_ns - t0) / 1000000));
	json_set(o, "kind", json_str_or_null(hp->kind ? hp->kind : "named"));
	json_set(o, "path", json_str_or_null(hp->path));
	json_set(o, "has_inuse", json_boolean(sp >= 0));
	for (size_t i = 0; sp >= 0 && i < p->n_samples; i++) {
		const struct pprof_sample *s = &p->samples[i];
		json_int_t k;
		json_t *row;

		if (s->values[sp] == 0 && (ob < 0 || s->values[ob] == 0))
			continue;
		k = stack_id(in, p, s);
		if (k < 0)
			break;
		row = json_array();
		json_push(row, json_integer(k));
		json_push(row, json_integer(s->values[sp]));
		json_push(row, json_integer(ob >= 0 ? s->values[ob] : 0));
		json_push(row,
			  json_integer(label_or_zero(s, "inuse_space_stddev")));
		json_push(row, json_integer(label_or_zero(
				       s, "inuse_objects_stddev")));
		json_push(samples, row);
	}
	json_set(o, "samples", samples);
	return o;
}

/* ---- the timeline's processes ---- */

struct proc {
	int64_t pid;
	int64_t max_rss, max_heap;
	json_t *t, *cols[TL_NFIELDS], *events;
	int64_t last_t, last[TL_NFIELDS];
	bool have[TL_NFIELDS], have_t;
};

static struct proc *proc_get(struct proc **ps, size_t *n, int64_t pid)
{
	struct proc *p;

	for (size_t i = 0; i < *n; i++)
		if ((*ps)[i].pid == pid)
			return &(*ps)[i];
	p = realloc(*ps, (*n + 1) * sizeof(**ps));
	if (!p)
		return NULL;
	*ps = p;
	p = &p[(*n)++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->max_rss = p->max_heap = -1;
	p->t = json_array();
	p->events = json_array();
	for (int i = 0; i < TL_NFIELDS; i++)
		p->cols[i] = json_array();
	return p;
}

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	if (x->max_rss != y->max_rss)
		return x->max_rss > y->max_rss ? -1 : 1;
	if (x->max_heap != y->max_heap)
		return x->max_heap > y->max_heap ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void proc_sample(struct proc *p, const struct timeline_sample *s,
			int64_t t0)
{
	int64_t ms = (s->time_ns - t0) / 1000000;

	json_push(p->t, json_integer(p->have_t ? ms - p->last_t : ms));
	p->last_t = ms;
	p->have_t = true;
	for (int i = 0; i < TL_NFIELDS; i++) {
		int64_t v = s->v[i];

		if (v < 0) {
			json_push(p->cols[i], json_null());
			continue;
		}
		json_push(p->cols[i],
			  json_integer(p->have[i] ? v - p->last[i] : v));
		p->last[i] = v;
		p->have[i] = true;
	}
	if (s->v[TL_RSS] > p->max_rss)
		p->max_rss = s->v[TL_RSS];
	if (s->v[TL_HEAP_INUSE] > p->max_heap)
		p->max_heap = s->v[TL_HEAP_INUSE];
}

/* The event line as the page shows it: its own keys, t_ms added. */
static json_t *event_json(const struct timeline_event *e, int64_t t0)
{
	json_t *o = json_deep_copy(e->obj);

	json_object_del(o, "type");
	json_set(o, "t_ms", json_integer((e->time_ns - t0) / 1000000));
	return o;
}

static json_t *processes_json(const struct timeline_doc *t,
			      const struct htmlreport_profile *profs, size_t n,
			      int64_t t0)
{
	struct proc *ps = NULL, *p;
	size_t np = 0;
	json_t *arr = json_array();

	for (size_t i = 0; i < t->n_samples; i++) {
		p = proc_get(&ps, &np, t->samples[i].pid);
		if (!p)
			goto oom;
		proc_sample(p, &t->samples[i], t0);
	}
	for (size_t i = 0; i < t->n_events; i++) {
		p = proc_get(&ps, &np, t->events[i].pid);
		if (!p)
			goto oom;
		json_push(p->events, event_json(&t->events[i], t0));
	}
	for (size_t i = 0; i < n; i++)
		if (profs[i].pid >= 0 && !proc_get(&ps, &np, profs[i].pid))
			goto oom;
	if (np > 1)
		qsort(ps, np, sizeof(*ps), proc_cmp);
	for (size_t i = 0; i < np; i++) {
		json_t *o = json_object(), *cols = json_object();

		p = &ps[i];
		json_set(o, "pid", json_integer(p->pid));
		json_set(o, "t_ms", p->t);
		for (int k = 0; k < TL_NFIELDS; k++)
			json_set(cols, timeline_fields[k], p->cols[k]);
		json_set(o, "cols", cols);
		json_set(o, "events", p->events);
		json_push(arr, o);
	}
	free(ps);
	return arr;
oom:
	for (size_t i = 0; i < np; i++) {
		json_decref(ps[i].t);
		json_decref(ps[i].events);
		for (int k = 0; k < TL_NFIELDS; k++)
			json_decref(ps[i].cols[k]);
	}
	free(ps);
	json_decref(arr);
	msg_set_errno(ENOMEM, "report");
	return NULL;
}

static int prof_time_cmp(const void *a, const void *b)
{
	const struct htmlreport_profile *const *x = a, *const *y = b;

	if ((*x)->time_ns != (*y)->time_ns)
		return (*x)->time_ns < (*y)->time_ns ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

json_t *htmlreport_model(const char *timeline_name,
			 const struct timeline_doc *t,
			 const struct htmlreport_profile *profs, size_t n)
{
	struct interner in = {0};
	const struct htmlreport_profile **order = NULL;
	json_t *doc = json_top_new("palloc-report"), *fields = json_array();
	json_t *procs, *parr = json_array();
	int64_t t0 = INT64_MAX;

	json_failed();
	for (size_t i = 0; i < t->n_samples; i++)
		if (t->samples[i].time_ns < t0)
			t0 = t->samples[i].time_ns;
	for (size_t i = 0; i < t->n_events; i++)
		if (t->events[i].time_ns < t0)
			t0 = t->events[i].time_ns;
	for (size_t i = 0; i < n; i++)
		if (profs[i].time_ns >= 0 && profs[i].time_ns < t0)
			t0 = profs[i].time_ns;
	if (t0 == INT64_MAX)
		t0 = 0;
	json_set(doc, "timeline", json_str_or_null(timeline_name));
	json_set(doc, "t0_ns", json_integer(t0));
	for (int k = 0; k < TL_NFIELDS; k++)
		json_push(fields, json_string(timeline_fields[k]));
	json_set(doc, "fields", fields);
	procs = processes_json(t, profs, n, t0);
	if (!procs)
		goto fail;
	json_set(doc, "processes", procs);

	in.frame_ids = json_object();
	in.frames = json_array();
	in.stack_ids = json_object();
	in.stacks = json_array();
	order = calloc(n + 1, sizeof(*order));
	if (!order)
		goto fail;
	for (size_t i = 0; i < n; i++)
		order[i] = &profs[i];
	qsort(order, n, sizeof(*order), prof_time_cmp);
	for (size_t i = 0; i < n; i++)
		if (order[i]->p)
			json_push(parr, profile_json(&in, order[i], t0));
	json_set(doc, "frames", json_incref(in.frames));
	json_set(doc, "stacks", json_incref(in.stacks));
	json_set(doc, "profiles", parr);
	parr = NULL;
	if (json_failed())
		goto fail;
	free(order);
	json_decref(in.frame_ids);
	json_decref(in.frames);
	json_decref(in.stack_ids);
	json_decref(in.stacks);
	free(in.buf);
	return doc;
fail:
	free(order);
	json_decref(parr);
	json_decref(in.frame_ids);
	json_decref(in.frames);
	json_decref(in.stack_ids);
	json_decref(in.stacks);
	free(in.buf);
	json_decref(doc);
	msg_set_errno(ENOMEM, "report");
	return NULL;
}
