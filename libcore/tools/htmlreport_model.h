/* SPDX-License-Identifier: MIT */
/* palloc-report's data: a timeline and its profiles as one JSON document. */
#ifndef PALLOC_HTMLREPORT_MODEL_H
#define PALLOC_HTMLREPORT_MODEL_H

#include "common.h"
#include "pprof.h"
#include "timeline_read.h"

#include <jansson.h>

/* A profile that goes into the page, and when and where it was taken. */
struct htmlreport_profile {
	char *path;	 /* as read (owned) */
	int64_t pid;	 /* -1: unknown */
	int64_t time_ns; /* CLOCK_REALTIME; -1: unknown */
	char *kind;	 /* interval, peak, pressure, exit; NULL: named */
	struct pprof_profile *p; /* read and symbolized (owned) */
};

/*
 * The profiles a timeline names: one per "profile" event with a path, a
 * relative path taken from the directory of TIMELINE_PATH, in the events'
 * order, with p NULL (not read). Returns the count with *out (malloc'd;
 * free with htmlreport_profiles_free()), or (size_t)-1 with msg_set() on
 * ENOMEM.
 */
size_t htmlreport_profiles_from_events(const struct timeline_doc *t,
				       const char *timeline_path,
				       struct htmlreport_profile **out);

/*
 * For a profile named on the command line (path as given): the pid, time
 * and kind of the timeline's profile event naming the same file (compared
 * by device and inode), else the profile's "pid:" comment, its time and
 * kind NULL. Fills the fields of *hp but path and p; hp->p must be read.
 */
void htmlreport_profile_place(const struct timeline_doc *t,
			      const char *timeline_path,
			      struct htmlreport_profile *hp);

/* Free n profiles and the array. */
void htmlreport_profiles_free(struct htmlreport_profile *a, size_t n);

/*
 * The document the page reads (its "format" is "palloc-report"):
 * "t0_ns" the first time; "fields" the sample keys; "processes", largest
 * first (highest rss, else heap in use), each {"pid", "t_ms", "cols":
 * {KEY: [...]}, "events": [...]}, where t_ms and every column are
 * delta-coded (the first value as it is, each next one the difference
 * from the last non-null one; null stays null; times in ms since t0) to
 * keep a long timeline small; "frames": [[name, file or null, line]],
 * "stacks": [[frame index, ...] leaf first], "profiles": sorted by
 * time, each {"pid", "t_ms", "kind", "path", "samples": [[stack,
 * inuse_space, inuse_objects, inuse_space_stddev, inuse_objects_stddev]]}
 * (a stddev label absent: 0). A sample's stack is its symbolized frames as
 * palloc-diff matches them (diff.h): each line of a location a frame, an
 * unsymbolized location its mapping's basename and file-relative address.
 * Returns a new reference, or NULL with msg_set().
 */
json_t *htmlreport_model(const char *timeline_name,
			 const struct timeline_doc *t,
			 const struct htmlreport_profile *profs, size_t n);

#endif /* PALLOC_HTMLREPORT_MODEL_H */
