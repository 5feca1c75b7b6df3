/* SPDX-License-Identifier: MIT */
/*
 * Profiles from before an OOM kill (PALLOC_DUMP_AT): the agent finds its
 * memory cgroup's effective limit at start and writes a profile, named
 * "atNN" (%n), the first time the cgroup's usage crosses each threshold.
 *
 * Sources: Documentation/admin-guide/cgroup-v2.rst (memory.current,
 * memory.max), Documentation/admin-guide/cgroup-v1/memory.rst
 * (memory.usage_in_bytes, memory.limit_in_bytes), proc(5) for
 * /proc/self/cgroup and /proc/self/mountinfo. The commands read the same
 * files with libcore/tools/cgroup.c; the agent cannot (stdio, malloc), so this
 * is its own small reader: stack buffers, each file opened, read and
 * closed at once (no descriptor is kept), agent_lines() for /proc.
 *
 * The effective limit is the smallest finite limit on the path from the
 * process's cgroup up to the hierarchy's root (a parent's limit caps its
 * children); the usage read is that of the cgroup holding it, the one
 * whose limit the OOM killer will enforce.
 */
#include "agent_int.h"
#include "agent/lines.h"
#include "fmt.h"
#include "msg.h"
#include "num.h"
#include "pprof_comments.h"
#include "smallfile.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

/* Below this many ns since the last read, read usage only when the
 * heap has grown by 1 % of the limit. */
#define READ_EVERY_NS 100000000u
/* v1's "no limit" (PAGE_COUNTER_MAX pages) and anything above. */
#define UNLIMITED_MIN 0x7fffffffffff0000ull

static struct {
	unsigned thresholds[NUM_PERCENTS_MAX]; /* ascending, percent */
	size_t n;
	unsigned done; /* bit i: thresholds[i] crossed (this process) */
	uint64_t limit;
	char usage_file[PATH_MAX];
	char sysroot[PATH_MAX / 4];
	int version;
	bool started; /* agent_pressure_start() ran */
	uint64_t next_ns;
	/* Bytes the program's threads allocated since the last read (each
	 * adds its own growth at its slow path), and the flag of the one
	 * thread reading. */
	uint64_t grown;
	int checking;
} pr;

/* This thread's allocated bytes when it last added to pr.grown. */
static __thread uint64_t grown_mark __attribute__((tls_model("initial-exec")));

/* ---- configuration ---- */

/* Parse "80,90,95" or "0" into pr (num_parse_percents()): 0 or -1. */
static int parse_thresholds(const char *s)
{
	return num_parse_percents(s, pr.thresholds, &pr.n);
}

/* ---- reading cgroup files ---- */

/* The number in the file at path (a "max" or huge value: UINT64_MAX).
 * 0, or -1 when unreadable or not a number. */
static int read_u64(const char *path, uint64_t *out)
{
	if (smallfile_u64(path, out) < 0)
		return -1;
	if (*out >= UNLIMITED_MIN)
		*out = UINT64_MAX;
	return 0;
}

/* What /proc/self/cgroup and /proc/self/mountinfo say. */
struct cg_find {
	char v2_path[PATH_MAX / 2], v1_path[PATH_MAX / 2];
	char v2_root[PATH_MAX / 2], v2_mount[PATH_MAX / 2];
	char v1_root[PATH_MAX / 2], v1_mount[PATH_MAX / 2];
};

static void copy_field(char *out, size_t cap, const char *s, size_t len)
{
	if (len >= cap)
		len = 0; /* too long: as if absent */
	memcpy(out, s, len);
	out[len] = '\0';
}

/* "0::/a/b" (v2) and "4:memory:/a/b" or "4:cpu,memory:/a/b" (v1). */
static void cgroup_line(const char *line, size_t len, void *arg)
{
	struct cg_find *f = arg;
	const char *c1 = memchr(line, ':', len), *c2;
	const char *end = line + len;

	if (!c1)
		return;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2 || c2[1] != '/')
		return;
	if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0') {
		copy_field(f->v2_path, sizeof(f->v2_path), c2 + 1,
			   (size_t)(end - c2 - 1));
		return;
	}
	for (const char *s = c1 + 1; s < c2;) {
		const char *e = memchr(s, ',', (size_t)(c2 - s));

		if (!e)
			e = c2;
		if (e - s == 6 && memcmp(s, "memory", 6) == 0)
			copy_field(f->v1_path, sizeof(f->v1_path), c2 + 1,
				   (size_t)(end - c2 - 1));
		s = e + 1;
	}
}

/*
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPER":
 * the first cgroup2 mount, and the first cgroup mount whose super options
 * name memory. Paths with escapes (\040) are skipped.
 */
static void mount_line(const char *line, size_t len, void *arg)
{
	struct cg_find *f = arg;
	const char *field[16];
	size_t flen[16], nf = 0, dash = 0;
	const char *s = line, *end = line + len, *sep = line;

	/* Most lines are not cgroup mounts: rejected before the split, at
	 * the first " - " (memchr: memmem costs more than the split). */
	if (len < 3)
		return;
	while ((sep = memchr(sep + 1, '-', (size_t)(end - sep - 1))) &&
	       (sep[-1] != ' ' || sep + 1 >= end || sep[1] != ' '))
		;
	if (!sep || (size_t)(end - sep) < 2 + 6 || memcmp(sep + 2, "cgroup", 6))
		return;
	while (s < end && nf < 16) {
		const char *e = memchr(s, ' ', (size_t)(end - s));

		if (!e)
			e = end;
		field[nf] = s;
		flen[nf] = (size_t)(e - s);
		if (flen[nf] == 1 && *s == '-' && !dash)
			dash = nf;
		nf++;
		s = e + 1;
	}
	if (!dash || dash + 3 >= nf || nf < 5 || memchr(line, '\\', len))
		return;
	if (flen[dash + 1] == 7 && memcmp(field[dash + 1], "cgroup2", 7) == 0) {
		if (!f->v2_mount[0]) {
			copy_field(f->v2_root, sizeof(f->v2_root), field[3],
				   flen[3]);
			copy_field(f->v2_mount, sizeof(f->v2_mount), field[4],
				   flen[4]);
		}
		return;
	}
	if (flen[dash + 1] != 6 || memcmp(field[dash + 1], "cgroup", 6) != 0 ||
	    f->v1_mount[0])
		return;
	for (const char *o = field[dash + 3], *oe = o + flen[dash + 3];
	     o < oe;) {
		const char *e = memchr(o, ',', (size_t)(oe - o));

		if (!e)
			e = oe;
		if (e - o == 6 && memcmp(o, "memory", 6) == 0) {
			copy_field(f->v1_root, sizeof(f->v1_root), field[3],
				   flen[3]);
			copy_field(f->v1_mount, sizeof(f->v1_mount), field[4],
				   flen[4]);
		}
		o = e + 1;
	}
}

/* Has path a "." or ".." component? */
static bool has_dot_component(const char *path)
{
	for (const char *c = path; *c; c++) {
		if (c != path && c[-1] != '/')
			continue;
		if (c[0] == '.' && (!c[1] || c[1] == '/' ||
				    (c[1] == '.' && (!c[2] || c[2] == '/'))))
			return true;
	}
	return false;
}

/*
 * The directory of cgroup path under a mount of root at mount, with the
 * sysroot prefix, into out; its length, 0 when the path is not under
 * root or does not fit. A path with a ".." component (a cgroup outside
 * our cgroup namespace shows as "/../x") is not under the mount: the
 * walk up to the mount point would read cgroups that are not its
 * ancestors, or leave the mount.
 */
static size_t cgroup_dir(char *out, size_t cap, const char *path,
			 const char *root, const char *mount)
{
	size_t rl = strlen(root);
	struct fmt_buf b;

	if (!mount[0] || !path[0] || has_dot_component(path) ||
	    has_dot_component(mount))
		return 0;
	if (strcmp(root, "/") == 0)
		rl = 0;
	else if (strncmp(path, root, rl) != 0 ||
		 (path[rl] != '/' && path[rl] != '\0'))
		return 0;
	fmt_init(&b, out, cap);
	fmt_append(&b, "%s%s%s", pr.sysroot, mount, path + rl);
	if (b.len >= cap - 32)
		return 0;
	while (b.len > 1 && out[b.len - 1] == '/')
		out[--b.len] = '\0';
	return b.len;
}

/*
 * Walk from dir up to the mount point (its first mlen bytes): the
 * smallest finite limit, and the usage file of the cgroup holding it.
 */
static bool find_limit(char *dir, size_t mlen, const char *limit_name,
		       const char *usage_name)
{
	size_t len = strlen(dir);

	pr.limit = UINT64_MAX;
	for (;;) {
		char file[PATH_MAX];
		struct fmt_buf b;
		uint64_t v;

		fmt_init(&b, file, sizeof(file));
		fmt_append(&b, "%s/%s", dir, limit_name);
		if (read_u64(file, &v) == 0 && v && v < pr.limit) {
			pr.limit = v;
			fmt_init(&b, pr.usage_file, sizeof(pr.usage_file));
			fmt_append(&b, "%s/%s", dir, usage_name);
		}
		if (len <= mlen)
			break;
		while (len > mlen && dir[len - 1] != '/')
			len--;
		if (len > mlen)
			len--;
		dir[len] = '\0';
	}
	return pr.limit != UINT64_MAX;
}

/* Find the effective limit (v2 first, as libcore/tools/cgroup.c does). */
static void find_cgroup(void)
{
	struct cg_find f;
	char dir[PATH_MAX], file[PATH_MAX + 32];
	struct fmt_buf b;
	size_t mlen;

	/* Empty strings: not a memset of its 12 KiB. */
	f.v2_path[0] = f.v1_path[0] = f.v2_root[0] = f.v2_mount[0] = '\0';
	f.v1_root[0] = f.v1_mount[0] = '\0';
	fmt_init(&b, file, sizeof(file));
	fmt_append(&b, "%s/proc/self/cgroup", pr.sysroot);
	if (agent_lines(file, cgroup_line, &f) < 0)
		return;
	fmt_init(&b, file, sizeof(file));
	fmt_append(&b, "%s/proc/self/mountinfo", pr.sysroot);
	if (agent_lines(file, mount_line, &f) < 0)
		return;
	if (cgroup_dir(dir, sizeof(dir), f.v2_path, f.v2_root, f.v2_mount)) {
		mlen = strlen(pr.sysroot) + strlen(f.v2_mount);
		if (find_limit(dir, mlen, "memory.max", "memory.current")) {
			pr.version = 2;
			return;
		}
	}
	if (cgroup_dir(dir, sizeof(dir), f.v1_path, f.v1_root, f.v1_mount)) {
		mlen = strlen(pr.sysroot) + strlen(f.v1_mount);
		if (find_limit(dir, mlen, "memory.limit_in_bytes",
			       "memory.usage_in_bytes"))
			pr.version = 1;
	}
}

/* The usage in tenths of a percent of the limit; -1 when unreadable. */
static int64_t usage_tenths(uint64_t *usage)
{
	if (read_u64(pr.usage_file, usage) < 0 || *usage == UINT64_MAX)
		return -1;
	return (int64_t)((double)*usage * 1000.0 / (double)pr.limit);
}

/*
 * A profile is written when usage crosses a threshold upward: the ones
 * usage is already at when the program starts count as crossed (or every
 * program started in a cgroup under pressure, each compiler of a build,
 * would write a profile at once).
 */
static void baseline(void)
{
	uint64_t usage;
	int64_t t;

	if (!pr.limit || (t = usage_tenths(&usage)) < 0)
		return;
	for (size_t i = 0; i < pr.n; i++)
		if (t >= (int64_t)pr.thresholds[i] * 10)
			pr.done |= 1u << i;
}

void agent_pressure_init(void)
{
	const char *v = getenv("PALLOC_DUMP_AT");
	const char *root = getenv("PALLOC_SYSROOT");

	pr.limit = 0;
	if (v && parse_thresholds(v) < 0) {
		fmt_warn("PALLOC_DUMP_AT=%s: expected percentages from 1 to "
			 "100 separated by commas, or 0; using 80,90,95",
			 v);
		v = NULL;
	}
	if (!v)
		(void)parse_thresholds("80,90,95");
	/* For tests: read cgroup files under a directory (the agent runs
	 * only without AT_SECURE). */
	if (root && strlen(root) < sizeof(pr.sysroot) && root[0] == '/')
		memcpy(pr.sysroot, root, strlen(root) + 1);
}

void agent_pressure_start(void)
{
	if (pr.started || !pr.n)
		return;
	pr.started = true;
	find_cgroup();
	if (!pr.version)
		pr.limit = 0;
	pr.next_ns = 0;
	baseline();
}

bool agent_pressure_on(void)
{
	return pr.limit != 0 && pr.done != (1u << pr.n) - 1;
}

void agent_pressure_after_fork(void)
{
	pr.next_ns = 0;
	pr.grown = 0;
	pr.checking = 0;
}

/* ---- the check ---- */

/*
 * Read the usage and write a profile for the highest threshold newly
 * crossed (the lower ones are then done too: one profile per read).
 * Returns the usage in percent of the limit (0 when unreadable).
 */
static unsigned check_now(void)
{
	char comment[PATH_MAX + 256], seq[8];
	struct fmt_buf b;
	uint64_t usage, tenths;
	struct timespec ts;
	int hit = -1;
	int64_t t = usage_tenths(&usage);

	if (t < 0)
		return 0;
	tenths = (uint64_t)t;
	for (size_t i = 0; i < pr.n; i++)
		if (!(pr.done & (1u << i)) &&
		    tenths >= (uint64_t)pr.thresholds[i] * 10)
			hit = (int)i;
	if (hit < 0)
		return (unsigned)(tenths / 10);
	pr.done |= (1u << (hit + 1)) - 1;
	clock_gettime(CLOCK_REALTIME, &ts);
	fmt_init(&b, seq, sizeof(seq));
	fmt_append(&b, "at%u", pr.thresholds[hit]);
	pprof_comment_format_pressure(comment, sizeof(comment),
				      &(const struct pprof_comment_pressure){
					      .version = (unsigned)pr.version,
					      .usage = usage,
					      .limit = pr.limit,
					      .tenths = tenths,
					      .threshold = pr.thresholds[hit],
					      .sec = (int64_t)ts.tv_sec,
					      .ms = ts.tv_nsec / 1000000,
					      .usage_file = pr.usage_file,
				      });
	if (agent_dump_pressure(seq, comment) < 0 && errno != ESHUTDOWN)
		fmt_warn("pressure profile %s not written: %s", seq,
			 msg_last());
	return (unsigned)(tenths / 10);
}

void agent_pressure_safe_point(uint64_t now, uint64_t alloc_bytes)
{
	uint64_t grown;

	if (!agent_pressure_on())
		return;
	grown = __atomic_add_fetch(&pr.grown, alloc_bytes - grown_mark,
				   __ATOMIC_RELAXED);
	grown_mark = alloc_bytes;
	/* At most every 100 ms, unless the heap grew by 1 % of the limit
	 * since: a leak that fills the limit in 200 ms is still seen at
	 * each threshold. */
	if (now < __atomic_load_n(&pr.next_ns, __ATOMIC_RELAXED) &&
	    grown < pr.limit / 100)
		return;
	if (__atomic_exchange_n(&pr.checking, 1, __ATOMIC_ACQUIRE))
		return; /* another thread reads it now */
	__atomic_store_n(&pr.next_ns, now + READ_EVERY_NS, __ATOMIC_RELAXED);
	__atomic_store_n(&pr.grown, 0, __ATOMIC_RELAXED);
	(void)check_now();
	__atomic_store_n(&pr.checking, 0, __ATOMIC_RELEASE);
}
