/* SPDX-License-Identifier: MIT */
/* Minimal HTTP/1.0: request parsing and response writing for the control
 * socket. */
#ifndef PALLOC_HTTP_H
#define PALLOC_HTTP_H

#include "common.h"

/*
 * The agent's control server and the commands speak just enough HTTP/1.0 for
 * curl, Go's pprof and Prometheus: one "GET /path?query HTTP/1.x" request,
 * headers ignored, one response, close. Everything is bounded: a request
 * head longer than HTTP_HEAD_MAX bytes is malformed (400), a path longer
 * than HTTP_PATH_MAX is malformed.
 *
 * This half (http_parse_request, http_query_get, http_write_*) does not
 * allocate and uses no stdio, so the agent can run it in its control
 * thread. The client half (http_client.h: http_read_response) allocates
 * the body with malloc and is the commands'.
 */

#define HTTP_HEAD_MAX 4096
#define HTTP_PATH_MAX 512

struct http_request {
	char method[8];		   /* "GET" (the only one served) */
	char path[HTTP_PATH_MAX];  /* "/debug/pprof/heap", percent-decoded */
	char query[HTTP_PATH_MAX]; /* "seconds=5&pid=3" (raw), "" if none */
	int minor;		   /* 0 or 1 of HTTP/1.x */
};

/*
 * Parse the request head in buf[0, len). Returns 1 when the head is
 * complete and parsed into *req, 0 when more bytes are needed (no blank
 * line yet and len < HTTP_HEAD_MAX), -1 when malformed (answer 400): a bad
 * request line, a method other than an upper-case token, a target not
 * starting with '/', a bad percent escape, NUL or control bytes, too long.
 * Thread-safe; no allocation.
 */
int http_parse_request(const char *buf, size_t len, struct http_request *req);

/*
 * The value of key in a query string "a=1&b=2", percent-decoded into out
 * (size outsz, NUL-terminated). Returns 1 if found, 0 if absent, -1 if the
 * value does not fit or is badly encoded. A key without '=' has value "".
 */
int http_query_get(const char *query, const char *key, char *out, size_t outsz);

/* The reason phrase for status ("OK", "Bad Request"...). */
const char *http_reason(int status);

/*
 * Write a complete HTTP/1.0 response to fd: status line, Content-Type,
 * Content-Length, Connection: close, any extra header lines (each ending in
 * "\r\n", may be NULL), then body. Retries short writes and EINTR.
 * Returns 0, or -1 with errno set (EPIPE when the client went away; the
 * caller must have SIGPIPE blocked or use a socket with MSG_NOSIGNAL,
 * which this function does for sockets). No allocation.
 */
int http_write_response(int fd, int status, const char *content_type,
			const char *extra_headers, const void *body,
			size_t len);

/*
 * The head http_write_response() writes, formatted into buf[cap]: its
 * length, or -1 with EOVERFLOW when it does not fit. No allocation.
 */
int http_format_head(char *buf, size_t cap, int status,
		     const char *content_type, const char *extra_headers,
		     size_t len);

/* The body of http_write_error(), "STATUS REASON: detail\n", into
 * buf[cap] (cap > 0; truncated to fit): its length. */
size_t http_error_body(char *buf, size_t cap, int status, const char *detail);

/* A plain-text error response: "STATUS REASON: detail\n". */
int http_write_error(int fd, int status, const char *detail);

/* Write all of buf to fd (send with MSG_NOSIGNAL on sockets). 0 or -1. */
int http_write_all(int fd, const void *buf, size_t len);

#endif /* PALLOC_HTTP_H */
