/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the strict number parsers. */
#include "common.h"
#include "msg.h"
#include "num.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Command-line values and kernel files go through these. Whatever they
 * accept must be what the digits say: a value accepted without a suffix
 * prints back as the input (leading zeros aside), and a refusal says why.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), back[32];
	const char *digits;
	uint64_t u, ns;
	int64_t i;

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';

	if (num_parse_u64(s, false, &u) == 0) {
		digits = s;
		while (digits[0] == '0' && digits[1])
			digits++;
		snprintf(back, sizeof(back), "%" PRIu64, u);
		if (strcmp(back, digits) != 0)
			abort();
	} else if (!*msg_last()) {
		abort();
	}
	if (num_parse_u64(s, true, &u) != 0 && !*msg_last())
		abort();
	if (num_parse_i64(s, &i) == 0) {
		char *e;
		long long want;

		errno = 0;
		want = strtoll(s, &e, 10);
		if (errno || *e || want != i)
			abort();
	} else if (!*msg_last()) {
		abort();
	}
	if (num_parse_seconds(s, &ns) != 0 && !*msg_last())
		abort();
	free(s);
	return 0;
}
