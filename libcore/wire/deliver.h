/* SPDX-License-Identifier: MIT */
/* The channel that takes profiles to palloc-run. */
#ifndef PALLOC_DELIVER_H
#define PALLOC_DELIVER_H

#include "common.h"

#include <limits.h>

/*
 * Shared by the agent (no malloc, no stdio, no lock: system calls into
 * the caller's buffers) and palloc-run. Profile names: pattern.h.
 *
 * palloc-run listens on a Linux abstract unix socket (no
 * file: reachable from every process of the run's network namespace
 * after chroot, setuid or closing every fd, and by nobody's permission:
 * palloc-run checks each peer's SO_PEERCRED pid to be its descendant)
 * and names it in PALLOC_COLLECT as "@NAME". At each dump the agent
 * connects, sends one header and its payload, waits for the reply and
 * closes (no fd is held between dumps); palloc-run writes the file as
 * the user who ran it. Headers and replies have a fixed size, in the
 * machine's byte order (both ends run on the same machine).
 */

#define DELIVER_ENV "PALLOC_COLLECT"
#define DELIVER_MAGIC "palloc1\n"
/* The largest payload palloc-run takes (a gzipped profile). */
#define DELIVER_MAX_PAYLOAD ((uint64_t)256 << 20)
/* The agent's bound on one whole exchange, and on a hello. */
#define DELIVER_TIMEOUT_MS 10000
#define DELIVER_HELLO_TIMEOUT_MS 200

enum deliver_kind {
	DELIVER_HELLO = 1,   /* a process started (or forked): program */
	DELIVER_PROFILE = 2, /* a gzipped profile follows: write it */
	DELIVER_WRITTEN = 3, /* the agent wrote path itself (dev, ino) */
	DELIVER_FAILED = 4,  /* the agent could not write path: why */
};

struct deliver_header {
	char magic[8];	   /* DELIVER_MAGIC */
	uint32_t kind;	   /* enum deliver_kind */
	uint32_t reserved; /* 0 */
	uint64_t length;   /* PROFILE: payload bytes after the header */
	uint64_t dev, ino; /* WRITTEN: the file written */
	char seq[24];	   /* %n of the profile */
	char program[64];  /* %e: the executable's name */
	char path[1024];   /* WRITTEN, FAILED: the agent's own path */
	char why[512];	   /* FAILED: the reason */
	char title[128];   /* the process title now (argv), for people */
};

struct deliver_reply {
	char magic[8]; /* DELIVER_MAGIC */
	int32_t err;   /* 0: written at path; else an errno */
	uint32_t reserved;
	char text[1024]; /* the path written, or why not */
};

/*
 * Agent side: send h (and, for DELIVER_PROFILE, h->length bytes of
 * payload) to the abstract socket named by name ("@NAME"), within
 * timeout_ms in all. With reply non-NULL, wait for palloc-run's answer
 * into it. timeout_ms 0: a hello, sent without ever waiting (dropped if
 * palloc-run's backlog is full), no reply. No SIGPIPE, no fd left open. Returns
 * 0 when sent (and answered), -1 with errno and msg_set() otherwise.
 */
int deliver_send(const char *name, const struct deliver_header *h,
		 const void *payload, struct deliver_reply *reply,
		 int timeout_ms);

#endif /* PALLOC_DELIVER_H */
