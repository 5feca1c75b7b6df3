/* SPDX-License-Identifier: MIT */
/* OpenTelemetry profiles (OTLP, v1development): the request body palloc-dump
 * --push otlp=URL sends. */
#ifndef PALLOC_OTLP_H
#define PALLOC_OTLP_H

#include "common.h"
#include "pprof.h"

/* The resource one request describes: one process. */
struct otlp_resource {
	const char *service_name; /* service.name */
	int64_t pid;		  /* process.pid */
	const char *host_name;	  /* host.name */
	/* The user's --label K=V pairs, n_labels of each; may be 0. */
	const char *const *label_keys;
	const char *const *label_values;
	size_t n_labels;
};

/*
 * Encode one ExportProfilesServiceRequest (opentelemetry-proto,
 * opentelemetry/proto/collector/profiles/v1development/profiles_service.proto)
 * for one window of one process: alloc_objects/alloc_space from alloc_delta
 * (the window's delta) and inuse_objects/inuse_space from inuse (a
 * snapshot), one Profile per sample type in one shared dictionary, the
 * resource attributes service.name, process.pid, host.name and the labels.
 * start_ns/end_ns: the window in ns since the epoch (the alloc Profiles'
 * time and duration; the inuse ones are at end_ns, duration 0). Either
 * profile may be NULL (its two Profiles are left out); each must have
 * its two sample types (found by name: any others are ignored), and its
 * samples whose value of a type is 0 are left out of that type's Profile.
 * The schema's subset written, with its upstream version, is in
 * proto/opentelemetry/ (t/4015 decodes requests with it).
 *
 * On success *buf (free(3) it) and *len hold the serialized protobuf
 * (application/x-protobuf) and 0 is returned; -1 with msg_set() and
 * *buf NULL on ENOMEM, a NULL res (EINVAL) or a profile that cannot be
 * expressed (a sample type missing, a dictionary table past INT32_MAX
 * entries). Memory: the dictionary's items once each, plus the request.
 * Thread-safe (no shared state); not async-signal-safe.
 */
int otlp_encode_request(const struct pprof_profile *alloc_delta,
			const struct pprof_profile *inuse,
			const struct otlp_resource *res, uint64_t start_ns,
			uint64_t end_ns, void **buf, size_t *len);

#endif /* PALLOC_OTLP_H */
