/* SPDX-License-Identifier: MIT */
/*
 * palloc-run: what watches the program's processes while it runs, beside
 * it: the watcher of their records (runrec.h) and the --http server.
 * palloc-run's main thread only.
 */
#ifndef PALLOC_RUN_WATCH_H
#define PALLOC_RUN_WATCH_H

#include "common.h"
#include "collect.h"
#include "runrec.h"
#include "serve.h"
#include "timeline.h"

/*
 * --http: serve the program's agents over TCP. The server starts before
 * the program, so that a bad or busy address fails before anything runs,
 * with no process to serve until serve_set_root() names the program; its
 * threads block the forwarded signals, which the main thread handles.
 * Exits 125 when it cannot serve; prints the URL unless quiet.
 */
struct serve *run_start_http(const char *addr,
			     const struct serve_access *access, bool raw,
			     bool quiet);

/* "80,90,95": percents from 1 to 100, or "0" (the agent's PALLOC_DUMP_AT,
 * parsed by the same function). */
bool run_valid_dump_at(const char *s);

/*
 * The run's records (runrec.h): the directory and token for the agents,
 * and the watcher writing the interval, peak and pressure profiles from
 * them (interval: -i, else PALLOC_INTERVAL; dump_at: --dump-at, else
 * PALLOC_DUMP_AT, else 80,90,95). The agents write no profile under
 * palloc-run (a token and a record file: agent.c); PALLOC_INTERVAL=0 and
 * PALLOC_DUMP_AT=0 say so to an agent whose record is not a file. NULL
 * with msg_set() when there can be no records (palloc-run then fails).
 */
struct runrec *run_start_records(struct collect *col, const char *interval,
				 const char *dump_at, bool peak,
				 struct timeline_config *tc);

#endif /* PALLOC_RUN_WATCH_H */
