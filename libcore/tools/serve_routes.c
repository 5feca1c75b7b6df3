/* SPDX-License-Identifier: MIT */
/* The HTTP server's routes and answers: the set of processes, profiles,
 * JSON and the Prometheus text of /metrics (serve_int.h). */
#include "common.h"
#include "serve_int.h"

#include <arpa/inet.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cgroup.h"
#include "clock.h"
#include "msg_cli.h"
#include "num.h"
#include "pprof.h"
#include "procfs.h"
#include "prom.h"
#include "symbols.h"

/* ---- the set of processes ---- */

static bool descends_from(pid_t pid, pid_t root)
{
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (pid == root)
			return true;
		pid = procfs_parent(pid);
	}
	return pid > 0 && pid == root;
}

/* The current set, malloc'd into *out. Returns the count, or -1. */
static ssize_t current_pids(const struct serve *s, pid_t **out)
{
	pid_t *a;
	ssize_t list, k = 0;

	pid_t root = __atomic_load_n(&s->cfg.root_pid, __ATOMIC_ACQUIRE);

	if (root < 0 && !s->cfg.n_pids) {
		*out = malloc(sizeof(**out));
		return *out ? 0 : -1;
	}
	if (s->cfg.n_pids) {
		*out = malloc(s->cfg.n_pids * sizeof(**out));
		if (!*out)
			return -1;
		memcpy(*out, s->pids, s->cfg.n_pids * sizeof(**out));
		return (ssize_t)s->cfg.n_pids;
	}
	list = allocinfo_live_pids(&a);
	if (list < 0)
		return -1;
	*out = a;
	for (ssize_t i = 0; i < list; i++) {
		pid_t p = a[i];

		if (root && !(p == root || (s->cfg.follow_descendants &&
					    descends_from(p, root))))
			continue;
		(*out)[k++] = p;
	}
	return (ssize_t)k;
}

/* ---- requests ---- */

static void answer(struct job *j, unsigned status, const char *ctype,
		   char *body, size_t len)
{
	free(j->body);
	j->status = status;
	j->ctype = ctype;
	j->body = body;
	j->len = len;
}

void serve_answer_text(struct job *j, unsigned status, const char *fmt, ...)
{
	char *buf = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&buf, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf = NULL;
		n = 0;
		status = 500;
	}
	answer(j, status, "text/plain; charset=utf-8", buf, (size_t)n);
}

enum MHD_Result serve_send_answer(struct job *j)
{
	static char empty[1];
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (j->body) {
		r = MHD_create_response_from_buffer(j->len, j->body,
						    MHD_RESPMEM_MUST_FREE);
		if (r)
			j->body = NULL;
	} else {
		r = MHD_create_response_from_buffer(0, empty,
						    MHD_RESPMEM_PERSISTENT);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				j->ctype ? j->ctype
					 : "text/plain; charset=utf-8");
	ret = MHD_queue_response(j->c, j->status, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * The pid a request is about: ?pid=N (which must be in the set), else the
 * root process when it is in the set, else the only process. 0 after
 * answering with an error.
 */
static pid_t request_pid(struct serve *s, struct job *j)
{
	const char *arg =
		MHD_lookup_connection_value(j->c, MHD_GET_ARGUMENT_KIND, "pid");
	pid_t *set = NULL, pid = 0;
	ssize_t n = current_pids(s, &set);
	uint64_t v;

	if (n < 0) {
		serve_answer_text(j, 500, "500: %s\n", msg_last());
		return 0;
	}
	if (arg) {
		if (num_parse_u64(arg, false, &v) < 0 || v == 0 ||
		    v > INT_MAX) {
			serve_answer_text(j, 400, "400: invalid pid\n");
			free(set);
			return 0;
		}
		for (ssize_t i = 0; i < n; i++)
			if (set[i] == (pid_t)v)
				pid = set[i];
		if (!pid)
			serve_answer_text(
				j, 404,
				"404: process %llu is not served here\n",
				(unsigned long long)v);
		free(set);
		return pid;
	}
	for (ssize_t i = 0; i < n; i++)
		if (set[i] ==
		    __atomic_load_n(&s->cfg.root_pid, __ATOMIC_ACQUIRE))
			pid = set[i];
	if (!pid && n == 1)
		pid = set[0];
	if (!pid) {
		char list[512] = "";
		size_t len = 0;

		for (ssize_t i = 0; i < n && len < sizeof(list) - 16; i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						" %d", (int)set[i]);
		serve_answer_text(
			j, n ? 400 : 404,
			n ? "400: several processes; add ?pid= one of:%s\n"
			  : "404: no process with an agent%s\n",
			list);
	}
	free(set);
	return pid;
}

static void agent_error(struct job *j)
{
	const char *why = msg_last();
	unsigned status = strstr(why, "timed out") ? 504 : 502;

	serve_answer_text(j, status,
			  "%u: cannot reach agent of process '%d': %s\n",
			  status, (int)j->pid, why);
}

/* Symbolize (unless asked not to) and encode p into the answer. */
static void answer_profile(struct job *j, struct pprof_profile *p)
{
	char root[64];
	char *body;
	size_t len;
	void *buf;

	if (j->symbolize) {
		snprintf(root, sizeof(root), "/proc/%d/root", (int)j->pid);
		symbols_symbolize(p, root, NULL);
	}
	if (pprof_encode(p, true, &buf, &len) < 0) {
		serve_answer_text(j, 500, "500: %s\n", msg_last());
		return;
	}
	body = malloc(len ? len : 1);
	if (body) {
		memcpy(body, buf, len);
		answer(j, 200, "application/octet-stream", body, len);
	} else {
		serve_answer_text(j, 500, "500: out of memory\n");
	}
	pprof_free_buffer(p, buf);
}

/*
 * ?seconds=N, as Go serves it, but taken here rather than by the agent:
 * the agent gives two snapshots N seconds apart, and its one control
 * thread is not held meanwhile. First call: the first snapshot (the job
 * then waits in s->waiting); second call: the delta.
 */
static void run_delta(struct job *j)
{
	struct serve *s = j->s;
	struct pprof_profile *p, *d;

	p = allocinfo_get_profile(j->pid, j->url, s->cfg.timeout_ms);
	if (!p) {
		agent_error(j);
		return;
	}
	if (!j->p0) {
		j->p0 = p;
		j->deadline_ms =
			(long)clock_mono_ms() + (long)j->seconds * 1000;
		return;
	}
	d = pprof_delta(NULL, j->p0, p);
	pprof_free(p);
	if (!d) {
		serve_answer_text(j, 500, "500: %s\n", msg_last());
		return;
	}
	answer_profile(j, d);
	pprof_free(d);
}

static void run_profile(struct job *j)
{
	struct pprof_profile *p;
	char *body;
	size_t len;

	if (j->seconds) {
		run_delta(j);
		return;
	}
	if (!j->symbolize) {
		if (allocinfo_get_raw(j->pid, j->url, j->s->cfg.timeout_ms,
				      &body, &len, NULL, 0) < 0)
			agent_error(j);
		else
			answer(j, 200, "application/octet-stream", body, len);
		return;
	}
	p = allocinfo_get_profile(j->pid, j->url, j->s->cfg.timeout_ms);
	if (!p) {
		agent_error(j);
		return;
	}
	answer_profile(j, p);
	pprof_free(p);
}

static void run_json(struct job *j)
{
	char *body;
	size_t len;

	if (allocinfo_get_raw(j->pid, j->url, j->s->cfg.timeout_ms, &body, &len,
			      NULL, 0) < 0)
		agent_error(j);
	else
		answer(j, 200, "application/json", body, len);
}
/* smaps rollup families, the same names as palloc-smaps --prom. */
static int smaps_prom(FILE *fp, const struct allocinfo_proc *v,
		      const struct procfs_usage *u, const bool *have, size_t n)
{
	static const enum procfs_field fields[] = {
		PROCFS_RSS,	 PROCFS_PSS,	   PROCFS_PSS_ANON,
		PROCFS_PSS_FILE, PROCFS_ANONYMOUS, PROCFS_SWAP,
	};
	char name[PROM_NAME_MAX], pid[16];

	for (size_t f = 0; f < ARRAY_SIZE(fields); f++) {
		if (procfs_prom_family(
			    fp, name, "smaps_", fields[f],
			    "of the process (/proc/PID/smaps_rollup)") < 0)
			return -1;
		for (size_t i = 0; i < n; i++) {
			struct prom_label l[2] = {{"pid", pid},
						  {"program", v[i].program}};

			if (!have[i] || !procfs_has(&u[i], fields[f]))
				continue;
			snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
			if (prom_sample_u64(fp, name, l, 2, u[i].v[fields[f]]) <
			    0)
				return -1;
		}
	}
	return 0;
}

static void run_metrics(struct job *j)
{
	struct serve *s = j->s;
	pid_t *set = NULL;
	ssize_t n = current_pids(s, &set);
	struct allocinfo_proc *v;
	struct procfs_usage *u;
	bool *have;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;
	int rc = 0;

	if (n < 0) {
		serve_answer_text(j, 500, "500: %s\n", msg_last());
		return;
	}
	v = calloc((size_t)n + 1, sizeof(*v));
	u = calloc((size_t)n + 1, sizeof(*u));
	have = calloc((size_t)n + 1, sizeof(*have));
	fp = open_memstream(&text, &len);
	if (!v || !u || !have || !fp)
		goto oom;
	for (ssize_t i = 0; i < n; i++) {
		v[i].pid = set[i];
		v[i].stats = allocinfo_get_json(set[i], "/debug/palloc/stats",
						s->cfg.timeout_ms);
		v[i].mallinfo = allocinfo_get_json(
			set[i], "/debug/palloc/mallinfo", s->cfg.timeout_ms);
		v[i].program = json_string_value(
			json_object_get(v[i].stats, "program"));
		if (!v[i].program)
			v[i].program = "";
		have[i] = procfs_read_rollup("", set[i], &u[i], NULL) == 0;
	}
	rc = allocinfo_prom(fp, v, (size_t)n);
	if (rc == 0)
		rc = smaps_prom(fp, v, u, have, (size_t)n);
	if (rc == 0 && n > 0) {
		/* One cgroup: the processes of one run share it, and a
		 * family may not repeat (promtool). */
		struct cgroup_mem m;

		if (cgroup_read_pid("", set[0], &m) == 0) {
			rc = cgroup_prom(fp, &m);
			cgroup_mem_free(&m);
		}
	}
	for (ssize_t i = 0; i < n; i++) {
		json_decref(v[i].stats);
		json_decref(v[i].mallinfo);
		if (have[i])
			procfs_usage_free(&u[i]);
	}
	free(v);
	free(u);
	free(have);
	free(set);
	if (fclose(fp) != 0 || rc < 0) {
		free(text);
		serve_answer_text(j, 500, "500: cannot render metrics\n");
		return;
	}
	answer(j, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
	return;
oom:
	if (fp)
		fclose(fp);
	free(text);
	free(v);
	free(u);
	free(have);
	free(set);
	serve_answer_text(j, 500, "500: out of memory\n");
}

static void answer_index(struct serve *s, struct job *j)
{
	pid_t *set = NULL;
	ssize_t n = current_pids(s, &set);
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	if (!fp || n < 0) {
		if (fp)
			fclose(fp);
		free(text);
		free(set);
		serve_answer_text(j, 500, "500: out of memory\n");
		return;
	}
	fprintf(fp, "palloc: heap profiles and allocator state\n\n"
		    "/debug/pprof/heap[?seconds=N][&pid=PID]\n"
		    "/debug/pprof/allocs[?seconds=N][&pid=PID]\n"
		    "/debug/palloc/stats[?pid=PID]\n"
		    "/debug/palloc/mallinfo[?pid=PID]\n"
		    "/metrics\n\nprocesses:");
	for (ssize_t i = 0; i < n; i++)
		fprintf(fp, " %d", (int)set[i]);
	fprintf(fp, "\n");
	free(set);
	if (fclose(fp) != 0) {
		free(text);
		serve_answer_text(j, 500, "500: out of memory\n");
		return;
	}
	answer(j, 200, "text/plain; charset=utf-8", text, len);
}

void serve_run_job(struct job *j)
{
	switch (j->kind) {
	case JOB_METRICS:
		run_metrics(j);
		break;
	case JOB_PROFILE:
		run_profile(j);
		break;
	case JOB_JSON:
		run_json(j);
		break;
	}
}

bool serve_route(struct serve *s, struct job *j, const char *url)
{
	struct MHD_Connection *c = j->c;
	const char *sec, *sym;
	const union MHD_ConnectionInfo *ci;
	bool queued;

	if (strcmp(url, "/") == 0 || strcmp(url, "/debug/pprof/") == 0) {
		answer_index(s, j);
		return false;
	}
	if (strcmp(url, "/metrics") == 0) {
		j->kind = JOB_METRICS;
	} else if (strcmp(url, "/debug/pprof/heap") == 0 ||
		   strcmp(url, "/debug/pprof/allocs") == 0) {
		j->kind = JOB_PROFILE;
	} else if (strcmp(url, "/debug/palloc/stats") == 0 ||
		   strcmp(url, "/debug/palloc/mallinfo") == 0) {
		j->kind = JOB_JSON;
	} else {
		serve_answer_text(j, 404, "404: no such endpoint\n");
		return false;
	}
	snprintf(j->url, sizeof(j->url), "%s", url);
	if (j->kind != JOB_METRICS) {
		j->pid = request_pid(s, j);
		if (!j->pid)
			return false;
	}
	if (j->kind == JOB_PROFILE) {
		sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						  "seconds");
		sym = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						  "symbolize");
		if (sec &&
		    (num_parse_u64(sec, false, &j->seconds) < 0 ||
		     j->seconds == 0 || j->seconds > SERVE_MAX_SECONDS)) {
			serve_answer_text(
				j, 400,
				"400: seconds must be an integer from 1 "
				"to %d\n",
				SERVE_MAX_SECONDS);
			return false;
		}
		j->symbolize = s->cfg.symbolize && !(sym && !strcmp(sym, "0"));
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	j->fd = ci ? ci->connect_fd : -1;
	pthread_mutex_lock(&s->lock);
	queued = !s->stopping &&
		 !(j->seconds && s->n_deltas >= SERVE_MAX_DELTAS);
	if (s->stopping) {
		serve_answer_text(j, 503, "503: the server is stopping\n");
	} else if (j->seconds && s->n_deltas >= SERVE_MAX_DELTAS) {
		serve_answer_text(j, 503,
				  "503: %d delta profiles are being taken; try "
				  "later\n",
				  SERVE_MAX_DELTAS);
	} else {
		if (j->seconds)
			s->n_deltas++;
		/* Suspended before a worker can resume it. */
		MHD_suspend_connection(c);
		j->suspended = true;
		s->n_suspended++;
		serve_enqueue_locked(s, j);
	}
	pthread_mutex_unlock(&s->lock);
	return queued;
}
