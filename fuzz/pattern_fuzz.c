/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the output pattern's grammar (libcore/pprof/pattern.c). */
#include "common.h"
#include "pattern.h"

#include <fnmatch.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A malloc'd copy of s[0, n) of exactly n + 1 bytes, so that ASan sees a
 * read past the NUL or a write past n. */
static char *dup_exact(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		abort();
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* The reference grammar of a sequence (pattern.h), written differently. */
static bool seq_ref(const char *s)
{
	const char *dig = "0123456789";
	size_t n = strlen(s);

	if (strcmp(s, "peak") == 0)
		return true;
	if (n >= 3 && n <= 5 && strncmp(s, "at", 2) == 0)
		return strspn(s + 2, dig) == n - 2;
	return n >= 1 && n <= 20 && strspn(s, dig) == n;
}

/* Does pattern have a real %n conversion ("%%n" is not one)? */
static bool has_seq(const char *pattern)
{
	for (const char *c = pattern; *c; c++) {
		if (c[0] != '%' || !c[1])
			continue;
		if (c[1] == 'n')
			return true;
		c++;
	}
	return false;
}

/* Is the last thing in pattern[0, len) a conversion other than %n? */
static bool ends_in_conversion(const char *pattern, size_t len)
{
	bool conv = false;

	for (size_t i = 0; i < len; i++) {
		conv = false;
		if (pattern[i] != '%' || i + 1 >= len)
			continue;
		conv = strchr("pet", pattern[++i]) != NULL;
	}
	return conv;
}

/*
 * Does the expansion of pattern for seq match its glob? Always, but for
 * a peak or pressure name (seq "peak", "atN") of a pattern without %n
 * only when a conversion comes before the name's ".seq" (pattern.h).
 */
static bool glob_matches(const char *pattern, const char *seq)
{
	size_t len = strlen(pattern);

	if (has_seq(pattern) ||
	    !(strcmp(seq, "peak") == 0 || strncmp(seq, "at", 2) == 0))
		return true;
	if (len >= 6 && strcmp(pattern + len - 6, ".pb.gz") == 0)
		len -= 6;
	return ends_in_conversion(pattern, len);
}

static size_t count(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/* The sanitized name: within cap and 64 bytes, only [A-Za-z0-9._+-], no
 * leading '.', never empty; each byte the input's or '_'. */
static void check_sanitize(const char *in, size_t n, size_t cap)
{
	char *out = malloc(cap);
	size_t len, lim = cap < 64 ? cap : 64, i;

	if (!out)
		abort();
	pattern_sanitize(out, cap, in, n);
	len = strnlen(out, lim);
	if (len == lim || len == 0 || out[0] == '.')
		abort();
	if (strspn(out, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789._+-") != len)
		abort();
	/* byte i of the name is byte i of the input, or '_' */
	for (i = 0; n && in[0] && i < len; i++)
		if (i >= n || !in[i] || (out[i] != in[i] && out[i] != '_'))
			abort();
	free(out);
}

/*
 * The input: NUL-separated pattern, executable name (raw, sanitized
 * here), sequence, working directory; the bytes after them choose the
 * caps. Properties: pattern_invalid() says why exactly for the empty and
 * the too long; a sanitized name is safe; pattern_seq_valid() is the
 * grammar; pattern_expand() fits iff its full expansion does, is
 * NUL-terminated within cap, and adds no '/' to the pattern's; the glob
 * of a pattern matches its expansion (fnmatch FNM_PATHNAME | FNM_PERIOD)
 * and fits in 2 * strlen + 1; pattern_absolute() is cwd/pattern.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = dup_exact((const char *)data, size), *part[4];
	char exe[64], *full, *out, *glob, *abs;
	const char *pattern, *seq, *why, *want;
	size_t off = 0, i, plen, cap, flen, alen;
	uint8_t knob = 0;
	long pid;
	long long t;
	int rc;

	for (i = 0; i < 4; i++) {
		size_t n = off < size ? strlen(buf + off) : 0;

		/* each part its own exactly sized block (overreads) */
		part[i] = dup_exact(off < size ? buf + off : "", n);
		off += n + 1;
	}
	if (off < size)
		knob = (uint8_t)buf[off];
	pattern = part[0];
	plen = strlen(pattern);

	why = pattern_invalid(pattern);
	want = plen == 0 ? "empty" : plen > PATTERN_MAX ? "too long" : NULL;
	if (want ? !why || strcmp(why, want) != 0 : why != NULL)
		abort();

	check_sanitize(part[1], strlen(part[1]) + 1, 64);
	check_sanitize(part[1], strlen(part[1]), 2 + knob % 70);
	pattern_sanitize(exe, sizeof(exe), part[1], strlen(part[1]));

	if (pattern_seq_valid(part[2]) != seq_ref(part[2]))
		abort();
	seq = pattern_seq_valid(part[2]) ? part[2] : "1";
	pid = (long)(size * 2654435761u % 4194304) - (knob & 1);
	t = (long long)size * 1000003 - (knob & 2);

	/* each conversion adds at most 64 bytes for its 2 */
	cap = 32 * plen + 64;
	full = malloc(cap);
	if (!full)
		abort();
	if (pattern_expand(full, cap, pattern, pid, exe, seq, t) != 0)
		abort();
	flen = strlen(full);
	if (count(full, '/') != count(pattern, '/'))
		abort();
	/* a smaller cap: fits iff the whole does, else cut and NUL-ended */
	cap = (size_t)knob * (plen / 64 + 1) + 1;
	out = malloc(cap);
	if (!out)
		abort();
	rc = pattern_expand(out, cap, pattern, pid, exe, seq, t);
	if (rc == 0 ? flen >= cap || strcmp(out, full) != 0
		    : flen < cap || errno != ENAMETOOLONG ||
			      strnlen(out, cap) == cap)
		abort();
	free(out);

	/* the glob fits where pattern.h says and matches the expansion */
	glob = malloc(2 * plen + 1);
	if (!glob || pattern_glob(glob, 2 * plen + 1, pattern) != 0)
		abort();
	if (glob_matches(pattern, seq) &&
	    fnmatch(glob, full, FNM_PATHNAME | FNM_PERIOD) != 0)
		abort();
	free(glob);
	free(full);

	/* the absolute form */
	alen = plen + strlen(part[3]) + 2;
	abs = malloc(alen);
	if (!abs || pattern_absolute(abs, alen, pattern, part[3]) != 0)
		abort();
	if (pattern[0] == '/' || !part[3][0]) {
		if (strcmp(abs, pattern) != 0)
			abort();
	} else {
		size_t cl = strcmp(part[3], "/") == 0 ? 0 : strlen(part[3]);

		if (strncmp(abs, part[3], cl) != 0 || abs[cl] != '/' ||
		    strcmp(abs + cl + 1, pattern) != 0)
			abort();
	}
	flen = strlen(abs);
	cap = 1 + knob % alen;
	rc = pattern_absolute(abs, cap, pattern, part[3]);
	if (rc == 0 ? flen >= cap
		    : flen < cap || errno != ENAMETOOLONG ||
			      strnlen(abs, cap) == cap)
		abort();
	free(abs);

	for (i = 0; i < 4; i++)
		free(part[i]);
	free(buf);
	return 0;
}
