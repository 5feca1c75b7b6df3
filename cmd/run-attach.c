/* SPDX-License-Identifier: MIT */
/* palloc-run -p: profile a running process, then leave it as it was. */
#include "common.h"
#include "run-attach.h"
#include "clock.h"
#include "exitcode.h"
#include "inject.h"
#include "msg_cli.h"
#include "pattern.h"
#include "pprof.h"
#include "record_profile.h"
#include "record_read.h"
#include "runrec.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a safe moment and the calls may take. */
#define INJECT_TIMEOUT_MS 20000
/* How long the agent may take to make its record after palloc_attach(). */
#define RECORD_WAIT_MS 5000

static int64_t now_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The process is still the one attached to (same start time)? */
static bool still_there(pid_t pid, uint64_t ticks)
{
	uint64_t t;

	return kill(pid, 0) == 0 && record_start_ticks(pid, &t) == 0 &&
	       t == ticks;
}

/* An attach's window: the record as it was before (an earlier attach's
 * agent; none at the first) and when it began. */
struct window {
	struct record_image im;
	struct record_view v;
	bool have;
	int64_t start_ns;
};

/* The record of an earlier attach in pid, if any, copied into *w (before
 * the attach: the agent is unhooked, its record still). */
static void window_begin(struct window *w, pid_t pid)
{
	int fd = record_find_live(pid, NULL, 0);

	memset(w, 0, sizeof(*w));
	w->start_ns = now_unix_ns();
	if (fd < 0)
		return;
	w->have = record_load(fd, &w->im, &w->v) == 0;
	close(fd);
}

static void window_end(struct window *w)
{
	if (w->have)
		record_loaded_free(&w->im, &w->v);
}

/*
 * The record open at fd made a profile of the window w (seq: NULL the
 * next number) and written through col; live: the process runs (its
 * maps name JIT code). 0, 1 discarded, or -1 with msg_set().
 */
static int write_profile(struct collect *col, int fd, pid_t pid,
			 const struct window *w, const char *seq, bool live)
{
	struct record_profile_opts o = {0};
	struct record_maps maps = {0};
	struct record_image im;
	struct record_view v;
	struct record_stats st;
	int rc;

	if (record_load(fd, &im, &v) < 0)
		return -1;
	record_stats(&v, &st);
	o.time_nanos = live		  ? now_unix_ns()
		       : v.h->end_unix_ns ? v.h->end_unix_ns
					  : v.h->update_unix_ns;
	if (w->have) {
		o.base = &w->v;
		o.window_start_unix_ns = w->start_ns;
		if (o.time_nanos > w->start_ns)
			o.duration_nanos = o.time_nanos - w->start_ns;
	} else if (v.h->start_unix_ns > 0 &&
		   o.time_nanos > v.h->start_unix_ns) {
		o.duration_nanos = o.time_nanos - v.h->start_unix_ns;
	}
	if (live)
		record_maps_use(pid, &maps, &o);
	rc = runrec_collect(col, &v, &o, &st, pid, st.uid, seq, NULL);
	record_maps_free(&maps);
	record_loaded_free(&im, &v);
	return rc;
}

/* The agent's record of pid carrying token: its path (as this process
 * sees it: maybe another file, the process in another mount namespace)
 * into path[cap]. Its descriptor, or -1 with msg_set(). */
static int find_record(pid_t pid, const uint8_t token[16], char *path,
		       size_t cap)
{
	struct record_header h;
	int fd = record_find_live(pid, path, cap);
	bool ok;

	if (fd < 0)
		return -1;
	ok = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	     memcmp(h.magic, RECORD_MAGIC, sizeof(h.magic)) == 0 &&
	     memcmp(h.token, token, 16) == 0;
	if (!ok) {
		close(fd);
		return msg_set("record '%s' is not this attach's", path);
	}
	return fd;
}

/* Remove the record at path, if it is still the file open at fd. */
static void remove_record(const char *path, int fd)
{
	struct stat a, b;

	if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && S_ISREG(b.st_mode) &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		unlink(path);
}

/* The rate of the agent an earlier attach loaded into pid (its record's
 * header), or 0 when unknown. */
static uint64_t loaded_rate(pid_t pid)
{
	struct record_header h;
	char path[PATH_MAX];
	int fd = record_find_live(pid, path, sizeof(path));
	bool ok;

	if (fd < 0)
		return 0;
	ok = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	     memcmp(h.magic, RECORD_MAGIC, sizeof(h.magic)) == 0;
	close(fd);
	return ok ? h.rate : 0;
}

/* Why the agent at rate loaded cannot take rate want (palloc_attach()
 * returned 2): msg_set(). */
static void rate_refused(uint64_t loaded, const char *want)
{
	if (loaded == 1)
		msg_set("the agent an earlier attach loaded samples at rate 1: "
			"-r %s cannot change it (at rate 1 it keeps every "
			"thread's exact counts in whole numbers, set up at its "
			"start)",
			want);
	else
		msg_set("the agent an earlier attach loaded samples at rate "
			"%llu: -r %s cannot change it (each thread's countdown "
			"to its next sample, drawn at rate %llu, cannot be "
			"reset from outside that thread: rate 1 would miss "
			"allocations)",
			(unsigned long long)loaded, want,
			(unsigned long long)loaded);
}

static void warn_line(const char *what)
{
	msg_error_last("warning: %s", what);
}

int run_attach(const struct run_attach_opts *o, struct collect *col)
{
	struct inject_target t;
	uint8_t token[16];
	char hex[33], config[2048], rec[PATH_MAX];
	const char *dir;
	uint64_t ticks = 0;
	struct window win;
	sigset_t stop, old;
	int64_t next_ms, until;
	int ret = 0, status = 0, got = 0, rc, recfd = -1;
	bool gone = false;

	if (inject_check(o->pid, o->agent, &t) < 0) {
		msg_error_last("cannot attach to process '%d'", (int)o->pid);
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (record_start_ticks(o->pid, &ticks) < 0) {
		msg_error_last("cannot attach to process '%d'", (int)o->pid);
		return PALLOC_EXIT_RUN_FAILED;
	}
	if (getrandom(token, sizeof(token), 0) != (ssize_t)sizeof(token)) {
		msg_error("cannot attach to process '%d': no random token: %s",
			  (int)o->pid, strerror(errno));
		return PALLOC_EXIT_RUN_FAILED;
	}
	for (size_t i = 0; i < sizeof(token); i++)
		snprintf(hex + 2 * i, 3, "%02x", token[i]);
	dir = getenv("PALLOC_RECORD_DIR");
	if (dir && (!*dir || strchr(dir, '\n') || strlen(dir) > 1024))
		dir = NULL;
	snprintf(config, sizeof(config),
		 "token=%s\ntracer=%d\n%s%s%s%s%s%s%s%s%s%s%s%s", hex,
		 (int)getpid(), o->rate ? "rate=" : "", o->rate ? o->rate : "",
		 o->rate ? "\n" : "", o->unwind ? "unwind=" : "",
		 o->unwind ? o->unwind : "", o->unwind ? "\n" : "",
		 o->max_depth ? "max_depth=" : "",
		 o->max_depth ? o->max_depth : "", o->max_depth ? "\n" : "",
		 dir ? "dir=" : "", dir ? dir : "", dir ? "\n" : "");
	/* SIGINT, SIGTERM, SIGHUP: waited for, never interrupting a call */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	window_begin(&win, o->pid);
	rc = inject_call(&t, t.agent, RTLD_NOW, "palloc_attach", config,
			 INJECT_TIMEOUT_MS, &ret);
	inject_release(&t); /* loaded (or not): the copy is not needed */
	if (rc < 0 || ret != 0) {
		if (ret == 1)
			msg_set("it runs the palloc agent already (LD_PRELOAD): "
				"use palloc-dump %d",
				(int)o->pid);
		else if (ret == 2)
			rate_refused(loaded_rate(o->pid), o->rate);
		else if (ret != 0)
			msg_set("the agent could not start (its reason is on "
				"the process's standard error)");
		msg_error_last("cannot attach to process '%d'", (int)o->pid);
		window_end(&win);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return PALLOC_EXIT_RUN_FAILED;
	}
	until = clock_mono_ms() + RECORD_WAIT_MS;
	while ((recfd = find_record(o->pid, token, rec, sizeof(rec))) < 0) {
		if (clock_mono_ms() > until || !still_there(o->pid, ticks)) {
			msg_error_last("warning: process '%d' is attached "
				       "but shows no record",
				       (int)o->pid);
			break;
		}
		usleep(10000);
	}
	if (!o->quiet)
		fprintf(stderr,
			"%s: attached to process %d; detach with ^C or "
			"SIGTERM\n",
			msg_prog(), (int)o->pid);
	next_ms = o->interval_ns ? clock_mono_ms() +
					   (int64_t)(o->interval_ns / 1000000)
				 : INT64_MAX;
	for (;;) {
		struct timespec tick = {0, 100000000};

		got = sigtimedwait(&stop, NULL, &tick);
		if (got > 0)
			break;
		if (!still_there(o->pid, ticks)) {
			gone = true;
			break;
		}
		if (recfd >= 0 && clock_mono_ms() >= next_ms) {
			next_ms = clock_mono_ms() +
				  (int64_t)(o->interval_ns / 1000000);
			if (write_profile(col, recfd, o->pid, &win, NULL,
					  true) < 0)
				warn_line("no periodic profile");
		}
	}
	if (!gone) {
		int n = 0;

		if (inject_call(&t, t.agent, RTLD_NOW | RTLD_NOLOAD,
				"palloc_detach", "", INJECT_TIMEOUT_MS,
				&n) < 0) {
			msg_error_last("warning: cannot detach from process "
				       "'%d' (the agent stays hooked)",
				       (int)o->pid);
			status = PALLOC_EXIT_RUN_FAILED;
		}
		gone = !still_there(o->pid, ticks);
	}
	timeline_ending(o->timeline); /* the last profile: "exit" */
	if (recfd >= 0) {
		if (write_profile(col, recfd, o->pid, &win, NULL, !gone) < 0)
			msg_error_last("warning: no profile of process '%d'",
				       (int)o->pid);
		/* an ended process's record is palloc-run's to remove; a
		 * live one stays mapped, for the next attach */
		if (gone)
			remove_record(rec, recfd);
		close(recfd);
	}
	window_end(&win);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return status;
}
