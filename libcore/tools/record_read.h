/* SPDX-License-Identifier: MIT */
/* Finding and copying records (wire/record.h) from outside the process. */
#ifndef PALLOC_RECORD_READ_H
#define PALLOC_RECORD_READ_H

#include "common.h"
#include "pprof.h"
#include "record.h"
#include "record_profile.h"

#include <limits.h>
#include <sys/types.h>

/*
 * The commands' half of the record's reader (pprof/record_profile.h is
 * the other, shared with the agent). A record is another process's file:
 * it is opened O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, must be a
 * regular file of at most RECORD_MAX_SIZE bytes, and is copied whole into
 * memory before anything reads it; the copy is then checked by
 * record_check(). Errors: -1 with msg_set(), one line naming the file or
 * the pid, errno set. Not async-signal-safe (malloc, stdio on /proc).
 */

/*
 * The live record of process pid: the mapping of /proc/PID/maps whose
 * path ends in "/PID.<digits>.rec" (" (deleted)" allowed: then through
 * /proc/PID/map_files, which needs privileges), opened, and checked to be
 * that very file (device and inode of the maps line), regular, at most
 * RECORD_MAX_SIZE bytes, and owned by one of the process's uids (real,
 * effective, saved, filesystem) or by the caller's real or effective
 * uid. The path goes to path[cap] (when path is not NULL). Returns an
 * open descriptor, or -1: "no record mapped by process 'PID' (not
 * running under palloc, or an agent without records)", "process 'PID':
 * record 'PATH' owned by uid U", ...
 */
int record_find_live(pid_t pid, char *path, size_t cap);

/* A record file given by name: opened and checked as above (regular,
 * size), without the owner's check (the caller named it). A descriptor,
 * or -1. */
int record_open(const char *path);

/* A copy of a record file. */
struct record_image {
	void *buf;	   /* malloc'd, 16-byte aligned */
	size_t len;	   /* bytes copied */
	bool inconsistent; /* seq odd or moving in every try: the last copy */
	unsigned tries;	   /* copies made (1 to RECORD_READ_TRIES) */
};

/*
 * Copy the record open at fd (from offset 0, with pread: a file
 * truncated meanwhile reads short rather than faulting) into *im, and
 * make sure the copy is consistent (record.h): header.seq read from the
 * file before and after the copy is even, equal, and equal to the copy's;
 * else copy again, up to RECORD_READ_TRIES times, then keep the last copy
 * with im->inconsistent set. A copy whose header.size is past what was
 * read (the file grew) counts as a failed try too. Refuses a file larger
 * than RECORD_MAX_SIZE before reading it, or shorter than RECORD_DATA.
 * 0, or -1 (im empty).
 */
int record_copy(int fd, struct record_image *im);

/* Free a copy (NULL-safe). */
void record_image_free(struct record_image *im);

/*
 * Copy the record open at fd (record_copy()) and check it
 * (record_check(), arrays from malloc): *im and its view *v, both freed
 * by record_loaded_free(). 0, or -1 with msg_set() (both empty then).
 */
int record_load(int fd, struct record_image *im, struct record_view *v);
void record_loaded_free(struct record_image *im, struct record_view *v);

/* "live", "exited" or "killed": what record_list() says of a record. */
enum record_life {
	RECORD_LIFE_LIVE,   /* the process runs and maps it */
	RECORD_LIFE_EXITED, /* header.state EXITED: exit() ran */
	RECORD_LIFE_KILLED, /* neither: killed (SIGKILL, OOM) or crashed */
};
const char *record_life_name(enum record_life l);

/* /proc/PID/stat's starttime (field 22, clock ticks since boot): a pid's
 * identity, header.start_ticks. 0, or -1 with msg_set(). */
int record_start_ticks(pid_t pid, uint64_t *out);

/*
 * Is the process pid the one that wrote this record: /proc/PID/stat's
 * starttime is start_ticks and /proc/PID/maps maps the file (dev, ino)?
 */
bool record_is_live(pid_t pid, uint64_t start_ticks, dev_t dev, ino_t ino);

struct record_listing {
	char path[PATH_MAX];
	pid_t pid;	  /* from the name */
	int64_t start_ns; /* from the name (START) */
	uid_t uid;	  /* the file's owner */
	uint64_t size;	  /* the file's size */
	bool valid;	  /* magic, version and pid of the header agree */
	enum record_life life;
	int32_t exit_status;	     /* when EXITED */
	struct record_header header; /* as read (zero when !valid) */
};

/*
 * The records "PID.START.rec" in dir (NULL: this user's directory,
 * rundir_path()), sorted by pid then START, into a malloc'd array (*out,
 * *n; free() it). Names that do not read so, symbolic links and files
 * that are not regular are skipped; a record whose header does not read
 * is listed with valid false. This user's directory must be the
 * caller's and open to nobody else ("unsafe record directory": another
 * user may have made it in /tmp first). 0 (also for a missing directory:
 * none), or -1 with msg_set().
 */
int record_list(const char *dir, struct record_listing **out, size_t *n);

/*
 * The executable regions of a live process's /proc/PID/maps, for the
 * addresses no module of its record covers (JIT code: V8, HotSpot), as
 * the agent's extramaps.c names them: the kernel's name, or "[anon:jit]".
 * record_maps_unmapped() is a record_unmapped_fn (record_profile.h) with
 * ctx a struct record_maps: the region's mapping (added to p on first
 * use), or 0 for an address in none (the reader's "[unmapped]").
 */
struct record_maps_region;
struct record_maps {
	struct record_maps_region *v;
	size_t n;
	const struct pprof_profile *p; /* the profile the ids belong to */
};
/* Read them (0, or -1 with msg_set(); m empty then). */
int record_maps_read(pid_t pid, struct record_maps *m);
uint64_t record_maps_unmapped(void *ctx, struct pprof_profile *p,
			      uint64_t addr);
void record_maps_free(struct record_maps *m);
/* Read pid's regions into *m and name them to o (o->unmapped and its
 * ctx m) when they read; false (o unchanged) when not. */
bool record_maps_use(pid_t pid, struct record_maps *m,
		     struct record_profile_opts *o);

#endif /* PALLOC_RECORD_READ_H */
