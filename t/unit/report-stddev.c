/* SPDX-License-Identifier: MIT */
/* Unit tests of the report's error bars (stddev labels -> 95 % intervals). */
#include "common.h"

#include <math.h>

#include "pprof.h"
#include "report.h"
#include "heap.h"
#include "tap.h"

static uint64_t loc(struct pprof_profile *p, uint64_t addr, const char *name)
{
	struct pprof_line l = {
		.function_id = pprof_add_function(p, name, name, "", 0),
	};

	return pprof_add_location(p, 0, addr, &l, 1);
}

/* A sample of inuse v with an inuse_space_stddev label sd (< 0: none). */
static void sample(struct pprof_profile *p, const uint64_t *ids, size_t n,
		   int64_t v, int64_t sd)
{
	int64_t vals[4] = {1, v, 1, v};
	struct pprof_label l[2] = {
		{.key = "thread", .str = "main", .num_unit = ""},
		{.key = "inuse_space_stddev",
		 .str = "",
		 .num = sd,
		 .num_unit = "bytes"},
	};

	if (pprof_add_sample(p, ids, n, vals, l, sd < 0 ? 1 : 2) < 0)
		exit(99);
}

int main(void)
{
	struct pprof_profile *p = heap_profile(524288);
	struct report *r;
	const struct report_row *a, *b;
	uint64_t s[2];
	int64_t lo, hi;
	json_t *j;
	char *text;

	s[0] = loc(p, 0x10, "leaf_a");
	s[1] = loc(p, 0x20, "caller_b");
	/* leaf_a: two samples, sigma 300 and 400: flat sigma 500 */
	sample(p, s, 2, 1000, 300);
	sample(p, s, 2, 2000, 400);
	/* caller_b as a leaf: sigma 1200 */
	sample(p, s + 1, 1, 5000, 1200);
	r = report_by_function(p, 3);
	a = r ? report_find(r, "leaf_a") : NULL;
	b = r ? report_find(r, "caller_b") : NULL;
	tap_ok(r && r->has_stddev && a && b, "the labels give error bars");
	tap_ok(a && fabs(a->flat_stddev - 500) < 1e-9 &&
		       fabs(a->cum_stddev - 500) < 1e-9,
	       "variances add: sqrt(300^2 + 400^2) = %.3f",
	       a ? a->flat_stddev : 0);
	tap_ok(b && fabs(b->flat_stddev - 1200) < 1e-9 &&
		       fabs(b->cum_stddev - 1300) < 1e-9,
	       "cum sums every sample the function is in: %.3f",
	       b ? b->cum_stddev : 0);
	tap_ok(r && fabs(r->sum_stddev - 1300) < 1e-9, "total sigma %.3f",
	       r ? r->sum_stddev : 0);
	tap_ok(report_interval(3000, 500, true, &lo, &hi) && lo == 2020 &&
		       hi == 3980,
	       "95 %% interval 3000 +- 1.96 * 500 = [%lld, %lld]",
	       (long long)lo, (long long)hi);
	tap_ok(report_interval(100, 500, true, &lo, &hi) && lo == 0 &&
		       report_interval(100, 500, false, &lo, &hi) && lo == -880,
	       "low end clamped at 0 only when nothing is negative");
	tap_ok(!report_interval(1, NAN, true, &lo, &hi), "unknown sigma");
	j = r ? report_to_json(r, 1) : NULL;
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	tap_ok(text && strstr(text, "\"net_stddev_bytes\":1300,") &&
		       strstr(text, "\"cum_ratio\":1.0,\"flat_stddev_bytes\":"
				    "1200,\"flat_ci95_low_bytes\":2648,"
				    "\"flat_ci95_high_bytes\":7352,"
				    "\"cum_stddev_bytes\":1300,"
				    "\"cum_ci95_low_bytes\":5452,"
				    "\"cum_ci95_high_bytes\":10548}"),
	       "JSON keys: %s", text ? text : "(null)");
	free(text);
	json_decref(j);
	r->show_intervals = true;
	{
		char buf[4096] = "";
		FILE *fp = fmemopen(buf, sizeof(buf) - 1, "w");

		report_print_top(fp, r, 0, true, NULL);
		fclose(fp);
		tap_ok(strstr(buf, "flat95") && strstr(buf, "+-2352") &&
			       strstr(buf, "+-980") &&
			       strstr(buf, " caller_b\n"),
		       "--top with intervals:\n%s", buf);
	}
	report_free(r);

	/* One sample without the label: the rows it touches are unknown. */
	sample(p, s + 1, 1, 7, -1);
	r = report_by_function(p, 3);
	b = r ? report_find(r, "caller_b") : NULL;
	a = r ? report_find(r, "leaf_a") : NULL;
	tap_ok(r && r->has_stddev && b && isnan(b->flat_stddev) && a &&
		       fabs(a->flat_stddev - 500) < 1e-9,
	       "a sample without the label makes its rows unknown");
	j = r ? report_to_json(r, 0) : NULL;
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	tap_ok(text && strstr(text, "\"flat_stddev_bytes\":null,"
				    "\"flat_ci95_low_bytes\":null"),
	       "unknown is null in JSON");
	free(text);
	json_decref(j);
	report_free(r);
	/* alloc_space carries no label: no error bars, output as before */
	r = report_by_function(p, 1);
	j = r ? report_to_json(r, 0) : NULL;
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	tap_ok(r && !r->has_stddev && text && !strstr(text, "stddev"),
	       "no label for the sample type: no stddev keys");
	free(text);
	json_decref(j);
	report_free(r);
	pprof_free(p);
	return tap_done();
}
