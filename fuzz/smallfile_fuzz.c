/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the small-file readers (libcore/base/smallfile.c). */
#include "common.h"
#include "fuzz_util.h"
#include "msg.h"
#include "num.h"
#include "smallfile.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The reference reading of a number file, written differently: the bytes
 * without their trailing blanks are exactly "max" or a decimal that
 * num_parse_u64() takes, with no NUL and no more than 23 bytes.
 */
static int ref_u64(const uint8_t *data, size_t size, uint64_t *out)
{
	char s[SMALLFILE_U64_CAP];
	size_t n = size;

	while (n && (data[n - 1] == '\n' || data[n - 1] == ' '))
		n--;
	if (n >= sizeof(s) || memchr(data, '\0', n))
		return -1;
	memcpy(s, data, n);
	s[n] = '\0';
	if (strcmp(s, "max") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	return num_parse_u64(s, false, out);
}

/*
 * The input is a cgroup or /proc number file (memory.current,
 * memory.max...). smallfile_parse_u64() agrees with the reference and
 * says why it refuses; smallfile_u64() on the same bytes in a file
 * agrees with it (a file of 63 bytes or more is refused: its 64-byte
 * buffer may not hold it whole); smallfile_read() gives the file's first
 * cap - 1 bytes, NUL-terminated.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[PATH_MAX], *exact, buf[80];
	uint64_t got = 0, want = 0, fv = 0;
	int rc, rrc, frc;
	size_t cap;
	ssize_t n;

	/* an exactly sized copy: ASan sees a read past the end */
	exact = malloc(size ? size : 1);
	if (!exact)
		abort();
	memcpy(exact, data, size);
	msg_set("%s", "");
	rc = smallfile_parse_u64(exact, size, &got);
	rrc = ref_u64(data, size, &want);
	if ((rc == 0) != (rrc == 0) || (rc == 0 && got != want) ||
	    (rc != 0 && (errno != EINVAL || !*msg_last())))
		abort();
	free(exact);

	fuzz_write("n", data, size);
	snprintf(path, sizeof(path), "%s/n", fuzz_root());
	frc = smallfile_u64(path, &fv);
	if (size >= 63 ? frc == 0 || errno != EINVAL
		       : frc != rc || (frc == 0 && fv != got))
		abort();

	cap = 1 + (size ? data[0] : 0) % sizeof(buf);
	n = smallfile_read(path, buf, cap);
	if (n < 0 || (size_t)n != (size < cap - 1 ? size : cap - 1) ||
	    buf[n] != '\0' || memcmp(buf, data, (size_t)n) != 0)
		abort();
	return 0;
}
