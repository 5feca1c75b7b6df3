/* SPDX-License-Identifier: MIT */
/* Unit tests of tools/json.h and tools/prom.h: exact text out. */
#include "common.h"
#include "json.h"
#include "msg.h"
#include "prom.h"

#include <math.h>

#include "tap.h"

/*
 * One TAP result: what fn writes to a stream is exactly WANT (DESC names
 * the check); on a mismatch, what it wrote as TAP comments, for the log.
 */
static void check_text(int (*fn)(FILE *fp, void *ctx), const char *want,
		       const char *desc)
{
	int rc = 0;
	char *text = tap_capture(fn, NULL, &rc);
	const char *p = text ? text : "(null)";

	if (!tap_ok(text && strcmp(text, want) == 0, "%s", desc)) {
		printf("# got:\n# ");
		for (; *p; p++) {
			putchar(*p);
			if (*p == '\n' && p[1])
				fputs("# ", stdout);
		}
		putchar('\n');
	}
	free(text);
}

static int write_top(FILE *fp, void *ctx PALLOC_UNUSED)
{
	json_t *top = json_top_new("palloc-test");
	int rc;

	json_set(top, "size_bytes", json_u64(42));
	json_set(top, "huge_bytes", json_u64(UINT64_MAX));
	json_set(top, "peak_bytes", json_u64_or_null(false, 7));
	json_set(top, "delta", json_i64_or_null(true, -5));
	json_set(top, "ratio", json_real_or_null(true, 0.25));
	json_set(top, "name",
		 json_str_or_null("a\xff"
				  "b\xc3\xa9"));
	json_set(top, "none", json_str_or_null(NULL));
	json_set(top, "start", json_hex(0x7f00deadbeefULL));
	rc = json_print(fp, top, 0);
	json_decref(top);
	return rc;
}

static int write_prom(FILE *fp, void *ctx PALLOC_UNUSED)
{
	char name[PROM_NAME_MAX];
	struct prom_label l[2] = {{"pid", "7"}, {"command", "a\"b\\c\nd"}};

	prom_name(name, sizeof(name), "Test-Metric_bytes");
	prom_family(fp, name, PROM_GAUGE, "Help with \\ and\nnewline.");
	prom_sample_u64(fp, name, l, 2, UINT64_MAX);
	prom_sample_u64(fp, name, NULL, 0, 0);
	prom_sample_double(fp, name, l, 1, 0.1);
	prom_sample_double(fp, name, l, 1, INFINITY);
	prom_sample_double(fp, name, l, 1, 1e-7);
	return 0;
}

int main(void)
{
	char small[12];

	check_text(
		write_top,
		"{\"format\": \"palloc-test\", "
		"\"format_version\": 1, \"size_bytes\": 42, "
		"\"huge_bytes\": null, \"peak_bytes\": null, "
		"\"delta\": -5, \"ratio\": 0.25, "
		"\"name\": \"a?b\xc3\xa9\", \"none\": null, "
		"\"start\": \"0x7f00deadbeef\"}\n",
		"json: format first, nulls, invalid UTF-8 as '?', hex, newline");
	tap_ok(!json_failed(), "json_failed() false after a good build");
	tap_ok(json_set(NULL, "k", json_u64(1)) < 0 && json_failed() &&
		       !json_failed(),
	       "json_set on NULL fails, json_failed() reports it once");

	check_text(write_prom,
		   "# HELP palloc_test_metric_bytes Help with \\\\ "
		   "and\\nnewline.\n"
		   "# TYPE palloc_test_metric_bytes gauge\n"
		   "palloc_test_metric_bytes{pid=\"7\",command="
		   "\"a\\\"b"
		   "\\\\c\\nd\"} 18446744073709551615\n"
		   "palloc_test_metric_bytes 0\n"
		   "palloc_test_metric_bytes{pid=\"7\"} 0.1\n"
		   "palloc_test_metric_bytes{pid=\"7\"} +Inf\n"
		   "palloc_test_metric_bytes{pid=\"7\"} 1e-07\n",
		   "prom: name mapping, HELP and label escaping, exact values");
	tap_ok(prom_name(small, sizeof(small), "long_name") < 0 &&
		       strstr(msg_last(), "too long") != NULL,
	       "prom_name refuses a name longer than the buffer");
	return tap_done();
}
