/* SPDX-License-Identifier: MIT */
/* cgroup v1/v2 memory readers for palloc-cgroup and the /metrics endpoint. */
#include "cgroup.h"
#include "json.h"
#include "msg.h"
#include "num.h"
#include "procfs.h"
#include "prom.h"
#include "smallfile.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * v1 "unlimited" is PAGE_COUNTER_MAX pages = LONG_MAX rounded down to a
 * page: 0x7ffffffffffff000 with 4 KiB pages, 0x7fffffffffff0000 with
 * 64 KiB pages (mm/page_counter.c, include/linux/page_counter.h).
 */
#define V1_UNLIMITED 0x7fffffffffff0000ULL

/* memory.stat keys with a documented unit; others go to "raw". */
struct stat_key {
	const char *key;
	bool bytes; /* a size (else an event count) */
};

/* cgroup-v2.rst, "memory.stat", in its order. */
static const struct stat_key v2_stat[] = {
	{"anon", true},
	{"file", true},
	{"kernel", true},
	{"kernel_stack", true},
	{"pagetables", true},
	{"sec_pagetables", true},
	{"percpu", true},
	{"sock", true},
	{"vmalloc", true},
	{"shmem", true},
	{"zswap", true},
	{"zswapped", true},
	{"file_mapped", true},
	{"file_dirty", true},
	{"file_writeback", true},
	{"swapcached", true},
	{"anon_thp", true},
	{"file_thp", true},
	{"shmem_thp", true},
	{"inactive_anon", true},
	{"active_anon", true},
	{"inactive_file", true},
	{"active_file", true},
	{"unevictable", true},
	{"slab_reclaimable", true},
	{"slab_unreclaimable", true},
	{"slab", true},
	{"workingset_refault_anon", false},
	{"workingset_refault_file", false},
	{"workingset_activate_anon", false},
	{"workingset_activate_file", false},
	{"workingset_restore_anon", false},
	{"workingset_restore_file", false},
	{"workingset_nodereclaim", false},
	{"pgscan", false},
	{"pgsteal", false},
	{"pgscan_kswapd", false},
	{"pgscan_direct", false},
	{"pgscan_khugepaged", false},
	{"pgsteal_kswapd", false},
	{"pgsteal_direct", false},
	{"pgsteal_khugepaged", false},
	{"pgfault", false},
	{"pgmajfault", false},
	{"pgrefill", false},
	{"pgactivate", false},
	{"pgdeactivate", false},
	{"pglazyfree", false},
	{"pglazyfreed", false},
	{"thp_fault_alloc", false},
	{"thp_collapse_alloc", false},
};

/*
 * cgroup-v1/memory.rst, "5.2 stat file", in the order the kernel prints
 * them (mm/memcontrol-v1.c): local values, then the hierarchical limits,
 * then "total_" + each local key (the subtree).
 */
static const struct stat_key v1_stat[] = {
	{"cache", true},
	{"rss", true},
	{"rss_huge", true},
	{"shmem", true},
	{"mapped_file", true},
	{"dirty", true},
	{"writeback", true},
	{"workingset_refault_anon", false},
	{"workingset_refault_file", false},
	{"swap", true},
	{"swapcached", true},
	{"pgpgin", false},
	{"pgpgout", false},
	{"pgfault", false},
	{"pgmajfault", false},
	{"inactive_anon", true},
	{"active_anon", true},
	{"inactive_file", true},
	{"active_file", true},
	{"unevictable", true},
};

static const char *const v1_hier[] = {
	"hierarchical_memory_limit",
	"hierarchical_memsw_limit",
};

/* memory.events (cgroup-v2.rst), every one a count. */
static const char *const event_keys[] = {
	"low", "high", "max", "oom", "oom_kill", "oom_group_kill",
};

static const char *root_of(const char *root)
{
	return root ? root : "";
}

/* Read DIR/NAME; a missing file is *BUF = NULL and 0 (not an error). */
static int read_opt(const char *dir, const char *name, char **buf, char *path,
		    size_t psize)
{
	size_t len;

	*buf = NULL;
	snprintf(path, psize, "%s/%s", dir, name);
	if (procfs_read_file(path, buf, &len) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	return -1;
}

/* A single number, or "max" when ALLOW_MAX, and a newline. */
static int read_value(const char *dir, const char *name, bool v1,
		      struct cgroup_value *out)
{
	char path[PATH_MAX];
	char *buf, *nl;

	memset(out, 0, sizeof(*out));
	if (read_opt(dir, name, &buf, path, sizeof(path)) < 0)
		return -1;
	if (!buf)
		return 0;
	nl = strchr(buf, '\n');
	if (nl && nl[1] == '\0')
		*nl = '\0';
	if (!v1 && strcmp(buf, "max") == 0) {
		out->have = out->unlimited = true;
	} else if (buf[0] && num_parse_u64(buf, false, &out->bytes) == 0) {
		out->have = true;
		if (v1 && out->bytes >= V1_UNLIMITED) {
			out->unlimited = true;
			out->bytes = 0;
		}
	} else {
		free(buf);
		return procfs_error(EINVAL, "cannot parse '%s': %s", path,
				    v1 ? "expected a number"
				       : "expected a number or 'max'");
	}
	free(buf);
	return 0;
}

static void free_kv(struct cgroup_kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(kv[i].key);
	free(kv);
}

/* "key value" lines (memory.stat, memory.events, memory.oom_control). */
static int read_kv(const char *dir, const char *name, struct cgroup_kv **out,
		   size_t *n)
{
	char path[PATH_MAX];
	struct cgroup_kv *kv = NULL, *nkv;
	size_t cnt = 0, lineno = 0;
	char *buf, *line, *nl;

	*out = NULL;
	*n = 0;
	if (read_opt(dir, name, &buf, path, sizeof(path)) < 0)
		return -1;
	if (!buf)
		return 0;
	if (!*buf) {
		free(buf);
		return procfs_error(EINVAL, "cannot parse '%s': empty file",
				    path);
	}
	for (line = buf; *line; line = nl + 1) {
		char *sp;
		uint64_t v;

		lineno++;
		nl = strchr(line, '\n');
		if (!nl)
			goto bad; /* truncated: a last line without newline */
		*nl = '\0';
		sp = strchr(line, ' ');
		if (!sp || sp == line || num_parse_u64(sp + 1, false, &v) < 0)
			goto bad;
		for (const char *c = line; c < sp; c++)
			if (!islower((unsigned char)*c) &&
			    !isdigit((unsigned char)*c) && *c != '_')
				goto bad;
		nkv = realloc(kv, (cnt + 1) * sizeof(*kv));
		if (!nkv)
			goto oom;
		kv = nkv;
		kv[cnt].key = strndup(line, (size_t)(sp - line));
		if (!kv[cnt].key)
			goto oom;
		kv[cnt].value = v;
		cnt++;
	}
	free(buf);
	*out = kv;
	*n = cnt;
	return 0;
bad:
	free(buf);
	free_kv(kv, cnt);
	return procfs_error(EINVAL,
			    "cannot parse '%s': line %zu is not 'key value'",
			    path, lineno);
oom:
	free(buf);
	free_kv(kv, cnt);
	return procfs_error(ENOMEM, "cannot read '%s': out of memory", path);
}

/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" (PSI, psi.rst). */
static int read_psi(const char *dir, struct cgroup_mem *m)
{
	char path[PATH_MAX];
	char *buf, *line, *nl;

	if (read_opt(dir, "memory.pressure", &buf, path, sizeof(path)) < 0)
		return -1;
	if (!buf)
		return 0;
	for (line = buf; *line; line = nl + 1) {
		struct cgroup_psi *p;
		char kind[8];
		unsigned long long total;
		int pos = 0;

		nl = strchr(line, '\n');
		if (!nl)
			goto bad;
		*nl = '\0';
		if (strncmp(line, "some ", 5) == 0)
			p = &m->psi_some;
		else if (strncmp(line, "full ", 5) == 0)
			p = &m->psi_full;
		else
			goto bad;
		if (sscanf(line,
			   "%7s avg10=%lf avg60=%lf avg300=%lf "
			   "total=%llu%n",
			   kind, &p->avg10, &p->avg60, &p->avg300, &total,
			   &pos) != 5 ||
		    line[pos])
			goto bad;
		p->total_us = total;
		p->have = true;
	}
	free(buf);
	return 0;
bad:
	free(buf);
	m->psi_some.have = m->psi_full.have = false;
	return procfs_error(EINVAL, "cannot parse '%s': not PSI lines", path);
}

static bool file_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* A control file holding one value, and where the value goes. */
struct value_file {
	const char *name;
	struct cgroup_value *out;
};

/* Read the N files F in DIR with read_value(), in order; -1 at the first
 * that fails. */
static int read_values(const char *dir, bool v1, const struct value_file *f,
		       size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (read_value(dir, f[i].name, v1, f[i].out) < 0)
			return -1;
	return 0;
}

static int read_v2(struct cgroup_mem *m)
{
	const struct value_file files[] = {
		{"memory.current", &m->usage},
		{"memory.max", &m->limit},
		{"memory.high", &m->high},
		{"memory.low", &m->low},
		{"memory.min", &m->min},
		{"memory.peak", &m->peak},
		{"memory.swap.current", &m->swap_usage},
		{"memory.swap.max", &m->swap_limit},
	};
	const char *d = m->dir;

	m->version = 2;
	if (read_values(d, false, files, ARRAY_SIZE(files)) < 0 ||
	    read_kv(d, "memory.stat", &m->stat, &m->nstat) < 0 ||
	    read_kv(d, "memory.events", &m->events, &m->nevents) < 0 ||
	    read_psi(d, m) < 0)
		return -1;
	return 0;
}

static int read_v1(struct cgroup_mem *m)
{
	struct cgroup_value memsw;
	const struct value_file files[] = {
		{"memory.usage_in_bytes", &m->usage},
		{"memory.limit_in_bytes", &m->limit},
		{"memory.max_usage_in_bytes", &m->peak},
		{"memory.failcnt", &m->failcnt},
		{"memory.memsw.usage_in_bytes", &memsw},
	};
	const char *d = m->dir;

	m->version = 1;
	if (read_values(d, true, files, ARRAY_SIZE(files)) < 0 ||
	    read_kv(d, "memory.stat", &m->stat, &m->nstat) < 0 ||
	    read_kv(d, "memory.oom_control", &m->events, &m->nevents) < 0)
		return -1;
	/* memsw counts memory + swap (cgroup-v1/memory.rst 2.4). */
	if (memsw.have && m->usage.have) {
		m->swap_usage.have = true;
		m->swap_usage.bytes = memsw.bytes > m->usage.bytes
					      ? memsw.bytes - m->usage.bytes
					      : 0;
	}
	return 0;
}

/* Read M->dir as the version its files say. */
static int read_dir(struct cgroup_mem *m)
{
	struct stat st;

	if (stat(m->dir, &st) < 0) {
		int e = errno;

		msg_set_errno(e, "cannot open cgroup '%s'", m->dir);
		errno = e;
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return procfs_error(
			ENOTDIR, "not a cgroup '%s': not a directory", m->dir);
	if (file_exists(m->dir, "memory.usage_in_bytes"))
		return read_v1(m);
	if (file_exists(m->dir, "memory.current") ||
	    file_exists(m->dir, "memory.stat"))
		return read_v2(m);
	return procfs_error(EINVAL,
			    "not a memory cgroup '%s': no memory.current, "
			    "memory.stat or memory.usage_in_bytes",
			    m->dir);
}

void cgroup_mem_free(struct cgroup_mem *m)
{
	free(m->path);
	free(m->dir);
	free_kv(m->stat, m->nstat);
	free_kv(m->events, m->nevents);
	memset(m, 0, sizeof(*m));
}

int cgroup_read_dir(const char *root, const char *dir, struct cgroup_mem *out)
{
	memset(out, 0, sizeof(*out));
	if (asprintf(&out->dir, "%s%s", dir[0] == '/' ? root_of(root) : "",
		     dir) < 0) {
		out->dir = NULL;
		return procfs_error(ENOMEM, "out of memory");
	}
	if (read_dir(out) < 0) {
		cgroup_mem_free(out);
		return -1;
	}
	return 0;
}

/* Undo mountinfo's octal escapes (\040 space, \011 tab, \012, \134) in place.
 */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static bool has_option(const char *list, const char *opt)
{
	size_t n = strlen(opt);
	const char *p = list;

	while (p && *p) {
		if (strncmp(p, opt, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/*
 * Find the mount of the hierarchy (V2: fstype cgroup2; else fstype cgroup
 * with the memory option) whose root contains CGPATH, and put the
 * directory, ROOT included, in *DIR. Returns 1 found, 0 not, -1 error.
 */
static int find_mount(const char *root, const char *mountinfo, bool v2,
		      const char *cgpath, char **dir)
{
	char *copy = strdup(mountinfo), *line, *nl;
	int found = 0;

	if (!copy)
		return procfs_error(ENOMEM, "out of memory");
	for (line = copy; *line && !found; line = nl + 1) {
		char *f[6], *sep, *fstype, *super, *save = NULL;
		const char *rel;
		size_t i, rlen;

		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line) - 1;
		else
			*nl = '\0';
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		fstype = strtok_r(sep + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save); /* source */
		super = strtok_r(NULL, " ", &save);
		save = NULL;
		for (i = 0; i < 6; i++) {
			f[i] = strtok_r(i ? NULL : line, " ", &save);
			if (!f[i])
				break;
		}
		if (i < 5 || !fstype)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2") != 0
		       : strcmp(fstype, "cgroup") != 0 ||
				    !has_option(super, "memory"))
			continue;
		unescape(f[3]);
		unescape(f[4]);
		rlen = strlen(f[3]);
		if (strcmp(f[3], "/") == 0) {
			rel = cgpath;
		} else if (strncmp(cgpath, f[3], rlen) == 0 &&
			   (cgpath[rlen] == '/' || cgpath[rlen] == '\0')) {
			rel = cgpath + rlen;
		} else {
			continue;
		}
		if (strcmp(rel, "/") == 0)
			rel = "";
		if (asprintf(dir, "%s%s%s", root_of(root), f[4], rel) < 0) {
			free(copy);
			return procfs_error(ENOMEM, "out of memory");
		}
		found = 1;
	}
	free(copy);
	return found;
}

/* OUT found at PATH (its cgroup path) in OUT->dir: keep a copy of PATH
 * and read OUT with READ. Returns 0 or -1 with procfs_error(). */
static int read_found(struct cgroup_mem *out, const char *path,
		      int (*read)(struct cgroup_mem *))
{
	out->path = strdup(path);
	if (!out->path)
		return procfs_error(ENOMEM, "out of memory");
	return read(out);
}

int cgroup_read_pid(const char *root, pid_t pid, struct cgroup_mem *out)
{
	char path[PATH_MAX], mpath[PATH_MAX], who[32];
	char *cg = NULL, *mi = NULL, *line, *nl;
	char *v2path = NULL, *v1path = NULL;
	size_t len;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (pid)
		snprintf(who, sizeof(who), "%d", (int)pid);
	else
		snprintf(who, sizeof(who), "self");
	snprintf(path, sizeof(path), "%s/proc/%s/cgroup", root_of(root), who);
	snprintf(mpath, sizeof(mpath), "%s/proc/self/mountinfo", root_of(root));
	if (procfs_read_file(path, &cg, &len) < 0) {
		if (errno == ENOENT && pid && !procfs_pid_exists(root, pid))
			procfs_error(ENOENT, "no such process '%d'", (int)pid);
		return -1;
	}
	/*
	 * A zombie's /proc/PID/cgroup names the root of every hierarchy (its
	 * css_set is gone), which would be a wrong answer, not an error. The
	 * status is read after the cgroup file, so "alive" means the cgroup
	 * was read while it was.
	 */
	if (pid) {
		struct procfs_status st;

		if (procfs_read_status(root, pid, &st) < 0)
			goto out;
		if (st.state == 'Z' || st.state == 'X') {
			procfs_error(ESRCH, "process '%d' has exited",
				     (int)pid);
			goto out;
		}
	}
	if (procfs_read_file(mpath, &mi, &len) < 0)
		goto out;
	for (line = cg; *line; line = nl + 1) {
		char *c1, *c2;

		nl = strchr(line, '\n');
		if (!nl) {
			procfs_error(EINVAL,
				     "cannot parse '%s': truncated line", path);
			goto out;
		}
		*nl = '\0';
		c1 = strchr(line, ':');
		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/') {
			procfs_error(EINVAL,
				     "cannot parse '%s': line is not "
				     "'id:controllers:path'",
				     path);
			goto out;
		}
		*c1 = *c2 = '\0';
		if (strcmp(line, "0") == 0 && c1[1] == '\0')
			v2path = c2 + 1;
		else if (has_option(c1 + 1, "memory"))
			v1path = c2 + 1;
	}
	if (v2path) {
		int f = find_mount(root, mi, true, v2path, &out->dir);

		if (f < 0)
			goto out;
		if (f && (file_exists(out->dir, "memory.current") ||
			  file_exists(out->dir, "memory.stat"))) {
			rc = read_found(out, v2path, read_v2);
			goto out;
		}
		free(out->dir);
		out->dir = NULL;
	}
	if (v1path) {
		int f = find_mount(root, mi, false, v1path, &out->dir);

		if (f < 0)
			goto out;
		if (f) {
			rc = read_found(out, v1path, read_dir);
			goto out;
		}
	}
	procfs_error(ENOENT, "no memory cgroup for process '%s': %s", who,
		     v1path || v2path ? "its cgroup is not mounted here"
				      : "no memory controller");
out:
	free(cg);
	free(mi);
	if (rc < 0) {
		int e = errno;

		cgroup_mem_free(out);
		errno = e;
	}
	return rc;
}

bool cgroup_stat_get(const struct cgroup_mem *m, const char *key,
		     uint64_t *value)
{
	size_t i;

	for (i = 0; i < m->nstat; i++) {
		if (strcmp(m->stat[i].key, key) == 0) {
			*value = m->stat[i].value;
			return true;
		}
	}
	return false;
}

bool cgroup_working_set(const struct cgroup_mem *m, uint64_t *ws,
			uint64_t *inactive)
{
	uint64_t in;

	if (!m->usage.have || m->usage.unlimited)
		return false;
	if (m->version == 1) {
		if (!cgroup_stat_get(m, "total_inactive_file", &in) &&
		    !cgroup_stat_get(m, "inactive_file", &in))
			return false;
	} else if (!cgroup_stat_get(m, "inactive_file", &in)) {
		return false;
	}
	*ws = m->usage.bytes > in ? m->usage.bytes - in : 0;
	if (inactive)
		*inactive = in;
	return true;
}

/* Find KEY's table entry for M's version; V1 "total_" keys map to the
 * local key's unit. */
static const struct stat_key *known_stat(const struct cgroup_mem *m,
					 const char *key)
{
	const struct stat_key *t = m->version == 1 ? v1_stat : v2_stat;
	size_t n = m->version == 1 ? ARRAY_SIZE(v1_stat) : ARRAY_SIZE(v2_stat);
	static const struct stat_key hier = {"hierarchical", true};
	size_t i;

	if (m->version == 1) {
		for (i = 0; i < ARRAY_SIZE(v1_hier); i++)
			if (strcmp(key, v1_hier[i]) == 0)
				return &hier;
		if (strncmp(key, "total_", 6) == 0)
			key += 6;
	}
	for (i = 0; i < n; i++)
		if (strcmp(t[i].key, key) == 0)
			return &t[i];
	return NULL;
}

static void set_stat(json_t *obj, const struct cgroup_mem *m, const char *key,
		     bool bytes)
{
	char name[96];
	uint64_t v = 0;
	bool have = cgroup_stat_get(m, key, &v);

	snprintf(name, sizeof(name), "%s_%s", key, bytes ? "bytes" : "count");
	json_set(obj, name, json_u64_or_null(have, v));
}

static json_t *stat_json(const struct cgroup_mem *m)
{
	json_t *o = json_object();
	char key[96];
	size_t i;

	if (m->version == 2) {
		for (i = 0; i < ARRAY_SIZE(v2_stat); i++)
			set_stat(o, m, v2_stat[i].key, v2_stat[i].bytes);
		return o;
	}
	for (i = 0; i < ARRAY_SIZE(v1_stat); i++)
		set_stat(o, m, v1_stat[i].key, v1_stat[i].bytes);
	for (i = 0; i < ARRAY_SIZE(v1_hier); i++)
		set_stat(o, m, v1_hier[i], true);
	for (i = 0; i < ARRAY_SIZE(v1_stat); i++) {
		snprintf(key, sizeof(key), "total_%s", v1_stat[i].key);
		set_stat(o, m, key, v1_stat[i].bytes);
	}
	return o;
}

static json_t *raw_json(const struct cgroup_mem *m)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < m->nstat; i++)
		if (!known_stat(m, m->stat[i].key))
			json_set(o, m->stat[i].key, json_u64(m->stat[i].value));
	return o;
}

static bool event_get(const struct cgroup_mem *m, const char *key, uint64_t *v)
{
	size_t i;

	for (i = 0; i < m->nevents; i++) {
		if (strcmp(m->events[i].key, key) == 0) {
			*v = m->events[i].value;
			return true;
		}
	}
	return false;
}

static json_t *events_json(const struct cgroup_mem *m)
{
	json_t *o = json_object();
	char name[96];
	uint64_t v = 0;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(event_keys); i++) {
		bool have = event_get(m, event_keys[i], &v);

		snprintf(name, sizeof(name), "%s_count", event_keys[i]);
		json_set(o, name, json_u64_or_null(have, v));
	}
	if (m->version == 1)
		return o; /* oom_control's other keys are flags, not events */
	/* A newer kernel's events are counts too: keep them. */
	for (i = 0; i < m->nevents; i++) {
		for (j = 0; j < ARRAY_SIZE(event_keys); j++)
			if (strcmp(m->events[i].key, event_keys[j]) == 0)
				break;
		if (j < ARRAY_SIZE(event_keys))
			continue;
		snprintf(name, sizeof(name), "%s_count", m->events[i].key);
		json_set(o, name, json_u64(m->events[i].value));
	}
	return o;
}

static json_t *psi_json(const struct cgroup_psi *p)
{
	json_t *o;

	if (!p->have)
		return json_null();
	o = json_object();
	json_set(o, "avg10_ratio", json_real(p->avg10 / 100.0));
	json_set(o, "avg60_ratio", json_real(p->avg60 / 100.0));
	json_set(o, "avg300_ratio", json_real(p->avg300 / 100.0));
	json_set(o, "total_ns", json_u64(p->total_us * 1000));
	return o;
}

static void value_json(json_t *obj, const char *name,
		       const struct cgroup_value *v, bool flag)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_bytes", name);
	json_set(obj, key,
		 json_u64_or_null(v->have && !v->unlimited, v->bytes));
	if (!flag)
		return;
	snprintf(key, sizeof(key), "%s_unlimited", name);
	json_set(obj, key, v->have ? json_boolean(v->unlimited) : json_null());
}

/* Room left below a limit: LIMIT - usage, floored at 0. */
static bool headroom(const struct cgroup_mem *m, const struct cgroup_value *l,
		     uint64_t *out)
{
	if (!l->have || l->unlimited || !m->usage.have)
		return false;
	*out = l->bytes > m->usage.bytes ? l->bytes - m->usage.bytes : 0;
	return true;
}

void cgroup_json(json_t *obj, const struct cgroup_mem *m)
{
	uint64_t ws = 0, in = 0, room = 0;
	bool have_ws = cgroup_working_set(m, &ws, &in);
	bool have;
	json_t *pressure;

	json_set(obj, "cgroup_version", json_integer(m->version));
	json_set(obj, "cgroup_path", json_str_or_null(m->path));
	json_set(obj, "directory", json_str_or_null(m->dir));
	value_json(obj, "usage", &m->usage, false);
	value_json(obj, "limit", &m->limit, true);
	value_json(obj, "high", &m->high, true);
	value_json(obj, "low", &m->low, false);
	value_json(obj, "min", &m->min, false);
	value_json(obj, "peak", &m->peak, false);
	value_json(obj, "swap_usage", &m->swap_usage, false);
	value_json(obj, "swap_limit", &m->swap_limit, true);
	json_set(obj, "failcnt_count",
		 json_u64_or_null(m->failcnt.have, m->failcnt.bytes));
	json_set(obj, "inactive_file_bytes", json_u64_or_null(have_ws, in));
	json_set(obj, "working_set_bytes", json_u64_or_null(have_ws, ws));
	have = headroom(m, &m->limit, &room);
	json_set(obj, "headroom_bytes", json_u64_or_null(have, room));
	have = headroom(m, &m->high, &room);
	json_set(obj, "high_headroom_bytes", json_u64_or_null(have, room));
	json_set(obj, "stat", stat_json(m));
	json_set(obj, "raw", raw_json(m));
	json_set(obj, "events", events_json(m));
	if (m->psi_some.have || m->psi_full.have) {
		pressure = json_object();
		json_set(pressure, "some", psi_json(&m->psi_some));
		json_set(pressure, "full", psi_json(&m->psi_full));
	} else {
		pressure = json_null();
	}
	json_set(obj, "pressure", pressure);
}

/* One gauge family with one sample, when HAVE. */
static int prom_one(FILE *fp, const struct prom_label *l, const char *metric,
		    const char *type, const char *help, bool have, uint64_t v)
{
	char name[PROM_NAME_MAX];

	if (!have)
		return 0;
	if (prom_name(name, sizeof(name), metric) < 0 ||
	    prom_family(fp, name, type, help) < 0)
		return -1;
	return prom_sample_u64(fp, name, l, 1, v);
}

static int prom_stat(FILE *fp, const struct cgroup_mem *m,
		     const struct prom_label *cl, bool bytes)
{
	char name[PROM_NAME_MAX];
	bool header = false;
	size_t i;

	prom_name(name, sizeof(name),
		  bytes ? "cgroup_memory_stat_bytes"
			: "cgroup_memory_stat_events_total");
	for (i = 0; i < m->nstat; i++) {
		const struct stat_key *k = known_stat(m, m->stat[i].key);
		struct prom_label l[2] = {cl[0], {"key", m->stat[i].key}};

		if (!k || k->bytes != bytes)
			continue;
		if (!header &&
		    prom_family(fp, name, bytes ? PROM_GAUGE : PROM_COUNTER,
				bytes ? "Sizes from memory.stat, by key."
				      : "Event counts from memory.stat, by "
					"key.") < 0)
			return -1;
		header = true;
		if (prom_sample_u64(fp, name, l, 2, m->stat[i].value) < 0)
			return -1;
	}
	return 0;
}

int cgroup_prom(FILE *fp, const struct cgroup_mem *m)
{
	struct prom_label cl[1] = {{"cgroup", m->path ? m->path : m->dir}};
	const struct cgroup_psi *psi[2] = {&m->psi_some, &m->psi_full};
	static const char *const kinds[2] = {"some", "full"};
	char name[PROM_NAME_MAX];
	uint64_t ws = 0, v = 0;
	bool have_ws = cgroup_working_set(m, &ws, NULL);
	bool header;
	size_t i, k;

	if (prom_one(fp, cl, "cgroup_memory_usage_bytes", PROM_GAUGE,
		     "Memory charged to the cgroup (memory.current, "
		     "memory.usage_in_bytes).",
		     m->usage.have, m->usage.bytes) < 0 ||
	    prom_one(fp, cl, "cgroup_memory_limit_bytes", PROM_GAUGE,
		     "Hard limit (memory.max, memory.limit_in_bytes); absent "
		     "when unlimited.",
		     m->limit.have && !m->limit.unlimited,
		     m->limit.bytes) < 0 ||
	    prom_one(fp, cl, "cgroup_memory_high_bytes", PROM_GAUGE,
		     "Throttling limit memory.high; absent when unlimited.",
		     m->high.have && !m->high.unlimited, m->high.bytes) < 0 ||
	    prom_one(fp, cl, "cgroup_memory_peak_bytes", PROM_GAUGE,
		     "Highest usage recorded (memory.peak, "
		     "memory.max_usage_in_bytes).",
		     m->peak.have, m->peak.bytes) < 0 ||
	    prom_one(fp, cl, "cgroup_memory_swap_usage_bytes", PROM_GAUGE,
		     "Swap used by the cgroup.", m->swap_usage.have,
		     m->swap_usage.bytes) < 0 ||
	    prom_one(fp, cl, "cgroup_memory_working_set_bytes", PROM_GAUGE,
		     "Usage minus inactive file pages, floored at 0, as "
		     "kubelet computes it.",
		     have_ws, ws) < 0 ||
	    prom_one(fp, cl, "cgroup_memory_failcnt_total", PROM_COUNTER,
		     "Times usage hit the v1 limit (memory.failcnt).",
		     m->failcnt.have, m->failcnt.bytes) < 0 ||
	    prom_stat(fp, m, cl, true) < 0 || prom_stat(fp, m, cl, false) < 0)
		return -1;

	prom_name(name, sizeof(name), "cgroup_memory_events_total");
	header = false;
	for (i = 0; i < ARRAY_SIZE(event_keys); i++) {
		struct prom_label l[2] = {cl[0], {"event", event_keys[i]}};

		if (!event_get(m, event_keys[i], &v))
			continue;
		if (!header &&
		    prom_family(fp, name, PROM_COUNTER,
				"memory.events counters (v1: "
				"oom_kill of memory.oom_control).") < 0)
			return -1;
		header = true;
		if (prom_sample_u64(fp, name, l, 2, v) < 0)
			return -1;
	}

	if (!m->psi_some.have && !m->psi_full.have)
		return 0;
	prom_name(name, sizeof(name), "cgroup_memory_pressure_ratio");
	if (prom_family(fp, name, PROM_GAUGE,
			"Share of time stalled on memory (PSI average over "
			"the window).") < 0)
		return -1;
	for (k = 0; k < 2; k++) {
		static const char *const win[3] = {"10s", "60s", "300s"};
		double avg[3];

		if (!psi[k]->have)
			continue;
		avg[0] = psi[k]->avg10;
		avg[1] = psi[k]->avg60;
		avg[2] = psi[k]->avg300;
		for (i = 0; i < 3; i++) {
			struct prom_label l[3] = {
				cl[0], {"kind", kinds[k]}, {"window", win[i]}};

			if (prom_sample_double(fp, name, l, 3, avg[i] / 100.0) <
			    0)
				return -1;
		}
	}
	prom_name(name, sizeof(name),
		  "cgroup_memory_pressure_stall_seconds_total");
	if (prom_family(fp, name, PROM_COUNTER,
			"Total time stalled on memory (PSI total).") < 0)
		return -1;
	for (k = 0; k < 2; k++) {
		struct prom_label l[2] = {cl[0], {"kind", kinds[k]}};

		if (psi[k]->have &&
		    prom_sample_double(fp, name, l, 2,
				       (double)psi[k]->total_us / 1e6) < 0)
			return -1;
	}
	return 0;
}

/* v1's "no limit" (PAGE_COUNTER_MAX pages) and anything above. */
#define UNLIMITED_MIN 0x7fffffffffff0000ull

bool cgroup_effective_limit(const char *dir, int version, uint64_t *limit,
			    char *usage, size_t size)
{
	const char *lim = version == 2 ? "memory.max" : "memory.limit_in_bytes";
	const char *use =
		version == 2 ? "memory.current" : "memory.usage_in_bytes";
	char d[PATH_MAX], f[PATH_MAX + 32];
	uint64_t l;

	snprintf(d, sizeof(d), "%s", dir);
	*limit = 0;
	for (int depth = 0; depth < 64 && d[0]; depth++) {
		char *slash;

		snprintf(f, sizeof(f), "%s/%s", d, lim);
		if (smallfile_u64(f, &l) < 0)
			break; /* above the hierarchy's root */
		if (l > 0 && l < UNLIMITED_MIN && (!*limit || l < *limit)) {
			*limit = l;
			snprintf(usage, size, "%s/%s", d, use);
		}
		slash = strrchr(d, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return *limit != 0;
}
