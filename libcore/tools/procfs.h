/* SPDX-License-Identifier: MIT */
/* Readers of /proc/PID: smaps_rollup, smaps, status, comm, cmdline, pids. */
#ifndef PALLOC_PROCFS_H
#define PALLOC_PROCFS_H

#include "common.h"

#include <jansson.h>

/*
 * What the kernel says a process holds, from Documentation/filesystems/
 * proc.rst ("smaps", "smaps_rollup", "status"). Every size is converted
 * from the kernel's kB (KiB) to bytes on reading.
 *
 * ROOT arguments: "" (or NULL) reads the live /proc; a directory reads
 * ROOT/proc instead (--sysroot, test fixtures).
 *
 * Errors: functions return -1 with msg_set() holding one line for the
 * user and errno set to the class of failure, so that a caller can skip a
 * process in a listing but fail on a named one:
 *	ENOENT	no such process
 *	EACCES	not allowed to read it (another user's process)
 *	ESRCH	the process exited while being read, or has no user memory
 *		(kernel thread, zombie)
 *	EINVAL	the file does not parse (garbage, truncated, empty)
 *	ENOMEM	out of memory
 * Nothing here prints or exits. Thread-safe: no shared state.
 */

/* The fields of one smaps record (per mapping or rolled up), in the order
 * proc.rst documents and the kernel prints them. */
enum procfs_field {
	PROCFS_RSS,
	PROCFS_PSS,
	PROCFS_PSS_DIRTY,
	PROCFS_PSS_ANON,
	PROCFS_PSS_FILE,
	PROCFS_PSS_SHMEM,
	PROCFS_SHARED_CLEAN,
	PROCFS_SHARED_DIRTY,
	PROCFS_PRIVATE_CLEAN,
	PROCFS_PRIVATE_DIRTY,
	PROCFS_REFERENCED,
	PROCFS_ANONYMOUS,
	PROCFS_KSM,
	PROCFS_LAZY_FREE,
	PROCFS_ANON_HUGE_PAGES,
	PROCFS_SHMEM_PMD_MAPPED,
	PROCFS_FILE_PMD_MAPPED,
	PROCFS_SHARED_HUGETLB,
	PROCFS_PRIVATE_HUGETLB,
	PROCFS_SWAP,
	PROCFS_SWAP_PSS,
	PROCFS_LOCKED,
	PROCFS_NFIELDS
};

/* The kernel's name of FIELD ("Pss_Anon") and the JSON key
 * ("pss_anon_bytes"): the kernel name in snake_case plus "_bytes". */
const char *procfs_field_kernel_name(enum procfs_field field);
const char *procfs_field_json_name(enum procfs_field field);

/* A "Name: N kB" line the reader does not know (a newer kernel's). */
struct procfs_raw {
	char name[32];
	uint64_t bytes;
};

/* One smaps record. v[f] is meaningful when have & (1u << f). */
struct procfs_usage {
	uint64_t v[PROCFS_NFIELDS];
	uint32_t have;
	struct procfs_raw *raw; /* unknown kB fields, file order; owned */
	size_t nraw;
};

static inline bool procfs_has(const struct procfs_usage *u, enum procfs_field f)
{
	return (u->have & (1u << f)) != 0;
}

/* USS, the memory only this process maps (smem's definition):
 * Private_Clean + Private_Dirty. */
static inline uint64_t procfs_uss(const struct procfs_usage *u)
{
	return u->v[PROCFS_PRIVATE_CLEAN] + u->v[PROCFS_PRIVATE_DIRTY];
}

void procfs_usage_free(struct procfs_usage *u);

/*
 * Read /proc/PID/smaps_rollup into OUT (zeroed first). On a kernel without
 * it (before 4.14; the file is absent), sum /proc/PID/smaps instead and
 * set *SUMMED (may be NULL): the sums are of kB-rounded values, so Pss
 * may differ from the rollup by up to 1 kB per mapping. Rss and Pss must
 * be present, or the file is called truncated (EINVAL). Returns 0 or -1
 * (see the error classes above). The caller frees OUT with
 * procfs_usage_free().
 */
int procfs_read_rollup(const char *root, pid_t pid, struct procfs_usage *out,
		       bool *summed);

/* Where a mapping belongs in palloc-smaps --maps. */
enum procfs_kind {
	PROCFS_KIND_HEAP,    /* [heap]: brk, glibc's main arena */
	PROCFS_KIND_STACK,   /* [stack], and thread stacks (see below) */
	PROCFS_KIND_ANON,    /* private anonymous: mmap'd malloc arenas etc. */
	PROCFS_KIND_SHMEM,   /* shared anonymous, SysV, memfd, /dev/shm */
	PROCFS_KIND_FILE,    /* file-backed, grouped by path */
	PROCFS_KIND_SPECIAL, /* [vdso], [vvar], [vsyscall] and the like */
};

/* "heap", "stack", "anon", "shmem", "file", "special". */
const char *procfs_kind_name(enum procfs_kind kind);

struct procfs_mapping {
	uint64_t start, end; /* addresses, end exclusive */
	uint64_t offset;     /* file offset */
	uint64_t inode;
	char perms[5]; /* "rw-p" */
	char *path;    /* NULL when anonymous; owned */
	enum procfs_kind kind;
	struct procfs_usage usage;
};

struct procfs_smaps {
	struct procfs_mapping *maps; /* address order, as the kernel lists */
	size_t n;
};

/*
 * Read /proc/PID/smaps. Kinds: a private anonymous rw mapping directly
 * above an anonymous PROT_NONE ("---p") one of at most 64 KiB is a thread
 * stack (that is its guard page, as glibc's pthread_create lays it out;
 * the kernel stopped naming thread stacks "[stack:TID]" in 4.5). A bigger
 * PROT_NONE area below is the reserved tail of a malloc arena heap. Returns 0
 * or -1; free OUT with procfs_smaps_free().
 */
int procfs_read_smaps(const char *root, pid_t pid, struct procfs_smaps *out);
void procfs_smaps_free(struct procfs_smaps *s);

/* Fields of /proc/PID/status, in bytes; have bits as PROCFS_ST_*. */
enum procfs_status_field {
	PROCFS_ST_VM_PEAK,
	PROCFS_ST_VM_SIZE,
	PROCFS_ST_VM_HWM,
	PROCFS_ST_VM_RSS,
	PROCFS_ST_RSS_ANON,
	PROCFS_ST_RSS_FILE,
	PROCFS_ST_RSS_SHMEM,
	PROCFS_ST_VM_SWAP,
	PROCFS_ST_NFIELDS
};

struct procfs_status {
	char name[64]; /* Name: (comm, escaped by the kernel) */
	char state;    /* 'R', 'S', 'Z', ... or 0 */
	bool kthread;  /* no VmSize: line (kernel threads have no mm) */
	uint64_t v[PROCFS_ST_NFIELDS];
	uint32_t have;
};

/* JSON key of a status field: "vm_hwm_bytes", "rss_anon_bytes", ... */
const char *procfs_status_json_name(enum procfs_status_field f);

/* Read /proc/PID/status. Returns 0 or -1. */
int procfs_read_status(const char *root, pid_t pid, struct procfs_status *out);

/*
 * The process's command: comm (at most 15 bytes, without the newline)
 * into BUF. Returns 0 or -1.
 */
int procfs_read_comm(const char *root, pid_t pid, char *buf, size_t size);

/*
 * The command line with NULs turned into spaces, trailing one dropped,
 * as a new string the caller frees. An empty cmdline (kernel thread,
 * zombie) gives NULL and returns 0. Returns 0 or -1.
 */
int procfs_read_cmdline(const char *root, pid_t pid, char **out);

/*
 * The numeric entries of ROOT/proc, ascending, as a new array the caller
 * frees. Returns 0 or -1.
 */
int procfs_list_pids(const char *root, pid_t **pids, size_t *n);

/* Whether ROOT/proc/PID exists (a directory). */
bool procfs_pid_exists(const char *root, pid_t pid);

/* The parent of pid, from /proc/PID/stat (its comm may hold ')' and
 * spaces), or -1 when it cannot be read. No allocation. */
pid_t procfs_parent(pid_t pid);

/*
 * Record FMT's message with msg_set() and set errno to ERRNUM (one of the
 * classes above); returns -1. Shared by the readers in procfs.c and
 * cgroup.c.
 */
int procfs_error(int errnum, const char *fmt, ...) PALLOC_PRINTF(2, 3);

/*
 * Read all of PATH into a new NUL-terminated buffer (*BUF, *LEN without
 * the NUL), for /proc and /sys files whose st_size means nothing. Returns
 * 0, or -1 with errno and msg_set() ("cannot read 'PATH': why").
 */
int procfs_read_file(const char *path, char **buf, size_t *len);

/*
 * Rendering for commands and the /metrics endpoint.
 *
 * procfs_usage_json: the fields in enum order as "<json name>": bytes or
 * null, then "uss_bytes", then "raw": {kernel name: bytes} for unknown
 * fields, set into OBJ (an object). Allocation failures are left for
 * json_failed() (json.h), which the caller asks once for the whole value.
 * Returns 0.
 */
int procfs_usage_json(json_t *obj, const struct procfs_usage *u);

/* One process for procfs_prom(). */
struct procfs_prom_proc {
	pid_t pid;
	const char *command;	      /* comm: the "command" label */
	const struct procfs_usage *u; /* NULL: leave the process out */
};

/*
 * The Prometheus gauge families palloc_smaps_<json name> (every field in
 * enum order: palloc_smaps_rss_bytes, ..._pss_bytes, ..., then
 * palloc_smaps_uss_bytes), each with one sample per process of V that
 * has the field, labelled pid and command. palloc-smaps --prom and the
 * /metrics endpoint both write these. Returns 0, or -1 with msg_set() on
 * a write error.
 */
int procfs_prom(FILE *fp, const struct procfs_prom_proc *v, size_t n);

/*
 * Start the gauge family palloc_<PREFIX><json name of FIELD> (FIELD
 * PROCFS_NFIELDS: uss_bytes), its help "<kernel name> OF_WHAT, bytes.",
 * and write its name to NAME (PROM_NAME_MAX bytes) for the samples.
 * Returns 0, or -1 with msg_set() (a write error, or a name too long).
 */
int procfs_prom_family(FILE *fp, char *name, const char *prefix, size_t field,
		       const char *of_what);

#endif /* PALLOC_PROCFS_H */
