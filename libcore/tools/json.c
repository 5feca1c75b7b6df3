/* SPDX-License-Identifier: MIT */
/* jansson helpers shared by the commands: top object, nulls, printing. */
#include "json.h"
#include "msg_cli.h"

static __thread bool json_broken;

static json_t *oom(json_t *v)
{
	if (!v) {
		json_broken = true;
		msg_set("cannot build JSON: out of memory");
	}
	return v;
}

json_t *json_top_new_version(const char *format, int version)
{
	json_t *top = json_object();

	if (!top)
		return oom(NULL);
	if (json_set(top, "format", json_string(format)) < 0 ||
	    json_set(top, "format_version", json_integer(version)) < 0) {
		json_decref(top);
		return NULL;
	}
	return top;
}

json_t *json_top_new(const char *format)
{
	return json_top_new_version(format, 1);
}

json_t *json_u64(uint64_t v)
{
	if (v > (uint64_t)INT64_MAX)
		return oom(json_null());
	return oom(json_integer((json_int_t)v));
}

json_t *json_u64_or_null(bool have, uint64_t v)
{
	return have ? json_u64(v) : oom(json_null());
}

json_t *json_i64_or_null(bool have, int64_t v)
{
	return oom(have ? json_integer((json_int_t)v) : json_null());
}

void json_set_i64(json_t *o, const char *key, int64_t v)
{
	json_set(o, key, json_i64_or_null(v >= 0, v));
}

void json_set_i64_fields(json_t *o, const void *base,
			 const struct json_i64_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int64_t v;

		memcpy(&v, (const char *)base + f[i].off, sizeof(v));
		json_set_i64(o, f[i].key, v);
	}
}

json_t *json_real_or_null(bool have, double v)
{
	return oom(have ? json_real(v) : json_null());
}

json_t *json_str_or_null(const char *s)
{
	const unsigned char *p;
	char *copy;
	json_t *v;
	size_t i = 0, n;

	if (!s)
		return oom(json_null());
	v = json_string(s);
	if (v)
		return v;
	/* jansson refuses invalid UTF-8: replace the offending bytes. */
	copy = strdup(s);
	if (!copy)
		return oom(NULL);
	p = (const unsigned char *)copy;
	while (p[i]) {
		n = msg_utf8_len(p + i);
		if (n == 0) {
			copy[i] = '?';
			n = 1;
		}
		i += n;
	}
	v = json_string(copy);
	free(copy);
	return oom(v);
}

json_t *json_hex(uint64_t addr)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
	return oom(json_string(buf));
}

int json_set(json_t *obj, const char *key, json_t *value)
{
	if (!obj || !value) {
		json_decref(value);
		oom(NULL);
		return -1;
	}
	if (json_object_set_new(obj, key, value) < 0) {
		oom(NULL);
		return -1;
	}
	return 0;
}

int json_push(json_t *arr, json_t *value)
{
	if (!arr || !value) {
		json_decref(value);
		oom(NULL);
		return -1;
	}
	if (json_array_append_new(arr, value) < 0) {
		oom(NULL);
		return -1;
	}
	return 0;
}

bool json_failed(void)
{
	bool was = json_broken;

	json_broken = false;
	return was;
}

int json_print(FILE *fp, const json_t *value, size_t flags)
{
	char *text = json_dumps(value, flags | JSON_PRESERVE_ORDER);
	int rc = 0;

	if (!text)
		return msg_set("cannot format JSON: out of memory");
	if (fputs(text, fp) == EOF || fputc('\n', fp) == EOF ||
	    fflush(fp) == EOF) {
		if (fp == stdout)
			msg_stdout_failed(errno);
		rc = msg_set_errno(errno, "write error");
	}
	free(text);
	return rc;
}
