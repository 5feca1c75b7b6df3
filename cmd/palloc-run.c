/* SPDX-License-Identifier: MIT */
/* palloc-run: run a program with the heap profiling agent preloaded. */
#include "common.h"
#include "cli.h"
#include "collect.h"
#include "msg_cli.h"
#include "num.h"
#include "pattern.h"
#include "run-attach.h"
#include "run-oom.h"
#include "run-spawn.h"
#include "run-summary.h"
#include "run-watch.h"
#include "runrec.h"
#include "serve.h"
#include "symcache.h"
#include "timeline.h"
#include "unwind.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit codes of wrappers like env(1) and timeout(1): exitcode.h. */

/* How long descendants that outlive the program may take to end. */
#define DESCENDANTS_GRACE_MS 3000

static PALLOC_NORETURN void usage(void)
{
	printf("Usage:\n"
	       " palloc-run [options] [--] <program> [<argument>...]\n"
	       " palloc-run [options] -p <pid>\n"
	       "\n"
	       "Run a program with the palloc agent preloaded, then symbolize the heap profiles\n"
	       "it wrote (pprof format) and print one summary line for each. With -p, attach\n"
	       "to a running process instead, until ^C, SIGTERM or its end.\n"
	       "\n"
	       "Options:\n"
	       " -p, --pid <pid>            attach to this running process (no debugger)\n"
	       " -o, --output <pattern>     profile path; %%p pid, %%e executable, %%n sequence,\n"
	       "                              %%t unix time (default %s)\n"
	       " -r, --sample-rate <bytes>  mean bytes between samples; 1 records every\n"
	       "                              allocation, 0 only counts (default 512k)\n"
	       " -i, --interval <seconds>   also write a profile every <seconds>\n"
	       "     --unwind <method>      fp, dwarf or auto (default auto)\n"
	       "     --max-depth <frames>   frames kept per stack, 1-%d (default 64)\n"
	       "     --no-follow            do not profile child processes\n"
	       "     --peak                 also keep the profile at peak heap use\n"
	       "     --exact                count live and peak bytes exactly (slower)\n"
	       "     --dump-at <percents>   write a profile as the memory cgroup's usage\n"
	       "                              crosses these percents of its limit; 0: never\n"
	       "                              (default 80,90,95)\n"
	       "     --no-symbolize         keep raw addresses in the profiles\n"
	       "     --no-cache             do not use or write the symbol cache\n"
	       "     --http <address>       serve the profiles over HTTP while it runs\n"
	       "     --allow-users <users>  who else may read them there: any, or user\n"
	       "                              names and uids (default: you and root)\n"
	       "     --timeline <file>      write the processes' memory over time to <file>\n"
	       "                              (NDJSON, palloc(7))\n"
	       "     --timeline-period <ms> between its samples, %d-%d (default %d)\n"
	       " -q, --quiet                no summary lines\n",
	       PATTERN_DEFAULT, UNWIND_MAX_FRAMES, TIMELINE_PERIOD_MIN_MS,
	       TIMELINE_PERIOD_MAX_MS, TIMELINE_PERIOD_DEFAULT_MS);
	cli_usage_end(
		28,
		"Exit status is the program's (128+N if a signal N killed it); 125 if palloc-run\n"
		"fails, 126 if the program cannot be run, 127 if it is not found.\n");
}

/*
 * Processes palloc-run reaped itself: the program, and the orphaned
 * descendants it adopted as their subreaper. Their statuses say why one
 * delivered no profile.
 */
struct reaped {
	pid_t pid;
	int status;
};
static struct reaped *reaped;
static size_t n_reaped, cap_reaped;

/* --timeline, or NULL */
static struct timeline *timeline;

static void remember_reaped(pid_t pid, int status)
{
	timeline_reaped(timeline, pid, status);
	if (n_reaped == cap_reaped) {
		size_t cap = cap_reaped ? 2 * cap_reaped : 16;
		struct reaped *n = realloc(reaped, cap * sizeof(*n));

		if (!n)
			return;
		reaped = n;
		cap_reaped = cap;
	}
	reaped[n_reaped++] = (struct reaped){pid, status};
}

/* The status palloc-run reaped pid with (the latest), or -1 (a
 * runrec_status_fn). */
static int reaped_status(void *ctx, pid_t pid)
{
	(void)ctx;
	for (size_t i = n_reaped; i-- > 0;)
		if (reaped[i].pid == pid)
			return reaped[i].status;
	return -1;
}

/* The directory part of an output pattern must exist and be writable. */
static void check_output_dir(const char *abs_pattern, const char *shown)
{
	char *dir, *slash;

	/* -o /dev/null discards (safefile.h): /dev needs no write access */
	if (strcmp(abs_pattern, "/dev/null") == 0)
		return;
	dir = strdup(abs_pattern);
	if (!dir) {
		msg_error("%s", strerror(ENOMEM));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (!strchr(dir, '%') && access(dir, W_OK | X_OK) < 0) {
		msg_error("cannot write profiles to '%s': %s", shown,
			  strerror(errno));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	free(dir);
}

/*
 * --timeline FILE: opened before anything runs (a bad path is one line
 * and 125), its profile events hooked to col. NULL without --timeline.
 */
static struct timeline *open_timeline(const char *path, struct collect *col)
{
	struct timeline *t;

	if (!path)
		return NULL;
	t = timeline_open(path);
	if (!t) {
		msg_error("%s", msg_last());
		collect_free(col);
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	collect_set_hook(col, timeline_profile, t);
	return t;
}

/* Unhook it from col, write its last lines and close it. */
static void finish_timeline(struct collect *col)
{
	if (!timeline)
		return;
	collect_set_hook(col, NULL, NULL);
	timeline_finish(timeline);
	timeline = NULL;
}

/* Start the timeline's thread: its failure is a warning. */
static void start_timeline(const struct timeline_config *tc)
{
	if (timeline && timeline_start(timeline, tc) < 0)
		msg_error_last("warning: no timeline");
}

/* What the command line asks (parse_opts). */
struct opts {
	const char *output, *interval, *unwind, *http, *allow, *dump_at;
	const char *pid_arg, *rate_arg, *depth_arg, *tl_path, *tl_period;
	struct timeline_config tc;
	struct serve_access access;
	bool no_follow, peak, exact, raw, quiet, have_rate, have_depth;
	uint64_t rate, depth;
};

/*
 * The output pattern (-o, else $PALLOC_OUTPUT, else the default) made
 * absolute against the working directory (into cwd and abs_pattern,
 * PATH_MAX bytes each), its directory checked. Returns 0, or prints why
 * and returns 125.
 */
static int output_pattern(struct opts *o, char *cwd, char *abs_pattern)
{
	const char *why = "too long";

	if (!getcwd(cwd, PATH_MAX)) {
		msg_error("cannot get the working directory: %s",
			  strerror(errno));
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (!o->output)
		o->output = getenv("PALLOC_OUTPUT");
	if (!o->output || !*o->output)
		o->output = PATTERN_DEFAULT;
	/* the agent refuses what pattern_invalid() does */
	if (pattern_absolute(abs_pattern, PATH_MAX, o->output, cwd) == 0)
		why = pattern_invalid(abs_pattern);
	if (why) {
		msg_error("invalid output pattern '%s': %s", o->output, why);
		return PALLOC_EXIT_RUN_FAILED;
	}
	check_output_dir(abs_pattern, o->output);
	return 0;
}

/*
 * -p PID: attach (run-attach.h), then symbolize and summarize the
 * profiles as for a program run.
 */
static int attach_main(struct opts *opt, int argc)
{
	struct timeline_config tc = {
		.period_ns = opt->tc.period_ns,
		.percents = {80, 90, 95},
		.n_percents = 3,
		.warn = cli_warn_line,
	};
	struct run_attach_opts o = {
		.pid = (pid_t)strtol(opt->pid_arg, NULL, 10),
		.rate = opt->rate_arg,
		.unwind = opt->unwind,
		.max_depth = opt->depth_arg,
		.quiet = opt->quiet,
	};
	char cwd[PATH_MAX], abs_pattern[PATH_MAX];
	struct collect *col;
	char *agent;
	uint64_t ns = 0;
	sigset_t old;
	int status;

	if (optind < argc)
		msg_usage(PALLOC_EXIT_RUN_FAILED,
			  "-p/--pid and a program to run cannot be given "
			  "together");
	if (opt->no_follow || opt->peak || opt->exact || opt->dump_at ||
	    opt->http)
		msg_usage(PALLOC_EXIT_RUN_FAILED,
			  "%s cannot be used with -p/--pid",
			  "--no-follow, --peak, --exact, --dump-at and --http");
	if (opt->interval && num_parse_seconds(opt->interval, &ns) == 0)
		o.interval_ns = ns;
	agent = run_find_agent();
	if (!agent)
		return PALLOC_EXIT_RUN_FAILED;
	o.agent = agent;
	if (output_pattern(opt, cwd, abs_pattern))
		return PALLOC_EXIT_RUN_FAILED;
	/* Blocked before the remote call: taken by sigtimedwait only, never
	 * delivered mid-call. */
	run_block_forwarded(&old);
	/* Taken by sigtimedwait: not ignored (a script's background job
	 * inherits SIGINT ignored), so that none is dropped. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	col = collect_start(abs_pattern);
	if (!col) {
		msg_error_last("cannot attach to process '%d'", (int)o.pid);
		free(agent);
		return PALLOC_EXIT_RUN_FAILED;
	}
	timeline = open_timeline(opt->tl_path, col);
	o.timeline = timeline;
	tc.pid = o.pid;
	start_timeline(&tc);
	status = run_attach(&o, col);
	finish_timeline(col);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (run_summary(col, cwd, opt->raw, opt->quiet) == 0 && status == 0 &&
	    strcmp(abs_pattern, "/dev/null") != 0)
		msg_warn("no profile of process '%d' was written", (int)o.pid);
	collect_free(col);
	free(agent);
	return status;
}

/* The agent's settings for the program, in its environment. */
static void set_agent_env(const struct opts *o, const char *agent,
			  const char *abs_pattern)
{
	char num[32];

	run_set_preload(agent);
	run_set_env("PALLOC_OUTPUT", abs_pattern);
	if (o->have_rate) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)o->rate);
		run_set_env("PALLOC_SAMPLE_RATE", num);
	}
	if (o->unwind)
		run_set_env("PALLOC_UNWIND", o->unwind);
	if (o->have_depth) {
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)o->depth);
		run_set_env("PALLOC_MAX_DEPTH", num);
	}
	if (o->no_follow)
		run_set_env("PALLOC_FOLLOW_CHILDREN", "0");
	if (o->peak)
		run_set_env("PALLOC_PEAK", "1");
	if (o->exact)
		run_set_env("PALLOC_EXACT", "1");
}

/*
 * Run the program argv[0] (argv: the operands) with the agent preloaded,
 * then symbolize and summarize its processes' profiles. Returns the
 * program's exit status, or palloc-run's own (125, 126, 127).
 */
static int run_program(struct opts *o, char **argv)
{
	char path[PATH_MAX], cwd[PATH_MAX], abs_pattern[PATH_MAX];
	struct timeline_config *tc = &o->tc;
	struct run_oom oom;
	struct timespec killed;
	struct serve *srv = NULL;
	struct collect *col;
	struct runrec *rr;
	int err, status, exec_errno = 0;
	char *agent;
	pid_t pid;

	err = run_resolve_program(argv[0], path, sizeof(path));
	if (err) {
		msg_error("cannot run '%s': %s", argv[0], strerror(err));
		return err == ENOENT ? PALLOC_EXIT_NOT_FOUND
				     : PALLOC_EXIT_CANNOT_RUN;
	}
	run_check_preloadable(argv[0], path);
	agent = run_find_agent();
	if (!agent)
		return PALLOC_EXIT_RUN_FAILED;
	if (strpbrk(agent, ": \t")) {
		msg_error(
			"cannot preload '%s': LD_PRELOAD cannot name a path with a colon or a space",
			agent);
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (output_pattern(o, cwd, abs_pattern))
		return PALLOC_EXIT_RUN_FAILED;
	set_agent_env(o, agent, abs_pattern);

	/*
	 * palloc-run writes every profile from its processes' records
	 * (runrec.h, collect.h), as its own user: those of processes that
	 * drop privileges, chroot or close their fds too; the agents write
	 * none and nothing passes between them and palloc-run but the
	 * record. As a child subreaper it stays the parent of orphaned
	 * descendants, so that it sees them end (run_wait_descendants).
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		msg_warn("cannot become a subreaper: %s", strerror(errno));
	col = collect_start(abs_pattern);
	if (col)
		timeline = open_timeline(o->tl_path, col);
	rr = col ? run_start_records(col, o->interval, o->dump_at, o->peak, tc)
		 : NULL;
	if (!rr) {
		msg_error_last("cannot keep the records of the program's "
			       "processes");
		finish_timeline(col);
		collect_free(col);
		free(agent);
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (o->http)
		srv = run_start_http(o->http, &o->access, o->raw, o->quiet);
	fflush(NULL);
	run_oom_start(&oom);
	pid = run_spawn(path, argv, &exec_errno);
	if (pid < 0) {
		msg_error("cannot run '%s': %s", argv[0], strerror(exec_errno));
		run_oom_report(&oom, NULL, NULL);
		finish_timeline(col);
		serve_stop(srv);
		runrec_free(rr);
		collect_free(col);
		return exec_errno == ENOENT ? PALLOC_EXIT_NOT_FOUND
					    : PALLOC_EXIT_CANNOT_RUN;
	}
	if (srv)
		serve_set_root(srv, pid);
	tc->dir = runrec_dir(rr);
	tc->token = runrec_token(rr);
	tc->pid = pid;
	start_timeline(tc);
	status = run_wait_program(pid, remember_reaped);
	clock_gettime(CLOCK_REALTIME, &killed);
	run_wait_descendants(DESCENDANTS_GRACE_MS, remember_reaped);
	serve_stop(srv);
	/* The exit profiles of the processes that ended (exited, killed). */
	timeline_ending(timeline);
	runrec_finish(rr, reaped_status, NULL, cli_warn_line);

	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		run_oom_check(&oom, pid, col,
			      (int64_t)killed.tv_sec * 1000000000 +
				      killed.tv_nsec);
	if (oom.killed)
		timeline_oom_kill(timeline, pid,
				  (int64_t)killed.tv_sec * 1000000000 +
					  killed.tv_nsec,
				  oom.limit);
	finish_timeline(col);
	/* -o /dev/null: the profiles were thrown away, as asked. */
	if (run_summary(col, cwd, o->raw, o->quiet) == 0 &&
	    strcmp(abs_pattern, "/dev/null") != 0) {
		if (WIFSIGNALED(status))
			msg_warn(
				"'%s' wrote no profile '%s': it was killed by signal %d before the agent could write one",
				argv[0], o->output, WTERMSIG(status));
		else
			msg_warn(
				"'%s' wrote no profile '%s': did it exec a static or setuid program, or clear LD_PRELOAD?",
				argv[0], o->output);
	}
	run_oom_report(&oom, argv[0], cwd);
	runrec_free(rr);
	collect_free(col);
	free(reaped);
	free(agent);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

enum {
	OPT_UNWIND = CLI_OPT_NEXT,
	OPT_MAX_DEPTH,
	OPT_NO_FOLLOW,
	OPT_PEAK,
	OPT_EXACT,
	OPT_DUMP_AT,
	OPT_NO_SYMBOLIZE,
	OPT_NO_CACHE,
	OPT_HTTP,
	OPT_ALLOW_USERS,
	OPT_TIMELINE,
	OPT_TIMELINE_PERIOD,
};

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"sample-rate", required_argument, NULL, 'r'},
	{"interval", required_argument, NULL, 'i'},
	{"unwind", required_argument, NULL, OPT_UNWIND},
	{"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
	{"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
	{"peak", no_argument, NULL, OPT_PEAK},
	{"exact", no_argument, NULL, OPT_EXACT},
	{"dump-at", required_argument, NULL, OPT_DUMP_AT},
	{"no-symbolize", no_argument, NULL, OPT_NO_SYMBOLIZE},
	{"no-cache", no_argument, NULL, OPT_NO_CACHE},
	{"http", required_argument, NULL, OPT_HTTP},
	{"allow-users", required_argument, NULL, OPT_ALLOW_USERS},
	{"timeline", required_argument, NULL, OPT_TIMELINE},
	{"timeline-period", required_argument, NULL, OPT_TIMELINE_PERIOD},
	{"quiet", no_argument, NULL, 'q'},
	{"pid", required_argument, NULL, 'p'},
	CLI_END_LONGOPTS,
};

/* One option c (getopt_long's answer, arg its optarg) into o; exits 125
 * with a usage error on a bad value. */
/* arg, after a usage error (status 2) when it is empty. */
static const char *nonempty(const char *arg, const char *what)
{
	if (!*arg)
		msg_usage(PALLOC_EXIT_RUN_FAILED, "invalid %s ''", what);
	return arg;
}

static void parse_opt(struct opts *o, int c, const char *arg, char **argv)
{
	uint64_t ns, tl_ms;
	pid_t p;

	switch (c) {
	case 'o':
		o->output = arg;
		if (!*arg || strcmp(arg, "-") == 0)
			msg_usage(
				PALLOC_EXIT_RUN_FAILED,
				"invalid output pattern '%s': the program's processes write the profiles to files",
				arg);
		break;
	case 'r':
		if (num_parse_u64(arg, true, &o->rate) < 0)
			msg_usage(PALLOC_EXIT_RUN_FAILED,
				  "invalid sample rate '%s': %s", arg,
				  msg_last());
		o->have_rate = true;
		o->rate_arg = arg;
		break;
	case 'i':
		if (num_parse_seconds(arg, &ns) < 0)
			msg_usage(PALLOC_EXIT_RUN_FAILED,
				  "invalid interval '%s': %s", arg, msg_last());
		/* The agent's minimum (palloc(7)): refused here rather than
		 * raised silently. */
		if (ns && ns < 100000000u)
			msg_usage(
				PALLOC_EXIT_RUN_FAILED,
				"invalid interval '%s': below the minimum of 0.1 seconds",
				arg);
		o->interval = arg;
		break;
	case OPT_UNWIND:
		if (strcmp(arg, "fp") != 0 && strcmp(arg, "dwarf") != 0 &&
		    strcmp(arg, "auto") != 0)
			msg_usage(
				PALLOC_EXIT_RUN_FAILED,
				"invalid unwinder '%s': use fp, dwarf or auto",
				arg);
		o->unwind = arg;
		break;
	case OPT_MAX_DEPTH:
		if (num_parse_u64(arg, false, &o->depth) < 0 || o->depth < 1 ||
		    o->depth > UNWIND_MAX_FRAMES)
			msg_usage(PALLOC_EXIT_RUN_FAILED,
				  "invalid maximum depth '%s': use 1 to %d",
				  arg, UNWIND_MAX_FRAMES);
		o->have_depth = true;
		o->depth_arg = arg;
		break;
	case OPT_NO_FOLLOW:
		o->no_follow = true;
		break;
	case OPT_PEAK:
		o->peak = true;
		break;
	case OPT_EXACT:
		o->exact = true;
		break;
	case OPT_DUMP_AT:
		if (!run_valid_dump_at(arg))
			msg_usage(
				PALLOC_EXIT_RUN_FAILED,
				"invalid --dump-at '%s': use percents from 1 to 100 separated by commas, or 0",
				arg);
		o->dump_at = arg;
		break;
	case OPT_NO_SYMBOLIZE:
		o->raw = true;
		break;
	case OPT_NO_CACHE:
		symcache_disable();
		break;
	case OPT_HTTP:
		o->http = nonempty(arg, "HTTP address");
		break;
	case OPT_ALLOW_USERS:
		if (serve_parse_access(arg, &o->access) < 0)
			msg_usage(PALLOC_EXIT_RUN_FAILED,
				  "invalid --allow-users '%s': %s", arg,
				  msg_last());
		o->allow = arg;
		break;
	case OPT_TIMELINE:
		o->tl_path = nonempty(arg, "timeline file");
		break;
	case OPT_TIMELINE_PERIOD:
		if (num_parse_u64(arg, false, &tl_ms) < 0 ||
		    tl_ms < TIMELINE_PERIOD_MIN_MS ||
		    tl_ms > TIMELINE_PERIOD_MAX_MS)
			msg_usage(
				PALLOC_EXIT_RUN_FAILED,
				"invalid timeline period '%s': use %d to %d milliseconds",
				arg, TIMELINE_PERIOD_MIN_MS,
				TIMELINE_PERIOD_MAX_MS);
		o->tc.period_ns = tl_ms * 1000000;
		o->tl_period = arg;
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'p':
		if (cli_parse_pid(arg, &p) < 0)
			msg_usage(PALLOC_EXIT_RUN_FAILED, "invalid PID '%s'",
				  arg);
		o->pid_arg = arg;
		break;
	case 'h':
		usage();
	case 'V':
		msg_version();
	default:
		cli_bad_option(PALLOC_EXIT_RUN_FAILED, c, argv, longopts);
	}
}

/* The command line into o (optind at the program's name); exits 125 with
 * a usage error. */
static void parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	o->tc.warn = cli_warn_line;
	o->tc.period_ns = (uint64_t)TIMELINE_PERIOD_DEFAULT_MS * 1000000;
	opterr = 0;
	/* "+": options end at the program name, as with env(1). */
	while ((c = getopt_long(argc, argv, "+:o:r:i:p:qhV", longopts, NULL)) !=
	       -1)
		parse_opt(o, c, optarg, argv);
	if (o->allow && !o->http)
		msg_usage(PALLOC_EXIT_RUN_FAILED, "--allow-users needs --http");
	if (o->tl_period && !o->tl_path)
		msg_usage(PALLOC_EXIT_RUN_FAILED,
			  "--timeline-period needs --timeline");
	if (!o->allow)
		memset(&o->access, 0, sizeof(o->access));
	if (o->http && serve_check_addr(o->http, &o->access) < 0)
		msg_usage(PALLOC_EXIT_RUN_FAILED, "cannot serve on '%s': %s",
			  o->http, msg_last());
}

int main(int argc, char **argv)
{
	struct opts o = {0};

	msg_init(argv[0]);
	parse_opts(argc, argv, &o);
	if (o.pid_arg)
		return attach_main(&o, argc);
	if (optind >= argc)
		msg_usage(PALLOC_EXIT_RUN_FAILED, "no program to run");
	return run_program(&o, argv + optind);
}
