/* SPDX-License-Identifier: MIT */
/* The agent's profile comments that the commands read back: writers for
 * the agent (stack buffers, fmt), readers for the commands. */
#include "common.h"
#include "fmt.h"
#include "pprof_comments.h"

#include <limits.h>

#define SAMPLES_HEAD "sampled allocations: "
#define SAMPLES_MID "; dropped samples: "
#define SAMPLES_ABOUT ", about "
#define SAMPLES_BYTES " bytes"
#define PID_HEAD "pid: "
#define PRESSURE_HEAD "memory pressure: cgroup v"
#define PRESSURE_USAGE " usage "
#define PRESSURE_LIMIT " bytes of a limit of "
#define PRESSURE_PCT " bytes ("
#define PRESSURE_THRESHOLD " % of the limit; threshold "
#define PRESSURE_TIME " %) at unix time "
#define PRESSURE_FROM ", from "

int pprof_comment_add_samples(struct pprof_profile *p,
			      const struct pprof_comment_samples *s)
{
	char buf[256];
	struct fmt_buf b;

	fmt_init(&b, buf, sizeof(buf));
	fmt_append(&b,
		   SAMPLES_HEAD "%llu" SAMPLES_MID "%llu" SAMPLES_ABOUT
				"%llu" SAMPLES_BYTES " allocated (stack table "
				"full at %zu stacks, or out of memory)",
		   (unsigned long long)s->sampled,
		   (unsigned long long)s->dropped,
		   (unsigned long long)s->dropped_bytes, s->max_stacks);
	return pprof_add_comment(p, buf);
}

int pprof_comment_add_pid(struct pprof_profile *p, long pid)
{
	char buf[32];
	struct fmt_buf b;

	fmt_init(&b, buf, sizeof(buf));
	fmt_append(&b, PID_HEAD "%ld", pid);
	return pprof_add_comment(p, buf);
}

void pprof_comment_format_pressure(char *buf, size_t cap,
				   const struct pprof_comment_pressure *m)
{
	struct fmt_buf b;

	fmt_init(&b, buf, cap);
	/* The parser's pieces below, with "%%" for "%". */
	fmt_append(&b,
		   PRESSURE_HEAD
		   "%u" PRESSURE_USAGE "%llu" PRESSURE_LIMIT "%llu" PRESSURE_PCT
		   "%llu.%llu %% of the limit; "
		   "threshold %u %%) at unix time %lld.%03lld" PRESSURE_FROM
		   "%s",
		   m->version, (unsigned long long)m->usage,
		   (unsigned long long)m->limit,
		   (unsigned long long)(m->tenths / 10),
		   (unsigned long long)(m->tenths % 10), m->threshold,
		   (long long)m->sec, (long long)m->ms, m->usage_file);
}

/* Does *s start with head? Then move *s past it. */
static bool skip(const char **s, const char *head)
{
	size_t n = strlen(head);

	if (strncmp(*s, head, n) != 0)
		return false;
	*s += n;
	return true;
}

/*
 * Read a decimal number (no sign, no space, at most UINT64_MAX: the
 * writers print any uint64_t) at *s and move *s past it. Returns false,
 * *s unmoved, when there is none or it does not fit.
 */
static bool read_count(const char **s, uint64_t *v)
{
	const char *q = *s;
	uint64_t n = 0;

	for (; *q >= '0' && *q <= '9'; q++) {
		uint64_t d = (uint64_t)(*q - '0');

		if (n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	if (q == *s)
		return false;
	*s = q;
	*v = n;
	return true;
}

bool pprof_comment_samples(const struct pprof_profile *p,
			   struct pprof_comment_samples *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < p->n_comments; i++) {
		const char *c = p->comments[i];

		if (!c || !skip(&c, SAMPLES_HEAD) ||
		    !read_count(&c, &s->sampled) || !skip(&c, SAMPLES_MID) ||
		    !read_count(&c, &s->dropped)) {
			memset(s, 0, sizeof(*s));
			continue;
		}
		s->dropped_bytes_known = skip(&c, SAMPLES_ABOUT) &&
					 read_count(&c, &s->dropped_bytes) &&
					 skip(&c, SAMPLES_BYTES);
		if (!s->dropped_bytes_known)
			s->dropped_bytes = 0;
		return true;
	}
	return false;
}

bool pprof_comment_pressure(const struct pprof_profile *p,
			    struct pprof_comment_pressure *m)
{
	for (size_t i = 0; i < p->n_comments; i++) {
		const char *c = p->comments[i];
		uint64_t v, pct, pct10, thr, sec, ms;

		memset(m, 0, sizeof(*m));
		if (!c || !skip(&c, PRESSURE_HEAD) || !read_count(&c, &v) ||
		    !skip(&c, PRESSURE_USAGE) || !read_count(&c, &m->usage) ||
		    !skip(&c, PRESSURE_LIMIT) || !read_count(&c, &m->limit) ||
		    !skip(&c, PRESSURE_PCT) || !read_count(&c, &pct) ||
		    !skip(&c, ".") || !read_count(&c, &pct10) ||
		    !skip(&c, PRESSURE_THRESHOLD) || !read_count(&c, &thr) ||
		    !skip(&c, PRESSURE_TIME) || !read_count(&c, &sec) ||
		    !skip(&c, ".") || !read_count(&c, &ms))
			continue;
		if (v > UINT_MAX || thr > UINT_MAX || pct > UINT64_MAX / 10 ||
		    pct10 > 9 || sec > INT64_MAX / 1000000000 || ms > 999)
			continue;
		m->version = (unsigned)v;
		m->tenths = pct * 10 + pct10;
		m->threshold = (unsigned)thr;
		m->sec = (int64_t)sec;
		m->ms = (int64_t)ms;
		return true;
	}
	memset(m, 0, sizeof(*m));
	return false;
}

long pprof_comment_pid(const struct pprof_profile *p)
{
	for (size_t i = 0; i < p->n_comments; i++) {
		const char *c = p->comments[i];
		uint64_t pid;

		if (!c || !skip(&c, PID_HEAD))
			continue;
		if (!read_count(&c, &pid) || *c || pid == 0 || pid > LONG_MAX)
			return 0;
		return (long)pid;
	}
	return 0;
}

const char *pprof_comment_warning(const struct pprof_profile *p)
{
	for (size_t i = 0; i < p->n_comments; i++) {
		const char *c = p->comments[i];

		if (c && skip(&c, PPROF_COMMENT_WARNING))
			return c;
	}
	return NULL;
}
