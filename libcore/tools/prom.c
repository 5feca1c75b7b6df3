/* SPDX-License-Identifier: MIT */
/* Prometheus text exposition: names, escaping, HELP/TYPE and sample lines. */
#include "prom.h"
#include "msg.h"

#include <math.h>

static int check(FILE *fp)
{
	if (ferror(fp))
		return msg_set_errno(errno ? errno : EIO, "write error");
	return 0;
}

int prom_name(char *buf, size_t size, const char *name)
{
	static const char prefix[] = "palloc_";
	size_t i, len = strlen(name);

	if (size < sizeof(prefix) + len)
		return msg_set("metric name too long 'palloc_%s'", name);
	memcpy(buf, prefix, sizeof(prefix) - 1);
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '_';
		buf[sizeof(prefix) - 1 + i] = c;
	}
	buf[sizeof(prefix) - 1 + len] = '\0';
	return 0;
}

int prom_escape(FILE *fp, const char *s, bool label)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", fp);
		else if (*s == '\n')
			fputs("\\n", fp);
		else if (label && *s == '"')
			fputs("\\\"", fp);
		else
			fputc(*s, fp);
	}
	return check(fp);
}

int prom_family(FILE *fp, const char *name, const char *type, const char *help)
{
	fprintf(fp, "# HELP %s ", name);
	prom_escape(fp, help, false);
	fprintf(fp, "\n# TYPE %s %s\n", name, type);
	return check(fp);
}

static void labels(FILE *fp, const char *name, const struct prom_label *l,
		   size_t n)
{
	size_t i;

	fputs(name, fp);
	if (n == 0)
		return;
	fputc('{', fp);
	for (i = 0; i < n; i++) {
		fprintf(fp, "%s%s=\"", i ? "," : "", l[i].name);
		prom_escape(fp, l[i].value ? l[i].value : "", true);
		fputc('"', fp);
	}
	fputc('}', fp);
}

int prom_sample_u64(FILE *fp, const char *name, const struct prom_label *l,
		    size_t n, uint64_t value)
{
	labels(fp, name, l, n);
	fprintf(fp, " %llu\n", (unsigned long long)value);
	return check(fp);
}

/* The shortest of %.15g..%.17g that reads back as the same double. */
static const char *shortest(char *buf, size_t size, double v)
{
	int prec;

	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, size, "%.17g", v);
	return buf;
}

int prom_sample_double(FILE *fp, const char *name, const struct prom_label *l,
		       size_t n, double value)
{
	char buf[32];

	labels(fp, name, l, n);
	if (isnan(value))
		fputs(" NaN\n", fp);
	else if (isinf(value))
		fputs(value > 0 ? " +Inf\n" : " -Inf\n", fp);
	else
		fprintf(fp, " %s\n", shortest(buf, sizeof(buf), value));
	return check(fp);
}
