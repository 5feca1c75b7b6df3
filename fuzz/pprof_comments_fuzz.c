/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the readers of the agent's profile comments. */
#include "common.h"
#include "pprof.h"
#include "pprof_comments.h"

#include <limits.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SAMPLES_HEAD "sampled allocations: "
#define PRESSURE_HEAD "memory pressure: cgroup v"
#define PID_HEAD "pid: "

static bool starts(const char *s, const char *head)
{
	return strncmp(s, head, strlen(head)) == 0;
}

/* The first comment of p that starts with head, or NULL. */
static const char *first(const struct pprof_profile *p, const char *head)
{
	for (size_t i = 0; i < p->n_comments; i++)
		if (p->comments[i] && starts(p->comments[i], head))
			return p->comments[i];
	return NULL;
}

static struct pprof_profile *new_profile(void)
{
	struct pprof_profile *p = pprof_new(NULL);

	if (!p)
		abort();
	return p;
}

/*
 * Run every reader on p: what one accepts comes from a comment with its
 * head (a warning's text is the rest of its comment), and the samples and
 * pressure comments rewritten by the writers read back the same values.
 */
static void read_all(const struct pprof_profile *p)
{
	struct pprof_comment_samples s, s2;
	struct pprof_comment_pressure m, m2;
	struct pprof_profile *q;
	const char *w = pprof_comment_warning(p), *c;
	char buf[512];
	long pid;

	if (w) {
		c = first(p, PPROF_COMMENT_WARNING);
		if (!c || w != c + strlen(PPROF_COMMENT_WARNING))
			abort();
	} else if (first(p, PPROF_COMMENT_WARNING)) {
		abort();
	}

	pid = pprof_comment_pid(p);
	if (pid < 0 || (pid > 0 && !first(p, PID_HEAD)))
		abort();

	if (pprof_comment_samples(p, &s)) {
		if (!first(p, SAMPLES_HEAD) ||
		    (!s.dropped_bytes_known && s.dropped_bytes))
			abort();
		q = new_profile();
		if (pprof_comment_add_samples(q, &s) != 0 ||
		    !pprof_comment_samples(q, &s2) || s2.sampled != s.sampled ||
		    s2.dropped != s.dropped ||
		    s2.dropped_bytes != s.dropped_bytes ||
		    !s2.dropped_bytes_known)
			abort();
		pprof_free(q);
	} else if (s.sampled || s.dropped || s.dropped_bytes ||
		   s.dropped_bytes_known) {
		abort();
	}

	if (pprof_comment_pressure(p, &m)) {
		if (!first(p, PRESSURE_HEAD) || m.usage_file || m.ms > 999 ||
		    m.ms < 0 || m.sec < 0)
			abort();
		m.usage_file = "/sys/fs/cgroup/memory.current";
		pprof_comment_format_pressure(buf, sizeof(buf), &m);
		q = new_profile();
		if (pprof_add_comment(q, buf) != 0 ||
		    !pprof_comment_pressure(q, &m2) ||
		    m2.version != m.version || m2.usage != m.usage ||
		    m2.limit != m.limit || m2.tenths != m.tenths ||
		    m2.threshold != m.threshold || m2.sec != m.sec ||
		    m2.ms != m.ms)
			abort();
		pprof_free(q);
	}
}

/* Little-endian bytes of data[at, at + 8), zeros past the end. */
static uint64_t u64_at(const uint8_t *data, size_t size, size_t at)
{
	uint64_t v = 0;

	for (size_t i = 8; i-- > 0;)
		v = v << 8 | (at + i < size ? data[at + i] : 0);
	return v;
}

/*
 * What the writers write reads back: the samples comment with any three
 * counts, the pid comment with any positive pid (others read as 0), the
 * pressure comment with any values the reader's types hold.
 */
static void write_read(const uint8_t *data, size_t size)
{
	struct pprof_comment_samples s = {0}, r;
	struct pprof_comment_pressure m = {0}, mr;
	struct pprof_profile *q = new_profile();
	char buf[512];
	long pid;

	s.sampled = u64_at(data, size, 0);
	s.dropped = u64_at(data, size, 8);
	s.dropped_bytes = u64_at(data, size, 16);
	s.max_stacks = (size_t)u64_at(data, size, 24);
	pid = (long)u64_at(data, size, 32);
	m.version = (unsigned)u64_at(data, size, 40);
	m.usage = u64_at(data, size, 44);
	m.limit = u64_at(data, size, 52);
	m.tenths = u64_at(data, size, 60);
	m.threshold = (unsigned)u64_at(data, size, 68);
	m.sec = (int64_t)(u64_at(data, size, 72) % (INT64_MAX / 1000000000));
	m.ms = (int64_t)(u64_at(data, size, 80) % 1000);
	m.usage_file = "memory.current";

	if (pprof_comment_add_samples(q, &s) != 0 ||
	    pprof_comment_add_pid(q, pid) != 0)
		abort();
	pprof_comment_format_pressure(buf, sizeof(buf), &m);
	if (pprof_add_comment(q, buf) != 0)
		abort();
	if (!pprof_comment_samples(q, &r) || r.sampled != s.sampled ||
	    r.dropped != s.dropped || r.dropped_bytes != s.dropped_bytes ||
	    !r.dropped_bytes_known)
		abort();
	if (pprof_comment_pid(q) != (pid > 0 ? pid : 0))
		abort();
	if (!pprof_comment_pressure(q, &mr) || mr.version != m.version ||
	    mr.usage != m.usage || mr.limit != m.limit ||
	    mr.tenths != m.tenths || mr.threshold != m.threshold ||
	    mr.sec != m.sec || mr.ms != m.ms)
		abort();
	read_all(q);
	pprof_free(q);
}

/*
 * The input is read two ways, both cheap: as a profile (gzipped or not),
 * whose comments the readers then read, and as comments, one a line
 * (a NUL ends a comment early, as a C string does). Its first 88 bytes
 * are also the values of a written-then-read round trip.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile *p =
		pprof_decode(data, size, (size_t)16 << 20, NULL);
	char *text, *line, *nl;

	if (p) {
		read_all(p);
		pprof_free(p);
	}

	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	p = new_profile();
	for (line = text; line < text + size; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(text + size - line));
		if (!nl)
			nl = text + size;
		*nl = '\0';
		if (pprof_add_comment(p, line) != 0)
			abort();
	}
	read_all(p);
	pprof_free(p);
	free(text);

	write_read(data, size);
	return 0;
}
