/* SPDX-License-Identifier: MIT */
/* Minimal HTTP/1.0 for the control socket: bounded parsing, whole responses. */
#include "common.h"
#include "http.h"
#include "msg.h"
#include "num.h"

#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Percent-decode src[0, n) into out (outsz bytes with the NUL). With
 * plus_space, '+' means ' ' (query strings). A decoded NUL or control byte
 * is refused: paths and values end up in file names and JSON.
 */
static int pct_decode(const char *src, size_t n, char *out, size_t outsz,
		      bool plus_space)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)src[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return -1;
			hi = num_hex_digit((unsigned char)src[i + 1]);
			lo = num_hex_digit((unsigned char)src[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = hi * 16 + lo;
			i += 2;
		} else if (c == '+' && plus_space) {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f)
			return -1;
		if (o + 1 >= outsz)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	const char *end = NULL, *p, *sp1, *sp2, *eol, *q;
	size_t i;

	/* The head ends at the first empty line ("\r\n\r\n" or "\n\n"). */
	for (i = 0; i < len; i++) {
		if (buf[i] == '\0')
			return -1;
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n') {
			end = buf + i + 2;
			break;
		}
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n') {
			end = buf + i + 3;
			break;
		}
	}
	if (!end)
		return len >= HTTP_HEAD_MAX ? -1 : 0;
	if ((size_t)(end - buf) > HTTP_HEAD_MAX)
		return -1;

	eol = memchr(buf, '\n', (size_t)(end - buf));
	if (!eol)
		return -1;
	if (eol > buf && eol[-1] == '\r')
		eol--;
	/* Method: an upper-case token, at most 7 bytes. */
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(req->method))
		return -1;
	for (p = buf; p < sp1; p++)
		if (*p < 'A' || *p > 'Z')
			return -1;
	memcpy(req->method, buf, (size_t)(sp1 - buf));
	req->method[sp1 - buf] = '\0';
	/* Target: origin form only, then " HTTP/1.x" to the end of line. */
	p = sp1 + 1;
	sp2 = memchr(p, ' ', (size_t)(eol - p));
	if (!sp2 || sp2 == p || *p != '/')
		return -1;
	if (eol - sp2 != 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -1;
	req->minor = sp2[8] - '0';
	for (q = p; q < sp2; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return -1;
	q = memchr(p, '?', (size_t)(sp2 - p));
	if (pct_decode(p, (size_t)((q ? q : sp2) - p), req->path,
		       sizeof(req->path), false) < 0)
		return -1;
	req->query[0] = '\0';
	if (q) {
		size_t qn = (size_t)(sp2 - q - 1);

		if (qn >= sizeof(req->query))
			return -1;
		memcpy(req->query, q + 1, qn);
		req->query[qn] = '\0';
	}
	/* Header lines: only checked for stray control bytes. */
	for (p = buf; p < end; p++)
		if ((unsigned char)*p < 0x20 && *p != '\r' && *p != '\n' &&
		    *p != '\t')
			return -1;
	return 1;
}

int http_query_get(const char *query, const char *key, char *out, size_t outsz)
{
	size_t klen = strlen(key);
	const char *p = query;

	while (p && *p) {
		const char *amp = strchr(p, '&');
		const char *stop = amp ? amp : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		const char *kend = eq ? eq : stop;

		if ((size_t)(kend - p) == klen && memcmp(p, key, klen) == 0) {
			if (!eq) {
				if (outsz == 0)
					return -1;
				out[0] = '\0';
				return 1;
			}
			if (pct_decode(eq + 1, (size_t)(stop - eq - 1), out,
				       outsz, true) < 0)
				return -1;
			return 1;
		}
		p = amp ? amp + 1 : NULL;
	}
	return 0;
}

const char *http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 500:
		return "Internal Server Error";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Unknown";
	}
}

int http_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	struct stat st;
	bool sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);

	while (len > 0) {
		ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL)
				 : write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int http_format_head(char *buf, size_t cap, int status,
		     const char *content_type, const char *extra_headers,
		     size_t len)
{
	int n = snprintf(buf, cap,
			 "HTTP/1.0 %d %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
			 status, http_reason(status), content_type, len,
			 extra_headers ? extra_headers : "");

	if (n < 0 || (size_t)n >= cap) {
		errno = EOVERFLOW;
		return -1;
	}
	return n;
}

size_t http_error_body(char *buf, size_t cap, int status, const char *detail)
{
	int n = snprintf(buf, cap, "%d %s: %s\n", status, http_reason(status),
			 detail);

	if (n < 0)
		n = 0;
	if ((size_t)n >= cap)
		n = (int)cap - 1;
	return (size_t)n;
}

int http_write_response(int fd, int status, const char *content_type,
			const char *extra_headers, const void *body, size_t len)
{
	char head[1024];
	int n = http_format_head(head, sizeof(head), status, content_type,
				 extra_headers, len);

	if (n < 0)
		return -1;
	if (http_write_all(fd, head, (size_t)n) < 0)
		return -1;
	return len ? http_write_all(fd, body, len) : 0;
}

int http_write_error(int fd, int status, const char *detail)
{
	char body[512];
	size_t n = http_error_body(body, sizeof(body), status, detail);

	return http_write_response(fd, status, "text/plain; charset=utf-8",
				   NULL, body, n);
}
