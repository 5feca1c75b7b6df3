/* SPDX-License-Identifier: MIT */
/* libFuzzer target: pprof_decode() and the streaming reader on hostile
 * bytes, then re-encode. */
#include "common.h"
#include "msg.h"
#include "pprof.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Whatever the input, pprof_decode() must return a profile or NULL with a
 * message, never crash, hang or allocate without bound (64 MiB cap here so
 * that libFuzzer's malloc limit is never the one that stops a bomb). A
 * profile it accepts must encode, and decode again to the same shape: the
 * encoder must never write what the decoder refuses. The commands' reader
 * (pprof_read_fd: inflated in pieces, fields checked as they come) must
 * agree with pprof_decode() on the same bytes from a file: the same
 * verdict, the same shape.
 */

/* pprof_read_fd() on data through a memory file; whether it accepted
 * the data, and its profile's shape equals p's (p NULL: refused). */
static void same_as_stream(const uint8_t *data, size_t size,
			   const struct pprof_profile *p)
{
	struct pprof_profile *q;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return;
	}
	q = pprof_read_fd(fd, (size_t)64 << 20);
	close(fd);
	if (!q && !*msg_last())
		abort(); /* a refusal must say why */
	if (!p != !q)
		abort();
	if (q &&
	    (q->n_samples != p->n_samples || q->n_locations != p->n_locations ||
	     q->n_functions != p->n_functions ||
	     q->n_mappings != p->n_mappings ||
	     q->n_sample_types != p->n_sample_types ||
	     q->n_comments != p->n_comments))
		abort();
	pprof_free(q);
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile *p, *q;
	void *buf;
	size_t len;

	p = pprof_decode(data, size, (size_t)64 << 20, NULL);
	same_as_stream(data, size, p);
	if (!p) {
		if (!*msg_last())
			abort(); /* a refusal must say why */
		return 0;
	}
	if (pprof_encode(p, size & 1, &buf, &len) != 0)
		abort();
	q = pprof_decode(buf, len, 0, NULL);
	if (!q || q->n_samples != p->n_samples ||
	    q->n_locations != p->n_locations ||
	    q->n_functions != p->n_functions ||
	    q->n_mappings != p->n_mappings ||
	    q->n_sample_types != p->n_sample_types)
		abort();
	pprof_free(q);
	pprof_free_buffer(p, buf);
	pprof_free(p);
	return 0;
}
