/* SPDX-License-Identifier: MIT */
/* Strict number parsing: whole string, no sign surprises, no overflow. */
#include "num.h"
#include "msg.h"

/* isdigit() in every locale, without the C library's table: inside the
 * agent, __ctype_b_loc is one more function bound at every start. */
static bool num_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int parse_digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (!num_digit(*p))
		return -1;
	for (; num_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

int num_parse_u64(const char *s, bool allow_suffix, uint64_t *out)
{
	static const struct {
		const char *name;
		unsigned shift;
	} suffixes[] = {
		/* One row per power: clang-format would bin-pack them. */
		/* clang-format off */
		{"k", 10}, {"K", 10}, {"KiB", 10},
		{"M", 20}, {"MiB", 20},
		{"G", 30}, {"GiB", 30},
		{"T", 40}, {"TiB", 40},
		/* clang-format on */
	};
	const char *end;
	uint64_t v;
	int rc;

	if (!s || !*s)
		return msg_set("empty number");
	rc = parse_digits(s, &v, &end);
	if (rc == -1)
		return msg_set("not a non-negative integer");
	if (rc == -2)
		return msg_set("number too large");
	if (*end && allow_suffix) {
		for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
			if (strcmp(end, suffixes[i].name) != 0)
				continue;
			if (v > (UINT64_MAX >> suffixes[i].shift))
				return msg_set("number too large");
			*out = v << suffixes[i].shift;
			return 0;
		}
		return msg_set("unknown suffix '%s' (use k, M, G or T)", end);
	}
	if (*end)
		return msg_set("not a non-negative integer");
	*out = v;
	return 0;
}

int num_parse_i64(const char *s, int64_t *out)
{
	bool neg = s && *s == '-';
	uint64_t v;

	if (num_parse_u64(neg ? s + 1 : s, false, &v) < 0)
		return msg_set("not an integer");
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return msg_set("number out of range");
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int num_parse_seconds(const char *s, uint64_t *ns)
{
	uint64_t whole, frac = 0, scale = 1000000000;
	const char *end;

	if (!s || parse_digits(s, &whole, &end) != 0)
		return msg_set("not a non-negative number of seconds");
	if (*end == '.') {
		end++;
		if (!num_digit(*end))
			return msg_set("not a non-negative number of seconds");
		for (; num_digit(*end); end++) {
			scale /= 10;
			frac += (uint64_t)(*end - '0') * scale;
		}
	}
	if (*end)
		return msg_set("not a non-negative number of seconds");
	if (whole > UINT64_MAX / 1000000000 - 1)
		return msg_set("number of seconds too large");
	*ns = whole * 1000000000 + frac;
	return 0;
}

int num_parse_percents(const char *s, unsigned out[NUM_PERCENTS_MAX], size_t *n)
{
	*n = 0;
	if (strcmp(s, "0") == 0)
		return 0;
	if (!*s)
		return msg_set("empty list of percents");
	while (*s) {
		char one[8];
		size_t len = strcspn(s, ",");
		uint64_t v;
		size_t i;

		if (len == 0 || len >= sizeof(one))
			return msg_set("expected a percent from 1 to 100");
		memcpy(one, s, len);
		one[len] = '\0';
		if (num_parse_u64(one, false, &v) < 0 || v < 1 || v > 100)
			return msg_set("expected a percent from 1 to 100");
		for (i = 0; i < *n && out[i] < v; i++)
			;
		if (i == *n || out[i] != v) {
			if (*n == NUM_PERCENTS_MAX)
				return msg_set("more than %d percents",
					       NUM_PERCENTS_MAX);
			memmove(out + i + 1, out + i,
				(*n - i) * sizeof(out[0]));
			out[i] = (unsigned)v;
			(*n)++;
		}
		s += len;
		if (*s == ',' && *++s == '\0')
			return msg_set("expected a percent after ','");
	}
	return 0;
}

int num_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int num_parse_hex_bytes(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return msg_set("expected %zu hex digits", 2 * n);
	for (size_t i = 0; i < 2 * n; i++)
		if (num_hex_digit((unsigned char)s[i]) < 0)
			return msg_set("expected %zu hex digits", 2 * n);
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)(num_hex_digit((unsigned char)s[2 * i]) << 4 |
				   num_hex_digit((unsigned char)s[2 * i + 1]));
	return 0;
}
