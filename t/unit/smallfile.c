/* SPDX-License-Identifier: MIT */
/* Unit tests of libcore/base/smallfile.c: small files into a buffer. */
#include "common.h"
#include "smallfile.h"
#include "tap.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

static char dir[] = "/tmp/palloc-smallfile-XXXXXX";

/* dir/name holding text; its path in path[PATH_MAX]. */
static const char *put(const char *name, const char *text, char *path)
{
	int fd;

	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		perror(path);
	if (fd >= 0)
		close(fd);
	return path;
}

/* text with its newlines as "\\n", for a one-line description */
static const char *shown(const char *text)
{
	static char out[64];
	size_t k = 0;

	for (; *text && k + 3 < sizeof(out); text++) {
		if (*text == '\n') {
			out[k++] = '\\';
			out[k++] = 'n';
		} else {
			out[k++] = *text;
		}
	}
	out[k] = '\0';
	return out;
}

static void u64_is(const char *text, uint64_t want)
{
	char path[PATH_MAX];
	uint64_t v = 0;
	int rc = smallfile_u64(put("n", text, path), &v);

	tap_ok(rc == 0 && v == want, "u64 of '%s' (got rc %d, %llu)",
	       shown(text), rc, (unsigned long long)v);
}

static void u64_bad(const char *text)
{
	char path[PATH_MAX];
	uint64_t v;
	int rc = smallfile_u64(put("n", text, path), &v);

	tap_ok(rc < 0 && errno == EINVAL, "u64 of '%s' is EINVAL", shown(text));
}

int main(void)
{
	char path[PATH_MAX], link[PATH_MAX], buf[8], big[4096];
	uint64_t v;
	ssize_t n;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	u64_is("123\n", 123);
	u64_is("0", 0);
	u64_is("max\n", UINT64_MAX);
	u64_is("9223372036854771712 \n", 9223372036854771712ull);
	u64_bad("12x\n");
	u64_bad("");
	u64_bad("-1\n");
	/* what the fuzzer found: a blank in the first 63 bytes is not the
	 * end of the file, nor is a NUL */
	u64_bad("5                                                             "
		"         7\n");
	tap_ok(smallfile_parse_u64("12\0x\n", 5, &v) < 0 && errno == EINVAL,
	       "a NUL byte in a number is EINVAL");
	tap_ok(smallfile_parse_u64("max \n\n", 6, &v) == 0 && v == UINT64_MAX,
	       "max of bytes not NUL-terminated");

	n = smallfile_read(put("s", "abcdefghij", path), buf, sizeof(buf));
	tap_ok(n == 7 && strcmp(buf, "abcdefg") == 0,
	       "what does not fit is left unread (got %zd, '%s')", n, buf);
	n = smallfile_read(put("e", "", path), buf, sizeof(buf));
	tap_ok(n == 0 && buf[0] == '\0', "an empty file reads 0 bytes");
	snprintf(link, sizeof(link), "%s/link", dir);
	tap_ok(symlink(path, link) == 0 &&
		       smallfile_read(link, buf, sizeof(buf)) < 0 &&
		       errno == ELOOP,
	       "a symbolic link is not followed");
	snprintf(path, sizeof(path), "%s/none", dir);
	tap_ok(smallfile_read(path, buf, sizeof(buf)) < 0 && errno == ENOENT &&
		       buf[0] == '\0',
	       "a missing file is ENOENT");
	tap_ok(smallfile_u64(path, &v) < 0 && errno == ENOENT,
	       "a missing number is ENOENT");
	n = smallfile_read("/proc/self/stat", big, sizeof(big));
	tap_ok(n > 0 && (size_t)n == strlen(big) && strchr(big, ')'),
	       "/proc/self/stat read whole (%zd bytes)", n);

	unlink(link);
	unlink(put("n", "", path));
	unlink(put("s", "", path));
	unlink(put("e", "", path));
	rmdir(dir);
	return tap_done();
}
