/* SPDX-License-Identifier: MIT */
/* Memory malloc did not give: the figures and the warning, on both sides. */
#ifndef PALLOC_UNSEEN_CALC_H
#define PALLOC_UNSEEN_CALC_H

#include "common.h"

/*
 * The anonymous memory a process held (/proc/PID/status: RssAnon now,
 * and at the peak estimated as VmHWM - RssFile - RssShmem, which assumes
 * the file-backed part was about the same at the peak) against the
 * malloc heap seen, less the agent's own memory. The agent measures
 * itself (agent/unseen.h); the commands measure a live process from
 * outside (tools/record_docs.h). Pure functions of their arguments, no
 * allocation: usable in the agent and the commands, from any thread.
 */

#define UNSEEN_MIN_BYTES ((int64_t)16 << 20)

struct unseen {
	int64_t anon_bytes;	 /* RssAnon now; -1 unknown */
	int64_t anon_peak_bytes; /* estimated peak anonymous RSS; -1 */
	int64_t heap_bytes;	 /* the malloc heap seen */
	int64_t unseen_bytes;	 /* anonymous memory beyond it (>= 0); -1 */
	bool most;		 /* more than half, and >= UNSEEN_MIN_BYTES */
	bool at_peak;		 /* compared at the peak (else: now) */
	const char *owner;	 /* "the Go runtime", ..., or NULL */
	const char *hint;	 /* what to do instead, or NULL */
};

/* The figures of /proc/PID/status it needs, in bytes (-1: absent). */
struct unseen_status {
	int64_t rss_anon, vm_hwm, rss_file, rss_shmem;
};

/*
 * Fill *u (owner and hint NULL). st: the status figures, NULL when
 * unknown (then only the heap is known); heap_bytes: the heap now (the
 * larger of the allocator's mapped and allocated bytes); heap_peak_bytes:
 * the sampled or exact peak of the heap plus overhead, -1 when unknown
 * (then the present is compared with the present); own_bytes: the
 * agent's own anonymous memory (0 when not known).
 */
void unseen_compute(struct unseen *u, const struct unseen_status *st,
		    int64_t heap_bytes, int64_t heap_peak_bytes,
		    int64_t own_bytes);

/* The warning for u->most, without "palloc: warning: ", into buf[cap]:
 * "most of this process's memory did not come through malloc: ...". */
void unseen_text(const struct unseen *u, char *buf, size_t cap);

#endif /* PALLOC_UNSEEN_CALC_H */
