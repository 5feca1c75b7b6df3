/* SPDX-License-Identifier: MIT */
/* Unit tests of the minimal HTTP parser/writer and the socket path rules. */
#include "common.h"
#include "ctlsock_client.h"
#include "http_client.h"
#include "msg.h"
#include "tap.h"

#include <fcntl.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(const char *s, struct http_request *req)
{
	return http_parse_request(s, strlen(s), req);
}

static void test_parse(void)
{
	struct http_request req;
	char big[HTTP_HEAD_MAX + 16];
	char v[16];

	tap_ok(parse("GET /debug/pprof/heap HTTP/1.0\r\n\r\n", &req) == 1 &&
		       strcmp(req.method, "GET") == 0 &&
		       strcmp(req.path, "/debug/pprof/heap") == 0 &&
		       req.query[0] == '\0' && req.minor == 0,
	       "simple GET parses");
	tap_ok(parse("GET /debug/pprof/heap?seconds=5&pid=42 HTTP/1.1\r\n"
		     "Host: x\r\nUser-Agent: curl\r\n\r\n",
		     &req) == 1 &&
		       strcmp(req.path, "/debug/pprof/heap") == 0 &&
		       strcmp(req.query, "seconds=5&pid=42") == 0 &&
		       req.minor == 1,
	       "query and headers");
	tap_ok(parse("GET /a%20b HTTP/1.0\n\n", &req) == 1 &&
		       strcmp(req.path, "/a b") == 0,
	       "bare LF and percent-decoding");
	tap_ok(parse("GET /debug/pprof/heap HTTP/1.0\r\nHost: x\r\n", &req) ==
		       0,
	       "incomplete head needs more");
	tap_ok(parse("", &req) == 0, "empty needs more");
	tap_ok(parse("get / HTTP/1.0\r\n\r\n", &req) == -1,
	       "lower-case method is malformed");
	tap_ok(parse("GET debug HTTP/1.0\r\n\r\n", &req) == -1,
	       "target without slash is malformed");
	tap_ok(parse("GET / HTTP/2.0\r\n\r\n", &req) == -1,
	       "HTTP/2.0 is malformed");
	tap_ok(parse("GET /%zz HTTP/1.0\r\n\r\n", &req) == -1,
	       "bad percent escape is malformed");
	tap_ok(parse("GET /%0a HTTP/1.0\r\n\r\n", &req) == -1,
	       "encoded control byte is malformed");
	tap_ok(parse("GET /% HTTP/1.0\r\n\r\n", &req) == -1,
	       "truncated percent escape is malformed");
	tap_ok(parse("GET / HTTP/1.0 x\r\n\r\n", &req) == -1,
	       "junk after the version is malformed");
	tap_ok(parse("\r\n\r\n", &req) == -1, "empty request line");
	tap_ok(http_parse_request("GET /\0 HTTP/1.0\r\n\r\n", 20, &req) == -1,
	       "NUL byte is malformed");
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	tap_ok(http_parse_request(big, sizeof(big), &req) == -1,
	       "head over HTTP_HEAD_MAX is malformed");
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	memcpy(big + HTTP_PATH_MAX + 10, " HTTP/1.0\r\n\r\n", 13);
	tap_ok(http_parse_request(big, HTTP_PATH_MAX + 23, &req) == -1,
	       "path over HTTP_PATH_MAX is malformed");

	tap_ok(http_query_get("seconds=5&pid=42", "pid", v, sizeof(v)) == 1 &&
		       strcmp(v, "42") == 0,
	       "query value");
	tap_ok(http_query_get("seconds=5&pid=42", "seconds", v, sizeof(v)) ==
			       1 &&
		       strcmp(v, "5") == 0,
	       "first query value");
	tap_ok(http_query_get("seconds=5", "pid", v, sizeof(v)) == 0,
	       "absent key");
	tap_ok(http_query_get("pidx=1&xpid=2", "pid", v, sizeof(v)) == 0,
	       "key must match whole");
	tap_ok(http_query_get("a=x%2By+z", "a", v, sizeof(v)) == 1 &&
		       strcmp(v, "x+y z") == 0,
	       "value decoding");
	tap_ok(http_query_get("a=0123456789abcdefgh", "a", v, sizeof(v)) == -1,
	       "value too long");
	tap_ok(http_query_get("flag&a=1", "flag", v, sizeof(v)) == 1 &&
		       v[0] == '\0',
	       "key without value");
}

static void test_roundtrip(void)
{
	int sv[2];
	struct http_response resp;
	static const char body[] = "hello\n";

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		tap_ok(0, "socketpair");
		return;
	}
	tap_ok(http_write_response(sv[0], 200, "text/plain", NULL, body,
				   sizeof(body) - 1) == 0,
	       "write response");
	close(sv[0]);
	tap_ok(http_read_response(sv[1], 1000, 0, &resp) == 0 &&
		       resp.status == 200 && resp.len == 6 &&
		       memcmp(resp.body, body, 6) == 0 &&
		       strcmp(resp.content_type, "text/plain") == 0,
	       "read it back");
	http_response_free(&resp);
	close(sv[1]);

	/* A response cut short: Content-Length says more than arrives. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	(void)!write(sv[0], "HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\nabc",
		     43);
	close(sv[0]);
	tap_ok(http_read_response(sv[1], 1000, 0, &resp) == -1 &&
		       strstr(msg_last(), "after 3 of 100") != NULL,
	       "truncated body detected: %s", msg_last());
	close(sv[1]);

	/* A server that says nothing: the read times out. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	(void)!write(sv[0], "HTTP/1.0 200 OK\r\n", 17);
	tap_ok(http_read_response(sv[1], 100, 0, &resp) == -1 &&
		       strstr(msg_last(), "timed out") != NULL,
	       "stalled response times out: %s", msg_last());
	close(sv[0]);
	close(sv[1]);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	(void)!write(sv[0], "garbage\r\n\r\n", 11);
	close(sv[0]);
	tap_ok(http_read_response(sv[1], 100, 0, &resp) == -1 &&
		       strstr(msg_last(), "malformed") != NULL,
	       "garbage response is malformed: %s", msg_last());
	close(sv[1]);
}

static void test_ctlsock(void)
{
	char dir[] = "/tmp/palloc-unit-XXXXXX", path[CTLSOCK_PATH_MAX];
	char sock[CTLSOCK_PATH_MAX];
	struct stat st;
	int fd;

	if (!mkdtemp(dir)) {
		tap_ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/palloc", dir);
	tap_ok(ctlsock_prepare_dir(path) == 0 && stat(path, &st) == 0 &&
		       (st.st_mode & 0777) == 0700,
	       "socket directory is created 0700");
	chmod(path, 0755);
	tap_ok(ctlsock_prepare_dir(path) == 0 && stat(path, &st) == 0 &&
		       (st.st_mode & 0777) == 0700,
	       "a loose mode is tightened");
	/* A stale socket: pid 2^22+1 does not exist (pid_max is 2^22). */
	tap_ok(ctlsock_path(path, 4194305, sock, sizeof(sock)) == 0, "path");
	fd = open(sock, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	tap_ok(ctlsock_clean_stale(path) == 1 && access(sock, F_OK) != 0,
	       "stale socket of a dead pid is removed");
	ctlsock_path(path, getpid(), sock, sizeof(sock));
	fd = open(sock, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	tap_ok(ctlsock_clean_stale(path) == 1, "own pid's leftover removed");
	ctlsock_path(path, 1, sock, sizeof(sock));
	fd = open(sock, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	tap_ok(ctlsock_clean_stale(path) == 0 && access(sock, F_OK) == 0,
	       "socket of a live pid is kept");
	unlink(sock);
	rmdir(path);
	rmdir(dir);
	tap_ok(ctlsock_get(4194305, "/", 100, NULL) == -1 &&
		       strcmp(msg_last(), "no such process") == 0,
	       "dead pid: %s", msg_last());
}

int main(void)
{
	test_parse();
	test_roundtrip();
	test_ctlsock();
	return tap_done();
}
