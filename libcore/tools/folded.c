/* SPDX-License-Identifier: MIT */
/* Collapsed stacks ("main;f;g 1234") from a profile, for flame graphs. */
#include "common.h"
#include "folded.h"
#include "msg.h"

struct folded_line {
	char *stack;
	int64_t value;
};

struct strbuf {
	char *p;
	size_t len, cap;
};

static int sb_add(struct strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		char *np;

		while (cap < b->len + n + 1)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np)
			return -1;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* Append a frame name, with ';' and control bytes made harmless. */
static int sb_frame(struct strbuf *b, const char *name)
{
	size_t start;

	if (b->len && sb_add(b, ";", 1) < 0)
		return -1;
	start = b->len;
	if (sb_add(b, name, strlen(name)) < 0)
		return -1;
	for (size_t i = start; i < b->len; i++)
		if (b->p[i] == ';' || (unsigned char)b->p[i] < 0x20 ||
		    b->p[i] == 0x7f)
			b->p[i] = '_';
	return 0;
}

static int sb_location(struct strbuf *b, const struct pprof_profile *p,
		       const struct pprof_location *l)
{
	if (l->n_lines == 0) {
		char name[320];
		const struct pprof_mapping *m =
			l->mapping_id ? &p->mappings[l->mapping_id - 1] : NULL;

		if (m && m->file[0]) {
			const char *base = strrchr(m->file, '/');

			snprintf(name, sizeof(name), "%s+0x%llx",
				 base ? base + 1 : m->file,
				 (unsigned long long)(l->address - m->start +
						      m->offset));
		} else {
			snprintf(name, sizeof(name), "0x%llx",
				 (unsigned long long)l->address);
		}
		return sb_frame(b, name);
	}
	/* lines[] is innermost first; the folded stack reads caller first. */
	for (size_t i = l->n_lines; i-- > 0;) {
		uint64_t fid = l->lines[i].function_id;
		const char *fn = fid ? p->functions[fid - 1].name : "";

		if (sb_frame(b, fn[0] ? fn : "?") < 0)
			return -1;
	}
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack,
		      ((const struct folded_line *)b)->stack);
}

int folded_write(FILE *fp, const struct pprof_profile *p, int sample_index)
{
	struct folded_line *lines;
	size_t n = 0, out = 0;
	int rc = -1;

	if (sample_index < 0 || (size_t)sample_index >= p->n_sample_types)
		return msg_set("sample index %d out of range", sample_index);
	lines = calloc(p->n_samples + 1, sizeof(*lines));
	if (!lines)
		return msg_set_errno(ENOMEM, "folded stacks");
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct pprof_sample *s = &p->samples[i];
		struct strbuf b = {0};

		if (s->values[sample_index] == 0)
			continue;
		/* location_ids[] is leaf first. */
		for (size_t j = s->n_locations; j-- > 0;)
			if (sb_location(&b, p,
					&p->locations[s->location_ids[j] - 1]) <
			    0)
				goto oom;
		if (!b.p && sb_add(&b, "[unknown]", 9) < 0)
			goto oom;
		lines[n].stack = b.p;
		lines[n].value = s->values[sample_index];
		n++;
		continue;
	oom:
		free(b.p);
		msg_set_errno(ENOMEM, "folded stacks");
		goto out;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	/* Merge equal stacks (adjacent after sorting). */
	for (size_t i = 0; i < n; i++) {
		if (out && strcmp(lines[out - 1].stack, lines[i].stack) == 0) {
			lines[out - 1].value += lines[i].value;
			free(lines[i].stack);
			lines[i].stack = NULL;
			continue;
		}
		lines[out++] = lines[i];
		if (out - 1 != i)
			lines[i].stack = NULL;
	}
	n = out;
	for (size_t i = 0; i < n; i++) {
		if (lines[i].value == 0)
			continue;
		if (fprintf(fp, "%s %lld\n", lines[i].stack,
			    (long long)lines[i].value) < 0) {
			msg_set_errno(errno, "write error");
			goto out;
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
	return rc;
}
