/* SPDX-License-Identifier: MIT */
/* palloc-explain: a process's Rss, or a cgroup's usage, as parts that add up.
 */
#include "common.h"
#include "allocinfo.h"
#include "cli.h"
#include "explain.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"

#include <getopt.h>
#include <limits.h>

static PALLOC_NORETURN void usage(void)
{
	fputs("Usage:\n"
	      " palloc-explain [options] [<pid>|<cgroup-dir>]\n"
	      "\n"
	      "Account for a process's resident memory (smaps_rollup Rss) as\n"
	      "heap in use, allocator overhead and free memory, stacks, other\n"
	      "anonymous memory and files, plus what is unexplained; or for a\n"
	      "cgroup's usage. Default: the caller's cgroup.\n"
	      "\n"
	      "Options:\n"
	      " -p, --pid <pid>          explain this process\n"
	      " -C, --cgroup             the cgroup of <pid> (or of the caller)\n"
	      " -t, --top[=<n>]          allocation sites listed (default 5; 0: none)\n"
	      "     --no-agent           do not ask the process's agent\n"
	      "     --timeout <seconds>  accepted, no effect (nothing waits on the\n"
	      "                            process)\n"
	      " -j, --json               print JSON\n"
	      "     --prom               print Prometheus text format\n"
	      " -w, --watch <seconds>    a JSON line every SECONDS\n"
	      " -c, --count <n>          with --watch: stop after N samples\n"
	      "     --sysroot <dir>      read DIR/proc and DIR/sys instead\n"
	      " -o, --output <file>      write to FILE ('-': standard output)\n",
	      stdout);
	cli_usage_end(26, NULL);
}

struct opts {
	struct cli_data d;
	struct explain_opts e;
	pid_t pid;	 /* the process, or with cgroup its cgroup */
	bool cgroup;	 /* explain a cgroup */
	const char *dir; /* a cgroup directory */
};

/*
 * Explain and print to FP. Returns 0, 1 when --watch should stop (the
 * process or cgroup is gone, not FIRST), or 2 after an error message.
 */
static int run_once(void *ctx, bool first, FILE *fp)
{
	const struct opts *o = ctx;
	json_t *doc = o->cgroup ? explain_cgroup(o->pid, o->dir, &o->e)
				: explain_process(o->pid, &o->e);
	int rc = 0;

	if (!doc) {
		if (!first && (errno == ENOENT || errno == ESRCH))
			return CLI_GONE;
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	/* A write error is reported by cli_output or at exit. */
	if (o->d.json || o->d.watch_ns) {
		if (json_print(fp, doc,
			       o->d.watch_ns ? JSON_COMPACT : JSON_INDENT(2)) <
			    0 &&
		    !ferror(fp)) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
		}
	} else if (o->d.prom) {
		if (explain_prom(fp, doc) < 0 && !ferror(fp)) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
		}
	} else if (explain_print_table(fp, doc) < 0 && fp == stdout) {
		msg_stdout_failed(errno); /* stdio forgets why */
	}
	json_decref(doc);
	return rc;
}

int main(int argc, char **argv)
{
	enum { OPT_NO_AGENT = CLI_OPT_NEXT, OPT_TIMEOUT };
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"cgroup", no_argument, NULL, 'C'},
		{"top", optional_argument, NULL, 't'},
		{"no-agent", no_argument, NULL, OPT_NO_AGENT},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		CLI_DATA_LONGOPTS,
		CLI_END_LONGOPTS,
	};
	struct opts o = {
		.e = {.timeout_ms = ALLOCINFO_TIMEOUT_MS, .top = 5},
	};
	uint64_t top = 5;
	int c;

	msg_init(argv[0]);
	cli_data_init(&o.d);
	opterr = 0;
	/* -n <n>: --top's older spelling, kept for scripts. */
	while ((c = getopt_long(argc, argv, ":p:Ct::n:" CLI_DATA_SHORTOPTS "hV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.pid = cli_pid(optarg);
			break;
		case 'C':
			o.cgroup = true;
			break;
		case 't':
		case 'n':
			cli_top(argc, argv, optarg, true, 1000, &top);
			o.e.top = (size_t)top;
			break;
		case OPT_NO_AGENT:
			o.e.no_agent = true;
			break;
		case OPT_TIMEOUT:
			o.e.timeout_ms = cli_parse_timeout(optarg);
			break;
		default:
			if (!cli_data_opt(&o.d, c, optarg))
				cli_default_option(c, argv, longopts, usage);
		}
	}
	if (cli_pid_or_dir(argc, argv, &o.pid, &o.dir))
		o.cgroup = true;
	cli_data_check(&o.d);
	if (!o.pid)
		o.cgroup = true;
	o.e.root = o.d.root;

	if (o.d.watch_ns)
		return cli_watch(run_once, &o, o.d.watch_ns, o.d.count);
	return cli_output(o.d.output, run_once, &o);
}
