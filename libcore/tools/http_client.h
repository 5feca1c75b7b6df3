/* SPDX-License-Identifier: MIT */
/* The commands' half of HTTP on the control socket: reading a response. */
#ifndef PALLOC_HTTP_CLIENT_H
#define PALLOC_HTTP_CLIENT_H

#include "common.h"
#include "http.h"

/* A response as the client reads it. */
struct http_response {
	int status;		/* 200, 400... */
	char content_type[128]; /* "" if absent */
	char *body;		/* malloc'd, NUL-terminated beyond len */
	size_t len;
};

/* The largest body http_read_response() accepts when max_body is 0. */
#define HTTP_MAX_BODY ((size_t)1 << 30)

/*
 * Read a whole HTTP/1.x response from fd until EOF (the server closes),
 * within timeout_ms in all: the deadline is fixed at the start on the
 * monotonic clock and each poll waits only for what is left, so a server
 * trickling a byte at a time cannot stretch it. The body is capped at
 * max_body bytes (0: HTTP_MAX_BODY): a Content-Length beyond it is refused
 * before the body is read, a body without one when it passes the cap;
 * with a Content-Length the buffer is allocated once, of that size.
 * Returns 0 with *resp filled (free body with http_response_free), or -1
 * with msg_set(): "timed out after N ms", "connection closed before the
 * end of the response", "malformed response", "response too large: ...".
 * Content-Length, when present, must match what arrives.
 */
int http_read_response(int fd, int timeout_ms, size_t max_body,
		       struct http_response *resp);

/* The same with the deadline given as an http_now_ms() time; timeout_ms
 * is only what the timeout message says. */
int http_read_response_until(int fd, long deadline, int timeout_ms,
			     size_t max_body, struct http_response *resp);

/* Milliseconds on the monotonic clock, for deadlines. */
long http_now_ms(void);

void http_response_free(struct http_response *resp);

#endif /* PALLOC_HTTP_CLIENT_H */
