/* SPDX-License-Identifier: MIT */
/* Unit tests of libcore/base/num.c: strict parsing of user-supplied numbers. */
#include "common.h"
#include "num.h"
#include "msg.h"
#include "tap.h"

static void u64_ok(const char *s, bool suffix, uint64_t want)
{
	uint64_t v = 0;
	int rc = num_parse_u64(s, suffix, &v);

	tap_ok(rc == 0 && v == want, "u64 '%s' -> %llu (got rc %d, %llu)", s,
	       (unsigned long long)want, rc, (unsigned long long)v);
}

static void u64_bad(const char *s, bool suffix)
{
	uint64_t v;

	tap_ok(num_parse_u64(s, suffix, &v) < 0 && msg_last()[0],
	       "u64 '%s' rejected: %s", s, msg_last());
}

/* num_parse_percents(): PALLOC_DUMP_AT and --dump-at alike. */
static void percents_ok(void)
{
	unsigned p[NUM_PERCENTS_MAX];
	size_t n = 99;

	tap_ok(num_parse_percents("95,80,90,80", p, &n) == 0 && n == 3 &&
		       p[0] == 80 && p[1] == 90 && p[2] == 95,
	       "percents: sorted, repeats once");
	tap_ok(num_parse_percents("0", p, &n) == 0 && n == 0, "percents: 0");
	tap_ok(num_parse_percents("1,2,3,4,5,6,7,8,8", p, &n) == 0 && n == 8,
	       "percents: 8, a repeat beyond them");
	tap_ok(num_parse_percents("1,2,3,4,5,6,7,8,9", p, &n) < 0,
	       "percents: 9 refused");
	tap_ok(num_parse_percents("", p, &n) < 0 &&
		       num_parse_percents("80,", p, &n) < 0 &&
		       num_parse_percents(",80", p, &n) < 0 &&
		       num_parse_percents("101", p, &n) < 0 &&
		       num_parse_percents("0,80", p, &n) < 0 &&
		       num_parse_percents("8 0", p, &n) < 0,
	       "percents: '', trailing or leading comma, 101, 0 in a list, blank refused");
}

int main(void)
{
	uint64_t ns;
	int64_t i;

	u64_ok("0", false, 0);
	u64_ok("524288", false, 524288);
	u64_ok("18446744073709551615", false, UINT64_MAX);
	u64_ok("512k", true, 524288);
	u64_ok("2MiB", true, 2 << 20);
	u64_ok("1G", true, 1ULL << 30);
	u64_bad("", false);
	u64_bad("-1", false);
	u64_bad(" 1", false);
	u64_bad("1 ", false);
	u64_bad("12x", false);
	u64_bad("512k", false);
	u64_bad("18446744073709551616", false);
	u64_bad("17179869184G", true);
	u64_bad("5Q", true);
	tap_ok(num_parse_i64("-9223372036854775808", &i) == 0 && i == INT64_MIN,
	       "i64 min");
	tap_ok(num_parse_i64("9223372036854775808", &i) < 0, "i64 overflow");
	tap_ok(num_parse_seconds("2", &ns) == 0 && ns == 2000000000ULL,
	       "seconds 2");
	tap_ok(num_parse_seconds("0.25", &ns) == 0 && ns == 250000000ULL,
	       "seconds 0.25");
	tap_ok(num_parse_seconds("1.", &ns) < 0, "seconds '1.' rejected");
	tap_ok(num_parse_seconds("-1", &ns) < 0, "seconds '-1' rejected");
	percents_ok();
	return tap_done();
}
