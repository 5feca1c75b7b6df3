/* SPDX-License-Identifier: MIT */
/* Read /tmp/perf-PID.map files safely and look addresses up in them. */
#include "perfmap.h"
#include "msg.h"
#include "search.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Entries examined below an address when pieces of code overlap. */
#define OVERLAP_WALK 256

struct pm_entry {
	uint64_t start, end;
	uint64_t max_end; /* highest end of this entry and those before */
	size_t line;	  /* order in the file: a later line wins */
	const char *name; /* into text */
};

struct perfmap {
	char *text; /* the file, each name NUL-terminated in place */
	struct pm_entry *e;
	size_t n;
};

/* A hex number with an optional 0x; false if there is none. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && digits < 17; s++, digits++) {
		char c = *s;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v << 4 | (uint64_t)(c - 'A' + 10);
		else
			break;
	}
	if (!digits || digits > 16)
		return false;
	*p = s;
	*out = v;
	return true;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Parse text (owned by m from now on) into m's entries. */
static int parse_into(struct perfmap *m, char *text, size_t len)
{
	size_t cap = 0, line = 0;
	char *p = text, *end = text + len;
	uint64_t max_end = 0;

	m->text = text;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;
		char *eol = nl ? nl : end;
		uint64_t start = 0, size = 0;
		bool ok;

		line++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		ok = parse_hex(&q, eol, &start) && q < eol && *q == ' ';
		if (ok) {
			q++;
			ok = parse_hex(&q, eol, &size) && q < eol &&
			     *q == ' ' && size && start + size > start;
		}
		if (ok) {
			const char *name = q + 1;

			if (m->n == cap) {
				struct pm_entry *ne;

				cap = cap ? cap * 2 : 256;
				ne = realloc(m->e, cap * sizeof(*ne));
				if (!ne)
					return -1;
				m->e = ne;
			}
			*eol = '\0';
			m->e[m->n++] = (struct pm_entry){
				.start = start,
				.end = start + size,
				.line = line,
				.name = name,
			};
		}
		p = nl ? nl + 1 : end;
	}
	if (m->n)
		qsort(m->e, m->n, sizeof(*m->e), entry_cmp);
	for (size_t i = 0; i < m->n; i++) {
		if (m->e[i].end > max_end)
			max_end = m->e[i].end;
		m->e[i].max_end = max_end;
	}
	return 0;
}

struct perfmap *perfmap_parse(const char *text, size_t len)
{
	struct perfmap *m = calloc(1, sizeof(*m));
	char *copy = malloc(len + 1);

	if (!m || !copy) {
		free(m);
		free(copy);
		return NULL;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (parse_into(m, copy, len) < 0) {
		perfmap_free(m);
		return NULL;
	}
	return m;
}

struct perfmap *perfmap_load(const char *path, const uid_t *uids, size_t n_uids)
{
	struct perfmap *m = NULL;
	struct stat st;
	char *text = NULL;
	size_t len = 0, want;
	bool owner = false;
	int fd, err;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err != ENOENT)
			msg_set_errno(err, "cannot open '%s'", path);
		errno = err;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		msg_set_errno(err, "cannot stat '%s'", path);
		goto fail;
	}
	for (size_t i = 0; i < n_uids; i++)
		owner |= st.st_uid == uids[i];
	if (!S_ISREG(st.st_mode) || !(st.st_uid == 0 || owner)) {
		err = EPERM;
		msg_set("not reading '%s': %s", path,
			S_ISREG(st.st_mode) ? "owned by another user"
					    : "not a regular file");
		goto fail;
	}
	want = (uint64_t)st.st_size > PERFMAP_MAX_BYTES ? PERFMAP_MAX_BYTES
							: (size_t)st.st_size;
	text = malloc(want + 1);
	m = calloc(1, sizeof(*m));
	if (!text || !m) {
		err = ENOMEM;
		msg_set_errno(err, "cannot read '%s'", path);
		goto fail;
	}
	while (len < want) {
		ssize_t n = read(fd, text + len, want - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			msg_set_errno(err, "cannot read '%s'", path);
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* a file cut at the bound (or still being written) ends mid-line:
	 * drop that line */
	while (len > 0 && text[len - 1] != '\n')
		len--;
	text[len] = '\0';
	close(fd);
	if (parse_into(m, text, len) < 0) {
		perfmap_free(m);
		errno = ENOMEM;
		msg_set_errno(ENOMEM, "cannot read '%s'", path);
		return NULL;
	}
	return m;
fail:
	free(text);
	free(m);
	close(fd);
	errno = err;
	return NULL;
}

const char *perfmap_lookup(const struct perfmap *m, uint64_t addr)
{
	size_t lo, hi = m ? m->n : 0;
	const struct pm_entry *best = NULL;

	lo = SEARCH_AFTER(m->e, hi, start, addr);
	for (size_t k = lo, steps = 0;
	     k > 0 && m->e[k - 1].max_end > addr && steps < OVERLAP_WALK;
	     k--, steps++) {
		const struct pm_entry *e = &m->e[k - 1];

		if (addr < e->end && (!best || e->line > best->line))
			best = e;
	}
	return best ? best->name : NULL;
}

size_t perfmap_count(const struct perfmap *m)
{
	return m ? m->n : 0;
}

void perfmap_free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->text);
	free(m->e);
	free(m);
}
