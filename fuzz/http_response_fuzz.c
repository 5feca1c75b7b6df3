/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the commands' HTTP response reader. */
#include "common.h"
#include "http_client.h"
#include "msg.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A command reads an agent's answer from a socket whose other end can be
 * any process of the user (or a hung one). Here the bytes come from a
 * memory file, read to its end as from a server that closed. The reader
 * must return a response or -1 with a message; an accepted body must be
 * exactly what follows the head, NUL-terminated, and a Content-Length must
 * have matched it.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct http_response resp;
	size_t max_body;

	if (fd < 0)
		fd = memfd_create("http-response", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) < 0 ||
	    (size && pwrite(fd, data, size, 0) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	/* a small cap sometimes, to reach "response too large" */
	max_body = size && (data[size - 1] & 1) ? 16 : 0;
	if (http_read_response(fd, 1000, max_body, &resp) < 0) {
		if (!*msg_last())
			abort();
		return 0;
	}
	if (resp.status < 100 || resp.status > 599 || resp.len > size ||
	    !resp.body || resp.body[resp.len] != '\0' ||
	    memcmp(resp.body, data + size - resp.len, resp.len) != 0 ||
	    !memchr(resp.content_type, '\0', sizeof(resp.content_type)))
		abort();
	http_response_free(&resp);
	return 0;
}
