/* SPDX-License-Identifier: MIT */
/* palloc-run: was the program killed by the OOM killer? (run-oom.h) */
#include "run-oom.h"
#include "cgroup.h"
#include "msg_cli.h"
#include "pprof_comments.h"
#include "report.h"

#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

/*
 * Sources: Documentation/admin-guide/cgroup-v2.rst (memory.events
 * oom_kill: processes of the cgroup killed by any kind of OOM killer,
 * counted hierarchically), cgroup-v1/memory.rst (memory.oom_control's
 * oom_kill, since Linux 4.13; memory.failcnt, how often usage hit the
 * limit: a kill implies the limit was hit, so it stands in for the count
 * on older kernels).
 */
static bool kill_count(const struct cgroup_mem *m, uint64_t *n,
		       const char **src)
{
	for (size_t i = 0; i < m->nevents; i++)
		if (strcmp(m->events[i].key, "oom_kill") == 0) {
			*n = m->events[i].value;
			*src = m->version == 2 ? "memory.events"
					       : "memory.oom_control";
			return true;
		}
	if (m->failcnt.have) {
		*n = m->failcnt.bytes;
		*src = "memory.failcnt";
		return true;
	}
	return false;
}

void run_oom_start(struct run_oom *o)
{
	struct cgroup_mem m;

	memset(o, 0, sizeof(*o));
	if (cgroup_read_pid(NULL, 0, &m) < 0)
		return;
	if (m.dir && kill_count(&m, &o->kills, &o->src)) {
		o->dir = strdup(m.dir);
		o->have = o->dir != NULL;
		if (m.limit.have && !m.limit.unlimited)
			o->limit = m.limit.bytes;
	}
	cgroup_mem_free(&m);
}

/* The profile of pid written last (by its file's modification time). */
static const struct collect_item *last_profile(const struct collect *col,
					       pid_t pid, int64_t killed_ns,
					       struct stat *out)
{
	const struct collect_item *best = NULL;
	const struct collect_item *items;
	size_t n;
	struct stat st;

	items = collect_items(col, &n);
	for (size_t i = 0; i < n; i++) {
		const struct collect_item *it = &items[i];

		if (it->pid != pid)
			continue;
		/* Written from the record after the kill: that one. */
		if (it->written_ns >= killed_ns && it->seq[0] >= '0' &&
		    it->seq[0] <= '9' && stat(it->path, out) == 0)
			return it;
		if (stat(it->path, &st) < 0)
			continue;
		if (!best || st.st_mtim.tv_sec > out->st_mtim.tv_sec ||
		    (st.st_mtim.tv_sec == out->st_mtim.tv_sec &&
		     st.st_mtim.tv_nsec > out->st_mtim.tv_nsec)) {
			best = it;
			*out = st;
		}
	}
	return best;
}

static double mib(uint64_t b)
{
	return (double)b / 1048576.0;
}

void run_oom_check(struct run_oom *o, pid_t pid, const struct collect *col,
		   int64_t killed_ns)
{
	struct cgroup_mem m;
	uint64_t kills = 0;
	const char *src;
	const struct collect_item *it;
	struct pprof_comment_pressure note;
	bool have = false;
	struct pprof_profile *p;
	struct stat st;
	mode_t mode;

	o->pct10 = -1;
	if (!o->have || cgroup_read_dir(NULL, o->dir, &m) < 0)
		return;
	o->killed = kill_count(&m, &kills, &src) && kills > o->kills;
	o->at = m.peak.have ? m.peak.bytes : o->limit;
	cgroup_mem_free(&m);
	if (!o->killed)
		return;
	it = last_profile(col, pid, killed_ns, &st);
	if (!it)
		return;
	o->last = strdup(it->path);
	o->at_kill = it->written_ns >= killed_ns;
	if (o->at_kill)
		return;
	o->age_ns = killed_ns - ((int64_t)st.st_mtim.tv_sec * 1000000000 +
				 st.st_mtim.tv_nsec);
	p = collect_read(it, &mode);
	if (p)
		have = pprof_comment_pressure(p, &note);
	pprof_free(p);
	if (!have)
		return;
	if (note.limit)
		o->limit = note.limit;
	o->pct10 = note.tenths > INT_MAX ? INT_MAX : (int)note.tenths;
	o->age_ns = killed_ns - (note.sec * 1000000000 + note.ms * 1000000);
}

void run_oom_report(struct run_oom *o, const char *program, const char *cwd)
{
	char top[256] = "", when[96], last[PATH_MAX + 160];
	struct pprof_profile *p;
	struct report *r;
	size_t cl = strlen(cwd ? cwd : "");
	const char *path = o->last;

	if (!o->killed || !program)
		goto out;
	p = path ? pprof_read_file(path) : NULL;
	if (p) {
		r = report_by_function(
			p, pprof_sample_type_index(p, "inuse_space"));
		if (r && r->n_rows > 0 && r->rows[0].flat != 0)
			snprintf(top, sizeof(top), "%s", r->rows[0].name);
		report_free(r);
		pprof_free(p);
	}
	if (!path) {
		snprintf(last, sizeof(last), "it wrote no profile before");
	} else {
		if (cl > 1 && strncmp(path, cwd, cl) == 0 && path[cl] == '/')
			path += cl + 1;
		if (o->pct10 >= 0)
			snprintf(when, sizeof(when),
				 "%.2f s before, at %d.%d %% of the limit",
				 (double)o->age_ns / 1e9, o->pct10 / 10,
				 o->pct10 % 10);
		else
			snprintf(when, sizeof(when), "%.2f s before",
				 (double)o->age_ns / 1e9);
		if (o->at_kill)
			snprintf(last, sizeof(last),
				 "its profile at the kill: %s (from its "
				 "record), top inuse: %s",
				 path, top[0] ? top : "none");
		else
			snprintf(last, sizeof(last),
				 "last profile: %s (%s), top inuse: %s", path,
				 when, top[0] ? top : "none");
	}
	if (o->limit)
		fprintf(stderr,
			"%s: %s was killed by the OOM killer at %.1f MiB of a "
			"limit of %.1f MiB; %s\n",
			msg_prog(), program, mib(o->at), mib(o->limit), last);
	else
		fprintf(stderr,
			"%s: %s was killed by the OOM killer (its cgroup's %s "
			"rose); %s\n",
			msg_prog(), program, o->src, last);
out:
	free(o->dir);
	free(o->last);
	o->dir = o->last = NULL;
	o->have = o->killed = false;
}
