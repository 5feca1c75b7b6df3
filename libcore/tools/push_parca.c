/* SPDX-License-Identifier: MIT */
/* palloc-dump --push parca=URL: Parca's /profiles/writeraw, JSON. */
#include "common.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "pprof.h"
#include "push.h"

/* Standard base64 with padding (RFC 4648 section 4): protojson's bytes. */
static char *base64(const unsigned char *s, size_t n)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		*o++ = abc[v >> 18 & 63];
		*o++ = abc[v >> 12 & 63];
		*o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? abc[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static json_t *label(const char *name, const char *value)
{
	json_t *l = json_object();

	json_object_set_new(l, "name", json_string(value ? name : ""));
	json_object_set_new(l, "value", json_string(value ? value : ""));
	return l;
}

/*
 * One RawProfileSeries: the labels, and one sample holding p encoded with
 * the sample types of the other kind (alloc when !alloc) at zero, which
 * Parca's normalizer skips (pkg/normalizer/normalizer.go: a value 0 makes
 * no sample), and with duration_nanos 0 for the inuse snapshot: Parca
 * stores a profile as a delta (the ":delta" profile type) when its
 * duration is not zero (pkg/profilestore/profilecolumnstore.go).
 */
static json_t *series(const struct push_config *cfg,
		      const struct push_window *w, bool alloc)
{
	struct pprof_profile *p = w->p;
	int64_t duration = p->duration_nanos, *saved;
	json_t *s = NULL, *labels, *ls, *sample;
	size_t nv = p->n_samples * p->n_sample_types, len = 0;
	char pid[32], *b64 = NULL;
	void *buf = NULL;

	saved = malloc((nv ? nv : 1) * sizeof(*saved));
	if (!saved)
		return NULL;
	for (size_t i = 0; i < p->n_samples; i++)
		for (size_t k = 0; k < p->n_sample_types; k++) {
			saved[i * p->n_sample_types + k] =
				p->samples[i].values[k];
			if (push_is_alloc_type(p, k) != alloc)
				p->samples[i].values[k] = 0;
		}
	if (!alloc)
		p->duration_nanos = 0;
	else if (p->duration_nanos <= 0)
		p->duration_nanos = 1; /* a delta, however short */
	if (pprof_encode(p, true, &buf, &len) == 0)
		b64 = base64(buf, len);
	free(buf); /* the profile's allocator is malloc (push.c) */
	p->duration_nanos = duration;
	for (size_t i = 0; i < p->n_samples; i++)
		for (size_t k = 0; k < p->n_sample_types; k++)
			p->samples[i].values[k] =
				saved[i * p->n_sample_types + k];
	free(saved);
	if (!b64)
		return NULL;
	snprintf(pid, sizeof(pid), "%d", (int)w->pid);
	ls = json_array();
	json_array_append_new(ls, label("__name__", "memory"));
	json_array_append_new(ls, label("service_name", w->service));
	json_array_append_new(ls, label("pid", pid));
	json_array_append_new(ls, label("hostname", w->hostname));
	for (size_t i = 0; i < cfg->n_labels; i++)
		json_array_append_new(
			ls, label(cfg->label_keys[i], cfg->label_values[i]));
	labels = json_object();
	json_object_set_new(labels, "labels", ls);
	sample = json_object();
	json_object_set_new(sample, "rawProfile", json_string(b64));
	free(b64);
	s = json_object();
	json_object_set_new(s, "labels", labels);
	json_object_set_new(s, "samples", json_array());
	json_array_append_new(json_object_get(s, "samples"), sample);
	return s;
}

/*
 * POST URL/profiles/writeraw, the JSON form of WriteRawRequest
 * (proto/parca/profilestore/v1alpha1/profilestore.proto, its
 * google.api.http rule with body "*", read by grpc-gateway's protojson):
 * {"series": [{"labels": {"labels": [{"name", "value"}...]}, "samples":
 * [{"rawProfile": base64}]}...]}, two series: the alloc delta with the
 * window's duration and the inuse snapshot without one, both
 * __name__="memory" (Parca requires it) with the same labels.
 */
int push_parca_request(const struct push_config *cfg,
		       const struct push_target *t, const struct push_window *w,
		       struct push_request *r)
{
	json_t *req = json_object(), *arr = json_array();
	json_t *a = series(cfg, w, true), *i = series(cfg, w, false);
	char *text = NULL;

	memset(r, 0, sizeof(*r));
	if (req && arr && a && i) {
		json_array_append(arr, a);
		json_array_append(arr, i);
		json_object_set(req, "series", arr);
		text = json_dumps(req, JSON_COMPACT);
	}
	json_decref(a);
	json_decref(i);
	json_decref(arr);
	json_decref(req);
	if (!text)
		return msg_set_errno(ENOMEM, "parca request");
	r->url = push_url_join(t->url, "/profiles/writeraw");
	if (!r->url) {
		free(text);
		return -1;
	}
	r->body = text;
	r->len = strlen(text);
	r->ctype = "application/json";
	r->until_ns = w->until_ns;
	return 0;
}
