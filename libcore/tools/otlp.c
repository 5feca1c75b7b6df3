/* SPDX-License-Identifier: MIT */
/* OTLP profiles request encoder: a placeholder until the encoder lands, so
 * that palloc-dump --push otlp=URL can be built against otlp.h meanwhile. */
#include "common.h"
#include "msg.h"
#include "otlp.h"

int otlp_encode_request(const struct pprof_profile *alloc_delta,
			const struct pprof_profile *inuse,
			const struct otlp_resource *res, uint64_t start_ns,
			uint64_t end_ns, void **buf, size_t *len)
{
	(void)alloc_delta;
	(void)inuse;
	(void)res;
	(void)start_ns;
	(void)end_ns;
	*buf = NULL;
	*len = 0;
	errno = ENOSYS;
	return msg_set("OTLP profiles are not supported by this build");
}
