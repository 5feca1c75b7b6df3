/* SPDX-License-Identifier: MIT */
/* palloc-cgroup: the memory a cgroup is charged, its limits and pressure. */
#include "common.h"
#include "cli.h"
#include "cgroup.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"

#include <getopt.h>
#include <limits.h>
#include <unistd.h>

static PALLOC_NORETURN void usage(void)
{
	fputs("Usage:\n"
	      " palloc-cgroup [options] [<pid>|<cgroup-dir>]\n"
	      "\n"
	      "Show a cgroup's memory: usage, limits, working set, stat,\n"
	      "events and pressure. Default: the caller's cgroup.\n"
	      "\n"
	      "Options:\n"
	      " -p, --pid <pid>          the cgroup of this process\n"
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
	pid_t pid;	 /* 0: the caller (unless dir) */
	const char *dir; /* a cgroup directory instead of a process */
};

static const char *value_text(char *buf, size_t size,
			      const struct cgroup_value *v)
{
	if (!v->have)
		return "-";
	if (v->unlimited)
		return "max";
	return cli_human(buf, size, v->bytes);
}

static void print_text(FILE *fp, const struct cgroup_mem *m)
{
	char a[CLI_HUMAN_MAX], b[CLI_HUMAN_MAX], c[CLI_HUMAN_MAX];
	uint64_t ws, in;
	size_t i;

	fprintf(fp, "cgroup:       %s (v%d)\n", m->path ? m->path : "-",
		m->version);
	fprintf(fp, "directory:    %s\n", m->dir);
	fprintf(fp, "usage:        %s\n", value_text(a, sizeof(a), &m->usage));
	fprintf(fp, "limit:        %s\n", value_text(a, sizeof(a), &m->limit));
	if (m->version == 2)
		fprintf(fp, "high:         %s\n",
			value_text(a, sizeof(a), &m->high));
	fprintf(fp, "peak:         %s\n", value_text(a, sizeof(a), &m->peak));
	fprintf(fp, "swap:         %s\n",
		value_text(a, sizeof(a), &m->swap_usage));
	if (cgroup_working_set(m, &ws, &in))
		fprintf(fp, "working set:  %s (usage %s - inactive_file %s)\n",
			cli_human(a, sizeof(a), ws),
			cli_human(b, sizeof(b), m->usage.bytes),
			cli_human(c, sizeof(c), in));
	else
		fprintf(fp, "working set:  -\n");
	if (m->limit.have && !m->limit.unlimited && m->usage.have)
		fprintf(fp, "headroom:     %s\n",
			cli_human(a, sizeof(a),
				  m->limit.bytes > m->usage.bytes
					  ? m->limit.bytes - m->usage.bytes
					  : 0));
	if (m->failcnt.have)
		fprintf(fp, "failcnt:      %llu\n",
			(unsigned long long)m->failcnt.bytes);
	if (m->nevents) {
		fprintf(fp, "events:      ");
		for (i = 0; i < m->nevents; i++)
			fprintf(fp, " %s %llu", m->events[i].key,
				(unsigned long long)m->events[i].value);
		fputc('\n', fp);
	}
	if (m->psi_some.have)
		fprintf(fp,
			"pressure:     some %.2f%% %.2f%% %.2f%%, full %.2f%% %.2f%% %.2f%% (10s 60s 300s)\n",
			m->psi_some.avg10, m->psi_some.avg60,
			m->psi_some.avg300, m->psi_full.avg10,
			m->psi_full.avg60, m->psi_full.avg300);
	if (m->nstat)
		fprintf(fp, "memory.stat:\n");
	for (i = 0; i < m->nstat; i++)
		fprintf(fp, "  %-28s %llu\n", m->stat[i].key,
			(unsigned long long)m->stat[i].value);
}

/*
 * Read the cgroup and print it to FP. Returns 0, 1 when --watch should
 * stop because the cgroup or process is gone (not FIRST), or 2 after an
 * error message.
 */
static int run_once(void *ctx, bool first, FILE *fp)
{
	const struct opts *o = ctx;
	struct cgroup_mem m;
	int rc = 0;

	if ((o->dir ? cgroup_read_dir(o->d.root, o->dir, &m)
		    : cgroup_read_pid(o->d.root, o->pid, &m)) < 0) {
		if (!first && (errno == ENOENT || errno == ESRCH))
			return CLI_GONE;
		msg_error("%s", msg_last());
		return PALLOC_EXIT_TROUBLE;
	}
	if (o->d.json || o->d.watch_ns) {
		json_t *top = json_top_new("palloc-cgroup");

		json_set(top, "time_ns", json_u64(cli_now_ns()));
		json_set(top, "pid",
			 json_i64_or_null(!o->dir,
					  o->pid ? o->pid : (int64_t)getpid()));
		cgroup_json(top, &m);
		/* A write error is reported by cli_output or at exit. */
		if (json_failed()) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
		} else if (json_print(fp, top,
				      o->d.watch_ns ? JSON_COMPACT
						    : JSON_INDENT(2)) < 0 &&
			   !ferror(fp)) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
		}
		json_decref(top);
	} else if (o->d.prom) {
		if (cgroup_prom(fp, &m) < 0 && !ferror(fp)) {
			msg_error("%s", msg_last());
			rc = PALLOC_EXIT_TROUBLE;
		}
	} else {
		print_text(fp, &m);
	}
	cgroup_mem_free(&m);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		CLI_DATA_LONGOPTS,
		CLI_END_LONGOPTS,
	};
	struct opts o = {0};
	int c;

	msg_init(argv[0]);
	cli_data_init(&o.d);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:" CLI_DATA_SHORTOPTS "hV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.pid = cli_pid(optarg);
			break;
		default:
			if (!cli_data_opt(&o.d, c, optarg))
				cli_default_option(c, argv, longopts, usage);
		}
	}
	cli_pid_or_dir(argc, argv, &o.pid, &o.dir);
	cli_data_check(&o.d);

	if (o.d.watch_ns)
		return cli_watch(run_once, &o, o.d.watch_ns, o.d.count);
	return cli_output(o.d.output, run_once, &o);
}
