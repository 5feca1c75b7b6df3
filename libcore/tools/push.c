/* SPDX-License-Identifier: MIT */
/* palloc-dump --push: the loop, the processes' windows, the queues and the
 * HTTP client (libcurl). */
#include "common.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"
#include "clock.h"
#include "msg.h"
#include "msg_cli.h"
#include "num.h"
#include "pprof.h"
#include "push.h"
#include "record_read.h"
#include "symbols.h"

#define PUSH_MAX_PROCS 4096 /* processes followed at once */
#define PUSH_REPLY_KEEP 160 /* bytes of a refusal's body said */
#define PUSH_MAX_TIMEOUT_MS 30000

static const char *const kind_names[] = {"pyroscope", "parca", "otlp"};

/* ---- the command line ---- */

static bool url_ok(const char *u)
{
	const char *host;

	if (strncmp(u, "http://", 7) == 0)
		host = u + 7;
	else if (strncmp(u, "https://", 8) == 0)
		host = u + 8;
	else
		return false;
	if (!*host || *host == '/' || *host == '?' || *host == '#')
		return false;
	for (const char *c = u; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '?' ||
		    *c == '#')
			return false;
	return true;
}

int push_parse_target(char *arg, struct push_target *t)
{
	char *eq = strchr(arg, '='), *end;

	if (!eq)
		return msg_set("want KIND=URL, KIND one of pyroscope, parca, "
			       "otlp");
	*eq = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(kind_names); i++)
		if (strcmp(arg, kind_names[i]) == 0) {
			t->kind = (enum push_kind)i;
			goto url;
		}
	*eq = '=';
	return msg_set("unknown kind: want pyroscope, parca or otlp");
url:
	*eq = '=';
	t->url = eq + 1;
	if (!url_ok(t->url))
		return msg_set("want an http:// or https:// URL with a host, "
			       "without a query");
	/* "http://h:4040/" and "http://h:4040" are the same server. */
	end = eq + 1 + strlen(eq + 1);
	while (end > eq + 1 && end[-1] == '/' && end - 2 > eq + 1 &&
	       end[-2] != '/')
		*--end = '\0';
	return 0;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

int push_parse_label(char *arg, const char **key, const char **value)
{
	static const char *const taken[] = {"service_name", "pid", "hostname",
					    "service"};
	char *eq = strchr(arg, '=');
	size_t vlen;

	if (!eq || eq == arg)
		return msg_set("want K=V");
	*eq = '\0';
	for (const char *c = arg; *c; c++)
		if (!name_char(*c, c == arg)) {
			*eq = '=';
			return msg_set("a label name is letters, digits and "
				       "'_', not starting with a digit");
		}
	if (strncmp(arg, "__", 2) == 0 || eq - arg >= PUSH_NAME_MAX) {
		*eq = '=';
		return msg_set("label names starting with '__' are reserved");
	}
	for (size_t i = 0; i < ARRAY_SIZE(taken); i++)
		if (strcmp(arg, taken[i]) == 0) {
			*eq = '=';
			return msg_set("palloc sets label '%s' itself",
				       taken[i]);
		}
	*eq = '=';
	vlen = strlen(eq + 1);
	if (!vlen || vlen >= PUSH_NAME_MAX || eq[1] == ' ' || eq[vlen] == ' ')
		return msg_set("a label value is 1 to %d characters, without "
			       "surrounding spaces",
			       PUSH_NAME_MAX - 1);
	for (const char *c = eq + 1; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ',' ||
		    *c == '{' || *c == '}' || *c == '=' || *c == '"')
			return msg_set(
				"a label value cannot hold control "
				"characters, ',', '{', '}', '=' or '\"'");
	*eq = '\0';
	*key = arg;
	*value = eq + 1;
	return 0;
}

int push_parse_header(const char *arg)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg)
		return msg_set("want 'Name: value'");
	for (const char *c = arg; c < colon; c++)
		if (!(name_char(*c, false) || *c == '-'))
			return msg_set("a header name is letters, digits, '-' "
				       "and '_'");
	for (const char *c = colon + 1; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			return msg_set("a header value cannot hold control "
				       "characters");
	return 0;
}

static bool service_char(char c)
{
	return name_char(c, false) || c == '-' || c == '.' || c == '/';
}

int push_check_service(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= PUSH_NAME_MAX)
		return msg_set("want 1 to %d characters", PUSH_NAME_MAX - 1);
	for (const char *c = name; *c; c++)
		if (!service_char(*c))
			return msg_set("a service name is letters, digits and "
				       "'_', '-', '.', '/'");
	return 0;
}

char *push_url_join(const char *base, const char *path)
{
	size_t n = strlen(base);
	char *s;

	if (n && base[n - 1] == '/')
		n--;
	s = malloc(n + strlen(path) + 1);
	if (!s) {
		msg_set_errno(ENOMEM, "URL");
		return NULL;
	}
	memcpy(s, base, n);
	memcpy(s + n, path, strlen(path) + 1);
	return s;
}

int64_t push_total(const struct pprof_profile *p, size_t k)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->n_samples; i++)
		sum += p->samples[i].values[k];
	return sum;
}

bool push_is_alloc_type(const struct pprof_profile *p, size_t k)
{
	return strncmp(p->sample_types[k].type, "alloc_", 6) == 0;
}

void push_request_free(struct push_request *r)
{
	free(r->url);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* ---- state ---- */

/* A target's queue for one process: the oldest first. */
struct queue {
	struct push_request r[PUSH_QUEUE];
	size_t head, n;
};

struct proc {
	pid_t pid;
	uint64_t start_ticks;
	struct pprof_profile *prev; /* the last read: the window's start */
	char service[PUSH_NAME_MAX];
	struct queue q[PUSH_MAX_TARGETS];
	bool seen; /* found at this window */
};

struct tstate {
	bool down;	    /* failing: one line said */
	bool refused_said;  /* a refusal said since the last success */
	unsigned fails;	    /* in a row */
	int64_t next_ms;    /* no try before (monotonic) */
	uint64_t dropped;   /* windows dropped while down */
	uint64_t sent_back; /* windows sent since it came back */
};

struct pusher {
	const struct push_config *cfg;
	struct proc *procs;
	size_t n_procs, cap_procs;
	struct tstate t[PUSH_MAX_TARGETS];
	char hostname[256];
	CURL *curl;
	struct curl_slist *headers[3]; /* per Content-Type */
	sigset_t sigs;
	bool stop;
};

static void warnf(struct pusher *ps, const char *fmt, ...) PALLOC_PRINTF(2, 3);
static void warnf(struct pusher *ps, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (ps->cfg->warn)
		ps->cfg->warn(line);
}

static bool signalled(struct pusher *ps)
{
	sigset_t pend;

	if (ps->stop)
		return true;
	if (sigpending(&pend) == 0)
		for (int s = 1; s < NSIG; s++)
			if (sigismember(&ps->sigs, s) &&
			    sigismember(&pend, s) == 1)
				return ps->stop = true;
	return false;
}

/* ---- HTTP ---- */

struct reply {
	char text[PUSH_REPLY_KEEP];
	size_t len;
};

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	struct reply *r = ctx;
	size_t len = size * n, room = sizeof(r->text) - 1 - r->len;

	memcpy(r->text + r->len, data, len < room ? len : room);
	r->len += len < room ? len : room;
	r->text[r->len] = '\0';
	return len;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c,
		       curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	return signalled(ctx); /* non-zero aborts the transfer */
}

enum sent { SENT, DOWN, REFUSED };

static enum sent http_post(struct pusher *ps, const struct push_request *rq,
			   char *why, size_t why_len)
{
	struct reply reply = {.len = 0};
	struct curl_slist *h = NULL;
	long status = 0, timeout;
	CURLcode rc;

	for (size_t i = 0; i < ARRAY_SIZE(ps->headers); i++)
		if (ps->headers[i] &&
		    strcmp(ps->headers[i]->data + strlen("Content-Type: "),
			   rq->ctype) == 0)
			h = ps->headers[i];
	timeout = (long)ps->cfg->every_ms;
	if (timeout < 2000)
		timeout = 2000;
	if (timeout > PUSH_MAX_TIMEOUT_MS)
		timeout = PUSH_MAX_TIMEOUT_MS;
	curl_easy_setopt(ps->curl, CURLOPT_URL, rq->url);
	curl_easy_setopt(ps->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(ps->curl, CURLOPT_POSTFIELDS, rq->body);
	curl_easy_setopt(ps->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)rq->len);
	curl_easy_setopt(ps->curl, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(ps->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 timeout < 10000 ? timeout : 10000L);
	curl_easy_setopt(ps->curl, CURLOPT_WRITEDATA, &reply);
	rc = curl_easy_perform(ps->curl);
	if (rc != CURLE_OK) {
		snprintf(why, why_len, "%s", curl_easy_strerror(rc));
		return DOWN;
	}
	curl_easy_getinfo(ps->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return SENT;
	/* the server's words are anyone's: escaped, one line */
	for (char *c = reply.text; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	snprintf(why, why_len, "HTTP %ld%s%s", status, reply.len ? ": " : "",
		 reply.text);
	if (status >= 500 || status == 429 || status == 408)
		return DOWN;
	return REFUSED;
}

static int http_init(struct pusher *ps)
{
	static const char *const ctypes[] = {"application/octet-stream",
					     "application/json",
					     "application/x-protobuf"};

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return msg_set("cannot start libcurl");
	ps->curl = curl_easy_init();
	if (!ps->curl)
		return msg_set("cannot start libcurl");
	for (size_t i = 0; i < ARRAY_SIZE(ctypes); i++) {
		char line[128];
		struct curl_slist *l;

		snprintf(line, sizeof(line), "Content-Type: %s", ctypes[i]);
		l = curl_slist_append(NULL, line);
		/* no "Expect: 100-continue" round trip */
		l = l ? curl_slist_append(l, "Expect:") : NULL;
		for (size_t k = 0; l && k < ps->cfg->n_headers; k++)
			l = curl_slist_append(l, ps->cfg->headers[k]);
		if (!l)
			return msg_set_errno(ENOMEM, "headers");
		ps->headers[i] = l;
	}
	curl_easy_setopt(ps->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(ps->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(ps->curl, CURLOPT_USERAGENT,
			 "palloc-dump/" PACKAGE_VERSION);
	curl_easy_setopt(ps->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(ps->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(ps->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(ps->curl, CURLOPT_XFERINFODATA, ps);
	curl_easy_setopt(ps->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	return 0;
}

static void http_fini(struct pusher *ps)
{
	for (size_t i = 0; i < ARRAY_SIZE(ps->headers); i++)
		curl_slist_free_all(ps->headers[i]);
	if (ps->curl)
		curl_easy_cleanup(ps->curl);
	curl_global_cleanup();
}

/* ---- queues ---- */

static void enqueue(struct pusher *ps, size_t t, struct queue *q,
		    struct push_request *r)
{
	if (q->n == PUSH_QUEUE) {
		push_request_free(&q->r[q->head]);
		q->head = (q->head + 1) % PUSH_QUEUE;
		q->n--;
		ps->t[t].dropped++;
	}
	q->r[(q->head + q->n) % PUSH_QUEUE] = *r;
	q->n++;
	memset(r, 0, sizeof(*r));
}

static void dequeue(struct queue *q)
{
	push_request_free(&q->r[q->head]);
	q->head = (q->head + 1) % PUSH_QUEUE;
	q->n--;
}

static void queue_clear(struct pusher *ps, size_t t, struct queue *q)
{
	ps->t[t].dropped += q->n;
	while (q->n)
		dequeue(q);
}

/* The delay before the next try after fails failures in a row: a quarter
 * window, doubling, at most two windows. */
static int64_t backoff_ms(const struct pusher *ps, unsigned fails)
{
	uint64_t d = ps->cfg->every_ms / 4, max = ps->cfg->every_ms * 2;

	if (d < 100)
		d = 100;
	for (unsigned i = 1; i < fails && d < max; i++)
		d *= 2;
	return (int64_t)(d < max ? d : max);
}

/* Send target t's queued windows, the oldest first, until one fails. */
static void flush_target(struct pusher *ps, size_t t)
{
	const struct push_target *tg = &ps->cfg->targets[t];
	struct tstate *ts = &ps->t[t];
	char why[256];

	if (ts->fails && clock_mono_ms() < ts->next_ms)
		return;
	for (size_t i = 0; i < ps->n_procs && !signalled(ps); i++) {
		struct queue *q = &ps->procs[i].q[t];

		while (q->n && !signalled(ps)) {
			enum sent s =
				http_post(ps, &q->r[q->head], why, sizeof(why));

			if (s == DOWN) {
				if (signalled(ps))
					return;
				ts->fails++;
				ts->next_ms = clock_mono_ms() +
					      backoff_ms(ps, ts->fails);
				if (!ts->down)
					warnf(ps,
					      "%s %s: cannot push (%s); keeping "
					      "the last %d windows of each "
					      "process, trying again",
					      kind_names[tg->kind], tg->url,
					      why, PUSH_QUEUE);
				ts->down = true;
				return;
			}
			dequeue(q);
			if (s == REFUSED) {
				if (!ts->refused_said)
					warnf(ps,
					      "%s %s: a window was refused "
					      "(%s); dropped",
					      kind_names[tg->kind], tg->url,
					      why);
				ts->refused_said = true;
				continue;
			}
			ts->refused_said = false;
			ts->fails = 0;
			if (ts->down) {
				warnf(ps,
				      "%s %s: pushing again (%llu windows "
				      "dropped meanwhile)",
				      kind_names[tg->kind], tg->url,
				      (unsigned long long)ts->dropped);
				ts->down = false;
				ts->dropped = 0;
			}
		}
	}
}

/* ---- processes ---- */

static void proc_free(struct pusher *ps, struct proc *p)
{
	for (size_t t = 0; t < ps->cfg->n_targets; t++)
		queue_clear(ps, t, &p->q[t]);
	pprof_free(p->prev);
	p->prev = NULL;
}

/* The service of a process: --service, or its executable's name
 * (the profile's first mapping), made of Pyroscope's characters. */
static void service_of(const struct push_config *cfg,
		       const struct pprof_profile *p, pid_t pid, char *out,
		       size_t cap)
{
	const char *name = NULL, *slash;
	char comm[64] = "";
	size_t k = 0;

	if (cfg->service) {
		snprintf(out, cap, "%s", cfg->service);
		return;
	}
	if (p->n_mappings && p->mappings[0].file[0] == '/')
		name = p->mappings[0].file;
	if (!name) {
		char path[64];
		FILE *fp;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		fp = fopen(path, "re");
		if (fp) {
			if (!fgets(comm, sizeof(comm), fp))
				comm[0] = '\0';
			fclose(fp);
		}
		comm[strcspn(comm, "\n")] = '\0';
		name = comm;
	}
	slash = strrchr(name, '/');
	if (slash)
		name = slash + 1;
	for (; *name && k + 1 < cap; name++)
		out[k++] = service_char(*name) ? *name : '_';
	if (!k)
		out[k++] = '_';
	out[k] = '\0';
}

/* A fresh read of pid's record: its profile with every sample type. */
static struct pprof_profile *read_profile(pid_t pid)
{
	return allocinfo_get_profile(pid, "/debug/pprof/heap", 0);
}

static struct proc *proc_find(struct pusher *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->n_procs; i++)
		if (ps->procs[i].pid == pid)
			return &ps->procs[i];
	return NULL;
}

/* A process seen for the first time: its first read opens its first
 * window. 0, or -1 with msg_set(). */
static int proc_add(struct pusher *ps, pid_t pid, uint64_t ticks)
{
	struct proc *p;

	if (ps->n_procs == ps->cap_procs) {
		size_t cap = ps->cap_procs ? ps->cap_procs * 2 : 16;

		if (cap > PUSH_MAX_PROCS)
			return msg_set("more than %d processes",
				       PUSH_MAX_PROCS);
		p = realloc(ps->procs, cap * sizeof(*p));
		if (!p)
			return msg_set_errno(ENOMEM, "processes");
		ps->procs = p;
		ps->cap_procs = cap;
	}
	p = &ps->procs[ps->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->start_ticks = ticks;
	p->prev = read_profile(pid);
	if (!p->prev)
		return -1;
	service_of(ps->cfg, p->prev, pid, p->service, sizeof(p->service));
	p->seen = true;
	ps->n_procs++;
	return 0;
}

/* The window of p that ends now: encoded for every target and queued. */
static void proc_window(struct pusher *ps, struct proc *p)
{
	struct pprof_profile *now = read_profile(p->pid), *w;
	struct push_window win;
	char root[64];

	if (!now) {
		p->seen = false; /* gone, or its record refused */
		return;
	}
	/* The inuse values are this read's snapshot, not a difference:
	 * the previous read counts for none of them. */
	for (size_t i = 0; i < p->prev->n_samples; i++)
		for (size_t k = 0; k < p->prev->n_sample_types; k++)
			if (!push_is_alloc_type(p->prev, k))
				p->prev->samples[i].values[k] = 0;
	w = pprof_delta(NULL, p->prev, now);
	memset(&win, 0, sizeof(win));
	win.from_ns = p->prev->time_nanos;
	win.until_ns = now->time_nanos;
	pprof_free(p->prev);
	p->prev = now;
	if (!w) {
		warnf(ps, "process %d: %s; window skipped", (int)p->pid,
		      msg_last());
		return;
	}
	if (ps->cfg->symbolize) {
		snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
		symbols_symbolize(w, root, NULL);
	}
	win.p = w;
	win.pid = p->pid;
	win.service = p->service;
	win.hostname = ps->hostname;
	for (size_t t = 0; t < ps->cfg->n_targets; t++) {
		const struct push_target *tg = &ps->cfg->targets[t];
		struct push_request r;
		int rc;

		if (tg->kind == PUSH_PYROSCOPE)
			rc = push_pyroscope_request(ps->cfg, tg, &win, &r);
		else if (tg->kind == PUSH_PARCA)
			rc = push_parca_request(ps->cfg, tg, &win, &r);
		else
			rc = push_otlp_request(ps->cfg, tg, &win, &r);
		if (rc < 0)
			warnf(ps, "process %d: %s: %s; window skipped",
			      (int)p->pid, kind_names[tg->kind], msg_last());
		else
			enqueue(ps, t, &p->q[t], &r);
	}
	pprof_free(w);
}

/* The processes of this window: the fixed set, or every one found. */
static int discover(struct pusher *ps)
{
	pid_t *pids = NULL;
	ssize_t n;

	if (ps->cfg->pids) {
		pids = malloc((ps->cfg->n_pids + 1) * sizeof(*pids));
		if (!pids)
			return msg_set_errno(ENOMEM, "processes");
		memcpy(pids, ps->cfg->pids, ps->cfg->n_pids * sizeof(*pids));
		n = (ssize_t)ps->cfg->n_pids;
	} else {
		n = allocinfo_live_pids(&pids);
		if (n < 0)
			return -1;
	}
	for (size_t i = 0; i < ps->n_procs; i++)
		ps->procs[i].seen = false;
	for (ssize_t i = 0; i < n; i++) {
		struct proc *p = proc_find(ps, pids[i]);
		uint64_t ticks = 0;

		if (record_start_ticks(pids[i], &ticks) < 0)
			continue;
		if (p && p->start_ticks != ticks) {
			proc_free(ps, p); /* the pid was reused */
			*p = ps->procs[--ps->n_procs];
			p = NULL;
		}
		if (p) {
			p->seen = true;
			proc_window(ps, p);
		} else if (proc_add(ps, pids[i], ticks) < 0 && ps->cfg->pids) {
			warnf(ps, "process %d: %s", (int)pids[i], msg_last());
		}
	}
	free(pids);
	return 0;
}

/* Forget the processes gone, after their last windows were tried. */
static void sweep(struct pusher *ps)
{
	for (size_t i = 0; i < ps->n_procs;) {
		if (ps->procs[i].seen) {
			i++;
			continue;
		}
		proc_free(ps, &ps->procs[i]);
		ps->procs[i] = ps->procs[--ps->n_procs];
	}
}

/* Wait until the monotonic time until_ms, or a signal (true). */
static bool wait_until(struct pusher *ps, int64_t until_ms)
{
	int64_t left = until_ms - clock_mono_ms();
	struct timespec ts;

	if (signalled(ps))
		return true;
	if (left <= 0)
		return false;
	ts.tv_sec = (time_t)(left / 1000);
	ts.tv_nsec = (long)(left % 1000) * 1000000;
	if (sigtimedwait(&ps->sigs, NULL, &ts) > 0)
		ps->stop = true;
	return ps->stop;
}

int push_run(const struct push_config *cfg)
{
	struct pusher ps;
	int64_t next;
	int rc = PALLOC_EXIT_OK;

	memset(&ps, 0, sizeof(ps));
	ps.cfg = cfg;
	sigemptyset(&ps.sigs);
	sigaddset(&ps.sigs, SIGINT);
	sigaddset(&ps.sigs, SIGTERM);
	for (size_t t = 0; t < cfg->n_targets; t++)
		if (cfg->targets[t].kind == PUSH_OTLP &&
		    push_otlp_check() < 0) {
			msg_error("--push otlp: %s", msg_last());
			return PALLOC_EXIT_TROUBLE;
		}
	if (gethostname(ps.hostname, sizeof(ps.hostname) - 1) < 0 ||
	    push_check_service(ps.hostname) < 0)
		snprintf(ps.hostname, sizeof(ps.hostname), "localhost");
	if (http_init(&ps) < 0) {
		msg_error("%s", msg_last());
		http_fini(&ps);
		return PALLOC_EXIT_TROUBLE;
	}
	if (cfg->pids) {
		for (size_t i = 0; i < cfg->n_pids; i++) {
			uint64_t ticks = 0;

			if (record_start_ticks(cfg->pids[i], &ticks) < 0 ||
			    proc_add(&ps, cfg->pids[i], ticks) < 0) {
				msg_error("cannot reach agent of process "
					  "'%d': %s",
					  (int)cfg->pids[i], msg_last());
				rc = PALLOC_EXIT_TROUBLE;
				goto out;
			}
		}
	} else if (discover(&ps) < 0) {
		msg_error("cannot list processes: %s", msg_last());
		rc = PALLOC_EXIT_TROUBLE;
		goto out;
	}
	next = clock_mono_ms() + (int64_t)cfg->every_ms;
	while (!ps.stop) {
		int64_t wake = next;

		for (size_t t = 0; t < cfg->n_targets; t++)
			if (ps.t[t].fails && ps.t[t].next_ms < wake)
				wake = ps.t[t].next_ms;
		if (wait_until(&ps, wake))
			break;
		if (clock_mono_ms() >= next) {
			if (discover(&ps) < 0)
				warnf(&ps, "cannot list processes: %s",
				      msg_last());
			next += (int64_t)cfg->every_ms;
			if (next <= clock_mono_ms()) /* behind: no burst */
				next = clock_mono_ms() + (int64_t)cfg->every_ms;
		}
		for (size_t t = 0; t < cfg->n_targets && !ps.stop; t++)
			flush_target(&ps, t);
		sweep(&ps);
		if (cfg->pids && !ps.n_procs)
			break; /* every process of the set ended */
	}
out:
	for (size_t i = 0; i < ps.n_procs; i++)
		proc_free(&ps, &ps.procs[i]);
	free(ps.procs);
	http_fini(&ps);
	return rc;
}

void push_cli_option(struct push_config *cfg, int which, char *arg)
{
	static const char *const names[] = {"push", "every", "service", "label",
					    "header"};
	const char *name = which >= 0 && which < (int)ARRAY_SIZE(names)
				   ? names[which]
				   : "?";
	uint64_t every;
	int rc = -1;

	cfg->options |= which > 0;
	switch (which) {
	case 0:
		if (cfg->n_targets == PUSH_MAX_TARGETS)
			msg_set("more than %d", PUSH_MAX_TARGETS);
		else
			rc = push_parse_target(arg,
					       &cfg->targets[cfg->n_targets]);
		cfg->n_targets += rc == 0;
		break;
	case 1:
		if (num_parse_u64(arg, false, &every) < 0 || every == 0 ||
		    every > PUSH_MAX_EVERY)
			msg_set("want 1 to %d seconds", PUSH_MAX_EVERY);
		else
			rc = 0, cfg->every_ms = every * 1000;
		break;
	case 2:
		rc = push_check_service(arg);
		cfg->service = arg;
		break;
	case 3:
		if (cfg->n_labels == PUSH_MAX_LABELS)
			msg_set("more than %d", PUSH_MAX_LABELS);
		else
			rc = push_parse_label(
				arg, &cfg->label_keys[cfg->n_labels],
				&cfg->label_values[cfg->n_labels]);
		cfg->n_labels += rc == 0;
		break;
	case 4:
		if (cfg->n_headers == PUSH_MAX_HEADERS)
			msg_set("more than %d", PUSH_MAX_HEADERS);
		else
			rc = push_parse_header(arg);
		if (rc == 0)
			cfg->headers[cfg->n_headers++] = arg;
		break;
	default:
		msg_set("no such option");
	}
	if (rc < 0) {
		char text[256];

		msg_error("invalid --%s '%s': %s", name,
			  msg_escape(arg, text, sizeof(text)), msg_last());
		exit(PALLOC_EXIT_TROUBLE);
	}
}

int push_main(struct push_config *cfg, int argc, char **argv)
{
	pid_t *pids = NULL;
	sigset_t set;
	int rc;

	if (!cfg->n_targets) {
		msg_error("--every, --service, --label and --header need "
			  "--push");
		return PALLOC_EXIT_TROUBLE;
	}
	if (!cfg->every_ms)
		cfg->every_ms = PUSH_DEFAULT_EVERY * 1000;

	if (argc > 0) {
		pids = calloc((size_t)argc, sizeof(*pids));
		if (!pids) {
			msg_error("out of memory");
			return PALLOC_EXIT_TROUBLE;
		}
		for (int i = 0; i < argc; i++)
			pids[i] = cli_pid(argv[i]);
		cfg->pids = pids;
		cfg->n_pids = (size_t)argc;
	}
	/* Blocked: taken by sigtimedwait, and seen pending during a
	 * transfer, which then ends at once. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	rc = push_run(cfg);
	free(pids);
	return rc;
}
