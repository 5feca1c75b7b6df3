/* SPDX-License-Identifier: MIT */
/* palloc-dump --push otlp=URL: OTLP profiles (v1development), protobuf. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "otlp.h"
#include "pprof.h"
#include "push.h"

/* The resource of a window: the process, its host, the user's labels. */
static struct otlp_resource resource(const struct push_config *cfg,
				     const struct push_window *w)
{
	return (struct otlp_resource){.service_name = w->service,
				      .pid = w->pid,
				      .host_name = w->hostname,
				      .label_keys = cfg->label_keys,
				      .label_values = cfg->label_values,
				      .n_labels = cfg->n_labels};
}

int push_otlp_check(void)
{
	static const struct pprof_value_type types[] = {
		{"alloc_objects", "count"},
		{"alloc_space", "bytes"},
		{"inuse_objects", "count"},
		{"inuse_space", "bytes"}};
	static const char *const none[] = {NULL};
	struct otlp_resource res = {.service_name = "palloc",
				    .pid = 1,
				    .host_name = "localhost",
				    .label_keys = none,
				    .label_values = none};
	struct pprof_profile *p = pprof_new(NULL);
	void *buf = NULL;
	size_t len = 0;
	int rc;

	if (!p || pprof_set_sample_types(p, types, ARRAY_SIZE(types)) < 0 ||
	    pprof_set_period(p, "space", "bytes", 1) < 0) {
		pprof_free(p);
		return msg_set_errno(ENOMEM, "otlp");
	}
	errno = 0;
	rc = otlp_encode_request(p, p, &res, 1, 2, &buf, &len);
	free(buf);
	pprof_free(p);
	if (rc < 0 && errno == ENOSYS)
		return msg_set("this build's OTLP profiles encoder is a "
			       "placeholder (not written yet)");
	if (rc < 0)
		return msg_set("the OTLP encoder refused a test profile: %s",
			       msg_last());
	return 0;
}

/*
 * POST URL/v1development/profiles, Content-Type application/x-protobuf,
 * the ExportProfilesServiceRequest otlp_encode_request() makes of the
 * window (otlp.h): its alloc columns are the delta and its inuse columns
 * the snapshot, so the same profile is given as both.
 */
int push_otlp_request(const struct push_config *cfg,
		      const struct push_target *t, const struct push_window *w,
		      struct push_request *r)
{
	struct otlp_resource res = resource(cfg, w);

	memset(r, 0, sizeof(*r));
	if (otlp_encode_request(w->p, w->p, &res, (uint64_t)w->from_ns,
				(uint64_t)w->until_ns, &r->body, &r->len) < 0)
		return -1;
	r->url = push_url_join(t->url, "/v1development/profiles");
	if (!r->url) {
		free(r->body);
		r->body = NULL;
		return -1;
	}
	r->ctype = "application/x-protobuf";
	r->until_ns = w->until_ns;
	return 0;
}
