/* SPDX-License-Identifier: MIT */
/* palloc-run: run a program with the heap profiling agent preloaded. */
#include "common.h"
#include "cli.h"
#include "collect.h"
#include "elfcheck.h"
#include "msg_cli.h"
#include "num.h"
#include "pattern.h"
#include "pprof.h"
#include "pprof_comments.h"
#include "report.h"
#include "run-attach.h"
#include "run-oom.h"
#include "runrec.h"
#include "serve.h"
#include "symbols.h"
#include "symcache.h"
#include "timeline.h"
#include "unwind.h"

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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
 * Signal forwarding. palloc-run stays in the program's process group, as
 * env(1) and timeout --foreground do, so signals from the terminal (^C,
 * ^\, hangup) reach the program directly from the kernel; forwarding them
 * too would deliver them twice. The kernel marks those with SI_KERNEL, so
 * they are forwarded only when the program has left our process group.
 * Signals sent with kill(2) (SI_USER, SI_QUEUE: a supervisor, kill(1),
 * systemd) are addressed to palloc-run alone and are forwarded, except
 * those the program sends us itself. Once the program has been reaped,
 * a forwarded signal takes its default action on palloc-run (a second ^C
 * interrupts symbolization; profiles are replaced atomically).
 */
static const int forwarded[] = {SIGINT,	 SIGTERM, SIGHUP,
				SIGQUIT, SIGUSR1, SIGUSR2};
static volatile sig_atomic_t child_pid;

static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
	pid_t pid = child_pid;
	int saved = errno;

	(void)ctx;
	if (pid <= 0) {
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (si->si_code == SI_KERNEL) {
		if (getpgid(pid) != getpgrp())
			kill(pid, sig);
	} else if (si->si_pid != pid) {
		kill(pid, sig);
	}
	errno = saved;
}

static void block_forwarded(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void install_forwarding(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&sa.sa_mask, forwarded[i]);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++) {
		struct sigaction old;

		/* An ignored signal stays ignored, for us and the program. */
		if (sigaction(forwarded[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(forwarded[i], &sa, NULL);
	}
}

/*
 * The agent: $PALLOC_AGENT; else the build tree's copy when palloc-run
 * runs from a build tree (so an older installed agent never shadows the
 * one just built); else the installed one. Returns a malloc'd absolute
 * path, or NULL after printing why.
 */
static char *find_agent(void)
{
	const char *env = getenv("PALLOC_AGENT");
	char exe[PATH_MAX], cand[PATH_MAX + 64], *abs;
	ssize_t n;

	if (env && *env) {
		abs = realpath(env, NULL);
		if (!abs)
			msg_error(
				"cannot use agent '%s' (from PALLOC_AGENT): %s",
				env, strerror(errno));
		return abs;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(cand, sizeof(cand),
				 "%s/../libcore/.libs/libpalloc.so", exe);
			if (access(cand, R_OK) == 0)
				return realpath(cand, NULL);
		}
	}
	snprintf(cand, sizeof(cand), "%s/libpalloc.so", PALLOC_PKGLIBDIR);
	abs = realpath(cand, NULL);
	if (!abs)
		msg_error("cannot find the agent '%s': %s", cand,
			  strerror(errno));
	return abs;
}

/*
 * Resolve name like execvp(3): a name with a slash is used as is, others
 * are searched in $PATH (default: confstr's). Writes the path to out and
 * returns 0, or returns the errno execvp would report: ENOENT, or EACCES
 * when only non-executable candidates were found.
 */
static int resolve_program(const char *name, char *out, size_t out_size)
{
	const char *path = getenv("PATH");
	bool saw_eacces = false;
	int err = ENOENT;

	if (!*name)
		return ENOENT;
	if (strchr(name, '/')) {
		struct stat st;

		if (snprintf(out, out_size, "%s", name) >= (int)out_size)
			return ENAMETOOLONG;
		if (stat(name, &st) < 0)
			return errno;
		if (S_ISDIR(st.st_mode))
			return EISDIR;
		if (access(name, X_OK) < 0)
			return errno;
		return 0;
	}
	if (!path) {
		static char defpath[256];
		size_t len = confstr(_CS_PATH, defpath, sizeof(defpath));

		path = len > 0 && len <= sizeof(defpath) ? defpath
							 : "/bin:/usr/bin";
	}
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int dirlen = (int)(end - p);
		struct stat st;

		/* An empty entry means the working directory. */
		if (snprintf(out, out_size, "%.*s%s%s", dirlen, p,
			     dirlen ? "/" : "", name) < (int)out_size &&
		    stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			saw_eacces = true;
		}
		if (!*end)
			break;
		p = end;
	}
	if (saw_eacces)
		err = EACCES;
	return err;
}

/* Set name=value in the environment, or exit 125 on ENOMEM. */
static void set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0) {
		msg_error("cannot set '%s': %s", name, strerror(errno));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
}

/*
 * Put the agent first in LD_PRELOAD (so its malloc is the one the program
 * calls, and it forwards to a preloaded allocator after it), keeping the
 * user's entries, once.
 */
static void set_preload(const char *agent)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;

	if (old && *old) {
		if (strstr(old, agent))
			return;
		if (asprintf(&val, "%s:%s", agent, old) < 0) {
			msg_error("cannot set 'LD_PRELOAD': %s",
				  strerror(ENOMEM));
			exit(PALLOC_EXIT_RUN_FAILED);
		}
		set_env("LD_PRELOAD", val);
		free(val);
	} else {
		set_env("LD_PRELOAD", agent);
	}
}

/* The path as the user would write it: relative to cwd when inside it. */
static const char *display_path(const char *path, const char *cwd)
{
	size_t n = strlen(cwd);

	if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/*
 * The sum of sample type type over p (through the by-function report, as
 * pprof totals it), and with top non-NULL the leaf function holding the
 * most of it (a malloc'd copy, "" when no sample has a value). Returns 0,
 * or -1 with msg_set() when the type is missing or on ENOMEM.
 */
static int profile_total(const struct pprof_profile *p, const char *type,
			 int64_t *sum, char **top)
{
	int idx = pprof_sample_type_index(p, type);
	struct report *r;

	if (idx < 0)
		return msg_set("no sample type '%s'", type);
	r = report_by_function(p, idx);
	if (!r)
		return -1;
	*sum = r->sum;
	if (top) {
		*top = strdup(r->n_rows > 0 && r->rows[0].flat != 0
				      ? r->rows[0].name
				      : "");
		if (!*top) {
			report_free(r);
			return msg_set_errno(ENOMEM, "cannot summarize");
		}
	}
	report_free(r);
	return 0;
}

/*
 * A run may write many profiles (a build, git, a shell script: one per
 * process). Up to SUMMARY_MAX get a line each; beyond that the lines of
 * the SUMMARY_MAX with the most bytes allocated are printed (in path
 * order, like the others) and one line totals the rest. Every profile is
 * symbolized either way.
 */
#define SUMMARY_MAX 10

/* One profile's summary, kept until all are read. */
struct summary {
	const char *shown; /* the path as shown */
	int64_t alloc_objects, alloc_space, inuse_objects, inuse_space;
	char *top;	  /* function holding the most, "" for none */
	const char *kind; /* "inuse", or "alloc" when little is in use */
	size_t order;	  /* rank in path order */
	/* samples the agent could not record, from the profile's comment */
	uint64_t dropped_count, dropped_bytes;
	bool dropped_bytes_known;
	/* the agent's "warning: " comment (memory it could not see), or
	 * NULL */
	char *warning;
};

/* The agent's count of dropped samples (pprof_comments.h): a comment
 * that does not read so counts as nothing dropped. */
static void find_dropped(const struct pprof_profile *p, struct summary *sm)
{
	struct pprof_comment_samples s;

	if (!pprof_comment_samples(p, &s))
		return;
	sm->dropped_count = s.dropped;
	sm->dropped_bytes = s.dropped_bytes;
	sm->dropped_bytes_known = s.dropped_bytes_known;
}

/*
 * The agent's warning about the profile, a comment "warning: TEXT" (most
 * of the process's memory did not come through malloc, palloc(7)): TEXT,
 * printable, into sm->warning. The profile is outside input: control
 * characters become '?'.
 */
static void find_warning(const struct pprof_profile *p, struct summary *sm)
{
	const char *w = pprof_comment_warning(p);

	if (!w)
		return;
	sm->warning = strdup(w);
	for (char *q = sm->warning; q && *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
}

/*
 * Fill sm from p: totals, and the top function of what matters at the end:
 * inuse when what is still in use is at least a tenth of what was
 * allocated (memory held: a leak, a cache), else alloc (the churn that
 * cost the time; a 0.6 MiB live site beside 73 MiB allocated says little).
 * Returns 0, or -1 with msg_set().
 */
static int summarize(const struct pprof_profile *p, struct summary *sm)
{
	bool held;
	int64_t by_sum;

	if (profile_total(p, "alloc_objects", &sm->alloc_objects, NULL) < 0 ||
	    profile_total(p, "alloc_space", &sm->alloc_space, NULL) < 0 ||
	    profile_total(p, "inuse_objects", &sm->inuse_objects, NULL) < 0 ||
	    profile_total(p, "inuse_space", &sm->inuse_space, NULL) < 0)
		return -1;
	held = sm->inuse_space > 0 && sm->inuse_space >= sm->alloc_space / 10;
	sm->kind = held ? "inuse" : "alloc";
	if (profile_total(p, held ? "inuse_space" : "alloc_space", &by_sum,
			  &sm->top) < 0)
		return -1;
	find_dropped(p, sm);
	find_warning(p, sm);
	return 0;
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/*
 * The function's name as the summary line shows it: a demangled C++ name
 * without its template arguments, parameter list, qualifiers and return
 * type ("void std::vector<int, std::allocator<int> >::_M_realloc_insert<
 * int const&>(...)" is "std::vector::_M_realloc_insert"), so that a line
 * stays one line; C names are unchanged. The profile keeps the full name.
 * Writes into out[size]; returns out, or name when nothing is left.
 */
static const char *short_name(const char *name, char *out, size_t size)
{
	size_t n = 0, start = 0;
	int depth = 0;
	const char *p = name;

	if (!strpbrk(name, "<( "))
		return name;
#define PUT(c)                                                                 \
	do {                                                                   \
		if (n + 1 < size)                                              \
			out[n++] = (c);                                        \
	} while (0)
	while (*p) {
		if (depth == 0 &&
		    strncmp(p, "(anonymous namespace)", 21) == 0) {
			for (int i = 0; i < 21; i++)
				PUT(p[i]);
			p += 21;
			continue;
		}
		if (depth == 0 && strncmp(p, "operator", 8) == 0 &&
		    (p == name || !is_ident(p[-1])) && !is_ident(p[8])) {
			for (int i = 0; i < 8; i++)
				PUT(p[i]);
			p += 8;
			if (*p == ' ') { /* operator new, delete, conversions */
				PUT(*p++);
				while (is_ident(*p))
					PUT(*p++);
			} else if (strncmp(p, "()", 2) == 0) {
				PUT('(');
				PUT(')');
				p += 2;
			} else {
				while (*p && strchr("<>=!+-*/%^&|~,[]", *p))
					PUT(*p++);
			}
			continue;
		}
		if (*p == '<') {
			depth++;
		} else if (*p == '>' && depth > 0) {
			depth--;
		} else if (depth == 0) {
			if (*p == '(' || strncmp(p, " [clone ", 8) == 0)
				break; /* the parameter list: the end */
			if (*p == ' ' && (p[1] == '<' || p[1] == '(')) {
				p++; /* "operator< <T>(...)" */
				continue;
			}
			if (*p == ' ')
				start = n + 1; /* what came before: a type */
			PUT(*p);
		}
		p++;
	}
#undef PUT
	out[n] = '\0';
	return start < n ? out + start : name;
}

/*
 * The end of a summary line when samples were dropped ("" when none):
 * "; 65540 samples dropped, about 4.0 MiB (stack table full or out of
 * memory)". Those samples are in none of the line's totals.
 */
static const char *dropped_text(const struct summary *sm, char *buf, size_t len)
{
	if (sm->dropped_count == 0)
		return "";
	buf[0] = ';';
	buf[1] = ' ';
	report_dropped_text(sm->dropped_count, sm->dropped_bytes,
			    sm->dropped_bytes_known, buf + 2, len - 2);
	return buf;
}

/*
 * "wrote PATH: alloc 1.2 MiB in 345 objects, inuse ..., top inuse: FN",
 * then "; N samples dropped ..." when the agent dropped some.
 */
static void print_summary(const struct summary *sm)
{
	char a[32], b[32], top[256], d[128];

	fprintf(stderr,
		"%s: wrote %s: alloc %s in %lld objects, inuse %s in %lld objects, top %s: %s%s\n",
		msg_prog(), sm->shown,
		cli_human_signed(a, sizeof(a), sm->alloc_space),
		(long long)sm->alloc_objects,
		cli_human_signed(b, sizeof(b), sm->inuse_space),
		(long long)sm->inuse_objects, sm->kind,
		*sm->top ? short_name(sm->top, top, sizeof(top))
			 : "(no samples)",
		dropped_text(sm, d, sizeof(d)));
	if (sm->warning)
		msg_warn("%s: %s", sm->shown, sm->warning);
}

/* A mapping the symbolizer could not use (missing file, other build id). */
static void symbols_warning(void *ctx, const char *msg)
{
	(void)ctx;
	msg_warn("%s", msg);
}

/*
 * Symbolize (unless raw) one profile palloc-run wrote from a record, in
 * place and keeping its mode, and, unless quiet, fill *sm
 * (sm->shown is the caller's). Problems are warnings: the program has
 * run, its status stands. Returns 0 when *sm was filled.
 */
static int process_profile(const struct collect_item *it, struct summary *sm,
			   bool raw, bool quiet)
{
	mode_t mode = 0600;
	struct pprof_profile *p = collect_read(it, &mode);
	int ret = -1;

	if (!p) {
		msg_error_last("warning: cannot read profile '%s'", sm->shown);
		return -1;
	}
	if (!raw) {
		struct symbols_stats stats;

		memset(&stats, 0, sizeof(stats));
		stats.warn = quiet ? NULL : symbols_warning;
		if (symbols_symbolize(p, "", &stats) < 0)
			msg_error_last("warning: cannot symbolize '%s'",
				       sm->shown);
		else if (collect_rewrite(it, p, mode) < 0)
			msg_error_last("warning: cannot write '%s'", sm->shown);
	}
	if (!quiet) {
		ret = summarize(p, sm);
		if (ret < 0) {
			free(sm->top);
			free(sm->warning);
			sm->top = NULL;
			sm->warning = NULL;
			msg_error_last("warning: cannot summarize '%s'",
				       sm->shown);
		}
	}
	pprof_free(p);
	return ret;
}

/* Most bytes allocated first; the earlier path among equals. */
static int by_alloc_desc(const void *a, const void *b)
{
	const struct summary *x = a, *y = b;

	if (x->alloc_space != y->alloc_space)
		return x->alloc_space > y->alloc_space ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b)
{
	const struct summary *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* a + b, or UINT64_MAX when that overflows (counts read from files). */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Print the summaries (see SUMMARY_MAX); sms is reordered. */
static void print_summaries(struct summary *sms, size_t n)
{
	struct summary rest = {.kind = "alloc", .dropped_bytes_known = true};
	size_t shown = n, warned = 0;
	char a[32], b[32], d[128];

	if (n > SUMMARY_MAX) {
		qsort(sms, n, sizeof(*sms), by_alloc_desc);
		shown = SUMMARY_MAX;
		qsort(sms, shown, sizeof(*sms), by_order);
	}
	for (size_t i = 0; i < shown; i++)
		print_summary(&sms[i]);
	if (shown == n)
		return;
	for (size_t i = shown; i < n; i++) {
		rest.alloc_objects += sms[i].alloc_objects;
		rest.alloc_space += sms[i].alloc_space;
		rest.inuse_objects += sms[i].inuse_objects;
		rest.inuse_space += sms[i].inuse_space;
		rest.dropped_count =
			add_sat(rest.dropped_count, sms[i].dropped_count);
		rest.dropped_bytes =
			add_sat(rest.dropped_bytes, sms[i].dropped_bytes);
		/* "about B" only when every profile that dropped said B */
		if (sms[i].dropped_count && !sms[i].dropped_bytes_known)
			rest.dropped_bytes_known = false;
		warned += sms[i].warning != NULL;
	}
	fprintf(stderr,
		"%s: and %zu more profiles with less allocated: alloc %s in %lld objects, inuse %s in %lld objects%s\n",
		msg_prog(), n - shown,
		cli_human_signed(a, sizeof(a), rest.alloc_space),
		(long long)rest.alloc_objects,
		cli_human_signed(b, sizeof(b), rest.inuse_space),
		(long long)rest.inuse_objects,
		dropped_text(&rest, d, sizeof(d)));
	if (warned)
		msg_warn(
			"%zu of those profiles say%s that most of their process's memory did not come through malloc (see their \"warning:\" comments)",
			warned, warned == 1 ? "s" : "");
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

/*
 * Symbolize and summarize every profile palloc-run wrote from its
 * processes' records. Returns how many there were.
 */
static size_t report(struct collect *col, const char *cwd, bool raw, bool quiet)
{
	size_t n, ns = 0;
	const struct collect_item *items = collect_items(col, &n);
	struct summary *sms = calloc(n ? n : 1, sizeof(*sms));

	if (!sms) {
		msg_warn("cannot summarize: %s", strerror(ENOMEM));
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		struct summary sm = {.order = i};

		sm.shown = display_path(items[i].path, cwd);
		if (process_profile(&items[i], &sm, raw, quiet) == 0)
			sms[ns++] = sm;
	}
	print_summaries(sms, ns);
	for (size_t i = 0; i < ns; i++) {
		free(sms[i].top);
		free(sms[i].warning);
	}
	free(sms);
	return n;
}

/*
 * After the program: its descendants still running are palloc-run's
 * children now (subreaper). Reap them as they end, for at most grace_ms,
 * so that profiles written on their way out are collected.
 */
static void wait_descendants(int grace_ms)
{
	struct timespec tick = {0, 20 * 1000 * 1000};
	int waited = 0, status;

	for (;;) {
		pid_t p = waitpid(-1, &status, WNOHANG);

		if (p > 0) {
			remember_reaped(p, status);
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0 || waited >= grace_ms)
			return;
		nanosleep(&tick, NULL);
		waited += 20;
	}
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
 * The agent cannot see the allocations of a program whose own malloc is
 * hidden (elfcheck.h); one that exports malloc gets the agent's warning.
 */
static void warn_hidden_malloc(const char *name, const char *path)
{
	if (elfcheck_hidden_malloc(path))
		msg_warn(
			"'%s' has its own malloc, not exported: its own allocations will not be seen",
			name);
}

/* Refuse with 125 when the loader cannot preload into the program. */
static void check_preloadable(const char *name, const char *path)
{
	struct elfcheck_result r;

	if (elfcheck_program(path, &r) < 0) {
		int e = errno;

		msg_error("cannot run '%s': %s", name, msg_last());
		exit(e == ENOENT ? PALLOC_EXIT_NOT_FOUND
				 : PALLOC_EXIT_CANNOT_RUN);
	}
	if (r.verdict == ELFCHECK_OK) {
		if (r.scripts == 0)
			warn_hidden_malloc(name, r.target);
		return;
	}
	/* What the kernel itself would refuse (ENOEXEC, ELOOP). */
	if (r.verdict == ELFCHECK_BAD_ELF || r.verdict == ELFCHECK_NESTED) {
		msg_error("cannot run '%s': '%s' is %s", name, r.target,
			  elfcheck_reason(r.verdict));
		exit(PALLOC_EXIT_CANNOT_RUN);
	}
	if (r.scripts > 0)
		msg_error("cannot profile '%s': its interpreter '%s' is %s",
			  name, r.target, elfcheck_reason(r.verdict));
	else
		msg_error("cannot profile '%s': %s", name,
			  elfcheck_reason(r.verdict));
	exit(PALLOC_EXIT_RUN_FAILED);
}

/*
 * --http: serve the program's agents over TCP. The server starts before
 * the program, so that a bad or busy address fails before anything runs,
 * with no process to serve until serve_set_root() names the program; its
 * threads block the forwarded signals, which the main thread handles.
 */
static struct serve *start_http(const char *addr,
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

	block_forwarded(&old);
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

/*
 * Fork and exec; the child reports an exec failure's errno through a
 * close-on-exec pipe, so the parent can tell "ran" from "could not run".
 * Returns the child's pid, or -1 with *exec_errno set.
 */
static pid_t spawn(const char *path, char **argv, int *exec_errno)
{
	struct sigaction chld;
	sigset_t old;
	int fds[2];
	pid_t pid;
	ssize_t n;
	int err = 0;

	/*
	 * With SIGCHLD ignored (inherited), the kernel would reap the program
	 * itself and leave nothing to wait for: take the default for us and
	 * give the program back what it inherited.
	 */
	sigaction(SIGCHLD, NULL, &chld);
	signal(SIGCHLD, SIG_DFL);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		msg_error("cannot create a pipe: %s", strerror(errno));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	block_forwarded(&old);
	install_forwarding();
	pid = fork();
	if (pid < 0) {
		msg_error("cannot fork: %s", strerror(errno));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	if (pid == 0) {
		close(fds[0]);
		if (chld.sa_handler == SIG_IGN)
			signal(SIGCHLD, SIG_IGN);
		sigprocmask(SIG_SETMASK, &old, NULL);
		serve_child_limits();
		execv(path, argv);
		err = errno;
		if (err == ENOEXEC) {
			/* execvp(3)'s rule: hand it to the shell. */
			size_t argc = 0;
			char **sh;

			while (argv[argc])
				argc++;
			sh = calloc(argc + 2, sizeof(*sh));
			if (sh) {
				sh[0] = (char *)"sh";
				sh[1] = (char *)path;
				for (size_t i = 1; i <= argc; i++)
					sh[i + 1] = argv[i];
				execv("/bin/sh", sh);
				err = errno;
			}
		}
		if (write(fds[1], &err, sizeof(err)) < 0)
			_exit(PALLOC_EXIT_CANNOT_RUN);
		_exit(err == ENOENT ? PALLOC_EXIT_NOT_FOUND
				    : PALLOC_EXIT_CANNOT_RUN);
	}
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	do {
		n = read(fds[0], &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof(err)) {
		*exec_errno = err;
		return -1;
	}
	return pid;
}

/*
 * Wait for the program without reaping it first (WNOWAIT), so its pid
 * cannot be reused while a signal handler may still kill() it; then reap
 * it with the handlers blocked. Returns the status the wait gave.
 */
static int wait_program(pid_t pid)
{
	siginfo_t si;
	sigset_t old;
	int status = 0;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) == 0) {
			if (si.si_pid == pid)
				break;
			/* an orphan adopted as subreaper: reap it now */
			if (si.si_pid > 0 &&
			    waitpid(si.si_pid, &status, WNOHANG) > 0)
				remember_reaped(si.si_pid, status);
			continue;
		}
		if (errno != EINTR) {
			msg_error("cannot wait for the program: %s",
				  strerror(errno));
			exit(PALLOC_EXIT_RUN_FAILED);
		}
	}
	block_forwarded(&old);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	remember_reaped(pid, status);
	child_pid = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return status;
}

/* "80,90,95": percents from 1 to 100, or "0" (the agent's PALLOC_DUMP_AT,
 * parsed by the same function). */
static bool valid_dump_at(const char *s)
{
	unsigned percents[NUM_PERCENTS_MAX];
	size_t n;

	return num_parse_percents(s, percents, &n) == 0;
}

/*
 * The run's records (runrec.h): the directory and token for the agents,
 * and the watcher writing the interval, peak and pressure profiles from
 * them (interval: -i, else PALLOC_INTERVAL; dump_at: --dump-at, else
 * PALLOC_DUMP_AT, else 80,90,95). The agents write no profile under
 * palloc-run (a token and a record file: agent.c); PALLOC_INTERVAL=0 and
 * PALLOC_DUMP_AT=0 say so to an agent whose record is not a file. NULL
 * with msg_set() when there can be no records (palloc-run then fails).
 */
static struct runrec *start_records(struct collect *col, const char *interval,
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
	set_env("PALLOC_RECORD_DIR", runrec_dir(rr));
	set_env("PALLOC_RUN_TOKEN", runrec_token(rr));
	set_env("PALLOC_INTERVAL", "0");
	set_env("PALLOC_DUMP_AT", "0");
	if (runrec_watch(rr) < 0)
		msg_error_last(
			"warning: no periodic, peak or pressure profiles");
	return rr;
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

/*
 * -p PID: attach (run-attach.h), then symbolize and summarize the
 * profiles as for a program run. bad: the options that do not apply,
 * when one was given.
 */
static int attach_main(const char *pid_arg, int argc, const char *output,
		       const char *rate, const char *unwind, const char *depth,
		       const char *interval, bool raw, bool quiet,
		       const char *bad, const char *tl_path, uint64_t tl_ns)
{
	struct timeline_config tc = {
		.period_ns = tl_ns,
		.percents = {80, 90, 95},
		.n_percents = 3,
		.warn = cli_warn_line,
	};
	struct run_attach_opts o = {
		.pid = (pid_t)strtol(pid_arg, NULL, 10),
		.rate = rate,
		.unwind = unwind,
		.max_depth = depth,
		.quiet = quiet,
	};
	char cwd[PATH_MAX], abs_pattern[PATH_MAX];
	const char *why = "too long";
	struct collect *col;
	char *agent;
	uint64_t ns = 0;
	sigset_t old;
	int status;

	if (optind < argc)
		msg_usage(PALLOC_EXIT_RUN_FAILED,
			  "-p/--pid and a program to run cannot be given "
			  "together");
	if (bad)
		msg_usage(PALLOC_EXIT_RUN_FAILED,
			  "%s cannot be used with -p/--pid", bad);
	if (interval && num_parse_seconds(interval, &ns) == 0)
		o.interval_ns = ns;
	agent = find_agent();
	if (!agent)
		return PALLOC_EXIT_RUN_FAILED;
	o.agent = agent;
	if (!getcwd(cwd, sizeof(cwd))) {
		msg_error("cannot get the working directory: %s",
			  strerror(errno));
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (!output)
		output = getenv("PALLOC_OUTPUT");
	if (!output || !*output)
		output = PATTERN_DEFAULT;
	if (pattern_absolute(abs_pattern, sizeof(abs_pattern), output, cwd) ==
	    0)
		why = pattern_invalid(abs_pattern);
	if (why) {
		msg_error("invalid output pattern '%s': %s", output, why);
		return PALLOC_EXIT_RUN_FAILED;
	}
	check_output_dir(abs_pattern, output);
	/* Blocked before the remote call: taken by sigtimedwait only, never
	 * delivered mid-call. */
	block_forwarded(&old);
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
	timeline = open_timeline(tl_path, col);
	o.timeline = timeline;
	tc.pid = o.pid;
	start_timeline(&tc);
	status = run_attach(&o, col);
	finish_timeline(col);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (report(col, cwd, raw, quiet) == 0 && status == 0 &&
	    strcmp(abs_pattern, "/dev/null") != 0)
		msg_warn("no profile of process '%d' was written", (int)o.pid);
	collect_free(col);
	free(agent);
	return status;
}

enum {
	OPT_UNWIND = CHAR_MAX + 1,
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

int main(int argc, char **argv)
{
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
		{"timeline-period", required_argument, NULL,
		 OPT_TIMELINE_PERIOD},
		{"quiet", no_argument, NULL, 'q'},
		{"pid", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *output = NULL, *interval = NULL, *unwind = NULL;
	const char *http = NULL, *allow = NULL, *dump_at = NULL;
	const char *pid_arg = NULL, *rate_arg = NULL, *depth_arg = NULL;
	const char *tl_path = NULL, *tl_period = NULL;
	struct timeline_config tc = {.warn = cli_warn_line};
	uint64_t tl_ms = TIMELINE_PERIOD_DEFAULT_MS;
	struct run_oom oom;
	struct timespec killed;
	struct serve_access access;
	bool no_follow = false, peak = false, exact = false, raw = false;
	bool quiet = false, have_rate = false, have_depth = false;
	uint64_t rate = 0, depth = 0, ns;
	char path[PATH_MAX], cwd[PATH_MAX], num[32];
	char *agent, abs_pattern[PATH_MAX];
	const char *why;
	struct serve *srv = NULL;
	struct collect *col;
	struct runrec *rr;
	int c, err, status, exec_errno = 0;
	pid_t pid;

	msg_init(argv[0]);
	opterr = 0;
	/* "+": options end at the program name, as with env(1). */
	while ((c = getopt_long(argc, argv, "+:o:r:i:p:qhV", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'o':
			output = optarg;
			if (!*output || strcmp(output, "-") == 0)
				msg_usage(
					PALLOC_EXIT_RUN_FAILED,
					"invalid output pattern '%s': the program's processes write the profiles to files",
					output);
			break;
		case 'r':
			if (num_parse_u64(optarg, true, &rate) < 0)
				msg_usage(PALLOC_EXIT_RUN_FAILED,
					  "invalid sample rate '%s': %s",
					  optarg, msg_last());
			have_rate = true;
			rate_arg = optarg;
			break;
		case 'i':
			if (num_parse_seconds(optarg, &ns) < 0)
				msg_usage(PALLOC_EXIT_RUN_FAILED,
					  "invalid interval '%s': %s", optarg,
					  msg_last());
			/* The agent's minimum (palloc(7)): refused here
			 * rather than raised silently. */
			if (ns && ns < 100000000u)
				msg_usage(
					PALLOC_EXIT_RUN_FAILED,
					"invalid interval '%s': below the minimum of 0.1 seconds",
					optarg);
			interval = optarg;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "fp") != 0 &&
			    strcmp(optarg, "dwarf") != 0 &&
			    strcmp(optarg, "auto") != 0)
				msg_usage(
					PALLOC_EXIT_RUN_FAILED,
					"invalid unwinder '%s': use fp, dwarf or auto",
					optarg);
			unwind = optarg;
			break;
		case OPT_MAX_DEPTH:
			if (num_parse_u64(optarg, false, &depth) < 0 ||
			    depth < 1 || depth > UNWIND_MAX_FRAMES)
				msg_usage(
					PALLOC_EXIT_RUN_FAILED,
					"invalid maximum depth '%s': use 1 to %d",
					optarg, UNWIND_MAX_FRAMES);
			have_depth = true;
			depth_arg = optarg;
			break;
		case OPT_NO_FOLLOW:
			no_follow = true;
			break;
		case OPT_PEAK:
			peak = true;
			break;
		case OPT_EXACT:
			exact = true;
			break;
		case OPT_DUMP_AT:
			if (!valid_dump_at(optarg))
				msg_usage(
					PALLOC_EXIT_RUN_FAILED,
					"invalid --dump-at '%s': use percents from 1 to 100 separated by commas, or 0",
					optarg);
			dump_at = optarg;
			break;
		case OPT_NO_SYMBOLIZE:
			raw = true;
			break;
		case OPT_NO_CACHE:
			symcache_disable();
			break;
		case OPT_HTTP:
			if (!*optarg)
				msg_usage(PALLOC_EXIT_RUN_FAILED,
					  "invalid HTTP address ''");
			http = optarg;
			break;
		case OPT_ALLOW_USERS:
			if (serve_parse_access(optarg, &access) < 0)
				msg_usage(PALLOC_EXIT_RUN_FAILED,
					  "invalid --allow-users '%s': %s",
					  optarg, msg_last());
			allow = optarg;
			break;
		case OPT_TIMELINE:
			if (!*optarg)
				msg_usage(PALLOC_EXIT_RUN_FAILED,
					  "invalid timeline file ''");
			tl_path = optarg;
			break;
		case OPT_TIMELINE_PERIOD:
			if (num_parse_u64(optarg, false, &tl_ms) < 0 ||
			    tl_ms < TIMELINE_PERIOD_MIN_MS ||
			    tl_ms > TIMELINE_PERIOD_MAX_MS)
				msg_usage(
					PALLOC_EXIT_RUN_FAILED,
					"invalid timeline period '%s': use %d to %d milliseconds",
					optarg, TIMELINE_PERIOD_MIN_MS,
					TIMELINE_PERIOD_MAX_MS);
			tl_period = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'p': {
			pid_t p;

			if (cli_parse_pid(optarg, &p) < 0)
				msg_usage(PALLOC_EXIT_RUN_FAILED,
					  "invalid PID '%s'", optarg);
			pid_arg = optarg;
			break;
		}
		case 'h':
			usage();
		case 'V':
			msg_version();
		default:
			cli_bad_option(PALLOC_EXIT_RUN_FAILED, c, argv,
				       longopts);
		}
	}
	if (allow && !http)
		msg_usage(PALLOC_EXIT_RUN_FAILED, "--allow-users needs --http");
	if (tl_period && !tl_path)
		msg_usage(PALLOC_EXIT_RUN_FAILED,
			  "--timeline-period needs --timeline");
	tc.period_ns = tl_ms * 1000000;
	if (!allow)
		memset(&access, 0, sizeof(access));
	if (http && serve_check_addr(http, &access) < 0)
		msg_usage(PALLOC_EXIT_RUN_FAILED, "cannot serve on '%s': %s",
			  http, msg_last());
	if (pid_arg)
		return attach_main(pid_arg, argc, output, rate_arg, unwind,
				   depth_arg, interval, raw, quiet,
				   no_follow || peak || exact || dump_at || http
					   ? "--no-follow, --peak, --exact, "
					     "--dump-at and --http"
					   : NULL,
				   tl_path, tc.period_ns);
	if (optind >= argc)
		msg_usage(PALLOC_EXIT_RUN_FAILED, "no program to run");
	err = resolve_program(argv[optind], path, sizeof(path));
	if (err) {
		msg_error("cannot run '%s': %s", argv[optind], strerror(err));
		return err == ENOENT ? PALLOC_EXIT_NOT_FOUND
				     : PALLOC_EXIT_CANNOT_RUN;
	}
	check_preloadable(argv[optind], path);
	agent = find_agent();
	if (!agent)
		return PALLOC_EXIT_RUN_FAILED;
	if (strpbrk(agent, ": \t")) {
		msg_error(
			"cannot preload '%s': LD_PRELOAD cannot name a path with a colon or a space",
			agent);
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (!getcwd(cwd, sizeof(cwd))) {
		msg_error("cannot get the working directory: %s",
			  strerror(errno));
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (!output)
		output = getenv("PALLOC_OUTPUT");
	if (!output || !*output)
		output = PATTERN_DEFAULT;
	/* the agent refuses what pattern_invalid() does */
	why = "too long";
	if (pattern_absolute(abs_pattern, sizeof(abs_pattern), output, cwd) ==
	    0)
		why = pattern_invalid(abs_pattern);
	if (why) {
		msg_error("invalid output pattern '%s': %s", output, why);
		return PALLOC_EXIT_RUN_FAILED;
	}
	check_output_dir(abs_pattern, output);

	set_preload(agent);
	set_env("PALLOC_OUTPUT", abs_pattern);
	if (have_rate) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)rate);
		set_env("PALLOC_SAMPLE_RATE", num);
	}
	if (unwind)
		set_env("PALLOC_UNWIND", unwind);
	if (have_depth) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)depth);
		set_env("PALLOC_MAX_DEPTH", num);
	}
	if (no_follow)
		set_env("PALLOC_FOLLOW_CHILDREN", "0");
	if (peak)
		set_env("PALLOC_PEAK", "1");
	if (exact)
		set_env("PALLOC_EXACT", "1");

	/*
	 * palloc-run writes every profile from its processes' records
	 * (runrec.h, collect.h), as its own user: those of processes that
	 * drop privileges, chroot or close their fds too; the agents write
	 * none and nothing passes between them and palloc-run but the
	 * record. As a child subreaper it stays the parent of orphaned
	 * descendants, so that it sees them end (wait_descendants).
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		msg_warn("cannot become a subreaper: %s", strerror(errno));
	col = collect_start(abs_pattern);
	if (col)
		timeline = open_timeline(tl_path, col);
	rr = col ? start_records(col, interval, dump_at, peak, &tc) : NULL;
	if (!rr) {
		msg_error_last("cannot keep the records of the program's "
			       "processes");
		finish_timeline(col);
		collect_free(col);
		free(agent);
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (http)
		srv = start_http(http, &access, raw, quiet);
	fflush(NULL);
	run_oom_start(&oom);
	pid = spawn(path, argv + optind, &exec_errno);
	if (pid < 0) {
		msg_error("cannot run '%s': %s", argv[optind],
			  strerror(exec_errno));
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
	tc.dir = runrec_dir(rr);
	tc.token = runrec_token(rr);
	tc.pid = pid;
	start_timeline(&tc);
	status = wait_program(pid);
	clock_gettime(CLOCK_REALTIME, &killed);
	wait_descendants(DESCENDANTS_GRACE_MS);
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
	if (report(col, cwd, raw, quiet) == 0 &&
	    strcmp(abs_pattern, "/dev/null") != 0) {
		if (WIFSIGNALED(status))
			msg_warn(
				"'%s' wrote no profile '%s': it was killed by signal %d before the agent could write one",
				argv[optind], output, WTERMSIG(status));
		else
			msg_warn(
				"'%s' wrote no profile '%s': did it exec a static or setuid program, or clear LD_PRELOAD?",
				argv[optind], output);
	}
	run_oom_report(&oom, argv[optind], cwd);
	runrec_free(rr);
	collect_free(col);
	free(reaped);
	free(agent);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
