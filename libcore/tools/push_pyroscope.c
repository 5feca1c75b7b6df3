/* SPDX-License-Identifier: MIT */
/* palloc-dump --push pyroscope=URL: Pyroscope's /ingest with a pprof body. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "pprof.h"
#include "push.h"

/* s percent-encoded as a query value: every byte but A-Z a-z 0-9 - . _ ~ */
static void put_escaped(FILE *fp, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~')
			fputc(c, fp);
		else
			fprintf(fp, "%%%02X", c);
	}
}

/*
 * POST URL/ingest?name=SERVICE{pid=P,hostname=H,K=V}&from=S&until=S
 * &format=pprof&spyName=palloc, the body the window's gzipped pprof.
 * Pyroscope (pkg/ingester/pyroscope/ingest_handler.go) reads name with
 * labelset.Parse: the service up to '{', then "key=value" pairs split at
 * ',' until '}', keys and values trimmed; from and until as Unix seconds
 * (attime.Parse). It marks what /ingest gives as __delta__="false" and
 * names the profile "memory" from the alloc_/inuse_ sample types: the
 * alloc values are the window's and the inuse ones a snapshot, which is
 * what the body holds.
 */
int push_pyroscope_request(const struct push_config *cfg,
			   const struct push_target *t,
			   const struct push_window *w, struct push_request *r)
{
	char *base = push_url_join(t->url, "/ingest"), *name = NULL;
	size_t name_len = 0;
	FILE *fp;

	memset(r, 0, sizeof(*r));
	if (!base)
		return -1;
	fp = open_memstream(&name, &name_len);
	if (!fp) {
		free(base);
		return msg_set_errno(errno, "pyroscope request");
	}
	fprintf(fp, "%s?name=", base);
	put_escaped(fp, w->service);
	put_escaped(fp, "{");
	fprintf(fp, "pid%%3D%d%%2Chostname%%3D", (int)w->pid);
	put_escaped(fp, w->hostname);
	for (size_t i = 0; i < cfg->n_labels; i++) {
		put_escaped(fp, ",");
		put_escaped(fp, cfg->label_keys[i]);
		put_escaped(fp, "=");
		put_escaped(fp, cfg->label_values[i]);
	}
	put_escaped(fp, "}");
	fprintf(fp, "&from=%lld&until=%lld&format=pprof&spyName=palloc",
		(long long)(w->from_ns / 1000000000),
		(long long)((w->until_ns + 999999999) / 1000000000));
	free(base);
	if (fclose(fp) != 0 || !name) {
		free(name);
		return msg_set_errno(ENOMEM, "pyroscope request");
	}
	r->url = name;
	r->ctype = "application/octet-stream";
	r->until_ns = w->until_ns;
	if (pprof_encode(w->p, true, &r->body, &r->len) < 0) {
		free(r->url);
		r->url = NULL;
		r->body = NULL;
		return -1;
	}
	return 0;
}
