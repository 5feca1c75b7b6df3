/* SPDX-License-Identifier: MIT */
/* The commands' half of HTTP on the control socket: reading a response. */
#include "common.h"
#include "http_client.h"
#include "msg.h"

#include <limits.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

long http_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * Read what fd has, waiting until deadline (http_now_ms() time) at most:
 * >0 bytes, 0 EOF, -1 with "timed out after TIMEOUT_MS ms".
 */
static ssize_t read_until(int fd, void *buf, size_t len, long deadline,
			  int timeout_ms)
{
	for (;;) {
		long left = deadline - http_now_ms();
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;
		int r;

		if (left <= 0)
			return msg_set("timed out after %d ms", timeout_ms);
		r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return msg_set_errno(errno, "poll");
		if (r == 0)
			return msg_set("timed out after %d ms", timeout_ms);
		n = read(fd, buf, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return msg_set_errno(errno, "read");
		return n;
	}
}

/* Find the header named name (case-insensitive) in head; copy its value. */
static bool header_value(const char *head, const char *name, char *out,
			 size_t outsz)
{
	size_t nlen = strlen(name);
	const char *line = strchr(head, '\n');

	while (line && line[1]) {
		const char *start = line + 1;
		const char *next = strchr(start, '\n');
		size_t llen = next ? (size_t)(next - start) : strlen(start);

		if (llen > nlen && strncasecmp(start, name, nlen) == 0 &&
		    start[nlen] == ':') {
			const char *v = start + nlen + 1;
			size_t vlen;

			while (*v == ' ' || *v == '\t')
				v++;
			vlen = (size_t)(start + llen - v);
			while (vlen &&
			       (v[vlen - 1] == '\r' || v[vlen - 1] == ' '))
				vlen--;
			if (vlen >= outsz)
				vlen = outsz - 1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return true;
		}
		line = next;
	}
	return false;
}

/* The length of the head in buf[0, len) with its blank line, or 0. */
static size_t head_len(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/*
 * Check the status line and headers of the head buf[0, hlen) (which it
 * NUL-terminates at its last byte) into resp; *want is the Content-Length
 * or -1 without one. 0, or -1 with msg_set().
 */
static int parse_head(char *buf, size_t hlen, size_t max_body,
		      struct http_response *resp, long long *want)
{
	char clen[32];

	if (strncmp(buf, "HTTP/1.", 7) != 0 || hlen < 13 ||
	    (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' || buf[9] < '1' ||
	    buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' ||
	    buf[11] > '9')
		return msg_set("malformed response");
	resp->status =
		(buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	buf[hlen - 1] = '\0'; /* header_value() stops here */
	*want = -1;
	if (header_value(buf, "Content-Length", clen, sizeof(clen))) {
		unsigned long long v;
		char *e;

		errno = 0;
		v = strtoull(clen, &e, 10);
		if (errno || e == clen || *e || clen[0] == '-')
			return msg_set("malformed response");
		/* refused before a byte of the body is read */
		if (v > max_body)
			return msg_set("response too large: %llu bytes (the "
				       "limit is %zu)",
				       v, max_body);
		*want = (long long)v;
	}
	if (!header_value(buf, "Content-Type", resp->content_type,
			  sizeof(resp->content_type)))
		resp->content_type[0] = '\0';
	return 0;
}

/*
 * Make room for need bytes in *buf (capacity *cap), doubling but never
 * past ceil (>= need). 0 or -1 (ENOMEM).
 */
static int reserve(char **buf, size_t *cap, size_t need, size_t ceil)
{
	size_t nc = *cap;
	char *nb;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc = nc > ceil / 2 ? ceil : nc * 2;
	nb = realloc(*buf, nc);
	if (!nb)
		return msg_set_errno(ENOMEM, "reading the response");
	*buf = nb;
	*cap = nc;
	return 0;
}

int http_read_response_until(int fd, long deadline, int timeout_ms,
			     size_t max_body, struct http_response *resp)
{
	size_t cap = 16384, len = 0, hlen = 0, limit;
	char *buf = malloc(cap);
	long long want = -1;

	memset(resp, 0, sizeof(*resp));
	if (!max_body)
		max_body = HTTP_MAX_BODY;
	if (!buf)
		return msg_set_errno(ENOMEM, "reading the response");
	limit = HTTP_HEAD_MAX; /* until the head is in */
	for (;;) {
		size_t room;
		ssize_t n;

		/* one byte past the limit shows it was passed */
		if (len + 1 >= cap &&
		    reserve(&buf, &cap, len + 2, limit + 2) < 0)
			goto fail;
		room = cap - len - 1;
		if (len + room > limit + 1)
			room = limit + 1 - len;
		n = read_until(fd, buf + len, room, deadline, timeout_ms);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
		if (!hlen) {
			hlen = head_len(buf, len);
			if (!hlen && len > HTTP_HEAD_MAX) {
				msg_set("malformed response: no end of the "
					"headers in %d bytes",
					HTTP_HEAD_MAX);
				goto fail;
			}
			if (!hlen)
				continue;
			if (parse_head(buf, hlen, max_body, resp, &want) < 0)
				goto fail;
			limit = hlen + (want >= 0 ? (size_t)want : max_body);
			/* the whole answer at once when its size is known */
			if (want >= 0 &&
			    reserve(&buf, &cap, limit + 2, limit + 2) < 0)
				goto fail;
		}
		if (len > limit) {
			if (want >= 0)
				msg_set("malformed response: more than its "
					"Content-Length of %lld bytes",
					want);
			else
				msg_set("response too large: more than %zu "
					"bytes",
					max_body);
			goto fail;
		}
	}
	if (len == 0) {
		msg_set("connection closed without a response");
		goto fail;
	}
	if (!hlen) {
		msg_set("connection closed before the end of the response "
			"headers");
		goto fail;
	}
	if (want >= 0 && (size_t)want != len - hlen) {
		msg_set("connection closed after %zu of %lld bytes", len - hlen,
			want);
		goto fail;
	}
	resp->len = len - hlen;
	memmove(buf, buf + hlen, resp->len);
	buf[resp->len] = '\0';
	resp->body = buf;
	return 0;
fail:
	free(buf);
	resp->status = 0;
	return -1;
}

int http_read_response(int fd, int timeout_ms, size_t max_body,
		       struct http_response *resp)
{
	return http_read_response_until(fd, http_now_ms() + timeout_ms,
					timeout_ms, max_body, resp);
}

void http_response_free(struct http_response *resp)
{
	free(resp->body);
	resp->body = NULL;
	resp->len = 0;
}
