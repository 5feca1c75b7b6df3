/* SPDX-License-Identifier: MIT */
/* Where the agent's profiles go: palloc-run's channel, else a safe file. */
#include "agent_int.h"
#include "agent/unseen.h"
#include "deliver.h"
#include "fmt.h"
#include "msg.h"
#include "pattern.h"
#include "pprof_pack.h"
#include "safefile.h"
#include "smallfile.h"

#include <fcntl.h>
#include <unistd.h>

/*
 * Profiles are written by palloc-run when the process can reach it
 * (PALLOC_COLLECT, deliver.h): a process that has dropped privileges,
 * chrooted or closed its fds still delivers, and the file belongs to the
 * user who ran palloc-run. Without palloc-run (LD_PRELOAD alone), or when
 * the channel fails (another network namespace, palloc-run gone), the
 * agent writes the file itself with safefile.h (never through a symlink,
 * never into a FIFO or device, exclusive temporaries, mode 0600) and
 * tells palloc-run which file it wrote, or why it could not.
 */

static char exe_name[64];		 /* %e, captured at start */
static char collect[108];		 /* PALLOC_COLLECT, "" for none */
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
 * cgo's mallocs and writes no profile at exit. Said at start, and sent
 * with the hello so that palloc-run names the reason, not exec or setuid.
 */
static const char go_note[] =
	"a Go program: the Go runtime keeps its own heap (not malloc's) and "
	"exits without running exit handlers, so palloc sees only C "
	"allocations and writes no profile at exit; use runtime/pprof's heap "
	"profile";

/* A hello for palloc-run: this process exists and will write profiles
 * (so that one that never does is named), and why it may not. Never
 * waits. */
static void hello(void)
{
	struct deliver_header h;

	if (!collect[0])
		return;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, DELIVER_MAGIC, sizeof(h.magic));
	h.kind = DELIVER_HELLO;
	memcpy(h.program, exe_name, sizeof(h.program));
	_Static_assert(sizeof(go_note) <= sizeof(h.why), "note too long");
	if (unseen_is_go())
		memcpy(h.why, go_note, sizeof(go_note));
	(void)deliver_send(collect, &h, NULL, NULL, 0);
}

bool agent_output_channel(void)
{
	return collect[0] != '\0';
}

void agent_output_init(void)
{
	const char *c = getenv(DELIVER_ENV);

	pattern_exe_name(exe_name, sizeof(exe_name));
	collect[0] = '\0';
	if (c && *c) {
		if (c[0] == '@' && strlen(c) < sizeof(collect))
			memcpy(collect, c, strlen(c) + 1);
		else
			fmt_warn("%s=%s: not an abstract socket name (@NAME); "
				 "writing profiles directly",
				 DELIVER_ENV, c);
	}
	if (unseen_is_go() && !collect[0])
		fmt_warn("warning: '%s' is %s", exe_name, go_note);
	hello();
}

void agent_output_after_fork(void)
{
	hello();
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

static void header_init(struct deliver_header *h, enum deliver_kind kind,
			const char *seq)
{
	struct fmt_buf b;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, DELIVER_MAGIC, sizeof(h->magic));
	h->kind = kind;
	memcpy(h->program, exe_name, sizeof(h->program));
	fmt_init(&b, h->seq, sizeof(h->seq));
	fmt_append(&b, "%s", seq);
	agent_output_title(h->title, sizeof(h->title));
}

/*
 * Tell palloc-run about a file the agent wrote itself (err 0, st its
 * identity) or could not write (err, msg_last() why). Best effort.
 */
static void announce(const char *seq, const char *path, int err,
		     const struct stat *st)
{
	struct deliver_header h;
	struct fmt_buf b;

	header_init(&h, err ? DELIVER_FAILED : DELIVER_WRITTEN, seq);
	fmt_init(&b, h.path, sizeof(h.path));
	fmt_append(&b, "%s", path);
	if (err) {
		fmt_init(&b, h.why, sizeof(h.why));
		fmt_append(&b, "%s", msg_last());
	} else {
		h.dev = (uint64_t)st->st_dev;
		h.ino = (uint64_t)st->st_ino;
	}
	(void)deliver_send(collect, &h, NULL, NULL, DELIVER_HELLO_TIMEOUT_MS);
}

/*
 * Hand buf to palloc-run. 0: palloc-run wrote it (its path in
 * written); 1: palloc-run answered that it could not (msg_set() why,
 * errno: the agent must not write it either); -1: the channel failed.
 */
static int deliver(const void *buf, size_t len, const char *seq, char *written,
		   size_t cap)
{
	struct deliver_header h;
	struct deliver_reply r;
	struct fmt_buf b;

	header_init(&h, DELIVER_PROFILE, seq);
	h.length = len;
	if (deliver_send(collect, &h, buf, &r, DELIVER_TIMEOUT_MS) < 0)
		return -1;
	if (written) {
		fmt_init(&b, written, cap);
		fmt_append(&b, "%s", r.err ? "(palloc-run)" : r.text);
	}
	if (r.err == 0)
		return 0;
	errno = r.err;
	msg_set("palloc-run could not write it: %s", r.text);
	return 1;
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
	bool pattern = !path;

	if (pprof_pack(p, true, &buf, &len) < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (pattern && collect[0]) {
		rc = deliver(buf, len, seq, written, cap);
		if (rc >= 0) {
			err = errno;
			pprof_pack_free(p, buf);
			errno = err;
			return rc ? -1 : 0;
		}
	}
	if (pattern) {
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
	if (pattern && collect[0] && rc <= 0)
		announce(seq, path, rc < 0 ? err : 0, &st);
	errno = err;
	return rc < 0 ? -1 : 0;
}
