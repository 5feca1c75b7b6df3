/* SPDX-License-Identifier: MIT */
/* palloc-dump without an operand: the processes under palloc the caller can
 * read, then the records of those that ended, as a table or JSON. */
#include "common.h"

#include <time.h>

#include "allocinfo.h"
#include "cli.h"
#include "dump-list.h"
#include "json.h"
#include "msg_cli.h"
#include "num.h"
#include "table.h"

#include <libsmartcols/libsmartcols.h>

void dump_warn(void *ctx, const char *message)
{
	(void)ctx;
	msg_warn("%s", message);
}

/* "exited 3", "killed", "live": how a listed process is (or ended). */
static void state_text(const struct allocinfo_agent *a, char *buf, size_t n)
{
	if (a->exited)
		snprintf(buf, n, "exited %d", (int)a->exit_status);
	else
		snprintf(buf, n, "%s", a->state);
}

/* "12s", "3m", "5h", "2d": a duration for the table. */
static void ago(double s, char *buf, size_t n)
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, n, "%.0fs", s);
	else if (s < 7200)
		snprintf(buf, n, "%.0fm", s / 60);
	else if (s < 172800)
		snprintf(buf, n, "%.0fh", s / 3600);
	else
		snprintf(buf, n, "%.0fd", s / 86400);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One process of the list as JSON. */
static json_t *list_entry(const struct allocinfo_agent *a)
{
	json_t *e = json_object(), *s = a->stats;
	json_t *up = json_object_get(s, "uptime_seconds");
	bool live = strcmp(a->state, "live") == 0;
	int64_t inuse = allocinfo_int(s, "sampled_inuse_bytes");

	json_set(e, "pid", json_integer(a->pid));
	json_set(e, "program",
		 json_str_or_null(
			 a->program[0] ? a->program
			 : s ? json_string_value(json_object_get(s, "program"))
			     : NULL));
	if (!live && a->start_ns && a->end_ns >= a->start_ns)
		json_set(e, "uptime_seconds",
			 json_real((double)(a->end_ns - a->start_ns) / 1e9));
	else
		json_set(e, "uptime_seconds",
			 json_real_or_null(json_is_number(up),
					   json_number_value(up)));
	json_set(e, "sampled_inuse_bytes",
		 json_i64_or_null(s && inuse >= 0, inuse));
	json_set(e, "error",
		 json_str_or_null(s || !live ? (a->error[0] ? a->error : NULL)
					     : a->error));
	json_set(e, "state", json_string(a->state));
	json_set(e, "exit_status", json_i64_or_null(a->exited, a->exit_status));
	json_set(e, "end_time_ns",
		 json_i64_or_null(!live && a->end_ns > 0, a->end_ns));
	json_set(e, "record", json_str_or_null(a->path[0] ? a->path : NULL));
	return e;
}

/* The columns of the list (no operand). */
enum {
	LCOL_PID,
	LCOL_PROGRAM,
	LCOL_STATE,
	LCOL_UPTIME,
	LCOL_ENDED,
	LCOL_INUSE,
	LCOL_ERROR,
	LCOL_RECORD,
};

static const struct table_col list_cols[] = {
	TABLE_NUMBER("PID", "process ID"),
	{"PROGRAM", 1, SCOLS_FL_TRUNC, "program name"},
	{"STATE", 1, 0, "live, exited N or killed"},
	TABLE_NUMBER("UPTIME", "how long it ran, or runs"),
	TABLE_NUMBER("ENDED", "when it ended"),
	TABLE_NUMBER("SAMPLED_INUSE", "heap in use, sampled, bytes"),
	{"ERROR", 0.2, SCOLS_FL_TRUNC, "why its record cannot be read"},
	{"RECORD", 0.2, SCOLS_FL_TRUNC, "its record file"},
};

const struct table_spec dump_list_spec = {
	list_cols,
	ARRAY_SIZE(list_cols),
	"PID,PROGRAM,STATE,UPTIME,ENDED,SAMPLED_INUSE,ERROR",
};

/* What list_row reads: the agents and the time now. */
struct list_ctx {
	const struct allocinfo_agent *a;
	double now; /* seconds since the epoch */
};

/* Row I of the list: agent I of CTX (struct list_ctx). */
static int list_row(struct table *t, size_t i, void *ctx)
{
	const struct list_ctx *lc = ctx;
	const struct allocinfo_agent *a = &lc->a[i];
	double now = lc->now;
	const json_t *s = a->stats;
	char uptime[32] = "-", ended[32] = "-", state[32];
	bool live = strcmp(a->state, "live") == 0;
	int64_t inuse = allocinfo_int(s, "sampled_inuse_bytes");

	state_text(a, state, sizeof(state));
	if (live && s)
		ago(json_number_value(json_object_get(s, "uptime_seconds")),
		    uptime, sizeof(uptime));
	else if (!live && a->start_ns && a->end_ns >= a->start_ns)
		ago((double)(a->end_ns - a->start_ns) / 1e9, uptime,
		    sizeof(uptime));
	if (!live && a->end_ns > 0) {
		ago(now - (double)a->end_ns / 1e9, ended, sizeof(ended));
		snprintf(ended + strlen(ended), sizeof(ended) - strlen(ended),
			 " ago");
	}
	/* what a process says is escaped by libsmartcols: it may be
	 * anyone's */
	if (table_setf(t, LCOL_PID, "%d", (int)a->pid) < 0 ||
	    table_set(t, LCOL_PROGRAM, a->program[0] ? a->program : "?") < 0 ||
	    table_set(t, LCOL_STATE, state) < 0 ||
	    table_set(t, LCOL_UPTIME, uptime) < 0 ||
	    table_set(t, LCOL_ENDED, ended) < 0 ||
	    (inuse >= 0 ? table_setf(t, LCOL_INUSE, "%lld", (long long)inuse)
			: table_set(t, LCOL_INUSE, "-")) < 0 ||
	    table_set(t, LCOL_ERROR, a->error) < 0 ||
	    table_set(t, LCOL_RECORD, a->path[0] ? a->path : "-") < 0)
		return -1;
	return 0;
}

/* The processes table (or JSON) of palloc-dump without an operand: the
 * live ones, then the records of those that ended. */
int dump_list(const struct table_opts *table, bool json, int timeout_ms)
{
	struct allocinfo_agent *a;
	struct list_ctx lc;
	size_t n;
	int rc = 0;
	double now = now_seconds();

	if (allocinfo_list(&a, &n, timeout_ms, true, dump_warn, NULL) < 0) {
		msg_error_last("cannot list agents");
		return PALLOC_EXIT_TROUBLE;
	}
	if (json) {
		json_t *arr = json_array();
		json_t *top = json_top_new("palloc-dump-list");

		/* palloc-mallinfo's and palloc-smaps's name for the list;
		 * "agents", its first name, stays in format_version 1. */
		json_set(top, "processes", arr);
		json_set(top, "agents", json_incref(arr));
		for (size_t i = 0; i < n; i++)
			json_push(arr, list_entry(&a[i]));
		rc = cli_json_stdout(top, "the list");
		json_decref(top);
		allocinfo_agents_free(a, n);
		return rc;
	}
	lc.a = a;
	lc.now = now;
	rc = cli_table_rows(&dump_list_spec, table, stdout, n, list_row, &lc);
	allocinfo_agents_free(a, n);
	return rc;
}
