/* SPDX-License-Identifier: MIT */
/* Profile names: the output pattern's grammar (PALLOC_OUTPUT, -o). */
#include "pattern.h"
#include "fmt.h"

#include <sys/auxv.h>
#include <unistd.h>

#define NAME_CAP 64
/* The conversions that stand for a part of the name (pattern.h). */
#define CONVERSIONS "pent"

void pattern_sanitize(char *out, size_t cap, const char *in, size_t n)
{
	size_t k = 0;

	if (cap > NAME_CAP)
		cap = NAME_CAP;
	for (size_t i = 0; i < n && in[i] && k + 1 < cap; i++) {
		char c = in[i];
		bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
			    c == '+' || (c == '.' && k > 0);

		out[k++] = safe ? c : '_';
	}
	out[k] = '\0';
	if (k == 0) {
		struct fmt_buf b;

		fmt_init(&b, out, cap);
		fmt_append(&b, "unknown");
	}
}

/* The last component of path[len]. */
static const char *base_name(const char *path, size_t *len)
{
	const char *b = path;

	for (size_t i = 0; i < *len; i++)
		if (path[i] == '/')
			b = path + i + 1;
	*len -= (size_t)(b - path);
	return b;
}

void pattern_exe_name(char *out, size_t cap)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	char exe[PATH_MAX];
	const char *b = NULL;
	size_t len = 0;

	/* fexecve(3) and execveat(2) name the program /dev/fd/N. */
	if (fn && strncmp(fn, "/dev/fd/", 8) != 0 &&
	    strncmp(fn, "/proc/self/fd/", 14) != 0) {
		len = strlen(fn);
		b = base_name(fn, &len);
	}
	if (!b || !len) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		len = n > 0 ? (size_t)n : 0;
		exe[len] = '\0';
		/* a deleted executable reads "PATH (deleted)" */
		if (len > 10 && strcmp(exe + len - 10, " (deleted)") == 0)
			len -= 10;
		b = base_name(exe, &len);
	}
	pattern_sanitize(out, cap, b, len);
}

bool pattern_seq_valid(const char *seq)
{
	size_t n = strlen(seq), i = 0;

	if (strcmp(seq, "peak") == 0)
		return true;
	if (n > 2 && seq[0] == 'a' && seq[1] == 't') {
		if (n > 5)
			return false;
		i = 2;
	} else if (n < 1 || n > 20) {
		return false;
	}
	for (; i < n; i++)
		if (seq[i] < '0' || seq[i] > '9')
			return false;
	return true;
}

/* The result of a fmt_buf written into: 0, or -1 with ENAMETOOLONG. */
static int fitted(const struct fmt_buf *b)
{
	if (b->truncated) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int pattern_expand(char *out, size_t cap, const char *pattern, long pid,
		   const char *exe, const char *seq, long long t)
{
	/* the peak and pressure files have names of their own */
	bool named = strcmp(seq, "peak") == 0 || strncmp(seq, "at", 2) == 0;
	bool has_n = false;
	struct fmt_buf b;
	size_t len;

	fmt_init(&b, out, cap);
	for (const char *c = pattern; *c; c++) {
		if (c[0] != '%' || c[1] == '\0') {
			fmt_mem(&b, c, 1);
			continue;
		}
		switch (*++c) {
		case 'p':
			fmt_append(&b, "%ld", pid);
			break;
		case 'n':
			fmt_append(&b, "%s", seq);
			has_n = true;
			break;
		case 't':
			fmt_append(&b, "%lld", t);
			break;
		case 'e':
			fmt_append(&b, "%s", *exe ? exe : "unknown");
			break;
		case '%':
			fmt_mem(&b, "%", 1);
			break;
		default:
			fmt_mem(&b, c - 1, 2);
			break;
		}
	}
	if (named && !has_n) {
		len = b.len;
		if (len > 6 && strcmp(out + len - 6, ".pb.gz") == 0) {
			b.len = len - 6;
			out[b.len] = '\0';
		}
		fmt_append(&b, ".%s.pb.gz", seq);
	}
	return fitted(&b);
}

const char *pattern_invalid(const char *pattern)
{
	if (!pattern[0])
		return "empty";
	if (strlen(pattern) > PATTERN_MAX)
		return "too long";
	return NULL;
}

int pattern_absolute(char *out, size_t cap, const char *pattern,
		     const char *cwd)
{
	struct fmt_buf b;

	fmt_init(&b, out, cap);
	if (pattern[0] != '/' && cwd && cwd[0])
		fmt_append(&b, "%s/", strcmp(cwd, "/") == 0 ? "" : cwd);
	fmt_append(&b, "%s", pattern);
	return fitted(&b);
}

int pattern_glob(char *out, size_t cap, const char *pattern)
{
	bool star = false; /* the last thing written is a wildcard */
	struct fmt_buf b;

	fmt_init(&b, out, cap);
	for (const char *p = pattern; *p; p++) {
		if (*p == '%' && p[1]) {
			p++;
			if (strchr(CONVERSIONS, *p)) {
				if (!star)
					fmt_mem(&b, "*", 1);
				star = true;
				continue;
			}
			if (*p != '%')
				fmt_mem(&b, "%", 1);
		}
		if (strchr("*?[\\", *p))
			fmt_mem(&b, "\\", 1);
		fmt_mem(&b, p, 1);
		star = false;
	}
	return fitted(&b);
}
