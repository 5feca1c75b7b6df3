/* SPDX-License-Identifier: MIT */
/* palloc-cgroup: the memory a cgroup is charged, its limits and pressure. */
#include "common.h"
#include "cli.h"
#include "cgroup.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>
#include <stdarg.h>
#include <string.h>

#include <getopt.h>
#include <limits.h>
#include <unistd.h>

struct opts {
	struct cli_data d;
	pid_t pid;	 /* 0: the caller (unless dir) */
	const char *dir; /* a cgroup directory instead of a process */
	bool only_table; /* -o, -n or -r: the one-row table */
};

/* The columns of the one-row table (-o, -n, -r). */
enum {
	COL_PATH,
	COL_VERSION,
	COL_DIR,
	COL_USAGE,
	COL_LIMIT,
	COL_HIGH,
	COL_LOW,
	COL_MIN,
	COL_PEAK,
	COL_SWAP,
	COL_SWAP_LIMIT,
	COL_WSET,
	COL_HEADROOM,
	COL_FAILCNT,
	COL_OOM,
	COL_OOM_KILL,
	COL_SOME10,
	COL_FULL10,
};

static const struct table_col cols[] = {
	{"PATH", 0.3, SCOLS_FL_TRUNC, "cgroup path (as in /proc/PID/cgroup)"},
	TABLE_NUMBER("VERSION", "cgroup version, 1 or 2"),
	{"DIR", 0.3, SCOLS_FL_TRUNC, "directory read"},
	TABLE_NUMBER("USAGE", "memory charged (memory.current)"),
	TABLE_NUMBER("LIMIT", "memory.max, or max"),
	TABLE_NUMBER("HIGH", "memory.high (v2)"),
	TABLE_NUMBER("LOW", "memory.low (v2)"),
	TABLE_NUMBER("MIN", "memory.min (v2)"),
	TABLE_NUMBER("PEAK", "memory.peak"),
	TABLE_NUMBER("SWAP", "swap charged"),
	TABLE_NUMBER("SWAP-LIMIT", "memory.swap.max (v2)"),
	TABLE_NUMBER("WSET", "working set: usage - inactive_file"),
	TABLE_NUMBER("HEADROOM", "limit - usage"),
	TABLE_NUMBER("FAILCNT", "times the limit was hit (v1)"),
	TABLE_NUMBER("OOM", "memory.events oom"),
	TABLE_NUMBER("OOM-KILL", "memory.events oom_kill"),
	TABLE_NUMBER("SOME10", "memory pressure, some, 10 s average (%)"),
	TABLE_NUMBER("FULL10", "memory pressure, full, 10 s average (%)"),
};

static const struct table_spec spec = {
	cols,
	ARRAY_SIZE(cols),
	"PATH,USAGE,LIMIT,PEAK,SWAP,WSET,HEADROOM",
};

/* The value in column ID: "-" unknown, "max" unlimited, else a size. */
static int set_value(struct table *t, int id, const struct cgroup_value *v)
{
	if (!v->have)
		return table_set(t, id, "-");
	if (v->unlimited)
		return table_set(t, id, "max");
	return table_size(t, id, v->bytes);
}

static int set_event(struct table *t, int id, const struct cgroup_mem *m,
		     const char *key)
{
	size_t i;

	for (i = 0; i < m->nevents; i++)
		if (strcmp(m->events[i].key, key) == 0)
			return table_setf(
				t, id, "%llu",
				(unsigned long long)m->events[i].value);
	return table_set(t, id, "-");
}

/* The one-row table of the columns chosen with -o. */
static int print_row(FILE *fp, const struct table_opts *to,
		     const struct cgroup_mem *m)
{
	struct table *t = table_new(&spec, to, fp);
	uint64_t ws;

	if (!t || table_row(t) < 0)
		goto fail;
	if (table_set(t, COL_PATH, m->path ? m->path : "-") < 0 ||
	    table_setf(t, COL_VERSION, "%d", m->version) < 0 ||
	    table_set(t, COL_DIR, m->dir) < 0 ||
	    set_value(t, COL_USAGE, &m->usage) < 0 ||
	    set_value(t, COL_LIMIT, &m->limit) < 0 ||
	    set_value(t, COL_HIGH, &m->high) < 0 ||
	    set_value(t, COL_LOW, &m->low) < 0 ||
	    set_value(t, COL_MIN, &m->min) < 0 ||
	    set_value(t, COL_PEAK, &m->peak) < 0 ||
	    set_value(t, COL_SWAP, &m->swap_usage) < 0 ||
	    set_value(t, COL_SWAP_LIMIT, &m->swap_limit) < 0 ||
	    (cgroup_working_set(m, &ws, NULL)
		     ? table_size(t, COL_WSET, ws)
		     : table_set(t, COL_WSET, "-")) < 0 ||
	    (m->limit.have && !m->limit.unlimited && m->usage.have
		     ? table_size(t, COL_HEADROOM,
				  m->limit.bytes > m->usage.bytes
					  ? m->limit.bytes - m->usage.bytes
					  : 0)
		     : table_set(t, COL_HEADROOM, "-")) < 0 ||
	    (m->failcnt.have ? table_setf(t, COL_FAILCNT, "%llu",
					  (unsigned long long)m->failcnt.bytes)
			     : table_set(t, COL_FAILCNT, "-")) < 0 ||
	    set_event(t, COL_OOM, m, "oom") < 0 ||
	    set_event(t, COL_OOM_KILL, m, "oom_kill") < 0)
		goto fail;
	if (m->psi_some.have &&
	    (table_setf(t, COL_SOME10, "%.2f", m->psi_some.avg10) < 0 ||
	     table_setf(t, COL_FULL10, "%.2f", m->psi_full.avg10) < 0))
		goto fail;
	return table_print(t);
fail:
	table_free(t);
	return -1;
}

/* One "field: value" line of the default report. */
static int field(struct table *t, const char *name, const char *fmt, ...)
	PALLOC_PRINTF(3, 4);
static int field(struct table *t, const char *name, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (table_row(t) < 0 || table_set(t, 0, name) < 0 ||
	    table_set(t, 1, buf) < 0)
		return -1;
	return 0;
}

static const char *value_text(char *buf, size_t size,
			      const struct cgroup_value *v, bool bytes)
{
	if (!v->have)
		return "-";
	if (v->unlimited)
		return "max";
	if (bytes) {
		snprintf(buf, size, "%llu", (unsigned long long)v->bytes);
		return buf;
	}
	return cli_human(buf, size, v->bytes);
}

/* A size as the default report prints it (-b: bytes). */
static const char *size_text(char *buf, size_t size, uint64_t v, bool bytes)
{
	struct cgroup_value cv = {.have = true, .bytes = v};

	return value_text(buf, size, &cv, bytes);
}

/*
 * The default report: "field: value" lines, then memory.stat, each a
 * libsmartcols table without headings.
 */
static int print_text(FILE *fp, const struct table_opts *to,
		      const struct cgroup_mem *m)
{
	static const struct table_col kv_cols[] = {
		{"FIELD", 1, 0, ""},
		{"VALUE", 0.5, 0, ""},
	};
	static const struct table_col stat_cols[] = {
		{"KEY", 1, 0, ""},
		{"VALUE", 1, 0, ""},
	};
	static const struct table_spec kv = {kv_cols, 2, "FIELD,VALUE"};
	static const struct table_spec st = {stat_cols, 2, "KEY,VALUE"};
	struct table_opts bare = {.noheadings = true};
	char a[CLI_HUMAN_MAX], b[CLI_HUMAN_MAX], c[CLI_HUMAN_MAX];
	struct table *t = table_new(&kv, &bare, fp);
	bool by = to->bytes;
	uint64_t ws, in;
	size_t i;
	int rc = 0;

	if (!t)
		return -1;
	rc |= field(t, "cgroup:", "%s (v%d)", m->path ? m->path : "-",
		    m->version);
	rc |= field(t, "directory:", "%s", m->dir);
	rc |= field(t, "usage:", "%s", value_text(a, sizeof(a), &m->usage, by));
	rc |= field(t, "limit:", "%s", value_text(a, sizeof(a), &m->limit, by));
	if (m->version == 2)
		rc |= field(t, "high:", "%s",
			    value_text(a, sizeof(a), &m->high, by));
	rc |= field(t, "peak:", "%s", value_text(a, sizeof(a), &m->peak, by));
	rc |= field(t, "swap:", "%s",
		    value_text(a, sizeof(a), &m->swap_usage, by));
	if (cgroup_working_set(m, &ws, &in))
		rc |= field(t,
			    "working set:", "%s (usage %s - inactive_file %s)",
			    size_text(a, sizeof(a), ws, by),
			    size_text(b, sizeof(b), m->usage.bytes, by),
			    size_text(c, sizeof(c), in, by));
	else
		rc |= field(t, "working set:", "-");
	if (m->limit.have && !m->limit.unlimited && m->usage.have)
		rc |= field(t, "headroom:", "%s",
			    size_text(a, sizeof(a),
				      m->limit.bytes > m->usage.bytes
					      ? m->limit.bytes - m->usage.bytes
					      : 0,
				      by));
	if (m->failcnt.have)
		rc |= field(t, "failcnt:", "%llu",
			    (unsigned long long)m->failcnt.bytes);
	if (m->nevents) {
		char ev[512];
		size_t n = 0;

		ev[0] = 0;
		for (i = 0; i < m->nevents && n < sizeof(ev); i++)
			n += (size_t)snprintf(
				ev + n, sizeof(ev) - n, "%s%s %llu",
				i ? " " : "", m->events[i].key,
				(unsigned long long)m->events[i].value);
		rc |= field(t, "events:", "%s", ev);
	}
	if (m->psi_some.have)
		rc |= field(
			t, "pressure:",
			"some %.2f%% %.2f%% %.2f%%, full %.2f%% %.2f%% %.2f%% (10s 60s 300s)",
			m->psi_some.avg10, m->psi_some.avg60,
			m->psi_some.avg300, m->psi_full.avg10,
			m->psi_full.avg60, m->psi_full.avg300);
	if (rc) {
		table_free(t);
		return -1;
	}
	if (table_print(t) < 0)
		return -1;
	if (!m->nstat)
		return 0;
	fprintf(fp, "memory.stat:\n");
	t = table_new(&st, &bare, fp);
	if (!t)
		return -1;
	for (i = 0; i < m->nstat; i++)
		if (table_row(t) < 0 || table_set(t, 0, m->stat[i].key) < 0 ||
		    table_setf(t, 1, "%llu",
			       (unsigned long long)m->stat[i].value) < 0) {
			table_free(t);
			return -1;
		}
	return table_print(t);
}

/* What run_once renders: the options and the cgroup read. */
struct model {
	const struct opts *o;
	const struct cgroup_mem *m;
};

static json_t *model_json(const void *model)
{
	const struct model *v = model;
	json_t *top = json_top_new("palloc-cgroup");

	json_set(top, "time_ns", json_u64(cli_now_ns()));
	json_set(top, "pid",
		 json_i64_or_null(!v->o->dir,
				  v->o->pid ? v->o->pid : (int64_t)getpid()));
	cgroup_json(top, v->m);
	return top;
}

static int model_prom(FILE *fp, const void *model)
{
	return cgroup_prom(fp, ((const struct model *)model)->m);
}

static int model_table(FILE *fp, const void *model)
{
	const struct model *v = model;

	return v->o->only_table ? print_row(fp, &v->o->d.table, v->m)
				: print_text(fp, &v->o->d.table, v->m);
}

/*
 * Read the cgroup and print it to FP. Returns 0, 1 when --watch should
 * stop because the cgroup or process is gone (not FIRST), or 2 after an
 * error message.
 */
static int run_once(void *ctx, bool first, FILE *fp)
{
	static const struct cli_forms forms = {model_json, model_prom,
					       model_table};
	const struct opts *o = ctx;
	struct cgroup_mem m;
	int rc;

	if ((o->dir ? cgroup_read_dir(o->d.root, o->dir, &m)
		    : cgroup_read_pid(o->d.root, o->pid, &m)) < 0)
		return cli_sample_failed(first);
	rc = cli_render(fp, &o->d, &forms, &(struct model){o, &m});
	cgroup_mem_free(&m);
	return rc;
}

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
	      "     --sysroot <dir>      read DIR/proc and DIR/sys instead\n",
	      stdout);
	cli_data_usage(true, NULL);
	table_help(stdout, "Columns", &spec);
	cli_usage_end(26, NULL);
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
	while ((c = cli_data_getopt(&o.d, argc, argv, "p:", longopts, usage)) !=
	       -1)
		if (c == 'p')
			o.pid = cli_pid(optarg);
	cli_pid_or_dir(argc, argv, &o.pid, &o.dir);
	cli_data_check(&o.d);
	cli_table_check(&o.d.table, &spec);
	o.only_table =
		o.d.table.columns || o.d.table.noheadings || o.d.table.raw;

	return cli_data_run(&o.d, run_once, &o);
}
