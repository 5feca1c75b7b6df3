/* SPDX-License-Identifier: MIT */
/* palloc-run: the records' watcher and the --http server (run-watch.h). */
#include "common.h"
#include "run-watch.h"

#include "cli.h"
#include "msg_cli.h"
#include "num.h"
#include "run-spawn.h"

#include <signal.h>

struct serve *run_start_http(const char *addr,
			     const struct serve_access *access, bool raw,
			     bool quiet)
{
	struct serve_config cfg = {
		.root_pid = -1,
		.follow_descendants = true,
		.symbolize = !raw,
		.access = *access,
		.warn = cli_warn_line,
	};
	struct serve *srv;
	sigset_t old;

	run_block_forwarded(&old);
	srv = serve_start_config(addr, &cfg);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!srv) {
		msg_error_last("cannot serve on '%s'", addr);
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	if (!quiet)
		fprintf(stderr, "%s: serving %s\n", msg_prog(), serve_url(srv));
	return srv;
}

bool run_valid_dump_at(const char *s)
{
	unsigned percents[NUM_PERCENTS_MAX];
	size_t n;

	return num_parse_percents(s, percents, &n) == 0;
}

struct runrec *run_start_records(struct collect *col, const char *interval,
				 const char *dump_at, bool peak,
				 struct timeline_config *tc)
{
	struct runrec_config cfg = {.peak = peak, .warn = cli_warn_line};
	const char *v;
	struct runrec *rr;
	uint64_t ns = 0;

	if (!interval) {
		v = getenv("PALLOC_INTERVAL");
		if (v && num_parse_seconds(v, &ns) == 0)
			interval = v;
		else if (v)
			msg_warn("PALLOC_INTERVAL=%s: %s; no periodic profiles",
				 v, msg_last());
	}
	if (interval && num_parse_seconds(interval, &ns) == 0 && ns &&
	    ns < 100000000u)
		ns = 100000000u;
	cfg.interval_ns = interval ? ns : 0;
	if (!dump_at) {
		v = getenv("PALLOC_DUMP_AT");
		if (v &&
		    num_parse_percents(v, cfg.dump_at, &cfg.n_dump_at) == 0)
			dump_at = v;
		else if (v)
			msg_warn("PALLOC_DUMP_AT=%s: %s; using 80,90,95", v,
				 msg_last());
	}
	if (!dump_at)
		dump_at = "80,90,95";
	if (num_parse_percents(dump_at, cfg.dump_at, &cfg.n_dump_at) < 0)
		cfg.n_dump_at = 0;
	/* the timeline's threshold events: the same percents */
	memcpy(tc->percents, cfg.dump_at, sizeof(tc->percents));
	tc->n_percents = cfg.n_dump_at;
	rr = runrec_start(col, &cfg);
	if (!rr)
		return NULL;
	run_set_env("PALLOC_RECORD_DIR", runrec_dir(rr));
	run_set_env("PALLOC_RUN_TOKEN", runrec_token(rr));
	run_set_env("PALLOC_INTERVAL", "0");
	run_set_env("PALLOC_DUMP_AT", "0");
	if (runrec_watch(rr) < 0)
		msg_error_last(
			"warning: no periodic, peak or pressure profiles");
	return rr;
}
