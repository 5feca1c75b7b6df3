/* SPDX-License-Identifier: MIT */
/* Unit tests of libcore/pprof/pprof_comments.c: what the agent writes, the
 * commands read back; what is not written so reads as absent. */
#include "common.h"
#include "pprof.h"
#include "pprof_comments.h"
#include "tap.h"

/* A profile with the one comment c. */
static struct pprof_profile *with(const char *c)
{
	struct pprof_profile *p = pprof_new(NULL);

	if (!p || pprof_add_comment(p, c) < 0)
		abort();
	return p;
}

static void samples_round_trip(void)
{
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_comment_samples w = {.sampled = 131072,
					  .dropped = 65536,
					  .dropped_bytes = 7864320,
					  .max_stacks = 65536},
				     r;

	if (!p || pprof_comment_add_samples(p, &w) < 0)
		abort();
	tap_ok(strcmp(p->comments[0],
		      "sampled allocations: 131072; dropped samples: 65536, "
		      "about 7864320 bytes allocated (stack table full at "
		      "65536 stacks, or out of memory)") == 0,
	       "samples comment written as palloc(7) says: %s", p->comments[0]);
	tap_ok(pprof_comment_samples(p, &r) && r.sampled == 131072 &&
		       r.dropped == 65536 && r.dropped_bytes == 7864320 &&
		       r.dropped_bytes_known,
	       "samples comment read back");
	pprof_free(p);
}

/* The writer prints any uint64_t: 20 digits read back (fuzz finding). */
static void samples_max(void)
{
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_comment_samples w = {.sampled = UINT64_MAX,
					  .dropped = 10000000000000000000u,
					  .dropped_bytes = UINT64_MAX - 1},
				     r;

	if (!p || pprof_comment_add_samples(p, &w) < 0)
		abort();
	tap_ok(pprof_comment_samples(p, &r) && r.sampled == w.sampled &&
		       r.dropped == w.dropped &&
		       r.dropped_bytes == w.dropped_bytes &&
		       r.dropped_bytes_known,
	       "samples comment of 20-digit counts read back");
	pprof_free(p);
}

static void samples_read(const char *c, bool found, uint64_t dropped,
			 bool known)
{
	struct pprof_profile *p = with(c);
	struct pprof_comment_samples r;
	bool got = pprof_comment_samples(p, &r);

	tap_ok(got == found && r.dropped == dropped &&
		       r.dropped_bytes_known == known,
	       "'%s': %s, dropped %llu%s", c, found ? "read" : "not read",
	       (unsigned long long)dropped, known ? ", bytes known" : "");
	pprof_free(p);
}

static void pid_read(const char *c, long want)
{
	struct pprof_profile *p = with(c);

	tap_ok(pprof_comment_pid(p) == want, "'%s': pid %ld", c, want);
	pprof_free(p);
}

static void pressure(void)
{
	struct pprof_comment_pressure
		w =
			{
				.version = 2,
				.usage = 943718400,
				.limit = 1048576000,
				.tenths = 900,
				.threshold = 90,
				.sec = 1764100000,
				.ms = 7,
				.usage_file =
					"/sys/fs/cgroup/app/memory.current",
			},
		r;
	char buf[512];
	struct pprof_profile *p;

	pprof_comment_format_pressure(buf, sizeof(buf), &w);
	tap_ok(strcmp(buf, "memory pressure: cgroup v2 usage 943718400 bytes "
			   "of a limit of 1048576000 bytes (90.0 % of the "
			   "limit; threshold 90 %) at unix time "
			   "1764100000.007, from "
			   "/sys/fs/cgroup/app/memory.current") == 0,
	       "pressure comment written: %s", buf);
	p = with(buf);
	tap_ok(pprof_comment_pressure(p, &r) && r.version == 2 &&
		       r.usage == w.usage && r.limit == w.limit &&
		       r.tenths == 900 && r.threshold == 90 && r.sec == w.sec &&
		       r.ms == 7,
	       "pressure comment read back");
	pprof_free(p);
	p = with("memory pressure: cgroup v2 usage 1 bytes of a limit of 2 "
		 "bytes (50.12 % of the limit; threshold 50 %) at unix time "
		 "1.000, from x");
	tap_ok(!pprof_comment_pressure(p, &r),
	       "pressure comment with two decimals of percent: not read");
	pprof_free(p);
}

int main(void)
{
	struct pprof_profile *p;

	samples_round_trip();
	samples_read("sampled allocations: 5; dropped samples: 1 (stack "
		     "table full at 65536 stacks, or out of memory)",
		     true, 1, false);
	samples_read("sampled allocations: 5; dropped samples: 2, about x "
		     "bytes allocated",
		     true, 2, false);
	samples_read("sampled allocations: 5; dropped samples: -1", false, 0,
		     false);
	samples_read("sampled allocations: 5; dropped samples: "
		     "99999999999999999999",
		     false, 0, false);
	samples_read("dropped samples: 1", false, 0, false);
	samples_read("sampled allocations: 5; dropped samples: "
		     "18446744073709551615",
		     true, UINT64_MAX, false);
	samples_max();

	p = pprof_new(NULL);
	if (!p || pprof_comment_add_pid(p, 4242) < 0)
		abort();
	tap_ok(strcmp(p->comments[0], "pid: 4242") == 0 &&
		       pprof_comment_pid(p) == 4242,
	       "pid comment written and read back");
	pprof_free(p);
	pid_read("pid: 0", 0);
	pid_read("pid: 12x", 0);
	pid_read("pid: ", 0);
	pid_read("process: 12", 0);

	p = with("warning: most of it is not malloc's");
	tap_ok(pprof_comment_warning(p) &&
		       strcmp(pprof_comment_warning(p),
			      "most of it is not malloc's") == 0,
	       "warning comment: its text");
	pprof_free(p);
	p = with("warnings: none");
	tap_ok(!pprof_comment_warning(p), "no warning comment: NULL");
	pprof_free(p);

	pressure();
	return tap_done();
}
