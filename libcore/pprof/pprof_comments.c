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
 * Read a decimal number of at most 19 digits (no sign, no space) at *s
 * and move *s past it. Returns false, *s unmoved, when there is none.
 */
static bool read_count(const char **s, uint64_t *v)
{
	const char *q = *s;
	uint64_t n = 0;

	while (*q >= '0' && *q <= '9' && q - *s < 19)
		n = n * 10 + (uint64_t)(*q++ - '0');
	if (q == *s || (*q >= '0' && *q <= '9'))
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
