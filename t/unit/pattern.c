/* SPDX-License-Identifier: MIT */
/* Unit tests of libcore/pprof/pattern.c: the output pattern's grammar. */
#include "common.h"
#include "pattern.h"
#include "tap.h"

#include <fnmatch.h>
#include <limits.h>

static void expand_is(const char *pattern, const char *seq, const char *want)
{
	char out[256];
	int rc = pattern_expand(out, sizeof(out), pattern, 42, "prog", seq,
				1700000000);

	tap_ok(rc == 0 && strcmp(out, want) == 0,
	       "expand '%s' seq '%s' -> '%s' (got rc %d, '%s')", pattern, seq,
	       want, rc, rc == 0 ? out : "");
}

static void glob_is(const char *pattern, const char *want)
{
	char out[256];
	int rc = pattern_glob(out, sizeof(out), pattern);

	tap_ok(rc == 0 && strcmp(out, want) == 0,
	       "glob '%s' -> '%s' (got rc %d, '%s')", pattern, want, rc,
	       rc == 0 ? out : "");
}

/* The name pattern_expand() gives matches pattern_glob()'s glob. */
static void expanded_matches(const char *pattern, const char *seq)
{
	char name[256], glob[256];

	tap_ok(pattern_expand(name, sizeof(name), pattern, 42, "prog", seq,
			      1700000000) == 0 &&
		       pattern_glob(glob, sizeof(glob), pattern) == 0 &&
		       fnmatch(glob, name, FNM_PATHNAME | FNM_PERIOD) == 0,
	       "'%s' (seq %s): '%s' matches '%s'", pattern, seq, name, glob);
}

static void absolute_is(const char *pattern, const char *cwd, const char *want)
{
	char out[64];
	int rc = pattern_absolute(out, sizeof(out), pattern, cwd);

	tap_ok(rc == 0 && strcmp(out, want) == 0,
	       "absolute '%s' in '%s' -> '%s' (got rc %d, '%s')", pattern,
	       cwd ? cwd : "(null)", want, rc, out);
}

static void test_expand(void)
{
	char small[8];

	expand_is(PATTERN_DEFAULT, "1", "palloc.prog.42.pb.gz");
	expand_is("/d/%e-%p-%n-%t.pb.gz", "3", "/d/prog-42-3-1700000000.pb.gz");
	expand_is("a%%p%x%", "1", "a%p%x%");
	/* the peak and pressure files of a pattern without %n */
	expand_is("/d/p.%p.pb.gz", "peak", "/d/p.42.peak.pb.gz");
	expand_is("/d/p.%p", "at90", "/d/p.42.at90.pb.gz");
	expand_is("/d/p.%n.pb.gz", "peak", "/d/p.peak.pb.gz");
	tap_ok(pattern_expand(small, sizeof(small), "%p%p%p", 12345, "x", "1",
			      0) < 0 &&
		       errno == ENAMETOOLONG,
	       "expand: a name that does not fit is ENAMETOOLONG");
}

static void test_glob(void)
{
	char small[4];

	glob_is(PATTERN_DEFAULT, "palloc.*.*.pb.gz");
	glob_is("/d/%p%n%t%e.pb.gz", "/d/*.pb.gz");
	glob_is("a%%b%x%", "a%b%x%");
	glob_is("a*?[\\%p", "a\\*\\?\\[\\\\*");
	/* a literal '*' before a conversion is no wildcard */
	glob_is("a*%p", "a\\**");
	expanded_matches("a*%p", "1");
	expanded_matches(PATTERN_DEFAULT, "7");
	expanded_matches("/d/x-%n.pb.gz", "peak");
	expanded_matches("/d/x-%p.pb.gz", "at95");
	tap_ok(pattern_glob(small, sizeof(small), "abcdef") < 0 &&
		       errno == ENAMETOOLONG,
	       "glob: a glob that does not fit is ENAMETOOLONG");
}

static void test_absolute(void)
{
	char small[8];

	absolute_is("p.pb.gz", "/home/u", "/home/u/p.pb.gz");
	absolute_is("p.pb.gz", "/", "/p.pb.gz");
	absolute_is("/abs/p", "/home/u", "/abs/p");
	absolute_is("p", "", "p");
	absolute_is("p", NULL, "p");
	tap_ok(pattern_absolute(small, sizeof(small), "pattern", "/cwd") < 0 &&
		       errno == ENAMETOOLONG,
	       "absolute: a path that does not fit is ENAMETOOLONG");
}

static void test_invalid(void)
{
	static char long_pattern[PATTERN_MAX + 2];
	const char *why;

	tap_ok(pattern_invalid(PATTERN_DEFAULT) == NULL,
	       "the default pattern is valid");
	why = pattern_invalid("");
	tap_ok(why && strcmp(why, "empty") == 0, "empty: %s", why);
	memset(long_pattern, 'a', PATTERN_MAX);
	tap_ok(pattern_invalid(long_pattern) == NULL,
	       "PATTERN_MAX bytes are valid");
	long_pattern[PATTERN_MAX] = 'a';
	why = pattern_invalid(long_pattern);
	tap_ok(why && strcmp(why, "too long") == 0, "one more: %s", why);
}

static void test_names(void)
{
	char out[64];

	tap_ok(pattern_seq_valid("1") && pattern_seq_valid("peak") &&
		       pattern_seq_valid("at90") &&
		       pattern_seq_valid("12345678901234567890"),
	       "valid sequences");
	tap_ok(!pattern_seq_valid("") && !pattern_seq_valid("at") &&
		       !pattern_seq_valid("at1000") &&
		       !pattern_seq_valid("1/2") &&
		       !pattern_seq_valid("123456789012345678901"),
	       "invalid sequences");
	pattern_sanitize(out, sizeof(out), ".x/y z", 6);
	tap_ok(strcmp(out, "_x_y_z") == 0, "sanitize: '%s'", out);
	pattern_sanitize(out, sizeof(out), "", 0);
	tap_ok(strcmp(out, "unknown") == 0, "sanitize nothing: '%s'", out);
	pattern_exe_name(out, sizeof(out));
	tap_ok(strcmp(out, "pattern") == 0 || strcmp(out, "lt-pattern") == 0,
	       "exe name: '%s'", out);
}

int main(void)
{
	test_expand();
	test_glob();
	test_absolute();
	test_invalid();
	test_names();
	return tap_done();
}
