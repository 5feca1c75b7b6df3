/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libFuzzer targets: a scratch tree and input split. */
#include "fuzz_util.h"
#include "msg.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[PATH_MAX];
static pid_t root_owner;

static int rm_one(const char *path, const struct stat *st PALLOC_UNUSED,
		  int flag PALLOC_UNUSED, struct FTW *ftw PALLOC_UNUSED)
{
	return remove(path);
}

static void rm_root(void)
{
	/* a forked child (none here, but cheap to guard) leaves it alone */
	if (root[0] && getpid() == root_owner)
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_root(void)
{
	const char *tmp;

	if (root[0])
		return root;
	tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(root, sizeof(root), "%s/palloc-fuzz-XXXXXX", tmp);
	if (!mkdtemp(root))
		abort();
	root_owner = getpid();
	atexit(rm_root);
	return root;
}

static void mkdirs(char *path)
{
	char *s;

	for (s = path + strlen(fuzz_root()) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			abort();
		*s = '/';
	}
}

void fuzz_write(const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX];
	const char *p = data;
	ssize_t w;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", fuzz_root(), rel) >=
	    sizeof(path))
		abort();
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 && errno == ENOENT) {
		mkdirs(path);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		abort();
	while (len) {
		w = write(fd, p, len);
		if (w <= 0)
			abort();
		p += w;
		len -= (size_t)w;
	}
	close(fd);
}

void fuzz_unlink(const char *rel)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", fuzz_root(), rel) >=
	    sizeof(path))
		abort();
	if (unlink(path) < 0 && errno != ENOENT)
		abort();
}

size_t fuzz_split(const uint8_t *data, size_t size, const uint8_t **parts,
		  size_t *lens, size_t max)
{
	const size_t sl = sizeof(FUZZ_SEP) - 1;
	size_t i, n = 0, start = 0;

	if (!data)
		data = (const uint8_t *)"";
	for (i = 0; i < max; i++) {
		parts[i] = data + size;
		lens[i] = 0;
	}
	for (i = 0; n + 1 < max && i + sl <= size; i++) {
		if (memcmp(data + i, FUZZ_SEP, sl) != 0)
			continue;
		parts[n] = data + start;
		lens[n] = i - start;
		n++;
		start = i + sl;
		i += sl - 1;
	}
	parts[n] = data + start;
	lens[n] = size - start;
	return n + 1;
}

void fuzz_note(const char *what, int rc)
{
	static int verbose = -1;

	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (verbose)
		fprintf(stderr, "%s: %s\n", what, rc == 0 ? "ok" : msg_last());
}
