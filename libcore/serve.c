/* SPDX-License-Identifier: MIT */
/* The commands' TCP HTTP server (libmicrohttpd): agents' endpoints and
 * /metrics. */
#include "common.h"
#include "serve.h"

#include <arpa/inet.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>

#include "allocinfo.h"
#include "cgroup.h"
#include "ctlsock.h"
#include "msg.h"
#include "num.h"
#include "pprof.h"
#include "procfs.h"
#include "prom.h"
#include "symbols.h"

struct serve {
	struct MHD_Daemon *d;
	struct serve_config cfg;
	pid_t *pids; /* owned copy of cfg.pids */
	char url[96];
};

/* ---- the set of processes ---- */

/* The parent of pid from /proc/PID/stat, or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;
	char *rp;
	int ppid = 0;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold ')' and spaces: parse after the last ')'. */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

static bool descends_from(pid_t pid, pid_t root)
{
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (pid == root)
			return true;
		pid = parent_of(pid);
	}
	return pid == root;
}

/* The current set, malloc'd into *out. Returns the count, or -1. */
static ssize_t current_pids(const struct serve *s, pid_t **out)
{
	struct ctlsock_agent *a;
	size_t n, k = 0;

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
	if (ctlsock_list(&a, &n) < 0)
		return -1;
	*out = malloc((n + 1) * sizeof(**out));
	if (!*out) {
		free(a);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		pid_t p = a[i].pid;

		if (root && !(p == root || (s->cfg.follow_descendants &&
					    descends_from(p, root))))
			continue;
		(*out)[k++] = p;
	}
	free(a);
	return (ssize_t)k;
}

/* ---- responses ---- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *ctype, void *body, size_t len,
			     bool owned)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body,
		owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
				  const char *fmt, ...) PALLOC_PRINTF(3, 4);

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
				  const char *fmt, ...)
{
	char *buf = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return reply(c, status, "text/plain; charset=utf-8", buf, (size_t)n,
		     true);
}

/*
 * The pid a request is about: ?pid=N (which must be in the set), else the
 * root process when it is in the set, else the only process. 0 after
 * replying with an error (*ret set).
 */
static pid_t request_pid(struct serve *s, struct MHD_Connection *c,
			 enum MHD_Result *ret)
{
	const char *arg =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	pid_t *set = NULL, pid = 0;
	ssize_t n = current_pids(s, &set);
	uint64_t v;

	if (n < 0) {
		*ret = reply_text(c, 500, "500: %s\n", msg_last());
		return 0;
	}
	if (arg) {
		if (num_parse_u64(arg, false, &v) < 0 || v == 0 ||
		    v > INT_MAX) {
			*ret = reply_text(c, 400, "400: invalid pid '%s'\n",
					  arg);
			free(set);
			return 0;
		}
		for (ssize_t i = 0; i < n; i++)
			if (set[i] == (pid_t)v)
				pid = set[i];
		if (!pid)
			*ret = reply_text(c, 404,
					  "404: process %llu is not served "
					  "here\n",
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
		*ret = reply_text(c, n ? 400 : 404,
				  n ? "400: several processes; add ?pid= "
				      "one of:%s\n"
				    : "404: no process with an agent%s\n",
				  list);
	}
	free(set);
	return pid;
}

static enum MHD_Result agent_error(struct MHD_Connection *c, pid_t pid)
{
	const char *why = msg_last();
	unsigned status = strstr(why, "timed out") ? 504 : 502;

	return reply_text(c, status,
			  "%u: cannot reach agent of process '%d': %s\n",
			  status, (int)pid, why);
}

static enum MHD_Result serve_profile(struct serve *s, struct MHD_Connection *c,
				     const char *url, pid_t pid)
{
	const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "seconds");
	const char *sym = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "symbolize");
	char target[128], root[64];
	int timeout = s->cfg.timeout_ms;
	uint64_t seconds = 0;
	struct pprof_profile *p;
	char *body;
	size_t len;
	void *buf;

	if (sec && (num_parse_u64(sec, false, &seconds) < 0 || seconds == 0 ||
		    seconds > 3600))
		return reply_text(c, 400,
				  "400: seconds must be an integer from 1 to "
				  "3600\n");
	snprintf(target, sizeof(target), "%s", url);
	if (seconds) {
		size_t n = strlen(target);

		snprintf(target + n, sizeof(target) - n, "?seconds=%llu",
			 (unsigned long long)seconds);
		timeout += (int)seconds * 1000;
	}
	if (!s->cfg.symbolize || (sym && strcmp(sym, "0") == 0)) {
		if (allocinfo_get_raw(pid, target, timeout, &body, &len, NULL,
				      0) < 0)
			return agent_error(c, pid);
		return reply(c, 200, "application/octet-stream", body, len,
			     true);
	}
	p = allocinfo_get_profile(pid, target, timeout);
	if (!p)
		return agent_error(c, pid);
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	symbols_symbolize(p, root, NULL);
	if (pprof_encode(p, true, &buf, &len) < 0) {
		pprof_free(p);
		return reply_text(c, 500, "500: %s\n", msg_last());
	}
	body = malloc(len ? len : 1);
	if (!body) {
		pprof_free_buffer(p, buf);
		pprof_free(p);
		return MHD_NO;
	}
	memcpy(body, buf, len);
	pprof_free_buffer(p, buf);
	pprof_free(p);
	return reply(c, 200, "application/octet-stream", body, len, true);
}

static enum MHD_Result serve_json(struct serve *s, struct MHD_Connection *c,
				  const char *url, pid_t pid)
{
	char *body;
	size_t len;

	if (allocinfo_get_raw(pid, url, s->cfg.timeout_ms, &body, &len, NULL,
			      0) < 0)
		return agent_error(c, pid);
	return reply(c, 200, "application/json", body, len, true);
}

/* smaps rollup families, the same names as palloc-smaps --prom. */
static int smaps_prom(FILE *fp, const struct allocinfo_proc *v,
		      const struct procfs_usage *u, const bool *have, size_t n)
{
	static const enum procfs_field fields[] = {
		PROCFS_RSS,	 PROCFS_PSS,	   PROCFS_PSS_ANON,
		PROCFS_PSS_FILE, PROCFS_ANONYMOUS, PROCFS_SWAP,
	};
	char name[PROM_NAME_MAX], metric[96], pid[16];

	for (size_t f = 0; f < ARRAY_SIZE(fields); f++) {
		snprintf(metric, sizeof(metric), "smaps_%s",
			 procfs_field_json_name(fields[f]));
		prom_name(name, sizeof(name), metric);
		snprintf(metric, sizeof(metric),
			 "%s of the process (/proc/PID/smaps_rollup), bytes.",
			 procfs_field_kernel_name(fields[f]));
		if (prom_family(fp, name, PROM_GAUGE, metric) < 0)
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

static enum MHD_Result serve_metrics(struct serve *s, struct MHD_Connection *c)
{
	pid_t *set = NULL;
	ssize_t n = current_pids(s, &set);
	struct allocinfo_proc *v;
	struct procfs_usage *u;
	bool *have;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;
	int rc = 0;

	if (n < 0)
		return reply_text(c, 500, "500: %s\n", msg_last());
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
		return reply_text(c, 500, "500: cannot render metrics\n");
	}
	return reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", text,
		     len, true);
oom:
	if (fp)
		fclose(fp);
	free(text);
	free(v);
	free(u);
	free(have);
	free(set);
	return reply_text(c, 500, "500: out of memory\n");
}

static enum MHD_Result serve_index(struct serve *s, struct MHD_Connection *c)
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
		return reply_text(c, 500, "500: out of memory\n");
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
		return MHD_NO;
	}
	return reply(c, 200, "text/plain; charset=utf-8", text, len, true);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct serve *s = cls;
	enum MHD_Result ret = MHD_NO;
	pid_t pid;

	(void)version;
	(void)upload_data;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply_text(c, 405, "405: only GET is served\n");
	/* The first call only announces the headers (no body for GET). */
	if (!*con_cls) {
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_data_size)
		return reply_text(c, 400, "400: unexpected body\n");
	if (strcmp(url, "/metrics") == 0)
		return serve_metrics(s, c);
	if (strcmp(url, "/") == 0 || strcmp(url, "/debug/pprof/") == 0)
		return serve_index(s, c);
	if (strcmp(url, "/debug/pprof/heap") != 0 &&
	    strcmp(url, "/debug/pprof/allocs") != 0 &&
	    strcmp(url, "/debug/palloc/stats") != 0 &&
	    strcmp(url, "/debug/palloc/mallinfo") != 0)
		return reply_text(c, 404, "404: no such endpoint '%s'\n", url);
	pid = request_pid(s, c, &ret);
	if (!pid)
		return ret;
	if (strncmp(url, "/debug/pprof/", 13) == 0)
		return serve_profile(s, c, url, pid);
	return serve_json(s, c, url, pid);
}

/* Parse ADDR into a socket address; loopback when no host is named. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss,
		      socklen_t *sl)
{
	char host[256] = "127.0.0.1";
	const char *port = addr, *colon = strrchr(addr, ':');
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	uint64_t pv;
	int e;

	if (colon) {
		size_t hl = (size_t)(colon - addr);

		port = colon + 1;
		if (hl && addr[0] == '[' && addr[hl - 1] == ']') {
			addr++;
			hl -= 2;
		}
		if (hl >= sizeof(host))
			return msg_set("invalid address '%s'", addr);
		if (hl) {
			memcpy(host, addr, hl);
			host[hl] = '\0';
		}
	}
	if (num_parse_u64(port, false, &pv) < 0 || pv > 65535)
		return msg_set("invalid port '%s'", port);
	e = getaddrinfo(host, port, &hints, &res);
	if (e != 0 || !res)
		return msg_set("cannot resolve '%s': %s", host,
			       gai_strerror(e));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

struct serve *serve_start_config(const char *addr,
				 const struct serve_config *cfg)
{
	struct serve *s = calloc(1, sizeof(*s));
	struct sockaddr_storage ss;
	socklen_t sl;
	const union MHD_DaemonInfo *info;
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned flags =
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
	unsigned port = 0;

	if (!s) {
		msg_set_errno(ENOMEM, "serve");
		return NULL;
	}
	s->cfg = *cfg;
	if (!s->cfg.timeout_ms)
		s->cfg.timeout_ms = ALLOCINFO_TIMEOUT_MS;
	if (cfg->n_pids) {
		s->pids = malloc(cfg->n_pids * sizeof(*s->pids));
		if (!s->pids) {
			free(s);
			msg_set_errno(ENOMEM, "serve");
			return NULL;
		}
		memcpy(s->pids, cfg->pids, cfg->n_pids * sizeof(*s->pids));
	}
	if (parse_addr(addr, &ss, &sl) < 0)
		goto fail;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_TIMEOUT, 120u,
				MHD_OPTION_END);
	if (!s->d) {
		msg_set_errno(errno ? errno : EADDRINUSE,
			      "cannot listen on '%s'", addr);
		goto fail;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	if (info)
		port = info->port;
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
			  host, sizeof(host));
		snprintf(s->url, sizeof(s->url), "http://[%s]:%u", host, port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host,
			  sizeof(host));
		snprintf(s->url, sizeof(s->url), "http://%s:%u", host, port);
	}
	return s;
fail:
	free(s->pids);
	free(s);
	return NULL;
}

struct serve *serve_start(const char *addr, pid_t root_pid,
			  bool follow_descendants)
{
	struct serve_config cfg = {
		.root_pid = root_pid,
		.follow_descendants = follow_descendants,
		.symbolize = true,
	};

	return serve_start_config(addr, &cfg);
}

void serve_set_root(struct serve *s, pid_t root_pid)
{
	__atomic_store_n(&s->cfg.root_pid, root_pid, __ATOMIC_RELEASE);
}

const char *serve_url(const struct serve *s)
{
	return s->url;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s->pids);
	free(s);
}

int serve_run(const char *addr, const pid_t *pids, size_t n, int timeout_ms,
	      bool symbolize)
{
	struct serve_config cfg = {
		.pids = pids,
		.n_pids = n,
		.symbolize = symbolize,
		.timeout_ms = timeout_ms,
	};
	struct serve *s;
	sigset_t set, old;
	int sig;

	/* Block before the server's threads exist, so sigwait gets them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	s = serve_start_config(addr, &cfg);
	if (!s) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		msg_error("cannot serve on '%s': %s", addr, msg_last());
		return 2;
	}
	fprintf(stderr, "%s: serving %s/\n", msg_prog(), serve_url(s));
	fflush(stderr);
	sigwait(&set, &sig);
	serve_stop(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}
