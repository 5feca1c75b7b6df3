/* SPDX-License-Identifier: MIT */
/* The commands' side of the agent: GET, status check and decoding. */
#include "common.h"
#include "allocinfo.h"
#include "ctlsock_client.h"
#include "http_client.h"
#include "msg.h"
#include "prom.h"

int allocinfo_get_raw(pid_t pid, const char *target, int timeout_ms,
		      char **body, size_t *len, char *ctype, size_t ctype_len)
{
	struct http_response resp;

	if (ctlsock_get(pid, target, timeout_ms, &resp) < 0)
		return -1;
	if (resp.status != 200) {
		size_t n = strcspn(resp.body, "\n");

		msg_set("agent answered %d: %.*s", resp.status,
			(int)(n > 200 ? 200 : n), resp.body);
		http_response_free(&resp);
		return -1;
	}
	if (ctype && ctype_len) {
		size_t n = strlen(resp.content_type);

		if (n >= ctype_len)
			n = ctype_len - 1;
		memcpy(ctype, resp.content_type, n);
		ctype[n] = '\0';
	}
	*body = resp.body;
	*len = resp.len;
	return 0;
}

json_t *allocinfo_get_json(pid_t pid, const char *target, int timeout_ms)
{
	char *body;
	size_t len;
	json_error_t err;
	json_t *j;

	if (allocinfo_get_raw(pid, target, timeout_ms, &body, &len, NULL, 0) <
	    0)
		return NULL;
	j = json_loadb(body, len, 0, &err);
	free(body);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		msg_set("agent answered malformed JSON");
		return NULL;
	}
	return j;
}

struct pprof_profile *allocinfo_get_profile(pid_t pid, const char *target,
					    int timeout_ms)
{
	char *body;
	size_t len;
	struct pprof_profile *p;

	if (allocinfo_get_raw(pid, target, timeout_ms, &body, &len, NULL, 0) <
	    0)
		return NULL;
	p = pprof_decode(body, len, 0, NULL);
	free(body);
	if (!p) {
		char why[MSG_MAX];

		snprintf(why, sizeof(why), "%s", msg_last());
		msg_set("agent answered a bad profile: %s", why);
	}
	return p;
}

int allocinfo_list(struct allocinfo_agent **out, size_t *n, int timeout_ms,
		   void (*warn)(void *ctx, const char *msg), void *ctx)
{
	struct ctlsock_agent *list;
	size_t nl;

	*out = NULL;
	*n = 0;
	if (timeout_ms > ALLOCINFO_LIST_TIMEOUT_MS)
		timeout_ms = ALLOCINFO_LIST_TIMEOUT_MS;
	if (ctlsock_list_warn(&list, &nl, warn, ctx) < 0)
		return -1;
	*out = calloc(nl + 1, sizeof(**out));
	if (!*out) {
		free(list);
		return msg_set_errno(ENOMEM, "listing agents");
	}
	for (size_t i = 0; i < nl; i++) {
		struct allocinfo_agent *a = &(*out)[*n];
		struct http_response resp;

		a->pid = list[i].pid;
		if (ctlsock_get_path(list[i].path, "/debug/palloc/stats",
				     timeout_ms, &resp) < 0) {
			/* A refused socket of a live pid is stale: skip. */
			if (strstr(msg_last(), "stale socket"))
				continue;
			snprintf(a->error, sizeof(a->error), "%s", msg_last());
		} else {
			json_error_t err;

			if (resp.status == 200)
				a->stats = json_loadb(resp.body, resp.len, 0,
						      &err);
			if (!a->stats)
				snprintf(a->error, sizeof(a->error),
					 "agent answered %d", resp.status);
			http_response_free(&resp);
		}
		(*n)++;
	}
	free(list);
	return 0;
}

void allocinfo_agents_free(struct allocinfo_agent *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(a[i].stats);
	free(a);
}

int64_t allocinfo_int(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* A metric taken from one key of one of the two documents. */
struct prom_metric {
	const char *name; /* after "palloc_" */
	const char *type;
	bool from_mallinfo; /* else from stats */
	const char *key;    /* in stats, or in mallinfo's "comparable" */
	const char *help;
};

static const struct prom_metric prom_metrics[] = {
	{"alloc_total", PROM_COUNTER, false, "alloc_count",
	 "Allocation calls seen by the agent."},
	{"free_total", PROM_COUNTER, false, "free_count",
	 "Frees of non-NULL pointers seen by the agent."},
	{"alloc_bytes_total", PROM_COUNTER, false, "alloc_bytes",
	 "Bytes requested by allocation calls."},
	{"inuse_bytes", PROM_GAUGE, false, "inuse_bytes",
	 "Live heap bytes: exact with PALLOC_EXACT=1, else the allocator's "
	 "allocated bytes."},
	{"peak_inuse_bytes", PROM_GAUGE, false, "peak_inuse_bytes",
	 "Peak of live heap bytes (exact, or of the sampled estimate)."},
	{"sampled_inuse_bytes", PROM_GAUGE, false, "sampled_inuse_bytes",
	 "Live heap bytes estimated from the sampled profile."},
	{"samples_total", PROM_COUNTER, false, "sampled_count",
	 "Allocations sampled with their stack."},
	{"dropped_samples_total", PROM_COUNTER, false, "dropped_count",
	 "Samples lost (stack table full, agent out of memory)."},
	{"stacks", PROM_GAUGE, false, "stack_count",
	 "Distinct stacks in the agent's stack table."},
	{"sample_rate_bytes", PROM_GAUGE, false, "sample_rate",
	 "Mean bytes between samples (0: sampling off)."},
	{"allocator_allocated_bytes", PROM_GAUGE, true, "allocated_bytes",
	 "Bytes allocated by the program, as the allocator counts them."},
	{"allocator_active_bytes", PROM_GAUGE, true, "active_bytes",
	 "Bytes in the allocator's pages holding live allocations."},
	{"allocator_resident_bytes", PROM_GAUGE, true, "resident_bytes",
	 "Bytes resident, as the allocator counts them."},
	{"allocator_mapped_bytes", PROM_GAUGE, true, "mapped_bytes",
	 "Bytes mapped from the kernel by the allocator."},
	{"allocator_retained_bytes", PROM_GAUGE, true, "retained_bytes",
	 "Virtual memory the allocator keeps without using it."},
	{"allocator_free_bytes", PROM_GAUGE, true, "free_bytes",
	 "Free bytes held inside the allocator's heaps."},
	{"allocator_metadata_bytes", PROM_GAUGE, true, "metadata_bytes",
	 "The allocator's own bookkeeping bytes."},
	{"allocator_arenas", PROM_GAUGE, true, "arena_count",
	 "Arenas of the allocator."},
};

int allocinfo_prom(FILE *fp, const struct allocinfo_proc *v, size_t n)
{
	char name[PROM_NAME_MAX], pid[16];

	for (size_t m = 0; m < ARRAY_SIZE(prom_metrics); m++) {
		const struct prom_metric *pm = &prom_metrics[m];

		prom_name(name, sizeof(name), pm->name);
		if (prom_family(fp, name, pm->type, pm->help) < 0)
			return -1;
		for (size_t i = 0; i < n; i++) {
			struct prom_label l[2] = {{"pid", pid},
						  {"program", v[i].program}};
			const json_t *doc =
				pm->from_mallinfo
					? json_object_get(v[i].mallinfo,
							  "comparable")
					: v[i].stats;
			int64_t val = doc ? allocinfo_int(doc, pm->key) : -1;

			if (val < 0)
				continue;
			snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
			if (prom_sample_u64(fp, name, l, 2, (uint64_t)val) < 0)
				return -1;
		}
	}
	prom_name(name, sizeof(name), "uptime_seconds");
	if (prom_family(fp, name, PROM_GAUGE,
			"Seconds since the agent started.") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct prom_label l[2] = {{"pid", pid},
					  {"program", v[i].program}};
		json_t *u = json_object_get(v[i].stats, "uptime_seconds");

		if (!json_is_number(u))
			continue;
		snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
		if (prom_sample_double(fp, name, l, 2, json_number_value(u)) <
		    0)
			return -1;
	}
	prom_name(name, sizeof(name), "allocator_info");
	if (prom_family(fp, name, PROM_GAUGE,
			"The allocator in use (value 1), by name.") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *a = json_string_value(
			json_object_get(v[i].mallinfo, "allocator"));
		struct prom_label l[3] = {{"pid", pid},
					  {"program", v[i].program},
					  {"allocator", a}};

		if (!a)
			a = json_string_value(
				json_object_get(v[i].stats, "allocator"));
		if (!a)
			continue;
		l[2].value = a;
		snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
		if (prom_sample_u64(fp, name, l, 3, 1) < 0)
			return -1;
	}
	return 0;
}
