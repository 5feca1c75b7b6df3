/* SPDX-License-Identifier: MIT */
/* palloc-explain's document rendered for machines: JSON (format_version 1's
 * schema) and Prometheus text; the tables for people are the command's. */
#include "common.h"
#include "explain.h"
#include "json.h"
#include "msg.h"
#include "prom.h"

#include <inttypes.h>
#include <math.h>

/* part / total, 0 when there is no total. */
static double ratio(int64_t part, uint64_t total)
{
	return total ? (double)part / (double)total : 0;
}

void explain_doc_free(struct explain_doc *doc)
{
	size_t i;

	json_decref(doc->allocator_detail);
	for (i = 0; i < doc->nsites; i++)
		free(doc->sites[i].function);
	free(doc->sites);
	free(doc->stacks);
	for (i = 0; i < doc->nnotes; i++)
		free(doc->notes[i]);
	free(doc->notes);
	free(doc->cgroup_path);
	free(doc->directory);
	memset(doc, 0, sizeof(*doc));
}

static json_t *part_json(const struct explain_doc *d,
			 const struct explain_part *p)
{
	json_t *o = json_object();

	json_set(o, "layer", json_string(p->layer));
	json_set(o, "name", json_string(p->name));
	json_set(o, "bytes", json_i64_or_null(p->have, p->bytes));
	json_set(o, "ratio",
		 json_real_or_null(p->have && d->total,
				   ratio(p->bytes, d->total)));
	json_set(o, "basis", json_string(p->basis));
	json_set(o, "description", json_string(p->description));
	if (p->heap) {
		json_set(o, "ci95_low_bytes",
			 json_i64_or_null(p->have_ci, p->ci_low));
		json_set(o, "ci95_high_bytes",
			 json_i64_or_null(p->have_ci, p->ci_high));
		json_set(o, "sampled_bytes",
			 json_i64_or_null(p->have_sampled, p->sampled));
	}
	return o;
}

/* A process's keys after "pid", up to "heap_inuse_source". */
static void process_head(json_t *top, const struct explain_doc *d)
{
	json_set(top, "program", json_str_or_null(d->program));
	json_set(top, "rss_bytes", json_u64(d->total));
	json_set(top, "total_bytes", json_u64(d->total));
	json_set(top, "rss_source", json_string(d->rss_source));
	json_set(top, "agent", json_boolean(d->agent));
	json_set(top, "attached", json_boolean(d->attached));
	json_set(top, "allocator",
		 json_str_or_null(d->allocator[0] ? d->allocator : NULL));
	json_set(top, "heap_inuse_source",
		 json_str_or_null(d->heap_inuse_source));
}

/* A cgroup's keys after "pid". */
static void cgroup_head(json_t *top, const struct explain_doc *d)
{
	json_set(top, "cgroup_version", json_integer(d->cgroup_version));
	json_set(top, "cgroup_path", json_str_or_null(d->cgroup_path));
	json_set(top, "directory", json_str_or_null(d->directory));
	json_set(top, "rss_bytes", json_null());
	json_set(top, "total_bytes", json_u64_or_null(d->have_total, d->total));
	json_set(top, "usage_bytes", json_u64_or_null(d->have_total, d->total));
	json_set(top, "working_set_bytes", json_u64_or_null(d->have_ws, d->ws));
	json_set(top, "limit_bytes", json_u64_or_null(d->have_limit, d->limit));
	json_set(top, "high_bytes", json_u64_or_null(d->have_high, d->high));
	json_set(top, "headroom_bytes",
		 json_i64_or_null(d->have_headroom, d->headroom));
	json_set(top, "high_headroom_bytes",
		 json_i64_or_null(d->have_high_headroom, d->high_headroom));
}

/* A process's keys after the parts: the allocator, sites, stacks. */
static void process_tail(json_t *top, const struct explain_doc *d)
{
	json_t *sites = json_array(), *stacks = json_array();
	size_t i;

	json_set(top, "smaps_rss_bytes", json_u64(d->smaps_rss));
	json_set(top, "allocator_detail",
		 d->allocator_detail ? json_incref(d->allocator_detail)
				     : json_null());
	for (i = 0; i < d->nsites; i++) {
		const struct explain_site *x = &d->sites[i];
		json_t *o = json_object();

		json_set(o, "function", json_str_or_null(x->function));
		json_set(o, "inuse_bytes", json_i64_or_null(true, x->inuse));
		json_set(o, "ci95_low_bytes",
			 json_i64_or_null(x->have_ci, x->ci_low));
		json_set(o, "ci95_high_bytes",
			 json_i64_or_null(x->have_ci, x->ci_high));
		json_push(sites, o);
	}
	json_set(top, "top_sites", sites);
	for (i = 0; i < d->nstacks; i++) {
		const struct explain_stack *x = &d->stacks[i];
		json_t *o = json_object();

		json_set(o, "start", json_hex(x->start));
		json_set(o, "end", json_hex(x->end));
		json_set(o, "rss_bytes", json_u64(x->rss));
		json_set(o, "tid", json_i64_or_null(x->have_tid, x->tid));
		json_set(o, "thread",
			 json_str_or_null(x->have_tid ? x->thread : NULL));
		json_set(o, "found_by", json_string(x->found_by));
		json_push(stacks, o);
	}
	json_set(top, "thread_stacks", stacks);
}

json_t *explain_json(const struct explain_doc *d)
{
	json_t *top = json_top_new("palloc-explain");
	json_t *parts = json_array(), *notes = json_array();
	size_t i;

	json_set(top, "time_ns", json_u64(d->time_ns));
	json_set(top, "kind", json_string(d->process ? "process" : "cgroup"));
	json_set(top, "pid", json_i64_or_null(d->have_pid, d->pid));
	if (d->process)
		process_head(top, d);
	else
		cgroup_head(top, d);
	for (i = 0; i < d->nparts; i++)
		json_push(parts, part_json(d, &d->parts[i]));
	json_set(top, "parts", parts);
	json_set(top, "explained_bytes", json_i64_or_null(true, d->explained));
	json_set(top, "unexplained_bytes",
		 json_i64_or_null(true, d->unexplained));
	json_set(top, "unexplained_ratio",
		 json_real_or_null(d->total > 0,
				   ratio(d->unexplained, d->total)));
	if (d->process)
		process_tail(top, d);
	for (i = 0; i < d->nnotes; i++)
		json_push(notes, json_string(d->notes[i]));
	json_set(top, "notes", notes);
	if (json_failed()) {
		json_decref(top);
		msg_set("out of memory");
		return NULL;
	}
	return top;
}

int explain_prom(FILE *fp, const struct explain_doc *d)
{
	char name[PROM_NAME_MAX], pid[24];
	struct prom_label l[4];
	size_t nl;

	if (d->process) {
		snprintf(pid, sizeof(pid), "%lld", (long long)d->pid);
		l[0] = (struct prom_label){"pid", pid};
		l[1] = (struct prom_label){"program", d->program};
		nl = 2;
	} else {
		l[0] = (struct prom_label){"cgroup",
					   d->cgroup_path ? d->cgroup_path
					   : d->directory ? d->directory
							  : ""};
		nl = 1;
	}
	prom_name(name, sizeof(name), "explain_total_bytes");
	if (prom_family(fp, name, PROM_GAUGE,
			"What is explained: Rss (a process) or usage (a "
			"cgroup), bytes.") < 0 ||
	    prom_sample_double(fp, name, l, nl,
			       d->have_total ? (double)d->total : 0) < 0)
		return -1;
	prom_name(name, sizeof(name), "explain_part_bytes");
	if (prom_family(fp, name, PROM_GAUGE,
			"One part of the total, by layer and part, "
			"bytes.") < 0)
		return -1;
	for (size_t i = 0; i < d->nparts; i++) {
		const struct explain_part *pt = &d->parts[i];

		if (!pt->have)
			continue;
		l[nl] = (struct prom_label){"layer", pt->layer};
		l[nl + 1] = (struct prom_label){"part", pt->name};
		if (prom_sample_double(fp, name, l, nl + 2, (double)pt->bytes) <
		    0)
			return -1;
	}
	prom_name(name, sizeof(name), "explain_unexplained_bytes");
	if (prom_family(fp, name, PROM_GAUGE,
			"The total minus the sum of the known parts (may be "
			"negative), bytes.") < 0 ||
	    prom_sample_double(fp, name, l, nl, (double)d->unexplained) < 0)
		return -1;
	return 0;
}
