/* SPDX-License-Identifier: MIT */
/* Unit test of the perf map reader (libcore/tools/perfmap.c). */
#include "config.h"
#include "perfmap.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char text[] = "0x1000 40 jit_old\n"
			   "garbage line\n"
			   "2000 zz bad_size\n"
			   "1000 20 LazyCompile:*f /x.js:3:1\n"
			   "3000 10 with_crlf\r\n"
			   "ffffffffffffffff 10 wraps\n"
			   "4000 0 empty\n"
			   "5000 8 last_without_newline";

static int str_is(const char *got, const char *want)
{
	if (!got || !want)
		return got == want;
	return strcmp(got, want) == 0;
}

/*
 * One TAP result for a file at PATH that perfmap_load() must refuse: MADE
 * is what made it (0 on success, else the result is a skip named SKIP);
 * the load as uid ME must fail with errno ERR. Removes PATH.
 */
static void refused(const char *path, uid_t me, int made, int err,
		    const char *what, const char *skip)
{
	if (made != 0) {
		tap_ok(1, "# SKIP %s", skip);
		return;
	}
	errno = 0;
	tap_ok(!perfmap_load(path, &me, 1) && errno == err, "%s", what);
	unlink(path);
}

int main(void)
{
	struct perfmap *m = perfmap_parse(text, sizeof(text) - 1);
	char dir[] = "/tmp/palloc-perfmap.XXXXXX", path[64];
	uid_t me = geteuid();
	int fd;

	tap_ok(m != NULL, "parses");
	tap_ok(perfmap_count(m) == 4, "4 good lines of 8 (%zu)",
	       perfmap_count(m));
	tap_ok(str_is(perfmap_lookup(m, 0x1000), "LazyCompile:*f /x.js:3:1"),
	       "the later line wins where both cover");
	tap_ok(str_is(perfmap_lookup(m, 0x101f), "LazyCompile:*f /x.js:3:1"),
	       "... to its last byte");
	tap_ok(str_is(perfmap_lookup(m, 0x1020), "jit_old"),
	       "the earlier, longer one beyond");
	tap_ok(perfmap_lookup(m, 0x1040) == NULL, "nothing past both");
	tap_ok(perfmap_lookup(m, 0xfff) == NULL, "nothing below");
	tap_ok(str_is(perfmap_lookup(m, 0x3005), "with_crlf"), "CR dropped");
	tap_ok(str_is(perfmap_lookup(m, 0x5000), "last_without_newline"),
	       "a last line without newline, from memory");
	perfmap_free(m);

	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	errno = 0;
	tap_ok(!perfmap_load(path, &me, 1) && errno == ENOENT,
	       "no file: ENOENT");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) < 0 || close(fd) < 0)
		return 99;
	m = perfmap_load(path, &me, 1);
	tap_ok(m && perfmap_count(m) == 3,
	       "from a file: a last line cut short is dropped");
	perfmap_free(m);
	if (me != 0) {
		uid_t other = me + 1;

		errno = 0;
		tap_ok(!perfmap_load(path, &other, 1) && errno == EPERM,
		       "owned by a user not accepted: EPERM");
	} else {
		tap_ok(1, "# SKIP root owns everything it creates");
	}
	unlink(path);
	refused(path, me, mkfifo(path, 0600), EPERM,
		"a FIFO: EPERM, without blocking", "mkfifo");
	refused(path, me, symlink("/etc/passwd", path), ELOOP,
		"a symlink: ELOOP", "symlink");
	rmdir(dir);
	return tap_done();
}
