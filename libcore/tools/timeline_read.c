/* SPDX-License-Identifier: MIT */
/* palloc-run --timeline's NDJSON read back: samples and events, bounded. */
#include "common.h"
#include "grow.h"
#include "timeline_read.h"
#include "infile.h"
#include "msg.h"

#include <unistd.h>

const char *const timeline_fields[TL_NFIELDS] = {
	[TL_HEAP_INUSE] = "heap_inuse_bytes",
	[TL_HEAP_ALLOC] = "heap_alloc_bytes",
	[TL_ALLOC_RESIDENT] = "allocator_resident_bytes",
	[TL_ALLOC_FREE] = "allocator_free_bytes",
	[TL_RSS] = "rss_bytes",
	[TL_ANON] = "anon_bytes",
	[TL_FILE] = "file_bytes",
	[TL_SHMEM] = "shmem_bytes",
	[TL_SWAP] = "swap_bytes",
	[TL_CG_USAGE] = "cgroup_usage_bytes",
	[TL_CG_LIMIT] = "cgroup_limit_bytes",
};

void timeline_doc_free(struct timeline_doc *t)
{
	for (size_t i = 0; i < t->n_events; i++)
		json_decref(t->events[i].obj);
	free(t->samples);
	free(t->events);
	memset(t, 0, sizeof(*t));
}

static const char *str_or_null(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A byte count: an integer >= 0, else -1 (null, absent, anything else). */
static int64_t count(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	return json_integer_value(v);
}

struct caps {
	size_t samples, events;
};

/* One parsed line into t. Returns 0, or -1 with msg_set(). */
static int add_line(struct timeline_doc *t, struct caps *c, json_t *o,
		    size_t lineno)
{
	const json_t *tm = json_object_get(o, "time_ns");
	const json_t *pid = json_object_get(o, "pid");
	const char *type = str_or_null(o, "type");

	if (!type)
		return msg_set("line %zu: no \"type\"", lineno);
	if (strcmp(type, "sample") != 0 && strcmp(type, "event") != 0) {
		t->skipped++;
		return 0;
	}
	if (!json_is_integer(tm) || !json_is_integer(pid) ||
	    json_integer_value(tm) < 0 || json_integer_value(pid) < 0)
		return msg_set("line %zu: no integer \"time_ns\" and \"pid\"",
			       lineno);
	if (type[0] == 's') {
		struct timeline_sample *s;

		s = grow_push(&t->samples, &t->n_samples, &c->samples,
			      sizeof(*s));
		if (!s)
			return msg_set_errno(ENOMEM, "timeline");
		s->time_ns = json_integer_value(tm);
		s->pid = json_integer_value(pid);
		for (int i = 0; i < TL_NFIELDS; i++)
			s->v[i] = count(o, timeline_fields[i]);
	} else {
		struct timeline_event *e;
		const char *ev = str_or_null(o, "event");

		e = grow_push(&t->events, &t->n_events, &c->events, sizeof(*e));
		if (!e)
			return msg_set_errno(ENOMEM, "timeline");
		e->time_ns = json_integer_value(tm);
		e->pid = json_integer_value(pid);
		e->obj = json_incref(o);
		e->event = ev ? ev : "";
		e->path = e->kind = NULL;
		if (strcmp(e->event, "profile") == 0) {
			e->path = str_or_null(o, "path");
			e->kind = str_or_null(o, "kind");
			if (e->path && !*e->path)
				e->path = NULL;
		}
	}
	return 0;
}

int timeline_doc_parse(const char *buf, size_t len, struct timeline_doc *t)
{
	struct caps c = {0, 0};
	size_t lineno = 0, off = 0;

	memset(t, 0, sizeof(*t));
	if (len > TIMELINE_MAX_BYTES)
		return msg_set("larger than %zu bytes (%zu)",
			       (size_t)TIMELINE_MAX_BYTES, len);
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
		json_error_t err;
		json_t *o;
		int rc;

		lineno++;
		if (n > TIMELINE_MAX_LINE)
			return msg_set("line %zu: longer than %d bytes", lineno,
				       TIMELINE_MAX_LINE);
		if (lineno > TIMELINE_MAX_RECORDS)
			return msg_set("more than %zu lines",
				       (size_t)TIMELINE_MAX_RECORDS);
		if (n == 0 || (n == 1 && buf[off] == '\r')) {
			off += n + 1;
			continue;
		}
		o = json_loadb(buf + off, n, JSON_REJECT_DUPLICATES, &err);
		if (!json_is_object(o)) {
			json_decref(o);
			if (!nl) {
				/* the writer died mid-line */
				t->truncated = true;
				break;
			}
			return msg_set("line %zu: not a JSON object%s%s",
				       lineno, o ? "" : ": ",
				       o ? "" : err.text);
		}
		rc = add_line(t, &c, o, lineno);
		json_decref(o);
		if (rc < 0)
			return -1;
		off += n + 1;
	}
	return 0;
}

int timeline_doc_read(const char *path, struct timeline_doc *t)
{
	unsigned char *buf = NULL;
	char why[MSG_MAX];
	size_t len = 0;
	int fd, rc;

	memset(t, 0, sizeof(*t));
	fd = infile_open(path, NULL);
	if (fd < 0 || infile_read_fd(fd, TIMELINE_MAX_BYTES, &buf, &len) < 0) {
		snprintf(why, sizeof(why), "%s", msg_last());
		if (fd >= 0)
			close(fd);
		return msg_set("cannot read timeline '%s': %s", path, why);
	}
	close(fd);
	rc = timeline_doc_parse((const char *)buf, len, t);
	free(buf);
	if (rc < 0) {
		snprintf(why, sizeof(why), "%s", msg_last());
		timeline_doc_free(t);
		return msg_set("bad timeline '%s': %s", path, why);
	}
	return 0;
}
