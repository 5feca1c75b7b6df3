/* SPDX-License-Identifier: MIT */
/* /proc/PID readers for palloc-smaps: residency per process and per mapping. */
#include "procfs.h"
#include "grow.h"
#include "json.h"
#include "msg.h"
#include "prom.h"
#include "smallfile.h"

#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

/* A kernel field ("Rss", "VmPeak") and its JSON key with the unit. */
struct field_name {
	const char *kernel;
	const char *json;
};

static const struct field_name fields[PROCFS_NFIELDS] = {
	[PROCFS_RSS] = {"Rss", "rss_bytes"},
	[PROCFS_PSS] = {"Pss", "pss_bytes"},
	[PROCFS_PSS_DIRTY] = {"Pss_Dirty", "pss_dirty_bytes"},
	[PROCFS_PSS_ANON] = {"Pss_Anon", "pss_anon_bytes"},
	[PROCFS_PSS_FILE] = {"Pss_File", "pss_file_bytes"},
	[PROCFS_PSS_SHMEM] = {"Pss_Shmem", "pss_shmem_bytes"},
	[PROCFS_SHARED_CLEAN] = {"Shared_Clean", "shared_clean_bytes"},
	[PROCFS_SHARED_DIRTY] = {"Shared_Dirty", "shared_dirty_bytes"},
	[PROCFS_PRIVATE_CLEAN] = {"Private_Clean", "private_clean_bytes"},
	[PROCFS_PRIVATE_DIRTY] = {"Private_Dirty", "private_dirty_bytes"},
	[PROCFS_REFERENCED] = {"Referenced", "referenced_bytes"},
	[PROCFS_ANONYMOUS] = {"Anonymous", "anonymous_bytes"},
	[PROCFS_KSM] = {"KSM", "ksm_bytes"},
	[PROCFS_LAZY_FREE] = {"LazyFree", "lazy_free_bytes"},
	[PROCFS_ANON_HUGE_PAGES] = {"AnonHugePages", "anon_huge_pages_bytes"},
	[PROCFS_SHMEM_PMD_MAPPED] = {"ShmemPmdMapped",
				     "shmem_pmd_mapped_bytes"},
	[PROCFS_FILE_PMD_MAPPED] = {"FilePmdMapped", "file_pmd_mapped_bytes"},
	[PROCFS_SHARED_HUGETLB] = {"Shared_Hugetlb", "shared_hugetlb_bytes"},
	[PROCFS_PRIVATE_HUGETLB] = {"Private_Hugetlb", "private_hugetlb_bytes"},
	[PROCFS_SWAP] = {"Swap", "swap_bytes"},
	[PROCFS_SWAP_PSS] = {"SwapPss", "swap_pss_bytes"},
	[PROCFS_LOCKED] = {"Locked", "locked_bytes"},
};

/*
 * kB fields of per-mapping smaps that are not amounts of memory held
 * (Size is the mapping's length; the page sizes are properties): they are
 * neither summed nor reported as unknown.
 */
static const char *const ignored_fields[] = {
	"Size",
	"KernelPageSize",
	"MMUPageSize",
};

static const struct field_name status_fields[PROCFS_ST_NFIELDS] = {
	[PROCFS_ST_VM_PEAK] = {"VmPeak", "vm_peak_bytes"},
	[PROCFS_ST_VM_SIZE] = {"VmSize", "vm_size_bytes"},
	[PROCFS_ST_VM_HWM] = {"VmHWM", "vm_hwm_bytes"},
	[PROCFS_ST_VM_RSS] = {"VmRSS", "vm_rss_bytes"},
	[PROCFS_ST_RSS_ANON] = {"RssAnon", "rss_anon_bytes"},
	[PROCFS_ST_RSS_FILE] = {"RssFile", "rss_file_bytes"},
	[PROCFS_ST_RSS_SHMEM] = {"RssShmem", "rss_shmem_bytes"},
	[PROCFS_ST_VM_SWAP] = {"VmSwap", "vm_swap_bytes"},
};

/* The largest guard page below a thread stack we recognise. */
#define PROCFS_GUARD_MAX (64 * 1024)

static const char *const kind_names[] = {
	[PROCFS_KIND_HEAP] = "heap", [PROCFS_KIND_STACK] = "stack",
	[PROCFS_KIND_ANON] = "anon", [PROCFS_KIND_SHMEM] = "shmem",
	[PROCFS_KIND_FILE] = "file", [PROCFS_KIND_SPECIAL] = "special",
};

const char *procfs_field_kernel_name(enum procfs_field field)
{
	return fields[field].kernel;
}

const char *procfs_field_json_name(enum procfs_field field)
{
	return fields[field].json;
}

const char *procfs_status_json_name(enum procfs_status_field f)
{
	return status_fields[f].json;
}

const char *procfs_kind_name(enum procfs_kind kind)
{
	return kind_names[kind];
}

static const char *root_of(const char *root)
{
	return root ? root : "";
}

int procfs_read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *b, *nb;
	ssize_t r;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		msg_set_errno(e, "cannot read '%s'", path);
		errno = e;
		return -1;
	}
	b = malloc(cap);
	if (!b) {
		close(fd);
		msg_set_errno(ENOMEM, "cannot read '%s'", path);
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		if (cap - used < 2048) {
			nb = realloc(b, cap * 2);
			if (!nb) {
				e = ENOMEM;
				goto fail;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + used, cap - used - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			goto fail;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	close(fd);
	b[used] = '\0';
	*buf = b;
	*len = used;
	return 0;
fail:
	close(fd);
	free(b);
	msg_set_errno(e, "cannot read '%s'", path);
	errno = e;
	return -1;
}

int procfs_error(int e, const char *fmt, ...)
{
	char text[MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msg_set("%s", text);
	errno = e;
	return -1;
}

pid_t procfs_parent(pid_t pid)
{
	char path[64], buf[1024], *rp, *end;
	long pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (smallfile_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* "PID (COMM) S PPID ...": COMM may hold anything, ')' included */
	rp = strrchr(buf, ')');
	if (!rp || rp[1] != ' ' || !rp[2] || rp[3] != ' ')
		return -1;
	pp = strtol(rp + 4, &end, 10);
	if (end == rp + 4 || *end != ' ')
		return -1;
	return (pid_t)pp;
}

bool procfs_pid_exists(const char *root, pid_t pid)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/proc/%d", root_of(root), (int)pid);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Read ROOT/proc/PID/NAME, turning the kernel's answers into the error
 * classes: a missing /proc/PID is ENOENT "no such process"; ESRCH (the mm
 * is gone: exited, zombie, kernel thread) keeps its class.
 */
static int read_pid_file(const char *root, pid_t pid, const char *name,
			 char **buf, size_t *len)
{
	char path[PATH_MAX];
	int e;

	snprintf(path, sizeof(path), "%s/proc/%d/%s", root_of(root), (int)pid,
		 name);
	if (procfs_read_file(path, buf, len) == 0)
		return 0;
	e = errno;
	if (e == ENOENT && !procfs_pid_exists(root, pid))
		return procfs_error(ENOENT, "no such process '%d'", (int)pid);
	if (e == ESRCH)
		return procfs_error(ESRCH,
				    "cannot read process '%d': it exited or "
				    "has no user memory",
				    (int)pid);
	errno = e;
	return -1;
}

/* Parse an unsigned decimal at *P, moving *P past it. */
static bool parse_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	*p = s;
	*out = v;
	return true;
}

static bool skip_spaces(const char **p)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* Index of NAME (NLEN bytes) in the known fields, or -1. */
static int known_field(const char *name, size_t nlen)
{
	size_t i;

	for (i = 0; i < PROCFS_NFIELDS; i++)
		if (strlen(fields[i].kernel) == nlen &&
		    memcmp(fields[i].kernel, name, nlen) == 0)
			return (int)i;
	return -1;
}

static bool ignored_field(const char *name, size_t nlen)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ignored_fields); i++)
		if (strlen(ignored_fields[i]) == nlen &&
		    memcmp(ignored_fields[i], name, nlen) == 0)
			return true;
	return false;
}

/*
 * Add the line "NAME: N kB" (NAME is NLEN bytes; the line ends at '\n' or
 * NUL) into U. A known field must have that shape, or *BAD is set; an
 * unknown one with that shape is kept in U->raw, any other unknown line
 * (THPeligible: 0, VmFlags: rd wr, ProtectionKey: 0) is not a size and
 * is skipped. Returns 1 when used, 0 when not, -1 on ENOMEM.
 */
static int add_kb_line(struct procfs_usage *u, const char *line, size_t nlen,
		       bool *bad)
{
	const char *p = line + nlen + 1;
	int known = known_field(line, nlen);
	bool must = known >= 0 || ignored_field(line, nlen);
	struct procfs_raw *nr;
	uint64_t kb;
	size_t i;

	*bad = false;
	if (!skip_spaces(&p) || !parse_u64(&p, &kb) ||
	    strncmp(p, " kB", 3) != 0 || (p[3] != '\n' && p[3] != '\0') ||
	    kb > UINT64_MAX / 1024) {
		*bad = must;
		return 0;
	}
	if (known >= 0) {
		u->v[known] += kb * 1024;
		u->have |= 1u << known;
		return 1;
	}
	if (must)
		return 1;
	for (i = 0; i < u->nraw; i++) {
		if (strlen(u->raw[i].name) == nlen &&
		    memcmp(u->raw[i].name, line, nlen) == 0) {
			u->raw[i].bytes += kb * 1024;
			return 1;
		}
	}
	if (nlen >= sizeof(u->raw[0].name)) {
		*bad = true;
		return 0;
	}
	nr = realloc(u->raw, (u->nraw + 1) * sizeof(*nr));
	if (!nr)
		return -1;
	u->raw = nr;
	memcpy(nr[u->nraw].name, line, nlen);
	nr[u->nraw].name[nlen] = '\0';
	nr[u->nraw].bytes = kb * 1024;
	u->nraw++;
	return 1;
}

/* Length of the field name of LINE ("Rss" in "Rss:   4 kB"), or 0 when
 * LINE is not "Name:" with a name of [A-Za-z0-9_]. */
static size_t field_name_len(const char *line)
{
	size_t n = 0;

	while (isalnum((unsigned char)line[n]) || line[n] == '_')
		n++;
	return line[n] == ':' ? n : 0;
}

void procfs_usage_free(struct procfs_usage *u)
{
	free(u->raw);
	u->raw = NULL;
	u->nraw = 0;
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : p + strlen(p);
}

/* Parse "start-end perms offset dev inode [path]" of a smaps header. */
static bool parse_header(const char *line, struct procfs_mapping *m,
			 char **path)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int pos = 0;
	const char *rest, *eol;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms,
		   &off, &maj, &min, &ino, &pos) != 7 ||
	    strlen(perms) != 4 || end < start)
		return false;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->inode = ino;
	memcpy(m->perms, perms, 5);
	rest = line + pos;
	while (*rest == ' ' || *rest == '\t')
		rest++;
	eol = strchr(rest, '\n');
	if (!eol)
		eol = rest + strlen(rest);
	*path = NULL;
	if (eol > rest) {
		*path = strndup(rest, (size_t)(eol - rest));
		if (!*path)
			return false;
	}
	return true;
}

static bool is_header(const char *line)
{
	return isxdigit((unsigned char)line[0]) && field_name_len(line) == 0 &&
	       strchr(line, '-') != NULL;
}

static enum procfs_kind classify(const struct procfs_mapping *m,
				 const struct procfs_mapping *prev)
{
	const char *p = m->path;

	if (p && strcmp(p, "[heap]") == 0)
		return PROCFS_KIND_HEAP;
	if (p && strncmp(p, "[stack", 6) == 0)
		return PROCFS_KIND_STACK;
	if (p &&
	    (strncmp(p, "/SYSV", 5) == 0 || strncmp(p, "/memfd:", 7) == 0 ||
	     strncmp(p, "/dev/shm/", 9) == 0 ||
	     strncmp(p, "/dev/zero", 9) == 0))
		return PROCFS_KIND_SHMEM;
	if (p && p[0] == '/')
		return PROCFS_KIND_FILE;
	if (p && strncmp(p, "[anon", 5) != 0)
		return PROCFS_KIND_SPECIAL;
	if (m->perms[3] == 's')
		return PROCFS_KIND_SHMEM;
	/*
	 * A thread stack sits directly above its guard page. The guard is
	 * small (one page by default, pthread_attr_setguardsize); glibc's
	 * malloc arenas also follow a PROT_NONE area (the unused tail of the
	 * previous 64 MiB arena heap) but a big one, so the size tells them
	 * apart.
	 */
	if (prev && !prev->path && prev->end == m->start &&
	    prev->end - prev->start <= PROCFS_GUARD_MAX &&
	    strcmp(prev->perms, "---p") == 0 && strcmp(m->perms, "rw-p") == 0)
		return PROCFS_KIND_STACK;
	return PROCFS_KIND_ANON;
}

void procfs_smaps_free(struct procfs_smaps *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->maps[i].path);
		procfs_usage_free(&s->maps[i].usage);
	}
	free(s->maps);
	s->maps = NULL;
	s->n = 0;
}

/* Parse smaps text BUF from PATH into OUT. */
static int parse_smaps(const char *path, const char *buf,
		       struct procfs_smaps *out)
{
	struct procfs_mapping *cur = NULL;
	const char *line;
	size_t cap = 0, lineno = 0;

	memset(out, 0, sizeof(*out));
	for (line = buf; *line; line = next_line(line)) {
		size_t nlen;
		bool bad;

		lineno++;
		if (is_header(line)) {
			char *mpath;

			if (grow_array(&out->maps, &cap, out->n + 1,
				       sizeof(*out->maps)) < 0)
				goto oom;
			cur = &out->maps[out->n];
			memset(cur, 0, sizeof(*cur));
			if (!parse_header(line, cur, &mpath))
				goto bad;
			cur->path = mpath;
			out->n++;
			continue;
		}
		nlen = field_name_len(line);
		if (!cur || nlen == 0)
			goto bad;
		switch (add_kb_line(&cur->usage, line, nlen, &bad)) {
		case -1:
			goto oom;
		case 0:
			/* Non-kB fields: THPeligible, VmFlags, ProtectionKey.
			 */
			if (bad)
				goto bad;
			break;
		default:
			break;
		}
	}
	if (out->n == 0) {
		procfs_smaps_free(out);
		return procfs_error(ESRCH,
				    "no memory mappings in '%s' (the process "
				    "exited or is a kernel thread)",
				    path);
	}
	for (size_t i = 0; i < out->n; i++)
		out->maps[i].kind =
			classify(&out->maps[i], i ? &out->maps[i - 1] : NULL);
	return 0;
bad:
	procfs_smaps_free(out);
	return procfs_error(EINVAL, "cannot parse '%s': line %zu is not smaps",
			    path, lineno);
oom:
	procfs_smaps_free(out);
	return procfs_error(ENOMEM, "cannot read '%s': out of memory", path);
}

int procfs_read_smaps(const char *root, pid_t pid, struct procfs_smaps *out)
{
	char path[PATH_MAX];
	char *buf;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if (read_pid_file(root, pid, "smaps", &buf, &len) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/proc/%d/smaps", root_of(root),
		 (int)pid);
	rc = parse_smaps(path, buf, out);
	free(buf);
	return rc;
}

/* Sum every mapping of S into OUT. */
static int sum_smaps(struct procfs_smaps *s, struct procfs_usage *out)
{
	size_t i, j, k;

	for (i = 0; i < s->n; i++) {
		struct procfs_usage *u = &s->maps[i].usage;

		for (j = 0; j < PROCFS_NFIELDS; j++)
			out->v[j] += u->v[j];
		out->have |= u->have;
		for (j = 0; j < u->nraw; j++) {
			for (k = 0; k < out->nraw; k++)
				if (strcmp(out->raw[k].name, u->raw[j].name) ==
				    0)
					break;
			if (k == out->nraw) {
				struct procfs_raw *nr = realloc(
					out->raw, (k + 1) * sizeof(*nr));

				if (!nr)
					return procfs_error(ENOMEM,
							    "out of memory");
				out->raw = nr;
				nr[k] = u->raw[j];
				nr[k].bytes = 0;
				out->nraw++;
			}
			out->raw[k].bytes += u->raw[j].bytes;
		}
	}
	return 0;
}

int procfs_read_rollup(const char *root, pid_t pid, struct procfs_usage *out,
		       bool *summed)
{
	char path[PATH_MAX];
	const char *line;
	char *buf;
	size_t len, lineno = 0;
	bool seen_header = false;

	memset(out, 0, sizeof(*out));
	if (summed)
		*summed = false;
	snprintf(path, sizeof(path), "%s/proc/%d/smaps_rollup", root_of(root),
		 (int)pid);
	if (read_pid_file(root, pid, "smaps_rollup", &buf, &len) < 0) {
		struct procfs_smaps s;
		int rc;

		if (errno != ENOENT || !procfs_pid_exists(root, pid))
			return -1;
		/* Before Linux 4.14: no smaps_rollup, sum smaps. */
		if (procfs_read_smaps(root, pid, &s) < 0)
			return -1;
		rc = sum_smaps(&s, out);
		procfs_smaps_free(&s);
		if (rc < 0) {
			procfs_usage_free(out);
			return -1;
		}
		if (summed)
			*summed = true;
		goto check;
	}
	if (len == 0) {
		free(buf);
		return procfs_error(EINVAL, "cannot parse '%s': empty file",
				    path);
	}
	for (line = buf; *line; line = next_line(line)) {
		size_t nlen;
		bool bad;
		int r;

		lineno++;
		if (!seen_header && is_header(line)) {
			seen_header = true;
			continue;
		}
		nlen = field_name_len(line);
		if (nlen == 0)
			goto bad;
		r = add_kb_line(out, line, nlen, &bad);
		if (r < 0) {
			free(buf);
			procfs_usage_free(out);
			return procfs_error(ENOMEM,
					    "cannot read '%s': out of memory",
					    path);
		}
		if (r == 0 && bad)
			goto bad;
	}
	free(buf);
	if (!seen_header) {
		procfs_usage_free(out);
		return procfs_error(
			EINVAL, "cannot parse '%s': no [rollup] header", path);
	}
check:
	if (!procfs_has(out, PROCFS_RSS) || !procfs_has(out, PROCFS_PSS)) {
		procfs_usage_free(out);
		return procfs_error(EINVAL,
				    "cannot parse '%s': no Rss or Pss line "
				    "(truncated file?)",
				    path);
	}
	return 0;
bad:
	free(buf);
	procfs_usage_free(out);
	return procfs_error(EINVAL,
			    "cannot parse '%s': line %zu is not "
			    "'Name: N kB'",
			    path, lineno);
}

int procfs_read_status(const char *root, pid_t pid, struct procfs_status *out)
{
	const char *line;
	char *buf;
	size_t len, i;

	memset(out, 0, sizeof(*out));
	if (read_pid_file(root, pid, "status", &buf, &len) < 0)
		return -1;
	for (line = buf; *line; line = next_line(line)) {
		size_t nlen = field_name_len(line);
		const char *p = line + nlen + 1;
		uint64_t kb;

		if (nlen == 0)
			continue;
		if (nlen == 4 && strncmp(line, "Name", 4) == 0) {
			const char *eol;

			skip_spaces(&p);
			eol = strchr(p, '\n');
			len = eol ? (size_t)(eol - p) : strlen(p);
			if (len >= sizeof(out->name))
				len = sizeof(out->name) - 1;
			memcpy(out->name, p, len);
			out->name[len] = '\0';
			continue;
		}
		if (nlen == 5 && strncmp(line, "State", 5) == 0) {
			skip_spaces(&p);
			out->state = *p;
			continue;
		}
		for (i = 0; i < PROCFS_ST_NFIELDS; i++) {
			if (strlen(status_fields[i].kernel) != nlen ||
			    strncmp(status_fields[i].kernel, line, nlen) != 0)
				continue;
			if (!skip_spaces(&p) || !parse_u64(&p, &kb) ||
			    strncmp(p, " kB", 3) != 0 ||
			    kb > UINT64_MAX / 1024) {
				char path[PATH_MAX];

				free(buf);
				snprintf(path, sizeof(path),
					 "%s/proc/%d/status", root_of(root),
					 (int)pid);
				return procfs_error(EINVAL,
						    "cannot parse '%s': bad "
						    "%s line",
						    path,
						    status_fields[i].kernel);
			}
			out->v[i] = kb * 1024;
			out->have |= 1u << i;
		}
	}
	free(buf);
	out->kthread = !(out->have & (1u << PROCFS_ST_VM_SIZE)) &&
		       out->state != 'Z' && out->state != 'X';
	return 0;
}

int procfs_read_comm(const char *root, pid_t pid, char *buf, size_t size)
{
	char *text;
	size_t len;

	if (read_pid_file(root, pid, "comm", &text, &len) < 0)
		return -1;
	if (len && text[len - 1] == '\n')
		text[--len] = '\0';
	snprintf(buf, size, "%s", text);
	free(text);
	return 0;
}

int procfs_read_cmdline(const char *root, pid_t pid, char **out)
{
	char *text;
	size_t len, i;

	*out = NULL;
	if (read_pid_file(root, pid, "cmdline", &text, &len) < 0)
		return -1;
	while (len && text[len - 1] == '\0')
		len--;
	if (len == 0) {
		free(text);
		return 0;
	}
	for (i = 0; i < len; i++)
		if (text[i] == '\0')
			text[i] = ' ';
	text[len] = '\0';
	*out = text;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int procfs_list_pids(const char *root, pid_t **pids, size_t *n)
{
	char path[PATH_MAX];
	struct dirent *d;
	size_t cap = 0, cnt = 0;
	pid_t *v = NULL;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/proc", root_of(root));
	dir = opendir(path);
	if (!dir) {
		int e = errno;

		msg_set_errno(e, "cannot read '%s'", path);
		errno = e;
		return -1;
	}
	while ((d = readdir(dir)) != NULL) {
		const char *s = d->d_name;
		uint64_t pid;

		if (!parse_u64(&s, &pid) || *s || pid == 0 || pid > INT_MAX)
			continue;
		if (grow_array(&v, &cap, cnt + 1, sizeof(*v)) < 0) {
			free(v);
			closedir(dir);
			return procfs_error(ENOMEM,
					    "cannot read '%s': out of memory",
					    path);
		}
		v[cnt++] = (pid_t)pid;
	}
	closedir(dir);
	qsort(v, cnt, sizeof(*v), cmp_pid);
	*pids = v;
	*n = cnt;
	return 0;
}

int procfs_usage_json(json_t *obj, const struct procfs_usage *u)
{
	json_t *raw = json_object();
	size_t i;

	for (i = 0; i < PROCFS_NFIELDS; i++)
		json_set(obj, fields[i].json,
			 json_u64_or_null(procfs_has(u, i), u->v[i]));
	json_set(obj, "uss_bytes",
		 json_u64_or_null(procfs_has(u, PROCFS_PRIVATE_CLEAN) &&
					  procfs_has(u, PROCFS_PRIVATE_DIRTY),
				  procfs_uss(u)));
	for (i = 0; i < u->nraw; i++)
		json_set(raw, u->raw[i].name, json_u64(u->raw[i].bytes));
	json_set(obj, "raw", raw);
	return 0;
}

int procfs_prom_family(FILE *fp, char *name, const char *prefix, size_t field,
		       const char *of_what)
{
	bool uss = field == PROCFS_NFIELDS;
	char text[160];

	snprintf(text, sizeof(text), "%s%s", prefix,
		 uss ? "uss_bytes" : fields[field].json);
	if (prom_name(name, PROM_NAME_MAX, text) < 0)
		return -1;
	snprintf(text, sizeof(text), "%s %s, bytes.",
		 uss ? "Private_Clean + Private_Dirty" : fields[field].kernel,
		 of_what);
	return prom_family(fp, name, PROM_GAUGE, text);
}

int procfs_prom(FILE *fp, const struct procfs_prom_proc *v, size_t n)
{
	char name[PROM_NAME_MAX], pid[16];
	size_t f, i;

	for (f = 0; f <= PROCFS_NFIELDS; f++) {
		bool uss = f == PROCFS_NFIELDS;

		if (procfs_prom_family(
			    fp, name, "smaps_", f,
			    "of the process (/proc/PID/smaps_rollup)") < 0)
			return -1;
		for (i = 0; i < n; i++) {
			const struct procfs_usage *u = v[i].u;
			struct prom_label l[2] = {{"pid", pid},
						  {"command", v[i].command}};

			if (!u || (!uss && !procfs_has(u, f)))
				continue;
			snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
			if (prom_sample_u64(fp, name, l, 2,
					    uss ? procfs_uss(u) : u->v[f]) < 0)
				return -1;
		}
	}
	return 0;
}
