/* SPDX-License-Identifier: MIT */
/* palloc-dump --push: heap profiles pushed to Pyroscope, Parca or an OTLP
 * collector, every window, for the processes under palloc. */
#ifndef PALLOC_PUSH_H
#define PALLOC_PUSH_H

#include "common.h"
#include "pprof.h"

#include <sys/types.h>

#define PUSH_MAX_TARGETS 8    /* --push */
#define PUSH_MAX_LABELS 32    /* --label */
#define PUSH_MAX_HEADERS 16   /* --header */
#define PUSH_QUEUE 4	      /* windows kept per process and target */
#define PUSH_DEFAULT_EVERY 15 /* --every, seconds */
#define PUSH_MAX_EVERY 86400  /* --every, seconds */
#define PUSH_NAME_MAX 128     /* service names, label keys and values */

enum push_kind { PUSH_PYROSCOPE, PUSH_PARCA, PUSH_OTLP };

struct push_target {
	enum push_kind kind;
	const char *url; /* as given, without a trailing '/' kept */
};

struct push_config {
	struct push_target targets[PUSH_MAX_TARGETS];
	size_t n_targets;
	uint64_t every_ms;   /* the window */
	const char *service; /* --service, or NULL: each executable's name */
	const char *label_keys[PUSH_MAX_LABELS];
	const char *label_values[PUSH_MAX_LABELS];
	size_t n_labels;
	const char *headers[PUSH_MAX_HEADERS]; /* "Name: value" */
	size_t n_headers;
	const pid_t *pids; /* a fixed set, or NULL: every process found */
	size_t n_pids;
	bool symbolize;
	bool options; /* --every, --service, --label or --header given */
	/* A warning line (the command prints it: cli_warn_line). */
	void (*warn)(const char *line);
};

/*
 * The parsers of the command line: 0, or -1 with msg_set() saying why
 * (one line). push_parse_target: "KIND=URL", KIND pyroscope, parca or
 * otlp, URL http:// or https:// with a host. push_parse_label: "K=V", K
 * a label name every kind accepts ([A-Za-z_][A-Za-z0-9_]*, not "__..."
 * nor one palloc sets: service_name, pid, hostname), V printable, without
 * ',', '{', '}', '=', '"' or surrounding spaces (Pyroscope's name{k=v}
 * grammar cannot carry them). push_parse_header: "Name: value", a token
 * name. push_check_service: Pyroscope's service-name characters
 * ([A-Za-z0-9_./-]). The strings are kept (pointers into arg), not copied.
 */
int push_parse_target(char *arg, struct push_target *t);
int push_parse_label(char *arg, const char **key, const char **value);
int push_parse_header(const char *arg);
int push_check_service(const char *name);

/*
 * Push until SIGINT or SIGTERM (blocked by the caller before any thread:
 * push_run waits for them with sigtimedwait and checks them during every
 * transfer, so that either ends it at once).
 *
 * Every cfg->every_ms, for each process (the fixed set, or every live
 * process with a record the caller can read, found again at each
 * window): the record is read from outside (allocinfo_get_profile), and
 * the window's profile is made of the alloc_* values as the delta since
 * the previous read (pprof_delta) and the inuse_* values as this read's
 * snapshot, symbolized once (the symbolizer keeps its files between
 * windows), encoded once per kind, and queued per target. A process's
 * first read opens its first window; a pid whose start time changed is a
 * new process.
 *
 * A target that fails (no connection, timeout, HTTP 5xx or 429) keeps at
 * most PUSH_QUEUE windows per process (the oldest dropped and counted)
 * and is tried again after a delay doubling from a quarter window up to
 * two windows; cfg->warn says once that it is unreachable and once that
 * it is back (with what was dropped meanwhile). A window the server
 * refuses (another 4xx) is dropped, said once until one is accepted.
 *
 * Returns the exit code: 0 on a signal (or when every process of a fixed
 * set ended), 2 when it could not start (msg_error() said why: the OTLP
 * encoder not built, no curl).
 */
int push_run(const struct push_config *cfg);

/*
 * One option of palloc-dump --push: which is 0 --push, 1 --every, 2
 * --service, 3 --label, 4 --header, arg its value (kept, not copied). A
 * bad one is said in one line ("palloc-dump: invalid --label 'x': why")
 * and exits 2.
 */
void push_cli_option(struct push_config *cfg, int which, char *arg);

/* palloc-dump --push's operands: the pids (cli_pid: a bad one is a
 * usage error), SIGINT and SIGTERM blocked, then push_run(). Without
 * --push (other --push options given): one line, exit 2. */
int push_main(struct push_config *cfg, int argc, char **argv);

/* ---- inside the pusher (push_*.c) ---- */

/* One window of one process, what the encoders read. */
struct push_window {
	struct pprof_profile *p; /* alloc_*: delta; inuse_*: snapshot */
	pid_t pid;
	const char *service;  /* valid for Pyroscope's name */
	const char *hostname; /* gethostname() */
	int64_t from_ns, until_ns;
};

/* A request ready to send. */
struct push_request {
	char *url;	   /* malloc'd */
	const char *ctype; /* Content-Type (static) */
	void *body;	   /* malloc'd */
	size_t len;
	int64_t until_ns;
};

void push_request_free(struct push_request *r);

/*
 * Make the request of kind t->kind for window w into *r: Pyroscope's
 * /ingest (push_pyroscope.c), Parca's /profiles/writeraw (push_parca.c),
 * OTLP's /v1development/profiles (push_otlp.c). 0, or -1 with msg_set().
 * w->p may be modified meanwhile but is given back as it was.
 */
int push_pyroscope_request(const struct push_config *cfg,
			   const struct push_target *t,
			   const struct push_window *w, struct push_request *r);
int push_parca_request(const struct push_config *cfg,
		       const struct push_target *t, const struct push_window *w,
		       struct push_request *r);
int push_otlp_request(const struct push_config *cfg,
		      const struct push_target *t, const struct push_window *w,
		      struct push_request *r);
/* Whether this build's OTLP encoder works: 0, or -1 with msg_set(). */
int push_otlp_check(void);

/* "http://h:1/x" + "/ingest" without a doubled '/': malloc'd, or NULL
 * with msg_set(). */
char *push_url_join(const char *base, const char *path);

/* The sum of sample type k over p's samples. */
int64_t push_total(const struct pprof_profile *p, size_t k);

/* Whether sample type k of p is one of the alloc_* (a delta) ones. */
bool push_is_alloc_type(const struct pprof_profile *p, size_t k);

#endif /* PALLOC_PUSH_H */
