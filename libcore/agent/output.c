/* SPDX-License-Identifier: MIT */
/* Where the agent's profiles go: a file, written safely. */
#include "agent_int.h"
#include "agent/unseen.h"
#include "fmt.h"
#include "msg.h"
#include "pattern.h"
#include "pprof_pack.h"
#include "safefile.h"
#include "smallfile.h"

#include <fcntl.h>
#include <unistd.h>

/*
 * With LD_PRELOAD alone the agent writes its profiles itself, with
 * safefile.h (never through a symlink, never into a FIFO or device,
 * exclusive temporaries, mode 0600). Under palloc-run it writes none:
 * palloc-run makes them from the record (agent.c), and there is no
 * channel between the two (PALLOC_COLLECT, which palloc-run set before,
 * is ignored).
 */

static char exe_name[64];		 /* %e, captured at start */
static const mode_t profile_mode = 0600; /* profiles are their owner's */

const char *agent_program_name(void)
{
	if (agent_mode == AGENT_OFF)
		return "";
	return exe_name;
}

/*
 * A Go program: its runtime keeps its heap itself and ends the process
 * with a raw exit_group, past every exit handler, so the agent sees only
 * cgo's mallocs and writes no profile at exit (palloc-run writes it from
 * the record). Said at start.
 */
static const char go_note[] =
	"a Go program: the Go runtime keeps its own heap (not malloc's), so "
	"palloc sees only C allocations, and it exits without running exit "
	"handlers (no exit profile but palloc-run's, from the record); use "
	"runtime/pprof's heap profile";

void agent_output_init(void)
{
	pattern_exe_name(exe_name, sizeof(exe_name));
	if (unseen_is_go())
		fmt_warn("warning: '%s' is %s", exe_name, go_note);
}

/*
 * The process title as it reads now (/proc/self/cmdline: a program may
 * have written over its argv), spaces for NULs and '?' for control
 * characters, into out[cap]; "" when unreadable.
 */
void agent_output_title(char *out, size_t cap)
{
	ssize_t n = smallfile_read("/proc/self/cmdline", out, cap);

	if (n < 0)
		n = 0;
	while (n > 0 && (out[n - 1] == '\0' || out[n - 1] == ' '))
		n--;
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)out[i];

		if (c == '\0')
			out[i] = ' ';
		else if (c < 0x20 || c == 0x7f)
			out[i] = '?';
	}
	out[n] = '\0';
}

int agent_output_write(const struct pprof_profile *p, long pid,
		       const char *path, const char *seq, char *written,
		       size_t cap)
{
	char name[PATH_MAX + 64];
	struct fmt_buf b;
	struct stat st;
	void *buf;
	size_t len;
	int rc, err;

	if (pprof_pack(p, true, &buf, &len) < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (!path) {
		if (pattern_expand(name, sizeof(name), agent_cfg.output, pid,
				   exe_name, seq, (long long)time(NULL)) < 0) {
			pprof_pack_free(p, buf);
			errno = ENAMETOOLONG;
			return msg_set_errno(errno, "cannot name the profile");
		}
		path = name;
	}
	if (written) {
		fmt_init(&b, written, cap);
		fmt_append(&b, "%s", path);
	}
	rc = safefile_write_file(path, profile_mode, buf, len, &st);
	err = errno;
	pprof_pack_free(p, buf);
	errno = err;
	return rc < 0 ? -1 : 0;
}
