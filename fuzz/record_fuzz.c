/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the record's reader (record_check, record_profile). */
#include "common.h"
#include "msg.h"
#include "pprof.h"
#include "record_build.h"
#include "record_profile.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A callback for addresses no module covers: every other one gets a
 * mapping of its own ("[jit]"), the rest the reader's "[unmapped]". */
static uint64_t jit(void *ctx, struct pprof_profile *p, uint64_t addr)
{
	struct pprof_mapping m = {
		.start = addr & ~(uint64_t)0xfff,
		.limit = (addr & ~(uint64_t)0xfff) + 0x1000,
		.file = "[jit]",
		.build_id = "",
	};

	(*(unsigned *)ctx)++;
	if (addr & 0x10)
		return 0;
	return pprof_add_mapping(p, &m);
}

/*
 * What the reader accepts makes a profile that is whole: every sample
 * has inuse <= alloc (and peak <= alloc), no more samples than stacks,
 * no frame deeper than RECORD_MAX_DEPTH, a location per frame with a
 * mapping, and it encodes and decodes to the same number of samples,
 * locations and mappings.
 */
static void check_profile(const struct record_view *v,
			  const struct pprof_profile *p)
{
	struct pprof_profile *q;
	void *buf;
	size_t len;

	if (p->n_samples > v->n_stacks ||
	    (p->n_sample_types != 4 && p->n_sample_types != 6))
		abort();
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct pprof_sample *s = &p->samples[i];

		if (s->n_locations > RECORD_MAX_DEPTH)
			abort();
		for (size_t k = 2; k < p->n_sample_types; k++)
			if (s->values[k] > s->values[k % 2] || s->values[k] < 0)
				abort();
		for (size_t k = 0; k < s->n_locations; k++) {
			uint64_t id = s->location_ids[k];

			if (!id || id > p->n_locations ||
			    !p->locations[id - 1].mapping_id ||
			    p->locations[id - 1].mapping_id > p->n_mappings)
				abort();
		}
	}
	if (pprof_encode(p, false, &buf, &len) < 0)
		abort();
	q = pprof_decode(buf, len, 0, NULL);
	if (!q || q->n_samples != p->n_samples ||
	    q->n_locations != p->n_locations || q->n_mappings != p->n_mappings)
		abort();
	pprof_free(q);
	pprof_free_buffer(p, buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record_profile_opts o = {0};
	struct record_stats st;
	struct record_view v;
	struct pprof_profile *p;
	unsigned char *img;
	unsigned calls = 0;
	size_t len;

	if (!rb_expand(data, size, &img, &len))
		return 0;
	if (record_check(img, len, NULL, &v) < 0) {
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "record_check: %s\n", msg_last());
		if (!msg_last()[0] || strchr(msg_last(), '\n'))
			abort();
		free(img);
		return 0;
	}
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "record_check: %zu stacks, %zu modules\n",
			v.n_stacks, v.n_modules);
	record_stats(&v, &st);
	if (st.n_stacks != v.n_stacks || st.inuse_bytes_sampled < 0 ||
	    st.inuse_bytes_sampled > st.alloc_bytes_sampled ||
	    (st.allocator_text && st.allocator_text_len > RECORD_TEXT_MAX))
		abort();
	p = record_profile(&v, NULL, NULL);
	if (!p)
		abort();
	check_profile(&v, p);
	pprof_free(p);
	o.default_sample_type = "alloc_space";
	o.unmapped = jit;
	o.unmapped_ctx = &calls;
	o.title = "another title";
	o.unseen_owner = "the Go runtime";
	o.unseen_hint = "hint";
	p = record_profile(&v, &o, NULL);
	if (!p)
		abort();
	check_profile(&v, p);
	pprof_free(p);
	record_view_free(&v);
	free(img);
	return 0;
}
